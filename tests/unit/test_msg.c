/*
 * test_msg.c: dnsnap_msg_encode(), one test per class of malformed message
 * (exact error code and diag.offset, as spec/FORMAT.md "Ingest errors" and
 * spec/DECISIONS.md "Ingest" state them), then what a good response turns
 * into (FORMAT.md "Expiry", owner modes, SAME), and that names compressed
 * inside rdata are stored expanded, with ldns as the oracle.
 *
 * Messages are built byte by byte with the small writer below; every input
 * is passed through guard_copy() so that reading past its end crashes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <ldns/ldns.h>

#include "dnsnap_format.h"
#include "../helpers/guard.h"
#include "../helpers/wb.h"
#include "byteorder.h"

#define NOW 1700000000u

#define T_A     1
#define T_NS    2
#define T_CNAME 5
#define T_SOA   6
#define T_MX    15
#define T_TXT   16
#define T_AAAA  28
#define T_OPT   41
#define T_RRSIG 46
#define T_TSIG  250
#define T_PRIV  65280   /* private use: opaque rdata */
#define C_IN    1

#define F_QR    0x8000
#define F_TC    0x0200
#define F_RD    0x0100
#define F_RA    0x0080
#define F_AD    0x0020
#define F_CD    0x0010
#define RESP    (F_QR | F_RD | F_RA)

#define OPT_EDE 15

/* --------------------------------------- message pieces (writer: helpers/wb.h) */

static void put_question(wb_t *w, const char *qname, unsigned qtype)
{
	put_name(w, qname);
	put_u16(w, qtype);
	put_u16(w, C_IN);
}

/* An A record whose owner the caller already wrote. */
static void put_a_rest(wb_t *w, uint32_t ttl, uint32_t addr)
{
	size_t rl = put_fixed(w, T_A, C_IN, ttl);
	put_u32(w, addr);
	end_rdata(w, rl);
}

/* An empty OPT record (root owner, UDP size 1232). */
static void put_opt(wb_t *w)
{
	put_u8(w, 0);
	size_t rl = put_fixed(w, T_OPT, 1232, 0);
	end_rdata(w, rl);
}

/* SOA rdata with uncompressed names and the given MINIMUM. */
static void put_soa_rdata(wb_t *w, const char *zone_ns, const char *mbox, uint32_t minimum)
{
	put_name(w, zone_ns);
	put_name(w, mbox);
	put_u32(w, 2023111401); /* serial */
	put_u32(w, 7200);       /* refresh */
	put_u32(w, 3600);       /* retry */
	put_u32(w, 1209600);    /* expire */
	put_u32(w, minimum);
}

/* The usual start: a response for www.example.com A, question at 12..32,
 * so that the first record starts at 33. QNAME_END is the question's end. */
#define QNAME_OFF 12
#define QNAME_LEN 17
#define Q_END     (QNAME_OFF + QNAME_LEN + 4)

static void start_www(wb_t *w, unsigned an, unsigned ns, unsigned ar)
{
	put_header(w, RESP, 1, an, ns, ar);
	put_question(w, "www.example.com", T_A);
	assert_int_equal(w->n, Q_END);
}

/* ------------------------------------------------------------ running it */

/* Too large for the stack (see dnsnap_encoded_t). */
static dnsnap_encoded_t enc, enc2;

static const char *ename(int err)
{
	const char *s = dnsnap_errname(err);
	return s != NULL ? s : "(unknown code)";
}

static int encode_len(const wb_t *w, size_t len, dnsnap_encoded_t *out, dnsnap_diag_t *diag)
{
	assert_true(len <= w->n);
	uint8_t *p = guard_copy(w->b, len);
	assert_non_null(p);
	memset(diag, 0, sizeof *diag);
	diag->offset = (size_t)-1;
	int rc = dnsnap_msg_encode(p, len, NOW, NULL, 0, out, diag);
	guard_free(p);
	return rc;
}

#define expect_refused(w, len, code, off) expect_refused_at(__LINE__, (w), (len), (code), (off))

static void expect_refused_at(int line, const wb_t *w, size_t len, int code, size_t off)
{
	dnsnap_diag_t d;
	int rc = encode_len(w, len, &enc, &d);
	if (rc != code || d.offset != off)
		fail_msg("line %d, message of %zu bytes: got %s (%d) at offset %zu (\"%.128s\"), "
			 "want %s at offset %zu", line, len, ename(rc), rc, d.offset, d.msg,
			 ename(code), off);
}

#define expect_ok(w, out) expect_ok_at(__LINE__, (w), (w)->n, (out))
#define expect_ok_len(w, len, out) expect_ok_at(__LINE__, (w), (len), (out))

static void expect_ok_at(int line, const wb_t *w, size_t len, dnsnap_encoded_t *out)
{
	dnsnap_diag_t d;
	int rc = encode_len(w, len, out, &d);
	if (rc != DNSNAP_OK)
		fail_msg("line %d: got %s (%d) at offset %zu (\"%.128s\"), want DNSNAP_OK", line,
			 ename(rc), rc, d.offset, d.msg);
	/* Whatever ingest writes must pass the validator. */
	rc = dnsnap_entry_validate(out->entry, out->entry_len, &d);
	if (rc != DNSNAP_OK)
		fail_msg("line %d: entry fails validation: %s at %zu (\"%.128s\")", line,
			 ename(rc), d.offset, d.msg);
}

static void header_of(const dnsnap_encoded_t *e, dnsnap_hdr_t *h)
{
	assert_int_equal(dnsnap_entry_header(e->entry, e->entry_len, h, NULL), DNSNAP_OK);
}

/* Iterate over @p e's records with the question name from the key. */
static unsigned all_records(const dnsnap_encoded_t *e, dnsnap_key_t *k, dnsnap_rr_t *rrs,
			    unsigned max)
{
	assert_int_equal(dnsnap_key_decode(e->key, e->key_len, k, NULL), DNSNAP_OK);
	dnsnap_iter_t it;
	assert_int_equal(dnsnap_iter_init(&it, e->entry, e->entry_len, k->name, k->name_len),
			 DNSNAP_OK);
	unsigned n = 0;
	int rc;
	dnsnap_rr_t rr;
	while ((rc = dnsnap_iter_next(&it, &rr)) == 1) {
		assert_true(n < max);
		rrs[n++] = rr;
	}
	assert_int_equal(rc, 0);
	return n;
}

/* A name in wire form, for comparisons. */
static size_t wire(const char *dotted, uint8_t *out)
{
	wb_t w = { .n = 0 };
	put_name(&w, dotted);
	memcpy(out, w.b, w.n);
	return w.n;
}

static void assert_owner(const dnsnap_rr_t *rr, const char *dotted)
{
	uint8_t n[DNSNAP_NAME_MAX + 1];
	size_t len = wire(dotted, n);
	assert_int_equal(rr->owner_len, len);
	assert_memory_equal(rr->owner, n, len);
}

/* ============================================================ header */

static void test_header_shorter_than_12_bytes_is_truncated_at_offset_0(void **state)
{
	(void)state;
	wb_t w;
	start_www(&w, 0, 0, 0);
	expect_refused(&w, 0, DNSNAP_ETRUNC, 0);
	expect_refused(&w, 5, DNSNAP_ETRUNC, 0);
	expect_refused(&w, 11, DNSNAP_ETRUNC, 0);
}

/* ============================================================ not cacheable */

static void test_query_without_qr_is_not_cacheable_at_offset_2(void **state)
{
	(void)state;
	wb_t w;
	start_www(&w, 0, 0, 0);
	set_u16(&w, 2, RESP & ~F_QR);
	expect_refused(&w, w.n, DNSNAP_ENOTCACHE, 2);
}

static void test_opcode_other_than_query_is_not_cacheable_at_offset_2(void **state)
{
	(void)state;
	wb_t w;
	start_www(&w, 0, 0, 0);
	set_u16(&w, 2, RESP | 1u << 11); /* IQUERY */
	expect_refused(&w, w.n, DNSNAP_ENOTCACHE, 2);
	set_u16(&w, 2, RESP | 5u << 11); /* UPDATE */
	expect_refused(&w, w.n, DNSNAP_ENOTCACHE, 2);
}

