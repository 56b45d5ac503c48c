/*
 * snap_path.c: where a snapshot is published, and who may publish it.
 *
 * A snapshot path may be a symbolic link (cache.snap -> cache-2026.snap):
 * writers follow it to the final target, write the temporary beside that
 * target and rename over it, so the link stays a link.
 *
 * The writers' lock (dnsnap_snap_lock(), spec/DECISIONS.md "Writers"): an
 * exclusive flock(2) on the snapshot file itself, or on its directory while
 * the file does not exist. Publishing renames a new inode over the path, so a
 * writer that waited on the old inode finds, once it holds the lock, that the
 * path names another file: it lets go and locks again. No lock file is ever
 * left behind, and readers never lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../format/internal.h"
#include "alloc.h"
#include "dnsnap.h"

#define PATH_CAP 4096

/* The directory of @p path ("." for a bare name) into @p dir */
static void dir_of(const char *path, char *dir, size_t cap)
{
	const char *slash = strrchr(path, '/');
	if (slash == NULL)
		snprintf(dir, cap, ".");
	else
		snprintf(dir, cap, "%.*s", slash == path ? 1 : (int)(slash - path), path);
}

/*
 * Whether the link @p cur (lstat: @p st) may be followed: not when it lies in
 * a sticky directory others may write (/tmp) and is owned by neither the
 * caller nor that directory's owner: the kernel's fs.protected_symlinks
 * rule, which a hand-made walk would bypass. @p why (may be NULL) says why.
 */
static int link_ok(const char *cur, const struct stat *st, char *why, size_t cap)
{
	char dir[PATH_CAP];
	struct stat ds;
	dir_of(cur, dir, sizeof dir);
	if (stat(dir, &ds) != 0 || !(ds.st_mode & S_ISVTX) || !(ds.st_mode & S_IWOTH) ||
	    st->st_uid == geteuid() || st->st_uid == ds.st_uid)
		return 1;
	if (why != NULL)
		snprintf(why, cap, "%s is a symbolic link owned by uid %u in %s, a sticky "
			 "directory others may write, and is neither yours nor the directory "
			 "owner's: not followed (anyone there could have planted it)", cur,
			 (unsigned)st->st_uid, dir);
	return 0;
}

/* Whether the final target's directory keeps others from replacing it: not
 * writable by others, or sticky. */
static int dir_ok(const char *target, char *why, size_t cap)
{
	char dir[PATH_CAP];
	struct stat ds;
	dir_of(target, dir, sizeof dir);
	if (stat(dir, &ds) != 0 || !(ds.st_mode & S_IWOTH) || (ds.st_mode & S_ISVTX))
		return 1;
	if (why != NULL)
		snprintf(why, cap, "directory %s is writable by others and not sticky (mode "
			 "%04o): anyone could replace what is written there", dir,
			 (unsigned)(ds.st_mode & 07777));
	return 0;
}

/* The walk of dnsnap_path_target(); @p why (may be NULL) says why on -EPERM. */
static int walk(const char *path, char *out, size_t cap, char *why, size_t why_cap)
{
	char cur[PATH_CAP], link[PATH_CAP];
	size_t len = strlen(path);
	if (len >= sizeof cur)
		return -ENAMETOOLONG;
	memcpy(cur, path, len + 1);
	for (int hops = 0;; hops++) {
		struct stat st;
		if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
			break;
		if (hops == 40)
			return -ELOOP;
		if (!link_ok(cur, &st, why, why_cap))
			return -EPERM;
		ssize_t n = readlink(cur, link, sizeof link - 1);
		if (n < 0)
			return -errno;
		link[n] = 0;
		const char *slash = strrchr(cur, '/');
		size_t dl = link[0] == '/' || slash == NULL ? 0 : (size_t)(slash - cur) + 1;
		if (dl + (size_t)n >= sizeof cur)
			return -ENAMETOOLONG;
		memcpy(cur + dl, link, (size_t)n + 1);
	}
	if (!dir_ok(cur, why, why_cap))
		return -EPERM;
	len = strlen(cur);
	if (len >= cap)
		return -ENAMETOOLONG;
	memcpy(out, cur, len + 1);
	return 0;
}

int dnsnap_path_target(const char *path, char *out, size_t cap)
{
	return walk(path, out, cap, NULL, 0);
}

const char *dnsnap_path_strerror(const char *path, int err, char *out, size_t cap)
{
	char target[PATH_CAP];
	if (err != -EPERM || walk(path, target, sizeof target, out, cap) != -EPERM)
		snprintf(out, cap, "%s", err == -ENAMETOOLONG ? "path too long" : strerror(-err));
	return out;
}

