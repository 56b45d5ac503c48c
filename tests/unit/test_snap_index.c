/*
 * test_snap_index.c: the snapshot's hash index (spec/FORMAT.md, "Index
 * record"). Lookups through it give what the B-tree gives, for every key and
 * for misses; a damaged index (slots zeroed, pointing at wrong pages, nodes,
 * LMDB's meta pages, overflow pages; a header that does not fit the file)
 * gives misses or the B-tree's answers, never another answer and never a
 * crash, and fails the deep check at its offset; a file without the index
 * (deleted with liblmdb) answers through the B-tree and verifies.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <lmdb.h>
#include <xxhash.h>

#include "../../format/byteorder.h"
#include "dnsnap.h"
#include "snap_index.h"
#include "tmpdir.h"
#include "wb.h"

#define NOW 1700000000u
#define NAMES 3000
#define ABSENT 1000              /* names NAMES.. NAMES + ABSENT - 1: not in the file */
#define TRAILER 24

static dnsnap_encoded_t scratch;
static char dir[64];

static const char *path(const char *name)
{
	return tmpdir_path(dir, name);
}

static int setup(void **state)
{
	(void)state;
	return tmpdir_make(dir, sizeof dir, "test-snap-index");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

static void question(wb_t *w, unsigned i, unsigned flags)
{
	char name[64];
	snprintf(name, sizeof name, "n%u.idx.example", i);
	put_header(w, flags, 1, flags & 0x8000 ? 1 : 0, 0, 0);
	put_name(w, name);
	put_u16(w, 1);
	put_u16(w, 1);
}

/* n<i>.idx.example/A -> 10.<i>, for i < NAMES; every 97th with 400 more
 * addresses, too long for a leaf page, so that the file has overflow values. */
static void write_snap(const char *p)
{
	dnsnap_cache_t *c;
	assert_int_equal(dnsnap_cache_new(NULL, &c), DNSNAP_OK);
	wb_t w;
	for (unsigned i = 0; i < NAMES; i++) {
		unsigned more = i % 97 == 0 ? 400 : 0;
		question(&w, i, 0x8180);
		set_u16(&w, 6, 1 + more);
		for (unsigned a = 0; a <= more; a++) {
			put_ptr(&w, 12);
			size_t rl = put_fixed(&w, 1, 1, 3600);
			put_u32(&w, (a == 0 ? 0x0a000000u : 0x0b000000u | a << 12) | i);
			end_rdata(&w, rl);
		}
		assert_int_equal(dnsnap_cache_insert(c, w.b, w.n, NOW, NULL, 0, &scratch, NULL),
				 DNSNAP_OK);
	}
	assert_int_equal(dnsnap_snap_write(c, p, NOW, NULL, NULL), DNSNAP_OK);
	dnsnap_cache_free(c);
}

static uint8_t *slurp(const char *p, size_t *len)
{
	FILE *f = fopen(p, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc(*len);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, *len, f), *len);
	fclose(f);
	return b;
}

static void spit(const char *p, const uint8_t *b, size_t n)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b, n), (ssize_t)n);
	close(fd);
}

/* The trailer made right again for bytes changed before it, so that the deep
 * check gets past File_Hash to the index. */
static void rehash(uint8_t *b, size_t n)
{
	st64le(b + n - TRAILER + 16, XXH3_64bits(b, n - TRAILER));
}

/* The index record's Value_Check made right again (key "index"). */
static void recheck(uint8_t *b, size_t off, size_t len)
{
	st32le(b + off + len - 4, (uint32_t)XXH3_64bits_withSeed(b + off, len - 4,
								  XXH3_64bits("index", 5)));
}

/* Every entry, as the B-tree gives it: the reference. */
typedef struct ref {
	size_t n;
	uint8_t key[NAMES][DNSNAP_KEY_MAX];
	size_t key_len[NAMES];
	uint8_t *entry[NAMES];
	size_t entry_len[NAMES];
} ref_t;

