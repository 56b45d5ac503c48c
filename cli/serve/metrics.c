/*
 * metrics.c: serve's counters as Prometheus text (exposition format 0.0.4)
 * and as JSON, and the HTTP endpoint (libmicrohttpd) that serves the text.
 *
 * The Prometheus families, one per line (c counter, g gauge, h histogram);
 * names follow the Prometheus naming guide: base units (seconds, bytes),
 * counters end in _total, a dimension is a label, not part of the name:
 *
 *   c dnsnap_queries_total{transport="udp"|"tcp"}       queries received
 *   c dnsnap_cache_hits_total{tier="memory"|"map"|"l2"} fresh answers from each tier
 *   c dnsnap_cache_misses_total                         no tier (memory, map, Redis) had a
 *                                                       fresh entry: asked upstream, or
 *                                                       REFUSED without --upstream
 *   c dnsnap_stale_answers_total                        stale answers (RFC 8767)
 *   c dnsnap_forwarded_answers_total                    clients answered with an upstream reply
 *   c dnsnap_forward_failures_total                     SERVFAIL: all upstreams failed
 *   c dnsnap_answers_total{rcode="NOERROR"|"FORMERR"|"SERVFAIL"|"NXDOMAIN"|"NOTIMP"|
 *                          "REFUSED"|"BADVERS"|"other"} replies sent, by rcode
 *   c dnsnap_drops_total{reason="malformed"|"overload"|"waiters"|"send"} queries not answered
 *   c dnsnap_refused_acl_total                          REFUSED: source not in --allow
 *   c dnsnap_refused_local_total                        REFUSED, never forwarded
 *   c dnsnap_truncated_total                            UDP answers sent with TC=1
 *   c dnsnap_tcp_connections_total                      TCP connections accepted
 *   c dnsnap_tcp_connections_refused_total              closed at once: over the limit
 *   c dnsnap_tcp_connections_idle_closed_total          closed: no whole query in time
 *   h dnsnap_answer_latency_seconds{path="cache"|"upstream"|"l2"} query received -> reply sent
 *   g dnsnap_forwarding                                 1 with --upstream, else 0
 *   g dnsnap_upstream_outstanding_queries               upstream queries in flight
 *   c dnsnap_upstream_coalesced_total                   misses that waited on a query in flight
 *   c dnsnap_upstream_sent_total{upstream}              attempts sent (UDP and TCP)
 *   c dnsnap_upstream_queries_total{upstream,outcome="answer"|"timeout"|"error"|
 *                                   "mismatched"|"tcp_fallback"} attempts by outcome
 *   g dnsnap_upstream_up{upstream}                      1 usable, 0 marked down
 *   h dnsnap_upstream_latency_seconds{upstream}         attempt sent -> accepted reply
 *   the shared second level, with --l2 only:
 *   c dnsnap_l2_lookups_total{outcome="hit"|"miss"|"bad"|"timeout"|"error"|"refused"}
 *                                                       GETs by how they ended ("bad": a value
 *                                                       that failed its checks; "refused":
 *                                                       not asked, the breaker open)
 *   g dnsnap_l2_breaker_state                           0 closed, 1 open, 2 half-open
 *   g dnsnap_l2_write_queue_depth                       writes queued or in flight
 *   c dnsnap_l2_writes_total{outcome="ok"|"error"|"dropped"} upstream answers written
 *   c dnsnap_l2_redirections_total{kind="moved"|"ask"}  Redis Cluster redirections followed
 *   c dnsnap_l2_reconnects_total                        connections opened again
 *   g dnsnap_l2_nodes                                   connections up
 *   g dnsnap_cache_entries                              in-memory cache entries
 *   g dnsnap_cache_bytes                                in-memory cache size
 *   g dnsnap_cache_max_bytes                            its limit (--max-bytes)
 *   c dnsnap_cache_inserts_total                        entries put in the in-memory cache
 *   c dnsnap_cache_evictions_total                      entries evicted to stay under the limit
 *   g dnsnap_map_open                                   1 when a snapshot is mapped
 *   g dnsnap_map_entries                                entries in the mapped snapshot
 *   g dnsnap_map_damaged_entries                        of those, found damaged by lookups
 *   c dnsnap_map_time_refused_total                     lookups that met one the time rule refuses
 *   g dnsnap_map_age_seconds                            now - its creation time (only when mapped)
 *   c dnsnap_snapshot_writes_total                      snapshots published while serving
 *   c dnsnap_snapshot_write_errors_total                attempts that failed
 *   g dnsnap_snapshot_last_write_timestamp_seconds      Unix time of the last publish
 *   g dnsnap_snapshot_last_write_duration_seconds       how long it took
 *   g dnsnap_snapshot_last_write_entries                how many entries it wrote
 *                                                       (these three only after a publish)
 *   g dnsnap_snapshot_longest_pause_seconds             longest a cache shard was held
 *   g dnsnap_start_time_seconds                         Unix time the server started
 *
 * The JSON keys are those of the man page's METRICS section.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "lazy.h"
#include "metrics.h"

static const char *const rcode_names[RC_N] = {
	[RC_NOERROR] = "NOERROR", [RC_FORMERR] = "FORMERR", [RC_SERVFAIL] = "SERVFAIL",
	[RC_NXDOMAIN] = "NXDOMAIN", [RC_NOTIMP] = "NOTIMP", [RC_REFUSED] = "REFUSED",
	[RC_BADVERS] = "BADVERS", [RC_OTHER] = "other",
};

static const char *const drop_names[DROP_N] = {
	[DROP_MALFORMED] = "malformed", [DROP_OVERLOAD] = "overload",
	[DROP_WAITERS] = "waiters", [DROP_SEND] = "send",
};

/* ------------------------------------------------------------ Prometheus */

