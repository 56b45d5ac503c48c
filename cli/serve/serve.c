/*
 * cli/serve/: `dnsnap serve`, the reference embedding of libdnsnap: a DNS
 * server that answers from the cache and its snapshot and, with --upstream,
 * a caching forwarder whose cache survives restarts and deploys. The
 * inspection commands stay in cli/; the server's networking lives here:
 * serve.c (this file: sockets, threads, signals, snapshots), serve_reply.c
 * (one message -> its reply, no sockets), forward.c (the upstream side),
 * metrics.c (Prometheus text and JSON), log.c, notify.c (systemd).
 *
 * Threads:
 * - per listen address, N UDP workers, each with its own socket bound with
 *   SO_REUSEPORT to the address (the kernel spreads the clients over them).
 *   A worker takes up to BATCH datagrams with one recvmmsg(), answers them
 *   into its own buffers (allocated once: nothing is allocated per hit)
 *   and sends the replies with one sendmmsg(); a miss, with --upstream,
 *   becomes a waiter (the query and where to answer it) handed to the
 *   forwarder;
 * - one TCP thread: epoll over the listening sockets, the connections (at
 *   most TCP_MAX_CONNS; idle ones close after TCP_IDLE_MS) and an eventfd
 *   through which the forwarder hands back answers to TCP clients (queries
 *   on a connection may be answered out of order, RFC 7766);
 * - the forwarder's thread (forward.c): upstream queries; its done() hook
 *   (on_done() here) caches the upstream's answer and answers every waiter;
 * - the metrics' HTTP thread (libmicrohttpd), with --metrics;
 * - the main thread: signals through a signalfd (blocked in every thread,
 *   so no handler runs) and a one-second tick: SIGHUP reopens SNAP; SIGUSR1
 *   prints the counters; SIGUSR2 and every --snapshot-every seconds publish
 *   SNAP (the in-memory entries merged with the file's live ones); the tick
 *   also takes in a SNAP another process published (a deploy's old
 *   process, at its exit); SIGTERM and SIGINT stop (stop(), below).
 *
 * Stopping without losing a query (the deploy of README.md): the UDP
 * sockets are connect()ed to a sink address, which takes them out of the
 * kernel's SO_REUSEPORT choice (a connected socket only matches datagrams
 * from its peer) while the datagrams already queued on them stay to be
 * read; the workers answer those and end when their sockets are empty; the
 * TCP listeners are closed (after accepting what waits in their backlog)
 * while open connections are served to the end of their queries; the
 * upstream queries in flight are waited for; then the final snapshot is
 * published and the process exits 0. Another process bound to the same
 * address meanwhile gets every new query.
 *
 * Counters are per thread (one writer each, relaxed atomics), summed when
 * read.
 */
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
#define TCP_MSG_MAX 65535
#define DEFAULT_MAX_BYTES (512ull << 20)
#define DEFAULT_SNAPSHOT_EVERY 300
#define OLD_SNAPSHOT_S 86400   /* a snapshot older than this is warned about */
#define SAMPLE_ENTRIES 10000   /* entries looked at to tell "mostly expired" */

static const char *const CMD = "serve";

/* ------------------------------------------------------------- counters */

enum {
	C_UDP, C_TCP, C_HIT_MEM, C_HIT_MAP, C_MISS, C_STALE, C_UP_ANS, C_SERVFAIL_UP,
	C_REFUSED_ACL, C_TRUNC, C_CONNS, C_CONN_REFUSED, C_CONN_IDLE, C_FORMERR_IN,
	C_RC, /* RC_N of them */
	C_DROP = C_RC + RC_N, /* DROP_N of them */
	C_N = C_DROP + DROP_N
};

/* One thread's counters and latency histograms. */
struct tstat {
	_Alignas(64) _Atomic uint64_t v[C_N];
	struct hist lat_cache, lat_up;
};

/* One writer per struct tstat: a plain load and store, no locked add. */
static inline void bump(struct tstat *c, int i)
{
	atomic_store_explicit(&c->v[i], atomic_load_explicit(&c->v[i], memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* A reply about to be sent: its rcode (BADVERS from the outcome: its upper
 * bits are in the OPT) and TC. */
static void count_reply(struct tstat *c, int outcome, const uint8_t *reply, size_t len)
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

static void count_outcome(struct tstat *c, int outcome, const dnsnap_lookup_t *lk)
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

static int64_t mono_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

static int64_t mono_ms(void)
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
	size_t len;
	uint8_t msg[];
};

/* An answer for a TCP client, from the forwarder's thread to the TCP thread. */
struct tcp_done {
	struct tcp_done *next;
	uint64_t conn;
	int64_t t0_us;
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
	struct fwd *fwd;
	struct tstat fwd_cnt;    /* written by on_done() (the forwarder's thread) */
	dnsnap_encoded_t *enc, *enc2;
	uint8_t *fwd_out;        /* on_done()'s reply buffer, 2 + TCP_MSG_MAX */
	uint32_t serve_stale;    /* --serve-stale seconds, 0: off */
	unsigned snapshot_every; /* seconds, 0: at exit only */
	uint64_t max_bytes;
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

static uint32_t server_now(const struct server *s)
{
	return s->fixed_now ? s->fixed_now : (uint32_t)time(NULL);
}

/* ------------------------------------------------------------------ ACL */

static int cidr_parse(const char *arg, struct cidr *c)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(arg, '/');
	size_t hl = slash ? (size_t)(slash - arg) : strlen(arg);
	if (hl == 0 || hl >= sizeof host)
		return -1;
	memcpy(host, arg, hl);
	host[hl] = 0;
	memset(c, 0, sizeof *c);
	unsigned max;
	if (inet_pton(AF_INET, host, c->addr) == 1) {
		c->family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, host, c->addr) == 1) {
		c->family = AF_INET6;
		max = 128;
	} else {
		return -1;
	}
	c->bits = max;
	if (slash != NULL) {
		char *end;
		errno = 0;
		unsigned long b = strtoul(slash + 1, &end, 10);
		if (errno || end == slash + 1 || *end || b > max || slash[1] == '-' ||
		    slash[1] == '+')
			return -1;
		c->bits = (unsigned)b;
	}
	/* host bits set (10.0.0.1/8) are a typo as often as not: refuse them */
	for (unsigned i = c->bits; i < max; i++)
		if (c->addr[i / 8] & (0x80 >> (i % 8)))
			return -2;
	return 0;
}

static int cidr_match(const struct cidr *c, const uint8_t *a)
{
	unsigned full = c->bits / 8, rest = c->bits % 8;
	if (memcmp(c->addr, a, full) != 0)
		return 0;
	return rest == 0 || ((c->addr[full] ^ a[full]) & (0xff00 >> rest) & 0xff) == 0;
}

/* Whether a query from @p sa is answered (--allow). An IPv4-mapped IPv6
 * source is matched as the IPv4 address it is. */
static int allowed(const struct server *s, const struct sockaddr_storage *sa)
{
	const uint8_t *a;
	int family = sa->ss_family;
	if (family == AF_INET) {
		a = (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr;
	} else if (family == AF_INET6) {
		a = (const uint8_t *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
		if (IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)a)) {
			a += 12;
			family = AF_INET;
		}
	} else {
		return 0;
	}
	for (int i = 0; i < s->nallow; i++)
		if (s->allow[i].family == family && cidr_match(&s->allow[i], a))
			return 1;
	return 0;
}

/* For a wildcard socket: answer from the address the query was sent to
 * (IP_PKTINFO, IPV6_PKTINFO), else a multi-homed host may answer from
 * another one and the client drops the reply. Rewrites the received
 * control message in place. @return its length, or 0: none to send */
static size_t reply_pktinfo(struct msghdr *h)
{
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(h); cm != NULL; cm = CMSG_NXTHDR(h, cm)) {
		if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;
			memcpy(&pi, CMSG_DATA(cm), sizeof pi);
			pi.ipi_spec_dst = pi.ipi_addr;
			pi.ipi_ifindex = 0;
			memcpy(CMSG_DATA(cm), &pi, sizeof pi);
			return CMSG_SPACE(sizeof pi);
		}
		if (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_PKTINFO)
			return CMSG_SPACE(sizeof(struct in6_pktinfo));
	}
	return 0;
}

/* --------------------------------------------------------------- misses */

/* A miss for the forwarder: the waiter (a copy of the query) is handed
 * over. On FWD_FULL the query gets a stale answer if --serve-stale has one,
 * else it is dropped (counted): the client asks again. */
static void forward(struct server *s, struct tstat *cnt, struct waiter *w,
		    const dnsnap_query_t *q);

static struct waiter *waiter_new(const uint8_t *msg, size_t len, int64_t t0)
{
	struct waiter *w = malloc(sizeof *w + len);
	if (w == NULL)
		return NULL;
	memset(w, 0, sizeof *w);
	memcpy(w->msg, msg, len);
	w->len = len;
	w->t0_us = t0;
	return w;
}

/* ------------------------------------------------------------------ UDP */

