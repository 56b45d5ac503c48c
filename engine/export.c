/*
 * export.c: the export stream (spec/FORMAT.md, "Export stream"): a snapshot's
 * entries as zstd-compressed, byte-order-free records, and back.
 *
 *   Stream_Header | Record* | End_Record
 *
 * Writing walks the snapshot in key order and compresses as it goes (one
 * input buffer, one output buffer: constant memory). top_n first walks the
 * snapshot once keeping a min-heap of the top_n (Hits, key), sorts the kept
 * keys, then walks again writing those.
 *
 * Reading decompresses into a small window and parses record by record; the
 * entries are appended to a snapshot temporary (dnsnap_snapw_t) as they come,
 * in constant memory, and published only once the end record, the zstd
 * checksum and the end of input are seen; on any error the temporary goes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>
#include <zstd.h>

#include "../format/internal.h"
#include "alloc.h"
#include "dnsnap.h"
#include "expiry.h"
#include "record.h"
#include "snap_internal.h"


#define HDR_FIXED 12
#define END_LEN 18
#define TLV_CREATED_AT 1
#define TLV_WRITER 2
#define TLV_ENTRY_COUNT 3
#define SECTION_KEY_LEN 0xffff

/* ----------------------------------------------------------------- write */

/* The stream being written: zstd in front of the descriptor, the digest of what goes in */
typedef struct zout {
	int fd;
	ZSTD_CCtx *cc;
	uint8_t *in, *out;
	size_t in_len, in_cap, out_cap;
	XXH3_state_t *xs;
	dnsnap_diag_t *d;
	int err;
	/* the records */
	uint64_t n, expect;
	/* top_n: the kept keys, sorted; NULL = all */
	const dnsnap_top_item_t *keep;
	size_t keep_n, keep_i;
	const dnsnap_progress_t *pr;
} zout_t;

static int write_all(zout_t *w, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t k = write(w->fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			int e = k < 0 ? errno : EIO;
			return w->err = dnsnap__diag(w->d, -e, 0, "writing: %s", strerror(e));
		}
		p += k;
		n -= (size_t)k;
	}
	return DNSNAP_OK;
}

/* Compress what is buffered; with ZSTD_e_end, finish the frame. */
static int zout_flush(zout_t *w, ZSTD_EndDirective mode)
{
	ZSTD_inBuffer ib = { w->in, w->in_len, 0 };
	for (;;) {
		ZSTD_outBuffer ob = { w->out, w->out_cap, 0 };
		size_t left = ZSTD_compressStream2(w->cc, &ob, &ib, mode);
		if (ZSTD_isError(left))
			return w->err = dnsnap__diag(w->d, DNSNAP_EZSTD, 0, "compressing: zstd: %s",
						     ZSTD_getErrorName(left));
		if (ob.pos > 0 && write_all(w, w->out, ob.pos) != DNSNAP_OK)
			return w->err;
		if (mode == ZSTD_e_end ? left == 0 : ib.pos == ib.size)
			break;
	}
	w->in_len = 0;
	return DNSNAP_OK;
}

static int zout_put(zout_t *w, const uint8_t *p, size_t n)
{
	while (n > 0) {
		size_t k = w->in_cap - w->in_len < n ? w->in_cap - w->in_len : n;
		memcpy(w->in + w->in_len, p, k);
		w->in_len += k;
		p += k;
		n -= k;
		if (w->in_len == w->in_cap && zout_flush(w, ZSTD_e_continue) != DNSNAP_OK)
			return w->err;
	}
	return DNSNAP_OK;
}

/* Check a record before it is written: key, entry, key order. */
static int kept_cmp_key(const void *a, const void *b)
{
	const dnsnap_top_item_t *x = a, *y = b;
	return dnsnap_key_cmp(x->key, x->key_len, y->key, y->key_len);
}

static int write_rec(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		     size_t entry_len)
{
	zout_t *w = arg;
	if (w->keep != NULL) {
		/* both in key order: advance through the kept keys */
		if (w->keep_i >= w->keep_n)
			return 1; /* done: stop the walk */
		const dnsnap_top_item_t *k = &w->keep[w->keep_i];
		if (k->key_len != key_len || memcmp(k->key, key, key_len) != 0)
			return 0;
		w->keep_i++;
	}
	/* the scan hands over checked keys and entries, in key order */
	uint8_t fr[DNSNAP_FRAME_LEN];
	record_frame(fr, key_len, entry_len);
	record_digest(w->xs, key, key_len, entry, entry_len);
	if (zout_put(w, fr, 6) != DNSNAP_OK || zout_put(w, key, key_len) != DNSNAP_OK ||
	    zout_put(w, entry, entry_len) != DNSNAP_OK)
		return w->err;
	if (++w->n % DNSNAP_PROGRESS_EVERY == 0 && w->pr != NULL && w->pr->fn != NULL)
		w->pr->fn(w->pr->arg, w->n, w->expect);
	return 0;
}

