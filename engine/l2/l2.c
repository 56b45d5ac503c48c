/*
 * l2.c: the client's API (any thread), its loop (epoll over the connections
 * and an eventfd, run by dnsnap_l2_process() in the caller's thread or by
 * dnsnap_l2_start()'s), routing (primary, replica, cluster slots), replies,
 * GET deadlines and the breaker.
 *
 * GET deadlines are set in dnsnap_l2_get() under the queue's lock from the
 * monotonic clock; the loop keeps the live GETs in a list by deadline. Most
 * GETs have the client's wait, so a GET taken is nearly always the list's
 * last and its place is found from the tail (a redirected GET keeps its
 * place); the list's front is the next deadline.
 */
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "l2_loop.h"

#define WAKE_TAG UINT64_MAX
#define BREAKER_FAILS 5
#define BREAKER_FIRST_MS 1000
#define BREAKER_MAX_MS 30000
#define REFRESH_GAP_MS 100 /* CLUSTER SLOTS at most this often */

struct cmd *dnsnap__l2c_new(enum cmd_kind kind, const char *prefix, size_t plen,
			    const uint8_t *key, size_t key_len, const uint8_t *val, size_t val_len)
{
	struct cmd *c = malloc(sizeof *c + plen + key_len + val_len);
	if (!c)
		return NULL;
	memset(c, 0, sizeof *c);
	c->kind = kind;
	c->key = c->data;
	c->key_len = plen + key_len;
	memcpy(c->key, prefix, plen);
	if (key_len)
		memcpy(c->key + plen, key, key_len);
	c->val = c->key + c->key_len;
	c->val_len = val_len;
	if (val_len)
		memcpy(c->val, val, val_len);
	return c;
}

/* ------------------------------------------------------------ breaker */

/* Under mu: may a GET go now? Sets *probe for the half-open one. */
static int breaker_admit(dnsnap_l2_t *l, uint64_t now, int *probe)
{
	if (l->breaker == DNSNAP_L2_BREAKER_OPEN && now >= l->open_until) {
		l->breaker = DNSNAP_L2_BREAKER_HALF_OPEN;
		l->probe_out = 0;
	}
	if (l->breaker == DNSNAP_L2_BREAKER_CLOSED)
		return 1;
	if (l->breaker == DNSNAP_L2_BREAKER_OPEN || l->probe_out)
		return 0;
	l->probe_out = 1;
	*probe = 1;
	return 1;
}

/*
 * How a GET went for the breaker: answered (@p ok 1), failed (0: an error, a
 * timeout), or failed with others at the same instant (-1: the timeouts of
 * one pass after the first; one stall of the machine or of Redis is one
 * failure, however many GETs it caught; they still settle a probe). The
 * breaker's turns go to the log (the thread's: after the lock).
 */
static void breaker_note(dnsnap_l2_t *l, struct cmd *c, int ok)
{
	char msg[160] = "";
	pthread_mutex_lock(&l->mu);
	uint64_t now = dnsnap__l2_now_ms();
	if (l->breaker == DNSNAP_L2_BREAKER_CLOSED) {
		if (ok > 0) {
			l->fails = 0;
		} else if (ok == 0 && ++l->fails >= BREAKER_FAILS) {
			l->breaker = DNSNAP_L2_BREAKER_OPEN;
			l->period_ms = BREAKER_FIRST_MS;
			l->open_until = now + l->period_ms;
			l->fails = 0;
			snprintf(msg, sizeof msg, "the breaker opened: %d failures in a row "
				 "(timeouts, lost connections): misses go upstream for %u ms",
				 BREAKER_FAILS,
				 (unsigned)l->period_ms);
		}
	} else if (l->breaker == DNSNAP_L2_BREAKER_HALF_OPEN && c->probe) {
		l->probe_out = 0;
		if (ok > 0) {
			l->breaker = DNSNAP_L2_BREAKER_CLOSED;
			l->fails = 0;
			snprintf(msg, sizeof msg, "the breaker closed: Redis answered the probe");
		} else {
			l->period_ms = l->period_ms * 2 > BREAKER_MAX_MS ? BREAKER_MAX_MS
									 : l->period_ms * 2;
			l->breaker = DNSNAP_L2_BREAKER_OPEN;
			l->open_until = now + l->period_ms;
		}
	}
	c->probe = 0; /* settled: a late reply to it proves nothing more */
	pthread_mutex_unlock(&l->mu);
	if (msg[0] && l->hooks.log)
		l->hooks.log(l->hooks.arg, msg);
}

