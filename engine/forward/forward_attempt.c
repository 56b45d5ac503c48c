/*
 * forward_attempt.c: one upstream query's attempts (forward.h says what they
 * do; this says how), the deadlines, and the upstreams' health.
 *
 * - An attempt: a new UDP socket connect()ed to the upstream (the kernel
 *   picks a random ephemeral port and drops datagrams from anywhere else),
 *   the query with a random ID, recvfrom() until EAGAIN on EPOLLIN; each
 *   datagram's source is checked again, then dnsnap_fwd_reply_matches(); a
 *   mismatch is counted and the attempt goes on waiting. TC=1: the same
 *   upstream over TCP (non-blocking connect, 2-byte length and the query
 *   with a new ID, then length and reply, the same checks) under a deadline
 *   of its own. ECONNREFUSED (ICMP) and any other socket error end the
 *   attempt as that upstream's error.
 * - Deadlines (monotonic milliseconds) sit in a binary min-heap; the loop
 *   sleeps until the earliest (dnsnap_fwd_timeout_ms()).
 * - Each end of an attempt is one of four kinds for health: a reply (any
 *   RCODE: the upstream is alive), the upstream's failure (counted towards
 *   marking it down), a timeout (the upstream's only when it accepted no
 *   reply to anything since the attempt was sent, and only once per key in
 *   a run of failures), or this host's failure (no descriptor, no memory:
 *   nobody's).
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "byteorder.h"
#include "forward_int.h"

#define RND_0X20 32         /* dnsnap_fwd_build_query()'s rnd: one bit per name byte */
#define DOWN_FIRST_MS 1000u
#define DOWN_MAX_MS 30000u
#define F_TC 0x02           /* in the header's third byte */
#define RCODE_NOERROR 0
#define RCODE_NXDOMAIN 3

enum { END_TIMEOUT, END_ERROR, END_RCODE, END_LOCAL };

static const uint32_t lat_bounds_us[DNSNAP_FWD_LATENCY_N] = DNSNAP_FWD_LATENCY_BOUNDS_US;

uint64_t dnsnap__fwd_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static uint64_t now_ms(void)
{
	return dnsnap__fwd_now_us() / 1000u;
}

/* ---------------------------------------------------------------- randomness */

int dnsnap__fwd_rnd(dnsnap_fwd_t *f, uint8_t *out, size_t n)
{
	if (f->rnd_off + n > sizeof f->rnd) {
		size_t got = 0;
		while (got < sizeof f->rnd) {
			ssize_t r = getrandom(f->rnd + got, sizeof f->rnd - got, 0);
			if (r < 0) {
				if (errno == EINTR)
					continue;
				return -1;
			}
			got += (size_t)r;
		}
		f->rnd_off = 0;
	}
	memcpy(out, f->rnd + f->rnd_off, n);
	f->rnd_off += n;
	return 0;
}

/* A new ID (and case) for @p x's next message. @return 0, or an errno value */
static int build(dnsnap_fwd_t *f, struct fq *x)
{
	uint8_t r[2 + RND_0X20];
	size_t need = f->o.use_0x20 ? sizeof r : 2;
	if (dnsnap__fwd_rnd(f, r, need) < 0)
		return errno;
	x->qlen = dnsnap_fwd_build_query(&x->q, ld16be(r), f->o.use_0x20 ? r + 2 : NULL,
					 x->pkt + 2, DNSNAP_FWD_QUERY_MAX);
	if (x->qlen == 0)
		return EINVAL;
	st16be(x->pkt, (uint16_t)x->qlen);
	return 0;
}

/* ---------------------------------------------------------------- deadlines */

static void heap_set(dnsnap_fwd_t *f, size_t i, struct fq *x)
{
	f->heap[i] = x;
	x->heap_i = i;
}

static void heap_up(dnsnap_fwd_t *f, size_t i)
{
	struct fq *x = f->heap[i];
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (f->heap[p]->deadline <= x->deadline)
			break;
		heap_set(f, i, f->heap[p]);
		i = p;
	}
	heap_set(f, i, x);
}

static void heap_down(dnsnap_fwd_t *f, size_t i)
{
	struct fq *x = f->heap[i];
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= f->nheap)
			break;
		if (c + 1 < f->nheap && f->heap[c + 1]->deadline < f->heap[c]->deadline)
			c++;
		if (x->deadline <= f->heap[c]->deadline)
			break;
		heap_set(f, i, f->heap[c]);
		i = c;
	}
	heap_set(f, i, x);
}

