/*
 * mkvectors: writes spec/vectors (make vectors). Review the diff before
 * committing: the vectors are the format's contract.
 *
 * valid/NNN-name.msg  the DNS response (corpus items 0..10, the worked examples)
 * valid/NNN-name.bin  Key_Len u16 LE | Key | Entry, encoded at now = 1700000000
 * valid/NNN-name.txt  the expected dump (cli/print.c, records printed by ldns)
 * invalid/NNN-name.bin + .err  "DNSNAP_EXXX key|entry OFFSET": one broken rule each
 * invalid/NNN-name.msg + .err  "DNSNAP_EXXX OFFSET": one malformed message each
 * examples.md          the worked examples, annotated (make vectors puts them
 *                      into spec/FORMAT.md between the VECTORS markers)
 *
 * The expected error of each invalid vector is written from the corruption
 * made here, not from what the validator says; the validator's answer is
 * compared and a disagreement is reported (and fails make vectors).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "wb.h"
#include "dnsnap.h"
#include "print.h"

#define NOW 1700000000u

static const char *const valid_names[CORPUS_FIXED] = {
	"a", "aaaa-set", "txt-200", "cname-chain", "nxdomain", "nodata", "dnssec-a",
	"mx", "referral", "unknown-type", "max-name",
};

static const char *dir;
static int mismatches;
static dnsnap_encoded_t enc;

static void write_file(const char *sub, const char *name, const char *ext, const void *p, size_t n)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s/%s.%s", dir, sub, name, ext);
	FILE *f = fopen(path, "wb");
	if (f == NULL || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

static size_t frame(uint8_t *out, const uint8_t *key, size_t kl, const uint8_t *e, size_t el)
{
	out[0] = (uint8_t)kl;
	out[1] = (uint8_t)(kl >> 8);
	memcpy(out + 2, key, kl);
	memcpy(out + 2 + kl, e, el);
	return 2 + kl + el;
}

/* A working copy of an encoded vector, to corrupt. */
typedef struct vec {
	uint8_t key[DNSNAP_KEY_MAX];
	size_t kl;
	uint8_t e[70000];
	size_t el;
} vec_t;

static vec_t base(size_t corpus_item)
{
	uint8_t *msg;
	size_t len;
	vec_t v;
	if (corpus_message(corpus_item, &msg, &len) != 0 ||
	    dnsnap_msg_encode(msg, len, NOW, NULL, 0, &enc, NULL) != DNSNAP_OK) {
		fprintf(stderr, "mkvectors: corpus item %zu does not encode\n", corpus_item);
		exit(1);
	}
	free(msg);
	memcpy(v.key, enc.key, enc.key_len);
	v.kl = enc.key_len;
	memcpy(v.e, enc.entry, enc.entry_len);
	v.el = enc.entry_len;
	return v;
}

/* Offset in the entry of record i (walks Rec_Len prefixes). */
static size_t rec_at(const vec_t *v, unsigned i)
{
	dnsnap_hdr_t h;
	dnsnap_entry_header(v->e, v->el, &h, NULL);
	size_t p = (size_t)(h.records - v->e);
	while (i--)
		p += 2 + (size_t)(v->e[p] | v->e[p + 1] << 8);
	return p;
}

static void put16(uint8_t *p, unsigned x) { p[0] = (uint8_t)x; p[1] = (uint8_t)(x >> 8); }
static unsigned get16(const uint8_t *p) { return (unsigned)(p[0] | p[1] << 8); }

static void invalid(const char *name, const vec_t *v, int err, const char *where, size_t off)
{
	static uint8_t buf[2 + DNSNAP_KEY_MAX + sizeof v->e];
	char line[128];
	snprintf(line, sizeof line, "%s %s %zu\n", dnsnap_errname(err), where, off);
	write_file("invalid", name, "bin", buf, frame(buf, v->key, v->kl, v->e, v->el));
	write_file("invalid", name, "err", line, strlen(line));

	dnsnap_diag_t d;
	dnsnap_key_t k;
	char got[128];
	int e = dnsnap_key_decode(v->key, v->kl, &k, &d);
	if (e != DNSNAP_OK)
		snprintf(got, sizeof got, "%s key %zu\n", dnsnap_errname(e), d.offset);
	else if ((e = dnsnap_entry_validate(v->e, v->el, &d)) != DNSNAP_OK)
		snprintf(got, sizeof got, "%s entry %zu\n", dnsnap_errname(e), d.offset);
	else
		snprintf(got, sizeof got, "DNSNAP_OK\n");
	if (strcmp(got, line) != 0) {
		fprintf(stderr, "mkvectors: %s: expected %s   validator says %s", name, line, got);
		mismatches++;
	}
}

