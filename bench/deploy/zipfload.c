/*
 * zipfload: the deploy benchmark's load generator (bench/deploy/run.sh, pause.sh).
 *
 *   zipfload ADDR PORT QUERIES -r RATE -l SECONDS [-i INTERVAL_MS] [-o ORIGIN]
 *            [-s SOCKETS] [-z S] [-t TIMEOUT_MS] [-S SEED] [-D SEED]
 *
 * Sends queries over UDP to ADDR:PORT at a fixed RATE (queries per second) for
 * SECONDS, then waits TIMEOUT_MS (default 2000) for the last replies. The name
 * of each query is drawn from QUERIES ("NAME TYPE" per line, dnsperf's format,
 * TYPE one of A, AAAA, TXT) with Zipf popularity: the name of rank k (a fixed
 * random permutation of the lines, seeded by SEED) is drawn with probability
 * proportional to 1 / k^S (S default 1.0), through a precomputed CDF. The
 * draws go on from SEED's generator unless -D gives them a seed of their own:
 * then several zipfloads with one -S and different -D send different streams
 * with the same popularity ranking (bench/fleet: one stream split over hosts).
 *
 * Pacing: a token bucket refilled every millisecond (an absolute sleep on
 * CLOCK_MONOTONIC); each step sends what the schedule owes by then, so a late
 * step catches up rather than lowering the offered rate. Each query carries
 * EDNS as dnsperf -e sends it (an OPT record, UDP size 4096, no DO bit, no
 * option), byte for byte: a packet cache keyed on the whole query (dnsdist's)
 * warmed by dnsperf then holds our queries too.
 *
 * Sockets: SOCKETS (default 256) UDP sockets bound to port 0 (the kernel's
 * ephemeral ports, random), used in turn; each socket numbers its queries
 * with its own 16-bit counter as the ID. A receiver thread takes a reply only
 * from ADDR:PORT, on the socket the query left from, with that query's ID and
 * question (name without case, type, class), and timestamps it.
 *
 * Output, after the run, one JSON line per INTERVAL_MS (default 1000) of send
 * time, buckets counted from ORIGIN (Unix seconds, may have decimals; default
 * the start), so that a script can put its own event (a restart) at t = 0:
 *   {"t": T, "sent": N, "answered": N, "lost": N, "errors": N,
 *    "p50_us": N, "p99_us": N, "max_us": N}
 * t is the bucket's start in seconds from ORIGIN; a query belongs to the
 * bucket it was sent in. answered: replies within TIMEOUT_MS; lost: the rest
 * (no reply, or one later than TIMEOUT_MS); errors: answered with an RCODE
 * other than NOERROR; latencies over the answered ones (null when none). A
 * summary line goes to standard error. No dependency beyond libc.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define QMAX 300
#define MAX_SOCKS 4096

typedef struct query {
	uint8_t wire[QMAX]; /* header (ID 0, RD), the question, OPT */
	uint16_t len;
	uint16_t qlen; /* the question's bytes: name, type, class */
} query_t;

/* One query sent. The sender fills it, then publishes its index in slots[]. */
typedef struct sent {
	uint64_t mono_ns;
	uint32_t q;
	_Atomic uint32_t lat_us; /* 0 until the reply; at least 1 after */
	_Atomic uint8_t rcode;
} sent_t;

static query_t *queries;
static size_t nqueries;
static double *cdf;   /* cdf[k]: probability of ranks 0..k */
static uint32_t *rank; /* rank k -> line of QUERIES */

static int socks[MAX_SOCKS];
static int nsocks = 256;
static struct sockaddr_in server;

static sent_t *log_;
static size_t log_cap;
static _Atomic size_t nsent;
/* socket s, ID id -> index + 1 in log_ of the query last sent with them */
static _Atomic uint32_t *slots;
static atomic_bool receiving = true;
static _Atomic uint64_t late;

static void die(const char *what)
{
	perror(what);
	exit(2);
}

