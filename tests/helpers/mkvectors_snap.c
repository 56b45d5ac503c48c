/*
 * mkvectors_snap.c: make vectors' snapshot vectors (4NN, .snap + .err) and L2
 * value vectors (5NN, .l2 + .txt or .err).
 *
 * The snapshots are built page by page from spec/FORMAT.md ("Snapshot",
 * "LMDB's pages, as a reader needs them"), not by dnsnap's writer: so they
 * are the same bytes on every run (a fixed Created_At, Writer and index Seed)
 * and make vectors reproduces them. liblmdb reads the two valid ones back (a
 * check that they are LMDB files), and every invalid one is a copy of one of
 * them with one thing damaged. Each .err is written from the damage made
 * here and the rules of "Reporting damage" (the comments say which), not
 * from what the library says; the library's report (vecreport.c) is
 * compared, and a disagreement fails make vectors.
 *
 * The L2 values are framed from "L2 value" (its worked example among them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lmdb.h>
#include <xxhash.h>

#include "byteorder.h"
#include "mkvectors.h"
#include "print.h"
#include "vecreport.h"
#include "wb.h"

#define PS 4096                 /* the page size the vectors are written with */
#define MAXP 40                 /* pages, at most */
#define NENT 12                 /* entries of the base snapshots */
#define NLEAF 3                 /* their leaves, 4 entries each */
#define P_BRANCH 0x01
#define P_LEAF 0x02
#define P_OVERFLOW 0x04
#define P_META 0x08
#define F_BIGDATA 0x01
#define F_SUBDATA 0x02
#define P_INVALID UINT64_MAX
#define SEED 0x0123456789abcdefull /* the index's Seed: fixed, for make vectors */
#define WRITER "dnsnap mkvectors on spec"

/* ------------------------------------------------------------ LMDB pages */

/* A snapshot being built: its bytes and where its parts are (file offsets). */
typedef struct snap {
	uint8_t b[MAXP * PS + 24];
	size_t np, size, data_len;
	const vec_t *e[NENT];    /* the entries, in key order */
	size_t node[NENT];       /* each one's leaf node */
	size_t val[NENT], vlen[NENT]; /* its value (the entry, then its Value_Check) */
	uint64_t leaf[NLEAF], root, main_leaf, meta_leaf, ovf;
	size_t big;              /* the entry on overflow pages */
	size_t main_rec;         /* the main database's record in meta page 1 */
	size_t ent_rec, meta_rec; /* the entries and meta databases' records */
	size_t meta_off, meta_len; /* the meta record, without its Value_Check */
	size_t idx_node, idx_off, idx_len; /* the index record (0: none) */
} snap_t;

/* How a base snapshot departs from the plain one. */
typedef struct shape {
	int index;               /* format 2.1 with the index record; else 2.0 */
	int third_db;            /* a third database, "other", in the main database */
	int no_meta;             /* the meta database without its "meta" record */
	size_t meta_cut;         /* the meta record cut to this many bytes */
	size_t idx_cut;          /* the index record cut to this many bytes */
	const uint8_t *meta_tlv; /* bytes after Writer: meta TLVs */
	size_t meta_tlv_n;
} shape_t;

static int key_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	int c = memcmp(a, b, al < bl ? al : bl);
	return c != 0 ? c : al < bl ? -1 : al > bl;
}

static uint8_t *page(snap_t *sv, uint64_t pgno)
{
	return sv->b + pgno * PS;
}

static uint64_t page_new(snap_t *sv, unsigned flags)
{
	if (sv->np == MAXP) {
		fprintf(stderr, "mkvectors: a snapshot vector has too many pages\n");
		exit(1);
	}
	uint64_t n = sv->np++;
	uint8_t *p = page(sv, n);
	memset(p, 0, PS);
	st64le(p, n);
	st16le(p + 10, (uint16_t)flags);
	st16le(p + 12, 16);
	st16le(p + 14, PS);
	return n;
}

/* A node at the bottom of page @p pgno's free space, its offset next in the
 * page's list, as LMDB adds them: lo, hi (@p lohi), flags, ksize, key, data,
 * the whole rounded up to an even size. @return its file offset */
static size_t node_new(snap_t *sv, uint64_t pgno, const uint8_t *key, size_t kl, uint32_t lohi,
		       unsigned flags, const void *data, size_t dl)
{
	uint8_t *p = page(sv, pgno);
	size_t lower = ld16le(p + 12), upper = ld16le(p + 14), sz = (8 + kl + dl + 1) & ~(size_t)1;
	if (lower + 2 + sz > upper) {
		fprintf(stderr, "mkvectors: a snapshot vector's page %llu is full\n",
			(unsigned long long)pgno);
		exit(1);
	}
	upper -= sz;
	uint8_t *n = p + upper;
	st32le(n, lohi);
	st16le(n + 4, (uint16_t)flags);
	st16le(n + 6, (uint16_t)kl);
	if (kl > 0)
		memcpy(n + 8, key, kl);
	if (dl > 0)
		memcpy(n + 8 + kl, data, dl);
	st16le(p + lower, (uint16_t)upper);
	st16le(p + 12, (uint16_t)(lower + 2));
	st16le(p + 14, (uint16_t)upper);
	return (size_t)(n - sv->b);
}

/* A value on overflow pages: @return the first page's number */
static uint64_t overflow_new(snap_t *sv, const uint8_t *v, size_t n)
{
	size_t pages = (16 + n + PS - 1) / PS;
	uint64_t first = page_new(sv, P_OVERFLOW);
	for (size_t i = 1; i < pages; i++)
		memset(page(sv, page_new(sv, 0)), 0, PS); /* continuation: no header */
	st32le(page(sv, first) + 12, (uint32_t)pages);
	memcpy(page(sv, first) + 16, v, n);
	return first;
}

/* A database record (MDB_db): pad, flags, depth, branch, leaf, overflow
 * pages, entries, root. */
static void db_rec(uint8_t *o, unsigned flags, unsigned depth, uint64_t branch, uint64_t leaf,
		   uint64_t ovf, uint64_t entries, uint64_t root)
{
	memset(o, 0, 48);
	st16le(o + 4, (uint16_t)flags);
	st16le(o + 6, (uint16_t)depth);
	st64le(o + 8, branch);
	st64le(o + 16, leaf);
	st64le(o + 24, ovf);
	st64le(o + 32, entries);
	st64le(o + 40, root);
}

/* Meta page @p pgno: LMDB's magic and data format 1, the free pages'
 * database (its pad: the page size), the main database, last_pg, txnid. */
static void meta_page(snap_t *sv, uint64_t pgno, const uint8_t *main_db, uint64_t last,
		      uint64_t txnid)
{
	uint8_t *p = page(sv, pgno);
	st32le(p + 16, 0xBEEFC0DEu);
	st32le(p + 20, 1);
	st64le(p + 32, 1u << 20); /* mapsize */
	db_rec(p + 40, 0x4008, 0, 0, 0, 0, 0, P_INVALID); /* INTEGERKEY, NOSUBDIR */
	st32le(p + 40, PS);
	memcpy(p + 88, main_db, 48);
	st64le(p + 136, last);
	st64le(p + 144, txnid);
}

static uint32_t value_check(const uint8_t *key, size_t kl, const uint8_t *v, size_t n)
{
	return (uint32_t)XXH3_64bits_withSeed(v, n, XXH3_64bits(key, kl));
}

