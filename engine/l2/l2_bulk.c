/*
 * l2_bulk.c: the bulk calls (import --from, export --to): blocking
 * connections (hiredis's own timeouts bound each read, the reader's bounds
 * each reply), SCAN on every master with pipelined GETRANGEs, and SETs
 * pipelined per node in batches, MOVED and ASK followed one reply at a time.
 * The errors are -EIO (Redis failed or refused) and DNSNAP_ENOMEM.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "l2_int.h"

#define BATCH 1000
#define NODES_MAX 64
#define NO_NODE 0xff

struct bput {
	size_t key_len, val_len;
	uint64_t pxat;
	uint8_t *key, *val;
	uint8_t data[];
};

struct bnode {
	struct l2_addr addr;
	redisContext *c;
	struct l2_bound bound;    /* c's reader's */
};

struct dnsnap_l2_bulk {
	char prefix[DNSNAP_L2_PREFIX_MAX + 1];
	size_t prefix_len;
	unsigned ms, db;
	char user[256], password[512];
	int cluster, need_refresh;
	unsigned n;
	struct bnode nodes[NODES_MAX];
	uint8_t slot_node[L2_SLOTS];
	unsigned nbatch;
	struct bput *batch[BATCH];
};

static struct timeval tv_ms(unsigned ms)
{
	struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
	return tv;
}

/* One command, blocking, its reply bounded by @p bd. @return the reply (the
 * caller frees), or NULL with a message */
static redisReply *call(redisContext *c, const struct l2_bound *bd, const struct l2_addr *a,
			int argc, const char **argv, const size_t *len, char *err, size_t errcap)
{
	void *r = NULL;
	char why[200];
	if (redisAppendCommandArgv(c, argc, argv, len) != REDIS_OK) {
		snprintf(why, sizeof why, "no memory");
	} else if (dnsnap__l2_get_reply(c, bd, &r, why, sizeof why) == REDIS_OK) {
		return r;
	}
	char s[300];
	dnsnap__l2_addr_str(a, s, sizeof s);
	snprintf(err, errcap, "redis %s: %s", s, why);
	return NULL;
}

redisContext *dnsnap__l2_connect_blocking(const struct l2_addr *a, unsigned ms,
					  const char *user, const char *password, unsigned db,
					  struct l2_bound *bd, char *err, size_t errcap)
{
	char s[300], num[16];
	redisContext *c = a->port ? redisConnectWithTimeout(a->host, a->port, tv_ms(ms))
				  : redisConnectUnixWithTimeout(a->host, tv_ms(ms));
	dnsnap__l2_addr_str(a, s, sizeof s);
	if (!c || c->err) {
		snprintf(err, errcap, "redis %s: %s", s, c ? c->errstr : "no memory");
		redisFree(c);
		return NULL;
	}
	redisSetTimeout(c, tv_ms(ms));
	dnsnap__l2_reader_bound(c->reader, bd);
	const char *argv[3];
	size_t len[3];
	int argc = 0;
	if (password && password[0]) {
		argv[argc] = "AUTH", len[argc++] = 4;
		if (user && user[0])
			argv[argc] = user, len[argc++] = strlen(user);
		argv[argc] = password, len[argc++] = strlen(password);
	} else {
		argv[argc] = "PING", len[argc++] = 4;
	}
	for (int step = 0; step < 2; step++) {
		redisReply *r = call(c, bd, a, argc, argv, len, err, errcap);
		if (!r)
			goto fail;
		if (r->type == REDIS_REPLY_ERROR) {
			snprintf(err, errcap, "redis %s: %s refused: %.*s", s, argv[0], (int)r->len,
				 r->str);
			freeReplyObject(r);
			goto fail;
		}
		freeReplyObject(r);
		if (!db)
			break;
		snprintf(num, sizeof num, "%u", db);
		argv[0] = "SELECT", len[0] = 6;
		argv[1] = num, len[1] = strlen(num);
		argc = 2;
	}
	return c;
fail:
	redisFree(c);
	return NULL;
}

/* The node at @p a, connected. @return its index, or -1 with a message */
static int node_get(dnsnap_l2_bulk_t *b, const struct l2_addr *a, char *err, size_t errcap)
{
	unsigned i;
	for (i = 0; i < b->n; i++)
		if (dnsnap__l2_addr_eq(&b->nodes[i].addr, a))
			break;
	if (i == b->n) {
		if (b->n == NODES_MAX) {
			snprintf(err, errcap, "more than %d Redis nodes", NODES_MAX);
			return -1;
		}
		b->nodes[b->n++].addr = *a;
	}
	if (!b->nodes[i].c)
		b->nodes[i].c = dnsnap__l2_connect_blocking(a, b->ms, b->user, b->password, b->db,
							    &b->nodes[i].bound, err, errcap);
	return b->nodes[i].c ? (int)i : -1;
}

