/*
 * serve.h: `dnsnap serve`, a cache-only DNS server. serve_reply.c turns one
 * received message into its reply (no sockets, no allocation: the fuzz
 * target and the unit test call it directly); serve.c is the command
 * (sockets, threads, signals).
 */
#ifndef DNSNAP_CLI_SERVE_H
#define DNSNAP_CLI_SERVE_H

#include <stddef.h>
#include <stdint.h>

#include "dnsnap.h"

/** The largest UDP reply: the DNS Flag Day 2020 size, the size we advertise
 * in our OPT, and the default max-udp-size of BIND and Unbound. A client
 * that offers more still gets at most this over UDP (then TC and TCP). */
#define SERVE_UDP_MAX DNSNAP_EDNS_SIZE

/** The smallest @p cap serve_reply() takes: every error reply fits in it. */
#define SERVE_REPLY_MIN 512

/**
 * The Extended DNS Error (RFC 8914) on a miss: INFO-CODE 20 "Not
 * Authoritative" with EXTRA-TEXT "not in cache". The server answers for what
 * it holds and nothing else, as an authoritative server does for its zones;
 * 22 "No Reachable Authority" would tell a client that the name's servers
 * are down, which nobody tried, and could make a forwarder mark them bad.
 */
#define SERVE_EDE_CODE 20
#define SERVE_EDE_TEXT "not in cache"

/** What serve_reply() made of a message (the counters of serve.c). */
enum serve_outcome {
	SERVE_DROP = 0,   /* no reply: shorter than a header, or a response (QR=1) */
	SERVE_HIT,        /* the cached answer (TC set when it was cut) */
	SERVE_MISS,       /* REFUSED, with EDE SERVE_EDE_CODE when the query had EDNS */
	SERVE_FORMERR,    /* a malformed query; a meta type (OPT, TKEY, TSIG, 128-254
			   * but ANY), never forwarded */
	SERVE_NOTIMP,     /* an OPCODE other than QUERY */
	SERVE_BADVERS,    /* an EDNS VERSION other than 0 (RFC 6891 6.1.3) */
	SERVE_LOCAL,      /* REFUSED, never forwarded: AXFR, IXFR, a class other
			   * than IN and ANY (serve_reply.c) */
	SERVE_SERVFAIL,   /* the cache failed (a damaged entry) */
	SERVE_FORWARD,    /* a miss with in->forward: no reply yet; ask the upstreams */
	SERVE_REFUSED,    /* in->refuse: REFUSED, with EDE 18 (Prohibited) under EDNS */
	SERVE_OUTCOMES
};

/** EDE INFO-CODEs (RFC 8914) the server sends. */
#define SERVE_EDE_STALE 3           /* Stale Answer */
#define SERVE_EDE_PROHIBITED 18     /* a source outside --allow */
#define SERVE_EDE_NO_REACHABLE 22   /* every upstream attempt timed out */
#define SERVE_EDE_NETWORK 23        /* upstreams failed otherwise */
#define SERVE_EDE_TEXT_MAX 200      /* longer EXTRA-TEXT is left out */

/**
 * The reply to the message @p msg received over UDP (@p tcp 0) or TCP, from
 * @p c at time @p now, into @p out. Reads @p msg, writes @p out, nothing else.
 *
 * - Size: over UDP at most min(the client's EDNS size, 512 without EDNS;
 *   SERVE_UDP_MAX; @p cap), cut at an RRset and TC set when over; over TCP
 *   at most min(65535, @p cap).
 * - Error replies: the query's ID, OPCODE, RD and CD, QR and RA set; the
 *   question echoed when QDCOUNT is 1 and it parses; an OPT (our size 1232,
 *   DO echoed) when the query's OPT follows the question and is whole,
 *   except on FORMERR (the OPT may be what is malformed).
 *
 * @param cap  at least SERVE_REPLY_MIN
 * @param[out] out_len  0 for SERVE_DROP
 * @return an enum serve_outcome
 */
int serve_reply(dnsnap_cache_t *c, const uint8_t *msg, size_t len, int tcp, uint32_t now,
		uint8_t *out, size_t cap, size_t *out_len);

/** What serve_handle() is told besides the message. */
struct serve_in {
	dnsnap_cache_t *cache;
	uint32_t now;
	int tcp;
	int refuse;              /* the source is outside --allow: REFUSED to any query */
	int forward;             /* a miss is SERVE_FORWARD (no reply) instead of REFUSED */
};

/**
 * serve_reply() with more said and more told: @p q is the parsed query
 * (valid for SERVE_HIT, SERVE_FORWARD and SERVE_MISS) and @p lk the lookup
 * (for SERVE_HIT: which tier, stale).
 */
int serve_handle(const struct serve_in *in, const uint8_t *msg, size_t len, uint8_t *out,
		 size_t cap, size_t *out_len, dnsnap_query_t *q, dnsnap_lookup_t *lk);

/** The size limit of a reply to @p q: the client's EDNS size (512 without),
 * at most SERVE_UDP_MAX, over UDP; 65535 over TCP; never over @p cap. */
size_t serve_limit(const dnsnap_query_t *q, int tcp, size_t cap);

/**
 * An error reply to @p msg (a query dnsnap_query_parse() accepted) with
 * @p rcode and, when the query had EDNS, an OPT with EDE @p ede_code (0:
 * none) and @p ede_text (at most SERVE_EDE_TEXT_MAX bytes, else left out).
 * @p out holds SERVE_REPLY_MIN bytes. @return the reply's length
 */
size_t serve_error(const uint8_t *msg, size_t len, unsigned rcode, unsigned ede_code,
		   const char *ede_text, uint8_t *out);

/** What miss_take() did with an upstream answer. */
enum { MISS_CACHED = 0, MISS_UNCACHED = 1 };

/**
 * The miss path's glue: the upstream's @p reply encoded once into @p enc with
 * the cache's TTL policy (dnsnap_cache_encode()), inserted into @p c, and,
 * when @p val is not NULL, that same encoding sealed for the second level
 * into @p val (DNSNAP_L2_VALUE_MAX bytes; *val_len 0 when it could not be)
 * with its expiry in *pxat_ms. The clients that waited are answered from
 * @p enc (dnsnap_cache_answer_entry()), not from a lookup.
 * @return MISS_CACHED; MISS_UNCACHED (TTL 0 after the policy, or the cache
 *         did not take it: over its byte limit; nothing sealed for TTL 0, the
 *         encoding still good to answer from); or the encoder's error
 *         (the cache cannot read the reply; diag)
 */
int miss_take(dnsnap_cache_t *c, const uint8_t *reply, size_t len, uint32_t now,
	      dnsnap_encoded_t *enc, uint8_t *val, size_t *val_len, uint64_t *pxat_ms,
	      dnsnap_diag_t *d);

#endif