/* top_n, first walk: offer every key to the top list */
static int top_rec(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		   size_t entry_len)
{
	if (key_len > 0 && entry_len >= 12) /* else the second walk reports it, if kept */
		dnsnap_top_add(arg, key, key_len, ld32le(entry + 8));
	return 0;
}

/*
 * A walk of the snapshot for the export. A damaged entry is skipped by the
 * scan; the export then fails after the walk (no end record is written, so
 * what reached the output never imports as good), naming how many.
 */
static int export_scan(dnsnap_snap_t *s, int (*fn)(void *, const uint8_t *, size_t,
						  const uint8_t *, size_t),
		       void *arg, dnsnap_diag_t *d)
{
	dnsnap_scan_stats_t st;
	dnsnap_diag_t sd = { 0 };
	int err = dnsnap_snap_scan(s, NULL, 0, fn, arg, &st, &sd);
	if (err == DNSNAP_OK || err == 1)
		return err;
	if (st.damaged == 0 && st.bad_pages == 0 && sd.msg[0] == 0)
		return err; /* fn's own error (a write): fn said it in d */
	if (st.damaged == 0 && st.bad_pages == 0)
		return dnsnap__diag(d, err, sd.offset, "%s", sd.msg); /* it names the file */
	/* sd.msg names the file: "SNAP: entry 17 (at 0x3f20): ..." */
	const char *path = dnsnap_snap_path(s);
	size_t pl = strlen(path);
	const char *first = strncmp(sd.msg, path, pl) == 0 && sd.msg[pl] == ':' ? sd.msg + pl + 2
										: sd.msg;
	return dnsnap__diag(d, err, sd.offset, "%s: %llu damaged entr%s skipped, no end record "
			    "written (the stream will not import); the first: %s", path,
			    (unsigned long long)st.damaged, st.damaged == 1 ? "y" : "ies", first);
}

static size_t stream_header(uint8_t *h, const dnsnap_snap_info_t *info, uint64_t count)
{
	char writer[128], host[64] = "?";
	gethostname(host, sizeof host - 1);
	int wl = snprintf(writer, sizeof writer, "dnsnap %s on %s", DNSNAP_VERSION, host);
	if (wl < 0 || wl > 127)
		wl = 127;
	size_t o = HDR_FIXED;
	memcpy(h, STREAM_MAGIC, 4);
	st16le(h + 4, DNSNAP_FORMAT_MAJOR);
	st16le(h + 6, DNSNAP_FORMAT_MINOR);
	st16le(h + 10, 0);
	h[o] = TLV_CREATED_AT;
	st16le(h + o + 1, 8);
	st64le(h + o + 3, info->created_at);
	o += 11;
	h[o] = TLV_WRITER;
	st16le(h + o + 1, (uint16_t)wl);
	memcpy(h + o + 3, writer, (size_t)wl);
	o += 3 + (size_t)wl;
	h[o] = TLV_ENTRY_COUNT;
	st16le(h + o + 1, 8);
	st64le(h + o + 3, count);
	o += 11;
	st16le(h + 8, (uint16_t)o);
	return o;
}

