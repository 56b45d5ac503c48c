/*
 * ctl.c: the control channel's socket names and protocol, both ends (ctl.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/random.h>
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
	uint32_t rnd = 0;
	if (getrandom(&rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
		rnd = (uint32_t)ctl_now_ms() ^ (uint32_t)pid << 16;
	int n = snprintf(out, cap, "%s.ctl.%ld.%08x", target, pid, rnd);
	if (n < 0 || (size_t)n >= cap) {
		snprintf(err, errcap, "%s.ctl.%ld.%08x: too long a path", target, pid, rnd);
		return -1;
	}
	return 0;
}

int ctl_addr(const char *path, struct sockaddr_un *a, int *dirfd)
{
	*a = (struct sockaddr_un){ .sun_family = AF_UNIX };
	*dirfd = -1;
	size_t l = strlen(path);
	if (l < sizeof a->sun_path) {
		memcpy(a->sun_path, path, l + 1);
		return 0;
	}
	const char *slash = strrchr(path, '/');
	char dir[CTL_PATH_MAX];
	if (slash == NULL || (size_t)(slash - path) >= sizeof dir) {
		errno = ENAMETOOLONG;
		return -1;
	}
	snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), slash == path ? "/" : path);
	int fd = open(dir[0] ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int n = snprintf(a->sun_path, sizeof a->sun_path, "/proc/self/fd/%d/%s", fd, slash + 1);
	if (n < 0 || (size_t)n >= sizeof a->sun_path) {
		close(fd);
		errno = ENAMETOOLONG;
		return -1;
	}
	*dirfd = fd;
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

/* Whether a name is BASE.ctl.PID.RAND (RAND 8 hex digits) */
static int socket_name(const char *name, const char *base)
{
	size_t bl = strlen(base);
	if (strncmp(name, base, bl) != 0 || strncmp(name + bl, ".ctl.", 5) != 0)
		return 0;
	const char *p = name + bl + 5, *q = p;
	while (*q >= '0' && *q <= '9')
		q++;
	if (q == p || *p == '0' || *q != '.' || strlen(q + 1) != 8)
		return 0;
	for (q++; *q; q++)
		if (!((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f')))
			return 0;
	return 1;
}

/* Liveness is a connect: ECONNREFUSED, nobody listens (a server killed);
 * anything else (connected, a full backlog) is alive */
static int socket_alive(const char *path)
{
	struct sockaddr_un a;
	int dirfd;
	if (ctl_addr(path, &a, &dirfd) != 0)
		return 1; /* not known dead */
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int r = fd < 0 ? 0 : connect(fd, (struct sockaddr *)&a, sizeof a), e = errno;
	if (fd >= 0)
		close(fd);
	if (dirfd >= 0)
		close(dirfd);
	return r == 0 || (e != ECONNREFUSED && e != ENOENT);
}

static int by_pid(const void *a, const void *b)
{
	const char *x = a, *y = b;
	const char *px = strstr(x, ".ctl."), *py = strstr(y, ".ctl.");
	long i = px ? atol(px + 5) : 0, j = py ? atol(py + 5) : 0;
	return i < j ? -1 : i > j ? 1 : strcmp(x, y);
}

/* Each socket BASE.ctl.PID.RAND of @p snap's directory: @p fn(path, st) */
static int each_socket(const char *snap, void (*fn)(void *arg, const char *path,
						    const struct stat *st),
		       void *arg, char *err, size_t errcap)
{
	char dir[CTL_PATH_MAX], base[1024], path[CTL_PATH_MAX + 1024 + 2];
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
		struct stat st;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if (!socket_name(de->d_name, base) || lstat(path, &st) != 0 || !S_ISSOCK(st.st_mode))
			continue;
		fn(arg, path, &st);
	}
	closedir(d);
	return 0;
}

struct found {
	char (*out)[CTL_PATH_MAX];
	int n;
	uid_t owner;             /* the snapshot's */
	FILE *note;
};

static void add_live(void *arg, const char *path, const struct stat *st)
{
	struct found *f = arg;
	uid_t me = geteuid();
	if (me != 0 && st->st_uid != me && st->st_uid != 0 && st->st_uid != f->owner) {
		if (f->note != NULL)
			fprintf(f->note, "dnsnap control: %s: skipped: owned by uid %ld (not you, "
				"root or the snapshot's owner)\n", path, (long)st->st_uid);
		return;
	}
	if (f->n < CTL_SERVERS_MAX && strlen(path) < CTL_PATH_MAX && socket_alive(path))
		snprintf(f->out[f->n++], CTL_PATH_MAX, "%s", path);
}

int ctl_find(const char *snap, char out[][CTL_PATH_MAX], FILE *note, char *err, size_t errcap)
{
	struct stat st;
	struct found f = { out, 0, stat(snap, &st) == 0 ? st.st_uid : (uid_t)-1, note };
	if (each_socket(snap, add_live, &f, err, errcap) != 0)
		return -1;
	qsort(out, (size_t)f.n, CTL_PATH_MAX, by_pid);
	return f.n;
}

static void unlink_dead(void *arg, const char *path, const struct stat *st)
{
	(void)arg;
	if (st->st_uid == geteuid() && !socket_alive(path))
		unlink(path);
}

void ctl_remove_stale(const char *snap)
{
	char err[256];
	each_socket(snap, unlink_dead, NULL, err, sizeof err);
}

/* ------------------------------------------------------------- framing */

int64_t ctl_now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* @p n bytes to @p fd (blocking, or waiting in poll() until @p deadline ms
 * on a non-blocking one). @return 0, -1 (failed), -3 (deadline) */
static int write_all(int fd, const char *p, size_t n, int64_t deadline)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			int64_t left = deadline - ctl_now_ms();
			struct pollfd pf = { .fd = fd, .events = POLLOUT };
			if (left <= 0 || poll(&pf, 1, (int)left) == 0)
				return -3;
			continue;
		}
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* ------------------------------------------------------------- client */

/* A non-blocking connect by @p deadline: a listener whose backlog is full
 * (EAGAIN) is tried again every 10 ms. @return the socket, or -1 with why
 * (*refused: ECONNREFUSED, nobody listens there) */
static int connect_unix(const char *path, int64_t deadline, int *refused, char *why,
			size_t whycap)
{
	struct sockaddr_un a;
	int dirfd;
	*refused = 0;
	if (ctl_addr(path, &a, &dirfd) != 0) {
		snprintf(why, whycap, "%s: %s", path, strerror(errno));
		return -1;
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(why, whycap, "socket: %s", strerror(errno));
		if (dirfd >= 0)
			close(dirfd);
		return -1;
	}
	while (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN && ctl_now_ms() < deadline) {
			poll(NULL, 0, 10);
			continue;
		}
		*refused = errno == ECONNREFUSED;
		snprintf(why, whycap, "%s: %s", path, errno == EAGAIN
			 ? "its backlog stayed full (the server is busy)" : strerror(errno));
		close(fd);
		if (dirfd >= 0)
			close(dirfd);
		return -1;
	}
	if (dirfd >= 0)
		close(dirfd);
	return fd;
}

