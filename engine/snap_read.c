/*
 * snap_read.c: the one reader of snapshot bytes (spec/FORMAT.md, "Snapshot"
 * and "Reading LMDB's pages"; the rule is in spec/DECISIONS.md, "One reader
 * for untrusted snapshot bytes").
 *
 * Every byte of a snapshot is untrusted, on every path: opening, point
 * lookups, answers, ordered scans (info, stats, dump, export, purge, merge)
 * and the deep check. None of them goes through liblmdb, which trusts its
 * pages: this file maps the file itself and walks LMDB's data format 1 with
 * every page number, offset and size checked against the page and the file,
 * in the host's byte order (LMDB writes its fields so). Every value carries
 * a Value_Check over its key and bytes, checked on every read; a value that
 * fails any check is damaged: a miss for a lookup, skipped and counted by a
 * scan, never handed out.
 *
 * Reads of the map run under a SIGBUS guard (sigsetjmp in the reading
 * thread, a process-wide handler that jumps back only for faults while this
 * file's reading code runs in that thread): a file truncated or overwritten in
 * place under a running process turns reads into misses, never a crash.
 * Values are copied out of the map inside the guard, and checked and used
 * from the copy, so bytes changing under a reader are never trusted twice.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL /* the lookup's three hashes of short keys and values: no calls */
#include <xxhash.h>

#include "../format/internal.h"
#include "alloc.h"
#include "dnsnap.h"
#include "record.h"
#include "snap_internal.h"
#include "snap_index.h"
#include "snap_page.h"
#include "tier.h"

/*
 * Readers inside the map, counted so that close waits for them: one counter
 * per thread slot, 128 bytes apart (never two in one cache line), so that
 * lookups on many cores do not all write one line. close() sums them.
 */
#define USER_SLOTS 64

typedef struct users {
	_Atomic long n;
	char pad[128 - sizeof(long)];
} users_t;

static _Atomic unsigned next_user_slot;
static _Thread_local unsigned tl_user_slot = UINT_MAX;

struct dnsnap_snap {
	snap_pages_t pg;         /* the file, read-only; npages: LMDB's last_pg + 1 */
	size_t map_len;          /* the file's size at open */
	uint64_t data_len;       /* LMDB's part: everything before the trailer */
	uint64_t file_hash;
	tree_t entries;
	snap_index_t idx;        /* the hash index, when the file has a good one */
	int fd;                  /* kept open: dnsnap_snap_changed() compares */
	struct stat st;
	users_t users[USER_SLOTS]; /* readers inside the map, by thread */
	_Atomic uint64_t bad;    /* damaged values met by lookups */
	_Atomic uint64_t faults; /* reads that faulted: the file changed in place */
	dnsnap_snap_info_t info;
	size_t meta_off;         /* the meta record's first byte in the file */
	char path[];
};

static inline _Atomic long *user_slot(dnsnap_snap_t *s)
{
	if (tl_user_slot == UINT_MAX)
		tl_user_slot = atomic_fetch_add_explicit(&next_user_slot, 1, memory_order_relaxed) %
			       USER_SLOTS;
	return &s->users[tl_user_slot].n;
}

static inline void users_enter(dnsnap_snap_t *s)
{
	atomic_fetch_add_explicit(user_slot(s), 1, memory_order_acquire);
}

static inline void users_leave(dnsnap_snap_t *s)
{
	atomic_fetch_sub_explicit(user_slot(s), 1, memory_order_release);
}

static long users_now(dnsnap_snap_t *s)
{
	long n = 0;
	for (unsigned i = 0; i < USER_SLOTS; i++)
		n += atomic_load(&s->users[i].n);
	return n;
}

/* ----------------------------------------------------------------- guard */

typedef struct guard {
	sigjmp_buf jb;
	struct guard *prev;
} guard_t;

static _Thread_local guard_t *tl_guard;
static struct sigaction old_bus;

/*
 * A guard is armed only while this file's code reads a map (a scan disarms
 * it around the caller's function), and that code touches nothing else a
 * SIGBUS can come from: so a SIGBUS while armed is a map read. The fault
 * address is not compared with the map: qemu-user reports it wrongly, and
 * the armed region says enough.
 */
static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	guard_t *g = tl_guard;
	if (g != NULL) {
		tl_guard = g->prev;
		siglongjmp(g->jb, 1);
	}
	/* not a snapshot read: what was there before us */
	if ((old_bus.sa_flags & SA_SIGINFO) && old_bus.sa_sigaction != NULL) {
		old_bus.sa_sigaction(sig, si, uc);
	} else if (old_bus.sa_handler != SIG_DFL && old_bus.sa_handler != SIG_IGN) {
		old_bus.sa_handler(sig);
	} else {
		/* the default: die of this signal once the access is retried */
		struct sigaction dfl = { .sa_handler = SIG_DFL };
		sigaction(sig, &dfl, NULL);
	}
}

/*
 * Put the handler in place, at every open: a program (or a test framework)
 * that set its own SIGBUS handler since the last open would otherwise have
 * turned the guard off. The handler found is kept and called for faults
 * that are not snapshot reads. A program that sets a handler while a
 * snapshot is open must chain to the one it replaces (the header says so).
 */
static void install_sigbus(void)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	/* SA_NODEFER: siglongjmp(jb, 0 mask) leaves the mask as it was */
	struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO | SA_NODEFER },
			 cur;
	sigemptyset(&sa.sa_mask);
	pthread_mutex_lock(&lock);
	if (sigaction(SIGBUS, NULL, &cur) == 0 &&
	    !((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_sigbus)) {
		old_bus = cur;
		sigaction(SIGBUS, &sa, NULL);
	}
	pthread_mutex_unlock(&lock);
}

/*
 * GUARDED(s, call): run call (an int expression reading s's map) so that a
 * fault in the map returns DNSNAP_ETRUNC instead of killing the process,
 * counted in s->faults. Nothing the call changed in registers survives a
 * fault: state goes through memory (the call's pointer arguments).
 */
