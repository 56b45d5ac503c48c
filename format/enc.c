/*
 * enc.c: parse a DNS response and encode its cache key and entry.
 *
 * One pass over the message, writing records straight into the caller's
 * scratch (dnsnap_encoded_t) as they are parsed; no allocation. The extension
 * area sits before the records but its content (EDE) comes from the OPT
 * record, which is last: when there is one, the records are moved up once at
 * the end.
 */
#include "internal.h"

/* What later records may refer to: a representative spelling of an owner
 * and, for NS/CNAME/PTR/DNAME, of the target (compared ignoring case). */
typedef struct recinfo {
	const uint8_t *owner;
	const uint8_t *target;
	uint8_t owner_len;
	uint8_t target_len;
	uint8_t is_qname;
} recinfo_t;

typedef struct enc {
	const uint8_t *msg;
	size_t len;
	dnsnap_diag_t *diag;
	wr_t w;
	uint8_t qname[DNSNAP_NAME_MAX];
	size_t qname_len;
	recinfo_t info[DNSNAP_OWNER_REFS];
	unsigned n;                 /* records stored */
	const recinfo_t *prev;      /* the last record's: in info[], or last */
	recinfo_t last;
	uint16_t prev_type, prev_class;
	uint32_t prev_ttl;
	unsigned prev_section;
	/* what Expiry and Flags are computed from */
	uint32_t min_answer, min_all, min_ns, soa_neg;
	unsigned n_answer, n_ns, n_soa;
	int dnssec;
	const uint8_t *opt_rdata;   /* the OPT's rdata, for EDE options */
	size_t opt_rdlen;
	size_t opt_off;
	uint32_t opt_ttl;
} enc_t;

static inline uint32_t umin(uint32_t a, uint32_t b) { return a < b ? a : b; }

/* Expand the rdata of a schema type into the writer. Names may be compressed
 * in the message; in the entry they are written out whole, case kept. */
static int expand_rdata(enc_t *e, const char *s, size_t rd, size_t rdlen)
{
	size_t p = rd, end = rd + rdlen;
	for (; *s; s++) {
		if (*s == 'R') {
			wr_bytes(&e->w, e->msg + p, end - p);
			p = end;
			break;
		}
		if (*s == 'N') {
			uint8_t name[DNSNAP_NAME_MAX];
			size_t nlen, q = p;
			int err = dnsnap_name_unpack(e->msg, end, &q, name, &nlen, e->diag);
			if (err == DNSNAP_ETRUNC)
				return dnsnap__diag(e->diag, DNSNAP_ERDATA, rd,
						    "name runs past rdata at 0x%zx", rd);
			if (err != DNSNAP_OK)
				return err;
			wr_bytes(&e->w, name, nlen);
			p = q;
		} else if (*s == 'S') {
			if (p >= end || end - p - 1 < e->msg[p])
				return dnsnap__diag(e->diag, DNSNAP_ERDATA, rd,
						    "character-string runs past rdata at 0x%zx", rd);
			wr_bytes(&e->w, e->msg + p, 1 + (size_t)e->msg[p]);
			p += 1 + (size_t)e->msg[p];
		} else {
			size_t f = *s == 'T' ? 18 : *s == 'Z' ? 20 : (size_t)(*s - '0');
			if (end - p < f)
				return dnsnap__diag(e->diag, DNSNAP_ERDATA, rd,
						    "rdata at 0x%zx too short for its type", rd);
			wr_bytes(&e->w, e->msg + p, f);
			p += f;
		}
	}
	if (p != end)
		return dnsnap__diag(e->diag, DNSNAP_ERDATA, rd,
				    "%zu bytes left over in rdata at 0x%zx", end - p, rd);
	return DNSNAP_OK;
}

