/*
 * test_answer.c: dnsnap_query_parse() and dnsnap_answer_build() against ldns.
 *
 * For every response of the ldns-built corpus (tests/helpers/corpus.c), the
 * response is encoded (now = NOW), a query for its question is made here
 * (the question name in random 0x20 case, the same type and class, CD copied
 * from the response; three variants: no EDNS, EDNS without DO, EDNS with DO)
 * and parsed; its key must equal the encoder's. The answer built at NOW + 7
 * with max_size 65535 is parsed with ldns_wire2pkt() and with an independent
 * walker (walk_msg below) and checked:
 *   - the question is echoed byte for byte; header bits (ID, QR, opcode, AA,
 *     TC, RD, RA, AD, CD, RCODE);
 *   - each section holds the original's RRs in order (ldns_rr_compare: owner
 *     case-insensitive, rdata canonical), minus the DNSSEC types for DO=0
 *     clients that did not ask for that type; rdata of types that are not
 *     compressed is byte-exact; owners the entry elides (mode QNAME) are
 *     exactly the query's spelling, read from the raw wire;
 *   - every TTL is the original minus 7, floored at 0 (no min_ttl or
 *     max_ttl given); in NXDOMAIN and NODATA entries, outside the answer
 *     section, no more than the entry's time left (Expiry - now);
 *   - an OPT iff the query had one, DO echoed, EDE options equal to the
 *     original's;
 *   - every compression pointer points to an offset >= 12 and strictly before
 *     the pointer itself.
 * Then truncation (max_size 512 and a small size), round robin, serve-stale,
 * output-bound checks (a buffer of exactly cap bytes against a guard page),
 * and malformed queries.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <ldns/ldns.h>

#include "dnsnap.h"
#include "tier.h"
#include "corpus.h"
#include "guard.h"
#include "wb.h"

#define NOW 1700000000u
#define AGE 7u

/* ------------------------------------------------------------ reporting */

