/*
 * diff: two snapshots compared entry by entry, in key order: the entries only
 * in A, only in B, and those whose data changed.
 *
 * A merge join of two ordered walks. The library hands a snapshot's entries
 * out only through dnsnap_snap_scan()'s callback, so the walk of B runs in a
 * thread of its own and passes its entries through a small queue (RING_SLOTS
 * copies) to the walk of A, which merges: memory stays a few hundred KB
 * whatever the sizes (8 MB if every slot held an entry of the largest size).
 * The alternatives cost more: collecting one side holds all of B (about 2 GB
 * for 10 million entries of 200 bytes; its keys alone, 300 MB); two passes
 * (A with lookups in B, then B) print the entries only in B after the rest,
 * out of key order; a cursor in the library would be a second walk of LMDB's
 * pages beside the scan's, with its own damage checks, where the tree keeps
 * one reader of snapshot bytes. The scan's SIGBUS guard is per thread, so
 * each walk keeps its own.
 *
 * Damage is never a silent "only in": the scans report it (scan_snap()), and
 * before an entry is printed as only in one file, a lookup in the other tells
 * a damaged counterpart from a missing one.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ldns/ldns.h>

#include "cli.h"
#include "json.h"
#include "print.h"

/* ------------------------------------------------------------ the queue */

#define RING_SLOTS 64
#define RING_BATCH 16 /* wake the other side only when this much can be done */

struct slot {
	uint8_t key[DNSNAP_KEY_MAX];
	size_t key_len;
	uint8_t *entry;
	size_t entry_len, cap;
};

struct ring {
	pthread_mutex_t mu;
	pthread_cond_t data, room;
	struct slot slot[RING_SLOTS];
	unsigned head, count;
	int done;                /* B's walk ended */
	int stop;                /* the merge gave up: B's walk stops */
	int wait_data, wait_room;
	int nomem;
};

/* Only the walk of B writes the slot after the last full one, outside the
 * lock; the merge reads full slots only: the lock orders the two. */
static int ring_put(struct ring *r, const uint8_t *key, size_t key_len, const uint8_t *entry,
		    size_t entry_len)
{
	pthread_mutex_lock(&r->mu);
	while (r->count == RING_SLOTS && !r->stop) {
		r->wait_room = 1;
		pthread_cond_wait(&r->room, &r->mu);
	}
	r->wait_room = 0;
	int stop = r->stop;
	struct slot *s = &r->slot[(r->head + r->count) % RING_SLOTS];
	pthread_mutex_unlock(&r->mu);
	if (stop)
		return 1;
	if (s->cap < entry_len) {
		uint8_t *p = realloc(s->entry, entry_len);
		if (p == NULL) {
			pthread_mutex_lock(&r->mu);
			r->nomem = r->stop = 1;
			pthread_cond_signal(&r->data);
			pthread_mutex_unlock(&r->mu);
			return 1;
		}
		s->entry = p;
		s->cap = entry_len;
	}
	memcpy(s->key, key, key_len);
	s->key_len = key_len;
	memcpy(s->entry, entry, entry_len);
	s->entry_len = entry_len;
	pthread_mutex_lock(&r->mu);
	r->count++;
	if (r->wait_data && r->count >= RING_BATCH)
		pthread_cond_signal(&r->data);
	pthread_mutex_unlock(&r->mu);
	return 0;
}

/* The next entry of B, or NULL when its walk is over; *failed when it
 * stopped for want of memory. */
static const struct slot *ring_peek(struct ring *r, int *failed)
{
	pthread_mutex_lock(&r->mu);
	while (r->count == 0 && !r->done && !r->nomem) {
		r->wait_data = 1;
		pthread_cond_wait(&r->data, &r->mu);
	}
	r->wait_data = 0;
	const struct slot *s = r->count && !r->nomem ? &r->slot[r->head] : NULL;
	*failed |= r->nomem;
	pthread_mutex_unlock(&r->mu);
	return s;
}

