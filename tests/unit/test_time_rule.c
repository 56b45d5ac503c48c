/*
 * test_time_rule.c: the time rule every reader of entries applies (issue 22:
 * spec/FORMAT.md, "Times a reader accepts"; dnsnap_entry_check_time()). A
 * snapshot written by a cache whose clock stood ten years ahead (the library
 * takes the time as a parameter) holds one future-dated entry beside one
 * written at the true time, and each reader is asked in turn:
 *
 * - dnsnap_entry_check_time(): 300 s ahead passes, 301 s is refused at the
 *   Inception (offset 0); a two-day entry of a cache without a cap is
 *   refused at the Expiry (offset 4) under the default policy, accepted
 *   under a policy without a cap; an expired entry passes (its expiry is the
 *   other rule);
 * - a cache with the snapshot under it: the future entry is a miss, counted
 *   (dnsnap_cache_refused_time()); the good one answers;
 * - dnsnap_snap_answer(): a miss, counted with the damage
 *   (dnsnap_snap_bad_entries());
 * - dnsnap_snap_publish() onto the snapshot: the future entry is left out
 *   (stats->base_refused), the good one kept, the cache's new one written;
 * - dnsnap_import() of the snapshot's export stream: refused, naming the
 *   entry, nothing published.
 * Each of these held the future entry as good before the rule.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ans.h"
#include "dnsnap.h"
#include "tmpdir.h"
#include "wb.h"

#define NOW 1700000000u
#define AHEAD (3650u * 86400u) /* `dnsnap load --now +3650d` */

static dnsnap_encoded_t scratch; /* large: static */
static char dir[64];
static char snap[256];

static uint32_t ld32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Insert @p name / A (TTL @p ttl, last octet @p octet) into @p c at @p now. */
static void insert_a(dnsnap_cache_t *c, const char *name, uint32_t ttl, unsigned octet,
		     uint32_t now)
{
	wb_t w;
	ans_response_a(&w, name, ttl, octet, 0);
	assert_int_equal(dnsnap_cache_insert(c, w.b, w.n, now, NULL, 0, &scratch, NULL),
			 DNSNAP_OK);
}

/* The entry for @p name / A in a fresh cache of policy @p o, inserted at @p now. */
static size_t entry_of(const dnsnap_cache_opts_t *o, const char *name, uint32_t ttl,
		       uint32_t now, uint8_t *buf)
{
	dnsnap_cache_t *c;
	assert_int_equal(dnsnap_cache_new(o, &c), DNSNAP_OK);
	insert_a(c, name, ttl, 1, now);
	const char *p = tmpdir_path(dir, "one.snap");
	assert_int_equal(dnsnap_snap_write(c, p, now, NULL, NULL), DNSNAP_OK);
	dnsnap_cache_free(c);
	dnsnap_snap_t *s;
	assert_int_equal(dnsnap_snap_open(p, &s, NULL), DNSNAP_OK);
	uint8_t qb[512];
	dnsnap_query_t q;
	ans_query_parse(qb, name, 1, 0, 0, 0, &q);
	size_t len = 0;
	assert_int_equal(dnsnap_snap_get(s, q.key, q.key_len, buf, DNSNAP_ENTRY_MAX, &len),
			 DNSNAP_OK);
	dnsnap_snap_close(s);
	return len;
}

static void test_check_time_ahead_and_too_long(void **state)
{
	(void)state;
	static uint8_t e[DNSNAP_ENTRY_MAX];
	dnsnap_diag_t d;
	size_t n = entry_of(NULL, "ahead.example", 3600, NOW + 300, e);
	assert_int_equal(ld32(e), NOW + 300);
	assert_int_equal(dnsnap_entry_check_time(e, n, NULL, NOW, &d), DNSNAP_OK);
	n = entry_of(NULL, "ahead.example", 3600, NOW + 301, e);
	assert_int_equal(dnsnap_entry_check_time(e, n, NULL, NOW, &d), DNSNAP_EFIELD);
	assert_int_equal(d.offset, 0);
	assert_non_null(strstr(d.msg, "cached 301 s in the future"));
	/* ten years ahead: refused; at that time, good */
	n = entry_of(NULL, "ahead.example", 3600, NOW + AHEAD, e);
	assert_int_equal(dnsnap_entry_check_time(e, n, NULL, NOW, &d), DNSNAP_EFIELD);
	assert_int_equal(dnsnap_entry_check_time(e, n, NULL, NOW + AHEAD, &d), DNSNAP_OK);
	/* expired long ago: not this rule's */
	assert_int_equal(dnsnap_entry_check_time(e, n, NULL, NOW + 2 * AHEAD, &d), DNSNAP_OK);

	/* two days, from a cache without a cap: past the default longest TTL */
	dnsnap_cache_opts_t o;
	dnsnap_cache_opts_default(&o);
	o.max_ttl = 0;
	n = entry_of(&o, "long.example", 172800, NOW, e);
	assert_int_equal(ld32(e + 4) - ld32(e), 172800);
	assert_int_equal(dnsnap_entry_check_time(e, n, NULL, NOW, &d), DNSNAP_EFIELD);
	assert_int_equal(d.offset, 4);
	assert_non_null(strstr(d.msg, "longer than the cache's longest TTL (86400 s)"));
	assert_int_equal(dnsnap_entry_check_time(e, n, &o, NOW, &d), DNSNAP_OK);
	/* 86400 + 300 s left is the most the default policy accepts */
	assert_int_equal(dnsnap_entry_check_time(e, n, NULL, NOW + 172800 - 86700, &d),
			 DNSNAP_OK);
	assert_int_equal(dnsnap_entry_check_time(e, n, NULL, NOW + 172800 - 86701, &d),
			 DNSNAP_EFIELD);
	assert_int_equal(dnsnap_entry_check_time(e, 10, NULL, NOW, &d), DNSNAP_ETRUNC);
}

