/*
 * answer.c: parse a client's query; build the response from an entry.
 *
 * Both run on the hot path: no allocation, no stdio, no system call. The
 * entry is read only through the format readers (dnsnap_iter_*, the header);
 * the response goes straight into the caller's buffer.
 *
 * Decisions (the contract is in engine/dnsnap.h; these are the details):
 *
 * Query parsing
 * - Checked in header order: QR=1 or OPCODE != QUERY -> ENOTCACHE at 2;
 *   QDCOUNT != 1 at 4, ANCOUNT != 0 at 6, NSCOUNT != 0 at 8 (ENOTCACHE);
 *   ARCOUNT > 1 -> EOPT at 10. TC, AA, Z and RCODE bits of a query are
 *   ignored; so are bytes after the last counted record.
 * - The question name must be uncompressed: a pointer is EPOINTER at the
 *   pointer, label types 01/10 ELABEL, over 255 bytes ENAME, a cut name
 *   ETRUNC at 12 (a name is one field, as in spec/FORMAT.md).
 * - The one additional record must be an OPT (TYPE 41) owned by the root:
 *   else EOPT at the record's first byte. Its fields cut: ETRUNC at the
 *   field; RDLENGTH past the end: ETRUNC at RDLENGTH; options overrunning
 *   the rdata: EOPT at the rdata. udp_size = max(512, CLASS); DO is bit 15 of
 *   the TTL's low 16 bits. An EDNS VERSION other than 0 is ENOTCACHE at the
 *   version byte: RFC 6891 6.1.3 wants BADVERS, a transaction-level answer
 *   that the resolver, not the cache, must give.
 * - The key is dnsnap_key_encode() of the name as sent (it lower-cases),
 *   DNSNAP_KF_CD when the query's CD bit is set, and the caller's tag,
 *   built from the label offsets of the one walk of the name (the same
 *   bytes, without dnsnap_key_encode()'s second walk);
 *   ETOOBIG (tag too long for the name) is reported at 12; a tag over 255
 *   bytes or a NULL argument is EINVAL at 0.
 *
 * Answer building
 * - Size limit: o->max_size if non-zero, else the client's size (q->udp_size,
 *   taken as 512 when below), and never more than @p cap. The header, the
 *   question and the OPT (11 bytes) are always written when they fit in
 *   @p cap, even when they exceed the limit (a max_size below them): else
 *   DNSNAP_ENOSPC. EDE options go into the OPT, in the entry's order, while
 *   the OPT still fits the limit together with header and question; the
 *   first one that does not fit and all after it are left out (EDE is
 *   advisory, RFC 8914). The OPT's space is reserved before any record is
 *   written, so a cut never loses the OPT.
 * - Records are written RRset by RRset (a record with SAME continues the
 *   previous record's RRset). An RRset that does not fit is rolled back
 *   whole (bytes and compression-table entries) and nothing after it is
 *   written; TC is set if that RRset was in the answer or authority section
 *   (RFC 2181 section 9), not when it was in additional.
 * - DNSSEC RRsets (RRSIG, NSEC, NSEC3) are left out unless the client set DO
 *   or asked for that type, and then only in the answer section: RFC 4035
 *   3.2.1, without DO "strip any authenticating DNSSEC RRs" but not the
 *   types the query asked for; the RRSIGs of the authority's NS and the
 *   additional addresses authenticate, whatever the query type.
 * - Round robin: an A or AAAA RRset of n > 1 members starts at member
 *   o->rotate % n and wraps around. The iterator is copied after the
 *   RRset's first record (only when the next record's Rec_Flags has SAME)
 *   and replayed, twice at most, so this stays allocation-free for RRsets
 *   of any size.
 * - TTL, with age = max(0, (int32_t)(now - Inception)): in an entry of
 *   kind ANSWER or REFERRAL, max(0, clamp(TTL, o->min_ttl, o->max_ttl) -
 *   age), the cap first and then the floor (as the cache's policy sets the
 *   entry's life: min_ttl wins over max_ttl); every RRset keeps its own
 *   remaining TTL, as Unbound, BIND and dnsdist's packet cache serve them, so
 *   a CNAME 3600 in front of an A 300 does not go out at 295. The entry
 *   still dies with its shortest record (its Expiry), so no record is served
 *   from it after that record's own TTL ran out. In an NXDOMAIN or NODATA
 *   entry the answer section's records (a CNAME chain before the name that
 *   does not exist) are served so too, as Unbound serves them, and the
 *   authority and additional sections' with min(max(0, TTL - age), left),
 *   left = max(0, (int32_t)(Expiry - now)): the SOA is served with the
 *   entry's time left, which is RFC 2308's negative TTL (min(SOA TTL,
 *   MINIMUM)) as max_neg_ttl capped it. With
 *   o->stale every TTL is DNSNAP_STALE_TTL.
 * - A stale answer's OPT ends with EDE 3 "Stale Answer" (RFC 8914 section
 *   4.4; RFC 8767 section 4 suggests it), after the entry's own EDE options,
 *   unless one of those is already EDE 3. Its 6 bytes are kept back before
 *   the entry's options take their share of the size limit.
 * - Owners elided in the entry (mode QNAME, and SAME records of such
 *   RRsets) are written as the pointer 0xc00c to the echoed question, so the
 *   client's 0x20 spelling comes back; a root query name is written as the
 *   single byte 00 instead (shorter than a pointer).
 * - Compression: a table of up to CTAB_MAX offsets on the stack, one per
 *   label start written as plain labels (the question's labels, then those
 *   of owners and compressed rdata names), only offsets < 0x4000, each with
 *   the uncompressed length of the name from there (a cheap filter). A name
 *   is matched suffix by suffix, longest first, against the names at those
 *   offsets (following their pointers), ASCII case-insensitively; the first
 *   match becomes a pointer. Pointers thus always point backwards, to a
 *   label start at or after 12. When the table is full, further names are
 *   still compressed against it but add nothing. Compressed: every owner
 *   not elided, and the rdata names of the RFC 1035 types of RFC 3597
 *   section 4 (NS, MD, MF, CNAME, SOA, MB, MG, MR, PTR, MINFO, MX). Names in
 *   the rdata of RP, AFSDB, RT, PX, SRV, NAPTR, SIG, NXT, KX, DNAME, RRSIG,
 *   NSEC, TALINK, SVCB, HTTPS, LP, TKEY are written as stored (uncompressed:
 *   RFC 3597 and RFC 6672 forbid compressing them on the wire, and they are
 *   not registered as targets either). Everything else is copied verbatim.
 * - Rdata of a compressed type that does not parse by its layout is
 *   DNSNAP_ERDATA (dnsnap_entry_validate() rejects such entries; an entry
 *   made in-process by dnsnap_msg_encode() never has them).
 * - Header: ID, RD and CD copied; QR and RA set; OPCODE 0, AA 0; AD when
 *   the entry has AUTH and the client set DO or AD (RFC 6840 5.8); RCODE
 *   from the entry. An OPT is added iff the query had one: CLASS =
 *   o->our_udp_size (DNSNAP_EDNS_SIZE, 1232, when 0), TTL = 0 except DO echoed.
 * - EDE options are read from the entry's extension area in one linear pass
 *   (the TLV layout of spec/FORMAT.md); dnsnap_entry_ede() restarts from the
 *   first TLV on every call, which is quadratic over many options.
 */