/* The meta record of @p n entries: 39 bytes, Writer, then @p tlv. */
static size_t meta_record(uint8_t *m, const snap_t *sv, const shape_t *sh)
{
	XXH3_state_t *x = XXH3_createState();
	if (x == NULL)
		exit(1);
	XXH3_64bits_reset(x);
	for (size_t i = 0; i < NENT; i++) {
		uint8_t fr[6];
		st16le(fr, (uint16_t)sv->e[i]->kl);
		st32le(fr + 2, (uint32_t)sv->e[i]->el);
		XXH3_64bits_update(x, fr, 6);
		XXH3_64bits_update(x, sv->e[i]->key, sv->e[i]->kl);
		XXH3_64bits_update(x, sv->e[i]->e, sv->e[i]->el);
	}
	uint64_t digest = XXH3_64bits_digest(x);
	XXH3_freeState(x);
	size_t wl = strlen(WRITER);
	memcpy(m, "\xd5NSP", 4);
	st16le(m + 4, 2);
	st16le(m + 6, sh->index ? 1 : 0);
	st16le(m + 8, (uint16_t)(39 + wl));
	st16le(m + 10, 0);
	st64le(m + 12, NOW);
	st64le(m + 20, NENT);
	m[28] = 1;
	m[29] = 8;
	st64le(m + 30, digest);
	m[38] = (uint8_t)wl;
	memcpy(m + 39, WRITER, wl);
	memcpy(m + 39 + wl, sh->meta_tlv, sh->meta_tlv_n);
	return 39 + wl + sh->meta_tlv_n;
}

/* The index record: its header and 16 slots (12 entries: the smallest power
 * of two of which they are at most 3/4), each entry placed at its home slot
 * or the first empty one after it. */
static size_t index_record(uint8_t *o, const snap_t *sv, const unsigned *at_node)
{
	enum { SLOTS = 16 };
	memset(o, 0, 40 + 8 * SLOTS);
	memcpy(o, "\xd5NSI", 4);
	o[4] = 1;
	o[5] = 1;
	st16le(o + 6, 40);
	st64le(o + 8, SEED);
	st64le(o + 16, SLOTS);
	st64le(o + 24, NENT);
	st64le(o + 32, sv->root);
	for (size_t i = 0; i < NENT; i++) {
		uint64_t h = XXH3_64bits_withSeed(sv->e[i]->key, sv->e[i]->kl, SEED);
		uint64_t pos = h % SLOTS, slot = sv->leaf[i / 4] | (uint64_t)at_node[i] << 32 |
						 (h >> 48) << 48;
		while (ld64le(o + 40 + 8 * pos) != 0)
			pos = (pos + 1) % SLOTS;
		st64le(o + 40 + 8 * pos, slot);
	}
	return 40 + 8 * SLOTS;
}

/* The entries: a branch root over three leaves of four; a value of more
 * than 1024 bytes goes on overflow pages, as LMDB puts large values. */
static void entries_tree(snap_t *sv, unsigned *at_node)
{
	sv->root = page_new(sv, P_BRANCH);
	for (size_t l = 0; l < NLEAF; l++)
		sv->leaf[l] = page_new(sv, P_LEAF);
	static uint8_t v[70004];
	for (size_t i = 0; i < NENT; i++) {
		const vec_t *e = sv->e[i];
		memcpy(v, e->e, e->el);
		st32le(v + e->el, value_check(e->key, e->kl, e->e, e->el));
		sv->vlen[i] = e->el + 4;
		at_node[i] = (unsigned)(i % 4);
		if (sv->vlen[i] > 1024) {
			uint64_t o = overflow_new(sv, v, sv->vlen[i]);
			uint8_t pg[8];
			st64le(pg, o);
			sv->node[i] = node_new(sv, sv->leaf[i / 4], e->key, e->kl,
					       (uint32_t)sv->vlen[i], F_BIGDATA, pg, 8);
			sv->val[i] = (size_t)(o * PS + 16);
			sv->ovf = o;
			sv->big = i;
		} else {
			sv->node[i] = node_new(sv, sv->leaf[i / 4], e->key, e->kl,
					       (uint32_t)sv->vlen[i], 0, v, sv->vlen[i]);
			sv->val[i] = sv->node[i] + 8 + e->kl;
		}
	}
	/* branch node 0: no key (it sorts first); nodes 1, 2: their leaf's first key */
	for (size_t l = 0; l < NLEAF; l++) {
		const vec_t *first = sv->e[4 * l];
		node_new(sv, sv->root, first->key, l ? first->kl : 0, (uint32_t)sv->leaf[l], 0,
			 NULL, 0);
	}
}

static void build(snap_t *sv, const vec_t *const *ents, const shape_t *sh)
{
	memset(sv, 0, sizeof *sv);
	for (size_t i = 0; i < NENT; i++) { /* insertion sort into key order */
		size_t j = i;
		while (j > 0 && key_cmp(sv->e[j - 1]->key, sv->e[j - 1]->kl, ents[i]->key,
					ents[i]->kl) > 0) {
			sv->e[j] = sv->e[j - 1];
			j--;
		}
		sv->e[j] = ents[i];
	}
	page_new(sv, P_META);
	page_new(sv, P_META);
	sv->main_leaf = page_new(sv, P_LEAF);
	unsigned at_node[NENT];
	entries_tree(sv, at_node);
	size_t ovf_pages = sv->np - 3 - 1 - NLEAF;
	sv->meta_leaf = page_new(sv, P_LEAF);
	static uint8_t rec[70000 + 4096];
	size_t meta_ovf = 0;
	if (sh->index) {
		size_t n = index_record(rec, sv, at_node);
		if (sh->idx_cut)
			n = sh->idx_cut;
		st32le(rec + n, value_check((const uint8_t *)"index", 5, rec, n));
		sv->idx_node = node_new(sv, sv->meta_leaf, (const uint8_t *)"index", 5,
					(uint32_t)(n + 4), 0, rec, n + 4);
		sv->idx_off = sv->idx_node + 8 + 5;
		sv->idx_len = n;
	}
	if (!sh->no_meta) {
		size_t n = meta_record(rec, sv, sh);
		if (sh->meta_cut)
			n = sh->meta_cut;
		st32le(rec + n, value_check((const uint8_t *)"meta", 4, rec, n));
		if (n + 4 > 1024) { /* on overflow pages, as LMDB puts a large value */
			size_t before = sv->np;
			uint64_t o = overflow_new(sv, rec, n + 4);
			meta_ovf = sv->np - before;
			uint8_t pg[8];
			st64le(pg, o);
			node_new(sv, sv->meta_leaf, (const uint8_t *)"meta", 4, (uint32_t)(n + 4),
				 F_BIGDATA, pg, 8);
			sv->meta_off = (size_t)(o * PS + 16);
		} else {
			size_t at = node_new(sv, sv->meta_leaf, (const uint8_t *)"meta", 4,
					     (uint32_t)(n + 4), 0, rec, n + 4);
			sv->meta_off = at + 8 + 4;
		}
		sv->meta_len = n;
	}
	uint8_t db[48];
	db_rec(db, 0, 2, 1, NLEAF, ovf_pages, NENT, sv->root);
	sv->ent_rec = node_new(sv, sv->main_leaf, (const uint8_t *)"entries", 7, 48, F_SUBDATA, db,
			       48) + 8 + 7;
	db_rec(db, 0, 1, 0, 1, meta_ovf, (uint64_t)(!!sh->index + !sh->no_meta), sv->meta_leaf);
	sv->meta_rec = node_new(sv, sv->main_leaf, (const uint8_t *)"meta", 4, 48, F_SUBDATA, db,
				48) + 8 + 4;
	if (sh->third_db) {
		db_rec(db, 0, 0, 0, 0, 0, 0, P_INVALID);
		node_new(sv, sv->main_leaf, (const uint8_t *)"other", 5, 48, F_SUBDATA, db, 48);
	}
	uint8_t empty[48], main_db[48];
	db_rec(empty, 0, 0, 0, 0, 0, 0, P_INVALID);
	db_rec(main_db, 0, 1, 0, 1, 0, sh->third_db ? 3 : 2, sv->main_leaf);
	meta_page(sv, 0, empty, 1, 0); /* the empty environment LMDB starts from */
	meta_page(sv, 1, main_db, sv->np - 1, 1);
	sv->main_rec = PS + 88;
	sv->data_len = sv->np * PS;
	uint8_t *t = sv->b + sv->data_len;
	memcpy(t, "\xd5NST", 4);
	st32le(t + 4, 0);
	st64le(t + 8, sv->data_len);
	st64le(t + 16, XXH3_64bits(sv->b, sv->data_len));
	sv->size = sv->data_len + 24;
}

