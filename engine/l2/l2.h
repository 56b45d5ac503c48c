/*
 * l2.h: the public interface of libdnsnap-l2, dnsnap's Redis client: the
 * shared second level a fleet of resolvers (`dnsnap serve --l2`) keeps in
 * Redis or Redis Cluster, and the bulk transfers of `dnsnap import --from`
 * and `dnsnap export --to`. Installed as <dnsnap/l2.h>; link with
 * pkg-config's libdnsnap-l2 (it needs libdnsnap and hiredis).
 *
 * The client knows keys and values only as bytes. What a value holds, and
 * its checks, are libdnsnap's (dnsnap.h: dnsnap_l2_value_seal(),
 * dnsnap_l2_value_accept()): a value is untrusted until the caller has
 * accepted it.
 *
 * Where: a URL.
 * - redis://HOST[:PORT][/DB]           one server (port 6379, database 0);
 *                                        HOST a name, an IPv4 address or
 *                                        [IPv6]
 * - unix:///PATH[?db=DB]               one server on a Unix socket
 * - redis-cluster://HOST:PORT[,HOST:PORT...]  a Redis Cluster: any of its
 *                                        nodes (the seeds, at most 16); the
 *                                        slot map comes from CLUSTER SLOTS;
 *                                        no database
 * A URL with a user or password (redis://user:pw@host) is refused: secrets
 * never go on a command line (ps shows it). AUTH comes from opts.user and
 * .password, which dnsnap_l2_auth_load() reads from a file or the
 * environment.
 *
 * Keys: the prefix (opts.prefix, DNSNAP_L2_DEFAULT_PREFIX by default), then
 * the caller's key bytes as they are (binary: Redis keys are binary-safe). In
 * a cluster the slot is Redis's: CRC16 (XMODEM) of the key, or of its hash
 * tag (the bytes between the first '{' and the next '}', when not empty), mod
 * 16384 (dnsnap_l2_key_slot()).
 *
 * Values: opaque bytes here. Writes are SET KEY VALUE PXAT MS (Redis 6.2 or
 * later): the value and its absolute expiry in one command. Reads are
 * GETRANGE KEY 0 DNSNAP_L2_READ_MAX, never GET (see DNSNAP_L2_READ_MAX).
 *
 * ------------------------------------------------------------- the client
 *
 * dnsnap_l2_t is asynchronous and starts no thread of its own unless asked:
 * - driven by the caller's event loop: watch dnsnap_l2_fd() for reading,
 *   wake after dnsnap_l2_timeout_ms() at the latest, then call
 *   dnsnap_l2_process(), which does what is ready without blocking (replies,
 *   deadlines, connections opened again, the commands queued);
 * - or run by the library: dnsnap_l2_start() runs that loop in a thread of
 *   its own (what `dnsnap serve` does).
 *
 * Threads: dnsnap_l2_get(), dnsnap_l2_put() and dnsnap_l2_stats() may be
 * called from any thread, at any time between dnsnap_l2_new() and
 * dnsnap_l2_free() (from a hook too); they copy what they are given into the
 * client's queue (a mutex held for a list append) and never wait on Redis.
 * dnsnap_l2_fd(), dnsnap_l2_timeout_ms() and dnsnap_l2_process() belong to
 * one thread, the one that drives the client (never after
 * dnsnap_l2_start()); dnsnap_l2_free() is called once, by the thread that
 * drove it or by any thread after dnsnap_l2_start(), when no other call on
 * the client can run any more. The hooks run in the thread that processes:
 * the caller's in dnsnap_l2_process() and dnsnap_l2_free(), the library's
 * after dnsnap_l2_start(); never two at once.
 *
 * Signals: the library's thread blocks every signal. A write to a connection
 * the server closed must be EPIPE, not the end of the process, and hiredis
 * writes with write(): dnsnap_l2_new() and dnsnap_l2_bulk_open() set SIGPIPE
 * to SIG_IGN when its disposition is the default (a program that handles
 * SIGPIPE keeps its handler).
 *
 * A GET's bound: wait_ms (dnsnap_l2_get()'s, else opts.wait_ms). When it
 * passes before Redis answers, got(DNSNAP_L2_TIMEOUT) is called at once and
 * the late reply is dropped when it comes. Reads go to the replica when one
 * is given (writes always to the primary; reads too while the replica's
 * connection is down); in a cluster, to the master that owns the key's slot.
 *
 * Cluster redirections: -MOVED SLOT HOST:PORT: the slot now belongs to that
 * node (the map is updated at once, a connection opened if needed, and the
 * whole map refreshed with CLUSTER SLOTS soon after, at most every 100 ms);
 * the command is sent again there. -ASK SLOT HOST:PORT: this one command is
 * sent again to that node, preceded by ASKING; the map is not changed. At
 * most 5 redirections per command (then DNSNAP_L2_ERROR). A GET is sent
 * again only while its bound has not passed. At most 64 nodes.
 *
 * Connections: host names are resolved once, in dnsnap_l2_new() (the loop
 * never waits on DNS); connecting starts at the first dnsnap_l2_process()
 * (or in the library's thread): a Redis that is down at start is not an
 * error. A connection is up once its first commands are answered (AUTH and
 * SELECT when asked for, else a PING), within connect_ms of connect(); a
 * connection with commands waiting that reads nothing for connect_ms (a
 * stopped server) has failed.
 *
 * Hostile servers: a reply is bounded by what a dnsnap command can need (a
 * GETRANGE of DNSNAP_L2_READ_MAX bytes, SCAN's batch of 1000 keys, CLUSTER
 * SLOTS of a cluster cut into 16384 ranges): at most 32 MB of bytes waiting
 * in the reader or of strings in one reply, at most 100000 elements in an
 * array and 1000000 in one reply. A reply over a bound fails its connection
 * (counted in too_big, logged), before hiredis reserves room for it.
 *
 * Failures: a connection that fails (refused, reset, a protocol error, a
 * reply over the bounds) is closed; every command waiting on it ends (GETs
 * with got(DNSNAP_L2_ERROR)); it is opened again after 100 ms, then 200,
 * 400 ... at most 5 s (backoff), reset when a connection succeeds; a GET
 * asked of a node waiting to be opened again ends with got(DNSNAP_L2_ERROR)
 * at once. The log hook hears of a failure once per outage, and of the
 * connection's return.
 *
 * The breaker: 5 failures in a row open it. A failure: the GETs that time out
 * in one pass (one, however many), a connection lost or not made (one,
 * however many GETs it took with it; the GETs failed at once meanwhile are
 * not counted), too many redirections. Open: for 1 s (then 2, 4 ... at most
 * 30 s while it keeps failing) dnsnap_l2_get() refuses (the caller goes
 * upstream at once) and dnsnap_l2_put() drops (counted); then half-open: the
 * next GET goes through (the probe); a reply closes the breaker, a failure
 * opens it again for the next period. A reply that is not a value (an error
 * reply, a value over DNSNAP_L2_READ_MAX) is DNSNAP_L2_ERROR to the caller
 * but a reply to the breaker: Redis answered. The breaker's turns go to the
 * log hook.
 *
 * Errors: the calls that can fail return DNSNAP_OK (0) or a negative code
 * (DNSNAP_EINVAL, DNSNAP_ENOMEM, -errno), and those that take an err buffer
 * put a sentence there (never a password), as `dnsnap serve` prints it.
 *
 * Ownership: the client copies the options, keys and values it is given;
 * the caller's waiter pointers are handed back, untouched, through got().
 */
