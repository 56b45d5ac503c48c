/*
 * serve_net.c: the sockets of `dnsnap serve`: the UDP workers, the TCP
 * thread, and --allow (server.h; the threads: the top of serve.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli.h"
#include "log.h"
#include "server.h"

/* ------------------------------------------------------------------ ACL */

static int cidr_match(const struct cidr *c, const uint8_t *a)
{
	unsigned full = c->bits / 8, rest = c->bits % 8;
	if (memcmp(c->addr, a, full) != 0)
		return 0;
	return rest == 0 || ((c->addr[full] ^ a[full]) & (0xff00 >> rest) & 0xff) == 0;
}

/* The address bytes of @p sa and its family, an IPv4-mapped IPv6 address
 * as the IPv4 address it is. @return NULL: neither family */
static const uint8_t *addr_of(const struct sockaddr_storage *sa, int *family)
{
	*family = sa->ss_family;
	if (*family == AF_INET)
		return (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr;
	if (*family != AF_INET6)
		return NULL;
	const uint8_t *a = (const uint8_t *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
	if (IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)a)) {
		*family = AF_INET;
		return a + 12;
	}
	return a;
}

int cidr_list_match(const struct cidr *list, int n, const struct sockaddr_storage *sa)
{
	int family;
	const uint8_t *a = addr_of(sa, &family);
	if (a == NULL)
		return 0;
	for (int i = 0; i < n; i++)
		if (list[i].family == family && cidr_match(&list[i], a))
			return 1;
	return 0;
}

/* Whether a query from @p sa is answered (--allow). */
int allowed(const struct server *s, const struct sockaddr_storage *sa)
{
	return cidr_list_match(s->cfg->allow, s->cfg->nallow, sa);
}

int metrics_allowed(void *arg, const struct sockaddr *sa, socklen_t len)
{
	const struct server *s = arg;
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof ss);
	memcpy(&ss, sa, len < sizeof ss ? len : sizeof ss);
	return cidr_list_match(s->cfg->metrics_allow, s->cfg->nmetrics_allow, &ss);
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

/* ------------------------------------------------------------------ UDP */

void *udp_main(void *arg)
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
	struct serve_in in = { .cache = s->cache, .forward = s->fwd.f != NULL };
	while (!atomic_load_explicit(&s->net.stop, memory_order_relaxed)) {
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
			    atomic_load_explicit(&s->net.draining, memory_order_relaxed))
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
				struct waiter *wt = waiter_new(b->q[i], b->in[i].msg_len, &q, t0);
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
				forward(s, &w->cnt, wt);
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
	if (!c->allowed)
		t->ndenied--;
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
			       .forward = s->fwd.f != NULL };
	size_t off = 0;
	while (c->pend == NULL && c->in_len - off >= 2) {
		size_t mlen = dnsnap_load_be16(c->in + off);
		if (c->in_len - off - 2 < mlen)
			break;
		int64_t t0 = mono_us();
		size_t len;
		dnsnap_query_t q;
		dnsnap_lookup_t lk;
		in.now = server_now(s);
		const uint8_t *msg = c->in + off + 2;
		int outcome = serve_handle(&in, msg, mlen, t->out + 2, TCP_MSG_MAX, &len, &q, &lk);
		bump(&s->net.tcp_cnt, C_TCP);
		count_outcome(&s->net.tcp_cnt, outcome, &lk);
		off += 2 + mlen;
		c->last = mono_ms();
		if (outcome == SERVE_DROP)
			continue;
		if (outcome == SERVE_FORWARD) {
			struct waiter *w = waiter_new(msg, mlen, &q, t0);
			if (w == NULL) {
				bump(&s->net.tcp_cnt, C_DROP + DROP_OVERLOAD);
				continue;
			}
			w->tcp = 1;
			w->conn = c->id;
			c->waiting++;
			forward(s, &s->net.tcp_cnt, w);
			continue;
		}
		count_reply(&s->net.tcp_cnt, outcome, t->out + 2, len);
		dnsnap_store_be16(t->out, (uint16_t)len);
		if (conn_send(t, slot, t->out, len + 2) != 0)
			return -1;
		if (!c->allowed && !c->eof) { /* one REFUSED, then the connection ends */
			c->eof = 1;
			conn_watch(t, slot, conn_events(c));
		}
		hist_add(&s->net.tcp_cnt.lat_cache, (uint64_t)(mono_us() - t0));
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
	if (read(s->net.tcp_done_fd, &v, sizeof v) < 0 && errno != EAGAIN)
		slog(LOG_ERR, "eventfd: %s", strerror(errno));
	pthread_mutex_lock(&s->net.tcp_mu);
	struct tcp_done *d = s->net.tcp_done;
	s->net.tcp_done = NULL;
	s->net.tcp_done_tail = &s->net.tcp_done;
	pthread_mutex_unlock(&s->net.tcp_mu);
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
				hist_add(d->lat, (uint64_t)(mono_us() - d->t0_us));
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
	for (int i = 0; i < t->s->net.nls; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)i };
		if (t->s->net.ls[i].tcp_fd >= 0)
			epoll_ctl(t->ep, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, t->s->net.ls[i].tcp_fd,
				  &ev);
	}
	t->listening = on;
}