static void family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value as the format wants it: backslash, double quote and line
 * feed escaped (an upstream's name is the operator's text). */
static void label_value(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", out);
		else if (*s == '"')
			fputs("\\\"", out);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
}

/* Microseconds as seconds, exact in decimal (25 -> 0.000025): no binary
 * fraction of a double shows up in a bucket bound. */
static void us_as_seconds(FILE *out, uint64_t us)
{
	char frac[8];
	snprintf(frac, sizeof frac, "%06u", (unsigned)(us % 1000000));
	int n = 6;
	while (n > 0 && frac[n - 1] == '0')
		n--;
	frac[n] = 0;
	fprintf(out, "%" PRIu64 "%s%s", us / 1000000, n ? "." : "", frac);
}

static void sample(FILE *out, const char *name, const char *labels, uint64_t v)
{
	fprintf(out, "%s%s%s%s %" PRIu64 "\n", name, labels[0] ? "{" : "", labels,
		labels[0] ? "}" : "", v);
}

static void sample_dbl(FILE *out, const char *name, double v)
{
	fprintf(out, "%s %.9g\n", name, v);
}

static void counter(FILE *out, const char *name, const char *help, uint64_t v)
{
	family(out, name, "counter", help);
	sample(out, name, "", v);
}

static void gauge(FILE *out, const char *name, const char *help, uint64_t v)
{
	family(out, name, "gauge", help);
	sample(out, name, "", v);
}

/* A histogram's counts (not cumulative), read once: serve's own (struct
 * hist) or an upstream's (the forwarder's stats). Both have hist_bounds_us. */
struct hist_counts {
	uint64_t b[HIST_N + 1];
	uint64_t sum_us;
};

static struct hist_counts of_hist(const struct hist *h)
{
	struct hist_counts c;
	for (unsigned i = 0; i <= HIST_N; i++)
		c.b[i] = atomic_load_explicit(&h->b[i], memory_order_relaxed);
	c.sum_us = atomic_load_explicit(&h->sum_us, memory_order_relaxed);
	return c;
}

static struct hist_counts of_upstream(const dnsnap_fwd_upstream_stats_t *u)
{
	struct hist_counts c;
	memcpy(c.b, u->latency, sizeof c.b);
	c.sum_us = u->latency_sum_us;
	return c;
}