#include <string.h>

#include "dnsnap.h"
#include "tier.h"
#include "../format/internal.h"

#define HDR_LEN      DNSNAP_WIRE_HDR_LEN
#define OPT_FIXED    11      /* root owner, TYPE, CLASS, TTL, RDLENGTH */
#define CTAB_MAX     128     /* compression targets per message */
#define PTR_MAX      0x4000  /* pointers hold 14 bits */

#define EDE_STALE 3          /* RFC 8914 INFO-CODE "Stale Answer" */
#define EDE_STALE_LEN 6      /* its option: code, length, INFO-CODE */

/* ------------------------------------------------------------------ query */

/* The query's one additional record, at @p p: a root OPT, read into @p t. */
static int query_opt(const uint8_t *msg, size_t len, size_t p, dnsnap_query_t *t,
		     dnsnap_diag_t *diag)
{
	size_t rec = p;
	if (p >= len)
		return dnsnap__diag(diag, DNSNAP_ETRUNC, p, "additional record cut");
	if (msg[p] != 0)
		return dnsnap__diag(diag, DNSNAP_EOPT, rec,
				    "additional record at 0x%zx is not a root OPT", rec);
	p++;
	if (len - p < 2)
		return dnsnap__diag(diag, DNSNAP_ETRUNC, p, "OPT TYPE cut");
	if (ld16be(msg + p) != TYPE_OPT)
		return dnsnap__diag(diag, DNSNAP_EOPT, rec,
				    "additional record at 0x%zx is not an OPT", rec);
	p += 2;
	if (len - p < 2)
		return dnsnap__diag(diag, DNSNAP_ETRUNC, p, "OPT CLASS cut");
	uint16_t size = ld16be(msg + p);
	p += 2;
	if (len - p < 4)
		return dnsnap__diag(diag, DNSNAP_ETRUNC, p, "OPT TTL cut");
	uint8_t version = msg[p + 1];
	uint16_t eflags = ld16be(msg + p + 2);
	if (version != 0)
		return dnsnap__diag(diag, DNSNAP_ENOTCACHE, p + 1,
				    "EDNS version %u (BADVERS is the resolver's)", version);
	p += 4;
	if (len - p < 2)
		return dnsnap__diag(diag, DNSNAP_ETRUNC, p, "OPT RDLENGTH cut");
	size_t rdlen = ld16be(msg + p);
	if (len - p - 2 < rdlen)
		return dnsnap__diag(diag, DNSNAP_ETRUNC, p, "OPT RDLENGTH %zu past the end",
				    rdlen);
	p += 2;
	for (size_t o = 0; o < rdlen;) {
		if (rdlen - o < 4 || rdlen - o - 4 < ld16be(msg + p + o + 2))
			return dnsnap__diag(diag, DNSNAP_EOPT, p,
					    "OPT options overrun the rdata at 0x%zx", p);
		o += 4 + (size_t)ld16be(msg + p + o + 2);
	}
	t->edns = 1;
	t->udp_size = size < 512 ? 512 : size;
	t->do_bit = (eflags & DNSNAP_EDNS_DO) != 0;
	return DNSNAP_OK;
}

