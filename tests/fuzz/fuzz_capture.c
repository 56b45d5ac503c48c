/*
 * fuzz_capture: the capture decoder (engine/ingest/capture.c). The first byte says what
 * the rest is:
 *  - b % 11 < 10: packets of link type linktypes[b % 11], all fed to one
 *    decoder so that TCP streams build up across them, then capture_finish().
 *    Each packet is a record: caplen (2 bytes, big-endian), extra (1 byte),
 *    then caplen bytes (fewer if the input ends); origlen = caplen + extra.
 *    Each packet is an exact-size heap copy, so ASan catches any overread.
 *  - b % 11 == 10: a whole input file (pcap, pcapng or TCP-framed), read by
 *    capture_read_stream() over fmemopen().
 * Every message delivered must be at least 12 bytes and is read whole; the
 * count delivered must match the statistics.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <pcap/dlt.h>

#include "capture.h"
#include "../helpers/guard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const int linktypes[] = {
	DLT_EN10MB, DLT_RAW, 101 /* LINKTYPE_RAW */, DLT_IPV4, DLT_IPV6, DLT_NULL, DLT_LOOP,
	DLT_LINUX_SLL, DLT_LINUX_SLL2, DLT_IEEE802_11 /* unsupported */,
};
#define MODES (sizeof linktypes / sizeof linktypes[0] + 1)

static uint64_t delivered;
static volatile uint8_t sink;

static int on_message(void *arg, const uint8_t *msg, size_t len, const capture_info_t *info)
{
	(void)arg;
	if (len < 12 || info->transport < 0)
		abort();
	uint8_t x = 0;
	for (size_t i = 0; i < len; i++)
		x ^= msg[i];
	sink = x;
	delivered++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned mode = data[0] % MODES;
	data++;
	size--;
	capture_stats_t st;
	delivered = 0;
	if (mode == MODES - 1) {
		if (size == 0)
			return 0;
		FILE *f = fmemopen((void *)data, size, "r");
		if (f == NULL)
			return 0;
		char err[256];
		int rc = capture_read_stream(f, "fuzz", 53, on_message, NULL, &st, err, sizeof err);
		fclose(f);
		if ((rc != -1 && rc != 0) || st.messages != delivered)
			abort();
		return 0;
	}
	capture_t *c;
	if (capture_new(53, on_message, NULL, &st, &c) != 0)
		return 0;
	while (size >= 3) {
		size_t caplen = (size_t)data[0] << 8 | data[1], extra = data[2];
		data += 3;
		size -= 3;
		if (caplen > size)
			caplen = size;
		uint8_t *pkt = heap_copy(data, caplen);
		capture_packet(c, linktypes[mode], pkt, caplen, caplen + extra, 0, 0);
		free(pkt);
		data += caplen;
		size -= caplen;
	}
	capture_finish(c);
	capture_free(c);
	if (st.messages != delivered)
		abort();
	return 0;
}
