/*
 * dnsprobe: the peer benchmark's own client, for what dnsperf does not give.
 *
 *   dnsprobe lat ADDR PORT QUERIES [-c CONC] [-l SECONDS] [-n COUNT]
 *       a closed loop over UDP: CONC queries in flight, each answered one
 *       replaced at once by the next line of QUERIES (cycling), for SECONDS;
 *       every query's latency (send to receive, CLOCK_MONOTONIC) is kept and
 *       the median, p99, p99.9 and max are printed, with the counts of each
 *       kind of reply. With -n, the first COUNT lines are asked once each
 *       (a cache's first answer for each: bench/fleet) and the loop ends when
 *       the last is answered or lost, or at SECONDS.
 *   dnsprobe first ADDR PORT QUERIES [-i INTERVAL_US] [-l SECONDS] -- CMD...
 *       the warm start: take the time, start CMD (the server, or a script that
 *       starts it and loads its cache), and ask one query every INTERVAL_US
 *       (a new name of QUERIES each time) until the first hit (a reply to any
 *       of the last 4096 queries); print the microseconds from before the
 *       fork to that answer, and CMD's pid. CMD is left running, its standard
 *       output sent to our standard error.
 *
 * A hit is a reply with our ID and question, QR set, TC clear, RCODE NOERROR
 * and a first answer record of the question's type. Every query carries EDNS
 * (an OPT record, UDP size 4096, no DO bit), as dnsperf -e does: the same
 * bytes but for the ID, so that a packet cache (dnsdist's, PowerDNS
 * Recursor's) keyed on the whole query warmed by dnsperf also holds ours.
 * QUERIES: "NAME TYPE" per line, TYPE one of A, AAAA, TXT (dnsperf's format).
 * Output: one line of key=value pairs, easy to pick apart with sed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "byteorder.h"

#define QMAX 300
#define MAX_CONC 1024

typedef struct query {
	uint8_t wire[QMAX]; /* the question's name, type and class; the ID is set when sent */
	uint16_t len;
	uint16_t qtype;
} query_t;

static query_t *queries;
static size_t nqueries;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	perror(what);
	exit(2);
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
	st16be(q->wire + n, t);
	st16be(q->wire + n + 2, 1);
	n += 4;
	memcpy(q->wire + n, opt, sizeof opt);
	q->len = (uint16_t)(n + sizeof opt);
	q->qtype = (uint16_t)t;
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
		fprintf(stderr, "dnsprobe: %s: no queries\n", path);
		exit(2);
	}
}

/* Queries leave from NSOCK sockets, so from NSOCK source ports: a server's
 * SO_REUSEPORT sockets (one per thread or process) each get a share, as they
 * do from many clients. With one port every query would meet the same thread. */
#define NSOCK 8
static int socks[NSOCK];

static void connect_udp(const char *addr, const char *port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port))};
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		fprintf(stderr, "dnsprobe: %s: not an IPv4 address\n", addr);
		exit(2);
	}
	for (int k = 0; k < NSOCK; k++) {
		int fd = socket(AF_INET, SOCK_DGRAM, 0);
		if (fd < 0)
			die("socket");
		int buf = 1 << 20;
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
		if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
			die("connect");
		socks[k] = fd;
	}
}

/* Wait up to ms for a reply on any socket. */
static int wait_input(int ms)
{
	struct pollfd p[NSOCK];
	for (int k = 0; k < NSOCK; k++)
		p[k] = (struct pollfd){.fd = socks[k], .events = POLLIN};
	return poll(p, NSOCK, ms);
}

/* A datagram waiting on any socket (without waiting), or -1. */
static ssize_t recv_any(uint8_t *r, size_t cap)
{
	static unsigned next;
	for (int k = 0; k < NSOCK; k++, next++) {
		ssize_t n = recv(socks[next % NSOCK], r, cap, MSG_DONTWAIT);
		if (n >= 0)
			return n;
	}
	return -1;
}

enum reply { R_HIT, R_EMPTY, R_TC, R_SERVFAIL, R_REFUSED, R_NXDOMAIN, R_OTHER, R_KINDS };
static const char *const reply_name[R_KINDS] = {"hits",	   "noerror_nohit", "tc",   "servfail",
						"refused", "nxdomain",	    "other"};

