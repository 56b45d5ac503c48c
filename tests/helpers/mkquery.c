/*
 * mkquery: make DNS queries and send them to a server on this host, for
 * tests/cli/test_serve.sh. Messages are hex on the command line, so a test
 * can send anything: good queries, malformed ones, garbage.
 *
 *   mkquery hex NAME [TYPE] [--do] [--noedns] [--size N] [--id N]
 *       print a query in hex: RD set, class IN, an OPT of 1232 bytes (of N
 *       with --size; none with --noedns), DO with --do, ID 0xd55d (as
 *       dnsnap get asks) unless --id
 *   mkquery udp|tcp|raw PORT [--host ADDR] [--wait MS] [--print] [--now T] HEX...
 *       udp: each HEX is one datagram, sent when the reply to the one before
 *            came or MS passed; prints a line per reply, or "none"
 *       tcp: one connection; every HEX framed with its 2-byte length and all
 *            of them written at once (pipelined); prints a line per reply
 *            read until there is one per HEX or MS pass with nothing, then
 *            "closed" when the server closed the connection, "open" otherwise
 *       raw: as tcp, but the HEX bytes are written as they are, unframed
 *   --junk N (tcp, raw) writes N bytes 0x41 after the messages, unframed.
 *   mkquery hold PORT N [--host ADDR] [--wait MS]
 *       open N TCP connections and keep them; print "closed K of N": how many
 *       the server closed before MS passed with none closing
 *   mkquery flood PORT N [--tcp] [--host ADDR] [--seed S] [--wait MS] PROBE TEMPLATE...
 *       send N malformed or random messages (tests/e2e/bad_traffic.sh): a
 *       quarter random bytes of 0 to 99, a quarter a query-like header (QR
 *       clear or not, any opcode and counts) then random bytes, half one of
 *       the TEMPLATE queries (hex) damaged: bytes overwritten, cut short,
 *       bytes appended, header bits flipped; one in 200 is 4,097 to 9,000
 *       bytes (UDP only). They go out in bursts of 16, each followed by the
 *       PROBE query (hex, a question no damaged template has, a random ID
 *       each time) on the same socket; the replies are read until the
 *       probe's, so the server has taken every message of a burst before
 *       the next (no loss to a full socket buffer: its counters can be
 *       checked against what was sent and what came back). Prints one line:
 *       "sent N probes P: replies R none D; NOERROR a FORMERR b SERVFAIL c
 *       NXDOMAIN d NOTIMP e REFUSED f BADVERS g other h", the probes' replies
 *       not counted among the R. --tcp: one connection, every message framed
 *       (bursts written at once, pipelined). Exit 1 when a probe got no
 *       reply in MS.
 *   A reply line is the reply in hex, or with --print the reply printed as
 *   dnsnap get prints one (WHEN is T). MS defaults to 1000 (a reply, once
 *   the server is up, takes well under a millisecond).
 *
 * Exit status 0, or 2 on bad usage or a failed connect.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "print.h"
#include "byteorder.h"

static int usage(void)
{
	fprintf(stderr, "usage: mkquery hex NAME [TYPE] [--do] [--noedns] [--size N] [--id N]\n"
			"       mkquery udp|tcp|raw PORT [--host ADDR] [--wait MS] [--print] "
			"[--now T] [--junk N] HEX...\n"
			"       mkquery hold PORT N [--host ADDR] [--wait MS]\n"
			"       mkquery flood PORT N [--tcp] [--host ADDR] [--seed S] [--wait MS] "
			"PROBE TEMPLATE...\n");
	return 2;
}

static int unhex(const char *h, uint8_t *out, size_t cap, size_t *len)
{
	size_t n = strlen(h);
	if (n % 2 || n / 2 > cap)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;
		if (sscanf(h + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	*len = n / 2;
	return 0;
}

static int print_reply(const uint8_t *m, size_t len, int pretty, uint32_t now)
{
	if (pretty) {
		if (print_dns_message(stdout, m, len, now) != DNSNAP_OK)
			printf("unreadable reply of %zu bytes\n", len);
		return 0;
	}
	for (size_t i = 0; i < len; i++)
		printf("%02x", m[i]);
	putchar('\n');
	return 0;
}

static int cmd_hex(int argc, char **argv)
{
	const char *name = NULL, *type = "A";
	int dnssec = 0, edns = 1, ntype = 0;
	long size = -1, id = -1;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--do") == 0)
			dnssec = 1;
		else if (strcmp(argv[i], "--noedns") == 0)
			edns = 0;
		else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
			size = strtol(argv[++i], NULL, 0);
		else if (strcmp(argv[i], "--id") == 0 && i + 1 < argc)
			id = strtol(argv[++i], NULL, 0);
		else if (name == NULL)
			name = argv[i];
		else if (ntype++ == 0)
			type = argv[i];
		else
			return usage();
	}
	if (name == NULL)
		return usage();
	uint8_t q[600];
	const char *why = NULL;
	long n = make_query(name, type, "IN", dnssec, q, sizeof q, &why);
	if (n < 0) {
		fprintf(stderr, "mkquery: %s: %s\n", name, why);
		return 2;
	}
	/* make_query() ends with the OPT: 00, TYPE 41, CLASS (the size) ... */
	if (!edns) {
		n -= 11;
		q[11] = 0;
	} else if (size >= 0) {
		q[n - 8] = (uint8_t)(size >> 8);
		q[n - 7] = (uint8_t)size;
	}
	if (id >= 0) {
		q[0] = (uint8_t)(id >> 8);
		q[1] = (uint8_t)id;
	}
	return print_reply(q, (size_t)n, 0, 0);
}

