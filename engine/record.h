/*
 * record.h: the record framing that snapshots' digests, the export stream
 * and the cache's copies share (spec/FORMAT.md, "Export stream"):
 *   Key_Len u16 LE | Entry_Len u32 LE | Key | Entry
 * Not installed.
 */
#ifndef DNSNAP_RECORD_H
#define DNSNAP_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include <xxhash.h>

#include "byteorder.h"

#define DNSNAP_FRAME_LEN 6

/** A record's frame: Key_Len and Entry_Len. */
static inline void record_frame(uint8_t fr[DNSNAP_FRAME_LEN], size_t key_len, size_t entry_len)
{
	st16le(fr, (uint16_t)key_len);
	st32le(fr + 2, (uint32_t)entry_len);
}

/** Add one record (frame, key, entry) to a digest: the snapshot Digest and
 * the stream Checksum are XXH3-64 over the records in key order. */
static inline void record_digest(XXH3_state_t *xs, const uint8_t *key, size_t key_len,
				 const uint8_t *entry, size_t entry_len)
{
	uint8_t fr[DNSNAP_FRAME_LEN];
	record_frame(fr, key_len, entry_len);
	XXH3_64bits_update(xs, fr, sizeof fr);
	XXH3_64bits_update(xs, key, key_len);
	XXH3_64bits_update(xs, entry, entry_len);
}

/*
 * The Value_Check every snapshot value ends with (spec/FORMAT.md, "Values"):
 * the low 32 bits of XXH3-64 over the value's bytes, seeded with XXH3-64 of
 * its key, stored u32 LE after them. It ties the bytes to their key: a
 * value moved under another key fails too.
 */
#define VALUE_CHECK_LEN 4

static inline uint32_t value_check(const uint8_t *key, size_t key_len, const uint8_t *val,
				   size_t val_len)
{
	return (uint32_t)XXH3_64bits_withSeed(val, val_len, XXH3_64bits(key, key_len));
}

#endif
