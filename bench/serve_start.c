/*
 * serve_start: how long `dnsnap serve` takes from exec to its first answer,
 * as a client sees it (issue 13: at most 5 ms at 10M entries).
 *
 *   serve_start [--runs N] [--port P] [--interval US] SNAP NAME TYPE -- DNSNAP [ARG]... \
 *               [-- DNSNAP2 [ARG]...]...
 *
 * Each run, for each command given (interleaved, so that the machine's load
 * falls on all alike): take the time (CLOCK_MONOTONIC), posix_spawn
 * `DNSNAP serve SNAP --listen 127.0.0.1:PORT ARG...`, send the query NAME
 * TYPE (EDNS, UDP size 1232) every US microseconds (default 100) until a
 * reply with its ID, QR set, RCODE NOERROR and an answer comes, take the time
 * again; then SIGTERM the server and wait for it. Beside it, the same for
 * `DNSNAP --version` from spawn to exit: the exec and dynamic linking alone,
 * and for /bin/true: the exec floor of the machine as loaded now.
 * Prints, per command, the median, min and max over the runs in ms, and the
 * CPU time (user + system, from wait4()) of each: on a busy machine the wall
 * times stretch with the queue for a CPU, the CPU times much less.
 * PORT (default 53530) gets the run's number added, so a run never finds the
 * last one's socket. A run without an answer in 5 s fails the benchmark.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "timing.h"

extern char **environ;

#define MAX_CMDS 8
#define MAX_RUNS 1000

static const char *type_names[] = { "A", "NS", "CNAME", "SOA", "MX", "TXT", "AAAA" };
static const uint16_t type_codes[] = { 1, 2, 5, 6, 15, 16, 28 };

/* NAME TYPE as a query with EDNS: @return its length, 0 when NAME is not one */
static size_t make_query(const char *name, uint16_t type, uint8_t *q, size_t cap)
{
	size_t n = 12;
	memset(q, 0, 12);
	q[2] = 0x01;  /* RD */
	q[5] = 1;     /* QDCOUNT */
	q[11] = 1;    /* ARCOUNT: the OPT record */
	for (const char *l = name; *l != '\0' && strcmp(l, ".") != 0;) {
		const char *dot = strchr(l, '.');
		size_t len = dot != NULL ? (size_t)(dot - l) : strlen(l);
		if (len == 0 || len > 63 || n + 1 + len + 16 > cap)
			return 0;
		q[n++] = (uint8_t)len;
		memcpy(q + n, l, len);
		n += len;
		l += len + (dot != NULL);
	}
	const uint8_t tail[] = { 0, (uint8_t)(type >> 8), (uint8_t)type, 0, 1,
				 0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0 }; /* root, OPT 1232 */
	memcpy(q + n, tail, sizeof tail);
	return n + sizeof tail;
}

/* Spawn ARGV with stdout and stderr on /dev/null. @return its pid, or -1 */
static pid_t spawn(char **argv)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	pid_t pid;
	int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	return rc == 0 ? pid : -1;
}

/* The CPU time (user + system) of a child that ended, in ns */
static uint64_t cpu_ns(const struct rusage *ru)
{
	return (uint64_t)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1000000000ull +
	       (uint64_t)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) * 1000ull;
}

/* One serve run: spawn to first answer, in ns; 0 when none came in 5 s.
 * @p cpu: the server's CPU time, start to exit (SIGTERM after the answer) */
static uint64_t serve_run(char **argv, int sock, const struct sockaddr_in *to,
			  uint8_t *q, size_t qlen, uint16_t id, unsigned interval_us,
			  uint64_t *cpu)
{
	q[0] = (uint8_t)(id >> 8);
	q[1] = (uint8_t)id;
	uint64_t t0 = now_ns();
	pid_t pid = spawn(argv);
	if (pid < 0)
		return 0;
	uint64_t got = 0, next = t0, end = t0 + 5000000000ull;
	while (got == 0 && now_ns() < end) {
		uint64_t t = now_ns();
		if (t >= next) {
			/* refused (ICMP) until the server binds: unconnected, ignored */
			sendto(sock, q, qlen, 0, (const struct sockaddr *)to, sizeof *to);
			next = t + interval_us * 1000ull;
		}
		uint64_t wait = next > t ? next - t : 0;
		struct timespec ts = { 0, (long)wait };
		struct pollfd p = { .fd = sock, .events = POLLIN };
		if (ppoll(&p, 1, &ts, NULL) <= 0)
			continue;
		uint8_t r[4096];
		ssize_t n;
		while ((n = recv(sock, r, sizeof r, MSG_DONTWAIT)) >= 0) {
			if (n >= 12 && r[0] == q[0] && r[1] == q[1] && (r[2] & 0x80) &&
			    (r[3] & 0x0f) == 0 && (r[6] | r[7]) != 0) {
				got = now_ns() - t0;
				break;
			}
		}
	}
	kill(pid, SIGTERM);
	struct rusage ru;
	*cpu = wait4(pid, NULL, 0, &ru) == pid ? cpu_ns(&ru) : 0;
	return got;
}

