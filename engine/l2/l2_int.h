/*
 * l2_int.h: what the files of cli/l2 share (URLs, the slot map, the
 * redirection replies), and the tests reach. Not for the rest of the tool:
 * it uses l2.h.
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

/* One server: a TCP host and port, or a Unix socket (port 0, host the path). */
struct l2_addr {
	char host[L2_HOST_MAX];
	int port;                 /* 0: host is a Unix socket's path */
};

enum l2_url_kind { L2_URL_REDIS, L2_URL_UNIX, L2_URL_CLUSTER };

/* GETRANGE's end argument: L2_VALUE_MAX as a string */
#define L2_STR_(x) #x
#define L2_STR(x) L2_STR_(x)
#define L2_RANGE_END L2_STR(L2_VALUE_MAX)

struct l2_url {
	enum l2_url_kind kind;
	unsigned db;              /* SELECT (not with a cluster) */
	unsigned n;               /* addresses: 1, or the cluster's seeds */
	struct l2_addr addr[L2_SEEDS_MAX];
};

/* Parse a URL (see l2.h). @return 0, or -1 with a message in @p err */
int l2_url_parse(const char *url, struct l2_url *out, char *err, size_t errcap);

/* CRC16-CCITT (XMODEM: polynomial 0x1021, initial 0), as Redis Cluster's slots */
uint16_t l2_crc16(const uint8_t *p, size_t len);

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
int l2_slots_parse(const redisReply *r, const struct l2_addr *asked, struct l2_range *out,
		   size_t cap);

/*
 * An error reply's redirection: "MOVED SLOT HOST:PORT" or "ASK SLOT HOST:PORT"
 * (HOST maybe [IPv6] or bare IPv6, the port after the last ':'; an empty HOST
 * is the node that answered, left empty here). @return 1 MOVED, 2 ASK, 0 not a
 * redirection (or a malformed one)
 */
int l2_redirect_parse(const char *s, size_t len, unsigned *slot, struct l2_addr *to);

/*
 * @p in with the glob characters of SCAN MATCH (* ? [ ] \) escaped, then '*'
 * and a NUL. @return the length written (without the NUL), or 0 when @p cap
 * is too small
 */
size_t l2_match_pattern(const char *in, size_t len, char *out, size_t cap);

/* The monotonic clock in ms */
uint64_t l2_now_ms(void);

/* "host:port", "[v6]:port" or "unix:PATH" for messages */
void l2_addr_str(const struct l2_addr *a, char *out, size_t cap);

/* Same address? */
int l2_addr_eq(const struct l2_addr *a, const struct l2_addr *b);

/*
 * A blocking connection (the bulk calls) with @p ms as its connect and reply
 * bound, AUTH and SELECT done. @return the context, or NULL with a message
 */
redisContext *l2_connect_blocking(const struct l2_addr *a, unsigned ms, const char *user,
				  const char *password, unsigned db, char *err, size_t errcap);

/* The prefixed key: @p prefix then @p key. @return a malloc'd buffer (or NULL) */
uint8_t *l2_key_join(const char *prefix, size_t plen, const uint8_t *key, size_t key_len);

#endif
