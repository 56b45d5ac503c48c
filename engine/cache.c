/*
 * cache.c: the in-memory answer cache.
 *
 * Layout. Each entry is one chunk of its shard's arena (arena.h): a 4-byte
 * lens word (the key's and the entry's lengths, the CLOCK bit), then the
 * entry exactly as spec/FORMAT.md lays it out (the same bytes a snapshot
 * stores), then the key. The chunk takes its size to 4 bytes, in slabs of
 * the shard's own, not an allocator size class. The entry's bytes are
 * immutable once inserted but for its Hits field, which is the live hit
 * counter (atomic, in the host's byte order; written in its place in the
 * format whenever an entry leaves the process): no counter of its own.
 *
 * Index. The cache is split into NSHARDS shards by the top bits of the key's
 * hash; each shard is an open-addressing table with linear probing of 8-byte
 * slots: the chunk's ref (arena.h) in the low 32 bits and the low 32 bits of
 * the hash in the top 32, which choose its home slot: a probe rejects almost
 * every other key without touching its entry, and a slot moves (deletion,
 * growth) without the key being hashed again. Deletion shifts the following
 * run back (no tombstones). Tables grow by a quarter when 85% full, to the
 * size the allocator hands out anyway (no slack); their size is any integer,
 * indexed with a multiply-shift.
 *
 * Threads. Each shard has a rwlock, taken exclusively by inserts and
 * removals (the arena is the shard's: allocation and copy happen under it,
 * encoding before) and shared by the long readers (foreach, stats, the
 * snapshot copy). Lookups do not take it: a lookup counts itself in its
 * thread's reader slot (struct rslot: one cache line per thread, that no
 * other thread's lookups write), then checks the shard's writing flag; a
 * writer takes the rwlock, raises the flag, and waits until no slot counts a
 * lookup in its shard (shard_wrlock()). So a lookup writes only its own slot
 * and the entry's atomics (hits, the CLOCK bit), and a writer's cost grows
 * with the number of threads that ever looked up (a scan of their slots),
 * not the lookups' with the number of threads. Every exclusive section over
 * a shard must be taken with shard_wrlock(), never with the rwlock alone.
 *
 * Snapshots. A snapshot writer pins the cache (dnsnap__cache_pin()), copies
 * each shard's slot array without its lock (the pin takes and lets go every
 * shard's lock once, so that no writer that missed the pin is still at
 * work) and reads the entries those slots name afterwards, without locks:
 * no insert waits for it.
 * While pinned, an entry removed, evicted or replaced is not freed but kept
 * on its shard's deferred list, out of the accounted bytes, until the last
 * writer unpins: the cache may then hold more than max_bytes in all; so are
 * the tables and slab arrays a shard replaces.
 *
 * Limits. max_bytes and max_entries are split evenly among the shards; a
 * shard over its share evicts under its lock, so the accounted total never
 * exceeds the limit once an insert returns. Accounted bytes are the chunks
 * of the entries (with their slack; a big chunk's allocation) and the
 * tables and slab arrays, as allocated: free chunks are not counted, as an
 * allocator's free space is not; they are used before a new slab is made,
 * and a shard makes no slab that would take its slabs past a quarter over
 * its share (it evicts instead, and freed chunks merge), unless a snapshot
 * holds what it evicts.
 *
 * Eviction. A CLOCK hand sweeps each shard's slots. Looking ahead a few
 * occupied slots from the hand, an expired entry is evicted first; otherwise
 * the hand clears visited bits until it finds an entry not used since its
 * last pass, and evicts that one.
 *
 * Lower tier. Under the cache, a function table and its object
 * (dnsnap_cache_set_tier(): the mapped snapshot, a shared store): this file
 * knows neither. A lookup takes the tier's rwlock shared, lazily at its first
 * lower-tier probe, and holds it to its end (then takes shard locks inside
 * it: the order is tier, then shard; nothing takes them the other way). The
 * lock prefers writers: a steady stream of lookups cannot starve a swap, and
 * new lookups wait only for the lookups already in the old tier.
 */
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdatomic.h>
#include <string.h>

#include <errno.h>
#include <sys/random.h>
#include <time.h>

#define XXH_INLINE_ALL /* the short-key path inlined: keys are 7 to 511 bytes */
#include <xxhash.h>

#include "alloc.h"
#include "arena.h"
#include "byteorder.h"
#include "cache_internal.h"
#include "dnsnap.h"
#include "expiry.h"
#include "tier.h"

#define NSHARDS_LOG 4
#define NSHARDS (1u << NSHARDS_LOG)
_Static_assert(NSHARDS == DNSNAP_SHARDS, "the snapshot writer's count of shards");
#define MIN_SLOTS 64
#define EXPIRED_LOOKAHEAD 16

/* A shard's index: its size and slots in one allocation, so that a reader
 * holding the pointer has both. */
struct table {
	size_t cap;
	_Atomic uint64_t wraps;  /* entries unslot() moved from the start to the end */
	_Atomic uint64_t slot[]; /* hash32 << 32 | ref; 0 empty */
};

/* Entries removed while a snapshot is pinned, freed at unpin; and the
 * tables replaced meanwhile. */
#define DEFERRED_N 1022
struct deferred {
	struct deferred *next;
	uint32_t n;
	uint32_t ref[DEFERRED_N];
};
struct old_table {
	struct old_table *next;
	struct table *t;
};

struct shard {
	pthread_rwlock_t lock;
	_Atomic int writing;     /* a writer holds lock exclusively: lookups wait */
	struct deferred *deferred; /* under lock; see dnsnap__cache_pin() */
	struct old_table *old_tables; /* ditto */
	/* NULL until the first insert; atomic: the snapshot copy reads it
	 * without the lock (dnsnap__cache_refs()) */
	_Atomic(struct table *) tab;
	size_t count;
	size_t bytes;            /* accounted: chunks in use, table, slab array */
	size_t hand;
	uint64_t inserts, evictions, expired, kept;
	dnsnap_arena_t arena;
} __attribute__((aligned(64)));

#define NREADERS 64              /* reader slots; threads beyond share them */

/* A thread's reader slot: its lookups under way in each shard, and its
 * lookups' counters. Written by its thread only (unless more than NREADERS
 * threads look up: then shared, still correct, as every field is atomic). */
struct rslot {
	_Atomic uint32_t in[NSHARDS];
	_Atomic uint64_t hits, misses, stale_served;
} __attribute__((aligned(64)));

struct dnsnap_cache {
	dnsnap_cache_opts_t o;
	size_t shard_max_bytes;  /* 0: none */
	size_t shard_max_entries;
	/* The lower tier: lookups hold tier_lock shared while they use it, so
	 * once dnsnap_cache_set_tier() returns nobody is in the old one. */
	pthread_rwlock_t tier_lock;
	const dnsnap_tier_ops_t *tier_ops;
	void *tier;
	dnsnap__life_t life;     /* the time rule's policy for the lower tier's entries */
	_Atomic uint64_t time_refused; /* ... and the entries it refused */
	uint64_t seed;           /* of the index hash, from getrandom() */
	/* Snapshot writers at work: read under a shard's lock by whoever removes
	 * an entry from it, changed under pin_lock (dnsnap__cache_pin()). */
	_Atomic unsigned pinned;
	pthread_mutex_t pin_lock;
	struct shard shards[NSHARDS];
	struct rslot readers[NREADERS];
};

