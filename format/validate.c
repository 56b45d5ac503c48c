/*
 * validate.c: the deep check of one entry. Everything that reads entries from
 * outside the process (a snapshot, an export stream) runs this before use, so
 * that the readers and the answer builder may trust what they walk.
 */
#include "internal.h"

static int check_ext(const dnsnap_hdr_t *h, size_t base, dnsnap_diag_t *diag)
{
	rd_t r = rd_init(h->ext, h->ext_len);
	while (r.pos < r.len) {
		size_t at = r.pos;
		uint8_t type = rd_u8(&r);
		uint16_t tlen = rd_u16le(&r);
		rd_skip(&r, tlen);
		if (r.err != DNSNAP_OK)
			return dnsnap__diag(diag, DNSNAP_ETRUNC, base + at,
					    "extension at 0x%zx overruns the area", base + at);
		if (type == DNSNAP_EXT_EDE && tlen < 2)
			return dnsnap__diag(diag, DNSNAP_EFIELD, base + at,
					    "EDE extension of %u bytes at 0x%zx", tlen, base + at);
	}
	return DNSNAP_OK;
}

int dnsnap_entry_validate(const uint8_t *entry, size_t len, dnsnap_diag_t *diag)
{
	dnsnap_hdr_t h;
	int err = dnsnap_entry_header(entry, len, &h, diag);
	if (err != DNSNAP_OK)
		return err;
	if (h.ext != NULL) {
		err = check_ext(&h, (size_t)(h.ext - entry), diag);
		if (err != DNSNAP_OK)
			return err;
	}
	unsigned rcode = dnsnap_hdr_rcode(&h), kind = dnsnap_hdr_kind(&h);
	if ((kind == DNSNAP_KIND_NXDOMAIN) != (rcode == RCODE_NXDOMAIN) ||
	    ((kind == DNSNAP_KIND_NODATA || kind == DNSNAP_KIND_REFERRAL) && rcode != 0))
		return dnsnap__diag(diag, DNSNAP_EFIELD, 12, "kind %u with rcode %u", kind, rcode);

	/* Owners are checked by the iterator; an elided owner needs no name here. */
	static const uint8_t root[1] = { 0 };
	dnsnap_iter_t it;
	dnsnap_iter_init(&it, entry, len, root, 1);
	dnsnap_rr_t rr;
	int dnssec = 0, seen_auth = h.auth_off == 0, seen_addl = h.addl_off == 0;
	size_t base = (size_t)(h.records - entry);
	while ((err = dnsnap_iter_next(&it, &rr)) == 1) {
		size_t roff = rr.offset - base;
		seen_auth |= roff == h.auth_off;
		seen_addl |= roff == h.addl_off;
		if (rr.type == TYPE_OPT || rr.type == TYPE_TSIG)
			return dnsnap__diag(diag, DNSNAP_EFIELD, rr.offset + 3,
					    "type %u is never stored, record at 0x%zx", rr.type,
					    rr.offset);
		size_t off;
		err = dnsnap__rdata_check(rr.type, rr.rdata, rr.rdlen, &off);
		if (err != DNSNAP_OK) {
			size_t at = (size_t)(rr.rdata - entry) + off;
			return dnsnap__diag(diag, err, at, "type %u rdata: %s at 0x%zx", rr.type,
					    dnsnap_strerror(err), at);
		}
		dnssec |= dnsnap_type_is_dnssec(rr.type);
	}
	if (err < 0)
		return dnsnap__diag(diag, err, it.err_off, "record: %s at 0x%zx",
				    dnsnap_strerror(err), it.err_off);
	/* Offsets equal to the end are boundaries too (empty trailing sections). */
	if (!seen_auth && h.auth_off != h.records_len)
		return dnsnap__diag(diag, DNSNAP_EFIELD, 14, "Auth_Off %u not on a record boundary",
				    h.auth_off);
	if (!seen_addl && h.addl_off != h.records_len)
		return dnsnap__diag(diag, DNSNAP_EFIELD, 16, "Addl_Off %u not on a record boundary",
				    h.addl_off);
	if (dnssec != !!(h.flags & DNSNAP_EF_DNSSEC))
		return dnsnap__diag(diag, DNSNAP_EFIELD, 12, "DNSSEC flag %s but %s DNSSEC records",
				    dnssec ? "clear" : "set", dnssec ? "has" : "no");
	return DNSNAP_OK;
}
