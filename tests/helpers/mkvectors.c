/*
 * mkvectors: writes spec/vectors (make vectors). Review the diff before
 * committing: the vectors are the format's contract.
 *
 * valid/NNN-name.msg  the DNS response (corpus items 0..10, the worked examples;
 *                      012 is built here: a DNAME whose target came compressed)
 * valid/NNN-name.bin  Key_Len u16 LE | Key | Entry, encoded at now = 1700000000
 * valid/NNN-name.txt  the expected dump (cli/print.c, records printed by ldns)
 * invalid/NNN-name.bin + .err  "DNSNAP_EXXX key|entry OFFSET": one broken rule each
 * invalid/NNN-name.msg + .err  "DNSNAP_EXXX OFFSET": one malformed message each
 * valid/3NN-stream-name.dnsx + .txt  export streams that import, and the dump
 *                      of their entries in key order
 * invalid/3NN-stream-name.dnsx + .err  "DNSNAP_EXXX OFFSET|zstd [TEXT]": one
 *                      broken stream each
 * examples.md          the worked examples, annotated (make vectors puts them
 *                      into spec/FORMAT.md between the VECTORS markers)
 * streams.md           the stream vectors listed (between the STREAMS markers)
 *
 * The expected error of each invalid vector is written from the corruption
 * made here, not from what the validator says; the validator's answer is
 * compared and a disagreement is reported (and fails make vectors).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>
#include <zstd.h>

#include "corpus.h"
#include "tmpdir.h"
#include "wb.h"
#include "dnsnap.h"
#include "mkvectors.h"
#include "print.h"
#include "byteorder.h"

static const char *const valid_names[CORPUS_FIXED] = {
	"a", "aaaa-set", "txt-200", "cname-chain", "nxdomain", "nodata", "dnssec-a",
	"mx", "referral", "unknown-type", "max-name",
};

const char *mkv_dir;
int mkv_mismatches;
static dnsnap_encoded_t enc;

void mkv_write(const char *sub, const char *name, const char *ext, const void *p, size_t n)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s/%s.%s", mkv_dir, sub, name, ext);
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

vec_t mkv_encode(const uint8_t *msg, size_t len)
{
	vec_t v;
	int err = dnsnap_msg_encode(msg, len, NOW, NULL, 0, &enc, NULL);
	if (err != DNSNAP_OK) {
		fprintf(stderr, "mkvectors: a message does not encode: %s\n", dnsnap_errname(err));
		exit(1);
	}
	memcpy(v.key, enc.key, enc.key_len);
	v.kl = enc.key_len;
	memcpy(v.e, enc.entry, enc.entry_len);
	v.el = enc.entry_len;
	return v;
}

vec_t mkv_base(size_t corpus_item)
{
	uint8_t *msg;
	size_t len;
	if (corpus_message(corpus_item, &msg, &len) != 0) {
		fprintf(stderr, "mkvectors: no corpus item %zu\n", corpus_item);
		exit(1);
	}
	vec_t v = mkv_encode(msg, len);
	free(msg);
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


static void invalid(const char *name, const vec_t *v, int err, const char *where, size_t off)
{
	static uint8_t buf[2 + DNSNAP_KEY_MAX + sizeof v->e];
	char line[128];
	snprintf(line, sizeof line, "%s %s %zu\n", dnsnap_errname(err), where, off);
	mkv_write("invalid", name, "bin", buf, frame(buf, v->key, v->kl, v->e, v->el));
	mkv_write("invalid", name, "err", line, strlen(line));

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
		mkv_mismatches++;
	}
}

static void invalid_msg(const char *name, const uint8_t *msg, size_t len, int err, size_t off)
{
	char line[128], got[128];
	snprintf(line, sizeof line, "%s %zu\n", dnsnap_errname(err), off);
	mkv_write("invalid", name, "msg", msg, len);
	mkv_write("invalid", name, "err", line, strlen(line));
	dnsnap_diag_t d;
	int e = dnsnap_msg_encode(msg, len, NOW, NULL, 0, &enc, &d);
	snprintf(got, sizeof got, "%s %zu\n", dnsnap_errname(e), e ? d.offset : 0);
	if (strcmp(got, line) != 0) {
		fprintf(stderr, "mkvectors: %s: expected %s   encoder says %s", name, line, got);
		mkv_mismatches++;
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

/*
 * A response whose records take exactly 65535 bytes in the entry, then one
 * more record that crosses the limit. The header counts `an` more answer
 * records and `ar` additional ones, for the caller to append. Query www.example.com
 * A; every owner is a pointer to the question name (QNAME, no owner bytes):
 *   record 0      TXT, 246 bytes of rdata          9 + 246 = 255 bytes
 *   record 1      NS, a 255-byte name              9 + 255 = 264 bytes
 *   records 2-253 NS, a pointer to that name: SAME 3 + 255 = 258 bytes each
 * 255 + 264 + 252 * 258 = 65535. Record 254, one more NS like the others,
 * crosses (65793); with bad_rdata one byte follows its pointer. *cross is
 * record 254's first byte in the message, *cross_rdata its rdata's.
 */
static void big_records(wb_t *m, unsigned an, unsigned ar, int bad_rdata, size_t *cross,
			size_t *cross_rdata)
{
	*m = (wb_t){ .n = 0 };
	put_header(m, 0x8180, 1, 255 + an, 0, ar);
	put_name(m, "www.example.com");
	put_u16(m, 1);
	put_u16(m, 1);
	put_u16(m, 0xc00c);
	size_t rl = put_fixed(m, 16, 1, 300);
	put_u8(m, 245);
	for (int i = 0; i < 245; i++)
		put_u8(m, 'x');
	end_rdata(m, rl);
	size_t target = 0;
	for (unsigned i = 1; i < 255; i++) {
		*cross = m->n;
		put_u16(m, 0xc00c);
		rl = put_fixed(m, 2, 1, 300);
		*cross_rdata = m->n;
		if (i == 1) {
			target = m->n;
			put_label(m, 63, 'a');
			put_label(m, 63, 'b');
			put_label(m, 63, 'c');
			put_label(m, 61, 'd');
			put_u8(m, 0);
		} else {
			put_ptr(m, target);
		}
		if (i == 254 && bad_rdata)
			put_u8(m, 0);
		end_rdata(m, rl);
	}
	/* the geometry above: records 0-253 fill the limit exactly */
	wb_t fit = *m;
	set_u16(&fit, 6, 254);
	set_u16(&fit, 10, 0);
	if (dnsnap_msg_encode(fit.b, *cross, NOW, NULL, 0, &enc, NULL) != DNSNAP_OK ||
	    enc.entry_len != DNSNAP_ENTRY_HDR + DNSNAP_RECORDS_MAX) {
		fprintf(stderr, "mkvectors: records 0-253 of the big message do not fill 65535\n");
		mkv_mismatches++;
	}
}

/* ------------------------------------------------- a compressed DNAME */
/*
 * www.corp.example.com A, answered through corp.example.com DNAME
 * example.com: the DNAME's target is compressed (c0 15, "example.com." in
 * the question) as some servers send it although RFC 6672 says it must not
 * be; then the synthesized CNAME www.corp.example.com -> www.example.com and
 * its A. Question name at 12: www 12, corp 16, example 21, com 29.
 */
static wb_t dname_message(size_t *dname_rdata)
{
	wb_t m = { .n = 0 };
	put_header(&m, 0x8180, 1, 3, 0, 0);
	set_u16(&m, 0, 0x4444);
	put_name(&m, "www.corp.example.com");
	put_u16(&m, 1);
	put_u16(&m, 1);
	put_ptr(&m, 16); /* corp.example.com */
	size_t rl = put_fixed(&m, 39, 1, 3600);
	*dname_rdata = m.n;
	put_ptr(&m, 21); /* example.com: compressed DNAME rdata */
	end_rdata(&m, rl);
	put_ptr(&m, 12);
	rl = put_fixed(&m, 5, 1, 3600);
	size_t target = m.n;
	put_labels(&m, "www");
	put_ptr(&m, 21);
	end_rdata(&m, rl);
	put_ptr(&m, target);
	rl = put_fixed(&m, 1, 1, 300);
	put_u32(&m, 0xc0000250); /* 192.0.2.80 */
	end_rdata(&m, rl);
	return m;
}

