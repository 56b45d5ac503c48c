/*
 * l2value.c: the value dnsnap keeps for a key in a shared store (Redis,
 * under `dnsnap serve --l2`, `export --to`, `import --from`): the entry in a
 * small frame, tied to its key by a check (spec/FORMAT.md, "L2 value").
 *
 *   Magic (4) | Major (1) | Minor (1) | Entry (n) | L2_Check (8, u64 LE)
 *
 * L2_Check = XXH3_64bits_withSeed(bytes 0 .. 6+n, XXH3_64bits(key)): a value
 * that changed, or stands under another key, fails it. Anyone who can write
 * to the store can write any bytes there, so opening a value checks
 * everything a snapshot read does: the frame, the check, then the entry as
 * untrusted data (dnsnap_entry_validate()).
 */
#include <string.h>

#include <xxhash.h>

#include "../format/internal.h"
#include "dnsnap.h"

static const uint8_t l2_magic[4] = { 0xd5, 'N', 'S', 'L' };

static uint64_t l2_check(const uint8_t *key, size_t key_len, const uint8_t *v, size_t n)
{
	return XXH3_64bits_withSeed(v, n, XXH3_64bits(key, key_len));
}

int dnsnap_l2_value_seal(const uint8_t *key, size_t key_len, const uint8_t *entry,
			 size_t entry_len, uint8_t *out, size_t cap, size_t *out_len)
{
	if (key == NULL || entry == NULL || out == NULL || out_len == NULL ||
	    key_len == 0 || key_len > DNSNAP_KEY_MAX || entry_len < DNSNAP_ENTRY_HDR ||
	    entry_len > DNSNAP_ENTRY_MAX)
		return DNSNAP_EINVAL;
	size_t n = DNSNAP_L2_HDR + entry_len + DNSNAP_L2_CHECK;
	if (cap < n)
		return DNSNAP_ENOSPC;
	memcpy(out, l2_magic, sizeof l2_magic);
	out[4] = DNSNAP_L2_MAJOR;
	out[5] = DNSNAP_L2_MINOR;
	memmove(out + DNSNAP_L2_HDR, entry, entry_len);
	st64le(out + DNSNAP_L2_HDR + entry_len,
	       l2_check(key, key_len, out, DNSNAP_L2_HDR + entry_len));
	*out_len = n;
	return DNSNAP_OK;
}

int dnsnap_l2_value_open(const uint8_t *key, size_t key_len, const uint8_t *val, size_t len,
			 const uint8_t **entry, size_t *entry_len, dnsnap_diag_t *d)
{
	if (key == NULL || val == NULL || entry == NULL || entry_len == NULL)
		return DNSNAP_EINVAL;
	if (len < 4)
		return dnsnap__diag(d, DNSNAP_ETRUNC, 0, "a %zu-byte value: no room for its magic",
				    len);
	if (memcmp(val, l2_magic, sizeof l2_magic) != 0)
		return dnsnap__diag(d, DNSNAP_EMAGIC, 0, "not a dnsnap value (magic %02x%02x%02x%02x)",
				    val[0], val[1], val[2], val[3]);
	if (len < DNSNAP_L2_HDR)
		return dnsnap__diag(d, DNSNAP_ETRUNC, len, "the value ends in its header");
	if (val[4] != DNSNAP_L2_MAJOR)
		return dnsnap__diag(d, DNSNAP_EVERSION, 4, "value major version %u (this reads %u)",
				    val[4], DNSNAP_L2_MAJOR);
	if (len > DNSNAP_L2_VALUE_MAX)
		return dnsnap__diag(d, DNSNAP_ETOOBIG, DNSNAP_L2_VALUE_MAX,
				    "a %zu-byte value: over %u", len, (unsigned)DNSNAP_L2_VALUE_MAX);
	if (len < DNSNAP_L2_HDR + DNSNAP_ENTRY_HDR + DNSNAP_L2_CHECK)
		return dnsnap__diag(d, DNSNAP_ETRUNC, len,
				    "a %zu-byte value: shorter than a frame around the smallest entry",
				    len);
	size_t n = len - DNSNAP_L2_HDR - DNSNAP_L2_CHECK;
	uint64_t want = ld64le(val + len - DNSNAP_L2_CHECK);
	uint64_t got = l2_check(key, key_len, val, len - DNSNAP_L2_CHECK);
	if (want != got)
		return dnsnap__diag(d, DNSNAP_ECHECKSUM, len - DNSNAP_L2_CHECK,
				    "L2_Check %016llx, the bytes and key give %016llx",
				    (unsigned long long)want, (unsigned long long)got);
	int err = dnsnap_entry_validate(val + DNSNAP_L2_HDR, n, d);
	if (err != DNSNAP_OK) {
		if (d != NULL)
			d->offset += DNSNAP_L2_HDR;
		return err;
	}
	*entry = val + DNSNAP_L2_HDR;
	*entry_len = n;
	return DNSNAP_OK;
}
