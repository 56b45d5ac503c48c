/*
 * l2.h: the shared second level under `dnsnap serve` (Redis), and the bulk
 * transfers of `dnsnap import --from` and `dnsnap export --to`. This folder
 * is the tool's Redis client (hiredis, Debian's libhiredis-dev, for the
 * connections and the RESP parsing); it knows keys and values only as bytes:
 * what a value holds, and its checks, are libdnsnap's
 * (dnsnap_l2_value_seal() / dnsnap_l2_value_open()).
 *
 * Where: a URL.
 * - redis://HOST[:PORT][/DB]           one server (port 6379, database 0);
 *                                        HOST a name, an IPv4 address or
 *                                        [IPv6]
 * - unix:///PATH[?db=DB]               one server on a Unix socket
 * - redis-cluster://HOST:PORT[,HOST:PORT...]  a Redis Cluster: any of its
 *                                        nodes (the seeds); the slot map comes
 *                                        from CLUSTER SLOTS; no database
 * A URL with a user or password (redis://user:pw@host) is refused: secrets
 * never go on a command line (ps shows it). AUTH comes from l2_opts.user and
 * .password, which l2_auth_load() reads from a file or the environment.
 *
 * Keys: the prefix (l2_opts.prefix, "dnsnap:" by default), then the dnsnap
 * key's bytes as they are (binary: Redis keys are binary-safe). In a cluster
 * the slot is Redis's: CRC16 (XMODEM) of the key, or of its hash tag (the
 * bytes between the first '{' and the next '}', when not empty), mod 16384.
 *
 * Values: opaque bytes here. Writes are SET KEY VALUE PXAT MS (Redis 6.2 or
 * later): the value and its absolute expiry in one command.
 *
 * Threads (serve): l2_new() starts one thread that owns every connection
 * (non-blocking sockets, epoll). l2_get() and l2_put() may be called from
 * any thread; they copy what they are given into the thread's queues and
 * never block on Redis. The got() hook runs in the L2 thread.
 *
 * A GET's bound: wait_ms from l2_get(). When it passes before Redis
 * answers, got(L2_TIMEOUT) is called at once and the late reply is dropped
 * when it comes. Reads go to the replica when one is given (writes always to
 * the primary; reads too while the replica's connection is down); in a
 * cluster, to the master that owns the key's slot.
 *
 * Cluster redirections: -MOVED SLOT HOST:PORT: the slot now belongs to that
 * node (the map is updated at once, a connection opened if needed, and the
 * whole map refreshed with CLUSTER SLOTS soon after); the command is sent
 * again there. -ASK SLOT HOST:PORT: this one command is sent again to that
 * node, preceded by ASKING; the map is not changed. At most 5 redirections
 * per command (then L2_ERROR). A GET is sent again only while its bound
 * has not passed.
 *
 * Connections: host names are resolved once, in l2_new(); a connection is
 * up once its first commands are answered (AUTH and SELECT when asked for,
 * else a PING), within connect_ms of connect(); a connection with commands
 * waiting that reads nothing for connect_ms (a stopped server) has failed,
 * and so has one whose reply in progress passes 32 MB.
 *
 * Failures: a connection that fails (refused, reset, a protocol error) is
 * closed; every command waiting on it ends (GETs with got(L2_ERROR)); it is
 * opened again after 100 ms, then 200, 400 ... at most 5 s (backoff), reset
 * when a connection succeeds; a GET asked of a node waiting to be opened
 * again ends with got(L2_ERROR) at once. The breaker: 5 failures in a row
 * open it. A failure: the GETs that time out in one pass (one, however many),
 * a connection lost or not made (one, however many GETs it took with it; the
 * GETs failed at once meanwhile are not counted), too many redirections.
 * Open: for 1 s (then 2, 4 ... at most 30 s while it keeps
 * failing) l2_get() refuses (the caller goes upstream at once) and l2_put()
 * drops (counted); then half-open: the next GET goes through; a reply closes
 * the breaker, a failure opens it again for the next period. A reply that is
 * not a value (an error reply, a value over L2_VALUE_MAX) is L2_ERROR to the
 * caller but a reply to the breaker: Redis answered. Too many redirections
 * count as a failure.
 */