static int lookup_a(dnsnap_cache_t *c, const char *name, uint32_t now)
{
	uint8_t qb[512], out[1232];
	dnsnap_query_t q;
	ans_query_parse(qb, name, 1, 0, 0, 0, &q);
	dnsnap_lookup_t lk = { .now = now };
	size_t n;
	return dnsnap_cache_lookup(c, &q, &lk, out, sizeof out, &n);
}

static int snap_answer_a(dnsnap_snap_t *s, const char *name, uint32_t now)
{
	uint8_t qb[512], out[1232];
	dnsnap_query_t q;
	ans_query_parse(qb, name, 1, 0, 0, 0, &q);
	size_t n;
	return dnsnap_snap_answer(s, &q, now, 0, out, sizeof out, &n);
}

struct pair {
	uint8_t key[2][DNSNAP_KEY_MAX];
	uint8_t entry[2][DNSNAP_ENTRY_MAX];
	size_t key_len[2], entry_len[2];
	unsigned n;
};

static int take(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		size_t entry_len)
{
	struct pair *p = arg;
	assert_true(p->n < 2);
	memcpy(p->key[p->n], key, key_len);
	memcpy(p->entry[p->n], entry, entry_len);
	p->key_len[p->n] = key_len;
	p->entry_len[p->n++] = entry_len;
	return 0;
}

/* The snapshot of the tests below: future.example cached ten years ahead,
 * good.example at NOW, written entry by entry (as a stream's import or a
 * copy of a file from a host whose clock was wrong would). */
static void make_snapshot(void)
{
	static struct pair p;
	memset(&p, 0, sizeof p);
	const char *paths[2] = { "f.snap", "g.snap" };
	uint32_t when[2] = { NOW + AHEAD, NOW };
	const char *names[2] = { "future.example", "good.example" };
	for (int i = 0; i < 2; i++) {
		dnsnap_cache_t *c;
		assert_int_equal(dnsnap_cache_new(NULL, &c), DNSNAP_OK);
		insert_a(c, names[i], 3600, 6 + (unsigned)i, when[i]);
		const char *path = tmpdir_path(dir, paths[i]);
		assert_int_equal(dnsnap_snap_write(c, path, when[i], NULL, NULL), DNSNAP_OK);
		dnsnap_cache_free(c);
		dnsnap_snap_t *s;
		assert_int_equal(dnsnap_snap_open(path, &s, NULL), DNSNAP_OK);
		assert_int_equal(dnsnap_snap_foreach(s, take, &p), 0);
		dnsnap_snap_close(s);
	}
	assert_int_equal(p.n, 2);
	int first = dnsnap_key_cmp(p.key[0], p.key_len[0], p.key[1], p.key_len[1]) < 0 ? 0 : 1;
	dnsnap_snapw_t *w;
	assert_int_equal(dnsnap_snapw_begin(snap, &w, NULL), DNSNAP_OK);
	for (int k = 0; k < 2; k++) {
		int i = k == 0 ? first : 1 - first;
		assert_int_equal(dnsnap_snapw_add(w, p.key[i], p.key_len[i], p.entry[i],
						  p.entry_len[i], NULL), DNSNAP_OK);
	}
	assert_int_equal(dnsnap_snapw_commit(w, NULL, NULL), DNSNAP_OK);
}

