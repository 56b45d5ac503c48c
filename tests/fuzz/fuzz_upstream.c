/*
 * fuzz_upstream: arbitrary bytes as an upstream's reply ->
 * dnsnap_fwd_reply_matches() (engine/forward/forward_msg.c), the check that
 * keeps forged replies out of the cache, against two fixed queries built by
 * dnsnap_fwd_build_query(): one with the name lower-cased, one with 0x20's
 * mixed case.
 *
 * dnsnap_fwd_reply_matches() must never read past the reply (ASan), and its answer
 * must equal this file's own reading of the rule: at least the header and
 * question; the query's ID; QR=1; OPCODE 0; QDCOUNT 1; the question's bytes,
 * where each letter may be either case unless 0x20 is checked, type and
 * class. Accepted with 0x20 implies accepted without.
 *
 * Seeds: tests/fuzz/seeds/fuzz_upstream (replies to each query) and the
 * vectors (any DNS message).
 *
 * Link: the library (as every fuzz target).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forward.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* www.Example.com A IN, as a client sent it */
static const uint8_t client[] = {
	0xab, 0xcd, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0,
	3, 'w', 'w', 'w', 7, 'E', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0,
	0, 1, 0, 1,
};
#define NAME_END (12 + 17)
#define Q_END (NAME_END + 4)

/* The case bits of the 0x20 query: its seed (tests/fuzz/seeds) follows them. */
static const uint8_t rnd[32] = { 0xa6, 0x5b, 0x3c, 0x0f };

static void die(const char *what, int x20, int checked, int got, int want)
{
	fprintf(stderr, "fuzz_upstream: %s (0x20 query %d, checked %d): got %d, want %d\n",
		what, x20, checked, got, want);
	abort();
}

static int upper(int c)
{
	return c >= 'a' && c <= 'z' ? c - 32 : c;
}

static int lowerc(int c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/* The rule, read independently of forward_msg.c, for the fixed query @p q. */
static int oracle(const uint8_t *q, const uint8_t *r, size_t rlen, int checked)
{
	if (rlen < Q_END || r[0] != q[0] || r[1] != q[1] || !(r[2] & 0x80) || (r[2] & 0x78) ||
	    r[4] != 0 || r[5] != 1)
		return 0;
	for (size_t i = 12; i < NAME_END; i++) {
		if (checked ? r[i] != q[i] : r[i] != lowerc(q[i]) && r[i] != upper(q[i]))
			return 0;
	}
	return memcmp(r + NAME_END, q + NAME_END, 4) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	dnsnap_query_t cq;
	memset(&cq, 0, sizeof cq);
	cq.msg = client;
	cq.len = sizeof client;
	cq.flags = 0x0100;
	cq.qname_off = 12;
	cq.qname_len = NAME_END - 12;
	cq.question_end = Q_END;
	cq.qtype = 1;
	cq.qclass = 1;

	/* the reply in a buffer of its own size, so that ASan sees an overread */
	uint8_t *r = malloc(size ? size : 1);
	if (r == NULL)
		return 0;
	memcpy(r, data, size);
	for (int x20 = 0; x20 <= 1; x20++) {
		uint8_t q[512];
		size_t qlen = dnsnap_fwd_build_query(&cq, 0x5a17, x20 ? rnd : NULL, q, sizeof q);
		if (qlen != Q_END + 11)
			die("the query's length", x20, 0, (int)qlen, Q_END + 11);
		int loose = dnsnap_fwd_reply_matches(q, qlen, r, size, 0);
		int strict = dnsnap_fwd_reply_matches(q, qlen, r, size, 1);
		if (loose != oracle(q, r, size, 0))
			die("accepted without 0x20", x20, 0, loose, !loose);
		if (strict != oracle(q, r, size, 1))
			die("accepted with 0x20", x20, 1, strict, !strict);
		if (strict && !loose)
			die("accepted with 0x20, not without", x20, 1, loose, 1);
	}
	free(r);
	return 0;
}
