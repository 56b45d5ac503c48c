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
#include "../helpers/wb.h"
#include "../helpers/rebuild.h"

#define NOW 1700000000u

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
