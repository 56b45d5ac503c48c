/*
 * test_key.c: cache keys (dnsnap_key_encode/decode/cmp/zone_prefix).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dnsnap_format.h"
#include "../helpers/guard.h"

/* A dotted name in wire form ("" or "." is the root). */
static size_t wire(const char *dotted, uint8_t *out)
{
	size_t n = 0;
	const char *s = dotted;
	while (*s != '\0' && strcmp(s, ".") != 0) {
		const char *dot = strchr(s, '.');
		size_t l = dot ? (size_t)(dot - s) : strlen(s);
		out[n++] = (uint8_t)l;
		memcpy(out + n, s, l);
		n += l;
		s += l;
		if (*s == '.')
			s++;
	}
	out[n++] = 0;
	return n;
}

/* A name of labels of the given lengths (filled with 'a'..), then the root. */
static size_t long_name(const unsigned *labels, size_t nlabels, uint8_t *out)
{
	size_t n = 0;
	for (size_t i = 0; i < nlabels; i++) {
		out[n++] = (uint8_t)labels[i];
		memset(out + n, 'a' + (int)i, labels[i]);
		n += labels[i];
	}
	out[n++] = 0;
	return n;
}

static size_t key_of(const char *dotted, uint16_t qtype, uint8_t flags, const char *tag,
		     uint8_t *out)
{
	uint8_t n[DNSNAP_NAME_MAX + 1];
	size_t nl = wire(dotted, n), kl = 0;
	size_t tl = tag ? strlen(tag) : 0;
	assert_int_equal(dnsnap_key_encode(n, nl, qtype, 1, flags, (const uint8_t *)tag, tl, out,
					   DNSNAP_KEY_MAX, &kl), DNSNAP_OK);
	return kl;
}

static int decode_guarded(const uint8_t *key, size_t len, dnsnap_key_t *out)
{
	uint8_t *p = guard_copy(key, len);
	assert_non_null(p);
	int rc = dnsnap_key_decode(p, len, out, NULL);
	/* out->tag points into the copy: callers look at it before this returns */
	if (rc == DNSNAP_OK && out->tag_len > 0) {
		assert_true(out->tag >= p && out->tag + out->tag_len <= p + len);
		out->tag = key + (out->tag - p);
	}
	guard_free(p);
	return rc;
}

static void test_key_round_trips_through_encode_and_decode(void **state)
{
	(void)state;
	uint8_t key[DNSNAP_KEY_MAX], n[DNSNAP_NAME_MAX + 1];
	size_t kl = key_of("www.example.com", 28, DNSNAP_KF_CD, "view1", key);
	size_t nl = wire("www.example.com", n);
	assert_int_equal(kl, nl + 6 + 5);

	dnsnap_key_t k;
	memset(&k, 0xa5, sizeof k);
	assert_int_equal(decode_guarded(key, kl, &k), DNSNAP_OK);
	assert_int_equal(k.name_len, nl);
	assert_memory_equal(k.name, n, nl);
	assert_int_equal(k.qtype, 28);
	assert_int_equal(k.qclass, 1);
	assert_int_equal(k.flags, DNSNAP_KF_CD);
	assert_int_equal(k.tag_len, 5);
	assert_ptr_equal(k.tag, key + kl - 5);
	assert_memory_equal(k.tag, "view1", 5);

	/* the root, no tag, qclass CH */
	uint8_t root = 0;
	assert_int_equal(dnsnap_key_encode(&root, 1, 2, 3, 0, NULL, 0, key, sizeof key, &kl),
			 DNSNAP_OK);
	static const uint8_t want[] = { 0, 0, 2, 0, 3, 0, 0 };
	assert_int_equal(kl, sizeof want);
	assert_memory_equal(key, want, sizeof want);
	assert_int_equal(decode_guarded(key, kl, &k), DNSNAP_OK);
	assert_int_equal(k.name_len, 1);
	assert_int_equal(k.name[0], 0);
	assert_int_equal(k.qtype, 2);
	assert_int_equal(k.qclass, 3);
	assert_int_equal(k.tag_len, 0);

	/* labels holding 0 and '.' bytes survive */
	static const uint8_t odd[] = { 3, 'a', 0, '.', 2, '.', 0, 0 };
	assert_int_equal(dnsnap_key_encode(odd, sizeof odd, 1, 1, 0, NULL, 0, key, sizeof key,
					   &kl), DNSNAP_OK);
	static const uint8_t odd_key[] = { 2, '.', 0, 3, 'a', 0, '.', 0, 0, 1, 0, 1, 0, 0 };
	assert_int_equal(kl, sizeof odd_key);
	assert_memory_equal(key, odd_key, sizeof odd_key);
	assert_int_equal(decode_guarded(key, kl, &k), DNSNAP_OK);
	assert_int_equal(k.name_len, sizeof odd);
	assert_memory_equal(k.name, odd, sizeof odd);
}

