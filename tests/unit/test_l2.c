/*
 * test_l2.c: libdnsnap-l2, the Redis client (engine/l2): slots (vectors from a real
 * Redis 7's CLUSTER KEYSLOT), URLs, the AUTH file, CLUSTER SLOTS and
 * redirection replies, SCAN's pattern; and the serve thread against a Unix
 * socket nobody listens on (errors, the breaker) and a fake Redis of this
 * test (a thread on 127.0.0.1, a port the kernel picks) that answers as
 * told: a late reply still matched to its GET, error and oversized replies,
 * AUTH refused. No durations are asserted: waits are generous deadlines.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "l2_int.h"

/* ---------------------------------------------------------------- slots */

static void test_crc16_matches_the_cluster_specs_vector(void **state)
{
	(void)state;
	assert_int_equal(dnsnap__l2_crc16((const uint8_t *)"123456789", 9), 0x31C3);
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
		assert_int_equal(dnsnap_l2_key_slot((const uint8_t *)v[i].key, strlen(v[i].key)),
				 v[i].slot);
}

static void test_binary_keys_hash_every_byte(void **state)
{
	const uint8_t a[] = {'k', 0, 'x'}, b[] = {'k', 0, 'y'};
	(void)state;
	assert_int_not_equal(dnsnap_l2_key_slot(a, sizeof a), dnsnap_l2_key_slot(b, sizeof b));
	assert_true(dnsnap_l2_key_slot(a, sizeof a) < L2_SLOTS);
}

/* ----------------------------------------------------------------- URLs */

/* The URL parser into the test's u and err */
#define PARSE(url) dnsnap__l2_url_parse((url), &u, err, sizeof err)

static void test_good_urls_parse(void **state)
{
	struct l2_url u;
	char err[256];
	(void)state;
	assert_int_equal(PARSE("redis://127.0.0.1"), 0);
	assert_int_equal(u.kind, L2_URL_REDIS);
	assert_string_equal(u.addr[0].host, "127.0.0.1");
	assert_int_equal(u.addr[0].port, 6379);
	assert_int_equal(u.db, 0);
	assert_int_equal(PARSE("redis://cache-1.example:7000/3"), 0);
	assert_string_equal(u.addr[0].host, "cache-1.example");
	assert_int_equal(u.addr[0].port, 7000);
	assert_int_equal(u.db, 3);
	assert_int_equal(PARSE("redis://[::1]:6380"), 0);
	assert_string_equal(u.addr[0].host, "::1");
	assert_int_equal(u.addr[0].port, 6380);
	assert_int_equal(PARSE("unix:///run/redis/redis.sock?db=2"), 0);
	assert_int_equal(u.kind, L2_URL_UNIX);
	assert_string_equal(u.addr[0].host, "/run/redis/redis.sock");
	assert_int_equal(u.addr[0].port, 0);
	assert_int_equal(u.db, 2);
	assert_int_equal(PARSE("redis-cluster://10.0.0.1:7000,10.0.0.2:7001,[::1]:7002"), 0);
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
	char err[256], url[DNSNAP_L2_URL_MAX];
	(void)state;
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		err[0] = '\0';
		if (PARSE(v[i].url) != -1 || !strstr(err, v[i].why))
			fail_msg("%s: '%s'", v[i].url, err);
	}
	/* a bracketed address longer than a host may be (fuzz_l2_url's find: it
	 * was copied whole into the 256 bytes of the address) */
	memset(url, '8', sizeof url - 1);
	memcpy(url, "redis://[", 9);
	memcpy(url + 9 + 299, "]:1", 4);
	char long_err[DNSNAP_L2_URL_MAX + 64]; /* the message quotes the URL first */
	assert_int_equal(dnsnap__l2_url_parse(url, &u, long_err, sizeof long_err), -1);
	assert_non_null(strstr(long_err, "an IPv6 address too long"));
}

static void test_urls_with_a_password_do_not_echo_it(void **state)
{
	struct l2_url u;
	char err[256];
	(void)state;
	assert_int_equal(PARSE("redis://u:hunter2@h"), -1);
	assert_non_null(strstr(err, "user or password"));
	assert_null(strstr(err, "hunter2")); /* the message does not show it again */
}

/* ----------------------------------------------------------------- AUTH */

/* The AUTH loader into the test's user, pw (@p pwcap bytes) and err */
#define AUTH(file, pwcap) \
	dnsnap_l2_auth_load((file), user, sizeof user, pw, (pwcap), err, sizeof err)

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
		{"s3cret\n", 0644, DNSNAP_EINVAL, NULL, NULL, "chmod 600"},
		{"s3cret\n", 0640, DNSNAP_EINVAL, NULL, NULL, "chmod 600"},
		{"s3cret\n", 0602, DNSNAP_EINVAL, NULL, NULL, "chmod 600"},
		{"a b c\n", 0600, DNSNAP_EINVAL, NULL, NULL, "USER PASSWORD"},
		{"\n", 0600, DNSNAP_EINVAL, NULL, NULL, "USER PASSWORD"},
		{"", 0600, DNSNAP_EINVAL, NULL, NULL, "USER PASSWORD"},
		{"a  b\n", 0600, DNSNAP_EINVAL, NULL, NULL, "USER PASSWORD"},
		{" b\n", 0600, DNSNAP_EINVAL, NULL, NULL, "USER PASSWORD"},
		{"pw\nsecond line\n", 0600, DNSNAP_EINVAL, NULL, NULL, "USER PASSWORD"},
		{"pw\tx\n", 0600, DNSNAP_EINVAL, NULL, NULL, "USER PASSWORD"},
	};
	char user[64], pw[64], err[256];
	(void)state;
	unsetenv("DNSNAP_REDIS_PASSWORD");
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		const char *path = auth_file(v[i].text, v[i].mode);
		err[0] = '\0';
		int rc = AUTH(path, sizeof pw);
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

