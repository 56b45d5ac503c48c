/*
 * snap_index.c: the snapshot's hash index (spec/FORMAT.md, "Index record";
 * the reasoning in spec/DECISIONS.md, "A hash index in the snapshot").
 *
 * The writer walks the entries tree it has just committed, from its root, and
 * gives every entry one slot: (leaf page, node index, fingerprint) at the
 * position its seeded hash picks, linear probing after it. A reader hashes the
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

/* ----------------------------------------------------------------- build */

/* Slots are placed a few nodes after their hash is known, their cache line
 * prefetched meanwhile: the table is far larger than the caches, and placing
 * at once would wait for each line in turn. Placement order changes nothing
 * a lookup sees but where collided slots sit. */
#define FILL_AHEAD 16

typedef struct fill {
	uint8_t *slots;
	uint64_t mask, seed, n;
	uint64_t pos[FILL_AHEAD], val[FILL_AHEAD];
	unsigned head;
} fill_t;

static void place(fill_t *f, uint64_t pos, uint64_t v)
{
	while (ld64le(f->slots + 8 * pos) != 0)
		pos = (pos + 1) & f->mask;
	st64le(f->slots + 8 * pos, v);
}

static int fill_one(void *arg, uint64_t pgno, unsigned i, const uint8_t *node, const uint8_t *key,
		    size_t key_len)
{
	fill_t *f = arg;
	(void)node;
	if (pgno > UINT32_MAX || f->n >= f->mask)
		return -1; /* not expressible, or more entries than the tree said */
	uint64_t h = XXH3_64bits_withSeed(key, key_len, f->seed);
	unsigned r = f->head;
	if (f->val[r] != 0)
		place(f, f->pos[r], f->val[r]);
	f->pos[r] = h & f->mask;
	f->val[r] = slot_make(pgno, i, h);
	__builtin_prefetch(f->slots + 8 * f->pos[r], 1);
	f->head = (r + 1) % FILL_AHEAD;
	f->n++;
	return 0;
}

/*
 * The table is written once, all of it, into memory liblmdb has just
 * allocated: at 10M entries 128 MiB, 32768 first-touch faults at 4 KiB.
 * Huge pages where the system gives them on request, and the faults taken
 * in one call: advice only (contents unchanged), ignored where unknown.
 */
static void prefault(uint8_t *p, size_t len)
{
	uintptr_t ps = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = ((uintptr_t)p + ps - 1) & ~(ps - 1), e = ((uintptr_t)p + len) & ~(ps - 1);
	if (e <= a || e - a < ((uintptr_t)4 << 20))
		return;
#ifdef MADV_HUGEPAGE
	madvise((void *)a, e - a, MADV_HUGEPAGE);
#endif
#ifdef MADV_POPULATE_WRITE
	madvise((void *)a, e - a, MADV_POPULATE_WRITE);
#endif
}

/* The entries tree of the environment's last commit, through its map. */
static int entries_tree(const snap_pages_t *pg, tree_t *t)
{
	const uint8_t *m0 = pg->map, *m1 = pg->map + pg->psize;
	const uint8_t *mp = h64(m1 + META_TXNID) > h64(m0 + META_TXNID) ? m1 : m0;
	const uint8_t *db = mp + META_DBS + DB_LEN, *ev;
	size_t el;
	tree_t main = { .depth = h16(db + 6), .entries = h64(db + 32), .root = h64(db + 40) };
	if (tree_get(pg, &main, (const uint8_t *)"entries", 7, F_SUBDATA, &ev, &el) != DNSNAP_OK ||
	    el != DB_LEN)
		return 0;
	t->depth = h16(ev + 6);
	t->entries = h64(ev + 32);
	t->root = h64(ev + 40);
	return t->root == P_INVALID || (t->depth > 0 && t->depth <= MAX_DEPTH);
}

static uint64_t new_seed(void)
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

static int fill_index(const snap_pages_t *pg, const tree_t *t, MDB_txn *txn, MDB_dbi meta_dbi,
		      uint64_t slots, size_t vlen, const char **what);
static int index_txn(MDB_env *env, MDB_txn **txn, MDB_dbi meta_dbi, const snap_pages_t *pgp,
		     const MDB_envinfo *eip, const char **what);

