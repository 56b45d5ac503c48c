/*
 * control_cache.c: the control channel's commands on the live cache
 * (control.c): flush and dump, with the filters of `dnsnap dump` and
 * `dnsnap purge` (--name, --zone, --type, --tag).
 *
 * The live cache is memory over the map: an entry of memory replaces the
 * map's under its key (it is the newer, or the same). A flush removes the
 * entries from memory, then publishes at once without them (the exclusion
 * filter of dnsnap_snap_publish(), applied to memory's entries and the
 * file's alike) and maps the result: from then on they are in neither, and
 * no later publish brings them back; a flush that matches nothing publishes
 * nothing (exit 1). With --expired only the expired entries among those
 * matched go. With --l2 the keys removed are deleted from Redis too, so
 * that the next miss does not fetch them back from there (not with
 * --expired: Redis drops its keys at their own expiry, PXAT); Redis not
 * reached is exit 2, what memory and the file held gone all the same.
 * Flush runs in the main thread (serve_ctl.h), dump in the control thread.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "json.h"
#include "lazy.h"
#include "log.h"
#include "print.h"
#include "server.h"

enum { C_JSON = 0x100, C_EXPIRED };

/* A copy of a memory entry, the live hit count in its Hits field */
struct live {
	uint8_t *key, *entry;
	uint16_t key_len;
	uint32_t entry_len;
};

struct live_set {
	const filter_t *f;
	int expired;             /* only the expired at now */
	uint32_t now;
	struct live *v;
	size_t n, cap;
	int oom;
};

static int live_add(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		    size_t entry_len, uint32_t hits)
{
	struct live_set *ls = arg;
	dnsnap_key_t k;
	if (dnsnap_key_decode(key, key_len, &k, NULL) != DNSNAP_OK ||
	    !filter_match(ls->f, key, key_len, &k))
		return 0;
	if (ls->expired && (int32_t)(entry_expiry(entry) - ls->now) > 0)
		return 0;
	if (ls->n == ls->cap) {
		size_t nc = ls->cap ? ls->cap * 2 : 64;
		struct live *nv = realloc(ls->v, nc * sizeof *nv);
		if (nv == NULL)
			return ls->oom = 1;
		ls->v = nv;
		ls->cap = nc;
	}
	uint8_t *b = malloc(key_len + entry_len);
	if (b == NULL)
		return ls->oom = 1;
	memcpy(b, key, key_len);
	memcpy(b + key_len, entry, entry_len);
	if (entry_len >= 12)
		dnsnap_store_le32(b + key_len + 8, hits);
	ls->v[ls->n++] = (struct live){ b, b + key_len, (uint16_t)key_len, (uint32_t)entry_len };
	return 0;
}

static int live_cmp(const void *a, const void *b)
{
	const struct live *x = a, *y = b;
	return dnsnap_key_cmp(x->key, x->key_len, y->key, y->key_len);
}

static void live_free(struct live_set *ls)
{
	for (size_t i = 0; i < ls->n; i++)
		free(ls->v[i].key);
	free(ls->v);
}

/* Memory's entries that pass @p f (and are expired at @p now, with
 * @p expired), copied and sorted. @return 0 or -1 */
static int live_collect(struct server *s, const filter_t *f, int expired, uint32_t now,
			struct live_set *ls)
{
	*ls = (struct live_set){ .f = f, .expired = expired, .now = now };
	dnsnap_cache_foreach(s->cache, live_add, ls);
	if (ls->oom) {
		live_free(ls);
		return -1;
	}
	if (ls->n > 1) /* v is NULL when nothing matched: qsort() must not be given it */
		qsort(ls->v, ls->n, sizeof *ls->v, live_cmp);
	return 0;
}

/* The filters, and a command's own options (--json, --expired for dump).
 * @return 0, or EXIT_USAGE (reported) */