static void test_lookups_refuse_a_future_entry(void **state)
{
	(void)state;
	make_snapshot();
	dnsnap_snap_t *s;
	assert_int_equal(dnsnap_snap_open(snap, &s, NULL), DNSNAP_OK);
	/* a cache with the snapshot under it */
	dnsnap_cache_t *c;
	assert_int_equal(dnsnap_cache_new(NULL, &c), DNSNAP_OK);
	dnsnap_cache_attach(c, s, NULL);
	assert_int_equal(lookup_a(c, "good.example", NOW + 10), DNSNAP_OK);
	assert_int_equal(dnsnap_cache_refused_time(c), 0);
	assert_int_equal(lookup_a(c, "future.example", NOW + 10), DNSNAP_ENOTFOUND);
	assert_int_equal(dnsnap_cache_refused_time(c), 1);
	/* at the time it was cached, it answers */
	assert_int_equal(lookup_a(c, "future.example", NOW + AHEAD + 10), DNSNAP_OK);
	assert_int_equal(dnsnap_cache_refused_time(c), 1);
	dnsnap_cache_attach(c, NULL, NULL);
	dnsnap_cache_free(c);
	/* the snapshot alone */
	assert_int_equal(snap_answer_a(s, "good.example", NOW + 10), DNSNAP_OK);
	assert_int_equal(dnsnap_snap_bad_entries(s), 0);
	assert_int_equal(snap_answer_a(s, "future.example", NOW + 10), DNSNAP_ENOTFOUND);
	assert_int_equal(dnsnap_snap_bad_entries(s), 1);
	dnsnap_snap_close(s);
}

static void test_publish_leaves_a_future_base_entry_out(void **state)
{
	(void)state;
	make_snapshot();
	dnsnap_cache_t *c;
	assert_int_equal(dnsnap_cache_new(NULL, &c), DNSNAP_OK);
	insert_a(c, "new.example", 3600, 8, NOW + 20);
	dnsnap_publish_opts_t o = { .now = NOW + 20 };
	dnsnap_publish_stats_t ps;
	dnsnap_diag_t d;
	dnsnap_snap_t *map = NULL;
	assert_int_equal(dnsnap_snap_publish(c, snap, &o, &map, &ps, &d), DNSNAP_OK);
	assert_int_equal(ps.base_refused, 1);
	assert_int_equal(ps.write.from_base, 1);
	assert_int_equal(ps.write.entries, 2);
	assert_non_null(map);
	dnsnap_snap_info_t in;
	dnsnap_snap_info(map, &in);
	assert_int_equal(in.entry_count, 2);
	assert_int_equal(snap_answer_a(map, "future.example", NOW + AHEAD + 10), DNSNAP_ENOTFOUND);
	assert_int_equal(dnsnap_snap_bad_entries(map), 0); /* not there at all */
	assert_int_equal(snap_answer_a(map, "good.example", NOW + 30), DNSNAP_OK);
	assert_int_equal(snap_answer_a(map, "new.example", NOW + 30), DNSNAP_OK);
	dnsnap_snap_close(map);
	dnsnap_cache_free(c);
}

static void test_import_refuses_a_future_entry(void **state)
{
	(void)state;
	make_snapshot();
	char stream[256], out[256];
	snprintf(stream, sizeof stream, "%s", tmpdir_path(dir, "f.dnsx"));
	snprintf(out, sizeof out, "%s", tmpdir_path(dir, "imported.snap"));
	dnsnap_snap_t *s;
	assert_int_equal(dnsnap_snap_open(snap, &s, NULL), DNSNAP_OK);
	int fd = open(stream, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(dnsnap_export_write(s, fd, 0, 0, NULL, NULL), DNSNAP_OK);
	close(fd);
	dnsnap_snap_close(s);
	fd = open(stream, O_RDONLY);
	assert_true(fd >= 0);
	dnsnap_diag_t d;
	assert_int_equal(dnsnap_import(fd, out, NOW + 10, NULL, NULL, &d), DNSNAP_EFIELD);
	assert_non_null(strstr(d.msg, "future.example"));
	assert_non_null(strstr(d.msg, "in the future"));
	assert_int_equal(access(out, F_OK), -1);
	/* at the time it was cached (good.example expired then): imported */
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(dnsnap_import(fd, out, NOW + AHEAD + 10, NULL, NULL, &d), DNSNAP_OK);
	close(fd);
}

static int setup(void **state)
{
	(void)state;
	if (tmpdir_make(dir, sizeof dir, "test-time-rule") != 0)
		return -1;
	snprintf(snap, sizeof snap, "%s", tmpdir_path(dir, "s.snap"));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_time_ahead_and_too_long),
		cmocka_unit_test(test_lookups_refuse_a_future_entry),
		cmocka_unit_test(test_publish_leaves_a_future_base_entry_out),
		cmocka_unit_test(test_import_refuses_a_future_entry),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