/* Run as root (as CI is): a file of mode 0600 owned by another user is
 * refused (its owner chooses the password); root's own, and one the caller
 * owns, are read. Skipped when not root (chown needs it). */
static void test_auth_file_of_another_user_is_refused(void **state)
{
	char user[64], pw[64], err[256];
	(void)state;
	if (geteuid() != 0)
		skip();
	unsetenv("DNSNAP_REDIS_PASSWORD");
	const char *path = auth_file("s3cret\n", 0600);
	assert_int_equal(AUTH(path, sizeof pw), 0);
	assert_int_equal(chown(path, 65534, 65534), 0); /* nobody */
	err[0] = '\0';
	assert_int_equal(AUTH(path, sizeof pw), DNSNAP_EINVAL);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "owned by uid 65534"));
	assert_int_equal(chown(path, 0, 0), 0);
	assert_int_equal(AUTH(path, sizeof pw), 0);
	assert_string_equal(pw, "s3cret");
}

static void test_auth_file_missing_is_an_error_not_the_environment(void **state)
{
	char user[64], pw[64], err[256], path[128];
	(void)state;
	setenv("DNSNAP_REDIS_PASSWORD", "fromenv", 1);
	snprintf(path, sizeof path, "%s/none", dir);
	assert_int_equal(AUTH(path, sizeof pw), -ENOENT);
	assert_non_null(strstr(err, path));
	unsetenv("DNSNAP_REDIS_PASSWORD");
}

static void test_auth_from_the_environment(void **state)
{
	char user[64], pw[64], err[256];
	(void)state;
	unsetenv("DNSNAP_REDIS_PASSWORD");
	unsetenv("DNSNAP_REDIS_USER");
	assert_int_equal(AUTH(NULL, sizeof pw), 0);
	assert_string_equal(user, "");
	assert_string_equal(pw, "");
	setenv("DNSNAP_REDIS_PASSWORD", "envpw", 1);
	assert_int_equal(AUTH(NULL, sizeof pw), 0);
	assert_string_equal(user, "");
	assert_string_equal(pw, "envpw");
	setenv("DNSNAP_REDIS_USER", "envuser", 1);
	assert_int_equal(AUTH(NULL, sizeof pw), 0);
	assert_string_equal(user, "envuser");
	assert_string_equal(pw, "envpw");
	/* too long for the caller's buffer: refused, nothing half-set */
	assert_int_equal(AUTH(NULL, 4), DNSNAP_EINVAL);
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
	assert_int_equal(dnsnap__l2_slots_parse(r, &asked, rg, 4), 3);
	assert_int_equal(rg[0].lo, 0);
	assert_int_equal(rg[0].hi, 5460);
	assert_string_equal(rg[0].master.host, "127.0.0.1");
	assert_int_equal(rg[0].master.port, 7000);
	assert_string_equal(rg[1].master.host, "10.9.9.9"); /* empty: the node asked */
	assert_int_equal(rg[1].master.port, 7001);
	assert_string_equal(rg[2].master.host, "::1");
	assert_int_equal(rg[2].lo, 10923);
	assert_int_equal(rg[2].hi, 16383);
	assert_int_equal(dnsnap__l2_slots_parse(r, &asked, rg, 2), -1); /* no room */
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
		if (dnsnap__l2_slots_parse(bad[i], NULL, rg, 2) != -1)
			fail_msg("case %zu parsed", i);
		freeReplyObject(bad[i]);
	}
	/* an empty host with nobody asked: refused too */
	redisReply *r = r_arr(1, r_arr(3, r_int(0), r_int(5), r_arr(2, r_str(""), r_int(1))));
	assert_int_equal(dnsnap__l2_slots_parse(r, NULL, rg, 2), -1);
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
		int k = dnsnap__l2_redirect_parse(v[i].s, strlen(v[i].s), &slot, &to);
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
	assert_int_equal(dnsnap__l2_match_pattern("dnsnap:", 7, out, sizeof out), 8);
	assert_string_equal(out, "dnsnap:*");
	assert_int_equal(dnsnap__l2_match_pattern("a*b?[c]\\", 8, out, sizeof out), 14);
	assert_string_equal(out, "a\\*b\\?\\[c\\]\\\\*");
	assert_int_equal(dnsnap__l2_match_pattern("", 0, out, sizeof out), 1);
	assert_string_equal(out, "*");
	/* 8 + '*' + NUL: too small */
	assert_int_equal(dnsnap__l2_match_pattern("****", 4, out, 9), 0);
	assert_int_equal(dnsnap__l2_match_pattern("****", 4, out, 10), 9);
}

/* ------------------------------------------------------ the serve thread */

struct seen {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned n[DNSNAP_L2_STOPPED + 1];
	dnsnap_l2_status_t last;
	char val[16];
	size_t len;
	char log[4096];          /* every line the log hook gave, one after the other */
	void *order[8];          /* the waiters, in the order got() gave them back */
	dnsnap_l2_status_t status[8];
	unsigned norder;
	pthread_t loop;          /* the thread got() must run in (driven tests) */
	int driven, outside;     /* got() calls outside dnsnap_l2_process() or that thread */
};

