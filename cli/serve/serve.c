/*
 * cli/serve/: `dnsnap serve`, the reference embedding of libdnsnap: a DNS
 * server that answers from the cache and its snapshot (and, with
 * --upstream, a caching forwarder). The inspection commands stay in cli/;
 * the server's networking lives here.
 *
 * serve.c: `dnsnap serve SNAP`, the command: sockets, threads, signals.
 *
 * Threads:
 * - per listen address, N UDP workers, each with its own socket bound with
 *   SO_REUSEPORT to the address (the kernel spreads the clients over them).
 *   A worker takes up to BATCH datagrams with one recvmmsg(), answers them
 *   into its own buffers (allocated once: nothing is allocated per query)
 *   and sends the replies with one sendmmsg();
 * - one TCP thread: epoll over the listening sockets and the connections
 *   (at most TCP_MAX_CONNS; idle ones close after TCP_IDLE_MS);
 * - the main thread: signals, through a signalfd (they are blocked in every
 *   thread, so no handler runs): SIGHUP reopens SNAP and swaps it in with
 *   dnsnap_cache_attach() while the workers answer; SIGUSR1 prints the
 *   counters (a line on stderr; with --json, a JSON object on stdout);
 *   SIGTERM and SIGINT stop: the workers see the stop flag within
 *   RECV_TIMEOUT_MS, the TCP thread at once (an eventfd), all are joined.
 *
 * Answers come from an empty dnsnap cache with the snapshot attached (every
 * lookup falls through to the map), through serve_reply() (serve_reply.c).
 * Counters are per thread (one writer each, relaxed atomics), summed when
 * printed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "byteorder.h"
#include "cli.h"
#include "json.h"
#include "serve.h"

#define DEFAULT_LISTEN "127.0.0.1:5353"
#define DEFAULT_PORT 5353
#define MAX_LISTEN 16
#define MAX_THREADS 64
#define BATCH 32               /* datagrams per recvmmsg() / sendmmsg() */
#define UDP_IN_MAX 4096        /* a longer datagram is no query: dropped */
#define RECV_TIMEOUT_MS 200    /* how soon a UDP worker sees the stop flag */
#define TCP_MAX_CONNS 128      /* more are accepted and closed at once */
#define TCP_IDLE_MS 10000      /* no whole query for this long: closed */
#define TCP_MSG_MAX 65535

static const char *const CMD = "serve";

/* ------------------------------------------------------------- counters */

enum {
	C_UDP, C_TCP, C_HIT, C_MISS, C_FORMERR, C_NOTIMP, C_BADVERS, C_SERVFAIL, C_DROPPED,
	C_TRUNC, C_CONNS, C_CONN_REFUSED, C_CONN_IDLE, C_N
};

struct counters {
	_Alignas(64) _Atomic uint64_t v[C_N];
};

