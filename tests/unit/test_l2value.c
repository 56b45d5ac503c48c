/*
 * test_l2value: the value of a shared store (spec/FORMAT.md, "L2 value"):
 * the spec's worked example byte for byte, a round trip, and damage: every
 * single bit flipped, every cut, another key's value, a foreign or a huge
 * one. None may open as good. Then the acceptance rule
 * (dnsnap_l2_value_accept()): times and rcode against the reading cache's
 * own policy, the records against the key's type (the vectors of
 * spec/vectors/valid, their times moved to the test's now), and what each
 * refusal says.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dnsnap.h"

/* vector 001's key (www.example.com. IN A) */
static const uint8_t key[] = { 3, 'c', 'o', 'm', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3,
			       'w', 'w', 'w', 0, 0, 1, 0, 1, 0, 0 };

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *p = malloc((size_t)n + 1);
	assert_non_null(p);
	assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return p;
}

/* vector 001's entry (its .bin: Key_Len, key, entry) */
static const uint8_t *entry001(size_t *len)
{
	static uint8_t *bin;
	static size_t bl;
	if (bin == NULL)
		bin = slurp("spec/vectors/valid/001-a.bin", &bl);
	assert_true(bl > 2 + sizeof key);
	assert_memory_equal(bin + 2, key, sizeof key);
	*len = bl - 2 - sizeof key;
	return bin + 2 + sizeof key;
}

static void test_worked_example(void **state)
{
	(void)state;
	size_t el, vl;
	const uint8_t *e = entry001(&el);
	uint8_t v[DNSNAP_L2_VALUE_MAX];
	assert_int_equal(dnsnap_l2_value_seal(key, sizeof key, e, el, v, sizeof v, &vl), DNSNAP_OK);
	assert_int_equal(vl, 6 + el + 8);
	static const uint8_t head[] = { 0xd5, 'N', 'S', 'L', 1, 0 };
	assert_memory_equal(v, head, sizeof head);
	assert_memory_equal(v + 6, e, el);
	/* the spec's L2_Check for this key and entry, stored little-endian */
	static const uint8_t check[] = { 0x91, 0x5d, 0x88, 0xcc, 0x2e, 0x65, 0x73, 0xd7 };
	assert_memory_equal(v + 6 + el, check, 8);
	const uint8_t *oe;
	size_t ol;
	dnsnap_diag_t d;
	assert_int_equal(dnsnap_l2_value_open(key, sizeof key, v, vl, &oe, &ol, &d), DNSNAP_OK);
	assert_ptr_equal(oe, v + 6);
	assert_int_equal(ol, el);
	/* too small a buffer */
	assert_int_equal(dnsnap_l2_value_seal(key, sizeof key, e, el, v, vl - 1, &vl),
			 DNSNAP_ENOSPC);
}

static void test_every_flip_and_cut_fails(void **state)
{
	(void)state;
	size_t el, vl;
	const uint8_t *e = entry001(&el);
	uint8_t v[512], w[512];
	assert_int_equal(dnsnap_l2_value_seal(key, sizeof key, e, el, v, sizeof v, &vl), DNSNAP_OK);
	const uint8_t *oe;
	size_t ol;
	dnsnap_diag_t d;
	for (size_t i = 0; i < vl * 8; i++) {
		memcpy(w, v, vl);
		w[i / 8] ^= (uint8_t)(1u << (i % 8));
		int err = dnsnap_l2_value_open(key, sizeof key, w, vl, &oe, &ol, &d);
		if (err == DNSNAP_OK)
			fail_msg("bit %zu flipped: opened as good", i);
		assert_true(d.offset <= vl);
	}
	for (size_t n = 0; n < vl; n++) {
		int err = dnsnap_l2_value_open(key, sizeof key, v, n, &oe, &ol, &d);
		if (err == DNSNAP_OK)
			fail_msg("cut to %zu bytes: opened as good", n);
	}
	/* a byte added */
	memcpy(w, v, vl);
	w[vl] = 0;
	assert_int_not_equal(dnsnap_l2_value_open(key, sizeof key, w, vl + 1, &oe, &ol, &d),
			     DNSNAP_OK);
}

