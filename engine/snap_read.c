/*
 * snap_read.c: reading snapshots (spec/FORMAT.md, "Snapshot"). LMDB
 * read-only, MDB_NOLOCK (a published snapshot never changes, and read-only
 * media hold no lock file), MDB_NOTLS so a pool of read transactions made at
 * open serves every thread without allocation. Entries are validated as they
 * are fetched; a bad one is a miss.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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
#include "record.h"
#include "snap_internal.h"

#define MAP_GUARD (1u << 20)       /* readable zeros mapped past the file's end */

struct dnsnap_snap {
	MDB_env *env;
	MDB_dbi entries;
	uint64_t root;           /* the entries B-tree's root page */
	uint64_t npages;         /* pages LMDB committed */
	size_t psize;
	_Atomic long users;
	_Atomic uint64_t bad;
	const uint8_t *map;      /* the whole file, for the checksum */
	uint64_t data_len;       /* LMDB's part: everything before the trailer */
	uint64_t file_hash;
	int no_trailer;
	dnsnap_snap_info_t info;
	char path[];
};


/* ------------------------------------------------------------------ read */

static int read_meta(dnsnap_snap_t *s, const uint8_t *m, size_t len, dnsnap_diag_t *d)
{
	if (len < 12 || memcmp(m, SNAP_MAGIC, 4) != 0)
		return dnsnap__diag(d, DNSNAP_EMAGIC, 0, "%s: not a dnsnap snapshot (meta record)", s->path);
	unsigned major = get16(m + 4), minor = get16(m + 6), hsize = get16(m + 8);
	if (major != DNSNAP_FORMAT_MAJOR)
		return dnsnap__diag(d, DNSNAP_EVERSION, 4, "%s: snapshot format %u.%u, this dnsnap reads %d.x",
			    s->path, major, minor, DNSNAP_FORMAT_MAJOR);
	if (get16(m + 10) != 0)
		return dnsnap__diag(d, DNSNAP_ERESERVED, 10, "%s: reserved meta flags", s->path);
	if (len < 39 || len < 39u + m[38] || hsize < 39u + m[38] || hsize > len || m[29] != 8 ||
	    m[28] != 1)
		return dnsnap__diag(d, DNSNAP_ETRUNC, 8, "%s: meta record of %zu bytes is cut or malformed",
			    s->path, len);
	s->info.major = major;
	s->info.minor = minor;
	s->info.created_at = get64(m + 12);
	s->info.entry_count = get64(m + 20);
	s->info.digest = get64(m + 30);
	memcpy(s->info.writer, m + 39, m[38] < 127 ? m[38] : 127);
	s->info.writer[m[38] < 127 ? m[38] : 127] = 0;
	return DNSNAP_OK;
}

/* Before LMDB maps anything: the file must end in our trailer and LMDB's
 * pages must be whole, or reading them would fault (SIGBUS). */
static int check_file(dnsnap_snap_t *s, dnsnap_diag_t *d)
{
	int fd = open(s->path, O_RDONLY);
	if (fd < 0)
		return dnsnap__diag(d, -errno, 0, "%s: %s", s->path, strerror(errno));
	struct stat st;
	uint8_t head[32], t[TRAILER_LEN];
	int err = DNSNAP_OK;
	if (fstat(fd, &st) != 0)
		err = dnsnap__diag(d, -errno, 0, "%s: %s", s->path, strerror(errno));
	else if (st.st_size < (off_t)sizeof head ||
		 pread(fd, head, sizeof head, 0) != (ssize_t)sizeof head ||
		 get32(head + 16) != 0xBEEFC0DE) /* LMDB's meta page magic */
		err = dnsnap__diag(d, DNSNAP_EMAGIC, 0, "%s: not an LMDB file", s->path);
	else if (st.st_size < TRAILER_LEN + 4096 ||
		 pread(fd, t, sizeof t, st.st_size - TRAILER_LEN) != (ssize_t)sizeof t ||
		 memcmp(t, TRAILER_MAGIC, 4) != 0)
		s->no_trailer = 1; /* a plain LMDB file, or a cut snapshot: open tells */
	else if (get64(t + 8) != (uint64_t)st.st_size - TRAILER_LEN)
		err = dnsnap__diag(d, DNSNAP_ETRUNC, (size_t)st.st_size,
			   "%s: %llu bytes, the trailer says %llu", s->path,
			   (unsigned long long)st.st_size,
			   (unsigned long long)(get64(t + 8) + TRAILER_LEN));
	s->info.file_size = err == DNSNAP_OK ? (uint64_t)st.st_size : 0;
	s->data_len = s->no_trailer ? s->info.file_size : get64(t + 8);
	s->file_hash = s->no_trailer ? 0 : get64(t + 16);
	close(fd);
	return err;
}

