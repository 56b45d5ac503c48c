/*
 * before.c: the article's original cache entry, for comparison only.
 *
 * What Cloudflare's 1.1.1.1 cache looked like before the Big Pineapple
 * changes, as far as the article describes it, in C with Rust's shapes:
 *
 *   HashMap<Key, Box<Entry>>, here a separate-chaining table:
 *     buckets   an array of node pointers, doubled when entries > buckets
 *     node      80 bytes, one heap allocation per entry: next, hash, the Key
 *               (name as a Vec<u8> in its OWN allocation, qtype, qclass, CD
 *               flag, tag as a Vec<u8>: empty, no allocation), Box<Entry>
 *   Entry       120 bytes (jemalloc class 128), one allocation:
 *               answer, authority, additional: three Vec<Record> (pointer,
 *               len, cap), capacity 0 -> 4 -> 8 ... (Rust's RawVec starts at 4
 *               for elements this size), so a 1-record answer holds room for
 *               4 records = 576 bytes (class 640); an empty section allocates
 *               nothing; a Vec of extended errors (empty); inception, TTL,
 *               hits, and rcode plus four separate bool fields
 *   Record      144 bytes, a union-like enum: the owner name, stored on EVERY
 *               record as a Vec<u8> with its own heap allocation (exact size,
 *               like name.to_vec()), type, class, TTL, and a union of rdata
 *               variants whose largest (SVCB-like: priority, target and three
 *               parameter Vecs) sets the size of all of them: A and AAAA
 *               inline, TXT (and any type outside the mix) as a Vec<u8> of the
 *               rdata in its own allocation, CNAME/NS/PTR/DNAME as the
 *               expanded name in its own allocation.
 *
 * Insert parses the wire response with the simple parser below (names
 * decompressed) and builds that structure. Lookup parses the query (its own
 * small parser: header, question name lower-cased into the key), finds the
 * node, and writes the response by walking the records: owners equal to the
 * query name become the pointer 0xc00c (as dnsnap's answers do), other owners
 * are written uncompressed; TTLs are aged by now - inception.
 *
 * Hash: a multiply-xor hash over 8-byte words of the key (the key is small;
 * something of the quality and cost of the index hashes in use, not SipHash).
 */
#include "before.h"
#include "byteorder.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct bytes {
	uint8_t *ptr;
	size_t len, cap;
} bytes_t; /* Vec<u8> */

typedef struct before_rr {
	bytes_t owner; /* the owner name, wire form, its own allocation */
	uint16_t type;
	uint16_t rclass;
	uint32_t ttl;
	union {
		uint8_t a[4];
		uint8_t aaaa[16];
		bytes_t name; /* CNAME, NS, PTR, DNAME */
		bytes_t raw;  /* TXT and the rest: rdata as received */
		struct {
			uint16_t pref;
			bytes_t exchange;
		} mx;
		struct {
			bytes_t mname, rname;
			uint32_t serial, refresh, retry, expire, minimum;
		} soa;
		struct {
			uint16_t covered;
			uint8_t alg, labels;
			uint32_t orig_ttl, expiration, inception;
			uint16_t key_tag;
			bytes_t signer, signature;
		} rrsig;
		struct { /* the largest variant */
			uint16_t priority;
			bytes_t target;
			bytes_t alpn, ipv4hint, ipv6hint;
			uint16_t port;
		} svcb;
	} d;
} before_rr_t;

_Static_assert(sizeof(before_rr_t) == 144, "the article's record is 144 bytes");

typedef struct rr_vec {
	before_rr_t *ptr;
	size_t len, cap;
} rr_vec_t; /* Vec<Record> */

typedef struct before_entry {
	rr_vec_t answer, authority, additional;
	bytes_t ede; /* Vec<ExtendedError>, empty here */
	uint64_t inception;
	uint32_t ttl;
	uint32_t hits;
	uint8_t rcode;
	bool authenticated, checking_disabled, recursion_available, truncated;
} before_entry_t;

_Static_assert(sizeof(before_entry_t) == 120, "entry layout");

typedef struct before_key {
	bytes_t name; /* lower-case wire form, its own allocation */
	uint16_t qtype, qclass;
	uint8_t flags; /* CD */
	bytes_t tag;   /* empty: no allocation */
} before_key_t;

typedef struct node {
	struct node *next;
	uint64_t hash;
	before_key_t key;
	before_entry_t *entry; /* Box<Entry> */
} node_t;

_Static_assert(sizeof(node_t) == 80, "node layout");