#ifndef DNSNAP_L2_H
#define DNSNAP_L2_H

#include <stddef.h>
#include <stdint.h>

#define L2_URL_MAX 1024
#define L2_PREFIX_MAX 64
#define L2_DEFAULT_PREFIX "dnsnap:"
#define L2_DEFAULT_WAIT_MS 10
#define L2_DEFAULT_QUEUE 65536
/* The longest value read (192 KiB; dnsnap's longest L2 value is 128 KiB). A
 * value is read with GETRANGE KEY 0 L2_VALUE_MAX, never GET: a longer one
 * (someone wrote 10 MB) costs L2_VALUE_MAX + 1 bytes to refuse, not its
 * length. GETRANGE reads a missing key as "": an empty value is a miss.
 * A plain number: the command's argument is this macro, stringified. */
#define L2_VALUE_MAX 196608

struct l2_opts {
	const char *url;          /* required: see above */
	const char *replica;      /* NULL: reads go to url too (not with a cluster) */
	const char *prefix;       /* NULL: L2_DEFAULT_PREFIX; at most L2_PREFIX_MAX bytes */
	unsigned wait_ms;         /* a GET's bound (0: L2_DEFAULT_WAIT_MS) */
	unsigned queue_max;       /* writes and GETs queued for the thread (0: L2_DEFAULT_QUEUE) */
	unsigned connect_ms;      /* a connection's bound, and a bulk command's (0: 1000) */
	const char *user;         /* AUTH user (NULL: none; with a password: AUTH PASSWORD) */
	const char *password;     /* AUTH password (NULL: no AUTH) */
};

/* How a GET ended (got()'s status). */
enum l2_status {
	L2_HIT = 0,               /* a value came (val, len) */
	L2_MISS,                  /* no such key */
	L2_TIMEOUT,               /* wait_ms passed first */
	L2_ERROR,                 /* the connection failed, an error reply, too many
				   * redirections, a value over L2_VALUE_MAX or not a string */
	L2_STOPPED,               /* l2_free() */
};

struct l2_hooks {
	/* The L2 thread: the GET asked for @p waiter ended. @p val (status
	 * L2_HIT) is valid during the call only. The hook owns @p waiter. */
	void (*got)(void *arg, void *waiter, enum l2_status status, const uint8_t *val,
		    size_t len);
	void *arg;
	/* Optional (NULL: silent), the L2 thread: a line for the log, without a
	 * newline: a connection that failed (once per outage, with why: refused,
	 * "AUTH refused: WRONGPASS ...", "no reply in 1000 ms"), "connected
	 * again", a CLUSTER SLOTS that failed. Added by the client (issue 14). */
	void (*log)(void *arg, const char *msg);
};

/* The breaker's states (l2_stats.breaker). */
enum { L2_BREAKER_CLOSED = 0, L2_BREAKER_OPEN = 1, L2_BREAKER_HALF_OPEN = 2 };

struct l2_stats {
	uint64_t gets;            /* GETs sent */
	uint64_t hits, misses, timeouts, errors; /* how they ended */
	uint64_t refused;         /* l2_get() refused: breaker open or queue full */
	uint64_t writes;          /* SETs that Redis answered OK */
	uint64_t write_errors;    /* SETs that failed (error reply, connection lost) */
	uint64_t write_drops;     /* l2_put()s dropped: queue full or breaker open */
	uint64_t moved, ask;      /* cluster redirections followed */
	uint64_t reconnects;      /* connections opened again after a failure */
	uint64_t queue_depth;     /* writes queued, not yet answered */
	int breaker;              /* L2_BREAKER_* */
	unsigned nodes;           /* connections up now */
};

struct l2;

/*
 * Check the options, parse the URLs, start the thread. Connecting happens in
 * the thread: a Redis that is down at start is not an error (the breaker and
 * the backoff deal with it). @return 0, or -1 with a message in @p err (a
 * bad URL, a prefix too long, no memory, no thread)
 */
int l2_new(const struct l2_opts *o, const struct l2_hooks *h, struct l2 **out, char *err,
	   size_t errcap);

/*
 * GET prefix+key for @p waiter. @return 0: got() will be called for it
 * (within about wait_ms); -1: not taken (breaker open, queue full): the
 * caller keeps @p waiter (and goes upstream)
 */