/* The request: the magic line, "a ARG" per argument, an empty line */
static int send_request(int fd, int argc, char *const *argv, int64_t deadline)
{
	if (write_all(fd, CTL_MAGIC "\n", sizeof CTL_MAGIC, deadline) != 0)
		return -1;
	for (int i = 0; i < argc; i++)
		if (write_all(fd, "a ", 2, deadline) != 0 ||
		    write_all(fd, argv[i], strlen(argv[i]), deadline) != 0 ||
		    write_all(fd, "\n", 1, deadline) != 0)
			return -1;
	return write_all(fd, "\n", 1, deadline);
}

/* A reply being read: bytes in, lines out. */
struct reply_buf {
	int fd;
	size_t n, off;
	char b[65536];
};

/* The next line of @p r (NUL-terminated in place, without its newline) by
 * @p deadline. @return it, or NULL with *st -1 (closed, or a line over
 * CTL_ARG_MAX + 8 bytes) or -3 (deadline) */
static char *reply_line(struct reply_buf *r, int64_t deadline, int *st)
{
	for (;;) {
		char *nl = memchr(r->b + r->off, '\n', r->n - r->off);
		if (nl != NULL) {
			char *line = r->b + r->off;
			*nl = 0;
			r->off = (size_t)(nl - r->b) + 1;
			return line;
		}
		if (r->off > 0) { /* what is left moved to the front */
			memmove(r->b, r->b + r->off, r->n - r->off);
			r->n -= r->off;
			r->off = 0;
		}
		if (r->n == sizeof r->b) {
			*st = -1;
			return NULL;
		}
		int64_t left = deadline - ctl_now_ms();
		struct pollfd pf = { .fd = r->fd, .events = POLLIN };
		if (left <= 0 || poll(&pf, 1, (int)left) == 0) {
			*st = -3;
			return NULL;
		}
		ssize_t k = read(r->fd, r->b + r->n, sizeof r->b - r->n);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0) {
			*st = -1;
			return NULL;
		}
		r->n += (size_t)k;
	}
}