static int parse_opt(enc_t *e, size_t start, unsigned section, size_t owner_len,
		     size_t rd, size_t rdlen, uint32_t ttl)
{
	if (section != DNSNAP_SEC_ADDITIONAL)
		return dnsnap__diag(e->diag, DNSNAP_EOPT, start, "OPT outside additional at 0x%zx",
				    start);
	if (e->opt_rdata != NULL)
		return dnsnap__diag(e->diag, DNSNAP_EOPT, start, "second OPT at 0x%zx", start);
	if (owner_len != 1)
		return dnsnap__diag(e->diag, DNSNAP_EOPT, start, "OPT owner not root at 0x%zx",
				    start);
	for (size_t p = rd; p < rd + rdlen;) {
		if (rd + rdlen - p < 4)
			return dnsnap__diag(e->diag, DNSNAP_EOPT, rd, "OPT option cut at 0x%zx", p);
		uint16_t code = ld16be(e->msg + p), olen = ld16be(e->msg + p + 2);
		if (rd + rdlen - p - 4 < olen)
			return dnsnap__diag(e->diag, DNSNAP_EOPT, rd,
					    "OPT option overruns the OPT at 0x%zx", p);
		if (code == EDNS_EDE && olen < 2)
			return dnsnap__diag(e->diag, DNSNAP_EOPT, rd,
					    "EDE option shorter than 2 bytes at 0x%zx", p);
		p += 4 + (size_t)olen;
	}
	e->opt_rdata = e->msg + rd;
	e->opt_rdlen = rdlen;
	e->opt_off = start;
	e->opt_ttl = ttl;
	return DNSNAP_OK;
}

/* Choose how the owner is stored (spec: "Owner elision"); write it. */
static void write_owner(enc_t *e, uint8_t *flags, const uint8_t *own, size_t own_len,
			recinfo_t *ri)
{
	if (own == e->qname || dnsnap_name_eq(own, own_len, e->qname, e->qname_len)) {
		*flags |= DNSNAP_OWNER_QNAME;
		ri->owner = e->qname;
		ri->owner_len = (uint8_t)e->qname_len;
		ri->is_qname = 1;
		return;
	}
	unsigned lim = e->n < DNSNAP_OWNER_REFS ? e->n : DNSNAP_OWNER_REFS;
	for (unsigned k = 0; k < lim; k++) {
		const recinfo_t *o = &e->info[k];
		if (o->target && dnsnap_name_eq(own, own_len, o->target, o->target_len)) {
			*flags |= DNSNAP_OWNER_TARGET;
			wr_u8(&e->w, (uint8_t)k);
			ri->owner = o->target;
			ri->owner_len = o->target_len;
			return;
		}
	}
	for (unsigned k = 0; k < lim; k++) {
		const recinfo_t *o = &e->info[k];
		if (!o->is_qname && dnsnap_name_eq(own, own_len, o->owner, o->owner_len)) {
			*flags |= DNSNAP_OWNER_REF;
			wr_u8(&e->w, (uint8_t)k);
			ri->owner = o->owner;
			ri->owner_len = o->owner_len;
			return;
		}
	}
	*flags |= DNSNAP_OWNER_NAME;
	ri->owner = e->w.p + e->w.pos;
	ri->owner_len = (uint8_t)own_len;
	wr_bytes(&e->w, own, own_len);
}

/*
 * A record's head in the buffer: Rec_Len (patched by the caller), Rec_Flags,
 * and unless it is SAME as the record before, Type, [Class,] TTL and its
 * owner; what later records may refer to in @p ri. On overflow the writer's
 * sticky error is the caller's to report.
 */
static inline __attribute__((always_inline)) void
record_head(enc_t *e, unsigned section, const uint8_t *own, size_t own_len,
			uint16_t type, uint16_t rclass, uint32_t ttl, uint8_t *flags,
			recinfo_t *ri)
{
	if (e->n > 0 && e->prev_section == section && e->prev_type == type &&
	    e->prev_class == rclass && e->prev_ttl == ttl &&
	    ((own == e->qname && e->prev->is_qname) ||
	     dnsnap_name_eq(own, own_len, e->prev->owner, e->prev->owner_len))) {
		*flags = DNSNAP_RF_SAME;
		*ri = *e->prev;
		ri->target = NULL;
		wr_take(&e->w, 3);
		return;
	}
	uint8_t *d = wr_take(&e->w, rclass != CLASS_IN ? 11 : 9);
	if (d != NULL) {
		st16le(d + 3, type);
		if (rclass != CLASS_IN) {
			*flags |= DNSNAP_RF_CLASS;
			st16le(d + 5, rclass);
			st32le(d + 7, ttl);
		} else {
			st32le(d + 5, ttl);
		}
	}
	write_owner(e, flags, own, own_len, ri);
}

