/*
 * serve_config.c: `dnsnap serve`'s options into a struct serve_config
 * (serve_config.h): one getopt_long table, a handler per group of options
 * (sockets and access, the cache and its snapshots, the upstreams, the
 * second level), then the checks of what goes with what.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli.h"
#include "log.h"
#include "serve_config.h"

static const char CMD[] = "serve";

enum {
	O_UPSTREAM = 0x100, O_TIMEOUT, O_TRIES, O_0X20, O_OUTSTANDING, O_MAX_BYTES,
	O_STALE, O_ALLOW, O_USER, O_EVERY, O_SNAP_MAX, O_METRICS, O_LOG_LEVEL,
	O_L2, O_L2_REPLICA, O_L2_PREFIX, O_L2_WAIT, O_L2_AUTH, O_L2_QUEUE, O_CONTROL,
	O_DEPLOY_WAIT, O_TCP_MAX, O_TCP_PER_SOURCE, O_TCP_PREFIX, O_METRICS_ALLOW,
};

static const struct option longopts[] = {
	{ "listen", required_argument, NULL, 'l' },
	{ "threads", required_argument, NULL, 't' },
	{ "now", required_argument, NULL, 'n' },
	{ "json", no_argument, NULL, 'j' },
	{ "upstream", required_argument, NULL, O_UPSTREAM },
	{ "upstream-timeout", required_argument, NULL, O_TIMEOUT },
	{ "upstream-tries", required_argument, NULL, O_TRIES },
	{ "upstream-0x20", no_argument, NULL, O_0X20 },
	{ "max-outstanding", required_argument, NULL, O_OUTSTANDING },
	{ "max-bytes", required_argument, NULL, O_MAX_BYTES },
	{ "serve-stale", required_argument, NULL, O_STALE },
	{ "allow", required_argument, NULL, O_ALLOW },
	{ "user", required_argument, NULL, O_USER },
	{ "snapshot-every", required_argument, NULL, O_EVERY },
	{ "snapshot-max-bytes", required_argument, NULL, O_SNAP_MAX },
	{ "metrics", required_argument, NULL, O_METRICS },
	{ "log-level", required_argument, NULL, O_LOG_LEVEL },
	{ "l2", required_argument, NULL, O_L2 },
	{ "l2-replica", required_argument, NULL, O_L2_REPLICA },
	{ "l2-prefix", required_argument, NULL, O_L2_PREFIX },
	{ "l2-wait", required_argument, NULL, O_L2_WAIT },
	{ "l2-auth-file", required_argument, NULL, O_L2_AUTH },
	{ "l2-queue", required_argument, NULL, O_L2_QUEUE },
	{ "control", required_argument, NULL, O_CONTROL },
	{ "deploy-wait", required_argument, NULL, O_DEPLOY_WAIT },
	{ "tcp-max", required_argument, NULL, O_TCP_MAX },
	{ "tcp-per-source", required_argument, NULL, O_TCP_PER_SOURCE },
	{ "tcp-source-prefix", required_argument, NULL, O_TCP_PREFIX },
	{ "metrics-allow", required_argument, NULL, O_METRICS_ALLOW },
	{ NULL, 0, NULL, 0 },
};

void config_defaults(struct serve_config *c)
{
	memset(c, 0, sizeof *c);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	c->threads = n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (int)n;
	c->max_bytes = DEFAULT_MAX_BYTES;
	c->snapshot_every = DEFAULT_SNAPSHOT_EVERY;
	c->fwd.timeout_ms = DEFAULT_UPSTREAM_TIMEOUT_MS;
	c->fwd.tries = DEFAULT_UPSTREAM_TRIES;
	c->fwd.max_outstanding = DEFAULT_MAX_OUTSTANDING;
	c->fwd.max_waiters = DEFAULT_MAX_WAITERS;
	c->l2.wait_ms = DNSNAP_L2_DEFAULT_WAIT_MS;
	c->l2.queue_max = DNSNAP_L2_DEFAULT_QUEUE;
	c->deploy_wait = DEFAULT_DEPLOY_WAIT;
	c->tcp_max = DEFAULT_TCP_MAX;
	c->tcp_per_source = DEFAULT_TCP_PER_SOURCE;
	c->tcp_prefix4 = 32;
	c->tcp_prefix6 = 128;
}

void config_wipe(struct serve_config *c)
{
	explicit_bzero(c->l2_password, sizeof c->l2_password);
}

/* ------------------------------------------------------------- values */

