/*
 * serve_stats.h: the counters of `dnsnap serve`: per thread (one writer each,
 * relaxed atomics), summed when read (serve_stats.c: into the struct
 * serve_stats the metrics render, and the text line of SIGUSR1).
 */
#ifndef DNSNAP_SERVE_STATS_H
#define DNSNAP_SERVE_STATS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "dnsnap.h"
#include "hist.h"
#include "metrics.h"
#include "serve.h"

/* ------------------------------------------------------------- counters */

enum {
	C_UDP, C_TCP, C_HIT_MEM, C_HIT_MAP, C_MISS, C_STALE, C_UP_ANS, C_SERVFAIL_UP,
	C_REFUSED_ACL, C_TRUNC, C_CONNS, C_CONN_REFUSED, C_CONN_IDLE, C_FORMERR_IN,
	C_HIT_L2, C_L2_BAD, C_L2_EXPIRED, C_CONN_EVICTED, C_CONN_SOURCE, C_REFUSED_LOCAL,
	C_RC, /* RC_N of them */
	C_DROP = C_RC + RC_N, /* DROP_N of them */
	C_N = C_DROP + DROP_N
};

/* One thread's counters and latency histograms. */
struct tstat {
	_Alignas(64) _Atomic uint64_t v[C_N];
	struct hist lat_cache, lat_up, lat_l2;
};

/* One writer per struct tstat: a plain load and store, no locked add. */
static inline void bump(struct tstat *c, int i)
{
	atomic_store_explicit(&c->v[i], atomic_load_explicit(&c->v[i], memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* A reply about to be sent: its rcode (BADVERS from the outcome: its upper
 * bits are in the OPT) and TC. */
static inline void count_reply(struct tstat *c, int outcome, const uint8_t *reply, size_t len)
{
	if (len < 4)
		return;
	unsigned rc = reply[3] & 15;
	int i = outcome == SERVE_BADVERS ? RC_BADVERS
		: rc == 0 ? RC_NOERROR : rc == 1 ? RC_FORMERR : rc == 2 ? RC_SERVFAIL
		: rc == 3 ? RC_NXDOMAIN : rc == 4 ? RC_NOTIMP : rc == 5 ? RC_REFUSED : RC_OTHER;
	bump(c, C_RC + i);
	if (reply[2] & 0x02)
		bump(c, C_TRUNC);
}

static inline void count_outcome(struct tstat *c, int outcome, const dnsnap_lookup_t *lk)
{
	switch (outcome) {
	case SERVE_DROP:
		bump(c, C_DROP + DROP_MALFORMED);
		break;
	case SERVE_HIT: /* a stale answer is a miss and stale, never a hit */
		if (lk->stale)
			bump(c, C_MISS);
		bump(c, lk->stale ? C_STALE : lk->tier == DNSNAP_TIER_MEMORY ? C_HIT_MEM : C_HIT_MAP);
		break;
	case SERVE_MISS: /* a miss of a cache-only server; forwarded ones are counted
			  * when they go upstream (forward_upstream()): a Redis hit is no miss */
		bump(c, C_MISS);
		break;
	case SERVE_REFUSED:
		bump(c, C_REFUSED_ACL);
		break;
	case SERVE_LOCAL: /* REFUSED by dnsnap itself, never a miss: never forwarded */
		bump(c, C_REFUSED_LOCAL);
		break;
	default:
		break;
	}
}

static inline int64_t mono_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

static inline int64_t mono_ms(void)
{
	return mono_us() / 1000;
}

struct server;

/** Fill @p st from every thread's counters, the forwarder, the Redis client,
 * the cache and the snapshot (any thread: the HTTP thread calls it). */
void collect(void *arg, struct serve_stats *st);

/** SIGUSR1 and the exit (@p when: "" or " at exit"): a line on the log, or
 * with --json one JSON object on standard output. */
void print_counters(struct server *s, const char *when);

/** The counters as one line of "name N" words, the names the JSON's keys. */
void counters_line(const struct serve_stats *st, char *buf, size_t cap);

/** `dnsnap control status`: text, or with @p json one JSON object. */
void status_print(struct server *s, int json, FILE *out);

#endif