static int guard_fault(dnsnap_snap_t *s)
{
	atomic_fetch_add_explicit(&s->faults, 1, memory_order_relaxed);
	return DNSNAP_ETRUNC;
}

#define GUARDED(s, call)                                                        \
	__extension__({                                                         \
		guard_t g_;                                                     \
		int r_;                                                         \
		g_.prev = tl_guard;                                             \
		if (sigsetjmp(g_.jb, 0) == 0) {                                 \
			tl_guard = &g_;                                         \
			r_ = (call);                                            \
			tl_guard = g_.prev;                                     \
		} else {                                                        \
			r_ = guard_fault(s);                                    \
		}                                                               \
		r_;                                                             \
	})

/* ----------------------------------------------------------------- values */

/*
 * A value out of the map into @p buf (the entry, without its Value_Check),
 * and the stored check into @p check: run under the guard. The check is
 * compared by the caller, on the copy.
 */
static int value_copy(const uint8_t *val, size_t len, uint8_t *buf, size_t cap, size_t *out_len,
		      uint32_t *check)
{
	if (len < VALUE_CHECK_LEN || len - VALUE_CHECK_LEN > cap)
		return DNSNAP_ECHECKSUM;
	*out_len = len - VALUE_CHECK_LEN;
	memcpy(buf, val, *out_len);
	*check = ld32le(val + *out_len);
	return DNSNAP_OK;
}

typedef struct fetch {
	const uint8_t *key;
	size_t key_len;
	uint8_t *buf;
	size_t cap, len;
	uint32_t check;
} fetch_t;

static __attribute__((noinline)) int fetch_in_map(const dnsnap_snap_t *s, fetch_t *f)
{
	const uint8_t *val;
	size_t len;
	int err = dnsnap__index_get(&s->idx, &s->pg, f->key, f->key_len, &val, &len);
	if (err == INDEX_FALLBACK)
		err = tree_get(&s->pg, &s->entries, f->key, f->key_len, 0, &val, &len);
	if (err == DNSNAP_OK)
		err = value_copy(val, len, f->buf, f->cap, &f->len, &f->check);
	return err;
}

/* dnsnap_snap_get(), the entry also validated when @p validate. */
static int snap_get(dnsnap_snap_t *s, const uint8_t *key, size_t key_len, uint8_t *buf,
		    size_t cap, size_t *len, int validate)
{
	if (s == NULL || key == NULL || buf == NULL || len == NULL || key_len == 0 ||
	    key_len > DNSNAP_KEY_MAX)
		return DNSNAP_EINVAL;
	if (atomic_load_explicit(&s->faults, memory_order_relaxed) != 0)
		return DNSNAP_ENOTFOUND; /* the file changed in place: not read again */
	users_enter(s);
	fetch_t f = { .key = key, .key_len = key_len, .buf = buf, .cap = cap };
	int err = GUARDED(s, fetch_in_map(s, &f));
	users_leave(s);
	if (err == DNSNAP_OK && (value_check(key, key_len, buf, f.len) != f.check ||
				 (validate && dnsnap_entry_validate(buf, f.len, NULL) != DNSNAP_OK)))
		err = DNSNAP_ECHECKSUM;
	if (err == DNSNAP_OK) {
		*len = f.len;
		return DNSNAP_OK;
	}
	if (err == DNSNAP_ECHECKSUM)
		atomic_fetch_add_explicit(&s->bad, 1, memory_order_relaxed);
	return err == DNSNAP_ENOTFOUND || err == DNSNAP_ECHECKSUM || err == DNSNAP_ETRUNC
		       ? DNSNAP_ENOTFOUND : err; /* damage and faults are misses */
}

int dnsnap_snap_get(dnsnap_snap_t *s, const uint8_t *key, size_t key_len, uint8_t *buf,
		    size_t cap, size_t *len)
{
	return snap_get(s, key, key_len, buf, cap, len, 1);
}

/* The snapshot as a lower tier (dnsnap_tier_ops_t.get's signature), for
 * answers: the Value_Check, over every byte, catches damage; the answer
 * builder checks what it reads as it reads it, so the validator's walk is
 * not made a second time (spec/DECISIONS.md, "Answers from the map"). */
static int snap_tier_get(void *tier, const uint8_t *key, size_t key_len, uint8_t *buf,
			 size_t cap, size_t *len)
{
	return snap_get(tier, key, key_len, buf, cap, len, 0);
}

const dnsnap_tier_ops_t dnsnap_snap_tier = { "map", snap_tier_get };

void dnsnap_cache_attach(dnsnap_cache_t *c, dnsnap_snap_t *s, dnsnap_snap_t **old)
{
	void *prev;
	dnsnap_cache_set_tier(c, s != NULL ? &dnsnap_snap_tier : NULL, s, &prev);
	if (old != NULL)
		*old = prev;
}

int dnsnap_snap_answer(dnsnap_snap_t *s, const dnsnap_query_t *q, uint32_t now,
		       uint16_t max_size, uint8_t *out, size_t cap, size_t *out_len)
{
	if (s == NULL || q == NULL || out == NULL || out_len == NULL || q->key_len == 0 ||
	    q->key_len > DNSNAP_KEY_MAX)
		return DNSNAP_EINVAL;
	/* as a cache with the default options would: see dnsnap_cache_lookup() */
	dnsnap_answer_opts_t ao = {
		.now = now, .max_size = max_size, .our_udp_size = DNSNAP_EDNS_SIZE,
		.max_ttl = DNSNAP__MAX_TTL_DEFAULT,
	};
	uint8_t key0[DNSNAP_KEY_MAX];
	size_t len0 = dnsnap__key_cd0(q, key0);
	enum dnsnap__expiry st;
	/* the time rule under the default policy; a refusal counts as damage */
	dnsnap__life_t life = DNSNAP__LIFE_DEFAULT;
	int err = dnsnap__tier_answer(&dnsnap_snap_tier, s, q->key, q->key_len, q, &ao, 0, 0,
				      &life, &s->bad, out, cap, out_len, &st);
	if (err == DNSNAP_ENOTFOUND && len0 != 0) /* CD=1 from the CD=0 entry */
		err = dnsnap__tier_answer(&dnsnap_snap_tier, s, key0, len0, q, &ao, 0, 0, &life,
					  &s->bad, out, cap, out_len, &st);
	return err;
}

