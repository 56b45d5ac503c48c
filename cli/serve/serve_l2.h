/*
 * serve_l2.h: the Redis side of `dnsnap serve` (serve_l2.c): the library's
 * client (libdnsnap-l2) between the cache and the upstream.
 */
#ifndef DNSNAP_SERVE_L2_H
#define DNSNAP_SERVE_L2_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "l2.h"
#include "serve_stats.h"

struct server;

/* The second level's side of the server */
struct l2_side {
	dnsnap_l2_t *c;          /* NULL: none, or stopping (under lock) */
	dnsnap_l2_stats_t last;  /* its counters when it stopped (the exit's) */
	pthread_rwlock_t lock;
	struct tstat cnt;        /* written by on_l2() (the L2 thread) */
	uint8_t *out;            /* on_l2()'s reply buffer, 2 + TCP_MSG_MAX */
	uint8_t *val;            /* on_done()'s value for the client, DNSNAP_L2_VALUE_MAX */
};

/** The client (its buffers, dnsnap_l2_new(), dnsnap_l2_start()) into s->l2.
 * @return 0 or EXIT_USAGE (reported) */
int l2_start(struct server *s, const dnsnap_l2_opts_t *o);
/** Hand the waiter to the client: @return 1 taken (on_l2() goes on), 0 not */
int l2_ask(struct server *s, struct waiter *w);
void l2_write(struct server *s, const uint8_t *key, size_t key_len, const uint8_t *val,
	      size_t len, uint64_t pxat_ms);
/** Detach the client (misses go upstream from now on), its GETs sent
 * upstream, its writes given @p flush_ms, its last counters kept, its
 * buffers freed by l2_free(). NULL-safe, twice too. */
void l2_stop(struct server *s, unsigned flush_ms);
void l2_free(struct server *s);
/** Delete from Redis every key under the prefix that @p f passes (a flush: a
 * SCAN of every key, then pipelined DELs; blocking, each reply bounded by
 * --l2's connect bound); how many matched in *n (0 without --l2).
 * @return 0, or -1 with why in @p err (Redis not reached, or it failed) */
struct filter;
int l2_flush(struct server *s, const struct filter *f, uint64_t *n, char *err, size_t errcap);

#endif