/* Queries in flight never outnumber max_outstanding, the heap's room. */
static void arm(dnsnap_fwd_t *f, struct fq *x, uint64_t deadline)
{
	x->deadline = deadline;
	if (x->heap_i == NOT_IN_HEAP) {
		heap_set(f, f->nheap++, x);
		heap_up(f, x->heap_i);
	} else {
		heap_up(f, x->heap_i);
		heap_down(f, x->heap_i);
	}
}

static void disarm(dnsnap_fwd_t *f, struct fq *x)
{
	size_t i = x->heap_i;
	if (i == NOT_IN_HEAP)
		return;
	x->heap_i = NOT_IN_HEAP;
	struct fq *last = f->heap[--f->nheap];
	if (last == x)
		return;
	heap_set(f, i, last);
	heap_up(f, i);
	heap_down(f, last->heap_i);
}

/* ---------------------------------------------------------------- health */

static void report(dnsnap_fwd_t *f, int up, enum dnsnap_fwd_event ev, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void report(dnsnap_fwd_t *f, int up, enum dnsnap_fwd_event ev, const char *fmt, ...)
{
	if (f->h.log == NULL)
		return;
	char msg[384];
	int n = snprintf(msg, sizeof msg, "upstream %s ", f->o.up[up].text);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
	va_end(ap);
	f->h.log(f->h.arg, ev, up, msg);
}

static void set_healthy(struct up_state *u, int h)
{
	atomic_store_explicit(&u->healthy, h, RLX);
}

/* @p x's attempt no longer tries its upstream after its time down. */
static void end_probe(struct up_state *u, struct fq *x)
{
	if (x->probe)
		u->probing = 0;
	x->probe = 0;
}

/* An accepted reply, whatever its RCODE: the upstream answers. */
static void health_alive(dnsnap_fwd_t *f, struct fq *x)
{
	struct up_state *u = &f->up[x->up];
	uint64_t now = dnsnap__fwd_now_us();
	u->last_reply_us = now;
	u->fails = 0;
	u->fail_timeouts = 0;
	u->fail_why[0] = '\0';
	end_probe(u, x);
	if (u->down_until == 0)
		return;
	unsigned long long down_s = (now / 1000u - u->down_since + 500) / 1000u;
	u->down_until = 0;
	u->backoff_ms = 0;
	u->probing = 0;
	set_healthy(u, 1);
	report(f, x->up, DNSNAP_FWD_UP, "up again (down %llu s)", down_s);
}

/* "3 timeouts in a row", "2 timeouts and 1 error in a row (UDP: ...)" */
static void describe_run(const struct up_state *u, char *out, size_t cap)
{
	unsigned t = u->fail_timeouts, e = u->fails - t;
	if (e == 0)
		snprintf(out, cap, "%u timeouts in a row", t);
	else if (t == 0)
		snprintf(out, cap, "%u errors in a row (%s)", e, u->fail_why);
	else
		snprintf(out, cap, "%u %s and %u %s in a row (%s)", t,
			 t == 1 ? "timeout" : "timeouts", e, e == 1 ? "error" : "errors",
			 u->fail_why);
}

/*
 * A failure of @p x's upstream's own (@p why: NULL for a timeout). While it
 * is up: one more in its run (a timeout only for a key not counted in the
 * run yet), down at FAILS_TO_DOWN. While down: its probe's failure doubles
 * the time down; other queries' failures (sent before) change nothing.
 */
static void health_fail(dnsnap_fwd_t *f, struct fq *x, const char *why)
{
	struct up_state *u = &f->up[x->up];
	uint64_t now = now_ms();
	int probe = x->probe;
	end_probe(u, x);
	if (u->down_until != 0) {
		if (!probe)
			return;
		u->backoff_ms = u->backoff_ms * 2 > DOWN_MAX_MS ? DOWN_MAX_MS : u->backoff_ms * 2;
		u->down_until = now + u->backoff_ms;
		report(f, x->up, DNSNAP_FWD_STILL_DOWN, "still down: %s, retried in %u s",
		       why != NULL ? why : "no reply in time", u->backoff_ms / 1000u);
		return;
	}
	if (why == NULL) {
		for (unsigned i = 0; i < u->fail_timeouts; i++)
			if (u->fail_keys[i] == x->hash)
				return;
		u->fail_keys[u->fail_timeouts++] = x->hash;
	} else {
		snprintf(u->fail_why, sizeof u->fail_why, "%s", why);
	}
	if (++u->fails < FAILS_TO_DOWN)
		return;
	char run[sizeof u->fail_why + 64];
	describe_run(u, run, sizeof run);
	u->fails = 0;
	u->fail_timeouts = 0;
	u->backoff_ms = DOWN_FIRST_MS;
	u->down_until = now + u->backoff_ms;
	u->down_since = now;
	set_healthy(u, 0);
	report(f, x->up, DNSNAP_FWD_DOWN, "down: %s, retried in %u s", run,
	       u->backoff_ms / 1000u);
}

/*
 * The upstream of @p x's next attempt: the first usable one in the order
 * given (after the previous attempt's, from the second attempt on). Down
 * ones are usable again for one query once their time is up; when none is
 * usable, the one down the longest.
 */
static int pick_upstream(dnsnap_fwd_t *f, struct fq *x, uint64_t now)
{
	int n = f->o.nup;
	int start = x->attempts == 0 ? 0 : (x->up + 1) % n;
	int longest = start;
	for (int k = 0; k < n; k++) {
		int i = (start + k) % n;
		struct up_state *u = &f->up[i];
		if (u->down_until == 0)
			return i;
		if (now >= u->down_until && !u->probing) {
			u->probing = 1;
			x->probe = 1;
			return i;
		}
		if (u->down_since < f->up[longest].down_since)
			longest = i;
	}
	return longest;
}

/* Whether errno value @p e is this host's failure, not the upstream's. */
static int local_errno(int e)
{
	return e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM || e == EAGAIN ||
	       e == ENOSPC || e == EAFNOSUPPORT || e == EINVAL;
}

/* ---------------------------------------------------------------- attempts */

void dnsnap__fwd_close_attempt(dnsnap_fwd_t *f, struct fq *x)
{
	if (x->fd >= 0)
		close(x->fd);   /* also leaves the epoll set: the fd is ours alone */
	x->fd = -1;
	x->state = ST_IDLE;
	disarm(f, x);
	dnsnap_free(x->tcp_buf);
	x->tcp_buf = NULL;
}

/* The attempt ended without an answer (@p how, END_*; @p why: the upstream's
 * failure, for END_ERROR); the next one goes on. */
static void end_attempt(dnsnap_fwd_t *f, struct fq *x, int how, const char *why)
{
	struct up_state *u = &f->up[x->up];
	dnsnap__fwd_close_attempt(f, x);
	if (how == END_TIMEOUT) {
		INC(u->timeouts);
	} else {
		INC(u->errors);
		x->any_error = 1;
	}
	/* A timeout while the upstream answered other queries is this name's
	 * (a broken delegation behind a working resolver), not the upstream's:
	 * it does not count towards marking it down, or any client could move
	 * every query to the next upstream by asking for a broken name. */
	if (how == END_ERROR || (how == END_TIMEOUT && u->last_reply_us <= x->sent_us))
		health_fail(f, x, how == END_ERROR ? why : NULL);
	else
		end_probe(u, x);
	dnsnap__fwd_next_attempt(f, x);
}

/* The attempt's socket failed with errno value @p e (@p proto: "UDP", "TCP"). */
static void end_errno(dnsnap_fwd_t *f, struct fq *x, const char *proto, int e)
{
	char why[96];
	snprintf(why, sizeof why, "%s: %s", proto, strerror(e));
	end_attempt(f, x, local_errno(e) ? END_LOCAL : END_ERROR, why);
}

static int watch(dnsnap_fwd_t *f, struct fq *x, int op, uint32_t events)
{
	struct epoll_event e = { .events = events, .data.ptr = x };
	return epoll_ctl(f->ep, op, x->fd, &e);
}

static int same_addr(const struct sockaddr_storage *a, socklen_t alen,
		     const dnsnap_fwd_upstream_t *u)
{
	if (a->ss_family != u->addr.ss_family)
		return 0;
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)&u->addr;
		return alen >= sizeof *x && x->sin_port == y->sin_port &&
		       x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)&u->addr;
		return alen >= sizeof *x && x->sin6_port == y->sin6_port &&
		       memcmp(&x->sin6_addr, &y->sin6_addr, sizeof x->sin6_addr) == 0;
	}
	return 0;
}

