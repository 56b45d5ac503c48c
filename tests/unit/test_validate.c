/*
 * test_validate.c: dnsnap_entry_validate(). Start from a valid entry that
 * dnsnap_msg_encode() made from a hand-built message, corrupt one thing at a
 * time, and expect the exact code. Inputs sit against a guard page.
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

#define NOW 1700000000u

/* ------------------------------------------------------------ the fixture */

static dnsnap_encoded_t enc; /* large: static */

/*
 * example.com A: answer 2 x A, authority NS, additional: ns1's A (the NS
 * target), other.example.net AAAA and A. The entry, 136 bytes (records at 18):
 *
 *   18  rec 0  Rec_Len 11  flags 00  A    TTL 300   192.0.2.1           QNAME
 *   31  rec 1  Rec_Len 5   flags 04  192.0.2.2                          SAME
 *   38  rec 2  Rec_Len 24  flags 00  NS   TTL 3600  ns1.example.com     QNAME
 *   64  rec 3  Rec_Len 12  flags 03  A    TTL 3600  k=2 192.0.2.53      TARGET 2
 *   78  rec 4  Rec_Len 42  flags 02  AAAA TTL 3600  other.example.net 2001:db8::53  NAME
 *   122 rec 5  Rec_Len 12  flags 01  A    TTL 3600  k=4 192.0.2.54      REF 4
 *
 * Auth_Off 20, Addl_Off 46, Records 118 bytes.
 */
#define ENTRY_LEN 136
#define RECS_LEN  118
#define FLAGS     12
#define AUTH_OFF  14
#define ADDL_OFF  16
#define REC0      18
#define REC1      31
#define REC2      38
#define REC3      64
#define REC4      78
#define REC5      122
#define REC0_TTL  (REC0 + 5)
#define REC3_REF  (REC3 + 9)
#define REC5_TYPE (REC5 + 3)
#define REC5_TTL  (REC5 + 5)
#define REC5_REF  (REC5 + 9)

static const uint8_t fixture_want[ENTRY_LEN] = {
	0x00, 0xf1, 0x53, 0x65, 0x2c, 0xf2, 0x53, 0x65, 0, 0, 0, 0, 0x00, 0x00, 20, 0, 46, 0,
	/* 18 */
	11, 0, 0x00, 1, 0, 0x2c, 0x01, 0, 0, 192, 0, 2, 1,
	/* 31 */
	5, 0, 0x04, 192, 0, 2, 2,
	/* 38 */
	24, 0, 0x00, 2, 0, 0x10, 0x0e, 0, 0,
	3, 'n', 's', '1', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0,
	/* 64 */
	12, 0, 0x03, 1, 0, 0x10, 0x0e, 0, 0, 2, 192, 0, 2, 53,
	/* 78 */
	42, 0, 0x02, 28, 0, 0x10, 0x0e, 0, 0,
	5, 'o', 't', 'h', 'e', 'r', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'n', 'e', 't', 0,
	0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x53,
	/* 122 */
	12, 0, 0x01, 1, 0, 0x10, 0x0e, 0, 0, 4, 192, 0, 2, 54,
};

static uint8_t fixture[ENTRY_LEN];

static int make_fixture(void **state)
{
	(void)state;
	wb_t w = { .n = 0 };
	put_u16(&w, 0x1234);
	put_u16(&w, 0x8180);
	put_u16(&w, 1);
	put_u16(&w, 2);
	put_u16(&w, 1);
	put_u16(&w, 3);
	put_labels(&w, "example.com");
	put_u8(&w, 0);
	put_u16(&w, 1);
	put_u16(&w, 1);
	size_t rl;

	put_ptr(&w, 12);
	rl = put_fixed(&w, 1, 1, 300);
	put_u32(&w, 0xc0000201);
	end_rdata(&w, rl);
	put_ptr(&w, 12);
	rl = put_fixed(&w, 1, 1, 300);
	put_u32(&w, 0xc0000202);
	end_rdata(&w, rl);

	put_ptr(&w, 12);
	rl = put_fixed(&w, 2, 1, 3600);
	size_t ns1 = w.n;
	put_labels(&w, "ns1");
	put_ptr(&w, 12);
	end_rdata(&w, rl);

	put_ptr(&w, ns1);
	rl = put_fixed(&w, 1, 1, 3600);
	put_u32(&w, 0xc0000235);
	end_rdata(&w, rl);
	size_t other = w.n;
	put_labels(&w, "other.example.net");
	put_u8(&w, 0);
	rl = put_fixed(&w, 28, 1, 3600);
	put_u32(&w, 0x20010db8);
	put_u32(&w, 0);
	put_u32(&w, 0);
	put_u32(&w, 0x53);
	end_rdata(&w, rl);
	put_ptr(&w, other);
	rl = put_fixed(&w, 1, 1, 3600);
	put_u32(&w, 0xc0000236);
	end_rdata(&w, rl);

	uint8_t *p = guard_copy(w.b, w.n);
	assert_non_null(p);
	dnsnap_diag_t d;
	assert_int_equal(dnsnap_msg_encode(p, w.n, NOW, NULL, 0, &enc, &d), DNSNAP_OK);
	guard_free(p);
	/* the offsets below rely on this exact layout */
	assert_int_equal(enc.entry_len, ENTRY_LEN);
	assert_memory_equal(enc.entry, fixture_want, ENTRY_LEN);
	memcpy(fixture, enc.entry, ENTRY_LEN);
	return 0;
}

