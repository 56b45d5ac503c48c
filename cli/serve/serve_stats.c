/*
 * serve_stats.c: the counters of `dnsnap serve` read (serve_stats.h): every
 * thread's summed with the library's (the forwarder's, the Redis client's,
 * the cache's, the snapshot's) into a struct serve_stats, and the SIGUSR1
 * line made of it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
	st->truncated = t[C_TRUNC];
	for (int i = 0; i < RC_N; i++)
		st->rcode[i] = t[C_RC + i];
	for (int i = 0; i < DROP_N; i++)
		st->drops[i] = t[C_DROP + i];
	st->tcp_connections = t[C_CONNS];
	st->tcp_refused = t[C_CONN_REFUSED];
	st->tcp_idle_closed = t[C_CONN_IDLE];
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
	uint64_t drops = 0;
	for (int i = 0; i < DROP_N; i++)
		drops += st->drops[i];
	slog(LOG_INFO, "counters%s: queries %llu (udp %llu, tcp %llu), hits %llu (memory %llu, "
	     "map %llu, stale %llu), misses %llu, upstream answers %llu, upstream failures "
	     "%llu, refused %llu, formerr %llu, notimp %llu, badvers %llu, servfail %llu, "
	     "dropped %llu, truncated %llu; tcp connections %llu (refused %llu, closed idle "
	     "%llu); cache %llu %s, %llu bytes; snapshot: %llu %s, damaged entries %llu",
	     when, (unsigned long long)(st->queries_udp + st->queries_tcp),
	     (unsigned long long)st->queries_udp, (unsigned long long)st->queries_tcp,
	     (unsigned long long)(st->hits_memory + st->hits_map + st->stale),
	     (unsigned long long)st->hits_memory, (unsigned long long)st->hits_map,
	     (unsigned long long)st->stale, (unsigned long long)st->misses,
	     (unsigned long long)st->upstream_answers, (unsigned long long)st->servfail_upstream,
	     (unsigned long long)st->refused_acl, (unsigned long long)st->rcode[RC_FORMERR],
	     (unsigned long long)st->rcode[RC_NOTIMP], (unsigned long long)st->rcode[RC_BADVERS],
	     (unsigned long long)st->rcode[RC_SERVFAIL], (unsigned long long)drops,
	     (unsigned long long)st->truncated, (unsigned long long)st->tcp_connections,
	     (unsigned long long)st->tcp_refused, (unsigned long long)st->tcp_idle_closed,
	     (unsigned long long)st->cache_entries, plural(st->cache_entries, "entry", "entries"),
	     (unsigned long long)st->cache_bytes, (unsigned long long)st->map_entries,
	     plural(st->map_entries, "entry", "entries"), (unsigned long long)st->map_damaged);
	free(st);
}

