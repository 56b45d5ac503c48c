/*
 * snap_pages.c: the snapshot file written page by page (dnsnap_snapw_*), as
 * LMDB's own compacting copy (mdb_copy -c) lays a database out: leaves filled
 * in key order and written as they fill, each level of branch pages built
 * from the first keys of the level below, then the `meta` database (the
 * index record, the meta record), the main database (the two database
 * records) and the two meta pages at the front; then synced, the trailer
 * appended (spec/FORMAT.md, "Snapshot", "LMDB's pages, as a reader needs
 * them"). The file is LMDB data format 1: liblmdb reads it as it reads its
 * own (tests/unit/test_snap_lmdb.c compares). Nothing here searches a tree:
 * an entry is one copy into the leaf being filled; leaves are full, not
 * split at half as B-tree inserts leave them, so the file is smaller; the
 * index record is placed from the slots of the entries as they are written,
 * not from a walk of the tree read back.
 *
 * The file is TARGET.tmp.PID beside the target (mode 0600, no lock file),
 * renamed over TARGET once synced with its trailer, the directory synced. A
 * crash at any point leaves PATH as it was; the next write removes
 * temporaries whose writer is dead.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL /* a value check, a digest update and an index hash an entry */
#include <xxhash.h>

#include "../format/internal.h"
#include "alloc.h"
#include "dnsnap.h"
#include "record.h"
#include "snap_index.h"
#include "snap_internal.h"
#include "snap_page.h"

#define PAGE_HDR  16
#define NODE_HDR  8
#define EVEN(n)   (((n) + 1) & ~(size_t)1)

/* The first keys and page numbers of one level's pages, for the level above. */
typedef struct level {
	uint64_t *pgno;
	uint32_t *koff;          /* n + 1 offsets into keys */
	uint8_t *keys;
	size_t n, cap, kcap;
} level_t;

struct dnsnap_snapw {
	int fd;
	int failed;              /* err: the first error, the file no longer written */
	int err;
	size_t psize, nodemax;
	uint64_t next_pgno;      /* the next page number to hand out */
	/* the window of the file being filled: pages [win_pgno, win_pgno + win_pages) */
	uint8_t *win;
	uint64_t win_pgno, win_pages;
	uint64_t fpages;         /* pages the file is allocated to */
	/* the leaf being filled, its page number handed out with its first node
	 * (before the overflow pages of its values, as liblmdb places them) */
	uint8_t *leaf;
	uint64_t leaf_pgno;
	unsigned nkeys;
	size_t upper;
	uint64_t *leaf_h;        /* its entries' index hashes, node by node */
	level_t lv[MAX_DEPTH];
	uint64_t leaves, branches, overflows, overflows_meta;
	unsigned depth;
	uint64_t entries_root;
	/* the index: (hash, pgno << 16 | node) an entry, placed at commit */
	uint64_t *ix;
	size_t nix, capix;
	uint64_t seed;
	XXH3_state_t *xs;
	uint64_t n, bytes;
	size_t prev_len;
	uint8_t prev[DNSNAP_KEY_MAX];
	char *path;              /* as given (messages); points into tmp's allocation */
	char *target;            /* the file it finally names (renamed over); ditto */
	char tmp[];
};

/* ------------------------------------------------------------- errors */

/* A failure writing the temporary of snapshot @p path (errno @p e). The
 * message names @p path, the file the user named; a short write is named by
 * its likely cause. */
static int io_err(dnsnap_snapw_t *w, dnsnap_diag_t *d, const char *what, int e)
{
	w->failed = 1;
	w->err = e == EFBIG ? -EFBIG : e == ENOSPC ? -ENOSPC : e == ENOMEM ? DNSNAP_ENOMEM : -e;
	if (e == EFBIG) {
		struct rlimit rl;
		unsigned long long lim = getrlimit(RLIMIT_FSIZE, &rl) == 0 ? rl.rlim_cur : 0;
		return dnsnap__diag(d, -EFBIG, 0, "%s: cannot write it: file size limit reached "
				    "(%llu bytes)", w->path, lim);
	}
	if (e == ENOSPC)
		return dnsnap__diag(d, -ENOSPC, 0, "%s: cannot write it: no space left on the "
				    "device", w->path);
	if (e == ENOMEM)
		return dnsnap__diag(d, DNSNAP_ENOMEM, 0, "%s: out of memory", w->path);
	return dnsnap__diag(d, -e, 0, "%s: cannot write it: %s: %s", w->path, what, strerror(e));
}

/* ------------------------------------------------------------- output */

/*
 * Pages are built where they lie in the file: a window of it (WIN_BYTES, or
 * what one value needs), allocated (fallocate: a full disk or a file size
 * limit is an error here, never a SIGBUS later) and mapped with its pages
 * faulted in at once, then filled in place. No copy of the pages from a
 * buffer into the page cache (which write() makes, about a third of the
 * time of a write before), no page fault a page. A window let go has its
 * writeback started (no wait), so that the final sync has less to do.
 */