/* One histogram's samples; @p label: 'key="value"' (escaped), or "" */
static void hist_samples(FILE *out, const char *name, const char *label,
			 const struct hist_counts *h)
{
	const char *sep = label[0] ? "," : "";
	uint64_t cum = 0;
	for (unsigned i = 0; i <= HIST_N; i++) {
		cum += h->b[i];
		fprintf(out, "%s_bucket{%s%sle=\"", name, label, sep);
		if (i < HIST_N)
			us_as_seconds(out, hist_bounds_us[i]);
		else
			fputs("+Inf", out);
		fprintf(out, "\"} %" PRIu64 "\n", cum);
	}
	fprintf(out, "%s_sum%s%s%s ", name, label[0] ? "{" : "", label, label[0] ? "}" : "");
	us_as_seconds(out, h->sum_us);
	/* _count is the +Inf bucket, as the format requires */
	fprintf(out, "\n%s_count%s%s%s %" PRIu64 "\n", name, label[0] ? "{" : "", label,
		label[0] ? "}" : "", cum);
}

/* 'upstream="NAME"' with NAME escaped, into @p buf */
static void upstream_label(char *buf, size_t cap, const char *name)
{
	char *p = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&p, &n);
	if (f == NULL) {
		snprintf(buf, cap, "upstream=\"\"");
		return;
	}
	fputs("upstream=\"", f);
	label_value(f, name);
	fputc('"', f);
	fclose(f);
	snprintf(buf, cap, "%s", p);
	free(p);
}

/* The --l2 families */
static void l2_prom(const struct l2_metrics *l, FILE *out)
{
	static const char *const outcome[] = { "hit", "miss", "bad", "timeout", "error", "refused" };
	const uint64_t v[] = { l->hits, l->misses, l->bad, l->timeouts, l->errors, l->refused };
	char lab[64];
	family(out, "dnsnap_l2_lookups_total", "counter",
	       "Second-level (Redis) lookups, by how they ended.");
	for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
		snprintf(lab, sizeof lab, "outcome=\"%s\"", outcome[i]);
		sample(out, "dnsnap_l2_lookups_total", lab, v[i]);
	}
	gauge(out, "dnsnap_l2_breaker_state",
	      "The second level's circuit breaker: 0 closed, 1 open, 2 half-open.",
	      (uint64_t)l->breaker);
	gauge(out, "dnsnap_l2_write_queue_depth", "Second-level writes queued or in flight.",
	      l->queue_depth);
	family(out, "dnsnap_l2_writes_total", "counter",
	       "Upstream answers written to the second level, by outcome.");
	sample(out, "dnsnap_l2_writes_total", "outcome=\"ok\"", l->writes);
	sample(out, "dnsnap_l2_writes_total", "outcome=\"error\"", l->write_errors);
	sample(out, "dnsnap_l2_writes_total", "outcome=\"dropped\"", l->write_drops);
	family(out, "dnsnap_l2_redirections_total", "counter",
	       "Redis Cluster redirections followed, by kind.");
	sample(out, "dnsnap_l2_redirections_total", "kind=\"moved\"", l->moved);
	sample(out, "dnsnap_l2_redirections_total", "kind=\"ask\"", l->ask);
	counter(out, "dnsnap_l2_reconnects_total",
		"Second-level connections opened again after a failure.", l->reconnects);
	gauge(out, "dnsnap_l2_nodes", "Second-level connections up.", l->nodes);
}

/* How many of @p fs->up[] to render. */
static int nups(const dnsnap_fwd_stats_t *fs)
{
	return fs->nup < 0 ? 0 : fs->nup > DNSNAP_FWD_MAX_UPSTREAMS ? DNSNAP_FWD_MAX_UPSTREAMS
								      : fs->nup;
}

/* The per-upstream families (the forwarder's dnsnap_fwd_stats()), when there
 * are upstreams */