void dnsnap__l2_breaker_failed(dnsnap_l2_t *l)
{
	struct cmd none;
	memset(&none, 0, sizeof none);
	breaker_note(l, &none, 0);
}

/* --------------------------------------------------------- completions */

static void tl_unlink(dnsnap_l2_t *l, struct cmd *c)
{
	if (c->tprev)
		c->tprev->tnext = c->tnext;
	else
		l->t_head = c->tnext;
	if (c->tnext)
		c->tnext->tprev = c->tprev;
	else
		l->t_tail = c->tprev;
	c->tprev = c->tnext = NULL;
}

/* Into the live GETs, by deadline: after the last whose deadline is not later */
static void tl_insert(dnsnap_l2_t *l, struct cmd *c)
{
	struct cmd *after = l->t_tail;
	while (after && after->deadline > c->deadline)
		after = after->tprev;
	c->tprev = after;
	c->tnext = after ? after->tnext : l->t_head;
	if (c->tnext)
		c->tnext->tprev = c;
	else
		l->t_tail = c;
	if (after)
		after->tnext = c;
	else
		l->t_head = c;
}

/* A live GET ends: its waiter goes back through got(). The breaker hears
 * whether Redis answered (@p answered, as breaker_note()'s ok): an error
 * reply or a value too long is DNSNAP_L2_ERROR for the caller, but a server that
 * answers is not failing. */
static void get_end(dnsnap_l2_t *l, struct cmd *c, dnsnap_l2_status_t st, const uint8_t *val,
		    size_t len, int answered)
{
	tl_unlink(l, c);
	c->live = 0;
	switch (st) {
	case DNSNAP_L2_HIT: atomic_fetch_add(&l->hits, 1); break;
	case DNSNAP_L2_MISS: atomic_fetch_add(&l->misses, 1); break;
	case DNSNAP_L2_TIMEOUT: atomic_fetch_add(&l->timeouts, 1); break;
	case DNSNAP_L2_ERROR: atomic_fetch_add(&l->errors, 1); break;
	case DNSNAP_L2_STOPPED: break;
	}
	if (st != DNSNAP_L2_STOPPED)
		breaker_note(l, c, answered);
	l->hooks.got(l->hooks.arg, c->waiter, st, val, len);
}

void dnsnap__l2c_fail(dnsnap_l2_t *l, struct cmd *c, int stopped)
{
	dnsnap__l2c_fail_note(l, c, stopped, 0);
}

void dnsnap__l2c_fail_note(dnsnap_l2_t *l, struct cmd *c, int stopped, int note)
{
	if (c->kind == C_GET && c->live)
		get_end(l, c, stopped ? DNSNAP_L2_STOPPED : DNSNAP_L2_ERROR, NULL, 0, note);
	if (c->kind == C_SET) {
		atomic_fetch_add(&l->write_errors, 1);
		atomic_fetch_sub(&l->queue_depth, 1);
	}
	if (c->kind == C_SLOTS)
		l->refresh_inflight = 0;
	free(c);
}

/* ------------------------------------------------------------ routing */

static int node_find_add(dnsnap_l2_t *l, const struct l2_addr *a)
{
	for (unsigned i = 0; i < l->n_nodes; i++)
		if (dnsnap__l2_addr_eq(&l->nodes[i].addr, a))
			return (int)i;
	if (l->n_nodes == L2_NODES_MAX)
		return -1;
	struct node *n = &l->nodes[l->n_nodes];
	memset(n, 0, sizeof *n);
	n->addr = *a;
	return (int)l->n_nodes++;
}