#define WIN_BYTES ((size_t)32 << 20)

static int win_close(dnsnap_snapw_t *w)
{
	if (w->win == NULL)
		return DNSNAP_OK;
	size_t len = (size_t)w->win_pages * w->psize;
	munmap(w->win, len);
	sync_file_range(w->fd, (off_t)(w->win_pgno * w->psize), (off_t)len,
			SYNC_FILE_RANGE_WRITE);
	w->win = NULL;
	return DNSNAP_OK;
}

/* The file allocated to cover pages up to @p end: @return 0 or an errno */
static int file_cover(dnsnap_snapw_t *w, uint64_t from, uint64_t end)
{
	if (end <= w->fpages)
		return 0;
	uint64_t at = from > w->fpages ? from : w->fpages;
	int e = posix_fallocate(w->fd, (off_t)(at * w->psize), (off_t)((end - at) * w->psize));
	if (e == 0)
		w->fpages = end;
	return e;
}

/* A window from the next page on, of at least @p npages pages. */
static int win_open(dnsnap_snapw_t *w, uint64_t npages, dnsnap_diag_t *d)
{
	win_close(w);
	uint64_t want = WIN_BYTES / w->psize;
	if (want < npages)
		want = npages;
	int e = file_cover(w, w->next_pgno, w->next_pgno + want);
	if (e != 0 && want > npages) /* near a limit: only what is needed now */
		want = npages, e = file_cover(w, w->next_pgno, w->next_pgno + want);
	if (e != 0)
		return io_err(w, d, "allocating the file", e);
	size_t len = (size_t)want * w->psize;
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, w->fd,
		       (off_t)(w->next_pgno * w->psize));
	if (m == MAP_FAILED)
		return io_err(w, d, "mapping the file", errno);
	/* every page faulted in for writing in one call (the file system's work
	 * for a page written through a map, once a page, done in bulk); where the
	 * call is unknown the pages fault one by one */
#ifdef MADV_POPULATE_WRITE
	madvise(m, len, MADV_POPULATE_WRITE);
#endif
	w->win = m;
	w->win_pgno = w->next_pgno;
	w->win_pages = want;
	return DNSNAP_OK;
}

/* Room for @p npages pages after the last, their number handed out:
 * @return where they go, NULL on error (said) */
static uint8_t *out_pages(dnsnap_snapw_t *w, size_t npages, uint64_t *pgno, dnsnap_diag_t *d)
{
	if ((w->win == NULL || w->next_pgno + npages > w->win_pgno + w->win_pages) &&
	    win_open(w, npages, d) != DNSNAP_OK)
		return NULL;
	uint8_t *p = w->win + (size_t)(w->next_pgno - w->win_pgno) * w->psize;
	*pgno = w->next_pgno;
	w->next_pgno += npages;
	return p;
}

