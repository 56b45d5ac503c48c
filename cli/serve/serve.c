/*
 * cli/serve/: `dnsnap serve`, the reference embedding of libdnsnap: a DNS
 * server that answers from the cache and its snapshot and, with --upstream,
 * a caching forwarder whose cache survives restarts and deploys. The
 * inspection commands stay in cli/; the server's networking lives here:
 * serve.c (this file: the command, its options, setup, the main thread and
 * the stop), serve_net.c (the UDP workers, the TCP thread, --allow),
 * serve_fwd.c (misses handed to the forwarder, its answers to the clients),
 * serve_snap.c (the snapshot mapped, published, taken in), server.h (what
 * they share), serve_reply.c (one message -> its reply, no sockets),
 * metrics.c (Prometheus text and JSON), log.c, notify.c (systemd). The
 * upstream side is the library's forwarder (<dnsnap/forward.h>).
 *
 * Threads:
 * - per listen address, N UDP workers, each with its own socket bound with
 *   SO_REUSEPORT to the address (the kernel spreads the clients over them).
 *   A worker takes up to BATCH datagrams with one recvmmsg(), answers them
 *   into its own buffers (allocated once: nothing is allocated per hit)
 *   and sends the replies with one sendmmsg(); a miss, with --upstream,
 *   becomes a waiter (the query and where to answer it) handed to the
 *   forwarder;
 * - one TCP thread: epoll over the listening sockets, the connections (at
 *   most TCP_MAX_CONNS; idle ones close after TCP_IDLE_MS) and an eventfd
 *   through which the forwarder hands back answers to TCP clients (queries
 *   on a connection may be answered out of order, RFC 7766);
 * - the forwarder's thread (dnsnap_fwd_start()): upstream queries; its
 *   done() hook (on_done(), serve_fwd.c) caches the upstream's answer and
 *   answers every waiter, its log() hook logs the upstreams' health;
 * - the metrics' HTTP thread (libmicrohttpd), with --metrics;
 * - the main thread: signals through a signalfd (blocked in every thread,
 *   so no handler runs) and a one-second tick: SIGHUP reopens SNAP; SIGUSR1
 *   prints the counters; SIGUSR2 and every --snapshot-every seconds publish
 *   SNAP (the in-memory entries merged with the file's live ones); the tick
 *   also takes in a SNAP another process published (a deploy's old
 *   process, at its exit); SIGTERM and SIGINT stop (stop(), below).
 *
 * Stopping without losing a query (the deploy of README.md): the UDP
 * sockets are connect()ed to a sink address, which takes them out of the
 * kernel's SO_REUSEPORT choice (a connected socket only matches datagrams
 * from its peer) while the datagrams already queued on them stay to be
 * read; the workers answer those and end when their sockets are empty; the
 * TCP listeners are closed (after accepting what waits in their backlog)
 * while open connections are served to the end of their queries; the
 * upstream queries in flight are waited for; then the final snapshot is
 * published and the process exits 0. Another process bound to the same
 * address meanwhile gets every new query.
 *
 * Counters are per thread (one writer each, relaxed atomics), summed when
 * read.
 */
#include "server.h"

#include <sys/random.h>

static const char *const CMD = "serve";

/* ------------------------------------------------------------- counters */

/* Fill @p st from every thread's counters, the forwarder, the cache and the
 * snapshot (any thread: the HTTP thread calls it). */
