/*
 * forward.c: the upstream side of `dnsnap serve --upstream` (forward.h says
 * what it does; this says how).
 *
 * - One thread, one epoll set. fwd_submit() (any thread) takes one of the
 *   max_outstanding slots with an atomic add (so that it can answer FWD_FULL
 *   at once), copies the question into one small struct, appends it to a
 *   mutex-protected FIFO and, when the FIFO was empty, writes an eventfd.
 * - The thread takes the whole FIFO and looks each key up in its table of
 *   queries in flight (chained hash on the key bytes, XXH3 with a random
 *   seed so that clients cannot choose collisions; bounded by
 *   max_outstanding; the thread alone touches it, so no lock). A key in
 *   flight gets the waiter appended and the slot back (rejected() past
 *   max_waiters); a new key's struct becomes the query in flight.
 * - An attempt: a new UDP socket connect()ed to the upstream (the kernel
 *   picks a random ephemeral port and drops datagrams from anywhere else),
 *   the query with a random ID (getrandom() into a buffer refilled in bulk),
 *   recvfrom() until EAGAIN on EPOLLIN; each datagram's source is checked
 *   again, then fwd_reply_matches(); a mismatch is counted and the attempt
 *   goes on waiting. TC=1: the same upstream over TCP (non-blocking connect,
 *   2-byte length and the query with a new ID, then length and reply, the
 *   same checks) under a deadline of its own. ECONNREFUSED (ICMP) and any
 *   other socket error end the attempt as that upstream's error.
 * - Deadlines (monotonic milliseconds) sit in a binary min-heap; epoll_wait
 *   sleeps until the earliest.
 * - Nothing in the thread blocks, and nothing is allocated per query beyond
 *   the submission's struct, the waiters' array once it outgrows its inline
 *   room, a TCP reply's buffer and the copy of an upstream's error reply.
 */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "byteorder.h"
#include "forward.h"

#define DEF_TIMEOUT_MS 1000
#define DEF_TRIES 3
#define DEF_OUTSTANDING 2048
#define DEF_WAITERS 256

#define HDR 12
#define QUERY_CAP FWD_QUERY_MAX
#define INLINE_WAITERS 4
#define RND_BUF 4096
#define RND_0X20 32         /* fwd_build_query()'s rnd: one bit per name byte */
#define MAX_EVENTS 64
#define NOT_IN_HEAP SIZE_MAX

#define DOWN_FIRST_MS 1000u
#define DOWN_MAX_MS 30000u
#define FAILS_TO_DOWN 3u

#define F_TC 0x02           /* in the header's third byte */
#define RCODE_NOERROR 0
#define RCODE_NXDOMAIN 3

enum { ST_IDLE, ST_UDP, ST_TCP_CONNECT, ST_TCP_WRITE, ST_TCP_READ };
enum { END_TIMEOUT, END_ERROR };

struct up_state {
	/* written by the thread, read by fwd_stats() (relaxed atomics) */
	_Atomic uint64_t queries, answers, timeouts, errors, mismatched, tcp_fallbacks;
	_Atomic int healthy;
	struct hist latency;
	/* health: the thread's alone */
	unsigned fails;             /* failures in a row */
	uint64_t down_until;        /* ms; 0: up */
	uint64_t down_since;        /* ms, when it went down */
	unsigned backoff_ms;
	int probing;                /* one query tries it after its time down */
	uint64_t last_answer_us;    /* when it last gave an accepted answer */
};

