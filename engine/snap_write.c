/*
 * snap_write.c: writing snapshots (spec/FORMAT.md, "Snapshot"):
 *
 *   [ LMDB pages: databases "entries" (key -> entry) and "meta" ][ Trailer ]
 *
 * The live entries are taken by reference (the cache pinned: each shard's
 * index copied under its read lock, the entries read after it, without
 * locks), sorted by key per shard on two threads, merged, appended with
 * MDB_APPEND through one cursor into a file beside the target
 * (TARGET.tmp.PID, mode 0600, no lock file), meta record last; then synced,
 * the 24-byte trailer (a checksum of every byte before it) appended and
 * synced, the replaced file's mode, owner and group given to it, and the file
 * renamed over TARGET, the directory synced. TARGET is the file PATH finally
 * names (a symbolic link stays a link). A crash at any point leaves PATH as
 * it was; the next write removes temporaries whose writer is dead.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <lmdb.h>
#include <xxhash.h>

#include "../format/internal.h"
#include "alloc.h"
#include "cache_internal.h"
#include "dnsnap.h"
#include "expiry.h"
#include "record.h"
#include "snap_index.h"
#include "snap_internal.h"

#define COMMIT_BYTES (64u << 20)   /* bound each write transaction's dirty pages */

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
	int helper_err;
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

static void *collect_helper(void *arg)
{
	collect_t *cl = arg;
	cl->helper_err = collect_some(cl);
	return NULL;
}

static void collect_free(collect_t *cl)
{
	for (unsigned k = 0; k < DNSNAP_SHARDS; k++)
		dnsnap_free(cl->run[k].r);
}

/* Collect every shard (the cache pinned); without a helper thread, alone. */
static int collect_all(collect_t *cl)
{
	pthread_t th;
	int helped = pthread_create(&th, NULL, collect_helper, cl) == 0;
	int err = collect_some(cl);
	if (helped) {
		pthread_join(th, NULL);
		if (err == DNSNAP_OK)
			err = cl->helper_err;
	}
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

/* Remove PATH.tmp.PID files whose writer no longer runs (killed mid-write). */
static void remove_stale(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
	if (slash == path)
		snprintf(dir, sizeof dir, "/");
	DIR *d = opendir(dir);
	if (d == NULL)
		return;
	size_t bl = strlen(base);
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, base, bl) != 0 || strncmp(de->d_name + bl, ".tmp.", 5) != 0)
			continue;
		char *end;
		long pid = strtol(de->d_name + bl + 5, &end, 10);
		if (*end != 0 || pid <= 0 || (kill((pid_t)pid, 0) != 0 && errno == ESRCH)) {
			char f[8192];
			snprintf(f, sizeof f, "%s/%s", dir, de->d_name);
			unlink(f);
		}
	}
	closedir(d);
}

/* A failure of LMDB writing the temporary @p tmp of snapshot @p path. The
 * message names @p path, the file the user named. */
static int lmdb_err(dnsnap_diag_t *d, const char *tmp, const char *path, const char *what,
		    int rc)
{
	/* LMDB passes errno values through, except that a short write (a full
	 * disk, a file size limit) comes back as EIO: name the likely cause. */
	if (rc == EIO) {
		struct rlimit rl;
		struct statvfs vs;
		struct stat st;
		off_t size = stat(tmp, &st) == 0 ? st.st_size : 0;
		if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
		    (rlim_t)size + 65536 >= rl.rlim_cur)
			return dnsnap__diag(d, -EFBIG, 0, "%s: cannot write it: file size limit "
					    "reached (%llu bytes)", path,
					    (unsigned long long)rl.rlim_cur);
		if (statvfs(tmp, &vs) == 0 && (uint64_t)vs.f_bavail * vs.f_frsize < 1u << 20)
			return dnsnap__diag(d, -ENOSPC, 0, "%s: cannot write it: no space left "
					    "on the device", path);
	}
	if (rc > 0 && strcmp(what, "mdb_env_open") == 0) {
		char why[200]; /* the temporary could not be created beside it */
		return dnsnap__diag(d, -rc, 0, "%s: %s", path,
				    dnsnap_path_create_error(tmp, rc, why, sizeof why));
	}
	if (rc > 0)
		return dnsnap__diag(d, -rc, 0, "%s: cannot write it: %s", path, strerror(rc));
	return dnsnap__diag(d, DNSNAP_ELMDB, 0, "%s: cannot write it: %s: %s", path, what,
			    mdb_strerror(rc));
}

