/*
 * test_snap_pin.c: the copy-free snapshot writer's contract with the cache
 * (engine/cache_internal.h): a shard's lock is held only while its slot
 * array is copied, the entries the copy names stay readable while the cache
 * is pinned whatever happens to them, and what was removed meanwhile is
 * freed at the last unpin. Run under make asan, a use after free or a leak
 * fails it; under make tsan, a race.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "cache_internal.h"
#include "dnsnap.h"
#include "tmpdir.h"
#include "wb.h"

#define NOW 1700000000u
#define NAMES 3000

/* A NOERROR response for name/A with n addresses 10.0.x.i. */
static void response_a(wb_t *w, const char *name, uint32_t ttl, unsigned n, unsigned x)
{
	put_header(w, 0x8180, 1, n, 0, 0);
	put_name(w, name);
	put_u16(w, 1);
	put_u16(w, 1);
	for (unsigned i = 0; i < n; i++) {
		put_ptr(w, 12);
		size_t rl = put_fixed(w, 1, 1, ttl);
		put_u8(w, 10);
		put_u8(w, 0);
		put_u8(w, x & 0xff);
		put_u8(w, i);
		end_rdata(w, rl);
	}
}

static int put_name_a(dnsnap_cache_t *c, dnsnap_encoded_t *scratch, const char *prefix,
		      unsigned i, unsigned x)
{
	char name[64];
	wb_t w = { .n = 0 };
	snprintf(name, sizeof name, "%s%u.example.com", prefix, i);
	response_a(&w, name, 3600, 1 + i % 3, x);
	return dnsnap_cache_insert(c, w.b, w.n, NOW, NULL, 0, scratch, NULL);
}

static int remove_name(dnsnap_cache_t *c, dnsnap_encoded_t *scratch, const char *prefix,
		       unsigned i)
{
	char name[64];
	wb_t w = { .n = 0 };
	snprintf(name, sizeof name, "%s%u.example.com", prefix, i);
	response_a(&w, name, 3600, 1, 0);
	int err = dnsnap_msg_encode(w.b, w.n, NOW, NULL, 0, scratch, NULL);
	if (err != DNSNAP_OK)
		return err;
	return dnsnap_cache_remove(c, scratch->key, scratch->key_len);
}

static dnsnap_cache_t *make(size_t max_entries)
{
	dnsnap_cache_opts_t o;
	dnsnap_cache_opts_default(&o);
	o.max_entries = max_entries;
	dnsnap_cache_t *c = NULL;
	assert_int_equal(dnsnap_cache_new(&o, &c), DNSNAP_OK);
	return c;
}

/* What a ref named when it was taken: its key and entry, copied. */
typedef struct seen {
	uint8_t *bytes;
	size_t key_len, entry_len;
} seen_t;

typedef struct held {
	dnsnap_refs_t run[DNSNAP_SHARDS];
	seen_t *seen[DNSNAP_SHARDS];
	size_t n;
} held_t;

static void take_refs(dnsnap_cache_t *c, held_t *h)
{
	dnsnap_slots_t tmp = { 0 };
	memset(h, 0, sizeof *h);
	for (unsigned k = 0; k < DNSNAP_SHARDS; k++) {
		assert_int_equal(dnsnap__cache_refs(c, k, NOW, &tmp, &h->run[k]), DNSNAP_OK);
		h->seen[k] = calloc(h->run[k].n + 1, sizeof *h->seen[k]);
		assert_non_null(h->seen[k]);
		for (size_t i = 0; i < h->run[k].n; i++) {
			dnsnap_refval_t v;
			dnsnap__ref_get(&h->run[k].r[i], &v);
			seen_t *s = &h->seen[k][i];
			s->key_len = v.key_len;
			s->entry_len = v.entry_len;
			s->bytes = malloc(v.key_len + v.entry_len);
			assert_non_null(s->bytes);
			memcpy(s->bytes, v.key, v.key_len);
			memcpy(s->bytes + v.key_len, v.entry, v.entry_len);
		}
		h->n += h->run[k].n;
	}
	free(tmp.slot);
}

/* Every ref still reads the bytes it read when taken. */
static void check_and_free_refs(held_t *h)
{
	for (unsigned k = 0; k < DNSNAP_SHARDS; k++) {
		for (size_t i = 0; i < h->run[k].n; i++) {
			dnsnap_refval_t v;
			dnsnap__ref_get(&h->run[k].r[i], &v);
			seen_t *s = &h->seen[k][i];
			assert_int_equal(v.key_len, s->key_len);
			assert_int_equal(v.entry_len, s->entry_len);
			assert_memory_equal(v.key, s->bytes, s->key_len);
			assert_memory_equal(v.entry, s->bytes + s->key_len, s->entry_len);
			free(s->bytes);
		}
		free(h->seen[k]);
		free(h->run[k].r);
	}
}

