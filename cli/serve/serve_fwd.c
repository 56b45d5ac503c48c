/*
 * serve_fwd.c: misses handed to the forwarder (forward.c) and its answers
 * given to the clients that waited (server.h).
 *
 * A miss, with --upstream, becomes a waiter: a copy of the query and where
 * to answer it. The forwarder's done() hook (on_done(), in its thread) gets
 * every waiter of a key at once with the upstream's reply or the failure.
 */
#include "server.h"

struct waiter *waiter_new(const uint8_t *msg, size_t len, int64_t t0)
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
 * query came in on (the forwarder's thread may: sendmsg() on one socket from
 * several threads is safe), over TCP through the TCP thread. Frees @p w. */
static void waiter_answer(struct server *s, struct waiter *w, const uint8_t *reply, size_t len)
{
	struct tstat *cnt = &s->fwd_cnt;
	if (!w->tcp) {
		if (len > 0) {
			if (udp_send(w, reply, len) < 0)
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
void on_done(void *arg, enum fwd_result r, const uint8_t *reply, size_t rlen,
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
			if (udp_send(w, out, len) < 0)
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

void on_rejected(void *arg, void *waiter, int why)
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

void forward(struct server *s, struct tstat *cnt, struct waiter *w,
		    const dnsnap_query_t *q)
{
	if (fwd_submit(s->fwd, q, w) != FWD_QUEUED)
		drop_or_stale(s, cnt, w, q, FWD_FULL);
}