/* A new socket of @p type connect()ed to @p x's upstream, in the epoll set.
 * @return 0, or an errno value */
static int open_socket(dnsnap_fwd_t *f, struct fq *x, int type, uint32_t events)
{
	const dnsnap_fwd_upstream_t *u = &f->o.up[x->up];
	int fd = socket(u->addr.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	if (connect(fd, (const struct sockaddr *)&u->addr, u->addr_len) < 0 &&
	    errno != EINPROGRESS) {
		int e = errno;
		close(fd);
		return e;
	}
	x->fd = fd;
	if (watch(f, x, EPOLL_CTL_ADD, events) < 0) {
		int e = errno;
		close(fd);
		x->fd = -1;
		return e;
	}
	return 0;
}

static void sent(dnsnap_fwd_t *f, struct fq *x, int state)
{
	uint64_t us = dnsnap__fwd_now_us();
	x->state = state;
	x->sent_us = us;
	arm(f, x, us / 1000u + f->o.timeout_ms);
	INC(f->up[x->up].queries);
}

/* @return 0, or an errno value */
static int udp_start(dnsnap_fwd_t *f, struct fq *x)
{
	int e = build(f, x);
	if (e == 0)
		e = open_socket(f, x, SOCK_DGRAM, EPOLLIN);
	if (e != 0)
		return e;
	if (send(x->fd, x->pkt + 2, x->qlen, 0) != (ssize_t)x->qlen) {
		e = errno;
		dnsnap__fwd_close_attempt(f, x);
		return e;
	}
	sent(f, x, ST_UDP);
	return 0;
}

/* @return 0, or an errno value */
static int tcp_start(dnsnap_fwd_t *f, struct fq *x)
{
	int e = build(f, x);
	if (e == 0)
		e = open_socket(f, x, SOCK_STREAM, EPOLLOUT);
	if (e != 0)
		return e;
	x->tcp_off = 0;
	sent(f, x, ST_TCP_CONNECT);
	return 0;
}

void dnsnap__fwd_next_attempt(dnsnap_fwd_t *f, struct fq *x)
{
	while (x->attempts < f->o.tries) {
		x->up = pick_upstream(f, x, now_ms());
		x->attempts++;
		int e = udp_start(f, x);
		if (e == 0)
			return;
		/* no socket, or the send failed: an error, the upstream's or ours */
		INC(f->up[x->up].errors);
		x->any_error = 1;
		if (local_errno(e)) {
			end_probe(&f->up[x->up], x);
		} else {
			char why[96];
			snprintf(why, sizeof why, "UDP: %s", strerror(e));
			health_fail(f, x, why);
		}
	}
	dnsnap__fwd_finish(f, x, x->any_error ? DNSNAP_FWD_FAILED : DNSNAP_FWD_TIMEOUT, x->err,
			   x->err_len);
}

static void add_latency(struct up_state *u, uint64_t us)
{
	unsigned i = 0;
	while (i < DNSNAP_FWD_LATENCY_N && us > lat_bounds_us[i])
		i++;
	atomic_fetch_add_explicit(&u->lat[i], 1, RLX);
	atomic_fetch_add_explicit(&u->lat_sum_us, us, RLX);
}

/* An accepted reply (the checks passed) of @p x's attempt. */
static void got_reply(dnsnap_fwd_t *f, struct fq *x, const uint8_t *r, size_t n, int tcp)
{
	struct up_state *u = &f->up[x->up];
	unsigned rcode = r[3] & 0x0f;
	if (r[2] & F_TC) {
		if (tcp) {
			end_attempt(f, x, END_ERROR, "TCP: a reply with TC=1");
			return;
		}
		health_alive(f, x);
		INC(u->tcp_fallbacks);
		dnsnap__fwd_close_attempt(f, x);
		int e = tcp_start(f, x);
		if (e != 0)
			end_errno(f, x, "TCP", e);
		return;
	}
	health_alive(f, x);
	if (rcode == RCODE_NOERROR || rcode == RCODE_NXDOMAIN) {
		INC(u->answers);
		add_latency(u, dnsnap__fwd_now_us() - x->sent_us);
		/* over TCP r is x->tcp_buf, which close_attempt() would free */
		uint8_t *keep = x->tcp_buf;
		x->tcp_buf = NULL;
		dnsnap__fwd_close_attempt(f, x);
		dnsnap__fwd_finish(f, x, DNSNAP_FWD_ANSWER, r, n);
		dnsnap_free(keep);
		return;
	}
	/* SERVFAIL, REFUSED ...: about the name, not the upstream */
	uint8_t *copy = dnsnap_malloc(n);
	if (copy != NULL) {
		memcpy(copy, r, n);
		dnsnap_free(x->err);
		x->err = copy;
		x->err_len = n;
	}
	end_attempt(f, x, END_RCODE, NULL);
}

static void on_udp(dnsnap_fwd_t *f, struct fq *x)
{
	const dnsnap_fwd_upstream_t *up = &f->o.up[x->up];
	for (;;) {
		struct sockaddr_storage from;
		socklen_t flen = sizeof from;
		ssize_t n = recvfrom(x->fd, f->buf, sizeof f->buf, 0, (struct sockaddr *)&from,
				     &flen);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			if (errno == EINTR)
				continue;
			end_errno(f, x, "UDP", errno);   /* ECONNREFUSED: ICMP */
			return;
		}
		if (!same_addr(&from, flen, up) ||
		    !dnsnap_fwd_reply_matches(x->pkt + 2, x->qlen, f->buf, (size_t)n,
					      f->o.use_0x20)) {
			INC(f->up[x->up].mismatched);
			continue;
		}
		got_reply(f, x, f->buf, (size_t)n, 0);
		return;
	}
}