/* The changes a snapshot must survive, made by another thread while the
 * refs are held: if taking the refs left a shard locked, it never ends. */
typedef struct churn {
	dnsnap_cache_t *c;
	int done;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int failed;
} churn_t;

static void *churn(void *arg)
{
	churn_t *ch = arg;
	dnsnap_encoded_t *scratch = malloc(sizeof *scratch);
	int failed = scratch == NULL;
	for (unsigned i = 0; i < NAMES && !failed; i++) {
		if (i % 3 == 0)      /* removed */
			failed |= remove_name(ch->c, scratch, "n", i) != DNSNAP_OK;
		else if (i % 3 == 1) /* replaced by a later response */
			failed |= put_name_a(ch->c, scratch, "n", i, i + 7) != DNSNAP_OK;
		failed |= put_name_a(ch->c, scratch, "new", i, i) != DNSNAP_OK;
	}
	free(scratch);
	pthread_mutex_lock(&ch->mu);
	ch->failed = failed;
	ch->done = 1;
	pthread_cond_signal(&ch->cv);
	pthread_mutex_unlock(&ch->mu);
	return NULL;
}

/* Wait for the churn thread; a minute is a hang (a shard left locked), not a
 * slow machine. */
static void run_churn(dnsnap_cache_t *c)
{
	churn_t ch = { .c = c };
	pthread_mutex_init(&ch.mu, NULL);
	pthread_cond_init(&ch.cv, NULL);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, churn, &ch), 0);
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 60;
	int rc = 0;
	pthread_mutex_lock(&ch.mu);
	while (!ch.done && rc == 0)
		rc = pthread_cond_timedwait(&ch.cv, &ch.mu, &until);
	int done = ch.done;
	pthread_mutex_unlock(&ch.mu);
	if (!done)
		fail_msg("inserts and removals did not finish while the refs were held");
	pthread_join(th, NULL);
	assert_false(ch.failed);
	pthread_cond_destroy(&ch.cv);
	pthread_mutex_destroy(&ch.mu);
}

static void test_refs_stay_readable_while_their_entries_are_removed_or_replaced(void **state)
{
	(void)state;
	dnsnap_cache_t *c = make(0);
	dnsnap_encoded_t *scratch = malloc(sizeof *scratch);
	assert_non_null(scratch);
	for (unsigned i = 0; i < NAMES; i++)
		assert_int_equal(put_name_a(c, scratch, "n", i, i), DNSNAP_OK);
	held_t *h = malloc(sizeof *h);
	assert_non_null(h);

	dnsnap__cache_pin(c);
	take_refs(c, h);
	assert_int_equal(h->n, NAMES);
	run_churn(c); /* the shards are free while the refs are held */
	/* 1000 removed and 1000 replaced: kept for the pinned writer */
	assert_int_equal(dnsnap__cache_deferred(c), 2 * NAMES / 3);
	check_and_free_refs(h);
	dnsnap__cache_unpin(c);
	assert_int_equal(dnsnap__cache_deferred(c), 0);

	dnsnap_cache_stats_t st;
	dnsnap_cache_stats(c, &st);
	assert_int_equal(st.entries, NAMES - NAMES / 3 + NAMES);
	free(h);
	free(scratch);
	dnsnap_cache_free(c);
}

static void test_evictions_while_pinned_are_deferred_then_freed(void **state)
{
	(void)state;
	dnsnap_cache_t *c = make(1600);
	dnsnap_encoded_t *scratch = malloc(sizeof *scratch);
	assert_non_null(scratch);
	for (unsigned i = 0; i < 1600; i++)
		put_name_a(c, scratch, "n", i, i);
	held_t *h = malloc(sizeof *h);
	assert_non_null(h);
	dnsnap_cache_stats_t before, after;
	dnsnap_cache_stats(c, &before);

	dnsnap__cache_pin(c);
	dnsnap__cache_pin(c); /* two writers: only the last unpin frees */
	take_refs(c, h);
	for (unsigned i = 0; i < NAMES; i++)
		assert_int_equal(put_name_a(c, scratch, "new", i, i), DNSNAP_OK);
	dnsnap_cache_stats(c, &after);
	size_t evicted = (size_t)(after.evictions - before.evictions);
	assert_int_equal(evicted, before.entries + NAMES - after.entries);
	assert_true(evicted > NAMES / 2);
	assert_int_equal(dnsnap__cache_deferred(c), evicted);
	dnsnap__cache_unpin(c);
	assert_int_equal(dnsnap__cache_deferred(c), evicted);
	check_and_free_refs(h);
	dnsnap__cache_unpin(c);
	assert_int_equal(dnsnap__cache_deferred(c), 0);
	free(h);
	free(scratch);
	dnsnap_cache_free(c);
}

