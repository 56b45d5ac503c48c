/*
 * snap_page.h: LMDB's pages as the snapshot reader walks them (spec/FORMAT.md,
 * "LMDB's pages, as a reader needs them"): every page number, offset and size
 * checked against the page and the map. The one reader of LMDB pages:
 * snap_read.c (lookups, scans, opening) and snap_index.c (the hash index:
 * its build, its lookups, its deep check) both read through these. Not
 * installed.
 */
#ifndef DNSNAP_SNAP_PAGE_H
#define DNSNAP_SNAP_PAGE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../format/internal.h"
#include "dnsnap_format.h"

/* LMDB's data format 1 (64-bit hosts), as the spec states it. */
#define LMDB_DATA_VERSION 1u
#define PAGEHDR 16              /* pgno u64, pad u16, flags u16, lower u16, upper u16 */
#define NODEHDR 8               /* lo u16, hi u16, flags u16, ksize u16 (lo/hi swapped on BE) */
#define DB_LEN 48               /* MDB_db: pad u32, flags u16, depth u16, 4 counts u64, root u64 */
#define META_DBS 40             /* the meta page's mm_dbs[2] (free, main), after magic,
				 * version, address, mapsize */
#define META_LAST_PG 136
#define META_TXNID 144
#define P_BRANCH 0x01
#define P_LEAF 0x02
#define P_OVERFLOW 0x04
#define P_META 0x08
#define P_DIRTY 0x10            /* never meaningful on disk; tolerated */
#define F_BIGDATA 0x01
#define F_SUBDATA 0x02
#define P_INVALID UINT64_MAX
#define MAX_DEPTH 32            /* LMDB's cursor stack */

/* LMDB's fields are in the host's byte order, unaligned: ld16h() and the like. */

/* The map being read: the file (or the writer's own map of it), its page
 * size, and how many pages LMDB committed (last_pg + 1). */
typedef struct snap_pages {
	const uint8_t *map;
	size_t psize;
	uint64_t npages;
} snap_pages_t;

typedef struct tree {
	uint64_t root;           /* P_INVALID: empty */
	unsigned depth;
	uint64_t entries;
} tree_t;

/* ----------------------------------------------------------------- pages */

/* Page @p pgno if it holds a page of @p kind (P_BRANCH, P_LEAF, P_OVERFLOW). */
static inline const uint8_t *page_at(const snap_pages_t *s, uint64_t pgno, unsigned kind)
{
	if (pgno < 2 || pgno >= s->npages)
		return NULL;
	const uint8_t *p = s->map + pgno * s->psize;
	if (ld64h(p) != pgno || (ld16h(p + 10) & ~(unsigned)P_DIRTY) != kind)
		return NULL;
	if (kind == P_OVERFLOW)
		return p;
	unsigned lower = ld16h(p + 12), upper = ld16h(p + 14);
	if (lower < PAGEHDR + 2 || lower > upper || upper > s->psize || (lower - PAGEHDR) % 2)
		return NULL; /* no page LMDB writes is empty */
	return p;
}

static inline unsigned nkeys(const uint8_t *p)
{
	return (ld16h(p + 12) - PAGEHDR) / 2u;
}

/* Node i of branch or leaf page p: its start and its key, inside the page. */
static inline int node_at(const snap_pages_t *s, const uint8_t *p, unsigned i, const uint8_t **node,
		   const uint8_t **key, size_t *key_len)
{
	unsigned off = ld16h(p + PAGEHDR + 2 * i);
	if (off < ld16h(p + 14) || off + NODEHDR > s->psize)
		return 0;
	const uint8_t *n = p + off;
	unsigned ks = ld16h(n + 6);
	if (off + NODEHDR + ks > s->psize)
		return 0;
	*node = n;
	*key = n + NODEHDR;
	*key_len = ks;
	return 1;
}

/* A branch node's child: 48 bits in lo, hi (a host u32 either way) and flags. */
static inline uint64_t child_of(const uint8_t *node)
{
	return ld32h(node) | (uint64_t)ld16h(node + 4) << 32;
}

