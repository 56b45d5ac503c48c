/*
 * capture.h: the DNS messages inside an input file, for `dnsnap load`.
 *
 * An input is one of:
 *  - a pcap capture (microsecond or nanosecond, either byte order) or a pcapng
 *    capture, read with libpcap; DNS over UDP and over TCP on one port;
 *  - a file of TCP-framed DNS messages: a 2-byte big-endian length, then the
 *    message, repeated (RFC 1035 4.2.2, as `dig +tcp` or a DNS proxy's log
 *    writes them).
 * The kind is told from the first 4 bytes: a pcap or pcapng magic number means
 * a capture, gzip's is refused (decompress first), anything else is taken for
 * a framed file. "-" is standard input, which is read
 * once, front to back, with no seeking and no copy of the whole input: the
 * peeked bytes are replayed ahead of the rest through a fopencookie() stream.
 *
 * Every DNS message found is handed to a callback, queries and responses
 * alike: the caller decides what to keep. What cannot be used is counted by
 * reason (enum capture_reason) and never stops the reading. Only an input
 * that cannot be read at all is an error.
 *
 * Link types: DLT_EN10MB (with any number of 802.1Q / 802.1ad VLAN tags),
 * DLT_RAW (and LINKTYPE_RAW, 101), DLT_IPV4, DLT_IPV6, DLT_NULL and DLT_LOOP
 * (the address family in either byte order), DLT_LINUX_SLL and DLT_LINUX_SLL2.
 * A capture of any other link type is refused up front by capture_read():
 * none of its packets could be read. capture_packet() counts such a packet
 * as CAP_LINKTYPE.
 *
 * IP: IPv4 with options; IPv6 past hop-by-hop, routing, destination-options
 * and AH extension headers. Fragments are not reassembled: each one is
 * counted as CAP_FRAGMENT (atomic fragments, offset 0 and no more fragments,
 * are whole packets and read as such). Checksums are not verified: captures
 * made on the sending host carry offloaded, not-yet-computed checksums.
 *
 * UDP: a datagram from or to the port is one DNS message.
 *
 * TCP: each direction of each connection (addresses, ports, direction) is a
 * stream of 2-byte-length-prefixed messages, put back in sequence order.
 *  - A stream starts at its SYN. Data of a stream whose SYN was not seen
 *    (the capture began mid-connection, or the stream was given up, below)
 *    cannot be split into messages and is counted CAP_TCP_UNSYNCED, a
 *    segment at a time, until a SYN starts the stream again.
 *  - Data already received (retransmitted, or overlapping what is held) is
 *    dropped: the first copy of each byte wins.
 *  - Out-of-order segments are kept, within CAPTURE_TCP_WINDOW bytes of the
 *    start of the message being assembled and in at most CAPTURE_TCP_PIECES
 *    separate pieces, until the missing data arrives.
 *  - Data that cannot be kept (past the window, or too many pieces) means
 *    data is missing for good: CAP_TCP_GAP, and the stream is given up.
 *  - FIN ends the stream once all data before it has arrived; RST ends it at
 *    once. A stream that ends with a partial message is counted CAP_TCP_CUT,
 *    or CAP_TCP_GAP if data before its end never arrived. capture_finish()
 *    ends every stream still open the same way.
 *  - At most CAPTURE_TCP_STREAMS streams are followed, holding at most
 *    CAPTURE_TCP_MEMORY bytes of buffered data in all. Past either limit
 *    the least recently active stream is given up (CAP_TCP_EVICTED).
 *    A stream holds a buffer only while a message is incomplete.
 *
 * Framed files: a length of 0 is counted (CAP_FRAMED_ZERO) and reading goes
 * on; a message cut by the end of the file is counted (CAP_FRAMED_CUT) and
 * described in capture_read()'s err. A file whose first message is not whole,
 * at least 12 bytes, with QDCOUNT 0 or 1 is not taken for a framed file.
 *
 * Memory: bounded whatever the input (the TCP limits above, one 64 KiB
 * buffer for framed files, libpcap's own bounded record buffer).
 * Depends on libc and libpcap (link with -lpcap).
 */
