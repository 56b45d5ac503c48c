/*
 * bench_snap: snapshot figures for the Big Pineapple mix (mix.c): write
 * throughput, size on disk, open time, time to the first answer after a
 * process starts, and lookup + answer latency from the mapped file. Prints a
 * table with the targets beside it, or one JSON object with --json.
 *
 *   bench_snap [--entries N] [--dir DIR] [--lookups M] [--rounds R]
 *              [--insert-rounds K] [--opens K] [--seed S] [--keep] [--json]
 *
 * The snapshot is DIR/bench_snap.PID.mdb (DIR defaults to /tmp), removed at
 * the end unless --keep. All figures are with a warm page cache: the file was
 * just written, so its pages are in memory (nothing here drops caches).
 *
 * How each figure is measured (CLOCK_MONOTONIC throughout):
 * - fill (not a target): N mix responses inserted with dnsnap_cache_insert(),
 *   one thread, built one at a time; memory_bytes_per_entry: jemalloc's
 *   stats.allocated after the fill minus before the cache was made, / N (as
 *   bench_cache measures it, without its prebuilt responses).
 * - write: the wall time of dnsnap_snap_write() (shard copies, the pages,
 *   fsync, rename), R times over the same path; entries/s = stats.entries /
 *   that time, median over rounds. longest pause = the stats' longest_pause_ms
 *   (the longest a shard was held from inserts), the worst over rounds.
 * - bytes per entry: the file's size (stat) / N; file / encoded = the file's
 *   size / stats.entry_bytes (keys + entries as encoded). LMDB page fill: the
 *   file opened with LMDB directly (read-only, no lock), mdb_stat() of the
 *   "entries" database: entry_bytes / (leaf + overflow pages x page size);
 *   the remainder is LMDB's node headers, slot array and free page space.
 * - open: K children forked from this process after the cache is freed, each
 *   timing dnsnap_snap_open() alone (a fresh process: no LMDB environment, no
 *   mapping, nothing of the file in its address space); median over K. A
 *   forked child pays copy-on-write faults on the parent's allocator pages
 *   when it first allocates (its minor faults are printed): the open timed
 *   inside the re-executed children below has no such cost, and is printed
 *   beside it.
 * - first answer: K times, this program re-executes itself (posix_spawn of
 *   /proc/self/exe --first-answer FILE) and the time runs from just before
 *   posix_spawn to the moment the child has its answer (the child reports the
 *   CLOCK_MONOTONIC instant through a pipe; the clock is system-wide). So it
 *   includes process creation, exec, dynamic linking (liblmdb, libxxhash,
 *   libjemalloc, libc), then dnsnap_snap_open(), building one query (a random
 *   key), dnsnap_query_parse() and dnsnap_snap_answer(). Median over K; the
 *   child's own split (start to main(), open, parse + answer) is printed too,
 *   and main() to the answer on its own: process creation is the machine's
 *   cost, the rest is dnsnap's.
 * - disk floor: as many bytes as the file written to DIR and fsync'ed, no
 *   LMDB: what the write cannot beat on this disk.
 * - lookup median and p99: M queries for keys drawn uniformly over the N
 *   entries, prebuilt in one arena; each timed alone with a pair of
 *   clock_gettime() calls around dnsnap_query_parse() + dnsnap_snap_answer()
 *   into a 64 KB buffer (TCP limit), the median cost of an empty timed region
 *   subtracted (as bench_cache does). Two passes over the same queries in the
 *   process that opened the snapshot: the first touches map pages for the
 *   first time (minor page faults: the page cache is warm, the process's page
 *   tables are not), the second is the steady state a running resolver sees:
 *   the headline figures are from the second pass, the first is printed
 *   beside. A third untimed pass gives the mean as a check.
 * - Value_Check: the XXH3 calls the reader makes to check one value (over its
 *   key, then its entry seeded with that), over every entry of the file
 *   copied out by a scan, timed as a loop; best of 5 passes' means. Its
 *   share of a lookup, in instructions, is what callgrind shows for
 *   dnsnap_snap_answer (the closing note of issue 10 has both).
 * - memory lookups (snapshot_over_memory_lookup): the same M queries answered
 *   from the cache before it is freed, timed as the map's are (each alone,
 *   timer cost subtracted, two passes, the second counted); the ratio is the
 *   map's median / the memory's.
 * - insert wait (insert_wait_max_ms): K more writes after the R rounds (K =
 *   R unless --insert-rounds), each with a thread inserting prebuilt fresh
 *   responses continuously, each insert timed alone; the longest over the K
 *   writes (write_with_inserts() says how the snapshot keeps N entries).
 * Sanity: every lookup must hit, and the answers from the snapshot must total
 * as many bytes as the same queries answered from the cache before the write.
 * The load average is printed at the end: other work on the machine shows in
 * every figure, the tails most.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jemalloc/jemalloc.h>
#include <lmdb.h>
#include <xxhash.h>
#include <spawn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dnsnap.h"
#include "timing.h"
#include "mix.h"

extern char **environ;

#define NOW 1700000000u
#define STR_(x) #x
#define STR(x) STR_(x)

/* Targets (at 10M entries where the size matters). */
#define TARGET_WRITE_PER_S 1.5e6
#define TARGET_OPEN_MS 5.0
#define TARGET_FIRST_ANSWER_MS 10.0
#define TARGET_LOOKUP_NS 1000.0
#define TARGET_FILE_OVER_ENCODED 1.25

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof v[0], cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The snapshot (and the disk floor's file) to remove if the parent dies. */
static char snap_path[4096], floor_path[4096];
static pid_t parent_pid;
static int keep_files;

static void die(const char *what, int rc, const dnsnap_diag_t *diag)
{
	if (getpid() == parent_pid) {
		if (!keep_files && snap_path[0])
			unlink(snap_path);
		if (floor_path[0])
			unlink(floor_path);
	}
	fprintf(stderr, "bench_snap: %s: %s (%d)%s%s\n", what,
		dnsnap_errname(rc) ? dnsnap_errname(rc) : strerror(rc < 0 ? -rc : rc), rc,
		diag && diag->msg[0] ? ": " : "", diag && diag->msg[0] ? diag->msg : "");
	exit(1);
}

static unsigned ancount(const uint8_t *msg)
{
	return (unsigned)msg[6] << 8 | msg[7];
}

/* ------------------------------------------------- the re-executed child */

/*
 * bench_snap --first-answer FILE --seed S --key K: what a restarted resolver
 * does before its first answer. Prints "T_MAIN T_OPENED T_ANSWERED RC ANCOUNT"
 * (CLOCK_MONOTONIC ns) on stdout, and exits.
 */
static int first_answer(uint64_t t_main, const char *path, uint64_t seed, size_t key)
{
	static uint8_t out[65536];
	uint8_t qbuf[MIX_QUERY_MAX];
	size_t qlen, olen = 0;
	dnsnap_snap_t *s = NULL;
	dnsnap_diag_t diag = {0};
	int rc = dnsnap_snap_open(path, &s, &diag);
	if (rc != DNSNAP_OK)
		die("--first-answer: dnsnap_snap_open", rc, &diag);
	uint64_t t_opened = now_ns();
	mix_init(seed);
	mix_query(key, 0x1234, qbuf, sizeof qbuf, &qlen);
	dnsnap_query_t q;
	rc = dnsnap_query_parse(qbuf, qlen, NULL, 0, &q, &diag);
	if (rc == DNSNAP_OK)
		rc = dnsnap_snap_answer(s, &q, NOW + 1, 65535, out, sizeof out, &olen);
	uint64_t t_answered = now_ns();
	printf("%" PRIu64 " %" PRIu64 " %" PRIu64 " %d %u\n", t_main, t_opened, t_answered, rc,
	       rc == DNSNAP_OK ? ancount(out) : 0);
	fflush(stdout);
	_exit(0); /* a resolver would go on serving: no teardown to time */
}

/* --------------------------------------------------------------- inputs */

typedef struct arena {
	uint8_t *bytes;
	size_t *off; /* n + 1 offsets */
	size_t n, len, cap;
} arena_t;

static int arena_add_query(arena_t *a, size_t key, uint16_t id)
{
	if (a->cap - a->len < MIX_QUERY_MAX) {
		size_t cap = a->cap ? a->cap * 2 : 1 << 20;
		uint8_t *p = realloc(a->bytes, cap);
		if (p == NULL)
			return -1;
		a->bytes = p;
		a->cap = cap;
	}
	size_t len;
	if (mix_query(key, id, a->bytes + a->len, MIX_QUERY_MAX, &len) != 0)
		return -1;
	a->len += len;
	a->off[++a->n] = a->len;
	return 0;
}

/* ----------------------------------------------------------- the phases */

typedef struct results {
	size_t entries;
	double fill_per_s;
	double mem_bytes_per_entry; /* jemalloc's stats.allocated over the fill / N */
	double write_ms, write_per_s, longest_pause_ms;
	double lookup_max_during_write_us;   /* the longest a lookup took while writing */
	uint64_t lookups_during_write;
	uint64_t file_size, entry_bytes;
	double bytes_per_entry, file_over_encoded, encoded_per_entry;
	/* LMDB's own view (0 when it could not be read) */
	unsigned psize, depth;
	size_t branch_pages, leaf_pages, overflow_pages, used_pages;
	double page_fill;
	double floor_ms; /* writing as many bytes to DIR and fsync, no LMDB */
	double open_ms, open_ms_min, open_ms_max, open_faults;
	double first_answer_ms, fa_exec_ms, fa_open_ms, fa_answer_us, fa_from_main_ms;
	double loadavg;
	double lookup_ns_median, lookup_ns_p99, lookup_ns_mean;
	double first_touch_ns_median, first_touch_ns_p99, first_touch_faults;
	double lookup_faults, lookup_ns_p90, lookup_ns_p999; /* second pass */
	long lookup_preempted; /* involuntary context switches during the second pass */
	size_t lookup_over_20us; /* second-pass samples over 20 us */
	double timer_ns;
	uint64_t answer_bytes_cache, answer_bytes_snap;
	double check_ns; /* the Value_Check of one entry, as the reader computes it */
	/* the same queries answered from memory, before the cache is freed */
	double mem_lookup_ns_median, mem_lookup_ns_p99, mem_first_pass_ns_median, mem_timer_ns;
	double snapshot_over_memory; /* lookup_ns_median / mem_lookup_ns_median */
	/* the insert rounds: writes with a thread inserting (write_with_inserts()) */
	int insert_rounds;
	size_t insert_pool;
	double insert_wait_max_ms, insert_max_no_write_ms, write_ms_with_inserts;
	uint64_t inserts_during_write, inserts_over_10ms;
	long insert_preemptions;
} results_t;

/* jemalloc's stats.allocated, fresh (the thread's cache flushed first). */
static uint64_t allocated(void)
{
	uint64_t epoch = 1, a = 0;
	size_t sz = sizeof epoch;
	mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
	mallctl("epoch", &epoch, &sz, &epoch, sz);
	sz = sizeof a;
	if (mallctl("stats.allocated", &a, &sz, NULL, 0) != 0)
		return 0;
	return a;
}

/* Fill a cache with N mix responses, each made just before its insert (none
 * kept: at 50M entries the responses alone would take 7 GB). Also the
 * cache's all-in bytes per entry, as bench_cache measures it: jemalloc's
 * stats.allocated after the fill minus before the cache was made. */
static dnsnap_cache_t *fill(size_t n, results_t *r)
{
	dnsnap_cache_t *c = NULL;
	uint64_t a0 = allocated();
	int rc = dnsnap_cache_new(NULL, &c);
	if (rc != DNSNAP_OK)
		die("dnsnap_cache_new", rc, NULL);
	dnsnap_encoded_t *scratch = calloc(1, sizeof *scratch);
	if (scratch == NULL)
		die("out of memory", DNSNAP_ENOMEM, NULL);
	uint8_t msg[MIX_RESPONSE_MAX];
	uint64_t t0 = now_ns();
	for (size_t i = 0; i < n; i++) {
		size_t len;
		dnsnap_diag_t diag = {0};
		mix_response(i, msg, sizeof msg, &len);
		rc = dnsnap_cache_insert(c, msg, len, NOW, NULL, 0, scratch, &diag);
		if (rc != DNSNAP_OK)
			die("dnsnap_cache_insert", rc, &diag);
	}
	r->fill_per_s = (double)n / ((double)(now_ns() - t0) / 1e9);
	free(scratch);
	uint64_t a1 = allocated();
	r->mem_bytes_per_entry = n && a1 > a0 ? (double)(a1 - a0) / (double)n : 0;
	return c;
}

/* A thread answering from the cache while a snapshot is written: the pause a
 * lookup sees is the longest single lookup. */
typedef struct prober {
	dnsnap_cache_t *c;
	size_t n;
	_Atomic int stop;
	uint64_t max_ns, count;
} prober_t;

static void *probe(void *arg)
{
	prober_t *pr = arg;
	uint64_t st = 0x9e3779b97f4a7c15u;
	uint8_t q[MIX_QUERY_MAX], out[4096];
	while (!atomic_load_explicit(&pr->stop, memory_order_relaxed)) {
		size_t len, olen;
		dnsnap_query_t dq;
		if (mix_query((size_t)(mix_rand(&st) % pr->n), 1, q, sizeof q, &len) != 0 ||
		    dnsnap_query_parse(q, len, NULL, 0, &dq, NULL) != DNSNAP_OK)
			continue;
		uint64_t t0 = now_ns();
		dnsnap_cache_answer(pr->c, &dq, NOW + 1, 65535, out, sizeof out, &olen);
		uint64_t d = now_ns() - t0;
		if (d > pr->max_ns)
			pr->max_ns = d;
		pr->count++;
	}
	return NULL;
}

/* A thread inserting while a snapshot is written: the wait an insert sees is
 * the longest single dnsnap_cache_insert(). The responses are prebuilt
 * (entries N.. of the mix: keys not in the cache) and inserted at a time
 * INSERT_AGO seconds before the write's, so that they are expired when the
 * write reaches them: the snapshot holds the same N entries as the other
 * rounds'. The pool is taken in turn; once used up, it starts again
 * (refreshes of the entries it inserted). */
#define INSERT_AGO 200000u /* > the mix's largest TTL (86400) */

typedef struct inserter {
	dnsnap_cache_t *c;
	const arena_t *pool;
	_Atomic int stop;
	size_t used;          /* distinct pool entries inserted */
	uint64_t max_ns, count, over_10ms;
	long nivcsw;          /* the thread's involuntary context switches */
	int err;              /* an insert's error: the round is void */
} inserter_t;

static void *insert_load(void *arg)
{
	inserter_t *in = arg;
	dnsnap_encoded_t *scratch = calloc(1, sizeof *scratch);
	struct rusage ru0, ru1;
	if (scratch == NULL) {
		in->err = DNSNAP_ENOMEM;
		return NULL;
	}
	getrusage(RUSAGE_THREAD, &ru0);
	for (size_t i = 0; !atomic_load_explicit(&in->stop, memory_order_relaxed);
	     i = i + 1 < in->pool->n ? i + 1 : 0) {
		const uint8_t *m = in->pool->bytes + in->pool->off[i];
		size_t len = in->pool->off[i + 1] - in->pool->off[i];
		uint64_t t0 = now_ns();
		int rc = dnsnap_cache_insert(in->c, m, len, NOW - INSERT_AGO, NULL, 0, scratch,
					     NULL);
		uint64_t d = now_ns() - t0;
		if (rc != DNSNAP_OK) {
			in->err = rc;
			break;
		}
		if (d > in->max_ns)
			in->max_ns = d;
		in->over_10ms += d > 10000000u;
		in->count++;
		if (in->used < i + 1)
			in->used = i + 1;
	}
	getrusage(RUSAGE_THREAD, &ru1);
	in->nivcsw = ru1.ru_nivcsw - ru0.ru_nivcsw;
	free(scratch);
	return NULL;
}

/* Remove the first @p k entries of the pool from the cache (untimed). */
static void remove_pool(dnsnap_cache_t *c, size_t first_key, size_t k)
{
	uint8_t q[MIX_QUERY_MAX];
	for (size_t i = 0; i < k; i++) {
		size_t len;
		dnsnap_query_t dq;
		if (mix_query(first_key + i, 1, q, sizeof q, &len) == 0 &&
		    dnsnap_query_parse(q, len, NULL, 0, &dq, NULL) == DNSNAP_OK)
			dnsnap_cache_remove(c, dq.key, dq.key_len);
	}
}

/*
 * The insert rounds: K more writes, each with insert_load() running for its
 * whole length (and nothing else: two threads on two cores), kept apart
 * from the R timed rounds so that those keep their meaning. Before them the
 * pool is inserted once and removed (untimed but for its longest insert,
 * insert_max_no_write_ms): the index has grown to hold the pool and the
 * allocator has the pages, so a write round measures waits on the snapshot,
 * not an index growth or page faults. After each round the pool is removed.
 */
static void write_with_inserts(dnsnap_cache_t *c, const char *path, size_t n, int k_rounds,
			       results_t *r)
{
	r->insert_rounds = k_rounds;
	if (k_rounds == 0)
		return;
	size_t p = n / 4 < 1000000 ? n / 4 : 1000000;
	p = p ? p : 1;
	arena_t pool = {0};
	pool.off = calloc(p + 1, sizeof *pool.off);
	pool.bytes = malloc(p * MIX_RESPONSE_MAX);
	if (pool.off == NULL || pool.bytes == NULL)
		die("out of memory", DNSNAP_ENOMEM, NULL);
	for (size_t i = 0; i < p; i++) {
		size_t len;
		if (mix_response(n + i, pool.bytes + pool.len, MIX_RESPONSE_MAX, &len) != 0)
			die("mix_response", DNSNAP_EINVAL, NULL);
		pool.len += len;
		pool.off[++pool.n] = pool.len;
	}
	r->insert_pool = p;

	dnsnap_encoded_t *scratch = calloc(1, sizeof *scratch);
	if (scratch == NULL)
		die("out of memory", DNSNAP_ENOMEM, NULL);
	uint64_t warm_max = 0;
	for (size_t i = 0; i < p; i++) {
		dnsnap_diag_t diag = {0};
		uint64_t t0 = now_ns();
		const uint8_t *m = pool.bytes + pool.off[i];
		size_t len = pool.off[i + 1] - pool.off[i];
		int rc = dnsnap_cache_insert(c, m, len, NOW - INSERT_AGO, NULL, 0, scratch, &diag);
		uint64_t d = now_ns() - t0;
		if (rc != DNSNAP_OK)
			die("dnsnap_cache_insert (insert pool)", rc, &diag);
		warm_max = d > warm_max ? d : warm_max;
	}
	free(scratch);
	remove_pool(c, n, p);
	r->insert_max_no_write_ms = (double)warm_max / 1e6;

	double ms[64];
	for (int k = 0; k < k_rounds; k++) {
		dnsnap_snap_write_stats_t st = {0};
		dnsnap_diag_t diag = {0};
		inserter_t in = { .c = c, .pool = &pool };
		pthread_t th;
		if (pthread_create(&th, NULL, insert_load, &in) != 0)
			die("pthread_create", DNSNAP_ENOMEM, NULL);
		uint64_t t0 = now_ns();
		int rc = dnsnap_snap_write(c, path, NOW, &st, &diag);
		uint64_t t1 = now_ns();
		atomic_store(&in.stop, 1);
		pthread_join(th, NULL);
		if (rc != DNSNAP_OK)
			die("dnsnap_snap_write (insert round)", rc, &diag);
		if (in.err != DNSNAP_OK)
			die("dnsnap_cache_insert (while writing)", in.err, NULL);
		if (st.entries != n) {
			fprintf(stderr, "bench_snap: insert round: %" PRIu64 " entries written, "
					"%zu expected\n", st.entries, n);
			exit(1);
		}
		ms[k] = (double)(t1 - t0) / 1e6;
		if ((double)in.max_ns / 1e6 > r->insert_wait_max_ms)
			r->insert_wait_max_ms = (double)in.max_ns / 1e6;
		r->inserts_during_write += in.count;
		r->inserts_over_10ms += in.over_10ms;
		r->insert_preemptions += in.nivcsw;
		remove_pool(c, n, in.used);
	}
	r->write_ms_with_inserts = median(ms, k_rounds);
	free(pool.bytes);
	free(pool.off);
}

static void write_rounds(dnsnap_cache_t *c, const char *path, int rounds, results_t *r)
{
	double ms[64];
	for (int k = 0; k < rounds; k++) {
		dnsnap_snap_write_stats_t st = {0};
		dnsnap_diag_t diag = {0};
		prober_t pr = { .c = c, .n = r->entries ? r->entries : 1 };
		pthread_t th;
		int probing = k == 0 && pthread_create(&th, NULL, probe, &pr) == 0;
		uint64_t t0 = now_ns();
		int rc = dnsnap_snap_write(c, path, NOW, &st, &diag);
		uint64_t t1 = now_ns();
		if (probing) {
			atomic_store(&pr.stop, 1);
			pthread_join(th, NULL);
			r->lookup_max_during_write_us = (double)pr.max_ns / 1e3;
			r->lookups_during_write = pr.count;
		}
		if (rc != DNSNAP_OK)
			die("dnsnap_snap_write", rc, &diag);
		ms[k] = (double)(t1 - t0) / 1e6;
		if (st.longest_pause_ms > r->longest_pause_ms)
			r->longest_pause_ms = st.longest_pause_ms;
		r->entries = (size_t)st.entries;
		r->entry_bytes = st.entry_bytes;
	}
	r->write_ms = median(ms, rounds);
	r->write_per_s = (double)r->entries / (r->write_ms / 1e3);
}

/* LMDB's statistics of the "entries" database, read with LMDB directly. */
static void lmdb_figures(const char *path, results_t *r)
{
	MDB_env *env = NULL;
	MDB_txn *txn = NULL;
	MDB_dbi dbi;
	MDB_stat st;
	MDB_envinfo info;
	if (mdb_env_create(&env) != 0)
		return;
	if (mdb_env_set_maxdbs(env, 4) != 0 ||
	    mdb_env_open(env, path, MDB_NOSUBDIR | MDB_RDONLY | MDB_NOLOCK, 0600) != 0 ||
	    mdb_txn_begin(env, NULL, MDB_RDONLY, &txn) != 0 ||
	    mdb_dbi_open(txn, "entries", 0, &dbi) != 0 || mdb_stat(txn, dbi, &st) != 0 ||
	    mdb_env_info(env, &info) != 0) {
		fprintf(stderr, "bench_snap: LMDB statistics unavailable\n");
		if (txn)
			mdb_txn_abort(txn);
		mdb_env_close(env);
		return;
	}
	r->psize = st.ms_psize;
	r->depth = st.ms_depth;
	r->branch_pages = st.ms_branch_pages;
	r->leaf_pages = st.ms_leaf_pages;
	r->overflow_pages = st.ms_overflow_pages;
	r->used_pages = info.me_last_pgno + 1;
	size_t data_pages = st.ms_leaf_pages + st.ms_overflow_pages;
	if (data_pages)
		r->page_fill = (double)r->entry_bytes / ((double)data_pages * st.ms_psize);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

/* Read exactly @p len bytes, or fewer at end of file. */
static size_t read_all(int fd, void *buf, size_t len)
{
	size_t got = 0;
	while (got < len) {
		ssize_t k = read(fd, (char *)buf + got, len - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	return got;
}

/* K forked children, each timing dnsnap_snap_open() once. */
static void open_times(const char *path, int k_runs, results_t *r)
{
	double ms[64], faults[64];
	for (int k = 0; k < k_runs; k++) {
		int fd[2];
		if (pipe(fd) != 0)
			die("pipe", -errno, NULL);
		fflush(NULL);
		pid_t pid = fork();
		if (pid < 0)
			die("fork", -errno, NULL);
		if (pid == 0) {
			close(fd[0]);
			dnsnap_snap_t *s = NULL;
			dnsnap_diag_t diag = {0};
			struct rusage ru0, ru1;
			getrusage(RUSAGE_SELF, &ru0);
			uint64_t t0 = now_ns();
			int rc = dnsnap_snap_open(path, &s, &diag);
			uint64_t t1 = now_ns();
			getrusage(RUSAGE_SELF, &ru1);
			if (rc != DNSNAP_OK)
				die("dnsnap_snap_open", rc, &diag);
			double v[2] = {(double)(t1 - t0) / 1e6, (double)(ru1.ru_minflt - ru0.ru_minflt)};
			ssize_t w = write(fd[1], v, sizeof v);
			_exit(w == (ssize_t)sizeof v ? 0 : 1);
		}
		close(fd[1]);
		double v[2];
		size_t got = read_all(fd[0], v, sizeof v);
		close(fd[0]);
		ms[k] = v[0], faults[k] = v[1];
		int status;
		waitpid(pid, &status, 0);
		if (got != sizeof v) {
			fprintf(stderr, "bench_snap: open child failed (status %d)\n", status);
			exit(1);
		}
	}
	r->open_ms = median(ms, k_runs); /* sorts ms */
	r->open_ms_min = ms[0];
	r->open_ms_max = ms[k_runs - 1];
	r->open_faults = median(faults, k_runs);
}

/* K re-executions of this program with --first-answer. */
static void first_answer_times(const char *path, uint64_t seed, size_t n, int k_runs,
			       results_t *r)
{
	double total[64], exec_ms[64], open_ms[64], ans_us[64], from_main[64];
	uint64_t st = seed ^ 0x6669727374ull;
	st = st ? st : 1;
	for (int k = 0; k < k_runs; k++) {
		char seed_s[32], key_s[32];
		snprintf(seed_s, sizeof seed_s, "%" PRIu64, seed);
		snprintf(key_s, sizeof key_s, "%zu", (size_t)((mix_rand(&st) >> 11) % n));
		char *argv[] = {"bench_snap", "--first-answer", (char *)path, "--seed", seed_s,
				"--key", key_s, NULL};
		int fd[2];
		if (pipe(fd) != 0)
			die("pipe", -errno, NULL);
		posix_spawn_file_actions_t fa;
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
		posix_spawn_file_actions_addclose(&fa, fd[0]);
		fflush(NULL);
		pid_t pid;
		uint64_t t0 = now_ns();
		int rc = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, environ);
		posix_spawn_file_actions_destroy(&fa);
		close(fd[1]);
		if (rc != 0)
			die("posix_spawn /proc/self/exe", -rc, NULL);
		char line[256] = {0};
		read_all(fd[0], line, sizeof line - 1);
		close(fd[0]);
		int status;
		waitpid(pid, &status, 0);
		uint64_t t_main, t_open, t_ans;
		int arc;
		unsigned an;
		if (sscanf(line, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %d %u", &t_main, &t_open,
			   &t_ans, &arc, &an) != 5) {
			fprintf(stderr, "bench_snap: --first-answer child failed (status %d)\n",
				status);
			exit(1);
		}
		if (arc != DNSNAP_OK || an == 0)
			die("--first-answer: no answer", arc, NULL);
		total[k] = (double)(t_ans - t0) / 1e6;
		exec_ms[k] = (double)(t_main - t0) / 1e6;
		open_ms[k] = (double)(t_open - t_main) / 1e6;
		ans_us[k] = (double)(t_ans - t_open) / 1e3;
		from_main[k] = (double)(t_ans - t_main) / 1e6;
	}
	r->first_answer_ms = median(total, k_runs);
	r->fa_exec_ms = median(exec_ms, k_runs);
	r->fa_open_ms = median(open_ms, k_runs);
	r->fa_answer_us = median(ans_us, k_runs);
	r->fa_from_main_ms = median(from_main, k_runs);
}

/* The disk's floor for the write: as many bytes as the snapshot, written in
 * 1 MB pieces to a file in the same directory and fsync'ed, no LMDB. */
static void disk_floor(const char *dir, uint64_t bytes, results_t *r)
{
	static uint8_t buf[1 << 20];
	memset(buf, 0x5a, sizeof buf);
	snprintf(floor_path, sizeof floor_path, "%s/bench_snap.%ld.floor", dir, (long)getpid());
	int fd = open(floor_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		die(floor_path, -errno, NULL);
	uint64_t t0 = now_ns();
	for (uint64_t done = 0; done < bytes;) {
		size_t k = bytes - done < sizeof buf ? (size_t)(bytes - done) : sizeof buf;
		ssize_t w = write(fd, buf, k);
		if (w <= 0)
			die(floor_path, -errno, NULL);
		done += (uint64_t)w;
	}
	if (fsync(fd) != 0)
		die(floor_path, -errno, NULL);
	r->floor_ms = (double)(now_ns() - t0) / 1e6;
	close(fd);
	unlink(floor_path);
	floor_path[0] = 0;
}

/* One timed pass over the queries, each timed alone (query parse + answer),
 * from the map @p s, or from memory @p c when @p s is NULL; @return the
 * answer bytes. */
static uint64_t lookup_pass(dnsnap_snap_t *s, dnsnap_cache_t *c, const arena_t *qs, uint32_t over,
			    uint32_t *lat)
{
	static uint8_t out[65536];
	uint64_t bytes = 0;
	for (size_t j = 0; j < qs->n; j++) {
		const uint8_t *m = qs->bytes + qs->off[j];
		size_t mlen = qs->off[j + 1] - qs->off[j], olen = 0;
		dnsnap_query_t q;
		uint64_t a = now_ns();
		int rc = dnsnap_query_parse(m, mlen, NULL, 0, &q, NULL);
		if (rc == DNSNAP_OK)
			rc = s != NULL ? dnsnap_snap_answer(s, &q, NOW + 1, 65535, out, sizeof out, &olen)
				       : dnsnap_cache_answer(c, &q, NOW + 1, 65535, out, sizeof out, &olen);
		uint64_t b = now_ns();
		if (rc != DNSNAP_OK)
			die(s != NULL ? "lookup from the snapshot" : "lookup from the cache", rc, NULL);
		uint64_t d = b - a;
		lat[j] = d > over ? (uint32_t)(d - over) : 0;
		bytes += olen;
	}
	return bytes;
}

/*
 * The Value_Check's share of a lookup (spec/FORMAT.md, "Values"): the same
 * XXH3 calls the reader makes, over every key and entry of the snapshot
 * (copied out by a scan), timed as a loop; the best of 5 passes' means.
 */
typedef struct kv_arena {
	uint8_t *b;
	size_t len, cap, n;
} kv_arena_t;

static int keep_kv(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		   size_t entry_len)
{
	kv_arena_t *a = arg;
	size_t need = 6 + key_len + entry_len;
	if (a->len + need > a->cap)
		return 1;
	a->b[a->len] = (uint8_t)key_len, a->b[a->len + 1] = (uint8_t)(key_len >> 8);
	memcpy(a->b + a->len + 2, &entry_len, 4);
	memcpy(a->b + a->len + 6, key, key_len);
	memcpy(a->b + a->len + 6 + key_len, entry, entry_len);
	a->len += need;
	a->n++;
	return 0;
}

static void check_cost(const char *path, results_t *r)
{
	dnsnap_snap_t *s;
	dnsnap_diag_t d;
	int rc = dnsnap_snap_open(path, &s, &d);
	if (rc != DNSNAP_OK)
		die("dnsnap_snap_open", rc, &d);
	/* the first million entries at most: at 50M the whole file would take
	 * 7 GB more */
	size_t cap = (size_t)r->entry_bytes + 6 * r->entries + 64;
	if (r->entries > 1000000)
		cap = (size_t)((double)cap / (double)r->entries * 1e6);
	kv_arena_t a = { .cap = cap };
	if ((a.b = malloc(a.cap)) == NULL)
		die("out of memory", DNSNAP_ENOMEM, NULL);
	dnsnap_snap_foreach(s, keep_kv, &a);
	dnsnap_snap_close(s);
	double best = 0;
	volatile uint32_t sink = 0;
	for (int pass = 0; pass < 5 && a.n > 0; pass++) {
		uint64_t t0 = now_ns();
		for (size_t o = 0; o < a.len;) {
			size_t kl = (size_t)(a.b[o] | a.b[o + 1] << 8);
			uint32_t el;
			memcpy(&el, a.b + o + 2, 4);
			const uint8_t *k = a.b + o + 6;
			sink ^= (uint32_t)XXH3_64bits_withSeed(k + kl, el, XXH3_64bits(k, kl));
			o += 6 + kl + el;
		}
		double ns = (double)(now_ns() - t0) / (double)a.n;
		if (pass == 0 || ns < best)
			best = ns;
	}
	r->check_ns = best;
	free(a.b);
}

static void lookups(const char *path, const arena_t *qs, results_t *r)
{
	size_t m = qs->n;
	uint32_t *lat = malloc(m * sizeof *lat);
	if (lat == NULL)
		die("out of memory", DNSNAP_ENOMEM, NULL);
	memset(lat, 0, m * sizeof *lat); /* fault the array in before timing */
	dnsnap_snap_t *s = NULL;
	dnsnap_diag_t diag = {0};
	int rc = dnsnap_snap_open(path, &s, &diag);
	if (rc != DNSNAP_OK)
		die("dnsnap_snap_open", rc, &diag);
	uint32_t over = timer_overhead();
	r->timer_ns = over;

	struct rusage ru0, ru1;
	getrusage(RUSAGE_SELF, &ru0);
	r->answer_bytes_snap = lookup_pass(s, NULL, qs, over, lat);
	getrusage(RUSAGE_SELF, &ru1);
	r->first_touch_faults = (double)(ru1.ru_minflt - ru0.ru_minflt + ru1.ru_majflt - ru0.ru_majflt) /
				(double)m;
	qsort(lat, m, sizeof *lat, cmp_u32);
	r->first_touch_ns_median = lat[m / 2];
	r->first_touch_ns_p99 = lat[(size_t)((double)m * 0.99)];

	getrusage(RUSAGE_SELF, &ru0);
	lookup_pass(s, NULL, qs, over, lat);
	getrusage(RUSAGE_SELF, &ru1);
	r->lookup_faults = (double)(ru1.ru_minflt - ru0.ru_minflt + ru1.ru_majflt - ru0.ru_majflt) /
			   (double)m;
	r->lookup_preempted = ru1.ru_nivcsw - ru0.ru_nivcsw;
	for (size_t j = 0; j < m; j++)
		r->lookup_over_20us += lat[j] > 20000;
	qsort(lat, m, sizeof *lat, cmp_u32);
	r->lookup_ns_median = lat[m / 2];
	r->lookup_ns_p90 = lat[(size_t)((double)m * 0.90)];
	r->lookup_ns_p99 = lat[(size_t)((double)m * 0.99)];
	r->lookup_ns_p999 = lat[(size_t)((double)m * 0.999)];

	static uint8_t out[65536];
	uint64_t t0 = now_ns();
	for (size_t j = 0; j < m; j++) {
		dnsnap_query_t q;
		size_t olen;
		if (dnsnap_query_parse(qs->bytes + qs->off[j], qs->off[j + 1] - qs->off[j], NULL, 0,
				       &q, NULL) == DNSNAP_OK)
			dnsnap_snap_answer(s, &q, NOW + 1, 65535, out, sizeof out, &olen);
	}
	r->lookup_ns_mean = (double)(now_ns() - t0) / (double)m;
	dnsnap_snap_close(s);
	free(lat);
}

/* The same queries answered from the cache: the sanity check's reference. */
static uint64_t cache_answer_bytes(dnsnap_cache_t *c, const arena_t *qs)
{
	static uint8_t out[65536];
	uint64_t bytes = 0;
	for (size_t j = 0; j < qs->n; j++) {
		dnsnap_query_t q;
		size_t olen = 0;
		int rc = dnsnap_query_parse(qs->bytes + qs->off[j], qs->off[j + 1] - qs->off[j],
					    NULL, 0, &q, NULL);
		if (rc == DNSNAP_OK)
			rc = dnsnap_cache_answer(c, &q, NOW + 1, 65535, out, sizeof out, &olen);
		if (rc != DNSNAP_OK)
			die("lookup from the cache", rc, NULL);
		bytes += olen;
	}
	return bytes;
}

/* The memory side of snapshot_over_memory_lookup: the same queries, the same
 * timing, two passes, the second counted (as lookups() does for the map). */
static void memory_lookups(dnsnap_cache_t *c, const arena_t *qs, results_t *r)
{
	size_t m = qs->n;
	uint32_t *lat = malloc(m * sizeof *lat);
	if (lat == NULL)
		die("out of memory", DNSNAP_ENOMEM, NULL);
	memset(lat, 0, m * sizeof *lat);
	uint32_t over = timer_overhead();
	r->mem_timer_ns = over;
	lookup_pass(NULL, c, qs, over, lat);
	qsort(lat, m, sizeof *lat, cmp_u32);
	r->mem_first_pass_ns_median = lat[m / 2];
	lookup_pass(NULL, c, qs, over, lat);
	qsort(lat, m, sizeof *lat, cmp_u32);
	r->mem_lookup_ns_median = lat[m / 2];
	r->mem_lookup_ns_p99 = lat[(size_t)((double)m * 0.99)];
	free(lat);
}

/* ------------------------------------------------------------- reporting */

static void row(const char *label, const char *value, const char *target, int ok)
{
	printf("%-34s %14s   %-26s %s\n", label, value, target, ok < 0 ? "" : ok ? "ok" : "MISSED");
}

static void table(const results_t *r, size_t n, size_t m, int rounds, int k_runs)
{
	char v[64];
	int at10m = n >= 10000000;
	printf("Big Pineapple mix: %zu entries, snapshot written %d time%s, %d opens, %zu lookups "
	       "(warm page cache)\n\n",
	       n, rounds, rounds > 1 ? "s" : "", k_runs, m);
	printf("%-34s %14s   %-26s\n", "", "measured", "target");
	snprintf(v, sizeof v, "%.0f", r->write_per_s);
	row("snapshot write, entries/s", v, ">= 1.5M", r->write_per_s >= TARGET_WRITE_PER_S);
	snprintf(v, sizeof v, "%.1f", r->write_ms);
	row("  write time, ms", v, "", -1);
	snprintf(v, sizeof v, "%.1f", r->floor_ms);
	row("  disk floor (write + fsync), ms", v, "", -1);
	snprintf(v, sizeof v, "%.2f", r->longest_pause_ms);
	row("  longest shard pause, ms", v, "", -1);
	snprintf(v, sizeof v, "%.1f", r->lookup_max_during_write_us);
	row("  slowest lookup while writing, us", v, at10m ? "<= 1000 (at 10M)" : "<= 1000 at 10M",
	    r->lookup_max_during_write_us <= 1000);
	if (r->insert_rounds > 0) {
		snprintf(v, sizeof v, "%.2f", r->insert_wait_max_ms);
		row("  longest insert while writing, ms", v,
		    at10m ? "<= 10 (at 10M)" : "<= 10 at 10M", r->insert_wait_max_ms <= 10);
		snprintf(v, sizeof v, "%" PRIu64, r->inserts_during_write);
		row("    inserts during the writes", v, "", -1);
		snprintf(v, sizeof v, "%.2f", r->insert_max_no_write_ms);
		row("    longest insert, no write, ms", v, "", -1);
		snprintf(v, sizeof v, "%.1f", r->write_ms_with_inserts);
		row("    write time while inserting, ms", v, "", -1);
	}
	snprintf(v, sizeof v, "%.1f", r->bytes_per_entry);
	row("on disk, bytes/entry", v, "", -1);
	snprintf(v, sizeof v, "%.1f", r->encoded_per_entry);
	row("  encoded (keys + entries), B/entry", v, "", -1);
	snprintf(v, sizeof v, "%.3f", r->file_over_encoded);
	row("  file / encoded", v, "<= 1.25", r->file_over_encoded <= TARGET_FILE_OVER_ENCODED);
	if (r->psize) {
		snprintf(v, sizeof v, "%.1f%%", 100 * r->page_fill);
		row("  LMDB leaf+overflow page fill", v, "", -1);
	}
	snprintf(v, sizeof v, "%.3f", r->open_ms);
	row("open, ms (fresh process)", v, at10m ? "<= 5 (at 10M)" : "<= 5 at 10M",
	    r->open_ms <= TARGET_OPEN_MS);
	snprintf(v, sizeof v, "%.3f", r->fa_open_ms);
	row("  in an exec'd process, ms", v, "", -1);
	snprintf(v, sizeof v, "%.2f", r->first_answer_ms);
	row("first answer after spawn, ms", v, "<= 10", r->first_answer_ms <= TARGET_FIRST_ANSWER_MS);
	snprintf(v, sizeof v, "%.2f", r->fa_from_main_ms);
	row("  of which main() to answer, ms", v, "", -1);
	snprintf(v, sizeof v, "%.0f", r->lookup_ns_median);
	row("lookup + answer median, ns", v, at10m ? "<= 1000 (at 10M)" : "<= 1000 at 10M",
	    r->lookup_ns_median <= TARGET_LOOKUP_NS);
	snprintf(v, sizeof v, "%.1f", r->check_ns);
	row("  of which the Value_Check, ns", v, "", -1);
	snprintf(v, sizeof v, "%.0f", r->mem_lookup_ns_median);
	row("  in memory, same keys, median, ns", v, "", -1);
	snprintf(v, sizeof v, "%.2f", r->snapshot_over_memory);
	row("  map / memory (medians)", v, "<= 1.3", r->snapshot_over_memory <= 1.3);
	snprintf(v, sizeof v, "%.0f", r->lookup_ns_p99);
	row("lookup + answer p99, ns", v, "", -1);
	snprintf(v, sizeof v, "%.0f / %.0f", r->lookup_ns_p90, r->lookup_ns_p999);
	row("  p90 / p99.9, ns", v, "", -1);
	snprintf(v, sizeof v, "%.0f / %.0f", r->first_touch_ns_median, r->first_touch_ns_p99);
	row("  first touch median / p99, ns", v, "", -1);
	snprintf(v, sizeof v, "%.0f", r->lookup_ns_mean);
	row("  mean, untimed pass, ns", v, "", -1);

	printf("\nfill: %.0f inserts/s. file %" PRIu64 " bytes, encoded %" PRIu64 " bytes",
	       r->fill_per_s, r->file_size, r->entry_bytes);
	if (r->psize)
		printf("; LMDB: %u-byte pages, depth %u, %zu branch + %zu leaf + %zu overflow pages, "
		       "%zu pages in use",
		       r->psize, r->depth, r->branch_pages, r->leaf_pages, r->overflow_pages,
		       r->used_pages);
	printf(".\nwrite: disk floor = the same bytes written to DIR and fsync'ed, no LMDB.\n");
	printf("open: median of %d forked processes (min %.3f, max %.3f ms; %.0f minor page "
	       "faults each).\n",
	       k_runs, r->open_ms_min, r->open_ms_max, r->open_faults);
	printf("first answer: posix_spawn + exec + dynamic linking to main() %.2f ms, "
	       "dnsnap_snap_open %.2f ms, query + answer %.1f us (medians).\n",
	       r->fa_exec_ms, r->fa_open_ms, r->fa_answer_us);
	printf("lookups: keys uniform over the entries, query parse + dnsnap_snap_answer, each "
	       "timed alone, timer cost %.0f ns subtracted;\n"
	       "  second pass shown (page faults per lookup: first pass %.4f, second %.4f;\n"
	       "  second pass: %zu lookups over 20 us, %ld involuntary context switches).\n",
	       r->timer_ns, r->first_touch_faults, r->lookup_faults, r->lookup_over_20us,
	       r->lookup_preempted);
	printf("memory lookups: the same queries before the cache was freed, timed the same way "
	       "(timer %.0f ns), second pass shown (first: median %.0f ns); p99 %.0f ns.\n",
	       r->mem_timer_ns, r->mem_first_pass_ns_median, r->mem_lookup_ns_p99);
	if (r->insert_rounds > 0)
		printf("inserts while writing: %d more write%s with a thread inserting fresh keys "
		       "(a pool of %zu, expired at the write); %" PRIu64 " inserts over 10 ms, "
		       "%ld involuntary context switches of the inserter.\n",
		       r->insert_rounds, r->insert_rounds > 1 ? "s" : "", r->insert_pool,
		       r->inserts_over_10ms, r->insert_preemptions);
	printf("load average at the end: %.2f (other work on the machine skews all of the "
	       "above)\n",
	       r->loadavg);
}

static void json(const results_t *r, size_t m, int rounds, int k_runs, uint64_t seed)
{
	printf("{\"bench\":\"snap\",\"entries\":%zu,\"lookups\":%zu,\"rounds\":%d,\"opens\":%d,"
	       "\"seed\":%" PRIu64 ",",
	       r->entries, m, rounds, k_runs, seed);
	printf("\"snapshot_write_per_s\":%.0f,\"snapshot_write_ms\":%.2f,"
	       "\"snapshot_longest_pause_ms\":%.3f,\"disk_floor_ms\":%.2f,"
	       "\"lookup_max_during_write_us\":%.1f,",
	       r->write_per_s, r->write_ms, r->longest_pause_ms, r->floor_ms,
	       r->lookup_max_during_write_us);
	printf("\"snapshot_bytes_per_entry\":%.2f,\"snapshot_file_bytes\":%" PRIu64
	       ",\"snapshot_entry_bytes\":%" PRIu64 ",\"snapshot_file_over_encoded\":%.4f,",
	       r->bytes_per_entry, r->file_size, r->entry_bytes, r->file_over_encoded);
	printf("\"lmdb_page_size\":%u,\"lmdb_depth\":%u,\"lmdb_branch_pages\":%zu,"
	       "\"lmdb_leaf_pages\":%zu,\"lmdb_overflow_pages\":%zu,\"lmdb_pages_used\":%zu,"
	       "\"lmdb_page_fill\":%.4f,",
	       r->psize, r->depth, r->branch_pages, r->leaf_pages, r->overflow_pages, r->used_pages,
	       r->page_fill);
	printf("\"snapshot_open_ms\":%.4f,\"snapshot_open_ms_min\":%.4f,"
	       "\"snapshot_open_ms_max\":%.4f,\"snapshot_open_minor_faults\":%.0f,",
	       r->open_ms, r->open_ms_min, r->open_ms_max, r->open_faults);
	printf("\"snapshot_first_answer_ms\":%.3f,\"first_answer_spawn_to_main_ms\":%.3f,"
	       "\"first_answer_open_ms\":%.3f,\"first_answer_query_us\":%.1f,"
	       "\"first_answer_from_main_ms\":%.3f,",
	       r->first_answer_ms, r->fa_exec_ms, r->fa_open_ms, r->fa_answer_us,
	       r->fa_from_main_ms);
	printf("\"snapshot_lookup_ns_median\":%.0f,\"snapshot_lookup_ns_p99\":%.0f,"
	       "\"snapshot_lookup_ns_mean\":%.0f,\"first_touch_ns_median\":%.0f,"
	       "\"first_touch_ns_p99\":%.0f,\"first_touch_faults_per_lookup\":%.4f,"
	       "\"snapshot_lookup_ns_p90\":%.0f,\"snapshot_lookup_ns_p999\":%.0f,"
	       "\"lookup_faults_per_lookup\":%.4f,\"lookups_over_20us\":%zu,"
	       "\"lookup_preemptions\":%ld,\"timer_ns\":%.0f,",
	       r->lookup_ns_median, r->lookup_ns_p99, r->lookup_ns_mean, r->first_touch_ns_median,
	       r->first_touch_ns_p99, r->first_touch_faults, r->lookup_ns_p90, r->lookup_ns_p999,
	       r->lookup_faults, r->lookup_over_20us, r->lookup_preempted, r->timer_ns);
	printf("\"value_check_ns\":%.1f,", r->check_ns);
	printf("\"memory_lookup_ns_median\":%.0f,\"memory_lookup_ns_p99\":%.0f,"
	       "\"memory_first_pass_ns_median\":%.0f,\"memory_timer_ns\":%.0f,"
	       "\"snapshot_over_memory_lookup\":%.3f,",
	       r->mem_lookup_ns_median, r->mem_lookup_ns_p99, r->mem_first_pass_ns_median,
	       r->mem_timer_ns, r->snapshot_over_memory);
	printf("\"insert_rounds\":%d,\"insert_pool\":%zu,\"insert_wait_max_ms\":%.3f,"
	       "\"inserts_during_write\":%" PRIu64 ",\"inserts_over_10ms\":%" PRIu64 ","
	       "\"insert_preemptions\":%ld,\"insert_max_no_write_ms\":%.3f,"
	       "\"snapshot_write_ms_with_inserts\":%.2f,",
	       r->insert_rounds, r->insert_pool, r->insert_wait_max_ms, r->inserts_during_write,
	       r->inserts_over_10ms, r->insert_preemptions, r->insert_max_no_write_ms,
	       r->write_ms_with_inserts);
	printf("\"fill_per_s\":%.0f,\"memory_bytes_per_entry\":%.1f,\"answer_bytes\":%" PRIu64
	       ",\"loadavg_1m\":%.2f}\n", r->fill_per_s, r->mem_bytes_per_entry, r->answer_bytes_snap,
	       r->loadavg);
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_snap [--entries N] [--dir DIR] [--lookups M] [--rounds R] "
			"[--insert-rounds K] [--opens K] [--seed S] [--keep] [--json]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	uint64_t t_main = now_ns(); /* for --first-answer: the first thing main() does */
	size_t n = 1000000, m = 0, key = 0;
	int rounds = 3, k_runs = 9, as_json = 0, keep = 0, insert_rounds = -1;
	uint64_t seed = 0x1111;
	const char *dir = "/tmp", *fa_path = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--json") == 0)
			as_json = 1;
		else if (strcmp(a, "--keep") == 0)
			keep = 1;
		else if (strcmp(a, "--entries") == 0 && v)
			n = strtoull(v, NULL, 0), i++;
		else if (strcmp(a, "--dir") == 0 && v)
			dir = v, i++;
		else if (strcmp(a, "--lookups") == 0 && v)
			m = strtoull(v, NULL, 0), i++;
		else if (strcmp(a, "--rounds") == 0 && v)
			rounds = atoi(v), i++;
		else if (strcmp(a, "--insert-rounds") == 0 && v)
			insert_rounds = atoi(v), i++;
		else if (strcmp(a, "--opens") == 0 && v)
			k_runs = atoi(v), i++;
		else if (strcmp(a, "--seed") == 0 && v)
			seed = strtoull(v, NULL, 0), i++;
		else if (strcmp(a, "--first-answer") == 0 && v)
			fa_path = v, i++;
		else if (strcmp(a, "--key") == 0 && v)
			key = strtoull(v, NULL, 0), i++;
		else
			usage();
	}
	if (fa_path)
		return first_answer(t_main, fa_path, seed, key);
	if (n == 0 || rounds < 1 || rounds > 64 || k_runs < 1 || k_runs > 64 || insert_rounds > 64)
		usage();
	if (insert_rounds < 0)
		insert_rounds = rounds;
	if (m == 0)
		m = n < 1000000 ? n : 1000000;

	const char *path = snap_path;
	parent_pid = getpid();
	keep_files = keep;
	snprintf(snap_path, sizeof snap_path, "%s/bench_snap.%ld.mdb", dir, (long)parent_pid);
	results_t r = {0};
	mix_init(seed);

	/* The lookup queries, built before anything is timed. */
	arena_t qs = {0};
	qs.off = calloc(m + 1, sizeof *qs.off);
	if (qs.off == NULL)
		die("out of memory", DNSNAP_ENOMEM, NULL);
	uint64_t st = seed ^ 0x6c6f6f6b75707321ull;
	st = st ? st : 1;
	for (size_t j = 0; j < m; j++)
		if (arena_add_query(&qs, (size_t)((mix_rand(&st) >> 11) % n), (uint16_t)(j * 40503u)))
			die("out of memory", DNSNAP_ENOMEM, NULL);

	if (!as_json)
		fprintf(stderr, "filling %zu entries...\n", n);
	dnsnap_cache_t *c = fill(n, &r);
	r.answer_bytes_cache = cache_answer_bytes(c, &qs);
	memory_lookups(c, &qs, &r);
	if (!as_json)
		fprintf(stderr, "writing %s (%d round%s)...\n", path, rounds, rounds > 1 ? "s" : "");
	r.entries = n;
	write_rounds(c, path, rounds, &r);
	if (!as_json && insert_rounds > 0)
		fprintf(stderr, "writing %d more time%s with a thread inserting...\n",
			insert_rounds, insert_rounds > 1 ? "s" : "");
	write_with_inserts(c, path, n, insert_rounds, &r);
	/* The cache is not needed any more: free it (and give its pages back) so
	 * that forking stays cheap and the lookups run in a small process. */
	dnsnap_cache_free(c);
	mallctl("arena." STR(MALLCTL_ARENAS_ALL) ".purge", NULL, NULL, NULL, 0);
	if (r.entries != n) {
		fprintf(stderr, "bench_snap: %zu entries written, %zu inserted\n", r.entries, n);
		return 1;
	}

	struct stat sb;
	if (stat(path, &sb) != 0)
		die(path, -errno, NULL);
	r.file_size = (uint64_t)sb.st_size;
	r.bytes_per_entry = (double)r.file_size / (double)n;
	r.encoded_per_entry = (double)r.entry_bytes / (double)n;
	r.file_over_encoded = r.entry_bytes ? (double)r.file_size / (double)r.entry_bytes : 0;
	lmdb_figures(path, &r);
	disk_floor(dir, r.file_size, &r);

	if (!as_json)
		fprintf(stderr, "opening (%d fresh processes), first answers (%d spawns), "
				"%zu lookups...\n",
			k_runs, k_runs, m);
	open_times(path, k_runs, &r);
	first_answer_times(path, seed, n, k_runs, &r);
	lookups(path, &qs, &r);
	check_cost(path, &r);
	if (!keep)
		unlink(path);
	getloadavg(&r.loadavg, 1);
	r.snapshot_over_memory = r.mem_lookup_ns_median > 0 ?
				 r.lookup_ns_median / r.mem_lookup_ns_median : 0;
	if (r.answer_bytes_snap != r.answer_bytes_cache) {
		fprintf(stderr, "bench_snap: answers differ: %" PRIu64 " bytes from the cache, %" PRIu64
				" from the snapshot\n",
			r.answer_bytes_cache, r.answer_bytes_snap);
		return 1;
	}
	if (as_json)
		json(&r, m, rounds, k_runs, seed);
	else
		table(&r, n, m, rounds, k_runs);
	return 0;
}
