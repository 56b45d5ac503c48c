/*
 * snap_index.h: the snapshot's hash index (spec/FORMAT.md, "Index record"):
 * an open-addressing table in the meta database, under the key "index", that
 * takes a lookup from a key to its leaf node in one or two reads of the map
 * instead of a B-tree descent. Placed by the writer as it writes the entries
 * (snap_pages.c), read by snap_read.c. Not installed.
 */
#ifndef DNSNAP_SNAP_INDEX_H
#define DNSNAP_SNAP_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "dnsnap.h"
#include "snap_page.h"

#define INDEX_KEY "index"          /* in the meta database, 5 bytes */
#define INDEX_MAGIC "\xd5NSI"      /* the index record's Magic_Number */
#define INDEX_VERSION 1
#define INDEX_HASH_XXH3 1          /* Hash_Type: XXH3_64bits_withSeed(key, Seed) */
#define INDEX_HDR 40               /* Header_Size as written */
#define INDEX_MIN_SLOTS 8

/* What a dnsnap__index_get() that cannot use the index returns: the caller
 * descends the B-tree instead. */
#define INDEX_FALLBACK 1

/*
 * The index of an open snapshot, found at open. val is the record in the
 * map (object and Value_Check), NULL when the file has none; slots is NULL
 * when there is none or it is ignored (why says why, at file offset why_off):
 * lookups then use the B-tree.
 */
typedef struct snap_index {
	const uint8_t *val;
	size_t len;
	const uint8_t *slots;
	uint64_t mask;           /* Slot_Count - 1 */
	uint64_t seed;
	uint64_t count;          /* Entry_Count */
	const char *why;
	size_t why_off;
} snap_index_t;

/* At open (under the guard): check the record's header against the file and
 * the entries tree; O(1), the slots are checked where they are used. */
void dnsnap__index_open(snap_index_t *x, const snap_pages_t *pg, const uint8_t *val,
			size_t len, const tree_t *entries);

/*
 * Find @p key through the index: DNSNAP_OK with its raw value (entry and
 * Value_Check) in the map, DNSNAP_ENOTFOUND, DNSNAP_ECHECKSUM (the key's leaf
 * node holds no good value), or INDEX_FALLBACK (no index, or a probe that
 * never ends: a damaged index). A slot leads only to a leaf node whose key
 * equals @p key, checked as every page read is.
 */
int dnsnap__index_get(const snap_index_t *x, const snap_pages_t *pg, const uint8_t *key,
		      size_t key_len, const uint8_t **val, size_t *len);

/*
 * The deep check of the index (under the guard, after a clean scan): its
 * Value_Check, every entry of @p entries found through it at its own leaf
 * node, no slot leading anywhere else. @return DNSNAP_OK (also when the file
 * has no index), DNSNAP_ECHECKSUM naming @p path and the file offset,
 * DNSNAP_ENOMEM.
 */
int dnsnap__index_verify(const snap_index_t *x, const snap_pages_t *pg, const tree_t *entries,
			 const char *path, dnsnap_diag_t *d);

/* A new file's index Seed: 64 bits from getrandom(), or a mix of the clock
 * and the process before the kernel's pool is ready. */
uint64_t dnsnap__index_seed(void);

/* For tests: where the open snapshot's index record lies (file offset and
 * length of object + Value_Check); 1 used, 0 none, -1 present but ignored
 * (*why). And a switch that makes lookups use the B-tree. */
int dnsnap__snap_index_where(const dnsnap_snap_t *s, size_t *off, size_t *len, const char **why);
void dnsnap__snap_index_off(dnsnap_snap_t *s);

#endif