static __thread int in_process; /* this thread is inside dnsnap_l2_process() */

static void got(void *arg, void *waiter, dnsnap_l2_status_t st, const uint8_t *val, size_t len)
{
	struct seen *s = arg;
	pthread_mutex_lock(&s->mu);
	if (s->driven && (!in_process || !pthread_equal(pthread_self(), s->loop)))
		s->outside++;
	if (s->norder < 8) {
		s->status[s->norder] = st;
		s->order[s->norder++] = waiter;
	}
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
	size_t n = strlen(s->log);
	snprintf(s->log + n, sizeof s->log - n, "%s\n", msg);
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
		for (int i = 0; i <= DNSNAP_L2_STOPPED; i++)
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

/* A client whose loop runs in the library's thread, as serve's does */
static dnsnap_l2_t *start_client(const dnsnap_l2_opts_t *o, const dnsnap_l2_hooks_t *h)
{
	dnsnap_l2_t *l = NULL;
	char err[256];
	if (dnsnap_l2_new(o, h, &l, err, sizeof err) != DNSNAP_OK)
		fail_msg("dnsnap_l2_new: %s", err);
	if (dnsnap_l2_start(l, err, sizeof err) != DNSNAP_OK)
		fail_msg("dnsnap_l2_start: %s", err);
	return l;
}

static void test_bad_options_are_refused_by_l2_new(void **state)
{
	struct seen *s = seen_new();
	dnsnap_l2_hooks_t h = {.got = got, .arg = s};
	dnsnap_l2_t *l = NULL;
	char err[256];
	char prefix[DNSNAP_L2_PREFIX_MAX + 2];
	(void)state;
	memset(prefix, 'p', sizeof prefix - 1);
	prefix[sizeof prefix - 1] = '\0';
	dnsnap_l2_opts_t o = {.url = "redis://127.0.0.1:1", .prefix = prefix};
	assert_int_equal(dnsnap_l2_new(&o, &h, &l, err, sizeof err), DNSNAP_EINVAL);
	assert_non_null(strstr(err, "prefix"));
	o = (dnsnap_l2_opts_t){.url = "redis-cluster://127.0.0.1:1", .replica = "redis://h"};
	assert_int_equal(dnsnap_l2_new(&o, &h, &l, err, sizeof err), DNSNAP_EINVAL);
	o = (dnsnap_l2_opts_t){.url = "redis://u:p@h"};
	assert_int_equal(dnsnap_l2_new(&o, &h, &l, err, sizeof err), DNSNAP_EINVAL);
	o = (dnsnap_l2_opts_t){.url = "redis://h", .replica = "redis://h:1/4"};
	assert_int_equal(dnsnap_l2_new(&o, &h, &l, err, sizeof err), DNSNAP_EINVAL);
	assert_null(l);
	dnsnap_l2_free(NULL, 0);
	free(s);
}

static void test_errors_open_the_breaker_then_gets_are_refused(void **state)
{
	struct seen *s = seen_new();
	dnsnap_l2_hooks_t h = {.got = got, .arg = s};
	dnsnap_l2_t *l;
	dnsnap_l2_stats_t st;
	char url[128];
	int waiter;
	(void)state;
	snprintf(url, sizeof url, "unix://%s/nobody.sock", dir); /* refused at once */
	dnsnap_l2_opts_t o = {.url = url, .wait_ms = 1000};
	l = start_client(&o, &h);
	/* each GET fails at once (no waiting); what the breaker counts is the
	 * connections that fail: the first, then each retry (after 100, 200, 400,
	 * 800 ms), so it opens at the fifth, some 1.5 s on */
	unsigned n = 0;
	do {
		if (dnsnap_l2_get(l, (const uint8_t *)"k", 1, 0, &waiter) != 0)
			break; /* refused: it opened between two GETs (the retries go on) */
		wait_calls(s, ++n);
		assert_int_equal(s->last, DNSNAP_L2_ERROR);
		dnsnap_l2_stats(l, &st);
		usleep(20000);
	} while (st.breaker != DNSNAP_L2_BREAKER_OPEN && n < 1000);
	dnsnap_l2_stats(l, &st);
	assert_int_equal(st.breaker, DNSNAP_L2_BREAKER_OPEN);
	assert_int_equal(st.errors, n);
	assert_true(st.refused <= 1);
	unsigned refused0 = (unsigned)st.refused;
	assert_int_equal(st.nodes, 0);
	/* open: refused at once, writes dropped */
	assert_int_equal(dnsnap_l2_get(l, (const uint8_t *)"k", 1, 0, &waiter), -EAGAIN);
	dnsnap_l2_put(l, (const uint8_t *)"k", 1, (const uint8_t *)"v", 1, 1);
	dnsnap_l2_stats(l, &st);
	assert_int_equal(st.refused, refused0 + 1);
	assert_int_equal(st.write_drops, 1);
	dnsnap_l2_free(l, 0);
	free(s);
}

static void test_half_open_lets_one_probe_through(void **state)
{
	struct seen *s = seen_new();
	dnsnap_l2_hooks_t h = {.got = got, .arg = s};
	dnsnap_l2_t *l;
	dnsnap_l2_stats_t st;
	char url[128];
	int waiter;
	(void)state;
	snprintf(url, sizeof url, "unix://%s/nobody.sock", dir);
	dnsnap_l2_opts_t o = {.url = url, .wait_ms = 1000};
	l = start_client(&o, &h);
	for (unsigned i = 0; i < 5; i++) {
		assert_int_equal(dnsnap_l2_get(l, (const uint8_t *)"k", 1, 0, &waiter), 0);
		wait_calls(s, i + 1);
	}
	/* open for 1 s, then half-open (a generous bound for the wait) */
	for (int i = 0; i < 1000; i++) {
		dnsnap_l2_stats(l, &st);
		if (st.breaker == DNSNAP_L2_BREAKER_HALF_OPEN)
			break;
		usleep(10000);
	}
	assert_int_equal(st.breaker, DNSNAP_L2_BREAKER_HALF_OPEN);
	assert_int_equal(dnsnap_l2_get(l, (const uint8_t *)"k", 1, 0, &waiter), 0); /* the probe */
	assert_int_equal(dnsnap_l2_get(l, (const uint8_t *)"k", 1, 0, &waiter), -EAGAIN);
	wait_calls(s, 6);
	assert_int_equal(s->last, DNSNAP_L2_ERROR);
	dnsnap_l2_stats(l, &st);
	assert_int_equal(st.breaker, DNSNAP_L2_BREAKER_OPEN); /* failed: open again, for 2 s */
	assert_int_equal(st.refused, 1);
	assert_int_equal(st.gets, 6);
	dnsnap_l2_free(l, 0);
	free(s);
}

/* A fake Redis: @p conns connections (0: one) one after the other; on each,
 * reply[k] is written once cmds[k] commands have been read. */
struct fake {
	int lfd, port;
	pthread_t t;
	const char *const *reply;
	const size_t *reply_len;
	const unsigned *cmds;
	size_t n;
	unsigned conns;
	_Atomic unsigned served;  /* connections whose replies were all written */
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

/* One connection: the replies as their commands come, then held until the client closes it */
static void fake_conn(struct fake *f, int fd)
{
	static char buf[1 << 16];
	size_t len = 0, k = 0;
	while (k < f->n) {
		while (k < f->n && count_cmds(buf, len) >= f->cmds[k]) {
			for (size_t off = 0; off < f->reply_len[k];) {
				ssize_t w = send(fd, f->reply[k] + off, f->reply_len[k] - off,
						 MSG_NOSIGNAL);
				if (w <= 0)
					return;
				off += (size_t)w;
			}
			k++;
		}
		if (k == f->n)
			break;
		ssize_t r = read(fd, buf + len, sizeof buf - len);
		if (r <= 0)
			return;
		len += (size_t)r;
	}
	atomic_fetch_add(&f->served, 1);
	while (read(fd, buf, sizeof buf) > 0)
		;
}

static void *fake_run(void *arg)
{
	struct fake *f = arg;
	for (unsigned c = 0; c < (f->conns ? f->conns : 1); c++) {
		int fd = accept(f->lfd, NULL, NULL);
		if (fd < 0)
			return NULL;
		fake_conn(f, fd);
		close(fd);
	}
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
	dnsnap_l2_hooks_t h = {.got = got, .arg = s};
	dnsnap_l2_t *l;
	dnsnap_l2_stats_t st;
	char url[64];
	int waiter;
	(void)state;
	fake_start(&f);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d", f.port);
	dnsnap_l2_opts_t o = {.url = url, .wait_ms = 300, .connect_ms = 30000};
	l = start_client(&o, &h);
	assert_int_equal(dnsnap_l2_get(l, (const uint8_t *)"A", 1, 0, &waiter), 0);
	wait_calls(s, 1);
	assert_int_equal(s->last, DNSNAP_L2_TIMEOUT);
	assert_int_equal(dnsnap_l2_get(l, (const uint8_t *)"B", 1, 0, &waiter), 0);
	wait_calls(s, 2);
	assert_int_equal(s->last, DNSNAP_L2_HIT);
	assert_int_equal(s->len, 1);
	assert_memory_equal(s->val, "b", 1);
	dnsnap_l2_stats(l, &st);
	assert_int_equal(st.timeouts, 1);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.breaker, DNSNAP_L2_BREAKER_CLOSED);
	dnsnap_l2_free(l, 0);
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
	dnsnap_l2_hooks_t h = {.got = got, .log = logged, .arg = s};
	dnsnap_l2_t *l;
	dnsnap_l2_stats_t st;
	char url[64];
	int waiter;
	(void)state;
	fake_start(&f);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d", f.port);
	dnsnap_l2_opts_t o = {.url = url, .wait_ms = 100, .connect_ms = 30000};
	l = start_client(&o, &h);
	for (int i = 0; i < 1000; i++) { /* connected: the PING answered */
		dnsnap_l2_stats(l, &st);
		if (st.nodes == 1)
			break;
		usleep(10000);
	}
	assert_int_equal(st.nodes, 1);
	/* 20 at once: their deadlines fall in one or two milliseconds, so one or
	 * two passes expire them all (the old count: 20 failures, open) */
	for (int i = 0; i < 20; i++)
		assert_int_equal(dnsnap_l2_get(l, (const uint8_t *)"k", 1, 0, &waiter), 0);
	wait_calls(s, 20);
	dnsnap_l2_stats(l, &st);
	assert_int_equal(st.timeouts, 20);
	assert_int_equal(st.breaker, DNSNAP_L2_BREAKER_CLOSED);
	/* one at a time: a failure each; five in a row open it */
	for (unsigned i = 0; i < 5 && st.breaker == DNSNAP_L2_BREAKER_CLOSED; i++) {
		assert_int_equal(dnsnap_l2_get(l, (const uint8_t *)"k", 1, 0, &waiter), 0);
		wait_calls(s, 21 + i);
		dnsnap_l2_stats(l, &st);
	}
	assert_int_equal(st.breaker, DNSNAP_L2_BREAKER_OPEN);
	pthread_mutex_lock(&s->mu);
	assert_non_null(strstr(s->log, "the breaker opened"));
	pthread_mutex_unlock(&s->mu);
	dnsnap_l2_free(l, 0);
	fake_stop(&f);
	free(s);
}

static void test_error_and_oversized_replies_are_errors_in_order(void **state)
{
	static char big[DNSNAP_L2_READ_MAX + 64];
	static const char *reply[4];
	static size_t len[4];
	static const unsigned cmds[] = {1, 2, 3, 4};
	struct fake f = {.reply = reply, .reply_len = len, .cmds = cmds, .n = 4};
	struct seen *s = seen_new();
	dnsnap_l2_hooks_t h = {.got = got, .arg = s};
	dnsnap_l2_t *l;
	dnsnap_l2_stats_t st;
	char url[64];
	int waiter;
	(void)state;
	int hl = snprintf(big, sizeof big, "$%u\r\n", DNSNAP_L2_READ_MAX + 1);
	memset(big + hl, 'x', DNSNAP_L2_READ_MAX + 1);
	memcpy(big + hl + DNSNAP_L2_READ_MAX + 1, "\r\n", 2);
	reply[0] = "+PONG\r\n", len[0] = 7;
	reply[1] = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
	len[1] = strlen(reply[1]);
	reply[2] = big, len[2] = (size_t)hl + DNSNAP_L2_READ_MAX + 3;
	reply[3] = "$2\r\nok\r\n", len[3] = 8;
	fake_start(&f);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d", f.port);
	dnsnap_l2_opts_t o = {.url = url, .wait_ms = 1000, .connect_ms = 30000};
	l = start_client(&o, &h);
	static const dnsnap_l2_status_t want[] = {DNSNAP_L2_ERROR, DNSNAP_L2_ERROR, DNSNAP_L2_HIT};
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(dnsnap_l2_get(l, (const uint8_t *)"k", 1, 0, &waiter), 0);
		wait_calls(s, i + 1);
		assert_int_equal(s->last, want[i]);
	}
	assert_memory_equal(s->val, "ok", 2);
	dnsnap_l2_stats(l, &st);
	assert_int_equal(st.errors, 2);
	assert_int_equal(st.breaker, DNSNAP_L2_BREAKER_CLOSED); /* Redis answered */
	assert_int_equal(st.nodes, 1);
	dnsnap_l2_free(l, 0);
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
	dnsnap_l2_hooks_t h = {.got = got, .arg = s, .log = logged};
	dnsnap_l2_t *l;
	char url[64];
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
	dnsnap_l2_opts_t o = {.url = url, .wait_ms = 30000, .connect_ms = 30000};
	l = start_client(&o, &h);
	assert_int_equal(dnsnap_l2_get(l, (const uint8_t *)"k", 1, 0, &waiter), 0);
	wait_calls(s, 1);
	assert_int_equal(s->last, DNSNAP_L2_ERROR);
	pthread_mutex_lock(&s->mu);
	assert_non_null(strstr(s->log, "a reply over the bounds: more than 32 MB"));
	pthread_mutex_unlock(&s->mu);
	dnsnap_l2_free(l, 0);
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
	dnsnap_l2_hooks_t h = {.got = got, .arg = s, .log = logged};
	dnsnap_l2_t *l;
	char url[64];
	int waiter;
	(void)state;
	fake_start(&f);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d", f.port);
	dnsnap_l2_opts_t o = {.url = url, .wait_ms = 5000, .connect_ms = 30000, .user = "u",
			    .password = "wrong"};
	l = start_client(&o, &h);
	assert_int_equal(dnsnap_l2_get(l, (const uint8_t *)"k", 1, 0, &waiter), 0);
	wait_calls(s, 1);
	assert_int_equal(s->last, DNSNAP_L2_ERROR);
	pthread_mutex_lock(&s->mu);
	assert_non_null(strstr(s->log, "AUTH refused: WRONGPASS"));
	assert_null(strstr(s->log, "wrong")); /* the password is not logged */
	pthread_mutex_unlock(&s->mu);
	dnsnap_l2_free(l, 0);
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
	dnsnap_l2_hooks_t h = {.got = got, .arg = s};
	dnsnap_l2_t *l;
	char url[64];
	int waiter;
	(void)state;
	fake_start(&f);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d", f.port);
	dnsnap_l2_opts_t o = {.url = url, .wait_ms = 60000, .connect_ms = 60000};
	l = start_client(&o, &h);
	for (int i = 0; i < 3; i++)
		assert_int_equal(dnsnap_l2_get(l, (const uint8_t *)"k", 1, 0, &waiter), 0);
	dnsnap_l2_put(l, (const uint8_t *)"k", 1, (const uint8_t *)"v", 1, 1);
	dnsnap_l2_free(l, 0);
	assert_int_equal(s->n[DNSNAP_L2_STOPPED], 3);
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
	dnsnap_l2_hooks_t h = {.got = got, .arg = s};
	dnsnap_l2_t *l;
	dnsnap_l2_stats_t st;
	char url[64];
	(void)state;
	fake_start(&f);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d", f.port);
	dnsnap_l2_opts_t o = {.url = url, .queue_max = 2, .connect_ms = 60000};
	l = start_client(&o, &h);
	for (int i = 0; i < 3; i++)
		dnsnap_l2_put(l, (const uint8_t *)"k", 1, (const uint8_t *)"v", 1, 1);
	dnsnap_l2_stats(l, &st);
	assert_int_equal(st.queue_depth, 2);
	assert_int_equal(st.write_drops, 1);
	assert_int_equal(st.writes, 0);
	dnsnap_l2_free(l, 0);
	fake_stop(&f);
	free(s);
}