static unsigned route(dnsnap_l2_t *l, const struct cmd *c)
{
	if (!l->cluster) /* reads to the replica, or to the primary while it is down */
		return c->kind == C_GET && l->has_replica && l->nodes[1].state != N_DOWN ? 1 : 0;
	unsigned i = l->slot_node[dnsnap_l2_key_slot(c->key, c->key_len)];
	if (i != L2_NO_NODE)
		return i;
	/* no map yet, or a hole in it: any node that is up answers MOVED */
	for (unsigned k = 0; k < l->n_nodes; k++)
		if (l->nodes[k].state == N_READY)
			return k;
	return 0;
}

static void dispatch(dnsnap_l2_t *l, struct cmd *c, uint64_t now)
{
	if (c->kind == C_GET) {
		if (l->stopping) {
			l->hooks.got(l->hooks.arg, c->waiter, DNSNAP_L2_STOPPED, NULL, 0);
			free(c);
			return;
		}
		tl_insert(l, c);
		atomic_fetch_add(&l->gets, 1);
	}
	dnsnap__l2n_append(l, route(l, c), c, now);
}

/* -MOVED or -ASK: @return 1 when @p r was one (and @p c is dealt with) */
static int redirect(dnsnap_l2_t *l, unsigned i, struct cmd *c, const redisReply *r)
{
	struct l2_addr to;
	unsigned slot;
	uint64_t now = dnsnap__l2_now_ms();
	int k = dnsnap__l2_redirect_parse(r->str, r->len, &slot, &to);
	if (!k)
		return 0;
	if (!to.host[0])
		memcpy(to.host, l->nodes[i].addr.host, sizeof to.host);
	atomic_fetch_add(k == 1 ? &l->moved : &l->ask, 1);
	if (k == 1) /* the whole map soon */
		l->refresh_pending = 1;
	if (c->kind == C_GET && c->live && now >= c->deadline) {
		get_end(l, c, DNSNAP_L2_TIMEOUT, NULL, 0, 0);
		free(c);
		return 1;
	}
	int j = ++c->redirects > L2_REDIRECTS_MAX || (c->kind == C_GET && !c->live)
			? -1
			: node_find_add(l, &to);
	if (j < 0) {
		dnsnap__l2c_fail(l, c, 0);
		return 1;
	}
	if (k == 1) {
		l->slot_node[slot] = (uint8_t)j;
	} else {
		struct cmd *asking = dnsnap__l2c_new(C_ASKING, "", 0, NULL, 0, NULL, 0);
		if (!asking) {
			dnsnap__l2c_fail(l, c, 0);
			return 1;
		}
		dnsnap__l2n_append(l, (unsigned)j, asking, now);
	}
	dnsnap__l2n_append(l, (unsigned)j, c, now);
	return 1;
}

static void slots_reply(dnsnap_l2_t *l, unsigned i, const redisReply *r)
{
	size_t cap = r->type == REDIS_REPLY_ARRAY && r->elements ? r->elements : 1;
	struct l2_range *rg = malloc(cap * sizeof *rg);
	int n = rg ? dnsnap__l2_slots_parse(r, &l->nodes[i].addr, rg, cap) : -1;
	l->refresh_inflight = 0;
	l->refresh_last = dnsnap__l2_now_ms();
	if (n < 0) {
		char a[300];
		dnsnap__l2_addr_str(&l->nodes[i].addr, a, sizeof a);
		dnsnap__l2_log(l, "redis %s: CLUSTER SLOTS: %.*s", a,
		       r->type == REDIS_REPLY_ERROR ? (int)r->len : 22,
		       r->type == REDIS_REPLY_ERROR ? r->str : "not the expected reply");
		free(rg);
		return;
	}
	memset(l->slot_node, L2_NO_NODE, sizeof l->slot_node);
	for (int k = 0; k < n; k++) {
		int j = node_find_add(l, &rg[k].master);
		if (j >= 0)
			memset(l->slot_node + rg[k].lo, j, rg[k].hi - rg[k].lo + 1);
	}
	free(rg);
}

