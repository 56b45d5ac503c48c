/*
 * test_keep.c: the keep rule (engine/keep.c, spec/DECISIONS.md): of two live
 * responses for one key, the one with DNSSEC records stays unless the newer
 * replaces the data itself; an expired one never wins. Checked where the
 * engine applies it: dnsnap_cache_insert() (both orders, changed data, a
 * changed RCODE, an expired entry, a signed refresh) and dnsnap_snap_merge()
 * (the base older or newer than the cache, an expired base).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dnsnap.h"
#include "tmpdir.h"
#include "wb.h"

#define NOW 1700000000u
#define NAME "www.example.org"

static dnsnap_encoded_t scratch; /* large: static */

enum { SIGNED, PLAIN, OTHER_ADDR, NXDOMAIN };

/* www.example.org/A, TTL ttl: SIGNED has AD and an RRSIG over 192.0.2.80;
 * PLAIN the same address alone (a DO=0 answer); OTHER_ADDR 192.0.2.81 alone;
 * NXDOMAIN an SOA. */
static void response(wb_t *w, int kind, uint32_t ttl)
{
	unsigned an = kind == SIGNED ? 2 : kind == NXDOMAIN ? 0 : 1;
	put_header(w, kind == SIGNED ? 0x81a0 : kind == NXDOMAIN ? 0x8183 : 0x8180, 1, an,
		   kind == NXDOMAIN, 0);
	put_name(w, NAME);
	put_u16(w, 1);
	put_u16(w, 1);
	if (kind == NXDOMAIN) {
		put_name(w, "example.org");
		size_t rl = put_fixed(w, 6, 1, ttl);
		put_name(w, "ns.example.org");
		put_name(w, "admin.example.org");
		for (int i = 0; i < 5; i++)
			put_u32(w, 3600);
		end_rdata(w, rl);
		return;
	}
	put_ptr(w, 12);
	size_t rl = put_fixed(w, 1, 1, ttl);
	put_u32(w, kind == OTHER_ADDR ? 0xc0000251 : 0xc0000250);
	end_rdata(w, rl);
	if (kind != SIGNED)
		return;
	put_ptr(w, 12);
	rl = put_fixed(w, 46, 1, ttl);
	put_u16(w, 1);          /* type covered: A */
	put_u8(w, 13);          /* algorithm */
	put_u8(w, 3);           /* labels */
	put_u32(w, ttl);
	put_u32(w, NOW + 86400 * 30);
	put_u32(w, NOW - 86400);
	put_u16(w, 40000);
	put_name(w, "example.org");
	for (int i = 0; i < 64; i++)
		put_u8(w, (unsigned)i);
	end_rdata(w, rl);
}

static dnsnap_cache_t *make(void)
{
	dnsnap_cache_t *c = NULL;
	assert_int_equal(dnsnap_cache_new(NULL, &c), DNSNAP_OK);
	return c;
}

static void insert(dnsnap_cache_t *c, int kind, uint32_t ttl, uint32_t now)
{
	wb_t w;
	response(&w, kind, ttl);
	assert_int_equal(dnsnap_cache_insert(c, w.b, w.n, now, NULL, 0, &scratch, NULL), DNSNAP_OK);
}

/* What the key holds: its header, the first A address's last byte (0 for
 * none) through *addr. */
typedef struct held {
	dnsnap_hdr_t h;
	unsigned addr;
	int found;
} held_t;

static void inspect(held_t *out, const uint8_t *entry, size_t len)
{
	assert_int_equal(dnsnap_entry_header(entry, len, &out->h, NULL), DNSNAP_OK);
	dnsnap_iter_t it;
	dnsnap_rr_t rr;
	static const uint8_t root[1] = { 0 };
	out->addr = 0;
	assert_int_equal(dnsnap_iter_init(&it, entry, len, root, 1), DNSNAP_OK);
	while (dnsnap_iter_next(&it, &rr) == 1)
		if (rr.type == 1 && rr.rdlen == 4 && out->addr == 0)
			out->addr = rr.rdata[3];
	out->found = 1;
}

