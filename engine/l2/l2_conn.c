/*
 * l2_conn.c: one non-blocking connection of the serve thread and the FIFO of
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
/* hiredis 0.14 reads a bulk reply whole, of any length (Redis allows 512 MB): a reply
 * still incomplete past this is not read further, the connection is dropped */
#define READ_MAX (32u << 20)

void l2_log(struct l2 *l, const char *fmt, ...)
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

static void set_events(struct l2 *l, unsigned i, uint32_t ev)
{
	struct node *n = &l->nodes[i];
	struct epoll_event e = {.events = ev, .data.u64 = ((uint64_t)n->gen << 32) | i};
	if (n->events == ev)
		return;
	if (epoll_ctl(l->epfd, n->events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, n->c->fd, &e) == 0)
		n->events = ev;
}

/* Append @p c's command to the connection's output buffer and to the FIFO. */
static int push(struct l2 *l, unsigned i, struct cmd *c, uint64_t now)
{
	struct node *n = &l->nodes[i];
	const char *argv[5];
	size_t len[5];
	char num[24];
	int argc = 0;

#define ARG(p, n_) (argv[argc] = (const char *)(p), len[argc++] = (n_))
	switch (c->kind) {
	case C_GET: /* bounded: see L2_VALUE_MAX */
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

static void handshake_cmd(struct l2 *l, unsigned i, enum cmd_kind k, uint64_t now)
{
	struct cmd *c = l2c_new(k, "", 0, NULL, 0, NULL, 0);
	if (!c || push(l, i, c, now) != 0) {
		free(c);
		l2n_fail(l, i, "no memory");
		return;
	}
	l->nodes[i].handshake++;
}

int l2n_open(struct l2 *l, unsigned i, uint64_t now)
{
	struct node *n = &l->nodes[i];
	n->c = n->addr.port ? redisConnectNonBlock(n->addr.host, n->addr.port)
			    : redisConnectUnixNonBlock(n->addr.host);
	if (!n->c || n->c->err) {
		char why[160];
		snprintf(why, sizeof why, "%s", n->c ? n->c->errstr : "no memory");
		l2n_fail(l, i, why);
		return -1;
	}
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

void l2n_fail(struct l2 *l, unsigned i, const char *why)
{
	struct node *n = &l->nodes[i];
	char a[300];
	struct cmd *c;
	uint64_t now = l2_now_ms();

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
		l2_addr_str(&n->addr, a, sizeof a);
		l2_log(l, "redis %s: %s", a, why);
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
		l2_breaker_failed(l);
	c = n->head;
	n->head = n->tail = NULL;
	while (c) {
		struct cmd *next = c->next;
		l2c_fail_note(l, c, l->stopping, -1);
		c = next;
	}
	if (l->cluster)
		l->refresh_pending = 1;
}

void l2n_append(struct l2 *l, unsigned i, struct cmd *c, uint64_t now)
{
	struct node *n = &l->nodes[i];
	if (n->state == N_DOWN && (now < n->retry_at || l->stopping || l2n_open(l, i, now) != 0)) {
		/* down, waiting for its backoff: failed at once, not counted again
		 * (the lost connection was, and each retry that fails is: l2n_fail()) */
		l2c_fail_note(l, c, l->stopping, -1);
		return;
	}
	if (push(l, i, c, now) != 0)
		l2c_fail(l, c, 0);
}

void l2n_flush(struct l2 *l, unsigned i)
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
		l2n_fail(l, i, why);
		return;
	}
	set_events(l, i, done ? EPOLLIN : EPOLLIN | EPOLLOUT);
}

static void ready(struct l2 *l, unsigned i)
{
	struct node *n = &l->nodes[i];
	char a[300];
	n->state = N_READY;
	atomic_fetch_add(&l->nodes_up, 1);
	if (n->failed) {
		atomic_fetch_add(&l->reconnects, 1);
		if (n->logged) {
			l2_addr_str(&n->addr, a, sizeof a);
			l2_log(l, "redis %s: connected again", a);
		}
	}
	n->failed = n->logged = 0;
	n->backoff_ms = 0;
}

/* A reply to PING, AUTH or SELECT: an error fails the connection. */
static void handshake_reply(struct l2 *l, unsigned i, struct cmd *c, const redisReply *r)
{
	static const char *const what[] = {[C_PING] = "PING", [C_AUTH] = "AUTH",
					   [C_SELECT] = "SELECT"};
	char why[300];
	if (r->type == REDIS_REPLY_ERROR) {
		snprintf(why, sizeof why, "%s refused: %.*s", what[c->kind], (int)r->len, r->str);
		free(c);
		l2n_fail(l, i, why);
		return;
	}
	free(c);
	if (--l->nodes[i].handshake == 0 && l->nodes[i].state == N_HANDSHAKE)
		ready(l, i);
}

static void read_replies(struct l2 *l, unsigned i)
{
	struct node *n = &l->nodes[i];
	void *rp;
	while (n->c) {
		if (redisReaderGetReply(n->c->reader, &rp) != REDIS_OK) {
			char why[160];
			snprintf(why, sizeof why, "protocol error: %s", n->c->reader->errstr);
			l2n_fail(l, i, why);
			return;
		}
		if (!rp)
			return;
		struct cmd *c = n->head;
		if (!c) {
			freeReplyObject(rp);
			l2n_fail(l, i, "a reply to no command");
			return;
		}
		n->head = c->next;
		if (!n->head)
			n->tail = NULL;
		if (c->kind == C_PING || c->kind == C_AUTH || c->kind == C_SELECT)
			handshake_reply(l, i, c, rp);
		else
			l2c_reply(l, i, c, rp);
		freeReplyObject(rp);
	}
}

static void on_connected(struct l2 *l, unsigned i)
{
	struct node *n = &l->nodes[i];
	int err = 0;
	socklen_t sl = sizeof err;
	if (getsockopt(n->c->fd, SOL_SOCKET, SO_ERROR, &err, &sl) != 0)
		err = errno;
	if (err) {
		l2n_fail(l, i, strerror(err));
		return;
	}
	n->state = N_HANDSHAKE;
	l2n_flush(l, i);
}

void l2n_event(struct l2 *l, unsigned i, uint32_t ev)
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
		l2n_flush(l, i);
	if (!n->c || !(ev & (EPOLLIN | EPOLLERR | EPOLLHUP)))
		return;
	for (int k = 0; k < READS_PER_EVENT && n->c; k++) {
		ssize_t got = read(n->c->fd, buf, sizeof buf);
		if (got == 0) {
			l2n_fail(l, i, "connection closed by the server");
			return;
		}
		if (got < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				l2n_fail(l, i, strerror(errno));
			break;
		}
		n->rx_at = l2_now_ms();
		if (redisReaderFeed(n->c->reader, buf, (size_t)got) != REDIS_OK) {
			l2n_fail(l, i, "no memory");
			return;
		}
		read_replies(l, i);
		if (n->c && n->c->reader->len - n->c->reader->pos > READ_MAX) {
			l2n_fail(l, i, "a reply over 32 MB");
			return;
		}
		if ((size_t)got < sizeof buf)
			break;
	}
}

void l2n_close_all(struct l2 *l)
{
	for (unsigned i = 0; i < l->n_nodes; i++) {
		struct node *n = &l->nodes[i];
		struct cmd *c = n->head;
		n->head = n->tail = NULL;
		while (c) {
			struct cmd *next = c->next;
			l2c_fail(l, c, 1);
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