static void test_truncated_response_is_not_cacheable_at_offset_2(void **state)
{
	(void)state;
	wb_t w;
	start_www(&w, 0, 0, 0);
	set_u16(&w, 2, RESP | F_TC);
	expect_refused(&w, w.n, DNSNAP_ENOTCACHE, 2);
}

static void test_qdcount_0_or_2_is_not_cacheable_at_offset_4(void **state)
{
	(void)state;
	wb_t w;
	put_header(&w, RESP, 0, 0, 0, 0);
	expect_refused(&w, w.n, DNSNAP_ENOTCACHE, 4);

	put_header(&w, RESP, 2, 0, 0, 0);
	put_question(&w, "www.example.com", T_A);
	put_question(&w, "example.com", T_A);
	expect_refused(&w, w.n, DNSNAP_ENOTCACHE, 4);
}

/* ============================================================ question */

static void test_question_cut_in_its_name_is_truncated_at_the_name(void **state)
{
	(void)state;
	wb_t w;
	start_www(&w, 0, 0, 0);
	/* a name is one field: a cut anywhere in it is reported at its start */
	for (size_t len = QNAME_OFF + 1; len < QNAME_OFF + QNAME_LEN; len++)
		expect_refused(&w, len, DNSNAP_ETRUNC, QNAME_OFF);
	/* the question missing altogether: ETRUNC too (ECOUNT is for records) */
	expect_refused(&w, QNAME_OFF, DNSNAP_ETRUNC, QNAME_OFF);
}

static void test_question_cut_in_its_type_or_class_is_truncated_at_that_field(void **state)
{
	(void)state;
	wb_t w;
	start_www(&w, 0, 0, 0);
	size_t qtype = QNAME_OFF + QNAME_LEN, qclass = qtype + 2;
	expect_refused(&w, qtype, DNSNAP_ETRUNC, qtype);
	expect_refused(&w, qtype + 1, DNSNAP_ETRUNC, qtype);
	expect_refused(&w, qclass, DNSNAP_ETRUNC, qclass);
	expect_refused(&w, qclass + 1, DNSNAP_ETRUNC, qclass);
}

/* ============================================================ labels */

static void test_label_over_63_in_the_question_is_refused_at_its_length_byte(void **state)
{
	(void)state;
	wb_t w;
	put_header(&w, RESP, 1, 0, 0, 0);
	put_labels(&w, "www");
	size_t at = w.n;
	put_label(&w, 64, 'x');
	put_name(&w, "com");
	put_u16(&w, T_A);
	put_u16(&w, C_IN);
	expect_refused(&w, w.n, DNSNAP_ELABEL, at);
}

static void test_label_over_63_in_an_owner_is_refused_at_its_length_byte(void **state)
{
	(void)state;
	wb_t w;
	start_www(&w, 1, 0, 0);
	put_labels(&w, "mail");
	size_t at = w.n;
	put_label(&w, 64, 'x');
	put_ptr(&w, QNAME_OFF);
	put_a_rest(&w, 300, 0xc0000201);
	expect_refused(&w, w.n, DNSNAP_ELABEL, at);
}

static void test_label_over_63_in_mx_rdata_is_refused_at_its_length_byte(void **state)
{
	(void)state;
	wb_t w;
	put_header(&w, RESP, 1, 1, 0, 0);
	put_question(&w, "www.example.com", T_MX);
	put_ptr(&w, QNAME_OFF);
	size_t rl = put_fixed(&w, T_MX, C_IN, 300);
	put_u16(&w, 10);
	put_labels(&w, "mail");
	size_t at = w.n;
	put_label(&w, 64, 'x');
	put_u8(&w, 0);
	end_rdata(&w, rl);
	expect_refused(&w, w.n, DNSNAP_ELABEL, at);
}

static void test_label_types_0x40_and_0x80_are_refused_at_their_first_byte(void **state)
{
	(void)state;
	wb_t w;
	/* 0x41: RFC 2673 bit-string label (extended label type 0x40) */
	put_header(&w, RESP, 1, 0, 0, 0);
	put_labels(&w, "www");
	size_t at = w.n;
	put_u8(&w, 0x41);
	put_u8(&w, 8);
	put_u8(&w, 0xff);
	put_name(&w, "com");
	put_u16(&w, T_A);
	put_u16(&w, C_IN);
	expect_refused(&w, w.n, DNSNAP_ELABEL, at);

	/* 0x80: the reserved label type, in an owner */
	start_www(&w, 1, 0, 0);
	at = w.n;
	put_u8(&w, 0x80);
	put_u8(&w, 0x0c);
	put_a_rest(&w, 300, 0xc0000201);
	expect_refused(&w, w.n, DNSNAP_ELABEL, at);
}

/* ============================================================ names */

static void test_name_over_255_uncompressed_is_refused_at_the_label_that_crosses(void **state)
{
	(void)state;
	wb_t w;
	put_header(&w, RESP, 1, 0, 0, 0);
	put_label(&w, 63, 'a');
	put_label(&w, 63, 'b');
	put_label(&w, 63, 'c');
	size_t at = w.n;  /* 192 bytes so far: this label makes 256 */
	put_label(&w, 63, 'd');
	put_u8(&w, 0);
	put_u16(&w, T_A);
	put_u16(&w, C_IN);
	expect_refused(&w, w.n, DNSNAP_ENAME, at);
}

static void test_name_over_255_through_a_pointer_is_refused_at_the_label_that_crosses(
	void **state)
{
	(void)state;
	wb_t w;
	/* question: 3 labels of 63 = a valid name of 193 bytes at 12 */
	put_header(&w, RESP, 1, 1, 0, 0);
	put_label(&w, 63, 'a');
	put_label(&w, 63, 'b');
	put_label(&w, 63, 'c');
	put_u8(&w, 0);
	put_u16(&w, T_A);
	put_u16(&w, C_IN);
	/* owner: one more label of 63, then a pointer to the question. The
	 * question's third label (at 12 + 128) brings the total to 256. */
	put_label(&w, 63, 'z');
	put_ptr(&w, 12);
	put_a_rest(&w, 300, 0xc0000201);
	expect_refused(&w, w.n, DNSNAP_ENAME, 12 + 128);
}

/* ============================================================ pointers */

static void test_pointer_to_itself_is_refused_at_the_pointer(void **state)
{
	(void)state;
	wb_t w;
	put_header(&w, RESP, 1, 0, 0, 0);
	put_ptr(&w, 12);
	put_u16(&w, T_A);
	put_u16(&w, C_IN);
	expect_refused(&w, w.n, DNSNAP_EPOINTER, 12);

	/* a.a.a...: a pointer back to the start of its own name */
	put_header(&w, RESP, 1, 1, 0, 0);
	put_name(&w, "a");
	put_u16(&w, T_A);
	put_u16(&w, C_IN);
	size_t owner = w.n;
	put_labels(&w, "a");
	size_t at = w.n;
	put_ptr(&w, owner);
	put_a_rest(&w, 300, 0xc0000201);
	expect_refused(&w, w.n, DNSNAP_EPOINTER, at);
}

static void test_two_pointers_pointing_at_each_other_are_refused_at_the_forward_one(
	void **state)
{
	(void)state;
	wb_t w;
	start_www(&w, 2, 0, 0);
	/* record 1: opaque rdata holding a pointer to record 2's owner */
	put_ptr(&w, QNAME_OFF);
	size_t rl = put_fixed(&w, T_PRIV, C_IN, 300);
	size_t x = w.n;
	size_t y = x + 2;
	put_ptr(&w, y);
	end_rdata(&w, rl);
	/* record 2: owner is a pointer to record 1's rdata, which points back */
	assert_int_equal(w.n, y);
	put_ptr(&w, x);
	put_a_rest(&w, 300, 0xc0000201);
	expect_refused(&w, w.n, DNSNAP_EPOINTER, x);
}

static void test_pointer_pointing_forward_is_refused_at_the_pointer(void **state)
{
	(void)state;
	wb_t w;
	/* in the question, to a name after it */
	put_header(&w, RESP, 1, 0, 0, 0);
	put_ptr(&w, 18);
	put_u16(&w, T_A);
	put_u16(&w, C_IN);
	assert_int_equal(w.n, 18);
	put_name(&w, "www.example.com");
	expect_refused(&w, w.n, DNSNAP_EPOINTER, 12);

	/* in an owner, to the CNAME target in its own rdata */
	start_www(&w, 1, 0, 0);
	size_t at = w.n;
	put_ptr(&w, at + 12);
	size_t rl = put_fixed(&w, T_CNAME, C_IN, 300);
	assert_int_equal(w.n, at + 12);
	put_name(&w, "cdn.example.net");
	end_rdata(&w, rl);
	expect_refused(&w, w.n, DNSNAP_EPOINTER, at);
}

