/*
 * snap_write.c: writing the cache into a snapshot (spec/FORMAT.md, "Snapshot"):
 * its live entries taken by reference (the cache pinned: each shard's index
 * copied without its lock, the entries read after it, without locks), sorted
 * by key per shard on two threads, merged with each other and with a base
 * snapshot's entries, through a publish's options (a bound, stale entries,
 * an exclusion filter), and appended in key order to the file the page
 * writer builds (snap_pages.c: dnsnap_snapw_*).
 */
#include <errno.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#include "../format/internal.h"
#include "alloc.h"
#include "cache_internal.h"
#include "dnsnap.h"
#include "expiry.h"
#include "record.h"
#include "snap_internal.h"

/* ------------------------------------------------- the cache, in key order */

/* Key order of two refs. The cached 16-byte prefixes decide nearly every
 * comparison without touching the entries (neighbouring keys share ~10
 * bytes: the reversed TLD and most of a second-level label). */
static int ref_cmp(const dnsnap_ref_t *a, const dnsnap_ref_t *b)
{
	if (a->pre[0] != b->pre[0])
		return a->pre[0] < b->pre[0] ? -1 : 1;
	if (a->pre[1] != b->pre[1])
		return a->pre[1] < b->pre[1] ? -1 : 1;
	dnsnap_refval_t x, y;
	dnsnap__ref_get(a, &x);
	dnsnap__ref_get(b, &y);
	return dnsnap_key_cmp(x.key, x.key_len, y.key, y.key_len);
}

#define SORT_RUN 16

/* A sorter's second array, kept from shard to shard (its pages are faulted
 * in once). */
typedef struct sort_tmp {
	dnsnap_ref_t *r;
	size_t cap;
} sort_tmp_t;

/* Sort one shard's refs: insertion sort of runs of SORT_RUN, then bottom-up
 * merges between the array and @p tmp's (sequential passes, n log n
 * comparisons whatever the input). The sorted array ends in rs->r; the other
 * one becomes @p tmp's. */
static int ref_sort(dnsnap_refs_t *rs, sort_tmp_t *tmp)
{
	size_t n = rs->n;
	dnsnap_ref_t *a = rs->r, *b;
	for (size_t lo = 0; lo < n; lo += SORT_RUN) {
		size_t hi = lo + SORT_RUN < n ? lo + SORT_RUN : n;
		for (size_t i = lo + 1; i < hi; i++) {
			dnsnap_ref_t x = a[i];
			size_t j = i;
			for (; j > lo && ref_cmp(&x, &a[j - 1]) < 0; j--)
				a[j] = a[j - 1];
			a[j] = x;
		}
	}
	if (n <= SORT_RUN)
		return DNSNAP_OK;
	if (tmp->cap < n) {
		dnsnap_free(tmp->r);
		tmp->cap = 0;
		if ((tmp->r = dnsnap_malloc(n * sizeof *tmp->r)) == NULL)
			return DNSNAP_ENOMEM;
		tmp->cap = n;
	}
	b = tmp->r;
	for (size_t w = SORT_RUN; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t i = lo, j = mid, o = lo;
			while (i < mid && j < hi)
				b[o++] = ref_cmp(&a[j], &a[i]) < 0 ? a[j++] : a[i++];
			while (i < mid)
				b[o++] = a[i++];
			while (j < hi)
				b[o++] = a[j++];
		}
		dnsnap_ref_t *t = a;
		a = b;
		b = t;
	}
	if (a != rs->r) { /* the result is in tmp's array: swap them */
		size_t tc = tmp->cap;
		tmp->r = rs->r;
		tmp->cap = rs->cap;
		rs->r = a;
		rs->cap = tc;
	}
	return DNSNAP_OK;
}

/* Drop a key's second ref (a shard copied in chunks while a removal moved
 * an entry may name it twice): the later Inception stays. */
static void ref_dedup(dnsnap_refs_t *rs)
{
	size_t o = 0;
	for (size_t i = 0; i < rs->n; i++) {
		if (o > 0 && ref_cmp(&rs->r[o - 1], &rs->r[i]) == 0) {
			dnsnap_refval_t x, y;
			dnsnap__ref_get(&rs->r[o - 1], &x);
			dnsnap__ref_get(&rs->r[i], &y);
			if ((int32_t)(ld32le(y.entry) - ld32le(x.entry)) > 0)
				rs->r[o - 1] = rs->r[i];
			continue;
		}
		rs->r[o++] = rs->r[i];
	}
	rs->n = o;
}

