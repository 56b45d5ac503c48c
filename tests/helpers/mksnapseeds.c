/*
 * mksnapseeds: real snapshots as seeds for fuzz_snapshot and the damage
 * tests: DIR/corpus.snap (every corpus message of tests/helpers/corpus.c),
 * DIR/big.snap (TXT answers of 3 KB to 60 KB, on LMDB overflow pages, beside
 * small ones) and DIR/empty.snap.
 *
 *   mksnapseeds DIR
 *
 * Exit status 0 on success, 1 on any error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "corpus.h"
#include "dnsnap.h"
#include "wb.h"

#define NOW 1700000000u

static dnsnap_encoded_t scratch;

/* NAME TXT: strings of 255 bytes, about size bytes in all (or one A record). */
static size_t txt_response(uint8_t *m, const char *name, size_t size)
{
	size_t n = 12;
	memset(m, 0, 12);
	m[2] = 0x81, m[3] = 0x80, m[5] = 1, m[7] = 1;
	n += wire_name(m + n, name);
	unsigned type = size ? 16 : 1;
	size_t strings = (size + 255) / 256, rl = size ? strings * 256 : 4;
	const uint8_t fixed[] = { 0, (uint8_t)type, 0, 1, 0xc0, 12, 0, (uint8_t)type, 0, 1,
				  0, 0, 0x0e, 0x10, (uint8_t)(rl >> 8), (uint8_t)rl };
	memcpy(m + n, fixed, sizeof fixed);
	n += sizeof fixed;
	if (!size) {
		memcpy(m + n, "\x0a\x01\x02\x03", 4);
		return n + 4;
	}
	for (size_t s = 0; s < strings; s++) {
		m[n++] = 255;
		memset(m + n, 'a' + (int)(s % 26), 255);
		n += 255;
	}
	return n;
}

static int put(dnsnap_cache_t *c, const uint8_t *m, size_t len)
{
	dnsnap_diag_t d;
	int err = dnsnap_cache_insert(c, m, len, NOW, NULL, 0, &scratch, &d);
	return err == DNSNAP_OK || err == DNSNAP_ENOTCACHE ? 0 : (fprintf(stderr, "mksnapseeds: %s\n",
									 d.msg), 1);
}

static int write_snap(dnsnap_cache_t *c, const char *dir, const char *name)
{
	char path[4096];
	dnsnap_diag_t d;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (dnsnap_snap_write(c, path, NOW, NULL, &d) != DNSNAP_OK) {
		fprintf(stderr, "mksnapseeds: %s\n", d.msg);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: mksnapseeds DIR\n");
		return 1;
	}
	if (mkdir(argv[1], 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "mksnapseeds: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	dnsnap_cache_t *a, *b, *e;
	if (dnsnap_cache_new(NULL, &a) || dnsnap_cache_new(NULL, &b) || dnsnap_cache_new(NULL, &e))
		return 1;
	int bad = 0;
	for (size_t i = 0; i < corpus_count() && !bad; i++) {
		uint8_t *wire;
		size_t len;
		if (corpus_message(i, &wire, &len) != 0)
			return 1;
		bad = put(a, wire, len);
		free(wire);
	}
	static uint8_t m[70000];
	static const size_t sizes[] = { 0, 0, 3000, 0, 5000, 0, 12000, 0, 60000, 0, 0 };
	char name[64];
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0] && !bad; i++) {
		snprintf(name, sizeof name, "t%zu.big.example", i);
		bad = put(b, m, txt_response(m, name, sizes[i]));
	}
	bad = bad || write_snap(a, argv[1], "corpus.snap") || write_snap(b, argv[1], "big.snap") ||
	      write_snap(e, argv[1], "empty.snap");
	dnsnap_cache_free(a);
	dnsnap_cache_free(b);
	dnsnap_cache_free(e);
	return bad;
}
