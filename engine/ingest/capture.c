/*
 * engine/ingest/: how DNS responses get into a cache from outside a resolver.
 * A library of its own (libdnsnap-ingest.a) beside libdnsnap: it brings
 * libpcap and ldns, which a resolver embedding libdnsnap does not need. The
 * tool's load command and the tests use it:
 * - capture.c (capture.h): DNS messages out of pcap, pcapng and TCP-framed
 *   files;
 * - unbound.c (unbound.h): Unbound's dump_cache text to responses, and
 *   snapshots to its load_cache text.
 *
 * capture.c: DNS messages out of captures and framed files; see capture.h
 * for what is read and what is counted.
 *
 * Every header is read through explicit length checks against what was
 * captured (n) and what the headers claim (the IP and UDP lengths). When a
 * header does not fit in the captured bytes, the frame is "truncated" if it
 * was longer on the wire (the snapshot length cut it), and malformed if not.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <pcap/pcap.h>

#include "byteorder.h"
#include "capture.h"

#define LINKTYPE_RAW 101 /* raw IP in files; pcap_datalink() maps it to DLT_RAW */

#define ETH_IPV4 0x0800
#define ETH_IPV6 0x86dd

#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04

#define KEY_LEN 40           /* version, source, destination, ports: see flow_key() */
#define BUCKETS 16384        /* 2 x CAPTURE_TCP_STREAMS, a power of 2 */
#define BUF_MIN 4096

/* One direction of a TCP connection. buf[head, head + have) is the data in
 * sequence from `seq` on: the start of the message being assembled. Pieces
 * are out-of-order data at offsets from head, sorted, disjoint, all past
 * `have` with a hole before each. buf is NULL while nothing is held. */
struct stream {
	struct stream *chain;         /* next in the hash bucket */
	struct stream *older, *newer; /* activity order, for eviction */
	uint8_t key[KEY_LEN];
	uint32_t bucket;
	uint32_t isn;                 /* sequence number of the SYN */
	uint32_t seq;                 /* sequence number of buf[head] */
	uint32_t fin_seq;             /* sequence number of the FIN, when fin */
	int fin;
	uint8_t *buf;
	size_t cap, head, have;
	unsigned npieces;
	struct piece {
		size_t lo, hi;
	} piece[CAPTURE_TCP_PIECES];
};

struct capture {
	uint16_t port;
	capture_fn fn;
	void *arg;
	capture_stats_t *st;
	int framed;                   /* reading a framed file: offsets, no packets */
	uint64_t offset;              /* framed: offset of the current message's length */
	int64_t ts_sec;               /* the current packet's time */
	uint32_t ts_nsec;
	size_t nstreams;
	size_t memory;                /* bytes of all stream buffers */
	struct stream *oldest, *newest;
	struct stream *bucket[BUCKETS];
};

static const char *const reason_names[CAP_REASONS] = {
	[CAP_LINKTYPE] = "unsupported link type",
	[CAP_BAD_LINK] = "malformed link-layer header",
	[CAP_NOT_IP] = "not IPv4 or IPv6",
	[CAP_TRUNCATED] = "truncated packet",
	[CAP_BAD_IP] = "malformed IP header",
	[CAP_FRAGMENT] = "IP fragment (not reassembled)",
	[CAP_NOT_UDP_TCP] = "not UDP or TCP",
	[CAP_BAD_UDP] = "malformed UDP header",
	[CAP_BAD_TCP] = "malformed TCP header",
	[CAP_OTHER_PORT] = "other port",
	[CAP_SHORT_DNS] = "too short for DNS",
	[CAP_TCP_UNSYNCED] = "TCP data before its stream's SYN",
	[CAP_TCP_GAP] = "TCP gap (data missing)",
	[CAP_TCP_CUT] = "TCP stream ended inside a message",
	[CAP_TCP_EVICTED] = "TCP stream evicted",
	[CAP_FRAMED_ZERO] = "framed: zero length",
	[CAP_FRAMED_CUT] = "framed: message cut by end of file",
	[CAP_FILE_CUT] = "capture file cut short or damaged",
};

const char *capture_reason_name(int reason)
{
	return reason >= 0 && reason < CAP_REASONS ? reason_names[reason] : "?";
}

