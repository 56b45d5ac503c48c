/*
 * serve_net.c: the sockets of `dnsnap serve`: the UDP workers, the TCP
 * thread, and --allow (server.h; the threads: the top of serve.c).
 */
#include "server.h"

/* ------------------------------------------------------------------ ACL */

int cidr_parse(const char *arg, struct cidr *c)
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
	/* ::ffff:a.b.c.d/96+n is the IPv4 prefix a.b.c.d/n: sources are matched
	 * as IPv4 (allowed()), so the prefix is too */
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	if (c->family == AF_INET6 && c->bits >= 96 && memcmp(c->addr, mapped, 12) == 0) {
		memmove(c->addr, c->addr + 12, 4);
		memset(c->addr + 4, 0, 12);
		c->family = AF_INET;
		c->bits -= 96;
	}
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
int allowed(const struct server *s, const struct sockaddr_storage *sa)
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
			struct waiter *w = waiter_new(msg, mlen, &q, t0);
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
		if (!c->allowed && !c->eof) { /* one REFUSED, then the connection ends */
			c->eof = 1;
			conn_watch(t, slot, conn_events(c));
		}
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
		/* Sources outside --allow get REFUSED, but hold at most
		 * TCP_MAX_DENIED of the slots (each for one reply or a second):
		 * they cannot shut the allowed clients out. */
		int ok = allowed(t->s, &peer);
		if (t->nconns == TCP_MAX_CONNS || (!ok && t->ndenied >= TCP_MAX_DENIED)) {
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

void *tcp_main(void *arg)
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
				if (now - c->last > (c->allowed ? TCP_IDLE_MS : TCP_DENIED_IDLE_MS) ||
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
