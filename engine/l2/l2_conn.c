/*
 * l2_conn.c: one non-blocking connection of the client's loop and the FIFO of
 * the commands it carries. Redis answers in order on a connection, so the
 * FIFO's front is what the next reply answers; a GET that timed out stays in
 * it (its waiter given back already) so the replies after it still match.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "l2_loop.h"

#define BACKOFF_FIRST_MS 100
#define BACKOFF_MAX_MS 5000
#define READ_CHUNK 65536
#define READS_PER_EVENT 8 /* then back to the loop: a 10 MB reply does not hold the thread */

void dnsnap__l2_log(dnsnap_l2_t *l, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	if (!l->hooks.log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	l->hooks.log(l->hooks.arg, msg);
}

static void set_events(dnsnap_l2_t *l, unsigned i, uint32_t ev)
{
	struct node *n = &l->nodes[i];
	struct epoll_event e = {.events = ev, .data.u64 = ((uint64_t)n->gen << 32) | i};
	if (n->events == ev)
		return;
	if (epoll_ctl(l->epfd, n->events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, n->c->fd, &e) == 0)
		n->events = ev;
}

/* Append @p c's command to the connection's output buffer and to the FIFO. */
static int push(dnsnap_l2_t *l, unsigned i, struct cmd *c, uint64_t now)
{
	struct node *n = &l->nodes[i];
	const char *argv[5];
	size_t len[5];
	char num[24];
	int argc = 0;

#define ARG(p, n_) (argv[argc] = (const char *)(p), len[argc++] = (n_))
	switch (c->kind) {
	case C_GET: /* bounded: see DNSNAP_L2_READ_MAX */
		ARG("GETRANGE", 8);
		ARG(c->key, c->key_len);
		ARG("0", 1);
		ARG(L2_RANGE_END, sizeof L2_RANGE_END - 1);
		break;
	case C_SET:
		snprintf(num, sizeof num, "%llu", (unsigned long long)c->pxat);
		ARG("SET", 3);
		ARG(c->key, c->key_len);
		ARG(c->val, c->val_len);
		ARG("PXAT", 4);
		ARG(num, strlen(num));
		break;
	case C_PING:
		ARG("PING", 4);
		break;
	case C_AUTH:
		ARG("AUTH", 4);
		if (l->user[0])
			ARG(l->user, strlen(l->user));
		ARG(l->password, strlen(l->password));
		break;
	case C_SELECT:
		snprintf(num, sizeof num, "%u", l->db);
		ARG("SELECT", 6);
		ARG(num, strlen(num));
		break;
	case C_ASKING:
		ARG("ASKING", 6);
		break;
	case C_SLOTS:
		ARG("CLUSTER", 7);
		ARG("SLOTS", 5);
		break;
	}
#undef ARG
	if (redisAppendCommandArgv(n->c, argc, argv, len) != REDIS_OK)
		return -1;
	c->next = NULL;
	c->sent = now;
	if (n->tail)
		n->tail->next = c;
	else
		n->head = c;
	n->tail = c;
	return 0;
}

static void handshake_cmd(dnsnap_l2_t *l, unsigned i, enum cmd_kind k, uint64_t now)
{
	struct cmd *c = dnsnap__l2c_new(k, "", 0, NULL, 0, NULL, 0);
	if (!c || push(l, i, c, now) != 0) {
		free(c);
		dnsnap__l2n_fail(l, i, "no memory");
		return;
	}
	l->nodes[i].handshake++;
}

int dnsnap__l2n_open(dnsnap_l2_t *l, unsigned i, uint64_t now)
{
	struct node *n = &l->nodes[i];
	n->c = n->addr.port ? redisConnectNonBlock(n->addr.host, n->addr.port)
			    : redisConnectUnixNonBlock(n->addr.host);
	if (!n->c || n->c->err) {
		char why[160];
		snprintf(why, sizeof why, "%s", n->c ? n->c->errstr : "no memory");
		dnsnap__l2n_fail(l, i, why);
		return -1;
	}
	/* hiredis 0.14 keeps a bulk string until it is whole, of any length (Redis
	 * allows 512 MB), and reserves a multi-bulk's count at once: bounded */
	dnsnap__l2_reader_bound(n->c->reader, &n->bound);
	n->gen++;
	n->events = 0;
	n->state = N_CONNECTING;
	n->connect_by = now + l->connect_ms;
	n->handshake = 0;
	set_events(l, i, EPOLLIN | EPOLLOUT);
	/* pipelined before anything else: AUTH, SELECT, or a PING that shows the server
	 * answers (a connection is up when these replies are in) */
	if (l->password[0])
		handshake_cmd(l, i, C_AUTH, now);
	if (n->c && l->db)
		handshake_cmd(l, i, C_SELECT, now);
	if (n->c && !l->password[0] && !l->db)
		handshake_cmd(l, i, C_PING, now);
	return n->c ? 0 : -1;
}

void dnsnap__l2n_fail(dnsnap_l2_t *l, unsigned i, const char *why)
{
	struct node *n = &l->nodes[i];
	char a[300];
	struct cmd *c;
	uint64_t now = dnsnap__l2_now_ms();

	if (n->c) {
		if (n->events)
			epoll_ctl(l->epfd, EPOLL_CTL_DEL, n->c->fd, NULL);
		redisFree(n->c);
		n->c = NULL;
		n->events = 0;
	}
	if (n->state == N_READY)
		atomic_fetch_sub(&l->nodes_up, 1);
	n->state = N_DOWN;
	if (!n->logged && !l->stopping) {
		dnsnap__l2_addr_str(&n->addr, a, sizeof a);
		dnsnap__l2_log(l, "redis %s: %s", a, why);
		n->logged = 1;
	}
	n->failed = 1;
	n->backoff_ms = n->backoff_ms ? n->backoff_ms * 2 : BACKOFF_FIRST_MS;
	if (n->backoff_ms > BACKOFF_MAX_MS)
		n->backoff_ms = BACKOFF_MAX_MS;
	n->retry_at = now + n->backoff_ms;
	/* a connection lost (or not made) is one failure for the breaker,
	 * however many GETs it took with it */
	if (!l->stopping)
		dnsnap__l2_breaker_failed(l);
	c = n->head;
	n->head = n->tail = NULL;
	while (c) {
		struct cmd *next = c->next;
		dnsnap__l2c_fail_note(l, c, l->stopping, -1);
		c = next;
	}
	if (l->cluster)
		l->refresh_pending = 1;
}

void dnsnap__l2n_append(dnsnap_l2_t *l, unsigned i, struct cmd *c, uint64_t now)
{
	struct node *n = &l->nodes[i];
	if (n->state == N_DOWN &&
	    (now < n->retry_at || l->stopping || dnsnap__l2n_open(l, i, now) != 0)) {
		/* down, waiting for its backoff: failed at once, not counted again
		 * (the lost connection was, and each retry that fails is: dnsnap__l2n_fail()) */
		dnsnap__l2c_fail_note(l, c, l->stopping, -1);
		return;
	}
	if (push(l, i, c, now) != 0)
		dnsnap__l2c_fail(l, c, 0);
}

void dnsnap__l2n_flush(dnsnap_l2_t *l, unsigned i)
{
	struct node *n = &l->nodes[i];
	int done = 0;
	if (!n->c || n->state == N_CONNECTING)
		return;
	if (sdslen(n->c->obuf) == 0) {
		set_events(l, i, EPOLLIN);
		return;
	}
	if (redisBufferWrite(n->c, &done) != REDIS_OK) {
		char why[160];
		snprintf(why, sizeof why, "%s", n->c->errstr);
		dnsnap__l2n_fail(l, i, why);
		return;
	}
	set_events(l, i, done ? EPOLLIN : EPOLLIN | EPOLLOUT);
}

static void ready(dnsnap_l2_t *l, unsigned i)
{
	struct node *n = &l->nodes[i];
	char a[300];
	n->state = N_READY;
	atomic_fetch_add(&l->nodes_up, 1);
	if (n->failed) {
		atomic_fetch_add(&l->reconnects, 1);
		if (n->logged) {
			dnsnap__l2_addr_str(&n->addr, a, sizeof a);
			dnsnap__l2_log(l, "redis %s: connected again", a);
		}
	}
	n->failed = n->logged = 0;
	n->backoff_ms = 0;
}

/* A reply to PING, AUTH or SELECT: an error fails the connection. */
static void handshake_reply(dnsnap_l2_t *l, unsigned i, struct cmd *c, const redisReply *r)
{
	static const char *const what[] = {[C_PING] = "PING", [C_AUTH] = "AUTH",
					   [C_SELECT] = "SELECT"};
	char why[300];
	if (r->type == REDIS_REPLY_ERROR) {
		snprintf(why, sizeof why, "%s refused: %.*s", what[c->kind], (int)r->len, r->str);
		free(c);
		dnsnap__l2n_fail(l, i, why);
		return;
	}
	free(c);
	if (--l->nodes[i].handshake == 0 && l->nodes[i].state == N_HANDSHAKE)
		ready(l, i);
}

/* The reader failed, or holds too much: a reply over the bounds is counted */
static void reader_failed(dnsnap_l2_t *l, unsigned i)
{
	struct node *n = &l->nodes[i];
	char why[200];
	const char *over = dnsnap__l2_reader_over(n->c->reader, &n->bound);
	if (over) {
		atomic_fetch_add(&l->too_big, 1);
		snprintf(why, sizeof why, "a reply over the bounds: %s", over);
	} else {
		snprintf(why, sizeof why, "protocol error: %s", n->c->reader->errstr);
	}
	dnsnap__l2n_fail(l, i, why);
}

static void read_replies(dnsnap_l2_t *l, unsigned i)
{
	struct node *n = &l->nodes[i];
	void *rp;
	while (n->c) {
		if (redisReaderGetReply(n->c->reader, &rp) != REDIS_OK) {
			reader_failed(l, i);
			return;
		}
		if (!rp)
			return;
		struct cmd *c = n->head;
		if (!c) {
			freeReplyObject(rp);
			dnsnap__l2n_fail(l, i, "a reply to no command");
			return;
		}
		n->head = c->next;
		if (!n->head)
			n->tail = NULL;
		if (c->kind == C_PING || c->kind == C_AUTH || c->kind == C_SELECT)
			handshake_reply(l, i, c, rp);
		else
			dnsnap__l2c_reply(l, i, c, rp);
		freeReplyObject(rp);
	}
}

static void on_connected(dnsnap_l2_t *l, unsigned i)
{
	struct node *n = &l->nodes[i];
	int err = 0;
	socklen_t sl = sizeof err;
	if (getsockopt(n->c->fd, SOL_SOCKET, SO_ERROR, &err, &sl) != 0)
		err = errno;
	if (err) {
		dnsnap__l2n_fail(l, i, strerror(err));
		return;
	}
	n->state = N_HANDSHAKE;
	dnsnap__l2n_flush(l, i);
}

void dnsnap__l2n_event(dnsnap_l2_t *l, unsigned i, uint32_t ev)
{
	struct node *n = &l->nodes[i];
	char buf[READ_CHUNK];

	if (!n->c)
		return;
	if (n->state == N_CONNECTING) {
		if (!(ev & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			return;
		on_connected(l, i);
		return;
	}
	if (ev & EPOLLOUT)
		dnsnap__l2n_flush(l, i);
	if (!n->c || !(ev & (EPOLLIN | EPOLLERR | EPOLLHUP)))
		return;
	for (int k = 0; k < READS_PER_EVENT && n->c; k++) {
		ssize_t got = read(n->c->fd, buf, sizeof buf);
		if (got == 0) {
			dnsnap__l2n_fail(l, i, "connection closed by the server");
			return;
		}
		if (got < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				dnsnap__l2n_fail(l, i, strerror(errno));
			break;
		}
		n->rx_at = dnsnap__l2_now_ms();
		if (redisReaderFeed(n->c->reader, buf, (size_t)got) != REDIS_OK) {
			dnsnap__l2n_fail(l, i, "no memory");
			return;
		}
		read_replies(l, i);
		if (n->c && dnsnap__l2_reader_full(n->c->reader)) {
			reader_failed(l, i); /* a reply still incomplete: not read further */
			return;
		}
		if ((size_t)got < sizeof buf)
			break;
	}
}

void dnsnap__l2n_close_all(dnsnap_l2_t *l)
{
	for (unsigned i = 0; i < l->n_nodes; i++) {
		struct node *n = &l->nodes[i];
		struct cmd *c = n->head;
		n->head = n->tail = NULL;
		while (c) {
			struct cmd *next = c->next;
			dnsnap__l2c_fail(l, c, 1);
			c = next;
		}
		if (n->c) {
			if (n->events)
				epoll_ctl(l->epfd, EPOLL_CTL_DEL, n->c->fd, NULL);
			redisFree(n->c);
			n->c = NULL;
		}
		if (n->state == N_READY)
			atomic_fetch_sub(&l->nodes_up, 1);
		n->state = N_DOWN;
	}
}