/* Wait up to @p ms for @p fd to be readable. @return 1 readable, 0 not */
static int readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	return poll(&p, 1, ms) > 0;
}

/* Open @p n connections; count those the server closes. */
static int hold(const struct sockaddr_storage *ss, socklen_t sl, int n, int wait)
{
	if (n < 1 || n > 1000)
		return usage();
	struct pollfd *p = calloc((size_t)n, sizeof *p);
	if (p == NULL)
		return 2;
	for (int i = 0; i < n; i++) {
		p[i].fd = socket(ss->ss_family, SOCK_STREAM, 0);
		p[i].events = POLLIN;
		if (p[i].fd < 0 || connect(p[i].fd, (const struct sockaddr *)ss, sl) != 0) {
			fprintf(stderr, "mkquery: connection %d: %s\n", i, strerror(errno));
			return 2;
		}
	}
	int closed = 0;
	while (poll(p, (nfds_t)n, wait) > 0) {
		for (int i = 0; i < n; i++) {
			char c;
			if (p[i].revents && recv(p[i].fd, &c, 1, MSG_DONTWAIT) <= 0) {
				closed++;
				p[i].fd = -p[i].fd - 1; /* poll skips it; still to close */
			}
		}
	}
	printf("closed %d of %d\n", closed, n);
	for (int i = 0; i < n; i++)
		close(p[i].fd < 0 ? -p[i].fd - 1 : p[i].fd);
	free(p);
	return 0;
}

