/*
 * arena.c: slabs and chunks for the in-memory cache's entries (arena.h).
 *
 * Free chunks are kept on lists by size: one list per size to 1020 bytes (4
 * bytes apart), then one per power of two to 64 KiB; a bitmap marks the
 * lists that hold one. A request takes the head of the smallest list whose
 * chunks are large enough (the first such list: no list is walked), and
 * leaves what it does not need as a free chunk, unless that is under 16
 * bytes (the size of a free chunk's fields): then the chunk keeps it as
 * slack, noted in its lens word. A new slab is one free chunk. A chunk given
 * back is merged with a free chunk before it (PREVFREE, and that one's size
 * in its last 4 bytes) and after it, so that free space does not fall apart
 * into pieces too small for any entry.
 *
 * Slab sizes double from 4 KiB to 64 KiB (a shard with a few entries takes a
 * few KiB), and stay at most an eighth of the shard's budget.
 */
#include <string.h>

#include "alloc.h"
#include "arena.h"

#define SLAB_MIN   4096u
#define SLAB_TOP   65536u
#define FREE_MIN   16u
#define TAG_MASK   ((uintptr_t)7)
#define OFF_MASK   ((1u << ARENA_OFF_BITS) - 1)
#define IDX_MAX    ((1u << ARENA_IDX_BITS) - 1)
#define FREE_IDX   ((uintptr_t)7) /* an index free for reuse: next << 3 | 7 */

static inline _Atomic uint32_t *word(uint8_t *p) { return (_Atomic uint32_t *)(void *)p; }
static inline uint32_t get32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}
static inline void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

static inline unsigned class_of(size_t size)
{
	if (size < ARENA_BIG)
		return (unsigned)(size >> 2);
	unsigned lg = 31 - (unsigned)__builtin_clz((unsigned)size); /* 10 to 16 */
	return 256 + ((lg < 16 ? lg : 16) - 10);
}

static inline _Atomic uintptr_t *slabs(const dnsnap_arena_t *a)
{
	return atomic_load_explicit(&((dnsnap_arena_t *)a)->slab, memory_order_relaxed);
}
static inline uintptr_t slab_word(const dnsnap_arena_t *a, uint32_t idx)
{
	return atomic_load_explicit(&slabs(a)[idx], memory_order_relaxed);
}
static inline uint8_t *slab_base(uintptr_t w) { return (uint8_t *)(w & ~TAG_MASK); }
/* A slab's size from its tag (1: 4 KiB ... 5: 64 KiB); 0: a big chunk. */
static inline size_t slab_size(uintptr_t w) { return (w & TAG_MASK) ? SLAB_MIN << ((w & TAG_MASK) - 1) : 0; }

static inline uint8_t *at(const dnsnap_arena_t *a, uint32_t ref)
{
	return slab_base(slab_word(a, ref >> ARENA_OFF_BITS)) + ((size_t)(ref & OFF_MASK) << 2);
}

void dnsnap__arena_init(dnsnap_arena_t *a, size_t budget)
{
	memset(a, 0, sizeof *a);
	a->slab_max = SLAB_TOP;
	while (budget != 0 && a->slab_max > SLAB_MIN && a->slab_max > budget / 8)
		a->slab_max /= 2;
}

/* ------------------------------------------------------------ free lists */

/* A free chunk: 0 size | L_FREE, 4 prev ref, 8 next ref, size - 4 size. */
static void link_free(dnsnap_arena_t *a, uint32_t ref, size_t size)
{
	uint8_t *p = at(a, ref);
	unsigned c = class_of(size);
	atomic_store_explicit(word(p), (uint32_t)size | L_FREE, memory_order_relaxed);
	put32(p + 4, 0);
	put32(p + 8, a->head[c]);
	put32(p + size - 4, (uint32_t)size);
	if (a->head[c] != 0)
		put32(at(a, a->head[c]) + 4, ref);
	a->head[c] = ref;
	a->nonempty[c / 64] |= UINT64_C(1) << (c % 64);
}

static void unlink_free(dnsnap_arena_t *a, uint32_t ref, size_t size)
{
	uint8_t *p = at(a, ref);
	unsigned c = class_of(size);
	uint32_t prev = get32(p + 4), next = get32(p + 8);
	if (prev != 0)
		put32(at(a, prev) + 8, next);
	else
		a->head[c] = next;
	if (next != 0)
		put32(at(a, next) + 4, prev);
	if (a->head[c] == 0)
		a->nonempty[c / 64] &= ~(UINT64_C(1) << (c % 64));
}

/* The first list at or after class @p c that holds a chunk, or -1. */
static int first_nonempty(const dnsnap_arena_t *a, unsigned c)
{
	for (unsigned w = c / 64; w < sizeof a->nonempty / sizeof a->nonempty[0]; w++) {
		uint64_t m = a->nonempty[w];
		if (w == c / 64)
			m &= ~UINT64_C(0) << (c % 64);
		if (m != 0)
			return (int)(w * 64 + (unsigned)__builtin_ctzll(m));
	}
	return -1;
}

