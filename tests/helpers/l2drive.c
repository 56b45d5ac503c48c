/*
 * l2drive: drives libdnsnap-l2, the Redis client, against a real Redis, for
 * tests/e2e/l2_client.sh and by hand.
 *
 * Usage:
 *   l2drive session URL [OPTIONS]   the client (dnsnap_l2_new), its loop in the
 *                                   library's thread (dnsnap_l2_start), or with
 *                                   --loop in one of ours, as an embedder's
 *                                   event loop drives it (poll on
 *                                   dnsnap_l2_fd, dnsnap_l2_timeout_ms,
 *                                   dnsnap_l2_process); commands on stdin,
 *                                   one answer line each on stdout
 *   l2drive fill URL N [SIZE [TTL_MS]] [OPTIONS]
 *                                   bulk: SET key0..key(N-1) (values of SIZE
 *                                   bytes, 'v' then the key; TTL 600000)
 *   l2drive scan URL [OPTIONS]      bulk: every key under the prefix, one
 *                                   "KEY LEN" line each (sorted by nobody),
 *                                   then "scanned N skipped M"
 * OPTIONS: --wait MS (GET bound), --prefix P, --auth-file FILE (else the
 * environment, as dnsnap_l2_auth_load()), --connect MS, --replica URL,
 * --loop (session).
 * Exit: 0, 1 a command failed, 2 bad usage or dnsnap_l2_new/_start/_bulk_open
 * failed.
 *
 * Session commands (KEY: text, or hex:HEX for bytes):
 *   get KEY            -> "get hit LEN VALUE|miss|timeout|error|refused|stopped MS"
 *                         (MS: dnsnap_l2_get() to got(); VALUE as text, or hex:...)
 *   put KEY VALUE TTL_MS -> "put queued" (SET PXAT now+TTL_MS)
 *   gets PREFIX N      -> N GETs PREFIX0..PREFIX(N-1) at once, all waited for:
 *                         "gets hit=.. miss=.. timeout=.. error=.. refused=.."
 *   until STATE MS     -> GETs of one key every 10 ms until the breaker is
 *                         STATE (closed, open, half-open) or MS pass:
 *                         "until STATE ok|timeout"
 *   drain MS           -> until every SET is answered: "drain ok|timeout"
 *   lat KEY N          -> N GETs of KEY one after the other, get to got():
 *                         "lat n=N hit=.. p50_us=.. p99_us=.. max_us=.."
 *   stats              -> "stats gets=.. hits=.. ... breaker=.. nodes=.."
 *   sleep MS           -> "sleep"
 *   quit               -> dnsnap_l2_free(1000) (by the loop's thread with
 *                         --loop), "quit", exit
 * Connection logs (the log hook) go to stderr as "l2: ...".
 */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "l2.h"