/* example.com TYPE65280 with empty rdata: dumped in RFC 3597's form, "\\# 0" */
static wb_t empty_unknown_message(void)
{
	wb_t m = { .n = 0 };
	put_header(&m, 0x8180, 1, 1, 0, 0);
	set_u16(&m, 0, 0x5555);
	put_name(&m, "example.com");
	put_u16(&m, 0xff00);
	put_u16(&m, 1);
	put_ptr(&m, 12);
	end_rdata(&m, put_fixed(&m, 0xff00, 1, 300));
	return m;
}

/*
 * A referral for www.example.net A whose additional section starts with an
 * OPT: example.net NS ns1.example.net (record 0), then OPT (not stored),
 * glue.example.net A (record 1, NAME: not the NS target), glue.example.net
 * AAAA twice (record 2: REF to record 1, which is message record 2: REF and
 * TARGET count stored records; record 3: SAME, which wins over REF).
 */
static wb_t ref_after_opt_message(void)
{
	static const uint8_t v6a[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	static const uint8_t v6b[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 };
	wb_t m = { .n = 0 };
	put_header(&m, 0x8100, 1, 0, 1, 4);
	set_u16(&m, 0, 0x6666);
	put_name(&m, "www.example.net");
	put_u16(&m, 1);
	put_u16(&m, 1);
	put_ptr(&m, 16); /* example.net */
	size_t rl = put_fixed(&m, 2, 1, 172800);
	put_labels(&m, "ns1");
	put_ptr(&m, 16);
	end_rdata(&m, rl);
	put_u8(&m, 0); /* OPT: root owner, UDP size 1232, no options */
	put_u16(&m, 41);
	put_u16(&m, 1232);
	put_u32(&m, 0);
	put_u16(&m, 0);
	size_t glue = m.n;
	put_labels(&m, "glue");
	put_ptr(&m, 16);
	rl = put_fixed(&m, 1, 1, 172800);
	put_u32(&m, 0xc0000235); /* 192.0.2.53 */
	end_rdata(&m, rl);
	const uint8_t *const v6[2] = { v6a, v6b };
	for (int i = 0; i < 2; i++) {
		put_ptr(&m, glue);
		rl = put_fixed(&m, 28, 1, 172800);
		put_raw(&m, v6[i], 16);
		end_rdata(&m, rl);
	}
	return m;
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

	/* DNAME rdata names are read as names now: a pointer to itself */
	size_t dn;
	m = dname_message(&dn);
	set_u16(&m, dn, 0xc000 | (unsigned)dn);
	invalid_msg("222-msg-dname-pointer-to-itself", m.b, m.n, DNSNAP_EPOINTER, dn);

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

	/* Records over 65535 bytes (DNSNAP_ETOOBIG at the crossing record),
	 * each with a second error that a reader checking in another order
	 * would report instead. */
	size_t cross, cross_rdata;
	static wb_t big; /* a message of about 4 KiB */
	big_records(&big, 1, 0, 0, &cross, &cross_rdata);
	put_rr(&big, 1, 5, ip); /* after the crossing: an A record of 5 bytes */
	invalid_msg("219-msg-too-big-before-later-record", big.b, big.n, DNSNAP_ETOOBIG, cross);

	big_records(&big, 0, 1, 0, &cross, &cross_rdata);
	put_u8(&big, 0);
	put_u16(&big, 41);
	put_u16(&big, 1232);
	put_u32(&big, 0x01000000); /* extended RCODE 16, as 218 */
	put_u16(&big, 0);
	invalid_msg("220-msg-too-big-before-extended-rcode", big.b, big.n, DNSNAP_ETOOBIG, cross);

	big_records(&big, 0, 0, 1, &cross, &cross_rdata);
	invalid_msg("221-msg-crossing-record-rdata-first", big.b, big.n, DNSNAP_ERDATA,
		    cross_rdata);
}

/* ------------------------------------------------- broken entries */
static void invalid_entries(void)
{
	enum { V_A = 0, V_AAAA = 1, V_CNAME = 3, V_NXDOMAIN = 4, V_DNSSEC = 6, V_REFERRAL = 8 };
	vec_t v;

	v = mkv_base(V_A);
	v.el = 10;
	invalid("101-entry-header-cut", &v, DNSNAP_ETRUNC, "entry", 8);

	v = mkv_base(V_A);
	v.e[13] |= 0x10;
	invalid("102-entry-reserved-flag", &v, DNSNAP_ERESERVED, "entry", 12);

	v = mkv_base(V_A);
	v.e[rec_at(&v, 0) + 2] |= 0x10;
	invalid("103-record-reserved-flag", &v, DNSNAP_ERESERVED, "entry", rec_at(&v, 0) + 2);

	v = mkv_base(V_A);
	v.e[rec_at(&v, 0) + 2] |= DNSNAP_RF_SAME;
	invalid("104-same-on-first-record", &v, DNSNAP_EFIELD, "entry", rec_at(&v, 0) + 2);

	/* cname-chain: 0 www CNAME cdn (QNAME), 1 cdn A (TARGET 0), 2 A (SAME) */
	v = mkv_base(V_CNAME);
	size_t r1 = rec_at(&v, 1);
	v.e[r1 + 9] = 1; /* TARGET 0 -> TARGET 1: not an earlier record */
	invalid("105-owner-ref-not-earlier", &v, DNSNAP_EFIELD, "entry", r1 + 9);

	v = mkv_base(V_CNAME);
	v.e[r1 + 2] = (uint8_t)((v.e[r1 + 2] & ~DNSNAP_RF_OWNER) | DNSNAP_OWNER_REF);
	invalid("106-owner-ref-to-query-name", &v, DNSNAP_EFIELD, "entry", r1 + 9);

	/* referral: 0 NS, 1 NS (SAME), 2 ns1 A (TARGET 0), 3 ns1 AAAA (TARGET 0), ... */
	v = mkv_base(V_REFERRAL);
	size_t r3 = rec_at(&v, 3);
	v.e[r3 + 9] = 2; /* TARGET 2: an A record has no name to be the target */
	invalid("125-owner-target-not-a-name-record", &v, DNSNAP_EFIELD, "entry", r3 + 9);

	v = mkv_base(V_A);
	st16le(v.e + 14, 1);
	invalid("107-auth-off-not-on-a-record", &v, DNSNAP_EFIELD, "entry", 14);

	v = mkv_base(V_A);
	st16le(v.e + 14, 2);
	st16le(v.e + 16, 1);
	invalid("108-section-offsets-out-of-order", &v, DNSNAP_EFIELD, "entry", 14);

	v = mkv_base(V_A);
	v.e[rec_at(&v, 0) + 8] |= 0x80; /* TTL's top byte (u32 LE at +5) */
	invalid("109-ttl-over-2-31", &v, DNSNAP_EFIELD, "entry", rec_at(&v, 0) + 5);

	v = mkv_base(V_NXDOMAIN);
	v.e[12] &= 0xf0; /* rcode NOERROR, kind still NXDOMAIN */
	invalid("110-nxdomain-kind-without-rcode", &v, DNSNAP_EFIELD, "entry", 12);

	v = mkv_base(V_A);
	v.e[12] |= DNSNAP_EF_DNSSEC;
	invalid("111-dnssec-flag-without-records", &v, DNSNAP_EFIELD, "entry", 12);

	v = mkv_base(V_DNSSEC);
	v.e[12] &= (uint8_t)~DNSNAP_EF_DNSSEC;
	invalid("112-dnssec-records-without-flag", &v, DNSNAP_EFIELD, "entry", 12);

	v = mkv_base(V_A);
	st16le(v.e + rec_at(&v, 0) + 3, 41);
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
		v = mkv_base(V_A);
		memmove(v.e + 18 + exts[i].n, v.e + 18, v.el - 18);
		memcpy(v.e + 18, exts[i].ext, exts[i].n);
		v.el += exts[i].n;
		v.e[13] |= DNSNAP_EF_EXT >> 8;
		invalid(exts[i].name, &v, exts[i].err, "entry", exts[i].off);
	}

	v = mkv_base(V_A);
	size_t r0 = rec_at(&v, 0);
	st16le(v.e + r0, ld16le(v.e + r0) - 1);
	st16le(v.e + 14, ld16le(v.e + 14) - 1); /* the sections end one byte sooner */
	st16le(v.e + 16, ld16le(v.e + 16) - 1);
	v.el--;
	invalid("117-a-rdata-3-bytes", &v, DNSNAP_ERDATA, "entry", v.el - 3);

	v = mkv_base(V_CNAME);
	size_t cname_rdata = rec_at(&v, 0) + 2 + 1 + 2 + 4; /* QNAME owner: no owner bytes */
	v.e[cname_rdata] = 0xc0;
	invalid("118-pointer-in-rdata-name", &v, DNSNAP_ELABEL, "entry", cname_rdata);

	v = mkv_base(V_A);
	st16le(v.e + r0, ld16le(v.e + r0) + 1);
	invalid("119-record-overruns-entry", &v, DNSNAP_ETRUNC, "entry", r0);

	v = mkv_base(V_A);
	uint32_t inception = (uint32_t)(ld16le(v.e) | ld16le(v.e + 2) << 16) - 1;
	st16le(v.e + 4, inception & 0xffff); /* expiry = inception - 1 */
	st16le(v.e + 6, inception >> 16);
	invalid("120-expiry-before-inception", &v, DNSNAP_EFIELD, "entry", 4);

	/* referral: NS in authority, glue in additional; the first glue record
	 * claims to continue the NS RRset of the section before */
	v = mkv_base(V_REFERRAL);
	dnsnap_hdr_t h;
	dnsnap_entry_header(v.e, v.el, &h, NULL);
	size_t first_addl = (size_t)(h.records - v.e) + h.addl_off;
	v.e[first_addl + 2] = DNSNAP_RF_SAME;
	invalid("121-same-across-sections", &v, DNSNAP_EFIELD, "entry", first_addl + 2);

	v = mkv_base(V_A);
	r0 = rec_at(&v, 0);
	v.e[r0 + 2] = DNSNAP_OWNER_NAME; /* explicit owner: a label of 64 */
	memmove(v.e + r0 + 9 + 66, v.e + r0 + 9, 4);
	v.e[r0 + 9] = 64;
	memset(v.e + r0 + 10, 'a', 64);
	v.e[r0 + 74] = 0;
	st16le(v.e + r0, ld16le(v.e + r0) + 66);
	v.el += 66;
	invalid("122-owner-label-over-63", &v, DNSNAP_ELABEL, "entry", r0 + 9);

	v = mkv_base(V_A);
	r0 = rec_at(&v, 0);
	v.e[r0 + 2] = DNSNAP_OWNER_NAME; /* explicit owner of 5 x 51 + 1 bytes */
	memmove(v.e + r0 + 9 + 256, v.e + r0 + 9, 4);
	for (size_t i = 0; i < 5; i++) {
		v.e[r0 + 9 + 51 * i] = 50;
		memset(v.e + r0 + 10 + 51 * i, 'a', 50);
	}
	v.e[r0 + 9 + 255] = 0;
	st16le(v.e + r0, ld16le(v.e + r0) + 256);
	v.el += 256;
	invalid("123-owner-name-over-255", &v, DNSNAP_ENAME, "entry", r0 + 9 + 4 * 51);

	v = mkv_base(V_A);
	memset(v.e + 18, 0, 65536); /* records of 65536 bytes: over the u16 offsets */
	v.el = 18 + 65536;
	invalid("124-records-over-65535", &v, DNSNAP_ETOOBIG, "entry", 18);

	v = mkv_base(V_A);
	st16le(v.e + 16, ld16le(v.e + 16) + 1);
	invalid("126-addl-off-past-records", &v, DNSNAP_EFIELD, "entry", 16);

	v = mkv_base(V_REFERRAL); /* additional starts at the glue; move it into a record */
	st16le(v.e + 16, ld16le(v.e + 16) + 1);
	invalid("127-addl-off-not-on-a-record", &v, DNSNAP_EFIELD, "entry", 16);

	v = mkv_base(V_A);
	r0 = rec_at(&v, 0);
	v.e[r0 + 2] |= DNSNAP_RF_CLASS; /* Class 1 stored: IN must cost no bytes */
	memmove(v.e + r0 + 7, v.e + r0 + 5, v.el - r0 - 5);
	st16le(v.e + r0 + 5, 1);
	st16le(v.e + r0, ld16le(v.e + r0) + 2);
	st16le(v.e + 14, ld16le(v.e + 14) + 2);
	st16le(v.e + 16, ld16le(v.e + 16) + 2);
	v.el += 2;
	invalid("128-class-in-stored", &v, DNSNAP_EFIELD, "entry", r0 + 5);

	v = mkv_base(V_A);
	r0 = rec_at(&v, 0);
	st16le(v.e + r0 + 3, 250);
	invalid("129-tsig-record-stored", &v, DNSNAP_EFIELD, "entry", r0 + 3);

	v = mkv_base(V_A); /* a record of Rec_Len 0 after the A record: no Rec_Flags */
	memset(v.e + v.el, 0, 2);
	v.el += 2;
	invalid("135-record-without-flags", &v, DNSNAP_ETRUNC, "entry", v.el - 2);

	/* nxdomain: the authority SOA loses the last byte of its fixed part */
	v = mkv_base(V_NXDOMAIN);
	{
		static const uint8_t root[1] = { 0 };
		dnsnap_iter_t it;
		dnsnap_rr_t rr;
		dnsnap_iter_init(&it, v.e, v.el, root, 1);
		while (dnsnap_iter_next(&it, &rr) == 1 && rr.type != 6)
			;
		st16le(v.e + rr.offset, ld16le(v.e + rr.offset) - 1);
		memmove(v.e + rr.offset + 2 + ld16le(v.e + rr.offset),
			v.e + rr.offset + 3 + ld16le(v.e + rr.offset),
			v.el - (rr.offset + 3 + ld16le(v.e + rr.offset)));
		st16le(v.e + 16, ld16le(v.e + 16) - 1);
		v.el--;
		invalid("136-soa-rdata-short", &v, DNSNAP_ERDATA, "entry",
			(size_t)(rr.rdata - v.e));
	}

	/* keys */
	v = mkv_base(V_A);
	v.key[v.kl - 2] = 0x02;
	invalid("130-key-reserved-flag", &v, DNSNAP_ERESERVED, "key", v.kl - 2);

	v = mkv_base(V_A);
	v.key[1] = 'C';
	invalid("131-key-upper-case", &v, DNSNAP_EFIELD, "key", 1);

	v = mkv_base(V_A);
	v.key[v.kl++] = 0;
	invalid("132-key-trailing-bytes", &v, DNSNAP_EFIELD, "key", v.kl - 1);

	v = mkv_base(V_A);
	v.kl -= 3;
	invalid("133-key-cut", &v, DNSNAP_ETRUNC, "key", v.kl - 1);

	v = mkv_base(V_A);
	v.key[v.kl - 1] = 1; /* Tag_Len 1, no tag */
	invalid("137-key-tag-len-overruns", &v, DNSNAP_ETRUNC, "key", v.kl - 1);

	v = mkv_base(V_A);
	v.key[0] = 0x40;
	invalid("134-key-label-over-63", &v, DNSNAP_ELABEL, "key", 0);

	/* aaaa-set: record 0 AAAA (QNAME), records 1-3 SAME. Auth_Off 1 (inside
	 * record 0) puts record 1 in the authority section: its SAME crosses
	 * sections, found while walking the records, before the offset rule */
	v = mkv_base(V_AAAA);
	st16le(v.e + 14, 1);
	invalid("138-same-after-misaligned-auth-off", &v, DNSNAP_EFIELD, "entry",
		rec_at(&v, 1) + 2);

	/* key names of 5 labels of 50 bytes: the fifth leaves no room for the
	 * root label within 255 bytes */
	v = mkv_base(V_A);
	v.kl = 0;
	for (size_t i = 0; i < 5; i++) {
		v.key[v.kl++] = 50;
		memset(v.key + v.kl, 'a', 50);
		v.kl += 50;
	}
	static const uint8_t key_tail[7] = { 0, 0, 1, 0, 1, 0, 0 };
	memcpy(v.key + v.kl, key_tail, sizeof key_tail);
	v.kl += sizeof key_tail;
	invalid("139-key-name-over-255", &v, DNSNAP_ENAME, "key", 4 * 51);

	v.kl = 4 * 51 + 1 + 10; /* cut 10 bytes into that label: the length counts first */
	invalid("140-key-name-over-255-cut", &v, DNSNAP_ENAME, "key", 4 * 51);

	/* a record's checks run in the order of Validation step 9, which is not
	 * byte order: reserved bits before SAME, TTL and owner before Type */
	v = mkv_base(V_A);
	r0 = rec_at(&v, 0);
	v.e[r0 + 2] |= 0x10 | DNSNAP_RF_SAME;
	invalid("141-record-reserved-flag-and-same", &v, DNSNAP_ERESERVED, "entry", r0 + 2);

	v = mkv_base(V_A);
	st16le(v.e + r0 + 3, 41);
	v.e[r0 + 8] |= 0x80;
	invalid("142-opt-record-with-ttl-over-2-31", &v, DNSNAP_EFIELD, "entry", r0 + 5);

	/* step 10 before step 11 */
	v = mkv_base(V_A);
	st16le(v.e + 14, 1);
	v.e[12] |= DNSNAP_EF_DNSSEC;
	invalid("143-auth-off-not-on-a-record-dnssec-flag", &v, DNSNAP_EFIELD, "entry", 14);

	/* 012-dname-compressed with its DNAME rdata stored as it came, c0 15:
	 * a pointer into a message the entry does not hold */
	size_t dn;
	wb_t m = dname_message(&dn);
	if (dnsnap_msg_encode(m.b, m.n, NOW, NULL, 0, &enc, NULL) != DNSNAP_OK) {
		fprintf(stderr, "mkvectors: the DNAME message does not encode\n");
		exit(1);
	}
	memcpy(v.key, enc.key, enc.key_len);
	v.kl = enc.key_len;
	memcpy(v.e, enc.entry, enc.entry_len);
	v.el = enc.entry_len;
	r0 = rec_at(&v, 0); /* NAME owner corp.example.com (18 bytes), then the rdata */
	size_t rdata = r0 + 9 + 18, cut = 13 - 2; /* example.com. -> c0 15 */
	memmove(v.e + rdata + 2, v.e + rdata + 13, v.el - rdata - 13);
	v.e[rdata] = 0xc0;
	v.e[rdata + 1] = 0x15;
	v.el -= cut;
	st16le(v.e + r0, ld16le(v.e + r0) - (unsigned)cut);
	st16le(v.e + 14, ld16le(v.e + 14) - (unsigned)cut); /* all in answer: both at the end */
	st16le(v.e + 16, ld16le(v.e + 16) - (unsigned)cut);
	invalid("144-pointer-in-dname-rdata", &v, DNSNAP_ELABEL, "entry", rdata);
}

