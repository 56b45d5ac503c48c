/*
 * bench_export: the export stream (spec/FORMAT.md, "Export stream") on two
 * mixes: how well zstd compresses it at levels 1, 3, 9 and 19, how fast it is
 * written and imported, and whether a zstd dictionary would pay. Prints two
 * tables, or one JSON object with --json.
 *
 *   bench_export [--entries N] [--mix big|real|both] [--levels 1,3,9,19]
 *                [--l19-entries M] [--rounds R] [--dir DIR] [--seed S]
 *                [--dict-entries T] [--dict-level L] [--no-dict] [--keep] [--json]
 *
 * Mixes: "big", the Big Pineapple mix (bench/mix.c: random A/AAAA addresses
 * and TXT of random bytes under unrelated names), and "real", the realistic
 * resolver-cache mix (bench/realmix.c: zones of four names, CNAME chains to
 * CDNs, SPF/DKIM/verification TXT, negative answers with SOA, DNSSEC).
 *
 * How each figure is measured (CLOCK_MONOTONIC; files in DIR, default /tmp,
 * removed at the end unless --keep; the page cache is warm throughout):
 * - the snapshot: N responses (entries 0..N-1 of the mix at seed S) inserted
 *   with dnsnap_cache_insert() at now = 1700000000; every one must encode (the
 *   count of failures is printed and the run stops if there is any) and every
 *   one must be a distinct, live key (the snapshot must hold N entries). Then
 *   dnsnap_snap_write(), and the cache is freed.
 * - wire bytes: the sum of the N responses' lengths (DNS wire form, names
 *   compressed as the generators write them). record bytes: the stream before
 *   compression, 6 + key + entry per record summed over dnsnap_snap_foreach()
 *   (the stream adds its header, ~60 bytes, and the 18-byte end record).
 * - per level: dnsnap_export_write() of the whole snapshot into a file (no
 *   fsync: the export does not sync), R rounds; stream bytes = the file's size;
 *   records / stream and wire / stream are the compression ratios against the
 *   two. Then dnsnap_import() of that file, R rounds: decompression, the checks
 *   of every record, a fresh cache, and dnsnap_snap_write() of the result
 *   (LMDB, fsync, rename) -- the whole restore. The imported snapshot must have
 *   N entries and the source's Digest. "unzstd" is zstd's share: the file,
 *   already in memory, decompressed with ZSTD_decompressStream() into a 128 KiB
 *   buffer and thrown away. Times are medians over the rounds; entries/s = N /
 *   the median.
 * - level 19 (slow) runs on the first M entries of the mix (--l19-entries,
 *   default 50000) when N is larger, a snapshot of its own; level 3 is measured
 *   on the same subset beside it so the two compare.
 * - dictionary: T records (--dict-entries, default min(N, 100000)) of the same
 *   mix at another seed (S ^ 0x5eed, so no record of the stream is in the
 *   training set) go through a cache and a snapshot the same way; each record
 *   (6 + key + entry) is a sample for ZDICT_trainFromBuffer() (fastCover, the
 *   library's defaults), which trains dictionaries of 16, 64 and 110 KiB. The
 *   stream (the level-3 export, decompressed) is then compressed at level L
 *   (--dict-level, default 3) with ZSTD_compress2(), without and with each
 *   dictionary (a CDict, ZSTD_CCtx_refCDict()):
 *   (a) whole, one frame, content checksum on (as the export writes it);
 *   (b) in independent chunks of at most 64 KiB and at most 4 KiB, cut at
 *       record boundaries (what random access into a stream would need), one
 *       frame each, no checksum, no dictionary ID.
 *   gain = 1 - bytes with / bytes without. Every frame is decompressed and
 *   compared (the figures are of streams that round-trip). Times are of one
 *   pass, for scale only.
 * The load average is printed at the end: other work on the machine shows in
 * the times, not in the sizes, which are deterministic for a seed (to a byte or
 * two: the stream header carries the snapshot's wall-clock Created_At).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zdict.h>
#include <zstd.h>

#include "dnsnap.h"
#include "mix.h"
#include "realmix.h"
#include "timing.h"

#define NOW 1700000000u
#define MAX_ROUNDS 64
#define MAX_LEVELS 8
#define NDICT 4

static const size_t dict_sizes[NDICT] = { 0, 16 * 1024, 64 * 1024, 110 * 1024 };

/* ---------------------------------------------------------------- the mixes */

static size_t big_response(size_t i, uint8_t *buf, size_t cap)
{
	size_t len;
	return mix_response(i, buf, cap, &len) == 0 ? len : 0;
}

typedef struct mixdef {
	const char *name;
	const char *title;
	void (*init)(uint64_t seed);
	size_t (*response)(size_t i, uint8_t *buf, size_t cap);
} mixdef_t;

static const mixdef_t mixes[2] = {
	{ "big", "Big Pineapple mix (bench/mix.c)", mix_init, big_response },
	{ "real", "realistic mix (bench/realmix.c)", realmix_init, realmix_response },
};

/* ---------------------------------------------------------------- results */

typedef struct level_res {
	int level;
	size_t entries;
	uint64_t record_bytes, wire_bytes;  /* of the snapshot exported */
	uint64_t stream_bytes;
	double export_ms, import_ms, unzstd_ms;
} level_res_t;

