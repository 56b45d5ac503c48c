/*
 * serve_config.h: every option of `dnsnap serve`, with its default, in one
 * struct: config_parse() fills it from the command line (and checks it),
 * the server only reads it. The library's own option structs (the
 * forwarder's, the Redis client's) are members, filled here, handed over as
 * they are.
 */
#ifndef DNSNAP_SERVE_CONFIG_H
#define DNSNAP_SERVE_CONFIG_H

#include <stdint.h>

#include "forward.h"
#include "l2.h"

/* Port 53: a server clients are pointed at. Never 5353, mDNS's port, where
 * Avahi and systemd-resolved listen and multicast answers would meet ours. */
#define DEFAULT_LISTEN "127.0.0.1:53"
#define DEFAULT_PORT 53
#define MAX_LISTEN 16
#define MAX_THREADS 64
#define MAX_ALLOW 64
#define DEFAULT_MAX_BYTES (512ull << 20)
#define DEFAULT_SNAPSHOT_EVERY 300
#define DEFAULT_UPSTREAM_TIMEOUT_MS 1000
#define DEFAULT_UPSTREAM_TRIES 3
#define DEFAULT_MAX_OUTSTANDING 2048
#define DEFAULT_MAX_WAITERS 256
#define DEFAULT_DEPLOY_WAIT 10
#define DEFAULT_TCP_MAX 128            /* TCP connections open at once */
#define DEFAULT_TCP_PER_SOURCE 16      /* of them, from one source (0: no limit) */
#define MAX_TCP_MAX 65536
#define MAX_METRICS_ALLOW 64

/* --allow: a source prefix */
struct cidr {
	int family;
	uint8_t addr[16];
	unsigned bits;
};

struct serve_config {
	const char *path;                 /* SNAP */
	const char *listen[MAX_LISTEN];   /* --listen, as given (DEFAULT_LISTEN when none) */
	int nlisten;
	int threads;                      /* UDP workers per address (the CPUs, at most 64) */
	struct cidr allow[MAX_ALLOW];     /* --allow (loopback when none) */
	int nallow;
	const char *user;                 /* --user, NULL: stay who we are */
	uint64_t max_bytes;               /* the memory cache's limit */
	uint64_t snap_max_bytes;          /* a publish's (0: max_bytes) */
	uint32_t serve_stale;             /* seconds, 0: off */
	unsigned snapshot_every;          /* seconds, 0: at exit only */
	unsigned tcp_max;                 /* --tcp-max: TCP connections open at once */
	unsigned tcp_per_source;          /* --tcp-per-source: of them from one source, 0: any */
	unsigned tcp_prefix4, tcp_prefix6; /* --tcp-source-prefix: what one source is */
	const char *metrics;              /* --metrics ADDR:PORT, NULL: none */
	struct cidr metrics_allow[MAX_METRICS_ALLOW]; /* --metrics-allow (loopback when none) */
	int nmetrics_allow;
	const char *control;              /* --control PATH, NULL: beside SNAP */
	unsigned deploy_wait;             /* --deploy-wait seconds: the servers of SNAP
					   * asked to publish before this one starts */
	uint32_t fixed_now;               /* --now, 0: the clock */
	int json;                         /* --json: the counters as JSON on stdout */
	int forwarding;                   /* --upstream given */
	dnsnap_fwd_opts_t fwd;            /* the upstreams and the forwarder's bounds */
	dnsnap_l2_opts_t l2;              /* l2.url NULL: no second level */
	char l2_user[256], l2_password[1024]; /* AUTH (l2.user, l2.password point here) */
};

/** The defaults, as the man page gives them. */
void config_defaults(struct serve_config *c);

/**
 * Fill @p c (from config_defaults()) from `dnsnap serve`'s arguments, and
 * check that they go together (what needs --upstream, what needs --l2).
 * @return 0, or EXIT_USAGE (reported)
 */
int config_parse(int argc, char **argv, struct serve_config *c);

/** Forget the secrets (the Redis password) once they are no longer needed. */
void config_wipe(struct serve_config *c);

/* The parsers of the options' values that the rest of serve uses too */

/** ADDR:PORT, [ADDR6]:PORT, or an address alone (port @p port) into @p ss.
 * @return 0 or -1 */
struct sockaddr_storage;
int addr_parse(const char *arg, unsigned port, struct sockaddr_storage *ss,
	       unsigned *len, int *wildcard);

/** ADDR or ADDR/BITS. @return 0, -1 not one, -2 bits set past its length */
int cidr_parse(const char *arg, struct cidr *c);

#endif