static void test_foreign_values(void **state)
{
	(void)state;
	size_t el, vl;
	const uint8_t *e = entry001(&el);
	uint8_t v[512];
	assert_int_equal(dnsnap_l2_value_seal(key, sizeof key, e, el, v, sizeof v, &vl), DNSNAP_OK);
	const uint8_t *oe;
	size_t ol;
	dnsnap_diag_t d;
	/* the same value under another key (www.example.com. IN AAAA): ECHECKSUM */
	uint8_t other[sizeof key];
	memcpy(other, key, sizeof key);
	other[sizeof key - 4] = 28;
	assert_int_equal(dnsnap_l2_value_open(other, sizeof other, v, vl, &oe, &ol, &d),
			 DNSNAP_ECHECKSUM);
	assert_int_equal(d.offset, vl - 8);
	/* garbage, and text */
	static const uint8_t junk[] = "hello, this is not a dnsnap value at all";
	assert_int_equal(dnsnap_l2_value_open(key, sizeof key, junk, sizeof junk - 1, &oe, &ol, &d),
			 DNSNAP_EMAGIC);
	assert_int_equal(dnsnap_l2_value_open(key, sizeof key, junk, 0, &oe, &ol, &d),
			 DNSNAP_ETRUNC);
	/* a later major version */
	v[4] = 2;
	assert_int_equal(dnsnap_l2_value_open(key, sizeof key, v, vl, &oe, &ol, &d),
			 DNSNAP_EVERSION);
	assert_int_equal(d.offset, 4);
	v[4] = 1;
	/* 10 MB: refused by its length, before any hashing */
	size_t big = 10u << 20;
	uint8_t *huge = calloc(1, big);
	assert_non_null(huge);
	memcpy(huge, v, 6);
	assert_int_equal(dnsnap_l2_value_open(key, sizeof key, huge, big, &oe, &ol, &d),
			 DNSNAP_ETOOBIG);
	free(huge);
	/* a value whose check is right but whose entry is not valid: the entry's error */
	uint8_t bad[64] = { 0 };
	uint8_t ent[DNSNAP_ENTRY_HDR] = { 0 };
	ent[0] = 0xff; /* nonsense header */
	memset(ent, 0xff, sizeof ent);
	size_t bl;
	assert_int_equal(dnsnap_l2_value_seal(key, sizeof key, ent, sizeof ent, bad, sizeof bad, &bl),
			 DNSNAP_OK);
	int err = dnsnap_l2_value_open(key, sizeof key, bad, bl, &oe, &ol, &d);
	assert_int_not_equal(err, DNSNAP_OK);
	assert_int_not_equal(err, DNSNAP_ECHECKSUM);
	assert_true(d.offset >= 6);
}

/* ------------------------------------------------------------ acceptance */

#define NOW 1800000000u

struct vec {
	uint8_t key[DNSNAP_KEY_MAX];
	size_t key_len;
	uint8_t entry[4096];
	size_t entry_len;
};

/* A vector's key and entry (its .bin: Key_Len u16 LE, key, entry) */
static void vec_load(const char *name, struct vec *v)
{
	char path[128];
	size_t bl;
	snprintf(path, sizeof path, "spec/vectors/valid/%s.bin", name);
	uint8_t *bin = slurp(path, &bl);
	v->key_len = (size_t)bin[0] | (size_t)bin[1] << 8;
	assert_true(bl > 2 + v->key_len && bl - 2 - v->key_len <= sizeof v->entry);
	memcpy(v->key, bin + 2, v->key_len);
	v->entry_len = bl - 2 - v->key_len;
	memcpy(v->entry, bin + 2 + v->key_len, v->entry_len);
	free(bin);
}

static void put32le(uint8_t *p, uint32_t x)
{
	p[0] = (uint8_t)x, p[1] = (uint8_t)(x >> 8), p[2] = (uint8_t)(x >> 16);
	p[3] = (uint8_t)(x >> 24);
}

/* @p v's entry with Inception and Expiry set, sealed for the key @p under (a
 * writer that can write the store can seal anything under any key) */
static size_t sealed(const struct vec *v, const uint8_t *under, size_t under_len,
		     uint32_t inception, uint32_t expiry, uint8_t *out)
{
	uint8_t e[sizeof v->entry];
	size_t n;
	memcpy(e, v->entry, v->entry_len);
	put32le(e, inception);
	put32le(e + 4, expiry);
	assert_int_equal(dnsnap_l2_value_seal(under, under_len, e, v->entry_len, out,
					      DNSNAP_L2_VALUE_MAX, &n), DNSNAP_OK);
	return n;
}

