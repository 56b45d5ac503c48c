/*
 * forward.h: libdnsnap's upstream client (installed as <dnsnap/forward.h>):
 * it asks upstream resolvers what a cache missed, and hands every reply it
 * accepts back through a hook. `dnsnap serve --upstream` is built on it.
 *
 * - One upstream query per key: a miss whose key (dnsnap_query_t.key: the
 *   lower-cased name, type, class, CD) is already being asked waits for that
 *   query (at most max_waiters clients per key); done() then gets every
 *   waiter at once.
 * - The query: a fresh random ID (getrandom()), RD=1, the client's CD, the
 *   client's QTYPE and QCLASS, the name lower-cased (or, with use_0x20, each
 *   letter's case random), one OPT (payload size 1232, DO=1, no options).
 *   Sent from a new UDP socket bound to a random port the kernel picks and
 *   connect()ed to the upstream, so that the kernel drops datagrams from any
 *   other address or port; the reply's source is checked again.
 * - A reply is accepted only when it comes from the upstream's address and
 *   port, with the query's ID, QR=1, OPCODE QUERY, QDCOUNT 1 and the same
 *   question (the name compared without case, or byte for byte with
 *   use_0x20, type and class). Any other datagram on the socket is counted
 *   (mismatched) and ignored: the query keeps waiting for the real reply
 *   until its timeout. A reply with TC=1 is asked again over TCP of the same
 *   upstream (a TCP reply with TC=1 is an error).
 * - Attempts: timeout_ms each, at most tries in all, each on the next usable
 *   upstream. NOERROR and NXDOMAIN are answers. Any other RCODE (SERVFAIL,
 *   REFUSED, NOTIMP, FORMERR ...), a malformed reply, ICMP errors and TCP
 *   failures count as that upstream's error (stats) and the next attempt
 *   goes on.
 * - Health: whether an upstream answers at all, not whether it can resolve
 *   a name. An upstream is marked down after 3 failures in a row that are
 *   its own: connection errors (ICMP port or host unreachable, a TCP
 *   connection refused, reset or closed early), garbage over TCP (a reply
 *   for another query, TC=1), and timeouts while it accepted no reply to
 *   anything else, each for another key (one name timing out again and
 *   again is that name's failure). A reply with any RCODE shows it alive:
 *   a name's SERVFAIL or REFUSED moves the query to the next upstream but
 *   never marks the upstream down, and a reply ends the run of failures.
 *   Down is 1 s, then 2, 4 ... at most 30 s; when its time is up one query
 *   tries it, and one accepted reply makes it healthy. Failures of this host
 *   (no socket or descriptor left, no memory) are nobody's. Upstreams are
 *   tried in the order given, skipping those down (when all are down, the
 *   one down the longest is tried). Every change is told to the log() hook.
 * - Bounds: at most max_outstanding submissions held at once (queries in
 *   flight, each with one socket, and submissions the loop has not taken
 *   yet); dnsnap_fwd_submit() refuses more. A submission holds one of those
 *   slots from dnsnap_fwd_submit() until the loop has taken it, even one
 *   that then waits on a query already in flight (it gives the slot back
 *   then): so dnsnap_fwd_submit() can answer DNSNAP_FWD_FULL at once, with
 *   no lock shared with the loop. Whether a key already has max_waiters is
 *   known to the loop only: such a waiter comes back through rejected().
 *
 * Threads. dnsnap_fwd_new() starts none. The loop (everything but
 * submissions) runs either in a thread of the library, dnsnap_fwd_start(),
 * or in the embedder's event loop: watch dnsnap_fwd_fd() for reading (level
 * triggered: poll, select, epoll without EPOLLET), wait at most
 * dnsnap_fwd_timeout_ms(), then call dnsnap_fwd_process(). Those three, and
 * dnsnap_fwd_drain() and dnsnap_fwd_free() without dnsnap_fwd_start(), are
 * the loop's: one thread at a time. The hooks run in the loop's thread, one
 * at a time; of the forwarder's calls, a hook may make dnsnap_fwd_submit()
 * and dnsnap_fwd_stats() only, which any thread may call until
 * dnsnap_fwd_free().
 *
 * Nothing in the loop blocks. Memory: per submission one small struct (the
 * question copied), its waiters' array once it outgrows 4, a TCP reply's
 * buffer and the copy of an upstream's error reply; nothing else is
 * allocated per query.
 */
#ifndef DNSNAP_FORWARD_H
#define DNSNAP_FORWARD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "dnsnap.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DNSNAP_FWD_MAX_UPSTREAMS 8
#define DNSNAP_FWD_EDNS_SIZE 1232
/** The longest upstream query: header, a 255-byte name, type, class, the OPT. */
#define DNSNAP_FWD_QUERY_MAX (12 + 255 + 4 + 11)

/**
 * The latency histogram's buckets (attempt sent -> reply accepted): bucket
 * i counts replies that took at most DNSNAP_FWD_LATENCY_BOUNDS_US[i]
 * microseconds and more than bound i - 1; the last one, i =
 * DNSNAP_FWD_LATENCY_N, those above every bound. Prometheus's "le" bounds.
 */
