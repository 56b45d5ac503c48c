/*
 * l2_cluster.c: Redis Cluster's routing, which hiredis 0.14 does not do:
 * the hash slot of a key, CLUSTER SLOTS's reply, MOVED and ASK.
 */
#include <stdio.h>
#include <string.h>

#include "l2_int.h"

uint16_t dnsnap__l2_crc16(const uint8_t *p, size_t len)
{
	uint16_t crc = 0;
	for (size_t i = 0; i < len; i++) {
		crc ^= (uint16_t)(p[i] << 8);
		for (int b = 0; b < 8; b++)
			crc = (uint16_t)((crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1);
	}
	return crc;
}

unsigned dnsnap_l2_key_slot(const uint8_t *key, size_t len)
{
	/* the hash tag: between the first '{' and the next '}', when not empty */
	const uint8_t *open = memchr(key, '{', len);
	if (open) {
		size_t rest = len - (size_t)(open - key) - 1;
		const uint8_t *close = memchr(open + 1, '}', rest);
		if (close && close > open + 1)
			return dnsnap__l2_crc16(open + 1, (size_t)(close - open - 1)) &
			       (L2_SLOTS - 1);
	}
	return dnsnap__l2_crc16(key, len) & (L2_SLOTS - 1);
}

/* A node of CLUSTER SLOTS: [host, port, id...] */
static int node_parse(const redisReply *n, const struct l2_addr *asked, struct l2_addr *out)
{
	if (n->type != REDIS_REPLY_ARRAY || n->elements < 2 ||
	    n->element[0]->type != REDIS_REPLY_STRING || n->element[1]->type != REDIS_REPLY_INTEGER)
		return -1;
	const redisReply *h = n->element[0];
	long long port = n->element[1]->integer;
	if (port <= 0 || port > 65535 || h->len >= L2_HOST_MAX || memchr(h->str, '\0', h->len))
		return -1;
	if (h->len == 0) {
		if (!asked)
			return -1;
		memcpy(out->host, asked->host, sizeof out->host);
	} else {
		memcpy(out->host, h->str, h->len);
		out->host[h->len] = '\0';
	}
	out->port = (int)port;
	return 0;
}

int dnsnap__l2_slots_parse(const redisReply *r, const struct l2_addr *asked,
			   struct l2_range *out, size_t cap)
{
	size_t n = 0;
	if (!r || r->type != REDIS_REPLY_ARRAY)
		return -1;
	for (size_t i = 0; i < r->elements; i++) {
		const redisReply *e = r->element[i];
		if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
		    e->element[0]->type != REDIS_REPLY_INTEGER ||
		    e->element[1]->type != REDIS_REPLY_INTEGER)
			return -1;
		long long lo = e->element[0]->integer, hi = e->element[1]->integer;
		if (lo < 0 || hi < lo || hi >= L2_SLOTS)
			return -1;
		if (n == cap)
			return -1;
		out[n].lo = (unsigned)lo;
		out[n].hi = (unsigned)hi;
		if (node_parse(e->element[2], asked, &out[n].master) != 0)
			return -1;
		n++;
	}
	return (int)n;
}

int dnsnap__l2_redirect_parse(const char *s, size_t len, unsigned *slot, struct l2_addr *to)
{
	int kind;
	size_t i;
	unsigned long v = 0;

	if (len > 6 && memcmp(s, "MOVED ", 6) == 0) {
		kind = 1;
		i = 6;
	} else if (len > 4 && memcmp(s, "ASK ", 4) == 0) {
		kind = 2;
		i = 4;
	} else {
		return 0;
	}
	size_t start = i;
	while (i < len && s[i] >= '0' && s[i] <= '9' && i - start < 6)
		v = v * 10 + (unsigned long)(s[i++] - '0');
	if (i == start || v >= L2_SLOTS || i >= len || s[i] != ' ')
		return 0;
	i++;
	/* HOST:PORT, the port after the last ':' */
	const char *hp = s + i;
	size_t n = len - i, colon = n;
	for (size_t k = 0; k < n; k++)
		if (hp[k] == ':')
			colon = k;
	if (colon == n || colon + 1 == n || n - colon - 1 > 5)
		return 0;
	unsigned long port = 0;
	for (size_t k = colon + 1; k < n; k++) {
		if (hp[k] < '0' || hp[k] > '9')
			return 0;
		port = port * 10 + (unsigned long)(hp[k] - '0');
	}
	if (port == 0 || port > 65535)
		return 0;
	size_t hs = 0, he = colon;
	if (he >= 2 && hp[0] == '[' && hp[he - 1] == ']') {
		hs = 1;
		he--;
	}
	if (he - hs >= L2_HOST_MAX)
		return 0;
	for (size_t k = hs; k < he; k++)
		if (hp[k] == ' ' || hp[k] == '\0' || hp[k] == '/')
			return 0;
	memcpy(to->host, hp + hs, he - hs);
	to->host[he - hs] = '\0';
	to->port = (int)port;
	*slot = (unsigned)v;
	return kind;
}