typedef struct dict_res {
	size_t size;             /* asked for; 0 = no dictionary */
	size_t got;              /* trained */
	double train_ms;
	uint64_t whole, c64, c4; /* compressed bytes */
	double whole_ms, c64_ms, c4_ms;
} dict_res_t;

typedef struct mix_res {
	const mixdef_t *mix;
	size_t entries;
	uint64_t wire_bytes, record_bytes, snap_file;
	double fill_per_s;
	size_t kinds[REALMIX_KINDS]; /* realmix only */
	level_res_t lv[MAX_LEVELS * 2];
	int nlv;
	/* the dictionary evaluation (ndr = 0: not run) */
	int dict_level;
	size_t train_records;
	uint64_t train_bytes, stream_raw;
	size_t n64, n4;          /* chunks */
	dict_res_t dr[NDICT];
	int ndr;
} mix_res_t;

/* ---------------------------------------------------------------- helpers */

#define MAX_TEMP 8
static char temp_paths[MAX_TEMP][4096];
static int keep_files;

static void cleanup(void)
{
	for (int k = 0; k < MAX_TEMP; k++)
		if (temp_paths[k][0] && !keep_files)
			unlink(temp_paths[k]);
}

/* A path DIR/bench_export.PID.WHAT, removed at exit (unless --keep). */
static const char *temp_path(const char *dir, const char *what)
{
	for (int k = 0; k < MAX_TEMP; k++)
		if (temp_paths[k][0] == 0) {
			snprintf(temp_paths[k], sizeof temp_paths[k], "%s/bench_export.%ld.%s", dir,
				 (long)getpid(), what);
			return temp_paths[k];
		}
	fprintf(stderr, "bench_export: too many temporary files\n");
	exit(1);
}

static void die(const char *what, int rc, const dnsnap_diag_t *diag)
{
	fprintf(stderr, "bench_export: %s: %s (%d)%s%s\n", what,
		dnsnap_errname(rc) ? dnsnap_errname(rc) : strerror(rc < 0 ? -rc : rc), rc,
		diag && diag->msg[0] ? ": " : "", diag && diag->msg[0] ? diag->msg : "");
	cleanup();
	exit(1);
}

static void die_zstd(const char *what, size_t z)
{
	fprintf(stderr, "bench_export: %s: %s\n", what, ZSTD_getErrorName(z));
	cleanup();
	exit(1);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (p == NULL)
		die("out of memory", DNSNAP_ENOMEM, NULL);
	return p;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof v[0], cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double ms_since(uint64_t t0)
{
	return (double)(now_ns() - t0) / 1e6;
}

/* ------------------------------------------------------------ snapshots */

/*
 * Insert entries [0, n) of @p mx at @p seed into a fresh cache and write it to
 * @p path. Every response must encode and every key must be distinct and live:
 * the snapshot must hold n entries.
 */
static void make_snapshot(const mixdef_t *mx, uint64_t seed, size_t n, const char *path,
			  uint64_t *wire, double *fill_per_s)
{
	dnsnap_cache_t *c = NULL;
	int rc = dnsnap_cache_new(NULL, &c);
	if (rc != DNSNAP_OK)
		die("dnsnap_cache_new", rc, NULL);
	dnsnap_encoded_t *scratch = calloc(1, sizeof *scratch);
	if (scratch == NULL)
		die("out of memory", DNSNAP_ENOMEM, NULL);
	static uint8_t msg[REALMIX_RESPONSE_MAX > MIX_RESPONSE_MAX ? REALMIX_RESPONSE_MAX
								   : MIX_RESPONSE_MAX];
	size_t fails = 0, first = 0;
	int first_rc = 0;
	dnsnap_diag_t first_diag = {0};
	uint64_t w = 0;
	mx->init(seed);
	uint64_t t0 = now_ns();
	for (size_t i = 0; i < n; i++) {
		size_t len = mx->response(i, msg, sizeof msg);
		if (len == 0) {
			fprintf(stderr, "bench_export: %s mix: entry %zu: no response built\n",
				mx->name, i);
			cleanup();
			exit(1);
		}
		w += len;
		dnsnap_diag_t diag = {0};
		rc = dnsnap_cache_insert(c, msg, len, NOW, NULL, 0, scratch, &diag);
		if (rc != DNSNAP_OK && fails++ == 0)
			first = i, first_rc = rc, first_diag = diag;
	}
	if (fill_per_s)
		*fill_per_s = (double)n / ((double)(now_ns() - t0) / 1e9);
	free(scratch);
	if (fails > 0) {
		fprintf(stderr, "bench_export: %s mix: %zu of %zu responses did not encode; "
				"the first, entry %zu: %s: %s\n",
			mx->name, fails, n, first, dnsnap_errname(first_rc), first_diag.msg);
		cleanup();
		exit(1);
	}
	dnsnap_snap_write_stats_t st = {0};
	dnsnap_diag_t diag = {0};
	rc = dnsnap_snap_write(c, path, NOW, &st, &diag);
	dnsnap_cache_free(c);
	if (rc != DNSNAP_OK)
		die("dnsnap_snap_write", rc, &diag);
	if (st.entries != n) {
		fprintf(stderr, "bench_export: %s mix: %" PRIu64 " entries in the snapshot, %zu "
				"inserted (keys collide, or entries expired)\n",
			mx->name, st.entries, n);
		cleanup();
		exit(1);
	}
	*wire = w;
}

static dnsnap_snap_t *open_snap(const char *path)
{
	dnsnap_snap_t *s = NULL;
	dnsnap_diag_t diag = {0};
	int rc = dnsnap_snap_open(path, &s, &diag);
	if (rc != DNSNAP_OK)
		die("dnsnap_snap_open", rc, &diag);
	return s;
}

typedef struct recs {
	uint64_t bytes, count;
	/* when collecting: the records themselves, one sample each */
	int collect;
	uint8_t *buf;
	size_t len, cap;
	size_t *sizes;
	size_t nsizes, sizes_cap;
} recs_t;

static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int k = 0; k < n; k++)
		p[k] = (uint8_t)(v >> 8 * k);
}