/* Writes while another thread inserts, replaces and removes, the shards
 * copied in small chunks: each file checks (keys strictly increasing: an
 * entry copied twice is written once), holds every entry that stayed
 * throughout (none moved past the copy unseen), and the cache frees what
 * was removed. */
typedef struct churner {
	dnsnap_cache_t *c;
	_Atomic int stop;
	int failed;
	unsigned ops;
} churner_t;

static void *churn_on(void *arg)
{
	churner_t *ch = arg;
	dnsnap_encoded_t *scratch = malloc(sizeof *scratch);
	ch->failed = scratch == NULL;
	for (unsigned i = 0; !ch->failed && !atomic_load(&ch->stop); i++) {
		unsigned k = i % 20000;
		if (i % 2)
			remove_name(ch->c, scratch, "churn", k);
		else
			ch->failed |= put_name_a(ch->c, scratch, "churn", k, i) != DNSNAP_OK;
		if (i % 4 == 0)
			ch->failed |= put_name_a(ch->c, scratch, "late", i, i) != DNSNAP_OK;
		ch->ops = i;
	}
	free(scratch);
	return NULL;
}

static int count_stable(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
			size_t entry_len)
{
	(void)entry;
	(void)entry_len;
	/* keys are reversed names: com, example, then the first label */
	static const uint8_t pre[] = "\3com\7example";
	size_t pl = sizeof pre - 1;
	if (key_len > pl + 7 && memcmp(key, pre, pl) == 0 && memcmp(key + pl + 1, "stable", 6) == 0)
		++*(size_t *)arg;
	return 0;
}

static void test_writes_amid_inserts_and_removals_keep_every_stable_entry(void **state)
{
	(void)state;
	char dir[256];
	assert_int_equal(tmpdir_make(dir, sizeof dir, "snap_pin"), 0);
	dnsnap_cache_t *c = make(0);
	dnsnap_encoded_t *scratch = malloc(sizeof *scratch);
	assert_non_null(scratch);
	for (unsigned i = 0; i < 20000; i++) {
		assert_int_equal(put_name_a(c, scratch, "stable", i, i), DNSNAP_OK);
		assert_int_equal(put_name_a(c, scratch, "churn", i, i), DNSNAP_OK);
	}
	size_t chunk = dnsnap__copy_chunk;
	dnsnap__copy_chunk = 7; /* entries move between the chunks */
	churner_t ch = { .c = c };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, churn_on, &ch), 0);
	const char *path = tmpdir_path(dir, "a.snap");
	for (int round = 0; round < 6; round++) {
		dnsnap_snap_write_stats_t st;
		dnsnap_diag_t d = { 0 };
		assert_int_equal(dnsnap_snap_write(c, path, NOW, &st, &d), DNSNAP_OK);
		dnsnap_snap_t *s;
		assert_int_equal(dnsnap_snap_open(path, &s, &d), DNSNAP_OK);
		assert_int_equal(dnsnap_snap_verify(s, NULL, &d), DNSNAP_OK);
		size_t stable = 0;
		dnsnap_scan_stats_t ss;
		assert_int_equal(dnsnap_snap_scan(s, NULL, 0, count_stable, &stable, &ss, &d),
				 DNSNAP_OK);
		assert_int_equal(stable, 20000);
		dnsnap_snap_close(s);
	}
	atomic_store(&ch.stop, 1);
	pthread_join(th, NULL);
	dnsnap__copy_chunk = chunk;
	assert_false(ch.failed);
	assert_int_equal(dnsnap__cache_deferred(c), 0);
	free(scratch);
	dnsnap_cache_free(c);
	tmpdir_remove(dir);
}

/* Between two chunks of a shard's copy: remove some names and put others
 * back, so that entries shift back across the copy's cursor. */
typedef struct mover {
	pthread_mutex_t mu;      /* the writer's two threads both call it */
	dnsnap_cache_t *c;
	dnsnap_encoded_t *scratch;
	unsigned next;
	int failed;
} mover_t;

