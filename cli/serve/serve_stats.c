/*
 * serve_stats.c: the counters of `dnsnap serve` read (serve_stats.h): every
 * thread's summed with the library's (the forwarder's, the Redis client's,
 * the cache's, the snapshot's) into a struct serve_stats, and the SIGUSR1
 * line made of it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "json.h"
#include "log.h"
#include "metrics.h"
#include "server.h"

/* Fill @p st from every thread's counters, the forwarder, the cache and the
 * snapshot (any thread: the HTTP thread calls it). */
void collect(void *arg, struct serve_stats *st)
{
	struct server *s = arg;
	memset(st, 0, sizeof *st);
	uint64_t t[C_N] = { 0 };
	for (int w = 0; w < s->net.nworkers + 3; w++) {
		struct tstat *c = w < s->net.nworkers ? &s->net.workers[w].cnt
				  : w == s->net.nworkers ? &s->net.tcp_cnt
				  : w == s->net.nworkers + 1 ? &s->fwd.cnt : &s->l2.cnt;
		for (int i = 0; i < C_N; i++)
			t[i] += atomic_load_explicit(&c->v[i], memory_order_relaxed);
		hist_sum(&st->answer_latency_cache, &c->lat_cache);
		hist_sum(&st->answer_latency_upstream, &c->lat_up);
		hist_sum(&st->answer_latency_l2, &c->lat_l2);
	}
	st->queries_udp = t[C_UDP];
	st->queries_tcp = t[C_TCP];
	st->hits_memory = t[C_HIT_MEM];
	st->hits_map = t[C_HIT_MAP];
	st->misses = t[C_MISS];
	st->stale = t[C_STALE];
	st->upstream_answers = t[C_UP_ANS];
	st->servfail_upstream = t[C_SERVFAIL_UP];
	st->refused_acl = t[C_REFUSED_ACL];
	st->refused_local = t[C_REFUSED_LOCAL];
	st->truncated = t[C_TRUNC];
	for (int i = 0; i < RC_N; i++)
		st->rcode[i] = t[C_RC + i];
	for (int i = 0; i < DROP_N; i++)
		st->drops[i] = t[C_DROP + i];
	st->tcp_connections = t[C_CONNS];
	st->tcp_refused = t[C_CONN_REFUSED];
	st->tcp_idle_closed = t[C_CONN_IDLE];
	st->tcp_evicted = t[C_CONN_EVICTED];
	st->tcp_refused_source = t[C_CONN_SOURCE];
	if (s->fwd.f != NULL) {
		st->forwarding = 1;
		dnsnap_fwd_stats(s->fwd.f, &st->fwd);
	}
	if (s->l2.out != NULL) {
		dnsnap_l2_stats_t ls;
		memset(&ls, 0, sizeof ls);
		pthread_rwlock_rdlock(&s->l2.lock);
		if (s->l2.c != NULL)
			dnsnap_l2_stats(s->l2.c, &ls);
		else
			ls = s->l2.last; /* stopped: its last counters */
		pthread_rwlock_unlock(&s->l2.lock);
		struct l2_metrics *m = &st->l2;
		m->on = 1;
		st->hits_l2 = t[C_HIT_L2];
		m->hits = t[C_HIT_L2];
		m->bad = t[C_L2_BAD];
		m->misses = ls.misses + t[C_L2_EXPIRED];
		m->timeouts = ls.timeouts;
		m->errors = ls.errors;
		m->refused = ls.refused;
		m->writes = ls.writes;
		m->write_errors = ls.write_errors;
		m->write_drops = ls.write_drops;
		m->moved = ls.moved;
		m->ask = ls.ask;
		m->reconnects = ls.reconnects;
		m->queue_depth = ls.queue_depth;
		m->nodes = ls.nodes;
		m->breaker = ls.breaker;
	}
	dnsnap_cache_stats_t cs;
	dnsnap_cache_stats(s->cache, &cs);
	st->cache_entries = cs.entries;
	st->cache_bytes = cs.bytes;
	st->cache_max_bytes = s->cfg->max_bytes;
	st->cache_inserts = cs.inserts;
	st->cache_evictions = cs.evictions;
	pthread_mutex_lock(&s->snap.mu);
	if (s->snap.map != NULL) {
		dnsnap_snap_info_t in;
		dnsnap_snap_info(s->snap.map, &in);
		st->map_open = 1;
		st->map_entries = in.entry_count;
		st->map_created_at = in.created_at;
		st->map_damaged = dnsnap_snap_bad_entries(s->snap.map);
	}
	st->map_time_refused = dnsnap_cache_refused_time(s->cache);
	st->snapshot_writes = s->snap.writes;
	st->snapshot_write_errors = s->snap.write_errors;
	st->snapshot_last_at = s->snap.last_at;
	st->snapshot_last_seconds = s->snap.last_seconds;
	st->snapshot_last_entries = s->snap.last_entries;
	st->snapshot_longest_pause_ms = s->snap.longest_pause_ms;
	pthread_mutex_unlock(&s->snap.mu);
	st->now = (uint64_t)time(NULL);
	st->start_time = s->start_time;
}

