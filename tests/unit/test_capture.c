/*
 * test_capture.c: the capture decoder (engine/ingest/capture.c). The fixture files of
 * tests/helpers/captures.c, written to a temporary directory and read back
 * with exact counts: which messages come out, byte for byte, and how many of
 * each skip reason; then single packets through capture_packet(), each
 * against a no-access page: link types, IP and UDP corner cases, truncated
 * against malformed, and TCP reassembly (order, retransmission, gaps, FIN
 * and RST, the stream and memory limits).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <pcap/dlt.h>

#include "capture.h"
#include "captures.h"
#include "guard.h"
#include "tmpdir.h"

static char dir[64];

/* ------------------------------------------------------------ helpers */

#define MAX_GOT 64

typedef struct got {
	size_t n;
	size_t stop_at;             /* ask to stop at this message (1-based); 0: never */
	size_t len[MAX_GOT];
	uint8_t *msg[MAX_GOT];
	capture_info_t info[MAX_GOT];
} got_t;

static int collect(void *arg, const uint8_t *msg, size_t len, const capture_info_t *info)
{
	got_t *g = arg;
	assert_true(g->n < MAX_GOT);
	g->msg[g->n] = malloc(len);
	assert_non_null(g->msg[g->n]);
	memcpy(g->msg[g->n], msg, len);
	g->len[g->n] = len;
	g->info[g->n] = *info;
	g->n++;
	return g->stop_at != 0 && g->n == g->stop_at;
}

static void got_free(got_t *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->msg[i]);
	g->n = 0;
}

/* The messages received are exactly @p want, in order, byte for byte. */
static void assert_messages(const got_t *g, const int *want, size_t n)
{
	assert_int_equal(g->n, n);
	for (size_t i = 0; i < n; i++) {
		wb_t w;
		captures_message(&w, want[i]);
		assert_int_equal(g->len[i], w.n);
		assert_memory_equal(g->msg[i], w.b, w.n);
	}
}

struct skip {
	int reason;
	uint64_t n;
};

/* The skip counts are exactly @p want; every other reason is 0. */
static void assert_skips(const capture_stats_t *st, const struct skip *want, size_t n)
{
	for (int r = 0; r < CAP_REASONS; r++) {
		uint64_t expect = 0;
		for (size_t i = 0; i < n; i++)
			if (want[i].reason == r)
				expect = want[i].n;
		if (st->skipped[r] != expect) {
			print_error("%s: %llu, expected %llu\n", capture_reason_name(r),
				    (unsigned long long)st->skipped[r], (unsigned long long)expect);
			fail();
		}
	}
}

#define MSGS(...) (const int[]){ __VA_ARGS__ }, sizeof((const int[]){ __VA_ARGS__ }) / sizeof(int)
#define SKIPS(...) (const struct skip[]){ __VA_ARGS__ }, \
	sizeof((const struct skip[]){ __VA_ARGS__ }) / sizeof(struct skip)
#define NO_SKIPS NULL, 0

static char *path(const char *name)
{
	static char p[4][160];
	static int k;
	k = (k + 1) & 3;
	snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
	return p[k];
}

static int read_fixture(const char *name, got_t *g, capture_stats_t *st, char *err, size_t cap)
{
	return capture_read(path(name), 53, collect, g, st, err, cap);
}

/* A fixture that reads without error or warning. */
static void read_clean(const char *name, got_t *g, capture_stats_t *st)
{
	char err[256];
	assert_int_equal(read_fixture(name, g, st, err, sizeof err), 0);
	assert_string_equal(err, "");
}

static int setup(void **state)
{
	(void)state;
	if (tmpdir_make(dir, sizeof dir, "capture") != 0)
		return -1;
	return captures_write_dir(dir, NULL);
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

/* One packet through a decoder, from a copy that ends at a no-access page. */
static int feed(capture_t *c, int linktype, const uint8_t *p, size_t caplen, size_t origlen)
{
	uint8_t *copy = guard_copy(p, caplen);
	assert_non_null(copy);
	int rc = capture_packet(c, linktype, copy, caplen, origlen, 0, 0);
	guard_free(copy);
	return rc;
}

static uint8_t ipbuf[70000];

/* An IP packet as DLT_RAW. */
static int feed_ip(capture_t *c, const captures_pkt_t *p)
{
	size_t n = captures_ip(p, ipbuf, sizeof ipbuf);
	return feed(c, DLT_RAW, ipbuf, n, n);
}

/* A TCP segment of the client's (to_server) or the server's stream. */
static int seg(capture_t *c, int to_server, uint32_t seq, unsigned flags, const void *data,
	       size_t len)
{
	captures_pkt_t p = { .tcp = 1, .to_server = to_server, .seq = seq, .flags = flags,
			     .data = data, .len = len };
	return feed_ip(c, &p);
}

static capture_t *decoder(uint16_t port, got_t *g, capture_stats_t *st)
{
	capture_t *c;
	assert_int_equal(capture_new(port, collect, g, st, &c), 0);
	return c;
}

/* ------------------------------------------------------------ fixture files */

static void test_vlan_ethernet_gives_queries_and_responses_and_counts_arp(void **state)
{
	(void)state;
	got_t g = { 0 };
	capture_stats_t st;
	read_clean("en10mb-vlan.pcap", &g, &st);
	assert_messages(&g, MSGS(CM_A_QUERY, CM_A, CM_AAAA_QUERY, CM_AAAA));
	assert_skips(&st, SKIPS({ CAP_NOT_IP, 1 }));
	assert_int_equal(st.packets, 5);
	assert_int_equal(st.messages, 4);
	assert_int_equal(st.last_problem, CAP_NOT_IP);
	assert_int_equal(st.last_problem_packet, 5);
	assert_int_equal(g.info[1].transport, CAPTURE_UDP);
	assert_int_equal(g.info[1].packet, 2);
	assert_int_equal(g.info[1].ts_sec, CAPTURES_TS0 + 1);
	assert_int_equal(g.info[1].ts_nsec, CAPTURES_NS / 1000 * 1000); /* microseconds */
	got_free(&g);
}

static void test_nanosecond_big_endian_raw_pcap_keeps_its_nanoseconds(void **state)
{
	(void)state;
	got_t g = { 0 };
	capture_stats_t st;
	read_clean("raw-ns-be.pcap", &g, &st);
	assert_messages(&g, MSGS(CM_NX_QUERY, CM_NX, CM_A));
	assert_skips(&st, NO_SKIPS);
	assert_int_equal(st.packets, 3);
	assert_int_equal(st.last_problem, -1);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(g.info[i].ts_sec, CAPTURES_TS0 + i);
		assert_int_equal(g.info[i].ts_nsec, CAPTURES_NS);
	}
	got_free(&g);
}

