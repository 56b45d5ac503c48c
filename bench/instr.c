/*
 * bench_instr: the driver bench/instr.sh runs under valgrind --tool=callgrind
 * to count instructions per operation on the Big Pineapple mix (mix.c):
 *
 *   lookup           dnsnap_query_parse() + dnsnap_cache_answer() (the in-memory
 *                    lookup and the answer), as bench_cache times it
 *   insert           dnsnap_cache_insert() of a response (parse, encode, index)
 *   snapshot lookup  dnsnap_query_parse() + dnsnap_snap_answer() on a mapped
 *                    snapshot
 *
 *   bench_instr [--entries N] [--ops M] [--seed S] [--dir DIR]
 *
 * Setup, not counted: N responses and the queries are built in wire form, N
 * are inserted; then M lookups of keys drawn uniformly over the N entries
 * (every one a hit: a miss ends the run with an error); the cache is written
 * to DIR/bench_instr.PID.mdb; M inserts of responses whose keys are not in
 * the cache (entries N..N+M-1 of the mix); the snapshot is opened and the M
 * lookups asked of it. Each operation is one call of a function named
 * instr_op_*, and bench/instr.sh counts with --toggle-collect=instr_op_*:
 * only what runs inside those calls (callees included) is counted, the loop
 * around them and the setup are not. The instrumentation is switched on only
 * around each measured loop (it runs 5-10x faster when off), and each loop
 * ends with a dump named after it ("lookup", "insert", "snapshot_lookup").
 *
 * Repeatable: two runs print the same counts, or counts within 0.2% (once in
 * CI the inserts took 2,011 instructions a call after 2,010: some 500 in a
 * million, cause not found; tests/cli/test_bench_outputs.sh allows it). The mix is a function of
 * the seed; the index hash's seed (getrandom(), engine/cache.c) is fixed by
 * the getrandom() below (placements, probe runs); jemalloc's time-based
 * purging is off (malloc_conf below); the stack and the snapshot's name do
 * not move with the environment (main()).
 *
 * Prints on stdout, for the script: one line "entries N ops M seed S" then a
 * line "PHASE OPS MISSES" per measured loop and "getrandom CALLS".
 */
#include <alloca.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <valgrind/callgrind.h>

#include "dnsnap.h"
#include "mix.h"

#define NOW 1700000000u

/* The index hash's seed, fixed: a cache draws it from getrandom(), and a
 * different seed places keys differently (probe runs, shard growth), which
 * moves the counts by a few instructions between runs. This definition in
 * the program takes the place of libc's for the statically linked library. */
static uint64_t getrandom_calls;

ssize_t getrandom(void *buf, size_t len, unsigned int flags)
{
	(void)flags;
	uint64_t x = 0x696e737472ull + getrandom_calls++;
	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = mix_splitmix64(x + i);
		memcpy((uint8_t *)buf + i, &v, len - i < 8 ? len - i : 8);
	}
	return (ssize_t)len;
}

/* jemalloc (the allocator the tool links) returns unused pages to the kernel
 * after a delay in wall time: when that falls within a measured loop depends
 * on how fast valgrind ran, and moved the insert count by up to 2% between
 * runs. This program's allocator never purges: the counts repeat. */
const char *malloc_conf = "dirty_decay_ms:-1,muzzy_decay_ms:-1";

/* Messages back to back, with n + 1 offsets. */
typedef struct arena {
	uint8_t *bytes;
	size_t *off;
	size_t n, len;
} arena_t;

static void arena_init(arena_t *a, size_t n, size_t max)
{
	a->off = calloc(n + 1, sizeof *a->off);
	a->bytes = malloc(n * max);
	a->n = a->len = 0;
	if (a->off == NULL || a->bytes == NULL) {
		fprintf(stderr, "bench_instr: out of memory\n");
		exit(1);
	}
}

/* Close the message just built at a->bytes + a->len (rc and len from mix_*). */
static void arena_done(arena_t *a, int rc, const size_t *len)
{
	if (rc != 0) {
		fprintf(stderr, "bench_instr: mix message does not fit\n");
		exit(1);
	}
	a->len += *len;
	a->off[++a->n] = a->len;
}