/* The source a connection counts against for --tcp-per-source: its family
 * and its address cut to --tcp-source-prefix (IPv4-mapped as IPv4). */
static void source_key(const struct serve_config *cfg, const struct sockaddr_storage *sa,
		       uint8_t key[17])
{
	int family;
	const uint8_t *a = addr_of(sa, &family);
	memset(key, 0, 17);
	if (a == NULL)
		return;
	unsigned len = family == AF_INET ? 4 : 16;
	unsigned bits = family == AF_INET ? cfg->tcp_prefix4 : cfg->tcp_prefix6;
	key[0] = family == AF_INET ? 4 : 6;
	memcpy(key + 1, a, bits / 8);
	if (bits % 8 && bits / 8 < len)
		key[1 + bits / 8] = a[bits / 8] & (uint8_t)(0xff00 >> (bits % 8));
}

int64_t tcp_idle_limit(int used, int cap)
{
	/* Unbound's steps (tcp-idle-timeout: free slots under 50%, 35%, 20%),
	 * from dnsnap's 10 s to Unbound's floor of 200 ms (spec/DECISIONS.md) */
	if ((int64_t)used * 100 < (int64_t)cap * 50)
		return TCP_IDLE_MS;
	if ((int64_t)used * 100 < (int64_t)cap * 65)
		return TCP_IDLE_MS / 10;
	if ((int64_t)used * 100 < (int64_t)cap * 80)
		return TCP_IDLE_MS / 20;
	return TCP_IDLE_MIN_MS;
}

/* A connection with nothing under way: no query at the forwarder, no reply
 * waiting for the socket, no part of a query read */
static int conn_idle(const struct conn *c)
{
	return c->waiting == 0 && c->pend == NULL && c->in_len == 0;
}

/* Every slot is taken: close the connection idle longest, to make room.
 * @return 0, or -1: none is idle (each has a query under way) */
static int tcp_evict(struct tcp *t)
{
	int victim = -1;
	for (int k = 0; k < t->nconns; k++)
		if (conn_idle(t->conns[k]) &&
		    (victim < 0 || t->conns[k]->last < t->conns[victim]->last))
			victim = k;
	if (victim < 0)
		return -1;
	conn_close(t, victim);
	bump(&t->s->net.tcp_cnt, C_CONN_EVICTED);
	return 0;
}

/* Whether a new connection from @p key is one over --tcp-per-source */
static int source_full(const struct tcp *t, const uint8_t key[17])
{
	unsigned limit = t->s->cfg->tcp_per_source, n = 0;
	if (limit == 0)
		return 0;
	for (int k = 0; k < t->nconns && n < limit; k++)
		n += memcmp(t->conns[k]->src, key, 17) == 0;
	return n >= limit;
}

/* Whether a new connection (@p ok: from inside --allow) may take a slot: its source under
 * --tcp-per-source, outside --allow under TCP_MAX_DENIED, and a slot free
 * (the one idle longest closed, when every one is taken). Counts a refusal. */
