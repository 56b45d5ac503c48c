/*
 * util.c: what the commands share (cli.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <ldns/ldns.h>

#include "byteorder.h"
#include "cli.h"
#include "print.h"

/* s on stderr with its control characters as \ooo: one message, one line */
static void put_line(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			fprintf(stderr, "\\%03o", *p);
		else
			fputc(*p, stderr);
}

int fail(const char *cmd, const char *file, const char *fmt, ...)
{
	char msg[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	flockfile(stderr); /* one message whole: diff's reader threads report too */
	fprintf(stderr, "dnsnap %s: ", cmd);
	if (file != NULL) {
		put_line(file);
		fputs(": ", stderr);
	}
	put_line(msg);
	fputc('\n', stderr);
	funlockfile(stderr);
	return EXIT_USAGE;
}

int number(const char *cmd, const char *opt, const char *v, unsigned long long max,
	   unsigned long long *out)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	if (errno || *end || v[0] == '-' || v[0] == 0 || x > max)
		return fail(cmd, NULL, "%s: not a number up to %llu: %s", opt, max, v);
	*out = x;
	return 0;
}

int hex_tag(const char *h, uint8_t *tag, size_t *len)
{
	size_t n = strlen(h);
	if (n % 2 || n / 2 > DNSNAP_TAG_MAX)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!((h[i] >= '0' && h[i] <= '9') || (h[i] >= 'a' && h[i] <= 'f') ||
		      (h[i] >= 'A' && h[i] <= 'F')))
			return -1;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;
		if (sscanf(h + 2 * i, "%2x", &v) != 1)
			return -1;
		tag[i] = (uint8_t)v;
	}
	*len = n / 2;
	return 0;
}

int open_snap(const char *cmd, const char *path, dnsnap_snap_t **s)
{
	dnsnap_diag_t d;
	int err = dnsnap_snap_open(path, s, &d);
	if (err != DNSNAP_OK)
		return fail(cmd, NULL, "%s", d.msg); /* the message names the file */
	return 0;
}

const char *diag_reason(const char *path, const char *msg)
{
	size_t pl = strlen(path);
	if (strncmp(msg, path, pl) == 0 && msg[pl] == ':' && msg[pl + 1] == ' ')
		return msg + pl + 2;
	return msg;
}

const char *err_name(int err)
{
	const char *name = dnsnap_errname(err);
	if (name == NULL && err < 0 && err > -4096)
		name = strerrorname_np(-err);
	return name;
}

int scan_snap(const char *cmd, dnsnap_snap_t *s, const uint8_t *prefix, size_t prefix_len,
	      int (*fn)(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
			size_t entry_len),
	      void *arg, uint64_t *damaged)
{
	dnsnap_scan_stats_t st;
	dnsnap_diag_t d;
	int err = dnsnap_snap_scan(s, prefix, prefix_len, fn, arg, &st, &d);
	if (damaged != NULL)
		*damaged = st.damaged;
	if (err == DNSNAP_OK)
		return 0;
	if (st.damaged > 0 || st.bad_pages > 0) {
		/* "SNAP: N damaged entries skipped (the first: entry 17 (at 0x..): ...)" */
		const char *path = dnsnap_snap_path(s), *first = d.msg;
		size_t pl = strlen(path);
		if (strncmp(first, path, pl) == 0 && first[pl] == ':' && first[pl + 1] == ' ')
			first += pl + 2;
		fail(cmd, path, "%llu damaged entr%s skipped (the first: %s); run dnsnap verify",
		     (unsigned long long)st.damaged, st.damaged == 1 ? "y" : "ies", first);
		return err == 1 ? 1 : EXIT_USAGE;
	}
	if (err == 1)
		return 1;
	return fail(cmd, NULL, "%s", d.msg); /* the message names the file */
}

int target_ok(const char *cmd, const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return 0; /* none yet: made */
	if (!S_ISREG(st.st_mode))
		return fail(cmd, path, "not a regular file: a snapshot is written beside its path "
			    "and renamed over it");
	dnsnap_snap_t *s;
	if (open_snap(cmd, path, &s))
		return EXIT_USAGE;
	dnsnap_snap_close(s);
	return 0;
}

int publish_fail(const char *cmd, const char *path, int err, const dnsnap_diag_t *d,
		 const dnsnap_publish_stats_t *ps, unsigned long long wait_seconds)
{
	if (err == -EAGAIN)
		return fail(cmd, path, "another dnsnap is writing it (waited %llu s; see --wait)",
			    wait_seconds);
	if (err == DNSNAP_ECHECKSUM && ps->write.base_bad > 0)
		return fail(cmd, NULL, "%s (--drop-damaged writes it without them)", d->msg);
	if (d->msg[0] == 0)
		return fail(cmd, path, "%s", err < 0 && err > -4096 ? strerror(-err)
					      : dnsnap_strerror(err));
	return fail(cmd, NULL, "%s", d->msg); /* the library's message names the file */
}

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
		if (e != 0)
			return fail(cmd, out, "%s", strerror(-e));
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

