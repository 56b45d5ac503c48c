/*
 * test_write_errors.c: the messages of the engine's writers and of the
 * stream reader (issue 11, item 10): dnsnap_path_create_error() for each
 * errno a creation meets, a snapshot writer and the writers' lock naming the
 * path given (never the temporary), import naming what it was given instead
 * of a stream and where a stream cut short ends. The tool's lines are
 * tests/cli/test_messages.sh's.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "dnsnap.h"
#include "tmpdir.h"

static char dir[64];

static const char *why(const char *path, int err)
{
	static char out[512];
	const char *r = dnsnap_path_create_error(path, err, out, sizeof out);
	assert_ptr_equal(r, out);
	return out;
}

static void expect_msg(const char *got, const char *fmt, ...)
{
	char want[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(want, sizeof want, fmt, ap);
	va_end(ap);
	if (strcmp(got, want) != 0)
		fail_msg("message\n  got:  %s\n  want: %s", got, want);
}

static void test_each_errno_names_the_directory_at_fault(void **state)
{
	(void)state;
	char p[200], f[200];
	snprintf(p, sizeof p, "%s/no/deeper/x.snap", dir);
	expect_msg(why(p, ENOENT), "cannot create: directory %s/no/deeper does not exist", dir);
	snprintf(f, sizeof f, "%s/file", dir);
	int fd = open(f, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	close(fd);
	snprintf(p, sizeof p, "%s/file/x.snap", dir);
	expect_msg(why(p, ENOTDIR), "cannot create: %s/file is not a directory", dir);
	snprintf(p, sizeof p, "%s/file/a/b/x.snap", dir);
	expect_msg(why(p, ENOTDIR), "cannot create: %s/file is not a directory", dir);
	snprintf(p, sizeof p, "%s/x.snap", dir);
	expect_msg(why(p, EACCES), "cannot create: no permission to write in directory %s", dir);
	expect_msg(why(p, EPERM), "cannot create: no permission to write in directory %s", dir);
	expect_msg(why(p, EROFS), "cannot create: directory %s is on a read-only file system", dir);
	expect_msg(why(p, ENOSPC), "cannot create: no space left on the device of %s", dir);
	expect_msg(why(p, EISDIR), "cannot create: it is a directory");
	expect_msg(why(p, EIO), "cannot create: %s", strerror(EIO));
	/* the directory exists: ENOENT is then not its fault */
	expect_msg(why(p, ENOENT), "cannot create: %s", strerror(ENOENT));
	expect_msg(why("x.snap", EACCES), "cannot create: no permission to write in directory .");
	expect_msg(why("/x.snap", EROFS),
		   "cannot create: directory / is on a read-only file system");
}

static void test_a_writer_and_the_lock_name_the_path_not_the_temporary(void **state)
{
	(void)state;
	char p[200];
	snprintf(p, sizeof p, "%s/missing/x.snap", dir);
	dnsnap_diag_t d = { 0 };
	dnsnap_snapw_t *w = NULL;
	assert_int_equal(dnsnap_snapw_begin(p, &w, &d), -ENOENT);
	assert_null(w);
	expect_msg(d.msg, "%s: cannot create: directory %s/missing does not exist", p, dir);
	dnsnap_snap_lock_t *l = NULL;
	memset(&d, 0, sizeof d);
	assert_int_equal(dnsnap_snap_lock(p, 0, &l, &d), -ENOENT);
	assert_null(l);
	expect_msg(d.msg, "%s: cannot create: directory %s/missing does not exist", p, dir);
}

/* dnsnap_import() of @p n bytes; the message in @p d */
static int import_bytes(const uint8_t *b, size_t n, dnsnap_diag_t *d)
{
	const char *in = tmpdir_path(dir, "in.dnsx");
	int fd = open(in, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b, n), (ssize_t)n);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	memset(d, 0, sizeof *d);
	int err = dnsnap_import(fd, tmpdir_path(dir, "out.snap"), 1700000000u, NULL, NULL, d);
	close(fd);
	struct stat st;
	assert_int_not_equal(stat(tmpdir_path(dir, "out.snap"), &st), 0); /* nothing written */
	return err;
}