static void test_pointer_into_the_header_is_refused_at_the_pointer(void **state)
{
	(void)state;
	static const size_t targets[] = { 0, 5, 11 };
	for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
		wb_t w;
		start_www(&w, 1, 0, 0);
		size_t at = w.n;
		put_ptr(&w, targets[i]);
		put_a_rest(&w, 300, 0xc0000201);
		expect_refused(&w, w.n, DNSNAP_EPOINTER, at);
	}
}

/* ============================================================ counts, fields */

static void test_counts_past_the_last_record_are_refused_at_the_message_end(void **state)
{
	(void)state;
	wb_t w;
	start_www(&w, 2, 0, 0);
	put_ptr(&w, QNAME_OFF);
	put_a_rest(&w, 300, 0xc0000201);
	expect_refused(&w, w.n, DNSNAP_ECOUNT, w.n);

	start_www(&w, 1, 1, 0);
	put_ptr(&w, QNAME_OFF);
	put_a_rest(&w, 300, 0xc0000201);
	expect_refused(&w, w.n, DNSNAP_ECOUNT, w.n);

	start_www(&w, 0, 0, 1);
	expect_refused(&w, w.n, DNSNAP_ECOUNT, w.n);
}

static void test_record_cut_inside_a_field_is_truncated_at_that_field(void **state)
{
	(void)state;
	wb_t w;
	start_www(&w, 1, 0, 0);
	size_t r = w.n;
	put_ptr(&w, QNAME_OFF);
	put_a_rest(&w, 300, 0xc0000201);
	/* owner 0-1, type 2-3, class 4-5, TTL 6-9, RDLENGTH 10-11 */
	static const size_t field_of[12] = { 0, 0, 2, 2, 4, 4, 6, 6, 6, 6, 10, 10 };
	for (size_t k = 1; k < 12; k++)
		expect_refused(&w, r + k, DNSNAP_ETRUNC, r + field_of[k]);
	/* cut before the record starts: the count is wrong, not a field */
	expect_refused(&w, r, DNSNAP_ECOUNT, r);

	/* an uncompressed owner cut inside its first label */
	start_www(&w, 1, 0, 0);
	r = w.n;
	put_name(&w, "mail.example.com");
	put_a_rest(&w, 300, 0xc0000201);
	expect_refused(&w, r + 3, DNSNAP_ETRUNC, r);
}

static void test_rdlength_past_the_end_is_refused_at_the_rdlength_field(void **state)
{
	(void)state;
	wb_t w;
	start_www(&w, 1, 0, 0);
	put_ptr(&w, QNAME_OFF);
	size_t rl = put_fixed(&w, T_A, C_IN, 300);
	put_u32(&w, 0xc0000201);
	set_u16(&w, rl, 5);
	expect_refused(&w, w.n, DNSNAP_ERDLEN, rl);
	set_u16(&w, rl, 0xffff);
	expect_refused(&w, w.n, DNSNAP_ERDLEN, rl);
	set_u16(&w, rl, 4);
	expect_refused(&w, w.n - 1, DNSNAP_ERDLEN, rl);
}

/* ============================================================ rdata */

static void test_a_rdata_of_3_or_5_bytes_is_refused_at_the_rdata_start(void **state)
{
	(void)state;
	for (unsigned len = 3; len <= 5; len += 2) {
		wb_t w;
		start_www(&w, 1, 0, 0);
		put_ptr(&w, QNAME_OFF);
		size_t rl = put_fixed(&w, T_A, C_IN, 300);
		for (unsigned j = 0; j < len; j++)
			put_u8(&w, j + 1);
		end_rdata(&w, rl);
		expect_refused(&w, w.n, DNSNAP_ERDATA, rl + 2);
	}
}

static void test_aaaa_rdata_of_4_bytes_is_refused_at_the_rdata_start(void **state)
{
	(void)state;
	wb_t w;
	put_header(&w, RESP, 1, 1, 0, 0);
	put_question(&w, "www.example.com", T_AAAA);
	put_ptr(&w, QNAME_OFF);
	size_t rl = put_fixed(&w, T_AAAA, C_IN, 300);
	put_u32(&w, 0x20010db8);
	end_rdata(&w, rl);
	expect_refused(&w, w.n, DNSNAP_ERDATA, rl + 2);
}

static void test_soa_without_its_fixed_tail_is_refused_at_the_rdata_start(void **state)
{
	(void)state;
	static const size_t tails[] = { 0, 4, 19 };
	for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++) {
		wb_t w;
		put_header(&w, RESP | 3, 1, 0, 1, 0);
		put_question(&w, "www.example.com", T_A);
		put_ptr(&w, QNAME_OFF + 4); /* example.com */
		size_t rl = put_fixed(&w, T_SOA, C_IN, 3600);
		put_labels(&w, "ns1");
		put_ptr(&w, QNAME_OFF + 4);
		put_labels(&w, "hostmaster");
		put_ptr(&w, QNAME_OFF + 4);
		for (size_t j = 0; j < tails[i]; j++) /* part of SERIAL..MINIMUM */
			put_u8(&w, 0);
		end_rdata(&w, rl);
		assert_int_equal(w.n - rl - 2, 6 + 13 + tails[i]);
		expect_refused(&w, w.n, DNSNAP_ERDATA, rl + 2);
	}
}

static void test_cname_rdata_with_bytes_after_the_name_is_refused_at_the_rdata_start(
	void **state)
{
	(void)state;
	wb_t w;
	start_www(&w, 1, 0, 0);
	put_ptr(&w, QNAME_OFF);
	size_t rl = put_fixed(&w, T_CNAME, C_IN, 300);
	put_name(&w, "cdn.example.net");
	put_u8(&w, 0);
	end_rdata(&w, rl);
	expect_refused(&w, w.n, DNSNAP_ERDATA, rl + 2);
}

/* ============================================================ OPT */

static void test_second_opt_is_refused_at_its_record_start(void **state)
{
	(void)state;
	wb_t w;
	start_www(&w, 1, 0, 2);
	put_ptr(&w, QNAME_OFF);
	put_a_rest(&w, 300, 0xc0000201);
	put_opt(&w);
	size_t at = w.n;
	put_opt(&w);
	expect_refused(&w, w.n, DNSNAP_EOPT, at);
}

static void test_opt_in_the_answer_section_is_refused_at_its_record_start(void **state)
{
	(void)state;
	wb_t w;
	start_www(&w, 2, 0, 0);
	put_ptr(&w, QNAME_OFF);
	put_a_rest(&w, 300, 0xc0000201);
	size_t at = w.n;
	put_opt(&w);
	expect_refused(&w, w.n, DNSNAP_EOPT, at);
}

static void test_opt_in_the_authority_section_is_refused_at_its_record_start(void **state)
{
	(void)state;
	wb_t w;
	start_www(&w, 1, 1, 0);
	put_ptr(&w, QNAME_OFF);
	put_a_rest(&w, 300, 0xc0000201);
	size_t at = w.n;
	put_opt(&w);
	expect_refused(&w, w.n, DNSNAP_EOPT, at);
}

static void test_opt_with_a_non_root_owner_is_refused_at_its_record_start(void **state)
{
	(void)state;
	wb_t w;
	start_www(&w, 1, 0, 1);
	put_ptr(&w, QNAME_OFF);
	put_a_rest(&w, 300, 0xc0000201);
	size_t at = w.n;
	put_ptr(&w, QNAME_OFF);
	size_t rl = put_fixed(&w, T_OPT, 1232, 0);
	end_rdata(&w, rl);
	expect_refused(&w, w.n, DNSNAP_EOPT, at);
}

