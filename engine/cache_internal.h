/*
 * cache_internal.h: what the snapshot writer (snap_write.c) and the keep rule
 * (keep.c) share with cache.c. Not installed.
 */
#ifndef DNSNAP_CACHE_INTERNAL_H
#define DNSNAP_CACHE_INTERNAL_H

#include "dnsnap.h"

/*
 * Live entries copied out of the cache: records of
 *   Key_Len u16 LE | Entry_Len u32 LE | Key | Entry
 * (the export stream's framing), the entry's Hits field set to the live
 * counter, one segment per shard. The caller frees every seg[i].
 */
#define DNSNAP_COPY_SEGS 16     /* one segment per shard */

typedef struct dnsnap_copy {
	uint8_t *seg[DNSNAP_COPY_SEGS];
	size_t seg_len[DNSNAP_COPY_SEGS];
	size_t len;              /* all segments */
	uint64_t n;              /* records */
	uint64_t skipped;        /* expired at now */
	double longest_ms;       /* longest time one shard's lock was held */
} dnsnap_copy_t;

/* Copy every entry live at @p now, one shard at a time under its read lock
 * (lookups go on; inserts into that shard wait). */
int dnsnap__cache_copy_live(dnsnap_cache_t *c, uint32_t now, dnsnap_copy_t *out);

/* Where the index puts @p key: its shard (0-15), and its 64-bit hash in
 * *hash when not NULL. For tests: the hash is seeded per cache. */
unsigned dnsnap__cache_shard_of(const dnsnap_cache_t *c, const uint8_t *key, size_t key_len,
				uint64_t *hash);

/*
 * The keep rule (keep.c, spec/DECISIONS.md): whether @p older, the entry a
 * key holds, stays when @p newer (a later, or equally timed, response for the
 * same key) comes: it must still be live at the newer's Inception, hold
 * DNSSEC records the newer lacks, and the same data (RCODE, kind, answer and
 * authority records but RRSIG, NSEC, NSEC3 and authority DS; TTLs aside).
 * Both entries are trusted (encoded here, or validated). @return 1 keep older
 */
int dnsnap__keep_older(const uint8_t *older, size_t older_len, const uint8_t *newer,
		       size_t newer_len);

#endif