static void ring_pop(struct ring *r)
{
	pthread_mutex_lock(&r->mu);
	r->head = (r->head + 1) % RING_SLOTS;
	r->count--;
	if (r->wait_room && r->count <= RING_SLOTS - RING_BATCH)
		pthread_cond_signal(&r->room);
	pthread_mutex_unlock(&r->mu);
}

static void ring_finish(struct ring *r, int stop)
{
	pthread_mutex_lock(&r->mu);
	if (stop)
		r->stop = 1;
	else
		r->done = 1;
	pthread_cond_broadcast(stop ? &r->room : &r->data);
	pthread_mutex_unlock(&r->mu);
}

/* ------------------------------------------------------------ the diff */

enum { OPT_JSON = 0x100, OPT_IGNORE_EXPIRY, OPT_LIVE, OPT_NOW };

struct side {
	const char *path;
	dnsnap_snap_t *s;
};

struct diff {
	struct side a, b;
	struct ring ring;
	int json, ignore_expiry, live;
	uint32_t now;
	jw_t j;
	uint64_t differ;         /* entries printed */
	int damaged;             /* an entry not compared (damaged): exit 2 */
	int nomem;
	uint8_t *buf;            /* DNSNAP_ENTRY_MAX: lookups in the other file */
	int rc_b;                /* scan_snap() of B */
	const filter_t *f;       /* --name, --zone, --type, --tag: both walks */
};

static int live_at(const struct diff *d, const uint8_t *entry)
{
	return !d->live || (int32_t)(entry_expiry(entry) - d->now) > 0;
}

/* A key as the tool prints keys: "NAME CLASS TYPE[ cd][ tag HEX]". */
struct key_text {
	dnsnap_key_t k;
	char name[1024], type[32], cls[32], tag[2 * DNSNAP_TAG_MAX + 1];
	char text[1024 + 64 + 2 * DNSNAP_TAG_MAX + 8];
};

static void key_text(struct key_text *t, const uint8_t *key, size_t key_len)
{
	dnsnap_key_decode(key, key_len, &t->k, NULL); /* checked by the scan */
	print_name(t->k.name, t->k.name_len, t->name, sizeof t->name);
	print_type(t->type, sizeof t->type, t->k.qtype);
	print_class(t->cls, sizeof t->cls, t->k.qclass);
	t->tag[0] = 0;
	for (size_t i = 0; i < t->k.tag_len; i++)
		snprintf(t->tag + 2 * i, 3, "%02x", t->k.tag[i]);
	snprintf(t->text, sizeof t->text, "%s %s %s%s%s%s", t->name, t->cls, t->type,
		 t->k.flags & DNSNAP_KF_CD ? " cd" : "", t->k.tag_len ? " tag " : "", t->tag);
}

/* The first line of a difference ("- KEY", "+ KEY", "! KEY"), or the first
 * members of its JSON object (left open). */
static void put_key(struct diff *d, const char *change, const uint8_t *key, size_t key_len)
{
	struct key_text t;
	key_text(&t, key, key_len);
	if (d->json) {
		jw_obj(&d->j);
		jw_kstr(&d->j, "change", change);
		jw_kstr(&d->j, "name", t.name);
		jw_kstr(&d->j, "class", t.cls);
		jw_kstr(&d->j, "type", t.type);
		jw_kbool(&d->j, "cd", t.k.flags & DNSNAP_KF_CD);
		jw_kstr(&d->j, "tag", t.tag);
		return;
	}
	const char *mark = strcmp(change, "only_a") == 0   ? "-"
			   : strcmp(change, "only_b") == 0 ? "+"
							   : "!";
	printf("%s %s\n", mark, t.text);
}

/*
 * An entry found in one file only. A lookup in the other tells "not there"
 * from "there but damaged" (the lookup counts it as bad): a damaged
 * counterpart is reported, never printed as a difference.
 */