/* ------------------------------------------------------------ checking */

static const char *ename(int err)
{
	const char *s = dnsnap_errname(err);
	return s != NULL ? s : "(unknown code)";
}

static int validate(const uint8_t *e, size_t len, dnsnap_diag_t *d)
{
	uint8_t *p = guard_copy(e, len);
	assert_non_null(p);
	memset(d, 0, sizeof *d);
	int rc = dnsnap_entry_validate(p, len, d);
	guard_free(p);
	return rc;
}

/* ANY: FORMAT.md names the code but the offset is not pinned down. */
#define ANY ((size_t)-1)
#define expect(e, len, code, off) expect_at(__LINE__, (e), (len), (code), (off))

static void expect_at(int line, const uint8_t *e, size_t len, int code, size_t off)
{
	dnsnap_diag_t d;
	int rc = validate(e, len, &d);
	if (rc != code || (code != DNSNAP_OK && off != ANY && d.offset != off))
		fail_msg("line %d: got %s (%d) at offset %zu (\"%.128s\"), want %s at %lld", line,
			 ename(rc), rc, d.offset, d.msg, ename(code),
			 off == ANY ? -1LL : (long long)off);
	if (rc != DNSNAP_OK && d.offset > len)
		fail_msg("line %d: diag offset %zu past the entry's %zu bytes", line, d.offset,
			 len);
}

static void set16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void set32(uint8_t *p, uint32_t v)
{
	set16(p, v & 0xffff);
	set16(p + 2, v >> 16);
}

/* A fresh copy of the fixture to corrupt. */
static uint8_t *fresh(uint8_t *buf)
{
	memcpy(buf, fixture, ENTRY_LEN);
	return buf;
}

/* ============================================================ tests */

static void test_fixture_is_valid(void **state)
{
	(void)state;
	expect(fixture, ENTRY_LEN, DNSNAP_OK, 0);
	dnsnap_hdr_t h;
	assert_int_equal(dnsnap_entry_header(fixture, ENTRY_LEN, &h, NULL), DNSNAP_OK);
	assert_int_equal(h.auth_off, 20);
	assert_int_equal(h.addl_off, 46);
	assert_int_equal(h.records_len, RECS_LEN);
}

static void test_reserved_entry_flag_bit_12_is_reserved(void **state)
{
	(void)state;
	uint8_t e[ENTRY_LEN + 8];
	for (unsigned bit = 12; bit < 16; bit++) {
		set16(fresh(e) + FLAGS, 1u << bit);
		expect(e, ENTRY_LEN, DNSNAP_ERESERVED, FLAGS);
	}
}

static void test_minor_flag_bits_9_to_11_are_ignored(void **state)
{
	(void)state;
	uint8_t e[ENTRY_LEN + 8];
	for (unsigned bit = 9; bit < 12; bit++) {
		set16(fresh(e) + FLAGS, 1u << bit);
		expect(e, ENTRY_LEN, DNSNAP_OK, 0);
	}
	set16(fresh(e) + FLAGS, DNSNAP_EF_MINOR);
	expect(e, ENTRY_LEN, DNSNAP_OK, 0);
}

static void test_reserved_record_flag_bits_are_reserved(void **state)
{
	(void)state;
	uint8_t e[ENTRY_LEN + 8];
	for (unsigned bit = 4; bit < 8; bit++) {
		fresh(e)[REC0 + 2] |= (uint8_t)(1u << bit);
		expect(e, ENTRY_LEN, DNSNAP_ERESERVED, REC0 + 2);
		fresh(e)[REC5 + 2] |= (uint8_t)(1u << bit);
		expect(e, ENTRY_LEN, DNSNAP_ERESERVED, REC5 + 2);
	}
}

