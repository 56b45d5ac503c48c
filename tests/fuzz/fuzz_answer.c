/*
 * fuzz_answer: a query and a response -> dnsnap_answer_build().
 *
 * Input: Query_Len (u16, big-endian, as DNS over TCP frames a message), the
 * query (Query_Len bytes), then the response (the rest). The query is parsed
 * with dnsnap_query_parse(); if it is accepted, the response is encoded with
 * dnsnap_msg_encode(); if that is accepted too, the answer is built into an
 * exact-size heap buffer (ASan catches a write past it) with options taken
 * from the query's ID bits, and must:
 *   - succeed, or fail with DNSNAP_ENOSPC only when the buffer cannot hold
 *     the header, the question and the OPT;
 *   - stay within the buffer and the size limit (unless the limit is below
 *     header + question + OPT, which are always written);
 *   - be a well-formed DNS message (walked here, independently of dnsnap):
 *     QR set, the query's ID, one question equal to the query's byte for
 *     byte, every record whole, every compression pointer pointing to an
 *     offset >= 12 and strictly before itself, the rdata names of the
 *     compressed types (NS, CNAME, SOA, PTR, MX, ...) walked too, an OPT iff
 *     the query had one, as the last record, nothing after the last record;
 *   - have no more records than the entry (plus the OPT);
 *   - be what dnsnap__answer_trusted() (the cache's path for its own entries)
 *     writes too, byte for byte.
 * And the response's bytes taken as an entry as they are, valid or not: the
 * builder must read them safely, and write a well-formed message when it
 * succeeds (answers from a snapshot are built from entries whose checksum
 * passed, without the validator).
 *
 * Link: the format sources, engine/answer.c, tests/helpers/guard.c.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../engine/dnsnap.h"
#include "../../engine/tier.h"
#include "guard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NOW 1700000000u

static dnsnap_encoded_t enc; /* large: static */

static void die(const char *what, int rc, size_t at)
{
	const char *name = dnsnap_errname(rc);
	fprintf(stderr, "fuzz_answer: %s (%s %d, at %zu)\n", what, name ? name : "-", rc, at);
	abort();
}

static size_t walk_name(const uint8_t *m, size_t len, size_t p)
{
	size_t end = 0, n = 0;
	for (unsigned hops = 0;; hops++) {
		if (p >= len || hops > 255)
			die("answer: name cut", 0, p);
		uint8_t l = m[p];
		if ((l & 0xc0) == 0xc0) {
			if (p + 1 >= len)
				die("answer: pointer cut", 0, p);
			size_t t = (size_t)(l & 0x3f) << 8 | m[p + 1];
			if (t < 12 || t >= p)
				die("answer: pointer not strictly backwards, or into the header", 0,
				    p);
			if (end == 0)
				end = p + 2;
			p = t;
			continue;
		}
		if (l & 0xc0)
			die("answer: bad label type", 0, p);
		n += 1 + (size_t)l;
		if (n > DNSNAP_NAME_MAX || p + 1 + l > len)
			die("answer: name over 255 bytes or cut", 0, p);
		p += 1 + (size_t)l;
		if (l == 0)
			return end ? end : p;
	}
}

static const char *compress_schema(uint16_t type)
{
	switch (type) {
	case 2: case 3: case 4: case 5: case 7: case 8: case 9: case 12:
		return "N";
	case 6:
		return "NNZ";
	case 14:
		return "NN";
	case 15:
		return "2N";
	default:
		return NULL;
	}
}

/* @return the number of records (OPT included); aborts on a malformed answer */
static size_t walk_answer(const uint8_t *m, size_t len, const dnsnap_query_t *q)
{
	if (len < 12)
		die("answer shorter than a header", 0, len);
	unsigned flags = (unsigned)(m[2] << 8 | m[3]);
	if ((unsigned)(m[0] << 8 | m[1]) != q->id || !(flags & 0x8000))
		die("answer: ID or QR wrong", 0, 0);
	unsigned qd = (unsigned)(m[4] << 8 | m[5]);
	size_t total = (size_t)(m[6] << 8 | m[7]) + (size_t)(m[8] << 8 | m[9]) +
		       (size_t)(m[10] << 8 | m[11]);
	size_t an_ns = (size_t)(m[6] << 8 | m[7]) + (size_t)(m[8] << 8 | m[9]);
	if (qd != 1 || len < q->question_end ||
	    memcmp(m + 12, q->msg + 12, q->question_end - 12) != 0)
		die("answer: question not echoed", 0, 12);
	size_t p = q->question_end;
	int opt = 0;
	for (size_t k = 0; k < total; k++) {
		size_t start = p;
		p = walk_name(m, len, p);
		if (len - p < 10)
			die("answer: record header cut", 0, p);
		uint16_t type = (uint16_t)(m[p] << 8 | m[p + 1]);
		size_t rdlen = (size_t)(m[p + 8] << 8 | m[p + 9]);
		p += 10;
		if (len - p < rdlen)
			die("answer: rdata past the end", 0, p);
		if (type == 41) {
			if (opt || k != total - 1 || k < an_ns || m[start] != 0)
				die("answer: misplaced OPT", 0, start);
			opt = 1;
		}
		const char *s = compress_schema(type);
		if (s != NULL) {
			size_t r = p, rend = p + rdlen;
			for (; *s; s++) {
				if (*s == 'N') {
					r = walk_name(m, rend, r);
				} else {
					size_t f = *s == '2' ? 2 : 20;
					if (rend - r < f)
						die("answer: rdata field cut", 0, r);
					r += f;
				}
			}
			if (r != rend)
				die("answer: rdata longer than its layout", 0, r);
		}
		p += rdlen;
	}
	if (p != len)
		die("answer: bytes after the last record", 0, p);
	if (opt != !!q->edns)
		die("answer: OPT present iff the query had one", 0, 0);
	return total;
}