static void collect(void *arg, struct serve_stats *st)
{
	struct server *s = arg;
	memset(st, 0, sizeof *st);
	uint64_t t[C_N] = { 0 };
	for (int w = 0; w < s->nworkers + 3; w++) {
		struct tstat *c = w < s->nworkers ? &s->workers[w].cnt
				  : w == s->nworkers ? &s->tcp_cnt
				  : w == s->nworkers + 1 ? &s->fwd_cnt : &s->l2_cnt;
		for (int i = 0; i < C_N; i++)
			t[i] += atomic_load_explicit(&c->v[i], memory_order_relaxed);
		hist_sum(&st->answer_latency_cache, &c->lat_cache);
		hist_sum(&st->answer_latency_upstream, &c->lat_up);
		hist_sum(&st->answer_latency_l2, &c->lat_l2);
	}
	st->queries_udp = t[C_UDP];
	st->queries_tcp = t[C_TCP];
	st->hits_memory = t[C_HIT_MEM];
	st->hits_map = t[C_HIT_MAP];
	st->misses = t[C_MISS];
	st->stale = t[C_STALE];
	st->upstream_answers = t[C_UP_ANS];
	st->servfail_upstream = t[C_SERVFAIL_UP];
	st->refused_acl = t[C_REFUSED_ACL];
	st->truncated = t[C_TRUNC];
	for (int i = 0; i < RC_N; i++)
		st->rcode[i] = t[C_RC + i];
	for (int i = 0; i < DROP_N; i++)
		st->drops[i] = t[C_DROP + i];
	st->tcp_connections = t[C_CONNS];
	st->tcp_refused = t[C_CONN_REFUSED];
	st->tcp_idle_closed = t[C_CONN_IDLE];
	if (s->fwd != NULL) {
		st->forwarding = 1;
		dnsnap_fwd_stats(s->fwd, &st->fwd);
	}
	if (s->l2_out != NULL) {
		dnsnap_l2_stats_t ls;
		memset(&ls, 0, sizeof ls);
		pthread_rwlock_rdlock(&s->l2_lock);
		if (s->l2 != NULL)
			dnsnap_l2_stats(s->l2, &ls);
		else
			ls = s->l2_last; /* stopped: its last counters */
		pthread_rwlock_unlock(&s->l2_lock);
		struct l2_metrics *m = &st->l2;
		m->on = 1;
		st->hits_l2 = t[C_HIT_L2];
		m->hits = t[C_HIT_L2];
		m->bad = t[C_L2_BAD];
		m->misses = ls.misses + t[C_L2_EXPIRED];
		m->timeouts = ls.timeouts;
		m->errors = ls.errors;
		m->refused = ls.refused;
		m->writes = ls.writes;
		m->write_errors = ls.write_errors;
		m->write_drops = ls.write_drops;
		m->moved = ls.moved;
		m->ask = ls.ask;
		m->reconnects = ls.reconnects;
		m->queue_depth = ls.queue_depth;
		m->nodes = ls.nodes;
		m->breaker = ls.breaker;
	}
	dnsnap_cache_stats_t cs;
	dnsnap_cache_stats(s->cache, &cs);
	st->cache_entries = cs.entries;
	st->cache_bytes = cs.bytes;
	st->cache_max_bytes = s->max_bytes;
	st->cache_inserts = cs.inserts;
	st->cache_evictions = cs.evictions;
	pthread_mutex_lock(&s->snap_mu);
	if (s->snap != NULL) {
		dnsnap_snap_info_t in;
		dnsnap_snap_info(s->snap, &in);
		st->map_open = 1;
		st->map_entries = in.entry_count;
		st->map_created_at = in.created_at;
		st->map_damaged = dnsnap_snap_bad_entries(s->snap);
	}
	st->snapshot_writes = s->snap_writes;
	st->snapshot_write_errors = s->snap_write_errors;
	st->snapshot_last_at = s->snap_last_at;
	st->snapshot_last_seconds = s->snap_last_seconds;
	st->snapshot_last_entries = s->snap_last_entries;
	st->snapshot_longest_pause_ms = s->snap_longest_pause_ms;
	pthread_mutex_unlock(&s->snap_mu);
	st->now = (uint64_t)time(NULL);
	st->start_time = s->start_time;
}

/* SIGUSR1 and exit: a line on the log, or with --json a JSON object on
 * standard output, for a program to read while the log stays for people */
static void print_counters(struct server *s, const char *when)
{
	struct serve_stats *st = calloc(1, sizeof *st);
	if (st == NULL)
		return;
	collect(s, st);
	if (s->json) {
		char at[21];
		time_iso((uint32_t)time(NULL), at);
		jw_t j;
		jw_init(&j, stdout);
		jw_obj(&j);
		jw_kstr(&j, "event", when[0] ? "exit" : "counters");
		jw_kstr(&j, "time", at);
		jw_kstr(&j, "file", s->path);
		metrics_json(st, &j);
		pthread_mutex_lock(&s->snap_mu);
		jw_kbool(&j, "changed_in_place", s->snap != NULL && dnsnap_snap_changed(s->snap));
		pthread_mutex_unlock(&s->snap_mu);
		jw_end(&j);
		jw_nl(&j);
		fflush(stdout);
		free(st);
		return;
	}
	uint64_t drops = 0;
	for (int i = 0; i < DROP_N; i++)
		drops += st->drops[i];
	slog(LOG_INFO, "counters%s: queries %llu (udp %llu, tcp %llu), hits %llu (memory %llu, "
	     "map %llu, stale %llu), misses %llu, upstream answers %llu, upstream failures "
	     "%llu, refused %llu, formerr %llu, notimp %llu, badvers %llu, servfail %llu, "
	     "dropped %llu, truncated %llu; tcp connections %llu (refused %llu, closed idle "
	     "%llu); cache %llu %s, %llu bytes; snapshot: %llu %s, damaged entries %llu",
	     when, (unsigned long long)(st->queries_udp + st->queries_tcp),
	     (unsigned long long)st->queries_udp, (unsigned long long)st->queries_tcp,
	     (unsigned long long)(st->hits_memory + st->hits_map + st->stale),
	     (unsigned long long)st->hits_memory, (unsigned long long)st->hits_map,
	     (unsigned long long)st->stale, (unsigned long long)st->misses,
	     (unsigned long long)st->upstream_answers, (unsigned long long)st->servfail_upstream,
	     (unsigned long long)st->refused_acl, (unsigned long long)st->rcode[RC_FORMERR],
	     (unsigned long long)st->rcode[RC_NOTIMP], (unsigned long long)st->rcode[RC_BADVERS],
	     (unsigned long long)st->rcode[RC_SERVFAIL], (unsigned long long)drops,
	     (unsigned long long)st->truncated, (unsigned long long)st->tcp_connections,
	     (unsigned long long)st->tcp_refused, (unsigned long long)st->tcp_idle_closed,
	     (unsigned long long)st->cache_entries, plural(st->cache_entries, "entry", "entries"),
	     (unsigned long long)st->cache_bytes, (unsigned long long)st->map_entries,
	     plural(st->map_entries, "entry", "entries"), (unsigned long long)st->map_damaged);
	free(st);
}

/* ADDR:PORT, [ADDR6]:PORT, or an address alone (port 53). Port 0:
 * open_sockets() picks one (the same for UDP and TCP). @return 0 or -1 */
