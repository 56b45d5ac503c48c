/*
 * metrics.h: what `dnsnap serve` counts, and its two renderings: Prometheus
 * text (served over HTTP on --metrics ADDR:PORT) and a JSON object (SIGUSR1
 * and exit with --json). serve.c fills a struct serve_stats from its
 * per-thread counters, the forwarder's dnsnap_fwd_stats() and the library
 * whenever a rendering is asked for; the renderers only read it.
 */
#ifndef DNSNAP_SERVE_METRICS_H
#define DNSNAP_SERVE_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "forward.h"
#include "hist.h"
#include "json.h"

/* The rcodes counted one by one; the rest are counted as "other". */
enum { RC_NOERROR, RC_FORMERR, RC_SERVFAIL, RC_NXDOMAIN, RC_NOTIMP, RC_REFUSED, RC_BADVERS,
       RC_OTHER, RC_N };

/* Why a query got no reply. */
enum { DROP_MALFORMED,    /* under 12 bytes, a response (QR=1), over 4096 bytes */
       DROP_OVERLOAD,     /* --max-outstanding upstream queries were in flight */
       DROP_WAITERS,      /* too many clients already waited for that key */
       DROP_SEND,         /* the reply could not be sent (sendmsg failed) */
       DROP_N };

/* The shared second level (serve --l2): libdnsnap-l2's counters and serve's own. */
struct l2_metrics {
	int on;                              /* --l2 given */
	uint64_t hits, misses, bad, timeouts, errors, refused; /* lookups, by outcome */
	uint64_t writes, write_errors, write_drops;
	uint64_t moved, ask, reconnects;
	uint64_t queue_depth, nodes;
	int breaker;                         /* 0 closed, 1 open, 2 half-open */
};

struct serve_stats {
	uint64_t queries_udp, queries_tcp;
	uint64_t hits_memory, hits_map;      /* fresh answers from each tier */
	uint64_t hits_l2;                    /* answers from the shared second level */
	uint64_t misses;                     /* neither tier had a fresh entry */
	uint64_t stale;                      /* stale answers (RFC 8767) */
	uint64_t upstream_answers;           /* clients answered with an upstream reply */
	uint64_t servfail_upstream;          /* clients given SERVFAIL: every upstream failed */
	uint64_t refused_acl;                /* REFUSED: source not in --allow */
	uint64_t refused_local;              /* REFUSED, never forwarded: AXFR, IXFR, classes */
	uint64_t truncated;                  /* UDP answers sent with TC=1 */
	uint64_t rcode[RC_N];                /* every reply sent, by rcode */
	uint64_t drops[DROP_N];
	uint64_t tcp_connections, tcp_refused, tcp_idle_closed;
	uint64_t tcp_evicted, tcp_refused_source; /* idle longest closed; over --tcp-per-source */
	struct hist answer_latency_cache;    /* received -> reply sent, cache answers */
	struct hist answer_latency_upstream; /* received -> reply sent, after an upstream query */
	struct hist answer_latency_l2;       /* received -> reply sent, from the second level */
	struct l2_metrics l2;
	/* the forwarder (all 0 without --upstream): its in_flight, coalesced, up[] */
	int forwarding;
	dnsnap_fwd_stats_t fwd;
	/* the in-memory cache (dnsnap_cache_stats()) */
	uint64_t cache_entries, cache_bytes, cache_max_bytes, cache_inserts, cache_evictions;
	/* the mapped snapshot */
	int map_open;                        /* a snapshot is attached */
	uint64_t map_entries;
	uint64_t map_created_at;             /* Unix seconds, 0: none */
	uint64_t map_damaged;                /* entries found damaged by lookups */
	uint64_t map_time_refused;           /* lookups that met one the time rule refuses */
	/* snapshots written while serving */
	uint64_t snapshot_writes, snapshot_write_errors;
	uint64_t snapshot_last_at;           /* Unix seconds of the last publish, 0: none */
	double snapshot_last_seconds;        /* how long it took */
	uint64_t snapshot_last_entries;
	double snapshot_longest_pause_ms;    /* longest a cache shard was held from inserts */
	uint64_t now;                        /* Unix seconds when filled */
	uint64_t start_time;                 /* Unix seconds the server started */
};

/* Write the Prometheus text exposition (version 0.0.4) of @p st to @p out. */
void metrics_prom(const struct serve_stats *st, FILE *out);

/* Write @p st's members into the JSON object open in @p j (the keys are
 * listed in the man page, METRICS). */
void metrics_json(const struct serve_stats *st, jw_t *j);

/* The HTTP endpoint's bounds: connections at once (more wait in the
 * kernel's queue), from one address (more are closed at once), and the
 * seconds a connection may stay silent (spec/DECISIONS.md). */
#define METRICS_CONN_MAX 32
#define METRICS_CONN_PER_IP 4
#define METRICS_IDLE_S 3

/* The HTTP endpoint: GET /metrics answers metrics_prom() of what @p collect
 * fills (called from the HTTP thread, into a zeroed struct); any other path
 * is 404, a method other than GET or HEAD 405. @p addr_port: "127.0.0.1:9153"
 * or "[::1]:9153" (port 0: one the system picks). A connection from a source
 * @p allow says 0 to (NULL: anyone) is closed as soon as it is accepted;
 * METRICS_CONN_MAX, METRICS_CONN_PER_IP and METRICS_IDLE_S bound the others.
 * @return 0, or -1 with a message naming the address in @p err */
struct metrics_http;
int metrics_http_start(const char *addr_port, void (*collect)(void *arg, struct serve_stats *out),
		       int (*allow)(void *arg, const struct sockaddr *sa, socklen_t len),
		       void *arg, struct metrics_http **out, char *err, size_t errcap);
/* The port @p m listens on (the one the system picked for port 0). */
int metrics_http_port(const struct metrics_http *m);
/* Stop the HTTP thread and free @p m (NULL: nothing). */
void metrics_http_stop(struct metrics_http *m);

#endif
