/*
 * test_serve.c: serve_reply() (cli/serve/serve_reply.c), the packet handler of
 * `dnsnap serve`: hits are the engine's answers byte for byte, sized by the
 * transport; misses, malformed queries, other opcodes and EDNS versions get
 * the error replies of serve.h, byte for byte; what cannot be answered is
 * dropped. The miss path's glue (miss_take(), serve_miss.c): an upstream
 * answer encoded once with the cache's caps, cached, sealed for the second
 * level with the same expiry, and accepted by its reader. The sockets are
 * tests/cli/test_serve.sh's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dnsnap.h"
#include "serve.h"
#include "wb.h"

#define NOW 1700000000u

static dnsnap_cache_t *cache;
static uint8_t out[65535];
static size_t out_len;

/* www.example.com A; big.example.com and mid.example.com TXT: 12 and 6
 * records of 200 bytes */
static int setup(void **state)
{
	(void)state;
	static dnsnap_encoded_t enc;
	wb_t w;
	size_t rd;
	if (dnsnap_cache_new(NULL, &cache) != DNSNAP_OK)
		return -1;
	put_header(&w, 0x8180, 1, 1, 0, 0);
	put_name(&w, "www.example.com");
	put_u16(&w, 1);
	put_u16(&w, 1);
	put_ptr(&w, 12);
	rd = put_fixed(&w, 1, 1, 300);
	put_raw(&w, "\xc0\x00\x02\x01", 4);
	end_rdata(&w, rd);
	if (dnsnap_cache_insert(cache, w.b, w.n, NOW, NULL, 0, &enc, NULL) != DNSNAP_OK)
		return -1;
	for (unsigned n = 12; n >= 6; n -= 6) {
		put_header(&w, 0x8180, 1, n, 0, 0);
		put_name(&w, n == 12 ? "big.example.com" : "mid.example.com");
		put_u16(&w, 16);
		put_u16(&w, 1);
		for (unsigned i = 0; i < n; i++) {
			put_ptr(&w, 12);
			rd = put_fixed(&w, 16, 1, 3600);
			put_u8(&w, 200);
			for (unsigned k = 0; k < 200; k++)
				put_u8(&w, 'a' + (i + k) % 26);
			end_rdata(&w, rd);
		}
		if (dnsnap_cache_insert(cache, w.b, w.n, NOW, NULL, 0, &enc, NULL) != DNSNAP_OK)
			return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	dnsnap_cache_free(cache);
	return 0;
}

/* A query: ID 0x1234, the flags given, QDCOUNT 1, NAME TYPE IN, and an OPT
 * of @p size bytes (none when 0) with VERSION @p version and DO. */
static void query(wb_t *w, unsigned flags, const char *name, unsigned type, unsigned size,
		  unsigned version, int do_bit)
{
	put_header(w, flags, 1, 0, 0, size ? 1 : 0);
	w->b[0] = 0x12;
	w->b[1] = 0x34;
	put_name(w, name);
	put_u16(w, type);
	put_u16(w, 1);
	if (size) {
		put_u8(w, 0);
		put_u16(w, 41);
		put_u16(w, size);
		put_u8(w, 0);
		put_u8(w, version);
		put_u16(w, do_bit ? 0x8000 : 0);
		put_u16(w, 0);
	}
}

static int reply(const wb_t *w, int tcp, size_t cap)
{
	out_len = 99999;
	return serve_reply(cache, w->b, w->n, tcp, NOW, out, cap, &out_len);
}

static unsigned u16at(size_t at)
{
	return (unsigned)(out[at] << 8 | out[at + 1]);
}

/* The header of an error reply: ID, flags, the four counts. */
static void assert_header(unsigned flags, unsigned qd, unsigned ar)
{
	assert_true(out_len >= 12);
	assert_int_equal(u16at(0), 0x1234);
	assert_int_equal(u16at(2), flags);
	assert_int_equal(u16at(4), qd);
	assert_int_equal(u16at(6), 0);
	assert_int_equal(u16at(8), 0);
	assert_int_equal(u16at(10), ar);
}

static void test_a_hit_is_the_engines_answer(void **state)
{
	(void)state;
	wb_t w;
	query(&w, 0x0100, "WwW.example.COM", 1, 1232, 0, 0);
	assert_int_equal(reply(&w, 0, SERVE_UDP_MAX), SERVE_HIT);
	dnsnap_query_t q;
	assert_int_equal(dnsnap_query_parse(w.b, w.n, NULL, 0, &q, NULL), DNSNAP_OK);
	static uint8_t want[65535];
	size_t want_len;
	assert_int_equal(dnsnap_cache_answer(cache, &q, NOW, 1232, want, sizeof want, &want_len),
			 DNSNAP_OK);
	assert_int_equal(out_len, want_len);
	/* the rotation counter differs between the two lookups: one A record */
	assert_memory_equal(out, want, want_len);
}

static void test_a_udp_answer_fits_the_clients_size_and_sets_tc(void **state)
{
	(void)state;
	wb_t w;
	/* an RRset that does not fit is left out whole (the engine cuts at
	 * RRsets): TC, no answer records */
	query(&w, 0x0100, "big.example.com", 16, 0, 0, 0); /* no EDNS: 512 */
	assert_int_equal(reply(&w, 0, SERVE_UDP_MAX), SERVE_HIT);
	assert_true(out_len <= 512);
	assert_true(out[2] & 0x02);
	assert_int_equal(u16at(6), 0);
	/* mid.example.com's answer takes about 1,300 bytes: it fits 2000 but a
	 * client offering that still gets at most SERVE_UDP_MAX over UDP */
	query(&w, 0x0100, "mid.example.com", 16, 2000, 0, 0);
	assert_int_equal(reply(&w, 0, SERVE_UDP_MAX), SERVE_HIT);
	assert_true(out_len <= SERVE_UDP_MAX);
	assert_true(out[2] & 0x02);
	assert_int_equal(u16at(6), 0);
	assert_int_equal(reply(&w, 1, sizeof out), SERVE_HIT);
	assert_true(out_len > SERVE_UDP_MAX && out_len < 2000);
	assert_false(out[2] & 0x02);
	assert_int_equal(u16at(6), 6);
}

static void test_a_tcp_answer_is_whole(void **state)
{
	(void)state;
	wb_t w;
	query(&w, 0x0100, "big.example.com", 16, 0, 0, 0);
	assert_int_equal(reply(&w, 1, sizeof out), SERVE_HIT);
	assert_true(out_len > 12 * 200);
	assert_false(out[2] & 0x02);
	assert_int_equal(u16at(6), 12);
}

static void test_a_miss_with_edns_is_refused_with_ede_20(void **state)
{
	(void)state;
	wb_t w;
	query(&w, 0x0110, "nothere.example", 1, 1232, 0, 1); /* RD, CD; DO */
	assert_int_equal(reply(&w, 0, SERVE_UDP_MAX), SERVE_MISS);
	assert_header(0x8195, 1, 1); /* QR RD RA CD, REFUSED */
	size_t q = 12 + 17 + 4;
	assert_memory_equal(out + 12, w.b + 12, q - 12);
	static const uint8_t opt[] = {
		0, 0, 41, 0x04, 0xd0, 0, 0, 0x80, 0, 0, 18,     /* root OPT 1232, DO */
		0, 15, 0, 14, 0, 20, 'n', 'o', 't', ' ', 'i', 'n', ' ', 'c', 'a', 'c', 'h', 'e',
	};
	assert_int_equal(out_len, q + sizeof opt);
	assert_memory_equal(out + q, opt, sizeof opt);
}

static void test_a_miss_without_edns_is_refused_without_opt(void **state)
{
	(void)state;
	wb_t w;
	query(&w, 0x0000, "nothere.example", 1, 0, 0, 0);
	assert_int_equal(reply(&w, 0, SERVE_UDP_MAX), SERVE_MISS);
	assert_header(0x8085, 1, 0);
	assert_int_equal(out_len, w.n);
	assert_memory_equal(out + 12, w.b + 12, w.n - 12);
}

static void test_an_expired_entry_is_a_miss(void **state)
{
	(void)state;
	wb_t w;
	query(&w, 0x0100, "www.example.com", 1, 0, 0, 0);
	out_len = 0;
	assert_int_equal(serve_reply(cache, w.b, w.n, 0, NOW + 301, out, SERVE_UDP_MAX, &out_len),
			 SERVE_MISS);
	assert_int_equal(out[3] & 15, 5);
}

static void test_other_opcodes_are_notimp_echoing_question_and_opt(void **state)
{
	(void)state;
	wb_t w;
	query(&w, 0x2000 | 0x0100, "www.example.com", 6, 1232, 0, 0); /* NOTIFY */
	assert_int_equal(reply(&w, 0, SERVE_UDP_MAX), SERVE_NOTIMP);
	assert_header(0xa184, 1, 1); /* QR, opcode 4, RD, RA, NOTIMP */
	assert_int_equal(out_len, w.n);
	assert_memory_equal(out + 12, w.b + 12, w.n - 12 - 11);
	query(&w, 0x2800, "www.example.com", 1, 0, 0, 0); /* UPDATE, no EDNS */
	assert_int_equal(reply(&w, 1, sizeof out), SERVE_NOTIMP);
	assert_header(0xa884, 1, 0);
}

static void test_edns_version_1_is_badvers(void **state)
{
	(void)state;
	wb_t w;
	query(&w, 0x0100, "www.example.com", 1, 1232, 1, 1);
	assert_int_equal(reply(&w, 0, SERVE_UDP_MAX), SERVE_BADVERS);
	assert_header(0x8180, 1, 1); /* RCODE 0 in the header: BADVERS is 16 */
	size_t o = w.n - 11;
	static const uint8_t opt[] = { 0, 0, 41, 0x04, 0xd0, 1, 0, 0x80, 0, 0, 0 };
	assert_int_equal(out_len, w.n);
	assert_memory_equal(out + o, opt, sizeof opt); /* EXTENDED-RCODE 1, VERSION 0 */
}

static void test_malformed_queries_are_formerr(void **state)
{
	(void)state;
	wb_t w;
	/* QDCOUNT 0: no question to echo */
	put_header(&w, 0x0100, 0, 0, 0, 0);
	assert_int_equal(reply(&w, 0, SERVE_UDP_MAX), SERVE_FORMERR);
	assert_int_equal(out_len, 12);
	assert_int_equal(u16at(0), 0x4a4a);
	assert_int_equal(u16at(2), 0x8181);
	/* QDCOUNT 2 */
	put_header(&w, 0x0100, 2, 0, 0, 0);
	put_name(&w, "a.example");
	put_u16(&w, 1);
	put_u16(&w, 1);
	assert_int_equal(reply(&w, 0, SERVE_UDP_MAX), SERVE_FORMERR);
	assert_int_equal(out_len, 12);
	/* a cut question name: the ID still comes back */
	query(&w, 0x0100, "www.example.com", 1, 0, 0, 0);
	w.n = 20;
	assert_int_equal(reply(&w, 0, SERVE_UDP_MAX), SERVE_FORMERR);
	assert_header(0x8181, 0, 0);
	assert_int_equal(out_len, 12);
	/* two additional records: the question is echoed, the OPTs are not */
	query(&w, 0x0100, "www.example.com", 1, 1232, 0, 0);
	w.b[11] = 2;
	assert_int_equal(reply(&w, 1, sizeof out), SERVE_FORMERR);
	assert_header(0x8181, 1, 0);
	assert_int_equal(out_len, w.n - 11);
	assert_memory_equal(out + 12, w.b + 12, out_len - 12);
	/* a compression pointer in the question */
	put_header(&w, 0x0000, 1, 0, 0, 0);
	put_ptr(&w, 12);
	put_u16(&w, 1);
	put_u16(&w, 1);
	assert_int_equal(reply(&w, 0, SERVE_UDP_MAX), SERVE_FORMERR);
	assert_int_equal(out_len, 12);
	/* an answer record in a query */
	query(&w, 0x0100, "www.example.com", 1, 0, 0, 0);
	w.b[7] = 1;
	assert_int_equal(reply(&w, 0, SERVE_UDP_MAX), SERVE_FORMERR);
}

static void test_responses_and_runts_are_dropped(void **state)
{
	(void)state;
	wb_t w;
	query(&w, 0x8180, "www.example.com", 1, 0, 0, 0); /* QR: a response */
	assert_int_equal(reply(&w, 0, SERVE_UDP_MAX), SERVE_DROP);
	assert_int_equal(out_len, 0);
	w.n = 11;
	w.b[2] = 0x01;
	assert_int_equal(reply(&w, 1, sizeof out), SERVE_DROP);
	assert_int_equal(out_len, 0);
	assert_int_equal(serve_reply(cache, w.b, 0, 0, NOW, out, SERVE_UDP_MAX, &out_len),
			 SERVE_DROP);
}

static void test_a_source_outside_allow_is_refused_with_ede_18(void **state)
{
	(void)state;
	wb_t w;
	query(&w, 0x0100, "www.example.com", 1, 1232, 0, 0); /* a hit, were it allowed */
	struct serve_in in = { .cache = cache, .now = NOW, .refuse = 1 };
	dnsnap_query_t q;
	dnsnap_lookup_t lk;
	assert_int_equal(serve_handle(&in, w.b, w.n, out, SERVE_UDP_MAX, &out_len, &q, &lk),
			 SERVE_REFUSED);
	assert_header(0x8185, 1, 1); /* QR RD RA, REFUSED */
	size_t qe = 12 + 17 + 4;
	static const uint8_t opt[] = {
		0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 6, /* root OPT 1232 */
		0, 15, 0, 2, 0, 18,                     /* EDE 18, no text */
	};
	assert_int_equal(out_len, qe + sizeof opt);
	assert_memory_equal(out + qe, opt, sizeof opt);
}

static void test_a_miss_to_forward_has_no_reply_and_the_parsed_query(void **state)
{
	(void)state;
	wb_t w;
	query(&w, 0x0100, "nothere.example", 28, 1232, 0, 1);
	struct serve_in in = { .cache = cache, .now = NOW, .forward = 1 };
	dnsnap_query_t q;
	dnsnap_lookup_t lk;
	out_len = 99;
	assert_int_equal(serve_handle(&in, w.b, w.n, out, SERVE_UDP_MAX, &out_len, &q, &lk),
			 SERVE_FORWARD);
	assert_int_equal(out_len, 0);
	assert_int_equal(q.qtype, 28);
	assert_int_equal(q.do_bit, 1);
	/* a hit is still answered, from memory */
	query(&w, 0x0100, "www.example.com", 1, 0, 0, 0);
	assert_int_equal(serve_handle(&in, w.b, w.n, out, SERVE_UDP_MAX, &out_len, &q, &lk),
			 SERVE_HIT);
	assert_int_equal(lk.tier, DNSNAP_TIER_MEMORY);
	assert_int_equal(lk.stale, 0);
}

static void test_upstream_failure_is_servfail_with_ede_and_text(void **state)
{
	(void)state;
	wb_t w;
	query(&w, 0x0100, "nothere.example", 1, 1232, 0, 0);
	out_len = serve_error(w.b, w.n, 2, SERVE_EDE_NO_REACHABLE, "timed out", out);
	assert_header(0x8182, 1, 1); /* QR RD RA, SERVFAIL */
	size_t qe = 12 + 17 + 4;
	static const uint8_t opt[] = {
		0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 15,
		0, 15, 0, 11, 0, 22, 't', 'i', 'm', 'e', 'd', ' ', 'o', 'u', 't',
	};
	assert_int_equal(out_len, qe + sizeof opt);
	assert_memory_equal(out + qe, opt, sizeof opt);
	/* without EDNS: no OPT, so no EDE */
	query(&w, 0x0100, "nothere.example", 1, 0, 0, 0);
	out_len = serve_error(w.b, w.n, 2, SERVE_EDE_NETWORK, "failed", out);
	assert_header(0x8182, 1, 0);
	assert_int_equal(out_len, w.n);
	/* a text over SERVE_EDE_TEXT_MAX is left out, the code stays */
	char big[SERVE_EDE_TEXT_MAX + 2];
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = 0;
	query(&w, 0x0100, "nothere.example", 1, 1232, 0, 0);
	out_len = serve_error(w.b, w.n, 2, SERVE_EDE_NETWORK, big, out);
	assert_int_equal(out_len, qe + 11 + 6);
	assert_int_equal(u16at(qe + 11 + 4), SERVE_EDE_NETWORK);
}

/* An authority's answer: longttl.example.test A 192.0.2.172, TTL 172800 */
static void long_answer(wb_t *w)
{
	put_header(w, 0x8580, 1, 1, 0, 0); /* QR AA RD RA: as NSD answers */
	put_name(w, "longttl.example.test");
	put_u16(w, 1);
	put_u16(w, 1);
	put_ptr(w, 12);
	size_t rd = put_fixed(w, 1, 1, 172800);
	put_raw(w, "\xc0\x00\x02\xac", 4);
	end_rdata(w, rd);
}

/* An authority's NXDOMAIN with its SOA: TTL and MINIMUM 86400 */
static void long_nxdomain(wb_t *w)
{
	put_header(w, 0x8583, 1, 0, 1, 0);
	put_name(w, "nx.longneg.test");
	put_u16(w, 1);
	put_u16(w, 1);
	put_ptr(w, 15); /* longneg.test. */
	size_t rd = put_fixed(w, 6, 1, 86400);
	put_name(w, "ns1.longneg.test");
	put_name(w, "hostmaster.longneg.test");
	put_u32(w, 2026120101);
	put_u32(w, 7200);
	put_u32(w, 3600);
	put_u32(w, 1209600);
	put_u32(w, 86400);
	end_rdata(w, rd);
}

/* The value's entry, opened as a reader of the second level with the same
 * cache takes it (dnsnap_l2_value_accept()), and its header; fails the test
 * when the reader refuses it */
static void read_back(const dnsnap_cache_t *c, const uint8_t *key, size_t key_len,
		      const uint8_t *val, size_t vl, uint32_t now, dnsnap_hdr_t *h)
{
	const uint8_t *e;
	size_t el;
	dnsnap_diag_t d = { 0 };
	int err = dnsnap_l2_value_accept(c, key, key_len, val, vl, now, &e, &el, &d);
	if (err != DNSNAP_OK)
		fail_msg("the reader refuses it: %s (%s)", d.msg, dnsnap_strerror(err));
	assert_int_equal(dnsnap_entry_header(e, el, h, NULL), DNSNAP_OK);
}

static void test_the_miss_path_seals_what_it_caches_with_the_caches_caps(void **state)
{
	(void)state;
	static dnsnap_encoded_t enc;
	static uint8_t val[DNSNAP_L2_VALUE_MAX];
	dnsnap_cache_opts_t o;
	dnsnap_cache_opts_default(&o); /* a resolver's caps, whatever they are */
	dnsnap_cache_t *c;
	assert_int_equal(dnsnap_cache_new(&o, &c), DNSNAP_OK);
	wb_t w;
	size_t vl = 0;
	uint64_t pxat = 0;
	dnsnap_hdr_t h;
	long_answer(&w);
	assert_int_equal(miss_take(c, w.b, w.n, NOW, &enc, val, &vl, &pxat, NULL), MISS_CACHED);
	assert_true(vl > 0);
	read_back(c, enc.key, enc.key_len, val, vl, NOW, &h);
	assert_int_equal(h.expiry, NOW + o.max_ttl); /* the cache's cap, not 172800 */
	assert_int_equal(pxat, (uint64_t)(NOW + o.max_ttl) * 1000);
	/* what the cache holds is that same entry: its answer's TTL is the cap */
	dnsnap_query_t q;
	wb_t qw;
	put_header(&qw, 0x0100, 1, 0, 0, 0);
	put_name(&qw, "longttl.example.test");
	put_u16(&qw, 1);
	put_u16(&qw, 1);
	assert_int_equal(dnsnap_query_parse(qw.b, qw.n, NULL, 0, &q, NULL), DNSNAP_OK);
	dnsnap_lookup_t lk = { .now = NOW + 1 };
	size_t n;
	assert_int_equal(dnsnap_cache_lookup(c, &q, &lk, out, sizeof out, &n), DNSNAP_OK);
	assert_int_equal(lk.tier, DNSNAP_TIER_MEMORY);
	uint8_t direct[512];
	size_t dn;
	assert_int_equal(dnsnap_cache_answer_entry(c, &q, enc.entry, enc.entry_len, NOW + 1, 0,
						   direct, sizeof direct, &dn), DNSNAP_OK);
	assert_int_equal(dn, n);
	assert_memory_equal(direct + 2, out + 2, n - 2); /* the same answer but the ID's rotation */

	/* the negative answer: the cache's negative cap, not the SOA's day */
	long_nxdomain(&w);
	assert_int_equal(miss_take(c, w.b, w.n, NOW, &enc, val, &vl, &pxat, NULL), MISS_CACHED);
	read_back(c, enc.key, enc.key_len, val, vl, NOW, &h);
	assert_int_equal(h.expiry, NOW + o.max_neg_ttl);
	assert_int_equal(pxat, (uint64_t)(NOW + o.max_neg_ttl) * 1000);

	/* without a second level, nothing sealed; TTL 0: answered, not kept */
	long_answer(&w);
	assert_int_equal(miss_take(c, w.b, w.n, NOW, &enc, NULL, NULL, NULL, NULL), MISS_CACHED);
	dnsnap_cache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_hit_is_the_engines_answer),
		cmocka_unit_test(test_a_udp_answer_fits_the_clients_size_and_sets_tc),
		cmocka_unit_test(test_a_tcp_answer_is_whole),
		cmocka_unit_test(test_a_miss_with_edns_is_refused_with_ede_20),
		cmocka_unit_test(test_a_miss_without_edns_is_refused_without_opt),
		cmocka_unit_test(test_an_expired_entry_is_a_miss),
		cmocka_unit_test(test_other_opcodes_are_notimp_echoing_question_and_opt),
		cmocka_unit_test(test_edns_version_1_is_badvers),
		cmocka_unit_test(test_malformed_queries_are_formerr),
		cmocka_unit_test(test_responses_and_runts_are_dropped),
		cmocka_unit_test(test_a_source_outside_allow_is_refused_with_ede_18),
		cmocka_unit_test(test_a_miss_to_forward_has_no_reply_and_the_parsed_query),
		cmocka_unit_test(test_upstream_failure_is_servfail_with_ede_and_text),
		cmocka_unit_test(test_the_miss_path_seals_what_it_caches_with_the_caches_caps),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
