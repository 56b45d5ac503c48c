/*
 * unbound.c: Unbound's dump_cache text to DNS responses, and snapshots to
 * load_cache text. The format and its TTL rules are in unbound.h; what
 * Unbound's daemon/cachedump.c does with each field is noted where it matters.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ldns/ldns.h>

#include "unbound.h"
#include "byteorder.h"

/* Unbound's numbers (util/data/packed_rrset.h, enum sec_status and
 * enum rrset_trust), as they appear in the text. */
#define UB_FLAG_NSEC_APEX 0x1   /* ;rrset nsec_apex, and a reference's RRSET_FLAGS */
#define UB_FLAG_SOA_NEG   0x4   /* a reference's RRSET_FLAGS: a negative answer's SOA */
#define UB_SEC_BOGUS      1
#define UB_SEC_SECURE     5
#define UB_TRUST_ADD_NOAA 1
#define UB_TRUST_AUTH_NOAA 2
#define UB_TRUST_ANS_NOAA 5
#define UB_TRUST_VALIDATED 11

#define MSG_MAX 65535

static const char *const reason_names[UB_REASONS] = {
	[UB_UNKNOWN_LINE] = "line of unknown syntax or out of place",
	[UB_LONG_LINE] = "line too long",
	[UB_BAD_RRSET] = "bad ;rrset line",
	[UB_BADRR] = "RRset with a BADRR line",
	[UB_BAD_RR] = "RRset with a record ldns cannot read",
	[UB_RR_MISMATCH] = "RRset whose lines disagree on owner, type or class",
	[UB_RRSET_CUT] = "RRset cut short",
	[UB_BAD_MSG] = "bad msg line",
	[UB_BAD_REF] = "message with a bad reference",
	[UB_MISSING_RRSET] = "message whose RRset is not in the dump",
	[UB_MSG_CUT] = "message cut short",
	[UB_BOGUS] = "bogus message",
	[UB_TOO_BIG] = "message over 65535 bytes",
	[UB_NO_EOF] = "dump without its EOF line",
};

const char *unbound_reason_name(int reason)
{
	return reason >= 0 && reason < UB_REASONS ? reason_names[reason] : "?";
}

/* The same, counted: one and many */
static const char *const reason_nouns[UB_REASONS][2] = {
	[UB_UNKNOWN_LINE] = { "line of unknown syntax or out of place",
			      "lines of unknown syntax or out of place" },
	[UB_LONG_LINE] = { "line too long", "lines too long" },
	[UB_BAD_RRSET] = { "bad ;rrset line", "bad ;rrset lines" },
	[UB_BADRR] = { "RRset with a BADRR line", "RRsets with a BADRR line" },
	[UB_BAD_RR] = { "RRset with a record ldns cannot read",
			"RRsets with a record ldns cannot read" },
	[UB_RR_MISMATCH] = { "RRset whose lines disagree on owner, type or class",
			     "RRsets whose lines disagree on owner, type or class" },
	[UB_RRSET_CUT] = { "RRset cut short", "RRsets cut short" },
	[UB_BAD_MSG] = { "bad msg line", "bad msg lines" },
	[UB_BAD_REF] = { "message with a bad reference", "messages with a bad reference" },
	[UB_MISSING_RRSET] = { "message whose RRset is not in the dump",
			       "messages whose RRset is not in the dump" },
	[UB_MSG_CUT] = { "message cut short", "messages cut short" },
	[UB_BOGUS] = { "bogus message", "bogus messages" },
	[UB_TOO_BIG] = { "message over 65535 bytes", "messages over 65535 bytes" },
	[UB_NO_EOF] = { "dump without its EOF line", "dumps without their EOF line" },
};

const char *unbound_reason_text(int reason, uint64_t n)
{
	return reason >= 0 && reason < UB_REASONS ? reason_nouns[reason][n != 1] : "?";
}

int unbound_is_dump(const uint8_t *head, size_t n)
{
	static const char first[] = "START_RRSET_CACHE";
	size_t fl = sizeof first - 1;
	if (head == NULL || n < fl || memcmp(head, first, fl) != 0)
		return 0;
	return n == fl || head[fl] == '\n' || head[fl] == '\r';
}

/* ------------------------------------------------------------ shared */

static uint8_t lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? (uint8_t)(c + 32) : c;
}

/* FNV-1a over the lower-cased owner, type and class: the RRset's identity. */
static uint32_t set_hash(const uint8_t *owner, size_t len, uint16_t type, uint16_t rclass)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < len; i++)
		h = (h ^ lower(owner[i])) * 16777619u;
	const uint8_t tc[4] = { (uint8_t)(type >> 8), (uint8_t)type, (uint8_t)(rclass >> 8),
				(uint8_t)rclass };
	for (int i = 0; i < 4; i++)
		h = (h ^ tc[i]) * 16777619u;
	return h;
}

static int owner_eq(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	if (alen != blen)
		return 0;
	for (size_t i = 0; i < alen; i++)
		if (lower(a[i]) != lower(b[i]))
			return 0;
	return 1;
}

/* Grow *p (n used of *cap elements of size sz) to hold @p more. 0 or -1. */
static int grow(void *pp, size_t *cap, size_t n, size_t more, size_t sz)
{
	void **p = pp;
	if (n + more <= *cap)
		return 0;
	size_t c = *cap ? *cap : 16;
	while (c < n + more)
		c *= 2;
	void *q = realloc(*p, c * sz);
	if (q == NULL)
		return -1;
	*p = q;
	*cap = c;
	return 0;
}

/* Chained hash buckets over an array of sets (index + 1; 0 ends a chain). */
typedef struct buckets {
	uint32_t *head;
	size_t n;             /* a power of two, or 0 */
} buckets_t;

/* Make room for @p count sets; rehash through next[] / hash[] accessors. */
typedef uint32_t *(*next_of_fn)(void *sets, size_t i);
typedef uint32_t (*hash_of_fn)(const void *sets, size_t i);

static int buckets_fit(buckets_t *b, size_t count, void *sets, next_of_fn next_of,
		       hash_of_fn hash_of)
{
	if (count <= b->n)
		return 0;
	size_t n = b->n ? b->n * 2 : 1024;
	while (n < count)
		n *= 2;
	uint32_t *h = calloc(n, sizeof *h);
	if (h == NULL)
		return -1;
	for (size_t i = 0; i + 1 < count; i++) {
		uint32_t k = hash_of(sets, i) & (uint32_t)(n - 1);
		*next_of(sets, i) = h[k];
		h[k] = (uint32_t)(i + 1);
	}
	free(b->head);
	b->head = h;
	b->n = n;
	return 0;
}

