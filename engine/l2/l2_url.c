/*
 * l2_url.c: the client's URLs; the AUTH file; small parts the other files
 * share (addresses, the clock, SCAN's pattern, SIGPIPE).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "l2_int.h"

uint64_t dnsnap__l2_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void dnsnap__l2_addr_str(const struct l2_addr *a, char *out, size_t cap)
{
	if (a->port == 0)
		snprintf(out, cap, "unix:%s", a->host);
	else if (strchr(a->host, ':'))
		snprintf(out, cap, "[%s]:%d", a->host, a->port);
	else
		snprintf(out, cap, "%s:%d", a->host, a->port);
}

int dnsnap__l2_addr_eq(const struct l2_addr *a, const struct l2_addr *b)
{
	return a->port == b->port && strcmp(a->host, b->host) == 0;
}

void dnsnap__l2_sigpipe_ignore(void)
{
	struct sigaction sa;
	/* hiredis writes with write(): a server that closes must be EPIPE, not the end */
	if (sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL)
		signal(SIGPIPE, SIG_IGN);
}

size_t dnsnap__l2_match_pattern(const char *in, size_t len, char *out, size_t cap)
{
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		int glob = in[i] == '*' || in[i] == '?' || in[i] == '[' || in[i] == ']' ||
			   in[i] == '\\';
		if (o + (size_t)glob + 1 + 2 > cap)
			return 0;
		if (glob)
			out[o++] = '\\';
		out[o++] = in[i];
	}
	if (o + 2 > cap)
		return 0;
	out[o++] = '*';
	out[o] = '\0';
	return o;
}

/* ---------------------------------------------------------------- URLs */

static int fail(char *err, size_t errcap, const char *url, const char *why)
{
	snprintf(err, errcap, "'%s': %s", url, why);
	return -1;
}

/* Digits only, at most @p max. @return 0 or -1 */
static int parse_uint(const char *s, size_t n, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;
	if (n == 0 || n > 10)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > max)
		return -1;
	*out = v;
	return 0;
}

