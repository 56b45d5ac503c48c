/*
 * test_snap.c: snapshots: write, open, answer from the map, verify, attach
 * under a cache, and the refusals (not LMDB, LMDB but not a snapshot, an
 * unknown major version, a cut file). Crash, disk-full, corruption, threads
 * and many processes are test_snap_reliability.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <lmdb.h>

#include "dnsnap.h"
#include "tmpdir.h"
#include "wb.h"

#define NOW 1700000000u
#define NAMES 2000

static dnsnap_encoded_t scratch;
static char dir[64];

static void response_a(wb_t *w, const char *name, uint32_t ttl, unsigned x)
{
	put_header(w, 0x8180, 1, 1, 0, 0);
	put_name(w, name);
	put_u16(w, 1);
	put_u16(w, 1);
	put_ptr(w, 12);
	size_t rl = put_fixed(w, 1, 1, ttl);
	put_u32(w, 0x0a000000u | x);
	end_rdata(w, rl);
}

/* Answer name/A; returns the code and the address's low 16 bits via x. */
static int ask(dnsnap_cache_t *c, dnsnap_snap_t *s, const char *name, uint32_t now, unsigned *x)
{
	wb_t w;
	dnsnap_query_t q;
	uint8_t out[512];
	size_t n;
	put_header(&w, 0x0100, 1, 0, 0, 0);
	put_name(&w, name);
	put_u16(&w, 1);
	put_u16(&w, 1);
	assert_int_equal(dnsnap_query_parse(w.b, w.n, NULL, 0, &q, NULL), DNSNAP_OK);
	int err = c ? dnsnap_cache_answer(c, &q, now, 0, out, sizeof out, &n)
		    : dnsnap_snap_answer(s, &q, now, 0, out, sizeof out, &n);
	if (err == DNSNAP_OK && x != NULL) {
		assert_int_equal(out[6] << 8 | out[7], 1);
		*x = (unsigned)(out[n - 2] << 8 | out[n - 1]);
	}
	return err;
}

static dnsnap_cache_t *filled(unsigned gen, uint32_t ttl)
{
	dnsnap_cache_t *c;
	assert_int_equal(dnsnap_cache_new(NULL, &c), DNSNAP_OK);
	char name[64];
	wb_t w;
	for (unsigned i = 0; i < NAMES; i++) {
		snprintf(name, sizeof name, "n%u.snap.example", i);
		response_a(&w, name, ttl, gen << 12 | i);
		assert_int_equal(dnsnap_cache_insert(c, w.b, w.n, NOW, NULL, 0, &scratch, NULL),
				 DNSNAP_OK);
	}
	return c;
}

static const char *path(const char *name)
{
	return tmpdir_path(dir, name);
}

