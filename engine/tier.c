/*
 * tier.c: an answer from a lower tier's copy of an entry (engine/tier.h).
 * The entry is copied out of the tier (get() checks it, as the
 * dnsnap_tier_ops_t contract asks), into one buffer per thread: an entry may
 * be 131 KB, too large for the stack of a resolver's worker, and the answer
 * path allocates nothing.
 */
#include "tier.h"

static _Thread_local uint8_t tl_entry[DNSNAP_ENTRY_MAX];

int dnsnap__tier_answer(const dnsnap_tier_ops_t *ops, void *tier, const uint8_t *key,
			size_t key_len, const dnsnap_query_t *q, dnsnap_answer_opts_t *ao,
			uint32_t stale_window, int allow_stale, uint8_t *out, size_t cap,
			size_t *out_len, enum dnsnap__expiry *state)
{
	*state = DNSNAP__DEAD;
	if (ops == NULL || ops->get == NULL)
		return DNSNAP_ENOTFOUND;
	size_t len = 0;
	/* Anything but DNSNAP_OK is a miss: a shared store that cannot be
	 * reached is one too, and the resolver asks upstream. */
	if (ops->get(tier, key, key_len, tl_entry, sizeof tl_entry, &len) != DNSNAP_OK ||
	    len < DNSNAP_ENTRY_HDR || len > sizeof tl_entry)
		return DNSNAP_ENOTFOUND;
	*state = dnsnap__entry_state(tl_entry, ao->now, stale_window);
	if (*state == DNSNAP__DEAD || (*state == DNSNAP__STALE && !allow_stale))
		return DNSNAP_ENOTFOUND;
	ao->rotate = 0;
	ao->stale = *state == DNSNAP__STALE;
	return dnsnap_answer_build(q, tl_entry, len, ao, out, cap, out_len);
}
