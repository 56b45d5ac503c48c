/*
 * dnscmp: compare a DNS reply from an authoritative server with the reply
 * a cache gave to the same query; the one comparison of tests/e2e/. It
 * reads what clients print (dig, kdig and drill all print the dig layout:
 * a ->>HEADER<<- line, a flags line, the EDNS line, the question and the
 * sections as zone text) or a reply in wire form (drill -w FILE), and
 * parses every record with ldns, so records compare as data, not as text.
 * (drill -w writes its reply in hex with ';' comments: read as wire too.)
 *
 *   dnscmp [--qname NAME] [--age N [--max-ttl M]] AUTH CACHE   compare; exit 0
 *                                                 equal, 1 not
 *   dnscmp --batch [--qnames FILE] [--age N [--max-ttl M]] AUTH CACHE
 *   dnscmp --print FILE                          the canonical form compared
 *   --peer: CACHE is a cache in front of AUTH, itself a cache (a resolver):
 *   every flag (QR AA TC RD RA AD CD) must be equal, none of the rules below
 *   for AA and RA. --within N: each TTL of CACHE at most its twin's and at
 *   least its twin's minus N (ask AUTH first: the cache counts down since).
 *
 * A file is read as client output unless named wire:PATH. A reply starts at
 * its ->>HEADER<<- line. Without --batch the last reply of a file counts
 * (dig prints only the TCP reply after "Truncated, retrying in TCP mode",
 * but a file may hold more); with --batch (dig -f, kdig with several
 * queries) the files hold a reply per query, compared in order: reply i of
 * AUTH with reply i of CACHE, and --qnames names the query of each, a line
 * each.
 *
 * What must be equal, and why (a cache is not the authority it learnt from):
 * - OPCODE and RCODE; QR set in both.
 * - RD and CD: both servers echo the client's (RFC 4035 3.1.6 for CD; NSD
 *   4.6 does not copy CD, so tests/e2e asks no CD=1 question of both). TC:
 *   the same answer fits the same client's size or not. AD: the authority sets none, and the
 *   cache sets it only when the response it cached had it.
 * - AA: never set by the cache (RFC 1035 4.1.1: only the authority for the
 *   name sets it); the authority's AA is not checked (0 on referrals).
 * - RA: always set by the cache, which answers as the resolver whose cache
 *   it is (an RD client seeing RA=0 takes it as "recursion refused": dig
 *   warns); the authority's RA is not checked (NSD never sets it).
 * - The question: name (case included: 0x20 clients check the echo), type,
 *   class; with --qname, both names must be NAME exactly.
 * - EDNS: present in both or neither; same version; DO echoed the same.
 *   The UDP size is each server's own, not compared.
 * - The header counts, and the records of each section as multisets, owner
 *   names and the names in rdata compared without regard to case (ldns's
 *   canonical form, RFC 4034 6.2), order ignored (RRsets rotate), TTLs
 *   aside. With TC set in both, the records are not compared: what a server
 *   puts in a truncated reply is its own choice (the client asks again over
 *   TCP, and that reply is compared).
 * - TTLs: each record of the cache at most its twin's at the authority
 *   (the cache counts down); with --age N, exactly max(0, min(auth TTL, M)
 *   - N): the cache served as N seconds after it stored the authority's
 *   answer, keeping it at most M seconds (--max-ttl, the cache's max_ttl;
 *   a cache serves no TTL beyond the time it keeps the answer).
 *   With --age N, a cache reply REFUSED (a miss) is right, and an answer
 *   wrong, when the authority's answer lives N seconds or less: the
 *   smallest TTL of its answer section, for a negative answer its SOA's
 *   TTL or MINIMUM if smaller (RFC 2308), for a referral its NS TTL.
 *
 * On a difference it prints what differs and both replies in canonical
 * form, the differing records marked - (authority only) and + (cache only).
 * Exit status: 0 equal, 1 different, 2 bad usage or an unreadable reply.
 */
#include <ctype.h>
#include <errno.h>
#include <ldns/ldns.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F_QR 0x01
#define F_AA 0x02
#define F_TC 0x04
#define F_RD 0x08
#define F_RA 0x10
#define F_AD 0x20
#define F_CD 0x40