static void test_opt_option_overrunning_its_rdata_is_refused_at_the_rdata_start(void **state)
{
	(void)state;
	wb_t w;
	/* option length 10, 2 bytes of data */
	start_www(&w, 0, 0, 1);
	put_u8(&w, 0);
	size_t rl = put_fixed(&w, T_OPT, 1232, 0);
	put_u16(&w, OPT_EDE);
	put_u16(&w, 10);
	put_u16(&w, 3);
	end_rdata(&w, rl);
	expect_refused(&w, w.n, DNSNAP_EOPT, rl + 2);

	/* a second option whose header is cut: 3 bytes left */
	start_www(&w, 0, 0, 1);
	put_u8(&w, 0);
	rl = put_fixed(&w, T_OPT, 1232, 0);
	put_u16(&w, 10); /* COOKIE, 8 bytes */
	put_u16(&w, 8);
	put_u32(&w, 0x01020304);
	put_u32(&w, 0x05060708);
	put_u16(&w, OPT_EDE);
	put_u8(&w, 0);
	end_rdata(&w, rl);
	expect_refused(&w, w.n, DNSNAP_EOPT, rl + 2);
}

static void test_ede_option_shorter_than_2_bytes_is_refused(void **state)
{
	(void)state;
	wb_t w;
	start_www(&w, 0, 0, 1);
	put_u8(&w, 0);
	size_t rl = put_fixed(&w, T_OPT, 1232, 0);
	put_u16(&w, OPT_EDE);
	put_u16(&w, 1);
	put_u8(&w, 0);
	end_rdata(&w, rl);
	expect_refused(&w, w.n, DNSNAP_EOPT, rl + 2);
}

/* ============================================================ limits, arguments */

/* A 255-byte name: labels of 63, 63, 63 and 61 bytes. */
static void put_name_255(wb_t *w)
{
	put_label(w, 63, 'a');
	put_label(w, 63, 'b');
	put_label(w, 63, 'c');
	put_label(w, 61, 'd');
	put_u8(w, 0);
}

static void test_key_over_511_bytes_is_too_big_at_the_question_name(void **state)
{
	(void)state;
	wb_t w;
	put_header(&w, RESP, 1, 0, 0, 0);
	put_name_255(&w);
	put_u16(&w, T_A);
	put_u16(&w, C_IN);
	uint8_t tag[255];
	memset(tag, 't', sizeof tag);
	uint8_t *p = guard_copy(w.b, w.n);
	assert_non_null(p);
	dnsnap_diag_t d = { .offset = 999 };
	/* 255 + 6 + 250 = 511 fits */
	assert_int_equal(dnsnap_msg_encode(p, w.n, NOW, tag, 250, &enc, &d), DNSNAP_OK);
	assert_int_equal(enc.key_len, DNSNAP_KEY_MAX);
	int rc = dnsnap_msg_encode(p, w.n, NOW, tag, 251, &enc, &d);
	guard_free(p);
	if (rc != DNSNAP_ETOOBIG || d.offset != QNAME_OFF)
		fail_msg("got %s at %zu, want DNSNAP_ETOOBIG at 12", ename(rc), d.offset);

	/* checked before any record is read: a bad record after it is not reached */
	set_u16(&w, 6, 1);
	put_ptr(&w, QNAME_OFF);
	size_t rl = put_fixed(&w, T_A, C_IN, 300);
	put_u32(&w, 0xc0000201);
	put_u8(&w, 0); /* an A record of 5 bytes */
	end_rdata(&w, rl);
	p = guard_copy(w.b, w.n);
	assert_non_null(p);
	assert_int_equal(dnsnap_msg_encode(p, w.n, NOW, tag, 250, &enc, &d), DNSNAP_ERDATA);
	rc = dnsnap_msg_encode(p, w.n, NOW, tag, 251, &enc, &d);
	guard_free(p);
	if (rc != DNSNAP_ETOOBIG || d.offset != QNAME_OFF)
		fail_msg("with a bad record: got %s at %zu, want DNSNAP_ETOOBIG at 12", ename(rc),
			 d.offset);
}

static void test_tag_over_255_bytes_and_null_arguments_are_invalid(void **state)
{
	(void)state;
	wb_t w;
	start_www(&w, 0, 0, 0);
	uint8_t tag[256];
	memset(tag, 't', sizeof tag);
	dnsnap_diag_t d = { .offset = 999 };
	assert_int_equal(dnsnap_msg_encode(w.b, w.n, NOW, tag, 256, &enc, &d), DNSNAP_EINVAL);
	assert_int_equal(d.offset, 0);
	assert_int_equal(dnsnap_msg_encode(NULL, w.n, NOW, NULL, 0, &enc, &d), DNSNAP_EINVAL);
	assert_int_equal(dnsnap_msg_encode(w.b, w.n, NOW, NULL, 0, NULL, &d), DNSNAP_EINVAL);
	assert_int_equal(dnsnap_msg_encode(w.b, w.n, NOW, NULL, 3, &enc, &d), DNSNAP_EINVAL);
	/* the diagnostics are optional */
	assert_int_equal(dnsnap_msg_encode(w.b, w.n, NOW, NULL, 0, &enc, NULL), DNSNAP_OK);
}

static void test_records_over_65535_bytes_are_too_big_at_the_crossing_record(void **state)
{
	(void)state;
	/* CNAMEs whose rdata is a pointer to one 255-byte name: 14 bytes in the
	 * message, 2 + 1 + 2 + 4 + 255 = 264 in the entry (distinct TTLs: no
	 * SAME). 248 records make 65472 bytes; record 248 crosses 65535. */
	static wb_t w;
	put_header(&w, RESP, 1, 249, 0, 0);
	put_question(&w, "a.b", T_A);
	size_t target = 0, crossing = 0;
	for (unsigned i = 0; i < 249; i++) {
		if (i == 248)
			crossing = w.n;
		put_ptr(&w, QNAME_OFF);
		size_t rl = put_fixed(&w, T_CNAME, C_IN, 1000 + i);
		if (i == 0) {
			target = w.n;
			put_name_255(&w);
		} else {
			put_ptr(&w, target);
		}
		end_rdata(&w, rl);
	}
	expect_refused(&w, w.n, DNSNAP_ETOOBIG, crossing);
	/* one record fewer fits */
	set_u16(&w, 6, 248);
	expect_ok_len(&w, crossing, &enc);
	assert_int_equal(enc.entry_len, DNSNAP_ENTRY_HDR + 248 * 264);
}

/* ============================================================ good responses */

static void test_smallest_valid_response_is_nodata_with_ttl_0(void **state)
{
	(void)state;
	wb_t w;
	start_www(&w, 0, 0, 0);
	expect_ok(&w, &enc);
	assert_int_equal(enc.ttl, 0);
	assert_int_equal(enc.qname_off, QNAME_OFF);
	assert_int_equal(enc.qname_len, QNAME_LEN);
	assert_int_equal(enc.entry_len, DNSNAP_ENTRY_HDR);
	dnsnap_hdr_t h;
	header_of(&enc, &h);
	assert_int_equal(h.inception, NOW);
	assert_int_equal(h.expiry, NOW);
	assert_int_equal(h.hits, 0);
	assert_int_equal(dnsnap_hdr_kind(&h), DNSNAP_KIND_NODATA);
	assert_int_equal(dnsnap_hdr_rcode(&h), 0);
	assert_int_equal(h.flags, DNSNAP_KIND_NODATA << DNSNAP_EF_KIND_SHIFT);
	assert_int_equal(h.auth_off, 0);
	assert_int_equal(h.addl_off, 0);
	assert_null(h.ext);
	assert_int_equal(h.records_len, 0);
}

static void test_trailing_bytes_after_the_counted_records_are_ignored(void **state)
{
	(void)state;
	wb_t w;
	start_www(&w, 1, 0, 0);
	put_ptr(&w, QNAME_OFF);
	put_a_rest(&w, 300, 0xc0000201);
	expect_ok(&w, &enc2);
	put_u32(&w, 0xdeadbeef);
	put_u8(&w, 0xc0);
	expect_ok(&w, &enc);
	assert_int_equal(enc.entry_len, enc2.entry_len);
	assert_memory_equal(enc.entry, enc2.entry, enc.entry_len);
}