/* ------------------------------------------------------------ reading */

/* One RRset of the dump: the owner, then its records in wire form after an
 * owner (TYPE CLASS TTL RDLENGTH RDATA each), records first, then RRSIGs. */
typedef struct rset {
	uint32_t next, hash;
	uint32_t ttl;
	uint16_t type, rclass;
	uint16_t n;             /* records and signatures */
	uint8_t apex, security;
	uint8_t owner_len;
	uint8_t owner[DNSNAP_NAME_MAX];
	uint8_t *rec;
	size_t rec_len;
} rset_t;

/* The line reader: lines of at most UNBOUND_LINE_MAX bytes, NUL-terminated,
 * without "\n" or "\r\n". */
typedef struct lines {
	FILE *f;
	char *buf;
	size_t cap, start, end;
	int eof;
} lines_t;

enum { LINE_EOF = 0, LINE_OK = 1, LINE_LONG = 2, LINE_ERROR = -1, LINE_NOMEM = -2 };

/* The buffer starts small and grows to UNBOUND_LINE_MAX + 2 for long lines. */
static int line_next(lines_t *lr, char **out)
{
	int skipping = 0;
	for (;;) {
		char *nl = memchr(lr->buf + lr->start, '\n', lr->end - lr->start);
		if (nl != NULL) {
			char *s = lr->buf + lr->start;
			lr->start = (size_t)(nl - lr->buf) + 1;
			if (skipping || (size_t)(nl - s) > UNBOUND_LINE_MAX)
				return LINE_LONG;
			*nl = 0;
			if (nl > s && nl[-1] == '\r')
				nl[-1] = 0;
			*out = s;
			return LINE_OK;
		}
		if (lr->end - lr->start > UNBOUND_LINE_MAX) {
			skipping = 1;
			lr->start = lr->end;
		}
		if (lr->eof) {
			if (lr->start == lr->end)
				return skipping ? LINE_LONG : LINE_EOF;
			char *s = lr->buf + lr->start;
			lr->buf[lr->end] = 0;
			lr->start = lr->end;
			if (skipping)
				return LINE_LONG;
			size_t l = strlen(s);
			if (l > 0 && s[l - 1] == '\r')
				s[l - 1] = 0;
			*out = s;
			return LINE_OK;
		}
		if (lr->start > 0) {
			memmove(lr->buf, lr->buf + lr->start, lr->end - lr->start);
			lr->end -= lr->start;
			lr->start = 0;
		}
		if (lr->end + 1 >= lr->cap) {
			/* at most UNBOUND_LINE_MAX + 1 bytes pending here, and a NUL */
			size_t cap = lr->cap * 2 < UNBOUND_LINE_MAX + 2 ? lr->cap * 2
								   : UNBOUND_LINE_MAX + 2;
			char *b = realloc(lr->buf, cap);
			if (b == NULL)
				return LINE_NOMEM;
			lr->buf = b;
			lr->cap = cap;
		}
		size_t got = fread(lr->buf + lr->end, 1, lr->cap - 1 - lr->end, lr->f);
		lr->end += got;
		if (got == 0) {
			if (ferror(lr->f))
				return LINE_ERROR;
			lr->eof = 1;
		}
	}
}

typedef struct reader {
	unbound_fn fn;
	void *arg;
	unbound_stats_t *st;
	rset_t *sets;
	size_t nsets, capsets;
	buckets_t b;
	ldns_buffer *lb;
	int oom;
	/* the RRset being read */
	int in_set;
	int set_bad;            /* reason + 1 of its first problem, or 0 */
	uint32_t set_left;      /* lines still to come */
	uint32_t set_count;     /* of which records (not RRSIG) come first */
	rset_t cur;
	size_t cur_cap;
	/* the message being read */
	int in_msg;
	int msg_bad;
	uint32_t msg_left;
	uint16_t qtype, qclass, flags, an, ns, ar;
	uint8_t security;
	uint8_t qname[DNSNAP_NAME_MAX];
	size_t qname_len;
	uint32_t *refs;
	size_t nrefs, caprefs;
	uint8_t *out;           /* MSG_MAX bytes, from the first message on */
} reader_t;

static void skip(reader_t *r, int reason)
{
	r->st->skipped[reason]++;
	r->st->last_problem = reason;
	r->st->last_problem_line = r->st->lines;
}

static uint32_t *rset_next(void *sets, size_t i)
{
	return &((rset_t *)sets)[i].next;
}

static uint32_t rset_hash(const void *sets, size_t i)
{
	return ((const rset_t *)sets)[i].hash;
}

/* An unsigned decimal of at most @p max at *s (after blanks); moves *s. */
static int num(const char **s, unsigned long long max, unsigned long long *out)
{
	const char *p = *s;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p < '0' || *p > '9')
		return -1;
	unsigned long long v = 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (max - (unsigned)(*p - '0')) / 10)
			return -1;
		v = v * 10 + (unsigned)(*p - '0');
	}
	if (*p != 0 && *p != ' ' && *p != '\t')
		return -1;
	*s = p;
	*out = v;
	return 0;
}

static int at_end(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return *s == 0;
}

/* "OWNER CLASS TYPE" (Unbound's load_qinfo: the first three words) through
 * ldns's question parser; *rest points after them. 0 or -1. */
static int question(char *line, uint8_t *name, size_t *name_len, uint16_t *type,
		    uint16_t *rclass, char **rest)
{
	char *s = line;
	for (int words = 0; words < 3; words++) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == 0)
			return -1;
		while (*s != 0 && *s != ' ' && *s != '\t')
			s++;
	}
	char saved = *s;
	*s = 0;
	ldns_rr *rr = NULL;
	ldns_status st = ldns_rr_new_question_frm_str(&rr, line, NULL, NULL);
	*s = saved;
	if (st != LDNS_STATUS_OK || rr == NULL) {
		ldns_rr_free(rr);
		return -1;
	}
	const ldns_rdf *o = ldns_rr_owner(rr);
	int ok = o != NULL && ldns_rdf_get_type(o) == LDNS_RDF_TYPE_DNAME &&
		 ldns_rdf_size(o) >= 1 && ldns_rdf_size(o) <= DNSNAP_NAME_MAX;
	if (ok) {
		*name_len = ldns_rdf_size(o);
		memcpy(name, ldns_rdf_data(o), *name_len);
		*type = (uint16_t)ldns_rr_get_type(rr);
		*rclass = (uint16_t)ldns_rr_get_class(rr);
		*rest = s;
	}
	ldns_rr_free(rr);
	return ok ? 0 : -1;
}