void dnsnap__l2c_reply(dnsnap_l2_t *l, unsigned i, struct cmd *c, const redisReply *r)
{
	switch (c->kind) {
	case C_GET:
		if (r->type == REDIS_REPLY_ERROR && redirect(l, i, c, r))
			return;
		if (!c->live)
			break;
		if (r->type == REDIS_REPLY_NIL ||
		    (r->type == REDIS_REPLY_STRING && r->len == 0)) /* GETRANGE: no key */
			get_end(l, c, DNSNAP_L2_MISS, NULL, 0, 1);
		else if (r->type == REDIS_REPLY_STRING && r->len <= DNSNAP_L2_READ_MAX)
			get_end(l, c, DNSNAP_L2_HIT, (const uint8_t *)r->str, r->len, 1);
		else /* -WRONGTYPE, a value too long... */
			get_end(l, c, DNSNAP_L2_ERROR, NULL, 0, 1);
		break;
	case C_SET:
		if (r->type == REDIS_REPLY_ERROR && redirect(l, i, c, r))
			return;
		atomic_fetch_add(r->type == REDIS_REPLY_STATUS ? &l->writes : &l->write_errors, 1);
		atomic_fetch_sub(&l->queue_depth, 1);
		if (r->type == REDIS_REPLY_ERROR) { /* -OOM, -NOPERM...: said once a minute */
			uint64_t now = dnsnap__l2_now_ms();
			if (l->set_error_logged == 0 || now >= l->set_error_logged + 60000) {
				l->set_error_logged = now;
				dnsnap__l2_log(l, "a write refused: %.*s (writes refused are "
					       "counted; this is said once a minute)",
					       r->len > 200 ? 200 : (int)r->len,
				       r->str);
			}
		}
		break;
	case C_SLOTS:
		slots_reply(l, i, r);
		break;
	default: /* ASKING's +OK */
		break;
	}
	free(c);
}

/* ------------------------------------------------------------- the loop */

/* The GETs whose bound passed: each stays in its FIFO (its reply will come
 * and be dropped); together they are one failure for the breaker. */
static void expire(dnsnap_l2_t *l, uint64_t now)
{
	int first = 1;
	while (l->t_head && l->t_head->deadline <= now) {
		get_end(l, l->t_head, DNSNAP_L2_TIMEOUT, NULL, 0, first ? 0 : -1);
		first = 0;
	}
}

static void refresh(dnsnap_l2_t *l, uint64_t now)
{
	unsigned pick = L2_NO_NODE;
	if (!l->refresh_pending || l->refresh_inflight || now < l->refresh_last + REFRESH_GAP_MS)
		return;
	for (unsigned k = 0; k < l->n_nodes && pick == L2_NO_NODE; k++)
		if (l->nodes[k].state == N_READY)
			pick = k;
	for (unsigned k = 0; k < l->n_nodes && pick == L2_NO_NODE; k++)
		if (l->nodes[k].state != N_DOWN || now >= l->nodes[k].retry_at)
			pick = k;
	if (pick == L2_NO_NODE)
		return;
	struct cmd *c = dnsnap__l2c_new(C_SLOTS, "", 0, NULL, 0, NULL, 0);
	if (!c)
		return;
	l->refresh_pending = 0;
	l->refresh_inflight = 1;
	l->refresh_last = now;
	dnsnap__l2n_append(l, pick, c, now);
}

/* Since when a connection with commands waiting has had nothing from its
 * server: its oldest command's sending, or its last bytes (a 10 MB reply read
 * for seconds is slow, not stopped) */
static uint64_t quiet_since(const struct node *n)
{
	return n->rx_at > n->head->sent ? n->rx_at : n->head->sent;
}