/* ------------------------------------------------- export streams */
/*
 * Streams are built here byte by byte from spec/FORMAT.md ("Export stream"),
 * not with dnsnap_export_write(), so that they test the spec rather than the
 * writer. They are compressed with libzstd, level STREAM_LEVEL, content
 * checksum on: the same content and the same libzstd give the same bytes
 * (another libzstd version may compress differently; the content is fixed).
 * Every stream vector is imported here with dnsnap_import() at now =
 * 1700000000, and a disagreement with the expected result is reported.
 */
#define STREAM_LEVEL 3
#define WRITER "dnsnap mkvectors on spec"
#define IN_ZSTD ((size_t)-1) /* .err offset "zstd": an error in the compressed bytes */

static const uint8_t stream_magic[4] = { 0xd5, 'N', 'S', 'X' };

/* The decompressed stream being built, and where its parts start. */
typedef struct stream {
	uint8_t b[8192];
	size_t n;
	size_t rec[8], rec_len[8]; /* each record's offset and length */
	size_t nrec;
	size_t hdr;                /* Header_Size */
	size_t end;                /* the end record's offset */
} stream_t;

/* A compressed stream: one or more zstd frames. */
typedef struct zs {
	uint8_t b[16384];
	size_t n;
} zs_t;

static FILE *smd;       /* streams.md */
static char tdir[256];  /* scratch directory for the import checks */

