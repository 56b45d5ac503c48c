/*
 * l2_int.h: what the files of engine/l2 share (URLs, the slot map, the
 * redirection replies, hiredis's reader bounded), and the tests and fuzz
 * targets reach. Not installed: a program uses l2.h. The names that the
 * files share are dnsnap__l2* (two underscores): libdnsnap-l2.so keeps them
 * local, and in libdnsnap-l2.a they stay out of an embedder's way.
 */
#ifndef DNSNAP_L2_INT_H
#define DNSNAP_L2_INT_H

#include <stddef.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#include "l2.h"

#define L2_SLOTS 16384
#define L2_HOST_MAX 256          /* a host name, an address, or a Unix socket's path */
#define L2_SEEDS_MAX 16
#define L2_REDIRECTS_MAX 5

/*
 * A reply's bounds (l2.h, "Hostile servers"). What a dnsnap command needs
 * at most: GETRANGE, one string of DNSNAP_L2_READ_MAX; SCAN, [cursor, [1000
 * keys or a few more, each at most prefix + DNSNAP_KEY_MAX bytes]] (under
 * 1 MB); CLUSTER SLOTS, one array per range, 16384 at most, each [lo, hi,
 * node...] with a node [host, port, id, metadata]: about 340000 elements
 * with two replicas per range, 620000 with five, a few MB. hiredis 0.14 has
 * no maxelements: a multi-bulk count is reserved whole (*2147483647 is a
 * 16 GB calloc, then a free that visits each slot), so the reader's
 * createArray is ours, and refuses first.
 */
#define L2_REPLY_BYTES_MAX (32u << 20)   /* waiting in the reader; strings in one reply */
#define L2_ARRAY_MAX 100000u             /* elements of one array */
#define L2_REPLY_ELEMENTS_MAX 1000000u   /* elements of all the arrays of one reply */

/* One server: a TCP host and port, or a Unix socket (port 0, host the path). */
struct l2_addr {
	char host[L2_HOST_MAX];
	int port;                 /* 0: host is a Unix socket's path */
};

enum l2_url_kind { L2_URL_REDIS, L2_URL_UNIX, L2_URL_CLUSTER };

/* GETRANGE's end argument: DNSNAP_L2_READ_MAX as a string */
#define L2_STR_(x) #x
#define L2_STR(x) L2_STR_(x)
#define L2_RANGE_END L2_STR(DNSNAP_L2_READ_MAX)

struct l2_url {
	enum l2_url_kind kind;
	unsigned db;              /* SELECT (not with a cluster) */
	unsigned n;               /* addresses: 1, or the cluster's seeds */
	struct l2_addr addr[L2_SEEDS_MAX];
};

/* Parse a URL (see l2.h). @return 0, or -1 with a message in @p err */
int dnsnap__l2_url_parse(const char *url, struct l2_url *out, char *err, size_t errcap);

/* CRC16-CCITT (XMODEM: polynomial 0x1021, initial 0), as Redis Cluster's slots */
uint16_t dnsnap__l2_crc16(const uint8_t *p, size_t len);

/* One range of CLUSTER SLOTS: its master. */
struct l2_range {
	unsigned lo, hi;
	struct l2_addr master;
};

/*
 * The masters of a CLUSTER SLOTS reply. An empty host (a node that does not
 * know its address) is @p asked's host. @return the number of ranges (at
 * most @p cap), or -1 when the reply is not CLUSTER SLOTS's shape
 */
int dnsnap__l2_slots_parse(const redisReply *r, const struct l2_addr *asked,
			   struct l2_range *out, size_t cap);

/*
 * An error reply's redirection: "MOVED SLOT HOST:PORT" or "ASK SLOT HOST:PORT"
 * (HOST maybe [IPv6] or bare IPv6, the port after the last ':'; an empty HOST
 * is the node that answered, left empty here). @return 1 MOVED, 2 ASK, 0 not a
 * redirection (or a malformed one)
 */
int dnsnap__l2_redirect_parse(const char *s, size_t len, unsigned *slot, struct l2_addr *to);

/*
 * @p in with the glob characters of SCAN MATCH (* ? [ ] \) escaped, then '*'
 * and a NUL. @return the length written (without the NUL), or 0 when @p cap
 * is too small
 */
size_t dnsnap__l2_match_pattern(const char *in, size_t len, char *out, size_t cap);

/* The monotonic clock in ms */
uint64_t dnsnap__l2_now_ms(void);

/* "host:port", "[v6]:port" or "unix:PATH" for messages */
void dnsnap__l2_addr_str(const struct l2_addr *a, char *out, size_t cap);

/* Same address? */
int dnsnap__l2_addr_eq(const struct l2_addr *a, const struct l2_addr *b);

/* SIGPIPE to SIG_IGN when its disposition is the default (l2.h, "Signals") */
void dnsnap__l2_sigpipe_ignore(void);

/* ----------------------------------------------- the reader, bounded */

/* A reader's running count of the reply it builds (its privdata). */
struct l2_bound {
	const redisReplyObjectFunctions *orig; /* hiredis's own functions */
	size_t elements, bytes;   /* of the reply in progress */
	const char *over;         /* the bound that refused it (the reader's error is ours) */
};

/* Put the bounds on @p r's reply building (@p b must live as long as @p r). */
void dnsnap__l2_reader_bound(redisReader *r, struct l2_bound *b);

/* Bytes fed to @p r and not parsed yet over L2_REPLY_BYTES_MAX (a reply too long) */
int dnsnap__l2_reader_full(const redisReader *r);

/* Which bound @p r's reply is over (its failure is then the bound's, not
 * hiredis's), for a message: "an array of more than 100000 elements"...;
 * NULL: none */
const char *dnsnap__l2_reader_over(const redisReader *r, const struct l2_bound *b);

/*
 * A blocking connection (the bulk calls) with @p ms as its connect and reply
 * bound, its reader bounded by @p b, AUTH and SELECT done. @return the
 * context, or NULL with a message
 */
redisContext *dnsnap__l2_connect_blocking(const struct l2_addr *a, unsigned ms,
					  const char *user, const char *password, unsigned db,
					  struct l2_bound *b, char *err, size_t errcap);

/*
 * redisGetReply() for a blocking connection bounded by @p b: the output
 * written, then replies read until one is whole, failing as soon as the
 * reader holds more than L2_REPLY_BYTES_MAX bytes or a bound refuses. On
 * failure *reply is NULL and @p err says why. @return REDIS_OK or REDIS_ERR
 */
int dnsnap__l2_get_reply(redisContext *c, const struct l2_bound *b, void **reply, char *err,
			 size_t errcap);

#endif
