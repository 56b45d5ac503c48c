/*
 * filter.c: the filters of dump, purge, stats, export and dnsnap control
 * (--name, --zone, --type, --tag) and the type and class arguments, read
 * with ldns and the printer's names.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ldns/ldns.h>

#include "cli.h"
#include "print.h"

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