/* Connections to open again, bounds passed, the slot map. */
static void timers(dnsnap_l2_t *l, uint64_t now)
{
	for (unsigned i = 0; i < l->n_nodes; i++) {
		struct node *n = &l->nodes[i];
		char why[80];
		if (n->state == N_DOWN && now >= n->retry_at && !l->stopping) {
			dnsnap__l2n_open(l, i, now);
		} else if ((n->state == N_CONNECTING || n->state == N_HANDSHAKE) &&
			   now >= n->connect_by) {
			snprintf(why, sizeof why, "not connected in %u ms", l->connect_ms);
			dnsnap__l2n_fail(l, i, why);
		} else if (n->state == N_READY && n->head &&
			   now >= quiet_since(n) + l->connect_ms) {
			/* a server that stopped answering (SIGSTOP, a dead peer) */
			snprintf(why, sizeof why, "no reply in %u ms", l->connect_ms);
			dnsnap__l2n_fail(l, i, why);
		}
	}
	if (l->cluster && !l->stopping)
		refresh(l, now);
}

/* The next deadline (UINT64_MAX: none) */
static uint64_t next_deadline(const dnsnap_l2_t *l)
{
	uint64_t t = UINT64_MAX;
#define AT(x) ((x) < t ? (void)(t = (x)) : (void)0)
	if (l->t_head)
		AT(l->t_head->deadline);
	for (unsigned i = 0; i < l->n_nodes; i++) {
		const struct node *n = &l->nodes[i];
		if (n->state == N_DOWN && !l->stopping)
			AT(n->retry_at);
		else if (n->state == N_CONNECTING || n->state == N_HANDSHAKE)
			AT(n->connect_by);
		else if (n->state == N_READY && n->head)
			AT(quiet_since(n) + l->connect_ms);
	}
	if (l->cluster && l->refresh_pending && !l->refresh_inflight && !l->stopping)
		AT(l->refresh_last + REFRESH_GAP_MS);
	if (l->stopping)
		AT(l->stopping_by);
#undef AT
	return t;
}

/* epoll_wait()'s timeout: until the next deadline (-1: none) */
static int loop_timeout(const dnsnap_l2_t *l, uint64_t now)
{
	uint64_t t = next_deadline(l);
	if (t == UINT64_MAX)
		return -1;
	return t <= now ? 0 : t - now > INT_MAX ? INT_MAX : (int)(t - now);
}

/* The inbound queue, and dnsnap_l2_free()'s word. */
static void take(dnsnap_l2_t *l, uint64_t now)
{
	uint64_t junk;
	while (read(l->evfd, &junk, sizeof junk) < 0 && errno == EINTR)
		;
	pthread_mutex_lock(&l->mu);
	struct cmd *c = l->q_head;
	l->q_head = l->q_tail = NULL;
	l->q_len = 0;
	l->signalled = 0;
	int stop = l->stop;
	l->stopping_by = l->stop_by;
	pthread_mutex_unlock(&l->mu);
	if (stop && !l->stopping) {
		l->stopping = 1;
		while (l->t_head)
			get_end(l, l->t_head, DNSNAP_L2_STOPPED, NULL, 0, 0);
	}
	while (c) {
		struct cmd *next = c->next;
		dispatch(l, c, now);
		c = next;
	}
}

/*
 * One pass of the loop: what epoll has (waiting at most @p timeout ms), then
 * the deadlines, then the writes. @return 1 when a stop is done (every write
 * answered, or its bound passed), 0 to go on, -errno when epoll fails
 */
static int pass(dnsnap_l2_t *l, int timeout)
{
	struct epoll_event ev[64];
	int n = epoll_wait(l->epfd, ev, 64, timeout);
	if (n < 0 && errno != EINTR)
		return -errno;
	uint64_t now = dnsnap__l2_now_ms();
	for (int k = 0; k < n; k++) {
		if (ev[k].data.u64 == WAKE_TAG) {
			take(l, now);
			continue;
		}
		unsigned i = (unsigned)(ev[k].data.u64 & 0xffffffffu);
		if (i < l->n_nodes && l->nodes[i].c &&
		    l->nodes[i].gen == (uint32_t)(ev[k].data.u64 >> 32))
			dnsnap__l2n_event(l, i, ev[k].events);
	}
	now = dnsnap__l2_now_ms();
	expire(l, now);
	timers(l, now);
	for (unsigned i = 0; i < l->n_nodes; i++)
		dnsnap__l2n_flush(l, i);
	return l->stopping && (atomic_load(&l->queue_depth) == 0 || now >= l->stopping_by);
}