/* The meta record (spec/FORMAT.md, "Snapshot meta record"), then its
 * Value_Check (key "meta"), like every value. */
static size_t meta_record(uint8_t *m, uint64_t count, uint64_t digest)
{
	char writer[128], host[64] = "?";
	gethostname(host, sizeof host - 1);
	int wl = snprintf(writer, sizeof writer, "dnsnap %s on %s", DNSNAP_VERSION, host);
	if (wl < 0 || wl > 127)
		wl = 127;
	memcpy(m, SNAP_MAGIC, 4);
	st16le(m + 4, DNSNAP_SNAP_MAJOR);
	st16le(m + 6, DNSNAP_SNAP_MINOR);
	st16le(m + 10, 0);                         /* Flags */
	st64le(m + 12, (uint64_t)time(NULL));      /* Created_At */
	st64le(m + 20, count);
	m[28] = 1;                                /* Digest_Type: XXH3-64 */
	m[29] = 8;
	st64le(m + 30, digest);
	m[38] = (uint8_t)wl;
	memcpy(m + 39, writer, (size_t)wl);
	st16le(m + 8, (uint16_t)(39 + wl));        /* Header_Size */
	st32le(m + 39 + wl, value_check((const uint8_t *)META_KEY, 4, m, 39 + (size_t)wl));
	return 39 + (size_t)wl + VALUE_CHECK_LEN;
}

/* Append the trailer: Magic, 0, Data_Len, XXH3-64 of bytes [0, Data_Len).
 * The file is read in chunks, not mapped: the writer's memory stays small
 * however large the snapshot (a map would count the whole file as resident). */
static int write_trailer(int fd, dnsnap_diag_t *d, const char *path)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return dnsnap__diag(d, -errno, 0, "%s: %s", path, strerror(errno));
	uint64_t len = (uint64_t)st.st_size;
	size_t cap = 1u << 20;
	uint8_t *buf = dnsnap_malloc(cap);
	XXH3_state_t *xs = XXH3_createState();
	int err = DNSNAP_OK;
	if (buf == NULL || xs == NULL)
		err = dnsnap__diag(d, DNSNAP_ENOMEM, 0, "%s: out of memory", path);
	else
		XXH3_64bits_reset(xs);
	for (uint64_t off = 0; err == DNSNAP_OK && off < len;) {
		size_t want = len - off < cap ? (size_t)(len - off) : cap;
		ssize_t got = pread(fd, buf, want, (off_t)off);
		if (got <= 0)
			err = dnsnap__diag(d, got < 0 ? -errno : -EIO, 0, "%s: reading back: %s",
					   path, strerror(got < 0 ? errno : EIO));
		else {
			XXH3_64bits_update(xs, buf, (size_t)got);
			off += (uint64_t)got;
		}
	}
	uint64_t h = err == DNSNAP_OK ? XXH3_64bits_digest(xs) : 0;
	XXH3_freeState(xs);
	dnsnap_free(buf);
	if (err != DNSNAP_OK)
		return err;
	uint8_t t[TRAILER_LEN];
	memcpy(t, TRAILER_MAGIC, 4);
	st32le(t + 4, 0);
	st64le(t + 8, len);
	st64le(t + 16, h);
	if (pwrite(fd, t, sizeof t, (off_t)len) != (ssize_t)sizeof t)
		return dnsnap__diag(d, errno ? -errno : -EIO, 0, "%s: writing the trailer: %s",
				    path, strerror(errno ? errno : EIO));
	if (fsync(fd) != 0)
		return dnsnap__diag(d, -errno, 0, "%s: fsync: %s", path, strerror(errno));
	return DNSNAP_OK;
}