/* ------------------------------------------------- the caller's own loop */

/* One turn of an embedder's loop: poll the client's descriptor (at most its
 * timeout, and 100 ms), then process. @return what poll said of the descriptor */
static int turn(dnsnap_l2_t *l)
{
	struct pollfd p = {.fd = dnsnap_l2_fd(l), .events = POLLIN};
	int t = dnsnap_l2_timeout_ms(l);
	int n = poll(&p, 1, t < 0 || t > 100 ? 100 : t);
	in_process = 1;
	assert_int_equal(dnsnap_l2_process(l), DNSNAP_OK);
	in_process = 0;
	return n > 0 && (p.revents & POLLIN);
}

/* Turns until @p total calls of got() have come (a generous bound) */
static void turn_until(dnsnap_l2_t *l, struct seen *s, unsigned total)
{
	for (int i = 0; i < 1000 && s->norder < total; i++)
		turn(l);
	assert_int_equal(s->norder, total);
}

static void test_the_callers_loop_drives_the_client(void **state)
{
	static const char *const reply[] = {"+PONG\r\n", "$1\r\nv\r\n"};
	static const size_t len[] = {7, 7};
	static const unsigned cmds[] = {1, 2};
	struct fake f = {.reply = reply, .reply_len = len, .cmds = cmds, .n = 2};
	struct seen *s = seen_new();
	dnsnap_l2_hooks_t h = {.got = got, .arg = s};
	dnsnap_l2_t *l;
	dnsnap_l2_stats_t st;
	char err[256], url[64];
	int waiter;
	(void)state;
	fake_start(&f);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d", f.port);
	dnsnap_l2_opts_t o = {.url = url, .wait_ms = 30000, .connect_ms = 30000};
	assert_int_equal(dnsnap_l2_new(&o, &h, &l, err, sizeof err), DNSNAP_OK);
	s->loop = pthread_self();
	s->driven = 1;
	/* nothing runs until the caller's loop does: no thread, no connection */
	dnsnap_l2_stats(l, &st);
	assert_int_equal(st.nodes, 0);
	assert_int_equal(dnsnap_l2_timeout_ms(l), 0); /* the connection is due now */
	/* a GET queued makes the descriptor readable */
	assert_int_equal(dnsnap_l2_get(l, (const uint8_t *)"k", 1, 0, &waiter), DNSNAP_OK);
	struct pollfd p = {.fd = dnsnap_l2_fd(l), .events = POLLIN};
	assert_int_equal(poll(&p, 1, 0), 1);
	turn_until(l, s, 1);
	assert_int_equal(s->status[0], DNSNAP_L2_HIT);
	assert_ptr_equal(s->order[0], &waiter);
	assert_memory_equal(s->val, "v", 1);
	assert_int_equal(s->outside, 0); /* in this thread, inside dnsnap_l2_process() */
	/* up and idle: no deadline at all */
	dnsnap_l2_stats(l, &st);
	assert_int_equal(st.nodes, 1);
	assert_int_equal(dnsnap_l2_timeout_ms(l), -1);
	/* the library's thread is not started on the side */
	assert_int_equal(dnsnap_l2_get(l, (const uint8_t *)"k", 1, 0, &waiter), DNSNAP_OK);
	dnsnap_l2_free(l, 0); /* the caller's thread: the GET ends now, here */
	assert_int_equal(s->norder, 2);
	assert_int_equal(s->status[1], DNSNAP_L2_STOPPED);
	assert_int_equal(s->outside, 1); /* got() from dnsnap_l2_free(), not process */
	fake_stop(&f);
	free(s);
}