static int cmd_send(const char *mode, int argc, char **argv)
{
	const char *host = "127.0.0.1";
	int wait = 1000, pretty = 0;
	size_t junk = 0;
	int nhold = -1;
	unsigned long now = 0, port = 0;
	uint8_t *msgs[256];
	size_t lens[256];
	int nmsg = 0;
	if (argc < 1 || (port = strtoul(argv[0], NULL, 10)) == 0 || port > 65535)
		return usage();
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--host") == 0 && i + 1 < argc) {
			host = argv[++i];
		} else if (strcmp(argv[i], "--wait") == 0 && i + 1 < argc) {
			wait = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--now") == 0 && i + 1 < argc) {
			now = strtoul(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--junk") == 0 && i + 1 < argc) {
			junk = strtoul(argv[++i], NULL, 10);
		} else if (strcmp(mode, "hold") == 0 && nhold < 0) {
			nhold = atoi(argv[i]);
		} else if (strcmp(argv[i], "--print") == 0) {
			pretty = 1;
		} else if (nmsg < 256) {
			size_t cap = strlen(argv[i]) / 2 + 1;
			msgs[nmsg] = malloc(cap);
			if (msgs[nmsg] == NULL || unhex(argv[i], msgs[nmsg], cap, &lens[nmsg]) != 0) {
				fprintf(stderr, "mkquery: not hex: %.40s\n", argv[i]);
				return 2;
			}
			nmsg++;
		} else {
			return usage();
		}
	}
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	socklen_t sl;
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		sl = sizeof *a4;
	} else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		sl = sizeof *a6;
	} else {
		return usage();
	}
	if (strcmp(mode, "hold") == 0)
		return hold(&ss, sl, nhold, wait);
	int udp = strcmp(mode, "udp") == 0;
	int fd = socket(ss.ss_family, udp ? SOCK_DGRAM : SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&ss, sl) != 0) {
		fprintf(stderr, "mkquery: %s port %lu: %s\n", host, port, strerror(errno));
		return 2;
	}
	static uint8_t buf[1 << 18];
	if (udp) {
		for (int i = 0; i < nmsg; i++) {
			if (send(fd, msgs[i], lens[i], 0) < 0)
				fprintf(stderr, "mkquery: send: %s\n", strerror(errno));
			ssize_t n = readable(fd, wait) ? recv(fd, buf, sizeof buf, 0) : -1;
			if (n < 0)
				puts("none");
			else
				print_reply(buf, (size_t)n, pretty, (uint32_t)now);
		}
	} else {
		size_t total = 0;
		for (int i = 0; i < nmsg; i++) {
			if (strcmp(mode, "tcp") == 0) {
				buf[total++] = (uint8_t)(lens[i] >> 8);
				buf[total++] = (uint8_t)lens[i];
			}
			if (total + lens[i] > sizeof buf)
				return usage();
			memcpy(buf + total, msgs[i], lens[i]);
			total += lens[i];
		}
		if (total + junk > sizeof buf)
			return usage();
		memset(buf + total, 0x41, junk);
		total += junk;
		for (size_t off = 0; off < total;) {
			ssize_t n = send(fd, buf + off, total - off, MSG_NOSIGNAL);
			if (n < 0) {
				fprintf(stderr, "mkquery: send: %s\n", strerror(errno));
				break;
			}
			off += (size_t)n;
		}
		size_t have = 0;
		int closed = 0, replies = 0;
		while (!closed && (strcmp(mode, "tcp") != 0 || replies < nmsg) && readable(fd, wait)) {
			ssize_t n = recv(fd, buf + have, sizeof buf - have, 0);
			if (n <= 0) {
				closed = 1;
				break;
			}
			have += (size_t)n;
			size_t off = 0;
			while (have - off >= 2 && have - off - 2 >= (size_t)(buf[off] << 8 | buf[off + 1])) {
				size_t len = (size_t)(buf[off] << 8 | buf[off + 1]);
				print_reply(buf + off + 2, len, pretty, (uint32_t)now);
				off += 2 + len;
				replies++;
			}
			memmove(buf, buf + off, have - off);
			have -= off;
		}
		if (have > 0)
			printf("partial reply of %zu bytes\n", have);
		puts(closed ? "closed" : "open");
	}
	close(fd);
	for (int i = 0; i < nmsg; i++)
		free(msgs[i]);
	return 0;
}

/* ------------------------------------------------------------------ flood */

typedef struct blob {
	uint8_t *p;
	size_t len;
} blob_t;

static uint64_t rng_state;


/* The end of the question of the query @p q (plain labels), or 0 */
static size_t question_end(const blob_t *q)
{
	size_t p = 12;
	while (p < q->len && q->p[p] != 0 && (q->p[p] & 0xc0) == 0)
		p += 1 + (size_t)q->p[p];
	return p < q->len && q->p[p] == 0 && q->len - p >= 5 ? p + 5 : 0;
}

static uint32_t rnd(void) /* xorshift64*: reproducible from --seed */
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545f4914f6cdd1dull) >> 32);
}

static size_t rnd_below(size_t n) { return n ? rnd() % n : 0; }