static void only(struct diff *d, const char *change, const struct side *other,
		 const uint8_t *key, size_t key_len)
{
	uint64_t bad = dnsnap_snap_bad_entries(other->s);
	size_t len;
	dnsnap_snap_get(other->s, key, key_len, d->buf, DNSNAP_ENTRY_MAX, &len);
	if (dnsnap_snap_bad_entries(other->s) != bad) {
		struct key_text t;
		key_text(&t, key, key_len);
		fail("diff", other->path, "the entry of %s is damaged: not compared (run dnsnap "
		     "verify)", t.text);
		d->damaged = 1;
		return;
	}
	put_key(d, change, key, key_len);
	if (d->json) {
		jw_end(&d->j);
		jw_nl(&d->j);
	}
	d->differ++;
}

/* One side of a changed entry: its records, and their text as dump prints it. */
struct recs {
	dnsnap_key_t k;          /* elided owners point into k.name */
	dnsnap_rr_t *rr;
	size_t n;
	int *matched;
	char *text;              /* print_dump()'s output */
	char **line;             /* record i's line in it (NULL when they disagree) */
};

static void recs_free(struct recs *r)
{
	free(r->rr);
	free(r->matched);
	free(r->text);
	free(r->line);
}

/* @return 0, -1 out of memory, -2 unreadable records */
static int recs_load(struct recs *r, const uint8_t *key, size_t key_len, const uint8_t *entry,
		     size_t len)
{
	dnsnap_hdr_t h;
	dnsnap_iter_t it;
	dnsnap_key_decode(key, key_len, &r->k, NULL);
	dnsnap_entry_header(entry, len, &h, NULL);
	size_t cap = 16;
	r->rr = malloc(cap * sizeof *r->rr);
	if (r->rr == NULL ||
	    dnsnap_iter_init(&it, entry, len, r->k.name, r->k.name_len) != DNSNAP_OK)
		return -1;
	for (;;) {
		if (r->n == cap) {
			dnsnap_rr_t *p = realloc(r->rr, 2 * cap * sizeof *r->rr);
			if (p == NULL)
				return -1;
			r->rr = p;
			cap *= 2;
		}
		int e = dnsnap_iter_next(&it, &r->rr[r->n]);
		if (e < 0)
			return -2; /* not after the scan's validation */
		if (e == 0)
			break;
		r->n++;
	}
	r->matched = calloc(r->n + 1, sizeof *r->matched);
	r->line = calloc(r->n + 1, sizeof *r->line);
	if (r->matched == NULL || r->line == NULL)
		return -1;
	/* dump's printer at the entry's Inception: the original TTLs. Its lines
	 * that are not comments are the records, in order. */
	size_t tlen;
	FILE *f = open_memstream(&r->text, &tlen);
	if (f == NULL)
		return -1;
	print_dump(f, key, key_len, entry, len, h.inception, 0);
	if (fclose(f) != 0)
		return -1;
	size_t i = 0;
	for (char *p = r->text, *nl; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (nl == NULL)
			break;
		*nl = 0;
		if (*p != ';' && i <= r->n)
			r->line[i++] = p;
	}
	if (i != r->n)
		memset(r->line, 0, (r->n + 1) * sizeof *r->line);
	return 0;
}

/* Wire bytes of a record's owner, type, class, TTL (unless ignored), rdata */
static int rr_cmp(const dnsnap_rr_t *x, const dnsnap_rr_t *y, int ignore_ttl)
{
	if (x->section != y->section)
		return x->section < y->section ? -1 : 1;
	int c = dnsnap_key_cmp(x->owner, x->owner_len, y->owner, y->owner_len);
	if (c != 0)
		return c;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	if (x->rclass != y->rclass)
		return x->rclass < y->rclass ? -1 : 1;
	if (!ignore_ttl && x->ttl != y->ttl)
		return x->ttl < y->ttl ? -1 : 1;
	return dnsnap_key_cmp(x->rdata, x->rdlen, y->rdata, y->rdlen);
}

struct sort_ctx {
	const dnsnap_rr_t *rr;
	int ignore_ttl;
};

static int idx_cmp(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *sc = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int c = rr_cmp(&sc->rr[i], &sc->rr[j], sc->ignore_ttl);
	return c != 0 ? c : (i > j) - (i < j);
}

