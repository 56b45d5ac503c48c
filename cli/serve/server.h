/*
 * server.h: what the files of `dnsnap serve` share (serve.c: the command,
 * options, setup, main loop and stop; serve_net.c: the UDP workers, the TCP
 * thread and --allow; serve_fwd.c: misses handed to the forwarder (the
 * library's, forward.h) and its answers; serve_snap.c: the snapshot mapped,
 * published and taken in). The threads and the stop are described at the
 * top of serve.c.
 */
#ifndef DNSNAP_SERVE_SERVER_H
#define DNSNAP_SERVE_SERVER_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <libgen.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "byteorder.h"
#include "cli.h"
#include "forward.h"
#include "json.h"
#include "l2.h"
#include "log.h"
#include "metrics.h"
#include "notify.h"
#include "serve.h"

/* Port 53: a server clients are pointed at. Never 5353, mDNS's port, where
 * Avahi and systemd-resolved listen and multicast answers would meet ours. */
#define DEFAULT_LISTEN "127.0.0.1:53"
#define DEFAULT_PORT 53
#define MAX_LISTEN 16
#define MAX_THREADS 64
#define MAX_ALLOW 64
#define BATCH 32               /* datagrams per recvmmsg() / sendmmsg() */
#define UDP_IN_MAX 4096        /* a longer datagram is no query: dropped */
#define RECV_TIMEOUT_MS 200    /* how soon a UDP worker sees the stop flag */
#define TCP_MAX_CONNS 128      /* more are accepted and closed at once */
#define TCP_IDLE_MS 10000      /* no whole query for this long: closed */
#define TCP_MAX_DENIED 16      /* connections from outside --allow open at once */
#define TCP_DENIED_IDLE_MS 1000 /* ... each closed after its first reply or this */
#define TCP_MSG_MAX 65535
#define DEFAULT_MAX_BYTES (512ull << 20)
#define DEFAULT_SNAPSHOT_EVERY 300
#define OLD_SNAPSHOT_S 86400   /* a snapshot older than this is warned about */
#define SAMPLE_ENTRIES 1000    /* entries looked at to tell "mostly expired" */

/* ------------------------------------------------------------- counters */

enum {
	C_UDP, C_TCP, C_HIT_MEM, C_HIT_MAP, C_MISS, C_STALE, C_UP_ANS, C_SERVFAIL_UP,
	C_REFUSED_ACL, C_TRUNC, C_CONNS, C_CONN_REFUSED, C_CONN_IDLE, C_FORMERR_IN,
	C_HIT_L2, C_L2_BAD, C_L2_EXPIRED,
	C_RC, /* RC_N of them */
	C_DROP = C_RC + RC_N, /* DROP_N of them */
	C_N = C_DROP + DROP_N
};

/* One thread's counters and latency histograms. */
struct tstat {
	_Alignas(64) _Atomic uint64_t v[C_N];
	struct hist lat_cache, lat_up, lat_l2;
};

