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


#endif
