/*
 * serve_ctl.h: the control channel's side of `dnsnap serve` (control.c: its
 * socket and commands; control_io.c: its thread and clients;
 * control_cache.c: flush and dump; the protocol: cli/ctl.h).
 */
#ifndef DNSNAP_SERVE_CTL_H
#define DNSNAP_SERVE_CTL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/stat.h>

#include "ctl.h"
#include "cli.h"

#define CTL_CLIENTS_MAX 16       /* clients served at once; the next is told so */
#define CTL_REQUEST_BYTES 65536  /* a request, all its lines */
#define CTL_STALL_MS 30000       /* a client that reads nothing of its reply, dropped */

struct server;

/* The commands run by the main thread (serialised with its publishes) */
enum ctl_kind { CTL_PUBLISH, CTL_FLUSH, CTL_RELOAD };

/* A command for the main thread, parsed by the control thread; its reply
 * (framed lines, cli/ctl.h) written into @p reply. */
struct ctl_job {
	struct ctl_job *next;
	enum ctl_kind kind;
	int json, expired;
	filter_t *f;             /* flush's filters (malloc'd) */
	FILE *reply, *out, *err; /* out and err: ctl_stream()s into reply */
	int rc;                  /* its exit status */
};

struct ctl_side {
	int fd;                  /* listening, -1: none */
	int bound;               /* path is ours: removed at the end */
	char path[CTL_PATH_MAX]; /* TARGET.ctl.PID.RAND, beside SNAP's target */
	int extra_fd, extra_bound; /* --control PATH, as well */
	char extra_path[CTL_PATH_MAX];
	struct stat dir;         /* the directory of SNAP's target it is in (default) */
	int job_fd;              /* eventfd: jobs queued for the main thread */
	int done_fd;             /* eventfd: jobs done, or the thread to end */
	pthread_t thread;
	int thread_on;
	atomic_int quit;
	pthread_mutex_t mu;      /* the two lists and stopping */
	struct ctl_job *queue, **queue_tail; /* FIFO, for the main thread */
	struct ctl_job *done;    /* for the control thread */
	int stopping;            /* the main thread no longer takes jobs */
	pthread_mutex_t run_mu;  /* held by the control thread while it runs a
				  * command: once stopping is set under it, none
				  * reads what the stop frees (the forwarder) */
	struct ctl_clients *cl;  /* the control thread's (control_io.c) */
};

/** The socket beside SNAP (TARGET.ctl.PID.RAND) and the one at --control, if
 * given, mode 0600, and the control thread. @return 0 or EXIT_USAGE (reported) */
int control_open(struct server *s);
/** End the thread, close the socket and remove its file. */
void control_close(struct server *s);
/** The main thread: job_fd is readable: run the jobs queued, in order. */
void control_run_jobs(struct server *s);
/** The main thread stops: the jobs queued and every request to come are
 * answered "stopping", exit 2 (waits for a command the control thread runs). */
void control_stopping(struct server *s);

/* control.c, for control_io.c: a request whole (argv[0] its command).
 * Commands of the control thread run at once into @p reply (then *job is
 * NULL); those of the main thread are parsed and become *job (reply is its
 * reply). @return the exit status (when *job is NULL) */
int control_request(struct server *s, int argc, char **argv, FILE *reply,
		    struct ctl_job **job);
/** Run @p j (the main thread) */
void control_job_run(struct server *s, struct ctl_job *j);
void control_job_free(struct ctl_job *j);
/** The control thread (control_io.c): "w" to every client waiting, at most
 * once per CTL_KEEPALIVE_MS (a long dump calls it as it goes) */
void control_keepalive(struct server *s);
int control_io_start(struct server *s);
/** The control thread, once a second: SNAP's target is still in the
 * directory the default socket is in; else the socket moves there. */
void control_recheck(struct server *s);
void control_io_stop(struct server *s);

/* control_cache.c: the commands on the live cache (argv[0] the command's name;
 * @return its exit status) */
int control_dump(struct server *s, int argc, char **argv, FILE *out);
/** flush's options into @p j (j->f allocated). @return 0 or EXIT_USAGE (reported) */
int control_flush_parse(struct ctl_job *j, int argc, char **argv);
int control_flush(struct server *s, struct ctl_job *j);

/* Before the start: every other server of the snapshot asked to publish, so
 * that this one maps what they learned (a deploy). At most @p wait_s
 * seconds in all. */
void control_ask_publish(struct server *s, unsigned wait_s);

#endif