/* Pair equal records of A and B (a multiset match): the unmatched ones are the
 * records removed and added. @return whether both lists are equal, in order. */
static int recs_match(struct recs *a, struct recs *b, int ignore_ttl, int *nomem)
{
	size_t *ia = malloc((a->n + 1) * sizeof *ia), *ib = malloc((b->n + 1) * sizeof *ib);
	if (ia == NULL || ib == NULL) {
		free(ia);
		free(ib);
		*nomem = 1;
		return 0;
	}
	for (size_t i = 0; i < a->n; i++)
		ia[i] = i;
	for (size_t i = 0; i < b->n; i++)
		ib[i] = i;
	struct sort_ctx ca = { a->rr, ignore_ttl }, cb = { b->rr, ignore_ttl };
	qsort_r(ia, a->n, sizeof *ia, idx_cmp, &ca);
	qsort_r(ib, b->n, sizeof *ib, idx_cmp, &cb);
	for (size_t i = 0, j = 0; i < a->n && j < b->n;) {
		int c = rr_cmp(&a->rr[ia[i]], &b->rr[ib[j]], ignore_ttl);
		if (c == 0)
			a->matched[ia[i++]] = b->matched[ib[j++]] = 1;
		else if (c < 0)
			i++;
		else
			j++;
	}
	free(ia);
	free(ib);
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (rr_cmp(&a->rr[i], &b->rr[i], ignore_ttl) != 0)
			return 0;
	return 1;
}

static const char *const sec_text[] = { "ANSWER", "AUTHORITY", "ADDITIONAL" };
static const char *const sec_json[] = { "answer", "authority", "additional" };
static const char *const kind_text[] = { "ANSWER", "NXDOMAIN", "NODATA", "REFERRAL" };

/* The records of @p r that the other side lacks (in section @p sec, or all
 * for -1): text lines, under the section's name once (*sec_at), or JSON
 * objects. */
static void put_unmatched(struct diff *d, const struct recs *r, const char *mark, int sec,
			  int *sec_at)
{
	for (size_t i = 0; i < r->n; i++) {
		if (r->matched[i] || (sec >= 0 && (int)r->rr[i].section != sec))
			continue;
		char fallback[64], type[32];
		const char *t = r->line[i];
		if (t == NULL) {
			print_type(type, sizeof type, r->rr[i].type);
			snprintf(fallback, sizeof fallback, "; record %zu (%s)", i, type);
			t = fallback;
		}
		if (d->json) { /* one tab between the fields: dig's columns are layout */
			char *plain = strdup(t), *o = plain;
			int fields = 0;
			for (const char *c = t; plain != NULL && *c; c++) {
				if (fields < 4 && t[0] != ';' && (*c == ' ' || *c == '\t')) {
					while (c[1] == ' ' || c[1] == '\t')
						c++;
					*o++ = '\t';
					fields++;
				} else {
					*o++ = *c;
				}
			}
			if (plain != NULL)
				*o = 0;
			jw_obj(&d->j);
			jw_kstr(&d->j, "section", sec_json[r->rr[i].section]);
			jw_kstr(&d->j, "rr", plain ? plain : t);
			jw_end(&d->j);
			free(plain);
			continue;
		}
		if (*sec_at != (int)r->rr[i].section) {
			*sec_at = (int)r->rr[i].section;
			printf("  ;; %s\n", sec_text[*sec_at]);
		}
		printf("  %s %s\n", mark, t);
	}
}

static void put_pair_str(struct diff *d, const char *what, const char *x, const char *y)
{
	if (d->json) {
		jw_key(&d->j, what);
		jw_arr(&d->j);
		jw_str(&d->j, x);
		jw_str(&d->j, y);
		jw_end(&d->j);
	} else {
		printf("  %s %s -> %s\n", what, x, y);
	}
}

static void put_time(struct diff *d, const char *what, uint32_t x, uint32_t y)
{
	char tx[21], ty[21];
	time_iso(x, tx);
	time_iso(y, ty);
	put_pair_str(d, what, tx, ty);
}