static void *udp_main(void *arg)
{
	struct udp_worker *w = arg;
	struct server *s = w->s;
	struct udp_bufs *b = calloc(1, sizeof *b);
	if (b == NULL) {
		slog(LOG_ERR, "%s: out of memory for a UDP worker", w->l->text);
		return NULL;
	}
	for (int i = 0; i < BATCH; i++) {
		b->iov_in[i] = (struct iovec){ b->q[i], UDP_IN_MAX };
		b->in[i].msg_hdr.msg_iov = &b->iov_in[i];
		b->in[i].msg_hdr.msg_iovlen = 1;
	}
	int wildcard = w->l->wildcard, errors = 0;
	struct serve_in in = { .cache = s->cache, .forward = s->fwd != NULL };
	while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
		for (int i = 0; i < BATCH; i++) {
			struct msghdr *h = &b->in[i].msg_hdr;
			h->msg_name = &b->from[i];
			h->msg_namelen = sizeof b->from[i];
			h->msg_control = wildcard ? b->ctl[i].buf : NULL;
			h->msg_controllen = wildcard ? sizeof b->ctl[i].buf : 0;
			h->msg_flags = 0;
		}
		int n = recvmmsg(w->fd, b->in, BATCH, MSG_WAITFORONE, NULL);
		if (n <= 0) {
			if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) &&
			    atomic_load_explicit(&s->draining, memory_order_relaxed))
				break; /* connected away and empty: nothing more comes */
			if (n < 0 && errno != EAGAIN && errno != EINTR && errors++ == 0)
				slog(LOG_ERR, "%s: recvmmsg: %s", w->l->text, strerror(errno));
			continue;
		}
		int64_t t0 = mono_us();
		in.now = server_now(s);
		unsigned k = 0;
		for (int i = 0; i < n; i++) {
			struct msghdr *h = &b->in[i].msg_hdr;
			bump(&w->cnt, C_UDP);
			if (h->msg_flags & MSG_TRUNC) { /* over UDP_IN_MAX: not a query */
				bump(&w->cnt, C_DROP + DROP_MALFORMED);
				continue;
			}
			in.refuse = !allowed(s, &b->from[i]);
			size_t len;
			dnsnap_query_t q;
			dnsnap_lookup_t lk;
			int outcome = serve_handle(&in, b->q[i], b->in[i].msg_len, b->r[i],
						   SERVE_UDP_MAX, &len, &q, &lk);
			count_outcome(&w->cnt, outcome, &lk);
			if (outcome == SERVE_DROP)
				continue;
			if (outcome == SERVE_FORWARD) {
				struct waiter *wt = waiter_new(b->q[i], b->in[i].msg_len, t0);
				if (wt == NULL) {
					bump(&w->cnt, C_DROP + DROP_OVERLOAD);
					continue;
				}
				wt->fd = w->fd;
				memcpy(&wt->from, &b->from[i], h->msg_namelen);
				wt->from_len = h->msg_namelen;
				wt->ctl_len = wildcard ? reply_pktinfo(h) : 0;
				if (wt->ctl_len)
					memcpy(&wt->ctl, &b->ctl[i], wt->ctl_len);
				forward(s, &w->cnt, wt, &q);
				continue;
			}
			count_reply(&w->cnt, outcome, b->r[i], len);
			struct msghdr *o = &b->out[k].msg_hdr;
			b->iov_out[k] = (struct iovec){ b->r[i], len };
			o->msg_name = &b->from[i];
			o->msg_namelen = h->msg_namelen;
			o->msg_iov = &b->iov_out[k];
			o->msg_iovlen = 1;
			o->msg_controllen = wildcard ? reply_pktinfo(h) : 0;
			o->msg_control = o->msg_controllen ? b->ctl[i].buf : NULL;
			o->msg_flags = 0;
			k++;
		}
		for (unsigned sent = 0; sent < k;) {
			int m = sendmmsg(w->fd, b->out + sent, k - sent, 0);
			if (m < 0) {
				if (errno == EINTR)
					continue;
				bump(&w->cnt, C_DROP + DROP_SEND);
				sent++; /* that reply is lost (the client retries); go on */
			} else {
				sent += (unsigned)m;
			}
		}
		if (k > 0)
			hist_addn(&w->cnt.lat_cache, (uint64_t)(mono_us() - t0), k);
	}
	free(b);
	return NULL;
}

/* ------------------------------------------------------------------ TCP */

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
	uint64_t next_id;
	int listening;           /* 0 while accept() fails for lack of descriptors */
	uint8_t out[2 + TCP_MSG_MAX];
};

/* epoll data: the listeners' index, or a connection's slot + TAG_CONN */
#define TAG_STOP 0xffffu
#define TAG_DONE 0xfffeu
#define TAG_CONN 0x10000u

/* What to wait for on a connection: the socket taking what is pending,
 * else more queries unless the client shut its side. */
static uint32_t conn_events(const struct conn *c)
{
	return c->pend ? EPOLLOUT : c->eof ? 0 : EPOLLIN;
}

static void conn_close(struct tcp *t, int slot)
{
	struct conn *c = t->conns[slot];
	epoll_ctl(t->ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c->pend);
	free(c);
	t->conns[slot] = t->conns[--t->nconns];
	if (slot < t->nconns) {
		struct epoll_event ev = { .events = conn_events(t->conns[slot]),
					  .data.u32 = TAG_CONN | (uint32_t)slot };
		epoll_ctl(t->ep, EPOLL_CTL_MOD, t->conns[slot]->fd, &ev);
	}
}

static void conn_watch(struct tcp *t, int slot, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.u32 = TAG_CONN | (uint32_t)slot };
	epoll_ctl(t->ep, EPOLL_CTL_MOD, t->conns[slot]->fd, &ev);
}

/* Send @p len bytes (a 2-byte length and a reply) on the connection, or
 * keep what the socket does not take. @return 0, or -1: close it */
static int conn_send(struct tcp *t, int slot, const uint8_t *b, size_t len)
{
	struct conn *c = t->conns[slot];
	ssize_t n = 0;
	if (c->pend == NULL) {
		n = send(c->fd, b, len, MSG_NOSIGNAL);
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		if (n < 0)
			n = 0;
		if ((size_t)n == len)
			return 0;
	}
	/* keep the rest, behind what is kept already; read no more until it is out */
	size_t rest = len - (size_t)n, have = c->pend ? c->pend_len - c->pend_off : 0;
	uint8_t *p = malloc(have + rest);
	if (p == NULL)
		return -1;
	if (have)
		memcpy(p, c->pend + c->pend_off, have);
	memcpy(p + have, b + n, rest);
	free(c->pend);
	c->pend = p;
	c->pend_len = have + rest;
	c->pend_off = 0;
	conn_watch(t, slot, EPOLLOUT);
	return 0;
}

/* Answer the whole queries buffered on the connection, in order, while the
 * socket takes the replies; misses go to the forwarder. @return 0, or -1:
 * close it */
static int conn_serve(struct tcp *t, int slot)
{
	struct conn *c = t->conns[slot];
	struct server *s = t->s;
	struct serve_in in = { .cache = s->cache, .tcp = 1, .refuse = !c->allowed,
			       .forward = s->fwd != NULL };
	size_t off = 0;
	while (c->pend == NULL && c->in_len - off >= 2) {
		size_t mlen = ld16be(c->in + off);
		if (c->in_len - off - 2 < mlen)
			break;
		int64_t t0 = mono_us();
		size_t len;
		dnsnap_query_t q;
		dnsnap_lookup_t lk;
		in.now = server_now(s);
		const uint8_t *msg = c->in + off + 2;
		int outcome = serve_handle(&in, msg, mlen, t->out + 2, TCP_MSG_MAX, &len, &q, &lk);
		bump(&s->tcp_cnt, C_TCP);
		count_outcome(&s->tcp_cnt, outcome, &lk);
		off += 2 + mlen;
		c->last = mono_ms();
		if (outcome == SERVE_DROP)
			continue;
		if (outcome == SERVE_FORWARD) {
			struct waiter *w = waiter_new(msg, mlen, t0);
			if (w == NULL) {
				bump(&s->tcp_cnt, C_DROP + DROP_OVERLOAD);
				continue;
			}
			w->tcp = 1;
			w->conn = c->id;
			c->waiting++;
			forward(s, &s->tcp_cnt, w, &q);
			continue;
		}
		count_reply(&s->tcp_cnt, outcome, t->out + 2, len);
		st16be(t->out, (uint16_t)len);
		if (conn_send(t, slot, t->out, len + 2) != 0)
			return -1;
		hist_add(&s->tcp_cnt.lat_cache, (uint64_t)(mono_us() - t0));
	}
	if (off > 0) {
		memmove(c->in, c->in + off, c->in_len - off);
		c->in_len -= off;
	}
	return c->pend == NULL && c->eof && c->waiting == 0 ? -1 : 0;
}

static void conn_event(struct tcp *t, int slot, uint32_t events)
{
	struct conn *c = t->conns[slot];
	if (c->pend != NULL && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
		ssize_t n = send(c->fd, c->pend + c->pend_off, c->pend_len - c->pend_off,
				 MSG_NOSIGNAL);
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return conn_close(t, slot);
		if (n > 0)
			c->pend_off += (size_t)n;
		if (c->pend_off < c->pend_len)
			return;
		free(c->pend);
		c->pend = NULL;
		conn_watch(t, slot, conn_events(c));
		if (conn_serve(t, slot) != 0)
			return conn_close(t, slot);
		return;
	}
	if (events & (EPOLLERR | EPOLLHUP) && c->pend == NULL)
		return conn_close(t, slot); /* reset, or gone both ways: nobody to answer */
	if (c->pend != NULL || c->eof)
		return;
	ssize_t n = recv(c->fd, c->in + c->in_len, sizeof c->in - c->in_len, 0);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n < 0)
		return conn_close(t, slot);
	if (n == 0) {
		c->eof = 1;
		conn_watch(t, slot, 0); /* no more EPOLLIN: answers to come are sent */
	}
	c->in_len += (size_t)n;
	if (conn_serve(t, slot) != 0)
		conn_close(t, slot);
}