/* One bad message into @p m (capacity FLOOD_MAX); @return its length */
#define FLOOD_MAX 9000
static size_t make_bad(uint8_t *m, const blob_t *tpl, int ntpl, int udp)
{
	unsigned kind = (unsigned)rnd_below(200);
	size_t n;
	if (udp && kind == 0) { /* over the 4,096 bytes a query may have */
		n = 4097 + rnd_below(FLOOD_MAX - 4097 + 1);
		for (size_t i = 0; i < n; i++)
			m[i] = (uint8_t)rnd();
		if (ntpl > 0) { /* a good query in front: only the size is wrong */
			const blob_t *t = &tpl[rnd_below((size_t)ntpl)];
			memcpy(m, t->p, t->len);
		}
		return n;
	}
	if (kind < 50) { /* random bytes */
		n = rnd_below(100);
		for (size_t i = 0; i < n; i++)
			m[i] = (uint8_t)rnd();
		return n;
	}
	if (kind < 100 || ntpl == 0) { /* a header, then anything */
		n = 12 + rnd_below(300);
		for (size_t i = 0; i < n; i++)
			m[i] = (uint8_t)rnd();
		m[2] &= rnd() & 1 ? 0x7f : 0xff;       /* QR clear half the time */
		m[4] = 0, m[5] = (uint8_t)rnd_below(3); /* QDCOUNT 0 to 2 */
		m[6] = 0, m[7] = (uint8_t)(rnd_below(4) ? 0 : 1);
		m[8] = 0, m[9] = (uint8_t)(rnd_below(4) ? 0 : 1);
		m[10] = 0, m[11] = (uint8_t)rnd_below(3);
		return n;
	}
	const blob_t *t = &tpl[rnd_below((size_t)ntpl)];
	memcpy(m, t->p, t->len);
	n = t->len;
	unsigned edits = 1 + (unsigned)rnd_below(4);
	for (unsigned e = 0; e < edits; e++) {
		switch (rnd_below(5)) {
		case 0: /* a byte overwritten */
			m[rnd_below(n)] = (uint8_t)rnd();
			break;
		case 1: /* cut short */
			n = rnd_below(n) + 1;
			break;
		case 2: { /* bytes appended */
			size_t k = 1 + rnd_below(100);
			for (size_t i = 0; i < k && n < 600; i++)
				m[n++] = (uint8_t)rnd();
			break;
		}
		case 3: /* a header bit flipped: QR, opcode, counts... */
			if (n >= 12)
				m[2 + rnd_below(10)] ^= (uint8_t)(1u << rnd_below(8));
			break;
		default: /* a label length byte made wrong */
			if (n > 12)
				m[12 + rnd_below(n - 12 < 20 ? n - 12 : 20)] = (uint8_t)rnd();
			break;
		}
		if (n == 0)
			n = 1;
	}
	return n;
}

/* The reply's RCODE, with the OPT's extended bits (BADVERS is 16). */
static unsigned reply_rcode(const uint8_t *r, size_t len)
{
	if (len < 12)
		return 255;
	unsigned rcode = r[3] & 15;
	size_t counts[4] = { ld16be(r + 4), ld16be(r + 6), ld16be(r + 8), ld16be(r + 10) };
	size_t p = 12;
	for (int s = 0; s < 4; s++)
		for (size_t i = 0; i < counts[s]; i++) {
			while (p < len && r[p] != 0 && (r[p] & 0xc0) != 0xc0) /* the owner */
				p += 1 + (size_t)r[p];
			if (p >= len)
				return rcode;
			p += (r[p] & 0xc0) == 0xc0 ? 2 : 1;
			if (s == 0) {
				p += 4;
				continue;
			}
			if (len < p + 10)
				return rcode;
			if (s == 3 && ld16be(r + p) == 41) /* OPT: EXTENDED-RCODE is the TTL's first byte */
				return rcode | (unsigned)r[p + 4] << 4;
			p += 10 + (size_t)ld16be(r + p + 8);
		}
	return rcode;
}

