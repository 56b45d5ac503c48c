/*
 * engine/forward/: libdnsnap's upstream client (forward.h, installed as
 * <dnsnap/forward.h>): random IDs and ports, reply checks, TCP fallback,
 * health, one query per key. libc and pthreads only.
 * - forward.c (this file): the interface, the loop, submissions and the
 *   table of queries in flight;
 * - forward_attempt.c: one query's attempts (sockets, UDP, TCP), the
 *   deadlines, the upstreams' health;
 * - forward_msg.c: the query sent and the checks of a reply, no sockets;
 * - forward_int.h: what forward.c and forward_attempt.c share (private).
 *
 * How:
 * - One epoll set holds every attempt's socket and an eventfd; whoever runs
 *   the loop (the library's thread, or the embedder through
 *   dnsnap_fwd_process()) is alone in touching the queries in flight, so
 *   they need no lock.
 * - dnsnap_fwd_submit() (any thread) takes one of the max_outstanding slots
 *   with an atomic add (so that it can answer DNSNAP_FWD_FULL at once),
 *   copies the question into one small struct, appends it to a
 *   mutex-protected FIFO and, when the FIFO was empty, writes the eventfd.
 * - The loop takes the whole FIFO and looks each key up in its table of
 *   queries in flight (chained hash on the key bytes, XXH3 with a random
 *   seed so that clients cannot choose collisions; bounded by
 *   max_outstanding). A key in flight gets the waiter appended and the slot
 *   back (rejected() past max_waiters); a new key's struct becomes the query
 *   in flight and its first attempt starts.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "../../format/internal.h"
#include "alloc.h"
#include "forward_int.h"

#define DEF_TIMEOUT_MS 1000
#define DEF_TRIES 3
#define DEF_OUTSTANDING 2048
#define DEF_WAITERS 256
#define MAX_EVENTS 64

#define LD(x) atomic_load_explicit(&(x), RLX)

/* ---------------------------------------------------------------- the table */

static struct fq **slot_of(dnsnap_fwd_t *f, const struct fq *s)
{
	struct fq **p = &f->table[s->hash & f->tmask];
	while (*p != NULL && ((*p)->hash != s->hash || (*p)->q.key_len != s->q.key_len ||
			      memcmp((*p)->q.key, s->q.key, s->q.key_len) != 0))
		p = &(*p)->next;
	return p;
}

static void unlink_query(dnsnap_fwd_t *f, struct fq *x)
{
	struct fq **p = slot_of(f, x);
	if (*p == x)
		*p = x->next;
	x->next = NULL;
}

static void release_slot(dnsnap_fwd_t *f)
{
	if (atomic_fetch_sub(&f->slots, 1) == 1) {
		pthread_mutex_lock(&f->dmu);
		pthread_cond_broadcast(&f->dcv);
		pthread_mutex_unlock(&f->dmu);
	}
}

void dnsnap__fwd_finish(dnsnap_fwd_t *f, struct fq *x, enum dnsnap_fwd_result r,
			const uint8_t *reply, size_t len)
{
	unlink_query(f, x);
	atomic_fetch_sub_explicit(&f->in_flight, 1, RLX);
	f->h.done(f->h.arg, r, reply, len, x->waiters, x->nw);
	if (x->waiters != x->inline_w)
		dnsnap_free(x->waiters);
	dnsnap_free(x->tcp_buf);
	dnsnap_free(x->err);
	dnsnap_free(x);
	release_slot(f);
}

/* ---------------------------------------------------------------- submissions */

/* One waiter more for the query in flight @p x. */
static void add_waiter(dnsnap_fwd_t *f, struct fq *x, void *w)
{
	if (x->nw >= f->o.max_waiters) {
		f->h.rejected(f->h.arg, w, DNSNAP_FWD_KEY_FULL);
		return;
	}
	if (x->nw == x->capw) {
		size_t cap = x->capw * 2;
		void **a = dnsnap_malloc(cap * sizeof *a);
		if (a == NULL) {
			f->h.rejected(f->h.arg, w, DNSNAP_FWD_FULL);
			return;
		}
		memcpy(a, x->waiters, x->nw * sizeof *a);
		if (x->waiters != x->inline_w)
			dnsnap_free(x->waiters);
		x->waiters = a;
		x->capw = cap;
	}
	x->waiters[x->nw++] = w;
	atomic_fetch_add_explicit(&f->coalesced, 1, RLX);
}

/* Submission @p s joins its key's query in flight, or becomes it (its first
 * attempt starts when @p start). */
static void take_one(dnsnap_fwd_t *f, struct fq *s, int start)
{
	struct fq **p = slot_of(f, s);
	struct fq *x = *p;
	if (x == NULL) {
		s->next = NULL;
		*p = s;
		atomic_fetch_add_explicit(&f->in_flight, 1, RLX);
		if (start)
			dnsnap__fwd_next_attempt(f, s);
		return;
	}
	void *w = s->inline_w[0];
	dnsnap_free(s);
	release_slot(f);
	add_waiter(f, x, w);
}

static void take_queue(dnsnap_fwd_t *f, int start)
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

/* ---------------------------------------------------------------- the loop */

