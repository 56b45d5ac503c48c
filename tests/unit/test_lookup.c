/*
 * test_lookup.c: dnsnap_cache_lookup(), the lookup the forwarder uses
 * (issue 12, items 4 and 8).
 *
 * - CD fallback: a CD=1 query without a CD=1 entry is answered from the CD=0
 *   one (memory, a lower tier, the snapshot; dnsnap_snap_answer() too), with
 *   cd_fallback set and CD echoed; a CD=1 entry is preferred when there is
 *   one; a CD=0 query never reads a CD=1 entry;
 * - the stale window: 0 is fresh only (whatever serve_stale says); > 0 serves
 *   an entry expired less than that many seconds ago, not one expired that
 *   long ago, from memory and from the lower tier;
 * - the order: fresh memory, fresh lower tier, stale memory, stale lower
 *   tier (a fresh map entry beats a stale memory one); a fresh CD=0 entry
 *   beats a stale CD=1 one;
 * - the counters: hits (stale ones too), misses, stale_served.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ans.h"
#include "dnsnap.h"
#include "tmpdir.h"
#include "wb.h"

#define NOW 1700000000u
#define NAME "cd.lookup.example"

static dnsnap_encoded_t scratch; /* large: static */
static char dir[64];

typedef struct got {
	int err;
	dnsnap_lookup_t lk;
	int octet;               /* the A's last byte */
	uint16_t flags;          /* the answer's header flags */
	uint32_t ttl;
} got_t;

static got_t look(dnsnap_cache_t *c, int cd, uint32_t now, uint32_t window)
{
	uint8_t qb[512], out[1232];
	dnsnap_query_t q;
	ans_query_parse(qb, NAME, 1, cd, 0, 0, &q);
	got_t g = { .lk = { .now = now, .stale_window = window }, .octet = -1 };
	size_t n;
	g.err = dnsnap_cache_lookup(c, &q, &g.lk, out, sizeof out, &n);
	if (g.err == DNSNAP_OK) {
		ans_t a;
		assert_int_equal(ans_parse(out, n, &a), 0);
		assert_int_equal(a.n, 1);
		g.octet = ans_last_octet(out, &a, 1);
		g.flags = a.flags;
		g.ttl = a.rr[0].ttl;
	}
	return g;
}

static dnsnap_cache_t *cache(int serve_stale)
{
	dnsnap_cache_opts_t o;
	dnsnap_cache_opts_default(&o);
	o.serve_stale = serve_stale;
	dnsnap_cache_t *c;
	assert_int_equal(dnsnap_cache_new(&o, &c), DNSNAP_OK);
	return c;
}

/* NAME/A -> 192.0.2.octet, TTL ttl, inserted at NOW under CD=cd. */
static void put(dnsnap_cache_t *c, uint32_t ttl, unsigned octet, int cd)
{
	wb_t w;
	ans_response_a(&w, NAME, ttl, octet, cd);
	assert_int_equal(dnsnap_cache_insert(c, w.b, w.n, NOW, NULL, 0, &scratch, NULL),
			 DNSNAP_OK);
}

static void tier_put(ans_tier_t *t, uint32_t ttl, unsigned octet, int cd)
{
	wb_t w;
	ans_response_a(&w, NAME, ttl, octet, cd);
	ans_tier_add(t, w.b, w.n, NOW);
}

/* ---------------------------------------------------------- CD fallback */

static void test_cd1_query_is_answered_from_the_cd0_entry_in_memory(void **state)
{
	(void)state;
	dnsnap_cache_t *c = cache(0);
	put(c, 3600, 1, 0);
	got_t g = look(c, 1, NOW + 1, 0);
	assert_int_equal(g.err, DNSNAP_OK);
	assert_int_equal(g.octet, 1);
	assert_int_equal(g.lk.cd_fallback, 1);
	assert_int_equal(g.lk.tier, DNSNAP_TIER_MEMORY);
	assert_int_equal(g.lk.stale, 0);
	assert_true(g.flags & 0x0010); /* CD echoed */
	g = look(c, 0, NOW + 1, 0);
	assert_int_equal(g.err, DNSNAP_OK);
	assert_int_equal(g.lk.cd_fallback, 0);
	assert_false(g.flags & 0x0010);
	dnsnap_cache_free(c);
}