int dnsnap_export_write(dnsnap_snap_t *s, int fd, int level, uint64_t top_n,
			const dnsnap_progress_t *pr, dnsnap_diag_t *d)
{
	if (s == NULL || fd < 0)
		return dnsnap__diag(d, DNSNAP_EINVAL, 0, "invalid argument");
	dnsnap_snap_info_t info;
	dnsnap_snap_info(s, &info);
	zout_t w = { .fd = fd, .d = d, .pr = pr };
	dnsnap_top_t top = { 0 };
	int err = DNSNAP_OK;
	if (top_n != 0 && top_n < info.entry_count) {
		if (top_n > SIZE_MAX || dnsnap_top_init(&top, (size_t)top_n) != DNSNAP_OK) {
			err = dnsnap__diag(d, DNSNAP_ENOMEM, 0, "out of memory (top %llu)",
					   (unsigned long long)top_n);
			goto out;
		}
		if ((err = export_scan(s, top_rec, &top, d)) != DNSNAP_OK)
			goto out;
		/* the second walk goes in key order */
		qsort(top.items, top.n, sizeof *top.items, kept_cmp_key);
		w.keep = top.items;
		w.keep_n = top.n;
		w.expect = top.n;
	} else
		w.expect = info.entry_count;

	w.cc = ZSTD_createCCtx();
	w.in_cap = ZSTD_CStreamInSize();
	w.out_cap = ZSTD_CStreamOutSize();
	w.in = dnsnap_malloc(w.in_cap);
	w.out = dnsnap_malloc(w.out_cap);
	w.xs = XXH3_createState();
	if (w.cc == NULL || w.in == NULL || w.out == NULL || w.xs == NULL) {
		err = dnsnap__diag(d, DNSNAP_ENOMEM, 0, "out of memory");
		goto out;
	}
	XXH3_64bits_reset(w.xs);
	size_t zr = ZSTD_CCtx_setParameter(w.cc, ZSTD_c_compressionLevel, level ? level : 3);
	if (!ZSTD_isError(zr))
		zr = ZSTD_CCtx_setParameter(w.cc, ZSTD_c_checksumFlag, 1);
	if (ZSTD_isError(zr)) {
		err = dnsnap__diag(d, DNSNAP_EZSTD, 0, "zstd: %s", ZSTD_getErrorName(zr));
		goto out;
	}
	uint8_t h[HDR_FIXED + 11 + 3 + 127 + 11];
	size_t hl = stream_header(h, &info, w.expect);
	if ((err = zout_put(&w, h, hl)) != DNSNAP_OK)
		goto out;
	err = export_scan(s, write_rec, &w, d);
	if (err == 1 && w.keep != NULL)
		err = DNSNAP_OK; /* stopped after the last kept key */
	if (err == 1)
		err = w.err;
	if (err != DNSNAP_OK)
		goto out; /* no end record: what was written never imports */
	if (w.n != w.expect) {
		err = dnsnap__diag(d, DNSNAP_ECHECKSUM, 0,
				   "%s: %llu entr%s, its meta record says %llu",
				   dnsnap_snap_path(s), (unsigned long long)w.n, w.n == 1 ? "y" : "ies",
				   (unsigned long long)w.expect);
		goto out;
	}
	uint8_t end[END_LEN];
	st16le(end, 0);
	st64le(end + 2, w.n);
	st64le(end + 10, XXH3_64bits_digest(w.xs));
	if (top_n == 0 && XXH3_64bits_digest(w.xs) != info.digest) {
		err = dnsnap__diag(d, DNSNAP_ECHECKSUM, 0, "%s: its digest does not match its "
				   "entries", dnsnap_snap_path(s));
		goto out;
	}
	if ((err = zout_put(&w, end, sizeof end)) != DNSNAP_OK)
		goto out;
	err = zout_flush(&w, ZSTD_e_end);
	if (err == DNSNAP_OK && pr != NULL && pr->fn != NULL)
		pr->fn(pr->arg, w.n, w.expect);
out:
	dnsnap_top_free(&top);
	ZSTD_freeCCtx(w.cc);
	dnsnap_free(w.in);
	dnsnap_free(w.out);
	XXH3_freeState(w.xs);
	return err;
}

/* ------------------------------------------------------------------ read */

typedef struct rdr {
	int fd;
	ZSTD_DCtx *dc;
	uint8_t *in, *out;
	size_t in_cap, out_cap;
	ZSTD_inBuffer ib;
	size_t out_pos, out_len;  /* unread decompressed bytes: out[out_pos, out_len) */
	uint64_t off;             /* bytes of the decompressed stream consumed */
	size_t frame_left;        /* zstd's last hint: 0 = at a frame's end */
	int eof;                  /* no more input */
	int started;              /* some input was seen */
	uint64_t in_bytes;        /* bytes read from fd (the compressed stream) */
	dnsnap_diag_t *d;
} rdr_t;

/*
 * What the first bytes of the input are when they are not a zstd frame: an
 * export stream starts with zstd's magic (28 b5 2f fd) or a skippable frame's
 * (5? 2a 4d 18). The usual mistakes are named: a snapshot (LMDB's magic at
 * byte 16, in either byte order), a packet capture, Unbound's cache text, or
 * the export stream decompressed. DNSNAP_EZSTD, like any data zstd refuses.
 */
