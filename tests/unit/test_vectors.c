/*
 * test_vectors.c: every file of spec/vectors, byte for byte.
 *
 * valid/NNN-name.msg encodes (now = 1700000000) to exactly NNN-name.bin, the
 * entry validates, and its dump is exactly NNN-name.txt.
 * invalid/NNN-name.bin fails with exactly the code and offset of .err, and so
 * does invalid/NNN-name.msg. Inputs sit against a no-access page (guard.c).
 * valid/3NN-stream-name.dnsx imports into a snapshot that verifies, is dated
 * at the import (not at the stream's Created_At) and dumps as its .txt;
 * invalid/3NN-stream-name.dnsx is refused with the code and offset of its
 * .err and leaves no file behind (spec/FORMAT.md, "Export stream vectors").
 * valid/4NN-snapshot-name.snap opens, verifies, finds what it scans and dumps
 * as its .txt; invalid/4NN-snapshot-name.snap opens, scans, verifies and
 * looks up exactly as every line of its .err says ("Snapshot vectors").
 * valid/5NN-l2-name.l2 opens and dumps as its .txt; invalid/5NN-l2-name.l2
 * fails with the code and offset of its .err ("L2 value vectors").
 */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <zstd.h>

#include "dnsnap.h"
#include "guard.h"
#include "print.h"
#include "tmpdir.h"
#include "vecreport.h"
#include "byteorder.h"

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
	int n = snprintf(p, sizeof p, VEC "/%s/%s%s", sub, name, ext);
	assert_true(n > 0 && (size_t)n < sizeof p);
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

/* ------------------------------------------------------- export streams */

/* Import stream file @p in to @p target at NOW. */
static int import_file(const char *in, const char *target, dnsnap_diag_t *d)
{
	int fd = open(in, O_RDONLY);
	assert_true(fd >= 0);
	int err = dnsnap_import(fd, target, NOW, NULL, NULL, d);
	close(fd);
	return err;
}

static char sdir[256]; /* the stream tests' directory (setup_dir, remove_dir) */

static int setup_dir(void **state)
{
	(void)state;
	return tmpdir_make(sdir, sizeof sdir, "stream-vectors");
}

static int remove_dir(void **state)
{
	(void)state;
	return tmpdir_remove(sdir);
}

/* Fail unless sdir holds exactly the file @p only: a refused import adds no
 * file, a published one leaves no temporary. */
static void only_file(const char *vec, const char *only)
{
	DIR *d = opendir(sdir);
	assert_non_null(d);
	char other[512] = "";
	int seen = 0;
	for (struct dirent *de; (de = readdir(d)) != NULL;) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (strcmp(de->d_name, only) == 0)
			seen = 1;
		else if (strlen(other) + strlen(de->d_name) + 2 < sizeof other)
			strcat(strcat(other, " "), de->d_name);
	}
	closedir(d);
	if (!seen || other[0] != 0)
		fail_msg("%s: the directory holds%s%s%s", vec, other, seen ? "" : ", not ",
			 seen ? "" : only);
}

/* All frames of a .dnsx, decompressed (skippable frames give nothing). */
static uint8_t *unzstd(const uint8_t *z, size_t zn, size_t *len)
{
	ZSTD_DCtx *dc = ZSTD_createDCtx();
	assert_non_null(dc);
	size_t cap = 1 << 16, n = 0, r = 0;
	uint8_t *b = malloc(cap);
	assert_non_null(b);
	ZSTD_inBuffer ib = { z, zn, 0 };
	while (ib.pos < ib.size || r != 0) {
		if (cap - n < 4096) {
			b = realloc(b, cap *= 2);
			assert_non_null(b);
		}
		ZSTD_outBuffer ob = { b + n, cap - n, 0 };
		r = ZSTD_decompressStream(dc, &ob, &ib);
		assert_false(ZSTD_isError(r));
		n += ob.pos;
	}
	ZSTD_freeDCtx(dc);
	*len = n;
	return b;
}