/* What is wrong with the question name, which dnsnap__name_labels() refused:
 * the first label at fault, as dnsnap__name_check() finds it. */
static int __attribute__((noinline)) qname_fault(const uint8_t *msg, size_t len,
						 dnsnap_diag_t *diag)
{
	size_t off = 0;
	int n = dnsnap__name_check(msg + HDR_LEN, len - HDR_LEN, &off);
	size_t p = HDR_LEN + off;
	if (n == DNSNAP_ELABEL && (msg[p] & 0xc0) == 0xc0)
		return dnsnap__diag(diag, DNSNAP_EPOINTER, p,
				    "compression pointer in the question at 0x%zx", p);
	if (n == DNSNAP_ELABEL)
		return dnsnap__diag(diag, DNSNAP_ELABEL, p, "label type 0x%02x at 0x%zx",
				    msg[p] & 0xc0, p);
	if (n == DNSNAP_ENAME)
		return dnsnap__diag(diag, DNSNAP_ENAME, p, "name over 255 bytes at 0x%zx", p);
	return dnsnap__diag(diag, DNSNAP_ETRUNC, HDR_LEN, "question name cut");
}

int dnsnap_query_parse(const uint8_t *msg, size_t len, const uint8_t *tag, size_t tag_len,
		       dnsnap_query_t *q, dnsnap_diag_t *diag)
{
	if (msg == NULL || q == NULL || (tag == NULL && tag_len > 0))
		return dnsnap__diag(diag, DNSNAP_EINVAL, 0, "invalid argument");
	if (len < HDR_LEN)
		return dnsnap__diag(diag, DNSNAP_ETRUNC, 0, "query shorter than a header");

	/* Everything is built here and copied out on success; the key, last,
	 * straight into q once nothing can fail. */
	dnsnap_query_t t;
	uint8_t starts[127]; /* label offsets from 12 */
	size_t nl = 0;
	t.msg = msg;
	t.len = len;
	t.id = ld16be(msg);
	t.flags = ld16be(msg + 2);
	if ((t.flags & DNSNAP_WIRE_QR) || (t.flags & DNSNAP_WIRE_OPCODE))
		return dnsnap__diag(diag, DNSNAP_ENOTCACHE, 2, "not a QUERY (flags 0x%04x)",
				    t.flags);
	if (ld32be(msg + 4) != 0x00010000u || ld16be(msg + 8) != 0) {
		static const char *const what[3] = { "QDCOUNT", "ANCOUNT", "NSCOUNT" };
		for (unsigned i = 0; i < 3; i++) {
			unsigned want = i == 0 ? 1 : 0;
			unsigned c = ld16be(msg + 4 + 2 * i);
			if (c != want)
				return dnsnap__diag(diag, DNSNAP_ENOTCACHE, 4 + 2 * i,
						    "%s %u, not %u", what[i], c, want);
		}
	}
	unsigned arcount = ld16be(msg + 10);
	if (arcount > 1)
		return dnsnap__diag(diag, DNSNAP_EOPT, 10, "ARCOUNT %u: at most one OPT", arcount);

	/* The question name: plain labels only; qname_fault() says what else */
	size_t p = dnsnap__name_labels(msg + HDR_LEN, len - HDR_LEN, starts, &nl);
	if (p == 0)
		return qname_fault(msg, len, diag);
	p += HDR_LEN;
	t.qname_off = HDR_LEN;
	t.qname_len = p - HDR_LEN;
	if (len - p < 2)
		return dnsnap__diag(diag, DNSNAP_ETRUNC, p, "QTYPE cut");
	t.qtype = ld16be(msg + p);
	if (len - p < 4)
		return dnsnap__diag(diag, DNSNAP_ETRUNC, p + 2, "QCLASS cut");
	t.qclass = ld16be(msg + p + 2);
	p += 4;
	t.question_end = p;

	t.edns = 0;
	t.udp_size = 512;
	t.do_bit = 0;
	if (arcount == 1) {
		int err = query_opt(msg, len, p, &t, diag);
		if (err != DNSNAP_OK)
			return err;
	}

	/* The key, from the labels checked above (dnsnap_key_encode()'s checks,
	 * without its second walk of the name). */
	if (tag_len > DNSNAP_TAG_MAX)
		return dnsnap__diag(diag, DNSNAP_EINVAL, 0, "cannot build the key: %s",
				    dnsnap_strerror(DNSNAP_EINVAL));
	if (t.qname_len + 6 + tag_len > DNSNAP_KEY_MAX)
		return dnsnap__diag(diag, DNSNAP_ETOOBIG, HDR_LEN, "cannot build the key: %s",
				    dnsnap_strerror(DNSNAP_ETOOBIG));
	/* nothing fails from here: q is written */
	q->key_len = dnsnap__key_put(msg + HDR_LEN, t.qname_len, starts, nl, t.qtype, t.qclass,
				     (t.flags & DNSNAP_WIRE_CD) ? DNSNAP_KF_CD : 0, tag, tag_len, q->key);
	q->msg = t.msg;
	q->len = t.len;
	q->id = t.id;
	q->flags = t.flags;
	q->qname_off = t.qname_off;
	q->qname_len = t.qname_len;
	q->question_end = t.question_end;
	q->qtype = t.qtype;
	q->qclass = t.qclass;
	q->edns = t.edns;
	q->udp_size = t.udp_size;
	q->do_bit = t.do_bit;
	return DNSNAP_OK;
}