static int sniff(rdr_t *r, const uint8_t *p, size_t n)
{
	static const uint8_t zstd_magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
	dnsnap_file_kind_t k = dnsnap_file_kind(p, n);
	/* fewer than 4 bytes (a first read of a pipe may be short): a stream only
	 * if they begin zstd's magic */
	if (k == DNSNAP_FILE_STREAM || (n < 4 && memcmp(p, zstd_magic, n) == 0))
		return DNSNAP_OK; /* zstd judges it */
	const char *what = k == DNSNAP_FILE_OTHER ? "its first bytes are not a zstd frame's"
						  : dnsnap_file_kind_text(k);
	return dnsnap__diag(r->d, DNSNAP_EZSTD, 0, "not an export stream (%s)", what);
}

/* zstd refused the data: where, in the file and in the decompressed data */
static int zstd_bad(rdr_t *r, size_t z, uint64_t at)
{
	return dnsnap__diag(r->d, DNSNAP_EZSTD, (size_t)at, "the compressed data is damaged "
			    "(zstd: %s) within the file's first %llu bytes, at byte %llu of the "
			    "decompressed data", ZSTD_getErrorName(z),
			    (unsigned long long)r->in_bytes, (unsigned long long)at);
}

/* Decompress more; DNSNAP_OK with out_len > out_pos, or 1 at the stream's end. */
static int fill(rdr_t *r)
{
	r->out_pos = r->out_len = 0;
	for (;;) {
		if (r->ib.pos == r->ib.size && !r->eof) {
			ssize_t k;
			do
				k = read(r->fd, r->in, r->in_cap);
			while (k < 0 && errno == EINTR);
			if (k < 0)
				return dnsnap__diag(r->d, -errno, (size_t)r->off, "read: %s",
						    strerror(errno));
			r->ib.src = r->in;
			r->ib.size = (size_t)k;
			r->ib.pos = 0;
			if (k > 0 && !r->started) {
				int e = sniff(r, r->in, (size_t)k);
				if (e != DNSNAP_OK)
					return e;
			}
			r->in_bytes += (uint64_t)k;
			if (k == 0)
				r->eof = 1;
			else
				r->started = 1;
		}
		if (r->ib.pos == r->ib.size && r->eof) {
			/* zstd may still hold output for an empty input call */
			ZSTD_outBuffer ob = { r->out, r->out_cap, 0 };
			ZSTD_inBuffer none = { r->in, 0, 0 };
			size_t z = ZSTD_decompressStream(r->dc, &ob, &none);
			if (ZSTD_isError(z))
				return zstd_bad(r, z, r->off);
			if (ob.pos > 0) {
				r->out_len = ob.pos;
				return DNSNAP_OK;
			}
			return 1;
		}
		ZSTD_outBuffer ob = { r->out, r->out_cap, 0 };
		size_t z = ZSTD_decompressStream(r->dc, &ob, &r->ib);
		if (ZSTD_isError(z))
			return zstd_bad(r, z, r->off + ob.pos);
		r->frame_left = z;
		if (ob.pos > 0) {
			r->out_len = ob.pos;
			return DNSNAP_OK;
		}
	}
}

/* Read exactly n bytes; 1 when the stream ends first (got set to what came). */
static int rd_exact(rdr_t *r, uint8_t *p, size_t n, size_t *got)
{
	size_t g = 0;
	while (g < n) {
		if (r->out_pos == r->out_len) {
			int e = fill(r);
			if (e != DNSNAP_OK) {
				if (got)
					*got = g;
				return e;
			}
		}
		size_t k = r->out_len - r->out_pos < n - g ? r->out_len - r->out_pos : n - g;
		memcpy(p + g, r->out + r->out_pos, k);
		r->out_pos += k;
		r->off += k;
		g += k;
	}
	if (got)
		*got = g;
	return DNSNAP_OK;
}

/*
 * The data ended early, inside or after @p what ("the stream header", "entry
 * 2 of 4": what started at @p at, the diag's offset, the one byte position
 * the message names), and whether the file itself ends inside a zstd frame
 * (a file cut short: zstd hands out nothing of a block it has not whole).
 */