struct before_cache {
	node_t **buckets;
	size_t mask;
	size_t count;
};

/* ---------------------------------------------------------------- helpers */

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint8_t lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? (uint8_t)(c + 32) : c;
}

static int bytes_from(bytes_t *b, const uint8_t *p, size_t n)
{
	b->ptr = malloc(n);
	if (b->ptr == NULL)
		return -2;
	memcpy(b->ptr, p, n);
	b->len = b->cap = n;
	return 0;
}

static uint64_t hash_key(const uint8_t *name, size_t len, uint16_t qtype, uint16_t qclass,
			 uint8_t flags)
{
	uint64_t h = 0x243f6a8885a308d3ull ^ len ^ ((uint64_t)qtype << 16) ^ ((uint64_t)qclass << 32) ^
		     ((uint64_t)flags << 48);
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, name + i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	if (i < len) {
		uint64_t w = 0;
		memcpy(&w, name + i, len - i);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
	}
	h ^= h >> 32;
	h *= 0xd6e8feb86659fd93ull;
	return h ^ (h >> 32);
}

/* A possibly compressed name at msg[*pos] into out (uncompressed); *pos moves
 * past it as it stands. Pointers must point backwards. */
static int unpack_name(const uint8_t *msg, size_t len, size_t *pos, uint8_t out[255],
		       size_t *out_len)
{
	size_t p = *pos, n = 0, end = 0;
	int jumped = 0;
	for (;;) {
		if (p >= len)
			return -1;
		uint8_t l = msg[p];
		if ((l & 0xc0) == 0xc0) {
			if (p + 1 >= len)
				return -1;
			size_t target = (size_t)(l & 0x3f) << 8 | msg[p + 1];
			if (target >= p)
				return -1;
			if (!jumped)
				end = p + 2, jumped = 1;
			p = target;
			continue;
		}
		if (l > 63 || p + 1 + l > len || n + 1 + l > 255)
			return -1;
		memcpy(out + n, msg + p, 1 + (size_t)l);
		n += 1 + (size_t)l;
		p += 1 + (size_t)l;
		if (l == 0)
			break;
	}
	*pos = jumped ? end : p;
	*out_len = n;
	return 0;
}

/* ------------------------------------------------------------ the entries */

static void free_rr(before_rr_t *r)
{
	free(r->owner.ptr);
	if (r->type != 1 && r->type != 28)
		free(r->d.raw.ptr); /* name and raw share the first member */
}

static void free_vec(rr_vec_t *v)
{
	for (size_t i = 0; i < v->len; i++)
		free_rr(&v->ptr[i]);
	free(v->ptr);
}

static void free_entry(before_entry_t *e)
{
	free_vec(&e->answer);
	free_vec(&e->authority);
	free_vec(&e->additional);
	free(e->ede.ptr);
	free(e);
}

static int push(rr_vec_t *v, const before_rr_t *r)
{
	if (v->len == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 4;
		before_rr_t *p = realloc(v->ptr, cap * sizeof *p);
		if (p == NULL)
			return -2;
		v->ptr = p;
		v->cap = cap;
	}
	v->ptr[v->len++] = *r;
	return 0;
}

static int is_name_type(uint16_t t)
{
	return t == 2 || t == 5 || t == 12 || t == 39; /* NS CNAME PTR DNAME */
}

/* One resource record at msg[*pos] into r (owning its allocations). */
static int parse_rr(const uint8_t *msg, size_t len, size_t *pos, before_rr_t *r)
{
	uint8_t name[255];
	size_t nlen;
	if (unpack_name(msg, len, pos, name, &nlen) != 0 || *pos + 10 > len)
		return -1;
	const uint8_t *p = msg + *pos;
	memset(r, 0, sizeof *r);
	r->type = ld16be(p);
	r->rclass = ld16be(p + 2);
	r->ttl = get32(p + 4);
	size_t rdlen = ld16be(p + 8), rd = *pos + 10;
	if (rd + rdlen > len)
		return -1;
	*pos = rd + rdlen;
	if (r->type == 1 || r->type == 28) {
		if (rdlen != (r->type == 1 ? 4u : 16u))
			return -1;
		memcpy(r->type == 1 ? r->d.a : r->d.aaaa, msg + rd, rdlen);
	} else if (is_name_type(r->type)) {
		uint8_t target[255];
		size_t tlen, tp = rd;
		if (unpack_name(msg, len, &tp, target, &tlen) != 0 || tp != rd + rdlen)
			return -1;
		if (bytes_from(&r->d.name, target, tlen) != 0)
			return -2;
	} else if (bytes_from(&r->d.raw, msg + rd, rdlen) != 0) {
		return -2;
	}
	if (bytes_from(&r->owner, name, nlen) != 0) {
		free_rr(r);
		return -2;
	}
	return 0;
}