#ifndef DNSNAP_CLI_CAPTURE_H
#define DNSNAP_CLI_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/** Most TCP streams (one direction of a connection each) followed at once. */
#define CAPTURE_TCP_STREAMS 8192
/** Most bytes buffered for one stream: a whole 2-byte length and its message. */
#define CAPTURE_TCP_WINDOW (2 + 65535)
/** Most separate out-of-order pieces kept for one stream. */
#define CAPTURE_TCP_PIECES 8
/** Most bytes buffered for all streams together. */
#define CAPTURE_TCP_MEMORY (64u << 20)

/** Why something was not delivered; the index into capture_stats_t.skipped. */
enum capture_reason {
	CAP_LINKTYPE,     /* packet: unsupported link type */
	CAP_BAD_LINK,     /* packet: frame shorter than its link-layer header */
	CAP_NOT_IP,       /* packet: neither IPv4 nor IPv6 (ARP, LLDP, ...) */
	CAP_TRUNCATED,    /* packet: cut by the capture's snapshot length */
	CAP_BAD_IP,       /* packet: malformed IP header or lengths */
	CAP_FRAGMENT,     /* packet: IP fragment (not reassembled) */
	CAP_NOT_UDP_TCP,  /* packet: another protocol (ICMP, ESP, ...) */
	CAP_BAD_UDP,      /* packet: malformed UDP header (length < 8 or past the packet) */
	CAP_BAD_TCP,      /* packet: malformed TCP header (data offset) */
	CAP_OTHER_PORT,   /* packet: neither port is the DNS port */
	CAP_SHORT_DNS,    /* message: under 12 bytes, the DNS header (UDP, TCP or framed) */
	CAP_TCP_UNSYNCED, /* TCP segment: data of a stream not followed (no SYN seen) */
	CAP_TCP_GAP,      /* TCP stream: data missing; the stream is given up */
	CAP_TCP_CUT,      /* TCP stream: ended inside a message */
	CAP_TCP_EVICTED,  /* TCP stream: given up for another (too many, or memory) */
	CAP_FRAMED_ZERO,  /* framed file: a length of 0 */
	CAP_FRAMED_CUT,   /* framed file: the last message cut by the end of the file */
	CAP_FILE_CUT,     /* capture file: cut short or damaged; the rest was not read */
	CAP_REASONS
};

/** Where a delivered message came from. */
enum capture_transport { CAPTURE_FRAMED = 0, CAPTURE_TCP = 6, CAPTURE_UDP = 17 };

/** Most other ports remembered in capture_stats_t.other (the first seen). */
#define CAPTURE_OTHER_PORTS 8

typedef struct capture_stats {
	uint64_t packets;                 /* link-layer frames read (0 for framed files) */
	int64_t ts_min, ts_max;           /* earliest and latest packet time (seconds),
					   * when packets > 0; capture order may not be
					   * time order */
	/* Ports that are not the DNS port but carry what looks like DNS (a
	 * header of opcode QUERY with QDCOUNT 1): the server's port (the
	 * source of a response, the destination of a query), by packets. For
	 * "try --port" when nothing was found on the port asked for. */
	struct capture_port {
		uint16_t port;            /* 0: unused */
		uint64_t udp, tcp;
	} other[CAPTURE_OTHER_PORTS];
	uint64_t messages;                /* DNS messages delivered to the callback */
	uint64_t skipped[CAP_REASONS];    /* by reason, see capture_reason_name() */
	int last_problem;                 /* the reason last counted, or -1 */
	uint64_t last_problem_packet;     /* its packet number, from 1 (0: framed file) */
	uint64_t last_problem_offset;     /* framed: offset of its length; else UINT64_MAX */
} capture_stats_t;

/** About one delivered message. */
typedef struct capture_info {
	int64_t ts_sec;        /* capture time of its (last) packet; 0 for framed files */
	uint32_t ts_nsec;      /* nanoseconds, whatever the file's precision */
	uint64_t packet;       /* number of that packet, from 1; 0 for framed files */
	uint64_t offset;       /* framed files: offset of its 2-byte length; else 0 */
	int transport;         /* enum capture_transport */
} capture_info_t;