/* The EDE options of an entry: codes (text), or code and text (JSON). */
static void put_ede(struct diff *d, const dnsnap_hdr_t *h, char *buf, size_t cap)
{
	dnsnap_ede_t e;
	size_t n = 0;
	buf[0] = 0;
	if (d->json)
		jw_arr(&d->j);
	for (unsigned i = 0; dnsnap_entry_ede(h, i, &e) == 1; i++) {
		if (d->json) {
			jw_obj(&d->j);
			jw_ku64(&d->j, "code", e.code);
			jw_key(&d->j, "text");
			jw_strn(&d->j, (const char *)e.text, e.text_len);
			jw_end(&d->j);
		} else if (n < cap) {
			n += (size_t)snprintf(buf + n, cap - n, "%s%u", i ? "," : "", e.code);
		}
	}
	if (d->json)
		jw_end(&d->j);
	else if (n == 0)
		snprintf(buf, cap, "none");
}

/* What differs between two entries under one key. */
struct change {
	dnsnap_hdr_t ha, hb;
	int inception, expiry, rcode, kind, ad, ede;
	int moved;               /* records only in one of them */
	int reordered;           /* the same records, in another order */
	struct recs a, b;
};

/*
 * Compare two entries under one key: 0 when they hold the same data (the
 * Hits counters are not data; with --ignore-expiry neither are the
 * Inception, the Expiry and the records' TTLs), 1 when not (@p c says
 * what), -1 out of memory, -2 records the iterator cannot read. @p c's
 * records are to be freed either way.
 */
static int compare(struct diff *d, const uint8_t *key, size_t key_len, const uint8_t *ea,
		   size_t la, const uint8_t *eb, size_t lb, struct change *c)
{
	if (la == lb && memcmp(ea, eb, 8) == 0 && memcmp(ea + 12, eb + 12, la - 12) == 0)
		return 0; /* the same bytes but for Hits (offset 8, 4 bytes) */
	dnsnap_hdr_t *ha = &c->ha, *hb = &c->hb;
	dnsnap_entry_header(ea, la, ha, NULL); /* validated by the scan */
	dnsnap_entry_header(eb, lb, hb, NULL);
	int ign = d->ignore_expiry;
	c->inception = !ign && ha->inception != hb->inception;
	c->expiry = !ign && ha->expiry != hb->expiry;
	c->rcode = dnsnap_hdr_rcode(ha) != dnsnap_hdr_rcode(hb);
	c->kind = dnsnap_hdr_kind(ha) != dnsnap_hdr_kind(hb);
	c->ad = !!(ha->flags & DNSNAP_EF_AUTH) != !!(hb->flags & DNSNAP_EF_AUTH);
	c->ede = ha->ext_len != hb->ext_len ||
		 (ha->ext_len && memcmp(ha->ext, hb->ext, ha->ext_len) != 0);
	int e = recs_load(&c->a, key, key_len, ea, la);
	if (e != 0 || (e = recs_load(&c->b, key, key_len, eb, lb)) != 0)
		return e;
	int nomem = 0, same_order = recs_match(&c->a, &c->b, ign, &nomem);
	if (nomem)
		return -1;
	for (size_t i = 0; i < c->a.n; i++)
		c->moved |= !c->a.matched[i];
	for (size_t i = 0; i < c->b.n; i++)
		c->moved |= !c->b.matched[i];
	c->reordered = !c->moved && !same_order;
	/* else only the encoding differs, or what is ignored */
	return c->inception || c->expiry || c->rcode || c->kind || c->ad || c->ede || c->moved ||
	       c->reordered;
}

