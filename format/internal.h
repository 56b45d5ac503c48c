/*
 * internal.h: helpers shared by the format/ sources. Not installed.
 */
#ifndef DNSNAP_FORMAT_INTERNAL_H
#define DNSNAP_FORMAT_INTERNAL_H

#include <stdio.h>
#include <string.h>

#include "byteorder.h"
#include "dnsnap_format.h"

/* ASCII lower-casing as a table: one load a byte on the hot paths. */
extern const uint8_t dnsnap__lower[256];

/*
 * Read cursor with a sticky error (Knot's wire_ctx_t): once a read fails,
 * later reads return zero and leave err/err_off as the first failure, so a
 * caller checks once after a run of reads.
 */
typedef struct rd {
	const uint8_t *p;
	size_t len;
	size_t pos;
	int err;
	size_t err_off;
} rd_t;

static inline rd_t rd_init(const uint8_t *p, size_t len)
{
	rd_t r = { p, len, 0, DNSNAP_OK, 0 };
	return r;
}
static inline int rd_need(rd_t *r, size_t n)
{
	if (r->err != DNSNAP_OK)
		return 0;
	if (r->len - r->pos < n) {
		r->err = DNSNAP_ETRUNC;
		r->err_off = r->pos;
		return 0;
	}
	return 1;
}
static inline uint8_t rd_u8(rd_t *r)
{
	if (!rd_need(r, 1))
		return 0;
	return r->p[r->pos++];
}
static inline uint16_t rd_u16le(rd_t *r)
{
	if (!rd_need(r, 2))
		return 0;
	r->pos += 2;
	return ld16le(r->p + r->pos - 2);
}
static inline uint32_t rd_u32le(rd_t *r)
{
	if (!rd_need(r, 4))
		return 0;
	r->pos += 4;
	return ld32le(r->p + r->pos - 4);
}
static inline uint16_t rd_u16be(rd_t *r)
{
	if (!rd_need(r, 2))
		return 0;
	r->pos += 2;
	return ld16be(r->p + r->pos - 2);
}
static inline uint32_t rd_u32be(rd_t *r)
{
	if (!rd_need(r, 4))
		return 0;
	r->pos += 4;
	return ld32be(r->p + r->pos - 4);
}
static inline const uint8_t *rd_skip(rd_t *r, size_t n)
{
	if (!rd_need(r, n))
		return NULL;
	r->pos += n;
	return r->p + r->pos - n;
}
/* Fail with a given code at a given offset, unless already failed. */
static inline void rd_fail(rd_t *r, int err, size_t off)
{
	if (r->err == DNSNAP_OK) {
		r->err = err;
		r->err_off = off;
	}
}

/*
 * Write cursor with a sticky error, rd_t's twin (the encoder's record buffer,
 * the answer builder's message): a write with no room left writes nothing
 * and sets err (DNSNAP_ETOOBIG), and every later write does nothing, so a
 * caller checks once after a run of writes; clearing err after moving cap
 * writes again.
 */
typedef struct wr {
	uint8_t *p;
	size_t pos;
	size_t cap;
	int err;
} wr_t;

/* @return 1 when n bytes fit (nothing written yet), else 0 with err set */
static inline int wr_room(wr_t *w, size_t n)
{
	if (w->err != DNSNAP_OK || w->cap - w->pos < n) {
		w->err = DNSNAP_ETOOBIG;
		return 0;
	}
	return 1;
}
/* n bytes taken for the caller to fill, or NULL */
static inline uint8_t *wr_take(wr_t *w, size_t n)
{
	if (!wr_room(w, n))
		return NULL;
	w->pos += n;
	return w->p + w->pos - n;
}
static inline void wr_u8(wr_t *w, uint8_t v)
{
	if (wr_room(w, 1))
		w->p[w->pos++] = v;
}
static inline void wr_u16be(wr_t *w, uint16_t v)
{
	if (wr_room(w, 2)) {
		st16be(w->p + w->pos, v);
		w->pos += 2;
	}
}
static inline void wr_u32be(wr_t *w, uint32_t v)
{
	if (wr_room(w, 4)) {
		st32be(w->p + w->pos, v);
		w->pos += 4;
	}
}
static inline void wr_bytes(wr_t *w, const uint8_t *s, size_t n)
{
	if (n > 0 && wr_room(w, n)) {
		memcpy(w->p + w->pos, s, n);
		w->pos += n;
	}
}