/**
 * Receives each DNS message: a UDP payload, one message of a TCP stream, or
 * one message of a framed file. At least 12 bytes, otherwise unchecked.
 * @p msg and @p info are valid only during the call.
 * @return 0 to go on, non-zero to stop reading
 */
typedef int (*capture_fn)(void *arg, const uint8_t *msg, size_t len, const capture_info_t *info);

/**
 * Read every DNS message of @p path ("-": standard input).
 *
 * @param port  the DNS port (53, or `--port N`): UDP and TCP packets with
 *              this source or destination port are read
 * @param[out] st   zeroed, then counted into; filled also on error
 * @param[out] err  on -1: "PATH: what is wrong[, after packet N | at offset N]";
 *                  on 0 or 1: "" or a warning about the end of the input that
 *                  was counted but deserves a line of its own ("PATH:
 *                  message cut by the end of the file at offset N", "PATH:
 *                  truncated dump file; ..., after packet N")
 * @return 0 when the whole input was read; 1 when @p fn asked to stop; -1
 *         when the input cannot be read: missing or unreadable, empty,
 *         neither a capture nor a framed file, a broken pcap or pcapng
 *         header, an unsupported link type, a read error, out of memory
 */
int capture_read(const char *path, uint16_t port, capture_fn fn, void *arg,
		 capture_stats_t *st, char *err, size_t errcap);

/**
 * capture_read() on an open stream, read from its current position (the
 * fuzzer's entry, over fmemopen()). @p f stays open and the caller's; @p name
 * is used in messages only.
 */
int capture_read_stream(FILE *f, const char *name, uint16_t port, capture_fn fn, void *arg,
			capture_stats_t *st, char *err, size_t errcap);

/** Whether the first bytes of an input (@p n of them, up to 4 used) are a
 * pcap or pcapng magic number: what capture_read() takes for a capture. */
int capture_is_capture(const uint8_t *head, size_t n);

/** The reason's description ("truncated packet"), or "?" when out of range;
 * load --json's key. */
const char *capture_reason_name(int reason);

/** What @p n of the reason's count are, for "N <text>": a noun taking the
 * plural ("1 packet on another port", "78 packets on other ports"); "?" when
 * out of range. */
const char *capture_reason_text(int reason, uint64_t n);

/** The packet decoder and its TCP streams. */
typedef struct capture capture_t;

/**
 * A decoder delivering to @p fn and counting into @p st (zeroed here).
 * @p st must outlive the decoder. Release with capture_free().
 * @return 0, or -ENOMEM
 */
int capture_new(uint16_t port, capture_fn fn, void *arg, capture_stats_t *st, capture_t **out);

/**
 * Decode one link-layer frame: count it, then deliver the DNS messages it
 * carries or completes, or count why not.
 *
 * @param linktype  a DLT_* value as pcap_datalink() returns it
 * @param pkt       the @p caplen bytes captured; only those are read
 * @param origlen   the frame's length on the wire (>= caplen): when it is
 *                  larger, a header or payload that does not fit in caplen
 *                  is CAP_TRUNCATED rather than malformed
 * @return 0; 1 when the callback asked to stop; -ENOMEM (the decoder stays
 *         usable: the TCP stream concerned was given up, uncounted)
 */
int capture_packet(capture_t *c, int linktype, const uint8_t *pkt, size_t caplen, size_t origlen,
		   int64_t ts_sec, uint32_t ts_nsec);

/** Whether capture_packet() decodes @p linktype. */
int capture_linktype_supported(int linktype);

/**
 * End of input: end every TCP stream still open, counting those left inside
 * a message (CAP_TCP_CUT) or with data missing (CAP_TCP_GAP). The decoder
 * can go on with new streams afterwards.
 */
void capture_finish(capture_t *c);

/** Release the decoder and its streams, counting nothing. Accepts NULL. */
void capture_free(capture_t *c);

#endif /* DNSNAP_CLI_CAPTURE_H */