/* ----------------------------------------------------------------- writer */

/* ------------------------------------------------------------ compression */

typedef struct ctab {
	uint16_t off[CTAB_MAX];  /* label starts in the output, ascending */
	uint8_t len[CTAB_MAX];   /* uncompressed length of the name from there */
	unsigned n;
	/* The question's labels come first; they are added by the first
	 * put_name() (most answers compress nothing): */
	const uint8_t *qname;    /* at offset 12 of the output, NULL once added */
	size_t qname_len;
} ctab_t;

static inline void ctab_add(ctab_t *ct, size_t off, size_t len)
{
	if (ct->n < CTAB_MAX && off < PTR_MAX) {
		ct->off[ct->n] = (uint16_t)off;
		ct->len[ct->n++] = (uint8_t)len;
	}
}

/* Whether the name at buf[t] (our own output: labels, maybe ending in a
 * pointer that points backwards) equals the uncompressed name n, ignoring
 * ASCII case. */
static int name_at_eq(const uint8_t *buf, size_t t, const uint8_t *n)
{
	for (unsigned hops = 0; hops < 256; hops++) {
		uint8_t c = buf[t];
		if ((c & 0xc0) == 0xc0) {
			t = (size_t)(c & 0x3f) << 8 | buf[t + 1];
			continue;
		}
		if (c != *n)
			return 0;
		if (c == 0)
			return 1;
		for (size_t k = 1; k <= c; k++)
			if (dnsnap__lower[buf[t + k]] != dnsnap__lower[n[k]])
				return 0;
		t += 1 + (size_t)c;
		n += 1 + (size_t)c;
	}
	return 0;
}

/* Write the valid uncompressed name @p name (length @p len), compressed
 * against the table, and register its new label starts. */
static void put_name(wr_t *w, ctab_t *ct, const uint8_t *name, size_t len)
{
	size_t i = 0, ptr = 0;
	int found = 0;
	if (ct->qname != NULL) {
		if (ct->qname_len > 1)
			for (size_t j = 0; ct->qname[j] != 0; j += 1 + (size_t)ct->qname[j])
				ctab_add(ct, HDR_LEN + j, ct->qname_len - j);
		ct->qname = NULL;
	}
	while (name[i] != 0 && !found) {
		uint8_t rest = (uint8_t)(len - i);
		for (unsigned k = 0; k < ct->n; k++) {
			size_t t = ct->off[k];
			if (ct->len[k] == rest && w->p[t] == name[i] &&
			    name_at_eq(w->p, t, name + i)) {
				found = 1;
				ptr = t;
				break;
			}
		}
		if (!found)
			i += 1 + (size_t)name[i];
	}
	/* name[0..i) as labels, then the pointer or the root label */
	size_t need = found ? i + 2 : len;
	if (!wr_room(w, need))
		return;
	for (size_t j = 0; j < i; j += 1 + (size_t)name[j])
		ctab_add(ct, w->pos + j, len - j);
	memcpy(w->p + w->pos, name, i);
	w->pos += i;
	if (found)
		wr_u16be(w, (uint16_t)(0xc000 | ptr));
	else
		wr_u8(w, 0);
}

/* --------------------------------------------------------------- records */

typedef struct ctx {
	wr_t w;
	ctab_t ct;
	const dnsnap_query_t *q;
	uint32_t age;
	uint32_t left;           /* the entry's time left: negative entries' cap */
	int per_record;          /* a positive entry: each record its own TTL */
	uint32_t min_ttl, max_ttl;
	int stale;
} ctx_t;

/* The rdata layout of the types whose names are compressed: RFC 3597
 * section 4 allows it only in the RFC 1035 types, which are exactly the
 * name-holding types numbered up to 15 (NS, MD, MF, CNAME, SOA, MB, MG, MR,
 * PTR, MINFO, MX). NULL: written as stored. */
static const char *compress_schema(uint16_t type)
{
	/* NS MD MF CNAME SOA MB MG MR PTR MINFO MX: bits 2-9, 12, 14, 15 */
	return type <= 15 && (0xd3fcu >> type & 1) ? dnsnap__schema(type) : NULL;
}

/* @p s: compress_schema() of the record's type */
static int put_rdata(ctx_t *c, const char *s, const uint8_t *rdata, size_t rdlen)
{
	if (s == NULL) {
		wr_bytes(&c->w, rdata, rdlen);
		return DNSNAP_OK;
	}
	size_t i = 0;
	for (; *s; s++) {
		size_t fixed = *s == '2' ? 2 : *s == 'Z' ? 20 : 0;
		if (fixed > 0) {
			if (rdlen - i < fixed)
				return DNSNAP_ERDATA;
			wr_bytes(&c->w, rdata + i, fixed);
			i += fixed;
			continue;
		}
		int n = dnsnap_name_len(rdata + i, rdlen - i);
		if (n < 0)
			return DNSNAP_ERDATA;
		put_name(&c->w, &c->ct, rdata + i, (size_t)n);
		i += (size_t)n;
	}
	return i == rdlen ? DNSNAP_OK : DNSNAP_ERDATA;
}