static int on_record(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		     size_t entry_len)
{
	recs_t *r = arg;
	size_t n = 6 + key_len + entry_len;
	r->bytes += n;
	r->count++;
	if (!r->collect)
		return 0;
	if (r->cap - r->len < n) {
		r->cap = r->cap ? 2 * r->cap + n : 1 << 20;
		if ((r->buf = realloc(r->buf, r->cap)) == NULL)
			return DNSNAP_ENOMEM;
	}
	if (r->nsizes == r->sizes_cap) {
		r->sizes_cap = r->sizes_cap ? 2 * r->sizes_cap : 4096;
		if ((r->sizes = realloc(r->sizes, r->sizes_cap * sizeof *r->sizes)) == NULL)
			return DNSNAP_ENOMEM;
	}
	uint8_t *p = r->buf + r->len;
	put_le(p, key_len, 2);
	put_le(p + 2, entry_len, 4);
	memcpy(p + 6, key, key_len);
	memcpy(p + 6 + key_len, entry, entry_len);
	r->len += n;
	r->sizes[r->nsizes++] = n;
	return 0;
}

static void walk(dnsnap_snap_t *s, recs_t *r)
{
	int rc = dnsnap_snap_foreach(s, on_record, r);
	if (rc != DNSNAP_OK)
		die("dnsnap_snap_foreach", rc, NULL);
}

/* --------------------------------------------------------------- export */

static uint8_t *read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) != 0)
		die(path, -errno, NULL);
	uint8_t *p = xmalloc((size_t)sb.st_size);
	size_t got = 0;
	while (got < (size_t)sb.st_size) {
		ssize_t k = read(fd, p + got, (size_t)sb.st_size - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			die(path, k < 0 ? -errno : -EIO, NULL);
		got += (size_t)k;
	}
	close(fd);
	*len = got;
	return p;
}

/* Decompress a zstd stream; keep the output in *out (may be NULL: thrown away). */
static void unzstd(const uint8_t *z, size_t zn, uint8_t **out, size_t *out_len)
{
	static uint8_t win[128 * 1024];
	ZSTD_DCtx *dc = ZSTD_createDCtx();
	if (dc == NULL)
		die("out of memory", DNSNAP_ENOMEM, NULL);
	ZSTD_inBuffer ib = { z, zn, 0 };
	size_t len = 0, cap = 0, left = 1;
	uint8_t *buf = NULL;
	while (ib.pos < ib.size || left != 0) {
		ZSTD_outBuffer ob = { win, sizeof win, 0 };
		left = ZSTD_decompressStream(dc, &ob, &ib);
		if (ZSTD_isError(left))
			die_zstd("decompressing the export", left);
		if (out != NULL && ob.pos > 0) {
			if (cap - len < ob.pos) {
				cap = cap ? 2 * cap + ob.pos : zn * 4 + ob.pos;
				if ((buf = realloc(buf, cap)) == NULL)
					die("out of memory", DNSNAP_ENOMEM, NULL);
			}
			memcpy(buf + len, win, ob.pos);
			len += ob.pos;
		}
		if (ib.pos == ib.size && ob.pos == 0 && left != 0) {
			fprintf(stderr, "bench_export: the export's last zstd frame is cut\n");
			cleanup();
			exit(1);
		}
	}
	ZSTD_freeDCtx(dc);
	if (out != NULL) {
		*out = buf;
		*out_len = len;
	}
}

/*
 * Export @p s at @p level into @p zpath and import it into @p ipath, R rounds
 * each. When @p stream is not NULL, the decompressed stream is kept there.
 */