static int parse_addr(const char *arg, struct listener *l)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *port = NULL;
	size_t hl;
	if (arg[0] == '[') {
		const char *e = strchr(arg, ']');
		if (e == NULL || (e[1] != 0 && e[1] != ':'))
			return -1;
		hl = (size_t)(e - arg - 1);
		if (hl >= sizeof host)
			return -1;
		memcpy(host, arg + 1, hl);
		port = e[1] == ':' ? e + 2 : NULL;
	} else {
		const char *c = strrchr(arg, ':');
		if (c != NULL && strchr(arg, ':') != c) /* two colons: a bare IPv6 address */
			c = NULL;
		hl = c ? (size_t)(c - arg) : strlen(arg);
		if (hl >= sizeof host)
			return -1;
		memcpy(host, arg, hl);
		port = c ? c + 1 : NULL;
	}
	host[hl] = 0;
	unsigned long p = DEFAULT_PORT;
	if (port != NULL) {
		char *end;
		errno = 0;
		p = strtoul(port, &end, 10);
		if (errno || end == port || *end || p > 65535 || port[0] == '-' || port[0] == '+')
			return -1;
	}
	memset(l, 0, sizeof *l);
	struct sockaddr_in *a4 = (struct sockaddr_in *)&l->addr;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&l->addr;
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)p);
		l->addr_len = sizeof *a4;
		l->wildcard = a4->sin_addr.s_addr == htonl(INADDR_ANY);
	} else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)p);
		l->addr_len = sizeof *a6;
		l->wildcard = IN6_IS_ADDR_UNSPECIFIED(&a6->sin6_addr);
	} else {
		return -1;
	}
	l->tcp_fd = -1;
	return 0;
}

static uint16_t listener_port(const struct listener *l)
{
	const struct sockaddr_in *a4 = (const struct sockaddr_in *)&l->addr;
	const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)&l->addr;
	return ntohs(l->addr.ss_family == AF_INET ? a4->sin_port : a6->sin6_port);
}

static void listener_text(struct listener *l)
{
	char h[INET6_ADDRSTRLEN];
	const struct sockaddr_in *a4 = (const struct sockaddr_in *)&l->addr;
	const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)&l->addr;
	if (l->addr.ss_family == AF_INET) {
		inet_ntop(AF_INET, &a4->sin_addr, h, sizeof h);
		snprintf(l->text, sizeof l->text, "%s:%u", h, listener_port(l));
	} else {
		inet_ntop(AF_INET6, &a6->sin6_addr, h, sizeof h);
		snprintf(l->text, sizeof l->text, "[%s]:%u", h, listener_port(l));
	}
}

/*
 * A socket of @p type bound to l->addr; @p shared: with SO_REUSEPORT.
 * @return the descriptor, or -errno
 */
static int bind_socket(const struct listener *l, int type, int shared)
{
	int fd = socket(l->addr.ss_family, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	if (l->addr.ss_family == AF_INET6) /* [::] and 0.0.0.0 can both be listened on */
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	/* SO_REUSEPORT on both: a second process (the next one of a deploy) binds
	 * the same address while this one runs */
	if (shared)
		setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
	if (type == SOCK_STREAM) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	} else {
		if (l->wildcard && l->addr.ss_family == AF_INET)
			setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof one);
		if (l->wildcard && l->addr.ss_family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof one);
		struct timeval tv = { 0, RECV_TIMEOUT_MS * 1000 };
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
		int rcvbuf = 4 << 20; /* bursts; the kernel caps it at rmem_max */
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
	}
	if (bind(fd, (const struct sockaddr *)&l->addr, l->addr_len) != 0 ||
	    (type == SOCK_STREAM && listen(fd, 1024) != 0)) {
		int e = -errno;
		close(fd);
		return e;
	}
	if (type == SOCK_STREAM)
		fcntl(fd, F_SETFL, O_NONBLOCK);
	return fd;
}

/* Set the port of l->addr */
static void listener_set_port(struct listener *l, unsigned port)
{
	if (l->addr.ss_family == AF_INET)
		((struct sockaddr_in *)&l->addr)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)&l->addr)->sin6_port = htons(port);
}

/*
 * A port for "port 0", drawn below the kernel's ephemeral range
 * (net.ipv4.ip_local_port_range), from PICK_LOW up. Not the kernel's own
 * choice: Linux hands a port out of that range to a client socket that sets
 * SO_REUSEPORT (dig does) even when a socket of the same user, also with
 * SO_REUSEPORT, listens on it; a dig sent to such a port then gets its own
 * query back. Found in CI: one dig reply in some thousands was the query.
 * @return the port, or 0 (no room below the range: the kernel chooses)
 */
#define PICK_LOW 10000
static unsigned pick_port(void)
{
	unsigned lo = 32768;
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "re");
	if (f) {
		if (fscanf(f, "%u", &lo) != 1)
			lo = 32768;
		fclose(f);
	}
	if (lo <= PICK_LOW + 1000 || lo > 65536)
		return 0;
	unsigned r = 0;
	if (getrandom(&r, sizeof r, GRND_NONBLOCK) != sizeof r)
		r = (unsigned)getpid() * 2654435761u ^ (unsigned)time(NULL);
	return PICK_LOW + r % (lo - PICK_LOW);
}