static void die(const char *what, int rc, const dnsnap_diag_t *d)
{
	fprintf(stderr, "bench_instr: %s: %s (%d)%s%s\n", what,
		dnsnap_errname(rc) ? dnsnap_errname(rc) : strerror(rc < 0 ? -rc : rc), rc,
		d && d->msg[0] ? ": " : "", d && d->msg[0] ? d->msg : "");
	exit(1);
}

/* ------------------------------------------------ the counted operations */

static uint8_t out[65536]; /* TCP's limit: no TXT answer is truncated */

__attribute__((noinline, noclone)) static int instr_op_lookup(dnsnap_cache_t *c,
							      const uint8_t *q, size_t qlen)
{
	dnsnap_query_t query;
	size_t olen;
	int rc = dnsnap_query_parse(q, qlen, NULL, 0, &query, NULL);
	if (rc != DNSNAP_OK)
		return rc;
	return dnsnap_cache_answer(c, &query, NOW + 1, 65535, out, sizeof out, &olen);
}

__attribute__((noinline, noclone)) static int instr_op_insert(dnsnap_cache_t *c,
							      const uint8_t *msg, size_t len,
							      dnsnap_encoded_t *scratch)
{
	return dnsnap_cache_insert(c, msg, len, NOW, NULL, 0, scratch, NULL);
}

__attribute__((noinline, noclone)) static int instr_op_snapshot_lookup(dnsnap_snap_t *s,
								       const uint8_t *q,
								       size_t qlen)
{
	dnsnap_query_t query;
	size_t olen;
	int rc = dnsnap_query_parse(q, qlen, NULL, 0, &query, NULL);
	if (rc != DNSNAP_OK)
		return rc;
	return dnsnap_snap_answer(s, &query, NOW + 1, 65535, out, sizeof out, &olen);
}

/* ----------------------------------------------------------- the phases */

static void phase_lookup(dnsnap_cache_t *c, const arena_t *qs)
{
	size_t misses = 0;
	CALLGRIND_START_INSTRUMENTATION;
	CALLGRIND_ZERO_STATS;
	for (size_t j = 0; j < qs->n; j++)
		misses += instr_op_lookup(c, qs->bytes + qs->off[j],
					  qs->off[j + 1] - qs->off[j]) != DNSNAP_OK;
	CALLGRIND_DUMP_STATS_AT("lookup");
	CALLGRIND_STOP_INSTRUMENTATION;
	printf("lookup %zu %zu\n", qs->n, misses);
	if (misses)
		die("lookup: a key of the cache was not found", DNSNAP_ENOTFOUND, NULL);
}

static void phase_insert(dnsnap_cache_t *c, const arena_t *fresh)
{
	dnsnap_encoded_t *scratch = calloc(1, sizeof *scratch);
	size_t failed = 0;
	if (scratch == NULL)
		die("out of memory", DNSNAP_ENOMEM, NULL);
	CALLGRIND_START_INSTRUMENTATION;
	CALLGRIND_ZERO_STATS;
	for (size_t j = 0; j < fresh->n; j++)
		failed += instr_op_insert(c, fresh->bytes + fresh->off[j],
					  fresh->off[j + 1] - fresh->off[j], scratch) != DNSNAP_OK;
	CALLGRIND_DUMP_STATS_AT("insert");
	CALLGRIND_STOP_INSTRUMENTATION;
	printf("insert %zu %zu\n", fresh->n, failed);
	free(scratch);
	if (failed)
		die("insert failed", DNSNAP_EINVAL, NULL);
}

static void phase_snapshot_lookup(dnsnap_snap_t *s, const arena_t *qs)
{
	size_t misses = 0;
	CALLGRIND_START_INSTRUMENTATION;
	CALLGRIND_ZERO_STATS;
	for (size_t j = 0; j < qs->n; j++)
		misses += instr_op_snapshot_lookup(s, qs->bytes + qs->off[j],
						   qs->off[j + 1] - qs->off[j]) != DNSNAP_OK;
	CALLGRIND_DUMP_STATS_AT("snapshot_lookup");
	CALLGRIND_STOP_INSTRUMENTATION;
	printf("snapshot_lookup %zu %zu\n", qs->n, misses);
	if (misses)
		die("snapshot lookup: a key of the snapshot was not found", DNSNAP_ENOTFOUND, NULL);
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_instr [--entries N] [--ops M] [--seed S] [--dir DIR]\n");
	exit(2);
}

static int run(size_t n, size_t m, uint64_t seed);