static int one(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
	       size_t entry_len, uint32_t hits)
{
	(void)key, (void)key_len, (void)hits;
	inspect(arg, entry, entry_len);
	return 0;
}

static held_t held_in_cache(dnsnap_cache_t *c)
{
	held_t h = { 0 };
	dnsnap_cache_foreach(c, one, &h);
	assert_true(h.found);
	return h;
}

static uint64_t kept(dnsnap_cache_t *c)
{
	dnsnap_cache_stats_t st;
	dnsnap_cache_stats(c, &st);
	assert_int_equal(st.entries, 1);
	return st.kept;
}

static void test_a_live_signed_entry_stays_for_the_same_data_unsigned(void **state)
{
	(void)state;
	dnsnap_cache_t *c = make();
	insert(c, SIGNED, 3600, NOW);
	insert(c, PLAIN, 3600, NOW + 60);
	held_t h = held_in_cache(c);
	assert_true(h.h.flags & DNSNAP_EF_DNSSEC);
	assert_true(h.h.flags & DNSNAP_EF_AUTH);
	assert_int_equal(h.h.inception, NOW);
	assert_int_equal(kept(c), 1);
	/* the same time (a load with --now): still the signed one */
	insert(c, PLAIN, 3600, NOW);
	assert_true(held_in_cache(c).h.flags & DNSNAP_EF_DNSSEC);
	assert_int_equal(kept(c), 2);
	dnsnap_cache_free(c);
}

static void test_a_signed_response_replaces_an_unsigned_entry(void **state)
{
	(void)state;
	dnsnap_cache_t *c = make();
	insert(c, PLAIN, 3600, NOW);
	insert(c, SIGNED, 3600, NOW + 60);
	held_t h = held_in_cache(c);
	assert_true(h.h.flags & DNSNAP_EF_DNSSEC);
	assert_int_equal(h.h.inception, NOW + 60);
	assert_int_equal(kept(c), 0);
	dnsnap_cache_free(c);
}

static void test_newer_data_replaces_a_signed_entry(void **state)
{
	(void)state;
	dnsnap_cache_t *c = make();
	insert(c, SIGNED, 3600, NOW);
	insert(c, OTHER_ADDR, 3600, NOW + 60); /* the address changed */
	held_t h = held_in_cache(c);
	assert_false(h.h.flags & DNSNAP_EF_DNSSEC);
	assert_int_equal(h.addr, 0x51);
	insert(c, SIGNED, 3600, NOW + 120);
	insert(c, NXDOMAIN, 3600, NOW + 180); /* the RCODE changed */
	h = held_in_cache(c);
	assert_int_equal(dnsnap_hdr_rcode(&h.h), 3);
	assert_int_equal(kept(c), 0);
	dnsnap_cache_free(c);
}

static void test_an_expired_signed_entry_never_stays(void **state)
{
	(void)state;
	dnsnap_cache_t *c = make();
	insert(c, SIGNED, 30, NOW);
	insert(c, PLAIN, 3600, NOW + 30); /* expired at exactly this second */
	held_t h = held_in_cache(c);
	assert_false(h.h.flags & DNSNAP_EF_DNSSEC);
	assert_int_equal(h.h.inception, NOW + 30);
	assert_int_equal(kept(c), 0);
	dnsnap_cache_free(c);
}

static void test_a_signed_refresh_replaces_a_signed_entry(void **state)
{
	(void)state;
	dnsnap_cache_t *c = make();
	insert(c, SIGNED, 3600, NOW);
	insert(c, SIGNED, 3600, NOW + 60);
	assert_int_equal(held_in_cache(c).h.inception, NOW + 60);
	assert_int_equal(kept(c), 0);
	dnsnap_cache_free(c);
}

/* A snapshot holding @p kind at @p at (TTL 3600 unless @p ttl), merged with a
 * cache holding @p ckind at @p cat, at time @p now: what the result holds. */