/* Each thread's reader slot number, the same in every cache: drawn at its
 * first lookup. Initial-exec (no __tls_get_addr call) in the static library
 * only: a shared object with an initial-exec variable must find room in the
 * static TLS block, which one loaded by dlopen() (Unbound's python module
 * loads libdnsnap.so.1 through ctypes) does not find ("cannot allocate memory
 * in static TLS block"); the PIC objects take the default model. */
#ifdef __PIC__
#define RSLOT_TLS
#else
#define RSLOT_TLS __attribute__((tls_model("initial-exec")))
#endif
static _Atomic unsigned rslot_drawn;
static _Thread_local unsigned rslot_mine RSLOT_TLS = UINT_MAX;

static inline struct rslot *my_rslot(dnsnap_cache_t *c)
{
	unsigned k = rslot_mine;
	if (k == UINT_MAX) {
		/* Draw only while slots are free: the count stops near NREADERS
		 * and never wraps (a wrapped count would hide slots in use from
		 * shard_wrlock()'s scan). Later threads share slot 0..63. */
		unsigned d = atomic_load_explicit(&rslot_drawn, memory_order_seq_cst);
		if (d < NREADERS)
			d = atomic_fetch_add_explicit(&rslot_drawn, 1, memory_order_seq_cst);
		rslot_mine = k = d % NREADERS;
	}
	return &c->readers[k];
}

/* Count a lookup in shard @p s (see Threads, above); returns the counter to
 * give to read_exit(). */
static inline _Atomic uint32_t *read_enter(dnsnap_cache_t *c, struct shard *s)
{
	_Atomic uint32_t *in = &my_rslot(c)->in[s - c->shards];
	for (;;) {
		/* seq_cst both: either the writer sees this count, or this
		 * lookup sees the writer's flag (Dekker) */
		atomic_fetch_add_explicit(in, 1, memory_order_seq_cst);
		if (!atomic_load_explicit(&s->writing, memory_order_seq_cst))
			return in;
		atomic_fetch_sub_explicit(in, 1, memory_order_release);
		/* a writer is in: sleep on its lock rather than spin */
		pthread_rwlock_rdlock(&s->lock);
		pthread_rwlock_unlock(&s->lock);
	}
}

static inline void read_exit(_Atomic uint32_t *in)
{
	atomic_fetch_sub_explicit(in, 1, memory_order_release);
}

/* Take shard @p s exclusively: its rwlock, then wait out the lookups under
 * way in it. */
static void shard_wrlock(dnsnap_cache_t *c, struct shard *s)
{
	pthread_rwlock_wrlock(&s->lock);
	atomic_store_explicit(&s->writing, 1, memory_order_seq_cst);
	/* seq_cst: a slot drawn by a lookup that missed the flag is seen */
	unsigned drawn = atomic_load_explicit(&rslot_drawn, memory_order_seq_cst);
	unsigned n = drawn < NREADERS ? drawn : NREADERS;
	size_t si = (size_t)(s - c->shards);
	for (unsigned k = 0; k < n; k++)
		for (unsigned spin = 0;
		     atomic_load_explicit(&c->readers[k].in[si], memory_order_seq_cst) != 0; spin++)
			if (spin >= 64)
				sched_yield(); /* its thread may be preempted mid-lookup */
}

static void shard_wrunlock(struct shard *s)
{
	atomic_store_explicit(&s->writing, 0, memory_order_release);
	pthread_rwlock_unlock(&s->lock);
}

static inline uint32_t slot_ref(uint64_t v) { return (uint32_t)v; }
static inline uint32_t slot_h32(uint64_t v) { return (uint32_t)(v >> 32); }
static inline uint64_t slot_make(uint64_t h, uint32_t ref) { return (uint64_t)(uint32_t)h << 32 | ref; }
static inline uint64_t slot_get(const struct table *t, size_t i)
{
	return atomic_load_explicit(&((struct table *)t)->slot[i], memory_order_relaxed);
}
/* release: the entry's bytes are written before a reader without the lock
 * (the snapshot copy) can see its ref */
static inline void slot_set(struct table *t, size_t i, uint64_t v)
{
	atomic_store_explicit(&t->slot[i], v, memory_order_release);
}

static inline struct centry *ref_entry(const struct shard *s, uint32_t ref)
{
	return dnsnap__arena_at(&s->arena, ref);
}

/* 64-bit hash of a key: XXH3-64 with the cache's secret seed. Keys come
 * from queries and clients choose the names they ask for, so an unseeded
 * hash would let them aim many keys at one shard's probe run. Each cache
 * draws its seed from getrandom() when it is made: placements differ from
 * cache to cache and from run to run. XXH3_64bits_withSeed and not a custom
 * secret: for keys up to 240 bytes the seed is mixed into the default
 * secret on the fly (no per-cache 192-byte secret to keep hot), and a
 * 64-bit seed is all the randomness needed here. Not a cryptographic MAC:
 * it hides the placement, it does not bound what a patient attacker may
 * learn from timing (probe runs stay short by the 80% load limit). */
static inline uint64_t hash_key(uint64_t seed, const uint8_t *k, size_t n)
{
	return XXH3_64bits_withSeed(k, n, seed);
}

static inline struct shard *shard_of(dnsnap_cache_t *c, uint64_t h)
{
	return &c->shards[h >> (64 - NSHARDS_LOG)];
}
/* Home slot: multiply-shift of the slot's 32 hash bits onto [0, cap). */
static inline size_t home(size_t cap, uint32_t h32)
{
	return (size_t)(((uint64_t)h32 * (uint64_t)cap) >> 32);
}
static inline size_t next_slot(const struct table *t, size_t i)
{
	return i + 1 == t->cap ? 0 : i + 1;
}

/* Find the slot holding key, or SIZE_MAX; its entry in *out. Caller holds
 * the lock, or is a lookup counted in the shard. */
static inline size_t find(const struct shard *s, uint64_t h, const uint8_t *key, size_t klen,
			  struct centry **out)
{
	const struct table *t = s->tab;
	if (t == NULL)
		return SIZE_MAX;
	uint32_t h32 = (uint32_t)h;
	for (size_t i = home(t->cap, h32);; i = next_slot(t, i)) {
		uint64_t v = slot_get(t, i);
		if (v == 0)
			return SIZE_MAX;
		if (slot_h32(v) == h32) {
			struct centry *e = ref_entry(s, slot_ref(v));
			uint32_t l = atomic_load_explicit(&e->lens, memory_order_relaxed);
			if (lens_key(l) == klen && memcmp(ce_key(e, l), key, klen) == 0) {
				*out = e;
				return i;
			}
		}
	}
}