/* Write @p len bytes at @p off of the file, whole. */
static int write_at(dnsnap_snapw_t *w, const uint8_t *b, size_t len, uint64_t off,
		    dnsnap_diag_t *d)
{
	for (size_t done = 0; done < len;) {
		ssize_t r = pwrite(w->fd, b + done, len - done, (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return io_err(w, d, "write", r < 0 ? errno : ENOSPC);
		done += (size_t)r;
	}
	return DNSNAP_OK;
}

/* A page header: its number, flags, and lower/upper (or its pages). */
static void page_head(uint8_t *p, uint64_t pgno, uint16_t flags, uint16_t lower, uint16_t upper)
{
	memset(p, 0, PAGE_HDR);
	memcpy(p, &pgno, 8);
	memcpy(p + 10, &flags, 2);
	memcpy(p + 12, &lower, 2);
	memcpy(p + 14, &upper, 2);
}

/* --------------------------------------------------------------- levels */

static int level_add(level_t *l, uint64_t pgno, const uint8_t *key, size_t klen)
{
	if (l->n + 1 >= l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 1024;
		uint64_t *np = realloc(l->pgno, nc * sizeof *np);
		if (np == NULL)
			return 0;
		l->pgno = np;
		uint32_t *nk = realloc(l->koff, (nc + 1) * sizeof *nk);
		if (nk == NULL)
			return 0;
		l->koff = nk;
		if (l->cap == 0)
			l->koff[0] = 0;
		l->cap = nc;
	}
	size_t at = l->koff[l->n];
	if (at + klen > l->kcap) {
		size_t nc = l->kcap ? l->kcap * 2 : 65536;
		while (nc < at + klen)
			nc *= 2;
		uint8_t *nk = realloc(l->keys, nc);
		if (nk == NULL)
			return 0;
		l->keys = nk;
		l->kcap = nc;
	}
	memcpy(l->keys + at, key, klen);
	l->pgno[l->n] = pgno;
	l->koff[++l->n] = (uint32_t)(at + klen);
	return 1;
}

static void level_free(level_t *l)
{
	free(l->pgno);
	free(l->koff);
	free(l->keys);
	memset(l, 0, sizeof *l);
}

/* ---------------------------------------------------------------- leaves */

static void leaf_start(dnsnap_snapw_t *w)
{
	w->nkeys = 0;
	w->upper = w->psize;
}

/* Write the leaf being filled: its number handed out, its first key to the
 * level above, its entries' slots to the index. */
static int leaf_flush(dnsnap_snapw_t *w, dnsnap_diag_t *d)
{
	if (w->nkeys == 0)
		return DNSNAP_OK;
	uint64_t pgno = w->leaf_pgno;
	size_t lower = PAGE_HDR + 2 * w->nkeys;
	page_head(w->leaf, pgno, P_LEAF, (uint16_t)lower, (uint16_t)w->upper);
	memset(w->leaf + lower, 0, w->upper - lower); /* nothing of an earlier leaf */
	if (w->win != NULL && pgno >= w->win_pgno && pgno < w->win_pgno + w->win_pages)
		memcpy(w->win + (size_t)(pgno - w->win_pgno) * w->psize, w->leaf, w->psize);
	else if (write_at(w, w->leaf, w->psize, pgno * w->psize, d) != DNSNAP_OK)
		return w->err; /* a window left behind for an overflow value */
	uint16_t n0;
	memcpy(&n0, w->leaf + PAGE_HDR, 2);
	uint16_t k0;
	memcpy(&k0, w->leaf + n0 + 6, 2);
	if (!level_add(&w->lv[0], pgno, w->leaf + n0 + NODE_HDR, k0))
		return io_err(w, d, "the tree", ENOMEM);
	if (w->nix + w->nkeys > w->capix) {
		size_t nc = w->capix ? w->capix * 2 : 65536;
		uint64_t *ni = realloc(w->ix, nc * 2 * sizeof *ni);
		if (ni == NULL)
			return io_err(w, d, "the index", ENOMEM);
		w->ix = ni;
		w->capix = nc;
	}
	for (unsigned i = 0; i < w->nkeys; i++) {
		w->ix[2 * w->nix] = w->leaf_h[i];
		w->ix[2 * w->nix + 1] = pgno << 16 | i;
		w->nix++;
	}
	w->leaves++;
	leaf_start(w);
	return DNSNAP_OK;
}

/* A node for a key and a value of @p vlen bytes in the leaf being filled
 * (the leaf written first when it is full): @return where the value goes
 * (in the leaf, or on overflow pages of its own), NULL on error */
static uint8_t *leaf_put(dnsnap_snapw_t *w, const uint8_t *key, size_t klen, size_t vlen,
			 dnsnap_diag_t *d)
{
	int big = NODE_HDR + klen + vlen > w->nodemax;
	size_t nsize = EVEN(NODE_HDR + klen + (big ? 8 : vlen));
	if (w->upper - (PAGE_HDR + 2 * w->nkeys) < nsize + 2 && leaf_flush(w, d) != DNSNAP_OK)
		return NULL;
	if (w->nkeys == 0 && out_pages(w, 1, &w->leaf_pgno, d) == NULL)
		return NULL;
	uint8_t *dst;
	uint64_t ovpg = 0;
	if (big) { /* its own pages, written before the leaf that points to them */
		size_t np = (PAGE_HDR - 1 + vlen) / w->psize + 1;
		uint8_t *ov = out_pages(w, np, &ovpg, d);
		if (ov == NULL)
			return NULL;
		uint32_t pages = (uint32_t)np;
		page_head(ov, ovpg, P_OVERFLOW, 0, 0);
		memcpy(ov + 12, &pages, 4);
		memset(ov + PAGE_HDR + vlen, 0, np * w->psize - PAGE_HDR - vlen);
		w->overflows += np;
		dst = ov + PAGE_HDR;
	}
	w->upper -= nsize;
	uint8_t *node = w->leaf + w->upper;
	uint16_t at = (uint16_t)w->upper, flags = big ? F_BIGDATA : 0, ks = (uint16_t)klen;
	uint32_t dsize = (uint32_t)vlen;
	memcpy(w->leaf + PAGE_HDR + 2 * w->nkeys, &at, 2);
	memcpy(node, &dsize, 4);
	memcpy(node + 4, &flags, 2);
	memcpy(node + 6, &ks, 2);
	memcpy(node + NODE_HDR, key, klen);
	if (big)
		memcpy(node + NODE_HDR + klen, &ovpg, 8);
	else
		dst = node + NODE_HDR + klen;
	w->nkeys++;
	return dst;
}

/* -------------------------------------------------------------- branches */

/* Build the branch levels over level 0 (the leaves), up to the root. */
static int branches(dnsnap_snapw_t *w, dnsnap_diag_t *d)
{
	unsigned lvl = 0;
	while (w->lv[lvl].n > 1) {
		if (lvl + 2 >= MAX_DEPTH)
			return io_err(w, d, "the tree", E2BIG);
		level_t *l = &w->lv[lvl], *up = &w->lv[lvl + 1];
		size_t i = 0;
		while (i < l->n) {
			/* as many children as fit (node 0's key is empty), but never
			 * one alone on the last page: it takes one from this page */
			size_t room = w->psize - PAGE_HDR, j = i, used = 0;
			while (j < l->n) {
				size_t ks = j == i ? 0 : l->koff[j + 1] - l->koff[j];
				size_t need = EVEN(NODE_HDR + ks) + 2;
				if (used + need > room)
					break;
				used += need;
				j++;
			}
			if (j + 1 == l->n && j - i > 2)
				j--;
			uint64_t pgno;
			uint8_t *p = out_pages(w, 1, &pgno, d);
			if (p == NULL)
				return w->err;
			size_t upper = w->psize;
			for (size_t k = i; k < j; k++) {
				size_t ks = k == i ? 0 : l->koff[k + 1] - l->koff[k];
				upper -= EVEN(NODE_HDR + ks);
				uint8_t *node = p + upper;
				uint64_t child = l->pgno[k];
				uint32_t lo = (uint32_t)child;
				uint16_t hi = (uint16_t)(child >> 32), kl = (uint16_t)ks, o = (uint16_t)upper;
				memcpy(node, &lo, 4);
				memcpy(node + 4, &hi, 2);
				memcpy(node + 6, &kl, 2);
				memcpy(node + NODE_HDR, l->keys + l->koff[k], ks);
				memcpy(p + PAGE_HDR + 2 * (k - i), &o, 2);
			}
			page_head(p, pgno, P_BRANCH, (uint16_t)(PAGE_HDR + 2 * (j - i)),
				  (uint16_t)upper);
			memset(p + PAGE_HDR + 2 * (j - i), 0, upper - PAGE_HDR - 2 * (j - i));
			if (!level_add(up, pgno, l->keys + l->koff[i], l->koff[i + 1] - l->koff[i]))
				return io_err(w, d, "the tree", ENOMEM);
			w->branches++;
			i = j;
		}
		lvl++;
	}
	w->depth = w->lv[0].n == 0 ? 0 : lvl + 1;
	w->entries_root = w->lv[0].n == 0 ? P_INVALID : w->lv[lvl].pgno[0];
	return DNSNAP_OK;
}

/* ----------------------------------------------------------------- index */

/* The index record's value (spec/FORMAT.md, "Index record"), placed from the
 * entries' (hash, page, node) in write order, each slot's line prefetched a
 * few entries before it is placed. In @p v (INDEX_HDR + 8 * slots + 4
 * bytes, zeroed). */
#define FILL_AHEAD 16
static void index_fill(const dnsnap_snapw_t *w, uint8_t *v, uint64_t slots)
{
	uint8_t *sl = v + INDEX_HDR;
	uint64_t mask = slots - 1;
	memcpy(v, INDEX_MAGIC, 4);
	v[4] = INDEX_VERSION;
	v[5] = INDEX_HASH_XXH3;
	st16le(v + 6, INDEX_HDR);
	st64le(v + 8, w->seed);
	st64le(v + 16, slots);
	st64le(v + 24, w->n);
	st64le(v + 32, w->entries_root);
	for (size_t i = 0; i < w->nix; i++) {
		if (i + FILL_AHEAD < w->nix)
			__builtin_prefetch(sl + 8 * (w->ix[2 * (i + FILL_AHEAD)] & mask), 1);
		uint64_t h = w->ix[2 * i], pn = w->ix[2 * i + 1];
		uint64_t pos = h & mask;
		while (ld64le(sl + 8 * pos) != 0)
			pos = (pos + 1) & mask;
		st64le(sl + 8 * pos, (pn >> 16) | (pn & 0xffff) << 32 | (h >> 48) << 48);
	}
	size_t ol = INDEX_HDR + (size_t)slots * 8;
	st32le(v + ol, value_check((const uint8_t *)INDEX_KEY, sizeof INDEX_KEY - 1, v, ol));
}

/* The index record on overflow pages of its own, filled in the file (a
 * window of its own: 128 MiB at 10M entries): *pgno its first page, *vlen its
 * value's length; no index (*pgno 0) when page numbers pass 32 bits. */
static int index_write(dnsnap_snapw_t *w, uint64_t *pgno, size_t *vlen, dnsnap_diag_t *d)
{
	*pgno = 0;
	if (w->next_pgno > UINT32_MAX)
		return DNSNAP_OK; /* slots hold 32-bit pages: the B-tree serves */
	uint64_t slots = INDEX_MIN_SLOTS;
	while (slots / 4 * 3 < w->n) /* load factor at most 3/4 */
		slots *= 2;
	size_t vl = INDEX_HDR + (size_t)slots * 8 + VALUE_CHECK_LEN;
	size_t np = (PAGE_HDR - 1 + vl) / w->psize + 1;
	/* a window of its own, fresh (allocated space reads as zeros) */
	if (win_close(w) != DNSNAP_OK || win_open(w, np, d) != DNSNAP_OK)
		return w->err;
	uint8_t *m = out_pages(w, np, pgno, d);
	w->overflows_meta = np;
	uint32_t pages = (uint32_t)np;
	page_head(m, *pgno, P_OVERFLOW, 0, 0);
	memcpy(m + 12, &pages, 4);
	index_fill(w, m + PAGE_HDR, slots);
	memset(m + PAGE_HDR + vl, 0, np * w->psize - PAGE_HDR - vl);
	*vlen = vl;
	return win_close(w);
}

/* -------------------------------------------------- the rest of the file */

/* A database record (MDB_db): pad, flags, depth, branch, leaf and overflow
 * pages, entries, root; LMDB's fields in the host's order. */
static void db_record(uint8_t *r, uint16_t flags, uint16_t depth, uint64_t branch,
		      uint64_t leaf, uint64_t overflow, uint64_t entries, uint64_t root)
{
	memset(r, 0, DB_LEN);
	memcpy(r + 4, &flags, 2);
	memcpy(r + 6, &depth, 2);
	memcpy(r + 8, &branch, 8);
	memcpy(r + 16, &leaf, 8);
	memcpy(r + 24, &overflow, 8);
	memcpy(r + 32, &entries, 8);
	memcpy(r + 40, &root, 8);
}

/* A leaf page of two nodes, in key order: the main database's (two database
 * records) or the meta database's (the index, big, and the meta record). */
static int small_leaf(dnsnap_snapw_t *w, const char *const key[2], const uint8_t *const val[2],
		      const size_t vlen[2], const uint16_t flags[2], uint64_t *pgno,
		      dnsnap_diag_t *d)
{
	uint8_t *p = out_pages(w, 1, pgno, d);
	if (p == NULL)
		return w->err;
	memset(p, 0, w->psize);
	size_t upper = w->psize;
	unsigned n = 0;
	for (unsigned i = 0; i < 2; i++) {
		if (key[i] == NULL)
			continue;
		size_t kl = strlen(key[i]), dl = flags[i] & F_BIGDATA ? 8 : vlen[i];
		upper -= EVEN(NODE_HDR + kl + dl);
		uint8_t *node = p + upper;
		uint32_t ds = (uint32_t)vlen[i];
		uint16_t ks = (uint16_t)kl, o = (uint16_t)upper;
		memcpy(node, &ds, 4);
		memcpy(node + 4, &flags[i], 2);
		memcpy(node + 6, &ks, 2);
		memcpy(node + NODE_HDR, key[i], kl);
		memcpy(node + NODE_HDR + kl, val[i], dl);
		memcpy(p + PAGE_HDR + 2 * n++, &o, 2);
	}
	page_head(p, *pgno, P_LEAF, (uint16_t)(PAGE_HDR + 2 * n), (uint16_t)upper);
	return DNSNAP_OK;
}

/* The two meta pages at the front: page 0 the state written (txnid 1), page
 * 1 the same at txnid 0, as a fresh environment's other page. */
static int meta_pages(dnsnap_snapw_t *w, uint64_t main_root, dnsnap_diag_t *d)
{
	uint8_t *p = dnsnap_calloc(2, w->psize);
	if (p == NULL)
		return io_err(w, d, "the meta pages", ENOMEM);
	uint64_t last = w->next_pgno - 1, mapsize = (w->next_pgno * w->psize + 0xfffff) & ~0xfffffull;
	uint32_t magic = LMDB_MAGIC, version = 1, psize = (uint32_t)w->psize;
	for (uint64_t k = 0; k < 2; k++) {
		uint8_t *m = p + k * w->psize;
		uint64_t txnid = 1 - k;
		page_head(m, k, P_META, 0, 0);
		memcpy(m + 16, &magic, 4);
		memcpy(m + 20, &version, 4);
		memcpy(m + 32, &mapsize, 8);
		/* the free pages (none), as liblmdb's own: its page size in pad,
		 * MDB_INTEGERKEY and the environment's MDB_NOSUBDIR in flags */
		db_record(m + META_DBS, 0x4008, 0, 0, 0, 0, 0, P_INVALID);
		memcpy(m + META_DBS, &psize, 4);
		db_record(m + META_DBS + DB_LEN, 0, 1, 0, 1, 0, 2, main_root);
		memcpy(m + META_LAST_PG, &last, 8);
		memcpy(m + META_TXNID, &txnid, 8);
	}
	int err = write_at(w, p, 2 * w->psize, 0, d);
	dnsnap_free(p);
	return err;
}

/* --------------------------------------------------------------- files */

/* Remove PATH.tmp.PID files whose writer no longer runs (killed mid-write). */
static void remove_stale(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
	if (slash == path)
		snprintf(dir, sizeof dir, "/");
	DIR *d = opendir(dir);
	if (d == NULL)
		return;
	size_t bl = strlen(base);
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, base, bl) != 0 || strncmp(de->d_name + bl, ".tmp.", 5) != 0)
			continue;
		char *end;
		long pid = strtol(de->d_name + bl + 5, &end, 10);
		if (*end != 0 || pid <= 0 || (kill((pid_t)pid, 0) != 0 && errno == ESRCH)) {
			char f[8192];
			snprintf(f, sizeof f, "%s/%s", dir, de->d_name);
			unlink(f);
		}
	}
	closedir(d);
}