static void test_same_on_record_0_is_a_bad_field(void **state)
{
	(void)state;
	uint8_t e[ENTRY_LEN + 8];
	fresh(e)[REC0 + 2] = DNSNAP_RF_SAME;
	expect(e, ENTRY_LEN, DNSNAP_EFIELD, REC0 + 2);
}

static void test_same_on_the_first_record_of_a_section_is_a_bad_field(void **state)
{
	(void)state;
	uint8_t e[ENTRY_LEN + 8];
	fresh(e)[REC2 + 2] = DNSNAP_RF_SAME; /* first of authority */
	expect(e, ENTRY_LEN, DNSNAP_EFIELD, REC2 + 2);
	set16(fresh(e) + AUTH_OFF, REC1 - REC0); /* authority starting at the SAME record */
	expect(e, ENTRY_LEN, DNSNAP_EFIELD, REC1 + 2);
}

static void test_same_with_owner_or_class_bits_is_a_bad_field(void **state)
{
	(void)state;
	uint8_t e[ENTRY_LEN + 8];
	for (unsigned mode = 1; mode < 4; mode++) {
		fresh(e)[REC1 + 2] = (uint8_t)(DNSNAP_RF_SAME | mode);
		expect(e, ENTRY_LEN, DNSNAP_EFIELD, REC1 + 2);
	}
	fresh(e)[REC1 + 2] = DNSNAP_RF_SAME | DNSNAP_RF_CLASS;
	expect(e, ENTRY_LEN, DNSNAP_EFIELD, REC1 + 2);
}

static void test_owner_ref_to_the_current_or_a_later_record_is_a_bad_field(void **state)
{
	(void)state;
	uint8_t e[ENTRY_LEN + 8];
	static const uint8_t bad[] = { 5, 6, 63, 64, 255 };
	for (size_t i = 0; i < sizeof bad; i++) {
		fresh(e)[REC5_REF] = bad[i];
		expect(e, ENTRY_LEN, DNSNAP_EFIELD, REC5_REF);
	}
	fresh(e)[REC3_REF] = 3; /* TARGET to itself */
	expect(e, ENTRY_LEN, DNSNAP_EFIELD, REC3_REF);
}

static void test_owner_ref_to_a_record_owned_by_the_qname_is_a_bad_field(void **state)
{
	(void)state;
	uint8_t e[ENTRY_LEN + 8];
	static const uint8_t bad[] = { 0, 1, 2 }; /* QNAME, SAME after QNAME, QNAME */
	for (size_t i = 0; i < sizeof bad; i++) {
		fresh(e)[REC5_REF] = bad[i];
		expect(e, ENTRY_LEN, DNSNAP_EFIELD, REC5_REF);
	}
	/* a REF to a TARGET record resolves through it */
	fresh(e)[REC5_REF] = 3;
	expect(e, ENTRY_LEN, DNSNAP_OK, 0);
}

static void test_owner_target_of_a_record_without_a_target_is_a_bad_field(void **state)
{
	(void)state;
	uint8_t e[ENTRY_LEN + 8];
	fresh(e)[REC3_REF] = 0; /* an A */
	expect(e, ENTRY_LEN, DNSNAP_EFIELD, REC3_REF);
	fresh(e)[REC5 + 2] = DNSNAP_OWNER_TARGET; /* k = 4: an AAAA */
	expect(e, ENTRY_LEN, DNSNAP_EFIELD, REC5_REF);
	fresh(e)[REC5 + 2] = DNSNAP_OWNER_TARGET;
	e[REC5_REF] = 2; /* the NS: fine */
	expect(e, ENTRY_LEN, DNSNAP_OK, 0);
}