/*
 * Find the map LMDB made (its base is not exported unless fixed): the
 * mapping of our file (by inode) that holds @p inside, a pointer LMDB
 * returned. Then map zero pages over the part past the file's end.
 */
static int guard_map(dnsnap_snap_t *s, const void *inside, size_t mapsize, size_t file_pages,
		     dnsnap_diag_t *d)
{
	struct stat st;
	if (stat(s->path, &st) != 0)
		return dnsnap__diag(d, -errno, 0, "%s: %s", s->path, strerror(errno));
	FILE *f = fopen("/proc/self/maps", "r");
	if (f == NULL)
		return dnsnap__diag(d, -errno, 0, "/proc/self/maps: %s", strerror(errno));
	char line[512];
	uintptr_t p = (uintptr_t)inside, base = 0;
	while (fgets(line, sizeof line, f) != NULL) {
		unsigned long lo, hi, off, ino;
		if (sscanf(line, "%lx-%lx %*s %lx %*s %lu", &lo, &hi, &off, &ino) == 4 &&
		    lo <= p && p < hi && ino == (unsigned long)st.st_ino) {
			base = lo - off;
			break;
		}
	}
	fclose(f);
	if (base == 0)
		return dnsnap__diag(d, DNSNAP_ELMDB, 0, "%s: the map was not found", s->path);
	s->map = (const uint8_t *)base;
	if (mapsize > file_pages &&
	    mmap((uint8_t *)base + file_pages, mapsize - file_pages, PROT_READ,
		 MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
		return dnsnap__diag(d, -errno, 0, "%s: mapping the guard: %s", s->path, strerror(errno));
	return DNSNAP_OK;
}

/* The entries database's root page, from its record in LMDB's main database
 * (an MDB_db: pad u32, flags u16, depth u16, four u64 counts, root u64). */
static int find_root(dnsnap_snap_t *s, MDB_txn *txn, dnsnap_diag_t *d)
{
	MDB_dbi main;
	MDB_val k = { 7, (void *)"entries" }, v;
	if (mdb_dbi_open(txn, NULL, 0, &main) != 0 || mdb_get(txn, main, &k, &v) != 0 ||
	    v.mv_size < 48)
		return dnsnap__diag(d, DNSNAP_EMAGIC, 0, "%s: no entries database", s->path);
	s->root = get64((const uint8_t *)v.mv_data + 40);
	return DNSNAP_OK;
}

int dnsnap_snap_open(const char *path, dnsnap_snap_t **out, dnsnap_diag_t *d)
{
	if (path == NULL || out == NULL)
		return dnsnap__diag(d, DNSNAP_EINVAL, 0, "invalid argument");
	size_t pl = strlen(path);
	dnsnap_snap_t *s = dnsnap_calloc(1, sizeof *s + pl + 1);
	if (s == NULL)
		return dnsnap__diag(d, DNSNAP_ENOMEM, 0, "out of memory");
	memcpy(s->path, path, pl + 1);
	int err = check_file(s, d);
	if (err != DNSNAP_OK) {
		dnsnap_free(s);
		return err;
	}
	/*
	 * Corrupt page contents can send LMDB's reads up to 128 KiB past a page
	 * (u16 node offsets and key sizes), and past the file's end a mapping
	 * faults with SIGBUS. So the map is sized here, not by the file's meta
	 * page, and everything past the file is replaced with zero pages: a
	 * damaged file gives wrong bytes (caught by validation), never a crash.
	 */
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	size_t file_pages = ((size_t)s->info.file_size + ps - 1) / ps * ps;
	int rc = mdb_env_create(&s->env);
	if (rc == 0)
		rc = mdb_env_set_maxdbs(s->env, 2);
	if (rc == 0)
		rc = mdb_env_set_mapsize(s->env, file_pages + MAP_GUARD);
	if (rc == 0)
		rc = mdb_env_open(s->env, path, MDB_NOSUBDIR | MDB_RDONLY | MDB_NOLOCK | MDB_NOTLS |
				  MDB_NORDAHEAD, 0600);
	MDB_envinfo ei;
	MDB_stat es;

	if (rc == 0 && (rc = mdb_env_info(s->env, &ei)) == 0 && (rc = mdb_env_stat(s->env, &es)) == 0 &&
	    (s->npages = (uint64_t)ei.me_last_pgno + 1, s->psize = es.ms_psize,
	     s->npages * es.ms_psize > s->data_len)) {
		err = dnsnap__diag(d, DNSNAP_ETRUNC, 0, "%s: LMDB pages end at %llu, the file's data at %llu",
			   path, (unsigned long long)((ei.me_last_pgno + 1) * es.ms_psize),
			   (unsigned long long)s->data_len);
		goto fail;
	}
	if (rc != 0) {
		err = dnsnap__diag(d, rc == MDB_INVALID || rc == MDB_VERSION_MISMATCH ? DNSNAP_EMAGIC
								  : DNSNAP_ELMDB,
			   0, "%s: %s", path, mdb_strerror(rc));
		goto fail;
	}
	MDB_txn *txn;
	MDB_dbi meta;
	MDB_val k = { sizeof META_KEY - 1, (void *)META_KEY }, v;
	if ((rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn)) != 0) {
		err = dnsnap__diag(d, DNSNAP_ELMDB, 0, "%s: %s", path, mdb_strerror(rc));
		goto fail;
	}
	if (mdb_dbi_open(txn, "meta", 0, &meta) != 0 || mdb_dbi_open(txn, "entries", 0, &s->entries) != 0 ||
	    mdb_get(txn, meta, &k, &v) != 0) {
		mdb_txn_abort(txn);
		err = dnsnap__diag(d, DNSNAP_EMAGIC, 0, "%s: an LMDB file that is not a dnsnap snapshot", path);
		goto fail;
	}
	if (s->no_trailer) {
		mdb_txn_abort(txn);
		err = dnsnap__diag(d, DNSNAP_ETRUNC, (size_t)s->info.file_size,
			   "%s: a dnsnap snapshot without its trailer: truncated", path);
		goto fail;
	}
	err = read_meta(s, v.mv_data, v.mv_size, d);
	if (err == DNSNAP_OK)
		err = guard_map(s, v.mv_data, ei.me_mapsize, file_pages, d);
	if (err == DNSNAP_OK)
		err = find_root(s, txn, d);
	/* commit, not abort: only a committed transaction keeps its dbi handles */
	if ((rc = mdb_txn_commit(txn)) != 0 && err == DNSNAP_OK)
		err = dnsnap__diag(d, DNSNAP_ELMDB, 0, "%s: %s", path, mdb_strerror(rc));
	if (err != DNSNAP_OK)
		goto fail;
	*out = s;
	return DNSNAP_OK;
fail:
	if (s->env)
		mdb_env_close(s->env);
	dnsnap_free(s);
	return err;
}

void dnsnap_snap_close(dnsnap_snap_t *s)
{
	if (s == NULL)
		return;
	while (atomic_load(&s->users) != 0)
		sched_yield();
	mdb_env_close(s->env);
	dnsnap_free(s);
}

void dnsnap_snap_info(const dnsnap_snap_t *s, dnsnap_snap_info_t *out)
{
	*out = s->info;
}

uint64_t dnsnap_snap_bad_entries(const dnsnap_snap_t *s)
{
	return atomic_load_explicit(&s->bad, memory_order_relaxed);
}

/* Whether LMDB handed back bytes inside the file's data (a damaged page can
 * claim any size). */
static inline int in_data(const dnsnap_snap_t *s, const void *p, size_t len)
{
	const uint8_t *b = p;
	return b >= s->map && (uint64_t)(b - s->map) <= s->data_len &&
	       len <= s->data_len - (uint64_t)(b - s->map);
}

/*
 * The lookup walks LMDB's pages itself (LMDB 0.9 data format: a 16-byte page
 * header {pgno u64, pad u16, flags u16, lower u16, upper u16}, then u16 node
 * offsets; a node is {lo u16, hi u16, flags u16, ksize u16, key, data}),
 * checking every offset and size against the page and the file. mdb_get()
 * trusts the pages, and a damaged file can crash it; this cannot, and it
 * needs no transaction: the file never changes.
 */
#define P_BRANCH 0x01
#define P_LEAF 0x02
#define P_OVERFLOW 0x04
#define F_BIGDATA 0x01
#define PAGEHDR 16

static const uint8_t *page_at(const dnsnap_snap_t *s, uint64_t pgno, unsigned want)
{
	if (pgno < 2 || pgno >= s->npages)
		return NULL;
	const uint8_t *p = s->map + pgno * s->psize;
	if (get64(p) != pgno || (get16(p + 10) & ~0x10u) != want) /* 0x10: P_DIRTY, never on disk */
		return NULL;
	return p;
}

/* Node i of page p: its key and the rest of the page after the key. */
static int node_at(const dnsnap_snap_t *s, const uint8_t *p, unsigned i, const uint8_t **node,
		   MDB_val *key)
{
	unsigned lower = get16(p + 12), upper = get16(p + 14);
	if (lower < PAGEHDR || lower > upper || upper > s->psize || PAGEHDR + 2 * i + 2 > lower)
		return 0;
	unsigned off = get16(p + PAGEHDR + 2 * i);
	if (off < upper || off + 8u > s->psize)
		return 0;
	const uint8_t *n = p + off;
	unsigned ks = get16(n + 6);
	if (off + 8u + ks > s->psize)
		return 0;
	*node = n;
	key->mv_data = (void *)(n + 8);
	key->mv_size = ks;
	return 1;
}

static int lookup(const dnsnap_snap_t *s, const uint8_t *key, size_t key_len, dnsnap_view_t *out)
{
	uint64_t pgno = s->root;
	if (pgno == UINT64_MAX) /* P_INVALID: an empty database */
		return DNSNAP_ENOTFOUND;
	for (int depth = 0; depth < 32; depth++) {
		const uint8_t *p = page_at(s, pgno, P_BRANCH);
		int branch = p != NULL;
		if (!branch && (p = page_at(s, pgno, P_LEAF)) == NULL)
			return DNSNAP_ECHECKSUM;
		unsigned n = (get16(p + 12) - PAGEHDR) / 2;
		/* binary search: the last node whose key is <= key (branch
		 * pages: node 0's key is empty and sorts first) */
		unsigned lo = branch ? 1 : 0, hi = n, found = 0;
		const uint8_t *node;
		MDB_val k;
		while (lo < hi) {
			unsigned mid = lo + (hi - lo) / 2;
			if (!node_at(s, p, mid, &node, &k))
				return DNSNAP_ECHECKSUM;
			int c = dnsnap_key_cmp(k.mv_data, k.mv_size, key, key_len);
			if (c <= 0) {
				found = mid;
				lo = mid + 1;
				if (c == 0 && !branch)
					break;
			} else {
				hi = mid;
			}
		}
		if (!node_at(s, p, found, &node, &k))
			return DNSNAP_ECHECKSUM;
		if (branch) {
			pgno = (uint64_t)get16(node) | (uint64_t)get16(node + 2) << 16 |
			       (uint64_t)get16(node + 4) << 32;
			continue;
		}
		if (n == 0 || dnsnap_key_cmp(k.mv_data, k.mv_size, key, key_len) != 0)
			return DNSNAP_ENOTFOUND;
		uint64_t dsize = (uint64_t)get16(node) | (uint64_t)get16(node + 2) << 16;
		const uint8_t *data = node + 8 + k.mv_size;
		if (get16(node + 4) & F_BIGDATA) {
			if ((size_t)(data + 8 - p) > s->psize)
				return DNSNAP_ECHECKSUM;
			const uint8_t *op = page_at(s, get64(data), P_OVERFLOW);
			if (op == NULL)
				return DNSNAP_ECHECKSUM;
			data = op + PAGEHDR;
		}
		if (!in_data(s, data, dsize))
			return DNSNAP_ECHECKSUM;
		out->p = data;
		out->len = (size_t)dsize;
		return DNSNAP_OK;
	}
	return DNSNAP_ECHECKSUM; /* deeper than LMDB ever goes: a loop */
}

int dnsnap_snap_get(dnsnap_snap_t *s, const uint8_t *key, size_t key_len, dnsnap_view_t *out)
{
	if (s == NULL || key == NULL || out == NULL || key_len == 0 || key_len > DNSNAP_KEY_MAX)
		return DNSNAP_EINVAL;
	atomic_fetch_add_explicit(&s->users, 1, memory_order_acquire);
	dnsnap_view_t v;
	int err = lookup(s, key, key_len, &v);
	if (err == DNSNAP_OK && dnsnap_entry_validate(v.p, v.len, NULL) == DNSNAP_OK)
		*out = v;
	else if (err != DNSNAP_ENOTFOUND) {
		atomic_fetch_add_explicit(&s->bad, 1, memory_order_relaxed);
		err = DNSNAP_ENOTFOUND; /* a bad entry is a miss */
	}
	atomic_fetch_sub_explicit(&s->users, 1, memory_order_release);
	return err;
}

int dnsnap__snap_answer(dnsnap_snap_t *s, const dnsnap_query_t *q, uint32_t now,
			uint16_t max_size, int serve_stale, uint32_t stale_window,
			uint16_t our_udp_size, uint8_t *out, size_t cap, size_t *out_len)
{
	dnsnap_view_t v;
	int err = dnsnap_snap_get(s, q->key, q->key_len, &v);
	if (err != DNSNAP_OK)
		return err;
	int32_t left = (int32_t)(get32(v.p + 4) - now);
	int stale = left <= 0;
	if (stale && !(serve_stale && -(int64_t)left < (int64_t)stale_window))
		return DNSNAP_ENOTFOUND;
	dnsnap_answer_opts_t o = {
		.now = now, .max_size = max_size, .our_udp_size = our_udp_size, .stale = stale,
	};
	return dnsnap_answer_build(q, v.p, v.len, &o, out, cap, out_len);
}

int dnsnap_snap_answer(dnsnap_snap_t *s, const dnsnap_query_t *q, uint32_t now,
		       uint16_t max_size, uint8_t *out, size_t cap, size_t *out_len)
{
	if (s == NULL || q == NULL || out == NULL || out_len == NULL)
		return DNSNAP_EINVAL;
	return dnsnap__snap_answer(s, q, now, max_size, 0, 0, 1232, out, cap, out_len);
}

/* verify's walk (dnsnap_snap_foreach: in key order, every record inside the file) */
typedef struct vctx {
	const dnsnap_snap_t *s;
	const dnsnap_progress_t *pr;
	dnsnap_diag_t *d;
	XXH3_state_t *xs;
	const uint8_t *prev;     /* the previous key, in the map */
	size_t prev_len;
	uint64_t n;
	int err;
} vctx_t;

static int verify_one(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		      size_t entry_len)
{
	vctx_t *v = arg;
	dnsnap_key_t k;
	dnsnap_diag_t ed;
	char kname[300];
	int e;
	if ((e = dnsnap_key_decode(key, key_len, &k, &ed)) != DNSNAP_OK)
		v->err = dnsnap__diag(v->d, e, ed.offset, "%s: entry %llu: key: %s", v->s->path,
				      (unsigned long long)v->n, ed.msg);
	else if ((e = dnsnap_entry_validate(entry, entry_len, &ed)) != DNSNAP_OK) {
		dnsnap__key_text(&k, kname, sizeof kname);
		v->err = dnsnap__diag(v->d, e, ed.offset, "%s: entry %llu (%s) at offset 0x%zx: %s",
				      v->s->path, (unsigned long long)v->n, kname, ed.offset, ed.msg);
	} else if (v->n > 0 && dnsnap_key_cmp(v->prev, v->prev_len, key, key_len) >= 0)
		v->err = dnsnap__diag(v->d, DNSNAP_EFIELD, 0, "%s: entry %llu out of key order",
				      v->s->path, (unsigned long long)v->n);
	if (v->err != DNSNAP_OK)
		return 1;
	record_digest(v->xs, key, key_len, entry, entry_len);
	v->prev = key;
	v->prev_len = key_len;
	if (++v->n % DNSNAP_PROGRESS_EVERY == 0 && v->pr != NULL && v->pr->fn != NULL)
		v->pr->fn(v->pr->arg, v->n, v->s->info.entry_count);
	return 0;
}

int dnsnap_snap_verify(dnsnap_snap_t *s, const dnsnap_progress_t *pr, dnsnap_diag_t *d)
{
	if (s == NULL)
		return dnsnap__diag(d, DNSNAP_EINVAL, 0, "invalid argument");
	if (XXH3_64bits(s->map, s->data_len) != s->file_hash)
		return dnsnap__diag(d, DNSNAP_ECHECKSUM, 0, "%s: file checksum mismatch", s->path);
	vctx_t v = { .s = s, .pr = pr, .d = d, .xs = XXH3_createState() };
	if (v.xs == NULL)
		return dnsnap__diag(d, DNSNAP_ENOMEM, 0, "out of memory");
	XXH3_64bits_reset(v.xs);
	int err = dnsnap_snap_foreach(s, verify_one, &v);
	if (pr != NULL && pr->fn != NULL)
		pr->fn(pr->arg, v.n, s->info.entry_count);
	if (err == 1)
		err = v.err; /* an entry's problem, named */
	else if (err == DNSNAP_ECHECKSUM)
		err = dnsnap__diag(d, err, 0, "%s: entry %llu lies outside the file", s->path,
				   (unsigned long long)v.n);
	else if (err != DNSNAP_OK)
		err = dnsnap__diag(d, err, 0, "%s: %s", s->path, dnsnap_strerror(err));
	if (err == DNSNAP_OK && v.n != s->info.entry_count)
		err = dnsnap__diag(d, DNSNAP_ECHECKSUM, 20, "%s: %llu entries, the meta record says %llu",
			   s->path, (unsigned long long)v.n, (unsigned long long)s->info.entry_count);
	if (err == DNSNAP_OK && XXH3_64bits_digest(v.xs) != s->info.digest)
		err = dnsnap__diag(d, DNSNAP_ECHECKSUM, 30, "%s: digest mismatch", s->path);
	XXH3_freeState(v.xs);
	return err;
}

/* ---------------------------------------------------------------- export */

int dnsnap_snap_foreach_prefix(dnsnap_snap_t *s, const uint8_t *prefix, size_t prefix_len,
			       int (*fn)(void *arg, const uint8_t *key, size_t key_len,
					 const uint8_t *entry, size_t entry_len),
			       void *arg)
{
	if (s == NULL || fn == NULL || (prefix_len > 0 && prefix == NULL))
		return DNSNAP_EINVAL;
	MDB_txn *txn;
	MDB_cursor *cur;
	int rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn);
	if (rc == 0 && (rc = mdb_cursor_open(txn, s->entries, &cur)) != 0)
		mdb_txn_abort(txn);
	if (rc != 0)
		return DNSNAP_ELMDB;
	atomic_fetch_add_explicit(&s->users, 1, memory_order_acquire);
	/* keys with a common prefix are one range: position at its start */
	MDB_val k = { prefix_len, (void *)prefix }, v;
	MDB_cursor_op op = prefix_len ? MDB_SET_RANGE : MDB_FIRST;
	int ret = DNSNAP_OK;
	while ((rc = mdb_cursor_get(cur, &k, &v, op)) == 0) {
		op = MDB_NEXT;
		if (!in_data(s, k.mv_data, k.mv_size) || !in_data(s, v.mv_data, v.mv_size)) {
			ret = DNSNAP_ECHECKSUM;
			break;
		}
		if (prefix_len && (k.mv_size < prefix_len || memcmp(k.mv_data, prefix, prefix_len) != 0))
			break; /* past the range */
		if ((ret = fn(arg, k.mv_data, k.mv_size, v.mv_data, v.mv_size)) != 0)
			break;
	}
	if (ret == DNSNAP_OK && rc != 0 && rc != MDB_NOTFOUND)
		ret = DNSNAP_ELMDB;
	atomic_fetch_sub_explicit(&s->users, 1, memory_order_release);
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	return ret;
}

int dnsnap_snap_foreach(dnsnap_snap_t *s,
			int (*fn)(void *arg, const uint8_t *key, size_t key_len,
				  const uint8_t *entry, size_t entry_len),
			void *arg)
{
	return dnsnap_snap_foreach_prefix(s, NULL, 0, fn, arg);
}
