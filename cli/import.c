/*
 * import: a portable stream (or Unbound's cache text) to a snapshot.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

int cmd_import(int argc, char **argv)
{
	const char *in = NULL, *out = NULL;
	unsigned long long now = (unsigned long long)time(NULL), wait = WAIT_DEFAULT;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			out = argv[++i];
		else if (strcmp(argv[i], "--wait") == 0 && i + 1 < argc) {
			if (number("import", "--wait", argv[++i], INT32_MAX, &wait))
				return EXIT_USAGE;
		} else if (strcmp(argv[i], "--now") == 0 && i + 1 < argc) {
			if (number("import", "--now", argv[++i], UINT32_MAX, &now))
				return EXIT_USAGE;
		} else if (in == NULL && (argv[i][0] != '-' || strcmp(argv[i], "-") == 0))
			in = argv[i];
		else
			return fail("import", NULL, "unexpected argument: %s", argv[i]);
	}
	if (in == NULL || out == NULL)
		return fail("import", NULL, "needs a stream (- for stdin) and -o SNAP");
	if (strcmp(out, "-") == 0)
		return fail("import", NULL, "the snapshot cannot be standard output");
	if (same_file(in, 0, out, 1))
		return fail("import", out, "is the stream being imported (%s); not overwriting it",
			    strcmp(in, "-") ? in : "standard input");
	int fd = strcmp(in, "-") == 0 ? 0 : open(in, O_RDONLY);
	if (fd < 0)
		return fail("import", in, "%s", strerror(errno));
	dnsnap_snap_lock_t *lk;
	if (lock_snap("import", out, wait, &lk)) {
		if (fd != 0)
			close(fd);
		return EXIT_USAGE;
	}
	dnsnap_diag_t d = { 0 };
	progress_t pg;
	dnsnap_snap_write_stats_t st = { 0 };
	int err = dnsnap_import(fd, out, (uint32_t)now, progress_start(&pg, "import"), &st, &d);
	progress_end(&pg);
	dnsnap_snap_unlock(lk);
	if (fd != 0)
		close(fd);
	if (err != DNSNAP_OK)
		return fail("import", in, "%s (%s at offset %zu of the decompressed stream)", d.msg,
			    dnsnap_errname(err) ? dnsnap_errname(err) : strerror(-err), d.offset);
	if (st.skipped)
		fprintf(stderr, "dnsnap import: %s: %llu entries expired at --now, left out\n",
			in, (unsigned long long)st.skipped);
	return 0;
}