/* A submission, then (when its key is not in flight) the query in flight. */
struct fq {
	struct fq *next;            /* in the FIFO, then in its hash chain */
	uint64_t hash;
	dnsnap_query_t q;           /* q.msg points to msg */
	uint8_t msg[HDR + DNSNAP_NAME_MAX + 4];
	void **waiters;             /* inline_w, or the heap once it outgrows it */
	size_t nw, capw;
	void *inline_w[INLINE_WAITERS];
	/* the attempt */
	int state;
	int fd;
	int up;                     /* index of its upstream */
	int probe;                  /* it is that upstream's probe */
	unsigned attempts;          /* started */
	int any_error;              /* an attempt ended otherwise than by timeout */
	uint64_t deadline;          /* ms */
	size_t heap_i;
	uint64_t sent_us;
	uint8_t pkt[2 + QUERY_CAP]; /* TCP's length, then the query sent */
	size_t qlen;
	/* TCP */
	size_t tcp_off;             /* bytes of pkt written, then of the reply read */
	uint8_t tcp_len[2];
	size_t tcp_need;            /* the reply's length once read */
	uint8_t *tcp_buf;
	/* the last error reply (SERVFAIL, REFUSED ...) */
	uint8_t *err;
	size_t err_len;
};

struct fwd {
	struct fwd_opts o;
	struct fwd_hooks h;
	pthread_t thread;
	int ep, ev;
	/* submissions: any thread appends, the forwarder's thread takes */
	pthread_mutex_t mu;
	struct fq *head, **tail;
	_Atomic unsigned slots;     /* submitted and not yet seen + in flight */
	_Atomic int stop;
	/* fwd_drain() waits here for slots to reach 0 */
	pthread_mutex_t dmu;
	pthread_cond_t dcv;
	/* read by fwd_stats() */
	_Atomic uint64_t outstanding, coalesced;
	struct up_state up[FWD_MAX_UPSTREAMS];
	/* the thread's alone */
	uint64_t seed;
	struct fq **table;
	size_t tmask;
	struct fq **heap;
	size_t nheap;
	uint8_t rnd[RND_BUF];
	size_t rnd_off;
	uint8_t buf[65536];         /* UDP datagrams */
};

#define RLX memory_order_relaxed
#define INC(x) atomic_fetch_add_explicit(&(x), 1, RLX)

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static uint64_t now_ms(void)
{
	return now_us() / 1000u;
}

/* ---------------------------------------------------------------- randomness */

static int rnd_take(struct fwd *f, uint8_t *out, size_t n)
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

/* A new ID (and case) for @p x's next message. @return 0, -1 */
static int build(struct fwd *f, struct fq *x)
{
	uint8_t r[2 + RND_0X20];
	size_t need = f->o.use_0x20 ? sizeof r : 2;
	if (rnd_take(f, r, need) < 0)
		return -1;
	x->qlen = fwd_build_query(&x->q, ld16be(r), f->o.use_0x20 ? r + 2 : NULL, x->pkt + 2,
				  QUERY_CAP);
	if (x->qlen == 0)
		return -1;
	st16be(x->pkt, (uint16_t)x->qlen);
	return 0;
}

/* ---------------------------------------------------------------- deadlines */

static void heap_set(struct fwd *f, size_t i, struct fq *x)
{
	f->heap[i] = x;
	x->heap_i = i;
}

static void heap_up(struct fwd *f, size_t i)
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

static void heap_down(struct fwd *f, size_t i)
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
static void arm(struct fwd *f, struct fq *x, uint64_t deadline)
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

static void disarm(struct fwd *f, struct fq *x)
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

/* ---------------------------------------------------------------- the table */

static struct fq **slot_of(struct fwd *f, const struct fq *s)
{
	struct fq **p = &f->table[s->hash & f->tmask];
	while (*p != NULL && ((*p)->hash != s->hash || (*p)->q.key_len != s->q.key_len ||
			      memcmp((*p)->q.key, s->q.key, s->q.key_len) != 0))
		p = &(*p)->next;
	return p;
}

static void unlink_query(struct fwd *f, struct fq *x)
{
	struct fq **p = slot_of(f, x);
	if (*p == x)
		*p = x->next;
	x->next = NULL;
}

static void release_slot(struct fwd *f)
{
	if (atomic_fetch_sub(&f->slots, 1) == 1) {
		pthread_mutex_lock(&f->dmu);
		pthread_cond_broadcast(&f->dcv);
		pthread_mutex_unlock(&f->dmu);
	}
}

/* ---------------------------------------------------------------- health */