static void test_process_is_refused_once_the_thread_runs(void **state)
{
	struct seen *s = seen_new();
	dnsnap_l2_hooks_t h = {.got = got, .arg = s};
	char url[128], err[256];
	(void)state;
	snprintf(url, sizeof url, "unix://%s/nobody.sock", dir);
	dnsnap_l2_opts_t o = {.url = url};
	dnsnap_l2_t *l = start_client(&o, &h);
	assert_int_equal(dnsnap_l2_process(l), DNSNAP_EINVAL);
	assert_int_equal(dnsnap_l2_start(l, err, sizeof err), DNSNAP_EINVAL);
	dnsnap_l2_free(l, 0);
	free(s);
}

/* Each GET has its own wait: one asked with 100 ms times out before one asked
 * earlier with 20 s (a list in taking order would hold it behind) */
static void test_each_get_has_its_own_deadline(void **state)
{
	static const char *const reply[] = {"+PONG\r\n"}; /* then never a reply */
	static const size_t len[] = {7};
	static const unsigned cmds[] = {1};
	struct fake f = {.reply = reply, .reply_len = len, .cmds = cmds, .n = 1};
	struct seen *s = seen_new();
	dnsnap_l2_hooks_t h = {.got = got, .arg = s};
	char url[64];
	int a, b;
	(void)state;
	fake_start(&f);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d", f.port);
	dnsnap_l2_opts_t o = {.url = url, .wait_ms = 20000, .connect_ms = 60000};
	dnsnap_l2_t *l = start_client(&o, &h);
	assert_int_equal(dnsnap_l2_get(l, (const uint8_t *)"a", 1, 0, &a), DNSNAP_OK);
	assert_int_equal(dnsnap_l2_get(l, (const uint8_t *)"b", 1, 100, &b), DNSNAP_OK);
	wait_calls(s, 1);
	assert_ptr_equal(s->order[0], &b);
	assert_int_equal(s->status[0], DNSNAP_L2_TIMEOUT);
	dnsnap_l2_free(l, 0);
	assert_int_equal(s->norder, 2);
	assert_ptr_equal(s->order[1], &a);
	assert_int_equal(s->status[1], DNSNAP_L2_STOPPED);
	fake_stop(&f);
	free(s);
}