static void on_tcp_write(dnsnap_fwd_t *f, struct fq *x)
{
	if (x->state == ST_TCP_CONNECT) {
		int err = 0;
		socklen_t l = sizeof err;
		if (getsockopt(x->fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0)
			err = errno;
		if (err != 0) {
			end_errno(f, x, "TCP", err);
			return;
		}
		x->state = ST_TCP_WRITE;
	}
	size_t total = 2 + x->qlen;
	while (x->tcp_off < total) {
		ssize_t n = send(x->fd, x->pkt + x->tcp_off, total - x->tcp_off, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			if (errno == EINTR)
				continue;
			end_errno(f, x, "TCP", errno);
			return;
		}
		x->tcp_off += (size_t)n;
	}
	x->state = ST_TCP_READ;
	x->tcp_off = 0;
	x->tcp_need = 0;
	if (watch(f, x, EPOLL_CTL_MOD, EPOLLIN) < 0)
		end_attempt(f, x, END_LOCAL, NULL);
}

/* Read into @p p up to @p want bytes. @return bytes read, 0 for EAGAIN, -1
 * for an error (errno) or the end of the stream (errno 0) */
static ssize_t tcp_read(int fd, uint8_t *p, size_t want)
{
	for (;;) {
		ssize_t n = recv(fd, p, want, 0);
		if (n > 0)
			return n;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n == 0)
			errno = 0;
		return -1;
	}
}

