/*
 * forward_msg.c: the forwarder's messages alone, no sockets (forward.h):
 * the upstream query it sends and the checks a reply must pass, apart from
 * the sockets so that the fuzz target and the tests read them alone.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "byteorder.h"
#include "forward.h"

#define HDR 12
#define NAME_MAX_WIRE 255
#define OPT_LEN 11          /* root owner, TYPE, CLASS, TTL, RDLENGTH 0 */
#define F_QR 0x80           /* in the header's third byte */
#define W_RD 0x0100u        /* in the 16-bit flags word */
#define W_CD 0x0010u
#define TYPE_OPT 41
#define EDNS_DO 0x8000u

static uint8_t lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? (uint8_t)(c | 0x20) : c;
}

static int is_letter(uint8_t c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

/* The offset after the uncompressed name at @p off, 0 if it is not one. */
static size_t name_end(const uint8_t *m, size_t len, size_t off)
{
	size_t start = off;
	while (off < len) {
		uint8_t l = m[off];
		if (l == 0)
			return off + 1 - start <= NAME_MAX_WIRE ? off + 1 : 0;
		if (l > 63)
			return 0;
		off += 1u + l;
	}
	return 0;
}

size_t dnsnap_fwd_build_query(const dnsnap_query_t *q, uint16_t id, const uint8_t *rnd,
			      uint8_t *out, size_t cap)
{
	size_t nl = q->qname_len;
	size_t len = HDR + nl + 4 + OPT_LEN;
	if (q->msg == NULL || nl == 0 || nl > NAME_MAX_WIRE || q->qname_off + nl > q->len ||
	    cap < len)
		return 0;
	st16be(out, id);
	st16be(out + 2, (uint16_t)(W_RD | (q->flags & W_CD)));
	st16be(out + 4, 1);
	st16be(out + 6, 0);
	st16be(out + 8, 0);
	st16be(out + 10, 1);
	/* Label lengths are at most 63, below 'A': only the labels' letters change. */
	const uint8_t *n = q->msg + q->qname_off;
	uint8_t *o = out + HDR;
	for (size_t i = 0; i < nl; i++) {
		uint8_t c = n[i];
		if (is_letter(c)) {
			c = lower(c);
			if (rnd != NULL && (rnd[i >> 3] >> (i & 7) & 1))
				c = (uint8_t)(c & ~0x20);
		}
		o[i] = c;
	}
	o += nl;
	st16be(o, q->qtype);
	st16be(o + 2, q->qclass);
	o += 4;
	o[0] = 0;                               /* OPT: the root */
	st16be(o + 1, TYPE_OPT);
	st16be(o + 3, DNSNAP_FWD_EDNS_SIZE);           /* CLASS: the payload size */
	o[5] = 0;                               /* extended RCODE */
	o[6] = 0;                               /* version */
	st16be(o + 7, EDNS_DO);
	st16be(o + 9, 0);                       /* RDLENGTH */
	return len;
}

int dnsnap_fwd_reply_matches(const uint8_t *query, size_t qlen, const uint8_t *reply,
			     size_t rlen, int use_0x20)
{
	if (qlen < HDR)
		return 0;
	size_t end = name_end(query, qlen, HDR);
	if (end == 0 || end + 4 > qlen || rlen < end + 4)
		return 0;
	if (reply[0] != query[0] || reply[1] != query[1])
		return 0;
	if (!(reply[2] & F_QR) || (reply[2] >> 3 & 0x0f) != 0)
		return 0;
	if (ld16be(reply + 4) != 1)
		return 0;
	/* The positions of the label lengths are the query's; a length (at
	 * most 63) never equals a folded letter, so folding both is safe. */
	for (size_t i = HDR; i < end; i++) {
		uint8_t a = query[i], b = reply[i];
		if (!use_0x20) {
			a = lower(a);
			b = lower(b);
		}
		if (a != b)
			return 0;
	}
	return memcmp(query + end, reply + end, 4) == 0;
}