/* The meta record (spec/FORMAT.md, "Snapshot meta record"), then its
 * Value_Check (key "meta"), like every value. */
static size_t meta_record(uint8_t *m, uint64_t count, uint64_t digest)
{
	char writer[128], host[64] = "?";
	gethostname(host, sizeof host - 1);
	int wl = snprintf(writer, sizeof writer, "dnsnap %s on %s", DNSNAP_VERSION, host);
	if (wl < 0 || wl > 127)
		wl = 127;
	memcpy(m, SNAP_MAGIC, 4);
	st16le(m + 4, DNSNAP_SNAP_MAJOR);
	st16le(m + 6, DNSNAP_SNAP_MINOR);
	st16le(m + 10, 0);                         /* Flags */
	st64le(m + 12, (uint64_t)time(NULL));      /* Created_At */
	st64le(m + 20, count);
	m[28] = 1;                                /* Digest_Type: XXH3-64 */
	m[29] = 8;
	st64le(m + 30, digest);
	m[38] = (uint8_t)wl;
	memcpy(m + 39, writer, (size_t)wl);
	st16le(m + 8, (uint16_t)(39 + wl));        /* Header_Size */
	st32le(m + 39 + wl, value_check((const uint8_t *)META_KEY, 4, m, 39 + (size_t)wl));
	return 39 + (size_t)wl + VALUE_CHECK_LEN;
}

