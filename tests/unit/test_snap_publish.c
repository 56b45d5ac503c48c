/*
 * test_snap_publish.c: where and how a snapshot is published (engine/dnsnap.h,
 * dnsnap_snap_write() and dnsnap_snap_lock()): the replaced file's mode, owner
 * and group kept, a new one 0600; a symbolic link followed and kept; a path
 * that is not a regular file refused; the writers' lock excluding a second
 * writer, following a file renamed over the path, and released by unlock;
 * dnsnap_snap_publish() and _fill(): the base merged, a file that is not a
 * snapshot never replaced, a damaged base refused or dropped or replaced as
 * the flags say, the new file handed back mapped, a fill that publishes
 * nothing. Many processes at once are tests/cli/test_writers.sh's.
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

#include "dnsnap.h"
#include "tmpdir.h"
#include "wb.h"

#define NOW 1700000000u

static dnsnap_encoded_t scratch;
static char dir[64];

static char *path(const char *name)
{
	static char p[4][128];
	static int k;
	k = (k + 1) % 4;
	snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
	return p[k];
}

/* A cache of @p n names NAME-i.pub.example (A records). */
static dnsnap_cache_t *cache_of(const char *name, unsigned n)
{
	dnsnap_cache_t *c;
	assert_int_equal(dnsnap_cache_new(NULL, &c), DNSNAP_OK);
	char owner[64];
	wb_t w;
	for (unsigned i = 0; i < n; i++) {
		snprintf(owner, sizeof owner, "%s-%u.pub.example", name, i);
		put_header(&w, 0x8180, 1, 1, 0, 0);
		put_name(&w, owner);
		put_u16(&w, 1);
		put_u16(&w, 1);
		put_ptr(&w, 12);
		size_t rl = put_fixed(&w, 1, 1, 3600);
		put_u32(&w, 0x0a000000u | i);
		end_rdata(&w, rl);
		assert_int_equal(dnsnap_cache_insert(c, w.b, w.n, NOW, NULL, 0, &scratch, NULL),
				 DNSNAP_OK);
	}
	return c;
}

static void write_snap(const char *p, const char *name, unsigned n)
{
	dnsnap_cache_t *c = cache_of(name, n);
	dnsnap_diag_t d;
	int err = dnsnap_snap_write(c, p, NOW, NULL, &d);
	if (err != DNSNAP_OK)
		fail_msg("%s", d.msg);
	dnsnap_cache_free(c);
}

static uint64_t entries_of(const char *p)
{
	dnsnap_snap_t *s;
	dnsnap_diag_t d;
	if (dnsnap_snap_open(p, &s, &d) != DNSNAP_OK)
		fail_msg("%s", d.msg);
	dnsnap_snap_info_t in;
	dnsnap_snap_info(s, &in);
	dnsnap_snap_close(s);
	return in.entry_count;
}