static void invalid_msg(const char *name, const uint8_t *msg, size_t len, int err, size_t off)
{
	char line[128], got[128];
	snprintf(line, sizeof line, "%s %zu\n", dnsnap_errname(err), off);
	write_file("invalid", name, "msg", msg, len);
	write_file("invalid", name, "err", line, strlen(line));
	dnsnap_diag_t d;
	int e = dnsnap_msg_encode(msg, len, NOW, NULL, 0, &enc, &d);
	snprintf(got, sizeof got, "%s %zu\n", dnsnap_errname(e), e ? d.offset : 0);
	if (strcmp(got, line) != 0) {
		fprintf(stderr, "mkvectors: %s: expected %s   encoder says %s", name, line, got);
		mismatches++;
	}
}

/* ------------------------------------------------- hand-built messages */
/* header with QR, RD, RA set; then the question www.example.com A IN */
static wb_t msg_start(unsigned flags, unsigned qd, unsigned an, unsigned ns, unsigned ar)
{
	wb_t m = { .n = 0 }; /* zeroed: some vectors use bytes past what was written */
	put_header(&m, flags, qd, an, ns, ar);
	set_u16(&m, 0, 0x1234);
	put_name(&m, "www.example.com");
	put_u16(&m, 1);
	put_u16(&m, 1);
	return m;
}
static void put_rr(wb_t *m, unsigned type, unsigned rdlen, const void *rdata)
{
	put_u16(m, 0xc00c);
	put_u16(m, type);
	put_u16(m, 1);
	put_u32(m, 300);
	put_u16(m, rdlen);
	put_raw(m, rdata, rdlen);
}

