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

static int usage(void)
{
	fprintf(stderr, "usage: mkquery hex NAME [TYPE] [--do] [--noedns] [--size N] [--id N]\n"
			"       mkquery udp|tcp|raw PORT [--host ADDR] [--wait MS] [--print] "
			"[--now T] [--junk N] HEX...\n"
			"       mkquery hold PORT N [--host ADDR] [--wait MS]\n");
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

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	if (strcmp(argv[1], "hex") == 0)
		return cmd_hex(argc - 2, argv + 2);
	if (strcmp(argv[1], "udp") == 0 || strcmp(argv[1], "tcp") == 0 ||
	    strcmp(argv[1], "raw") == 0 || strcmp(argv[1], "hold") == 0)
		return cmd_send(argv[1], argc - 2, argv + 2);
	return usage();
}
