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
#include "server.h"

void on_l2(void *arg, void *waiter, dnsnap_l2_status_t status, const uint8_t *val, size_t len)
{
	struct server *s = arg;
	struct waiter *w = waiter;
	struct tstat *cnt = &s->l2_cnt;
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
			if (answer_waiter(s, cnt, &cnt->lat_l2, s->l2_out, w, e, el, now) == 0)
				bump(cnt, C_HIT_L2);
			return;
		}
	}
	forward_upstream(s, cnt, w, q);
}

/* The client's news (a connection lost or back, a slot map that failed, the
 * breaker's turns): warnings, once per outage (the client sees to that) */
void on_l2_log(void *arg, const char *msg)
{
	(void)arg;
	slog(LOG_WARNING, "--l2: %s", msg);
}

int l2_start(struct server *s, const dnsnap_l2_opts_t *o)
{
	char e[512];
	s->l2_out = malloc(2 + TCP_MSG_MAX);
	s->l2_val = malloc(DNSNAP_L2_VALUE_MAX);
	if (s->l2_out == NULL || s->l2_val == NULL)
		return fail("serve", NULL, "out of memory");
	dnsnap_l2_hooks_t h = { .got = on_l2, .log = on_l2_log, .arg = s };
	dnsnap_l2_t *l;
	if (dnsnap_l2_new(o, &h, &l, e, sizeof e) != DNSNAP_OK)
		return fail("serve", NULL, "--l2: %s", e);
	if (dnsnap_l2_start(l, e, sizeof e) != DNSNAP_OK) {
		dnsnap_l2_free(l, 0);
		return fail("serve", NULL, "--l2: %s", e);
	}
	s->l2 = l;
	return 0;
}

void l2_write(struct server *s, const uint8_t *key, size_t key_len, const uint8_t *val,
	      size_t len, uint64_t pxat_ms)
{
	pthread_rwlock_rdlock(&s->l2_lock);
	if (s->l2 != NULL)
		dnsnap_l2_put(s->l2, key, key_len, val, len, pxat_ms);
	pthread_rwlock_unlock(&s->l2_lock);
}

void l2_stop(struct server *s, unsigned flush_ms)
{
	pthread_rwlock_wrlock(&s->l2_lock);
	dnsnap_l2_t *l = s->l2;
	s->l2 = NULL; /* misses go upstream, answers are not written any more */
	pthread_rwlock_unlock(&s->l2_lock);
	if (l == NULL)
		return;
	/* GETs still waiting: on_l2(DNSNAP_L2_STOPPED), to the upstream; the
	 * counters as it ended, for the exit's */
	dnsnap_l2_stats_t last;
	dnsnap_l2_free_last(l, flush_ms, &last);
	pthread_rwlock_wrlock(&s->l2_lock);
	s->l2_last = last;
	pthread_rwlock_unlock(&s->l2_lock);
}
