/*
 * print.c: entries and DNS messages as text, in one vocabulary, and the one
 * presentation escaping of names and character-strings (print.h).
 *
 * Records are laid out as dig (BIND 9) lays them out: the owner, then the
 * TTL, class, type and rdata at columns 24, 32, 40 and 48, reached with tabs
 * of 8 (a field that ends past its column is followed by one space or tab,
 * as BIND's indent() does). ldns reads the rdata into its fields; names and
 * character-strings are escaped here, base64 and hex fields are cut into
 * words of 56 characters as dig cuts them, the other fields (addresses,
 * numbers, times, type bitmaps) are ldns's presentation, which is dig's,
 * but for the types rdata_dig() prints from the wire (SVCB, LOC, WKS...):
 * tests/cli/test_print.sh compares every type dig 9.18 knows with dig.
 */
#include <arpa/inet.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <ldns/ldns.h>

#include "cli.h"
#include "json.h"
#include "print.h"

static const char *const section_names[] = { "ANSWER", "AUTHORITY", "ADDITIONAL" };
static const char *const kind_names[] = { "ANSWER", "NXDOMAIN", "NODATA", "REFERRAL" };

/* ------------------------------------------------------- escaping (RFC 1035 5.1) */

void pres_escape(FILE *f, const uint8_t *p, size_t n, int what)
{
	for (size_t i = 0; i < n; i++) {
		unsigned c = p[i];
		if (c < 0x20 || c >= 0x7f || (c == ' ' && what == PRES_LABEL))
			fprintf(f, "\\%03u", c);
		else if (c == '"' || c == '\\' ||
			 (what == PRES_LABEL && strchr(".;()@$", (int)c) != NULL))
			fprintf(f, "\\%c", c);
		else
			fputc((int)c, f);
	}
}

void pres_name(FILE *f, const uint8_t *name, size_t len)
{
	size_t at = 0;
	if (len == 0 || name[0] == 0) {
		fputc('.', f);
		return;
	}
	while (at < len && name[at] != 0) {
		size_t l = name[at];
		if (l > 63 || at + 1 + l > len) { /* not a name (compressed or cut): no guessing */
			fputs("\\#?", f);
			return;
		}
		pres_escape(f, name + at + 1, l, PRES_LABEL);
		fputc('.', f);
		at += 1 + l;
	}
}

void pres_string(FILE *f, const uint8_t *s, size_t n)
{
	fputc('"', f);
	pres_escape(f, s, n, PRES_STRING);
	fputc('"', f);
}

/*
 * What a printer wrote to a FILE, as a malloc'd string (NULL: out of
 * memory). Not open_memstream(): glibc callocs 8 KB (BUFSIZ) for each, and
 * the printers open one per record (a dump's every record, a large RRset's
 * every member): a stream of our own (fopencookie) starts at 128 bytes and
 * doubles, with a 256-byte stdio buffer in the membuf itself. The membuf
 * must stay where it is from mb_open() to mb_close() (the stream points to it).
 */
typedef struct membuf {
	char *s;
	size_t n, cap;
	FILE *f;
	char io[256];
} membuf_t;

static ssize_t mb_write(void *cookie, const char *p, size_t n)
{
	membuf_t *m = cookie;
	if (m->n + n + 1 > m->cap) {
		size_t cap = m->cap ? m->cap : 128;
		while (cap < m->n + n + 1)
			cap *= 2;
		char *s = realloc(m->s, cap);
		if (s == NULL)
			return -1;
		m->s = s;
		m->cap = cap;
	}
	memcpy(m->s + m->n, p, n);
	m->n += n;
	m->s[m->n] = 0;
	return (ssize_t)n;
}

static FILE *mb_open(membuf_t *m)
{
	*m = (membuf_t){ 0 };
	cookie_io_functions_t io = { .write = mb_write };
	m->f = fopencookie(m, "w", io);
	if (m->f != NULL)
		setvbuf(m->f, m->io, _IOFBF, sizeof m->io);
	return m->f;
}

static char *mb_close(membuf_t *m)
{
	if (m->f == NULL || fclose(m->f) != 0 || (m->s == NULL && (m->s = calloc(1, 1)) == NULL)) {
		free(m->s);
		return NULL;
	}
	return m->s;
}

const char *print_name(const uint8_t *name, size_t len, char *buf, size_t cap)
{
	membuf_t m;
	char *s = NULL;
	if (mb_open(&m) != NULL) {
		pres_name(m.f, name, len);
		s = mb_close(&m);
	}
	snprintf(buf, cap, "%s", s ? s : "?");
	free(s);
	return buf;
}

/* Types BIND 9.18 names that ldns 1.8 does not (it writes TYPE56...) */
static const struct { uint16_t type; const char *name; } more_types[] = {
	{ 56, "NINFO" },  { 57, "RKEY" }, { 100, "UINFO" },   { 101, "UID" },
	{ 102, "GID" },	  { 103, "UNSPEC" }, { 258, "AVC" },   { 259, "DOA" },
	{ 260, "AMTRELAY" }, { 261, "RESINFO" }, { 262, "WALLET" }, { 32768, "TA" },
};

long print_type_by_name(const char *name)
{
	for (size_t i = 0; i < sizeof more_types / sizeof *more_types; i++)
		if (strcasecmp(name, more_types[i].name) == 0)
			return more_types[i].type;
	return -1;
}

void print_type(char *buf, size_t cap, uint16_t type)
{
	for (size_t i = 0; i < sizeof more_types / sizeof *more_types; i++)
		if (more_types[i].type == type) {
			snprintf(buf, cap, "%s", more_types[i].name);
			return;
		}
	char *s = ldns_rr_type2str((ldns_rr_type)type);
	snprintf(buf, cap, "%s", s ? s : "?");
	free(s);
}

void print_class(char *buf, size_t cap, uint16_t rclass)
{
	char *s = ldns_rr_class2str((ldns_rr_class)rclass);
	snprintf(buf, cap, "%s", s ? s : "?");
	free(s);
}

/* ------------------------------------------------------------- records */

/* BIND's indent(): from column *col to @p to (at least one character) */
static void indent(FILE *f, size_t *col, size_t to)
{
	if (to < *col + 1)
		to = *col + 1;
	size_t tabs = to / 8 - *col / 8;
	if (tabs > 0) {
		while (tabs--)
			fputc('\t', f);
		*col = to / 8 * 8;
	}
	for (; *col < to; (*col)++)
		fputc(' ', f);
}

/* s as words of 56 characters (dig's +split), upper case when @p upper */
static void words(FILE *f, const char *s, size_t n, int upper)
{
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && i % 56 == 0)
			fputc(' ', f);
		fputc(upper && s[i] >= 'a' && s[i] <= 'z' ? s[i] - 'a' + 'A' : s[i], f);
	}
}

static void hex_words(FILE *f, const uint8_t *p, size_t n)
{
	char h[3];
	for (size_t i = 0; i < n; i++) {
		snprintf(h, sizeof h, "%02X", p[i]);
		if (i > 0 && i % 28 == 0)
			fputc(' ', f);
		fputs(h, f);
	}
}

/* RFC 3597's form, as dig writes a type it does not know */
static void rdata_unknown(FILE *f, const uint8_t *p, size_t n)
{
	fprintf(f, "\\# %zu", n);
	if (n > 0)
		fputc(' ', f);
	hex_words(f, p, n);
}

/* ------------------------------------- rdata ldns prints unlike dig 9.18 */