/* HOST[:PORT] in s[0..n): a name, IPv4, or [IPv6]. @return NULL or why not */
static const char *parse_hostport(const char *s, size_t n, struct l2_addr *a)
{
	const char *port = NULL;
	size_t hlen;
	if (n == 0)
		return "no host";
	if (s[0] == '[') {
		const char *close = memchr(s, ']', n);
		if (!close)
			return "an IPv6 address without its ']'";
		hlen = (size_t)(close - s) - 1;
		if (hlen == 0)
			return "no host";
		if (hlen >= L2_HOST_MAX)
			return "an IPv6 address too long";
		for (size_t i = 1; i <= hlen; i++)
			if (!strchr("0123456789abcdefABCDEF:.", s[i]))
				return "a bad IPv6 address";
		memcpy(a->host, s + 1, hlen);
		a->host[hlen] = '\0';
		if ((size_t)(close - s) + 1 < n) {
			if (close[1] != ':')
				return "junk after the IPv6 address";
			port = close + 2;
		}
	} else {
		const char *colon = memchr(s, ':', n);
		hlen = colon ? (size_t)(colon - s) : n;
		if (hlen == 0)
			return "no host";
		if (hlen >= L2_HOST_MAX)
			return "a host name too long";
		for (size_t i = 0; i < hlen; i++) {
			char c = s[i];
			if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			      (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_'))
				return "a bad host name";
		}
		memcpy(a->host, s, hlen);
		a->host[hlen] = '\0';
		if (colon)
			port = colon + 1;
	}
	a->port = 6379;
	if (port) {
		unsigned long p;
		if (parse_uint(port, (size_t)(s + n - port), 65535, &p) != 0 || p == 0)
			return "a bad port (1 to 65535)";
		a->port = (int)p;
	}
	return NULL;
}

int dnsnap__l2_url_parse(const char *url, struct l2_url *out, char *err, size_t errcap)
{
	static const char redis[] = "redis://", unixs[] = "unix://", cluster[] = "redis-cluster://";
	unsigned long db = 0;
	const char *why;

	memset(out, 0, sizeof *out);
	if (!url || !*url)
		return fail(err, errcap, "", "no URL");
	if (strlen(url) >= DNSNAP_L2_URL_MAX)
		return fail(err, errcap, "(URL)", "too long");
	if (strchr(url, '@')) { /* not echoed: it holds a secret */
		snprintf(err, errcap, "a Redis URL with a user or password is refused (ps shows "
			 "it): use an AUTH file or DNSNAP_REDIS_PASSWORD");
		return -1;
	}
	if (strncmp(url, redis, sizeof redis - 1) == 0) {
		const char *h = url + sizeof redis - 1;
		const char *slash = strchr(h, '/');
		size_t n = slash ? (size_t)(slash - h) : strlen(h);
		out->kind = L2_URL_REDIS;
		out->n = 1;
		if ((why = parse_hostport(h, n, &out->addr[0])))
			return fail(err, errcap, url, why);
		if (slash && slash[1] &&
		    parse_uint(slash + 1, strlen(slash + 1), 1000000, &db) != 0)
			return fail(err, errcap, url, "a bad database number after '/'");
		out->db = (unsigned)db;
		return 0;
	}
	if (strncmp(url, unixs, sizeof unixs - 1) == 0) {
		const char *p = url + sizeof unixs - 1;
		const char *q = strchr(p, '?');
		size_t n = q ? (size_t)(q - p) : strlen(p);
		out->kind = L2_URL_UNIX;
		out->n = 1;
		if (n < 2 || p[0] != '/')
			return fail(err, errcap, url, "not unix:///PATH (an absolute path)");
		if (n >= 108) /* sun_path */
			return fail(err, errcap, url, "a socket path too long");
		memcpy(out->addr[0].host, p, n);
		out->addr[0].host[n] = '\0';
		out->addr[0].port = 0;
		if (q) {
			if (strncmp(q, "?db=", 4) != 0 ||
			    parse_uint(q + 4, strlen(q + 4), 1000000, &db) != 0)
				return fail(err, errcap, url, "a bad query: only ?db=N");
			out->db = (unsigned)db;
		}
		return 0;
	}
	if (strncmp(url, cluster, sizeof cluster - 1) == 0) {
		const char *s = url + sizeof cluster - 1;
		out->kind = L2_URL_CLUSTER;
		if (!*s)
			return fail(err, errcap, url, "no seed node");
		while (*s) {
			const char *comma = strchr(s, ',');
			size_t n = comma ? (size_t)(comma - s) : strlen(s);
			if (out->n == L2_SEEDS_MAX)
				return fail(err, errcap, url, "more than 16 seed nodes");
			if (memchr(s, '/', n))
				return fail(err, errcap, url, "a cluster has no database");
			if ((why = parse_hostport(s, n, &out->addr[out->n])))
				return fail(err, errcap, url, why);
			out->n++;
			s += n;
			if (*s == ',' && !*++s)
				return fail(err, errcap, url, "an empty seed after ','");
		}
		return 0;
	}
	return fail(err, errcap, url,
		    "not redis://HOST[:PORT][/DB], unix:///PATH[?db=DB] or "
		    "redis-cluster://HOST:PORT[,HOST:PORT...]");
}

/* ---------------------------------------------------------------- AUTH */

static int copy_word(const char *w, size_t n, char *out, size_t cap)
{
	if (n + 1 > cap)
		return -1;
	memcpy(out, w, n);
	out[n] = '\0';
	return 0;
}

static int auth_file(const char *file, char *user, size_t user_cap, char *password,
		     size_t password_cap, char *err, size_t errcap)
{
	char buf[1024];
	struct stat st;
	ssize_t n;
	size_t len;
	int fd = open(file, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		int e = errno;
		snprintf(err, errcap, "%s: %s", file, strerror(e));
		return -e;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errcap, "%s: not a regular file", file);
		close(fd);
		return DNSNAP_EINVAL;
	}
	if (st.st_mode & 077) {
		snprintf(err, errcap,
			 "%s: readable or writable by others than its owner (mode %03o): "
			 "chmod 600 it", file, (unsigned)(st.st_mode & 0777));
		close(fd);
		return DNSNAP_EINVAL;
	}
	/* its owner chooses the password (and may read it): the caller, or root */
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		snprintf(err, errcap,
			 "%s: owned by uid %u, not by this user (uid %u) nor root: whoever owns "
			 "it chooses the password; chown it", file, (unsigned)st.st_uid,
			 (unsigned)geteuid());
		close(fd);
		return DNSNAP_EINVAL;
	}
	n = read(fd, buf, sizeof buf);
	close(fd);
	if (n < 0) {
		int e = errno;
		snprintf(err, errcap, "%s: %s", file, strerror(e));
		return -e;
	}
	if ((size_t)n == sizeof buf) {
		snprintf(err, errcap, "%s: too long", file);
		return DNSNAP_EINVAL;
	}
	len = (size_t)n;
	if (len && buf[len - 1] == '\n')
		len--;
	if (len && buf[len - 1] == '\r')
		len--;
	/* one or two words, one space between, nothing else */
	const char *sp = memchr(buf, ' ', len);
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			goto bad;
	if (len == 0)
		goto bad;
	if (!sp) {
		if (copy_word(buf, len, password, password_cap) != 0)
			goto long_;
		user[0] = '\0';
		return 0;
	}
	size_t ul = (size_t)(sp - buf), pl = len - ul - 1;
	if (ul == 0 || pl == 0 || memchr(sp + 1, ' ', pl))
		goto bad;
	if (copy_word(buf, ul, user, user_cap) != 0 ||
	    copy_word(sp + 1, pl, password, password_cap) != 0)
		goto long_;
	return 0;
bad:
	snprintf(err, errcap, "%s: not one line \"PASSWORD\" or \"USER PASSWORD\"", file);
	return DNSNAP_EINVAL;
long_:
	snprintf(err, errcap, "%s: a user or password too long", file);
	return DNSNAP_EINVAL;
}

int dnsnap_l2_auth_load(const char *file, char *user, size_t user_cap, char *password,
			size_t password_cap, char *err, size_t errcap)
{
	if (user_cap == 0 || password_cap == 0) {
		snprintf(err, errcap, "no room for the user and password");
		return DNSNAP_EINVAL;
	}
	user[0] = password[0] = '\0';
	if (file) {
		int rc = auth_file(file, user, user_cap, password, password_cap, err, errcap);
		if (rc != 0)
			user[0] = password[0] = '\0';
		return rc;
	}
	const char *p = getenv("DNSNAP_REDIS_PASSWORD");
	const char *u = getenv("DNSNAP_REDIS_USER");
	if (!p || !*p)
		return 0;
	if (copy_word(p, strlen(p), password, password_cap) != 0 ||
	    (u && copy_word(u, strlen(u), user, user_cap) != 0)) {
		snprintf(err, errcap, "DNSNAP_REDIS_PASSWORD or DNSNAP_REDIS_USER too long");
		user[0] = password[0] = '\0';
		return DNSNAP_EINVAL;
	}
	return 0;
}

int dnsnap_l2_url_check(const char *url, char *err, size_t errcap)
{
	struct l2_url u;
	return dnsnap__l2_url_parse(url, &u, err, errcap) == 0 ? DNSNAP_OK : DNSNAP_EINVAL;
}
