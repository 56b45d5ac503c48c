/*
 * mix.h: the Big Pineapple benchmark mix (Cloudflare 1.1.1.1 cache): DNS
 * responses in wire form, and the queries that ask for them.
 *
 * 56% A, 25% AAAA, 19% TXT (64-224 random bytes), 1 to 4 records per entry,
 * TTLs 60-86400, names that look like real ones. Entry i is a pure function
 * of (seed, i): any entry can be rebuilt on its own, in any order, and every
 * entry has its own query name (so N entries are N distinct cache keys).
 * libc only: the benchmark, the CLI's demo and tests can all use it.
 */
#ifndef DNSNAP_BENCH_MIX_H
#define DNSNAP_BENCH_MIX_H

#include <stddef.h>
#include <stdint.h>

/* Upper bounds of the messages the mix builds (header, question of at most
 * ~70 bytes, 4 TXT records of at most 12 + 225 bytes). */
#define MIX_RESPONSE_MAX 1100
#define MIX_QUERY_MAX 128

#define MIX_TYPE_A 1
#define MIX_TYPE_TXT 16
#define MIX_TYPE_AAAA 28

/** Choose the seed of every later call (the same seed gives the same mix). */
void mix_init(uint64_t seed);

/** The query type of entry @p i: MIX_TYPE_A, MIX_TYPE_AAAA or MIX_TYPE_TXT. */
uint16_t mix_qtype(size_t i);

/** The number of answer records of entry @p i (1..4). */
unsigned mix_records(size_t i);

/**
 * Entry @p i as a DNS response: header (QR, RD, RA, NOERROR), the question,
 * 1..4 answer records whose owners are compression pointers to the question
 * (0xc00c), no authority, no additional, no EDNS.
 * @return 0, or -1 when @p cap is too small (MIX_RESPONSE_MAX always fits)
 */
int mix_response(size_t i, uint8_t *buf, size_t cap, size_t *len);

/**
 * The query for entry @p i: ID @p id, RD set, one question, no EDNS.
 * @return 0, or -1 when @p cap is too small (MIX_QUERY_MAX always fits)
 */
int mix_query(size_t i, uint16_t id, uint8_t *buf, size_t cap, size_t *len);

/**
 * The query name of entry @p i in wire form (at most DNSNAP_NAME_MAX bytes;
 * the mix's names are at most ~70). @return its length
 */
size_t mix_name(size_t i, uint8_t out[255]);

/** The benchmark's PRNG (xorshift64*), for callers that need more draws. */
uint64_t mix_rand(uint64_t *state);

/** splitmix64: turns a seed (and an index) into a well-mixed PRNG state. */
uint64_t mix_splitmix64(uint64_t x);

#endif /* DNSNAP_BENCH_MIX_H */