static const char *const flag_names[] = { "qr", "aa", "tc", "rd", "ra", "ad", "cd" };
static const char *const sec_names[] = { "ANSWER", "AUTHORITY", "ADDITIONAL" };

/* One record: its canonical text without the TTL (the comparison key). */
typedef struct rec {
	char *key;
	uint32_t ttl;
} rec_t;

typedef struct msg {
	const char *file;
	int have_header;
	char opcode[32], rcode[32];
	unsigned flags;
	long counts[4];          /* QUERY ANSWER AUTHORITY ADDITIONAL, as printed */
	char qname[1100], qclass[32], qtype[32];
	int edns, edns_version, edns_do;
	rec_t *sec[3];
	size_t n[3], cap[3];
} msg_t;

static int failed;

static void differ(const char *label, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void differ(const char *label, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("dnscmp: %s: ", label);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	failed = 1;
}

static void msg_reset(msg_t *m)
{
	for (int s = 0; s < 3; s++) {
		for (size_t i = 0; i < m->n[s]; i++)
			free(m->sec[s][i].key);
		free(m->sec[s]);
	}
	const char *file = m->file;
	memset(m, 0, sizeof *m);
	m->file = file;
	for (int i = 0; i < 4; i++)
		m->counts[i] = -1;
}

/* Add @p rr (not kept) to section @p s in canonical form. */
static int add_rr(msg_t *m, int s, const ldns_rr *rr)
{
	ldns_rr *c = ldns_rr_clone(rr);
	if (c == NULL)
		return -1;
	ldns_rr2canonical(c);
	uint32_t ttl = ldns_rr_ttl(c);
	ldns_rr_set_ttl(c, 0);
	char *t = ldns_rr2str_fmt(ldns_output_format_nocomments, c);
	ldns_rr_free(c);
	if (t == NULL)
		return -1;
	/* "owner.\t0\tIN\tTYPE\trdata\n" -> "owner. IN TYPE rdata" */
	size_t len = strlen(t);
	while (len > 0 && isspace((unsigned char)t[len - 1]))
		t[--len] = 0;
	char *tab = strstr(t, "\t0\t");
	if (tab != NULL)
		memmove(tab + 1, tab + 3, strlen(tab + 3) + 1);
	int seps = 0; /* the tabs between owner, class, type and rdata; not any in the rdata */
	for (char *p = t; *p && seps < 3; p++)
		if (*p == '\t') {
			*p = ' ';
			seps++;
		}
	if (m->n[s] == m->cap[s]) {
		m->cap[s] = m->cap[s] ? 2 * m->cap[s] : 16;
		rec_t *r = realloc(m->sec[s], m->cap[s] * sizeof *r);
		if (r == NULL)
			return -1;
		m->sec[s] = r;
	}
	m->sec[s][m->n[s]++] = (rec_t){ t, ttl };
	return 0;
}

static int rec_cmp(const void *a, const void *b)
{
	const rec_t *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : x->ttl < y->ttl ? -1 : x->ttl > y->ttl;
}

/* ------------------------------------------------------------- wire form */

static int read_wire(msg_t *m, const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		fprintf(stderr, "dnscmp: %s: %s\n", path, strerror(errno));
		return -1;
	}
	static uint8_t buf[65536 * 4];
	size_t len = fread(buf, 1, sizeof buf, f);
	fclose(f);
	/* drill -w writes hex, ';' starting comments: text of hex digits */
	int text = len > 0;
	for (size_t i = 0; i < len && text; i++)
		text = isprint(buf[i]) || isspace(buf[i]);
	if (text) {
		size_t n = 0;
		int comment = 0, nib = -1;
		for (size_t i = 0; i < len; i++) {
			if (buf[i] == ';')
				comment = 1;
			else if (buf[i] == '\n')
				comment = 0;
			if (comment || !isxdigit(buf[i]))
				continue;
			int v = isdigit(buf[i]) ? buf[i] - '0' : tolower(buf[i]) - 'a' + 10;
			if (nib < 0) {
				nib = v;
			} else {
				buf[n++] = (uint8_t)(nib << 4 | v);
				nib = -1;
			}
		}
		len = n;
	}
	ldns_pkt *p = NULL;
	ldns_status st = ldns_wire2pkt(&p, buf, len);
	if (st != LDNS_STATUS_OK) {
		fprintf(stderr, "dnscmp: %s: not a DNS message (%zu bytes): %s\n", path, len,
			ldns_get_errorstr_by_id(st));
		return -1;
	}
	m->have_header = 1;
	ldns_lookup_table *op = ldns_lookup_by_id(ldns_opcodes, (int)ldns_pkt_get_opcode(p));
	ldns_lookup_table *rc = ldns_lookup_by_id(ldns_rcodes, (int)ldns_pkt_get_rcode(p));
	snprintf(m->opcode, sizeof m->opcode, "%s", op ? op->name : "?");
	snprintf(m->rcode, sizeof m->rcode, "%s", rc ? rc->name : "?");
	m->flags = (ldns_pkt_qr(p) ? F_QR : 0) | (ldns_pkt_aa(p) ? F_AA : 0) |
		   (ldns_pkt_tc(p) ? F_TC : 0) | (ldns_pkt_rd(p) ? F_RD : 0) |
		   (ldns_pkt_ra(p) ? F_RA : 0) | (ldns_pkt_ad(p) ? F_AD : 0) |
		   (ldns_pkt_cd(p) ? F_CD : 0);
	m->edns = ldns_pkt_edns(p);
	m->edns_version = ldns_pkt_edns_version(p);
	m->edns_do = ldns_pkt_edns_do(p);
	m->counts[0] = ldns_pkt_qdcount(p);
	m->counts[1] = ldns_pkt_ancount(p);
	m->counts[2] = ldns_pkt_nscount(p);
	m->counts[3] = ldns_pkt_arcount(p); /* ldns took the OPT out: count it, as dig does */
	if (m->edns)
		m->counts[3]++;
	ldns_rr_list *q = ldns_pkt_question(p);
	if (ldns_rr_list_rr_count(q) > 0) {
		ldns_rr *r = ldns_rr_list_rr(q, 0);
		char *n = ldns_rdf2str(ldns_rr_owner(r));
		char *c = ldns_rr_class2str(ldns_rr_get_class(r));
		char *t = ldns_rr_type2str(ldns_rr_get_type(r));
		snprintf(m->qname, sizeof m->qname, "%s", n ? n : "");
		snprintf(m->qclass, sizeof m->qclass, "%s", c ? c : "");
		snprintf(m->qtype, sizeof m->qtype, "%s", t ? t : "");
		free(n);
		free(c);
		free(t);
	}
	ldns_rr_list *secs[3] = { ldns_pkt_answer(p), ldns_pkt_authority(p),
				  ldns_pkt_additional(p) };
	for (int s = 0; s < 3; s++)
		for (size_t i = 0; i < ldns_rr_list_rr_count(secs[s]); i++)
			if (add_rr(m, s, ldns_rr_list_rr(secs[s], i)) != 0) {
				ldns_pkt_free(p);
				return -1;
			}
	ldns_pkt_free(p);
	return 0;
}