static void set_healthy(struct up_state *u, int h)
{
	atomic_store_explicit(&u->healthy, h, RLX);
}

static void health_ok(struct fwd *f, struct fq *x)
{
	struct up_state *u = &f->up[x->up];
	u->last_answer_us = now_us();
	u->fails = 0;
	u->down_until = 0;
	u->backoff_ms = 0;
	if (x->probe)
		u->probing = 0;
	x->probe = 0;
	set_healthy(u, 1);
}

static void health_fail(struct fwd *f, struct fq *x, uint64_t now)
{
	struct up_state *u = &f->up[x->up];
	u->fails++;
	if (x->probe) {
		/* its time down was up and it failed again: twice as long */
		u->probing = 0;
		x->probe = 0;
		u->backoff_ms = u->backoff_ms * 2 > DOWN_MAX_MS ? DOWN_MAX_MS : u->backoff_ms * 2;
		u->down_until = now + u->backoff_ms;
	} else if (u->down_until == 0 && u->fails >= FAILS_TO_DOWN) {
		u->backoff_ms = DOWN_FIRST_MS;
		u->down_until = now + u->backoff_ms;
		u->down_since = now;
		set_healthy(u, 0);
	}
}

/*
 * The upstream of @p x's next attempt: the first usable one in the order
 * given (after the previous attempt's, from the second attempt on). Down
 * ones are usable again for one query once their time is up; when none is
 * usable, the one down the longest.
 */
static int pick_upstream(struct fwd *f, struct fq *x, uint64_t now)
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

/* ---------------------------------------------------------------- attempts */

static void next_attempt(struct fwd *f, struct fq *x);

static void finish(struct fwd *f, struct fq *x, enum fwd_result r, const uint8_t *reply,
		   size_t len)
{
	unlink_query(f, x);
	atomic_fetch_sub_explicit(&f->outstanding, 1, RLX);
	f->h.done(f->h.arg, r, reply, len, x->waiters, x->nw);
	if (x->waiters != x->inline_w)
		free(x->waiters);
	free(x->tcp_buf);
	free(x->err);
	free(x);
	release_slot(f);
}

static void close_attempt(struct fwd *f, struct fq *x)
{
	if (x->fd >= 0)
		close(x->fd);   /* also leaves the epoll set: the fd is ours alone */
	x->fd = -1;
	x->state = ST_IDLE;
	disarm(f, x);
	free(x->tcp_buf);
	x->tcp_buf = NULL;
}

static void end_attempt(struct fwd *f, struct fq *x, int how)
{
	struct up_state *u = &f->up[x->up];
	close_attempt(f, x);
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
	if (how != END_TIMEOUT || u->last_answer_us <= x->sent_us)
		health_fail(f, x, now_ms());
	next_attempt(f, x);
}

static int watch(struct fwd *f, struct fq *x, int op, uint32_t events)
{
	struct epoll_event e = { .events = events, .data.ptr = x };
	return epoll_ctl(f->ep, op, x->fd, &e);
}

static int same_addr(const struct sockaddr_storage *a, socklen_t alen,
		     const struct fwd_upstream *u)
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

/* A new socket of @p type connect()ed to @p x's upstream, in the epoll set. */
static int open_socket(struct fwd *f, struct fq *x, int type, uint32_t events)
{
	const struct fwd_upstream *u = &f->o.up[x->up];
	int fd = socket(u->addr.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (const struct sockaddr *)&u->addr, u->addr_len) < 0 &&
	    errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	x->fd = fd;
	if (watch(f, x, EPOLL_CTL_ADD, events) < 0) {
		close(fd);
		x->fd = -1;
		return -1;
	}
	return 0;
}

static void sent(struct fwd *f, struct fq *x, int state)
{
	uint64_t us = now_us();
	x->state = state;
	x->sent_us = us;
	arm(f, x, us / 1000u + f->o.timeout_ms);
	INC(f->up[x->up].queries);
}

