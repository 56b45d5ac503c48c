/*
 * snap_index.c: the snapshot's hash index (spec/FORMAT.md, "Index record";
 * the reasoning in spec/DECISIONS.md, "A hash index in the snapshot").
 *
 * The writer (snap_pages.c) gives every entry one slot as it writes it: (leaf
 * page, node index, fingerprint) at the position its seeded hash picks, linear
 * probing after it. A reader hashes the
 * key, reads a slot or a few (one cache line) and goes to the leaf node
 * straight away, with the page checks of every other read (snap_page.h) and
 * the node's key compared byte for byte with the key sought: a damaged slot
 * leads to nothing or to a node of another key, which the compare refuses;
 * so a damaged index can cause misses, never another key's value.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL /* the probe's hash of a short key: no call */
#include <xxhash.h>

#include "alloc.h"
#include "record.h"
#include "snap_index.h"

/* A slot: pgno (bits 0-31, 0 = empty), node index (32-47), fingerprint (48-63). */
static inline uint64_t slot_make(uint64_t pgno, unsigned node, uint64_t h)
{
	return pgno | (uint64_t)node << 32 | (h >> 48) << 48;
}

/* ------------------------------------------------------------------ walk */

/* Every leaf node of a tree, in key order, from its root: the writer's fill
 * and the deep check's. A damaged page stops the walk (-1); fn's non-zero
 * value stops it too. */
typedef int (*leaf_fn)(void *arg, uint64_t pgno, unsigned i, const uint8_t *node,
		       const uint8_t *key, size_t key_len);

typedef struct walk {
	const snap_pages_t *pg;
	unsigned depth;
	uint64_t visits;
	leaf_fn fn;
	void *arg;
	uint64_t bad_pgno;
} walk_t;

static int walk_page(walk_t *w, uint64_t pgno, unsigned level)
{
	int leaf = level + 1 == w->depth;
	const uint8_t *p = ++w->visits > w->pg->npages ? NULL
						      : page_at(w->pg, pgno, leaf ? P_LEAF : P_BRANCH);
	if (p == NULL) {
		w->bad_pgno = pgno;
		return -1;
	}
	for (unsigned i = 0, n = nkeys(p); i < n; i++) {
		const uint8_t *node, *k;
		size_t kl;
		if (!node_at(w->pg, p, i, &node, &k, &kl)) {
			w->bad_pgno = pgno;
			return -1;
		}
		int r = leaf ? w->fn(w->arg, pgno, i, node, k, kl) : walk_page(w, child_of(node),
									     level + 1);
		if (r != 0)
			return r;
	}
	return 0;
}

static int walk_leaves(const snap_pages_t *pg, const tree_t *t, leaf_fn fn, void *arg,
		       uint64_t *bad_pgno)
{
	walk_t w = { .pg = pg, .depth = t->depth, .fn = fn, .arg = arg };
	int r = t->root == P_INVALID ? 0 : walk_page(&w, t->root, 0);
	*bad_pgno = w.bad_pgno;
	return r;
}

/* ----------------------------------------------------------------- seed */

uint64_t dnsnap__index_seed(void)
{
	uint64_t seed;
	if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) == (ssize_t)sizeof seed)
		return seed;
	struct timespec ts; /* no entropy yet (early boot): the placement stays unguessable
			     * enough for a file only its owner reads */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t mix[3] = { (uint64_t)ts.tv_nsec, (uint64_t)ts.tv_sec, (uint64_t)getpid() };
	return XXH3_64bits(mix, sizeof mix);
}

/* ------------------------------------------------------------------ read */

#define IGNORE(at, what)                                                                   \
	do {                                                                               \
		x->slots = NULL;                                                           \
		x->why = (what);                                                           \
		x->why_off = off + (at);                                                   \
		return;                                                                    \
	} while (0)

void dnsnap__index_open(snap_index_t *x, const snap_pages_t *pg, const uint8_t *val,
			size_t len, const tree_t *entries)
{
	memset(x, 0, sizeof *x);
	x->val = val;
	x->len = len;
	size_t off = (size_t)(val - pg->map);
	uint8_t h[INDEX_HDR];
	if (len < INDEX_HDR + VALUE_CHECK_LEN)
		IGNORE(0, "cut short");
	memcpy(h, val, sizeof h); /* checked on a copy, like every value */
	if (memcmp(h, INDEX_MAGIC, 4) != 0)
		IGNORE(0, "not an index record (Magic_Number)");
	if (h[4] != INDEX_VERSION)
		IGNORE(4, "unknown Index_Version");
	if (h[5] != INDEX_HASH_XXH3)
		IGNORE(5, "unknown Hash_Type");
	size_t hs = ld16le(h + 6);
	uint64_t slots = ld64le(h + 16), count = ld64le(h + 24);
	if (hs < INDEX_HDR || hs % 8 != 0 || hs > len - VALUE_CHECK_LEN)
		IGNORE(6, "Header_Size");
	if (slots < INDEX_MIN_SLOTS || (slots & (slots - 1)) != 0 ||
	    slots != (len - VALUE_CHECK_LEN - hs) / 8 || (len - VALUE_CHECK_LEN - hs) % 8 != 0)
		IGNORE(16, "Slot_Count and the record's length disagree");
	if (count != entries->entries || count >= slots)
		IGNORE(24, "Entry_Count is not the entries database's");
	if (ld64le(h + 32) != entries->root)
		IGNORE(32, "Entries_Root is not the entries database's root");
	x->slots = val + hs;
	x->mask = slots - 1;
	x->seed = ld64le(h + 8);
	x->count = count;
}