/*
 * Wait at most @p timeout ms (-1: without bound) for the set, then do what
 * is ready. An event only ends its own query (which has one socket, so one
 * event in the batch); the FIFO only adds queries: no event of the batch
 * points to a freed query. @return the events handled, or -errno
 */
static int run_batch(dnsnap_fwd_t *f, int timeout)
{
	struct epoll_event evs[MAX_EVENTS];
	int n = epoll_wait(f->ep, evs, MAX_EVENTS, timeout);
	if (n < 0 && errno != EINTR)
		return -errno;
	for (int i = 0; i < n; i++) {
		if (evs[i].data.ptr == NULL)
			take_queue(f, !atomic_load(&f->stop));
		else
			dnsnap__fwd_on_event(f, evs[i].data.ptr, evs[i].events);
	}
	dnsnap__fwd_expire(f);
	return n < 0 ? 0 : n;
}

/* What was submitted joins the queries in flight, and all stop. */
static void stop_all(dnsnap_fwd_t *f)
{
	take_queue(f, 0);
	for (size_t i = 0; i <= f->tmask; i++) {
		while (f->table[i] != NULL) {
			struct fq *x = f->table[i];
			dnsnap__fwd_close_attempt(f, x);
			dnsnap__fwd_finish(f, x, DNSNAP_FWD_STOPPED, NULL, 0);
		}
	}
}

static void *fwd_main(void *arg)
{
	dnsnap_fwd_t *f = arg;
	while (!atomic_load(&f->stop))
		run_batch(f, dnsnap_fwd_timeout_ms(f));
	stop_all(f);
	return NULL;
}

int dnsnap_fwd_fd(const dnsnap_fwd_t *f)
{
	return f->ep;
}

int dnsnap_fwd_timeout_ms(const dnsnap_fwd_t *f)
{
	if (f->nheap == 0)
		return -1;
	uint64_t now = dnsnap__fwd_now_us() / 1000u, d = f->heap[0]->deadline;
	return d <= now ? 0 : d - now > INT_MAX ? INT_MAX : (int)(d - now);
}

int dnsnap_fwd_process(dnsnap_fwd_t *f)
{
	if (atomic_load(&f->started))
		return DNSNAP_EINVAL;
	int n;
	while ((n = run_batch(f, 0)) == MAX_EVENTS) {
		/* more may be ready: the set is level-triggered for us too */
	}
	return n < 0 ? n : DNSNAP_OK;
}

/* ---------------------------------------------------------------- interface */

static int check_opts(const dnsnap_fwd_opts_t *o, const dnsnap_fwd_hooks_t *h,
		      dnsnap_diag_t *diag)
{
	if (o->nup < 1 || o->nup > DNSNAP_FWD_MAX_UPSTREAMS)
		return dnsnap__diag(diag, DNSNAP_EINVAL, 0, "%d upstreams: 1 to %d are possible",
				    o->nup, DNSNAP_FWD_MAX_UPSTREAMS);
	for (int i = 0; i < o->nup; i++) {
		int fam = o->up[i].addr.ss_family;
		if ((fam != AF_INET && fam != AF_INET6) || o->up[i].addr_len == 0)
			return dnsnap__diag(diag, DNSNAP_EINVAL, 0,
					    "upstream %.64s: not an IPv4 or IPv6 address",
					    o->up[i].text);
	}
	if (h->done == NULL || h->rejected == NULL)
		return dnsnap__diag(diag, DNSNAP_EINVAL, 0,
				    "the forwarder needs both its done and rejected hooks");
	return DNSNAP_OK;
}

/* The epoll set with the eventfd in it. @return DNSNAP_OK, -errno */
static int open_set(dnsnap_fwd_t *f, dnsnap_diag_t *diag)
{
	f->ep = epoll_create1(EPOLL_CLOEXEC);
	f->ev = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (f->ep < 0 || f->ev < 0)
		return dnsnap__diag(diag, -errno, 0, "epoll or eventfd: %s", strerror(errno));
	struct epoll_event e = { .events = EPOLLIN, .data.ptr = NULL };
	if (epoll_ctl(f->ep, EPOLL_CTL_ADD, f->ev, &e) < 0)
		return dnsnap__diag(diag, -errno, 0, "epoll_ctl: %s", strerror(errno));
	return DNSNAP_OK;
}

int dnsnap_fwd_new(const dnsnap_fwd_opts_t *o, const dnsnap_fwd_hooks_t *h, dnsnap_fwd_t **out,
		   dnsnap_diag_t *diag)
{
	int err = check_opts(o, h, diag);
	if (err != DNSNAP_OK)
		return err;
	dnsnap_fwd_t *f = dnsnap_calloc(1, sizeof *f);
	if (f == NULL)
		return dnsnap__diag(diag, DNSNAP_ENOMEM, 0, "out of memory");
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
	f->table = dnsnap_calloc(buckets, sizeof *f->table);
	f->heap = dnsnap_calloc(f->o.max_outstanding, sizeof *f->heap);
	if (f->table == NULL || f->heap == NULL) {
		err = dnsnap__diag(diag, DNSNAP_ENOMEM, 0,
				   "out of memory for %u outstanding queries", f->o.max_outstanding);
		goto fail;
	}
	if (dnsnap__fwd_rnd(f, (uint8_t *)&f->seed, sizeof f->seed) < 0) {
		err = dnsnap__diag(diag, -errno, 0, "getrandom: %s", strerror(errno));
		goto fail;
	}
	if ((err = open_set(f, diag)) != DNSNAP_OK)
		goto fail;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&f->dcv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&f->mu, NULL);
	pthread_mutex_init(&f->dmu, NULL);
	*out = f;
	return DNSNAP_OK;
