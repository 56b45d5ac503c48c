/*
 * cli/serve/: `dnsnap serve`, the reference embedding of libdnsnap: a DNS
 * server that answers from the cache and its snapshot and, with --upstream,
 * a caching forwarder whose cache survives restarts and deploys. The
 * inspection commands stay in cli/; this folder is the daemon, built from
 * the library's parts (the cache and its snapshots, <dnsnap/forward.h>'s
 * upstream client, <dnsnap/l2.h>'s Redis client) and nothing else of it:
 * serve.c (this file: the command, its start, the main thread, the stop),
 * serve_config.c (the options, into one struct with their defaults),
 * serve_sock.c (the addresses bound, the threads started, the hand-over),
 * serve_net.c (the UDP workers, the TCP thread, --allow), serve_fwd.c
 * (misses handed to the forwarder, its answers to the clients), serve_l2.c
 * (the Redis tier), serve_miss.c (an upstream answer taken in), serve_snap.c
 * (the snapshot mapped, published, taken in), serve_stats.c (the counters),
 * serve_reply.c (one message -> its reply, no sockets), metrics.c
 * (Prometheus text and JSON), log.c, notify.c (systemd); server.h and a
 * header per side say what they share.
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
 *   most --tcp-max, --tcp-per-source of them from one source; idle ones
 *   close after tcp_idle_limit(), the one idle longest when a new one needs
 *   its slot) and an eventfd
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
#include <errno.h>
#include <grp.h>
#include <libgen.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "log.h"
#include "metrics.h"
#include "notify.h"
#include "server.h"

static const char CMD[] = "serve";

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

/* SNAP through a link planted in a sticky directory others may write, or in
 * a directory anyone may write (dnsnap_path_target()'s -EPERM): refused at
 * start, before it is mapped or anything is published there. */
static int path_refused(const char *path)
{
	char target[4096], why[8400];
	int e = dnsnap_path_target(path, target, sizeof target);
	if (e != -EPERM)
		return 0;
	return fail(CMD, path, "%s", dnsnap_path_strerror(path, e, why, sizeof why));
}

/* Publishing writes a temporary beside SNAP's target and renames it: that
 * directory must be writable by the user we run as. */
