/*
 * entry_time.c: the time rule as a public check (dnsnap_entry_check_time()),
 * with the message a refusal gives: for readers outside the engine (the
 * CLI's verify and info) and the shared store's acceptance (l2value.c). The
 * rule itself is engine/expiry.h's dnsnap__entry_when(), which the engine's
 * own readers (lookups, the merge, the import) call.
 */
#include "../format/internal.h"
#include "dnsnap.h"
#include "expiry.h"

dnsnap__life_t dnsnap__life_of(const dnsnap_cache_opts_t *o)
{
	if (o == NULL)
		return DNSNAP__LIFE_DEFAULT;
	return (dnsnap__life_t){ o->min_ttl, o->max_ttl, o->max_neg_ttl };
}

int dnsnap_entry_check_time(const uint8_t *entry, size_t len, const dnsnap_cache_opts_t *o,
			    uint32_t now, dnsnap_diag_t *d)
{
	if (entry == NULL)
		return DNSNAP_EINVAL;
	if (len < DNSNAP_ENTRY_HDR)
		return dnsnap__diag(d, DNSNAP_ETRUNC, len, "a %zu-byte entry: shorter than its "
				    "header", len);
	dnsnap__life_t p = dnsnap__life_of(o);
	unsigned kind = (entry[12] & DNSNAP_EF_KIND) >> DNSNAP_EF_KIND_SHIFT;
	int negative = kind == DNSNAP_KIND_NXDOMAIN || kind == DNSNAP_KIND_NODATA;
	switch (dnsnap__entry_when(entry, now, &p)) {
	case DNSNAP__WHEN_AHEAD:
		return dnsnap__diag(d, DNSNAP_EFIELD, 0, "cached %d s in the future (a clock "
				    "ahead?)", (int)(int32_t)(ld32le(entry) - now));
	case DNSNAP__WHEN_LONG:
		return dnsnap__diag(d, DNSNAP_EFIELD, 4, "lives %d s more: longer than the "
				    "cache's longest %s (%llu s)",
				    (int)(int32_t)(ld32le(entry + 4) - now),
				    negative ? "negative TTL" : "TTL",
				    (unsigned long long)dnsnap__life_max(&p, kind));
	default:
		return DNSNAP_OK;
	}
}
