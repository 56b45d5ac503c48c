/*
 * corpus.c: a deterministic corpus of varied DNS responses, built with ldns.
 *
 * Why: dnsnap's parser/encoder must be checked against an independent DNS
 * implementation on realistic input. ldns writes the messages (with its own
 * name compression, RFC 1035 4.1.4) and later, in the tests, reads them back
 * as the oracle. The corpus doubles as the seed set of the fuzzers
 * (tests/helpers/mkcorpus.c writes it to files).
 *
 * How: each message is an ldns_pkt built from zone-file text
 * (ldns_rr_new_frm_str), so it reads like what a resolver would receive.
 * Message i draws every choice from a private xorshift64* generator seeded
 * from i (never rand(): the corpus must be the same everywhere, and building
 * message i must not depend on having built messages 0..i-1).
 *
 * Layout of the corpus:
 *   0..10  the worked examples of the design issue, fixed, in the order
 *          (see fixed[] below);
 *   11..   the generator's categories, round robin (see kinds[] below). A
 *          category's variant is chosen by its round (how many times the
 *          category came before), so each variant is sure to appear; the rest
 *          (names, counts, TTLs, addresses, flags) is random.
 *
 * Varieties covered (categories): A (sometimes with NS + glue), AAAA sets of
 * 1-8, TXT (short, 200-byte, several strings, several RRs, escapes), CNAME
 * chains of 1-3 hops across zones ending in A/AAAA, NXDOMAIN with SOA (and
 * sometimes a CNAME first), NODATA with SOA, DNSSEC-signed positive answers
 * (A/AAAA/MX/TXT + RRSIG), DNSSEC negative answers (NSEC and NSEC3 proofs with
 * their RRSIGs), DS/DNSKEY/CDS, MX with addresses in additional, referrals
 * with NS + glue (signed with DS, or with an NSEC3 opt-out proof), SRV, NAPTR,
 * SVCB and HTTPS (parsed from presentation format by ldns 1.8.3, and sometimes
 * given in RFC 3597 generic syntax as TYPE64/TYPE65), CAA, PTR (IPv4, IPv6,
 * RFC 2317 classless CNAME), SOA queries, unknown types (TYPE65280.. with
 * \# rdata, including empty rdata), HINFO (also RFC 8482 ANY answers), RP,
 * MINFO, AFSDB, SSHFP, TLSA, class CH (version.bind and friends), error
 * rcodes with Extended DNS Errors, full authoritative answers (NS in authority,
 * glue with mixed-case owners), DNAME with synthesized CNAME, CNAME to NODATA,
 * TTL edge cases (0, 2^31-1, above 2^31-1 which RFC 2181 says to treat as 0),
 * large messages (over 64 records, 2-3 KB), and odd names (a 0 byte, an
 * escaped dot, a space, a byte >= 0x80, a wildcard label, a 63-byte label,
 * the root), and mixed case (uncompressed: members of one RRset, a CNAME
 * target and the next owner, NS rdata and glue owners spelled differently).
 *
 * Varieties across all categories: random message ID; QR always; RD, RA
 * mostly; AA for authoritative answers; AD and CD sometimes; an OPT record
 * (EDNS0, ldns_pkt_set_edns_udp_size) in most messages, with DO for DNSSEC
 * categories and sometimes otherwise; Extended DNS Error options (RFC 8914,
 * option 15: INFO-CODE u16 + EXTRA-TEXT) on error answers and occasionally on
 * others (one or two options); a TSIG record now and then (which ldns writes
 * last, after the OPT); mixed-case spellings of the question name (like
 * wWw.ExAmple.COM.) and of other owners; about one message in five written
 * without name compression, so that owners differing from the question only
 * in case reach the parser as such (ldns's compressor matches names
 * case-insensitively and would otherwise fold them onto the question's
 * spelling). TTLs are realistic and equal within each RRset (RFC 2181 5.2).
 */
#include "corpus.h"

#include <ldns/ldns.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ generator */

typedef struct gen {
	uint64_t s;           /* xorshift64* state, never 0 */
	ldns_pkt *pkt;
	int err;              /* an ldns call failed */
	unsigned round;       /* how many messages of this category came before */
	bool compress;        /* write with name compression */
	bool mixcase;         /* spell the names of this message in mixed case */
	bool edns;            /* add an OPT record */
	bool do_bit;          /* DO in the OPT */
	bool dnssec;          /* the category holds DNSSEC data: force EDNS + DO */
	bool no_extra;        /* the category wants no random EDE / TSIG */
	bool tsig;            /* append a TSIG record */
	uint16_t udp;         /* EDNS UDP payload size */
	unsigned ede_n;       /* Extended DNS Error options to add */
	uint16_t ede_code[2];
	char ede_text[2][80];
} gen_t;

