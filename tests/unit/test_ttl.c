/*
 * test_ttl.c: the TTLs an answer carries (issue 12, item 8).
 *
 * - a positive entry (ANSWER, REFERRAL): each record its own TTL,
 *   clamp(TTL, min_ttl, max_ttl) - age: a CNAME 3600 in front of an A 300 at
 *   age 5 goes out as 3595 and 295, not both 295; max_ttl caps, min_ttl
 *   raises; through dnsnap_answer_build() and through the cache (its own
 *   min_ttl and max_ttl);
 * - a negative entry (NXDOMAIN, NODATA): the SOA served with the entry's
 *   time left, min(SOA TTL, MINIMUM) - age (RFC 2308), and max_neg_ttl caps it;
 * - a stale answer: every TTL 30, and EDE 3 "Stale Answer" after the entry's
 *   own EDE options when the query had EDNS (never twice; no OPT without EDNS).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ans.h"
#include "dnsnap.h"
#include "wb.h"

#define NOW 1700000000u

static dnsnap_encoded_t scratch; /* large: static */

/* www.example.com. A: a CNAME to web.example.com. (cname_ttl), its A (a_ttl).
 * With @p ede, an OPT carrying EDE INFO-CODE @p ede (0: none). */
static void cname_a(wb_t *w, uint32_t cname_ttl, uint32_t a_ttl, unsigned ede)
{
	put_header(w, 0x8180, 1, 2, 0, ede ? 1 : 0);
	put_name(w, "www.example.com");
	put_u16(w, 1);
	put_u16(w, 1);
	put_ptr(w, 12);
	size_t at = put_fixed(w, 5, 1, cname_ttl);
	size_t target = w->n;
	put_labels(w, "web");
	put_ptr(w, 16); /* example.com. of the question */
	end_rdata(w, at);
	put_ptr(w, target);
	at = put_fixed(w, 1, 1, a_ttl);
	put_u32(w, 0xc0000201);
	end_rdata(w, at);
	if (ede) {
		put_u8(w, 0);
		put_u16(w, 41);
		put_u16(w, 1232);
		put_u32(w, 0);
		put_u16(w, 6);
		put_u16(w, 15);
		put_u16(w, 2);
		put_u16(w, ede);
	}
}

/* nx.example.com. A: NXDOMAIN (@p rcode 3) or NODATA (0) with the zone's SOA. */
static void negative(wb_t *w, unsigned rcode, uint32_t soa_ttl, uint32_t minimum)
{
	put_header(w, 0x8180 | rcode, 1, 0, 1, 0);
	put_name(w, "nx.example.com");
	put_u16(w, 1);
	put_u16(w, 1);
	put_ptr(w, 15); /* example.com. */
	size_t at = put_fixed(w, 6, 1, soa_ttl);
	put_name(w, "ns.example.com");
	put_name(w, "hostmaster.example.com");
	put_u32(w, 2026120101);
	put_u32(w, 7200);
	put_u32(w, 3600);
	put_u32(w, 1209600);
	put_u32(w, minimum);
	end_rdata(w, at);
}

/* www.sub.example.com. A: a referral to sub.example.com. (NS ns_ttl) with glue
 * (A glue_ttl). */
static void referral(wb_t *w, uint32_t ns_ttl, uint32_t glue_ttl)
{
	put_header(w, 0x8000, 1, 0, 1, 1);
	put_name(w, "www.sub.example.com");
	put_u16(w, 1);
	put_u16(w, 1);
	put_ptr(w, 16); /* sub.example.com. */
	size_t at = put_fixed(w, 2, 1, ns_ttl);
	size_t ns = w->n;
	put_labels(w, "ns");
	put_ptr(w, 16);
	end_rdata(w, at);
	put_ptr(w, ns);
	at = put_fixed(w, 1, 1, glue_ttl);
	put_u32(w, 0xc0000235);
	end_rdata(w, at);
}

/* The answer to @p qname/A built from response @p w at @p now with @p o
 * (its now set here), read into @p a; @p edns: the query has an OPT. */