/* The TTL @p rr goes out with (see the top of this file). */
static inline uint32_t rr_ttl(const ctx_t *c, const dnsnap_rr_t *rr)
{
	uint32_t ttl = rr->ttl;
	if (c->stale) {
		ttl = DNSNAP_STALE_TTL;
	} else if (c->per_record || rr->section == DNSNAP_SEC_ANSWER) {
		if (c->max_ttl != 0 && ttl > c->max_ttl)
			ttl = c->max_ttl;
		if (ttl < c->min_ttl)
			ttl = c->min_ttl;
		ttl = ttl > c->age ? ttl - c->age : 0;
	} else {
		ttl = ttl > c->age ? ttl - c->age : 0;
		if (ttl > c->left)
			ttl = c->left;
	}
	return ttl;
}

/* One record: the owner, type, class and TTL of @p rr, and the given rdata
 * (its own, or that of a SAME member of its RRset). */
static int put_rr(ctx_t *c, const dnsnap_rr_t *rr, const uint8_t *rdata, size_t rdlen)
{
	wr_t *w = &c->w;
	uint32_t ttl = rr_ttl(c, rr);
	const char *schema = compress_schema(rr->type);
	if (rr->owner_mode == DNSNAP_OWNER_QNAME) {
		if (c->q->qname_len == 1)
			wr_u8(w, 0);
		else
			wr_u16be(w, (uint16_t)(0xc000 | c->q->qname_off));
	} else {
		put_name(w, &c->ct, rr->owner, rr->owner_len);
	}
	wr_u16be(w, rr->type);
	wr_u16be(w, rr->rclass);
	wr_u32be(w, ttl);
	size_t rdlen_at = w->pos;
	wr_u16be(w, 0);
	int err = put_rdata(c, schema, rdata, rdlen);
	if (err != DNSNAP_OK)
		return err;
	if (w->err == DNSNAP_OK) /* < 65535: the limit bounds it */
		st16be(w->p + rdlen_at, (uint16_t)(w->pos - rdlen_at - 2));
	return DNSNAP_OK;
}

/*
 * The RRset @p first of @p n members, all owned by the query name, with no
 * names to compress (an A, AAAA or TXT set of the query name): owner, type,
 * class and TTL are the same for every member, so built once; the room for
 * the whole set is checked once (too little: nothing written, the writer
 * full). Members start at @p rot and wrap around; member 0 is @p first,
 * members 1..n-1 the SAME records after it in @p entry, each Rec_Len,
 * Rec_Flags and its rdata.
 */
static void put_plain(ctx_t *c, const uint8_t *entry, const dnsnap_rr_t *first, unsigned n,
		      unsigned rot)
{
	wr_t *w = &c->w;
	size_t off1 = first->offset + 2 + ld16le(entry + first->offset);
	size_t end = off1, at = off1; /* past the last member; member rot */
	for (unsigned k = 1; k < n; k++) {
		if (k == rot)
			at = end;
		end += 2 + ld16le(entry + end);
	}
	size_t own = c->q->qname_len == 1 ? 1 : 2;
	/* per member: owner, type, class, TTL, RDLENGTH and its rdata (a SAME
	 * record is its rdata and 3 bytes) */
	size_t need = n * (own + 10) + first->rdlen + (end - off1) - 3 * (size_t)(n - 1);
	if (!wr_room(w, need))
		return;
	uint8_t fixed[12] = { 0 };
	if (own == 2)
		st16be(fixed, (uint16_t)(0xc000 | c->q->qname_off));
	st16be(fixed + own, first->type);
	st16be(fixed + own + 2, first->rclass);
	st32be(fixed + own + 4, rr_ttl(c, first));
	uint8_t *d = w->p + w->pos;
	size_t off = rot > 0 ? at : off1;
	for (unsigned j = 0; j < n; j++) {
		unsigned m = rot + j < n ? rot + j : rot + j - n;
		const uint8_t *rdata = first->rdata;
		size_t rdlen = first->rdlen;
		if (m == 0) {
			off = off1;
		} else {
			rdlen = ld16le(entry + off) - 1u;
			rdata = entry + off + 3;
			off += 2 + ld16le(entry + off);
		}
		memcpy(d, fixed, 10); /* own + 8 bytes; RDLENGTH is written over the rest */
		d += own + 8;
		st16be(d, (uint16_t)rdlen);
		if (rdlen == 4)
			memcpy(d + 2, rdata, 4);
		else if (rdlen == 16)
			memcpy(d + 2, rdata, 16);
		else
			memcpy(d + 2, rdata, rdlen);
		d += 2 + rdlen;
	}
	w->pos = (size_t)(d - w->p);
}

/*
 * Write one RRset of n members, starting at member rot and wrapping around.
 * Member 0 is @p first; members 1..n-1 are the SAME records that follow it,
 * contiguous in the entry (the caller's iterator has just walked and checked
 * them): each is Rec_Len, Rec_Flags, then its rdata, so they are read in
 * place, with no second pass of the iterator.
 */