/* splitmix64: turns the message index into a well-mixed seed. */
static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* xorshift64* (Vigna): small, fast, good enough for test data. */
static uint64_t rnd64(gen_t *g)
{
	uint64_t x = g->s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	g->s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* Uniform enough in [0, n), n > 0. */
static unsigned rnd(gen_t *g, unsigned n)
{
	return (unsigned)((rnd64(g) >> 11) % n);
}

/* In [lo, hi]. */
static unsigned range(gen_t *g, unsigned lo, unsigned hi)
{
	return lo + rnd(g, hi - lo + 1);
}

/* True with probability pct percent. */
static bool chance(gen_t *g, unsigned pct)
{
	return rnd(g, 100) < pct;
}

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
/* variadic so that compound literals with commas can be passed */
#define PICK(g, ...) ((__VA_ARGS__)[rnd((g), (unsigned)NELEM((__VA_ARGS__)))])

/* ------------------------------------------------------------ vocabulary */

static const char *const zones[] = {
	"example.com.", "example.net.", "example.org.", "test.example.",
	"shop.example.co.uk.", "uni.example.edu.", "example.de.",
	"xn--bcher-kva.example.", "sub.zone.example.com.", "example.",
	"bank.example.ch.", "media.example.tv.",
};

/* CDN and hosting zones: CNAME targets live in other zones than the query. */
static const char *const cdn_zones[] = {
	"edgekey.example.net.", "cloudfront.example.org.", "fastly.example.com.",
	"akamaiedge.example.", "azureedge.example.net.", "cdn.example.tv.",
};

static const char *const hosts[] = {
	"www", "mail", "api", "cdn", "login", "static", "img", "m", "vpn", "git",
	"blog", "news", "a1", "host-42", "portal", "shop", "auth", "s3",
};

/* Realistic TTLs: short for CDN/failover records, long for infrastructure. */
static const uint32_t ttls[] = {
	30, 60, 120, 300, 300, 600, 900, 1800, 3600, 3600, 7200, 14400, 43200, 86400, 172800,
};
static const uint32_t short_ttls[] = { 5, 20, 30, 60, 120 };
static const uint32_t infra_ttls[] = { 3600, 86400, 172800, 345600 };
static const uint32_t soa_ttls[] = { 60, 300, 900, 3600, 10800, 86400 };
static const uint32_t soa_mins[] = { 30, 60, 300, 900, 3600, 86400 };
static const uint16_t udp_sizes[] = { 512, 1232, 1232, 1400, 4096 };

/* ------------------------------------------------------------ text helpers */

/* Copy a string, truncating to cap - 1 bytes (names here are far shorter). */
static void scopy(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
}

/* Flip the case of about half of the ASCII letters of s (escapes are digits). */
static void mixcase(gen_t *g, char *s)
{
	for (; *s; s++) {
		if (((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')) && chance(g, 50))
			*s ^= 0x20;
	}
}

static void lower(char *s)
{
	for (; *s; s++) {
		if (*s >= 'A' && *s <= 'Z')
			*s |= 0x20;
	}
}

/* "host.zone", in mixed case when the message mixes case. */
static void mkname(gen_t *g, char *out, size_t cap, const char *host, const char *zone)
{
	scopy(out, cap, host && *host ? host : "");
	if (host && *host) {
		size_t n = strlen(out);
		scopy(out + n, cap - n, ".");
		n = strlen(out);
		scopy(out + n, cap - n, zone);
	} else {
		scopy(out, cap, zone);
	}
	if (g->mixcase)
		mixcase(g, out);
}

/* The spelling of an owner that equals the question name: the same bytes
 * mostly, lower case sometimes (a server answering from its zone data). With
 * compression ldns folds it onto the question anyway. */
static void owner_of(gen_t *g, char *out, size_t cap, const char *qname)
{
	scopy(out, cap, qname);
	if (chance(g, 35))
		lower(out);
}

static void hexstr(gen_t *g, char *out, size_t nbytes)
{
	static const char hx[] = "0123456789abcdef";
	for (size_t k = 0; k < nbytes; k++) {
		unsigned b = rnd(g, 256);
		out[2 * k] = hx[b >> 4];
		out[2 * k + 1] = hx[b & 15];
	}
	out[2 * nbytes] = 0;
}

static void b64str(gen_t *g, char *out, size_t nbytes)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	uint8_t in[512];
	size_t o = 0;
	for (size_t k = 0; k < nbytes; k++)
		in[k] = (uint8_t)rnd(g, 256);
	for (size_t k = 0; k < nbytes; k += 3) {
		uint32_t v = (uint32_t)in[k] << 16;
		size_t left = nbytes - k;
		if (left > 1)
			v |= (uint32_t)in[k + 1] << 8;
		if (left > 2)
			v |= in[k + 2];
		out[o++] = b64[(v >> 18) & 63];
		out[o++] = b64[(v >> 12) & 63];
		out[o++] = left > 1 ? b64[(v >> 6) & 63] : '=';
		out[o++] = left > 2 ? b64[v & 63] : '=';
	}
	out[o] = 0;
}

/* A SHA-1 NSEC3 hash label: 32 base32hex characters. */
static void b32hex(gen_t *g, char *out)
{
	static const char a[] = "0123456789abcdefghijklmnopqrstuv";
	for (int k = 0; k < 32; k++)
		out[k] = a[rnd(g, 32)];
	out[32] = 0;
}

static void v4(gen_t *g, char *out, size_t cap)
{
	static const char *const nets[] = { "192.0.2", "198.51.100", "203.0.113", "10.20.30" };
	snprintf(out, cap, "%s.%u", PICK(g, nets), range(g, 1, 254));
}

static void v6(gen_t *g, char *out, size_t cap)
{
	snprintf(out, cap, "2001:db8:%x:%x::%x", rnd(g, 0x10000), rnd(g, 0x100), range(g, 1, 0xffff));
}

/* Labels of a presentation name, the root not counted, '*' not counted
 * (RRSIG Labels field); escaped dots are rare and only here in unsigned data. */
static unsigned nlabels(const char *name)
{
	unsigned n = 0;
	if (strcmp(name, ".") == 0)
		return 0;
	for (const char *p = name; *p; p++) {
		if (*p == '.')
			n++;
	}
	if (name[0] == '*' && name[1] == '.')
		n--;
	return n;
}

/* ------------------------------------------------------------ packet helpers */

/* Add one RR, given in zone-file presentation format, to a section. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void rr(gen_t *g, ldns_pkt_section sec, const char *fmt, ...)
{
	char text[8192];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof text) {
		fprintf(stderr, "corpus: RR text too long\n");
		g->err = 1;
		return;
	}
	ldns_rr *r = NULL;
	ldns_status st = ldns_rr_new_frm_str(&r, text, 0, NULL, NULL);
	if (st != LDNS_STATUS_OK) {
		fprintf(stderr, "corpus: ldns cannot parse \"%s\": %s\n", text,
			ldns_get_errorstr_by_id(st));
		g->err = 1;
		return;
	}
	ldns_pkt_push_rr(g->pkt, sec, r);
}

/* The question: "name CLASS TYPE". */
static void question(gen_t *g, const char *name, const char *cls, const char *type)
{
	char text[1200];
	snprintf(text, sizeof text, "%s %s %s", name, cls, type);
	ldns_rr *q = NULL;
	ldns_status st = ldns_rr_new_question_frm_str(&q, text, NULL, NULL);
	if (st != LDNS_STATUS_OK) {
		fprintf(stderr, "corpus: ldns cannot parse question \"%s\": %s\n", text,
			ldns_get_errorstr_by_id(st));
		g->err = 1;
		return;
	}
	ldns_pkt_push_rr(g->pkt, LDNS_SECTION_QUESTION, q);
}

static void soa(gen_t *g, ldns_pkt_section sec, const char *zone, uint32_t ttl, uint32_t minimum)
{
	const char *z = strcmp(zone, ".") == 0 ? "" : zone;
	rr(g, sec, "%s %u IN SOA ns1.%s hostmaster.%s %u 7200 3600 1209600 %u", zone, ttl, z, z,
	   2023110000u + rnd(g, 20000), minimum);
}

/* An RRSIG with a fake signature of the algorithm's size (the parser does not
 * verify signatures; only the shape matters). Original TTL = the RR's TTL. */
static void rrsig(gen_t *g, ldns_pkt_section sec, const char *owner, uint32_t ttl,
		  const char *covered, const char *signer)
{
	static const unsigned algs[] = { 8, 13, 13, 13, 15 };
	unsigned alg = PICK(g, algs);
	size_t siglen = alg == 8 ? 256 : 64;
	char sig[400];
	b64str(g, sig, siglen);
	rr(g, sec, "%s %u IN RRSIG %s %u %u %u 20231214221320 20231114221320 %u %s %s", owner, ttl,
	   covered, alg, nlabels(owner), ttl, range(g, 1, 65535), signer, sig);
}

static void ede(gen_t *g, uint16_t code, const char *text)
{
	if (g->ede_n >= 2)
		return;
	g->ede_code[g->ede_n] = code;
	scopy(g->ede_text[g->ede_n], sizeof g->ede_text[0], text);
	g->ede_n++;
}

/* ------------------------------------------------------------ worked examples */

/* 0: one A record. */
static void fx_a(gen_t *g)
{
	question(g, "www.example.com.", "IN", "A");
	rr(g, LDNS_SECTION_ANSWER, "www.example.com. 300 IN A 192.0.2.1");
}

/* 1: an AAAA RRset of 4 (one TTL). */
static void fx_aaaa4(gen_t *g)
{
	question(g, "example.net.", "IN", "AAAA");
	for (int k = 1; k <= 4; k++)
		rr(g, LDNS_SECTION_ANSWER, "example.net. 3600 IN AAAA 2001:db8:10::%d", k);
}

/* 2: a TXT record holding one 200-byte string (a DKIM-like key). */
static void fx_txt200(gen_t *g)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char s[201];
	const char *head = "v=DKIM1; k=rsa; p=";
	size_t h = strlen(head);
	memcpy(s, head, h);
	for (size_t k = h; k < 200; k++)
		s[k] = b64[(k * 7 + 3) % 64];
	s[200] = 0;
	question(g, "sel1._domainkey.example.com.", "IN", "TXT");
	rr(g, LDNS_SECTION_ANSWER, "sel1._domainkey.example.com. 3600 IN TXT \"%s\"", s);
}

/* 3: a CNAME chain www -> cdn -> 2 x A (the target in another zone). */
static void fx_cname(gen_t *g)
{
	question(g, "www.example.com.", "IN", "A");
	rr(g, LDNS_SECTION_ANSWER, "www.example.com. 3600 IN CNAME cdn.example.net.");
	rr(g, LDNS_SECTION_ANSWER, "cdn.example.net. 300 IN A 198.51.100.10");
	rr(g, LDNS_SECTION_ANSWER, "cdn.example.net. 300 IN A 198.51.100.11");
}

/* 4: NXDOMAIN with the zone's SOA in authority (negative TTL = MINIMUM 300). */
static void fx_nxdomain(gen_t *g)
{
	ldns_pkt_set_rcode(g->pkt, LDNS_RCODE_NXDOMAIN);
	question(g, "nonexistent.example.com.", "IN", "A");
	rr(g, LDNS_SECTION_AUTHORITY, "example.com. 3600 IN SOA ns1.example.com. "
	   "hostmaster.example.com. 2023111401 7200 3600 1209600 300");
}

/* 5: NODATA: NOERROR, no answer, SOA (negative TTL = SOA TTL 900 < MINIMUM). */
static void fx_nodata(gen_t *g)
{
	question(g, "www.example.com.", "IN", "AAAA");
	rr(g, LDNS_SECTION_AUTHORITY, "example.com. 900 IN SOA ns1.example.com. "
	   "hostmaster.example.com. 2023111401 7200 3600 1209600 3600");
}

/* 6: a DNSSEC-signed A (validated: AD; the client asked with DO). */
static void fx_signed(gen_t *g)
{
	ldns_pkt_set_ad(g->pkt, true);
	g->dnssec = true;
	question(g, "www.example.org.", "IN", "A");
	rr(g, LDNS_SECTION_ANSWER, "www.example.org. 3600 IN A 192.0.2.80");
	rr(g, LDNS_SECTION_ANSWER, "www.example.org. 3600 IN RRSIG A 13 3 3600 20231214221320 "
	   "20231114221320 40000 example.org. "
	   "oJB1W6WNGv+ldvQ3WDG0MQkg5IEhjRip8WTrPYGv07h108dUKGMeDPKijVCHX3DDKdfb+v6oB9wfuh3DTJXUAfI/M0zmO/zz8bW0Rznl8O3tGNazPwQKkRN20XPXV6nwwfoXmJQbsLNrLfkGJ5D6fwFm8nN+6pBzeDQfsS3Ap3o=");
}

/* 7: MX (exchange names compressed by ldns inside rdata). */
static void fx_mx(gen_t *g)
{
	question(g, "example.com.", "IN", "MX");
	rr(g, LDNS_SECTION_ANSWER, "example.com. 3600 IN MX 10 mx1.example.com.");
	rr(g, LDNS_SECTION_ANSWER, "example.com. 3600 IN MX 20 mx2.example.com.");
}

/* 8: a referral from the com servers: NS in authority, glue in additional. */
static void fx_referral(gen_t *g)
{
	ldns_pkt_set_rd(g->pkt, false);
	ldns_pkt_set_ra(g->pkt, false);
	question(g, "www.example.com.", "IN", "A");
	rr(g, LDNS_SECTION_AUTHORITY, "example.com. 172800 IN NS ns1.example.com.");
	rr(g, LDNS_SECTION_AUTHORITY, "example.com. 172800 IN NS ns2.example.com.");
	rr(g, LDNS_SECTION_ADDITIONAL, "ns1.example.com. 172800 IN A 192.0.2.53");
	rr(g, LDNS_SECTION_ADDITIONAL, "ns1.example.com. 172800 IN AAAA 2001:db8::53");
	rr(g, LDNS_SECTION_ADDITIONAL, "ns2.example.com. 172800 IN A 198.51.100.53");
}

/* 9: an unknown type, RFC 3597 generic syntax. */
static void fx_unknown(gen_t *g)
{
	question(g, "example.com.", "IN", "TYPE65280");
	rr(g, LDNS_SECTION_ANSWER, "example.com. 300 IN TYPE65280 \\# 4 0a000001");
}

/* 10: the longest query name: 63+63+63+61-byte labels = 255 wire bytes. */
static void fx_longname(gen_t *g)
{
	char name[300];
	size_t o = 0;
	static const int lens[] = { 63, 63, 63, 61 };
	for (int l = 0; l < 4; l++) {
		for (int k = 0; k < lens[l]; k++)
			name[o++] = (char)('a' + (l * 7 + k) % 26);
		name[o++] = '.';
	}
	name[o] = 0;
	question(g, name, "IN", "A");
	rr(g, LDNS_SECTION_ANSWER, "%s 600 IN A 203.0.113.255", name);
}

static const struct {
	const char *name;
	void (*fn)(gen_t *);
} fixed[CORPUS_FIXED] = {
	{ "one A", fx_a },
	{ "AAAA set of 4", fx_aaaa4 },
	{ "TXT 200 bytes", fx_txt200 },
	{ "CNAME -> cdn -> 2xA", fx_cname },
	{ "NXDOMAIN + SOA", fx_nxdomain },
	{ "NODATA + SOA", fx_nodata },
	{ "signed A + RRSIG", fx_signed },
	{ "MX", fx_mx },
	{ "referral NS + glue", fx_referral },
	{ "TYPE65280", fx_unknown },
	{ "255-byte qname A", fx_longname },
};

/* ------------------------------------------------------------ categories */

/* A answers, 1-4 addresses; sometimes the zone's NS in authority and their
 * addresses in additional (records with other owners, as BIND sends them). */
static void k_a(gen_t *g)
{
	char zone[64], q[256], own[256], a[64];
	scopy(zone, sizeof zone, PICK(g, zones));
	mkname(g, q, sizeof q, PICK(g, hosts), zone);
	question(g, q, "IN", "A");
	uint32_t ttl = PICK(g, ttls);
	unsigned n = range(g, 1, 4);
	owner_of(g, own, sizeof own, q);
	for (unsigned k = 0; k < n; k++) {
		v4(g, a, sizeof a);
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN A %s", own, ttl, a);
	}
	if (g->round % 2 == 1) {
		uint32_t nttl = PICK(g, infra_ttls);
		for (int k = 1; k <= 2; k++)
			rr(g, LDNS_SECTION_AUTHORITY, "%s %u IN NS ns%d.%s", zone, nttl, k, zone);
		for (int k = 1; k <= 2; k++) {
			v4(g, a, sizeof a);
			rr(g, LDNS_SECTION_ADDITIONAL, "ns%d.%s %u IN A %s", k, zone, nttl, a);
		}
	}
}

/* AAAA RRsets of 1-8. */
static void k_aaaa(gen_t *g)
{
	char q[256], own[256], a[64];
	mkname(g, q, sizeof q, PICK(g, hosts), PICK(g, zones));
	question(g, q, "IN", "AAAA");
	uint32_t ttl = PICK(g, ttls);
	unsigned n = g->round < 8 ? g->round + 1 : range(g, 1, 8);
	owner_of(g, own, sizeof own, q);
	for (unsigned k = 0; k < n; k++) {
		v6(g, a, sizeof a);
		if (chance(g, 15)) /* one member spelled differently (seen only uncompressed) */
			owner_of(g, own, sizeof own, q);
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN AAAA %s", own, ttl, a);
	}
}

/* TXT: short SPF; a 200-byte string; several strings in one RR; several TXT
 * RRs; strings with escaped quote, semicolon and space; an empty string. */
static void k_txt(gen_t *g)
{
	char zone[64], q[256], own[256], s[256];
	scopy(zone, sizeof zone, PICK(g, zones));
	unsigned v = g->round % 5;
	if (v == 1)
		mkname(g, q, sizeof q, "_dmarc", zone);
	else
		mkname(g, q, sizeof q, NULL, zone);
	question(g, q, "IN", "TXT");
	uint32_t ttl = PICK(g, ttls);
	owner_of(g, own, sizeof own, q);
	switch (v) {
	case 0:
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN TXT \"v=spf1 include:_spf.%s ~all\"", own, ttl, zone);
		break;
	case 1: {
		size_t n = 200;
		for (size_t k = 0; k < n; k++)
			s[k] = (char)('a' + rnd(g, 26));
		memcpy(s, "v=DMARC1; p=reject; rua=", 24);
		s[n] = 0;
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN TXT \"%s\"", own, ttl, s);
		break;
	}
	case 2:
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN TXT \"part one\" \"part two\" \"3\" \"\"", own, ttl);
		break;
	case 3: {
		char tok[64];
		hexstr(g, tok, 16);
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN TXT \"v=spf1 mx -all\"", own, ttl);
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN TXT \"google-site-verification=%s\"", own, ttl, tok);
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN TXT \"MS=ms%u\"", own, ttl, range(g, 10000000, 99999999));
		break;
	}
	default:
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN TXT \"a \\\"quoted\\\" word\" \"semi\\059colon\" \"tab\\009x\" \"\\255\\000\"",
		   own, ttl);
		break;
	}
}