/* Fill an optional diag and return err: every error leaves through here. */
int dnsnap__diag(dnsnap_diag_t *d, int err, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * Rdata layout of the types whose rdata holds names that may arrive
 * compressed and are stored expanded (wire.c says which). A schema is a
 * string of field codes:
 *   'N' a domain name          '2','4','6' fixed bytes (that many)
 *   'T' 18 fixed bytes (SIG, RRSIG)   'Z' 20 fixed bytes (SOA)
 *   'S' a character-string     'R' opaque rest (may be empty); always last
 * NULL for types copied verbatim.
 */
const char *dnsnap__schema(uint16_t type);

/** A key as a tool user knows it, for messages: "www.example.com. type 1"
 * (unprintable bytes as '?'; cut to fit @p cap, at least 16). */
void dnsnap__key_text(const dnsnap_key_t *k, char *out, size_t cap);

/*
 * Walk rdata against its type's rules: fixed sizes of A/AAAA, and for schema
 * types every field present, names valid and uncompressed, nothing left over.
 * @return DNSNAP_OK or DNSNAP_ERDATA/ELABEL/ENAME with *off relative to rdata
 */
int dnsnap__rdata_check(uint16_t type, const uint8_t *rdata, size_t len, size_t *off);

/*
 * ASCII lower-casing of p[0..n), 8 bytes at a time: a byte gets 0x20 when it
 * is below 0x80 and within 'A'..'Z'. Length bytes (0..63) are never letters,
 * so a whole name can go through it.
 */
static inline void dnsnap__lower_bytes(uint8_t *p, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t x;
		memcpy(&x, p + i, 8);
		uint64_t h = x & UINT64_C(0x7f7f7f7f7f7f7f7f);
		uint64_t ge_a = h + UINT64_C(0x3f3f3f3f3f3f3f3f);   /* top bit: >= 'A' */
		uint64_t gt_z = h + UINT64_C(0x2525252525252525);   /* top bit: > 'Z' */
		uint64_t upper = (ge_a ^ gt_z) & ~x & UINT64_C(0x8080808080808080);
		x |= upper >> 2;
		memcpy(p + i, &x, 8);
	}
	for (; i < n; i++)
		p[i] = dnsnap__lower[p[i]];
}

/* The fields after the reversed name (its root label first). */
static inline size_t dnsnap__key_tail(uint8_t *out, size_t o, uint16_t qtype, uint16_t qclass,
				      uint8_t flags, const uint8_t *tag, size_t tag_len)
{
	out[o++] = 0;
	st16be(out + o, qtype);
	st16be(out + o + 2, qclass);
	out[o + 4] = flags;
	out[o + 5] = (uint8_t)tag_len;
	o += 6;
	if (tag_len > 0)
		memcpy(out + o, tag, tag_len);
	return o + tag_len;
}

/*
 * Build a key from a name already checked label by label (the query parser's
 * one pass): @p starts holds the offsets in @p name (@p name_len bytes, its
 * root label included) of its @p nl labels, in order. The caller checked the
 * flags, the tag and that the key fits (name_len + 6 + tag_len <=
 * DNSNAP_KEY_MAX); @p out must hold DNSNAP_KEY_MAX bytes (the name's labels
 * are copied 16 bytes at a time, past what they need). @return the key's
 * length
 */
static inline size_t dnsnap__key_put(const uint8_t *name, size_t name_len, const uint8_t *starts,
				     size_t nl, uint16_t qtype, uint16_t qclass, uint8_t flags,
				     const uint8_t *tag, size_t tag_len, uint8_t *out)
{
	/* The name lower-cased whole (8 bytes at a time: tmp has the room),
	 * then its labels copied in reverse order 16 bytes at a time: what a
	 * copy writes past its label is written over by the next label, or by
	 * the tail (out has the room). No call per label. */
	uint8_t tmp[DNSNAP_NAME_MAX + 17];
	memcpy(tmp, name, name_len);
	dnsnap__lower_bytes(tmp, (name_len + 7) & ~(size_t)7);
	size_t o = 0;
	while (nl > 0) {
		const uint8_t *l = tmp + starts[--nl];
		size_t n = 1 + (size_t)l[0];
		for (size_t k = 0; k < n; k += 16)
			memcpy(out + o + k, l + k, 16);
		o += n;
	}
	return dnsnap__key_tail(out, o, qtype, qclass, flags, tag, tag_len);
}