#define DNSNAP_FWD_LATENCY_N 16
#define DNSNAP_FWD_LATENCY_BOUNDS_US                                                   \
	{ 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000,    \
	  500000, 1000000, 2500000 }

typedef struct dnsnap_fwd dnsnap_fwd_t;

typedef struct dnsnap_fwd_upstream {
	struct sockaddr_storage addr; /* AF_INET or AF_INET6, with its port */
	socklen_t addr_len;
	char text[64];           /* as given, for logs and stats: "127.0.0.1:53" */
} dnsnap_fwd_upstream_t;

typedef struct dnsnap_fwd_opts {
	dnsnap_fwd_upstream_t up[DNSNAP_FWD_MAX_UPSTREAMS];
	int nup;                 /* 1 to DNSNAP_FWD_MAX_UPSTREAMS */
	unsigned timeout_ms;     /* one attempt (0: the default, 1000) */
	unsigned tries;          /* attempts in all, over the upstreams (0: 3) */
	unsigned max_outstanding;/* submissions held at once (0: 2048) */
	unsigned max_waiters;    /* clients waiting on one key (0: 256) */
	int use_0x20;            /* random letter case, checked in the reply */
} dnsnap_fwd_opts_t;

/** How an upstream query ended. */
enum dnsnap_fwd_result {
	DNSNAP_FWD_ANSWER = 0,   /* reply: an accepted NOERROR or NXDOMAIN response */
	DNSNAP_FWD_TIMEOUT,      /* every attempt timed out (a server says EDE 22) */
	DNSNAP_FWD_FAILED,       /* every attempt failed, at least one not by timeout:
				  * errors, SERVFAIL or REFUSED answers, garbage (EDE 23);
				  * reply is the last accepted response with another RCODE
				  * than NOERROR and NXDOMAIN (SERVFAIL, REFUSED ...), if
				  * any, else NULL */
	DNSNAP_FWD_STOPPED,      /* dnsnap_fwd_free() while it was in flight */
};

/** dnsnap_fwd_submit()'s results, and rejected()'s reasons. */
enum { DNSNAP_FWD_QUEUED = 0, DNSNAP_FWD_FULL = 1, DNSNAP_FWD_KEY_FULL = 2 };

/** What happened to an upstream's health (the log() hook). */
enum dnsnap_fwd_event {
	DNSNAP_FWD_DOWN,         /* marked down: its failures in a row, when it is tried again */
	DNSNAP_FWD_STILL_DOWN,   /* tried after its time down, failed: down twice as long */
	DNSNAP_FWD_UP,           /* it answered again: healthy */
};

typedef struct dnsnap_fwd_hooks {
	/*
	 * Once per upstream query, with every client that waited for it (the
	 * @p waiter pointers given to dnsnap_fwd_submit(), in the order
	 * submitted). @p reply (may be NULL) is valid during the call only. The
	 * hook owns the waiters from then on. Required.
	 */
	void (*done)(void *arg, enum dnsnap_fwd_result result, const uint8_t *reply,
		     size_t len, void *const *waiters, size_t n);
	/*
	 * A @p waiter that dnsnap_fwd_submit() queued but that will not be asked
	 * for: @p why is DNSNAP_FWD_KEY_FULL (max_waiters clients wait on its key
	 * already) or DNSNAP_FWD_FULL (no memory for one more waiter). The hook
	 * owns @p waiter from then on. Required.
	 */
	void (*rejected)(void *arg, void *waiter, int why);
	/*
	 * An upstream's health changed (@p upstream: its index in the options):
	 * @p msg, one line without a newline, valid during the call, such as
	 * "upstream 127.0.0.1:5335 down: 3 timeouts in a row, retried in 1 s" or
	 * "upstream 127.0.0.1:5335 up again (down 4 s)". Optional (NULL).
	 */
	void (*log)(void *arg, enum dnsnap_fwd_event event, int upstream, const char *msg);
	void *arg;
} dnsnap_fwd_hooks_t;

/** One upstream's counters (dnsnap_fwd_stats()). */
typedef struct dnsnap_fwd_upstream_stats {
	char name[64];           /* its text: "127.0.0.1:53" */
	uint64_t queries;        /* attempts sent (UDP and TCP) */
	uint64_t answers;        /* accepted NOERROR and NXDOMAIN replies */
	uint64_t timeouts;       /* attempts that got no accepted reply in time */
	uint64_t errors;         /* network errors, garbage, other RCODEs, TC over TCP */
	uint64_t mismatched;     /* replies refused: wrong ID, question, source or case */
	uint64_t tcp_fallbacks;  /* TC=1 over UDP, asked again over TCP */
	int healthy;             /* 1 usable now, 0 marked down (backing off) */
	uint64_t latency[DNSNAP_FWD_LATENCY_N + 1]; /* answers by latency bucket (not
						     * cumulative) */
	uint64_t latency_sum_us; /* their latencies added up */
} dnsnap_fwd_upstream_stats_t;