/* CLUSTER SLOTS from node @p i into the map */
static int refresh(dnsnap_l2_bulk_t *b, unsigned i, char *err, size_t errcap)
{
	const char *argv[] = {"CLUSTER", "SLOTS"};
	const size_t len[] = {7, 5};
	struct l2_range *rg = NULL;
	char s[300];
	redisReply *r = call(b->nodes[i].c, &b->nodes[i].bound, &b->nodes[i].addr, 2, argv, len,
			     err, errcap);
	int n = -1;
	if (!r)
		return -EIO;
	if (r->type == REDIS_REPLY_ARRAY && r->elements &&
	    (rg = malloc(r->elements * sizeof *rg)))
		n = dnsnap__l2_slots_parse(r, &b->nodes[i].addr, rg, r->elements);
	if (n <= 0) {
		dnsnap__l2_addr_str(&b->nodes[i].addr, s, sizeof s);
		snprintf(err, errcap, "redis %s: CLUSTER SLOTS: %.*s", s,
			 r->type == REDIS_REPLY_ERROR ? (int)r->len : 24,
			 r->type == REDIS_REPLY_ERROR ? r->str : "no slots, or not its form");
		freeReplyObject(r);
		free(rg);
		return -EIO;
	}
	freeReplyObject(r);
	memset(b->slot_node, NO_NODE, sizeof b->slot_node);
	for (int k = 0; k < n; k++) {
		int j = node_get(b, &rg[k].master, err, errcap);
		if (j < 0) {
			free(rg);
			return -EIO;
		}
		memset(b->slot_node + rg[k].lo, j, rg[k].hi - rg[k].lo + 1);
	}
	free(rg);
	b->need_refresh = 0;
	return 0;
}

int dnsnap_l2_bulk_open(const dnsnap_l2_opts_t *o, dnsnap_l2_bulk_t **out, char *err,
			size_t errcap)
{
	struct l2_url u;
	const char *prefix = o && o->prefix ? o->prefix : DNSNAP_L2_DEFAULT_PREFIX;

	if (!o || !out || dnsnap__l2_url_parse(o->url, &u, err, errcap) != 0)
		return DNSNAP_EINVAL;
	if (strlen(prefix) > DNSNAP_L2_PREFIX_MAX) {
		snprintf(err, errcap, "the prefix is longer than %d bytes", DNSNAP_L2_PREFIX_MAX);
		return DNSNAP_EINVAL;
	}
	dnsnap_l2_bulk_t *b = calloc(1, sizeof *b);
	if (!b) {
		snprintf(err, errcap, "no memory");
		return DNSNAP_ENOMEM;
	}
	if ((o->user && strlen(o->user) >= sizeof b->user) ||
	    (o->password && strlen(o->password) >= sizeof b->password)) {
		snprintf(err, errcap, "the AUTH user or password is too long");
		free(b);
		return DNSNAP_EINVAL;
	}
	dnsnap__l2_sigpipe_ignore();
	memcpy(b->prefix, prefix, strlen(prefix) + 1);
	b->prefix_len = strlen(prefix);
	b->ms = o->connect_ms ? o->connect_ms : DNSNAP_L2_DEFAULT_CONNECT_MS;
	b->db = u.db;
	b->cluster = u.kind == L2_URL_CLUSTER;
	if (o->password && o->password[0]) {
		snprintf(b->password, sizeof b->password, "%s", o->password);
		snprintf(b->user, sizeof b->user, "%s", o->user ? o->user : "");
	}
	memset(b->slot_node, NO_NODE, sizeof b->slot_node);
	int ok = 0;
	for (unsigned i = 0; i < u.n && !ok; i++) { /* the first seed that answers */
		int j = node_get(b, &u.addr[i], err, errcap);
		ok = j >= 0 && (!b->cluster || refresh(b, (unsigned)j, err, errcap) == 0);
	}
	if (!ok) {
		dnsnap_l2_bulk_close(b);
		return -EIO;
	}
	*out = b;
	return DNSNAP_OK;
}

