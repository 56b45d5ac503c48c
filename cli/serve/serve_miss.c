/*
 * serve_miss.c: an upstream answer taken in by the miss path (serve.h), in
 * one piece with no sockets, so that a unit test drives it: encoded once,
 * with the cache's own TTL policy (dnsnap_cache_encode()), inserted, and
 * that same encoding sealed for the second level and answered from. Before,
 * the answer was encoded twice and the uncapped copy was the one sealed:
 * every answer with a TTL over a day went to Redis with its raw TTL and
 * every reader refused it.
 */
#include <stdio.h>
#include <string.h>

#include "serve.h"

int miss_take(dnsnap_cache_t *c, const uint8_t *reply, size_t len, uint32_t now,
	      dnsnap_encoded_t *enc, uint8_t *val, size_t *val_len, uint64_t *pxat_ms,
	      dnsnap_diag_t *d)
{
	if (val_len != NULL)
		*val_len = 0;
	int err = dnsnap_cache_encode(c, reply, len, now, NULL, 0, enc, d);
	if (err == DNSNAP_ENOTCACHE && enc->entry_len > 0)
		return MISS_UNCACHED; /* TTL 0 after the policy: answered, not kept */
	if (err != DNSNAP_OK)
		return err;
	int ie = dnsnap_cache_insert_encoded(c, enc);
	if (val != NULL && val_len != NULL) {
		dnsnap_hdr_t h;
		if (dnsnap_entry_header(enc->entry, enc->entry_len, &h, NULL) == DNSNAP_OK &&
		    dnsnap_l2_value_seal(enc->key, enc->key_len, enc->entry, enc->entry_len, val,
					 DNSNAP_L2_VALUE_MAX, val_len) == DNSNAP_OK)
			*pxat_ms = (uint64_t)h.expiry * 1000;
		else
			*val_len = 0;
	}
	if (ie != DNSNAP_OK && d != NULL) {
		d->offset = 0;
		snprintf(d->msg, sizeof d->msg, "not cached: %s", dnsnap_strerror(ie));
	}
	return ie == DNSNAP_OK ? MISS_CACHED : MISS_UNCACHED;
}