/* A leaf node's value: in the page, or on overflow pages (F_BIGDATA). Any
 * other node kind (F_SUBDATA, F_DUPDATA) is one dnsnap never writes here. */
static inline int leaf_value(const snap_pages_t *s, const uint8_t *p, const uint8_t *node,
		      size_t key_len, unsigned want_flags, const uint8_t **val, size_t *len)
{
	uint64_t dsize = ld32h(node);
	unsigned flags = ld16h(node + 4);
	const uint8_t *data = node + NODEHDR + key_len;
	size_t room = s->psize - (size_t)(data - p);
	if (flags == F_BIGDATA && want_flags == 0) {
		if (room < 8)
			return 0;
		uint64_t op = ld64h(data);
		const uint8_t *o = page_at(s, op, P_OVERFLOW);
		uint64_t pages = o ? ld32h(o + 12) : 0;
		if (o == NULL || pages == 0 || pages > s->npages - op ||
		    dsize > pages * s->psize - PAGEHDR)
			return 0;
		*val = o + PAGEHDR;
		*len = (size_t)dsize;
		return 1;
	}
	if (flags != want_flags || dsize > room)
		return 0;
	*val = data;
	*len = (size_t)dsize;
	return 1;
}

/* The first node of page p from node @p lo on whose key is > key (@p after)
 * or >= key: nkeys if none. 0 for damage on the way. */
static inline int node_bound(const snap_pages_t *s, const uint8_t *p, const uint8_t *key,
			     size_t key_len, unsigned lo, int after, unsigned *pick)
{
	unsigned hi = nkeys(p);
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		const uint8_t *node, *k;
		size_t kl;
		if (!node_at(s, p, mid, &node, &k, &kl))
			return 0;
		int c = dnsnap_key_cmp(k, kl, key, key_len);
		if (after ? c <= 0 : c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*pick = lo;
	return 1;
}

/* The last node of branch page p whose key is <= key (node 0 sorts first:
 * the search starts at node 1). */
static inline int branch_pick(const snap_pages_t *s, const uint8_t *p, const uint8_t *key,
			      size_t key_len, unsigned *pick)
{
	unsigned after;
	if (!node_bound(s, p, key, key_len, 1, 1, &after))
		return 0;
	*pick = after - 1;
	return 1;
}

/* The first node of leaf page p whose key is >= key (nkeys if none). */
static inline int leaf_seek(const snap_pages_t *s, const uint8_t *p, const uint8_t *key,
			    size_t key_len, unsigned *pick)
{
	return node_bound(s, p, key, key_len, 0, 0, pick);
}

/* Find @p key in tree @p t: its raw value (with its Value_Check) in the map.
 * DNSNAP_ENOTFOUND, or DNSNAP_ECHECKSUM for damage on the way. */
static inline int tree_get(const snap_pages_t *s, const tree_t *t, const uint8_t *key, size_t key_len,
		    unsigned want_flags, const uint8_t **val, size_t *len)
{
	if (t->root == P_INVALID)
		return DNSNAP_ENOTFOUND;
	uint64_t pgno = t->root;
	for (unsigned level = 0; level + 1 < t->depth; level++) {
		const uint8_t *p = page_at(s, pgno, P_BRANCH), *node, *k;
		unsigned i;
		size_t kl;
		if (p == NULL || !branch_pick(s, p, key, key_len, &i) || !node_at(s, p, i, &node, &k, &kl))
			return DNSNAP_ECHECKSUM;
		pgno = child_of(node);
	}
	const uint8_t *p = page_at(s, pgno, P_LEAF), *node, *k;
	unsigned i;
	size_t kl;
	if (p == NULL || !leaf_seek(s, p, key, key_len, &i))
		return DNSNAP_ECHECKSUM;
	if (i == nkeys(p))
		return DNSNAP_ENOTFOUND;
	if (!node_at(s, p, i, &node, &k, &kl))
		return DNSNAP_ECHECKSUM;
	if (dnsnap_key_cmp(k, kl, key, key_len) != 0)
		return DNSNAP_ENOTFOUND;
	return leaf_value(s, p, node, kl, want_flags, val, len) ? DNSNAP_OK : DNSNAP_ECHECKSUM;
}

#endif