static void test_a_written_snapshot_opens_and_answers_every_name(void **state)
{
	(void)state;
	dnsnap_cache_t *c = filled(1, 3600);
	dnsnap_snap_write_stats_t st = { 0 };
	dnsnap_diag_t d;
	int err = dnsnap_snap_write(c, path("a.snap"), NOW, &st, &d);
	if (err != DNSNAP_OK)
		fail_msg("%s", d.msg);
	assert_int_equal(st.entries, NAMES);
	struct stat sb;
	assert_int_equal(stat(path("a.snap"), &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	assert_int_equal((uint64_t)sb.st_size, st.file_size);
	assert_int_equal(access(path("a.snap.tmp.0"), F_OK), -1);

	dnsnap_snap_t *s;
	assert_int_equal(dnsnap_snap_open(path("a.snap"), &s, &d), DNSNAP_OK);
	dnsnap_snap_info_t info;
	dnsnap_snap_info(s, &info);
	assert_int_equal(info.major, DNSNAP_SNAP_MAJOR);
	assert_int_equal(info.entry_count, NAMES);
	assert_non_null(strstr(info.writer, "dnsnap"));
	char name[64];
	for (unsigned i = 0; i < NAMES; i++) {
		unsigned x = 0;
		snprintf(name, sizeof name, "n%u.snap.example", i);
		assert_int_equal(ask(NULL, s, name, NOW + 10, &x), DNSNAP_OK);
		assert_int_equal(x, (1u << 12 | i) & 0xffff);
	}
	assert_int_equal(ask(NULL, s, "absent.snap.example", NOW, NULL), DNSNAP_ENOTFOUND);
	assert_int_equal(ask(NULL, s, "n1.snap.example", NOW + 3600, NULL), DNSNAP_ENOTFOUND);
	assert_int_equal(dnsnap_snap_verify(s, NULL, &d), DNSNAP_OK);
	assert_int_equal(dnsnap_snap_bad_entries(s), 0);
	dnsnap_snap_close(s);
	dnsnap_cache_free(c);
}

static void test_expired_entries_are_not_written(void **state)
{
	(void)state;
	dnsnap_cache_t *c = filled(1, 60);
	dnsnap_snap_write_stats_t st = { 0 };
	assert_int_equal(dnsnap_snap_write(c, path("e.snap"), NOW + 60, &st, NULL), DNSNAP_OK);
	assert_int_equal(st.entries, 0);
	assert_int_equal(st.skipped, NAMES);
	dnsnap_snap_t *s;
	assert_int_equal(dnsnap_snap_open(path("e.snap"), &s, NULL), DNSNAP_OK);
	assert_int_equal(dnsnap_snap_verify(s, NULL, NULL), DNSNAP_OK);
	dnsnap_snap_close(s);
	dnsnap_cache_free(c);
}

static void test_a_snapshot_under_a_cache_answers_what_memory_misses(void **state)
{
	(void)state;
	dnsnap_cache_t *old = filled(1, 3600);
	assert_int_equal(dnsnap_snap_write(old, path("u.snap"), NOW, NULL, NULL), DNSNAP_OK);
	dnsnap_cache_free(old);

	dnsnap_cache_t *c; /* the restarted resolver: empty memory */
	assert_int_equal(dnsnap_cache_new(NULL, &c), DNSNAP_OK);
	dnsnap_snap_t *s, *prev = (dnsnap_snap_t *)1;
	assert_int_equal(dnsnap_snap_open(path("u.snap"), &s, NULL), DNSNAP_OK);
	dnsnap_cache_attach(c, s, &prev);
	assert_null(prev);
	unsigned x = 0;
	assert_int_equal(ask(c, NULL, "n5.snap.example", NOW + 1, &x), DNSNAP_OK);
	assert_int_equal(x, 1u << 12 | 5);
	wb_t w; /* memory comes first */
	response_a(&w, "n5.snap.example", 300, 0x999);
	assert_int_equal(dnsnap_cache_insert(c, w.b, w.n, NOW + 2, NULL, 0, &scratch, NULL),
			 DNSNAP_OK);
	assert_int_equal(ask(c, NULL, "n5.snap.example", NOW + 3, &x), DNSNAP_OK);
	assert_int_equal(x, 0x999);
	dnsnap_cache_stats_t st;
	dnsnap_cache_stats(c, &st);
	assert_int_equal(st.hits, 2);
	dnsnap_cache_attach(c, NULL, &prev);
	assert_ptr_equal(prev, s);
	assert_int_equal(ask(c, NULL, "n6.snap.example", NOW + 1, NULL), DNSNAP_ENOTFOUND);
	dnsnap_snap_close(s);
	dnsnap_cache_free(c);
}

static void test_a_new_write_replaces_the_old_snapshot(void **state)
{
	(void)state;
	dnsnap_cache_t *a = filled(1, 3600), *b = filled(2, 3600);
	assert_int_equal(dnsnap_snap_write(a, path("r.snap"), NOW, NULL, NULL), DNSNAP_OK);
	dnsnap_snap_t *sa;
	assert_int_equal(dnsnap_snap_open(path("r.snap"), &sa, NULL), DNSNAP_OK);
	assert_int_equal(dnsnap_snap_write(b, path("r.snap"), NOW, NULL, NULL), DNSNAP_OK);
	dnsnap_snap_t *sb;
	assert_int_equal(dnsnap_snap_open(path("r.snap"), &sb, NULL), DNSNAP_OK);
	unsigned xa = 0, xb = 0; /* a reader of the old file keeps its map */
	assert_int_equal(ask(NULL, sa, "n7.snap.example", NOW, &xa), DNSNAP_OK);
	assert_int_equal(ask(NULL, sb, "n7.snap.example", NOW, &xb), DNSNAP_OK);
	assert_int_equal(xa, 1u << 12 | 7);
	assert_int_equal(xb, 2u << 12 | 7);
	dnsnap_snap_close(sa);
	dnsnap_snap_close(sb);
	dnsnap_cache_free(a);
	dnsnap_cache_free(b);
}

static void write_file(const char *p, const void *b, size_t n)
{
	FILE *f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, n, f), n);
	fclose(f);
}

static int open_err(const char *p, dnsnap_diag_t *d)
{
	dnsnap_snap_t *s = NULL;
	int err = dnsnap_snap_open(p, &s, d);
	dnsnap_snap_close(s);
	return err;
}