static int check_snap_dir(const char *path)
{
	char target[4096], why[8400];
	int e = dnsnap_path_target(path, target, sizeof target);
	if (e == -EPERM) /* a planted link, a directory anyone may write: refused at start */
		return fail(CMD, path, "snapshots cannot be written: %s",
			    dnsnap_path_strerror(path, e, why, sizeof why));
	if (e != 0)
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

/* What the start says in the log once it answers. */
static void log_ready(struct server *s)
{
	const struct serve_config *c = s->cfg;
	if (s->snap.map != NULL) {
		dnsnap_snap_info_t in;
		dnsnap_snap_info(s->snap.map, &in);
		slog(LOG_INFO, "%s: %llu %s, digest %016llx", s->path,
		     (unsigned long long)in.entry_count, plural(in.entry_count, "entry", "entries"),
		     (unsigned long long)in.digest);
	}
	for (int i = 0; i < s->net.nls; i++)
		slog(LOG_INFO, "listening on %s (UDP: %d %s; TCP)", s->net.ls[i].text, c->threads,
		     plural((uint64_t)c->threads, "thread", "threads"));
	for (int i = 0; i < c->fwd.nup; i++)
		slog(LOG_INFO, "upstream %d: %s", i + 1, c->fwd.up[i].text);
	const char *tag = c->l2.prefix ? strchr(c->l2.prefix, '{') : NULL;
	const char *tag_end = tag ? strchr(tag, '}') : NULL;
	if (s->l2.c != NULL && tag_end != NULL && tag_end > tag + 1 &&
	    strncmp(c->l2.url, "redis-cluster:", 14) == 0)
		slog(LOG_WARNING, "--l2-prefix %s holds a hash tag: every key goes to one slot, on "
		     "one master of the cluster", c->l2.prefix);
	if (s->l2.c != NULL)
		slog(LOG_INFO, "second level: %s%s%s, prefix \"%s\", wait %u ms%s", c->l2.url,
		     c->l2.replica ? ", reads from " : "", c->l2.replica ? c->l2.replica : "",
		     c->l2.prefix ? c->l2.prefix : DNSNAP_L2_DEFAULT_PREFIX, c->l2.wait_ms,
		     c->l2.password ? ", AUTH" : "");
	if (s->metrics != NULL)
		slog(LOG_INFO, "metrics on port %d (--metrics %s): GET /metrics",
		     metrics_http_port(s->metrics), c->metrics);
	if (c->fixed_now) {
		char iso[21];
		time_iso(c->fixed_now, iso);
		slog(LOG_INFO, "the clock is fixed at %s (%u, --now)", iso, c->fixed_now);
	}
	slog(LOG_INFO, "ready: answering%s", c->forwarding ? " (misses go upstream)"
		     : " from the snapshot only (misses are REFUSED)");
}

/* Everything up to answering: the snapshot, the cache, the sockets, the
 * metrics, the user, the forwarder, the Redis client, the threads. What was
 * made before a failure is undone by server_stop(). @return 0 or EXIT_USAGE */
static int server_start(struct server *s)
{
	const struct serve_config *c = s->cfg;
	s->path = c->path;
	s->start_time = (uint64_t)time(NULL);
	pthread_mutex_init(&s->snap.mu, NULL);
	pthread_rwlock_init(&s->l2.lock, NULL);
	s->net.tcp_stop_fd = s->net.tcp_done_fd = -1;
	dnsnap_cache_opts_t co;
	dnsnap_cache_opts_default(&co);
	co.max_bytes = c->max_bytes;
	int err = dnsnap_cache_new(&co, &s->cache);
	if (err != DNSNAP_OK)
		return fail(CMD, NULL, "%s", dnsnap_strerror(err));
	s->ctl.fd = s->ctl.extra_fd = s->ctl.job_fd = s->ctl.done_fd = -1;
	/* a deploy: the servers of SNAP asked to publish what they learned since
	 * their last publish, before this one maps the file and answers */
	if (c->forwarding)
		control_ask_publish(s, c->deploy_wait);
	if (path_refused(s->path) || snap_first(s) || net_open(s))
		return EXIT_USAGE;
	if (c->metrics != NULL) {
		char e[256];
		if (metrics_http_start(c->metrics, collect, metrics_allowed, s, &s->metrics, e,
				       sizeof e) != 0)
			return fail(CMD, NULL, "--metrics: %s", e);
	}
	if (c->user != NULL && drop_privileges(c->user))
		return EXIT_USAGE;
	if (c->forwarding) {
		if (check_snap_dir(s->path))
			return EXIT_USAGE;
		raise_nofile();
		if (forwarder_start(s, &c->fwd))
			return EXIT_USAGE;
	}
	if (c->l2.url != NULL && l2_start(s, &c->l2) != 0)
		return EXIT_USAGE;
	if (control_open(s))
		return EXIT_USAGE;
	return net_start(s);
}

/* The tick, once a second: the mapped file changed in place, or replaced by
 * another process; the periodic publish. */
static void tick(struct server *s, int *warned, int64_t *last_publish)
{
	pthread_mutex_lock(&s->snap.mu);
	int changed = s->snap.map != NULL && dnsnap_snap_changed(s->snap.map);
	pthread_mutex_unlock(&s->snap.mu);
	if (!*warned && changed) {
		*warned = 1;
		slog(LOG_WARNING, "%s: the snapshot file changed in place (truncated or "
		     "overwritten) under the map: its answers are misses from now on; publish "
		     "snapshots by rename, then send SIGHUP", s->path);
	}
	if (!s->cfg->forwarding)
		return;
	watch(s);
	unsigned every = s->cfg->snapshot_every;
	if (every && mono_ms() - *last_publish >= 1000ll * every) {
		publish(s, "every --snapshot-every");
		*last_publish = mono_ms();
	}
}

/* The main thread, until SIGTERM or SIGINT: signals and the tick.
 * @return 0, or EXIT_USAGE (the signalfd failed) */
static int server_run(struct server *s, int sfd)
{
	int warned = 0;
	int64_t last_publish = mono_ms(), last_tick = mono_ms();
	for (;;) {
		struct pollfd pf[2] = { { .fd = sfd, .events = POLLIN },
					{ .fd = s->ctl.job_fd, .events = POLLIN } };
		int64_t wait = 1000 - (mono_ms() - last_tick);
		int pr = poll(pf, 2, wait > 0 ? (int)wait : 0);
		if (mono_ms() - last_tick >= 1000) { /* whatever else comes meanwhile */
			tick(s, &warned, &last_publish);
			last_tick = mono_ms();
		}
		if (pr <= 0)
			continue;
		if (pf[1].revents & POLLIN) /* publish, flush, reload (dnsnap control) */
			control_run_jobs(s);
		if (!(pf[0].revents & POLLIN))
			continue;
		struct signalfd_siginfo si;
		ssize_t n = read(sfd, &si, sizeof si);
		if (n != (ssize_t)sizeof si) {
			if (n < 0 && errno == EINTR)
				continue;
			slog(LOG_ERR, "signalfd: %s", n < 0 ? strerror(errno) : "short read");
			return EXIT_USAGE;
		}
		if (si.ssi_signo == SIGHUP) {
			reload(s, "reloaded");
			warned = 0;
		} else if (si.ssi_signo == SIGUSR1) {
			print_counters(s, "");
		} else if (si.ssi_signo == SIGUSR2 && s->cfg->forwarding) {
			publish(s, "SIGUSR2");
			last_publish = mono_ms();
		} else if (si.ssi_signo == SIGUSR2) {
			slog(LOG_INFO, "SIGUSR2: nothing to publish: the server answers from %s only",
			     s->path);
		} else {
			slog(LOG_INFO, "%s: stopping", strsignal((int)si.ssi_signo));
			return 0;
		}
	}
}

/* The stop (the top of this file): publish while still answering (a plain
 * restart is down only from the hand-over on), hand the addresses over,
 * send the Redis tier's waiting GETs upstream, wait for the upstream
 * queries, publish what came in meanwhile. @p rc: how the run ended; then
 * everything is freed, whatever of it was made. @return the exit status */
static int server_stop(struct server *s, int rc, int started)
{
	const struct serve_config *c = s->cfg;
	unsigned up_ms = c->fwd.timeout_ms * c->fwd.tries + 1000;
	notify_systemd("STOPPING=1");
	control_stopping(s); /* what is asked from now on: "stopping", exit 2 */
	if (started && rc == 0 && c->forwarding && publish(s, "stopping") != 0)
		rc = EXIT_USAGE;
	if (started)
		net_hand_over(s);
	l2_stop(s, started ? 1000 : 0); /* the GETs still waiting go upstream */
	forwarder_stop(s, started ? up_ms : 0);
	net_stop(s);
	if (started && rc == 0 && c->forwarding && publish(s, "exit") != 0)
		rc = EXIT_USAGE;
	if (started && (rc == 0 || c->forwarding))
		print_counters(s, " at exit");
	metrics_http_stop(s->metrics);
	control_close(s);
	net_close(s);
	l2_free(s);
	snap_swap(s, NULL, NULL);
	dnsnap_cache_free(s->cache);
	return rc;
}

int cmd_serve(int argc, char **argv)
{
	struct serve_config *cfg = malloc(sizeof *cfg);
	struct server *s = calloc(1, sizeof *s);
	if (cfg == NULL || s == NULL) {
		free(cfg);
		free(s);
		return fail(CMD, NULL, "out of memory");
	}
	config_defaults(cfg);
	int rc = config_parse(argc, argv, cfg);
	s->cfg = cfg;
	/* Signals go to the signalfd only: blocked before any thread starts, so
	 * in every thread; the mask is put back at the end. */
	sigset_t sigs, prev;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGUSR1);
	sigaddset(&sigs, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &sigs, &prev);
	int sfd = -1, started = 0;
	if (rc == 0 && (rc = server_start(s)) == 0) {
		started = 1;
		if ((sfd = signalfd(-1, &sigs, SFD_CLOEXEC)) < 0)
			rc = fail(CMD, NULL, "signalfd: %s", strerror(errno));
	}
	if (started && rc == 0) {
		log_ready(s);
		notify_systemd("READY=1");
		if (s->snap.map != NULL)
			snap_warn(s, s->snap.map, server_now(s));
		rc = server_run(s, sfd);
	}
	if (s->cache != NULL)
		rc = server_stop(s, rc, started);
	if (sfd >= 0)
		close(sfd);
	pthread_sigmask(SIG_SETMASK, &prev, NULL);
	config_wipe(cfg);
	free(cfg);
	free(s);
	return rc;
}
