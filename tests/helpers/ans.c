/*
 * ans.c: see ans.h.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ans.h"
#include "byteorder.h"
#include "wb.h"

/* Skip a name (labels, maybe ending in a pointer). @return 0 or -1 */
static int skip_name(const uint8_t *m, size_t len, size_t *p)
{
	for (unsigned hops = 0; hops < 128; hops++) {
		if (*p >= len)
			return -1;
		uint8_t l = m[*p];
		if ((l & 0xc0) == 0xc0) {
			if (len - *p < 2)
				return -1;
			*p += 2;
			return 0;
		}
		if (l & 0xc0)
			return -1;
		*p += 1 + (size_t)l;
		if (l == 0)
			return 0;
	}
	return -1;
}

int ans_parse(const uint8_t *m, size_t len, ans_t *a)
{
	memset(a, 0, sizeof *a);
	if (len < 12)
		return -1;
	a->id = ld16be(m);
	a->flags = ld16be(m + 2);
	for (int i = 0; i < 4; i++)
		a->count[i] = ld16be(m + 4 + 2 * i);
	size_t p = 12;
	for (unsigned i = 0; i < a->count[0]; i++) {
		if (skip_name(m, len, &p) != 0 || len - p < 4)
			return -1;
		p += 4;
	}
	for (unsigned s = 1; s < 4; s++)
		for (unsigned i = 0; i < a->count[s]; i++) {
			if (skip_name(m, len, &p) != 0 || len - p < 10)
				return -1;
			uint16_t type = ld16be(m + p);
			uint32_t ttl = ld32be(m + p + 4);
			size_t rdlen = ld16be(m + p + 8);
			p += 10;
			if (len - p < rdlen)
				return -1;
			if (type == 41) {
				if (a->opt++)
					return -1;
				for (size_t o = 0; o < rdlen;) {
					if (rdlen - o < 4)
						return -1;
					uint16_t code = ld16be(m + p + o);
					size_t olen = ld16be(m + p + o + 2);
					if (rdlen - o - 4 < olen)
						return -1;
					if (code == 15) {
						if (olen < 2 || a->nede == ANS_EDE_MAX)
							return -1;
						a->ede[a->nede++] = ld16be(m + p + o + 4);
					}
					o += 4 + olen;
				}
			} else {
				if (a->n == ANS_RR_MAX)
					return -1;
				ans_rr_t *r = &a->rr[a->n++];
				r->sec = s - 1;
				r->type = type;
				r->ttl = ttl;
				r->rdata = p;
				r->rdlen = rdlen;
			}
			p += rdlen;
		}
	return p == len ? 0 : -1;
}

int ans_last_octet(const uint8_t *m, const ans_t *a, uint16_t type)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->rr[i].type == type && a->rr[i].rdlen > 0)
			return m[a->rr[i].rdata + a->rr[i].rdlen - 1];
	return -1;
}

size_t ans_query(uint8_t *buf, const char *name, unsigned type, int cd, int edns, int do_bit)
{
	wb_t w;
	put_header(&w, 0x0100 | (cd ? 0x0010 : 0), 1, 0, 0, edns ? 1 : 0);
	set_u16(&w, 0, 0x4242);
	put_name(&w, name);
	put_u16(&w, type);
	put_u16(&w, 1);
	if (edns) {
		put_u8(&w, 0);
		put_u16(&w, 41);
		put_u16(&w, 1232);
		put_u32(&w, do_bit ? 0x8000u : 0);
		put_u16(&w, 0);
	}
	memcpy(buf, w.b, w.n);
	return w.n;
}

void ans_query_parse(uint8_t *buf, const char *name, unsigned type, int cd, int edns,
		     int do_bit, dnsnap_query_t *q)
{
	size_t n = ans_query(buf, name, type, cd, edns, do_bit);
	if (dnsnap_query_parse(buf, n, NULL, 0, q, NULL) != DNSNAP_OK)
		abort(); /* a test's own query: never */
}

static int tier_get(void *tier, const uint8_t *key, size_t key_len, uint8_t *buf, size_t cap,
		    size_t *len)
{
	ans_tier_t *t = tier;
	atomic_fetch_add(&t->inside, 1);
	atomic_fetch_add(&t->gets, 1);
	for (volatile unsigned i = 0; i < t->spin; i++)
		;
	int err = DNSNAP_ENOTFOUND;
	for (size_t i = 0; i < t->n && t->fail == 0; i++)
		if (t->e[i].key_len == key_len && memcmp(t->e[i].key, key, key_len) == 0 &&
		    t->e[i].entry_len <= cap &&
		    dnsnap_entry_validate(t->e[i].entry, t->e[i].entry_len, NULL) == DNSNAP_OK) {
			memcpy(buf, t->e[i].entry, t->e[i].entry_len);
			*len = t->e[i].entry_len;
			err = DNSNAP_OK;
			break;
		}
	if (t->fail != 0)
		err = t->fail;
	atomic_fetch_sub(&t->inside, 1);
	return err;
}

const dnsnap_tier_ops_t ans_tier_ops = { "array", tier_get };

void ans_tier_add(ans_tier_t *t, const uint8_t *msg, size_t len, uint32_t now)
{
	static dnsnap_encoded_t enc; /* large: static (tests add from one thread) */
	if (t->n == ANS_TIER_MAX || dnsnap_msg_encode(msg, len, now, NULL, 0, &enc, NULL) != 0 ||
	    enc.entry_len > sizeof t->e[0].entry)
		abort(); /* a test's own response: never */
	memcpy(t->e[t->n].key, enc.key, enc.key_len);
	t->e[t->n].key_len = enc.key_len;
	memcpy(t->e[t->n].entry, enc.entry, enc.entry_len);
	t->e[t->n].entry_len = enc.entry_len;
	t->n++;
}

void ans_response_a(wb_t *w, const char *name, uint32_t ttl, unsigned octet, int cd)
{
	put_header(w, 0x8180 | (cd ? 0x0010 : 0), 1, 1, 0, 0);
	put_name(w, name);
	put_u16(w, 1);
	put_u16(w, 1);
	put_ptr(w, 12);
	size_t at = put_fixed(w, 1, 1, ttl);
	put_u32(w, 0xc0000200u | octet);
	end_rdata(w, at);
}
