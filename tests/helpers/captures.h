/*
 * captures.h: capture fixtures, built byte by byte (no libpcap), for the
 * capture decoder's tests (tests/unit/test_capture.c) and for mkcaptures.
 *
 * Layers, each usable alone: a few small DNS messages; IPv4/IPv6 packets
 * carrying UDP or TCP; link-layer frames around them; a trace (a list of
 * frames) written as pcap (microseconds little-endian, or nanoseconds
 * big-endian) or pcapng; and the named fixture files built from those, whose
 * contents are listed in captures.c and asserted on in test_capture.c.
 * Overflowing a buffer aborts: a test that does is wrong.
 */
#ifndef DNSNAP_TEST_CAPTURES_H
#define DNSNAP_TEST_CAPTURES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "wb.h"

/** A growable byte buffer. Zero-initialise; release with cbuf_free(). */
typedef struct cbuf {
	uint8_t *p;
	size_t n, cap;
} cbuf_t;

void cbuf_put(cbuf_t *b, const void *p, size_t n);
void cbuf_free(cbuf_t *b);

/* ------------------------------------------------------------ DNS messages */

/** The messages: a query and its response for a.example/A (one A record),
 * aaaa.example/AAAA (one AAAA) and nx.example/A (NXDOMAIN with the SOA of
 * example). */
enum captures_msg { CM_A_QUERY, CM_A, CM_AAAA_QUERY, CM_AAAA, CM_NX_QUERY, CM_NX, CM_COUNT };

/** Message @p m, written into @p w from its start. */
void captures_message(wb_t *w, int m);

/* ------------------------------------------------------------ packets */

/* Link types as capture files number them (LINKTYPE_*). */
enum {
	LT_NULL = 0, LT_EN10MB = 1, LT_RAW = 101, LT_LOOP = 108, LT_SLL = 113,
	LT_IPV4 = 228, LT_IPV6 = 229, LT_SLL2 = 276, LT_IEEE802_11 = 105,
};

#define CAPTURES_CLIENT_PORT 40000
#define CAPTURES_TS0 1700000000 /* frame i of a trace is at TS0 + i s + CAPTURES_NS ns */
#define CAPTURES_NS 123456789u

#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_PSH 0x08
#define TCP_ACK 0x10

/** One IP packet. The client is 192.0.2.1 or 2001:db8::1, the server
 * 192.0.2.53 or 2001:db8::53. Zero fields take the defaults noted. */
typedef struct captures_pkt {
	int v6;               /* IPv6, else IPv4 */
	int tcp;              /* TCP, else UDP */
	int to_server;        /* client to server, else server to client */
	uint16_t cport;       /* the client's port; 0: CAPTURES_CLIENT_PORT */
	uint16_t sport;       /* the server's port; 0: 53 */
	uint32_t seq;         /* TCP sequence number */
	unsigned flags;       /* TCP flags; 0: ACK, plus PSH when there is data */
	uint16_t frag;        /* IPv4 flags and fragment offset word */
	const uint8_t *ext;   /* IPv6 extension headers, put before the transport */
	size_t ext_len;
	unsigned ext_first;   /* the IPv6 Next Header value for ext[0] */
	const uint8_t *data;  /* payload */
	size_t len;
} captures_pkt_t;

/** The packet's bytes in @p out. @return its length */
size_t captures_ip(const captures_pkt_t *p, uint8_t *out, size_t cap);

/** An ARP request, for the link types that can carry one. @return its length */
size_t captures_arp(uint8_t *out, size_t cap);

/**
 * A link-layer frame: @p linktype's header, then the @p len bytes of @p l3
 * (an IP packet, or ARP when @p ethertype is 0x0806). EN10MB frames get @p vlans
 * 802.1Q / 802.1ad tags (outermost 802.1ad). @p ethertype 0 means "from the IP
 * version": 0x0800 or 0x86dd. @return the frame's length
 */
size_t captures_frame(int linktype, unsigned vlans, unsigned ethertype, const uint8_t *l3,
		      size_t len, uint8_t *out, size_t cap);

/* ------------------------------------------------------------ files */

#define CAPTURES_FRAMES 64

/** Frames in capture order, with their captured and original lengths. */
typedef struct captures_trace {
	uint32_t linktype;
	size_t n;
	struct {
		size_t off;               /* into data */
		uint32_t caplen, origlen;
		int64_t ts;               /* its time in seconds; 0: CAPTURES_TS0 + i */
	} f[CAPTURES_FRAMES];
	cbuf_t data;
} captures_trace_t;

/** Add a frame of which @p caplen bytes are kept (caplen <= len; @p origlen is @p len). */
void trace_add(captures_trace_t *t, const uint8_t *frame, size_t len, size_t caplen);
/** Add an IP packet framed for the trace's link type (no VLAN). */
void trace_ip(captures_trace_t *t, const captures_pkt_t *p);
/** Add a UDP DNS message: @p m from client to server when @p to_server. */
void trace_dns(captures_trace_t *t, int v6, int to_server, int m);
void trace_free(captures_trace_t *t);

enum captures_format { CF_PCAP_US_LE, CF_PCAP_NS_BE, CF_PCAPNG };

/** The trace as a file of @p format, appended to @p out. pcapng: a Section Header
 * Block, an Interface Description Block with if_tsresol 9 (nanoseconds), an
 * Enhanced Packet Block per frame, and a custom block after the first frame. */
void trace_write(const captures_trace_t *t, int format, cbuf_t *out);

/**
 * The timed capture, for `dnsnap load`'s use of packet times (test_load_time.sh),
 * as @p format, the server on @p port, at times around @p base (a test's "now",
 * at or before the load). UDP on EN10MB, frames in this order:
 *   base-600  query and response signed.example.org/A: 192.0.2.80 and its
 *             RRSIG, AD, TTL 3600 (a DO=1 client's)
 *   base-590  response signed.example.org/A: 192.0.2.80 alone, TTL 3600 (DO=0)
 *   base-600  response long.example.org/A 192.0.2.1, TTL 3600
 *   base-540  response short.example.org/A 192.0.2.2, TTL 30
 *   base+1y   response future.example.org/A 192.0.2.3, TTL 300 (clock skew)
 * Frame times are whole seconds (pcapng: nanosecond resolution, 0 ns).
 */
void captures_timed(cbuf_t *out, int format, int64_t base, uint16_t port);

/** @p m as a TCP-framed message: 2-byte length, message. */
void framed_put(cbuf_t *out, int m);

/** A named fixture file (see captures.c for each one's contents). */
typedef struct captures_fixture {
	const char *name;
	const char *about;
	void (*build)(cbuf_t *out);
} captures_fixture_t;

extern const captures_fixture_t captures_fixtures[];
extern const size_t captures_nfixtures;

/** The fixture called @p name, or NULL. */
const captures_fixture_t *captures_find(const char *name);

/**
 * Write every fixture into @p dir (created if missing), one line per file on
 * @p log when not NULL. @return 0, or -1 with a message on stderr
 */
int captures_write_dir(const char *dir, FILE *log);

#endif /* DNSNAP_TEST_CAPTURES_H */
