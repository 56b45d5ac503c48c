/*
 * test_export.c: the export stream: a snapshot exported and imported again
 * answers identically with the same digest; top_n keeps the most-hit
 * entries; cut, damaged, foreign-version and malformed streams are refused
 * and leave the target path alone; the spec's worked example (vector 001).
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
#include <xxhash.h>
#include <zstd.h>

#include "dnsnap.h"
#include "tmpdir.h"
#include "wb.h"

#define NOW 1700000000u
#define NAMES 3000

static dnsnap_encoded_t scratch;
static char dir[64];

static char *path(const char *name)
{
	static char p[4][128];
	static int k;
	k = (k + 1) & 3;
	snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
	return p[k];
}

static void response_a(wb_t *w, const char *name, uint32_t ttl, unsigned x)
{
	put_header(w, 0x8180, 1, 1, 0, 0);
	put_name(w, name);
	put_u16(w, 1);
	put_u16(w, 1);
	put_ptr(w, 12);
	size_t rl = put_fixed(w, 1, 1, ttl);
	put_u32(w, 0x0a000000u | x);
	end_rdata(w, rl);
}

static void name_of(char *name, size_t cap, unsigned i)
{
	snprintf(name, cap, "host-%u.zone%u.export.example", i, i % 17);
}

static dnsnap_cache_t *filled(void)
{
	dnsnap_cache_t *c;
	assert_int_equal(dnsnap_cache_new(NULL, &c), DNSNAP_OK);
	char name[96];
	wb_t w;
	for (unsigned i = 0; i < NAMES; i++) {
		name_of(name, sizeof name, i);
		response_a(&w, name, 3600 + i % 100, i * 7919u);
		assert_int_equal(dnsnap_cache_insert(c, w.b, w.n, NOW, NULL, 0, &scratch, NULL),
				 DNSNAP_OK);
	}
	return c;
}

static void query(wb_t *w, dnsnap_query_t *q, const char *name)
{
	put_header(w, 0x0100, 1, 0, 0, 0);
	put_name(w, name);
	put_u16(w, 1);
	put_u16(w, 1);
	assert_int_equal(dnsnap_query_parse(w->b, w->n, NULL, 0, q, NULL), DNSNAP_OK);
}

static int snap_ask(dnsnap_snap_t *s, const char *name, uint8_t *out, size_t *n)
{
	wb_t w;
	dnsnap_query_t q;
	query(&w, &q, name);
	return dnsnap_snap_answer(s, &q, NOW + 10, 0, out, 512, n);
}

static void cache_hit(dnsnap_cache_t *c, const char *name, unsigned times)
{
	wb_t w;
	dnsnap_query_t q;
	uint8_t out[512];
	size_t n;
	query(&w, &q, name);
	for (unsigned i = 0; i < times; i++)
		assert_int_equal(dnsnap_cache_answer(c, &q, NOW + 1, 0, out, sizeof out, &n),
				 DNSNAP_OK);
}

static uint8_t *read_all(const char *p, size_t *len)
{
	FILE *f = fopen(p, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc((size_t)n + 1);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return b;
}

static void write_file(const char *p, const void *b, size_t n)
{
	FILE *f = fopen(p, "wb");
	assert_non_null(f);
	if (n)
		assert_int_equal(fwrite(b, 1, n, f), n);
	fclose(f);
}

static uint8_t *decompress(const uint8_t *z, size_t zn, size_t *len)
{
	ZSTD_DCtx *dc = ZSTD_createDCtx();
	size_t cap = 1 << 16, n = 0;
	uint8_t *b = malloc(cap);
	ZSTD_inBuffer ib = { z, zn, 0 };
	for (;;) {
		if (cap - n < 65536)
			b = realloc(b, cap *= 2);
		ZSTD_outBuffer ob = { b + n, cap - n, 0 };
		size_t r = ZSTD_decompressStream(dc, &ob, &ib);
		assert_false(ZSTD_isError(r));
		n += ob.pos;
		if (r == 0 && ib.pos == ib.size)
			break;
	}
	ZSTD_freeDCtx(dc);
	*len = n;
	return b;
}

/* Compress raw stream bytes (for hand-made streams) into file p. */
static void write_stream(const char *p, const uint8_t *raw, size_t n)
{
	size_t cap = ZSTD_compressBound(n);
	uint8_t *z = malloc(cap);
	size_t zn = ZSTD_compress(z, cap, raw, n, 3);
	assert_false(ZSTD_isError(zn));
	write_file(p, z, zn);
	free(z);
}