static void test_a_cd1_entry_is_preferred_and_never_read_by_cd0(void **state)
{
	(void)state;
	dnsnap_cache_t *c = cache(0);
	put(c, 3600, 2, 1);
	/* only a CD=1 entry: a CD=0 query misses */
	got_t g = look(c, 0, NOW + 1, 86400);
	assert_int_equal(g.err, DNSNAP_ENOTFOUND);
	g = look(c, 1, NOW + 1, 0);
	assert_int_equal(g.err, DNSNAP_OK);
	assert_int_equal(g.octet, 2);
	assert_int_equal(g.lk.cd_fallback, 0);
	/* both: each query its own */
	put(c, 3600, 1, 0);
	g = look(c, 1, NOW + 1, 0);
	assert_int_equal(g.octet, 2);
	assert_int_equal(g.lk.cd_fallback, 0);
	g = look(c, 0, NOW + 1, 0);
	assert_int_equal(g.octet, 1);
	dnsnap_cache_stats_t st;
	dnsnap_cache_stats(c, &st);
	assert_int_equal(st.hits, 3);
	assert_int_equal(st.misses, 1);
	dnsnap_cache_free(c);
}

static void test_cd_fallback_in_the_lower_tier(void **state)
{
	(void)state;
	static ans_tier_t t;
	memset(&t, 0, sizeof t);
	tier_put(&t, 3600, 1, 0);
	dnsnap_cache_t *c = cache(0);
	dnsnap_cache_set_tier(c, &ans_tier_ops, &t, NULL);
	got_t g = look(c, 1, NOW + 1, 0);
	assert_int_equal(g.err, DNSNAP_OK);
	assert_int_equal(g.lk.tier, DNSNAP_TIER_LOWER);
	assert_int_equal(g.lk.cd_fallback, 1);
	assert_true(g.flags & 0x0010);
	/* a CD=1 entry in the lower tier beats the CD=0 one in memory: CD=1 is
	 * asked of both tiers first */
	tier_put(&t, 3600, 2, 1);
	put(c, 3600, 3, 0);
	g = look(c, 1, NOW + 1, 0);
	assert_int_equal(g.octet, 2);
	assert_int_equal(g.lk.tier, DNSNAP_TIER_LOWER);
	assert_int_equal(g.lk.cd_fallback, 0);
	g = look(c, 0, NOW + 1, 0);
	assert_int_equal(g.octet, 3);
	assert_int_equal(g.lk.tier, DNSNAP_TIER_MEMORY);
	dnsnap_cache_free(c);

	/* a CD=0 query with only a CD=1 entry in the lower tier misses */
	memset(&t, 0, sizeof t);
	tier_put(&t, 3600, 2, 1);
	c = cache(0);
	dnsnap_cache_set_tier(c, &ans_tier_ops, &t, NULL);
	assert_int_equal(look(c, 0, NOW + 1, 0).err, DNSNAP_ENOTFOUND);
	assert_int_equal(look(c, 1, NOW + 1, 0).err, DNSNAP_OK);
	dnsnap_cache_free(c);
}

/* A snapshot holding NAME under CD=cd only. */
static dnsnap_snap_t *snapshot(const char *file, int cd)
{
	dnsnap_cache_t *src = cache(0);
	put(src, 3600, cd ? 2 : 1, cd);
	const char *path = tmpdir_path(dir, file);
	assert_int_equal(dnsnap_snap_write(src, path, NOW, NULL, NULL), DNSNAP_OK);
	dnsnap_cache_free(src);
	dnsnap_snap_t *s;
	assert_int_equal(dnsnap_snap_open(path, &s, NULL), DNSNAP_OK);
	return s;
}

static int snap_ask(dnsnap_snap_t *s, int cd, uint16_t *flags)
{
	uint8_t qb[512], out[512];
	dnsnap_query_t q;
	ans_query_parse(qb, NAME, 1, cd, 0, 0, &q);
	size_t n;
	int err = dnsnap_snap_answer(s, &q, NOW + 1, 0, out, sizeof out, &n);
	if (err == DNSNAP_OK) {
		ans_t a;
		assert_int_equal(ans_parse(out, n, &a), 0);
		*flags = a.flags;
		return ans_last_octet(out, &a, 1);
	}
	return err;
}

