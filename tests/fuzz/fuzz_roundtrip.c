/*
 * fuzz_roundtrip: message -> dnsnap_msg_encode -> rebuild_message ->
 * dnsnap_msg_encode again; the two keys and entries must be byte-identical.
 *
 * Why nothing may legitimately differ (see tests/helpers/rebuild.h):
 *  - Inception/Expiry: same `now`; Hits: 0 both times.
 *  - Key: the rebuilt question is the key's name (lower case), and the key is
 *    lower case anyway; CD comes back from the key's flags; the tag is passed
 *    again.
 *  - Owners: the rebuilt message spells every owner as the iterator resolves
 *    it (elided ones as the lower-cased query name, REF/TARGET ones as the
 *    name referred to). All owner comparisons of ingest (QNAME, TARGET, REF,
 *    SAME) ignore ASCII case, and a respelling is equal ignoring case, so
 *    every decision comes out the same; NAME owners keep their bytes.
 *  - TTLs over 2^31-1 were stored as 0 and come back as 0.
 *  - Rdata: names were expanded and stay expanded; other rdata is verbatim.
 *  - What ingest drops (ID, other header bits, OPT fields and non-EDE
 *    options, TSIG, trailing bytes, compression) is not in either entry; EDE
 *    options come back in order in one OPT.
 *  - Extended RCODE (the OPT TTL's upper 8 bits): the entry keeps the 4-bit
 *    header RCODE only, so a rebuilt message could not carry it (BADVERS = 16
 *    has low bits 0). Ingest refuses such responses (DNSNAP_ENOTCACHE at the
 *    OPT record), so no accepted input carries one. Should ingest ever accept
 *    them, this target would have to skip them: they cannot round-trip.
 * A rebuilt message over 65535 bytes (the DNS limit; compression can make the
 * expanded form much longer than the input) is skipped.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dnsnap_format.h"
#include "../helpers/rebuild.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NOW 1700000000u

static dnsnap_encoded_t first, second; /* large: static */
static uint8_t rebuilt[1u << 17];

static void die(const char *what, int rc, const dnsnap_diag_t *d)
{
	const char *name = dnsnap_errname(rc);
	fprintf(stderr, "fuzz_roundtrip: %s: %s (%d) at %zu: %.128s\n", what, name ? name : "?",
		rc, d ? d->offset : 0, d ? d->msg : "");
	abort();
}

static void dump(const char *label, const uint8_t *p, size_t n)
{
	fprintf(stderr, "%s (%zu bytes):", label, n);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%s%02x", i % 16 ? " " : "\n  ", p[i]);
	fprintf(stderr, "\n");
}

static void differ(const char *what, const uint8_t *a, size_t an, const uint8_t *b, size_t bn,
		   const uint8_t *msg, size_t msg_len)
{
	size_t i = 0;
	while (i < an && i < bn && a[i] == b[i])
		i++;
	fprintf(stderr, "fuzz_roundtrip: %s differ at byte %zu\n", what, i);
	dump("first", a, an);
	dump("second", b, bn);
	dump("rebuilt message", msg, msg_len);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (data == NULL)
		return 0;
	if (dnsnap_msg_encode(data, size, NOW, NULL, 0, &first, NULL) != DNSNAP_OK)
		return 0;

	size_t n = 0;
	int rc = rebuild_message(first.key, first.key_len, first.entry, first.entry_len, rebuilt,
				 sizeof rebuilt, &n);
	if (rc == DNSNAP_ETOOBIG)
		return 0;
	if (rc != DNSNAP_OK)
		die("rebuilding from an accepted message", rc, NULL);

	dnsnap_key_t k;
	if ((rc = dnsnap_key_decode(first.key, first.key_len, &k, NULL)) != DNSNAP_OK)
		die("key of an accepted message", rc, NULL);

	/* exact-size copy: ASan catches reads past the rebuilt message */
	uint8_t *msg = malloc(n);
	if (msg == NULL)
		abort();
	memcpy(msg, rebuilt, n);
	dnsnap_diag_t d = { 0 };
	rc = dnsnap_msg_encode(msg, n, NOW, k.tag, k.tag_len, &second, &d);
	if (rc != DNSNAP_OK) {
		dump("rebuilt message", msg, n);
		die("encoding the rebuilt message", rc, &d);
	}
	if (first.key_len != second.key_len || memcmp(first.key, second.key, first.key_len) != 0)
		differ("keys", first.key, first.key_len, second.key, second.key_len, msg, n);
	if (first.entry_len != second.entry_len ||
	    memcmp(first.entry, second.entry, first.entry_len) != 0)
		differ("entries", first.entry, first.entry_len, second.entry, second.entry_len, msg,
		       n);
	if (first.ttl != second.ttl)
		die("entry TTLs differ", 0, NULL);
	free(msg);
	return 0;
}
