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
 *
 * The time rule (spec/FORMAT.md, "Times a reader accepts"): every reader of
 * entries from outside the process (the snapshot's lookups, the merge of a
 * publish's base, a stream's import, a shared store's value, verify, info)
 * refuses, as it refuses a damaged entry, one cached more than
 * DNSNAP__SKEW_S in the future or living past the reader's longest TTL
 * (Expiry after now + that TTL + DNSNAP__SKEW_S): dnsnap__entry_when().
 */
#ifndef DNSNAP_EXPIRY_H
#define DNSNAP_EXPIRY_H

#include <stdint.h>
#include <time.h>

#include "byteorder.h"
#include "dnsnap_format.h"

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

/** The clock skew a reader allows an entry's times (seconds): DNSNAP_L2_SKEW_S. */
#define DNSNAP__SKEW_S 300u

enum dnsnap__when {
	DNSNAP__WHEN_OK = 0,     /* its times are ones a writer could have given */
	DNSNAP__WHEN_AHEAD = 1,  /* cached more than DNSNAP__SKEW_S after now */
	DNSNAP__WHEN_LONG = 2,   /* lives past now + the longest TTL + DNSNAP__SKEW_S */
};

/** A reader's TTL policy, as its cache's options give it (0: no cap). */
typedef struct dnsnap__life {
	uint32_t min_ttl, max_ttl, max_neg_ttl;
} dnsnap__life_t;

/** The policy of dnsnap_cache_opts_default(): what readers with no cache use. */
#define DNSNAP__LIFE_DEFAULT ((dnsnap__life_t){ 0, 86400u, 10800u })

/** @p o's policy (dnsnap_cache_opts_t; NULL: the defaults): entry_time.c. */
struct dnsnap_cache_opts;
dnsnap__life_t dnsnap__life_of(const struct dnsnap_cache_opts *o);

/** The longest life @p p gives an entry of @p kind (max_neg_ttl for NXDOMAIN
 * and NODATA, else max_ttl, raised to min_ttl as the cache raises TTLs):
 * UINT64_MAX when that cap is 0 (no bound). */
static inline uint64_t dnsnap__life_max(const dnsnap__life_t *p, unsigned kind)
{
	int negative = kind == DNSNAP_KIND_NXDOMAIN || kind == DNSNAP_KIND_NODATA;
	uint32_t cap = negative ? p->max_neg_ttl : p->max_ttl;
	if (cap == 0)
		return UINT64_MAX;
	return cap > p->min_ttl ? cap : p->min_ttl;
}

/** The later of two times (serial arithmetic): a writer judges the time rule
 * at the later of its own now and the clock, so that a now given in the past
 * (`--now`) never makes it drop entries cached after that now. */
static inline uint32_t dnsnap__later(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0 ? a : b;
}

/** The time rule for an entry (its 16 first bytes: Inception, Expiry, ...,
 * Flags) read at @p now under policy @p p. */
static inline enum dnsnap__when dnsnap__entry_when(const uint8_t *entry, uint32_t now,
						   const dnsnap__life_t *p)
{
	int32_t ahead = (int32_t)(ld32le(entry) - now);
	int32_t left = (int32_t)(ld32le(entry + 4) - now);
	if (ahead > (int32_t)DNSNAP__SKEW_S)
		return DNSNAP__WHEN_AHEAD;
	unsigned kind = (entry[12] & DNSNAP_EF_KIND) >> DNSNAP_EF_KIND_SHIFT;
	uint64_t life = dnsnap__life_max(p, kind);
	if (left > 0 && life != UINT64_MAX && (uint64_t)left > life + DNSNAP__SKEW_S)
		return DNSNAP__WHEN_LONG;
	return DNSNAP__WHEN_OK;
}

/** dnsnap__entry_when() at the later of @p now and the clock, as a lookup
 * judges it; the clock is read only for an entry refused at @p now (the
 * answer path's common case reads none): one that passes at now passes at
 * any later time, cached no further ahead of it and living no longer past it. */
static inline enum dnsnap__when dnsnap__entry_when_late(const uint8_t *entry, uint32_t now,
							const dnsnap__life_t *p)
{
	enum dnsnap__when w = dnsnap__entry_when(entry, now, p);
	if (w != DNSNAP__WHEN_OK) {
		uint32_t clock = (uint32_t)time(NULL);
		if ((int32_t)(clock - now) > 0)
			w = dnsnap__entry_when(entry, clock, p);
	}
	return w;
}

#endif