static void upstream_prom(const dnsnap_fwd_stats_t *fs, FILE *out)
{
	static const char *const outcomes[] = { "answer", "timeout", "error", "mismatched",
						"tcp_fallback" };
	const dnsnap_fwd_upstream_stats_t *ups = fs->up;
	int nup = nups(fs);
	char lab[320];
	struct hist_counts h;
	if (nup == 0)
		return;
	family(out, "dnsnap_upstream_sent_total", "counter",
	       "Upstream query attempts sent, over UDP and TCP.");
	for (int u = 0; u < nup; u++) {
		upstream_label(lab, sizeof lab, ups[u].name);
		sample(out, "dnsnap_upstream_sent_total", lab, ups[u].queries);
	}
	family(out, "dnsnap_upstream_queries_total", "counter",
	       "Upstream query attempts by outcome "
	       "(tcp_fallback: TC=1, asked again over TCP).");
	for (int u = 0; u < nup; u++) {
		const dnsnap_fwd_upstream_stats_t *up = &ups[u];
		const uint64_t v[] = { up->answers, up->timeouts, up->errors,
				       up->mismatched, up->tcp_fallbacks };
		char ul[300];
		upstream_label(ul, sizeof ul, up->name);
		for (size_t o = 0; o < sizeof v / sizeof v[0]; o++) {
			snprintf(lab, sizeof lab, "%s,outcome=\"%s\"", ul, outcomes[o]);
			sample(out, "dnsnap_upstream_queries_total", lab, v[o]);
		}
	}
	family(out, "dnsnap_upstream_up", "gauge",
	       "1 when an upstream is usable, 0 when marked down.");
	for (int u = 0; u < nup; u++) {
		upstream_label(lab, sizeof lab, ups[u].name);
		sample(out, "dnsnap_upstream_up", lab, ups[u].healthy != 0);
	}
	family(out, "dnsnap_upstream_latency_seconds", "histogram",
	       "Time from an upstream query attempt to its accepted reply.");
	for (int u = 0; u < nup; u++) {
		upstream_label(lab, sizeof lab, ups[u].name);
		h = of_upstream(&ups[u]);
		hist_samples(out, "dnsnap_upstream_latency_seconds", lab, &h);
	}
}

