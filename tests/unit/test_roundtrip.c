/*
 * test_roundtrip.c: dnsnap's parser, encoder and readers against ldns.
 *
 * For every message of the ldns-built corpus (tests/helpers/corpus.c):
 *   - dnsnap_msg_encode() must succeed and dnsnap_entry_validate() must pass;
 *   - the key must decode to the question (name lower-cased, type, class, the
 *     CD flag) and equal a key built here byte by byte from the layout;
 *   - the entry header must carry what the ldns view of the message implies:
 *     rcode, AUTH = AD, kind, DNSSEC flag, EXT + the EDE options of the OPT,
 *     Inception = now and Expiry - Inception = the TTL that the rules of
 *     spec/DECISIONS.md ("Expiry = Inception + entry TTL") and spec/FORMAT.md
 *     ("Expiry") give, recomputed here from ldns's parse;
 *   - walking the entry with dnsnap_iter_*() must give back, section by
 *     section and in order, the RRs that ldns_wire2pkt() finds: each record is
 *     rebuilt in uncompressed wire form, parsed with ldns_wire2rr() and
 *     compared with ldns_rr_compare(); the TTL is compared on its own
 *     (ldns_rr_compare ignores TTLs), and so are the exact rdata bytes and,
 *     where dnsnap stores the owner itself, the exact owner bytes; section
 *     counts must match ldns's (OPT and TSIG are in neither: ldns moves them
 *     out of the additional list into its edns fields and its tsig slot);
 *   - the encoder's choices are recomputed from the spec's rules (FORMAT.md
 *     "What else ingest stores", DECISIONS.md "Owner elision"): the owner
 *     mode of every record, the lowest index for REF and TARGET, and SAME
 *     exactly where a record continues the previous RRset.
 *
 * ldns as oracle, and case. ldns_rr_compare() is case-INSENSITIVE on owners:
 * it compares owners with ldns_dname_compare() (RFC 4034 6.1 order, ASCII
 * letters folded). It also compares rdata in canonical form (RFC 4034 6.2),
 * which lower-cases the names inside the rdata of NS, CNAME, SOA, MX, SRV,
 * PTR, NAPTR, RRSIG, ... (test_ldns_case_rules shows both). So ldns_rr_compare
 * alone would miss a case change in rdata; that is why the exact rdata bytes
 * are compared too.
 * Owners are a different matter, by design of the format: an owner that
 * dnsnap elides (mode QNAME: the query name) or refers to (mode REF: an earlier
 * record's owner; mode TARGET: the rdata name of an earlier NS, CNAME, PTR
 * or DNAME, e.g. a CNAME target or an NS target for glue) matches the name it
 * stands for ASCII case-insensitively (DECISIONS.md, "Owner elision"), and the
 * reader restores it in the spelling of that name (for QNAME: the query name
 * as given to dnsnap_iter_init()). The same holds for SAME records, whose
 * owner equals the previous record's ignoring case and is restored as the
 * previous record's. Such owners are compared case-insensitively
 * (ldns_dname_compare), the QNAME ones must be exactly the name passed to the
 * iterator, and SAME ones exactly the previous record's. Owners stored
 * explicitly (mode NAME) must be byte-exact. The corpus holds messages written
 * without name compression with owners spelled in other cases than the names
 * they match, so these paths are exercised (the count is printed).
 *
 * Failures are collected over the whole corpus and reported per message with
 * the message in hex (for reproduction) before the test fails.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <ldns/ldns.h>

#include "../../format/dnsnap_format.h"
#include "../helpers/corpus.h"

#define NOW 1700000000u

/* ------------------------------------------------------------ reporting */