int addr_parse(const char *arg, unsigned port, struct sockaddr_storage *ss, unsigned *len,
	       int *wildcard)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *pp = NULL;
	size_t hl;
	if (arg[0] == '[') {
		const char *e = strchr(arg, ']');
		if (e == NULL || (e[1] != 0 && e[1] != ':'))
			return -1;
		hl = (size_t)(e - arg - 1);
		if (hl >= sizeof host)
			return -1;
		memcpy(host, arg + 1, hl);
		pp = e[1] == ':' ? e + 2 : NULL;
	} else {
		const char *c = strrchr(arg, ':');
		if (c != NULL && strchr(arg, ':') != c) /* two colons: a bare IPv6 address */
			c = NULL;
		hl = c ? (size_t)(c - arg) : strlen(arg);
		if (hl >= sizeof host)
			return -1;
		memcpy(host, arg, hl);
		pp = c ? c + 1 : NULL;
	}
	host[hl] = 0;
	unsigned long p = port;
	if (pp != NULL) {
		char *end;
		errno = 0;
		p = strtoul(pp, &end, 10);
		if (errno || end == pp || *end || p > 65535 || pp[0] == '-' || pp[0] == '+')
			return -1;
	}
	memset(ss, 0, sizeof *ss);
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)p);
		*len = sizeof *a4;
		*wildcard = a4->sin_addr.s_addr == htonl(INADDR_ANY);
	} else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)p);
		*len = sizeof *a6;
		*wildcard = IN6_IS_ADDR_UNSPECIFIED(&a6->sin6_addr);
	} else {
		return -1;
	}
	return 0;
}

int cidr_parse(const char *arg, struct cidr *c)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(arg, '/');
	size_t hl = slash ? (size_t)(slash - arg) : strlen(arg);
	if (hl == 0 || hl >= sizeof host)
		return -1;
	memcpy(host, arg, hl);
	host[hl] = 0;
	memset(c, 0, sizeof *c);
	unsigned max;
	if (inet_pton(AF_INET, host, c->addr) == 1) {
		c->family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, host, c->addr) == 1) {
		c->family = AF_INET6;
		max = 128;
	} else {
		return -1;
	}
	c->bits = max;
	if (slash != NULL) {
		char *end;
		errno = 0;
		unsigned long b = strtoul(slash + 1, &end, 10);
		if (errno || end == slash + 1 || *end || b > max || slash[1] == '-' ||
		    slash[1] == '+')
			return -1;
		c->bits = (unsigned)b;
	}
	/* host bits set (10.0.0.1/8) are a typo as often as not: refuse them */
	for (unsigned i = c->bits; i < max; i++)
		if (c->addr[i / 8] & (0x80 >> (i % 8)))
			return -2;
	/* ::ffff:a.b.c.d/96+n is the IPv4 prefix a.b.c.d/n: sources are matched
	 * as IPv4 (allowed()), so the prefix is too */
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	if (c->family == AF_INET6 && c->bits >= 96 && memcmp(c->addr, mapped, 12) == 0) {
		memmove(c->addr, c->addr + 12, 4);
		memset(c->addr + 4, 0, 12);
		c->family = AF_INET;
		c->bits -= 96;
	}
	return 0;
}

/* SIZE with an optional k, M, G (powers of 1024), at least 1M */
static int size_arg(const char *opt, const char *v, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	unsigned shift = 0;
	if (*end == 'k' || *end == 'K')
		shift = 10;
	else if (*end == 'M')
		shift = 20;
	else if (*end == 'G')
		shift = 30;
	if (shift)
		end++;
	if (errno || end == v || *end || v[0] == '-' || v[0] == '+' || x > (~0ull >> shift))
		return fail(CMD, NULL, "%s: not a size (a number of bytes, or with k, M, G): %s",
			    opt, v);
	*out = x << shift;
	if (*out < (1u << 20)) /* the index's tables alone take more */
		return fail(CMD, NULL, "%s: at least 1M, not %s", opt, v);
	return 0;
}

