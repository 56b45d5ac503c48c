/*
 * before.h: the "before" layout of the Big Pineapple article, rebuilt in C for
 * the benchmark only (never part of libdnsnap): a generic chained hash map
 * (HashMap<Key, Box<Entry>>: one heap node per entry, key name in its own
 * allocation), an entry with three growable record lists (answer, authority,
 * additional: pointer + len + cap, capacity doubling from 4), and a fat
 * 144-byte record that carries its owner name in its own heap allocation.
 * See before.c for the layout and what each step costs.
 */
#ifndef DNSNAP_BENCH_BEFORE_H
#define DNSNAP_BENCH_BEFORE_H

#include <stddef.h>
#include <stdint.h>

typedef struct before_cache before_cache_t;

/** An empty cache (a small bucket array), or NULL without memory. */
before_cache_t *before_new(void);

/** Free the cache and every entry. Accepts NULL. */
void before_free(before_cache_t *c);

/**
 * Parse a DNS response in wire form and store it under (question name
 * lower-cased, qtype, qclass, CD); a second insert of a key replaces the entry.
 * @return 0, -1 for a message it cannot parse, -2 without memory
 */
int before_insert(before_cache_t *c, const uint8_t *msg, size_t len, uint32_t now);

/**
 * Parse a query, find its entry and build the response into @p out: header,
 * the question echoed, the records with TTLs aged by (now - inception).
 * @return 0 (hit), 1 (miss or expired), -1 (bad query or @p cap too small)
 */
int before_answer(before_cache_t *c, const uint8_t *query, size_t qlen, uint32_t now,
		  uint8_t *out, size_t cap, size_t *out_len);

/** Entries in the cache. */
size_t before_count(const before_cache_t *c);

#endif /* DNSNAP_BENCH_BEFORE_H */