static void test_opening_refuses_what_is_not_a_whole_snapshot(void **state)
{
	(void)state;
	dnsnap_diag_t d;
	char junk[8192];
	memset(junk, 'x', sizeof junk);
	write_file(path("junk"), junk, sizeof junk);
	assert_int_equal(open_err(path("junk"), &d), DNSNAP_EMAGIC);
	assert_non_null(strstr(d.msg, "not a snapshot (no LMDB magic)"));
	assert_int_equal(open_err(path("missing"), &d), -ENOENT);

	/* an LMDB file of someone else's */
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_val k = { 3, "abc" }, v = { 3, "def" };
	assert_int_equal(mdb_env_create(&env), 0);
	assert_int_equal(mdb_env_open(env, path("other.mdb"), MDB_NOSUBDIR | MDB_NOLOCK, 0600), 0);
	assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
	assert_int_equal(mdb_dbi_open(txn, NULL, 0, &dbi), 0);
	assert_int_equal(mdb_put(txn, dbi, &k, &v, 0), 0);
	assert_int_equal(mdb_txn_commit(txn), 0);
	mdb_env_close(env);
	assert_int_equal(open_err(path("other.mdb"), &d), DNSNAP_EMAGIC);
	assert_non_null(strstr(d.msg, "not a dnsnap snapshot"));

	/* a snapshot cut short, and one of an unknown major version */
	dnsnap_cache_t *c = filled(1, 3600);
	assert_int_equal(dnsnap_snap_write(c, path("v.snap"), NOW, NULL, NULL), DNSNAP_OK);
	dnsnap_cache_free(c);
	FILE *f = fopen(path("v.snap"), "rb");
	assert_non_null(f);
	static uint8_t buf[1 << 20];
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	assert_true(n > 8192 && n < sizeof buf);
	write_file(path("cut.snap"), buf, n - 100);
	assert_int_equal(open_err(path("cut.snap"), &d), DNSNAP_ETRUNC);
	write_file(path("cut2.snap"), buf, n / 2);
	assert_int_equal(open_err(path("cut2.snap"), &d), DNSNAP_ETRUNC);
	uint8_t *m = NULL;
	for (size_t i = 0; i + 4 <= n; i++)
		if (memcmp(buf + i, "\xd5NSP", 4) == 0)
			m = buf + i;
	assert_non_null(m);
	m[4] = 3; /* Format_Major 3 */
	m[6] = 0; /* Format_Minor 0 (written: 1) */
	write_file(path("v3.snap"), buf, n);
	assert_int_equal(open_err(path("v3.snap"), &d), DNSNAP_EVERSION);
	assert_non_null(strstr(d.msg, "snapshot format 3.0, this dnsnap reads 2.x"));
	m[4] = 1; /* a 1.0 snapshot (no Value_Checks): refused, both versions named, the way on */
	write_file(path("v1.snap"), buf, n);
	assert_int_equal(open_err(path("v1.snap"), &d), DNSNAP_EVERSION);
	assert_non_null(strstr(d.msg, "snapshot format 1.0, this dnsnap reads 2.x (export it"));
}

static void test_verify_finds_a_changed_byte(void **state)
{
	(void)state;
	dnsnap_cache_t *c = filled(1, 3600);
	assert_int_equal(dnsnap_snap_write(c, path("f.snap"), NOW, NULL, NULL), DNSNAP_OK);
	dnsnap_cache_free(c);
	int fd = open(path("f.snap"), O_RDWR);
	assert_true(fd >= 0);
	uint8_t b;
	assert_int_equal(pread(fd, &b, 1, 3 * 4096 + 100), 1);
	b ^= 0x10;
	assert_int_equal(pwrite(fd, &b, 1, 3 * 4096 + 100), 1);
	close(fd);
	dnsnap_snap_t *s;
	dnsnap_diag_t d;
	assert_int_equal(dnsnap_snap_open(path("f.snap"), &s, &d), DNSNAP_OK);
	assert_int_equal(dnsnap_snap_verify(s, NULL, &d), DNSNAP_ECHECKSUM);
	dnsnap_snap_close(s);
}

/* Copy a snapshot through the entry-by-entry writer. */
struct copy {
	dnsnap_snapw_t *w;
	int skip;            /* leave out every skip-th entry (0: none) */
	uint64_t n;
};

static int copy_one(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		    size_t entry_len)
{
	struct copy *cp = arg;
	if (cp->skip && cp->n++ % (uint64_t)cp->skip == 0)
		return 0;
	return dnsnap_snapw_add(cp->w, key, key_len, entry, entry_len, NULL);
}