/* The forwarder's answers for TCP clients: to their connections, if still open. */
static void tcp_take_done(struct tcp *t)
{
	struct server *s = t->s;
	uint64_t v;
	if (read(s->tcp_done_fd, &v, sizeof v) < 0 && errno != EAGAIN)
		slog(LOG_ERR, "eventfd: %s", strerror(errno));
	pthread_mutex_lock(&s->tcp_mu);
	struct tcp_done *d = s->tcp_done;
	s->tcp_done = NULL;
	s->tcp_done_tail = &s->tcp_done;
	pthread_mutex_unlock(&s->tcp_mu);
	while (d != NULL) {
		struct tcp_done *next = d->next;
		for (int k = 0; k < t->nconns; k++) {
			struct conn *c = t->conns[k];
			if (c->id != d->conn)
				continue;
			c->waiting--;
			if (d->len == 0) /* nothing to send (dropped) */
				;
			else if (conn_send(t, k, d->msg, d->len) != 0) {
				conn_close(t, k);
				break;
			} else
				hist_add(&s->fwd_cnt.lat_up, (uint64_t)(mono_us() - d->t0_us));
			if (c->eof && c->waiting == 0 && c->pend == NULL)
				conn_close(t, k);
			break;
		}
		free(d);
		d = next;
	}
}

static void tcp_listen_all(struct tcp *t, int on)
{
	for (int i = 0; i < t->s->nls; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)i };
		if (t->s->ls[i].tcp_fd >= 0)
			epoll_ctl(t->ep, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, t->s->ls[i].tcp_fd,
				  &ev);
	}
	t->listening = on;
}

static void tcp_accept(struct tcp *t, int lfd)
{
	for (;;) {
		struct sockaddr_storage peer;
		socklen_t pl = sizeof peer;
		int fd = accept4(lfd, (struct sockaddr *)&peer, &pl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) { /* retried at the next sweep */
				slog(LOG_WARNING, "accept: %s; TCP paused for a second",
				     strerror(errno));
				tcp_listen_all(t, 0);
			}
			return;
		}
		if (t->nconns == TCP_MAX_CONNS) {
			close(fd); /* at once: better than a client waiting in the backlog */
			bump(&t->s->tcp_cnt, C_CONN_REFUSED);
			continue;
		}
		struct conn *c = malloc(sizeof *c);
		if (c == NULL) {
			close(fd);
			bump(&t->s->tcp_cnt, C_CONN_REFUSED);
			continue;
		}
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		c->fd = fd;
		c->id = ++t->next_id;
		c->peer = peer;
		c->allowed = allowed(t->s, &peer);
		c->waiting = 0;
		c->last = mono_ms();
		c->in_len = 0;
		c->eof = 0;
		c->pend = NULL;
		c->pend_len = c->pend_off = 0;
		int slot = t->nconns++;
		t->conns[slot] = c;
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = TAG_CONN | (uint32_t)slot };
		if (epoll_ctl(t->ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
			conn_close(t, slot);
			continue;
		}
		bump(&t->s->tcp_cnt, C_CONNS);
	}
}

/* Stop taking connections: accept what waits in the backlogs (it is
 * served), then close the listeners. */
static void tcp_close_listeners(struct tcp *t)
{
	struct server *s = t->s;
	for (int i = 0; i < s->nls; i++) {
		if (s->ls[i].tcp_fd < 0)
			continue;
		if (t->listening)
			tcp_accept(t, s->ls[i].tcp_fd);
		epoll_ctl(t->ep, EPOLL_CTL_DEL, s->ls[i].tcp_fd, NULL);
		close(s->ls[i].tcp_fd);
		s->ls[i].tcp_fd = -1;
	}
	t->listening = 0;
}

static void *tcp_main(void *arg)
{
	struct tcp *t = arg;
	struct server *s = t->s;
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = TAG_STOP };
	epoll_ctl(t->ep, EPOLL_CTL_ADD, s->tcp_stop_fd, &ev);
	ev.data.u32 = TAG_DONE;
	epoll_ctl(t->ep, EPOLL_CTL_ADD, s->tcp_done_fd, &ev);
	tcp_listen_all(t, 1);
	int64_t swept = mono_ms();
	int draining = 0;
	for (;;) {
		struct epoll_event evs[64];
		int n = epoll_wait(t->ep, evs, 64, draining ? 100 : 1000);
		for (int i = 0; i < n; i++) {
			uint32_t d = evs[i].data.u32;
			if (d == TAG_STOP) {
				uint64_t v;
				if (read(s->tcp_stop_fd, &v, sizeof v) < 0 && errno != EAGAIN)
					slog(LOG_ERR, "eventfd: %s", strerror(errno));
				if (atomic_load(&s->stop))
					goto out;
				continue;
			}
			if (d == TAG_DONE) {
				tcp_take_done(t);
			} else if (d & TAG_CONN) {
				int slot = (int)(d & ~TAG_CONN);
				/* a slot closed earlier in this round may hold another
				 * connection now; a spurious event on it is harmless */
				if (slot < t->nconns)
					conn_event(t, slot, evs[i].events);
			} else if (!draining) {
				tcp_accept(t, s->ls[d].tcp_fd);
			}
		}
		if (!draining && atomic_load(&s->tcp_draining)) {
			draining = 1;
			tcp_close_listeners(t);
		}
		int64_t now = mono_ms();
		if (now - swept >= (draining ? 100 : 1000)) {
			swept = now;
			for (int k = t->nconns - 1; k >= 0; k--) {
				struct conn *c = t->conns[k];
				/* draining: a connection with nothing pending ends now */
				if (now - c->last > TCP_IDLE_MS ||
				    (draining && c->waiting == 0 && c->pend == NULL &&
				     c->in_len == 0)) {
					if (!draining)
						bump(&s->tcp_cnt, C_CONN_IDLE);
					conn_close(t, k);
				}
			}
			if (!t->listening && !draining)
				tcp_listen_all(t, 1);
		}
	}
out:
	while (t->nconns > 0)
		conn_close(t, t->nconns - 1);
	return NULL;
}

/* ------------------------------------------------------------ forwarder */

/* Send @p len bytes of @p reply to the waiter: over UDP from the socket its
 * query came in on (the forwarder's thread may: sendmsg() on one socket from
 * several threads is safe), over TCP through the TCP thread. Frees @p w. */
static void waiter_answer(struct server *s, struct waiter *w, const uint8_t *reply, size_t len)
{
	struct tstat *cnt = &s->fwd_cnt;
	if (!w->tcp) {
		if (len > 0) {
			struct iovec iov = { (void *)reply, len };
			struct msghdr h = {
				.msg_name = &w->from, .msg_namelen = w->from_len,
				.msg_iov = &iov, .msg_iovlen = 1,
				.msg_control = w->ctl_len ? w->ctl.buf : NULL,
				.msg_controllen = w->ctl_len,
			};
			if (sendmsg(w->fd, &h, MSG_DONTWAIT) < 0)
				bump(cnt, C_DROP + DROP_SEND);
			else
				hist_add(&cnt->lat_up, (uint64_t)(mono_us() - w->t0_us));
		}
		free(w);
		return;
	}
	/* TCP: the TCP thread owns the connection (len 0 tells it one fewer waits) */
	struct tcp_done *d = malloc(sizeof *d + 2 + len);
	if (d != NULL) {
		d->next = NULL;
		d->conn = w->conn;
		d->t0_us = w->t0_us;
		d->len = len ? 2 + len : 0;
		st16be(d->msg, (uint16_t)len);
		memcpy(d->msg + 2, reply, len);
		pthread_mutex_lock(&s->tcp_mu);
		*s->tcp_done_tail = d;
		s->tcp_done_tail = &d->next;
		pthread_mutex_unlock(&s->tcp_mu);
		uint64_t one = 1;
		if (write(s->tcp_done_fd, &one, sizeof one) < 0)
			bump(cnt, C_DROP + DROP_SEND);
	} else {
		bump(cnt, C_DROP + DROP_SEND);
	}
	free(w);
}

/* The cap of a waiter's reply: over UDP the worker's, over TCP a whole message. */
static size_t waiter_cap(const struct waiter *w)
{
	return w->tcp ? TCP_MSG_MAX : SERVE_UDP_MAX;
}

/* Every upstream failed (or the forwarder is full): the stale entry if
 * --serve-stale allows one, else SERVFAIL with EDE 22 (timed out) or 23. */
static void answer_failed(struct server *s, struct waiter *w, const dnsnap_query_t *q,
			  enum fwd_result r, uint32_t now)
{
	struct tstat *cnt = &s->fwd_cnt;
	uint8_t *out = s->fwd_out;
	size_t len = 0;
	if (s->serve_stale > 0) {
		dnsnap_lookup_t lk = { .now = now, .stale_window = s->serve_stale };
		lk.max_size = (uint16_t)serve_limit(q, w->tcp, waiter_cap(w));
		if (dnsnap_cache_lookup(s->cache, q, &lk, out, waiter_cap(w), &len) == DNSNAP_OK) {
			bump(cnt, lk.stale ? C_STALE : lk.tier == DNSNAP_TIER_MEMORY ? C_HIT_MEM
										     : C_HIT_MAP);
			count_reply(cnt, SERVE_HIT, out, len);
			waiter_answer(s, w, out, len);
			return;
		}
	}
	int timeout = r == FWD_TIMEOUT;
	len = serve_error(w->msg, w->len, 2 /* SERVFAIL */,
			  timeout ? SERVE_EDE_NO_REACHABLE : SERVE_EDE_NETWORK,
			  timeout ? "no upstream answered in time"
			  : r == FWD_STOPPED ? "the server is stopping" : "every upstream failed",
			  out);
	bump(cnt, C_SERVFAIL_UP);
	count_reply(cnt, SERVE_SERVFAIL, out, len);
	waiter_answer(s, w, out, len);
}