/* The exact bytes of a small answer: the layout in dnsnap_format.h. */
static void test_entry_bytes_of_a_small_answer_follow_the_layout(void **state)
{
	(void)state;
	wb_t w;
	put_header(&w, RESP, 1, 2, 1, 0);
	put_question(&w, "example.com", T_A);
	put_ptr(&w, 12);
	put_a_rest(&w, 300, 0xc0000201);
	put_ptr(&w, 12);
	put_a_rest(&w, 300, 0xc0000202);
	put_ptr(&w, 12);
	size_t rl = put_fixed(&w, T_NS, C_IN, 3600);
	put_labels(&w, "ns1");
	put_ptr(&w, 12);
	end_rdata(&w, rl);
	expect_ok(&w, &enc);

	static const uint8_t want[] = {
		0x00, 0xf1, 0x53, 0x65,            /* Inception 1700000000 */
		0x2c, 0xf2, 0x53, 0x65,            /* Expiry +300 */
		0, 0, 0, 0,                        /* Hits */
		0x00, 0x00,                        /* Flags: NOERROR, ANSWER */
		20, 0,                             /* Auth_Off */
		46, 0,                             /* Addl_Off */
		/* 0: example.com A 192.0.2.1, owner = qname */
		11, 0, 0x00, 1, 0, 0x2c, 0x01, 0, 0, 192, 0, 2, 1,
		/* 13: SAME, 192.0.2.2 */
		5, 0, 0x04, 192, 0, 2, 2,
		/* 20: example.com NS ns1.example.com */
		24, 0, 0x00, 2, 0, 0x10, 0x0e, 0, 0,
		3, 'n', 's', '1', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0,
	};
	assert_int_equal(enc.ttl, 300);
	assert_int_equal(enc.entry_len, sizeof want);
	assert_memory_equal(enc.entry, want, sizeof want);
}

static void build_twin(wb_t *w, int compress)
{
	/* www.Example.com A: CNAME to cdn.example.com, its A; example.com NS
	 * ns1.example.com, example.com SOA, ns1's A, example.com MX. */
	put_header(w, RESP, 1, 2, 2, 2);
	put_question(w, "www.Example.com", T_A);
	size_t zone = QNAME_OFF + 4, rl;

	if (compress) put_ptr(w, QNAME_OFF); else put_name(w, "www.Example.com");
	rl = put_fixed(w, T_CNAME, C_IN, 300);
	size_t cdn = w->n;
	put_labels(w, "cdn");
	if (compress) put_ptr(w, zone); else put_name(w, "Example.com");
	end_rdata(w, rl);

	if (compress) put_ptr(w, cdn); else put_name(w, "cdn.Example.com");
	put_a_rest(w, 60, 0xc0000201);

	if (compress) put_ptr(w, zone); else put_name(w, "Example.com");
	rl = put_fixed(w, T_NS, C_IN, 3600);
	size_t ns1 = w->n;
	put_labels(w, "ns1");
	if (compress) put_ptr(w, zone); else put_name(w, "Example.com");
	end_rdata(w, rl);

	if (compress) put_ptr(w, zone); else put_name(w, "Example.com");
	rl = put_fixed(w, T_SOA, C_IN, 3600);
	if (compress) put_ptr(w, ns1); else put_name(w, "ns1.Example.com");
	put_labels(w, "hostmaster");
	if (compress) put_ptr(w, zone); else put_name(w, "Example.com");
	put_u32(w, 1);
	put_u32(w, 2);
	put_u32(w, 3);
	put_u32(w, 4);
	put_u32(w, 5);
	end_rdata(w, rl);

	if (compress) put_ptr(w, ns1); else put_name(w, "ns1.Example.com");
	put_a_rest(w, 3600, 0xc0000235);

	if (compress) put_ptr(w, zone); else put_name(w, "Example.com");
	rl = put_fixed(w, T_MX, C_IN, 3600);
	put_u16(w, 10);
	put_labels(w, "mail");
	if (compress) put_ptr(w, cdn); else put_name(w, "cdn.Example.com");
	end_rdata(w, rl);
}

static void test_compressed_message_gives_the_same_entry_as_its_uncompressed_twin(void **state)
{
	(void)state;
	wb_t a, b;
	build_twin(&a, 1);
	build_twin(&b, 0);
	assert_true(a.n < b.n);
	expect_ok(&a, &enc);
	expect_ok(&b, &enc2);
	assert_int_equal(enc.key_len, enc2.key_len);
	assert_memory_equal(enc.key, enc2.key, enc.key_len);
	assert_int_equal(enc.entry_len, enc2.entry_len);
	assert_memory_equal(enc.entry, enc2.entry, enc.entry_len);
	assert_int_equal(enc.ttl, 60);

	/* and the names came out expanded */
	dnsnap_key_t k;
	dnsnap_rr_t rr[8];
	assert_int_equal(all_records(&enc, &k, rr, 8), 6);
	uint8_t n[DNSNAP_NAME_MAX];
	size_t len = wire("cdn.Example.com", n);
	assert_int_equal(rr[0].rdlen, len);
	assert_memory_equal(rr[0].rdata, n, len);
	assert_owner(&rr[1], "cdn.Example.com");
	assert_owner(&rr[2], "Example.com");
	assert_int_equal(rr[5].type, T_MX);
	assert_int_equal(rr[5].rdlen, 2 + 5 + len);
	assert_memory_equal(rr[5].rdata + 2 + 5, n, len);
}

static void test_tsig_in_additional_is_dropped(void **state)
{
	(void)state;
	wb_t w;
	start_www(&w, 1, 0, 1);
	put_ptr(&w, QNAME_OFF);
	put_a_rest(&w, 300, 0xc0000201);
	put_name(&w, "key.example");
	size_t rl = put_fixed(&w, T_TSIG, 255, 0);
	put_name(&w, "hmac-sha256");
	put_u16(&w, 0);
	put_u32(&w, NOW);    /* time signed */
	put_u16(&w, 300);    /* fudge */
	put_u16(&w, 4);      /* MAC size */
	put_u32(&w, 0x01020304);
	put_u16(&w, 0x4a4a); /* original ID */
	put_u16(&w, 0);      /* error */
	put_u16(&w, 0);      /* other len */
	end_rdata(&w, rl);
	expect_ok(&w, &enc);

	dnsnap_hdr_t h;
	header_of(&enc, &h);
	assert_int_equal(h.records_len, 13); /* the A record only */
	assert_int_equal(h.auth_off, h.records_len);
	assert_int_equal(h.addl_off, h.records_len);
	dnsnap_key_t k;
	dnsnap_rr_t rr[4];
	assert_int_equal(all_records(&enc, &k, rr, 4), 1);
	assert_int_equal(rr[0].type, T_A);
	assert_int_equal(enc.ttl, 300);
}

static void test_ede_option_is_carried_in_the_extension_area(void **state)
{
	(void)state;
	wb_t w;
	start_www(&w, 1, 0, 1);
	put_ptr(&w, QNAME_OFF);
	put_a_rest(&w, 30, 0xc0000201);
	put_u8(&w, 0);
	size_t rl = put_fixed(&w, T_OPT, 1232, 0x00008000); /* DO */
	put_u16(&w, OPT_EDE);
	put_u16(&w, 2 + 5);
	put_u16(&w, 3); /* Stale Answer */
	put_raw(&w, "stale", 5);
	put_u16(&w, 10); /* COOKIE: not kept */
	put_u16(&w, 8);
	put_u32(&w, 0x01020304);
	put_u32(&w, 0x05060708);
	put_u16(&w, OPT_EDE);
	put_u16(&w, 2);
	put_u16(&w, 0x1234); /* no text */
	end_rdata(&w, rl);
	expect_ok(&w, &enc);

	dnsnap_hdr_t h;
	header_of(&enc, &h);
	assert_true(h.flags & DNSNAP_EF_EXT);
	assert_non_null(h.ext);
	dnsnap_ede_t e;
	assert_int_equal(dnsnap_entry_ede(&h, 0, &e), 1);
	assert_int_equal(e.code, 3);
	assert_int_equal(e.text_len, 5);
	assert_memory_equal(e.text, "stale", 5);
	assert_int_equal(dnsnap_entry_ede(&h, 1, &e), 1);
	assert_int_equal(e.code, 0x1234);
	assert_int_equal(e.text_len, 0);
	assert_int_equal(dnsnap_entry_ede(&h, 2, &e), 0);
	/* the OPT itself is not a record of the entry */
	dnsnap_key_t k;
	dnsnap_rr_t rr[4];
	assert_int_equal(all_records(&enc, &k, rr, 4), 1);
	assert_int_equal(h.addl_off, h.records_len);
}

