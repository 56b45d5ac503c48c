/*
 * resolver_demo: how a resolver uses dnsnap across a restart.
 *
 *   resolver_demo fill SNAP [N]   run: answer from the cache, fill it as
 *                                 answers come in, snapshot at shutdown
 *   resolver_demo start SNAP [N]  restart: map the snapshot under an empty
 *                                 cache and answer at once
 *
 * The "upstream" is the Big Pineapple mix (mix.c): response i is what an
 * authoritative server would send for query i. N defaults to 200000 for
 * fill and to the snapshot's entry count for start.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dnsnap.h"
#include "mix.h"

#define DEMO_SEED 42

static double ms_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

static int fail(const char *what, int rc, const dnsnap_diag_t *diag)
{
	if (diag != NULL && diag->msg[0]) /* the diagnostic names the file */
		fprintf(stderr, "resolver_demo: %s: %s\n", what, diag->msg);
	else
		fprintf(stderr, "resolver_demo: %s: %s\n", what,
			dnsnap_errname(rc) ? dnsnap_strerror(rc) : strerror(-rc));
	return 1;
}

/* A client's query for name i arrives: answer it from the cache if we can.
 * @return DNSNAP_OK (out holds the response) or DNSNAP_ENOTFOUND (a miss) */
static int serve(dnsnap_cache_t *c, size_t i, uint8_t *out, size_t cap, size_t *out_len)
{
	uint8_t msg[MIX_QUERY_MAX];
	size_t len;
	dnsnap_query_t q;
	mix_query(i, (uint16_t)i, msg, sizeof msg, &len);
	int rc = dnsnap_query_parse(msg, len, NULL, 0, &q, NULL);
	if (rc != DNSNAP_OK)
		return rc;
	return dnsnap_cache_answer(c, &q, (uint32_t)time(NULL), 0, out, cap, out_len);
}

/* The question name of a response (after the 12-byte header), as text. */
static const char *qname_text(const uint8_t *msg, char *buf, size_t cap)
{
	size_t o = 0;
	for (const uint8_t *l = msg + 12; *l != 0 && o + *l + 2 < cap; l += 1 + *l) {
		memcpy(buf + o, l + 1, *l);
		o += *l;
		buf[o++] = '.';
	}
	buf[o] = 0;
	return buf;
}

static void print_answer(const char *prefix, size_t i, int rc, const uint8_t *out)
{
	char name[256];
	if (rc == DNSNAP_OK)
		printf("%squery %zu (%s): rcode %u, %u answer%s", prefix, i,
		       qname_text(out, name, sizeof name), out[3] & 15u,
		       (unsigned)out[6] << 8 | out[7], ((unsigned)out[6] << 8 | out[7]) == 1 ? "" : "s");
	else
		printf("%squery %zu: %s", prefix, i, rc == DNSNAP_ENOTFOUND ? "miss" : dnsnap_strerror(rc));
}