static int cut(rdr_t *r, uint64_t at, const char *what)
{
	char file[96] = "";
	if (r->frame_left != 0)
		snprintf(file, sizeof file, "; the file's %llu bytes end inside a zstd frame",
			 (unsigned long long)r->in_bytes);
	if (r->off == at)
		return dnsnap__diag(r->d, DNSNAP_ETRUNC, (size_t)at, "the stream ends at byte %llu "
				    "of the decompressed data, %s%s (truncated?)",
				    (unsigned long long)at, what, file);
	return dnsnap__diag(r->d, DNSNAP_ETRUNC, (size_t)at, "%s, at byte %llu of the "
			    "decompressed data, is cut: the stream ends %llu bytes into it%s "
			    "(truncated?)", what, (unsigned long long)at,
			    (unsigned long long)(r->off - at), file);
}

/* Read n bytes of a field starting at `at`: a short read is DNSNAP_ETRUNC at `at`. */
static int need(rdr_t *r, uint8_t *p, size_t n, uint64_t at, const char *what)
{
	int e = rd_exact(r, p, n, NULL);
	return e == 1 ? cut(r, at, what) : e;
}

static int read_header(rdr_t *r, uint64_t *announced, int *has_count)
{
	uint8_t h[HDR_FIXED], tlv[3];
	size_t got = 0;
	int e = rd_exact(r, h, HDR_FIXED, &got);
	if (e < 0)
		return e;
	if (got >= 4 && memcmp(h, STREAM_MAGIC, 4) != 0)
		return dnsnap__diag(r->d, DNSNAP_EMAGIC, 0, "not an export stream (its data does "
				    "not start with the stream's magic number)");
	if (e == 1)
		return got == 0 && !r->started
		       ? dnsnap__diag(r->d, DNSNAP_ETRUNC, 0, "empty, not an export stream")
		       : cut(r, 0, got ? "the stream header" : "before the stream header");
	unsigned major = ld16le(h + 4), minor = ld16le(h + 6), hsize = ld16le(h + 8);
	if (major != DNSNAP_FORMAT_MAJOR)
		return dnsnap__diag(r->d, DNSNAP_EVERSION, 4,
				    "export stream format %u.%u, this dnsnap reads %d.x",
				    major, minor, DNSNAP_FORMAT_MAJOR);
	if (hsize < HDR_FIXED)
		return dnsnap__diag(r->d, DNSNAP_EFIELD, 8,
				    "the stream header's Header_Size %u is below 12", hsize);
	if (ld16le(h + 10) != 0)
		return dnsnap__diag(r->d, DNSNAP_ERESERVED, 10, "reserved stream flags 0x%04x",
				    ld16le(h + 10));
	uint64_t o = HDR_FIXED;
	while (o < hsize) {
		if (hsize - o < 3)
			return dnsnap__diag(r->d, DNSNAP_ETRUNC, (size_t)o,
					    "the stream header's TLV at byte %llu is cut by "
					    "Header_Size",
					    (unsigned long long)o);
		if ((e = need(r, tlv, 3, o, "the stream header's TLV")) != DNSNAP_OK)
			return e;
		size_t len = ld16le(tlv + 1);
		if (o + 3 + len > hsize)
			return dnsnap__diag(r->d, DNSNAP_ETRUNC, (size_t)o + 1,
					    "the Ext_Data_Len at byte %llu (a stream header TLV of "
					    "type %u, %zu bytes) runs past Header_Size %u",
					    (unsigned long long)o + 1, tlv[0], len, hsize);
		uint8_t data[65535];
		if ((e = need(r, data, len, o, "the stream header's TLV")) != DNSNAP_OK)
			return e;
		if ((tlv[0] == TLV_CREATED_AT || tlv[0] == TLV_ENTRY_COUNT) && len != 8)
			return dnsnap__diag(r->d, DNSNAP_EFIELD, (size_t)o + 1,
					    "the stream header's TLV type %u has %zu bytes, not 8 "
					    "(its Ext_Data_Len, at byte %llu)",
					    tlv[0], len, (unsigned long long)o + 1);
		if (tlv[0] == TLV_ENTRY_COUNT) {
			*announced = ld64le(data);
			*has_count = 1;
		}
		o += 3 + len;
	}
	return DNSNAP_OK;
}

/* "entry 57 of 1000" (@p n entries read before it), into @p buf */
static const char *entry_name(char *buf, size_t cap, uint64_t n, int has_count,
			      uint64_t announced)
{
	if (has_count && announced > n)
		snprintf(buf, cap, "entry %llu of %llu", (unsigned long long)n + 1,
			 (unsigned long long)announced);
	else
		snprintf(buf, cap, "entry %llu", (unsigned long long)n + 1);
	return buf;
}