#ifndef DNSNAP_L2_H
#define DNSNAP_L2_H

#include <stddef.h>
#include <stdint.h>

#include "dnsnap.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DNSNAP_L2_URL_MAX 1024
#define DNSNAP_L2_PREFIX_MAX 64
#define DNSNAP_L2_DEFAULT_PREFIX "dnsnap:"
#define DNSNAP_L2_DEFAULT_WAIT_MS 10
#define DNSNAP_L2_DEFAULT_QUEUE 65536
#define DNSNAP_L2_DEFAULT_CONNECT_MS 1000
/*
 * The longest value read (192 KiB; libdnsnap's longest value,
 * DNSNAP_L2_VALUE_MAX, is 128 KiB and 14 bytes). A value is read with
 * GETRANGE KEY 0 DNSNAP_L2_READ_MAX, never GET: a longer one (someone wrote
 * 10 MB) costs DNSNAP_L2_READ_MAX + 1 bytes to refuse, not its length.
 * GETRANGE reads a missing key as "": an empty value is a miss. A plain
 * number: the command's argument is this macro, stringified.
 */
#define DNSNAP_L2_READ_MAX 196608

typedef struct dnsnap_l2_opts {
	const char *url;          /* required: see above */
	const char *replica;      /* NULL: reads go to url too (not with a cluster) */
	const char *prefix;       /* NULL: DNSNAP_L2_DEFAULT_PREFIX; at most
				   * DNSNAP_L2_PREFIX_MAX bytes */
	unsigned wait_ms;         /* a GET's bound (0: DNSNAP_L2_DEFAULT_WAIT_MS) */
	unsigned queue_max;       /* writes and GETs queued (0: DNSNAP_L2_DEFAULT_QUEUE) */
	unsigned connect_ms;      /* a connection's bound, and a bulk command's
				   * (0: DNSNAP_L2_DEFAULT_CONNECT_MS) */
	const char *user;         /* AUTH user (NULL: none; with a password: AUTH PASSWORD) */
	const char *password;     /* AUTH password (NULL or "": no AUTH) */
} dnsnap_l2_opts_t;