/* Put v at the first free slot of its probe run. Caller ensured room. */
static void place(struct table *t, uint64_t v)
{
	size_t i = home(t->cap, slot_h32(v));
	while (slot_get(t, i) != 0)
		i = next_slot(t, i);
	slot_set(t, i, v);
}

/* Remove slot i, shifting back the entries of its run that may move (the
 * classic linear-probing deletion): no tombstones, probe runs stay short. */
static void unslot(struct shard *s, size_t i)
{
	struct table *t = s->tab;
	size_t j = i;
	for (;;) {
		j = next_slot(t, j);
		uint64_t v = slot_get(t, j);
		if (v == 0)
			break;
		size_t k = home(t->cap, slot_h32(v));
		/* v may move to i if its home k is not cyclically in (i, j] */
		int stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
		if (!stays) {
			if (i > j) /* across the table's end: see dnsnap__cache_refs() */
				atomic_fetch_add_explicit(&t->wraps, 1, memory_order_relaxed);
			slot_set(t, i, v);
			i = j;
		}
	}
	slot_set(t, i, 0);
	s->count--;
}

static inline int pinned(const dnsnap_cache_t *c)
{
	/* acquire: with the last unpin's release, the writer's reads of the
	 * entries it named happen before the free that seeing 0 allows */
	return atomic_load_explicit(&((dnsnap_cache_t *)c)->pinned, memory_order_acquire) != 0;
}

/* A table of at least @p want slots, empty, its size all the allocation
 * holds; NULL on failure. */
static struct table *table_new(size_t want)
{
	size_t bytes = sizeof(struct table) + want * sizeof(uint64_t);
	struct table *t = dnsnap_malloc(bytes);
	if (t == NULL)
		return NULL;
	size_t got = dnsnap_alloc_size(t);
	t->cap = (got - sizeof(struct table)) / sizeof(uint64_t);
	atomic_init(&t->wraps, 0);
	memset((void *)t->slot, 0, t->cap * sizeof(uint64_t));
	return t;
}

static size_t next_cap(const struct table *t)
{
	return t == NULL || t->cap < MIN_SLOTS ? MIN_SLOTS : t->cap + t->cap / 4;
}

/* Grow the table: the slots rehashed from their own 32 hash bits; the old
 * table freed, or kept for the pinned writers. */
static int grow(dnsnap_cache_t *c, struct shard *s)
{
	struct table *old = s->tab;
	struct old_table *keep = NULL;
	if (old != NULL && pinned(c) && (keep = dnsnap_malloc(sizeof *keep)) == NULL)
		return DNSNAP_ENOMEM;
	struct table *t = table_new(next_cap(old));
	if (t == NULL) {
		dnsnap_free(keep);
		return DNSNAP_ENOMEM;
	}
	if (old != NULL)
		for (size_t i = 0; i < old->cap; i++) {
			uint64_t v = slot_get(old, i);
			if (v != 0)
				place(t, v);
		}
	s->bytes -= dnsnap_alloc_size(old);
	s->bytes += dnsnap_alloc_size(t);
	s->tab = t;
	s->hand = 0;
	if (keep != NULL) {
		keep->t = old;
		keep->next = s->old_tables;
		s->old_tables = keep;
	} else {
		dnsnap_free(old);
	}
	return DNSNAP_OK;
}

static inline int expired_at(const struct centry *e, uint32_t now)
{
	return !dnsnap__entry_live(ce_entry(e), now);
}

/* What becomes of an entry about to leave shard @p s (caller holds its lock
 * exclusively): RETIRE_FREE, the caller frees it; RETIRE_DEFER, a snapshot
 * may still read it, retire() keeps it (room is made now); RETIRE_NOMEM,
 * no room to keep it: the caller must not remove it. A writer that pins
 * after this call copies the shard only after the lock is released, when
 * the entry is gone from the table: freeing it then is safe. */
enum { RETIRE_NOMEM, RETIRE_FREE, RETIRE_DEFER };

static int retire_how(const dnsnap_cache_t *c, struct shard *s)
{
	if (!pinned(c))
		return RETIRE_FREE;
	if (s->deferred == NULL || s->deferred->n == DEFERRED_N) {
		struct deferred *b = dnsnap_malloc(sizeof *b);
		if (b == NULL)
			return RETIRE_NOMEM;
		b->next = s->deferred;
		b->n = 0;
		s->deferred = b;
	}
	return RETIRE_DEFER;
}

/* The chunk @p ref leaves the index: off the accounted bytes, and freed or
 * kept for the pinned writers as @p how says. */
static void retire(struct shard *s, uint32_t ref, int how)
{
	s->bytes -= dnsnap__arena_chunk_bytes(&s->arena, ref);
	if (how == RETIRE_DEFER)
		s->deferred->ref[s->deferred->n++] = ref;
	else
		dnsnap__arena_free(&s->arena, ref);
}

/* Evict one entry (CLOCK, expired first): the caller holds the lock
 * exclusively, so no lookup is reading it (a pinned snapshot may: then it
 * is deferred). Returns 0 when empty, or no room to defer it. */
static int evict_one(const dnsnap_cache_t *c, struct shard *s, uint32_t now)
{
	if (s->count == 0)
		return 0;
	int how = retire_how(c, s);
	if (how == RETIRE_NOMEM)
		return 0;
	struct table *t = s->tab;
	size_t i = s->hand % t->cap, seen = 0;
	for (size_t k = i; seen < EXPIRED_LOOKAHEAD && seen < s->count; k = next_slot(t, k)) {
		uint64_t v = slot_get(t, k);
		if (v == 0)
			continue;
		seen++;
		if (expired_at(ref_entry(s, slot_ref(v)), now)) {
			i = k;
			s->expired++;
			goto evict;
		}
	}
	for (;; i = next_slot(t, i)) {
		uint64_t v = slot_get(t, i);
		if (v == 0)
			continue;
		struct centry *e = ref_entry(s, slot_ref(v));
		uint32_t l = atomic_load_explicit(&e->lens, memory_order_relaxed);
		if (l & L_VISITED) {
			atomic_fetch_and_explicit(&e->lens, ~L_VISITED, memory_order_relaxed);
			continue;
		}
		break;
	}
evict:;
	uint32_t ref = slot_ref(slot_get(t, i));
	unslot(s, i);
	s->evictions++;
	s->hand = i; /* the slot now holds the next entry of the run, if any */
	retire(s, ref, how);
	return 1;
}

void dnsnap_cache_opts_default(dnsnap_cache_opts_t *o)
{
	memset(o, 0, sizeof *o);
	o->max_ttl = DNSNAP__MAX_TTL_DEFAULT;
	o->max_neg_ttl = 10800;
	o->stale_window = 86400;
	o->rotate = 1;
	o->our_udp_size = DNSNAP_EDNS_SIZE;
}