/* The last progress report of the last export or import. */
static struct { uint64_t calls, done, total; } prog;

static void record(void *arg, uint64_t done, uint64_t total)
{
	(void)arg;
	prog.calls++;
	prog.done = done;
	prog.total = total;
}

static const dnsnap_progress_t recorder = { record, NULL };

static int export_to(const char *snap, const char *out, uint64_t top_n)
{
	dnsnap_snap_t *s;
	dnsnap_diag_t d;
	assert_int_equal(dnsnap_snap_open(snap, &s, &d), DNSNAP_OK);
	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	prog.calls = 0;
	int err = dnsnap_export_write(s, fd, 0, top_n, &recorder, &d);
	if (err != DNSNAP_OK)
		print_error("export: %s\n", d.msg);
	close(fd);
	dnsnap_snap_close(s);
	return err;
}

static int import_from(const char *in, const char *target, dnsnap_diag_t *d)
{
	int fd = open(in, O_RDONLY);
	assert_true(fd >= 0);
	prog.calls = 0;
	int err = dnsnap_import(fd, target, NOW + 1, &recorder, NULL, d);
	close(fd);
	return err;
}

static int exists(const char *p)
{
	return access(p, F_OK) == 0;
}

static void test_export_and_import_round_trip(void **state)
{
	(void)state;
	dnsnap_cache_t *c = filled();
	assert_int_equal(dnsnap_snap_write(c, path("src.snap"), NOW, NULL, NULL), DNSNAP_OK);
	dnsnap_cache_free(c);
	assert_int_equal(export_to(path("src.snap"), path("src.dnsx"), 0), DNSNAP_OK);
	assert_true(prog.calls >= 1); /* the last report: everything done */
	assert_int_equal(prog.done, NAMES);
	assert_int_equal(prog.total, NAMES);
	dnsnap_diag_t d;
	int err = import_from(path("src.dnsx"), path("dst.snap"), &d);
	if (err != DNSNAP_OK)
		fail_msg("%s", d.msg);
	assert_true(prog.calls >= 1);
	assert_int_equal(prog.done, NAMES);
	assert_int_equal(prog.total, NAMES);

	dnsnap_snap_t *a, *b;
	assert_int_equal(dnsnap_snap_open(path("src.snap"), &a, NULL), DNSNAP_OK);
	assert_int_equal(dnsnap_snap_open(path("dst.snap"), &b, NULL), DNSNAP_OK);
	assert_int_equal(dnsnap_snap_verify(b, NULL, &d), DNSNAP_OK);
	dnsnap_snap_info_t ia, ib;
	dnsnap_snap_info(a, &ia);
	dnsnap_snap_info(b, &ib);
	assert_int_equal(ia.entry_count, NAMES);
	assert_int_equal(ib.entry_count, NAMES);
	assert_int_equal(ia.digest, ib.digest);
	char name[96];
	uint8_t oa[512], ob[512];
	size_t na, nb;
	for (unsigned i = 0; i < NAMES; i++) {
		name_of(name, sizeof name, i);
		assert_int_equal(snap_ask(a, name, oa, &na), DNSNAP_OK);
		assert_int_equal(snap_ask(b, name, ob, &nb), DNSNAP_OK);
		assert_int_equal(na, nb);
		assert_memory_equal(oa, ob, na);
	}
	assert_int_equal(snap_ask(b, "absent.export.example", ob, &nb), DNSNAP_ENOTFOUND);

	/* the stream: header, the end record's count and checksum (= digest) */
	size_t zn, n;
	uint8_t *z = read_all(path("src.dnsx"), &zn);
	uint8_t *raw = decompress(z, zn, &n);
	assert_memory_equal(raw, "\xd5NSX\x01\x00\x00\x00", 6);
	assert_int_equal(raw[n - 18] | raw[n - 17], 0);
	uint64_t cnt = 0, sum = 0;
	for (int i = 7; i >= 0; i--) {
		cnt = cnt << 8 | raw[n - 16 + i];
		sum = sum << 8 | raw[n - 8 + i];
	}
	assert_int_equal(cnt, NAMES);
	assert_int_equal(sum, ia.digest);
	unsigned hs = raw[8] | raw[9] << 8;
	assert_int_equal(XXH3_64bits(raw + hs, n - hs - 18), ia.digest);
	struct stat st;
	assert_int_equal(stat(path("src.snap"), &st), 0);
	print_message("export: %u entries, %zu bytes decompressed, %zu compressed (ratio %.2f; "
		      "snapshot file %lld bytes)\n", NAMES, n, zn, (double)n / (double)zn,
		      (long long)st.st_size);
	free(raw);
	free(z);
	dnsnap_snap_close(a);
	dnsnap_snap_close(b);
}

