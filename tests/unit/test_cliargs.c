/*
 * test_cliargs.c: what every command's arguments and JSON go through: the
 * option parser (opt_next, opt_operands), time arguments (time_arg) and the
 * JSON writer (jw_*), whose output ldns-free checks here parse back by hand.
 */
#include <getopt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* before cmocka.h, whose fail() macro would rename ours */
#include "cli.h"
#include "json.h"

#include <cmocka.h>

static uint32_t t_of(const char *v, int *rc)
{
	uint32_t t = 0;
	*rc = time_arg("test", "--now", v, &t);
	return t;
}

static void test_time_forms(void **state)
{
	(void)state;
	int rc;
	assert_int_equal(t_of("1700000000", &rc), 1700000000u);
	assert_int_equal(rc, 0);
	assert_int_equal(t_of("2026-11-30T12:00:00Z", &rc), 1796040000u);
	assert_int_equal(rc, 0);
	assert_int_equal(t_of("2026-11-30T13:00:00+01:00", &rc), 1796040000u);
	assert_int_equal(t_of("2026-11-30T07:00-05:00", &rc), 1796040000u);
	assert_int_equal(t_of("2026-11-30", &rc), 1795996800u);
	assert_int_equal(t_of("2026-11-30T13:00:00+0100", &rc), 1796040000u);
	assert_int_equal(t_of("2026-11-30T13:00+01", &rc), 1796040000u);
	assert_int_equal(t_of("2026-11-30T12:00:00.75Z", &rc), 1796040000u);
	assert_int_equal(t_of("2026-11-30 12:00:00z", &rc), 1796040000u);
	assert_int_equal(rc, 0);
	assert_int_equal(t_of("1970-01-01T00:00:00Z", &rc), 0u);
	assert_int_equal(t_of("2000-02-29T00:00:00Z", &rc), 951782400u);
	assert_int_equal(rc, 0);
	uint32_t now = (uint32_t)time(NULL);
	uint32_t t = t_of("+1h", &rc);
	assert_int_equal(rc, 0);
	assert_true(t >= now + 3600 && t <= now + 3602);
	t = t_of("-30m", &rc);
	assert_true(t + 1800 >= now && t + 1800 <= now + 2);
	t = t_of("+2d", &rc);
	assert_true(t >= now + 172800 && t <= now + 172802);
	t = t_of("-90", &rc);
	assert_true(t + 90 >= now && t + 90 <= now + 2);
}

static void test_time_refused(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"", "x", "12abc", "4294967296", "-1x", "+h", "+1y", "2026-13-01", "2026-02-30",
		"2026-11-30T12:00:00", "2026-11-30T25:00Z", "2026-11-30T12:00:00+1", "1969-12-31",
		"2106-02-08", "2026-11-30Tnoon", "--", "2026-11-30T12:00", "2026-11-30T12:00:00.Z",
		"2026-11-30T12:00+1", "2026-11-30T12:00+24:00", "+2026-11-30", "2026-1-30",
		"2026-11-30T12:00Z ", " 1700000000",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int rc;
		t_of(bad[i], &rc);
		if (rc != EXIT_USAGE)
			fail_msg("accepted: '%s'", bad[i]);
	}
}

static void test_time_iso(void **state)
{
	(void)state;
	char s[21];
	time_iso(1796040000u, s);
	assert_string_equal(s, "2026-11-30T12:00:00Z");
}

static const struct option longopts[] = {
	{ "name", required_argument, NULL, 'n' },
	{ "json", no_argument, NULL, 'j' },
	{ 0 },
};

/* parse argv; the options seen as "n=VALUE j ", the operands after "|" */
static int parse(int argc, char **argv, char *out, size_t cap)
{
	optind = 1;
	out[0] = 0;
	int c;
	while ((c = opt_next("test", argc, argv, "o:", longopts)) != -1) {
		if (c == OPT_ERROR)
			return EXIT_USAGE;
		char one[64];
		snprintf(one, sizeof one, "%c%s%s ", c, optarg && c != 'j' ? "=" : "",
			 optarg && c != 'j' ? optarg : "");
		strncat(out, one, cap - strlen(out) - 1);
	}
	strncat(out, "|", cap - strlen(out) - 1);
	for (int i = optind; i < argc; i++) {
		strncat(out, argv[i], cap - strlen(out) - 1);
		strncat(out, " ", cap - strlen(out) - 1);
	}
	return 0;
}