/* A record written: what the next may refer to, and the TTL minima and
 * counts of its section that the entry's expiry is computed from (the SOA's
 * MINIMUM is the last 4 bytes of its rdata, which end at @p rdata_end). */
static inline __attribute__((always_inline)) void
record_note(enc_t *e, unsigned section, uint16_t type, uint16_t rclass,
			uint32_t ttl, const recinfo_t *ri, const uint8_t *rdata_end)
{
	recinfo_t *slot = e->n < DNSNAP_OWNER_REFS ? &e->info[e->n] : &e->last;
	*slot = *ri;
	e->prev = slot;
	e->prev_type = type;
	e->prev_class = rclass;
	e->prev_ttl = ttl;
	e->prev_section = section;
	e->n++;

	e->min_all = umin(e->min_all, ttl);
	if (dnsnap_type_is_dnssec(type))
		e->dnssec = 1;
	if (section == DNSNAP_SEC_ANSWER) {
		e->n_answer++;
		e->min_answer = umin(e->min_answer, ttl);
	} else if (section == DNSNAP_SEC_AUTHORITY && type == TYPE_SOA) {
		/* RFC 2308 section 5: min(SOA TTL, SOA MINIMUM) */
		uint32_t minimum = ld32be(rdata_end - 4);
		if (minimum > DNSNAP_TTL_MAX)
			minimum = 0;
		e->soa_neg = umin(e->soa_neg, umin(ttl, minimum));
		e->n_soa++;
	} else if (section == DNSNAP_SEC_AUTHORITY && type == TYPE_NS) {
		e->min_ns = umin(e->min_ns, ttl);
		e->n_ns++;
	}
}