/* ----------------------------------------------------------- repairs */

/* After a change: the checks that would hide it made right again. */
static void fix_entry(snap_t *sv, size_t i)
{
	const vec_t *e = sv->e[i];
	st32le(sv->b + sv->val[i] + e->el, value_check(e->key, e->kl, sv->b + sv->val[i], e->el));
}

static void fix_meta(snap_t *sv)
{
	st32le(sv->b + sv->meta_off + sv->meta_len,
	       value_check((const uint8_t *)"meta", 4, sv->b + sv->meta_off, sv->meta_len));
}

static void fix_index(snap_t *sv)
{
	st32le(sv->b + sv->idx_off + sv->idx_len,
	       value_check((const uint8_t *)"index", 5, sv->b + sv->idx_off, sv->idx_len));
}

static void fix_hash(snap_t *sv)
{
	st64le(sv->b + sv->data_len + 16, XXH3_64bits(sv->b, sv->data_len));
}

/* Node @p i's offset in the list of page @p pgno (the u16 at 16 + 2i). */
static size_t ptr_at(uint64_t pgno, unsigned i)
{
	return (size_t)(pgno * PS + 16 + 2 * i);
}

static void swap16(snap_t *sv, size_t a, size_t b)
{
	uint16_t x = ld16le(sv->b + a);
	st16le(sv->b + a, ld16le(sv->b + b));
	st16le(sv->b + b, x);
}

/* ----------------------------------------------------------- expectations */

/* What a vector must give, by the rules of "Reporting damage". */
typedef struct want {
	int open;                /* DNSNAP_OK: the lines below follow */
	size_t open_at;
	const char *open_text;
	int scan;
	size_t scan_at;
	unsigned good, damaged;
	int verify;
	size_t verify_at;
	const char *verify_text;
	char gets[NENT + 2];     /* per key in key order, then the absent key: f, m, d */
} want_t;

/* A key of no entry, after every key of the base snapshots (its 63-byte
 * label sorts last): its lookup ends in the last leaf. */
static uint8_t absent_key[1 + 63 + 1 + 6];

static void make_absent_key(void)
{
	absent_key[0] = 63;
	memset(absent_key + 1, 'z', 63);
	memcpy(absent_key + 64, "\0\0\1\0\1\0\0", 7);
}

/* A vector that opens and reads good, as a start for those that do not. */
static want_t all_good(void)
{
	want_t w = { .open = DNSNAP_OK, .scan = DNSNAP_OK, .good = NENT, .verify = DNSNAP_OK };
	memset(w.gets, 'f', NENT);
	w.gets[NENT] = 'm';
	return w;
}

static want_t refused(int err, size_t at, const char *text)
{
	return (want_t){ .open = err, .open_at = at, .open_text = text };
}

static void put_hex(FILE *f, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", p[i]);
}

static char *err_text(const snap_t *sv, const want_t *w)
{
	static char *text;
	size_t len;
	free(text);
	FILE *f = open_memstream(&text, &len);
	if (f == NULL)
		exit(1);
	if (w->open != DNSNAP_OK) {
		fprintf(f, "open %s %zu%s%s\n", dnsnap_errname(w->open), w->open_at,
			w->open_text ? " " : "", w->open_text ? w->open_text : "");
		fclose(f);
		return text;
	}
	fprintf(f, "open DNSNAP_OK\n");
	if (w->scan == DNSNAP_OK)
		fprintf(f, "scan DNSNAP_OK - entries %u damaged %u\n", w->good, w->damaged);
	else
		fprintf(f, "scan %s %zu entries %u damaged %u\n", dnsnap_errname(w->scan),
			w->scan_at, w->good, w->damaged);
	if (w->verify == DNSNAP_OK)
		fprintf(f, "verify DNSNAP_OK\n");
	else
		fprintf(f, "verify %s %zu%s%s\n", dnsnap_errname(w->verify), w->verify_at,
			w->verify_text ? " " : "", w->verify_text ? w->verify_text : "");
	static const char *const word[] = { ['f'] = "found", ['m'] = "miss", ['d'] = "damaged" };
	for (size_t i = 0; i <= NENT; i++) {
		fprintf(f, "get ");
		if (i < NENT)
			put_hex(f, sv->e[i]->key, sv->e[i]->kl);
		else
			put_hex(f, absent_key, sizeof absent_key);
		fprintf(f, " %s\n", word[(unsigned char)w->gets[i]]);
	}
	fclose(f);
	return text;
}

static FILE *snmd; /* snapshots.md: the table of the spec's "Snapshot vectors" */

static void compare(const char *name, const char *ext, const char *want)
{
	char path[512], got[VECREPORT_MAX], why[VECREPORT_MAX + 128];
	snprintf(path, sizeof path, "%s/invalid/%s.%s", mkv_dir, name, ext);
	vecreport_key_t keys[VECREPORT_KEYS];
	size_t nk = vecreport_keys(want, keys, VECREPORT_KEYS);
	vecreport_snap(path, keys, nk, got, sizeof got);
	if (vecreport_compare(want, got, why, sizeof why) != 0) {
		fprintf(stderr, "mkvectors: %s: %s\n", name, why);
		mkv_mismatches++;
	}
}

/* The table's last column: the lines that say the most. */
static void summary(FILE *f, const want_t *w)
{
	if (w->open != DNSNAP_OK) {
		fprintf(f, "open `%s %zu`", dnsnap_errname(w->open), w->open_at);
		return;
	}
	if (w->scan != DNSNAP_OK)
		fprintf(f, "scan `%s %zu`, %u good, %u damaged; ", dnsnap_errname(w->scan),
			w->scan_at, w->good, w->damaged);
	else
		fprintf(f, "scan good (%u); ", w->good);
	if (w->verify != DNSNAP_OK)
		fprintf(f, "verify `%s %zu`", dnsnap_errname(w->verify), w->verify_at);
	else
		fprintf(f, "verify good");
	unsigned m = 0, d = 0;
	for (size_t i = 0; i < NENT; i++)
		m += w->gets[i] == 'm', d += w->gets[i] == 'd';
	if (m || d)
		fprintf(f, "; lookups: %u miss%s, %u damaged", m, m == 1 ? "" : "es", d);
}

static void invalid_snap(const char *name, const snap_t *sv, const want_t *w, const char *what)
{
	mkv_write("invalid", name, "snap", sv->b, sv->size);
	const char *text = err_text(sv, w);
	mkv_write("invalid", name, "err", text, strlen(text));
	compare(name, "snap", text);
	fprintf(snmd, "| `invalid/%s` | %s | ", name, what);
	summary(snmd, w);
	fprintf(snmd, " |\n");
}

/* ---------------------------------------------------------------- valid */

/* liblmdb reads the file back: every entry under its key, in key order,
 * and the meta record (the layout is LMDB's, not only what dnsnap reads). */
