/*
 * dump: a snapshot's entries (filtered) as text or JSON lines.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cli.h"
#include "print.h"

enum { DUMP_JSON = 0x100, DUMP_EXPIRED, DUMP_NOW };

struct dump_ctx {
	uint32_t now;
	int json, expired;
	uint64_t shown;
	uint64_t hidden;         /* matched, but expired at now (no --expired) */
};

static int dump_one(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		    size_t entry_len)
{
	struct dump_ctx *dc = arg;
	if ((int32_t)(entry_expiry(entry) - dc->now) <= 0 && !dc->expired) {
		dc->hidden++;
		return 0;
	}
	print_dump(stdout, key, key_len, entry, entry_len, dc->now, dc->json);
	dc->shown++;
	return 0;
}

int cmd_dump(int argc, char **argv)
{
	static const struct option longopts[] = {
		FILTER_LONGOPTS,
		{ "json", no_argument, NULL, DUMP_JSON },
		{ "expired", no_argument, NULL, DUMP_EXPIRED },
		{ "now", required_argument, NULL, DUMP_NOW },
		{ NULL, 0, NULL, 0 },
	};
	static filter_t f; /* 33 KB: not on the stack */
	struct dump_ctx dc = { .now = (uint32_t)time(NULL) };
	int c, r;
	f = (filter_t){ 0 };
	while ((c = opt_next("dump", argc, argv, "", longopts)) != -1) {
		if ((r = filter_opt("dump", &f, c, optarg)) != 0) {
			if (r != 1)
				return r;
			continue;
		}
		switch (c) {
		case DUMP_JSON:
			dc.json = 1;
			break;
		case DUMP_EXPIRED:
			dc.expired = 1;
			break;
		case DUMP_NOW:
			if (time_arg("dump", "--now", optarg, &dc.now))
				return EXIT_USAGE;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (opt_operands("dump", argc, argv, 1, 1, "a snapshot") < 0 || filter_ready("dump", &f))
		return EXIT_USAGE;
	const char *path = argv[optind];
	dnsnap_snap_t *s;
	if (open_snap("dump", path, &s))
		return EXIT_USAGE;
	int rc = filter_scan("dump", s, &f, dump_one, &dc, NULL);
	dnsnap_snap_close(s);
	if (rc != 0)
		return rc; /* damage (the good entries were printed) */
	if (dc.shown == 0 && dc.hidden > 0) /* a silent exit 1 would look like no match */
		fail("dump", path, "no live entry matched (%llu expired at --now; --expired shows "
		     "them)", (unsigned long long)dc.hidden);
	return dc.shown ? EXIT_FOUND : EXIT_NONE;
}
