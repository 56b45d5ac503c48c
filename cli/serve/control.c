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
 * status, dump and log-level run in the control thread (control_io.c);
 * publish, flush and reload are parsed there and run by the main thread
 * between its signals and its tick (control_run_jobs()), so that they are
 * serialised with the periodic publishes, and never wait on a client.
 * Only root, the server's own user and the snapshot's owner are served
 * (SO_PEERCRED).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
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

/* A listening socket at @p path, mode 0600 (a path longer than sun_path
 * bound through /proc/self/fd/DIRFD/NAME). @return it, or -1 (errno) */
static int bind_listen(const char *path)
{
	struct sockaddr_un a;
	int dirfd;
	if (ctl_addr(path, &a, &dirfd) != 0)
		return -1;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	mode_t old = umask(0177); /* 0600 from the start: a socket's mode is the umask's */
	int b = fd < 0 ? -1 : bind(fd, (struct sockaddr *)&a, sizeof a);
	umask(old);
	int e = errno;
	if (dirfd >= 0)
		close(dirfd);
	if (b != 0 || listen(fd, 16) != 0) {
		e = b != 0 ? e : errno;
		if (fd >= 0)
			close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* The directory SNAP's final target is in, by device and inode. @return 0 or -1 */
static int dir_of(const char *snap, struct stat *st)
{
	char target[CTL_PATH_MAX];
	if (dnsnap_path_target(snap, target, sizeof target) != 0)
		return -1;
	char *slash = strrchr(target, '/');
	if (slash == target)
		slash[1] = 0;
	else if (slash != NULL)
		*slash = 0;
	return stat(slash != NULL ? target : ".", st);
}

void control_recheck(struct server *s)
{
	struct ctl_side *c = &s->ctl;
	struct stat now;
	if (dir_of(s->path, &now) != 0 ||
	    (now.st_dev == c->dir.st_dev && now.st_ino == c->dir.st_ino))
		return;
	/* SNAP names a file elsewhere now (a link moved): the socket moves
	 * beside it, where dnsnap control SNAP looks */
	char path[CTL_PATH_MAX], err[512];
	int fd;
	if (ctl_path(s->path, (long)getpid(), path, sizeof path, err, sizeof err) != 0 ||
	    (fd = bind_listen(path)) < 0) {
		slog(LOG_WARNING, "control: %s moved to another directory, the control socket "
		     "could not follow it (%s): dnsnap control --control %s reaches it", s->path,
		     err[0] ? err : strerror(errno), c->path);
		c->dir = now; /* said once */
		return;
	}
	slog(LOG_INFO, "control: %s is in another directory now: the control socket moves "
	     "from %s to %s", s->path, c->path, path);
	close(c->fd);
	unlink(c->path);
	c->fd = fd;
	memcpy(c->path, path, sizeof path);
	c->dir = now;
}

/* --control PATH, besides the default: a socket left there is replaced
 * unless a server answers on it. @return 0 or EXIT_USAGE (reported) */
static int open_extra(struct ctl_side *c, const char *path)
{
	snprintf(c->extra_path, sizeof c->extra_path, "%s", path);
	if (strlen(path) >= CTL_PATH_MAX)
		return fail("serve", path, "--control: a path of at most %d bytes",
			    CTL_PATH_MAX - 1);
	struct stat st;
	if (lstat(path, &st) == 0) {
		char why[256];
		char *const probe[] = { "status", NULL };
		FILE *null = fopen("/dev/null", "w");
		struct ctl_bounds bd = { 2000, 2000 };
		int alive = null == NULL || ctl_call(path, 1, probe, null, null, &bd, why,
						     sizeof why) != CTL_DEAD;
		if (null != NULL)
			fclose(null);
		if (!S_ISSOCK(st.st_mode) || alive)
			return fail("serve", path, "--control: %s", alive
				    ? "another dnsnap serve answers there" : "not a socket");
		unlink(path);
	}
	if ((c->extra_fd = bind_listen(path)) < 0)
		return fail("serve", path, "--control: %s", strerror(errno));
	c->extra_bound = 1;
	return 0;
}

int control_open(struct server *s)
{
	struct ctl_side *c = &s->ctl;
	char err[512];
	c->fd = c->extra_fd = -1;
	ctl_remove_stale(s->path); /* a killed server's */
	if (ctl_path(s->path, (long)getpid(), c->path, sizeof c->path, err, sizeof err))
		return fail("serve", NULL, "control socket: %s", err);
	if ((c->fd = bind_listen(c->path)) < 0)
		return fail("serve", c->path, "control socket: %s", strerror(errno));
	dir_of(s->path, &c->dir);
	c->bound = 1;
	if (s->cfg->control != NULL && open_extra(c, s->cfg->control))
		return EXIT_USAGE;
	pthread_mutex_init(&c->mu, NULL);
	pthread_mutex_init(&c->run_mu, NULL);
	c->queue_tail = &c->queue;
	c->job_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	c->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->job_fd < 0 || c->done_fd < 0 || control_io_start(s) != 0)
		return fail("serve", c->path, "control thread: %s", strerror(errno));
	return 0;
}

void control_close(struct server *s)
{
	struct ctl_side *c = &s->ctl;
	control_stopping(s);
	control_io_stop(s);
	if (c->job_fd >= 0)
		close(c->job_fd);
	if (c->done_fd >= 0)
		close(c->done_fd);
	c->job_fd = c->done_fd = -1;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	if (c->bound)
		unlink(c->path);
	c->bound = 0;
	if (c->extra_fd >= 0)
		close(c->extra_fd);
	c->extra_fd = -1;
	if (c->extra_bound)
		unlink(c->extra_path);
	c->extra_bound = 0;
}

/* ----------------------------------------------------------- commands */

typedef int (*ctl_fn)(struct server *s, int argc, char **argv, FILE *out);

/* "dnsnap control CMD: ...", pointing to the help */
static int usage(const char *cmd, const char *what)
{
	char c[64];
	snprintf(c, sizeof c, "control %s", cmd);
	return fail(c, NULL, "%s (dnsnap help control)", what);
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

static void reload_report(struct server *s, int json, FILE *out)
{
	pthread_mutex_lock(&s->snap.mu);
	uint64_t entries = 0;
	int mapped = s->snap.map != NULL;
	if (mapped) {
		dnsnap_snap_info_t in;
		dnsnap_snap_info(s->snap.map, &in);
		entries = in.entry_count;
	}
	pthread_mutex_unlock(&s->snap.mu);
	if (!json) {
		fprintf(out, "%s: reloaded: %s\n", s->path, mapped ? "mapped" : "nothing mapped");
		return;
	}
	jw_t j;
	jw_init(&j, out);
	jw_obj(&j);
	jw_kstr(&j, "file", s->path);
	jw_ku64(&j, "pid", (uint64_t)getpid());
	jw_kbool(&j, "mapped", mapped);
	jw_ku64(&j, "entries", entries);
	jw_end(&j);
	jw_nl(&j);
}

static int cmd_log_level(struct server *s, int argc, char **argv, FILE *out)
{
	(void)s;
	int json = argc == 3 && strcmp(argv[2], "--json") == 0;
	if ((argc != 2 && !json) || slog_level_arg(argv[1]) < 0)
		return usage("log-level", "debug, info, warning or error, then --json or nothing");
	slog(LOG_INFO, "log level %s (dnsnap control)", argv[1]);
	if (!json) {
		fprintf(out, "log level: %s\n", argv[1]);
		return 0;
	}
	jw_t j;
	jw_init(&j, out);
	jw_obj(&j);
	jw_ku64(&j, "pid", (uint64_t)getpid());
	jw_kstr(&j, "log_level", argv[1]);
	jw_end(&j);
	jw_nl(&j);
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
		jw_ku64(&j, "pid", (uint64_t)getpid());
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

static int job_publish(struct server *s, struct ctl_job *j)
{
	if (!s->cfg->forwarding)
		return fail("control publish", s->path, "nothing to publish: the server answers "
			    "from this file only");
	struct publish_res r;
	if (publish_ex(s, "dnsnap control", NULL, &r) != 0)
		return fail("control publish", NULL, "%s", r.error);
	publish_report(s, &r, j->json, j->out);
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

/* The commands of the control thread */
static const struct {
	const char *name;
	ctl_fn fn;
} commands[] = {
	{ "status", cmd_status }, { "dump", control_dump }, { "log-level", cmd_log_level },
};

/* The commands of the main thread: parsed into @p j. @return 0, 1 (not one
 * of them), EXIT_USAGE (reported) */
static int job_parse(struct ctl_job *j, int argc, char **argv)
{
	if (strcmp(argv[0], "flush") == 0) {
		j->kind = CTL_FLUSH;
		return control_flush_parse(j, argc, argv);
	}
	if (strcmp(argv[0], "publish") != 0 && strcmp(argv[0], "reload") != 0)
		return 1;
	j->kind = argv[0][0] == 'p' ? CTL_PUBLISH : CTL_RELOAD;
	if ((j->json = json_only(argc, argv)) < 0)
		return usage(argv[0], "takes --json alone");
	return 0;
}

void control_job_free(struct ctl_job *j)
{
	if (j == NULL)
		return;
	if (j->out != NULL)
		fclose(j->out);
	if (j->err != NULL)
		fclose(j->err);
	if (j->reply != NULL)
		fclose(j->reply);
	free(j->f);
	free(j);
}

int control_request(struct server *s, int argc, char **argv, FILE *reply, struct ctl_job **job)
{
	*job = NULL;
	FILE *out = ctl_stream(reply, 'o'), *err = ctl_stream(reply, 'e');
	struct ctl_job *j = calloc(1, sizeof *j);
	if (out == NULL || err == NULL || j == NULL) {
		if (out)
			fclose(out);
		if (err)
			fclose(err);
		free(j);
		fprintf(reply, "e dnsnap control: out of memory\n");
		return EXIT_USAGE;
	}
	FILE *prev = fail_redirect(err); /* the command's messages are the client's */
	int rc = -1;
	optind = 0; /* a fresh getopt for the command's options (this thread's only) */
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(argv[0], commands[i].name) == 0)
			rc = commands[i].fn(s, argc, argv, out);
	int found = rc >= 0;
	if (!found && (rc = job_parse(j, argc, argv)) == 0) {
		fail_redirect(prev);
		*j = (struct ctl_job){ .kind = j->kind, .json = j->json, .expired = j->expired,
				       .f = j->f, .reply = reply, .out = out, .err = err };
		*job = j;
		return 0;
	}
	if (!found && rc == 1)
		rc = fail("control", NULL, "unknown command '%s' (status, publish, flush, dump, "
			  "reload, log-level; dnsnap help control)", argv[0]);
	fail_redirect(prev);
	fclose(out);
	fclose(err);
	free(j->f);
	free(j);
	return rc;
}

void control_job_run(struct server *s, struct ctl_job *j)
{
	FILE *prev = fail_redirect(j->err);
	switch (j->kind) {
	case CTL_PUBLISH:
		j->rc = job_publish(s, j);
		break;
	case CTL_FLUSH:
		j->rc = control_flush(s, j);
		break;
	case CTL_RELOAD:
		reload(s, "reloaded (dnsnap control)");
		reload_report(s, j->json, j->out);
		j->rc = 0;
		break;
	}
	fail_redirect(prev);
	fclose(j->out); /* their last lines into the reply */
	fclose(j->err);
	j->out = j->err = NULL;
}

/* A job back to the control thread */
static void job_done(struct ctl_side *c, struct ctl_job *j)
{
	pthread_mutex_lock(&c->mu);
	j->next = c->done;
	c->done = j;
	pthread_mutex_unlock(&c->mu);
	uint64_t one = 1;
	ssize_t w = write(c->done_fd, &one, sizeof one);
	(void)w;
}

void control_run_jobs(struct server *s)
{
	struct ctl_side *c = &s->ctl;
	uint64_t v;
	ssize_t r = read(c->job_fd, &v, sizeof v);
	(void)r;
	for (;;) { /* one at a time: those queued meanwhile run too, in order */
		pthread_mutex_lock(&c->mu);
		struct ctl_job *j = c->queue;
		if (j != NULL && (c->queue = j->next) == NULL)
			c->queue_tail = &c->queue;
		pthread_mutex_unlock(&c->mu);
		if (j == NULL)
			return;
		control_job_run(s, j);
		job_done(c, j);
	}
}

void control_stopping(struct server *s)
{
	struct ctl_side *c = &s->ctl;
	if (c->queue_tail == NULL) /* never opened */
		return;
	pthread_mutex_lock(&c->run_mu); /* a status or a dump running ends first */
	pthread_mutex_lock(&c->mu);
	int was = c->stopping;
	c->stopping = 1;
	struct ctl_job *q = c->queue;
	c->queue = NULL;
	c->queue_tail = &c->queue;
	pthread_mutex_unlock(&c->mu);
	pthread_mutex_unlock(&c->run_mu);
	if (!was)
		slog(LOG_DEBUG, "control: stopping: every command refused from now on");
	while (q != NULL) {
		struct ctl_job *next = q->next;
		static const char *const names[] = { "publish", "flush", "reload" };
		fprintf(q->err, "dnsnap control %s: stopping: the server no longer takes it\n",
			names[q->kind]);
		fclose(q->out);
		fclose(q->err);
		q->out = q->err = NULL;
		q->rc = EXIT_USAGE;
		job_done(c, q);
		q = next;
	}
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
	int n = ctl_find(s->path, socks, NULL, err, sizeof err);
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
		struct ctl_bounds bd = { CTL_SILENCE_MS, left }; /* --deploy-wait in all */
		int rc = ctl_call(socks[i], 1, argv, to, to, &bd, why, sizeof why);
		fclose(to);
		if (rc < 0)
			slog(LOG_WARNING, "deploy: %s; starting with the file as it is", why);
		else
			slog(LOG_INFO, "deploy: %s published (status %d): mapping its file", socks[i],
			     rc);
	}
}