int dnsnap__index_get(const snap_index_t *x, const snap_pages_t *pg, const uint8_t *key,
		      size_t key_len, const uint8_t **val, size_t *len)
{
	if (x->slots == NULL)
		return INDEX_FALLBACK;
	uint64_t h = XXH3_64bits_withSeed(key, key_len, x->seed), pos = h & x->mask;
	uint64_t fp = h >> 48;
	/* A written probe run holds at most Entry_Count occupied slots: a run
	 * longer than that (or than the table) is damage, and reading it all
	 * would let a hostile file cost a miss the whole table. */
	uint64_t most = x->count < x->mask ? x->count : x->mask;
	for (uint64_t n = 0; n <= most; n++, pos = (pos + 1) & x->mask) {
		uint64_t s = ld64le(x->slots + 8 * pos);
		uint64_t pgno = s & UINT32_MAX;
		if (pgno == 0)
			return DNSNAP_ENOTFOUND;
		if (s >> 48 != fp)
			continue;
		const uint8_t *p = page_at(pg, pgno, P_LEAF), *node, *k;
		unsigned i = (unsigned)(s >> 32 & 0xffff);
		size_t kl;
		if (p == NULL || i >= nkeys(p) || !node_at(pg, p, i, &node, &k, &kl) ||
		    kl != key_len || memcmp(k, key, key_len) != 0)
			continue; /* not this key's node: a collision, or damage */
		return leaf_value(pg, p, node, kl, 0, val, len) ? DNSNAP_OK : DNSNAP_ECHECKSUM;
	}
	return INDEX_FALLBACK; /* no empty slot anywhere: damaged */
}

/* ---------------------------------------------------------------- verify */

typedef struct vidx {
	const snap_index_t *x;
	const snap_pages_t *pg;
	uint8_t *seen;           /* a bit per slot: reached by its entry */
	uint64_t n;
	const uint8_t *lost;     /* the first entry's node the index does not lead to */
} vidx_t;

static int verify_one(void *arg, uint64_t pgno, unsigned i, const uint8_t *node,
		      const uint8_t *key, size_t key_len)
{
	vidx_t *v = arg;
	const snap_index_t *x = v->x;
	uint64_t h = XXH3_64bits_withSeed(key, key_len, x->seed), pos = h & x->mask;
	uint64_t want = slot_make(pgno, i, h);
	uint64_t most = x->count < x->mask ? x->count : x->mask; /* as a lookup probes */
	v->n++;
	for (uint64_t n = 0; pgno <= UINT32_MAX && n <= most; n++, pos = (pos + 1) & x->mask) {
		uint64_t s = ld64le(x->slots + 8 * pos);
		if (s == want && !(v->seen[pos / 8] & 1u << pos % 8)) {
			v->seen[pos / 8] |= (uint8_t)(1u << pos % 8);
			return 0;
		}
		if ((s & UINT32_MAX) == 0)
			break;
	}
	v->lost = node;
	return 1;
}

int dnsnap__index_verify(const snap_index_t *x, const snap_pages_t *pg, const tree_t *entries,
			 const char *path, dnsnap_diag_t *d)
{
	if (x->val == NULL)
		return DNSNAP_OK;
	size_t off = (size_t)(x->val - pg->map);
	if (x->why != NULL)
		return dnsnap__diag(d, DNSNAP_ECHECKSUM, x->why_off, "%s: the index is damaged "
				    "(%s, at 0x%zx): lookups use the B-tree", path, x->why,
				    x->why_off);
	size_t ol = x->len - VALUE_CHECK_LEN;
	if (value_check((const uint8_t *)INDEX_KEY, sizeof INDEX_KEY - 1, x->val, ol) !=
	    ld32le(x->val + ol))
		return dnsnap__diag(d, DNSNAP_ECHECKSUM, off + ol, "%s: the index is damaged "
				    "(Value_Check mismatch, at 0x%zx)", path, off + ol);
	vidx_t v = { .x = x, .pg = pg, .seen = dnsnap_calloc(1, (size_t)(x->mask / 8 + 1)) };
	if (v.seen == NULL)
		return dnsnap__diag(d, DNSNAP_ENOMEM, 0, "%s: out of memory", path);
	uint64_t bad;
	int r = walk_leaves(pg, entries, verify_one, &v, &bad), err = DNSNAP_OK;
	if (r < 0) {
		err = dnsnap__diag(d, DNSNAP_ECHECKSUM, (size_t)(bad * pg->psize), "%s: a damaged "
				   "page (at 0x%llx)", path, (unsigned long long)(bad * pg->psize));
	} else if (r > 0) {
		size_t at = (size_t)(v.lost - pg->map);
		err = dnsnap__diag(d, DNSNAP_ECHECKSUM, at, "%s: the index is damaged: entry %llu "
				   "(at 0x%zx) is not reached through it", path,
				   (unsigned long long)(v.n - 1), at);
	} else {
		for (uint64_t pos = 0; pos <= x->mask; pos++) {
			if ((ld64le(x->slots + 8 * pos) & UINT32_MAX) == 0 ||
			    (v.seen[pos / 8] & 1u << pos % 8))
				continue;
			size_t at = (size_t)(x->slots + 8 * pos - pg->map);
			err = dnsnap__diag(d, DNSNAP_ECHECKSUM, at, "%s: the index is damaged: slot "
					   "%llu (at 0x%zx) leads to no entry", path,
					   (unsigned long long)pos, at);
			break;
		}
	}
	dnsnap_free(v.seen);
	return err;
}