/* What reply r (len bytes) to query q is; -1 if it is not a reply to q at all. */
static int classify(const uint8_t *r, size_t len, const query_t *q)
{
	size_t qlen = q->len - 11u - 12u; /* the question, without header and OPT */
	if (len < 12 + qlen || !(r[2] & 0x80) || ld16be(r + 4) != 1 ||
	    memcmp(r + 12 + qlen - 4, q->wire + 12 + qlen - 4, 4) != 0)
		return -1;
	for (size_t k = 0; k < qlen - 4; k++) /* the name, ASCII case-insensitively */
		if ((r[12 + k] | 0x20) != (q->wire[12 + k] | 0x20))
			return -1;
	unsigned rcode = r[3] & 15;
	if (rcode == 2)
		return R_SERVFAIL;
	if (rcode == 5)
		return R_REFUSED;
	if (rcode == 3)
		return R_NXDOMAIN;
	if (rcode != 0)
		return R_OTHER;
	if (r[2] & 0x02)
		return R_TC;
	if (ld16be(r + 6) == 0)
		return R_EMPTY;
	size_t o = 12 + qlen; /* the first answer's owner: a pointer or labels */
	while (o < len && r[o] != 0 && (r[o] & 0xc0) != 0xc0)
		o += 1 + r[o];
	o += o < len && r[o] != 0 ? 2 : 1;
	if (o + 2 > len || ld16be(r + o) != q->qtype)
		return R_EMPTY;
	return R_HIT;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* ---------------------------------------------------------------- lat */

struct slot {
	uint64_t sent;
	size_t qi;
	uint16_t id;
	int busy;
};

static int cmd_lat(unsigned conc, double seconds, size_t count)
{
	static struct slot slots[MAX_CONC];
	size_t lcap = 1 << 20, nlat = 0, next = 0, sent = 0, lost = 0, counts[R_KINDS] = {0};
	uint32_t *lat = malloc(lcap * sizeof *lat);
	uint16_t gen = 0;
	if (lat == NULL)
		die("malloc");
	uint64_t t0 = now_ns(), end = t0 + (uint64_t)(seconds * 1e9), t = t0;
	while (t < end) {
		unsigned busy = 0;
		for (unsigned s = 0; s < conc; s++) {
			if (slots[s].busy && t - slots[s].sent > 1000000000u) {
				slots[s].busy = 0; /* no answer in a second: lost */
				lost++;
			}
			if (slots[s].busy) {
				busy++;
				continue;
			}
			if (count != 0 && sent == count)
				continue;
			busy++;
			query_t *q = &queries[next];
			/* ID: slot in the low 10 bits, a generation above, so a late
			 * reply to a slot's earlier query is not taken for this one */
			uint16_t id = (uint16_t)((++gen & 0x3f) << 10 | s);
			st16be(q->wire, id);
			slots[s] = (struct slot){.sent = now_ns(), .qi = next, .id = id, .busy = 1};
			if (send(socks[s % NSOCK], q->wire, q->len, 0) < 0 && errno != ECONNREFUSED)
				die("send");
			next = (next + 1) % nqueries;
			sent++;
		}
		if (busy == 0)
			break; /* -n: every query answered or lost */
		if (wait_input(10) > 0) {
			uint8_t r[4096];
			ssize_t n;
			while ((n = recv_any(r, sizeof r)) >= 0) {
				uint64_t tr = now_ns();
				unsigned s = n >= 2 ? ld16be(r) & (MAX_CONC - 1) : MAX_CONC;
				if (s >= conc || !slots[s].busy || slots[s].id != ld16be(r))
					continue;
				int kind = classify(r, (size_t)n, &queries[slots[s].qi]);
				if (kind < 0)
					continue;
				slots[s].busy = 0;
				counts[kind]++;
				if (nlat == lcap && (lat = realloc(lat, (lcap *= 2) * sizeof *lat)) == NULL)
					die("realloc");
				uint64_t d = tr - slots[s].sent;
				lat[nlat++] = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
			}
		}
		t = now_ns();
	}
	double el = (double)(t - t0) / 1e9;
	qsort(lat, nlat, sizeof *lat, cmp_u32);
#define PCT(p) (nlat ? lat[(size_t)((double)(nlat - 1) * (p))] / 1000.0 : 0.0)
	printf("concurrency=%u seconds=%.2f sent=%zu answered=%zu lost=%zu qps=%.0f", conc, el, sent,
	       nlat, lost, (double)nlat / el);
	for (int k = 0; k < R_KINDS; k++)
		printf(" %s=%zu", reply_name[k], counts[k]);
	printf(" p50_us=%.1f p99_us=%.1f p999_us=%.1f max_us=%.1f\n", PCT(0.5), PCT(0.99),
	       PCT(0.999), PCT(1.0));
	free(lat);
	return counts[R_HIT] == nlat && nlat > 0 ? 0 : 1;
}

/* ---------------------------------------------------------------- first */

static int cmd_first(unsigned interval_us, double seconds, char **cmd)
{
	uint64_t t0 = now_ns();
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		for (int k = 0; k < NSOCK; k++)
			close(socks[k]);
		/* our stdout is for the result line: the server writes to stderr */
		dup2(STDERR_FILENO, STDOUT_FILENO);
		execvp(cmd[0], cmd);
		_exit(127);
	}
	/* the names of the last RING queries, by ID: a reply to any of them counts
	 * (a server busy loading its cache may answer later than the next poll) */
	enum { RING = 4096 };
	static size_t asked_qi[RING];
	size_t asked = 0, counts[R_KINDS] = {0};
	uint64_t end = t0 + (uint64_t)(seconds * 1e9), next_send = t0;
	for (;;) {
		uint64_t t = now_ns();
		if (t >= end)
			break;
		if (t >= next_send) {
			size_t qi = asked % nqueries; /* a new name each time, every one cached */
			st16be(queries[qi].wire, (uint16_t)asked);
			asked_qi[asked % RING] = qi;
			/* refused before the server binds */
			send(socks[asked % NSOCK], queries[qi].wire, queries[qi].len, 0);
			asked++;
			next_send += interval_us * 1000ull;
			if (next_send < t)
				next_send = t;
		}
		int wait_ms = (int)((next_send - t + 999999) / 1000000);
		if (wait_input(wait_ms) <= 0)
			continue;
		uint8_t r[4096];
		ssize_t n;
		while ((n = recv_any(r, sizeof r)) >= 0) {
			uint64_t tr = now_ns();
			uint16_t age = (uint16_t)((uint16_t)asked - ld16be(r)); /* 1: the latest */
			if (n < 12 || age == 0 || age > RING || age > asked)
				continue;
			int kind = classify(r, (size_t)n, &queries[asked_qi[(asked - age) % RING]]);
			if (kind < 0)
				continue;
			counts[kind]++;
			if (kind == R_HIT) {
				printf("first_hit_us=%.0f pid=%d asked=%zu", (double)(tr - t0) / 1e3,
				       (int)pid, asked);
				for (int k = 1; k < R_KINDS; k++)
					printf(" %s=%zu", reply_name[k], counts[k]);
				printf("\n");
				return 0;
			}
		}
	}
	printf("first_hit_us=none pid=%d asked=%zu\n", (int)pid, asked);
	return 1;
}

