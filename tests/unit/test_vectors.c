/*
 * test_vectors.c: every file of spec/vectors, byte for byte.
 *
 * valid/NNN-name.msg encodes (now = 1700000000) to exactly NNN-name.bin, the
 * entry validates, and its dump is exactly NNN-name.txt.
 * invalid/NNN-name.bin fails with exactly the code and offset of .err, and so
 * does invalid/NNN-name.msg. Inputs sit against a no-access page (guard.c).
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dnsnap.h"
#include "guard.h"
#include "print.h"

#define VEC "spec/vectors"
#define NOW 1700000000u

static dnsnap_encoded_t enc;

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *p = malloc((size_t)n + 1);
	assert_non_null(p);
	assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	p[n] = 0;
	*len = (size_t)n;
	return p;
}

/* The vector files with extension ext in dir, sorted; returns the count. */
static size_t list(const char *dir, const char *ext, char names[][128], size_t max)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL && n < max) {
		size_t l = strlen(de->d_name), el = strlen(ext);
		if (l > el && strcmp(de->d_name + l - el, ext) == 0 && l - el < 128) {
			memcpy(names[n], de->d_name, l - el);
			names[n++][l - el] = 0;
		}
	}
	closedir(d);
	qsort(names, n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
	return n;
}

static char *path(const char *sub, const char *name, const char *ext)
{
	static char p[512];
	snprintf(p, sizeof p, VEC "/%s/%s%s", sub, name, ext);
	return p;
}

static void test_valid_vectors_encode_and_dump_byte_for_byte(void **state)
{
	(void)state;
	static char names[256][128];
	size_t n = list(VEC "/valid", ".msg", names, 256);
	assert_true(n >= 11); /* the worked examples of spec/FORMAT.md */
	for (size_t i = 0; i < n; i++) {
		size_t ml, bl, tl;
		uint8_t *msg = slurp(path("valid", names[i], ".msg"), &ml);
		uint8_t *bin = slurp(path("valid", names[i], ".bin"), &bl);
		uint8_t *txt = slurp(path("valid", names[i], ".txt"), &tl);
		assert_non_null(msg);
		assert_non_null(bin);
		assert_non_null(txt);
		uint8_t *g = guard_copy(msg, ml);
		dnsnap_diag_t d;
		int err = dnsnap_msg_encode(g, ml, NOW, NULL, 0, &enc, &d);
		if (err != DNSNAP_OK)
			fail_msg("%s: %s at %zu: %s", names[i], dnsnap_errname(err), d.offset, d.msg);
		guard_free(g);
		size_t kl = (size_t)(bin[0] | bin[1] << 8);
		assert_int_equal(bl, 2 + enc.key_len + enc.entry_len);
		assert_int_equal(kl, enc.key_len);
		assert_memory_equal(bin + 2, enc.key, kl);
		assert_memory_equal(bin + 2 + kl, enc.entry, enc.entry_len);

		g = guard_copy(bin + 2 + kl, bl - 2 - kl);
		assert_int_equal(dnsnap_entry_validate(g, bl - 2 - kl, NULL), DNSNAP_OK);
		char *out;
		size_t outlen;
		FILE *f = open_memstream(&out, &outlen);
		assert_int_equal(print_entry(f, bin + 2, kl, g, bl - 2 - kl), DNSNAP_OK);
		fclose(f);
		if (outlen != tl || memcmp(out, txt, tl) != 0)
			fail_msg("%s: dump differs\n--- expected\n%s--- got\n%s", names[i], txt, out);
		free(out);
		guard_free(g);
		free(msg);
		free(bin);
		free(txt);
	}
}

static void test_invalid_entries_fail_with_the_expected_code_and_offset(void **state)
{
	(void)state;
	static char names[256][128];
	size_t n = list(VEC "/invalid", ".bin", names, 256);
	assert_true(n >= 20);
	for (size_t i = 0; i < n; i++) {
		size_t bl, el;
		uint8_t *bin = slurp(path("invalid", names[i], ".bin"), &bl);
		char *want = (char *)slurp(path("invalid", names[i], ".err"), &el);
		assert_non_null(bin);
		assert_non_null(want);
		assert_true(bl >= 2);
		size_t kl = (size_t)(bin[0] | bin[1] << 8);
		assert_true(bl - 2 >= kl);
		char got[128];
		dnsnap_diag_t d;
		dnsnap_key_t k;
		uint8_t *gk = guard_copy(bin + 2, kl), *ge = guard_copy(bin + 2 + kl, bl - 2 - kl);
		int err = dnsnap_key_decode(gk, kl, &k, &d);
		if (err != DNSNAP_OK)
			snprintf(got, sizeof got, "%s key %zu\n", dnsnap_errname(err), d.offset);
		else if ((err = dnsnap_entry_validate(ge, bl - 2 - kl, &d)) != DNSNAP_OK)
			snprintf(got, sizeof got, "%s entry %zu\n", dnsnap_errname(err), d.offset);
		else
			snprintf(got, sizeof got, "DNSNAP_OK\n");
		if (strcmp(got, want) != 0)
			fail_msg("%s: expected %s got %s", names[i], want, got);
		guard_free(gk);
		guard_free(ge);
		free(bin);
		free(want);
	}
}

static void test_invalid_messages_fail_with_the_expected_code_and_offset(void **state)
{
	(void)state;
	static char names[256][128];
	size_t n = list(VEC "/invalid", ".msg", names, 256);
	assert_true(n >= 15);
	for (size_t i = 0; i < n; i++) {
		size_t ml, el;
		uint8_t *msg = slurp(path("invalid", names[i], ".msg"), &ml);
		char *want = (char *)slurp(path("invalid", names[i], ".err"), &el);
		assert_non_null(msg);
		assert_non_null(want);
		uint8_t *g = guard_copy(msg, ml);
		dnsnap_diag_t d;
		char got[128];
		int err = dnsnap_msg_encode(g, ml, NOW, NULL, 0, &enc, &d);
		snprintf(got, sizeof got, "%s %zu\n", dnsnap_errname(err), err ? d.offset : 0);
		if (strcmp(got, want) != 0)
			fail_msg("%s: expected %s got %s", names[i], want, got);
		guard_free(g);
		free(msg);
		free(want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_vectors_encode_and_dump_byte_for_byte),
		cmocka_unit_test(test_invalid_entries_fail_with_the_expected_code_and_offset),
		cmocka_unit_test(test_invalid_messages_fail_with_the_expected_code_and_offset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