/* ---- RRsets */

static void set_fail(reader_t *r, int reason)
{
	if (!r->set_bad)
		r->set_bad = reason + 1;
}

/* ";rrset[ nsec_apex] TTL COUNT NSIGS TRUST SECURITY" */
static void set_begin(reader_t *r, const char *line)
{
	const char *s = line + 6;
	unsigned long long ttl, n, nsigs, trust, sec;
	int apex = 0;
	if (strncmp(s, " nsec_apex", 10) == 0) {
		apex = 1;
		s += 10;
	}
	if (num(&s, UINT32_MAX, &ttl) || num(&s, 65535, &n) || num(&s, 65535, &nsigs) ||
	    num(&s, 255, &trust) || num(&s, 255, &sec) || !at_end(s) || n + nsigs == 0 ||
	    n + nsigs > 65535) {
		skip(r, UB_BAD_RRSET);
		return;
	}
	r->in_set = 1;
	r->set_bad = 0;
	r->set_left = (uint32_t)(n + nsigs);
	r->set_count = (uint32_t)n;
	r->cur.ttl = (uint32_t)ttl;
	r->cur.apex = (uint8_t)apex;
	r->cur.security = (uint8_t)sec;
	r->cur.n = 0;
	r->cur.rec_len = 0;
	r->cur.owner_len = 0;
}

static void set_end(reader_t *r)
{
	r->in_set = 0;
	if (r->set_bad) {
		skip(r, r->set_bad - 1);
		return;
	}
	if (grow(&r->sets, &r->capsets, r->nsets, 1, sizeof *r->sets) ||
	    buckets_fit(&r->b, r->nsets + 1, r->sets, rset_next, rset_hash)) {
		r->oom = 1;
		return;
	}
	rset_t *s = &r->sets[r->nsets];
	*s = r->cur;
	s->rec = malloc(r->cur.rec_len ? r->cur.rec_len : 1);
	if (s->rec == NULL) {
		r->oom = 1;
		return;
	}
	memcpy(s->rec, r->cur.rec, r->cur.rec_len);
	s->hash = set_hash(s->owner, s->owner_len, s->type, s->rclass);
	uint32_t k = s->hash & (uint32_t)(r->b.n - 1);
	s->next = r->b.head[k];
	r->b.head[k] = (uint32_t)(++r->nsets);
	r->st->rrsets++;
}

/* One record line of the RRset being read. */
static void set_line(reader_t *r, char *line)
{
	int is_sig = r->cur.n >= r->set_count;
	r->set_left--;
	if (r->set_bad)
		goto done;
	if (strncmp(line, "BADRR", 5) == 0 && at_end(line + 5)) {
		set_fail(r, UB_BADRR);
		goto done;
	}
	ldns_rr *rr = NULL;
	if (ldns_rr_new_frm_str(&rr, line, 3600, NULL, NULL) != LDNS_STATUS_OK || rr == NULL) {
		ldns_rr_free(rr);
		set_fail(r, UB_BAD_RR);
		goto done;
	}
	const ldns_rdf *o = ldns_rr_owner(rr);
	uint16_t type = (uint16_t)ldns_rr_get_type(rr), rclass = (uint16_t)ldns_rr_get_class(rr);
	ldns_buffer_clear(r->lb);
	if (o == NULL || ldns_rdf_get_type(o) != LDNS_RDF_TYPE_DNAME || ldns_rdf_size(o) < 1 ||
	    ldns_rdf_size(o) > DNSNAP_NAME_MAX ||
	    ldns_rr_rdata2buffer_wire(r->lb, rr) != LDNS_STATUS_OK ||
	    ldns_buffer_position(r->lb) > 65535) {
		ldns_rr_free(rr);
		set_fail(r, UB_BAD_RR);
		goto done;
	}
	size_t rdlen = ldns_buffer_position(r->lb);
	if (r->cur.n == 0) {
		/* the first line names the RRset, as in Unbound's load_rr() */
		r->cur.owner_len = (uint8_t)ldns_rdf_size(o);
		memcpy(r->cur.owner, ldns_rdf_data(o), r->cur.owner_len);
		r->cur.type = is_sig ? DNSNAP_TYPE_RRSIG : type;
		r->cur.rclass = rclass;
	}
	if (!owner_eq(r->cur.owner, r->cur.owner_len, ldns_rdf_data(o), ldns_rdf_size(o)) ||
	    rclass != r->cur.rclass || (is_sig ? type != DNSNAP_TYPE_RRSIG : type != r->cur.type)) {
		ldns_rr_free(rr);
		set_fail(r, UB_RR_MISMATCH);
		goto done;
	}
	if (grow(&r->cur.rec, &r->cur_cap, r->cur.rec_len, 10 + rdlen, 1)) {
		ldns_rr_free(rr);
		r->oom = 1;
		goto done;
	}
	uint8_t *p = r->cur.rec + r->cur.rec_len;
	st16be(p, type);
	st16be(p + 2, rclass);
	st32be(p + 4, ldns_rr_ttl(rr));
	st16be(p + 8, (unsigned)rdlen);
	memcpy(p + 10, ldns_buffer_begin(r->lb), rdlen);
	r->cur.rec_len += 10 + rdlen;
	r->cur.n++;
	ldns_rr_free(rr);
done:
	if (r->set_left == 0)
		set_end(r);
}

/* ---- messages */

static void msg_fail(reader_t *r, int reason)
{
	if (!r->msg_bad)
		r->msg_bad = reason + 1;
}

