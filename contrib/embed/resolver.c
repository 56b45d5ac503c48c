/*
 * resolver.c: a resolver's cache on dnsnap, on the installed libraries alone
 * (README.md beside it: how to build and run it). To copy from.
 *
 *   resolver [-r redis://HOST:PORT] [-w MS] SNAP [NAME...]
 *
 * Each NAME (type A; a few built-in ones without) is answered by the first
 * tier that has it, and its line says which: memory (the cache); map (the
 * snapshot SNAP of an earlier run, mapped under the cache: a warm start);
 * redis (the second level a fleet shares, asked from this program's own
 * poll() loop within -w MS, 100 by default); upstream (made up here: every
 * name has one A record in 192.0.2.0/24). An upstream answer is encoded once,
 * with the cache's TTL policy, and that one encoding is inserted, sealed for
 * Redis and answered from. At the end the cache is published at SNAP.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dnsnap/dnsnap.h>
#include <dnsnap/l2.h>

enum tier { MEMORY, MAP, REDIS, UPSTREAM };
static const char *const tier_name[] = {"memory", "map", "redis", "upstream"};

/* Asked when no NAME is given: the last one again, from memory. */
static const char *const builtin[] = {"www.example.com", "mail.example.org",
				      "ns1.example.net", "www.example.com"};

struct resolver {
	dnsnap_cache_t *cache;
	dnsnap_snap_t *snap;          /* mapped under the cache; NULL: a cold start */
	dnsnap_l2_t *l2;              /* NULL: no Redis (no -r) */
	unsigned wait_ms;             /* a Redis GET's deadline */
	dnsnap_encoded_t enc;         /* an upstream answer, encoded (130 KB) */
	uint8_t val[DNSNAP_L2_VALUE_MAX]; /* ... and sealed for Redis */
};

/* A client's query for @p name, type A, as it comes off the wire (the cache
 * reads queries in wire form). @return its length, 0 for a bad name */
static size_t make_query(const char *name, uint16_t id, uint8_t *m, size_t cap)
{
	size_t n = 12; /* the header: ID, RD, one question */
	if (cap < n + DNSNAP_NAME_MAX + 4 || name[0] == '\0' || strcmp(name, ".") == 0)
		return 0;
	memcpy(m, (const uint8_t[12]){id >> 8, id & 0xff, 0x01, 0x00, 0, 1}, n);
	for (const char *p = name; *p != '\0'; p += *p == '.') { /* "a.b." is "a.b" */
		size_t len = strcspn(p, ".");
		if (len == 0 || len > 63 || n - 12 + 1 + len + 1 > DNSNAP_NAME_MAX)
			return 0;
		m[n++] = (uint8_t)len;
		memcpy(m + n, p, len);
		n += len;
		p += len;
	}
	memcpy(m + n, (const uint8_t[5]){0, 0, 1, 0, 1}, 5); /* the root, type A, class IN */
	return n + 5;
}

/* The made-up upstream's response to @p q: one A record, TTL 300, in RFC
 * 5737's 192.0.2.0/24, its last byte a hash of the name (the same in every
 * run). @return its length */
static size_t upstream_reply(const dnsnap_query_t *q, uint8_t *m)
{
	uint32_t h = 2166136261u; /* FNV-1a over the name, lower-cased */
	for (size_t i = 0; i < q->qname_len; i++) {
		uint8_t c = q->msg[q->qname_off + i];
		h = (h ^ (c >= 'A' && c <= 'Z' ? c + 32u : c)) * 16777619u;
	}
	size_t qlen = q->question_end - 12; /* echoed as the client spelled it */
	memcpy(m, (const uint8_t[12]){q->id >> 8, q->id & 0xff, 0x81, 0x80, 0, 1, 0, 1}, 12);
	memcpy(m + 12, q->msg + 12, qlen);
	memcpy(m + 12 + qlen, (const uint8_t[16]){0xc0, 12, 0, 1, 0, 1, /* at the qname: A IN */
						  0, 0, 1, 44, 0, 4,   /* TTL 300, 4 bytes */
						  192, 0, 2, (uint8_t)(1 + h % 254)}, 16);
	return 12 + qlen + 16;
}

/* Ask upstream, take the answer in, answer from it: encoded once with the
 * cache's policy (TTL caps), the same bytes inserted, written to Redis and
 * answered from. */