static void test_a_rewrite_keeps_mode_owner_and_group(void **state)
{
	(void)state;
	struct stat st;
	mode_t um = umask(022);
	write_snap(path("m.snap"), "a", 3);
	assert_int_equal(stat(path("m.snap"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600); /* new: 0600 */
	assert_int_equal(chmod(path("m.snap"), 0640), 0);
	int root = geteuid() == 0;
	if (root)
		assert_int_equal(chown(path("m.snap"), 65534, 65534), 0);
	write_snap(path("m.snap"), "b", 4);
	assert_int_equal(stat(path("m.snap"), &st), 0);
	assert_int_equal(entries_of(path("m.snap")), 4);
	assert_int_equal(st.st_mode & 07777, 0640);
	if (root) {
		assert_int_equal(st.st_uid, 65534);
		assert_int_equal(st.st_gid, 65534);
	} else {
		print_message("not root: the owner part skipped\n");
	}
	umask(um);
}

static void test_a_symbolic_link_is_followed_and_stays(void **state)
{
	(void)state;
	write_snap(path("real.snap"), "a", 2);
	assert_int_equal(symlink("real.snap", path("link.snap")), 0);
	write_snap(path("link.snap"), "b", 5);
	struct stat st;
	assert_int_equal(lstat(path("link.snap"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(entries_of(path("real.snap")), 5);
	/* a link to a link, and a dangling link: its target is created */
	assert_int_equal(symlink("link.snap", path("link2.snap")), 0);
	write_snap(path("link2.snap"), "c", 6);
	assert_int_equal(entries_of(path("real.snap")), 6);
	assert_int_equal(symlink("later.snap", path("dangling.snap")), 0);
	write_snap(path("dangling.snap"), "d", 7);
	assert_int_equal(lstat(path("dangling.snap"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(entries_of(path("later.snap")), 7);
}

static void test_a_path_that_is_not_a_regular_file_is_refused(void **state)
{
	(void)state;
	assert_int_equal(mkfifo(path("fifo"), 0600), 0);
	dnsnap_cache_t *c = cache_of("a", 1);
	dnsnap_diag_t d;
	assert_int_equal(dnsnap_snap_write(c, path("fifo"), NOW, NULL, &d), DNSNAP_EINVAL);
	assert_non_null(strstr(d.msg, "not a regular file"));
	assert_non_null(strstr(d.msg, path("fifo")));
	struct stat st;
	assert_int_equal(lstat(path("fifo"), &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	dnsnap_snap_lock_t *lk = NULL;
	assert_int_equal(dnsnap_snap_lock(path("fifo"), 0, &lk, &d), DNSNAP_EINVAL);
	assert_null(lk);
	assert_int_equal(dnsnap_snap_lock(dir, 0, &lk, &d), DNSNAP_EINVAL); /* a directory */
	dnsnap_cache_free(c);
}

static void test_the_lock_excludes_a_second_writer(void **state)
{
	(void)state;
	dnsnap_snap_lock_t *a = NULL, *b = NULL;
	dnsnap_diag_t d;
	/* no file yet: the directory is locked. Both locks are this process's:
	 * they exclude each other as two threads' (or processes') do */
	assert_int_equal(dnsnap_snap_lock(path("l.snap"), 0, &a, &d), DNSNAP_OK);
	assert_int_equal(dnsnap_snap_lock(path("l.snap"), 0, &b, &d), -EAGAIN);
	assert_null(b);
	assert_non_null(strstr(d.msg, path("l.snap")));
	assert_non_null(strstr(d.msg, "another dnsnap is writing it"));
	assert_int_equal(dnsnap_snap_lock(path("l.snap"), 1, &b, &d), -EAGAIN); /* waited */
	dnsnap_snap_unlock(a);
	assert_int_equal(dnsnap_snap_lock(path("l.snap"), 0, &b, &d), DNSNAP_OK);
	dnsnap_snap_unlock(b);
	dnsnap_snap_unlock(NULL);

	/* a file: locked itself */
	write_snap(path("l.snap"), "a", 1);
	assert_int_equal(dnsnap_snap_lock(path("l.snap"), 0, &a, &d), DNSNAP_OK);
	assert_int_equal(dnsnap_snap_lock(path("l.snap"), 0, &b, &d), -EAGAIN);
	/* through a link: the same lock */
	assert_int_equal(symlink("l.snap", path("l-link.snap")), 0);
	assert_int_equal(dnsnap_snap_lock(path("l-link.snap"), 0, &b, &d), -EAGAIN);
	/* the holder publishes (a new file renamed over the path): the next
	 * writer locks the new file, and the file the holder locked is gone */
	write_snap(path("l.snap"), "b", 2);
	assert_int_equal(dnsnap_snap_lock(path("l.snap"), 0, &b, &d), DNSNAP_OK);
	dnsnap_diag_t d2;
	dnsnap_snap_lock_t *c = NULL;
	assert_int_equal(dnsnap_snap_lock(path("l-link.snap"), 0, &c, &d2), -EAGAIN);
	dnsnap_snap_unlock(a);
	dnsnap_snap_unlock(b);
	assert_int_equal(dnsnap_snap_lock(path("l-link.snap"), 0, &c, &d2), DNSNAP_OK);
	dnsnap_snap_unlock(c);
}

/* ------------------------------------------------------ dnsnap_snap_publish */

static uint8_t file_buf[2][1 << 20];

static size_t read_file(const char *p, int k)
{
	FILE *f = fopen(p, "rb");
	assert_non_null(f);
	size_t n = fread(file_buf[k], 1, sizeof file_buf[k], f);
	fclose(f);
	assert_true(n < sizeof file_buf[k]);
	return n;
}

static void write_file(const char *p, const uint8_t *b, size_t n)
{
	FILE *f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, n, f), n);
	fclose(f);
}

static const dnsnap_publish_opts_t merge_opts = { .now = NOW + 1, .wait_seconds = 0 };

static void test_publish_merges_the_file_at_the_path_and_maps_the_result(void **state)
{
	(void)state;
	const char *p = path("m.snap");
	write_snap(p, "old", 5); /* another writer's work, at the path */
	dnsnap_cache_t *c = cache_of("new", 3);
	dnsnap_snap_t *map = NULL;
	dnsnap_publish_stats_t ps;
	dnsnap_diag_t d = { 0 };
	assert_int_equal(dnsnap_snap_publish(c, p, &merge_opts, &map, &ps, &d), DNSNAP_OK);
	assert_int_equal(ps.write.entries, 8);
	assert_int_equal(ps.write.from_base, 5);
	assert_true(ps.base_merged);
	assert_int_equal(ps.base_err, 0);
	assert_non_null(map);
	assert_true(dnsnap_snap_same_file(map, p)); /* the file just published */
	dnsnap_snap_info_t in;
	dnsnap_snap_info(map, &in);
	assert_int_equal(in.entry_count, 8);
	dnsnap_snap_close(map);
	/* REPLACE: the cache's entries alone */
	dnsnap_publish_opts_t o = merge_opts;
	o.flags = DNSNAP_PUBLISH_REPLACE;
	assert_int_equal(dnsnap_snap_publish(c, p, &o, NULL, &ps, &d), DNSNAP_OK);
	assert_false(ps.base_merged);
	assert_int_equal(entries_of(p), 3);
	/* no file yet: made */
	assert_int_equal(dnsnap_snap_publish(c, path("new.snap"), &merge_opts, NULL, &ps, &d),
			 DNSNAP_OK);
	assert_false(ps.base_merged);
	assert_int_equal(entries_of(path("new.snap")), 3);
	dnsnap_cache_free(c);
}

static void test_publish_never_replaces_what_is_not_a_snapshot(void **state)
{
	(void)state;
	const char *p = path("text.snap");
	static const uint8_t text[] = "a file of someone's, not a snapshot\n";
	write_file(p, text, sizeof text - 1);
	dnsnap_cache_t *c = cache_of("t", 2);
	dnsnap_publish_stats_t ps;
	dnsnap_diag_t d = { 0 };
	for (unsigned f = 0; f < 8; f++) { /* whatever the flags say */
		dnsnap_publish_opts_t o = merge_opts;
		o.flags = f;
		assert_int_equal(dnsnap_snap_publish(c, p, &o, NULL, &ps, &d), DNSNAP_EMAGIC);
		assert_non_null(strstr(d.msg, "text.snap"));
	}
	size_t n = read_file(p, 0);
	assert_int_equal(n, sizeof text - 1);
	assert_memory_equal(file_buf[0], text, n);
	dnsnap_cache_free(c);
}

/* A copy of snapshot @p from at @p to with the value of name-@p i's address
 * changed (one damaged entry). */
static void damage_one(const char *from, const char *to, unsigned i)
{
	size_t n = read_file(from, 0);
	/* every copy of the address (LMDB may leave a page it copied on write) */
	const uint8_t addr[4] = { 10, 0, 0, (uint8_t)i };
	unsigned copies = 0;
	for (uint8_t *at = file_buf[0]; (at = memmem(at, n - (size_t)(at - file_buf[0]), addr, 4));
	     at += 4, copies++)
		at[3] ^= 0x40;
	assert_true(copies > 0);
	write_file(to, file_buf[0], n);
}

static void test_publish_keeps_a_damaged_base_unless_told(void **state)
{
	(void)state;
	const char *good = path("g.snap"), *p = path("dmg.snap");
	write_snap(good, "dmg", 6);
	damage_one(good, p, 4);
	size_t before = read_file(p, 1);
	dnsnap_cache_t *c = cache_of("fresh", 2);
	dnsnap_publish_stats_t ps;
	dnsnap_diag_t d = { 0 };
	assert_int_equal(dnsnap_snap_publish(c, p, &merge_opts, NULL, &ps, &d), DNSNAP_ECHECKSUM);
	assert_int_equal(ps.write.base_bad, 1);
	assert_non_null(strstr(d.msg, "1 damaged entry"));
	assert_int_equal(read_file(p, 0), before); /* untouched */
	assert_memory_equal(file_buf[0], file_buf[1], before);
	dnsnap_publish_opts_t o = merge_opts;
	o.flags = DNSNAP_PUBLISH_DROP_DAMAGED;
	assert_int_equal(dnsnap_snap_publish(c, p, &o, NULL, &ps, &d), DNSNAP_OK);
	assert_int_equal(ps.write.base_bad, 1);
	assert_int_equal(ps.write.entries, 2 + 5);
	dnsnap_cache_free(c);
}

static void test_publish_replaces_an_unopenable_base_only_when_told(void **state)
{
	(void)state;
	const char *p = path("cut.snap");
	write_snap(p, "cut", 4);
	size_t n = read_file(p, 0);
	write_file(p, file_buf[0], n - 10); /* the trailer cut short */
	dnsnap_cache_t *c = cache_of("whole", 3);
	dnsnap_publish_stats_t ps;
	dnsnap_diag_t d = { 0 };
	int err = dnsnap_snap_publish(c, p, &merge_opts, NULL, &ps, &d);
	assert_true(err == DNSNAP_ETRUNC || err == DNSNAP_ECHECKSUM);
	assert_int_equal(read_file(p, 1), n - 10);
	dnsnap_publish_opts_t o = merge_opts;
	o.flags = DNSNAP_PUBLISH_REPLACE_BAD;
	assert_int_equal(dnsnap_snap_publish(c, p, &o, NULL, &ps, &d), DNSNAP_OK);
	assert_int_equal(ps.base_err, err);
	assert_non_null(strstr(ps.base_msg, "cut.snap"));
	assert_false(ps.base_merged);
	assert_int_equal(entries_of(p), 3);
	dnsnap_cache_free(c);
}

static void test_publish_waits_for_the_writers_lock(void **state)
{
	(void)state;
	const char *p = path("busy.snap");
	write_snap(p, "busy", 1);
	dnsnap_snap_lock_t *lk;
	dnsnap_diag_t d = { 0 };
	assert_int_equal(dnsnap_snap_lock(p, 0, &lk, &d), DNSNAP_OK);
	dnsnap_cache_t *c = cache_of("late", 1);
	assert_int_equal(dnsnap_snap_publish(c, p, &merge_opts, NULL, NULL, &d), -EAGAIN);
	assert_non_null(strstr(d.msg, "another dnsnap is writing it"));
	assert_int_equal(entries_of(p), 1);
	dnsnap_snap_unlock(lk);
	assert_int_equal(dnsnap_snap_publish(c, p, &merge_opts, NULL, NULL, &d), DNSNAP_OK);
	assert_int_equal(entries_of(p), 2);
	dnsnap_cache_free(c);
}

/* A fill: every base entry but the first @p skip, or nothing (1) with @p none */
struct fill_arg {
	unsigned skip, seen;
	int none, had_base;
	dnsnap_snapw_t *w;
};

static int copy_some(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		     size_t entry_len)
{
	struct fill_arg *a = arg;
	if (a->seen++ < a->skip)
		return 0;
	return dnsnap_snapw_add(a->w, key, key_len, entry, entry_len, NULL) != DNSNAP_OK;
}

static int fill_some(void *arg, dnsnap_snap_t *base, dnsnap_snapw_t *w,
		     dnsnap_snap_write_stats_t *stats, dnsnap_diag_t *d)
{
	struct fill_arg *a = arg;
	(void)stats, (void)d;
	a->had_base = base != NULL;
	if (a->none)
		return 1;
	a->w = w;
	return base == NULL ? DNSNAP_OK : dnsnap_snap_foreach(base, copy_some, a);
}

static void test_publish_fill_filters_the_base_or_publishes_nothing(void **state)
{
	(void)state;
	const char *p = path("f.snap");
	write_snap(p, "fill", 5);
	dnsnap_publish_stats_t ps;
	dnsnap_diag_t d = { 0 };
	struct fill_arg a = { .skip = 2 };
	assert_int_equal(dnsnap_snap_publish_fill(p, &merge_opts, fill_some, &a, NULL, &ps, &d),
			 DNSNAP_OK);
	assert_true(a.had_base);
	assert_int_equal(ps.write.entries, 3);
	assert_int_equal(entries_of(p), 3);
	size_t n = read_file(p, 1);
	a = (struct fill_arg){ .none = 1 };
	assert_int_equal(dnsnap_snap_publish_fill(p, &merge_opts, fill_some, &a, NULL, &ps, &d), 1);
	assert_int_equal(read_file(p, 0), n);
	assert_memory_equal(file_buf[0], file_buf[1], n); /* not rewritten */
	dnsnap_publish_opts_t o = merge_opts;
	o.flags = DNSNAP_PUBLISH_REPLACE;
	a = (struct fill_arg){ 0 };
	assert_int_equal(dnsnap_snap_publish_fill(p, &o, fill_some, &a, NULL, &ps, &d), DNSNAP_OK);
	assert_false(a.had_base);
	assert_int_equal(entries_of(p), 0);
}

/* Ask @p c for NAME-i.pub.example A @p times times (hits). */
static void ask_times(dnsnap_cache_t *c, const char *name, unsigned i, unsigned times)
{
	char owner[64];
	wb_t w;
	snprintf(owner, sizeof owner, "%s-%u.pub.example", name, i);
	put_header(&w, 0x0100, 1, 0, 0, 0);
	put_name(&w, owner);
	put_u16(&w, 1);
	put_u16(&w, 1);
	dnsnap_query_t q;
	assert_int_equal(dnsnap_query_parse(w.b, w.n, NULL, 0, &q, NULL), DNSNAP_OK);
	uint8_t out[512];
	size_t n;
	for (unsigned k = 0; k < times; k++)
		assert_int_equal(dnsnap_cache_answer(c, &q, NOW + 1, 0, out, sizeof out, &n),
				 DNSNAP_OK);
}

static int has_name(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		    size_t entry_len)
{
	(void)entry, (void)entry_len;
	const char *want = arg; /* a label, as the key holds it (reversed labels) */
	return memmem(key, key_len, want, strlen(want)) != NULL;
}

/* Whether the snapshot at @p p holds a key with the label @p label */
static int holds(const char *p, const char *label)
{
	dnsnap_snap_t *s;
	assert_int_equal(dnsnap_snap_open(p, &s, NULL), DNSNAP_OK);
	int r = dnsnap_snap_foreach(s, has_name, (void *)label);
	dnsnap_snap_close(s);
	return r;
}

/* What the cache spends on an entry: its chunk (a 4-byte header, then entry
 * and key, to 4 bytes: engine/arena.h) and its slot, 8 bytes at the tables'
 * load of about 80%: 10. */
static int alloc_cost(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		      size_t entry_len)
{
	(void)key, (void)entry;
	*(size_t *)arg += (4 + key_len + entry_len + 3) / 4 * 4 + 10;
	return 0;
}

static void test_publish_with_a_bound_keeps_the_most_hit_entries(void **state)
{
	(void)state;
	const char *p = path("bound.snap");
	dnsnap_cache_t *c = cache_of("b", 40);
	for (unsigned i = 0; i < 10; i++)
		ask_times(c, "b", i, 5 + i); /* b-0 .. b-9: the most hit */
	dnsnap_publish_opts_t o = merge_opts;
	dnsnap_publish_stats_t ps;
	dnsnap_diag_t d = { 0 };
	/* no bound, then a bound over what the cache holds: all 40 */
	assert_int_equal(dnsnap_snap_publish(c, p, &o, NULL, &ps, &d), DNSNAP_OK);
	assert_int_equal(ps.write.entries, 40);
	o.flags = DNSNAP_PUBLISH_REPLACE;
	o.max_bytes = 1u << 20;
	assert_int_equal(dnsnap_snap_publish(c, p, &o, NULL, &ps, &d), DNSNAP_OK);
	assert_int_equal(ps.write.entries, 40);
	assert_int_equal(ps.over_bound, 0);
	/* room for about a quarter (an entry costs the cache about 100 bytes
	 * here): the ten most hit stay */
	o.max_bytes = 10 * 128;
	assert_int_equal(dnsnap_snap_publish(c, p, &o, NULL, &ps, &d), DNSNAP_OK);
	assert_true(ps.write.entries >= 10 && ps.write.entries < 40);
	assert_int_equal(ps.over_bound, 40 - ps.write.entries);
	assert_int_equal(entries_of(p), ps.write.entries);
	char label[16];
	for (unsigned i = 0; i < 10; i++) {
		snprintf(label, sizeof label, "%cb-%u", 3, i); /* the label's length byte, then it */
		assert_true(holds(p, label));
	}
	/* and never more than the bound, as the cache counts an entry: its
	 * chunk and a slot */
	dnsnap_snap_t *s;
	assert_int_equal(dnsnap_snap_open(p, &s, NULL), DNSNAP_OK);
	size_t cost = 0;
	assert_int_equal(dnsnap_snap_foreach(s, alloc_cost, &cost), 0);
	dnsnap_snap_close(s);
	assert_true(cost > 0 && cost <= o.max_bytes);
	/* a bound no entry fits in: nothing */
	o.max_bytes = 8;
	assert_int_equal(dnsnap_snap_publish(c, p, &o, NULL, &ps, &d), DNSNAP_OK);
	assert_int_equal(ps.write.entries, 0);
	dnsnap_cache_free(c);
}

static void test_publish_keeps_stale_entries_within_the_window(void **state)
{
	(void)state;
	const char *p = path("stale.snap");
	dnsnap_cache_t *c = cache_of("st", 3); /* TTL 3600 at NOW */
	write_snap(path("stale-base.snap"), "sb", 2);
	dnsnap_publish_opts_t o = { .now = NOW + 3700, .stale_window = 200 }; /* 100 s ago */
	dnsnap_publish_stats_t ps;
	dnsnap_diag_t d = { 0 };
	/* the base: expired too, kept as well */
	dnsnap_snap_publish(c, p, &(dnsnap_publish_opts_t){ .now = NOW + 1 }, NULL, NULL, &d);
	assert_int_equal(dnsnap_snap_publish(c, p, &o, NULL, &ps, &d), DNSNAP_OK);
	assert_int_equal(ps.write.entries, 3);
	assert_int_equal(ps.stale, 3);
	o.stale_window = 50; /* expired longer ago than the window */
	assert_int_equal(dnsnap_snap_publish(c, p, &o, NULL, &ps, &d), DNSNAP_OK);
	assert_int_equal(ps.write.entries, 0);
	assert_int_equal(ps.write.skipped, 3);
	/* a base's stale entries kept within the window */
	dnsnap_cache_t *empty;
	assert_int_equal(dnsnap_cache_new(NULL, &empty), DNSNAP_OK);
	o.stale_window = 200;
	assert_int_equal(dnsnap_snap_publish(empty, path("stale-base.snap"), &o, NULL, &ps, &d),
			 DNSNAP_OK);
	assert_int_equal(ps.write.from_base, 2);
	assert_int_equal(ps.stale, 2);
	o.stale_window = 0;
	assert_int_equal(dnsnap_snap_publish(empty, path("stale-base.snap"), &o, NULL, &ps, &d),
			 DNSNAP_OK);
	assert_int_equal(ps.write.entries, 0);
	assert_int_equal(ps.write.base_expired, 2);
	dnsnap_cache_free(empty);
	dnsnap_cache_free(c);
}

static int exclude_label(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
			 size_t entry_len)
{
	return has_name(arg, key, key_len, entry, entry_len);
}

static void test_publish_leaves_out_what_the_filter_excludes(void **state)
{
	(void)state;
	const char *p = path("ex.snap");
	write_snap(p, "ex", 4); /* the base: ex-0 .. ex-3 */
	dnsnap_cache_t *c = cache_of("ex", 6); /* ex-0 .. ex-5, newer */
	char label[16];
	snprintf(label, sizeof label, "%cex-2", 4);
	dnsnap_publish_opts_t o = merge_opts;
	o.exclude = exclude_label;
	o.exclude_arg = label;
	dnsnap_publish_stats_t ps;
	dnsnap_diag_t d = { 0 };
	assert_int_equal(dnsnap_snap_publish(c, p, &o, NULL, &ps, &d), DNSNAP_OK);
	assert_int_equal(ps.write.entries, 5);
	assert_int_equal(ps.excluded, 1);
	assert_false(holds(p, label));
	dnsnap_cache_free(c);
	/* from the base alone too */
	assert_int_equal(dnsnap_cache_new(NULL, &c), DNSNAP_OK);
	write_snap(p, "ex", 4);
	assert_int_equal(dnsnap_snap_publish(c, p, &o, NULL, &ps, &d), DNSNAP_OK);
	assert_int_equal(ps.write.entries, 3);
	assert_int_equal(ps.excluded, 1);
	assert_false(holds(p, label));
	dnsnap_cache_free(c);
}

static int setup(void **state)
{
	(void)state;
	return tmpdir_make(dir, sizeof dir, "test-publish");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_rewrite_keeps_mode_owner_and_group),
		cmocka_unit_test(test_a_symbolic_link_is_followed_and_stays),
		cmocka_unit_test(test_a_path_that_is_not_a_regular_file_is_refused),
		cmocka_unit_test(test_the_lock_excludes_a_second_writer),
		cmocka_unit_test(test_publish_merges_the_file_at_the_path_and_maps_the_result),
		cmocka_unit_test(test_publish_never_replaces_what_is_not_a_snapshot),
		cmocka_unit_test(test_publish_keeps_a_damaged_base_unless_told),
		cmocka_unit_test(test_publish_replaces_an_unopenable_base_only_when_told),
		cmocka_unit_test(test_publish_waits_for_the_writers_lock),
		cmocka_unit_test(test_publish_fill_filters_the_base_or_publishes_nothing),
		cmocka_unit_test(test_publish_with_a_bound_keeps_the_most_hit_entries),
		cmocka_unit_test(test_publish_keeps_stale_entries_within_the_window),
		cmocka_unit_test(test_publish_leaves_out_what_the_filter_excludes),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
