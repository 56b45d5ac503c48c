/*
 * fuzz_serve: a received message -> serve_reply() (cli/serve/serve_reply.c), the
 * packet handler of `dnsnap serve`, over a small cache.
 *
 * Input: the message as received. The transport and the clock come from its
 * ID, so that the seeds can be plain DNS messages: an odd ID is TCP, else
 * UDP; ID bit 1 asks at a time when every entry has expired (all misses).
 * The cache holds: www.example.com A, big.example.com TXT (about 2.6 KB:
 * always cut over UDP), example.com MX with glue, nx.example.com A
 * (NXDOMAIN with an SOA).
 *
 * Every reply must:
 *   - be dropped (no bytes) only for a message under 12 bytes or with QR set,
 *     and every such message must be dropped;
 *   - fit in the buffer, and over UDP in the client's size (the parsed EDNS
 *     size, 512 without EDNS or when the query is refused as malformed) and
 *     SERVE_UDP_MAX; over TCP never have TC;
 *   - carry the query's ID, OPCODE and RD, QR set, the RCODE of its outcome
 *     (BADVERS: 0 in the header, 1 in the OPT's EXTENDED-RCODE);
 *   - be a whole DNS message (walked here, independently of dnsnap): at most
 *     one question, equal to the query's bytes, every record whole, every
 *     compression pointer at an offset >= 12 before itself, at most one OPT,
 *     the last record, owned by the root; nothing after the last record;
 *   - on a miss of a query with EDNS, hold the EDE option SERVE_EDE_CODE.
 *
 * Link: the format and engine sources, cli/serve/serve_reply.c, tests/helpers.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../engine/dnsnap.h"
#include "serve.h"
#include "wb.h"
#include "byteorder.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NOW 1700000000u

static dnsnap_cache_t *cache;

static void die(const char *what, size_t at)
{
	fprintf(stderr, "fuzz_serve: %s (at %zu)\n", what, at);
	abort();
}

static void insert(wb_t *w)
{
	static dnsnap_encoded_t enc;
	dnsnap_diag_t d;
	int rc = dnsnap_cache_insert(cache, w->b, w->n, NOW, NULL, 0, &enc, &d);
	if (rc != DNSNAP_OK) {
		fprintf(stderr, "fuzz_serve: cannot cache a response: %s\n", d.msg);
		abort();
	}
}

static void free_cache(void)
{
	dnsnap_cache_free(cache);
}

/* Once, before the inputs: the index keeps its entry pointers tagged with
 * hash bits, so LeakSanitizer's per-input check would take a cache made
 * during an input for a leak. */
static void fill_cache(void)
{
	if (dnsnap_cache_new(NULL, &cache) != DNSNAP_OK)
		abort();
	atexit(free_cache);
	wb_t w;
	size_t rd;

	put_header(&w, 0x8180, 1, 1, 0, 0);
	put_name(&w, "www.example.com");
	put_u16(&w, 1);
	put_u16(&w, 1);
	put_ptr(&w, 12);
	rd = put_fixed(&w, 1, 1, 300);
	put_raw(&w, "\xc0\x00\x02\x01", 4);
	end_rdata(&w, rd);
	insert(&w);

	put_header(&w, 0x8180, 1, 12, 0, 0);
	put_name(&w, "big.example.com");
	put_u16(&w, 16);
	put_u16(&w, 1);
	for (unsigned i = 0; i < 12; i++) {
		put_ptr(&w, 12);
		rd = put_fixed(&w, 16, 1, 3600);
		put_u8(&w, 200);
		for (unsigned k = 0; k < 200; k++)
			put_u8(&w, 'a' + (i + k) % 26);
		end_rdata(&w, rd);
	}
	insert(&w);

	put_header(&w, 0x8180, 1, 2, 0, 1);
	put_name(&w, "example.com");
	put_u16(&w, 15);
	put_u16(&w, 1);
	for (unsigned i = 1; i <= 2; i++) {
		put_ptr(&w, 12);
		rd = put_fixed(&w, 15, 1, 3600);
		put_u16(&w, 10 * i);
		put_labels(&w, i == 1 ? "mx1" : "mx2");
		put_ptr(&w, 12);
		end_rdata(&w, rd);
	}
	put_labels(&w, "mx1");
	put_ptr(&w, 12);
	rd = put_fixed(&w, 1, 1, 3600);
	put_raw(&w, "\xc0\x00\x02\x0a", 4);
	end_rdata(&w, rd);
	insert(&w);

	put_header(&w, 0x8183, 1, 0, 1, 0);
	put_name(&w, "nx.example.com");
	put_u16(&w, 1);
	put_u16(&w, 1);
	put_name(&w, "example.com");
	rd = put_fixed(&w, 6, 1, 900);
	put_name(&w, "ns1.example.com");
	put_name(&w, "hostmaster.example.com");
	for (unsigned i = 0; i < 5; i++)
		put_u32(&w, i == 0 ? 2023111401u : 900);
	end_rdata(&w, rd);
	insert(&w);
}