static void lmdb_reads_back(const char *name, const snap_t *sv)
{
	char path[512];
	snprintf(path, sizeof path, "%s/valid/%s.snap", mkv_dir, name);
	MDB_env *env = NULL;
	MDB_txn *txn = NULL;
	MDB_dbi dbi, mdbi;
	MDB_cursor *c = NULL;
	MDB_val k, v;
	int rc = mdb_env_create(&env), n = 0, bad = 0;
	if (rc == 0)
		rc = mdb_env_set_maxdbs(env, 4);
	if (rc == 0)
		rc = mdb_env_open(env, path, MDB_NOSUBDIR | MDB_RDONLY | MDB_NOLOCK, 0600);
	if (rc == 0)
		rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
	if (rc == 0)
		rc = mdb_dbi_open(txn, "entries", 0, &dbi);
	if (rc == 0)
		rc = mdb_cursor_open(txn, dbi, &c);
	for (int op = MDB_FIRST; rc == 0 && mdb_cursor_get(c, &k, &v, op) == 0; op = MDB_NEXT) {
		const vec_t *e = n < NENT ? sv->e[n] : NULL;
		if (e == NULL || k.mv_size != e->kl || memcmp(k.mv_data, e->key, e->kl) != 0 ||
		    v.mv_size != e->el + 4 || memcmp(v.mv_data, e->e, e->el) != 0)
			bad++;
		n++;
	}
	if (rc == 0)
		rc = mdb_dbi_open(txn, "meta", 0, &mdbi);
	k = (MDB_val){ 4, (void *)"meta" };
	if (rc == 0)
		rc = mdb_get(txn, mdbi, &k, &v);
	if (rc == 0 && (v.mv_size != sv->meta_len + 4 ||
			memcmp(v.mv_data, sv->b + sv->meta_off, v.mv_size) != 0))
		bad++;
	mdb_cursor_close(c);
	mdb_txn_abort(txn);
	mdb_env_close(env);
	if (rc != 0 || bad != 0 || n != NENT) {
		fprintf(stderr, "mkvectors: %s: liblmdb reads it otherwise (%s, %d of %d entries "
			"differ or are missing)\n", name, rc ? mdb_strerror(rc) : "ok",
			bad + NENT - n, NENT);
		mkv_mismatches++;
	}
}

static void valid_snap(const char *name, const snap_t *sv, const char *what)
{
	mkv_write("valid", name, "snap", sv->b, sv->size);
	char *txt;
	size_t tlen;
	FILE *f = open_memstream(&txt, &tlen);
	for (size_t i = 0; i < NENT; i++)
		print_entry(f, sv->e[i]->key, sv->e[i]->kl, sv->e[i]->e, sv->e[i]->el);
	fclose(f);
	mkv_write("valid", name, "txt", txt, tlen);
	free(txt);
	lmdb_reads_back(name, sv);
	/* and the library: opens, scans all, verifies, finds every key */
	want_t w = all_good();
	const char *want = err_text(sv, &w);
	char path[512], got[VECREPORT_MAX], why[VECREPORT_MAX + 128];
	snprintf(path, sizeof path, "%s/valid/%s.snap", mkv_dir, name);
	vecreport_key_t keys[VECREPORT_KEYS];
	vecreport_snap(path, keys, vecreport_keys(want, keys, VECREPORT_KEYS), got, sizeof got);
	if (vecreport_compare(want, got, why, sizeof why) != 0) {
		fprintf(stderr, "mkvectors: %s: %s\n", name, why);
		mkv_mismatches++;
	}
	fprintf(snmd, "| `valid/%s` | %s | opens, %u entries, verifies |\n", name, what, NENT);
}

/* A TXT of 20 strings of 250 bytes: an entry of 5067 bytes, on overflow pages. */
static vec_t big_txt(void)
{
	static wb_t m;
	put_header(&m, 0x8180, 1, 1, 0, 0);
	put_name(&m, "big.example.com");
	put_u16(&m, 16);
	put_u16(&m, 1);
	put_ptr(&m, 12);
	size_t rl = put_fixed(&m, 16, 1, 3600);
	for (int s = 0; s < 20; s++) {
		put_u8(&m, 250);
		for (int i = 0; i < 250; i++)
			put_u8(&m, 'a' + (s + i) % 26);
	}
	end_rdata(&m, rl);
	return mkv_encode(m.b, m.n);
}

/* ------------------------------------------------------------- vectors */

static snap_t b20, b21, sv; /* the 2.0 and 2.1 bases, and the vector being made */

static void p16(size_t at, uint16_t v) { st16le(sv.b + at, v); }
static void p32(size_t at, uint32_t v) { st32le(sv.b + at, v); }
static void p64(size_t at, uint64_t v) { st64le(sv.b + at, v); }

/* Each opening check of "Reporting damage", in its order, on the 2.0 base
 * (the File_Hash made right after the damage, so it is the one thing wrong). */