/* Whether a socket of @p type can have l->addr to itself (no SO_REUSEPORT) */
static int port_alone(const struct listener *l, int type)
{
	int fd = bind_socket(l, type, 0);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/*
 * The TCP socket of each listener, then its UDP workers' sockets. Port 0:
 * a port of pick_port() that no socket has (TCP and UDP each bound once
 * alone first, so this server never joins another's SO_REUSEPORT group),
 * tried up to 64 times; the kernel's choice when pick_port() has no room.
 * @return 0 or EXIT_USAGE (reported)
 */
static int open_sockets(struct server *s)
{
	for (int i = 0; i < s->nls; i++) {
		struct listener *l = &s->ls[i];
		int any_port = listener_port(l) == 0;
		for (int attempt = 0;; attempt++) {
			unsigned want = any_port ? pick_port() : 0;
			if (want) {
				listener_set_port(l, want);
				if (!port_alone(l, SOCK_STREAM) || !port_alone(l, SOCK_DGRAM)) {
					if (attempt == 63) {
						listener_text(l);
						return fail(CMD, NULL, "%s: no free port in 64 tries",
							    l->text);
					}
					continue;
				}
			}
			int fd = bind_socket(l, SOCK_STREAM, 1);
			if (fd < 0) {
				if (any_port && fd == -EADDRINUSE && attempt < 63)
					continue;
				if (any_port)
					listener_set_port(l, 0);
				listener_text(l);
				return fail(CMD, NULL, "%s: TCP: %s", l->text, strerror(-fd));
			}
			if (any_port && !want) {
				socklen_t al = l->addr_len;
				getsockname(fd, (struct sockaddr *)&l->addr, &al);
			}
			listener_text(l);
			l->tcp_fd = fd;
			int err = 0, k;
			for (k = 0; k < s->nthreads; k++) {
				struct udp_worker *w = &s->workers[i * s->nthreads + k];
				w->fd = bind_socket(l, SOCK_DGRAM, 1);
				if (w->fd < 0) {
					err = -w->fd;
					break;
				}
			}
			if (err == 0)
				break;
			while (k-- > 0) {
				close(s->workers[i * s->nthreads + k].fd);
				s->workers[i * s->nthreads + k].fd = -1;
			}
			if (!any_port || err != EADDRINUSE || attempt >= 63)
				return fail(CMD, NULL, "%s: UDP: %s", l->text, strerror(err));
			close(fd);
			l->tcp_fd = -1;
			listener_set_port(l, 0);
		}
	}
	return 0;
}

/* ------------------------------------------------------------- options */

/* SIZE with an optional k, M, G (powers of 1024), as --max-bytes takes it */
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
	struct listener l;
	if (parse_addr(v, &l) != 0 || listener_port(&l) == 0 || l.wildcard)
		return fail(CMD, NULL, "--upstream: not ADDR[:PORT] or [ADDR6][:PORT] of a "
			    "server: %s", v);
	memset(u, 0, sizeof *u);
	memcpy(&u->addr, &l.addr, l.addr_len);
	u->addr_len = l.addr_len;
	listener_text(&l);
	snprintf(u->text, sizeof u->text, "%s", l.text);
	return 0;
}

/* --user: the account's groups, group and user, for good (setuid() as root
 * sets every user ID). Called once the sockets are bound. */
static int drop_privileges(const char *user)
{
	struct passwd *pw = getpwnam(user);
	if (pw == NULL)
		return fail(CMD, NULL, "--user: no such user: %s", user);
	if (initgroups(pw->pw_name, pw->pw_gid) != 0 || setgid(pw->pw_gid) != 0 ||
	    setuid(pw->pw_uid) != 0)
		return fail(CMD, NULL, "--user %s: %s", user, strerror(errno));
	if (pw->pw_uid != 0 && setuid(0) == 0)
		return fail(CMD, NULL, "--user %s: root could be regained", user);
	return 0;
}

/* Publishing writes a temporary beside SNAP's target and renames it: that
 * directory must be writable by the user we run as. */
static int check_snap_dir(const char *path)
{
	char target[4096];
	if (dnsnap_path_target(path, target, sizeof target) != 0)
		snprintf(target, sizeof target, "%s", path);
	char *dir = dirname(target);
	if (access(dir, W_OK | X_OK) != 0)
		return fail(CMD, path, "snapshots cannot be written: directory %s: %s", dir,
			    strerror(errno));
	/* publishing locks and merges the file there: it must be readable too */
	if (access(path, R_OK) != 0 && errno != ENOENT)
		return fail(CMD, path, "snapshots cannot be written: the file there cannot be "
			    "read (%s): give it to the server's user, or remove it",
			    strerror(errno));
	return 0;
}

/* Each in-flight upstream query holds a socket: raise the descriptor limit
 * to what the system allows. */
static void raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* ----------------------------------------------------------------- stop */

/*
 * Stop without losing a query (see the top of this file): UDP sockets
 * connected away and drained, TCP listeners closed and connections served
 * to the end, upstream queries in flight waited for (at most @p wait_ms).
 */
