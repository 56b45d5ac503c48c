/*
 * test_rebuild.c: tests/helpers/rebuild.c, and through it the round trip
 * message -> entry -> message -> entry, which must give the same key and
 * entry bytes (what fuzz_roundtrip checks on arbitrary input).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dnsnap_format.h"
#include "../helpers/guard.h"
#include "../helpers/rebuild.h"

#define NOW 1700000000u

/* ------------------------------------------------------------ message writer */

typedef struct wb {
	uint8_t b[4096];
	size_t n;
} wb_t;

static void put_u8(wb_t *w, unsigned v)
{
	assert_true(w->n < sizeof w->b);
	w->b[w->n++] = (uint8_t)v;
}

static void put_u16(wb_t *w, unsigned v)
{
	put_u8(w, (v >> 8) & 0xff);
	put_u8(w, v & 0xff);
}

static void put_u32(wb_t *w, uint32_t v)
{
	put_u16(w, v >> 16);
	put_u16(w, v & 0xffff);
}

static void put_raw(wb_t *w, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		put_u8(w, ((const uint8_t *)p)[i]);
}

static void put_labels(wb_t *w, const char *dotted)
{
	const char *s = dotted;
	while (*s != '\0') {
		const char *dot = strchr(s, '.');
		size_t l = dot ? (size_t)(dot - s) : strlen(s);
		put_u8(w, (unsigned)l);
		put_raw(w, s, l);
		s += l;
		if (*s == '.')
			s++;
	}
}

static void put_name(wb_t *w, const char *dotted)
{
	put_labels(w, dotted);
	put_u8(w, 0);
}

static void put_ptr(wb_t *w, size_t off)
{
	put_u16(w, 0xc000 | (unsigned)off);
}

static void put_header(wb_t *w, unsigned flags, unsigned qd, unsigned an, unsigned ns,
		       unsigned ar)
{
	w->n = 0;
	put_u16(w, 0xbeef);
	put_u16(w, flags);
	put_u16(w, qd);
	put_u16(w, an);
	put_u16(w, ns);
	put_u16(w, ar);
}

static size_t put_fixed(wb_t *w, unsigned type, unsigned rclass, uint32_t ttl)
{
	put_u16(w, type);
	put_u16(w, rclass);
	put_u32(w, ttl);
	size_t at = w->n;
	put_u16(w, 0);
	return at;
}

static void end_rdata(wb_t *w, size_t at)
{
	size_t len = w->n - at - 2;
	w->b[at] = (uint8_t)(len >> 8);
	w->b[at + 1] = (uint8_t)len;
}

/* ------------------------------------------------------------ round trip */

static dnsnap_encoded_t enc, enc2; /* large: static */
static uint8_t re[1 << 17];
static size_t re_len;

static const char *ename(int err)
{
	const char *s = dnsnap_errname(err);
	return s != NULL ? s : "(unknown code)";
}

static void encode_guarded(const uint8_t *msg, size_t len, const uint8_t *tag, size_t tag_len,
			   dnsnap_encoded_t *out)
{
	uint8_t *p = guard_copy(msg, len);
	assert_non_null(p);
	dnsnap_diag_t d = { .offset = 0 };
	int rc = dnsnap_msg_encode(p, len, NOW, tag, tag_len, out, &d);
	guard_free(p);
	if (rc != DNSNAP_OK)
		fail_msg("encode: %s at %zu (\"%.128s\")", ename(rc), d.offset, d.msg);
}

static void round_trip(const wb_t *w, const char *tag)
{
	size_t tag_len = tag ? strlen(tag) : 0;
	encode_guarded(w->b, w->n, (const uint8_t *)tag, tag_len, &enc);
	assert_int_equal(dnsnap_entry_validate(enc.entry, enc.entry_len, NULL), DNSNAP_OK);

	int rc = rebuild_message(enc.key, enc.key_len, enc.entry, enc.entry_len, re, sizeof re,
				 &re_len);
	if (rc != DNSNAP_OK)
		fail_msg("rebuild: %s", ename(rc));

	dnsnap_key_t k;
	assert_int_equal(dnsnap_key_decode(enc.key, enc.key_len, &k, NULL), DNSNAP_OK);
	encode_guarded(re, re_len, k.tag, k.tag_len, &enc2);
	assert_int_equal(enc2.key_len, enc.key_len);
	assert_memory_equal(enc2.key, enc.key, enc.key_len);
	assert_int_equal(enc2.entry_len, enc.entry_len);
	assert_memory_equal(enc2.entry, enc.entry, enc.entry_len);
	assert_int_equal(enc2.ttl, enc.ttl);
}

static unsigned count_at(size_t off)
{
	return (unsigned)re[off] << 8 | re[off + 1];
}

/* ============================================================ tests */

