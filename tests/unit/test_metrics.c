/*
 * test_metrics.c: serve's operations parts (cli/serve/): the Prometheus text
 * and JSON renderings of struct serve_stats, checked by exact lines here and
 * by independent parsers (prometheus_client's text parser, Python's json)
 * run as python3; the HTTP endpoint over a real socket; the log line
 * (format, escaping, threshold, the journal's form); sd_notify's datagram.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* before cmocka.h, whose fail() macro would rename ours */
#include "json.h"
#include "log.h"
#include "metrics.h"
#include "notify.h"

#include <cmocka.h>

/* ------------------------------------------------------------ fixtures */

/* Every counter a distinct value (the n-th field 1000 + 17 n), so that a
 * value found in the output can only have come from its own field. */
static uint64_t next_v;
static uint64_t v(void)
{
	return next_v += 17;
}

static void fill_hist(struct hist *h, uint64_t base)
{
	/* one sample in each bucket and base in the first: counts are distinct */
	for (unsigned i = 0; i < HIST_N; i++)
		hist_add(h, hist_bounds_us[i]);
	hist_add(h, 9000000); /* above the largest bound: +Inf only */
	for (uint64_t k = 0; k < base; k++)
		hist_add(h, 1);
}

/* The forwarder's histogram (plain counts) filled as fill_hist() fills serve's. */
static void fill_latency(dnsnap_fwd_upstream_stats_t *u, uint64_t base)
{
	static struct hist h;
	memset(&h, 0, sizeof h);
	fill_hist(&h, base);
	for (unsigned i = 0; i <= HIST_N; i++)
		u->latency[i] = atomic_load(&h.b[i]);
	u->latency_sum_us = atomic_load(&h.sum_us);
}

static void fill(struct serve_stats *st)
{
	memset(st, 0, sizeof *st);
	next_v = 1000;
	st->queries_udp = v();
	st->queries_tcp = v();
	st->hits_memory = v();
	st->hits_map = v();
	st->misses = v();
	st->stale = v();
	st->upstream_answers = v();
	st->servfail_upstream = v();
	st->refused_acl = v();
	st->refused_local = 8888;
	st->truncated = v();
	for (int i = 0; i < RC_N; i++)
		st->rcode[i] = v();
	for (int i = 0; i < DROP_N; i++)
		st->drops[i] = v();
	st->tcp_connections = v();
	st->tcp_refused = v();
	st->tcp_idle_closed = v();
	fill_hist(&st->answer_latency_cache, 3);
	fill_hist(&st->answer_latency_upstream, 5);
	st->forwarding = 1;
	st->fwd.in_flight = v();
	st->fwd.coalesced = v();
	st->fwd.nup = 2;
	dnsnap_fwd_upstream_stats_t *up = st->fwd.up;
	snprintf(up[0].name, sizeof up[0].name, "127.0.0.1:53");
	snprintf(up[1].name, sizeof up[1].name, "a\\b\"c\nd");
	for (int u = 0; u < 2; u++) {
		up[u].queries = v();
		up[u].answers = v();
		up[u].timeouts = v();
		up[u].errors = v();
		up[u].mismatched = v();
		up[u].tcp_fallbacks = v();
		up[u].healthy = u == 0;
		fill_latency(&up[u], 7 + (uint64_t)u);
	}
	st->cache_entries = v();
	st->cache_bytes = v();
	st->cache_max_bytes = v();
	st->cache_inserts = v();
	st->cache_evictions = v();
	st->map_open = 1;
	st->map_entries = v();
	st->map_damaged = v();
	st->map_time_refused = 7777;
	st->now = 1796040000;
	st->map_created_at = st->now - 3725;
	st->snapshot_writes = v();
	st->snapshot_write_errors = v();
	st->snapshot_last_at = 1796039000;
	st->snapshot_last_seconds = 1.25;
	st->snapshot_last_entries = v();
	st->snapshot_longest_pause_ms = 2.5;
	st->start_time = 1796030000;
	st->tcp_evicted = 9001;        /* not from v(): the values above keep theirs */
	st->tcp_refused_source = 9002;
}

static char *render_prom(const struct serve_stats *st)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	metrics_prom(st, f);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static char *render_json(const struct serve_stats *st)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	jw_t j;
	jw_init(&j, f);
	jw_obj(&j);
	metrics_json(st, &j);
	jw_end(&j);
	jw_nl(&j);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return;
	fail_msg("no line '%s' in:\n%s", line, text);
}