static int keep(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		size_t entry_len)
{
	ref_t *r = arg;
	assert_true(r->n < NAMES);
	memcpy(r->key[r->n], key, key_len);
	r->key_len[r->n] = key_len;
	r->entry[r->n] = malloc(entry_len);
	assert_non_null(r->entry[r->n]);
	memcpy(r->entry[r->n], entry, entry_len);
	r->entry_len[r->n++] = entry_len;
	return 0;
}

static ref_t *reference(const char *p)
{
	ref_t *r = calloc(1, sizeof *r);
	assert_non_null(r);
	dnsnap_snap_t *s;
	assert_int_equal(dnsnap_snap_open(p, &s, NULL), DNSNAP_OK);
	dnsnap__snap_index_off(s);
	assert_int_equal(dnsnap_snap_foreach(s, keep, r), DNSNAP_OK);
	assert_int_equal(r->n, NAMES);
	dnsnap_snap_close(s);
	return r;
}

static void ref_free(ref_t *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->entry[i]);
	free(r);
}

/* The key of an absent name (i >= NAMES), from a parsed query. */
static size_t absent_key(unsigned i, uint8_t *key)
{
	wb_t w;
	dnsnap_query_t q;
	question(&w, i, 0x0100);
	assert_int_equal(dnsnap_query_parse(w.b, w.n, NULL, 0, &q, NULL), DNSNAP_OK);
	memcpy(key, q.key, q.key_len);
	return q.key_len;
}

/* Ask for every key: each must be the reference's entry or (when @p may_miss)
 * a miss; absent names miss. @return the hits. */
static size_t ask_all(dnsnap_snap_t *s, const ref_t *r, int may_miss)
{
	static uint8_t buf[DNSNAP_ENTRY_MAX];
	size_t hits = 0, len;
	for (size_t i = 0; i < r->n; i++) {
		int err = dnsnap_snap_get(s, r->key[i], r->key_len[i], buf, sizeof buf, &len);
		if (err == DNSNAP_ENOTFOUND && may_miss)
			continue;
		assert_int_equal(err, DNSNAP_OK);
		assert_int_equal(len, r->entry_len[i]);
		assert_memory_equal(buf, r->entry[i], len);
		hits++;
	}
	for (unsigned i = NAMES; i < NAMES + ABSENT; i++) {
		uint8_t key[DNSNAP_KEY_MAX];
		size_t kl = absent_key(i, key);
		assert_int_equal(dnsnap_snap_get(s, key, kl, buf, sizeof buf, &len),
				 DNSNAP_ENOTFOUND);
	}
	return hits;
}

static void test_lookups_through_the_index_equal_the_btree_on_every_key(void **state)
{
	(void)state;
	write_snap(path("a.snap"));
	ref_t *r = reference(path("a.snap"));
	dnsnap_snap_t *s, *t;
	dnsnap_diag_t d;
	assert_int_equal(dnsnap_snap_open(path("a.snap"), &s, &d), DNSNAP_OK);
	assert_int_equal(dnsnap_snap_open(path("a.snap"), &t, &d), DNSNAP_OK);
	size_t off, len;
	const char *why;
	assert_int_equal(dnsnap__snap_index_where(s, &off, &len, &why), 1);
	dnsnap__snap_index_off(t);
	assert_int_equal(dnsnap__snap_index_where(t, &off, &len, &why), -1); /* switched off */
	assert_int_equal(ask_all(s, r, 0), NAMES); /* through the index */
	assert_int_equal(ask_all(t, r, 0), NAMES); /* through the B-tree */
	assert_int_equal(dnsnap_snap_bad_entries(s), 0);
	dnsnap_snap_info_t in;
	dnsnap_snap_info(s, &in);
	assert_int_equal(in.major, 2);
	assert_int_equal(in.minor, 1);
	assert_int_equal(dnsnap_snap_verify(s, NULL, &d), DNSNAP_OK);
	dnsnap_snap_close(s);
	dnsnap_snap_close(t);
	ref_free(r);
}

