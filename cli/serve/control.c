/*
 * control.c: the server's end of the control channel (cli/ctl.h; the client
 * is `dnsnap control`): the socket, and the commands, each run by the main
 * thread between its signals and its tick, so that a publish or a reload
 * asked here is serialised with the periodic ones:
 *
 *   status [--json]          what the server is and does (the counters too)
 *   publish [--json]         publish now; what was written, or why nothing
 *   flush FILTERS [--json]   the entries out of memory, and out of the file
 *                            (published without them at once), and out of
 *                            Redis with --l2
 *   dump FILTERS [--json] [--expired]   the live cache: memory over the map
 *   reload                   as SIGHUP
 *   log-level LEVEL          debug, info, warning, error
 *
 * Only root and the server's own user are served (SO_PEERCRED); a client
 * that does not send its request in time, or does not read the reply, is
 * dropped (timeouts on the socket), so that the main thread is never held.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ctl.h"
#include "json.h"
#include "lazy.h"
#include "log.h"
#include "metrics.h"
#include "print.h"
#include "server.h"

/* ------------------------------------------------------------- socket */

int control_open(struct server *s)
{
	struct ctl_side *c = &s->ctl;
	char err[512];
	c->fd = -1;
	if (s->cfg->control != NULL) {
		snprintf(c->path, sizeof c->path, "%s", s->cfg->control);
	} else {
		ctl_remove_stale(s->path); /* a killed server's */
		if (ctl_path(s->path, (long)getpid(), c->path, sizeof c->path, err, sizeof err))
			return fail("serve", NULL, "--control: %s", err);
	}
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (strlen(c->path) >= sizeof a.sun_path)
		return fail("serve", c->path, "--control: longer than a Unix socket's %zu bytes",
			    sizeof a.sun_path - 1);
	memcpy(a.sun_path, c->path, strlen(c->path) + 1);
	struct stat st;
	if (lstat(c->path, &st) == 0) { /* a socket left there: ours to replace, unless alive */
		char why[256];
		char *const probe[] = { "status", NULL };
		FILE *null = fopen("/dev/null", "w");
		int alive = null != NULL && ctl_call(c->path, 1, probe, null, null, 2000, why,
						     sizeof why) >= 0;
		if (null != NULL)
			fclose(null);
		if (!S_ISSOCK(st.st_mode) || alive)
			return fail("serve", c->path, "--control: %s", alive
				    ? "another dnsnap serve answers there" : "not a socket");
		unlink(c->path);
	}
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	mode_t old = umask(0177); /* 0600 from the start: a socket's mode is the umask's */
	int b = c->fd < 0 ? -1 : bind(c->fd, (struct sockaddr *)&a, sizeof a);
	umask(old);
	if (b != 0 || listen(c->fd, 16) != 0) {
		int e = errno;
		return fail("serve", c->path, "control socket: %s", strerror(e));
	}
	c->bound = 1;
	return 0;
}

void control_close(struct server *s)
{
	struct ctl_side *c = &s->ctl;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	if (c->bound)
		unlink(c->path);
	c->bound = 0;
}

/* ----------------------------------------------------------- commands */

typedef int (*ctl_fn)(struct server *s, int argc, char **argv, FILE *out);

static int usage(const char *cmd, const char *what)
{
	return fail("control", NULL, "%s: %s", cmd, what);
}

/* --json alone, or no option at all. @return 0 / 1 (--json), or -1 */
static int json_only(int argc, char **argv)
{
	if (argc == 1)
		return 0;
	if (argc == 2 && strcmp(argv[1], "--json") == 0)
		return 1;
	return -1;
}

static int cmd_reload(struct server *s, int argc, char **argv, FILE *out)
{
	(void)argv;
	if (argc != 1)
		return usage("reload", "takes no argument");
	reload(s, "reloaded (dnsnap control)");
	fprintf(out, "%s: reloaded: %s\n", s->path, s->snap.map ? "mapped" : "nothing mapped");
	return 0;
}

static int cmd_log_level(struct server *s, int argc, char **argv, FILE *out)
{
	(void)s;
	if (argc != 2 || slog_level_arg(argv[1]) < 0)
		return usage("log-level", "debug, info, warning or error");
	slog(LOG_INFO, "log level %s (dnsnap control)", argv[1]);
	fprintf(out, "log level: %s\n", argv[1]);
	return 0;
}

/* What a publish did, a line or a JSON object */
static void publish_report(struct server *s, const struct publish_res *r, int json, FILE *out)
{
	const dnsnap_snap_write_stats_t *w = &r->ps.write;
	if (json) {
		jw_t j;
		jw_init(&j, out);
		jw_obj(&j);
		jw_kstr(&j, "file", s->path);
		jw_kbool(&j, "published", !r->nothing_new);
		jw_ku64(&j, "entries", w->entries);
		jw_ku64(&j, "from_memory", w->entries - w->from_base);
		jw_ku64(&j, "from_file", w->from_base);
		jw_ku64(&j, "stale", r->ps.stale);
		jw_ku64(&j, "over_bound", r->ps.over_bound);
		jw_ku64(&j, "flushed", r->ps.excluded);
		jw_kdbl(&j, "seconds", r->seconds, 3);
		jw_end(&j);
		jw_nl(&j);
		return;
	}
	if (r->nothing_new) {
		fprintf(out, "%s: nothing new since the last publish (the file holds all the "
			"cache has); not published\n", s->path);
		return;
	}
	fprintf(out, "%s: published %llu %s (%llu from memory, %llu kept from the file; %llu "
		"stale; %llu left out by the bound), %.3f s\n", s->path,
		(unsigned long long)w->entries, plural(w->entries, "entry", "entries"),
		(unsigned long long)(w->entries - w->from_base), (unsigned long long)w->from_base,
		(unsigned long long)r->ps.stale, (unsigned long long)r->ps.over_bound, r->seconds);
}