/* base64, in words of 56 (@p split, as dig cuts keys) or whole */
static void b64_text(FILE *f, const uint8_t *p, size_t n, int split)
{
	ldns_rdf *r = ldns_rdf_new_frm_data(LDNS_RDF_TYPE_B64, n, p);
	char *s = r ? ldns_rdf2str(r) : NULL;
	if (split)
		words(f, s ? s : "?", s ? strlen(s) : 1, 0);
	else
		fputs(s ? s : "?", f);
	free(s);
	ldns_rdf_deep_free(r);
}

static void addr_text(FILE *f, int family, const uint8_t *p, size_t n)
{
	uint8_t a[16] = { 0 };
	char buf[INET6_ADDRSTRLEN];
	size_t size = family == AF_INET ? 4 : 16;
	memcpy(a, p, n < size ? n : size);
	fputs(inet_ntop(family, a, buf, sizeof buf) ? buf : "?", f);
}

/* a wire name in rdata (uncompressed: ldns wrote it), its length in *used */
static int rd_name(FILE *f, const uint8_t *p, size_t n, size_t *used)
{
	size_t at = 0;
	while (at < n && p[at] != 0 && p[at] <= 63)
		at += 1 + (size_t)p[at];
	if (at >= n || p[at] != 0)
		return -1;
	pres_name(f, p, at + 1);
	*used = at + 1;
	return 0;
}

/* character-strings, one after the other, each quoted */
static int rd_strings(FILE *f, const uint8_t *p, size_t n)
{
	for (size_t at = 0; at < n;) {
		size_t l = p[at];
		if (at + 1 + l > n)
			return -1;
		if (at > 0)
			fputc(' ', f);
		pres_string(f, p + at + 1, l);
		at += 1 + l;
	}
	return 0;
}

/* BIND's names of DNSSEC algorithms (CERT prints them) */
static const char *secalg_name(unsigned a)
{
	static const char *const names[] = {
		[1] = "RSAMD5",	       [2] = "DH",	       [3] = "DSA",
		[5] = "RSASHA1",       [6] = "NSEC3DSA",       [7] = "NSEC3RSASHA1",
		[8] = "RSASHA256",     [10] = "RSASHA512",     [12] = "ECCGOST",
		[13] = "ECDSAP256SHA256", [14] = "ECDSAP384SHA384", [15] = "ED25519",
		[16] = "ED448",
	};
	if (a < sizeof names / sizeof *names)
		return names[a];
	return a == 252 ? "INDIRECT" : a == 253 ? "PRIVATEDNS" : a == 254 ? "PRIVATEOID" : NULL;
}

/* CERT types by their mnemonics (RFC 4398 2.1, as BIND and ldns name them) */
static const char *cert_type_name(unsigned t)
{
	static const char *const names[] = {
		[1] = "PKIX", [2] = "SPKI",   [3] = "PGP",    [4] = "IPKIX",
		[5] = "ISPKI", [6] = "IPGP", [7] = "ACPKIX", [8] = "IACPKIX",
	};
	if (t < sizeof names / sizeof *names)
		return names[t];
	return t == 253 ? "URI" : t == 254 ? "OID" : NULL;
}

/* SvcParam keys as dig 9.18 names them (7, dohpath, it does not) */
static void svc_key(FILE *f, unsigned k)
{
	static const char *const names[] = { "mandatory", "alpn", "no-default-alpn", "port",
					     "ipv4hint",  "ech",  "ipv6hint" };
	if (k < sizeof names / sizeof *names)
		fputs(names[k], f);
	else
		fprintf(f, "key%u", k);
}

/* a SvcParam value in dig's double quotes; @p comma: ',' and '\\' as \, \\ */
static void svc_quoted(FILE *f, const uint8_t *p, size_t n, int comma)
{
	for (size_t i = 0; i < n; i++) {
		unsigned c = p[i];
		if (comma && (c == ',' || c == '\\'))
			fputs("\\\\", f);
		if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\%03u", c);
		else if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else
			fputc((int)c, f);
	}
}

static int rd_svcb(FILE *f, const uint8_t *p, size_t n)
{
	size_t used;
	if (n < 3)
		return -1;
	fprintf(f, "%u ", dnsnap_load_be16(p));
	if (rd_name(f, p + 2, n - 2, &used) != 0)
		return -1;
	for (size_t at = 2 + used; at < n;) {
		if (n - at < 4 || n - at - 4 < dnsnap_load_be16(p + at + 2))
			return -1;
		unsigned k = dnsnap_load_be16(p + at), l = dnsnap_load_be16(p + at + 2);
		const uint8_t *v = p + at + 4;
		fputc(' ', f);
		svc_key(f, k);
		at += 4 + l;
		if (k == 2 || (l == 0 && k != 1))
			continue; /* no-default-alpn, and keys without a value */
		fputc('=', f);
		switch (k) {
		case 0: /* mandatory */
			for (unsigned i = 0; i + 1 < l; i += 2) {
				if (i)
					fputc(',', f);
				svc_key(f, dnsnap_load_be16(v + i));
			}
			break;
		case 1: /* alpn */
			fputc('"', f);
			for (unsigned i = 0; i < l;) {
				if (i)
					fputc(',', f);
				unsigned il = v[i];
				if (i + 1 + il > l)
					return -1;
				svc_quoted(f, v + i + 1, il, 1);
				i += 1 + il;
			}
			fputc('"', f);
			break;
		case 3:
			fprintf(f, "%u", l >= 2 ? dnsnap_load_be16(v) : 0);
			break;
		case 4:
		case 6:
			for (unsigned i = 0, w = k == 4 ? 4 : 16; i + w <= l; i += w) {
				if (i)
					fputc(',', f);
				addr_text(f, k == 4 ? AF_INET : AF_INET6, v + i, w);
			}
			break;
		case 5:
			b64_text(f, v, l, 0);
			break;
		default:
			fputc('"', f);
			svc_quoted(f, v, l, 0);
			fputc('"', f);
			break;
		}
	}
	return 0;
}

/* LOC (RFC 1876): a size or precision, 4 bits of mantissa and exponent, in cm */
static void loc_size(FILE *f, unsigned b)
{
	unsigned long m = b >> 4, e = b & 15, v = m;
	if (e >= 2) {
		for (unsigned long i = 2; i < e; i++)
			v *= 10;
		fprintf(f, "%lum", v);
	} else {
		for (unsigned long i = 0; i < e; i++)
			v *= 10;
		fprintf(f, "0.%02lum", v);
	}
}

static void loc_angle(FILE *f, uint32_t raw, const char *pos_neg)
{
	uint32_t v = raw >= 0x80000000u ? raw - 0x80000000u : 0x80000000u - raw;
	fprintf(f, "%u %u %u.%03u %c", v / 3600000, v / 60000 % 60, v / 1000 % 60, v % 1000,
		pos_neg[raw >= 0x80000000u ? 0 : 1]);
}

static int rd_loc(FILE *f, const uint8_t *p, size_t n)
{
	if (n != 16 || p[0] != 0)
		return -1;
	loc_angle(f, dnsnap_load_be32(p + 4), "NS");
	fputc(' ', f);
	loc_angle(f, dnsnap_load_be32(p + 8), "EW");
	uint32_t alt = dnsnap_load_be32(p + 12);
	uint32_t cm = alt >= 10000000u ? alt - 10000000u : 10000000u - alt;
	fprintf(f, " %s%u.%02um", alt >= 10000000u ? "" : "-", cm / 100, cm % 100);
	for (int i = 1; i <= 3; i++) {
		fputc(' ', f);
		loc_size(f, p[i]);
	}
	return 0;
}