/* ----------------------------------------------------- damaged indexes */

typedef struct idx_at {
	size_t off, len;         /* the record (object and Value_Check) in the file */
	uint64_t slots, npages;
	size_t psize;
} idx_at_t;

static idx_at_t locate(const char *p, size_t file_len)
{
	dnsnap_snap_t *s;
	idx_at_t x = { 0 };
	const char *why;
	assert_int_equal(dnsnap_snap_open(p, &s, NULL), DNSNAP_OK);
	assert_int_equal(dnsnap__snap_index_where(s, &x.off, &x.len, &why), 1);
	dnsnap_snap_close(s);
	x.psize = (size_t)sysconf(_SC_PAGESIZE);
	x.npages = (file_len - TRAILER) / x.psize;
	x.slots = (x.len - 4 - INDEX_HDR) / 8;
	return x;
}

static uint64_t slot_at(const uint8_t *b, const idx_at_t *x, uint64_t i)
{
	return ld64le(b + x->off + INDEX_HDR + 8 * i);
}

static void slot_set(uint8_t *b, const idx_at_t *x, uint64_t i, uint64_t v)
{
	st64le(b + x->off + INDEX_HDR + 8 * i, v);
}

/* Each damage: what it does to a copy of the file. */
typedef void (*damage_fn)(uint8_t *b, const idx_at_t *x);

static void zero_slots(uint8_t *b, const idx_at_t *x)
{
	memset(b + x->off + INDEX_HDR, 0, (size_t)x->slots * 8);
}

/* Every used slot to another page (beyond the file, LMDB's meta pages, any
 * page), its fingerprint kept. */
static void wrong_pages(uint8_t *b, const idx_at_t *x)
{
	uint64_t r = 12345;
	for (uint64_t i = 0; i < x->slots; i++) {
		uint64_t s = slot_at(b, x, i);
		if (s == 0)
			continue;
		r = r * 6364136223846793005u + 1442695040888963407u;
		uint64_t pg = (r >> 33) % (x->npages + 8);
		slot_set(b, x, i, (s & ~(uint64_t)UINT32_MAX) | (pg == 0 ? 1 : pg));
	}
}

static void meta_pages(uint8_t *b, const idx_at_t *x)
{
	for (uint64_t i = 0; i < x->slots; i++) {
		uint64_t s = slot_at(b, x, i);
		if (s != 0)
			slot_set(b, x, i, (s & ~(uint64_t)UINT32_MAX) | (i & 1));
	}
	/* pgno 0 reads as empty: those are misses; pgno 1 is a meta page */
}

/* The index's own overflow pages (and the page after its first). */
static void overflow_pages(uint8_t *b, const idx_at_t *x)
{
	uint64_t first = x->off / x->psize;
	for (uint64_t i = 0; i < x->slots; i++) {
		uint64_t s = slot_at(b, x, i);
		if (s != 0)
			slot_set(b, x, i, (s & ~(uint64_t)UINT32_MAX) | (first + (i & 1)));
	}
}

/* The right pages, the wrong nodes: one further on, or past the page's last. */
static void wrong_nodes(uint8_t *b, const idx_at_t *x)
{
	for (uint64_t i = 0; i < x->slots; i++) {
		uint64_t s = slot_at(b, x, i);
		if (s == 0)
			continue;
		uint64_t node = (s >> 32 & 0xffff) + (i % 3 == 0 ? 1000 : 1);
		slot_set(b, x, i, (s & 0xffff0000ffffffffu) | (node & 0xffff) << 32);
	}
}

