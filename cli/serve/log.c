/*
 * log.c: serve's log lines (log.h). Formatted into a buffer on the stack
 * and written with one write(): stdio's locking would keep a line whole too,
 * but not across the formatting and the escaping, and a signal-free single
 * write of at most SLOG_LINE_MAX bytes to a pipe is atomic (PIPE_BUF 4096).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static atomic_int threshold = LOG_INFO;
static atomic_int journal = -1; /* -1: not looked at yet, 0: a plain stderr, 1: the journal */

static const struct {
	const char *name;
	int level;
} levels[] = {
	{ "debug", LOG_DEBUG }, { "info", LOG_INFO }, { "warning", LOG_WARNING },
	{ "error", LOG_ERR },
};

int slog_level_arg(const char *s)
{
	for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
		if (strcmp(s, levels[i].name) == 0) {
			atomic_store(&threshold, levels[i].level);
			return levels[i].level;
		}
	return -1;
}

int slog_level(void)
{
	return atomic_load(&threshold);
}

/* systemd sets JOURNAL_STREAM to "DEV:INODE" of the stream it connected;
 * a child whose stderr was redirected elsewhere inherits the variable but
 * not the stream, hence the comparison (sd_journal_stream_fd(3)). */
void slog_init(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	int j = 0;
	if (e != NULL && sscanf(e, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0)
		j = (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
	atomic_store(&journal, j);
}

static const char *level_name(int level)
{
	for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
		if (levels[i].level == level)
			return levels[i].name;
	return level < LOG_ERR ? "error" : "debug";
}

void slog(int level, const char *fmt, ...)
{
	/* syslog's levels: a smaller number is more severe */
	if (level > atomic_load(&threshold))
		return;
	int saved = errno;
	if (atomic_load(&journal) < 0)
		slog_init();

	char msg[SLOG_LINE_MAX];
	va_list ap;
	va_start(ap, fmt);
	errno = saved; /* for %m */
	int mn = vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (mn < 0)
		mn = 0;
	size_t ml = (size_t)mn < sizeof msg ? (size_t)mn : sizeof msg - 1;

	char line[SLOG_LINE_MAX];
	size_t n;
	if (atomic_load(&journal) == 1) {
		int pri = level < 0 ? 0 : level > 7 ? 7 : level;
		n = (size_t)snprintf(line, sizeof line, "<%d>", pri);
	} else {
		struct timespec ts;
		struct tm tm;
		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		n = strftime(line, sizeof line, "%Y-%m-%dT%H:%M:%S", &tm);
		n += (size_t)snprintf(line + n, sizeof line - n, ".%03ldZ %s: ",
				      ts.tv_nsec / 1000000, level_name(level));
	}
	/* room for "...\n" at the end */
	const size_t room = sizeof line - 4;
	int cut = (size_t)mn >= sizeof msg;
	for (size_t i = 0; i < ml; i++) {
		unsigned char c = (unsigned char)msg[i];
		if (c < 0x20 || c == 0x7f) {
			if (n + 4 > room) {
				cut = 1;
				break;
			}
			static const char hex[] = "0123456789abcdef";
			line[n++] = '\\';
			line[n++] = 'x';
			line[n++] = hex[c >> 4];
			line[n++] = hex[c & 15];
		} else {
			if (n + 1 > room) {
				cut = 1;
				break;
			}
			line[n++] = (char)c;
		}
	}
	if (cut) {
		memcpy(line + n, "...", 3);
		n += 3;
	}
	line[n++] = '\n';
	/* one write: a short one (a full pipe, a signal) is finished, not retried from the start */
	size_t off = 0;
	while (off < n) {
		ssize_t w = write(STDERR_FILENO, line + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	errno = saved;
}