int ctl_call(const char *sock, int argc, char *const *argv, FILE *out, FILE *err,
	     const struct ctl_bounds *b, char *why, size_t whycap)
{
	int64_t now = ctl_now_ms(), end = now + b->total_ms;
	int refused;
	int fd = connect_unix(sock, now + b->silence_ms < end ? now + b->silence_ms : end,
			      &refused, why, whycap);
	if (fd < 0)
		return refused ? CTL_DEAD : -1;
	int rc = -1, st = 0;
	struct reply_buf *r = malloc(sizeof *r);
	if (r == NULL) {
		snprintf(why, whycap, "out of memory");
		goto out;
	}
	r->fd = fd;
	r->n = r->off = 0;
	/* a request not taken whole may still have its answer (a refusal: the
	 * server busy, or stopping): read on */
	send_request(fd, argc, argv, end);
	for (;;) {
		/* a reply may take its time (a publish of millions of entries):
		 * the server says "w" meanwhile; a silence of silence_ms is a
		 * server gone, and total_ms bounds the whole */
		int64_t t = ctl_now_ms() + b->silence_ms;
		char *line = reply_line(r, t < end ? t : end, &st);
		if (line == NULL && st == -3) {
			if (ctl_now_ms() >= end)
				snprintf(why, whycap, "%s: no whole reply within %u s (--timeout)", sock,
					 (unsigned)(b->total_ms / 1000));
			else
				snprintf(why, whycap, "%s: the server said nothing for %u ms", sock,
					 b->silence_ms);
			goto out;
		}
		if (line == NULL)
			goto broken;
		if (strcmp(line, "w") == 0)
			continue;
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
	free(r);
	close(fd);
	return rc;
}

/* ------------------------------------------------------------- server */

void ctl_free_args(char **argv, int argc)
{
	for (int i = 0; i < argc; i++)
		free(argv[i]);
}

size_t ctl_request_end(const char *buf, size_t n)
{
	if (n > 0 && buf[0] == '\n')
		return 1;
	for (size_t i = 1; i < n; i++)
		if (buf[i] == '\n' && buf[i - 1] == '\n')
			return i + 1;
	return 0;
}

int ctl_parse_request(const char *buf, size_t n, char **argv, int cap, char *err,
		      size_t errcap)
{
	int argc = 0;
	const char *p = buf, *end = buf + n;
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	if (nl == NULL || (size_t)(nl - p) != strlen(CTL_MAGIC) ||
	    memcmp(p, CTL_MAGIC, strlen(CTL_MAGIC)) != 0) {
		snprintf(err, errcap, "not a control request (\"%s\" expected first)", CTL_MAGIC);
		return -1;
	}
	for (p = nl + 1; p < end && (nl = memchr(p, '\n', (size_t)(end - p))) != NULL;
	     p = nl + 1) {
		size_t l = (size_t)(nl - p);
		if (l == 0)
			break;
		if (l < 2 || p[0] != 'a' || p[1] != ' ' || memchr(p, 0, l) != NULL) {
			snprintf(err, errcap, "argument %d: not a line \"a TEXT\"", argc + 1);
			goto fail;
		}
		if (l - 2 >= CTL_ARG_MAX) {
			snprintf(err, errcap, "argument %d: over %d bytes", argc + 1, CTL_ARG_MAX - 1);
			goto fail;
		}
		if (argc + 1 >= cap) {
			snprintf(err, errcap, "more than %d arguments", cap - 1);
			goto fail;
		}
		if ((argv[argc] = strndup(p + 2, l - 2)) == NULL) {
			snprintf(err, errcap, "out of memory");
			goto fail;
		}
		argc++;
	}
	if (argc == 0) {
		snprintf(err, errcap, "no command");
		return -1;
	}
	argv[argc] = NULL;
	return argc;
fail:
	ctl_free_args(argv, argc);
	return -1;
}

/* A ctl_stream(): the line being written, framed when it ends. */
struct ctl_out {
	FILE *to;
	char kind;
	size_t n;
	char line[CTL_ARG_MAX];
};

static void send_line(struct ctl_out *o)
{
	fprintf(o->to, "%c %.*s\n", o->kind, (int)o->n, o->line);
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

FILE *ctl_stream(FILE *to, char kind)
{
	struct ctl_out *o = calloc(1, sizeof *o);
	if (o == NULL)
		return NULL;
	o->to = to;
	o->kind = kind;
	cookie_io_functions_t io = { .write = ctl_write, .close = ctl_close };
	FILE *f = fopencookie(o, "w", io);
	if (f == NULL) {
		free(o);
		return NULL;
	}
	setvbuf(f, NULL, _IOLBF, 0); /* a line at a time: "o" and "e" stay in order */
	return f;
}