static int from_upstream(struct resolver *r, const dnsnap_query_t *q, uint32_t now,
			 uint8_t *out, size_t cap, size_t *len)
{
	uint8_t reply[12 + DNSNAP_NAME_MAX + 4 + 16];
	size_t n = upstream_reply(q, reply), vlen;
	dnsnap_diag_t d = {0};
	dnsnap_hdr_t h;
	int err = dnsnap_cache_encode(r->cache, reply, n, now, NULL, 0, &r->enc, &d);
	if (err == DNSNAP_OK) {
		if ((err = dnsnap_cache_insert_encoded(r->cache, &r->enc)) != DNSNAP_OK)
			fprintf(stderr, "resolver: not cached: %s\n", dnsnap_strerror(err));
		if (r->l2 != NULL &&
		    dnsnap_entry_header(r->enc.entry, r->enc.entry_len, &h, NULL) == DNSNAP_OK &&
		    dnsnap_l2_value_seal(r->enc.key, r->enc.key_len, r->enc.entry, r->enc.entry_len,
					 r->val, sizeof r->val, &vlen) == DNSNAP_OK)
			/* queued (never blocks); Redis drops it when it expires (Unix ms) */
			dnsnap_l2_put(r->l2, r->enc.key, r->enc.key_len, r->val, vlen,
				      (uint64_t)h.expiry * 1000);
	} else if (err != DNSNAP_ENOTCACHE || r->enc.entry_len == 0) {
		fprintf(stderr, "resolver: the upstream's answer: %s\n", d.msg);
		return err;
	} /* else a TTL of 0 after the policy: answered, not kept */
	return dnsnap_cache_answer_entry(r->cache, q, r->enc.entry, r->enc.entry_len, now, 0, out,
					 cap, len);
}

/* A Redis GET in flight: the waiter handed to dnsnap_l2_get(), back in got(). */
struct get {
	struct resolver *r;
	const dnsnap_query_t *q;
	uint32_t now;
	uint8_t *out;
	size_t cap, len;
	int done, answered;           /* got() came; with a good value, answered in out */
};

/* libdnsnap-l2's hook: a GET ended. It runs in dnsnap_l2_process(), in this
 * program's thread, so it may use the cache as the rest of the program does. */
static void got(void *arg, void *waiter, dnsnap_l2_status_t status, const uint8_t *val,
		size_t len)
{
	struct get *g = waiter;
	const uint8_t *entry;
	size_t elen;
	dnsnap_diag_t d = {0};
	(void)arg;
	g->done = 1;
	if (status != DNSNAP_L2_HIT)
		return; /* not there, too late, Redis down: the next tier */
	/* Untrusted bytes: anyone who can write to the Redis can write any value
	 * under any key. Checked: the frame, its tie to the key asked, the entry,
	 * its times and records against this cache's policy. DNSNAP_ENOTFOUND:
	 * expired, a plain miss. */
	int err = dnsnap_l2_value_accept(g->r->cache, g->q->key, g->q->key_len, val, len, g->now,
					 &entry, &elen, &d);
	if (err != DNSNAP_OK) {
		if (err != DNSNAP_ENOTFOUND)
			fprintf(stderr, "resolver: a Redis value refused: %s\n", d.msg);
		return;
	}
	/* kept in memory (the next query for it is a memory hit), and answered */
	dnsnap_cache_insert_entry(g->r->cache, g->q->key, g->q->key_len, entry, elen);
	g->answered = dnsnap_cache_answer_entry(g->r->cache, g->q, entry, elen, g->now, 0,
						g->out, g->cap, &g->len) == DNSNAP_OK;
}

/* The client's news: a connection lost or back, the breaker's turns */
static void l2_log(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "resolver: redis: %s\n", msg);
}

/* Ask Redis. This program asks one name at a time, so it turns its loop
 * until got() comes (within about wait_ms, whatever Redis does); a resolver
 * goes on with its other clients meanwhile, its sockets in the same poll()
 * beside dnsnap_l2_fd(), and answers this one from got(). */
static int from_redis(struct resolver *r, const dnsnap_query_t *q, uint32_t now,
		      uint8_t *out, size_t cap, size_t *len)
{
	struct get g = {.r = r, .q = q, .now = now, .out = out, .cap = cap};
	if (dnsnap_l2_get(r->l2, q->key, q->key_len, r->wait_ms, &g) != DNSNAP_OK)
		return DNSNAP_ENOTFOUND; /* refused: the breaker is open (Redis failing) */
	while (!g.done) {
		struct pollfd p = {.fd = dnsnap_l2_fd(r->l2), .events = POLLIN};
		/* readable: replies, connections; the timeout: its next deadline */
		if ((poll(&p, 1, dnsnap_l2_timeout_ms(r->l2)) < 0 && errno != EINTR) ||
		    dnsnap_l2_process(r->l2) != DNSNAP_OK) {
			fprintf(stderr, "resolver: the Redis client's loop failed\n");
			exit(2); /* not return: a later got() would write to g */
		}
	}
	*len = g.len;
	return g.answered ? DNSNAP_OK : DNSNAP_ENOTFOUND;
}