static void sync_dir(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1,
		 slash ? path : ".");
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

/*
 * The writer: one LMDB environment on PATH.tmp.PID, entries appended in key
 * order (MDB_APPEND) in transactions of at most COMMIT_BYTES. The map only
 * reserves address space and the file grows as pages are written, so the
 * map is grown between transactions: each needs at most twice its records'
 * bytes in leaves (a page is split at half), less again in branches, and a
 * page more per overflowed value. MAP_HEADROOM bounds one transaction.
 */
#define MAP_HEADROOM ((size_t)COMMIT_BYTES * 4 + ((size_t)4 << 20))

struct dnsnap_snapw {
	MDB_env *env;
	MDB_txn *txn;
	MDB_cursor *cur;         /* on dbi in txn: appends skip the descent from the root */
	MDB_dbi dbi, meta;
	XXH3_state_t *xs;
	uint64_t n, bytes, in_txn;
	size_t mapsize, psize;
	int failed;
	size_t prev_len;
	uint8_t prev[DNSNAP_KEY_MAX];
	char *path;              /* as given (messages); points into tmp's allocation */
	char *target;            /* the file it finally names (renamed over); ditto */
	char tmp[];
};

/* Commit the transaction under way (if any), grow the map when the next one
 * might not fit, begin the next. */
static int snapw_next_txn(dnsnap_snapw_t *w, dnsnap_diag_t *d)
{
	const char *what = "mdb_txn_commit";
	int rc = 0;
	if (w->txn != NULL) {
		rc = mdb_txn_commit(w->txn); /* frees the cursor */
		w->txn = NULL;
		w->cur = NULL;
		/* Start writing back what this transaction wrote (no wait): the
		 * disk works while the next one is built, the final sync has
		 * less left to do. */
		int fd;
		if (rc == 0 && mdb_env_get_fd(w->env, &fd) == 0)
			sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
	}
	MDB_envinfo ei;
	if (rc == 0)
		what = "mdb_env_info", rc = mdb_env_info(w->env, &ei);
	if (rc == 0) {
		size_t used = ((size_t)ei.me_last_pgno + 1) * w->psize;
		if (used + MAP_HEADROOM > w->mapsize) {
			w->mapsize = w->mapsize * 2 > used + MAP_HEADROOM ? w->mapsize * 2
									  : used + MAP_HEADROOM;
			what = "mdb_env_set_mapsize", rc = mdb_env_set_mapsize(w->env, w->mapsize);
		}
	}
	if (rc == 0)
		what = "mdb_txn_begin", rc = mdb_txn_begin(w->env, NULL, 0, &w->txn);
	if (rc == 0)
		what = "mdb_cursor_open", rc = mdb_cursor_open(w->txn, w->dbi, &w->cur);
	w->in_txn = 0;
	if (rc != 0) {
		w->failed = 1;
		return lmdb_err(d, w->tmp, w->path, what, rc);
	}
	return DNSNAP_OK;
}