/* rdata_dig()'s second half: CERT, APL, DOA, ATMA, A6, NXT, SINK, NSAP-PTR */
static int rdata_dig_old(FILE *f, uint16_t type, const uint8_t *p, size_t n)
{
	size_t used;
	switch (type) {
	case 37: { /* CERT: the algorithm by its name */
		if (n < 5)
			return -1;
		const char *ct = cert_type_name(dnsnap_load_be16(p));
		const char *alg = secalg_name(p[4]);
		if (ct != NULL)
			fprintf(f, "%s ", ct);
		else
			fprintf(f, "%u ", dnsnap_load_be16(p));
		fprintf(f, "%u ", dnsnap_load_be16(p + 2));
		if (alg != NULL)
			fprintf(f, "%s ", alg);
		else
			fprintf(f, "%u ", p[4]);
		b64_text(f, p + 5, n - 5, 1);
		return 1;
	}
	case 42: /* APL */
		for (size_t at = 0; at < n;) {
			if (n - at < 4 || n - at - 4 < (size_t)(p[at + 3] & 0x7f))
				return -1;
			unsigned fam = dnsnap_load_be16(p + at), l = p[at + 3] & 0x7f;
			if (fam != 1 && fam != 2)
				return -1;
			fprintf(f, "%s%s%u:", at ? " " : "", p[at + 3] & 0x80 ? "!" : "", fam);
			addr_text(f, fam == 1 ? AF_INET : AF_INET6, p + at + 4, l);
			fprintf(f, "/%u", p[at + 2]);
			at += 4 + l;
		}
		return 1;
	case 259: { /* DOA */
		if (n < 10 || 10 + (size_t)p[9] > n)
			return -1;
		fprintf(f, "%u %u %u ", dnsnap_load_be32(p), dnsnap_load_be32(p + 4), p[8]);
		pres_string(f, p + 10, p[9]);
		fputc(' ', f);
		if (n == 10 + (size_t)p[9])
			fputc('-', f);
		else
			b64_text(f, p + 10 + p[9], n - 10 - p[9], 0);
		return 1;
	}
	case 34: /* ATMA: E.164 as +digits, NSAP in hex, other formats as unknown */
		if (n < 1 || p[0] > 1)
			return -1;
		if (p[0] == 1) {
			fputc('+', f);
			fwrite(p + 1, 1, n - 1, f);
		} else {
			for (size_t i = 1; i < n; i++)
				fprintf(f, "%02x", p[i]);
		}
		return 1;
	case 38: { /* A6: prefix length, the address's suffix, the prefix's name */
		if (n < 1 || p[0] > 128)
			return -1;
		size_t sl = 16 - p[0] / 8;
		if (n < 1 + sl)
			return -1;
		uint8_t a[16] = { 0 };
		memcpy(a + 16 - sl, p + 1, sl);
		fprintf(f, "%u ", p[0]);
		addr_text(f, AF_INET6, a, 16);
		if (p[0] > 0) {
			fputc(' ', f);
			if (rd_name(f, p + 1 + sl, n - 1 - sl, &used) != 0)
				return -1;
		}
		return 1;
	}
	case 30: { /* NXT: the next name, the types of RFC 2535's bitmap */
		char tn[32];
		if (rd_name(f, p, n, &used) != 0)
			return -1;
		for (size_t i = used; i < n; i++)
			for (int b = 0; b < 8; b++)
				if (p[i] & 0x80 >> b && (i - used) * 8 + (size_t)b > 0) {
					print_type(tn, sizeof tn, (uint16_t)((i - used) * 8 + (size_t)b));
					fprintf(f, " %s", tn);
				}
		return 1;
	}
	case 40: /* SINK: meaning, coding, subcoding, data */
		if (n < 3)
			return -1;
		fprintf(f, "%u %u %u ", p[0], p[1], p[2]);
		b64_text(f, p + 3, n - 3, 0);
		return 1;
	case 23: /* NSAP-PTR: a name */
		return rd_name(f, p, n, &used) == 0 && used == n ? 1 : -1;
	}
	return 0;
}

/*
 * The rdata of @p type as dig 9.18 prints it, for the types where ldns's
 * presentation differs: 1 printed, 0 not one of them, -1 the rdata does
 * not read (the caller then prints RFC 3597's form).
 */
static int rdata_dig(FILE *f, uint16_t type, const uint8_t *p, size_t n)
{
	size_t used;
	switch (type) {
	case 64: /* SVCB */
	case 65: /* HTTPS */
		return rd_svcb(f, p, n) == 0 ? 1 : -1;
	case 29: /* LOC */
		return rd_loc(f, p, n) == 0 ? 1 : -1;
	case 11: /* WKS: the protocol and ports as numbers */
		if (n < 5)
			return -1;
		addr_text(f, AF_INET, p, 4);
		fprintf(f, " %u", p[4]);
		for (size_t i = 5; i < n; i++)
			for (int b = 0; b < 8; b++)
				if (p[i] & 0x80 >> b)
					fprintf(f, " %zu", (i - 5) * 8 + (size_t)b);
		return 1;
	case 104: /* NID */
	case 106: /* L64: groups of 16 bits without leading zeros */
		if (n != 10)
			return -1;
		fprintf(f, "%u %x:%x:%x:%x", dnsnap_load_be16(p), dnsnap_load_be16(p + 2),
			dnsnap_load_be16(p + 4), dnsnap_load_be16(p + 6), dnsnap_load_be16(p + 8));
		return 1;
	case 55: { /* HIP: the HIT in upper case */
		if (n < 4 || 4 + (size_t)p[0] + dnsnap_load_be16(p + 2) > n)
			return -1;
		size_t hl = p[0], kl = dnsnap_load_be16(p + 2);
		fprintf(f, "%u ", p[1]);
		for (size_t i = 0; i < hl; i++)
			fprintf(f, "%02X", p[4 + i]);
		fputc(' ', f);
		b64_text(f, p + 4 + hl, kl, 0);
		for (size_t at = 4 + hl + kl; at < n; at += used) {
			fputc(' ', f);
			if (rd_name(f, p + at, n - at, &used) != 0)
				return -1;
		}
		return 1;
	}
	case 56:  /* NINFO */
	case 258: /* AVC */
	case 261: /* RESINFO */
	case 262: /* WALLET */
		return rd_strings(f, p, n) == 0 ? 1 : -1;
	case 57: /* RKEY, as DNSKEY */
		if (n < 4)
			return -1;
		fprintf(f, "%u %u %u ", dnsnap_load_be16(p), p[2], p[3]);
		b64_text(f, p + 4, n - 4, 1);
		return 1;
	case 32768: /* TA, as DS */
		if (n < 4)
			return -1;
		fprintf(f, "%u %u %u ", dnsnap_load_be16(p), p[2], p[3]);
		hex_words(f, p + 4, n - 4);
		return 1;
	case 260: { /* AMTRELAY */
		if (n < 2)
			return -1;
		unsigned t = p[1] & 0x7f;
		fprintf(f, "%u %u %u ", p[0], p[1] >> 7, t);
		if (t == 0 && n == 2)
			fputc('.', f);
		else if (t == 1 && n == 6)
			addr_text(f, AF_INET, p + 2, 4);
		else if (t == 2 && n == 18)
			addr_text(f, AF_INET6, p + 2, 16);
		else if (t != 3 || rd_name(f, p + 2, n - 2, &used) != 0 || 2 + used != n)
			return -1;
		return 1;
	}
	}
	return rdata_dig_old(f, type, p, n);
}

/* @p raw: the rdata as received, when the caller has it (ldns misreads
 * NSAP-PTR and SINK); else ldns's wire form of what it read */