typedef struct ctx {
	size_t i;        /* corpus index */
	int fails;       /* failed checks for this message */
} ctx_t;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void report(ctx_t *c, int line, const char *fmt, ...)
{
	if (c->fails++ >= 12)
		return; /* enough for one message */
	fprintf(stderr, "corpus[%zu] %s (test line %d): ", c->i, corpus_name(c->i), line);
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

#define CHECK(c, cond, ...)                                  \
	do {                                                 \
		if (!(cond))                                 \
			report((c), __LINE__, __VA_ARGS__);  \
	} while (0)

static void hexdump(FILE *f, const char *label, const uint8_t *p, size_t n)
{
	fprintf(f, "%s (%zu bytes):\n", label, n);
	for (size_t k = 0; k < n; k++)
		fprintf(f, "%02x%s", p[k], (k % 32 == 31 || k + 1 == n) ? "\n" : "");
}

static const char *errname(int e)
{
	const char *s = dnsnap_errname(e);
	return s ? s : "?";
}

/* ------------------------------------------------------------ ldns helpers */

/* RFC 2181 section 8: a TTL with the top bit set is taken as 0. */
static uint32_t eff_ttl(const ldns_rr *r)
{
	uint32_t t = ldns_rr_ttl(r);
	return t > DNSNAP_TTL_MAX ? 0 : t;
}

static ldns_rr_list *section_list(ldns_pkt *p, unsigned sec)
{
	switch (sec) {
	case DNSNAP_SEC_ANSWER:
		return ldns_pkt_answer(p);
	case DNSNAP_SEC_AUTHORITY:
		return ldns_pkt_authority(p);
	default:
		return ldns_pkt_additional(p);
	}
}

static size_t section_count(ldns_pkt *p, unsigned sec)
{
	return ldns_rr_list_rr_count(section_list(p, sec));
}

/*
 * The entry TTL and kind by the rules of DECISIONS.md and spec/FORMAT.md
 * ("Expiry"), from ldns's
 * view of the message (OPT and TSIG are not in ldns's section lists):
 *   NOERROR with answers: min TTL over the answer section, kind ANSWER;
 *   NXDOMAIN: min over the answer TTLs and the "SOA TTL" (the authority
 *     SOA's min(TTL, MINIMUM), the lowest if there are several), 0 when
 *     there is neither;
 *   NOERROR, empty answer, SOA in authority: NODATA, min(SOA TTL, MINIMUM);
 *   NOERROR, empty answer, no SOA, NS in authority: REFERRAL, min NS TTL;
 *   NOERROR, empty, nothing of that: NODATA, 0;
 *   other rcodes: ANSWER, min TTL over all records, 0 when none.
 * TTLs above 2^31-1 count as 0 (RFC 2181 section 8), as ingest stores them.
 */
static void expected_ttl_kind(ldns_pkt *p, uint32_t *ttl, unsigned *kind)
{
	ldns_rr_list *an = ldns_pkt_answer(p), *ns = ldns_pkt_authority(p);
	size_t nan = ldns_rr_list_rr_count(an), nns = ldns_rr_list_rr_count(ns);
	/* "SOA TTL": min(TTL, MINIMUM); with several SOAs, the lowest */
	bool soa = false;
	uint32_t soa_ttl = 0;
	for (size_t k = 0; k < nns; k++) {
		const ldns_rr *r = ldns_rr_list_rr(ns, k);
		if (ldns_rr_get_type(r) != LDNS_RR_TYPE_SOA || ldns_rr_rd_count(r) < 7)
			continue;
		uint32_t v = eff_ttl(r), minimum = ldns_rdf2native_int32(ldns_rr_rdf(r, 6));
		if (minimum > DNSNAP_TTL_MAX) /* MINIMUM is a TTL too (RFC 2308 s4) */
			minimum = 0;
		if (minimum < v)
			v = minimum;
		if (!soa || v < soa_ttl)
			soa_ttl = v;
		soa = true;
	}
	bool have = false;
	uint32_t m = 0;
#define TAKE(v)                                  \
	do {                                     \
		uint32_t v_ = (v);               \
		if (!have || v_ < m)             \
			m = v_;                  \
		have = true;                     \
	} while (0)

	ldns_pkt_rcode rc = ldns_pkt_get_rcode(p);
	if (rc == LDNS_RCODE_NOERROR) {
		if (nan > 0) {
			*kind = DNSNAP_KIND_ANSWER;
			for (size_t k = 0; k < nan; k++)
				TAKE(eff_ttl(ldns_rr_list_rr(an, k)));
		} else if (soa) {
			*kind = DNSNAP_KIND_NODATA;
			TAKE(soa_ttl);
		} else {
			bool any_ns = false;
			for (size_t k = 0; k < nns; k++) {
				const ldns_rr *r = ldns_rr_list_rr(ns, k);
				if (ldns_rr_get_type(r) == LDNS_RR_TYPE_NS) {
					any_ns = true;
					TAKE(eff_ttl(r));
				}
			}
			*kind = any_ns ? DNSNAP_KIND_REFERRAL : DNSNAP_KIND_NODATA;
		}
	} else if (rc == LDNS_RCODE_NXDOMAIN) {
		*kind = DNSNAP_KIND_NXDOMAIN;
		for (size_t k = 0; k < nan; k++)
			TAKE(eff_ttl(ldns_rr_list_rr(an, k)));
		if (soa)
			TAKE(soa_ttl);
	} else {
		*kind = DNSNAP_KIND_ANSWER;
		for (unsigned s = 0; s < 3; s++) {
			ldns_rr_list *l = section_list(p, s);
			for (size_t k = 0; k < ldns_rr_list_rr_count(l); k++)
				TAKE(eff_ttl(ldns_rr_list_rr(l, k)));
		}
	}
#undef TAKE
	*ttl = have ? m : 0;
}

static bool has_dnssec_records(ldns_pkt *p)
{
	for (unsigned s = 0; s < 3; s++) {
		ldns_rr_list *l = section_list(p, s);
		for (size_t k = 0; k < ldns_rr_list_rr_count(l); k++) {
			ldns_rr_type t = ldns_rr_get_type(ldns_rr_list_rr(l, k));
			if (t == LDNS_RR_TYPE_RRSIG || t == LDNS_RR_TYPE_NSEC || t == LDNS_RR_TYPE_NSEC3)
				return true;
		}
	}
	return false;
}

/* The EDE options (code 15) of the OPT, as ldns parsed them. */
typedef struct ede_list {
	unsigned n;
	uint16_t code[8];
	const uint8_t *text[8];
	size_t text_len[8];
} ede_list_t;

static void ldns_edes(ldns_pkt *p, ede_list_t *out)
{
	memset(out, 0, sizeof *out);
	if (!ldns_pkt_edns(p))
		return;
	ldns_edns_option_list *l = ldns_pkt_edns_get_option_list(p);
	if (!l)
		return;
	for (size_t k = 0; k < ldns_edns_option_list_get_count(l) && out->n < 8; k++) {
		ldns_edns_option *o = ldns_edns_option_list_get_option(l, k);
		if (!o || ldns_edns_get_code(o) != LDNS_EDNS_EDE || ldns_edns_get_size(o) < 2)
			continue;
		const uint8_t *d = ldns_edns_get_data(o);
		out->code[out->n] = (uint16_t)(d[0] << 8 | d[1]);
		out->text[out->n] = d + 2;
		out->text_len[out->n] = ldns_edns_get_size(o) - 2;
		out->n++;
	}
}

/* The key as the layout in dnsnap_format.h describes it, built here by hand:
 * the lower-cased labels in reverse order, the root 0, Qtype BE, Qclass BE,
 * Flags, Tag_Len 0. */
static size_t manual_key(const uint8_t *name, size_t len, uint16_t qtype, uint16_t qclass,
			 uint8_t flags, uint8_t *out)
{
	size_t starts[128], n = 0, o = 0;
	for (size_t p = 0; p < len && name[p] != 0 && n < 128; p += (size_t)name[p] + 1)
		starts[n++] = p;
	while (n > 0) {
		size_t p = starts[--n];
		size_t ll = name[p];
		out[o++] = (uint8_t)ll;
		for (size_t k = 1; k <= ll; k++) {
			uint8_t ch = name[p + k];
			out[o++] = (ch >= 'A' && ch <= 'Z') ? (uint8_t)(ch | 0x20) : ch;
		}
	}
	out[o++] = 0;
	out[o++] = (uint8_t)(qtype >> 8);
	out[o++] = (uint8_t)qtype;
	out[o++] = (uint8_t)(qclass >> 8);
	out[o++] = (uint8_t)qclass;
	out[o++] = flags;
	out[o++] = 0;
	return o;
}

/* ------------------------------------------------------------ the check */

typedef struct stats {
	size_t records;          /* records compared */
	size_t case_restored;    /* owners restored in another case (QNAME/REF/TARGET) */
	size_t modes[4];         /* records per owner mode */
	size_t same;             /* records with the SAME flag */
} stats_t;

static dnsnap_encoded_t *enc_buf(void)
{
	static dnsnap_encoded_t *enc;
	if (!enc)
		enc = calloc(1, sizeof *enc);
	return enc;
}

/* Whether record r can be a TARGET: NS, CNAME, PTR or DNAME whose rdata is
 * exactly one name. */
static bool target_type(const ldns_rr *r)
{
	ldns_rr_type t = ldns_rr_get_type(r);
	return (t == LDNS_RR_TYPE_NS || t == LDNS_RR_TYPE_CNAME || t == LDNS_RR_TYPE_PTR ||
		t == LDNS_RR_TYPE_DNAME) &&
	       ldns_rr_rd_count(r) == 1 && ldns_rdf_get_type(ldns_rr_rdf(r, 0)) == LDNS_RDF_TYPE_DNAME;
}

/* The owner mode spec/FORMAT.md ("What else ingest stores") and DECISIONS.md
 * ("Owner elision") prescribe for record k of the entry (all sections in
 * order): the query name -> QNAME; else the rdata name of an earlier NS,
 * CNAME, PTR or DNAME among indices 0-63 -> TARGET (lowest such index); else
 * the owner of an earlier record among indices 0-63 whose owner is not the
 * query name -> REF (lowest such index); else NAME. All comparisons ignore
 * ASCII case. *ref gets the index for REF and TARGET. */
static unsigned expected_mode(const ldns_rr **all, size_t k, const ldns_rdf *qname, size_t *ref)
{
	const ldns_rdf *own = ldns_rr_owner(all[k]);
	*ref = 0;
	if (ldns_dname_compare(own, qname) == 0)
		return DNSNAP_OWNER_QNAME;
	for (size_t j = 0; j < k && j < DNSNAP_OWNER_REFS; j++) {
		if (target_type(all[j]) && ldns_dname_compare(ldns_rr_rdf(all[j], 0), own) == 0) {
			*ref = j;
			return DNSNAP_OWNER_TARGET;
		}
	}
	for (size_t j = 0; j < k && j < DNSNAP_OWNER_REFS; j++) {
		const ldns_rdf *o = ldns_rr_owner(all[j]);
		if (ldns_dname_compare(o, qname) != 0 && ldns_dname_compare(o, own) == 0) {
			*ref = j;
			return DNSNAP_OWNER_REF;
		}
	}
	return DNSNAP_OWNER_NAME;
}

static const char *mode_name(unsigned m)
{
	static const char *const names[] = { "QNAME", "REF", "NAME", "TARGET" };
	return m < 4 ? names[m] : "?";
}

static bool rdf_bytes_eq(const ldns_rdf *a, const uint8_t *b, size_t blen)
{
	return ldns_rdf_size(a) == blen && memcmp(ldns_rdf_data(a), b, blen) == 0;
}

/* Walk the entry and compare every record with ldns's RR at the same place. */
static void check_records(ctx_t *c, stats_t *st, const dnsnap_encoded_t *enc, dnsnap_iter_t *it,
			  ldns_pkt *pkt, const ldns_rr **all, size_t total, const ldns_rdf *qrdf,
			  ldns_buffer *rb)
{
	static uint8_t w[DNSNAP_NAME_MAX + 10 + 65535];
	const uint8_t *qn = ldns_rdf_data(qrdf);
	size_t qnlen = ldns_rdf_size(qrdf);
	size_t pos[3] = { 0, 0, 0 };
	unsigned last_sec = 0, n = 0;
	dnsnap_rr_t rec, prev;
	const ldns_rr *prev_ref = NULL;
	int r;
	memset(&prev, 0, sizeof prev);

	while ((r = dnsnap_iter_next(it, &rec)) == 1) {
		unsigned sec = rec.section;
		CHECK(c, rec.index == n, "record %u has index %u", n, rec.index);
		if (sec > 2 || sec < last_sec) {
			report(c, __LINE__, "record %u in section %u after section %u", n, sec, last_sec);
			return;
		}
		last_sec = sec;
		if (pos[sec] >= section_count(pkt, sec) || n >= total) {
			report(c, __LINE__, "record %u: more records in section %u than ldns has (%zu)", n, sec,
			       section_count(pkt, sec));
			n++;
			continue;
		}
		const ldns_rr *ref = ldns_rr_list_rr(section_list(pkt, sec), pos[sec]);
		size_t at = pos[sec]++;
		CHECK(c, ref == all[n], "record %u: section bookkeeping", n);
		st->records++;

		/* Rec_Flags, straight from the layout: Rec_Len u16, then Rec_Flags */
		uint8_t rf = enc->entry[rec.offset + 2];
		bool same = (rf & DNSNAP_RF_SAME) != 0;
		unsigned mode = rf & DNSNAP_RF_OWNER;
		if (same)
			st->same++;
		else if (mode < 4)
			st->modes[mode]++;

		CHECK(c, rec.type != LDNS_RR_TYPE_OPT && rec.type != LDNS_RR_TYPE_TSIG,
		      "record %u: type %u must not be stored", n, rec.type);
		CHECK(c, rec.type == (uint16_t)ldns_rr_get_type(ref), "record %u (sec %u #%zu): type %u, ldns %u", n,
		      sec, at, rec.type, (unsigned)ldns_rr_get_type(ref));
		CHECK(c, rec.rclass == (uint16_t)ldns_rr_get_class(ref), "record %u: class %u, ldns %u", n,
		      rec.rclass, (unsigned)ldns_rr_get_class(ref));
		CHECK(c, rec.ttl == eff_ttl(ref), "record %u (sec %u #%zu): TTL %u, ldns %u (stored as %u)", n, sec,
		      at, rec.ttl, ldns_rr_ttl(ref), eff_ttl(ref));

		/* the RR in uncompressed wire form, read back by ldns */
		bool sizes_ok = rec.owner_len >= 1 && rec.owner_len <= DNSNAP_NAME_MAX && rec.rdlen <= 65535;
		CHECK(c, sizes_ok, "record %u: owner_len %zu rdlen %zu", n, rec.owner_len, rec.rdlen);
		if (sizes_ok) {
			size_t o = 0;
			memcpy(w, rec.owner, rec.owner_len);
			o = rec.owner_len;
			w[o++] = (uint8_t)(rec.type >> 8);
			w[o++] = (uint8_t)rec.type;
			w[o++] = (uint8_t)(rec.rclass >> 8);
			w[o++] = (uint8_t)rec.rclass;
			w[o++] = (uint8_t)(rec.ttl >> 24);
			w[o++] = (uint8_t)(rec.ttl >> 16);
			w[o++] = (uint8_t)(rec.ttl >> 8);
			w[o++] = (uint8_t)rec.ttl;
			w[o++] = (uint8_t)(rec.rdlen >> 8);
			w[o++] = (uint8_t)rec.rdlen;
			if (rec.rdlen)
				memcpy(w + o, rec.rdata, rec.rdlen);
			o += rec.rdlen;
			ldns_rr *mine = NULL;
			size_t rpos = 0;
			ldns_status ls = ldns_wire2rr(&mine, w, o, &rpos, LDNS_SECTION_ANSWER);
			CHECK(c, ls == LDNS_STATUS_OK && rpos == o, "record %u: ldns_wire2rr: %s (read %zu of %zu)", n,
			      ldns_get_errorstr_by_id(ls), rpos, o);
			if (ls == LDNS_STATUS_OK) {
				int cmp = ldns_rr_compare(mine, ref);
				if (cmp != 0) {
					char *a = ldns_rr2str(mine), *b = ldns_rr2str(ref);
					report(c, __LINE__, "record %u (sec %u #%zu) differs:\n  dnsnap: %s  ldns:   %s", n,
					       sec, at, a ? a : "?\n", b ? b : "?\n");
					free(a);
					free(b);
				}
				CHECK(c, ldns_dname_compare(ldns_rr_owner(mine), ldns_rr_owner(ref)) == 0,
				      "record %u: owner differs beyond case", n);
				ldns_rr_free(mine);
			}
		}

		/* exact rdata bytes: names inside rdata keep their case */
		ldns_buffer_clear(rb);
		if (ldns_rr_rdata2buffer_wire(rb, ref) == LDNS_STATUS_OK) {
			size_t rl = ldns_buffer_position(rb);
			CHECK(c, rl == rec.rdlen && (rl == 0 || memcmp(ldns_buffer_begin(rb), rec.rdata, rl) == 0),
			      "record %u (sec %u #%zu, type %u): rdata bytes differ (%zu vs ldns %zu)", n, sec, at,
			      rec.type, rec.rdlen, rl);
		} else {
			report(c, __LINE__, "record %u: ldns cannot write the rdata", n);
		}

		/* owners: exact where stored, case-insensitive where elided or referred to */
		const ldns_rdf *lown = ldns_rr_owner(ref);
		bool exact = rdf_bytes_eq(lown, rec.owner, rec.owner_len);
		if (same) {
			CHECK(c, n > 0, "SAME on record 0");
			if (n > 0) {
				CHECK(c, rec.owner_len == prev.owner_len && memcmp(rec.owner, prev.owner, rec.owner_len) == 0,
				      "record %u: SAME but owner differs from the previous record's", n);
				CHECK(c, rec.type == prev.type && rec.rclass == prev.rclass && rec.ttl == prev.ttl,
				      "record %u: SAME but type/class/TTL differ from the previous record's", n);
			}
		} else {
			CHECK(c, rec.owner_mode == mode, "record %u: owner_mode %u, Rec_Flags say %u", n,
			      rec.owner_mode, mode);
			size_t want_k = 0;
			unsigned want = expected_mode(all, n, qrdf, &want_k);
			CHECK(c, mode == want, "record %u (sec %u #%zu): owner mode %s, the spec's order gives %s", n,
			      sec, at, mode_name(mode), mode_name(want));
			if (mode == want && (mode == DNSNAP_OWNER_REF || mode == DNSNAP_OWNER_TARGET)) {
				/* the index byte: after Rec_Len, Rec_Flags, Type, [Class], TTL */
				size_t ko = rec.offset + 9 + ((rf & DNSNAP_RF_CLASS) ? 2 : 0);
				CHECK(c, ko < enc->entry_len && enc->entry[ko] == want_k,
				      "record %u: %s index %u, want the lowest, %zu", n, mode_name(mode),
				      ko < enc->entry_len ? enc->entry[ko] : 0xffffu, want_k);
			}
			if (mode == DNSNAP_OWNER_NAME)
				CHECK(c, exact, "record %u: explicit owner not byte-exact", n);
			if (mode == DNSNAP_OWNER_QNAME)
				CHECK(c, rec.owner_len == qnlen && memcmp(rec.owner, qn, qnlen) == 0,
				      "record %u: elided owner is not the iterator's query name", n);
		}
		if (!exact)
			st->case_restored++;

		/* SAME exactly when the owner (ignoring case), type, class and stored
		 * TTL equal the previous record's, in the same section */
		{
			bool want_same = n > 0 && prev_ref && prev.section == sec &&
					 ldns_rr_get_type(prev_ref) == ldns_rr_get_type(ref) &&
					 ldns_rr_get_class(prev_ref) == ldns_rr_get_class(ref) &&
					 eff_ttl(prev_ref) == eff_ttl(ref) &&
					 ldns_dname_compare(ldns_rr_owner(prev_ref), lown) == 0;
			CHECK(c, same == want_same, "record %u (sec %u #%zu): SAME is %d, want %d", n, sec, at, same,
			      want_same);
		}
		prev = rec;
		prev_ref = ref;
		n++;
	}
	CHECK(c, r == 0, "dnsnap_iter_next: %s (%d) at entry offset %zu", errname(r), r, it->err_off);
	for (unsigned s = 0; s < 3; s++)
		CHECK(c, pos[s] == section_count(pkt, s), "section %u: %zu records in the entry, ldns has %zu", s,
		      pos[s], section_count(pkt, s));
}

/* Compare one message; returns the number of failed checks. */
static int check_message(size_t i, stats_t *st)
{
	ctx_t c = { i, 0 };
	uint8_t *wire = NULL;
	size_t len = 0;
	if (corpus_message(i, &wire, &len) != 0) {
		report(&c, __LINE__, "corpus_message failed");
		return c.fails;
	}
	ldns_pkt *pkt = NULL;
	ldns_status ls = ldns_wire2pkt(&pkt, wire, len);
	if (ls != LDNS_STATUS_OK) {
		report(&c, __LINE__, "ldns cannot parse its own message: %s", ldns_get_errorstr_by_id(ls));
		free(wire);
		return c.fails;
	}

	dnsnap_encoded_t *enc = enc_buf();
	dnsnap_diag_t diag;
	memset(&diag, 0, sizeof diag);
	int r = dnsnap_msg_encode(wire, len, NOW, NULL, 0, enc, &diag);
	CHECK(&c, r == DNSNAP_OK, "dnsnap_msg_encode: %s (%d) at offset %zu: %s", errname(r), r, diag.offset,
	      diag.msg);
	if (r != DNSNAP_OK)
		goto out;
	CHECK(&c, enc->entry_len >= DNSNAP_ENTRY_HDR && enc->entry_len <= DNSNAP_ENTRY_MAX,
	      "entry_len %zu", enc->entry_len);
	CHECK(&c, enc->key_len >= 7 && enc->key_len <= DNSNAP_KEY_MAX, "key_len %zu", enc->key_len);
	if (c.fails)
		goto out;
	memset(&diag, 0, sizeof diag);
	r = dnsnap_entry_validate(enc->entry, enc->entry_len, &diag);
	CHECK(&c, r == DNSNAP_OK, "dnsnap_entry_validate: %s (%d) at offset %zu: %s", errname(r), r, diag.offset,
	      diag.msg);

	/* ---- question and key */
	const ldns_rr *q = ldns_rr_list_rr(ldns_pkt_question(pkt), 0);
	const ldns_rdf *qrdf = ldns_rr_owner(q);
	const uint8_t *qn = ldns_rdf_data(qrdf);
	size_t qnlen = ldns_rdf_size(qrdf);
	uint16_t qtype = (uint16_t)ldns_rr_get_type(q);
	uint16_t qclass = (uint16_t)ldns_rr_get_class(q);
	uint8_t kflags = ldns_pkt_cd(pkt) ? DNSNAP_KF_CD : 0;

	CHECK(&c, enc->qname_off == 12, "qname_off %u, want 12", enc->qname_off);
	CHECK(&c, enc->qname_len == qnlen, "qname_len %u, want %zu", enc->qname_len, qnlen);
	CHECK(&c, qnlen <= len - 12 && memcmp(wire + 12, qn, qnlen) == 0, "question name not at offset 12");

	dnsnap_key_t key;
	memset(&diag, 0, sizeof diag);
	r = dnsnap_key_decode(enc->key, enc->key_len, &key, &diag);
	CHECK(&c, r == DNSNAP_OK, "dnsnap_key_decode: %s at %zu: %s", errname(r), diag.offset, diag.msg);
	if (r == DNSNAP_OK) {
		uint8_t lc[DNSNAP_NAME_MAX];
		for (size_t k = 0; k < qnlen; k++)
			lc[k] = (qn[k] >= 'A' && qn[k] <= 'Z') ? (uint8_t)(qn[k] | 0x20) : qn[k];
		CHECK(&c, key.name_len == qnlen && memcmp(key.name, lc, qnlen) == 0,
		      "key name is not the lower-cased question name");
		CHECK(&c, key.qtype == qtype, "key qtype %u, want %u", key.qtype, qtype);
		CHECK(&c, key.qclass == qclass, "key qclass %u, want %u", key.qclass, qclass);
		CHECK(&c, key.flags == kflags, "key flags %#x, want %#x", key.flags, kflags);
		CHECK(&c, key.tag_len == 0, "key tag_len %zu", key.tag_len);
	}
	uint8_t mk[DNSNAP_KEY_MAX + 8];
	size_t mklen = manual_key(qn, qnlen, qtype, qclass, kflags, mk);
	CHECK(&c, mklen == enc->key_len && memcmp(mk, enc->key, mklen) == 0,
	      "key bytes differ from the documented layout (%zu vs %zu bytes)", enc->key_len, mklen);
	uint8_t kb[DNSNAP_KEY_MAX];
	size_t kblen = 0;
	r = dnsnap_key_encode(qn, qnlen, qtype, qclass, kflags, NULL, 0, kb, sizeof kb, &kblen);
	CHECK(&c, r == DNSNAP_OK && kblen == enc->key_len && memcmp(kb, enc->key, kblen) == 0,
	      "dnsnap_key_encode (%s) disagrees with dnsnap_msg_encode's key", errname(r));

	/* ---- entry header */
	dnsnap_hdr_t h;
	memset(&diag, 0, sizeof diag);
	r = dnsnap_entry_header(enc->entry, enc->entry_len, &h, &diag);
	CHECK(&c, r == DNSNAP_OK, "dnsnap_entry_header: %s at %zu: %s", errname(r), diag.offset, diag.msg);
	if (r != DNSNAP_OK)
		goto out;
	uint32_t want_ttl = 0;
	unsigned want_kind = 0;
	expected_ttl_kind(pkt, &want_ttl, &want_kind);
	unsigned want_rcode = (unsigned)ldns_pkt_get_rcode(pkt) & 0xf;
	CHECK(&c, h.inception == NOW, "Inception %u, want %u", h.inception, NOW);
	CHECK(&c, (uint32_t)(h.expiry - h.inception) == want_ttl, "Expiry - Inception = %u, want %u",
	      (uint32_t)(h.expiry - h.inception), want_ttl);
	CHECK(&c, enc->ttl == want_ttl, "enc->ttl %u, want %u", enc->ttl, want_ttl);
	CHECK(&c, h.hits == 0, "Hits %u in a fresh entry", h.hits);
	CHECK(&c, dnsnap_hdr_rcode(&h) == want_rcode, "rcode %u, want %u", dnsnap_hdr_rcode(&h), want_rcode);
	CHECK(&c, dnsnap_hdr_kind(&h) == want_kind, "kind %u, want %u", dnsnap_hdr_kind(&h), want_kind);
	CHECK(&c, !!(h.flags & DNSNAP_EF_AUTH) == !!ldns_pkt_ad(pkt), "AUTH flag %d, AD bit %d",
	      !!(h.flags & DNSNAP_EF_AUTH), !!ldns_pkt_ad(pkt));
	CHECK(&c, !!(h.flags & DNSNAP_EF_DNSSEC) == has_dnssec_records(pkt), "DNSSEC flag %d, want %d",
	      !!(h.flags & DNSNAP_EF_DNSSEC), has_dnssec_records(pkt));
	CHECK(&c, (h.flags & (DNSNAP_EF_MINOR | DNSNAP_EF_RESERVED)) == 0, "minor/reserved flag bits set: %#x",
	      h.flags);

	/* ---- EDE */
	ede_list_t want_ede;
	ldns_edes(pkt, &want_ede);
	CHECK(&c, !!(h.flags & DNSNAP_EF_EXT) == (want_ede.n > 0), "EXT flag %d with %u EDE options",
	      !!(h.flags & DNSNAP_EF_EXT), want_ede.n);
	for (unsigned k = 0; k < want_ede.n; k++) {
		dnsnap_ede_t e;
		memset(&e, 0, sizeof e);
		r = dnsnap_entry_ede(&h, k, &e);
		CHECK(&c, r == 1, "dnsnap_entry_ede(%u) = %d, want 1", k, r);
		if (r != 1)
			continue;
		CHECK(&c, e.code == want_ede.code[k], "EDE %u code %u, want %u", k, e.code, want_ede.code[k]);
		CHECK(&c, e.text_len == want_ede.text_len[k] &&
				  (e.text_len == 0 || memcmp(e.text, want_ede.text[k], e.text_len) == 0),
		      "EDE %u text \"%.*s\", want \"%.*s\"", k, (int)e.text_len, (const char *)e.text,
		      (int)want_ede.text_len[k], (const char *)want_ede.text[k]);
	}
	{
		dnsnap_ede_t e;
		r = dnsnap_entry_ede(&h, want_ede.n, &e);
		CHECK(&c, r == 0, "dnsnap_entry_ede(%u) = %d past the last option, want 0", want_ede.n, r);
	}

	/* ---- counts: OPT and TSIG are neither in ldns's lists nor in the entry */
	{
		unsigned raw_ar = (unsigned)wire[10] << 8 | wire[11];
		unsigned opt = ldns_pkt_edns(pkt) ? 1 : 0;
		unsigned tsig = ldns_pkt_tsig(pkt) ? 1 : 0;
		CHECK(&c, section_count(pkt, DNSNAP_SEC_ADDITIONAL) == ldns_pkt_arcount(pkt),
		      "ldns additional list %zu vs its arcount %u", section_count(pkt, DNSNAP_SEC_ADDITIONAL),
		      ldns_pkt_arcount(pkt));
		CHECK(&c, raw_ar == section_count(pkt, DNSNAP_SEC_ADDITIONAL) + opt + tsig,
		      "wire ARCOUNT %u != %zu records + %u OPT + %u TSIG", raw_ar,
		      section_count(pkt, DNSNAP_SEC_ADDITIONAL), opt, tsig);
	}


	/* ---- records, section by section, in order */
	size_t total = 0;
	for (unsigned s = 0; s < 3; s++)
		total += section_count(pkt, s);
	const ldns_rr **all = calloc(total + 1, sizeof *all); /* every RR, in entry order */
	ldns_buffer *rb = ldns_buffer_new(65536);
	if (!all || !rb) {
		report(&c, __LINE__, "out of memory");
		free(all);
		if (rb)
			ldns_buffer_free(rb);
		goto out;
	}
	{
		size_t o = 0;
		for (unsigned s = 0; s < 3; s++)
			for (size_t k = 0; k < section_count(pkt, s); k++)
				all[o++] = ldns_rr_list_rr(section_list(pkt, s), k);
	}

	dnsnap_iter_t it;
	r = dnsnap_iter_init(&it, enc->entry, enc->entry_len, qn, qnlen);
	CHECK(&c, r == DNSNAP_OK, "dnsnap_iter_init: %s", errname(r));
	if (r == DNSNAP_OK)
		check_records(&c, st, enc, &it, pkt, all, total, qrdf, rb);
	free(all);
	ldns_buffer_free(rb);

out:
	if (c.fails) {
		fprintf(stderr, "corpus[%zu] %s: %d failed checks; ", i, corpus_name(i), c.fails);
		hexdump(stderr, "message", wire, len);
	}
	ldns_pkt_free(pkt);
	free(wire);
	return c.fails;
}

/* ------------------------------------------------------------ tests */

/* The corpus itself: size, determinism, parsable by ldns, the worked examples
 * where the issue put them, and every variety the brief asks for present. */
static void test_corpus_shape(void **state)
{
	(void)state;
	size_t n = corpus_count();
	assert_true(n >= 200);
	assert_int_equal(corpus_message(n, &(uint8_t *){ NULL }, &(size_t){ 0 }), -1);

	static int types[65536];
	memset(types, 0, sizeof types);
	bool ch = false, ede = false, tsig = false, uncompressed = false, mixed = false, over64 = false;
	bool ad = false, cd = false, do_bit = false, noedns = false;
	int rcodes[16] = { 0 };
	for (size_t i = 0; i < n; i++) {
		uint8_t *w1 = NULL, *w2 = NULL;
		size_t l1 = 0, l2 = 0;
		assert_int_equal(corpus_message(i, &w1, &l1), 0);
		assert_int_equal(corpus_message(i, &w2, &l2), 0);
		assert_true(l1 == l2 && memcmp(w1, w2, l1) == 0); /* deterministic */
		ldns_pkt *p = NULL;
		assert_int_equal(ldns_wire2pkt(&p, w1, l1), LDNS_STATUS_OK);
		assert_int_equal(ldns_pkt_qdcount(p), 1);
		assert_true(ldns_pkt_qr(p));

		const ldns_rr *q = ldns_rr_list_rr(ldns_pkt_question(p), 0);
		const ldns_rdf *qn = ldns_rr_owner(q);
		size_t total = 0;
		for (unsigned s = 0; s < 3; s++) {
			ldns_rr_list *l = section_list(p, s);
			for (size_t k = 0; k < ldns_rr_list_rr_count(l); k++) {
				const ldns_rr *r = ldns_rr_list_rr(l, k);
				types[ldns_rr_get_type(r)]++;
				if (ldns_rr_get_class(r) == LDNS_RR_CLASS_CH)
					ch = true;
			}
			total += ldns_rr_list_rr_count(l);
		}
		over64 |= total > 64;
		ede_list_t e;
		ldns_edes(p, &e);
		ede |= e.n > 0;
		tsig |= ldns_pkt_tsig(p) != NULL;
		ad |= ldns_pkt_ad(p);
		cd |= ldns_pkt_cd(p);
		do_bit |= ldns_pkt_edns_do(p);
		noedns |= !ldns_pkt_edns(p);
		rcodes[ldns_pkt_get_rcode(p) & 15]++;
		for (size_t k = 0; k < ldns_rdf_size(qn); k++)
			mixed |= ldns_rdf_data(qn)[k] >= 'A' && ldns_rdf_data(qn)[k] <= 'Z';
		/* no compression pointer anywhere: a name-holding message written in full */
		if (total > 0) {
			bool ptr = false;
			for (size_t k = 12; k + 1 < l1; k++)
				ptr |= (w1[k] & 0xc0) == 0xc0 && w1[k + 1] == 12; /* pointer to the question */
			uncompressed |= !ptr;
		}

		/* the worked examples */
		ldns_rr_list *an = ldns_pkt_answer(p), *ns = ldns_pkt_authority(p);
		ldns_rr_type qt = ldns_rr_get_type(q);
		switch (i) {
		case 0:
			assert_true(qt == LDNS_RR_TYPE_A && ldns_rr_list_rr_count(an) == 1);
			break;
		case 1:
			assert_true(qt == LDNS_RR_TYPE_AAAA && ldns_rr_list_rr_count(an) == 4);
			break;
		case 2:
			assert_true(qt == LDNS_RR_TYPE_TXT && ldns_rr_list_rr_count(an) == 1);
			assert_int_equal(ldns_rdf_size(ldns_rr_rdf(ldns_rr_list_rr(an, 0), 0)), 201);
			break;
		case 3:
			assert_int_equal(ldns_rr_list_rr_count(an), 3);
			assert_int_equal(ldns_rr_get_type(ldns_rr_list_rr(an, 0)), LDNS_RR_TYPE_CNAME);
			break;
		case 4:
			assert_int_equal(ldns_pkt_get_rcode(p), LDNS_RCODE_NXDOMAIN);
			assert_int_equal(ldns_rr_get_type(ldns_rr_list_rr(ns, 0)), LDNS_RR_TYPE_SOA);
			break;
		case 5:
			assert_true(ldns_pkt_get_rcode(p) == LDNS_RCODE_NOERROR && ldns_rr_list_rr_count(an) == 0);
			break;
		case 6:
			assert_int_equal(ldns_rr_get_type(ldns_rr_list_rr(an, 1)), LDNS_RR_TYPE_RRSIG);
			break;
		case 7:
			assert_int_equal(qt, LDNS_RR_TYPE_MX);
			break;
		case 8:
			assert_true(ldns_rr_list_rr_count(an) == 0 &&
				    ldns_rr_get_type(ldns_rr_list_rr(ns, 0)) == LDNS_RR_TYPE_NS);
			break;
		case 9:
			assert_int_equal(qt, 65280);
			break;
		case 10:
			assert_int_equal(ldns_rdf_size(qn), 255);
			break;
		default:
			break;
		}
		ldns_pkt_free(p);
		free(w1);
		free(w2);
	}
	static const unsigned want[] = {
		1, 28, 16, 5, 6, 46, 47, 50, 43, 48, 15, 2, 33, 35, 64, 65, 257, 12, 65280, 13, 44, 52, 39, 17, 14, 18,
	};
	for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
		if (!types[want[k]])
			fail_msg("no record of type %u in the corpus", want[k]);
	}
	assert_true(ch && ede && tsig && uncompressed && mixed && over64);
	assert_true(ad && cd && do_bit && noedns);
	assert_true(rcodes[0] && rcodes[1] && rcodes[2] && rcodes[3] && rcodes[4] && rcodes[5]);
}