/* The shards' refs, collected and sorted by two threads (the writer and a
 * helper), each taking the next shard not yet taken. */
typedef struct collect {
	dnsnap_cache_t *c;
	uint32_t now;
	_Atomic unsigned next;
	_Atomic int helper_err;  /* a helper's error, if one had any */
	dnsnap_refs_t run[DNSNAP_SHARDS];
} collect_t;

static int collect_some(collect_t *cl)
{
	dnsnap_slots_t slots = { 0 };
	sort_tmp_t tmp = { 0 };
	int err = DNSNAP_OK;
	unsigned k;
	while (err == DNSNAP_OK && (k = atomic_fetch_add(&cl->next, 1)) < DNSNAP_SHARDS) {
		err = dnsnap__cache_refs(cl->c, k, cl->now, &slots, &cl->run[k]);
		if (err == DNSNAP_OK)
			err = ref_sort(&cl->run[k], &tmp);
		if (err == DNSNAP_OK)
			ref_dedup(&cl->run[k]);
	}
	dnsnap_free(slots.slot);
	dnsnap_free(tmp.r);
	return err;
}

/* A writer's own thread: it holds no lock of the cache (the copy takes none,
 * the pin's barrier and the unpin are the caller's), so it runs below the
 * threads that insert and answer: on a machine without a core to spare, a
 * snapshot takes longer rather than the cache's users wait for a core. */
#define WRITER_NICE 10
static void lower_priority(void)
{
	pid_t tid = gettid();
	errno = 0;
	int nice = getpriority(PRIO_PROCESS, (id_t)tid);
	if (errno == 0)
		setpriority(PRIO_PROCESS, (id_t)tid, nice + WRITER_NICE > 19 ? 19 : nice + WRITER_NICE);
}

static void *collect_helper(void *arg)
{
	collect_t *cl = arg;
	lower_priority();
	int err = collect_some(cl);
	if (err != DNSNAP_OK)
		atomic_store(&cl->helper_err, err);
	return NULL;
}

static void collect_free(collect_t *cl)
{
	for (unsigned k = 0; k < DNSNAP_SHARDS; k++)
		dnsnap_free(cl->run[k].r);
}

/* Collect every shard (the cache pinned) on two threads of the writer's
 * (lower_priority()); the caller waits. Without threads, the caller alone. */
static int collect_all(collect_t *cl)
{
	pthread_t th[2];
	int n = 0, err = DNSNAP_OK;
	while (n < 2 && pthread_create(&th[n], NULL, collect_helper, cl) == 0)
		n++;
	if (n == 0)
		err = collect_some(cl);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	if (err == DNSNAP_OK)
		err = atomic_load(&cl->helper_err);
	if (err != DNSNAP_OK)
		collect_free(cl);
	return err;
}

/* The sorted shards merged into one stream in key order: a binary min-heap
 * of the shards' next refs (the shards hold disjoint keys). */
typedef struct stream {
	const dnsnap_refs_t *run;
	size_t pos[DNSNAP_SHARDS];
	unsigned heap[DNSNAP_SHARDS];
	unsigned n;
} stream_t;

static const dnsnap_ref_t *head(const stream_t *s, unsigned k)
{
	return &s->run[k].r[s->pos[k]];
}

static void sift_down(stream_t *s, unsigned i)
{
	for (;;) {
		unsigned l = 2 * i + 1, m = i;
		if (l < s->n && ref_cmp(head(s, s->heap[l]), head(s, s->heap[m])) < 0)
			m = l;
		if (l + 1 < s->n && ref_cmp(head(s, s->heap[l + 1]), head(s, s->heap[m])) < 0)
			m = l + 1;
		if (m == i)
			return;
		unsigned t = s->heap[i];
		s->heap[i] = s->heap[m];
		s->heap[m] = t;
		i = m;
	}
}

static void stream_init(stream_t *s, const dnsnap_refs_t *run)
{
	memset(s, 0, sizeof *s);
	s->run = run;
	for (unsigned k = 0; k < DNSNAP_SHARDS; k++)
		if (run[k].n > 0)
			s->heap[s->n++] = k;
	for (unsigned i = s->n / 2; i-- > 0;)
		sift_down(s, i);
}

/* The next ref in key order, NULL at the end. */
static const dnsnap_ref_t *stream_peek(const stream_t *s)
{
	return s->n > 0 ? head(s, s->heap[0]) : NULL;
}