/* One writer per struct counters: a plain load and store, no locked add. */
static inline void bump(struct counters *c, int i)
{
	atomic_store_explicit(&c->v[i], atomic_load_explicit(&c->v[i], memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

static void count_outcome(struct counters *c, int outcome, const uint8_t *reply, size_t len)
{
	static const int which[] = {
		[SERVE_DROP] = C_DROPPED, [SERVE_HIT] = C_HIT, [SERVE_MISS] = C_MISS,
		[SERVE_FORMERR] = C_FORMERR, [SERVE_NOTIMP] = C_NOTIMP,
		[SERVE_BADVERS] = C_BADVERS, [SERVE_SERVFAIL] = C_SERVFAIL,
	};
	bump(c, which[outcome]);
	if (outcome == SERVE_HIT && len > 2 && (reply[2] & 0x02))
		bump(c, C_TRUNC);
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
	struct counters cnt;
	struct server *s;
	const struct listener *l;
	int fd;
	pthread_t th;
	int started;
};

struct server {
	dnsnap_cache_t *cache;
	const char *path;
	uint32_t fixed_now;      /* --now, or 0: the clock */
	int json;                /* --json: counters as JSON lines on stdout */
	atomic_int stop;
	struct listener ls[MAX_LISTEN];
	int nls;
	int nthreads;            /* UDP workers per listener */
	struct udp_worker *workers;
	int nworkers;
	int tcp_stop_fd;         /* an eventfd: written to stop the TCP thread */
	struct counters tcp_cnt;
};

static uint32_t server_now(const struct server *s)
{
	return s->fixed_now ? s->fixed_now : (uint32_t)time(NULL);
}

static int64_t mono_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* --json: one object per dump on standard output, for a program to read
 * while the log (standard error) stays for people */
static void json_counters(struct server *s, dnsnap_snap_t *snap, const char *when,
			  const unsigned long long *t)
{
	char at[21];
	time_iso((uint32_t)time(NULL), at);
	jw_t j;
	jw_init(&j, stdout);
	jw_obj(&j);
	jw_kstr(&j, "event", when[0] ? "exit" : "counters");
	jw_kstr(&j, "time", at);
	jw_kstr(&j, "file", s->path);
	jw_ku64(&j, "queries", t[C_UDP] + t[C_TCP]);
	jw_ku64(&j, "udp", t[C_UDP]);
	jw_ku64(&j, "tcp", t[C_TCP]);
	jw_ku64(&j, "hits", t[C_HIT]);
	jw_ku64(&j, "misses", t[C_MISS]);
	jw_ku64(&j, "formerr", t[C_FORMERR]);
	jw_ku64(&j, "notimp", t[C_NOTIMP]);
	jw_ku64(&j, "badvers", t[C_BADVERS]);
	jw_ku64(&j, "servfail", t[C_SERVFAIL]);
	jw_ku64(&j, "dropped", t[C_DROPPED]);
	jw_ku64(&j, "truncated", t[C_TRUNC]);
	jw_ku64(&j, "tcp_connections", t[C_CONNS]);
	jw_ku64(&j, "tcp_refused", t[C_CONN_REFUSED]);
	jw_ku64(&j, "tcp_closed_idle", t[C_CONN_IDLE]);
	jw_ku64(&j, "damaged_entries", dnsnap_snap_bad_entries(snap));
	jw_kbool(&j, "changed_in_place", dnsnap_snap_changed(snap));
	jw_end(&j);
	jw_nl(&j);
	fflush(stdout);
}

static void print_counters(struct server *s, dnsnap_snap_t *snap, const char *when)
{
	unsigned long long t[C_N] = { 0 };
	for (int w = 0; w <= s->nworkers; w++) {
		const struct counters *c = w < s->nworkers ? &s->workers[w].cnt : &s->tcp_cnt;
		for (int i = 0; i < C_N; i++)
			t[i] += atomic_load_explicit(&c->v[i], memory_order_relaxed);
	}
	if (s->json) {
		json_counters(s, snap, when, t);
		return;
	}
	fprintf(stderr,
		"dnsnap serve: counters%s: queries %llu (udp %llu, tcp %llu), hits %llu, "
		"misses %llu, formerr %llu, notimp %llu, badvers %llu, servfail %llu, "
		"dropped %llu, truncated %llu; tcp connections %llu (refused %llu, "
		"closed idle %llu); snapshot: damaged entries %llu%s\n",
		when, t[C_UDP] + t[C_TCP], t[C_UDP], t[C_TCP], t[C_HIT], t[C_MISS], t[C_FORMERR],
		t[C_NOTIMP], t[C_BADVERS], t[C_SERVFAIL], t[C_DROPPED], t[C_TRUNC], t[C_CONNS],
		t[C_CONN_REFUSED], t[C_CONN_IDLE],
		(unsigned long long)dnsnap_snap_bad_entries(snap),
		dnsnap_snap_changed(snap) ? ", changed in place" : "");
}

/* ------------------------------------------------------------------ UDP */

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

static void *udp_main(void *arg)
{
	struct udp_worker *w = arg;
	struct server *s = w->s;
	struct udp_bufs *b = calloc(1, sizeof *b);
	if (b == NULL) {
		fprintf(stderr, "dnsnap serve: %s: out of memory for a UDP worker\n", w->l->text);
		return NULL;
	}
	for (int i = 0; i < BATCH; i++) {
		b->iov_in[i] = (struct iovec){ b->q[i], UDP_IN_MAX };
		b->in[i].msg_hdr.msg_iov = &b->iov_in[i];
		b->in[i].msg_hdr.msg_iovlen = 1;
	}
	int wildcard = w->l->wildcard, errors = 0;
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
			if (n < 0 && errno != EAGAIN && errno != EINTR && errors++ == 0)
				fprintf(stderr, "dnsnap serve: %s: recvmmsg: %s\n", w->l->text,
					strerror(errno));
			continue;
		}
		uint32_t now = server_now(s);
		unsigned k = 0;
		for (int i = 0; i < n; i++) {
			struct msghdr *h = &b->in[i].msg_hdr;
			bump(&w->cnt, C_UDP);
			if (h->msg_flags & MSG_TRUNC) { /* over UDP_IN_MAX: not a query */
				bump(&w->cnt, C_DROPPED);
				continue;
			}
			size_t len;
			int outcome = serve_reply(s->cache, b->q[i], b->in[i].msg_len, 0, now,
						  b->r[i], SERVE_UDP_MAX, &len);
			count_outcome(&w->cnt, outcome, b->r[i], len);
			if (outcome == SERVE_DROP)
				continue;
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
				sent++; /* that reply is lost (the client retries); go on */
			} else {
				sent += (unsigned)m;
			}
		}
	}
	free(b);
	return NULL;
}

