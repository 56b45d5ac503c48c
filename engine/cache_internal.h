/*
 * cache_internal.h: what the snapshot writer (snap_write.c) and the keep rule
 * (keep.c) share with cache.c. Not installed.
 */
#ifndef DNSNAP_CACHE_INTERNAL_H
#define DNSNAP_CACHE_INTERNAL_H

#include "dnsnap.h"

/*
 * What a snapshot writer reads of the cache, without copying its entries:
 *
 *   dnsnap__cache_pin(c);
 *   for each shard k: dnsnap__cache_refs(c, k, now, &tmp, &refs[k]);
 *   ... read every ref with dnsnap__ref_get() ...
 *   dnsnap__cache_unpin(c);
 *
 * While the cache is pinned, entries removed, evicted or replaced are kept
 * (off the accounted bytes: the cache may hold more than max_bytes) and
 * freed by the last unpin, so every ref stays readable until then. An
 * entry's key and bytes never change once inserted; its hit counter is read
 * when the ref is.
 */
typedef struct dnsnap_ref {
	uint64_t pre[2];         /* the key's first 16 bytes, big-endian, zero-padded */
	const void *e;           /* the cache's entry */
} dnsnap_ref_t;

typedef struct dnsnap_refval {
	const uint8_t *key, *entry;
	size_t key_len, entry_len;
	uint32_t hits;           /* the live counter, for the entry's Hits field */
} dnsnap_refval_t;

typedef struct dnsnap_refs {
	dnsnap_ref_t *r;         /* the caller frees it */
	size_t n, cap;           /* refs, and room for refs in r */
	uint64_t skipped;        /* expired at now */
	double held_ms;          /* how long the shard's lock was held */
} dnsnap_refs_t;

/* A scratch copy of a shard's slot array, reused from shard to shard; the
 * caller frees slot. */
typedef struct dnsnap_slots {
	uint64_t *slot;
	size_t cap;
} dnsnap_slots_t;

#define DNSNAP_SHARDS 16

void dnsnap__cache_pin(dnsnap_cache_t *c);
void dnsnap__cache_unpin(dnsnap_cache_t *c);

/* Refs to the entries of shard @p k (0 to DNSNAP_SHARDS - 1) live at @p now,
 * in no order, a key possibly twice (see dnsnap__copy_chunk). The shard's
 * slot array is copied into @p tmp without its lock (dnsnap__cache_pin()
 * took and let go every shard's once; inserts and lookups go on), the table's count of entries shifted
 * across its end checked after each chunk: a shard copied again three times
 * is copied a fourth under its read lock. The cache must be pinned.
 * held_ms is the longest the lock was held. @return DNSNAP_OK or DNSNAP_ENOMEM */
int dnsnap__cache_refs(dnsnap_cache_t *c, unsigned k, uint32_t now, dnsnap_slots_t *tmp,
		       dnsnap_refs_t *out);

/* Slots copied between two checks of the wraps count by dnsnap__cache_refs()
 * (tests make it small); the refs may name a key twice (an entry moved by a
 * removal meanwhile): the writer keeps one. */
extern size_t dnsnap__copy_chunk;
/* For tests: called between two chunks (no lock held; not in the last,
 * locked, try). */
extern void (*dnsnap__copy_hook)(void *arg);
extern void *dnsnap__copy_hook_arg;

/* How many removed entries wait for the last unpin (for tests). */
size_t dnsnap__cache_deferred(dnsnap_cache_t *c);

/* The key, entry and hit count of a ref (the cache pinned). */
void dnsnap__ref_get(const dnsnap_ref_t *r, dnsnap_refval_t *v);

/* The merge of a publish (snap_write.c, snap_publish.c): what it keeps. */
typedef struct dnsnap__merge_opts {
	uint32_t now;            /* entries live at now are kept ... */
	uint32_t stale_window;   /* ... and those expired less than this long ago */
	uint64_t max_bytes;      /* at most this, in the cache's accounting (0: no bound) */
	int (*exclude)(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		       size_t entry_len);
	void *exclude_arg;
} dnsnap__merge_opts_t;

typedef struct dnsnap__merge_counts {
	uint64_t excluded;       /* left out by the exclusion filter */
	uint64_t over_bound;     /* left out by the bound, the least valuable */
	uint64_t stale;          /* written expired (within the stale window) */
	uint64_t refused;        /* base entries refused by the time rule, left out */
} dnsnap__merge_counts_t;

/* dnsnap_snap_merge() with those options; @p counts may be NULL */
int dnsnap__snap_merge(dnsnap_cache_t *c, dnsnap_snap_t *base, const char *path,
		       const dnsnap__merge_opts_t *o, dnsnap_snap_write_stats_t *stats,
		       dnsnap__merge_counts_t *counts, dnsnap_diag_t *d);

/* What an entry costs the cache, in its own accounting: its chunk (a 4-byte
 * lens word, the entry and the key, to 4 bytes: engine/arena.h) and its
 * slot (8 bytes at the tables' mean load of about 80%). A bounded publish
 * counts in these units. */
static inline uint64_t dnsnap__entry_cost(size_t key_len, size_t entry_len)
{
	return ((4 + (uint64_t)key_len + entry_len + 3) & ~(uint64_t)3) + 10;
}

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
