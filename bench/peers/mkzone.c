/*
 * mkzone: the peer benchmark's zone and query file, from the Big Pineapple mix.
 *
 *   mkzone N ZONE QUERIES [SEED]
 *
 * ZONE is the root zone "." in zone-file text: an SOA, NS ns.peers. with its
 * glue 127.0.0.1, then entry i = 0..N-1 of the mix (bench/mix.c) as the
 * authoritative data behind it: the name, the type, the 1-4 records of
 * mix_response(i). The names sit in the root zone without delegations
 * (com, co.uk... are empty non-terminals), so one authoritative server and
 * one stub zone cover every name. QUERIES is dnsperf's input, "NAME TYPE" per
 * line, entry i on line i+1.
 *
 * TTLs are the mix's (60..86400) raised to at least 3600, so that nothing
 * expires during a run of the benchmark. Rdata is taken from the response
 * bytes themselves: the zone holds exactly what mix_response(i) answers
 * (TXT bytes as \DDD escapes where they are not printable).
 */
#include <stdio.h>
#include <stdlib.h>

#include "../mix.h"
#include "byteorder.h"

#define MIN_TTL 3600
#define DEFAULT_SEED 42

/* A wire name without compression (the mix's question) as text with the dot. */
static void put_name(FILE *f, const uint8_t *w)
{
	for (; *w != 0; w += 1 + *w)
		fprintf(f, "%.*s.", (int)*w, (const char *)w + 1);
}

static void put_txt(FILE *f, const uint8_t *rd, size_t rdlen)
{
	for (size_t o = 0; o < rdlen; o += 1 + rd[o]) {
		fputs(o ? " \"" : "\"", f);
		for (size_t j = 0; j < rd[o] && o + 1 + j < rdlen; j++) {
			uint8_t c = rd[o + 1 + j];
			if (c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == ';')
				fprintf(f, "\\%03u", c);
			else
				fputc(c, f);
		}
		fputc('"', f);
	}
}

static int entry(FILE *zone, FILE *queries, size_t i)
{
	uint8_t msg[MIX_RESPONSE_MAX];
	size_t len;
	if (mix_response(i, msg, sizeof msg, &len) != 0)
		return -1;
	const uint8_t *qname = msg + 12;
	size_t o = 12;
	while (msg[o] != 0)
		o += 1 + msg[o];
	o += 1;
	unsigned qtype = ld16be(msg + o);
	const char *tname = qtype == MIX_TYPE_A ? "A" : qtype == MIX_TYPE_AAAA ? "AAAA" : "TXT";
	o += 4;
	put_name(queries, qname);
	fprintf(queries, " %s\n", tname);
	for (unsigned r = 0; r < ld16be(msg + 6); r++) {
		/* owner 0xc00c, type, class, TTL, RDLENGTH */
		uint32_t ttl = (uint32_t)ld16be(msg + o + 6) << 16 | ld16be(msg + o + 8);
		size_t rdlen = ld16be(msg + o + 10);
		const uint8_t *rd = msg + o + 12;
		put_name(zone, qname);
		fprintf(zone, " %u IN %s ", ttl < MIN_TTL ? MIN_TTL : ttl, tname);
		if (qtype == MIX_TYPE_A) {
			fprintf(zone, "%u.%u.%u.%u", rd[0], rd[1], rd[2], rd[3]);
		} else if (qtype == MIX_TYPE_AAAA) {
			for (int k = 0; k < 16; k += 2)
				fprintf(zone, "%s%x", k ? ":" : "", ld16be(rd + k));
		} else {
			put_txt(zone, rd, rdlen);
		}
		fputc('\n', zone);
		o += 12 + rdlen;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: mkzone N ZONE QUERIES [SEED]\n");
		return 2;
	}
	size_t n = strtoull(argv[1], NULL, 10);
	mix_init(argc == 5 ? strtoull(argv[4], NULL, 0) : DEFAULT_SEED);
	FILE *zone = fopen(argv[2], "w");
	FILE *queries = fopen(argv[3], "w");
	if (zone == NULL || queries == NULL) {
		perror("mkzone");
		return 2;
	}
	fputs("; the peer benchmark's root zone: bench/peers/mkzone.c, the Big Pineapple mix\n"
	      ". 86400 IN SOA ns.peers. hostmaster.peers. 1 3600 900 604800 3600\n"
	      ". 86400 IN NS ns.peers.\n"
	      "ns.peers. 86400 IN A 127.0.0.1\n",
	      zone);
	for (size_t i = 0; i < n; i++) {
		if (entry(zone, queries, i) != 0) {
			fprintf(stderr, "mkzone: entry %zu does not fit\n", i);
			return 1;
		}
	}
	if (fclose(zone) != 0 || fclose(queries) != 0) {
		perror("mkzone");
		return 2;
	}
	return 0;
}