/* ------------------------------------------------------- hostile servers */

/* The process's virtual size (bytes): /proc/self/statm's first field */
static uint64_t vsize(void)
{
	unsigned long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%lu", &pages), 1);
	fclose(f);
	return (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * A server that answers each connection's first command (the PING) with
 * @p head alone, five times: the client must neither reserve what the header
 * announces (hiredis 0.14 callocs a multi-bulk's count: *2147483647 is 16 GB
 * of address space, and a free that visits every slot for seconds) nor stop
 * slowly. The virtual size is sampled all along.
 */
static void hostile(const char *head, int counted)
{
	const char *reply[] = {head};
	const size_t len[] = {strlen(head)};
	static const unsigned cmds[] = {1};
	struct fake f = {.reply = reply, .reply_len = len, .cmds = cmds, .n = 1, .conns = 5};
	struct seen *s = seen_new();
	dnsnap_l2_hooks_t h = {.got = got, .arg = s, .log = logged};
	dnsnap_l2_stats_t st;
	char url[64];
	uint64_t v0 = vsize(), peak = v0;
	fake_start(&f);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d", f.port);
	/* connect_ms: a connection whose PING is not answered fails after it */
	dnsnap_l2_opts_t o = {.url = url, .connect_ms = 300};
	dnsnap_l2_t *l = start_client(&o, &h);
	uint64_t end = mono_ms() + 30000;
	do { /* five connections served, and (when the bound counts it) failed */
		uint64_t v = vsize();
		peak = v > peak ? v : peak;
		dnsnap_l2_stats(l, &st);
		usleep(2000);
	} while ((atomic_load(&f.served) < 5 || (counted && st.too_big < 5)) && mono_ms() < end);
	uint64_t t0 = mono_ms();
	dnsnap_l2_free(l, 0);
	uint64_t took = mono_ms() - t0;
	print_message("%s x%u: virtual size +%llu MB at most, dnsnap_l2_free() %llu ms, "
		      "too_big %llu\n", head[0] == '*' ? "*2147483647" : "$2147483647",
		      atomic_load(&f.served), (unsigned long long)((peak - v0) >> 20),
		      (unsigned long long)took, (unsigned long long)st.too_big);
	assert_true(peak - v0 < (1ull << 30));
	assert_true(took < 2000); /* without the bound: seconds per connection */
	assert_int_equal(atomic_load(&f.served), 5);
	if (counted) {
		assert_int_equal(st.too_big, 5);
		pthread_mutex_lock(&s->mu);
		assert_non_null(strstr(s->log, "a reply over the bounds"));
		pthread_mutex_unlock(&s->mu);
	}
	fake_stop(&f);
	free(s);
}

static void test_a_huge_multi_bulk_count_is_refused_unreserved(void **state)
{
	(void)state;
	hostile("*2147483647\r\n", 1);
}

static void test_a_huge_bulk_length_is_not_reserved(void **state)
{
	/* hiredis 0.14 reserves nothing for a bulk length: it waits for the bytes
	 * (bounded at 32 MB: test_a_reply_over_32_mb_drops_the_connection); the
	 * connection fails when its PING goes unanswered */
	(void)state;
	hostile("$2147483647\r\n", 0);
}

static void test_the_bulk_calls_refuse_a_huge_reply(void **state)
{
	static const char *const reply[] = {"*2147483647\r\n"};
	static const size_t len[] = {13};
	static const unsigned cmds[] = {1};
	struct fake f = {.reply = reply, .reply_len = len, .cmds = cmds, .n = 1};
	dnsnap_l2_bulk_t *b = NULL;
	char url[64], err[256];
	(void)state;
	uint64_t v0 = vsize();
	fake_start(&f);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d", f.port);
	dnsnap_l2_opts_t o = {.url = url, .connect_ms = 30000};
	assert_int_equal(dnsnap_l2_bulk_open(&o, &b, err, sizeof err), -EIO);
	assert_null(b);
	assert_non_null(strstr(err, "a reply over the bounds: an array of more than 100000"));
	assert_true(vsize() - v0 < (1ull << 30));
	fake_stop(&f);
}

/* The reader's bounds, fed by hand: what a dnsnap reply needs passes, more does not */
static void test_reader_bounds(void **state)
{
	static const struct {
		const char *in;
		int ok;
		const char *why;
	} v[] = {
		{"*2\r\n$1\r\na\r\n:1\r\n", 1, NULL},
		{"*100000\r\n", 1, NULL},  /* at the bound: taken (the rest would follow) */
		{"*100001\r\n", 0, "an array of more than 100000"},
		{"*2147483647\r\n", 0, "an array of more than 100000"},
		{"*1\r\n*100000\r\n", 1, NULL},
		{"*-1\r\n", 1, NULL},
		{"$-1\r\n", 1, NULL},
	};
	(void)state;
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		redisReader *r = redisReaderCreate();
		struct l2_bound b;
		void *rep = NULL;
		dnsnap__l2_reader_bound(r, &b);
		assert_int_equal(redisReaderFeed(r, v[i].in, strlen(v[i].in)), REDIS_OK);
		int rc = redisReaderGetReply(r, &rep);
		const char *why = dnsnap__l2_reader_over(r, &b);
		if ((rc == REDIS_OK) != v[i].ok || (v[i].why && (!why || !strstr(why, v[i].why))))
			fail_msg("'%s': rc %d, '%s'", v[i].in, rc, why ? why : "");
		freeReplyObject(rep);
		redisReaderFree(r);
	}
	/* one reply of [11 arrays]: 11 + 9 x 100000 + 99989 = 1000000 elements in
	 * all, taken; one more (the 11th array's) is over the reply's bound */
	redisReader *r = redisReaderCreate();
	struct l2_bound b;
	void *rep = NULL;
	char buf[64];
	dnsnap__l2_reader_bound(r, &b);
	assert_int_equal(redisReaderFeed(r, "*11\r\n", 5), REDIS_OK);
	for (int k = 0; k < 10; k++) {
		int elements = k < 9 ? 100000 : 99989;
		int n = snprintf(buf, sizeof buf, "*%d\r\n", elements);
		assert_int_equal(redisReaderFeed(r, buf, (size_t)n), REDIS_OK);
		for (int e = 0; e < elements; e++)
			assert_int_equal(redisReaderFeed(r, ":1\r\n", 4), REDIS_OK);
		assert_int_equal(redisReaderGetReply(r, &rep), REDIS_OK);
		assert_null(rep); /* not whole yet */
	}
	assert_int_equal(redisReaderFeed(r, "*1\r\n", 4), REDIS_OK);
	assert_int_equal(redisReaderGetReply(r, &rep), REDIS_ERR);
	assert_non_null(strstr(dnsnap__l2_reader_over(r, &b), "more than 1000000 elements"));
	redisReaderFree(r);
}

/* Stopping waits for the queued writes at most the flush bound, with the
 * library's thread or without (dnsnap_l2_free() then runs the loop itself):
 * a server that never answers them costs the bound, then they are failed */
static void test_stopping_waits_at_most_the_flush_bound(void **state)
{
	static const char *const reply[] = {"+PONG\r\n"}; /* then never a reply */
	static const size_t len[] = {7};
	static const unsigned cmds[] = {1};
	(void)state;
	for (int threaded = 0; threaded < 2; threaded++) {
		struct fake f = {.reply = reply, .reply_len = len, .cmds = cmds, .n = 1};
		struct seen *s = seen_new();
		dnsnap_l2_hooks_t h = {.got = got, .arg = s};
		dnsnap_l2_stats_t st;
		dnsnap_l2_t *l = NULL;
		char url[64], err[256];
		fake_start(&f);
		snprintf(url, sizeof url, "redis://127.0.0.1:%d", f.port);
		dnsnap_l2_opts_t o = {.url = url, .connect_ms = 60000};
		if (threaded) {
			l = start_client(&o, &h);
		} else {
			assert_int_equal(dnsnap_l2_new(&o, &h, &l, err, sizeof err), DNSNAP_OK);
			s->loop = pthread_self();
		}
		for (int i = 0; i < 1000; i++) { /* connected: the PING answered */
			if (!threaded)
				turn(l);
			dnsnap_l2_stats(l, &st);
			if (st.nodes == 1)
				break;
			if (threaded)
				usleep(10000);
		}
		assert_int_equal(st.nodes, 1);
		for (int i = 0; i < 3; i++)
			dnsnap_l2_put(l, (const uint8_t *)"k", 1, (const uint8_t *)"v", 1, 1);
		uint64_t t0 = mono_ms();
		dnsnap_l2_free_last(l, 300, &st);
		uint64_t took = mono_ms() - t0;
		print_message("%s: dnsnap_l2_free(300) took %llu ms\n",
			      threaded ? "thread" : "caller's loop", (unsigned long long)took);
		assert_true(took < 300 + 2000); /* a generous bound: never unbounded */
		assert_int_equal(st.writes, 0);
		assert_int_equal(st.write_errors, 3); /* failed at the bound, not lost */
		assert_int_equal(st.queue_depth, 0);
		fake_stop(&f);
		free(s);
	}
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
		cmocka_unit_test(test_auth_file_of_another_user_is_refused),
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
		cmocka_unit_test(test_the_callers_loop_drives_the_client),
		cmocka_unit_test(test_process_is_refused_once_the_thread_runs),
		cmocka_unit_test(test_each_get_has_its_own_deadline),
		cmocka_unit_test(test_a_huge_multi_bulk_count_is_refused_unreserved),
		cmocka_unit_test(test_a_huge_bulk_length_is_not_reserved),
		cmocka_unit_test(test_the_bulk_calls_refuse_a_huge_reply),
		cmocka_unit_test(test_reader_bounds),
		cmocka_unit_test(test_stopping_waits_at_most_the_flush_bound),
	};
	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