/* The stream header's Created_At TLV (type 1) of a decompressed stream. */
static uint64_t created_at(const uint8_t *raw, size_t rn)
{
	assert_true(rn >= 12);
	size_t hsize = (size_t)(raw[8] | raw[9] << 8), o = 12;
	assert_true(hsize <= rn);
	while (o + 3 <= hsize) {
		size_t len = (size_t)(raw[o + 1] | raw[o + 2] << 8);
		if (raw[o] == 1 && len == 8 && o + 3 + 8 <= hsize)
			return ld64le(raw + o + 3);
		o += 3 + len;
	}
	fail_msg("no Created_At in the stream header");
	return 0;
}

typedef struct dump {
	FILE *f;
	int err;
} dump_t;

static int dump_one(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		    size_t entry_len)
{
	dump_t *dp = arg;
	if (dp->err == DNSNAP_OK)
		dp->err = print_entry(dp->f, key, key_len, entry, entry_len);
	return 0;
}

static void test_valid_streams_import_and_hold_their_entries(void **state)
{
	(void)state;
	static char names[256][128];
	size_t n = list(VEC "/valid", ".dnsx", names, 256);
	assert_true(n >= 6);
	char target[300];
	snprintf(target, sizeof target, "%s/imported.snap", sdir);
	for (size_t i = 0; i < n; i++) {
		size_t zn, rn, tl;
		uint8_t *z = slurp(path("valid", names[i], ".dnsx"), &zn);
		uint8_t *txt = slurp(path("valid", names[i], ".txt"), &tl);
		assert_non_null(z);
		assert_non_null(txt);
		uint8_t *raw = unzstd(z, zn, &rn);
		assert_true(rn >= 18);
		uint64_t count = ld64le(raw + rn - 16), sum = ld64le(raw + rn - 8);

		dnsnap_diag_t d = { 0 };
		time_t before = time(NULL);
		int err = import_file(path("valid", names[i], ".dnsx"), target, &d);
		time_t after = time(NULL);
		if (err != DNSNAP_OK)
			fail_msg("%s: %s at %zu: %s", names[i], dnsnap_errname(err), d.offset, d.msg);
		only_file(names[i], "imported.snap");
		dnsnap_snap_t *s;
		assert_int_equal(dnsnap_snap_open(target, &s, &d), DNSNAP_OK);
		if ((err = dnsnap_snap_verify(s, NULL, &d)) != DNSNAP_OK)
			fail_msg("%s: verify: %s: %s", names[i], dnsnap_errname(err), d.msg);
		dnsnap_snap_info_t info;
		dnsnap_snap_info(s, &info);
		assert_int_equal(info.entry_count, count);
		assert_int_equal(info.digest, sum);
		/* a new snapshot: made at the import, not when the stream's source was */
		uint64_t stream_created = created_at(raw, rn);
		if (info.created_at < (uint64_t)before || info.created_at > (uint64_t)after ||
		    info.created_at == stream_created)
			fail_msg("%s: Created_At %llu, the import ran from %lld to %lld, the stream "
				 "says %llu", names[i], (unsigned long long)info.created_at,
				 (long long)before, (long long)after,
				 (unsigned long long)stream_created);
		char *out;
		size_t outlen;
		dump_t dp = { open_memstream(&out, &outlen), DNSNAP_OK };
		assert_int_equal(dnsnap_snap_foreach(s, dump_one, &dp), DNSNAP_OK);
		fclose(dp.f);
		assert_int_equal(dp.err, DNSNAP_OK);
		if (outlen != tl || memcmp(out, txt, tl) != 0)
			fail_msg("%s: dump differs\n--- expected\n%s--- got\n%s", names[i], txt, out);
		dnsnap_snap_close(s);
		unlink(target);
		free(out);
		free(raw);
		free(txt);
		free(z);
	}
}