/* ------------------------------------------------------------------ TCP */

struct conn {
	int fd;
	int64_t last;            /* ms: accepted, or its last whole query */
	size_t in_len;
	int eof;                 /* the client shut its side: reply, then close */
	uint8_t *pend;           /* a reply the socket did not take whole */
	size_t pend_len, pend_off;
	uint8_t in[2 + TCP_MSG_MAX];
};

struct tcp {
	struct server *s;
	int ep;
	struct conn *conns[TCP_MAX_CONNS];
	int nconns;
	int listening;           /* 0 while accept() fails for lack of descriptors */
	uint8_t out[2 + TCP_MSG_MAX];
};

/* epoll data: the listeners' index, or a connection's slot + TAG_CONN */
#define TAG_STOP 0xffffu
#define TAG_CONN 0x10000u

static void conn_close(struct tcp *t, int slot)
{
	struct conn *c = t->conns[slot];
	epoll_ctl(t->ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c->pend);
	free(c);
	t->conns[slot] = t->conns[--t->nconns];
	if (slot < t->nconns) {
		struct epoll_event ev = { .events = t->conns[slot]->pend ? EPOLLOUT : EPOLLIN,
					  .data.u32 = TAG_CONN | (uint32_t)slot };
		epoll_ctl(t->ep, EPOLL_CTL_MOD, t->conns[slot]->fd, &ev);
	}
}

static void conn_watch(struct tcp *t, int slot, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.u32 = TAG_CONN | (uint32_t)slot };
	epoll_ctl(t->ep, EPOLL_CTL_MOD, t->conns[slot]->fd, &ev);
}

/* Answer the whole queries buffered on the connection, in order, while the
 * socket takes the replies. @return 0, or -1: close it */
static int conn_serve(struct tcp *t, int slot)
{
	struct conn *c = t->conns[slot];
	size_t off = 0;
	while (c->pend == NULL && c->in_len - off >= 2) {
		size_t mlen = ld16be(c->in + off);
		if (c->in_len - off - 2 < mlen)
			break;
		size_t len;
		int outcome = serve_reply(t->s->cache, c->in + off + 2, mlen, 1,
					  server_now(t->s), t->out + 2, TCP_MSG_MAX, &len);
		bump(&t->s->tcp_cnt, C_TCP);
		count_outcome(&t->s->tcp_cnt, outcome, t->out + 2, len);
		off += 2 + mlen;
		c->last = mono_ms();
		if (outcome == SERVE_DROP)
			continue;
		st16be(t->out, (uint16_t)len);
		ssize_t n = send(c->fd, t->out, len + 2, MSG_NOSIGNAL);
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		if (n < 0)
			n = 0;
		if ((size_t)n < len + 2) { /* keep the rest; read no more until it is out */
			c->pend_len = len + 2 - (size_t)n;
			c->pend_off = 0;
			c->pend = malloc(c->pend_len);
			if (c->pend == NULL)
				return -1;
			memcpy(c->pend, t->out + n, c->pend_len);
			conn_watch(t, slot, EPOLLOUT);
		}
	}
	if (off > 0) {
		memmove(c->in, c->in + off, c->in_len - off);
		c->in_len -= off;
	}
	return c->pend == NULL && c->eof ? -1 : 0;
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
		conn_watch(t, slot, EPOLLIN);
		if (conn_serve(t, slot) != 0)
			return conn_close(t, slot);
		return;
	}
	if (c->pend != NULL)
		return;
	ssize_t n = recv(c->fd, c->in + c->in_len, sizeof c->in - c->in_len, 0);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n < 0)
		return conn_close(t, slot);
	if (n == 0)
		c->eof = 1;
	c->in_len += (size_t)n;
	if (conn_serve(t, slot) != 0)
		conn_close(t, slot);
}

static void tcp_listen_all(struct tcp *t, int on)
{
	for (int i = 0; i < t->s->nls; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)i };
		epoll_ctl(t->ep, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, t->s->ls[i].tcp_fd, &ev);
	}
	t->listening = on;
}