/* An entry's header as dnsnap_entry_header() decodes it, without its checks,
 * for entries encoded or validated in this process (the cache's): Hits is
 * not read (the cache's live counter is there, counted by other threads). */
static inline void dnsnap__hdr_trusted(const uint8_t *entry, size_t len, dnsnap_hdr_t *h)
{
	h->inception = ld32le(entry);
	h->expiry = ld32le(entry + 4);
	h->hits = 0;
	h->flags = ld16le(entry + 12);
	h->auth_off = ld16le(entry + 14);
	h->addl_off = ld16le(entry + 16);
	size_t at = DNSNAP_ENTRY_HDR;
	h->ext = NULL;
	h->ext_len = 0;
	if (h->flags & DNSNAP_EF_EXT) {
		h->ext_len = ld16le(entry + at);
		h->ext = entry + at + 2;
		at += 2 + h->ext_len;
	}
	h->records = entry + at;
	h->records_len = len - at;
}

/* dnsnap_iter_init() from a header the caller decoded with
 * dnsnap_entry_header() (so the header is read once). */
void dnsnap__iter_start(dnsnap_iter_t *it, const uint8_t *entry, size_t len,
			const dnsnap_hdr_t *h, const uint8_t *qname, size_t qname_len);

/*
 * Step over the records with SAME that follow the last one dnsnap_iter_next()
 * returned (the rest of its RRset), with the checks dnsnap_iter_next() makes
 * of them, without building a dnsnap_rr_t for each: the answer writer reads
 * those members in place. @return how many, or a negative DNSNAP_E* code
 * (sticky, as dnsnap_iter_next()'s)
 */
int dnsnap__iter_same(dnsnap_iter_t *it);

/* Length of the uncompressed name at p (< max); ELABEL/ENAME/ETRUNC with *off. */
int dnsnap__name_check(const uint8_t *p, size_t max, size_t *off);

/*
 * The question's walk (a query's and a response's): the plain name at @p p,
 * whole within @p max bytes and at most 255 bytes long, with each label's
 * offset from p in @p starts (at most 127 labels fit in 255 bytes) and their
 * count in *nl. One test a label on the hot path. @return the name's length,
 * root label included, or 0 for anything else (a pointer, a bad label, a cut,
 * over 255 bytes): the caller finds which with dnsnap__name_check(), or reads
 * a compressed name with dnsnap_name_unpack().
 */
static inline size_t dnsnap__name_labels(const uint8_t *p, size_t max, uint8_t starts[127],
					 size_t *nl)
{
	size_t lim = max < DNSNAP_NAME_MAX ? max + 1 : DNSNAP_NAME_MAX;
	size_t n = 0;
	for (size_t i = 0;;) {
		if (i >= max)
			return 0;
		uint8_t l = p[i];
		if (l == 0) {
			*nl = n;
			return i + 1;
		}
		if (l > 63 || i + 1 + l >= lim)
			return 0;
		starts[n++] = (uint8_t)i;
		i += 1 + (size_t)l;
	}
}

/* Short names of dnsnap_format.h's, for the format's own sources */
#define TYPE_A     DNSNAP_TYPE_A
#define TYPE_NS    DNSNAP_TYPE_NS
#define TYPE_CNAME DNSNAP_TYPE_CNAME
#define TYPE_SOA   DNSNAP_TYPE_SOA
#define TYPE_AAAA  DNSNAP_TYPE_AAAA
#define TYPE_TXT   DNSNAP_TYPE_TXT
#define TYPE_OPT   DNSNAP_TYPE_OPT
#define TYPE_TSIG  DNSNAP_TYPE_TSIG
#define CLASS_IN   DNSNAP_CLASS_IN
#define RCODE_NXDOMAIN DNSNAP_RCODE_NXDOMAIN
#define EDNS_EDE   15

/* Types whose rdata is exactly one name: their records can be TARGETs (the
 * CNAME chain's next owner, the glue owner after an NS). */
static inline int type_is_target(uint16_t type)
{
	return type == 2 || type == 5 || type == 12 || type == 39; /* NS CNAME PTR DNAME */
}

#define OWN_QNAME 0xffff
#define OWN_NONE  0xfffe

#endif
