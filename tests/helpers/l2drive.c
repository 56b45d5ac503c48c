/*
 * l2drive: drives the tool's Redis client (cli/l2) against a real Redis, for
 * tests/e2e/l2_client.sh and by hand.
 *
 * Usage:
 *   l2drive session URL [OPTIONS]   the serve thread (l2_new); commands on
 *                                   stdin, one answer line each on stdout
 *   l2drive fill URL N [SIZE [TTL_MS]] [OPTIONS]
 *                                   bulk: SET key0..key(N-1) (values of SIZE
 *                                   bytes, 'v' then the key; TTL 600000)
 *   l2drive scan URL [OPTIONS]      bulk: every key under the prefix, one
 *                                   "KEY LEN" line each (sorted by nobody),
 *                                   then "scanned N skipped M"
 * OPTIONS: --wait MS (GET bound), --prefix P, --auth-file FILE (else the
 * environment, as l2_auth_load()), --connect MS, --replica URL.
 * Exit: 0, 1 a command failed, 2 bad usage or l2_new/l2_bulk_open failed.
 *
 * Session commands (KEY: text, or hex:HEX for bytes):
 *   get KEY            -> "get hit LEN VALUE|miss|timeout|error|refused|stopped MS"
 *                         (MS: l2_get() to got(); VALUE as text, or hex:...)
 *   put KEY VALUE TTL_MS -> "put queued" (SET PXAT now+TTL_MS)
 *   gets PREFIX N      -> N GETs PREFIX0..PREFIX(N-1) at once, all waited for:
 *                         "gets hit=.. miss=.. timeout=.. error=.. refused=.."
 *   until STATE MS     -> GETs of one key every 10 ms until the breaker is
 *                         STATE (closed, open, half-open) or MS pass:
 *                         "until STATE ok|timeout"
 *   drain MS           -> until every SET is answered: "drain ok|timeout"
 *   stats              -> "stats gets=.. hits=.. ... breaker=.. nodes=.."
 *   sleep MS           -> "sleep"
 *   quit               -> l2_free(1000), "quit", exit
 * Connection logs (the log hook) go to stderr as "l2: ...".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "l2.h"

struct wait {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned pending;
	unsigned n[L2_STOPPED + 1];
	enum l2_status last;
	uint64_t t0, ms;
	uint8_t val[256];
	size_t len;
};

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t wall_ms(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000;
}

static void got(void *arg, void *waiter, enum l2_status st, const uint8_t *val, size_t len)
{
	struct wait *w = waiter;
	(void)arg;
	pthread_mutex_lock(&w->mu);
	w->n[st]++;
	w->last = st;
	w->ms = now_ms() - w->t0;
	w->len = len;
	memcpy(w->val, val, len < sizeof w->val ? len : sizeof w->val);
	if (--w->pending == 0)
		pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

static void logline(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "l2: %s\n", msg);
}

static const char *const status_name[] = {"hit", "miss", "timeout", "error", "stopped"};
static const char *const breaker_name[] = {"closed", "open", "half-open"};

/* KEY: text, or hex:HEX. @return its length */
static size_t key_bytes(const char *s, uint8_t *out, size_t cap)
{
	size_t n = 0;
	if (strncmp(s, "hex:", 4) != 0) {
		n = strlen(s) < cap ? strlen(s) : cap;
		memcpy(out, s, n);
		return n;
	}
	for (s += 4; s[0] && s[1] && n < cap; s += 2) {
		unsigned v;
		if (sscanf(s, "%2x", &v) != 1)
			break;
		out[n++] = (uint8_t)v;
	}
	return n;
}

static void print_bytes(const uint8_t *p, size_t n)
{
	int text = 1;
	for (size_t i = 0; i < n; i++)
		if (p[i] <= ' ' || p[i] >= 0x7f)
			text = 0;
	if (text) {
		fwrite(p, 1, n, stdout);
		return;
	}
	fputs("hex:", stdout);
	for (size_t i = 0; i < n; i++)
		printf("%02x", p[i]);
}

/* Issue @p n GETs (keys @p base + i when @p numbered) and wait for all. */
static void run_gets(struct l2 *l, struct wait *w, const char *base, unsigned n, int numbered)
{
	uint8_t key[512];
	memset(w->n, 0, sizeof w->n);
	unsigned refused = 0;
	pthread_mutex_lock(&w->mu);
	w->pending = n;
	w->t0 = now_ms();
	pthread_mutex_unlock(&w->mu);
	for (unsigned i = 0; i < n; i++) {
		size_t kl = key_bytes(base, key, sizeof key - 12);
		if (numbered)
			kl += (size_t)snprintf((char *)key + kl, 12, "%u", i);
		if (l2_get(l, key, kl, w) != 0) {
			refused++;
			pthread_mutex_lock(&w->mu);
			w->pending--;
			pthread_mutex_unlock(&w->mu);
		}
	}
	pthread_mutex_lock(&w->mu);
	while (w->pending)
		pthread_cond_wait(&w->cv, &w->mu);
	pthread_mutex_unlock(&w->mu);
	w->pending = refused; /* handed back to the caller's print */
}