static void stop_taking(struct server *s, unsigned wait_ms)
{
	for (int i = 0; i < s->nworkers; i++) {
		struct udp_worker *w = &s->workers[i];
		struct sockaddr_storage sink;
		memset(&sink, 0, sizeof sink);
		socklen_t sl;
		if (w->l->addr.ss_family == AF_INET) {
			struct sockaddr_in *a = (struct sockaddr_in *)&sink;
			a->sin_family = AF_INET;
			a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			a->sin_port = htons(9); /* discard: no client asks from there */
			sl = sizeof *a;
		} else {
			struct sockaddr_in6 *a = (struct sockaddr_in6 *)&sink;
			a->sin6_family = AF_INET6;
			a->sin6_addr = in6addr_loopback;
			a->sin6_port = htons(9);
			sl = sizeof *a;
		}
		if (w->fd >= 0 && connect(w->fd, (struct sockaddr *)&sink, sl) != 0)
			slog(LOG_WARNING, "%s: UDP socket not taken out of the group: %s; queries "
			     "arriving while it closes may be lost", w->l->text, strerror(errno));
	}
	atomic_store(&s->draining, 1);
	atomic_store(&s->tcp_draining, 1);
	uint64_t one = 1;
	if (write(s->tcp_stop_fd, &one, sizeof one) < 0)
		slog(LOG_ERR, "eventfd: %s", strerror(errno));
	for (int i = 0; i < s->nworkers; i++)
		if (s->workers[i].started) {
			pthread_join(s->workers[i].th, NULL);
			s->workers[i].started = 0;
		}
	if (s->fwd != NULL && dnsnap_fwd_drain(s->fwd, wait_ms) != DNSNAP_OK)
		slog(LOG_WARNING, "upstream queries still in flight after %u ms: their clients "
		     "get SERVFAIL", wait_ms);
}

static int default_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (int)n;
}

/* The snapshot at start. Cache-only, it must be there. Forwarding, a
 * missing one is a cold start, and a damaged one too (logged: the next
 * publish replaces it); a file that is not a snapshot, or of a newer format,
 * stops the start (it would be replaced). @return 0 or EXIT_USAGE */
static int open_first(struct server *s, int forwarding, dnsnap_snap_t **snap, struct stat *st)
{
	*snap = NULL;
	memset(st, 0, sizeof *st);
	if (!forwarding) {
		if (open_snap(CMD, s->path, snap))
			return EXIT_USAGE;
		stat(s->path, st);
		return 0;
	}
	if (stat(s->path, st) != 0) {
		if (errno != ENOENT)
			return fail(CMD, s->path, "%s", strerror(errno));
		slog(LOG_INFO, "%s: no snapshot yet: a cold start", s->path);
		return 0;
	}
	dnsnap_diag_t d;
	int err = dnsnap_snap_open(s->path, snap, &d);
	if (err == DNSNAP_EMAGIC || err == DNSNAP_EVERSION)
		return fail(CMD, NULL, "%s (the server would replace it)", d.msg);
	if (err == -EACCES || err == -EPERM)
		return fail(CMD, NULL, "%s (the server must read and replace it)", d.msg);
	if (err != DNSNAP_OK) {
		slog(LOG_WARNING, "%s; a cold start (the next snapshot replaces it)", d.msg);
		*snap = NULL;
	}
	return 0;
}

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