/* ------------------------------------------------------------------ scans */

/*
 * An ordered walk of the entries tree, recursive (depth <= MAX_DEPTH, as the
 * tree record says, so no loop can go on): a damaged page loses its subtree,
 * counted; a damaged value is skipped, counted; everything else is copied,
 * checked and handed to fn in key order.
 */
typedef struct scan {
	dnsnap_snap_t *s;
	const uint8_t *prefix;
	size_t prefix_len;
	int (*fn)(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		  size_t entry_len);
	void *arg;
	dnsnap_scan_stats_t st;
	int ret;                 /* fn's value when it stopped the walk */
	int seeking;             /* still on the path to the prefix's first key */
	uint64_t visits;         /* pages entered: never more than the file has */
	size_t key_len, prev_len;
	uint8_t *key, *prev, *entry;
	dnsnap_diag_t first;     /* the first damage met, for messages */
	int first_err;
} scan_t;

static void scan_damage(scan_t *sc, int err, uint64_t off, const char *what)
{
	if (sc->first_err == DNSNAP_OK) {
		sc->first_err = err;
		dnsnap__diag(&sc->first, err, (size_t)off, "%s: entry %llu (at 0x%llx): %s",
			     sc->s->path,
			     (unsigned long long)(sc->st.entries + sc->st.damaged),
			     (unsigned long long)off, what);
	}
}

/* The key range a page's keys must lie in, from the branch keys above it:
 * [lo, hi), NULL for no bound. A child page number damaged into another
 * good page's shows as keys outside the range: that page's entries are
 * skipped there, and the walk goes on in order. */
typedef struct range {
	const uint8_t *lo, *hi;
	size_t lo_len, hi_len;
} range_t;

static int in_range(const range_t *r, const uint8_t *k, size_t kl)
{
	return (r->lo == NULL || dnsnap_key_cmp(r->lo, r->lo_len, k, kl) <= 0) &&
	       (r->hi == NULL || dnsnap_key_cmp(k, kl, r->hi, r->hi_len) < 0);
}

/* One leaf node: 1 stops the walk (fn's wish, or past the prefix). */
static int scan_value(scan_t *sc, const uint8_t *p, unsigned i, const uint8_t *node,
		      const uint8_t *k, size_t kl, const range_t *r)
{
	dnsnap_snap_t *s = sc->s;
	if (sc->prefix_len &&
	    (kl < sc->prefix_len || memcmp(k, sc->prefix, sc->prefix_len) != 0)) {
		if (dnsnap_key_cmp(k, kl, sc->prefix, sc->prefix_len) > 0)
			return 1; /* past the range */
		return 0;
	}
	const uint8_t *val;
	size_t vlen, elen;
	uint32_t check;
	unsigned at;
	uint64_t off = (uint64_t)(node - s->pg.map);
	if (!leaf_value(&s->pg, p, node, kl, 0, &val, &vlen) ||
	    value_copy(val, vlen, sc->entry, DNSNAP_ENTRY_MAX, &elen, &check) != DNSNAP_OK) {
		sc->st.damaged++;
		scan_damage(sc, DNSNAP_ECHECKSUM, off, "the value lies outside its pages");
		return 0;
	}
	memcpy(sc->key, k, kl);
	sc->key_len = kl;
	int e = DNSNAP_OK;
	const char *what = NULL;
	dnsnap_diag_t ed;
	dnsnap_key_t kd;
	if (value_check(sc->key, kl, sc->entry, elen) != check)
		e = DNSNAP_ECHECKSUM, what = "Value_Check mismatch";
	else if ((e = dnsnap_key_decode(sc->key, kl, &kd, &ed)) != DNSNAP_OK)
		what = ed.msg;
	else if ((e = dnsnap_entry_validate(sc->entry, elen, &ed)) != DNSNAP_OK)
		what = ed.msg;
	else if (!in_range(r, sc->key, kl) ||
		 (sc->prev_len && dnsnap_key_cmp(sc->prev, sc->prev_len, sc->key, kl) >= 0) ||
		 !leaf_seek(&s->pg, p, k, kl, &at) || at != i)
		e = DNSNAP_EFIELD, what = "out of key order"; /* or a lookup would miss it */
	if (e != DNSNAP_OK) {
		sc->st.damaged++;
		scan_damage(sc, e, off, what);
		return 0;
	}
	sc->st.entries++;
	uint8_t *t = sc->prev; /* this key becomes the previous one */
	sc->prev = sc->key;
	sc->prev_len = kl;
	sc->key = t;
	guard_t *armed = tl_guard; /* the caller's code runs unguarded */
	tl_guard = NULL;
	int stop = sc->fn(sc->arg, sc->prev, kl, sc->entry, elen);
	tl_guard = armed;
	if (stop != 0) {
		sc->ret = stop;
		return 1;
	}
	return 0;
}

/*
 * A branch page's keys (nodes 1..n-1) must increase strictly and lie in the
 * range its parent gives it: then a lookup's binary search reaches exactly
 * the child whose range holds the key, so what a scan hands over a lookup
 * finds too, and the other way round.
 */
static int branch_keys_ok(const dnsnap_snap_t *s, const uint8_t *p, const range_t *r)
{
	const uint8_t *prev = r->lo, *node, *k;
	size_t prev_len = r->lo_len, kl;
	for (unsigned i = 1, n = nkeys(p); i < n; i++) {
		if (!node_at(&s->pg, p, i, &node, &k, &kl) ||
		    (prev != NULL && dnsnap_key_cmp(prev, prev_len, k, kl) >= 0 &&
		     !(i == 1 && dnsnap_key_cmp(prev, prev_len, k, kl) == 0)))
			return 0;
		prev = k, prev_len = kl;
	}
	return prev == NULL || r->hi == NULL || dnsnap_key_cmp(prev, prev_len, r->hi, r->hi_len) < 0;
}