static void print_rdata(FILE *f, const ldns_rr *rr, uint16_t type, const uint8_t *raw,
			size_t raw_len)
{
	ldns_buffer *b = ldns_buffer_new(512);
	int done = 0;
	if (b != NULL && (raw != NULL || ldns_rr_rdata2buffer_wire(b, rr) == LDNS_STATUS_OK)) {
		const uint8_t *p = raw ? raw : ldns_buffer_begin(b);
		size_t n = raw ? raw_len : ldns_buffer_position(b);
		membuf_t m;
		char *s = NULL;
		if (mb_open(&m) != NULL) {
			done = rdata_dig(m.f, type, p, n);
			s = mb_close(&m);
		}
		if (done == 1 && s != NULL)
			fputs(s, f);
		else if (done == -1)
			rdata_unknown(f, p, n);
		free(s);
	}
	ldns_buffer_free(b);
	if (done != 0)
		return;
	const ldns_rr_descriptor *d = ldns_rr_descript((uint16_t)ldns_rr_get_type(rr));
	if (ldns_rr_rd_count(rr) == 0 && (d == NULL || d->_type != type)) {
		rdata_unknown(f, NULL, 0); /* empty: "\# 0", as RFC 3597 and dig write it */
		return;
	}
	for (size_t i = 0; i < ldns_rr_rd_count(rr); i++) {
		const ldns_rdf *r = ldns_rr_rdf(rr, i);
		const uint8_t *p = ldns_rdf_data(r);
		size_t n = ldns_rdf_size(r);
		char *s = NULL;
		if (i > 0)
			fputc(' ', f);
		switch (d == NULL ? LDNS_RDF_TYPE_UNKNOWN : ldns_rdf_get_type(r)) {
		case LDNS_RDF_TYPE_DNAME:
			pres_name(f, p, n);
			break;
		case LDNS_RDF_TYPE_STR:
			pres_string(f, p + 1, n > 0 ? n - 1 : 0);
			break;
		case LDNS_RDF_TYPE_LONG_STR:
			pres_string(f, p, n);
			break;
		case LDNS_RDF_TYPE_HEX:
			hex_words(f, p, n);
			break;
		case LDNS_RDF_TYPE_UNKNOWN:
			rdata_unknown(f, p, n);
			break;
		case LDNS_RDF_TYPE_NSEC3_SALT: /* upper-case hex, "-" for none */
			if (n < 1 || p[0] == 0)
				fputc('-', f);
			else
				hex_words(f, p + 1, (size_t)p[0] < n - 1 ? p[0] : n - 1);
			break;
		case LDNS_RDF_TYPE_B64:
		case LDNS_RDF_TYPE_B32_EXT:
		case LDNS_RDF_TYPE_NSEC3_NEXT_OWNER: /* base32hex in upper case, as dig */
			s = ldns_rdf2str(r);
			words(f, s ? s : "?", s ? strlen(s) : 1,
			      ldns_rdf_get_type(r) != LDNS_RDF_TYPE_B64);
			break;
		default: /* without the space ldns leaves after a type bitmap */
			s = ldns_rdf2str(r);
			if (s != NULL)
				for (size_t e = strlen(s); e > 0 && s[e - 1] == ' '; e--)
					s[e - 1] = 0;
			fputs(s ? s : "?", f);
			break;
		}
		free(s);
	}
}

/* A record (or a question, with @p question) as dig lays it out; with
 * @p plain, one tab between the fields instead (JSON: layout is not data). */
/* A record as received, for the types ldns misreads (see wire_walk()) */
typedef struct raw_rr {
	uint16_t type;
	const uint8_t *rdata;
	size_t rdlen;
} raw_rr_t;

static void print_rr_raw(FILE *f, const ldns_rr *rr, int question, int plain,
			 const raw_rr_t *raw);

static void print_rr(FILE *f, const ldns_rr *rr, int question, int plain, const uint8_t *raw,
		     size_t raw_len)
{
	raw_rr_t r = { (uint16_t)ldns_rr_get_type(rr), raw, raw_len };
	print_rr_raw(f, rr, question, plain, raw ? &r : NULL);
}

static void print_rr_raw(FILE *f, const ldns_rr *rr, int question, int plain,
			 const raw_rr_t *rawrr)
{
	const uint8_t *raw = rawrr ? rawrr->rdata : NULL;
	size_t raw_len = rawrr ? rawrr->rdlen : 0;
	char cls[32], type[32];
	membuf_t m;
	char *owner = NULL;
	if (mb_open(&m) != NULL) {
		const ldns_rdf *o = ldns_rr_owner(rr);
		pres_name(m.f, ldns_rdf_data(o), ldns_rdf_size(o));
		owner = mb_close(&m);
	}
	size_t col = owner ? strlen(owner) : 1;
	if (question)
		fputc(';', f); /* not counted: dig indents the name alone */
	fputs(owner ? owner : "?", f);
	free(owner);
	print_class(cls, sizeof cls, (uint16_t)ldns_rr_get_class(rr));
	print_type(type, sizeof type, rawrr ? rawrr->type : (uint16_t)ldns_rr_get_type(rr));
	if (plain) {
		if (!question)
			fprintf(f, "\t%u", ldns_rr_ttl(rr));
		fprintf(f, "\t%s\t%s", cls, type);
		if (!question) {
			fputc('\t', f);
			print_rdata(f, rr, rawrr ? rawrr->type : (uint16_t)ldns_rr_get_type(rr), raw, raw_len);
		}
		fputc('\n', f);
		return;
	}
	if (!question) {
		indent(f, &col, 24);
		col += (size_t)fprintf(f, "%u", ldns_rr_ttl(rr));
	}
	indent(f, &col, 32);
	col += (size_t)fprintf(f, "%s", cls);
	indent(f, &col, 40);
	col += (size_t)fprintf(f, "%s", type);
	if (!question) {
		indent(f, &col, 48);
		print_rdata(f, rr, rawrr ? rawrr->type : (uint16_t)ldns_rr_get_type(rr), raw, raw_len);
	}
	fputc('\n', f);
}

/* A record of an entry (owner already expanded) as ldns reads it; NULL when it
 * cannot (the entry was validated: it does not happen) */
static ldns_rr *entry_rr(const dnsnap_rr_t *rr)
{
	uint8_t wire[DNSNAP_NAME_MAX + 10 + 65535];
	size_t n = rr->owner_len;
	memcpy(wire, rr->owner, n);
	const uint16_t f16[2] = { rr->type, rr->rclass };
	for (int i = 0; i < 2; i++) {
		wire[n++] = (uint8_t)(f16[i] >> 8);
		wire[n++] = (uint8_t)f16[i];
	}
	for (int sh = 24; sh >= 0; sh -= 8)
		wire[n++] = (uint8_t)(rr->ttl >> sh);
	wire[n++] = (uint8_t)(rr->rdlen >> 8);
	wire[n++] = (uint8_t)rr->rdlen;
	memcpy(wire + n, rr->rdata, rr->rdlen);
	n += rr->rdlen;
	ldns_rr *lrr = NULL;
	size_t pos = 0;
	if (ldns_wire2rr(&lrr, wire, n, &pos, LDNS_SECTION_ANSWER) != LDNS_STATUS_OK)
		return NULL;
	return lrr;
}

/* An entry's record as dig prints it (@p plain: one tab between the fields),
 * without the newline (malloc'd) */
static char *rr_text(const dnsnap_rr_t *rr, int plain)
{
	ldns_rr *lrr = entry_rr(rr);
	membuf_t m;
	char *s = NULL;
	if (lrr != NULL && mb_open(&m) != NULL) {
		print_rr(m.f, lrr, 0, plain, rr->rdata, rr->rdlen);
		s = mb_close(&m);
	}
	ldns_rr_free(lrr);
	if (s != NULL && *s && s[strlen(s) - 1] == '\n')
		s[strlen(s) - 1] = 0;
	return s;
}

/* -------------------------------------------------------------- entries */