static void test_top_n_keeps_the_most_hit_entries(void **state)
{
	(void)state;
	dnsnap_cache_t *c = filled();
	char name[96];
	/* 200 names hit 1..200 times; the other 2800 never */
	for (unsigned i = 0; i < 200; i++) {
		name_of(name, sizeof name, i * 13 + 5);
		cache_hit(c, name, i + 1);
	}
	assert_int_equal(dnsnap_snap_write(c, path("hits.snap"), NOW + 1, NULL, NULL), DNSNAP_OK);
	dnsnap_cache_free(c);
	assert_int_equal(export_to(path("hits.snap"), path("top.dnsx"), 50), DNSNAP_OK);
	dnsnap_diag_t d;
	int err = import_from(path("top.dnsx"), path("top.snap"), &d);
	if (err != DNSNAP_OK)
		fail_msg("%s", d.msg);
	dnsnap_snap_t *s;
	assert_int_equal(dnsnap_snap_open(path("top.snap"), &s, NULL), DNSNAP_OK);
	assert_int_equal(dnsnap_snap_verify(s, NULL, NULL), DNSNAP_OK);
	dnsnap_snap_info_t info;
	dnsnap_snap_info(s, &info);
	assert_int_equal(info.entry_count, 50);
	uint8_t out[512];
	size_t n;
	unsigned kept = 0;
	for (unsigned i = 0; i < NAMES; i++) {
		name_of(name, sizeof name, i);
		int want = i % 13 == 5 && i / 13 >= 150 && i / 13 < 200;
		assert_int_equal(snap_ask(s, name, out, &n), want ? DNSNAP_OK : DNSNAP_ENOTFOUND);
		kept += want;
	}
	assert_int_equal(kept, 50);
	dnsnap_snap_close(s);

	/* top_n at least the count is everything: the checksum is the digest */
	assert_int_equal(export_to(path("hits.snap"), path("all.dnsx"), 1u << 20), DNSNAP_OK);
	size_t zn, rn;
	uint8_t *z = read_all(path("all.dnsx"), &zn);
	uint8_t *raw = decompress(z, zn, &rn);
	assert_int_equal(dnsnap_snap_open(path("hits.snap"), &s, NULL), DNSNAP_OK);
	dnsnap_snap_info(s, &info);
	unsigned hs = raw[8] | raw[9] << 8;
	assert_int_equal(XXH3_64bits(raw + hs, rn - hs - 18), info.digest);
	/* hit counts carry over: the import of a snapshot with hits has its digest */
	dnsnap_snap_t *im;
	dnsnap_snap_info_t iinfo;
	assert_int_equal(import_from(path("all.dnsx"), path("hits-imported.snap"), NULL), DNSNAP_OK);
	assert_int_equal(dnsnap_snap_open(path("hits-imported.snap"), &im, NULL), DNSNAP_OK);
	dnsnap_snap_info(im, &iinfo);
	assert_int_equal(iinfo.digest, info.digest);
	dnsnap_snap_close(im);
	dnsnap_snap_close(s);
	free(raw);
	free(z);
}

/* A target that exists before a failed import: its bytes. */
static uint8_t *make_target(const char *p, size_t *n)
{
	dnsnap_cache_t *c;
	assert_int_equal(dnsnap_cache_new(NULL, &c), DNSNAP_OK);
	wb_t w;
	response_a(&w, "old.export.example", 3600, 1);
	assert_int_equal(dnsnap_cache_insert(c, w.b, w.n, NOW, NULL, 0, &scratch, NULL), DNSNAP_OK);
	assert_int_equal(dnsnap_snap_write(c, p, NOW, NULL, NULL), DNSNAP_OK);
	dnsnap_cache_free(c);
	return read_all(p, n);
}