static void opening_vectors(void)
{
	const size_t mp = PS; /* meta page 1, the current one (txnid 1 against 0) */
	sv = b20, sv.b[16] ^= 0x01, fix_hash(&sv);
	want_t w = refused(DNSNAP_EMAGIC, 16, "not a snapshot");
	invalid_snap("411-snapshot-not-lmdb", &sv, &w, "page 0's `magic` with a bit flipped");
	sv = b20, p32(20, 2), fix_hash(&sv);
	w = refused(DNSNAP_EVERSION, 20, "LMDB data format 2, this dnsnap reads 1");
	invalid_snap("412-snapshot-lmdb-format-2", &sv, &w, "page 0's `version` 2");
	sv = b20, p32(40, 1000), fix_hash(&sv);
	w = refused(DNSNAP_EFIELD, 40, NULL);
	invalid_snap("413-snapshot-page-size-1000", &sv, &w, "the page size at 40 is 1000");
	sv = b20, p64(sv.data_len + 8, sv.data_len + PS);
	w = refused(DNSNAP_ETRUNC, sv.size - 16, NULL);
	invalid_snap("414-snapshot-trailer-data-len", &sv, &w,
		     "the trailer's `Data_Len` one page more than the file holds");
	sv = b20, sv.size = sv.data_len;
	w = refused(DNSNAP_ETRUNC, sv.size, "without the trailer");
	invalid_snap("415-snapshot-no-trailer", &sv, &w,
		     "the LMDB part alone: no trailer (reported at the file's size, where it "
		     "would start)");
	sv = b20, p16(mp + 10, P_LEAF), fix_hash(&sv);
	w = refused(DNSNAP_ECHECKSUM, mp, NULL);
	invalid_snap("416-snapshot-meta-page-1-flags", &sv, &w, "meta page 1's flags `0x02`");
	sv = b20, p64(mp + 136, sv.np), fix_hash(&sv);
	w = refused(DNSNAP_ETRUNC, mp + 136, "beyond the file");
	invalid_snap("417-snapshot-last-page-past-the-file", &sv, &w,
		     "the current meta page's `last_pg` one past the file's last page");
	sv = b20, p16(sv.main_rec + 4, 0x04), fix_hash(&sv);
	w = refused(DNSNAP_ECHECKSUM, sv.main_rec, NULL);
	invalid_snap("418-snapshot-main-db-flags", &sv, &w,
		     "the main database's record with flags `0x04` (`DNSNAP_ECHECKSUM`, not "
		     "`DNSNAP_EFIELD` as for the named databases)");
	sv = b20, p16(sv.main_rec + 6, 0), fix_hash(&sv);
	w = refused(DNSNAP_ECHECKSUM, sv.main_rec, NULL);
	invalid_snap("419-snapshot-main-db-depth-0", &sv, &w,
		     "the main database's depth 0 with a root page");
	shape_t third = { .third_db = 1 };
	build(&sv, b20.e, &third);
	w = refused(DNSNAP_EMAGIC, mp + 88, "not a dnsnap snapshot");
	invalid_snap("420-snapshot-third-database", &sv, &w,
		     "a third database, `other`, beside `entries` and `meta`");
	size_t ent_node = sv.ent_rec - 8 - 7;
	sv = b20, p16(ent_node + 4, 0), fix_hash(&sv);
	w = refused(DNSNAP_ECHECKSUM, sv.main_leaf * PS, NULL);
	invalid_snap("421-snapshot-main-node-flags", &sv, &w,
		     "the `entries` node's flags 0 instead of `F_SUBDATA`: reported at the main "
		     "database's page");
	sv = b20, sv.b[sv.ent_rec - 1] ^= 0x20, fix_hash(&sv);
	w = refused(DNSNAP_EMAGIC, mp + 88, "not a dnsnap snapshot");
	invalid_snap("422-snapshot-database-name-flipped", &sv, &w,
		     "`entries` spelt `entrieS` (one bit): the lookup finds no `entries`");
	sv = b20, p16(sv.ent_rec + 4, 0x04), fix_hash(&sv);
	w = refused(DNSNAP_EFIELD, sv.ent_rec, "duplicate-sorted data");
	invalid_snap("423-snapshot-entries-db-duplicate-sorted", &sv, &w,
		     "the `entries` database's record with flags `0x04` (`MDB_DUPSORT`)");
	sv = b20, p64(sv.meta_rec + 40, sv.np), fix_hash(&sv);
	w = refused(DNSNAP_ECHECKSUM, sv.meta_rec, NULL);
	invalid_snap("424-snapshot-meta-db-root-past-the-file", &sv, &w,
		     "the `meta` database's root one past the file's last page");
	sv = b20, p16(sv.meta_rec + 6, 0), p64(sv.meta_rec + 16, 0), p64(sv.meta_rec + 32, 0);
	p64(sv.meta_rec + 40, P_INVALID), fix_hash(&sv);
	w = refused(DNSNAP_EMAGIC, sv.meta_rec, "no meta record");
	invalid_snap("425-snapshot-meta-db-empty", &sv, &w,
		     "the `meta` database empty: reported at its record (it has no page)");
	shape_t no_meta = { .index = 1, .no_meta = 1 };
	build(&sv, b20.e, &no_meta);
	w = refused(DNSNAP_EMAGIC, sv.meta_leaf * PS, "no meta record");
	invalid_snap("426-snapshot-no-meta-record", &sv, &w,
		     "the `meta` database holds the index record alone");
	sv = b20, sv.b[sv.meta_off + 3] = 'X', fix_hash(&sv);
	w = refused(DNSNAP_EMAGIC, sv.meta_off, "not a dnsnap snapshot");
	invalid_snap("427-snapshot-meta-magic", &sv, &w,
		     "the meta record's `Magic_Number` `D5 4E 53 58` (its `Value_Check` not made "
		     "right: the magic comes first)");
	sv = b20, sv.b[sv.meta_off + 12] ^= 0x01, fix_hash(&sv);
	w = refused(DNSNAP_ECHECKSUM, sv.meta_off + sv.meta_len, "Value_Check");
	invalid_snap("428-snapshot-meta-value-check", &sv, &w,
		     "a bit of the meta record's `Created_At` flipped");
	sv = b20, p16(sv.meta_off + 8, 38), fix_meta(&sv), fix_hash(&sv);
	w = refused(DNSNAP_ETRUNC, sv.meta_off + 8, NULL);
	invalid_snap("429-snapshot-meta-header-size-38", &sv, &w,
		     "the meta record's `Header_Size` 38");
	sv = b20, p16(sv.meta_off + 10, 1), fix_meta(&sv), fix_hash(&sv);
	w = refused(DNSNAP_ERESERVED, sv.meta_off + 10, NULL);
	invalid_snap("430-snapshot-meta-flags", &sv, &w, "the meta record's `Flags` 1");
	sv = b20, sv.b[sv.meta_off + 28] = 2, sv.b[sv.meta_off + 29] = 4, fix_meta(&sv),
	fix_hash(&sv);
	w = refused(DNSNAP_EFIELD, sv.meta_off + 28, NULL);
	invalid_snap("431-snapshot-meta-digest-type-and-len", &sv, &w,
		     "`Digest_Type` 2 and `Digest_Len` 4: the type is reported");
	static const uint8_t cut_tlv[] = { 0x01, 0x10, 0x00, 'x', 'y' };
	shape_t tlv = { .meta_tlv = cut_tlv, .meta_tlv_n = sizeof cut_tlv };
	build(&sv, b20.e, &tlv);
	w = refused(DNSNAP_ETRUNC, sv.meta_off + 39 + strlen(WRITER), NULL);
	invalid_snap("432-snapshot-meta-tlv-cut", &sv, &w,
		     "a meta TLV announcing 16 bytes, 2 there");
	sv = b20, p64(sv.meta_off + 20, NENT + 1), fix_meta(&sv), fix_hash(&sv);
	w = refused(DNSNAP_ECHECKSUM, sv.ent_rec + 32, NULL);
	invalid_snap("433-snapshot-entry-count-not-lmdbs", &sv, &w,
		     "the meta record's `Entry_Count` 13, LMDB's 12: reported at LMDB's count");
	shape_t cut = { .meta_cut = 20 };
	build(&sv, b20.e, &cut);
	w = refused(DNSNAP_ETRUNC, sv.meta_off + 20, NULL);
	invalid_snap("434-snapshot-meta-record-20-bytes", &sv, &w,
		     "a meta record of 20 bytes, its `Value_Check` right");
	sv = b20, p16(sv.meta_off + 4, 3), fix_hash(&sv);
	w = refused(DNSNAP_EVERSION, sv.meta_off + 4, "snapshot format 3.0, this dnsnap reads 2.x");
	invalid_snap("435-snapshot-format-3", &sv, &w,
		     "`Format_Major` 3 (its `Value_Check` not made right: the version comes "
		     "first)");
	sv = b20, p64(sv.meta_leaf * PS, 99), fix_hash(&sv);
	w = refused(DNSNAP_ECHECKSUM, sv.meta_leaf * PS, "the meta database is damaged");
	invalid_snap("436-snapshot-meta-page-damaged", &sv, &w,
		     "the `meta` database's page with the page number 99");
	sv = b20, p64(144, 5), fix_hash(&sv);
	w = refused(DNSNAP_EMAGIC, 88, "not a dnsnap snapshot");
	invalid_snap("437-snapshot-meta-page-0-newer", &sv, &w,
		     "meta page 0 (the empty environment) with `txnid` 5: it is the current one, "
		     "and its main database is empty");
	static uint8_t big_tlv[3 + 65535] = { 0x80, 0xff, 0xff };
	shape_t big = { .meta_tlv = big_tlv, .meta_tlv_n = sizeof big_tlv };
	build(&sv, b20.e, &big);
	w = refused(DNSNAP_ETOOBIG, sv.meta_off, NULL);
	invalid_snap("438-snapshot-meta-record-over-64-kib", &sv, &w,
		     "a meta record of 65601 bytes (a meta TLV of 65535), on overflow pages: "
		     "more than the 65536 a reader copies");
}

/* The slot of entry @p i in the index (its file offset). */
static size_t slot_of(const snap_t *s, size_t i)
{
	uint64_t h = XXH3_64bits_withSeed(s->e[i]->key, s->e[i]->kl, SEED);
	uint64_t want = s->leaf[i / 4] | (uint64_t)(i % 4) << 32 | (h >> 48) << 48;
	for (size_t k = 0; k < 16; k++)
		if (ld64le(s->b + s->idx_off + 40 + 8 * k) == want)
			return s->idx_off + 40 + 8 * k;
	fprintf(stderr, "mkvectors: entry %zu has no slot\n", i);
	exit(1);
}

