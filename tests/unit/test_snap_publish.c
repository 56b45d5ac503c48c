/*
 * test_snap_publish.c: where and how a snapshot is published (engine/dnsnap.h,
 * dnsnap_snap_write() and dnsnap_snap_lock()): the replaced file's mode, owner
 * and group kept, a new one 0600; a symbolic link followed and kept; a path
 * that is not a regular file refused; the writers' lock excluding a second
 * writer, following a file renamed over the path, and released by unlock.
 * Many processes at once are tests/cli/test_writers.sh's.
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
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