/* Page @p pgno at @p level, named by the branch node at file offset @p from
 * (a page number past the file is reported there). */
static int scan_page(scan_t *sc, uint64_t pgno, unsigned level, const range_t *r, size_t from)
{
	dnsnap_snap_t *s = sc->s;
	int leaf = level + 1 == s->entries.depth;
	size_t at = pgno < s->pg.npages ? (size_t)(pgno * s->pg.psize) : from;
	if (++sc->visits > s->pg.npages) { /* a page reached twice: damaged links, a loop */
		sc->st.bad_pages++;
		scan_damage(sc, DNSNAP_ECHECKSUM, at, "pages linked more than once");
		return 1;
	}
	const uint8_t *p = page_at(&s->pg, pgno, leaf ? P_LEAF : P_BRANCH);
	if (p == NULL) {
		sc->st.bad_pages++;
		scan_damage(sc, DNSNAP_ECHECKSUM, at, leaf ? "a damaged leaf page"
							    : "a damaged branch page");
		return 0;
	}
	unsigned i = 0, n = nkeys(p);
	if (!leaf && !branch_keys_ok(s, p, r)) {
		/* lookups would stray here: the subtree is lost, counted */
		sc->st.bad_pages++;
		scan_damage(sc, DNSNAP_ECHECKSUM, pgno * s->pg.psize, "a branch page's keys are out "
			    "of order");
		return 0;
	}
	if (sc->seeking && sc->prefix_len &&
	    !(leaf ? leaf_seek(&s->pg, p, sc->prefix, sc->prefix_len, &i)
		   : branch_pick(&s->pg, p, sc->prefix, sc->prefix_len, &i)))
		i = 0; /* a damaged node on the search path: walk the page whole */
	if (leaf)
		sc->seeking = 0;
	for (; i < n; i++) {
		const uint8_t *node, *k, *next_node, *nk;
		size_t kl, nkl;
		if (!node_at(&s->pg, p, i, &node, &k, &kl)) {
			if (leaf)
				sc->st.damaged++;
			else
				sc->st.bad_pages++;
			scan_damage(sc, DNSNAP_ECHECKSUM, pgno * s->pg.psize, "a damaged node");
			continue;
		}
		if (leaf) {
			if (scan_value(sc, p, i, node, k, kl, r))
				return 1;
			continue;
		}
		/* child i holds the keys from branch key i (node 0's is the
		 * parent's bound) up to branch key i + 1 */
		range_t cr = *r;
		if (i > 0)
			cr.lo = k, cr.lo_len = kl;
		if (i + 1 < n) {
			if (!node_at(&s->pg, p, i + 1, &next_node, &nk, &nkl))
				nk = NULL, nkl = 0; /* reported when its turn comes */
			cr.hi = nk, cr.hi_len = nkl;
		}
		if (scan_page(sc, child_of(node), level + 1, &cr, (size_t)(node - s->pg.map)))
			return 1;
	}
	return 0;
}

static __attribute__((noinline)) int scan_in_map(scan_t *sc)
{
	range_t all = { 0 };
	if (sc->s->entries.root != P_INVALID)
		scan_page(sc, sc->s->entries.root, 0, &all, 0); /* opening checked the root */
	return DNSNAP_OK;
}

int dnsnap_snap_scan(dnsnap_snap_t *s, const uint8_t *prefix, size_t prefix_len,
		     int (*fn)(void *arg, const uint8_t *key, size_t key_len,
			       const uint8_t *entry, size_t entry_len),
		     void *arg, dnsnap_scan_stats_t *stats, dnsnap_diag_t *d)
{
	if (s == NULL || fn == NULL || (prefix_len > 0 && prefix == NULL) ||
	    prefix_len > DNSNAP_KEY_MAX)
		return dnsnap__diag(d, DNSNAP_EINVAL, 0, "invalid argument");
	scan_t sc = { .s = s, .prefix = prefix, .prefix_len = prefix_len, .fn = fn, .arg = arg,
		      .seeking = 1 };
	uint8_t *buf = dnsnap_malloc(2 * DNSNAP_KEY_MAX + DNSNAP_ENTRY_MAX);
	if (buf == NULL)
		return dnsnap__diag(d, DNSNAP_ENOMEM, 0, "%s: out of memory", s->path);
	sc.key = buf;
	sc.prev = buf + DNSNAP_KEY_MAX;
	sc.entry = buf + 2 * DNSNAP_KEY_MAX;
	int err = DNSNAP_OK;
	if (atomic_load_explicit(&s->faults, memory_order_relaxed) != 0)
		err = DNSNAP_ETRUNC;
	else {
		users_enter(s);
		err = GUARDED(s, scan_in_map(&sc));
		users_leave(s);
	}
	dnsnap_free(buf);
	/* a whole walk also accounts for what damaged pages hid */
	uint64_t seen = sc.st.entries + sc.st.damaged;
	if (err == DNSNAP_OK && sc.ret == 0 && prefix_len == 0 && seen != s->info.entry_count) {
		if (seen < s->info.entry_count)
			sc.st.damaged += s->info.entry_count - seen;
		scan_damage(&sc, DNSNAP_ECHECKSUM, s->meta_off + 20, "the walk and the meta "
			    "record's Entry_Count disagree");
	}
	if (stats != NULL)
		*stats = sc.st;
	if (err == DNSNAP_ETRUNC)
		return dnsnap__diag(d, err, 0, "%s: the file changed in place while being read "
				    "(truncated or overwritten): publish snapshots by rename", s->path);
	if (sc.ret != 0)
		return sc.ret;
	if (sc.first_err != DNSNAP_OK) {
		if (d != NULL)
			*d = sc.first;
		return sc.first_err;
	}
	return DNSNAP_OK;
}