static void set_le(uint8_t *p, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> 8 * i);
}

static uint64_t get_le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	while (n--)
		v = v << 8 | p[n];
	return v;
}

static void sput(stream_t *s, const void *p, size_t n)
{
	if (n > sizeof s->b - s->n) {
		fprintf(stderr, "mkvectors: a stream vector is too long\n");
		exit(1);
	}
	if (n > 0)
		memcpy(s->b + s->n, p, n);
	s->n += n;
}

static void sput_le(stream_t *s, uint64_t v, size_t n)
{
	uint8_t b[8];
	set_le(b, v, n);
	sput(s, b, n);
}

/* Stream_Header options; hdr_1_0 is what a 1.0 writer writes. */
typedef struct hdr_opt {
	unsigned major, minor, flags;
	const char *writer;
	uint64_t count;         /* Entry_Count TLV */
	size_t created_len;     /* Ext_Data_Len of Created_At (8) */
	const uint8_t *extra;   /* more TLVs, after the three of 1.0 */
	size_t extra_n;
} hdr_opt_t;

static const hdr_opt_t hdr_1_0 = { 1, 0, 0, WRITER, 0, 8, NULL, 0 };

/* Start a stream: Stream_Header with Created_At = NOW, Writer, Entry_Count. */
static void st_header(stream_t *s, const hdr_opt_t *o)
{
	s->n = s->nrec = s->end = 0;
	sput(s, stream_magic, 4);
	sput_le(s, o->major, 2);
	sput_le(s, o->minor, 2);
	sput_le(s, 0, 2); /* Header_Size, set below */
	sput_le(s, o->flags, 2);
	sput_le(s, 1, 1);
	sput_le(s, o->created_len, 2);
	sput_le(s, NOW, o->created_len);
	sput_le(s, 2, 1);
	sput_le(s, strlen(o->writer), 2);
	sput(s, o->writer, strlen(o->writer));
	sput_le(s, 3, 1);
	sput_le(s, 8, 2);
	sput_le(s, o->count, 8);
	sput(s, o->extra, o->extra_n);
	s->hdr = s->n;
	set_le(s->b + 8, s->n, 2);
}

static void st_record(stream_t *s, const vec_t *v)
{
	if (s->nrec == sizeof s->rec / sizeof s->rec[0]) {
		fprintf(stderr, "mkvectors: a stream vector has too many records\n");
		exit(1);
	}
	s->rec[s->nrec] = s->n;
	sput_le(s, v->kl, 2);
	sput_le(s, v->el, 4);
	sput(s, v->key, v->kl);
	sput(s, v->e, v->el);
	s->rec_len[s->nrec] = s->n - s->rec[s->nrec];
	s->nrec++;
}

static void st_section(stream_t *s, unsigned type, const void *data, size_t len)
{
	sput_le(s, 0xffff, 2);
	sput_le(s, type, 2);
	sput_le(s, len, 4);
	sput(s, data, len);
}

/* XXH3-64 of the records written, in stream order (sections left out). */
static uint64_t st_checksum(const stream_t *s)
{
	XXH3_state_t *x = XXH3_createState();
	if (x == NULL)
		exit(1);
	XXH3_64bits_reset(x);
	for (size_t i = 0; i < s->nrec; i++)
		XXH3_64bits_update(x, s->b + s->rec[i], s->rec_len[i]);
	uint64_t h = XXH3_64bits_digest(x);
	XXH3_freeState(x);
	return h;
}

static void st_end(stream_t *s)
{
	uint64_t sum = st_checksum(s);
	s->end = s->n;
	sput_le(s, 0, 2);
	sput_le(s, s->nrec, 8);
	sput_le(s, sum, 8);
}

/* A whole stream: the header, records v[0, n), the end record. */
static void st_full(stream_t *s, const hdr_opt_t *h, const vec_t *const *v, size_t n)
{
	st_header(s, h);
	for (size_t i = 0; i < n; i++)
		st_record(s, v[i]);
	st_end(s);
}

/* Append one zstd frame holding p[0, n) to z. */
static void zframe(zs_t *z, const uint8_t *p, size_t n)
{
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	size_t r = cc == NULL ? (size_t)-1 : 0;
	if (!ZSTD_isError(r))
		r = ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, STREAM_LEVEL);
	if (!ZSTD_isError(r))
		r = ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
	if (!ZSTD_isError(r))
		r = ZSTD_compress2(cc, z->b + z->n, sizeof z->b - z->n, p, n);
	ZSTD_freeCCtx(cc);
	if (ZSTD_isError(r)) {
		fprintf(stderr, "mkvectors: zstd: %s\n", ZSTD_getErrorName(r));
		exit(1);
	}
	z->n += r;
}