/** How a GET ended (got()'s status). */
typedef enum dnsnap_l2_status {
	DNSNAP_L2_HIT = 0,        /* a value came (val, len): untrusted bytes */
	DNSNAP_L2_MISS,           /* no such key */
	DNSNAP_L2_TIMEOUT,        /* its wait passed first */
	DNSNAP_L2_ERROR,          /* the connection failed, an error reply, too many
				   * redirections, a value over DNSNAP_L2_READ_MAX or
				   * not a string */
	DNSNAP_L2_STOPPED,        /* dnsnap_l2_free() */
} dnsnap_l2_status_t;

typedef struct dnsnap_l2_hooks {
	/* Required. The GET asked for @p waiter ended. @p val (DNSNAP_L2_HIT) is
	 * valid during the call only. The hook owns @p waiter again. */
	void (*got)(void *arg, void *waiter, dnsnap_l2_status_t status, const uint8_t *val,
		    size_t len);
	void *arg;
	/* Optional (NULL: silent): a line for the log, without a newline: a
	 * connection that failed (once per outage, with why: refused, "AUTH
	 * refused: WRONGPASS ...", "no reply in 1000 ms", "a reply over ..."),
	 * "connected again", a CLUSTER SLOTS that failed, the breaker's turns, a
	 * write refused (once a minute). */
	void (*log)(void *arg, const char *msg);
} dnsnap_l2_hooks_t;

/* The breaker's states (dnsnap_l2_stats_t.breaker). */
enum {
	DNSNAP_L2_BREAKER_CLOSED = 0,
	DNSNAP_L2_BREAKER_OPEN = 1,
	DNSNAP_L2_BREAKER_HALF_OPEN = 2,
};

typedef struct dnsnap_l2_stats {
	uint64_t gets;            /* GETs sent */
	uint64_t hits, misses, timeouts, errors; /* how they ended */
	uint64_t refused;         /* dnsnap_l2_get() refused: breaker open or queue full */
	uint64_t writes;          /* SETs that Redis answered OK */
	uint64_t write_errors;    /* SETs that failed (error reply, connection lost) */
	uint64_t write_drops;     /* dnsnap_l2_put()s dropped: queue full or breaker open */
	uint64_t moved, ask;      /* cluster redirections followed */
	uint64_t reconnects;      /* connections opened again after a failure */
	uint64_t too_big;         /* replies over the bounds (each failed its connection) */
	uint64_t queue_depth;     /* writes queued, not yet answered */
	int breaker;              /* DNSNAP_L2_BREAKER_* */
	unsigned nodes;           /* connections up now */
} dnsnap_l2_stats_t;

typedef struct dnsnap_l2 dnsnap_l2_t;

