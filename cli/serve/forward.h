/*
 * forward.h: the upstream side of `dnsnap serve --upstream`: one thread
 * that asks the upstream resolvers what the cache missed.
 *
 * - One upstream query per key: a miss whose key (dnsnap_query_t.key: the
 *   lower-cased name, type, class, CD) is already being asked waits for that
 *   query (at most max_waiters clients per key); fwd_done() then gets every
 *   waiter at once.
 * - The query: a fresh random ID, RD=1, the client's CD, the client's QTYPE
 *   and QCLASS, the name lower-cased (or, with use_0x20, each letter's case
 *   random), one OPT (payload size 1232, DO=1, no options). Sent from a new
 *   UDP socket bound to a random port the kernel picks and connect()ed to the
 *   upstream, so that the kernel drops datagrams from any other address or
 *   port; the reply's source is checked again.
 * - A reply is accepted only when it comes from the upstream's address and
 *   port, with the query's ID, QR=1, OPCODE QUERY, QDCOUNT 1 and the same
 *   question (the name compared without case, or byte for byte with
 *   use_0x20, type and class). Any other datagram on the socket is counted
 *   (mismatched) and ignored: the query keeps waiting for the real reply
 *   until its timeout. A reply with TC=1 is asked again over TCP of the same
 *   upstream (a TCP reply with TC=1 is an error).
 * - Attempts: timeout_ms each, at most tries in all, each on the next usable
 *   upstream. SERVFAIL, REFUSED, NOTIMP, FORMERR, a malformed reply, ICMP
 *   errors and TCP failures count as that upstream's error and the next
 *   attempt goes on; NOERROR and NXDOMAIN are answers.
 * - Health: an upstream with 3 failures (timeouts or errors) in a row is
 *   down for 1 s, then 2, 4 ... at most 30 s; when its time is up one query
 *   tries it, and one answer makes it healthy. Upstreams are tried in the
 *   order given, skipping those down (when all are down, the one down the
 *   longest is tried).
 * - Bounds: at most max_outstanding upstream queries in flight (each holds
 *   one socket); fwd_submit() refuses more. A submission holds one of those
 *   slots from fwd_submit() until the thread has seen it, even one that then
 *   waits on a query already in flight (it gives the slot back then): so
 *   fwd_submit() can answer FWD_FULL at once, without a lock shared with
 *   the thread. Whether a key already has max_waiters is known to the thread
 *   only: such a waiter comes back through the rejected() hook.
 */
#ifndef DNSNAP_SERVE_FORWARD_H
#define DNSNAP_SERVE_FORWARD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "dnsnap.h"
#include "metrics.h"

#define FWD_MAX_UPSTREAMS STATS_MAX_UPSTREAMS
#define FWD_EDNS_SIZE 1232
/* The longest upstream query: header, a 255-byte name, type, class, the OPT. */
#define FWD_QUERY_MAX (12 + 255 + 4 + 11)

struct fwd_upstream {
	struct sockaddr_storage addr;
	socklen_t addr_len;
	char text[64];           /* as given, for logs and metrics: "127.0.0.1:53" */
};

struct fwd_opts {
	struct fwd_upstream up[FWD_MAX_UPSTREAMS];
	int nup;
	unsigned timeout_ms;     /* one attempt (0: the default, 1000) */
	unsigned tries;          /* attempts in all, over the upstreams (0: 3) */
	unsigned max_outstanding;/* upstream queries in flight (0: 2048) */
	unsigned max_waiters;    /* clients waiting on one key (0: 256) */
	int use_0x20;
};

/* How an upstream query ended. */
enum fwd_result {
	FWD_ANSWER = 0,          /* reply: an accepted NOERROR or NXDOMAIN response */
	FWD_TIMEOUT,             /* every attempt timed out (-> EDE 22) */
	FWD_FAILED,              /* every attempt failed, at least one not by timeout: errors,
				  * SERVFAIL or REFUSED answers, garbage (-> EDE 23); reply is the
				  * last accepted response with another RCODE than NOERROR and
				  * NXDOMAIN (SERVFAIL, REFUSED ...), if any, else NULL */
	FWD_STOPPED,             /* fwd_free() while it was in flight */
};

struct fwd_hooks {
	/*
	 * Called from the forwarder's thread once per upstream query, with every
	 * client that waited for it (the @p waiter pointers given to
	 * fwd_submit(), in the order submitted). @p reply (may be NULL) is valid
	 * during the call only. The hook owns the waiters from then on.
	 */
	void (*done)(void *arg, enum fwd_result result, const uint8_t *reply, size_t len,
		     void *const *waiters, size_t n);
	/*
	 * Called from the forwarder's thread for a @p waiter that fwd_submit()
	 * queued but that will not be asked for: @p why is FWD_KEY_FULL
	 * (max_waiters clients wait on its key already) or FWD_FULL (no memory
	 * for one more waiter). The hook owns @p waiter from then on.
	 */
	void (*rejected)(void *arg, void *waiter, int why);
	void *arg;
};

struct fwd;

enum { FWD_QUEUED = 0, FWD_FULL = 1, FWD_KEY_FULL = 2 };

/* Start the forwarder's thread. @return 0, or -1 with a message in @p err */
int fwd_new(const struct fwd_opts *o, const struct fwd_hooks *h, struct fwd **out, char *err,
	    size_t errcap);

/*
 * Ask for @p q (parsed by dnsnap_query_parse(), its key built without a tag)
 * on behalf of @p waiter, an opaque pointer handed back to done(). Any
 * thread, but not during or after fwd_free(). @return FWD_QUEUED (done(), or
 * rejected() with FWD_KEY_FULL, will get @p waiter), FWD_FULL (max_outstanding
 * queries in flight or submitted: the caller keeps @p waiter).
 */
int fwd_submit(struct fwd *f, const dnsnap_query_t *q, void *waiter);

/* Wait until no upstream query is in flight or submitted, at most @p ms
 * milliseconds. @return 0 drained, -1 timed out */
int fwd_drain(struct fwd *f, unsigned ms);

/* Stop the thread; queries in flight end with FWD_STOPPED. Accepts NULL. */
void fwd_free(struct fwd *f);

/* Add the forwarder's counters into @p st (forwarding, outstanding,
 * coalesced, nupstreams, up[]). */
void fwd_stats(struct fwd *f, struct serve_stats *st);

/*
 * The checks of a reply, alone (no sockets; unit-tested and fuzzed): whether
 * @p reply answers @p query (the message we sent), as above. @p use_0x20:
 * the name byte for byte. @return 1 accepted, 0 not
 */
int fwd_reply_matches(const uint8_t *query, size_t qlen, const uint8_t *reply, size_t rlen,
		      int use_0x20);

/*
 * Build the upstream query for @p q into @p out (at least 512 bytes):
 * @p id, the name lower-cased or, with @p rnd (not NULL, 32 bytes), each
 * letter's case from rnd's bits: the name's byte i (wire form, from its
 * first length byte) is upper case when bit i (rnd[i / 8] >> i % 8 & 1) is
 * set. @return its length, 0 if it does not fit
 */
size_t fwd_build_query(const dnsnap_query_t *q, uint16_t id, const uint8_t *rnd, uint8_t *out,
		       size_t cap);

#endif