static void invalid_messages(void)
{
	static const uint8_t ip[16] = { 192, 0, 2, 1 };
	wb_t m = msg_start(0x8180, 1, 0, 0, 0);
	invalid_msg("201-msg-header-cut", m.b, 5, DNSNAP_ETRUNC, 0);

	m = msg_start(0x8180, 1, 0, 0, 0);
	m.b[12] = 64; /* the first label's length */
	invalid_msg("202-msg-label-over-63", m.b, m.n, DNSNAP_ELABEL, 12);

	m = msg_start(0x8180, 1, 0, 0, 0);
	m.n = 12;
	for (int i = 0; i < 5; i++) { /* 5 x 51 bytes = 255 before the root label */
		put_u8(&m, 50);
		memset(m.b + m.n, 'a', 50);
		m.n += 50;
	}
	put_u8(&m, 0);
	put_u16(&m, 1);
	put_u16(&m, 1);
	invalid_msg("203-msg-name-over-255", m.b, m.n, DNSNAP_ENAME, 12 + 4 * 51);

	m = msg_start(0x8180, 1, 1, 0, 0);
	size_t self = m.n;
	put_u16(&m, 0xc000 | (unsigned)self); /* an owner pointing at itself */
	invalid_msg("204-msg-pointer-loop", m.b, m.n + 10, DNSNAP_EPOINTER, self);

	m = msg_start(0x8180, 1, 1, 0, 0);
	put_u16(&m, 0xc000 | (unsigned)(m.n + 12)); /* forward, into its own rdata */
	put_u16(&m, 5);
	put_u16(&m, 1);
	put_u32(&m, 300);
	put_u16(&m, 2);
	put_u16(&m, 0xc00c);
	invalid_msg("205-msg-pointer-forward", m.b, m.n, DNSNAP_EPOINTER, m.n - 14);

	m = msg_start(0x8180, 1, 0, 0, 0);
	m.n = 12; /* a question name pointing into the header */
	put_u16(&m, 0xc002);
	put_u16(&m, 1);
	put_u16(&m, 1);
	invalid_msg("206-msg-pointer-into-header", m.b, m.n, DNSNAP_EPOINTER, 12);

	m = msg_start(0x8180, 1, 2, 0, 0);
	put_rr(&m, 1, 4, ip);
	invalid_msg("207-msg-counts-overrun", m.b, m.n, DNSNAP_ECOUNT, m.n);

	m = msg_start(0x8180, 1, 1, 0, 0);
	put_rr(&m, 1, 4, ip);
	m.b[m.n - 5] = 5; /* rdlength 5 with 4 bytes left */
	invalid_msg("208-msg-rdlength-overrun", m.b, m.n, DNSNAP_ERDLEN, m.n - 6);

	m = msg_start(0x8180, 1, 1, 0, 0);
	put_rr(&m, 1, 5, ip);
	invalid_msg("209-msg-a-rdata-5", m.b, m.n, DNSNAP_ERDATA, m.n - 5);

	m = msg_start(0x8180, 1, 1, 0, 0);
	put_rr(&m, 28, 4, ip);
	invalid_msg("210-msg-aaaa-rdata-4", m.b, m.n, DNSNAP_ERDATA, m.n - 4);

	m = msg_start(0x8180, 1, 0, 0, 2);
	size_t second = 0;
	for (int i = 0; i < 2; i++) {
		second = m.n;
		put_u8(&m, 0);
		put_u16(&m, 41);
		put_u16(&m, 1232);
		put_u32(&m, 0);
		put_u16(&m, 0);
	}
	invalid_msg("211-msg-second-opt", m.b, m.n, DNSNAP_EOPT, second);

	m = msg_start(0x8180, 1, 1, 0, 0);
	size_t opt = m.n;
	put_u8(&m, 0);
	put_u16(&m, 41);
	put_u16(&m, 1232);
	put_u32(&m, 0);
	put_u16(&m, 0);
	invalid_msg("212-msg-opt-in-answer", m.b, m.n, DNSNAP_EOPT, opt);

	m = msg_start(0x8180, 1, 0, 0, 1);
	opt = m.n;
	put_u8(&m, 0);
	put_u16(&m, 41);
	put_u16(&m, 1232);
	put_u32(&m, 0x01000000); /* extended RCODE 16 (BADVERS): no answer to cache */
	put_u16(&m, 0);
	invalid_msg("218-msg-extended-rcode", m.b, m.n, DNSNAP_ENOTCACHE, opt);

	m = msg_start(0x0100, 1, 0, 0, 0);
	invalid_msg("213-msg-query-not-response", m.b, m.n, DNSNAP_ENOTCACHE, 2);

	m = msg_start(0x8380, 1, 0, 0, 0);
	invalid_msg("214-msg-truncated-tc", m.b, m.n, DNSNAP_ENOTCACHE, 2);

	m = msg_start(0x8180, 2, 0, 0, 0);
	invalid_msg("215-msg-qdcount-2", m.b, m.n, DNSNAP_ENOTCACHE, 4);

	m = msg_start(0x8180, 1, 0, 0, 0);
	m.b[12] = 0x43; /* label type 01 (extended label, RFC 6891: obsolete) */
	invalid_msg("216-msg-label-type-0x40", m.b, m.n, DNSNAP_ELABEL, 12);

	m = msg_start(0x8180, 1, 1, 0, 0);
	put_u16(&m, 0xc00c);
	put_u16(&m, 6); /* SOA with the names and only 19 of its 20 fixed bytes */
	put_u16(&m, 1);
	put_u32(&m, 300);
	put_u16(&m, 2 + 2 + 19);
	size_t soa_rdata = m.n;
	put_u16(&m, 0xc00c);
	put_u16(&m, 0xc00c);
	m.n += 19;
	invalid_msg("217-msg-soa-rdata-short", m.b, m.n, DNSNAP_ERDATA, soa_rdata);
}

