/*
 * server.h: the server of `dnsnap serve`, one member per side: its options
 * (serve_config.h), the sockets and the TCP queue (serve_net.h), the
 * forwarder and its waiters (serve_fwd.h), the Redis tier (serve_l2.h), the
 * snapshot (serve_snap.h); the counters are serve_stats.h's. The threads and
 * the stop are described at the top of serve.c.
 */
#ifndef DNSNAP_SERVE_SERVER_H
#define DNSNAP_SERVE_SERVER_H

#include <stdint.h>
#include <time.h>

#include "dnsnap.h"
#include "serve_config.h"
#include "serve_ctl.h"
#include "serve_fwd.h"
#include "serve_l2.h"
#include "serve_net.h"
#include "serve_snap.h"
#include "serve_stats.h"

struct metrics_http;

struct server {
	const struct serve_config *cfg;
	const char *path;        /* cfg->path: SNAP */
	dnsnap_cache_t *cache;
	uint64_t start_time;     /* Unix seconds */
	struct net_side net;
	struct fwd_side fwd;
	struct l2_side l2;
	struct snap_side snap;
	struct ctl_side ctl;
	struct metrics_http *metrics;
};

static inline uint32_t server_now(const struct server *s)
{
	return s->cfg->fixed_now ? s->cfg->fixed_now : (uint32_t)time(NULL);
}

#endif
