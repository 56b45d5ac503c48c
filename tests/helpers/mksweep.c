/*
 * mksweep: the inputs of the damage sweep (tests/corrupt/sweep.sh, make
 * test-corrupt), and the damage itself, reproducibly.
 *
 *   mksweep make DIR [N [AGE]]
 *       write into DIR (which must exist), as at AGE seconds (default 0)
 *       before REALMIX_NOW (so the same names get TTLs AGE seconds lower):
 *       base.snap   N entries (default 2500) of the realistic mix
 *                   (bench/realmix.c) and 24 large ones: TXT RRsets of 3 KB
 *                   to 56 KB and DNSKEY RRsets of 3 KB to 20 KB, values LMDB
 *                   keeps in overflow pages; inserted and written through
 *                   the public API
 *       names.txt   the sample the sweep asks for: "NAME TYPE" per line,
 *                   20 lines, the large entries' names among them
 *       load.dns    12 more responses of the mix, TCP-framed, for dnsnap load
 *   mksweep plan SIZE SEED FLIPS RUNS
 *       print one damage per line, drawn from SEED (xorshift64*):
 *       "flip-NNNN flip OFFSET BIT" (FLIPS of them), "run-NNNN run OFFSET
 *       LEN BYTESEED" (RUNS of them, LEN 1 to 64) and "trunc-NNNN trunc LEN"
 *       for every multiple of 4096 below SIZE and a few odd lengths
 *   mksweep apply IN OUT KIND ARGS...
 *       write IN to OUT with the damage of one plan line (KIND and ARGS as
 *       printed): one bit flipped, a run overwritten with bytes drawn from
 *       BYTESEED (never all equal to what was there), or cut to LEN bytes
 *
 * Exit status 0, 1 on any error, 2 on bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dnsnap.h"
#include "../../bench/realmix.h"

#define NBIG 24

static int usage(void)
{
	fprintf(stderr, "usage: mksweep make DIR [N [AGE]]\n"
			"       mksweep plan SIZE SEED FLIPS RUNS\n"
			"       mksweep apply IN OUT flip OFFSET BIT | run OFFSET LEN BYTESEED | "
			"trunc LEN\n");
	return 2;
}

static uint64_t next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

static uint64_t seeded(uint64_t seed)
{
	uint64_t s = seed * 0x9e3779b97f4a7c15ull + 0x6d6b7377656570ull;
	return s ? s : 1;
}

/* ------------------------------------------------------------ large entries */

typedef struct {
	uint8_t b[65535];
	size_t n;
} wire_t;

static void put(wire_t *w, const void *p, size_t n)
{
	memcpy(w->b + w->n, p, n);
	w->n += n;
}

static void put16(wire_t *w, unsigned v)
{
	uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};
	put(w, b, 2);
}

static void put32(wire_t *w, uint32_t v)
{
	put16(w, v >> 16);
	put16(w, v & 0xffff);
}

/* "bigK.overflow.example." in wire form into @p out. @return its length */
static size_t big_name(unsigned k, uint8_t *out)
{
	char label[16];
	int n = snprintf(label, sizeof label, "big%u", k);
	size_t len = 0;
	out[len++] = (uint8_t)n;
	memcpy(out + len, label, (size_t)n);
	len += (size_t)n;
	memcpy(out + len, "\x08overflow\x07" "example\x00", 18);
	return len + 18;
}

/* Large entry @p k: TXT (type 16) of about @p size bytes, or DNSKEY (48). */
static void big_response(unsigned k, uint16_t type, size_t size, wire_t *w)
{
	uint8_t name[64];
	size_t nlen = big_name(k, name);
	uint64_t s = seeded(1000 + k);
	w->n = 0;
	put16(w, 0x4000 + k);
	put16(w, 0x8180); /* QR RD RA */
	put16(w, 1);
	put16(w, 0); /* ANCOUNT, set below */
	put16(w, 0);
	put16(w, 1); /* the OPT */
	put(w, name, nlen);
	put16(w, type);
	put16(w, 1);
	unsigned an = 0;
	while (w->n + 600 < size) {
		put16(w, 0xc00c);
		put16(w, type);
		put16(w, 1);
		put32(w, 3600);
		if (type == 16) { /* 1 to 4 strings of up to 255 bytes */
			unsigned strings = 1 + (unsigned)(next(&s) % 4);
			size_t at = w->n;
			put16(w, 0);
			for (unsigned i = 0; i < strings; i++) {
				unsigned len = 40 + (unsigned)(next(&s) % 216);
				uint8_t l = (uint8_t)len;
				put(w, &l, 1);
				for (unsigned j = 0; j < len; j++) {
					uint8_t c = (uint8_t)("abcdefghijklmnopqrstuvwxyz"
							      "0123456789=+/"[next(&s) % 39]);
					put(w, &c, 1);
				}
			}
			w->b[at] = (uint8_t)((w->n - at - 2) >> 8);
			w->b[at + 1] = (uint8_t)(w->n - at - 2);
		} else { /* a 2048-bit RSA key, algorithm 8 */
			put16(w, 4 + 260);
			put16(w, an == 0 ? 257 : 256);
			uint8_t pa[2] = {3, 8};
			put(w, pa, 2);
			uint8_t e[4] = {3, 1, 0, 1};
			put(w, e, 4);
			for (unsigned j = 0; j < 256; j++) {
				uint8_t c = (uint8_t)next(&s);
				put(w, &c, 1);
			}
		}
		an++;
	}
	w->b[6] = (uint8_t)(an >> 8);
	w->b[7] = (uint8_t)an;
	uint8_t opt[11] = {0, 0, 41, 0x04, 0xd0, 0, 0, 0x80, 0, 0, 0}; /* 1232, DO */
	put(w, opt, sizeof opt);
}