static int udp_start(struct fwd *f, struct fq *x)
{
	if (build(f, x) < 0 || open_socket(f, x, SOCK_DGRAM, EPOLLIN) < 0)
		return -1;
	if (send(x->fd, x->pkt + 2, x->qlen, 0) != (ssize_t)x->qlen) {
		close_attempt(f, x);
		return -1;
	}
	sent(f, x, ST_UDP);
	return 0;
}

static int tcp_start(struct fwd *f, struct fq *x)
{
	if (build(f, x) < 0 || open_socket(f, x, SOCK_STREAM, EPOLLOUT) < 0)
		return -1;
	x->tcp_off = 0;
	sent(f, x, ST_TCP_CONNECT);
	return 0;
}

static void next_attempt(struct fwd *f, struct fq *x)
{
	while (x->attempts < f->o.tries) {
		x->up = pick_upstream(f, x, now_ms());
		x->attempts++;
		if (udp_start(f, x) == 0)
			return;
		/* no socket, or the send failed: that upstream's error */
		INC(f->up[x->up].errors);
		x->any_error = 1;
		health_fail(f, x, now_ms());
	}
	finish(f, x, x->any_error ? FWD_FAILED : FWD_TIMEOUT, x->err, x->err_len);
}

/* An accepted reply (the checks passed) of @p x's attempt. */
static void got_reply(struct fwd *f, struct fq *x, const uint8_t *r, size_t n, int tcp)
{
	struct up_state *u = &f->up[x->up];
	unsigned rcode = r[3] & 0x0f;
	if (r[2] & F_TC) {
		if (tcp) {
			end_attempt(f, x, END_ERROR);
			return;
		}
		INC(u->tcp_fallbacks);
		close_attempt(f, x);
		if (tcp_start(f, x) < 0)
			end_attempt(f, x, END_ERROR);
		return;
	}
	if (rcode == RCODE_NOERROR || rcode == RCODE_NXDOMAIN) {
		INC(u->answers);
		hist_add(&u->latency, now_us() - x->sent_us);
		health_ok(f, x);
		/* over TCP r is x->tcp_buf, which close_attempt() would free */
		uint8_t *keep = x->tcp_buf;
		x->tcp_buf = NULL;
		close_attempt(f, x);
		finish(f, x, FWD_ANSWER, r, n);
		free(keep);
		return;
	}
	uint8_t *copy = malloc(n);
	if (copy != NULL) {
		memcpy(copy, r, n);
		free(x->err);
		x->err = copy;
		x->err_len = n;
	}
	end_attempt(f, x, END_ERROR);
}

static void on_udp(struct fwd *f, struct fq *x)
{
	const struct fwd_upstream *up = &f->o.up[x->up];
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
			end_attempt(f, x, END_ERROR);   /* ECONNREFUSED: ICMP */
			return;
		}
		if (!same_addr(&from, flen, up) ||
		    !fwd_reply_matches(x->pkt + 2, x->qlen, f->buf, (size_t)n, f->o.use_0x20)) {
			INC(f->up[x->up].mismatched);
			continue;
		}
		got_reply(f, x, f->buf, (size_t)n, 0);
		return;
	}
}

static void on_tcp_write(struct fwd *f, struct fq *x)
{
	if (x->state == ST_TCP_CONNECT) {
		int err = 0;
		socklen_t l = sizeof err;
		if (getsockopt(x->fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0 || err != 0) {
			end_attempt(f, x, END_ERROR);
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
			end_attempt(f, x, END_ERROR);
			return;
		}
		x->tcp_off += (size_t)n;
	}
	x->state = ST_TCP_READ;
	x->tcp_off = 0;
	x->tcp_need = 0;
	if (watch(f, x, EPOLL_CTL_MOD, EPOLLIN) < 0)
		end_attempt(f, x, END_ERROR);
}

/* Read into @p p up to @p want bytes. @return bytes read, 0 for EAGAIN, -1
 * for an error or the end of the stream */
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
		return -1;
	}
}

