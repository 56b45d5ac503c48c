/*
 * test_l2.c: the tool's Redis client (cli/l2): slots (vectors from a real
 * Redis 7's CLUSTER KEYSLOT), URLs, the AUTH file, CLUSTER SLOTS and
 * redirection replies, SCAN's pattern; and the serve thread against a Unix
 * socket nobody listens on (errors, the breaker) and a fake Redis of this
 * test (a thread on 127.0.0.1, a port the kernel picks) that answers as
 * told: a late reply still matched to its GET, error and oversized replies,
 * AUTH refused. No durations are asserted: waits are generous deadlines.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "l2_int.h"

/* ---------------------------------------------------------------- slots */

static void test_crc16_matches_the_cluster_specs_vector(void **state)
{
	(void)state;
	assert_int_equal(l2_crc16((const uint8_t *)"123456789", 9), 0x31C3);
}

static void test_slots_match_redis_keyslot(void **state)
{
	/* redis-cli -p P cluster keyslot KEY on Redis 7.0 */
	static const struct {
		const char *key;
		unsigned slot;
	} v[] = {
		{"foo", 12182},           {"bar", 5061},
		{"123456789", 12739},     {"{user1000}.following", 3443},
		{"{user1000}.followers", 3443},
		{"foo{}{bar}", 8363},     /* an empty tag: the whole key */
		{"foo{{bar}}zap", 4015},  /* the tag is "{bar" */
		{"foo{bar}{zap}", 5061},  /* the first tag: "bar" */
		{"dnsnap:key0", 12126},   {"{", 4092},
		{"}{a}", 15495},          {"", 0},
	};
	(void)state;
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		assert_int_equal(l2_key_slot((const uint8_t *)v[i].key, strlen(v[i].key)),
				 v[i].slot);
}

static void test_binary_keys_hash_every_byte(void **state)
{
	const uint8_t a[] = {'k', 0, 'x'}, b[] = {'k', 0, 'y'};
	(void)state;
	assert_int_not_equal(l2_key_slot(a, sizeof a), l2_key_slot(b, sizeof b));
	assert_true(l2_key_slot(a, sizeof a) < L2_SLOTS);
}

/* ----------------------------------------------------------------- URLs */

static void test_good_urls_parse(void **state)
{
	struct l2_url u;
	char err[256];
	(void)state;
	assert_int_equal(l2_url_parse("redis://127.0.0.1", &u, err, sizeof err), 0);
	assert_int_equal(u.kind, L2_URL_REDIS);
	assert_string_equal(u.addr[0].host, "127.0.0.1");
	assert_int_equal(u.addr[0].port, 6379);
	assert_int_equal(u.db, 0);
	assert_int_equal(l2_url_parse("redis://cache-1.example:7000/3", &u, err, sizeof err), 0);
	assert_string_equal(u.addr[0].host, "cache-1.example");
	assert_int_equal(u.addr[0].port, 7000);
	assert_int_equal(u.db, 3);
	assert_int_equal(l2_url_parse("redis://[::1]:6380", &u, err, sizeof err), 0);
	assert_string_equal(u.addr[0].host, "::1");
	assert_int_equal(u.addr[0].port, 6380);
	assert_int_equal(l2_url_parse("unix:///run/redis/redis.sock?db=2", &u, err, sizeof err), 0);
	assert_int_equal(u.kind, L2_URL_UNIX);
	assert_string_equal(u.addr[0].host, "/run/redis/redis.sock");
	assert_int_equal(u.addr[0].port, 0);
	assert_int_equal(u.db, 2);
	assert_int_equal(l2_url_parse("redis-cluster://10.0.0.1:7000,10.0.0.2:7001,[::1]:7002", &u,
				      err, sizeof err), 0);
	assert_int_equal(u.kind, L2_URL_CLUSTER);
	assert_int_equal(u.n, 3);
	assert_string_equal(u.addr[1].host, "10.0.0.2");
	assert_int_equal(u.addr[1].port, 7001);
	assert_string_equal(u.addr[2].host, "::1");
}

static void test_bad_urls_are_refused_with_a_reason(void **state)
{
	static const struct {
		const char *url, *why;
	} v[] = {
		{"redis://user:pw@127.0.0.1", "refused"},
		{"redis://:pw@127.0.0.1", "refused"},
		{"redis-cluster://a:1,u:p@b:2", "refused"},
		{"redis://127.0.0.1:0", "port"},
		{"redis://127.0.0.1:65536", "port"},
		{"redis://127.0.0.1:12ab", "port"},
		{"redis://127.0.0.1:", "port"},
		{"redis://", "host"},
		{"redis://:6379", "host"},
		{"redis://h/x", "database"},
		{"redis://h/1/2", "database"},
		{"redis://[::1", "']'"},
		{"redis://h o", "host"},
		{"unix://relative.sock", "absolute"},
		{"unix:///", "absolute"},
		{"unix:///s?db=x", "db="},
		{"unix:///s?x=1", "db="},
		{"redis-cluster://", "seed"},
		{"redis-cluster://a:1,", "empty seed"},
		{"redis-cluster://a:1/0", "database"},
		{"http://127.0.0.1", "not redis://"},
		{"", "no URL"},
	};
	struct l2_url u;
	char err[256];
	(void)state;
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		err[0] = '\0';
		if (l2_url_parse(v[i].url, &u, err, sizeof err) != -1 || !strstr(err, v[i].why))
			fail_msg("%s: '%s'", v[i].url, err);
	}
}

