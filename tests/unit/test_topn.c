/*
 * test_topn.c: the one top-N (dnsnap_top_t, engine/top.c: export's top_n and
 * stats --top) against a full sort of the same keys, and the tool's plural().
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* before cmocka.h, whose fail() macro would rename ours */
#include "cli.h"

#include <cmocka.h>

#define NKEYS 500

struct k {
	uint32_t hits;
	uint8_t key[3];
};

/* the expected order: most hits first, then the smaller key */
static int k_cmp(const void *a, const void *b)
{
	const struct k *x = a, *y = b;
	if (x->hits != y->hits)
		return x->hits < y->hits ? 1 : -1;
	return memcmp(x->key, y->key, sizeof x->key);
}

static void make_keys(struct k *ks)
{
	uint32_t r = 12345;
	for (int i = 0; i < NKEYS; i++) {
		r = r * 1103515245 + 12345;
		ks[i].hits = (r >> 16) % 20; /* many ties */
		ks[i].key[0] = (uint8_t)(i >> 8);
		ks[i].key[1] = (uint8_t)i;
		ks[i].key[2] = (uint8_t)(r >> 8);
	}
}

static void test_topn_keeps_the_most_hit_in_rank_order(void **state)
{
	(void)state;
	static struct k ks[NKEYS], sorted[NKEYS];
	make_keys(ks);
	memcpy(sorted, ks, sizeof ks);
	qsort(sorted, NKEYS, sizeof *sorted, k_cmp);
	static const size_t caps[] = { 1, 2, 7, 64, NKEYS, NKEYS + 10 };
	for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
		dnsnap_top_t t;
		assert_int_equal(dnsnap_top_init(&t, caps[c]), DNSNAP_OK);
		for (int i = NKEYS - 1; i >= 0; i--) /* not in key order */
			dnsnap_top_add(&t, ks[i].key, sizeof ks[i].key, ks[i].hits);
		dnsnap_top_sort(&t);
		size_t want = caps[c] < NKEYS ? caps[c] : NKEYS;
		assert_int_equal(t.n, want);
		for (size_t i = 0; i < want; i++) {
			assert_int_equal(t.items[i].hits, sorted[i].hits);
			assert_int_equal(t.items[i].key_len, 3);
			assert_memory_equal(t.items[i].key, sorted[i].key, 3);
		}
		dnsnap_top_free(&t);
	}
}

static void test_topn_of_zero_keeps_nothing(void **state)
{
	(void)state;
	dnsnap_top_t t;
	assert_int_equal(dnsnap_top_init(&t, 0), DNSNAP_OK);
	dnsnap_top_add(&t, (const uint8_t *)"abc", 3, 9);
	dnsnap_top_sort(&t);
	assert_int_equal(t.n, 0);
	dnsnap_top_free(&t);
	dnsnap_top_free(&t); /* twice: nothing left to free */
}

static void test_plural_is_singular_only_for_one(void **state)
{
	(void)state;
	assert_string_equal(plural(0, "entry", "entries"), "entries");
	assert_string_equal(plural(1, "entry", "entries"), "entry");
	assert_string_equal(plural(2, "entry", "entries"), "entries");
	assert_string_equal(plural(UINT64_MAX, "thread", "threads"), "threads");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_topn_keeps_the_most_hit_in_rank_order),
		cmocka_unit_test(test_topn_of_zero_keeps_nothing),
		cmocka_unit_test(test_plural_is_singular_only_for_one),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
