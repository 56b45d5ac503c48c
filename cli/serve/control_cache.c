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
 * no later publish brings them back. With --l2 the keys removed are deleted
 * from Redis too, so that the next miss does not fetch them back from there.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Memory's entries that pass @p f, copied and sorted. @return 0 or -1 */
static int live_collect(struct server *s, const filter_t *f, struct live_set *ls)
{
	*ls = (struct live_set){ .f = f };
	dnsnap_cache_foreach(s->cache, live_add, ls);
	if (ls->oom) {
		live_free(ls);
		return -1;
	}
	qsort(ls->v, ls->n, sizeof *ls->v, live_cmp);
	return 0;
}

/* The filters, and a command's own options (--json, --expired for dump).
 * @return 0, or EXIT_USAGE (reported) */
static int parse(const char *cmd, int argc, char **argv, filter_t *f, int *json, int *expired)
{
	static const struct option longopts[] = {
		FILTER_LONGOPTS,
		{ "json", no_argument, NULL, C_JSON },
		{ "expired", no_argument, NULL, C_EXPIRED },
		{ NULL, 0, NULL, 0 },
	};
	const char *why = lazy_ldns(); /* names and types are read with it */
	if (why != NULL)
		return fail("control", NULL, "%s: %s", cmd, why);
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
	d->shown++;
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
	struct dump_run d = { .out = out, .f = &f, .now = server_now(s) };
	int rc = parse("dump", argc, argv, &f, &d.json, &d.expired);
	if (rc != 0)
		return rc;
	struct live_set mem;
	if (live_collect(s, &f, &mem) != 0)
		return fail("control", NULL, "dump: out of memory");
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
		fail("control", NULL, "dump: no live entry matched (%llu expired; --expired shows "
		     "them)", (unsigned long long)d.hidden);
	return d.shown ? 0 : EXIT_NONE;
}

/* ------------------------------------------------------------- flush */

static int excluded(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		    size_t entry_len)
{
	(void)entry, (void)entry_len;
	dnsnap_key_t k;
	return dnsnap_key_decode(key, key_len, &k, NULL) == DNSNAP_OK &&
	       filter_match(arg, key, key_len, &k);
}

static int count_map(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		     size_t entry_len)
{
	(void)key, (void)key_len, (void)entry, (void)entry_len;
	++*(uint64_t *)arg;
	return 0;
}

static void flush_report(struct server *s, FILE *out, int json, uint64_t mem, uint64_t map,
			 uint64_t l2, const struct publish_res *r)
{
	if (json) {
		jw_t j;
		jw_init(&j, out);
		jw_obj(&j);
		jw_kstr(&j, "file", s->path);
		jw_ku64(&j, "memory", mem);
		jw_ku64(&j, "file_entries", map);
		jw_ku64(&j, "l2", l2);
		jw_ku64(&j, "published", r->ps.write.entries);
		jw_end(&j);
		jw_nl(&j);
		return;
	}
	fprintf(out, "%s: flushed %llu %s from memory, %llu from the snapshot%s", s->path,
		(unsigned long long)mem, plural(mem, "entry", "entries"), (unsigned long long)map,
		s->l2.out != NULL ? "" : "\n");
	if (s->l2.out != NULL)
		fprintf(out, ", %llu from Redis\n", (unsigned long long)l2);
	if (s->cfg->forwarding)
		fprintf(out, "%s: published %llu %s without them\n", s->path,
			(unsigned long long)r->ps.write.entries,
			plural(r->ps.write.entries, "entry", "entries"));
}

int control_flush(struct server *s, int argc, char **argv, FILE *out)
{
	static filter_t f;
	int json = 0;
	int rc = parse("flush", argc, argv, &f, &json, NULL);
	if (rc != 0)
		return rc;
	if (!f.any)
		return fail("control", NULL, "flush: needs at least one of --name, --zone, --type, "
			    "--tag");
	if (!s->cfg->forwarding)
		return fail("control", s->path, "flush: a server without --upstream answers from "
			    "this file only: purge the file (dnsnap purge) and reload");
	struct live_set mem;
	if (live_collect(s, &f, &mem) != 0)
		return fail("control", NULL, "flush: out of memory");
	uint64_t from_mem = 0, from_map = 0, from_l2 = 0;
	for (size_t i = 0; i < mem.n; i++)
		from_mem += dnsnap_cache_remove(s->cache, mem.v[i].key, mem.v[i].key_len) ==
			    DNSNAP_OK;
	pthread_mutex_lock(&s->snap.mu);
	if (s->snap.map != NULL)
		filter_scan("control", s->snap.map, &f, count_map, &from_map, NULL);
	pthread_mutex_unlock(&s->snap.mu);
	from_l2 = l2_flush(s, &f);
	live_free(&mem);
	/* the file and the map without them, at once: the next publish cannot
	 * bring back what the file held */
	struct publish_req rq = { .force = 1, .exclude = excluded, .exclude_arg = &f };
	struct publish_res r;
	if (publish_ex(s, "dnsnap control flush", &rq, &r) != 0)
		return fail("control", NULL, "flush: removed from memory, but the snapshot was not "
			    "published: %s", r.error);
	slog(LOG_INFO, "flushed (dnsnap control): %llu from memory, %llu from the snapshot, "
	     "%llu from Redis", (unsigned long long)from_mem, (unsigned long long)from_map,
	     (unsigned long long)from_l2);
	flush_report(s, out, json, from_mem, from_map, from_l2, &r);
	return from_mem + from_map + from_l2 > 0 ? 0 : EXIT_NONE;
}
