/*
 * info: a snapshot's summary (entries, live, expired, its writer and time),
 * for each snapshot named: a bad one is reported and the others still are.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "json.h"

struct live_count {
	uint32_t now;
	uint64_t live, expired, stale; /* stale: of the expired, those still servable stale */
	time_refusals_t tr;      /* refused by the time rule: neither live nor expired */
};

static int count_live(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		      size_t entry_len)
{
	struct live_count *lc = arg;
	if (entry_len < 8)
		return 0;
	uint64_t before = lc->tr.refused;
	time_check(&lc->tr, key, key_len, entry, entry_len);
	if (lc->tr.refused != before)
		return 0;
	int st = entry_state(entry_expiry(entry), lc->now);
	lc->live += st == ENTRY_LIVE;
	lc->expired += st != ENTRY_LIVE;
	lc->stale += st == ENTRY_STALE;
	return 0;
}

/* One snapshot, printed. @return 0, or EXIT_USAGE (reported: unreadable, or
 * damaged entries, which are then counted in the summary printed) */
static int info_one(const char *path, uint32_t now, int json, int *printed)
{
	dnsnap_snap_t *s;
	dnsnap_diag_t od;
	int oerr = dnsnap_snap_open(path, &s, &od);
	if (oerr != DNSNAP_OK) {
		if (json) {
			/* its object still: a script reading standard output alone
			 * sees every file it named */
			jw_t j;
			jw_init(&j, stdout);
			jw_obj(&j);
			jw_kstr(&j, "file", path);
			jw_kstr(&j, "error", diag_reason(path, od.msg));
			jw_kstr(&j, "code", err_name(oerr));
			jw_end(&j);
			jw_nl(&j);
			fflush(stdout);
		}
		return fail("info", NULL, "%s", od.msg); /* the message names the file */
	}
	dnsnap_snap_info_t in;
	dnsnap_snap_info(s, &in);
	struct live_count lc = { .now = now, .tr.now = rule_now(now, (uint32_t)time(NULL)) };
	uint64_t damaged = 0;
	int rc = scan_snap("info", s, NULL, 0, count_live, &lc, &damaged);
	dnsnap_snap_close(s);
	char created[21], format[24], digest[17];
	time_iso(in.created_at > UINT32_MAX ? UINT32_MAX : (uint32_t)in.created_at, created);
	snprintf(format, sizeof format, "%u.%u", in.major, in.minor);
	snprintf(digest, sizeof digest, "%016llx", (unsigned long long)in.digest);
	double bpe = in.entry_count ? (double)in.file_size / (double)in.entry_count : 0;
	if (json) {
		jw_t j;
		jw_init(&j, stdout);
		jw_obj(&j);
		jw_kstr(&j, "file", path);
		jw_kstr(&j, "format", format);
		jw_kstr(&j, "created_at", created);
		jw_kstr(&j, "writer", in.writer);
		jw_ku64(&j, "entries", in.entry_count);
		jw_ku64(&j, "live", lc.live);
		jw_ku64(&j, "expired", lc.expired);
		jw_ku64(&j, "stale", lc.stale);
		jw_ku64(&j, "damaged", damaged);
		jw_ku64(&j, "refused", lc.tr.refused);
		jw_ku64(&j, "file_size", in.file_size);
		jw_kdbl(&j, "bytes_per_entry", bpe, 1);
		jw_kstr(&j, "digest", digest);
		jw_end(&j);
		jw_nl(&j);
	} else {
		if (*printed)
			putchar('\n'); /* a blank line between files */
		printf("file:            %s\nformat:          %s\ncreated:         %s\n"
		       "writer:          %s\nentries:         %llu (live %llu, expired %llu)\n",
		       path, format, created, in.writer, (unsigned long long)in.entry_count,
		       (unsigned long long)lc.live, (unsigned long long)lc.expired);
		if (lc.stale > 0)
			printf("stale:           %llu of the expired (less than 7 days ago: "
			       "servable stale, RFC 8767)\n", (unsigned long long)lc.stale);
		if (damaged > 0)
			printf("damaged:         %llu %s skipped (run dnsnap verify)\n",
			       (unsigned long long)damaged, plural(damaged, "entry", "entries"));
		if (lc.tr.refused > 0)
			printf("refused:         %llu %s cached in the future or living past the "
			       "longest TTL (run dnsnap verify)\n", (unsigned long long)lc.tr.refused,
			       plural(lc.tr.refused, "entry", "entries"));
		printf("file size:       %llu %s (%.1f per entry)\ndigest:          %s\n",
		       (unsigned long long)in.file_size, plural(in.file_size, "byte", "bytes"), bpe,
		       digest);
	}
	fflush(stdout);
	++*printed;
	if (rc == 0 && lc.tr.refused > 0)
		rc = fail("info", path, "%llu %s refused by the time rule (the first: %s); run "
			  "dnsnap verify", (unsigned long long)lc.tr.refused,
			  plural(lc.tr.refused, "entry", "entries"), lc.tr.named[0]);
	return rc == 0 ? 0 : EXIT_USAGE;
}

int cmd_info(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "now", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	int json = 0, c;
	uint32_t now = (uint32_t)time(NULL);
	while ((c = opt_next("info", argc, argv, "", longopts)) != -1)
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'n':
			if (time_arg("info", "--now", optarg, &now))
				return EXIT_USAGE;
			break;
		default:
			return EXIT_USAGE;
		}
	if (opt_operands("info", argc, argv, 1, -1, "a snapshot") < 0)
		return EXIT_USAGE;
	int rc = 0, printed = 0;
	for (int i = optind; i < argc; i++) {
		/* each file's summary is flushed before the next file's message on
		 * stderr: the two interleave in the order the files were given */
		if (info_one(argv[i], now, json, &printed) != 0)
			rc = EXIT_USAGE;
	}
	return rc;
}