const char *dnsnap_path_create_error(const char *path, int err, char *out, size_t cap)
{
	char dir[PATH_CAP], up[PATH_CAP];
	struct stat st;
	dir_of(path, dir, sizeof dir);
	switch (err) {
	case ENOENT:
	case ENOTDIR:
		/* the deepest ancestor that exists tells: not a directory, or the
		 * next one down is missing */
		snprintf(up, sizeof up, "%s", dir);
		while (stat(up, &st) != 0 && strcmp(up, ".") != 0 && strcmp(up, "/") != 0) {
			char parent[PATH_CAP];
			dir_of(up, parent, sizeof parent);
			if (stat(parent, &st) == 0 && S_ISDIR(st.st_mode))
				break; /* up is the first one missing */
			snprintf(up, sizeof up, "%s", parent);
		}
		if (stat(up, &st) == 0 && !S_ISDIR(st.st_mode))
			snprintf(out, cap, "cannot create: %s is not a directory", up);
		else if (stat(dir, &st) != 0)
			snprintf(out, cap, "cannot create: directory %s does not exist", dir);
		else
			snprintf(out, cap, "cannot create: %s", strerror(err));
		break;
	case EACCES:
	case EPERM:
		snprintf(out, cap, "cannot create: no permission to write in directory %s", dir);
		break;
	case EROFS:
		snprintf(out, cap, "cannot create: directory %s is on a read-only file system",
			 dir);
		break;
	case ENOSPC:
		snprintf(out, cap, "cannot create: no space left on the device of %s", dir);
		break;
	case EISDIR:
		snprintf(out, cap, "cannot create: it is a directory");
		break;
	default:
		snprintf(out, cap, "cannot create: %s", strerror(err));
	}
	return out;
}

struct dnsnap_snap_lock {
	int fd;
};

static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Open what to lock: the target file, or its directory while it does not
 * exist. O_NONBLOCK: opening a FIFO must not wait for a writer. */
static int open_lockable(const char *path, const char *target, int *on_dir, dnsnap_diag_t *d)
{
	*on_dir = 0;
	int fd = open(target, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		char dir[PATH_CAP], why[PATH_CAP + 64];
		dir_of(target, dir, sizeof dir);
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		*on_dir = 1;
		if (fd < 0) { /* the file is to be created there: say why it cannot be */
			int e = errno;
			return dnsnap__diag(d, -e, 0, "%s: %s", path,
					    dnsnap_path_create_error(target, e, why, sizeof why));
		}
	}
	if (fd < 0 && errno == ENOTDIR) { /* a file where a directory should be */
		char why[PATH_CAP + 64];
		return dnsnap__diag(d, -ENOTDIR, 0, "%s: %s", path,
				    dnsnap_path_create_error(target, ENOTDIR, why, sizeof why));
	}
	if (fd < 0)
		return dnsnap__diag(d, -errno, 0, "%s: cannot lock it: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		return dnsnap__diag(d, -e, 0, "%s: %s", path, strerror(e));
	}
	if (!*on_dir && !S_ISREG(st.st_mode)) {
		close(fd);
		return dnsnap__diag(d, DNSNAP_EINVAL, 0, "%s: not a regular file: a snapshot is "
				    "written beside its path and renamed over it", path);
	}
	return fd;
}

/* Whether the path still names what fd holds: the same file, or (on_dir)
 * still nothing in the same directory. */
static int still_names(const char *path, const char *target, int fd, int on_dir)
{
	char now[PATH_CAP];
	struct stat held, st;
	if (dnsnap_path_target(path, now, sizeof now) != 0 || strcmp(now, target) != 0 ||
	    fstat(fd, &held) != 0)
		return 0;
	if (on_dir)
		return lstat(target, &st) != 0 && errno == ENOENT;
	return stat(target, &st) == 0 && st.st_dev == held.st_dev && st.st_ino == held.st_ino;
}

int dnsnap_snap_lock(const char *path, int wait_seconds, dnsnap_snap_lock_t **out,
		     dnsnap_diag_t *d)
{
	if (path == NULL || out == NULL)
		return dnsnap__diag(d, DNSNAP_EINVAL, 0, "invalid argument");
	*out = NULL;
	double t0 = seconds();
	long nap_ns = 5 * 1000 * 1000;
	for (;;) {
		char target[PATH_CAP];
		int on_dir, e = dnsnap_path_target(path, target, sizeof target);
		char why[2 * PATH_CAP];
		if (e != 0)
			return dnsnap__diag(d, e, 0, "%s: %s", path,
					    dnsnap_path_strerror(path, e, why, sizeof why));
		int fd = open_lockable(path, target, &on_dir, d);
		if (fd < 0)
			return fd;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			if (still_names(path, target, fd, on_dir)) {
				dnsnap_snap_lock_t *l = dnsnap_malloc(sizeof *l);
				if (l == NULL) {
					close(fd);
					return dnsnap__diag(d, DNSNAP_ENOMEM, 0, "%s: out of memory",
							    path);
				}
				l->fd = fd;
				*out = l;
				return DNSNAP_OK;
			}
			close(fd); /* replaced or created meanwhile: lock what it is now */
			continue;
		}
		e = errno;
		close(fd);
		if (e != EWOULDBLOCK && e != EINTR)
			return dnsnap__diag(d, -e, 0, "%s: cannot lock it: %s", path, strerror(e));
		if (wait_seconds >= 0 && seconds() - t0 >= (double)wait_seconds)
			return dnsnap__diag(d, -EAGAIN, 0, "%s: another dnsnap is writing it "
					    "(waited %d s)", path, wait_seconds);
		struct timespec ts = { 0, nap_ns };
		nanosleep(&ts, NULL);
		if (nap_ns < 100 * 1000 * 1000)
			nap_ns *= 2;
	}
}

void dnsnap_snap_unlock(dnsnap_snap_lock_t *l)
{
	if (l == NULL)
		return;
	close(l->fd); /* closing the only descriptor releases the flock */
	dnsnap_free(l);
}