void dnsnap_l2_bulk_close(dnsnap_l2_bulk_t *b)
{
	if (!b)
		return;
	for (unsigned i = 0; i < b->nbatch; i++)
		free(b->batch[i]);
	for (unsigned i = 0; i < b->n; i++)
		redisFree(b->nodes[i].c);
	explicit_bzero(b->password, sizeof b->password);
	free(b);
}

/* The next reply of node @p i's pipeline. @return 0, or -1 with a message */
static int reply_of(dnsnap_l2_bulk_t *b, unsigned i, void **r, char *err, size_t errcap)
{
	char why[200], s[300];
	if (dnsnap__l2_get_reply(b->nodes[i].c, &b->nodes[i].bound, r, why, sizeof why) == REDIS_OK)
		return 0;
	dnsnap__l2_addr_str(&b->nodes[i].addr, s, sizeof s);
	snprintf(err, errcap, "redis %s: %s", s, why);
	return -1;
}

/* Follow -MOVED / -ASK for one command whose reply was @p r (freed here).
 * @return the final reply, or NULL with a message */
static redisReply *follow(dnsnap_l2_bulk_t *b, unsigned i, redisReply *r, int argc,
			  const char **argv, const size_t *len, char *err, size_t errcap)
{
	for (int hops = 0; r && r->type == REDIS_REPLY_ERROR; hops++) {
		struct l2_addr to;
		unsigned slot;
		int k = dnsnap__l2_redirect_parse(r->str, r->len, &slot, &to);
		if (!k)
			return r;
		freeReplyObject(r);
		if (hops == L2_REDIRECTS_MAX) {
			snprintf(err, errcap, "more than %d redirections", L2_REDIRECTS_MAX);
			return NULL;
		}
		if (!to.host[0])
			to = b->nodes[i].addr;
		int j = node_get(b, &to, err, errcap);
		if (j < 0)
			return NULL;
		i = (unsigned)j;
		if (k == 1) {
			b->slot_node[slot] = (uint8_t)j;
			b->need_refresh = 1;
		} else {
			const char *asking = "ASKING";
			size_t alen = 6;
			r = call(b->nodes[i].c, &b->nodes[i].bound, &to, 1, &asking, &alen, err,
				 errcap);
			if (!r)
				return NULL;
			freeReplyObject(r);
		}
		r = call(b->nodes[i].c, &b->nodes[i].bound, &to, argc, argv, len, err, errcap);
	}
	return r;
}

/* A GET's final reply: to fn, or skipped (and freed). @return fn's value */
static int deliver(dnsnap_l2_bulk_t *b, const redisReply *key, redisReply *r,
		   int (*fn)(void *, const uint8_t *, size_t, const uint8_t *, size_t), void *arg,
		   uint64_t *skipped)
{
	int rc = 0;
	if (r->type == REDIS_REPLY_STRING && r->len == 0)
		; /* GETRANGE of a key gone since SCAN (or an empty value): skipped silently */
	else if (r->type == REDIS_REPLY_STRING && r->len <= DNSNAP_L2_READ_MAX)
		rc = fn(arg, (const uint8_t *)key->str + b->prefix_len, key->len - b->prefix_len,
			(const uint8_t *)r->str, r->len);
	else if (r->type != REDIS_REPLY_NIL) /* nil: gone since SCAN, skipped silently */
		(*skipped)++;
	freeReplyObject(r);
	return rc;
}

static int key_ok(const dnsnap_l2_bulk_t *b, const redisReply *key)
{
	return key->type == REDIS_REPLY_STRING && key->len >= b->prefix_len;
}

/*
 * One SCAN batch's GETs, pipelined. A redirection is followed once every
 * reply of the pipeline is read: the connection may be asked again then
 * (MOVED to another node, then ASK back to this one).
 * @return 0, fn's value, or -EIO or DNSNAP_ENOMEM (err)
 */