/* The key and the entry's header, both decoded. */
static int decode_pair(const uint8_t *key, size_t key_len, const uint8_t *entry, size_t len,
		       dnsnap_key_t *k, dnsnap_hdr_t *h)
{
	int err = dnsnap_key_decode(key, key_len, k, NULL);
	return err != DNSNAP_OK ? err : dnsnap_entry_header(entry, len, h, NULL);
}

/*
 * The entry line (ENTRY FIELDS in dnsnap(1)): the key (name, class, type,
 * tag), then rcode, kind, flags (ad: validated; cd: cached for CD=1
 * queries; do: holds DNSSEC records, for DO=1 clients), the TTL left at
 * @p now, hits, inception and expiry. An entry not yet cached at @p now
 * shows its whole TTL, and says so.
 */
static void entry_text(FILE *f, const dnsnap_key_t *k, const dnsnap_hdr_t *h, uint32_t now)
{
	char type[32], cls[32], t1[21], t2[21];
	print_type(type, sizeof type, k->qtype);
	print_class(cls, sizeof cls, k->qclass);
	fputs("; ", f);
	pres_name(f, k->name, k->name_len);
	fprintf(f, " %s %s tag ", cls, type);
	for (size_t i = 0; i < k->tag_len; i++)
		fprintf(f, "%02x", k->tag[i]);
	char rcb[16];
	const char *rc = print_rcode(dnsnap_hdr_rcode(h), rcb, sizeof rcb);
	int ad = !!(h->flags & DNSNAP_EF_AUTH), cd = !!(k->flags & DNSNAP_KF_CD);
	int dnssec = !!(h->flags & DNSNAP_EF_DNSSEC), early = (int32_t)(now - h->inception) < 0;
	int none = !(ad || cd || dnssec);
	int32_t left = (int32_t)(h->expiry - now);
	uint32_t ttl = early ? h->expiry - h->inception : left > 0 ? (uint32_t)left : 0;
	time_iso(h->inception, t1);
	time_iso(h->expiry, t2);
	int st = entry_state(h->expiry, now);
	fprintf(f, "%s rcode %s kind %s flags%s%s%s%s ttl %u hits %u inception %s expiry %s%s%s\n",
		k->tag_len ? "" : "-", rc, kind_names[dnsnap_hdr_kind(h)],
		ad ? " ad" : "", cd ? " cd" : "", dnssec ? " do" : "", none ? " -" : "",
		ttl, h->hits, t1, t2, early ? " (not yet cached at --now)" : "",
		st == ENTRY_STALE ? " (stale)" : st == ENTRY_EXPIRED ? " (expired)" : "");
	dnsnap_ede_t ede;
	for (unsigned i = 0; dnsnap_entry_ede(h, i, &ede) == 1; i++) {
		fprintf(f, "; ede %u ", ede.code);
		pres_string(f, ede.text, ede.text_len);
		fputc('\n', f);
	}
}

static void entry_json(jw_t *j, const dnsnap_key_t *k, const dnsnap_hdr_t *h, uint32_t now)
{
	char name[1100], type[32], cls[32], t[21], tag[2 * DNSNAP_TAG_MAX + 1] = "";
	for (size_t i = 0; i < k->tag_len; i++)
		snprintf(tag + 2 * i, 3, "%02x", k->tag[i]);
	print_name(k->name, k->name_len, name, sizeof name);
	print_type(type, sizeof type, k->qtype);
	print_class(cls, sizeof cls, k->qclass);
	char rcb[16];
	const char *rc = print_rcode(dnsnap_hdr_rcode(h), rcb, sizeof rcb);
	int early = (int32_t)(now - h->inception) < 0;
	int32_t left = (int32_t)(h->expiry - now);
	jw_kstr(j, "name", name);
	jw_kstr(j, "class", cls);
	jw_kstr(j, "type", type);
	jw_kstr(j, "tag", tag);
	jw_kstr(j, "rcode", rc);
	jw_kstr(j, "kind", kind_names[dnsnap_hdr_kind(h)]);
	jw_kbool(j, "ad", h->flags & DNSNAP_EF_AUTH);
	jw_kbool(j, "cd", k->flags & DNSNAP_KF_CD);
	jw_kbool(j, "do", h->flags & DNSNAP_EF_DNSSEC);
	jw_ku64(j, "ttl", early ? h->expiry - h->inception : left > 0 ? (uint32_t)left : 0);
	if (early)
		jw_kbool(j, "not_yet_cached", 1);
	static const char *const states[] = { "live", "stale", "expired" };
	jw_kstr(j, "state", states[entry_state(h->expiry, now)]);
	jw_ku64(j, "hits", h->hits);
	time_iso(h->inception, t);
	jw_kstr(j, "inception", t);
	time_iso(h->expiry, t);
	jw_kstr(j, "expiry", t);
	dnsnap_ede_t ede;
	if (dnsnap_entry_ede(h, 0, &ede) == 1) {
		jw_key(j, "ede");
		jw_arr(j);
		for (unsigned i = 0; dnsnap_entry_ede(h, i, &ede) == 1; i++) {
			jw_obj(j);
			jw_ku64(j, "code", ede.code);
			membuf_t m;
			char *s = NULL;
			if (mb_open(&m) != NULL) {
				pres_escape(m.f, ede.text, ede.text_len, PRES_STRING);
				s = mb_close(&m);
			}
			jw_kstr(j, "text", s ? s : "?");
			free(s);
			jw_end(j);
		}
		jw_end(j);
	}
}

int print_dump(FILE *f, const uint8_t *key, size_t key_len, const uint8_t *entry, size_t len,
	       uint32_t now, int json)
{
	dnsnap_key_t k;
	dnsnap_hdr_t h;
	int err = decode_pair(key, key_len, entry, len, &k, &h);
	if (err != DNSNAP_OK)
		return err;
	jw_t j;
	jw_init(&j, f);
	if (json) {
		jw_obj(&j);
		entry_json(&j, &k, &h, now);
	} else {
		entry_text(f, &k, &h, now);
	}
	int32_t age = (int32_t)(now - h.inception);
	uint32_t sub = age > 0 ? (uint32_t)age : 0;
	dnsnap_iter_t it;
	dnsnap_rr_t rr;
	if ((err = dnsnap_iter_init(&it, entry, len, k.name, k.name_len)) != DNSNAP_OK)
		return err;
	static const char *const json_sec[] = { "answer", "authority", "additional" };
	int sec_at = -1;
	while ((err = dnsnap_iter_next(&it, &rr)) == 1) {
		while (sec_at < (int)rr.section) {
			sec_at++;
			if (json) {
				if (sec_at > 0)
					jw_end(&j);
				jw_key(&j, json_sec[sec_at]);
				jw_arr(&j);
			} else if (sec_at == (int)rr.section) {
				fprintf(f, ";; %s SECTION:\n", section_names[sec_at]);
			}
		}
		rr.ttl = rr.ttl > sub ? rr.ttl - sub : 0;
		char *s = rr_text(&rr, json);
		if (json)
			jw_str(&j, s ? s : "?");
		else
			fprintf(f, "%s\n", s ? s : "; (unreadable record)");
		free(s);
	}
	if (json) {
		while (sec_at < DNSNAP_SEC_ADDITIONAL) {
			if (sec_at++ >= 0)
				jw_end(&j);
			jw_key(&j, json_sec[sec_at]);
			jw_arr(&j);
		}
		jw_end(&j);
		jw_end(&j);
		jw_nl(&j);
	}
	return err < 0 ? err : DNSNAP_OK;
}

int print_entry(FILE *f, const uint8_t *key, size_t key_len, const uint8_t *entry, size_t len)
{
	dnsnap_hdr_t h;
	int err = dnsnap_entry_header(entry, len, &h, NULL);
	if (err != DNSNAP_OK)
		return err;
	return print_dump(f, key, key_len, entry, len, h.inception, 0);
}