/* The loop until the stop is done: the library's thread, or dnsnap_l2_free()'s caller */
static void *run(void *arg)
{
	dnsnap_l2_t *l = arg;
	while (pass(l, loop_timeout(l, dnsnap__l2_now_ms())) == 0)
		;
	dnsnap__l2n_close_all(l);
	return NULL;
}

int dnsnap_l2_fd(const dnsnap_l2_t *l)
{
	return l->epfd;
}

int dnsnap_l2_timeout_ms(dnsnap_l2_t *l)
{
	return loop_timeout(l, dnsnap__l2_now_ms());
}

int dnsnap_l2_process(dnsnap_l2_t *l)
{
	if (l == NULL || l->started)
		return DNSNAP_EINVAL;
	int rc = pass(l, 0);
	return rc < 0 ? rc : DNSNAP_OK;
}

int dnsnap_l2_start(dnsnap_l2_t *l, char *err, size_t errcap)
{
	sigset_t all, old;
	if (l == NULL || l->started) {
		snprintf(err, errcap, "the client's loop runs already");
		return DNSNAP_EINVAL;
	}
	/* the thread takes no signal: the process's handlers run in its own threads */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int rc = pthread_create(&l->thread, NULL, run, l);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		snprintf(err, errcap, "no thread: %s", strerror(rc));
		return -rc;
	}
	l->started = 1;
	return DNSNAP_OK;
}

/* ------------------------------------------------------------------ API */

/* A host name becomes an address here, once: the loop never waits on DNS. */
static int resolve(struct l2_addr *a, char *err, size_t errcap)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST}, *res;
	if (a->port == 0 || getaddrinfo(a->host, NULL, &hints, &res) == 0) {
		if (a->port)
			freeaddrinfo(res);
		return 0;
	}
	hints.ai_flags = 0;
	int rc = getaddrinfo(a->host, NULL, &hints, &res);
	if (rc != 0) {
		snprintf(err, errcap, "redis host '%s': %s", a->host, gai_strerror(rc));
		return -1;
	}
	rc = getnameinfo(res->ai_addr, res->ai_addrlen, a->host, sizeof a->host, NULL, 0,
			 NI_NUMERICHOST);
	freeaddrinfo(res);
	if (rc != 0) {
		snprintf(err, errcap, "redis host: %s", gai_strerror(rc));
		return -1;
	}
	return 0;
}