static int parse(const char *cmd, int argc, char **argv, filter_t *f, int *json, int *expired)
{
	char name[32];
	snprintf(name, sizeof name, "control %s", cmd); /* "dnsnap control flush: ..." */
	cmd = name;
	static const struct option longopts[] = {
		FILTER_LONGOPTS,
		{ "json", no_argument, NULL, C_JSON },
		{ "expired", no_argument, NULL, C_EXPIRED },
		{ NULL, 0, NULL, 0 },
	};
	const char *why = lazy_ldns(); /* names and types are read with it */
	if (why != NULL)
		return fail(cmd, NULL, "%s", why);
	int c, r;
	*f = (filter_t){ 0 };
	while ((c = opt_next(cmd, argc, argv, "", longopts)) != -1) {
		if ((r = filter_opt(cmd, f, c, optarg)) != 0) {
			if (r != 1)
				return r;
			continue;
		}
		if (c == C_JSON)
			*json = 1;
		else if (c == C_EXPIRED && expired != NULL)
			*expired = 1;
		else
			return EXIT_USAGE;
	}
	if (opt_operands(cmd, argc, argv, 0, 0, "") < 0 || filter_ready(cmd, f))
		return EXIT_USAGE;
	return 0;
}

/* ------------------------------------------------------------- dump */

struct dump_run {
	struct server *s;
	FILE *out;
	const filter_t *f;
	struct live_set *mem;
	size_t next;             /* memory's next entry to print */
	uint32_t now;
	int json, expired;
	uint64_t shown, hidden;
};

static void show(struct dump_run *d, const uint8_t *key, size_t key_len, const uint8_t *entry,
		 size_t entry_len)
{
	if ((int32_t)(entry_expiry(entry) - d->now) <= 0 && !d->expired) {
		d->hidden++;
		return;
	}
	print_dump(d->out, key, key_len, entry, entry_len, d->now, d->json);
	if (++d->shown % 4096 == 0)
		control_keepalive(d->s); /* a long dump: the clients waiting told it lives */
}

/* Memory's entries before @p key (all of them: NULL) */
static void show_memory_to(struct dump_run *d, const uint8_t *key, size_t key_len)
{
	while (d->next < d->mem->n) {
		const struct live *m = &d->mem->v[d->next];
		if (key != NULL && dnsnap_key_cmp(m->key, m->key_len, key, key_len) >= 0)
			return;
		show(d, m->key, m->key_len, m->entry, m->entry_len);
		d->next++;
	}
}

static int dump_map_one(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
			size_t entry_len)
{
	struct dump_run *d = arg;
	show_memory_to(d, key, key_len);
	if (d->next < d->mem->n) {
		const struct live *m = &d->mem->v[d->next];
		if (dnsnap_key_cmp(m->key, m->key_len, key, key_len) == 0)
			return 0; /* memory's is shown in its turn */
	}
	show(d, key, key_len, entry, entry_len);
	return 0;
}

int control_dump(struct server *s, int argc, char **argv, FILE *out)
{
	static filter_t f; /* 33 KB: not on the stack */
	struct dump_run d = { .s = s, .out = out, .f = &f, .now = server_now(s) };
	int rc = parse("dump", argc, argv, &f, &d.json, &d.expired);
	if (rc != 0)
		return rc;
	struct live_set mem;
	if (live_collect(s, &f, 0, 0, &mem) != 0)
		return fail("control dump", NULL, "out of memory");
	d.mem = &mem;
	pthread_mutex_lock(&s->snap.mu); /* the map stays while it is walked */
	if (s->snap.map != NULL)
		rc = filter_scan("control", s->snap.map, &f, dump_map_one, &d, NULL);
	pthread_mutex_unlock(&s->snap.mu);
	show_memory_to(&d, NULL, 0);
	live_free(&mem);
	if (rc != 0)
		return rc; /* damage in the map: reported, the good entries shown */
	if (d.shown == 0 && d.hidden > 0)
		fail("control dump", NULL, "no live entry matched (%llu expired; --expired shows "
		     "them)", (unsigned long long)d.hidden);
	return d.shown ? 0 : EXIT_NONE;
}

/* ------------------------------------------------------------- flush */

/* What a flush removes: its filter, and with --expired only the expired */
struct flush_sel {
	const filter_t *f;
	int expired;
	uint32_t now;
	uint64_t n;              /* count_map()'s */
};

static int excluded(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		    size_t entry_len)
{
	const struct flush_sel *fs = arg;
	(void)entry_len;
	dnsnap_key_t k;
	return dnsnap_key_decode(key, key_len, &k, NULL) == DNSNAP_OK &&
	       filter_match(fs->f, key, key_len, &k) &&
	       (!fs->expired || (int32_t)(entry_expiry(entry) - fs->now) <= 0);
}

static int count_map(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		     size_t entry_len)
{
	struct flush_sel *fs = arg;
	fs->n += excluded(fs, key, key_len, entry, entry_len) != 0;
	return 0;
}