/* "msg QNAME QCLASS QTYPE FLAGS QDCOUNT TTL SECURITY AN NS AR" */
static void msg_begin(reader_t *r, char *line)
{
	char *rest;
	unsigned long long flags, qd, ttl, sec, an, ns, ar;
	if (question(line + 4, r->qname, &r->qname_len, &r->qtype, &r->qclass, &rest) != 0) {
		skip(r, UB_BAD_MSG);
		return;
	}
	const char *s = rest;
	if (num(&s, 65535, &flags) || num(&s, 65535, &qd) || num(&s, INT64_MAX, &ttl) ||
	    num(&s, 255, &sec) || num(&s, 65535, &an) || num(&s, 65535, &ns) ||
	    num(&s, 65535, &ar) || !at_end(s)) {
		skip(r, UB_BAD_MSG);
		return;
	}
	r->st->messages++;
	r->in_msg = 1;
	r->msg_bad = sec == UB_SEC_BOGUS ? UB_BOGUS + 1 : 0;
	r->msg_left = (uint32_t)(an + ns + ar);
	r->flags = (uint16_t)flags;
	r->security = (uint8_t)sec;
	r->an = (uint16_t)an;
	r->ns = (uint16_t)ns;
	r->ar = (uint16_t)ar;
	r->nrefs = 0;
}

/* Of the RRsets under this owner, type and class, the one a reference means. */
static long find_set(reader_t *r, const uint8_t *owner, size_t len, uint16_t type,
		     uint16_t rclass, unsigned flags)
{
	if (r->b.n == 0)
		return -1;
	uint32_t h = set_hash(owner, len, type, rclass);
	long best = -1;
	int best_apex = 0;
	for (uint32_t i = r->b.head[h & (r->b.n - 1)]; i; i = r->sets[i - 1].next) {
		const rset_t *s = &r->sets[i - 1];
		if (s->hash != h || s->type != type || s->rclass != rclass ||
		    !owner_eq(s->owner, s->owner_len, owner, len))
			continue;
		int apex = s->apex == (flags & UB_FLAG_NSEC_APEX);
		const rset_t *b = best >= 0 ? &r->sets[best] : NULL;
		/* chains run newest first: ">=" / "<=" keep the earliest in the dump */
		if (b == NULL || apex > best_apex ||
		    (apex == best_apex && ((flags & UB_FLAG_SOA_NEG) ? s->ttl <= b->ttl
								   : s->ttl >= b->ttl))) {
			best = (long)(i - 1);
			best_apex = apex;
		}
	}
	return best;
}

/* Put the rebuilt response in r->out. @return its length, or 0 when too big. */
static size_t msg_build(reader_t *r)
{
	uint8_t *o = r->out;
	size_t n = 12;
	unsigned counts[3] = { 0, 0, 0 };
	size_t ends[3] = { r->an, (size_t)r->an + r->ns, r->nrefs };
	uint16_t flags = (uint16_t)((r->flags | DNSNAP_WIRE_QR) & ~DNSNAP_WIRE_AD);
	if (r->security == UB_SEC_SECURE)
		flags |= DNSNAP_WIRE_AD;
	if (n + r->qname_len + 4 > MSG_MAX)
		return 0;
	memcpy(o + n, r->qname, r->qname_len);
	n += r->qname_len;
	st16be(o + n, r->qtype);
	st16be(o + n + 2, r->qclass);
	n += 4;
	for (size_t i = 0, sec = 0; i < r->nrefs; i++) {
		while (sec < 2 && i >= ends[sec])
			sec++;
		const rset_t *s = &r->sets[r->refs[i]];
		size_t p = 0;
		for (unsigned k = 0; k < s->n; k++) {
			size_t rl = 10 + ld16be(s->rec + p + 8);
			if (n + s->owner_len + rl > MSG_MAX)
				return 0;
			memcpy(o + n, s->owner, s->owner_len);
			memcpy(o + n + s->owner_len, s->rec + p, rl);
			n += s->owner_len + rl;
			p += rl;
			counts[sec]++;
		}
	}
	st16be(o, 0);
	st16be(o + 2, flags);
	st16be(o + 4, 1);
	st16be(o + 6, counts[0]);
	st16be(o + 8, counts[1]);
	st16be(o + 10, counts[2]);
	return n;
}

/* @return non-zero when the callback asked to stop */
static int msg_end(reader_t *r)
{
	r->in_msg = 0;
	if (r->msg_bad) {
		skip(r, r->msg_bad - 1);
		return 0;
	}
	if (r->out == NULL && (r->out = malloc(MSG_MAX)) == NULL) {
		r->oom = 1;
		return 0;
	}
	size_t len = msg_build(r);
	if (len == 0) {
		skip(r, UB_TOO_BIG);
		return 0;
	}
	r->st->responses++;
	return r->fn(r->arg, r->out, len);
}

/* "OWNER CLASS TYPE RRSET_FLAGS" */
static int msg_ref(reader_t *r, char *line)
{
	r->msg_left--;
	if (r->msg_bad)
		goto done;
	uint8_t owner[DNSNAP_NAME_MAX];
	size_t len;
	uint16_t type, rclass;
	char *rest;
	unsigned long long flags;
	if (question(line, owner, &len, &type, &rclass, &rest) != 0 ||
	    num((const char **)&rest, UINT32_MAX, &flags) || !at_end(rest)) {
		msg_fail(r, UB_BAD_REF);
		goto done;
	}
	long i = find_set(r, owner, len, type, rclass, (unsigned)flags);
	if (i < 0) {
		msg_fail(r, UB_MISSING_RRSET);
		goto done;
	}
	if (grow(&r->refs, &r->caprefs, r->nrefs, 1, sizeof *r->refs)) {
		r->oom = 1;
		goto done;
	}
	r->refs[r->nrefs++] = (uint32_t)i;
done:
	return r->msg_left == 0 ? msg_end(r) : 0;
}

/* ---- the line dispatcher */

enum section { SEC_NONE, SEC_RRSETS, SEC_MSGS };

/* A block still open when something else begins is cut short. */
static void cut_open_block(reader_t *r)
{
	if (r->in_set) {
		r->in_set = 0;
		skip(r, UB_RRSET_CUT);
	}
	if (r->in_msg) {
		r->in_msg = 0;
		skip(r, UB_MSG_CUT);
	}
}

static int is_marker(const char *line)
{
	return strcmp(line, "START_RRSET_CACHE") == 0 || strcmp(line, "END_RRSET_CACHE") == 0 ||
	       strcmp(line, "START_MSG_CACHE") == 0 || strcmp(line, "END_MSG_CACHE") == 0 ||
	       strcmp(line, "EOF") == 0;
}