static void move_some(void *arg)
{
	mover_t *m = arg;
	pthread_mutex_lock(&m->mu);
	for (int j = 0; j < 16; j++, m->next++) {
		unsigned k = m->next % 20000;
		if ((m->next / 20000) % 2 == 0)
			remove_name(m->c, m->scratch, "churn", k);
		else
			m->failed |= put_name_a(m->c, m->scratch, "churn", k, m->next) != DNSNAP_OK;
	}
	pthread_mutex_unlock(&m->mu);
}

static void test_entries_moved_while_a_shard_is_copied_are_written_once(void **state)
{
	(void)state;
	char dir[256];
	assert_int_equal(tmpdir_make(dir, sizeof dir, "snap_pin"), 0);
	dnsnap_cache_t *c = make(0);
	dnsnap_encoded_t *scratch = malloc(sizeof *scratch);
	assert_non_null(scratch);
	for (unsigned i = 0; i < 20000; i++) {
		assert_int_equal(put_name_a(c, scratch, "stable", i, i), DNSNAP_OK);
		assert_int_equal(put_name_a(c, scratch, "churn", i, i), DNSNAP_OK);
	}
	mover_t m = { .mu = PTHREAD_MUTEX_INITIALIZER, .c = c, .scratch = malloc(sizeof *scratch) };
	assert_non_null(m.scratch);
	size_t chunk = dnsnap__copy_chunk;
	dnsnap__copy_chunk = 8;
	dnsnap__copy_hook = move_some;
	dnsnap__copy_hook_arg = &m;
	const char *path = tmpdir_path(dir, "a.snap");
	for (int round = 0; round < 2; round++) {
		dnsnap_snap_write_stats_t st;
		dnsnap_diag_t d = { 0 };
		assert_int_equal(dnsnap_snap_write(c, path, NOW, &st, &d), DNSNAP_OK);
		dnsnap_snap_t *s;
		assert_int_equal(dnsnap_snap_open(path, &s, &d), DNSNAP_OK);
		assert_int_equal(dnsnap_snap_verify(s, NULL, &d), DNSNAP_OK);
		size_t stable = 0;
		dnsnap_scan_stats_t ss;
		assert_int_equal(dnsnap_snap_scan(s, NULL, 0, count_stable, &stable, &ss, &d),
				 DNSNAP_OK);
		assert_int_equal(stable, 20000);
		dnsnap_snap_close(s);
	}
	dnsnap__copy_hook = NULL;
	dnsnap__copy_chunk = chunk;
	assert_false(m.failed);
	assert_int_equal(dnsnap__cache_deferred(c), 0);
	free(m.scratch);
	free(scratch);
	dnsnap_cache_free(c);
	tmpdir_remove(dir);
}

/*
 * The lock-free copy under threads that insert (new names: tables grow),
 * refresh, remove and evict (a max_entries limit) while snapshots are
 * written, the copy cut in small chunks with a yield between them (the
 * evicted are mostly churn names, expired as the inserts' clock moves). The
 * stable names are never put back once gone, so one still in the cache
 * after a write was there throughout its copy: it must be in the file, once
 * (a name twice breaks the file's strict key order, and verify). With no
 * check of the wraps count, entries shifted across a table's end are lost
 * and this fails.
 */
static void *evict_on(void *arg)
{
	churner_t *ev = arg; /* its ops: the seed of its draws */
	dnsnap_encoded_t *scratch = malloc(sizeof *scratch);
	ev->failed = scratch == NULL;
	unsigned x = ev->ops;
	for (unsigned i = 0; !ev->failed && !atomic_load(&ev->stop); i++) {
		x = x * 1103515245u + 12345u;
		unsigned k = x >> 8;
		if (i % 3 == 0)
			remove_name(ev->c, scratch, "churn", k % 30000);
		else { /* new names evict (the limit), refreshes replace: TTL 60 while the
			* clock moves on, so that the expired go first, not the stable */
			char name[64];
			wb_t w = { .n = 0 };
			snprintf(name, sizeof name, "churn%u.example.com", k % 60000);
			response_a(&w, name, 60, 1 + k % 3, i);
			ev->failed |= dnsnap_cache_insert(ev->c, w.b, w.n, NOW + i / 256, NULL, 0,
							  scratch, NULL) != DNSNAP_OK;
		}
	}
	free(scratch);
	return NULL;
}

static void yield_hook(void *arg)
{
	(void)arg;
	sched_yield();
}

