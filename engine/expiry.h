/*
 * expiry.h: whether an entry answers at a given time, in one place: fresh,
 * stale but servable (RFC 8767), or dead. The cache's lookup and eviction,
 * the lower tier's answer (tier.c, dnsnap_snap_answer()), the snapshot
 * writers' live test (the cache's copy, the merge, the import) and the keep
 * rule all ask it. Not installed.
 *
 * Times are Unix seconds mod 2^32 compared with serial arithmetic
 * (spec/FORMAT.md, "Inception and Expiry"): an entry is fresh while
 * (int32_t)(Expiry - now) > 0. An expired entry is servable stale while it
 * expired less than stale_window seconds ago (0 at the instant of expiry):
 * with stale_window 0 nothing expired is.
 */
#ifndef DNSNAP_EXPIRY_H
#define DNSNAP_EXPIRY_H

#include <stdint.h>

#include "byteorder.h"

enum dnsnap__expiry {
	DNSNAP__FRESH = 0,       /* answers as it is */
	DNSNAP__STALE = 1,       /* expired, within the stale window */
	DNSNAP__DEAD = 2,        /* expired, past the window (or no entry) */
};

/** RFC 8767 section 5: a stale window of at most 7 days. */
#define DNSNAP__STALE_WINDOW_MAX 604800u

static inline enum dnsnap__expiry dnsnap__expiry_state(uint32_t expiry, uint32_t now,
						       uint32_t stale_window)
{
	int32_t left = (int32_t)(expiry - now);
	if (left > 0)
		return DNSNAP__FRESH;
	return -(int64_t)left < (int64_t)stale_window ? DNSNAP__STALE : DNSNAP__DEAD;
}

/** The state of an entry (at least its 8 first bytes: Inception, Expiry). */
static inline enum dnsnap__expiry dnsnap__entry_state(const uint8_t *entry, uint32_t now,
						      uint32_t stale_window)
{
	return dnsnap__expiry_state(ld32le(entry + 4), now, stale_window);
}

/** Whether an entry is live (fresh) at @p now: what snapshots keep. */
static inline int dnsnap__entry_live(const uint8_t *entry, uint32_t now)
{
	return dnsnap__entry_state(entry, now, 0) == DNSNAP__FRESH;
}

#endif