static size_t walk_name(const uint8_t *m, size_t len, size_t p)
{
	size_t end = 0, n = 0;
	for (unsigned hops = 0;; hops++) {
		if (p >= len || hops > 255)
			die("reply: name cut", p);
		uint8_t l = m[p];
		if ((l & 0xc0) == 0xc0) {
			if (p + 1 >= len)
				die("reply: pointer cut", p);
			size_t t = (size_t)(l & 0x3f) << 8 | m[p + 1];
			if (t < 12 || t >= p)
				die("reply: pointer not strictly backwards, or into the header", p);
			if (end == 0)
				end = p + 2;
			p = t;
			continue;
		}
		if (l & 0xc0)
			die("reply: bad label type", p);
		n += 1 + (size_t)l;
		if (n > DNSNAP_NAME_MAX || p + 1 + l > len)
			die("reply: name over 255 bytes or cut", p);
		p += 1 + (size_t)l;
		if (l == 0)
			return end ? end : p;
	}
}

/* The end of the question of @p m (QDCOUNT 1 and plain labels), or 0. */
static size_t question_end(const uint8_t *m, size_t len)
{
	if (len < 12 || ld16be(m + 4) != 1)
		return 0;
	size_t p = 12;
	while (p < len && m[p] != 0 && (m[p] & 0xc0) == 0)
		p += 1 + (size_t)m[p];
	return p < len && m[p] == 0 && len - p >= 5 ? p + 5 : 0;
}

/* Walk the reply; @return the OPT's offset, or 0 when there is none. */
static size_t walk_reply(const uint8_t *r, size_t len, const uint8_t *q, size_t qlen)
{
	unsigned qd = ld16be(r + 4);
	size_t total = (size_t)ld16be(r + 6) + ld16be(r + 8) + ld16be(r + 10);
	size_t p = 12, opt = 0;
	if (qd > 1)
		die("reply: more than one question", 4);
	if (qd == 1) {
		size_t qe = question_end(q, qlen);
		if (qe == 0 || len < qe || memcmp(r + 12, q + 12, qe - 12) != 0)
			die("reply: question not the query's", 12);
		p = qe;
	}
	for (size_t k = 0; k < total; k++) {
		size_t start = p;
		p = walk_name(r, len, p);
		if (len - p < 10)
			die("reply: record header cut", p);
		uint16_t type = ld16be(r + p);
		size_t rdlen = ld16be(r + p + 8);
		p += 10;
		if (len - p < rdlen)
			die("reply: rdata past the end", p);
		if (type == 41) {
			if (opt || k != total - 1 || r[start] != 0)
				die("reply: misplaced OPT", start);
			opt = start;
			for (size_t o = 0; o < rdlen;) {
				if (rdlen - o < 4 || rdlen - o - 4 < ld16be(r + p + o + 2))
					die("reply: OPT options overrun", p + o);
				o += 4 + (size_t)ld16be(r + p + o + 2);
			}
		}
		p += rdlen;
	}
	if (p != len)
		die("reply: bytes after the last record", p);
	return opt;
}