static int stable_in(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		     size_t entry_len)
{
	(void)entry;
	(void)entry_len;
	static const uint8_t pre[] = "\3com\7example";
	size_t pl = sizeof pre - 1;
	unsigned char *in = arg;
	if (key_len > pl + 7 && memcmp(key, pre, pl) == 0 && memcmp(key + pl + 1, "stable", 6) == 0) {
		unsigned k = (unsigned)strtoul((const char *)key + pl + 7, NULL, 10);
		if (k < NAMES)
			in[k]++;
	}
	return 0;
}

static void test_lock_free_copies_lose_and_double_nothing_amid_inserts_and_evictions(void **state)
{
	(void)state;
	char dir[256];
	assert_int_equal(tmpdir_make(dir, sizeof dir, "snap_pin"), 0);
	dnsnap_cache_t *c = make(16 * 2600); /* the churn evicts the stable names too */
	dnsnap_encoded_t *scratch = malloc(sizeof *scratch);
	assert_non_null(scratch);
	for (unsigned i = 0; i < NAMES; i++)
		assert_int_equal(put_name_a(c, scratch, "stable", i, i), DNSNAP_OK);
	size_t chunk = dnsnap__copy_chunk;
	dnsnap__copy_chunk = 64;
	dnsnap__copy_hook = yield_hook;
	enum { NT = 2 };
	churner_t ev[NT];
	pthread_t th[NT];
	for (int i = 0; i < NT; i++) {
		ev[i] = (churner_t){ .c = c, .ops = 0x9e3779b9u * (unsigned)(i + 1) };
		assert_int_equal(pthread_create(&th[i], NULL, evict_on, &ev[i]), 0);
	}
	const char *path = tmpdir_path(dir, "a.snap");
	size_t checked = 0;
	unsigned char in[NAMES];
	for (int round = 0; round < 8; round++) {
		dnsnap_snap_write_stats_t st;
		dnsnap_diag_t d = { 0 };
		assert_int_equal(dnsnap_snap_write(c, path, NOW, &st, &d), DNSNAP_OK);
		/* still here after the write: here throughout its copy */
		unsigned char present[NAMES];
		for (unsigned i = 0; i < NAMES; i++) {
			char name[64];
			wb_t w = { .n = 0 };
			snprintf(name, sizeof name, "stable%u.example.com", i);
			response_a(&w, name, 3600, 1, 0);
			assert_int_equal(dnsnap_msg_encode(w.b, w.n, NOW, NULL, 0, scratch, NULL),
					 DNSNAP_OK);
			present[i] = dnsnap_cache_remove(c, scratch->key, scratch->key_len) ==
				     DNSNAP_OK;
			if (present[i]) /* put back at once: it stays stable */
				assert_int_equal(put_name_a(c, scratch, "stable", i, i), DNSNAP_OK);
		}
		dnsnap_snap_t *s;
		assert_int_equal(dnsnap_snap_open(path, &s, &d), DNSNAP_OK);
		assert_int_equal(dnsnap_snap_verify(s, NULL, &d), DNSNAP_OK);
		memset(in, 0, sizeof in);
		dnsnap_scan_stats_t ss;
		assert_int_equal(dnsnap_snap_scan(s, NULL, 0, stable_in, in, &ss, &d), DNSNAP_OK);
		dnsnap_snap_close(s);
		for (unsigned i = 0; i < NAMES; i++) {
			assert_true(in[i] <= 1);
			if (present[i]) {
				if (in[i] != 1)
					fail_msg("round %d: stable%u was in the cache throughout the "
						 "copy, not in the file", round, i);
				checked++;
			}
		}
	}
	for (int i = 0; i < NT; i++) {
		atomic_store(&ev[i].stop, 1);
		pthread_join(th[i], NULL);
		assert_false(ev[i].failed);
	}
	dnsnap__copy_hook = NULL;
	dnsnap__copy_chunk = chunk;
	dnsnap_cache_stats_t cs;
	dnsnap_cache_stats(c, &cs);
	print_message("lock-free copies: %zu stable names checked, %llu evictions\n", checked,
		      (unsigned long long)cs.evictions);
	assert_true(cs.evictions > 0);
	assert_true(checked > NAMES);
	assert_int_equal(dnsnap__cache_deferred(c), 0);
	free(scratch);
	dnsnap_cache_free(c);
	tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refs_stay_readable_while_their_entries_are_removed_or_replaced),
		cmocka_unit_test(test_evictions_while_pinned_are_deferred_then_freed),
		cmocka_unit_test(test_writes_amid_inserts_and_removals_keep_every_stable_entry),
		cmocka_unit_test(test_entries_moved_while_a_shard_is_copied_are_written_once),
		cmocka_unit_test(test_lock_free_copies_lose_and_double_nothing_amid_inserts_and_evictions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
