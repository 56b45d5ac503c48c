/*
 * ctl.h: the control channel of `dnsnap serve` (as unbound-control's): its
 * socket's name, its protocol, and both ends of it (the client is `dnsnap
 * control`, cli/control.c; the server's commands are cli/serve/control.c).
 *
 * Where: every server listens on a Unix stream socket of its own, mode
 * 0600: by default beside its snapshot, named after it and the server's pid,
 * TARGET.ctl.PID, TARGET being the file SNAP finally names (symbolic links
 * followed, so that every name of the snapshot finds it), or at --control
 * PATH. A client given SNAP talks to every live server of it (during a deploy
 * there are two). Only root and the server's own user are served
 * (SO_PEERCRED), whatever the socket's mode.
 *
 * The protocol, version 1, lines of text ending in "\n":
 *   client:  "DNSNAP-CONTROL 1", then one line per argument (the command and
 *            its options, as on the command line; an argument cannot hold a
 *            newline), then an empty line;
 *   server:  "o TEXT" for a line of the command's standard output, "e TEXT"
 *            for one of its standard error, in the order written, and last
 *            "x N", the command's exit status (0, 1, 2 as every command's).
 * A reply without its "x" line is a server that failed (exit 2).
 */
#ifndef DNSNAP_CLI_CTL_H
#define DNSNAP_CLI_CTL_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#define CTL_MAGIC "DNSNAP-CONTROL 1"
#define CTL_ARGS_MAX 64           /* arguments in a request, the command's name included */
#define CTL_ARG_MAX 4096          /* bytes in one argument */
#define CTL_PATH_MAX 108          /* sockaddr_un's sun_path */
#define CTL_SERVERS_MAX 16        /* servers one client talks to */
#define CTL_TIMEOUT_MS 5000       /* reading a request; a reply's silence */

/**
 * The default control socket of the server @p pid serving @p snap:
 * TARGET.ctl.PID. @return 0, or -1 with a message in @p err (a path over
 * CTL_PATH_MAX - 1 bytes: give --control)
 */
int ctl_path(const char *snap, long pid, char *out, size_t cap, char *err, size_t errcap);

/**
 * The control sockets of the live servers of @p snap: TARGET.ctl.PID whose
 * PID runs, in pid order, at most CTL_SERVERS_MAX. @return how many (0: no
 * server), or -1 with a message in @p err (the directory cannot be read)
 */
int ctl_find(const char *snap, char out[][CTL_PATH_MAX], char *err, size_t errcap);

/**
 * Remove the sockets TARGET.ctl.PID of @p snap whose PID no longer runs (a
 * server killed): the server does it at start.
 */
void ctl_remove_stale(const char *snap);

/**
 * Send @p argv (@p argc arguments) to the server at @p sock and copy its reply:
 * "o" lines to @p out, "e" lines to @p err.
 * @return the server's exit status (0, 1, 2), or -1 with why in @p why (it
 * could not be reached, or the reply broke off)
 */
int ctl_call(const char *sock, int argc, char *const *argv, FILE *out, FILE *err, char *why,
	     size_t whycap);

/* ------------------------------------------------------ the server's end */

/**
 * Read a request from @p fd (a connection just accepted) within
 * CTL_TIMEOUT_MS: its arguments into @p argv (NUL-terminated copies, the
 * caller frees them with ctl_free_args(); argv[argc] is NULL).
 * @return argc, or -1 with a message in @p err (not the protocol, too long,
 * too slow)
 */
int ctl_read_request(int fd, char **argv, int cap, char *err, size_t errcap);

void ctl_free_args(char **argv, int argc);

/**
 * A stream whose lines go to @p fd as "@p kind TEXT" lines ('o' or 'e'); a
 * last line without its newline is sent at fclose(). Writes that fail (the
 * client went away) are dropped. @return the stream, or NULL
 */
FILE *ctl_stream(int fd, char kind);

/** The reply's last line: "x STATUS". @return 0 or -1 */
int ctl_send_status(int fd, int status);

/**
 * Whether the peer on @p fd may control this server: root, or the server's
 * own user. @return 1, or 0 with its uid in *uid
 */
int ctl_peer_allowed(int fd, uid_t *uid);

#endif