int unbound_read_stream(FILE *f, const char *name, unbound_fn fn, void *arg,
			unbound_stats_t *st, char *err, size_t errcap)
{
	memset(st, 0, sizeof *st);
	st->last_problem = -1;
	if (errcap)
		err[0] = 0;
	reader_t r = { .fn = fn, .arg = arg, .st = st };
	lines_t lr = { .f = f, .cap = 4096 };
	lr.buf = malloc(lr.cap);
	r.lb = ldns_buffer_new(1024);   /* ldns grows it as records need */
	int rc = 0, sec = SEC_NONE, seen_eof = 0;
	if (lr.buf == NULL || r.lb == NULL) {
		r.oom = 1;
		goto out;
	}
	for (;;) {
		char *line = NULL;
		int got = line_next(&lr, &line);
		if (got == LINE_EOF)
			break;
		if (got == LINE_NOMEM) {
			r.oom = 1;
			break;
		}
		if (got == LINE_ERROR) {
			snprintf(err, errcap, "%s: %s", name, strerror(errno ? errno : EIO));
			rc = -1;
			break;
		}
		st->lines++;
		if (got == LINE_LONG) {
			/* a line lost inside a block loses the block, for this reason */
			if (r.in_set) {
				set_fail(&r, UB_LONG_LINE);
				if (--r.set_left == 0)
					set_end(&r);
			} else if (r.in_msg) {
				msg_fail(&r, UB_LONG_LINE);
				r.msg_left--;
				if (r.msg_left == 0 && msg_end(&r)) {
					rc = 1;
					break;
				}
			} else {
				skip(&r, UB_LONG_LINE);
			}
			continue;
		}
		if (is_marker(line) || strncmp(line, ";rrset", 6) == 0 ||
		    strncmp(line, "msg ", 4) == 0)
			cut_open_block(&r);
		if (r.in_set) {
			set_line(&r, line);
		} else if (r.in_msg) {
			if (msg_ref(&r, line)) {
				rc = 1;
				break;
			}
		} else if (strcmp(line, "START_RRSET_CACHE") == 0) {
			sec = SEC_RRSETS;
		} else if (strcmp(line, "START_MSG_CACHE") == 0) {
			sec = SEC_MSGS;
		} else if (strcmp(line, "END_RRSET_CACHE") == 0 ||
			   strcmp(line, "END_MSG_CACHE") == 0) {
			sec = SEC_NONE;
		} else if (strcmp(line, "EOF") == 0) {
			seen_eof = 1;
			break;
		} else if (sec == SEC_RRSETS && strncmp(line, ";rrset", 6) == 0 &&
			   (line[6] == ' ' || line[6] == '\t')) {
			set_begin(&r, line);
		} else if (sec == SEC_MSGS && strncmp(line, "msg ", 4) == 0) {
			msg_begin(&r, line);
			if (r.in_msg && r.msg_left == 0 && msg_end(&r)) {
				rc = 1;
				break;
			}
		} else {
			skip(&r, UB_UNKNOWN_LINE);
		}
		if (r.oom)
			break;
	}
	if (rc == 0 && !r.oom) {
		cut_open_block(&r);
		if (!seen_eof)
			skip(&r, UB_NO_EOF);
	}
out:
	if (r.oom) {
		snprintf(err, errcap, "%s: out of memory", name);
		rc = -1;
	}
	for (size_t i = 0; i < r.nsets; i++)
		free(r.sets[i].rec);
	free(r.sets);
	free(r.b.head);
	free(r.cur.rec);
	free(r.refs);
	free(r.out);
	free(lr.buf);
	if (r.lb)
		ldns_buffer_free(r.lb);
	return rc;
}

int unbound_read(const char *path, unbound_fn fn, void *arg, unbound_stats_t *st,
		 char *err, size_t errcap)
{
	int is_stdin = strcmp(path, "-") == 0;
	FILE *f = is_stdin ? stdin : fopen(path, "r");
	if (f == NULL) {
		memset(st, 0, sizeof *st);
		st->last_problem = -1;
		snprintf(err, errcap, "%s: %s", path, strerror(errno));
		return -1;
	}
	int rc = unbound_read_stream(f, path, fn, arg, st, err, errcap);
	if (!is_stdin)
		fclose(f);
	return rc;
}

/* ------------------------------------------------------------ writing */

/* One RRset to write: the owner as first seen, then its records in canonical
 * order (records sorted by rdata, then signatures sorted by rdata), each as
 * TYPE u16, RDLENGTH u16, RDATA: equal bytes mean equal RRsets. */
typedef struct xset {
	uint32_t next, hash;
	uint32_t inception;      /* of the version kept */
	uint32_t ttl;            /* time left, lowest among versions with these records */
	uint16_t type, rclass;
	uint16_t nrec, nsig;
	uint8_t trust, secure, failed;
	uint8_t owner_len;
	uint8_t owner[DNSNAP_NAME_MAX];
	uint8_t *rec;
	size_t rec_len;
} xset_t;

typedef struct xmsg {
	size_t refs;             /* first reference in exporter_t.refs */
	uint32_t ttl;
	uint16_t qtype, qclass, flags;
	uint16_t an, ns, ar;
	uint8_t secure;
	uint8_t name_len;
	uint8_t name[DNSNAP_NAME_MAX];
} xmsg_t;

/* One record of the entry being grouped. */
typedef struct xrr {
	const uint8_t *owner;
	size_t owner_len;
	const uint8_t *rdata;
	size_t rdlen;
	uint32_t ttl;
	uint16_t type, rclass, covered;
	uint8_t section;
	int group;
} xrr_t;

/* One RRset of the entry being grouped. */
typedef struct xgroup {
	const uint8_t *owner;
	size_t owner_len;
	uint16_t type, rclass;
	uint8_t section;
	uint32_t ttl;            /* lowest time left of its records */
} xgroup_t;

typedef struct exporter {
	uint32_t now;
	unbound_export_stats_t *st;
	xset_t *sets;
	size_t nsets, capsets;
	buckets_t b;
	xmsg_t *msgs;
	size_t nmsgs, capmsgs;
	uint32_t *refs;
	size_t nrefs, caprefs;
	xrr_t *rrs;
	size_t caprrs;
	xgroup_t *groups;
	size_t capgroups;
	const xrr_t **order;
	size_t caporder;
	uint8_t *canon;
	size_t capcanon;
	int oom;
} exporter_t;