static void build(const wb_t *w, const char *qname, int edns, dnsnap_answer_opts_t *o,
		  uint32_t now, ans_t *a)
{
	assert_int_equal(dnsnap_msg_encode(w->b, w->n, NOW, NULL, 0, &scratch, NULL), DNSNAP_OK);
	uint8_t qb[512], out[1232];
	dnsnap_query_t q;
	ans_query_parse(qb, qname, 1, 0, edns, 0, &q);
	o->now = now;
	size_t n;
	assert_int_equal(dnsnap_answer_build(&q, scratch.entry, scratch.entry_len, o, out,
					     sizeof out, &n), DNSNAP_OK);
	assert_int_equal(ans_parse(out, n, a), 0);
}

/* The same through a cache made with @p co, the response inserted at NOW. */
static int cached(const wb_t *w, const char *qname, int edns, const dnsnap_cache_opts_t *co,
		  uint32_t now, ans_t *a)
{
	dnsnap_cache_t *c;
	assert_int_equal(dnsnap_cache_new(co, &c), DNSNAP_OK);
	assert_int_equal(dnsnap_cache_insert(c, w->b, w->n, NOW, NULL, 0, &scratch, NULL),
			 DNSNAP_OK);
	uint8_t qb[512], out[1232];
	dnsnap_query_t q;
	ans_query_parse(qb, qname, 1, 0, edns, 0, &q);
	size_t n;
	int err = dnsnap_cache_answer(c, &q, now, 0, out, sizeof out, &n);
	if (err == DNSNAP_OK)
		assert_int_equal(ans_parse(out, n, a), 0);
	dnsnap_cache_free(c);
	return err;
}

static void test_each_record_keeps_its_own_ttl(void **state)
{
	(void)state;
	wb_t w;
	cname_a(&w, 3600, 300, 0);
	dnsnap_answer_opts_t o = { 0 };
	ans_t a;
	build(&w, "www.example.com", 0, &o, NOW + 5, &a);
	assert_int_equal(a.n, 2);
	assert_int_equal(a.rr[0].type, 5);
	assert_int_equal(a.rr[0].ttl, 3595);
	assert_int_equal(a.rr[1].type, 1);
	assert_int_equal(a.rr[1].ttl, 295);

	/* the cache with its defaults (max_ttl 86400) serves the same */
	assert_int_equal(cached(&w, "www.example.com", 0, NULL, NOW + 5, &a), DNSNAP_OK);
	assert_int_equal(a.rr[0].ttl, 3595);
	assert_int_equal(a.rr[1].ttl, 295);
	/* the entry still dies with its A: nothing is served from it after 300 s */
	assert_int_equal(cached(&w, "www.example.com", 0, NULL, NOW + 300, &a), DNSNAP_ENOTFOUND);
	/* a clock set back never raises a TTL */
	assert_int_equal(cached(&w, "www.example.com", 0, NULL, NOW - 50, &a), DNSNAP_OK);
	assert_int_equal(a.rr[0].ttl, 3600);
	assert_int_equal(a.rr[1].ttl, 300);
}

static void test_max_ttl_caps_and_min_ttl_raises(void **state)
{
	(void)state;
	wb_t w;
	cname_a(&w, 3600, 300, 0);
	ans_t a;
	dnsnap_answer_opts_t o = { .max_ttl = 1000 };
	build(&w, "www.example.com", 0, &o, NOW + 5, &a);
	assert_int_equal(a.rr[0].ttl, 995);
	assert_int_equal(a.rr[1].ttl, 295);
	o = (dnsnap_answer_opts_t){ .min_ttl = 600 };
	build(&w, "www.example.com", 0, &o, NOW + 5, &a);
	assert_int_equal(a.rr[0].ttl, 3595);
	assert_int_equal(a.rr[1].ttl, 595);
	/* both: the cap first, then the floor (min_ttl wins, as in the cache's policy) */
	o = (dnsnap_answer_opts_t){ .min_ttl = 2000, .max_ttl = 1000 };
	build(&w, "www.example.com", 0, &o, NOW + 5, &a);
	assert_int_equal(a.rr[0].ttl, 1995);
	assert_int_equal(a.rr[1].ttl, 1995);

	/* the cache passes its own */
	dnsnap_cache_opts_t co;
	dnsnap_cache_opts_default(&co);
	co.max_ttl = 1000;
	assert_int_equal(cached(&w, "www.example.com", 0, &co, NOW + 5, &a), DNSNAP_OK);
	assert_int_equal(a.rr[0].ttl, 995);
	assert_int_equal(a.rr[1].ttl, 295);
	dnsnap_cache_opts_default(&co);
	co.min_ttl = 600;
	/* the entry lives 600 s (the policy raised it), its A served 600 - age */
	assert_int_equal(cached(&w, "www.example.com", 0, &co, NOW + 500, &a), DNSNAP_OK);
	assert_int_equal(a.rr[0].ttl, 3100);
	assert_int_equal(a.rr[1].ttl, 100);
}