/* A key's or an entry's own message without its closing " at 0xN" (an offset
 * in the key or entry): the stream's message names the stream's offset. */
static const char *own_words(dnsnap_diag_t *ed)
{
	char *at = strstr(ed->msg, " at 0x");
	if (at != NULL && at[6 + strspn(at + 6, "0123456789abcdef")] == 0)
		*at = 0;
	return ed->msg;
}

/* What the import keeps from record to record. */
typedef struct imp {
	rdr_t *r;
	uint64_t n;               /* records read */
	uint64_t announced;       /* the header's Entry_Count, when has_count */
	int has_count;
	uint32_t now;             /* the time rule's: the later of now and the clock */
	XXH3_state_t *xs;         /* over the records read */
	char where[80];
} imp_t;

/* The stream ended where a record's Key_Len (at @p at) should be, @p got of
 * its 2 bytes in. */
static int record_cut(imp_t *im, uint64_t at, size_t got)
{
	if (got)
		return cut(im->r, at, entry_name(im->where, sizeof im->where, im->n, im->has_count,
						 im->announced));
	snprintf(im->where, sizeof im->where, "after entry %llu, before the end record",
		 (unsigned long long)im->n);
	return cut(im->r, at, im->n ? im->where : "after the stream header, before the end record");
}

/* The end record at @p at (its Key_Len read): its counts and Checksum. */
static int end_record(imp_t *im, uint64_t at)
{
	rdr_t *r = im->r;
	uint8_t end[16];
	int e = need(r, end, 16, at, "the end record");
	if (e != DNSNAP_OK)
		return e;
	uint64_t count = ld64le(end), sum = ld64le(end + 8), n = im->n;
	if (count != n)
		return dnsnap__diag(r->d, DNSNAP_ECHECKSUM, (size_t)at + 2,
				    "%llu entr%s, the end record's Entry_Count (at byte %llu) says "
				    "%llu", (unsigned long long)n, n == 1 ? "y" : "ies",
				    (unsigned long long)at + 2, (unsigned long long)count);
	if (sum != XXH3_64bits_digest(im->xs))
		return dnsnap__diag(r->d, DNSNAP_ECHECKSUM, (size_t)at + 10,
				    "the end record's Checksum (at byte %llu) %016llx, the entries "
				    "give %016llx", (unsigned long long)at + 10,
				    (unsigned long long)sum,
				    (unsigned long long)XXH3_64bits_digest(im->xs));
	if (im->has_count && im->announced != n)
		return dnsnap__diag(r->d, DNSNAP_ECHECKSUM, (size_t)at + 2,
				    "%llu entr%s (the end record's Entry_Count, at byte %llu), the "
				    "stream header announced %llu", (unsigned long long)n,
				    n == 1 ? "y" : "ies", (unsigned long long)at + 2,
				    (unsigned long long)im->announced);
	return DNSNAP_OK;
}

/* A tagged section at @p at (its 0xffff read): skipped. */
static int skip_section(imp_t *im, uint64_t at, uint8_t *buf)
{
	uint8_t sh[6];
	snprintf(im->where, sizeof im->where, "a section after entry %llu",
		 (unsigned long long)im->n);
	int e = need(im->r, sh, 6, at, im->where);
	uint32_t left = e == DNSNAP_OK ? ld32le(sh + 2) : 0;
	while (e == DNSNAP_OK && left > 0) {
		size_t k = left < DNSNAP_ENTRY_MAX ? left : DNSNAP_ENTRY_MAX;
		e = need(im->r, buf, k, at, im->where);
		left -= (uint32_t)k;
	}
	return e;
}

/*
 * The record at @p at whose Key_Len @p key_len was read: Entry_Len, the key
 * and entry whole, the key, the entry (the order is the caller's), framed
 * into @p buf as the stream holds it.
 */