static void test_section_offsets_off_record_boundaries_are_bad_fields(void **state)
{
	(void)state;
	uint8_t e[ENTRY_LEN + 8];
	set16(fresh(e) + AUTH_OFF, 21);
	expect(e, ENTRY_LEN, DNSNAP_EFIELD, AUTH_OFF);
	set16(fresh(e) + AUTH_OFF, 1);
	expect(e, ENTRY_LEN, DNSNAP_EFIELD, ANY);
	set16(fresh(e) + ADDL_OFF, 47);
	expect(e, ENTRY_LEN, DNSNAP_EFIELD, ADDL_OFF);
	set16(fresh(e) + ADDL_OFF, RECS_LEN + 1); /* past the records */
	expect(e, ENTRY_LEN, DNSNAP_EFIELD, ADDL_OFF);
	set16(fresh(e) + ADDL_OFF, 0xffff);
	expect(e, ENTRY_LEN, DNSNAP_EFIELD, ADDL_OFF);
	set16(fresh(e) + AUTH_OFF, REC5 - REC0); /* after Addl_Off */
	expect(e, ENTRY_LEN, DNSNAP_EFIELD, AUTH_OFF);

	/* other boundaries are fine: the sections just hold other records */
	set16(fresh(e) + AUTH_OFF, 0);
	expect(e, ENTRY_LEN, DNSNAP_OK, 0);
	set16(fresh(e) + ADDL_OFF, RECS_LEN);
	expect(e, ENTRY_LEN, DNSNAP_OK, 0);
	set16(fresh(e) + AUTH_OFF, RECS_LEN);
	set16(e + ADDL_OFF, RECS_LEN);
	expect(e, ENTRY_LEN, DNSNAP_OK, 0);
}

static void test_rec_len_overrunning_the_entry_is_truncated(void **state)
{
	(void)state;
	uint8_t e[ENTRY_LEN + 8];
	set16(fresh(e) + REC5, 13);
	expect(e, ENTRY_LEN, DNSNAP_ETRUNC, REC5);
	set16(fresh(e) + REC5, 0xffff);
	expect(e, ENTRY_LEN, DNSNAP_ETRUNC, REC5);
	set16(fresh(e) + REC0, 0xffff);
	expect(e, ENTRY_LEN, DNSNAP_ETRUNC, REC0);
}

static void test_rec_len_too_short_for_the_fixed_fields_is_truncated(void **state)
{
	(void)state;
	/* rec 5 ends after its Type: no room for the TTL */
	uint8_t e[ENTRY_LEN + 8];
	set16(fresh(e) + REC5, 3);
	expect(e, REC5 + 2 + 3, DNSNAP_ETRUNC, REC5_TTL);
	/* ends inside its TTL */
	set16(fresh(e) + REC5, 5);
	expect(e, REC5 + 2 + 5, DNSNAP_ETRUNC, REC5_TTL);
	/* ends before its REF index */
	set16(fresh(e) + REC5, 7);
	expect(e, REC5 + 2 + 7, DNSNAP_ETRUNC, REC5_REF);
	/* a NAME owner cut by the record's end */
	set16(fresh(e) + REC4, 7 + 10);
	memcpy(e + REC4 + 2 + 17, fixture + REC5, ENTRY_LEN - REC5);
	expect(e, REC4 + 2 + 17 + ENTRY_LEN - REC5, DNSNAP_ETRUNC, REC4 + 9);
	/* Rec_Len itself cut */
	expect(fresh(e), REC5 + 1, DNSNAP_ETRUNC, REC5);
}

static void test_rec_len_of_0_is_truncated_at_rec_len(void **state)
{
	(void)state;
	/* FORMAT.md, Validation step 9: "Rec_Len whole, not 0 and within
	 * Records (DNSNAP_ETRUNC at Rec_Len)" */
	uint8_t e[ENTRY_LEN + 8];
	set16(fresh(e) + REC5, 0);
	expect(e, REC5 + 2, DNSNAP_ETRUNC, REC5);
	/* also when more records follow */
	uint8_t f[ENTRY_LEN + 8];
	memcpy(f, fixture, REC5);
	set16(f + REC5, 0);
	memcpy(f + REC5 + 2, fixture + REC5, ENTRY_LEN - REC5);
	expect(f, ENTRY_LEN + 2, DNSNAP_ETRUNC, REC5);
}

static void test_a_rdata_of_3_or_5_bytes_is_bad_rdata(void **state)
{
	(void)state;
	uint8_t e[ENTRY_LEN + 8];
	set16(fresh(e) + REC5, 11);
	expect(e, ENTRY_LEN - 1, DNSNAP_ERDATA, REC5 + 10);
	set16(fresh(e) + REC5, 13);
	e[ENTRY_LEN] = 7;
	expect(e, ENTRY_LEN + 1, DNSNAP_ERDATA, REC5 + 10);
	/* a SAME member of an A RRset is checked too: rec 1 with 3 bytes */
	uint8_t f[ENTRY_LEN + 8];
	memcpy(f, fixture, REC1 + 2 + 1 + 3);
	memcpy(f + REC1 + 6, fixture + REC2, ENTRY_LEN - REC2);
	set16(f + REC1, 4);
	set16(f + AUTH_OFF, 19);
	set16(f + ADDL_OFF, 45);
	expect(f, ENTRY_LEN - 1, DNSNAP_ERDATA, REC1 + 3);
}