static int put_rrset(ctx_t *c, const uint8_t *entry, const dnsnap_rr_t *first, unsigned n,
		     unsigned rot)
{
	size_t off1 = first->offset + 2 + ld16le(entry + first->offset);
	size_t off = off1;
	int err;

	if (first->owner_mode == DNSNAP_OWNER_QNAME && compress_schema(first->type) == NULL) {
		put_plain(c, entry, first, n, rot);
		return DNSNAP_OK;
	}

	if (rot == 0 && (err = put_rr(c, first, first->rdata, first->rdlen)) != DNSNAP_OK)
		return err;
	for (unsigned j = 1; j < n && c->w.err == DNSNAP_OK; j++) {
		size_t len = ld16le(entry + off);
		if (j >= rot && (err = put_rr(c, first, entry + off + 3, len - 1)) != DNSNAP_OK)
			return err;
		off += 2 + len;
	}
	if (rot > 0) {
		if ((err = put_rr(c, first, first->rdata, first->rdlen)) != DNSNAP_OK)
			return err;
		off = off1;
		for (unsigned j = 1; j < rot && c->w.err == DNSNAP_OK; j++) {
			size_t len = ld16le(entry + off);
			if ((err = put_rr(c, first, entry + off + 3, len - 1)) != DNSNAP_OK)
				return err;
			off += 2 + len;
		}
	}
	return DNSNAP_OK;
}

/* ---------------------------------------------------------------- answer */

/* Write the RRset @p first of @p n members (unless DNSSEC rules leave it
 * out), counting it in @p count; a cut rolls it back whole and sets *tc as
 * the top of this file says. @return 0 go on, 1 stop (cut), or an error */
static int emit_rrset(ctx_t *c, const uint8_t *entry, const dnsnap_answer_opts_t *o,
		      const dnsnap_rr_t *first, unsigned n, unsigned count[3], int *tc)
{
	const dnsnap_query_t *q = c->q;
	if (dnsnap_type_is_dnssec(first->type) && !q->do_bit &&
	    (q->qtype != first->type || first->section != DNSNAP_SEC_ANSWER))
		return 0;
	unsigned rot = 0;
	if ((first->type == TYPE_A || first->type == TYPE_AAAA) && n > 1)
		rot = o->rotate % n;
	size_t mark = c->w.pos;
	unsigned ct_mark = c->ct.n;
	int err = put_rrset(c, entry, first, n, rot);
	if (err != DNSNAP_OK)
		return err;
	if (c->w.err != DNSNAP_OK) {
		c->w.pos = mark;
		c->ct.n = ct_mark; /* maybe the question's labels too: nothing follows */
		c->w.err = DNSNAP_OK;
		*tc = first->section != DNSNAP_SEC_ADDITIONAL;
		return 1;
	}
	count[first->section] += n;
	return 0;
}

/* The records of any entry, through the format's iterator. */
static int any_records(ctx_t *c, const uint8_t *entry, size_t entry_len, const dnsnap_hdr_t *h,
		       const dnsnap_answer_opts_t *o, unsigned count[3], int *tc)
{
	dnsnap_iter_t it; /* from the header already decoded, not again */
	dnsnap__iter_start(&it, entry, entry_len, h, c->q->msg + HDR_LEN, c->q->qname_len);
	/* Each RRset: its first record from the iterator, the SAME members
	 * after it stepped over (put_rrset() reads them in place), and the next
	 * RRset's first record read before this one is written, so that a
	 * damaged entry fails before anything of it is served. */
	dnsnap_rr_t rrs[2];
	dnsnap_rr_t *first = &rrs[0], *next = &rrs[1];
	int rc = dnsnap_iter_next(&it, first);
	while (rc == 1) {
		int same = dnsnap__iter_same(&it);
		if (same < 0)
			return same;
		rc = dnsnap_iter_next(&it, next);
		if (rc < 0)
			return rc;
		dnsnap_rr_t *cur = first;
		first = next;
		next = cur;
		int r = emit_rrset(c, entry, o, cur, 1 + (unsigned)same, count, tc);
		if (r != 0)
			return r < 0 ? r : DNSNAP_OK;
	}
	return DNSNAP_OK;
}

#define NOT_PLAIN 1

/*
 * The records of the usual entry, without the iterator: every owner is the
 * query name (mode QNAME, or SAME) and no rdata has names to compress (an
 * A, AAAA or TXT answer). A first walk checks every record as
 * dnsnap_iter_next() would and gives up (NOT_PLAIN, nothing written) at
 * anything else or anything wrong, for any_records() to write or report;
 * so this writes exactly what any_records() would, and fails never.
 * @p trusted (an entry the cache encoded or validated itself): no first
 * walk; an RRset that is not plain gives NOT_PLAIN when it is met, with
 * RRsets before it written: the caller starts over with any_records().
 */