static int read_record(imp_t *im, uint64_t at, unsigned key_len, uint8_t *buf,
		       uint32_t *entry_len)
{
	rdr_t *r = im->r;
	unsigned long long no = (unsigned long long)im->n + 1;
	if (key_len > DNSNAP_KEY_MAX)
		return dnsnap__diag(r->d, DNSNAP_ERESERVED, (size_t)at, "entry %llu: reserved "
				    "Key_Len %u (at byte %llu)", no, key_len, (unsigned long long)at);
	entry_name(im->where, sizeof im->where, im->n, im->has_count, im->announced);
	int e = need(r, buf, 4, at, im->where);
	if (e != DNSNAP_OK)
		return e;
	uint32_t el = ld32le(buf);
	if (el < DNSNAP_ENTRY_HDR || el > DNSNAP_ENTRY_MAX)
		return dnsnap__diag(r->d, DNSNAP_EFIELD, (size_t)at + 2, "entry %llu: Entry_Len %lu "
				    "out of range (at byte %llu)", no, (unsigned long)el,
				    (unsigned long long)at + 2);
	uint8_t *k = buf + 6, *v = buf + 6 + key_len;
	st16le(buf, (uint16_t)key_len);
	st32le(buf + 2, el);
	if ((e = need(r, k, key_len + (size_t)el, at, im->where)) != DNSNAP_OK)
		return e;
	dnsnap_key_t key;
	dnsnap_diag_t ed;
	if ((e = dnsnap_key_decode(k, key_len, &key, &ed)) != DNSNAP_OK)
		return dnsnap__diag(r->d, e, (size_t)(at + 6 + ed.offset), "entry %llu, at byte "
				    "%llu: key: %.80s", no, (unsigned long long)(at + 6 + ed.offset),
				    own_words(&ed));
	/* a damaged entry, or one the time rule refuses (cached in the future,
	 * living past the longest TTL), refuses the stream */
	if ((e = dnsnap_entry_validate(v, el, &ed)) != DNSNAP_OK ||
	    (e = dnsnap_entry_check_time(v, el, NULL, im->now, &ed)) != DNSNAP_OK) {
		char name[80];
		dnsnap__key_text(&key, name, sizeof name);
		return dnsnap__diag(r->d, e, (size_t)(at + 6 + key_len + ed.offset), "entry %llu "
				    "(%.40s), at byte %llu: %.80s", no, name,
				    (unsigned long long)(at + 6 + key_len + ed.offset),
				    own_words(&ed));
	}
	*entry_len = el;
	return DNSNAP_OK;
}

/* After the end record: nothing may follow it, and the last frame must be
 * whole (its content checksum checked). */
static int after_end(rdr_t *r)
{
	uint8_t extra;
	uint64_t at = r->off;
	int e = rd_exact(r, &extra, 1, NULL);
	if (e == DNSNAP_OK)
		return dnsnap__diag(r->d, DNSNAP_EFIELD, (size_t)at, "bytes after the end record, "
				    "at byte %llu of the decompressed data", (unsigned long long)at);
	if (e < 0)
		return e;
	if (r->frame_left != 0)
		return dnsnap__diag(r->d, DNSNAP_ETRUNC, (size_t)at, "the stream ends at byte %llu "
				    "of the decompressed data, after the end record, but the file's "
				    "%llu bytes end inside a zstd frame (its checksum or a next "
				    "frame cut: truncated?)", (unsigned long long)at,
				    (unsigned long long)r->in_bytes);
	return DNSNAP_OK;
}