/* Answer @p name. @return the tier that did, or a negative DNSNAP_E* code */
static int resolve(struct resolver *r, const char *name, uint16_t id, uint8_t *out,
		   size_t cap, size_t *len)
{
	uint8_t msg[12 + DNSNAP_NAME_MAX + 4];
	dnsnap_query_t q;
	size_t n = make_query(name, id, msg, sizeof msg);
	int err = n == 0 ? DNSNAP_ENAME : dnsnap_query_parse(msg, n, NULL, 0, &q, NULL);
	if (err != DNSNAP_OK)
		return err;
	uint32_t now = (uint32_t)time(NULL);
	/* memory, then the snapshot under it: one call, which says which answered */
	dnsnap_lookup_t lk = {.now = now};
	if (dnsnap_cache_lookup(r->cache, &q, &lk, out, cap, len) == DNSNAP_OK)
		return lk.tier == DNSNAP_TIER_MEMORY ? MEMORY : MAP;
	if (r->l2 != NULL && from_redis(r, &q, now, out, cap, len) == DNSNAP_OK)
		return REDIS;
	err = from_upstream(r, &q, now, out, cap, len);
	return err == DNSNAP_OK ? UPSTREAM : err;
}

/* A line per A record of the answer @p a: the name, the tier, the address, the TTL */
static void print_answer(const char *name, enum tier t, const uint8_t *a, size_t n)
{
	uint8_t owner[DNSNAP_NAME_MAX];
	size_t p = 12, olen, rdlen = 0;
	unsigned count = (unsigned)(a[6] << 8 | a[7]), shown = 0;
	if (dnsnap_name_unpack(a, n, &p, owner, &olen, NULL) != DNSNAP_OK)
		count = 0;
	for (p += 4; count-- > 0; p += rdlen) { /* after the question's type and class */
		if (dnsnap_name_unpack(a, n, &p, owner, &olen, NULL) != DNSNAP_OK || p + 10 > n)
			break;
		unsigned type = (unsigned)(a[p] << 8 | a[p + 1]);
		unsigned long ttl = (unsigned long)a[p + 4] << 24 | (unsigned long)a[p + 5] << 16 |
				    (unsigned long)a[p + 6] << 8 | a[p + 7];
		rdlen = (size_t)(a[p + 8] << 8 | a[p + 9]);
		if ((p += 10) + rdlen > n)
			break;
		if (type == 1 && rdlen == 4) {
			printf("%-20s %-9s A %u.%u.%u.%u ttl %lu\n", name, tier_name[t], a[p],
			       a[p + 1], a[p + 2], a[p + 3], ttl);
			shown++;
		}
	}
	if (shown == 0)
		printf("%-20s %-9s no A record (rcode %u)\n", name, tier_name[t], a[3] & 15u);
}

/* Start: Redis (if asked for), the cache, the snapshot under it. @return 0, -1 */
static int start(struct resolver *r, const char *path, const char *url)
{
	dnsnap_diag_t d = {0};
	char err[256];
	if (url != NULL) { /* it connects at the first dnsnap_l2_process() */
		dnsnap_l2_opts_t o = {.url = url, .wait_ms = r->wait_ms};
		dnsnap_l2_hooks_t h = {.got = got, .log = l2_log};
		if (dnsnap_l2_new(&o, &h, &r->l2, err, sizeof err) != DNSNAP_OK) {
			fprintf(stderr, "resolver: -r %s: %s\n", url, err);
			return -1;
		}
		printf(";; redis %s: each GET within %u ms\n", url, r->wait_ms);
	}
	int rc = dnsnap_cache_new(NULL, &r->cache); /* the default policy (dnsnap.h) */
	if (rc != DNSNAP_OK) {
		fprintf(stderr, "resolver: %s\n", dnsnap_strerror(rc));
		return -1;
	}
	if ((rc = dnsnap_snap_open(path, &r->snap, &d)) == DNSNAP_OK) {
		dnsnap_snap_info_t info;
		dnsnap_snap_info(r->snap, &info);
		dnsnap_cache_attach(r->cache, r->snap, NULL); /* misses fall through to it */
		printf(";; %s: %llu entries mapped\n", path, (unsigned long long)info.entry_count);
		return 0;
	}
	r->snap = NULL;
	if (rc != -ENOENT && rc != DNSNAP_ETRUNC && rc != DNSNAP_ECHECKSUM && rc != DNSNAP_EFIELD &&
	    rc != DNSNAP_ERESERVED) {
		/* not a snapshot, a later version, unreadable: the publish at the end
		 * would not replace it (it may be another program's file) */
		fprintf(stderr, "resolver: %s\n", d.msg);
		return -1;
	}
	printf(";; a cold start: %s\n", d.msg); /* none yet, or damaged: replaced at the end */
	return 0;
}