/* ------------------------------------------------------------ client text */

/* The number after @p what in @p line, or -1. */
static long number_after(const char *line, const char *what)
{
	const char *p = strstr(line, what);
	if (p == NULL)
		return -1;
	p += strlen(what);
	while (*p == ' ' || *p == ':')
		p++;
	return isdigit((unsigned char)*p) ? strtol(p, NULL, 10) : -1;
}

/* The word after @p what in @p line into @p out (letters, digits, -). */
static void word_after(const char *line, const char *what, char *out, size_t cap)
{
	const char *p = strstr(line, what);
	out[0] = 0;
	if (p == NULL)
		return;
	p += strlen(what);
	while (*p == ' ')
		p++;
	size_t n = 0;
	while (n + 1 < cap && (isalnum((unsigned char)p[n]) || p[n] == '-'))
		n++;
	memcpy(out, p, n);
	out[n] = 0;
}

/* Whether the flags list after "flags:" (up to ';') holds the word @p w. */
static int has_flag(const char *line, const char *w)
{
	const char *p = strcasestr(line, "flags:");
	if (p == NULL)
		return 0;
	p += 6;
	const char *end = strchr(p, ';');
	if (end == NULL)
		end = p + strlen(p);
	size_t wl = strlen(w);
	while (p < end) {
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		size_t n = 0;
		while (p + n < end && p[n] != ' ' && p[n] != '\t')
			n++;
		if (n == wl && strncmp(p, w, n) == 0)
			return 1;
		p += n;
	}
	return 0;
}