int dnsnap__snap_index_put(MDB_env *env, MDB_txn **txn, MDB_dbi meta_dbi, const char **what)
{
	*what = "mdb_txn_commit";
	int rc = mdb_txn_commit(*txn);
	*txn = NULL;
	MDB_envinfo ei;
	MDB_stat st;
	if (rc == 0)
		*what = "mdb_env_info", rc = mdb_env_info(env, &ei);
	if (rc == 0)
		*what = "mdb_env_stat", rc = mdb_env_stat(env, &st);
	if (rc != 0)
		return rc;
	/* the file as committed, mapped for the walk (liblmdb does not say where
	 * its own map is); populated at once, the pages are all read */
	mdb_filehandle_t fd;
	snap_pages_t pg = { .psize = st.ms_psize, .npages = (uint64_t)ei.me_last_pgno + 1 };
	size_t map_len = (size_t)pg.npages * pg.psize;
	void *map = MAP_FAILED;
	*what = "mdb_env_get_fd";
	if ((rc = mdb_env_get_fd(env, &fd)) != 0)
		return rc;
	*what = "mapping the file back";
	if ((map = mmap(NULL, map_len, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0)) == MAP_FAILED)
		return errno;
	pg.map = map;
	rc = index_txn(env, txn, meta_dbi, &pg, &ei, what);
	munmap(map, map_len);
	return rc;
}

/* The index's transaction: begun, the record put and filled. */
static int index_txn(MDB_env *env, MDB_txn **txn, MDB_dbi meta_dbi, const snap_pages_t *pgp,
		     const MDB_envinfo *eip, const char **what)
{
	const snap_pages_t pg = *pgp;
	const MDB_envinfo ei = *eip;
	int rc = 0;
	tree_t t;
	*what = "reading back the entries tree";
	if (!entries_tree(&pg, &t))
		return MDB_CORRUPTED;
	int indexed = pg.npages - 1 <= UINT32_MAX; /* else no index: slots hold 32-bit pages */
	uint64_t slots = INDEX_MIN_SLOTS;
	while (slots / 4 * 3 < t.entries) /* load factor at most 3/4 */
		slots *= 2;
	size_t vlen = INDEX_HDR + (size_t)slots * 8 + VALUE_CHECK_LEN;
	/* room in the map for the record, and the pages a commit adds */
	size_t need = (size_t)pg.npages * pg.psize + vlen + ((size_t)16 << 20);
	if (indexed && need > ei.me_mapsize)
		*what = "mdb_env_set_mapsize", rc = mdb_env_set_mapsize(env, need);
	if (rc == 0)
		*what = "mdb_txn_begin", rc = mdb_txn_begin(env, NULL, 0, txn);
	if (rc != 0 || !indexed)
		return rc;
	rc = fill_index(&pg, &t, *txn, meta_dbi, slots, vlen, what);
	if (rc != 0) {
		mdb_txn_abort(*txn);
		*txn = NULL;
	}
	return rc;
}

/* Reserve the record in the meta database and fill it in place. */
static int fill_index(const snap_pages_t *pg, const tree_t *t, MDB_txn *txn, MDB_dbi meta_dbi,
		      uint64_t slots, size_t vlen, const char **what)
{
	MDB_val k = { sizeof INDEX_KEY - 1, (void *)INDEX_KEY }, v = { vlen, NULL };
	int rc;
	*what = "mdb_put index";
	if ((rc = mdb_put(txn, meta_dbi, &k, &v, MDB_RESERVE)) != 0)
		return rc;
	uint8_t *o = v.mv_data;
	fill_t *f = dnsnap_calloc(1, sizeof *f);
	*what = "indexing the entries tree";
	if (f == NULL)
		return ENOMEM;
	f->seed = new_seed();
	f->mask = slots - 1;
	f->slots = o + INDEX_HDR;
	memcpy(o, INDEX_MAGIC, 4);
	o[4] = INDEX_VERSION;
	o[5] = INDEX_HASH_XXH3;
	st16le(o + 6, INDEX_HDR);
	st64le(o + 8, f->seed);
	st64le(o + 16, slots);
	st64le(o + 24, t->entries);
	st64le(o + 32, t->root);
	prefault(f->slots, (size_t)slots * 8);
	memset(f->slots, 0, (size_t)slots * 8);
	uint64_t bad;
	rc = walk_leaves(pg, t, fill_one, f, &bad);
	for (unsigned r = 0; rc == 0 && r < FILL_AHEAD; r++)
		if (f->val[r] != 0)
			place(f, f->pos[r], f->val[r]);
	if (rc == 0 && f->n != t->entries)
		rc = -1;
	dnsnap_free(f);
	if (rc != 0)
		return MDB_CORRUPTED; /* our own file does not read back: fail the write */
	size_t ol = vlen - VALUE_CHECK_LEN;
	st32le(o + ol, value_check((const uint8_t *)INDEX_KEY, sizeof INDEX_KEY - 1, o, ol));
	return 0;
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