static const struct {
	uint16_t type;
	size_t size;
} bigs[NBIG] = {
	{16, 3000}, {16, 3500}, {16, 4200}, {16, 5000}, {16, 6500}, {16, 8000},
	{16, 9000}, {16, 12000}, {16, 16000}, {16, 20000}, {16, 24000}, {16, 30000},
	{16, 36000}, {16, 42000}, {16, 48000}, {16, 56000}, {16, 62000}, {48, 3000},
	{48, 4500}, {48, 6000}, {48, 8500}, {48, 12000}, {48, 16000}, {48, 20000},
};

/* --------------------------------------------------------------------- make */

static const char *type_name(uint16_t t, char *buf, size_t cap)
{
	static const struct { uint16_t t; const char *n; } names[] = {
		{1, "A"}, {2, "NS"}, {5, "CNAME"}, {6, "SOA"}, {15, "MX"}, {16, "TXT"},
		{28, "AAAA"}, {43, "DS"}, {48, "DNSKEY"}, {65, "HTTPS"},
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (names[i].t == t)
			return names[i].n;
	snprintf(buf, cap, "TYPE%u", t);
	return buf;
}

/* A wire name as dotted text (the mix's labels are letters, digits, - and _). */
static void name_text(const uint8_t *w, size_t len, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < len && w[i] != 0; i += (size_t)w[i] + 1) {
		memcpy(out + o, w + i + 1, w[i]);
		o += w[i];
		out[o++] = '.';
	}
	if (o == 0)
		out[o++] = '.';
	out[o] = 0;
}

static int insert(dnsnap_cache_t *c, const uint8_t *msg, size_t len, uint32_t now,
		  dnsnap_encoded_t *scratch, const char *what)
{
	dnsnap_diag_t diag = {0};
	int rc = dnsnap_cache_insert(c, msg, len, now, NULL, 0, scratch, &diag);
	if (rc != DNSNAP_OK)
		fprintf(stderr, "mksweep: %s: %s at offset %zu: %s\n", what, dnsnap_strerror(rc),
			(size_t)diag.offset, diag.msg);
	return rc;
}

static FILE *open_in(const char *dir, const char *file)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	FILE *f = fopen(path, "wb");
	if (f == NULL)
		fprintf(stderr, "mksweep: %s: %s\n", path, strerror(errno));
	return f;
}

static int make(const char *dir, size_t n, uint32_t age)
{
	uint32_t now = REALMIX_NOW - age;
	static wire_t w;
	static uint8_t msg[REALMIX_RESPONSE_MAX];
	dnsnap_cache_t *c = NULL;
	dnsnap_encoded_t *scratch = calloc(1, sizeof *scratch);
	if (scratch == NULL || dnsnap_cache_new(NULL, &c) != DNSNAP_OK) {
		fprintf(stderr, "mksweep: out of memory\n");
		return 1;
	}
	realmix_init(1);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		size_t len = realmix_response(i, msg, sizeof msg);
		rc = insert(c, msg, len, now, scratch, "a response of the mix");
	}
	for (unsigned k = 0; k < NBIG && rc == 0; k++) {
		big_response(k, bigs[k].type, bigs[k].size, &w);
		rc = insert(c, w.b, w.n, now, scratch, "a large response");
	}
	char path[4096];
	snprintf(path, sizeof path, "%s/base.snap", dir);
	dnsnap_snap_write_stats_t st;
	dnsnap_diag_t diag = {0};
	if (rc == 0 && (rc = dnsnap_snap_write(c, path, now, &st, &diag)) != DNSNAP_OK)
		fprintf(stderr, "mksweep: %s: %s: %s\n", path, dnsnap_strerror(rc), diag.msg);
	dnsnap_cache_free(c);
	free(scratch);
	if (rc != 0)
		return 1;

	/* The sample: 14 of the mix spread over it (every kind shows up), and
	 * 6 of the large ones, small to largest. */
	FILE *f = open_in(dir, "names.txt");
	if (f == NULL)
		return 1;
	char text[1024], tb[16];
	uint8_t wn[255];
	for (size_t k = 0; k < 14; k++) {
		size_t i = k * (n / 14) + k % 4;
		name_text(wn, realmix_name(i, wn), text);
		fprintf(f, "%s %s\n", text, type_name(realmix_qtype(i), tb, sizeof tb));
	}
	static const unsigned pick[] = {0, 7, 12, 16, 19, 23};
	for (size_t k = 0; k < sizeof pick / sizeof pick[0]; k++) {
		name_text(wn, big_name(pick[k], wn), text);
		fprintf(f, "%s %s\n", text, bigs[pick[k]].type == 16 ? "TXT" : "DNSKEY");
	}
	if (fclose(f) != 0)
		return 1;

	f = open_in(dir, "load.dns");
	if (f == NULL)
		return 1;
	for (size_t i = n; i < n + 12; i++) {
		size_t len = realmix_response(i, msg, sizeof msg);
		uint8_t l[2] = {(uint8_t)(len >> 8), (uint8_t)len};
		fwrite(l, 1, 2, f);
		fwrite(msg, 1, len, f);
	}
	if (fclose(f) != 0)
		return 1;
	printf("mksweep: %s: %llu entries (%u large), %llu bytes\n", path,
	       (unsigned long long)st.entries, NBIG, (unsigned long long)st.file_size);
	return 0;
}

