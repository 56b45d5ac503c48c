/*
 * test_arena.c: the cache shards' arena (engine/arena.c). Chunks never
 * overlap and keep their bytes whatever is allocated and freed around them;
 * freed space merges, so that once everything is freed one slab is left and
 * a chunk as large as a slab allows fits again; a budget bounds the slabs;
 * every chunk's counted size is at least what it holds and within the slack
 * of it. Run under make asan, an overrun of a slab or a chunk fails it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "arena.h"

#define LIVE 4000

typedef struct live {
	uint32_t ref;
	size_t key_len, entry_len;
	uint8_t fill;
} live_t;

static void fill_chunk(dnsnap_arena_t *a, const live_t *l)
{
	struct centry *e = dnsnap__arena_at(a, l->ref);
	memset(e->entry, l->fill, l->entry_len + l->key_len);
}

static void check_chunk(dnsnap_arena_t *a, const live_t *l)
{
	struct centry *e = dnsnap__arena_at(a, l->ref);
	uint32_t lens = atomic_load(&e->lens);
	assert_int_equal(lens_key(lens), l->key_len);
	assert_int_equal(lens_entry(lens), l->entry_len);
	assert_false(lens & L_FREE);
	for (size_t i = 0; i < l->entry_len + l->key_len; i++)
		if (e->entry[i] != l->fill)
			fail_msg("chunk %u: byte %zu is %02x, not %02x", l->ref, i, e->entry[i],
				 l->fill);
	size_t need = dnsnap__chunk_size(l->key_len, l->entry_len);
	size_t got = dnsnap__arena_chunk_bytes(a, l->ref);
	assert_true(got >= need);
	if (need < ARENA_BIG)
		assert_true(got - need < 16);
}

static void alloc_one(dnsnap_arena_t *a, live_t *l, unsigned *x)
{
	*x = *x * 1103515245u + 12345u;
	unsigned r = *x >> 8;
	l->key_len = 8 + r % 60;
	/* mostly cache-sized entries, a few big ones */
	l->entry_len = 18 + (r % 16 == 0 ? r % 3000 : (r >> 4) % 300);
	l->fill = (uint8_t)(r >> 20);
	int nomem;
	l->ref = dnsnap__arena_alloc(a, l->key_len, l->entry_len, 1, &nomem);
	assert_int_not_equal(l->ref, 0);
	fill_chunk(a, l);
}

static void test_chunks_keep_their_bytes_and_free_space_merges(void **state)
{
	(void)state;
	dnsnap_arena_t a;
	dnsnap__arena_init(&a, 0);
	live_t *l = calloc(LIVE, sizeof *l);
	assert_non_null(l);
	unsigned x = 7;
	for (size_t i = 0; i < LIVE; i++)
		alloc_one(&a, &l[i], &x);
	for (int round = 0; round < 40; round++) {
		for (size_t i = 0; i < LIVE; i++) { /* free and replace a random third */
			x = x * 1103515245u + 12345u;
			if ((x >> 8) % 3 != 0)
				continue;
			check_chunk(&a, &l[i]);
			dnsnap__arena_free(&a, l[i].ref);
			alloc_one(&a, &l[i], &x);
		}
	}
	for (size_t i = 0; i < LIVE; i++)
		check_chunk(&a, &l[i]);
	size_t peak = a.slab_bytes;
	for (size_t i = 0; i < LIVE; i++)
		dnsnap__arena_free(&a, l[i].ref);
	/* all merged back: one slab left (the others went back), whole again */
	assert_true(a.slab_bytes <= 65536);
	assert_true(a.slab_bytes < peak);
	int nomem;
	uint32_t big = dnsnap__arena_alloc(&a, 0, 1000 - 4, 0, &nomem); /* no new slab */
	assert_int_not_equal(big, 0);
	dnsnap__arena_free(&a, big);
	free(l);
	dnsnap__arena_free_all(&a);
}

static void test_without_growth_only_free_chunks_are_taken(void **state)
{
	(void)state;
	dnsnap_arena_t a;
	dnsnap__arena_init(&a, 12 * 1024); /* small budget: 4 KiB slabs */
	int nomem;
	assert_int_equal(dnsnap__arena_alloc(&a, 10, 100, 0, &nomem), 0);
	assert_int_equal(nomem, 0);
	uint32_t r = dnsnap__arena_alloc(&a, 10, 100, 1, &nomem);
	assert_int_not_equal(r, 0);
	assert_int_equal(a.slab_bytes, 4096);
	size_t n = 1;
	while (dnsnap__arena_alloc(&a, 10, 100, 0, &nomem) != 0)
		n++;
	assert_int_equal(nomem, 0);
	assert_true(n * 116 > 4096 - 116); /* the slab filled up, and no other made */
	assert_int_equal(a.slab_bytes, 4096);
	dnsnap__arena_free_all(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chunks_keep_their_bytes_and_free_space_merges),
		cmocka_unit_test(test_without_growth_only_free_chunks_are_taken),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
