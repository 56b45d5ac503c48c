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
#include <stdio.h>
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

/* ------------------------------------------------------------ acceptance */

#define T_CNAME 5
#define T_DNAME 39
#define T_RRSIG 46
#define T_ANY 255
#define C_ANY 255
#define CHAIN_MAX 64 /* names a CNAME chain reaches (resolvers stop at 8 to 16) */

/* The names of the chain so far: the query name, then each CNAME's target */
struct chain {
	const uint8_t *name[CHAIN_MAX];
	size_t len[CHAIN_MAX];
	unsigned n;
};

static int chain_has(const struct chain *ch, const uint8_t *name, size_t len)
{
	for (unsigned i = 0; i < ch->n; i++)
		if (dnsnap_name_eq(ch->name[i], ch->len[i], name, len))
			return 1;
	return 0;
}

/* Whether @p owner is a name of the chain or above one (a DNAME's owner, the
 * owner of its RRSIG): some chain name ends with its labels. */
static int chain_under(const struct chain *ch, const uint8_t *owner, size_t len)
{
	for (unsigned i = 0; i < ch->n; i++)
		for (size_t p = 0; p < ch->len[i]; p += (size_t)ch->name[i][p] + 1)
			if (dnsnap_name_eq(ch->name[i] + p, ch->len[i] - p, owner, len))
				return 1;
	return 0;
}

/*
 * Whether the answer section answers the key (spec/DECISIONS.md, "What an
 * L2 value must answer"), RFC 1034 4.3.2 read in the order a resolver writes
 * it: every record is of the key's type (any type for ANY) and class at a
 * name of the chain, or a CNAME at a name of the chain (its target joins
 * the chain), or a DNAME or RRSIG at a name of the chain or above one; and a
 * positive entry (kind ANSWER) holds at least one of the first two.
 * @return DNSNAP_OK or DNSNAP_EFIELD with diag at the record (@p base: where
 * the entry starts in the value)
 */
static int answers_key(const dnsnap_key_t *k, const uint8_t *e, size_t n,
		       const dnsnap_hdr_t *h, size_t base, dnsnap_diag_t *d)
{
	struct chain ch = { .name = { k->name }, .len = { k->name_len }, .n = 1 };
	dnsnap_iter_t it;
	dnsnap_rr_t rr;
	unsigned answers = 0;
	int r = dnsnap_iter_init(&it, e, n, k->name, k->name_len);
	while (r == DNSNAP_OK && (r = dnsnap_iter_next(&it, &rr)) == 1 &&
	       rr.section == DNSNAP_SEC_ANSWER) {
		int at = chain_has(&ch, rr.owner, rr.owner_len);
		int cls = k->qclass == C_ANY || rr.rclass == k->qclass;
		r = DNSNAP_OK;
		if (at && cls && (rr.type == k->qtype || k->qtype == T_ANY)) {
			answers++;
		} else if (at && cls && rr.type == T_CNAME) {
			int tl = dnsnap_name_len(rr.rdata, rr.rdlen);
			if (ch.n == CHAIN_MAX || tl < 0)
				return dnsnap__diag(d, DNSNAP_EFIELD, base + rr.offset,
						    "a CNAME chain of more than %d names",
						    CHAIN_MAX);
			ch.name[ch.n] = rr.rdata;
			ch.len[ch.n++] = (size_t)tl;
			answers++;
		} else if (!((rr.type == T_DNAME || rr.type == T_RRSIG) &&
			     chain_under(&ch, rr.owner, rr.owner_len))) {
			return dnsnap__diag(d, DNSNAP_EFIELD, base + rr.offset,
					    "answer record %u (type %u class %u%s) does not answer "
					    "the key's type %u class %u", rr.index, rr.type,
					    rr.rclass, at ? "" : ", at a name off the CNAME chain",
					    k->qtype, k->qclass);
		}
	}
	if (r < 0)
		return dnsnap__diag(d, r, base + it.err_off, "the records: %s", dnsnap_strerror(r));
	if (answers == 0 && dnsnap_hdr_kind(h) == DNSNAP_KIND_ANSWER)
		return dnsnap__diag(d, DNSNAP_EFIELD, base + 12,
				    "a positive answer with no record of the key's type %u, nor a "
				    "CNAME", k->qtype);
	return DNSNAP_OK;
}

/*
 * The rcode and times a writer with the reader's policy gives: NOERROR or
 * NXDOMAIN, and the time rule of every reader (dnsnap_entry_check_time()).
 */
static int policy_ok(const dnsnap_cache_opts_t *o, const uint8_t *e, size_t n,
		     const dnsnap_hdr_t *h, uint32_t now, dnsnap_diag_t *d)
{
	unsigned rcode = dnsnap_hdr_rcode(h);
	if (rcode != 0 && rcode != 3)
		return dnsnap__diag(d, DNSNAP_EFIELD, DNSNAP_L2_HDR + 12,
				    "rcode %u: only NOERROR and NXDOMAIN answers are shared",
				    rcode);
	int err = dnsnap_entry_check_time(e, n, o, now, d);
	if (err != DNSNAP_OK && d != NULL)
		d->offset += DNSNAP_L2_HDR;
	return err;
}

int dnsnap_l2_value_accept(const dnsnap_cache_t *c, const uint8_t *key, size_t key_len,
			   const uint8_t *val, size_t len, uint32_t now, const uint8_t **entry,
			   size_t *entry_len, dnsnap_diag_t *d)
{
	dnsnap_cache_opts_t o;
	dnsnap_key_t k;
	dnsnap_hdr_t h;
	const uint8_t *e;
	size_t n;
	if (key == NULL || val == NULL || entry == NULL || entry_len == NULL)
		return DNSNAP_EINVAL;
	int err = dnsnap_key_decode(key, key_len, &k, d);
	if (err != DNSNAP_OK) {
		char why[sizeof d->msg];
		snprintf(why, sizeof why, "%s", d ? d->msg : "");
		return dnsnap__diag(d, err, d ? d->offset : 0, "the key is no dnsnap key (%s): %s",
				    dnsnap_errname(err), why);
	}
	if ((err = dnsnap_l2_value_open(key, key_len, val, len, &e, &n, d)) != DNSNAP_OK)
		return err;
	if ((err = dnsnap_entry_header(e, n, &h, d)) != DNSNAP_OK) /* validated: cannot fail */
		return err;
	if (c != NULL)
		dnsnap_cache_opts_get(c, &o);
	else
		dnsnap_cache_opts_default(&o);
	if ((err = policy_ok(&o, e, n, &h, now, d)) != DNSNAP_OK ||
	    (err = answers_key(&k, e, n, &h, DNSNAP_L2_HDR, d)) != DNSNAP_OK)
		return err;
	if ((int32_t)(h.expiry - now) <= 0)
		return dnsnap__diag(d, DNSNAP_ENOTFOUND, DNSNAP_L2_HDR + 4, "expired %d s ago",
				    (int)(now - h.expiry));
	*entry = e;
	*entry_len = n;
	return DNSNAP_OK;
}