static int parse_record(enc_t *e, rd_t *r, unsigned section)
{
	size_t start = r->pos;
	if (start == e->len)
		return dnsnap__diag(e->diag, DNSNAP_ECOUNT, start,
				    "message ends at 0x%zx before its counted records", start);
	uint8_t ownbuf[DNSNAP_NAME_MAX];
	const uint8_t *own = ownbuf;
	size_t own_len;
	int err;
	if (e->len - start >= 2 && e->msg[start] == 0xc0 && e->msg[start + 1] == 12) {
		/* the usual owner, a pointer to the question name: no copy */
		own = e->qname;
		own_len = e->qname_len;
		r->pos += 2;
	} else if ((err = dnsnap_name_unpack(e->msg, e->len, &r->pos, ownbuf, &own_len,
					     e->diag)) != DNSNAP_OK) {
		return err;
	}
	uint16_t type, rclass, rdlen;
	uint32_t ttl;
	size_t rdlen_off = r->pos + 8;
	if (r->len - r->pos >= 10) { /* the fixed fields in one check */
		const uint8_t *f = r->p + r->pos;
		type = ld16be(f);
		rclass = ld16be(f + 2);
		ttl = ld32be(f + 4);
		rdlen = ld16be(f + 8);
		r->pos += 10;
	} else { /* cut: the field reads say where */
		type = rd_u16be(r);
		rclass = rd_u16be(r);
		ttl = rd_u32be(r);
		rdlen = rd_u16be(r);
		return dnsnap__diag(e->diag, r->err, r->err_off, "record cut at 0x%zx", r->err_off);
	}
	size_t rd = r->pos;
	if (e->len - rd < rdlen)
		return dnsnap__diag(e->diag, DNSNAP_ERDLEN, rdlen_off,
				    "rdlength %u at 0x%zx overruns the message", rdlen, rdlen_off);
	r->pos += rdlen;

	if (type == TYPE_OPT)
		return parse_opt(e, start, section, own_len, rd, rdlen, ttl);
	if (type == TYPE_TSIG)
		return DNSNAP_OK; /* hop-by-hop: never cached */
	if ((type == TYPE_A && rdlen != 4) || (type == TYPE_AAAA && rdlen != 16))
		return dnsnap__diag(e->diag, DNSNAP_ERDATA, rd, "type %u with rdlength %u at 0x%zx",
				    type, rdlen, rd);
	if (ttl > DNSNAP_TTL_MAX)
		ttl = 0; /* RFC 2181 section 8 */

	/* Rec_Len (patched below), Rec_Flags, and without SAME Type, [Class,] TTL:
	 * taken at once; on overflow the writer's sticky error is reported below */
	size_t rec = e->w.pos;
	size_t flags_at = rec + 2;
	uint8_t flags = 0;
	recinfo_t ri = { 0 };
	record_head(e, section, own, own_len, type, rclass, ttl, &flags, &ri);
	size_t rdata_at = e->w.pos;
	/* A, AAAA and TXT, most records, hold no names: no schema to look up */
	const char *schema = type == TYPE_A || type == TYPE_AAAA || type == TYPE_TXT
			     ? NULL : dnsnap__schema(type);
	if (schema != NULL) {
		err = expand_rdata(e, schema, rd, rdlen);
		if (err != DNSNAP_OK)
			return err;
	} else if (rdlen == 4 || rdlen == 16) {
		uint8_t *d = wr_take(&e->w, rdlen);
		if (d != NULL && rdlen == 4)
			memcpy(d, e->msg + rd, 4);
		else if (d != NULL)
			memcpy(d, e->msg + rd, 16);
	} else {
		wr_bytes(&e->w, e->msg + rd, rdlen);
	}
	if (e->w.err != DNSNAP_OK)
		return dnsnap__diag(e->diag, DNSNAP_ETOOBIG, start,
				    "records over %d bytes at record 0x%zx", DNSNAP_RECORDS_MAX, start);
	e->w.p[flags_at] = flags;
	st16le(e->w.p + rec, (uint16_t)(e->w.pos - rec - 2));

	if (type_is_target(type) && dnsnap_name_len(e->w.p + rdata_at, e->w.pos - rdata_at) ==
				    (int)(e->w.pos - rdata_at)) {
		ri.target = e->w.p + rdata_at;
		ri.target_len = (uint8_t)(e->w.pos - rdata_at);
	}
	record_note(e, section, type, rclass, ttl, &ri, e->w.p + e->w.pos);
	return DNSNAP_OK;
}

/* Write the EDE options of the OPT as extension TLVs at dst; returns bytes. */
static size_t write_ede(const enc_t *e, uint8_t *dst)
{
	size_t n = 0;
	for (size_t p = 0; p < e->opt_rdlen;) {
		uint16_t code = ld16be(e->opt_rdata + p), olen = ld16be(e->opt_rdata + p + 2);
		if (code == EDNS_EDE) {
			if (dst) {
				dst[n] = DNSNAP_EXT_EDE;
				st16le(dst + n + 1, olen);
				memcpy(dst + n + 3, e->opt_rdata + p + 4, olen);
			}
			n += 3 + (size_t)olen;
		}
		p += 4 + (size_t)olen;
	}
	return n;
}

/* The header: a response to a QUERY, whole, one question; its flags and the
 * three sections' counts. */