/*
 * done() of the forwarder: an upstream query ended. An answer (NOERROR or
 * NXDOMAIN, accepted by the forwarder's checks) is cached when it can be
 * (TTL above 0) and every waiter is answered from the cache as a hit would
 * be (its own ID, question spelling, DO, CD, size); one the cache did not
 * take (TTL 0, over --max-bytes) is answered from its encoding all the same.
 */
static void on_done(void *arg, enum fwd_result r, const uint8_t *reply, size_t rlen,
		    void *const *ws, size_t n)
{
	struct server *s = arg;
	struct tstat *cnt = &s->fwd_cnt;
	uint32_t now = server_now(s);
	int have_entry = 0;
	if (r == FWD_ANSWER) {
		dnsnap_diag_t d;
		if (dnsnap_msg_encode(reply, rlen, now, NULL, 0, s->enc, &d) == DNSNAP_OK) {
			have_entry = 1;
			if (s->enc->ttl > 0 &&
			    dnsnap_cache_insert(s->cache, reply, rlen, now, NULL, 0, s->enc2, &d) !=
				    DNSNAP_OK)
				slog(LOG_DEBUG, "an upstream answer not cached: %s", d.msg);
		} else {
			slog(LOG_INFO, "an upstream answer the cache cannot read: %s", d.msg);
			r = FWD_FAILED;
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct waiter *w = ws[i];
		dnsnap_query_t q;
		dnsnap_diag_t d;
		if (dnsnap_query_parse(w->msg, w->len, NULL, 0, &q, &d) != DNSNAP_OK) {
			free(w); /* cannot be: it parsed before it was handed over */
			continue;
		}
		if (r != FWD_ANSWER) {
			answer_failed(s, w, &q, r, now);
			continue;
		}
		size_t cap = waiter_cap(w), len = 0;
		dnsnap_lookup_t lk = { .now = now };
		lk.max_size = (uint16_t)serve_limit(&q, w->tcp, cap);
		int err = dnsnap_cache_lookup(s->cache, &q, &lk, s->fwd_out, cap, &len);
		if (err != DNSNAP_OK && have_entry) {
			dnsnap_answer_opts_t ao = {
				.now = now, .max_size = lk.max_size, .our_udp_size = SERVE_UDP_MAX,
			};
			dnsnap_cache_opts_t co;
			dnsnap_cache_opts_default(&co);
			ao.min_ttl = co.min_ttl;
			ao.max_ttl = co.max_ttl;
			err = dnsnap_answer_build(&q, s->enc->entry, s->enc->entry_len, &ao,
						  s->fwd_out, cap, &len);
		}
		if (err != DNSNAP_OK) {
			answer_failed(s, w, &q, FWD_FAILED, now);
			continue;
		}
		bump(cnt, C_UP_ANS);
		count_reply(cnt, SERVE_HIT, s->fwd_out, len);
		waiter_answer(s, w, s->fwd_out, len);
	}
}

/* rejected() of the forwarder: a waiter it could not take (FWD_KEY_FULL):
 * a stale answer if there is one, else dropped. */
static void drop_or_stale(struct server *s, struct tstat *cnt, struct waiter *w,
			  const dnsnap_query_t *q, int why)
{
	if (s->serve_stale > 0) {
		uint8_t out[SERVE_UDP_MAX];
		size_t len;
		dnsnap_lookup_t lk = { .now = server_now(s), .stale_window = s->serve_stale };
		lk.max_size = (uint16_t)serve_limit(q, 0, sizeof out);
		if (!w->tcp &&
		    dnsnap_cache_lookup(s->cache, q, &lk, out, sizeof out, &len) == DNSNAP_OK) {
			bump(cnt, C_STALE);
			count_reply(cnt, SERVE_HIT, out, len);
			struct iovec iov = { out, len };
			struct msghdr h = {
				.msg_name = &w->from, .msg_namelen = w->from_len,
				.msg_iov = &iov, .msg_iovlen = 1,
				.msg_control = w->ctl_len ? w->ctl.buf : NULL,
				.msg_controllen = w->ctl_len,
			};
			if (sendmsg(w->fd, &h, MSG_DONTWAIT) < 0)
				bump(cnt, C_DROP + DROP_SEND);
			free(w);
			return;
		}
	}
	bump(cnt, C_DROP + (why == FWD_KEY_FULL ? DROP_WAITERS : DROP_OVERLOAD));
	if (w->tcp)
		waiter_answer(s, w, NULL, 0); /* the connection stops waiting for it */
	else
		free(w);
}

static void on_rejected(void *arg, void *waiter, int why)
{
	struct server *s = arg;
	struct waiter *w = waiter;
	dnsnap_query_t q;
	dnsnap_diag_t d;
	if (dnsnap_query_parse(w->msg, w->len, NULL, 0, &q, &d) != DNSNAP_OK) {
		free(w);
		return;
	}
	drop_or_stale(s, &s->fwd_cnt, w, &q, why);
}

static void forward(struct server *s, struct tstat *cnt, struct waiter *w,
		    const dnsnap_query_t *q)
{
	if (fwd_submit(s->fwd, q, w) != FWD_QUEUED)
		drop_or_stale(s, cnt, w, q, FWD_FULL);
}

/* ------------------------------------------------------------ snapshots */

struct sample {
	uint32_t now;
	uint64_t seen, expired;
};

static int sample_fn(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		     size_t entry_len)
{
	(void)key, (void)key_len, (void)entry_len;
	struct sample *sm = arg;
	sm->seen++;
	if ((int32_t)(ld32le(entry + 4) - sm->now) <= 0)
		sm->expired++;
	return sm->seen >= SAMPLE_ENTRIES;
}

/* At start and on every reload: a warning when the snapshot is old, or
 * when most of the entries looked at (the first SAMPLE_ENTRIES in key order)
 * are expired: the restart will not be as warm as it looks. */
static void snap_warn(struct server *s, dnsnap_snap_t *snap, uint32_t now)
{
	dnsnap_snap_info_t in;
	dnsnap_snap_info(snap, &in);
	if (in.entry_count == 0)
		return;
	char iso[21];
	time_iso((uint32_t)in.created_at, iso);
	if (now > in.created_at && now - in.created_at > OLD_SNAPSHOT_S)
		slog(LOG_WARNING, "%s: the snapshot is old: written %s, %llu hours ago", s->path,
		     iso, (unsigned long long)(now - in.created_at) / 3600);
	struct sample sm = { .now = now };
	dnsnap_snap_foreach(snap, sample_fn, &sm);
	if (sm.seen > 0 && sm.expired * 2 > sm.seen)
		slog(LOG_WARNING, "%s: most entries are expired (%llu of the %llu looked at, "
		     "written %s): this start is mostly cold", s->path,
		     (unsigned long long)sm.expired, (unsigned long long)sm.seen, iso);
}

/* Put @p fresh (opened from s->path, whose stat is @p st) under the cache and
 * close the one before, which waits for the lookups still in it. */
static void snap_swap(struct server *s, dnsnap_snap_t *fresh, const struct stat *st)
{
	dnsnap_snap_t *old = NULL;
	pthread_mutex_lock(&s->snap_mu);
	dnsnap_cache_attach(s->cache, fresh, &old);
	s->snap = fresh;
	if (st != NULL)
		s->snap_st = *st;
	else
		memset(&s->snap_st, 0, sizeof s->snap_st);
	pthread_mutex_unlock(&s->snap_mu);
	dnsnap_snap_close(old);
}

/* Whether @p a and @p b are the same file, as it was */
static int file_unchanged(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Open the file now at s->path and swap it in; a file that cannot be opened
 * changes nothing. @p why: "reloaded", "taken in" ... */
static void reload(struct server *s, const char *why)
{
	struct stat st;
	if (stat(s->path, &st) != 0) {
		slog(LOG_WARNING, "%s: reload: %s; still serving what was there", s->path,
		     strerror(errno));
		return;
	}
	notify_systemd("RELOADING=1");
	dnsnap_snap_t *fresh;
	dnsnap_diag_t d;
	int err = dnsnap_snap_open(s->path, &fresh, &d);
	if (err != DNSNAP_OK) {
		if (s->snap != NULL) {
			dnsnap_snap_info_t in;
			dnsnap_snap_info(s->snap, &in);
			slog(LOG_ERR, "reload failed: %s; still serving the previous snapshot "
			     "(%llu %s)", d.msg, (unsigned long long)in.entry_count,
			     plural(in.entry_count, "entry", "entries"));
		} else {
			slog(LOG_ERR, "reload failed: %s; still serving from memory only", d.msg);
		}
		s->snap_st = st; /* not again until it changes */
		notify_systemd("READY=1");
		return;
	}
	snap_swap(s, fresh, &st);
	dnsnap_snap_info_t in;
	dnsnap_snap_info(fresh, &in);
	slog(LOG_INFO, "%s: %s: %llu %s, digest %016llx", s->path, why,
	     (unsigned long long)in.entry_count, plural(in.entry_count, "entry", "entries"),
	     (unsigned long long)in.digest);
	snap_warn(s, fresh, server_now(s));
	notify_systemd("READY=1");
}

/*
 * Publish SNAP: under the writers' lock, the in-memory entries merged with
 * the live ones of the file now at the path (not the one mapped: another
 * process, the old one of a deploy, may have published since), written
 * beside it, synced, renamed over it; then the new file is mapped. Lookups
 * and inserts go on meanwhile (each cache shard is copied under its read
 * lock; dnsnap_snap_merge()). A file at the path that is not a snapshot, or
 * of a newer format, is never replaced. Nothing inserted since the last
 * publish: nothing to do. @return 0 or -1 (logged)
 */
static uint64_t cache_inserts(struct server *s)
{
	dnsnap_cache_stats_t cs;
	dnsnap_cache_stats(s->cache, &cs);
	return cs.inserts;
}

static int publish(struct server *s, const char *why)
{
	int64_t t0 = mono_us();
	/* nothing inserted since the last publish: the file at the path holds all
	 * the cache has (or a later merge of it another process published) */
	uint64_t inserts = cache_inserts(s);
	if (inserts == s->inserts_published) {
		slog(LOG_DEBUG, "%s: not published (%s): nothing new since the last time", s->path,
		     why);
		return 0;
	}
	dnsnap_diag_t d;
	dnsnap_snap_lock_t *lk;
	if (dnsnap_snap_lock(s->path, 60, &lk, &d) != DNSNAP_OK) {
		slog(LOG_ERR, "snapshot (%s) not written: %s", why, d.msg);
		s->snap_write_errors++;
		return -1;
	}
	dnsnap_snap_t *base = NULL;
	struct stat st;
	if (stat(s->path, &st) == 0) {
		int err = dnsnap_snap_open(s->path, &base, &d);
		if (err == DNSNAP_EMAGIC || err == DNSNAP_EVERSION) {
			slog(LOG_ERR, "snapshot (%s) not written: %s; it is left as it is", why,
			     d.msg);
			dnsnap_snap_unlock(lk);
			s->snap_write_errors++;
			return -1;
		}
		if (err != DNSNAP_OK)
			slog(LOG_WARNING, "%s; replacing it with the cache's entries", d.msg);
	}
	dnsnap_snap_write_stats_t ws;
	int err = dnsnap_snap_merge(s->cache, base, s->path, server_now(s), &ws, &d);
	dnsnap_snap_close(base);
	if (err != DNSNAP_OK) {
		dnsnap_snap_unlock(lk);
		slog(LOG_ERR, "snapshot (%s) not written: %s", why, d.msg);
		s->snap_write_errors++;
		return -1;
	}
	/* map what was just published (before another writer can replace it) */
	dnsnap_snap_t *fresh = NULL;
	if (stat(s->path, &st) == 0 && dnsnap_snap_open(s->path, &fresh, &d) == DNSNAP_OK)
		snap_swap(s, fresh, &st);
	dnsnap_snap_unlock(lk);
	double secs = (double)(mono_us() - t0) / 1e6;
	s->inserts_published = inserts;
	pthread_mutex_lock(&s->snap_mu);
	s->snap_writes++;
	s->snap_last_at = (uint64_t)time(NULL);
	s->snap_last_seconds = secs;
	s->snap_last_entries = ws.entries;
	s->snap_longest_pause_ms = ws.longest_pause_ms;
	pthread_mutex_unlock(&s->snap_mu);
	slog(LOG_INFO, "%s: published (%s): %llu %s (%llu from memory, %llu kept from the "
	     "file), %.3f s, longest insert pause %.3f ms", s->path, why,
	     (unsigned long long)ws.entries, plural(ws.entries, "entry", "entries"),
	     (unsigned long long)(ws.entries - ws.from_base), (unsigned long long)ws.from_base,
	     secs,
	     ws.longest_pause_ms);
	return 0;
}

/* The tick: SNAP replaced by another process (not by us: publish() maps
 * what it wrote) is taken in. */
static void watch(struct server *s)
{
	struct stat st;
	if (stat(s->path, &st) != 0)
		return;
	if (!file_unchanged(&st, &s->snap_st))
		reload(s, "taken in (replaced by another process)");
}

/* ------------------------------------------------------------- counters */

/* Fill @p st from every thread's counters, the forwarder, the cache and the
 * snapshot (any thread: the HTTP thread calls it). */
static void collect(void *arg, struct serve_stats *st)
{
	struct server *s = arg;
	memset(st, 0, sizeof *st);
	uint64_t t[C_N] = { 0 };
	for (int w = 0; w < s->nworkers + 2; w++) {
		struct tstat *c = w < s->nworkers ? &s->workers[w].cnt
				  : w == s->nworkers ? &s->tcp_cnt : &s->fwd_cnt;
		for (int i = 0; i < C_N; i++)
			t[i] += atomic_load_explicit(&c->v[i], memory_order_relaxed);
		hist_sum(&st->answer_latency_cache, &c->lat_cache);
		hist_sum(&st->answer_latency_upstream, &c->lat_up);
	}
	st->queries_udp = t[C_UDP];
	st->queries_tcp = t[C_TCP];
	st->hits_memory = t[C_HIT_MEM];
	st->hits_map = t[C_HIT_MAP];
	st->misses = t[C_MISS];
	st->stale = t[C_STALE];
	st->upstream_answers = t[C_UP_ANS];
	st->servfail_upstream = t[C_SERVFAIL_UP];
	st->refused_acl = t[C_REFUSED_ACL];
	st->truncated = t[C_TRUNC];
	for (int i = 0; i < RC_N; i++)
		st->rcode[i] = t[C_RC + i];
	for (int i = 0; i < DROP_N; i++)
		st->drops[i] = t[C_DROP + i];
	st->tcp_connections = t[C_CONNS];
	st->tcp_refused = t[C_CONN_REFUSED];
	st->tcp_idle_closed = t[C_CONN_IDLE];
	if (s->fwd != NULL)
		fwd_stats(s->fwd, st);
	dnsnap_cache_stats_t cs;
	dnsnap_cache_stats(s->cache, &cs);
	st->cache_entries = cs.entries;
	st->cache_bytes = cs.bytes;
	st->cache_max_bytes = s->max_bytes;
	st->cache_inserts = cs.inserts;
	st->cache_evictions = cs.evictions;
	pthread_mutex_lock(&s->snap_mu);
	if (s->snap != NULL) {
		dnsnap_snap_info_t in;
		dnsnap_snap_info(s->snap, &in);
		st->map_open = 1;
		st->map_entries = in.entry_count;
		st->map_created_at = in.created_at;
		st->map_damaged = dnsnap_snap_bad_entries(s->snap);
	}
	st->snapshot_writes = s->snap_writes;
	st->snapshot_write_errors = s->snap_write_errors;
	st->snapshot_last_at = s->snap_last_at;
	st->snapshot_last_seconds = s->snap_last_seconds;
	st->snapshot_last_entries = s->snap_last_entries;
	st->snapshot_longest_pause_ms = s->snap_longest_pause_ms;
	pthread_mutex_unlock(&s->snap_mu);
	st->now = (uint64_t)time(NULL);
	st->start_time = s->start_time;
}

/* SIGUSR1 and exit: a line on the log, or with --json a JSON object on
 * standard output, for a program to read while the log stays for people */
static void print_counters(struct server *s, const char *when)
{
	struct serve_stats *st = calloc(1, sizeof *st);
	if (st == NULL)
		return;
	collect(s, st);
	if (s->json) {
		char at[21];
		time_iso((uint32_t)time(NULL), at);
		jw_t j;
		jw_init(&j, stdout);
		jw_obj(&j);
		jw_kstr(&j, "event", when[0] ? "exit" : "counters");
		jw_kstr(&j, "time", at);
		jw_kstr(&j, "file", s->path);
		metrics_json(st, &j);
		pthread_mutex_lock(&s->snap_mu);
		jw_kbool(&j, "changed_in_place", s->snap != NULL && dnsnap_snap_changed(s->snap));
		pthread_mutex_unlock(&s->snap_mu);
		jw_end(&j);
		jw_nl(&j);
		fflush(stdout);
		free(st);
		return;
	}
	uint64_t drops = 0;
	for (int i = 0; i < DROP_N; i++)
		drops += st->drops[i];
	slog(LOG_INFO, "counters%s: queries %llu (udp %llu, tcp %llu), hits %llu (memory %llu, "
	     "map %llu, stale %llu), misses %llu, upstream answers %llu, upstream failures "
	     "%llu, refused %llu, formerr %llu, notimp %llu, badvers %llu, servfail %llu, "
	     "dropped %llu, truncated %llu; tcp connections %llu (refused %llu, closed idle "
	     "%llu); cache %llu %s, %llu bytes; snapshot: %llu %s, damaged entries %llu",
	     when, (unsigned long long)(st->queries_udp + st->queries_tcp),
	     (unsigned long long)st->queries_udp, (unsigned long long)st->queries_tcp,
	     (unsigned long long)(st->hits_memory + st->hits_map + st->stale),
	     (unsigned long long)st->hits_memory, (unsigned long long)st->hits_map,
	     (unsigned long long)st->stale, (unsigned long long)st->misses,
	     (unsigned long long)st->upstream_answers, (unsigned long long)st->servfail_upstream,
	     (unsigned long long)st->refused_acl, (unsigned long long)st->rcode[RC_FORMERR],
	     (unsigned long long)st->rcode[RC_NOTIMP], (unsigned long long)st->rcode[RC_BADVERS],
	     (unsigned long long)st->rcode[RC_SERVFAIL], (unsigned long long)drops,
	     (unsigned long long)st->truncated, (unsigned long long)st->tcp_connections,
	     (unsigned long long)st->tcp_refused, (unsigned long long)st->tcp_idle_closed,
	     (unsigned long long)st->cache_entries, plural(st->cache_entries, "entry", "entries"),
	     (unsigned long long)st->cache_bytes, (unsigned long long)st->map_entries,
	     plural(st->map_entries, "entry", "entries"), (unsigned long long)st->map_damaged);
	free(st);
}

/* ADDR:PORT, [ADDR6]:PORT, or an address alone (port 53). Port 0: the
 * kernel picks one (then the same for UDP and TCP). @return 0 or -1 */
static int parse_addr(const char *arg, struct listener *l)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *port = NULL;
	size_t hl;
	if (arg[0] == '[') {
		const char *e = strchr(arg, ']');
		if (e == NULL || (e[1] != 0 && e[1] != ':'))
			return -1;
		hl = (size_t)(e - arg - 1);
		if (hl >= sizeof host)
			return -1;
		memcpy(host, arg + 1, hl);
		port = e[1] == ':' ? e + 2 : NULL;
	} else {
		const char *c = strrchr(arg, ':');
		if (c != NULL && strchr(arg, ':') != c) /* two colons: a bare IPv6 address */
			c = NULL;
		hl = c ? (size_t)(c - arg) : strlen(arg);
		if (hl >= sizeof host)
			return -1;
		memcpy(host, arg, hl);
		port = c ? c + 1 : NULL;
	}
	host[hl] = 0;
	unsigned long p = DEFAULT_PORT;
	if (port != NULL) {
		char *end;
		errno = 0;
		p = strtoul(port, &end, 10);
		if (errno || end == port || *end || p > 65535 || port[0] == '-' || port[0] == '+')
			return -1;
	}
	memset(l, 0, sizeof *l);
	struct sockaddr_in *a4 = (struct sockaddr_in *)&l->addr;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&l->addr;
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)p);
		l->addr_len = sizeof *a4;
		l->wildcard = a4->sin_addr.s_addr == htonl(INADDR_ANY);
	} else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)p);
		l->addr_len = sizeof *a6;
		l->wildcard = IN6_IS_ADDR_UNSPECIFIED(&a6->sin6_addr);
	} else {
		return -1;
	}
	l->tcp_fd = -1;
	return 0;
}