static int import_records(rdr_t *r, dnsnap_snapw_t *sw, uint8_t *buf, uint64_t announced,
			  int has_count, uint32_t now, const dnsnap_progress_t *pr, uint64_t *expired,
			  uint64_t *added)
{
	imp_t im = { .r = r, .announced = announced, .has_count = has_count,
		     .now = dnsnap__later(now, (uint32_t)time(NULL)) };
	uint8_t prev[DNSNAP_KEY_MAX];
	size_t prev_len = 0;
	if ((im.xs = XXH3_createState()) == NULL)
		return dnsnap__diag(r->d, DNSNAP_ENOMEM, 0, "out of memory");
	XXH3_64bits_reset(im.xs);
	int e;
	for (;;) {
		uint64_t at = r->off;
		size_t got;
		e = rd_exact(r, buf, 2, &got);
		if (e == 1)
			e = record_cut(&im, at, got);
		if (e != DNSNAP_OK)
			break;
		unsigned key_len = ld16le(buf);
		if (key_len == 0) { /* End_Record */
			e = end_record(&im, at);
			break;
		}
		if (key_len == SECTION_KEY_LEN) { /* a tagged section: skipped */
			if ((e = skip_section(&im, at, buf)) != DNSNAP_OK)
				break;
			continue;
		}
		uint32_t entry_len = 0;
		if ((e = read_record(&im, at, key_len, buf, &entry_len)) != DNSNAP_OK)
			break;
		const uint8_t *k = buf + 6, *v = buf + 6 + key_len;
		if (im.n > 0 && dnsnap_key_cmp(prev, prev_len, k, key_len) >= 0) {
			e = dnsnap__diag(r->d, DNSNAP_EFIELD, (size_t)at, "entry %llu is out of key "
					 "order (at byte %llu)", (unsigned long long)im.n + 1,
					 (unsigned long long)at);
			break;
		}
		memcpy(prev, k, key_len);
		prev_len = key_len;
		XXH3_64bits_update(im.xs, buf, 6 + key_len + (size_t)entry_len);
		dnsnap_diag_t ed;
		if (!dnsnap__entry_live(v, now))
			(*expired)++; /* expired by now: left out */
		else if ((e = dnsnap_snapw_add(sw, k, key_len, v, entry_len, &ed)) != DNSNAP_OK) {
			e = dnsnap__diag(r->d, e, (size_t)at, "entry %llu (at byte %llu): %s",
					 (unsigned long long)im.n + 1, (unsigned long long)at, ed.msg);
			break;
		}
		if (++im.n % DNSNAP_PROGRESS_EVERY == 0 && pr != NULL && pr->fn != NULL)
			pr->fn(pr->arg, im.n, has_count ? announced : 0);
	}
	XXH3_freeState(im.xs);
	*added = im.n - *expired;
	return e != DNSNAP_OK ? e : after_end(r);
}

int dnsnap_import_into(int fd, dnsnap_snapw_t *sw, uint32_t now, const dnsnap_progress_t *pr,
		       dnsnap_snap_write_stats_t *stats, dnsnap_diag_t *d)
{
	if (fd < 0 || sw == NULL)
		return dnsnap__diag(d, DNSNAP_EINVAL, 0, "invalid argument");
	rdr_t r = { .fd = fd, .d = d };
	uint8_t *buf = NULL;
	int err;
	r.dc = ZSTD_createDCtx();
	r.in_cap = ZSTD_DStreamInSize();
	r.out_cap = ZSTD_DStreamOutSize();
	r.in = dnsnap_malloc(r.in_cap);
	r.out = dnsnap_malloc(r.out_cap);
	buf = dnsnap_malloc(6 + DNSNAP_KEY_MAX + (size_t)DNSNAP_ENTRY_MAX);
	if (r.dc == NULL || r.in == NULL || r.out == NULL || buf == NULL) {
		err = dnsnap__diag(d, DNSNAP_ENOMEM, 0, "out of memory");
		goto out;
	}
	r.ib.src = r.in;
	uint64_t announced = 0, expired = 0, added = 0;
	int has_count = 0;
	if ((err = read_header(&r, &announced, &has_count)) != DNSNAP_OK)
		goto out;
	err = import_records(&r, sw, buf, announced, has_count, now, pr, &expired, &added);
	if (err != DNSNAP_OK)
		goto out;
	if (pr != NULL && pr->fn != NULL)
		pr->fn(pr->arg, added + expired, has_count ? announced : 0);
	if (stats != NULL) {
		stats->skipped = expired;
		stats->stream_bytes = r.in_bytes;
	}
out:
	ZSTD_freeDCtx(r.dc);
	dnsnap_free(r.in);
	dnsnap_free(r.out);
	dnsnap_free(buf);
	return err;
}

int dnsnap_import(int fd, const char *path, uint32_t now, const dnsnap_progress_t *pr,
		  dnsnap_snap_write_stats_t *stats, dnsnap_diag_t *d)
{
	if (fd < 0 || path == NULL)
		return dnsnap__diag(d, DNSNAP_EINVAL, 0, "invalid argument");
	dnsnap_snapw_t *sw;
	dnsnap_snap_write_stats_t st = { 0 }, is = { 0 };
	int err = dnsnap_snapw_begin(path, &sw, d);
	if (err != DNSNAP_OK)
		return err;
	err = dnsnap_import_into(fd, sw, now, pr, &is, d);
	if (err != DNSNAP_OK) {
		dnsnap_snapw_abort(sw);
		return err;
	}
	if ((err = dnsnap_snapw_commit(sw, &st, d)) != DNSNAP_OK)
		return err;
	st.skipped = is.skipped;
	st.stream_bytes = is.stream_bytes;
	if (stats != NULL)
		*stats = st;
	return DNSNAP_OK;
}