static void test_ttl_with_the_high_bit_set_is_stored_as_0(void **state)
{
	(void)state;
	wb_t w;
	start_www(&w, 2, 0, 0);
	put_ptr(&w, QNAME_OFF);
	put_a_rest(&w, 0x80000000u, 0xc0000201);
	put_ptr(&w, QNAME_OFF);
	size_t rl = put_fixed(&w, T_TXT, C_IN, 0x7fffffffu);
	put_label(&w, 2, 'x');
	end_rdata(&w, rl);
	expect_ok(&w, &enc);
	assert_int_equal(enc.ttl, 0);
	dnsnap_key_t k;
	dnsnap_rr_t rr[4];
	assert_int_equal(all_records(&enc, &k, rr, 4), 2);
	assert_int_equal(rr[0].ttl, 0);
	assert_int_equal(rr[1].ttl, 0x7fffffffu);
	dnsnap_hdr_t h;
	header_of(&enc, &h);
	assert_int_equal(h.expiry, NOW);
}

/*
 * www.example.com A:
 *   0 www.example.com  CNAME cdn.example.net   QNAME
 *   1 cdn.example.net  A     192.0.2.1         TARGET 0
 *   2 cdn.example.net  A     192.0.2.2         SAME
 *   3 cdn.example.net  RRSIG A                 TARGET 0 (TARGET wins over REF)
 *   4 example.net      NS    ns1.example.net   NAME        (authority)
 *   5 example.net      NS    ns2.example.net   SAME
 *   6 example.net      RRSIG NS                REF 4 (lowest index)
 *   7 ns1.example.net  A     192.0.2.53        TARGET 4 (glue: the NS target)
 *   8 ns1.example.net  AAAA  2001:db8::53      TARGET 4
 */
static void build_chain(wb_t *w)
{
	put_header(w, RESP | F_AD, 1, 4, 3, 2);
	put_question(w, "www.example.com", T_A);
	size_t rl;

	put_ptr(w, QNAME_OFF);
	rl = put_fixed(w, T_CNAME, C_IN, 300);
	size_t cdn = w->n, zone = cdn + 4;
	put_name(w, "cdn.example.net");
	end_rdata(w, rl);

	put_ptr(w, cdn);
	put_a_rest(w, 60, 0xc0000201);
	put_ptr(w, cdn);
	put_a_rest(w, 60, 0xc0000202);

	put_ptr(w, cdn);
	rl = put_fixed(w, T_RRSIG, C_IN, 60);
	put_u16(w, T_A);
	put_u8(w, 13);
	put_u8(w, 3);
	put_u32(w, 60);
	put_u32(w, NOW + 86400);
	put_u32(w, NOW - 86400);
	put_u16(w, 12345);
	put_name(w, "example.net");
	put_u32(w, 0xaabbccdd);
	put_u32(w, 0xeeff0011);
	end_rdata(w, rl);

	put_ptr(w, zone);
	rl = put_fixed(w, T_NS, C_IN, 3600);
	size_t ns1 = w->n;
	put_labels(w, "ns1");
	put_ptr(w, zone);
	end_rdata(w, rl);
	put_ptr(w, zone);
	rl = put_fixed(w, T_NS, C_IN, 3600);
	put_labels(w, "ns2");
	put_ptr(w, zone);
	end_rdata(w, rl);
	put_ptr(w, zone);
	rl = put_fixed(w, T_RRSIG, C_IN, 3600);
	put_u16(w, T_NS);
	put_u8(w, 13);
	put_u8(w, 2);
	put_u32(w, 3600);
	put_u32(w, NOW + 86400);
	put_u32(w, NOW - 86400);
	put_u16(w, 12345);
	put_name(w, "example.net");
	put_u32(w, 0x11223344);
	end_rdata(w, rl);

	put_ptr(w, ns1);
	put_a_rest(w, 3600, 0xc0000235);
	put_ptr(w, ns1);
	rl = put_fixed(w, T_AAAA, C_IN, 3600);
	put_u32(w, 0x20010db8);
	put_u32(w, 0);
	put_u32(w, 0);
	put_u32(w, 0x53);
	end_rdata(w, rl);
}

static void test_owner_modes_of_a_cname_chain(void **state)
{
	(void)state;
	wb_t w;
	build_chain(&w);
	expect_ok(&w, &enc);

	dnsnap_key_t k;
	dnsnap_rr_t rr[12];
	assert_int_equal(all_records(&enc, &k, rr, 12), 9);

	static const struct {
		unsigned same, mode, ref, type, section;
		const char *owner;
	} want[9] = {
		{ 0, DNSNAP_OWNER_QNAME, 0, T_CNAME, DNSNAP_SEC_ANSWER, "www.example.com" },
		{ 0, DNSNAP_OWNER_TARGET, 0, T_A, DNSNAP_SEC_ANSWER, "cdn.example.net" },
		{ 1, DNSNAP_OWNER_TARGET, 0, T_A, DNSNAP_SEC_ANSWER, "cdn.example.net" },
		{ 0, DNSNAP_OWNER_TARGET, 0, T_RRSIG, DNSNAP_SEC_ANSWER, "cdn.example.net" },
		{ 0, DNSNAP_OWNER_NAME, 0, T_NS, DNSNAP_SEC_AUTHORITY, "example.net" },
		{ 1, DNSNAP_OWNER_NAME, 0, T_NS, DNSNAP_SEC_AUTHORITY, "example.net" },
		{ 0, DNSNAP_OWNER_REF, 4, T_RRSIG, DNSNAP_SEC_AUTHORITY, "example.net" },
		{ 0, DNSNAP_OWNER_TARGET, 4, T_A, DNSNAP_SEC_ADDITIONAL, "ns1.example.net" },
		{ 0, DNSNAP_OWNER_TARGET, 4, T_AAAA, DNSNAP_SEC_ADDITIONAL, "ns1.example.net" },
	};
	for (unsigned i = 0; i < 9; i++) {
		print_message("record %u\n", i);
		const uint8_t *rec = enc.entry + rr[i].offset;
		uint8_t rf = rec[2];
		assert_int_equal(rr[i].index, i);
		assert_int_equal(rr[i].type, want[i].type);
		assert_int_equal(rr[i].rclass, C_IN);
		assert_int_equal(rr[i].section, want[i].section);
		assert_int_equal(!!(rf & DNSNAP_RF_SAME), want[i].same);
		assert_int_equal(rf & DNSNAP_RF_CLASS, 0);
		if (want[i].same)
			assert_int_equal(rf & DNSNAP_RF_OWNER, 0);
		else
			assert_int_equal(rf & DNSNAP_RF_OWNER, want[i].mode);
		/* SAME records report the mode of their RRset's first record */
		assert_int_equal(rr[i].owner_mode, want[i].mode);
		if (!want[i].same && (want[i].mode == DNSNAP_OWNER_REF ||
				      want[i].mode == DNSNAP_OWNER_TARGET))
			assert_int_equal(rec[2 + 1 + 2 + 4], want[i].ref); /* after Type, TTL */
		assert_owner(&rr[i], want[i].owner);
	}
	/* the query name's owner is the caller's spelling, not a copy */
	assert_ptr_equal(rr[0].owner, k.name);
	assert_int_equal(rr[1].ttl, 60);
	assert_int_equal(rr[2].ttl, 60);
	assert_int_equal(ld32le(rr[2].rdata), 0x020200c0);

	dnsnap_hdr_t h;
	header_of(&enc, &h);
	assert_true(h.flags & DNSNAP_EF_DNSSEC);
	assert_true(h.flags & DNSNAP_EF_AUTH);
	assert_int_equal(dnsnap_hdr_kind(&h), DNSNAP_KIND_ANSWER);
	assert_int_equal(enc.ttl, 60);
	assert_int_equal(h.auth_off, rr[4].offset - (size_t)(h.records - enc.entry));
	assert_int_equal(h.addl_off, rr[7].offset - (size_t)(h.records - enc.entry));
}