/* Read every reply in the client output @p path into @p out (an array of
 * up to @p max); @return how many, or -1 */
static int read_text(msg_t *out, int max, const char *path)
{
	msg_t *m = NULL;
	int nmsg = 0;
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		fprintf(stderr, "dnscmp: %s: %s\n", path, strerror(errno));
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	int sec = -2; /* -2 none, -1 question, 0..2 a section */
	int qdone = 0, bad = 0, lineno = 0;
	while (getline(&line, &cap, f) > 0) {
		lineno++;
		line[strcspn(line, "\r\n")] = 0;
		if (strstr(line, "->>HEADER<<-") != NULL) {
			if (nmsg == max) {
				fprintf(stderr, "dnscmp: %s: over %d replies\n", path, max);
				bad = 1;
				break;
			}
			m = &out[nmsg++];
			m->file = path;
			msg_reset(m);
			m->have_header = 1;
			word_after(line, "opcode:", m->opcode, sizeof m->opcode);
			word_after(line, strstr(line, "status:") ? "status:" : "rcode:", m->rcode,
				   sizeof m->rcode);
			sec = -2;
			qdone = 0;
			continue;
		}
		if (m == NULL)
			continue;
		if (strncasecmp(line, ";; flags:", 9) == 0) {
			for (unsigned i = 0; i < 7; i++)
				if (has_flag(line, flag_names[i]))
					m->flags |= 1u << i;
			m->counts[0] = number_after(line, "QUERY");
			m->counts[1] = number_after(line, "ANSWER");
			m->counts[2] = number_after(line, "AUTHORITY");
			m->counts[3] = number_after(line, "ADDITIONAL");
			continue;
		}
		/* dig "; EDNS: version: 0, flags: do; udp: 1232", drill ";; EDNS:
		 * version 0; flags: do ; udp: 1232", kdig ";; Version: 0; flags: do; ..." */
		if (strstr(line, "EDNS: version") != NULL || strncmp(line, ";; Version: ", 12) == 0) {
			m->edns = 1;
			m->edns_version = (int)number_after(line, strstr(line, "version") ? "version"
										 : "Version");
			m->edns_do = has_flag(line, "do");
			continue;
		}
		if (strstr(line, "QUESTION SECTION:") != NULL) {
			sec = -1;
			continue;
		}
		int s = strstr(line, "ANSWER SECTION:") ? 0 : strstr(line, "AUTHORITY SECTION:") ? 1
			: strstr(line, "ADDITIONAL SECTION:") ? 2 : -3;
		if (s >= 0) {
			sec = s;
			continue;
		}
		const char *p = line;
		if (sec == -1 && !qdone && *p == ';') {
			while (*p == ';' || *p == ' ' || *p == '\t')
				p++;
			if (*p && sscanf(p, "%1099s %31s %31s", m->qname, m->qclass, m->qtype) == 3)
				qdone = 1;
			continue;
		}
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == 0 || *p == ';' || sec < 0)
			continue;
		/* kdig ends some records with a space, which ldns takes for more rdata */
		size_t ll = strlen(line);
		while (ll > 0 && (line[ll - 1] == ' ' || line[ll - 1] == '\t'))
			line[--ll] = 0;
		ldns_rr *rr = NULL;
		ldns_status st = ldns_rr_new_frm_str(&rr, p, 0, NULL, NULL);
		if (st != LDNS_STATUS_OK) {
			fprintf(stderr, "dnscmp: %s:%d: not a record (%s): %s\n", path, lineno,
				ldns_get_errorstr_by_id(st), p);
			bad = 1;
			continue;
		}
		if (add_rr(m, sec, rr) != 0)
			bad = 1;
		ldns_rr_free(rr);
	}
	free(line);
	fclose(f);
	if (nmsg == 0) {
		fprintf(stderr, "dnscmp: %s: no reply in it (no ->>HEADER<<- line)\n", path);
		return -1;
	}
	return bad ? -1 : nmsg;
}

/* Read the replies in @p arg into @p out (max @p max), records sorted.
 * @return how many, or -1 */
