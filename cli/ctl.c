/*
 * ctl.c: the control channel's socket names and protocol, both ends (ctl.h).
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "dnsnap.h"

/* ------------------------------------------------------------- names */

int ctl_path(const char *snap, long pid, char *out, size_t cap, char *err, size_t errcap)
{
	char target[4096];
	int e = dnsnap_path_target(snap, target, sizeof target);
	if (e != 0) {
		snprintf(err, errcap, "%s: %s", snap, strerror(-e));
		return -1;
	}
	int n = snprintf(out, cap, "%s.ctl.%ld", target, pid);
	if (n < 0 || (size_t)n >= cap || (size_t)n >= CTL_PATH_MAX) {
		snprintf(err, errcap, "%s.ctl.%ld: longer than a Unix socket's %d bytes (give "
			 "--control PATH)", target, pid, CTL_PATH_MAX - 1);
		return -1;
	}
	return 0;
}

/* The directory and file name of @p snap's final target. @return 0 or -1 */
static int target_parts(const char *snap, char *dir, size_t dcap, char *base, size_t bcap)
{
	char target[4096];
	if (dnsnap_path_target(snap, target, sizeof target) != 0)
		return -1;
	const char *slash = strrchr(target, '/');
	if (slash == NULL)
		snprintf(dir, dcap, ".");
	else if (slash == target)
		snprintf(dir, dcap, "/");
	else if ((size_t)(slash - target) < dcap)
		snprintf(dir, dcap, "%.*s", (int)(slash - target), target);
	else
		return -1;
	const char *b = slash ? slash + 1 : target;
	if (strlen(b) >= bcap)
		return -1;
	memcpy(base, b, strlen(b) + 1);
	return 0;
}

/* The pid of a name BASE.ctl.PID, or 0 */
static long socket_pid(const char *name, const char *base)
{
	size_t bl = strlen(base);
	if (strncmp(name, base, bl) != 0 || strncmp(name + bl, ".ctl.", 5) != 0)
		return 0;
	const char *p = name + bl + 5;
	char *end;
	errno = 0;
	long pid = strtol(p, &end, 10);
	if (errno || end == p || *end || pid <= 0 || p[0] == '+' || p[0] == '-')
		return 0;
	return pid;
}

static int pid_runs(long pid)
{
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

static int by_pid(const void *a, const void *b)
{
	const char *x = a, *y = b;
	const char *px = strrchr(x, '.'), *py = strrchr(y, '.');
	long i = px ? atol(px + 1) : 0, j = py ? atol(py + 1) : 0;
	return i < j ? -1 : i > j;
}

/* Each socket BASE.ctl.PID of @p snap's directory: @p fn(path, pid, live). */
static int each_socket(const char *snap, void (*fn)(void *arg, const char *path, long pid,
						    int live),
		       void *arg, char *err, size_t errcap)
{
	char dir[4096], base[1024], path[4096 + 1024 + 2];
	if (target_parts(snap, dir, sizeof dir, base, sizeof base) != 0) {
		snprintf(err, errcap, "%s: cannot follow its links", snap);
		return -1;
	}
	DIR *d = opendir(dir);
	if (d == NULL) {
		snprintf(err, errcap, "%s: %s", dir, strerror(errno));
		return -1;
	}
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		long pid = socket_pid(de->d_name, base);
		struct stat st;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if (pid == 0 || lstat(path, &st) != 0 || !S_ISSOCK(st.st_mode))
			continue;
		fn(arg, path, pid, pid_runs(pid));
	}
	closedir(d);
	return 0;
}

struct found {
	char (*out)[CTL_PATH_MAX];
	int n;
};

static void add_live(void *arg, const char *path, long pid, int live)
{
	struct found *f = arg;
	(void)pid;
	if (live && f->n < CTL_SERVERS_MAX && strlen(path) < CTL_PATH_MAX)
		snprintf(f->out[f->n++], CTL_PATH_MAX, "%s", path);
}

int ctl_find(const char *snap, char out[][CTL_PATH_MAX], char *err, size_t errcap)
{
	struct found f = { out, 0 };
	if (each_socket(snap, add_live, &f, err, errcap) != 0)
		return -1;
	qsort(out, (size_t)f.n, CTL_PATH_MAX, by_pid);
	return f.n;
}

static void unlink_dead(void *arg, const char *path, long pid, int live)
{
	(void)arg, (void)pid;
	if (!live)
		unlink(path);
}

void ctl_remove_stale(const char *snap)
{
	char err[256];
	each_socket(snap, unlink_dead, NULL, err, sizeof err);
}

/* ------------------------------------------------------------- framing */

static int64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* A line from @p fd into @p buf (without its newline) by @p deadline (ms).
 * @return its length, -1 (closed or failed), -2 (too long), -3 (too slow) */
