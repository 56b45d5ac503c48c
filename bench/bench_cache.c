/*
 * bench_cache: the Big Pineapple benchmark (Cloudflare 1.1.1.1's cache) for
 * dnsnap's cache and for the article's "before" layout (before.c), in one run
 * and one harness. Prints the article's table with their figures beside it,
 * or one JSON object with --json.
 *
 *   bench_cache [--entries N] [--lookups M] [--rounds R] [--seed S] [--json]
 *               [--only before|dnsnap] [--hash-only] [--threads T]
 *
 * The mix (mix.c): 56% A, 25% AAAA, 19% TXT of 64-224 random bytes, 1-4
 * records per entry, TTLs 60-86400, realistic names, every entry its own key.
 * All N responses are built in wire form before anything is timed, in one
 * arena, and inserted through the real path (dnsnap_cache_insert: parse,
 * encode, allocate, index). The M lookup queries are built beforehand too, in
 * lookup order (one arena read sequentially), for keys drawn uniformly over
 * the N entries; both sides answer the same queries.
 *
 * Each side runs in its own child process forked from the same parent (the
 * prebuilt messages are shared copy-on-write and only read), so neither side
 * inherits the other's heap; rounds alternate which side runs first and each
 * figure is the median over rounds.
 *
 * How each figure is measured (malloc IS jemalloc: link with -ljemalloc):
 * - bytes per entry: jemalloc stats.allocated after the N inserts minus
 *   before (thread.tcache.flush, then an "epoch" refresh, before each read),
 *   divided by N. The window opens after the messages and the encoding
 *   scratch exist and before the cache is created, so it holds exactly the
 *   cache: index, keys, entries, allocator rounding. Nothing is freed inside
 *   it except what the cache frees (old index arrays when it grows).
 * - allocations per entry: the difference of stats.arenas.<ALL>.small.nrequests
 *   + large.nrequests (allocation requests, reallocs included, whether served
 *   by the thread cache or the arena) over the same window, divided by N.
 * - inserts per second: N / the wall time (CLOCK_MONOTONIC) of the insert
 *   loop, one thread, one reusable heap-allocated dnsnap_encoded_t, into a
 *   fresh heap: every new 4 KB page costs a page fault (expensive on a VM,
 *   and proportional to bytes per entry); the faults per entry are printed
 *   on each round's line (getrusage ru_minflt over the insert loop).
 * - lookup median and p99: each of the M lookups is timed on its own with a
 *   pair of clock_gettime(CLOCK_MONOTONIC) calls (vDSO, no system call),
 *   around the full flow: dnsnap_query_parse() of the prebuilt query +
 *   dnsnap_cache_answer() into a 64 KB buffer (TCP size limit, so TXT answers
 *   are not truncated); for "before", before_answer() (its own query parse,
 *   find, write). The median cost of an empty timed region (measured in the
 *   same child) is subtracted from each sample. The cache is hundreds of MB,
 *   far beyond the CPU caches, so every lookup is a cold one.
 *   Also reported: the mean of a second pass over the same queries timed as
 *   a whole (no per-lookup timer), as a check on the subtraction.
 * - index hash, ns per key: the keys of the M lookups (parsed from the
 *   queries beforehand, about 30 bytes each) hashed in a loop, 7 passes,
 *   median pass / M, for three functions: the cache's seeded
 *   XXH3_64bits_withSeed (a random seed), unseeded XXH3_64bits, and the
 *   index's former unseeded hash (8-byte multiply-fold and a murmur3
 *   finalizer, until 2026-11-30). The sum of the hashes is printed so that
 *   no loop is optimised away. --hash-only runs just this, for
 *   `valgrind --tool=callgrind` (each function is a non-inlined wrapper).
 * - lookups per second with 1 and with T threads (--threads T, dnsnap's side
 *   only: "before" is single-threaded): after the timed lookups, each of t
 *   threads answers all M queries (thread k starting at query k*M/t, into its
 *   own buffer), untimed one by one; the figure is t*M / the wall time from
 *   the start signal to the last thread's end. On an idle machine with T free
 *   cores, T times the 1-thread figure is perfect scaling; less is the price
 *   of cache lines that every lookup writes (the shard's read lock, counters).
 * Sanity: every lookup must hit, and both sides must produce the same total
 * number of answer bytes.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <jemalloc/jemalloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL /* as engine/cache.c includes it */