static void test_invalid_streams_fail_and_leave_the_target_alone(void **state)
{
	(void)state;
	static char names[256][128];
	size_t n = list(VEC "/invalid", ".dnsx", names, 256);
	assert_true(n >= 30);
	char fresh[300], kept[300];
	snprintf(fresh, sizeof fresh, "%s/fresh.snap", sdir);
	snprintf(kept, sizeof kept, "%s/kept.snap", sdir);
	/* a snapshot at the target before the import: it must survive */
	assert_int_equal(import_file(path("valid", "302-stream-four-entries", ".dnsx"), kept, NULL),
			 DNSNAP_OK);
	size_t kn;
	uint8_t *kb = slurp(kept, &kn);
	assert_non_null(kb);
	for (size_t i = 0; i < n; i++) {
		size_t el;
		char *want = (char *)slurp(path("invalid", names[i], ".err"), &el);
		assert_non_null(want);
		/* DNSNAP_EXXX OFFSET|zstd [MESSAGE] */
		char code[64], off[32];
		int rest = 0;
		assert_int_equal(sscanf(want, "%63s %31s %n", code, off, &rest), 2);
		char *text = want + rest;
		text[strcspn(text, "\n")] = 0;
		for (int k = 0; k < 2; k++) {
			const char *target = k == 0 ? fresh : kept;
			dnsnap_diag_t d = { 0 };
			int err = import_file(path("invalid", names[i], ".dnsx"), target, &d);
			const char *got = err == DNSNAP_OK ? "DNSNAP_OK" : dnsnap_errname(err);
			if (got == NULL || strcmp(got, code) != 0 ||
			    (strcmp(off, "zstd") != 0 && strtoull(off, NULL, 10) != d.offset) ||
			    strstr(d.msg, text) == NULL)
				fail_msg("%s: expected %s %s %s, got %s %zu (%s)", names[i], code,
					 off, text, got ? got : "?", d.offset, d.msg);
			only_file(names[i], "kept.snap");
		}
		size_t now_n;
		uint8_t *now_b = slurp(kept, &now_n);
		assert_non_null(now_b);
		if (now_n != kn || memcmp(now_b, kb, kn) != 0)
			fail_msg("%s: the snapshot at the target changed", names[i]);
		free(now_b);
		free(want);
	}
	free(kb);
}

/*
 * Snapshot vectors: files of a little-endian host with 4096-byte pages; on a
 * host of the other byte order every one is refused by name, at page 0's
 * magic, which is checked instead.
 */
static int host_is_little_endian(void)
{
	const uint16_t one = 1;
	return *(const uint8_t *)&one == 1;
}

static void test_snapshot_vectors_hold_the_spec_examples(void **state)
{
	(void)state;
	/* vector 001's key and entry; the Value_Check of the spec's worked example */
	static const uint8_t key[] = { 3, 'c', 'o', 'm', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3,
				       'w', 'w', 'w', 0, 0, 1, 0, 1, 0, 0 };
	static const uint8_t check[] = { 0xdb, 0x82, 0x5a, 0xf0 };
	size_t fl, el;
	uint8_t *file = slurp(VEC "/valid/401-snapshot-one-entry.snap", &fl);
	uint8_t *bin = slurp(VEC "/valid/001-a.bin", &el); /* Key_Len, key, entry */
	assert_non_null(file);
	assert_non_null(bin);
	assert_true(el > 2 + sizeof key);
	assert_memory_equal(bin + 2, key, sizeof key);
	const uint8_t *entry = bin + 2 + sizeof key;
	el -= 2 + sizeof key;
	uint8_t *at = memmem(file, fl, entry, el);
	assert_non_null(at); /* the value: the entry, then its Value_Check */
	assert_memory_equal(at + el, check, 4);
	if (host_is_little_endian()) { /* 405 is format 2.1 */
		dnsnap_snap_t *s;
		dnsnap_diag_t d;
		assert_int_equal(dnsnap_snap_open(VEC "/valid/405-snapshot-index.snap", &s, &d),
				 DNSNAP_OK);
		dnsnap_snap_info_t in;
		dnsnap_snap_info(s, &in);
		assert_int_equal(in.major, 2);
		assert_int_equal(in.minor, 1);
		dnsnap_snap_close(s);
	}
	free(file);
	free(bin);
}

/* On a big-endian host: refused at page 0's magic, "the other byte order". */
static void refused_for_byte_order(const char *vec, const char *file)
{
	dnsnap_snap_t *s = NULL;
	dnsnap_diag_t d = { 0 };
	int err = dnsnap_snap_open(file, &s, &d);
	if (err != DNSNAP_EMAGIC || d.offset != 16)
		fail_msg("%s: on this big-endian host: %s at %zu (%s)", vec,
			 dnsnap_errname(err) ? dnsnap_errname(err) : "?", d.offset, d.msg);
	dnsnap_snap_close(s);
}

