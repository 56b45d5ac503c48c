/*
 * test_snap_lmdb.c: the snapshot reader (engine/snap_read.c, which walks
 * LMDB's pages itself) against liblmdb's own mdb_get() and cursors, on every
 * key of a snapshot big enough for a four-level tree, with about 1% of the
 * values on overflow pages (3 KB to 64 KB). Also LMDB files dnsnap never
 * writes: refused at open with a message, not misread.
 *
 * DNSNAP_DIFF_ENTRIES sets the size (default 1,000,000; 200,000 under ASan,
 * where the tree is still four levels deep: the test asserts the depth).
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

static char dir[64];
static dnsnap_encoded_t scratch;

static const char *path(const char *name)
{
	return tmpdir_path(dir, name);
}

/* A response for NAME: an A record, or (big > 0) TXT records of 255-byte
 * strings holding about big bytes in all. Returns its length. */
static size_t response(uint8_t *m, const char *name, unsigned x, size_t big)
{
	size_t n = 12;
	memset(m, 0, 12);
	m[2] = 0x81, m[3] = 0x80, m[5] = 1;
	n += wire_name(m + n, name);
	unsigned type = big ? 16 : 1;
	m[n++] = 0, m[n++] = (uint8_t)type, m[n++] = 0, m[n++] = 1;
	unsigned rrs = big ? (unsigned)(big / 4096 + 1) : 1;
	m[7] = (uint8_t)rrs, m[6] = (uint8_t)(rrs >> 8);
	for (unsigned r = 0; r < rrs; r++) {
		m[n++] = 0xc0, m[n++] = 12;
		m[n++] = 0, m[n++] = (uint8_t)type, m[n++] = 0, m[n++] = 1;
		m[n++] = 0, m[n++] = 0, m[n++] = 0x0e, m[n++] = 0x10; /* 3600 */
		size_t rl = big ? 16 * 256 : 4;
		m[n++] = (uint8_t)(rl >> 8), m[n++] = (uint8_t)rl;
		if (!big) {
			m[n++] = 10, m[n++] = (uint8_t)(x >> 16), m[n++] = (uint8_t)(x >> 8),
			m[n++] = (uint8_t)x;
			continue;
		}
		for (int s = 0; s < 16; s++) {
			m[n++] = 255;
			memset(m + n, 'a' + (int)((x + r + (unsigned)s) % 26), 255);
			n += 255;
		}
	}
	return n;
}

static int entries_wanted(void)
{
	const char *e = getenv("DNSNAP_DIFF_ENTRIES");
	if (e != NULL)
		return atoi(e);
#if defined(__SANITIZE_ADDRESS__)
	return 200000;
#else
	return 1000000;
#endif
}

struct walk {
	MDB_txn *txn;
	MDB_cursor *cur;
	MDB_dbi dbi;
	dnsnap_snap_t *s;
	uint64_t n, big, mismatches;
	uint8_t *buf;
};

/* Each entry the scan hands over must be the cursor's next record, and
 * dnsnap_snap_get() and mdb_get() must give the same bytes for its key. */
static int compare_one(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		       size_t entry_len)
{
	struct walk *w = arg;
	MDB_val k, v;
	int rc = mdb_cursor_get(w->cur, &k, &v, w->n == 0 ? MDB_FIRST : MDB_NEXT);
	w->n++;
	if (rc != 0 || k.mv_size != key_len || memcmp(k.mv_data, key, key_len) != 0 ||
	    v.mv_size != entry_len + 4 || memcmp(v.mv_data, entry, entry_len) != 0) {
		w->mismatches++;
		return 0;
	}
	w->big += entry_len > 3000;
	MDB_val g, gk = { key_len, (void *)key };
	size_t len;
	if (mdb_get(w->txn, w->dbi, &gk, &g) != 0 || g.mv_size != v.mv_size ||
	    dnsnap_snap_get(w->s, key, key_len, w->buf, DNSNAP_ENTRY_MAX, &len) != DNSNAP_OK ||
	    len != entry_len || memcmp(w->buf, g.mv_data, len) != 0)
		w->mismatches++;
	return 0;
}