static void test_referral_glue_keeps_its_own_ttl(void **state)
{
	(void)state;
	wb_t w;
	referral(&w, 600, 3600);
	ans_t a;
	assert_int_equal(cached(&w, "www.sub.example.com", 0, NULL, NOW + 10, &a), DNSNAP_OK);
	assert_int_equal(a.n, 2);
	assert_int_equal(a.rr[0].type, 2);
	assert_int_equal(a.rr[0].ttl, 590);
	assert_int_equal(a.rr[1].type, 1);
	assert_int_equal(a.rr[1].ttl, 3590);
}

/* cname.example.com. A: CNAME (3600) to nx.example.com., which does not exist
 * (NXDOMAIN, SOA 300 with MINIMUM 300): Unbound serves the CNAME with its own
 * TTL and the SOA with the negative TTL; the e2e comparison found the CNAME
 * cut to the SOA's 299 */
static void test_a_cname_before_nxdomain_keeps_its_own_ttl(void **state)
{
	(void)state;
	wb_t w;
	ans_t a;
	put_header(&w, 0x8183, 1, 1, 1, 0);
	put_name(&w, "cname.example.com");
	put_u16(&w, 1);
	put_u16(&w, 1);
	put_ptr(&w, 12);
	size_t at = put_fixed(&w, 5, 1, 3600);
	size_t target = w.n;
	put_name(&w, "nx.example.com");
	end_rdata(&w, at);
	put_ptr(&w, target + 3); /* example.com. */
	at = put_fixed(&w, 6, 1, 300);
	put_name(&w, "ns.example.com");
	put_name(&w, "hostmaster.example.com");
	put_u32(&w, 2026120101);
	put_u32(&w, 7200);
	put_u32(&w, 3600);
	put_u32(&w, 1209600);
	put_u32(&w, 300);
	end_rdata(&w, at);
	assert_int_equal(cached(&w, "cname.example.com", 0, NULL, NOW + 5, &a), DNSNAP_OK);
	assert_int_equal(a.flags & 0xf, 3);
	assert_int_equal(a.n, 2);
	assert_int_equal(a.rr[0].type, 5);
	assert_int_equal(a.rr[0].ttl, 3595);
	assert_int_equal(a.rr[1].type, 6);
	assert_int_equal(a.rr[1].ttl, 295);
}

static void test_negative_answers_serve_the_negative_ttl(void **state)
{
	(void)state;
	for (unsigned rcode = 0; rcode <= 3; rcode += 3) { /* NODATA, NXDOMAIN */
		wb_t w;
		ans_t a;
		/* RFC 2308: min(SOA TTL, MINIMUM), both ways round */
		negative(&w, rcode, 3600, 900);
		assert_int_equal(cached(&w, "nx.example.com", 0, NULL, NOW + 5, &a), DNSNAP_OK);
		assert_int_equal(a.flags & 0xf, rcode);
		assert_int_equal(a.n, 1);
		assert_int_equal(a.rr[0].type, 6);
		assert_int_equal(a.rr[0].ttl, 895);
		negative(&w, rcode, 600, 3600);
		assert_int_equal(cached(&w, "nx.example.com", 0, NULL, NOW + 5, &a), DNSNAP_OK);
		assert_int_equal(a.rr[0].ttl, 595);
		/* answer_build alone: the entry's time left caps the SOA ... */
		negative(&w, rcode, 3600, 900);
		dnsnap_answer_opts_t o = { 0 };
		build(&w, "nx.example.com", 0, &o, NOW + 5, &a);
		assert_int_equal(a.rr[0].ttl, 895);
		/* ... and min_ttl and max_ttl are the positive entries' only */
		o = (dnsnap_answer_opts_t){ .min_ttl = 2000, .max_ttl = 100 };
		build(&w, "nx.example.com", 0, &o, NOW + 5, &a);
		assert_int_equal(a.rr[0].ttl, 895);
		/* max_neg_ttl shortens the entry, and so the SOA's TTL */
		dnsnap_cache_opts_t co;
		dnsnap_cache_opts_default(&co);
		co.max_neg_ttl = 300;
		assert_int_equal(cached(&w, "nx.example.com", 0, &co, NOW + 5, &a), DNSNAP_OK);
		assert_int_equal(a.rr[0].ttl, 295);
	}
}