static void test_same_ignores_case_but_never_spans_two_sections(void **state)
{
	(void)state;
	wb_t w;
	start_www(&w, 3, 1, 0);
	put_ptr(&w, QNAME_OFF);
	size_t rl = put_fixed(&w, T_CNAME, C_IN, 300);
	put_name(&w, "cdn.example.net");
	end_rdata(&w, rl);
	put_name(&w, "CDN.Example.NET");
	put_a_rest(&w, 60, 0xc0000201);
	put_name(&w, "cdn.EXAMPLE.net");
	put_a_rest(&w, 60, 0xc0000202);
	put_name(&w, "cdn.example.net"); /* authority: same RRset key, other section */
	put_a_rest(&w, 60, 0xc0000203);
	expect_ok(&w, &enc);

	dnsnap_key_t k;
	dnsnap_rr_t rr[8];
	assert_int_equal(all_records(&enc, &k, rr, 8), 4);
	assert_int_equal(enc.entry[rr[1].offset + 2], DNSNAP_OWNER_TARGET);
	assert_int_equal(enc.entry[rr[2].offset + 2], DNSNAP_RF_SAME);
	assert_int_equal(enc.entry[rr[3].offset + 2], DNSNAP_OWNER_TARGET);
	assert_int_equal(rr[3].section, DNSNAP_SEC_AUTHORITY);
	/* owners rebuilt from TARGET take the spelling of the CNAME's rdata */
	for (unsigned i = 1; i < 4; i++)
		assert_owner(&rr[i], "cdn.example.net");
}

static void test_key_of_www_example_com_a_in_is_lowercased_and_reversed(void **state)
{
	(void)state;
	wb_t w;
	put_header(&w, RESP, 1, 0, 0, 0);
	put_question(&w, "www.Example.com", T_A);
	expect_ok(&w, &enc);
	static const uint8_t want[] = {
		0x03, 0x63, 0x6f, 0x6d, 0x07, 0x65, 0x78, 0x61, 0x6d, 0x70, 0x6c, 0x65,
		0x03, 0x77, 0x77, 0x77, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00,
	};
	assert_int_equal(enc.key_len, sizeof want);
	assert_memory_equal(enc.key, want, sizeof want);
}

static void test_cd_bit_and_tag_go_into_the_key(void **state)
{
	(void)state;
	wb_t w;
	put_header(&w, RESP | F_CD, 1, 0, 0, 0);
	put_question(&w, "a.b", T_A);
	uint8_t *p = guard_copy(w.b, w.n);
	dnsnap_diag_t d;
	assert_int_equal(dnsnap_msg_encode(p, w.n, NOW, (const uint8_t *)"v1", 2, &enc, &d),
			 DNSNAP_OK);
	guard_free(p);
	static const uint8_t want[] = { 1, 'b', 1, 'a', 0, 0, 1, 0, 1, DNSNAP_KF_CD, 2, 'v', '1' };
	assert_int_equal(enc.key_len, sizeof want);
	assert_memory_equal(enc.key, want, sizeof want);
}

static void test_nxdomain_ttl_is_the_lower_of_soa_ttl_and_minimum(void **state)
{
	(void)state;
	wb_t w;
	put_header(&w, RESP | 3, 1, 0, 1, 0);
	put_question(&w, "www.example.com", T_A);
	put_ptr(&w, QNAME_OFF + 4);
	size_t rl = put_fixed(&w, T_SOA, C_IN, 3600);
	put_soa_rdata(&w, "ns1.example.com", "hostmaster.example.com", 900);
	end_rdata(&w, rl);
	expect_ok(&w, &enc);
	dnsnap_hdr_t h;
	header_of(&enc, &h);
	assert_int_equal(dnsnap_hdr_kind(&h), DNSNAP_KIND_NXDOMAIN);
	assert_int_equal(dnsnap_hdr_rcode(&h), 3);
	assert_int_equal(enc.ttl, 900);

	/* NOERROR, same authority: NODATA; SOA TTL lower than MINIMUM */
	set_u16(&w, 2, RESP);
	w.b[rl - 4] = 0;
	w.b[rl - 3] = 0;
	w.b[rl - 2] = 0x01;
	w.b[rl - 1] = 0x2c; /* TTL 300 */
	expect_ok(&w, &enc);
	header_of(&enc, &h);
	assert_int_equal(dnsnap_hdr_kind(&h), DNSNAP_KIND_NODATA);
	assert_int_equal(enc.ttl, 300);
}

static void test_referral_is_kind_referral_with_the_lowest_ns_ttl(void **state)
{
	(void)state;
	wb_t w;
	put_header(&w, F_QR, 1, 0, 2, 1);
	put_question(&w, "www.example.com", T_A);
	put_ptr(&w, QNAME_OFF + 4);
	size_t rl = put_fixed(&w, T_NS, C_IN, 172800);
	size_t ns1 = w.n;
	put_labels(&w, "ns1");
	put_ptr(&w, QNAME_OFF + 4);
	end_rdata(&w, rl);
	put_ptr(&w, QNAME_OFF + 4);
	rl = put_fixed(&w, T_NS, C_IN, 86400);
	put_labels(&w, "ns2");
	put_ptr(&w, QNAME_OFF + 4);
	end_rdata(&w, rl);
	put_ptr(&w, ns1);
	put_a_rest(&w, 30, 0xc0000235); /* glue: does not count */
	expect_ok(&w, &enc);
	dnsnap_hdr_t h;
	header_of(&enc, &h);
	assert_int_equal(dnsnap_hdr_kind(&h), DNSNAP_KIND_REFERRAL);
	assert_int_equal(enc.ttl, 86400);
}

/* ============================================================ names in rdata */

/* One type whose rdata holds a name that may arrive compressed: the bytes
 * before the name and after it (a second name for TALINK). */
static const struct {
	unsigned type;
	const char *what;
	uint8_t pre[18];
	size_t npre;
	uint8_t post[24];
	size_t npost;
} named[] = {
	{ 39, "DNAME", { 0 }, 0, { 0 }, 0 },
	{ 36, "KX", { 0, 10 }, 2, { 0 }, 0 },
	{ 46, "RRSIG", { 0, 1, 8, 3, 0, 0, 0x0e, 0x10, 0x65, 0x60, 0, 0, 0x65, 0x50, 0, 0, 0x30, 0x39 },
	  18, { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 }, 16 },
	{ 47, "NSEC", { 0 }, 0, { 0, 6, 0x40, 0, 0, 0, 0, 3 }, 8 },
	{ 58, "TALINK", { 0 }, 0, { 0 }, 1 },
	{ 64, "SVCB", { 0, 1 }, 2, { 0, 1, 0, 3, 2, 'h', '3' }, 7 },
	{ 65, "HTTPS", { 0, 1 }, 2, { 0, 3, 0, 2, 0x01, 0xbb }, 6 },
	{ 107, "LP", { 0, 10 }, 2, { 0 }, 0 },
	{ 249, "TKEY", { 0 }, 0, { 0x65, 0x53, 0xf1, 0, 0x65, 0x53, 0xf2, 0, 0, 3, 0, 0, 0, 0, 0, 0 },
	  16 },
	{ 33, "SRV", { 0, 1, 0, 2, 0x14, 0x95 }, 6, { 0 }, 0 },
	{ 5, "CNAME", { 0 }, 0, { 0 }, 0 },
};

/* www.example.com <type>: one answer whose rdata name is "to" + a pointer
 * to example.com in the question (offset 16), the way the bug report's
 * DNAME came: compressed although RFC 6672 says it must not be. */
static void build_named(wb_t *w, unsigned i)
{
	*w = (wb_t){ .n = 0 };
	put_header(w, RESP, 1, 1, 0, 0);
	put_question(w, "www.example.com", named[i].type);
	put_ptr(w, 12);
	size_t rl = put_fixed(w, named[i].type, C_IN, 300);
	put_raw(w, named[i].pre, named[i].npre);
	put_labels(w, "to");
	put_ptr(w, 16);
	put_raw(w, named[i].post, named[i].npost);
	end_rdata(w, rl);
}

/* The stored rdata is the rdata with the name expanded, exactly what ldns
 * (an independent parser) reads from the message; and the validator finds a
 * pointer put back into that name: DNSNAP_ELABEL at its byte. */