static void usage(void)
{
	fprintf(stderr, "usage: zipfload ADDR PORT QUERIES -r RATE -l SECONDS [-i INTERVAL_MS]\n"
			"                [-o ORIGIN] [-s SOCKETS] [-z S] [-t TIMEOUT_MS] [-S SEED]\n"
			"                [-D SEED]\n");
	exit(2);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double real_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng_state;

static uint64_t rng(void) /* splitmix64 */
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static unsigned get16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

/* "name. TYPE" to a whole query message (ID 0, RD, one question, OPT 4096). */
static int encode(const char *name, const char *type, query_t *q)
{
	static const uint8_t hdr[12] = {0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1};
	static const uint8_t opt[11] = {0, 0, 41, 0x10, 0x00, 0, 0, 0, 0, 0, 0};
	unsigned t = !strcasecmp(type, "A") ? 1 : !strcasecmp(type, "AAAA") ? 28
		   : !strcasecmp(type, "TXT") ? 16 : 0;
	if (t == 0)
		return -1;
	memcpy(q->wire, hdr, 12);
	size_t n = 12;
	const char *p = name;
	while (*p != '\0' && !(p[0] == '.' && p[1] == '\0')) {
		const char *dot = strchr(p, '.');
		size_t l = dot ? (size_t)(dot - p) : strlen(p);
		if (l == 0 || l > 63 || n + 1 + l + 1 + 4 + sizeof opt > QMAX)
			return -1;
		q->wire[n++] = (uint8_t)l;
		memcpy(q->wire + n, p, l);
		n += l;
		p += l + (dot != NULL);
	}
	q->wire[n++] = 0;
	put16(q->wire + n, t);
	put16(q->wire + n + 2, 1);
	n += 4;
	q->qlen = (uint16_t)(n - 12);
	memcpy(q->wire + n, opt, sizeof opt);
	q->len = (uint16_t)(n + sizeof opt);
	return 0;
}

static void read_queries(const char *path)
{
	FILE *f = fopen(path, "r");
	if (f == NULL)
		die(path);
	size_t cap = 1024;
	queries = malloc(cap * sizeof *queries);
	char line[512], name[300], type[16];
	while (fgets(line, sizeof line, f) != NULL) {
		if (sscanf(line, "%299s %15s", name, type) != 2)
			continue;
		if (nqueries == cap)
			queries = realloc(queries, (cap *= 2) * sizeof *queries);
		if (queries == NULL)
			die("realloc");
		if (encode(name, type, &queries[nqueries]) == 0)
			nqueries++;
	}
	fclose(f);
	if (nqueries == 0) {
		fprintf(stderr, "zipfload: %s: no queries\n", path);
		exit(2);
	}
}

/* The ranks' CDF for exponent s, and a random permutation from rank to line. */
static void zipf_init(double s)
{
	cdf = malloc(nqueries * sizeof *cdf);
	rank = malloc(nqueries * sizeof *rank);
	if (cdf == NULL || rank == NULL)
		die("malloc");
	double sum = 0;
	for (size_t k = 0; k < nqueries; k++) {
		sum += 1.0 / pow((double)(k + 1), s);
		cdf[k] = sum;
	}
	for (size_t k = 0; k < nqueries; k++)
		cdf[k] /= sum;
	cdf[nqueries - 1] = 1.0;
	for (size_t k = 0; k < nqueries; k++)
		rank[k] = (uint32_t)k;
	for (size_t k = nqueries - 1; k > 0; k--) {
		size_t j = rng() % (k + 1);
		uint32_t t = rank[k];
		rank[k] = rank[j];
		rank[j] = t;
	}
}

static uint32_t zipf_draw(void)
{
	double u = (double)(rng() >> 11) * 0x1.0p-53;
	size_t lo = 0, hi = nqueries - 1;
	while (lo < hi) { /* the first rank whose cdf reaches u */
		size_t mid = lo + (hi - lo) / 2;
		if (cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return rank[lo];
}

static void open_socks(void)
{
	struct sockaddr_in any = {.sin_family = AF_INET};
	any.sin_addr.s_addr = server.sin_addr.s_addr == htonl(INADDR_LOOPBACK)
				      ? htonl(INADDR_LOOPBACK) : htonl(INADDR_ANY);
	for (int k = 0; k < nsocks; k++) {
		int fd = socket(AF_INET, SOCK_DGRAM, 0);
		if (fd < 0)
			die("socket");
		int buf = 1 << 18;
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
		if (bind(fd, (struct sockaddr *)&any, sizeof any) != 0)
			die("bind");
		socks[k] = fd;
	}
}

static void *receiver(void *arg)
{
	(void)arg;
	int ep = epoll_create1(0);
	if (ep < 0)
		die("epoll_create1");
	for (int k = 0; k < nsocks; k++) {
		struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)k};
		if (epoll_ctl(ep, EPOLL_CTL_ADD, socks[k], &ev) != 0)
			die("epoll_ctl");
	}
	uint8_t r[4096];
	struct epoll_event evs[64];
	while (atomic_load(&receiving)) {
		int n = epoll_wait(ep, evs, 64, 50);
		for (int e = 0; e < n; e++) {
			uint32_t k = evs[e].data.u32;
			for (;;) {
				struct sockaddr_in from;
				socklen_t fl = sizeof from;
				ssize_t len = recvfrom(socks[k], r, sizeof r, MSG_DONTWAIT,
						       (struct sockaddr *)&from, &fl);
				if (len < 0)
					break;
				if (len < 12 || from.sin_port != server.sin_port ||
				    from.sin_addr.s_addr != server.sin_addr.s_addr || !(r[2] & 0x80))
					continue;
				uint32_t idx = atomic_load_explicit(&slots[k * 65536u + get16(r)],
								    memory_order_acquire);
				if (idx == 0)
					continue;
				sent_t *s = &log_[idx - 1];
				const query_t *q = &queries[s->q];
				if ((size_t)len < 12u + q->qlen || get16(r + 4) != 1 ||
				    memcmp(r + 12 + q->qlen - 4, q->wire + 12 + q->qlen - 4, 4) != 0)
					continue;
				int same = 1;
				for (size_t j = 0; j + 4 < q->qlen && same; j++)
					same = (r[12 + j] | 0x20) == (q->wire[12 + j] | 0x20);
				if (!same || atomic_load(&s->lat_us) != 0)
					continue;
				uint64_t us = (mono_ns() - s->mono_ns) / 1000;
				atomic_store(&s->rcode, r[3] & 15);
				atomic_store(&s->lat_us, us ? (uint32_t)(us > UINT32_MAX ? UINT32_MAX : us)
							    : 1u);
			}
		}
	}
	close(ep);
	return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest value with at least p of the values at or below it. */
static uint32_t pct(const uint32_t *v, size_t n, double p)
{
	size_t r = (size_t)ceil(p * (double)n);
	return v[r ? r - 1 : 0];
}

int main(int argc, char **argv)
{
	if (argc < 4)
		usage();
	const char *addr = argv[1], *port = argv[2], *qfile = argv[3];
	double rate = 0, secs = 0, s = 1.0, origin = -1;
	long interval_ms = 1000, timeout_ms = 2000;
	uint64_t seed = 42, draw_seed = 0;
	int has_draw_seed = 0, c;
	optind = 4;
	while ((c = getopt(argc, argv, "r:l:i:o:s:z:t:S:D:")) != -1) {
		switch (c) {
		case 'r': rate = atof(optarg); break;
		case 'l': secs = atof(optarg); break;
		case 'i': interval_ms = atol(optarg); break;
		case 'o': origin = atof(optarg); break;
		case 's': nsocks = atoi(optarg); break;
		case 'z': s = atof(optarg); break;
		case 't': timeout_ms = atol(optarg); break;
		case 'S': seed = strtoull(optarg, NULL, 0); break;
		case 'D': draw_seed = strtoull(optarg, NULL, 0); has_draw_seed = 1; break;
		default: usage();
		}
	}
	if (rate <= 0 || secs <= 0 || interval_ms <= 0 || timeout_ms <= 0 || nsocks < 1 ||
	    nsocks > MAX_SOCKS || optind != argc)
		usage();
	server = (struct sockaddr_in){.sin_family = AF_INET,
				      .sin_port = htons((uint16_t)atoi(port))};
	if (inet_pton(AF_INET, addr, &server.sin_addr) != 1) {
		fprintf(stderr, "zipfload: %s: not an IPv4 address\n", addr);
		return 2;
	}
	rng_state = seed;
	read_queries(qfile);
	zipf_init(s);
	if (has_draw_seed)
		rng_state = draw_seed;
	open_socks();
	log_cap = (size_t)(rate * secs) + 16;
	log_ = calloc(log_cap, sizeof *log_);
	slots = calloc((size_t)(unsigned)nsocks * 65536u, sizeof *slots);
	uint16_t *next_id = calloc((size_t)(unsigned)nsocks, sizeof *next_id);
	if (log_ == NULL || slots == NULL || next_id == NULL)
		die("calloc");
	for (int k = 0; k < nsocks; k++)
		next_id[k] = (uint16_t)rng();

	pthread_t rt;
	if (pthread_create(&rt, NULL, receiver, NULL) != 0)
		die("pthread_create");
	uint64_t m0 = mono_ns();
	double r0 = real_s();
	if (origin < 0)
		origin = r0;
	size_t total = log_cap - 16, n = 0;
	unsigned long send_err = 0;
	int k = 0;
	struct timespec step;
	clock_gettime(CLOCK_MONOTONIC, &step);
	while (n < total) {
		uint64_t now = mono_ns();
		size_t due = (size_t)(rate * (double)(now - m0) / 1e9);
		if (due > total)
			due = total;
		for (; n < due; n++) {
			sent_t *e = &log_[n];
			e->q = zipf_draw();
			query_t *q = &queries[e->q];
			uint16_t id = next_id[k]++;
			put16(q->wire, id);
			e->mono_ns = mono_ns();
			atomic_store_explicit(&slots[(size_t)k * 65536u + id], (uint32_t)(n + 1),
					      memory_order_release);
			if (sendto(socks[k], q->wire, q->len, 0, (struct sockaddr *)&server,
				   sizeof server) != q->len)
				send_err++;
			k = (k + 1) % nsocks;
		}
		atomic_store(&nsent, n);
		step.tv_nsec += 1000000;
		if (step.tv_nsec >= 1000000000) {
			step.tv_nsec -= 1000000000;
			step.tv_sec++;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &step, NULL) == EINTR)
			;
	}
	uint64_t m_end = mono_ns();
	struct timespec wait = {.tv_sec = timeout_ms / 1000,
				.tv_nsec = (timeout_ms % 1000) * 1000000 + 100000000};
	if (wait.tv_nsec >= 1000000000) {
		wait.tv_nsec -= 1000000000;
		wait.tv_sec++;
	}
	nanosleep(&wait, NULL);
	atomic_store(&receiving, false);
	pthread_join(rt, NULL);

	/* Buckets of send time, counted from ORIGIN. */
	double iv = (double)interval_ms / 1000.0;
	long b_lo = 0, b_hi = 0;
	long *bucket = malloc(n * sizeof *bucket);
	if (bucket == NULL && n > 0)
		die("malloc");
	for (size_t i = 0; i < n; i++) {
		double t = r0 + (double)(log_[i].mono_ns - m0) / 1e9 - origin;
		bucket[i] = (long)floor(t / iv);
		if (i == 0 || bucket[i] < b_lo)
			b_lo = bucket[i];
		if (i == 0 || bucket[i] > b_hi)
			b_hi = bucket[i];
	}
	size_t nb = n ? (size_t)(b_hi - b_lo + 1) : 0;
	size_t *b_sent = calloc(nb + 1, sizeof *b_sent), *b_ans = calloc(nb + 1, sizeof *b_ans);
	size_t *b_err = calloc(nb + 1, sizeof *b_err), *b_off = calloc(nb + 2, sizeof *b_off);
	uint32_t *lat = malloc((n + 1) * sizeof *lat);
	if (!b_sent || !b_ans || !b_err || !b_off || !lat)
		die("malloc");
	size_t answered = 0, errors = 0;
	uint64_t tmo_us = (uint64_t)timeout_ms * 1000;
	for (size_t i = 0; i < n; i++) {
		size_t b = (size_t)(bucket[i] - b_lo);
		uint32_t l = atomic_load(&log_[i].lat_us);
		b_sent[b]++;
		if (l != 0 && l <= tmo_us) {
			b_ans[b]++;
			answered++;
			if (atomic_load(&log_[i].rcode) != 0) {
				b_err[b]++;
				errors++;
			}
		} else if (l != 0) {
			late++;
		}
	}
	for (size_t b = 0; b < nb; b++)
		b_off[b + 1] = b_off[b] + b_ans[b];
	size_t *fill = calloc(nb + 1, sizeof *fill);
	if (fill == NULL)
		die("calloc");
	for (size_t i = 0; i < n; i++) {
		uint32_t l = atomic_load(&log_[i].lat_us);
		if (l != 0 && l <= tmo_us) {
			size_t b = (size_t)(bucket[i] - b_lo);
			lat[b_off[b] + fill[b]++] = l;
		}
	}
	for (size_t b = 0; b < nb; b++) {
		uint32_t *v = lat + b_off[b];
		size_t m = b_ans[b];
		qsort(v, m, sizeof *v, cmp_u32);
		double t = (double)(b_lo + (long)b) * iv;
		if (interval_ms % 1000 == 0)
			printf("{\"t\": %.0f", t);
		else
			printf("{\"t\": %.2f", t);
		printf(", \"sent\": %zu, \"answered\": %zu, \"lost\": %zu, \"errors\": %zu", b_sent[b],
		       m, b_sent[b] - m, b_err[b]);
		if (m)
			printf(", \"p50_us\": %u, \"p99_us\": %u, \"max_us\": %u}\n", pct(v, m, 0.5),
			       pct(v, m, 0.99), v[m - 1]);
		else
			printf(", \"p50_us\": null, \"p99_us\": null, \"max_us\": null}\n");
	}
	fprintf(stderr,
		"zipfload: %zu sent in %.2f s (%.0f q/s), %zu answered, %zu lost (%llu answered "
		"after %ld ms), %zu errors, %lu send errors; %zu names, s = %.2f, %d sockets\n",
		n, (double)(m_end - m0) / 1e9, (double)n / ((double)(m_end - m0) / 1e9), answered,
		n - answered, (unsigned long long)atomic_load(&late), timeout_ms, errors, send_err,
		nqueries, s, nsocks);
	free(bucket);
	free(b_sent);
	free(b_ans);
	free(b_err);
	free(b_off);
	free(lat);
	free(fill);
	free(next_id);
	return 0;
}