/* A number from @p min to @p max for option @p opt (the --threads kind). */
static int number_in(const char *opt, const char *v, unsigned long long min,
		     unsigned long long max, unsigned *out)
{
	unsigned long long x;
	if (number(CMD, opt, v, max, &x))
		return EXIT_USAGE;
	if (x < min)
		return fail(CMD, NULL, "%s: at least %llu, not %s", opt, min, v);
	*out = (unsigned)x;
	return 0;
}

/* ADDR[:PORT] of an upstream (port 53) */
static int upstream_arg(const char *v, dnsnap_fwd_upstream_t *u)
{
	struct sockaddr_storage ss;
	unsigned len;
	int wild;
	if (addr_parse(v, DEFAULT_PORT, &ss, &len, &wild) != 0 || wild ||
	    ((struct sockaddr_in *)&ss)->sin_port == 0)
		return fail(CMD, NULL, "--upstream: not ADDR[:PORT] or [ADDR6][:PORT] of a "
			    "server: %s", v);
	memset(u, 0, sizeof *u);
	memcpy(&u->addr, &ss, len);
	u->addr_len = len;
	char h[INET6_ADDRSTRLEN];
	unsigned port;
	if (ss.ss_family == AF_INET) {
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, h, sizeof h);
		port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		snprintf(u->text, sizeof u->text, "%s:%u", h, port);
	} else {
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, h, sizeof h);
		port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
		snprintf(u->text, sizeof u->text, "[%s]:%u", h, port);
	}
	return 0;
}

/* A prefix of --allow or --metrics-allow into @p list. @return 1 or EXIT_USAGE */
static int cidr_opt(const char *opt, const char *v, struct cidr *list, int *n, int max)
{
	if (*n == max)
		return fail(CMD, NULL, "%s: at most %d prefixes", opt, max);
	int e = cidr_parse(v, &list[*n]);
	if (e == -2)
		return fail(CMD, NULL, "%s: %s has bits set past its prefix length "
			    "(write the network's address)", opt, v);
	if (e != 0)
		return fail(CMD, NULL, "%s: not ADDR or ADDR/BITS (IPv4 or IPv6): %s", opt, v);
	(*n)++;
	return 1;
}

/* --tcp-source-prefix V4,V6: 0-32 and 0-128. @return 1 or EXIT_USAGE */
static int tcp_prefix_arg(struct serve_config *c, const char *v)
{
	unsigned a, b;
	int end = 0;
	if (v[0] < '0' || v[0] > '9' || sscanf(v, "%3u,%3u%n", &a, &b, &end) != 2 ||
	    v[end] != 0 || strchr(v, ' ') != NULL || strstr(v, ",-") || strstr(v, ",+"))
		return fail(CMD, NULL, "--tcp-source-prefix: not V4,V6 (e.g. 24,56): %s", v);
	if (a > 32 || b > 128)
		return fail(CMD, NULL, "--tcp-source-prefix: IPv4 0-32, IPv6 0-128, not %s", v);
	c->tcp_prefix4 = a;
	c->tcp_prefix6 = b;
	return 1;
}

/* ----------------------------------------------------------- handlers */

/* Each takes option @p o with value @p v if it is one of its group's.
 * @return 1 taken, 0 not its own, EXIT_USAGE (reported) */

static int opt_net(struct serve_config *c, int o, const char *v)
{
	unsigned long long x;
	switch (o) {
	case 'l': /* repeatable: each is one more address */
		if (c->nlisten == MAX_LISTEN)
			return fail(CMD, NULL, "--listen: at most %d addresses", MAX_LISTEN);
		struct sockaddr_storage ss;
		unsigned len;
		int wild;
		if (addr_parse(v, DEFAULT_PORT, &ss, &len, &wild) != 0)
			return fail(CMD, NULL, "--listen: not ADDR:PORT or [ADDR6]:PORT: %s", v);
		c->listen[c->nlisten++] = v;
		return 1;
	case 't':
		if (number(CMD, "--threads", v, MAX_THREADS, &x))
			return EXIT_USAGE;
		if (x == 0)
			return fail(CMD, NULL, "--threads: at least 1");
		c->threads = (int)x;
		return 1;
	case O_ALLOW:
		return cidr_opt("--allow", v, c->allow, &c->nallow, MAX_ALLOW);
	case O_METRICS_ALLOW:
		return cidr_opt("--metrics-allow", v, c->metrics_allow, &c->nmetrics_allow,
				MAX_METRICS_ALLOW);
	case O_TCP_MAX:
		if (number(CMD, "--tcp-max", v, MAX_TCP_MAX, &x))
			return EXIT_USAGE;
		if (x == 0)
			return fail(CMD, NULL, "--tcp-max: at least 1");
		c->tcp_max = (unsigned)x;
		return 1;
	case O_TCP_PER_SOURCE:
		if (number(CMD, "--tcp-per-source", v, MAX_TCP_MAX, &x))
			return EXIT_USAGE;
		c->tcp_per_source = (unsigned)x;
		return 1;
	case O_TCP_PREFIX:
		return tcp_prefix_arg(c, v);
	case O_USER:
		c->user = v;
		return 1;
	case O_METRICS:
		c->metrics = v;
		return 1;
	case O_CONTROL:
		if (v[0] == 0)
			return fail(CMD, NULL, "--control: a socket's path, not \"\"");
		c->control = v;
		return 1;
	default:
		return 0;
	}
}