static void test_key_has_the_documented_bytes(void **state)
{
	(void)state;
	uint8_t key[DNSNAP_KEY_MAX];
	size_t kl = key_of("www.Example.com.", 1, 0, NULL, key);
	static const uint8_t want[] = {
		0x03, 0x63, 0x6f, 0x6d, 0x07, 0x65, 0x78, 0x61, 0x6d, 0x70, 0x6c, 0x65,
		0x03, 0x77, 0x77, 0x77, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00,
	};
	assert_int_equal(kl, sizeof want);
	assert_memory_equal(key, want, sizeof want);

	/* integers are big-endian */
	kl = key_of("a", 0x1234, 0, NULL, key);
	assert_int_equal(key[3], 0x12);
	assert_int_equal(key[4], 0x34);
}

static void test_key_name_is_lower_cased_in_ascii_only(void **state)
{
	(void)state;
	uint8_t a[DNSNAP_KEY_MAX], b[DNSNAP_KEY_MAX];
	size_t al = key_of("WwW.ExAmPlE.CoM", 1, 0, NULL, a);
	size_t bl = key_of("www.example.com", 1, 0, NULL, b);
	assert_int_equal(al, bl);
	assert_memory_equal(a, b, al);

	/* '@' (0x40) and '[' (0x5b) border A-Z; 0xc9 is not ASCII: all kept */
	static const uint8_t n[] = { 4, '@', '[', 0xc9, 'Z', 0 };
	size_t kl;
	assert_int_equal(dnsnap_key_encode(n, sizeof n, 1, 1, 0, NULL, 0, a, sizeof a, &kl),
			 DNSNAP_OK);
	static const uint8_t want[] = { 4, '@', '[', 0xc9, 'z', 0 };
	assert_memory_equal(a, want, sizeof want);

	/* the tag is opaque: not lower-cased */
	al = key_of("x", 1, 0, "ViEw", a);
	assert_memory_equal(a + al - 4, "ViEw", 4);
}

static int has_prefix(const uint8_t *key, size_t kl, const uint8_t *pre, size_t pl)
{
	return kl >= pl && memcmp(key, pre, pl) == 0;
}