/* CNAME chains of 1-3 hops crossing zones, ending in 1-3 A or AAAA. */
static void k_cname(gen_t *g)
{
	char name[4][256], a[64];
	const char *zone = PICK(g, zones);
	const char *host = PICK(g, hosts);
	bool six = chance(g, 40);
	unsigned hops = g->round % 3 + 1;
	mkname(g, name[0], sizeof name[0], host, zone);
	question(g, name[0], "IN", six ? "AAAA" : "A");
	for (unsigned h = 1; h <= hops; h++) {
		if (h == 1)
			snprintf(name[h], sizeof name[h], "%s.%s%s", host, zone, PICK(g, cdn_zones));
		else
			snprintf(name[h], sizeof name[h], "e%u.%c.%s", rnd(g, 10000), 'a' + rnd(g, 26),
				 PICK(g, cdn_zones));
		if (chance(g, 25))
			mixcase(g, name[h]);
	}
	for (unsigned h = 0; h < hops; h++) {
		char own[256];
		if (h == 0)
			owner_of(g, own, sizeof own, name[0]);
		else
			scopy(own, sizeof own, name[h]);
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN CNAME %s", own, PICK(g, ttls), name[h + 1]);
	}
	/* the final owner: sometimes spelled differently from the CNAME target */
	char fin[256];
	scopy(fin, sizeof fin, name[hops]);
	if (chance(g, 30))
		lower(fin);
	uint32_t ttl = PICK(g, short_ttls);
	unsigned n = range(g, 1, 3);
	for (unsigned k = 0; k < n; k++) {
		if (six)
			v6(g, a, sizeof a);
		else
			v4(g, a, sizeof a);
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN %s %s", fin, ttl, six ? "AAAA" : "A", a);
	}
}

/* NXDOMAIN + SOA; sometimes a CNAME first, the SOA then being the target's. */
static void k_nxdomain(gen_t *g)
{
	static const char *const types[] = { "A", "AAAA", "MX", "TXT", "A" };
	char zone[64], q[256], t[256];
	scopy(zone, sizeof zone, PICK(g, zones));
	snprintf(t, sizeof t, "nx-%u", rnd(g, 100000));
	mkname(g, q, sizeof q, t, zone);
	ldns_pkt_set_rcode(g->pkt, LDNS_RCODE_NXDOMAIN);
	ldns_pkt_set_aa(g->pkt, chance(g, 50));
	question(g, q, "IN", PICK(g, types));
	const char *soazone = zone;
	if (g->round % 3 == 2) {
		soazone = PICK(g, cdn_zones);
		snprintf(t, sizeof t, "gone.%s", soazone);
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN CNAME %s", q, PICK(g, ttls), t);
	}
	soa(g, LDNS_SECTION_AUTHORITY, soazone, PICK(g, soa_ttls), PICK(g, soa_mins));
}

/* NODATA: NOERROR, empty answer, SOA in authority. */
static void k_nodata(gen_t *g)
{
	static const char *const types[] = { "AAAA", "MX", "TXT", "SRV", "CAA", "HTTPS", "DS", "NAPTR" };
	char zone[64], q[256];
	scopy(zone, sizeof zone, PICK(g, zones));
	mkname(g, q, sizeof q, chance(g, 50) ? PICK(g, hosts) : NULL, zone);
	ldns_pkt_set_aa(g->pkt, chance(g, 50));
	question(g, q, "IN", PICK(g, types));
	soa(g, LDNS_SECTION_AUTHORITY, zone, PICK(g, soa_ttls), PICK(g, soa_mins));
}

/* Signed positive answers: an RRset and its RRSIG (same TTL), sometimes the
 * signed NS RRset in authority. */
static void k_dnssec_pos(gen_t *g)
{
	static const char *const types[] = { "A", "AAAA", "MX", "TXT" };
	char zone[64], q[256], own[256], a[64];
	const char *type = types[g->round % 4];
	scopy(zone, sizeof zone, PICK(g, zones));
	mkname(g, q, sizeof q, strcmp(type, "MX") == 0 ? NULL : PICK(g, hosts), zone);
	g->dnssec = true;
	ldns_pkt_set_ad(g->pkt, chance(g, 70));
	question(g, q, "IN", type);
	owner_of(g, own, sizeof own, q);
	uint32_t ttl = PICK(g, ttls);
	unsigned n = range(g, 1, 3);
	for (unsigned k = 0; k < n; k++) {
		if (strcmp(type, "A") == 0) {
			v4(g, a, sizeof a);
			rr(g, LDNS_SECTION_ANSWER, "%s %u IN A %s", own, ttl, a);
		} else if (strcmp(type, "AAAA") == 0) {
			v6(g, a, sizeof a);
			rr(g, LDNS_SECTION_ANSWER, "%s %u IN AAAA %s", own, ttl, a);
		} else if (strcmp(type, "MX") == 0) {
			rr(g, LDNS_SECTION_ANSWER, "%s %u IN MX %u mx%u.%s", own, ttl, 10 * (k + 1), k + 1, zone);
		} else {
			rr(g, LDNS_SECTION_ANSWER, "%s %u IN TXT \"signed text %u\"", own, ttl, k);
		}
	}
	rrsig(g, LDNS_SECTION_ANSWER, own, ttl, type, zone);
	if (chance(g, 40)) {
		uint32_t nttl = PICK(g, infra_ttls);
		rr(g, LDNS_SECTION_AUTHORITY, "%s %u IN NS ns1.%s", zone, nttl, zone);
		rr(g, LDNS_SECTION_AUTHORITY, "%s %u IN NS ns2.%s", zone, nttl, zone);
		rrsig(g, LDNS_SECTION_AUTHORITY, zone, nttl, "NS", zone);
	}
}

