/*
 * serve_fwd.h: the forwarder's side of `dnsnap serve` (serve_fwd.c): a miss
 * becomes a waiter, handed to the second level (serve_l2.h) or to the
 * library's forwarder; its answer goes back to every client that waited.
 */
#ifndef DNSNAP_SERVE_FWD_H
#define DNSNAP_SERVE_FWD_H

#include <stdint.h>
#include <sys/socket.h>

#include "dnsnap.h"
#include "forward.h"
#include "serve_net.h"
#include "serve_stats.h"

struct server;

/*
 * A client waiting for an upstream answer: what on_done() needs to answer
 * it. UDP: the worker's socket, the client's address and, for a wildcard
 * listener, the address the query was sent to. TCP: the connection's id.
 */
struct waiter {
	int tcp;
	int fd;                  /* UDP: the socket the query came in on */
	uint64_t conn;           /* TCP: the connection */
	struct sockaddr_storage from;
	socklen_t from_len;
	size_t ctl_len;          /* the reply's IP_PKTINFO, 0: none */
	union ctl ctl;
	int64_t t0_us;           /* received */
	dnsnap_query_t q;        /* the query as parsed, q.msg pointing into msg */
	size_t len;
	uint8_t msg[];
};

/* The forwarder's side of the server */
struct fwd_side {
	dnsnap_fwd_t *f;         /* NULL: not forwarding */
	struct tstat cnt;        /* written by on_done() (the forwarder's thread) */
	dnsnap_encoded_t *enc;   /* on_done()'s one encoding of each upstream answer */
	uint8_t *out;            /* on_done()'s reply buffer, 2 + TCP_MSG_MAX */
};

/** The forwarder made and started (its thread), its buffers. @return 0 or
 * EXIT_USAGE (reported) */
int forwarder_start(struct server *s, const dnsnap_fwd_opts_t *fo);
/** Its queries in flight ended (at most @p ms), the forwarder freed, and its
 * buffers (NULL-safe: at any point of the start). */
void forwarder_stop(struct server *s, unsigned ms);

struct waiter *waiter_new(const uint8_t *msg, size_t len, const dnsnap_query_t *q, int64_t t0);
/** A miss of memory and map: to the second level when there is one and it
 * takes it, else upstream (any thread; @p cnt the caller's). */
void forward(struct server *s, struct tstat *cnt, struct waiter *w);
/** A miss straight to the upstream. */
void forward_upstream(struct server *s, struct tstat *cnt, struct waiter *w);
void waiter_answer(struct server *s, struct tstat *cnt, struct hist *lat, struct waiter *w,
		   const uint8_t *reply, size_t len);
int answer_waiter(struct server *s, struct tstat *cnt, struct hist *lat, uint8_t *out,
		  struct waiter *w, const uint8_t *entry, size_t entry_len, uint32_t now);

#endif