static uint16_t listener_port(const struct listener *l)
{
	const struct sockaddr_in *a4 = (const struct sockaddr_in *)&l->addr;
	const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)&l->addr;
	return ntohs(l->addr.ss_family == AF_INET ? a4->sin_port : a6->sin6_port);
}

static void listener_text(struct listener *l)
{
	char h[INET6_ADDRSTRLEN];
	const struct sockaddr_in *a4 = (const struct sockaddr_in *)&l->addr;
	const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)&l->addr;
	if (l->addr.ss_family == AF_INET) {
		inet_ntop(AF_INET, &a4->sin_addr, h, sizeof h);
		snprintf(l->text, sizeof l->text, "%s:%u", h, listener_port(l));
	} else {
		inet_ntop(AF_INET6, &a6->sin6_addr, h, sizeof h);
		snprintf(l->text, sizeof l->text, "[%s]:%u", h, listener_port(l));
	}
}

/* A socket of @p type bound to l->addr. @return the descriptor, or -errno */
static int bind_socket(const struct listener *l, int type)
{
	int fd = socket(l->addr.ss_family, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	if (l->addr.ss_family == AF_INET6) /* [::] and 0.0.0.0 can both be listened on */
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	/* SO_REUSEPORT on both: a second process (the next one of a deploy) binds
	 * the same address while this one runs */
	setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
	if (type == SOCK_STREAM) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	} else {
		if (l->wildcard && l->addr.ss_family == AF_INET)
			setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof one);
		if (l->wildcard && l->addr.ss_family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof one);
		struct timeval tv = { 0, RECV_TIMEOUT_MS * 1000 };
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
		int rcvbuf = 4 << 20; /* bursts; the kernel caps it at rmem_max */
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
	}
	if (bind(fd, (const struct sockaddr *)&l->addr, l->addr_len) != 0 ||
	    (type == SOCK_STREAM && listen(fd, 1024) != 0)) {
		int e = -errno;
		close(fd);
		return e;
	}
	if (type == SOCK_STREAM)
		fcntl(fd, F_SETFL, O_NONBLOCK);
	return fd;
}