static void assert_untouched(const char *p, const uint8_t *b, size_t n)
{
	size_t m;
	uint8_t *now = read_all(p, &m);
	assert_int_equal(m, n);
	assert_memory_equal(now, b, n);
	free(now);
}

static uint8_t *exported(size_t *zn)
{
	static int made;
	if (!made) {
		dnsnap_cache_t *c = filled();
		assert_int_equal(dnsnap_snap_write(c, path("bad-src.snap"), NOW, NULL, NULL),
				 DNSNAP_OK);
		dnsnap_cache_free(c);
		assert_int_equal(export_to(path("bad-src.snap"), path("good.dnsx"), 0), DNSNAP_OK);
		made = 1;
	}
	return read_all(path("good.dnsx"), zn);
}

static void test_a_cut_stream_is_refused_and_writes_nothing(void **state)
{
	(void)state;
	size_t zn, tn;
	uint8_t *z = exported(&zn);
	uint8_t *t = make_target(path("kept.snap"), &tn);
	size_t cuts[] = { 0, 1, 3, 4, 10, 40, zn / 4, zn / 2, zn - 100, zn - 5, zn - 4, zn - 1 };
	dnsnap_diag_t d;
	for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
		write_file(path("cut.dnsx"), z, cuts[i]);
		assert_int_equal(import_from(path("cut.dnsx"), path("cut.snap"), &d), DNSNAP_ETRUNC);
		assert_false(exists(path("cut.snap")));
		assert_int_equal(import_from(path("cut.dnsx"), path("kept.snap"), &d), DNSNAP_ETRUNC);
		assert_untouched(path("kept.snap"), t, tn);
	}
	/* cut inside the decompressed content, the frames whole */
	size_t n;
	uint8_t *raw = decompress(z, zn, &n);
	unsigned hs = raw[8] | raw[9] << 8;
	write_stream(path("cut.dnsx"), raw, n - 18); /* no end record */
	assert_int_equal(import_from(path("cut.dnsx"), path("cut.snap"), &d), DNSNAP_ETRUNC);
	assert_int_equal(d.offset, n - 18);
	write_stream(path("cut.dnsx"), raw, hs + 10); /* inside the first record */
	assert_int_equal(import_from(path("cut.dnsx"), path("cut.snap"), &d), DNSNAP_ETRUNC);
	assert_int_equal(d.offset, hs);
	write_stream(path("cut.dnsx"), raw, 20); /* inside the header */
	assert_int_equal(import_from(path("cut.dnsx"), path("cut.snap"), &d), DNSNAP_ETRUNC);
	assert_false(exists(path("cut.snap")));
	free(raw);
	free(z);
	free(t);
}

static void test_a_flipped_bit_is_refused_and_writes_nothing(void **state)
{
	(void)state;
	size_t zn, tn;
	uint8_t *z = exported(&zn);
	uint8_t *t = make_target(path("kept2.snap"), &tn);
	dnsnap_diag_t d;
	/* past the zstd frame header (whose window and unused bits may change
	 * without harm): every byte of the blocks and the content checksum */
	for (size_t k = 0; k < 24; k++) {
		size_t at = 16 + (zn - 17) * k / 23;
		z[at] ^= (uint8_t)(1u << (k % 8));
		write_file(path("flip.dnsx"), z, zn);
		z[at] ^= (uint8_t)(1u << (k % 8));
		int err = import_from(path("flip.dnsx"), path("flip.snap"), &d);
		if (err == DNSNAP_OK)
			fail_msg("a flipped bit at %zu of %zu was accepted", at, zn);
		assert_false(exists(path("flip.snap")));
		assert_int_not_equal(import_from(path("flip.dnsx"), path("kept2.snap"), &d), DNSNAP_OK);
		assert_untouched(path("kept2.snap"), t, tn);
	}
	free(z);
	free(t);
}

