/*
 * fuzz_msg_encode: arbitrary bytes as a DNS response.
 *
 * dnsnap_msg_encode() must not crash, must report a known code with an offset
 * inside the message, and whatever it accepts must be a valid key and entry:
 * dnsnap_key_decode() and dnsnap_entry_validate() succeed, every record can
 * be iterated, every EDE option read, and the header agrees with the result.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dnsnap_format.h"
#include "guard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NOW 1700000000u

static dnsnap_encoded_t enc; /* large: static */

static void die(const char *what, int rc, const dnsnap_diag_t *d)
{
	const char *name = dnsnap_errname(rc);
	fprintf(stderr, "fuzz_msg_encode: %s: %s (%d) at %zu: %.128s\n", what,
		name ? name : "?", rc, d ? d->offset : 0, d ? d->msg : "");
	abort();
}

static void check_accepted(const uint8_t *msg, size_t size)
{
	dnsnap_diag_t d = { 0 };
	int rc;

	if (enc.key_len == 0 || enc.key_len > DNSNAP_KEY_MAX)
		die("key length out of range", 0, NULL);
	if (enc.entry_len < DNSNAP_ENTRY_HDR || enc.entry_len > DNSNAP_ENTRY_MAX)
		die("entry length out of range", 0, NULL);
	if (enc.ttl > DNSNAP_TTL_MAX)
		die("entry TTL over 2^31-1", 0, NULL);
	if ((size_t)enc.qname_off + enc.qname_len > size || enc.qname_off != 12)
		die("question name outside the message", 0, NULL);

	uint8_t *key = heap_copy(enc.key, enc.key_len);
	uint8_t *entry = heap_copy(enc.entry, enc.entry_len);

	dnsnap_key_t k;
	if ((rc = dnsnap_key_decode(key, enc.key_len, &k, &d)) != DNSNAP_OK)
		die("key of an accepted message does not decode", rc, &d);
	if (!dnsnap_name_eq(k.name, k.name_len, msg + enc.qname_off, enc.qname_len))
		die("key name differs from the question name", 0, NULL);
	if ((rc = dnsnap_entry_validate(entry, enc.entry_len, &d)) != DNSNAP_OK)
		die("entry of an accepted message does not validate", rc, &d);

	dnsnap_hdr_t h;
	if ((rc = dnsnap_entry_header(entry, enc.entry_len, &h, &d)) != DNSNAP_OK)
		die("header of a valid entry", rc, &d);
	if (h.inception != NOW || h.expiry - h.inception != enc.ttl || h.hits != 0)
		die("Inception/Expiry/Hits do not match", 0, NULL);
	if (h.flags & (DNSNAP_EF_RESERVED | DNSNAP_EF_MINOR))
		die("1.0 writer set reserved or minor flag bits", 0, NULL);

	dnsnap_iter_t it;
	if ((rc = dnsnap_iter_init(&it, entry, enc.entry_len, k.name, k.name_len)) != DNSNAP_OK)
		die("iter_init on a valid entry", rc, NULL);
	dnsnap_rr_t rr;
	unsigned n = 0, last_section = 0;
	int dnssec = 0;
	while ((rc = dnsnap_iter_next(&it, &rr)) == 1) {
		if (rr.index != n || rr.section < last_section ||
		    rr.section > DNSNAP_SEC_ADDITIONAL)
			die("record index or section out of order", 0, NULL);
		last_section = rr.section;
		if (dnsnap_name_len(rr.owner, rr.owner_len) != (int)rr.owner_len)
			die("owner is not a valid name", 0, NULL);
		if (rr.type == 41 || rr.type == 250)
			die("OPT or TSIG stored", 0, NULL);
		if (rr.ttl > DNSNAP_TTL_MAX)
			die("TTL over 2^31-1 stored", 0, NULL);
		if (rr.rdlen > 0 &&
		    (rr.rdata < entry || rr.rdata + rr.rdlen > entry + enc.entry_len))
			die("rdata outside the entry", 0, NULL);
		dnssec |= dnsnap_type_is_dnssec(rr.type);
		n++;
	}
	if (rc != 0)
		die("iterating a valid entry", rc, NULL);
	if (!!(h.flags & DNSNAP_EF_DNSSEC) != dnssec)
		die("DNSSEC flag disagrees with the records", 0, NULL);

	dnsnap_ede_t e;
	unsigned i = 0;
	while ((rc = dnsnap_entry_ede(&h, i, &e)) == 1) {
		if (e.text_len > 0 &&
		    (e.text < entry || e.text + e.text_len > entry + enc.entry_len))
			die("EDE text outside the entry", 0, NULL);
		i++;
	}
	if (rc != 0)
		die("reading EDE options of a valid entry", rc, NULL);
	if (!!(h.flags & DNSNAP_EF_EXT) != (h.ext != NULL))
		die("EXT flag disagrees with the header", 0, NULL);

	free(key);
	free(entry);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (data == NULL)
		return 0;
	dnsnap_diag_t d = { 0 };
	int rc = dnsnap_msg_encode(data, size, NOW, NULL, 0, &enc, &d);
	if (rc != DNSNAP_OK) {
		if (rc > 0 || dnsnap_errname(rc) == NULL)
			die("unknown return code", rc, &d);
		if (rc == DNSNAP_EINVAL || rc == DNSNAP_ENOMEM || rc == DNSNAP_ENOSPC)
			die("caller error for a well-formed call", rc, &d);
		if (d.offset > size)
			die("diag offset past the message", rc, &d);
		return 0;
	}
	check_accepted(data, size);
	return 0;
}