/* Slots swapped between keys: each leads to another key's node. */
static void swapped(uint8_t *b, const idx_at_t *x)
{
	uint64_t prev = 0, prev_i = 0;
	for (uint64_t i = 0; i < x->slots; i++) {
		uint64_t s = slot_at(b, x, i);
		if (s == 0)
			continue;
		if (prev != 0) {
			slot_set(b, x, prev_i, (prev & 0xffff000000000000u) |
					       (s & 0x0000ffffffffffffu));
			slot_set(b, x, i, (s & 0xffff000000000000u) | (prev & 0x0000ffffffffffffu));
			prev = 0;
			continue;
		}
		prev = s, prev_i = i;
	}
}

/* No empty slot: every probe runs the whole table (the B-tree then serves). */
static void full_table(uint8_t *b, const idx_at_t *x)
{
	for (uint64_t i = 0; i < x->slots; i++)
		if (slot_at(b, x, i) == 0)
			slot_set(b, x, i, 2); /* page 2, node 0, fingerprint 0 */
}

static void slot_count_doubled(uint8_t *b, const idx_at_t *x)
{
	st64le(b + x->off + 16, x->slots * 2); /* more than the record holds: cut short */
}

static void slot_count_halved(uint8_t *b, const idx_at_t *x)
{
	st64le(b + x->off + 16, x->slots / 2);
}

static void slot_count_odd(uint8_t *b, const idx_at_t *x)
{
	st64le(b + x->off + 16, x->slots - 1);
}

static void entry_count_wrong(uint8_t *b, const idx_at_t *x)
{
	st64le(b + x->off + 24, NAMES + 1);
}

static void root_wrong(uint8_t *b, const idx_at_t *x)
{
	st64le(b + x->off + 32, ld64le(b + x->off + 32) + 1);
}

static void magic_wrong(uint8_t *b, const idx_at_t *x)
{
	b[x->off + 3] ^= 1;
}

static void header_size_odd(uint8_t *b, const idx_at_t *x)
{
	st16le(b + x->off + 6, INDEX_HDR + 4);
}

static void one_slot_flipped(uint8_t *b, const idx_at_t *x)
{
	for (uint64_t i = 0; i < x->slots; i++)
		if (slot_at(b, x, i) != 0) {
			b[x->off + INDEX_HDR + 8 * i] ^= 0x01; /* its page number */
			return;
		}
}

static const struct damage {
	const char *name;
	damage_fn fn;
	int ignored;             /* the header does not fit: the B-tree serves all */
	int may_miss;
	int fix_check;           /* Value_Check made right: verify must find the slots */
} damages[] = {
	{ "every slot zeroed", zero_slots, 0, 1, 1 },
	{ "slots at wrong pages", wrong_pages, 0, 1, 1 },
	{ "slots at LMDB's meta pages", meta_pages, 0, 1, 1 },
	{ "slots at overflow pages", overflow_pages, 0, 1, 1 },
	{ "slots at wrong nodes", wrong_nodes, 0, 1, 1 },
	{ "slots swapped between keys", swapped, 0, 1, 1 },
	{ "no empty slot", full_table, 0, 0, 1 },
	{ "one slot's page flipped", one_slot_flipped, 0, 1, 0 },
	{ "Slot_Count doubled (cut short)", slot_count_doubled, 1, 0, 0 },
	{ "Slot_Count halved", slot_count_halved, 1, 0, 1 },
	{ "Slot_Count not a power of two", slot_count_odd, 1, 0, 0 },
	{ "Entry_Count wrong", entry_count_wrong, 1, 0, 1 },
	{ "Entries_Root wrong", root_wrong, 1, 0, 0 },
	{ "Magic_Number wrong", magic_wrong, 1, 0, 0 },
	{ "Header_Size not a multiple of 8", header_size_odd, 1, 0, 1 },
};