static void on_tcp_read(struct fwd *f, struct fq *x)
{
	while (x->tcp_need == 0) {
		ssize_t n = tcp_read(x->fd, x->tcp_len + x->tcp_off, 2 - x->tcp_off);
		if (n == 0)
			return;
		if (n < 0)
			goto error;
		x->tcp_off += (size_t)n;
		if (x->tcp_off < 2)
			continue;
		x->tcp_need = ld16be(x->tcp_len);
		x->tcp_off = 0;
		if (x->tcp_need < HDR || (x->tcp_buf = malloc(x->tcp_need)) == NULL)
			goto error;
	}
	while (x->tcp_off < x->tcp_need) {
		ssize_t n = tcp_read(x->fd, x->tcp_buf + x->tcp_off, x->tcp_need - x->tcp_off);
		if (n == 0)
			return;
		if (n < 0)
			goto error;
		x->tcp_off += (size_t)n;
	}
	if (!fwd_reply_matches(x->pkt + 2, x->qlen, x->tcp_buf, x->tcp_need, f->o.use_0x20)) {
		/* the connection was ours alone: nothing else will come */
		INC(f->up[x->up].mismatched);
		goto error;
	}
	got_reply(f, x, x->tcp_buf, x->tcp_need, 1);
	return;
error:
	end_attempt(f, x, END_ERROR);
}

static void on_event(struct fwd *f, struct fq *x, uint32_t events)
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

static void expire(struct fwd *f)
{
	uint64_t now = now_ms();
	while (f->nheap > 0 && f->heap[0]->deadline <= now)
		end_attempt(f, f->heap[0], END_TIMEOUT);
}

/* ---------------------------------------------------------------- submissions */

static void take_one(struct fwd *f, struct fq *s, int start)
{
	struct fq **p = slot_of(f, s);
	struct fq *x = *p;
	if (x == NULL) {
		s->next = NULL;
		*p = s;
		atomic_fetch_add_explicit(&f->outstanding, 1, RLX);
		if (start)
			next_attempt(f, s);
		return;
	}
	void *w = s->inline_w[0];
	free(s);
	release_slot(f);
	if (x->nw >= f->o.max_waiters) {
		f->h.rejected(f->h.arg, w, FWD_KEY_FULL);
		return;
	}
	if (x->nw == x->capw) {
		size_t cap = x->capw * 2;
		void **a = malloc(cap * sizeof *a);
		if (a == NULL) {
			f->h.rejected(f->h.arg, w, FWD_FULL);
			return;
		}
		memcpy(a, x->waiters, x->nw * sizeof *a);
		if (x->waiters != x->inline_w)
			free(x->waiters);
		x->waiters = a;
		x->capw = cap;
	}
	x->waiters[x->nw++] = w;
	atomic_fetch_add_explicit(&f->coalesced, 1, RLX);
}

static void take_queue(struct fwd *f, int start)
{
	uint64_t v;
	if (read(f->ev, &v, sizeof v) < 0) {
		/* EAGAIN: nothing written since the last read; the FIFO may still
		 * hold what was appended meanwhile */
	}
	pthread_mutex_lock(&f->mu);
	struct fq *s = f->head;
	f->head = NULL;
	f->tail = &f->head;
	pthread_mutex_unlock(&f->mu);
	while (s != NULL) {
		struct fq *next = s->next;
		take_one(f, s, start);
		s = next;
	}
}

static void *fwd_main(void *arg)
{
	struct fwd *f = arg;
	struct epoll_event evs[MAX_EVENTS];
	while (!atomic_load(&f->stop)) {
		int timeout = -1;
		if (f->nheap > 0) {
			uint64_t now = now_ms(), d = f->heap[0]->deadline;
			timeout = d <= now ? 0 : d - now > INT_MAX ? INT_MAX : (int)(d - now);
		}
		int n = epoll_wait(f->ep, evs, MAX_EVENTS, timeout);
		/*
		 * An event only ends its own query (which has one socket, so one
		 * event in the batch); the FIFO only adds queries: no event of the
		 * batch points to a freed query.
		 */
		for (int i = 0; i < n; i++) {
			if (evs[i].data.ptr == NULL)
				take_queue(f, !atomic_load(&f->stop));
			else
				on_event(f, evs[i].data.ptr, evs[i].events);
		}
		expire(f);
	}
	/* fwd_free(): what was submitted joins the queries in flight, and all stop */
	take_queue(f, 0);
	for (size_t i = 0; i <= f->tmask; i++) {
		while (f->table[i] != NULL) {
			struct fq *x = f->table[i];
			close_attempt(f, x);
			finish(f, x, FWD_STOPPED, NULL, 0);
		}
	}
	return NULL;
}