static void test_the_entry_writer_copies_a_snapshot_and_refuses_disorder(void **state)
{
	(void)state;
	dnsnap_cache_t *c = filled(1, 3600);
	dnsnap_diag_t d;
	assert_int_equal(dnsnap_snap_write(c, path("w.snap"), NOW, NULL, &d), DNSNAP_OK);
	dnsnap_cache_free(c);
	dnsnap_snap_t *s, *t;
	assert_int_equal(dnsnap_snap_open(path("w.snap"), &s, &d), DNSNAP_OK);

	/* a whole copy: the same digest */
	struct copy cp = { 0 };
	assert_int_equal(dnsnap_snapw_begin(path("w2.snap"), &cp.w, &d), DNSNAP_OK);
	assert_int_equal(dnsnap_snap_foreach(s, copy_one, &cp), DNSNAP_OK);
	dnsnap_snap_write_stats_t st = { 0 };
	assert_int_equal(dnsnap_snapw_commit(cp.w, &st, &d), DNSNAP_OK);
	assert_int_equal(st.entries, NAMES);
	assert_int_equal(dnsnap_snap_open(path("w2.snap"), &t, &d), DNSNAP_OK);
	dnsnap_snap_info_t a, b;
	dnsnap_snap_info(s, &a);
	dnsnap_snap_info(t, &b);
	assert_int_equal(a.digest, b.digest);
	assert_int_equal(dnsnap_snap_verify(t, NULL, &d), DNSNAP_OK);
	dnsnap_snap_close(t);

	/* every third left out: still a good snapshot */
	cp = (struct copy){ .skip = 3 };
	assert_int_equal(dnsnap_snapw_begin(path("w3.snap"), &cp.w, &d), DNSNAP_OK);
	assert_int_equal(dnsnap_snap_foreach(s, copy_one, &cp), DNSNAP_OK);
	assert_int_equal(dnsnap_snapw_commit(cp.w, &st, &d), DNSNAP_OK);
	assert_int_equal(st.entries, NAMES - (NAMES + 2) / 3);
	assert_int_equal(dnsnap_snap_open(path("w3.snap"), &t, &d), DNSNAP_OK);
	assert_int_equal(dnsnap_snap_verify(t, NULL, &d), DNSNAP_OK);
	dnsnap_snap_close(t);

	/* a key again, and a bad entry: refused; abort leaves the old file */
	static uint8_t v[DNSNAP_ENTRY_MAX];
	size_t vl;
	uint8_t key[DNSNAP_KEY_MAX];
	size_t kl;
	dnsnap_snapw_t *w;
	assert_int_equal(dnsnap_key_encode((const uint8_t *)"\2n1\4snap\7example", 17, 1, 1, 0,
					   NULL, 0, key, sizeof key, &kl), DNSNAP_OK);
	assert_int_equal(dnsnap_snap_get(s, key, kl, v, sizeof v, &vl), DNSNAP_OK);
	assert_int_equal(dnsnap_snapw_begin(path("w2.snap"), &w, &d), DNSNAP_OK);
	assert_int_equal(dnsnap_snapw_add(w, key, kl, v, vl, &d), DNSNAP_OK);
	assert_int_equal(dnsnap_snapw_add(w, key, kl, v, vl, &d), DNSNAP_EFIELD);
	assert_non_null(strstr(d.msg, "keys must increase"));
	dnsnap_snapw_abort(w);
	assert_int_equal(dnsnap_snapw_begin(path("w2.snap"), &w, &d), DNSNAP_OK);
	assert_int_not_equal(dnsnap_snapw_add(w, key, kl, v, vl - 1, &d), DNSNAP_OK);
	assert_non_null(strstr(d.msg, "n1.snap.example. type 1"));
	dnsnap_snapw_abort(w);
	assert_int_equal(dnsnap_snap_open(path("w2.snap"), &t, &d), DNSNAP_OK);
	dnsnap_snap_info(t, &b);
	assert_int_equal(a.digest, b.digest);
	dnsnap_snap_close(t);
	char tmp[160];
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path("w2.snap"), (long)getpid());
	assert_int_equal(access(tmp, F_OK), -1);
	dnsnap_snap_close(s);
}

