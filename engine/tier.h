/*
 * tier.h: answering from a lower tier (dnsnap_tier_ops_t), shared by the
 * cache's lookup (cache.c) and dnsnap_snap_answer() (snap_read.c), so that
 * neither depends on the other. Not installed.
 */
#ifndef DNSNAP_TIER_H
#define DNSNAP_TIER_H

#include <stdatomic.h>
#include <string.h>

#include "dnsnap.h"
#include "expiry.h"

/* dnsnap_cache_opts_default()'s max_ttl, which dnsnap_snap_answer() serves with too. */
#define DNSNAP__MAX_TTL_DEFAULT 86400u

/*
 * The key of the CD=0 entry a CD=1 query may be answered from: the query's
 * key with its CD flag cleared, into @p buf (DNSNAP_KEY_MAX bytes, the
 * caller's stack). The key's Flags byte follows Name, Qtype and Qclass
 * (spec/FORMAT.md, "Key"), at N + 4 where N is the name's wire length, the
 * query name's. @return the key's length, or 0 when @p q is not CD=1
 */
static inline size_t dnsnap__key_cd0(const dnsnap_query_t *q, uint8_t *buf)
{
	size_t at = q->qname_len + 4;
	if (q->key_len < at + 2 || q->key_len > DNSNAP_KEY_MAX || !(q->key[at] & DNSNAP_KF_CD))
		return 0;
	memcpy(buf, q->key, q->key_len);
	buf[at] &= (uint8_t)~DNSNAP_KF_CD;
	return q->key_len;
}

/*
 * Answer @p q from the entry under @p key in a lower tier, read into a
 * per-thread buffer: when it is fresh at ao->now, or stale within
 * @p stale_window and @p allow_stale, and its times pass the time rule under
 * @p life (dnsnap__entry_when(); a refusal adds 1 to *@p refused, which may
 * be NULL). Sets ao->stale (and ao->rotate to 0: a
 * lower tier has no live counters) for the answer built, and *state to the
 * entry's dnsnap__expiry (DNSNAP__DEAD when there is none). Allocation-free.
 * @return DNSNAP_OK, DNSNAP_ENOTFOUND, or dnsnap_answer_build()'s error
 */
/*
 * dnsnap_answer_build() for an entry the cache encoded (dnsnap_msg_encode())
 * or validated (dnsnap_entry_validate()) on its way in: the header and the
 * records are read without the checks an untrusted entry needs, and the
 * Hits field is not read (the cache's live counter). Never for bytes from a
 * snapshot, a stream or a shared store: those are untrusted on every read.
 */
int dnsnap__answer_trusted(const dnsnap_query_t *q, const uint8_t *entry, size_t entry_len,
			   const dnsnap_answer_opts_t *o, uint8_t *out, size_t cap, size_t *out_len);

int dnsnap__tier_answer(const dnsnap_tier_ops_t *ops, void *tier, const uint8_t *key,
			size_t key_len, const dnsnap_query_t *q, dnsnap_answer_opts_t *ao,
			uint32_t stale_window, int allow_stale, const dnsnap__life_t *life,
			_Atomic uint64_t *refused, uint8_t *out, size_t cap, size_t *out_len,
			enum dnsnap__expiry *state);

#endif
