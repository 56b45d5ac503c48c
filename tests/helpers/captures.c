/* captures.c: see captures.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "captures.h"

static void die(const char *what)
{
	fprintf(stderr, "captures: %s\n", what);
	abort();
}

void cbuf_put(cbuf_t *b, const void *p, size_t n)
{
	if (n > b->cap - b->n) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap - b->n < n)
			cap *= 2;
		uint8_t *q = realloc(b->p, cap);
		if (q == NULL)
			die("out of memory");
		b->p = q;
		b->cap = cap;
	}
	if (n)
		memcpy(b->p + b->n, p, n);
	b->n += n;
}

void cbuf_free(cbuf_t *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}

static void put16be(cbuf_t *b, unsigned v)
{
	uint8_t x[2] = { (uint8_t)(v >> 8), (uint8_t)v };
	cbuf_put(b, x, 2);
}

static void put32be(cbuf_t *b, uint32_t v)
{
	uint8_t x[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };
	cbuf_put(b, x, 4);
}

static void put16le(cbuf_t *b, unsigned v)
{
	uint8_t x[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
	cbuf_put(b, x, 2);
}

static void put32le(cbuf_t *b, uint32_t v)
{
	uint8_t x[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
	cbuf_put(b, x, 4);
}

/* ------------------------------------------------------------ DNS messages */

void captures_message(wb_t *w, int m)
{
	static const char *const names[] = { "a.example", "aaaa.example", "nx.example" };
	static const unsigned types[] = { 1, 28, 1 };
	int q = m / 2;
	if (m < 0 || m >= CM_COUNT)
		die("no such message");
	int response = m % 2;
	unsigned flags = !response ? 0x0100 : m == CM_NX ? 0x8183 : 0x8180;
	put_header(w, flags, 1, response && m != CM_NX, response && m == CM_NX, 0);
	w->b[0] = 0x10; /* ID 0x1000 + question: a response's ID is its query's */
	w->b[1] = (uint8_t)q;
	put_name(w, names[q]);
	put_u16(w, types[q]);
	put_u16(w, 1);
	if (!response)
		return;
	if (m == CM_A) {
		put_ptr(w, 12);
		size_t rl = put_fixed(w, 1, 1, 300);
		put_u32(w, 0xc000020a); /* 192.0.2.10 */
		end_rdata(w, rl);
	} else if (m == CM_AAAA) {
		put_ptr(w, 12);
		size_t rl = put_fixed(w, 28, 1, 600);
		put_u32(w, 0x20010db8);
		put_u32(w, 0);
		put_u32(w, 0);
		put_u32(w, 0x10);
		end_rdata(w, rl);
	} else {
		put_ptr(w, 15); /* example., inside nx.example. */
		size_t rl = put_fixed(w, 6, 1, 900);
		put_labels(w, "ns");
		put_ptr(w, 15);
		put_labels(w, "hostmaster");
		put_ptr(w, 15);
		put_u32(w, 2024010101);
		put_u32(w, 7200);
		put_u32(w, 3600);
		put_u32(w, 1209600);
		put_u32(w, 900);
		end_rdata(w, rl);
	}
}

/* ------------------------------------------------------------ packets */

static const uint8_t client4[4] = { 192, 0, 2, 1 }, server4[4] = { 192, 0, 2, 53 };
static const uint8_t client6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x01 };
static const uint8_t server6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x53 };

static void room(size_t need, size_t cap)
{
	if (need > cap)
		die("packet buffer too small");
}

static void w16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void w32(uint8_t *p, uint32_t v)
{
	w16(p, v >> 16);
	w16(p + 2, v & 0xffff);
}