struct wait {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned pending;
	unsigned n[DNSNAP_L2_STOPPED + 1];
	dnsnap_l2_status_t last;
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

static void got(void *arg, void *waiter, dnsnap_l2_status_t st, const uint8_t *val, size_t len)
{
	struct wait *w = waiter;
	(void)arg;
	pthread_mutex_lock(&w->mu);
	w->n[st]++;
	w->last = st;
	w->ms = now_ms() - w->t0;
	w->len = len;
	if (len)
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
static void run_gets(dnsnap_l2_t *l, struct wait *w, const char *base, unsigned n, int numbered)
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
		if (dnsnap_l2_get(l, key, kl, 0, w) != 0) {
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

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* N sequential GETs of one key: the latency through the thread and Redis */
static void latency(dnsnap_l2_t *l, struct wait *w, const char *key, unsigned n)
{
	uint64_t *us = calloc(n ? n : 1, sizeof *us);
	unsigned hits = 0;
	if (!us || n == 0) {
		printf("lat bad\n");
		free(us);
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		uint64_t t0 = now_us();
		run_gets(l, w, key, 1, 0);
		us[i] = now_us() - t0;
		hits += !w->pending && w->last == DNSNAP_L2_HIT;
	}
	qsort(us, n, sizeof *us, cmp_u64);
	printf("lat n=%u hit=%u p50_us=%llu p99_us=%llu max_us=%llu\n", n, hits,
	       (unsigned long long)us[n / 2], (unsigned long long)us[(size_t)n * 99 / 100],
	       (unsigned long long)us[n - 1]);
	free(us);
}

static void print_stats(dnsnap_l2_t *l)
{
	dnsnap_l2_stats_t s;
	dnsnap_l2_stats(l, &s);
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

static int command(dnsnap_l2_t *l, struct wait *w, char *line)
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
		else if (w->last == DNSNAP_L2_HIT) {
			printf("get hit %zu ", w->len);
			print_bytes(w->val, w->len < sizeof w->val ? w->len : sizeof w->val);
			printf(" %llu\n", (unsigned long long)w->ms);
		} else
			printf("get %s %llu\n", status_name[w->last], (unsigned long long)w->ms);
	} else if (strcmp(argv[0], "put") == 0 && argc == 4) {
		uint8_t key[512], val[512];
		size_t kl = key_bytes(argv[1], key, sizeof key);
		size_t vl = key_bytes(argv[2], val, sizeof val);
		dnsnap_l2_put(l, key, kl, val, vl, wall_ms() + strtoull(argv[3], NULL, 10));
		printf("put queued\n");
	} else if (strcmp(argv[0], "gets") == 0 && argc == 3) {
		run_gets(l, w, argv[1], (unsigned)strtoul(argv[2], NULL, 10), 1);
		printf("gets hit=%u miss=%u timeout=%u error=%u refused=%u\n",
		       w->n[DNSNAP_L2_HIT], w->n[DNSNAP_L2_MISS], w->n[DNSNAP_L2_TIMEOUT],
		       w->n[DNSNAP_L2_ERROR], w->pending);
	} else if (strcmp(argv[0], "until") == 0 && argc == 3) {
		uint64_t end = now_ms() + strtoull(argv[2], NULL, 10);
		dnsnap_l2_stats_t s;
		for (;;) {
			dnsnap_l2_stats(l, &s);
			if (strcmp(breaker_name[s.breaker], argv[1]) == 0 || now_ms() >= end)
				break;
			run_gets(l, w, "until-probe", 1, 0);
			usleep(10000);
		}
		printf("until %s %s\n", argv[1],
		       strcmp(breaker_name[s.breaker], argv[1]) == 0 ? "ok" : "timeout");
	} else if (strcmp(argv[0], "drain") == 0 && argc == 2) {
		uint64_t end = now_ms() + strtoull(argv[1], NULL, 10);
		dnsnap_l2_stats_t s;
		do {
			dnsnap_l2_stats(l, &s);
			if (s.queue_depth)
				usleep(5000);
		} while (s.queue_depth && now_ms() < end);
		printf("drain %s\n", s.queue_depth ? "timeout" : "ok");
	} else if (strcmp(argv[0], "lat") == 0 && argc == 3) {
		latency(l, w, argv[1], (unsigned)strtoul(argv[2], NULL, 10));
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
	dnsnap_l2_opts_t o;
	const char *auth_file;
	int loop;                /* --loop: our thread drives the client */
	char user[256], password[512];
};

static int parse_opts(int argc, char **argv, int from, struct args *a)
{
	for (int i = from; i < argc; i++) {
		if (strcmp(argv[i], "--loop") == 0) {
			a->loop = 1;
			continue;
		}
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
	if (dnsnap_l2_auth_load(a->auth_file, a->user, sizeof a->user, a->password,
				sizeof a->password, err, sizeof err) != 0) {
		fprintf(stderr, "l2drive: %s\n", err);
		return -1;
	}
	if (a->password[0]) {
		a->o.password = a->password;
		a->o.user = a->user[0] ? a->user : NULL;
	}
	return 0;
}

/* --loop: an embedder's event loop, in a thread of ours: it polls the
 * client's descriptor until told to stop, then frees the client itself (the
 * driving thread's call) */
struct driver {
	dnsnap_l2_t *l;
	int stop_fd;
};

static void *drive(void *arg)
{
	struct driver *d = arg;
	struct pollfd p[2] = {{.fd = dnsnap_l2_fd(d->l), .events = POLLIN},
			      {.fd = d->stop_fd, .events = POLLIN}};
	while (!(p[1].revents & POLLIN)) {
		if (poll(p, 2, dnsnap_l2_timeout_ms(d->l)) < 0)
			p[1].revents = 0;
		if (dnsnap_l2_process(d->l) != DNSNAP_OK) {
			fprintf(stderr, "l2drive: dnsnap_l2_process failed\n");
			break;
		}
	}
	dnsnap_l2_free(d->l, 1000);
	return NULL;
}

static int session(struct args *a)
{
	dnsnap_l2_t *l;
	char err[256], line[1024];
	dnsnap_l2_hooks_t h = {.got = got, .log = logline};
	static struct wait w = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
	struct driver d = {.stop_fd = -1};
	pthread_t t;

	if (dnsnap_l2_new(&a->o, &h, &l, err, sizeof err) != 0) {
		fprintf(stderr, "l2drive: %s\n", err);
		return 2;
	}
	d.l = l;
	if (a->loop && ((d.stop_fd = eventfd(0, EFD_CLOEXEC)) < 0 ||
			pthread_create(&t, NULL, drive, &d) != 0)) {
		fprintf(stderr, "l2drive: no loop thread\n");
		return 2;
	}
	if (!a->loop && dnsnap_l2_start(l, err, sizeof err) != 0) {
		fprintf(stderr, "l2drive: %s\n", err);
		return 2;
	}
	while (fgets(line, sizeof line, stdin))
		if (command(l, &w, line))
			break;
	if (a->loop) {
		uint64_t one = 1;
		if (write(d.stop_fd, &one, sizeof one) != sizeof one)
			return 2;
		pthread_join(t, NULL);
		close(d.stop_fd);
	} else {
		dnsnap_l2_free(l, 1000);
	}
	printf("quit\n");
	return 0;
}

static int fill(struct args *a, unsigned long n, size_t size, uint64_t ttl)
{
	dnsnap_l2_bulk_t *b;
	char err[256], key[32];
	uint8_t *val = malloc(size + 1);
	if (!val || dnsnap_l2_bulk_open(&a->o, &b, err, sizeof err) != 0) {
		fprintf(stderr, "l2drive: %s\n", val ? err : "no memory");
		free(val);
		return 2;
	}
	for (unsigned long i = 0; i < n; i++) {
		int kl = snprintf(key, sizeof key, "key%lu", i);
		memset(val, 'v', size);
		memcpy(val, key, (size_t)kl < size ? (size_t)kl : size);
		if (dnsnap_l2_bulk_put(b, (uint8_t *)key, (size_t)kl, val, size, wall_ms() + ttl,
				       err, sizeof err) != 0)
			goto fail;
	}
	if (dnsnap_l2_bulk_flush(b, err, sizeof err) != 0)
		goto fail;
	dnsnap_l2_bulk_close(b);
	free(val);
	printf("filled %lu\n", n);
	return 0;
fail:
	fprintf(stderr, "l2drive: %s\n", err);
	dnsnap_l2_bulk_close(b);
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
	dnsnap_l2_bulk_t *b;
	char err[256];
	uint64_t skipped = 0;
	if (dnsnap_l2_bulk_open(&a->o, &b, err, sizeof err) != 0) {
		fprintf(stderr, "l2drive: %s\n", err);
		return 2;
	}
	int rc = dnsnap_l2_bulk_scan(b, one, NULL, &skipped, err, sizeof err);
	dnsnap_l2_bulk_close(b);
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
