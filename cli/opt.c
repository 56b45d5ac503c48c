/*
 * opt.c: the tool's one option parser (getopt_long with the tool's messages),
 * its operands, and the time arguments (--now) every command takes. The
 * conventions, as `dnsnap help` states them:
 * - options and operands in any order; `--opt VALUE` and `--opt=VALUE` alike;
 *   `--` ends the options (an operand may then start with '-');
 * - a repeated filter option (--name, --zone, --type, --tag) adds to the
 *   filter; any other repeated option: the last one counts;
 * - a bad option or value is one line naming the option, and exit code 2.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

int opt_next(const char *cmd, int argc, char **argv, const char *shortopts,
	     const struct option *longopts)
{
	char spec[64];
	/* ':' first: a missing value is told apart from an unknown option */
	if (snprintf(spec, sizeof spec, ":%s", shortopts ? shortopts : "") >= (int)sizeof spec)
		return fail(cmd, NULL, "internal: option string too long"), OPT_ERROR;
	opterr = 0;
	int at = optind;
	int c = getopt_long(argc, argv, spec, longopts, NULL);
	if (c == '?' || c == ':') {
		/* the element getopt stopped at; optind has moved past it */
		const char *bad = at < argc ? argv[at] : NULL;
		if (optind > at && optind - 1 < argc)
			bad = argv[optind - 1];
		char shortname[3] = { '-', (char)optopt, 0 };
		int is_long = bad != NULL && strncmp(bad, "--", 2) == 0;
		if (!is_long)
			bad = shortname;
		/* a long option as given, without its =VALUE */
		int len = is_long ? (int)strcspn(bad, "=") : (int)strlen(bad);
		if (c == ':')
			fail(cmd, NULL, "%.*s needs a value (dnsnap help %s)", len, bad, cmd);
		else if (is_long && optopt != 0 && bad[len] == '=')
			fail(cmd, NULL, "%.*s takes no value (dnsnap help %s)", len, bad, cmd);
		else
			fail(cmd, NULL, "unknown option %.*s (dnsnap help %s)", len, bad, cmd);
		return OPT_ERROR;
	}
	return c;
}

int opt_operands(const char *cmd, int argc, char **argv, int min, int max, const char *what)
{
	int n = argc - optind;
	if (n < min)
		return fail(cmd, NULL, "needs %s (dnsnap help %s)", what, cmd), -1;
	if (max >= 0 && n > max)
		return fail(cmd, NULL, "unexpected argument: %s (dnsnap help %s)", argv[optind + max],
			    cmd),
		       -1;
	return n;
}

/* @p n decimal digits at *p (no sign, no space), advancing *p. @return the value or -1 */
static int digits(const char **p, int n)
{
	int v = 0;
	for (int i = 0; i < n; i++, (*p)++) {
		if (**p < '0' || **p > '9')
			return -1;
		v = v * 10 + (**p - '0');
	}
	return v;
}

/*
 * ISO 8601 (RFC 3339 and its usual relaxations): 2026-11-30T12:00:00Z, a space
 * or a lower-case t for the T, seconds optional and a fraction of them ignored,
 * the zone as Z or an offset (+01:00, +0100, +01); a date alone is midnight UTC.
 * @return 0; -1 not ISO 8601; -2 a time of day without its zone
 */
static int iso8601(const char *v, long long *out)
{
	const char *p = v;
	int y = digits(&p, 4), mo = -1, d = -1, h = 0, mi = 0, s = 0;
	if (y < 0 || *p++ != '-' || (mo = digits(&p, 2)) < 0 || *p++ != '-' ||
	    (d = digits(&p, 2)) < 0)
		return -1;
	long long off = 0;
	if (*p == 'T' || *p == 't' || *p == ' ') {
		p++;
		if ((h = digits(&p, 2)) < 0 || *p++ != ':' || (mi = digits(&p, 2)) < 0)
			return -1;
		if (*p == ':') {
			p++;
			if ((s = digits(&p, 2)) < 0)
				return -1;
			if (*p == '.' || *p == ',') { /* a fraction: whole seconds only */
				p++;
				if (*p < '0' || *p > '9')
					return -1;
				while (*p >= '0' && *p <= '9')
					p++;
			}
		}
		if (*p == 'Z' || *p == 'z') {
			p++;
		} else if (*p == '+' || *p == '-') {
			int sign = *p++ == '-' ? -1 : 1, oh = digits(&p, 2), om = 0;
			if (oh < 0)
				return -1;
			if (*p == ':')
				p++;
			if (*p != 0 && (om = digits(&p, 2)) < 0)
				return -1;
			if (oh > 23 || om > 59)
				return -1;
			off = sign * (oh * 3600LL + om * 60);
		} else if (*p == 0) {
			return -2; /* 12:00 where? */
		} else {
			return -1;
		}
	}
	if (*p != 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
		return -1;
	/* days from civil (proleptic Gregorian), no time zone database involved */
	int yy = y - (mo <= 2);
	int era = (yy >= 0 ? yy : yy - 399) / 400;
	int yoe = yy - era * 400;
	int doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (d > mdays[mo - 1] || (mo == 2 && d == 29 && !leap))
		return -1;
	long long days = era * 146097LL + doe - 719468;
	*out = days * 86400 + h * 3600LL + mi * 60 + s - off;
	return 0;
}

int time_arg(const char *cmd, const char *opt, const char *v, uint32_t *out)
{
	long long t;
	char *end;
	if (v[0] == '+' || v[0] == '-') {
		/* relative to the clock: +1h, -30m, +90s, -2d, +1w, or bare seconds */
		errno = 0;
		long long n = strtoll(v + 1, &end, 10);
		long long unit = 0;
		if (end != v + 1 && !errno && n >= 0) {
			unit = *end == 0 || strcmp(end, "s") == 0 ? 1
			       : strcmp(end, "m") == 0		  ? 60
			       : strcmp(end, "h") == 0		  ? 3600
			       : strcmp(end, "d") == 0		  ? 86400
			       : strcmp(end, "w") == 0		  ? 604800
								  : 0;
		}
		if (unit == 0 || n > (1LL << 32))
			goto bad;
		t = (long long)time(NULL) + (v[0] == '-' ? -n : n) * unit;
	} else if (v[0] >= '0' && v[0] <= '9' && strchr(v, '-') == NULL) {
		errno = 0;
		unsigned long long u = strtoull(v, &end, 10);
		if (*end)
			goto bad;
		if (errno || u > UINT32_MAX)
			goto range;
		t = (long long)u;
	} else {
		int r = iso8601(v, &t);
		if (r == -2)
			return fail(cmd, NULL, "%s: %s: a time of day needs its zone: %sZ for UTC, or an "
				    "offset such as %s+01:00", opt, v, v, v);
		if (r != 0)
			goto bad;
	}
	if (t < 0 || t > (long long)UINT32_MAX)
		goto range;
	*out = (uint32_t)t;
	return 0;
range:
	return fail(cmd, NULL, "%s: %s is outside 1970-01-01T00:00:00Z to 2106-02-07T06:28:15Z "
		    "(Unix time in 32 bits)", opt, v);
bad:
	return fail(cmd, NULL,
		    "%s: not a time: %s (Unix seconds, 2026-11-30T12:00:00Z, or relative: +1h, -30m)",
		    opt, v);
}

void time_iso(uint32_t t, char out[21])
{
	time_t tt = (time_t)t;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(out, 21, "%Y-%m-%dT%H:%M:%SZ", &tm);
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