/* @return 1 the reply is whole in x->tcp_buf, 0 not yet, -1 the attempt ended */
static int tcp_take(dnsnap_fwd_t *f, struct fq *x)
{
	while (x->tcp_need == 0) {
		ssize_t n = tcp_read(x->fd, x->tcp_len + x->tcp_off, 2 - x->tcp_off);
		if (n == 0)
			return 0;
		if (n < 0)
			goto failed;
		x->tcp_off += (size_t)n;
		if (x->tcp_off < 2)
			continue;
		x->tcp_need = ld16be(x->tcp_len);
		x->tcp_off = 0;
		if (x->tcp_need < HDR) {
			end_attempt(f, x, END_ERROR, "TCP: a reply shorter than a header");
			return -1;
		}
		if ((x->tcp_buf = dnsnap_malloc(x->tcp_need)) == NULL) {
			end_attempt(f, x, END_LOCAL, NULL);
			return -1;
		}
	}
	while (x->tcp_off < x->tcp_need) {
		ssize_t n = tcp_read(x->fd, x->tcp_buf + x->tcp_off, x->tcp_need - x->tcp_off);
		if (n == 0)
			return 0;
		if (n < 0)
			goto failed;
		x->tcp_off += (size_t)n;
	}
	return 1;
failed:
	if (errno == 0)
		end_attempt(f, x, END_ERROR, "TCP: closed before the whole reply");
	else
		end_errno(f, x, "TCP", errno);
	return -1;
}

static void on_tcp_read(dnsnap_fwd_t *f, struct fq *x)
{
	if (tcp_take(f, x) != 1)
		return;
	if (!dnsnap_fwd_reply_matches(x->pkt + 2, x->qlen, x->tcp_buf, x->tcp_need,
				      f->o.use_0x20)) {
		/* the connection was ours alone: nothing else will come */
		INC(f->up[x->up].mismatched);
		end_attempt(f, x, END_ERROR, "TCP: a reply to another query");
		return;
	}
	got_reply(f, x, x->tcp_buf, x->tcp_need, 1);
}

void dnsnap__fwd_on_event(dnsnap_fwd_t *f, struct fq *x, uint32_t events)
{
	switch (x->state) {
	case ST_UDP:
		on_udp(f, x);
		break;
	case ST_TCP_CONNECT:
	case ST_TCP_WRITE:
		if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
			on_tcp_write(f, x);
		break;
	case ST_TCP_READ:
		on_tcp_read(f, x);
		break;
	}
}

void dnsnap__fwd_expire(dnsnap_fwd_t *f)
{
	uint64_t now = now_ms();
	while (f->nheap > 0 && f->heap[0]->deadline <= now)
		end_attempt(f, f->heap[0], END_TIMEOUT, NULL);
}
