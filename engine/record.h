/*
 * record.h: the record framing that snapshots' digests, the export stream
 * and the cache's copies share (spec/FORMAT.md, "Export stream"):
 *   Key_Len u16 LE | Entry_Len u32 LE | Key | Entry
 * and the little-endian helpers they all use. Not installed.
 */
#ifndef DNSNAP_RECORD_H
#define DNSNAP_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include <xxhash.h>

#define DNSNAP_FRAME_LEN 6

static inline void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> 8 * i);
}
static inline void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> 8 * i);
}
static inline uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t get64(const uint8_t *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }

/** A record's frame: Key_Len and Entry_Len. */
static inline void record_frame(uint8_t fr[DNSNAP_FRAME_LEN], size_t key_len, size_t entry_len)
{
	put16(fr, (uint16_t)key_len);
	put32(fr + 2, (uint32_t)entry_len);
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