void metrics_prom(const struct serve_stats *st, FILE *out)
{
	char lab[320];
	struct hist_counts h;

	family(out, "dnsnap_queries_total", "counter", "DNS queries received, by transport.");
	sample(out, "dnsnap_queries_total", "transport=\"udp\"", st->queries_udp);
	sample(out, "dnsnap_queries_total", "transport=\"tcp\"", st->queries_tcp);
	family(out, "dnsnap_cache_hits_total", "counter",
	       "Queries answered with a fresh entry, by cache tier.");
	sample(out, "dnsnap_cache_hits_total", "tier=\"memory\"", st->hits_memory);
	sample(out, "dnsnap_cache_hits_total", "tier=\"map\"", st->hits_map);
	if (st->l2.on)
		sample(out, "dnsnap_cache_hits_total", "tier=\"l2\"", st->hits_l2);
	counter(out, "dnsnap_cache_misses_total",
		"Queries no tier (memory, map, Redis) had a fresh entry for.", st->misses);
	counter(out, "dnsnap_stale_answers_total", "Stale answers sent (RFC 8767).", st->stale);
	counter(out, "dnsnap_forwarded_answers_total",
		"Queries answered with an upstream's reply.", st->upstream_answers);
	counter(out, "dnsnap_forward_failures_total",
		"Queries answered SERVFAIL because every upstream failed.", st->servfail_upstream);
	family(out, "dnsnap_answers_total", "counter", "Replies sent, by rcode.");
	for (int i = 0; i < RC_N; i++) {
		snprintf(lab, sizeof lab, "rcode=\"%s\"", rcode_names[i]);
		sample(out, "dnsnap_answers_total", lab, st->rcode[i]);
	}
	family(out, "dnsnap_drops_total", "counter", "Queries given no reply, by reason.");
	for (int i = 0; i < DROP_N; i++) {
		snprintf(lab, sizeof lab, "reason=\"%s\"", drop_names[i]);
		sample(out, "dnsnap_drops_total", lab, st->drops[i]);
	}
	counter(out, "dnsnap_refused_acl_total", "Queries refused: source not in --allow.",
		st->refused_acl);
	counter(out, "dnsnap_refused_local_total", "Queries refused by dnsnap itself, never "
		"forwarded: zone transfers, classes other than IN and ANY.", st->refused_local);
	counter(out, "dnsnap_truncated_total", "UDP answers sent with TC=1.", st->truncated);
	counter(out, "dnsnap_tcp_connections_total", "TCP connections accepted.",
		st->tcp_connections);
	counter(out, "dnsnap_tcp_connections_refused_total",
		"TCP connections closed at once: over the connection limit.", st->tcp_refused);
	counter(out, "dnsnap_tcp_connections_idle_closed_total",
		"TCP connections closed for sending no whole query in time.", st->tcp_idle_closed);
	counter(out, "dnsnap_tcp_connections_evicted_total",
		"TCP connections closed, idle longest, to make room for a new one.",
		st->tcp_evicted);
	counter(out, "dnsnap_tcp_connections_refused_source_total",
		"TCP connections closed at once: their source had --tcp-per-source open.",
		st->tcp_refused_source);
	family(out, "dnsnap_answer_latency_seconds", "histogram",
	       "Time from a query's arrival to its reply, by where the answer came from.");
	h = of_hist(&st->answer_latency_cache);
	hist_samples(out, "dnsnap_answer_latency_seconds", "path=\"cache\"", &h);
	h = of_hist(&st->answer_latency_upstream);
	hist_samples(out, "dnsnap_answer_latency_seconds", "path=\"upstream\"", &h);
	if (st->l2.on) {
		h = of_hist(&st->answer_latency_l2);
		hist_samples(out, "dnsnap_answer_latency_seconds", "path=\"l2\"", &h);
	}
	if (st->l2.on)
		l2_prom(&st->l2, out);

	gauge(out, "dnsnap_forwarding", "1 when misses are forwarded upstream, 0 when cache-only.",
	      st->forwarding != 0);
	gauge(out, "dnsnap_upstream_outstanding_queries", "Upstream queries in flight.",
	      st->fwd.in_flight);
	counter(out, "dnsnap_upstream_coalesced_total",
		"Misses that waited on an upstream query already in flight for the same key.",
		st->fwd.coalesced);
	upstream_prom(&st->fwd, out);

	gauge(out, "dnsnap_cache_entries", "Entries in the in-memory cache.", st->cache_entries);
	gauge(out, "dnsnap_cache_bytes", "Size of the in-memory cache.", st->cache_bytes);
	gauge(out, "dnsnap_cache_max_bytes", "Size limit of the in-memory cache.",
	      st->cache_max_bytes);
	counter(out, "dnsnap_cache_inserts_total", "Entries put in the in-memory cache.",
		st->cache_inserts);
	counter(out, "dnsnap_cache_evictions_total",
		"Entries evicted from the in-memory cache to stay under its limit.",
		st->cache_evictions);

	gauge(out, "dnsnap_map_open", "1 when a snapshot is mapped, else 0.", st->map_open != 0);
	gauge(out, "dnsnap_map_entries", "Entries in the mapped snapshot.", st->map_entries);
	gauge(out, "dnsnap_map_damaged_entries",
	      "Entries of the mapped snapshot found damaged by lookups.", st->map_damaged);
	counter(out, "dnsnap_map_time_refused_total",
		"Lookups that met a snapshot entry the time rule refuses (cached in the future, "
		"or living past the longest TTL).", st->map_time_refused);
	if (st->map_open && st->map_created_at != 0) {
		family(out, "dnsnap_map_age_seconds", "gauge",
		       "Time since the mapped snapshot was created.");
		sample(out, "dnsnap_map_age_seconds", "",
		       st->now > st->map_created_at ? st->now - st->map_created_at : 0);
	}

	counter(out, "dnsnap_snapshot_writes_total", "Snapshots published while serving.",
		st->snapshot_writes);
	counter(out, "dnsnap_snapshot_write_errors_total",
		"Snapshot publishes that failed.", st->snapshot_write_errors);
	if (st->snapshot_last_at != 0) {
		gauge(out, "dnsnap_snapshot_last_write_timestamp_seconds",
		      "Unix time of the last snapshot published.", st->snapshot_last_at);
		family(out, "dnsnap_snapshot_last_write_duration_seconds", "gauge",
		       "How long the last snapshot publish took.");
		sample_dbl(out, "dnsnap_snapshot_last_write_duration_seconds",
			   st->snapshot_last_seconds);
		gauge(out, "dnsnap_snapshot_last_write_entries",
		      "Entries written in the last snapshot published.", st->snapshot_last_entries);
	}
	family(out, "dnsnap_snapshot_longest_pause_seconds", "gauge",
	       "Longest time a cache shard was held from inserts by a snapshot write.");
	sample_dbl(out, "dnsnap_snapshot_longest_pause_seconds",
		   st->snapshot_longest_pause_ms / 1000.0);
	gauge(out, "dnsnap_start_time_seconds", "Unix time the server started.", st->start_time);
}