/* The response's bytes taken as an entry as they are, valid or not: answers
 * from a snapshot are built from entries whose checksum passed, not the
 * validator (engine/snap_read.c), so the builder must read any bytes safely
 * (an exact-size copy: ASan catches a read past it) and, when it succeeds,
 * write a well-formed message. */
static void raw_entry(const dnsnap_query_t *q, const uint8_t *bytes, size_t len)
{
	uint8_t *entry = heap_copy(bytes, len);
	static uint8_t out[65536];
	dnsnap_answer_opts_t o;
	memset(&o, 0, sizeof o);
	o.now = NOW;
	o.max_size = 65535;
	o.rotate = q->id & 7;
	size_t out_len = 0;
	if (dnsnap_answer_build(q, entry, len, &o, out, sizeof out, &out_len) == DNSNAP_OK) {
		if (out_len > sizeof out)
			die("raw entry: answer over the cap", 0, out_len);
		walk_answer(out, out_len, q);
	}
	free(entry);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (data == NULL || size < 2)
		return 0;
	size_t qlen = (size_t)(data[0] << 8 | data[1]);
	if (qlen > size - 2)
		return 0;
	uint8_t *query = heap_copy(data + 2, qlen);
	dnsnap_query_t q;
	dnsnap_diag_t d = { 0 };
	int rc = dnsnap_query_parse(query, qlen, NULL, 0, &q, &d);
	if (rc != DNSNAP_OK) {
		if (rc > 0 || dnsnap_errname(rc) == NULL || d.offset > qlen)
			die("query_parse: unknown code or offset past the query", rc, d.offset);
		free(query);
		return 0;
	}
	if (q.question_end > qlen || q.qname_off != 12 || q.udp_size < 512)
		die("query_parse: fields out of range", 0, q.question_end);

	const uint8_t *resp = data + 2 + qlen;
	size_t rlen = size - 2 - qlen;
	raw_entry(&q, resp, rlen);
	if (dnsnap_msg_encode(resp, rlen, NOW, NULL, 0, &enc, NULL) != DNSNAP_OK) {
		free(query);
		return 0;
	}
	uint8_t *entry = heap_copy(enc.entry, enc.entry_len);
	size_t records = 0;
	{
		dnsnap_iter_t it;
		dnsnap_rr_t rr;
		if (dnsnap_iter_init(&it, entry, enc.entry_len, query + 12, q.qname_len) != 0)
			die("iter_init on an encoded entry", 0, 0);
		while ((rc = dnsnap_iter_next(&it, &rr)) == 1)
			records++;
		if (rc != 0)
			die("iterating an encoded entry", rc, it.err_off);
	}

	/* options from the ID's bits */
	dnsnap_answer_opts_t o;
	memset(&o, 0, sizeof o);
	o.now = NOW + (q.id & 0x400 ? 100000 : 5);
	o.rotate = q.id & 7;
	o.stale = (q.id >> 3) & 1;
	o.min_ttl = (q.id & 0x40) ? 60 : 0;       /* bits shared with max_size's: */
	o.max_ttl = (q.id & 0x80) ? 600 : 0;      /* every bit of the ID is taken */
	switch ((q.id >> 4) & 3) {
	case 0: o.max_size = 0; break;
	case 1: o.max_size = 65535; break;
	case 2: o.max_size = (uint16_t)(q.question_end + ((q.id >> 6) & 0xf) * 16); break;
	default: o.max_size = 512; break;
	}
	o.our_udp_size = (q.id & 0x800) ? 4096 : 0;
	size_t base = q.question_end + (q.edns ? 11 : 0);
	size_t cap = (q.id & 0x1000) ? base + ((q.id >> 13) & 7) * 8 : 65535;
	if (q.id & 0x2000 && base > 0)
		cap = base - 1; /* too small */
	uint8_t *out = malloc(cap ? cap : 1);
	if (out == NULL)
		abort();
	size_t out_len = 0;
	rc = dnsnap_answer_build(&q, entry, enc.entry_len, &o, out, cap, &out_len);
	if (rc == DNSNAP_ENOSPC) {
		if (cap >= base)
			die("ENOSPC although header, question and OPT fit", rc, cap);
	} else if (rc != DNSNAP_OK) {
		die("answer_build failed on an encoded entry", rc, 0);
	} else {
		if (cap < base)
			die("answer built into a buffer below header + question + OPT", 0, cap);
		size_t limit = o.max_size ? o.max_size : q.udp_size;
		if (limit > cap)
			limit = cap;
		if (out_len > cap || (out_len > limit && out_len > base))
			die("answer over the cap or the limit", 0, out_len);
		size_t n = walk_answer(out, out_len, &q);
		if (n > records + (q.edns ? 1 : 0))
			die("answer has more records than the entry", 0, n);
		/* the cache's path for its own entries writes the same bytes */
		uint8_t *tout = malloc(cap ? cap : 1);
		size_t tlen = 0;
		if (tout == NULL)
			abort();
		rc = dnsnap__answer_trusted(&q, entry, enc.entry_len, &o, tout, cap, &tlen);
		if (rc != DNSNAP_OK || tlen != out_len || memcmp(tout, out, tlen) != 0)
			die("the trusted answer differs from the checked one", rc, tlen);
		free(tout);
	}
	free(out);
	free(entry);
	free(query);
	return 0;
}