/* The whole stream as one frame, as dnsnap's writer writes it. */
static const zs_t *zone(zs_t *z, const stream_t *s)
{
	z->n = 0;
	zframe(z, s->b, s->n);
	return z;
}

/* Where the first block of the frame at z->b[at] starts (RFC 8878 3.1.1:
 * after the magic number and the frame header), its type and size. */
static size_t zblock(const zs_t *z, size_t at, unsigned *type, size_t *size)
{
	static const size_t did[4] = { 0, 1, 2, 4 }, fcs[4] = { 0, 2, 4, 8 };
	unsigned fhd = z->b[at + 4];
	size_t single = fhd >> 5 & 1;
	size_t fh = 1 + (single ? 0 : 1) + did[fhd & 3] + (fhd >> 6 == 0 ? single : fcs[fhd >> 6]);
	uint32_t bh = (uint32_t)get_le(z->b + at + 4 + fh, 3);
	*type = bh >> 1 & 3;
	*size = bh >> 3;
	return at + 4 + fh;
}

/* Import z at now = NOW into the scratch directory. */
static int try_import(const zs_t *z, dnsnap_diag_t *d)
{
	char in[300], out[300];
	snprintf(in, sizeof in, "%s/in.dnsx", tdir);
	snprintf(out, sizeof out, "%s/out.snap", tdir);
	FILE *f = fopen(in, "wb");
	if (f == NULL || (z->n > 0 && fwrite(z->b, 1, z->n, f) != z->n) || fclose(f) != 0) {
		perror(in);
		exit(1);
	}
	int fd = open(in, O_RDONLY);
	if (fd < 0) {
		perror(in);
		exit(1);
	}
	int err = dnsnap_import(fd, out, NOW, NULL, NULL, d);
	close(fd);
	unlink(in);
	unlink(out);
	return err;
}

/* A stream that must import: .dnsx, and .txt the dump of its n entries. */
static void valid_stream(const char *name, const zs_t *z, const vec_t *const *v, size_t n,
			 const char *what)
{
	mkv_write("valid", name, "dnsx", z->b, z->n);
	char *txt;
	size_t tlen;
	FILE *f = open_memstream(&txt, &tlen);
	for (size_t i = 0; i < n; i++)
		print_entry(f, v[i]->key, v[i]->kl, v[i]->e, v[i]->el);
	fclose(f);
	mkv_write("valid", name, "txt", txt, tlen);
	free(txt);
	dnsnap_diag_t d = { 0 };
	int e = try_import(z, &d);
	if (e != DNSNAP_OK) {
		fprintf(stderr, "mkvectors: %s: expected DNSNAP_OK   import says %s %zu (%s)\n", name,
			dnsnap_errname(e), d.offset, d.msg);
		mkv_mismatches++;
	}
	fprintf(smd, "| `valid/%s` | %s | imports, %zu entr%s |\n", name, what, n,
		n == 1 ? "y" : "ies");
}

/* A stream that must be refused with err at off (IN_ZSTD: no offset), and
 * a message holding text (NULL: any). */
static void invalid_stream(const char *name, const zs_t *z, int err, size_t off,
			   const char *text, const char *what)
{
	char where[32], line[256];
	if (off == IN_ZSTD)
		snprintf(where, sizeof where, "zstd");
	else
		snprintf(where, sizeof where, "%zu", off);
	snprintf(line, sizeof line, "%s %s%s%s\n", dnsnap_errname(err), where, text ? " " : "",
		 text ? text : "");
	mkv_write("invalid", name, "dnsx", z->b, z->n);
	mkv_write("invalid", name, "err", line, strlen(line));
	dnsnap_diag_t d = { 0 };
	int e = try_import(z, &d);
	if (e != err || (off != IN_ZSTD && d.offset != off) ||
	    (text != NULL && strstr(d.msg, text) == NULL)) {
		fprintf(stderr, "mkvectors: %s: expected %s   import says %s %zu (%s)\n", name, line,
			dnsnap_errname(e), d.offset, d.msg);
		mkv_mismatches++;
	}
	fprintf(smd, "| `invalid/%s` | %s | `%s %s` |\n", name, what, dnsnap_errname(err), where);
}

/* One line of a layout: offset, bytes (wrapped at 16), what they are. */
static void field(FILE *f, size_t off, const uint8_t *p, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i += 16) {
		size_t k = n - i < 16 ? n - i : 16;
		fprintf(f, "%04zx ", off + i);
		for (size_t j = 0; j < k; j++)
			fprintf(f, " %02x", p[i + j]);
		if (i == 0)
			fprintf(f, "%*s  %s", (int)(3 * (16 - k)), "", what);
		fputc('\n', f);
	}
}

/* The decompressed bytes of a stream made by st_header(&hdr_1_0), records
 * and st_end(), annotated; src[i] names the vector record i comes from. */
static void st_layout(FILE *f, const stream_t *s, const char *const *src, const char *const *note)
{
	const uint8_t *b = s->b;
	char buf[256];
	size_t wl = (size_t)get_le(b + 24, 2);
	fprintf(f, "```\n");
	field(f, 0, b, 4, "Magic_Number");
	field(f, 4, b + 4, 2, "Format_Major 1");
	field(f, 6, b + 6, 2, "Format_Minor 0");
	snprintf(buf, sizeof buf, "Header_Size %zu", s->hdr);
	field(f, 8, b + 8, 2, buf);
	field(f, 10, b + 10, 2, "Flags");
	field(f, 12, b + 12, 3, "TLV 1 Created_At, 8 bytes:");
	snprintf(buf, sizeof buf, "  %llu", (unsigned long long)get_le(b + 15, 8));
	field(f, 15, b + 15, 8, buf);
	snprintf(buf, sizeof buf, "TLV 2 Writer, %zu bytes:", wl);
	field(f, 23, b + 23, 3, buf);
	snprintf(buf, sizeof buf, "  \"%.*s\"", (int)wl, (const char *)b + 26);
	field(f, 26, b + 26, wl, buf);
	field(f, 26 + wl, b + 26 + wl, 3, "TLV 3 Entry_Count, 8 bytes:");
	snprintf(buf, sizeof buf, "  %llu", (unsigned long long)get_le(b + 29 + wl, 8));
	field(f, 29 + wl, b + 29 + wl, 8, buf);
	for (size_t i = 0; i < s->nrec; i++) {
		size_t r = s->rec[i];
		size_t kl = (size_t)get_le(b + r, 2), el = (size_t)get_le(b + r + 2, 4);
		dnsnap_key_t k;
		char name[300];
		snprintf(buf, sizeof buf, "record %zu: Key_Len %zu, Entry_Len %zu", i, kl, el);
		field(f, r, b + r, 6, buf);
		dnsnap_key_decode(b + r + 6, kl, &k, NULL);
		snprintf(buf, sizeof buf, "  Key: %s %s (as in %s)",
			 print_name(k.name, k.name_len, name, sizeof name),
			 k.qtype == 1 ? "A" : k.qtype == 15 ? "MX" : k.qtype == 28 ? "AAAA" : "?",
			 src[i]);
		field(f, r + 6, b + r + 6, kl, buf);
		snprintf(name, sizeof name, "(%zu bytes)", el);
		fprintf(f, "%04zx  %-47s    Entry (as in %s%s)\n", r + 6 + kl, name, src[i],
			note[i] ? note[i] : "");
	}
	field(f, s->end, b + s->end, 2, "End_Record: Key_Len 0");
	snprintf(buf, sizeof buf, "  Entry_Count %llu",
		 (unsigned long long)get_le(b + s->end + 2, 8));
	field(f, s->end + 2, b + s->end + 2, 8, buf);
	snprintf(buf, sizeof buf, "  Checksum 0x%016llx",
		 (unsigned long long)get_le(b + s->end + 10, 8));
	field(f, s->end + 10, b + s->end + 10, 8, buf);
	fprintf(f, "```\n\n");
}