static void print_stats(struct l2 *l)
{
	struct l2_stats s;
	l2_stats(l, &s);
	printf("stats gets=%llu hits=%llu misses=%llu timeouts=%llu errors=%llu refused=%llu "
	       "writes=%llu write_errors=%llu write_drops=%llu moved=%llu ask=%llu "
	       "reconnects=%llu queue=%llu breaker=%s nodes=%u\n",
	       (unsigned long long)s.gets, (unsigned long long)s.hits,
	       (unsigned long long)s.misses, (unsigned long long)s.timeouts,
	       (unsigned long long)s.errors, (unsigned long long)s.refused,
	       (unsigned long long)s.writes, (unsigned long long)s.write_errors,
	       (unsigned long long)s.write_drops, (unsigned long long)s.moved,
	       (unsigned long long)s.ask, (unsigned long long)s.reconnects,
	       (unsigned long long)s.queue_depth, breaker_name[s.breaker], s.nodes);
}

static int command(struct l2 *l, struct wait *w, char *line)
{
	char *argv[5] = {0};
	int argc = 0;
	for (char *t = strtok(line, " \t\n"); t && argc < 5; t = strtok(NULL, " \t\n"))
		argv[argc++] = t;
	if (argc == 0)
		return 0;
	if (strcmp(argv[0], "get") == 0 && argc == 2) {
		run_gets(l, w, argv[1], 1, 0);
		if (w->pending)
			printf("get refused 0\n");
		else if (w->last == L2_HIT) {
			printf("get hit %zu ", w->len);
			print_bytes(w->val, w->len < sizeof w->val ? w->len : sizeof w->val);
			printf(" %llu\n", (unsigned long long)w->ms);
		} else
			printf("get %s %llu\n", status_name[w->last], (unsigned long long)w->ms);
	} else if (strcmp(argv[0], "put") == 0 && argc == 4) {
		uint8_t key[512], val[512];
		size_t kl = key_bytes(argv[1], key, sizeof key), vl = key_bytes(argv[2], val, sizeof val);
		l2_put(l, key, kl, val, vl, wall_ms() + strtoull(argv[3], NULL, 10));
		printf("put queued\n");
	} else if (strcmp(argv[0], "gets") == 0 && argc == 3) {
		run_gets(l, w, argv[1], (unsigned)strtoul(argv[2], NULL, 10), 1);
		printf("gets hit=%u miss=%u timeout=%u error=%u refused=%u\n", w->n[L2_HIT],
		       w->n[L2_MISS], w->n[L2_TIMEOUT], w->n[L2_ERROR], w->pending);
	} else if (strcmp(argv[0], "until") == 0 && argc == 3) {
		uint64_t end = now_ms() + strtoull(argv[2], NULL, 10);
		struct l2_stats s;
		for (;;) {
			l2_stats(l, &s);
			if (strcmp(breaker_name[s.breaker], argv[1]) == 0 || now_ms() >= end)
				break;
			run_gets(l, w, "until-probe", 1, 0);
			usleep(10000);
		}
		printf("until %s %s\n", argv[1],
		       strcmp(breaker_name[s.breaker], argv[1]) == 0 ? "ok" : "timeout");
	} else if (strcmp(argv[0], "drain") == 0 && argc == 2) {
		uint64_t end = now_ms() + strtoull(argv[1], NULL, 10);
		struct l2_stats s;
		do {
			l2_stats(l, &s);
			if (s.queue_depth)
				usleep(5000);
		} while (s.queue_depth && now_ms() < end);
		printf("drain %s\n", s.queue_depth ? "timeout" : "ok");
	} else if (strcmp(argv[0], "stats") == 0) {
		print_stats(l);
	} else if (strcmp(argv[0], "sleep") == 0 && argc == 2) {
		usleep((useconds_t)strtoul(argv[1], NULL, 10) * 1000);
		printf("sleep\n");
	} else if (strcmp(argv[0], "quit") == 0) {
		return 1;
	} else {
		printf("bad command\n");
	}
	fflush(stdout);
	return 0;
}

struct args {
	struct l2_opts o;
	const char *auth_file;
	char user[256], password[512];
};