static void test_pcapng_sll2_skips_the_custom_block(void **state)
{
	(void)state;
	got_t g = { 0 };
	capture_stats_t st;
	read_clean("sll2.pcapng", &g, &st);
	assert_messages(&g, MSGS(CM_A, CM_AAAA, CM_NX));
	assert_skips(&st, NO_SKIPS);
	assert_int_equal(st.packets, 3);
	assert_int_equal(g.info[2].ts_sec, CAPTURES_TS0 + 2);
	assert_int_equal(g.info[2].ts_nsec, CAPTURES_NS);
	got_free(&g);
}

static void test_each_link_type_file_gives_its_messages(void **state)
{
	(void)state;
	static const struct {
		const char *file;
		int m[3];
		size_t n;
	} cases[] = {
		{ "sll.pcap", { CM_A, CM_NX }, 2 },
		{ "null.pcap", { CM_A, CM_AAAA, CM_NX }, 3 },
		{ "loop.pcap", { CM_A, CM_AAAA }, 2 },
		{ "ipv4.pcap", { CM_A_QUERY, CM_A }, 2 },
		{ "ipv6.pcap", { CM_AAAA_QUERY, CM_AAAA }, 2 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		got_t g = { 0 };
		capture_stats_t st;
		read_clean(cases[i].file, &g, &st);
		assert_messages(&g, cases[i].m, cases[i].n);
		assert_skips(&st, NO_SKIPS);
		assert_int_equal(st.packets, cases[i].n);
		got_free(&g);
	}
}

static void test_tcp_split_resent_reordered_segments_give_whole_messages(void **state)
{
	(void)state;
	got_t g = { 0 };
	capture_stats_t st;
	read_clean("tcp.pcap", &g, &st);
	assert_messages(&g, MSGS(CM_A_QUERY, CM_A, CM_AAAA));
	assert_skips(&st, NO_SKIPS);
	assert_int_equal(st.packets, 11);
	assert_int_equal(g.info[0].transport, CAPTURE_TCP);
	assert_int_equal(g.info[0].packet, 4);
	assert_int_equal(g.info[1].packet, 9); /* completed by the segment that fills the hole */
	assert_int_equal(g.info[2].packet, 9);
	got_free(&g);
}

static void test_malformed_frames_are_counted_each_by_its_reason(void **state)
{
	(void)state;
	got_t g = { 0 };
	capture_stats_t st;
	read_clean("malformed.pcap", &g, &st);
	assert_messages(&g, MSGS(CM_A, CM_AAAA));
	assert_skips(&st, SKIPS({ CAP_TRUNCATED, 1 }, { CAP_BAD_IP, 2 }, { CAP_BAD_UDP, 1 },
				{ CAP_OTHER_PORT, 1 }, { CAP_FRAGMENT, 3 }, { CAP_SHORT_DNS, 1 },
				{ CAP_NOT_UDP_TCP, 1 }, { CAP_BAD_TCP, 1 }, { CAP_BAD_LINK, 1 }));
	assert_int_equal(st.packets, 14);
	assert_int_equal(st.last_problem, CAP_BAD_LINK);
	assert_int_equal(st.last_problem_packet, 13);
	assert_true(st.last_problem_offset == UINT64_MAX);
	got_free(&g);
}

static void test_cut_capture_keeps_what_came_before_and_says_where(void **state)
{
	(void)state;
	got_t g = { 0 };
	capture_stats_t st;
	char err[256];
	assert_int_equal(read_fixture("cut.pcap", &g, &st, err, sizeof err), 0);
	assert_messages(&g, MSGS(CM_A, CM_AAAA));
	assert_skips(&st, SKIPS({ CAP_FILE_CUT, 1 }));
	assert_non_null(strstr(err, "cut.pcap: truncated dump file"));
	assert_non_null(strstr(err, ", after packet 2"));
	got_free(&g);
}

static void test_framed_file_gives_each_message_with_its_offset(void **state)
{
	(void)state;
	got_t g = { 0 };
	capture_stats_t st;
	read_clean("framed.bin", &g, &st);
	assert_messages(&g, MSGS(CM_A, CM_AAAA, CM_NX));
	assert_skips(&st, NO_SKIPS);
	assert_int_equal(st.packets, 0);
	assert_int_equal(g.info[0].offset, 0);
	assert_int_equal(g.info[1].offset, 2 + g.len[0]);
	assert_int_equal(g.info[2].offset, 4 + g.len[0] + g.len[1]);
	assert_int_equal(g.info[2].transport, CAPTURE_FRAMED);
	assert_int_equal(g.info[2].packet, 0);
	got_free(&g);
}

static void test_framed_zero_length_and_cut_message_are_counted_at_offsets(void **state)
{
	(void)state;
	got_t g = { 0 };
	capture_stats_t st;
	char err[256], want[256];
	assert_int_equal(read_fixture("framed-cut.bin", &g, &st, err, sizeof err), 0);
	assert_messages(&g, MSGS(CM_A, CM_AAAA));
	assert_skips(&st, SKIPS({ CAP_FRAMED_ZERO, 1 }, { CAP_FRAMED_CUT, 1 }));
	wb_t nx;
	captures_message(&nx, CM_NX);
	size_t at = 2 + g.len[0] + 2 + 2 + g.len[1];
	assert_int_equal(st.last_problem, CAP_FRAMED_CUT);
	assert_int_equal(st.last_problem_offset, at);
	assert_int_equal(st.last_problem_packet, 0);
	snprintf(want, sizeof want, "%s: message cut by the end of the file at offset %zu"
		 " (10 of %zu bytes)", path("framed-cut.bin"), at, nx.n);
	assert_string_equal(err, want);
	got_free(&g);
}

static void test_unreadable_inputs_fail_with_a_reason(void **state)
{
	(void)state;
	static const struct {
		const char *file, *why;
	} cases[] = {
		{ "bad-header.pcap", ": bad capture file header: archaic pcap savefile format" },
		{ "wifi.pcap", ": unsupported link type 105 (IEEE802_11)" },
		{ "not-dns.txt", ": neither a pcap, a pcapng nor a file of TCP-framed DNS messages"
				 " (it starts 3b 20 6e 6f)" },
		{ "missing.pcap", ": No such file or directory" },
		{ "empty", ": empty input" },
		{ "gzip", ": gzip-compressed; decompress it first" },
	};
	FILE *f = fopen(path("empty"), "w");
	assert_non_null(f);
	fclose(f);
	f = fopen(path("gzip"), "w");
	assert_non_null(f);
	fputs("\x1f\x8b\x08\x00", f);
	fclose(f);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		got_t g = { 0 };
		capture_stats_t st;
		char err[256], want[256];
		assert_int_equal(read_fixture(cases[i].file, &g, &st, err, sizeof err), -1);
		snprintf(want, sizeof want, "%s%s", path(cases[i].file), cases[i].why);
		assert_string_equal(err, want);
		assert_int_equal(g.n, 0);
		assert_int_equal(st.messages, 0);
	}
}