/* What is counted, for "N <what>": a noun, singular and plural. */
static const char *const reason_nouns[CAP_REASONS][2] = {
	[CAP_LINKTYPE] = { "packet of an unsupported link type",
			   "packets of an unsupported link type" },
	[CAP_BAD_LINK] = { "malformed link-layer header", "malformed link-layer headers" },
	[CAP_NOT_IP] = { "packet not IPv4 or IPv6", "packets not IPv4 or IPv6" },
	[CAP_TRUNCATED] = { "truncated packet", "truncated packets" },
	[CAP_BAD_IP] = { "malformed IP header", "malformed IP headers" },
	[CAP_FRAGMENT] = { "IP fragment (not reassembled)", "IP fragments (not reassembled)" },
	[CAP_NOT_UDP_TCP] = { "packet not UDP or TCP", "packets not UDP or TCP" },
	[CAP_BAD_UDP] = { "malformed UDP header", "malformed UDP headers" },
	[CAP_BAD_TCP] = { "malformed TCP header", "malformed TCP headers" },
	[CAP_OTHER_PORT] = { "packet on another port", "packets on other ports" },
	[CAP_SHORT_DNS] = { "packet too short for DNS", "packets too short for DNS" },
	[CAP_TCP_UNSYNCED] = { "TCP segment before its stream's SYN",
			       "TCP segments before their stream's SYN" },
	[CAP_TCP_GAP] = { "TCP gap (data missing)", "TCP gaps (data missing)" },
	[CAP_TCP_CUT] = { "TCP stream ended inside a message",
			  "TCP streams ended inside a message" },
	[CAP_TCP_EVICTED] = { "TCP stream evicted", "TCP streams evicted" },
	[CAP_FRAMED_ZERO] = { "zero-length framed message", "zero-length framed messages" },
	[CAP_FRAMED_CUT] = { "framed message cut by the end of the file",
			     "framed messages cut by the end of the file" },
	[CAP_FILE_CUT] = { "capture file cut short or damaged",
			   "capture files cut short or damaged" },
};

const char *capture_reason_text(int reason, uint64_t n)
{
	return reason >= 0 && reason < CAP_REASONS ? reason_nouns[reason][n != 1] : "?";
}

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

static void stats_init(capture_stats_t *st)
{
	memset(st, 0, sizeof *st);
	st->last_problem = -1;
	st->last_problem_offset = UINT64_MAX;
}

/* Count a reason. Returns 0, so that decoders can `return skip(...)`. */
static int skip(capture_t *c, int reason)
{
	capture_stats_t *st = c->st;
	st->skipped[reason]++;
	st->last_problem = reason;
	st->last_problem_packet = st->packets;
	st->last_problem_offset = c->framed ? c->offset : UINT64_MAX;
	return 0;
}

/* A header past the captured bytes: cut by the snapshot length when the frame
 * was longer on the wire, else the header's own fault. */
static int short_by(capture_t *c, int cut, int reason)
{
	return skip(c, cut ? CAP_TRUNCATED : reason);
}

/* Returns 1 when the callback asks to stop. */
static int deliver(capture_t *c, const uint8_t *msg, size_t len, int transport)
{
	if (len < 12)
		return skip(c, CAP_SHORT_DNS);
	capture_info_t info = {
		.ts_sec = c->ts_sec,
		.ts_nsec = c->ts_nsec,
		.packet = c->framed ? 0 : c->st->packets,
		.offset = c->framed ? c->offset : 0,
		.transport = transport,
	};
	c->st->messages++;
	return c->fn(c->arg, msg, len, &info) != 0;
}

/* ------------------------------------------------------------ TCP streams */

static uint32_t key_bucket(const uint8_t *key)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (size_t i = 0; i < KEY_LEN; i++)
		h = (h ^ key[i]) * 16777619u;
	return h & (BUCKETS - 1);
}

static struct stream *stream_find(const capture_t *c, const uint8_t *key, uint32_t b)
{
	for (struct stream *s = c->bucket[b]; s != NULL; s = s->chain)
		if (memcmp(s->key, key, KEY_LEN) == 0)
			return s;
	return NULL;
}

static void lru_unlink(capture_t *c, struct stream *s)
{
	if (s->older)
		s->older->newer = s->newer;
	else
		c->oldest = s->newer;
	if (s->newer)
		s->newer->older = s->older;
	else
		c->newest = s->older;
	s->older = s->newer = NULL;
}

static void lru_push(capture_t *c, struct stream *s)
{
	s->older = c->newest;
	s->newer = NULL;
	if (c->newest)
		c->newest->newer = s;
	else
		c->oldest = s;
	c->newest = s;
}

static void buf_release(capture_t *c, struct stream *s)
{
	free(s->buf);
	c->memory -= s->cap;
	s->buf = NULL;
	s->cap = s->head = 0;
}

/* Stop following @p s, counting @p reason (none when negative). */
static void stream_drop(capture_t *c, struct stream *s, int reason)
{
	if (reason >= 0)
		skip(c, reason);
	struct stream **pp = &c->bucket[s->bucket];
	while (*pp != s)
		pp = &(*pp)->chain;
	*pp = s->chain;
	lru_unlink(c, s);
	buf_release(c, s);
	c->nstreams--;
	free(s);
}