int dnsnap_snap_foreach(dnsnap_snap_t *s,
			int (*fn)(void *arg, const uint8_t *key, size_t key_len,
				  const uint8_t *entry, size_t entry_len),
			void *arg)
{
	return dnsnap_snap_scan(s, NULL, 0, fn, arg, NULL, NULL);
}

int dnsnap_snap_foreach_prefix(dnsnap_snap_t *s, const uint8_t *prefix, size_t prefix_len,
			       int (*fn)(void *arg, const uint8_t *key, size_t key_len,
					 const uint8_t *entry, size_t entry_len),
			       void *arg)
{
	return dnsnap_snap_scan(s, prefix, prefix_len, fn, arg, NULL, NULL);
}

/* ------------------------------------------------------------------ open */

/* The meta record (spec/FORMAT.md, "Meta record"), from its checked copy @p m;
 * @p at is where the record starts in the file: offsets in diagnostics are
 * file offsets, as for every snapshot read (spec/FORMAT.md, "Reporting
 * damage"). */
static int read_meta(dnsnap_snap_t *s, const uint8_t *m, size_t len, uint32_t check, size_t at,
		     dnsnap_diag_t *d)
{
	if (len < 8 || memcmp(m, SNAP_MAGIC, 4) != 0)
		return dnsnap__diag(d, DNSNAP_EMAGIC, at, "%s: not a dnsnap snapshot (meta record "
				    "at 0x%zx)", s->path, at);
	unsigned major = ld16le(m + 4), minor = ld16le(m + 6);
	if (major != DNSNAP_SNAP_MAJOR)
		return dnsnap__diag(d, DNSNAP_EVERSION, at + 4,
				    "%s: snapshot format %u.%u, this dnsnap reads %d.x%s", s->path,
				    major, minor, DNSNAP_SNAP_MAJOR,
				    major < DNSNAP_SNAP_MAJOR
					    ? " (export it with the dnsnap that wrote it, then "
					      "import the stream with this one)"
					    : "");
	if (value_check((const uint8_t *)META_KEY, 4, m, len) != check)
		return dnsnap__diag(d, DNSNAP_ECHECKSUM, at + len, "%s: the meta record is damaged "
				    "(Value_Check mismatch, at 0x%zx)", s->path, at + len);
	if (len < 39)
		return dnsnap__diag(d, DNSNAP_ETRUNC, at + len, "%s: the meta record is cut (%zu "
				    "bytes)", s->path, len);
	unsigned hsize = ld16le(m + 8), wl = m[38];
	if (hsize < 39 + wl || hsize > len)
		return dnsnap__diag(d, DNSNAP_ETRUNC, at + 8, "%s: meta record Header_Size %u, its "
				    "fields need %u of %zu bytes", s->path, hsize, 39 + wl, len);
	if (ld16le(m + 10) != 0)
		return dnsnap__diag(d, DNSNAP_ERESERVED, at + 10, "%s: reserved meta flags",
				    s->path);
	if (m[28] != 1)
		return dnsnap__diag(d, DNSNAP_EFIELD, at + 28, "%s: unknown Digest_Type %u",
				    s->path, m[28]);
	if (m[29] != 8)
		return dnsnap__diag(d, DNSNAP_EFIELD, at + 29, "%s: Digest_Len %u, XXH3-64 has 8",
				    s->path, m[29]);
	for (size_t o = hsize; o < len;) { /* meta TLVs: none known, each must be whole */
		if (len - o < 3 || len - o - 3 < ld16le(m + o + 1))
			return dnsnap__diag(d, DNSNAP_ETRUNC, at + o, "%s: the meta TLV at 0x%zx "
					    "is cut", s->path, at + o);
		o += 3 + (size_t)ld16le(m + o + 1);
	}
	s->meta_off = at;
	s->info.major = major;
	s->info.minor = minor;
	s->info.created_at = ld64le(m + 12);
	s->info.entry_count = ld64le(m + 20);
	s->info.digest = ld64le(m + 30);
	memcpy(s->info.writer, m + 39, wl < 127 ? wl : 127);
	s->info.writer[wl < 127 ? wl : 127] = 0;
	return DNSNAP_OK;
}

/* A named database's record (an MDB_db in the main tree) into @p t. */
static int read_db(dnsnap_snap_t *s, const uint8_t *db, const char *name, tree_t *t,
		   dnsnap_diag_t *d)
{
	unsigned flags = ld16h(db + 4);
	if (flags != 0)
		return dnsnap__diag(d, DNSNAP_EFIELD, (size_t)(db - s->pg.map),
				    "%s: the %s database has LMDB flags 0x%x (%s): dnsnap never "
				    "writes those", s->path, name, flags,
				    flags & 0x04 ? "duplicate-sorted data" : "not plain keys");
	t->depth = ld16h(db + 6);
	t->entries = ld64h(db + 32);
	t->root = ld64h(db + 40);
	if (t->root == P_INVALID ? t->depth != 0
				 : (t->depth == 0 || t->depth > MAX_DEPTH || t->root >= s->pg.npages))
		return dnsnap__diag(d, DNSNAP_ECHECKSUM, (size_t)(db - s->pg.map),
				    "%s: the %s database's root (page %llu, depth %u) is damaged",
				    s->path, name, (unsigned long long)t->root, t->depth);
	return DNSNAP_OK;
}

/* Opening, steps 5 and 6 (the meta database's records): the meta record and
 * the index record's header; @p mv and @p ev are the meta and entries
 * databases' records in the map. */
