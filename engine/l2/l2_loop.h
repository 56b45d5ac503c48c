/*
 * l2_loop.h: the client's state, shared by l2.c (the API, the loop, routing
 * and replies) and l2_conn.c (one connection and its FIFO). "The loop" is
 * whichever thread drives the client: the caller's (dnsnap_l2_process()) or
 * the library's (dnsnap_l2_start()); the fields marked as the loop's are
 * touched by it alone.
 */
#ifndef DNSNAP_L2_LOOP_H
#define DNSNAP_L2_LOOP_H

#include <pthread.h>
#include <stdatomic.h>

#include "l2_int.h"

#define L2_NODES_MAX 64
#define L2_NO_NODE 0xff

enum cmd_kind { C_GET, C_SET, C_PING, C_AUTH, C_SELECT, C_ASKING, C_SLOTS };

/* A command: a GET or SET from the API, or one of the loop's own. */
struct cmd {
	struct cmd *next;         /* the inbound queue, then a node's FIFO */
	struct cmd *tprev, *tnext; /* live GETs, by deadline */
	enum cmd_kind kind;
	int live;                 /* a GET whose waiter has not been given back */
	int probe;                /* the breaker's half-open probe */
	unsigned redirects;
	uint64_t deadline;        /* a GET's: dnsnap_l2_get() + its wait */
	uint64_t sent;            /* appended to a connection */
	void *waiter;
	uint64_t pxat;
	size_t key_len, val_len;
	uint8_t *key, *val;       /* in data[] (prefixed key) */
	uint8_t data[];
};

enum node_state { N_DOWN, N_CONNECTING, N_HANDSHAKE, N_READY };

struct node {
	struct l2_addr addr;
	redisContext *c;
	struct l2_bound bound;    /* c's reader's */
	enum node_state state;
	struct cmd *head, *tail;  /* appended, waiting for their replies, in order */
	unsigned handshake;       /* PING/AUTH/SELECT replies still to come */
	unsigned backoff_ms;      /* the next wait after a failure (0: none yet) */
	uint64_t retry_at;        /* N_DOWN: connect again from then */
	uint64_t connect_by;      /* N_CONNECTING, N_HANDSHAKE: the bound */
	uint64_t rx_at;           /* bytes last read (a long reply is not a stopped server) */
	uint32_t events;          /* registered with epoll (0: none) */
	uint32_t gen;             /* connections opened: an event of a closed one is stale */
	int failed;               /* failed since it was last ready */
	int logged;               /* its failure was logged */
};

struct dnsnap_l2 {
	/* fixed after dnsnap_l2_new() */
	dnsnap_l2_hooks_t hooks;
	char prefix[DNSNAP_L2_PREFIX_MAX + 1];
	size_t prefix_len;
	unsigned wait_ms, queue_max, connect_ms, db;
	char user[256], password[512];
	int cluster, has_replica;
	int epfd, evfd;
	pthread_t thread;
	int started;              /* dnsnap_l2_start(): the thread runs the loop */

	/* the inbound queue and the breaker: mu */
	pthread_mutex_t mu;
	struct cmd *q_head, *q_tail;
	unsigned q_len;
	int signalled, stop;
	uint64_t stop_by;
	int breaker, probe_out;
	unsigned fails, period_ms;
	uint64_t open_until;

	/* counters: any thread */
	_Atomic uint64_t gets, hits, misses, timeouts, errors, refused, writes, write_errors,
		write_drops, moved, ask, reconnects, too_big, queue_depth, nodes_up;

	/* the loop's own */
	uint64_t set_error_logged; /* when a refused SET was last logged (ms) */
	unsigned n_nodes;
	struct node nodes[L2_NODES_MAX];
	uint8_t slot_node[L2_SLOTS];
	struct cmd *t_head, *t_tail; /* live GETs, by deadline */
	int refresh_pending, refresh_inflight, stopping;
	uint64_t stopping_by;
	uint64_t refresh_last;
};

/* l2_conn.c */
int dnsnap__l2n_open(dnsnap_l2_t *l, unsigned i, uint64_t now);
void dnsnap__l2n_fail(dnsnap_l2_t *l, unsigned i, const char *why);
void dnsnap__l2n_append(dnsnap_l2_t *l, unsigned i, struct cmd *c, uint64_t now);
void dnsnap__l2n_event(dnsnap_l2_t *l, unsigned i, uint32_t ev);
void dnsnap__l2n_flush(dnsnap_l2_t *l, unsigned i);
void dnsnap__l2n_close_all(dnsnap_l2_t *l);
void dnsnap__l2_log(dnsnap_l2_t *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* l2.c */
struct cmd *dnsnap__l2c_new(enum cmd_kind kind, const char *prefix, size_t plen,
			    const uint8_t *key, size_t key_len, const uint8_t *val, size_t val_len);
void dnsnap__l2c_reply(dnsnap_l2_t *l, unsigned i, struct cmd *c, const redisReply *r);
void dnsnap__l2c_fail(dnsnap_l2_t *l, struct cmd *c, int stopped);
/* A connection lost or not made: one failure for the breaker (dnsnap__l2n_fail()) */
void dnsnap__l2_breaker_failed(dnsnap_l2_t *l);
/* dnsnap__l2c_fail() telling the breaker @p note (breaker_note()'s: 0 a failure, -1
 * one already counted: the other GETs a lost connection takes with it, the
 * GETs sent to a node while it waits to be opened again) */
void dnsnap__l2c_fail_note(dnsnap_l2_t *l, struct cmd *c, int stopped, int note);

#endif