/**
 * Check the options, parse the URLs, resolve the host names, make the
 * client's epoll and eventfd descriptors. No thread, no connection: see
 * dnsnap_l2_process() and dnsnap_l2_start().
 *
 * @param o  copied (the strings too); @p h copied
 * @param[out] out  set only on success; free with dnsnap_l2_free()
 * @return DNSNAP_OK; DNSNAP_EINVAL with a message in @p err (no URL or no
 *         got() hook, a bad URL, a prefix too long, a replica with a cluster
 *         or another database, a host name that does not resolve, a user or
 *         password too long); DNSNAP_ENOMEM; -errno (epoll, eventfd)
 */
int dnsnap_l2_new(const dnsnap_l2_opts_t *o, const dnsnap_l2_hooks_t *h, dnsnap_l2_t **out,
		  char *err, size_t errcap);

/**
 * The descriptor to watch (epoll's, a level-triggered one: poll, select or
 * another epoll can wait on it): readable when dnsnap_l2_process() has work,
 * a connection's event or a command queued by any thread. Deadlines do not
 * make it readable: dnsnap_l2_timeout_ms() says when they fall. Owned by the
 * client (closed by dnsnap_l2_free()).
 */
int dnsnap_l2_fd(const dnsnap_l2_t *l);

/**
 * Milliseconds until the next deadline (a GET's bound, a connection's bound
 * or its reopening, the slot map's refresh): 0 when one has passed, -1 when
 * there is none. Call it after dnsnap_l2_process(), and again after a
 * command was queued (the descriptor then wakes the loop).
 */
int dnsnap_l2_timeout_ms(dnsnap_l2_t *l);

/**
 * Do what is ready, without blocking: read replies and call got() for the
 * GETs that ended, end the GETs whose bound passed, open connections whose
 * backoff ended, fail those past their bounds, take the commands queued,
 * write what the connections can take. The driving thread's call.
 * @return DNSNAP_OK; DNSNAP_EINVAL after dnsnap_l2_start(); -errno when the
 *         descriptor fails (it cannot, short of memory corruption)
 */
int dnsnap_l2_process(dnsnap_l2_t *l);

/**
 * Run the loop in a thread of the library's own (every signal blocked in
 * it), until dnsnap_l2_free(). The hooks then run in that thread.
 * @return DNSNAP_OK; DNSNAP_EINVAL when started already; -errno of
 *         pthread_create() with a message in @p err
 */
int dnsnap_l2_start(dnsnap_l2_t *l, char *err, size_t errcap);

/**
 * GET prefix+key for @p waiter, within @p wait_ms (0: opts.wait_ms).
 * Any thread. The key is copied.
 * @return DNSNAP_OK: got() will be called for @p waiter once (within about
 *         the wait); -EAGAIN: refused (the breaker open, the queue full, or
 *         stopping; counted in refused); DNSNAP_ENOMEM. Unless DNSNAP_OK, got()
 *         is not called: the caller keeps @p waiter (and goes upstream).
 */
int dnsnap_l2_get(dnsnap_l2_t *l, const uint8_t *key, size_t key_len, unsigned wait_ms,
		  void *waiter);

/**
 * SET prefix+key @p val PXAT @p pxat_ms (Unix ms), queued (copied); never
 * blocks, never fails the caller: dropped and counted (write_drops) when the
 * queue is full, the breaker open, or the client stopping. Any thread.
 */
void dnsnap_l2_put(dnsnap_l2_t *l, const uint8_t *key, size_t key_len, const uint8_t *val,
		   size_t len, uint64_t pxat_ms);

/** The counters now (any thread; each read atomically, not all at one instant). */
void dnsnap_l2_stats(dnsnap_l2_t *l, dnsnap_l2_stats_t *out);

/**
 * Stop and free. Every GET still waiting ends with got(DNSNAP_L2_STOPPED)
 * (and those queued since), the queued writes are sent and answered for at
 * most @p flush_ms (never longer: what is left then is dropped), the thread
 * (dnsnap_l2_start()) ends, the connections and descriptors close. Without a
 * thread, the caller's thread runs the loop meanwhile (and the hooks). NULL
 * is fine.
 */
void dnsnap_l2_free(dnsnap_l2_t *l, unsigned flush_ms);

/** dnsnap_l2_free(), and the counters as the client ended in @p last (the
 * flush's writes counted; zeros for a NULL client): for a last report. */
void dnsnap_l2_free_last(dnsnap_l2_t *l, unsigned flush_ms, dnsnap_l2_stats_t *last);