/* ------------------------------------------------------------------ JSON */

static void hist_json(jw_t *j, const char *key, const struct hist_counts *h)
{
	jw_key(j, key);
	jw_obj(j);
	jw_key(j, "le_us");
	jw_arr(j);
	for (unsigned i = 0; i < HIST_N; i++)
		jw_u64(j, hist_bounds_us[i]);
	jw_end(j);
	jw_key(j, "counts");
	jw_arr(j);
	uint64_t n = 0;
	for (unsigned i = 0; i <= HIST_N; i++) {
		jw_u64(j, h->b[i]);
		n += h->b[i];
	}
	jw_end(j);
	jw_ku64(j, "sum_us", h->sum_us);
	jw_ku64(j, "count", n);
	jw_end(j);
}

void metrics_json(const struct serve_stats *st, jw_t *j)
{
	int nup = nups(&st->fwd);
	struct hist_counts h;
	uint64_t dropped = 0;
	for (int i = 0; i < DROP_N; i++)
		dropped += st->drops[i];

	/* the keys serve --json had before the forwarder, with their meaning */
	jw_ku64(j, "queries", st->queries_udp + st->queries_tcp);
	jw_ku64(j, "udp", st->queries_udp);
	jw_ku64(j, "tcp", st->queries_tcp);
	jw_ku64(j, "hits", st->hits_memory + st->hits_map + st->hits_l2);
	jw_ku64(j, "misses", st->misses);
	jw_ku64(j, "formerr", st->rcode[RC_FORMERR]);
	jw_ku64(j, "notimp", st->rcode[RC_NOTIMP]);
	jw_ku64(j, "badvers", st->rcode[RC_BADVERS]);
	jw_ku64(j, "servfail", st->rcode[RC_SERVFAIL]);
	jw_ku64(j, "dropped", dropped);
	jw_ku64(j, "truncated", st->truncated);
	jw_ku64(j, "tcp_connections", st->tcp_connections);
	jw_ku64(j, "tcp_refused", st->tcp_refused);
	jw_ku64(j, "tcp_closed_idle", st->tcp_idle_closed);
	jw_ku64(j, "tcp_evicted", st->tcp_evicted);
	jw_ku64(j, "tcp_refused_source", st->tcp_refused_source);

	jw_ku64(j, "hits_memory", st->hits_memory);
	jw_ku64(j, "hits_map", st->hits_map);
	jw_ku64(j, "stale", st->stale);
	jw_ku64(j, "noerror", st->rcode[RC_NOERROR]);
	jw_ku64(j, "nxdomain", st->rcode[RC_NXDOMAIN]);
	jw_ku64(j, "refused", st->rcode[RC_REFUSED]);
	jw_ku64(j, "rcode_other", st->rcode[RC_OTHER]);
	for (int i = 0; i < DROP_N; i++) {
		char k[32];
		snprintf(k, sizeof k, "dropped_%s", drop_names[i]);
		jw_ku64(j, k, st->drops[i]);
	}
	jw_ku64(j, "refused_acl", st->refused_acl);
	jw_ku64(j, "refused_local", st->refused_local);
	jw_ku64(j, "upstream_answers", st->upstream_answers);
	jw_ku64(j, "servfail_upstream", st->servfail_upstream);
	h = of_hist(&st->answer_latency_cache);
	hist_json(j, "answer_latency_cache", &h);
	h = of_hist(&st->answer_latency_upstream);
	hist_json(j, "answer_latency_upstream", &h);
	if (st->l2.on) {
		static const char *const breaker[] = { "closed", "open", "half-open" };
		const struct l2_metrics *l = &st->l2;
		jw_ku64(j, "hits_l2", st->hits_l2);
		h = of_hist(&st->answer_latency_l2);
		hist_json(j, "answer_latency_l2", &h);
		jw_key(j, "l2");
		jw_obj(j);
		jw_ku64(j, "hits", l->hits);
		jw_ku64(j, "misses", l->misses);
		jw_ku64(j, "bad", l->bad);
		jw_ku64(j, "timeouts", l->timeouts);
		jw_ku64(j, "errors", l->errors);
		jw_ku64(j, "refused", l->refused);
		jw_kstr(j, "breaker", breaker[l->breaker >= 0 && l->breaker <= 2 ? l->breaker : 0]);
		jw_ku64(j, "write_queue", l->queue_depth);
		jw_ku64(j, "writes", l->writes);
		jw_ku64(j, "write_errors", l->write_errors);
		jw_ku64(j, "write_drops", l->write_drops);
		jw_ku64(j, "moved", l->moved);
		jw_ku64(j, "ask", l->ask);
		jw_ku64(j, "reconnects", l->reconnects);
		jw_ku64(j, "nodes", l->nodes);
		jw_end(j);
	}

	jw_kbool(j, "forwarding", st->forwarding);
	jw_ku64(j, "upstream_outstanding", st->fwd.in_flight);
	jw_ku64(j, "upstream_coalesced", st->fwd.coalesced);
	jw_key(j, "upstreams");
	jw_arr(j);
	for (int u = 0; u < nup; u++) {
		const dnsnap_fwd_upstream_stats_t *up = &st->fwd.up[u];
		jw_obj(j);
		jw_kstr(j, "name", up->name);
		jw_kbool(j, "up", up->healthy);
		jw_ku64(j, "queries", up->queries);
		jw_ku64(j, "answers", up->answers);
		jw_ku64(j, "timeouts", up->timeouts);
		jw_ku64(j, "errors", up->errors);
		jw_ku64(j, "mismatched", up->mismatched);
		jw_ku64(j, "tcp_fallbacks", up->tcp_fallbacks);
		h = of_upstream(up);
		hist_json(j, "latency", &h);
		jw_end(j);
	}
	jw_end(j);

	jw_ku64(j, "cache_entries", st->cache_entries);
	jw_ku64(j, "cache_bytes", st->cache_bytes);
	jw_ku64(j, "cache_max_bytes", st->cache_max_bytes);
	jw_ku64(j, "cache_inserts", st->cache_inserts);
	jw_ku64(j, "cache_evictions", st->cache_evictions);

	jw_kbool(j, "map_open", st->map_open);
	jw_ku64(j, "map_entries", st->map_entries);
	jw_ku64(j, "damaged_entries", st->map_damaged);
	jw_ku64(j, "time_refused", st->map_time_refused);
	jw_ku64(j, "map_created_at", st->map_created_at);
	jw_key(j, "map_age_seconds");
	if (st->map_open && st->map_created_at != 0)
		jw_u64(j, st->now > st->map_created_at ? st->now - st->map_created_at : 0);
	else
		jw_null(j);

	jw_ku64(j, "snapshot_writes", st->snapshot_writes);
	jw_ku64(j, "snapshot_write_errors", st->snapshot_write_errors);
	jw_ku64(j, "snapshot_last_at", st->snapshot_last_at);
	jw_kdbl(j, "snapshot_last_seconds", st->snapshot_last_seconds, 6);
	jw_ku64(j, "snapshot_last_entries", st->snapshot_last_entries);
	jw_kdbl(j, "snapshot_longest_pause_ms", st->snapshot_longest_pause_ms, 3);
	jw_ku64(j, "start_time", st->start_time);
}