static void usage(void)
{
	fprintf(stderr, "usage: dnsprobe lat ADDR PORT QUERIES [-c CONC] [-l SECONDS] [-n COUNT]\n"
			"       dnsprobe first ADDR PORT QUERIES [-i INTERVAL_US] [-l SECONDS] -- CMD...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	if (argc < 5)
		usage();
	const char *mode = argv[1];
	unsigned conc = 1, interval_us = 500;
	size_t count = 0;
	double seconds = strcmp(mode, "lat") == 0 ? 5 : 60;
	int a = 5;
	for (; a < argc && strcmp(argv[a], "--") != 0; a++) {
		if (a + 1 >= argc)
			usage();
		if (strcmp(argv[a], "-c") == 0)
			conc = (unsigned)atoi(argv[++a]);
		else if (strcmp(argv[a], "-l") == 0)
			seconds = atof(argv[++a]);
		else if (strcmp(argv[a], "-i") == 0)
			interval_us = (unsigned)atoi(argv[++a]);
		else if (strcmp(argv[a], "-n") == 0)
			count = strtoul(argv[++a], NULL, 10);
		else
			usage();
	}
	if (conc < 1 || conc > MAX_CONC || interval_us < 1 || seconds <= 0)
		usage();
	read_queries(argv[4]);
	if (count > nqueries)
		count = nqueries;
	connect_udp(argv[2], argv[3]);
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(mode, "lat") == 0)
		return cmd_lat(conc, seconds, count);
	if (strcmp(mode, "first") == 0 && a + 1 < argc)
		return cmd_first(interval_us, seconds, argv + a + 1);
	usage();
}
