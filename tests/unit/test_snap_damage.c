/*
 * test_snap_damage.c: what a damaged or replaced snapshot does to a reader
 * in this process: a damaged value is a miss, counted, and skipped by scans
 * (never handed out); a file truncated or overwritten in place under the map
 * gives misses, not SIGBUS; a value moved under another key fails its check.
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
#define NAMES 2000

static dnsnap_encoded_t scratch;
static char dir[64];

static const char *path(const char *name)
{
	return tmpdir_path(dir, name);
}

/* A snapshot of n<i>.dmg.example/A -> 10.<gen>.<i>, for i < NAMES. */
static void write_snap(const char *p, unsigned gen)
{
	dnsnap_cache_t *c;
	assert_int_equal(dnsnap_cache_new(NULL, &c), DNSNAP_OK);
	char name[64];
	wb_t w;
	for (unsigned i = 0; i < NAMES; i++) {
		snprintf(name, sizeof name, "n%u.dmg.example", i);
		put_header(&w, 0x8180, 1, 1, 0, 0);
		put_name(&w, name);
		put_u16(&w, 1);
		put_u16(&w, 1);
		put_ptr(&w, 12);
		size_t rl = put_fixed(&w, 1, 1, 3600);
		put_u32(&w, 0x0a000000u | gen << 16 | i);
		end_rdata(&w, rl);
		assert_int_equal(dnsnap_cache_insert(c, w.b, w.n, NOW, NULL, 0, &scratch, NULL),
				 DNSNAP_OK);
	}
	assert_int_equal(dnsnap_snap_write(c, p, NOW, NULL, NULL), DNSNAP_OK);
	dnsnap_cache_free(c);
}

/* Ask for n<i>: DNSNAP_OK with the address's low 24 bits in *x, or the miss. */
static int ask(dnsnap_snap_t *s, unsigned i, unsigned *x)
{
	wb_t w;
	char name[64];
	dnsnap_query_t q;
	uint8_t out[512];
	size_t n;
	snprintf(name, sizeof name, "n%u.dmg.example", i);
	put_header(&w, 0x0100, 1, 0, 0, 0);
	put_name(&w, name);
	put_u16(&w, 1);
	put_u16(&w, 1);
	assert_int_equal(dnsnap_query_parse(w.b, w.n, NULL, 0, &q, NULL), DNSNAP_OK);
	int err = dnsnap_snap_answer(s, &q, NOW + 1, 0, out, sizeof out, &n);
	if (err == DNSNAP_OK)
		*x = (unsigned)(out[n - 3] << 16 | out[n - 2] << 8 | out[n - 1]);
	return err;
}

static uint8_t *slurp(const char *p, size_t *len)
{
	FILE *f = fopen(p, "rb");
	assert_non_null(f);
	static uint8_t buf[4 << 20];
	*len = fread(buf, 1, sizeof buf, f);
	fclose(f);
	assert_true(*len < sizeof buf);
	return buf;
}

static void spit(const char *p, const uint8_t *b, size_t n, int flags)
{
	int fd = open(p, O_WRONLY | O_CREAT | flags, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b, n), (ssize_t)n);
	close(fd);
}

static int count(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		 size_t entry_len)
{
	(void)key, (void)key_len, (void)entry, (void)entry_len;
	++*(unsigned *)arg;
	return 0;
}

static void test_a_damaged_value_is_a_miss_and_a_skipped_entry(void **state)
{
	(void)state;
	write_snap(path("a.snap"), 1);
	size_t len;
	uint8_t *b = slurp(path("a.snap"), &len);
	/* n7's address, 10.1.0.7, in its value: change it to 10.1.0.8 */
	const uint8_t addr[4] = { 10, 1, 0, 7 };
	uint8_t *at = memmem(b, len, addr, 4);
	assert_non_null(at);
	at[3] = 8;
	spit(path("b.snap"), b, len, O_TRUNC);
	at[3] = 7;
	dnsnap_snap_t *s;
	assert_int_equal(dnsnap_snap_open(path("b.snap"), &s, NULL), DNSNAP_OK);
	unsigned x = 0;
	assert_int_equal(ask(s, 7, &x), DNSNAP_ENOTFOUND); /* never 10.1.0.8 */
	assert_int_equal(dnsnap_snap_bad_entries(s), 1);
	assert_int_equal(ask(s, 6, &x), DNSNAP_OK);
	assert_int_equal(x, 1u << 16 | 6);
	unsigned n = 0;
	dnsnap_scan_stats_t st;
	dnsnap_diag_t d;
	assert_int_equal(dnsnap_snap_scan(s, NULL, 0, count, &n, &st, &d), DNSNAP_ECHECKSUM);
	assert_non_null(strstr(d.msg, "Value_Check mismatch"));
	assert_int_equal(n, NAMES - 1);
	assert_int_equal(st.entries, NAMES - 1);
	assert_int_equal(st.damaged, 1);
	assert_int_equal(dnsnap_snap_verify(s, NULL, NULL), DNSNAP_ECHECKSUM);
	dnsnap_snap_close(s);
}

static void test_a_value_moved_under_another_key_fails_its_check(void **state)
{
	(void)state;
	write_snap(path("m.snap"), 1);
	size_t len;
	uint8_t *b = slurp(path("m.snap"), &len);
	/* n7's and n8's values are the same length: swap their addresses, as a
	 * misdirected write of whole values would. Their checks name the keys. */
	const uint8_t a7[4] = { 10, 1, 0, 7 }, a8[4] = { 10, 1, 0, 8 };
	uint8_t *p7 = memmem(b, len, a7, 4), *p8 = memmem(b, len, a8, 4);
	assert_non_null(p7);
	assert_non_null(p8);
	/* the Value_Check follows the entry: move it with the address */
	uint8_t t[8];
	memcpy(t, p7, 8);
	memcpy(p7, p8, 8);
	memcpy(p8, t, 8);
	spit(path("m2.snap"), b, len, O_TRUNC);
	dnsnap_snap_t *s;
	assert_int_equal(dnsnap_snap_open(path("m2.snap"), &s, NULL), DNSNAP_OK);
	unsigned x = 0;
	assert_int_equal(ask(s, 7, &x), DNSNAP_ENOTFOUND);
	assert_int_equal(ask(s, 8, &x), DNSNAP_ENOTFOUND);
	assert_int_equal(dnsnap_snap_bad_entries(s), 2);
	dnsnap_snap_close(s);
}