static int scan_batch(dnsnap_l2_bulk_t *b, unsigned i, const redisReply *keys,
		      int (*fn)(void *, const uint8_t *, size_t, const uint8_t *, size_t),
		      void *arg, uint64_t *skipped, char *err, size_t errcap)
{
	redisContext *c = b->nodes[i].c;
	redisReply **held = calloc(keys->elements ? keys->elements : 1, sizeof *held);
	size_t sent = 0, k;
	int rc = 0;
	if (!held) {
		snprintf(err, errcap, "no memory");
		return DNSNAP_ENOMEM;
	}
	for (k = 0; k < keys->elements && rc == 0; k++) {
		const redisReply *key = keys->element[k];
		const char *argv[] = {"GETRANGE", key->str, "0", L2_RANGE_END};
		size_t len[] = {8, key->len, 1, sizeof L2_RANGE_END - 1};
		if (key_ok(b, key) && redisAppendCommandArgv(c, 4, argv, len) != REDIS_OK) {
			snprintf(err, errcap, "no memory");
			rc = DNSNAP_ENOMEM;
		}
		sent += key_ok(b, key);
	}
	for (k = 0; sent > 0; k++) {
		void *r;
		if (!key_ok(b, keys->element[k]))
			continue;
		sent--;
		if (reply_of(b, i, &r, err, errcap) != 0) {
			rc = -EIO;
			break;
		}
		if (((redisReply *)r)->type == REDIS_REPLY_ERROR && b->cluster)
			held[k] = r;
		else if (rc == 0)
			rc = deliver(b, keys->element[k], r, fn, arg, skipped);
		else
			freeReplyObject(r); /* the rest of the pipeline, read and dropped */
	}
	for (k = 0; k < keys->elements; k++) {
		const redisReply *key = keys->element[k];
		redisReply *r = held[k];
		if (!r)
			continue;
		if (rc != 0) {
			freeReplyObject(r);
			continue;
		}
		const char *argv[] = {"GETRANGE", key->str, "0", L2_RANGE_END};
		size_t len[] = {8, key->len, 1, sizeof L2_RANGE_END - 1};
		r = follow(b, i, r, 4, argv, len, err, errcap);
		rc = r ? deliver(b, key, r, fn, arg, skipped) : -EIO;
	}
	free(held);
	return rc;
}

static int scan_node(dnsnap_l2_bulk_t *b, unsigned i, const char *pat, size_t plen,
		     int (*fn)(void *, const uint8_t *, size_t, const uint8_t *, size_t),
		     void *arg, uint64_t *skipped, char *err, size_t errcap)
{
	char cursor[32] = "0";
	do {
		const char *argv[] = {"SCAN", cursor, "MATCH", pat, "COUNT", "1000"};
		size_t len[] = {4, strlen(cursor), 5, plen, 5, 4};
		redisReply *r = call(b->nodes[i].c, &b->nodes[i].bound, &b->nodes[i].addr, 6, argv,
				     len, err, errcap);
		if (!r)
			return -EIO;
		if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
		    r->element[0]->type != REDIS_REPLY_STRING || r->element[0]->len == 0 ||
		    r->element[0]->len >= sizeof cursor ||
		    r->element[1]->type != REDIS_REPLY_ARRAY) {
			snprintf(err, errcap, "SCAN: %.*s",
				 r->type == REDIS_REPLY_ERROR ? (int)r->len : 20,
				 r->type == REDIS_REPLY_ERROR ? r->str : "not the expected reply");
			freeReplyObject(r);
			return -EIO;
		}
		memcpy(cursor, r->element[0]->str, r->element[0]->len);
		cursor[r->element[0]->len] = '\0';
		int rc = scan_batch(b, i, r->element[1], fn, arg, skipped, err, errcap);
		freeReplyObject(r);
		if (rc != 0)
			return rc;
	} while (strcmp(cursor, "0") != 0);
	return 0;
}

int dnsnap_l2_bulk_scan(dnsnap_l2_bulk_t *b,
			int (*fn)(void *arg, const uint8_t *key, size_t key_len,
				  const uint8_t *val, size_t len),
			void *arg, uint64_t *skipped, char *err, size_t errcap)
{
	char pat[2 * DNSNAP_L2_PREFIX_MAX + 2];
	size_t plen = dnsnap__l2_match_pattern(b->prefix, b->prefix_len, pat, sizeof pat);
	uint8_t masters[NODES_MAX] = {0};
	uint64_t skip = 0;
	int rc = 0;

	if (!b->cluster) {
		masters[0] = 1;
	} else {
		for (unsigned s = 0; s < L2_SLOTS; s++)
			if (b->slot_node[s] != NO_NODE)
				masters[b->slot_node[s]] = 1;
	}
	for (unsigned i = 0; i < b->n && rc == 0; i++)
		if (masters[i])
			rc = scan_node(b, i, pat, plen, fn, arg, &skip, err, errcap);
	if (skipped)
		*skipped = skip;
	return rc;
}