#include <xxhash.h>

#include "before.h"
#include "dnsnap.h"
#include "timing.h"
#include "mix.h"

#define NOW 1700000000u
#define STR_(x) #x
#define STR(x) STR_(x)

/* --------------------------------------------------------------- inputs */

typedef struct arena {
	uint8_t *bytes;
	size_t *off; /* n + 1 offsets */
	size_t n, len, cap;
} arena_t;

static int arena_add(arena_t *a, size_t max, int (*build)(size_t, uint8_t *, size_t, size_t *, void *),
		     size_t i, void *arg)
{
	if (a->cap - a->len < max) {
		size_t cap = a->cap ? a->cap * 2 : 1 << 20;
		uint8_t *p = realloc(a->bytes, cap);
		if (p == NULL)
			return -1;
		a->bytes = p;
		a->cap = cap;
	}
	size_t len;
	if (build(i, a->bytes + a->len, max, &len, arg) != 0)
		return -1;
	a->len += len;
	a->off[++a->n] = a->len;
	return 0;
}

static int build_response(size_t i, uint8_t *buf, size_t cap, size_t *len, void *arg)
{
	(void)arg;
	return mix_response(i, buf, cap, len);
}

static int build_query(size_t i, uint8_t *buf, size_t cap, size_t *len, void *arg)
{
	const size_t *keys = arg;
	return mix_query(keys[i], (uint16_t)(i * 40503u), buf, cap, len);
}

/* ---------------------------------------------------------- measurement */

typedef struct heap_stats {
	uint64_t allocated;
	uint64_t requests;
} heap_stats_t;

static int heap_stats(heap_stats_t *s)
{
	uint64_t epoch = 1, small = 0, large = 0;
	size_t allocated = 0, sz;
	int rc = mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
	sz = sizeof epoch;
	rc |= mallctl("epoch", &epoch, &sz, &epoch, sz);
	sz = sizeof allocated;
	rc |= mallctl("stats.allocated", &allocated, &sz, NULL, 0);
	sz = sizeof small;
	rc |= mallctl("stats.arenas." STR(MALLCTL_ARENAS_ALL) ".small.nrequests", &small, &sz, NULL, 0);
	sz = sizeof large;
	rc |= mallctl("stats.arenas." STR(MALLCTL_ARENAS_ALL) ".large.nrequests", &large, &sz, NULL, 0);
	s->allocated = allocated;
	s->requests = small + large;
	return rc;
}

typedef struct result {
	int ok;
	char err[160];
	size_t entries;
	double bytes_per_entry, allocs_per_entry, inserts_per_s;
	double lookup_ns_median, lookup_ns_p99, lookup_ns_mean, timer_ns;
	double faults_per_entry; /* minor page faults during the inserts, / N */
	uint64_t answer_bytes;
	double lookups_per_s_1t, lookups_per_s_nt; /* --threads: 1 thread, T threads */
} result_t;

static int nthreads = 1; /* --threads */

typedef struct side {
	const char *name;
	void *(*create)(void);
	int (*insert)(void *c, const uint8_t *msg, size_t len, void *scratch, char *err, size_t errlen);
	int (*answer)(void *c, const uint8_t *q, size_t qlen, uint8_t *out, size_t cap, size_t *out_len);
	size_t (*count)(void *c);
	void (*destroy)(void *c);
} side_t;

/* before.c */
static void *b_create(void)
{
	return before_new();
}

static int b_insert(void *c, const uint8_t *msg, size_t len, void *scratch, char *err, size_t errlen)
{
	(void)scratch;
	int rc = before_insert(c, msg, len, NOW);
	if (rc != 0)
		snprintf(err, errlen, "before_insert: %d", rc);
	return rc;
}

