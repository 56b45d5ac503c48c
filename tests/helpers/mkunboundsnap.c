/*
 * mkunboundsnap: Unbound's cache text through dnsnap, for
 * tests/e2e/unbound_roundtrip.sh (until `dnsnap load` reads dumps itself).
 *
 *   mkunboundsnap print DUMP DIR      each rebuilt response, printed by ldns as
 *                                     dig prints one, to DIR/QNAME_TYPE.txt
 *   mkunboundsnap load DUMP SNAP      the rebuilt responses, inserted into a cache
 *                                     at the current time, written as snapshot SNAP
 *   mkunboundsnap export SNAP OUT     the snapshot as load_cache text (OUT "-": stdout)
 *
 * Counts go to stderr as "key value" lines. Exit status 0, or 1 on any error.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ldns/ldns.h>

#include "dnsnap.h"
#include "print.h"
#include "unbound.h"

static void report_read(const unbound_stats_t *st)
{
	fprintf(stderr, "lines %llu\nrrsets %llu\nmessages %llu\nresponses %llu\n",
		(unsigned long long)st->lines, (unsigned long long)st->rrsets,
		(unsigned long long)st->messages, (unsigned long long)st->responses);
	for (int i = 0; i < UB_REASONS; i++)
		if (st->skipped[i])
			fprintf(stderr, "skipped %llu: %s\n", (unsigned long long)st->skipped[i],
				unbound_reason_name(i));
}

struct printer {
	const char *dir;
	int err;
};

/* DIR/www.example_A.txt: the question name (no final dot) and type. */
static int print_one(void *arg, const uint8_t *msg, size_t len)
{
	struct printer *p = arg;
	ldns_pkt *pkt = NULL;
	if (ldns_wire2pkt(&pkt, msg, len) != LDNS_STATUS_OK || ldns_pkt_qdcount(pkt) != 1) {
		ldns_pkt_free(pkt);
		p->err = 1;
		return 1;
	}
	const ldns_rr *q = ldns_rr_list_rr(ldns_pkt_question(pkt), 0);
	char *name = ldns_rdf2str(ldns_rr_owner(q));
	char *type = ldns_rr_type2str(ldns_rr_get_type(q));
	ldns_pkt_free(pkt);
	char path[4096];
	size_t nl = name ? strlen(name) : 0;
	if (nl > 1 && name[nl - 1] == '.')
		name[--nl] = 0;
	for (size_t i = 0; i < nl; i++) {
		name[i] = (char)tolower((unsigned char)name[i]);
		if (!isalnum((unsigned char)name[i]) && name[i] != '.' && name[i] != '-')
			name[i] = '_';
	}
	snprintf(path, sizeof path, "%s/%s_%s.txt", p->dir, name ? name : "?", type ? type : "?");
	free(name);
	free(type);
	FILE *f = fopen(path, "w");
	if (f == NULL || print_dns_message(f, msg, len, (uint32_t)time(NULL)) != DNSNAP_OK) {
		perror(path);
		p->err = 1;
	}
	if (f && fclose(f) != 0)
		p->err = 1;
	return p->err;
}

struct loader {
	dnsnap_cache_t *c;
	dnsnap_encoded_t *scratch;
	uint32_t now;
	unsigned long inserted, refused;
};

static int load_one(void *arg, const uint8_t *msg, size_t len)
{
	struct loader *l = arg;
	dnsnap_diag_t d;
	int err = dnsnap_cache_insert(l->c, msg, len, l->now, NULL, 0, l->scratch, &d);
	if (err == DNSNAP_OK) {
		l->inserted++;
	} else {
		l->refused++;
		fprintf(stderr, "refused: %s: %s\n", dnsnap_errname(err), d.msg);
	}
	return 0;
}

int main(int argc, char **argv)
{
	char err[512];
	unbound_stats_t st;
	if (argc == 4 && strcmp(argv[1], "print") == 0) {
		struct printer p = { argv[3], 0 };
		int rc = unbound_read(argv[2], print_one, &p, &st, err, sizeof err);
		report_read(&st);
		if (rc < 0)
			fprintf(stderr, "mkunboundsnap: %s\n", err);
		return rc != 0 || p.err;
	}
	if (argc == 4 && strcmp(argv[1], "load") == 0) {
		struct loader l = { .now = (uint32_t)time(NULL) };
		l.scratch = malloc(sizeof *l.scratch);
		if (l.scratch == NULL || dnsnap_cache_new(NULL, &l.c) != DNSNAP_OK) {
			fprintf(stderr, "mkunboundsnap: out of memory\n");
			return 1;
		}
		int rc = unbound_read(argv[2], load_one, &l, &st, err, sizeof err);
		report_read(&st);
		fprintf(stderr, "inserted %lu\nrefused %lu\n", l.inserted, l.refused);
		dnsnap_snap_write_stats_t ws;
		dnsnap_diag_t d;
		int werr = rc == 0 ? dnsnap_snap_write(l.c, argv[3], l.now, &ws, &d) : DNSNAP_OK;
		if (rc < 0)
			fprintf(stderr, "mkunboundsnap: %s\n", err);
		else if (werr != DNSNAP_OK)
			fprintf(stderr, "mkunboundsnap: %s: %s\n", argv[3], d.msg);
		else
			fprintf(stderr, "written %llu\n", (unsigned long long)ws.entries);
		dnsnap_cache_free(l.c);
		free(l.scratch);
		return rc != 0 || werr != DNSNAP_OK;
	}
	if (argc == 4 && strcmp(argv[1], "export") == 0) {
		dnsnap_snap_t *s;
		dnsnap_diag_t d;
		if (dnsnap_snap_open(argv[2], &s, &d) != DNSNAP_OK) {
			fprintf(stderr, "mkunboundsnap: %s: %s\n", argv[2], d.msg);
			return 1;
		}
		int to_stdout = strcmp(argv[3], "-") == 0;
		FILE *out = to_stdout ? stdout : fopen(argv[3], "w");
		if (out == NULL) {
			perror(argv[3]);
			dnsnap_snap_close(s);
			return 1;
		}
		unbound_export_stats_t xs;
		int e = unbound_export(s, out, (uint32_t)time(NULL), &xs, &d);
		dnsnap_snap_close(s);
		if (!to_stdout && fclose(out) != 0 && e == DNSNAP_OK)
			e = -EIO;
		fprintf(stderr, "entries %llu\nmessages %llu\nrrsets %llu\nshared %llu\n"
			"conflicts %llu\nexpired %llu\ncd %llu\ntagged %llu\nbad %llu\n"
			"dropped %llu\nunprintable %llu\n",
			(unsigned long long)xs.entries, (unsigned long long)xs.messages,
			(unsigned long long)xs.rrsets, (unsigned long long)xs.shared,
			(unsigned long long)xs.conflicts, (unsigned long long)xs.expired,
			(unsigned long long)xs.cd, (unsigned long long)xs.tagged,
			(unsigned long long)xs.bad, (unsigned long long)xs.dropped,
			(unsigned long long)xs.unprintable);
		if (e != DNSNAP_OK)
			fprintf(stderr, "mkunboundsnap: %s\n", d.msg);
		return e != DNSNAP_OK;
	}
	fprintf(stderr, "usage: mkunboundsnap print DUMP DIR | load DUMP SNAP | export SNAP OUT\n");
	return 1;
}