int main(int argc, char **argv)
{
	size_t n = 200000, m = 50000;
	uint64_t seed = 0x1111;
	const char *dir = "/tmp";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--entries") == 0 && v)
			n = strtoull(v, NULL, 0), i++;
		else if (strcmp(a, "--ops") == 0 && v)
			m = strtoull(v, NULL, 0), i++;
		else if (strcmp(a, "--seed") == 0 && v)
			seed = strtoull(v, NULL, 0), i++;
		else if (strcmp(a, "--dir") == 0 && v)
			dir = v, i++;
		else
			usage();
	}
	if (n == 0 || m == 0)
		usage();
	/* The snapshot's name is relative and of a fixed length, and the stack
	 * starts the run at the same offset in its page whatever the size of
	 * the environment and the arguments: string copies, hashing and memcpy
	 * take a number of instructions that depends on their buffers'
	 * alignment (a `make` environment moved the lookup count by 2 per op). */
	if (chdir(dir) != 0) {
		fprintf(stderr, "bench_instr: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	volatile uint8_t *pad = alloca(sp % 4096 + 1);
	pad[0] = 0;
	return run(n, m, seed);
}

static int run(size_t n, size_t m, uint64_t seed)
{

	/* Inputs: the N responses to fill with, M fresh ones to insert, M queries. */
	mix_init(seed);
	arena_t fill = {0}, fresh = {0}, qs = {0};
	arena_init(&fill, n, MIX_RESPONSE_MAX);
	arena_init(&fresh, m, MIX_RESPONSE_MAX);
	arena_init(&qs, m, MIX_QUERY_MAX);
	size_t len;
	for (size_t i = 0; i < n; i++) {
		int rc = mix_response(i, fill.bytes + fill.len, MIX_RESPONSE_MAX, &len);
		arena_done(&fill, rc, &len);
	}
	for (size_t i = 0; i < m; i++) {
		int rc = mix_response(n + i, fresh.bytes + fresh.len, MIX_RESPONSE_MAX, &len);
		arena_done(&fresh, rc, &len);
	}
	uint64_t st = seed ^ 0x6c6f6f6b75707321ull; /* as bench_cache draws its keys */
	st = st ? st : 1;
	for (size_t j = 0; j < m; j++) {
		size_t key = (size_t)((mix_rand(&st) >> 11) % n);
		arena_done(&qs, mix_query(key, (uint16_t)(j * 40503u), qs.bytes + qs.len,
					  MIX_QUERY_MAX, &len), &len);
	}

	dnsnap_cache_t *c = NULL;
	dnsnap_diag_t diag = {0};
	int rc = dnsnap_cache_new(NULL, &c);
	if (rc != DNSNAP_OK)
		die("dnsnap_cache_new", rc, NULL);
	dnsnap_encoded_t *scratch = calloc(1, sizeof *scratch);
	if (scratch == NULL)
		die("out of memory", DNSNAP_ENOMEM, NULL);
	for (size_t i = 0; i < n; i++) {
		rc = dnsnap_cache_insert(c, fill.bytes + fill.off[i], fill.off[i + 1] - fill.off[i],
					 NOW, NULL, 0, scratch, &diag);
		if (rc != DNSNAP_OK)
			die("dnsnap_cache_insert", rc, &diag);
	}
	free(scratch);
	printf("entries %zu ops %zu seed %" PRIu64 "\n", n, m, seed);

	phase_lookup(c, &qs);

	char path[64];
	snprintf(path, sizeof path, "bench_instr.%010ld.mdb", (long)getpid());
	dnsnap_snap_write_stats_t ws;
	if ((rc = dnsnap_snap_write(c, path, NOW, &ws, &diag)) != DNSNAP_OK)
		die("dnsnap_snap_write", rc, &diag);

	phase_insert(c, &fresh);
	dnsnap_cache_free(c);

	dnsnap_snap_t *s = NULL;
	rc = dnsnap_snap_open(path, &s, &diag);
	unlink(path);
	if (rc != DNSNAP_OK)
		die("dnsnap_snap_open", rc, &diag);
	phase_snapshot_lookup(s, &qs);
	dnsnap_snap_close(s);

	printf("getrandom %" PRIu64 "\n", getrandom_calls);
	free(fill.bytes), free(fill.off), free(fresh.bytes), free(fresh.off);
	free(qs.bytes), free(qs.off);
	return 0;
}