static uint32_t *xset_next(void *sets, size_t i)
{
	return &((xset_t *)sets)[i].next;
}

static uint32_t xset_hash(const void *sets, size_t i)
{
	return ((const xset_t *)sets)[i].hash;
}

static int rr_cmp(const void *a, const void *b)
{
	const xrr_t *x = *(const xrr_t *const *)a, *y = *(const xrr_t *const *)b;
	int xs = x->type == DNSNAP_TYPE_RRSIG, ys = y->type == DNSNAP_TYPE_RRSIG;
	if (xs != ys)
		return xs - ys;
	size_t n = x->rdlen < y->rdlen ? x->rdlen : y->rdlen;
	int c = memcmp(x->rdata, y->rdata, n);
	if (c != 0)
		return c;
	return x->rdlen < y->rdlen ? -1 : x->rdlen > y->rdlen;
}

/* Add the entry's group @p g (records rrs[0..n) with group == g) to the set
 * table. @return the set's index, or -1 when out of memory */
static long add_group(exporter_t *x, const xgroup_t *g, int gi, size_t n, uint32_t inception,
		      int secure)
{
	size_t k = 0, len = 0;
	uint16_t nrec = 0, nsig = 0;
	if (grow(&x->order, &x->caporder, 0, n, sizeof *x->order))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (x->rrs[i].group != gi)
			continue;
		x->order[k++] = &x->rrs[i];
		len += 4 + x->rrs[i].rdlen;
	}
	qsort(x->order, k, sizeof *x->order, rr_cmp);
	if (grow(&x->canon, &x->capcanon, 0, len + 1, 1))
		return -1;
	size_t p = 0;
	for (size_t i = 0; i < k; i++) {
		const xrr_t *rr = x->order[i];
		/* in an RRset of type RRSIG every record is a record, not a signature */
		if (rr->type == DNSNAP_TYPE_RRSIG && g->type != DNSNAP_TYPE_RRSIG)
			nsig++;
		else
			nrec++;
		st16be(x->canon + p, rr->type);
		st16be(x->canon + p + 2, (unsigned)rr->rdlen);
		memcpy(x->canon + p + 4, rr->rdata, rr->rdlen);
		p += 4 + rr->rdlen;
	}
	uint8_t trust = g->section == DNSNAP_SEC_ANSWER ? UB_TRUST_ANS_NOAA
			: g->section == DNSNAP_SEC_AUTHORITY ? UB_TRUST_AUTH_NOAA
			: UB_TRUST_ADD_NOAA;
	uint32_t h = set_hash(g->owner, g->owner_len, g->type, g->rclass);
	if (x->b.n) {
		for (uint32_t i = x->b.head[h & (x->b.n - 1)]; i; i = x->sets[i - 1].next) {
			xset_t *s = &x->sets[i - 1];
			if (s->hash != h || s->type != g->type || s->rclass != g->rclass ||
			    !owner_eq(s->owner, s->owner_len, g->owner, g->owner_len))
				continue;
			x->st->shared++;
			if (trust > s->trust)
				s->trust = trust;
			if (s->rec_len == p && memcmp(s->rec, x->canon, p) == 0) {
				if (g->ttl < s->ttl)
					s->ttl = g->ttl;
				if ((int32_t)(inception - s->inception) > 0)
					s->inception = inception;
				s->secure |= (uint8_t)secure;
				return (long)(i - 1);
			}
			x->st->conflicts++;
			if ((int32_t)(inception - s->inception) > 0) {
				uint8_t *rec = malloc(p ? p : 1);
				if (rec == NULL)
					return -1;
				memcpy(rec, x->canon, p);
				free(s->rec);
				s->rec = rec;
				s->rec_len = p;
				s->nrec = nrec;
				s->nsig = nsig;
				s->ttl = g->ttl;
				s->inception = inception;
				s->secure = (uint8_t)secure;
				s->owner_len = (uint8_t)g->owner_len;
				memcpy(s->owner, g->owner, g->owner_len);
			}
			return (long)(i - 1);
		}
	}
	if (grow(&x->sets, &x->capsets, x->nsets, 1, sizeof *x->sets) ||
	    buckets_fit(&x->b, x->nsets + 1, x->sets, xset_next, xset_hash))
		return -1;
	xset_t *s = &x->sets[x->nsets];
	memset(s, 0, sizeof *s);
	s->rec = malloc(p ? p : 1);
	if (s->rec == NULL)
		return -1;
	memcpy(s->rec, x->canon, p);
	s->rec_len = p;
	s->nrec = nrec;
	s->nsig = nsig;
	s->hash = h;
	s->inception = inception;
	s->ttl = g->ttl;
	s->type = g->type;
	s->rclass = g->rclass;
	s->trust = trust;
	s->secure = (uint8_t)secure;
	s->owner_len = (uint8_t)g->owner_len;
	memcpy(s->owner, g->owner, g->owner_len);
	uint32_t b = h & (uint32_t)(x->b.n - 1);
	s->next = x->b.head[b];
	x->b.head[b] = (uint32_t)(++x->nsets);
	return (long)(x->nsets - 1);
}

static int find_group(const xgroup_t *gs, size_t n, unsigned section, const uint8_t *owner,
		      size_t len, uint16_t type, uint16_t rclass)
{
	for (size_t i = 0; i < n; i++)
		if (gs[i].section == section && gs[i].type == type && gs[i].rclass == rclass &&
		    owner_eq(gs[i].owner, gs[i].owner_len, owner, len))
			return (int)i;
	return -1;
}

/* The entry's records into x->rrs, TTLs aged by @p age. @return how many,
 * -1 when they do not read, DNSNAP_ENOMEM */
