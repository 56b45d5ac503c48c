/*
 * serve_fwd.c: misses handed to the forwarder (the library's, forward.h)
 * and its answers given to the clients that waited (server.h).
 *
 * A miss, with --upstream, becomes a waiter: a copy of the query and where
 * to answer it. The forwarder's done() hook (on_done(), in its thread) gets
 * every waiter of a key at once with the upstream's reply or the failure.
 */
#include "server.h"

struct waiter *waiter_new(const uint8_t *msg, size_t len, const dnsnap_query_t *q, int64_t t0)
{
	struct waiter *w = malloc(sizeof *w + len);
	if (w == NULL)
		return NULL;
	memset(w, 0, sizeof *w);
	memcpy(w->msg, msg, len);
	w->len = len;
	w->t0_us = t0;
	/* the query as parsed, pointing into the waiter's own copy: nothing
	 * downstream (the second level, the forwarder's answer) parses it again */
	w->q = *q;
	w->q.msg = w->msg;
	return w;
}

/* ------------------------------------------------------------ forwarder */

/* A UDP waiter's reply, from the socket its query came in on (any thread:
 * sendmsg() on one socket from several threads is safe), to its address,
 * from the address it asked (a wildcard listener). @return sendmsg()'s */
static ssize_t udp_send(const struct waiter *w, const uint8_t *reply, size_t len)
{
	struct iovec iov = { (void *)reply, len };
	struct msghdr h = {
		.msg_name = (void *)&w->from, .msg_namelen = w->from_len,
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = w->ctl_len ? (void *)w->ctl.buf : NULL,
		.msg_controllen = w->ctl_len,
	};
	return sendmsg(w->fd, &h, MSG_DONTWAIT);
}

/* Send @p len bytes of @p reply to the waiter: over UDP from the socket its
 * query came in on (the forwarder's or the L2 thread may: sendmsg() on one
 * socket from several threads is safe), over TCP through the TCP thread; its
 * latency into @p lat once sent. Frees @p w. */
