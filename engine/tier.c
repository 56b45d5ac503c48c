/*
 * tier.c: an answer from a lower tier's copy of an entry (engine/tier.h).
 * The entry is copied out of the tier (get() checks it, as the
 * dnsnap_tier_ops_t contract asks), into one buffer per thread: an entry may
 * be 131 KB, too large for the stack of a resolver's worker, and the answer
 * path allocates nothing but that buffer, once per thread, at its first
 * lower-tier lookup. Not a static thread-local array: the C library zeroes
 * those for every thread the process starts, whether it ever looks up or not
 * (131 KB, 32 page faults each: most of `dnsnap serve`'s start, item 5 of
 * the performance round); a buffer from the allocator is faulted in only
 * where an entry is copied, a page or two.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "alloc.h"
#include "tier.h"

static pthread_key_t tl_key;
static pthread_once_t tl_once = PTHREAD_ONCE_INIT;
static int tl_ok;
static _Thread_local uint8_t *tl_buf;

static void tl_free(void *p)
{
	dnsnap_free(p);
}

static void tl_init(void)
{
	tl_ok = pthread_key_create(&tl_key, tl_free) == 0;
}

/* This thread's buffer for an entry (DNSNAP_ENTRY_MAX bytes), NULL when it
 * cannot be had: freed when the thread ends. */
static uint8_t *thread_buffer(void)
{
	if (tl_buf != NULL)
		return tl_buf;
	pthread_once(&tl_once, tl_init);
	uint8_t *b = tl_ok ? dnsnap_malloc(DNSNAP_ENTRY_MAX) : NULL;
	if (b != NULL && pthread_setspecific(tl_key, b) != 0) {
		dnsnap_free(b);
		b = NULL;
	}
	return tl_buf = b;
}

int dnsnap__tier_answer(const dnsnap_tier_ops_t *ops, void *tier, const uint8_t *key,
			size_t key_len, const dnsnap_query_t *q, dnsnap_answer_opts_t *ao,
			uint32_t stale_window, int allow_stale, const dnsnap__life_t *life,
			_Atomic uint64_t *refused, uint8_t *out, size_t cap, size_t *out_len,
			enum dnsnap__expiry *state)
{
	*state = DNSNAP__DEAD;
	if (ops == NULL || ops->get == NULL)
		return DNSNAP_ENOTFOUND;
	size_t len = 0;
	uint8_t *buf = thread_buffer();
	/* Anything but DNSNAP_OK is a miss: a shared store that cannot be
	 * reached is one too, and the resolver asks upstream. */
	if (buf == NULL ||
	    ops->get(tier, key, key_len, buf, DNSNAP_ENTRY_MAX, &len) != DNSNAP_OK ||
	    len < DNSNAP_ENTRY_HDR || len > DNSNAP_ENTRY_MAX)
		return DNSNAP_ENOTFOUND;
	/* the time rule: an entry cached in the future, or living past the
	 * policy's longest TTL, is refused as a damaged one is; judged at the
	 * later of the lookup's now and the clock (a server at a fixed --now in
	 * the past serves what was cached after it) */
	if (dnsnap__entry_when_late(buf, ao->now, life) != DNSNAP__WHEN_OK) {
		if (refused != NULL)
			atomic_fetch_add_explicit(refused, 1, memory_order_relaxed);
		return DNSNAP_ENOTFOUND;
	}
	*state = dnsnap__entry_state(buf, ao->now, stale_window);
	if (*state == DNSNAP__DEAD || (*state == DNSNAP__STALE && !allow_stale))
		return DNSNAP_ENOTFOUND;
	ao->rotate = 0;
	ao->stale = *state == DNSNAP__STALE;
	return dnsnap_answer_build(q, buf, len, ao, out, cap, out_len);
}