/*
 * The TCP socket of each listener, then its UDP workers' sockets. With port
 * 0 the TCP socket gets the kernel's choice and the UDP sockets that same
 * port; should UDP have it taken, try another (a few times).
 * @return 0 or EXIT_USAGE (reported)
 */
static int open_sockets(struct server *s)
{
	for (int i = 0; i < s->nls; i++) {
		struct listener *l = &s->ls[i];
		int any_port = listener_port(l) == 0;
		for (int attempt = 0;; attempt++) {
			int fd = bind_socket(l, SOCK_STREAM);
			if (fd < 0) {
				listener_text(l);
				return fail(CMD, NULL, "%s: TCP: %s", l->text, strerror(-fd));
			}
			if (any_port) {
				socklen_t al = l->addr_len;
				getsockname(fd, (struct sockaddr *)&l->addr, &al);
			}
			listener_text(l);
			l->tcp_fd = fd;
			int err = 0, k;
			for (k = 0; k < s->nthreads; k++) {
				struct udp_worker *w = &s->workers[i * s->nthreads + k];
				w->fd = bind_socket(l, SOCK_DGRAM);
				if (w->fd < 0) {
					err = -w->fd;
					break;
				}
			}
			if (err == 0)
				break;
			while (k-- > 0) {
				close(s->workers[i * s->nthreads + k].fd);
				s->workers[i * s->nthreads + k].fd = -1;
			}
			if (!any_port || err != EADDRINUSE || attempt == 8)
				return fail(CMD, NULL, "%s: UDP: %s", l->text, strerror(err));
			close(fd);
			l->tcp_fd = -1;
			struct sockaddr_in *a4 = (struct sockaddr_in *)&l->addr;
			struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&l->addr;
			if (l->addr.ss_family == AF_INET)
				a4->sin_port = 0;
			else
				a6->sin6_port = 0;
		}
	}
	return 0;
}

/* ------------------------------------------------------------- options */

/* SIZE with an optional k, M, G (powers of 1024), as --max-bytes takes it */
static int size_arg(const char *opt, const char *v, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	unsigned shift = 0;
	if (*end == 'k' || *end == 'K')
		shift = 10;
	else if (*end == 'M')
		shift = 20;
	else if (*end == 'G')
		shift = 30;
	if (shift)
		end++;
	if (errno || end == v || *end || v[0] == '-' || v[0] == '+' || x > (~0ull >> shift))
		return fail(CMD, NULL, "%s: not a size (a number of bytes, or with k, M, G): %s",
			    opt, v);
	*out = x << shift;
	return 0;
}

/* A number from @p min to @p max for option @p opt (the --threads kind). */
static int number_in(const char *opt, const char *v, unsigned long long min,
		     unsigned long long max, unsigned *out)
{
	unsigned long long x;
	if (number(CMD, opt, v, max, &x))
		return EXIT_USAGE;
	if (x < min)
		return fail(CMD, NULL, "%s: at least %llu, not %s", opt, min, v);
	*out = (unsigned)x;
	return 0;
}

/* ADDR[:PORT] of an upstream (port 53) */
static int upstream_arg(const char *v, struct fwd_upstream *u)
{
	struct listener l;
	if (parse_addr(v, &l) != 0 || listener_port(&l) == 0 || l.wildcard)
		return fail(CMD, NULL, "--upstream: not ADDR[:PORT] or [ADDR6][:PORT] of a "
			    "server: %s", v);
	memset(u, 0, sizeof *u);
	memcpy(&u->addr, &l.addr, l.addr_len);
	u->addr_len = l.addr_len;
	listener_text(&l);
	snprintf(u->text, sizeof u->text, "%s", l.text);
	return 0;
}

/* --user: the account's groups, group and user, for good (setuid() as root
 * sets every user ID). Called once the sockets are bound. */
static int drop_privileges(const char *user)
{
	struct passwd *pw = getpwnam(user);
	if (pw == NULL)
		return fail(CMD, NULL, "--user: no such user: %s", user);
	if (initgroups(pw->pw_name, pw->pw_gid) != 0 || setgid(pw->pw_gid) != 0 ||
	    setuid(pw->pw_uid) != 0)
		return fail(CMD, NULL, "--user %s: %s", user, strerror(errno));
	if (pw->pw_uid != 0 && setuid(0) == 0)
		return fail(CMD, NULL, "--user %s: root could be regained", user);
	return 0;
}

/* Publishing writes a temporary beside SNAP's target and renames it: that
 * directory must be writable by the user we run as. */
static int check_snap_dir(const char *path)
{
	char target[4096];
	if (dnsnap_path_target(path, target, sizeof target) != 0)
		snprintf(target, sizeof target, "%s", path);
	char *dir = dirname(target);
	if (access(dir, W_OK | X_OK) != 0)
		return fail(CMD, path, "snapshots cannot be written: directory %s: %s", dir,
			    strerror(errno));
	return 0;
}

/* Each in-flight upstream query holds a socket: raise the descriptor limit
 * to what the system allows. */
static void raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* ----------------------------------------------------------------- stop */

/*
 * Stop without losing a query (see the top of this file): UDP sockets
 * connected away and drained, TCP listeners closed and connections served
 * to the end, upstream queries in flight waited for (at most @p wait_ms).
 */