/* Signed negative answers: NXDOMAIN or NODATA proven with NSEC or NSEC3,
 * each with its RRSIG; the SOA signed too. NSEC TTL = the negative TTL. */
static void k_dnssec_neg(gen_t *g)
{
	char zone[64], q[256], t[256], h1[40], h2[40];
	unsigned v = g->round % 4;
	scopy(zone, sizeof zone, PICK(g, zones));
	snprintf(t, sizeof t, "%s%u", v < 2 ? "nosuch" : "www", rnd(g, 1000));
	mkname(g, q, sizeof q, t, zone);
	g->dnssec = true;
	ldns_pkt_set_ad(g->pkt, chance(g, 70));
	ldns_pkt_set_aa(g->pkt, chance(g, 30));
	if (v < 2)
		ldns_pkt_set_rcode(g->pkt, LDNS_RCODE_NXDOMAIN);
	question(g, q, "IN", v < 2 ? "A" : "AAAA");
	uint32_t sttl = PICK(g, soa_ttls), smin = PICK(g, soa_mins);
	uint32_t nttl = sttl < smin ? sttl : smin;
	soa(g, LDNS_SECTION_AUTHORITY, zone, sttl, smin);
	rrsig(g, LDNS_SECTION_AUTHORITY, zone, sttl, "SOA", zone);
	switch (v) {
	case 0: /* NXDOMAIN, NSEC: the name and the wildcard are covered */
		snprintf(t, sizeof t, "mmm.%s", zone);
		rr(g, LDNS_SECTION_AUTHORITY, "%s %u IN NSEC zzz.%s A AAAA RRSIG NSEC", t, nttl, zone);
		rrsig(g, LDNS_SECTION_AUTHORITY, t, nttl, "NSEC", zone);
		rr(g, LDNS_SECTION_AUTHORITY, "%s %u IN NSEC aaa.%s A NS SOA MX TXT AAAA RRSIG NSEC DNSKEY",
		   zone, nttl, zone);
		rrsig(g, LDNS_SECTION_AUTHORITY, zone, nttl, "NSEC", zone);
		break;
	case 1: /* NXDOMAIN, NSEC3: closest encloser, next closer, wildcard */
		for (int k = 0; k < 3; k++) {
			b32hex(g, h1);
			b32hex(g, h2);
			rr(g, LDNS_SECTION_AUTHORITY, "%s.%s %u IN NSEC3 1 %d 0 %s %s %s", h1, zone, nttl,
			   k == 1, k == 0 ? "-" : "aabbccdd", h2,
			   k == 0 ? "NS SOA RRSIG DNSKEY NSEC3PARAM" : "A RRSIG");
			char own[128];
			snprintf(own, sizeof own, "%s.%s", h1, zone);
			rrsig(g, LDNS_SECTION_AUTHORITY, own, nttl, "NSEC3", zone);
		}
		break;
	case 2: /* NODATA, NSEC at the name itself (owner = the query name) */
		rr(g, LDNS_SECTION_AUTHORITY, "%s %u IN NSEC zz.%s A RRSIG NSEC", q, nttl, zone);
		rrsig(g, LDNS_SECTION_AUTHORITY, q, nttl, "NSEC", zone);
		break;
	default: /* NODATA, NSEC3 matching the name */
		b32hex(g, h1);
		b32hex(g, h2);
		rr(g, LDNS_SECTION_AUTHORITY, "%s.%s %u IN NSEC3 1 0 0 - %s A TXT RRSIG", h1, zone, nttl, h2);
		snprintf(t, sizeof t, "%s.%s", h1, zone);
		rrsig(g, LDNS_SECTION_AUTHORITY, t, nttl, "NSEC3", zone);
		break;
	}
}

/* DS (from the parent), DNSKEY (257 + 256s), CDS: each with RRSIGs. */
static void k_ds_dnskey(gen_t *g)
{
	char zone[64], q[256], hx[200], key[400];
	unsigned v = g->round % 3;
	scopy(zone, sizeof zone, PICK(g, zones));
	mkname(g, q, sizeof q, NULL, zone);
	const char *parent = strchr(zone, '.') + 1;
	if (*parent == 0)
		parent = ".";
	g->dnssec = true;
	ldns_pkt_set_ad(g->pkt, chance(g, 60));
	uint32_t ttl = PICK(g, infra_ttls);
	if (v == 0 || v == 2) {
		const char *type = v == 0 ? "DS" : "CDS";
		question(g, q, "IN", type);
		unsigned n = range(g, 1, 2);
		for (unsigned k = 0; k < n; k++) {
			unsigned dt = k == 0 ? 2 : 4;
			hexstr(g, hx, dt == 2 ? 32 : 48);
			rr(g, LDNS_SECTION_ANSWER, "%s %u IN %s %u 13 %u %s", q, ttl, type,
			   range(g, 1, 65535), dt, hx);
		}
		rrsig(g, LDNS_SECTION_ANSWER, q, ttl, type, v == 0 ? parent : zone);
	} else {
		question(g, q, "IN", "DNSKEY");
		b64str(g, key, 64);
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN DNSKEY 257 3 13 %s", q, ttl, key);
		unsigned n = range(g, 1, 2);
		for (unsigned k = 0; k < n; k++) {
			b64str(g, key, 64);
			rr(g, LDNS_SECTION_ANSWER, "%s %u IN DNSKEY 256 3 13 %s", q, ttl, key);
		}
		rrsig(g, LDNS_SECTION_ANSWER, q, ttl, "DNSKEY", zone);
		if (chance(g, 50))
			rrsig(g, LDNS_SECTION_ANSWER, q, ttl, "DNSKEY", zone);
	}
}

/* MX with 1-3 exchanges, their addresses in additional (other owners). */
static void k_mx(gen_t *g)
{
	static const char *const provs[] = { "", "mail.protection.example.net.", "l.mx.example.org." };
	char zone[64], q[256], ex[3][256], a[64];
	scopy(zone, sizeof zone, PICK(g, zones));
	mkname(g, q, sizeof q, NULL, zone);
	question(g, q, "IN", "MX");
	uint32_t ttl = PICK(g, ttls);
	const char *prov = PICK(g, provs);
	unsigned n = range(g, 1, 3);
	for (unsigned k = 0; k < n; k++) {
		if (*prov)
			snprintf(ex[k], sizeof ex[k], "mx%u.%s", k, prov);
		else
			snprintf(ex[k], sizeof ex[k], "mx%u.%s", k, zone);
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN MX %u %s", q, ttl, 10 * k + 5, ex[k]);
	}
	if (g->round % 2 == 0) {
		for (unsigned k = 0; k < n; k++) {
			uint32_t at = PICK(g, ttls);
			v4(g, a, sizeof a);
			rr(g, LDNS_SECTION_ADDITIONAL, "%s %u IN A %s", ex[k], at, a);
			if (chance(g, 50)) {
				v6(g, a, sizeof a);
				rr(g, LDNS_SECTION_ADDITIONAL, "%s %u IN AAAA %s", ex[k], at, a);
			}
		}
	}
}

/* Referrals: no answer, NS in authority (no SOA), glue in additional; some
 * signed (DS + RRSIG), some with an NSEC3 opt-out proof of no DS. */
static void k_referral(gen_t *g)
{
	char zone[64], q[256], ns[4][256], a[64], hx[80], h1[40], h2[40];
	scopy(zone, sizeof zone, PICK(g, zones));
	snprintf(q, sizeof q, "%s.%s", PICK(g, hosts), zone);
	if (g->mixcase)
		mixcase(g, q);
	const char *parent = strchr(zone, '.') + 1;
	if (*parent == 0)
		parent = ".";
	ldns_pkt_set_rd(g->pkt, chance(g, 30));
	ldns_pkt_set_ra(g->pkt, false);
	question(g, q, "IN", chance(g, 70) ? "A" : "AAAA");
	uint32_t ttl = PICK(g, infra_ttls);
	unsigned n = range(g, 2, 4);
	bool out_of_zone = g->round % 4 == 3;
	for (unsigned k = 0; k < n; k++) {
		if (out_of_zone)
			snprintf(ns[k], sizeof ns[k], "ns%u.dnsprovider.example.net.", k + 1);
		else
			snprintf(ns[k], sizeof ns[k], "ns%u.%s", k + 1, zone);
		rr(g, LDNS_SECTION_AUTHORITY, "%s %u IN NS %s", zone, ttl, ns[k]);
	}
	if (g->round % 4 == 1) {
		g->dnssec = true;
		hexstr(g, hx, 32);
		uint32_t dttl = PICK(g, ttls);
		rr(g, LDNS_SECTION_AUTHORITY, "%s %u IN DS %u 8 2 %s", zone, dttl, range(g, 1, 65535), hx);
		rrsig(g, LDNS_SECTION_AUTHORITY, zone, dttl, "DS", parent);
	} else if (g->round % 4 == 2) {
		g->dnssec = true;
		b32hex(g, h1);
		b32hex(g, h2);
		uint32_t nt = PICK(g, soa_mins);
		char own[128];
		snprintf(own, sizeof own, "%s.%s", h1, strcmp(parent, ".") == 0 ? "" : parent);
		rr(g, LDNS_SECTION_AUTHORITY, "%s %u IN NSEC3 1 1 0 - %s NS", own, nt, h2);
		rrsig(g, LDNS_SECTION_AUTHORITY, own, nt, "NSEC3", parent);
	}
	if (!out_of_zone) {
		for (unsigned k = 0; k < n; k++) {
			v4(g, a, sizeof a);
			rr(g, LDNS_SECTION_ADDITIONAL, "%s %u IN A %s", ns[k], ttl, a);
			if (chance(g, 60)) {
				v6(g, a, sizeof a);
				rr(g, LDNS_SECTION_ADDITIONAL, "%s %u IN AAAA %s", ns[k], ttl, a);
			}
		}
	}
}