int dnsnap_l2_bulk_put(dnsnap_l2_bulk_t *b, const uint8_t *key, size_t key_len,
		       const uint8_t *val, size_t len, uint64_t pxat_ms, char *err,
		       size_t errcap)
{
	struct bput *p = malloc(sizeof *p + b->prefix_len + key_len + len);
	if (!p) {
		snprintf(err, errcap, "no memory");
		return DNSNAP_ENOMEM;
	}
	p->key = p->data;
	p->key_len = b->prefix_len + key_len;
	memcpy(p->key, b->prefix, b->prefix_len);
	if (key_len)
		memcpy(p->key + b->prefix_len, key, key_len);
	p->val = p->key + p->key_len;
	p->val_len = len;
	if (len)
		memcpy(p->val, val, len);
	p->pxat = pxat_ms;
	b->batch[b->nbatch++] = p;
	return b->nbatch == BATCH ? dnsnap_l2_bulk_flush(b, err, errcap) : 0;
}

static int set_argv(const struct bput *p, const char **argv, size_t *len, char *num, size_t cap)
{
	snprintf(num, cap, "%llu", (unsigned long long)p->pxat);
	argv[0] = "SET", len[0] = 3;
	argv[1] = (const char *)p->key, len[1] = p->key_len;
	argv[2] = (const char *)p->val, len[2] = p->val_len;
	argv[3] = "PXAT", len[3] = 4;
	argv[4] = num, len[4] = strlen(num);
	return 5;
}

/* A SET's final reply: the first error is kept. Frees @p r. */
static int set_checked(redisReply *r, int rc, char *err, size_t errcap)
{
	if (r->type == REDIS_REPLY_ERROR && rc == 0) {
		snprintf(err, errcap, "SET: %.*s", (int)r->len, r->str);
		rc = -EIO;
	}
	freeReplyObject(r);
	return rc;
}

/* The batch's SETs for node @p i (@p route[k] == i), pipelined; redirections
 * followed once the pipeline is read. @return 0, -EIO or DNSNAP_ENOMEM (err) */
static int flush_node(dnsnap_l2_bulk_t *b, unsigned i, const uint8_t *route, char *err,
		      size_t errcap)
{
	redisContext *c = b->nodes[i].c;
	redisReply *held[BATCH] = {0};
	const char *argv[5];
	size_t len[5];
	char num[24];
	int rc = 0;
	for (unsigned k = 0; k < b->nbatch; k++) {
		if (route[k] != i)
			continue;
		int argc = set_argv(b->batch[k], argv, len, num, sizeof num);
		if (redisAppendCommandArgv(c, argc, argv, len) != REDIS_OK) {
			snprintf(err, errcap, "no memory");
			return DNSNAP_ENOMEM; /* the context is dropped by close */
		}
	}
	for (unsigned k = 0; k < b->nbatch; k++) {
		void *vr;
		if (route[k] != i)
			continue;
		if (reply_of(b, i, &vr, err, errcap) != 0) {
			rc = -EIO;
			break;
		}
		redisReply *r = vr;
		if (r->type == REDIS_REPLY_ERROR && b->cluster)
			held[k] = r;
		else
			rc = set_checked(r, rc, err, errcap);
	}
	for (unsigned k = 0; k < b->nbatch; k++) {
		redisReply *r = held[k];
		if (!r)
			continue;
		if (rc != 0) {
			freeReplyObject(r);
			continue;
		}
		int argc = set_argv(b->batch[k], argv, len, num, sizeof num);
		r = follow(b, i, r, argc, argv, len, err, errcap);
		rc = r ? set_checked(r, rc, err, errcap) : -EIO;
	}
	return rc;
}

int dnsnap_l2_bulk_flush(dnsnap_l2_bulk_t *b, char *err, size_t errcap)
{
	uint8_t route[BATCH];
	int rc = 0;
	for (unsigned k = 0; k < b->nbatch; k++) {
		const struct bput *p = b->batch[k];
		unsigned s = b->cluster ? dnsnap_l2_key_slot(p->key, p->key_len) : 0;
		route[k] = b->cluster ? b->slot_node[s] : 0;
		if (route[k] == NO_NODE)
			route[k] = 0; /* a hole in the map: that node answers MOVED */
	}
	for (unsigned i = 0; i < b->n && rc == 0; i++)
		rc = flush_node(b, i, route, err, errcap);
	for (unsigned k = 0; k < b->nbatch; k++)
		free(b->batch[k]);
	b->nbatch = 0;
	if (rc == 0 && b->cluster && b->need_refresh) {
		for (unsigned i = 0; i < b->n; i++)
			if (b->nodes[i].c && refresh(b, i, err, errcap) == 0)
				break;
		b->need_refresh = 0; /* a failed refresh: MOVED still routes */
	}
	return rc;
}