static void test_urls_with_a_password_do_not_echo_it(void **state)
{
	struct l2_url u;
	char err[256];
	(void)state;
	assert_int_equal(l2_url_parse("redis://u:hunter2@h", &u, err, sizeof err), -1);
	assert_non_null(strstr(err, "user or password"));
	assert_null(strstr(err, "hunter2")); /* the message does not show it again */
}

/* ----------------------------------------------------------------- AUTH */

static char dir[64];

static int setup_dir(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/test_l2.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
	char cmd[128];
	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *auth_file(const char *text, mode_t mode)
{
	static char path[128];
	snprintf(path, sizeof path, "%s/auth", dir);
	unlink(path);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
	return path;
}

static void test_auth_file_rules(void **state)
{
	static const struct {
		const char *text;
		mode_t mode;
		int rc;
		const char *user, *password, *why;
	} v[] = {
		{"s3cret\n", 0600, 0, "", "s3cret", NULL},
		{"s3cret", 0400, 0, "", "s3cret", NULL},
		{"dnsnap s3cret\n", 0600, 0, "dnsnap", "s3cret", NULL},
		{"s3cret\r\n", 0600, 0, "", "s3cret", NULL},
		{"s3cret\n", 0644, -1, NULL, NULL, "chmod 600"},
		{"s3cret\n", 0640, -1, NULL, NULL, "chmod 600"},
		{"s3cret\n", 0602, -1, NULL, NULL, "chmod 600"},
		{"a b c\n", 0600, -1, NULL, NULL, "USER PASSWORD"},
		{"\n", 0600, -1, NULL, NULL, "USER PASSWORD"},
		{"", 0600, -1, NULL, NULL, "USER PASSWORD"},
		{"a  b\n", 0600, -1, NULL, NULL, "USER PASSWORD"},
		{" b\n", 0600, -1, NULL, NULL, "USER PASSWORD"},
		{"pw\nsecond line\n", 0600, -1, NULL, NULL, "USER PASSWORD"},
		{"pw\tx\n", 0600, -1, NULL, NULL, "USER PASSWORD"},
	};
	char user[64], pw[64], err[256];
	(void)state;
	unsetenv("DNSNAP_REDIS_PASSWORD");
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		const char *path = auth_file(v[i].text, v[i].mode);
		err[0] = '\0';
		int rc = l2_auth_load(path, user, sizeof user, pw, sizeof pw, err, sizeof err);
		if (rc != v[i].rc)
			fail_msg("case %zu: rc %d (%s)", i, rc, err);
		if (rc == 0) {
			assert_string_equal(user, v[i].user);
			assert_string_equal(pw, v[i].password);
		} else if (!strstr(err, v[i].why) || !strstr(err, path)) {
			fail_msg("case %zu: '%s'", i, err);
		}
	}
}

static void test_auth_file_missing_is_an_error_not_the_environment(void **state)
{
	char user[64], pw[64], err[256], path[128];
	(void)state;
	setenv("DNSNAP_REDIS_PASSWORD", "fromenv", 1);
	snprintf(path, sizeof path, "%s/none", dir);
	assert_int_equal(l2_auth_load(path, user, sizeof user, pw, sizeof pw, err, sizeof err), -1);
	assert_non_null(strstr(err, path));
	unsetenv("DNSNAP_REDIS_PASSWORD");
}

static void test_auth_from_the_environment(void **state)
{
	char user[64], pw[64], err[256];
	(void)state;
	unsetenv("DNSNAP_REDIS_PASSWORD");
	unsetenv("DNSNAP_REDIS_USER");
	assert_int_equal(l2_auth_load(NULL, user, sizeof user, pw, sizeof pw, err, sizeof err), 0);
	assert_string_equal(user, "");
	assert_string_equal(pw, "");
	setenv("DNSNAP_REDIS_PASSWORD", "envpw", 1);
	assert_int_equal(l2_auth_load(NULL, user, sizeof user, pw, sizeof pw, err, sizeof err), 0);
	assert_string_equal(user, "");
	assert_string_equal(pw, "envpw");
	setenv("DNSNAP_REDIS_USER", "envuser", 1);
	assert_int_equal(l2_auth_load(NULL, user, sizeof user, pw, sizeof pw, err, sizeof err), 0);
	assert_string_equal(user, "envuser");
	assert_string_equal(pw, "envpw");
	/* too long for the caller's buffer: refused, nothing half-set */
	assert_int_equal(l2_auth_load(NULL, user, sizeof user, pw, 4, err, sizeof err), -1);
	assert_string_equal(pw, "");
	unsetenv("DNSNAP_REDIS_PASSWORD");
	unsetenv("DNSNAP_REDIS_USER");
}