/* ------------------------------------------------- broken entries */
static void invalid_entries(void)
{
	enum { V_A = 0, V_CNAME = 3, V_NXDOMAIN = 4, V_DNSSEC = 6, V_REFERRAL = 8 };
	vec_t v;

	v = base(V_A);
	v.el = 10;
	invalid("101-entry-header-cut", &v, DNSNAP_ETRUNC, "entry", 8);

	v = base(V_A);
	v.e[13] |= 0x10;
	invalid("102-entry-reserved-flag", &v, DNSNAP_ERESERVED, "entry", 12);

	v = base(V_A);
	v.e[rec_at(&v, 0) + 2] |= 0x10;
	invalid("103-record-reserved-flag", &v, DNSNAP_ERESERVED, "entry", rec_at(&v, 0) + 2);

	v = base(V_A);
	v.e[rec_at(&v, 0) + 2] |= DNSNAP_RF_SAME;
	invalid("104-same-on-first-record", &v, DNSNAP_EFIELD, "entry", rec_at(&v, 0) + 2);

	/* cname-chain: 0 www CNAME cdn (QNAME), 1 cdn A (TARGET 0), 2 A (SAME) */
	v = base(V_CNAME);
	size_t r1 = rec_at(&v, 1);
	v.e[r1 + 9] = 1; /* TARGET 0 -> TARGET 1: not an earlier record */
	invalid("105-owner-ref-not-earlier", &v, DNSNAP_EFIELD, "entry", r1 + 9);

	v = base(V_CNAME);
	v.e[r1 + 2] = (uint8_t)((v.e[r1 + 2] & ~DNSNAP_RF_OWNER) | DNSNAP_OWNER_REF);
	invalid("106-owner-ref-to-query-name", &v, DNSNAP_EFIELD, "entry", r1 + 9);

	/* referral: 0 NS, 1 NS (SAME), 2 ns1 A (TARGET 0), 3 ns1 AAAA (TARGET 0), ... */
	v = base(V_REFERRAL);
	size_t r3 = rec_at(&v, 3);
	v.e[r3 + 9] = 2; /* TARGET 2: an A record has no name to be the target */
	invalid("125-owner-target-not-a-name-record", &v, DNSNAP_EFIELD, "entry", r3 + 9);

	v = base(V_A);
	put16(v.e + 14, 1);
	invalid("107-auth-off-not-on-a-record", &v, DNSNAP_EFIELD, "entry", 14);

	v = base(V_A);
	put16(v.e + 14, 2);
	put16(v.e + 16, 1);
	invalid("108-section-offsets-out-of-order", &v, DNSNAP_EFIELD, "entry", 14);

	v = base(V_A);
	v.e[rec_at(&v, 0) + 8] |= 0x80; /* TTL's top byte (u32 LE at +5) */
	invalid("109-ttl-over-2-31", &v, DNSNAP_EFIELD, "entry", rec_at(&v, 0) + 5);

	v = base(V_NXDOMAIN);
	v.e[12] &= 0xf0; /* rcode NOERROR, kind still NXDOMAIN */
	invalid("110-nxdomain-kind-without-rcode", &v, DNSNAP_EFIELD, "entry", 12);

	v = base(V_A);
	v.e[12] |= DNSNAP_EF_DNSSEC;
	invalid("111-dnssec-flag-without-records", &v, DNSNAP_EFIELD, "entry", 12);

	v = base(V_DNSSEC);
	v.e[12] &= (uint8_t)~DNSNAP_EF_DNSSEC;
	invalid("112-dnssec-records-without-flag", &v, DNSNAP_EFIELD, "entry", 12);

	v = base(V_A);
	put16(v.e + rec_at(&v, 0) + 3, 41);
	invalid("113-opt-record-stored", &v, DNSNAP_EFIELD, "entry", rec_at(&v, 0) + 3);

	/* extension area: EXT flag, then Ext_Len and TLVs inserted after the header */
	static const struct {
		const char *name;
		uint8_t ext[8];
		size_t n;
		int err;
		size_t off;
	} exts[] = {
		{ "114-extension-area-empty", { 0, 0 }, 2, DNSNAP_EFIELD, 18 },
		{ "115-extension-overruns-area", { 3, 0, 7, 5, 0, 1 }, 5, DNSNAP_ETRUNC, 20 },
		{ "116-ede-shorter-than-2", { 4, 0, 1, 1, 0, 9 }, 6, DNSNAP_EFIELD, 20 },
	};
	for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
		v = base(V_A);
		memmove(v.e + 18 + exts[i].n, v.e + 18, v.el - 18);
		memcpy(v.e + 18, exts[i].ext, exts[i].n);
		v.el += exts[i].n;
		v.e[13] |= DNSNAP_EF_EXT >> 8;
		invalid(exts[i].name, &v, exts[i].err, "entry", exts[i].off);
	}

	v = base(V_A);
	size_t r0 = rec_at(&v, 0);
	put16(v.e + r0, get16(v.e + r0) - 1);
	put16(v.e + 14, get16(v.e + 14) - 1); /* the sections end one byte sooner */
	put16(v.e + 16, get16(v.e + 16) - 1);
	v.el--;
	invalid("117-a-rdata-3-bytes", &v, DNSNAP_ERDATA, "entry", v.el - 3);

	v = base(V_CNAME);
	size_t cname_rdata = rec_at(&v, 0) + 2 + 1 + 2 + 4; /* QNAME owner: no owner bytes */
	v.e[cname_rdata] = 0xc0;
	invalid("118-pointer-in-rdata-name", &v, DNSNAP_ELABEL, "entry", cname_rdata);

	v = base(V_A);
	put16(v.e + r0, get16(v.e + r0) + 1);
	invalid("119-record-overruns-entry", &v, DNSNAP_ETRUNC, "entry", r0);

	v = base(V_A);
	uint32_t inception = (uint32_t)(get16(v.e) | get16(v.e + 2) << 16) - 1;
	put16(v.e + 4, inception & 0xffff); /* expiry = inception - 1 */
	put16(v.e + 6, inception >> 16);
	invalid("120-expiry-before-inception", &v, DNSNAP_EFIELD, "entry", 4);

	/* referral: NS in authority, glue in additional; the first glue record
	 * claims to continue the NS RRset of the section before */
	v = base(V_REFERRAL);
	dnsnap_hdr_t h;
	dnsnap_entry_header(v.e, v.el, &h, NULL);
	size_t first_addl = (size_t)(h.records - v.e) + h.addl_off;
	v.e[first_addl + 2] = DNSNAP_RF_SAME;
	invalid("121-same-across-sections", &v, DNSNAP_EFIELD, "entry", first_addl + 2);

	v = base(V_A);
	r0 = rec_at(&v, 0);
	v.e[r0 + 2] = DNSNAP_OWNER_NAME; /* explicit owner: a label of 64 */
	memmove(v.e + r0 + 9 + 66, v.e + r0 + 9, 4);
	v.e[r0 + 9] = 64;
	memset(v.e + r0 + 10, 'a', 64);
	v.e[r0 + 74] = 0;
	put16(v.e + r0, get16(v.e + r0) + 66);
	v.el += 66;
	invalid("122-owner-label-over-63", &v, DNSNAP_ELABEL, "entry", r0 + 9);

	v = base(V_A);
	r0 = rec_at(&v, 0);
	v.e[r0 + 2] = DNSNAP_OWNER_NAME; /* explicit owner of 5 x 51 + 1 bytes */
	memmove(v.e + r0 + 9 + 256, v.e + r0 + 9, 4);
	for (size_t i = 0; i < 5; i++) {
		v.e[r0 + 9 + 51 * i] = 50;
		memset(v.e + r0 + 10 + 51 * i, 'a', 50);
	}
	v.e[r0 + 9 + 255] = 0;
	put16(v.e + r0, get16(v.e + r0) + 256);
	v.el += 256;
	invalid("123-owner-name-over-255", &v, DNSNAP_ENAME, "entry", r0 + 9 + 4 * 51);

	v = base(V_A);
	memset(v.e + 18, 0, 65536); /* records of 65536 bytes: over the u16 offsets */
	v.el = 18 + 65536;
	invalid("124-records-over-65535", &v, DNSNAP_ETOOBIG, "entry", 18);

	v = base(V_A);
	put16(v.e + 16, get16(v.e + 16) + 1);
	invalid("126-addl-off-past-records", &v, DNSNAP_EFIELD, "entry", 16);

	v = base(V_REFERRAL); /* additional starts at the glue; move it into a record */
	put16(v.e + 16, get16(v.e + 16) + 1);
	invalid("127-addl-off-not-on-a-record", &v, DNSNAP_EFIELD, "entry", 16);

	v = base(V_A);
	r0 = rec_at(&v, 0);
	v.e[r0 + 2] |= DNSNAP_RF_CLASS; /* Class 1 stored: IN must cost no bytes */
	memmove(v.e + r0 + 7, v.e + r0 + 5, v.el - r0 - 5);
	put16(v.e + r0 + 5, 1);
	put16(v.e + r0, get16(v.e + r0) + 2);
	put16(v.e + 14, get16(v.e + 14) + 2);
	put16(v.e + 16, get16(v.e + 16) + 2);
	v.el += 2;
	invalid("128-class-in-stored", &v, DNSNAP_EFIELD, "entry", r0 + 5);

	v = base(V_A);
	r0 = rec_at(&v, 0);
	put16(v.e + r0 + 3, 250);
	invalid("129-tsig-record-stored", &v, DNSNAP_EFIELD, "entry", r0 + 3);

	v = base(V_A); /* a record of Rec_Len 0 after the A record: no Rec_Flags */
	memset(v.e + v.el, 0, 2);
	v.el += 2;
	invalid("135-record-without-flags", &v, DNSNAP_ETRUNC, "entry", v.el - 2);

	/* nxdomain: the authority SOA loses the last byte of its fixed part */
	v = base(V_NXDOMAIN);
	{
		static const uint8_t root[1] = { 0 };
		dnsnap_iter_t it;
		dnsnap_rr_t rr;
		dnsnap_iter_init(&it, v.e, v.el, root, 1);
		while (dnsnap_iter_next(&it, &rr) == 1 && rr.type != 6)
			;
		put16(v.e + rr.offset, get16(v.e + rr.offset) - 1);
		memmove(v.e + rr.offset + 2 + get16(v.e + rr.offset),
			v.e + rr.offset + 3 + get16(v.e + rr.offset),
			v.el - (rr.offset + 3 + get16(v.e + rr.offset)));
		put16(v.e + 16, get16(v.e + 16) - 1);
		v.el--;
		invalid("136-soa-rdata-short", &v, DNSNAP_ERDATA, "entry",
			(size_t)(rr.rdata - v.e));
	}

	/* keys */
	v = base(V_A);
	v.key[v.kl - 2] = 0x02;
	invalid("130-key-reserved-flag", &v, DNSNAP_ERESERVED, "key", v.kl - 2);

	v = base(V_A);
	v.key[1] = 'C';
	invalid("131-key-upper-case", &v, DNSNAP_EFIELD, "key", 1);

	v = base(V_A);
	v.key[v.kl++] = 0;
	invalid("132-key-trailing-bytes", &v, DNSNAP_EFIELD, "key", v.kl - 1);

	v = base(V_A);
	v.kl -= 3;
	invalid("133-key-cut", &v, DNSNAP_ETRUNC, "key", v.kl - 1);

	v = base(V_A);
	v.key[v.kl - 1] = 1; /* Tag_Len 1, no tag */
	invalid("137-key-tag-len-overruns", &v, DNSNAP_ETRUNC, "key", v.kl - 1);

	v = base(V_A);
	v.key[0] = 0x40;
	invalid("134-key-label-over-63", &v, DNSNAP_ELABEL, "key", 0);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mkvectors DIR (normally spec/vectors)\n");
		return 2;
	}
	dir = argv[1];
	char mdpath[512];
	snprintf(mdpath, sizeof mdpath, "%s/examples.md", dir);
	FILE *md = fopen(mdpath, "w");
	if (md == NULL) {
		perror(mdpath);
		return 1;
	}
	for (size_t i = 0; i < CORPUS_FIXED; i++) {
		uint8_t *msg;
		size_t len;
		char name[64];
		int err;
		if (corpus_message(i, &msg, &len) != 0)
			return 1;
		if ((err = dnsnap_msg_encode(msg, len, NOW, NULL, 0, &enc, NULL)) != DNSNAP_OK) {
			fprintf(stderr, "mkvectors: worked example %zu: %s\n", i, dnsnap_errname(err));
			return 1;
		}
		snprintf(name, sizeof name, "%03zu-%s", i + 1, valid_names[i]);
		write_file("valid", name, "msg", msg, len);
		static uint8_t buf[2 + DNSNAP_KEY_MAX + DNSNAP_ENTRY_MAX];
		write_file("valid", name, "bin", buf,
			   frame(buf, enc.key, enc.key_len, enc.entry, enc.entry_len));
		char *txt;
		size_t tlen;
		FILE *f = open_memstream(&txt, &tlen);
		print_entry(f, enc.key, enc.key_len, enc.entry, enc.entry_len);
		fclose(f);
		write_file("valid", name, "txt", txt, tlen);
		fprintf(md, "### %s\n\nDNS response %zu bytes; key %zu bytes; entry %zu bytes.\n\n"
			"```\n", name, len, enc.key_len, enc.entry_len);
		print_layout(md, enc.key, enc.key_len, enc.entry, enc.entry_len);
		fprintf(md, "```\n\n```\n%s```\n\n", txt);
		printf("%-20s wire %4zu  key %3zu  entry %4zu\n", name, len, enc.key_len,
		       enc.entry_len);
		free(txt);
		free(msg);
	}
	fclose(md);
	invalid_messages();
	invalid_entries();
	if (mismatches)
		fprintf(stderr, "mkvectors: %d vectors disagree with the library\n", mismatches);
	return mismatches ? 1 : 0;
}