int dnsnap_snapw_begin(const char *path, dnsnap_snapw_t **out, dnsnap_diag_t *d)
{
	if (path == NULL || out == NULL)
		return dnsnap__diag(d, DNSNAP_EINVAL, 0, "invalid argument");
	size_t pl = strlen(path);
	char target[4096];
	int e = pl > 4000 ? -ENAMETOOLONG : dnsnap_path_target(path, target, 4000);
	if (e != 0)
		return dnsnap__diag(d, e == -ENAMETOOLONG ? DNSNAP_EINVAL : e, 0, "%s: %s", path,
				    e == -ENAMETOOLONG ? "path too long" : strerror(-e));
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return dnsnap__diag(d, DNSNAP_EINVAL, 0, "%s: not a regular file: a snapshot is "
				    "written beside its path and renamed over it", path);
	size_t gl = strlen(target);
	dnsnap_snapw_t *w = dnsnap_calloc(1, sizeof *w + pl + 2 * gl + 42);
	if (w == NULL || (w->xs = XXH3_createState()) == NULL) {
		dnsnap_free(w);
		return dnsnap__diag(d, DNSNAP_ENOMEM, 0, "%s: out of memory", path);
	}
	XXH3_64bits_reset(w->xs);
	int tl = snprintf(w->tmp, gl + 40, "%s.tmp.%ld", target, (long)getpid());
	w->path = w->tmp + tl + 1;
	memcpy(w->path, path, pl + 1);
	w->target = w->path + pl + 1;
	memcpy(w->target, target, gl + 1);
	remove_stale(target);
	unlink(w->tmp);
	w->psize = (size_t)sysconf(_SC_PAGESIZE);
	w->mapsize = 2 * MAP_HEADROOM;
	const char *what = "mdb_env_create";
	int rc = mdb_env_create(&w->env);
	if (rc == 0)
		what = "mdb_env_set_mapsize", rc = mdb_env_set_mapsize(w->env, w->mapsize);
	if (rc == 0)
		what = "mdb_env_set_maxdbs", rc = mdb_env_set_maxdbs(w->env, 2);
	/* NOMEMINIT: pages are filled before they are written; no need to zero */
	if (rc == 0)
		what = "mdb_env_open", rc = mdb_env_open(w->env, w->tmp, MDB_NOSUBDIR | MDB_NOLOCK |
							 MDB_NOSYNC | MDB_NOMEMINIT, 0600);
	if (rc == 0)
		what = "mdb_txn_begin", rc = mdb_txn_begin(w->env, NULL, 0, &w->txn);
	if (rc == 0)
		what = "mdb_dbi_open entries", rc = mdb_dbi_open(w->txn, "entries", MDB_CREATE, &w->dbi);
	if (rc == 0)
		what = "mdb_dbi_open meta", rc = mdb_dbi_open(w->txn, "meta", MDB_CREATE, &w->meta);
	if (rc == 0)
		what = "mdb_cursor_open", rc = mdb_cursor_open(w->txn, w->dbi, &w->cur);
	if (rc != 0) {
		int err = lmdb_err(d, w->tmp, w->path, what, rc);
		dnsnap_snapw_abort(w);
		return err;
	}
	*out = w;
	return DNSNAP_OK;
}

/* Append one record (its value: the entry, then its Value_Check); the
 * caller vouches for the order and the bytes. @p hits, when not NULL, goes
 * into the entry's Hits field (a cache entry's live counter). The value is
 * built in its page (MDB_RESERVE), and the checks read it there. */
static int snapw_put(dnsnap_snapw_t *w, const uint8_t *key, size_t key_len,
		     const uint8_t *entry, size_t entry_len, const uint32_t *hits,
		     dnsnap_diag_t *d)
{
	MDB_val k = { key_len, (void *)key }, v = { entry_len + VALUE_CHECK_LEN, NULL };
	int rc = mdb_cursor_put(w->cur, &k, &v, MDB_APPEND | MDB_RESERVE);
	if (rc != 0) {
		w->failed = 1;
		return lmdb_err(d, w->tmp, w->path, "mdb_put", rc);
	}
	uint8_t *val = v.mv_data;
	if (hits != NULL && entry_len >= 12) { /* a cache entry: its Hits is the live
						* counter (engine/arena.h), not read */
		memcpy(val, entry, 8);
		st32le(val + 8, *hits);
		memcpy(val + 12, entry + 12, entry_len - 12);
	} else {
		memcpy(val, entry, entry_len);
	}
	st32le(val + entry_len, value_check(key, key_len, val, entry_len));
	record_digest(w->xs, key, key_len, val, entry_len);
	memcpy(w->prev, key, key_len);
	w->prev_len = key_len;
	w->n++;
	w->bytes += key_len + entry_len;
	w->in_txn += key_len + entry_len + 16;
	if (w->in_txn > COMMIT_BYTES) /* large, not unbounded, transactions */
		return snapw_next_txn(w, d);
	return DNSNAP_OK;
}