/* --------------------------------------------------------------- indices */

/* An index of the slab array for a new slab or big chunk; 0 when none. */
static uint32_t index_take(dnsnap_arena_t *a)
{
	if (a->idx_free != 0) {
		uint32_t i = a->idx_free;
		a->idx_free = (uint32_t)(slab_word(a, i) >> 3);
		return i;
	}
	if (a->slab_used + 1 >= a->slab_cap) {
		/* a new array: readers may hold the old one, which is retired */
		uint32_t ncap = a->slab_cap ? a->slab_cap * 2 : 64;
		if (ncap > IDX_MAX + 1)
			ncap = IDX_MAX + 1;
		if (a->slab_used + 1 >= ncap)
			return 0;
		size_t sz = (size_t)ncap * sizeof(uintptr_t);
		void **blk = dnsnap_malloc(sizeof(void *) + sz);
		if (blk == NULL)
			return 0;
		_Atomic uintptr_t *nt = (_Atomic uintptr_t *)(void *)(blk + 1);
		_Atomic uintptr_t *old = slabs(a);
		for (uint32_t i = 0; i < ncap; i++)
			atomic_init(&nt[i], i < a->slab_cap ? atomic_load_explicit(&old[i],
						memory_order_relaxed) : 0);
		a->meta_bytes -= old ? dnsnap_alloc_size((void **)(void *)old - 1) : 0;
		a->meta_bytes += dnsnap_alloc_size(blk);
		atomic_store_explicit(&a->slab, nt, memory_order_release);
		a->slab_cap = ncap;
		if (old != NULL) {
			void **ob = (void **)(void *)old - 1;
			*ob = a->retired;
			a->retired = ob;
		}
	}
	if (a->slab_used == 0)
		a->slab_used = 1; /* index 0: ref 0 means none */
	return a->slab_used++;
}

static void index_give(dnsnap_arena_t *a, uint32_t i)
{
	atomic_store_explicit(&slabs(a)[i], (uintptr_t)a->idx_free << 3 | FREE_IDX,
			      memory_order_relaxed);
	a->idx_free = i;
}

void dnsnap__arena_free_retired(dnsnap_arena_t *a)
{
	while (a->retired != NULL) {
		void **b = a->retired;
		a->retired = *b;
		dnsnap_free(b);
	}
}

/* ----------------------------------------------------------------- slabs */

size_t dnsnap__arena_next_slab(const dnsnap_arena_t *a)
{
	size_t s = SLAB_MIN << (a->grown < 4 ? a->grown : 4);
	return s < a->slab_max ? s : a->slab_max;
}

static int new_slab(dnsnap_arena_t *a)
{
	size_t size = dnsnap__arena_next_slab(a);
	uint32_t i = index_take(a);
	if (i == 0)
		return 0;
	uint8_t *p = dnsnap_malloc(size);
	if (p == NULL) {
		index_give(a, i);
		return 0;
	}
	unsigned tag = 1;
	while ((SLAB_MIN << (tag - 1)) < size)
		tag++;
	atomic_store_explicit(&slabs(a)[i], (uintptr_t)p | tag, memory_order_relaxed);
	a->slab_bytes += dnsnap_alloc_size(p);
	a->grown++;
	link_free(a, i << ARENA_OFF_BITS, size);
	return 1;
}

static void lens_set(uint8_t *p, size_t key_len, size_t entry_len, size_t slack)
{
	uint32_t l = (uint32_t)key_len | (uint32_t)entry_len << L_ENTRY_SHIFT | L_VISITED |
		     (uint32_t)(slack >> 2) << L_SLACK_SHIFT;
	atomic_store_explicit(word(p), l, memory_order_relaxed);
}

static uint32_t big_alloc(dnsnap_arena_t *a, size_t key_len, size_t entry_len, size_t z,
			  int *nomem)
{
	uint32_t i = index_take(a);
	uint8_t *p = i ? dnsnap_malloc(z) : NULL;
	if (p == NULL) {
		if (i != 0)
			index_give(a, i);
		*nomem = 1;
		return 0;
	}
	atomic_store_explicit(&slabs(a)[i], (uintptr_t)p, memory_order_relaxed);
	a->slab_bytes += dnsnap_alloc_size(p);
	lens_set(p, key_len, entry_len, 0);
	return i << ARENA_OFF_BITS;
}