static void test_ttl_over_2_pow_31_minus_1_is_a_bad_field(void **state)
{
	(void)state;
	uint8_t e[ENTRY_LEN + 8];
	set32(fresh(e) + REC0_TTL, 0x80000000u);
	expect(e, ENTRY_LEN, DNSNAP_EFIELD, REC0_TTL);
	set32(fresh(e) + REC5_TTL, 0xffffffffu);
	expect(e, ENTRY_LEN, DNSNAP_EFIELD, REC5_TTL);
	set32(fresh(e) + REC0_TTL, 0x7fffffffu);
	expect(e, ENTRY_LEN, DNSNAP_OK, 0);
}

/* Rec 5 with a CLASS field of the given value after its Type. */
static size_t with_class(uint8_t *e, unsigned rclass)
{
	memcpy(e, fixture, REC5_TTL);
	set16(e + REC5_TTL, rclass);
	memcpy(e + REC5_TTL + 2, fixture + REC5_TTL, ENTRY_LEN - REC5_TTL);
	set16(e + REC5, 14);
	e[REC5 + 2] |= DNSNAP_RF_CLASS;
	return ENTRY_LEN + 2;
}

static void test_class_field_holding_in_is_a_bad_field(void **state)
{
	(void)state;
	uint8_t e[ENTRY_LEN + 8];
	size_t n = with_class(e, 3); /* CH: fine */
	expect(e, n, DNSNAP_OK, 0);
	n = with_class(e, 1);
	expect(e, n, DNSNAP_EFIELD, REC5 + 5 /* Class */);
}

static void test_kind_and_rcode_that_disagree_are_bad_fields(void **state)
{
	(void)state;
	uint8_t e[ENTRY_LEN + 8];
	static const struct {
		unsigned kind, rcode;
		int want;
	} cases[] = {
		{ DNSNAP_KIND_NXDOMAIN, 0, DNSNAP_EFIELD },
		{ DNSNAP_KIND_NXDOMAIN, 2, DNSNAP_EFIELD },
		{ DNSNAP_KIND_ANSWER, 3, DNSNAP_EFIELD },
		{ DNSNAP_KIND_NODATA, 2, DNSNAP_EFIELD },
		{ DNSNAP_KIND_NODATA, 3, DNSNAP_EFIELD },
		{ DNSNAP_KIND_REFERRAL, 5, DNSNAP_EFIELD },
		{ DNSNAP_KIND_NXDOMAIN, 3, DNSNAP_OK },
		{ DNSNAP_KIND_ANSWER, 2, DNSNAP_OK },
		{ DNSNAP_KIND_NODATA, 0, DNSNAP_OK },
		{ DNSNAP_KIND_REFERRAL, 0, DNSNAP_OK },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		set16(fresh(e) + FLAGS, cases[i].kind << DNSNAP_EF_KIND_SHIFT | cases[i].rcode);
		dnsnap_diag_t d;
		int rc = validate(e, ENTRY_LEN, &d);
		if (rc != cases[i].want || (rc != DNSNAP_OK && d.offset != FLAGS))
			fail_msg("kind %u rcode %u: got %s at %zu, want %s at 12", cases[i].kind,
				 cases[i].rcode, ename(rc), d.offset, ename(cases[i].want));
	}
}

static void test_dnssec_flag_without_dnssec_records_is_a_bad_field(void **state)
{
	(void)state;
	uint8_t e[ENTRY_LEN + 8];
	set16(fresh(e) + FLAGS, DNSNAP_EF_DNSSEC);
	expect(e, ENTRY_LEN, DNSNAP_EFIELD, FLAGS);
}

static void test_dnssec_record_without_the_dnssec_flag_is_a_bad_field(void **state)
{
	(void)state;
	uint8_t e[ENTRY_LEN + 8];
	set16(fresh(e) + REC5_TYPE, 50); /* NSEC3: opaque rdata (RRSIG and NSEC hold a name) */
	expect(e, ENTRY_LEN, DNSNAP_EFIELD, FLAGS);
	set16(e + FLAGS, DNSNAP_EF_DNSSEC);
	expect(e, ENTRY_LEN, DNSNAP_OK, 0);
}