static int fill(const char *snap, size_t n)
{
	static uint8_t out[65536];
	uint8_t msg[MIX_RESPONSE_MAX];
	size_t len;
	dnsnap_cache_t *c;
	dnsnap_encoded_t *scratch = calloc(1, sizeof *scratch); /* one per thread */
	dnsnap_diag_t diag = {0};
	int rc = dnsnap_cache_new(NULL, &c);
	if (rc != DNSNAP_OK || scratch == NULL)
		return fail("dnsnap_cache_new", rc ? rc : DNSNAP_ENOMEM, NULL);

	/* Each query misses, goes upstream, and the response is cached. */
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	size_t misses = 0;
	for (size_t i = 0; i < n; i++) {
		if (serve(c, i, out, sizeof out, &len) == DNSNAP_OK)
			continue;
		misses++;
		mix_response(i, msg, sizeof msg, &len); /* the upstream's answer */
		rc = dnsnap_cache_insert(c, msg, len, (uint32_t)time(NULL), NULL, 0, scratch, &diag);
		if (rc != DNSNAP_OK)
			return fail("dnsnap_cache_insert", rc, &diag);
	}
	printf("fill: %zu queries, %zu misses sent upstream and cached, %.0f ms\n", n, misses,
	       ms_since(&t0));

	/* Clients ask again: now they hit. A name never asked for misses. */
	size_t again[] = {0, 1, n / 2, n - 1, n};
	for (size_t k = 0; k < sizeof again / sizeof again[0]; k++)
		print_answer("  ", again[k], serve(c, again[k], out, sizeof out, &len), out), puts("");

	/* Shutdown: publish every live entry (merged with what the file holds,
	 * under the writers' lock), then exit. */
	dnsnap_publish_opts_t po = {
		.now = (uint32_t)time(NULL), .wait_seconds = 60,
		.flags = DNSNAP_PUBLISH_DROP_DAMAGED | DNSNAP_PUBLISH_REPLACE_BAD,
	};
	dnsnap_publish_stats_t ps;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = dnsnap_snap_publish(c, snap, &po, NULL, &ps, &diag);
	if (rc != DNSNAP_OK)
		return fail("dnsnap_snap_publish", rc, &diag);
	const dnsnap_snap_write_stats_t st = ps.write;
	printf("shutdown: wrote %llu entries (%llu expired left out) to %s, %llu bytes, "
	       "in %.0f ms (longest pause %.2f ms)\n",
	       (unsigned long long)st.entries, (unsigned long long)st.skipped, snap,
	       (unsigned long long)st.file_size, ms_since(&t0), st.longest_pause_ms);
	dnsnap_cache_free(c);
	free(scratch);
	return 0;
}

static int start(const struct timespec *t_main, const char *snap, size_t n)
{
	static uint8_t out[65536];
	size_t len;
	dnsnap_snap_t *s;
	dnsnap_cache_t *c;
	dnsnap_diag_t diag = {0};

	/* Map the snapshot and put it under an empty cache: misses in memory
	 * fall through to the file. Nothing is loaded. */
	int rc = dnsnap_snap_open(snap, &s, &diag);
	if (rc != DNSNAP_OK)
		return fail("dnsnap_snap_open", rc, &diag);
	rc = dnsnap_cache_new(NULL, &c);
	if (rc != DNSNAP_OK)
		return fail("dnsnap_cache_new", rc, NULL);
	dnsnap_cache_attach(c, s, NULL);

	/* The first client's query. */
	rc = serve(c, 0, out, sizeof out, &len);
	double first_us = ms_since(t_main) * 1e3;
	print_answer("start: first answer, ", 0, rc, out);
	printf(", %.0f us after main()\n", first_us);

	/* Then every name the previous run had cached. */
	dnsnap_snap_info_t info;
	dnsnap_snap_info(s, &info);
	if (n == 0)
		n = (size_t)info.entry_count;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	size_t hits = 0;
	for (size_t i = 0; i < n; i++)
		hits += serve(c, i, out, sizeof out, &len) == DNSNAP_OK;
	double ms = ms_since(&t0);
	printf("start: %zu queries, %zu hits, %zu misses, %.0f ms (%.0f ns per query)\n", n, hits,
	       n - hits, ms, ms * 1e6 / (double)(n ? n : 1));

	dnsnap_cache_attach(c, NULL, NULL); /* detach, then close */
	dnsnap_snap_close(s);
	dnsnap_cache_free(c);
	return 0;
}

int main(int argc, char **argv)
{
	struct timespec t_main;
	clock_gettime(CLOCK_MONOTONIC, &t_main);
	if (argc < 3 || argc > 4 || (strcmp(argv[1], "fill") != 0 && strcmp(argv[1], "start") != 0)) {
		fprintf(stderr, "usage: resolver_demo fill SNAP [N]\n"
				"       resolver_demo start SNAP [N]\n");
		return 2;
	}
	size_t n = argc == 4 ? strtoull(argv[3], NULL, 0) : 0;
	mix_init(DEMO_SEED);
	if (strcmp(argv[1], "fill") == 0)
		return fill(argv[2], n ? n : 200000);
	return start(&t_main, argv[2], n);
}