static void stop_taking(struct server *s, unsigned wait_ms)
{
	for (int i = 0; i < s->nworkers; i++) {
		struct udp_worker *w = &s->workers[i];
		struct sockaddr_storage sink;
		memset(&sink, 0, sizeof sink);
		socklen_t sl;
		if (w->l->addr.ss_family == AF_INET) {
			struct sockaddr_in *a = (struct sockaddr_in *)&sink;
			a->sin_family = AF_INET;
			a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			a->sin_port = htons(9); /* discard: no client asks from there */
			sl = sizeof *a;
		} else {
			struct sockaddr_in6 *a = (struct sockaddr_in6 *)&sink;
			a->sin6_family = AF_INET6;
			a->sin6_addr = in6addr_loopback;
			a->sin6_port = htons(9);
			sl = sizeof *a;
		}
		if (w->fd >= 0 && connect(w->fd, (struct sockaddr *)&sink, sl) != 0)
			slog(LOG_WARNING, "%s: UDP socket not taken out of the group: %s; queries "
			     "arriving while it closes may be lost", w->l->text, strerror(errno));
	}
	atomic_store(&s->draining, 1);
	atomic_store(&s->tcp_draining, 1);
	uint64_t one = 1;
	if (write(s->tcp_stop_fd, &one, sizeof one) < 0)
		slog(LOG_ERR, "eventfd: %s", strerror(errno));
	for (int i = 0; i < s->nworkers; i++)
		if (s->workers[i].started) {
			pthread_join(s->workers[i].th, NULL);
			s->workers[i].started = 0;
		}
	if (s->fwd != NULL && fwd_drain(s->fwd, wait_ms) != 0)
		slog(LOG_WARNING, "upstream queries still in flight after %u ms: their clients "
		     "get SERVFAIL", wait_ms);
}

static int default_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (int)n;
}

/* The snapshot at start. Cache-only, it must be there. Forwarding, a
 * missing one is a cold start, and a damaged one too (logged: the next
 * publish replaces it); a file that is not a snapshot, or of a newer format,
 * stops the start (it would be replaced). @return 0 or EXIT_USAGE */
static int open_first(struct server *s, int forwarding, dnsnap_snap_t **snap, struct stat *st)
{
	*snap = NULL;
	memset(st, 0, sizeof *st);
	if (!forwarding) {
		if (open_snap(CMD, s->path, snap))
			return EXIT_USAGE;
		stat(s->path, st);
		return 0;
	}
	if (stat(s->path, st) != 0) {
		if (errno != ENOENT)
			return fail(CMD, s->path, "%s", strerror(errno));
		slog(LOG_INFO, "%s: no snapshot yet: a cold start", s->path);
		return 0;
	}
	dnsnap_diag_t d;
	int err = dnsnap_snap_open(s->path, snap, &d);
	if (err == DNSNAP_EMAGIC || err == DNSNAP_EVERSION)
		return fail(CMD, NULL, "%s (the server would replace it)", d.msg);
	if (err != DNSNAP_OK) {
		slog(LOG_WARNING, "%s; a cold start (the next snapshot replaces it)", d.msg);
		*snap = NULL;
	}
	return 0;
}