/* ---------------------------------------------------------------- filters */

/* TYPEnnn or CLASSnnn (RFC 3597): nnn in 1..65535, digits only; else -1 */
static long generic_number(const char *v, const char *prefix)
{
	size_t pl = strlen(prefix);
	if (strncasecmp(v, prefix, pl) != 0 || v[pl] < '0' || v[pl] > '9')
		return -1;
	char *end;
	errno = 0;
	unsigned long n = strtoul(v + pl, &end, 10);
	return *end || errno || n == 0 || n > 65535 ? -2 : (long)n;
}

long rr_type_arg(const char *v)
{
	long n = generic_number(v, "TYPE");
	if (n != -1)
		return n < 0 ? -1 : n;
	long t = print_type_by_name(v); /* one dig names and ldns does not (NINFO) */
	if (t > 0)
		return t;
	t = (long)ldns_get_rr_type_by_name(v); /* a mnemonic */
	return t > 0 && t <= 65535 ? t : -1;
}

long rr_class_arg(const char *v)
{
	long n = generic_number(v, "CLASS");
	if (n != -1)
		return n < 0 ? -1 : n;
	long c = (long)ldns_get_rr_class_by_name(v);
	return c > 0 && c <= 65535 ? c : -1;
}

int filter_opt(const char *cmd, filter_t *f, int c, const char *v)
{
	const char *opt = c == OPT_NAME ? "--name" : c == OPT_ZONE ? "--zone"
			  : c == OPT_TYPE ? "--type" : "--tag";
	size_t *n = c == OPT_TYPE ? &f->n_type : c == OPT_TAG ? &f->n_tag : &f->n_prefix;
	if (c != OPT_NAME && c != OPT_ZONE && c != OPT_TYPE && c != OPT_TAG)
		return 0;
	if (*n == FILTER_MAX)
		return fail(cmd, NULL, "%s: at most %d of them", opt, FILTER_MAX);
	f->any = 1;
	if (c == OPT_TAG) {
		if (hex_tag(v, f->tag[*n], &f->tag_len[*n]) != 0)
			return fail(cmd, NULL, "--tag: not hex of at most 255 bytes: %s", v);
		++*n;
		return 1;
	}
	if (c == OPT_TYPE) {
		long t = rr_type_arg(v);
		if (t < 0)
			return fail(cmd, NULL, "--type %s: unknown type name (a mnemonic such as AAAA, "
				    "or TYPE1 to TYPE65535)", v);
		f->type[(*n)++] = (uint16_t)t;
		return 1;
	}
	/* --name and --zone are key prefixes: the name's reversed labels, with
	 * the ending 0 for a name (its keys only) and without for a zone */
	if (v[0] == 0)
		return fail(cmd, NULL, "%s: an empty name (the root is \".\")", opt);
	ldns_rdf *dn = NULL;
	ldns_status st = ldns_str2rdf_dname(&dn, v);
	int err = st != LDNS_STATUS_OK || ldns_rdf_size(dn) > DNSNAP_NAME_MAX ? DNSNAP_ELABEL
		  : dnsnap_key_zone_prefix(ldns_rdf_data(dn), ldns_rdf_size(dn), f->prefix[*n],
					   sizeof f->prefix[*n] - 1, &f->prefix_len[*n]);
	ldns_rdf_deep_free(dn);
	if (err != DNSNAP_OK) /* ldns says why: a label over 63 bytes, an empty label... */
		return fail(cmd, NULL, "%s %s: not a valid domain name (%s)", opt, v,
			    st != LDNS_STATUS_OK ? ldns_get_errorstr_by_id(st) : "over 255 bytes");
	if (c == OPT_NAME)
		f->prefix[*n][f->prefix_len[*n]++] = 0;
	++*n;
	return 1;
}

static int under(const uint8_t *key, size_t key_len, const uint8_t *prefix, size_t len)
{
	return key_len >= len && memcmp(key, prefix, len) == 0;
}