static void put_change(struct diff *d, const uint8_t *key, size_t key_len, struct change *c)
{
	const dnsnap_hdr_t *ha = &c->ha, *hb = &c->hb;
	char x[48], y[48];
	put_key(d, "changed", key, key_len);
	if (c->inception)
		put_time(d, "inception", ha->inception, hb->inception);
	if (c->expiry)
		put_time(d, "expiry", ha->expiry, hb->expiry);
	if (c->rcode) {
		put_pair_str(d, "rcode", print_rcode(dnsnap_hdr_rcode(ha), x, sizeof x),
			     print_rcode(dnsnap_hdr_rcode(hb), y, sizeof y));
	}
	if (c->kind)
		put_pair_str(d, "kind", kind_text[dnsnap_hdr_kind(ha)], kind_text[dnsnap_hdr_kind(hb)]);
	int ada = !!(ha->flags & DNSNAP_EF_AUTH), adb = !!(hb->flags & DNSNAP_EF_AUTH);
	if (c->ad && d->json) {
		jw_key(&d->j, "ad");
		jw_arr(&d->j);
		jw_bool(&d->j, ada);
		jw_bool(&d->j, adb);
		jw_end(&d->j);
	} else if (c->ad) {
		printf("  ad %s -> %s\n", ada ? "yes" : "no", adb ? "yes" : "no");
	}
	if (c->ede) {
		if (d->json) {
			jw_key(&d->j, "ede");
			jw_arr(&d->j);
		}
		put_ede(d, ha, x, sizeof x);
		put_ede(d, hb, y, sizeof y);
		if (d->json)
			jw_end(&d->j);
		else
			printf("  ede %s -> %s\n", x, y);
	}
	int at = -1;
	if (d->json) {
		if (c->moved) {
			jw_key(&d->j, "only_a");
			jw_arr(&d->j);
			put_unmatched(d, &c->a, "-", -1, &at);
			jw_end(&d->j);
			jw_key(&d->j, "only_b");
			jw_arr(&d->j);
			put_unmatched(d, &c->b, "+", -1, &at);
			jw_end(&d->j);
		}
		if (c->reordered)
			jw_kbool(&d->j, "reordered", 1);
		jw_end(&d->j);
		jw_nl(&d->j);
		return;
	}
	/* section by section: A's records first, then B's */
	for (int s = DNSNAP_SEC_ANSWER; c->moved && s <= DNSNAP_SEC_ADDITIONAL; s++) {
		put_unmatched(d, &c->a, "-", s, &at);
		put_unmatched(d, &c->b, "+", s, &at);
	}
	if (c->reordered)
		printf("  the same records in another order\n");
}

/* Two entries under one key: the change printed, if any. @return 1 if printed */
static int changed(struct diff *d, const uint8_t *key, size_t key_len, const uint8_t *ea,
		   size_t la, const uint8_t *eb, size_t lb)
{
	struct change c = { 0 };
	int r = compare(d, key, key_len, ea, la, eb, lb, &c);
	if (r == -1)
		d->nomem = 1;
	if (r == -2) {
		struct key_text t;
		key_text(&t, key, key_len);
		fail("diff", NULL, "the records of %s cannot be read: not compared", t.text);
		d->damaged = 1;
	}
	if (r > 0)
		put_change(d, key, key_len, &c);
	recs_free(&c.a);
	recs_free(&c.b);
	return r > 0;
}

/* The walk of A: each entry against the next ones of B. */
static int merge_a(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		   size_t entry_len)
{
	struct diff *d = arg;
	int live = live_at(d, entry), c = 1;
	const struct slot *s;
	while ((s = ring_peek(&d->ring, &d->nomem)) != NULL &&
	       (c = dnsnap_key_cmp(s->key, s->key_len, key, key_len)) < 0) {
		only(d, "only_b", &d->a, s->key, s->key_len);
		ring_pop(&d->ring);
	}
	if (d->nomem)
		return 1;
	if (s != NULL && c == 0) {
		if (live)
			d->differ += changed(d, key, key_len, entry, entry_len, s->entry,
					     s->entry_len);
		else
			only(d, "only_b", &d->a, s->key, s->key_len);
		ring_pop(&d->ring);
	} else if (live) {
		only(d, "only_a", &d->b, key, key_len);
	}
	return d->nomem;
}

static int put_b(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		 size_t entry_len)
{
	struct diff *d = arg;
	if (!live_at(d, entry))
		return 0; /* with --live, an expired entry counts as absent */
	return ring_put(&d->ring, key, key_len, entry, entry_len);
}

