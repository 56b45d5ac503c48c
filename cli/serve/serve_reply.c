/*
 * serve_reply.c: one received message -> its reply (serve.h).
 *
 * A query that dnsnap_query_parse() accepts is answered by the cache (which
 * falls through to the attached snapshot): a hit is the engine's answer, a
 * miss is REFUSED. What it refuses is mapped by its error and offset
 * (engine/answer.c, "Query parsing"):
 *   ETRUNC at 0 (under 12 bytes)               -> dropped
 *   ENOTCACHE at 2: QR=1 (a response)          -> dropped: answering
 *                                                 responses makes loops
 *   ENOTCACHE at 2: OPCODE other than QUERY    -> NOTIMP
 *   ENOTCACHE at 4, 6, 8: QDCOUNT != 1,
 *     ANCOUNT or NSCOUNT != 0                  -> FORMERR
 *   ENOTCACHE at the OPT's VERSION byte        -> BADVERS (RFC 6891 6.1.3)
 *   EOPT, ETRUNC, ELABEL, ENAME, EPOINTER      -> FORMERR
 *   anything else (ETOOBIG needs a tag; we
 *     pass none)                               -> SERVFAIL
 * An answer that fails (ERDATA: an entry the validator let through but the
 * builder cannot lay out; ENOSPC cannot happen with cap >= 512) is SERVFAIL.
 *
 * Questions answered here, never looked up nor forwarded, as Unbound answers
 * them (tests/e2e/hostile.sh asks both):
 *   QTYPE AXFR or IXFR (zone transfers: no resolver's)  -> REFUSED
 *   QTYPE OPT, TKEY, TSIG, or another of 128-254 (RFC 6895's meta
 *     types and QTYPEs, ANY excepted: it is asked of the upstream) -> FORMERR
 *   QCLASS other than IN and ANY (CH, HS, NONE, ...)     -> REFUSED
 * in that order. A CH TXT version.bind or id.server too: Unbound answers
 * those with its own identity, this server has none to give.
 *
 * Error replies are built here from what can be read of the query (probe()),
 * which is less than dnsnap_query_parse() demands: the header, the question
 * when QDCOUNT is 1, and an OPT right after the question. An OPT elsewhere
 * (after answer or authority records, as in UPDATE) is not looked for: those
 * replies go without one.
 */
#include <string.h>

#include "serve.h"

#define HDR_LEN DNSNAP_WIRE_HDR_LEN
#define OPT_EDE 15             /* RFC 8914 */



/* What an error reply echoes of a query. */
struct probe {
	size_t qend;             /* end of the question, 0: none to echo */
	int edns;                /* a whole OPT right after the question */
	uint8_t version;
	int do_bit;
};

static void probe(const uint8_t *m, size_t len, struct probe *p)
{
	memset(p, 0, sizeof *p);
	if (dnsnap_load_be16(m + 4) != 1)
		return;
	/* plain labels only: a query's name has nothing to point back to */
	int nl = len < HDR_LEN ? -1 : dnsnap_name_len(m + HDR_LEN, len - HDR_LEN);
	if (nl < 0)
		return;
	size_t i = HDR_LEN + (size_t)nl - 1; /* at the root label */
	if (len - i < 5)
		return;
	p->qend = i + 5;
	size_t o = p->qend;
	if (dnsnap_load_be16(m + 6) != 0 || dnsnap_load_be16(m + 8) != 0 ||
	    dnsnap_load_be16(m + 10) == 0 || len - o < 11 || m[o] != 0 ||
	    dnsnap_load_be16(m + o + 1) != DNSNAP_TYPE_OPT ||
	    len - o - 11 < dnsnap_load_be16(m + o + 9))
		return;
	p->edns = 1;
	p->version = m[o + 6];
	p->do_bit = (dnsnap_load_be16(m + o + 7) & DNSNAP_EDNS_DO) != 0;
}