/* ---------------------------------------------------- replies by hand */

static redisReply *r_int(long long v)
{
	redisReply *r = calloc(1, sizeof *r);
	r->type = REDIS_REPLY_INTEGER;
	r->integer = v;
	return r;
}

static redisReply *r_str(const char *s)
{
	redisReply *r = calloc(1, sizeof *r);
	r->type = REDIS_REPLY_STRING;
	r->len = strlen(s);
	r->str = strdup(s);
	return r;
}

static redisReply *r_arr(size_t n, ...)
{
	va_list ap;
	redisReply *r = calloc(1, sizeof *r);
	r->type = REDIS_REPLY_ARRAY;
	r->elements = n;
	r->element = calloc(n ? n : 1, sizeof *r->element);
	va_start(ap, n);
	for (size_t i = 0; i < n; i++)
		r->element[i] = va_arg(ap, redisReply *);
	va_end(ap);
	return r;
}

static void test_cluster_slots_reply_parses(void **state)
{
	struct l2_addr asked = {"10.9.9.9", 7000};
	struct l2_range rg[4];
	(void)state;
	/* Redis 7's shape: [lo, hi, [host, port, id, {meta}], [replica...]...] */
	redisReply *r = r_arr(3,
		r_arr(4, r_int(0), r_int(5460),
		      r_arr(3, r_str("127.0.0.1"), r_int(7000), r_str("id1")),
		     r_arr(3, r_str("127.0.0.1"), r_int(7003), r_str("id4"))),
		r_arr(3, r_int(5461), r_int(10922), r_arr(2, r_str(""), r_int(7001))),
		r_arr(3, r_int(10923), r_int(16383),
		      r_arr(3, r_str("::1"), r_int(7002), r_str("id3"))));
	assert_int_equal(l2_slots_parse(r, &asked, rg, 4), 3);
	assert_int_equal(rg[0].lo, 0);
	assert_int_equal(rg[0].hi, 5460);
	assert_string_equal(rg[0].master.host, "127.0.0.1");
	assert_int_equal(rg[0].master.port, 7000);
	assert_string_equal(rg[1].master.host, "10.9.9.9"); /* empty: the node asked */
	assert_int_equal(rg[1].master.port, 7001);
	assert_string_equal(rg[2].master.host, "::1");
	assert_int_equal(rg[2].lo, 10923);
	assert_int_equal(rg[2].hi, 16383);
	assert_int_equal(l2_slots_parse(r, &asked, rg, 2), -1); /* no room */
	freeReplyObject(r);
}

static void test_cluster_slots_bad_shapes_are_refused(void **state)
{
	struct l2_range rg[2];
	redisReply *bad[] = {
		r_str("ERR"),
		r_arr(1, r_arr(2, r_int(0), r_int(10))),
		r_arr(1, r_arr(3, r_int(10), r_int(0), r_arr(2, r_str("h"), r_int(1)))),
		r_arr(1, r_arr(3, r_int(0), r_int(16384), r_arr(2, r_str("h"), r_int(1)))),
		r_arr(1, r_arr(3, r_int(-1), r_int(5), r_arr(2, r_str("h"), r_int(1)))),
		r_arr(1, r_arr(3, r_int(0), r_int(5), r_arr(2, r_str("h"), r_int(0)))),
		r_arr(1, r_arr(3, r_int(0), r_int(5), r_arr(2, r_str("h"), r_int(65536)))),
		r_arr(1, r_arr(3, r_int(0), r_int(5), r_arr(2, r_int(1), r_int(1)))),
		r_arr(1, r_arr(3, r_int(0), r_int(5), r_arr(1, r_str("h")))),
		r_arr(1, r_arr(3, r_str("0"), r_int(5), r_arr(2, r_str("h"), r_int(1)))),
		r_arr(1, r_int(3)),
	};
	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		if (l2_slots_parse(bad[i], NULL, rg, 2) != -1)
			fail_msg("case %zu parsed", i);
		freeReplyObject(bad[i]);
	}
	/* an empty host with nobody asked: refused too */
	redisReply *r = r_arr(1, r_arr(3, r_int(0), r_int(5), r_arr(2, r_str(""), r_int(1))));
	assert_int_equal(l2_slots_parse(r, NULL, rg, 2), -1);
	freeReplyObject(r);
}