int cmd_serve(int argc, char **argv)
{
	struct server *s = calloc(1, sizeof *s);
	struct tcp *t = calloc(1, sizeof *t);
	struct fwd_opts *fo = calloc(1, sizeof *fo);
	if (s == NULL || t == NULL || fo == NULL) {
		free(s);
		free(t);
		free(fo);
		return fail(CMD, NULL, "out of memory");
	}
	int rc = EXIT_USAGE;
	/* Signals go to the signalfd only: blocked before any thread starts (the
	 * forwarder's, the metrics' are started before the workers), so in
	 * every thread; the mask is put back at the end. */
	sigset_t sigs, prev;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGUSR1);
	sigaddset(&sigs, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &sigs, &prev);
	enum {
		O_UPSTREAM = 0x100, O_TIMEOUT, O_TRIES, O_0X20, O_OUTSTANDING, O_MAX_BYTES,
		O_STALE, O_ALLOW, O_USER, O_EVERY, O_METRICS, O_LOG_LEVEL,
	};
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "threads", required_argument, NULL, 't' },
		{ "now", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "upstream", required_argument, NULL, O_UPSTREAM },
		{ "upstream-timeout", required_argument, NULL, O_TIMEOUT },
		{ "upstream-tries", required_argument, NULL, O_TRIES },
		{ "upstream-0x20", no_argument, NULL, O_0X20 },
		{ "max-outstanding", required_argument, NULL, O_OUTSTANDING },
		{ "max-bytes", required_argument, NULL, O_MAX_BYTES },
		{ "serve-stale", required_argument, NULL, O_STALE },
		{ "allow", required_argument, NULL, O_ALLOW },
		{ "user", required_argument, NULL, O_USER },
		{ "snapshot-every", required_argument, NULL, O_EVERY },
		{ "metrics", required_argument, NULL, O_METRICS },
		{ "log-level", required_argument, NULL, O_LOG_LEVEL },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long long threads = (unsigned long long)default_threads(), v;
	uint32_t now = 0;
	const char *listen_arg[MAX_LISTEN], *user = NULL, *metrics_arg = NULL;
	int nl = 0, c;
	fo->timeout_ms = 1000;
	fo->tries = 3;
	fo->max_outstanding = 2048;
	fo->max_waiters = 256;
	s->max_bytes = DEFAULT_MAX_BYTES;
	s->snapshot_every = DEFAULT_SNAPSHOT_EVERY;
	while ((c = opt_next(CMD, argc, argv, "", longopts)) != -1)
		switch (c) {
		case 'l': /* repeatable: each is one more address */
			if (nl == MAX_LISTEN) {
				fail(CMD, NULL, "--listen: at most %d addresses", MAX_LISTEN);
				goto out_free;
			}
			listen_arg[nl++] = optarg;
			break;
		case 't':
			if (number(CMD, "--threads", optarg, MAX_THREADS, &threads))
				goto out_free;
			if (threads == 0) {
				fail(CMD, NULL, "--threads: at least 1");
				goto out_free;
			}
			break;
		case 'n':
			if (time_arg(CMD, "--now", optarg, &now))
				goto out_free;
			if (now == 0) {
				fail(CMD, NULL, "--now: the time 0 is not served "
				     "(1970-01-01T00:00:00Z)");
				goto out_free;
			}
			break;
		case 'j':
			s->json = 1;
			break;
		case O_UPSTREAM: /* repeatable: tried in this order */
			if (fo->nup == FWD_MAX_UPSTREAMS) {
				fail(CMD, NULL, "--upstream: at most %d servers", FWD_MAX_UPSTREAMS);
				goto out_free;
			}
			if (upstream_arg(optarg, &fo->up[fo->nup]))
				goto out_free;
			fo->nup++;
			break;
		case O_TIMEOUT: /* milliseconds */
			if (number_in("--upstream-timeout", optarg, 10, 60000, &fo->timeout_ms))
				goto out_free;
			break;
		case O_TRIES:
			if (number_in("--upstream-tries", optarg, 1, 16, &fo->tries))
				goto out_free;
			break;
		case O_0X20:
			fo->use_0x20 = 1;
			break;
		case O_OUTSTANDING:
			if (number_in("--max-outstanding", optarg, 1, 65536, &fo->max_outstanding))
				goto out_free;
			break;
		case O_MAX_BYTES:
			if (size_arg("--max-bytes", optarg, &s->max_bytes))
				goto out_free;
			if (s->max_bytes < (1u << 20)) { /* the index's tables alone take more */
				fail(CMD, NULL, "--max-bytes: at least 1M, not %s", optarg);
				goto out_free;
			}
			break;
		case O_STALE:
			if (number(CMD, "--serve-stale", optarg, 604800, &v))
				goto out_free;
			s->serve_stale = (uint32_t)v;
			break;
		case O_ALLOW:
			if (s->nallow == MAX_ALLOW) {
				fail(CMD, NULL, "--allow: at most %d prefixes", MAX_ALLOW);
				goto out_free;
			}
			int e = cidr_parse(optarg, &s->allow[s->nallow]);
			if (e == -2) {
				fail(CMD, NULL, "--allow: %s has bits set past its prefix length "
				     "(write the network's address)", optarg);
				goto out_free;
			}
			if (e != 0) {
				fail(CMD, NULL, "--allow: not ADDR or ADDR/BITS (IPv4 or IPv6): %s",
				     optarg);
				goto out_free;
			}
			s->nallow++;
			break;
		case O_USER:
			user = optarg;
			break;
		case O_EVERY:
			if (number(CMD, "--snapshot-every", optarg, 86400 * 7, &v))
				goto out_free;
			s->snapshot_every = (unsigned)v;
			break;
		case O_METRICS:
			metrics_arg = optarg;
			break;
		case O_LOG_LEVEL:
			if (slog_level_arg(optarg) < 0) {
				fail(CMD, NULL, "--log-level: debug, info, warning or error, not %s",
				     optarg);
				goto out_free;
			}
			break;
		default:
			goto out_free;
		}
	if (opt_operands(CMD, argc, argv, 1, 1, "a snapshot") < 0)
		goto out_free;
	s->path = argv[optind];
	int forwarding = fo->nup > 0;
	if (!forwarding) {
		static const char *const fwd_only[] = { "--serve-stale", "--snapshot-every",
							"--upstream-timeout", "--upstream-tries",
							"--upstream-0x20", "--max-outstanding" };
		for (int i = 1; i < optind && i < argc; i++)
			for (size_t k = 0; k < sizeof fwd_only / sizeof *fwd_only; k++)
				if (strncmp(argv[i], fwd_only[k], strlen(fwd_only[k])) == 0) {
					fail(CMD, NULL, "%s needs --upstream (without it the server "
					     "answers from SNAP only)", fwd_only[k]);
					goto out_free;
				}
	}
	if (nl == 0)
		listen_arg[nl++] = DEFAULT_LISTEN;
	for (int i = 0; i < nl; i++)
		if (parse_addr(listen_arg[i], &s->ls[i]) != 0) {
			fail(CMD, NULL, "--listen: not ADDR:PORT or [ADDR6]:PORT: %s", listen_arg[i]);
			goto out_free;
		}
	if (s->nallow == 0) { /* loopback only */
		cidr_parse("127.0.0.0/8", &s->allow[s->nallow++]);
		cidr_parse("::1/128", &s->allow[s->nallow++]);
	}
	s->nls = nl;
	s->nthreads = (int)threads;
	s->fixed_now = (uint32_t)now;
	s->tcp_stop_fd = s->tcp_done_fd = -1;
	s->tcp_done_tail = &s->tcp_done;
	s->start_time = (uint64_t)time(NULL);
	pthread_mutex_init(&s->tcp_mu, NULL);
	pthread_mutex_init(&s->snap_mu, NULL);
	t->s = s;
	t->ep = -1;

	dnsnap_snap_t *snap = NULL;
	struct stat snap_st;
	if (open_first(s, forwarding, &snap, &snap_st))
		goto out_free;
	dnsnap_cache_opts_t co;
	dnsnap_cache_opts_default(&co);
	co.max_bytes = s->max_bytes;
	int err = dnsnap_cache_new(&co, &s->cache);
	if (err != DNSNAP_OK) {
		fail(CMD, NULL, "%s", dnsnap_strerror(err));
		dnsnap_snap_close(snap);
		goto out_free;
	}
	snap_swap(s, snap, snap ? &snap_st : NULL);

	s->nworkers = s->nls * s->nthreads;
	s->workers = calloc((size_t)s->nworkers, sizeof *s->workers);
	if (s->workers == NULL) {
		fail(CMD, NULL, "out of memory");
		goto out_cache;
	}
	for (int i = 0; i < s->nworkers; i++) {
		s->workers[i].fd = -1;
		s->workers[i].s = s;
		s->workers[i].l = &s->ls[i / s->nthreads];
	}
	if (open_sockets(s))
		goto out_sockets;
	if (metrics_arg != NULL) {
		char e[256];
		if (metrics_http_start(metrics_arg, collect, s, &s->metrics, e, sizeof e) != 0) {
			fail(CMD, NULL, "--metrics: %s", e);
			goto out_sockets;
		}
	}
	if (user != NULL && drop_privileges(user))
		goto out_sockets;
	if (forwarding) {
		if (check_snap_dir(s->path))
			goto out_sockets;
		raise_nofile();
		s->enc = malloc(sizeof *s->enc);
		s->enc2 = malloc(sizeof *s->enc2);
		s->fwd_out = malloc(2 + TCP_MSG_MAX);
		if (s->enc == NULL || s->enc2 == NULL || s->fwd_out == NULL) {
			fail(CMD, NULL, "out of memory");
			goto out_sockets;
		}
		struct fwd_hooks hooks = { .done = on_done, .rejected = on_rejected, .arg = s };
		char e[256];
		if (fwd_new(fo, &hooks, &s->fwd, e, sizeof e) != 0) {
			fail(CMD, NULL, "%s", e);
			goto out_sockets;
		}
	}
	s->tcp_stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->tcp_done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	t->ep = epoll_create1(EPOLL_CLOEXEC);
	if (s->tcp_stop_fd < 0 || s->tcp_done_fd < 0 || t->ep < 0) {
		fail(CMD, NULL, "eventfd, epoll: %s", strerror(errno));
		goto out_sockets;
	}

	int sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	if (sfd < 0) {
		fail(CMD, NULL, "signalfd: %s", strerror(errno));
		goto out_sockets;
	}

	pthread_t tcp_th;
	int tcp_started = pthread_create(&tcp_th, NULL, tcp_main, t) == 0;
	int started = tcp_started;
	for (int i = 0; i < s->nworkers && started; i++) {
		struct udp_worker *w = &s->workers[i];
		w->started = pthread_create(&w->th, NULL, udp_main, w) == 0;
		started = w->started;
	}
	if (!started) {
		fail(CMD, NULL, "cannot start the threads");
	} else {
		if (s->snap != NULL) {
			dnsnap_snap_info_t in;
			dnsnap_snap_info(s->snap, &in);
			slog(LOG_INFO, "%s: %llu %s, digest %016llx", s->path,
			     (unsigned long long)in.entry_count,
			     plural(in.entry_count, "entry", "entries"),
			     (unsigned long long)in.digest);
		}
		for (int i = 0; i < s->nls; i++)
			slog(LOG_INFO, "listening on %s (UDP: %d %s; TCP)", s->ls[i].text,
			     s->nthreads, plural((uint64_t)s->nthreads, "thread", "threads"));
		for (int i = 0; i < fo->nup; i++)
			slog(LOG_INFO, "upstream %d: %s", i + 1, fo->up[i].text);
		if (s->metrics != NULL)
			slog(LOG_INFO, "metrics on http://%s/metrics (port %d)", metrics_arg,
			     metrics_http_port(s->metrics));
		if (s->fixed_now) {
			char iso[21];
			time_iso(s->fixed_now, iso);
			slog(LOG_INFO, "the clock is fixed at %s (%u, --now)", iso, s->fixed_now);
		}
		slog(LOG_INFO, "ready: answering%s", forwarding ? " (misses go upstream)"
			     : " from the snapshot only (misses are REFUSED)");
		notify_systemd("READY=1");
		if (s->snap != NULL)
			snap_warn(s, s->snap, server_now(s));
		rc = 0;
		int warned = 0;
		int64_t last_publish = mono_ms();
		for (;;) {
			struct pollfd pf = { .fd = sfd, .events = POLLIN };
			int pr = poll(&pf, 1, 1000);
			if (pr == 0 || (pr < 0 && errno == EINTR)) {
				/* the tick: the mapped file changed in place? replaced? */
				pthread_mutex_lock(&s->snap_mu);
				int changed = s->snap != NULL && dnsnap_snap_changed(s->snap);
				pthread_mutex_unlock(&s->snap_mu);
				if (!warned && changed) {
					warned = 1;
					slog(LOG_WARNING, "%s: the snapshot file changed in place "
					     "(truncated or overwritten) under the map: its answers are "
					     "misses from now on; publish snapshots by rename, then send "
					     "SIGHUP", s->path);
				}
				if (forwarding) {
					watch(s);
					if (s->snapshot_every &&
					    mono_ms() - last_publish >= 1000ll * s->snapshot_every) {
						publish(s, "every --snapshot-every");
						last_publish = mono_ms();
					}
				}
				continue;
			}
			struct signalfd_siginfo si;
			ssize_t n = read(sfd, &si, sizeof si);
			if (n != (ssize_t)sizeof si) {
				if (n < 0 && errno == EINTR)
					continue;
				slog(LOG_ERR, "signalfd: %s", n < 0 ? strerror(errno) : "short read");
				rc = EXIT_USAGE;
				break;
			}
			if (si.ssi_signo == SIGHUP) {
				reload(s, "reloaded");
				warned = 0;
			} else if (si.ssi_signo == SIGUSR1) {
				print_counters(s, "");
			} else if (si.ssi_signo == SIGUSR2) {
				if (forwarding) {
					publish(s, "SIGUSR2");
					last_publish = mono_ms();
				} else {
					slog(LOG_INFO, "SIGUSR2: nothing to publish: the server answers "
					     "from %s only", s->path);
				}
			} else {
				slog(LOG_INFO, "%s: stopping", strsignal((int)si.ssi_signo));
				break;
			}
		}
	}

	notify_systemd("STOPPING=1");
	/* Publish while still answering (a plain restart is down only from the
	 * hand-over on), then hand the address over, then publish what came in
	 * meanwhile, if anything did. */
	if (rc == 0 && forwarding && publish(s, "stopping") != 0)
		rc = EXIT_USAGE;
	stop_taking(s, fo->timeout_ms * fo->tries + 1000);
	atomic_store(&s->stop, 1);
	uint64_t one = 1;
	if (write(s->tcp_stop_fd, &one, sizeof one) < 0)
		slog(LOG_ERR, "eventfd: %s", strerror(errno));
	fwd_free(s->fwd); /* what is still in flight ends with FWD_STOPPED */
	s->fwd = NULL;
	if (tcp_started)
		pthread_join(tcp_th, NULL);
	if (rc == 0 && forwarding && publish(s, "exit") != 0)
		rc = EXIT_USAGE;
	if (rc == 0 || forwarding)
		print_counters(s, " at exit");
	close(sfd);
out_sockets:
	metrics_http_stop(s->metrics);
	fwd_free(s->fwd);
	if (t->ep >= 0)
		close(t->ep);
	if (s->tcp_stop_fd >= 0)
		close(s->tcp_stop_fd);
	if (s->tcp_done_fd >= 0)
		close(s->tcp_done_fd);
	for (struct tcp_done *d = s->tcp_done, *next; d != NULL; d = next) {
		next = d->next;
		free(d);
	}
	for (int i = 0; i < s->nls; i++)
		if (s->ls[i].tcp_fd >= 0)
			close(s->ls[i].tcp_fd);
	for (int i = 0; s->workers != NULL && i < s->nworkers; i++)
		if (s->workers[i].fd >= 0)
			close(s->workers[i].fd);
	free(s->workers);
	free(s->enc);
	free(s->enc2);
	free(s->fwd_out);
out_cache:
	snap_swap(s, NULL, NULL);
	dnsnap_cache_free(s->cache);
out_free:
	pthread_sigmask(SIG_SETMASK, &prev, NULL);
	free(fo);
	free(t);
	free(s);
	return rc;
}