static dnsnap_cache_t *cache_with(uint32_t max_ttl, uint32_t max_neg_ttl, uint32_t min_ttl)
{
	dnsnap_cache_opts_t o;
	dnsnap_cache_t *c;
	dnsnap_cache_opts_default(&o);
	o.max_ttl = max_ttl;
	o.max_neg_ttl = max_neg_ttl;
	o.min_ttl = min_ttl;
	assert_int_equal(dnsnap_cache_new(&o, &c), DNSNAP_OK);
	return c;
}

/* accept() of @p val by @p c (NULL: the default policy) at NOW */
static int accept_(const dnsnap_cache_t *c, const struct vec *k, const uint8_t *val, size_t n,
		   dnsnap_diag_t *d)
{
	const uint8_t *e = NULL;
	size_t el = 0;
	memset(d, 0, sizeof *d);
	int err = dnsnap_l2_value_accept(c, k->key, k->key_len, val, n, NOW, &e, &el, d);
	if (err == DNSNAP_OK) {
		assert_ptr_equal(e, val + DNSNAP_L2_HDR);
		assert_int_equal(el, n - DNSNAP_L2_HDR - DNSNAP_L2_CHECK);
	}
	return err;
}

/* @p err at @p off, its message holding @p says */
static void refused(int err, const dnsnap_diag_t *d, int want, size_t off, const char *says)
{
	if (err != want || d->offset != off || strstr(d->msg, says) == NULL)
		fail_msg("%s at %zu ('%s'), not %s at %zu ('%s')", dnsnap_errname(err), d->offset,
			 d->msg, dnsnap_errname(want), off, says);
}

static void test_accept_takes_what_its_policy_writes(void **state)
{
	(void)state;
	static uint8_t val[DNSNAP_L2_VALUE_MAX];
	struct vec a;
	dnsnap_diag_t d;
	vec_load("001-a", &a);
	size_t n = sealed(&a, a.key, a.key_len, NOW - 10, NOW + 290, val);
	dnsnap_cache_t *def = cache_with(86400, 10800, 0), *short_ = cache_with(3600, 10800, 0);
	assert_int_equal(accept_(NULL, &a, val, n, &d), DNSNAP_OK);
	assert_int_equal(accept_(def, &a, val, n, &d), DNSNAP_OK);
	assert_int_equal(accept_(short_, &a, val, n, &d), DNSNAP_OK);
	/* the frame is still checked first: another key's value */
	struct vec aaaa;
	vec_load("006-nodata", &aaaa); /* www.example.com. IN AAAA */
	refused(accept_(NULL, &aaaa, val, n, &d), &d, DNSNAP_ECHECKSUM, n - 8, "L2_Check");
	dnsnap_cache_free(def);
	dnsnap_cache_free(short_);
}

/* The cache's own caps, not the defaults: max_ttl for answers, max_neg_ttl
 * for NXDOMAIN and NODATA, min_ttl raising both, 0 for none; 300 s of skew */
static void test_accept_holds_times_to_the_given_caches_policy(void **state)
{
	(void)state;
	static const struct {
		const char *vec;
		uint32_t max_ttl, max_neg_ttl, min_ttl, life; /* life: Expiry - NOW */
		int ok;
		const char *says;
	} v[] = {
		{"001-a", 86400, 10800, 0, 7200, 1, NULL},
		{"001-a", 3600, 10800, 0, 7200, 0, "longest TTL (3600 s)"},
		{"001-a", 3600, 10800, 0, 3900, 1, NULL},   /* cap + 300: the skew */
		{"001-a", 3600, 10800, 0, 3901, 0, "lives 3901 s more"},
		{"001-a", 3600, 10800, 7200, 7200, 1, NULL}, /* the cache raises TTLs to min_ttl */
		{"001-a", 0, 10800, 0, 315360000, 1, NULL}, /* no cap: ten years */
		{"001-a", 86400, 10800, 0, 86701, 0, "longest TTL (86400 s)"},
		{"005-nxdomain", 86400, 10800, 0, 7200, 1, NULL},
		{"005-nxdomain", 86400, 3600, 0, 7200, 0, "longest negative TTL (3600 s)"},
		{"005-nxdomain", 3600, 10800, 0, 7200, 1, NULL}, /* max_ttl is not its cap */
		{"005-nxdomain", 86400, 10800, 0, 86400, 0, "negative TTL (10800 s)"},
		{"006-nodata", 86400, 600, 0, 901, 0, "negative TTL (600 s)"},
		{"009-referral", 86400, 10800, 0, 86400, 1, NULL},
		{"009-referral", 86400, 10800, 0, 172800, 0, "longest TTL (86400 s)"},
	};
	static uint8_t val[DNSNAP_L2_VALUE_MAX];
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		struct vec k;
		dnsnap_diag_t d;
		vec_load(v[i].vec, &k);
		size_t n = sealed(&k, k.key, k.key_len, NOW, NOW + v[i].life, val);
		dnsnap_cache_t *c = cache_with(v[i].max_ttl, v[i].max_neg_ttl, v[i].min_ttl);
		int err = accept_(c, &k, val, n, &d);
		if (v[i].ok && err != DNSNAP_OK)
			fail_msg("case %zu refused: %s", i, d.msg);
		if (!v[i].ok)
			refused(err, &d, DNSNAP_EFIELD, DNSNAP_L2_HDR + 4, v[i].says);
		dnsnap_cache_free(c);
	}
	/* the default policy (c NULL) is the default cache's: 7200 s taken, 86701 not */
	struct vec a;
	dnsnap_diag_t d;
	vec_load("001-a", &a);
	size_t n = sealed(&a, a.key, a.key_len, NOW, NOW + 7200, val);
	assert_int_equal(accept_(NULL, &a, val, n, &d), DNSNAP_OK);
	n = sealed(&a, a.key, a.key_len, NOW, NOW + 86701, val);
	refused(accept_(NULL, &a, val, n, &d), &d, DNSNAP_EFIELD, DNSNAP_L2_HDR + 4, "86400");
}