static int tcp_admit(struct tcp *t, int ok, const uint8_t key[17])
{
	struct tstat *cnt = &t->s->net.tcp_cnt;
	if (source_full(t, key)) {
		bump(cnt, C_CONN_SOURCE);
		return 0;
	}
	/* Sources outside --allow get REFUSED, but hold at most TCP_MAX_DENIED
	 * of the slots (each for one reply or a second): they cannot shut the
	 * allowed clients out, nor evict them. */
	if (!ok && (t->ndenied >= TCP_MAX_DENIED || t->nconns == t->cap)) {
		bump(cnt, C_CONN_REFUSED);
		return 0;
	}
	if (t->nconns == t->cap && tcp_evict(t) != 0) {
		bump(cnt, C_CONN_REFUSED);
		return 0;
	}
	return 1;
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
		int ok = allowed(t->s, &peer);
		uint8_t key[17];
		source_key(t->s->cfg, &peer, key);
		if (!tcp_admit(t, ok, key)) {
			close(fd); /* at once: better than a client waiting in the backlog */
			continue;
		}
		struct conn *c = malloc(sizeof *c);
		if (c == NULL) {
			close(fd);
			bump(&t->s->net.tcp_cnt, C_CONN_REFUSED);
			continue;
		}
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		c->fd = fd;
		c->id = ++t->next_id;
		c->peer = peer;
		memcpy(c->src, key, sizeof c->src);
		c->allowed = ok;
		if (!ok)
			t->ndenied++;
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
		bump(&t->s->net.tcp_cnt, C_CONNS);
	}
}

/* Stop taking connections: accept what waits in the backlogs (it is
 * served), then close the listeners. */
static void tcp_close_listeners(struct tcp *t)
{
	struct server *s = t->s;
	for (int i = 0; i < s->net.nls; i++) {
		if (s->net.ls[i].tcp_fd < 0)
			continue;
		if (t->listening)
			tcp_accept(t, s->net.ls[i].tcp_fd);
		epoll_ctl(t->ep, EPOLL_CTL_DEL, s->net.ls[i].tcp_fd, NULL);
		close(s->net.ls[i].tcp_fd);
		s->net.ls[i].tcp_fd = -1;
	}
	t->listening = 0;
}

void *tcp_main(void *arg)
{
	struct tcp *t = arg;
	struct server *s = t->s;
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = TAG_STOP };
	epoll_ctl(t->ep, EPOLL_CTL_ADD, s->net.tcp_stop_fd, &ev);
	ev.data.u32 = TAG_DONE;
	epoll_ctl(t->ep, EPOLL_CTL_ADD, s->net.tcp_done_fd, &ev);
	tcp_listen_all(t, 1);
	int64_t swept = mono_ms();
	int draining = 0;
	for (;;) {
		struct epoll_event evs[64];
		int n = epoll_wait(t->ep, evs, 64,
				   draining || tcp_idle_limit(t->nconns, t->cap) < TCP_IDLE_MS
				   ? 100 : 1000);
		for (int i = 0; i < n; i++) {
			uint32_t d = evs[i].data.u32;
			if (d == TAG_STOP) {
				uint64_t v;
				if (read(s->net.tcp_stop_fd, &v, sizeof v) < 0 && errno != EAGAIN)
					slog(LOG_ERR, "eventfd: %s", strerror(errno));
				if (atomic_load(&s->net.stop))
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
				tcp_accept(t, s->net.ls[d].tcp_fd);
			}
		}
		if (!draining && atomic_load(&s->net.tcp_draining)) {
			draining = 1;
			tcp_close_listeners(t);
		}
		int64_t now = mono_ms();
		/* the slots running short: the idle time shorter, swept more often */
		int64_t idle = tcp_idle_limit(t->nconns, t->cap);
		if (now - swept >= (draining || idle < TCP_IDLE_MS ? 100 : 1000)) {
			swept = now;
			for (int k = t->nconns - 1; k >= 0; k--) {
				struct conn *c = t->conns[k];
				/* a query under way keeps the longer limit */
				int64_t lim = !c->allowed ? TCP_DENIED_IDLE_MS
					      : conn_idle(c) ? idle : TCP_IDLE_MS;
				/* draining: a connection with nothing pending ends now */
				if (now - c->last > lim || (draining && conn_idle(c))) {
					if (!draining)
						bump(&s->net.tcp_cnt, C_CONN_IDLE);
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
