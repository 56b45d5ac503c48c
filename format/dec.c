/*
 * dec.c: allocation-free readers over an entry: the header, the records
 * (owners restored), the extended DNS errors.
 */
#include "internal.h"

int dnsnap_entry_header(const uint8_t *entry, size_t len, dnsnap_hdr_t *out, dnsnap_diag_t *diag)
{
	if (entry == NULL || out == NULL)
		return dnsnap__diag(diag, DNSNAP_EINVAL, 0, "invalid argument");
	rd_t r = rd_init(entry, len);
	dnsnap_hdr_t h;
	h.inception = rd_u32le(&r);
	h.expiry = rd_u32le(&r);
	h.hits = rd_u32le(&r);
	h.flags = rd_u16le(&r);
	h.auth_off = rd_u16le(&r);
	h.addl_off = rd_u16le(&r);
	h.ext = NULL;
	h.ext_len = 0;
	if (r.err != DNSNAP_OK)
		return dnsnap__diag(diag, r.err, r.err_off, "entry header cut at 0x%zx", r.err_off);
	if (h.flags & DNSNAP_EF_RESERVED)
		return dnsnap__diag(diag, DNSNAP_ERESERVED, 12, "reserved entry flags 0x%04x",
				    h.flags & DNSNAP_EF_RESERVED);
	if (h.flags & DNSNAP_EF_EXT) {
		size_t at = r.pos;
		h.ext_len = rd_u16le(&r);
		h.ext = rd_skip(&r, h.ext_len);
		if (r.err != DNSNAP_OK)
			return dnsnap__diag(diag, r.err, at, "extension area cut at 0x%zx", at);
		if (h.ext_len == 0)
			return dnsnap__diag(diag, DNSNAP_EFIELD, at, "empty extension area at 0x%zx",
					    at);
	}
	h.records = entry + r.pos;
	h.records_len = len - r.pos;
	if (h.records_len > DNSNAP_RECORDS_MAX)
		return dnsnap__diag(diag, DNSNAP_ETOOBIG, r.pos, "records of %zu bytes, over %d",
				    h.records_len, DNSNAP_RECORDS_MAX);
	if (h.addl_off > h.records_len)
		return dnsnap__diag(diag, DNSNAP_EFIELD, 16, "Addl_Off %u past the records' %zu bytes",
				    h.addl_off, h.records_len);
	if (h.auth_off > h.addl_off)
		return dnsnap__diag(diag, DNSNAP_EFIELD, 14, "Auth_Off %u after Addl_Off %u",
				    h.auth_off, h.addl_off);
	if ((int32_t)(h.expiry - h.inception) < 0)
		return dnsnap__diag(diag, DNSNAP_EFIELD, 4, "expiry before inception");
	*out = h;
	return DNSNAP_OK;
}

int dnsnap_entry_ede(const dnsnap_hdr_t *h, unsigned n, dnsnap_ede_t *out)
{
	if (h == NULL || out == NULL)
		return DNSNAP_EINVAL;
	rd_t r = rd_init(h->ext, h->ext ? h->ext_len : 0);
	while (r.pos < r.len) {
		uint8_t type = rd_u8(&r);
		uint16_t tlen = rd_u16le(&r);
		const uint8_t *v = rd_skip(&r, tlen);
		if (r.err != DNSNAP_OK)
			return r.err;
		if (type != DNSNAP_EXT_EDE)
			continue; /* skippable: a later minor version's */
		if (tlen < 2)
			return DNSNAP_EFIELD;
		if (n-- == 0) {
			out->code = ld16be(v);
			out->text = v + 2;
			out->text_len = tlen - 2u;
			return 1;
		}
	}
	return 0;
}

void dnsnap__iter_start(dnsnap_iter_t *it, const uint8_t *entry, size_t len,
			const dnsnap_hdr_t *h, const uint8_t *qname, size_t qname_len)
{
	it->entry = entry;
	it->len = len;
	it->rec = h->records;
	it->rec_len = h->records_len;
	it->pos = 0;
	it->auth_off = h->auth_off;
	it->addl_off = h->addl_off;
	it->qname = qname;
	it->qname_len = qname_len;
	it->n = 0;
	it->err = DNSNAP_OK;
	it->err_off = 0;
}

int dnsnap_iter_init(dnsnap_iter_t *it, const uint8_t *entry, size_t len, const uint8_t *qname,
		     size_t qname_len)
{
	if (it == NULL || qname == NULL)
		return DNSNAP_EINVAL;
	dnsnap_hdr_t h;
	int err = dnsnap_entry_header(entry, len, &h, NULL);
	if (err != DNSNAP_OK)
		return err;
	dnsnap__iter_start(it, entry, len, &h, qname, qname_len);
	return DNSNAP_OK;
}

static int iter_fail(dnsnap_iter_t *it, int err, size_t rec_off)
{
	it->err = err;
	it->err_off = (size_t)(it->rec - it->entry) + rec_off;
	return err;
}