static void streams(void)
{
	/* four valid vectors' keys and entries, in key order */
	enum { V_A = 0, V_NODATA = 5, V_DNSSEC = 6, V_MX = 7 };
	static const size_t items[4] = { V_MX, V_A, V_NODATA, V_DNSSEC };
	static vec_t ents[4], v;
	static stream_t s;
	static zs_t z;
	static char srcbuf[4][64];
	const vec_t *all[4];
	const char *src[4], *note[4] = { 0 };
	for (size_t i = 0; i < 4; i++) {
		ents[i] = mkv_base(items[i]);
		all[i] = &ents[i];
		snprintf(srcbuf[i], sizeof srcbuf[i], "valid/%03zu-%s.bin", items[i] + 1,
			 valid_names[items[i]]);
		src[i] = srcbuf[i];
		if (i > 0 && dnsnap_key_cmp(ents[i - 1].key, ents[i - 1].kl, ents[i].key,
					    ents[i].kl) >= 0) {
			fprintf(stderr, "mkvectors: stream entries not in key order\n");
			exit(1);
		}
	}
	const size_t ia = 1; /* the A entry: Hits 42, to show that hit counts carry over */
	set_le(ents[ia].e + 8, 42, 4);
	note[ia] = ", but Hits 42: 2a 00 00 00 at 8";
	hdr_opt_t h = hdr_1_0;
	h.count = 4;
	st_full(&s, &h, all, 4);
	fprintf(smd, "Vector `302-stream-four-entries`, decompressed (%zu bytes): the keys and\n"
		"entries of four valid vectors in key order, one with a changed `Hits`. The\n"
		"vectors after it are variations of it.\n\n", s.n);
	st_layout(smd, &s, src, note);
	fprintf(smd, "| Vector | Stream | Expected |\n|---|---|---|\n");

	/* ---- valid */
	v = mkv_base(V_A);
	const vec_t *one[1] = { &v };
	hdr_opt_t h1 = hdr_1_0;
	h1.writer = "dnsnap 0.2.0 on vm";
	h1.count = 1;
	st_header(&s, &h1);
	st_record(&s, &v);
	st_end(&s);
	if (s.n != 133 || st_checksum(&s) != 0xb356f0ba257ceed9ull) {
		fprintf(stderr, "mkvectors: the worked example of the export stream differs\n");
		mkv_mismatches++;
	}
	valid_stream("301-stream-worked-example", zone(&z, &s), one, 1,
		     "the export stream's [worked example](#worked-example): vector 001 alone");

	st_full(&s, &h, all, 4);
	size_t n = s.n, hdr = s.hdr, end = s.end, rec[4];
	memcpy(rec, s.rec, sizeof rec);
	valid_stream("302-stream-four-entries", zone(&z, &s), all, 4,
		     "four entries in key order, one with `Hits` 42 (above)");

	h.count = 0;
	st_full(&s, &h, all, 0);
	valid_stream("303-stream-empty-snapshot", zone(&z, &s), all, 0,
		     "no records: the header, then the end record with `Entry_Count` 0 and the "
		     "XXH3-64 of nothing");
	h.count = 4;

	st_header(&s, &h);
	st_section(&s, 0x0101, "data of a later minor version", 29);
	st_record(&s, all[0]);
	st_record(&s, all[1]);
	st_section(&s, 0xfffe, NULL, 0);
	st_record(&s, all[2]);
	st_record(&s, all[3]);
	st_end(&s);
	valid_stream("304-stream-unknown-sections", zone(&z, &s), all, 4,
		     "302 with a section of type 0x0101 (29 bytes) before the first record and an "
		     "empty one of type 0xfffe after the second: skipped, not counted, not in "
		     "`Checksum`");

	static const uint8_t tlv_unknown[] = { 0x80, 3, 0, 'n', 'e', 'w' };
	hdr_opt_t h7 = h;
	h7.minor = 7;
	h7.extra = tlv_unknown;
	h7.extra_n = sizeof tlv_unknown;
	st_full(&s, &h7, all, 4);
	valid_stream("305-stream-minor-7-unknown-tlv", zone(&z, &s), all, 4,
		     "302 as version 1.7 with a header TLV of unknown type 0x80 (3 bytes)");

	/* frames split anywhere, a skippable frame between */
	st_full(&s, &h, all, 4);
	static const uint8_t skippable[12] = { 0x50, 0x2a, 0x4d, 0x18, 4, 0, 0, 0,
					       's', 'k', 'i', 'p' };
	z.n = 0;
	zframe(&z, s.b, 5);
	memcpy(z.b + z.n, skippable, sizeof skippable);
	z.n += sizeof skippable;
	zframe(&z, s.b + 5, rec[1] + 10 - 5);
	zframe(&z, s.b + rec[1] + 10, n - rec[1] - 10);
	valid_stream("306-stream-three-frames", &z, all, 4,
		     "302 in three zstd frames, split inside the magic number and inside record "
		     "1, with a skippable frame after the first");

	/* the header's Entry_Count twice: 5, then 4; the last one counts */
	static const uint8_t tlv_count_4[] = { 3, 8, 0, 4, 0, 0, 0, 0, 0, 0, 0 };
	hdr_opt_t h2 = h;
	h2.count = 5;
	h2.extra = tlv_count_4;
	h2.extra_n = sizeof tlv_count_4;
	st_full(&s, &h2, all, 4);
	valid_stream("307-stream-entry-count-twice", zone(&z, &s), all, 4,
		     "302 with a second `Entry_Count` TLV after the first: 5, then 4 (the last "
		     "counts)");

	/* ---- invalid: the header */
	z.n = 0;
	invalid_stream("311-stream-empty-input", &z, DNSNAP_ETRUNC, 0, NULL, "0 bytes");

	st_full(&s, &h, all, 4);
	z.n = s.n;
	memcpy(z.b, s.b, s.n);
	invalid_stream("312-stream-not-compressed", &z, DNSNAP_EZSTD, IN_ZSTD, NULL,
		       "302's content, not compressed");

	st_full(&s, &h, all, 4);
	s.b[3] = 'P';
	invalid_stream("313-stream-snapshot-magic", zone(&z, &s), DNSNAP_EMAGIC, 0, NULL,
		       "`Magic_Number` of a snapshot (`D5 4E 53 50`)");

	st_full(&s, &h, all, 4);
	s.b[4] = 2;
	invalid_stream("314-stream-major-2", zone(&z, &s), DNSNAP_EVERSION, 4,
		       "export stream format 2.0, this dnsnap reads 1.x",
		       "`Format_Major` 2; the message names both versions");

	st_full(&s, &h, all, 4);
	set_le(s.b + 10, 0x8000, 2);
	invalid_stream("315-stream-reserved-flags", zone(&z, &s), DNSNAP_ERESERVED, 10, NULL,
		       "`Flags` 0x8000");

	st_full(&s, &h, all, 4);
	set_le(s.b + 8, 11, 2);
	invalid_stream("316-stream-header-size-11", zone(&z, &s), DNSNAP_EFIELD, 8, NULL,
		       "`Header_Size` 11");

	st_full(&s, &h, all, 4);
	set_le(s.b + 24, hdr - 26 + 1, 2);
	invalid_stream("317-stream-header-tlv-overruns", zone(&z, &s), DNSNAP_ETRUNC, 24, NULL,
		       "the `Writer` TLV's `Ext_Data_Len` runs 1 byte past `Header_Size`");

	st_full(&s, &h, all, 4);
	set_le(s.b + 8, hdr - 9, 2);
	invalid_stream("318-stream-header-tlv-head-cut", zone(&z, &s), DNSNAP_ETRUNC, hdr - 11,
		       NULL, "`Header_Size` 2 bytes into the `Entry_Count` TLV's head");

	hdr_opt_t h4 = h;
	h4.created_len = 4;
	st_full(&s, &h4, all, 4);
	invalid_stream("319-stream-created-at-4-bytes", zone(&z, &s), DNSNAP_EFIELD, 13, NULL,
		       "a `Created_At` TLV of 4 bytes");

	/* ---- invalid: cut content (whole frames) */
	st_full(&s, &h, all, 4);
	s.n = 8;
	invalid_stream("320-stream-cut-in-header", zone(&z, &s), DNSNAP_ETRUNC, 0, NULL,
		       "the first 8 bytes");

	st_full(&s, &h, all, 4);
	s.n = 30;
	invalid_stream("321-stream-cut-in-header-tlv", zone(&z, &s), DNSNAP_ETRUNC, 23, NULL,
		       "cut 4 bytes into the `Writer` TLV's data");

	st_full(&s, &h, all, 4);
	s.n = rec[1] + 10;
	invalid_stream("322-stream-cut-in-record", zone(&z, &s), DNSNAP_ETRUNC, rec[1], NULL,
		       "cut 10 bytes into record 1");

	st_full(&s, &h, all, 4);
	s.n = end;
	invalid_stream("323-stream-cut-before-end-record", zone(&z, &s), DNSNAP_ETRUNC, end, NULL,
		       "cut after the last record");

	st_full(&s, &h, all, 4);
	s.n = end + 9;
	invalid_stream("324-stream-cut-in-end-record", zone(&z, &s), DNSNAP_ETRUNC, end, NULL,
		       "cut 9 bytes into the end record");

	st_header(&s, &h);
	st_record(&s, all[0]);
	size_t sec = s.n;
	st_section(&s, 0x0101, "data of a later minor version", 29);
	s.n -= 10;
	invalid_stream("325-stream-cut-in-section", zone(&z, &s), DNSNAP_ETRUNC, sec, NULL,
		       "a record, then a section of 29 bytes cut after 19");

	/* ---- invalid: the compressed bytes */
	st_full(&s, &h, all, 4);
	zone(&z, &s);
	z.n -= 2;
	invalid_stream("326-stream-cut-in-zstd-checksum", &z, DNSNAP_ETRUNC, n, NULL,
		       "302 without the last 2 bytes of the frame (in its content checksum): all "
		       "content came through");

	st_full(&s, &h, all, 4);
	z.n = 0;
	zframe(&z, s.b, rec[1] + 10);
	size_t f2 = z.n, bsize;
	unsigned btype;
	zframe(&z, s.b + rec[1] + 10, n - rec[1] - 10);
	size_t blk = zblock(&z, f2, &btype, &bsize);
	if (btype != 2) { /* a compressed block gives no output until whole */
		fprintf(stderr, "mkvectors: 327: the second frame's block is not compressed\n");
		mkv_mismatches++;
	}
	z.n = blk + 3 + bsize / 2;
	invalid_stream("327-stream-cut-in-zstd-frame", &z, DNSNAP_ETRUNC, rec[1], NULL,
		       "302 in two frames split 10 bytes into record 1, cut in the middle of the "
		       "second frame's compressed block");

	st_full(&s, &h, all, 4);
	zone(&z, &s);
	z.b[z.n - 1] ^= 0x01;
	invalid_stream("328-stream-zstd-checksum-flipped", &z, DNSNAP_EZSTD, IN_ZSTD, NULL,
		       "302 with a bit flipped in the frame's content checksum");

	st_full(&s, &h, all, 4);
	zone(&z, &s);
	blk = zblock(&z, 0, &btype, &bsize);
	z.b[blk + 3 + bsize / 2] ^= 0x10;
	invalid_stream("329-stream-zstd-block-flipped", &z, DNSNAP_EZSTD, IN_ZSTD, NULL,
		       "302 with a bit flipped in the middle of the frame's block");

	st_full(&s, &h, all, 4);
	zone(&z, &s);
	memcpy(z.b + z.n, "not zstd", 8);
	z.n += 8;
	invalid_stream("330-stream-not-zstd-after-frame", &z, DNSNAP_EZSTD, IN_ZSTD, NULL,
		       "302, then 8 bytes that are not a zstd frame");

	/* ---- invalid: records and the end record (frames recomputed) */
	st_full(&s, &h, all, 4);
	s.b[rec[ia] + s.rec_len[ia] - 1] ^= 0x01;
	invalid_stream("331-stream-rdata-bit-flipped", zone(&z, &s), DNSNAP_ECHECKSUM, end + 10,
		       NULL, "302 with a bit flipped in the A record's rdata (valid entry, zstd "
		       "checksum recomputed)");

	st_full(&s, &h, all, 4);
	set_le(s.b + end + 2, 5, 8);
	invalid_stream("332-stream-end-count-5", zone(&z, &s), DNSNAP_ECHECKSUM, end + 2, NULL,
		       "the end record's `Entry_Count` 5 for 4 records");

	st_full(&s, &h, all, 4);
	s.b[end + 10] ^= 0x01;
	invalid_stream("333-stream-end-checksum-flipped", zone(&z, &s), DNSNAP_ECHECKSUM, end + 10,
		       NULL, "a bit flipped in the end record's `Checksum`");

	h.count = 5;
	st_full(&s, &h, all, 4);
	h.count = 4;
	invalid_stream("334-stream-header-count-5", zone(&z, &s), DNSNAP_ECHECKSUM, end + 2, NULL,
		       "the header's `Entry_Count` 5 for 4 records");

	const vec_t *swapped[4] = { all[0], all[2], all[1], all[3] };
	st_full(&s, &h, swapped, 4);
	invalid_stream("335-stream-keys-out-of-order", zone(&z, &s), DNSNAP_EFIELD, s.rec[2], NULL,
		       "records 1 and 2 swapped");

	const vec_t *twice[5] = { all[0], all[1], all[1], all[2], all[3] };
	h.count = 5;
	st_full(&s, &h, twice, 5);
	h.count = 4;
	invalid_stream("336-stream-duplicate-key", zone(&z, &s), DNSNAP_EFIELD, s.rec[2], NULL,
		       "record 1 twice (counts and `Checksum` agree)");

	const vec_t *bad[4] = { all[0], all[1], all[2], all[3] };
	v = ents[ia];
	set_le(v.e + 14, 1, 2); /* as in 107-auth-off-not-on-a-record */
	bad[ia] = &v;
	st_full(&s, &h, bad, 4);
	invalid_stream("337-stream-invalid-entry", zone(&z, &s), DNSNAP_EFIELD,
		       rec[ia] + 6 + v.kl + 14, NULL,
		       "the A entry with `Auth_Off` 1 (as 107): the entry's offset 14");

	bad[ia] = all[ia];
	v = ents[0];
	v.key[1] = 'C'; /* as in 131-key-upper-case */
	bad[0] = &v;
	st_full(&s, &h, bad, 4);
	invalid_stream("338-stream-invalid-key", zone(&z, &s), DNSNAP_EFIELD, rec[0] + 6 + 1, NULL,
		       "record 0's key with an upper-case byte (as 131): the key's offset 1");

	st_full(&s, &h, all, 4);
	sput_le(&s, 0, 1);
	invalid_stream("339-stream-byte-after-end", zone(&z, &s), DNSNAP_EFIELD, n, NULL,
		       "a zero byte after the end record");

	st_full(&s, &h, all, 4);
	set_le(s.b + rec[1], 512, 2);
	invalid_stream("340-stream-key-len-512", zone(&z, &s), DNSNAP_ERESERVED, rec[1], NULL,
		       "record 1's `Key_Len` 512 (reserved)");

	st_full(&s, &h, all, 4);
	set_le(s.b + rec[1] + 2, 17, 4);
	invalid_stream("341-stream-entry-len-17", zone(&z, &s), DNSNAP_EFIELD, rec[1] + 2, NULL,
		       "record 1's `Entry_Len` 17");

	st_full(&s, &h, all, 4);
	set_le(s.b + rec[1] + 2, DNSNAP_ENTRY_MAX + 1, 4);
	invalid_stream("342-stream-entry-len-over-max", zone(&z, &s), DNSNAP_EFIELD, rec[1] + 2,
		       NULL, "record 1's `Entry_Len` `DNSNAP_ENTRY_MAX` + 1");

	/* ---- invalid: two errors at once; the one reported pins the order */
	st_full(&s, &h, all, 4);
	s.b[3] = 'P';
	s.n = 8;
	invalid_stream("343-stream-short-snapshot-magic", zone(&z, &s), DNSNAP_EMAGIC, 0, NULL,
		       "the first 8 bytes, with a snapshot's `Magic_Number`: the magic is checked "
		       "once its 4 bytes are in");

	memcpy(s.b, "dns", 3);
	s.n = 3;
	invalid_stream("344-stream-3-bytes-not-magic", zone(&z, &s), DNSNAP_ETRUNC, 0, NULL,
		       "3 bytes `64 6e 73`: a magic number cut short is not compared");

	st_full(&s, &h, all, 4);
	s.b[4] = 2;
	s.n = 8;
	invalid_stream("345-stream-short-major-2", zone(&z, &s), DNSNAP_ETRUNC, 0, NULL,
		       "the first 8 bytes, with `Format_Major` 2: the 12 bytes come whole before "
		       "`Format_Major` is read");

	st_full(&s, &h, all, 4);
	s.b[4] = 2;
	set_le(s.b + 8, 11, 2);
	set_le(s.b + 10, 0x8000, 2);
	invalid_stream("346-stream-major-2-bad-fields", zone(&z, &s), DNSNAP_EVERSION, 4,
		       "export stream format 2.0, this dnsnap reads 1.x",
		       "`Format_Major` 2, `Header_Size` 11 and `Flags` 0x8000");

	st_full(&s, &h, all, 4);
	set_le(s.b + 8, 11, 2);
	set_le(s.b + 10, 0x8000, 2);
	invalid_stream("347-stream-header-size-11-reserved-flags", zone(&z, &s), DNSNAP_EFIELD, 8,
		       NULL, "`Header_Size` 11 and `Flags` 0x8000");

	st_full(&s, &h, all, 4);
	set_le(s.b + end + 2, 5, 8);
	s.b[end + 10] ^= 0x01;
	invalid_stream("348-stream-end-count-5-checksum-flipped", zone(&z, &s), DNSNAP_ECHECKSUM,
		       end + 2, NULL, "the end record's `Entry_Count` 5 and a bit flipped in its "
		       "`Checksum`");

	h.count = 5;
	st_full(&s, &h, all, 4);
	s.b[end + 10] ^= 0x01;
	invalid_stream("349-stream-header-count-5-checksum-flipped", zone(&z, &s),
		       DNSNAP_ECHECKSUM, end + 10, NULL, "the header's `Entry_Count` 5 and a bit "
		       "flipped in the end record's `Checksum`");

	st_full(&s, &h, all, 4);
	sput_le(&s, 0, 1);
	invalid_stream("350-stream-header-count-5-byte-after-end", zone(&z, &s), DNSNAP_ECHECKSUM,
		       end + 2, NULL, "the header's `Entry_Count` 5 and a zero byte after the end "
		       "record");
	h.count = 4;

	st_full(&s, &h, all, 4);
	set_le(s.b + end + 2, 5, 8);
	zone(&z, &s);
	z.n -= 2;
	invalid_stream("351-stream-end-count-5-zstd-cut", &z, DNSNAP_ECHECKSUM, end + 2, NULL,
		       "the end record's `Entry_Count` 5, the frame cut in its content checksum "
		       "(as 326)");

	v = ents[ia];
	set_le(v.e + 14, 1, 2); /* as in 107-auth-off-not-on-a-record */
	const vec_t *dup_bad[5] = { all[0], all[1], &v, all[2], all[3] };
	h.count = 5;
	st_full(&s, &h, dup_bad, 5);
	h.count = 4;
	invalid_stream("352-stream-duplicate-key-invalid-entry", zone(&z, &s), DNSNAP_EFIELD,
		       s.rec[2] + 6 + v.kl + 14, NULL,
		       "record 1 twice, the second copy's entry with `Auth_Off` 1 (as 107): the "
		       "entry is checked before the key order");

	st_full(&s, &h, all, 4);
	set_le(s.b + rec[1] + 2, 17, 4);
	s.n = rec[1] + 10;
	invalid_stream("353-stream-entry-len-17-cut", zone(&z, &s), DNSNAP_EFIELD, rec[1] + 2, NULL,
		       "record 1's `Entry_Len` 17, the stream cut 10 bytes into the record");

	/* ---- invalid: what follows the last frame (RFC 8878: frames, skippable
	 * frames, nothing else) */
	static const uint8_t skip_head[8] = { 0x50, 0x2a, 0x4d, 0x18, 4, 0, 0, 0 };
	st_full(&s, &h, all, 4);
	zone(&z, &s);
	memcpy(z.b + z.n, skip_head, 8);
	memcpy(z.b + z.n + 8, "sk", 2);
	z.n += 10;
	invalid_stream("354-stream-skippable-frame-cut", &z, DNSNAP_ETRUNC, n, NULL,
		       "302, then a skippable frame announcing 4 bytes with 2: a cut frame, after "
		       "the end record");
	zone(&z, &s);
	memcpy(z.b + z.n, skip_head, 6);
	z.n += 6;
	invalid_stream("355-stream-skippable-header-cut", &z, DNSNAP_ETRUNC, n, NULL,
		       "302, then 6 of a skippable frame's 8 header bytes");
	zone(&z, &s);
	z.b[z.n++] = 0x28;
	invalid_stream("356-stream-1-byte-after-frame", &z, DNSNAP_ETRUNC, n, NULL,
		       "302, then `28`: fewer than 4 bytes that begin a frame's magic number are "
		       "a cut frame");
	zone(&z, &s);
	memcpy(z.b + z.n, "abc", 3);
	z.n += 3;
	invalid_stream("357-stream-3-bytes-after-frame", &z, DNSNAP_EZSTD, IN_ZSTD, NULL,
		       "302, then `61 62 63`: fewer than 4 bytes that begin no frame's magic "
		       "number are not zstd data");
	z.n = 0;
	memcpy(z.b, skip_head, 8);
	memcpy(z.b + 8, "skip", 4);
	z.n = 12;
	invalid_stream("358-stream-skippable-frame-alone", &z, DNSNAP_ETRUNC, 0, NULL,
		       "a skippable frame alone: no content, not an empty input");
}