/* How ldns, the oracle, treats case (see the comment at the top). */
static void test_ldns_case_rules(void **state)
{
	(void)state;
	static const char *const pairs[][2] = {
		/* owners: case-insensitive */
		{ "WWW.Example.COM. 300 IN A 192.0.2.1", "www.example.com. 300 IN A 192.0.2.1" },
		/* names in the rdata of RFC 4034 6.2 types: case-insensitive */
		{ "a.example. 300 IN CNAME WWW.Example.COM.", "a.example. 300 IN CNAME www.example.com." },
		{ "a.example. 300 IN SRV 1 2 3 WWW.Example.COM.", "a.example. 300 IN SRV 1 2 3 www.example.com." },
		/* TTL: ignored */
		{ "a.example. 300 IN A 192.0.2.1", "a.example. 60 IN A 192.0.2.1" },
		/* other data: case-sensitive */
		{ "a.example. 300 IN TXT \"A\"", "a.example. 300 IN TXT \"a\"" },
	};
	static const int equal[] = { 1, 1, 1, 1, 0 };
	for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
		ldns_rr *a = NULL, *b = NULL;
		assert_int_equal(ldns_rr_new_frm_str(&a, pairs[k][0], 0, NULL, NULL), LDNS_STATUS_OK);
		assert_int_equal(ldns_rr_new_frm_str(&b, pairs[k][1], 0, NULL, NULL), LDNS_STATUS_OK);
		assert_int_equal(ldns_rr_compare(a, b) == 0, equal[k]);
		if (k == 0)
			assert_int_equal(ldns_dname_compare(ldns_rr_owner(a), ldns_rr_owner(b)), 0);
		ldns_rr_free(a);
		ldns_rr_free(b);
	}
}

