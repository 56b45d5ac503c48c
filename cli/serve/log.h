/*
 * log.h: serve's log, one line per event on standard error:
 *
 *   2026-12-01T05:30:00.123Z warning: MESSAGE
 *
 * (UTC, milliseconds), or "<4>MESSAGE" when standard error is the systemd
 * journal (JOURNAL_STREAM names it), which stamps lines itself and reads the
 * sd-daemon priority prefix. Each line is one write(), so the lines of
 * threads never interleave. Control bytes in MESSAGE are written as \xNN: a
 * name from the wire can hold anything, a newline included.
 */
#ifndef DNSNAP_SERVE_LOG_H
#define DNSNAP_SERVE_LOG_H

#include <syslog.h> /* LOG_DEBUG, LOG_INFO, LOG_WARNING, LOG_ERR */

/* Longest line written (longer messages are cut, ending in "..."). */
#define SLOG_LINE_MAX 4096

/** Log @p fmt (printf-like, %m included) at @p level, if at or above the
 * threshold (default LOG_INFO). errno is kept. */
void slog(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * Set the threshold from its name: "debug", "info", "warning" or "error".
 * @return the level, or -1 (unknown name; the threshold is unchanged)
 */
int slog_level_arg(const char *s);

/** The threshold now. */
int slog_level(void);

/** Look at JOURNAL_STREAM and standard error again (slog does it once, at
 * its first line; a test or a program that moved its standard error calls
 * this). */
void slog_init(void);

#endif