/* SRV with targets' addresses in additional. */
static void k_srv(gen_t *g)
{
	static const char *const svcs[] = {
		"_sip._tcp", "_sip._udp", "_xmpp-client._tcp", "_ldap._tcp.dc._msdcs", "_imaps._tcp",
		"_submission._tcp", "_minecraft._tcp",
	};
	char zone[64], q[256], tgt[3][256], a[64];
	scopy(zone, sizeof zone, PICK(g, zones));
	mkname(g, q, sizeof q, PICK(g, svcs), zone);
	question(g, q, "IN", "SRV");
	uint32_t ttl = PICK(g, ttls);
	unsigned n = range(g, 1, 3);
	for (unsigned k = 0; k < n; k++) {
		snprintf(tgt[k], sizeof tgt[k], "srv%u.%s", k + 1, zone);
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN SRV %u %u %u %s", q, ttl, 10 * (k / 2), range(g, 0, 100),
		   PICK(g, (const unsigned[]){ 5060, 5222, 389, 993, 587, 25565 }), tgt[k]);
	}
	if (chance(g, 60)) {
		for (unsigned k = 0; k < n; k++) {
			v4(g, a, sizeof a);
			rr(g, LDNS_SECTION_ADDITIONAL, "%s %u IN A %s", tgt[k], ttl, a);
		}
	}
	if (g->round % 3 == 2)
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN SRV 0 0 0 .", q, ttl); /* "service not here" */
}

/* NAPTR: SIP (replacement set) and ENUM (regexp set, replacement "."). */
static void k_naptr(gen_t *g)
{
	char zone[64], q[256];
	scopy(zone, sizeof zone, PICK(g, zones));
	uint32_t ttl = PICK(g, ttls);
	if (g->round % 2 == 0) {
		mkname(g, q, sizeof q, NULL, zone);
		question(g, q, "IN", "NAPTR");
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN NAPTR 100 10 \"S\" \"SIP+D2U\" \"\" _sip._udp.%s", q, ttl, zone);
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN NAPTR 100 20 \"S\" \"SIP+D2T\" \"\" _sip._tcp.%s", q, ttl, zone);
		if (chance(g, 50))
			rr(g, LDNS_SECTION_ANSWER, "%s %u IN NAPTR 200 10 \"s\" \"SIPS+D2T\" \"\" _sips._tcp.%s",
			   q, ttl, zone);
	} else {
		snprintf(q, sizeof q, "%u.%u.%u.%u.5.5.5.0.0.8.1.e164.arpa.", rnd(g, 10), rnd(g, 10),
			 rnd(g, 10), rnd(g, 10));
		question(g, q, "IN", "NAPTR");
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN NAPTR 100 10 \"u\" \"E2U+sip\" \"!^.*$!sip:info@%s!\" .",
		   q, ttl, zone);
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN NAPTR 102 10 \"u\" \"E2U+email:mailto\" "
		   "\"!^.*$!mailto:info@%s!\" .", q, ttl, zone);
	}
}

/* SVCB and HTTPS: ServiceMode with parameters, AliasMode, DoH discovery
 * (RFC 9461 SVCB), and the generic \# form with TYPE64/TYPE65. */
static void k_svcb(gen_t *g)
{
	char zone[64], q[256], a[64], b[64], ech[100];
	scopy(zone, sizeof zone, PICK(g, zones));
	uint32_t ttl = PICK(g, ttls);
	switch (g->round % 5) {
	case 0:
		mkname(g, q, sizeof q, NULL, zone);
		question(g, q, "IN", "HTTPS");
		v4(g, a, sizeof a);
		v6(g, b, sizeof b);
		b64str(g, ech, 45);
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN HTTPS 1 . alpn=h3,h2 ipv4hint=%s ipv6hint=%s ech=%s",
		   q, ttl, a, b, ech);
		break;
	case 1:
		mkname(g, q, sizeof q, "www", zone);
		question(g, q, "IN", "HTTPS");
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN HTTPS 0 %s", q, ttl, PICK(g, cdn_zones));
		break;
	case 2:
		snprintf(q, sizeof q, "_dns.resolver.arpa.");
		question(g, q, "IN", "SVCB");
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN SVCB 1 dns.%s alpn=dot port=853", q, ttl, zone);
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN SVCB 2 dns.%s alpn=h2,h3 key7=\"/dns-query{?dns}\"",
		   q, ttl, zone);
		v4(g, a, sizeof a);
		rr(g, LDNS_SECTION_ADDITIONAL, "dns.%s %u IN A %s", zone, ttl, a);
		break;
	case 3:
		mkname(g, q, sizeof q, "api", zone);
		question(g, q, "IN", "HTTPS");
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN HTTPS 1 . mandatory=alpn alpn=h2 no-default-alpn port=8443",
		   q, ttl);
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN HTTPS 2 backup.%s alpn=h2", q, ttl, zone);
		break;
	default:
		/* RFC 3597 generic syntax: HTTPS "1 . alpn=h2" and SVCB "0 ." */
		mkname(g, q, sizeof q, NULL, zone);
		if (chance(g, 50)) {
			question(g, q, "IN", "TYPE65");
			rr(g, LDNS_SECTION_ANSWER, "%s %u IN TYPE65 \\# 10 00010000010003026832", q, ttl);
		} else {
			question(g, q, "IN", "TYPE64");
			rr(g, LDNS_SECTION_ANSWER, "%s %u IN TYPE64 \\# 3 000000", q, ttl);
		}
		break;
	}
}

/* CAA: issue, issuewild, iodef, critical flag. */
static void k_caa(gen_t *g)
{
	char zone[64], q[256];
	scopy(zone, sizeof zone, PICK(g, zones));
	mkname(g, q, sizeof q, NULL, zone);
	question(g, q, "IN", "CAA");
	uint32_t ttl = PICK(g, ttls);
	rr(g, LDNS_SECTION_ANSWER, "%s %u IN CAA 0 issue \"letsencrypt.org\"", q, ttl);
	unsigned n = range(g, 0, 3);
	if (n > 0)
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN CAA 0 issuewild \";\"", q, ttl);
	if (n > 1)
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN CAA 0 iodef \"mailto:security@%s\"", q, ttl, zone);
	if (n > 2)
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN CAA 128 issue \"ca.example.net; account=%u\"", q, ttl,
		   rnd(g, 100000));
}

/* PTR: IPv4 reverse, IPv6 nibble reverse, RFC 2317 classless delegation. */
static void k_ptr(gen_t *g)
{
	char q[256], t[256], h[256];
	uint32_t ttl = PICK(g, infra_ttls);
	mkname(g, h, sizeof h, PICK(g, hosts), PICK(g, zones));
	switch (g->round % 3) {
	case 0:
		snprintf(q, sizeof q, "%u.%u.51.198.in-addr.arpa.", range(g, 1, 254), rnd(g, 256));
		question(g, q, "IN", "PTR");
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN PTR %s", q, ttl, h);
		if (chance(g, 30))
			rr(g, LDNS_SECTION_ANSWER, "%s %u IN PTR alias.%s", q, ttl, h);
		break;
	case 1: {
		size_t o = 0;
		for (int k = 0; k < 24; k++)
			o += (size_t)snprintf(q + o, sizeof q - o, "%x.", rnd(g, 16));
		snprintf(q + o, sizeof q - o, "8.b.d.0.1.0.0.2.ip6.arpa.");
		question(g, q, "IN", "PTR");
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN PTR %s", q, ttl, h);
		break;
	}
	default: {
		unsigned last = range(g, 1, 126);
		snprintf(q, sizeof q, "%u.2.0.192.in-addr.arpa.", last);
		snprintf(t, sizeof t, "%u.0/25.2.0.192.in-addr.arpa.", last);
		question(g, q, "IN", "PTR");
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN CNAME %s", q, ttl, t);
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN PTR %s", t, PICK(g, ttls), h);
		break;
	}
	}
}

/* SOA queries: the SOA in answer, sometimes NS in authority. */
static void k_soa(gen_t *g)
{
	char zone[64], q[256];
	scopy(zone, sizeof zone, PICK(g, zones));
	mkname(g, q, sizeof q, NULL, zone);
	ldns_pkt_set_aa(g->pkt, chance(g, 60));
	question(g, q, "IN", "SOA");
	soa(g, LDNS_SECTION_ANSWER, q, PICK(g, soa_ttls), PICK(g, soa_mins));
	if (chance(g, 50)) {
		uint32_t nttl = PICK(g, infra_ttls);
		rr(g, LDNS_SECTION_AUTHORITY, "%s %u IN NS ns1.%s", zone, nttl, zone);
		rr(g, LDNS_SECTION_AUTHORITY, "%s %u IN NS ns2.%s", zone, nttl, zone);
	}
}