fail:
	if (f->ep >= 0)
		close(f->ep);
	if (f->ev >= 0)
		close(f->ev);
	dnsnap_free(f->table);
	dnsnap_free(f->heap);
	dnsnap_free(f);
	return err;
}

int dnsnap_fwd_start(dnsnap_fwd_t *f)
{
	if (atomic_exchange(&f->started, 1))
		return DNSNAP_EINVAL;
	int rc = pthread_create(&f->thread, NULL, fwd_main, f);
	if (rc != 0) {
		atomic_store(&f->started, 0);
		return -rc;
	}
	return DNSNAP_OK;
}

static void wake(dnsnap_fwd_t *f)
{
	uint64_t one = 1;
	if (write(f->ev, &one, sizeof one) < 0) {
		/* EAGAIN: the counter is full, so the loop is woken anyway */
	}
}

int dnsnap_fwd_submit(dnsnap_fwd_t *f, const dnsnap_query_t *q, void *waiter)
{
	if (atomic_fetch_add(&f->slots, 1) >= f->o.max_outstanding) {
		atomic_fetch_sub(&f->slots, 1);  /* not the last: never 0 here */
		return DNSNAP_FWD_FULL;
	}
	struct fq *s = NULL;
	if (q->question_end <= sizeof s->msg && q->question_end <= q->len &&
	    q->key_len <= sizeof q->key)
		s = dnsnap_malloc(sizeof *s);
	if (s == NULL) {
		release_slot(f);
		return DNSNAP_FWD_FULL;
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
	/* The loop reads the eventfd before it takes the FIFO: one write per
	 * FIFO that was empty wakes it for everything appended after. */
	if (was_empty)
		wake(f);
	return DNSNAP_FWD_QUEUED;
}

/* Without the library's thread: the caller runs the loop until drained. */
static int drain_here(dnsnap_fwd_t *f, unsigned ms)
{
	uint64_t until = dnsnap__fwd_now_us() / 1000u + ms;
	while (atomic_load(&f->slots) != 0) {
		uint64_t now = dnsnap__fwd_now_us() / 1000u;
		if (now >= until)
			break;
		int t = dnsnap_fwd_timeout_ms(f);
		if (t < 0 || (uint64_t)t > until - now)
			t = (int)(until - now);
		if (run_batch(f, t) < 0)
			break;
	}
	return atomic_load(&f->slots) == 0 ? DNSNAP_OK : -ETIMEDOUT;
}

int dnsnap_fwd_drain(dnsnap_fwd_t *f, unsigned ms)
{
	if (!atomic_load(&f->started))
		return drain_here(f, ms);
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
	int rc = atomic_load(&f->slots) == 0 ? DNSNAP_OK : -ETIMEDOUT;
	pthread_mutex_unlock(&f->dmu);
	return rc;
}

void dnsnap_fwd_free(dnsnap_fwd_t *f)
{
	if (f == NULL)
		return;
	atomic_store(&f->stop, 1);
	if (atomic_load(&f->started)) {
		wake(f);
		pthread_join(f->thread, NULL);
	} else {
		stop_all(f);
	}
	close(f->ep);
	close(f->ev);
	pthread_cond_destroy(&f->dcv);
	pthread_mutex_destroy(&f->mu);
	pthread_mutex_destroy(&f->dmu);
	dnsnap_free(f->table);
	dnsnap_free(f->heap);
	dnsnap_free(f);
}

void dnsnap_fwd_stats(const dnsnap_fwd_t *f, dnsnap_fwd_stats_t *out)
{
	memset(out, 0, sizeof *out);
	out->in_flight = LD(f->in_flight);
	out->outstanding = LD(f->slots);
	out->coalesced = LD(f->coalesced);
	out->nup = f->o.nup;
	for (int i = 0; i < f->o.nup; i++) {
		const struct up_state *u = &f->up[i];
		dnsnap_fwd_upstream_stats_t *o = &out->up[i];
		snprintf(o->name, sizeof o->name, "%s", f->o.up[i].text);
		o->queries = LD(u->queries);
		o->answers = LD(u->answers);
		o->timeouts = LD(u->timeouts);
		o->errors = LD(u->errors);
		o->mismatched = LD(u->mismatched);
		o->tcp_fallbacks = LD(u->tcp_fallbacks);
		o->healthy = LD(u->healthy);
		for (int b = 0; b <= DNSNAP_FWD_LATENCY_N; b++)
			o->latency[b] = LD(u->lat[b]);
		o->latency_sum_us = LD(u->lat_sum_us);
	}
}