/* --------------------------------------------------------------- layout */

static void hex(FILE *f, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%02x", i ? " " : "", p[i]);
}

/* One line of the layout: offset, bytes (wrapped at 16), what they are. */
static void field(FILE *f, size_t off, const uint8_t *p, size_t n, const char *what)
{
	fprintf(f, "  %04zx  ", off);
	size_t first = n < 16 ? n : 16;
	hex(f, p, first);
	fprintf(f, "%*s  %s\n", (int)(3 * (16 - first)), "", what);
	for (size_t i = 16; i < n; i += 16) {
		fprintf(f, "  %04zx  ", off + i);
		hex(f, p + i, n - i < 16 ? n - i : 16);
		fputc('\n', f);
	}
}

int print_layout(FILE *f, const uint8_t *key, size_t key_len, const uint8_t *entry, size_t len)
{
	dnsnap_key_t k;
	dnsnap_hdr_t h;
	int err = decode_pair(key, key_len, entry, len, &k, &h);
	if (err != DNSNAP_OK)
		return err;
	char buf[1200];
	size_t nl = k.name_len;
	fprintf(f, "key (%zu bytes)\n", key_len);
	field(f, 0, key, nl, "Name, labels reversed, lower case");
	field(f, nl, key + nl, 2, "Qtype");
	field(f, nl + 2, key + nl + 2, 2, "Qclass");
	field(f, nl + 4, key + nl + 4, 1, k.flags & DNSNAP_KF_CD ? "Flags: cd" : "Flags");
	field(f, nl + 5, key + nl + 5, 1, "Tag_Len");
	if (k.tag_len)
		field(f, nl + 6, key + nl + 6, k.tag_len, "Tag");
	fprintf(f, "entry (%zu bytes)\n", len);
	field(f, 0, entry, 4, "Inception");
	field(f, 4, entry + 4, 4, "Expiry");
	field(f, 8, entry + 8, 4, "Hits");
	char rcb[16];
	snprintf(buf, sizeof buf, "Flags: rcode %s, kind %s%s%s%s",
		 print_rcode(dnsnap_hdr_rcode(&h), rcb, sizeof rcb),
		 kind_names[dnsnap_hdr_kind(&h)], h.flags & DNSNAP_EF_AUTH ? ", ad" : "",
		 h.flags & DNSNAP_EF_DNSSEC ? ", do" : "", h.flags & DNSNAP_EF_EXT ? ", ext" : "");
	field(f, 12, entry + 12, 2, buf);
	field(f, 14, entry + 14, 2, "Auth_Off");
	field(f, 16, entry + 16, 2, "Addl_Off");
	if (h.ext) {
		field(f, 18, entry + 18, 2, "Ext_Len");
		field(f, 20, h.ext, h.ext_len, "Extensions (TLVs)");
	}
	dnsnap_iter_t it;
	dnsnap_rr_t rr;
	err = dnsnap_iter_init(&it, entry, len, k.name, k.name_len);
	if (err != DNSNAP_OK)
		return err;
	static const char *const modes[] = { "query name", "REF", "NAME", "TARGET" };
	while ((err = dnsnap_iter_next(&it, &rr)) == 1) {
		const uint8_t *r = entry + rr.offset;
		size_t total = 2 + (size_t)(r[0] | r[1] << 8);
		size_t hdrlen = (size_t)(rr.rdata - r);
		char type[32], name[1100];
		print_type(type, sizeof type, rr.type);
		if (r[2] & DNSNAP_RF_SAME)
			snprintf(buf, sizeof buf, "record %u: SAME (%s), header", rr.index, type);
		else
			snprintf(buf, sizeof buf, "record %u: %s %s, owner %s %s", rr.index,
				 section_names[rr.section], type, modes[rr.owner_mode],
				 print_name(rr.owner, rr.owner_len, name, sizeof name));
		field(f, rr.offset, r, hdrlen, buf);
		field(f, rr.offset + hdrlen, rr.rdata, total - hdrlen, "  rdata");
	}
	return err < 0 ? err : DNSNAP_OK;
}

/* ------------------------------------------------------------- messages */

/* RFC 8914's names, as dig prints them */
static const char *const ede_names[] = {
	"Other", "Unsupported DNSKEY Algorithm", "Unsupported DS Digest Type", "Stale Answer",
	"Forged Answer", "DNSSEC Indeterminate", "DNSSEC Bogus", "Signature Expired",
	"Signature Not Yet Valid", "DNSKEY Missing", "RRSIGs Missing", "No Zone Key Bit Set",
	"NSEC Missing", "Cached Error", "Not Ready", "Blocked", "Censored", "Filtered",
	"Prohibited", "Stale NXDOMAIN Answer", "Not Authoritative", "Not Supported",
	"No Reachable Authority", "Network Error", "Invalid Data",
};

/* an EDNS option as dig 9.18 prints it: EDE by its name, others in hex and text */
static void print_option(FILE *f, uint16_t code, const uint8_t *p, size_t n)
{
	if (code == 15) {
		fputs("; EDE", f);
		if (n >= 2) {
			unsigned e = (unsigned)(p[0] << 8 | p[1]);
			fprintf(f, ": %u", e);
			if (e < sizeof ede_names / sizeof *ede_names)
				fprintf(f, " (%s)", ede_names[e]);
			p += 2;
			n -= 2;
			if (n > 0)
				fputc(':', f);
		}
	} else {
		fprintf(f, "; OPT=%u:", code);
	}
	if (n > 0) {
		fputc(' ', f);
		int text = code == 15; /* EDE text is UTF-8, printed as it is */
		if (!text)
			for (size_t i = 0; i < n; i++)
				fprintf(f, "%02x ", p[i]);
		fputs(text ? "(" : "(\"", f);
		for (size_t i = 0; i < n; i++)
			fputc(p[i] >= 0x20 && p[i] < 0x7f ? p[i] : '.', f);
		fputs(text ? ")" : "\")", f);
	}
	fputc('\n', f);
}

const char *print_rcode(unsigned rc, char *buf, size_t cap)
{
	static const char *const names[] = { "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN",
					     "NOTIMP",	"REFUSED", "YXDOMAIN", "YXRRSET",
					     "NXRRSET", "NOTAUTH", "NOTZONE" };
	if (rc < sizeof names / sizeof *names)
		return names[rc];
	if (rc == 16)
		return "BADVERS";
	snprintf(buf, cap, "RESERVED%u", rc);
	return buf;
}

static const char *opcode_name(unsigned op, char *buf, size_t cap)
{
	static const char *const names[] = { "QUERY", "IQUERY", "STATUS", "RESERVED3", "NOTIFY",
					     "UPDATE" };
	if (op < sizeof names / sizeof *names)
		return names[op];
	snprintf(buf, cap, "RESERVED%u", op);
	return buf;
}

/*
 * ldns misreads two obsolete types in a message: NSAP-PTR (a name, read as
 * a string) and SINK (the message does not read). The message's records
 * as received, in ldns's order (the OPT left out, as ldns leaves it): those
 * two kept raw, the others type 0 (ldns's reading is used). In @p copy, a
 * copy of the message, each SINK is made a NULL record, which ldns reads as
 * bytes. @return the records (malloc'd, *n of them), NULL when the message
 * does not walk (ldns's reading alone then)
 */