/* ------------------------------------------------------------------ HTTP */

struct metrics_http {
	struct MHD_Daemon *d;
	void (*collect)(void *arg, struct serve_stats *out);
	int (*allow)(void *arg, const struct sockaddr *sa, socklen_t len);
	void *arg;
	int port;
};

/* MHD's accept policy: a source @p allow refuses is closed before a byte
 * is read */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *sa, socklen_t len)
{
	struct metrics_http *m = cls;
	return m->allow == NULL || m->allow(m->arg, sa, len) ? MHD_YES : MHD_NO;
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status, const char *text)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text,
								  MHD_RESPMEM_PERSISTENT);
	if (r == NULL)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	enum MHD_Result rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct metrics_http *m = cls;
	(void)version;
	(void)upload;
	(void)con_cls;
	/* whatever a client uploads is not read: the reply goes out now and
	 * MHD closes the connection after it */
	*upload_size = 0;
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
	if (strcmp(url, "/metrics") != 0)
		return reply_text(c, MHD_HTTP_NOT_FOUND, "not found: try /metrics\n");

	struct serve_stats *st = calloc(1, sizeof *st);
	char *body = NULL;
	size_t len = 0;
	FILE *f = st ? open_memstream(&body, &len) : NULL;
	if (f == NULL) {
		free(st);
		return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	}
	m->collect(m->arg, st);
	metrics_prom(st, f);
	free(st);
	if (fclose(f) != 0) {
		free(body);
		return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	}
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (r == NULL) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; version=0.0.4; charset=utf-8");
	enum MHD_Result rc = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return rc;
}