/* The index, on the 2.1 base: ignored at open or not, reported by verify. */
static void index_vectors(void)
{
	sv = b21, p32(sv.idx_node, 4000), fix_hash(&sv);
	want_t w = all_good();
	w.verify = DNSNAP_ECHECKSUM, w.verify_at = sv.meta_leaf * PS;
	w.verify_text = "its node in the meta database is damaged";
	invalid_snap("441-snapshot-index-node-damaged", &sv, &w,
		     "the index's node with a data size of 4000 (past its page): ignored at open, "
		     "lookups use the B-tree; reported at the `meta` database's page");
	shape_t cut = { .index = 1, .idx_cut = 39 };
	build(&sv, b21.e, &cut);
	w.verify_at = sv.idx_off, w.verify_text = "cut short";
	invalid_snap("442-snapshot-index-43-bytes", &sv, &w,
		     "an index record of 43 bytes with its `Value_Check`: shorter than 44, ignored "
		     "at open; reported at its first byte");
	/* an occupied slot that no entry's probe reaches: the first empty one, to
	 * node 1 of the first leaf with a fingerprint no key has */
	sv = b21;
	size_t k = 0;
	while (ld64le(sv.b + sv.idx_off + 40 + 8 * k) != 0)
		k++;
	uint64_t fp = 0xffff;
	for (int again = 1; again;) {
		again = 0;
		for (size_t i = 0; i < NENT; i++)
			if (XXH3_64bits_withSeed(sv.e[i]->key, sv.e[i]->kl, SEED) >> 48 == fp)
				fp--, again = 1;
	}
	p64(sv.idx_off + 40 + 8 * k, sv.leaf[0] | (uint64_t)1 << 32 | fp << 48);
	fix_index(&sv), fix_hash(&sv);
	w = all_good();
	w.verify = DNSNAP_ECHECKSUM, w.verify_at = sv.idx_off + 40 + 8 * k;
	w.verify_text = "leads to no entry";
	invalid_snap("443-snapshot-index-stray-slot", &sv, &w,
		     "an empty slot of the index filled (node 1 of the first leaf, a fingerprint "
		     "no key has): reported at the slot");
	/* entry 1's slot names node 2 of its page: its lookup meets another key and
	 * goes on to an empty slot, a miss that is not damage */
	sv = b21;
	size_t s1 = slot_of(&sv, 1);
	p16(s1 + 4, 2), fix_index(&sv), fix_hash(&sv);
	w = all_good();
	w.gets[1] = 'm';
	w.verify = DNSNAP_ECHECKSUM, w.verify_at = sv.node[1];
	w.verify_text = "is not reached through it";
	invalid_snap("444-snapshot-index-slot-wrong-node", &sv, &w,
		     "entry 1's slot names node 2 of the page: entry 1 a miss (not damaged); "
		     "reported at entry 1's node");
	sv = b21, p64(sv.idx_off + 32, sv.leaf[0]), fix_hash(&sv);
	w = all_good();
	w.verify = DNSNAP_ECHECKSUM, w.verify_at = sv.idx_off + 32;
	w.verify_text = "Entries_Root";
	invalid_snap("445-snapshot-index-entries-root", &sv, &w,
		     "the index's `Entries_Root` another page (its `Value_Check` not made right): "
		     "ignored at open; the field is reported, not the `Value_Check`");
}

/* A scan's damage, on the 2.0 base (lookups through the B-tree): the
 * File_Hash made right, so the deep check reports what the scan does. */