/* A valid vector: the message, its key and entry, the dump, and the worked
 * example in examples.md. */
static void valid(FILE *md, const char *name, const uint8_t *msg, size_t len)
{
	int err;
	if ((err = dnsnap_msg_encode(msg, len, NOW, NULL, 0, &enc, NULL)) != DNSNAP_OK) {
		fprintf(stderr, "mkvectors: worked example %s: %s\n", name, dnsnap_errname(err));
		exit(1);
	}
	mkv_write("valid", name, "msg", msg, len);
	static uint8_t buf[2 + DNSNAP_KEY_MAX + DNSNAP_ENTRY_MAX];
	mkv_write("valid", name, "bin", buf,
		   frame(buf, enc.key, enc.key_len, enc.entry, enc.entry_len));
	char *txt;
	size_t tlen;
	FILE *f = open_memstream(&txt, &tlen);
	print_entry(f, enc.key, enc.key_len, enc.entry, enc.entry_len);
	fclose(f);
	mkv_write("valid", name, "txt", txt, tlen);
	fprintf(md, "### %s\n\nDNS response %zu bytes; key %zu bytes; entry %zu bytes.\n\n"
		"```\n", name, len, enc.key_len, enc.entry_len);
	print_layout(md, enc.key, enc.key_len, enc.entry, enc.entry_len);
	fprintf(md, "```\n\n```\n%s```\n\n", txt);
	printf("%-20s wire %4zu  key %3zu  entry %4zu\n", name, len, enc.key_len, enc.entry_len);
	free(txt);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mkvectors DIR (normally spec/vectors)\n");
		return 2;
	}
	mkv_dir = argv[1];
	char mdpath[512];
	snprintf(mdpath, sizeof mdpath, "%s/examples.md", mkv_dir);
	FILE *md = fopen(mdpath, "w");
	if (md == NULL) {
		perror(mdpath);
		return 1;
	}
	for (size_t i = 0; i < CORPUS_FIXED; i++) {
		uint8_t *msg;
		size_t len;
		char name[64];
		if (corpus_message(i, &msg, &len) != 0)
			return 1;
		snprintf(name, sizeof name, "%03zu-%s", i + 1, valid_names[i]);
		valid(md, name, msg, len);
		free(msg);
	}
	size_t dn;
	wb_t dm = dname_message(&dn);
	valid(md, "012-dname-compressed", dm.b, dm.n);
	dm = empty_unknown_message();
	valid(md, "013-unknown-type-empty", dm.b, dm.n);
	dm = ref_after_opt_message();
	valid(md, "014-ref-after-opt", dm.b, dm.n);
	fclose(md);
	invalid_messages();
	invalid_entries();

	snprintf(mdpath, sizeof mdpath, "%s/streams.md", mkv_dir);
	if ((smd = fopen(mdpath, "w")) == NULL) {
		perror(mdpath);
		return 1;
	}
	if (tmpdir_make(tdir, sizeof tdir, "mkvectors") != 0)
		return 1;
	streams();
	fclose(smd);
	tmpdir_remove(tdir);
	mkv_snapshots();
	mkv_l2_values();
	if (mkv_mismatches)
		fprintf(stderr, "mkvectors: %d vectors disagree with the library\n", mkv_mismatches);
	return mkv_mismatches ? 1 : 0;
}