static void test_options(void **state)
{
	(void)state;
	char out[256];
	char *a1[] = { "dump", "snap", "--name=x", "--json", "--name", "y", "-o", "f", NULL };
	assert_int_equal(parse(8, a1, out, sizeof out), 0);
	assert_string_equal(out, "n=x j n=y o=f |snap ");
	char *a2[] = { "dump", "--", "--json", "-", NULL };
	assert_int_equal(parse(4, a2, out, sizeof out), 0);
	assert_string_equal(out, "|--json - ");
	char *a3[] = { "dump", "snap", "--name", NULL };
	assert_int_equal(parse(3, a3, out, sizeof out), EXIT_USAGE);
	char *a4[] = { "dump", "--zone=x", NULL };
	assert_int_equal(parse(2, a4, out, sizeof out), EXIT_USAGE);
	char *a5[] = { "dump", "--json=1", NULL };
	assert_int_equal(parse(2, a5, out, sizeof out), EXIT_USAGE);
	char *a6[] = { "dump", "-x", NULL };
	assert_int_equal(parse(2, a6, out, sizeof out), EXIT_USAGE);
	/* a value that starts with '-' is a value (--now -30m) */
	char *a7[] = { "dump", "--name", "-30m", NULL };
	assert_int_equal(parse(3, a7, out, sizeof out), 0);
	assert_string_equal(out, "n=-30m |");
	char *a8[] = { "dump", "a", "b", "c", NULL };
	optind = 1;
	assert_int_equal(opt_operands("test", 4, a8, 1, 2, "SNAP"), -1);
	assert_int_equal(opt_operands("test", 4, a8, 1, -1, "SNAP"), 3);
	assert_int_equal(opt_operands("test", 4, a8, 4, -1, "SNAP"), -1);
}

static char *json_of(void (*fn)(jw_t *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	jw_t j;
	jw_init(&j, f);
	fn(&j);
	fclose(f);
	return buf;
}

static void nested(jw_t *j)
{
	jw_obj(j);
	jw_kstr(j, "path", "a\"b\\c\td\n\x01\x7f");
	jw_key(j, "list");
	jw_arr(j);
	jw_u64(j, 1);
	jw_i64(j, -2);
	jw_obj(j);
	jw_end(j);
	jw_arr(j);
	jw_end(j);
	jw_str(j, NULL);
	jw_end(j);
	jw_kbool(j, "ok", 1);
	jw_kdbl(j, "r", 0.5, 2);
	jw_kstr(j, "utf8", "\xc3\xa9\xe2\x82\xac");
	jw_kstr(j, "bytes", "\xff\xc3(\xed\xa0\x80");
	jw_end(j);
	jw_nl(j);
}

static void test_json(void **state)
{
	(void)state;
	char *s = json_of(nested);
	assert_string_equal(s, "{\"path\":\"a\\\"b\\\\c\\td\\n\\u0001\\u007f\","
			       "\"list\":[1,-2,{},[],null],\"ok\":true,\"r\":0.50,"
			       "\"utf8\":\"\xc3\xa9\xe2\x82\xac\","
			       "\"bytes\":\"\\u00ff\\u00c3(\\u00ed\\u00a0\\u0080\"}\n");
	free(s);
}

static void many(jw_t *j)
{
	jw_arr(j);
	for (int i = 0; i < 300; i++)
		jw_i64(j, i);
	jw_end(j);
}

/* past 256 values a level still writes every comma */
static void test_json_many_values(void **state)
{
	(void)state;
	char *s = json_of(many);
	char want[2048] = "[";
	for (int i = 0; i < 300; i++)
		snprintf(want + strlen(want), sizeof want - strlen(want), "%s%d", i ? "," : "", i);
	strcat(want, "]");
	assert_string_equal(s, want);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_time_forms),   cmocka_unit_test(test_time_refused),
		cmocka_unit_test(test_time_iso),     cmocka_unit_test(test_options),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_json_many_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