static int b_answer(void *c, const uint8_t *q, size_t qlen, uint8_t *out, size_t cap, size_t *out_len)
{
	return before_answer(c, q, qlen, NOW + 1, out, cap, out_len);
}

static size_t b_count(void *c)
{
	return before_count(c);
}

static void b_destroy(void *c)
{
	before_free(c);
}

/* dnsnap */
static void *d_create(void)
{
	dnsnap_cache_t *c = NULL;
	return dnsnap_cache_new(NULL, &c) == DNSNAP_OK ? c : NULL;
}

static int d_insert(void *c, const uint8_t *msg, size_t len, void *scratch, char *err, size_t errlen)
{
	dnsnap_diag_t diag;
	int rc = dnsnap_cache_insert(c, msg, len, NOW, NULL, 0, scratch, &diag);
	if (rc != DNSNAP_OK)
		snprintf(err, errlen, "dnsnap_cache_insert: %s at %zu: %s", dnsnap_errname(rc),
			 diag.offset, diag.msg);
	return rc;
}

static int d_answer(void *c, const uint8_t *q, size_t qlen, uint8_t *out, size_t cap, size_t *out_len)
{
	dnsnap_query_t query;
	int rc = dnsnap_query_parse(q, qlen, NULL, 0, &query, NULL);
	if (rc != DNSNAP_OK)
		return rc;
	return dnsnap_cache_answer(c, &query, NOW + 1, 65535, out, cap, out_len);
}

static size_t d_count(void *c)
{
	dnsnap_cache_stats_t st;
	dnsnap_cache_stats(c, &st);
	return st.entries;
}

static void d_destroy(void *c)
{
	dnsnap_cache_free(c);
}

static const side_t sides[2] = {
	{"before", b_create, b_insert, b_answer, b_count, b_destroy},
	{"dnsnap", d_create, d_insert, d_answer, d_count, d_destroy},
};

/* --threads: t threads answer every query of the list, each from its own offset. */
typedef struct lk_thread {
	const side_t *s;
	void *c;
	const arena_t *queries;
	size_t first;
	int bad;
	pthread_t tid;
} lk_thread_t;

static void *lk_run(void *arg)
{
	lk_thread_t *t = arg;
	static _Thread_local uint8_t buf[65536];
	size_t m = t->queries->n;
	for (size_t k = 0; k < m; k++) {
		size_t j = (t->first + k) % m, olen;
		if (t->s->answer(t->c, t->queries->bytes + t->queries->off[j],
				 t->queries->off[j + 1] - t->queries->off[j], buf, sizeof buf, &olen) != 0)
			t->bad++;
	}
	return NULL;
}

/* Lookups per second with t threads, or -1 when a thread fails. */
static double lookups_per_s(const side_t *s, void *c, const arena_t *queries, int t)
{
	lk_thread_t th[64];
	uint64_t t0 = now_ns();
	for (int k = 0; k < t; k++) {
		th[k] = (lk_thread_t){ s, c, queries, queries->n / (size_t)t * (size_t)k, 0, 0 };
		if (pthread_create(&th[k].tid, NULL, lk_run, &th[k]) != 0)
			return -1;
	}
	int bad = 0;
	for (int k = 0; k < t; k++) {
		pthread_join(th[k].tid, NULL);
		bad += th[k].bad;
	}
	double secs = (double)(now_ns() - t0) / 1e9;
	return bad ? -1 : (double)t * (double)queries->n / secs;
}