typedef struct dnsnap_fwd_stats {
	uint64_t in_flight;      /* upstream queries being asked now */
	uint64_t outstanding;    /* submissions held: in flight, or not yet taken by the
				  * loop (what max_outstanding bounds) */
	uint64_t coalesced;      /* submissions that joined a query already in flight */
	int nup;
	dnsnap_fwd_upstream_stats_t up[DNSNAP_FWD_MAX_UPSTREAMS];
} dnsnap_fwd_stats_t;

/**
 * Make a forwarder for @p o's upstreams (copied) and @p h's hooks (copied;
 * done and rejected required). No thread is started: see dnsnap_fwd_start()
 * and dnsnap_fwd_process(). Reads 4 KiB of getrandom() (the IDs, the key
 * hash's seed).
 * @param[out] out  set only on success; free with dnsnap_fwd_free()
 * @param diag  may be NULL: the reason, such as "upstream nowhere: not an
 *              IPv4 or IPv6 address"
 * @return DNSNAP_OK; DNSNAP_EINVAL (no upstream or more than 8, an address
 *         that is not IPv4 or IPv6, a hook missing); DNSNAP_ENOMEM; -errno
 *         (epoll, eventfd, getrandom)
 */
int dnsnap_fwd_new(const dnsnap_fwd_opts_t *o, const dnsnap_fwd_hooks_t *h, dnsnap_fwd_t **out,
		   dnsnap_diag_t *diag);

/**
 * Run the loop in a thread of the library until dnsnap_fwd_free() (what
 * `dnsnap serve` does); the hooks then run in that thread. At most once;
 * dnsnap_fwd_process() is not to be called after it.
 * @return DNSNAP_OK, DNSNAP_EINVAL (started already), -errno (pthread_create)
 */
int dnsnap_fwd_start(dnsnap_fwd_t *f);

/** The descriptor to watch for reading (an epoll set): readable when the
 * loop has work (a reply, a submission). Owned by @p f. */
int dnsnap_fwd_fd(const dnsnap_fwd_t *f);

/** Milliseconds until the loop's next deadline (an attempt's timeout): 0 when
 * one has passed, -1 when none is set. */
int dnsnap_fwd_timeout_ms(const dnsnap_fwd_t *f);

/**
 * Do what is ready, without blocking: take the submissions, read the
 * replies, end the attempts whose time is up, start the next ones; the hooks
 * run in the calling thread, before this returns.
 * @return DNSNAP_OK, DNSNAP_EINVAL (after dnsnap_fwd_start()), -errno (epoll_wait)
 */
int dnsnap_fwd_process(dnsnap_fwd_t *f);

/**
 * Ask for @p q (parsed by dnsnap_query_parse(), its key built without a tag;
 * copied) on behalf of @p waiter, an opaque pointer handed back to done().
 * Any thread, but not during or after dnsnap_fwd_free(). Never blocks on
 * the loop (one short lock on the submission queue).
 * @return DNSNAP_FWD_QUEUED (done(), or rejected(), will get @p waiter);
 *         DNSNAP_FWD_FULL (max_outstanding submissions held, or no memory:
 *         the caller keeps @p waiter)
 */
int dnsnap_fwd_submit(dnsnap_fwd_t *f, const dnsnap_query_t *q, void *waiter);

/**
 * Wait until no submission is held (none in flight, none waiting to be
 * taken), at most @p ms milliseconds. With dnsnap_fwd_start(), it waits for
 * the library's thread (any thread may call it); without, it runs the loop
 * itself (the loop's thread only).
 * @return DNSNAP_OK (drained), -ETIMEDOUT
 */
int dnsnap_fwd_drain(dnsnap_fwd_t *f, unsigned ms);

/**
 * Stop: the library's thread, if started, ends; queries in flight and
 * submissions not taken end with DNSNAP_FWD_STOPPED (done() runs for them in
 * the loop's thread: the library's, or the caller's without
 * dnsnap_fwd_start()); sockets and memory are released. Accepts NULL. Not
 * from a hook.
 */
void dnsnap_fwd_free(dnsnap_fwd_t *f);

/** The counters now (each read atomically, not all at one instant). Any thread. */
void dnsnap_fwd_stats(const dnsnap_fwd_t *f, dnsnap_fwd_stats_t *out);

/**
 * The checks of a reply, alone (no sockets; unit-tested and fuzzed): whether
 * @p reply answers @p query (the message sent), as above. @p use_0x20: the
 * name byte for byte. @return 1 accepted, 0 not
 */
int dnsnap_fwd_reply_matches(const uint8_t *query, size_t qlen, const uint8_t *reply,
			     size_t rlen, int use_0x20);

/**
 * Build the upstream query for @p q into @p out (DNSNAP_FWD_QUERY_MAX bytes
 * hold any): @p id, the name lower-cased or, with @p rnd (not NULL, 32
 * bytes), each letter's case from rnd's bits: the name's byte i (wire form,
 * from its first length byte) is upper case when bit i (rnd[i / 8] >> i % 8
 * & 1) is set. @return its length, 0 if it does not fit
 */
size_t dnsnap_fwd_build_query(const dnsnap_query_t *q, uint16_t id, const uint8_t *rnd,
			      uint8_t *out, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
