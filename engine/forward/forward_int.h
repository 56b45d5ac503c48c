/*
 * forward_int.h: what the forwarder's two files share (not installed):
 * forward.c (the interface, the loop, submissions, the table of queries in
 * flight) and forward_attempt.c (attempts, sockets, deadlines, health).
 */
#ifndef DNSNAP_FORWARD_INT_H
#define DNSNAP_FORWARD_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "forward.h"

#define HDR 12
#define INLINE_WAITERS 4
#define RND_BUF 4096
#define FAILS_TO_DOWN 3u
#define NOT_IN_HEAP SIZE_MAX

enum { ST_IDLE, ST_UDP, ST_TCP_CONNECT, ST_TCP_WRITE, ST_TCP_READ };

struct up_state {
	/* written by the loop, read by dnsnap_fwd_stats() (relaxed atomics) */
	_Atomic uint64_t queries, answers, timeouts, errors, mismatched, tcp_fallbacks;
	_Atomic int healthy;
	_Atomic uint64_t lat[DNSNAP_FWD_LATENCY_N + 1], lat_sum_us;
	/* health: the loop's alone */
	unsigned fails;             /* its own failures in a row */
	unsigned fail_timeouts;     /* of them, timeouts */
	uint64_t fail_keys[FAILS_TO_DOWN]; /* the keys (hashes) whose timeouts counted */
	char fail_why[96];          /* the last error's reason: "UDP: Connection refused" */
	uint64_t down_until;        /* ms; 0: up */
	uint64_t down_since;        /* ms, when it went down */
	unsigned backoff_ms;
	int probing;                /* one query tries it after its time down */
	uint64_t last_reply_us;     /* when it last gave an accepted reply */
};

/* A submission, then (when its key is not in flight) the query in flight. */
struct fq {
	struct fq *next;            /* in the FIFO, then in its hash chain */
	uint64_t hash;
	dnsnap_query_t q;           /* q.msg points to msg */
	uint8_t msg[HDR + DNSNAP_NAME_MAX + 4];
	void **waiters;             /* inline_w, or the heap once it outgrows it */
	size_t nw, capw;
	void *inline_w[INLINE_WAITERS];
	/* the attempt */
	int state;
	int fd;
	int up;                     /* index of its upstream */
	int probe;                  /* it is that upstream's probe */
	unsigned attempts;          /* started */
	int any_error;              /* an attempt ended otherwise than by timeout */
	uint64_t deadline;          /* ms */
	size_t heap_i;
	uint64_t sent_us;
	uint8_t pkt[2 + DNSNAP_FWD_QUERY_MAX]; /* TCP's length, then the query sent */
	size_t qlen;
	/* TCP */
	size_t tcp_off;             /* bytes of pkt written, then of the reply read */
	uint8_t tcp_len[2];
	size_t tcp_need;            /* the reply's length once read */
	uint8_t *tcp_buf;
	/* the last error reply (SERVFAIL, REFUSED ...) */
	uint8_t *err;
	size_t err_len;
};

struct dnsnap_fwd {
	dnsnap_fwd_opts_t o;
	dnsnap_fwd_hooks_t h;
	pthread_t thread;
	_Atomic int started;        /* dnsnap_fwd_start() */
	_Atomic int stop;
	int ep, ev;
	/* submissions: any thread appends, the loop takes */
	pthread_mutex_t mu;
	struct fq *head, **tail;
	_Atomic unsigned slots;     /* submitted and not yet taken + in flight */
	/* dnsnap_fwd_drain() waits here for slots to reach 0 */
	pthread_mutex_t dmu;
	pthread_cond_t dcv;
	/* read by dnsnap_fwd_stats() */
	_Atomic uint64_t in_flight, coalesced;
	struct up_state up[DNSNAP_FWD_MAX_UPSTREAMS];
	/* the loop's alone */
	uint64_t seed;
	struct fq **table;
	size_t tmask;
	struct fq **heap;
	size_t nheap;
	uint8_t rnd[RND_BUF];
	size_t rnd_off;
	uint8_t buf[65536];         /* UDP datagrams */
};

#define RLX memory_order_relaxed
#define INC(x) atomic_fetch_add_explicit(&(x), 1, RLX)

uint64_t dnsnap__fwd_now_us(void);

/* @p n random bytes (getrandom() into a buffer refilled in bulk). @return 0, -1 */
int dnsnap__fwd_rnd(dnsnap_fwd_t *f, uint8_t *out, size_t n);

/* forward.c: @p x ends: done() with its waiters, then it is freed. */
void dnsnap__fwd_finish(dnsnap_fwd_t *f, struct fq *x, enum dnsnap_fwd_result r,
			const uint8_t *reply, size_t len);

/* forward_attempt.c: start @p x's next attempt, or finish it when none is left. */
void dnsnap__fwd_next_attempt(dnsnap_fwd_t *f, struct fq *x);
/* The attempt's socket is ready (@p events: epoll's). */
void dnsnap__fwd_on_event(dnsnap_fwd_t *f, struct fq *x, uint32_t events);
/* End the attempts whose deadline has passed. */
void dnsnap__fwd_expire(dnsnap_fwd_t *f);
/* Close @p x's socket, take it off the deadlines. */
void dnsnap__fwd_close_attempt(dnsnap_fwd_t *f, struct fq *x);

#endif