static void test_redirections_parse(void **state)
{
	static const struct {
		const char *s;
		int kind;
		unsigned slot;
		const char *host;
		int port;
	} v[] = {
		{"MOVED 3999 127.0.0.1:6381", 1, 3999, "127.0.0.1", 6381},
		{"ASK 3999 127.0.0.1:6381", 2, 3999, "127.0.0.1", 6381},
		{"MOVED 0 [::1]:7000", 1, 0, "::1", 7000},
		{"MOVED 16383 ::1:7000", 1, 16383, "::1", 7000},
		{"MOVED 12 :7000", 1, 12, "", 7000},
		{"MOVED 16384 h:1", 0, 0, NULL, 0},
		{"MOVED x h:1", 0, 0, NULL, 0},
		{"MOVED 1 h", 0, 0, NULL, 0},
		{"MOVED 1 h:", 0, 0, NULL, 0},
		{"MOVED 1 h:0", 0, 0, NULL, 0},
		{"MOVED 1 h:70000", 0, 0, NULL, 0},
		{"MOVED 1 h:1x", 0, 0, NULL, 0},
		{"MOVED 1", 0, 0, NULL, 0},
		{"MOVED  1 h:1", 0, 0, NULL, 0},
		{"WRONGTYPE Operation against a key", 0, 0, NULL, 0},
		{"ASKING", 0, 0, NULL, 0},
	};
	(void)state;
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		struct l2_addr to;
		unsigned slot = 99999;
		int k = l2_redirect_parse(v[i].s, strlen(v[i].s), &slot, &to);
		if (k != v[i].kind)
			fail_msg("'%s': %d", v[i].s, k);
		if (k) {
			assert_int_equal(slot, v[i].slot);
			assert_string_equal(to.host, v[i].host);
			assert_int_equal(to.port, v[i].port);
		}
	}
}

static void test_scan_pattern_escapes_glob_characters(void **state)
{
	char out[64];
	(void)state;
	assert_int_equal(l2_match_pattern("dnsnap:", 7, out, sizeof out), 8);
	assert_string_equal(out, "dnsnap:*");
	assert_int_equal(l2_match_pattern("a*b?[c]\\", 8, out, sizeof out), 14);
	assert_string_equal(out, "a\\*b\\?\\[c\\]\\\\*");
	assert_int_equal(l2_match_pattern("", 0, out, sizeof out), 1);
	assert_string_equal(out, "*");
	assert_int_equal(l2_match_pattern("****", 4, out, 9), 0); /* 8 + '*' + NUL: too small */
	assert_int_equal(l2_match_pattern("****", 4, out, 10), 9);
}

/* ------------------------------------------------------ the serve thread */

struct seen {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned n[L2_STOPPED + 1];
	enum l2_status last;
	char val[16];
	size_t len;
	char log[512];
};

static void got(void *arg, void *waiter, enum l2_status st, const uint8_t *val, size_t len)
{
	struct seen *s = arg;
	(void)waiter;
	pthread_mutex_lock(&s->mu);
	s->n[st]++;
	s->last = st;
	s->len = len;
	if (len)
		memcpy(s->val, val, len < sizeof s->val ? len : sizeof s->val);
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

static void logged(void *arg, const char *msg)
{
	struct seen *s = arg;
	pthread_mutex_lock(&s->mu);
	snprintf(s->log, sizeof s->log, "%s", msg);
	pthread_mutex_unlock(&s->mu);
}

/* Wait (a generous bound) until @p total calls of got() have come. */
static void wait_calls(struct seen *s, unsigned total)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	pthread_mutex_lock(&s->mu);
	for (;;) {
		unsigned sum = 0;
		for (int i = 0; i <= L2_STOPPED; i++)
			sum += s->n[i];
		if (sum >= total || pthread_cond_timedwait(&s->cv, &s->mu, &until) != 0)
			break;
	}
	pthread_mutex_unlock(&s->mu);
}

static struct seen *seen_new(void)
{
	struct seen *s = calloc(1, sizeof *s);
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	return s;
}

static void test_bad_options_are_refused_by_l2_new(void **state)
{
	struct seen *s = seen_new();
	struct l2_hooks h = {.got = got, .arg = s};
	struct l2 *l = NULL;
	char err[256];
	char prefix[L2_PREFIX_MAX + 2];
	(void)state;
	memset(prefix, 'p', sizeof prefix - 1);
	prefix[sizeof prefix - 1] = '\0';
	struct l2_opts o = {.url = "redis://127.0.0.1:1", .prefix = prefix};
	assert_int_equal(l2_new(&o, &h, &l, err, sizeof err), -1);
	assert_non_null(strstr(err, "prefix"));
	o = (struct l2_opts){.url = "redis-cluster://127.0.0.1:1", .replica = "redis://h"};
	assert_int_equal(l2_new(&o, &h, &l, err, sizeof err), -1);
	o = (struct l2_opts){.url = "redis://u:p@h"};
	assert_int_equal(l2_new(&o, &h, &l, err, sizeof err), -1);
	o = (struct l2_opts){.url = "redis://h", .replica = "redis://h:1/4"};
	assert_int_equal(l2_new(&o, &h, &l, err, sizeof err), -1);
	assert_null(l);
	l2_free(NULL, 0);
	free(s);
}