static int open_meta(dnsnap_snap_t *s, const tree_t *meta_db, const uint8_t *mv,
		     const uint8_t *ev, dnsnap_diag_t *d)
{
	const uint8_t *m = s->pg.map;
	size_t ps = s->pg.psize;
	const tree_t meta = *meta_db;
	int err;
	/* 5. the meta record; the meta database's root page names where it
	 * should be, or its database record when it is empty */
	size_t meta_at = meta.root == P_INVALID ? (size_t)(mv - m) : (size_t)(meta.root * ps);
	const uint8_t *rec;
	size_t rl;
	err = tree_get(&s->pg, &meta, (const uint8_t *)META_KEY, 4, 0, &rec, &rl);
	if (err != DNSNAP_OK || rl < VALUE_CHECK_LEN || meta.entries < 1) /* 2.1: and others */
		return dnsnap__diag(d, err == DNSNAP_ENOTFOUND ? DNSNAP_EMAGIC : DNSNAP_ECHECKSUM,
				    meta_at, "%s: %s (at 0x%zx)", s->path, err == DNSNAP_ENOTFOUND
				    ? "no meta record: not a dnsnap snapshot"
				    : "the meta database is damaged", meta_at);
	uint8_t copy[65536];
	if (rl - VALUE_CHECK_LEN > sizeof copy)
		return dnsnap__diag(d, DNSNAP_ETOOBIG, (size_t)(rec - m), "%s: a meta record of %zu "
				    "bytes (at 0x%zx), over the %zu this dnsnap reads", s->path,
				    rl - VALUE_CHECK_LEN, (size_t)(rec - m), sizeof copy);
	memcpy(copy, rec, rl - VALUE_CHECK_LEN);
	err = read_meta(s, copy, rl - VALUE_CHECK_LEN, ld32le(rec + rl - VALUE_CHECK_LEN),
			(size_t)(rec - m), d);
	if (err == DNSNAP_OK && s->entries.entries != s->info.entry_count)
		err = dnsnap__diag(d, DNSNAP_ECHECKSUM, (size_t)(ev - m + 32), "%s: LMDB counts "
				   "%llu entr%s (at 0x%zx), the meta record %llu", s->path,
				   (unsigned long long)s->entries.entries,
				   s->entries.entries == 1 ? "y" : "ies", (size_t)(ev - m + 32),
				   (unsigned long long)s->info.entry_count);
	/* 6. the index record (2.1), optional: its header only, O(1); a bad one is
	 * ignored here (the B-tree serves) and reported by the deep check */
	const uint8_t *iv;
	size_t il;
	int e3 = err == DNSNAP_OK ? tree_get(&s->pg, &meta, (const uint8_t *)INDEX_KEY,
					     sizeof INDEX_KEY - 1, 0, &iv, &il) : DNSNAP_ENOTFOUND;
	if (e3 == DNSNAP_OK) {
		dnsnap__index_open(&s->idx, &s->pg, iv, il, &s->entries);
	} else if (e3 != DNSNAP_ENOTFOUND) {
		s->idx.val = s->pg.map; /* there, but its node is damaged */
		s->idx.why = "its node in the meta database is damaged";
		s->idx.why_off = meta_at;
	}
	return err;
}

/* The opening sequence, under the guard (spec/FORMAT.md, "Opening"). */
typedef struct opening {
	dnsnap_diag_t *d;
	int no_trailer;
} opening_t;

/* What a file without LMDB's magic is, when it is one of the files a user
 * may give by mistake (those other commands read) */
static const char *not_lmdb(const uint8_t *m, size_t size)
{
	dnsnap_file_kind_t k = dnsnap_file_kind(m, size);
	return k == DNSNAP_FILE_OTHER ? "no LMDB magic" : dnsnap_file_kind_text(k);
}