static void run_level(dnsnap_snap_t *s, const char *zpath, const char *ipath, int level,
		      int rounds, level_res_t *r, uint8_t **stream, size_t *stream_len)
{
	double ex[MAX_ROUNDS], im[MAX_ROUNDS], un[MAX_ROUNDS];
	dnsnap_snap_info_t info;
	dnsnap_snap_info(s, &info);
	r->level = level;
	for (int k = 0; k < rounds; k++) {
		int fd = open(zpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0)
			die(zpath, -errno, NULL);
		dnsnap_diag_t diag = {0};
		uint64_t t0 = now_ns();
		int rc = dnsnap_export_write(s, fd, level, 0, NULL, &diag);
		ex[k] = ms_since(t0);
		if (rc != DNSNAP_OK)
			die("dnsnap_export_write", rc, &diag);
		struct stat sb;
		if (fstat(fd, &sb) != 0)
			die(zpath, -errno, NULL);
		r->stream_bytes = (uint64_t)sb.st_size;
		close(fd);
	}
	for (int k = 0; k < rounds; k++) {
		int fd = open(zpath, O_RDONLY);
		if (fd < 0)
			die(zpath, -errno, NULL);
		dnsnap_diag_t diag = {0};
		uint64_t t0 = now_ns();
		int rc = dnsnap_import(fd, ipath, NOW, NULL, NULL, &diag);
		im[k] = ms_since(t0);
		close(fd);
		if (rc != DNSNAP_OK)
			die("dnsnap_import", rc, &diag);
	}
	/* the import is the same snapshot */
	dnsnap_snap_t *t = open_snap(ipath);
	dnsnap_snap_info_t ti;
	dnsnap_snap_info(t, &ti);
	dnsnap_snap_close(t);
	if (ti.entry_count != info.entry_count || ti.digest != info.digest) {
		fprintf(stderr, "bench_export: level %d: the import has %" PRIu64
				" entries, digest %016" PRIx64 "; the source %" PRIu64
				", %016" PRIx64 "\n",
			level, ti.entry_count, ti.digest, info.entry_count, info.digest);
		cleanup();
		exit(1);
	}
	size_t zn;
	uint8_t *z = read_file(zpath, &zn);
	for (int k = 0; k < rounds; k++) {
		uint64_t t0 = now_ns();
		unzstd(z, zn, NULL, NULL);
		un[k] = ms_since(t0);
	}
	if (stream != NULL)
		unzstd(z, zn, stream, stream_len);
	free(z);
	r->export_ms = median(ex, rounds);
	r->import_ms = median(im, rounds);
	r->unzstd_ms = median(un, rounds);
}

/* ------------------------------------------------------------ dictionary */

/* Chunk boundaries: whole records, at most @p max bytes a chunk (a longer
 * record is a chunk of its own). @return the number of chunks; ends[] their
 * end offsets (allocated). */
static size_t chunks(const uint8_t *s, size_t n, size_t max, size_t **ends_out)
{
	size_t cap = n / (max / 2 > 0 ? max / 2 : 1) + 16, k = 0;
	size_t *ends = xmalloc(cap * sizeof *ends);
	size_t p = (size_t)s[8] | (size_t)s[9] << 8; /* Header_Size: the first record */
	size_t start = 0;
	while (p < n) {
		size_t key_len = (size_t)s[p] | (size_t)s[p + 1] << 8, rec;
		if (key_len == 0)
			rec = n - p; /* the end record (and nothing after it) */
		else
			rec = 6 + key_len + ((size_t)s[p + 2] | (size_t)s[p + 3] << 8 |
					     (size_t)s[p + 4] << 16 | (size_t)s[p + 5] << 24);
		if (p + rec - start > max && p > start) {
			if (k == cap)
				die("chunks: too many", DNSNAP_EINVAL, NULL);
			ends[k++] = p;
			start = p;
		}
		p += rec;
	}
	ends[k++] = n;
	*ends_out = ends;
	return k;
}

typedef struct zc {
	ZSTD_CCtx *cc;
	ZSTD_DCtx *dc;
	uint8_t *dst, *back;
	size_t cap;
} zc_t;

/* Compress [src, src + n) as one frame, check that it decompresses to the
 * same bytes. @return the frame's size */
static size_t frame(zc_t *z, const ZSTD_CDict *cd, const ZSTD_DDict *dd, int level, int checksum,
		    const uint8_t *src, size_t n)
{
	ZSTD_CCtx_reset(z->cc, ZSTD_reset_session_and_parameters);
	size_t r = ZSTD_CCtx_setParameter(z->cc, ZSTD_c_compressionLevel, level);
	if (!ZSTD_isError(r))
		r = ZSTD_CCtx_setParameter(z->cc, ZSTD_c_checksumFlag, checksum);
	if (!ZSTD_isError(r))
		r = ZSTD_CCtx_setParameter(z->cc, ZSTD_c_dictIDFlag, 0);
	if (!ZSTD_isError(r) && cd != NULL)
		r = ZSTD_CCtx_refCDict(z->cc, cd);
	if (ZSTD_isError(r))
		die_zstd("setting parameters", r);
	size_t c = ZSTD_compress2(z->cc, z->dst, z->cap, src, n);
	if (ZSTD_isError(c))
		die_zstd("ZSTD_compress2", c);
	ZSTD_DCtx_reset(z->dc, ZSTD_reset_session_and_parameters);
	r = ZSTD_DCtx_refDDict(z->dc, dd);
	if (ZSTD_isError(r))
		die_zstd("ZSTD_DCtx_refDDict", r);
	size_t d = ZSTD_decompressDCtx(z->dc, z->back, n, z->dst, c);
	if (ZSTD_isError(d) || d != n || memcmp(z->back, src, n) != 0) {
		fprintf(stderr, "bench_export: a frame does not round-trip\n");
		cleanup();
		exit(1);
	}
	return c;
}

static uint64_t chunked(zc_t *z, const ZSTD_CDict *cd, const ZSTD_DDict *dd, int level,
			const uint8_t *s, const size_t *ends, size_t k, double *ms)
{
	uint64_t sum = 0;
	uint64_t t0 = now_ns();
	for (size_t j = 0, start = 0; j < k; start = ends[j++])
		sum += frame(z, cd, dd, level, 0, s + start, ends[j] - start);
	*ms = ms_since(t0);
	return sum;
}