static void tcp_accept(struct tcp *t, int lfd)
{
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) { /* retried at the next sweep */
				fprintf(stderr, "dnsnap serve: accept: %s; TCP paused for a second\n",
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

static void *tcp_main(void *arg)
{
	struct tcp *t = arg;
	struct server *s = t->s;
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = TAG_STOP };
	epoll_ctl(t->ep, EPOLL_CTL_ADD, s->tcp_stop_fd, &ev);
	tcp_listen_all(t, 1);
	int64_t swept = mono_ms();
	for (;;) {
		struct epoll_event evs[64];
		int n = epoll_wait(t->ep, evs, 64, 1000);
		for (int i = 0; i < n; i++) {
			uint32_t d = evs[i].data.u32;
			if (d == TAG_STOP)
				goto out;
			if (d & TAG_CONN) {
				int slot = (int)(d & ~TAG_CONN);
				/* a slot closed earlier in this round may hold another
				 * connection now; a spurious event on it is harmless */
				if (slot < t->nconns)
					conn_event(t, slot, evs[i].events);
			} else {
				tcp_accept(t, s->ls[d].tcp_fd);
			}
		}
		int64_t now = mono_ms();
		if (now - swept >= 1000) {
			swept = now;
			for (int k = t->nconns - 1; k >= 0; k--)
				if (now - t->conns[k]->last > TCP_IDLE_MS) {
					bump(&s->tcp_cnt, C_CONN_IDLE);
					conn_close(t, k);
				}
			if (!t->listening)
				tcp_listen_all(t, 1);
		}
	}
out:
	while (t->nconns > 0)
		conn_close(t, t->nconns - 1);
	return NULL;
}

/* ---------------------------------------------------------------- setup */

/* ADDR:PORT, [ADDR6]:PORT, or an address alone (port 5353). Port 0: the
 * kernel picks one (then the same for UDP and TCP). @return 0 or -1 */
static int parse_listen(const char *arg, struct listener *l)
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
	if (type == SOCK_STREAM) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	} else {
		setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
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

/* SIGHUP: the file at the path now, swapped in; a bad one changes nothing. */
static void reload(struct server *s, dnsnap_snap_t **cur)
{
	dnsnap_snap_t *fresh, *old = NULL;
	dnsnap_diag_t d;
	int err = dnsnap_snap_open(s->path, &fresh, &d);
	dnsnap_snap_info_t in;
	if (err != DNSNAP_OK) {
		dnsnap_snap_info(*cur, &in);
		fprintf(stderr, "dnsnap serve: reload failed: %s; still serving the previous "
			"snapshot (%llu %s)\n", d.msg, (unsigned long long)in.entry_count,
			plural(in.entry_count, "entry", "entries"));
		return;
	}
	dnsnap_cache_attach(s->cache, fresh, &old);
	dnsnap_snap_close(old); /* waits for the lookups still in it */
	*cur = fresh;
	dnsnap_snap_info(fresh, &in);
	fprintf(stderr, "dnsnap serve: %s: reloaded: %llu %s, digest %016llx\n", s->path,
		(unsigned long long)in.entry_count, plural(in.entry_count, "entry", "entries"),
		(unsigned long long)in.digest);
}

static int default_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (int)n;
}

/* ------------------------------------------------------------- command */