/* The stream ends (FIN, RST, SYN of a new connection, end of input): what it
 * still holds is a message it will never complete. */
static void stream_end(capture_t *c, struct stream *s)
{
	stream_drop(c, s, s->npieces ? CAP_TCP_GAP : s->have ? CAP_TCP_CUT : -1);
}

static int stream_new(capture_t *c, const uint8_t *key, uint32_t b, uint32_t isn,
		      struct stream **out)
{
	if (c->nstreams >= CAPTURE_TCP_STREAMS)
		stream_drop(c, c->oldest, CAP_TCP_EVICTED);
	struct stream *s = calloc(1, sizeof *s);
	if (s == NULL)
		return -ENOMEM;
	memcpy(s->key, key, KEY_LEN);
	s->bucket = b;
	s->chain = c->bucket[b];
	c->bucket[b] = s;
	lru_push(c, s);
	c->nstreams++;
	s->isn = isn;
	s->seq = isn + 1;
	*out = s;
	return 0;
}

static size_t stream_span(const struct stream *s)
{
	return s->npieces ? s->piece[s->npieces - 1].hi : s->have;
}

/* Room for buf[head, head + end). Other streams may be evicted to stay within
 * CAPTURE_TCP_MEMORY; @p s itself is the most recently active, so it is not. */
static int stream_reserve(capture_t *c, struct stream *s, size_t end)
{
	if (s->head + end <= s->cap)
		return 0;
	if (s->head > 0) {
		memmove(s->buf, s->buf + s->head, stream_span(s));
		s->head = 0;
		if (end <= s->cap)
			return 0;
	}
	size_t want = s->cap * 2;
	if (want < BUF_MIN)
		want = BUF_MIN;
	if (want < end)
		want = end;
	if (want > CAPTURE_TCP_WINDOW)
		want = CAPTURE_TCP_WINDOW;
	while (c->memory - s->cap + want > CAPTURE_TCP_MEMORY && c->oldest != s)
		stream_drop(c, c->oldest, CAP_TCP_EVICTED);
	uint8_t *b = realloc(s->buf, want);
	if (b == NULL)
		return -ENOMEM;
	c->memory += want - s->cap;
	s->buf = b;
	s->cap = want;
	return 0;
}

static void stream_consumed(struct stream *s, size_t k)
{
	s->head += k;
	s->have -= k;
	s->seq += (uint32_t)k;
	for (unsigned i = 0; i < s->npieces; i++) {
		s->piece[i].lo -= k;
		s->piece[i].hi -= k;
	}
}

/* Deliver the whole messages at the front. Returns 1 when told to stop. */
static int stream_extract(capture_t *c, struct stream *s)
{
	while (s->have >= 2) {
		const uint8_t *m = s->buf + s->head;
		size_t len = ld16be(m);
		if (s->have < 2 + len)
			break;
		int stop = deliver(c, m + 2, len, CAPTURE_TCP);
		stream_consumed(s, 2 + len);
		if (stop)
			return 1;
	}
	if (s->have == 0 && s->npieces == 0)
		buf_release(c, s);
	return 0;
}

/* Out-of-order data at @p off (> have) from head: kept as a piece, unless it
 * cannot be, which loses data for good. *sp is set to NULL when the stream is
 * given up. */
static int stream_piece(capture_t *c, struct stream **sp, size_t off, const uint8_t *data,
			size_t len)
{
	struct stream *s = *sp;
	if (len > CAPTURE_TCP_WINDOW || off > CAPTURE_TCP_WINDOW - len) {
		stream_drop(c, s, CAP_TCP_GAP);
		*sp = NULL;
		return 0;
	}
	size_t lo = off, hi = off + len;
	/* The pieces after adding [lo, hi), merged with those it touches. */
	struct piece merged[CAPTURE_TCP_PIECES + 1];
	unsigned n = 0, placed = 0;
	for (unsigned i = 0; i < s->npieces; i++) {
		const struct piece *p = &s->piece[i];
		if (p->hi < lo) {
			merged[n++] = *p;
		} else if (p->lo > hi) {
			if (!placed) {
				merged[n++] = (struct piece){ lo, hi };
				placed = 1;
			}
			merged[n++] = *p;
		} else {
			lo = p->lo < lo ? p->lo : lo;
			hi = p->hi > hi ? p->hi : hi;
		}
	}
	if (!placed)
		merged[n++] = (struct piece){ lo, hi };
	if (n > CAPTURE_TCP_PIECES) {
		stream_drop(c, s, CAP_TCP_GAP);
		*sp = NULL;
		return 0;
	}
	int err = stream_reserve(c, s, hi);
	if (err) {
		stream_drop(c, s, -1);
		*sp = NULL;
		return err;
	}
	/* Copy only the bytes not held yet: the first copy wins. */
	size_t at = off, end = off + len;
	for (unsigned i = 0; i < s->npieces && at < end; i++) {
		const struct piece *p = &s->piece[i];
		if (p->hi <= at)
			continue;
		if (p->lo >= end)
			break;
		if (p->lo > at)
			memcpy(s->buf + s->head + at, data + (at - off), p->lo - at);
		at = p->hi;
	}
	if (at < end)
		memcpy(s->buf + s->head + at, data + (at - off), end - at);
	memcpy(s->piece, merged, n * sizeof merged[0]);
	s->npieces = n;
	return 0;
}

