/*
 * test_print.c: the presentation escaping every printer of the tool uses
 * (pres_escape, pres_name, pres_string: RFC 1035 5.1 as dig writes it), and
 * the entry filters of dump and purge (filter_opt, filter_ready,
 * filter_match): repeated options add up, prefixes are walked once and in
 * key order. tests/cli/test_print.sh compares the same with dig itself.
 */
#include <getopt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* before cmocka.h, whose fail() macro would rename ours */
#include "cli.h"
#include "print.h"

#include <cmocka.h>

/* what a printer wrote, as a string (freed by the caller) */
static char *esc(const uint8_t *p, size_t n, int what)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);
	assert_non_null(f);
	if (what == 2)
		pres_name(f, p, n);
	else if (what == 3)
		pres_string(f, p, n);
	else
		pres_escape(f, p, n, what);
	assert_int_equal(fclose(f), 0);
	return s;
}

#define CHECK(bytes, what, want)                                                           \
	do {                                                                               \
		char *got = esc((const uint8_t *)(bytes), sizeof(bytes) - 1, (what));     \
		assert_string_equal(got, (want));                                          \
		free(got);                                                                 \
	} while (0)

static void test_labels(void **state)
{
	(void)state;
	CHECK("www", PRES_LABEL, "www");
	CHECK("a.b", PRES_LABEL, "a\\.b");
	CHECK("c d", PRES_LABEL, "c\\032d");
	CHECK("q\"t;(p)", PRES_LABEL, "q\\\"t\\;\\(p\\)");
	CHECK("@$\\", PRES_LABEL, "\\@\\$\\\\");
	CHECK("t\tf\xff\x7f\x00", PRES_LABEL, "t\\009f\\255\\127\\000");
	CHECK("_sip-x*~!", PRES_LABEL, "_sip-x*~!");
}

static void test_strings(void **state)
{
	(void)state;
	CHECK("a\tb", PRES_STRING, "a\\009b");
	CHECK("say \"hi\"", PRES_STRING, "say \\\"hi\\\"");
	CHECK("back\\slash", PRES_STRING, "back\\\\slash");
	CHECK("semi;colon (x) @$.", PRES_STRING, "semi;colon (x) @$."); /* quoted: as they are */
	CHECK("\xff\x00\x1f\x7f~", PRES_STRING, "\\255\\000\\031\\127~");
	CHECK("v=1", 3, "\"v=1\"");
	CHECK("", 3, "\"\"");
}

static void test_names(void **state)
{
	(void)state;
	CHECK("\0", 2, ".");
	CHECK("\3www\7example\3com\0", 2, "www.example.com.");
	CHECK("\3a.b\3c d\3net\0", 2, "a\\.b.c\\032d.net.");
	char buf[8];
	/* print_name() cuts to the buffer, and says "." for the root */
	assert_string_equal(print_name((const uint8_t *)"\0", 1, buf, sizeof buf), ".");
	assert_string_equal(print_name((const uint8_t *)"\7example\3com\0", 13, buf, sizeof buf),
			    "example");
}

/* a decoded key of name (wire), type and tag, for filter_match() */
static int match(const filter_t *f, const char *name, size_t name_len, uint16_t qtype,
		 const char *tag, size_t tag_len)
{
	uint8_t key[600];
	size_t kl;
	assert_int_equal(dnsnap_key_encode((const uint8_t *)name, name_len, qtype, 1, 0,
					   (const uint8_t *)tag, tag_len, key, sizeof key, &kl),
			 DNSNAP_OK);
	dnsnap_key_t k;
	assert_int_equal(dnsnap_key_decode(key, kl, &k, NULL), DNSNAP_OK);
	return filter_match(f, key, kl, &k);
}

static const char www[] = "\3www\7example\3com";   /* 17 bytes with the 0 */
static const char mail[] = "\4mail\7example\3com"; /* 18 */
static const char other[] = "\3www\7example\3org";

static void test_filters(void **state)
{
	(void)state;
	static filter_t f;
	f = (filter_t){ 0 };
	assert_int_equal(filter_opt("t", &f, 'x', "v"), 0); /* not a filter's */
	assert_int_equal(filter_opt("t", &f, OPT_TYPE, "A"), 1);
	assert_int_equal(filter_opt("t", &f, OPT_TYPE, "AAAA"), 1);
	assert_int_equal(filter_opt("t", &f, OPT_TYPE, "TYPE65280"), 1);
	assert_int_equal(filter_opt("t", &f, OPT_TYPE, "NOSUCH"), EXIT_USAGE);
	assert_int_equal(filter_ready("t", &f), 0);
	assert_true(f.any);
	assert_int_equal(f.n_type, 3);
	assert_true(match(&f, www, sizeof www, 1, NULL, 0));
	assert_true(match(&f, www, sizeof www, 28, NULL, 0));
	assert_true(match(&f, www, sizeof www, 65280, NULL, 0));
	assert_false(match(&f, www, sizeof www, 15, NULL, 0));

	/* a name under a zone given too, and the zone twice: one prefix */
	f = (filter_t){ 0 };
	assert_int_equal(filter_opt("t", &f, OPT_NAME, "www.example.com"), 1);
	assert_int_equal(filter_opt("t", &f, OPT_ZONE, "example.com."), 1);
	assert_int_equal(filter_opt("t", &f, OPT_ZONE, "EXAMPLE.com"), 1);
	assert_int_equal(filter_opt("t", &f, OPT_ZONE, "a..b"), EXIT_USAGE);
	assert_int_equal(filter_ready("t", &f), 0);
	assert_int_equal(f.n_prefix, 1);
	assert_true(match(&f, mail, sizeof mail, 1, NULL, 0));
	assert_false(match(&f, other, sizeof other, 1, NULL, 0));

	/* two names: two prefixes, sorted (key order), each matching its own */
	f = (filter_t){ 0 };
	assert_int_equal(filter_opt("t", &f, OPT_NAME, "www.example.org"), 1);
	assert_int_equal(filter_opt("t", &f, OPT_NAME, "mail.example.com"), 1);
	assert_int_equal(filter_ready("t", &f), 0);
	assert_int_equal(f.n_prefix, 2);
	assert_true(dnsnap_key_cmp(f.prefix[0], f.prefix_len[0], f.prefix[1], f.prefix_len[1]) < 0);
	assert_true(match(&f, mail, sizeof mail, 1, NULL, 0));
	assert_true(match(&f, other, sizeof other, 1, NULL, 0));
	assert_false(match(&f, www, sizeof www, 1, NULL, 0));

	/* tags: any of them; '' is the untagged entries */
	f = (filter_t){ 0 };
	assert_int_equal(filter_opt("t", &f, OPT_TAG, "0a0b"), 1);
	assert_int_equal(filter_opt("t", &f, OPT_TAG, ""), 1);
	assert_int_equal(filter_opt("t", &f, OPT_TAG, "xyz"), EXIT_USAGE);
	assert_int_equal(filter_ready("t", &f), 0);
	assert_true(match(&f, www, sizeof www, 1, NULL, 0));
	assert_true(match(&f, www, sizeof www, 1, "\x0a\x0b", 2));
	assert_false(match(&f, www, sizeof www, 1, "\x0a", 1));

	/* at most FILTER_MAX of a kind */
	f = (filter_t){ 0 };
	for (int i = 0; i < FILTER_MAX; i++)
		assert_int_equal(filter_opt("t", &f, OPT_TYPE, "A"), 1);
	assert_int_equal(filter_opt("t", &f, OPT_TYPE, "A"), EXIT_USAGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_filters),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