int dnsnap_iter_next(dnsnap_iter_t *it, dnsnap_rr_t *rr)
{
	if (it->err != DNSNAP_OK)
		return it->err;
	if (it->pos >= it->rec_len)
		return 0;
	size_t start = it->pos;
	rd_t r = rd_init(it->rec, it->rec_len);
	r.pos = start;
	uint16_t rlen = rd_u16le(&r);
	/* a length that overruns, or leaves no room for Rec_Flags: at the length */
	if (r.err != DNSNAP_OK || it->rec_len - r.pos < rlen || rlen == 0)
		return iter_fail(it, DNSNAP_ETRUNC, start);
	size_t end = r.pos + rlen;
	r.len = end; /* the record's bytes only */
	uint8_t flags = rd_u8(&r);
	dnsnap_rr_t o;
	unsigned sec = start < it->auth_off ? DNSNAP_SEC_ANSWER
		       : start < it->addl_off ? DNSNAP_SEC_AUTHORITY : DNSNAP_SEC_ADDITIONAL;
	uint16_t own = OWN_QNAME, tgt = OWN_NONE;
	if (flags & DNSNAP_RF_RESERVED)
		return iter_fail(it, DNSNAP_ERESERVED, start + 2);
	if (flags & DNSNAP_RF_SAME) {
		if (it->n == 0 || (flags & (DNSNAP_RF_OWNER | DNSNAP_RF_CLASS)) ||
		    it->prev.section != sec)
			return iter_fail(it, DNSNAP_EFIELD, start + 2);
		o = it->prev;
		own = it->n - 1 < DNSNAP_OWNER_REFS ? it->own[it->n - 1] : OWN_NONE;
	} else {
		o.type = rd_u16le(&r);
		o.rclass = CLASS_IN;
		if (flags & DNSNAP_RF_CLASS) {
			o.rclass = rd_u16le(&r);
			if (o.rclass == CLASS_IN)
				return iter_fail(it, DNSNAP_EFIELD, start + 5);
		}
		o.ttl = rd_u32le(&r);
		if (r.err != DNSNAP_OK)
			return iter_fail(it, r.err, r.err_off);
		if (o.ttl > DNSNAP_TTL_MAX)
			return iter_fail(it, DNSNAP_EFIELD, r.pos - 4);
		o.owner_mode = flags & DNSNAP_RF_OWNER;
		switch (o.owner_mode) {
		case DNSNAP_OWNER_QNAME:
			o.owner = it->qname;
			o.owner_len = it->qname_len;
			break;
		case DNSNAP_OWNER_REF:
		case DNSNAP_OWNER_TARGET: {
			size_t at = r.pos;
			uint8_t k = rd_u8(&r);
			if (r.err != DNSNAP_OK)
				return iter_fail(it, r.err, r.err_off);
			if (k >= it->n || k >= DNSNAP_OWNER_REFS)
				return iter_fail(it, DNSNAP_EFIELD, at);
			own = o.owner_mode == DNSNAP_OWNER_REF ? it->own[k] : it->tgt[k];
			if (own == OWN_QNAME || own == OWN_NONE)
				return iter_fail(it, DNSNAP_EFIELD, at);
			o.owner = it->rec + own;
			o.owner_len = (size_t)dnsnap_name_len(o.owner, it->rec_len - own);
			break;
		}
		default: {
			size_t off;
			int n = dnsnap__name_check(r.p + r.pos, end - r.pos, &off);
			if (n < 0)
				return iter_fail(it, n, r.pos + off);
			own = (uint16_t)r.pos;
			o.owner = r.p + r.pos;
			o.owner_len = (size_t)n;
			r.pos += (size_t)n;
		}
		}
	}
	o.rdata = r.p + r.pos;
	o.rdlen = end - r.pos;
	o.section = sec;
	o.index = it->n;
	o.offset = (size_t)(it->rec - it->entry) + start;
	if (type_is_target(o.type) && dnsnap_name_len(o.rdata, o.rdlen) == (int)o.rdlen)
		tgt = (uint16_t)(o.rdata - it->rec);
	if (it->n < DNSNAP_OWNER_REFS) {
		it->own[it->n] = own;
		it->tgt[it->n] = tgt;
	}
	it->prev = o;
	it->n++;
	it->pos = end;
	*rr = o;
	return 1;
}

int dnsnap__iter_same(dnsnap_iter_t *it)
{
	if (it->err != DNSNAP_OK)
		return it->err;
	const dnsnap_rr_t *prev = &it->prev;
	int target = type_is_target(prev->type);
	int n = 0;
	while (it->n > 0 && it->rec_len - it->pos >= 3) {
		size_t start = it->pos;
		size_t rlen = ld16le(it->rec + start);
		uint8_t flags = it->rec[start + 2];
		if (!(flags & DNSNAP_RF_SAME))
			break;
		unsigned sec = start < it->auth_off ? DNSNAP_SEC_ANSWER
			       : start < it->addl_off ? DNSNAP_SEC_AUTHORITY : DNSNAP_SEC_ADDITIONAL;
		if (it->rec_len - start - 2 < rlen || rlen == 0 || flags != DNSNAP_RF_SAME ||
		    sec != prev->section) {
			/* anything unusual: the full reader, with its errors */
			dnsnap_rr_t rr;
			int rc = dnsnap_iter_next(it, &rr);
			if (rc < 0)
				return rc;
			n++;
			continue;
		}
		if (it->n < DNSNAP_OWNER_REFS) {
			uint16_t tgt = OWN_NONE;
			size_t rd = start + 3;
			if (target && dnsnap_name_len(it->rec + rd, rlen - 1) == (int)(rlen - 1))
				tgt = (uint16_t)rd;
			it->own[it->n] = it->own[it->n - 1];
			it->tgt[it->n] = tgt;
		}
		it->n++;
		it->pos = start + 2 + rlen;
		n++;
	}
	return n;
}