static int read_msgs(msg_t *out, int max, const char *arg)
{
	memset(out, 0, (size_t)max * sizeof *out);
	int n = 1;
	if (strncmp(arg, "wire:", 5) == 0) {
		out[0].file = arg;
		msg_reset(&out[0]);
		if (read_wire(&out[0], arg + 5) != 0)
			n = -1;
	} else {
		n = read_text(out, max, arg);
	}
	for (int i = 0; i < n; i++)
		for (int s = 0; s < 3; s++)
			if (out[i].n[s] > 1)
				qsort(out[i].sec[s], out[i].n[s], sizeof out[i].sec[s][0], rec_cmp);
	return n;
}

/* ---------------------------------------------------------------- output */

static void flags_str(unsigned f, char *out)
{
	out[0] = 0;
	for (unsigned i = 0; i < 7; i++)
		if (f & (1u << i)) {
			if (out[0])
				strcat(out, " ");
			strcat(out, flag_names[i]);
		}
}

static void print_msg(const msg_t *m, const char *indent)
{
	char fl[64];
	flags_str(m->flags, fl);
	printf("%s%s: opcode %s, rcode %s, flags [%s], counts %ld/%ld/%ld/%ld\n", indent, m->file,
	       m->opcode, m->rcode, fl, m->counts[0], m->counts[1], m->counts[2], m->counts[3]);
	printf("%sQUESTION %s %s %s\n", indent, m->qname, m->qclass, m->qtype);
	if (m->edns)
		printf("%sEDNS version %d%s\n", indent, m->edns_version, m->edns_do ? " do" : "");
	for (int s = 0; s < 3; s++)
		for (size_t i = 0; i < m->n[s]; i++)
			printf("%s%s %s ; ttl %u\n", indent, sec_names[s], m->sec[s][i].key,
			       m->sec[s][i].ttl);
}

/* Both sections, merged in key order: ' ' in both, '-' only in a, '+' only in b. */
static void print_section_diff(int s, const msg_t *a, const msg_t *b)
{
	size_t i = 0, j = 0;
	while (i < a->n[s] || j < b->n[s]) {
		int c = i == a->n[s] ? 1 : j == b->n[s] ? -1 : strcmp(a->sec[s][i].key,
									b->sec[s][j].key);
		if (c == 0) {
			printf("   %s %s ; ttl %u / %u\n", sec_names[s], a->sec[s][i].key,
			       a->sec[s][i].ttl, b->sec[s][j].ttl);
			i++, j++;
		} else if (c < 0) {
			printf(" - %s %s ; ttl %u\n", sec_names[s], a->sec[s][i].key,
			       a->sec[s][i].ttl);
			i++;
		} else {
			printf(" + %s %s ; ttl %u\n", sec_names[s], b->sec[s][j].key,
			       b->sec[s][j].ttl);
			j++;
		}
	}
}

/* ------------------------------------------------------------- compare */

/* How long a resolver keeps the answer @p m (RFC 2308): the smallest TTL
 * of the answer; a negative answer as long as its SOA's TTL and MINIMUM
 * allow; a referral as long as its NS records. */
static long lifetime(const msg_t *m)
{
	long life = -1, soa_neg = -1, ns = -1;
	for (size_t i = 0; i < m->n[0]; i++)
		if (life < 0 || m->sec[0][i].ttl < life)
			life = m->sec[0][i].ttl;
	for (size_t i = 0; i < m->n[1]; i++) {
		const char *k = m->sec[1][i].key;
		const char *t = strstr(k, " IN SOA ");
		if (t != NULL) {
			const char *last = strrchr(k, ' ');
			long min = last ? strtol(last + 1, NULL, 10) : 0;
			long v = (long)m->sec[1][i].ttl < min ? (long)m->sec[1][i].ttl : min;
			if (soa_neg < 0 || v < soa_neg)
				soa_neg = v;
		} else if (strstr(k, " IN NS ") != NULL && (ns < 0 || m->sec[1][i].ttl < ns)) {
			ns = m->sec[1][i].ttl;
		}
	}
	if (strcmp(m->rcode, "NXDOMAIN") == 0)
		return life < 0 || (soa_neg >= 0 && soa_neg < life) ? soa_neg : life;
	if (life >= 0)
		return life;
	return soa_neg >= 0 ? soa_neg : ns >= 0 ? ns : 0;
}