static __attribute__((noinline)) int open_in_map(dnsnap_snap_t *s, opening_t *op)
{
	dnsnap_diag_t *d = op->d;
	const uint8_t *m = s->pg.map;
	size_t size = s->map_len;
	/* 1. LMDB's first meta page: magic, data format, page size */
	if (size < PAGEHDR + META_TXNID + 8 || ld32h(m + PAGEHDR) != LMDB_MAGIC) {
		if (size >= PAGEHDR + 4 && ld32h(m + PAGEHDR) == __builtin_bswap32(LMDB_MAGIC))
			return dnsnap__diag(d, DNSNAP_EMAGIC, PAGEHDR, "%s: an LMDB file of a host "
					    "with the other byte order: snapshots stay on hosts "
					    "like the writer's; copy with export and import", s->path);
		return dnsnap__diag(d, DNSNAP_EMAGIC, PAGEHDR, "%s: not a snapshot (%s)", s->path,
				    not_lmdb(m, size));
	}
	if (ld32h(m + PAGEHDR + 4) != LMDB_DATA_VERSION)
		return dnsnap__diag(d, DNSNAP_EVERSION, PAGEHDR + 4, "%s: LMDB data format %u, this "
				    "dnsnap reads %u", s->path, ld32h(m + PAGEHDR + 4),
				    LMDB_DATA_VERSION);
	size_t ps = ld32h(m + META_DBS);
	if (ps < 512 || ps > 65536 || (ps & (ps - 1)) != 0)
		return dnsnap__diag(d, DNSNAP_EFIELD, META_DBS, "%s: LMDB page size %zu", s->path,
				    ps);
	s->pg.psize = ps;
	/* 2. the trailer */
	const uint8_t *t = m + size - TRAILER_LEN;
	if (size < 2 * ps + TRAILER_LEN || memcmp(t, TRAILER_MAGIC, 4) != 0) {
		op->no_trailer = 1; /* cut, or plain LMDB: the meta database tells */
		s->data_len = size / ps * ps;
	} else if (ld32le(t + 4) != 0) {
		return dnsnap__diag(d, DNSNAP_ERESERVED, size - TRAILER_LEN + 4,
				    "%s: the trailer's reserved field is not zero", s->path);
	} else if (ld64le(t + 8) != size - TRAILER_LEN || ld64le(t + 8) % ps != 0) {
		return dnsnap__diag(d, DNSNAP_ETRUNC, size - TRAILER_LEN + 8,
				    "%s: %zu bytes, the trailer says %llu: the file was cut or "
				    "extended", s->path, size,
				    (unsigned long long)(ld64le(t + 8) + TRAILER_LEN));
	} else {
		s->data_len = ld64le(t + 8);
		s->file_hash = ld64le(t + 16);
	}
	/* 3. the meta page LMDB would pick: both well-formed, the larger txnid */
	if (s->data_len < 2 * ps)
		return dnsnap__diag(d, DNSNAP_ETRUNC, size, "%s: truncated: %zu bytes, less than "
				    "LMDB's two meta pages (%zu)", s->path, size, 2 * ps);
	const uint8_t *m1 = m + ps;
	for (int i = 0; i < 2; i++) {
		const uint8_t *mp = i ? m1 : m;
		if ((ld16h(mp + 10) & ~(unsigned)P_DIRTY) != P_META || ld32h(mp + PAGEHDR) != LMDB_MAGIC ||
		    ld32h(mp + PAGEHDR + 4) != LMDB_DATA_VERSION)
			return dnsnap__diag(d, DNSNAP_ECHECKSUM, (size_t)i * ps,
					    "%s: LMDB meta page %d is damaged", s->path, i);
	}
	const uint8_t *mp = ld64h(m1 + META_TXNID) > ld64h(m + META_TXNID) ? m1 : m;
	size_t mp_off = (size_t)(mp - m);
	uint64_t last = ld64h(mp + META_LAST_PG);
	if (last >= s->data_len / ps && op->no_trailer)
		return dnsnap__diag(d, DNSNAP_ETRUNC, mp_off + META_LAST_PG,
				    "%s: truncated: %zu bytes, its pages need %llu", s->path, size,
				    (unsigned long long)((last + 1) * ps));
	if (last >= s->data_len / ps) /* the trailer says the file is whole */
		return dnsnap__diag(d, DNSNAP_ETRUNC, mp_off + META_LAST_PG,
				    "%s: LMDB meta page %d is damaged: its last page %llu lies "
				    "beyond the file's %llu bytes of pages", s->path,
				    mp == m ? 0 : 1,
				    (unsigned long long)last, (unsigned long long)s->data_len);
	s->pg.npages = last + 1;
	/* 4. the main database: exactly "entries" and "meta", both plain */
	tree_t main;
	if (read_db(s, mp + META_DBS + DB_LEN, "main", &main, d) != DNSNAP_OK)
		return DNSNAP_ECHECKSUM;
	const uint8_t *ev, *mv;
	size_t el, ml;
	int e1 = tree_get(&s->pg, &main, (const uint8_t *)"entries", 7, F_SUBDATA, &ev, &el);
	int e2 = tree_get(&s->pg, &main, (const uint8_t *)"meta", 4, F_SUBDATA, &mv, &ml);
	if (e1 == DNSNAP_ENOTFOUND || e2 == DNSNAP_ENOTFOUND || main.entries != 2)
		return dnsnap__diag(d, DNSNAP_EMAGIC, mp_off + META_DBS + DB_LEN,
				    "%s: an LMDB file that is not a dnsnap snapshot (its databases "
				    "are not \"entries\" and \"meta\")", s->path);
	if (e1 != DNSNAP_OK || e2 != DNSNAP_OK || el != DB_LEN || ml != DB_LEN)
		return dnsnap__diag(d, DNSNAP_ECHECKSUM, main.root * ps, "%s: LMDB's main database "
				    "(page %llu) is damaged", s->path, (unsigned long long)main.root);
	tree_t meta;
	int err = read_db(s, mv, "meta", &meta, d);
	if (err == DNSNAP_OK)
		err = read_db(s, ev, "entries", &s->entries, d);
	if (err != DNSNAP_OK)
		return err;
	if (op->no_trailer)
		return dnsnap__diag(d, DNSNAP_ETRUNC, size, "%s: truncated: %zu bytes, without the "
				    "trailer every snapshot ends with", s->path, size);
	return open_meta(s, &meta, mv, ev, d);
}

int dnsnap_snap_open(const char *path, dnsnap_snap_t **out, dnsnap_diag_t *d)
{
	if (path == NULL || out == NULL)
		return dnsnap__diag(d, DNSNAP_EINVAL, 0, "invalid argument");
	install_sigbus();
	size_t pl = strlen(path);
	dnsnap_snap_t *s = dnsnap_calloc(1, sizeof *s + pl + 1);
	if (s == NULL)
		return dnsnap__diag(d, DNSNAP_ENOMEM, 0, "out of memory");
	memcpy(s->path, path, pl + 1);
	int err = DNSNAP_OK;
	s->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO must not block us */
	if (s->fd < 0)
		err = dnsnap__diag(d, -errno, 0, "%s: %s", path, strerror(errno));
	else if (fstat(s->fd, &s->st) != 0)
		err = dnsnap__diag(d, -errno, 0, "%s: %s", path, strerror(errno));
	else if (S_ISDIR(s->st.st_mode))
		err = dnsnap__diag(d, DNSNAP_EMAGIC, 0, "%s: a directory, not a snapshot", path);
	else if (!S_ISREG(s->st.st_mode))
		err = dnsnap__diag(d, DNSNAP_EMAGIC, 0, "%s: not a regular file", path);
	else if (s->st.st_size == 0)
		err = dnsnap__diag(d, DNSNAP_EMAGIC, 0, "%s: an empty file, not a snapshot", path);
	else if ((uint64_t)s->st.st_size > SIZE_MAX / 2)
		err = dnsnap__diag(d, DNSNAP_EFIELD, 0, "%s: too large to map", path);
	if (err == DNSNAP_OK) {
		s->map_len = (size_t)s->st.st_size;
		void *p = mmap(NULL, s->map_len, PROT_READ, MAP_SHARED, s->fd, 0);
		if (p == MAP_FAILED)
			err = dnsnap__diag(d, -errno, 0, "%s: mmap: %s", path, strerror(errno));
		else
			s->pg.map = p;
	}
	if (err == DNSNAP_OK) {
		opening_t op = { .d = d };
		err = GUARDED(s, open_in_map(s, &op));
		if (err == DNSNAP_ETRUNC && atomic_load(&s->faults) != 0)
			err = dnsnap__diag(d, err, 0, "%s: the file changed while being opened", path);
		s->info.file_size = (uint64_t)s->map_len;
	}
	if (err != DNSNAP_OK) {
		dnsnap_snap_close(s);
		return err;
	}
	*out = s;
	return DNSNAP_OK;
}