static raw_rr_t *wire_walk(const uint8_t *w, size_t len, uint8_t *copy, size_t *n)
{
	size_t at = 12, k = 0;
	size_t total = (size_t)dnsnap_load_be16(w + 6) + dnsnap_load_be16(w + 8) +
		       dnsnap_load_be16(w + 10);
	raw_rr_t *rr = calloc(total + 1, sizeof *rr);
	if (rr == NULL)
		return NULL;
	memcpy(copy, w, len);
	for (size_t i = 0; i < (size_t)dnsnap_load_be16(w + 4) + total; i++) {
		while (at < len && w[at] != 0 && (w[at] & 0xc0) == 0) /* the owner */
			at += 1 + (size_t)w[at];
		if (at < len && (w[at] & 0xc0) == 0xc0)
			at++;
		at++;
		if (i < dnsnap_load_be16(w + 4)) { /* a question */
			at += 4;
			continue;
		}
		if (at + 10 > len || at + 10 + dnsnap_load_be16(w + at + 8) > len) {
			free(rr);
			return NULL;
		}
		uint16_t type = (uint16_t)dnsnap_load_be16(w + at);
		size_t rdlen = dnsnap_load_be16(w + at + 8);
		if (type != 41) { /* ldns takes the OPT out */
			if (type == 23 || type == 40)
				rr[k] = (raw_rr_t){ type, w + at + 10, rdlen };
			k++;
		}
		if (type == 40)
			copy[at] = 0, copy[at + 1] = 10;
		at += 10 + rdlen;
	}
	*n = k;
	return rr;
}

/* A message for the printers: ldns's packet, read from a copy in which
 * wire_walk() relabelled what ldns cannot read, and those records' rdata as
 * received (*raw, *n_raw; free it). @return 0, or -1 when ldns cannot read it */
static int read_message(const uint8_t *wire, size_t len, ldns_pkt **pkt, raw_rr_t **raw,
			size_t *n_raw)
{
	*pkt = NULL;
	*n_raw = 0;
	uint8_t *copy = len >= 12 ? malloc(len) : NULL;
	*raw = copy ? wire_walk(wire, len, copy, n_raw) : NULL;
	int ok = len >= 12 && ldns_wire2pkt(pkt, *raw ? copy : wire, len) == LDNS_STATUS_OK;
	free(copy);
	if (!ok) {
		free(*raw);
		*raw = NULL;
		return -1;
	}
	return 0;
}

int print_dns_message(FILE *f, const uint8_t *wire, size_t len, uint32_t when)
{
	return print_dns_message_note(f, wire, len, when, NULL);
}

int print_dns_message_note(FILE *f, const uint8_t *wire, size_t len, uint32_t when,
			   const char *note)
{
	ldns_pkt *pkt;
	size_t n_raw;
	raw_rr_t *raw;
	if (read_message(wire, len, &pkt, &raw, &n_raw) != 0)
		return DNSNAP_ERDATA;
	char b1[32], b2[32];
	unsigned flags = dnsnap_load_be16(wire + 2);
	unsigned ext = ldns_pkt_edns(pkt) ? ldns_pkt_edns_extended_rcode(pkt) : 0;
	fprintf(f, ";; ->>HEADER<<- opcode: %s, status: %s, id: %u\n",
		opcode_name(flags >> 11 & 15, b1, sizeof b1),
		print_rcode(ext << 4 | (flags & 15), b2, sizeof b2), dnsnap_load_be16(wire));
	static const struct { unsigned bit; const char *name; } fl[] = {
		{ DNSNAP_WIRE_QR, "qr" }, { DNSNAP_WIRE_AA, "aa" }, { DNSNAP_WIRE_TC, "tc" },
		{ DNSNAP_WIRE_RD, "rd" }, { DNSNAP_WIRE_RA, "ra" }, { DNSNAP_WIRE_AD, "ad" },
		{ DNSNAP_WIRE_CD, "cd" },
	};
	fputs(";; flags:", f);
	for (size_t i = 0; i < sizeof fl / sizeof *fl; i++)
		if (flags & fl[i].bit)
			fprintf(f, " %s", fl[i].name);
	fprintf(f, "; QUERY: %u, ANSWER: %u, AUTHORITY: %u, ADDITIONAL: %u\n", dnsnap_load_be16(wire + 4),
		dnsnap_load_be16(wire + 6), dnsnap_load_be16(wire + 8), dnsnap_load_be16(wire + 10));
	if ((flags & 0x0100) && !(flags & 0x0080))
		fputs(";; WARNING: recursion requested but not available\n", f);
	if (note != NULL)
		fprintf(f, ";; %s\n", note);
	fputc('\n', f);
	if (ldns_pkt_edns(pkt)) {
		fprintf(f, ";; OPT PSEUDOSECTION:\n; EDNS: version: %u, flags:%s; udp: %u\n",
			ldns_pkt_edns_version(pkt), ldns_pkt_edns_do(pkt) ? " do" : "",
			ldns_pkt_edns_udp_size(pkt));
		const ldns_rdf *o = ldns_pkt_edns_data(pkt);
		const uint8_t *p = o ? ldns_rdf_data(o) : NULL;
		size_t n = o ? ldns_rdf_size(o) : 0;
		while (n >= 4) {
			size_t ol = dnsnap_load_be16(p + 2);
			if (ol > n - 4)
				break;
			print_option(f, (uint16_t)dnsnap_load_be16(p), p + 4, ol);
			p += 4 + ol;
			n -= 4 + ol;
		}
	}
	const ldns_rr_list *q = ldns_pkt_question(pkt);
	if (ldns_rr_list_rr_count(q) > 0) {
		fputs(";; QUESTION SECTION:\n", f);
		for (size_t i = 0; i < ldns_rr_list_rr_count(q); i++)
			print_rr(f, ldns_rr_list_rr(q, i), 1, 0, NULL, 0);
		fputc('\n', f);
	}
	const ldns_rr_list *secs[3] = { ldns_pkt_answer(pkt), ldns_pkt_authority(pkt),
					ldns_pkt_additional(pkt) };
	size_t k = 0;
	for (int s = 0; s < 3; s++) {
		if (ldns_rr_list_rr_count(secs[s]) == 0)
			continue;
		fprintf(f, ";; %s SECTION:\n", section_names[s]);
		for (size_t i = 0; i < ldns_rr_list_rr_count(secs[s]); i++, k++)
			print_rr_raw(f, ldns_rr_list_rr(secs[s], i), 0, 0,
				     raw && k < n_raw && raw[k].type ? &raw[k] : NULL);
		fputc('\n', f);
	}
	free(raw);
	char date[64];
	time_t tt = (time_t)when;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(date, sizeof date, "%a %b %d %H:%M:%S UTC %Y", &tm);
	fprintf(f, ";; WHEN: %s\n;; MSG SIZE  rcvd: %zu\n\n", date, len);
	ldns_pkt_free(pkt);
	return DNSNAP_OK;
}

/* --------------------------------------------------- RFC 8427 (JSON) */

static void json_hex(jw_t *j, const char *k, const uint8_t *p, size_t n)
{
	char *h = malloc(2 * n + 1);
	if (h == NULL) {
		jw_key(j, k);
		jw_null(j);
		return;
	}
	for (size_t i = 0; i < n; i++)
		snprintf(h + 2 * i, 3, "%02X", p[i]);
	h[2 * n] = 0;
	jw_kstr(j, k, h);
	free(h);
}