int dnsnap_snapw_add(dnsnap_snapw_t *w, const uint8_t *key, size_t key_len,
		     const uint8_t *entry, size_t entry_len, dnsnap_diag_t *d)
{
	if (w == NULL || key == NULL || entry == NULL || w->failed)
		return dnsnap__diag(d, DNSNAP_EINVAL, 0, "invalid argument");
	dnsnap_key_t k;
	dnsnap_diag_t ed;
	char kname[300];
	int e = dnsnap_key_decode(key, key_len, &k, &ed);
	if (e != DNSNAP_OK)
		return dnsnap__diag(d, e, ed.offset, "%s: entry %llu: key: %s", w->path,
				    (unsigned long long)w->n, ed.msg);
	if ((e = dnsnap_entry_validate(entry, entry_len, &ed)) != DNSNAP_OK) {
		dnsnap__key_text(&k, kname, sizeof kname);
		return dnsnap__diag(d, e, ed.offset, "%s: entry %llu (%s) at offset 0x%zx: %s",
				    w->path, (unsigned long long)w->n, kname, ed.offset, ed.msg);
	}
	if (w->n > 0 && dnsnap_key_cmp(w->prev, w->prev_len, key, key_len) >= 0) {
		dnsnap__key_text(&k, kname, sizeof kname);
		return dnsnap__diag(d, DNSNAP_EFIELD, 0, "%s: entry %llu (%s): keys must increase",
				    w->path, (unsigned long long)w->n, kname);
	}
	return snapw_put(w, key, key_len, entry, entry_len, NULL, d);
}

void dnsnap_snapw_abort(dnsnap_snapw_t *w)
{
	if (w == NULL)
		return;
	if (w->txn != NULL)
		mdb_txn_abort(w->txn); /* frees the cursor */
	if (w->env != NULL)
		mdb_env_close(w->env);
	unlink(w->tmp);
	XXH3_freeState(w->xs);
	dnsnap_free(w);
}

/* Give the temporary the mode, owner and group of the file it replaces (a
 * resolver running as another user must still read it). A chown the process
 * may not make (EPERM: not root) is skipped, the group alone tried. A new
 * file keeps the temporary's 0600. */
static int keep_access(int fd, const dnsnap_snapw_t *w, dnsnap_diag_t *d)
{
	struct stat st;
	if (stat(w->target, &st) != 0 || !S_ISREG(st.st_mode))
		return DNSNAP_OK;
	if (fchown(fd, st.st_uid, st.st_gid) != 0) {
		if (errno != EPERM)
			return dnsnap__diag(d, -errno, 0, "%s: chown: %s", w->path,
					    strerror(errno));
		if (fchown(fd, (uid_t)-1, st.st_gid) != 0 && errno != EPERM)
			return dnsnap__diag(d, -errno, 0, "%s: chown: %s", w->path,
					    strerror(errno));
	}
	if (fchmod(fd, st.st_mode & 07777) != 0)
		return dnsnap__diag(d, -errno, 0, "%s: chmod: %s", w->path, strerror(errno));
	return DNSNAP_OK;
}

/* What follows the entries: the entries' transaction committed, then in the
 * last transaction the index record (walking the committed tree) and the meta
 * record. @return 0 or an LMDB error, *what naming the call that failed */
static int snapw_meta(dnsnap_snapw_t *w, const char **what)
{
	uint8_t m[256];
	size_t ml = meta_record(m, w->n, XXH3_64bits_digest(w->xs));
	MDB_val k = { sizeof META_KEY - 1, (void *)META_KEY }, v = { ml, m };
	w->cur = NULL; /* the commit below frees it */
	int rc = dnsnap__snap_index_put(w->env, &w->txn, w->meta, what);
	if (rc != 0)
		return rc;
	*what = "mdb_put meta";
	return mdb_put(w->txn, w->meta, &k, &v, 0);
}