/* --------------------------------------------------------------- plan, apply */

static int plan(unsigned long long size, unsigned long long seed, unsigned flips, unsigned runs)
{
	if (size < 2)
		return 1;
	uint64_t s = seeded(seed);
	for (unsigned i = 0; i < flips; i++) {
		unsigned long long off = next(&s) % size;
		printf("flip-%04u flip %llu %u\n", i, off, (unsigned)(next(&s) % 8));
	}
	for (unsigned i = 0; i < runs; i++) {
		unsigned len = 1 + (unsigned)(next(&s) % 64);
		unsigned long long off = next(&s) % size;
		if (off + len > size)
			off = size - len;
		printf("run-%04u run %llu %u %llu\n", i, off, len,
		       (unsigned long long)(next(&s) >> 1));
	}
	unsigned t = 0;
	for (unsigned long long len = 0; len < size; len += 4096)
		printf("trunc-%04u trunc %llu\n", t++, len);
	/* odd lengths: inside the first and last pages, one short of whole */
	unsigned long long odd[] = {1, 100, 4095, 4097, 8191, size / 2 + 17, size - 4095, size - 1};
	for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
		if (odd[i] % 4096 != 0 && odd[i] < size)
			printf("trunc-%04u trunc %llu\n", t++, odd[i]);
	return 0;
}

static int apply(int argc, char **argv)
{
	const char *in = argv[2], *out = argv[3], *kind = argv[4];
	FILE *f = fopen(in, "rb");
	if (f == NULL) {
		fprintf(stderr, "mksweep: %s: %s\n", in, strerror(errno));
		return 1;
	}
	size_t cap = 1 << 20, n = 0, got;
	uint8_t *b = malloc(cap);
	while (b != NULL && (got = fread(b + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			uint8_t *nb = realloc(b, cap *= 2);
			if (nb == NULL)
				free(b);
			b = nb;
		}
	}
	fclose(f);
	if (b == NULL)
		return 1;
	unsigned long long a = argc > 5 ? strtoull(argv[5], NULL, 10) : 0;
	unsigned long long a2 = argc > 6 ? strtoull(argv[6], NULL, 10) : 0;
	int bad = 0;
	if (strcmp(kind, "flip") == 0 && argc == 7 && a < n && a2 < 8) {
		b[a] ^= (uint8_t)(1u << a2);
	} else if (strcmp(kind, "run") == 0 && argc == 8 && a2 >= 1 && a + a2 <= n) {
		uint64_t s = seeded(strtoull(argv[7], NULL, 10));
		int changed = 0;
		for (size_t i = 0; i < a2; i++) {
			uint8_t v = (uint8_t)(next(&s) >> 56);
			changed |= v != b[a + i];
			b[a + i] = v;
		}
		if (!changed)
			b[a] ^= 0xff;
	} else if (strcmp(kind, "trunc") == 0 && argc == 6 && a < n) {
		n = a;
	} else {
		bad = 1;
	}
	if (bad) {
		free(b);
		return usage();
	}
	f = fopen(out, "wb");
	int rc = f == NULL || fwrite(b, 1, n, f) != n;
	if (f != NULL && fclose(f) != 0)
		rc = 1;
	if (rc)
		fprintf(stderr, "mksweep: %s: %s\n", out, strerror(errno));
	free(b);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && argc <= 5 && strcmp(argv[1], "make") == 0)
		return make(argv[2], argc >= 4 ? strtoul(argv[3], NULL, 10) : 2500,
			    argc == 5 ? (uint32_t)strtoul(argv[4], NULL, 10) : 0);
	if (argc == 6 && strcmp(argv[1], "plan") == 0)
		return plan(strtoull(argv[2], NULL, 10), strtoull(argv[3], NULL, 10),
			    (unsigned)strtoul(argv[4], NULL, 10), (unsigned)strtoul(argv[5], NULL, 10));
	if (argc >= 6 && strcmp(argv[1], "apply") == 0)
		return apply(argc, argv);
	return usage();
}