static long read_line(int fd, char *buf, size_t cap, int64_t deadline)
{
	size_t n = 0;
	for (;;) {
		int64_t left = deadline - now_ms();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (left <= 0 || poll(&p, 1, (int)left) == 0)
			return -3;
		char ch;
		ssize_t r = read(fd, &ch, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		if (ch == '\n') {
			buf[n] = 0;
			return (long)n;
		}
		if (n + 1 >= cap)
			return -2;
		buf[n++] = ch;
	}
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* ------------------------------------------------------------- client */

static int connect_unix(const char *path, char *why, size_t whycap)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof a.sun_path) {
		snprintf(why, whycap, "%s: too long for a Unix socket", path);
		return -1;
	}
	memcpy(a.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
		snprintf(why, whycap, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int ctl_call(const char *sock, int argc, char *const *argv, FILE *out, FILE *err, char *why,
	     size_t whycap)
{
	int fd = connect_unix(sock, why, whycap);
	if (fd < 0)
		return -1;
	int rc = -1;
	char *line = malloc(CTL_ARG_MAX + 8);
	if (line == NULL) {
		snprintf(why, whycap, "out of memory");
		goto out;
	}
	if (write_all(fd, CTL_MAGIC "\n", sizeof CTL_MAGIC) != 0)
		goto broken;
	for (int i = 0; i < argc; i++)
		if (write_all(fd, argv[i], strlen(argv[i])) != 0 || write_all(fd, "\n", 1) != 0)
			goto broken;
	if (write_all(fd, "\n", 1) != 0)
		goto broken;
	for (;;) {
		/* a reply may take its time (a publish of millions of entries):
		 * the bound is on silence, not on the whole */
		long n = read_line(fd, line, CTL_ARG_MAX + 8, now_ms() + 10 * CTL_TIMEOUT_MS);
		if (n == -3) {
			snprintf(why, whycap, "%s: no reply for %d s", sock, 10 * CTL_TIMEOUT_MS / 1000);
			goto out;
		}
		if (n < 2)
			goto broken;
		if (line[0] == 'x' && line[1] == ' ') {
			rc = atoi(line + 2);
			goto out;
		}
		FILE *to = line[0] == 'o' ? out : line[0] == 'e' ? err : NULL;
		if (to == NULL || line[1] != ' ')
			goto broken;
		fprintf(to, "%s\n", line + 2);
	}
broken:
	snprintf(why, whycap, "%s: the server closed the connection before its reply ended",
		 sock);
out:
	free(line);
	close(fd);
	return rc;
}

/* ------------------------------------------------------------- server */

void ctl_free_args(char **argv, int argc)
{
	for (int i = 0; i < argc; i++)
		free(argv[i]);
}

int ctl_read_request(int fd, char **argv, int cap, char *err, size_t errcap)
{
	char *line = malloc(CTL_ARG_MAX + 1);
	int argc = 0;
	if (line == NULL) {
		snprintf(err, errcap, "out of memory");
		return -1;
	}
	int64_t deadline = now_ms() + CTL_TIMEOUT_MS;
	long n = read_line(fd, line, CTL_ARG_MAX + 1, deadline);
	if (n == -3) {
		snprintf(err, errcap, "no request within %d ms", CTL_TIMEOUT_MS);
		goto fail;
	}
	if (n < 0 || strcmp(line, CTL_MAGIC) != 0) {
		snprintf(err, errcap, "not a control request (\"%s\" expected)", CTL_MAGIC);
		goto fail;
	}
	for (;;) {
		n = read_line(fd, line, CTL_ARG_MAX + 1, deadline);
		if (n == 0)
			break;
		if (n == -2)
			snprintf(err, errcap, "an argument over %d bytes", CTL_ARG_MAX);
		else if (n == -3)
			snprintf(err, errcap, "the request did not end within %d ms", CTL_TIMEOUT_MS);
		else if (n < 0)
			snprintf(err, errcap, "the request broke off");
		else if (argc + 1 >= cap)
			snprintf(err, errcap, "more than %d arguments", cap - 1);
		if (n < 0 || argc + 1 >= cap)
			goto fail;
		if ((argv[argc] = strdup(line)) == NULL) {
			snprintf(err, errcap, "out of memory");
			goto fail;
		}
		argc++;
	}
	if (argc == 0) {
		snprintf(err, errcap, "no command");
		goto fail;
	}
	argv[argc] = NULL;
	free(line);
	return argc;
fail:
	ctl_free_args(argv, argc);
	free(line);
	return -1;
}

/* A ctl_stream(): the line being written, sent when it ends. */
struct ctl_out {
	int fd;
	char kind;
	int failed;
	size_t n;
	char line[CTL_ARG_MAX];
};

static void send_line(struct ctl_out *o)
{
	char pre[2] = { o->kind, ' ' };
	if (!o->failed && (write_all(o->fd, pre, 2) != 0 || write_all(o->fd, o->line, o->n) != 0 ||
			   write_all(o->fd, "\n", 1) != 0))
		o->failed = 1;
	o->n = 0;
}

static ssize_t ctl_write(void *cookie, const char *buf, size_t size)
{
	struct ctl_out *o = cookie;
	for (size_t i = 0; i < size; i++) {
		if (buf[i] == '\n' || o->n == sizeof o->line) {
			send_line(o);
			if (buf[i] == '\n')
				continue;
		}
		o->line[o->n++] = buf[i];
	}
	return (ssize_t)size;
}

static int ctl_close(void *cookie)
{
	struct ctl_out *o = cookie;
	if (o->n > 0)
		send_line(o);
	free(o);
	return 0;
}

FILE *ctl_stream(int fd, char kind)
{
	struct ctl_out *o = calloc(1, sizeof *o);
	if (o == NULL)
		return NULL;
	o->fd = fd;
	o->kind = kind;
	cookie_io_functions_t io = { .write = ctl_write, .close = ctl_close };
	FILE *f = fopencookie(o, "w", io);
	if (f == NULL)
		free(o);
	return f;
}

int ctl_send_status(int fd, int status)
{
	char b[16];
	int n = snprintf(b, sizeof b, "x %d\n", status);
	return write_all(fd, b, (size_t)n);
}

int ctl_peer_allowed(int fd, uid_t *uid)
{
	struct ucred cr;
	socklen_t l = sizeof cr;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) != 0) {
		*uid = (uid_t)-1;
		return 0;
	}
	*uid = cr.uid;
	return cr.uid == 0 || cr.uid == geteuid();
}