static void test_cd_fallback_in_the_map(void **state)
{
	(void)state;
	dnsnap_snap_t *s0 = snapshot("cd0.snap", 0), *s1 = snapshot("cd1.snap", 1);
	dnsnap_cache_t *c = cache(0);
	dnsnap_cache_attach(c, s0, NULL);
	got_t g = look(c, 1, NOW + 1, 0);
	assert_int_equal(g.err, DNSNAP_OK);
	assert_int_equal(g.octet, 1);
	assert_int_equal(g.lk.tier, DNSNAP_TIER_LOWER);
	assert_int_equal(g.lk.cd_fallback, 1);
	assert_true(g.flags & 0x0010);
	dnsnap_cache_attach(c, s1, NULL);
	assert_int_equal(look(c, 0, NOW + 1, 0).err, DNSNAP_ENOTFOUND);
	g = look(c, 1, NOW + 1, 0);
	assert_int_equal(g.octet, 2);
	assert_int_equal(g.lk.cd_fallback, 0);
	dnsnap_cache_attach(c, NULL, NULL);
	dnsnap_cache_free(c);

	/* dnsnap_snap_answer() alone */
	uint16_t flags = 0;
	assert_int_equal(snap_ask(s0, 1, &flags), 1);
	assert_true(flags & 0x0010);
	assert_int_equal(snap_ask(s0, 0, &flags), 1);
	assert_false(flags & 0x0010);
	assert_int_equal(snap_ask(s1, 0, &flags), DNSNAP_ENOTFOUND);
	assert_int_equal(snap_ask(s1, 1, &flags), 2);
	dnsnap_snap_close(s0);
	dnsnap_snap_close(s1);
}

/* --------------------------------------------------------- stale window */

static void test_stale_window_0_is_fresh_only(void **state)
{
	(void)state;
	static ans_tier_t t;
	memset(&t, 0, sizeof t);
	dnsnap_cache_t *c = cache(1); /* serve_stale on: the lookup's window rules */
	put(c, 60, 1, 0);
	assert_int_equal(look(c, 0, NOW + 59, 0).err, DNSNAP_OK);
	assert_int_equal(look(c, 0, NOW + 60, 0).err, DNSNAP_ENOTFOUND);
	assert_int_equal(look(c, 0, NOW + 61, 0).err, DNSNAP_ENOTFOUND);
	dnsnap_cache_free(c);
	tier_put(&t, 60, 1, 0);
	c = cache(1);
	dnsnap_cache_set_tier(c, &ans_tier_ops, &t, NULL);
	assert_int_equal(look(c, 0, NOW + 59, 0).err, DNSNAP_OK);
	assert_int_equal(look(c, 0, NOW + 61, 0).err, DNSNAP_ENOTFOUND);
	dnsnap_cache_stats_t st;
	dnsnap_cache_stats(c, &st);
	assert_int_equal(st.stale_served, 0);
	dnsnap_cache_free(c);
}