static uint32_t max_ttl = UINT32_MAX;
static int peer;         /* --peer: both are caches, every flag compared */
static long within = -1; /* --within N: TTLs at most N s below the twin's */

static void compare(const msg_t *a, const msg_t *b, const char *qname, long age)
{
	const char *l = b->file;
	if (age >= 0 && strcmp(a->rcode, "REFUSED") != 0) {
		/* as N seconds later: what lived N seconds or less must be gone */
		long life = lifetime(a);
		int gone = strcmp(b->rcode, "REFUSED") == 0;
		if (life <= age && !gone)
			differ(l, "served %ld s after it was stored, but it lives %ld s", age, life);
		else if (life > age && gone)
			differ(l, "gone after %ld s, but it lives %ld s", age, life);
		if (gone || life <= age)
			return;
	}
	if (strcmp(a->opcode, b->opcode) != 0)
		differ(l, "opcode %s, the authority's %s", b->opcode, a->opcode);
	if (strcmp(a->rcode, b->rcode) != 0)
		differ(l, "rcode %s, the authority's %s", b->rcode, a->rcode);
	if (!(a->flags & F_QR) || !(b->flags & F_QR))
		differ(l, "QR not set");
	static const unsigned same[] = { F_RD, F_CD, F_TC, F_AD, F_AA, F_RA };
	for (unsigned i = 0; i < sizeof same / sizeof same[0] - (peer ? 0 : 2); i++)
		if ((a->flags & same[i]) != (b->flags & same[i]))
			differ(l, "%s %d, the authority's %d",
			       flag_names[__builtin_ctz(same[i])], !!(b->flags & same[i]),
			       !!(a->flags & same[i]));
	if (!peer && (b->flags & F_AA))
		differ(l, "AA set by the cache");
	if (!peer && !(b->flags & F_RA))
		differ(l, "RA not set by the cache");
	if (strcmp(a->qname, b->qname) != 0 || strcasecmp(a->qclass, b->qclass) != 0 ||
	    strcasecmp(a->qtype, b->qtype) != 0)
		differ(l, "question %s %s %s, the authority's %s %s %s", b->qname, b->qclass,
		       b->qtype, a->qname, a->qclass, a->qtype);
	if (qname != NULL)
		for (int k = 0; k < 2; k++) {
			const msg_t *m = k ? b : a;
			size_t n = strlen(m->qname), qn = strlen(qname);
			if (qn > 0 && qname[qn - 1] == '.')
				qn--;
			if (n > 0 && m->qname[n - 1] == '.')
				n--;
			if (n != qn || strncmp(m->qname, qname, n) != 0)
				differ(m->file, "question name %s is not the query's %s", m->qname,
				       qname);
		}
	if (a->edns != b->edns)
		differ(l, "EDNS %s, the authority's %s", b->edns ? "present" : "absent",
		       a->edns ? "present" : "absent");
	else if (a->edns && (a->edns_version != b->edns_version || a->edns_do != b->edns_do))
		differ(l, "EDNS version %d DO %d, the authority's version %d DO %d",
		       b->edns_version, b->edns_do, a->edns_version, a->edns_do);
	for (int i = 0; i < 4; i++)
		if (a->counts[i] != b->counts[i] && !((a->flags & b->flags & F_TC) && i > 0)) {
			differ(l, "%s count %ld, the authority's %ld", i ? sec_names[i - 1] : "QUERY",
			       b->counts[i], a->counts[i]);
		}
	if (a->flags & b->flags & F_TC)
		return; /* truncated: the records are each server's choice */
	for (int s = 0; s < 3; s++) {
		int same_keys = a->n[s] == b->n[s];
		for (size_t i = 0; same_keys && i < a->n[s]; i++)
			same_keys = strcmp(a->sec[s][i].key, b->sec[s][i].key) == 0;
		if (!same_keys) {
			differ(l, "%s section differs (- authority only, + cache only):",
			       sec_names[s]);
			print_section_diff(s, a, b);
			continue;
		}
		for (size_t i = 0; i < a->n[s]; i++) {
			uint32_t ta = a->sec[s][i].ttl, tb = b->sec[s][i].ttl;
			uint32_t tc = ta < max_ttl ? ta : max_ttl;
			uint32_t want = age < 0 ? ta : tc > (uint32_t)age ? tc - (uint32_t)age : 0;
			if (age < 0 ? tb > ta : tb != want)
				differ(l, "%s %s: TTL %u, the authority's %u%s", sec_names[s],
				       a->sec[s][i].key, tb, ta,
				       age < 0 ? " (larger)" : " (not aged by --age)");
			else if (within >= 0 && (long)tb < (long)ta - within)
				differ(l, "%s %s: TTL %u, over %ld s below the authority's %u",
				       sec_names[s], a->sec[s][i].key, tb, within, ta);
		}
	}
}

