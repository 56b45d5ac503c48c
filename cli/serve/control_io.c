/*
 * control_io.c: the control thread of `dnsnap serve` (serve_ctl.h): poll()
 * over the control socket, at most CTL_CLIENTS_MAX clients and an eventfd,
 * so that no client ever holds the main thread.
 *
 * A client's life: its request read (non-blocking, buffered) within
 * CTL_REQUEST_MS of its connect, else "e WHY", "x 2"; then its command:
 * status, dump, log-level run here, into a temporary file; publish, flush,
 * reload are parsed here and queued (FIFO) to the main thread, which runs
 * them between its signals and its tick and hands them back through the
 * eventfd; meanwhile the client gets "w" every CTL_KEEPALIVE_MS. Then the
 * reply, in that file, is streamed at the client's pace; a client that
 * reads nothing of it for CTL_STALL_MS is dropped. The main thread only
 * ever runs a whole request, never waits on a client.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "ctl.h"
#include "log.h"
#include "server.h"

enum { C_FREE, C_READ, C_WAIT, C_SEND };

struct client {
	int fd, state, dead;
	int64_t since;           /* READ: the connect; SEND: the last byte taken */
	uid_t uid;
	size_t in_n;
	char *in;                /* the request read so far (CTL_REQUEST_BYTES) */
	struct ctl_job *job;     /* WAIT: its job, with the main thread */
	FILE *reply;             /* SEND: read from its start */
	size_t out_n, out_off;
	char out[8192];
};

struct ctl_clients {
	struct client c[CTL_CLIENTS_MAX];
	int64_t last_keepalive, last_recheck;
};

static void wake(int fd)
{
	uint64_t one = 1;
	ssize_t w = write(fd, &one, sizeof one);
	(void)w;
}

/* A reply's file: a temporary file, else memory. @return it, or NULL */
static FILE *reply_file(void)
{
	FILE *f = tmpfile();
	if (f != NULL)
		return f;
	int fd = memfd_create("dnsnap-control", MFD_CLOEXEC);
	if (fd < 0 || (f = fdopen(fd, "w+")) == NULL) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	return f;
}

static void client_free(struct client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	if (c->reply != NULL)
		fclose(c->reply);
	free(c->in);
	*c = (struct client){ .fd = -1, .state = C_FREE };
}

