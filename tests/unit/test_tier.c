/*
 * test_tier.c: the lower tier under a cache (issue 12, item 10): one
 * function table (dnsnap_tier_ops_t), the snapshot one implementation of it.
 *
 * - a tier of the test's own (an array, tests/helpers/ans.c) answers what
 *   memory misses, reported as DNSNAP_TIER_LOWER, with the cache's TTL policy;
 *   memory answers first; get() errors are misses; detaching;
 * - dnsnap_cache_set_tier() swaps tiers while two threads look up: every
 *   lookup is answered (the old tier or the new, never none), and when the
 *   call returns no get() is running in the old tier;
 * - dnsnap_snap_tier and dnsnap_cache_attach(): a snapshot under a cache;
 *   dnsnap_snap_answer() serves with the default max_ttl, a cache under which
 *   the snapshot is attached with its own.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "ans.h"
#include "dnsnap.h"
#include "tmpdir.h"
#include "wb.h"

#define NOW 1700000000u

static dnsnap_encoded_t scratch; /* large: static */
static char dir[64];

/* Look @p name / A up in @p c at @p now (stale window @p window). Returns
 * the code; on DNSNAP_OK *octet is the A's last byte and *lk what answered. */
static int look(dnsnap_cache_t *c, const char *name, uint32_t now, uint32_t window,
		dnsnap_lookup_t *lk, int *octet, uint32_t *ttl)
{
	uint8_t qb[512], out[1232];
	dnsnap_query_t q;
	ans_query_parse(qb, name, 1, 0, 0, 0, &q);
	*lk = (dnsnap_lookup_t){ .now = now, .stale_window = window };
	size_t n;
	int err = dnsnap_cache_lookup(c, &q, lk, out, sizeof out, &n);
	if (err == DNSNAP_OK) {
		ans_t a;
		assert_int_equal(ans_parse(out, n, &a), 0);
		assert_int_equal(a.n, 1);
		if (octet != NULL)
			*octet = ans_last_octet(out, &a, 1);
		if (ttl != NULL)
			*ttl = a.rr[0].ttl;
	}
	return err;
}

static void test_a_tier_of_our_own_answers_what_memory_misses(void **state)
{
	(void)state;
	static ans_tier_t t;
	memset(&t, 0, sizeof t);
	wb_t w;
	ans_response_a(&w, "low.tier.example", 3600, 7, 0);
	ans_tier_add(&t, w.b, w.n, NOW);
	ans_response_a(&w, "both.tier.example", 3600, 8, 0);
	ans_tier_add(&t, w.b, w.n, NOW);

	dnsnap_cache_t *c;
	assert_int_equal(dnsnap_cache_new(NULL, &c), DNSNAP_OK);
	ans_response_a(&w, "both.tier.example", 3600, 9, 0);
	assert_int_equal(dnsnap_cache_insert(c, w.b, w.n, NOW, NULL, 0, &scratch, NULL),
			 DNSNAP_OK);
	void *old = &old;
	dnsnap_cache_set_tier(c, &ans_tier_ops, &t, &old);
	assert_null(old);

	dnsnap_lookup_t lk;
	int octet = 0;
	uint32_t ttl = 0;
	assert_int_equal(look(c, "low.tier.example", NOW + 10, 0, &lk, &octet, &ttl), DNSNAP_OK);
	assert_int_equal(lk.tier, DNSNAP_TIER_LOWER);
	assert_int_equal(lk.stale, 0);
	assert_int_equal(lk.cd_fallback, 0);
	assert_int_equal(octet, 7);
	assert_int_equal(ttl, 3590);
	/* memory first */
	assert_int_equal(look(c, "both.tier.example", NOW + 10, 0, &lk, &octet, NULL), DNSNAP_OK);
	assert_int_equal(lk.tier, DNSNAP_TIER_MEMORY);
	assert_int_equal(octet, 9);
	assert_int_equal(look(c, "none.tier.example", NOW + 10, 0, &lk, NULL, NULL),
			 DNSNAP_ENOTFOUND);
	/* an expired lower-tier entry is a miss */
	assert_int_equal(look(c, "low.tier.example", NOW + 3600, 0, &lk, NULL, NULL),
			 DNSNAP_ENOTFOUND);
	dnsnap_cache_stats_t st;
	dnsnap_cache_stats(c, &st);
	assert_int_equal(st.hits, 2);
	assert_int_equal(st.misses, 2);
	assert_int_equal(st.entries, 1); /* a lower-tier hit is not copied up */

	/* any error of get() is a miss (a store that cannot be reached) */
	t.fail = DNSNAP_EINVAL;
	assert_int_equal(look(c, "low.tier.example", NOW + 10, 0, &lk, NULL, NULL),
			 DNSNAP_ENOTFOUND);
	t.fail = DNSNAP_ENOMEM;
	assert_int_equal(look(c, "low.tier.example", NOW + 10, 0, &lk, NULL, NULL),
			 DNSNAP_ENOTFOUND);
	t.fail = 0;

	/* detach: the old one comes back, lookups no longer reach it */
	unsigned long gets = atomic_load(&t.gets);
	dnsnap_cache_set_tier(c, NULL, &t, &old);
	assert_ptr_equal(old, &t);
	assert_int_equal(look(c, "low.tier.example", NOW + 10, 0, &lk, NULL, NULL),
			 DNSNAP_ENOTFOUND);
	assert_int_equal(atomic_load(&t.gets), gets);
	dnsnap_cache_set_tier(c, NULL, NULL, &old);
	assert_null(old);
	dnsnap_cache_free(c);
}