/* `BIN ARG`: spawn to exit, in ns; @p cpu: its CPU time */
static uint64_t version_run(const char *bin, const char *arg, uint64_t *cpu)
{
	char *argv[] = { (char *)bin, (char *)arg, NULL };
	uint64_t t0 = now_ns();
	pid_t pid = spawn(argv);
	if (pid < 0)
		return 0;
	struct rusage ru;
	*cpu = wait4(pid, NULL, 0, &ru) == pid ? cpu_ns(&ru) : 0;
	return now_ns() - t0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void report(const char *what, uint64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_u64);
	double med = n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
	printf("  %-34s median %7.3f  min %7.3f  max %7.3f ms\n", what, med / 1e6,
	       (double)v[0] / 1e6, (double)v[n - 1] / 1e6);
}

static int usage(void)
{
	fprintf(stderr, "usage: serve_start [--runs N] [--port P] [--interval US] SNAP NAME TYPE "
			"-- DNSNAP [ARG]... [-- DNSNAP2 [ARG]...]...\n");
	return 2;
}

int main(int argc, char **argv)
{
	int runs = 20, port = 53530;
	unsigned interval_us = 100;
	int a = 1;
	for (; a + 1 < argc && strncmp(argv[a], "--", 2) == 0 && argv[a][2] != '\0'; a += 2) {
		if (strcmp(argv[a], "--runs") == 0)
			runs = atoi(argv[a + 1]);
		else if (strcmp(argv[a], "--port") == 0)
			port = atoi(argv[a + 1]);
		else if (strcmp(argv[a], "--interval") == 0)
			interval_us = (unsigned)atoi(argv[a + 1]);
		else
			return usage();
	}
	if (runs < 1 || runs > MAX_RUNS || port < 1 || port + runs > 65535 || interval_us < 1 ||
	    a + 4 > argc || strcmp(argv[a + 3], "--") != 0)
		return usage();
	const char *snap = argv[a], *name = argv[a + 1], *tname = argv[a + 2];
	uint16_t type = 0;
	for (size_t i = 0; i < sizeof type_codes / sizeof *type_codes; i++)
		if (strcasecmp(tname, type_names[i]) == 0)
			type = type_codes[i];
	uint8_t q[300];
	size_t qlen = type != 0 ? make_query(name, type, q, sizeof q) : 0;
	if (qlen == 0) {
		fprintf(stderr, "serve_start: %s %s: not a name and a type of A NS CNAME SOA MX "
				"TXT AAAA\n", name, tname);
		return 2;
	}
	/* the commands: argv after each "--", up to the next */
	static char *cmd_argv[MAX_CMDS][64];
	static char listen[MAX_CMDS][32];
	int ncmd = 0;
	for (int i = a + 3; i < argc && ncmd < MAX_CMDS;) {
		if (strcmp(argv[i], "--") != 0 || i + 1 >= argc)
			return usage();
		int k = 0;
		char **c = cmd_argv[ncmd];
		c[k++] = argv[++i];
		c[k++] = (char *)"serve";
		c[k++] = (char *)snap;
		c[k++] = (char *)"--listen";
		c[k++] = listen[ncmd];
		for (i++; i < argc && strcmp(argv[i], "--") != 0 && k < 62; i++)
			c[k++] = argv[i];
		c[k] = NULL;
		ncmd++;
	}
	int sock = socket(AF_INET, SOCK_DGRAM, 0);
	if (sock < 0)
		return perror("socket"), 1;
	static uint64_t serve_ns[MAX_CMDS][MAX_RUNS], ver_ns[MAX_CMDS][MAX_RUNS];
	static uint64_t serve_cpu[MAX_CMDS][MAX_RUNS], ver_cpu[MAX_CMDS][MAX_RUNS];
	static uint64_t floor_ns[MAX_RUNS], floor_cpu[MAX_RUNS];
	for (int r = 0; r < runs; r++) {
		floor_ns[r] = version_run("/bin/true", NULL, &floor_cpu[r]);
		for (int c = 0; c < ncmd; c++) {
			struct sockaddr_in to = { .sin_family = AF_INET };
			to.sin_port = htons((uint16_t)(port + r));
			to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			snprintf(listen[c], sizeof listen[c], "127.0.0.1:%d", port + r);
			ver_ns[c][r] = version_run(cmd_argv[c][0], "--version", &ver_cpu[c][r]);
			serve_ns[c][r] = serve_run(cmd_argv[c], sock, &to, q, qlen,
						   (uint16_t)(r * MAX_CMDS + c + 1), interval_us,
						   &serve_cpu[c][r]);
			if (serve_ns[c][r] == 0 || ver_ns[c][r] == 0) {
				fprintf(stderr, "serve_start: %s: no answer to %s %s on %s in 5 s\n",
					cmd_argv[c][0], name, tname, listen[c]);
				return 1;
			}
		}
	}
	printf("serve_start: %d runs, %s %s from %s, a query every %u us\n", runs, name, tname,
	       snap, interval_us);
	printf("/bin/true (the exec floor of this machine now)\n");
	report("exec to exit", floor_ns, runs);
	report("  its CPU time (user + sys)", floor_cpu, runs);
	for (int c = 0; c < ncmd; c++) {
		printf("%s", cmd_argv[c][0]);
		for (int k = 5; cmd_argv[c][k] != NULL; k++)
			printf(" %s", cmd_argv[c][k]);
		printf("\n");
		report("exec to exit, --version", ver_ns[c], runs);
		report("  its CPU time (user + sys)", ver_cpu[c], runs);
		report("exec to first answer, serve", serve_ns[c], runs);
		report("  serve's CPU time, start to exit", serve_cpu[c], runs);
	}
	return 0;
}