void dnsnap_cache_opts_get(const dnsnap_cache_t *c, dnsnap_cache_opts_t *o)
{
	*o = c->o;
}

/* The index hash's seed: 8 bytes from the kernel's CSPRNG. getrandom()
 * blocks only before the pool is first initialised (early boot). */
static int draw_seed(uint64_t *seed)
{
	uint8_t b[8];
	size_t got = 0;
	while (got < sizeof b) {
		ssize_t n = getrandom(b + got, sizeof b - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 && errno == ENOMEM ? DNSNAP_ENOMEM : DNSNAP_EINVAL;
		got += (size_t)n;
	}
	memcpy(seed, b, sizeof b);
	return DNSNAP_OK;
}

int dnsnap_cache_new(const dnsnap_cache_opts_t *o, dnsnap_cache_t **out)
{
	if (out == NULL)
		return DNSNAP_EINVAL;
	dnsnap_cache_t *c = dnsnap_calloc(1, sizeof *c);
	if (c == NULL)
		return DNSNAP_ENOMEM;
	if (o != NULL)
		c->o = *o;
	else
		dnsnap_cache_opts_default(&c->o);
	if (c->o.stale_window > DNSNAP__STALE_WINDOW_MAX)
		c->o.stale_window = DNSNAP__STALE_WINDOW_MAX; /* RFC 8767 section 5 */
	if (c->o.our_udp_size < 512)
		c->o.our_udp_size = DNSNAP_EDNS_SIZE;
	c->life = dnsnap__life_of(&c->o);
	/* The cache's own struct counts too; each shard needs room for a table
	 * and some entries: 64 KiB in all is the smallest budget taken. */
	size_t self = dnsnap_alloc_size(c);
	if (c->o.max_bytes != 0 && c->o.max_bytes < self + 65536) {
		dnsnap_free(c);
		return DNSNAP_EINVAL;
	}
	c->shard_max_bytes = c->o.max_bytes ? (c->o.max_bytes - self) / NSHARDS : 0;
	c->shard_max_entries = (c->o.max_entries + NSHARDS - 1) / NSHARDS;
	int err = draw_seed(&c->seed);
	if (err != DNSNAP_OK) {
		dnsnap_free(c);
		return err;
	}
	for (unsigned i = 0; i < NSHARDS; i++)
		dnsnap__arena_init(&c->shards[i].arena, c->shard_max_bytes);
	pthread_rwlockattr_t ta;
	int terr = pthread_rwlockattr_init(&ta);
	if (terr == 0) {
		/* a swap must not wait for lookups that keep coming */
		pthread_rwlockattr_setkind_np(&ta, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		terr = pthread_rwlock_init(&c->tier_lock, &ta);
		pthread_rwlockattr_destroy(&ta);
	}
	if (terr == 0 && (terr = pthread_mutex_init(&c->pin_lock, NULL)) != 0)
		pthread_rwlock_destroy(&c->tier_lock);
	if (terr != 0) {
		dnsnap_free(c);
		return DNSNAP_ENOMEM;
	}
	for (unsigned i = 0; i < NSHARDS; i++)
		if (pthread_rwlock_init(&c->shards[i].lock, NULL) != 0) {
			while (i--)
				pthread_rwlock_destroy(&c->shards[i].lock);
			pthread_mutex_destroy(&c->pin_lock);
			pthread_rwlock_destroy(&c->tier_lock);
			dnsnap_free(c);
			return DNSNAP_ENOMEM;
		}
	*out = c;
	return DNSNAP_OK;
}

/* Free a shard's deferred entries and tables (under its lock, or at the end). */
static void free_deferred(struct shard *s)
{
	while (s->deferred != NULL) {
		struct deferred *b = s->deferred;
		s->deferred = b->next;
		for (uint32_t j = 0; j < b->n; j++)
			dnsnap__arena_free(&s->arena, b->ref[j]);
		dnsnap_free(b);
	}
	while (s->old_tables != NULL) {
		struct old_table *o = s->old_tables;
		s->old_tables = o->next;
		dnsnap_free(o->t);
		dnsnap_free(o);
	}
	dnsnap__arena_free_retired(&s->arena);
}

void dnsnap_cache_free(dnsnap_cache_t *c)
{
	if (c == NULL)
		return;
	for (unsigned i = 0; i < NSHARDS; i++) {
		struct shard *s = &c->shards[i];
		free_deferred(s);
		dnsnap_free(s->tab); /* the entries go with the arena's slabs */
		dnsnap__arena_free_all(&s->arena);
		pthread_rwlock_destroy(&s->lock);
	}
	pthread_mutex_destroy(&c->pin_lock);
	pthread_rwlock_destroy(&c->tier_lock);
	dnsnap_free(c);
}

/* Apply the TTL policy to a freshly encoded entry (still ours to change). */
static uint32_t policy_ttl(const dnsnap_cache_t *c, uint8_t *entry)
{
	uint32_t inception = ld32le(entry), expiry = ld32le(entry + 4);
	unsigned kind = (entry[12] & DNSNAP_EF_KIND) >> DNSNAP_EF_KIND_SHIFT;
	uint32_t ttl = expiry - inception;
	uint32_t max = (kind == DNSNAP_KIND_NXDOMAIN || kind == DNSNAP_KIND_NODATA)
		       ? c->o.max_neg_ttl : c->o.max_ttl;
	if (max != 0 && ttl > max)
		ttl = max;
	if (ttl < c->o.min_ttl)
		ttl = c->o.min_ttl;
	expiry = inception + ttl;
	st32le(entry + 4, expiry);
	return ttl;
}

/* A shard's accounted bytes: its entries' chunks, its table, its slab array. */
static inline size_t shard_bytes(const struct shard *s)
{
	return s->bytes + s->arena.meta_bytes;
}

static inline int over_limit(const dnsnap_cache_t *c, const struct shard *s)
{
	return (c->shard_max_bytes && shard_bytes(s) > c->shard_max_bytes) ||
	       (c->shard_max_entries && s->count > c->shard_max_entries);
}

/* Room for one more slot: grow the table when 85% full, unless the byte
 * budget cannot take the larger table; then evict instead. */
static int make_room(dnsnap_cache_t *c, struct shard *s, uint32_t now)
{
	while (s->tab == NULL || (s->count + 1) * 20 > s->tab->cap * 17) {
		/* large allocations round up by at most a quarter in jemalloc */
		size_t more = next_cap(s->tab) * 8 / 4 * 5 - dnsnap_alloc_size(s->tab);
		if (s->tab == NULL || !c->shard_max_bytes ||
		    shard_bytes(s) + more <= c->shard_max_bytes)
			return grow(c, s);
		if (!evict_one(c, s, now))
			return DNSNAP_ENOMEM;
	}
	return DNSNAP_OK;
}

/* Whether the shard may make a slab: its slabs stay within a quarter over
 * its budget (freed chunks merge and are used first), but while pinned,
 * when what it evicts is kept for the writers. */
static int may_grow(const dnsnap_cache_t *c, const struct shard *s)
{
	size_t max = c->shard_max_bytes;
	return max == 0 || pinned(c) ||
	       s->arena.slab_bytes + dnsnap__arena_next_slab(&s->arena) <= max + max / 4;
}

/* A chunk for the entry, evicting while no free chunk fits and no slab may be
 * made. @return its ref, or 0 (*err set) */
static uint32_t chunk_for(dnsnap_cache_t *c, struct shard *s, size_t key_len, size_t entry_len,
			  uint32_t now, int *err)
{
	for (;;) {
		int nomem;
		uint32_t ref = dnsnap__arena_alloc(&s->arena, key_len, entry_len, may_grow(c, s),
						   &nomem);
		if (ref != 0)
			return ref;
		if (nomem || !evict_one(c, s, now)) {
			*err = DNSNAP_ENOMEM;
			return 0;
		}
	}
}

/* Index the entry (@p key, @p entry: the bytes to copy into a chunk) under
 * the shard's lock. @p keep_rule: a live entry the keep rule prefers stays
 * (a response's insert). @p now: the entry's Inception. */
static int insert_locked(dnsnap_cache_t *c, struct shard *s, uint64_t h, const uint8_t *key,
			 size_t key_len, const uint8_t *entry, size_t entry_len, uint32_t now,
			 int keep_rule)
{
	struct centry *old = NULL;
	size_t i = find(s, h, key, key_len, &old);
	if (i != SIZE_MAX && keep_rule &&
	    dnsnap__keep_older(ce_entry(old), lens_entry(atomic_load_explicit(&old->lens,
			       memory_order_relaxed)), entry, entry_len)) {
		s->kept++;
		return DNSNAP_OK;
	}
	int how = RETIRE_FREE;
	if (i != SIZE_MAX && (how = retire_how(c, s)) == RETIRE_NOMEM)
		return DNSNAP_ENOMEM;
	int err = DNSNAP_OK;
	uint32_t ref = chunk_for(c, s, key_len, entry_len, now, &err);
	if (ref == 0)
		return err;
	if (s->arena.retired != NULL && !pinned(c)) /* no copy can hold one */
		dnsnap__arena_free_retired(&s->arena);
	struct centry *e = ref_entry(s, ref);
	memcpy(e->entry, entry, entry_len);
	memcpy(e->entry + entry_len, key, key_len);
	/* the entry's Hits (a snapshot's or stream's count) seeds the live one */
	atomic_store_explicit(ce_hits(e), ld32le(entry + 8), memory_order_relaxed);
	if (i != SIZE_MAX && (i = find(s, h, key, key_len, &old)) != SIZE_MAX) {
		/* found again: chunk_for() may have evicted, and moved slots. A
		 * refresh keeps the hit count: it is the name's popularity. */
		atomic_store_explicit(ce_hits(e), atomic_load_explicit(ce_hits(old),
				      memory_order_relaxed), memory_order_relaxed);
		uint32_t oref = slot_ref(slot_get(s->tab, i));
		slot_set(s->tab, i, slot_make(h, ref));
		retire(s, oref, how);
	} else {
		if ((err = make_room(c, s, now)) != DNSNAP_OK) {
			dnsnap__arena_free(&s->arena, ref);
			return err;
		}
		place(s->tab, slot_make(h, ref));
		s->count++;
	}
	s->bytes += dnsnap__arena_chunk_bytes(&s->arena, ref);
	s->inserts++;
	while (over_limit(c, s) && evict_one(c, s, now))
		;
	return DNSNAP_OK;
}

static int insert_entry(dnsnap_cache_t *c, const uint8_t *key, size_t key_len,
			const uint8_t *entry, size_t entry_len, int keep_rule)
{
	if (c == NULL || key == NULL || entry == NULL || key_len == 0 ||
	    key_len > DNSNAP_KEY_MAX || entry_len < DNSNAP_ENTRY_HDR ||
	    entry_len > DNSNAP_ENTRY_MAX)
		return DNSNAP_EINVAL;
	uint64_t h = hash_key(c->seed, key, key_len);
	struct shard *s = shard_of(c, h);
	if (c->shard_max_bytes != 0 &&
	    dnsnap__chunk_size(key_len, entry_len) > c->shard_max_bytes / 4)
		return DNSNAP_ETOOBIG;
	shard_wrlock(c, s);
	int err = insert_locked(c, s, h, key, key_len, entry, entry_len, ld32le(entry), keep_rule);
	shard_wrunlock(s);
	return err;
}

int dnsnap_cache_insert_entry(dnsnap_cache_t *c, const uint8_t *key, size_t key_len,
			      const uint8_t *entry, size_t entry_len)
{
	/* Checked here whatever the caller did: answers trust what the cache
	 * holds (dnsnap__answer_trusted()). */
	dnsnap_key_t k;
	if (c == NULL || key == NULL || entry == NULL)
		return DNSNAP_EINVAL;
	int err = dnsnap_key_decode(key, key_len, &k, NULL);
	if (err == DNSNAP_OK)
		err = dnsnap_entry_validate(entry, entry_len, NULL);
	if (err != DNSNAP_OK)
		return err;
	return insert_entry(c, key, key_len, entry, entry_len, 0);
}

int dnsnap_cache_encode(const dnsnap_cache_t *c, const uint8_t *msg, size_t len, uint32_t now,
			const uint8_t *tag, size_t tag_len, dnsnap_encoded_t *out,
			dnsnap_diag_t *diag)
{
	if (c == NULL || out == NULL)
		return DNSNAP_EINVAL;
	int err = dnsnap_msg_encode(msg, len, now, tag, tag_len, out, diag);
	if (err != DNSNAP_OK) {
		out->entry_len = 0;
		return err;
	}
	out->ttl = policy_ttl(c, out->entry);
	if (out->ttl == 0) {
		if (diag != NULL) {
			diag->offset = 0;
			snprintf(diag->msg, sizeof diag->msg, "TTL 0: nothing to cache");
		}
		return DNSNAP_ENOTCACHE;
	}
	return DNSNAP_OK;
}

int dnsnap_cache_insert_encoded(dnsnap_cache_t *c, const dnsnap_encoded_t *e)
{
	if (c == NULL || e == NULL)
		return DNSNAP_EINVAL;
	return insert_entry(c, e->key, e->key_len, e->entry, e->entry_len, 1);
}

int dnsnap_cache_insert(dnsnap_cache_t *c, const uint8_t *msg, size_t len, uint32_t now,
			const uint8_t *tag, size_t tag_len, dnsnap_encoded_t *scratch,
			dnsnap_diag_t *diag)
{
	int err = dnsnap_cache_encode(c, msg, len, now, tag, tag_len, scratch, diag);
	if (err != DNSNAP_OK)
		return err;
	return dnsnap_cache_insert_encoded(c, scratch);
}

int dnsnap_cache_answer_entry(const dnsnap_cache_t *c, const dnsnap_query_t *q,
			      const uint8_t *entry, size_t entry_len, uint32_t now,
			      uint16_t max_size, uint8_t *out, size_t cap, size_t *out_len)
{
	if (c == NULL)
		return DNSNAP_EINVAL;
	dnsnap_answer_opts_t ao = {
		.now = now,
		.max_size = max_size,
		.our_udp_size = c->o.our_udp_size,
		.min_ttl = c->o.min_ttl,
		.max_ttl = c->o.max_ttl,
	};
	return dnsnap_answer_build(q, entry, entry_len, &ao, out, cap, out_len);
}

/* Answer from the memory entry under @p key: when it is fresh, or stale
 * within @p window and @p allow_stale. Sets *state (DNSNAP__DEAD when there
 * is no entry) and, for the answer built, ao->stale and ao->rotate. @p h is
 * the key's hash. */
static int mem_answer(dnsnap_cache_t *c, const dnsnap_query_t *q, const uint8_t *key,
		      size_t key_len, uint64_t h, dnsnap_answer_opts_t *ao, uint32_t window,
		      int allow_stale, uint8_t *out, size_t cap, size_t *out_len,
		      enum dnsnap__expiry *state)
{
	struct shard *s = shard_of(c, h);
	int err = DNSNAP_ENOTFOUND;
	*state = DNSNAP__DEAD;
	_Atomic uint32_t *in = read_enter(c, s);
	struct centry *e;
	if (find(s, h, key, key_len, &e) != SIZE_MAX) {
		*state = dnsnap__entry_state(ce_entry(e), ao->now, window);
		if (*state == DNSNAP__FRESH || (*state == DNSNAP__STALE && allow_stale)) {
			uint32_t hits = atomic_load_explicit(ce_hits(e), memory_order_relaxed);
			uint32_t l = atomic_load_explicit(&e->lens, memory_order_relaxed);
			ao->rotate = c->o.rotate ? hits : 0;
			ao->stale = *state == DNSNAP__STALE;
			err = dnsnap__answer_trusted(q, ce_entry(e), lens_entry(l), ao, out, cap,
						     out_len);
			if (err == DNSNAP_OK) {
				if (hits != UINT32_MAX)
					atomic_fetch_add_explicit(ce_hits(e), 1, memory_order_relaxed);
				if (!(l & L_VISITED))
					atomic_fetch_or_explicit(&e->lens, L_VISITED,
								 memory_order_relaxed);
			}
		}
	}
	read_exit(in);
	return err;
}

int dnsnap_cache_lookup(dnsnap_cache_t *c, const dnsnap_query_t *q, dnsnap_lookup_t *lk,
			uint8_t *out, size_t cap, size_t *out_len)
{
	if (c == NULL || q == NULL || lk == NULL || out == NULL || out_len == NULL ||
	    q->key_len == 0 || q->key_len > DNSNAP_KEY_MAX)
		return DNSNAP_EINVAL;
	uint32_t window = lk->stale_window < DNSNAP__STALE_WINDOW_MAX ? lk->stale_window
								      : DNSNAP__STALE_WINDOW_MAX;
	dnsnap_answer_opts_t ao = {
		.now = lk->now,
		.max_size = lk->max_size,
		.our_udp_size = c->o.our_udp_size,
		.min_ttl = c->o.min_ttl,
		.max_ttl = c->o.max_ttl,
	};
	/* The usual lookup first: the query's own key, fresh in memory. */
	uint64_t hk[2] = { hash_key(c->seed, q->key, q->key_len), 0 };
	enum dnsnap__expiry mem[2] = { DNSNAP__DEAD, DNSNAP__DEAD };
	enum dnsnap__expiry low[2] = { DNSNAP__DEAD, DNSNAP__DEAD };
	int err = mem_answer(c, q, q->key, q->key_len, hk[0], &ao, window, 0, out, cap, out_len,
			     &mem[0]);
	int tier = DNSNAP_TIER_MEMORY, locked = 0;
	unsigned k = 0;
	if (err != DNSNAP_ENOTFOUND)
		goto done;
	/* the keys to try: the query's, then for CD=1 the CD=0 one */
	uint8_t key0[DNSNAP_KEY_MAX];
	const uint8_t *keys[2] = { q->key, key0 };
	size_t klen[2] = { q->key_len, dnsnap__key_cd0(q, key0) };
	unsigned nkeys = klen[1] != 0 ? 2 : 1;
	if (nkeys == 2)
		hk[1] = hash_key(c->seed, key0, klen[1]);
	/* Pass 0: fresh entries, memory before the lower tier, CD=1 before
	 * CD=0 (the first memory probe is made above). Pass 1 (a stale
	 * window): the stale entries pass 0 saw, in the same order, read again
	 * (they may have been refreshed meanwhile). */
	for (int pass = 0; pass < 2 && err == DNSNAP_ENOTFOUND; pass++) {
		if (pass == 1 && window == 0)
			break;
		for (k = 0; k < nkeys; k++) {
			if ((pass == 0 && k > 0) || (pass == 1 && mem[k] == DNSNAP__STALE)) {
				err = mem_answer(c, q, keys[k], klen[k], hk[k], &ao, window, pass,
						 out, cap, out_len, &mem[k]);
				if (err != DNSNAP_ENOTFOUND) {
					tier = DNSNAP_TIER_MEMORY;
					break;
				}
			}
			if (pass == 0 || low[k] == DNSNAP__STALE) {
				if (!locked) {
					pthread_rwlock_rdlock(&c->tier_lock);
					locked = 1;
				}
				err = dnsnap__tier_answer(c->tier_ops, c->tier, keys[k], klen[k], q,
							  &ao, window, pass, &c->life,
							  &c->time_refused, out, cap, out_len,
							  &low[k]);
				if (err != DNSNAP_ENOTFOUND) {
					tier = DNSNAP_TIER_LOWER;
					break;
				}
			}
		}
	}
	if (locked)
		pthread_rwlock_unlock(&c->tier_lock);
done:;
	struct rslot *r = my_rslot(c); /* this thread's line, not a shared one */
	if (err == DNSNAP_OK) {
		lk->tier = tier;
		lk->stale = ao.stale;
		lk->cd_fallback = k == 1;
		atomic_fetch_add_explicit(&r->hits, 1, memory_order_relaxed);
		if (ao.stale)
			atomic_fetch_add_explicit(&r->stale_served, 1, memory_order_relaxed);
	} else if (err == DNSNAP_ENOTFOUND) {
		atomic_fetch_add_explicit(&r->misses, 1, memory_order_relaxed);
	}
	return err;
}

int dnsnap_cache_answer(dnsnap_cache_t *c, const dnsnap_query_t *q, uint32_t now,
			uint16_t max_size, uint8_t *out, size_t cap, size_t *out_len)
{
	if (c == NULL)
		return DNSNAP_EINVAL;
	dnsnap_lookup_t lk = {
		.now = now,
		.max_size = max_size,
		.stale_window = c->o.serve_stale ? c->o.stale_window : 0,
	};
	return dnsnap_cache_lookup(c, q, &lk, out, cap, out_len);
}

int dnsnap_cache_remove(dnsnap_cache_t *c, const uint8_t *key, size_t key_len)
{
	if (c == NULL || key == NULL)
		return DNSNAP_EINVAL;
	uint64_t h = hash_key(c->seed, key, key_len);
	struct shard *s = shard_of(c, h);
	struct centry *e = NULL;
	shard_wrlock(c, s);
	size_t i = find(s, h, key, key_len, &e);
	int how = i != SIZE_MAX ? retire_how(c, s) : RETIRE_FREE;
	if (i != SIZE_MAX && how != RETIRE_NOMEM) {
		uint32_t ref = slot_ref(slot_get(s->tab, i));
		unslot(s, i);
		retire(s, ref, how);
	}
	shard_wrunlock(s);
	if (how == RETIRE_NOMEM)
		return DNSNAP_ENOMEM;
	return i != SIZE_MAX ? DNSNAP_OK : DNSNAP_ENOTFOUND;
}

/* An entry's bytes as they leave the cache: its Hits field the live count,
 * in the format's byte order, into @p buf (the caller's, Entry_Len bytes).
 * The counter is read once, atomically: lookups may count meanwhile. */
static uint32_t copy_out(struct centry *e, size_t entry_len, uint8_t *buf)
{
	uint32_t hits = atomic_load_explicit(ce_hits(e), memory_order_relaxed);
	memcpy(buf, e->entry, 8);
	st32le(buf + 8, hits);
	memcpy(buf + 12, e->entry + 12, entry_len - 12);
	return hits;
}

int dnsnap_cache_foreach(dnsnap_cache_t *c,
			 int (*fn)(void *arg, const uint8_t *key, size_t key_len,
				   const uint8_t *entry, size_t entry_len, uint32_t hits),
			 void *arg)
{
	if (c == NULL || fn == NULL)
		return DNSNAP_EINVAL;
	uint8_t *buf = dnsnap_malloc(DNSNAP_ENTRY_MAX);
	if (buf == NULL)
		return DNSNAP_ENOMEM;
	int rc = 0;
	for (unsigned k = 0; k < NSHARDS && rc == 0; k++) {
		struct shard *s = &c->shards[k];
		pthread_rwlock_rdlock(&s->lock);
		for (size_t i = 0; s->tab != NULL && i < s->tab->cap && rc == 0; i++) {
			uint64_t v = slot_get(s->tab, i);
			if (v == 0)
				continue;
			struct centry *e = ref_entry(s, slot_ref(v));
			uint32_t l = atomic_load_explicit(&e->lens, memory_order_relaxed);
			uint32_t hits = copy_out(e, lens_entry(l), buf);
			rc = fn(arg, ce_key(e, l), lens_key(l), buf, lens_entry(l), hits);
		}
		pthread_rwlock_unlock(&s->lock);
	}
	dnsnap_free(buf);
	return rc;
}

uint64_t dnsnap_cache_refused_time(const dnsnap_cache_t *c)
{
	return c == NULL ? 0 : atomic_load_explicit(&c->time_refused, memory_order_relaxed);
}

void dnsnap_cache_stats(const dnsnap_cache_t *c, dnsnap_cache_stats_t *out)
{
	memset(out, 0, sizeof *out);
	if (c == NULL)
		return;
	out->bytes = dnsnap_alloc_size((void *)c);
	for (unsigned k = 0; k < NSHARDS; k++) {
		struct shard *s = (struct shard *)&c->shards[k];
		pthread_rwlock_rdlock(&s->lock);
		out->entries += s->count;
		out->bytes += shard_bytes(s);
		out->inserts += s->inserts;
		out->evictions += s->evictions;
		out->expired += s->expired;
		out->kept += s->kept;
		pthread_rwlock_unlock(&s->lock);
	}
	for (unsigned k = 0; k < NREADERS; k++) {
		struct rslot *r = (struct rslot *)&c->readers[k];
		out->hits += atomic_load_explicit(&r->hits, memory_order_relaxed);
		out->misses += atomic_load_explicit(&r->misses, memory_order_relaxed);
		out->stale_served += atomic_load_explicit(&r->stale_served, memory_order_relaxed);
	}
}

void dnsnap_cache_set_tier(dnsnap_cache_t *c, const dnsnap_tier_ops_t *ops, void *tier,
			   void **old)
{
	if (c == NULL) {
		if (old != NULL)
			*old = NULL;
		return;
	}
	pthread_rwlock_wrlock(&c->tier_lock);
	void *prev = c->tier;
	c->tier_ops = ops;
	c->tier = ops != NULL ? tier : NULL;
	pthread_rwlock_unlock(&c->tier_lock);
	if (old != NULL)
		*old = prev;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Pin, then take and let go every shard's lock once: a writer that found
 * the cache unpinned has finished its section (it freed nothing a copy can
 * still see); every later one sees the pin and keeps what it removes. The
 * snapshot's copies (copy_slots()) take no lock after this. */
void dnsnap__cache_pin(dnsnap_cache_t *c)
{
	pthread_mutex_lock(&c->pin_lock);
	atomic_fetch_add_explicit(&c->pinned, 1, memory_order_relaxed);
	pthread_mutex_unlock(&c->pin_lock);
	for (unsigned k = 0; k < NSHARDS; k++) {
		pthread_rwlock_rdlock(&c->shards[k].lock);
		pthread_rwlock_unlock(&c->shards[k].lock);
	}
}

/* The last writer out frees what was deferred, a block of entries per hold
 * of a shard's lock (inserts wait for one block at most). pin_lock is held
 * throughout, so that a writer pinning meanwhile waits: its copies must not
 * name an entry freed here, and the entries deferred after it pinned are
 * its own. */
void dnsnap__cache_unpin(dnsnap_cache_t *c)
{
	pthread_mutex_lock(&c->pin_lock);
	if (atomic_fetch_sub_explicit(&c->pinned, 1, memory_order_release) == 1)
		for (unsigned k = 0; k < NSHARDS; k++) {
			struct shard *s = &c->shards[k];
			for (int more = 1; more;) {
				pthread_rwlock_wrlock(&s->lock);
				struct deferred *b = s->deferred;
				if (b != NULL) {
					s->deferred = b->next;
					for (uint32_t j = 0; j < b->n; j++)
						dnsnap__arena_free(&s->arena, b->ref[j]);
				} else {
					free_deferred(s); /* the tables and slab arrays */
				}
				more = b != NULL;
				pthread_rwlock_unlock(&s->lock);
				dnsnap_free(b);
			}
		}
	pthread_mutex_unlock(&c->pin_lock);
}

/* The key's first 16 bytes as two big-endian words, zero-padded: their order
 * is the keys' memcmp order up to those bytes. */
static void key_prefix16(const uint8_t *k, size_t n, uint64_t pre[2])
{
	uint8_t b[16] = { 0 };
	memcpy(b, k, n < 16 ? n : 16);
	pre[0] = ld64be(b);
	pre[1] = ld64be(b + 8);
}

/*
 * Copy a shard's slot array without its lock, a chunk at a time, from its
 * end down. Meanwhile an insert lands in an empty slot, in the copy or not
 * (either is right); a refresh changes a slot from the old entry to the new
 * (either is right: the old one is kept for the writer); a removal shifts
 * entries of its run to lower slots, so one not yet copied stays below the
 * cursor, and one copied may be copied twice (the writer keeps one). Only a
 * shift across the table's end could carry an entry past the cursor unseen:
 * the table's wraps count, read after each chunk, says so, and the shard is
 * copied again (after COPY_TRIES tries, under the read lock, a chunk a hold).
 * A grow makes a new table and leaves the old one as it was, kept while the
 * cache is pinned: the copy goes on in the old one, which holds every entry
 * that was there before it (those inserted since are not: either is right).
 *
 * The pin's barrier (dnsnap__cache_pin()) has made sure that no writer
 * that missed the pin is at work. A preempted writer delays the barrier,
 * never the other way round. *cap_out: the slots copied (the table's size).
 */
#define COPY_TRIES 4
size_t dnsnap__copy_chunk = 32768; /* slots a chunk */
void (*dnsnap__copy_hook)(void *arg);
void *dnsnap__copy_hook_arg;

static int copy_room(dnsnap_slots_t *tmp, size_t cap)
{
	if (cap <= tmp->cap)
		return DNSNAP_OK;
	size_t ncap = cap + cap / 2;
	uint64_t *ns = dnsnap_malloc(ncap * sizeof *ns);
	if (ns == NULL)
		return DNSNAP_ENOMEM;
	memset(ns, 0, ncap * sizeof *ns); /* faulted in outside any lock */
	dnsnap_free(tmp->slot);
	tmp->slot = ns;
	tmp->cap = ncap;
	return DNSNAP_OK;
}

/* One pass over table @p t into tmp (room made); 1 when an entry may have
 * been carried past the cursor (copy again). The tests' hook runs between
 * chunks, unless @p locked. */
static int copy_pass(const struct table *t, dnsnap_slots_t *tmp, int locked)
{
	struct table *w = (struct table *)t;
	uint64_t wraps = atomic_load_explicit(&w->wraps, memory_order_acquire);
	for (size_t hi = t->cap; hi > 0;) {
		size_t chunk = dnsnap__copy_chunk ? dnsnap__copy_chunk : 1;
		size_t lo = hi > chunk ? hi - chunk : 0;
		for (size_t i = hi; i-- > lo;)
			tmp->slot[i] = atomic_load_explicit(&w->slot[i], memory_order_acquire);
		if (atomic_load_explicit(&w->wraps, memory_order_acquire) != wraps)
			return 1;
		hi = lo;
		if (dnsnap__copy_hook != NULL && hi > 0 && !locked)
			dnsnap__copy_hook(dnsnap__copy_hook_arg);
	}
	return 0;
}

static int copy_slots(struct shard *s, dnsnap_slots_t *tmp, size_t *cap_out, double *held)
{
	for (int try = 0;; try++) {
		/* the last try holds the lock throughout */
		int locked = try + 1 >= COPY_TRIES;
		struct timespec t0;
		if (locked)
			pthread_rwlock_rdlock(&s->lock);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		const struct table *t = atomic_load_explicit(&s->tab, memory_order_acquire);
		size_t cap = t ? t->cap : 0;
		int err = copy_room(tmp, cap), again = 0;
		if (err == DNSNAP_OK && t != NULL)
			again = copy_pass(t, tmp, locked);
		double ms = ms_since(&t0);
		if (locked)
			pthread_rwlock_unlock(&s->lock);
		if (ms > *held && locked)
			*held = ms;
		if (err != DNSNAP_OK)
			return err;
		if (!again || locked) {
			*cap_out = cap;
			return DNSNAP_OK;
		}
	}
}

int dnsnap__cache_refs(dnsnap_cache_t *c, unsigned k, uint32_t now, dnsnap_slots_t *tmp,
		       dnsnap_refs_t *out)
{
	struct shard *s = &c->shards[k];
	size_t cap = 0, count = 0;
	out->n = 0;
	out->skipped = 0;
	out->held_ms = 0;
	out->r = NULL;
	out->cap = 0;
	int err = copy_slots(s, tmp, &cap, &out->held_ms);
	if (err != DNSNAP_OK)
		return err;
	for (size_t i = 0; i < cap; i++)
		count += tmp->slot[i] != 0;
	/* The entries named stay allocated until unpin (the caller pinned). */
	out->r = count ? dnsnap_malloc(count * sizeof *out->r) : NULL;
	out->cap = count;
	if (count && out->r == NULL)
		return DNSNAP_ENOMEM;
	for (size_t i = 0; i < cap; i++) {
		if (tmp->slot[i] == 0)
			continue;
		struct centry *e = ref_entry(s, slot_ref(tmp->slot[i]));
		if (expired_at(e, now)) {
			out->skipped++;
			continue;
		}
		uint32_t l = atomic_load_explicit(&e->lens, memory_order_relaxed);
		dnsnap_ref_t *r = &out->r[out->n++];
		key_prefix16(ce_key(e, l), lens_key(l), r->pre);
		r->e = e;
	}
	return DNSNAP_OK;
}

size_t dnsnap__cache_deferred(dnsnap_cache_t *c)
{
	size_t n = 0;
	for (unsigned k = 0; k < NSHARDS; k++) {
		struct shard *s = &c->shards[k];
		pthread_rwlock_rdlock(&s->lock);
		for (const struct deferred *b = s->deferred; b != NULL; b = b->next)
			n += b->n;
		pthread_rwlock_unlock(&s->lock);
	}
	return n;
}

void dnsnap__ref_get(const dnsnap_ref_t *r, dnsnap_refval_t *v)
{
	struct centry *e = (struct centry *)r->e;
	uint32_t l = atomic_load_explicit(&e->lens, memory_order_relaxed);
	v->key = ce_key(e, l);
	v->key_len = lens_key(l);
	v->entry = ce_entry(e);
	v->entry_len = lens_entry(l);
	v->hits = atomic_load_explicit(ce_hits(e), memory_order_relaxed);
}

unsigned dnsnap__cache_shard_of(const dnsnap_cache_t *c, const uint8_t *key, size_t key_len,
				uint64_t *hash)
{
	uint64_t h = hash_key(c->seed, key, key_len);
	if (hash != NULL)
		*hash = h;
	return (unsigned)(h >> (64 - NSHARDS_LOG));
}