static void test_smallest_response_rebuilds_to_a_bare_question(void **state)
{
	(void)state;
	wb_t w;
	put_header(&w, 0x8180, 1, 0, 0, 0);
	put_name(&w, "www.Example.com");
	put_u16(&w, 1);
	put_u16(&w, 1);
	round_trip(&w, NULL);
	static const uint8_t want[] = {
		0, 0, 0x80, 0x00, 0, 1, 0, 0, 0, 0, 0, 0,
		3, 'w', 'w', 'w', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0,
		0, 1, 0, 1,
	};
	assert_int_equal(re_len, sizeof want);
	assert_memory_equal(re, want, sizeof want);
}

static void test_cname_chain_with_dnssec_round_trips(void **state)
{
	(void)state;
	wb_t w;
	put_header(&w, 0x8180 | 0x0020 | 0x0010, 1, 4, 2, 1); /* AD, CD */
	put_name(&w, "www.example.com");
	put_u16(&w, 1);
	put_u16(&w, 1);
	put_ptr(&w, 12);
	size_t rl = put_fixed(&w, 5, 1, 300);
	size_t cdn = w.n, zone = cdn + 4;
	put_name(&w, "cdn.example.net");
	end_rdata(&w, rl);
	put_ptr(&w, cdn);
	rl = put_fixed(&w, 1, 1, 60);
	put_u32(&w, 0xc0000201);
	end_rdata(&w, rl);
	put_ptr(&w, cdn);
	rl = put_fixed(&w, 1, 1, 60);
	put_u32(&w, 0xc0000202);
	end_rdata(&w, rl);
	put_ptr(&w, cdn);
	rl = put_fixed(&w, 46, 1, 60);
	put_u16(&w, 1);
	put_u8(&w, 13);
	put_u8(&w, 3);
	put_u32(&w, 60);
	put_u32(&w, NOW + 1000);
	put_u32(&w, NOW - 1000);
	put_u16(&w, 4242);
	put_name(&w, "example.net");
	put_u32(&w, 0x01020304);
	end_rdata(&w, rl);
	put_ptr(&w, zone);
	rl = put_fixed(&w, 2, 1, 3600);
	size_t ns1 = w.n;
	put_labels(&w, "ns1");
	put_ptr(&w, zone);
	end_rdata(&w, rl);
	put_ptr(&w, zone);
	rl = put_fixed(&w, 2, 1, 3600);
	put_labels(&w, "NS2");
	put_ptr(&w, zone);
	end_rdata(&w, rl);
	put_ptr(&w, ns1);
	rl = put_fixed(&w, 1, 1, 3600);
	put_u32(&w, 0xc0000235);
	end_rdata(&w, rl);
	round_trip(&w, NULL);
	assert_int_equal(count_at(6), 4);
	assert_int_equal(count_at(8), 2);
	assert_int_equal(count_at(10), 1);
	assert_int_equal(re[3] & 0x30, 0x30); /* AD and CD kept */
}

static void test_nxdomain_with_ede_options_round_trips(void **state)
{
	(void)state;
	wb_t w;
	put_header(&w, 0x8183, 1, 0, 1, 1);
	put_name(&w, "nope.example.com");
	put_u16(&w, 28);
	put_u16(&w, 1);
	put_ptr(&w, 12 + 5); /* example.com */
	size_t rl = put_fixed(&w, 6, 1, 3600);
	put_labels(&w, "ns1");
	put_ptr(&w, 12 + 5);
	put_labels(&w, "hostmaster");
	put_ptr(&w, 12 + 5);
	put_u32(&w, 1);
	put_u32(&w, 7200);
	put_u32(&w, 3600);
	put_u32(&w, 86400);
	put_u32(&w, 600);
	end_rdata(&w, rl);
	/* OPT: DO, UDP 4096, a cookie (dropped) between two EDE options */
	put_u8(&w, 0);
	rl = put_fixed(&w, 41, 4096, 0x00008000);
	put_u16(&w, 15);
	put_u16(&w, 2 + 6);
	put_u16(&w, 29);
	put_raw(&w, "synth!", 6);
	put_u16(&w, 10);
	put_u16(&w, 8);
	put_u32(&w, 1);
	put_u32(&w, 2);
	put_u16(&w, 15);
	put_u16(&w, 2);
	put_u16(&w, 0);
	end_rdata(&w, rl);
	round_trip(&w, NULL);
	assert_int_equal(count_at(10), 1);
	assert_int_equal(re[3] & 0x0f, 3);
	dnsnap_hdr_t h;
	assert_int_equal(dnsnap_entry_header(enc2.entry, enc2.entry_len, &h, NULL), DNSNAP_OK);
	dnsnap_ede_t e;
	assert_int_equal(dnsnap_entry_ede(&h, 0, &e), 1);
	assert_int_equal(e.code, 29);
	assert_int_equal(dnsnap_entry_ede(&h, 1, &e), 1);
	assert_int_equal(e.code, 0);
	assert_int_equal(dnsnap_entry_ede(&h, 2, &e), 0);
}