int cmd_serve(int argc, char **argv)
{
	struct server *s = calloc(1, sizeof *s);
	struct tcp *t = calloc(1, sizeof *t);
	if (s == NULL || t == NULL) {
		free(s);
		free(t);
		return fail(CMD, NULL, "out of memory");
	}
	int rc = EXIT_USAGE;
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "threads", required_argument, NULL, 't' },
		{ "now", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long long threads = (unsigned long long)default_threads();
	uint32_t now = 0;
	const char *listen_arg[MAX_LISTEN];
	int nl = 0, c;
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
		default:
			goto out_free;
		}
	if (opt_operands(CMD, argc, argv, 1, 1, "a snapshot") < 0)
		goto out_free;
	s->path = argv[optind];
	if (nl == 0)
		listen_arg[nl++] = DEFAULT_LISTEN;
	for (int i = 0; i < nl; i++)
		if (parse_listen(listen_arg[i], &s->ls[i]) != 0) {
			fail(CMD, NULL, "--listen: not ADDR:PORT or [ADDR6]:PORT: %s", listen_arg[i]);
			goto out_free;
		}
	s->nls = nl;
	s->nthreads = (int)threads;
	s->fixed_now = (uint32_t)now;
	s->tcp_stop_fd = -1;
	t->s = s;
	t->ep = -1;

	dnsnap_snap_t *snap = NULL;
	if (open_snap(CMD, s->path, &snap))
		goto out_free;
	int err = dnsnap_cache_new(NULL, &s->cache);
	if (err != DNSNAP_OK) {
		fail(CMD, NULL, "%s", dnsnap_strerror(err));
		goto out_snap;
	}
	dnsnap_cache_attach(s->cache, snap, NULL);

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
	s->tcp_stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	t->ep = epoll_create1(EPOLL_CLOEXEC);
	if (s->tcp_stop_fd < 0 || t->ep < 0) {
		fail(CMD, NULL, "eventfd, epoll: %s", strerror(errno));
		goto out_sockets;
	}

	/* Signals go to the signalfd only: blocked here, so in every thread
	 * started from here on too. */
	sigset_t sigs, prev;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &sigs, &prev);
	int sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	if (sfd < 0) {
		fail(CMD, NULL, "signalfd: %s", strerror(errno));
		goto out_sigmask;
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
		dnsnap_snap_info_t in;
		dnsnap_snap_info(snap, &in);
		fprintf(stderr, "dnsnap serve: %s: %llu %s, digest %016llx\n", s->path,
			(unsigned long long)in.entry_count,
			plural(in.entry_count, "entry", "entries"), (unsigned long long)in.digest);
		for (int i = 0; i < s->nls; i++)
			fprintf(stderr, "dnsnap serve: listening on %s (UDP: %d %s; TCP)\n",
				s->ls[i].text, s->nthreads, plural((uint64_t)s->nthreads, "thread",
								   "threads"));
		if (s->fixed_now) {
			char iso[21];
			time_iso(s->fixed_now, iso);
			fprintf(stderr, "dnsnap serve: the clock is fixed at %s (%u, --now)\n", iso,
				s->fixed_now);
		}
		rc = 0;
		int warned = 0;
		for (;;) {
			/* once a second: was the mapped file changed in place? */
			struct pollfd pf = { .fd = sfd, .events = POLLIN };
			int pr = poll(&pf, 1, 1000);
			if (pr == 0 || (pr < 0 && errno == EINTR)) {
				if (!warned && dnsnap_snap_changed(snap)) {
					warned = 1;
					fprintf(stderr, "dnsnap serve: %s: the snapshot file changed in "
						"place (truncated or overwritten) under the map: its "
						"answers are misses from now on; publish snapshots by "
						"rename, then send SIGHUP\n", s->path);
				}
				continue;
			}
			struct signalfd_siginfo si;
			ssize_t n = read(sfd, &si, sizeof si);
			if (n != (ssize_t)sizeof si) {
				if (n < 0 && errno == EINTR)
					continue;
				fprintf(stderr, "dnsnap serve: signalfd: %s\n",
					n < 0 ? strerror(errno) : "short read");
				rc = EXIT_USAGE;
				break;
			}
			if (si.ssi_signo == SIGHUP) {
				reload(s, &snap);
				warned = 0;
			} else if (si.ssi_signo == SIGUSR1)
				print_counters(s, snap, "");
			else {
				fprintf(stderr, "dnsnap serve: %s: stopping\n",
					strsignal((int)si.ssi_signo));
				break;
			}
		}
	}

	atomic_store(&s->stop, 1);
	uint64_t one = 1;
	if (write(s->tcp_stop_fd, &one, sizeof one) < 0)
		fprintf(stderr, "dnsnap serve: eventfd: %s\n", strerror(errno));
	if (tcp_started)
		pthread_join(tcp_th, NULL);
	for (int i = 0; i < s->nworkers; i++)
		if (s->workers[i].started)
			pthread_join(s->workers[i].th, NULL);
	if (rc == 0)
		print_counters(s, snap, " at exit");
	close(sfd);
out_sigmask:
	pthread_sigmask(SIG_SETMASK, &prev, NULL);
out_sockets:
	if (t->ep >= 0)
		close(t->ep);
	if (s->tcp_stop_fd >= 0)
		close(s->tcp_stop_fd);
	for (int i = 0; i < s->nls; i++)
		if (s->ls[i].tcp_fd >= 0)
			close(s->ls[i].tcp_fd);
	for (int i = 0; s->workers != NULL && i < s->nworkers; i++)
		if (s->workers[i].fd >= 0)
			close(s->workers[i].fd);
	free(s->workers);
out_cache:
	dnsnap_cache_attach(s->cache, NULL, NULL);
	dnsnap_cache_free(s->cache);
out_snap:
	dnsnap_snap_close(snap);
out_free:
	free(t);
	free(s);
	return rc;
}