static void test_opt_and_tsig_records_are_bad_fields(void **state)
{
	(void)state;
	uint8_t e[ENTRY_LEN + 8];
	set16(fresh(e) + REC5_TYPE, 41);
	expect(e, ENTRY_LEN, DNSNAP_EFIELD, REC5_TYPE);
	set16(fresh(e) + REC5_TYPE, 250);
	expect(e, ENTRY_LEN, DNSNAP_EFIELD, REC5_TYPE);
}

static void test_lifetime_over_2_pow_31_minus_1_is_a_bad_field(void **state)
{
	(void)state;
	uint8_t e[ENTRY_LEN + 8];
	set32(fresh(e) + 4, NOW + 0x7fffffffu);
	expect(e, ENTRY_LEN, DNSNAP_OK, 0);
	set32(fresh(e) + 4, NOW + 0x80000000u);
	expect(e, ENTRY_LEN, DNSNAP_EFIELD, 4);
	set32(fresh(e) + 4, NOW - 1); /* expires before it was made */
	expect(e, ENTRY_LEN, DNSNAP_EFIELD, 4);
	/* serial arithmetic: an inception just before the wrap is fine */
	set32(fresh(e), 0xffffff00u);
	set32(e + 4, 0x00000100u);
	expect(e, ENTRY_LEN, DNSNAP_OK, 0);
}

static void test_bad_names_in_rdata_and_owners_are_refused(void **state)
{
	(void)state;
	uint8_t e[ENTRY_LEN + 8];
	fresh(e)[REC2 + 9 + 4] = 64; /* "example" label of the NS rdata */
	expect(e, ENTRY_LEN, DNSNAP_ELABEL, REC2 + 9 + 4);
	fresh(e)[REC4 + 9 + 6] = 0xc0; /* a pointer in a NAME owner */
	expect(e, ENTRY_LEN, DNSNAP_ELABEL, REC4 + 9 + 6);
	fresh(e)[REC2 + 9 + 16] = 1; /* NS name without its root label: runs past the rdata */
	expect(e, ENTRY_LEN, DNSNAP_ERDATA, REC2 + 9);
}

static void test_entry_shorter_than_18_bytes_is_truncated(void **state)
{
	(void)state;
	for (size_t len = 0; len < DNSNAP_ENTRY_HDR; len++)
		expect(fixture, len, DNSNAP_ETRUNC, len < 12 ? len / 4 * 4 : len / 2 * 2);
}

static void test_every_truncation_is_refused_without_a_crash(void **state)
{
	(void)state;
	/*
	 * The entry's length comes from outside and there is no record count, so
	 * a cut exactly after a whole record of the additional section leaves a
	 * valid, shorter entry. Every other cut leaves a record cut short or
	 * Addl_Off past the records: an error.
	 */
	for (size_t len = 0; len < ENTRY_LEN; len++) {
		dnsnap_diag_t d;
		int rc = validate(fixture, len, &d);
		int boundary = len == REC3 || len == REC4 || len == REC5;
		if (boundary && rc != DNSNAP_OK)
			fail_msg("entry cut after a whole record (%zu bytes): got %s", len,
				 ename(rc));
		if (!boundary && rc == DNSNAP_OK)
			fail_msg("entry cut to %zu bytes validates", len);
		if (rc != DNSNAP_OK && d.offset > len)
			fail_msg("entry cut to %zu bytes: diag offset %zu", len, d.offset);
	}
}

/* ------------------------------------------------------------ extensions */

/*
 * example.com A, one A record, EDE 3 "ab". Entry:
 *   18 Ext_Len 7 | 20: Ext_Type 1, Ext_Len 4, 00 03 'a' 'b' | 27: records
 */
static uint8_t ede_fixture[64];
static size_t ede_len;