static int cmd_publish(struct server *s, int argc, char **argv, FILE *out)
{
	int json = json_only(argc, argv);
	if (json < 0)
		return usage("publish", "takes --json alone");
	if (!s->cfg->forwarding)
		return fail("control", s->path, "publish: nothing to publish: the server answers "
			    "from this file only");
	struct publish_res r;
	if (publish_ex(s, "dnsnap control", NULL, &r) != 0)
		return fail("control", NULL, "publish: %s", r.error);
	publish_report(s, &r, json, out);
	return 0;
}

static int cmd_status(struct server *s, int argc, char **argv, FILE *out)
{
	int json = json_only(argc, argv);
	if (json < 0)
		return usage("status", "takes --json alone");
	status_print(s, json, out);
	return 0;
}

static const struct {
	const char *name;
	ctl_fn fn;
} commands[] = {
	{ "status", cmd_status }, { "publish", cmd_publish }, { "flush", control_flush },
	{ "dump", control_dump }, { "reload", cmd_reload }, { "log-level", cmd_log_level },
};

/* Run the request @p argv (its command first) with its output on @p fd. */
static int run(struct server *s, int argc, char **argv, int fd)
{
	FILE *out = ctl_stream(fd, 'o'), *err = ctl_stream(fd, 'e');
	if (out == NULL || err == NULL) {
		if (out)
			fclose(out);
		if (err)
			fclose(err);
		return EXIT_USAGE;
	}
	FILE *prev = fail_redirect(err); /* the command's messages are the client's */
	int rc = -1;
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(argv[0], commands[i].name) == 0) {
			optind = 0; /* a fresh getopt for the command's options */
			rc = commands[i].fn(s, argc, argv, out);
		}
	if (rc < 0)
		rc = fail("control", NULL, "unknown command '%s' (status, publish, flush, dump, "
			  "reload, log-level)", argv[0]);
	fail_redirect(prev);
	fclose(out);
	fclose(err);
	return rc;
}

void control_serve(struct server *s)
{
	int fd = accept4(s->ctl.fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	/* a client that stops reading (or writing) lets go of the main thread */
	struct timeval tv = { CTL_TIMEOUT_MS / 1000, 0 };
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	/* the request read whole before any reply, refusals too: a close with
	 * unread bytes would reset the connection and lose the reply */
	char *argv[CTL_ARGS_MAX + 1];
	char why[256];
	int argc = ctl_read_request(fd, argv, CTL_ARGS_MAX + 1, why, sizeof why);
	if (argc < 0) {
		slog(LOG_INFO, "control: a request dropped: %s", why);
		close(fd);
		return;
	}
	uid_t uid;
	if (!ctl_peer_allowed(fd, &uid)) {
		FILE *err = ctl_stream(fd, 'e');
		if (err != NULL) {
			fprintf(err, "dnsnap control: uid %ld may not control this server (root and "
				"uid %ld only)\n", (long)uid, (long)geteuid());
			fclose(err);
		}
		ctl_send_status(fd, EXIT_USAGE);
		slog(LOG_WARNING, "control: refused a client of uid %ld (%s)", (long)uid, argv[0]);
		ctl_free_args(argv, argc);
		close(fd);
		return;
	}
	slog(LOG_DEBUG, "control: %s", argv[0]);
	ctl_send_status(fd, run(s, argc, argv, fd));
	ctl_free_args(argv, argc);
	close(fd);
}

/* A stream whose lines go to the log at info, "PREFIX: line" */
struct log_lines {
	const char *prefix;
	size_t n;
	char line[1024];
};

static ssize_t log_write(void *cookie, const char *buf, size_t size)
{
	struct log_lines *l = cookie;
	for (size_t i = 0; i < size; i++) {
		if (buf[i] == '\n' || l->n == sizeof l->line - 1) {
			l->line[l->n] = 0;
			slog(LOG_INFO, "%s: %s", l->prefix, l->line);
			l->n = 0;
			if (buf[i] == '\n')
				continue;
		}
		l->line[l->n++] = buf[i];
	}
	return (ssize_t)size;
}

void control_ask_publish(struct server *s, unsigned wait_s)
{
	static char socks[CTL_SERVERS_MAX][CTL_PATH_MAX];
	char err[512];
	int n = ctl_find(s->path, socks, err, sizeof err);
	if (n <= 0 || wait_s == 0)
		return;
	int64_t by = mono_ms() + 1000ll * wait_s;
	for (int i = 0; i < n; i++) {
		int64_t left = by - mono_ms();
		if (left <= 0) {
			slog(LOG_WARNING, "deploy: %s not asked to publish: --deploy-wait %u s "
			     "spent; starting with the file as it is", socks[i], wait_s);
			continue;
		}
		struct log_lines ll = { .prefix = socks[i] };
		cookie_io_functions_t io = { .write = log_write };
		FILE *to = fopencookie(&ll, "w", io);
		if (to == NULL)
			continue;
		setvbuf(to, NULL, _IONBF, 0);
		char *const argv[] = { "publish", NULL };
		char why[512];
		int rc = ctl_call(socks[i], 1, argv, to, to, (unsigned)left, why, sizeof why);
		fclose(to);
		if (rc < 0)
			slog(LOG_WARNING, "deploy: %s; starting with the file as it is", why);
		else
			slog(LOG_INFO, "deploy: %s published (status %d): mapping its file", socks[i],
			     rc);
	}
}