/* Payload of @p len bytes at sequence number @p seq. */
static int stream_data(capture_t *c, struct stream **sp, uint32_t seq, const uint8_t *data,
		       size_t len)
{
	struct stream *s = *sp;
	while (len > 0) {
		/* Signed distance: data up to 2 GiB behind is old, not far ahead. */
		int64_t off = (int32_t)(seq - s->seq);
		if (off < (int64_t)s->have) {
			size_t dup = (size_t)((int64_t)s->have - off);
			if (len <= dup)
				return 0; /* all of it held or delivered: a retransmission */
			data += dup;
			len -= dup;
			seq += (uint32_t)dup;
			continue;
		}
		if (off > (int64_t)s->have)
			return stream_piece(c, sp, (size_t)off, data, len);
		if (s->have == 0 && s->npieces == 0) {
			/* Nothing held: whole messages go straight from the packet. */
			size_t mlen;
			if (len >= 2 && len - 2 >= (mlen = ld16be(data))) {
				int stop = deliver(c, data + 2, mlen, CAPTURE_TCP);
				s->seq += (uint32_t)(2 + mlen);
				seq += (uint32_t)(2 + mlen);
				data += 2 + mlen;
				len -= 2 + mlen;
				if (stop)
					return 1;
				continue;
			}
		}
		/* In sequence: append up to the next piece or the window's end. Never
		 * 0 bytes: a piece starts past `have`, and a full window holds a
		 * whole message, delivered below before the next round. */
		size_t room = CAPTURE_TCP_WINDOW - s->have;
		if (s->npieces && s->piece[0].lo - s->have < room)
			room = s->piece[0].lo - s->have;
		size_t n = min_size(len, room);
		int err = stream_reserve(c, s, s->have + n);
		if (err) {
			stream_drop(c, s, -1);
			*sp = NULL;
			return err;
		}
		memcpy(s->buf + s->head + s->have, data, n);
		s->have += n;
		data += n;
		len -= n;
		seq += (uint32_t)n;
		while (s->npieces && s->piece[0].lo <= s->have) {
			if (s->piece[0].hi > s->have)
				s->have = s->piece[0].hi;
			memmove(s->piece, s->piece + 1, --s->npieces * sizeof s->piece[0]);
		}
		if (stream_extract(c, s))
			return 1;
	}
	return 0;
}

static int tcp_segment(capture_t *c, const uint8_t *key, uint32_t seq, unsigned flags,
		       const uint8_t *data, size_t len)
{
	uint32_t b = key_bucket(key);
	struct stream *s = stream_find(c, key, b);
	if (flags & TH_RST) {
		if (s)
			stream_end(c, s);
		return 0;
	}
	if (flags & TH_SYN) {
		if (s == NULL || s->isn != seq) { /* else a retransmitted SYN */
			if (s)
				stream_end(c, s);
			int err = stream_new(c, key, b, seq, &s);
			if (err)
				return err;
		}
		seq++; /* data on a SYN (TCP Fast Open) follows the ISN */
	}
	if (s == NULL) {
		if (len)
			skip(c, CAP_TCP_UNSYNCED);
		return 0;
	}
	lru_unlink(c, s);
	lru_push(c, s);
	if (flags & TH_FIN) {
		s->fin = 1;
		s->fin_seq = seq + (uint32_t)len;
	}
	int rc = stream_data(c, &s, seq, data, len);
	if (rc != 0 || s == NULL)
		return rc;
	if (s->fin && (int32_t)(s->fin_seq - (s->seq + (uint32_t)s->have)) <= 0)
		stream_end(c, s);
	return 0;
}

/* ------------------------------------------------------------ packets */

/* Addresses for a TCP stream's key. */
struct addrs {
	int version;
	const uint8_t *src, *dst;
	size_t alen;
};

/* key: version (1), source address (16), destination address (16), source
 * port (2), destination port (2), zero padding (3). */