/* ---------------------------------------------------------------- the map */

before_cache_t *before_new(void)
{
	before_cache_t *c = malloc(sizeof *c);
	if (c == NULL)
		return NULL;
	c->buckets = calloc(16, sizeof *c->buckets);
	if (c->buckets == NULL) {
		free(c);
		return NULL;
	}
	c->mask = 15;
	c->count = 0;
	return c;
}

void before_free(before_cache_t *c)
{
	if (c == NULL)
		return;
	for (size_t b = 0; b <= c->mask; b++) {
		node_t *n = c->buckets[b];
		while (n != NULL) {
			node_t *next = n->next;
			free_entry(n->entry);
			free(n->key.name.ptr);
			free(n->key.tag.ptr);
			free(n);
			n = next;
		}
	}
	free(c->buckets);
	free(c);
}

size_t before_count(const before_cache_t *c)
{
	return c->count;
}

static node_t **find(before_cache_t *c, uint64_t h, const uint8_t *name, size_t nlen,
		     uint16_t qtype, uint16_t qclass, uint8_t flags)
{
	node_t **pp = &c->buckets[h & c->mask];
	for (; *pp != NULL; pp = &(*pp)->next) {
		const node_t *n = *pp;
		if (n->hash == h && n->key.qtype == qtype && n->key.qclass == qclass &&
		    n->key.flags == flags && n->key.name.len == nlen &&
		    memcmp(n->key.name.ptr, name, nlen) == 0)
			break;
	}
	return pp;
}

static int grow(before_cache_t *c)
{
	size_t nb = (c->mask + 1) * 2;
	node_t **b = calloc(nb, sizeof *b);
	if (b == NULL)
		return -2;
	for (size_t i = 0; i <= c->mask; i++) {
		node_t *n = c->buckets[i];
		while (n != NULL) {
			node_t *next = n->next;
			n->next = b[n->hash & (nb - 1)];
			b[n->hash & (nb - 1)] = n;
			n = next;
		}
	}
	free(c->buckets);
	c->buckets = b;
	c->mask = nb - 1;
	return 0;
}

int before_insert(before_cache_t *c, const uint8_t *msg, size_t len, uint32_t now)
{
	if (len < 12 || !(msg[2] & 0x80) || ld16be(msg + 4) != 1)
		return -1;
	uint16_t flags = ld16be(msg + 2);
	size_t pos = 12, nlen;
	uint8_t qname[255];
	if (unpack_name(msg, len, &pos, qname, &nlen) != 0 || pos + 4 > len)
		return -1;
	for (size_t i = 0; i < nlen; i++)
		qname[i] = lower(qname[i]);
	uint16_t qtype = ld16be(msg + pos), qclass = ld16be(msg + pos + 2);
	uint8_t kflags = (flags & 0x0010) ? 1 : 0;
	pos += 4;

	before_entry_t *e = calloc(1, sizeof *e);
	if (e == NULL)
		return -2;
	e->inception = now;
	e->rcode = flags & 0x0f;
	e->authenticated = (flags & 0x0020) != 0;
	e->checking_disabled = kflags != 0;
	e->recursion_available = (flags & 0x0080) != 0;
	e->truncated = (flags & 0x0200) != 0;
	uint32_t ttl = UINT32_MAX;
	rr_vec_t *sec[3] = {&e->answer, &e->authority, &e->additional};
	for (int s = 0; s < 3; s++) {
		unsigned count = ld16be(msg + 6 + 2 * s);
		for (unsigned k = 0; k < count; k++) {
			before_rr_t r;
			int rc = parse_rr(msg, len, &pos, &r);
			if (rc != 0) {
				free_entry(e);
				return rc;
			}
			if (r.type == 41) { /* OPT: not cached */
				free_rr(&r);
				continue;
			}
			if (s == 0 && r.ttl < ttl)
				ttl = r.ttl;
			if (push(sec[s], &r) != 0) {
				free_rr(&r);
				free_entry(e);
				return -2;
			}
		}
	}
	e->ttl = ttl == UINT32_MAX ? 0 : ttl;

	uint64_t h = hash_key(qname, nlen, qtype, qclass, kflags);
	node_t **pp = find(c, h, qname, nlen, qtype, qclass, kflags);
	if (*pp != NULL) { /* a refresh replaces the entry */
		free_entry((*pp)->entry);
		(*pp)->entry = e;
		return 0;
	}
	node_t *n = calloc(1, sizeof *n);
	if (n == NULL || bytes_from(&n->key.name, qname, nlen) != 0) {
		free(n);
		free_entry(e);
		return -2;
	}
	n->hash = h;
	n->key.qtype = qtype;
	n->key.qclass = qclass;
	n->key.flags = kflags;
	n->entry = e;
	n->next = c->buckets[h & c->mask];
	c->buckets[h & c->mask] = n;
	if (++c->count > c->mask + 1 && grow(c) != 0)
		return -2;
	return 0;
}