/* Append the trailer: Magic, 0, Data_Len, XXH3-64 of bytes [0, Data_Len).
 * The file is read in chunks, not mapped: the writer's memory stays small
 * however large the snapshot (a map would count the whole file as resident). */
static int write_trailer(int fd, dnsnap_diag_t *d, const char *path)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return dnsnap__diag(d, -errno, 0, "%s: %s", path, strerror(errno));
	uint64_t len = (uint64_t)st.st_size;
	size_t cap = 1u << 20;
	uint8_t *buf = dnsnap_malloc(cap);
	XXH3_state_t *xs = XXH3_createState();
	int err = DNSNAP_OK;
	if (buf == NULL || xs == NULL)
		err = dnsnap__diag(d, DNSNAP_ENOMEM, 0, "%s: out of memory", path);
	else
		XXH3_64bits_reset(xs);
	for (uint64_t off = 0; err == DNSNAP_OK && off < len;) {
		size_t want = len - off < cap ? (size_t)(len - off) : cap;
		ssize_t got = pread(fd, buf, want, (off_t)off);
		if (got <= 0)
			err = dnsnap__diag(d, got < 0 ? -errno : -EIO, 0, "%s: reading back: %s",
					   path, strerror(got < 0 ? errno : EIO));
		else {
			XXH3_64bits_update(xs, buf, (size_t)got);
			off += (uint64_t)got;
		}
	}
	uint64_t h = err == DNSNAP_OK ? XXH3_64bits_digest(xs) : 0;
	XXH3_freeState(xs);
	dnsnap_free(buf);
	if (err != DNSNAP_OK)
		return err;
	uint8_t t[TRAILER_LEN];
	memcpy(t, TRAILER_MAGIC, 4);
	st32le(t + 4, 0);
	st64le(t + 8, len);
	st64le(t + 16, h);
	if (pwrite(fd, t, sizeof t, (off_t)len) != (ssize_t)sizeof t)
		return dnsnap__diag(d, errno ? -errno : -EIO, 0, "%s: writing the trailer: %s",
				    path, strerror(errno ? errno : EIO));
	if (fsync(fd) != 0)
		return dnsnap__diag(d, -errno, 0, "%s: fsync: %s", path, strerror(errno));
	return DNSNAP_OK;
}