int dnsnap_snapw_commit(dnsnap_snapw_t *w, dnsnap_snap_write_stats_t *stats, dnsnap_diag_t *d)
{
	if (w == NULL)
		return dnsnap__diag(d, DNSNAP_EINVAL, 0, "invalid argument");
	if (w->failed) {
		dnsnap_snapw_abort(w);
		return dnsnap__diag(d, DNSNAP_EINVAL, 0, "commit after a failed add");
	}
	const char *what;
	int rc = snapw_meta(w, &what);
	if (rc == 0)
		what = "mdb_txn_commit", rc = mdb_txn_commit(w->txn);
	w->txn = NULL;
	w->cur = NULL;
	if (rc == 0)
		what = "mdb_env_sync", rc = mdb_env_sync(w->env, 1);
	int err = rc == 0 ? DNSNAP_OK : lmdb_err(d, w->tmp, w->path, what, rc);
	mdb_env_close(w->env);
	w->env = NULL;
	uint64_t size = 0;
	if (err == DNSNAP_OK) {
		int fd = open(w->tmp, O_RDWR);
		if (fd < 0)
			err = dnsnap__diag(d, -errno, 0, "%s: %s", w->path, strerror(errno));
		else {
			err = write_trailer(fd, d, w->path);
			struct stat st;
			if (err == DNSNAP_OK && fstat(fd, &st) == 0)
				size = (uint64_t)st.st_size;
			if (err == DNSNAP_OK)
				err = keep_access(fd, w, d);
			close(fd);
		}
	}
	if (err == DNSNAP_OK && rename(w->tmp, w->target) != 0)
		err = dnsnap__diag(d, -errno, 0, "%s: rename: %s", w->path, strerror(errno));
	if (err != DNSNAP_OK) {
		dnsnap_snapw_abort(w);
		return err;
	}
	sync_dir(w->target);
	if (stats != NULL) {
		stats->entries = w->n;
		stats->entry_bytes = w->bytes;
		stats->file_size = size;
	}
	XXH3_freeState(w->xs);
	dnsnap_free(w);
	return DNSNAP_OK;
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
	const dnsnap__merge_opts_t *o;
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

/* What keeping an entry costs the memory cache: its allocation (a size class:
 * 16-byte steps to 128, then four classes per doubling, as jemalloc's) and
 * its index slot (8 bytes at a load between 53% and 80%). The bound of a
 * bounded write is in these units, the cache's own. */
static uint64_t entry_cost(size_t key_len, size_t entry_len)
{
	uint64_t n = 9 + (uint64_t)key_len + entry_len, c = 16;
	if (n <= 128)
		return (n + 15) / 16 * 16 + 12;
	while (c * 2 < n)
		c *= 2;
	uint64_t step = c / 4;
	return (n + step - 1) / step * step + 12;
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
	return snapw_put(m->w, key, key_len, entry, entry_len, live_hits, m->d);
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
	/* the scan hands over checked entries only: the damaged are counted */
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
	merge_t m = { .now = o->now, .cutoff = cl->now, .o = o, .d = d };
	if (o->max_bytes != 0) { /* choose first, then write what was chosen */
		m.bounded = 1;
		err = merge_pass(&m, cl, base, path);
		if (err == DNSNAP_OK && choose(&m))
			m.bounded = 0; /* it all fits */
		free(m.vals);
		m.vals = NULL;
	}
	if (err == DNSNAP_OK)
		err = dnsnap_snapw_begin(path, &m.w, d);
	if (err == DNSNAP_OK) {
		err = merge_pass(&m, cl, base, path);
		dnsnap__cache_unpin(c); /* the entries are in the file: the rest is LMDB's */
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
