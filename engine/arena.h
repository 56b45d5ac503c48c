/*
 * arena.h: the memory an in-memory cache shard keeps its entries in
 * (arena.c), instead of one allocator call per entry: slabs of 4 to 64 KiB
 * cut into chunks of 4-byte steps, so an entry takes what it needs to 4
 * bytes, not the allocator's next size class (jemalloc's classes cost 14.7
 * bytes an entry of the Big Pineapple mix). Chunks of 1 KiB and more are an
 * allocation each. Not installed; cache.c's only.
 *
 * A chunk (4-byte aligned):
 *   0   lens   u32, atomic: Key_Len 9 bits | Entry_Len 18 bits << 9 |
 *              VISITED (CLOCK) | PREVFREE (the chunk before it is free) |
 *              slack 2 bits (4-byte units the chunk has past its bytes)
 *   4   entry  Entry_Len bytes; its Hits field (at 8, a u32 aligned to 4) is
 *              the live hit counter, atomic, in the host's byte order
 *   ..  key    Key_Len bytes
 * A free chunk in a slab: size | FREE, then its list's previous and next
 * refs, and its size again in its last 4 bytes (boundary tags: freeing
 * merges a chunk with free neighbours).
 *
 * A ref names a chunk in 32 bits: slab index (18 bits) << 14 | offset in
 * 4-byte units; 0 is none. Index 0 is never used. The cache's index slots
 * hold refs, so a slot is 32 bits of hash and a ref, and moving a slot needs
 * no rehash.
 *
 * Every call but dnsnap__arena_at() needs the shard's lock held exclusively.
 * dnsnap__arena_at() is safe from any thread for a chunk that stays
 * allocated meanwhile: the slab array it reads is replaced, never changed in
 * place for live slabs, and an array replaced is kept (dnsnap__arena_retire)
 * while a reader may hold it.
 */
#ifndef DNSNAP_ARENA_H
#define DNSNAP_ARENA_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "dnsnap.h"

struct centry {
	_Atomic uint32_t lens;
	uint8_t entry[];         /* entry, then key */
};

#define L_KEY_MASK     0x1ffu
#define L_ENTRY_SHIFT  9
#define L_ENTRY_MASK   0x3ffffu
#define L_VISITED      (1u << 27)
#define L_PREVFREE     (1u << 28)
#define L_SLACK_SHIFT  29
#define L_FREE         (1u << 31)
_Static_assert(DNSNAP_KEY_MAX <= L_KEY_MASK && DNSNAP_ENTRY_MAX <= L_ENTRY_MASK,
	       "the lens word holds every key and entry length");

#define ARENA_IDX_BITS 18
#define ARENA_OFF_BITS 14        /* 64 KiB slabs in 4-byte units */
#define ARENA_CLASSES  263       /* free lists: exact to 1020 bytes, then bins */
#define ARENA_BIG      1024      /* chunks this large are an allocation each */

typedef struct dnsnap_arena {
	_Atomic(_Atomic uintptr_t *) slab; /* index -> slab address | size tag */
	uint32_t slab_cap;       /* entries in slab */
	uint32_t slab_used;      /* indices handed out so far (0 is not one) */
	uint32_t idx_free;       /* an index free for reuse, 0 none */
	uint32_t grown;          /* slabs made: their size doubles to 64 KiB */
	size_t slab_max;         /* largest slab (the shard's budget bounds it) */
	size_t slab_bytes;       /* allocated for slabs and big chunks */
	size_t meta_bytes;       /* the slab array */
	uint32_t head[ARENA_CLASSES];
	uint64_t nonempty[(ARENA_CLASSES + 63) / 64];
	void *retired;           /* slab arrays replaced while a reader may hold one */
} dnsnap_arena_t;

static inline size_t lens_key(uint32_t l) { return l & L_KEY_MASK; }
static inline size_t lens_entry(uint32_t l) { return l >> L_ENTRY_SHIFT & L_ENTRY_MASK; }
static inline const uint8_t *ce_entry(const struct centry *e) { return e->entry; }
static inline const uint8_t *ce_key(const struct centry *e, uint32_t l)
{
	return e->entry + lens_entry(l);
}
static inline _Atomic uint32_t *ce_hits(struct centry *e)
{
	return (_Atomic uint32_t *)(void *)(e->entry + 8);
}

/** Bytes of the chunk for a key and an entry (its slack aside). */
static inline size_t dnsnap__chunk_size(size_t key_len, size_t entry_len)
{
	return (4 + entry_len + key_len + 3) & ~(size_t)3;
}

/** The chunk @p ref names. */
static inline struct centry *dnsnap__arena_at(const dnsnap_arena_t *a, uint32_t ref)
{
	_Atomic uintptr_t *t = atomic_load_explicit(&((dnsnap_arena_t *)a)->slab,
						    memory_order_acquire);
	uintptr_t base = atomic_load_explicit(&t[ref >> ARENA_OFF_BITS], memory_order_relaxed);
	return (struct centry *)((base & ~(uintptr_t)7) +
				 ((size_t)(ref & ((1u << ARENA_OFF_BITS) - 1)) << 2));
}

/** Start an empty arena; @p budget: the shard's byte limit (0 none). */
void dnsnap__arena_init(dnsnap_arena_t *a, size_t budget);

/** Free every slab and chunk, and what was retired. */
void dnsnap__arena_free_all(dnsnap_arena_t *a);

/**
 * A chunk for a key of @p key_len and an entry of @p entry_len bytes, its
 * lens word written (VISITED set). From a free chunk if one is large enough;
 * else from a new slab when @p may_grow. @return its ref, or 0: *nomem is 1
 * when the allocator failed, 0 when there was no free chunk to take and
 * @p may_grow was 0 (evict, then ask again)
 */
uint32_t dnsnap__arena_alloc(dnsnap_arena_t *a, size_t key_len, size_t entry_len, int may_grow,
			     int *nomem);

/** Give a chunk back (merged with its free neighbours; a slab left empty
 * goes back to the allocator, unless it is the shard's only one). */
void dnsnap__arena_free(dnsnap_arena_t *a, uint32_t ref);

/** The bytes a chunk counts for (its size with its slack; a big chunk's
 * allocation). */
size_t dnsnap__arena_chunk_bytes(const dnsnap_arena_t *a, uint32_t ref);

/** The size of the next slab dnsnap__arena_alloc() would make. */
size_t dnsnap__arena_next_slab(const dnsnap_arena_t *a);

/** Free the slab arrays kept for readers (none may hold one any more). */
void dnsnap__arena_free_retired(dnsnap_arena_t *a);

#endif