static void test_errors_open_the_breaker_then_gets_are_refused(void **state)
{
	struct seen *s = seen_new();
	struct l2_hooks h = {.got = got, .arg = s};
	struct l2 *l;
	struct l2_stats st;
	char err[256], url[128];
	int waiter;
	(void)state;
	snprintf(url, sizeof url, "unix://%s/nobody.sock", dir); /* refused at once */
	struct l2_opts o = {.url = url, .wait_ms = 1000};
	assert_int_equal(l2_new(&o, &h, &l, err, sizeof err), 0);
	/* each GET fails at once (no waiting); what the breaker counts is the
	 * connections that fail: the first, then each retry (after 100, 200, 400,
	 * 800 ms), so it opens at the fifth, some 1.5 s on */
	unsigned n = 0;
	do {
		if (l2_get(l, (const uint8_t *)"k", 1, &waiter) != 0)
			break; /* refused: it opened between two GETs (the retries go on) */
		wait_calls(s, ++n);
		assert_int_equal(s->last, L2_ERROR);
		l2_stats(l, &st);
		usleep(20000);
	} while (st.breaker != L2_BREAKER_OPEN && n < 1000);
	l2_stats(l, &st);
	assert_int_equal(st.breaker, L2_BREAKER_OPEN);
	assert_int_equal(st.errors, n);
	assert_true(st.refused <= 1);
	unsigned refused0 = (unsigned)st.refused;
	assert_int_equal(st.nodes, 0);
	/* open: refused at once, writes dropped */
	assert_int_equal(l2_get(l, (const uint8_t *)"k", 1, &waiter), -1);
	l2_put(l, (const uint8_t *)"k", 1, (const uint8_t *)"v", 1, 1);
	l2_stats(l, &st);
	assert_int_equal(st.refused, refused0 + 1);
	assert_int_equal(st.write_drops, 1);
	l2_free(l, 0);
	free(s);
}

static void test_half_open_lets_one_probe_through(void **state)
{
	struct seen *s = seen_new();
	struct l2_hooks h = {.got = got, .arg = s};
	struct l2 *l;
	struct l2_stats st;
	char err[256], url[128];
	int waiter;
	(void)state;
	snprintf(url, sizeof url, "unix://%s/nobody.sock", dir);
	struct l2_opts o = {.url = url, .wait_ms = 1000};
	assert_int_equal(l2_new(&o, &h, &l, err, sizeof err), 0);
	for (unsigned i = 0; i < 5; i++) {
		assert_int_equal(l2_get(l, (const uint8_t *)"k", 1, &waiter), 0);
		wait_calls(s, i + 1);
	}
	/* open for 1 s, then half-open (a generous bound for the wait) */
	for (int i = 0; i < 1000; i++) {
		l2_stats(l, &st);
		if (st.breaker == L2_BREAKER_HALF_OPEN)
			break;
		usleep(10000);
	}
	assert_int_equal(st.breaker, L2_BREAKER_HALF_OPEN);
	assert_int_equal(l2_get(l, (const uint8_t *)"k", 1, &waiter), 0); /* the probe */
	assert_int_equal(l2_get(l, (const uint8_t *)"k", 1, &waiter), -1);
	wait_calls(s, 6);
	assert_int_equal(s->last, L2_ERROR);
	l2_stats(l, &st);
	assert_int_equal(st.breaker, L2_BREAKER_OPEN); /* failed: open again, for 2 s */
	assert_int_equal(st.refused, 1);
	assert_int_equal(st.gets, 6);
	l2_free(l, 0);
	free(s);
}

/* A fake Redis: one connection; reply[k] is written once cmds[k] commands have been read. */
struct fake {
	int lfd, port;
	pthread_t t;
	const char *const *reply;
	const size_t *reply_len;
	const unsigned *cmds;
	size_t n;
};

/* Commands (RESP arrays of bulk strings) complete in buf[0..len). */
static unsigned count_cmds(const char *buf, size_t len)
{
	unsigned n = 0;
	size_t i = 0;
	while (i < len && buf[i] == '*') {
		long parts = strtol(buf + i + 1, NULL, 10);
		const char *nl = memchr(buf + i, '\n', len - i);
		if (!nl)
			break;
		i = (size_t)(nl - buf) + 1;
		for (long p = 0; p < parts; p++) {
			if (i >= len || buf[i] != '$')
				return n;
			long bl = strtol(buf + i + 1, NULL, 10);
			nl = memchr(buf + i, '\n', len - i);
			if (!nl)
				return n;
			i = (size_t)(nl - buf) + 1 + (size_t)bl + 2;
		}
		if (i > len)
			break;
		n++;
	}
	return n;
}