static inline __attribute__((always_inline)) int
plain_records(ctx_t *c, const uint8_t *entry, const dnsnap_hdr_t *h, const dnsnap_answer_opts_t *o,
	      unsigned count[3], int *tc, int trusted)
{
	const uint8_t *rec = h->records;
	size_t len = h->records_len;
	unsigned prev_sec = 0;
	for (size_t pos = 0, n = 0; !trusted && pos < len; pos += 2 + (size_t)ld16le(rec + pos), n++) {
		if (len - pos < 3)
			return NOT_PLAIN;
		size_t rlen = ld16le(rec + pos);
		uint8_t flags = rec[pos + 2];
		unsigned sec = pos < h->auth_off ? DNSNAP_SEC_ANSWER
			       : pos < h->addl_off ? DNSNAP_SEC_AUTHORITY : DNSNAP_SEC_ADDITIONAL;
		if (rlen == 0 || len - pos - 2 < rlen)
			return NOT_PLAIN;
		if (flags == DNSNAP_RF_SAME) {
			if (n == 0 || sec != prev_sec)
				return NOT_PLAIN;
			continue;
		}
		if ((flags & ~DNSNAP_RF_CLASS) != 0) /* an owner stored, or a bit wrong */
			return NOT_PLAIN;
		size_t fixed = flags & DNSNAP_RF_CLASS ? 9 : 7; /* Rec_Flags Type [Class] TTL */
		if (rlen < fixed || compress_schema(ld16le(rec + pos + 3)) != NULL ||
		    ((flags & DNSNAP_RF_CLASS) && ld16le(rec + pos + 5) == CLASS_IN) ||
		    ld32le(rec + pos + fixed - 2) > DNSNAP_TTL_MAX)
			return NOT_PLAIN;
		prev_sec = sec;
	}
	dnsnap_rr_t first;
	first.owner = c->q->msg + HDR_LEN;
	first.owner_len = c->q->qname_len;
	first.owner_mode = DNSNAP_OWNER_QNAME;
	for (size_t pos = 0, i = 0; pos < len; i++) {
		size_t rlen = ld16le(rec + pos);
		uint8_t flags = rec[pos + 2];
		size_t fixed = flags & DNSNAP_RF_CLASS ? 9 : 7;
		first.type = ld16le(rec + pos + 3);
		/* trusted: the first walk's test, RRset by RRset (an entry the
		 * cache wrote holds nothing else wrong) */
		if (trusted && ((flags & ~DNSNAP_RF_CLASS) != 0 || compress_schema(first.type) != NULL))
			return NOT_PLAIN;
		first.rclass = flags & DNSNAP_RF_CLASS ? ld16le(rec + pos + 5) : CLASS_IN;
		first.ttl = ld32le(rec + pos + fixed - 2);
		first.rdata = rec + pos + 2 + fixed;
		first.rdlen = rlen - fixed;
		first.section = pos < h->auth_off ? DNSNAP_SEC_ANSWER
				: pos < h->addl_off ? DNSNAP_SEC_AUTHORITY : DNSNAP_SEC_ADDITIONAL;
		first.index = (unsigned)i;
		first.offset = (size_t)(rec - entry) + pos;
		unsigned n = 1;
		pos += 2 + rlen;
		while (pos < len && rec[pos + 2] == DNSNAP_RF_SAME) {
			pos += 2 + (size_t)ld16le(rec + pos);
			n++;
		}
		i += n - 1;
		int r = emit_rrset(c, entry, o, &first, n, count, tc);
		if (r != 0)
			return r < 0 ? r : DNSNAP_OK;
	}
	return DNSNAP_OK;
}

/* Walk the extension area's EDE TLVs once; with @p out, write each option
 * that fits within @p budget bytes of OPT rdata. Returns the rdata length
 * of the options taken (the prefix that fits), or a negative error; with
 * @p stale, whether one taken is EDE 3 "Stale Answer". */
static long ede_options(const dnsnap_hdr_t *h, size_t budget, wr_t *out, int *stale)
{
	size_t total = 0;
	const uint8_t *x = h->ext;
	size_t len = h->ext != NULL ? h->ext_len : 0;
	for (size_t i = 0; i < len;) {
		if (len - i < 3 || len - i - 3 < ld16le(x + i + 1))
			return DNSNAP_ETRUNC;
		uint8_t type = x[i];
		size_t dlen = ld16le(x + i + 1);
		const uint8_t *d = x + i + 3;
		i += 3 + dlen;
		if (type != DNSNAP_EXT_EDE)
			continue;
		if (dlen < 2)
			return DNSNAP_EFIELD;
		if (budget - total < 4 + dlen)
			break;
		if (stale != NULL && ld16be(d) == EDE_STALE)
			*stale = 1;
		if (out != NULL) {
			wr_u16be(out, EDNS_EDE);
			wr_u16be(out, (uint16_t)dlen);
			wr_bytes(out, d, dlen);
		}
		total += 4 + dlen;
	}
	return (long)total;
}