static void no_text(const char *text, const char *s)
{
	if (strstr(text, s) != NULL)
		fail_msg("'%s' is in:\n%s", s, text);
}

static char tmpdir[64];

static int setup_dir(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/test_metrics.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static char *read_all(FILE *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	char chunk[4096];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		fwrite(chunk, 1, n, m);
	fclose(m);
	return buf;
}

/* Run python3 with @p script on @p arg; its standard output, exit status 0
 * asserted. Debian's python3-prometheus-client is in /usr/bin/python3's
 * path, which a python3 first in PATH (pyenv, a venv) may not have. */
static char *python(const char *script, const char *arg)
{
	char sp[128], cmd[512];
	snprintf(sp, sizeof sp, "%s/check.py", tmpdir);
	write_file(sp, script);
	snprintf(cmd, sizeof cmd,
		 "py=python3; $py -c 'import prometheus_client' 2>/dev/null || "
		 "py=/usr/bin/python3; "
		 "$py '%s' '%s' 2>&1", sp, arg);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char *out = read_all(p);
	int rc = pclose(p);
	if (rc != 0)
		fail_msg("python3 failed (status %d; python3-prometheus-client: make deps):\n%s",
			 rc, out);
	return out;
}

/* ------------------------------------------------------------ Prometheus */

static void test_prom_lines(void **state)
{
	(void)state;
	struct serve_stats *st = calloc(1, sizeof *st);
	fill(st);
	char *t = render_prom(st);

	has_line(t, "# HELP dnsnap_queries_total DNS queries received, by transport.");
	has_line(t, "# TYPE dnsnap_queries_total counter");
	has_line(t, "dnsnap_queries_total{transport=\"udp\"} 1017");
	has_line(t, "dnsnap_queries_total{transport=\"tcp\"} 1034");
	has_line(t, "dnsnap_cache_hits_total{tier=\"memory\"} 1051");
	has_line(t, "dnsnap_cache_hits_total{tier=\"map\"} 1068");
	has_line(t, "dnsnap_map_time_refused_total 7777");
	has_line(t, "dnsnap_refused_local_total 8888");
	has_line(t, "dnsnap_cache_misses_total 1085");
	has_line(t, "dnsnap_answers_total{rcode=\"NOERROR\"} 1187");
	has_line(t, "dnsnap_answers_total{rcode=\"other\"} 1306");
	has_line(t, "dnsnap_drops_total{reason=\"malformed\"} 1323");
	has_line(t, "dnsnap_drops_total{reason=\"send\"} 1374");
	/* the label value escaped: backslash, quote, newline */
	has_line(t, "dnsnap_upstream_queries_total"
		    "{upstream=\"a\\\\b\\\"c\\nd\",outcome=\"timeout\"} 1612");
	has_line(t, "dnsnap_upstream_queries_total"
		    "{upstream=\"127.0.0.1:53\",outcome=\"tcp_fallback\"} 1561");
	has_line(t, "dnsnap_upstream_up{upstream=\"127.0.0.1:53\"} 1");
	has_line(t, "dnsnap_upstream_up{upstream=\"a\\\\b\\\"c\\nd\"} 0");
	/* a histogram: cumulative buckets in seconds, +Inf, sum in seconds, count */
	has_line(t, "# TYPE dnsnap_answer_latency_seconds histogram");
	has_line(t, "dnsnap_answer_latency_seconds_bucket{path=\"cache\",le=\"0.000025\"} 4");
	has_line(t, "dnsnap_answer_latency_seconds_bucket{path=\"cache\",le=\"0.00005\"} 5");
	has_line(t, "dnsnap_answer_latency_seconds_bucket{path=\"cache\",le=\"1\"} 18");
	has_line(t, "dnsnap_answer_latency_seconds_bucket{path=\"cache\",le=\"2.5\"} 19");
	has_line(t, "dnsnap_answer_latency_seconds_bucket{path=\"cache\",le=\"+Inf\"} 20");
	/* 25 + 50 + ... + 2500000 = 4444425 us, + 9 s, + 3 x 1 us */
	has_line(t, "dnsnap_answer_latency_seconds_sum{path=\"cache\"} 13.444428");
	has_line(t, "dnsnap_answer_latency_seconds_count{path=\"cache\"} 20");
	has_line(t, "dnsnap_upstream_latency_seconds_count{upstream=\"127.0.0.1:53\"} 24");
	has_line(t, "dnsnap_map_age_seconds 3725");
	has_line(t, "dnsnap_snapshot_last_write_duration_seconds 1.25");
	has_line(t, "dnsnap_snapshot_longest_pause_seconds 0.0025");
	has_line(t, "dnsnap_snapshot_last_write_timestamp_seconds 1796039000");
	has_line(t, "dnsnap_start_time_seconds 1796030000");
	has_line(t, "dnsnap_forwarding 1");
	has_line(t, "dnsnap_tcp_connections_evicted_total 9001");
	has_line(t, "dnsnap_tcp_connections_refused_source_total 9002");

	/* every counter's value, each at the end of a line */
	for (uint64_t x = 1017; x <= next_v; x += 17) {
		char s[32];
		snprintf(s, sizeof s, " %llu\n", (unsigned long long)x);
		if (strstr(t, s) == NULL)
			fail_msg("value %llu is missing", (unsigned long long)x);
	}
	/* HELP and TYPE once per family */
	const char *p = strstr(t, "# TYPE dnsnap_upstream_queries_total");
	assert_non_null(p);
	assert_null(strstr(p + 1, "# TYPE dnsnap_upstream_queries_total"));
	free(t);
	free(st);
}

/* Without a map, a write, upstreams: no age, no last write, no upstream families. */
static void test_prom_absent(void **state)
{
	(void)state;
	struct serve_stats *st = calloc(1, sizeof *st);
	st->now = 1796040000;
	char *t = render_prom(st);
	has_line(t, "dnsnap_map_open 0");
	has_line(t, "dnsnap_forwarding 0");
	has_line(t, "dnsnap_cache_misses_total 0");
	has_line(t, "dnsnap_answer_latency_seconds_bucket{path=\"upstream\",le=\"+Inf\"} 0");
	has_line(t, "dnsnap_answer_latency_seconds_sum{path=\"upstream\"} 0");
	no_text(t, "dnsnap_map_age_seconds");
	no_text(t, "dnsnap_snapshot_last_write");
	no_text(t, "dnsnap_upstream_up");
	no_text(t, "dnsnap_upstream_latency_seconds");
	free(t);
	free(st);
}

/* prometheus_client's parser, an implementation of the format that is not
 * ours: every line parses, each family has its type, and the samples read
 * back are those written. */
static const char prom_check[] =
	"import json, sys\n"
	"from prometheus_client.parser import text_string_to_metric_families\n"
	"text = open(sys.argv[1]).read()\n"
	"n = 0\n"
	"for fam in text_string_to_metric_families(text):\n"
	"    print('family', fam.name, fam.type)\n"
	"    for s in fam.samples:\n"
	"        n += 1\n"
	"        print(s.name + json.dumps(s.labels, sort_keys=True), repr(s.value))\n"
	"print('samples', n)\n"
	"print('lines', sum(1 for l in text.splitlines() if not l.startswith('#')))\n";

static void test_prom_parser(void **state)
{
	(void)state;
	struct serve_stats *st = calloc(1, sizeof *st);
	fill(st);
	char *t = render_prom(st);
	char path[128];
	snprintf(path, sizeof path, "%s/metrics.txt", tmpdir);
	write_file(path, t);
	char *out = python(prom_check, path);

	has_line(out, "family dnsnap_queries counter");
	has_line(out, "family dnsnap_cache_entries gauge");
	has_line(out, "family dnsnap_answer_latency_seconds histogram");
	has_line(out, "family dnsnap_upstream_latency_seconds histogram");
	has_line(out, "dnsnap_queries_total{\"transport\": \"tcp\"} 1034.0");
	has_line(out, "dnsnap_upstream_queries_total{\"outcome\": \"mismatched\", "
		      "\"upstream\": \"a\\\\b\\\"c\\nd\"} 1646.0");
	has_line(out, "dnsnap_upstream_latency_seconds_bucket{\"le\": \"0.0001\", "
		      "\"upstream\": \"a\\\\b\\\"c\\nd\"} 11.0");
	has_line(out, "dnsnap_answer_latency_seconds_sum{\"path\": \"upstream\"} 13.44443");
	has_line(out, "dnsnap_snapshot_longest_pause_seconds{} 0.0025");
	/* every sample line of the text was read as a sample */
	const char *s = strstr(out, "\nsamples ");
	const char *l = strstr(out, "\nlines ");
	assert_non_null(s);
	assert_non_null(l);
	assert_int_equal(strtol(s + 9, NULL, 10), strtol(l + 7, NULL, 10));
	assert_int_equal(strtol(s + 9, NULL, 10), 138); /* + time_refused, refused_local */
	free(out);
	free(t);
	free(st);
}

/* ------------------------------------------------------------------ JSON */

static const char json_check[] =
	"import json, sys\n"
	"o = json.load(open(sys.argv[1]))\n"
	"for k in sorted(o):\n"
	"    v = o[k]\n"
	"    if isinstance(v, dict):\n"
	"        print(k, v['le_us'][0], v['le_us'][-1], len(v['le_us']), len(v['counts']),\n"
	"              sum(v['counts']) == v['count'], v['sum_us'], v['count'])\n"
	"    elif isinstance(v, list):\n"
	"        for u in v:\n"
	"            print(k, json.dumps(u['name']), u['up'], u['queries'], u['tcp_fallbacks'],\n"
	"                  u['latency']['count'])\n"
	"    else:\n"
	"        print(k, json.dumps(v))\n";

static void test_json(void **state)
{
	(void)state;
	struct serve_stats *st = calloc(1, sizeof *st);
	fill(st);
	char *t = render_json(st);
	char path[128];
	snprintf(path, sizeof path, "%s/stats.json", tmpdir);
	write_file(path, t);
	char *out = python(json_check, path);

	/* the keys serve --json had, with their meaning */
	has_line(out, "queries 2051");    /* udp + tcp */
	has_line(out, "udp 1017");
	has_line(out, "tcp 1034");
	has_line(out, "hits 2119");       /* memory + map: 1051 + 1068 (a stale answer is a miss) */
	has_line(out, "misses 1085");
	has_line(out, "formerr 1204");    /* rcode[] */
	has_line(out, "servfail 1221");
	has_line(out, "notimp 1255");
	has_line(out, "badvers 1289");
	has_line(out, "dropped 5394");    /* 1323 + 1340 + 1357 + 1374 */
	has_line(out, "truncated 1170");
	has_line(out, "tcp_connections 1391");
	has_line(out, "tcp_refused 1408");
	has_line(out, "tcp_closed_idle 1425");
	has_line(out, "tcp_evicted 9001");
	has_line(out, "tcp_refused_source 9002");
	/* the new ones */
	has_line(out, "hits_memory 1051");
	has_line(out, "stale 1102");
	has_line(out, "time_refused 7777");
	has_line(out, "rcode_other 1306");
	has_line(out, "dropped_waiters 1357");
	has_line(out, "refused_acl 1153");
	has_line(out, "refused_local 8888");
	has_line(out, "forwarding true");
	has_line(out, "map_open true");
	has_line(out, "map_age_seconds 3725");
	has_line(out, "snapshot_last_seconds 1.25");
	has_line(out, "snapshot_longest_pause_ms 2.5");
	has_line(out, "start_time 1796030000");
	has_line(out, "answer_latency_cache 25 2500000 16 17 True 13444428 20");
	has_line(out, "upstreams \"127.0.0.1:53\" True 1476 1561 24");
	has_line(out, "upstreams \"a\\\\b\\\"c\\nd\" False 1578 1663 25");
	free(out);
	free(t);

	/* no map: its age is null */
	memset(st, 0, sizeof *st);
	t = render_json(st);
	write_file(path, t);
	out = python(json_check, path);
	has_line(out, "map_age_seconds null");
	has_line(out, "forwarding false");
	free(out);
	free(t);
	free(st);
}

/* ------------------------------------------------------------------ HTTP */

static void collect(void *arg, struct serve_stats *out)
{
	int *calls = arg;
	(*calls)++;
	fill(out);
}

/* One request over a new connection; the whole reply (the server closes). */
static char *http(int family, int port, const char *request)
{
	int fd = socket(family, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	struct timeval tv = { 5, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	struct sockaddr_storage ss;
	socklen_t len;
	memset(&ss, 0, sizeof ss);
	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof *a;
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		a->sin6_addr = in6addr_loopback;
		len = sizeof *a;
	}
	assert_int_equal(connect(fd, (struct sockaddr *)&ss, len), 0);
	assert_int_equal(write(fd, request, strlen(request)), (ssize_t)strlen(request));
	FILE *f = fdopen(fd, "r");
	assert_non_null(f);
	char *r = read_all(f);
	fclose(f);
	return r;
}

static void test_http(void **state)
{
	(void)state;
	int calls = 0;
	struct metrics_http *m = NULL;
	char err[256];
	assert_int_equal(metrics_http_start("127.0.0.1:0", collect, NULL, &calls, &m, err, sizeof err),
			 0);
	int port = metrics_http_port(m);
	assert_true(port > 0);

	char *r = http(AF_INET, port,
		       "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	assert_true(strncmp(r, "HTTP/1.1 200 ", 13) == 0);
	if (strcasestr(r, "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n") == NULL)
		fail_msg("no Prometheus content type in:\n%s", r);
	/* the body is metrics_prom() of what collect filled */
	const char *body = strstr(r, "\r\n\r\n");
	assert_non_null(body);
	struct serve_stats *st = calloc(1, sizeof *st);
	fill(st);
	char *want = render_prom(st);
	assert_string_equal(body + 4, want);
	assert_int_equal(calls, 1);
	free(want);
	free(r);

	r = http(AF_INET, port, "GET /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	assert_true(strncmp(r, "HTTP/1.1 404 ", 13) == 0);
	free(r);
	r = http(AF_INET, port, "GET /metricsx HTTP/1.0\r\n\r\n");
	assert_true(strncmp(r, "HTTP/1.0 404 ", 13) == 0 || strncmp(r, "HTTP/1.1 404 ", 13) == 0);
	free(r);
	r = http(AF_INET, port,
		 "POST /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
		 "Content-Length: 2\r\n\r\nab");
	assert_true(strncmp(r, "HTTP/1.1 405 ", 13) == 0);
	assert_non_null(strcasestr(r, "\r\nAllow: GET, HEAD\r\n"));
	free(r);
	r = http(AF_INET, port, "HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	assert_true(strncmp(r, "HTTP/1.1 200 ", 13) == 0);
	assert_null(strstr(r, "dnsnap_queries_total"));
	free(r);
	assert_int_equal(calls, 2);

	/* the port taken: the second start fails, naming the address */
	char addr[32];
	snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
	struct metrics_http *m2 = NULL;
	assert_int_equal(metrics_http_start(addr, collect, NULL, &calls, &m2, err, sizeof err), -1);
	char want_err[64];
	snprintf(want_err, sizeof want_err, "127.0.0.1:%d: Address already in use", port);
	assert_string_equal(err, want_err);
	assert_null(m2);
	metrics_http_stop(m);
	metrics_http_stop(NULL);
	free(st);
}

/* A connection to 127.0.0.1:@p port from @p src (127.x.y.z), reads
 * waiting at most 5 s */
static int connect_from(int port, const char *src)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	struct timeval tv = { 5, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	struct sockaddr_in b = { .sin_family = AF_INET };
	assert_int_equal(inet_pton(AF_INET, src, &b.sin_addr), 1);
	assert_int_equal(bind(fd, (struct sockaddr *)&b, sizeof b), 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
	return fd;
}

static const char REQ[] = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

/* The whole request on @p fd, then whether the reply is a 200 */
static int scrape_ok(int fd)
{
	assert_int_equal(write(fd, REQ, strlen(REQ)), (ssize_t)strlen(REQ));
	FILE *f = fdopen(fd, "r");
	char *r = read_all(f);
	fclose(f);
	int ok = strncmp(r, "HTTP/1.1 200 ", 13) == 0;
	free(r);
	return ok;
}

/* Whether the server closed @p fd with nothing sent: a read ends (0 or a
 * reset), not the 5 s of SO_RCVTIMEO */
static int closed_empty(int fd)
{
	char b[64];
	ssize_t n = read(fd, b, sizeof b);
	return n == 0 || (n < 0 && errno == ECONNRESET);
}

/* METRICS_CONN_MAX connections at once, from as many addresses: one more
 * waits, unanswered (in the kernel's queue: libmicrohttpd stops accepting
 * at its limit), until one of them closes. The wait is checked for 300 ms
 * only (under METRICS_IDLE_S), but a failure is never spurious: with the
 * limit working the extra one is never answered while the others stay. */
static void test_http_limit(void **state)
{
	(void)state;
	int calls = 0;
	struct metrics_http *m = NULL;
	char err[256];
	assert_int_equal(metrics_http_start("127.0.0.1:0", collect, NULL, &calls, &m, err,
					    sizeof err), 0);
	int port = metrics_http_port(m);
	int idle[METRICS_CONN_MAX];
	for (int i = 0; i < METRICS_CONN_MAX; i++) {
		char src[32];
		snprintf(src, sizeof src, "127.0.1.%d", i + 1);
		idle[i] = connect_from(port, src);
		/* half a request: the connection waits for the rest */
		assert_int_equal(write(idle[i], "GET /metrics HTTP/1.1\r\n", 23), 23);
	}
	int over = connect_from(port, "127.0.2.1");
	assert_int_equal(write(over, REQ, strlen(REQ)), (ssize_t)strlen(REQ));
	struct pollfd p = { .fd = over, .events = POLLIN };
	assert_int_equal(poll(&p, 1, 300), 0);
	assert_int_equal(calls, 0);
	close(idle[0]);
	FILE *f = fdopen(over, "r");
	char *r = read_all(f);
	fclose(f);
	assert_true(strncmp(r, "HTTP/1.1 200 ", 13) == 0);
	assert_int_equal(calls, 1);
	free(r);
	for (int i = 1; i < METRICS_CONN_MAX; i++)
		close(idle[i]);
	metrics_http_stop(m);
}

/* One address holds METRICS_CONN_PER_IP connections, silent: its next one
 * is closed at once, another address is answered, and a silent connection
 * is closed after METRICS_IDLE_S (before the 5 s a read waits). */
static void test_http_per_ip(void **state)
{
	(void)state;
	int calls = 0;
	struct metrics_http *m = NULL;
	char err[256];
	assert_int_equal(metrics_http_start("127.0.0.1:0", collect, NULL, &calls, &m, err,
					    sizeof err), 0);
	int port = metrics_http_port(m);
	int held[METRICS_CONN_PER_IP];
	for (int i = 0; i < METRICS_CONN_PER_IP; i++) {
		held[i] = connect_from(port, "127.0.3.1");
		assert_int_equal(write(held[i], "G", 1), 1);
	}
	int more = connect_from(port, "127.0.3.1");
	assert_true(closed_empty(more));
	close(more);
	assert_true(scrape_ok(connect_from(port, "127.0.3.2")));
	assert_int_equal(calls, 1);
	assert_true(closed_empty(held[0])); /* the idle timeout */
	for (int i = 0; i < METRICS_CONN_PER_IP; i++)
		close(held[i]);
	metrics_http_stop(m);
}

/* The accept policy: only 127.0.3.1 (what serve's --metrics-allow says) */
static int only_one(void *arg, const struct sockaddr *sa, socklen_t len)
{
	(void)arg;
	const struct sockaddr_in *a = (const struct sockaddr_in *)sa;
	return len >= sizeof *a && a->sin_family == AF_INET &&
	       a->sin_addr.s_addr == htonl(0x7f000301);
}

static void test_http_allow(void **state)
{
	(void)state;
	int calls = 0;
	struct metrics_http *m = NULL;
	char err[256];
	assert_int_equal(metrics_http_start("127.0.0.1:0", collect, only_one, &calls, &m, err,
					    sizeof err), 0);
	int port = metrics_http_port(m);
	int no = connect_from(port, "127.0.3.2");
	assert_int_equal(write(no, REQ, strlen(REQ)), (ssize_t)strlen(REQ));
	assert_true(closed_empty(no));
	close(no);
	assert_int_equal(calls, 0);
	assert_true(scrape_ok(connect_from(port, "127.0.3.1")));
	assert_int_equal(calls, 1);
	metrics_http_stop(m);
}

static void test_http_addresses(void **state)
{
	(void)state;
	int calls = 0;
	struct metrics_http *m = NULL;
	char err[256];
	static const char *const bad[] = {
		"", "127.0.0.1", "127.0.0.1:", "127.0.0.1:x", "127.0.0.1:65536", "127.0.0.1:-1",
		"localhost:9153", "::1:9153", "[::1]", "[::1]9153", "[127.0.0.1]:9153", ":9153",
		"127.0.0.1:+9", "[]:9153",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		if (metrics_http_start(bad[i], collect, NULL, &calls, &m, err, sizeof err) != -1)
			fail_msg("accepted '%s'", bad[i]);
		char want[128];
		snprintf(want, sizeof want,
			 "%s: not an address and port (127.0.0.1:9153, [::1]:9153)", bad[i]);
		assert_string_equal(err, want);
	}
	/* an address this host does not have */
	assert_int_equal(metrics_http_start("192.0.2.1:9153", collect, NULL, &calls, &m, err, sizeof err),
			 -1);
	assert_string_equal(err, "192.0.2.1:9153: Cannot assign requested address");

	/* IPv6 loopback, where the host has it */
	int probe = socket(AF_INET6, SOCK_STREAM, 0);
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	int have6 = probe >= 0 && bind(probe, (struct sockaddr *)&a6, sizeof a6) == 0;
	if (probe >= 0)
		close(probe);
	if (!have6) {
		fprintf(stderr, "no IPv6 loopback here: [::1] not tried\n");
		return;
	}
	assert_int_equal(metrics_http_start("[::1]:0", collect, NULL, &calls, &m, err, sizeof err), 0);
	char *r = http(AF_INET6, metrics_http_port(m),
		       "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	assert_true(strncmp(r, "HTTP/1.1 200 ", 13) == 0);
	assert_non_null(strstr(r, "\ndnsnap_cache_misses_total 1085\n"));
	free(r);
	metrics_http_stop(m);
}

/* ------------------------------------------------------------------- log */

/* Run @p fn with standard error in a file; @return what it wrote */
static char *capture_stderr(void (*fn)(void))
{
	char path[128];
	snprintf(path, sizeof path, "%s/stderr", tmpdir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	fflush(stderr);
	int saved = dup(STDERR_FILENO);
	dup2(fd, STDERR_FILENO);
	slog_init();
	fn();
	dup2(saved, STDERR_FILENO);
	close(saved);
	slog_init();
	lseek(fd, 0, SEEK_SET);
	FILE *f = fdopen(fd, "r");
	char *out = read_all(f);
	fclose(f);
	return out;
}

static void log_some(void)
{
	assert_int_equal(slog_level_arg("info"), LOG_INFO);
	slog(LOG_WARNING, "snapshot %s is %d hours old", "cache.snap", 30);
	slog(LOG_DEBUG, "not written: under the threshold");
	slog(LOG_INFO, "name a\nb\x01\x7f\\.example. c\xc3\xa9");
	slog(LOG_ERR, "error one");
	errno = ENOENT;
	slog(LOG_ERR, "open x: %m");
	assert_int_equal(slog_level_arg("error"), LOG_ERR);
	slog(LOG_WARNING, "not written either");
	assert_int_equal(slog_level_arg("verbose"), -1);
	assert_int_equal(slog_level(), LOG_ERR);
	assert_int_equal(slog_level_arg("debug"), LOG_DEBUG);
	slog(LOG_DEBUG, "debug now");
	slog_level_arg("info");
}

static void test_log(void **state)
{
	(void)state;
	unsetenv("JOURNAL_STREAM");
	char *out = capture_stderr(log_some);
	regex_t re;
	/* a stamp, a level, a message: a line of its own each */
	assert_int_equal(regcomp(&re,
				 "^20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]"
				 "\\.[0-9]{3}Z (debug|info|warning|error): [^\n]*\n$",
				 REG_EXTENDED),
			 0);
	int lines = 0;
	for (char *p = out; *p; lines++) {
		char *e = strchr(p, '\n');
		assert_non_null(e);
		char save = e[1];
		e[1] = 0;
		if (regexec(&re, p, 0, NULL, 0) != 0)
			fail_msg("bad log line: '%s'", p);
		e[1] = save;
		p = e + 1;
	}
	regfree(&re);
	assert_int_equal(lines, 5);
	/* the messages after the stamp and a space (25 bytes) */
	char *l = out;
	const char *want[] = {
		"warning: snapshot cache.snap is 30 hours old",
		"info: name a\\x0ab\\x01\\x7f\\.example. c\xc3\xa9",
		"error: error one",
		"error: open x: No such file or directory",
		"debug: debug now",
	};
	for (int i = 0; i < 5; i++) {
		char *e = strchr(l, '\n');
		*e = 0;
		assert_string_equal(l + 25, want[i]);
		l = e + 1;
	}
	free(out);
}

static void log_long(void)
{
	static char big[SLOG_LINE_MAX * 3]; /* over the line, whatever its bound */
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = 0;
	slog(LOG_WARNING, "%s", big);
	memset(big, '\n', SLOG_LINE_MAX / 2); /* each 4 bytes, \x0a: twice the line */
	slog(LOG_WARNING, "%s", big);
}

/* a long message is cut, still one line ending in "...", at most SLOG_LINE_MAX bytes */
static void test_log_long(void **state)
{
	(void)state;
	unsetenv("JOURNAL_STREAM");
	char *out = capture_stderr(log_long);
	char *e = strchr(out, '\n');
	assert_non_null(e);
	assert_true(e - out + 1 <= SLOG_LINE_MAX);
	assert_true(e - out + 1 >= SLOG_LINE_MAX - 4);
	assert_memory_equal(e - 4, "x...", 4);
	char *e2 = strchr(e + 1, '\n');
	assert_non_null(e2);
	assert_true(e2 - e <= SLOG_LINE_MAX);
	assert_memory_equal(e2 - 7, "\\x0a...", 7);
	assert_string_equal(e2 + 1, "");
	free(out);
}

static void log_journal(void)
{
	struct stat st;
	char v[64];
	assert_int_equal(fstat(STDERR_FILENO, &st), 0);
	snprintf(v, sizeof v, "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", v, 1);
	slog_init();
	slog(LOG_WARNING, "old snapshot");
	slog(LOG_ERR, "bad\tthing");
	slog(LOG_INFO, "listening");
	/* another stream's numbers: a redirected stderr, not the journal */
	snprintf(v, sizeof v, "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino + 1);
	setenv("JOURNAL_STREAM", v, 1);
	slog_init();
	slog(LOG_INFO, "stamped");
	unsetenv("JOURNAL_STREAM");
}

static void test_log_journal(void **state)
{
	(void)state;
	char *out = capture_stderr(log_journal);
	const char *p = "<4>old snapshot\n<3>bad\\x09thing\n<6>listening\n";
	assert_memory_equal(out, p, strlen(p));
	assert_int_equal(strlen(out + strlen(p)), 25 + strlen("info: stamped\n"));
	assert_string_equal(out + strlen(p) + 25, "info: stamped\n");
	free(out);
}

/* ---------------------------------------------------------------- notify */

static int bind_dgram(const char *name, int abstract)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	assert_true(fd >= 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(name);
	socklen_t len;
	if (abstract) {
		memcpy(sa.sun_path + 1, name, n);
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
	} else {
		memcpy(sa.sun_path, name, n);
		len = sizeof sa;
	}
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, len), 0);
	struct timeval tv = { 5, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	return fd;
}

static void recv_is(int fd, const char *want)
{
	char buf[256];
	ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
	assert_true(n >= 0);
	buf[n] = 0;
	assert_string_equal(buf, want);
}

static void test_notify(void **state)
{
	(void)state;
	unsetenv("NOTIFY_SOCKET");
	assert_int_equal(notify_systemd("READY=1"), 0);

	char path[128];
	snprintf(path, sizeof path, "%s/notify", tmpdir);
	int fd = bind_dgram(path, 0);
	setenv("NOTIFY_SOCKET", path, 1);
	assert_int_equal(notify_systemd("READY=1"), 1);
	recv_is(fd, "READY=1");
	assert_int_equal(notify_systemd("RELOADING=1\nSTATUS=loading cache.snap"), 1);
	recv_is(fd, "RELOADING=1\nSTATUS=loading cache.snap");
	close(fd);

	char name[64];
	snprintf(name, sizeof name, "test_metrics.%d", (int)getpid());
	fd = bind_dgram(name, 1);
	char at[80];
	snprintf(at, sizeof at, "@%s", name);
	setenv("NOTIFY_SOCKET", at, 1);
	assert_int_equal(notify_systemd("STOPPING=1"), 1);
	recv_is(fd, "STOPPING=1");
	close(fd);

	/* nobody listening, and not a socket's name */
	assert_int_equal(unlink(path), 0);
	setenv("NOTIFY_SOCKET", path, 1);
	assert_int_equal(notify_systemd("READY=1"), -1);
	setenv("NOTIFY_SOCKET", "relative/path", 1);
	errno = 0;
	assert_int_equal(notify_systemd("READY=1"), -1);
	assert_int_equal(errno, EINVAL);
	unsetenv("NOTIFY_SOCKET");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prom_lines),
		cmocka_unit_test(test_prom_absent),
		cmocka_unit_test(test_prom_parser),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_http),
		cmocka_unit_test(test_http_limit),
		cmocka_unit_test(test_http_per_ip),
		cmocka_unit_test(test_http_allow),
		cmocka_unit_test(test_http_addresses),
		cmocka_unit_test(test_log),
		cmocka_unit_test(test_log_long),
		cmocka_unit_test(test_log_journal),
		cmocka_unit_test(test_notify),
	};
	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
