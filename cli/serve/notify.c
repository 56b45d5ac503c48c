/*
 * notify.c: sd_notify (notify.h). A dozen lines of protocol are not worth a
 * dependency on libsystemd for a program that also runs without systemd.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "notify.h"

int notify_systemd(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	if (path == NULL || path[0] == '\0')
		return 0;
	struct sockaddr_un sa;
	size_t pl = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || pl >= sizeof sa.sun_path || pl < 2) {
		errno = EINVAL;
		return -1;
	}
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, pl);
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + pl);
	/* abstract: the name is the bytes after the NUL, without a terminator */
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	else
		len++; /* a path's terminating NUL, as sd_notify sends it */
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	ssize_t n = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, len);
	int e = errno;
	close(fd);
	if (n < 0) {
		errno = e;
		return -1;
	}
	return 1;
}