static int make_ede_fixture(void **state)
{
	(void)state;
	wb_t w = { .n = 0 };
	put_u16(&w, 0x1234);
	put_u16(&w, 0x8180);
	put_u16(&w, 1);
	put_u16(&w, 1);
	put_u16(&w, 0);
	put_u16(&w, 1);
	put_labels(&w, "example.com");
	put_u8(&w, 0);
	put_u16(&w, 1);
	put_u16(&w, 1);
	put_ptr(&w, 12);
	size_t rl = put_fixed(&w, 1, 1, 300);
	put_u32(&w, 0xc0000201);
	end_rdata(&w, rl);
	put_u8(&w, 0);
	put_u16(&w, 41);
	put_u16(&w, 1232);
	put_u32(&w, 0);
	put_u16(&w, 8);
	put_u16(&w, 15);
	put_u16(&w, 4);
	put_u16(&w, 3);
	put_u8(&w, 'a');
	put_u8(&w, 'b');

	uint8_t *p = guard_copy(w.b, w.n);
	assert_non_null(p);
	assert_int_equal(dnsnap_msg_encode(p, w.n, NOW, NULL, 0, &enc, NULL), DNSNAP_OK);
	guard_free(p);
	static const uint8_t want[] = {
		0x00, 0xf1, 0x53, 0x65, 0x2c, 0xf2, 0x53, 0x65, 0, 0, 0, 0,
		0x00, 0x01, 13, 0, 13, 0,
		7, 0, 1, 4, 0, 0, 3, 'a', 'b',
		11, 0, 0x00, 1, 0, 0x2c, 0x01, 0, 0, 192, 0, 2, 1,
	};
	assert_int_equal(enc.entry_len, sizeof want);
	assert_memory_equal(enc.entry, want, sizeof want);
	memcpy(ede_fixture, enc.entry, sizeof want);
	ede_len = sizeof want;
	return 0;
}

static void test_ede_fixture_is_valid_and_readable(void **state)
{
	(void)state;
	expect(ede_fixture, ede_len, DNSNAP_OK, 0);
	dnsnap_hdr_t h;
	assert_int_equal(dnsnap_entry_header(ede_fixture, ede_len, &h, NULL), DNSNAP_OK);
	dnsnap_ede_t x;
	assert_int_equal(dnsnap_entry_ede(&h, 0, &x), 1);
	assert_int_equal(x.code, 3);
	assert_int_equal(x.text_len, 2);
	assert_int_equal(dnsnap_entry_ede(&h, 1, &x), 0);
}

static void test_unknown_extension_types_are_skipped(void **state)
{
	(void)state;
	uint8_t e[64];
	memcpy(e, ede_fixture, ede_len);
	e[20] = 9;
	expect(e, ede_len, DNSNAP_OK, 0);
	dnsnap_hdr_t h;
	assert_int_equal(dnsnap_entry_header(e, ede_len, &h, NULL), DNSNAP_OK);
	dnsnap_ede_t x;
	assert_int_equal(dnsnap_entry_ede(&h, 0, &x), 0);
}

static void test_extension_tlvs_not_filling_ext_len_are_truncated(void **state)
{
	(void)state;
	uint8_t e[64];
	memcpy(e, ede_fixture, ede_len);
	e[21] = 5; /* TLV overruns the area by 1 */
	expect(e, ede_len, DNSNAP_ETRUNC, 20);
	memcpy(e, ede_fixture, ede_len);
	e[18] = 0xff; /* area overruns the entry */
	e[19] = 0xff;
	expect(e, ede_len, DNSNAP_ETRUNC, 18);
}

static void test_ede_shorter_than_2_bytes_is_a_bad_field(void **state)
{
	(void)state;
	uint8_t e[64];
	memcpy(e, ede_fixture, ede_len);
	/* EDE of 1 byte, then an empty unknown TLV: still 7 bytes */
	static const uint8_t tlvs[7] = { 1, 1, 0, 0, 9, 0, 0 };
	memcpy(e + 20, tlvs, sizeof tlvs);
	expect(e, ede_len, DNSNAP_EFIELD, 20);
}

static void test_ext_flag_with_an_empty_area_is_a_bad_field(void **state)
{
	(void)state;
	uint8_t e[64];
	memcpy(e, ede_fixture, 18);
	e[18] = 0;
	e[19] = 0;
	memcpy(e + 20, ede_fixture + 27, ede_len - 27);
	expect(e, ede_len - 7, DNSNAP_EFIELD, 18);
	/* without the flag and the area: valid */
	memcpy(e, ede_fixture, 18);
	e[13] = 0;
	memcpy(e + 18, ede_fixture + 27, ede_len - 27);
	expect(e, ede_len - 9, DNSNAP_OK, 0);
}

static void test_every_truncation_of_an_entry_with_extensions_is_refused(void **state)
{
	(void)state;
	/* no additional records: no cut can leave a valid entry */
	for (size_t len = 0; len < ede_len; len++) {
		dnsnap_diag_t d;
		int rc = validate(ede_fixture, len, &d);
		if (rc == DNSNAP_OK)
			fail_msg("entry cut to %zu bytes validates", len);
		assert_true(d.offset <= len);
	}
}