static void test_a_file_cut_under_the_map_gives_misses_not_sigbus(void **state)
{
	(void)state;
	write_snap(path("t.snap"), 1);
	dnsnap_snap_t *s;
	assert_int_equal(dnsnap_snap_open(path("t.snap"), &s, NULL), DNSNAP_OK);
	unsigned x = 0;
	assert_int_equal(ask(s, 5, &x), DNSNAP_OK);
	assert_int_equal(dnsnap_snap_changed(s), 0);
	assert_int_equal(truncate(path("t.snap"), 8192), 0);
	for (unsigned i = 0; i < NAMES; i += 97) /* each would fault: none may kill us */
		assert_int_equal(ask(s, i, &x), DNSNAP_ENOTFOUND);
	assert_int_equal(dnsnap_snap_changed(s), 1);
	unsigned n = 0;
	dnsnap_diag_t d;
	assert_int_equal(dnsnap_snap_scan(s, NULL, 0, count, &n, NULL, &d), DNSNAP_ETRUNC);
	assert_non_null(strstr(d.msg, "changed in place"));
	assert_int_equal(dnsnap_snap_verify(s, NULL, &d), DNSNAP_ETRUNC);
	dnsnap_snap_close(s);
}

static void test_a_file_overwritten_in_place_never_answers_wrong(void **state)
{
	(void)state;
	write_snap(path("o.snap"), 1);
	write_snap(path("o2.snap"), 2);
	dnsnap_snap_t *s;
	assert_int_equal(dnsnap_snap_open(path("o.snap"), &s, NULL), DNSNAP_OK);
	size_t len;
	uint8_t *b = slurp(path("o2.snap"), &len);
	spit(path("o.snap"), b, len, O_TRUNC); /* what cp does: truncate, write */
	unsigned answered = 0;
	for (unsigned i = 0; i < NAMES; i++) {
		unsigned x = 0;
		int err = ask(s, i, &x);
		if (err == DNSNAP_OK) { /* only the right name's address, of either file */
			assert_true(x == (1u << 16 | i) || x == (2u << 16 | i));
			answered++;
		} else
			assert_int_equal(err, DNSNAP_ENOTFOUND);
	}
	print_message("overwritten in place: %u of %d names still answered right, the rest "
		      "missed\n", answered, NAMES);
	assert_int_equal(dnsnap_snap_changed(s), 1);
	dnsnap_snap_close(s);
	/* opened again, the new file is whole and good */
	assert_int_equal(dnsnap_snap_open(path("o.snap"), &s, NULL), DNSNAP_OK);
	unsigned x = 0;
	assert_int_equal(ask(s, 9, &x), DNSNAP_OK);
	assert_int_equal(x, 2u << 16 | 9);
	dnsnap_snap_close(s);
}

static void test_a_file_of_one_page_is_cut_short(void **state)
{
	(void)state;
	write_snap(path("p.snap"), 1);
	size_t len;
	uint8_t *b = slurp(path("p.snap"), &len);
	dnsnap_snap_t *s = NULL;
	dnsnap_diag_t d;
	static const size_t cuts[] = { 168, 4096, 4100, 8191, 8192 }; /* around the meta pages */
	for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
		assert_true(cuts[i] < len);
		spit(path("p1.snap"), b, cuts[i], O_TRUNC);
		assert_int_equal(dnsnap_snap_open(path("p1.snap"), &s, &d), DNSNAP_ETRUNC);
		assert_non_null(strstr(d.msg, ": truncated: "));
	}
	assert_null(s);
}

static void test_what_is_not_a_regular_file_is_refused_at_once(void **state)
{
	(void)state;
	dnsnap_snap_t *s = NULL;
	dnsnap_diag_t d;
	assert_int_equal(mkfifo(path("fifo"), 0600), 0); /* opening must not wait for a writer */
	assert_int_equal(dnsnap_snap_open(path("fifo"), &s, &d), DNSNAP_EMAGIC);
	assert_non_null(strstr(d.msg, "not a regular file"));
	assert_int_equal(dnsnap_snap_open(dir, &s, &d), DNSNAP_EMAGIC);
	assert_non_null(strstr(d.msg, "a directory"));
	spit(path("empty"), (const uint8_t *)"", 0, O_TRUNC);
	assert_int_equal(dnsnap_snap_open(path("empty"), &s, &d), DNSNAP_EMAGIC);
	assert_non_null(strstr(d.msg, "an empty file"));
	assert_null(s);
}

static int setup(void **state)
{
	(void)state;
	return tmpdir_make(dir, sizeof dir, "dnsnap-damage");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_damaged_value_is_a_miss_and_a_skipped_entry),
		cmocka_unit_test(test_a_value_moved_under_another_key_fails_its_check),
		cmocka_unit_test(test_a_file_cut_under_the_map_gives_misses_not_sigbus),
		cmocka_unit_test(test_a_file_overwritten_in_place_never_answers_wrong),
		cmocka_unit_test(test_a_file_of_one_page_is_cut_short),
		cmocka_unit_test(test_what_is_not_a_regular_file_is_refused_at_once),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