static void dict_eval(const mixdef_t *mx, uint64_t seed, size_t train_n, int level,
		      const char *tpath, const uint8_t *s, size_t n, mix_res_t *r)
{
	/* the training records: the same mix, another seed */
	uint64_t wire;
	make_snapshot(mx, seed ^ 0x5eed, train_n, tpath, &wire, NULL);
	dnsnap_snap_t *ts = open_snap(tpath);
	recs_t tr = { .collect = 1 };
	walk(ts, &tr);
	dnsnap_snap_close(ts);
	if (!keep_files)
		unlink(tpath);
	r->dict_level = level;
	r->train_records = tr.nsizes;
	r->train_bytes = tr.len;
	r->stream_raw = n;

	size_t *e64, *e4;
	r->n64 = chunks(s, n, 64 * 1024, &e64);
	r->n4 = chunks(s, n, 4 * 1024, &e4);
	zc_t z = { ZSTD_createCCtx(), ZSTD_createDCtx(), NULL, NULL, ZSTD_compressBound(n) };
	z.dst = xmalloc(z.cap);
	z.back = xmalloc(n);
	if (z.cc == NULL || z.dc == NULL)
		die("out of memory", DNSNAP_ENOMEM, NULL);
	uint8_t *dict = xmalloc(dict_sizes[NDICT - 1]);
	frame(&z, NULL, NULL, level, 1, s, n); /* untimed: fault the buffers in */
	r->ndr = NDICT;
	for (int d = 0; d < NDICT; d++) {
		dict_res_t *dr = &r->dr[d];
		ZSTD_CDict *cd = NULL;
		ZSTD_DDict *dd = NULL;
		dr->size = dict_sizes[d];
		if (dr->size > 0) {
			uint64_t t0 = now_ns();
			size_t got = ZDICT_trainFromBuffer(dict, dr->size, tr.buf, tr.sizes,
							   (unsigned)tr.nsizes);
			dr->train_ms = ms_since(t0);
			if (ZDICT_isError(got)) {
				fprintf(stderr, "bench_export: ZDICT_trainFromBuffer "
						"(%zu bytes): %s\n",
					dr->size, ZDICT_getErrorName(got));
				cleanup();
				exit(1);
			}
			dr->got = got;
			cd = ZSTD_createCDict(dict, got, level);
			dd = ZSTD_createDDict(dict, got);
			if (cd == NULL || dd == NULL)
				die("out of memory", DNSNAP_ENOMEM, NULL);
		}
		uint64_t t0 = now_ns();
		dr->whole = frame(&z, cd, dd, level, 1, s, n);
		dr->whole_ms = ms_since(t0);
		dr->c64 = chunked(&z, cd, dd, level, s, e64, r->n64, &dr->c64_ms);
		dr->c4 = chunked(&z, cd, dd, level, s, e4, r->n4, &dr->c4_ms);
		ZSTD_freeCDict(cd);
		ZSTD_freeDDict(dd);
	}
	free(dict);
	free(z.dst);
	free(z.back);
	ZSTD_freeCCtx(z.cc);
	ZSTD_freeDCtx(z.dc);
	free(e64);
	free(e4);
	free(tr.buf);
	free(tr.sizes);
}

/* --------------------------------------------------------------- one mix */

typedef struct config {
	size_t n, l19_n, train_n;
	int levels[MAX_LEVELS], nlevels;
	int rounds, dict, dict_level;
	uint64_t seed;
	const char *dir;
	int quiet;
} config_t;