static void test_invalid_snapshots_report_as_their_err(void **state)
{
	(void)state;
	static char names[256][128];
	static char got[VECREPORT_MAX], why[VECREPORT_MAX + 128];
	static vecreport_key_t keys[VECREPORT_KEYS];
	size_t n = list(VEC "/invalid", ".snap", names, 256);
	assert_true(n >= 50);
	for (size_t i = 0; i < n; i++) {
		size_t el;
		char *want = (char *)slurp(path("invalid", names[i], ".err"), &el);
		if (want == NULL)
			fail_msg("%s: no .err", names[i]);
		char file[512];
		snprintf(file, sizeof file, "%s", path("invalid", names[i], ".snap"));
		if (!host_is_little_endian()) {
			refused_for_byte_order(names[i], file);
		} else {
			size_t nk = vecreport_keys(want, keys, VECREPORT_KEYS);
			vecreport_snap(file, keys, nk, got, sizeof got);
			if (vecreport_compare(want, got, why, sizeof why) != 0)
				fail_msg("%s: %s", names[i], why);
		}
		free(want);
	}
}

static int keep_key(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		    size_t entry_len)
{
	dump_t *dp = arg;
	if (dp->err == DNSNAP_OK)
		dp->err = print_entry(dp->f, key, key_len, entry, entry_len);
	return 0;
}

/* A valid snapshot: opens, scans whole without damage (Entry_Count entries),
 * verifies, finds each key it scans with the bytes the scan gave, dumps as
 * its .txt. */
static void valid_snapshot(const char *name, const char *file)
{
	dnsnap_snap_t *s;
	dnsnap_diag_t d = { 0 };
	int err = dnsnap_snap_open(file, &s, &d);
	if (err != DNSNAP_OK)
		fail_msg("%s: open: %s at %zu: %s", name, dnsnap_errname(err), d.offset, d.msg);
	if ((err = dnsnap_snap_verify(s, NULL, &d)) != DNSNAP_OK)
		fail_msg("%s: verify: %s at %zu: %s", name, dnsnap_errname(err), d.offset, d.msg);
	char *out;
	size_t outlen, tl;
	dump_t dp = { open_memstream(&out, &outlen), DNSNAP_OK };
	dnsnap_scan_stats_t st;
	assert_int_equal(dnsnap_snap_scan(s, NULL, 0, keep_key, &dp, &st, &d), DNSNAP_OK);
	fclose(dp.f);
	assert_int_equal(dp.err, DNSNAP_OK);
	dnsnap_snap_info_t in;
	dnsnap_snap_info(s, &in);
	assert_int_equal(st.entries, in.entry_count);
	assert_int_equal(st.damaged, 0);
	uint8_t *txt = slurp(path("valid", name, ".txt"), &tl);
	if (txt == NULL)
		fail_msg("%s: no .txt", name);
	if (outlen != tl || memcmp(out, txt, tl) != 0)
		fail_msg("%s: dump differs\n--- expected\n%s--- got\n%s", name, txt, out);
	free(out);
	free(txt);
	dnsnap_snap_close(s);
}

/* Every key a valid snapshot's scan hands over is found, with those bytes. */
typedef struct lookups {
	dnsnap_snap_t *s;
	int bad;
} lookups_t;

static int look_up(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		   size_t entry_len)
{
	lookups_t *lk = arg;
	static uint8_t v[DNSNAP_ENTRY_MAX];
	size_t vl;
	if (dnsnap_snap_get(lk->s, key, key_len, v, sizeof v, &vl) != DNSNAP_OK || vl != entry_len ||
	    memcmp(v, entry, vl) != 0)
		lk->bad++;
	return 0;
}

