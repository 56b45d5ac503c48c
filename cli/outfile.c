/*
 * outfile.c: the other files a command reads and writes: the same file given
 * twice, an output written beside its path and renamed (or in place, for a
 * device or a pipe), a whole file read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static int file_id(const char *path, int std_fd, struct stat *st)
{
	return strcmp(path, "-") == 0 ? fstat(std_fd, st) : stat(path, st);
}

int same_file(const char *a, int std_a, const char *b, int std_b)
{
	struct stat x, y;
	return file_id(a, std_a, &x) == 0 && file_id(b, std_b, &y) == 0 && x.st_dev == y.st_dev &&
	       x.st_ino == y.st_ino;
}

int out_open(const char *cmd, const char *out, int binary, out_file_t *o)
{
	struct stat st, so;
	*o = (out_file_t){ .fd = -1, .name = out };
	if (out[0] == 0)
		return fail(cmd, NULL, "-o: an empty file name");
	if (strcmp(out, "-") == 0 || (stat(out, &st) == 0 && fstat(1, &so) == 0 &&
				      st.st_dev == so.st_dev && st.st_ino == so.st_ino)) {
		o->fd = 1; /* "-", /dev/stdout, /proc/self/fd/1: never opened anew */
		if (strcmp(out, "-") == 0)
			o->name = "standard output";
	} else if (stat(out, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode))
			return fail(cmd, out, "is a directory");
		o->fd = open(out, O_WRONLY | O_NOCTTY | O_CLOEXEC); /* a FIFO waits for a reader */
		if (o->fd < 0)
			return fail(cmd, out, "cannot open it for writing: %s", strerror(errno));
	} else {
		int e = dnsnap_path_target(out, o->target, sizeof o->target);
		char refusal[8400];
		if (e != 0)
			return fail(cmd, out, "%s", dnsnap_path_strerror(out, e, refusal, sizeof refusal));
		snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", o->target, (long)getpid());
		o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (o->fd < 0) { /* named by OUT: the temporary is ours, not the user's */
			char why[4300];
			return fail(cmd, out, "%s",
				    dnsnap_path_create_error(o->tmp, errno, why, sizeof why));
		}
		o->replace = 1;
	}
	if (binary && isatty(o->fd)) {
		out_close(o, 0, 0);
		return fail(cmd, NULL, "%s is a terminal; not writing binary data to it (use -o FILE "
			    "or a pipe)", o->name);
	}
	return 0;
}

int out_close(out_file_t *o, int ok, int closed)
{
	int err = 0;
	if (o->fd > 1 && !closed && close(o->fd) != 0)
		err = -errno;
	o->fd = -1;
	if (!o->replace)
		return err;
	struct stat st;
	/* like a snapshot: the replaced file's mode (and owner, where permitted) */
	if (ok && err == 0 && stat(o->target, &st) == 0 && S_ISREG(st.st_mode)) {
		if (chown(o->tmp, st.st_uid, st.st_gid) != 0 && errno == EPERM &&
		    chown(o->tmp, (uid_t)-1, st.st_gid) != 0) {
			/* not permitted: the file stays ours */
		}
		if (chmod(o->tmp, st.st_mode & 07777) != 0)
			err = -errno;
	}
	if (ok && err == 0 && rename(o->tmp, o->target) != 0)
		err = -errno;
	if (!ok || err != 0)
		unlink(o->tmp); /* never leave half a stream behind */
	return err;
}

int slurp(const char *path, uint8_t **out, size_t *out_len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	if (f == NULL)
		return -errno;
	size_t cap = 4096, n = 0;
	uint8_t *buf = malloc(cap);
	errno = 0;
	while (buf != NULL) {
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
		uint8_t *nb = realloc(buf, cap *= 2);
		if (nb == NULL)
			free(buf);
		buf = nb;
	}
	int err = ferror(f) ? (errno ? -errno : -EIO) : 0; /* EISDIR: a directory */
	if (f != stdin)
		fclose(f);
	if (buf == NULL)
		return -ENOMEM;
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*out_len = n;
	return 0;
}
