/*
 * info: a snapshot's summary (entries, live, expired, its writer and time).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

struct live_count {
	uint32_t now;
	uint64_t live, expired;
};

static int count_live(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		      size_t entry_len)
{
	struct live_count *lc = arg;
	(void)key;
	(void)key_len;
	if (entry_len < 8)
		return 0;
	if ((int32_t)(entry_expiry(entry) - lc->now) > 0)
		lc->live++;
	else
		lc->expired++;
	return 0;
}

int cmd_info(int argc, char **argv)
{
	const char *path = NULL;
	int json = 0;
	unsigned long long now = (unsigned long long)time(NULL);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "--now") == 0 && i + 1 < argc) {
			if (number("info", "--now", argv[++i], UINT32_MAX, &now))
				return EXIT_USAGE;
		} else if (path == NULL && argv[i][0] != '-')
			path = argv[i];
		else
			return fail("info", NULL, "unexpected argument: %s", argv[i]);
	}
	if (path == NULL)
		return fail("info", NULL, "needs a snapshot");
	dnsnap_snap_t *s;
	if (open_snap("info", path, &s))
		return EXIT_USAGE;
	dnsnap_snap_info_t in;
	dnsnap_snap_info(s, &in);
	struct live_count lc = { (uint32_t)now, 0, 0 };
	int rc = scan_snap("info", s, NULL, 0, count_live, &lc, NULL);
	dnsnap_snap_close(s);
	char created[32];
	time_t t = (time_t)in.created_at;
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);
	double bpe = in.entry_count ? (double)in.file_size / (double)in.entry_count : 0;
	if (json)
		printf("{\"file\":\"%s\",\"format\":\"%u.%u\",\"created_at\":\"%s\","
		       "\"writer\":\"%s\",\"entries\":%llu,\"live\":%llu,\"expired\":%llu,"
		       "\"file_size\":%llu,\"bytes_per_entry\":%.1f,\"digest\":\"%016llx\"}\n",
		       path, in.major, in.minor, created, in.writer,
		       (unsigned long long)in.entry_count, (unsigned long long)lc.live,
		       (unsigned long long)lc.expired, (unsigned long long)in.file_size, bpe,
		       (unsigned long long)in.digest);
	else
		printf("file:            %s\nformat:          %u.%u\ncreated:         %s\n"
		       "writer:          %s\nentries:         %llu (live %llu, expired %llu)\n"
		       "file size:       %llu bytes (%.1f per entry)\ndigest:          %016llx\n",
		       path, in.major, in.minor, created, in.writer,
		       (unsigned long long)in.entry_count, (unsigned long long)lc.live,
		       (unsigned long long)lc.expired, (unsigned long long)in.file_size, bpe,
		       (unsigned long long)in.digest);
	return rc;
}
