/*
 * mix.c: the Big Pineapple benchmark mix. See mix.h.
 *
 * The generator, entry by entry:
 * - PRNG: xorshift64* (Marsaglia / Vigna), one state per entry, seeded with
 *   mix_splitmix64(seed + i * golden ratio): entry i depends on (seed, i) only.
 * - Query name: [prefix.] [extra.]{0,2} UNIQUE . SUFFIX
 *   - prefix: "www" 20%, "api" 5%, "cdn" 5%, none 70%;
 *   - labels before the suffix: 1 (65%), 2 (25%) or 3 (10%); the one next to
 *     the suffix is UNIQUE, the others are 1-3 random syllables each;
 *   - syllables: 16 consonants x 4 vowels = 64 two-letter syllables ("ba",
 *     "ko", "ti"...), so a label reads like "kovarema";
 *   - UNIQUE spells the entry number i in base 64, one syllable per digit,
 *     least significant first, at least 2 digits (4 letters; 1M entries give
 *     8 letters). Each digit is shifted by a keyed hash of the more
 *     significant digits (a bijection for a given digit count), so
 *     consecutive entries do not look consecutive. Digits are fixed-width
 *     syllables, so distinct i give distinct labels, and since every UNIQUE
 *     label has 4+ letters it cannot equal a suffix label ("co", "com"):
 *     every entry has its own name, hence its own cache key;
 *   - suffix, weighted: com 46, net 9, org 8, de 7, co.uk 5, io 5, ru 4,
 *     nl 3, fr 3, com.br 3, jp 3, info 2, eu 2 (percent).
 *   Names are lower case, 10 to ~45 bytes in wire form.
 * - Type: A 56%, AAAA 25%, TXT 19%. Records: 1 to 4, uniform. One TTL per
 *   entry (an RRset has one TTL), uniform in 60..86400.
 * - Rdata: A 4 random bytes; AAAA 2001:db8::/32 + 12 random bytes; TXT one
 *   character-string of 64..224 random bytes (uniform), rdata 65..225 bytes.
 * - Response: random ID, flags QR RD RA (0x8180), NOERROR, QDCOUNT 1,
 *   ANCOUNT n, no authority, no additional, no EDNS; each answer owner is
 *   the pointer 0xc00c to the question name.
 * - Query: the caller's ID, RD, the same question, no EDNS.
 */
#include "mix.h"
#include "byteorder.h"

#include <string.h>

static uint64_t mix_seed = 0x5eed5eed5eed5eedull;

void mix_init(uint64_t seed)
{
	mix_seed = seed;
}

uint64_t mix_splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