static void test_roundtrip_corpus(void **state)
{
	(void)state;
	assert_non_null(enc_buf());
	stats_t st;
	memset(&st, 0, sizeof st);
	size_t n = corpus_count(), bad = 0;
	for (size_t i = 0; i < n; i++) {
		if (check_message(i, &st) != 0)
			bad++;
	}
	printf("roundtrip: %zu messages, %zu failed; %zu records compared with ldns\n", n, bad, st.records);
	printf("roundtrip: owner modes QNAME %zu, REF %zu, NAME %zu, TARGET %zu; SAME %zu\n",
	       st.modes[DNSNAP_OWNER_QNAME], st.modes[DNSNAP_OWNER_REF], st.modes[DNSNAP_OWNER_NAME],
	       st.modes[DNSNAP_OWNER_TARGET], st.same);
	printf("roundtrip: %zu owners restored in another case than received (elided or referenced: "
	       "case-insensitive by design)\n",
	       st.case_restored);
	assert_int_equal(bad, 0);
	assert_true(st.records > 1000);
	/* the corpus exercises every owner mode and SAME */
	assert_true(st.modes[0] && st.modes[1] && st.modes[2] && st.modes[3] && st.same);
}

/* Sizes: the worked examples and the corpus totals (printing only). */
static void test_sizes(void **state)
{
	(void)state;
	dnsnap_encoded_t *enc = enc_buf();
	assert_non_null(enc);
	size_t n = corpus_count(), sw = 0, sk = 0, se = 0;
	printf("%-3s %-22s %6s %5s %6s\n", "#", "example", "wire", "key", "entry");
	for (size_t i = 0; i < n; i++) {
		uint8_t *w = NULL;
		size_t l = 0;
		assert_int_equal(corpus_message(i, &w, &l), 0);
		dnsnap_diag_t diag;
		int r = dnsnap_msg_encode(w, l, NOW, NULL, 0, enc, &diag);
		free(w);
		if (r != DNSNAP_OK)
			continue; /* reported by test_roundtrip_corpus */
		if (i < CORPUS_FIXED)
			printf("%-3zu %-22s %6zu %5zu %6zu\n", i, corpus_name(i), l, enc->key_len, enc->entry_len);
		sw += l;
		sk += enc->key_len;
		se += enc->entry_len;
	}
	printf("corpus: %zu messages, wire %zu bytes, keys %zu bytes, entries %zu bytes\n", n, sw, sk, se);
	printf("corpus: entries = %.1f%% of wire, keys + entries = %.1f%% of wire\n",
	       sw ? 100.0 * (double)se / (double)sw : 0.0, sw ? 100.0 * (double)(sk + se) / (double)sw : 0.0);
	assert_true(sw > 0 && se > 0 && sk > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus_shape),
		cmocka_unit_test(test_ldns_case_rules),
		cmocka_unit_test(test_roundtrip_corpus),
		cmocka_unit_test(test_sizes),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	free(enc_buf());
	return rc;
}
