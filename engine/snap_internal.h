/*
 * snap_internal.h: what the snapshot writer (snap_write.c) and reader
 * (snap_read.c) share: the byte strings and sizes of spec/FORMAT.md,
 * "Snapshot". Not installed.
 */
#ifndef DNSNAP_SNAP_INTERNAL_H
#define DNSNAP_SNAP_INTERNAL_H

#define TRAILER_LEN 24
#define META_KEY "meta"
#define SNAP_MAGIC "\xd5NSP"      /* the meta record's Magic_Number */
#define TRAILER_MAGIC "\xd5NST"   /* the trailer's */
#define STREAM_MAGIC "\xd5NSX"    /* an export stream's first bytes, decompressed */
#define LMDB_MAGIC 0xBEEFC0DEu    /* at byte 16 of an LMDB file, in the host's order */

#include "dnsnap.h"

/* Append one record to @p w (snap_pages.c): its value is the entry, then its
 * Value_Check; the caller vouches for the order and the bytes. @p hits, when
 * not NULL, goes into the entry's Hits field (a cache entry's live counter,
 * not read from the entry). */
int dnsnap__snapw_put(dnsnap_snapw_t *w, const uint8_t *key, size_t key_len,
		      const uint8_t *entry, size_t entry_len, const uint32_t *hits,
		      dnsnap_diag_t *d);


#endif