static void test_import_names_what_it_was_given_instead(void **state)
{
	(void)state;
	uint8_t b[64] = { 0 };
	dnsnap_diag_t d;
	uint32_t lmdb = 0xBEEFC0DEu; /* LMDB's magic at byte 16, in host order */
	memcpy(b + 16, &lmdb, 4);
	assert_int_equal(import_bytes(b, sizeof b, &d), DNSNAP_EZSTD);
	expect_msg(d.msg, "not an export stream (it is an LMDB file, a dnsnap snapshot, which "
			  "dnsnap export turns into a stream)");
	lmdb = __builtin_bswap32(lmdb); /* a snapshot of the other byte order too */
	memcpy(b + 16, &lmdb, 4);
	assert_int_equal(import_bytes(b, sizeof b, &d), DNSNAP_EZSTD);
	assert_non_null(strstr(d.msg, "it is an LMDB file"));
	static const uint8_t pcap[24] = { 0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0 };
	assert_int_equal(import_bytes(pcap, sizeof pcap, &d), DNSNAP_EZSTD);
	expect_msg(d.msg, "not an export stream (it is a packet capture, which dnsnap load reads "
			  "into a snapshot)");
	static const char text[] = "START_RRSET_CACHE\n";
	assert_int_equal(import_bytes((const uint8_t *)text, sizeof text - 1, &d), DNSNAP_EZSTD);
	expect_msg(d.msg, "not an export stream (it is Unbound's cache text, which dnsnap load "
			  "reads into a snapshot)");
	static const uint8_t other[8] = "GIF89a..";
	assert_int_equal(import_bytes(other, sizeof other, &d), DNSNAP_EZSTD);
	expect_msg(d.msg, "not an export stream (its first bytes are not a zstd frame's)");
	assert_int_equal(import_bytes(other, 0, &d), DNSNAP_ETRUNC);
	expect_msg(d.msg, "empty, not an export stream");
}

static void test_a_stream_cut_short_says_where_it_ended(void **state)
{
	(void)state;
	/* the export stream of an empty snapshot, cut inside its zstd frame */
	dnsnap_cache_t *c;
	assert_int_equal(dnsnap_cache_new(NULL, &c), DNSNAP_OK);
	const char *snap = tmpdir_path(dir, "empty.snap");
	assert_int_equal(dnsnap_snap_write(c, snap, 1700000000u, NULL, NULL), DNSNAP_OK);
	dnsnap_cache_free(c);
	dnsnap_snap_t *s;
	assert_int_equal(dnsnap_snap_open(snap, &s, NULL), DNSNAP_OK);
	const char *sx = tmpdir_path(dir, "empty.dnsx");
	int fd = open(sx, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(dnsnap_export_write(s, fd, 3, 0, NULL, NULL), DNSNAP_OK);
	dnsnap_snap_close(s);
	off_t len = lseek(fd, 0, SEEK_END);
	assert_true(len > 20);
	uint8_t *b = malloc((size_t)len);
	assert_non_null(b);
	assert_int_equal(pread(fd, b, (size_t)len, 0), (ssize_t)len);
	close(fd);
	unlink(sx);
	unlink(snap);
	dnsnap_diag_t d;
	assert_int_equal(import_bytes(b, 20, &d), DNSNAP_ETRUNC);
	expect_msg(d.msg, "the stream ends at byte 0 of the decompressed data, before the stream "
			  "header; the file's 20 bytes end inside a zstd frame (truncated?)");
	assert_int_equal(d.offset, 0);
	free(b);
}

static int setup(void **state)
{
	(void)state;
	return tmpdir_make(dir, sizeof dir, "test-write-errors");
}

static int teardown(void **state)
{
	(void)state;
	unlink(tmpdir_path(dir, "file"));
	return tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_errno_names_the_directory_at_fault),
		cmocka_unit_test(test_a_writer_and_the_lock_name_the_path_not_the_temporary),
		cmocka_unit_test(test_import_names_what_it_was_given_instead),
		cmocka_unit_test(test_a_stream_cut_short_says_where_it_ended),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