/* One side, in a child process: fill, then look up. */
static void run_side(const side_t *s, const arena_t *msgs, const arena_t *queries, result_t *r)
{
	static uint8_t out[65536];
	memset(r, 0, sizeof *r);
	size_t n = msgs->n, m = queries->n;
	uint32_t *lat = malloc(m * sizeof *lat);
	dnsnap_encoded_t *scratch = malloc(sizeof *scratch);
	if (lat == NULL || scratch == NULL) {
		snprintf(r->err, sizeof r->err, "out of memory");
		return;
	}
	memset(scratch, 0, sizeof *scratch);
	memset(lat, 0, m * sizeof *lat);

	heap_stats_t h0, h1;
	if (heap_stats(&h0) != 0) {
		snprintf(r->err, sizeof r->err, "mallctl failed: is malloc jemalloc (-ljemalloc)?");
		return;
	}
	void *c = s->create();
	if (c == NULL) {
		snprintf(r->err, sizeof r->err, "%s: cannot create the cache", s->name);
		return;
	}
	struct rusage ru0, ru1;
	getrusage(RUSAGE_SELF, &ru0);
	uint64_t t0 = now_ns();
	for (size_t i = 0; i < n; i++)
		if (s->insert(c, msgs->bytes + msgs->off[i], msgs->off[i + 1] - msgs->off[i], scratch,
			      r->err, sizeof r->err) != 0)
			return;
	uint64_t t1 = now_ns();
	getrusage(RUSAGE_SELF, &ru1);
	r->faults_per_entry = (double)(ru1.ru_minflt - ru0.ru_minflt) / (double)n;
	heap_stats(&h1);
	r->entries = s->count(c);
	if (r->entries != n) {
		snprintf(r->err, sizeof r->err, "%s: %zu entries after %zu inserts", s->name,
			 r->entries, n);
		return;
	}
	r->bytes_per_entry = (double)(h1.allocated - h0.allocated) / (double)n;
	r->allocs_per_entry = (double)(h1.requests - h0.requests) / (double)n;
	r->inserts_per_s = (double)n / ((double)(t1 - t0) / 1e9);

	uint32_t over = timer_overhead();
	r->timer_ns = over;
	for (size_t j = 0; j < m; j++) {
		const uint8_t *q = queries->bytes + queries->off[j];
		size_t qlen = queries->off[j + 1] - queries->off[j], olen = 0;
		uint64_t a = now_ns();
		int rc = s->answer(c, q, qlen, out, sizeof out, &olen);
		uint64_t b = now_ns();
		if (rc != 0) {
			snprintf(r->err, sizeof r->err, "%s: lookup %zu failed (%d)", s->name, j, rc);
			return;
		}
		uint64_t d = b - a;
		lat[j] = d > over ? (uint32_t)(d - over) : 0;
		r->answer_bytes += olen;
	}
	uint64_t t2 = now_ns();
	for (size_t j = 0; j < m; j++) {
		size_t olen;
		s->answer(c, queries->bytes + queries->off[j], queries->off[j + 1] - queries->off[j],
			  out, sizeof out, &olen);
	}
	r->lookup_ns_mean = (double)(now_ns() - t2) / (double)m;
	qsort(lat, m, sizeof *lat, cmp_u32);
	r->lookup_ns_median = lat[m / 2];
	r->lookup_ns_p99 = lat[(size_t)((double)m * 0.99)];
	if (nthreads > 1 && s == &sides[1]) {
		r->lookups_per_s_1t = lookups_per_s(s, c, queries, 1);
		r->lookups_per_s_nt = lookups_per_s(s, c, queries, nthreads);
		if (r->lookups_per_s_1t < 0 || r->lookups_per_s_nt < 0) {
			snprintf(r->err, sizeof r->err, "%s: a threaded lookup failed", s->name);
			return;
		}
	}
	r->ok = 1;
	/* the child exits without freeing: the process ends here */
}

