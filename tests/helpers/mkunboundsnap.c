/*
 * mkunboundsnap: the responses dnsnap rebuilds from Unbound's cache text, for
 * tests/e2e/unbound_roundtrip.sh to compare one by one with what Unbound
 * answered (`dnsnap load` and `dnsnap export --format unbound` do the rest).
 *
 *   mkunboundsnap print DUMP DIR      each rebuilt response, printed by ldns as
 *                                     dig prints one, to DIR/QNAME_TYPE.txt
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
	fprintf(stderr, "usage: mkunboundsnap print DUMP DIR\n");
	return 1;
}
