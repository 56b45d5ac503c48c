/*
 * fuzz_l2_reply: arbitrary bytes as a Redis server's replies, through what
 * libdnsnap-l2 reads them with: hiredis's reader with the client's bounds
 * (engine/l2/l2_reply.c), fed in pieces as sockets give them (the first
 * byte: each piece's length, 1 to 256); each whole reply then read as
 * CLUSTER SLOTS (dnsnap__l2_slots_parse(), with and without the node asked)
 * and every string in it as a MOVED or ASK redirection
 * (dnsnap__l2_redirect_parse()).
 *
 * Nothing may read outside its input (ASan), the bounds must hold (no reply
 * over L2_REPLY_ELEMENTS_MAX elements or L2_REPLY_BYTES_MAX bytes of strings
 * built, whatever a header announces), and what the parsers accept must be
 * what the client relies on: slot ranges within 0..16383 and ordered, ports
 * 1 to 65535, hosts NUL-terminated within L2_HOST_MAX.
 *
 * Seeds: tests/fuzz/seeds/fuzz_l2_reply (Redis 7's CLUSTER SLOTS, MOVED, ASK,
 * SCAN and GETRANGE replies, hostile headers), and whatever else run.sh gives.
 *
 * Link: engine/l2 and hiredis.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l2_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what)
{
	fprintf(stderr, "fuzz_l2_reply: %s\n", what);
	abort();
}

static void check_addr(const struct l2_addr *a, int may_be_empty)
{
	size_t n = strnlen(a->host, sizeof a->host);
	if (n == sizeof a->host)
		die("a host without its NUL");
	if (n == 0 && !may_be_empty)
		die("an empty host");
	if (a->port < 1 || a->port > 65535)
		die("a port out of range");
}

static void redirect(const redisReply *r)
{
	struct l2_addr to;
	unsigned slot = 0;
	if (r->type != REDIS_REPLY_ERROR && r->type != REDIS_REPLY_STATUS &&
	    r->type != REDIS_REPLY_STRING)
		return;
	int k = dnsnap__l2_redirect_parse(r->str, r->len, &slot, &to);
	if (k < 0 || k > 2)
		die("a redirection kind");
	if (k && slot >= L2_SLOTS)
		die("a slot out of range");
	if (k)
		check_addr(&to, 1); /* empty: the node that answered */
}

/* Every string of @p r as a redirection, to the reader's depth (7) */
static void walk(const redisReply *r, unsigned depth)
{
	redirect(r);
	if (r->type != REDIS_REPLY_ARRAY || depth > 8)
		return;
	for (size_t i = 0; i < r->elements; i++)
		walk(r->element[i], depth + 1);
}

static void slots(const redisReply *r)
{
	static const struct l2_addr asked = {"10.0.0.1", 7000};
	static struct l2_range rg[L2_SLOTS];
	for (int pass = 0; pass < 2; pass++) {
		int n = dnsnap__l2_slots_parse(r, pass ? NULL : &asked, rg, L2_SLOTS);
		for (int i = 0; i < n; i++) {
			if (rg[i].lo > rg[i].hi || rg[i].hi >= L2_SLOTS)
				die("a slot range");
			check_addr(&rg[i].master, 0);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	redisReader *r = redisReaderCreate();
	struct l2_bound b;
	if (r == NULL)
		return 0;
	dnsnap__l2_reader_bound(r, &b);
	size_t piece = size ? (size_t)data[0] + 1 : 1;
	for (size_t off = 1; off < size; off += piece) {
		size_t n = size - off < piece ? size - off : piece;
		if (redisReaderFeed(r, (const char *)data + off, n) != REDIS_OK)
			break;
		void *rep;
		int rc;
		while ((rc = redisReaderGetReply(r, &rep)) == REDIS_OK && rep != NULL) {
			slots(rep);
			walk(rep, 0);
			freeReplyObject(rep);
		}
		if (b.elements > L2_REPLY_ELEMENTS_MAX || b.bytes > L2_REPLY_BYTES_MAX)
			die("a reply over the bounds was built");
		if (rc != REDIS_OK || dnsnap__l2_reader_full(r))
			break; /* the client drops the connection here */
	}
	redisReaderFree(r);
	return 0;
}