static inline __attribute__((always_inline)) int
enc_header(rd_t *r, dnsnap_diag_t *diag, uint16_t *flags, uint16_t counts[3])
{
	if (r->len < DNSNAP_WIRE_HDR_LEN) /* the header is one field */
		return dnsnap__diag(diag, DNSNAP_ETRUNC, 0, "%zu bytes, shorter than a header",
				    r->len);
	rd_u16be(r); /* ID */
	uint16_t hflags = *flags = rd_u16be(r);
	uint16_t qd = rd_u16be(r);
	counts[0] = rd_u16be(r);
	counts[1] = rd_u16be(r);
	counts[2] = rd_u16be(r);
	if (r->err != DNSNAP_OK)
		return dnsnap__diag(diag, r->err, r->err_off, "header cut at 0x%zx", r->err_off);
	if (!(hflags & DNSNAP_WIRE_QR))
		return dnsnap__diag(diag, DNSNAP_ENOTCACHE, 2, "QR=0: a query, not a response");
	if (hflags & DNSNAP_WIRE_OPCODE)
		return dnsnap__diag(diag, DNSNAP_ENOTCACHE, 2, "opcode %u is not QUERY",
				    (hflags & DNSNAP_WIRE_OPCODE) >> 11);
	if (hflags & DNSNAP_WIRE_TC)
		return dnsnap__diag(diag, DNSNAP_ENOTCACHE, 2, "TC=1: truncated response");
	if (qd != 1)
		return dnsnap__diag(diag, DNSNAP_ENOTCACHE, 4, "QDCOUNT %u, not 1", qd);
	return DNSNAP_OK;
}

/* The question into e->qname, and the cache key from it into @p out
 * (dnsnap_key_encode()'s, without its checks of a name that was just
 * checked; the tag was checked on entry); where it starts in *qoff_out. */
static inline __attribute__((always_inline)) int
enc_question(enc_t *e, rd_t *r, uint16_t hflags, const uint8_t *tag, size_t tag_len,
			dnsnap_encoded_t *out, size_t *qoff_out)
{
	dnsnap_diag_t *diag = e->diag;
	size_t qoff = *qoff_out = r->pos;
	uint8_t starts[127];
	size_t nl = 0;
	int err;
	if ((e->qname_len = dnsnap__name_labels(e->msg + qoff, e->len - qoff, starts, &nl)) != 0) {
		/* plain labels, the usual question: one copy */
		memcpy(e->qname, e->msg + qoff, e->qname_len);
		r->pos += e->qname_len;
	} else if ((err = dnsnap_name_unpack(e->msg, e->len, &r->pos, e->qname, &e->qname_len,
					     diag)) != DNSNAP_OK) {
		return err;
	} else {
		nl = 0;
		for (size_t i = 0; e->qname[i] != 0; i += 1 + (size_t)e->qname[i])
			starts[nl++] = (uint8_t)i;
	}
	uint16_t qtype = rd_u16be(r), qclass = rd_u16be(r);
	if (r->err != DNSNAP_OK)
		return dnsnap__diag(diag, r->err, r->err_off, "question cut at 0x%zx", r->err_off);
	if (e->qname_len + 6 + tag_len > DNSNAP_KEY_MAX)
		return dnsnap__diag(diag, DNSNAP_ETOOBIG, qoff, "cache key: %s",
				    dnsnap_strerror(DNSNAP_ETOOBIG));
	out->key_len = dnsnap__key_put(e->qname, e->qname_len, starts, nl, qtype, qclass,
				       (hflags & DNSNAP_WIRE_CD) ? DNSNAP_KF_CD : 0, tag, tag_len,
				       out->key);
	return DNSNAP_OK;
}

/* The entry's TTL and kind from the records' (spec/FORMAT.md, "Expiry";
 * RFC 2308). */
static uint32_t entry_ttl(const enc_t *e, unsigned rcode, unsigned *kind_out)
{
	unsigned kind = DNSNAP_KIND_ANSWER;
	uint32_t ttl;
	if (rcode == RCODE_NXDOMAIN) {
		kind = DNSNAP_KIND_NXDOMAIN;
		ttl = umin(e->min_answer, e->soa_neg);
	} else if (rcode == 0 && e->n_answer > 0) {
		ttl = e->min_answer;
	} else if (rcode == 0 && e->n_soa > 0) {
		kind = DNSNAP_KIND_NODATA;
		ttl = e->soa_neg;
	} else if (rcode == 0 && e->n_ns > 0) {
		kind = DNSNAP_KIND_REFERRAL;
		ttl = e->min_ns;
	} else if (rcode == 0) {
		kind = DNSNAP_KIND_NODATA;
		ttl = 0;
	} else {
		ttl = e->min_all;
	}
	if (ttl == UINT32_MAX)
		ttl = 0;
	*kind_out = kind;
	return ttl;
}

