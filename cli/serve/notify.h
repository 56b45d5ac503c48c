/*
 * notify.h: the sd_notify protocol (sd_notify(3)) without libsystemd: one
 * datagram to the AF_UNIX socket $NOTIFY_SOCKET names (a path, or an abstract
 * socket when it starts with '@'). serve sends READY=1 once it answers,
 * RELOADING=1 and READY=1 around a reload, STOPPING=1, STATUS=... .
 */
#ifndef DNSNAP_SERVE_NOTIFY_H
#define DNSNAP_SERVE_NOTIFY_H

/**
 * Send @p state ("READY=1", "STATUS=serving 1200 entries", several
 * assignments separated by newlines) to the service manager.
 * @return 1 sent, 0 NOTIFY_SOCKET unset (not run by systemd: nothing to do),
 *         -1 failed (errno set; EINVAL: NOTIFY_SOCKET is not a path or '@')
 */
int notify_systemd(const char *state);

#endif