static void sync_dir(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1,
		 slash ? path : ".");
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

/* Give the temporary the mode, owner and group of the file it replaces (a
 * resolver running as another user must still read it). A chown the process
 * may not make (EPERM: not root) is skipped, the group alone tried. A new
 * file keeps the temporary's 0600. */
static int keep_access(int fd, const dnsnap_snapw_t *w, dnsnap_diag_t *d)
{
	struct stat st;
	if (stat(w->target, &st) != 0 || !S_ISREG(st.st_mode))
		return DNSNAP_OK;
	if (fchown(fd, st.st_uid, st.st_gid) != 0) {
		if (errno != EPERM)
			return dnsnap__diag(d, -errno, 0, "%s: chown: %s", w->path,
					    strerror(errno));
		if (fchown(fd, (uid_t)-1, st.st_gid) != 0 && errno != EPERM)
			return dnsnap__diag(d, -errno, 0, "%s: chown: %s", w->path,
					    strerror(errno));
	}
	if (fchmod(fd, st.st_mode & 07777) != 0)
		return dnsnap__diag(d, -errno, 0, "%s: chmod: %s", w->path, strerror(errno));
	return DNSNAP_OK;
}

/* ------------------------------------------------------------ the writer */

int dnsnap_snapw_begin(const char *path, dnsnap_snapw_t **out, dnsnap_diag_t *d)
{
	if (path == NULL || out == NULL)
		return dnsnap__diag(d, DNSNAP_EINVAL, 0, "invalid argument");
	size_t pl = strlen(path);
	char target[4096];
	int e = pl > 4000 ? -ENAMETOOLONG : dnsnap_path_target(path, target, 4000);
	char refusal[8192];
	if (e != 0)
		return dnsnap__diag(d, e == -ENAMETOOLONG ? DNSNAP_EINVAL : e, 0, "%s: %s", path,
				    dnsnap_path_strerror(path, e, refusal, sizeof refusal));
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return dnsnap__diag(d, DNSNAP_EINVAL, 0, "%s: not a regular file: a snapshot is "
				    "written beside its path and renamed over it", path);
	size_t gl = strlen(target), psize = (size_t)sysconf(_SC_PAGESIZE);
	dnsnap_snapw_t *w = dnsnap_calloc(1, sizeof *w + pl + 2 * gl + 42);
	if (w == NULL || (w->xs = XXH3_createState()) == NULL ||
	    (w->leaf = dnsnap_malloc(psize)) == NULL ||
	    (w->leaf_h = dnsnap_malloc(psize / 8 * sizeof *w->leaf_h)) == NULL) {
		if (w != NULL) {
			XXH3_freeState(w->xs);
			dnsnap_free(w->leaf);
		}
		dnsnap_free(w);
		return dnsnap__diag(d, DNSNAP_ENOMEM, 0, "%s: out of memory", path);
	}
	XXH3_64bits_reset(w->xs);
	int tl = snprintf(w->tmp, gl + 40, "%s.tmp.%ld", target, (long)getpid());
	w->path = w->tmp + tl + 1;
	memcpy(w->path, path, pl + 1);
	w->target = w->path + pl + 1;
	memcpy(w->target, target, gl + 1);
	remove_stale(target);
	unlink(w->tmp);
	w->psize = psize;
	w->nodemax = (((psize - PAGE_HDR) / 2) & ~(size_t)1) - 2; /* LMDB's, two nodes a page */
	w->next_pgno = 2;                                         /* after the meta pages */
	w->seed = dnsnap__index_seed();
	leaf_start(w);
	w->fd = open(w->tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (w->fd < 0) {
		char why[200]; /* the temporary could not be created beside it */
		int err = dnsnap__diag(d, -errno, 0, "%s: %s", path,
				       dnsnap_path_create_error(w->tmp, errno, why, sizeof why));
		w->fd = -1;
		dnsnap_snapw_abort(w);
		return err;
	}
	*out = w;
	return DNSNAP_OK;
}

int dnsnap__snapw_put(dnsnap_snapw_t *w, const uint8_t *key, size_t key_len,
		      const uint8_t *entry, size_t entry_len, const uint32_t *hits,
		      dnsnap_diag_t *d)
{
	uint8_t *val = leaf_put(w, key, key_len, entry_len + VALUE_CHECK_LEN, d);
	if (val == NULL)
		return w->err; /* io_err() said what */
	if (hits != NULL && entry_len >= 12) { /* a cache entry: its Hits is the live
						* counter (engine/arena.h), not read */
		memcpy(val, entry, 8);
		st32le(val + 8, *hits);
		memcpy(val + 12, entry + 12, entry_len - 12);
	} else {
		memcpy(val, entry, entry_len);
	}
	st32le(val + entry_len, value_check(key, key_len, val, entry_len));
	record_digest(w->xs, key, key_len, val, entry_len);
	w->leaf_h[w->nkeys - 1] = XXH3_64bits_withSeed(key, key_len, w->seed);
	memcpy(w->prev, key, key_len);
	w->prev_len = key_len;
	w->n++;
	w->bytes += key_len + entry_len;
	return DNSNAP_OK;
}

int dnsnap_snapw_add(dnsnap_snapw_t *w, const uint8_t *key, size_t key_len,
		     const uint8_t *entry, size_t entry_len, dnsnap_diag_t *d)
{
	if (w == NULL || key == NULL || entry == NULL || w->failed)
		return dnsnap__diag(d, DNSNAP_EINVAL, 0, "invalid argument");
	dnsnap_key_t k;
	dnsnap_diag_t ed;
	char kname[300];
	int e = dnsnap_key_decode(key, key_len, &k, &ed);
	if (e != DNSNAP_OK)
		return dnsnap__diag(d, e, ed.offset, "%s: entry %llu: key: %s", w->path,
				    (unsigned long long)w->n, ed.msg);
	if ((e = dnsnap_entry_validate(entry, entry_len, &ed)) != DNSNAP_OK) {
		dnsnap__key_text(&k, kname, sizeof kname);
		return dnsnap__diag(d, e, ed.offset, "%s: entry %llu (%s) at offset 0x%zx: %s",
				    w->path, (unsigned long long)w->n, kname, ed.offset, ed.msg);
	}
	if (w->n > 0 && dnsnap_key_cmp(w->prev, w->prev_len, key, key_len) >= 0) {
		dnsnap__key_text(&k, kname, sizeof kname);
		return dnsnap__diag(d, DNSNAP_EFIELD, 0, "%s: entry %llu (%s): keys must increase",
				    w->path, (unsigned long long)w->n, kname);
	}
	return dnsnap__snapw_put(w, key, key_len, entry, entry_len, NULL, d);
}

void dnsnap_snapw_abort(dnsnap_snapw_t *w)
{
	if (w == NULL)
		return;
	win_close(w);
	if (w->fd >= 0)
		close(w->fd);
	unlink(w->tmp);
	for (unsigned i = 0; i < MAX_DEPTH; i++)
		level_free(&w->lv[i]);
	free(w->ix);
	XXH3_freeState(w->xs);
	dnsnap_free(w->leaf);
	dnsnap_free(w->leaf_h);
	dnsnap_free(w);
}

/* After the last entry: the tree's branches, the index, the meta record, the
 * `meta` and main databases, the meta pages; synced. */
static int snapw_finish(dnsnap_snapw_t *w, dnsnap_diag_t *d)
{
	int err = leaf_flush(w, d);
	if (err == DNSNAP_OK)
		err = branches(w, d);
	uint64_t ix_pg = 0;
	size_t ix_len = 0;
	if (err == DNSNAP_OK)
		err = index_write(w, &ix_pg, &ix_len, d);
	if (err != DNSNAP_OK)
		return err;
	uint8_t m[256], dbs[2][DB_LEN];
	size_t ml = meta_record(m, w->n, XXH3_64bits_digest(w->xs));
	uint64_t meta_root, main_root;
	const char *mk[2] = { ix_pg ? INDEX_KEY : NULL, META_KEY };
	const uint8_t *mv[2] = { (const uint8_t *)&ix_pg, m };
	const size_t mvl[2] = { ix_len, ml };
	const uint16_t mf[2] = { F_BIGDATA, 0 };
	if ((err = small_leaf(w, mk, mv, mvl, mf, &meta_root, d)) != DNSNAP_OK)
		return err;
	db_record(dbs[0], 0, (uint16_t)w->depth, w->branches, w->leaves, w->overflows, w->n,
		  w->entries_root);
	db_record(dbs[1], 0, 1, 0, 1, w->overflows_meta, ix_pg ? 2 : 1, meta_root);
	const char *dk[2] = { "entries", "meta" };
	const uint8_t *dv[2] = { dbs[0], dbs[1] };
	const size_t dvl[2] = { DB_LEN, DB_LEN };
	const uint16_t df[2] = { F_SUBDATA, F_SUBDATA };
	if ((err = small_leaf(w, dk, dv, dvl, df, &main_root, d)) != DNSNAP_OK)
		return err;
	win_close(w);
	/* the file ends after the last page: what the windows allocated past it goes */
	if (ftruncate(w->fd, (off_t)(w->next_pgno * w->psize)) != 0)
		return io_err(w, d, "ftruncate", errno);
	if ((err = meta_pages(w, main_root, d)) != DNSNAP_OK)
		return err;
	sync_file_range(w->fd, 0, 0, SYNC_FILE_RANGE_WRITE); /* the disk starts on the rest */
	return DNSNAP_OK;
}

int dnsnap_snapw_commit(dnsnap_snapw_t *w, dnsnap_snap_write_stats_t *stats, dnsnap_diag_t *d)
{
	if (w == NULL)
		return dnsnap__diag(d, DNSNAP_EINVAL, 0, "invalid argument");
	if (w->failed) {
		dnsnap_snapw_abort(w);
		return dnsnap__diag(d, DNSNAP_EINVAL, 0, "commit after a failed add");
	}
	int err = snapw_finish(w, d);
	uint64_t size = 0;
	if (err == DNSNAP_OK)
		err = write_trailer(w->fd, d, w->path); /* fsync()s */
	struct stat st;
	if (err == DNSNAP_OK && fstat(w->fd, &st) == 0)
		size = (uint64_t)st.st_size;
	if (err == DNSNAP_OK)
		err = keep_access(w->fd, w, d);
	if (err == DNSNAP_OK && rename(w->tmp, w->target) != 0)
		err = dnsnap__diag(d, -errno, 0, "%s: rename: %s", w->path, strerror(errno));
	if (err != DNSNAP_OK) {
		dnsnap_snapw_abort(w);
		return err;
	}
	sync_dir(w->target);
	if (stats != NULL) {
		stats->entries = w->n;
		stats->entry_bytes = w->bytes;
		stats->file_size = size;
	}
	close(w->fd);
	w->fd = -1;
	w->tmp[0] = 0; /* renamed: nothing to unlink */
	dnsnap_snapw_abort(w);
	return DNSNAP_OK;
}
