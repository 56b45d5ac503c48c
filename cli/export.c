/*
 * export: a snapshot to the portable stream, or to Unbound's load_cache text;
 * or, with --to, to the shared second level (l2xfer.c).
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
#include "unbound.h"

enum { OPT_FORMAT = 0x100, OPT_TOP, OPT_LEVEL, OPT_NOW, OPT_JSON, OPT_TO, OPT_PREFIX, OPT_AUTH };

static const struct option longopts[] = {
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "level", required_argument, NULL, OPT_LEVEL },
	{ "now", required_argument, NULL, OPT_NOW },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "to", required_argument, NULL, OPT_TO },
	{ "l2-prefix", required_argument, NULL, OPT_PREFIX },
	{ "l2-auth-file", required_argument, NULL, OPT_AUTH },
	{ NULL, 0, NULL, 0 },
};

/*
 * A failure of the export, one line naming one file: the engine's messages
 * about the snapshot begin with its path (as the reader's all do); the others
 * (writing, compressing) are about the output.
 */
static int export_fail(const char *snap, const char *out, const char *msg, int err)
{
	size_t pl = strlen(snap);
	if (msg[0] == 0)
		msg = strerror(-err);
	if (strncmp(msg, snap, pl) == 0 && msg[pl] == ':')
		return fail("export", NULL, "%s", msg);
	return fail("export", out, "%s", msg);
}

/* The size of what was written, when the output is a regular file; else -1
 * (a pipe or a device keeps no count). */
static long long written(int fd)
{
	struct stat st;
	return fd > 1 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? (long long)st.st_size : -1;
}

static void j_size(jw_t *j, const char *k, long long v)
{
	jw_key(j, k);
	if (v < 0)
		jw_null(j);
	else
		jw_u64(j, (uint64_t)v);
}

static const char *s_(uint64_t n)
{
	return n == 1 ? "" : "s";
}

/* export's options, as parsed */
struct export_args {
	const char *out, *format, *to, *prefix, *auth_file;
	unsigned long long top, level;
	uint32_t now;
	int has_now, json, unbound;
};

