/*
 * serve_ctl.h: the control channel's side of `dnsnap serve` (control.c: its
 * socket and commands; control_cache.c: flush and dump; the protocol:
 * cli/ctl.h).
 */
#ifndef DNSNAP_SERVE_CTL_H
#define DNSNAP_SERVE_CTL_H

#include <stdio.h>

#include "ctl.h"

struct server;

struct ctl_side {
	int fd;                  /* listening, -1: none */
	int bound;               /* path is ours: removed at the end */
	char path[CTL_PATH_MAX];
};

/** The socket at --control, or beside SNAP (TARGET.ctl.PID), mode 0600.
 * @return 0 or EXIT_USAGE (reported) */
int control_open(struct server *s);
/** Close it and remove its file. */
void control_close(struct server *s);
/** A client waits on ctl.fd: take it, run its command, answer, close. */
void control_serve(struct server *s);

/* control_cache.c: the commands on the live cache (argv[0] the command's name;
 * @return its exit status) */
int control_dump(struct server *s, int argc, char **argv, FILE *out);
int control_flush(struct server *s, int argc, char **argv, FILE *out);

/* Before the start: every other server of the snapshot asked to publish, so
 * that this one maps what they learned (a deploy). At most @p wait_s
 * seconds in all. */
void control_ask_publish(struct server *s, unsigned wait_s);

#endif