static void flow_key(uint8_t *key, const struct addrs *a, const uint8_t *ports)
{
	memset(key, 0, KEY_LEN);
	key[0] = (uint8_t)a->version;
	memcpy(key + 1, a->src, a->alen);
	memcpy(key + 17, a->dst, a->alen);
	memcpy(key + 33, ports, 4);
}

/* A packet on another port: remember its server port when its payload looks
 * like DNS (@p dns: the DNS header, @p n bytes of it captured). */
static void other_port(capture_t *c, const uint8_t *ports, const uint8_t *dns, size_t n,
		       int tcp)
{
	if (n < 12 || ((dns[2] >> 3) & 0xf) != 0 || ld16be(dns + 4) != 1)
		return;
	uint16_t port = ld16be(ports + ((dns[2] & 0x80) ? 0 : 2));
	for (int i = 0; i < CAPTURE_OTHER_PORTS; i++) {
		struct capture_port *o = &c->st->other[i];
		if (o->port != port && o->port != 0)
			continue;
		o->port = port;
		if (tcp)
			o->tcp++;
		else
			o->udp++;
		return;
	}
}

/* @p len: the transport header and payload as the IP header says; @p avail:
 * how much of it was captured (<= len). */
static int udp(capture_t *c, const uint8_t *p, size_t len, size_t avail)
{
	if (len < 8)
		return skip(c, CAP_BAD_UDP);
	if (avail < 8)
		return skip(c, CAP_TRUNCATED);
	if (ld16be(p) != c->port && ld16be(p + 2) != c->port) {
		other_port(c, p, p + 8, avail - 8, 0);
		return skip(c, CAP_OTHER_PORT);
	}
	size_t ulen = ld16be(p + 4);
	if (ulen < 8 || ulen > len)
		return skip(c, CAP_BAD_UDP);
	if (ulen > avail)
		return skip(c, CAP_TRUNCATED);
	return deliver(c, p + 8, ulen - 8, CAPTURE_UDP);
}

static int tcp(capture_t *c, const struct addrs *a, const uint8_t *p, size_t len, size_t avail)
{
	if (len < 20)
		return skip(c, CAP_BAD_TCP);
	if (avail < 20)
		return skip(c, CAP_TRUNCATED);
	size_t doff = (size_t)(p[12] >> 4) * 4;
	if (ld16be(p) != c->port && ld16be(p + 2) != c->port) {
		/* a segment holding a whole message: its 2-byte length, then it */
		if (doff >= 20 && doff + 2 <= avail && ld16be(p + doff) == len - doff - 2)
			other_port(c, p, p + doff + 2, avail - doff - 2, 1);
		return skip(c, CAP_OTHER_PORT);
	}
	if (doff < 20 || doff > len)
		return skip(c, CAP_BAD_TCP);
	if (avail < len) /* lost to the stream: it will show as a gap */
		return skip(c, CAP_TRUNCATED);
	uint8_t key[KEY_LEN];
	flow_key(key, a, p);
	return tcp_segment(c, key, ld32be(p + 4), p[13], p + doff, len - doff);
}

static int transport(capture_t *c, const struct addrs *a, unsigned proto, const uint8_t *p,
		     size_t len, size_t avail)
{
	if (proto == 17)
		return udp(c, p, len, avail);
	if (proto == 6)
		return tcp(c, a, p, len, avail);
	return skip(c, CAP_NOT_UDP_TCP);
}

static int ipv4(capture_t *c, const uint8_t *p, size_t n, int cut)
{
	if (n < 20)
		return short_by(c, cut, CAP_BAD_IP);
	size_t hl = (size_t)(p[0] & 15) * 4, tot = ld16be(p + 2);
	if (hl < 20 || tot < hl || (tot > n && !cut))
		return skip(c, CAP_BAD_IP);
	if (n < hl)
		return skip(c, CAP_TRUNCATED);
	if (ld16be(p + 6) & 0x3fff) /* more fragments, or an offset */
		return skip(c, CAP_FRAGMENT);
	struct addrs a = { 4, p + 12, p + 16, 4 };
	return transport(c, &a, p[9], p + hl, tot - hl, min_size(n, tot) - hl);
}