static void *walk_b(void *arg)
{
	struct diff *d = arg;
	d->rc_b = filter_scan("diff", d->b.s, d->f, put_b, d, NULL);
	ring_finish(&d->ring, 0);
	return NULL;
}

static int diff_run(struct diff *d)
{
	pthread_t t;
	if (pthread_create(&t, NULL, walk_b, d) != 0)
		return fail("diff", NULL, "cannot start a thread: %s", strerror(errno));
	int rc_a = filter_scan("diff", d->a.s, d->f, merge_a, d, NULL);
	if (rc_a != 1) {
		/* the rest of B follows every key of A */
		const struct slot *s;
		while ((s = ring_peek(&d->ring, &d->nomem)) != NULL && !d->nomem) {
			only(d, "only_b", &d->a, s->key, s->key_len);
			ring_pop(&d->ring);
		}
	}
	ring_finish(&d->ring, 1); /* stops B's walk if it is still going */
	pthread_join(t, NULL);
	if (d->nomem)
		return fail("diff", NULL, "out of memory");
	if (fflush(stdout) != 0 || ferror(stdout))
		return fail("diff", "standard output", "%s", strerror(errno));
	if (rc_a != 0 || d->rc_b != 0 || d->damaged)
		return EXIT_USAGE; /* reported; the differences printed may be incomplete */
	return d->differ ? 1 : 0;
}

int cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "ignore-expiry", no_argument, NULL, OPT_IGNORE_EXPIRY },
		{ "live", no_argument, NULL, OPT_LIVE },
		{ "now", required_argument, NULL, OPT_NOW },
		FILTER_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	static struct diff d; /* the queue is large: not on the stack */
	static filter_t f;    /* 33 KB: not on the stack either */
	memset(&d, 0, sizeof d);
	f = (filter_t){ 0 };
	d.f = &f;
	const char *now_arg = NULL;
	int c, r;
	while ((c = opt_next("diff", argc, argv, "", longopts)) != -1) {
		if ((r = filter_opt("diff", &f, c, optarg)) != 0) {
			if (r != 1)
				return r;
			continue;
		}
		switch (c) {
		case OPT_JSON:
			d.json = 1;
			break;
		case OPT_IGNORE_EXPIRY:
			d.ignore_expiry = 1;
			break;
		case OPT_LIVE:
			d.live = 1;
			break;
		case OPT_NOW:
			now_arg = optarg;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (opt_operands("diff", argc, argv, 2, 2, "two snapshots, A and B") < 0 ||
	    filter_ready("diff", &f) != 0)
		return EXIT_USAGE;
	d.now = (uint32_t)time(NULL);
	if (now_arg != NULL && !d.live)
		return fail("diff", NULL, "--now is the time of --live: it needs --live (dnsnap "
			    "help diff)");
	if (now_arg != NULL && time_arg("diff", "--now", now_arg, &d.now))
		return EXIT_USAGE;
	d.a.path = argv[optind];
	d.b.path = argv[optind + 1];
	jw_init(&d.j, stdout);
	pthread_mutex_init(&d.ring.mu, NULL);
	pthread_cond_init(&d.ring.data, NULL);
	pthread_cond_init(&d.ring.room, NULL);
	int rc = EXIT_USAGE;
	d.buf = malloc(DNSNAP_ENTRY_MAX);
	if (d.buf == NULL)
		rc = fail("diff", NULL, "out of memory");
	else if (open_snap("diff", d.a.path, &d.a.s) == 0) {
		if (open_snap("diff", d.b.path, &d.b.s) == 0)
			rc = diff_run(&d);
	}
	dnsnap_snap_close(d.b.s);
	dnsnap_snap_close(d.a.s);
	for (int i = 0; i < RING_SLOTS; i++)
		free(d.ring.slot[i].entry);
	free(d.buf);
	pthread_cond_destroy(&d.ring.room);
	pthread_cond_destroy(&d.ring.data);
	pthread_mutex_destroy(&d.ring.mu);
	return rc;
}
