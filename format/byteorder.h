/*
 * byteorder.h: the one set of unaligned-safe loads and stores of fixed-width
 * integers for the whole tree (format, engine, ingest, tool, tests, benchmarks).
 * The name says the byte order: ld16le() reads a little-endian u16 (the
 * entry layout, LMDB's pages on this host's order via the caller), ld16be()
 * a big-endian one (DNS messages, pcap headers in network order). Byte by
 * byte, so no alignment and no host order is assumed; compilers turn each
 * into one load or store (and a bswap) where the target allows it.
 */
#ifndef DNSNAP_BYTEORDER_H
#define DNSNAP_BYTEORDER_H

#include <stdint.h>

static inline uint16_t ld16le(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t ld32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t ld64le(const uint8_t *p)
{
	return (uint64_t)ld32le(p) | (uint64_t)ld32le(p + 4) << 32;
}
static inline uint16_t ld16be(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t ld32be(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}
static inline uint64_t ld64be(const uint8_t *p)
{
	return (uint64_t)ld32be(p) << 32 | (uint64_t)ld32be(p + 4);
}

static inline void st16le(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}
static inline void st32le(uint8_t *p, uint32_t v)
{
	st16le(p, (uint16_t)v);
	st16le(p + 2, (uint16_t)(v >> 16));
}
static inline void st64le(uint8_t *p, uint64_t v)
{
	st32le(p, (uint32_t)v);
	st32le(p + 4, (uint32_t)(v >> 32));
}
static inline void st16be(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}
static inline void st32be(uint8_t *p, uint32_t v)
{
	st16be(p, (uint16_t)(v >> 16));
	st16be(p + 2, (uint16_t)v);
}

#endif