uint64_t mix_rand(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* Uniform in [0, n), n small: the high bits of one draw (bias < n / 2^32). */
static unsigned below(uint64_t *s, unsigned n)
{
	return (unsigned)(((mix_rand(s) >> 32) * n) >> 32);
}

static const char consonants[] = "bcdfghklmnprstvz"; /* 16 */
static const char vowels[] = "aeio";                 /* 4 */

static void syllable(uint8_t *p, unsigned s)
{
	p[0] = (uint8_t)consonants[(s >> 2) & 15];
	p[1] = (uint8_t)vowels[s & 3];
}

static const struct {
	const char *wire; /* wire form without the root label */
	unsigned len;
	unsigned weight;
} suffixes[] = {
	{"\3com", 4, 46}, {"\3net", 4, 9}, {"\3org", 4, 8}, {"\2de", 3, 7},
	{"\2co\2uk", 6, 5}, {"\2io", 3, 5}, {"\2ru", 3, 4}, {"\2nl", 3, 3},
	{"\2fr", 3, 3}, {"\3com\2br", 7, 3}, {"\2jp", 3, 3}, {"\4info", 5, 2},
	{"\2eu", 3, 2},
};

/* Everything about entry i except the rdata bytes; st continues from here. */
typedef struct mix_entry {
	uint64_t st;
	uint8_t name[255];
	size_t name_len;
	uint16_t qtype;
	unsigned nrec;
	uint32_t ttl;
	uint16_t id;
} mix_entry_t;

static void random_label(uint64_t *st, uint8_t *name, size_t *n)
{
	unsigned k = 1 + below(st, 3);
	name[(*n)++] = (uint8_t)(2 * k);
	for (unsigned j = 0; j < k; j++, *n += 2)
		syllable(name + *n, below(st, 64));
}

static void unique_label(size_t i, uint8_t *name, size_t *n)
{
	uint64_t v = (uint64_t)i;
	unsigned nd = 2;
	while (nd < 10 && (v >> (6 * nd)) != 0)
		nd++;
	name[(*n)++] = (uint8_t)(2 * nd);
	for (unsigned j = 0; j < nd; j++, *n += 2) {
		unsigned d = (unsigned)(v >> (6 * j)) & 63;
		uint64_t higher = j + 1 < 11 ? v >> (6 * (j + 1)) : 0;
		uint64_t h = mix_splitmix64(mix_seed ^ (higher * 0x100000001b3ull) ^ ((uint64_t)nd << 56) ^
					((uint64_t)j << 48));
		syllable(name + *n, (d + (unsigned)(h & 63)) & 63);
	}
}

static void gen(size_t i, mix_entry_t *e)
{
	e->st = mix_splitmix64(mix_seed + (uint64_t)i * 0x9e3779b97f4a7c15ull) | 1;
	uint64_t *st = &e->st;
	size_t n = 0;
	unsigned p = below(st, 100);
	if (p < 30) {
		const char *pre = p < 20 ? "www" : p < 25 ? "api" : "cdn";
		e->name[n++] = 3;
		memcpy(e->name + n, pre, 3);
		n += 3;
	}
	unsigned l = below(st, 100);
	unsigned extra = l < 65 ? 0 : l < 90 ? 1 : 2;
	for (unsigned j = 0; j < extra; j++)
		random_label(st, e->name, &n);
	unique_label(i, e->name, &n);
	unsigned w = below(st, 100), k = 0;
	while (w >= suffixes[k].weight)
		w -= suffixes[k++].weight;
	memcpy(e->name + n, suffixes[k].wire, suffixes[k].len);
	n += suffixes[k].len;
	e->name[n++] = 0;
	e->name_len = n;

	unsigned t = below(st, 100);
	e->qtype = t < 56 ? MIX_TYPE_A : t < 81 ? MIX_TYPE_AAAA : MIX_TYPE_TXT;
	e->nrec = 1 + below(st, 4);
	e->ttl = 60 + below(st, 86400 - 60 + 1);
	e->id = (uint16_t)mix_rand(st);
}

uint16_t mix_qtype(size_t i)
{
	mix_entry_t e;
	gen(i, &e);
	return e.qtype;
}

unsigned mix_records(size_t i)
{
	mix_entry_t e;
	gen(i, &e);
	return e.nrec;
}

size_t mix_name(size_t i, uint8_t out[255])
{
	mix_entry_t e;
	gen(i, &e);
	memcpy(out, e.name, e.name_len);
	return e.name_len;
}

static size_t header_question(uint8_t *buf, const mix_entry_t *e, uint16_t id, unsigned flags,
			      unsigned ancount)
{
	st16be(buf, id);
	st16be(buf + 2, flags);
	st16be(buf + 4, 1);
	st16be(buf + 6, ancount);
	st16be(buf + 8, 0);
	st16be(buf + 10, 0);
	memcpy(buf + 12, e->name, e->name_len);
	size_t n = 12 + e->name_len;
	st16be(buf + n, e->qtype);
	st16be(buf + n + 2, 1); /* IN */
	return n + 4;
}

int mix_response(size_t i, uint8_t *buf, size_t cap, size_t *len)
{
	mix_entry_t e;
	gen(i, &e);
	if (cap < 12 + e.name_len + 4)
		return -1;
	size_t n = header_question(buf, &e, e.id, 0x8180, e.nrec);
	for (unsigned r = 0; r < e.nrec; r++) {
		uint8_t rdata[225];
		size_t rdlen;
		if (e.qtype == MIX_TYPE_A) {
			uint64_t x = mix_rand(&e.st);
			rdlen = 4;
			memcpy(rdata, &x, 4);
		} else if (e.qtype == MIX_TYPE_AAAA) {
			uint64_t x = mix_rand(&e.st), y = mix_rand(&e.st);
			rdlen = 16;
			rdata[0] = 0x20, rdata[1] = 0x01, rdata[2] = 0x0d, rdata[3] = 0xb8;
			memcpy(rdata + 4, &x, 8);
			memcpy(rdata + 12, &y, 4);
		} else {
			unsigned k = 64 + below(&e.st, 224 - 64 + 1);
			rdata[0] = (uint8_t)k;
			for (unsigned j = 0; j < k; j += 8) {
				uint64_t x = mix_rand(&e.st);
				memcpy(rdata + 1 + j, &x, k - j < 8 ? k - j : 8);
			}
			rdlen = 1 + k;
		}
		if (cap - n < 12 + rdlen)
			return -1;
		st16be(buf + n, 0xc00c);
		st16be(buf + n + 2, e.qtype);
		st16be(buf + n + 4, 1);
		st16be(buf + n + 6, e.ttl >> 16);
		st16be(buf + n + 8, e.ttl & 0xffff);
		st16be(buf + n + 10, (unsigned)rdlen);
		memcpy(buf + n + 12, rdata, rdlen);
		n += 12 + rdlen;
	}
	*len = n;
	return 0;
}

int mix_query(size_t i, uint16_t id, uint8_t *buf, size_t cap, size_t *len)
{
	mix_entry_t e;
	gen(i, &e);
	if (cap < 12 + e.name_len + 4)
		return -1;
	*len = header_question(buf, &e, id, 0x0100, 0);
	return 0;
}