static long export_rrs(exporter_t *x, const uint8_t *entry, size_t entry_len,
		       const dnsnap_key_t *k, uint32_t age)
{
	dnsnap_iter_t it;
	dnsnap_rr_t rr;
	size_t n = 0;
	if (dnsnap_iter_init(&it, entry, entry_len, k->name, k->name_len) != DNSNAP_OK)
		return -1;
	int got;
	while ((got = dnsnap_iter_next(&it, &rr)) == 1) {
		if (grow(&x->rrs, &x->caprrs, n, 1, sizeof *x->rrs)) {
			x->oom = 1;
			return DNSNAP_ENOMEM;
		}
		xrr_t *e = &x->rrs[n++];
		e->owner = rr.owner;
		e->owner_len = rr.owner_len;
		e->rdata = rr.rdata;
		e->rdlen = rr.rdlen;
		e->ttl = rr.ttl > age ? rr.ttl - age : 0;
		e->type = rr.type;
		e->rclass = rr.rclass;
		e->covered = rr.type == DNSNAP_TYPE_RRSIG && rr.rdlen >= 2 ? (uint16_t)ld16be(rr.rdata) : 0;
		e->section = (uint8_t)rr.section;
		e->group = -1;
	}
	return got < 0 ? -1 : (long)n;
}

/* The @p n records in groups: RRsets first, RRSIGs joined to theirs.
 * @return how many groups, or DNSNAP_ENOMEM */
static long export_groups(exporter_t *x, size_t n)
{
	size_t ng = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < n; i++) {
			xrr_t *e = &x->rrs[i];
			if ((e->type == DNSNAP_TYPE_RRSIG) != pass)
				continue;
			int g = -1;
			if (pass == 1)
				g = find_group(x->groups, ng, e->section, e->owner, e->owner_len,
					       e->covered, e->rclass);
			uint16_t gtype = e->type;
			if (g < 0 || (pass == 1 && x->groups[g].type == DNSNAP_TYPE_RRSIG))
				g = find_group(x->groups, ng, e->section, e->owner, e->owner_len,
					       gtype, e->rclass);
			if (g < 0) {
				if (grow(&x->groups, &x->capgroups, ng, 1, sizeof *x->groups)) {
					x->oom = 1;
					return DNSNAP_ENOMEM;
				}
				xgroup_t *gr = &x->groups[ng];
				gr->owner = e->owner;
				gr->owner_len = e->owner_len;
				gr->type = gtype;
				gr->rclass = e->rclass;
				gr->section = e->section;
				gr->ttl = e->ttl;
				g = (int)ng++;
			}
			if (e->ttl < x->groups[g].ttl)
				x->groups[g].ttl = e->ttl;
			e->group = g;
		}
	}
	return (long)ng;
}

/* The message of @p n records in @p ng groups, in section order as the
 * groups were made. @return 0 or DNSNAP_ENOMEM */
static int export_message(exporter_t *x, const dnsnap_key_t *k, const dnsnap_hdr_t *h,
			  uint32_t left, size_t n, size_t ng)
{
	int secure = !!(h->flags & DNSNAP_EF_AUTH);
	if (grow(&x->msgs, &x->capmsgs, x->nmsgs, 1, sizeof *x->msgs) ||
	    grow(&x->refs, &x->caprefs, x->nrefs, ng, sizeof *x->refs)) {
		x->oom = 1;
		return DNSNAP_ENOMEM;
	}
	xmsg_t *m = &x->msgs[x->nmsgs];
	memset(m, 0, sizeof *m);
	m->refs = x->nrefs;
	m->ttl = left;
	m->qtype = k->qtype;
	m->qclass = k->qclass;
	m->flags = (uint16_t)(DNSNAP_WIRE_QR | DNSNAP_WIRE_RA | dnsnap_hdr_rcode(h));
	m->secure = (uint8_t)secure;
	m->name_len = (uint8_t)k->name_len;
	memcpy(m->name, k->name, k->name_len);
	for (unsigned sec = DNSNAP_SEC_ANSWER; sec <= DNSNAP_SEC_ADDITIONAL; sec++) {
		for (size_t g = 0; g < ng; g++) {
			const xgroup_t *gr = &x->groups[g];
			if (gr->section != sec)
				continue;
			if (sec == DNSNAP_SEC_ADDITIONAL && gr->ttl == 0) {
				x->st->dropped++;
				continue;
			}
			long si = add_group(x, gr, (int)g, n, h->inception, secure);
			if (si < 0) {
				x->oom = 1;
				return DNSNAP_ENOMEM;
			}
			x->refs[x->nrefs++] = (uint32_t)si;
			if (sec == DNSNAP_SEC_ANSWER)
				m->an++;
			else if (sec == DNSNAP_SEC_AUTHORITY)
				m->ns++;
			else
				m->ar++;
		}
	}
	x->nmsgs++;
	return 0;
}

static int export_entry(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
			size_t entry_len)
{
	exporter_t *x = arg;
	x->st->entries++;
	dnsnap_key_t k;
	dnsnap_hdr_t h;
	/* the scan handed over a checked key and entry (Value_Check, validation) */
	if (dnsnap_key_decode(key, key_len, &k, NULL) != DNSNAP_OK ||
	    dnsnap_entry_header(entry, entry_len, &h, NULL) != DNSNAP_OK) {
		x->st->bad++;
		return 0;
	}
	int32_t left = (int32_t)(h.expiry - x->now);
	if (left <= 0) {
		x->st->expired++;
		return 0;
	}
	if (k.flags & DNSNAP_KF_CD) {
		x->st->cd++;
		return 0;
	}
	if (k.tag_len) {
		x->st->tagged++;
		return 0;
	}
	int32_t age32 = (int32_t)(x->now - h.inception);
	long n = export_rrs(x, entry, entry_len, &k, age32 > 0 ? (uint32_t)age32 : 0);
	if (n == -1) {
		x->st->bad++;
		return 0;
	}
	long ng = n < 0 ? n : export_groups(x, (size_t)n);
	if (ng < 0)
		return DNSNAP_ENOMEM;
	return export_message(x, &k, &h, (uint32_t)left, (size_t)n, (size_t)ng);
}

