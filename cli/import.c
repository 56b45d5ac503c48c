/*
 * import: a portable stream (what dnsnap export writes) to a snapshot; or,
 * with --from, what the shared second level holds (l2xfer.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "json.h"

enum { OPT_NOW = 0x100, OPT_WAIT, OPT_JSON, OPT_FROM, OPT_PREFIX, OPT_AUTH };

static const struct option longopts[] = {
	{ "now", required_argument, NULL, OPT_NOW },
	{ "wait", required_argument, NULL, OPT_WAIT },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "l2-prefix", required_argument, NULL, OPT_PREFIX },
	{ "l2-auth-file", required_argument, NULL, OPT_AUTH },
	{ NULL, 0, NULL, 0 },
};

/* The fill of dnsnap_snap_publish_fill(): the stream's live entries. */
struct import_fill {
	int fd;
	uint32_t now;
	const dnsnap_progress_t *pr;
};

static int import_fill(void *arg, dnsnap_snap_t *base, dnsnap_snapw_t *w,
		       dnsnap_snap_write_stats_t *stats, dnsnap_diag_t *d)
{
	const struct import_fill *x = arg;
	(void)base; /* replaced, not read (DNSNAP_PUBLISH_REPLACE) */
	return dnsnap_import_into(x->fd, w, x->now, x->pr, stats, d);
}

/*
 * The stream IN to the snapshot OUT: the input is looked at first (missing,
 * a directory, empty), then OUT's writers' lock taken, then the stream read
 * whole. A failure is one line naming one file: the writer's messages begin
 * with OUT (the engine names it); the stream's are about IN.
 */
int cmd_import(int argc, char **argv)
{
	const char *out = NULL, *from = NULL, *prefix = NULL, *auth_file = NULL;
	uint32_t now = (uint32_t)time(NULL);
	unsigned long long wait = WAIT_DEFAULT;
	int json = 0, c;
	while ((c = opt_next("import", argc, argv, "o:", longopts)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case OPT_NOW:
			if (time_arg("import", "--now", optarg, &now))
				return EXIT_USAGE;
			break;
		case OPT_WAIT:
			if (number("import", "--wait", optarg, INT32_MAX, &wait))
				return EXIT_USAGE;
			break;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_FROM:
			from = optarg;
			break;
		case OPT_PREFIX:
			if (l2_prefix_arg("import", optarg))
				return EXIT_USAGE;
			prefix = optarg;
			break;
		case OPT_AUTH:
			auth_file = optarg;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (from == NULL && (prefix != NULL || auth_file != NULL))
		return fail("import", NULL, "--l2-prefix and --l2-auth-file are for --from");
	if (from != NULL) {
		if (opt_operands("import", argc, argv, 0, 0, "") < 0)
			return EXIT_USAGE;
		if (out == NULL)
			return fail("import", NULL, "needs -o SNAP, the snapshot to write");
		if (out[0] == 0 || strcmp(out, "-") == 0)
			return fail("import", NULL, "-o: a snapshot's file name, not \"%s\"", out);
		return import_from_l2(from, out, prefix, auth_file, now, wait, json);
	}
	if (opt_operands("import", argc, argv, 1, 1, "a stream (- for standard input)") < 0)
		return EXIT_USAGE;
	const char *in = argv[optind];
	int std_in = strcmp(in, "-") == 0;
	const char *in_name = std_in ? "standard input" : in;
	if (out == NULL)
		return fail("import", NULL, "needs -o SNAP, the snapshot to write");
	if (out[0] == 0)
		return fail("import", NULL, "-o: an empty file name");
	if (strcmp(out, "-") == 0)
		return fail("import", NULL, "the snapshot cannot be standard output (-o -): it is "
			    "written beside its path and renamed over it");
	if (same_file(in, 0, out, 1))
		return fail("import", out, "is the stream being imported (%s); not overwriting it",
			    in_name);
	if (target_ok("import", out)) /* before the stream is read (a pipe reads once) */
		return EXIT_USAGE;
	int fd = std_in ? 0 : open(in, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail("import", in, "%s", strerror(errno));
	struct stat st_in;
	const char *bad = NULL;
	if (fstat(fd, &st_in) == 0 && S_ISDIR(st_in.st_mode))
		bad = "a directory, not an export stream";
	else if (fstat(fd, &st_in) == 0 && S_ISREG(st_in.st_mode) && st_in.st_size == 0)
		bad = "an empty file, not an export stream";
	if (bad != NULL) {
		if (!std_in)
			close(fd);
		return fail("import", in_name, "%s", bad);
	}
	/* the writers' lock, the file at OUT checked to be a snapshot (or none;
	 * never anything else), the stream written beside it and renamed over it
	 * only when all of it checked out: dnsnap_snap_publish_fill() */
	dnsnap_diag_t d = { 0 };
	progress_t pg;
	struct import_fill x = { .fd = fd, .now = now, .pr = progress_start(&pg, "import") };
	dnsnap_publish_opts_t po = { .now = now, .wait_seconds = (int)wait,
				     .flags = DNSNAP_PUBLISH_REPLACE };
	dnsnap_publish_stats_t ps;
	int err = dnsnap_snap_publish_fill(out, &po, import_fill, &x, NULL, &ps, &d);
	progress_end(&pg);
	if (!std_in)
		close(fd);
	if (err == -EAGAIN)
		return publish_fail("import", out, err, &d, &ps, wait);
	if (err != DNSNAP_OK) {
		size_t ol = strlen(out);
		if (d.msg[0] == 0)
			return fail("import", in_name, "%s", strerror(-err));
		if (strncmp(d.msg, out, ol) == 0 && d.msg[ol] == ':')
			return fail("import", NULL, "%s", d.msg); /* the writer's: it names OUT */
		return fail("import", in_name, "%s", d.msg);
	}
	dnsnap_snap_write_stats_t st = ps.write;
	if (json) {
		jw_t j;
		jw_init(&j, stdout);
		jw_obj(&j);
		jw_kstr(&j, "input", in);
		jw_kstr(&j, "snapshot", out);
		jw_ku64(&j, "entries_read", st.entries + st.skipped);
		jw_ku64(&j, "entries", st.entries);
		jw_ku64(&j, "expired", st.skipped);
		char now_iso[21];
		time_iso(now, now_iso);
		jw_kstr(&j, "now", now_iso);
		jw_ku64(&j, "bytes_in", st.stream_bytes);
		jw_ku64(&j, "bytes_out", st.file_size);
		jw_end(&j);
		jw_nl(&j);
		if (fflush(stdout) != 0)
			return fail("import", "standard output", "%s", strerror(errno));
	} else if (st.skipped)
		fprintf(stderr, "dnsnap import: %s: %llu entr%s expired at --now, left out\n",
			in_name, (unsigned long long)st.skipped, st.skipped == 1 ? "y" : "ies");
	return 0;
}