static inline __attribute__((always_inline)) int
answer_impl(const dnsnap_query_t *q, const uint8_t *entry, size_t entry_len,
	    const dnsnap_answer_opts_t *o, uint8_t *out, size_t cap, size_t *out_len, int trusted)
{
	if (q == NULL || entry == NULL || o == NULL || out == NULL || out_len == NULL ||
	    q->msg == NULL || q->qname_off != HDR_LEN || q->question_end > q->len ||
	    q->question_end != q->qname_off + q->qname_len + 4)
		return DNSNAP_EINVAL;

	dnsnap_hdr_t h;
	int err = DNSNAP_OK;
	if (trusted)
		dnsnap__hdr_trusted(entry, entry_len, &h);
	else if ((err = dnsnap_entry_header(entry, entry_len, &h, NULL)) != DNSNAP_OK)
		return err;

	size_t qlen = q->question_end - HDR_LEN;
	size_t base = HDR_LEN + qlen + (q->edns ? OPT_FIXED : 0);
	if (cap < base)
		return DNSNAP_ENOSPC;
	size_t limit = o->max_size ? o->max_size : (q->udp_size < 512 ? 512 : q->udp_size);
	if (limit > cap)
		limit = cap;
	if (limit < base)
		limit = base;

	size_t opt_len = 0, ede_len = 0, stale_ede = 0;
	if (q->edns) {
		size_t budget = limit - base;
		if (budget > 65535)
			budget = 65535;
		if (o->stale && budget >= EDE_STALE_LEN)
			stale_ede = EDE_STALE_LEN;
		int has_stale = 0;
		long n = ede_options(&h, budget - stale_ede, NULL, &has_stale);
		if (n < 0)
			return (int)n;
		if (has_stale)
			stale_ede = 0;
		ede_len = (size_t)n;
		opt_len = OPT_FIXED + ede_len + stale_ede;
	}

	ctx_t c;
	c.w.p = out;
	c.w.pos = 0;
	c.w.cap = limit - opt_len; /* the OPT's room is kept back */
	c.w.err = DNSNAP_OK;
	c.ct.n = 0;
	c.q = q;
	int32_t age = (int32_t)(o->now - h.inception);
	c.age = age > 0 ? (uint32_t)age : 0;
	int32_t left = (int32_t)(h.expiry - o->now);
	c.left = left > 0 ? (uint32_t)left : 0;
	c.stale = o->stale;
	unsigned kind = dnsnap_hdr_kind(&h);
	c.per_record = kind == DNSNAP_KIND_ANSWER || kind == DNSNAP_KIND_REFERRAL;
	c.min_ttl = o->min_ttl;
	c.max_ttl = o->max_ttl;

	/* header (counts and flags filled at the end), then the question */
	c.w.pos = HDR_LEN;
	memcpy(out + HDR_LEN, q->msg + HDR_LEN, qlen);
	c.ct.qname = q->msg + HDR_LEN;
	c.ct.qname_len = q->qname_len;
	c.w.pos += qlen;

	unsigned count[3] = { 0, 0, 0 };
	int tc = 0;
	err = plain_records(&c, entry, &h, o, count, &tc, trusted);
	if (err == NOT_PLAIN) {
		c.w.pos = HDR_LEN + qlen; /* what the trusted walk wrote goes */
		c.w.err = DNSNAP_OK;
		count[0] = count[1] = count[2] = 0;
		tc = 0;
		err = any_records(&c, entry, entry_len, &h, o, count, &tc);
	}
	if (err != DNSNAP_OK)
		return err;

	if (q->edns) {
		c.w.cap = limit; /* the room kept back */
		wr_u8(&c.w, 0);
		wr_u16be(&c.w, TYPE_OPT);
		wr_u16be(&c.w, o->our_udp_size ? o->our_udp_size : DNSNAP_EDNS_SIZE);
		wr_u32be(&c.w, q->do_bit ? DNSNAP_EDNS_DO : 0);
		wr_u16be(&c.w, (uint16_t)(opt_len - OPT_FIXED));
		ede_options(&h, ede_len, &c.w, NULL);
		if (stale_ede != 0) {
			wr_u16be(&c.w, EDNS_EDE);
			wr_u16be(&c.w, 2);
			wr_u16be(&c.w, EDE_STALE);
		}
		if (c.w.err != DNSNAP_OK)
			return DNSNAP_ENOSPC; /* cannot happen: the room was reserved */
		count[DNSNAP_SEC_ADDITIONAL]++;
	}

	uint16_t flags = DNSNAP_WIRE_QR | DNSNAP_WIRE_RA |
			 (q->flags & (DNSNAP_WIRE_RD | DNSNAP_WIRE_CD)) | dnsnap_hdr_rcode(&h);
	if (tc)
		flags |= DNSNAP_WIRE_TC;
	if ((h.flags & DNSNAP_EF_AUTH) && (q->do_bit || (q->flags & DNSNAP_WIRE_AD)))
		flags |= DNSNAP_WIRE_AD;
	st16be(out, q->id);
	st16be(out + 2, flags);
	st16be(out + 4, 1);
	st16be(out + 6, (uint16_t)count[0]);
	st16be(out + 8, (uint16_t)count[1]);
	st16be(out + 10, (uint16_t)count[2]);
	*out_len = c.w.pos;
	return DNSNAP_OK;
}

int dnsnap_answer_build(const dnsnap_query_t *q, const uint8_t *entry, size_t entry_len,
			const dnsnap_answer_opts_t *o, uint8_t *out, size_t cap, size_t *out_len)
{
	return answer_impl(q, entry, entry_len, o, out, cap, out_len, 0);
}

int dnsnap__answer_trusted(const dnsnap_query_t *q, const uint8_t *entry, size_t entry_len,
			   const dnsnap_answer_opts_t *o, uint8_t *out, size_t cap, size_t *out_len)
{
	return answer_impl(q, entry, entry_len, o, out, cap, out_len, 1);
}