/* The options into @p a. @return 0, or the exit code */
static int export_parse(int argc, char **argv, struct export_args *a)
{
	int c;
	while ((c = opt_next("export", argc, argv, "o:", longopts)) != -1) {
		switch (c) {
		case 'o':
			a->out = optarg;
			break;
		case OPT_FORMAT:
			a->format = optarg;
			break;
		case OPT_TOP:
			if (number("export", "--top", optarg, UINT64_MAX, &a->top))
				return EXIT_USAGE;
			break;
		case OPT_LEVEL:
			if (number("export", "--level", optarg, 19, &a->level))
				return EXIT_USAGE;
			if (a->level == 0)
				return fail("export", NULL, "--level: 1 to 19, not 0");
			break;
		case OPT_NOW:
			if (time_arg("export", "--now", optarg, &a->now))
				return EXIT_USAGE;
			a->has_now = 1;
			break;
		case OPT_JSON:
			a->json = 1;
			break;
		case OPT_TO:
			a->to = optarg;
			break;
		case OPT_PREFIX:
			if (l2_prefix_arg("export", optarg))
				return EXIT_USAGE;
			a->prefix = optarg;
			break;
		case OPT_AUTH:
			a->auth_file = optarg;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	return opt_operands("export", argc, argv, 1, 1, "a snapshot") < 0 ? EXIT_USAGE : 0;
}

/* What goes with what, for a file export (not --to). @return 0, or the exit code */
static int export_check(const char *path, struct export_args *a)
{
	if (a->out == NULL)
		return fail("export", NULL, "needs -o OUT (- for standard output)");
	a->unbound = strcmp(a->format, "unbound") == 0;
	if (!a->unbound && strcmp(a->format, "dnsnap") != 0)
		return fail("export", NULL, "--format: dnsnap or unbound, not %s", a->format);
	if (a->unbound && (a->top || a->level))
		return fail("export", NULL, "--top and --level are for the dnsnap format");
	if (!a->unbound && a->has_now)
		return fail("export", NULL, "--now is for --format unbound (the stream keeps "
			    "Inception and Expiry as they are)");
	if (a->json && strcmp(a->out, "-") == 0)
		return fail("export", NULL, "--json writes the summary to standard output, which "
			    "-o - gives to the export: write it to a file");
	if (same_file(path, 0, a->out, 1))
		return fail("export", a->out, "is the snapshot being exported (%s); not "
			    "overwriting it", path);
	return 0;
}

/*
 * @p s written to @p o in the chosen format; @p size: the bytes written, or
 * -1 when the output keeps no count. @return DNSNAP_OK or the error, with
 * @p d's message; the output closed either way (out_close()).
 */
static int export_out(dnsnap_snap_t *s, const struct export_args *a, out_file_t *o,
		      unbound_export_stats_t *st, long long *size, dnsnap_diag_t *d)
{
	int fd = o->fd, closed = 0, err;
	if (a->unbound) {
		FILE *f = fd == 1 ? stdout : fdopen(fd, "w");
		err = f == NULL ? -errno : unbound_export(s, f, a->now, st, d);
		if (f != NULL && fflush(f) != 0 && err == DNSNAP_OK)
			err = -errno;
		*size = written(fd);
		if (f != NULL && fd != 1 && fclose(f) != 0 && err == DNSNAP_OK)
			err = -errno;
		closed = f != NULL && fd != 1; /* closed with f */
	} else {
		progress_t pg;
		err = dnsnap_export_write(s, fd, (int)a->level, a->top,
					  progress_start(&pg, "export"), d);
		progress_end(&pg);
		*size = written(fd);
	}
	int cerr = out_close(o, err == DNSNAP_OK, closed);
	if (err == DNSNAP_OK && cerr != 0) {
		d->msg[0] = 0;
		err = cerr;
	}
	if (err != DNSNAP_OK && o->replace) {
		/* a regular file's temporary was removed: say so, not that it won't import */
		static const char keep[] = ", no end record written (the stream will not import)";
		char *k = strstr(d->msg, keep);
		if (k != NULL) {
			char rest[sizeof d->msg];
			snprintf(rest, sizeof rest, "%s", k + sizeof keep - 1);
			snprintf(k, sizeof d->msg - (size_t)(k - d->msg), "; %s not written%s",
				 a->out, rest);
		}
	}
	return err;
}

/* The summary of a finished export: a line for Unbound's text, --json's object */
static int export_report(const char *path, const struct export_args *a, const char *name,
			 const dnsnap_snap_info_t *info, const unbound_export_stats_t *st,
			 long long size)
{
	if (a->unbound && !a->json)
		fprintf(stderr, "dnsnap export: %s: %llu message%s, %llu RRset%s (%llu shared); "
			"left out: %llu expired, %llu CD, %llu tagged, %llu bad, %llu "
			"unprintable\n", name, (unsigned long long)st->messages, s_(st->messages),
			(unsigned long long)st->rrsets, s_(st->rrsets),
			(unsigned long long)st->shared, (unsigned long long)st->expired,
			(unsigned long long)st->cd, (unsigned long long)st->tagged,
			(unsigned long long)st->bad, (unsigned long long)st->unprintable);
	if (!a->json)
		return 0;
	jw_t j;
	jw_init(&j, stdout);
	jw_obj(&j);
	jw_kstr(&j, "snapshot", path);
	jw_kstr(&j, "output", a->out);
	jw_kstr(&j, "format", a->format);
	if (a->unbound) {
		jw_ku64(&j, "entries", st->entries);
		jw_ku64(&j, "messages", st->messages);
		jw_ku64(&j, "rrsets", st->rrsets);
		jw_ku64(&j, "shared", st->shared);
		jw_key(&j, "left_out");
		jw_obj(&j);
		jw_ku64(&j, "expired", st->expired);
		jw_ku64(&j, "cd", st->cd);
		jw_ku64(&j, "tagged", st->tagged);
		jw_ku64(&j, "bad", st->bad);
		jw_ku64(&j, "unprintable", st->unprintable);
		jw_end(&j);
	} else {
		uint64_t n = a->top && a->top < info->entry_count ? a->top : info->entry_count;
		jw_ku64(&j, "entries", n);
		jw_ku64(&j, "snapshot_entries", info->entry_count);
	}
	jw_ku64(&j, "bytes_in", info->file_size);
	j_size(&j, "bytes_out", size);
	jw_end(&j);
	jw_nl(&j);
	return fflush(stdout) == 0 ? 0 : fail("export", "standard output", "%s", strerror(errno));
}

/*
 * export: the portable stream (or, --format unbound, load_cache text) to -o
 * OUT (out_open(): a regular file is written beside it and renamed over it
 * when whole, so an existing OUT is never left half-overwritten; a device or
 * FIFO is written in place). OUT naming SNAP itself is refused, and the
 * binary stream is never written to a terminal. --json: a summary on
 * standard output (so not with -o -, which the stream takes).
 */
int cmd_export(int argc, char **argv)
{
	struct export_args a = { .format = "dnsnap", .now = (uint32_t)time(NULL) };
	int rc = export_parse(argc, argv, &a);
	if (rc != 0)
		return rc;
	const char *path = argv[optind];
	if (a.to == NULL && (a.prefix != NULL || a.auth_file != NULL))
		return fail("export", NULL, "--l2-prefix and --l2-auth-file are for --to");
	if (a.to != NULL) {
		if (a.out != NULL || a.top || a.level || strcmp(a.format, "dnsnap") != 0)
			return fail("export", NULL, "--to writes every live entry to the second "
				    "level: not with -o, --format, --top or --level");
		return export_to_l2(path, a.to, a.prefix, a.auth_file, a.now, a.has_now,
				    a.json);
	}
	if ((rc = export_check(path, &a)) != 0)
		return rc;
	dnsnap_snap_t *s;
	if (open_snap("export", path, &s))
		return EXIT_USAGE;
	dnsnap_snap_info_t info;
	dnsnap_snap_info(s, &info);
	out_file_t o;
	if (out_open("export", a.out, !a.unbound, &o)) {
		dnsnap_snap_close(s);
		return EXIT_USAGE;
	}
	dnsnap_diag_t d = { 0 };
	unbound_export_stats_t st = { 0 };
	long long size = -1;
	int err = export_out(s, &a, &o, &st, &size, &d);
	dnsnap_snap_close(s);
	if (err != DNSNAP_OK)
		return export_fail(path, a.out, d.msg, err);
	return export_report(path, &a, o.name, &info, &st, size);
}