/* The options into @p l. @return 0, or -1 with a message (DNSNAP_EINVAL) */
static int setup(dnsnap_l2_t *l, const dnsnap_l2_opts_t *o, char *err, size_t errcap)
{
	struct l2_url u, r;
	const char *prefix = o->prefix ? o->prefix : DNSNAP_L2_DEFAULT_PREFIX;

	if (dnsnap__l2_url_parse(o->url, &u, err, errcap) != 0)
		return -1;
	if (strlen(prefix) > DNSNAP_L2_PREFIX_MAX) {
		snprintf(err, errcap, "the prefix is longer than %d bytes", DNSNAP_L2_PREFIX_MAX);
		return -1;
	}
	if (o->replica && u.kind == L2_URL_CLUSTER) {
		snprintf(err, errcap, "a replica URL with a cluster: reads go to the masters");
		return -1;
	}
	if (o->replica && (dnsnap__l2_url_parse(o->replica, &r, err, errcap) != 0 ||
			   (r.kind == L2_URL_CLUSTER &&
			    snprintf(err, errcap, "the replica is not a cluster") > 0)))
		return -1;
	if ((o->user && strlen(o->user) >= sizeof l->user) ||
	    (o->password && strlen(o->password) >= sizeof l->password)) {
		snprintf(err, errcap, "the AUTH user or password is too long");
		return -1;
	}
	memcpy(l->prefix, prefix, strlen(prefix) + 1);
	l->prefix_len = strlen(prefix);
	l->wait_ms = o->wait_ms ? o->wait_ms : DNSNAP_L2_DEFAULT_WAIT_MS;
	l->queue_max = o->queue_max ? o->queue_max : DNSNAP_L2_DEFAULT_QUEUE;
	l->connect_ms = o->connect_ms ? o->connect_ms : DNSNAP_L2_DEFAULT_CONNECT_MS;
	if (o->password && o->password[0]) {
		snprintf(l->password, sizeof l->password, "%s", o->password);
		snprintf(l->user, sizeof l->user, "%s", o->user ? o->user : "");
	}
	l->cluster = u.kind == L2_URL_CLUSTER;
	l->db = u.db;
	for (unsigned i = 0; i < u.n; i++) {
		if (resolve(&u.addr[i], err, errcap) != 0)
			return -1;
		l->nodes[l->n_nodes++].addr = u.addr[i];
	}
	if (o->replica) {
		if (resolve(&r.addr[0], err, errcap) != 0)
			return -1;
		if (r.db != u.db) {
			snprintf(err, errcap, "the replica's database is not the primary's");
			return -1;
		}
		l->nodes[l->n_nodes++].addr = r.addr[0];
		l->has_replica = 1;
	}
	memset(l->slot_node, L2_NO_NODE, sizeof l->slot_node);
	l->refresh_pending = l->cluster;
	return 0;
}

int dnsnap_l2_new(const dnsnap_l2_opts_t *o, const dnsnap_l2_hooks_t *h, dnsnap_l2_t **out,
		  char *err, size_t errcap)
{
	dnsnap_l2_t *l;
	int rc = DNSNAP_EINVAL;

	if (!o || !o->url || !h || !h->got || !out) {
		snprintf(err, errcap, "no URL or no got() hook");
		return DNSNAP_EINVAL;
	}
	l = calloc(1, sizeof *l);
	if (!l) {
		snprintf(err, errcap, "no memory");
		return DNSNAP_ENOMEM;
	}
	l->hooks = *h;
	l->epfd = l->evfd = -1;
	l->period_ms = BREAKER_FIRST_MS;
	if (setup(l, o, err, errcap) != 0)
		goto fail;
	pthread_mutex_init(&l->mu, NULL);
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	l->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	struct epoll_event e = {.events = EPOLLIN, .data.u64 = WAKE_TAG};
	if (l->epfd < 0 || l->evfd < 0 || epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->evfd, &e) != 0) {
		rc = -errno;
		snprintf(err, errcap, "epoll: %s", strerror(errno));
		pthread_mutex_destroy(&l->mu);
		goto fail;
	}
	dnsnap__l2_sigpipe_ignore();
	*out = l;
	return DNSNAP_OK;
fail:
	if (l->epfd >= 0)
		close(l->epfd);
	if (l->evfd >= 0)
		close(l->evfd);
	explicit_bzero(l->password, sizeof l->password);
	free(l);
	return rc;
}

/* Under mu: queue @p c. @return whether the loop needs waking */
static int enqueue(dnsnap_l2_t *l, struct cmd *c)
{
	c->next = NULL;
	if (l->q_tail)
		l->q_tail->next = c;
	else
		l->q_head = c;
	l->q_tail = c;
	l->q_len++;
	if (l->signalled)
		return 0;
	l->signalled = 1;
	return 1;
}

static void wake(dnsnap_l2_t *l)
{
	uint64_t one = 1;
	while (write(l->evfd, &one, sizeof one) < 0 && errno == EINTR)
		;
}