static void stream_next(stream_t *s)
{
	unsigned k = s->heap[0];
	if (++s->pos[k] == s->run[k].n) {
		s->heap[0] = s->heap[--s->n];
	} else if (s->pos[k] + 1 < s->run[k].n) {
		/* this shard's next entry is written about DNSNAP_SHARDS records
		 * from now: start loading it (key and entry: ~2-3 lines) */
		const char *e = s->run[k].r[s->pos[k] + 1].e;
		__builtin_prefetch(e);
		__builtin_prefetch(e + 64);
		__builtin_prefetch(e + 128);
	}
	if (s->n > 0)
		sift_down(s, 0);
}

/* The merge of the cache's entries (a stream in key order) with a base
 * snapshot's entries as the walk delivers them, in key order. Every entry
 * the merge keeps goes through emit(): the exclusion filter, then either the
 * selection pass of a bounded write (its value and cost recorded, nothing
 * written) or the file (a bounded write's second pass keeps only what the
 * selection chose). */
typedef struct merge {
	dnsnap_snapw_t *w;       /* NULL in a bounded write's selection pass */
	stream_t cs;
	uint32_t now;            /* live at now ... */
	uint32_t cutoff;         /* ... or expired after cutoff (now - stale window) */
	uint32_t rule_now;       /* the time rule's: the later of now and the clock */
	const dnsnap__merge_opts_t *o;
	dnsnap__life_t life;     /* the cache's policy: the time rule for base entries */
	dnsnap_snap_write_stats_t st;
	dnsnap__merge_counts_t mc;
	/* a bounded write: the selection's values, then its threshold */
	uint64_t *vals;
	size_t nvals, capvals;
	uint64_t cost;           /* of what the selection pass saw */
	uint64_t threshold;      /* the second pass keeps values above it ... */
	uint64_t ties;           /* ... and this many equal to it, the first in key order */
	uint64_t used;           /* the second pass: cost written so far */
	int bounded;
	int wrote;               /* emit() wrote the last entry it was given */
	dnsnap_diag_t *d;
	int err;
} merge_t;

/* What keeping an entry costs the memory cache (dnsnap__entry_cost()): the
 * bound of a bounded write is in these units, the cache's own. */
static uint64_t entry_cost(size_t key_len, size_t entry_len)
{
	return dnsnap__entry_cost(key_len, entry_len);
}

/* An entry's value to a bounded write: hits first, then time left. */
static uint64_t entry_value(const uint8_t *entry, uint32_t hits, uint32_t now)
{
	int32_t left = (int32_t)(ld32le(entry + 4) - now);
	return (uint64_t)hits << 32 | (uint32_t)(left > 0 ? left : 0);
}

static int emit(merge_t *m, const uint8_t *key, size_t key_len, const uint8_t *entry,
		size_t entry_len, const uint32_t *live_hits)
{
	const dnsnap__merge_opts_t *o = m->o;
	m->wrote = 0;
	if (o->exclude != NULL && o->exclude(o->exclude_arg, key, key_len, entry, entry_len)) {
		m->mc.excluded++;
		return DNSNAP_OK;
	}
	if (m->bounded) {
		uint32_t hits = live_hits != NULL ? *live_hits : ld32le(entry + 8);
		uint64_t v = entry_value(entry, hits, m->now);
		if (m->w == NULL) { /* the selection pass */
			if (m->nvals == m->capvals) {
				size_t nc = m->capvals ? m->capvals * 2 : 4096;
				uint64_t *nv = realloc(m->vals, nc * 2 * sizeof *nv);
				if (nv == NULL)
					return dnsnap__diag(m->d, DNSNAP_ENOMEM, 0, "out of memory");
				m->vals = nv;
				m->capvals = nc;
			}
			m->vals[2 * m->nvals] = v;
			m->vals[2 * m->nvals + 1] = entry_cost(key_len, entry_len);
			m->nvals++;
			return DNSNAP_OK;
		}
		uint64_t cost = entry_cost(key_len, entry_len);
		if (v < m->threshold || (v == m->threshold &&
					 (m->ties == 0 || m->used + cost > o->max_bytes))) {
			m->mc.over_bound++;
			return DNSNAP_OK;
		}
		if (v == m->threshold)
			m->ties--;
		m->used += cost;
	}
	if (!dnsnap__entry_live(entry, m->now))
		m->mc.stale++;
	m->wrote = 1;
	return dnsnap__snapw_put(m->w, key, key_len, entry, entry_len, live_hits, m->d);
}

static int merge_put_ref(merge_t *m, const dnsnap_refval_t *v)
{
	return emit(m, v->key, v->key_len, v->entry, v->entry_len, &v->hits);
}