static void test_stale_window_serves_within_not_past_it(void **state)
{
	(void)state;
	for (int lower = 0; lower < 2; lower++) {
		static ans_tier_t t;
		memset(&t, 0, sizeof t);
		dnsnap_cache_t *c = cache(0); /* serve_stale off: the lookup's window rules */
		if (lower) {
			tier_put(&t, 60, 1, 0);
			dnsnap_cache_set_tier(c, &ans_tier_ops, &t, NULL);
		} else {
			put(c, 60, 1, 0);
		}
		/* expired at NOW + 60; a window of 100 s */
		got_t g = look(c, 0, NOW + 60, 100);
		assert_int_equal(g.err, DNSNAP_OK);
		assert_int_equal(g.lk.stale, 1);
		assert_int_equal(g.lk.tier, lower ? DNSNAP_TIER_LOWER : DNSNAP_TIER_MEMORY);
		assert_int_equal(g.ttl, DNSNAP_STALE_TTL);
		g = look(c, 0, NOW + 159, 100);
		assert_int_equal(g.err, DNSNAP_OK);
		assert_int_equal(g.lk.stale, 1);
		assert_int_equal(look(c, 0, NOW + 160, 100).err, DNSNAP_ENOTFOUND);
		assert_int_equal(look(c, 0, NOW + 100000, 100).err, DNSNAP_ENOTFOUND);
		/* fresh, with a window: not stale */
		g = look(c, 0, NOW + 10, 100);
		assert_int_equal(g.err, DNSNAP_OK);
		assert_int_equal(g.lk.stale, 0);
		assert_int_equal(g.ttl, 50);
		/* the window is capped at 7 days (RFC 8767) */
		assert_int_equal(look(c, 0, NOW + 60 + 604799, 0xffffffffu).err, DNSNAP_OK);
		assert_int_equal(look(c, 0, NOW + 60 + 604800, 0xffffffffu).err,
				 DNSNAP_ENOTFOUND);
		dnsnap_cache_stats_t st;
		dnsnap_cache_stats(c, &st);
		assert_int_equal(st.hits, 4);
		assert_int_equal(st.stale_served, 3);
		assert_int_equal(st.misses, 3);
		dnsnap_cache_free(c);
	}
}

static void test_dnsnap_cache_answer_is_lookup_with_the_cache_window(void **state)
{
	(void)state;
	for (int on = 0; on < 2; on++) {
		dnsnap_cache_opts_t o;
		dnsnap_cache_opts_default(&o);
		o.serve_stale = on;
		o.stale_window = 100;
		dnsnap_cache_t *c;
		assert_int_equal(dnsnap_cache_new(&o, &c), DNSNAP_OK);
		put(c, 60, 1, 0);
		uint8_t qb[512], out[512];
		dnsnap_query_t q;
		ans_query_parse(qb, NAME, 1, 1, 0, 0, &q); /* CD=1: the fallback too */
		size_t n;
		assert_int_equal(dnsnap_cache_answer(c, &q, NOW + 159, 0, out, sizeof out, &n),
				 on ? DNSNAP_OK : DNSNAP_ENOTFOUND);
		assert_int_equal(dnsnap_cache_answer(c, &q, NOW + 160, 0, out, sizeof out, &n),
				 DNSNAP_ENOTFOUND);
		dnsnap_cache_free(c);
	}
}

/* ---------------------------------------------------------------- order */

static void test_fresh_lower_tier_beats_stale_memory(void **state)
{
	(void)state;
	static ans_tier_t t;
	memset(&t, 0, sizeof t);
	dnsnap_cache_t *c = cache(0);
	put(c, 60, 1, 0);
	tier_put(&t, 3600, 2, 0);
	dnsnap_cache_set_tier(c, &ans_tier_ops, &t, NULL);
	/* both fresh: memory */
	got_t g = look(c, 0, NOW + 10, 3600);
	assert_int_equal(g.octet, 1);
	assert_int_equal(g.lk.tier, DNSNAP_TIER_MEMORY);
	/* memory stale, map fresh: the map */
	g = look(c, 0, NOW + 100, 3600);
	assert_int_equal(g.err, DNSNAP_OK);
	assert_int_equal(g.octet, 2);
	assert_int_equal(g.lk.tier, DNSNAP_TIER_LOWER);
	assert_int_equal(g.lk.stale, 0);
	assert_int_equal(g.ttl, 3500);
	dnsnap_cache_free(c);

	/* both stale: memory */
	memset(&t, 0, sizeof t);
	c = cache(0);
	put(c, 60, 1, 0);
	tier_put(&t, 80, 2, 0);
	dnsnap_cache_set_tier(c, &ans_tier_ops, &t, NULL);
	g = look(c, 0, NOW + 100, 3600);
	assert_int_equal(g.octet, 1);
	assert_int_equal(g.lk.tier, DNSNAP_TIER_MEMORY);
	assert_int_equal(g.lk.stale, 1);
	/* memory past the window, the map within: the map, stale */
	g = look(c, 0, NOW + 100, 30);
	assert_int_equal(g.err, DNSNAP_OK);
	assert_int_equal(g.octet, 2);
	assert_int_equal(g.lk.tier, DNSNAP_TIER_LOWER);
	assert_int_equal(g.lk.stale, 1);
	dnsnap_cache_free(c);
}