static int ipv6(capture_t *c, const uint8_t *p, size_t n, int cut)
{
	if (n < 40)
		return short_by(c, cut, CAP_BAD_IP);
	size_t tot = 40 + (size_t)ld16be(p + 4);
	if (tot > n && !cut)
		return skip(c, CAP_BAD_IP);
	size_t avail = min_size(n, tot), off = 40;
	unsigned next = p[6];
	struct addrs a = { 6, p + 8, p + 24, 16 };
	for (;;) { /* each round moves off forward by 8 bytes or more, within tot */
		size_t hl;
		switch (next) {
		case 0:  /* hop-by-hop options */
		case 43: /* routing */
		case 60: /* destination options */
		case 51: /* authentication header */
		case 44: /* fragment */
			if (tot - off < 8)
				return skip(c, CAP_BAD_IP);
			if (avail < off + 8) /* off may be past avail already: no subtraction */
				return skip(c, CAP_TRUNCATED);
			if (next == 44) {
				if (ld16be(p + off + 2) & 0xfff9) /* an offset, or more fragments */
					return skip(c, CAP_FRAGMENT);
				hl = 8;
			} else if (next == 51) {
				hl = ((size_t)p[off + 1] + 2) * 4;
			} else {
				hl = ((size_t)p[off + 1] + 1) * 8;
			}
			if (hl > tot - off)
				return skip(c, CAP_BAD_IP);
			next = p[off];
			off += hl;
			break;
		default:
			return transport(c, &a, next, p + off, tot - off,
					 avail > off ? avail - off : 0);
		}
	}
}

/* An IP packet; @p version is what the link layer said (0: read it here). */
static int ip(capture_t *c, const uint8_t *p, size_t n, int cut, int version)
{
	if (n < 1)
		return short_by(c, cut, CAP_BAD_IP);
	int v = p[0] >> 4;
	if (version && v != version)
		return skip(c, CAP_BAD_IP);
	if (v == 4)
		return ipv4(c, p, n, cut);
	if (v == 6)
		return ipv6(c, p, n, cut);
	return skip(c, CAP_BAD_IP);
}

static int ethertype(capture_t *c, const uint8_t *p, size_t n, int cut, size_t off, unsigned et)
{
	while (et == 0x8100 || et == 0x88a8 || et == 0x9100) { /* 802.1Q, 802.1ad, old QinQ */
		if (n - off < 4)
			return short_by(c, cut, CAP_BAD_LINK);
		et = ld16be(p + off + 2);
		off += 4;
	}
	if (et == ETH_IPV4)
		return ip(c, p + off, n - off, cut, 4);
	if (et == ETH_IPV6)
		return ip(c, p + off, n - off, cut, 6);
	return skip(c, CAP_NOT_IP);
}

/* DLT_NULL and DLT_LOOP: the BSD address family, in the capturing host's byte
 * order (NULL) or big-endian (LOOP); either is taken, as tools write both. */
static int bsd_loopback(capture_t *c, const uint8_t *p, size_t n, int cut)
{
	if (n < 4)
		return short_by(c, cut, CAP_BAD_LINK);
	uint32_t af = ld32be(p);
	if (af > 0xff)
		af = __builtin_bswap32(af);
	if (af == 2)
		return ip(c, p + 4, n - 4, cut, 4);
	if (af == 10 || af == 24 || af == 28 || af == 30) /* Linux, *BSD, FreeBSD, Darwin */
		return ip(c, p + 4, n - 4, cut, 6);
	return skip(c, CAP_NOT_IP);
}

int capture_linktype_supported(int linktype)
{
	switch (linktype) {
	case DLT_EN10MB:
	case DLT_RAW:
	case LINKTYPE_RAW:
	case DLT_IPV4:
	case DLT_IPV6:
	case DLT_NULL:
	case DLT_LOOP:
	case DLT_LINUX_SLL:
	case DLT_LINUX_SLL2:
		return 1;
	default:
		return 0;
	}
}

static int frame(capture_t *c, int linktype, const uint8_t *p, size_t n, int cut)
{
	switch (linktype) {
	case DLT_EN10MB:
		if (n < 14)
			return short_by(c, cut, CAP_BAD_LINK);
		return ethertype(c, p, n, cut, 14, ld16be(p + 12));
	case DLT_RAW:
	case LINKTYPE_RAW:
		return ip(c, p, n, cut, 0);
	case DLT_IPV4:
		return ip(c, p, n, cut, 4);
	case DLT_IPV6:
		return ip(c, p, n, cut, 6);
	case DLT_NULL:
	case DLT_LOOP:
		return bsd_loopback(c, p, n, cut);
	case DLT_LINUX_SLL: /* packet type, ARPHRD, address length, address[8], protocol */
		if (n < 16)
			return short_by(c, cut, CAP_BAD_LINK);
		return ethertype(c, p, n, cut, 16, ld16be(p + 14));
	case DLT_LINUX_SLL2: /* protocol, reserved, ifindex, ARPHRD, type, addrlen, address[8] */
		if (n < 20)
			return short_by(c, cut, CAP_BAD_LINK);
		return ethertype(c, p, n, cut, 20, ld16be(p));
	default:
		return skip(c, CAP_LINKTYPE);
	}
}