static void test_zone_prefix_is_a_prefix_of_the_keys_of_the_zone_only(void **state)
{
	(void)state;
	uint8_t zone[DNSNAP_NAME_MAX + 1], pre[DNSNAP_KEY_MAX], key[DNSNAP_KEY_MAX];
	size_t zl = wire("Example.COM", zone), pl = 0;
	assert_int_equal(dnsnap_key_zone_prefix(zone, zl, pre, sizeof pre, &pl), DNSNAP_OK);
	static const uint8_t want[] = { 3, 'c', 'o', 'm', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e' };
	assert_int_equal(pl, sizeof want);
	assert_memory_equal(pre, want, sizeof want);

	static const struct {
		const char *name;
		int in;
	} cases[] = {
		{ "example.com", 1 }, { "www.example.com", 1 }, { "a.b.c.example.com", 1 },
		{ "WWW.EXAMPLE.COM", 1 }, { "www.example.comm", 0 }, { "xexample.com", 0 },
		{ "example.co", 0 }, { "com", 0 }, { ".", 0 }, { "example.com.au", 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t kl = key_of(cases[i].name, 1, 0, NULL, key);
		print_message("%s\n", cases[i].name);
		assert_int_equal(has_prefix(key, kl, pre, pl), cases[i].in);
	}

	/* the root zone's prefix is empty: every key is in it */
	uint8_t root = 0;
	assert_int_equal(dnsnap_key_zone_prefix(&root, 1, pre, sizeof pre, &pl), DNSNAP_OK);
	assert_int_equal(pl, 0);
}

struct sk {
	uint8_t k[DNSNAP_KEY_MAX];
	size_t len;
	int in_zone;
};

static int sk_cmp(const void *a, const void *b)
{
	const struct sk *x = a, *y = b;
	return dnsnap_key_cmp(x->k, x->len, y->k, y->len);
}

static void test_zone_keys_are_contiguous_in_key_order(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		int in;
	} names[] = {
		{ "example.com", 1 }, { "www.example.com", 1 }, { "mail.example.com", 1 },
		{ "a.example.com", 1 }, { "zzz.example.com", 1 }, { "0.example.com", 1 },
		{ "-.example.com", 1 }, { "x.y.z.example.com", 1 }, { "Sub.Example.Com", 1 },
		{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.example.com", 1 },
		{ "example.comm", 0 }, { "xexample.com", 0 }, { "example.co", 0 },
		{ "example.net", 0 }, { "www.example.net", 0 }, { "com", 0 }, { ".", 0 },
		{ "a.com", 0 }, { "z.com", 0 }, { "examplf.com", 0 }, { "exampld.com", 0 },
		{ "example.com.au", 0 }, { "www.example.com.au", 0 }, { "example", 0 },
		{ "www.example", 0 }, { "org", 0 }, { "example.org", 0 }, { "cn", 0 },
		{ "co", 0 }, { "examples.com", 0 }, { "exampl.com", 0 }, { "e.com", 0 },
		{ "www.xexample.com", 0 }, { "ex.ample.com", 0 }, { "ample.com", 0 },
		{ "www.com", 0 }, { "w.ww.com", 0 }, { "dom", 0 }, { "bom", 0 },
		{ "example.c", 0 }, { "example.cm", 0 }, { "a.b", 0 }, { "c.om", 0 },
		{ "com.example", 0 }, { "example.com.example.com", 1 },
	};
	static const uint16_t qtypes[] = { 1, 28, 255 };
	enum { N = sizeof names / sizeof names[0] * 3 * 2 };
	static struct sk keys[N];
	size_t n = 0, want_in = 0;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		for (size_t t = 0; t < 3; t++) {
			for (unsigned tagged = 0; tagged < 2; tagged++) {
				keys[n].len = key_of(names[i].name, qtypes[t], (uint8_t)tagged,
						     tagged ? "\xff\xff" : NULL, keys[n].k);
				keys[n].in_zone = names[i].in;
				want_in += (size_t)names[i].in;
				n++;
			}
		}
	}
	assert_int_equal(n, N);
	/* shuffle deterministically so that the input order is not already sorted */
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (i * 2654435761u) % (i + 1);
		struct sk tmp = keys[i];
		keys[i] = keys[j];
		keys[j] = tmp;
	}
	qsort(keys, n, sizeof keys[0], sk_cmp);

	uint8_t zone[DNSNAP_NAME_MAX + 1], pre[DNSNAP_KEY_MAX];
	size_t zl = wire("example.com", zone), pl;
	assert_int_equal(dnsnap_key_zone_prefix(zone, zl, pre, sizeof pre, &pl), DNSNAP_OK);

	size_t first = n, last = 0, count = 0;
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			assert_true(dnsnap_key_cmp(keys[i - 1].k, keys[i - 1].len, keys[i].k,
						   keys[i].len) <= 0);
		int in = has_prefix(keys[i].k, keys[i].len, pre, pl);
		assert_int_equal(in, keys[i].in_zone);
		if (in) {
			if (first == n)
				first = i;
			last = i;
			count++;
		}
	}
	assert_int_equal(count, want_in);
	assert_int_equal(last - first + 1, count); /* one run */
}