/* Progress on stderr (not with --json). */
__attribute__((format(printf, 2, 3)))
static void note(const config_t *cf, const char *fmt, ...)
{
	if (cf->quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

/* The snapshot of entries [0, n) of a mix, written, opened and walked. */
typedef struct snap_set {
	const char *path;
	dnsnap_snap_t *s;
	size_t n;
	uint64_t wire, record_bytes;
	double fill_per_s;
} snap_set_t;

static void snap_set(const mixdef_t *mx, uint64_t seed, size_t n, const char *path,
		     snap_set_t *ss)
{
	ss->path = path;
	ss->n = n;
	make_snapshot(mx, seed, n, path, &ss->wire, &ss->fill_per_s);
	ss->s = open_snap(path);
	recs_t rc = {0};
	walk(ss->s, &rc);
	if (rc.count != n) {
		fprintf(stderr, "bench_export: %" PRIu64 " records walked, %zu written\n", rc.count,
			n);
		cleanup();
		exit(1);
	}
	ss->record_bytes = rc.bytes;
}

static void run_mix(const mixdef_t *mx, const config_t *cf, mix_res_t *r)
{
	char what[64];
	snprintf(what, sizeof what, "%s.mdb", mx->name);
	const char *spath = temp_path(cf->dir, what);
	snprintf(what, sizeof what, "%s.zst", mx->name);
	const char *zpath = temp_path(cf->dir, what);
	snprintf(what, sizeof what, "%s.import.mdb", mx->name);
	const char *ipath = temp_path(cf->dir, what);

	r->mix = mx;
	r->entries = cf->n;
	if (mx->response == realmix_response) {
		realmix_init(cf->seed);
		for (size_t i = 0; i < cf->n; i++)
			r->kinds[realmix_kind(i)]++;
	}
	note(cf, "%s mix: filling and writing %zu entries...\n", mx->name, cf->n);
	snap_set_t main_set;
	snap_set(mx, cf->seed, cf->n, spath, &main_set);
	r->wire_bytes = main_set.wire;
	r->record_bytes = main_set.record_bytes;
	r->fill_per_s = main_set.fill_per_s;
	struct stat sb;
	if (stat(spath, &sb) == 0)
		r->snap_file = (uint64_t)sb.st_size;

	uint8_t *stream = NULL;
	size_t stream_len = 0;
	int want_stream = cf->dict;
	snap_set_t sub = {0};
	for (int k = 0; k < cf->nlevels; k++) {
		int level = cf->levels[k];
		snap_set_t *ss = &main_set;
		if (level >= 19 && cf->n > cf->l19_n) {
			if (sub.s == NULL) {
				snprintf(what, sizeof what, "%s.sub.mdb", mx->name);
				note(cf, "%s mix: a subset of %zu entries for level 19...\n",
				     mx->name, cf->l19_n);
				snap_set(mx, cf->seed, cf->l19_n, temp_path(cf->dir, what), &sub);
			}
			ss = &sub;
			/* level 3 on the same subset, to compare with */
			level_res_t *l3 = &r->lv[r->nlv++];
			note(cf, "%s mix: level 3 on the subset (%zu entries)...\n", mx->name,
			     sub.n);
			run_level(sub.s, zpath, ipath, 3, cf->rounds, l3, NULL, NULL);
			l3->entries = sub.n;
			l3->record_bytes = sub.record_bytes;
			l3->wire_bytes = sub.wire;
		}
		level_res_t *lr = &r->lv[r->nlv++];
		note(cf, "%s mix: export and import at level %d (%zu entries)...\n", mx->name,
		     level, ss->n);
		int keep_stream = want_stream && ss == &main_set && level == cf->dict_level;
		run_level(ss->s, zpath, ipath, level, cf->rounds, lr, keep_stream ? &stream : NULL,
			  &stream_len);
		lr->entries = ss->n, lr->record_bytes = ss->record_bytes, lr->wire_bytes = ss->wire;
		if (keep_stream)
			want_stream = 0;
	}
	if (cf->dict) {
		if (stream == NULL) { /* the dictionary level was not among the levels */
			level_res_t tmp;
			run_level(main_set.s, zpath, ipath, cf->dict_level, 1, &tmp, &stream,
				  &stream_len);
		}
		note(cf, "%s mix: training dictionaries on %zu records of another seed...\n",
		     mx->name, cf->train_n);
		snprintf(what, sizeof what, "%s.train.mdb", mx->name);
		dict_eval(mx, cf->seed, cf->train_n, cf->dict_level, temp_path(cf->dir, what),
			  stream, stream_len, r);
	}
	free(stream);
	dnsnap_snap_close(main_set.s);
	dnsnap_snap_close(sub.s);
	cleanup();
	memset(temp_paths, 0, sizeof temp_paths);
}

/* ---------------------------------------------------------------- output */

static void si(char *out, size_t cap, double v)
{
	if (v >= 1e6)
		snprintf(out, cap, "%.2fM", v / 1e6);
	else
		snprintf(out, cap, "%.0fk", v / 1e3);
}

static void table_levels(const mix_res_t *r)
{
	double n = (double)r->entries;
	printf("\n%s, %zu entries: wire %.1f B/entry, records (6 + key + entry) %.1f "
	       "B/entry, snapshot file %.1f B/entry\n",
	       r->mix->title, r->entries, (double)r->wire_bytes / n, (double)r->record_bytes / n,
	       (double)r->snap_file / n);
	if (r->mix->response == realmix_response) {
		printf("  kinds:");
		for (unsigned k = 0; k < REALMIX_KINDS; k++)
			printf(" %s %.1f%%%s", realmix_kind_name(k),
			       100.0 * (double)r->kinds[k] / n, k + 1 < REALMIX_KINDS ? "," : "\n");
	}
	printf("  %5s %8s %12s %8s %9s %9s %12s %12s %9s\n", "level", "entries", "stream B",
	       "B/entry", "records/", "wire/", "export", "import", "unzstd");
	printf("  %5s %8s %12s %8s %9s %9s %12s %12s %9s\n", "", "", "", "", "stream", "stream",
	       "entries/s", "entries/s", "ms");
	for (int k = 0; k < r->nlv; k++) {
		const level_res_t *l = &r->lv[k];
		double ln = (double)l->entries, sb = (double)l->stream_bytes;
		char ex[32], im[32];
		si(ex, sizeof ex, ln / (l->export_ms / 1e3));
		si(im, sizeof im, ln / (l->import_ms / 1e3));
		printf("  %5d %8zu %12" PRIu64 " %8.1f %9.2f %9.2f %12s %12s %9.1f\n", l->level,
		       l->entries, l->stream_bytes, sb / ln, (double)l->record_bytes / sb,
		       (double)l->wire_bytes / sb, ex, im, l->unzstd_ms);
	}
}

static const char *dict_name(size_t size, char *buf, size_t cap)
{
	if (size == 0)
		return "none";
	snprintf(buf, cap, "%zu KiB", size / 1024);
	return buf;
}

/* "+1.2%" for a gain of @p with over @p without; "-" without a dictionary */
static const char *gain(char *buf, size_t cap, int dict, uint64_t with, uint64_t without,
			int digits)
{
	if (!dict)
		return "-";
	snprintf(buf, cap, "%+.*f%%", digits, 100 * (1 - (double)with / (double)without));
	return buf;
}

static void table_dict(const mix_res_t *r)
{
	const dict_res_t *no = &r->dr[0];
	double raw = (double)r->stream_raw;
	printf("\n%s: the stream %" PRIu64 " bytes; trained on %zu records (%.1f MB); "
	       "%zu chunks <= 64 KiB, %zu chunks <= 4 KiB\n",
	       r->mix->title, r->stream_raw, r->train_records, (double)r->train_bytes / 1e6,
	       r->n64, r->n4);
	printf("  %-10s %8s | %11s %6s %7s | %11s %6s %7s | %11s %6s %7s\n", "dictionary",
	       "train s", "whole B", "ratio", "gain", "64 KiB B", "ratio", "gain", "4 KiB B",
	       "ratio", "gain");
	for (int d = 0; d < r->ndr; d++) {
		const dict_res_t *dr = &r->dr[d];
		int on = dr->size > 0;
		char name[32], tr[32] = "-", g1[32], g2[32], g3[32];
		if (on)
			snprintf(tr, sizeof tr, "%.1f", dr->train_ms / 1e3);
		printf("  %-10s %8s | %11" PRIu64 " %6.2f %7s | %11" PRIu64 " %6.2f %7s | %11"
		       PRIu64 " %6.2f %7s\n",
		       dict_name(dr->size, name, sizeof name), tr, dr->whole,
		       raw / (double)dr->whole, gain(g1, sizeof g1, on, dr->whole, no->whole, 2),
		       dr->c64, raw / (double)dr->c64, gain(g2, sizeof g2, on, dr->c64, no->c64, 1),
		       dr->c4, raw / (double)dr->c4, gain(g3, sizeof g3, on, dr->c4, no->c4, 1));
	}
	printf("  compression time, ms, one pass (whole / 64 KiB / 4 KiB):");
	for (int d = 0; d < r->ndr; d++) {
		char name[32];
		printf("%s %s %.0f / %.0f / %.0f", d ? ";" : "",
		       dict_name(r->dr[d].size, name, sizeof name), r->dr[d].whole_ms,
		       r->dr[d].c64_ms, r->dr[d].c4_ms);
	}
	printf("\n");
}

static void table(const mix_res_t *res, int nres, const config_t *cf, double load)
{
	printf("Export stream: dnsnap_export_write() and dnsnap_import(), median of %d round%s "
	       "(warm page cache)\n",
	       cf->rounds, cf->rounds > 1 ? "s" : "");
	int any = 0;
	for (int m = 0; m < nres; m++) {
		table_levels(&res[m]);
		any |= res[m].ndr > 0;
	}
	if (any) {
		printf("\nzstd dictionary (ZDICT_trainFromBuffer on records of another seed), the "
		       "stream at level %d;\ngain = 1 - with / without; ratio = stream bytes / "
		       "compressed bytes\n",
		       cf->dict_level);
		for (int m = 0; m < nres; m++)
			if (res[m].ndr > 0)
				table_dict(&res[m]);
	}
	printf("\nload average at the end: %.2f (other work on the machine skews the times, not "
	       "the sizes)\n",
	       load);
}

static void json_level(const level_res_t *l, int first)
{
	double ln = (double)l->entries, sb = (double)l->stream_bytes;
	printf("%s{\"level\":%d,\"entries\":%zu,\"stream_bytes\":%" PRIu64
	       ",\"bytes_per_entry\":%.2f,\"record_bytes\":%" PRIu64 ",\"wire_bytes\":%" PRIu64
	       ",\"ratio_records\":%.4f,\"ratio_wire\":%.4f,\"export_ms\":%.2f,"
	       "\"export_per_s\":%.0f,\"import_ms\":%.2f,\"import_per_s\":%.0f,"
	       "\"unzstd_ms\":%.2f}",
	       first ? "" : ",", l->level, l->entries, l->stream_bytes, sb / ln, l->record_bytes,
	       l->wire_bytes, (double)l->record_bytes / sb, (double)l->wire_bytes / sb,
	       l->export_ms, ln / (l->export_ms / 1e3), l->import_ms, ln / (l->import_ms / 1e3),
	       l->unzstd_ms);
}

static void json_dict(const mix_res_t *r)
{
	const dict_res_t *no = &r->dr[0];
	printf(",\"dict\":{\"level\":%d,\"train_records\":%zu,\"train_bytes\":%" PRIu64
	       ",\"stream_bytes\":%" PRIu64 ",\"chunks_64k\":%zu,\"chunks_4k\":%zu,\"results\":[",
	       r->dict_level, r->train_records, r->train_bytes, r->stream_raw, r->n64, r->n4);
	for (int d = 0; d < r->ndr; d++) {
		const dict_res_t *dr = &r->dr[d];
		printf("%s{\"dict_size\":%zu,\"dict_trained\":%zu,\"train_ms\":%.1f,"
		       "\"whole\":%" PRIu64 ",\"chunks_64k\":%" PRIu64 ",\"chunks_4k\":%" PRIu64
		       ",\"gain_whole\":%.5f,\"gain_64k\":%.5f,\"gain_4k\":%.5f,\"whole_ms\":%.1f,"
		       "\"chunks_64k_ms\":%.1f,\"chunks_4k_ms\":%.1f}",
		       d ? "," : "", dr->size, dr->got, dr->train_ms, dr->whole, dr->c64, dr->c4,
		       1 - (double)dr->whole / (double)no->whole,
		       1 - (double)dr->c64 / (double)no->c64, 1 - (double)dr->c4 / (double)no->c4,
		       dr->whole_ms, dr->c64_ms, dr->c4_ms);
	}
	printf("]}");
}

static void json(const mix_res_t *res, int nres, const config_t *cf, double load)
{
	printf("{\"bench\":\"export\",\"entries\":%zu,\"rounds\":%d,\"seed\":%" PRIu64
	       ",\"l19_entries\":%zu,\"mixes\":[",
	       cf->n, cf->rounds, cf->seed, cf->l19_n);
	for (int m = 0; m < nres; m++) {
		const mix_res_t *r = &res[m];
		printf("%s{\"mix\":\"%s\",\"entries\":%zu,\"wire_bytes\":%" PRIu64
		       ",\"record_bytes\":%" PRIu64 ",\"snapshot_file_bytes\":%" PRIu64
		       ",\"fill_per_s\":%.0f,",
		       m ? "," : "", r->mix->name, r->entries, r->wire_bytes, r->record_bytes,
		       r->snap_file, r->fill_per_s);
		if (r->mix->response == realmix_response) {
			printf("\"kinds\":{");
			for (unsigned k = 0; k < REALMIX_KINDS; k++)
				printf("%s\"%s\":%zu", k ? "," : "", realmix_kind_name(k),
				       r->kinds[k]);
			printf("},");
		}
		printf("\"levels\":[");
		for (int k = 0; k < r->nlv; k++)
			json_level(&r->lv[k], k == 0);
		printf("]");
		if (r->ndr > 0)
			json_dict(r);
		printf("}");
	}
	printf("],\"loadavg_1m\":%.2f}\n", load);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: bench_export [--entries N] [--mix big|real|both] [--levels 1,3,9,19]\n"
		"                    [--l19-entries M] [--rounds R] [--dir DIR] [--seed S]\n"
		"                    [--dict-entries T] [--dict-level L] [--no-dict] [--keep] "
		"[--json]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	config_t cf = { .n = 200000, .l19_n = 50000, .rounds = 3, .dict = 1, .dict_level = 3,
			.seed = 1, .dir = "/tmp" };
	const char *which = "both", *levels = "1,3,9,19";
	int as_json = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--json") == 0)
			as_json = 1;
		else if (strcmp(a, "--keep") == 0)
			keep_files = 1;
		else if (strcmp(a, "--no-dict") == 0)
			cf.dict = 0;
		else if (strcmp(a, "--entries") == 0 && v)
			cf.n = strtoull(v, NULL, 0), i++;
		else if (strcmp(a, "--mix") == 0 && v)
			which = v, i++;
		else if (strcmp(a, "--levels") == 0 && v)
			levels = v, i++;
		else if (strcmp(a, "--l19-entries") == 0 && v)
			cf.l19_n = strtoull(v, NULL, 0), i++;
		else if (strcmp(a, "--rounds") == 0 && v)
			cf.rounds = atoi(v), i++;
		else if (strcmp(a, "--dir") == 0 && v)
			cf.dir = v, i++;
		else if (strcmp(a, "--seed") == 0 && v)
			cf.seed = strtoull(v, NULL, 0), i++;
		else if (strcmp(a, "--dict-entries") == 0 && v)
			cf.train_n = strtoull(v, NULL, 0), i++;
		else if (strcmp(a, "--dict-level") == 0 && v)
			cf.dict_level = atoi(v), i++;
		else
			usage();
	}
	for (const char *p = levels; *p;) {
		char *end;
		long l = strtol(p, &end, 10);
		if (end == p || l < 1 || l > ZSTD_maxCLevel() || cf.nlevels == MAX_LEVELS)
			usage();
		cf.levels[cf.nlevels++] = (int)l;
		p = *end == ',' ? end + 1 : end;
		if (*end != ',' && *end != 0)
			usage();
	}
	if (cf.n == 0 || cf.l19_n == 0 || cf.rounds < 1 || cf.rounds > MAX_ROUNDS ||
	    cf.nlevels == 0 || cf.dict_level < 1 || cf.dict_level > ZSTD_maxCLevel())
		usage();
	if (cf.train_n == 0)
		cf.train_n = cf.n < 100000 ? cf.n : 100000;
	cf.quiet = as_json;

	mix_res_t res[2];
	int nres = 0;
	memset(res, 0, sizeof res);
	for (int m = 0; m < 2; m++) {
		if (strcmp(which, "both") != 0 && strcmp(which, mixes[m].name) != 0)
			continue;
		run_mix(&mixes[m], &cf, &res[nres++]);
	}
	if (nres == 0)
		usage();
	double load = 0;
	getloadavg(&load, 1);
	if (as_json)
		json(res, nres, &cf, load);
	else
		table(res, nres, &cf, load);
	return 0;
}