static void test_unknown_major_and_bad_magic(void **state)
{
	(void)state;
	size_t zn, n;
	uint8_t *z = exported(&zn);
	uint8_t *raw = decompress(z, zn, &n);
	dnsnap_diag_t d;
	raw[4] = 2;
	write_stream(path("v2.dnsx"), raw, n);
	assert_int_equal(import_from(path("v2.dnsx"), path("v2.snap"), &d), DNSNAP_EVERSION);
	assert_int_equal(d.offset, 4);
	assert_non_null(strstr(d.msg, "export stream format 2.0, this dnsnap reads 1.x"));
	assert_false(exists(path("v2.snap")));
	raw[4] = 1;
	raw[6] = 7; /* any minor */
	write_stream(path("v17.dnsx"), raw, n);
	assert_int_equal(import_from(path("v17.dnsx"), path("v17.snap"), &d), DNSNAP_OK);
	raw[3] = 'P'; /* a snapshot's magic */
	write_stream(path("m.dnsx"), raw, n);
	assert_int_equal(import_from(path("m.dnsx"), path("m.snap"), &d), DNSNAP_EMAGIC);
	raw[3] = 'X';
	raw[10] = 1; /* Flags */
	write_stream(path("f.dnsx"), raw, n);
	assert_int_equal(import_from(path("f.dnsx"), path("m.snap"), &d), DNSNAP_ERESERVED);
	assert_int_equal(d.offset, 10);
	assert_false(exists(path("m.snap")));
	/* not zstd at all */
	write_file(path("junk.dnsx"), "this is not zstd at all", 23);
	assert_int_equal(import_from(path("junk.dnsx"), path("m.snap"), &d), DNSNAP_EZSTD);
	free(raw);
	free(z);
}

/* Vector 001 (spec/FORMAT.md): its key and entry. */
static const uint8_t v001_key[23] = {
	0x03, 0x63, 0x6f, 0x6d, 0x07, 0x65, 0x78, 0x61, 0x6d, 0x70, 0x6c, 0x65,
	0x03, 0x77, 0x77, 0x77, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00,
};
static const uint8_t v001_entry[31] = {
	0x00, 0xf1, 0x53, 0x65, 0x2c, 0xf2, 0x53, 0x65, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x0d, 0x00, 0x0d, 0x00, 0x0b, 0x00, 0x00, 0x01, 0x00, 0x2c,
	0x01, 0x00, 0x00, 0xc0, 0x00, 0x02, 0x01,
};