static void *fake_run(void *arg)
{
	struct fake *f = arg;
	static char buf[1 << 16];
	size_t len = 0, k = 0;
	int fd = accept(f->lfd, NULL, NULL);
	if (fd < 0)
		return NULL;
	while (k < f->n) {
		while (k < f->n && count_cmds(buf, len) >= f->cmds[k]) {
			for (size_t off = 0; off < f->reply_len[k];) {
				ssize_t w = send(fd, f->reply[k] + off, f->reply_len[k] - off,
						 MSG_NOSIGNAL);
				if (w <= 0)
					goto out;
				off += (size_t)w;
			}
			k++;
		}
		if (k == f->n)
			break;
		ssize_t r = read(fd, buf + len, sizeof buf - len);
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	/* keep the connection until the client closes it */
	while (read(fd, buf, sizeof buf) > 0)
		;
out:
	close(fd);
	return NULL;
}

static void fake_start(struct fake *f)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	f->lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(f->lfd >= 0);
	assert_int_equal(bind(f->lfd, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(listen(f->lfd, 4), 0);
	assert_int_equal(getsockname(f->lfd, (struct sockaddr *)&a, &al), 0);
	f->port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(&f->t, NULL, fake_run, f), 0);
}

static void fake_stop(struct fake *f)
{
	shutdown(f->lfd, SHUT_RDWR);
	pthread_join(f->t, NULL);
	close(f->lfd);
}

static void test_a_late_reply_is_dropped_and_the_next_matches(void **state)
{
	/* PING; then both GETs' replies only once the second GET came, which is sent
	 * after the first timed out: "a" is the late reply, "b" the second's */
	static const char *const reply[] = {"+PONG\r\n", "$1\r\na\r\n$1\r\nb\r\n"};
	static const size_t len[] = {7, 14};
	static const unsigned cmds[] = {1, 3};
	struct fake f = {.reply = reply, .reply_len = len, .cmds = cmds, .n = 2};
	struct seen *s = seen_new();
	struct l2_hooks h = {.got = got, .arg = s};
	struct l2 *l;
	struct l2_stats st;
	char err[256], url[64];
	int waiter;
	(void)state;
	fake_start(&f);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d", f.port);
	struct l2_opts o = {.url = url, .wait_ms = 300, .connect_ms = 30000};
	assert_int_equal(l2_new(&o, &h, &l, err, sizeof err), 0);
	assert_int_equal(l2_get(l, (const uint8_t *)"A", 1, &waiter), 0);
	wait_calls(s, 1);
	assert_int_equal(s->last, L2_TIMEOUT);
	assert_int_equal(l2_get(l, (const uint8_t *)"B", 1, &waiter), 0);
	wait_calls(s, 2);
	assert_int_equal(s->last, L2_HIT);
	assert_int_equal(s->len, 1);
	assert_memory_equal(s->val, "b", 1);
	l2_stats(l, &st);
	assert_int_equal(st.timeouts, 1);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.breaker, L2_BREAKER_CLOSED);
	l2_free(l, 0);
	fake_stop(&f);
	free(s);
}

/* GETs that time out together (a stall of Redis, or of this machine) are one
 * failure for the breaker, not one each; separate stalls still add up to
 * BREAKER_FAILS (5) and open it, and the log says so. */
static void test_gets_timing_out_together_are_one_failure(void **state)
{
	static const char *const reply[] = {"+PONG\r\n"}; /* then never a reply */
	static const size_t len[] = {7};
	static const unsigned cmds[] = {1};
	struct fake f = {.reply = reply, .reply_len = len, .cmds = cmds, .n = 1};
	struct seen *s = seen_new();
	struct l2_hooks h = {.got = got, .log = logged, .arg = s};
	struct l2 *l;
	struct l2_stats st;
	char err[256], url[64];
	int waiter;
	(void)state;
	fake_start(&f);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d", f.port);
	struct l2_opts o = {.url = url, .wait_ms = 100, .connect_ms = 30000};
	assert_int_equal(l2_new(&o, &h, &l, err, sizeof err), 0);
	for (int i = 0; i < 1000; i++) { /* connected: the PING answered */
		l2_stats(l, &st);
		if (st.nodes == 1)
			break;
		usleep(10000);
	}
	assert_int_equal(st.nodes, 1);
	/* 20 at once: their deadlines fall in one or two milliseconds, so one or
	 * two passes expire them all (the old count: 20 failures, open) */
	for (int i = 0; i < 20; i++)
		assert_int_equal(l2_get(l, (const uint8_t *)"k", 1, &waiter), 0);
	wait_calls(s, 20);
	l2_stats(l, &st);
	assert_int_equal(st.timeouts, 20);
	assert_int_equal(st.breaker, L2_BREAKER_CLOSED);
	/* one at a time: a failure each; five in a row open it */
	for (unsigned i = 0; i < 5 && st.breaker == L2_BREAKER_CLOSED; i++) {
		assert_int_equal(l2_get(l, (const uint8_t *)"k", 1, &waiter), 0);
		wait_calls(s, 21 + i);
		l2_stats(l, &st);
	}
	assert_int_equal(st.breaker, L2_BREAKER_OPEN);
	pthread_mutex_lock(&s->mu);
	assert_non_null(strstr(s->log, "the breaker opened"));
	pthread_mutex_unlock(&s->mu);
	l2_free(l, 0);
	fake_stop(&f);
	free(s);
}