static int cmd_flood(int argc, char **argv)
{
	const char *host = "127.0.0.1";
	int wait = 1000, tcp = 0, ntpl = 0;
	unsigned long port = 0, n = 0;
	unsigned long long seed = 1;
	blob_t probe = { NULL, 0 }, tpl[64];
	int have_probe = 0;
	if (argc < 2 || (port = strtoul(argv[0], NULL, 10)) == 0 || port > 65535)
		return usage();
	n = strtoul(argv[1], NULL, 10);
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--host") == 0 && i + 1 < argc) {
			host = argv[++i];
		} else if (strcmp(argv[i], "--wait") == 0 && i + 1 < argc) {
			wait = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
			seed = strtoull(argv[++i], NULL, 0);
		} else if (strcmp(argv[i], "--tcp") == 0) {
			tcp = 1;
		} else if (ntpl < 64) {
			blob_t *b = have_probe ? &tpl[ntpl] : &probe;
			size_t cap = strlen(argv[i]) / 2 + 1;
			b->p = malloc(cap);
			if (b->p == NULL || unhex(argv[i], b->p, cap, &b->len) != 0 || b->len < 12 ||
			    b->len > 600) {
				fprintf(stderr, "mkquery: not a query in hex: %.40s\n", argv[i]);
				return 2;
			}
			if (have_probe)
				ntpl++;
			have_probe = 1;
		} else {
			return usage();
		}
	}
	if (!have_probe)
		return usage();
	size_t qend = question_end(&probe);
	if (qend == 0) {
		fprintf(stderr, "mkquery: flood: the probe has no question\n");
		return 2;
	}
	rng_state = seed * 0x9e3779b97f4a7c15ull + 1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
		return usage();
	int fd = socket(AF_INET, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
		fprintf(stderr, "mkquery: %s port %lu: %s\n", host, port, strerror(errno));
		return 2;
	}
	static uint8_t out[16 * (2 + FLOOD_MAX) + 2 + 600], in[1 << 17];
	unsigned long sent = 0, probes = 0, replies = 0, by[256] = { 0 };
	size_t have = 0;
	int rc = 0;
	while (sent < n && rc == 0) {
		size_t olen = 0;
		unsigned burst = 0;
		for (; burst < 16 && sent + burst < n; burst++) {
			uint8_t *m = out + olen + (tcp ? 2 : 0);
			size_t len = make_bad(m, tpl, ntpl, !tcp);
			if (tcp) {
				out[olen] = (uint8_t)(len >> 8);
				out[olen + 1] = (uint8_t)len;
				olen += 2 + len;
			} else if (send(fd, m, len, 0) < 0) {
				fprintf(stderr, "mkquery: send: %s\n", strerror(errno));
			}
		}
		uint16_t id = (uint16_t)rnd();
		memcpy(out + olen + (tcp ? 2 : 0), probe.p, probe.len);
		st16be(out + olen + (tcp ? 2 : 0), id);
		if (tcp) {
			st16be(out + olen, (unsigned)probe.len);
			olen += 2 + probe.len;
			for (size_t off = 0; off < olen;) {
				ssize_t k = send(fd, out + off, olen - off, MSG_NOSIGNAL);
				if (k < 0) {
					fprintf(stderr, "mkquery: send: %s\n", strerror(errno));
					return 2;
				}
				off += (size_t)k;
			}
		} else if (send(fd, out + olen, probe.len, 0) < 0) {
			fprintf(stderr, "mkquery: send: %s\n", strerror(errno));
		}
		sent += burst;
		probes++;
		/* replies until the probe's: ID and question equal to what was sent */
		for (;;) {
			const uint8_t *r;
			size_t rlen;
			if (tcp) {
				while (have < 2 || have - 2 < ld16be(in)) {
					ssize_t k = readable(fd, wait) ? recv(fd, in + have, sizeof in - have, 0) : -1;
					if (k <= 0) {
						fprintf(stderr, "mkquery: flood: no reply to probe %lu (%s)\n",
							probes, k == 0 ? "closed" : "timeout");
						rc = 1;
						break;
					}
					have += (size_t)k;
				}
				if (rc)
					break;
				r = in + 2;
				rlen = ld16be(in);
			} else {
				ssize_t k = readable(fd, wait) ? recv(fd, in, sizeof in, 0) : -1;
				if (k < 0) {
					fprintf(stderr, "mkquery: flood: no reply to probe %lu\n", probes);
					rc = 1;
					break;
				}
				r = in;
				rlen = (size_t)k;
			}
			int is_probe = rlen >= qend && ld16be(r) == id && (r[2] & 0x80) &&
				       ld16be(r + 4) == 1 && memcmp(r + 12, probe.p + 12, qend - 12) == 0;
			if (!is_probe) {
				replies++;
				by[reply_rcode(r, rlen) & 255]++;
			}
			if (tcp) {
				size_t used = 2 + rlen;
				memmove(in, in + used, have - used);
				have -= used;
			}
			if (is_probe)
				break;
		}
	}
	close(fd);
	unsigned long other = replies - by[0] - by[1] - by[2] - by[3] - by[4] - by[5] - by[16];
	printf("sent %lu probes %lu: replies %lu none %lu; NOERROR %lu FORMERR %lu SERVFAIL %lu "
	       "NXDOMAIN %lu NOTIMP %lu REFUSED %lu BADVERS %lu other %lu\n",
	       sent, probes, replies, sent - replies, by[0], by[1], by[2], by[3], by[4], by[5],
	       by[16], other);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	if (strcmp(argv[1], "hex") == 0)
		return cmd_hex(argc - 2, argv + 2);
	if (strcmp(argv[1], "flood") == 0)
		return cmd_flood(argc - 2, argv + 2);
	if (strcmp(argv[1], "udp") == 0 || strcmp(argv[1], "tcp") == 0 ||
	    strcmp(argv[1], "raw") == 0 || strcmp(argv[1], "hold") == 0)
		return cmd_send(argv[1], argc - 2, argv + 2);
	return usage();
}