static void scan_vectors(void)
{
	size_t l1 = 4; /* leaf 1 holds entries 4-7 */
	sv = b20, sv.b[sv.val[3] + sv.e[3]->el] ^= 0x01, fix_hash(&sv);
	want_t w = all_good();
	w.scan = w.verify = DNSNAP_ECHECKSUM, w.scan_at = w.verify_at = sv.node[3];
	w.good = NENT - 1, w.damaged = 1, w.gets[3] = 'd';
	invalid_snap("451-snapshot-value-check", &sv, &w,
		     "a bit of entry 3's `Value_Check` flipped: reported at its node");
	sv = b20;
	if (sv.e[3]->key[1] != 'c') {
		fprintf(stderr, "mkvectors: 452: entry 3 is not under com.\n");
		exit(1);
	}
	sv.b[sv.node[3] + 8 + 1] ^= 0x08, fix_hash(&sv); /* "com" -> "kom": past leaf 0's range */
	w = all_good();
	w.scan = w.verify = DNSNAP_ECHECKSUM, w.scan_at = w.verify_at = sv.node[3];
	w.good = NENT - 1, w.damaged = 1, w.gets[3] = 'm';
	invalid_snap("452-snapshot-key-bit-flipped", &sv, &w,
		     "a bit of entry 3's key flipped (`com` to `kom`): out of its leaf's range, "
		     "but the `Value_Check` is checked first; the key a miss");
	sv = b20, p16(sv.val[3] + 14, 1), fix_entry(&sv, 3), fix_hash(&sv);
	w = all_good();
	w.scan = w.verify = DNSNAP_EFIELD, w.scan_at = w.verify_at = sv.node[3];
	w.good = NENT - 1, w.damaged = 1, w.gets[3] = 'd';
	invalid_snap("453-snapshot-entry-invalid", &sv, &w,
		     "entry 3 with `Auth_Off` 1 (as 107) under a right `Value_Check`: the "
		     "validator's code, at the node");
	sv = b20, swap16(&sv, ptr_at(sv.leaf[1], 1), ptr_at(sv.leaf[1], 2)), fix_hash(&sv);
	w = all_good();
	w.scan = w.verify = DNSNAP_EFIELD, w.scan_at = w.verify_at = sv.node[l1 + 2];
	w.good = NENT - 2, w.damaged = 2, w.gets[l1 + 1] = w.gets[l1 + 2] = 'm';
	invalid_snap("454-snapshot-keys-swapped-in-leaf", &sv, &w,
		     "leaf 1's node offsets 1 and 2 swapped: both fail their leaf's search "
		     "(`DNSNAP_EFIELD`, first at the node now second); both keys a miss");
	sv = b20, p16(ptr_at(sv.leaf[1], 3), 16), fix_hash(&sv);
	w = all_good();
	w.scan = w.verify = DNSNAP_ECHECKSUM, w.scan_at = w.verify_at = sv.leaf[1] * PS;
	w.good = NENT - 1, w.damaged = 1, w.gets[l1 + 3] = 'd';
	invalid_snap("455-snapshot-last-node-offset", &sv, &w,
		     "leaf 1's last node offset 16 (below `upper`): that node alone lost, "
		     "reported at the page");
	sv = b20, p16(ptr_at(sv.leaf[1], 2), 16), fix_hash(&sv);
	w = all_good();
	w.scan = w.verify = DNSNAP_EFIELD, w.scan_at = w.verify_at = sv.node[l1];
	w.good = NENT - 4, w.damaged = 4;
	memset(w.gets + l1, 'd', 4);
	invalid_snap("456-snapshot-middle-node-offset", &sv, &w,
		     "leaf 1's node offset 2 of 4 set to 16: every search of the leaf meets it, so "
		     "its 3 neighbours fail too (`DNSNAP_EFIELD`, first at node 0)");
	sv = b20, p64(sv.leaf[1] * PS, 99), fix_hash(&sv);
	w = all_good();
	w.scan = w.verify = DNSNAP_ECHECKSUM, w.scan_at = w.verify_at = sv.leaf[1] * PS;
	w.good = NENT - 4, w.damaged = 4;
	memset(w.gets + l1, 'd', 4);
	invalid_snap("457-snapshot-leaf-page-damaged", &sv, &w,
		     "leaf 1's page number 99: its 4 entries lost, counted by `Entry_Count`");
	sv = b20, swap16(&sv, ptr_at(sv.root, 1), ptr_at(sv.root, 2)), fix_hash(&sv);
	w = all_good();
	w.scan = w.verify = DNSNAP_ECHECKSUM, w.scan_at = w.verify_at = sv.root * PS;
	w.good = 0, w.damaged = NENT;
	memset(w.gets + 8, 'm', 4);
	invalid_snap("458-snapshot-branch-keys-out-of-order", &sv, &w,
		     "the root's node offsets 1 and 2 swapped: the whole tree lost to scans "
		     "(`DNSNAP_ECHECKSUM` at the branch page); lookups still find leaves 0 and 1");
	sv = b20, p32(sv.root * PS + ld16le(sv.b + ptr_at(sv.root, 2)), (uint32_t)sv.leaf[1]);
	fix_hash(&sv);
	w = all_good();
	w.scan = w.verify = DNSNAP_EFIELD, w.scan_at = w.verify_at = sv.node[l1];
	w.good = NENT - 4, w.damaged = 4;
	memset(w.gets + 8, 'm', 4);
	invalid_snap("459-snapshot-child-in-another-range", &sv, &w,
		     "the root's node 2 leads to leaf 1 again: read a second time, its keys lie "
		     "outside the range (`DNSNAP_EFIELD` at each node); leaf 2 never read");
	size_t n2 = sv.root * PS + ld16le(b20.b + ptr_at(b20.root, 2));
	sv = b20, p32(n2, 99), fix_hash(&sv);
	w = all_good();
	w.scan = w.verify = DNSNAP_ECHECKSUM, w.scan_at = w.verify_at = n2;
	w.good = NENT - 4, w.damaged = 4;
	memset(w.gets + 8, 'd', 5); /* the absent key's search goes there too */
	invalid_snap("467-snapshot-child-past-the-file", &sv, &w,
		     "the root's node 2 leads to page 99, past the file: reported at that node, "
		     "leaf 2's entries lost");
	sv = b20, p64(sv.meta_off + 20, NENT + 1), p64(sv.ent_rec + 32, NENT + 1), fix_meta(&sv);
	fix_hash(&sv);
	w = all_good();
	w.scan = w.verify = DNSNAP_ECHECKSUM, w.scan_at = w.verify_at = sv.meta_off + 20;
	w.damaged = 1;
	invalid_snap("460-snapshot-walk-short-of-entry-count", &sv, &w,
		     "`Entry_Count` 13 in the meta record and in LMDB's record, 12 entries: the "
		     "walk counts the missing one damaged");
	sv = b20, p64(sv.meta_off + 20, NENT - 1), p64(sv.ent_rec + 32, NENT - 1), fix_meta(&sv);
	fix_hash(&sv);
	w = all_good();
	w.scan = w.verify = DNSNAP_ECHECKSUM, w.scan_at = w.verify_at = sv.meta_off + 20;
	invalid_snap("461-snapshot-walk-past-entry-count", &sv, &w,
		     "`Entry_Count` 11 in both, 12 entries: reported, none counted damaged");
	sv = b20, p16(sv.ovf * PS + 10, P_LEAF), fix_hash(&sv);
	w = all_good();
	w.scan = w.verify = DNSNAP_ECHECKSUM, w.scan_at = w.verify_at = sv.node[sv.big];
	w.good = NENT - 1, w.damaged = 1, w.gets[sv.big] = 'd';
	invalid_snap("462-snapshot-overflow-page-damaged", &sv, &w,
		     "the big entry's overflow page with the flags of a leaf: reported at its "
		     "node");
	sv = b20, sv.b[sv.meta_off + 30] ^= 0x01, fix_meta(&sv), fix_hash(&sv);
	w = all_good();
	w.verify = DNSNAP_ECHECKSUM, w.verify_at = sv.meta_off + 30, w.verify_text = "digest";
	invalid_snap("463-snapshot-digest", &sv, &w,
		     "a bit of the meta record's `Digest` flipped (its `Value_Check` right)");
	sv = b20;
	const uint8_t *l0 = page(&sv, sv.leaf[0]);
	sv.b[sv.leaf[0] * PS + (ld16le(l0 + 12) + ld16le(l0 + 14)) / 2] ^= 0x01;
	w = all_good();
	w.verify = DNSNAP_ECHECKSUM, w.verify_at = sv.data_len + 16, w.verify_text = "File_Hash";
	invalid_snap("464-snapshot-free-space-bit", &sv, &w,
		     "a bit flipped in leaf 0's free space: only `File_Hash` sees it");
	sv = b20, sv.b[sv.val[3] + sv.e[3]->el] ^= 0x01;
	w = all_good();
	w.scan = DNSNAP_ECHECKSUM, w.scan_at = sv.node[3], w.good = NENT - 1, w.damaged = 1;
	w.verify = DNSNAP_ECHECKSUM, w.verify_at = sv.data_len + 16, w.gets[3] = 'd';
	invalid_snap("465-snapshot-value-check-and-file-hash", &sv, &w,
		     "as 451, the `File_Hash` not made right: the deep check reports it first");
	/* the root with 10 children, all leaf 0, under keys 3-11: the walk enters
	 * 11 pages of a file of 10 and stops there. Child 0 ([-, key 3)) gives
	 * entries 0-2 and refuses 3; child 1 ([key 3, key 4)) refuses 0-2 and
	 * gives 3; children 2-8 refuse all four; child 9 is not read. */
	sv = b20;
	if (sv.np != 10) {
		fprintf(stderr, "mkvectors: 466 counts on a file of 10 pages, not %zu\n", sv.np);
		exit(1);
	}
	uint8_t *r = page(&sv, sv.root);
	memset(r + 16, 0, PS - 16);
	st16le(r + 12, 16), st16le(r + 14, PS);
	node_new(&sv, sv.root, NULL, 0, (uint32_t)sv.leaf[0], 0, NULL, 0);
	for (size_t i = 3; i < NENT; i++)
		node_new(&sv, sv.root, sv.e[i]->key, sv.e[i]->kl, (uint32_t)sv.leaf[0], 0, NULL, 0);
	fix_hash(&sv);
	w = all_good();
	w.scan = w.verify = DNSNAP_EFIELD, w.scan_at = w.verify_at = sv.node[3];
	w.good = 4, w.damaged = 1 + 3 + 7 * 4;
	memset(w.gets + 4, 'm', NENT - 4);
	invalid_snap("466-snapshot-leaf-linked-ten-times", &sv, &w,
		     "the root's 10 children all leaf 0: the walk stops after entering as many "
		     "pages as the file has; what was refused on the way is counted");
}

/* DIR/name (snapshots.md, l2values.md): a table of the spec, its head written */
static FILE *table(const char *name, const char *what)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", mkv_dir, name);
	FILE *f = fopen(path, "w");
	if (f == NULL) {
		perror(path);
		exit(1);
	}
	fprintf(f, "| Vector | %s | Expected |\n|---|---|---|\n", what);
	return f;
}

void mkv_snapshots(void)
{
	snmd = table("snapshots.md", "Snapshot");
	make_absent_key();
	/* the valid vectors 001-003, 005-008, 010 and 011 (004 and 009 share 001's
	 * key), 001's and 005's keys with CD set, and a big TXT */
	static vec_t v[NENT];
	static const size_t items[] = { 0, 1, 2, 4, 5, 6, 7, 9, 10, 0, 4 };
	const vec_t *all[NENT];
	for (size_t i = 0; i < sizeof items / sizeof items[0]; i++)
		v[i] = mkv_base(items[i]);
	v[9].key[v[9].kl - 2] = 0x01; /* Flags: CD */
	v[10].key[v[10].kl - 2] = 0x01;
	v[11] = big_txt();
	for (size_t i = 0; i < NENT; i++)
		all[i] = &v[i];
	shape_t s20 = { 0 }, s21 = { .index = 1 };
	build(&b20, all, &s20);
	build(&b21, all, &s21);
	valid_snap("409-snapshot-format-2-0", &b20,
		   "format 2.0, no index: 12 entries (vectors 001-003, 005-008, 010, 011, 001's "
		   "and 005's keys with CD set, a TXT of 5067 bytes on two overflow pages) in "
		   "three leaves under a branch root");
	valid_snap("410-snapshot-format-2-1", &b21, "409 as format 2.1, with its index (16 slots)");
	opening_vectors();
	index_vectors();
	scan_vectors();
	fclose(snmd);
}