/* Stop: Redis's queued writes sent, the cache published at @p path. @return 0, -1 */
static int stop(struct resolver *r, const char *path)
{
	if (r->l2 != NULL) {
		dnsnap_l2_stats_t st;
		dnsnap_l2_free_last(r->l2, 3000, &st); /* at most 3 s, run by this thread */
		r->l2 = NULL;
		printf(";; redis: %llu hits, %llu misses, %llu values written\n",
		       (unsigned long long)st.hits, (unsigned long long)st.misses,
		       (unsigned long long)st.writes);
	}
	/* Under the writers' lock, merged with the file there now (what another
	 * writer published meanwhile is kept), written beside it, renamed over it.
	 * A damaged file is replaced, a damaged entry of it left out. */
	dnsnap_publish_opts_t o = {
		.now = (uint32_t)time(NULL), .wait_seconds = 10,
		.flags = DNSNAP_PUBLISH_DROP_DAMAGED | DNSNAP_PUBLISH_REPLACE_BAD,
	};
	dnsnap_publish_stats_t ps;
	dnsnap_diag_t d = {0};
	int err = dnsnap_snap_publish(r->cache, path, &o, NULL, &ps, &d);
	if (err != DNSNAP_OK) {
		fprintf(stderr, "resolver: %s\n", d.msg[0] ? d.msg : dnsnap_strerror(err));
		return -1;
	}
	printf(";; published %s: %llu entries written (%llu of them from the file before)\n", path,
	       (unsigned long long)ps.write.entries, (unsigned long long)ps.write.from_base);
	if (ps.base_err != 0)
		printf(";; the file before was damaged, replaced: %s\n", ps.base_msg);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: resolver [-r redis://HOST:PORT] [-w MS] SNAP [NAME...]\n");
	return 2;
}

int main(int argc, char **argv)
{
	static struct resolver r = {.wait_ms = 100}; /* static: its buffers are large */
	const char *url = NULL;
	char *end;
	int c, failed = 0;
	while ((c = getopt(argc, argv, "r:w:")) != -1) {
		if (c == 'r') {
			url = optarg;
			continue;
		}
		if (c != 'w')
			return usage();
		unsigned long ms = strtoul(optarg, &end, 10);
		if (*end != '\0' || ms < 1 || ms > 60000) {
			fprintf(stderr, "resolver: -w %s: not 1 to 60000 (ms)\n", optarg);
			return 2;
		}
		r.wait_ms = (unsigned)ms;
	}
	if (optind >= argc)
		return usage();
	const char *path = argv[optind++];
	const char *const *names = optind < argc ? (const char *const *)argv + optind : builtin;
	int count = optind < argc ? argc - optind : (int)(sizeof builtin / sizeof *builtin);
	uint8_t out[512]; /* an answer without EDNS: at most 512 bytes */
	size_t n;
	for (int i = 0; i < count; i++) { /* every name checked before anything starts */
		if (make_query(names[i], 0, out, sizeof out) == 0) {
			fprintf(stderr, "resolver: '%s' is not a domain name\n", names[i]);
			return 2;
		}
	}
	int rc = start(&r, path, url) == 0 ? 0 : 2;
	for (int i = 0; rc == 0 && i < count; i++) {
		int t = resolve(&r, names[i], (uint16_t)(i + 1), out, sizeof out, &n);
		if (t >= 0)
			print_answer(names[i], (enum tier)t, out, n);
		else /* the upstream made up an answer the cache cannot take */
			fprintf(stderr, "resolver: %s: %s\n", names[i], dnsnap_strerror(t));
		failed |= t < 0;
	}
	if (rc == 0 && (stop(&r, path) != 0 || failed))
		rc = 2;
	dnsnap_l2_free(r.l2, 0); /* after an error: what start() made, freed */
	dnsnap_cache_free(r.cache); /* the cache first, then the snapshot under it */
	dnsnap_snap_close(r.snap);
	return rc;
}