static void test_the_worked_example_and_malformed_records(void **state)
{
	(void)state;
	dnsnap_cache_t *c;
	assert_int_equal(dnsnap_cache_new(NULL, &c), DNSNAP_OK);
	assert_int_equal(dnsnap_cache_insert_entry(c, v001_key, 23, v001_entry, 31), DNSNAP_OK);
	assert_int_equal(dnsnap_snap_write(c, path("v001.snap"), NOW, NULL, NULL), DNSNAP_OK);
	dnsnap_cache_free(c);
	assert_int_equal(export_to(path("v001.snap"), path("v001.dnsx"), 0), DNSNAP_OK);
	size_t zn, n;
	uint8_t *z = read_all(path("v001.dnsx"), &zn);
	uint8_t *raw = decompress(z, zn, &n);
	unsigned hs = raw[8] | raw[9] << 8;
	assert_int_equal(n, hs + 60 + 18);
	/* header TLVs: Created_At (1), Writer (2), Entry_Count (3) */
	assert_int_equal(raw[12], 1);
	assert_int_equal(raw[13] | raw[14] << 8, 8);
	assert_int_equal(raw[23], 2);
	unsigned wl = raw[24] | raw[25] << 8;
	assert_memory_equal(raw + 26, "dnsnap ", 7);
	assert_int_equal(26 + wl + 11, hs);
	assert_memory_equal(raw + 26 + wl, "\x03\x08\x00\x01\x00\x00\x00\x00\x00\x00\x00", 11);
	static const uint8_t rec_end[60 + 18] = {
		0x17, 0x00, 0x1f, 0x00, 0x00, 0x00, 0x03, 0x63, 0x6f, 0x6d, 0x07, 0x65, 0x78,
		0x61, 0x6d, 0x70, 0x6c, 0x65, 0x03, 0x77, 0x77, 0x77, 0x00, 0x00, 0x01, 0x00,
		0x01, 0x00, 0x00, 0x00, 0xf1, 0x53, 0x65, 0x2c, 0xf2, 0x53, 0x65, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x0d, 0x00, 0x0d, 0x00, 0x0b, 0x00, 0x00, 0x01, 0x00,
		0x2c, 0x01, 0x00, 0x00, 0xc0, 0x00, 0x02, 0x01,
		0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0xd9, 0xee, 0x7c, 0x25, 0xba, 0xf0, 0x56, 0xb3,
	};
	assert_memory_equal(raw + hs, rec_end, sizeof rec_end);

	/* hand-made streams from it */
	dnsnap_diag_t d;
	uint8_t s[1024];
	size_t at_rec = hs, at_end = hs + 60;
	memcpy(s, raw, n);
	s[n - 1] ^= 1; /* Checksum */
	write_stream(path("x.dnsx"), s, n);
	assert_int_equal(import_from(path("x.dnsx"), path("x.snap"), &d), DNSNAP_ECHECKSUM);
	assert_int_equal(d.offset, at_end + 10);
	memcpy(s, raw, n);
	s[at_end + 2] = 2; /* Entry_Count */
	write_stream(path("x.dnsx"), s, n);
	assert_int_equal(import_from(path("x.dnsx"), path("x.snap"), &d), DNSNAP_ECHECKSUM);
	assert_int_equal(d.offset, at_end + 2);
	memcpy(s, raw, n);
	s[n] = 0; /* a byte after the end record */
	write_stream(path("x.dnsx"), s, n + 1);
	assert_int_equal(import_from(path("x.dnsx"), path("x.snap"), &d), DNSNAP_EFIELD);
	assert_int_equal(d.offset, n);
	/* the record twice: out of key order */
	memcpy(s, raw, at_end);
	memcpy(s + at_end, raw + at_rec, 60);
	memcpy(s + at_end + 60, raw + at_end, 18);
	write_stream(path("x.dnsx"), s, n + 60);
	assert_int_equal(import_from(path("x.dnsx"), path("x.snap"), &d), DNSNAP_EFIELD);
	assert_int_equal(d.offset, at_end);
	/* a bad label length in the key, a reserved Key_Len, a bad entry */
	memcpy(s, raw, n);
	s[at_rec + 6] = 0x40;
	write_stream(path("x.dnsx"), s, n);
	assert_int_equal(import_from(path("x.dnsx"), path("x.snap"), &d), DNSNAP_ELABEL);
	assert_int_equal(d.offset, at_rec + 6);
	memcpy(s, raw, n);
	s[at_rec] = 0x00, s[at_rec + 1] = 0x02; /* 512 */
	write_stream(path("x.dnsx"), s, n);
	assert_int_equal(import_from(path("x.dnsx"), path("x.snap"), &d), DNSNAP_ERESERVED);
	assert_int_equal(d.offset, at_rec);
	memcpy(s, raw, n);
	s[at_rec + 6 + 23 + 12] = 0xff; /* reserved entry flags */
	write_stream(path("x.dnsx"), s, n);
	assert_int_not_equal(import_from(path("x.dnsx"), path("x.snap"), &d), DNSNAP_OK);
	assert_true(d.offset >= at_rec + 6 + 23 && d.offset < at_end);
	assert_false(exists(path("x.snap")));
	/* an unknown tagged section before the record is skipped */
	memcpy(s, raw, at_rec);
	memcpy(s + at_rec, "\xff\xff\x09\x00\x03\x00\x00\x00" "abc", 11);
	memcpy(s + at_rec + 11, raw + at_rec, n - at_rec);
	write_stream(path("x.dnsx"), s, n + 11);
	assert_int_equal(import_from(path("x.dnsx"), path("x.snap"), &d), DNSNAP_OK);
	dnsnap_snap_t *sn;
	assert_int_equal(dnsnap_snap_open(path("x.snap"), &sn, NULL), DNSNAP_OK);
	dnsnap_snap_info_t info;
	dnsnap_snap_info(sn, &info);
	assert_int_equal(info.digest, 0xb356f0ba257ceed9ull);
	dnsnap_snap_close(sn);

	print_message("worked example, decompressed stream (%zu bytes):\n", n);
	for (size_t i = 0; i < n; i++)
		print_message("%02x%s", raw[i], i % 16 == 15 || i + 1 == n ? "\n" : " ");
	free(raw);
	free(z);
}

static int setup(void **state)
{
	(void)state;
	return tmpdir_make(dir, sizeof dir, "test-export");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_export_and_import_round_trip),
		cmocka_unit_test(test_top_n_keeps_the_most_hit_entries),
		cmocka_unit_test(test_a_cut_stream_is_refused_and_writes_nothing),
		cmocka_unit_test(test_a_flipped_bit_is_refused_and_writes_nothing),
		cmocka_unit_test(test_unknown_major_and_bad_magic),
		cmocka_unit_test(test_the_worked_example_and_malformed_records),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
