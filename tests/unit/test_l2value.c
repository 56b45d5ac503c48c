/*
 * test_l2value: the value of a shared store (spec/FORMAT.md, "L2 value"):
 * the spec's worked example byte for byte, a round trip, and damage: every
 * single bit flipped, every cut, another key's value, a foreign or a huge
 * one. None may open as good.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dnsnap.h"

/* vector 001's key (www.example.com. IN A) */
static const uint8_t key[] = { 3, 'c', 'o', 'm', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3,
			       'w', 'w', 'w', 0, 0, 1, 0, 1, 0, 0 };

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *p = malloc((size_t)n + 1);
	assert_non_null(p);
	assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return p;
}

/* vector 001's entry (its .bin: Key_Len, key, entry) */
static const uint8_t *entry001(size_t *len)
{
	static uint8_t *bin;
	static size_t bl;
	if (bin == NULL)
		bin = slurp("spec/vectors/valid/001-a.bin", &bl);
	assert_true(bl > 2 + sizeof key);
	assert_memory_equal(bin + 2, key, sizeof key);
	*len = bl - 2 - sizeof key;
	return bin + 2 + sizeof key;
}

static void test_worked_example(void **state)
{
	(void)state;
	size_t el, vl;
	const uint8_t *e = entry001(&el);
	uint8_t v[DNSNAP_L2_VALUE_MAX];
	assert_int_equal(dnsnap_l2_value_seal(key, sizeof key, e, el, v, sizeof v, &vl), DNSNAP_OK);
	assert_int_equal(vl, 6 + el + 8);
	static const uint8_t head[] = { 0xd5, 'N', 'S', 'L', 1, 0 };
	assert_memory_equal(v, head, sizeof head);
	assert_memory_equal(v + 6, e, el);
	/* the spec's L2_Check for this key and entry, stored little-endian */
	static const uint8_t check[] = { 0x91, 0x5d, 0x88, 0xcc, 0x2e, 0x65, 0x73, 0xd7 };
	assert_memory_equal(v + 6 + el, check, 8);
	const uint8_t *oe;
	size_t ol;
	dnsnap_diag_t d;
	assert_int_equal(dnsnap_l2_value_open(key, sizeof key, v, vl, &oe, &ol, &d), DNSNAP_OK);
	assert_ptr_equal(oe, v + 6);
	assert_int_equal(ol, el);
	/* too small a buffer */
	assert_int_equal(dnsnap_l2_value_seal(key, sizeof key, e, el, v, vl - 1, &vl),
			 DNSNAP_ENOSPC);
}

static void test_every_flip_and_cut_fails(void **state)
{
	(void)state;
	size_t el, vl;
	const uint8_t *e = entry001(&el);
	uint8_t v[512], w[512];
	assert_int_equal(dnsnap_l2_value_seal(key, sizeof key, e, el, v, sizeof v, &vl), DNSNAP_OK);
	const uint8_t *oe;
	size_t ol;
	dnsnap_diag_t d;
	for (size_t i = 0; i < vl * 8; i++) {
		memcpy(w, v, vl);
		w[i / 8] ^= (uint8_t)(1u << (i % 8));
		int err = dnsnap_l2_value_open(key, sizeof key, w, vl, &oe, &ol, &d);
		if (err == DNSNAP_OK)
			fail_msg("bit %zu flipped: opened as good", i);
		assert_true(d.offset <= vl);
	}
	for (size_t n = 0; n < vl; n++) {
		int err = dnsnap_l2_value_open(key, sizeof key, v, n, &oe, &ol, &d);
		if (err == DNSNAP_OK)
			fail_msg("cut to %zu bytes: opened as good", n);
	}
	/* a byte added */
	memcpy(w, v, vl);
	w[vl] = 0;
	assert_int_not_equal(dnsnap_l2_value_open(key, sizeof key, w, vl + 1, &oe, &ol, &d),
			     DNSNAP_OK);
}

static void test_foreign_values(void **state)
{
	(void)state;
	size_t el, vl;
	const uint8_t *e = entry001(&el);
	uint8_t v[512];
	assert_int_equal(dnsnap_l2_value_seal(key, sizeof key, e, el, v, sizeof v, &vl), DNSNAP_OK);
	const uint8_t *oe;
	size_t ol;
	dnsnap_diag_t d;
	/* the same value under another key (www.example.com. IN AAAA): ECHECKSUM */
	uint8_t other[sizeof key];
	memcpy(other, key, sizeof key);
	other[sizeof key - 4] = 28;
	assert_int_equal(dnsnap_l2_value_open(other, sizeof other, v, vl, &oe, &ol, &d),
			 DNSNAP_ECHECKSUM);
	assert_int_equal(d.offset, vl - 8);
	/* garbage, and text */
	static const uint8_t junk[] = "hello, this is not a dnsnap value at all";
	assert_int_equal(dnsnap_l2_value_open(key, sizeof key, junk, sizeof junk - 1, &oe, &ol, &d),
			 DNSNAP_EMAGIC);
	assert_int_equal(dnsnap_l2_value_open(key, sizeof key, junk, 0, &oe, &ol, &d),
			 DNSNAP_ETRUNC);
	/* a later major version */
	v[4] = 2;
	assert_int_equal(dnsnap_l2_value_open(key, sizeof key, v, vl, &oe, &ol, &d),
			 DNSNAP_EVERSION);
	assert_int_equal(d.offset, 4);
	v[4] = 1;
	/* 10 MB: refused by its length, before any hashing */
	size_t big = 10u << 20;
	uint8_t *huge = calloc(1, big);
	assert_non_null(huge);
	memcpy(huge, v, 6);
	assert_int_equal(dnsnap_l2_value_open(key, sizeof key, huge, big, &oe, &ol, &d),
			 DNSNAP_ETOOBIG);
	free(huge);
	/* a value whose check is right but whose entry is not valid: the entry's error */
	uint8_t bad[64] = { 0 };
	uint8_t ent[DNSNAP_ENTRY_HDR] = { 0 };
	ent[0] = 0xff; /* nonsense header */
	memset(ent, 0xff, sizeof ent);
	size_t bl;
	assert_int_equal(dnsnap_l2_value_seal(key, sizeof key, ent, sizeof ent, bad, sizeof bad, &bl),
			 DNSNAP_OK);
	int err = dnsnap_l2_value_open(key, sizeof key, bad, bl, &oe, &ol, &d);
	assert_int_not_equal(err, DNSNAP_OK);
	assert_int_not_equal(err, DNSNAP_ECHECKSUM);
	assert_true(d.offset >= 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worked_example),
		cmocka_unit_test(test_every_flip_and_cut_fails),
		cmocka_unit_test(test_foreign_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