static int name_eq_nocase(const uint8_t *a, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (lower(a[i]) != lower(b[i]))
			return 0;
	return 1;
}

int before_answer(before_cache_t *c, const uint8_t *query, size_t qlen, uint32_t now,
		  uint8_t *out, size_t cap, size_t *out_len)
{
	if (qlen < 12 || (query[2] & 0x80) || ld16be(query + 4) != 1)
		return -1;
	uint8_t qname[255];
	size_t pos = 12, nlen = 0;
	for (;;) { /* a query's name: no pointers */
		if (pos >= qlen)
			return -1;
		uint8_t l = query[pos];
		if (l > 63 || pos + 1 + l > qlen || nlen + 1 + l > 255)
			return -1;
		qname[nlen++] = l;
		for (size_t i = 1; i <= l; i++)
			qname[nlen++] = lower(query[pos + i]);
		pos += 1 + (size_t)l;
		if (l == 0)
			break;
	}
	if (pos + 4 > qlen)
		return -1;
	uint16_t qflags = ld16be(query + 2);
	uint16_t qtype = ld16be(query + pos), qclass = ld16be(query + pos + 2);
	uint8_t kflags = (qflags & 0x0010) ? 1 : 0;
	size_t qend = pos + 4;

	uint64_t h = hash_key(qname, nlen, qtype, qclass, kflags);
	node_t *n = *find(c, h, qname, nlen, qtype, qclass, kflags);
	if (n == NULL)
		return 1;
	before_entry_t *e = n->entry;
	uint32_t age = now - (uint32_t)e->inception;
	if (age > e->ttl)
		return 1;
	e->hits++;

	if (cap < qend)
		return -1;
	memcpy(out, query, 2);
	put16(out + 2, 0x8000 | (qflags & 0x0110) | (e->recursion_available ? 0x0080 : 0) |
			       (e->authenticated && (qflags & 0x0020) ? 0x0020 : 0) | e->rcode);
	put16(out + 4, 1);
	put16(out + 6, (unsigned)e->answer.len);
	put16(out + 8, (unsigned)e->authority.len);
	put16(out + 10, (unsigned)e->additional.len);
	memcpy(out + 12, query + 12, qend - 12);
	size_t o = qend;
	const rr_vec_t *sec[3] = {&e->answer, &e->authority, &e->additional};
	for (int s = 0; s < 3; s++) {
		for (size_t k = 0; k < sec[s]->len; k++) {
			const before_rr_t *r = &sec[s]->ptr[k];
			const uint8_t *rd;
			size_t rdlen;
			if (r->type == 1)
				rd = r->d.a, rdlen = 4;
			else if (r->type == 28)
				rd = r->d.aaaa, rdlen = 16;
			else
				rd = r->d.raw.ptr, rdlen = r->d.raw.len;
			int self = r->owner.len == nlen && name_eq_nocase(r->owner.ptr, qname, nlen);
			size_t olen = self ? 2 : r->owner.len;
			if (cap - o < olen + 10 + rdlen)
				return -1;
			if (self)
				put16(out + o, 0xc00c);
			else
				memcpy(out + o, r->owner.ptr, olen);
			o += olen;
			uint32_t ttl = r->ttl > age ? r->ttl - age : 0;
			put16(out + o, r->type);
			put16(out + o + 2, r->rclass);
			put16(out + o + 4, ttl >> 16);
			put16(out + o + 6, ttl & 0xffff);
			put16(out + o + 8, (unsigned)rdlen);
			memcpy(out + o + 10, rd, rdlen);
			o += 10 + rdlen;
		}
	}
	*out_len = o;
	return 0;
}
