/*
 * fuzz_snapshot: whole snapshot files. The input is written to a memfd,
 * opened by its /proc path, scanned whole, looked up by every key the scan
 * handed over (at most 64) and by a few absent ones, then verified. Whatever
 * the bytes: never a crash or hang, and the reader agrees with itself: an
 * entry the scan hands over validates, and dnsnap_snap_get() of its key
 * gives the same bytes, or misses in a file that fails verify (a damaged
 * hash index: spec/FORMAT.md, "Index record"). Seeds: real snapshots
 * (tests/helpers/mksnapseeds, overflow values included, each with its index).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../engine/dnsnap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define KEEP 64

struct seen {
	uint8_t key[KEEP][DNSNAP_KEY_MAX];
	size_t key_len[KEEP];
	uint32_t sum[KEEP];      /* a cheap fingerprint of the entry */
	size_t entry_len[KEEP];
	unsigned n;
};

static uint32_t fingerprint(const uint8_t *p, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static int keep(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		size_t entry_len)
{
	struct seen *sn = arg;
	if (dnsnap_entry_validate(entry, entry_len, NULL) != DNSNAP_OK)
		abort(); /* the scan hands over checked entries only */
	if (sn->n < KEEP) {
		memcpy(sn->key[sn->n], key, key_len);
		sn->key_len[sn->n] = key_len;
		sn->entry_len[sn->n] = entry_len;
		sn->sum[sn->n++] = fingerprint(entry, entry_len);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	static struct seen sn;
	static uint8_t buf[DNSNAP_ENTRY_MAX];
	if (fd < 0) {
		fd = memfd_create("snapshot", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	dnsnap_snap_t *s;
	dnsnap_diag_t d;
	if (dnsnap_snap_open(path, &s, &d) != DNSNAP_OK)
		return 0;
	sn.n = 0;
	dnsnap_scan_stats_t st;
	dnsnap_snap_scan(s, NULL, 0, keep, &sn, &st, &d);
	int missed = 0;
	for (unsigned i = 0; i < sn.n; i++) {
		size_t len;
		int err = dnsnap_snap_get(s, sn.key[i], sn.key_len[i], buf, sizeof buf, &len);
		if (err == DNSNAP_ENOTFOUND) {
			missed = 1; /* a damaged hash index may miss: verify must say so */
			continue;
		}
		if (err != DNSNAP_OK || len != sn.entry_len[i] || fingerprint(buf, len) != sn.sum[i])
			abort(); /* the walk and the lookup must read the same */
	}
	if (missed && st.damaged == 0 && dnsnap_snap_verify(s, NULL, &d) == DNSNAP_OK)
		abort(); /* a miss of an entry the walk met, in a file that verifies */
	/* a zone's range, and keys that are not there */
	static const uint8_t com[] = { 3, 'c', 'o', 'm' };
	dnsnap_snap_scan(s, com, sizeof com, keep, &sn, NULL, NULL);
	static const uint8_t absent[] = { 3, 'c', 'o', 'm', 1, 'x', 0, 0, 1, 0, 1, 0, 0 };
	size_t len;
	dnsnap_snap_get(s, absent, sizeof absent, buf, sizeof buf, &len);
	dnsnap_snap_verify(s, NULL, &d);
	dnsnap_snap_close(s);
	return 0;
}