int dnsnap_msg_encode(const uint8_t *msg, size_t len, uint32_t now, const uint8_t *tag,
		      size_t tag_len, dnsnap_encoded_t *out, dnsnap_diag_t *diag)
{
	if (msg == NULL || out == NULL || tag_len > DNSNAP_TAG_MAX || (tag_len && tag == NULL))
		return dnsnap__diag(diag, DNSNAP_EINVAL, 0, "invalid argument");
	enc_t e;
	e.msg = msg;
	e.len = len;
	e.diag = diag;
	e.n = 0;
	e.min_answer = e.min_all = e.min_ns = e.soa_neg = UINT32_MAX;
	e.n_answer = e.n_ns = e.n_soa = 0;
	e.dnssec = 0;
	e.opt_rdata = NULL;
	e.opt_rdlen = e.opt_off = 0;
	e.opt_ttl = 0;
	e.prev_section = 0;
	e.w.p = out->entry + DNSNAP_ENTRY_HDR;
	e.w.pos = 0;
	e.w.cap = DNSNAP_RECORDS_MAX;
	e.w.err = DNSNAP_OK;

	rd_t r = rd_init(msg, len);
	uint16_t hflags = 0, counts[3] = { 0, 0, 0 };
	size_t qoff;
	int err = enc_header(&r, diag, &hflags, counts);
	if (err == DNSNAP_OK)
		err = enc_question(&e, &r, hflags, tag, tag_len, out, &qoff);
	if (err != DNSNAP_OK)
		return err;

	uint16_t sec_off[3] = { 0, 0, 0 };
	for (unsigned s = 0; s < 3; s++) {
		sec_off[s] = (uint16_t)e.w.pos;
		for (unsigned i = 0; i < counts[s]; i++) {
			err = parse_record(&e, &r, s);
			if (err != DNSNAP_OK)
				return err;
		}
	}

	unsigned rcode = hflags & DNSNAP_WIRE_RCODE;
	if (e.opt_rdata != NULL && (e.opt_ttl >> 24) != 0)
		return dnsnap__diag(diag, DNSNAP_ENOTCACHE, e.opt_off,
				    "extended RCODE %u in the OPT at 0x%zx",
				    (e.opt_ttl >> 24) << 4 | rcode, e.opt_off);

	unsigned kind;
	uint32_t ttl = entry_ttl(&e, rcode, &kind);
	uint16_t eflags = (uint16_t)(rcode | kind << DNSNAP_EF_KIND_SHIFT);
	if (hflags & DNSNAP_WIRE_AD)
		eflags |= DNSNAP_EF_AUTH;
	if (e.dnssec)
		eflags |= DNSNAP_EF_DNSSEC;

	size_t rec_len = e.w.pos;
	size_t hdr = DNSNAP_ENTRY_HDR;
	size_t ext_len = e.opt_rdata ? write_ede(&e, NULL) : 0;
	if (ext_len > 0) {
		/* ext_len <= OPT rdlength <= 65535: the TLV header is shorter than
		 * the option header it replaces. */
		eflags |= DNSNAP_EF_EXT;
		memmove(out->entry + hdr + 2 + ext_len, out->entry + hdr, rec_len);
		st16le(out->entry + hdr, (uint16_t)ext_len);
		write_ede(&e, out->entry + hdr + 2);
		hdr += 2 + ext_len;
	}
	uint8_t *h = out->entry;
	st32le(h + 0, now);
	st32le(h + 4, now + ttl);
	st32le(h + 8, 0);
	st16le(h + 12, eflags);
	st16le(h + 14, sec_off[1]);
	st16le(h + 16, sec_off[2]);
	out->entry_len = hdr + rec_len;
	out->qname_off = (uint16_t)qoff;
	out->qname_len = (uint16_t)e.qname_len;
	out->ttl = ttl;
	return DNSNAP_OK;
}