uint32_t dnsnap__arena_alloc(dnsnap_arena_t *a, size_t key_len, size_t entry_len, int may_grow,
			     int *nomem)
{
	size_t z = dnsnap__chunk_size(key_len, entry_len);
	*nomem = 0;
	if (z >= ARENA_BIG)
		return big_alloc(a, key_len, entry_len, z, nomem);
	int c = first_nonempty(a, class_of(z));
	if (c < 0) {
		if (!may_grow)
			return 0;
		if (!new_slab(a)) {
			*nomem = 1;
			return 0;
		}
		c = first_nonempty(a, class_of(z));
	}
	uint32_t ref = a->head[c];
	uint8_t *p = at(a, ref);
	size_t f = atomic_load_explicit(word(p), memory_order_relaxed) & ~L_FREE;
	uintptr_t w = slab_word(a, ref >> ARENA_OFF_BITS);
	size_t off = (size_t)(ref & OFF_MASK) << 2;
	/* the chunk after, in the slab or not: its predecessor will be in use */
	if (off + f < slab_size(w))
		atomic_fetch_and_explicit(word(p + f), ~L_PREVFREE, memory_order_relaxed);
	if (f - z < FREE_MIN) { /* all of it, the rest as slack */
		unlink_free(a, ref, f);
		lens_set(p, key_len, entry_len, f - z);
		return ref;
	}
	/* the end of it: the free rest keeps its place, and its list while its
	 * size stays in the list's range (a new slab is cut so, chunk by chunk) */
	size_t r = f - z;
	if (class_of(r) == (unsigned)c) {
		atomic_store_explicit(word(p), (uint32_t)r | L_FREE, memory_order_relaxed);
		put32(p + r - 4, (uint32_t)r);
	} else {
		unlink_free(a, ref, f);
		link_free(a, ref, r);
	}
	uint8_t *q = p + r;
	lens_set(q, key_len, entry_len, 0);
	atomic_fetch_or_explicit(word(q), L_PREVFREE, memory_order_relaxed);
	return ref + (uint32_t)(r >> 2);
}

size_t dnsnap__arena_chunk_bytes(const dnsnap_arena_t *a, uint32_t ref)
{
	uint8_t *p = at(a, ref);
	uintptr_t w = slab_word(a, ref >> ARENA_OFF_BITS);
	if (slab_size(w) == 0)
		return dnsnap_alloc_size(p);
	uint32_t l = atomic_load_explicit(word(p), memory_order_relaxed);
	return dnsnap__chunk_size(lens_key(l), lens_entry(l)) + ((l >> L_SLACK_SHIFT & 3) << 2);
}

void dnsnap__arena_free(dnsnap_arena_t *a, uint32_t ref)
{
	uint32_t idx = ref >> ARENA_OFF_BITS;
	uintptr_t w = slab_word(a, idx);
	uint8_t *base = slab_base(w);
	size_t ssize = slab_size(w);
	if (ssize == 0) { /* a big chunk */
		a->slab_bytes -= dnsnap_alloc_size(base);
		dnsnap_free(base);
		index_give(a, idx);
		return;
	}
	size_t off = (size_t)(ref & OFF_MASK) << 2;
	uint32_t l = atomic_load_explicit(word(base + off), memory_order_relaxed);
	size_t size = dnsnap__arena_chunk_bytes(a, ref);
	if (l & L_PREVFREE) { /* merge with the free chunk before */
		size_t ps = get32(base + off - 4);
		off -= ps;
		unlink_free(a, (uint32_t)(idx << ARENA_OFF_BITS | off >> 2), ps);
		size += ps;
	}
	if (off + size < ssize) {
		uint8_t *n = base + off + size;
		uint32_t nl = atomic_load_explicit(word(n), memory_order_relaxed);
		if (nl & L_FREE) { /* merge with the free chunk after */
			size_t ns = nl & ~L_FREE;
			unlink_free(a, (uint32_t)(idx << ARENA_OFF_BITS | (off + size) >> 2), ns);
			size += ns;
		} else {
			atomic_fetch_or_explicit(word(n), L_PREVFREE, memory_order_relaxed);
		}
	}
	if (size == ssize && a->slab_bytes > dnsnap_alloc_size(base)) {
		/* the slab is empty, and not the shard's only one */
		a->slab_bytes -= dnsnap_alloc_size(base);
		dnsnap_free(base);
		index_give(a, idx);
		return;
	}
	link_free(a, (uint32_t)(idx << ARENA_OFF_BITS | off >> 2), size);
}

void dnsnap__arena_free_all(dnsnap_arena_t *a)
{
	_Atomic uintptr_t *t = slabs(a);
	for (uint32_t i = 1; i < a->slab_used; i++) {
		uintptr_t w = atomic_load_explicit(&t[i], memory_order_relaxed);
		if ((w & TAG_MASK) != FREE_IDX)
			dnsnap_free(slab_base(w));
	}
	if (t != NULL)
		dnsnap_free((void **)(void *)t - 1);
	dnsnap__arena_free_retired(a);
	memset(a, 0, sizeof *a);
}