/* Unknown (private-use) types in generic syntax, 1-3 records of 0-40 bytes. */
static void k_unknown(gen_t *g)
{
	static const unsigned types[] = { 65280, 65281, 65400, 65534 };
	char zone[64], q[256], hx[100], tn[16];
	scopy(zone, sizeof zone, PICK(g, zones));
	mkname(g, q, sizeof q, chance(g, 50) ? PICK(g, hosts) : NULL, zone);
	snprintf(tn, sizeof tn, "TYPE%u", types[g->round % 4]);
	question(g, q, "IN", tn);
	uint32_t ttl = PICK(g, ttls);
	unsigned n = range(g, 1, 3);
	for (unsigned k = 0; k < n; k++) {
		unsigned len = k == 0 && g->round % 3 == 0 ? 0 : range(g, 1, 40);
		hexstr(g, hx, len);
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN %s \\# %u %s", q, ttl, tn, len, hx);
	}
}

/* HINFO (and the RFC 8482 answer to ANY), RP, MINFO, AFSDB: old types, the
 * last three with names in rdata that dnsnap must expand. */
static void k_hinfo(gen_t *g)
{
	char zone[64], q[256];
	scopy(zone, sizeof zone, PICK(g, zones));
	uint32_t ttl = PICK(g, ttls);
	switch (g->round % 4) {
	case 0:
		mkname(g, q, sizeof q, NULL, zone);
		question(g, q, "IN", "ANY");
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN HINFO \"RFC8482\" \"\"", q, ttl);
		break;
	case 1:
		mkname(g, q, sizeof q, PICK(g, hosts), zone);
		question(g, q, "IN", "HINFO");
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN HINFO \"INTEL-386\" \"Linux\"", q, ttl);
		break;
	case 2:
		mkname(g, q, sizeof q, NULL, zone);
		question(g, q, "IN", "RP");
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN RP admin.%s info.%s", q, ttl, zone, zone);
		rr(g, LDNS_SECTION_ADDITIONAL, "info.%s %u IN TXT \"call the admin\"", zone, ttl);
		break;
	default:
		mkname(g, q, sizeof q, NULL, zone);
		if ((g->round / 4) % 2 == 0) {
			question(g, q, "IN", "MINFO");
			rr(g, LDNS_SECTION_ANSWER, "%s %u IN MINFO list-admin.%s errors.%s", q, ttl, zone, zone);
		} else {
			question(g, q, "IN", "AFSDB");
			rr(g, LDNS_SECTION_ANSWER, "%s %u IN AFSDB 1 afsdb.%s", q, ttl, zone);
			rr(g, LDNS_SECTION_ANSWER, "%s %u IN AFSDB 2 afsdb2.%s", q, ttl, zone);
		}
		break;
	}
}

/* SSHFP: 2-4 fingerprints (RSA/ECDSA/Ed25519, SHA-1/SHA-256). */
static void k_sshfp(gen_t *g)
{
	static const unsigned algs[] = { 1, 3, 4 };
	char q[256], hx[80];
	mkname(g, q, sizeof q, PICK(g, hosts), PICK(g, zones));
	question(g, q, "IN", "SSHFP");
	uint32_t ttl = PICK(g, ttls);
	unsigned n = range(g, 2, 4);
	for (unsigned k = 0; k < n; k++) {
		unsigned fp = k % 2 + 1;
		hexstr(g, hx, fp == 1 ? 20 : 32);
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN SSHFP %u %u %s", q, ttl, algs[k % 3], fp, hx);
	}
}

/* TLSA (DANE) for HTTPS and SMTP, sometimes signed as DANE requires. */
static void k_tlsa(gen_t *g)
{
	char zone[64], q[256], hx[140];
	scopy(zone, sizeof zone, PICK(g, zones));
	snprintf(q, sizeof q, "%s.%s", g->round % 2 ? "_25._tcp.mail" : "_443._tcp.www", zone);
	if (g->mixcase)
		mixcase(g, q);
	question(g, q, "IN", "TLSA");
	uint32_t ttl = PICK(g, ttls);
	hexstr(g, hx, 32);
	rr(g, LDNS_SECTION_ANSWER, "%s %u IN TLSA 3 1 1 %s", q, ttl, hx);
	if (chance(g, 50)) {
		hexstr(g, hx, 64);
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN TLSA 2 0 2 %s", q, ttl, hx);
	}
	if (chance(g, 60)) {
		g->dnssec = true;
		ldns_pkt_set_ad(g->pkt, true);
		rrsig(g, LDNS_SECTION_ANSWER, q, ttl, "TLSA", zone);
	}
}

/* Class CH: version.bind and friends (BIND adds an NS in authority). */
static void k_chaos(gen_t *g)
{
	static const char *const names[] = { "version.bind.", "hostname.bind.", "id.server.",
					     "version.server.", "authors.bind." };
	char q[64];
	scopy(q, sizeof q, names[g->round % NELEM(names)]);
	if (g->mixcase)
		mixcase(g, q);
	ldns_pkt_set_aa(g->pkt, true);
	ldns_pkt_set_ra(g->pkt, false);
	question(g, q, "CH", "TXT");
	if (g->round % 4 == 3) {
		ldns_pkt_set_rcode(g->pkt, LDNS_RCODE_REFUSED);
		return;
	}
	if (strncmp(names[g->round % NELEM(names)], "authors", 7) == 0) {
		rr(g, LDNS_SECTION_ANSWER, "%s 0 CH TXT \"Alice\"", q);
		rr(g, LDNS_SECTION_ANSWER, "%s 0 CH TXT \"Bob\"", q);
	} else {
		rr(g, LDNS_SECTION_ANSWER, "%s 0 CH TXT \"%s\"", q,
		   PICK(g, (const char *const[]){ "9.18.19", "unbound 1.19.0", "ns1.lax", "Knot DNS 3.3.2" }));
	}
	if (chance(g, 40))
		rr(g, LDNS_SECTION_AUTHORITY, "%s 0 CH NS %s", q, q);
}

/* Error rcodes (FORMERR, SERVFAIL, NOTIMP, REFUSED), most with EDE options,
 * some with an SOA (kind ANSWER: min TTL over every record). */
static void k_error(gen_t *g)
{
	static const struct {
		ldns_pkt_rcode rcode;
		uint16_t code;
		const char *text;
	} errs[] = {
		{ LDNS_RCODE_SERVFAIL, 22, "At delegation example.com for example.com/a" },
		{ LDNS_RCODE_SERVFAIL, 6, "" },
		{ LDNS_RCODE_SERVFAIL, 7, "signature expired" },
		{ LDNS_RCODE_REFUSED, 18, "" },
		{ LDNS_RCODE_REFUSED, 20, "not authoritative for this zone" },
		{ LDNS_RCODE_SERVFAIL, 23, "network error 192.0.2.53:53 rcvd REFUSED" },
		{ LDNS_RCODE_NOTIMPL, 21, "" },
		{ LDNS_RCODE_FORMERR, 0, "bad EDNS option" },
		{ LDNS_RCODE_SERVFAIL, 9, "no SEP matching the DS found for example.org." },
	};
	char zone[64], q[256];
	unsigned v = g->round % NELEM(errs);
	scopy(zone, sizeof zone, PICK(g, zones));
	mkname(g, q, sizeof q, PICK(g, hosts), zone);
	ldns_pkt_set_rcode(g->pkt, errs[v].rcode);
	question(g, q, "IN", PICK(g, (const char *const[]){ "A", "AAAA", "MX", "TXT" }));
	g->edns = true;
	g->no_extra = true;
	if (g->round % 5 != 4)
		ede(g, errs[v].code, errs[v].text);
	if (g->round % 3 == 1)
		ede(g, 3, "stale answer served"); /* a second option */
	if (g->round % 4 == 2)
		soa(g, LDNS_SECTION_AUTHORITY, zone, PICK(g, soa_ttls), PICK(g, soa_mins));
}

/* A full authoritative answer: answer RRset, the zone's NS in authority,
 * glue with owners in other cases in additional (and the glue's AAAA after
 * its A, an owner reference). */
static void k_full(gen_t *g)
{
	char zone[64], q[256], ns[3][256], a[64];
	scopy(zone, sizeof zone, PICK(g, zones));
	mkname(g, q, sizeof q, PICK(g, hosts), zone);
	ldns_pkt_set_aa(g->pkt, true);
	ldns_pkt_set_ra(g->pkt, chance(g, 30));
	question(g, q, "IN", "A");
	uint32_t ttl = PICK(g, ttls);
	unsigned n = range(g, 1, 2);
	for (unsigned k = 0; k < n; k++) {
		v4(g, a, sizeof a);
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN A %s", q, ttl, a);
	}
	uint32_t nttl = PICK(g, infra_ttls);
	unsigned m = range(g, 2, 3);
	for (unsigned k = 0; k < m; k++) {
		snprintf(ns[k], sizeof ns[k], "ns%u.%s", k + 1, zone);
		rr(g, LDNS_SECTION_AUTHORITY, "%s %u IN NS %s", zone, nttl, ns[k]);
	}
	for (unsigned k = 0; k < m; k++) {
		char own[256];
		scopy(own, sizeof own, ns[k]);
		mixcase(g, own);
		v4(g, a, sizeof a);
		rr(g, LDNS_SECTION_ADDITIONAL, "%s %u IN A %s", own, nttl, a);
		v6(g, a, sizeof a);
		rr(g, LDNS_SECTION_ADDITIONAL, "%s %u IN AAAA %s", ns[k], nttl, a);
	}
}