/* "127.0.0.1:9153" or "[::1]:9153"; the port is required (0: any) */
static int parse_addr_port(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[INET6_ADDRSTRLEN];
	const char *h = s, *port;
	size_t hl;
	int v6 = s[0] == '[';
	if (v6) {
		const char *e = strchr(s, ']');
		if (e == NULL || e[1] != ':')
			return -1;
		h = s + 1;
		hl = (size_t)(e - h);
		port = e + 2;
	} else {
		const char *c = strchr(s, ':');
		if (c == NULL || strchr(c + 1, ':') != NULL)
			return -1;
		hl = (size_t)(c - s);
		port = c + 1;
	}
	if (hl == 0 || hl >= sizeof host)
		return -1;
	memcpy(host, h, hl);
	host[hl] = 0;
	char *end;
	errno = 0;
	unsigned long p = strtoul(port, &end, 10);
	if (port[0] < '0' || port[0] > '9' || errno || *end || p > 65535)
		return -1;
	memset(ss, 0, sizeof *ss);
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	if (!v6 && inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)p);
		*len = sizeof *a4;
	} else if (v6 && inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)p);
		*len = sizeof *a6;
	} else {
		return -1;
	}
	return 0;
}

int metrics_http_start(const char *addr_port, void (*collect)(void *arg, struct serve_stats *out),
		       int (*allow)(void *arg, const struct sockaddr *sa, socklen_t len),
		       void *arg, struct metrics_http **out, char *err, size_t errcap)
{
	struct sockaddr_storage ss;
	socklen_t len = 0;
	if (parse_addr_port(addr_port, &ss, &len) != 0) {
		snprintf(err, errcap, "%s: not an address and port (127.0.0.1:9153, [::1]:9153)",
			 addr_port);
		return -1;
	}
	/* libmicrohttpd is opened now, by the servers that serve metrics (lazy.h) */
	const char *why = lazy_mhd();
	if (why != NULL) {
		snprintf(err, errcap, "%s", why);
		return -1;
	}
	/* the socket is ours, not MHD's: its errors (address in use, no such
	 * address here) are then told by errno */
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errcap, "%s: %s", addr_port, strerror(errno));
		return -1;
	}
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 16) != 0) {
		snprintf(err, errcap, "%s: %s", addr_port, strerror(errno));
		close(fd);
		return -1;
	}
	struct sockaddr_storage bound;
	socklen_t bl = sizeof bound;
	getsockname(fd, (struct sockaddr *)&bound, &bl);
	struct metrics_http *m = calloc(1, sizeof *m);
	if (m == NULL) {
		snprintf(err, errcap, "%s: out of memory", addr_port);
		close(fd);
		return -1;
	}
	m->collect = collect;
	m->allow = allow;
	m->arg = arg;
	m->port = ntohs(bound.ss_family == AF_INET ? ((struct sockaddr_in *)&bound)->sin_port
						   : ((struct sockaddr_in6 *)&bound)->sin6_port);
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	m->d = MHD_start_daemon(flags, 0, on_accept, m, on_request, m,
				MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)METRICS_CONN_MAX,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)METRICS_CONN_PER_IP,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)METRICS_IDLE_S,
				MHD_OPTION_END);
	if (m->d == NULL) {
		snprintf(err, errcap, "%s: the HTTP server (libmicrohttpd) did not start",
			 addr_port);
		/* not closed: whether MHD closed the socket it was given on its
		 * way out is not documented, and closing an fd twice may close
		 * another thread's; a failure here ends the server anyway */
		free(m);
		return -1;
	}
	*out = m;
	return 0;
}

int metrics_http_port(const struct metrics_http *m)
{
	return m->port;
}

void metrics_http_stop(struct metrics_http *m)
{
	if (m == NULL)
		return;
	/* MHD_stop_daemon closes the listening socket it was given */
	MHD_stop_daemon(m->d);
	free(m);
}