static held_t merged(int kind, uint32_t at, uint32_t ttl, int ckind, uint32_t cat, uint32_t now)
{
	char dir[256];
	assert_int_equal(tmpdir_make(dir, sizeof dir, "keep"), 0);
	dnsnap_cache_t *b = make(), *c = make();
	insert(b, kind, ttl, at);
	insert(c, ckind, 3600, cat);
	dnsnap_diag_t d;
	dnsnap_snap_write_stats_t st;
	assert_int_equal(dnsnap_snap_write(b, tmpdir_path(dir, "base.snap"), at, &st, &d), DNSNAP_OK);
	dnsnap_snap_t *base = NULL, *out = NULL;
	assert_int_equal(dnsnap_snap_open(tmpdir_path(dir, "base.snap"), &base, &d), DNSNAP_OK);
	assert_int_equal(dnsnap_snap_merge(c, base, tmpdir_path(dir, "out.snap"), now, &st, &d),
			 DNSNAP_OK);
	assert_int_equal(st.entries, 1);
	assert_int_equal(dnsnap_snap_open(tmpdir_path(dir, "out.snap"), &out, &d), DNSNAP_OK);
	static uint8_t buf[65536];
	size_t len;
	assert_int_equal(dnsnap_snap_get(out, scratch.key, scratch.key_len, buf, sizeof buf, &len),
			 DNSNAP_OK);
	held_t h = { 0 };
	inspect(&h, buf, len);
	dnsnap_snap_close(out);
	dnsnap_snap_close(base);
	dnsnap_cache_free(b);
	dnsnap_cache_free(c);
	tmpdir_remove(dir);
	return h;
}

static void test_merge_keeps_the_signed_entry_in_both_orders(void **state)
{
	(void)state;
	/* the base signed and older, the cache plain and newer */
	held_t h = merged(SIGNED, NOW, 3600, PLAIN, NOW + 60, NOW + 120);
	assert_true(h.h.flags & DNSNAP_EF_DNSSEC);
	assert_int_equal(h.h.inception, NOW);
	/* the base plain and newer, the cache signed and older */
	h = merged(PLAIN, NOW + 60, 3600, SIGNED, NOW, NOW + 120);
	assert_true(h.h.flags & DNSNAP_EF_DNSSEC);
	assert_int_equal(h.h.inception, NOW);
	/* the base signed and newer: the later Inception, as before */
	h = merged(SIGNED, NOW + 60, 3600, PLAIN, NOW, NOW + 120);
	assert_true(h.h.flags & DNSNAP_EF_DNSSEC);
	assert_int_equal(h.h.inception, NOW + 60);
}

static void test_merge_takes_newer_data_and_never_an_expired_entry(void **state)
{
	(void)state;
	held_t h = merged(SIGNED, NOW, 3600, OTHER_ADDR, NOW + 60, NOW + 120);
	assert_false(h.h.flags & DNSNAP_EF_DNSSEC);
	assert_int_equal(h.addr, 0x51);
	/* the base's signed entry expired at the merge: the cache's, older or not */
	h = merged(SIGNED, NOW + 60, 60, PLAIN, NOW, NOW + 120);
	assert_false(h.h.flags & DNSNAP_EF_DNSSEC);
	assert_int_equal(h.h.inception, NOW);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_live_signed_entry_stays_for_the_same_data_unsigned),
		cmocka_unit_test(test_a_signed_response_replaces_an_unsigned_entry),
		cmocka_unit_test(test_newer_data_replaces_a_signed_entry),
		cmocka_unit_test(test_an_expired_signed_entry_never_stays),
		cmocka_unit_test(test_a_signed_refresh_replaces_a_signed_entry),
		cmocka_unit_test(test_merge_keeps_the_signed_entry_in_both_orders),
		cmocka_unit_test(test_merge_takes_newer_data_and_never_an_expired_entry),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