static void test_mixed_case_question_and_owners_round_trip(void **state)
{
	(void)state;
	wb_t w;
	put_header(&w, 0x8580, 1, 2, 0, 1);
	put_name(&w, "WWW.Example.COM");
	put_u16(&w, 15);
	put_u16(&w, 1);
	put_name(&w, "www.example.com"); /* equal ignoring case: elided */
	size_t rl = put_fixed(&w, 15, 1, 300);
	put_u16(&w, 10);
	size_t mx = w.n;
	put_name(&w, "Mail.Example.com");
	end_rdata(&w, rl);
	put_name(&w, "WWW.EXAMPLE.COM"); /* SAME as the previous one */
	rl = put_fixed(&w, 15, 1, 300);
	put_u16(&w, 20);
	put_labels(&w, "Mail2");
	put_ptr(&w, mx + 5);
	end_rdata(&w, rl);
	put_ptr(&w, mx);
	rl = put_fixed(&w, 1, 1, 300);
	put_u32(&w, 0xc0000219);
	end_rdata(&w, rl);
	round_trip(&w, NULL);
}

static void test_tagged_key_and_other_classes_round_trip(void **state)
{
	(void)state;
	wb_t w;
	put_header(&w, 0x8400, 1, 1, 0, 1);
	put_name(&w, "version.bind");
	put_u16(&w, 16);
	put_u16(&w, 3); /* CH */
	put_ptr(&w, 12);
	size_t rl = put_fixed(&w, 16, 3, 0);
	put_u8(&w, 5);
	put_raw(&w, "9.9.9", 5);
	end_rdata(&w, rl);
	put_name(&w, "key.");
	rl = put_fixed(&w, 250, 255, 0); /* TSIG: dropped both times */
	put_name(&w, "hmac-sha256");
	put_u32(&w, 0);
	put_u32(&w, 0);
	put_u32(&w, 0);
	put_u16(&w, 0);
	end_rdata(&w, rl);
	round_trip(&w, "view-internal");
	assert_int_equal(count_at(10), 0);
}

static void test_ttl_with_the_high_bit_round_trips_as_0(void **state)
{
	(void)state;
	wb_t w;
	put_header(&w, 0x8180, 1, 2, 0, 0);
	put_name(&w, "a.example");
	put_u16(&w, 1);
	put_u16(&w, 1);
	put_ptr(&w, 12);
	size_t rl = put_fixed(&w, 1, 1, 0x80000000u);
	put_u32(&w, 1);
	end_rdata(&w, rl);
	put_ptr(&w, 12);
	rl = put_fixed(&w, 1, 1, 0);
	put_u32(&w, 2);
	end_rdata(&w, rl);
	round_trip(&w, NULL);
}

static void test_rebuild_reports_a_buffer_too_small(void **state)
{
	(void)state;
	wb_t w;
	put_header(&w, 0x8180, 1, 1, 0, 0);
	put_name(&w, "example.org");
	put_u16(&w, 1);
	put_u16(&w, 1);
	put_ptr(&w, 12);
	size_t rl = put_fixed(&w, 1, 1, 60);
	put_u32(&w, 0x7f000001);
	end_rdata(&w, rl);
	round_trip(&w, NULL);
	size_t need = re_len, n = 4242;
	for (size_t cap = 0; cap < need; cap++) {
		uint8_t *out = guard_copy(re, cap); /* writes past cap would crash */
		assert_non_null(out);
		int rc = rebuild_message(enc.key, enc.key_len, enc.entry, enc.entry_len, out, cap,
					 &n);
		assert_int_equal(rc, DNSNAP_ENOSPC);
		guard_free(out);
	}
	assert_int_equal(n, 4242);
	uint8_t *out = guard_copy(re, need);
	assert_non_null(out);
	assert_int_equal(rebuild_message(enc.key, enc.key_len, enc.entry, enc.entry_len, out, need,
					 &n), DNSNAP_OK);
	assert_int_equal(n, need);
	guard_free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_smallest_response_rebuilds_to_a_bare_question),
		cmocka_unit_test(test_cname_chain_with_dnssec_round_trips),
		cmocka_unit_test(test_nxdomain_with_ede_options_round_trips),
		cmocka_unit_test(test_mixed_case_question_and_owners_round_trip),
		cmocka_unit_test(test_tagged_key_and_other_classes_round_trip),
		cmocka_unit_test(test_ttl_with_the_high_bit_round_trips_as_0),
		cmocka_unit_test(test_rebuild_reports_a_buffer_too_small),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