static void test_a_damaged_index_gives_misses_never_wrong_answers(void **state)
{
	(void)state;
	write_snap(path("a.snap"));
	ref_t *r = reference(path("a.snap"));
	size_t n;
	uint8_t *orig = slurp(path("a.snap"), &n);
	idx_at_t x = locate(path("a.snap"), n);
	assert_true(x.slots > NAMES);
	assert_true(x.off % 8 == 0); /* an overflow value: aligned */
	uint8_t *b = malloc(n);
	assert_non_null(b);
	for (size_t k = 0; k < sizeof damages / sizeof damages[0]; k++) {
		const struct damage *dm = &damages[k];
		memcpy(b, orig, n);
		dm->fn(b, &x);
		if (dm->fix_check)
			recheck(b, x.off, x.len);
		rehash(b, n);
		spit(path("d.snap"), b, n);
		dnsnap_snap_t *s;
		dnsnap_diag_t d;
		size_t off, len;
		const char *why;
		assert_int_equal(dnsnap_snap_open(path("d.snap"), &s, &d), DNSNAP_OK);
		int used = dnsnap__snap_index_where(s, &off, &len, &why);
		if (used != (dm->ignored ? -1 : 1))
			fail_msg("%s: index state %d", dm->name, used);
		size_t hits = ask_all(s, r, dm->may_miss);
		if (!dm->may_miss && hits != NAMES)
			fail_msg("%s: %zu hits", dm->name, hits);
		assert_int_equal(dnsnap_snap_bad_entries(s), 0); /* a miss, not damage */
		/* the deep check: damage of the file, named at an offset in the index
		 * (its header, its Value_Check, a slot) or at an entry it misses */
		memset(&d, 0, sizeof d);
		assert_int_equal(dnsnap_snap_verify(s, NULL, &d), DNSNAP_ECHECKSUM);
		assert_non_null(strstr(d.msg, "the index is damaged"));
		assert_non_null(strstr(d.msg, path("d.snap")));
		if (!dm->fix_check || dm->ignored)
			assert_true(d.offset >= x.off && d.offset < x.off + x.len);
		dnsnap_snap_close(s);
	}
	free(b);
	free(orig);
	ref_free(r);
}

/* A slot that leads to another key's node, with the record's Value_Check
 * right: the deep check names the entry it no longer reaches, or the slot. */
static void test_verify_names_the_slot_or_the_entry_at_fault(void **state)
{
	(void)state;
	write_snap(path("a.snap"));
	size_t n;
	uint8_t *b = slurp(path("a.snap"), &n);
	idx_at_t x = locate(path("a.snap"), n);
	uint64_t i = 0;
	while (slot_at(b, &x, i) == 0)
		i++;
	/* 1. the slot emptied: its entry is unreachable, named at its node */
	uint64_t s = slot_at(b, &x, i);
	slot_set(b, &x, i, 0);
	recheck(b, x.off, x.len);
	rehash(b, n);
	spit(path("e.snap"), b, n);
	dnsnap_snap_t *sn;
	dnsnap_diag_t d;
	assert_int_equal(dnsnap_snap_open(path("e.snap"), &sn, &d), DNSNAP_OK);
	assert_int_equal(dnsnap_snap_verify(sn, NULL, &d), DNSNAP_ECHECKSUM);
	assert_non_null(strstr(d.msg, "is not reached through it"));
	assert_int_equal(d.offset / x.psize, s & UINT32_MAX); /* in the entry's leaf */
	dnsnap_snap_close(sn);
	/* 2. the slot kept, a copy of it in an empty slot far from its run:
	 * reached by no entry, named at that slot */
	slot_set(b, &x, i, s);
	uint64_t j = (i + x.slots / 2) % x.slots;
	while (slot_at(b, &x, j) != 0)
		j = (j + 1) % x.slots;
	slot_set(b, &x, j, s);
	recheck(b, x.off, x.len);
	rehash(b, n);
	spit(path("e.snap"), b, n);
	assert_int_equal(dnsnap_snap_open(path("e.snap"), &sn, &d), DNSNAP_OK);
	assert_int_equal(dnsnap_snap_verify(sn, NULL, &d), DNSNAP_ECHECKSUM);
	assert_non_null(strstr(d.msg, "leads to no entry"));
	assert_int_equal(d.offset, x.off + INDEX_HDR + 8 * j);
	dnsnap_snap_close(sn);
	free(b);
}