static void test_the_reader_agrees_with_lmdb_on_every_key(void **state)
{
	(void)state;
	int n = entries_wanted();
	dnsnap_cache_t *c;
	assert_int_equal(dnsnap_cache_new(NULL, &c), DNSNAP_OK);
	static uint8_t m[70000];
	char name[96];
	int big = 0;
	for (int i = 0; i < n; i++) {
		/* names spread over zones, so keys share prefixes as real ones do */
		snprintf(name, sizeof name, "host-%d.a-label-for-a-deeper-tree.z%d.example%d.com", i,
			 i % 997, i % 7);
		size_t sz = 0;
		if (i % 100 == 7) /* 1%: overflow values of 3 KB to 8 KB, 1 in 16 up to 64 KB */
			sz = i / 100 % 16 ? 3000 + (size_t)(i / 100 % 4) * 1500
					  : 3000 + (size_t)(i / 1600 % 15) * 4096, big++;
		size_t len = response(m, name, (unsigned)i, sz);
		dnsnap_diag_t d;
		int err = dnsnap_cache_insert(c, m, len, NOW, NULL, 0, &scratch, &d);
		if (err != DNSNAP_OK)
			fail_msg("%s: %s", name, d.msg);
	}
	dnsnap_snap_write_stats_t st;
	assert_int_equal(dnsnap_snap_write(c, path("big.snap"), NOW, &st, NULL), DNSNAP_OK);
	dnsnap_cache_free(c);
	assert_int_equal(st.entries, (uint64_t)n);

	/* liblmdb's view of the same file */
	MDB_env *env;
	struct walk w = { 0 };
	assert_int_equal(mdb_env_create(&env), 0);
	assert_int_equal(mdb_env_set_maxdbs(env, 2), 0);
	assert_int_equal(mdb_env_set_mapsize(env, (size_t)st.file_size + (1u << 20)), 0);
	assert_int_equal(mdb_env_open(env, path("big.snap"), MDB_NOSUBDIR | MDB_RDONLY | MDB_NOLOCK,
				      0600), 0);
	assert_int_equal(mdb_txn_begin(env, NULL, MDB_RDONLY, &w.txn), 0);
	assert_int_equal(mdb_dbi_open(w.txn, "entries", 0, &w.dbi), 0);
	MDB_stat ms;
	assert_int_equal(mdb_stat(w.txn, w.dbi, &ms), 0);
	print_message("differential: %d entries (%d on overflow pages), a %u-level tree, %zu-byte "
		      "pages, %llu overflow pages, file %llu bytes\n", n, big, ms.ms_depth,
		      (size_t)ms.ms_psize, (unsigned long long)ms.ms_overflow_pages,
		      (unsigned long long)st.file_size);
	assert_true(ms.ms_depth >= 4);
	assert_true(ms.ms_overflow_pages > 0);
	assert_int_equal(mdb_cursor_open(w.txn, w.dbi, &w.cur), 0);
	assert_int_equal(dnsnap_snap_open(path("big.snap"), &w.s, NULL), DNSNAP_OK);
	w.buf = malloc(DNSNAP_ENTRY_MAX);
	assert_non_null(w.buf);
	dnsnap_scan_stats_t ss;
	assert_int_equal(dnsnap_snap_scan(w.s, NULL, 0, compare_one, &w, &ss, NULL), DNSNAP_OK);
	MDB_val k, v;
	assert_int_equal(mdb_cursor_get(w.cur, &k, &v, MDB_NEXT), MDB_NOTFOUND); /* no more */
	assert_int_equal(w.n, (uint64_t)n);
	assert_int_equal(ss.damaged, 0);
	assert_int_equal(w.mismatches, 0);
	assert_int_equal(w.big, (uint64_t)big);

	/* keys that are not there: both say so */
	uint8_t key[DNSNAP_KEY_MAX];
	size_t kl, len;
	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof name, "\x05%.5s\x07" "example\x03" "com", "nohostxx" + i % 3);
		assert_int_equal(dnsnap_key_encode((const uint8_t *)name, strlen(name) + 1, 1, 1,
						   0, NULL, 0, key, sizeof key, &kl), DNSNAP_OK);
		MDB_val gk = { kl, key };
		assert_int_equal(mdb_get(w.txn, w.dbi, &gk, &v), MDB_NOTFOUND);
		assert_int_equal(dnsnap_snap_get(w.s, key, kl, w.buf, DNSNAP_ENTRY_MAX, &len),
				 DNSNAP_ENOTFOUND);
	}
	assert_int_equal(dnsnap_snap_verify(w.s, NULL, NULL), DNSNAP_OK);
	free(w.buf);
	dnsnap_snap_close(w.s);
	mdb_cursor_close(w.cur);
	mdb_txn_abort(w.txn);
	mdb_env_close(env);
	unlink(path("big.snap"));
}

