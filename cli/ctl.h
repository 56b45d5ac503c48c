/*
 * ctl.h: the control channel of `dnsnap serve` (as unbound-control's): its
 * socket's name, its protocol, and both ends of it (the client is `dnsnap
 * control`, cli/control.c; the server's commands are cli/serve/control.c).
 *
 * Where: every server listens on a Unix stream socket of its own, mode
 * 0600: by default beside its snapshot, named after it, the server's pid
 * and 8 random hex digits, TARGET.ctl.PID.RAND, TARGET being the file SNAP
 * finally names (symbolic links followed, so that every name of the
 * snapshot finds it), or at --control PATH. A client given SNAP talks to
 * every live server of it (during a deploy there are two): live is a
 * connect that is not refused (ECONNREFUSED: a server killed, its socket
 * left; the next server of ours removes it). Only root, the server's own
 * user and the snapshot's owner are served (SO_PEERCRED), whatever the
 * socket's mode; a client not root skips a socket owned by anyone else.
 *
 * The protocol, version 1, lines of text ending in "\n":
 *   client:  "DNSNAP-CONTROL 1", then "a TEXT" per argument (the command
 *            and its options, as on the command line; TEXT cannot hold a
 *            newline, at most CTL_ARG_MAX - 1 bytes, CTL_ARGS_MAX - 1
 *            arguments), then an empty line, within CTL_REQUEST_MS of the
 *            connect;
 *   server:  "o TEXT" for a line of the command's standard output, "e TEXT"
 *            for one of its standard error, in the order written, "w" (the
 *            server lives: a command still runs) at least every
 *            CTL_KEEPALIVE_MS while nothing else comes, and last "x N", the
 *            command's exit status (0, 1, 2 as every command's). A request
 *            that is not the protocol, is too slow or too long is answered
 *            "e WHY" and "x 2".
 * A reply without its "x" line is a server that failed (exit 2); a silence
 * of CTL_SILENCE_MS (not even "w") is a server gone.
 */
#ifndef DNSNAP_CLI_CTL_H
#define DNSNAP_CLI_CTL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define CTL_MAGIC "DNSNAP-CONTROL 1"
#define CTL_ARGS_MAX 64           /* arguments in a request, the command's name included */
#define CTL_ARG_MAX 4096          /* bytes in one argument */
#define CTL_PATH_MAX 4352         /* a socket's path (over sun_path's 108: ctl_addr()) */
#define CTL_SERVERS_MAX 16        /* servers one client talks to */
#define CTL_REQUEST_MS 5000       /* the whole request, from the connect */
#define CTL_KEEPALIVE_MS 1000     /* "w" while a command runs */
#define CTL_SILENCE_MS 5000       /* a reply's silence that ends the wait */
#define CTL_TOTAL_S 600           /* a command's whole reply (dnsnap control --timeout) */
#define CTL_DEAD (-2)             /* ctl_call(): ECONNREFUSED, no server there */

/**
 * The default control socket of the server @p pid serving @p snap:
 * TARGET.ctl.PID.RAND, RAND 8 random hex digits (a name no one can guess
 * to squat). @return 0, or -1 with a message in @p err
 */
int ctl_path(const char *snap, long pid, char *out, size_t cap, char *err, size_t errcap);

/**
 * The control sockets of the live servers of @p snap: TARGET.ctl.PID.RAND
 * where a connect is not refused, in pid order, at most CTL_SERVERS_MAX.
 * Unless the caller is root, a socket owned by a user other than the
 * caller, root and the snapshot's owner is skipped, with a note on
 * @p note (may be NULL). @return how many (0: no server), or -1 with a
 * message in @p err (the directory cannot be read)
 */
int ctl_find(const char *snap, char out[][CTL_PATH_MAX], FILE *note, char *err, size_t errcap);

/**
 * Remove the sockets TARGET.ctl.PID.RAND of @p snap that are ours (this
 * euid's) and dead (ECONNREFUSED: a server killed): the server does it at
 * start.
 */
void ctl_remove_stale(const char *snap);

/**
 * The address of the socket at @p path into @p a: the path itself, or, when
 * it is longer than sun_path, /proc/self/fd/DIRFD/NAME with its directory
 * opened (O_PATH) into *dirfd, to close once bound or connected (else -1).
 * @return 0, or -1 with errno set
 */
struct sockaddr_un;
int ctl_addr(const char *path, struct sockaddr_un *a, int *dirfd);

/* What bounds a ctl_call(): a silence, and the whole of it */
struct ctl_bounds {
	unsigned silence_ms;     /* no line at all (not even "w"), CTL_SILENCE_MS */
	int64_t total_ms;        /* the connect to the "x" line */
};

/**
 * Send @p argv (@p argc arguments) to the server at @p sock and copy its reply:
 * "o" lines to @p out, "e" lines to @p err, within the bounds @p b (the
 * connect is non-blocking, bounded by the silence too).
 * @return the server's exit status (0, 1, 2), CTL_DEAD (nothing listens at
 * @p sock: ECONNREFUSED), or -1 with why in @p why (it could not be
 * reached, or the reply broke off, went silent, or took too long)
 */
int ctl_call(const char *sock, int argc, char *const *argv, FILE *out, FILE *err,
	     const struct ctl_bounds *b, char *why, size_t whycap);

/** CLOCK_MONOTONIC in ms */
int64_t ctl_now_ms(void);

/* ------------------------------------------------------ the server's end */

/** Where the request in @p buf (@p n bytes read so far) ends: just after
 * its empty line, or 0 (not yet) */
size_t ctl_request_end(const char *buf, size_t n);

/**
 * The request in @p buf (@p n bytes, ending with its empty line): its
 * arguments into @p argv (NUL-terminated copies, the caller frees them with
 * ctl_free_args(); argv[argc] is NULL).
 * @return argc, or -1 with a message in @p err (not the protocol, too many
 * arguments, one too long)
 */
int ctl_parse_request(const char *buf, size_t n, char **argv, int cap, char *err,
		      size_t errcap);

void ctl_free_args(char **argv, int argc);

/**
 * A stream whose lines go to @p to as "@p kind TEXT" lines ('o' or 'e'),
 * line-buffered (two streams on one @p to keep their order); a last line
 * without its newline is framed at fclose(). @return the stream, or NULL
 */
FILE *ctl_stream(FILE *to, char kind);

#endif