/* Append to @p b (at @p *n of @p cap) */
static void add(char *b, size_t cap, size_t *n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void add(char *b, size_t cap, size_t *n, const char *fmt, ...)
{
	if (*n >= cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(b + *n, cap - *n, fmt, ap);
	va_end(ap);
	if (k > 0)
		*n += (size_t)k;
}

#define U(x) ((unsigned long long)(x))

/* The drops by reason, as metrics.c names them (dropped_NAME) */
static const char *const drop_words[DROP_N] = {
	[DROP_MALFORMED] = "malformed", [DROP_OVERLOAD] = "overload",
	[DROP_WAITERS] = "waiters", [DROP_SEND] = "send",
};

/* The upstreams' and the snapshot's part of the line */
static void line_upstreams(const struct serve_stats *st, char *b, size_t cap, size_t *n)
{
	add(b, cap, n, "; upstream_outstanding %llu, upstream_coalesced %llu",
	    U(st->fwd.in_flight), U(st->fwd.coalesced));
	for (int i = 0; i < st->fwd.nup && i < DNSNAP_FWD_MAX_UPSTREAMS; i++) {
		const dnsnap_fwd_upstream_stats_t *u = &st->fwd.up[i];
		add(b, cap, n, "; upstream %d %s: up %d, queries %llu, answers %llu, timeouts %llu, "
		    "errors %llu, mismatched %llu, tcp_fallbacks %llu", i + 1, u->name,
		    u->healthy != 0, U(u->queries), U(u->answers), U(u->timeouts), U(u->errors),
		    U(u->mismatched), U(u->tcp_fallbacks));
	}
	add(b, cap, n, "; snapshot_writes %llu, snapshot_write_errors %llu, snapshot_last_at "
	    "%llu, snapshot_last_seconds %.6f, snapshot_last_entries %llu, "
	    "snapshot_longest_pause_ms %.3f; start_time %llu", U(st->snapshot_writes),
	    U(st->snapshot_write_errors), U(st->snapshot_last_at), st->snapshot_last_seconds,
	    U(st->snapshot_last_entries), st->snapshot_longest_pause_ms, U(st->start_time));
}

void counters_line(const struct serve_stats *st, char *b, size_t cap)
{
	uint64_t drops = 0;
	for (int i = 0; i < DROP_N; i++)
		drops += st->drops[i];
	size_t n = 0;
	b[0] = 0;
	/* a stale answer is a miss (the upstream was asked) and stale, not a hit */
	add(b, cap, &n, "queries %llu (udp %llu, tcp %llu), hits %llu (hits_memory %llu, "
	    "hits_map %llu, hits_l2 %llu), stale %llu, misses %llu, upstream_answers %llu, "
	    "servfail_upstream %llu, refused_acl %llu, refused_local %llu; replies by rcode: noerror %llu, "
	    "formerr %llu, servfail %llu, nxdomain %llu, notimp %llu, refused %llu, badvers "
	    "%llu, rcode_other %llu; dropped %llu (", U(st->queries_udp + st->queries_tcp),
	    U(st->queries_udp), U(st->queries_tcp), U(st->hits_memory + st->hits_map + st->hits_l2),
	    U(st->hits_memory), U(st->hits_map), U(st->hits_l2), U(st->stale), U(st->misses),
	    U(st->upstream_answers), U(st->servfail_upstream), U(st->refused_acl),
	    U(st->refused_local),
	    U(st->rcode[RC_NOERROR]), U(st->rcode[RC_FORMERR]), U(st->rcode[RC_SERVFAIL]),
	    U(st->rcode[RC_NXDOMAIN]), U(st->rcode[RC_NOTIMP]), U(st->rcode[RC_REFUSED]),
	    U(st->rcode[RC_BADVERS]), U(st->rcode[RC_OTHER]), U(drops));
	for (int i = 0; i < DROP_N; i++)
		add(b, cap, &n, "%sdropped_%s %llu", i ? ", " : "", drop_words[i], U(st->drops[i]));
	add(b, cap, &n, "), truncated %llu; tcp_connections %llu (tcp_refused %llu, "
	    "tcp_refused_source %llu, tcp_closed_idle %llu, tcp_evicted %llu); cache_entries %llu, cache_bytes %llu, cache_max_bytes %llu, "
	    "cache_inserts %llu, cache_evictions %llu; map_entries %llu, damaged_entries %llu, "
	    "time_refused %llu, map_created_at %llu", U(st->truncated), U(st->tcp_connections), U(st->tcp_refused),
	    U(st->tcp_refused_source), U(st->tcp_idle_closed), U(st->tcp_evicted),
	    U(st->cache_entries), U(st->cache_bytes),
	    U(st->cache_max_bytes), U(st->cache_inserts), U(st->cache_evictions),
	    U(st->map_entries), U(st->map_damaged), U(st->map_time_refused),
	    U(st->map_created_at));
	line_upstreams(st, b, cap, &n);
	if (!st->l2.on)
		return;
	static const char *const breaker[] = { "closed", "open", "half-open" };
	const struct l2_metrics *l = &st->l2;
	add(b, cap, &n, "; l2: hits %llu, misses %llu, bad %llu, timeouts %llu, errors %llu, "
	    "refused %llu, writes %llu, write_errors %llu, write_drops %llu, write_queue %llu, "
	    "moved %llu, ask %llu, reconnects %llu, nodes %llu, breaker %s", U(l->hits),
	    U(l->misses), U(l->bad), U(l->timeouts), U(l->errors), U(l->refused), U(l->writes),
	    U(l->write_errors), U(l->write_drops), U(l->queue_depth), U(l->moved), U(l->ask),
	    U(l->reconnects), U(l->nodes),
	    breaker[l->breaker >= 0 && l->breaker <= 2 ? l->breaker : 0]);
}

/* SIGUSR1 and exit: a line on the log, or with --json a JSON object on
 * standard output, for a program to read while the log stays for people */
void print_counters(struct server *s, const char *when)
{
	struct serve_stats *st = calloc(1, sizeof *st);
	if (st == NULL)
		return;
	collect(s, st);
	if (s->cfg->json) {
		char at[21];
		time_iso((uint32_t)time(NULL), at);
		jw_t j;
		jw_init(&j, stdout);
		jw_obj(&j);
		jw_kstr(&j, "event", when[0] ? "exit" : "counters");
		jw_kstr(&j, "time", at);
		jw_kstr(&j, "file", s->path);
		metrics_json(st, &j);
		pthread_mutex_lock(&s->snap.mu);
		jw_kbool(&j, "changed_in_place", s->snap.map != NULL && dnsnap_snap_changed(s->snap.map));
		pthread_mutex_unlock(&s->snap.mu);
		jw_end(&j);
		jw_nl(&j);
		fflush(stdout);
		free(st);
		return;
	}
	char line[SLOG_LINE_MAX];
	counters_line(st, line, sizeof line);
	slog(LOG_INFO, "counters%s: %s", when, line);
	free(st);
}


/* status's text: what the server is, then what it counts */
static void status_text(struct server *s, const struct serve_stats *st, FILE *out)
{
	char iso[21];
	time_iso((uint32_t)s->start_time, iso);
	fprintf(out, "dnsnap %s, pid %ld, up %llu s (since %s)\n", DNSNAP_VERSION, (long)getpid(),
		U(st->now - s->start_time), iso);
	if (st->map_open) {
		time_iso((uint32_t)st->map_created_at, iso);
		fprintf(out, "snapshot: %s, %llu %s, written %s (%llu s ago), %llu damaged met\n",
			s->path, U(st->map_entries), plural(st->map_entries, "entry", "entries"), iso,
			U(st->now > st->map_created_at ? st->now - st->map_created_at : 0),
			U(st->map_damaged));
	} else {
		fprintf(out, "snapshot: %s, none mapped\n", s->path);
	}
	fprintf(out, "cache: %llu %s, %llu of %llu bytes\n", U(st->cache_entries),
		plural(st->cache_entries, "entry", "entries"), U(st->cache_bytes),
		U(st->cache_max_bytes));
	for (int i = 0; i < st->fwd.nup && i < DNSNAP_FWD_MAX_UPSTREAMS; i++) {
		const dnsnap_fwd_upstream_stats_t *u = &st->fwd.up[i];
		fprintf(out, "upstream %d: %s %s, %llu queries, %llu answers, %llu timeouts, %llu "
			"errors\n", i + 1, u->name, u->healthy ? "up" : "down", U(u->queries),
			U(u->answers), U(u->timeouts), U(u->errors));
	}
	if (st->l2.on)
		fprintf(out, "redis: %s, breaker %s, %llu %s up\n", s->cfg->l2.url,
			st->l2.breaker == 1 ? "open" : st->l2.breaker == 2 ? "half-open" : "closed",
			U(st->l2.nodes), plural(st->l2.nodes, "connection", "connections"));
	char line[SLOG_LINE_MAX];
	counters_line(st, line, sizeof line);
	fprintf(out, "counters: %s\n", line);
}

void status_print(struct server *s, int json, FILE *out)
{
	struct serve_stats *st = calloc(1, sizeof *st);
	if (st == NULL) {
		fprintf(out, "out of memory\n");
		return;
	}
	collect(s, st);
	if (!json) {
		status_text(s, st, out);
		free(st);
		return;
	}
	jw_t j;
	jw_init(&j, out);
	jw_obj(&j);
	jw_kstr(&j, "version", DNSNAP_VERSION);
	jw_ku64(&j, "pid", (uint64_t)getpid());
	jw_ku64(&j, "uptime_seconds", st->now - s->start_time);
	jw_kstr(&j, "file", s->path);
	jw_kstr(&j, "control", s->ctl.path);
	if (s->ctl.extra_bound)
		jw_kstr(&j, "control_extra", s->ctl.extra_path);
	if (st->l2.on)
		jw_kstr(&j, "l2_url", s->cfg->l2.url);
	metrics_json(st, &j);
	jw_end(&j);
	jw_nl(&j);
	free(st);
}