int capture_packet(capture_t *c, int linktype, const uint8_t *pkt, size_t caplen, size_t origlen,
		   int64_t ts_sec, uint32_t ts_nsec)
{
	if (c->st->packets++ == 0 || ts_sec < c->st->ts_min)
		c->st->ts_min = ts_sec;
	if (c->st->packets == 1 || ts_sec > c->st->ts_max)
		c->st->ts_max = ts_sec;
	c->ts_sec = ts_sec;
	c->ts_nsec = ts_nsec;
	return frame(c, linktype, pkt, caplen, caplen < origlen);
}

int capture_new(uint16_t port, capture_fn fn, void *arg, capture_stats_t *st, capture_t **out)
{
	stats_init(st);
	capture_t *c = calloc(1, sizeof *c);
	if (c == NULL)
		return -ENOMEM;
	c->port = port;
	c->fn = fn;
	c->arg = arg;
	c->st = st;
	*out = c;
	return 0;
}

void capture_finish(capture_t *c)
{
	while (c->oldest)
		stream_end(c, c->oldest);
}

void capture_free(capture_t *c)
{
	if (c == NULL)
		return;
	while (c->oldest)
		stream_drop(c, c->oldest, -1);
	free(c);
}

/* ------------------------------------------------------------ files */

/* The first bytes, read to tell the kind of input, replayed ahead of the rest
 * of the stream: standard input cannot be rewound. */
struct replay {
	FILE *f;
	uint8_t peek[4];
	size_t n, at;
	int err; /* errno of a failed read of f, else 0 */
};

static ssize_t replay_read(void *cookie, char *buf, size_t size)
{
	struct replay *r = cookie;
	if (r->at < r->n) {
		size_t k = min_size(size, r->n - r->at);
		memcpy(buf, r->peek + r->at, k);
		r->at += k;
		return (ssize_t)k;
	}
	size_t k = fread(buf, 1, size, r->f);
	if (k == 0 && ferror(r->f)) {
		r->err = errno ? errno : EIO;
		errno = r->err;
		return -1;
	}
	return (ssize_t)k;
}

enum kind { FRAMED, CAPTURE, GZIP };

static enum kind sniff(const uint8_t *b, size_t n)
{
	if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
		return GZIP;
	if (n < 4)
		return FRAMED;
	switch (ld32be(b)) {
	case 0xa1b2c3d4: /* pcap, microseconds */
	case 0xd4c3b2a1:
	case 0xa1b23c4d: /* pcap, nanoseconds */
	case 0x4d3cb2a1:
	case 0xa1b2cd34: /* pcap, Kuznetzov's patched format */
	case 0x34cdb2a1:
	case 0x0a0d0d0a: /* pcapng Section Header Block */
		return CAPTURE;
	default:
		return FRAMED;
	}
}

int capture_is_capture(const uint8_t *head, size_t n)
{
	return sniff(head, n) == CAPTURE;
}