static void test_compressed_names_in_rdata_are_stored_expanded_as_ldns_reads_them(void **state)
{
	(void)state;
	uint8_t name[DNSNAP_NAME_MAX];
	size_t nlen = wire("to.example.com", name);
	for (unsigned i = 0; i < sizeof named / sizeof named[0]; i++) {
		wb_t w;
		build_named(&w, i);
		expect_ok(&w, &enc);
		dnsnap_key_t k;
		dnsnap_rr_t rr[2];
		assert_int_equal(all_records(&enc, &k, rr, 2), 1);
		uint8_t want[128];
		size_t wl = 0;
		memcpy(want, named[i].pre, named[i].npre);
		wl += named[i].npre;
		memcpy(want + wl, name, nlen);
		wl += nlen;
		memcpy(want + wl, named[i].post, named[i].npost);
		wl += named[i].npost;
		if (rr[0].rdlen != wl || memcmp(rr[0].rdata, want, wl) != 0)
			fail_msg("%s: stored rdata of %zu bytes is not the expanded %zu", named[i].what,
				 rr[0].rdlen, wl);

		/* the oracle: ldns decompresses while it parses; its rdata fields
		 * back to back are the rdata with every name written out */
		ldns_pkt *pkt = NULL;
		if (ldns_wire2pkt(&pkt, w.b, w.n) != LDNS_STATUS_OK)
			fail_msg("%s: ldns cannot parse the message", named[i].what);
		const ldns_rr *lr = ldns_rr_list_rr(ldns_pkt_answer(pkt), 0);
		uint8_t lw[128];
		size_t ll = 0;
		for (size_t f = 0; f < ldns_rr_rd_count(lr); f++) {
			const ldns_rdf *rdf = ldns_rr_rdf(lr, f);
			assert_true(ll + ldns_rdf_size(rdf) <= sizeof lw);
			memcpy(lw + ll, ldns_rdf_data(rdf), ldns_rdf_size(rdf));
			ll += ldns_rdf_size(rdf);
		}
		ldns_pkt_free(pkt);
		if (ll != rr[0].rdlen || memcmp(lw, rr[0].rdata, ll) != 0)
			fail_msg("%s: ldns reads %zu rdata bytes, the entry holds %zu other ones",
				 named[i].what, ll, rr[0].rdlen);

		/* a pointer where the name starts: not a name in an entry */
		size_t at = (size_t)(rr[0].rdata - enc.entry) + named[i].npre;
		enc.entry[at] = 0xc0;
		enc.entry[at + 1] = 0x10;
		dnsnap_diag_t d;
		int rc = dnsnap_entry_validate(enc.entry, enc.entry_len, &d);
		if (rc != DNSNAP_ELABEL || d.offset != at)
			fail_msg("%s: pointer in the stored name: got %s at %zu, want DNSNAP_ELABEL "
				 "at %zu", named[i].what, ename(rc), d.offset, at);
	}
}

/* A compressed name in the new types is held to the rules of names in a
 * message: a pointer that does not point backwards is refused at the
 * pointer, a name running past the rdata is ERDATA at the rdata. */
static void test_bad_names_in_dname_and_rrsig_rdata_are_refused(void **state)
{
	(void)state;
	wb_t w;
	build_named(&w, 0); /* DNAME: rdata "to" + pointer at its end */
	size_t ptr = w.n - 2;
	w.b[ptr + 1] = (uint8_t)ptr; /* points at itself */
	expect_refused(&w, w.n, DNSNAP_EPOINTER, ptr);

	build_named(&w, 2); /* RRSIG: 18 bytes, the signer, the signature */
	size_t rd = w.n - 16 - 2 - 3 - 18;
	set_u16(&w, rd - 2, 10); /* rdlength 10: the fixed part is cut */
	expect_refused(&w, rd + 10, DNSNAP_ERDATA, rd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_shorter_than_12_bytes_is_truncated_at_offset_0),
		cmocka_unit_test(test_compressed_names_in_rdata_are_stored_expanded_as_ldns_reads_them),
		cmocka_unit_test(test_bad_names_in_dname_and_rrsig_rdata_are_refused),
		cmocka_unit_test(test_query_without_qr_is_not_cacheable_at_offset_2),
		cmocka_unit_test(test_opcode_other_than_query_is_not_cacheable_at_offset_2),
		cmocka_unit_test(test_truncated_response_is_not_cacheable_at_offset_2),
		cmocka_unit_test(test_qdcount_0_or_2_is_not_cacheable_at_offset_4),
		cmocka_unit_test(test_question_cut_in_its_name_is_truncated_at_the_name),
		cmocka_unit_test(test_question_cut_in_its_type_or_class_is_truncated_at_that_field),
		cmocka_unit_test(test_label_over_63_in_the_question_is_refused_at_its_length_byte),
		cmocka_unit_test(test_label_over_63_in_an_owner_is_refused_at_its_length_byte),
		cmocka_unit_test(test_label_over_63_in_mx_rdata_is_refused_at_its_length_byte),
		cmocka_unit_test(test_label_types_0x40_and_0x80_are_refused_at_their_first_byte),
		cmocka_unit_test(
			test_name_over_255_uncompressed_is_refused_at_the_label_that_crosses),
		cmocka_unit_test(
			test_name_over_255_through_a_pointer_is_refused_at_the_label_that_crosses),
		cmocka_unit_test(test_pointer_to_itself_is_refused_at_the_pointer),
		cmocka_unit_test(
			test_two_pointers_pointing_at_each_other_are_refused_at_the_forward_one),
		cmocka_unit_test(test_pointer_pointing_forward_is_refused_at_the_pointer),
		cmocka_unit_test(test_pointer_into_the_header_is_refused_at_the_pointer),
		cmocka_unit_test(test_counts_past_the_last_record_are_refused_at_the_message_end),
		cmocka_unit_test(test_record_cut_inside_a_field_is_truncated_at_that_field),
		cmocka_unit_test(test_rdlength_past_the_end_is_refused_at_the_rdlength_field),
		cmocka_unit_test(test_a_rdata_of_3_or_5_bytes_is_refused_at_the_rdata_start),
		cmocka_unit_test(test_aaaa_rdata_of_4_bytes_is_refused_at_the_rdata_start),
		cmocka_unit_test(test_soa_without_its_fixed_tail_is_refused_at_the_rdata_start),
		cmocka_unit_test(
			test_cname_rdata_with_bytes_after_the_name_is_refused_at_the_rdata_start),
		cmocka_unit_test(test_second_opt_is_refused_at_its_record_start),
		cmocka_unit_test(test_opt_in_the_answer_section_is_refused_at_its_record_start),
		cmocka_unit_test(test_opt_in_the_authority_section_is_refused_at_its_record_start),
		cmocka_unit_test(test_opt_with_a_non_root_owner_is_refused_at_its_record_start),
		cmocka_unit_test(
			test_opt_option_overrunning_its_rdata_is_refused_at_the_rdata_start),
		cmocka_unit_test(test_ede_option_shorter_than_2_bytes_is_refused),
		cmocka_unit_test(test_key_over_511_bytes_is_too_big_at_the_question_name),
		cmocka_unit_test(test_tag_over_255_bytes_and_null_arguments_are_invalid),
		cmocka_unit_test(test_records_over_65535_bytes_are_too_big_at_the_crossing_record),
		cmocka_unit_test(test_smallest_valid_response_is_nodata_with_ttl_0),
		cmocka_unit_test(test_trailing_bytes_after_the_counted_records_are_ignored),
		cmocka_unit_test(test_entry_bytes_of_a_small_answer_follow_the_layout),
		cmocka_unit_test(
			test_compressed_message_gives_the_same_entry_as_its_uncompressed_twin),
		cmocka_unit_test(test_tsig_in_additional_is_dropped),
		cmocka_unit_test(test_ede_option_is_carried_in_the_extension_area),
		cmocka_unit_test(test_ttl_with_the_high_bit_set_is_stored_as_0),
		cmocka_unit_test(test_owner_modes_of_a_cname_chain),
		cmocka_unit_test(test_same_ignores_case_but_never_spans_two_sections),
		cmocka_unit_test(test_key_of_www_example_com_a_in_is_lowercased_and_reversed),
		cmocka_unit_test(test_cd_bit_and_tag_go_into_the_key),
		cmocka_unit_test(test_nxdomain_ttl_is_the_lower_of_soa_ttl_and_minimum),
		cmocka_unit_test(test_referral_is_kind_referral_with_the_lowest_ns_ttl),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
