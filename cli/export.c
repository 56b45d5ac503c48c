/*
 * export: a snapshot to the portable stream, or to Unbound's load_cache text.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "unbound.h"

/*
 * export: the portable stream (or, --format unbound, load_cache text) to -o
 * OUT (out_open(): a regular file is written beside it and renamed over it
 * when whole, so an existing OUT is never left half-overwritten; a device or
 * FIFO is written in place). OUT naming SNAP itself is refused, and the
 * binary stream is never written to a terminal.
 */
int cmd_export(int argc, char **argv)
{
	const char *path = NULL, *out = NULL, *format = "dnsnap";
	unsigned long long top = 0, level = 0, now = (unsigned long long)time(NULL);
	int has_now = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			out = argv[++i];
		else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc)
			format = argv[++i];
		else if (strcmp(argv[i], "--top") == 0 && i + 1 < argc) {
			if (number("export", "--top", argv[++i], UINT64_MAX, &top))
				return EXIT_USAGE;
		} else if (strcmp(argv[i], "--level") == 0 && i + 1 < argc) {
			if (number("export", "--level", argv[++i], 19, &level))
				return EXIT_USAGE;
		} else if (strcmp(argv[i], "--now") == 0 && i + 1 < argc) {
			if (number("export", "--now", argv[++i], UINT32_MAX, &now))
				return EXIT_USAGE;
			has_now = 1;
		} else if (path == NULL && argv[i][0] != '-')
			path = argv[i];
		else
			return fail("export", NULL, "unexpected argument: %s", argv[i]);
	}
	if (path == NULL || out == NULL)
		return fail("export", NULL, "needs a snapshot and -o OUT (- for stdout)");
	int unbound = strcmp(format, "unbound") == 0;
	if (!unbound && strcmp(format, "dnsnap") != 0)
		return fail("export", NULL, "--format: dnsnap or unbound, not %s", format);
	if (unbound && (top || level))
		return fail("export", NULL, "--top and --level are for the dnsnap format");
	if (!unbound && has_now)
		return fail("export", NULL, "--now is for --format unbound (the stream keeps "
			    "Inception and Expiry as they are)");
	if (same_file(path, 0, out, 1))
		return fail("export", out, "is the snapshot being exported (%s); not overwriting "
			    "it", path);
	dnsnap_snap_t *s;
	if (open_snap("export", path, &s))
		return EXIT_USAGE;
	out_file_t o;
	if (out_open("export", out, !unbound, &o)) {
		dnsnap_snap_close(s);
		return EXIT_USAGE;
	}
	int fd = o.fd, closed = 0;
	dnsnap_diag_t d = { 0 };
	int err;
	if (unbound) {
		FILE *f = fd == 1 ? stdout : fdopen(fd, "w");
		unbound_export_stats_t st = { 0 };
		err = f == NULL ? -errno : unbound_export(s, f, (uint32_t)now, &st, &d);
		if (f != NULL && (fd == 1 ? fflush(f) : fclose(f)) != 0 && err == DNSNAP_OK)
			err = -errno;
		closed = f != NULL && fd != 1; /* closed with f */
		if (err == DNSNAP_OK)
			fprintf(stderr, "dnsnap export: %s: %llu messages, %llu RRsets (%llu shared); "
				"left out: %llu expired, %llu CD, %llu tagged, %llu bad, %llu "
				"unprintable\n", out, (unsigned long long)st.messages,
				(unsigned long long)st.rrsets, (unsigned long long)st.shared,
				(unsigned long long)st.expired, (unsigned long long)st.cd,
				(unsigned long long)st.tagged, (unsigned long long)st.bad,
				(unsigned long long)st.unprintable);
	} else {
		progress_t pg;
		err = dnsnap_export_write(s, fd, (int)level, top, progress_start(&pg, "export"), &d);
		progress_end(&pg);
	}
	dnsnap_snap_close(s);
	int cerr = out_close(&o, err == DNSNAP_OK, closed);
	if (err == DNSNAP_OK)
		err = cerr;
	if (err != DNSNAP_OK) {
		return fail("export", out, "%s (%s)", d.msg[0] ? d.msg : strerror(-err),
			    dnsnap_errname(err) ? dnsnap_errname(err) : strerror(-err));
	}
	return 0;
}