static int parse_opts(int argc, char **argv, int from, struct args *a)
{
	for (int i = from; i < argc; i++) {
		if (i + 1 >= argc)
			return -1;
		if (strcmp(argv[i], "--wait") == 0)
			a->o.wait_ms = (unsigned)atoi(argv[++i]);
		else if (strcmp(argv[i], "--prefix") == 0)
			a->o.prefix = argv[++i];
		else if (strcmp(argv[i], "--auth-file") == 0)
			a->auth_file = argv[++i];
		else if (strcmp(argv[i], "--connect") == 0)
			a->o.connect_ms = (unsigned)atoi(argv[++i]);
		else if (strcmp(argv[i], "--replica") == 0)
			a->o.replica = argv[++i];
		else
			return -1;
	}
	char err[256];
	if (l2_auth_load(a->auth_file, a->user, sizeof a->user, a->password, sizeof a->password,
			 err, sizeof err) != 0) {
		fprintf(stderr, "l2drive: %s\n", err);
		return -1;
	}
	if (a->password[0]) {
		a->o.password = a->password;
		a->o.user = a->user[0] ? a->user : NULL;
	}
	return 0;
}

static int session(struct args *a)
{
	struct l2 *l;
	char err[256], line[1024];
	struct l2_hooks h = {.got = got, .log = logline};
	static struct wait w = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

	if (l2_new(&a->o, &h, &l, err, sizeof err) != 0) {
		fprintf(stderr, "l2drive: %s\n", err);
		return 2;
	}
	while (fgets(line, sizeof line, stdin))
		if (command(l, &w, line))
			break;
	l2_free(l, 1000);
	printf("quit\n");
	return 0;
}

static int fill(struct args *a, unsigned long n, size_t size, uint64_t ttl)
{
	struct l2_bulk *b;
	char err[256], key[32];
	uint8_t *val = malloc(size + 1);
	if (!val || l2_bulk_open(&a->o, &b, err, sizeof err) != 0) {
		fprintf(stderr, "l2drive: %s\n", val ? err : "no memory");
		free(val);
		return 2;
	}
	for (unsigned long i = 0; i < n; i++) {
		int kl = snprintf(key, sizeof key, "key%lu", i);
		memset(val, 'v', size);
		memcpy(val, key, (size_t)kl < size ? (size_t)kl : size);
		if (l2_bulk_put(b, (uint8_t *)key, (size_t)kl, val, size, wall_ms() + ttl, err,
				sizeof err) != 0)
			goto fail;
	}
	if (l2_bulk_flush(b, err, sizeof err) != 0)
		goto fail;
	l2_bulk_close(b);
	free(val);
	printf("filled %lu\n", n);
	return 0;
fail:
	fprintf(stderr, "l2drive: %s\n", err);
	l2_bulk_close(b);
	free(val);
	return 1;
}

static int scanned;

static int one(void *arg, const uint8_t *key, size_t key_len, const uint8_t *val, size_t len)
{
	(void)arg;
	(void)val;
	print_bytes(key, key_len);
	printf(" %zu\n", len);
	scanned++;
	return 0;
}

static int scan(struct args *a)
{
	struct l2_bulk *b;
	char err[256];
	uint64_t skipped = 0;
	if (l2_bulk_open(&a->o, &b, err, sizeof err) != 0) {
		fprintf(stderr, "l2drive: %s\n", err);
		return 2;
	}
	int rc = l2_bulk_scan(b, one, NULL, &skipped, err, sizeof err);
	l2_bulk_close(b);
	if (rc != 0) {
		fprintf(stderr, "l2drive: %s\n", err);
		return 1;
	}
	printf("scanned %d skipped %llu\n", scanned, (unsigned long long)skipped);
	return 0;
}

int main(int argc, char **argv)
{
	static struct args a;
	if (argc < 3)
		goto usage;
	a.o.url = argv[2];
	if (strcmp(argv[1], "session") == 0 && parse_opts(argc, argv, 3, &a) == 0)
		return session(&a);
	if (strcmp(argv[1], "scan") == 0 && parse_opts(argc, argv, 3, &a) == 0)
		return scan(&a);
	if (strcmp(argv[1], "fill") == 0 && argc >= 4) {
		int from = 4;
		size_t size = 16;
		uint64_t ttl = 600000;
		if (argc > from && argv[from][0] != '-')
			size = strtoul(argv[from++], NULL, 10);
		if (argc > from && argv[from][0] != '-')
			ttl = strtoull(argv[from++], NULL, 10);
		if (parse_opts(argc, argv, from, &a) == 0)
			return fill(&a, strtoul(argv[3], NULL, 10), size, ttl);
	}
usage:
	fprintf(stderr, "usage: l2drive session|scan URL [OPTIONS] | fill URL N [SIZE [TTL_MS]] "
			"[OPTIONS]\n");
	return 2;
}