void dnsnap_snap_close(dnsnap_snap_t *s)
{
	if (s == NULL)
		return;
	while (users_now(s) != 0)
		sched_yield();
	if (s->pg.map != NULL)
		munmap((void *)s->pg.map, s->map_len);
	if (s->fd >= 0)
		close(s->fd);
	dnsnap_free(s);
}

const char *dnsnap_snap_path(const dnsnap_snap_t *s)
{
	return s->path;
}

void dnsnap_snap_info(const dnsnap_snap_t *s, dnsnap_snap_info_t *out)
{
	*out = s->info;
}

uint64_t dnsnap_snap_bad_entries(const dnsnap_snap_t *s)
{
	return atomic_load_explicit(&s->bad, memory_order_relaxed);
}

int dnsnap_snap_changed(const dnsnap_snap_t *s)
{
	if (atomic_load_explicit(&s->faults, memory_order_relaxed) != 0)
		return 1;
	struct stat st;
	if (fstat(s->fd, &st) != 0)
		return 1;
	return st.st_size != s->st.st_size || st.st_mtim.tv_sec != s->st.st_mtim.tv_sec ||
	       st.st_mtim.tv_nsec != s->st.st_mtim.tv_nsec;
}

int dnsnap_snap_same_file(const dnsnap_snap_t *s, const char *path)
{
	struct stat st;
	if (s == NULL || path == NULL || stat(path, &st) != 0)
		return 0;
	return st.st_dev == s->st.st_dev && st.st_ino == s->st.st_ino &&
	       st.st_size == s->st.st_size && st.st_mtim.tv_sec == s->st.st_mtim.tv_sec &&
	       st.st_mtim.tv_nsec == s->st.st_mtim.tv_nsec;
}

/* ----------------------------------------------------------------- verify */

typedef struct vctx {
	const dnsnap_snap_t *s;
	const dnsnap_progress_t *pr;
	XXH3_state_t *xs;
	uint64_t n;
} vctx_t;

static int verify_one(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		      size_t entry_len)
{
	vctx_t *v = arg;
	record_digest(v->xs, key, key_len, entry, entry_len);
	if (++v->n % DNSNAP_PROGRESS_EVERY == 0 && v->pr != NULL && v->pr->fn != NULL)
		v->pr->fn(v->pr->arg, v->n, v->s->info.entry_count);
	return 0;
}

static __attribute__((noinline)) int hash_in_map(const dnsnap_snap_t *s, uint64_t *h)
{
	*h = XXH3_64bits(s->pg.map, (size_t)s->data_len);
	return DNSNAP_OK;
}

int dnsnap_snap_check_hash(dnsnap_snap_t *s, dnsnap_diag_t *d)
{
	if (s == NULL)
		return dnsnap__diag(d, DNSNAP_EINVAL, 0, "invalid argument");
	uint64_t h = 0;
	int err = GUARDED(s, hash_in_map(s, &h));
	if (err != DNSNAP_OK)
		return dnsnap__diag(d, err, 0, "%s: the file changed in place while being read",
				    s->path);
	if (h != s->file_hash)
		return dnsnap__diag(d, DNSNAP_ECHECKSUM, (size_t)s->data_len + 16,
				    "%s: the file's bytes do not match the trailer's File_Hash: "
				    "damaged", s->path);
	return DNSNAP_OK;
}

/* The index's deep check (snap_index.c), under the guard. */
typedef struct index_check {
	dnsnap_snap_t *s;
	dnsnap_diag_t *d;
} index_check_t;

static __attribute__((noinline)) int index_in_map(index_check_t *ic)
{
	dnsnap_snap_t *s = ic->s;
	return dnsnap__index_verify(&s->idx, &s->pg, &s->entries, s->path, ic->d);
}

int dnsnap_snap_verify(dnsnap_snap_t *s, const dnsnap_progress_t *pr, dnsnap_diag_t *d)
{
	int err = dnsnap_snap_check_hash(s, d);
	if (err != DNSNAP_OK)
		return err;
	vctx_t v = { .s = s, .pr = pr, .xs = XXH3_createState() };
	if (v.xs == NULL)
		return dnsnap__diag(d, DNSNAP_ENOMEM, 0, "out of memory");
	XXH3_64bits_reset(v.xs);
	dnsnap_scan_stats_t st;
	err = dnsnap_snap_scan(s, NULL, 0, verify_one, &v, &st, d);
	if (pr != NULL && pr->fn != NULL)
		pr->fn(pr->arg, v.n, s->info.entry_count);
	if (err == DNSNAP_OK && XXH3_64bits_digest(v.xs) != s->info.digest)
		err = dnsnap__diag(d, DNSNAP_ECHECKSUM, s->meta_off + 30, "%s: digest mismatch "
				   "(the meta record's Digest, at 0x%zx)", s->path, s->meta_off + 30);
	XXH3_freeState(v.xs);
	if (err == DNSNAP_OK) {
		index_check_t ic = { .s = s, .d = d };
		err = GUARDED(s, index_in_map(&ic));
		if (err == DNSNAP_ETRUNC && atomic_load(&s->faults) != 0)
			err = dnsnap__diag(d, err, 0, "%s: the file changed in place while being "
					   "read", s->path);
	}
	return err;
}

/* ------------------------------------------------------------ test hooks */

int dnsnap__snap_index_where(const dnsnap_snap_t *s, size_t *off, size_t *len, const char **why)
{
	*off = s->idx.val != NULL ? (size_t)(s->idx.val - s->pg.map) : 0;
	*len = s->idx.len;
	*why = s->idx.why;
	return s->idx.slots != NULL ? 1 : s->idx.val != NULL ? -1 : 0;
}

void dnsnap__snap_index_off(dnsnap_snap_t *s)
{
	s->idx.slots = NULL;
}