static void test_key_cmp_is_memcmp_with_shorter_first(void **state)
{
	(void)state;
	static const uint8_t a[] = { 1, 2, 3 }, b[] = { 1, 2, 3, 0 }, c[] = { 1, 2, 4 };
	assert_true(dnsnap_key_cmp(a, 3, b, 4) < 0);
	assert_true(dnsnap_key_cmp(b, 4, a, 3) > 0);
	assert_true(dnsnap_key_cmp(a, 3, a, 3) == 0);
	assert_true(dnsnap_key_cmp(b, 4, c, 3) < 0);
	assert_true(dnsnap_key_cmp(c, 3, b, 4) > 0);
	static const uint8_t hi[] = { 0x80 }, lo[] = { 0x7f };
	assert_true(dnsnap_key_cmp(lo, 1, hi, 1) < 0); /* unsigned bytes */
	assert_true(dnsnap_key_cmp(a, 0, b, 0) == 0);
}

static void test_tag_of_255_bytes_with_a_short_name_is_accepted(void **state)
{
	(void)state;
	uint8_t tag[255], key[DNSNAP_KEY_MAX], n[8];
	for (size_t i = 0; i < sizeof tag; i++)
		tag[i] = (uint8_t)i;
	size_t nl = wire("a.b", n), kl = 0;
	assert_int_equal(dnsnap_key_encode(n, nl, 1, 1, 0, tag, sizeof tag, key, sizeof key, &kl),
			 DNSNAP_OK);
	assert_int_equal(kl, nl + 6 + 255);
	assert_int_equal(key[nl + 5], 255);
	dnsnap_key_t k;
	assert_int_equal(decode_guarded(key, kl, &k), DNSNAP_OK);
	assert_int_equal(k.tag_len, 255);
	assert_memory_equal(k.tag, tag, 255);
}

static void test_key_over_511_bytes_is_too_big(void **state)
{
	(void)state;
	static const unsigned labels[] = { 63, 63, 63, 61 };
	uint8_t n[DNSNAP_NAME_MAX + 1], tag[255], key[DNSNAP_KEY_MAX + 64];
	size_t nl = long_name(labels, 4, n), kl = 0;
	assert_int_equal(nl, 255);
	memset(tag, 't', sizeof tag);

	/* 255 + 6 + 250 = 511: the largest key */
	assert_int_equal(dnsnap_key_encode(n, nl, 1, 1, 0, tag, 250, key, sizeof key, &kl),
			 DNSNAP_OK);
	assert_int_equal(kl, DNSNAP_KEY_MAX);
	dnsnap_key_t k;
	assert_int_equal(decode_guarded(key, kl, &k), DNSNAP_OK);

	kl = 12345;
	assert_int_equal(dnsnap_key_encode(n, nl, 1, 1, 0, tag, 251, key, sizeof key, &kl),
			 DNSNAP_ETOOBIG);
	assert_int_equal(kl, 12345); /* out-parameters only on success */
	assert_int_equal(dnsnap_key_encode(n, nl, 1, 1, 0, tag, 255, key, sizeof key, &kl),
			 DNSNAP_ETOOBIG);

	/* a decoder refuses a 512-byte key even when it is well-formed */
	memcpy(key, n, nl);
	key[nl] = 0;
	key[nl + 1] = 1;
	key[nl + 2] = 0;
	key[nl + 3] = 1;
	key[nl + 4] = 0;
	key[nl + 5] = 251;
	memset(key + nl + 6, 't', 251);
	assert_int_equal(decode_guarded(key, nl + 6 + 251, &k), DNSNAP_ETOOBIG);
	dnsnap_diag_t d = { .offset = 999 };
	assert_int_equal(dnsnap_key_decode(key, nl + 6 + 251, &k, &d), DNSNAP_ETOOBIG);
	assert_int_equal(d.offset, 0);
}