static void flush_report(struct server *s, FILE *out, int json, uint64_t mem, uint64_t map,
			 uint64_t l2, const struct publish_res *r)
{
	uint64_t published = r != NULL ? r->ps.write.entries : 0;
	if (json) {
		jw_t j;
		jw_init(&j, out);
		jw_obj(&j);
		jw_kstr(&j, "file", s->path);
		jw_ku64(&j, "pid", (uint64_t)getpid());
		jw_ku64(&j, "memory", mem);
		jw_ku64(&j, "file_entries", map);
		jw_ku64(&j, "l2", l2);
		jw_kbool(&j, "published", r != NULL);
		jw_ku64(&j, "entries", published);
		jw_end(&j);
		jw_nl(&j);
		return;
	}
	fprintf(out, "%s: flushed %llu %s from memory, %llu from the snapshot%s", s->path,
		(unsigned long long)mem, plural(mem, "entry", "entries"), (unsigned long long)map,
		s->l2.out != NULL ? "" : "\n");
	if (s->l2.out != NULL)
		fprintf(out, ", %llu from Redis\n", (unsigned long long)l2);
	if (r != NULL)
		fprintf(out, "%s: published %llu %s without them\n", s->path,
			(unsigned long long)published, plural(published, "entry", "entries"));
	else
		fprintf(out, "%s: nothing matched; nothing published\n", s->path);
}

int control_flush_parse(struct ctl_job *j, int argc, char **argv)
{
	if ((j->f = malloc(sizeof *j->f)) == NULL)
		return fail("control flush", NULL, "out of memory");
	int rc = parse("flush", argc, argv, j->f, &j->json, &j->expired);
	if (rc != 0)
		return rc;
	if (!j->f->any && !j->expired)
		return fail("control flush", NULL, "needs at least one of --name, --zone, --type, "
			    "--tag, --expired (dnsnap help control)");
	return 0;
}

int control_flush(struct server *s, struct ctl_job *j)
{
	const filter_t *f = j->f;
	struct flush_sel fs = { .f = f, .expired = j->expired, .now = server_now(s) };
	if (!s->cfg->forwarding) { /* nothing in memory: the file is purge's */
		fprintf(j->out, "%s: nothing in memory (the server answers from this file only): "
			"purge the file (dnsnap purge), which reloads it\n", s->path);
		return EXIT_NONE;
	}
	struct live_set mem;
	if (live_collect(s, f, fs.expired, fs.now, &mem) != 0)
		return fail("control flush", NULL, "out of memory");
	uint64_t from_mem = 0, from_l2 = 0;
	for (size_t i = 0; i < mem.n; i++)
		from_mem += dnsnap_cache_remove(s->cache, mem.v[i].key, mem.v[i].key_len) ==
			    DNSNAP_OK;
	live_free(&mem);
	pthread_mutex_lock(&s->snap.mu);
	if (s->snap.map != NULL)
		filter_scan("control flush", s->snap.map, f, count_map, &fs, NULL);
	pthread_mutex_unlock(&s->snap.mu);
	char l2err[256] = "";
	if (!fs.expired && l2_flush(s, f, &from_l2, l2err, sizeof l2err) != 0)
		fail("control flush", NULL, "Redis: %s (its entries may stay there)", l2err);
	if (from_mem + fs.n == 0) { /* nothing to leave out: nothing published */
		flush_report(s, j->out, j->json, 0, 0, from_l2, NULL);
		return l2err[0] ? EXIT_USAGE : from_l2 > 0 ? 0 : EXIT_NONE;
	}
	/* the file and the map without them, at once: the next publish cannot
	 * bring back what the file held */
	struct publish_req rq = { .force = 1, .exclude = excluded, .exclude_arg = &fs };
	struct publish_res r;
	if (publish_ex(s, "dnsnap control flush", &rq, &r) != 0)
		return fail("control flush", NULL, "removed from memory, but the snapshot was not "
			    "published: %s", r.error);
	slog(LOG_INFO, "flushed (dnsnap control): %llu from memory, %llu from the snapshot, "
	     "%llu from Redis", (unsigned long long)from_mem, (unsigned long long)fs.n,
	     (unsigned long long)from_l2);
	flush_report(s, j->out, j->json, from_mem, fs.n, from_l2, &r);
	return l2err[0] ? EXIT_USAGE : 0;
}