static void test_error_and_oversized_replies_are_errors_in_order(void **state)
{
	static char big[L2_VALUE_MAX + 64];
	static const char *reply[4];
	static size_t len[4];
	static const unsigned cmds[] = {1, 2, 3, 4};
	struct fake f = {.reply = reply, .reply_len = len, .cmds = cmds, .n = 4};
	struct seen *s = seen_new();
	struct l2_hooks h = {.got = got, .arg = s};
	struct l2 *l;
	struct l2_stats st;
	char err[256], url[64];
	int waiter;
	(void)state;
	int hl = snprintf(big, sizeof big, "$%u\r\n", L2_VALUE_MAX + 1);
	memset(big + hl, 'x', L2_VALUE_MAX + 1);
	memcpy(big + hl + L2_VALUE_MAX + 1, "\r\n", 2);
	reply[0] = "+PONG\r\n", len[0] = 7;
	reply[1] = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
	len[1] = strlen(reply[1]);
	reply[2] = big, len[2] = (size_t)hl + L2_VALUE_MAX + 3;
	reply[3] = "$2\r\nok\r\n", len[3] = 8;
	fake_start(&f);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d", f.port);
	struct l2_opts o = {.url = url, .wait_ms = 1000, .connect_ms = 30000};
	assert_int_equal(l2_new(&o, &h, &l, err, sizeof err), 0);
	static const enum l2_status want[] = {L2_ERROR, L2_ERROR, L2_HIT};
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(l2_get(l, (const uint8_t *)"k", 1, &waiter), 0);
		wait_calls(s, i + 1);
		assert_int_equal(s->last, want[i]);
	}
	assert_memory_equal(s->val, "ok", 2);
	l2_stats(l, &st);
	assert_int_equal(st.errors, 2);
	assert_int_equal(st.breaker, L2_BREAKER_CLOSED); /* Redis answered */
	assert_int_equal(st.nodes, 1);
	l2_free(l, 0);
	fake_stop(&f);
	free(s);
}

static void test_a_reply_over_32_mb_drops_the_connection(void **state)
{
	/* a value of 512 MB announced, 33 MB sent: not buffered further */
	static const char *reply[2];
	static size_t len[2];
	static const unsigned cmds[] = {1, 2};
	struct fake f = {.reply = reply, .reply_len = len, .cmds = cmds, .n = 2};
	struct seen *s = seen_new();
	struct l2_hooks h = {.got = got, .arg = s, .log = logged};
	struct l2 *l;
	char err[256], url[64];
	int waiter;
	size_t big = (size_t)33 << 20;
	char *p = malloc(big);
	(void)state;
	assert_non_null(p);
	memset(p, 'x', big);
	memcpy(p, "$536870912\r\n", 13);
	reply[0] = "+PONG\r\n", len[0] = 7;
	reply[1] = p, len[1] = big;
	fake_start(&f);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d", f.port);
	struct l2_opts o = {.url = url, .wait_ms = 30000, .connect_ms = 30000};
	assert_int_equal(l2_new(&o, &h, &l, err, sizeof err), 0);
	assert_int_equal(l2_get(l, (const uint8_t *)"k", 1, &waiter), 0);
	wait_calls(s, 1);
	assert_int_equal(s->last, L2_ERROR);
	pthread_mutex_lock(&s->mu);
	assert_non_null(strstr(s->log, "over 32 MB"));
	pthread_mutex_unlock(&s->mu);
	l2_free(l, 0);
	fake_stop(&f);
	free(p);
	free(s);
}