static void test_framed_file_whose_first_message_is_cut_is_not_taken(void **state)
{
	(void)state;
	static const uint8_t one_cut[] = { 0, 40, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
	FILE *f = fmemopen((void *)one_cut, sizeof one_cut, "r");
	got_t g = { 0 };
	capture_stats_t st;
	char err[256];
	assert_int_equal(capture_read_stream(f, "x", 53, collect, &g, &st, err, sizeof err), -1);
	assert_non_null(strstr(err, "x: neither a pcap"));
	fclose(f);
}

/* The first bytes, read to choose, are replayed on a stream that cannot seek. */
static void test_a_pipe_is_read_like_a_file(void **state)
{
	(void)state;
	static const char *const files[] = { "tcp.pcap", "sll2.pcapng", "framed.bin" };
	static const size_t want[] = { 3, 3, 3 };
	for (size_t i = 0; i < 3; i++) {
		cbuf_t b = { 0 };
		captures_find(files[i])->build(&b);
		int fds[2];
		assert_int_equal(pipe(fds), 0);
		assert_true(b.n < 65536); /* the pipe's buffer holds it: no writer thread */
		assert_int_equal(write(fds[1], b.p, b.n), (ssize_t)b.n);
		close(fds[1]);
		FILE *f = fdopen(fds[0], "r");
		assert_non_null(f);
		got_t g = { 0 };
		capture_stats_t st;
		char err[256];
		int rc = capture_read_stream(f, "pipe", 53, collect, &g, &st, err, sizeof err);
		assert_int_equal(rc, 0);
		assert_int_equal(g.n, want[i]);
		fclose(f);
		got_free(&g);
		cbuf_free(&b);
	}
}

static void test_callback_stops_the_reading(void **state)
{
	(void)state;
	got_t g = { .stop_at = 2 };
	capture_stats_t st;
	char err[256];
	assert_int_equal(read_fixture("en10mb-vlan.pcap", &g, &st, err, sizeof err), 1);
	assert_int_equal(g.n, 2);
	assert_int_equal(st.packets, 2);
	got_free(&g);
	g.stop_at = 1;
	assert_int_equal(read_fixture("framed.bin", &g, &st, err, sizeof err), 1);
	assert_int_equal(g.n, 1);
	got_free(&g);
}

/* ------------------------------------------------------------ packets */

static void test_every_link_type_carries_ipv4_and_ipv6(void **state)
{
	(void)state;
	static const struct {
		int dlt, lt;
		unsigned vlans;
	} cases[] = {
		{ DLT_EN10MB, LT_EN10MB, 0 }, { DLT_EN10MB, LT_EN10MB, 1 },
		{ DLT_EN10MB, LT_EN10MB, 3 }, { DLT_RAW, LT_RAW, 0 }, { 101, LT_RAW, 0 },
		{ DLT_NULL, LT_NULL, 0 }, { DLT_LOOP, LT_LOOP, 0 }, { DLT_LINUX_SLL, LT_SLL, 0 },
		{ DLT_LINUX_SLL2, LT_SLL2, 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		got_t g = { 0 };
		capture_stats_t st;
		capture_t *c = decoder(53, &g, &st);
		for (int v6 = 0; v6 <= 1; v6++) {
			wb_t w;
			captures_message(&w, v6 ? CM_AAAA : CM_A);
			captures_pkt_t p = { .v6 = v6, .data = w.b, .len = w.n };
			uint8_t fr[2048];
			size_t n = captures_ip(&p, ipbuf, sizeof ipbuf);
			n = captures_frame(cases[i].lt, cases[i].vlans, 0, ipbuf, n, fr, sizeof fr);
			assert_int_equal(feed(c, cases[i].dlt, fr, n, n), 0);
		}
		assert_messages(&g, MSGS(CM_A, CM_AAAA));
		assert_skips(&st, NO_SKIPS);
		capture_free(c);
		got_free(&g);
	}
	/* DLT_IPV4 and DLT_IPV6 take their own version only */
	got_t g = { 0 };
	capture_stats_t st;
	capture_t *c = decoder(53, &g, &st);
	captures_pkt_t p4 = { .data = (const uint8_t *)"0123456789ab", .len = 12 };
	size_t n4 = captures_ip(&p4, ipbuf, sizeof ipbuf);
	feed(c, DLT_IPV4, ipbuf, n4, n4);
	feed(c, DLT_IPV6, ipbuf, n4, n4);
	assert_int_equal(g.n, 1);
	assert_skips(&st, SKIPS({ CAP_BAD_IP, 1 }));
	capture_free(c);
	got_free(&g);
}

static void test_bsd_loopback_family_is_read_in_either_byte_order(void **state)
{
	(void)state;
	static const uint32_t families[] = { 2, 10, 24, 28, 30 };
	got_t g = { 0 };
	capture_stats_t st;
	capture_t *c = decoder(53, &g, &st);
	for (size_t i = 0; i < 5; i++) {
		for (int swap = 0; swap <= 1; swap++) {
			captures_pkt_t p = { .v6 = families[i] != 2, .len = 12,
					     .data = (const uint8_t *)"0123456789ab" };
			uint8_t fr[256];
			uint32_t af = swap ? __builtin_bswap32(families[i]) : families[i];
			memcpy(fr, &af, 4);
			size_t n = 4 + captures_ip(&p, fr + 4, sizeof fr - 4);
			feed(c, DLT_NULL, fr, n, n);
			feed(c, DLT_LOOP, fr, n, n);
		}
	}
	assert_int_equal(g.n, 20);
	uint8_t other[64] = { 0, 0, 0, 7, 0x45 };
	feed(c, DLT_NULL, other, sizeof other, sizeof other);
	assert_skips(&st, SKIPS({ CAP_NOT_IP, 1 }));
	capture_free(c);
	got_free(&g);
}

static void test_unsupported_link_type_is_counted_per_packet(void **state)
{
	(void)state;
	got_t g = { 0 };
	capture_stats_t st;
	capture_t *c = decoder(53, &g, &st);
	uint8_t fr[64] = { 0 };
	feed(c, DLT_IEEE802_11, fr, sizeof fr, sizeof fr);
	feed(c, 147, fr, sizeof fr, sizeof fr);
	assert_skips(&st, SKIPS({ CAP_LINKTYPE, 2 }));
	assert_false(capture_linktype_supported(DLT_IEEE802_11));
	assert_true(capture_linktype_supported(DLT_LINUX_SLL2));
	capture_free(c);
}

static void test_ipv4_options_are_skipped(void **state)
{
	(void)state;
	got_t g = { 0 };
	capture_stats_t st;
	capture_t *c = decoder(53, &g, &st);
	wb_t w;
	captures_message(&w, CM_A);
	size_t n = captures_ip(&(captures_pkt_t){ .data = w.b, .len = w.n }, ipbuf, sizeof ipbuf);
	uint8_t opt[2048];
	memcpy(opt, ipbuf, 20);
	memcpy(opt + 20, "\x01\x01\x01\x00", 4); /* NOP NOP NOP EOL */
	memcpy(opt + 24, ipbuf + 20, n - 20);
	opt[0] = 0x46;
	opt[3] = (uint8_t)(opt[3] + 4);
	feed(c, DLT_RAW, opt, n + 4, n + 4);
	assert_messages(&g, MSGS(CM_A));
	assert_skips(&st, NO_SKIPS);
	capture_free(c);
	got_free(&g);
}

static void test_ipv6_extension_headers_are_followed(void **state)
{
	(void)state;
	static const struct {
		uint8_t first;
		uint8_t ext[32];
		size_t len;
		int reason; /* -1: delivered */
	} cases[] = {
		/* hop-by-hop -> routing -> destination options -> UDP */
		{ 0, { 43, 0, 1, 4, 0, 0, 0, 0, 60, 0, 0, 0, 0, 0, 0, 0, 17, 0, 1, 4 }, 24, -1 },
		/* AH, 12 bytes of ICV: (4 + 2) * 4 = 24 bytes */
		{ 51, { 17, 4 }, 24, -1 },
		/* atomic fragment: offset 0, no more fragments */
		{ 44, { 17, 0, 0, 0, 0, 0, 0, 1 }, 8, -1 },
		{ 44, { 17, 0, 0, 1, 0, 0, 0, 1 }, 8, CAP_FRAGMENT },
		{ 44, { 17, 0, 0x05, 0x00, 0, 0, 0, 1 }, 8, CAP_FRAGMENT },
		/* hop-by-hop claiming 2048 bytes, past the payload */
		{ 0, { 17, 255 }, 8, CAP_BAD_IP },
		{ 59, { 0 }, 0, CAP_NOT_UDP_TCP },    /* no next header */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		got_t g = { 0 };
		capture_stats_t st;
		capture_t *c = decoder(53, &g, &st);
		wb_t w;
		captures_message(&w, CM_AAAA);
		captures_pkt_t p = { .v6 = 1, .ext = cases[i].ext, .ext_len = cases[i].len,
				     .ext_first = cases[i].first, .data = w.b, .len = w.n };
		if (cases[i].first == 59) {
			p.ext = (const uint8_t *)"";
			p.ext_len = 0;
		}
		size_t n = captures_ip(&p, ipbuf, sizeof ipbuf);
		if (cases[i].first == 59)
			ipbuf[6] = 59;
		feed(c, DLT_RAW, ipbuf, n, n);
		if (cases[i].reason < 0) {
			assert_messages(&g, MSGS(CM_AAAA));
			assert_skips(&st, NO_SKIPS);
		} else {
			assert_int_equal(g.n, 0);
			assert_skips(&st, (struct skip[]){ { cases[i].reason, 1 } }, 1);
		}
		capture_free(c);
		got_free(&g);
	}
}

static void test_udp_payload_of_12_bytes_is_a_message_and_11_is_short(void **state)
{
	(void)state;
	got_t g = { 0 };
	capture_stats_t st;
	capture_t *c = decoder(53, &g, &st);
	const uint8_t twelve[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
	feed_ip(c, &(captures_pkt_t){ .data = twelve, .len = 12 });
	feed_ip(c, &(captures_pkt_t){ .v6 = 1, .data = twelve, .len = 11 });
	feed_ip(c, &(captures_pkt_t){ .data = twelve, .len = 0 });
	assert_int_equal(g.n, 1);
	assert_memory_equal(g.msg[0], twelve, 12);
	assert_skips(&st, SKIPS({ CAP_SHORT_DNS, 2 }));
	capture_free(c);
	got_free(&g);
}

static void test_port_is_matched_on_either_side(void **state)
{
	(void)state;
	got_t g = { 0 };
	capture_stats_t st;
	capture_t *c = decoder(5300, &g, &st);
	wb_t w;
	captures_message(&w, CM_A);
	feed_ip(c, &(captures_pkt_t){ .sport = 5300, .data = w.b, .len = w.n });
	feed_ip(c, &(captures_pkt_t){ .sport = 5300, .to_server = 1, .data = w.b, .len = w.n });
	feed_ip(c, &(captures_pkt_t){ .data = w.b, .len = w.n });  /* port 53 */
	feed_ip(c, &(captures_pkt_t){ .tcp = 1, .seq = 1, .data = w.b, .len = w.n });
	assert_int_equal(g.n, 2);
	assert_skips(&st, SKIPS({ CAP_OTHER_PORT, 2 }));
	capture_free(c);
	got_free(&g);
}

/* The earliest and latest packet times, whatever the capture order; each
 * message with its packet's time (what `dnsnap load` caches it at). */
static void test_packet_times_give_the_capture_range(void **state)
{
	(void)state;
	got_t g = { 0 };
	capture_stats_t st;
	capture_t *c = decoder(53, &g, &st);
	wb_t w;
	captures_message(&w, CM_A);
	size_t n = captures_ip(&(captures_pkt_t){ .data = w.b, .len = w.n }, ipbuf, sizeof ipbuf);
	assert_int_equal(capture_packet(c, DLT_RAW, ipbuf, n, n, 1700000030, 5), 0);
	assert_int_equal(capture_packet(c, DLT_RAW, ipbuf, n, n, 1700000010, 0), 0);
	assert_int_equal(capture_packet(c, DLT_RAW, ipbuf, n, n, 1700000020, 0), 0);
	assert_int_equal(st.ts_min, 1700000010);
	assert_int_equal(st.ts_max, 1700000030);
	assert_int_equal(g.n, 3);
	assert_int_equal(g.info[0].ts_sec, 1700000030);
	assert_int_equal(g.info[0].ts_nsec, 5);
	assert_int_equal(g.info[1].ts_sec, 1700000010);
	capture_free(c);
	got_free(&g);

	/* the timed capture, as pcap (microseconds) and pcapng (nanoseconds) */
	for (int f = 0; f < 2; f++) {
		cbuf_t b = { 0 };
		captures_timed(&b, f ? CF_PCAPNG : CF_PCAP_US_LE, 1800000000, 53);
		assert_true(capture_is_capture(b.p, b.n));
		assert_false(capture_is_capture(b.p, 3));
		assert_false(capture_is_capture((const uint8_t *)"\x1f\x8b\x08\x00", 4));
		FILE *fp = fmemopen(b.p, b.n, "rb");
		assert_non_null(fp);
		char err[256];
		assert_int_equal(capture_read_stream(fp, "timed", 53, collect, &g, &st, err,
						     sizeof err), 0);
		fclose(fp);
		assert_int_equal(st.ts_min, 1800000000 - 600);
		assert_int_equal(st.ts_max, 1800000000 + 86400 * 365);
		assert_int_equal(g.n, 6);
		assert_int_equal(g.info[2].ts_sec, 1800000000 - 590);
		assert_int_equal(g.info[4].ts_sec, 1800000000 - 540);
		assert_int_equal(g.info[4].ts_nsec, 0);
		got_free(&g);
		cbuf_free(&b);
	}
}

/* Packets on other ports that look like DNS are remembered by the server's
 * port (for load's "try --port"); other traffic is not. */
static void test_other_ports_carrying_dns_are_remembered(void **state)
{
	(void)state;
	got_t g = { 0 };
	capture_stats_t st;
	capture_t *c = decoder(53, &g, &st);
	wb_t r, q;
	captures_message(&r, CM_A);
	captures_message(&q, CM_A_QUERY);
	cbuf_t fr = { 0 };
	framed_put(&fr, CM_AAAA);
	feed_ip(c, &(captures_pkt_t){ .sport = 5353, .data = r.b, .len = r.n });
	feed_ip(c, &(captures_pkt_t){ .sport = 5353, .data = r.b, .len = r.n });
	feed_ip(c, &(captures_pkt_t){ .sport = 8053, .to_server = 1, .data = q.b, .len = q.n });
	feed_ip(c, &(captures_pkt_t){ .sport = 9999, .data = (const uint8_t *)"not DNS", .len = 7 });
	feed_ip(c, &(captures_pkt_t){ .tcp = 1, .sport = 853, .seq = 9, .data = fr.p, .len = fr.n });
	feed_ip(c, &(captures_pkt_t){ .tcp = 1, .sport = 853, .seq = 9, .data = fr.p, .len = 5 });
	assert_int_equal(g.n, 0);
	assert_skips(&st, SKIPS({ CAP_OTHER_PORT, 6 }));
	assert_int_equal(st.other[0].port, 5353);
	assert_int_equal(st.other[0].udp, 2);
	assert_int_equal(st.other[1].port, 8053); /* a query: its destination */
	assert_int_equal(st.other[1].udp, 1);
	assert_int_equal(st.other[2].port, 853);  /* a whole message in a segment only */
	assert_int_equal(st.other[2].tcp, 1);
	assert_int_equal(st.other[2].udp, 0);
	assert_int_equal(st.other[3].port, 0);
	capture_free(c);
	cbuf_free(&fr);
}

/* A header past caplen is "truncated" when the frame was longer on the wire,
 * malformed when it was not. */
static void test_cut_headers_are_truncated_only_when_the_frame_was_longer(void **state)
{
	(void)state;
	wb_t w;
	captures_message(&w, CM_A);
	uint8_t fr[2048];
	size_t n = captures_ip(&(captures_pkt_t){ .data = w.b, .len = w.n }, ipbuf, sizeof ipbuf);
	n = captures_frame(LT_EN10MB, 1, 0, ipbuf, n, fr, sizeof fr);
	static const struct {
		size_t caplen;
		int cut_reason, whole_reason;
	} cases[] = {
		{ 10, CAP_TRUNCATED, CAP_BAD_LINK },       /* in the Ethernet header */
		{ 16, CAP_TRUNCATED, CAP_BAD_LINK },       /* in the VLAN tag */
		{ 18 + 12, CAP_TRUNCATED, CAP_BAD_IP },    /* in the IP header */
		{ 18 + 24, CAP_TRUNCATED, CAP_BAD_IP },    /* in the UDP header */
		{ 18 + 28 + 5, CAP_TRUNCATED, CAP_BAD_IP },/* in the payload */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		for (int cut = 0; cut <= 1; cut++) {
			got_t g = { 0 };
			capture_stats_t st;
			capture_t *c = decoder(53, &g, &st);
			feed(c, DLT_EN10MB, fr, cases[i].caplen, cut ? n : cases[i].caplen);
			int r = cut ? cases[i].cut_reason : cases[i].whole_reason;
			assert_skips(&st, (struct skip[]){ { r, 1 } }, 1);
			capture_free(c);
		}
	}
}

/* Found by fuzz_capture: an IPv6 extension header whose end lies past the
 * captured bytes; the next one must not be read from there. */
static void test_ipv6_extension_header_past_the_snapshot_is_truncated(void **state)
{
	(void)state;
	static const uint8_t ext[24] = { 60, 1, [16] = 17, 0, 1, 4 }; /* 16 + 8 bytes */
	wb_t w;
	captures_message(&w, CM_AAAA);
	captures_pkt_t p = { .v6 = 1, .ext = ext, .ext_len = 24, .ext_first = 0,
			     .data = w.b, .len = w.n };
	size_t n = captures_ip(&p, ipbuf, sizeof ipbuf);
	for (size_t caplen = 40; caplen <= 40 + 24 + 8; caplen += 4) {
		got_t g = { 0 };
		capture_stats_t st;
		capture_t *c = decoder(53, &g, &st);
		feed(c, DLT_RAW, ipbuf, caplen, n);
		assert_skips(&st, SKIPS({ CAP_TRUNCATED, 1 }));
		capture_free(c);
	}
}

static void test_tcp_without_a_syn_is_not_followed(void **state)
{
	(void)state;
	got_t g = { 0 };
	capture_stats_t st;
	capture_t *c = decoder(53, &g, &st);
	cbuf_t s = { 0 };
	framed_put(&s, CM_A);
	seg(c, 0, 500, 0, s.p, s.n);              /* a whole message, but no SYN seen */
	seg(c, 0, 500 + (uint32_t)s.n, TCP_ACK, NULL, 0);
	assert_int_equal(g.n, 0);
	assert_skips(&st, SKIPS({ CAP_TCP_UNSYNCED, 1 }));
	seg(c, 0, 1000, TCP_SYN | TCP_ACK, NULL, 0);
	seg(c, 0, 1001, 0, s.p, s.n);
	assert_messages(&g, MSGS(CM_A));
	capture_free(c);
	cbuf_free(&s);
	got_free(&g);
}

static void test_tcp_many_messages_in_one_segment_and_zero_lengths(void **state)
{
	(void)state;
	got_t g = { 0 };
	capture_stats_t st;
	capture_t *c = decoder(53, &g, &st);
	cbuf_t s = { 0 };
	framed_put(&s, CM_A);
	cbuf_put(&s, "\0\0", 2);
	framed_put(&s, CM_AAAA);
	cbuf_put(&s, "\0\x05hello", 7);
	framed_put(&s, CM_NX);
	seg(c, 0, 7, TCP_SYN, s.p, s.n); /* on the SYN itself, as TCP Fast Open does */
	assert_messages(&g, MSGS(CM_A, CM_AAAA, CM_NX));
	assert_skips(&st, SKIPS({ CAP_SHORT_DNS, 2 }));
	capture_free(c);
	cbuf_free(&s);
	got_free(&g);
}

static void test_tcp_byte_at_a_time_in_both_directions(void **state)
{
	(void)state;
	got_t g = { 0 };
	capture_stats_t st;
	capture_t *c = decoder(53, &g, &st);
	cbuf_t q = { 0 }, r = { 0 };
	framed_put(&q, CM_NX_QUERY);
	framed_put(&r, CM_NX);
	seg(c, 1, 100, TCP_SYN, NULL, 0);
	seg(c, 0, 900, TCP_SYN | TCP_ACK, NULL, 0);
	for (size_t i = 0; i < r.n; i++) {
		if (i < q.n)
			seg(c, 1, 101 + (uint32_t)i, 0, q.p + i, 1);
		seg(c, 0, 901 + (uint32_t)i, 0, r.p + i, 1);
	}
	assert_messages(&g, MSGS(CM_NX_QUERY, CM_NX));
	assert_skips(&st, NO_SKIPS);
	capture_free(c);
	cbuf_free(&q);
	cbuf_free(&r);
	got_free(&g);
}

static void test_tcp_retransmissions_and_overlaps_keep_the_first_copy(void **state)
{
	(void)state;
	got_t g = { 0 };
	capture_stats_t st;
	capture_t *c = decoder(53, &g, &st);
	cbuf_t s = { 0 };
	framed_put(&s, CM_AAAA);
	uint8_t junk[128];
	memset(junk, 0xee, sizeof junk);
	seg(c, 0, 0, TCP_SYN, NULL, 0);
	memcpy(junk + 5, s.p + 40, 5);           /* junk at 35..40, the real bytes at 40..45 */
	seg(c, 0, 1 + 30, 0, s.p + 30, 10);      /* piece 30..40 */
	seg(c, 0, 1 + 35, 0, junk, 10);          /* 35..45: only 40..45 is new */
	seg(c, 0, 1 + 35, 0, junk, 10);          /* the same again: all held */
	seg(c, 0, 1, 0, s.p, 20);                /* 0..20 */
	seg(c, 0, 1 + 10, 0, junk, 10);          /* 10..20 again, different bytes: dropped */
	seg(c, 0, 1 + 20, 0, s.p + 20, 10);      /* 20..30 joins 30..45 */
	seg(c, 0, 1 + 45, 0, s.p + 45, s.n - 45);
	seg(c, 0, 1 + 10, 0, s.p + 10, s.n - 10); /* all of it again, after delivery */
	assert_messages(&g, MSGS(CM_AAAA));
	assert_skips(&st, NO_SKIPS);
	capture_free(c);
	cbuf_free(&s);
	got_free(&g);
}

static void test_tcp_fin_waits_for_data_still_missing(void **state)
{
	(void)state;
	got_t g = { 0 };
	capture_stats_t st;
	capture_t *c = decoder(53, &g, &st);
	cbuf_t s = { 0 };
	framed_put(&s, CM_A_QUERY);
	seg(c, 1, 41, TCP_SYN, NULL, 0);
	seg(c, 1, 42, 0, s.p, 10);
	seg(c, 1, 42 + 20, TCP_FIN | TCP_ACK, s.p + 20, s.n - 20);
	seg(c, 1, 42 + 10, 0, s.p + 10, 10);
	assert_messages(&g, MSGS(CM_A_QUERY));
	assert_skips(&st, NO_SKIPS);
	seg(c, 1, 42 + (uint32_t)s.n, 0, s.p, 3); /* the stream ended: nothing to add to */
	assert_skips(&st, SKIPS({ CAP_TCP_UNSYNCED, 1 }));
	capture_free(c);
	cbuf_free(&s);
	got_free(&g);
}

static void test_tcp_stream_ending_inside_a_message_is_cut(void **state)
{
	(void)state;
	got_t g = { 0 };
	capture_stats_t st;
	capture_t *c = decoder(53, &g, &st);
	cbuf_t s = { 0 };
	framed_put(&s, CM_A);
	for (unsigned how = 0; how < 4; how++) {
		uint16_t port = (uint16_t)(1000 + how);
		captures_pkt_t p = { .tcp = 1, .cport = port, .seq = 0, .flags = TCP_SYN };
		feed_ip(c, &p);
		p.seq = 1;
		p.flags = how == 0 ? TCP_FIN | TCP_ACK : 0;
		p.data = s.p;
		p.len = 10;
		feed_ip(c, &p);
		p.data = NULL;
		p.len = 0;
		p.seq = 11;
		if (how == 1)
			p.flags = TCP_RST;
		else if (how == 2)
			p.flags = TCP_SYN; /* a new connection on the same ports */
		if (how == 1 || how == 2)
			feed_ip(c, &p);
	}
	/* how 3 is still open: the end of the input cuts it */
	assert_skips(&st, SKIPS({ CAP_TCP_CUT, 3 }));
	capture_finish(c);
	assert_skips(&st, SKIPS({ CAP_TCP_CUT, 4 }));
	/* the new connection of how 2 held nothing: no count */
	assert_int_equal(g.n, 0);
	/* RST with nothing held counts nothing */
	seg(c, 0, 0, TCP_SYN, NULL, 0);
	seg(c, 0, 1, TCP_RST, NULL, 0);
	assert_skips(&st, SKIPS({ CAP_TCP_CUT, 4 }));
	capture_free(c);
	cbuf_free(&s);
}

static void test_tcp_gap_gives_the_stream_up_until_the_next_syn(void **state)
{
	(void)state;
	got_t g = { 0 };
	capture_stats_t st;
	capture_t *c = decoder(53, &g, &st);
	cbuf_t s = { 0 };
	framed_put(&s, CM_A);
	framed_put(&s, CM_AAAA);
	/* data past the window while a hole is open */
	seg(c, 0, 0, TCP_SYN, NULL, 0);
	seg(c, 0, 1, 0, s.p, 5);
	seg(c, 0, 1 + 70000, 0, s.p, 10);
	assert_skips(&st, SKIPS({ CAP_TCP_GAP, 1 }));
	seg(c, 0, 6, 0, s.p + 5, s.n - 5); /* too late: the stream was given up */
	assert_skips(&st, SKIPS({ CAP_TCP_GAP, 1 }, { CAP_TCP_UNSYNCED, 1 }));
	seg(c, 0, 5000, TCP_SYN, NULL, 0);
	seg(c, 0, 5001, 0, s.p, s.n);
	assert_messages(&g, MSGS(CM_A, CM_AAAA));
	/* more separate pieces than kept */
	seg(c, 1, 0, TCP_SYN, NULL, 0);
	for (uint32_t i = 0; i <= CAPTURE_TCP_PIECES; i++)
		seg(c, 1, 1 + 10 * (i + 1), 0, s.p + 10 * (i + 1), 5);
	assert_skips(&st, SKIPS({ CAP_TCP_GAP, 2 }, { CAP_TCP_UNSYNCED, 1 }));
	/* a hole at the end of the input */
	seg(c, 0, 9000, TCP_SYN, NULL, 0);
	seg(c, 0, 9001 + 10, 0, s.p + 10, 10);
	capture_finish(c);
	assert_skips(&st, SKIPS({ CAP_TCP_GAP, 3 }, { CAP_TCP_UNSYNCED, 1 }));
	/* a segment cut by the snapshot length is a hole as well */
	seg(c, 0, 0, TCP_SYN, NULL, 0);
	captures_pkt_t p = { .tcp = 1, .seq = 1, .data = s.p, .len = s.n };
	size_t n = captures_ip(&p, ipbuf, sizeof ipbuf);
	feed(c, DLT_RAW, ipbuf, n - 30, n);
	p.seq = 1 + (uint32_t)s.n;
	p.len = 4;
	feed_ip(c, &p);
	capture_finish(c);
	assert_skips(&st, SKIPS({ CAP_TCP_GAP, 4 }, { CAP_TCP_UNSYNCED, 1 }, { CAP_TRUNCATED, 1 }));
	assert_int_equal(g.n, 2);
	capture_free(c);
	cbuf_free(&s);
	got_free(&g);
}

static void test_tcp_message_of_65535_bytes_across_segments(void **state)
{
	(void)state;
	got_t g = { 0 };
	capture_stats_t st;
	capture_t *c = decoder(53, &g, &st);
	cbuf_t s = { 0 };
	uint8_t *big = malloc(65535);
	assert_non_null(big);
	for (size_t i = 0; i < 65535; i++)
		big[i] = (uint8_t)(i * 7);
	cbuf_put(&s, "\xff\xff", 2);
	cbuf_put(&s, big, 65535);
	framed_put(&s, CM_A);
	seg(c, 0, 0xffff0000u, TCP_SYN, NULL, 0); /* and wrap on the way */
	/* 1460-byte segments, each pair swapped */
	size_t mss = 1460, nseg = (s.n + mss - 1) / mss;
	for (size_t k = 0; k < nseg; k += 2) {
		for (int j = 1; j >= 0; j--) {
			size_t i = k + (size_t)j;
			if (i >= nseg)
				continue;
			size_t off = i * mss, len = s.n - off < mss ? s.n - off : mss;
			seg(c, 0, 0xffff0001u + (uint32_t)off, 0, s.p + off, len);
		}
	}
	assert_int_equal(g.n, 2);
	assert_int_equal(g.len[0], 65535);
	assert_memory_equal(g.msg[0], big, 65535);
	assert_skips(&st, NO_SKIPS);
	/* and in one go: 64 KiB of segments at once, as GRO hands them over */
	seg(c, 1, 0, TCP_SYN, NULL, 0);
	seg(c, 1, 1, 0, s.p, 60000);
	seg(c, 1, 60001, 0, s.p + 60000, s.n - 60000);
	assert_int_equal(g.n, 4);
	assert_memory_equal(g.msg[2], big, 65535);
	assert_skips(&st, NO_SKIPS);
	capture_free(c);
	cbuf_free(&s);
	free(big);
	got_free(&g);
}

static void test_tcp_streams_over_the_limit_evict_the_least_active(void **state)
{
	(void)state;
	got_t g = { 0 };
	capture_stats_t st;
	capture_t *c = decoder(53, &g, &st);
	cbuf_t s = { 0 };
	framed_put(&s, CM_A);
	for (unsigned i = 0; i <= CAPTURE_TCP_STREAMS; i++) {
		captures_pkt_t p = { .tcp = 1, .v6 = 1, .cport = (uint16_t)(1 + i),
				     .flags = TCP_SYN };
		feed_ip(c, &p);
	}
	assert_skips(&st, SKIPS({ CAP_TCP_EVICTED, 1 }));
	captures_pkt_t p = { .tcp = 1, .v6 = 1, .cport = 1, .seq = 1, .data = s.p, .len = s.n };
	feed_ip(c, &p); /* the first one was evicted */
	p.cport = 2;
	feed_ip(c, &p);
	assert_messages(&g, MSGS(CM_A));
	assert_skips(&st, SKIPS({ CAP_TCP_EVICTED, 1 }, { CAP_TCP_UNSYNCED, 1 }));
	capture_free(c);
	cbuf_free(&s);
	got_free(&g);
}

static void test_tcp_buffers_over_the_memory_limit_evict_the_least_active(void **state)
{
	(void)state;
	got_t g = { 0 };
	capture_stats_t st;
	capture_t *c = decoder(53, &g, &st);
	/* each stream holds a 60002-byte start of a 65535-byte message */
	size_t held = 60002, fit = CAPTURE_TCP_MEMORY / held, streams = fit + 50;
	uint8_t *part = calloc(1, held);
	assert_non_null(part);
	part[0] = part[1] = 0xff;
	for (size_t i = 0; i < streams; i++) {
		captures_pkt_t p = { .tcp = 1, .cport = (uint16_t)(1 + i), .flags = TCP_SYN };
		feed_ip(c, &p);
		p.flags = 0;
		p.seq = 1;
		p.data = part;
		p.len = held;
		feed_ip(c, &p);
	}
	assert_skips(&st, SKIPS({ CAP_TCP_EVICTED, streams - fit }));
	capture_finish(c);
	assert_skips(&st, SKIPS({ CAP_TCP_EVICTED, streams - fit }, { CAP_TCP_CUT, fit }));
	capture_free(c);
	free(part);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vlan_ethernet_gives_queries_and_responses_and_counts_arp),
		cmocka_unit_test(test_nanosecond_big_endian_raw_pcap_keeps_its_nanoseconds),
		cmocka_unit_test(test_pcapng_sll2_skips_the_custom_block),
		cmocka_unit_test(test_each_link_type_file_gives_its_messages),
		cmocka_unit_test(test_tcp_split_resent_reordered_segments_give_whole_messages),
		cmocka_unit_test(test_malformed_frames_are_counted_each_by_its_reason),
		cmocka_unit_test(test_cut_capture_keeps_what_came_before_and_says_where),
		cmocka_unit_test(test_framed_file_gives_each_message_with_its_offset),
		cmocka_unit_test(test_framed_zero_length_and_cut_message_are_counted_at_offsets),
		cmocka_unit_test(test_unreadable_inputs_fail_with_a_reason),
		cmocka_unit_test(test_framed_file_whose_first_message_is_cut_is_not_taken),
		cmocka_unit_test(test_a_pipe_is_read_like_a_file),
		cmocka_unit_test(test_callback_stops_the_reading),
		cmocka_unit_test(test_every_link_type_carries_ipv4_and_ipv6),
		cmocka_unit_test(test_bsd_loopback_family_is_read_in_either_byte_order),
		cmocka_unit_test(test_unsupported_link_type_is_counted_per_packet),
		cmocka_unit_test(test_ipv4_options_are_skipped),
		cmocka_unit_test(test_ipv6_extension_headers_are_followed),
		cmocka_unit_test(test_udp_payload_of_12_bytes_is_a_message_and_11_is_short),
		cmocka_unit_test(test_port_is_matched_on_either_side),
		cmocka_unit_test(test_packet_times_give_the_capture_range),
		cmocka_unit_test(test_other_ports_carrying_dns_are_remembered),
		cmocka_unit_test(test_cut_headers_are_truncated_only_when_the_frame_was_longer),
		cmocka_unit_test(test_ipv6_extension_header_past_the_snapshot_is_truncated),
		cmocka_unit_test(test_tcp_without_a_syn_is_not_followed),
		cmocka_unit_test(test_tcp_many_messages_in_one_segment_and_zero_lengths),
		cmocka_unit_test(test_tcp_byte_at_a_time_in_both_directions),
		cmocka_unit_test(test_tcp_retransmissions_and_overlaps_keep_the_first_copy),
		cmocka_unit_test(test_tcp_fin_waits_for_data_still_missing),
		cmocka_unit_test(test_tcp_stream_ending_inside_a_message_is_cut),
		cmocka_unit_test(test_tcp_gap_gives_the_stream_up_until_the_next_syn),
		cmocka_unit_test(test_tcp_message_of_65535_bytes_across_segments),
		cmocka_unit_test(test_tcp_streams_over_the_limit_evict_the_least_active),
		cmocka_unit_test(test_tcp_buffers_over_the_memory_limit_evict_the_least_active),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