/* DNAME (RFC 6672) with the synthesized CNAME and the target's address. */
static void k_dname(gen_t *g)
{
	char from[64], to[64], q[256], t[256], a[64];
	const char *host = PICK(g, hosts);
	snprintf(from, sizeof from, "old.%s", PICK(g, zones));
	scopy(to, sizeof to, PICK(g, cdn_zones));
	mkname(g, q, sizeof q, host, from);
	snprintf(t, sizeof t, "%s.%s", host, to);
	question(g, q, "IN", "A");
	uint32_t ttl = PICK(g, ttls);
	rr(g, LDNS_SECTION_ANSWER, "%s %u IN DNAME %s", from, ttl, to);
	rr(g, LDNS_SECTION_ANSWER, "%s %u IN CNAME %s", q, ttl, t);
	v4(g, a, sizeof a);
	if (g->round % 2 == 0)
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN A %s", t, PICK(g, short_ttls), a);
}

/* CNAME to NODATA: NOERROR, a CNAME (or two) in answer, the target zone's SOA
 * in authority. */
static void k_cname_nodata(gen_t *g)
{
	char q[256], t1[256], t2[256];
	const char *cz = PICK(g, cdn_zones);
	mkname(g, q, sizeof q, PICK(g, hosts), PICK(g, zones));
	question(g, q, "IN", PICK(g, (const char *const[]){ "AAAA", "MX", "TXT" }));
	snprintf(t1, sizeof t1, "edge%u.%s", rnd(g, 100), cz);
	rr(g, LDNS_SECTION_ANSWER, "%s %u IN CNAME %s", q, PICK(g, ttls), t1);
	if (g->round % 2 == 1) {
		snprintf(t2, sizeof t2, "x%u.%s", rnd(g, 100), cz);
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN CNAME %s", t1, PICK(g, ttls), t2);
	}
	soa(g, LDNS_SECTION_AUTHORITY, cz, PICK(g, soa_ttls), PICK(g, soa_mins));
}

/* TTL edge cases: 0; 2^31-1 (the largest legal); 2^31 and 2^32-1 (above the
 * RFC 2181 limit: to be treated as 0); a NODATA whose SOA TTL is too large;
 * a NODATA whose SOA MINIMUM is too large. */
static void k_ttl_edge(gen_t *g)
{
	char q[256], own[256], a[64];
	char zone[64];
	scopy(zone, sizeof zone, PICK(g, zones));
	mkname(g, q, sizeof q, PICK(g, hosts), zone);
	unsigned v = g->round % 6;
	question(g, q, "IN", "A");
	owner_of(g, own, sizeof own, q);
	static const uint32_t edge[] = { 0, 2147483647u, 2147483648u, 4294967295u };
	if (v < 4) {
		v4(g, a, sizeof a);
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN A %s", own, edge[v], a);
		v4(g, a, sizeof a);
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN A %s", own, edge[v], a);
		if (v >= 2) /* a legal TTL in additional, for contrast */
			rr(g, LDNS_SECTION_ADDITIONAL, "ns1.%s 3600 IN A 192.0.2.1", zone);
	} else if (v == 4) {
		soa(g, LDNS_SECTION_AUTHORITY, zone, 4294967295u, 300);
	} else { /* a MINIMUM above 2^31-1: a TTL too, so it counts as 0 */
		soa(g, LDNS_SECTION_AUTHORITY, zone, 300, 4294967295u);
	}
}

/* Large messages: a big A RRset; many MX with A + AAAA (over 64 records, so
 * owner references run out); a large TXT set; the root NS set with glue. */
static void k_large(gen_t *g)
{
	char zone[64], q[256], a[64], s[256];
	scopy(zone, sizeof zone, PICK(g, zones));
	g->edns = true;
	g->udp = 4096;
	uint32_t ttl = PICK(g, ttls);
	switch (g->round % 4) {
	case 0: {
		mkname(g, q, sizeof q, "pool", zone);
		question(g, q, "IN", "A");
		unsigned n = range(g, 20, 40);
		for (unsigned k = 0; k < n; k++) {
			v4(g, a, sizeof a);
			rr(g, LDNS_SECTION_ANSWER, "%s %u IN A %s", q, ttl, a);
		}
		break;
	}
	case 1: {
		mkname(g, q, sizeof q, NULL, zone);
		question(g, q, "IN", "MX");
		unsigned n = 30;
		for (unsigned k = 0; k < n; k++)
			rr(g, LDNS_SECTION_ANSWER, "%s %u IN MX %u mx%02u.%s", q, ttl, k, k, zone);
		for (unsigned k = 0; k < n; k++) {
			v4(g, a, sizeof a);
			rr(g, LDNS_SECTION_ADDITIONAL, "mx%02u.%s %u IN A %s", k, zone, ttl, a);
			v6(g, a, sizeof a);
			rr(g, LDNS_SECTION_ADDITIONAL, "mx%02u.%s %u IN AAAA %s", k, zone, ttl, a);
		}
		break;
	}
	case 2: {
		mkname(g, q, sizeof q, "big", zone);
		question(g, q, "IN", "TXT");
		for (unsigned k = 0; k < 12; k++) {
			for (size_t c = 0; c < 200; c++)
				s[c] = (char)('A' + rnd(g, 26));
			s[200] = 0;
			rr(g, LDNS_SECTION_ANSWER, "%s %u IN TXT \"%03u %s\"", q, ttl, k, s);
		}
		break;
	}
	default:
		question(g, ".", "IN", "NS");
		for (char c = 'a'; c <= 'm'; c++)
			rr(g, LDNS_SECTION_ANSWER, ". 518400 IN NS %c.root-servers.net.", c);
		for (char c = 'a'; c <= 'm'; c++) {
			rr(g, LDNS_SECTION_ADDITIONAL, "%c.root-servers.net. 518400 IN A 198.41.0.%d", c, c - 'a' + 4);
			rr(g, LDNS_SECTION_ADDITIONAL, "%c.root-servers.net. 518400 IN AAAA 2001:503:ba3e::2:%d", c,
			   c - 'a' + 30);
		}
		break;
	}
}

/* Odd names: a 0 byte and a byte >= 0x80 in labels (lower-casing must touch
 * A-Z only), an escaped dot, a space, a wildcard label, a 63-byte label,
 * underscores, a single-label name. */
static void k_odd(gen_t *g)
{
	static const char *const names[] = {
		"A\\000b.Ex\\200AMPLE.com.",
		"dot\\.in\\.Label.example.",
		"Sp\\032Ace.example.org.",
		"*.Wild.example.net.",
		"ThisLabelIsExactlySixtyThreeBytesLongXXXXXXXXXXXXXXXXXXXXXXXXXX.example.com.",
		"_Acme-Challenge.WWW.example.de.",
		"LOCALHOST.",
		"\\195\\164Umlaut.example.",
	};
	char q[256], a[64];
	scopy(q, sizeof q, names[g->round % NELEM(names)]);
	bool txt = q[0] == '_';
	question(g, q, "IN", txt ? "TXT" : "A");
	uint32_t ttl = PICK(g, ttls);
	if (txt) {
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN TXT \"%s\"", q, ttl, "xK3y-v4lu3_token");
		return;
	}
	v4(g, a, sizeof a);
	char own[256];
	scopy(own, sizeof own, q);
	lower(own);
	rr(g, LDNS_SECTION_ANSWER, "%s %u IN A %s", own, ttl, a);
}

/* Case: written without compression (ldns's compressor would fold names that
 * differ only in case onto one spelling), a mixed-case question, owners of
 * one RRset spelled differently, a CNAME target and the next owner spelled
 * differently, glue owners spelled differently from the NS rdata. This is
 * what a 0x20-randomizing resolver can see. */
static void k_case(gen_t *g)
{
	char zone[64], q[256], own[256], t[256], nxt[256], ns[256], a[64];
	scopy(zone, sizeof zone, PICK(g, zones));
	snprintf(q, sizeof q, "%s.%s", PICK(g, hosts), zone);
	mixcase(g, q);
	g->compress = false;
	uint32_t ttl = PICK(g, ttls);
	switch (g->round % 3) {
	case 0: /* one RRset, members spelled three ways */
		question(g, q, "IN", "A");
		for (unsigned k = 0; k < 3; k++) {
			scopy(own, sizeof own, q);
			if (k == 1)
				lower(own);
			else if (k == 2)
				mixcase(g, own);
			v4(g, a, sizeof a);
			rr(g, LDNS_SECTION_ANSWER, "%s %u IN A %s", own, ttl, a);
		}
		break;
	case 1: /* CNAME target "Edge.X" then owner "edge.x" */
		question(g, q, "IN", "AAAA");
		snprintf(t, sizeof t, "Edge%u.%s", rnd(g, 100), PICK(g, cdn_zones));
		mixcase(g, t);
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN CNAME %s", q, ttl, t);
		scopy(nxt, sizeof nxt, t);
		lower(nxt);
		for (unsigned k = 0; k < 2; k++) {
			v6(g, a, sizeof a);
			rr(g, LDNS_SECTION_ANSWER, "%s %u IN AAAA %s", k ? t : nxt, 60, a);
		}
		break;
	default: /* NS rdata "NS1.Zone", glue owner "ns1.zone", apex spelled twice */
		question(g, q, "IN", "A");
		v4(g, a, sizeof a);
		rr(g, LDNS_SECTION_ANSWER, "%s %u IN A %s", q, ttl, a);
		for (unsigned k = 1; k <= 2; k++) {
			scopy(own, sizeof own, zone);
			if (k == 2)
				mixcase(g, own);
			snprintf(ns, sizeof ns, "NS%u.%s", k, zone);
			mixcase(g, ns);
			rr(g, LDNS_SECTION_AUTHORITY, "%s 86400 IN NS %s", own, ns);
		}
		for (unsigned k = 1; k <= 2; k++) {
			snprintf(ns, sizeof ns, "ns%u.%s", k, zone);
			v4(g, a, sizeof a);
			rr(g, LDNS_SECTION_ADDITIONAL, "%s 86400 IN A %s", ns, a);
			mixcase(g, ns);
			v6(g, a, sizeof a);
			rr(g, LDNS_SECTION_ADDITIONAL, "%s 86400 IN AAAA %s", ns, a);
		}
		break;
	}
}