static void test_fresh_cd0_beats_stale_cd1(void **state)
{
	(void)state;
	dnsnap_cache_t *c = cache(0);
	put(c, 60, 2, 1);
	put(c, 3600, 1, 0);
	got_t g = look(c, 1, NOW + 100, 3600);
	assert_int_equal(g.err, DNSNAP_OK);
	assert_int_equal(g.octet, 1);
	assert_int_equal(g.lk.cd_fallback, 1);
	assert_int_equal(g.lk.stale, 0);
	dnsnap_cache_free(c);
	/* without the CD=0 entry: the stale CD=1 one */
	c = cache(0);
	put(c, 60, 2, 1);
	g = look(c, 1, NOW + 100, 3600);
	assert_int_equal(g.err, DNSNAP_OK);
	assert_int_equal(g.octet, 2);
	assert_int_equal(g.lk.cd_fallback, 0);
	assert_int_equal(g.lk.stale, 1);
	/* stale CD=0 only, for a CD=1 query: the fallback, stale */
	dnsnap_cache_free(c);
	c = cache(0);
	put(c, 60, 1, 0);
	g = look(c, 1, NOW + 100, 3600);
	assert_int_equal(g.err, DNSNAP_OK);
	assert_int_equal(g.lk.cd_fallback, 1);
	assert_int_equal(g.lk.stale, 1);
	dnsnap_cache_free(c);
}

static void test_lookup_rejects_bad_arguments(void **state)
{
	(void)state;
	dnsnap_cache_t *c = cache(0);
	uint8_t qb[512], out[512];
	dnsnap_query_t q;
	ans_query_parse(qb, NAME, 1, 0, 0, 0, &q);
	dnsnap_lookup_t lk = { .now = NOW };
	size_t n;
	assert_int_equal(dnsnap_cache_lookup(NULL, &q, &lk, out, sizeof out, &n), DNSNAP_EINVAL);
	assert_int_equal(dnsnap_cache_lookup(c, NULL, &lk, out, sizeof out, &n), DNSNAP_EINVAL);
	assert_int_equal(dnsnap_cache_lookup(c, &q, NULL, out, sizeof out, &n), DNSNAP_EINVAL);
	assert_int_equal(dnsnap_cache_lookup(c, &q, &lk, NULL, sizeof out, &n), DNSNAP_EINVAL);
	assert_int_equal(dnsnap_cache_lookup(c, &q, &lk, out, sizeof out, NULL), DNSNAP_EINVAL);
	/* too small for header and question: ENOSPC, neither hit nor miss */
	put(c, 3600, 1, 0);
	assert_int_equal(dnsnap_cache_lookup(c, &q, &lk, out, 12, &n), DNSNAP_ENOSPC);
	dnsnap_cache_stats_t st;
	dnsnap_cache_stats(c, &st);
	assert_int_equal(st.hits + st.misses, 0);
	dnsnap_cache_free(c);
}

static int setup(void **state)
{
	(void)state;
	return tmpdir_make(dir, sizeof dir, "test-lookup");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cd1_query_is_answered_from_the_cd0_entry_in_memory),
		cmocka_unit_test(test_a_cd1_entry_is_preferred_and_never_read_by_cd0),
		cmocka_unit_test(test_cd_fallback_in_the_lower_tier),
		cmocka_unit_test(test_cd_fallback_in_the_map),
		cmocka_unit_test(test_stale_window_0_is_fresh_only),
		cmocka_unit_test(test_stale_window_serves_within_not_past_it),
		cmocka_unit_test(test_dnsnap_cache_answer_is_lookup_with_the_cache_window),
		cmocka_unit_test(test_fresh_lower_tier_beats_stale_memory),
		cmocka_unit_test(test_fresh_cd0_beats_stale_cd1),
		cmocka_unit_test(test_lookup_rejects_bad_arguments),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