int filter_ready(const char *cmd, filter_t *f)
{
	(void)cmd;
	/* sorted (insertion: a handful), then those under an earlier one dropped:
	 * the walks are disjoint and in key order */
	for (size_t i = 1; i < f->n_prefix; i++) {
		for (size_t j = i; j > 0; j--) {
			size_t la = f->prefix_len[j - 1], lb = f->prefix_len[j];
			int c = memcmp(f->prefix[j - 1], f->prefix[j], la < lb ? la : lb);
			if (c < 0 || (c == 0 && la <= lb))
				break;
			uint8_t tmp[DNSNAP_NAME_MAX + 1];
			memcpy(tmp, f->prefix[j], lb);
			memcpy(f->prefix[j], f->prefix[j - 1], la);
			memcpy(f->prefix[j - 1], tmp, lb);
			f->prefix_len[j] = la;
			f->prefix_len[j - 1] = lb;
		}
	}
	size_t kept = 0;
	for (size_t i = 0; i < f->n_prefix; i++) {
		if (kept > 0 && under(f->prefix[i], f->prefix_len[i], f->prefix[kept - 1],
				      f->prefix_len[kept - 1]))
			continue;
		if (kept != i) {
			memcpy(f->prefix[kept], f->prefix[i], f->prefix_len[i]);
			f->prefix_len[kept] = f->prefix_len[i];
		}
		kept++;
	}
	f->n_prefix = kept;
	return 0;
}

int filter_match(const filter_t *f, const uint8_t *key, size_t key_len, const dnsnap_key_t *k)
{
	size_t i;
	for (i = 0; i < f->n_prefix; i++)
		if (under(key, key_len, f->prefix[i], f->prefix_len[i]))
			break;
	if (f->n_prefix > 0 && i == f->n_prefix)
		return 0;
	for (i = 0; i < f->n_type; i++)
		if (k->qtype == f->type[i])
			break;
	if (f->n_type > 0 && i == f->n_type)
		return 0;
	for (i = 0; i < f->n_tag; i++)
		if (k->tag_len == f->tag_len[i] &&
		    (k->tag_len == 0 || memcmp(k->tag, f->tag[i], k->tag_len) == 0)) /* tag NULL */
			break;
	return f->n_tag == 0 || i < f->n_tag;
}

struct filter_walk {
	const filter_t *f;
	int (*fn)(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		  size_t entry_len);
	void *arg;
};

static int filter_one(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		      size_t entry_len)
{
	struct filter_walk *w = arg;
	dnsnap_key_t k;
	if (dnsnap_key_decode(key, key_len, &k, NULL) != DNSNAP_OK || /* checked by the scan */
	    !filter_match(w->f, key, key_len, &k))
		return 0;
	return w->fn(w->arg, key, key_len, entry, entry_len);
}

int filter_scan(const char *cmd, dnsnap_snap_t *s, const filter_t *f,
		int (*fn)(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
			  size_t entry_len),
		void *arg, uint64_t *damaged)
{
	struct filter_walk w = { f, fn, arg };
	uint64_t total = 0, d = 0;
	int rc = 0;
	for (size_t i = 0; i == 0 || i < f->n_prefix; i++) {
		int r = scan_snap(cmd, s, f->n_prefix ? f->prefix[i] : NULL,
				  f->n_prefix ? f->prefix_len[i] : 0, filter_one, &w, &d);
		total += d;
		if (r == 1)
			rc = rc ? rc : 1;
		else if (r != 0)
			rc = r;
		if (r == 1 || (r != 0 && d == 0))
			break; /* fn stopped it, or the walk failed */
	}
	if (damaged != NULL)
		*damaged = total;
	return rc;
}

uint32_t entry_expiry(const uint8_t *entry)
{
	return ld32le(entry + 4);
}

/* --------------------------------------------------------------- progress */

static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const dnsnap_progress_t *progress_start(progress_t *pg, const char *what)
{
	*pg = (progress_t){ .p = { progress_report, pg }, .what = what, .unit = "entries",
			    .t0 = seconds() };
	return isatty(2) ? &pg->p : NULL;
}

void progress_report(void *arg, uint64_t done, uint64_t total)
{
	progress_t *pg = arg;
	double t = seconds() - pg->t0;
	double rate = t > 0 ? (double)done / t : 0;
	if (total > 0)
		fprintf(stderr, "\r%s: %llu of %llu %s (%.0f%%), %.0f/s\033[K", pg->what,
			(unsigned long long)done, (unsigned long long)total, pg->unit,
			100.0 * (double)done / (double)total, rate);
	else
		fprintf(stderr, "\r%s: %llu %s, %.0f/s\033[K", pg->what,
			(unsigned long long)done, pg->unit, rate);
	pg->shown = 1;
}

void progress_end(progress_t *pg)
{
	if (pg->shown)
		fputc('\n', stderr); /* the last report stays: the total and the rate */
	pg->shown = 0;
}

/* ---------------------------------------------------------- plurals, top N */

const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}
