/*
 * fuzz_unbound: arbitrary bytes as `unbound-control dump_cache` text, read
 * by unbound_read_stream() (engine/ingest/unbound.c) over fmemopen().
 *
 * The reader must not crash, must count what it cannot use rather than stop
 * (it returns 0: the input is always read to its end), and every response it
 * rebuilds must be a well-formed DNS message, walked here independently: QR
 * set, one question, every name uncompressed and valid, every record whole,
 * nothing after the last counted record, at most 65535 bytes. Each is also
 * handed to dnsnap_msg_encode(), which may refuse it (an rdata ldns accepts
 * but dnsnap does not) but must not crash.
 *
 * Seeds: tests/fuzz/seeds/fuzz_unbound/ (real and hand-written dumps). Inputs
 * over 8 KiB are passed over: a line reader learns nothing more from them
 * (the unit tests cover lines over UNBOUND_LINE_MAX), and libFuzzer's input
 * size follows the largest seed of all (64 KiB vectors), which made each run
 * parse hundreds of lines with ldns.
 * Link: the format and engine sources, engine/ingest/unbound.c, -lldns.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dnsnap.h"
#include "unbound.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static dnsnap_encoded_t enc;

static size_t name_end(const uint8_t *m, size_t len, size_t p)
{
	size_t total = 0;
	for (;;) {
		if (p >= len)
			abort();
		unsigned l = m[p];
		if (l > 63)            /* no pointers, no extended labels */
			abort();
		total += l + 1;
		if (total > DNSNAP_NAME_MAX)
			abort();
		p += l + 1;
		if (l == 0)
			return p;
	}
}

static int check(void *arg, const uint8_t *m, size_t len)
{
	(void)arg;
	if (len < 12 + 1 + 4 || len > 65535 || !(m[2] & 0x80) || m[4] != 0 || m[5] != 1)
		abort();
	size_t p = name_end(m, len, 12) + 4;
	unsigned n = (unsigned)(m[6] << 8 | m[7]) + (unsigned)(m[8] << 8 | m[9]) +
		     (unsigned)(m[10] << 8 | m[11]);
	for (unsigned i = 0; i < n; i++) {
		p = name_end(m, len, p);
		if (p + 10 > len)
			abort();
		p += 10 + (size_t)(m[p + 8] << 8 | m[p + 9]);
		if (p > len)
			abort();
	}
	if (p != len)
		abort();
	dnsnap_msg_encode(m, len, 1700000000u, NULL, 0, &enc, NULL);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0 || size > 8192)
		return 0;
	FILE *f = fmemopen((void *)data, size, "r");
	if (f == NULL)
		return 0;
	unbound_stats_t st;
	char err[256];
	int rc = unbound_read_stream(f, "fuzz", check, NULL, &st, err, sizeof err);
	fclose(f);
	if (rc != 0 || st.responses > st.messages || st.rrsets > st.lines)
		abort();
	(void)unbound_is_dump(data, size);
	return 0;
}