static void test_accept_refuses_the_future_other_rcodes_and_expired(void **state)
{
	(void)state;
	static uint8_t val[DNSNAP_L2_VALUE_MAX];
	struct vec a;
	dnsnap_diag_t d;
	vec_load("001-a", &a);
	size_t n = sealed(&a, a.key, a.key_len, NOW + 300, NOW + 600, val);
	assert_int_equal(accept_(NULL, &a, val, n, &d), DNSNAP_OK); /* a clock 5 min ahead */
	n = sealed(&a, a.key, a.key_len, NOW + 301, NOW + 600, val);
	refused(accept_(NULL, &a, val, n, &d), &d, DNSNAP_EFIELD, DNSNAP_L2_HDR + 0,
		"cached 301 s in the future");
	/* SERVFAIL, REFUSED: never written by a dnsnap cache (the Flags' low 4 bits) */
	for (unsigned rc = 1; rc < 16; rc++) {
		if (rc == 3)
			continue; /* NXDOMAIN with kind ANSWER: the validator's (kind <=> rcode) */
		struct vec b = a;
		b.entry[12] = (uint8_t)((b.entry[12] & 0xf0) | rc);
		n = sealed(&b, b.key, b.key_len, NOW, NOW + 300, val);
		char says[32];
		snprintf(says, sizeof says, "rcode %u:", rc);
		refused(accept_(NULL, &b, val, n, &d), &d, DNSNAP_EFIELD, DNSNAP_L2_HDR + 12, says);
	}
	/* expired: its own code, a miss, not damage */
	n = sealed(&a, a.key, a.key_len, NOW - 600, NOW, val);
	refused(accept_(NULL, &a, val, n, &d), &d, DNSNAP_ENOTFOUND, DNSNAP_L2_HDR + 4,
		"expired 0 s ago");
	n = sealed(&a, a.key, a.key_len, NOW - 600, NOW - 5, val);
	refused(accept_(NULL, &a, val, n, &d), &d, DNSNAP_ENOTFOUND, DNSNAP_L2_HDR + 4,
		"expired 5 s ago");
}

/* RFC 1034 4.3.2: the answer section's records at the query name are of its
 * type, or a CNAME whose target the records that follow are at (a DNAME and
 * the RRSIGs beside them); negative answers and referrals answer no type */
