/*
 * serve_l2.c: the shared second level (--l2: Redis, through libdnsnap-l2,
 * <dnsnap/l2.h>) between serve's cache and its upstream. The client runs in
 * a thread of the library's own (dnsnap_l2_start(), from l2_start()). A miss
 * of memory and map asks it first (forward(), serve_fwd.c, hands the waiter
 * to dnsnap_l2_get()); on_l2(), in the L2 thread, answers from what came back
 * or passes the waiter on upstream; the forwarder's answers are written to it
 * (l2_write(), from on_done()).
 *
 * A value is untrusted: anyone who can write to the Redis can write any
 * bytes under any key. dnsnap_l2_value_accept() checks it against this
 * server's cache and its policy (--max-ttl and the others as the cache was
 * made): the frame, the 64-bit check that ties it to the key asked, the
 * entry, its times and rcode, its records against the key's type; an expired
 * entry is a miss. Only then is it inserted in memory (the next query is a
 * memory hit) and the client answered, as an upstream answer would be.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "log.h"
#include "server.h"

static void on_l2(void *arg, void *waiter, dnsnap_l2_status_t status, const uint8_t *val,
		  size_t len)
{
	struct server *s = arg;
	struct waiter *w = waiter;
	struct tstat *cnt = &s->l2.cnt;
	const dnsnap_query_t *q = &w->q;
	dnsnap_diag_t d;
	if (status == DNSNAP_L2_HIT) {
		uint32_t now = server_now(s);
		const uint8_t *e;
		size_t el;
		int err = dnsnap_l2_value_accept(s->cache, q->key, q->key_len, val, len, now, &e,
						 &el, &d);
		if (err == DNSNAP_ENOTFOUND) {
			bump(cnt, C_L2_EXPIRED);
		} else if (err != DNSNAP_OK) {
			bump(cnt, C_L2_BAD);
			slog(LOG_DEBUG, "a second-level value refused (a miss): %s at byte %zu",
			     d.msg, d.offset);
		} else {
			int ie = dnsnap_cache_insert_entry(s->cache, q->key, q->key_len, e, el);
			if (ie != DNSNAP_OK)
				slog(LOG_DEBUG, "a second-level entry not cached: %s",
				     dnsnap_strerror(ie));
			if (answer_waiter(s, cnt, &cnt->lat_l2, s->l2.out, w, e, el, now) == 0)
				bump(cnt, C_HIT_L2);
			return;
		}
	}
	forward_upstream(s, cnt, w);
}

/* The client's news (a connection lost or back, a slot map that failed, the
 * breaker's turns): warnings, once per outage (the client sees to that) */
static void on_l2_log(void *arg, const char *msg)
{
	(void)arg;
	slog(LOG_WARNING, "--l2: %s", msg);
}

int l2_start(struct server *s, const dnsnap_l2_opts_t *o)
{
	char e[512];
	s->l2.out = malloc(2 + TCP_MSG_MAX);
	s->l2.val = malloc(DNSNAP_L2_VALUE_MAX);
	if (s->l2.out == NULL || s->l2.val == NULL)
		return fail("serve", NULL, "out of memory");
	dnsnap_l2_hooks_t h = { .got = on_l2, .log = on_l2_log, .arg = s };
	dnsnap_l2_t *l;
	if (dnsnap_l2_new(o, &h, &l, e, sizeof e) != DNSNAP_OK)
		return fail("serve", NULL, "--l2: %s", e);
	if (dnsnap_l2_start(l, e, sizeof e) != DNSNAP_OK) {
		dnsnap_l2_free(l, 0);
		return fail("serve", NULL, "--l2: %s", e);
	}
	s->l2.c = l;
	return 0;
}

int l2_ask(struct server *s, struct waiter *w)
{
	if (s->l2.out == NULL) /* no --l2 */
		return 0;
	pthread_rwlock_rdlock(&s->l2.lock);
	int taken = s->l2.c != NULL &&
		    dnsnap_l2_get(s->l2.c, w->q.key, w->q.key_len, 0, w) == DNSNAP_OK;
	pthread_rwlock_unlock(&s->l2.lock);
	return taken;
}

void l2_write(struct server *s, const uint8_t *key, size_t key_len, const uint8_t *val,
	      size_t len, uint64_t pxat_ms)
{
	pthread_rwlock_rdlock(&s->l2.lock);
	if (s->l2.c != NULL)
		dnsnap_l2_put(s->l2.c, key, key_len, val, len, pxat_ms);
	pthread_rwlock_unlock(&s->l2.lock);
}

void l2_stop(struct server *s, unsigned flush_ms)
{
	pthread_rwlock_wrlock(&s->l2.lock);
	dnsnap_l2_t *l = s->l2.c;
	s->l2.c = NULL; /* misses go upstream, answers are not written any more */
	pthread_rwlock_unlock(&s->l2.lock);
	if (l == NULL)
		return;
	/* GETs still waiting: on_l2(DNSNAP_L2_STOPPED), to the upstream; the
	 * counters as it ended, for the exit's */
	dnsnap_l2_stats_t last;
	dnsnap_l2_free_last(l, flush_ms, &last);
	pthread_rwlock_wrlock(&s->l2.lock);
	s->l2.last = last;
	pthread_rwlock_unlock(&s->l2.lock);
}

void l2_free(struct server *s)
{
	free(s->l2.out);
	free(s->l2.val);
	s->l2.out = s->l2.val = NULL;
	pthread_rwlock_destroy(&s->l2.lock);
}

/* l2_flush()'s walk: the keys under the prefix the filter names, deleted */
struct l2_flush_run {
	dnsnap_l2_bulk_t *b;
	const filter_t *f;
	uint64_t n;
	char err[256];
};

static int flush_key(void *arg, const uint8_t *key, size_t key_len)
{
	struct l2_flush_run *r = arg;
	dnsnap_key_t k;
	if (dnsnap_key_decode(key, key_len, &k, NULL) != DNSNAP_OK ||
	    !filter_match(r->f, key, key_len, &k))
		return 0;
	r->n++;
	return dnsnap_l2_bulk_del(r->b, key, key_len, r->err, sizeof r->err) != DNSNAP_OK;
}

int l2_flush(struct server *s, const filter_t *f, uint64_t *n, char *err, size_t errcap)
{
	*n = 0;
	if (s->cfg->l2.url == NULL)
		return 0;
	struct l2_flush_run r = { .f = f };
	if (dnsnap_l2_bulk_open(&s->cfg->l2, &r.b, r.err, sizeof r.err) != DNSNAP_OK) {
		slog(LOG_WARNING, "flush: Redis not reached (its entries stay there): %s", r.err);
		snprintf(err, errcap, "not reached: %s", r.err);
		return -1;
	}
	int rc = dnsnap_l2_bulk_scan_keys(r.b, flush_key, &r, r.err, sizeof r.err);
	if (rc == DNSNAP_OK)
		rc = dnsnap_l2_bulk_flush(r.b, r.err, sizeof r.err);
	if (rc != DNSNAP_OK) {
		slog(LOG_WARNING, "flush: Redis: %s (some of its entries may stay there)", r.err);
		snprintf(err, errcap, "%s", r.err);
	}
	dnsnap_l2_bulk_close(r.b);
	*n = r.n;
	return rc == DNSNAP_OK ? 0 : -1;
}