static int opt_cache(struct serve_config *c, int o, const char *v)
{
	unsigned long long x;
	switch (o) {
	case 'n':
		if (time_arg(CMD, "--now", v, &c->fixed_now))
			return EXIT_USAGE;
		if (c->fixed_now == 0)
			return fail(CMD, NULL, "--now: the time 0 is not served "
				    "(1970-01-01T00:00:00Z)");
		return 1;
	case 'j':
		c->json = 1;
		return 1;
	case O_MAX_BYTES:
		return size_arg("--max-bytes", v, &c->max_bytes) ? EXIT_USAGE : 1;
	case O_SNAP_MAX:
		return size_arg("--snapshot-max-bytes", v, &c->snap_max_bytes) ? EXIT_USAGE : 1;
	case O_STALE:
		if (number(CMD, "--serve-stale", v, 604800, &x))
			return EXIT_USAGE;
		c->serve_stale = (uint32_t)x;
		return 1;
	case O_EVERY:
		if (number(CMD, "--snapshot-every", v, 86400 * 7, &x))
			return EXIT_USAGE;
		c->snapshot_every = (unsigned)x;
		return 1;
	case O_DEPLOY_WAIT:
		if (number(CMD, "--deploy-wait", v, 600, &x))
			return EXIT_USAGE;
		c->deploy_wait = (unsigned)x;
		return 1;
	case O_LOG_LEVEL:
		if (slog_level_arg(v) < 0)
			return fail(CMD, NULL, "--log-level: debug, info, warning or error, not %s",
				    v);
		return 1;
	default:
		return 0;
	}
}

static int opt_fwd(struct serve_config *c, int o, const char *v)
{
	dnsnap_fwd_opts_t *f = &c->fwd;
	switch (o) {
	case O_UPSTREAM: /* repeatable: tried in this order */
		if (f->nup == DNSNAP_FWD_MAX_UPSTREAMS)
			return fail(CMD, NULL, "--upstream: at most %d servers",
				    DNSNAP_FWD_MAX_UPSTREAMS);
		if (upstream_arg(v, &f->up[f->nup]))
			return EXIT_USAGE;
		f->nup++;
		return 1;
	case O_TIMEOUT: /* milliseconds */
		return number_in("--upstream-timeout", v, 10, 60000, &f->timeout_ms) ? EXIT_USAGE
										      : 1;
	case O_TRIES:
		return number_in("--upstream-tries", v, 1, 16, &f->tries) ? EXIT_USAGE : 1;
	case O_0X20:
		f->use_0x20 = 1;
		return 1;
	case O_OUTSTANDING:
		return number_in("--max-outstanding", v, 1, 65536, &f->max_outstanding)
		       ? EXIT_USAGE : 1;
	default:
		return 0;
	}
}

static const char *l2_auth_file; /* --l2-auth-file, read once the options are in */