static void test_accept_refuses_records_that_do_not_answer_the_key(void **state)
{
	(void)state;
	static uint8_t val[DNSNAP_L2_VALUE_MAX];
	static const char *const own[] = {"001-a", "002-aaaa-set", "003-txt-200",
					  "004-cname-chain", "005-nxdomain", "006-nodata",
					  "007-dnssec-a", "008-mx", "009-referral",
					  "010-unknown-type", "011-max-name",
					  "012-dname-compressed"};
	dnsnap_diag_t d;
	size_t n;
	for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) { /* each under its own key */
		struct vec v;
		vec_load(own[i], &v);
		n = sealed(&v, v.key, v.key_len, NOW, NOW + 60, val);
		if (accept_(NULL, &v, val, n, &d) != DNSNAP_OK)
			fail_msg("%s under its own key: %s", own[i], d.msg);
	}
	struct vec a, txt, chain, aaaa, nodata;
	vec_load("001-a", &a);           /* www.example.com. IN A */
	vec_load("003-txt-200", &txt);   /* sel1._domainkey.example.com. IN TXT */
	vec_load("004-cname-chain", &chain);
	vec_load("006-nodata", &aaaa);   /* www.example.com. IN AAAA */
	nodata = aaaa;
	/* a TXT entry stored under an A key: its first record (Records at 18; its
	 * owner elided, so the key's name) */
	n = sealed(&txt, a.key, a.key_len, NOW, NOW + 60, val);
	refused(accept_(NULL, &a, val, n, &d), &d, DNSNAP_EFIELD, DNSNAP_L2_HDR + 18,
		"answer record 0 (type 16 class 1) does not answer the key's type 1 class 1");
	/* the A entry under the AAAA key of the same name */
	n = sealed(&a, aaaa.key, aaaa.key_len, NOW, NOW + 60, val);
	refused(accept_(NULL, &aaaa, val, n, &d), &d, DNSNAP_EFIELD, DNSNAP_L2_HDR + 18,
		"answer record 0 (type 1 class 1) does not answer the key's type 28");
	/* the CNAME chain under the AAAA key: the CNAME at the name is right, the A
	 * at its target is not; record 1 starts after record 0's Rec_Len (u16 LE
	 * at 18) and its 2 bytes */
	size_t rec1 = 18 + 2 + ((size_t)chain.entry[18] | (size_t)chain.entry[19] << 8);
	n = sealed(&chain, aaaa.key, aaaa.key_len, NOW, NOW + 60, val);
	refused(accept_(NULL, &aaaa, val, n, &d), &d, DNSNAP_EFIELD, DNSNAP_L2_HDR + rec1,
		"answer record 1 (type 1 class 1) does not answer the key's type 28");
	/* the DNAME answer (corp.example.com. DNAME, then the CNAME it makes) under
	 * www.example.com. A: the DNAME is above no name of that chain */
	struct vec dname;
	vec_load("012-dname-compressed", &dname);
	n = sealed(&dname, a.key, a.key_len, NOW, NOW + 60, val);
	refused(accept_(NULL, &a, val, n, &d), &d, DNSNAP_EFIELD, DNSNAP_L2_HDR + 18,
		"answer record 0 (type 39 class 1, at a name off the CNAME chain)");
	/* the A entry under a CH-class key of the same name and type */
	struct vec ch = a;
	ch.key[ch.key_len - 3] = 3; /* Qclass u16 BE before Flags and Tag_Len */
	n = sealed(&a, ch.key, ch.key_len, NOW, NOW + 60, val);
	refused(accept_(NULL, &ch, val, n, &d), &d, DNSNAP_EFIELD, DNSNAP_L2_HDR + 18,
		"does not answer the key's type 1 class 3");
	/* a positive entry with no answer at all: NODATA's entry with kind ANSWER */
	nodata.entry[12] &= (uint8_t)~0x60;
	n = sealed(&nodata, nodata.key, nodata.key_len, NOW, NOW + 60, val);
	refused(accept_(NULL, &nodata, val, n, &d), &d, DNSNAP_EFIELD, DNSNAP_L2_HDR + 12,
		"a positive answer with no record of the key's type 28");
	/* a key that is no dnsnap key: the key's own error, at its byte */
	struct vec bad = a;
	bad.key[bad.key_len - 2] = 0x80; /* a reserved key flag */
	n = sealed(&a, bad.key, bad.key_len, NOW, NOW + 60, val);
	refused(accept_(NULL, &bad, val, n, &d), &d, DNSNAP_ERESERVED, bad.key_len - 2,
		"the key is no dnsnap key (DNSNAP_ERESERVED)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worked_example),
		cmocka_unit_test(test_every_flip_and_cut_fails),
		cmocka_unit_test(test_foreign_values),
		cmocka_unit_test(test_accept_takes_what_its_policy_writes),
		cmocka_unit_test(test_accept_holds_times_to_the_given_caches_policy),
		cmocka_unit_test(test_accept_refuses_the_future_other_rcodes_and_expired),
		cmocka_unit_test(test_accept_refuses_records_that_do_not_answer_the_key),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