static void test_reserved_key_flags_are_refused(void **state)
{
	(void)state;
	uint8_t n[16], key[DNSNAP_KEY_MAX];
	size_t nl = wire("example.com", n), kl = 0;
	for (unsigned bit = 1; bit < 8; bit++) {
		uint8_t f = (uint8_t)(1u << bit);
		assert_int_equal(dnsnap_key_encode(n, nl, 1, 1, f, NULL, 0, key, sizeof key, &kl),
				 DNSNAP_ERESERVED);
	}
	kl = key_of("example.com", 1, DNSNAP_KF_CD, NULL, key);
	dnsnap_key_t k;
	for (unsigned bit = 1; bit < 8; bit++) {
		key[nl + 4] = (uint8_t)(DNSNAP_KF_CD | 1u << bit);
		dnsnap_diag_t d = { .offset = 999 };
		assert_int_equal(dnsnap_key_decode(key, kl, &k, &d), DNSNAP_ERESERVED);
		assert_int_equal(d.offset, nl + 4);
	}
}

static void test_truncated_keys_are_refused_as_truncated(void **state)
{
	(void)state;
	uint8_t key[DNSNAP_KEY_MAX + 1];
	size_t kl = key_of("www.example.com", 1, 0, "tag", key);
	const size_t nl = 17;
	assert_int_equal(kl, nl + 6 + 3);
	for (size_t len = 0; len < kl; len++) {
		/* FORMAT.md: a cut name at 0, else the field that is cut; a short
		 * tag at Tag_Len */
		size_t want = len < nl ? 0 : len < nl + 2 ? nl : len < nl + 4 ? nl + 2 :
			      len < nl + 5 ? nl + 4 : nl + 5;
		dnsnap_key_t k;
		dnsnap_diag_t d = { .offset = 999 };
		uint8_t *p = guard_copy(key, len);
		assert_non_null(p);
		int rc = dnsnap_key_decode(p, len, &k, &d);
		guard_free(p);
		if (rc != DNSNAP_ETRUNC || d.offset != want)
			fail_msg("key cut to %zu of %zu bytes: got %s at %zu, "
				 "want DNSNAP_ETRUNC at %zu", len, kl,
				 dnsnap_errname(rc) ? dnsnap_errname(rc) : "?", d.offset, want);
	}
}

static void test_key_with_bytes_after_the_tag_is_a_bad_field(void **state)
{
	(void)state;
	uint8_t key[DNSNAP_KEY_MAX + 1];
	size_t kl = key_of("www.example.com", 1, 0, "tag", key);
	key[kl] = 0;
	uint8_t *p = guard_copy(key, kl + 1);
	assert_non_null(p);
	dnsnap_key_t k;
	dnsnap_diag_t d = { .offset = 999 };
	assert_int_equal(dnsnap_key_decode(p, kl + 1, &k, &d), DNSNAP_EFIELD);
	assert_int_equal(d.offset, kl);
	guard_free(p);
}

static void test_key_with_an_upper_case_name_is_a_bad_field(void **state)
{
	(void)state;
	uint8_t key[DNSNAP_KEY_MAX];
	size_t kl = key_of("www.example.com", 1, 0, NULL, key);
	key[5] = 'E'; /* "com" "[E]xample" */
	uint8_t *p = guard_copy(key, kl);
	assert_non_null(p);
	dnsnap_key_t k;
	dnsnap_diag_t d = { .offset = 999 };
	assert_int_equal(dnsnap_key_decode(p, kl, &k, &d), DNSNAP_EFIELD);
	assert_int_equal(d.offset, 5);
	/* a label byte of 0x40 or above is ELABEL at that byte */
	memcpy(p, key, kl);
	p[5] = 'x';
	p[4] = 0x47;
	assert_int_equal(dnsnap_key_decode(p, kl, &k, &d), DNSNAP_ELABEL);
	assert_int_equal(d.offset, 4);
	guard_free(p);
}

#define expect_decode(key, len, code, off) expect_decode_at(__LINE__, (key), (len), (code), (off))

static void expect_decode_at(int line, const uint8_t *key, size_t len, int code, size_t off)
{
	uint8_t *p = guard_copy(key, len);
	assert_non_null(p);
	dnsnap_key_t k;
	dnsnap_diag_t d = { .offset = 999 };
	int rc = dnsnap_key_decode(p, len, &k, &d);
	guard_free(p);
	if (rc != code || d.offset != off)
		fail_msg("line %d: got %s at %zu, want %s at %zu", line,
			 dnsnap_errname(rc) ? dnsnap_errname(rc) : "?", d.offset,
			 dnsnap_errname(code), off);
}

