/*
 * dump: a snapshot's entries (filtered) as zone text or JSON lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "print.h"

struct dump_ctx {
	uint32_t now;
	int json, expired;
	const filter_t *f;
	uint64_t shown;
};

static int dump_one(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		    size_t entry_len)
{
	struct dump_ctx *dc = arg;
	dnsnap_key_t k;
	dnsnap_key_decode(key, key_len, &k, NULL); /* checked by the scan */
	if ((int32_t)(entry_expiry(entry) - dc->now) <= 0 && !dc->expired)
		return 0;
	if (!filter_match(dc->f, &k))
		return 0;
	print_dump(stdout, key, key_len, entry, entry_len, dc->now, dc->json);
	dc->shown++;
	return 0;
}

int cmd_dump(int argc, char **argv)
{
	const char *path = NULL;
	filter_t f = { 0 };
	struct dump_ctx dc = { .f = &f };
	unsigned long long now = (unsigned long long)time(NULL);
	for (int i = 1; i < argc; i++) {
		int r = filter_arg("dump", &f, argc, argv, &i);
		if (r == EXIT_USAGE)
			return r;
		if (r == 1)
			continue;
		if (strcmp(argv[i], "--json") == 0)
			dc.json = 1;
		else if (strcmp(argv[i], "--expired") == 0)
			dc.expired = 1;
		else if (strcmp(argv[i], "--now") == 0 && i + 1 < argc) {
			if (number("dump", "--now", argv[++i], UINT32_MAX, &now))
				return EXIT_USAGE;
		} else if (path == NULL && argv[i][0] != '-')
			path = argv[i];
		else
			return fail("dump", NULL, "unexpected argument: %s", argv[i]);
	}
	if (path == NULL)
		return fail("dump", NULL, "needs a snapshot");
	if (filter_ready("dump", &f))
		return EXIT_USAGE;
	dc.now = (uint32_t)now;
	dnsnap_snap_t *s;
	if (open_snap("dump", path, &s))
		return EXIT_USAGE;
	int rc = scan_snap("dump", s, f.prefix_len ? f.prefix : NULL, f.prefix_len, dump_one, &dc,
			   NULL);
	dnsnap_snap_close(s);
	if (rc != 0)
		return rc; /* damage (the good entries were printed) */
	return dc.shown ? 0 : EXIT_NONE;
}
