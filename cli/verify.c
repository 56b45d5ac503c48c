/*
 * verify: every page and entry of each snapshot named checked, with a report
 * (text, or one JSON object per snapshot with --json).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "json.h"

/* The deep check's progress, counted (the entries it checked) and passed on
 * to the terminal's progress line when there is one. */
struct counted {
	dnsnap_progress_t p;
	const dnsnap_progress_t *tty;
	uint64_t done;
};

static void count_progress(void *arg, uint64_t done, uint64_t total)
{
	struct counted *c = arg;
	c->done = done;
	if (c->tty != NULL)
		c->tty->fn(c->tty->arg, done, total);
}

static int no_op(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		 size_t entry_len)
{
	(void)arg, (void)key, (void)key_len, (void)entry, (void)entry_len;
	return 0;
}

static void json_error(jw_t *j, const char *path, const char *check, int err,
		       const dnsnap_diag_t *d)
{
	jw_obj(j);
	jw_kstr(j, "check", check);
	jw_kstr(j, "code", err_name(err));
	jw_ku64(j, "offset", d->offset);
	jw_kstr(j, "reason", diag_reason(path, d->msg));
	jw_end(j);
}

/* A file that cannot be opened, with --json: its object still, so a script
 * reading standard output alone sees every file it named; what could not be
 * read is null */
static void json_unreadable(const char *path, int err, const dnsnap_diag_t *d)
{
	jw_t j;
	jw_init(&j, stdout);
	jw_obj(&j);
	jw_kstr(&j, "file", path);
	jw_kbool(&j, "ok", 0);
	static const char *const unknown[] = { "entries", "good", "damaged", "bad_pages",
					       "digest" };
	for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
		jw_key(&j, unknown[i]);
		jw_null(&j);
	}
	jw_key(&j, "errors");
	jw_arr(&j);
	json_error(&j, path, "open", err, d);
	jw_end(&j);
	jw_end(&j);
	jw_nl(&j);
	fflush(stdout);
}

/* One snapshot. @return 0 good, EXIT_USAGE bad or unreadable (reported) */
static int verify_one(const char *path, int json)
{
	dnsnap_snap_t *s;
	dnsnap_diag_t od;
	int oerr = dnsnap_snap_open(path, &s, &od);
	if (oerr != DNSNAP_OK) {
		if (json)
			json_unreadable(path, oerr, &od);
		return fail("verify", NULL, "%s", od.msg); /* the message names the file */
	}
	dnsnap_snap_info_t in;
	dnsnap_snap_info(s, &in);
	progress_t pg;
	struct counted cp = { .p = { count_progress, &cp }, .tty = progress_start(&pg, "verify") };
	dnsnap_diag_t d;
	int err = dnsnap_snap_verify(s, &cp.p, &d);
	progress_end(&pg);
	/* bad: a walk of the entries alone says how much of the file is lost
	 * (the deep check stops at the file hash, or names the first damage) */
	dnsnap_scan_stats_t st = { .entries = cp.done };
	dnsnap_diag_t sd = { 0 };
	int serr = DNSNAP_OK;
	if (err != DNSNAP_OK)
		serr = dnsnap_snap_scan(s, NULL, 0, no_op, NULL, &st, &sd);
	/* the time rule, at the clock: entries cached in the future or living
	 * past the longest TTL are refused by every reader */
	time_refusals_t tr = { .now = (uint32_t)time(NULL) };
	dnsnap_snap_scan(s, NULL, 0, time_check, &tr, NULL, NULL);
	dnsnap_snap_close(s);
	char digest[17];
	snprintf(digest, sizeof digest, "%016llx", (unsigned long long)in.digest);
	uint64_t damaged = err == DNSNAP_OK ? 0 : st.damaged;
	if (json) {
		jw_t j;
		jw_init(&j, stdout);
		jw_obj(&j);
		jw_kstr(&j, "file", path);
		jw_kbool(&j, "ok", err == DNSNAP_OK && tr.refused == 0);
		jw_ku64(&j, "entries", in.entry_count);
		jw_ku64(&j, "good", st.entries);
		jw_ku64(&j, "damaged", damaged);
		jw_ku64(&j, "bad_pages", err == DNSNAP_OK ? 0 : st.bad_pages);
		jw_ku64(&j, "refused", tr.refused);
		jw_kstr(&j, "digest", digest);
		jw_key(&j, "errors");
		jw_arr(&j);
		if (err != DNSNAP_OK)
			json_error(&j, path, "file", err, &d);
		if (serr != DNSNAP_OK && strcmp(sd.msg, d.msg) != 0)
			json_error(&j, path, "entries", serr, &sd);
		for (uint64_t i = 0; i < tr.refused && i < TIME_NAMED; i++) {
			jw_obj(&j);
			jw_kstr(&j, "check", "time");
			jw_kstr(&j, "code", err_name(DNSNAP_EFIELD));
			jw_kstr(&j, "reason", tr.named[i]);
			jw_end(&j);
		}
		jw_end(&j);
		jw_end(&j);
		jw_nl(&j);
		fflush(stdout);
	}
	for (uint64_t i = 0; i < tr.refused && i < TIME_NAMED; i++)
		fail("verify", path, "%s", tr.named[i]);
	if (tr.refused > TIME_NAMED)
		fail("verify", path, "... and %llu more", (unsigned long long)(tr.refused -
										TIME_NAMED));
	if (err == DNSNAP_OK && tr.refused > 0)
		return fail("verify", path, "%llu %s refused by the time rule (cached more than "
			    "%d s in the future, or living past the longest TTL): every reader "
			    "leaves %s out", (unsigned long long)tr.refused,
			    plural(tr.refused, "entry", "entries"), DNSNAP_TIME_SKEW_S,
			    tr.refused == 1 ? "it" : "them");
	if (err != DNSNAP_OK) {
		char more[160] = "";
		if (damaged > 0 || st.bad_pages > 0)
			snprintf(more, sizeof more, "; %llu damaged %s (%llu good), %llu bad %s",
				 (unsigned long long)damaged, plural(damaged, "entry", "entries"),
				 (unsigned long long)st.entries, (unsigned long long)st.bad_pages,
				 plural(st.bad_pages, "page", "pages"));
		else if (serr == DNSNAP_OK)
			snprintf(more, sizeof more, "; its %llu %s read good",
				 (unsigned long long)st.entries,
				 plural(st.entries, "entry", "entries"));
		return fail("verify", NULL, "%s (%s)%s", d.msg, dnsnap_errname(err), more);
	}
	if (!json) {
		printf("%s: good: %llu %s, digest %s\n", path, (unsigned long long)in.entry_count,
		       plural(in.entry_count, "entry", "entries"), digest);
		fflush(stdout);
	}
	return 0;
}

int cmd_verify(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	int json = 0, c;
	while ((c = opt_next("verify", argc, argv, "", longopts)) != -1)
		switch (c) {
		case 'j':
			json = 1;
			break;
		default:
			return EXIT_USAGE;
		}
	if (opt_operands("verify", argc, argv, 1, -1, "a snapshot") < 0)
		return EXIT_USAGE;
	int rc = 0;
	for (int i = optind; i < argc; i++)
		if (verify_one(argv[i], json) != 0)
			rc = EXIT_USAGE;
	return rc;
}