static void test_key_errors_are_reported_in_reading_order(void **state)
{
	(void)state;
	uint8_t key[DNSNAP_KEY_MAX + 1];
	const size_t nl = 17;

	/* reserved Flags before bytes after the tag */
	size_t kl = key_of("www.example.com", 1, 0, NULL, key);
	key[nl + 4] = 0x80;
	key[kl] = 0;
	expect_decode(key, kl + 1, DNSNAP_ERESERVED, nl + 4);

	/* reserved Flags before a cut tag */
	kl = key_of("www.example.com", 1, 0, "tag", key);
	key[nl + 4] = 0x80;
	expect_decode(key, kl - 1, DNSNAP_ERESERVED, nl + 4);

	/* an upper-case byte before a bad label later in the name */
	kl = key_of("www.example.com", 1, 0, NULL, key);
	key[5] = 'E';
	key[12] = 0x47; /* the "www" label's length byte */
	expect_decode(key, kl, DNSNAP_EFIELD, 5);
}

static void test_key_encode_checks_the_output_size(void **state)
{
	(void)state;
	uint8_t n[32], key[DNSNAP_KEY_MAX];
	size_t nl = wire("www.example.com", n), kl = 0;
	size_t exact = nl + 6 + 3;
	uint8_t *out = guard_copy(key, exact); /* writes past it would crash */
	assert_non_null(out);
	assert_int_equal(dnsnap_key_encode(n, nl, 1, 1, 0, (const uint8_t *)"tag", 3, out, exact,
					   &kl), DNSNAP_OK);
	assert_int_equal(kl, exact);
	guard_free(out);
	kl = 777;
	assert_int_equal(dnsnap_key_encode(n, nl, 1, 1, 0, (const uint8_t *)"tag", 3, key,
					   exact - 1, &kl), DNSNAP_ENOSPC);
	assert_int_equal(kl, 777);
}

static void test_key_encode_refuses_bad_names(void **state)
{
	(void)state;
	uint8_t n[DNSNAP_NAME_MAX + 8], key[DNSNAP_KEY_MAX];
	size_t kl;
	static const unsigned big[] = { 64 };
	size_t nl = long_name(big, 1, n);
	assert_int_equal(dnsnap_key_encode(n, nl, 1, 1, 0, NULL, 0, key, sizeof key, &kl),
			 DNSNAP_ELABEL);
	static const unsigned l256[] = { 63, 63, 63, 62 };
	nl = long_name(l256, 4, n);
	assert_int_equal(nl, 256);
	assert_int_equal(dnsnap_key_encode(n, nl, 1, 1, 0, NULL, 0, key, sizeof key, &kl),
			 DNSNAP_ENAME);
	static const uint8_t ptr[] = { 1, 'a', 0xc0, 0x0c };
	assert_int_equal(dnsnap_key_encode(ptr, sizeof ptr, 1, 1, 0, NULL, 0, key, sizeof key, &kl),
			 DNSNAP_ELABEL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_round_trips_through_encode_and_decode),
		cmocka_unit_test(test_key_has_the_documented_bytes),
		cmocka_unit_test(test_key_name_is_lower_cased_in_ascii_only),
		cmocka_unit_test(test_zone_prefix_is_a_prefix_of_the_keys_of_the_zone_only),
		cmocka_unit_test(test_zone_keys_are_contiguous_in_key_order),
		cmocka_unit_test(test_key_cmp_is_memcmp_with_shorter_first),
		cmocka_unit_test(test_tag_of_255_bytes_with_a_short_name_is_accepted),
		cmocka_unit_test(test_key_over_511_bytes_is_too_big),
		cmocka_unit_test(test_reserved_key_flags_are_refused),
		cmocka_unit_test(test_truncated_keys_are_refused_as_truncated),
		cmocka_unit_test(test_key_with_bytes_after_the_tag_is_a_bad_field),
		cmocka_unit_test(test_key_with_an_upper_case_name_is_a_bad_field),
		cmocka_unit_test(test_key_errors_are_reported_in_reading_order),
		cmocka_unit_test(test_key_encode_checks_the_output_size),
		cmocka_unit_test(test_key_encode_refuses_bad_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