/* ------------------------------------------------------- without index */

/* The index record deleted with liblmdb (the trailer taken off first, a new
 * one appended after): a file as a writer without the index makes it. */
static void test_a_file_without_the_index_answers_through_the_btree(void **state)
{
	(void)state;
	write_snap(path("a.snap"));
	ref_t *r = reference(path("a.snap"));
	size_t n;
	uint8_t *b = slurp(path("a.snap"), &n);
	assert_int_equal(truncate(path("a.snap"), (off_t)(n - TRAILER)), 0);
	free(b);
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi meta;
	MDB_val k = { 5, "index" };
	assert_int_equal(mdb_env_create(&env), 0);
	assert_int_equal(mdb_env_set_maxdbs(env, 2), 0);
	assert_int_equal(mdb_env_open(env, path("a.snap"), MDB_NOSUBDIR | MDB_NOLOCK, 0600), 0);
	assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
	assert_int_equal(mdb_dbi_open(txn, "meta", 0, &meta), 0);
	assert_int_equal(mdb_del(txn, meta, &k, NULL), 0);
	assert_int_equal(mdb_txn_commit(txn), 0);
	mdb_env_close(env);
	b = slurp(path("a.snap"), &n);
	uint8_t t[TRAILER];
	memcpy(t, "\xd5NST", 4);
	st32le(t + 4, 0);
	st64le(t + 8, n);
	st64le(t + 16, XXH3_64bits(b, n));
	free(b);
	int fd = open(path("a.snap"), O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, t, sizeof t), (ssize_t)sizeof t);
	close(fd);

	dnsnap_snap_t *s;
	dnsnap_diag_t d;
	size_t off, len;
	const char *why;
	assert_int_equal(dnsnap_snap_open(path("a.snap"), &s, &d), DNSNAP_OK);
	assert_int_equal(dnsnap__snap_index_where(s, &off, &len, &why), 0);
	assert_int_equal(ask_all(s, r, 0), NAMES);
	assert_int_equal(dnsnap_snap_verify(s, NULL, &d), DNSNAP_OK);
	dnsnap_snap_close(s);
	ref_free(r);
}

/* An empty cache writes an index too (8 slots, all empty). */
static void test_an_empty_snapshot_has_an_empty_index(void **state)
{
	(void)state;
	dnsnap_cache_t *c;
	assert_int_equal(dnsnap_cache_new(NULL, &c), DNSNAP_OK);
	assert_int_equal(dnsnap_snap_write(c, path("z.snap"), NOW, NULL, NULL), DNSNAP_OK);
	dnsnap_cache_free(c);
	dnsnap_snap_t *s;
	dnsnap_diag_t d;
	size_t off, len;
	const char *why;
	assert_int_equal(dnsnap_snap_open(path("z.snap"), &s, &d), DNSNAP_OK);
	assert_int_equal(dnsnap__snap_index_where(s, &off, &len, &why), 1);
	assert_int_equal(len, INDEX_HDR + 8 * INDEX_MIN_SLOTS + 4);
	uint8_t key[DNSNAP_KEY_MAX], buf[512];
	size_t kl = absent_key(1, key), bl;
	assert_int_equal(dnsnap_snap_get(s, key, kl, buf, sizeof buf, &bl), DNSNAP_ENOTFOUND);
	assert_int_equal(dnsnap_snap_verify(s, NULL, &d), DNSNAP_OK);
	dnsnap_snap_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookups_through_the_index_equal_the_btree_on_every_key),
		cmocka_unit_test(test_a_damaged_index_gives_misses_never_wrong_answers),
		cmocka_unit_test(test_verify_names_the_slot_or_the_entry_at_fault),
		cmocka_unit_test(test_a_file_without_the_index_answers_through_the_btree),
		cmocka_unit_test(test_an_empty_snapshot_has_an_empty_index),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