static int merge_base(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		      size_t entry_len)
{
	merge_t *m = arg;
	int c = 1;
	const dnsnap_ref_t *r;
	dnsnap_refval_t v;
	while ((r = stream_peek(&m->cs)) != NULL) {
		dnsnap__ref_get(r, &v);
		if ((c = dnsnap_key_cmp(v.key, v.key_len, key, key_len)) >= 0)
			break;
		stream_next(&m->cs);
		if ((m->err = merge_put_ref(m, &v)) != DNSNAP_OK)
			return 1;
	}
	/* the scan hands over checked entries only: the damaged are counted;
	 * one the time rule refuses is left out as they are (the cache's entry
	 * for its key, if any, stands alone) */
	if (dnsnap__entry_when(entry, m->rule_now, &m->life) != DNSNAP__WHEN_OK) {
		m->mc.refused++;
		if (r != NULL && c == 0) {
			stream_next(&m->cs);
			m->err = merge_put_ref(m, &v);
		}
		return m->err != DNSNAP_OK;
	}
	if (r != NULL && c == 0) { /* both hold the key: the later Inception wins,
				    * but for the keep rule; the cache's entries are
				    * kept ones, a base entry past the cutoff never wins */
		stream_next(&m->cs);
		const uint8_t *ce = v.entry;
		int base_wins = 0;
		if (!dnsnap__entry_live(entry, m->cutoff))
			base_wins = 0;
		else if ((int32_t)(ld32le(entry) - ld32le(ce)) > 0)
			base_wins = !dnsnap__keep_older(ce, v.entry_len, entry, entry_len);
		else
			base_wins = dnsnap__keep_older(entry, entry_len, ce, v.entry_len);
		if (base_wins) {
			m->err = emit(m, key, key_len, entry, entry_len, NULL);
			m->st.from_base += m->wrote;
		} else {
			m->err = merge_put_ref(m, &v);
			m->st.replaced++;
		}
	} else if (!dnsnap__entry_live(entry, m->cutoff)) {
		m->st.base_expired++;
	} else {
		m->err = emit(m, key, key_len, entry, entry_len, NULL);
		m->st.from_base += m->wrote;
	}
	return m->err != DNSNAP_OK;
}

/* One pass of the merge over the collected refs and @p base: into the file
 * (m->w), or the selection of a bounded write (m->w NULL). */
static int merge_pass(merge_t *m, const collect_t *cl, dnsnap_snap_t *base, const char *path)
{
	int err = DNSNAP_OK;
	m->st = (dnsnap_snap_write_stats_t){ 0 };
	m->mc = (dnsnap__merge_counts_t){ 0 };
	m->used = 0;
	stream_init(&m->cs, cl->run);
	if (base != NULL) {
		dnsnap_scan_stats_t ss;
		dnsnap_diag_t sd;
		err = dnsnap_snap_scan(base, NULL, 0, merge_base, m, &ss, &sd);
		m->st.base_bad = ss.damaged;
		if (err == 1)
			err = m->err;
		else if (err == DNSNAP_ETRUNC || err == DNSNAP_ENOMEM || err == DNSNAP_EINVAL)
			err = dnsnap__diag(m->d, err, 0, "%s: reading the base snapshot: %s", path,
					   sd.msg);
		else
			err = DNSNAP_OK; /* damage: left out, counted in base_bad */
	}
	const dnsnap_ref_t *r;
	while (err == DNSNAP_OK && (r = stream_peek(&m->cs)) != NULL) {
		dnsnap_refval_t v;
		dnsnap__ref_get(r, &v);
		stream_next(&m->cs);
		err = merge_put_ref(m, &v);
	}
	return err;
}

/* merge_pass() on a thread of the writer's (lower_priority()), the caller
 * waiting; the caller's own thread when none can be made. */
typedef struct merge_job {
	merge_t *m;
	const collect_t *cl;
	dnsnap_snap_t *base;
	const char *path;
	int err;
} merge_job_t;

static void *merge_job(void *arg)
{
	merge_job_t *j = arg;
	lower_priority();
	j->err = merge_pass(j->m, j->cl, j->base, j->path);
	return NULL;
}

static int merge_low(merge_t *m, const collect_t *cl, dnsnap_snap_t *base, const char *path)
{
	merge_job_t j = { m, cl, base, path, DNSNAP_OK };
	pthread_t th;
	if (pthread_create(&th, NULL, merge_job, &j) != 0)
		return merge_pass(m, cl, base, path);
	pthread_join(th, NULL);
	return j.err;
}

static int val_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* A bounded write's choice: the most valuable entries the bound holds. Sets
 * the threshold and how many entries of exactly that value go in (the first
 * in key order). @return 1 when everything fits (no bound to apply) */