int cmd_serve(int argc, char **argv)
{
	struct server *s = calloc(1, sizeof *s);
	struct tcp *t = calloc(1, sizeof *t);
	dnsnap_fwd_opts_t *fo = calloc(1, sizeof *fo);
	if (s == NULL || t == NULL || fo == NULL) {
		free(s);
		free(t);
		free(fo);
		return fail(CMD, NULL, "out of memory");
	}
	int rc = EXIT_USAGE;
	/* Signals go to the signalfd only: blocked before any thread starts (the
	 * forwarder's, the metrics' are started before the workers), so in
	 * every thread; the mask is put back at the end. */
	sigset_t sigs, prev;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGUSR1);
	sigaddset(&sigs, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &sigs, &prev);
	enum {
		O_UPSTREAM = 0x100, O_TIMEOUT, O_TRIES, O_0X20, O_OUTSTANDING, O_MAX_BYTES,
		O_STALE, O_ALLOW, O_USER, O_EVERY, O_SNAP_MAX, O_METRICS, O_LOG_LEVEL,
		O_L2, O_L2_REPLICA, O_L2_PREFIX, O_L2_WAIT, O_L2_AUTH, O_L2_QUEUE,
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
		{ NULL, 0, NULL, 0 },
	};
	unsigned long long threads = (unsigned long long)default_threads(), v;
	uint32_t now = 0;
	const char *listen_arg[MAX_LISTEN], *user = NULL, *metrics_arg = NULL;
	int nl = 0, c;
	dnsnap_l2_opts_t lo = { .wait_ms = DNSNAP_L2_DEFAULT_WAIT_MS,
				.queue_max = DNSNAP_L2_DEFAULT_QUEUE };
	const char *l2_auth = NULL;
	static char l2_user[256], l2_password[1024];
	fo->timeout_ms = 1000;
	fo->tries = 3;
	fo->max_outstanding = 2048;
	fo->max_waiters = 256;
	s->max_bytes = DEFAULT_MAX_BYTES;
	s->snapshot_every = DEFAULT_SNAPSHOT_EVERY;
	while ((c = opt_next(CMD, argc, argv, "", longopts)) != -1)
		switch (c) {
		case 'l': /* repeatable: each is one more address */
			if (nl == MAX_LISTEN) {
				fail(CMD, NULL, "--listen: at most %d addresses", MAX_LISTEN);
				goto out_free;
			}
			listen_arg[nl++] = optarg;
			break;
		case 't':
			if (number(CMD, "--threads", optarg, MAX_THREADS, &threads))
				goto out_free;
			if (threads == 0) {
				fail(CMD, NULL, "--threads: at least 1");
				goto out_free;
			}
			break;
		case 'n':
			if (time_arg(CMD, "--now", optarg, &now))
				goto out_free;
			if (now == 0) {
				fail(CMD, NULL, "--now: the time 0 is not served "
				     "(1970-01-01T00:00:00Z)");
				goto out_free;
			}
			break;
		case 'j':
			s->json = 1;
			break;
		case O_UPSTREAM: /* repeatable: tried in this order */
			if (fo->nup == DNSNAP_FWD_MAX_UPSTREAMS) {
				fail(CMD, NULL, "--upstream: at most %d servers",
				     DNSNAP_FWD_MAX_UPSTREAMS);
				goto out_free;
			}
			if (upstream_arg(optarg, &fo->up[fo->nup]))
				goto out_free;
			fo->nup++;
			break;
		case O_TIMEOUT: /* milliseconds */
			if (number_in("--upstream-timeout", optarg, 10, 60000, &fo->timeout_ms))
				goto out_free;
			break;
		case O_TRIES:
			if (number_in("--upstream-tries", optarg, 1, 16, &fo->tries))
				goto out_free;
			break;
		case O_0X20:
			fo->use_0x20 = 1;
			break;
		case O_OUTSTANDING:
			if (number_in("--max-outstanding", optarg, 1, 65536, &fo->max_outstanding))
				goto out_free;
			break;
		case O_MAX_BYTES:
			if (size_arg("--max-bytes", optarg, &s->max_bytes))
				goto out_free;
			if (s->max_bytes < (1u << 20)) { /* the index's tables alone take more */
				fail(CMD, NULL, "--max-bytes: at least 1M, not %s", optarg);
				goto out_free;
			}
			break;
		case O_STALE:
			if (number(CMD, "--serve-stale", optarg, 604800, &v))
				goto out_free;
			s->serve_stale = (uint32_t)v;
			break;
		case O_ALLOW:
			if (s->nallow == MAX_ALLOW) {
				fail(CMD, NULL, "--allow: at most %d prefixes", MAX_ALLOW);
				goto out_free;
			}
			int e = cidr_parse(optarg, &s->allow[s->nallow]);
			if (e == -2) {
				fail(CMD, NULL, "--allow: %s has bits set past its prefix length "
				     "(write the network's address)", optarg);
				goto out_free;
			}
			if (e != 0) {
				fail(CMD, NULL, "--allow: not ADDR or ADDR/BITS (IPv4 or IPv6): %s",
				     optarg);
				goto out_free;
			}
			s->nallow++;
			break;
		case O_USER:
			user = optarg;
			break;
		case O_SNAP_MAX:
			if (size_arg("--snapshot-max-bytes", optarg, &s->snap_max_bytes))
				goto out_free;
			if (s->snap_max_bytes < (1u << 20)) {
				fail(CMD, NULL, "--snapshot-max-bytes: at least 1M, not %s", optarg);
				goto out_free;
			}
			break;
		case O_EVERY:
			if (number(CMD, "--snapshot-every", optarg, 86400 * 7, &v))
				goto out_free;
			s->snapshot_every = (unsigned)v;
			break;
		case O_METRICS:
			metrics_arg = optarg;
			break;
		case O_L2:
			lo.url = optarg;
			break;
		case O_L2_REPLICA:
			lo.replica = optarg;
			break;
		case O_L2_PREFIX:
			if (l2_prefix_arg(CMD, optarg))
				goto out_free;
			lo.prefix = optarg;
			break;
		case O_L2_WAIT: /* milliseconds */
			if (number_in("--l2-wait", optarg, 1, 1000, &lo.wait_ms))
				goto out_free;
			break;
		case O_L2_AUTH:
			l2_auth = optarg;
			break;
		case O_L2_QUEUE:
			if (number_in("--l2-queue", optarg, 1, 1u << 24, &lo.queue_max))
				goto out_free;
			break;
		case O_LOG_LEVEL:
			if (slog_level_arg(optarg) < 0) {
				fail(CMD, NULL, "--log-level: debug, info, warning or error, not %s",
				     optarg);
				goto out_free;
			}
			break;
		default:
			goto out_free;
		}
	if (opt_operands(CMD, argc, argv, 1, 1, "a snapshot") < 0)
		goto out_free;
	s->path = argv[optind];
	int forwarding = fo->nup > 0;
	if (forwarding && now != 0) {
		fail(CMD, NULL, "--now needs a server without --upstream (entries cached at a "
		     "fixed time would never expire)");
		goto out_free;
	}
	if (!forwarding) {
		static const char *const fwd_only[] = { "--serve-stale", "--snapshot-every",
							"--snapshot-max-bytes",
							"--upstream-timeout", "--upstream-tries",
							"--upstream-0x20", "--max-outstanding",
							"--l2" /* and every --l2-... */, NULL };
		const char *o = given(argc, argv, fwd_only);
		if (o != NULL) {
			fail(CMD, NULL, "%s needs --upstream (without it the server answers from "
			     "SNAP only)", o);
			goto out_free;
		}
	}
	if (lo.url == NULL) {
		static const char *const l2_only[] = { "--l2-replica", "--l2-prefix", "--l2-wait",
						       "--l2-auth-file", "--l2-queue", NULL };
		const char *o = given(argc, argv, l2_only);
		if (o != NULL) {
			fail(CMD, NULL, "%s needs --l2", o);
			goto out_free;
		}
	} else {
		char e[512];
		if (dnsnap_l2_url_check(lo.url, e, sizeof e) != 0 ||
		    (lo.replica != NULL && dnsnap_l2_url_check(lo.replica, e, sizeof e) != 0)) {
			fail(CMD, NULL, "--l2: %s", e);
			goto out_free;
		}
		if (l2_auth_opts(CMD, l2_auth, &lo, l2_user, sizeof l2_user, l2_password,
				 sizeof l2_password))
			goto out_free;
	}
	if (nl == 0)
		listen_arg[nl++] = DEFAULT_LISTEN;
	for (int i = 0; i < nl; i++)
		if (parse_addr(listen_arg[i], &s->ls[i]) != 0) {
			fail(CMD, NULL, "--listen: not ADDR:PORT or [ADDR6]:PORT: %s", listen_arg[i]);
			goto out_free;
		}
	if (s->nallow == 0) { /* loopback only */
		cidr_parse("127.0.0.0/8", &s->allow[s->nallow++]);
		cidr_parse("::1/128", &s->allow[s->nallow++]);
	}
	s->nls = nl;
	s->nthreads = (int)threads;
	s->fixed_now = (uint32_t)now;
	s->tcp_stop_fd = s->tcp_done_fd = -1;
	s->tcp_done_tail = &s->tcp_done;
	s->start_time = (uint64_t)time(NULL);
	pthread_mutex_init(&s->tcp_mu, NULL);
	pthread_mutex_init(&s->snap_mu, NULL);
	pthread_rwlock_init(&s->l2_lock, NULL);
	t->s = s;
	t->ep = -1;

	dnsnap_snap_t *snap = NULL;
	struct stat snap_st;
	if (open_first(s, forwarding, &snap, &snap_st))
		goto out_free;
	dnsnap_cache_opts_t co;
	dnsnap_cache_opts_default(&co);
	co.max_bytes = s->max_bytes;
	int err = dnsnap_cache_new(&co, &s->cache);
	if (err != DNSNAP_OK) {
		fail(CMD, NULL, "%s", dnsnap_strerror(err));
		dnsnap_snap_close(snap);
		goto out_free;
	}
	snap_swap(s, snap, snap ? &snap_st : NULL);

	s->nworkers = s->nls * s->nthreads;
	s->workers = calloc((size_t)s->nworkers, sizeof *s->workers);
	if (s->workers == NULL) {
		fail(CMD, NULL, "out of memory");
		goto out_cache;
	}
	for (int i = 0; i < s->nworkers; i++) {
		s->workers[i].fd = -1;
		s->workers[i].s = s;
		s->workers[i].l = &s->ls[i / s->nthreads];
	}
	if (open_sockets(s))
		goto out_sockets;
	if (metrics_arg != NULL) {
		char e[256];
		if (metrics_http_start(metrics_arg, collect, s, &s->metrics, e, sizeof e) != 0) {
			fail(CMD, NULL, "--metrics: %s", e);
			goto out_sockets;
		}
	}
	if (user != NULL && drop_privileges(user))
		goto out_sockets;
	if (forwarding) {
		if (check_snap_dir(s->path))
			goto out_sockets;
		raise_nofile();
		if (forwarder_start(s, fo))
			goto out_sockets;
	}
	if (lo.url != NULL && l2_start(s, &lo) != 0)
		goto out_sockets;
	s->tcp_stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->tcp_done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	t->ep = epoll_create1(EPOLL_CLOEXEC);
	if (s->tcp_stop_fd < 0 || s->tcp_done_fd < 0 || t->ep < 0) {
		fail(CMD, NULL, "eventfd, epoll: %s", strerror(errno));
		goto out_sockets;
	}

	int sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	if (sfd < 0) {
		fail(CMD, NULL, "signalfd: %s", strerror(errno));
		goto out_sockets;
	}

	pthread_t tcp_th;
	int tcp_started = pthread_create(&tcp_th, NULL, tcp_main, t) == 0;
	int started = tcp_started;
	for (int i = 0; i < s->nworkers && started; i++) {
		struct udp_worker *w = &s->workers[i];
		w->started = pthread_create(&w->th, NULL, udp_main, w) == 0;
		started = w->started;
	}
	if (!started) {
		fail(CMD, NULL, "cannot start the threads");
	} else {
		if (s->snap != NULL) {
			dnsnap_snap_info_t in;
			dnsnap_snap_info(s->snap, &in);
			slog(LOG_INFO, "%s: %llu %s, digest %016llx", s->path,
			     (unsigned long long)in.entry_count,
			     plural(in.entry_count, "entry", "entries"),
			     (unsigned long long)in.digest);
		}
		for (int i = 0; i < s->nls; i++)
			slog(LOG_INFO, "listening on %s (UDP: %d %s; TCP)", s->ls[i].text,
			     s->nthreads, plural((uint64_t)s->nthreads, "thread", "threads"));
		for (int i = 0; i < fo->nup; i++)
			slog(LOG_INFO, "upstream %d: %s", i + 1, fo->up[i].text);
		const char *tag = lo.prefix ? strchr(lo.prefix, '{') : NULL;
		const char *tag_end = tag ? strchr(tag, '}') : NULL;
		if (s->l2 != NULL && tag_end != NULL && tag_end > tag + 1 &&
		    strncmp(lo.url, "redis-cluster:", 14) == 0)
			slog(LOG_WARNING, "--l2-prefix %s holds a hash tag: every key goes to one "
			     "slot, on one master of the cluster", lo.prefix);
		if (s->l2 != NULL)
			slog(LOG_INFO, "second level: %s%s%s, prefix \"%s\", wait %u ms%s", lo.url,
			     lo.replica ? ", reads from " : "", lo.replica ? lo.replica : "",
			     lo.prefix ? lo.prefix : DNSNAP_L2_DEFAULT_PREFIX, lo.wait_ms,
			     lo.password ? ", AUTH" : "");
		if (s->metrics != NULL)
			slog(LOG_INFO, "metrics on port %d (--metrics %s): GET /metrics",
			     metrics_http_port(s->metrics), metrics_arg);
		if (s->fixed_now) {
			char iso[21];
			time_iso(s->fixed_now, iso);
			slog(LOG_INFO, "the clock is fixed at %s (%u, --now)", iso, s->fixed_now);
		}
		slog(LOG_INFO, "ready: answering%s", forwarding ? " (misses go upstream)"
			     : " from the snapshot only (misses are REFUSED)");
		notify_systemd("READY=1");
		if (s->snap != NULL)
			snap_warn(s, s->snap, server_now(s));
		rc = 0;
		int warned = 0;
		int64_t last_publish = mono_ms();
		for (;;) {
			struct pollfd pf = { .fd = sfd, .events = POLLIN };
			int pr = poll(&pf, 1, 1000);
			if (pr == 0 || (pr < 0 && errno == EINTR)) {
				/* the tick: the mapped file changed in place? replaced? */
				pthread_mutex_lock(&s->snap_mu);
				int changed = s->snap != NULL && dnsnap_snap_changed(s->snap);
				pthread_mutex_unlock(&s->snap_mu);
				if (!warned && changed) {
					warned = 1;
					slog(LOG_WARNING, "%s: the snapshot file changed in place "
					     "(truncated or overwritten) under the map: its answers are "
					     "misses from now on; publish snapshots by rename, then send "
					     "SIGHUP", s->path);
				}
				if (forwarding) {
					watch(s);
					if (s->snapshot_every &&
					    mono_ms() - last_publish >= 1000ll * s->snapshot_every) {
						publish(s, "every --snapshot-every");
						last_publish = mono_ms();
					}
				}
				continue;
			}
			struct signalfd_siginfo si;
			ssize_t n = read(sfd, &si, sizeof si);
			if (n != (ssize_t)sizeof si) {
				if (n < 0 && errno == EINTR)
					continue;
				slog(LOG_ERR, "signalfd: %s", n < 0 ? strerror(errno) : "short read");
				rc = EXIT_USAGE;
				break;
			}
			if (si.ssi_signo == SIGHUP) {
				reload(s, "reloaded");
				warned = 0;
			} else if (si.ssi_signo == SIGUSR1) {
				print_counters(s, "");
			} else if (si.ssi_signo == SIGUSR2) {
				if (forwarding) {
					publish(s, "SIGUSR2");
					last_publish = mono_ms();
				} else {
					slog(LOG_INFO, "SIGUSR2: nothing to publish: the server answers "
					     "from %s only", s->path);
				}
			} else {
				slog(LOG_INFO, "%s: stopping", strsignal((int)si.ssi_signo));
				break;
			}
		}
	}

	notify_systemd("STOPPING=1");
	/* Publish while still answering (a plain restart is down only from the
	 * hand-over on), then hand the address over, then publish what came in
	 * meanwhile, if anything did. */
	if (rc == 0 && forwarding && publish(s, "stopping") != 0)
		rc = EXIT_USAGE;
	stop_taking(s, fo->timeout_ms * fo->tries + 1000);
	if (s->l2 != NULL) {
		/* the GETs still waiting go upstream, the writes queued get a second */
		l2_stop(s, 1000);
		if (s->fwd != NULL)
			dnsnap_fwd_drain(s->fwd, fo->timeout_ms * fo->tries + 1000);
	}
	atomic_store(&s->stop, 1);
	uint64_t one = 1;
	if (write(s->tcp_stop_fd, &one, sizeof one) < 0)
		slog(LOG_ERR, "eventfd: %s", strerror(errno));
	dnsnap_fwd_free(s->fwd); /* what is still in flight ends with DNSNAP_FWD_STOPPED */
	s->fwd = NULL;
	if (tcp_started)
		pthread_join(tcp_th, NULL);
	if (rc == 0 && forwarding && publish(s, "exit") != 0)
		rc = EXIT_USAGE;
	if (rc == 0 || forwarding)
		print_counters(s, " at exit");
	close(sfd);
out_sockets:
	metrics_http_stop(s->metrics);
	l2_stop(s, 0);
	dnsnap_fwd_free(s->fwd);
	if (t->ep >= 0)
		close(t->ep);
	if (s->tcp_stop_fd >= 0)
		close(s->tcp_stop_fd);
	if (s->tcp_done_fd >= 0)
		close(s->tcp_done_fd);
	for (struct tcp_done *d = s->tcp_done, *next; d != NULL; d = next) {
		next = d->next;
		free(d);
	}
	for (int i = 0; i < s->nls; i++)
		if (s->ls[i].tcp_fd >= 0)
			close(s->ls[i].tcp_fd);
	for (int i = 0; s->workers != NULL && i < s->nworkers; i++)
		if (s->workers[i].fd >= 0)
			close(s->workers[i].fd);
	free(s->workers);
	free(s->enc);
	free(s->fwd_out);
	free(s->l2_out);
	free(s->l2_val);
out_cache:
	snap_swap(s, NULL, NULL);
	dnsnap_cache_free(s->cache);
out_free:
	pthread_sigmask(SIG_SETMASK, &prev, NULL);
	explicit_bzero(l2_password, sizeof l2_password);
	free(fo);
	free(t);
	free(s);
	return rc;
}