/* ------------------------------------------------------------ L2 values */

static FILE *l2md; /* l2values.md */

/* Key_Len u16 LE | Key | Value, into buf */
static size_t l2_file(uint8_t *buf, const vec_t *k, const uint8_t *val, size_t n)
{
	st16le(buf, (uint16_t)k->kl);
	memcpy(buf + 2, k->key, k->kl);
	if (n > 0)
		memcpy(buf + 2 + k->kl, val, n);
	return 2 + k->kl + n;
}

/* The value of entry @p e under key @p k, version 1.minor */
static size_t l2_seal(uint8_t *out, const vec_t *k, const vec_t *e, unsigned minor)
{
	memcpy(out, "\xd5NSL", 4);
	out[4] = 1;
	out[5] = (uint8_t)minor;
	memcpy(out + 6, e->e, e->el);
	st64le(out + 6 + e->el, XXH3_64bits_withSeed(out, 6 + e->el, XXH3_64bits(k->key, k->kl)));
	return 6 + e->el + 8;
}

static void l2_check(const char *sub, const char *name, const uint8_t *f, size_t n,
		     const char *want)
{
	char got[128];
	vecreport_l2(f, n, got, sizeof got);
	if (strcmp(got, want) != 0) {
		fprintf(stderr, "mkvectors: %s/%s: expected %s   the library says %s", sub, name,
			want, got);
		mkv_mismatches++;
	}
}

static void valid_l2(const char *name, const vec_t *k, const uint8_t *val, size_t n,
		     const vec_t *e, const char *what)
{
	static uint8_t f[2 + DNSNAP_KEY_MAX + DNSNAP_L2_VALUE_MAX + 8];
	size_t fl = l2_file(f, k, val, n);
	mkv_write("valid", name, "l2", f, fl);
	char *txt;
	size_t tlen;
	FILE *t = open_memstream(&txt, &tlen);
	print_entry(t, k->key, k->kl, e->e, e->el);
	fclose(t);
	mkv_write("valid", name, "txt", txt, tlen);
	free(txt);
	l2_check("valid", name, f, fl, "DNSNAP_OK\n");
	fprintf(l2md, "| `valid/%s` | %s | opens, %zu-byte entry |\n", name, what, e->el);
}

static void invalid_l2(const char *name, const vec_t *k, const uint8_t *val, size_t n, int err,
		       size_t off, const char *what)
{
	static uint8_t f[2 + DNSNAP_KEY_MAX + DNSNAP_L2_VALUE_MAX + 8];
	char line[64];
	size_t fl = l2_file(f, k, val, n);
	snprintf(line, sizeof line, "%s %zu\n", dnsnap_errname(err), off);
	mkv_write("invalid", name, "l2", f, fl);
	mkv_write("invalid", name, "err", line, strlen(line));
	l2_check("invalid", name, f, fl, line);
	fprintf(l2md, "| `invalid/%s` | %s | `%s %zu` |\n", name, what, dnsnap_errname(err), off);
}

void mkv_l2_values(void)
{
	l2md = table("l2values.md", "Value");
	static uint8_t val[DNSNAP_L2_VALUE_MAX + 8];
	static vec_t a, aaaa, big, bad;
	a = mkv_base(0), aaaa = mkv_base(1), big = big_txt();
	/* the worked example of "L2 value": 45 bytes, L2_Check 0xd773652ecc885d91 */
	size_t n = l2_seal(val, &a, &a, 0);
	if (n != 45 || ld64le(val + 37) != 0xd773652ecc885d91ull) {
		fprintf(stderr, "mkvectors: the L2 value's worked example differs\n");
		mkv_mismatches++;
	}
	valid_l2("501-l2-worked-example", &a, val, n, &a,
		 "the [worked example](#l2-value): vector 001 under its key");
	valid_l2("502-l2-minor-7", &aaaa, val, l2_seal(val, &aaaa, &aaaa, 7), &aaaa,
		 "vector 002 as version 1.7 (a later minor reads as 1.0)");
	valid_l2("503-l2-big-entry", &big, val, l2_seal(val, &big, &big, 0), &big,
		 "the TXT of 5067 bytes of the snapshot vectors");
	invalid_l2("511-l2-empty", &a, val, 0, DNSNAP_ETRUNC, 0, "no bytes");
	invalid_l2("512-l2-magic-cut", &a, (const uint8_t *)"\xd5NS", 3, DNSNAP_ETRUNC, 0,
		   "`D5 4E 53`: a magic cut short is not compared");
	n = l2_seal(val, &a, &a, 0);
	val[3] = 'P';
	invalid_l2("513-l2-snapshot-magic", &a, val, n, DNSNAP_EMAGIC, 0,
		   "501 with a snapshot's magic, `D5 4E 53 50`");
	n = l2_seal(val, &a, &a, 0);
	invalid_l2("514-l2-header-cut", &a, val, 5, DNSNAP_ETRUNC, 5,
		   "the magic and `Value_Major` alone: cut where `Value_Minor` starts");
	n = l2_seal(val, &a, &a, 0);
	val[4] = 2;
	invalid_l2("515-l2-major-2", &a, val, n, DNSNAP_EVERSION, 4, "501 with `Value_Major` 2");
	invalid_l2("516-l2-major-2-header-only", &a, val, 6, DNSNAP_EVERSION, 4,
		   "the 6 header bytes alone, `Value_Major` 2: the version comes before the "
		   "length");
	n = l2_seal(val, &a, &a, 0);
	memset(val + 6, 0, DNSNAP_L2_VALUE_MAX + 1 - 6);
	invalid_l2("517-l2-too-big", &a, val, DNSNAP_L2_VALUE_MAX + 1, DNSNAP_ETOOBIG,
		   DNSNAP_L2_VALUE_MAX, "a 1.0 header and zeros, one byte over the largest value "
		   "(`6 + DNSNAP_ENTRY_MAX + 8`): reported where that byte is");
	val[3] = 'P';
	invalid_l2("518-l2-too-big-snapshot-magic", &a, val, DNSNAP_L2_VALUE_MAX + 1,
		   DNSNAP_EMAGIC, 0, "517 with a snapshot's magic: the magic comes first");
	n = l2_seal(val, &a, &a, 0);
	invalid_l2("519-l2-31-bytes", &a, val, 31, DNSNAP_ETRUNC, 31,
		   "501 cut to 31 bytes, one short of a frame around the smallest entry: "
		   "reported at its end");
	n = l2_seal(val, &a, &a, 0);
	val[n - 1] ^= 0x80;
	invalid_l2("520-l2-check-flipped", &a, val, n, DNSNAP_ECHECKSUM, n - 8,
		   "a bit of 501's `L2_Check` flipped");
	n = l2_seal(val, &a, &a, 0);
	invalid_l2("521-l2-under-another-key", &aaaa, val, n, DNSNAP_ECHECKSUM, n - 8,
		   "501's value under vector 002's key");
	n = l2_seal(val, &a, &a, 0);
	val[6 + 27] ^= 0x01;
	invalid_l2("522-l2-entry-bit-flipped", &a, val, n, DNSNAP_ECHECKSUM, n - 8,
		   "a bit of 501's rdata flipped: the check comes before the entry");
	bad = a;
	st16le(bad.e + 14, 1); /* as 107-auth-off-not-on-a-record */
	n = l2_seal(val, &a, &bad, 0);
	invalid_l2("523-l2-entry-invalid", &a, val, n, DNSNAP_EFIELD, 6 + 14,
		   "vector 001's entry with `Auth_Off` 1 (as 107), sealed: the entry's offset "
		   "14, plus 6");
	fclose(l2md);
}
