/*
 * keep.c: which of two entries for one key a cache keeps (spec/DECISIONS.md,
 * "The keep rule"). dnsnap_cache_insert() and dnsnap_snap_merge() ask it.
 *
 * An entry with DNSSEC records answers DO=0 clients too (the answer builder
 * strips them); one without cannot answer a DO=1 client properly (AD with no
 * RRSIG, which a validator rejects). So a live entry with DNSSEC records is
 * not replaced by a newer one that only lacks them: same RCODE and kind, the
 * same answer and authority records apart from RRSIG, NSEC, NSEC3 and (in
 * authority) DS, which an authority sends only with DO. Any other difference
 * means the newer response replaces the data itself: it wins. TTLs and the
 * additional section (glue, addresses: advisory) do not count as data.
 */
#include <string.h>

#include "../format/internal.h"
#include "cache_internal.h"
#include "expiry.h"

/* The records that make an entry's data: not the DNSSEC ones, not additional. */
static int is_data(const dnsnap_rr_t *rr)
{
	if (rr->section == DNSNAP_SEC_ADDITIONAL || dnsnap_type_is_dnssec(rr->type))
		return 0;
	return !(rr->section == DNSNAP_SEC_AUTHORITY && rr->type == 43); /* DS */
}

static int same_rr(const dnsnap_rr_t *a, const dnsnap_rr_t *b)
{
	return a->section == b->section && a->type == b->type && a->rclass == b->rclass &&
	       a->rdlen == b->rdlen && dnsnap_name_eq(a->owner, a->owner_len, b->owner, b->owner_len) &&
	       memcmp(a->rdata, b->rdata, a->rdlen) == 0;
}

/* Both entries share a key: their elided owners are one name, spelled here as
 * the root for both. */
static const uint8_t qname[1] = { 0 };

/* An iterator over a trusted entry, its Hits field not read: a cache
 * entry's is its live counter, which lookups count meanwhile. */
static void iter_trusted(dnsnap_iter_t *it, const uint8_t *e, size_t len)
{
	dnsnap_hdr_t h;
	dnsnap__hdr_trusted(e, len, &h);
	dnsnap__iter_start(it, e, len, &h, qname, sizeof qname);
}

/* How many data records of @p e equal @p rr; -1 when @p e cannot be read. */
static long count_in(const uint8_t *e, size_t len, const dnsnap_rr_t *rr)
{
	dnsnap_iter_t it;
	dnsnap_rr_t x;
	long n = 0;
	int r;
	iter_trusted(&it, e, len);
	while ((r = dnsnap_iter_next(&it, &x)) == 1)
		n += is_data(&x) && same_rr(&x, rr);
	return r == 0 ? n : -1;
}

/* Whether @p a and @p b hold the same data records, as multisets: each record
 * of @p a occurs as often in both (and both have as many). Entries are small
 * (at most 64 KiB, a few records): the quadratic walk costs nothing. */
static int same_data(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	dnsnap_iter_t it;
	dnsnap_rr_t rr;
	long na = 0, nb = 0;
	int r;
	iter_trusted(&it, b, blen);
	while ((r = dnsnap_iter_next(&it, &rr)) == 1)
		nb += is_data(&rr);
	if (r != 0)
		return 0;
	iter_trusted(&it, a, alen);
	while ((r = dnsnap_iter_next(&it, &rr)) == 1) {
		if (!is_data(&rr))
			continue;
		na++;
		long in_a = count_in(a, alen, &rr), in_b = count_in(b, blen, &rr);
		if (in_a < 0 || in_a != in_b)
			return 0;
	}
	return r == 0 && na == nb;
}

int dnsnap__keep_older(const uint8_t *older, size_t older_len, const uint8_t *newer,
		       size_t newer_len)
{
	/* the usual refresh (no DNSSEC records in the older, or some in the newer)
	 * is told by the Flags at byte 12 alone: under the shard's write lock */
	if (older_len < 14 || newer_len < 14 || !(ld16le(older + 12) & DNSNAP_EF_DNSSEC) ||
	    (ld16le(newer + 12) & DNSNAP_EF_DNSSEC))
		return 0;
	dnsnap_hdr_t o, n;
	dnsnap__hdr_trusted(older, older_len, &o);
	dnsnap__hdr_trusted(newer, newer_len, &n);
	/* the older must still be live when the newer arrives */
	if (dnsnap__expiry_state(o.expiry, n.inception, 0) != DNSNAP__FRESH)
		return 0;
	if (dnsnap_hdr_rcode(&o) != dnsnap_hdr_rcode(&n) || dnsnap_hdr_kind(&o) != dnsnap_hdr_kind(&n))
		return 0;
	return same_data(older, older_len, newer, newer_len);
}