static void test_valid_snapshots_open_verify_find_and_dump(void **state)
{
	(void)state;
	static char names[64][128];
	size_t n = list(VEC "/valid", ".snap", names, 64);
	assert_true(n >= 4);
	for (size_t i = 0; i < n; i++) {
		char file[512];
		snprintf(file, sizeof file, "%s", path("valid", names[i], ".snap"));
		if (!host_is_little_endian()) {
			refused_for_byte_order(names[i], file);
			continue;
		}
		valid_snapshot(names[i], file);
		dnsnap_snap_t *s;
		assert_int_equal(dnsnap_snap_open(file, &s, NULL), DNSNAP_OK);
		lookups_t lk = { .s = s };
		assert_int_equal(dnsnap_snap_foreach(s, look_up, &lk), DNSNAP_OK);
		if (lk.bad != 0 || dnsnap_snap_bad_entries(s) != 0)
			fail_msg("%s: %d keys not found as scanned", names[i], lk.bad);
		dnsnap_snap_close(s);
	}
}

/* ------------------------------------------------------------ L2 values */

static void test_l2_value_vectors_open_or_fail_as_their_err(void **state)
{
	(void)state;
	static char names[128][128];
	char got[128];
	size_t n = list(VEC "/valid", ".l2", names, 128);
	assert_true(n >= 3);
	for (size_t i = 0; i < n; i++) {
		size_t fl, tl;
		uint8_t *f = slurp(path("valid", names[i], ".l2"), &fl);
		uint8_t *txt = slurp(path("valid", names[i], ".txt"), &tl);
		assert_non_null(f);
		assert_non_null(txt);
		size_t kl = (size_t)(f[0] | f[1] << 8);
		assert_true(fl >= 2 + kl);
		uint8_t *g = guard_copy(f + 2 + kl, fl - 2 - kl);
		const uint8_t *entry;
		size_t entry_len;
		dnsnap_diag_t d = { 0 };
		int err = dnsnap_l2_value_open(f + 2, kl, g, fl - 2 - kl, &entry, &entry_len, &d);
		if (err != DNSNAP_OK)
			fail_msg("%s: %s at %zu: %s", names[i], dnsnap_errname(err), d.offset, d.msg);
		char *out;
		size_t outlen;
		FILE *m = open_memstream(&out, &outlen);
		assert_int_equal(print_entry(m, f + 2, kl, entry, entry_len), DNSNAP_OK);
		fclose(m);
		if (outlen != tl || memcmp(out, txt, tl) != 0)
			fail_msg("%s: dump differs\n--- expected\n%s--- got\n%s", names[i], txt, out);
		free(out);
		guard_free(g);
		free(f);
		free(txt);
	}
	n = list(VEC "/invalid", ".l2", names, 128);
	assert_true(n >= 13);
	for (size_t i = 0; i < n; i++) {
		size_t fl, el;
		uint8_t *f = slurp(path("invalid", names[i], ".l2"), &fl);
		char *want = (char *)slurp(path("invalid", names[i], ".err"), &el);
		assert_non_null(f);
		assert_non_null(want);
		vecreport_l2(f, fl, got, sizeof got);
		if (strcmp(got, want) != 0)
			fail_msg("%s: expected %s got %s", names[i], want, got);
		/* and against a no-access page: no read past the value */
		size_t kl = (size_t)(f[0] | f[1] << 8);
		uint8_t *g = guard_copy(f + 2 + kl, fl - 2 - kl);
		const uint8_t *entry;
		size_t entry_len;
		assert_int_not_equal(dnsnap_l2_value_open(f + 2, kl, g, fl - 2 - kl, &entry,
							  &entry_len, NULL), DNSNAP_OK);
		guard_free(g);
		free(f);
		free(want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_vectors_encode_and_dump_byte_for_byte),
		cmocka_unit_test(test_snapshot_vectors_hold_the_spec_examples),
		cmocka_unit_test(test_valid_snapshots_open_verify_find_and_dump),
		cmocka_unit_test(test_invalid_snapshots_report_as_their_err),
		cmocka_unit_test(test_l2_value_vectors_open_or_fail_as_their_err),
		cmocka_unit_test(test_invalid_entries_fail_with_the_expected_code_and_offset),
		cmocka_unit_test(test_invalid_messages_fail_with_the_expected_code_and_offset),
		cmocka_unit_test_setup_teardown(test_valid_streams_import_and_hold_their_entries,
						setup_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_invalid_streams_fail_and_leave_the_target_alone,
						setup_dir, remove_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