static void test_stale_answers_have_ttl_30_and_ede_3(void **state)
{
	(void)state;
	wb_t w;
	ans_t a;
	dnsnap_cache_opts_t co;
	dnsnap_cache_opts_default(&co);
	co.serve_stale = 1;

	cname_a(&w, 3600, 300, 0);
	assert_int_equal(cached(&w, "www.example.com", 1, &co, NOW + 400, &a), DNSNAP_OK);
	assert_int_equal(a.n, 2);
	assert_int_equal(a.rr[0].ttl, DNSNAP_STALE_TTL);
	assert_int_equal(a.rr[1].ttl, DNSNAP_STALE_TTL);
	assert_int_equal(a.nede, 1);
	assert_int_equal(a.ede[0], 3);
	/* fresh: no EDE */
	assert_int_equal(cached(&w, "www.example.com", 1, &co, NOW + 5, &a), DNSNAP_OK);
	assert_int_equal(a.opt, 1);
	assert_int_equal(a.nede, 0);
	/* without EDNS: no OPT at all */
	assert_int_equal(cached(&w, "www.example.com", 0, &co, NOW + 400, &a), DNSNAP_OK);
	assert_int_equal(a.opt, 0);
	assert_int_equal(a.rr[0].ttl, DNSNAP_STALE_TTL);

	/* after the entry's own EDE options (18 "Prohibited": any code) */
	cname_a(&w, 3600, 300, 18);
	assert_int_equal(cached(&w, "www.example.com", 1, &co, NOW + 400, &a), DNSNAP_OK);
	assert_int_equal(a.nede, 2);
	assert_int_equal(a.ede[0], 18);
	assert_int_equal(a.ede[1], 3);
	assert_int_equal(cached(&w, "www.example.com", 1, &co, NOW + 5, &a), DNSNAP_OK);
	assert_int_equal(a.nede, 1);
	assert_int_equal(a.ede[0], 18);

	/* an entry that holds EDE 3 already (upstream answered stale): not twice */
	cname_a(&w, 3600, 300, 3);
	assert_int_equal(cached(&w, "www.example.com", 1, &co, NOW + 400, &a), DNSNAP_OK);
	assert_int_equal(a.nede, 1);
	assert_int_equal(a.ede[0], 3);

	/* answer_build's o->stale alone: the same */
	cname_a(&w, 3600, 300, 0);
	dnsnap_answer_opts_t o = { .stale = 1 };
	build(&w, "www.example.com", 1, &o, NOW + 999999, &a);
	assert_int_equal(a.nede, 1);
	assert_int_equal(a.ede[0], 3);
	assert_int_equal(a.rr[1].ttl, DNSNAP_STALE_TTL);
}

/* The stale EDE's 6 bytes are kept back like the OPT's: an answer cut to a
 * small size limit still carries it, and stays within the limit. */
static void test_stale_ede_fits_the_size_limit(void **state)
{
	(void)state;
	wb_t w;
	cname_a(&w, 3600, 300, 0);
	assert_int_equal(dnsnap_msg_encode(w.b, w.n, NOW, NULL, 0, &scratch, NULL), DNSNAP_OK);
	uint8_t qb[512], out[1232];
	dnsnap_query_t q;
	ans_query_parse(qb, "www.example.com", 1, 0, 1, 0, &q);
	size_t base = q.question_end + 11;
	for (size_t limit = base; limit < base + 80; limit++) {
		dnsnap_answer_opts_t o = { .now = NOW + 400, .max_size = (uint16_t)limit,
					   .stale = 1 };
		size_t n;
		ans_t a;
		assert_int_equal(dnsnap_answer_build(&q, scratch.entry, scratch.entry_len, &o, out,
						     sizeof out, &n), DNSNAP_OK);
		assert_true(n <= (limit < base + 6 ? base : limit));
		assert_int_equal(ans_parse(out, n, &a), 0);
		assert_int_equal(a.nede, limit >= base + 6 ? 1 : 0);
	}
}