/* One writer per struct tstat: a plain load and store, no locked add. */
static inline void bump(struct tstat *c, int i)
{
	atomic_store_explicit(&c->v[i], atomic_load_explicit(&c->v[i], memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* A reply about to be sent: its rcode (BADVERS from the outcome: its upper
 * bits are in the OPT) and TC. */
static inline void count_reply(struct tstat *c, int outcome, const uint8_t *reply, size_t len)
{
	if (len < 4)
		return;
	unsigned rc = reply[3] & 15;
	int i = outcome == SERVE_BADVERS ? RC_BADVERS
		: rc == 0 ? RC_NOERROR : rc == 1 ? RC_FORMERR : rc == 2 ? RC_SERVFAIL
		: rc == 3 ? RC_NXDOMAIN : rc == 4 ? RC_NOTIMP : rc == 5 ? RC_REFUSED : RC_OTHER;
	bump(c, C_RC + i);
	if (reply[2] & 0x02)
		bump(c, C_TRUNC);
}

static inline void count_outcome(struct tstat *c, int outcome, const dnsnap_lookup_t *lk)
{
	switch (outcome) {
	case SERVE_DROP:
		bump(c, C_DROP + DROP_MALFORMED);
		break;
	case SERVE_HIT:
		bump(c, lk->stale ? C_STALE : lk->tier == DNSNAP_TIER_MEMORY ? C_HIT_MEM : C_HIT_MAP);
		break;
	case SERVE_MISS: case SERVE_FORWARD:
		bump(c, C_MISS);
		break;
	case SERVE_REFUSED:
		bump(c, C_REFUSED_ACL);
		break;
	default:
		break;
	}
}

static inline int64_t mono_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

static inline int64_t mono_ms(void)
{
	return mono_us() / 1000;
}

/* --------------------------------------------------------------- server */

struct listener {
	struct sockaddr_storage addr;
	socklen_t addr_len;
	char text[INET6_ADDRSTRLEN + 8];
	int wildcard;            /* 0.0.0.0 or [::]: replies need the query's address */
	int tcp_fd;
};

/* A UDP worker's buffers: BATCH messages in, BATCH replies out. */
union ctl {
	char buf[CMSG_SPACE(sizeof(struct in6_pktinfo))];
	struct cmsghdr align;
};

struct udp_bufs {
	struct mmsghdr in[BATCH], out[BATCH];
	struct iovec iov_in[BATCH], iov_out[BATCH];
	struct sockaddr_storage from[BATCH];
	union ctl ctl[BATCH];
	uint8_t q[BATCH][UDP_IN_MAX];
	uint8_t r[BATCH][SERVE_UDP_MAX];
};

struct server;

struct udp_worker {
	struct tstat cnt;
	struct server *s;
	const struct listener *l;
	int fd;
	pthread_t th;
	int started;
};

/* --allow: a source prefix */
struct cidr {
	int family;
	uint8_t addr[16];
	unsigned bits;
};

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

/* An answer for a TCP client, from the forwarder's thread to the TCP thread. */
struct tcp_done {
	struct tcp_done *next;
	uint64_t conn;
	int64_t t0_us;
	struct hist *lat;        /* where its latency goes once sent */
	size_t len;
	uint8_t msg[];           /* with its 2-byte length */
};

struct server {
	dnsnap_cache_t *cache;
	const char *path;
	uint32_t fixed_now;      /* --now, or 0: the clock */
	int json;                /* --json: counters as JSON lines on stdout */
	atomic_int stop;         /* the TCP thread and the workers end */
	atomic_int draining;     /* UDP sockets connected away: workers end when empty */
	struct listener ls[MAX_LISTEN];
	int nls;
	int nthreads;            /* UDP workers per listener */
	struct udp_worker *workers;
	int nworkers;
	int tcp_stop_fd;         /* an eventfd: written to stop the TCP thread */
	int tcp_done_fd;         /* an eventfd: answers wait in tcp_done */
	pthread_mutex_t tcp_mu;
	struct tcp_done *tcp_done, **tcp_done_tail;
	atomic_int tcp_draining; /* listeners closed: serve the connections to the end */
	struct tstat tcp_cnt;
	/* --allow */
	struct cidr allow[MAX_ALLOW];
	int nallow;
	/* --upstream */
	dnsnap_fwd_t *fwd;
	struct tstat fwd_cnt;    /* written by on_done() (the forwarder's thread) */
	dnsnap_encoded_t *enc;    /* on_done()'s one encoding of each upstream answer */
	uint8_t *fwd_out;        /* on_done()'s reply buffer, 2 + TCP_MSG_MAX */
	/* --l2: misses ask the second level before the upstream */
	dnsnap_l2_t *l2;         /* NULL once stopping (under l2_lock) */
	dnsnap_l2_stats_t l2_last; /* its counters when it stopped (the exit's) */
	pthread_rwlock_t l2_lock;
	struct tstat l2_cnt;     /* written by on_l2() (the L2 thread) */
	uint8_t *l2_out;         /* on_l2()'s reply buffer, 2 + TCP_MSG_MAX */
	uint8_t *l2_val;         /* on_done()'s value for dnsnap_l2_put(), DNSNAP_L2_VALUE_MAX */
	uint32_t serve_stale;    /* --serve-stale seconds, 0: off */
	unsigned snapshot_every; /* seconds, 0: at exit only */
	uint64_t max_bytes;
	uint64_t snap_max_bytes; /* --snapshot-max-bytes, 0: --max-bytes */
	/* the mapped snapshot (the main thread swaps it; collect() reads it) */
	pthread_mutex_t snap_mu;
	dnsnap_snap_t *snap;
	struct stat snap_st;     /* of the file mapped, to notice another one at the path */
	uint64_t snap_writes, snap_write_errors, snap_last_at, snap_last_entries;
	uint64_t inserts_published;  /* the cache's inserts when the last publish began */
	double snap_last_seconds, snap_longest_pause_ms;
	uint64_t start_time;
	struct metrics_http *metrics;
};

static inline uint32_t server_now(const struct server *s)
{
	return s->fixed_now ? s->fixed_now : (uint32_t)time(NULL);
}

/* ---------------------------------------------------------------- TCP */

struct conn {
	int fd;
	uint64_t id;             /* for answers that come back from the forwarder */
	int allowed;             /* the peer is in --allow */
	unsigned waiting;        /* queries handed to the forwarder, not answered yet */
	int64_t last;            /* ms: accepted, or its last whole query */
	size_t in_len;
	int eof;                 /* the client shut its side: reply, then close */
	uint8_t *pend;           /* replies the socket did not take whole */
	size_t pend_len, pend_off;
	struct sockaddr_storage peer;
	uint8_t in[2 + TCP_MSG_MAX];
};

struct tcp {
	struct server *s;
	int ep;
	struct conn *conns[TCP_MAX_CONNS];
	int nconns;
	int ndenied;             /* of them, from outside --allow */
	uint64_t next_id;
	int listening;           /* 0 while accept() fails for lack of descriptors */
	uint8_t out[2 + TCP_MSG_MAX];
};


/* ----------------------------------------------------------- functions */

/* serve_net.c */
int cidr_parse(const char *arg, struct cidr *c);
int allowed(const struct server *s, const struct sockaddr_storage *sa);
void *udp_main(void *arg);
void *tcp_main(void *arg);

/* serve_fwd.c */
int forwarder_start(struct server *s, const dnsnap_fwd_opts_t *fo);
struct waiter *waiter_new(const uint8_t *msg, size_t len, const dnsnap_query_t *q, int64_t t0);
void forward(struct server *s, struct tstat *cnt, struct waiter *w, const dnsnap_query_t *q);
void forward_upstream(struct server *s, struct tstat *cnt, struct waiter *w,
		      const dnsnap_query_t *q);
void waiter_answer(struct server *s, struct tstat *cnt, struct hist *lat, struct waiter *w,
		   const uint8_t *reply, size_t len);
int answer_waiter(struct server *s, struct tstat *cnt, struct hist *lat, uint8_t *out,
		  struct waiter *w, const uint8_t *entry, size_t entry_len, uint32_t now);
void on_done(void *arg, enum dnsnap_fwd_result r, const uint8_t *reply, size_t rlen,
	     void *const *ws, size_t n);
void on_rejected(void *arg, void *waiter, int why);
void on_fwd_log(void *arg, enum dnsnap_fwd_event ev, int upstream, const char *msg);

/* serve_l2.c */
void on_l2(void *arg, void *waiter, dnsnap_l2_status_t status, const uint8_t *val, size_t len);
void on_l2_log(void *arg, const char *msg);
/* The client (its buffers, dnsnap_l2_new(), dnsnap_l2_start()) into s->l2.
 * @return 0 or EXIT_USAGE (reported) */
int l2_start(struct server *s, const dnsnap_l2_opts_t *o);
void l2_write(struct server *s, const uint8_t *key, size_t key_len, const uint8_t *val,
	      size_t len, uint64_t pxat_ms);
void l2_stop(struct server *s, unsigned flush_ms);

/* serve_snap.c */
void snap_warn(struct server *s, dnsnap_snap_t *snap, uint32_t now);
void snap_swap(struct server *s, dnsnap_snap_t *fresh, const struct stat *st);
void reload(struct server *s, const char *why);
int publish(struct server *s, const char *why);
void watch(struct server *s);

#endif