static void test_lower_tier_answers_follow_the_cache_ttl_policy(void **state)
{
	(void)state;
	static ans_tier_t t;
	memset(&t, 0, sizeof t);
	wb_t w;
	/* at the clock: the time rule judges at the later of the lookup's now
	 * and the clock */
	uint32_t now = (uint32_t)time(NULL);
	ans_response_a(&w, "long.tier.example", 7200, 1, 0);
	ans_tier_add(&t, w.b, w.n, now);
	ans_response_a(&w, "capped.tier.example", 1200, 2, 0);
	ans_tier_add(&t, w.b, w.n, now);
	dnsnap_cache_opts_t o;
	dnsnap_cache_opts_default(&o);
	o.max_ttl = 1000;
	dnsnap_cache_t *c;
	assert_int_equal(dnsnap_cache_new(&o, &c), DNSNAP_OK);
	dnsnap_cache_set_tier(c, &ans_tier_ops, &t, NULL);
	dnsnap_lookup_t lk;
	uint32_t ttl = 0;
	/* within max_ttl + DNSNAP_TIME_SKEW_S: served, its TTL capped */
	assert_int_equal(look(c, "capped.tier.example", now + 5, 0, &lk, NULL, &ttl), DNSNAP_OK);
	assert_int_equal(lk.tier, DNSNAP_TIER_LOWER);
	assert_int_equal(ttl, 995);
	/* past it: refused by the time rule (it would stay fresh 7200 s, longer
	 * than this cache keeps anything), counted */
	assert_int_equal(look(c, "long.tier.example", now + 5, 0, &lk, NULL, &ttl),
			 DNSNAP_ENOTFOUND);
	assert_int_equal(dnsnap_cache_refused_time(c), 1);
	dnsnap_cache_free(c);

	o.max_ttl = 0; /* no cap */
	o.min_ttl = 0;
	assert_int_equal(dnsnap_cache_new(&o, &c), DNSNAP_OK);
	dnsnap_cache_set_tier(c, &ans_tier_ops, &t, NULL);
	assert_int_equal(look(c, "long.tier.example", now + 5, 0, &lk, NULL, &ttl), DNSNAP_OK);
	assert_int_equal(ttl, 7195);
	dnsnap_cache_free(c);
}

/* ------------------------------------------------------ swaps and threads */

typedef struct swap_run {
	dnsnap_cache_t *c;
	_Atomic int stop;
	_Atomic unsigned long lookups, misses, wrong;
} swap_run_t;

static void *looker(void *arg)
{
	swap_run_t *r = arg;
	uint8_t qb[512], out[512];
	dnsnap_query_t q;
	ans_query_parse(qb, "swap.tier.example", 1, 0, 0, 0, &q);
	while (!atomic_load(&r->stop)) {
		dnsnap_lookup_t lk = { .now = NOW + 1 };
		size_t n;
		int err = dnsnap_cache_lookup(r->c, &q, &lk, out, sizeof out, &n);
		if (err != DNSNAP_OK) {
			atomic_fetch_add(&r->misses, 1);
		} else {
			ans_t a;
			int octet = ans_parse(out, n, &a) == 0 ? ans_last_octet(out, &a, 1) : -1;
			if ((octet != 1 && octet != 2) || lk.tier != DNSNAP_TIER_LOWER)
				atomic_fetch_add(&r->wrong, 1);
		}
		atomic_fetch_add(&r->lookups, 1);
	}
	return NULL;
}

static void test_set_tier_swaps_while_two_threads_look_up(void **state)
{
	(void)state;
	static ans_tier_t t[2];
	memset(t, 0, sizeof t);
	wb_t w;
	for (int i = 0; i < 2; i++) {
		ans_response_a(&w, "swap.tier.example", 3600, (unsigned)i + 1, 0);
		ans_tier_add(&t[i], w.b, w.n, NOW);
		t[i].spin = 2000; /* lookups stay in get() a while */
	}
	static swap_run_t r;
	memset(&r, 0, sizeof r);
	assert_int_equal(dnsnap_cache_new(NULL, &r.c), DNSNAP_OK);
	dnsnap_cache_set_tier(r.c, &ans_tier_ops, &t[0], NULL);
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, looker, &r), 0);
	unsigned swaps = 0, busy_after = 0;
	while (swaps < 2000 || atomic_load(&r.lookups) < 20000) {
		void *old;
		ans_tier_t *next = &t[(swaps + 1) % 2];
		dnsnap_cache_set_tier(r.c, &ans_tier_ops, next, &old);
		assert_ptr_equal(old, &t[swaps % 2]);
		/* no lookup is in the old tier once the call returns */
		if (atomic_load(&((ans_tier_t *)old)->inside) != 0)
			busy_after++;
		swaps++;
	}
	atomic_store(&r.stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(busy_after, 0);
	assert_int_equal(atomic_load(&r.misses), 0);
	assert_int_equal(atomic_load(&r.wrong), 0);
	dnsnap_cache_stats_t st;
	dnsnap_cache_stats(r.c, &st);
	assert_int_equal(st.hits, atomic_load(&r.lookups));
	dnsnap_cache_free(r.c);
}