static int choose(merge_t *m)
{
	uint64_t total = 0;
	for (size_t i = 0; i < m->nvals; i++)
		total += m->vals[2 * i + 1];
	if (total <= m->o->max_bytes)
		return 1;
	qsort(m->vals, m->nvals, 2 * sizeof *m->vals, val_desc);
	uint64_t used = 0;
	size_t i = 0;
	while (i < m->nvals && used + m->vals[2 * i + 1] <= m->o->max_bytes)
		used += m->vals[2 * i++ + 1];
	if (i == 0) { /* not even the best one fits: keep none */
		m->threshold = UINT64_MAX;
		m->ties = 0;
		return 0;
	}
	m->threshold = m->vals[2 * (i - 1)];
	m->ties = 0;
	for (size_t j = 0; j < i; j++)
		m->ties += m->vals[2 * j] == m->threshold;
	return 0;
}

/* Write the cache's entries, merged with @p base's when not NULL. The cache
 * stays pinned from before its shards are read until the last of its
 * entries is in the file: removed entries are kept until then. */
int dnsnap__snap_merge(dnsnap_cache_t *c, dnsnap_snap_t *base, const char *path,
		       const dnsnap__merge_opts_t *o, dnsnap_snap_write_stats_t *stats,
		       dnsnap__merge_counts_t *counts, dnsnap_diag_t *d)
{
	if (c == NULL || path == NULL || o == NULL)
		return dnsnap__diag(d, DNSNAP_EINVAL, 0, "invalid argument");
	collect_t *cl = dnsnap_calloc(1, sizeof *cl);
	if (cl == NULL)
		return dnsnap__diag(d, DNSNAP_ENOMEM, 0, "%s: out of memory", path);
	cl->c = c;
	cl->now = o->now - o->stale_window; /* kept: what expired after that */
	dnsnap__cache_pin(c);
	int err = collect_all(cl);
	if (err != DNSNAP_OK) {
		dnsnap__cache_unpin(c);
		dnsnap_free(cl);
		return dnsnap__diag(d, err, 0, "%s: out of memory reading the cache", path);
	}
	dnsnap_cache_opts_t co;
	dnsnap_cache_opts_get(c, &co);
	merge_t m = { .now = o->now, .cutoff = cl->now, .o = o, .life = dnsnap__life_of(&co),
		      .rule_now = dnsnap__later(o->now, (uint32_t)time(NULL)), .d = d };
	if (o->max_bytes != 0) { /* choose first, then write what was chosen */
		m.bounded = 1;
		err = merge_low(&m, cl, base, path);
		if (err == DNSNAP_OK && choose(&m))
			m.bounded = 0; /* it all fits */
		free(m.vals);
		m.vals = NULL;
	}
	if (err == DNSNAP_OK)
		err = dnsnap_snapw_begin(path, &m.w, d);
	if (err == DNSNAP_OK) {
		err = merge_low(&m, cl, base, path);
		dnsnap__cache_unpin(c); /* the entries are in the file: the rest is the tree's */
		if (err == DNSNAP_OK)
			err = dnsnap_snapw_commit(m.w, &m.st, d);
		else
			dnsnap_snapw_abort(m.w);
	} else {
		dnsnap__cache_unpin(c);
	}
	if (err == DNSNAP_OK && stats != NULL) {
		*stats = m.st;
		stats->skipped = 0;
		stats->longest_pause_ms = 0;
		for (unsigned k = 0; k < DNSNAP_SHARDS; k++) {
			stats->skipped += cl->run[k].skipped;
			if (cl->run[k].held_ms > stats->longest_pause_ms)
				stats->longest_pause_ms = cl->run[k].held_ms;
		}
	}
	if (err == DNSNAP_OK && counts != NULL)
		*counts = m.mc;
	collect_free(cl);
	dnsnap_free(cl);
	return err;
}

int dnsnap_snap_merge(dnsnap_cache_t *c, dnsnap_snap_t *base, const char *path, uint32_t now,
		      dnsnap_snap_write_stats_t *stats, dnsnap_diag_t *d)
{
	dnsnap__merge_opts_t o = { .now = now };
	return dnsnap__snap_merge(c, base, path, &o, stats, NULL, d);
}

int dnsnap_snap_write(dnsnap_cache_t *c, const char *path, uint32_t now,
		      dnsnap_snap_write_stats_t *stats, dnsnap_diag_t *d)
{
	return dnsnap_snap_merge(c, NULL, path, now, stats, d);
}