static int fork_side(const side_t *s, const arena_t *msgs, const arena_t *queries, result_t *r)
{
	int fd[2];
	if (pipe(fd) != 0)
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(fd[0]);
		result_t res;
		run_side(s, msgs, queries, &res);
		ssize_t w = write(fd[1], &res, sizeof res);
		_exit(w == (ssize_t)sizeof res ? 0 : 1);
	}
	close(fd[1]);
	size_t got = 0;
	while (got < sizeof *r) {
		ssize_t k = read(fd[0], (char *)r + got, sizeof *r - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	close(fd[0]);
	int status;
	waitpid(pid, &status, 0);
	if (got != sizeof *r) {
		memset(r, 0, sizeof *r);
		snprintf(r->err, sizeof r->err, "%s: child died (status %d)", s->name, status);
	}
	return 0;
}

/* ------------------------------------------------------------- reporting */

static double median_of(const result_t *rs, int n, size_t field)
{
	double v[64];
	for (int k = 0; k < n; k++)
		memcpy(&v[k], (const char *)&rs[k] + field, sizeof(double));
	qsort(v, (size_t)n, sizeof v[0], cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void summarize(const result_t *rs, int n, result_t *out)
{
	*out = rs[0];
	out->bytes_per_entry = median_of(rs, n, offsetof(result_t, bytes_per_entry));
	out->allocs_per_entry = median_of(rs, n, offsetof(result_t, allocs_per_entry));
	out->inserts_per_s = median_of(rs, n, offsetof(result_t, inserts_per_s));
	out->lookup_ns_median = median_of(rs, n, offsetof(result_t, lookup_ns_median));
	out->lookup_ns_p99 = median_of(rs, n, offsetof(result_t, lookup_ns_p99));
	out->lookup_ns_mean = median_of(rs, n, offsetof(result_t, lookup_ns_mean));
	out->timer_ns = median_of(rs, n, offsetof(result_t, timer_ns));
	out->faults_per_entry = median_of(rs, n, offsetof(result_t, faults_per_entry));
	out->lookups_per_s_1t = median_of(rs, n, offsetof(result_t, lookups_per_s_1t));
	out->lookups_per_s_nt = median_of(rs, n, offsetof(result_t, lookups_per_s_nt));
}

static void json_side(const result_t *r)
{
	printf("\"entries\":%zu,\"bytes_per_entry\":%.1f,\"allocs_per_entry\":%.3f,"
	       "\"inserts_per_s\":%.0f,\"lookup_ns_median\":%.0f,\"lookup_ns_p99\":%.0f,"
	       "\"lookup_ns_mean\":%.0f,\"timer_ns\":%.0f,\"faults_per_entry\":%.3f,"
	       "\"answer_bytes\":%" PRIu64,
	       r->entries, r->bytes_per_entry, r->allocs_per_entry, r->inserts_per_s,
	       r->lookup_ns_median, r->lookup_ns_p99, r->lookup_ns_mean, r->timer_ns,
	       r->faults_per_entry, r->answer_bytes);
	if (nthreads > 1 && r->lookups_per_s_1t > 0)
		printf(",\"threads\":%d,\"lookups_per_s_1t\":%.0f,\"lookups_per_s_nt\":%.0f",
		       nthreads, r->lookups_per_s_1t, r->lookups_per_s_nt);
}

static double pct(double before, double after)
{
	return before != 0 ? (after - before) / before * 100.0 : 0;
}

static void row(const char *label, const char *fmt, double b, double d, const char *article)
{
	char bs[32], ds[32];
	snprintf(bs, sizeof bs, fmt, b);
	snprintf(ds, sizeof ds, fmt, d);
	printf("%-24s %10s %10s %+8.1f%%   | %s\n", label, bs, ds, pct(b, d), article);
}


/* ------------------------------------------------------------ index hash */

/* The index's former hash (engine/cache.c before the seed): unseeded. */
static uint64_t former_hash(const uint8_t *k, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15u ^ n;
	while (n >= 8) {
		uint64_t v;
		memcpy(&v, k, 8);
		h = (h ^ v) * 0xff51afd7ed558ccdu;
		h ^= h >> 32;
		k += 8;
		n -= 8;
	}
	uint64_t v = 0;
	memcpy(&v, k, n);
	h = (h ^ v) * 0xc4ceb9fe1a85ec53u;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdu;
	h ^= h >> 33;
	return h;
}

static uint64_t hash_seed;

__attribute__((noinline)) static uint64_t h_seeded(const uint8_t *k, size_t n)
{
	return XXH3_64bits_withSeed(k, n, hash_seed);
}
__attribute__((noinline)) static uint64_t h_xxh3(const uint8_t *k, size_t n)
{
	return XXH3_64bits(k, n);
}
__attribute__((noinline)) static uint64_t h_former(const uint8_t *k, size_t n)
{
	return former_hash(k, n);
}

typedef struct hash_result {
	double ns[3];            /* seeded, xxh3, former */
	double key_bytes;        /* mean key length */
	uint64_t sum;
} hash_result_t;

static const char *const hash_names[3] = {
	"XXH3_64bits_withSeed (now)", "XXH3_64bits (unseeded)", "former unseeded hash",
};

/* Keys of the queries, back to back; *off has m + 1 offsets. */
static int query_keys(const arena_t *queries, arena_t *keys)
{
	keys->off = calloc(queries->n + 1, sizeof *keys->off);
	keys->bytes = malloc(queries->n * DNSNAP_KEY_MAX);
	if (keys->off == NULL || keys->bytes == NULL)
		return -1;
	for (size_t j = 0; j < queries->n; j++) {
		dnsnap_query_t q;
		if (dnsnap_query_parse(queries->bytes + queries->off[j],
				       queries->off[j + 1] - queries->off[j], NULL, 0, &q, NULL) != 0)
			return -1;
		memcpy(keys->bytes + keys->len, q.key, q.key_len);
		keys->len += q.key_len;
		keys->off[++keys->n] = keys->len;
	}
	return 0;
}

static void hash_bench(const arena_t *keys, hash_result_t *r)
{
	uint64_t (*const fn[3])(const uint8_t *, size_t) = { h_seeded, h_xxh3, h_former };
	FILE *u = fopen("/dev/urandom", "rb");
	if (u == NULL || fread(&hash_seed, sizeof hash_seed, 1, u) != 1)
		hash_seed = (uint64_t)now_ns();
	if (u != NULL)
		fclose(u);
	r->sum = 0;
	r->key_bytes = (double)keys->len / (double)keys->n;
	enum { PASSES = 7 };
	for (int f = 0; f < 3; f++) {
		double pass[PASSES];
		for (int p = 0; p < PASSES; p++) {
			uint64_t t0 = now_ns(), sum = 0;
			for (size_t j = 0; j < keys->n; j++)
				sum += fn[f](keys->bytes + keys->off[j], keys->off[j + 1] - keys->off[j]);
			pass[p] = (double)(now_ns() - t0) / (double)keys->n;
			r->sum += sum;
		}
		qsort(pass, PASSES, sizeof pass[0], cmp_double);
		r->ns[f] = pass[PASSES / 2];
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_cache [--entries N] [--lookups M] [--rounds R] [--seed S] "
			"[--json] [--only before|dnsnap] [--hash-only] [--threads T]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	size_t n = 1000000, m = 0;
	int rounds = 3, json = 0, only = -1, hash_only = 0;
	uint64_t seed = 0x1111;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--json") == 0)
			json = 1;
		else if (strcmp(a, "--entries") == 0 && v)
			n = strtoull(v, NULL, 0), i++;
		else if (strcmp(a, "--lookups") == 0 && v)
			m = strtoull(v, NULL, 0), i++;
		else if (strcmp(a, "--rounds") == 0 && v)
			rounds = atoi(v), i++;
		else if (strcmp(a, "--seed") == 0 && v)
			seed = strtoull(v, NULL, 0), i++;
		else if (strcmp(a, "--threads") == 0 && v)
			nthreads = atoi(v), i++;
		else if (strcmp(a, "--hash-only") == 0)
			hash_only = 1;
		else if (strcmp(a, "--only") == 0 && v)
			only = strcmp(v, "before") == 0 ? 0 : strcmp(v, "dnsnap") == 0 ? 1 : (usage(), 0), i++;
		else
			usage();
	}
	if (n == 0 || rounds < 1 || rounds > 64 || nthreads < 1 || nthreads > 64)
		usage();
	if (m == 0)
		m = n < 1000000 ? n : 1000000;

	/* Inputs, built before anything is measured. */
	mix_init(seed);
	arena_t msgs = {0}, queries = {0};
	msgs.off = calloc(n + 1, sizeof *msgs.off);
	queries.off = calloc(m + 1, sizeof *queries.off);
	size_t *keys = malloc(m * sizeof *keys);
	if (msgs.off == NULL || queries.off == NULL || keys == NULL)
		return fprintf(stderr, "bench_cache: out of memory\n"), 1;
	size_t types[3] = {0}, records = 0;
	for (size_t i = 0; i < n; i++) {
		if (arena_add(&msgs, MIX_RESPONSE_MAX, build_response, i, NULL) != 0)
			return fprintf(stderr, "bench_cache: out of memory\n"), 1;
		uint16_t t = mix_qtype(i);
		types[t == MIX_TYPE_A ? 0 : t == MIX_TYPE_AAAA ? 1 : 2]++;
		records += mix_records(i);
	}
	uint64_t st = seed ^ 0x6c6f6f6b75707321ull;
	st = st ? st : 1;
	for (size_t j = 0; j < m; j++)
		keys[j] = (size_t)((mix_rand(&st) >> 11) % n);
	for (size_t j = 0; j < m; j++)
		if (arena_add(&queries, MIX_QUERY_MAX, build_query, j, keys) != 0)
			return fprintf(stderr, "bench_cache: out of memory\n"), 1;

	arena_t hkeys = {0};
	hash_result_t hr;
	if (query_keys(&queries, &hkeys) != 0)
		return fprintf(stderr, "bench_cache: cannot parse the queries' keys\n"), 1;
	hash_bench(&hkeys, &hr);
	free(hkeys.bytes);
	free(hkeys.off);
	if (hash_only) {
		for (int f = 0; f < 3; f++)
			printf("index hash %-28s %6.2f ns/key\n", hash_names[f], hr.ns[f]);
		printf("(%zu keys of %.1f bytes on average; checksum %016" PRIx64 ")\n", m,
		       hr.key_bytes, hr.sum);
		return 0;
	}

	/* Give the pages that building the inputs freed (realloc growth) back to
	 * the kernel: a child reusing them would copy-on-write every 4 KB page. */
	mallctl("arena." STR(MALLCTL_ARENAS_ALL) ".purge", NULL, NULL, NULL, 0);

	result_t res[2][64];
	int nr[2] = {0, 0};
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < 2; k++) {
			int s = (r % 2) ? 1 - k : k;
			if (only >= 0 && s != only)
				continue;
			result_t *x = &res[s][nr[s]++];
			fork_side(&sides[s], &msgs, &queries, x);
			if (!x->ok)
				return fprintf(stderr, "bench_cache: %s\n", x->err), 1;
			if (!json)
				fprintf(stderr, "round %d %s: %.1f B/entry, %.2f allocs, %.0f inserts/s, "
						"lookup median %.0f p99 %.0f mean %.0f ns (timer %.0f ns), "
						"%.3f page faults/entry\n",
					r + 1, sides[s].name, x->bytes_per_entry, x->allocs_per_entry,
					x->inserts_per_s, x->lookup_ns_median, x->lookup_ns_p99,
					x->lookup_ns_mean, x->timer_ns, x->faults_per_entry);
			if (!json && x->lookups_per_s_1t > 0)
				fprintf(stderr, "round %d %s: lookups/s 1 thread %.0f, %d threads %.0f "
						"(x%.2f)\n", r + 1, sides[s].name, x->lookups_per_s_1t,
					nthreads, x->lookups_per_s_nt,
					x->lookups_per_s_nt / x->lookups_per_s_1t);
		}
	}
	result_t sum[2] = {{0}};
	for (int s = 0; s < 2; s++)
		if (nr[s] > 0)
			summarize(res[s], nr[s], &sum[s]);
	if (only < 0 && sum[0].answer_bytes != sum[1].answer_bytes)
		fprintf(stderr, "bench_cache: warning: answers differ in size: before %" PRIu64
				" bytes, dnsnap %" PRIu64 "\n",
			sum[0].answer_bytes, sum[1].answer_bytes);

	if (json) {
		const result_t *d = &sum[only < 0 ? 1 : only];
		printf("{\"bench\":\"cache\",\"side\":\"%s\",\"lookups\":%zu,\"rounds\":%d,"
		       "\"seed\":%" PRIu64 ",",
		       only == 0 ? "before" : "dnsnap", m, rounds, seed);
		json_side(d);
		printf(",\"hash_ns_per_key\":{\"seeded_xxh3\":%.2f,\"xxh3\":%.2f,\"former\":%.2f}",
		       hr.ns[0], hr.ns[1], hr.ns[2]);
		if (only < 0) {
			printf(",\"before\":{");
			json_side(&sum[0]);
			printf("}");
		}
		printf("}\n");
		return 0;
	}

	printf("Big Pineapple mix: %zu entries (A %.1f%%, AAAA %.1f%%, TXT %.1f%%; %.2f records "
	       "per entry; %.0f wire bytes per response), %zu lookups, median of %d round%s\n\n",
	       n, 100.0 * (double)types[0] / (double)n, 100.0 * (double)types[1] / (double)n,
	       100.0 * (double)types[2] / (double)n, (double)records / (double)n,
	       (double)msgs.len / (double)n, m, rounds, rounds > 1 ? "s" : "");
	if (only >= 0) {
		const result_t *x = &sum[only];
		printf("%s only: %.1f bytes/entry, %.2f allocations/entry, %.0f inserts/s, lookup "
		       "median %.0f ns, p99 %.0f ns, mean %.0f ns\n",
		       sides[only].name, x->bytes_per_entry, x->allocs_per_entry, x->inserts_per_s,
		       x->lookup_ns_median, x->lookup_ns_p99, x->lookup_ns_mean);
		if (x->lookups_per_s_1t > 0)
			printf("lookups per second: 1 thread %.0f, %d threads %.0f (x%.2f)\n",
			       x->lookups_per_s_1t, nthreads, x->lookups_per_s_nt,
			       x->lookups_per_s_nt / x->lookups_per_s_1t);
		printf("index hash, ns per key (%.1f-byte keys): seeded XXH3 %.2f (now), unseeded "
		       "XXH3 %.2f, former unseeded hash %.2f\n",
		       hr.key_bytes, hr.ns[0], hr.ns[1], hr.ns[2]);
		return 0;
	}
	const result_t *b = &sum[0], *d = &sum[1];
	printf("%-24s %10s %10s %9s   | %s\n", "", "before", "dnsnap", "change",
	       "the article (before -> after)");
	row("bytes per entry", "%.0f", b->bytes_per_entry, d->bytes_per_entry,
	    "953 -> 420 bytes (-55.9%)");
	row("allocations per entry", "%.2f", b->allocs_per_entry, d->allocs_per_entry,
	    "not given as a count (1.1 KB -> 461 B allocated)");
	row("inserts per second", "%.0f", b->inserts_per_s, d->inserts_per_s,
	    "625k -> 893k (+42.9%)");
	row("lookup median ns", "%.0f", b->lookup_ns_median, d->lookup_ns_median,
	    "828 -> 670 ns (-19.1%)");
	row("lookup p99 ns", "%.0f", b->lookup_ns_p99, d->lookup_ns_p99, "not given");
	row("lookup mean ns (check)", "%.0f", b->lookup_ns_mean, d->lookup_ns_mean,
	    "untimed pass / lookups, no timer");
	printf("\nindex hash, ns per key (%.1f-byte keys): seeded XXH3 %.2f (now), unseeded "
	       "XXH3 %.2f, former unseeded hash %.2f\n",
	       hr.key_bytes, hr.ns[0], hr.ns[1], hr.ns[2]);
	printf("\nlookups: full flow (query parse, find, build the answer), keys uniform over "
	       "the entries; each timed alone, timer cost %.0f ns subtracted\n",
	       d->timer_ns);
	return 0;
}