static void json_rr(jw_t *j, const ldns_rr *rr, const raw_rr_t *raw)
{
	char name[1100], type[32], cls[32], key[48];
	const ldns_rdf *o = ldns_rr_owner(rr);
	print_name(ldns_rdf_data(o), ldns_rdf_size(o), name, sizeof name);
	uint16_t t = raw ? raw->type : (uint16_t)ldns_rr_get_type(rr);
	uint16_t c = (uint16_t)ldns_rr_get_class(rr);
	print_type(type, sizeof type, t);
	print_class(cls, sizeof cls, c);
	jw_obj(j);
	jw_kstr(j, "NAME", name);
	jw_ku64(j, "TYPE", t);
	jw_kstr(j, "TYPEname", type);
	jw_ku64(j, "CLASS", c);
	jw_kstr(j, "CLASSname", cls);
	jw_ku64(j, "TTL", ldns_rr_ttl(rr));
	ldns_buffer *b = ldns_buffer_new(512);
	if (raw != NULL) {
		jw_ku64(j, "RDLENGTH", raw->rdlen);
		json_hex(j, "RDATAHEX", raw->rdata, raw->rdlen);
	} else if (b != NULL && ldns_rr_rdata2buffer_wire(b, rr) == LDNS_STATUS_OK) {
		jw_ku64(j, "RDLENGTH", ldns_buffer_position(b));
		json_hex(j, "RDATAHEX", ldns_buffer_begin(b), ldns_buffer_position(b));
	}
	ldns_buffer_free(b);
	membuf_t m;
	char *s = NULL;
	if (mb_open(&m) != NULL) {
		print_rdata(m.f, rr, t, raw ? raw->rdata : NULL, raw ? raw->rdlen : 0);
		s = mb_close(&m);
	}
	snprintf(key, sizeof key, "rdata%s", type);
	jw_kstr(j, key, s ? s : "?");
	free(s);
	jw_end(j);
}

int print_dns_json(FILE *f, const uint8_t *wire, size_t len)
{
	ldns_pkt *pkt;
	size_t n_raw, k = 0;
	raw_rr_t *raw;
	if (read_message(wire, len, &pkt, &raw, &n_raw) != 0)
		return DNSNAP_ERDATA;
	unsigned flags = dnsnap_load_be16(wire + 2);
	jw_t j;
	jw_init(&j, f);
	jw_obj(&j);
	jw_ku64(&j, "ID", dnsnap_load_be16(wire));
	jw_kbool(&j, "QR", flags & DNSNAP_WIRE_QR);
	jw_ku64(&j, "Opcode", flags >> 11 & 15);
	jw_kbool(&j, "AA", flags & DNSNAP_WIRE_AA);
	jw_kbool(&j, "TC", flags & DNSNAP_WIRE_TC);
	jw_kbool(&j, "RD", flags & DNSNAP_WIRE_RD);
	jw_kbool(&j, "RA", flags & DNSNAP_WIRE_RA);
	jw_kbool(&j, "AD", flags & DNSNAP_WIRE_AD);
	jw_kbool(&j, "CD", flags & DNSNAP_WIRE_CD);
	jw_ku64(&j, "RCODE", flags & 15);
	jw_ku64(&j, "QDCOUNT", dnsnap_load_be16(wire + 4));
	jw_ku64(&j, "ANCOUNT", dnsnap_load_be16(wire + 6));
	jw_ku64(&j, "NSCOUNT", dnsnap_load_be16(wire + 8));
	jw_ku64(&j, "ARCOUNT", dnsnap_load_be16(wire + 10));
	const ldns_rr_list *q = ldns_pkt_question(pkt);
	if (ldns_rr_list_rr_count(q) > 0) {
		const ldns_rr *qr = ldns_rr_list_rr(q, 0);
		char name[1100], type[32], cls[32];
		const ldns_rdf *o = ldns_rr_owner(qr);
		uint16_t t = (uint16_t)ldns_rr_get_type(qr), c = (uint16_t)ldns_rr_get_class(qr);
		print_type(type, sizeof type, t);
		print_class(cls, sizeof cls, c);
		print_name(ldns_rdf_data(o), ldns_rdf_size(o), name, sizeof name);
		jw_kstr(&j, "QNAME", name);
		jw_ku64(&j, "QTYPE", t);
		jw_kstr(&j, "QTYPEname", type);
		jw_ku64(&j, "QCLASS", c);
		jw_kstr(&j, "QCLASSname", cls);
	}
	static const char *const keys[3] = { "answerRRs", "authorityRRs", "additionalRRs" };
	const ldns_rr_list *secs[3] = { ldns_pkt_answer(pkt), ldns_pkt_authority(pkt),
					ldns_pkt_additional(pkt) };
	for (int s = 0; s < 3; s++) {
		jw_key(&j, keys[s]);
		jw_arr(&j);
		for (size_t i = 0; i < ldns_rr_list_rr_count(secs[s]); i++, k++)
			json_rr(&j, ldns_rr_list_rr(secs[s], i),
				raw && k < n_raw && raw[k].type ? &raw[k] : NULL);
		if (s == 2 && ldns_pkt_edns(pkt)) {
			/* the OPT, which ldns takes out of the section, as the record it is */
			const ldns_rdf *o = ldns_pkt_edns_data(pkt);
			uint32_t ttl = (uint32_t)ldns_pkt_edns_extended_rcode(pkt) << 24 |
				       (uint32_t)ldns_pkt_edns_version(pkt) << 16 |
				       (ldns_pkt_edns_do(pkt) ? DNSNAP_EDNS_DO : 0) | ldns_pkt_edns_z(pkt);
			jw_obj(&j);
			jw_kstr(&j, "NAME", ".");
			jw_ku64(&j, "TYPE", 41);
			jw_kstr(&j, "TYPEname", "OPT");
			jw_ku64(&j, "CLASS", ldns_pkt_edns_udp_size(pkt));
			jw_ku64(&j, "TTL", ttl);
			size_t ol = o ? ldns_rdf_size(o) : 0;
			jw_ku64(&j, "RDLENGTH", ol);
			json_hex(&j, "RDATAHEX", o ? ldns_rdf_data(o) : NULL, ol);
			jw_end(&j);
		}
		jw_end(&j);
	}
	json_hex(&j, "messageOctetsHEX", wire, len);
	jw_end(&j);
	jw_nl(&j);
	free(raw);
	ldns_pkt_free(pkt);
	return DNSNAP_OK;
}

long make_query(const char *name, const char *type, const char *rclass, int dnssec,
		uint8_t *out, size_t cap, const char **why)
{
	ldns_rdf *dn = ldns_dname_new_frm_str(name);
	if (dn == NULL || ldns_rdf_size(dn) > DNSNAP_NAME_MAX) {
		ldns_rdf_deep_free(dn);
		*why = "not a valid domain name";
		return -1;
	}
	/* never ldns's number cast to 16 bits: TYPE65537 would be A */
	long lt = rr_type_arg(type), lc = rr_class_arg(rclass);
	if (lt < 0 || lc < 0) {
		ldns_rdf_deep_free(dn);
		*why = lt < 0 ? "unknown type name (a mnemonic such as AAAA, or TYPE1 to TYPE65535)"
			      : "unknown class name (a mnemonic such as IN, or CLASS1 to CLASS65535)";
		return -1;
	}
	uint16_t t = (uint16_t)lt, c = (uint16_t)lc;
	size_t nl = ldns_rdf_size(dn), n = 0;
	if (cap < 12 + nl + 4 + 11) {
		ldns_rdf_deep_free(dn);
		*why = "buffer too small";
		return -1;
	}
	static const uint8_t hdr[12] = { 0xd5, 0x5d, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0 };
	memcpy(out, hdr, 12);
	n = 12;
	memcpy(out + n, ldns_rdf_data(dn), nl);
	n += nl;
	ldns_rdf_deep_free(dn);
	out[n++] = (uint8_t)(t >> 8);
	out[n++] = (uint8_t)t;
	out[n++] = (uint8_t)(c >> 8);
	out[n++] = (uint8_t)c;
	out[11] = 1; /* ARCOUNT: the OPT */
	static const uint8_t opt[11] = { 0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0 };
	memcpy(out + n, opt, sizeof opt);
	if (dnssec)
		out[n + 7] = 0x80; /* DO */
	return (long)(n + sizeof opt);
}