static int opt_l2(struct serve_config *c, int o, const char *v)
{
	dnsnap_l2_opts_t *l = &c->l2;
	switch (o) {
	case O_L2:
		l->url = v;
		return 1;
	case O_L2_REPLICA:
		l->replica = v;
		return 1;
	case O_L2_PREFIX:
		if (l2_prefix_arg(CMD, v))
			return EXIT_USAGE;
		l->prefix = v;
		return 1;
	case O_L2_WAIT: /* milliseconds */
		return number_in("--l2-wait", v, 1, 1000, &l->wait_ms) ? EXIT_USAGE : 1;
	case O_L2_AUTH:
		l2_auth_file = v;
		return 1;
	case O_L2_QUEUE:
		return number_in("--l2-queue", v, 1, 1u << 24, &l->queue_max) ? EXIT_USAGE : 1;
	default:
		return 0;
	}
}

/* ------------------------------------------------------------- checks */

/* The first of @p opts (NULL-terminated; each also matches as a prefix:
 * --opt=V, and "--l2" every --l2-...) on the command line before the
 * operands, or NULL */
static const char *given(int argc, char **argv, const char *const *opts)
{
	for (int i = 1; i < optind && i < argc; i++)
		for (const char *const *o = opts; *o != NULL; o++)
			if (strncmp(argv[i], *o, strlen(*o)) == 0)
				return *o;
	return NULL;
}

/* What goes with what; the defaults that depend on other options. */
static int config_check(int argc, char **argv, struct serve_config *c)
{
	c->forwarding = c->fwd.nup > 0;
	if (c->forwarding && c->fixed_now != 0)
		return fail(CMD, NULL, "--now needs a server without --upstream (entries cached "
			    "at a fixed time would never expire)");
	static const char *const fwd_only[] = { "--serve-stale", "--snapshot-every",
						"--snapshot-max-bytes", "--deploy-wait",
						"--upstream-timeout",
						"--upstream-tries", "--upstream-0x20",
						"--max-outstanding", "--l2" /* every --l2-... */,
						NULL };
	static const char *const l2_only[] = { "--l2-replica", "--l2-prefix", "--l2-wait",
					       "--l2-auth-file", "--l2-queue", NULL };
	const char *o;
	if (!c->forwarding && (o = given(argc, argv, fwd_only)) != NULL)
		return fail(CMD, NULL, "%s needs --upstream (without it the server answers from "
			    "SNAP only)", o);
	if (c->l2.url == NULL && (o = given(argc, argv, l2_only)) != NULL)
		return fail(CMD, NULL, "%s needs --l2", o);
	if (c->l2.url != NULL) {
		char e[512];
		if (dnsnap_l2_url_check(c->l2.url, e, sizeof e) != 0 ||
		    (c->l2.replica != NULL && dnsnap_l2_url_check(c->l2.replica, e, sizeof e) != 0))
			return fail(CMD, NULL, "--l2: %s", e);
		if (l2_auth_opts(CMD, l2_auth_file, &c->l2, c->l2_user, sizeof c->l2_user,
				 c->l2_password, sizeof c->l2_password))
			return EXIT_USAGE;
	}
	if (c->nlisten == 0)
		c->listen[c->nlisten++] = DEFAULT_LISTEN;
	if (c->nallow == 0) { /* loopback only */
		cidr_parse("127.0.0.0/8", &c->allow[c->nallow++]);
		cidr_parse("::1/128", &c->allow[c->nallow++]);
	}
	if (c->nmetrics_allow == 0) { /* loopback only */
		cidr_parse("127.0.0.0/8", &c->metrics_allow[c->nmetrics_allow++]);
		cidr_parse("::1/128", &c->metrics_allow[c->nmetrics_allow++]);
	}
	if (c->metrics == NULL && (o = given(argc, argv, (const char *const[]){
					      "--metrics-allow", NULL })) != NULL)
		return fail(CMD, NULL, "--metrics-allow needs --metrics");
	return 0;
}

int config_parse(int argc, char **argv, struct serve_config *c)
{
	int o, r;
	l2_auth_file = NULL;
	while ((o = opt_next(CMD, argc, argv, "", longopts)) != -1) {
		if ((r = opt_net(c, o, optarg)) == 0 && (r = opt_cache(c, o, optarg)) == 0 &&
		    (r = opt_fwd(c, o, optarg)) == 0)
			r = opt_l2(c, o, optarg);
		if (r != 1)
			return EXIT_USAGE; /* reported; or OPT_ERROR, an unknown option */
	}
	if (opt_operands(CMD, argc, argv, 1, 1, "a snapshot") < 0)
		return EXIT_USAGE;
	c->path = argv[optind];
	return config_check(argc, argv, c);
}