/* dnsnap_cache_encode(): the policy on the one encoding a miss inserts, answers
 * and seals. A cache of its own caps (1 hour, 10 minutes negative): the
 * expected expiries are the test's configuration, not the library's defaults. */
static void test_one_encoding_carries_the_caches_own_caps(void **state)
{
	(void)state;
	dnsnap_cache_opts_t o;
	dnsnap_cache_opts_default(&o);
	o.max_ttl = 3600;
	o.max_neg_ttl = 600;
	dnsnap_cache_t *c;
	assert_int_equal(dnsnap_cache_new(&o, &c), DNSNAP_OK);
	wb_t w;
	dnsnap_hdr_t h;
	cname_a(&w, 172800, 172800, 0); /* an authority's two days */
	assert_int_equal(dnsnap_cache_encode(c, w.b, w.n, NOW, NULL, 0, &scratch, NULL),
			 DNSNAP_OK);
	assert_int_equal(dnsnap_entry_header(scratch.entry, scratch.entry_len, &h, NULL),
			 DNSNAP_OK);
	assert_int_equal(h.inception, NOW);
	assert_int_equal(h.expiry, NOW + 3600);
	assert_int_equal(scratch.ttl, 3600);
	negative(&w, 3, 86400, 86400); /* NXDOMAIN, SOA MINIMUM a day */
	assert_int_equal(dnsnap_cache_encode(c, w.b, w.n, NOW, NULL, 0, &scratch, NULL),
			 DNSNAP_OK);
	assert_int_equal(dnsnap_entry_header(scratch.entry, scratch.entry_len, &h, NULL),
			 DNSNAP_OK);
	assert_int_equal(h.expiry, NOW + 600);
	/* inserted as encoded: the cache's entry is that one, and so is an answer
	 * from the encoding itself (each record capped at max_ttl, aged) */
	cname_a(&w, 172800, 300, 0);
	assert_int_equal(dnsnap_cache_encode(c, w.b, w.n, NOW, NULL, 0, &scratch, NULL),
			 DNSNAP_OK);
	assert_int_equal(dnsnap_cache_insert_encoded(c, &scratch), DNSNAP_OK);
	dnsnap_query_t q;
	wb_t qw;
	put_header(&qw, 0x0100, 1, 0, 0, 0);
	put_name(&qw, "WWW.example.com");
	put_u16(&qw, 1);
	put_u16(&qw, 1);
	assert_int_equal(dnsnap_query_parse(qw.b, qw.n, NULL, 0, &q, NULL), DNSNAP_OK);
	uint8_t a1[512], a2[512];
	size_t n1, n2;
	assert_int_equal(dnsnap_cache_answer(c, &q, NOW + 5, 0, a1, sizeof a1, &n1), DNSNAP_OK);
	assert_int_equal(dnsnap_cache_answer_entry(c, &q, scratch.entry, scratch.entry_len,
						   NOW + 5, 0, a2, sizeof a2, &n2), DNSNAP_OK);
	assert_int_equal(n1, n2);
	assert_memory_equal(a1, a2, n1);
	ans_t a;
	assert_int_equal(ans_parse(a1, n1, &a), 0);
	assert_int_equal(a.n, 2);
	assert_int_equal(a.rr[0].ttl, 3600 - 5); /* the CNAME: capped at the cache's hour */
	assert_int_equal(a.rr[1].ttl, 300 - 5);
	/* TTL 0 after the policy: ENOTCACHE, the encoding still there to answer from */
	cname_a(&w, 0, 0, 0);
	assert_int_equal(dnsnap_cache_encode(c, w.b, w.n, NOW, NULL, 0, &scratch, NULL),
			 DNSNAP_ENOTCACHE);
	assert_true(scratch.entry_len > 0);
	dnsnap_cache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_record_keeps_its_own_ttl),
		cmocka_unit_test(test_max_ttl_caps_and_min_ttl_raises),
		cmocka_unit_test(test_referral_glue_keeps_its_own_ttl),
		cmocka_unit_test(test_negative_answers_serve_the_negative_ttl),
		cmocka_unit_test(test_a_cname_before_nxdomain_keeps_its_own_ttl),
		cmocka_unit_test(test_stale_answers_have_ttl_30_and_ede_3),
		cmocka_unit_test(test_stale_ede_fits_the_size_limit),
		cmocka_unit_test(test_one_encoding_carries_the_caches_own_caps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