/* One record as load_cache reads it: ldns's zone-file line, no comments. */
static int write_rr(FILE *out, const xset_t *s, uint16_t type, const uint8_t *rdata,
		    size_t rdlen)
{
	ldns_rr *rr = ldns_rr_new();
	ldns_rdf *owner = ldns_dname_new_frm_data(s->owner_len, s->owner);
	uint8_t *wire = malloc(2 + rdlen);
	int rc = -1;
	if (rr == NULL || owner == NULL || wire == NULL)
		goto out;
	ldns_rr_set_owner(rr, owner);
	owner = NULL;
	ldns_rr_set_type(rr, (ldns_rr_type)type);
	ldns_rr_set_class(rr, (ldns_rr_class)s->rclass);
	ldns_rr_set_ttl(rr, s->ttl);
	st16be(wire, (unsigned)rdlen);
	memcpy(wire + 2, rdata, rdlen);
	size_t pos = 0;
	if (ldns_wire2rdf(rr, wire, 2 + rdlen, &pos) != LDNS_STATUS_OK || pos != 2 + rdlen)
		goto out;
	/* ldns's own ldns_output_format_nocomments, made here: a function
	 * call is what the tool's dlopen() stubs forward, a variable is not */
	static const ldns_output_format nocomments = { 0, NULL };
	char *text = ldns_rr2str_fmt(&nocomments, rr);
	if (text == NULL)
		goto out;
	/* a line of its own, whatever the rdata's printer did */
	size_t tl = strlen(text);
	while (tl > 0 && (text[tl - 1] == '\n' || text[tl - 1] == ' '))
		text[--tl] = 0;
	if (strchr(text, '\n') == NULL && fprintf(out, "%s\n", text) > 0)
		rc = 0;
	free(text);
out:
	ldns_rdf_deep_free(owner);
	ldns_rr_free(rr);
	free(wire);
	return rc;
}

/* An RRset's lines into a memory stream first: one that ldns cannot print is
 * left out whole (its messages with it), as Unbound's BADRR would. */
static int write_set(FILE *out, xset_t *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (m == NULL)
		return -1;
	int bad = fprintf(m, ";rrset %u %u %u %u %u\n", s->ttl, s->nrec, s->nsig,
			  s->secure ? UB_TRUST_VALIDATED : s->trust,
			  s->secure ? UB_SEC_SECURE : 0) < 0;
	for (size_t p = 0; !bad && p < s->rec_len;) {
		unsigned type = ld16be(s->rec + p), rdlen = ld16be(s->rec + p + 2);
		bad = write_rr(m, s, (uint16_t)type, s->rec + p + 4, rdlen) != 0;
		p += 4 + rdlen;
	}
	if (fclose(m) != 0 || buf == NULL) {
		free(buf);
		return -1;
	}
	if (bad)
		s->failed = 1;
	else if (fwrite(buf, 1, len, out) != len)
		bad = -1;
	free(buf);
	return bad < 0 ? -1 : 0;
}

static int write_name(FILE *out, const uint8_t *name, size_t len, uint16_t rclass,
		      uint16_t type)
{
	ldns_rdf *d = ldns_dname_new_frm_data((uint16_t)len, name);
	char *nm = d ? ldns_rdf2str(d) : NULL;
	char *cl = ldns_rr_class2str((ldns_rr_class)rclass);
	char *tp = ldns_rr_type2str((ldns_rr_type)type);
	int rc = nm && cl && tp && fprintf(out, "%s %s %s", nm, cl, tp) > 0 ? 0 : -1;
	free(nm);
	free(cl);
	free(tp);
	ldns_rdf_deep_free(d);
	return rc;
}

int unbound_export(dnsnap_snap_t *s, FILE *out, uint32_t now, unbound_export_stats_t *st,
		   dnsnap_diag_t *diag)
{
	unbound_export_stats_t local;
	if (st == NULL)
		st = &local;
	memset(st, 0, sizeof *st);
	exporter_t x = { .now = now, .st = st };
	dnsnap_scan_stats_t ss;
	dnsnap_diag_t sd;
	int err = dnsnap_snap_scan(s, NULL, 0, export_entry, &x, &ss, &sd);
	if (x.oom)
		err = DNSNAP_ENOMEM;
	if (err != DNSNAP_OK) {
		/* damaged entries: nothing written, so no partial cache loads as good */
		if (diag) {
			diag->offset = sd.offset;
			if (ss.damaged)
				snprintf(diag->msg, sizeof diag->msg, "%llu damaged entries in the "
					 "snapshot; nothing written (run dnsnap verify)",
					 (unsigned long long)ss.damaged);
			else
				snprintf(diag->msg, sizeof diag->msg, "%s", x.oom ?
					 "out of memory" : sd.msg);
		}
		goto out;
	}
	int io = fputs("START_RRSET_CACHE\n", out) < 0;
	for (size_t i = 0; !io && i < x.nsets; i++) {
		io = write_set(out, &x.sets[i]) != 0;
		if (!x.sets[i].failed)
			st->rrsets++;
	}
	io = io || fputs("END_RRSET_CACHE\nSTART_MSG_CACHE\n", out) < 0;
	for (size_t i = 0; !io && i < x.nmsgs; i++) {
		const xmsg_t *m = &x.msgs[i];
		size_t nr = (size_t)m->an + m->ns + m->ar;
		int failed = 0;
		for (size_t j = 0; j < nr; j++)
			failed |= x.sets[x.refs[m->refs + j]].failed;
		if (failed) {
			st->unprintable++;
			continue;
		}
		io = fputs("msg ", out) < 0 ||
		     write_name(out, m->name, m->name_len, m->qclass, m->qtype) != 0 ||
		     fprintf(out, " %u 1 %u %u %u %u %u\n", m->flags, m->ttl,
			     m->secure ? UB_SEC_SECURE : 0, m->an, m->ns, m->ar) < 0;
		for (size_t j = 0; !io && j < nr; j++) {
			const xset_t *xs = &x.sets[x.refs[m->refs + j]];
			io = write_name(out, xs->owner, xs->owner_len, xs->rclass, xs->type) != 0 ||
			     fputs(" 0\n", out) < 0;
		}
		if (!io)
			st->messages++;
	}
	io = io || fputs("END_MSG_CACHE\nEOF\n", out) < 0 || fflush(out) != 0 || ferror(out);
	if (io) {
		err = -EIO;
		if (diag) {
			diag->offset = 0;
			snprintf(diag->msg, sizeof diag->msg, "writing: %s",
				 strerror(errno ? errno : EIO));
		}
	}
out:
	for (size_t i = 0; i < x.nsets; i++)
		free(x.sets[i].rec);
	free(x.sets);
	free(x.b.head);
	free(x.msgs);
	free(x.refs);
	free(x.rrs);
	free(x.groups);
	free(x.order);
	free(x.canon);
	return err;
}
