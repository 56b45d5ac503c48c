/*
 * rebuild.c: see rebuild.h. Uses only the public reader API, so that a
 * round trip checks the readers as well as ingest.
 */
#include "rebuild.h"

#include <string.h>

#include "dnsnap_format.h"

#define DNS_MSG_MAX 65535u
#define T_OPT       41
#define OPT_EDE     15
#define OPT_UDP     1232

/* Output cursor with a sticky error. */
typedef struct wr {
	uint8_t *p;
	size_t cap;
	size_t n;
	int err;
} wr_t;

static void wr_raw(wr_t *w, const void *src, size_t len)
{
	if (w->err != DNSNAP_OK)
		return;
	if (len > w->cap - w->n) {
		w->err = DNSNAP_ENOSPC;
		return;
	}
	if (len > 0)
		memcpy(w->p + w->n, src, len);
	w->n += len;
}

static void wr_u16(wr_t *w, unsigned v)
{
	uint8_t b[2] = { (uint8_t)(v >> 8), (uint8_t)v };
	wr_raw(w, b, 2);
}

static void wr_u32(wr_t *w, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };
	wr_raw(w, b, 4);
}

static void set_u16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

int rebuild_message(const uint8_t *key, size_t key_len, const uint8_t *entry, size_t entry_len,
		    uint8_t *out, size_t cap, size_t *out_len)
{
	dnsnap_key_t k;
	dnsnap_hdr_t h;
	dnsnap_iter_t it;
	int rc;

	if (key == NULL || entry == NULL || out == NULL || out_len == NULL)
		return DNSNAP_EINVAL;
	if ((rc = dnsnap_key_decode(key, key_len, &k, NULL)) != DNSNAP_OK)
		return rc;
	if ((rc = dnsnap_entry_header(entry, entry_len, &h, NULL)) != DNSNAP_OK)
		return rc;
	if ((rc = dnsnap_iter_init(&it, entry, entry_len, k.name, k.name_len)) != DNSNAP_OK)
		return rc;

	wr_t w = { out, cap, 0, DNSNAP_OK };
	unsigned flags = 0x8000 | dnsnap_hdr_rcode(&h);
	if (h.flags & DNSNAP_EF_AUTH)
		flags |= 0x0020;
	if (k.flags & DNSNAP_KF_CD)
		flags |= 0x0010;
	wr_u16(&w, 0);
	wr_u16(&w, flags);
	wr_u16(&w, 1);
	wr_u16(&w, 0); /* counts, patched below */
	wr_u16(&w, 0);
	wr_u16(&w, 0);
	wr_raw(&w, k.name, k.name_len);
	wr_u16(&w, k.qtype);
	wr_u16(&w, k.qclass);

	unsigned long count[3] = { 0, 0, 0 };
	dnsnap_rr_t rr;
	while ((rc = dnsnap_iter_next(&it, &rr)) == 1) {
		if (rr.section > DNSNAP_SEC_ADDITIONAL || rr.rdlen > 0xffff)
			return DNSNAP_EFIELD;
		count[rr.section]++;
		wr_raw(&w, rr.owner, rr.owner_len);
		wr_u16(&w, rr.type);
		wr_u16(&w, rr.rclass);
		wr_u32(&w, rr.ttl);
		wr_u16(&w, (unsigned)rr.rdlen);
		wr_raw(&w, rr.rdata, rr.rdlen);
	}
	if (rc < 0)
		return rc;

	/* EDE options: one OPT, last */
	size_t opt_len = 0;
	unsigned n_ede = 0;
	dnsnap_ede_t e;
	while ((rc = dnsnap_entry_ede(&h, n_ede, &e)) == 1) {
		if (e.text_len > 0xffff - 2)
			return DNSNAP_ETOOBIG;
		opt_len += 4 + 2 + e.text_len;
		n_ede++;
	}
	if (rc < 0)
		return rc;
	if (n_ede > 0) {
		if (opt_len > 0xffff)
			return DNSNAP_ETOOBIG;
		count[DNSNAP_SEC_ADDITIONAL]++;
		uint8_t root = 0;
		wr_raw(&w, &root, 1);
		wr_u16(&w, T_OPT);
		wr_u16(&w, OPT_UDP);
		wr_u32(&w, 0);
		wr_u16(&w, (unsigned)opt_len);
		for (unsigned i = 0; i < n_ede; i++) {
			rc = dnsnap_entry_ede(&h, i, &e);
			if (rc != 1)
				return rc < 0 ? rc : DNSNAP_EFIELD;
			wr_u16(&w, OPT_EDE);
			wr_u16(&w, (unsigned)(2 + e.text_len));
			wr_u16(&w, e.code);
			wr_raw(&w, e.text, e.text_len);
		}
	}

	for (int s = 0; s < 3; s++)
		if (count[s] > 0xffff)
			return DNSNAP_ETOOBIG;
	if (w.err != DNSNAP_OK)
		return w.err;
	if (w.n > DNS_MSG_MAX)
		return DNSNAP_ETOOBIG;
	set_u16(out + 6, (unsigned)count[0]);
	set_u16(out + 8, (unsigned)count[1]);
	set_u16(out + 10, (unsigned)count[2]);
	*out_len = w.n;
	return DNSNAP_OK;
}