/*
 * An error reply: the header, the question when p->qend, an OPT when
 * @p opt, with the EDE option when @p ede_code is not 0. Fits in
 * SERVE_REPLY_MIN: 12 + 259 (name and type, class) + 11 (OPT) + 4 + 2 +
 * SERVE_EDE_TEXT_MAX (the EDE) = 488.
 */
static size_t error_reply_ede(const uint8_t *m, const struct probe *p, unsigned rcode, int opt,
			      unsigned ede_code, const char *ede_text, uint8_t *out)
{
	int ede = ede_code != 0;
	unsigned qflags = dnsnap_load_be16(m + 2);
	dnsnap_store_be16(out, dnsnap_load_be16(m));
	unsigned kept = qflags & (DNSNAP_WIRE_OPCODE | DNSNAP_WIRE_RD | DNSNAP_WIRE_CD);
	dnsnap_store_be16(out + 2, DNSNAP_WIRE_QR | kept | DNSNAP_WIRE_RA | (rcode & DNSNAP_WIRE_RCODE));
	dnsnap_store_be16(out + 4, p->qend ? 1 : 0);
	dnsnap_store_be16(out + 6, 0);
	dnsnap_store_be16(out + 8, 0);
	dnsnap_store_be16(out + 10, opt ? 1 : 0);
	size_t n = HDR_LEN;
	if (p->qend) {
		memcpy(out + n, m + HDR_LEN, p->qend - HDR_LEN);
		n = p->qend;
	}
	if (opt) {
		const char *text = ede_text ? ede_text : "";
		size_t tl = strlen(text), rdlen = ede ? 4 + 2 + tl : 0;
		out[n] = 0; /* the root */
		dnsnap_store_be16(out + n + 1, DNSNAP_TYPE_OPT);
		dnsnap_store_be16(out + n + 3, DNSNAP_EDNS_SIZE);
		out[n + 5] = (uint8_t)(rcode >> 4); /* EXTENDED-RCODE */
		out[n + 6] = 0;                     /* VERSION: the one we do */
		dnsnap_store_be16(out + n + 7, p->do_bit ? DNSNAP_EDNS_DO : 0);
		dnsnap_store_be16(out + n + 9, (unsigned)rdlen);
		n += 11;
		if (ede) {
			dnsnap_store_be16(out + n, OPT_EDE);
			dnsnap_store_be16(out + n + 2, (unsigned)(2 + tl));
			dnsnap_store_be16(out + n + 4, ede_code);
			memcpy(out + n + 6, text, tl);
			n += 6 + tl;
		}
	}
	return n;
}

static size_t error_reply(const uint8_t *m, const struct probe *p, unsigned rcode, int opt,
			  int ede, uint8_t *out)
{
	return error_reply_ede(m, p, rcode, opt, ede ? SERVE_EDE_CODE : 0, SERVE_EDE_TEXT, out);
}

size_t serve_error(const uint8_t *msg, size_t len, unsigned rcode, unsigned ede_code,
		   const char *ede_text, uint8_t *out)
{
	struct probe p;
	probe(msg, len, &p);
	if (ede_text != NULL && strlen(ede_text) > SERVE_EDE_TEXT_MAX)
		ede_text = "";
	return error_reply_ede(msg, &p, rcode, p.edns, p.edns ? ede_code : 0, ede_text, out);
}

int serve_reply(dnsnap_cache_t *c, const uint8_t *msg, size_t len, int tcp, uint32_t now,
		uint8_t *out, size_t cap, size_t *out_len)
{
	struct serve_in in = { .cache = c, .now = now, .tcp = tcp };
	dnsnap_query_t q;
	dnsnap_lookup_t lk;
	return serve_handle(&in, msg, len, out, cap, out_len, &q, &lk);
}

size_t serve_limit(const dnsnap_query_t *q, int tcp, size_t cap)
{
	size_t limit = tcp ? 65535 : q->udp_size < SERVE_UDP_MAX ? q->udp_size : SERVE_UDP_MAX;
	return limit > cap ? cap : limit;
}