/* Merging: the later inception wins a shared key; expired base entries go. */
static void test_a_merge_keeps_the_newer_entry_of_each_key(void **state)
{
	(void)state;
	dnsnap_cache_t *c;
	dnsnap_diag_t d;
	wb_t w;
	/* base: n0..n9 at NOW (n5..n9 with a TTL that is over by NOW + 200) */
	assert_int_equal(dnsnap_cache_new(NULL, &c), DNSNAP_OK);
	char name[64];
	for (unsigned i = 0; i < 10; i++) {
		snprintf(name, sizeof name, "n%u.merge.example", i);
		response_a(&w, name, i < 5 ? 3600 : 100, 0x100 | i);
		assert_int_equal(dnsnap_cache_insert(c, w.b, w.n, NOW, NULL, 0, &scratch, NULL),
				 DNSNAP_OK);
	}
	assert_int_equal(dnsnap_snap_write(c, path("m.snap"), NOW, NULL, &d), DNSNAP_OK);
	dnsnap_cache_free(c);
	/* new: n0, n1 later (they win), n20 new; n2 earlier than the base (loses) */
	assert_int_equal(dnsnap_cache_new(NULL, &c), DNSNAP_OK);
	const struct { unsigned i; uint32_t at; } news[] = { { 0, NOW + 200 }, { 1, NOW + 200 },
							    { 20, NOW + 200 }, { 2, NOW - 50 } };
	for (size_t k = 0; k < 4; k++) {
		snprintf(name, sizeof name, "n%u.merge.example", news[k].i);
		response_a(&w, name, 3600, 0x200 | news[k].i);
		assert_int_equal(dnsnap_cache_insert(c, w.b, w.n, news[k].at, NULL, 0, &scratch,
						     NULL), DNSNAP_OK);
	}
	dnsnap_snap_t *base, *s;
	assert_int_equal(dnsnap_snap_open(path("m.snap"), &base, &d), DNSNAP_OK);
	dnsnap_snap_write_stats_t st = { 0 };
	int err = dnsnap_snap_merge(c, base, path("m.snap"), NOW + 200, &st, &d);
	if (err != DNSNAP_OK)
		fail_msg("%s", d.msg);
	dnsnap_snap_close(base);
	dnsnap_cache_free(c);
	/* kept from base: n2 (newer than the cache's), n3, n4; replaced: n0, n1 */
	assert_int_equal(st.entries, 6);
	assert_int_equal(st.from_base, 3);
	assert_int_equal(st.replaced, 2);
	assert_int_equal(st.base_expired, 5);
	assert_int_equal(st.base_bad, 0);
	assert_int_equal(dnsnap_snap_open(path("m.snap"), &s, &d), DNSNAP_OK);
	assert_int_equal(dnsnap_snap_verify(s, NULL, &d), DNSNAP_OK);
	const unsigned want[][2] = { { 0, 0x200 }, { 1, 0x200 }, { 2, 0x100 }, { 3, 0x100 },
				     { 4, 0x100 }, { 20, 0x200 } };
	for (size_t k = 0; k < 6; k++) {
		unsigned x = 0;
		snprintf(name, sizeof name, "n%u.merge.example", want[k][0]);
		assert_int_equal(ask(NULL, s, name, NOW + 200, &x), DNSNAP_OK);
		assert_int_equal(x, want[k][1] | want[k][0]);
	}
	assert_int_equal(ask(NULL, s, "n7.merge.example", NOW + 200, NULL), DNSNAP_ENOTFOUND);
	dnsnap_snap_close(s);
}

static void test_writing_into_a_missing_directory_names_the_file(void **state)
{
	(void)state;
	dnsnap_cache_t *c = filled(1, 3600);
	dnsnap_diag_t d;
	int err = dnsnap_snap_write(c, "/nonexistent-dir/x.snap", NOW, NULL, &d);
	assert_true(err != DNSNAP_OK);
	assert_non_null(strstr(d.msg, "/nonexistent-dir/x.snap"));
	dnsnap_cache_free(c);
}

static int setup(void **state)
{
	(void)state;
	return tmpdir_make(dir, sizeof dir, "test-snap");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_written_snapshot_opens_and_answers_every_name),
		cmocka_unit_test(test_expired_entries_are_not_written),
		cmocka_unit_test(test_a_snapshot_under_a_cache_answers_what_memory_misses),
		cmocka_unit_test(test_a_new_write_replaces_the_old_snapshot),
		cmocka_unit_test(test_opening_refuses_what_is_not_a_whole_snapshot),
		cmocka_unit_test(test_verify_finds_a_changed_byte),
		cmocka_unit_test(test_writing_into_a_missing_directory_names_the_file),
		cmocka_unit_test(test_the_entry_writer_copies_a_snapshot_and_refuses_disorder),
		cmocka_unit_test(test_a_merge_keeps_the_newer_entry_of_each_key),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