static int g_fails;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void report(const char *where, int line, const char *fmt, ...)
{
	if (g_fails++ >= 40)
		return;
	fprintf(stderr, "%s (test line %d): ", where, line);
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

#define CHECK(where, cond, ...)                                \
	do {                                                   \
		if (!(cond))                                   \
			report((where), __LINE__, __VA_ARGS__); \
	} while (0)

static const char *errname(int e)
{
	const char *s = dnsnap_errname(e);
	return s ? s : "?";
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
	uint64_t x = rng_state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return (uint32_t)((x * 0x2545f4914f6cdd1dull) >> 32);
}

/* --------------------------------------------------------- message walker */

/* An independent reader of the answers: every name is walked with its
 * pointers checked (target >= 12 and < the pointer's own offset), every
 * record bounded by RDLENGTH, and the compressed rdata of the RFC 1035 types
 * walked too. */
typedef struct wrr {
	size_t start, end;        /* the record's bytes */
	unsigned sec;
	uint8_t owner[DNSNAP_NAME_MAX];
	size_t owner_len;
	uint16_t type, rclass;
	uint32_t ttl;
	size_t rdata, rdlen;      /* offset and RDLENGTH */
} wrr_t;

typedef struct wmsg {
	uint16_t id, flags, count[4];
	size_t qend;
	size_t n;                 /* records, OPT included */
	wrr_t *rr;                /* n of them */
	size_t cap;
	int opt;                  /* index of the OPT record, -1 if none */
	const char *err;
	size_t err_at;
} wmsg_t;

static int walk_name(const uint8_t *m, size_t len, size_t *pos, uint8_t *out, size_t *out_len,
		     wmsg_t *w)
{
	size_t p = *pos, n = 0, end = 0;
	for (unsigned hops = 0;; hops++) {
		if (p >= len || hops > 255) {
			w->err = "name cut";
			w->err_at = *pos;
			return -1;
		}
		uint8_t l = m[p];
		if ((l & 0xc0) == 0xc0) {
			if (p + 1 >= len) {
				w->err = "pointer cut";
				w->err_at = p;
				return -1;
			}
			size_t t = (size_t)(l & 0x3f) << 8 | m[p + 1];
			if (t < 12 || t >= p) {
				w->err = "pointer not backwards or into the header";
				w->err_at = p;
				return -1;
			}
			if (end == 0)
				end = p + 2;
			p = t;
			continue;
		}
		if (l & 0xc0) {
			w->err = "bad label type";
			w->err_at = p;
			return -1;
		}
		if (n + 1 + l > DNSNAP_NAME_MAX || p + 1 + l > len) {
			w->err = "name too long or cut";
			w->err_at = p;
			return -1;
		}
		memcpy(out + n, m + p, 1 + (size_t)l);
		n += 1 + (size_t)l;
		p += 1 + (size_t)l;
		if (l == 0)
			break;
	}
	*pos = end ? end : p;
	*out_len = n;
	return 0;
}

static const char *compress_schema(uint16_t type)
{
	switch (type) {
	case 2: case 3: case 4: case 5: case 7: case 8: case 9: case 12:
		return "N";
	case 6:
		return "NNZ";
	case 14:
		return "NN";
	case 15:
		return "2N";
	default:
		return NULL;
	}
}

static void wmsg_free(wmsg_t *w)
{
	free(w->rr);
	memset(w, 0, sizeof *w);
}

/* @return 0 when the message is structurally sound (w->err says why not) */
static int walk_msg(const uint8_t *m, size_t len, wmsg_t *w)
{
	memset(w, 0, sizeof *w);
	w->opt = -1;
	if (len < 12) {
		w->err = "shorter than a header";
		return -1;
	}
	w->id = (uint16_t)(m[0] << 8 | m[1]);
	w->flags = (uint16_t)(m[2] << 8 | m[3]);
	for (int i = 0; i < 4; i++)
		w->count[i] = (uint16_t)(m[4 + 2 * i] << 8 | m[5 + 2 * i]);
	size_t p = 12;
	uint8_t name[DNSNAP_NAME_MAX];
	size_t nlen;
	for (unsigned i = 0; i < w->count[0]; i++) {
		if (walk_name(m, len, &p, name, &nlen, w) != 0)
			return -1;
		if (len - p < 4) {
			w->err = "question cut";
			w->err_at = p;
			return -1;
		}
		p += 4;
	}
	w->qend = p;
	size_t total = (size_t)w->count[1] + w->count[2] + w->count[3];
	w->rr = calloc(total ? total : 1, sizeof *w->rr);
	if (w->rr == NULL) {
		w->err = "out of memory";
		return -1;
	}
	for (size_t k = 0; k < total; k++) {
		wrr_t *r = &w->rr[k];
		r->sec = k < w->count[1] ? 0 : k < (size_t)w->count[1] + w->count[2] ? 1 : 2;
		r->start = p;
		if (walk_name(m, len, &p, r->owner, &r->owner_len, w) != 0)
			return -1;
		if (len - p < 10) {
			w->err = "record header cut";
			w->err_at = p;
			return -1;
		}
		r->type = (uint16_t)(m[p] << 8 | m[p + 1]);
		r->rclass = (uint16_t)(m[p + 2] << 8 | m[p + 3]);
		r->ttl = (uint32_t)m[p + 4] << 24 | (uint32_t)m[p + 5] << 16 |
			 (uint32_t)m[p + 6] << 8 | m[p + 7];
		r->rdlen = (size_t)(m[p + 8] << 8 | m[p + 9]);
		p += 10;
		r->rdata = p;
		if (len - p < r->rdlen) {
			w->err = "rdata past the end";
			w->err_at = p - 2;
			return -1;
		}
		if (r->type == 41) {
			if (w->opt >= 0 || r->sec != 2 || r->owner_len != 1) {
				w->err = "misplaced OPT";
				w->err_at = r->start;
				return -1;
			}
			w->opt = (int)k;
		}
		const char *s = compress_schema(r->type);
		if (s != NULL) {
			size_t q = p, rend = p + r->rdlen;
			for (; *s; s++) {
				if (*s == 'N') {
					if (walk_name(m, rend, &q, name, &nlen, w) != 0)
						return -1;
				} else {
					size_t f = *s == '2' ? 2 : 20;
					if (rend - q < f) {
						w->err = "rdata field cut";
						w->err_at = q;
						return -1;
					}
					q += f;
				}
			}
			if (q != rend) {
				w->err = "rdata longer than its layout";
				w->err_at = q;
				return -1;
			}
		}
		p += r->rdlen;
		r->end = p;
		w->n++;
	}
	if (p != len) {
		w->err = "bytes after the last record";
		w->err_at = p;
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------- queries */

typedef struct qspec {
	uint16_t id, flags;        /* header flags: RD, CD, AD */
	const uint8_t *qname;
	size_t qname_len;
	uint16_t qtype, qclass;
	int edns, do_bit;
	uint16_t udp;
} qspec_t;

static size_t make_query(uint8_t *b, const qspec_t *s)
{
	size_t n = 0;
	b[n++] = (uint8_t)(s->id >> 8);
	b[n++] = (uint8_t)s->id;
	b[n++] = (uint8_t)(s->flags >> 8);
	b[n++] = (uint8_t)s->flags;
	const uint16_t counts[4] = { 1, 0, 0, (uint16_t)(s->edns ? 1 : 0) };
	for (int i = 0; i < 4; i++) {
		b[n++] = (uint8_t)(counts[i] >> 8);
		b[n++] = (uint8_t)counts[i];
	}
	memcpy(b + n, s->qname, s->qname_len);
	n += s->qname_len;
	b[n++] = (uint8_t)(s->qtype >> 8);
	b[n++] = (uint8_t)s->qtype;
	b[n++] = (uint8_t)(s->qclass >> 8);
	b[n++] = (uint8_t)s->qclass;
	if (s->edns) {
		b[n++] = 0;
		b[n++] = 0;
		b[n++] = 41;
		b[n++] = (uint8_t)(s->udp >> 8);
		b[n++] = (uint8_t)s->udp;
		b[n++] = 0;
		b[n++] = 0;
		b[n++] = s->do_bit ? 0x80 : 0;
		b[n++] = 0;
		b[n++] = 0;
		b[n++] = 0;
	}
	return n;
}

/* Flip the case of about half of the letters. */
static void random_case(uint8_t *name, size_t len)
{
	for (size_t p = 0; p < len && name[p] != 0; p += 1 + (size_t)name[p])
		for (size_t k = 1; k <= name[p]; k++) {
			uint8_t c = name[p + k];
			if (((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) && (rnd() & 1))
				name[p + k] = (uint8_t)(c ^ 0x20);
		}
}

/* ------------------------------------------------------------ ldns helpers */

static uint32_t eff_ttl(const ldns_rr *r)
{
	uint32_t t = ldns_rr_ttl(r);
	return t > DNSNAP_TTL_MAX ? 0 : t;
}

static ldns_rr_list *section_list(ldns_pkt *p, unsigned sec)
{
	switch (sec) {
	case 0:
		return ldns_pkt_answer(p);
	case 1:
		return ldns_pkt_authority(p);
	default:
		return ldns_pkt_additional(p);
	}
}

typedef struct ede_list {
	unsigned n;
	uint16_t code[16];
	uint8_t text[16][256];
	size_t text_len[16];
} ede_list_t;

static void ldns_edes(ldns_pkt *p, ede_list_t *out)
{
	memset(out, 0, sizeof *out);
	ldns_edns_option_list *l = ldns_pkt_edns_get_option_list(p);
	if (!l)
		return;
	for (size_t k = 0; k < ldns_edns_option_list_get_count(l) && out->n < 16; k++) {
		ldns_edns_option *o = ldns_edns_option_list_get_option(l, k);
		if (!o || ldns_edns_get_code(o) != LDNS_EDNS_EDE || ldns_edns_get_size(o) < 2)
			continue;
		const uint8_t *d = ldns_edns_get_data(o);
		size_t tl = ldns_edns_get_size(o) - 2;
		out->code[out->n] = (uint16_t)(d[0] << 8 | d[1]);
		out->text_len[out->n] = tl;
		memcpy(out->text[out->n], d + 2, tl < 256 ? tl : 256);
		out->n++;
	}
}

static bool ede_eq(const ede_list_t *a, const ede_list_t *b)
{
	if (a->n != b->n)
		return false;
	for (unsigned k = 0; k < a->n; k++)
		if (a->code[k] != b->code[k] || a->text_len[k] != b->text_len[k] ||
		    memcmp(a->text[k], b->text[k], a->text_len[k] < 256 ? a->text_len[k] : 256))
			return false;
	return true;
}

/* ---------------------------------------------------------- one message */

static dnsnap_encoded_t *enc_buf(void)
{
	static dnsnap_encoded_t *enc;
	if (!enc)
		enc = calloc(1, sizeof *enc);
	return enc;
}

/* What the entry says about each record, in order, filtered as the answer
 * builder must filter them. */
typedef struct exp_rr {
	unsigned sec;
	uint16_t type;
	unsigned mode;            /* owner mode (QNAME for SAME of QNAME RRsets) */
	bool same;                /* continues the previous RRset */
	const uint8_t *rdata;
	size_t rdlen;
} exp_rr_t;

typedef struct exp {
	size_t n;
	exp_rr_t *rr;
} exp_t;

static bool filtered(uint16_t type, unsigned section, const dnsnap_query_t *q)
{
	return dnsnap_type_is_dnssec(type) && !q->do_bit &&
	       (q->qtype != type || section != DNSNAP_SEC_ANSWER);
}

static int expected_records(const uint8_t *entry, size_t len, const dnsnap_query_t *q, exp_t *e)
{
	dnsnap_iter_t it;
	dnsnap_rr_t rr;
	int rc = dnsnap_iter_init(&it, entry, len, q->msg + q->qname_off, q->qname_len);
	if (rc != DNSNAP_OK)
		return rc;
	static exp_rr_t buf[DNSNAP_RECORDS_MAX / 3 + 1]; /* a record takes 3 bytes or more */
	e->n = 0;
	e->rr = buf;
	while ((rc = dnsnap_iter_next(&it, &rr)) == 1) {
		if (filtered(rr.type, rr.section, q))
			continue;
		exp_rr_t *x = &e->rr[e->n++];
		x->sec = rr.section;
		x->type = rr.type;
		x->mode = rr.owner_mode;
		x->same = (entry[rr.offset + 2] & DNSNAP_RF_SAME) != 0;
		x->rdata = rr.rdata;
		x->rdlen = rr.rdlen;
	}
	return rc;
}

typedef struct tstats {
	size_t answers, records, elided, truncated_tc, truncated_notc, cut_checked;
	double ns_total;
	size_t ns_count;
} tstats_t;

static tstats_t g_stats;

/* Check a full answer (no truncation expected) of corpus message i. */
static void check_full(const char *where, const uint8_t *query, size_t qlen,
		       const dnsnap_query_t *q, ldns_pkt *orig, const uint8_t *entry,
		       size_t entry_len, const uint8_t *ans, size_t alen, const exp_t *e)
{
	wmsg_t w;
	if (walk_msg(ans, alen, &w) != 0) {
		report(where, __LINE__, "answer does not walk: %s at %zu", w.err, w.err_at);
		wmsg_free(&w);
		return;
	}
	ldns_pkt *ap = NULL;
	ldns_status st = ldns_wire2pkt(&ap, ans, alen);
	if (st != LDNS_STATUS_OK) {
		report(where, __LINE__, "ldns cannot parse the answer: %s",
		       ldns_get_errorstr_by_id(st));
		wmsg_free(&w);
		return;
	}
	dnsnap_hdr_t h;
	assert_int_equal(dnsnap_entry_header(entry, entry_len, &h, NULL), DNSNAP_OK);

	/* question echoed */
	CHECK(where, w.count[0] == 1 && w.qend == q->question_end &&
		     memcmp(ans + 12, query + 12, q->question_end - 12) == 0,
	      "question not echoed byte for byte");
	(void)qlen;
	/* header */
	uint16_t qf = q->flags;
	CHECK(where, w.id == q->id, "ID %04x, query %04x", w.id, q->id);
	CHECK(where, (w.flags & 0x8000) != 0, "QR clear");
	CHECK(where, (w.flags & 0x7800) == 0, "opcode not 0");
	CHECK(where, (w.flags & 0x0400) == 0, "AA set");
	CHECK(where, (w.flags & 0x0200) == 0, "TC set in a full answer");
	CHECK(where, (w.flags & 0x0100) == (qf & 0x0100), "RD not copied");
	CHECK(where, (w.flags & 0x0080) != 0, "RA clear");
	CHECK(where, (w.flags & 0x0040) == 0, "Z set");
	bool ad = ldns_pkt_ad(orig) && (q->do_bit || (qf & 0x0020));
	CHECK(where, !!(w.flags & 0x0020) == ad, "AD %d, expected %d", !!(w.flags & 0x0020), ad);
	CHECK(where, (w.flags & 0x0010) == (qf & 0x0010), "CD not copied");
	CHECK(where, (w.flags & 0x000f) == (ldns_pkt_get_rcode(orig) & 0xf), "rcode %u, want %u",
	      w.flags & 0xf, (unsigned)ldns_pkt_get_rcode(orig));

	/* sections against the original, filtered; no TTL of a negative entry
	 * outlives the entry */
	int32_t lft = (int32_t)(h.expiry - (NOW + AGE));
	uint32_t left = lft > 0 ? (uint32_t)lft : 0;
	unsigned kind = dnsnap_hdr_kind(&h);
	if (kind == DNSNAP_KIND_ANSWER || kind == DNSNAP_KIND_REFERRAL)
		left = UINT32_MAX;
	size_t k_ans = 0; /* walker records, OPT skipped */
	size_t k_exp = 0;
	for (unsigned s = 0; s < 3; s++) {
		ldns_rr_list *ol = section_list(orig, s), *al = section_list(ap, s);
		size_t ai = 0;
		for (size_t oi = 0; oi < ldns_rr_list_rr_count(ol); oi++) {
			const ldns_rr *o = ldns_rr_list_rr(ol, oi);
			if (filtered((uint16_t)ldns_rr_get_type(o), s, q))
				continue;
			if (ai >= ldns_rr_list_rr_count(al)) {
				report(where, __LINE__, "section %u: answer has %zu records, fewer "
				       "than expected", s, ai);
				break;
			}
			const ldns_rr *a = ldns_rr_list_rr(al, ai++);
			CHECK(where, ldns_rr_compare(o, a) == 0, "section %u record %zu differs", s,
			      ai - 1);
			uint32_t want = eff_ttl(o) > AGE ? eff_ttl(o) - AGE : 0;
			if (want > left && s != 0) /* negative entries: the answer section's own */
				want = left;
			CHECK(where, ldns_rr_ttl(a) == want, "section %u record %zu TTL %u, want %u",
			      s, ai - 1, ldns_rr_ttl(a), want);
			/* the raw record: owner spelling and verbatim rdata */
			while (k_ans < w.n && (int)k_ans == w.opt)
				k_ans++;
			if (k_ans >= w.n || k_exp >= e->n) {
				report(where, __LINE__, "walker/entry record lists too short");
				break;
			}
			const wrr_t *r = &w.rr[k_ans++];
			const exp_rr_t *x = &e->rr[k_exp++];
			CHECK(where, r->sec == s && x->sec == s && r->type == x->type,
			      "record order: walker sec %u type %u, entry sec %u type %u", r->sec,
			      r->type, x->sec, x->type);
			if (x->mode == DNSNAP_OWNER_QNAME) {
				g_stats.elided++;
				CHECK(where, r->owner_len == q->qname_len &&
					     memcmp(r->owner, query + 12, q->qname_len) == 0,
				      "elided owner not spelled as the query");
			}
			if (compress_schema(r->type) == NULL)
				CHECK(where, r->rdlen == x->rdlen &&
					     memcmp(ans + r->rdata, x->rdata, x->rdlen) == 0,
				      "verbatim rdata (type %u) differs", r->type);
			g_stats.records++;
		}
		CHECK(where, ai == ldns_rr_list_rr_count(al), "section %u: %zu records, want %zu", s,
		      ldns_rr_list_rr_count(al), ai);
	}
	CHECK(where, k_exp == e->n, "entry has %zu records to answer, %zu checked", e->n, k_exp);

	/* OPT */
	CHECK(where, (w.opt >= 0) == (q->edns != 0), "OPT %s, query EDNS %d",
	      w.opt >= 0 ? "present" : "absent", q->edns);
	if (w.opt >= 0) {
		CHECK(where, w.opt == (int)w.n - 1, "OPT is not the last record");
		const wrr_t *o = &w.rr[w.opt];
		CHECK(where, o->rclass == 1232, "OPT CLASS %u", o->rclass);
		CHECK(where, o->ttl == (q->do_bit ? 0x8000u : 0u), "OPT TTL %08x", o->ttl);
		CHECK(where, ldns_pkt_edns_do(ap) == (q->do_bit != 0), "DO not echoed");
		ede_list_t eo, ea;
		ldns_edes(orig, &eo);
		ldns_edes(ap, &ea);
		CHECK(where, ede_eq(&eo, &ea), "EDE options differ (%u vs %u)", eo.n, ea.n);
	}
	(void)h;
	ldns_pkt_free(ap);
	wmsg_free(&w);
	g_stats.answers++;
}

/*
 * A truncated answer (limit @p limit) against the full one: both walk; the
 * truncated one holds the first k non-OPT records of the full one, byte for
 * byte at the same offsets; k ends an RRset; TC iff the first left-out record
 * is in answer or authority; and the next RRset would not have fit.
 */
static void check_cut(const char *where, const dnsnap_query_t *q, const uint8_t *full,
		      size_t flen, const uint8_t *cut, size_t clen, size_t limit, const exp_t *e)
{
	wmsg_t wf, wc;
	memset(&wf, 0, sizeof wf);
	memset(&wc, 0, sizeof wc);
	if (walk_msg(full, flen, &wf) != 0 || walk_msg(cut, clen, &wc) != 0) {
		report(where, __LINE__, "walk failed: %s / %s", wf.err ? wf.err : "-",
		       wc.err ? wc.err : "-");
		goto out;
	}
	ldns_pkt *ap = NULL;
	ldns_status st = ldns_wire2pkt(&ap, cut, clen);
	CHECK(where, st == LDNS_STATUS_OK, "ldns cannot parse the cut answer");
	ldns_pkt_free(ap);
	size_t base = q->question_end + (q->edns ? 11 : 0);
	CHECK(where, clen <= limit || clen <= base, "cut answer %zu bytes over the limit %zu",
	      clen, limit);
	size_t nf = wf.n - (wf.opt >= 0), nc = wc.n - (wc.opt >= 0);
	CHECK(where, (wc.opt >= 0) == (q->edns != 0), "OPT lost in the cut");
	CHECK(where, nf == e->n, "full answer has %zu records, entry %zu", nf, e->n);
	if (nc > nf || nc > e->n) {
		report(where, __LINE__, "cut answer has more records than the full one");
		goto out;
	}
	size_t end = nc ? wc.rr[nc - 1].end : wc.qend;
	CHECK(where, nc == 0 || (wf.rr[nc - 1].end == end &&
				 memcmp(full + 12, cut + 12, end - 12) == 0),
	      "the cut answer is not a byte prefix of the full one");
	for (size_t k = 0; k < nc; k++)
		CHECK(where, wc.rr[k].sec == wf.rr[k].sec, "record %zu changed section", k);
	bool whole = nc == nf;
	bool tc = (wc.flags & 0x0200) != 0;
	if (whole) {
		CHECK(where, !tc, "TC set although nothing was left out");
		CHECK(where, (wc.flags & ~0x0200u) == (wf.flags & ~0x0200u), "flags differ");
	} else {
		CHECK(where, !e->rr[nc].same, "RRset split after record %zu", nc);
		unsigned sec = e->rr[nc].sec;
		CHECK(where, tc == (sec < 2), "TC %d with the cut in section %u", tc, sec);
		/* the next RRset would not have fit */
		size_t k = nc + 1;
		while (k < nf && e->rr[k].same)
			k++;
		size_t next = wf.rr[k - 1].end - wf.rr[nc].start;
		CHECK(where, clen + next > limit, "RRset of %zu bytes left out but fits (%zu/%zu)",
		      next, clen, limit);
		if (tc)
			g_stats.truncated_tc++;
		else
			g_stats.truncated_notc++;
	}
	g_stats.cut_checked++;
out:
	wmsg_free(&wf);
	wmsg_free(&wc);
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* The answer from an entry the cache wrote itself (dnsnap__answer_trusted(),
 * no checks) is the checked builder's, byte for byte. */
static void check_trusted(const char *where, const dnsnap_query_t *q, const uint8_t *entry,
			  size_t entry_len, const dnsnap_answer_opts_t *o, const uint8_t *want,
			  size_t want_len)
{
	static uint8_t got[65536];
	size_t glen = 0;
	int rc = dnsnap__answer_trusted(q, entry, entry_len, o, got, sizeof got, &glen);
	CHECK(where, rc == DNSNAP_OK && glen == want_len && memcmp(got, want, glen) == 0,
	      "trusted answer differs (%s, %zu bytes against %zu)", errname(rc), glen, want_len);
}

static void check_message(size_t i)
{
	char where[96];
	uint8_t *wire = NULL;
	size_t len = 0;
	assert_int_equal(corpus_message(i, &wire, &len), 0);
	dnsnap_encoded_t *enc = enc_buf();
	dnsnap_diag_t d;
	int rc = dnsnap_msg_encode(wire, len, NOW, NULL, 0, enc, &d);
	snprintf(where, sizeof where, "corpus[%zu] %s", i, corpus_name(i));
	if (rc != DNSNAP_OK) {
		report(where, __LINE__, "encode: %s at %zu", errname(rc), d.offset);
		free(wire);
		return;
	}
	uint8_t *entry = guard_copy(enc->entry, enc->entry_len);
	ldns_pkt *orig = NULL;
	assert_int_equal(ldns_wire2pkt(&orig, wire, len), LDNS_STATUS_OK);

	uint8_t qn[DNSNAP_NAME_MAX];
	size_t qnlen = enc->qname_len;
	memcpy(qn, wire + enc->qname_off, qnlen);
	uint16_t qtype = (uint16_t)(wire[12 + qnlen] << 8 | wire[13 + qnlen]);
	uint16_t qclass = (uint16_t)(wire[14 + qnlen] << 8 | wire[15 + qnlen]);

	static uint8_t out[65535], cutbuf[65535];
	for (int variant = 0; variant < 3; variant++) {
		snprintf(where, sizeof where, "corpus[%zu] %s variant %d", i, corpus_name(i),
			 variant);
		random_case(qn, qnlen);
		qspec_t s = { (uint16_t)rnd(), 0, qn, qnlen, qtype, qclass, variant > 0,
			      variant == 2, 4096 };
		s.flags = (uint16_t)((rnd() & 1 ? 0x0100 : 0) | (wire[3] & 0x10) |
				     (rnd() & 1 ? 0x0020 : 0));
		uint8_t qbuf[600];
		size_t qlen = make_query(qbuf, &s);
		uint8_t *query = guard_copy(qbuf, qlen);
		dnsnap_query_t q;
		rc = dnsnap_query_parse(query, qlen, NULL, 0, &q, &d);
		if (rc != DNSNAP_OK) {
			report(where, __LINE__, "query_parse: %s at %zu", errname(rc), d.offset);
			guard_free(query);
			continue;
		}
		CHECK(where, q.key_len == enc->key_len && memcmp(q.key, enc->key, q.key_len) == 0,
		      "query key differs from the response's key");
		CHECK(where, q.edns == s.edns && q.do_bit == s.do_bit && q.qtype == qtype &&
			     q.qclass == qclass && q.udp_size == (s.edns ? 4096 : 512),
		      "query fields");

		exp_t e = { 0, NULL };
		assert_int_equal(expected_records(entry, enc->entry_len, &q, &e), 0);

		dnsnap_answer_opts_t o = { .now = NOW + AGE, .max_size = 65535 };
		size_t alen = 0;
		double t0 = now_ns();
		rc = dnsnap_answer_build(&q, entry, enc->entry_len, &o, out, sizeof out, &alen);
		g_stats.ns_total += now_ns() - t0;
		g_stats.ns_count++;
		if (rc != DNSNAP_OK) {
			report(where, __LINE__, "answer_build: %s", errname(rc));
		} else {
			check_full(where, query, qlen, &q, orig, entry, enc->entry_len, out, alen,
				   &e);
			check_trusted(where, &q, entry, enc->entry_len, &o, out, alen);

			/* truncation at 512 and at a small size */
			size_t small = q.question_end + (q.edns ? 11 : 0);
			if (small < 100)
				small = 100;
			const size_t limits[2] = { 512, small };
			for (int li = 0; li < 2; li++) {
				dnsnap_answer_opts_t oc = o;
				oc.max_size = (uint16_t)limits[li];
				size_t clen = 0;
				rc = dnsnap_answer_build(&q, entry, enc->entry_len, &oc, cutbuf,
							 sizeof cutbuf, &clen);
				if (rc != DNSNAP_OK) {
					report(where, __LINE__, "cut answer_build: %s",
					       errname(rc));
					continue;
				}
				check_cut(where, &q, out, alen, cutbuf, clen, limits[li], &e);
				check_trusted(where, &q, entry, enc->entry_len, &oc, cutbuf, clen);
			}

			/* exact-size output buffers against a guard page */
			size_t caps[3] = { alen, alen > 1 ? alen - 1 : 1,
					   q.question_end + (q.edns ? 11 : 0) };
			for (int ci = 0; ci < 3; ci++) {
				uint8_t *g = guard_copy(out, caps[ci]);
				size_t glen = 0;
				rc = dnsnap_answer_build(&q, entry, enc->entry_len, &o, g, caps[ci],
							 &glen);
				if (caps[ci] < caps[2]) { /* no room for header, question, OPT */
					CHECK(where, rc == DNSNAP_ENOSPC, "cap %zu: %s", caps[ci],
					      errname(rc));
					guard_free(g);
					continue;
				}
				CHECK(where, rc == DNSNAP_OK, "cap %zu: %s", caps[ci], errname(rc));
				if (rc == DNSNAP_OK) {
					CHECK(where, glen <= caps[ci], "out_len %zu over cap %zu",
					      glen, caps[ci]);
					if (ci == 0)
						CHECK(where, glen == alen &&
							     memcmp(g, out, alen) == 0,
						      "exact cap changes the answer");
					else
						check_cut(where, &q, out, alen, g, glen, caps[ci],
							  &e);
				}
				guard_free(g);
			}
			uint8_t *g = guard_copy(out, caps[2] - 1);
			size_t glen = 12345;
			rc = dnsnap_answer_build(&q, entry, enc->entry_len, &o, g, caps[2] - 1, &glen);
			CHECK(where, rc == DNSNAP_ENOSPC && glen == 12345,
			      "cap below header+question+OPT: %s", errname(rc));
			guard_free(g);
		}
		guard_free(query);
	}
	ldns_pkt_free(orig);
	guard_free(entry);
	free(wire);
}

static void test_corpus_answers_match_ldns_and_cut_at_rrsets(void **state)
{
	(void)state;
	g_fails = 0;
	memset(&g_stats, 0, sizeof g_stats);
	size_t n = corpus_count();
	for (size_t i = 0; i < n; i++)
		check_message(i);
	fprintf(stderr,
		"test_answer: %zu answers, %zu records, %zu elided owners; %zu cut answers "
		"(%zu with TC, %zu cut in additional); %.0f ns per full answer\n",
		g_stats.answers, g_stats.records, g_stats.elided, g_stats.cut_checked,
		g_stats.truncated_tc, g_stats.truncated_notc,
		g_stats.ns_count ? g_stats.ns_total / (double)g_stats.ns_count : 0.0);
	assert_int_equal(g_fails, 0);
	assert_true(g_stats.answers == 3 * n);
	assert_true(g_stats.truncated_tc > 0);
}

/* ------------------------------------------------------- focused cases */

/* www.example.com. A: 4 A records 192.0.2.1..4, TTL 300. */
static size_t make_a4(wb_t *w, unsigned flags)
{
	put_header(w, flags, 1, 4, 0, 0);
	put_name(w, "www.example.com");
	put_u16(w, 1);
	put_u16(w, 1);
	for (unsigned k = 1; k <= 4; k++) {
		put_ptr(w, 12);
		size_t at = put_fixed(w, 1, 1, 300);
		put_u8(w, 192);
		put_u8(w, 0);
		put_u8(w, 2);
		put_u8(w, k);
		end_rdata(w, at);
	}
	return w->n;
}

typedef struct built {
	dnsnap_encoded_t *enc;
	uint8_t qbuf[600];
	size_t qlen;
	dnsnap_query_t q;
} built_t;

static void build_query_for(built_t *b, const uint8_t *msg, size_t len, int edns, int do_bit,
			    uint16_t qtype_override)
{
	b->enc = enc_buf();
	assert_int_equal(dnsnap_msg_encode(msg, len, NOW, NULL, 0, b->enc, NULL), DNSNAP_OK);
	size_t qnlen = b->enc->qname_len;
	uint16_t qtype = (uint16_t)(msg[12 + qnlen] << 8 | msg[13 + qnlen]);
	qspec_t s = { 0x1234, 0x0100, msg + 12, qnlen,
		      qtype_override ? qtype_override : qtype, 1, edns, do_bit, 1232 };
	b->qlen = make_query(b->qbuf, &s);
	assert_int_equal(dnsnap_query_parse(b->qbuf, b->qlen, NULL, 0, &b->q, NULL), DNSNAP_OK);
}

static void test_round_robin_rotates_an_a_rrset(void **state)
{
	(void)state;
	wb_t w;
	size_t len = make_a4(&w, 0x8180);
	built_t b;
	build_query_for(&b, w.b, len, 0, 0, 0);
	for (unsigned rot = 0; rot < 9; rot++) {
		dnsnap_answer_opts_t o = { .now = NOW, .rotate = rot };
		uint8_t out[512];
		size_t alen;
		assert_int_equal(dnsnap_answer_build(&b.q, b.enc->entry, b.enc->entry_len, &o, out,
						     sizeof out, &alen),
				 DNSNAP_OK);
		wmsg_t m;
		assert_int_equal(walk_msg(out, alen, &m), 0);
		assert_int_equal(m.n, 4);
		for (unsigned k = 0; k < 4; k++) {
			assert_int_equal(m.rr[k].rdlen, 4);
			assert_int_equal(out[m.rr[k].rdata + 3], 1 + (rot + k) % 4);
			assert_int_equal(m.rr[k].ttl, 300);
		}
		wmsg_free(&m);
	}
}

static void test_round_robin_leaves_other_types_alone(void **state)
{
	(void)state;
	/* corpus 7 is MX with two records: never rotated */
	uint8_t *wire;
	size_t len;
	assert_int_equal(corpus_message(7, &wire, &len), 0);
	built_t b;
	build_query_for(&b, wire, len, 0, 0, 0);
	uint8_t a0[1024], a1[1024];
	size_t l0, l1;
	dnsnap_answer_opts_t o = { .now = NOW };
	assert_int_equal(dnsnap_answer_build(&b.q, b.enc->entry, b.enc->entry_len, &o, a0,
					     sizeof a0, &l0), DNSNAP_OK);
	o.rotate = 1;
	assert_int_equal(dnsnap_answer_build(&b.q, b.enc->entry, b.enc->entry_len, &o, a1,
					     sizeof a1, &l1), DNSNAP_OK);
	assert_int_equal(l0, l1);
	assert_memory_equal(a0, a1, l0);
	free(wire);
}

static void test_stale_answers_have_ttl_30(void **state)
{
	(void)state;
	for (size_t i = 0; i < CORPUS_FIXED; i++) {
		uint8_t *wire;
		size_t len;
		assert_int_equal(corpus_message(i, &wire, &len), 0);
		built_t b;
		build_query_for(&b, wire, len, 1, 1, 0);
		dnsnap_answer_opts_t o = { .now = NOW + 999999, .max_size = 65535, .stale = 1 };
		static uint8_t out[65535];
		size_t alen;
		assert_int_equal(dnsnap_answer_build(&b.q, b.enc->entry, b.enc->entry_len, &o, out,
						     sizeof out, &alen),
				 DNSNAP_OK);
		wmsg_t m;
		assert_int_equal(walk_msg(out, alen, &m), 0);
		for (size_t k = 0; k < m.n; k++)
			if ((int)k != m.opt)
				assert_int_equal(m.rr[k].ttl, DNSNAP_STALE_TTL);
		wmsg_free(&m);
		free(wire);
	}
}

static void test_ttls_floor_at_zero_and_never_rise(void **state)
{
	(void)state;
	wb_t w;
	size_t len = make_a4(&w, 0x8180);
	built_t b;
	build_query_for(&b, w.b, len, 0, 0, 0);
	const struct { uint32_t now; uint32_t ttl; } cases[] = {
		{ NOW, 300 }, { NOW + 1, 299 }, { NOW + 300, 0 }, { NOW + 100000, 0 },
		{ NOW - 50, 300 }, /* a clock set back never raises a TTL */
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		dnsnap_answer_opts_t o = { .now = cases[c].now };
		uint8_t out[512];
		size_t alen;
		assert_int_equal(dnsnap_answer_build(&b.q, b.enc->entry, b.enc->entry_len, &o, out,
						     sizeof out, &alen),
				 DNSNAP_OK);
		wmsg_t m;
		assert_int_equal(walk_msg(out, alen, &m), 0);
		for (size_t k = 0; k < m.n; k++)
			assert_int_equal(m.rr[k].ttl, cases[c].ttl);
		wmsg_free(&m);
	}
}

static void test_dnssec_records_go_to_clients_asking_by_type(void **state)
{
	(void)state;
	/* corpus 6: www.example.org. A + RRSIG, AD. Ask for RRSIG without DO. */
	uint8_t *wire;
	size_t len;
	assert_int_equal(corpus_message(6, &wire, &len), 0);
	for (int mode = 0; mode < 3; mode++) {
		built_t b;
		/* 0: A without DO, 1: A with DO, 2: RRSIG without DO */
		build_query_for(&b, wire, len, 1, mode == 1, mode == 2 ? 46 : 0);
		dnsnap_answer_opts_t o = { .now = NOW };
		uint8_t out[1232];
		size_t alen;
		assert_int_equal(dnsnap_answer_build(&b.q, b.enc->entry, b.enc->entry_len, &o, out,
						     sizeof out, &alen),
				 DNSNAP_OK);
		wmsg_t m;
		assert_int_equal(walk_msg(out, alen, &m), 0);
		unsigned sigs = 0;
		for (size_t k = 0; k < m.n; k++)
			sigs += m.rr[k].type == 46;
		assert_int_equal(sigs, mode == 0 ? 0 : 1);
		assert_int_equal(!!(m.flags & 0x20), mode == 1); /* AD only for DO (no AD asked) */
		wmsg_free(&m);
	}
	free(wire);
}

/* RFC 4035 3.2.1: without DO, a query for RRSIG gets the RRSIGs it asked
 * for, in the answer, and none of those that authenticate the authority's
 * NS or the additional addresses (what NSD sends, tests/e2e). */
static void test_rrsig_query_without_do_gets_answer_rrsigs_only(void **state)
{
	(void)state;
	wb_t w;
	put_header(&w, 0x8400, 1, 1, 2, 2);
	put_name(&w, "www.example.org");
	put_u16(&w, 46);
	put_u16(&w, 1);
	const char *owners[] = { "www.example.org", "example.org", "example.org", "ns.example.org",
				 "ns.example.org" };
	const unsigned types[] = { 46, 2, 46, 1, 46 };
	const unsigned covered[] = { 1, 0, 2, 0, 1 };
	for (int i = 0; i < 5; i++) {
		put_name(&w, owners[i]);
		size_t at = put_fixed(&w, types[i], 1, 3600);
		if (types[i] == 2) {
			put_name(&w, "ns.example.org");
		} else if (types[i] == 1) {
			put_u32(&w, 0xc0000235);
		} else { /* RRSIG: type covered, alg 13, labels, TTL, times, tag, signer, sig */
			put_u16(&w, covered[i]);
			put_u8(&w, 13);
			put_u8(&w, 2);
			put_u32(&w, 3600);
			put_u32(&w, 1800000000);
			put_u32(&w, 1700000000);
			put_u16(&w, 4242);
			put_name(&w, "example.org");
			put_label(&w, 32, 's');
		}
		end_rdata(&w, at);
	}
	for (int do_bit = 0; do_bit < 2; do_bit++) {
		built_t b;
		build_query_for(&b, w.b, w.n, 1, do_bit, 0);
		dnsnap_answer_opts_t o = { .now = NOW };
		uint8_t out[1232];
		size_t alen;
		assert_int_equal(dnsnap_answer_build(&b.q, b.enc->entry, b.enc->entry_len, &o, out,
						     sizeof out, &alen),
				 DNSNAP_OK);
		wmsg_t m;
		assert_int_equal(walk_msg(out, alen, &m), 0);
		/* answer: the RRSIG asked for; authority: NS (+ its RRSIG with DO);
		 * additional: the A (+ its RRSIG with DO), then the OPT */
		assert_int_equal(m.count[1], 1);
		assert_int_equal(m.count[2], do_bit ? 2 : 1);
		assert_int_equal(m.count[3], do_bit ? 3 : 2);
		unsigned sigs = 0;
		for (size_t k = 0; k < m.n; k++)
			sigs += m.rr[k].type == 46;
		assert_int_equal(sigs, do_bit ? 3 : 1);
		wmsg_free(&m);
	}
}

static void test_answer_of_a_root_query_name(void **state)
{
	(void)state;
	wb_t w;
	put_header(&w, 0x8180, 1, 1, 0, 0);
	put_u8(&w, 0);
	put_u16(&w, 2);
	put_u16(&w, 1);
	put_u8(&w, 0);
	size_t at = put_fixed(&w, 2, 1, 518400);
	put_name(&w, "a.root-servers.net");
	end_rdata(&w, at);
	built_t b;
	build_query_for(&b, w.b, w.n, 1, 0, 0);
	dnsnap_answer_opts_t o = { .now = NOW };
	uint8_t out[512];
	size_t alen;
	assert_int_equal(dnsnap_answer_build(&b.q, b.enc->entry, b.enc->entry_len, &o, out,
					     sizeof out, &alen),
			 DNSNAP_OK);
	wmsg_t m;
	assert_int_equal(walk_msg(out, alen, &m), 0);
	assert_int_equal(m.n, 2);
	assert_int_equal(m.rr[0].owner_len, 1);
	assert_int_equal(m.rr[0].type, 2);
	wmsg_free(&m);
}

static void test_answer_rejects_bad_arguments(void **state)
{
	(void)state;
	wb_t w;
	size_t len = make_a4(&w, 0x8180);
	built_t b;
	build_query_for(&b, w.b, len, 0, 0, 0);
	dnsnap_answer_opts_t o = { .now = NOW };
	uint8_t out[512];
	size_t alen;
	assert_int_equal(dnsnap_answer_build(NULL, b.enc->entry, b.enc->entry_len, &o, out,
					     sizeof out, &alen), DNSNAP_EINVAL);
	assert_int_equal(dnsnap_answer_build(&b.q, b.enc->entry, b.enc->entry_len, NULL, out,
					     sizeof out, &alen), DNSNAP_EINVAL);
	assert_int_equal(dnsnap_answer_build(&b.q, b.enc->entry, 10, &o, out, sizeof out, &alen),
			 DNSNAP_ETRUNC);
}

/* ------------------------------------------------------------- queries */

static int parse(const uint8_t *p, size_t n, dnsnap_query_t *q, dnsnap_diag_t *d)
{
	uint8_t *g = guard_copy(p, n);
	int rc = dnsnap_query_parse(g, n, NULL, 0, q, d);
	guard_free(g);
	return rc;
}

static size_t std_query(uint8_t *b, int edns, uint16_t udp, int do_bit)
{
	static const uint8_t qn[] = "\3www\7ExAmple\3com";
	qspec_t s = { 0xbeef, 0x0110, qn, sizeof qn, 28, 1, edns, do_bit, udp };
	return make_query(b, &s);
}

static void test_query_parse_reads_the_fields(void **state)
{
	(void)state;
	uint8_t b[600];
	dnsnap_query_t q;
	size_t n = std_query(b, 1, 4096, 1);
	uint8_t *g = guard_copy(b, n);
	assert_int_equal(dnsnap_query_parse(g, n, NULL, 0, &q, NULL), DNSNAP_OK);
	assert_int_equal(q.id, 0xbeef);
	assert_int_equal(q.flags, 0x0110);
	assert_int_equal(q.qname_off, 12);
	assert_int_equal(q.qname_len, 17);
	assert_int_equal(q.question_end, 12 + 17 + 4);
	assert_int_equal(q.qtype, 28);
	assert_int_equal(q.qclass, 1);
	assert_true(q.edns);
	assert_int_equal(q.udp_size, 4096);
	assert_true(q.do_bit);
	uint8_t key[DNSNAP_KEY_MAX];
	size_t klen;
	assert_int_equal(dnsnap_key_encode(g + 12, 17, 28, 1, DNSNAP_KF_CD, NULL, 0, key,
					   sizeof key, &klen), DNSNAP_OK);
	assert_int_equal(q.key_len, klen);
	assert_memory_equal(q.key, key, klen);
	guard_free(g);

	/* a tag goes into the key */
	g = guard_copy(b, n);
	assert_int_equal(dnsnap_query_parse(g, n, (const uint8_t *)"v1", 2, &q, NULL), DNSNAP_OK);
	assert_int_equal(q.key_len, klen + 2);
	assert_memory_equal(q.key + klen, "v1", 2);
	guard_free(g);

	/* small EDNS sizes count as 512; no EDNS is 512 and no DO */
	n = std_query(b, 1, 100, 0);
	assert_int_equal(parse(b, n, &q, NULL), DNSNAP_OK);
	assert_int_equal(q.udp_size, 512);
	assert_false(q.do_bit);
	n = std_query(b, 0, 0, 0);
	assert_int_equal(parse(b, n, &q, NULL), DNSNAP_OK);
	assert_false(q.edns);
	assert_int_equal(q.udp_size, 512);

	/* trailing garbage is ignored */
	n = std_query(b, 1, 1232, 0);
	memcpy(b + n, "junk", 4);
	assert_int_equal(parse(b, n + 4, &q, NULL), DNSNAP_OK);
	assert_int_equal(q.len, n + 4);
}

static void test_query_parse_rejects_what_is_not_a_query(void **state)
{
	(void)state;
	uint8_t b[600];
	dnsnap_query_t q;
	dnsnap_diag_t d;
	size_t n = std_query(b, 1, 1232, 0);
	const size_t opt = 12 + 17 + 4;
	struct {
		size_t at;
		uint8_t val;
		int err;
		size_t off;
	} cases[] = {
		{ 2, 0x80, DNSNAP_ENOTCACHE, 2 },   /* QR */
		{ 2, 0x08, DNSNAP_ENOTCACHE, 2 },   /* opcode 1 */
		{ 5, 0, DNSNAP_ENOTCACHE, 4 },      /* QDCOUNT 0 */
		{ 5, 2, DNSNAP_ENOTCACHE, 4 },      /* QDCOUNT 2 */
		{ 7, 1, DNSNAP_ENOTCACHE, 6 },      /* ANCOUNT 1 */
		{ 9, 1, DNSNAP_ENOTCACHE, 8 },      /* NSCOUNT 1 */
		{ 11, 2, DNSNAP_EOPT, 10 },         /* ARCOUNT 2 */
		{ 12, 0x40, DNSNAP_ELABEL, 12 },    /* label type 01 */
		{ 16, 0xc0, DNSNAP_EPOINTER, 16 },  /* a pointer in the question */
		{ opt, 1, DNSNAP_EOPT, opt },       /* OPT owner not root */
		{ opt + 2, 1, DNSNAP_EOPT, opt },   /* not an OPT (type 0x0101) */
		{ opt + 6, 1, DNSNAP_ENOTCACHE, opt + 6 }, /* EDNS version 1 */
		{ opt + 10, 4, DNSNAP_EOPT, opt + 11 },    /* option header overruns */
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		uint8_t m[600];
		memcpy(m, b, n);
		m[cases[c].at] = cases[c].val;
		size_t mlen = n;
		if (cases[c].at == opt + 10) { /* RDLENGTH 4 with 4 bytes present */
			memcpy(m + n, "\0\x0f\0\x09", 4);
			mlen += 4;
		}
		memset(&d, 0, sizeof d);
		int rc = parse(m, mlen, &q, &d);
		if (rc != cases[c].err || d.offset != cases[c].off)
			fail_msg("case %zu: %s at %zu, want %s at %zu", c, errname(rc), d.offset,
				 errname(cases[c].err), cases[c].off);
	}
	/* RDLENGTH past the end */
	uint8_t m[600];
	memcpy(m, b, n);
	m[opt + 10] = 5;
	assert_int_equal(parse(m, n, &q, &d), DNSNAP_ETRUNC);
	assert_int_equal(d.offset, opt + 9);
	/* a name over 255 bytes */
	wb_t w;
	put_header(&w, 0, 1, 0, 0, 0);
	for (int k = 0; k < 5; k++)
		put_label(&w, 60, 'a');
	put_u8(&w, 0);
	put_u32(&w, 0x00010001);
	assert_int_equal(parse(w.b, w.n, &q, &d), DNSNAP_ENAME);
	assert_int_equal(d.offset, 12 + 4 * 61);
	/* shorter than a header */
	assert_int_equal(parse(b, 11, &q, &d), DNSNAP_ETRUNC);
	assert_int_equal(d.offset, 0);
}

static void test_query_parse_never_crashes_on_cut_or_random_bytes(void **state)
{
	(void)state;
	uint8_t b[600];
	dnsnap_query_t q;
	dnsnap_diag_t d;
	/* every strict prefix of a valid query is an error */
	for (int edns = 0; edns < 2; edns++) {
		size_t n = std_query(b, edns, 1232, 1);
		for (size_t k = 0; k < n; k++) {
			int rc = parse(b, k, &q, &d);
			assert_true(rc < 0);
			assert_non_null(dnsnap_errname(rc));
			assert_true(d.offset <= k);
		}
	}
	/* mutations: any result, never a crash, offsets inside the message */
	size_t n = std_query(b, 1, 1232, 1);
	for (int round = 0; round < 40000; round++) {
		uint8_t m[600];
		memcpy(m, b, n);
		size_t mlen = n;
		int flips = 1 + (int)(rnd() % 4);
		for (int f = 0; f < flips; f++)
			m[rnd() % mlen] = (uint8_t)rnd();
		if (rnd() % 4 == 0)
			mlen = rnd() % (mlen + 1);
		memset(&d, 0, sizeof d);
		int rc = parse(m, mlen, &q, &d);
		if (rc != DNSNAP_OK) {
			assert_non_null(dnsnap_errname(rc));
			assert_true(d.offset <= mlen);
		} else {
			assert_true(q.question_end <= mlen);
		}
	}
	/* pure random bytes */
	for (int round = 0; round < 20000; round++) {
		uint8_t m[64];
		size_t mlen = rnd() % sizeof m;
		for (size_t k = 0; k < mlen; k++)
			m[k] = (uint8_t)rnd();
		if (mlen > 4 && (rnd() & 1)) { /* look like a query more often */
			m[2] &= 0x07;
			m[4] = 0;
			m[5] = 1;
		}
		int rc = parse(m, mlen, &q, &d);
		assert_true(rc == DNSNAP_OK || dnsnap_errname(rc) != NULL);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus_answers_match_ldns_and_cut_at_rrsets),
		cmocka_unit_test(test_round_robin_rotates_an_a_rrset),
		cmocka_unit_test(test_round_robin_leaves_other_types_alone),
		cmocka_unit_test(test_stale_answers_have_ttl_30),
		cmocka_unit_test(test_ttls_floor_at_zero_and_never_rise),
		cmocka_unit_test(test_dnssec_records_go_to_clients_asking_by_type),
		cmocka_unit_test(test_rrsig_query_without_do_gets_answer_rrsigs_only),
		cmocka_unit_test(test_answer_of_a_root_query_name),
		cmocka_unit_test(test_answer_rejects_bad_arguments),
		cmocka_unit_test(test_query_parse_reads_the_fields),
		cmocka_unit_test(test_query_parse_rejects_what_is_not_a_query),
		cmocka_unit_test(test_query_parse_never_crashes_on_cut_or_random_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