void waiter_answer(struct server *s, struct tstat *cnt, struct hist *lat, struct waiter *w,
		   const uint8_t *reply, size_t len)
{
	if (!w->tcp) {
		if (len > 0) {
			if (udp_send(w, reply, len) < 0)
				bump(cnt, C_DROP + DROP_SEND);
			else
				hist_add(lat, (uint64_t)(mono_us() - w->t0_us));
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
		d->lat = lat;
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
static void answer_failed(struct server *s, struct tstat *cnt, uint8_t *out, struct waiter *w,
			  const dnsnap_query_t *q, enum dnsnap_fwd_result r, uint32_t now)
{
	size_t len = 0;
	if (s->serve_stale > 0) {
		dnsnap_lookup_t lk = { .now = now, .stale_window = s->serve_stale };
		lk.max_size = (uint16_t)serve_limit(q, w->tcp, waiter_cap(w));
		if (dnsnap_cache_lookup(s->cache, q, &lk, out, waiter_cap(w), &len) == DNSNAP_OK) {
			bump(cnt, lk.stale ? C_STALE : lk.tier == DNSNAP_TIER_MEMORY ? C_HIT_MEM
										     : C_HIT_MAP);
			count_reply(cnt, SERVE_HIT, out, len);
			waiter_answer(s, cnt, &cnt->lat_up, w, out, len);
			return;
		}
	}
	int timeout = r == DNSNAP_FWD_TIMEOUT;
	len = serve_error(w->msg, w->len, 2 /* SERVFAIL */,
			  timeout ? SERVE_EDE_NO_REACHABLE : SERVE_EDE_NETWORK,
			  timeout ? "no upstream answered in time"
			  : r == DNSNAP_FWD_STOPPED ? "the server is stopping"
			  : "every upstream failed",
			  out);
	bump(cnt, C_SERVFAIL_UP);
	count_reply(cnt, SERVE_SERVFAIL, out, len);
	waiter_answer(s, cnt, &cnt->lat_up, w, out, len);
}

/*
 * done() of the forwarder: an upstream query ended. An answer (NOERROR or
 * NXDOMAIN, accepted by the forwarder's checks) is encoded once with the
 * cache's policy (miss_take()): inserted when cacheable, that same encoding
 * sealed for the second level, and every waiter answered from it as a hit
 * would be (its own ID, question spelling, DO, CD, size), without looking
 * up what was just inserted.
 */
void on_done(void *arg, enum dnsnap_fwd_result r, const uint8_t *reply, size_t rlen,
	     void *const *ws, size_t n)
{
	struct server *s = arg;
	struct tstat *cnt = &s->fwd_cnt;
	uint32_t now = server_now(s);
	if (r == DNSNAP_FWD_ANSWER) {
		dnsnap_diag_t d = { 0 };
		size_t vl = 0;
		uint64_t pxat = 0;
		int m = miss_take(s->cache, reply, rlen, now, s->enc, s->l2_val, s->l2_val ? &vl : NULL,
				  &pxat, &d);
		if (m < 0) {
			slog(LOG_INFO, "an upstream answer the cache cannot read: %s", d.msg);
			r = DNSNAP_FWD_FAILED;
		} else if (d.msg[0]) {
			slog(LOG_DEBUG, "an upstream answer %s", d.msg);
		}
		if (m >= 0 && vl > 0)
			l2_write(s, s->enc->key, s->enc->key_len, s->l2_val, vl, pxat);
	}
	for (size_t i = 0; i < n; i++) {
		struct waiter *w = ws[i];
		if (r != DNSNAP_FWD_ANSWER) {
			answer_failed(s, cnt, s->fwd_out, w, &w->q, r, now);
			continue;
		}
		if (answer_waiter(s, cnt, &cnt->lat_up, s->fwd_out, w, s->enc->entry,
				  s->enc->entry_len, now) == 0)
			bump(cnt, C_UP_ANS);
	}
}

/*
 * Answer @p w as a hit would be answered (its own ID, question spelling, DO,
 * CD, size) from @p entry (the one just encoded or taken from the second
 * level, checked), with the cache's TTL policy; SERVFAIL (EDE 23) when it
 * cannot be built. Any thread: @p cnt, @p out (2 + TCP_MSG_MAX bytes) are the
 * calling thread's. Frees @p w. @return 0 answered with the data, -1 SERVFAIL
 */
int answer_waiter(struct server *s, struct tstat *cnt, struct hist *lat, uint8_t *out,
		  struct waiter *w, const uint8_t *entry, size_t entry_len, uint32_t now)
{
	size_t cap = waiter_cap(w), len = 0;
	uint16_t max = (uint16_t)serve_limit(&w->q, w->tcp, cap);
	int err = dnsnap_cache_answer_entry(s->cache, &w->q, entry, entry_len, now, max, out, cap,
					    &len);
	if (err != DNSNAP_OK) {
		answer_failed(s, cnt, out, w, &w->q, DNSNAP_FWD_FAILED, now);
		return -1;
	}
	count_reply(cnt, SERVE_HIT, out, len);
	waiter_answer(s, cnt, lat, w, out, len);
	return 0;
}

/* rejected() of the forwarder: a waiter it could not take (DNSNAP_FWD_KEY_FULL):
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
			if (udp_send(w, out, len) < 0)
				bump(cnt, C_DROP + DROP_SEND);
			free(w);
			return;
		}
	}
	bump(cnt, C_DROP + (why == DNSNAP_FWD_KEY_FULL ? DROP_WAITERS : DROP_OVERLOAD));
	if (w->tcp)
		waiter_answer(s, cnt, &cnt->lat_up, w, NULL, 0); /* the connection stops waiting */
	else
		free(w);
}

void on_rejected(void *arg, void *waiter, int why)
{
	struct server *s = arg;
	struct waiter *w = waiter;
	drop_or_stale(s, &s->fwd_cnt, w, &w->q, why);
}

/* log() of the forwarder: an upstream marked down is a warning, the rest news. */
void on_fwd_log(void *arg, enum dnsnap_fwd_event ev, int upstream, const char *msg)
{
	(void)arg;
	(void)upstream;
	slog(ev == DNSNAP_FWD_DOWN ? LOG_WARNING : LOG_INFO, "%s", msg);
}

/* The forwarder for @p fo's upstreams, its loop in a thread of the library,
 * and on_done()'s buffers. @return 0, or EXIT_USAGE (said) */
int forwarder_start(struct server *s, const dnsnap_fwd_opts_t *fo)
{
	s->enc = malloc(sizeof *s->enc);
	s->fwd_out = malloc(2 + TCP_MSG_MAX);
	if (s->enc == NULL || s->fwd_out == NULL)
		return fail("serve", NULL, "out of memory");
	dnsnap_fwd_hooks_t hooks = {
		.done = on_done, .rejected = on_rejected, .log = on_fwd_log, .arg = s,
	};
	dnsnap_diag_t d;
	if (dnsnap_fwd_new(fo, &hooks, &s->fwd, &d) != DNSNAP_OK)
		return fail("serve", NULL, "%s", d.msg);
	int err = dnsnap_fwd_start(s->fwd);
	if (err != DNSNAP_OK)
		return fail("serve", NULL, "cannot start the forwarder's thread: %s", strerror(-err));
	return 0;
}

/* A miss to the upstream (any thread; @p cnt the caller's). */
void forward_upstream(struct server *s, struct tstat *cnt, struct waiter *w,
		      const dnsnap_query_t *q)
{
	if (dnsnap_fwd_submit(s->fwd, q, w) != DNSNAP_FWD_QUEUED)
		drop_or_stale(s, cnt, w, q, DNSNAP_FWD_FULL);
}

/* A miss of memory and map: to the second level when there is one and it
 * takes it (on_l2() then goes on), else to the upstream. */
void forward(struct server *s, struct tstat *cnt, struct waiter *w, const dnsnap_query_t *q)
{
	if (s->l2_out != NULL) { /* --l2 */
		pthread_rwlock_rdlock(&s->l2_lock);
		int taken = s->l2 != NULL &&
			    dnsnap_l2_get(s->l2, q->key, q->key_len, 0, w) == DNSNAP_OK;
		pthread_rwlock_unlock(&s->l2_lock);
		if (taken)
			return;
	}
	forward_upstream(s, cnt, w, q);
}