/* A question answered here (above): its outcome, or 0: one to look up */
static int local_only(const dnsnap_query_t *q)
{
	unsigned t = q->qtype;
	if (t == DNSNAP_TYPE_AXFR || t == DNSNAP_TYPE_IXFR)
		return SERVE_LOCAL;
	if (t == DNSNAP_TYPE_OPT || (t >= 128 && t <= 254))
		return SERVE_FORMERR; /* TKEY 249 and TSIG 250 among them */
	if (q->qclass != DNSNAP_CLASS_IN && q->qclass != DNSNAP_CLASS_ANY)
		return SERVE_LOCAL;
	return 0;
}

int serve_handle(const struct serve_in *in, const uint8_t *msg, size_t len, uint8_t *out,
		 size_t cap, size_t *out_len, dnsnap_query_t *qp, dnsnap_lookup_t *lk)
{
	*out_len = 0;
	if (len < HDR_LEN || (dnsnap_load_be16(msg + 2) & DNSNAP_WIRE_QR) || cap < SERVE_REPLY_MIN)
		return SERVE_DROP;
	dnsnap_query_t *q = qp;
	dnsnap_diag_t d;
	struct probe p;
	int err = dnsnap_query_parse(msg, len, NULL, 0, q, &d);
	if (err == DNSNAP_OK) {
		if (in->refuse) {
			probe(msg, len, &p);
			*out_len = error_reply_ede(msg, &p, DNSNAP_RCODE_REFUSED, q->edns,
						   q->edns ? SERVE_EDE_PROHIBITED : 0, "", out);
			return SERVE_REFUSED;
		}
		int local = local_only(q);
		if (local != 0) {
			probe(msg, len, &p);
			*out_len = error_reply(msg, &p, local == SERVE_LOCAL ? DNSNAP_RCODE_REFUSED
					       : DNSNAP_RCODE_FORMERR, q->edns, 0, out);
			return local;
		}
		memset(lk, 0, sizeof *lk);
		lk->now = in->now;
		lk->max_size = (uint16_t)serve_limit(q, in->tcp, cap);
		err = dnsnap_cache_lookup(in->cache, q, lk, out, cap, out_len);
		if (err == DNSNAP_OK)
			return SERVE_HIT;
		*out_len = 0;
		if (err == DNSNAP_ENOTFOUND && in->forward)
			return SERVE_FORWARD;
		/* the question parsed, so the probe finds it; and the OPT, if any */
		probe(msg, len, &p);
		if (err == DNSNAP_ENOTFOUND) {
			*out_len = error_reply(msg, &p, DNSNAP_RCODE_REFUSED, q->edns, q->edns, out);
			return SERVE_MISS;
		}
		*out_len = error_reply(msg, &p, DNSNAP_RCODE_SERVFAIL, q->edns, 0, out);
		return SERVE_SERVFAIL;
	}
	probe(msg, len, &p);
	switch (err) {
	case DNSNAP_ENOTCACHE:
		if (d.offset == 2) {
			*out_len = error_reply(msg, &p, DNSNAP_RCODE_NOTIMP, p.edns, 0, out);
			return SERVE_NOTIMP;
		}
		if (d.offset > 10 && p.edns && p.version != 0) {
			*out_len = error_reply(msg, &p, DNSNAP_RCODE_BADVERS, 1, 0, out);
			return SERVE_BADVERS;
		}
		break; /* the counts: FORMERR */
	case DNSNAP_ETRUNC: case DNSNAP_ELABEL: case DNSNAP_ENAME: case DNSNAP_EPOINTER:
	case DNSNAP_EOPT:
		break;
	default:
		*out_len = error_reply(msg, &p, DNSNAP_RCODE_SERVFAIL, p.edns, 0, out);
		return SERVE_SERVFAIL;
	}
	*out_len = error_reply(msg, &p, DNSNAP_RCODE_FORMERR, 0, 0, out);
	return SERVE_FORMERR;
}