/* ---------------------------------------------------------- the snapshot */

static void test_attach_puts_a_snapshot_under_a_cache_as_the_map_tier(void **state)
{
	(void)state;
	dnsnap_cache_t *src;
	assert_int_equal(dnsnap_cache_new(NULL, &src), DNSNAP_OK);
	wb_t w;
	/* a 2-day A: the policy keeps the entry one day (max_ttl 86400) */
	ans_response_a(&w, "map.tier.example", 172800, 5, 0);
	assert_int_equal(dnsnap_cache_insert(src, w.b, w.n, NOW, NULL, 0, &scratch, NULL),
			 DNSNAP_OK);
	const char *path = tmpdir_path(dir, "t.snap");
	assert_int_equal(dnsnap_snap_write(src, path, NOW, NULL, NULL), DNSNAP_OK);
	dnsnap_cache_free(src);
	dnsnap_snap_t *s;
	assert_int_equal(dnsnap_snap_open(path, &s, NULL), DNSNAP_OK);

	assert_string_equal(dnsnap_snap_tier.name, "map");
	uint8_t key[DNSNAP_KEY_MAX], buf[4096];
	uint8_t qb[512];
	dnsnap_query_t q;
	ans_query_parse(qb, "map.tier.example", 1, 0, 0, 0, &q);
	memcpy(key, q.key, q.key_len);
	size_t len = 0;
	assert_int_equal(dnsnap_snap_tier.get(s, key, q.key_len, buf, sizeof buf, &len),
			 DNSNAP_OK);
	assert_true(len > DNSNAP_ENTRY_HDR);
	key[0] ^= 1;
	assert_int_equal(dnsnap_snap_tier.get(s, key, q.key_len, buf, sizeof buf, &len),
			 DNSNAP_ENOTFOUND);

	/* dnsnap_snap_answer(): the default max_ttl */
	uint8_t out[512];
	size_t n;
	ans_t a;
	assert_int_equal(dnsnap_snap_answer(s, &q, NOW + 10, 0, out, sizeof out, &n), DNSNAP_OK);
	assert_int_equal(ans_parse(out, n, &a), 0);
	assert_int_equal(a.rr[0].ttl, 86390);

	/* attached under a cache without a cap: the record's own TTL */
	dnsnap_cache_opts_t o;
	dnsnap_cache_opts_default(&o);
	o.max_ttl = 0;
	dnsnap_cache_t *c;
	assert_int_equal(dnsnap_cache_new(&o, &c), DNSNAP_OK);
	dnsnap_snap_t *prev = (dnsnap_snap_t *)&prev;
	dnsnap_cache_attach(c, s, &prev);
	assert_null(prev);
	dnsnap_lookup_t lk;
	int octet = 0;
	uint32_t ttl = 0;
	assert_int_equal(look(c, "map.tier.example", NOW + 10, 0, &lk, &octet, &ttl), DNSNAP_OK);
	assert_int_equal(lk.tier, DNSNAP_TIER_LOWER);
	assert_int_equal(octet, 5);
	assert_int_equal(ttl, 172790);
	/* attach is set_tier with dnsnap_snap_tier: either swaps out the other */
	void *old;
	dnsnap_cache_set_tier(c, &dnsnap_snap_tier, s, &old);
	assert_ptr_equal(old, s);
	assert_int_equal(look(c, "map.tier.example", NOW + 10, 0, &lk, NULL, NULL), DNSNAP_OK);
	dnsnap_cache_attach(c, NULL, &prev);
	assert_ptr_equal(prev, s);
	assert_int_equal(look(c, "map.tier.example", NOW + 10, 0, &lk, NULL, NULL),
			 DNSNAP_ENOTFOUND);
	dnsnap_snap_close(s);
	dnsnap_cache_free(c);
}

static int setup(void **state)
{
	(void)state;
	return tmpdir_make(dir, sizeof dir, "test-tier");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_tier_of_our_own_answers_what_memory_misses),
		cmocka_unit_test(test_lower_tier_answers_follow_the_cache_ttl_policy),
		cmocka_unit_test(test_set_tier_swaps_while_two_threads_look_up),
		cmocka_unit_test(test_attach_puts_a_snapshot_under_a_cache_as_the_map_tier),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