static const struct {
	const char *name;
	void (*fn)(gen_t *);
} kinds[] = {
	{ "A", k_a },
	{ "AAAA set", k_aaaa },
	{ "TXT", k_txt },
	{ "CNAME chain", k_cname },
	{ "NXDOMAIN + SOA", k_nxdomain },
	{ "NODATA + SOA", k_nodata },
	{ "DNSSEC positive", k_dnssec_pos },
	{ "DNSSEC negative", k_dnssec_neg },
	{ "DS/DNSKEY/CDS", k_ds_dnskey },
	{ "MX + addresses", k_mx },
	{ "referral", k_referral },
	{ "SRV", k_srv },
	{ "NAPTR", k_naptr },
	{ "SVCB/HTTPS", k_svcb },
	{ "CAA", k_caa },
	{ "PTR", k_ptr },
	{ "SOA", k_soa },
	{ "unknown type", k_unknown },
	{ "HINFO/RP/MINFO/AFSDB", k_hinfo },
	{ "SSHFP", k_sshfp },
	{ "TLSA", k_tlsa },
	{ "class CH", k_chaos },
	{ "error rcode + EDE", k_error },
	{ "full answer + glue", k_full },
	{ "DNAME", k_dname },
	{ "CNAME to NODATA", k_cname_nodata },
	{ "TTL edge", k_ttl_edge },
	{ "large", k_large },
	{ "odd names", k_odd },
	{ "mixed case", k_case },
};

#define NKINDS NELEM(kinds)
#define ROUNDS 9 /* 11 + 30 * 9 = 281 messages */

/* ------------------------------------------------------------ assembly */

/* A TSIG record (hmac-sha256, fake MAC), which ldns writes last. The rdata is
 * given as one opaque field: ldns's TSIG presentation format is not parsable. */
static ldns_rr *make_tsig(gen_t *g)
{
	uint8_t td[64];
	size_t k = 0;
	static const uint8_t alg[] = { 11, 'h', 'm', 'a', 'c', '-', 's', 'h', 'a', '2', '5', '6', 0 };
	memcpy(td, alg, sizeof alg);
	k = sizeof alg;
	static const uint8_t tf[] = { 0, 0, 0x65, 0x53, 0xf1, 0x00, 0x01, 0x2c, 0, 32 };
	memcpy(td + k, tf, sizeof tf); /* time 1700000000, fudge 300, MAC size 32 */
	k += sizeof tf;
	for (int m = 0; m < 32; m++)
		td[k++] = (uint8_t)rnd(g, 256);
	uint16_t id = ldns_pkt_id(g->pkt);
	td[k++] = (uint8_t)(id >> 8); /* original ID */
	td[k++] = (uint8_t)id;
	td[k++] = 0; /* error */
	td[k++] = 0;
	td[k++] = 0; /* other length */
	td[k++] = 0;
	ldns_rr *t = ldns_rr_new();
	if (!t)
		return NULL;
	ldns_rr_set_owner(t, ldns_dname_new_frm_str("transfer-key.example."));
	ldns_rr_set_type(t, LDNS_RR_TYPE_TSIG);
	ldns_rr_set_class(t, LDNS_RR_CLASS_ANY);
	ldns_rr_set_ttl(t, 0);
	ldns_rr_push_rdf(t, ldns_rdf_new_frm_data(LDNS_RDF_TYPE_UNKNOWN, k, td));
	return t;
}

static int serialize(gen_t *g, uint8_t **wire, size_t *len)
{
	if (g->compress) {
		if (ldns_pkt2wire(wire, g->pkt, len) != LDNS_STATUS_OK)
			return -1;
		return 0;
	}
	/* ldns_pkt2buffer_wire_compress() without a compression tree writes
	 * every name in full */
	ldns_buffer *b = ldns_buffer_new(4096);
	if (!b)
		return -1;
	if (ldns_pkt2buffer_wire_compress(b, g->pkt, NULL) != LDNS_STATUS_OK) {
		ldns_buffer_free(b);
		return -1;
	}
	*len = ldns_buffer_position(b);
	*wire = malloc(*len);
	if (*wire)
		memcpy(*wire, ldns_buffer_begin(b), *len);
	ldns_buffer_free(b);
	return *wire ? 0 : -1;
}

size_t corpus_count(void)
{
	return CORPUS_FIXED + NKINDS * ROUNDS;
}

const char *corpus_name(size_t i)
{
	if (i < CORPUS_FIXED)
		return fixed[i].name;
	if (i >= corpus_count())
		return "?";
	return kinds[(i - CORPUS_FIXED) % NKINDS].name;
}

int corpus_message(size_t i, uint8_t **wire, size_t *len)
{
	if (!wire || !len || i >= corpus_count())
		return -1;
	*wire = NULL;
	*len = 0;

	gen_t g;
	memset(&g, 0, sizeof g);
	g.s = splitmix64(0x646e736e61702031ULL ^ (uint64_t)i); /* "dnsnap 1" */
	if (g.s == 0)
		g.s = 1;
	g.pkt = ldns_pkt_new();
	if (!g.pkt)
		return -1;

	/* header defaults: a recursive resolver's answer */
	ldns_pkt_set_id(g.pkt, (uint16_t)rnd(&g, 65536));
	ldns_pkt_set_qr(g.pkt, true);
	ldns_pkt_set_opcode(g.pkt, LDNS_PACKET_QUERY);
	ldns_pkt_set_rcode(g.pkt, LDNS_RCODE_NOERROR);
	ldns_pkt_set_rd(g.pkt, true);
	ldns_pkt_set_ra(g.pkt, true);
	g.compress = true;
	g.edns = true;
	g.udp = 1232;

	if (i < CORPUS_FIXED) {
		/* the worked examples: plain, compressed, EDNS 1232 */
		fixed[i].fn(&g);
		if (g.dnssec)
			g.do_bit = true;
	} else {
		size_t k = (i - CORPUS_FIXED) % NKINDS;
		g.round = (unsigned)((i - CORPUS_FIXED) / NKINDS);
		ldns_pkt_set_rd(g.pkt, chance(&g, 95));
		ldns_pkt_set_ra(g.pkt, chance(&g, 95));
		ldns_pkt_set_ad(g.pkt, chance(&g, 15));
		ldns_pkt_set_cd(g.pkt, chance(&g, 10));
		ldns_pkt_set_aa(g.pkt, chance(&g, 10));
		g.compress = !chance(&g, 20);
		g.mixcase = chance(&g, 30);
		g.edns = chance(&g, 80);
		g.do_bit = chance(&g, 25);
		g.udp = PICK(&g, udp_sizes);
		kinds[k].fn(&g);
		if (g.dnssec) {
			g.edns = true;
			g.do_bit = true;
		}
		if (!g.no_extra) {
			/* occasional EDE on a positive or negative answer */
			if (g.edns && chance(&g, 10))
				ede(&g, PICK(&g, (const uint16_t[]){ 3, 3, 19, 0, 13 }),
				    PICK(&g, (const char *const[]){ "", "served from cache", "resolver busy" }));
			g.tsig = chance(&g, 4);
		}
	}
	if (g.ede_n)
		g.edns = true;
	if (g.edns) {
		ldns_pkt_set_edns_udp_size(g.pkt, g.udp);
		ldns_pkt_set_edns_do(g.pkt, g.do_bit);
		if (g.ede_n) {
			ldns_edns_option_list *l = ldns_edns_option_list_new();
			for (unsigned k = 0; l && k < g.ede_n; k++) {
				uint8_t data[2 + sizeof g.ede_text[0]];
				size_t tl = strlen(g.ede_text[k]);
				data[0] = (uint8_t)(g.ede_code[k] >> 8);
				data[1] = (uint8_t)g.ede_code[k];
				memcpy(data + 2, g.ede_text[k], tl);
				ldns_edns_option *o = ldns_edns_new_from_data(LDNS_EDNS_EDE, 2 + tl, data);
				if (!o || !ldns_edns_option_list_push(l, o))
					g.err = 1;
			}
			if (l)
				ldns_pkt_set_edns_option_list(g.pkt, l);
			else
				g.err = 1;
		}
	}
	if (g.tsig) {
		ldns_rr *t = make_tsig(&g);
		if (t)
			ldns_pkt_set_tsig(g.pkt, t);
		else
			g.err = 1;
	}

	int rc = -1;
	if (!g.err)
		rc = serialize(&g, wire, len);
	ldns_pkt_free(g.pkt);
	if (rc != 0) {
		fprintf(stderr, "corpus: cannot build message %zu (%s)\n", i, corpus_name(i));
		free(*wire);
		*wire = NULL;
		*len = 0;
	}
	return rc;
}