/* Whether the OPT at @p opt holds the EDE option with our code. */
static int has_ede(const uint8_t *r, size_t opt)
{
	size_t rdlen = ld16be(r + opt + 9), p = opt + 11;
	for (size_t o = 0; o < rdlen; o += 4 + (size_t)ld16be(r + p + o + 2))
		if (ld16be(r + p + o) == 15 && ld16be(r + p + o + 2) >= 2 &&
		    ld16be(r + p + o + 4) == SERVE_EDE_CODE)
			return 1;
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fill_cache();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (data == NULL || size > 65535)
		return 0;
	uint8_t *msg = malloc(size ? size : 1); /* exact size: ASan sees overreads */
	if (msg == NULL)
		abort();
	memcpy(msg, data, size);
	int tcp = size >= 2 && (msg[1] & 1);
	uint32_t now = size >= 2 && (msg[1] & 2) ? NOW + 100000 : NOW;
	size_t cap = tcp ? 65535 : SERVE_UDP_MAX;
	uint8_t *out = malloc(cap);
	if (out == NULL)
		abort();
	size_t len = 12345;
	int outcome = serve_reply(cache, msg, size, tcp, now, out, cap, &len);

	int must_drop = size < 12 || (msg[2] & 0x80);
	if (outcome == SERVE_DROP || must_drop) {
		if (outcome != SERVE_DROP || !must_drop || len != 0)
			die("dropped iff under 12 bytes or QR set, with no bytes", len);
		goto done;
	}
	if (len < 12 || len > cap)
		die("reply shorter than a header or over the buffer", len);
	dnsnap_query_t q;
	int parsed = dnsnap_query_parse(msg, size, NULL, 0, &q, NULL) == DNSNAP_OK;
	size_t limit = parsed ? q.udp_size : 512;
	if (limit > SERVE_UDP_MAX)
		limit = SERVE_UDP_MAX;
	if (!tcp && len > limit)
		die("UDP reply over the client's size", len);
	if (tcp && (out[2] & 0x02))
		die("TC over TCP", 2);
	if (ld16be(out) != ld16be(msg) || !(out[2] & 0x80) || (out[2] & 0x79) != (msg[2] & 0x79))
		die("reply: ID, QR, OPCODE or RD wrong", 0);
	size_t opt = walk_reply(out, len, msg, size);
	unsigned rcode = out[3] & 15, ext = opt ? out[opt + 5] : 0;
	static const unsigned want[] = {
		[SERVE_MISS] = 5, [SERVE_FORMERR] = 1, [SERVE_NOTIMP] = 4, [SERVE_BADVERS] = 16,
		[SERVE_LOCAL] = 5, [SERVE_SERVFAIL] = 2,
	};
	if (outcome == SERVE_HIT) {
		if (!parsed || (rcode != 0 && rcode != 3) || ext != 0)
			die("hit: not a parsed query, or an unexpected RCODE", 3);
		if (!!opt != !!q.edns)
			die("hit: OPT iff the query had one", opt);
	} else if (outcome < SERVE_MISS || outcome > SERVE_SERVFAIL ||
		   (ext << 4 | rcode) != want[outcome]) {
		die("RCODE not the outcome's", outcome);
	}
	if (outcome == SERVE_BADVERS && !opt)
		die("BADVERS without an OPT", 0);
	if (outcome == SERVE_MISS && (!parsed || !!opt != !!q.edns || (opt && !has_ede(out, opt))))
		die("miss: not a parsed query, or OPT and EDE wrong", opt);
done:
	free(out);
	free(msg);
	return 0;
}