static void test_auth_refused_fails_the_connection_and_says_so(void **state)
{
	static const char *const reply[] = {"-WRONGPASS invalid username-password pair\r\n"};
	static const size_t len[] = {43};
	static const unsigned cmds[] = {1};
	struct fake f = {.reply = reply, .reply_len = len, .cmds = cmds, .n = 1};
	struct seen *s = seen_new();
	struct l2_hooks h = {.got = got, .arg = s, .log = logged};
	struct l2 *l;
	char err[256], url[64];
	int waiter;
	(void)state;
	fake_start(&f);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d", f.port);
	struct l2_opts o = {.url = url, .wait_ms = 5000, .connect_ms = 30000, .user = "u",
			    .password = "wrong"};
	assert_int_equal(l2_new(&o, &h, &l, err, sizeof err), 0);
	assert_int_equal(l2_get(l, (const uint8_t *)"k", 1, &waiter), 0);
	wait_calls(s, 1);
	assert_int_equal(s->last, L2_ERROR);
	pthread_mutex_lock(&s->mu);
	assert_non_null(strstr(s->log, "AUTH refused: WRONGPASS"));
	assert_null(strstr(s->log, "wrong")); /* the password is not logged */
	pthread_mutex_unlock(&s->mu);
	l2_free(l, 0);
	fake_stop(&f);
	free(s);
}

static void test_free_ends_waiting_gets_with_stopped(void **state)
{
	/* a server that accepts and never answers */
	static const char *const reply[] = {""};
	static const size_t len[] = {0};
	static const unsigned cmds[] = {1000};
	struct fake f = {.reply = reply, .reply_len = len, .cmds = cmds, .n = 1};
	struct seen *s = seen_new();
	struct l2_hooks h = {.got = got, .arg = s};
	struct l2 *l;
	char err[256], url[64];
	int waiter;
	(void)state;
	fake_start(&f);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d", f.port);
	struct l2_opts o = {.url = url, .wait_ms = 60000, .connect_ms = 60000};
	assert_int_equal(l2_new(&o, &h, &l, err, sizeof err), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(l2_get(l, (const uint8_t *)"k", 1, &waiter), 0);
	l2_put(l, (const uint8_t *)"k", 1, (const uint8_t *)"v", 1, 1);
	l2_free(l, 0);
	assert_int_equal(s->n[L2_STOPPED], 3);
	fake_stop(&f);
	free(s);
}

static void test_writes_past_the_queue_bound_are_dropped(void **state)
{
	static const char *const reply[] = {""};
	static const size_t len[] = {0};
	static const unsigned cmds[] = {1000}; /* never answers */
	struct fake f = {.reply = reply, .reply_len = len, .cmds = cmds, .n = 1};
	struct seen *s = seen_new();
	struct l2_hooks h = {.got = got, .arg = s};
	struct l2 *l;
	struct l2_stats st;
	char err[256], url[64];
	(void)state;
	fake_start(&f);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d", f.port);
	struct l2_opts o = {.url = url, .queue_max = 2, .connect_ms = 60000};
	assert_int_equal(l2_new(&o, &h, &l, err, sizeof err), 0);
	for (int i = 0; i < 3; i++)
		l2_put(l, (const uint8_t *)"k", 1, (const uint8_t *)"v", 1, 1);
	l2_stats(l, &st);
	assert_int_equal(st.queue_depth, 2);
	assert_int_equal(st.write_drops, 1);
	assert_int_equal(st.writes, 0);
	l2_free(l, 0);
	fake_stop(&f);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc16_matches_the_cluster_specs_vector),
		cmocka_unit_test(test_slots_match_redis_keyslot),
		cmocka_unit_test(test_binary_keys_hash_every_byte),
		cmocka_unit_test(test_good_urls_parse),
		cmocka_unit_test(test_bad_urls_are_refused_with_a_reason),
		cmocka_unit_test(test_urls_with_a_password_do_not_echo_it),
		cmocka_unit_test(test_auth_file_rules),
		cmocka_unit_test(test_auth_file_missing_is_an_error_not_the_environment),
		cmocka_unit_test(test_auth_from_the_environment),
		cmocka_unit_test(test_cluster_slots_reply_parses),
		cmocka_unit_test(test_cluster_slots_bad_shapes_are_refused),
		cmocka_unit_test(test_redirections_parse),
		cmocka_unit_test(test_scan_pattern_escapes_glob_characters),
		cmocka_unit_test(test_bad_options_are_refused_by_l2_new),
		cmocka_unit_test(test_errors_open_the_breaker_then_gets_are_refused),
		cmocka_unit_test(test_half_open_lets_one_probe_through),
		cmocka_unit_test(test_a_late_reply_is_dropped_and_the_next_matches),
		cmocka_unit_test(test_gets_timing_out_together_are_one_failure),
		cmocka_unit_test(test_error_and_oversized_replies_are_errors_in_order),
		cmocka_unit_test(test_a_reply_over_32_mb_drops_the_connection),
		cmocka_unit_test(test_auth_refused_fails_the_connection_and_says_so),
		cmocka_unit_test(test_free_ends_waiting_gets_with_stopped),
		cmocka_unit_test(test_writes_past_the_queue_bound_are_dropped),
	};
	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