static int usage(void)
{
	fprintf(stderr, "usage: dnscmp [--peer] [--within N] [--qname NAME] [--age N [--max-ttl M]] "
			"AUTH CACHE\n"
			"       dnscmp --batch [--peer] [--within N] [--qnames FILE] [--age N "
			"[--max-ttl M]] AUTH CACHE\n"
			"       dnscmp --print FILE\n"
			"FILE: what dig, kdig or drill printed, or wire:PATH (a reply in wire form)\n");
	return 2;
}

#define MAX_MSGS 4096

int main(int argc, char **argv)
{
	const char *qname = NULL, *qnames = NULL, *files[2] = { NULL, NULL };
	long age = -1;
	int nfiles = 0, print = 0, batch = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--qname") == 0 && i + 1 < argc)
			qname = argv[++i];
		else if (strcmp(argv[i], "--qnames") == 0 && i + 1 < argc)
			qnames = argv[++i];
		else if (strcmp(argv[i], "--age") == 0 && i + 1 < argc)
			age = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--max-ttl") == 0 && i + 1 < argc)
			max_ttl = (uint32_t)strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--within") == 0 && i + 1 < argc)
			within = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--peer") == 0)
			peer = 1;
		else if (strcmp(argv[i], "--print") == 0)
			print = 1;
		else if (strcmp(argv[i], "--batch") == 0)
			batch = 1;
		else if (argv[i][0] == '-' || nfiles == 2)
			return usage();
		else
			files[nfiles++] = argv[i];
	}
	static msg_t a[MAX_MSGS], b[MAX_MSGS];
	if (print) {
		int n = nfiles == 1 ? read_msgs(a, MAX_MSGS, files[0]) : -2;
		if (n == -2)
			return usage();
		for (int i = 0; i < n; i++) {
			print_msg(&a[i], "");
			msg_reset(&a[i]);
		}
		return n < 0 ? 2 : 0;
	}
	if (nfiles != 2 || (qnames && !batch) || (qname && batch))
		return usage();
	int na = read_msgs(a, MAX_MSGS, files[0]), nb = read_msgs(b, MAX_MSGS, files[1]);
	if (na < 0 || nb < 0)
		return 2;
	char **names = NULL;
	int nnames = 0;
	if (qnames != NULL) {
		FILE *f = fopen(qnames, "r");
		if (f == NULL) {
			fprintf(stderr, "dnscmp: %s: %s\n", qnames, strerror(errno));
			return 2;
		}
		names = calloc(MAX_MSGS, sizeof *names);
		char *line = NULL;
		size_t cap = 0;
		while (names != NULL && nnames < MAX_MSGS && getline(&line, &cap, f) > 0) {
			line[strcspn(line, " \t\r\n")] = 0;
			names[nnames++] = strdup(line);
		}
		free(line);
		fclose(f);
	}
	if (!batch) { /* the last reply of each */
		a[0] = a[na - 1];
		b[0] = b[nb - 1];
		na = nb = 1;
	} else if (na != nb || (names != NULL && nnames != na)) {
		printf("dnscmp: %s has %d replies, %s %d%s%s%s\n", files[0], na, files[1], nb,
		       names ? ", " : "", names ? qnames : "", names ? " names more or fewer" : "");
		return 1;
	}
	int bad = 0;
	for (int i = 0; i < na; i++) {
		failed = 0;
		compare(&a[i], &b[i], batch ? (names ? names[i] : NULL) : qname, age);
		if (failed) {
			bad++;
			printf("dnscmp: reply %d of %d: the authority's, then the cache's:\n", i + 1, na);
			print_msg(&a[i], "  ");
			print_msg(&b[i], "  ");
		}
	}
	if (batch && bad)
		printf("dnscmp: %d of %d replies differ\n", bad, na);
	return bad ? 1 : 0;
}