static int fail(char *err, size_t errcap, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errcap, const char *fmt, ...)
{
	if (errcap) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errcap, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* A pcap or pcapng capture; closes rf. */
static int read_capture(capture_t *c, FILE *rf, const struct replay *r, const char *name,
			char *err, size_t errcap)
{
	char pe[PCAP_ERRBUF_SIZE] = "";
	/* Nanosecond precision: microsecond files are scaled up, nothing lost. */
	pcap_t *p = pcap_fopen_offline_with_tstamp_precision(rf, PCAP_TSTAMP_PRECISION_NANO, pe);
	if (p == NULL) {
		fclose(rf); /* libpcap leaves it to the caller when it fails */
		if (r->err)
			return fail(err, errcap, "%s: read error: %s", name, strerror(r->err));
		return fail(err, errcap, "%s: bad capture file header: %s", name, pe);
	}
	int dlt = pcap_datalink(p);
	if (!capture_linktype_supported(dlt)) {
		const char *dn = pcap_datalink_val_to_name(dlt);
		fail(err, errcap, "%s: unsupported link type %d (%s)", name, dlt,
		     dn ? dn : "unknown");
		pcap_close(p);
		return -1;
	}
	int rc = 0;
	for (;;) {
		struct pcap_pkthdr *h;
		const u_char *d;
		int got = pcap_next_ex(p, &h, &d);
		if (got == PCAP_ERROR_BREAK) /* end of file */
			break;
		if (got != 1) {
			unsigned long long after = c->st->packets;
			if (r->err) {
				rc = fail(err, errcap, "%s: read error after packet %llu: %s", name,
					  after, strerror(r->err));
				break;
			}
			/* What was read stands: count the rest as lost and say why. */
			skip(c, CAP_FILE_CUT);
			if (errcap)
				snprintf(err, errcap, "%s: %s, after packet %llu", name,
					 pcap_geterr(p), after);
			break;
		}
		rc = capture_packet(c, dlt, d, h->caplen, h->len, (int64_t)h->ts.tv_sec,
				    (uint32_t)h->ts.tv_usec /* nanoseconds, as asked */);
		if (rc == -ENOMEM)
			rc = fail(err, errcap, "%s: out of memory at packet %llu", name,
				  (unsigned long long)c->st->packets);
		if (rc != 0)
			break;
	}
	pcap_close(p); /* and rf */
	if (rc == 0)
		capture_finish(c);
	return rc;
}

/* A framed file: 2-byte length, message, repeated; closes rf. */
static int read_framed(capture_t *c, FILE *rf, const struct replay *r, const char *name,
		       char *err, size_t errcap)
{
	uint8_t *buf = malloc(65535);
	if (buf == NULL) {
		fclose(rf);
		return fail(err, errcap, "%s: out of memory", name);
	}
	c->framed = 1;
	int rc = 0;
	for (uint64_t off = 0;;) {
		uint8_t lb[2];
		c->offset = off;
		size_t got = fread(lb, 1, 2, rf), len = got == 2 ? ld16be(lb) : 0;
		if (len)
			got += fread(buf, 1, len, rf);
		if (r->err) {
			rc = fail(err, errcap, "%s: read error at offset %llu: %s", name,
				  (unsigned long long)off, strerror(r->err));
			break;
		}
		if (got == 0) /* the end, between two messages */
			break;
		if (off == 0 && (got < 2 + len || len < 12 || ld16be(buf + 4) > 1)) {
			const uint8_t *b = r->peek; /* zero-filled past r->n */
			rc = fail(err, errcap, "%s: neither a pcap, a pcapng nor a file of"
				  " TCP-framed DNS messages (it starts %02x %02x %02x %02x)",
				  name, b[0], b[1], b[2], b[3]);
			break;
		}
		if (got < 2 + len) {
			unsigned long long at = off;
			skip(c, CAP_FRAMED_CUT);
			if (errcap && got < 2)
				snprintf(err, errcap, "%s: length cut by the end of the file at"
					 " offset %llu", name, at);
			else if (errcap)
				snprintf(err, errcap, "%s: message cut by the end of the file at"
					 " offset %llu (%zu of %zu bytes)", name, at, got - 2, len);
			break;
		}
		if (len == 0)
			skip(c, CAP_FRAMED_ZERO);
		else if (deliver(c, buf, len, CAPTURE_FRAMED)) {
			rc = 1;
			break;
		}
		off += 2 + len;
	}
	free(buf);
	fclose(rf);
	return rc;
}

int capture_read_stream(FILE *f, const char *name, uint16_t port, capture_fn fn, void *arg,
			capture_stats_t *st, char *err, size_t errcap)
{
	if (errcap)
		err[0] = 0;
	stats_init(st);
	struct replay r = { .f = f };
	r.n = fread(r.peek, 1, sizeof r.peek, f);
	if (r.n < sizeof r.peek && ferror(f))
		return fail(err, errcap, "%s: read error: %s", name, strerror(errno));
	if (r.n == 0)
		return fail(err, errcap, "%s: empty input", name);
	enum kind kind = sniff(r.peek, r.n);
	if (kind == GZIP)
		return fail(err, errcap, "%s: gzip-compressed; decompress it first", name);
	capture_t *c;
	if (capture_new(port, fn, arg, st, &c) != 0)
		return fail(err, errcap, "%s: out of memory", name);
	/* r outlives rf: the cookie has no close function of its own. */
	FILE *rf = fopencookie(&r, "r", (cookie_io_functions_t){ .read = replay_read });
	int rc;
	if (rf == NULL)
		rc = fail(err, errcap, "%s: %s", name, strerror(errno));
	else if (kind == CAPTURE)
		rc = read_capture(c, rf, &r, name, err, errcap);
	else
		rc = read_framed(c, rf, &r, name, err, errcap);
	capture_free(c);
	return rc;
}

int capture_read(const char *path, uint16_t port, capture_fn fn, void *arg,
		 capture_stats_t *st, char *err, size_t errcap)
{
	int is_stdin = strcmp(path, "-") == 0;
	FILE *f = is_stdin ? stdin : fopen(path, "rb");
	if (f == NULL) {
		stats_init(st);
		return fail(err, errcap, "%s: %s", path, strerror(errno));
	}
	int rc = capture_read_stream(f, is_stdin ? "standard input" : path, port, fn, arg, st, err,
				     errcap);
	if (!is_stdin)
		fclose(f);
	return rc;
}