/* ---------------------------------------------------------------- interface */

int fwd_new(const struct fwd_opts *o, const struct fwd_hooks *h, struct fwd **out, char *err,
	    size_t errcap)
{
	if (o->nup < 1 || o->nup > FWD_MAX_UPSTREAMS) {
		snprintf(err, errcap, "%d upstreams: 1 to %d are possible", o->nup,
			 FWD_MAX_UPSTREAMS);
		return -1;
	}
	for (int i = 0; i < o->nup; i++) {
		int fam = o->up[i].addr.ss_family;
		if ((fam != AF_INET && fam != AF_INET6) || o->up[i].addr_len == 0) {
			snprintf(err, errcap, "upstream %s: not an IPv4 or IPv6 address",
				 o->up[i].text);
			return -1;
		}
	}
	if (h->done == NULL || h->rejected == NULL) {
		snprintf(err, errcap, "the forwarder needs both its done and rejected hooks");
		return -1;
	}
	struct fwd *f = calloc(1, sizeof *f);
	if (f == NULL) {
		snprintf(err, errcap, "out of memory");
		return -1;
	}
	f->o = *o;
	f->h = *h;
	if (f->o.timeout_ms == 0)
		f->o.timeout_ms = DEF_TIMEOUT_MS;
	if (f->o.tries == 0)
		f->o.tries = DEF_TRIES;
	if (f->o.max_outstanding == 0)
		f->o.max_outstanding = DEF_OUTSTANDING;
	if (f->o.max_waiters == 0)
		f->o.max_waiters = DEF_WAITERS;
	f->ep = f->ev = -1;
	f->tail = &f->head;
	f->rnd_off = sizeof f->rnd;     /* empty: the first take fills it */
	for (int i = 0; i < f->o.nup; i++)
		atomic_init(&f->up[i].healthy, 1);

	size_t buckets = 16;
	while (buckets < 2 * (size_t)f->o.max_outstanding)
		buckets *= 2;
	f->tmask = buckets - 1;
	f->table = calloc(buckets, sizeof *f->table);
	f->heap = calloc(f->o.max_outstanding, sizeof *f->heap);
	if (f->table == NULL || f->heap == NULL) {
		snprintf(err, errcap, "out of memory for %u outstanding queries",
			 f->o.max_outstanding);
		goto fail;
	}
	if (rnd_take(f, (uint8_t *)&f->seed, sizeof f->seed) < 0) {
		snprintf(err, errcap, "getrandom: %s", strerror(errno));
		goto fail;
	}
	f->ep = epoll_create1(EPOLL_CLOEXEC);
	f->ev = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (f->ep < 0 || f->ev < 0) {
		snprintf(err, errcap, "epoll or eventfd: %s", strerror(errno));
		goto fail;
	}
	struct epoll_event e = { .events = EPOLLIN, .data.ptr = NULL };
	if (epoll_ctl(f->ep, EPOLL_CTL_ADD, f->ev, &e) < 0) {
		snprintf(err, errcap, "epoll_ctl: %s", strerror(errno));
		goto fail;
	}
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&f->dcv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&f->mu, NULL);
	pthread_mutex_init(&f->dmu, NULL);
	int rc = pthread_create(&f->thread, NULL, fwd_main, f);
	if (rc != 0) {
		snprintf(err, errcap, "cannot start the forwarder's thread: %s", strerror(rc));
		pthread_cond_destroy(&f->dcv);
		pthread_mutex_destroy(&f->mu);
		pthread_mutex_destroy(&f->dmu);
		goto fail;
	}
	*out = f;
	return 0;