static unsigned checksum(const uint8_t *p, size_t n)
{
	uint32_t sum = 0;
	for (size_t i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum & 0xffff;
}

size_t captures_ip(const captures_pkt_t *p, uint8_t *out, size_t cap)
{
	size_t iphl = p->v6 ? 40 : 20, ext = p->v6 ? p->ext_len : 0, thl = p->tcp ? 20 : 8;
	size_t n = iphl + ext + thl + p->len;
	room(n, cap);
	memset(out, 0, n);
	unsigned proto = p->tcp ? 6 : 17;
	uint16_t cport = p->cport ? p->cport : CAPTURES_CLIENT_PORT;
	uint16_t sport = p->sport ? p->sport : 53;
	if (p->v6) {
		out[0] = 0x60;
		w16(out + 4, (unsigned)(n - 40));
		out[6] = (uint8_t)(ext ? p->ext_first : proto);
		out[7] = 64;
		memcpy(out + 8, p->to_server ? client6 : server6, 16);
		memcpy(out + 24, p->to_server ? server6 : client6, 16);
		if (ext)
			memcpy(out + 40, p->ext, ext);
	} else {
		out[0] = 0x45;
		w16(out + 2, (unsigned)n);
		w16(out + 4, 0x1234);
		w16(out + 6, p->frag);
		out[8] = 64;
		out[9] = (uint8_t)proto;
		memcpy(out + 12, p->to_server ? client4 : server4, 4);
		memcpy(out + 16, p->to_server ? server4 : client4, 4);
		w16(out + 10, checksum(out, 20));
	}
	uint8_t *t = out + iphl + ext;
	w16(t, p->to_server ? cport : sport);
	w16(t + 2, p->to_server ? sport : cport);
	if (p->tcp) {
		w32(t + 4, p->seq);
		t[12] = 5 << 4;
		t[13] = (uint8_t)(p->flags ? p->flags : TCP_ACK | (p->len ? TCP_PSH : 0));
		w16(t + 14, 65535);
	} else {
		w16(t + 4, (unsigned)(8 + p->len));
	}
	if (p->len)
		memcpy(t + thl, p->data, p->len);
	return n;
}

size_t captures_arp(uint8_t *out, size_t cap)
{
	static const uint8_t arp[28] = {
		0, 1, 8, 0, 6, 4, 0, 1,             /* Ethernet, IPv4, request */
		2, 0, 0, 0, 0, 1, 192, 0, 2, 1,     /* sender */
		0, 0, 0, 0, 0, 0, 192, 0, 2, 53,    /* target */
	};
	room(sizeof arp, cap);
	memcpy(out, arp, sizeof arp);
	return sizeof arp;
}

size_t captures_frame(int linktype, unsigned vlans, unsigned ethertype, const uint8_t *l3,
		      size_t len, uint8_t *out, size_t cap)
{
	int v6 = len > 0 && l3[0] >> 4 == 6;
	unsigned et = ethertype ? ethertype : v6 ? 0x86dd : 0x0800;
	size_t h;
	switch (linktype) {
	case LT_EN10MB:
		h = 14 + 4 * (size_t)vlans;
		room(h + len, cap);
		memcpy(out, "\x02\x00\x00\x00\x00\x53\x02\x00\x00\x00\x00\x01", 12);
		for (unsigned i = 0; i < vlans; i++) {
			w16(out + 12 + 4 * i, i == 0 && vlans > 1 ? 0x88a8 : 0x8100);
			w16(out + 14 + 4 * i, 100 + i); /* VLAN ID */
		}
		w16(out + h - 2, et);
		break;
	case LT_NULL: /* the family in a little-endian host's order; Darwin's AF_INET6 */
		h = 4;
		room(h + len, cap);
		memcpy(out, v6 ? "\x1e\0\0\0" : "\x02\0\0\0", 4);
		break;
	case LT_LOOP: /* big-endian; FreeBSD's AF_INET6 */
		h = 4;
		room(h + len, cap);
		memcpy(out, v6 ? "\0\0\0\x1c" : "\0\0\0\x02", 4);
		break;
	case LT_SLL:
		h = 16;
		room(h + len, cap);
		memcpy(out, "\0\0\0\x01\0\x06\x02\0\0\0\0\x01\0\0", 14);
		w16(out + 14, et);
		break;
	case LT_SLL2:
		h = 20;
		room(h + len, cap);
		memset(out, 0, h);
		w16(out, et);
		w32(out + 4, 2);    /* interface index */
		w16(out + 8, 1);    /* ARPHRD_ETHER */
		out[10] = 0;        /* to us */
		out[11] = 6;
		memcpy(out + 12, "\x02\0\0\0\0\x01", 6);
		break;
	default: /* raw IP */
		h = 0;
		room(len, cap);
		break;
	}
	memcpy(out + h, l3, len);
	return h + len;
}

/* ------------------------------------------------------------ traces and files */

void trace_add(captures_trace_t *t, const uint8_t *frame, size_t len, size_t caplen)
{
	if (t->n == CAPTURES_FRAMES)
		die("too many frames");
	t->f[t->n].off = t->data.n;
	t->f[t->n].caplen = (uint32_t)caplen;
	t->f[t->n].origlen = (uint32_t)len;
	t->n++;
	cbuf_put(&t->data, frame, caplen);
}

void trace_ip(captures_trace_t *t, const captures_pkt_t *p)
{
	uint8_t ip[4096], fr[4200];
	size_t n = captures_ip(p, ip, sizeof ip);
	size_t fn = captures_frame((int)t->linktype, 0, 0, ip, n, fr, sizeof fr);
	trace_add(t, fr, fn, fn);
}

void trace_dns(captures_trace_t *t, int v6, int to_server, int m)
{
	wb_t w;
	captures_message(&w, m);
	captures_pkt_t p = { .v6 = v6, .to_server = to_server, .data = w.b, .len = w.n };
	trace_ip(t, &p);
}

void trace_free(captures_trace_t *t)
{
	cbuf_free(&t->data);
	t->n = 0;
}

static void pcapng_block(cbuf_t *out, uint32_t type, const cbuf_t *body)
{
	static const uint8_t zero[4];
	size_t pad = (4 - body->n % 4) % 4;
	uint32_t total = (uint32_t)(12 + body->n + pad);
	put32le(out, type);
	put32le(out, total);
	cbuf_put(out, body->p, body->n);
	cbuf_put(out, zero, pad);
	put32le(out, total);
}

void trace_write(const captures_trace_t *t, int format, cbuf_t *out)
{
	if (format == CF_PCAPNG) {
		cbuf_t b = { 0 };
		put32le(&b, 0x1a2b3c4d); /* byte-order magic */
		put16le(&b, 1);
		put16le(&b, 0);
		put32le(&b, 0xffffffff); /* section length: unknown */
		put32le(&b, 0xffffffff);
		pcapng_block(out, 0x0a0d0d0a, &b);
		b.n = 0;
		put16le(&b, t->linktype);
		put16le(&b, 0);
		put32le(&b, 262144);                 /* snaplen */
		cbuf_put(&b, "\x09\x00\x01\x00\x09\0\0\0", 8); /* if_tsresol: 10^-9 */
		cbuf_put(&b, "\0\0\0\0", 4);          /* opt_endofopt */
		pcapng_block(out, 1, &b);
		for (size_t i = 0; i < t->n; i++) {
			uint64_t ts = t->f[i].ts ? (uint64_t)t->f[i].ts * 1000000000u
					       : (uint64_t)(CAPTURES_TS0 + i) * 1000000000u + CAPTURES_NS;
			b.n = 0;
			put32le(&b, 0); /* interface */
			put32le(&b, (uint32_t)(ts >> 32));
			put32le(&b, (uint32_t)ts);
			put32le(&b, t->f[i].caplen);
			put32le(&b, t->f[i].origlen);
			cbuf_put(&b, t->data.p + t->f[i].off, t->f[i].caplen);
			pcapng_block(out, 6, &b);
			if (i == 0) { /* a custom block (PEN 32473, documentation), to be skipped */
				b.n = 0;
				put32le(&b, 32473);
				cbuf_put(&b, "skip", 4);
				pcapng_block(out, 0x00000bad, &b);
			}
		}
		cbuf_free(&b);
		return;
	}
	int be = format == CF_PCAP_NS_BE;
	void (*p16)(cbuf_t *, unsigned) = be ? put16be : put16le;
	void (*p32)(cbuf_t *, uint32_t) = be ? put32be : put32le;
	p32(out, be ? 0xa1b23c4d : 0xa1b2c3d4);
	p16(out, 2);
	p16(out, 4);
	p32(out, 0);      /* thiszone */
	p32(out, 0);      /* sigfigs */
	p32(out, 65535);  /* snaplen */
	p32(out, t->linktype);
	for (size_t i = 0; i < t->n; i++) {
		p32(out, t->f[i].ts ? (uint32_t)t->f[i].ts : (uint32_t)(CAPTURES_TS0 + i));
		p32(out, t->f[i].ts ? 0 : be ? CAPTURES_NS : CAPTURES_NS / 1000);
		p32(out, t->f[i].caplen);
		p32(out, t->f[i].origlen);
		cbuf_put(out, t->data.p + t->f[i].off, t->f[i].caplen);
	}
}

/* A response for NAME/A (ID 0x2000 + n) with 192.0.2.last, TTL ttl; signed: AD
 * and an RRSIG over it. */
static void timed_response(wb_t *w, const char *name, unsigned last, uint32_t ttl, int sig,
			   int query)
{
	put_header(w, query ? 0x0100 : sig ? 0x81a0 : 0x8180, 1, query ? 0 : 1 + !!sig, 0, 0);
	w->b[0] = 0x20;
	w->b[1] = (uint8_t)last;
	put_name(w, name);
	put_u16(w, 1);
	put_u16(w, 1);
	if (query)
		return;
	put_ptr(w, 12);
	size_t rl = put_fixed(w, 1, 1, ttl);
	put_u32(w, 0xc0000200 | last);
	end_rdata(w, rl);
	if (!sig)
		return;
	put_ptr(w, 12);
	rl = put_fixed(w, 46, 1, ttl);
	put_u16(w, 1);  /* type covered: A */
	put_u8(w, 13);  /* ECDSA P-256 */
	put_u8(w, 3);   /* labels */
	put_u32(w, ttl);
	put_u32(w, 2000000000u); /* expiration, inception */
	put_u32(w, 1600000000u);
	put_u16(w, 40000);
	put_name(w, "example.org");
	for (unsigned i = 0; i < 64; i++)
		put_u8(w, i * 7);
	end_rdata(w, rl);
}

void captures_timed(cbuf_t *out, int format, int64_t base, uint16_t port)
{
	static const struct {
		int64_t at;
		const char *name;
		unsigned last;
		uint32_t ttl;
		int sig, query;
	} fr[] = {
		{ -600, "signed.example.org", 80, 0, 0, 1 },
		{ -600, "signed.example.org", 80, 3600, 1, 0 },
		{ -590, "signed.example.org", 80, 3600, 0, 0 },
		{ -600, "long.example.org", 1, 3600, 0, 0 },
		{ -540, "short.example.org", 2, 30, 0, 0 },
		{ 86400 * 365, "future.example.org", 3, 300, 0, 0 },
	};
	captures_trace_t t = { .linktype = LT_EN10MB };
	for (size_t i = 0; i < sizeof fr / sizeof fr[0]; i++) {
		wb_t w;
		timed_response(&w, fr[i].name, fr[i].last, fr[i].ttl, fr[i].sig, fr[i].query);
		captures_pkt_t p = { .to_server = fr[i].query, .sport = port, .data = w.b,
				     .len = w.n };
		uint8_t ip[1024], f[1100];
		size_t n = captures_ip(&p, ip, sizeof ip);
		size_t fn = captures_frame(LT_EN10MB, 0, 0, ip, n, f, sizeof f);
		trace_add(&t, f, fn, fn);
		t.f[t.n - 1].ts = base + fr[i].at;
	}
	trace_write(&t, format, out);
	trace_free(&t);
}

void framed_put(cbuf_t *out, int m)
{
	wb_t w;
	captures_message(&w, m);
	put16be(out, (unsigned)w.n);
	cbuf_put(out, w.b, w.n);
}

/* ------------------------------------------------------------ the fixtures */

static void write_trace(captures_trace_t *t, int format, cbuf_t *out)
{
	trace_write(t, format, out);
	trace_free(t);
}

/* A UDP message on EN10MB with @p vlans tags. */
static void eth_dns(captures_trace_t *t, unsigned vlans, int v6, int to_server, int m)
{
	wb_t w;
	captures_message(&w, m);
	captures_pkt_t p = { .v6 = v6, .to_server = to_server, .data = w.b, .len = w.n };
	uint8_t ip[1024], fr[1100];
	size_t n = captures_ip(&p, ip, sizeof ip);
	size_t fn = captures_frame(LT_EN10MB, vlans, 0, ip, n, fr, sizeof fr);
	trace_add(t, fr, fn, fn);
}

static void fx_en10mb(cbuf_t *out)
{
	captures_trace_t t = { .linktype = LT_EN10MB };
	eth_dns(&t, 1, 0, 1, CM_A_QUERY);
	eth_dns(&t, 1, 0, 0, CM_A);
	eth_dns(&t, 0, 1, 1, CM_AAAA_QUERY);
	eth_dns(&t, 2, 1, 0, CM_AAAA);
	uint8_t arp[64], fr[128];
	size_t n = captures_arp(arp, sizeof arp);
	n = captures_frame(LT_EN10MB, 0, 0x0806, arp, n, fr, sizeof fr);
	trace_add(&t, fr, n, n);
	write_trace(&t, CF_PCAP_US_LE, out);
}

static void fx_raw(cbuf_t *out)
{
	captures_trace_t t = { .linktype = LT_RAW };
	trace_dns(&t, 1, 1, CM_NX_QUERY);
	/* hop-by-hop and destination options, each 8 bytes of PadN */
	static const uint8_t ext[] = { 60, 0, 1, 4, 0, 0, 0, 0, 17, 0, 1, 4, 0, 0, 0, 0 };
	wb_t w;
	captures_message(&w, CM_NX);
	captures_pkt_t p = { .v6 = 1, .ext = ext, .ext_len = sizeof ext, .ext_first = 0,
			     .data = w.b, .len = w.n };
	trace_ip(&t, &p);
	trace_dns(&t, 0, 0, CM_A);
	write_trace(&t, CF_PCAP_NS_BE, out);
}

static void fx_sll2(cbuf_t *out)
{
	captures_trace_t t = { .linktype = LT_SLL2 };
	trace_dns(&t, 0, 0, CM_A);
	trace_dns(&t, 1, 0, CM_AAAA);
	trace_dns(&t, 0, 0, CM_NX);
	write_trace(&t, CF_PCAPNG, out);
}

static void fx_sll(cbuf_t *out)
{
	captures_trace_t t = { .linktype = LT_SLL };
	trace_dns(&t, 0, 0, CM_A);
	trace_dns(&t, 1, 0, CM_NX);
	write_trace(&t, CF_PCAP_US_LE, out);
}

static void fx_null(cbuf_t *out)
{
	captures_trace_t t = { .linktype = LT_NULL };
	trace_dns(&t, 0, 0, CM_A);
	trace_dns(&t, 1, 0, CM_AAAA);
	/* and a big-endian host's AF_INET6 of the BSDs (24) */
	wb_t w;
	captures_message(&w, CM_NX);
	captures_pkt_t p = { .v6 = 1, .data = w.b, .len = w.n };
	uint8_t fr[1024];
	memcpy(fr, "\0\0\0\x18", 4);
	size_t n = 4 + captures_ip(&p, fr + 4, sizeof fr - 4);
	trace_add(&t, fr, n, n);
	write_trace(&t, CF_PCAP_US_LE, out);
}

static void fx_loop(cbuf_t *out)
{
	captures_trace_t t = { .linktype = LT_LOOP };
	trace_dns(&t, 0, 0, CM_A);
	trace_dns(&t, 1, 0, CM_AAAA);
	write_trace(&t, CF_PCAP_US_LE, out);
}

static void fx_ipv4(cbuf_t *out)
{
	captures_trace_t t = { .linktype = LT_IPV4 };
	trace_dns(&t, 0, 1, CM_A_QUERY);
	trace_dns(&t, 0, 0, CM_A);
	write_trace(&t, CF_PCAP_US_LE, out);
}

static void fx_ipv6(cbuf_t *out)
{
	captures_trace_t t = { .linktype = LT_IPV6 };
	trace_dns(&t, 1, 1, CM_AAAA_QUERY);
	trace_dns(&t, 1, 0, CM_AAAA);
	write_trace(&t, CF_PCAP_NS_BE, out);
}

static void tcp_seg(captures_trace_t *t, int to_server, uint32_t seq, unsigned flags,
		    const uint8_t *data, size_t len)
{
	captures_pkt_t p = { .tcp = 1, .to_server = to_server, .seq = seq, .flags = flags,
			     .data = data, .len = len };
	trace_ip(t, &p);
}

static void fx_tcp(cbuf_t *out)
{
	captures_trace_t t = { .linktype = LT_EN10MB };
	cbuf_t q = { 0 }, s = { 0 };
	framed_put(&q, CM_A_QUERY);
	framed_put(&s, CM_A);
	framed_put(&s, CM_AAAA);
	uint32_t c0 = 1000, s0 = 0xfffffff0; /* the server's numbers wrap past 2^32 */
	tcp_seg(&t, 1, c0, TCP_SYN, NULL, 0);
	tcp_seg(&t, 0, s0, TCP_SYN | TCP_ACK, NULL, 0);
	tcp_seg(&t, 1, c0 + 1, TCP_ACK, NULL, 0);
	tcp_seg(&t, 1, c0 + 1, 0, q.p, q.n);
	tcp_seg(&t, 0, s0 + 1, 0, s.p, 1);                  /* half the first length */
	tcp_seg(&t, 0, s0 + 2, 0, s.p + 1, 19);             /* up to 20 */
	tcp_seg(&t, 0, s0 + 2, 0, s.p + 1, 19);             /* retransmitted */
	tcp_seg(&t, 0, s0 + 41, 0, s.p + 40, s.n - 40);     /* 40..end before 20..40 */
	tcp_seg(&t, 0, s0 + 11, 0, s.p + 10, 30);           /* 10..40, overlapping 10..20 */
	tcp_seg(&t, 0, s0 + 1 + (uint32_t)s.n, TCP_FIN | TCP_ACK, NULL, 0);
	tcp_seg(&t, 1, c0 + 1 + (uint32_t)q.n, TCP_FIN | TCP_ACK, NULL, 0);
	cbuf_free(&q);
	cbuf_free(&s);
	write_trace(&t, CF_PCAP_US_LE, out);
}

/* @p p as an EN10MB frame in fr, of *n bytes: the IP header is at fr + 14. */
static void eth_pkt(const captures_pkt_t *p, uint8_t *fr, size_t cap, size_t *n)
{
	uint8_t ip[1024];
	size_t in = captures_ip(p, ip, sizeof ip);
	*n = captures_frame(LT_EN10MB, 0, 0, ip, in, fr, cap);
}

static void fx_malformed(cbuf_t *out)
{
	captures_trace_t t = { .linktype = LT_EN10MB };
	wb_t w;
	uint8_t fr[1200];
	size_t n;
	captures_message(&w, CM_A);
	captures_pkt_t a = { .data = w.b, .len = w.n };

	eth_pkt(&a, fr, sizeof fr, &n);
	trace_add(&t, fr, n, n);                            /* 1 good */
	eth_pkt(&a, fr, sizeof fr, &n);
	trace_add(&t, fr, n, 14 + 20 + 8 + 5);              /* 2 cut by the snaplen */
	eth_pkt(&a, fr, sizeof fr, &n);
	fr[14] = 0x44;                                      /* 3 header length 16 */
	trace_add(&t, fr, n, n);
	eth_pkt(&a, fr, sizeof fr, &n);
	w16(fr + 14 + 20 + 4, (unsigned)(8 + w.n + 100));   /* 4 UDP length past the packet */
	trace_add(&t, fr, n, n);
	captures_pkt_t mdns = a;
	mdns.cport = mdns.sport = 5353;
	eth_pkt(&mdns, fr, sizeof fr, &n);
	trace_add(&t, fr, n, n);                            /* 5 another port */
	captures_pkt_t f = a;
	f.frag = 0x2000;
	eth_pkt(&f, fr, sizeof fr, &n);
	trace_add(&t, fr, n, n);                            /* 6 first fragment */
	f.frag = 185;
	eth_pkt(&f, fr, sizeof fr, &n);
	trace_add(&t, fr, n, n);                            /* 7 a later fragment */
	static const uint8_t frag6[] = { 17, 0, 0, 1, 0, 0, 0x12, 0x34 }; /* offset 0, more */
	captures_pkt_t f6 = { .v6 = 1, .ext = frag6, .ext_len = 8, .ext_first = 44,
			      .data = w.b, .len = w.n };
	eth_pkt(&f6, fr, sizeof fr, &n);
	trace_add(&t, fr, n, n);                            /* 8 an IPv6 fragment */
	captures_pkt_t tiny = { .data = (const uint8_t *)"short", .len = 5 };
	eth_pkt(&tiny, fr, sizeof fr, &n);
	trace_add(&t, fr, n, n);                            /* 9 too short for DNS */
	eth_pkt(&a, fr, sizeof fr, &n);
	fr[14 + 9] = 1;                                     /* 10 ICMP */
	trace_add(&t, fr, n, n);
	eth_pkt(&a, fr, sizeof fr, &n);
	w16(fr + 14 + 2, 1000);                             /* 11 IP length past the frame */
	trace_add(&t, fr, n, n);
	captures_pkt_t tc = { .tcp = 1, .data = w.b, .len = w.n };
	eth_pkt(&tc, fr, sizeof fr, &n);
	fr[14 + 20 + 12] = 3 << 4;                          /* 12 TCP data offset 12 */
	trace_add(&t, fr, n, n);
	trace_add(&t, fr, 10, 10);                          /* 13 shorter than Ethernet */
	captures_message(&w, CM_AAAA);
	captures_pkt_t good6 = { .v6 = 1, .data = w.b, .len = w.n };
	eth_pkt(&good6, fr, sizeof fr, &n);
	trace_add(&t, fr, n, n);                            /* 14 good */
	write_trace(&t, CF_PCAP_US_LE, out);
}

static void fx_cut(cbuf_t *out)
{
	captures_trace_t t = { .linktype = LT_EN10MB };
	eth_dns(&t, 0, 0, 0, CM_A);
	eth_dns(&t, 0, 1, 0, CM_AAAA);
	eth_dns(&t, 0, 0, 0, CM_NX);
	trace_write(&t, CF_PCAP_US_LE, out);
	out->n -= t.f[2].caplen - 30; /* the last record ends 30 bytes in */
	trace_free(&t);
}

static void fx_framed(cbuf_t *out)
{
	framed_put(out, CM_A);
	framed_put(out, CM_AAAA);
	framed_put(out, CM_NX);
}

static void fx_framed_cut(cbuf_t *out)
{
	framed_put(out, CM_A);
	cbuf_put(out, "\0\0", 2);
	framed_put(out, CM_AAAA);
	size_t at = out->n;
	framed_put(out, CM_NX);
	out->n = at + 2 + 10;
}

static void fx_bad_header(cbuf_t *out)
{
	/* the magic, then version 1.0 */
	cbuf_put(out, "\xd4\xc3\xb2\xa1\x01\x00\x00\x00", 8);
	cbuf_put(out, "\0\0\0\0\0\0\0\0\xff\xff\0\0\x01\0\0\0", 16);
}

static void fx_wifi(cbuf_t *out)
{
	captures_trace_t t = { .linktype = LT_IEEE802_11 };
	uint8_t fr[40] = { 0x08 };
	trace_add(&t, fr, sizeof fr, sizeof fr);
	write_trace(&t, CF_PCAP_US_LE, out);
}

static void fx_text(cbuf_t *out)
{
	static const char text[] = "; not DNS at all\nexample. 300 IN A 192.0.2.1\n";
	cbuf_put(out, text, sizeof text - 1);
}

const captures_fixture_t captures_fixtures[] = {
	{ "en10mb-vlan.pcap", "pcap us LE, EN10MB: A query+response (802.1Q), AAAA query, "
			      "AAAA response (802.1ad+802.1Q), ARP", fx_en10mb },
	{ "raw-ns-be.pcap", "pcap ns BE, RAW: NX query (v6), NX response (v6, hop-by-hop "
			    "+ dest-opts), A response (v4)", fx_raw },
	{ "sll2.pcapng", "pcapng ns, LINUX_SLL2: A (v4), AAAA (v6), NX (v4) responses; a custom "
			 "block", fx_sll2 },
	{ "sll.pcap", "pcap, LINUX_SLL: A (v4), NX (v6) responses", fx_sll },
	{ "null.pcap", "pcap, NULL: A (v4, AF 2 LE), AAAA (v6, AF 30 LE), NX (v6, AF 24 BE) "
		       "responses", fx_null },
	{ "loop.pcap", "pcap, LOOP: A (v4), AAAA (v6) responses", fx_loop },
	{ "ipv4.pcap", "pcap, IPV4: A query and response", fx_ipv4 },
	{ "ipv6.pcap", "pcap ns BE, IPV6: AAAA query and response", fx_ipv6 },
	{ "tcp.pcap", "pcap, EN10MB, TCP: a query; A and AAAA responses split in 4 segments, "
		      "one retransmitted, one out of order, one overlapping; FINs", fx_tcp },
	{ "malformed.pcap", "pcap, EN10MB: 2 good responses around 12 bad frames (truncated, "
			    "bad IHL, UDP length, port 5353, 3 fragments, short, ICMP, IP "
			    "length, TCP offset, runt)", fx_malformed },
	{ "cut.pcap", "pcap: 2 responses, then a record cut by the end of the file", fx_cut },
	{ "framed.bin", "TCP-framed: A, AAAA, NX responses", fx_framed },
	{ "framed-cut.bin", "TCP-framed: A, a zero length, AAAA, NX cut after 10 bytes",
	  fx_framed_cut },
	{ "bad-header.pcap", "pcap magic with version 1.0: refused", fx_bad_header },
	{ "wifi.pcap", "pcap, IEEE802_11: refused", fx_wifi },
	{ "not-dns.txt", "zone text: refused", fx_text },
};
const size_t captures_nfixtures = sizeof captures_fixtures / sizeof captures_fixtures[0];

const captures_fixture_t *captures_find(const char *name)
{
	for (size_t i = 0; i < captures_nfixtures; i++)
		if (strcmp(captures_fixtures[i].name, name) == 0)
			return &captures_fixtures[i];
	return NULL;
}

int captures_write_dir(const char *dir, FILE *log)
{
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "captures: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < captures_nfixtures; i++) {
		const captures_fixture_t *fx = &captures_fixtures[i];
		cbuf_t b = { 0 };
		fx->build(&b);
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dir, fx->name);
		FILE *f = fopen(path, "wb");
		size_t w = f ? fwrite(b.p, 1, b.n, f) : 0;
		int bad = f == NULL || w != b.n || fclose(f) != 0;
		if (bad) {
			fprintf(stderr, "captures: %s: %s\n", path, strerror(errno));
			cbuf_free(&b);
			return -1;
		}
		if (log)
			fprintf(log, "%-18s %6zu bytes  %s\n", fx->name, b.n, fx->about);
		cbuf_free(&b);
	}
	return 0;
}