/* An LMDB file with the databases dnsnap writes, and @p flags on "entries". */
static void lmdb_file(const char *p, unsigned flags, const char *extra_db)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi e, meta, x;
	MDB_val k = { 3, "abc" }, v = { 3, "def" };
	unlink(p);
	assert_int_equal(mdb_env_create(&env), 0);
	assert_int_equal(mdb_env_set_maxdbs(env, 3), 0);
	assert_int_equal(mdb_env_open(env, p, MDB_NOSUBDIR | MDB_NOLOCK, 0600), 0);
	assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
	assert_int_equal(mdb_dbi_open(txn, "entries", MDB_CREATE | flags, &e), 0);
	assert_int_equal(mdb_dbi_open(txn, "meta", MDB_CREATE, &meta), 0);
	assert_int_equal(mdb_put(txn, e, &k, &v, 0), 0);
	if (flags & MDB_DUPSORT) {
		MDB_val v2 = { 3, "ghi" };
		assert_int_equal(mdb_put(txn, e, &k, &v2, 0), 0);
	}
	if (extra_db != NULL)
		assert_int_equal(mdb_dbi_open(txn, extra_db, MDB_CREATE, &x), 0);
	assert_int_equal(mdb_txn_commit(txn), 0);
	mdb_env_close(env);
}

static void test_lmdb_kinds_dnsnap_never_writes_are_refused(void **state)
{
	(void)state;
	dnsnap_snap_t *s = NULL;
	dnsnap_diag_t d;
	lmdb_file(path("dup.mdb"), MDB_DUPSORT, NULL);
	assert_int_equal(dnsnap_snap_open(path("dup.mdb"), &s, &d), DNSNAP_EFIELD);
	assert_non_null(strstr(d.msg, "duplicate-sorted data"));
	lmdb_file(path("int.mdb"), MDB_INTEGERKEY, NULL);
	assert_int_equal(dnsnap_snap_open(path("int.mdb"), &s, &d), DNSNAP_EFIELD);
	assert_non_null(strstr(d.msg, "flags 0x8"));
	lmdb_file(path("three.mdb"), 0, "other");
	assert_int_equal(dnsnap_snap_open(path("three.mdb"), &s, &d), DNSNAP_EMAGIC);
	assert_non_null(strstr(d.msg, "not a dnsnap snapshot"));
	assert_null(s);
}

static void patch(const char *p, off_t at, const void *b, size_t n)
{
	int fd = open(p, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, b, n, at), (ssize_t)n);
	close(fd);
}

static void test_another_byte_order_or_data_format_is_named(void **state)
{
	(void)state;
	dnsnap_snap_t *s = NULL;
	dnsnap_diag_t d;
	lmdb_file(path("x.mdb"), 0, NULL);
	/* the meta page's magic as a host of the other byte order writes it */
	uint32_t magic = __builtin_bswap32(0xBEEFC0DEu), version = 2;
	patch(path("x.mdb"), 16, &magic, 4);
	assert_int_equal(dnsnap_snap_open(path("x.mdb"), &s, &d), DNSNAP_EMAGIC);
	assert_non_null(strstr(d.msg, "the other byte order"));
	lmdb_file(path("y.mdb"), 0, NULL);
	patch(path("y.mdb"), 20, &version, 4);
	assert_int_equal(dnsnap_snap_open(path("y.mdb"), &s, &d), DNSNAP_EVERSION);
	assert_non_null(strstr(d.msg, "LMDB data format 2, this dnsnap reads 1"));
	assert_int_equal(d.offset, 20);
	assert_null(s);
}

static int setup(void **state)
{
	(void)state;
	return tmpdir_make(dir, sizeof dir, "dnsnap-lmdb");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_reader_agrees_with_lmdb_on_every_key),
		cmocka_unit_test(test_lmdb_kinds_dnsnap_never_writes_are_refused),
		cmocka_unit_test(test_another_byte_order_or_data_format_is_named),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