fail:
	if (f->ep >= 0)
		close(f->ep);
	if (f->ev >= 0)
		close(f->ev);
	free(f->table);
	free(f->heap);
	free(f);
	return -1;
}

static void wake(struct fwd *f)
{
	uint64_t one = 1;
	if (write(f->ev, &one, sizeof one) < 0) {
		/* EAGAIN: the counter is full, so the thread is woken anyway */
	}
}

int fwd_submit(struct fwd *f, const dnsnap_query_t *q, void *waiter)
{
	if (atomic_fetch_add(&f->slots, 1) >= f->o.max_outstanding) {
		atomic_fetch_sub(&f->slots, 1);  /* not the last: never 0 here */
		return FWD_FULL;
	}
	struct fq *s = NULL;
	if (q->question_end <= sizeof s->msg && q->question_end <= q->len &&
	    q->key_len <= sizeof q->key)
		s = malloc(sizeof *s);
	if (s == NULL) {
		release_slot(f);
		return FWD_FULL;
	}
	s->q = *q;
	memcpy(s->msg, q->msg, q->question_end);
	s->q.msg = s->msg;
	s->q.len = q->question_end;
	s->hash = XXH3_64bits_withSeed(q->key, q->key_len, f->seed);
	s->inline_w[0] = waiter;
	s->waiters = s->inline_w;
	s->nw = 1;
	s->capw = INLINE_WAITERS;
	s->state = ST_IDLE;
	s->fd = -1;
	s->up = 0;
	s->probe = 0;
	s->attempts = 0;
	s->any_error = 0;
	s->heap_i = NOT_IN_HEAP;
	s->tcp_buf = NULL;
	s->err = NULL;
	s->err_len = 0;
	s->next = NULL;

	pthread_mutex_lock(&f->mu);
	int was_empty = f->head == NULL;
	*f->tail = s;
	f->tail = &s->next;
	pthread_mutex_unlock(&f->mu);
	/* The thread reads the eventfd before it takes the FIFO: one write per
	 * FIFO that was empty wakes it for everything appended after. */
	if (was_empty)
		wake(f);
	return FWD_QUEUED;
}

int fwd_drain(struct fwd *f, unsigned ms)
{
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&f->dmu);
	while (atomic_load(&f->slots) != 0)
		if (pthread_cond_timedwait(&f->dcv, &f->dmu, &until) == ETIMEDOUT)
			break;
	int rc = atomic_load(&f->slots) == 0 ? 0 : -1;
	pthread_mutex_unlock(&f->dmu);
	return rc;
}

void fwd_free(struct fwd *f)
{
	if (f == NULL)
		return;
	atomic_store(&f->stop, 1);
	wake(f);
	pthread_join(f->thread, NULL);
	close(f->ep);
	close(f->ev);
	pthread_cond_destroy(&f->dcv);
	pthread_mutex_destroy(&f->mu);
	pthread_mutex_destroy(&f->dmu);
	free(f->table);
	free(f->heap);
	free(f);
}

#define LD(x) atomic_load_explicit(&(x), RLX)

void fwd_stats(struct fwd *f, struct serve_stats *st)
{
	st->forwarding = 1;
	st->upstream_outstanding += LD(f->outstanding);
	st->upstream_coalesced += LD(f->coalesced);
	if (st->nupstreams < f->o.nup)
		st->nupstreams = f->o.nup;
	for (int i = 0; i < f->o.nup; i++) {
		struct up_state *u = &f->up[i];
		struct upstream_stats *o = &st->up[i];
		snprintf(o->name, sizeof o->name, "%s", f->o.up[i].text);
		o->queries += LD(u->queries);
		o->answers += LD(u->answers);
		o->timeouts += LD(u->timeouts);
		o->errors += LD(u->errors);
		o->mismatched += LD(u->mismatched);
		o->tcp_fallbacks += LD(u->tcp_fallbacks);
		o->healthy = LD(u->healthy);
		hist_sum(&o->latency, &u->latency);
	}
}