int dnsnap_l2_get(dnsnap_l2_t *l, const uint8_t *key, size_t key_len, unsigned wait_ms,
		  void *waiter)
{
	struct cmd *c = dnsnap__l2c_new(C_GET, l->prefix, l->prefix_len, key, key_len, NULL, 0);
	int ok = 0, w = 0;
	if (!c)
		return DNSNAP_ENOMEM;
	c->waiter = waiter;
	c->live = 1;
	pthread_mutex_lock(&l->mu);
	uint64_t now = dnsnap__l2_now_ms();
	ok = !l->stop && l->q_len < l->queue_max && breaker_admit(l, now, &c->probe);
	if (ok) {
		c->deadline = now + (wait_ms ? wait_ms : l->wait_ms);
		w = enqueue(l, c);
	}
	pthread_mutex_unlock(&l->mu);
	if (!ok) {
		free(c);
		atomic_fetch_add(&l->refused, 1);
		return -EAGAIN;
	}
	if (w)
		wake(l);
	return DNSNAP_OK;
}

void dnsnap_l2_put(dnsnap_l2_t *l, const uint8_t *key, size_t key_len, const uint8_t *val,
		   size_t len, uint64_t pxat_ms)
{
	struct cmd *c = dnsnap__l2c_new(C_SET, l->prefix, l->prefix_len, key, key_len, val, len);
	int ok = 0, w = 0;
	if (c) {
		c->pxat = pxat_ms;
		pthread_mutex_lock(&l->mu);
		uint64_t now = dnsnap__l2_now_ms();
		ok = !l->stop && atomic_load(&l->queue_depth) < l->queue_max &&
		     !(l->breaker == DNSNAP_L2_BREAKER_OPEN && now < l->open_until);
		if (ok) {
			atomic_fetch_add(&l->queue_depth, 1);
			w = enqueue(l, c);
		}
		pthread_mutex_unlock(&l->mu);
	}
	if (!ok) {
		free(c);
		atomic_fetch_add(&l->write_drops, 1);
		return;
	}
	if (w)
		wake(l);
}

void dnsnap_l2_stats(dnsnap_l2_t *l, dnsnap_l2_stats_t *s)
{
	memset(s, 0, sizeof *s);
	s->gets = atomic_load(&l->gets);
	s->hits = atomic_load(&l->hits);
	s->misses = atomic_load(&l->misses);
	s->timeouts = atomic_load(&l->timeouts);
	s->errors = atomic_load(&l->errors);
	s->refused = atomic_load(&l->refused);
	s->writes = atomic_load(&l->writes);
	s->write_errors = atomic_load(&l->write_errors);
	s->write_drops = atomic_load(&l->write_drops);
	s->moved = atomic_load(&l->moved);
	s->ask = atomic_load(&l->ask);
	s->reconnects = atomic_load(&l->reconnects);
	s->too_big = atomic_load(&l->too_big);
	s->queue_depth = atomic_load(&l->queue_depth);
	s->nodes = (unsigned)atomic_load(&l->nodes_up);
	pthread_mutex_lock(&l->mu);
	s->breaker = l->breaker == DNSNAP_L2_BREAKER_OPEN && dnsnap__l2_now_ms() >= l->open_until
			     ? DNSNAP_L2_BREAKER_HALF_OPEN
			     : l->breaker;
	pthread_mutex_unlock(&l->mu);
}

void dnsnap_l2_free(dnsnap_l2_t *l, unsigned flush_ms)
{
	dnsnap_l2_free_last(l, flush_ms, NULL);
}

void dnsnap_l2_free_last(dnsnap_l2_t *l, unsigned flush_ms, dnsnap_l2_stats_t *last)
{
	if (last)
		memset(last, 0, sizeof *last);
	if (!l)
		return;
	pthread_mutex_lock(&l->mu);
	l->stop = 1;
	l->stop_by = dnsnap__l2_now_ms() + flush_ms;
	pthread_mutex_unlock(&l->mu);
	wake(l);
	if (l->started)
		pthread_join(l->thread, NULL);
	else
		run(l); /* the caller's thread: the loop until the writes or their bound are done */
	if (last)
		dnsnap_l2_stats(l, last);
	pthread_mutex_destroy(&l->mu);
	close(l->epfd);
	close(l->evfd);
	explicit_bzero(l->password, sizeof l->password);
	free(l);
}
