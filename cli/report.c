/*
 * report.c: what every command says and how: fail()'s one-line messages
 * (to stderr, or to a control client's stream), a library message without
 * its file name, an error's name, plurals, progress on a terminal.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* Where fail() writes in this thread: stderr, or a control client's stream */
static _Thread_local FILE *fail_to;

FILE *fail_redirect(FILE *f)
{
	FILE *prev = fail_to;
	fail_to = f;
	return prev;
}

/* s on @p out with its control characters as \ooo: one message, one line */
static void put_line(FILE *out, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\%03o", *p);
		else
			fputc(*p, out);
}

int fail(const char *cmd, const char *file, const char *fmt, ...)
{
	char msg[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	FILE *out = fail_to != NULL ? fail_to : stderr;
	flockfile(out); /* one message whole: diff's reader threads report too */
	fprintf(out, "dnsnap %s: ", cmd);
	if (file != NULL) {
		put_line(out, file);
		fputs(": ", out);
	}
	put_line(out, msg);
	fputc('\n', out);
	funlockfile(out);
	return EXIT_USAGE;
}

const char *diag_reason(const char *path, const char *msg)
{
	size_t pl = strlen(path);
	if (strncmp(msg, path, pl) == 0 && msg[pl] == ':' && msg[pl + 1] == ' ')
		return msg + pl + 2;
	return msg;
}

const char *err_name(int err)
{
	const char *name = dnsnap_errname(err);
	if (name == NULL && err < 0 && err > -4096)
		name = strerrorname_np(-err);
	return name;
}

static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const dnsnap_progress_t *progress_start(progress_t *pg, const char *what)
{
	*pg = (progress_t){ .p = { progress_report, pg }, .what = what, .unit = "entries",
			    .t0 = seconds() };
	return isatty(2) ? &pg->p : NULL;
}

void progress_report(void *arg, uint64_t done, uint64_t total)
{
	progress_t *pg = arg;
	double t = seconds() - pg->t0;
	double rate = t > 0 ? (double)done / t : 0;
	if (total > 0)
		fprintf(stderr, "\r%s: %llu of %llu %s (%.0f%%), %.0f/s\033[K", pg->what,
			(unsigned long long)done, (unsigned long long)total, pg->unit,
			100.0 * (double)done / (double)total, rate);
	else
		fprintf(stderr, "\r%s: %llu %s, %.0f/s\033[K", pg->what,
			(unsigned long long)done, pg->unit, rate);
	pg->shown = 1;
}

void progress_end(progress_t *pg)
{
	if (pg->shown)
		fputc('\n', stderr); /* the last report stays: the total and the rate */
	pg->shown = 0;
}

const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}