/* Best effort, never blocking: a keepalive, or a refusal to a new client */
static void say(struct client *c, const char *text)
{
	if (send(c->fd, text, strlen(text), MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
	    errno != EAGAIN && errno != EWOULDBLOCK)
		c->dead = 1;
}

/* The reply in @p f (its "x" line appended) streamed to @p c from now on */
static void client_send(struct client *c, FILE *f, int rc)
{
	fprintf(f, "x %d\n", rc);
	fflush(f);
	rewind(f);
	c->reply = f;
	c->out_n = c->out_off = 0;
	c->state = C_SEND;
	c->since = ctl_now_ms();
}

/* A reply of one "e" line (a refused or broken request) */
static void client_refuse(struct client *c, const char *fmt, const char *why)
{
	FILE *f = reply_file();
	if (f == NULL) {
		client_free(c);
		return;
	}
	fprintf(f, "e dnsnap control: ");
	fprintf(f, fmt, why);
	fprintf(f, "\n");
	client_send(c, f, EXIT_USAGE);
}

/* Root, the server's own user, or the snapshot's owner */
static int peer_allowed(struct server *s, uid_t uid)
{
	struct stat st;
	return uid == 0 || uid == geteuid() || (stat(s->path, &st) == 0 && st.st_uid == uid);
}

/* The request whole in c->in: run or queued */
static void client_request(struct server *s, struct client *c, size_t len)
{
	char *argv[CTL_ARGS_MAX + 1], why[256];
	int argc = ctl_parse_request(c->in, len, argv, CTL_ARGS_MAX + 1, why, sizeof why);
	if (argc < 0) {
		slog(LOG_INFO, "control: a bad request: %s", why);
		client_refuse(c, "a bad request: %s (dnsnap help control)", why);
		return;
	}
	if (!peer_allowed(s, c->uid)) {
		char u[128];
		snprintf(u, sizeof u, "uid %ld may not control this server (root, uid %ld and the "
			 "snapshot's owner only)", (long)c->uid, (long)geteuid());
		slog(LOG_WARNING, "control: refused a client of uid %ld (%s)", (long)c->uid, argv[0]);
		client_refuse(c, "%s", u);
		ctl_free_args(argv, argc);
		return;
	}
	slog(LOG_DEBUG, "control: %s", argv[0]);
	FILE *f = reply_file();
	if (f == NULL) {
		ctl_free_args(argv, argc);
		client_refuse(c, "%s", "out of memory");
		return;
	}
	struct ctl_side *cs = &s->ctl;
	struct ctl_job *j = NULL;
	char cmd[64];
	snprintf(cmd, sizeof cmd, "%s", argv[0]);
	c->state = C_WAIT; /* a long dump here: its own "w" lines too */
	pthread_mutex_lock(&cs->run_mu);
	pthread_mutex_lock(&cs->mu);
	int stopping = cs->stopping;
	pthread_mutex_unlock(&cs->mu);
	int rc = stopping ? EXIT_USAGE : control_request(s, argc, argv, f, &j);
	pthread_mutex_unlock(&cs->run_mu);
	ctl_free_args(argv, argc);
	if (stopping) { /* what it would read is being freed */
		fprintf(f, "e dnsnap control %s: stopping: the server no longer takes it\n", cmd);
		client_send(c, f, EXIT_USAGE);
		return;
	}
	if (j == NULL) {
		client_send(c, f, rc);
		return;
	}
	pthread_mutex_lock(&cs->mu);
	stopping = cs->stopping;
	if (!stopping) {
		*cs->queue_tail = j;
		cs->queue_tail = &j->next;
	}
	pthread_mutex_unlock(&cs->mu);
	if (stopping) {
		fclose(j->out); /* into f, which stays: the reply */
		fclose(j->err);
		j->out = j->err = NULL;
		j->reply = NULL;
		control_job_free(j);
		fprintf(f, "e dnsnap control %s: stopping: the server no longer takes it\n", cmd);
		client_send(c, f, EXIT_USAGE);
		return;
	}
	wake(cs->job_fd);
	c->job = j;
	c->state = C_WAIT;
}

/* POLLIN on a client reading its request */
static void client_read(struct server *s, struct client *c)
{
	for (;;) {
		if (c->in_n == CTL_REQUEST_BYTES) {
			client_refuse(c, "a bad request: %s", "over 65536 bytes");
			return;
		}
		ssize_t k = recv(c->fd, c->in + c->in_n, CTL_REQUEST_BYTES - c->in_n, MSG_DONTWAIT);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (k <= 0) { /* gone before its request ended */
			client_free(c);
			return;
		}
		c->in_n += (size_t)k;
		size_t end = ctl_request_end(c->in, c->in_n);
		if (end > 0) {
			client_request(s, c, end);
			return;
		}
	}
}

/* POLLOUT on a client taking its reply */
static void client_write(struct client *c)
{
	for (;;) {
		if (c->out_off == c->out_n) {
			c->out_n = fread(c->out, 1, sizeof c->out, c->reply);
			c->out_off = 0;
			if (c->out_n == 0) { /* all of it sent */
				shutdown(c->fd, SHUT_WR);
				client_free(c);
				return;
			}
		}
		ssize_t w = send(c->fd, c->out + c->out_off, c->out_n - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (w <= 0) {
			client_free(c);
			return;
		}
		c->out_off += (size_t)w;
		c->since = ctl_now_ms();
	}
}

/* A new client: a free slot, or told the server is busy */
static void client_accept(struct server *s, int lfd)
{
	struct ctl_clients *cl = s->ctl.cl;
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	struct ucred cr = { .uid = (uid_t)-1 };
	socklen_t l = sizeof cr;
	getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l);
	for (int i = 0; i < CTL_CLIENTS_MAX; i++) {
		struct client *c = &cl->c[i];
		if (c->state != C_FREE)
			continue;
		*c = (struct client){ .fd = fd, .state = C_READ, .since = ctl_now_ms(),
				      .uid = cr.uid, .in = malloc(CTL_REQUEST_BYTES) };
		if (c->in == NULL)
			client_free(c);
		return;
	}
	struct client busy = { .fd = fd };
	char msg[128];
	snprintf(msg, sizeof msg, "e dnsnap control: the server serves %d control clients "
		 "already; try again\nx 2\n", CTL_CLIENTS_MAX);
	say(&busy, msg);
	slog(LOG_WARNING, "control: a client refused: %d clients already", CTL_CLIENTS_MAX);
	close(fd);
}

void control_keepalive(struct server *s)
{
	struct ctl_clients *cl = s->ctl.cl;
	int64_t now = ctl_now_ms();
	if (now - cl->last_keepalive < CTL_KEEPALIVE_MS)
		return;
	cl->last_keepalive = now;
	for (int i = 0; i < CTL_CLIENTS_MAX; i++)
		if (cl->c[i].state == C_WAIT && !cl->c[i].dead)
			say(&cl->c[i], "w\n");
}

/* The jobs the main thread has done: their replies to their clients */
static void jobs_done(struct server *s)
{
	struct ctl_side *cs = &s->ctl;
	uint64_t v;
	ssize_t r = read(cs->done_fd, &v, sizeof v);
	(void)r;
	pthread_mutex_lock(&cs->mu);
	struct ctl_job *d = cs->done;
	cs->done = NULL;
	pthread_mutex_unlock(&cs->mu);
	while (d != NULL) {
		struct ctl_job *next = d->next;
		for (int i = 0; i < CTL_CLIENTS_MAX; i++) {
			struct client *c = &cs->cl->c[i];
			if (c->state != C_WAIT || c->job != d)
				continue;
			FILE *f = d->reply;
			d->reply = NULL;
			c->job = NULL;
			if (c->dead)
				fclose(f), client_free(c);
			else
				client_send(c, f, d->rc);
		}
		control_job_free(d);
		d = next;
	}
}

/* The deadlines: a request too slow, a reply not taken */
static void deadlines(struct client *c, int64_t now)
{
	if (c->state == C_READ && now - c->since >= CTL_REQUEST_MS) {
		slog(LOG_INFO, "control: a client sent no whole request within %d ms: dropped",
		     CTL_REQUEST_MS);
		client_refuse(c, "no whole request within %s ms (dnsnap help control)", "5000");
	} else if (c->state == C_SEND && now - c->since >= CTL_STALL_MS) {
		slog(LOG_INFO, "control: a client read nothing of its reply for %d ms: dropped",
		     CTL_STALL_MS);
		client_free(c);
	}
}

static void *control_main(void *arg)
{
	struct server *s = arg;
	struct ctl_clients *cl = s->ctl.cl;
	struct pollfd pf[CTL_CLIENTS_MAX + 3];
	while (!atomic_load(&s->ctl.quit)) {
		pf[0] = (struct pollfd){ .fd = s->ctl.fd, .events = POLLIN };
		pf[1] = (struct pollfd){ .fd = s->ctl.done_fd, .events = POLLIN };
		pf[CTL_CLIENTS_MAX + 2] = (struct pollfd){ .fd = s->ctl.extra_fd, .events = POLLIN };
		for (int i = 0; i < CTL_CLIENTS_MAX; i++) {
			struct client *c = &cl->c[i];
			short ev = c->state == C_READ ? POLLIN : c->state == C_SEND ? POLLOUT : 0;
			pf[i + 2] = (struct pollfd){ .fd = ev ? c->fd : -1, .events = ev };
		}
		if (poll(pf, CTL_CLIENTS_MAX + 3, CTL_KEEPALIVE_MS / 4) < 0 && errno != EINTR)
			break;
		if (pf[1].revents & POLLIN)
			jobs_done(s);
		for (int i = 0; i < CTL_CLIENTS_MAX; i++) {
			struct client *c = &cl->c[i];
			short re = pf[i + 2].revents;
			if (pf[i + 2].fd < 0 || re == 0)
				continue;
			if (c->state == C_READ)
				client_read(s, c);
			else if (c->state == C_SEND && (re & (POLLERR | POLLHUP)) && !(re & POLLOUT))
				client_free(c);
			else if (c->state == C_SEND)
				client_write(c);
		}
		int64_t now = ctl_now_ms();
		for (int i = 0; i < CTL_CLIENTS_MAX; i++)
			deadlines(&cl->c[i], now);
		control_keepalive(s);
		if (pf[0].revents & POLLIN)
			client_accept(s, s->ctl.fd);
		if (pf[CTL_CLIENTS_MAX + 2].revents & POLLIN)
			client_accept(s, s->ctl.extra_fd);
		if (now - cl->last_recheck >= 1000) {
			cl->last_recheck = now;
			control_recheck(s);
		}
	}
	return NULL;
}

int control_io_start(struct server *s)
{
	struct ctl_side *cs = &s->ctl;
	cs->cl = calloc(1, sizeof *cs->cl);
	if (cs->cl == NULL)
		return -1;
	for (int i = 0; i < CTL_CLIENTS_MAX; i++)
		cs->cl->c[i] = (struct client){ .fd = -1, .state = C_FREE };
	if (pthread_create(&cs->thread, NULL, control_main, s) != 0)
		return -1;
	cs->thread_on = 1;
	return 0;
}

void control_io_stop(struct server *s)
{
	struct ctl_side *cs = &s->ctl;
	if (cs->thread_on) {
		atomic_store(&cs->quit, 1);
		wake(cs->done_fd);
		pthread_join(cs->thread, NULL);
		cs->thread_on = 0;
	}
	if (cs->cl != NULL) /* their jobs, if any, are on the done list */
		for (int i = 0; i < CTL_CLIENTS_MAX; i++)
			if (cs->cl->c[i].state != C_FREE)
				client_free(&cs->cl->c[i]);
	while (cs->done != NULL) {
		struct ctl_job *next = cs->done->next;
		control_job_free(cs->done);
		cs->done = next;
	}
	free(cs->cl);
	cs->cl = NULL;
}