/**
 * The user and password for AUTH, from (first found): the file @p file (when
 * not NULL): one line, "PASSWORD" or "USER PASSWORD" (a trailing newline
 * ignored; a file readable or writable by others than its owner is refused);
 * else the environment: DNSNAP_REDIS_PASSWORD and DNSNAP_REDIS_USER
 * (optional). Neither: *user and *password set to "" (no AUTH).
 * @return DNSNAP_OK; DNSNAP_EINVAL with a message naming the file in @p err
 *         (nothing set but "" then); -errno (the file cannot be read)
 */
int dnsnap_l2_auth_load(const char *file, char *user, size_t user_cap, char *password,
			size_t password_cap, char *err, size_t errcap);

/**
 * Whether @p url is one dnsnap_l2_new() takes (its form only: nothing is
 * resolved or connected). @return DNSNAP_OK, or DNSNAP_EINVAL with a message
 * in @p err (never the URL when it holds a user or password)
 */
int dnsnap_l2_url_check(const char *url, char *err, size_t errcap);

/** Redis Cluster's hash slot of @p key (0 to 16383; hash tags as Redis reads them). */
unsigned dnsnap_l2_key_slot(const uint8_t *key, size_t len);

/* ------------------------------------------------------ bulk (blocking) */

/*
 * import --from and export --to: blocking calls from one thread (no hooks,
 * no other thread), connect_ms the bound of each reply. Same URLs, prefix,
 * AUTH and reply bounds as above; replica, wait_ms and queue_max ignored.
 */
typedef struct dnsnap_l2_bulk dnsnap_l2_bulk_t;

/**
 * Connect (the first seed that answers, for a cluster with its slot map).
 * @return DNSNAP_OK; DNSNAP_EINVAL (a bad URL or prefix), DNSNAP_ENOMEM, -EIO
 *         (Redis: the address, AUTH, the slot map...), with a message in @p err
 */
int dnsnap_l2_bulk_open(const dnsnap_l2_opts_t *o, dnsnap_l2_bulk_t **out, char *err,
			size_t errcap);

/**
 * Every key under the prefix, with its value: SCAN MATCH (the prefix with
 * glob characters escaped, then *) COUNT 1000 on every master, a pipelined
 * GETRANGE of each batch; @p fn gets the key without the prefix and the value
 * (untrusted bytes, valid during the call). A key gone between SCAN and
 * GETRANGE is skipped; a value not a string or over DNSNAP_L2_READ_MAX is
 * counted in *skipped and skipped. A key may come twice (SCAN's guarantee,
 * and a resharding during the scan). @p fn returning non-zero stops the scan
 * and that value is returned: make it positive, so that it cannot be taken
 * for the scan's own failure.
 * @param skipped  may be NULL
 * @return DNSNAP_OK, fn's value, or DNSNAP_ENOMEM or -EIO with a message in @p err
 */
int dnsnap_l2_bulk_scan(dnsnap_l2_bulk_t *b,
			int (*fn)(void *arg, const uint8_t *key, size_t key_len,
				  const uint8_t *val, size_t len),
			void *arg, uint64_t *skipped, char *err, size_t errcap);

/**
 * SET prefix+key @p val PXAT @p pxat_ms, pipelined: sent and checked in
 * batches of 1000 (MOVED and ASK followed). Copied.
 * @return DNSNAP_OK, or DNSNAP_ENOMEM or -EIO with a message in @p err (the
 *         first error reply of the batch)
 */
int dnsnap_l2_bulk_put(dnsnap_l2_bulk_t *b, const uint8_t *key, size_t key_len,
		       const uint8_t *val, size_t len, uint64_t pxat_ms, char *err,
		       size_t errcap);

/** Send what dnsnap_l2_bulk_put() holds and check every reply.
 * @return as dnsnap_l2_bulk_put() */
int dnsnap_l2_bulk_flush(dnsnap_l2_bulk_t *b, char *err, size_t errcap);

/** Close the connections and free (what was put and not flushed is dropped). NULL is fine. */
void dnsnap_l2_bulk_close(dnsnap_l2_bulk_t *b);

#ifdef __cplusplus
}
#endif
#endif /* DNSNAP_L2_H */