int l2_get(struct l2 *l, const uint8_t *key, size_t key_len, void *waiter);

/* SET prefix+key @p val PXAT @p pxat_ms, queued (copied); never blocks.
 * Dropped (write_drops) when the queue is full or the breaker open. */
void l2_put(struct l2 *l, const uint8_t *key, size_t key_len, const uint8_t *val, size_t len,
	    uint64_t pxat_ms);

/* The counters now (any thread). */
void l2_stats(struct l2 *l, struct l2_stats *out);

/* Stop: the queued writes are sent and answered for at most @p flush_ms,
 * every GET still waiting ends with got(L2_STOPPED), the thread ends, the
 * connections close. NULL is fine. */
void l2_free(struct l2 *l, unsigned flush_ms);

/* l2_free(), and the counters as the thread ended in @p last (the flush's
 * writes counted): for a last report. */
void l2_free_last(struct l2 *l, unsigned flush_ms, struct l2_stats *last);

/*
 * The user and password for AUTH, from (first found): the file @p file
 * (when not NULL): one line, "PASSWORD" or "USER PASSWORD" (a trailing
 * newline ignored; a file readable by others than its owner is refused);
 * else the environment: DNSNAP_REDIS_PASSWORD and DNSNAP_REDIS_USER
 * (optional). Neither: *user and *password set to "" (no AUTH).
 * @return 0, or -1 with a message naming the file in @p err
 */
int l2_auth_load(const char *file, char *user, size_t user_cap, char *password,
		 size_t password_cap, char *err, size_t errcap);

/* ------------------------------------------------------ bulk (blocking) */

/*
 * import --from and export --to: blocking calls from one thread, connect_ms
 * the bound of each reply. Same URLs, prefix and AUTH as above; replica
 * ignored.
 */
struct l2_bulk;

/* @return 0, or -1 with a message in @p err (the URL, the address, AUTH...).
 * SIGPIPE is ignored from then on when its disposition was the default
 * (hiredis writes with write(): a server that closes is EPIPE, not death). */
int l2_bulk_open(const struct l2_opts *o, struct l2_bulk **out, char *err, size_t errcap);

/*
 * Every key under the prefix, with its value: SCAN MATCH (the prefix with
 * glob characters escaped, then *) COUNT 1000 on every master, a pipelined
 * GET of each batch; @p fn gets the key without the prefix. A key gone
 * between SCAN and GET is skipped; a value not a string or over
 * L2_VALUE_MAX is counted in *skipped and skipped. A key may come twice
 * (SCAN's guarantee, and a resharding during the scan). @p fn returning
 * non-zero stops the scan and that value is returned.
 * @return 0, fn's value, or -1 with a message in @p err
 */
int l2_bulk_scan(struct l2_bulk *b,
		 int (*fn)(void *arg, const uint8_t *key, size_t key_len, const uint8_t *val,
			   size_t len),
		 void *arg, uint64_t *skipped, char *err, size_t errcap);

/* SET prefix+key @p val PXAT @p pxat_ms, pipelined: sent and checked in
 * batches of 1000 (MOVED and ASK followed). @return 0, or -1 with a message
 * in @p err (the first error reply) */
int l2_bulk_put(struct l2_bulk *b, const uint8_t *key, size_t key_len, const uint8_t *val,
		size_t len, uint64_t pxat_ms, char *err, size_t errcap);

/* Send what l2_bulk_put() holds and check every reply. @return 0 or -1 (err) */
int l2_bulk_flush(struct l2_bulk *b, char *err, size_t errcap);

void l2_bulk_close(struct l2_bulk *b);

/* ------------------------------------------------- parts, for the tests */

/* Whether @p url is one l2_new() takes (its form only: nothing is
 * connected). @return 0, or -1 with a message in @p err (never the URL when
 * it holds a user or password) */
int l2_url_check(const char *url, char *err, size_t errcap);

/* Redis Cluster's hash slot of @p key (hash tags as Redis reads them) */
unsigned l2_key_slot(const uint8_t *key, size_t len);

/* The URL parser, the AUTH rules' parts, CLUSTER SLOTS and MOVED/ASK parsing
 * and SCAN's pattern are in l2_int.h (tests/unit/test_l2.c). */

#endif