/* No name in an entry holds a compression pointer: a pointer (0xc0-0xff)
 * where an owner's or a DNAME target's label length belongs is a bad label
 * at that byte, as 0x40-0xbf is. */
static void test_a_pointer_in_an_owner_or_a_dname_target_is_a_bad_label(void **state)
{
	(void)state;
	uint8_t e[ENTRY_LEN + 8];
	for (unsigned b = 0xc0; b <= 0xff; b += 0x3f) {
		fresh(e)[REC4 + 9] = (uint8_t)b; /* NAME owner other.example.net */
		e[REC4 + 10] = 0x0c;
		expect(e, ENTRY_LEN, DNSNAP_ELABEL, REC4 + 9);
	}
	/* rec 2 as a DNAME: its target ns1.example.com is one name, valid */
	set16(fresh(e) + REC2 + 3, 39);
	expect(e, ENTRY_LEN, DNSNAP_OK, 0);
	e[REC2 + 9] = 0xc0; /* the target's first length byte: a pointer */
	expect(e, ENTRY_LEN, DNSNAP_ELABEL, REC2 + 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_is_valid),
		cmocka_unit_test(test_reserved_entry_flag_bit_12_is_reserved),
		cmocka_unit_test(test_minor_flag_bits_9_to_11_are_ignored),
		cmocka_unit_test(test_reserved_record_flag_bits_are_reserved),
		cmocka_unit_test(test_same_on_record_0_is_a_bad_field),
		cmocka_unit_test(test_same_on_the_first_record_of_a_section_is_a_bad_field),
		cmocka_unit_test(test_same_with_owner_or_class_bits_is_a_bad_field),
		cmocka_unit_test(test_owner_ref_to_the_current_or_a_later_record_is_a_bad_field),
		cmocka_unit_test(test_owner_ref_to_a_record_owned_by_the_qname_is_a_bad_field),
		cmocka_unit_test(test_owner_target_of_a_record_without_a_target_is_a_bad_field),
		cmocka_unit_test(test_section_offsets_off_record_boundaries_are_bad_fields),
		cmocka_unit_test(test_rec_len_overrunning_the_entry_is_truncated),
		cmocka_unit_test(test_rec_len_too_short_for_the_fixed_fields_is_truncated),
		cmocka_unit_test(test_rec_len_of_0_is_truncated_at_rec_len),
		cmocka_unit_test(test_a_rdata_of_3_or_5_bytes_is_bad_rdata),
		cmocka_unit_test(test_ttl_over_2_pow_31_minus_1_is_a_bad_field),
		cmocka_unit_test(test_class_field_holding_in_is_a_bad_field),
		cmocka_unit_test(test_kind_and_rcode_that_disagree_are_bad_fields),
		cmocka_unit_test(test_dnssec_flag_without_dnssec_records_is_a_bad_field),
		cmocka_unit_test(test_dnssec_record_without_the_dnssec_flag_is_a_bad_field),
		cmocka_unit_test(test_opt_and_tsig_records_are_bad_fields),
		cmocka_unit_test(test_lifetime_over_2_pow_31_minus_1_is_a_bad_field),
		cmocka_unit_test(test_bad_names_in_rdata_and_owners_are_refused),
		cmocka_unit_test(test_entry_shorter_than_18_bytes_is_truncated),
		cmocka_unit_test(test_every_truncation_is_refused_without_a_crash),
		cmocka_unit_test_setup(test_ede_fixture_is_valid_and_readable, make_ede_fixture),
		cmocka_unit_test_setup(test_unknown_extension_types_are_skipped, make_ede_fixture),
		cmocka_unit_test_setup(test_extension_tlvs_not_filling_ext_len_are_truncated,
				       make_ede_fixture),
		cmocka_unit_test_setup(test_ede_shorter_than_2_bytes_is_a_bad_field,
				       make_ede_fixture),
		cmocka_unit_test_setup(test_ext_flag_with_an_empty_area_is_a_bad_field,
				       make_ede_fixture),
		cmocka_unit_test_setup(test_every_truncation_of_an_entry_with_extensions_is_refused,
				       make_ede_fixture),
		cmocka_unit_test(test_a_pointer_in_an_owner_or_a_dname_target_is_a_bad_label),
	};
	return cmocka_run_group_tests(tests, make_fixture, NULL);
}
