/*
 * main.c: the dnsnap command-line tool. Uses only the public header.
 *
 * Exit codes, like grep: 0 success, 1 nothing found, 2 bad usage or bad data.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "help.h"
#include "print.h"
#include "unbound.h"

static int encode_file(const char *cmd, const char *path, uint32_t now, dnsnap_encoded_t *enc)
{
	uint8_t *msg;
	size_t len;
	int err = slurp(path, &msg, &len);
	if (err)
		return fail(cmd, path, "%s", strerror(-err));
	dnsnap_diag_t d;
	err = dnsnap_msg_encode(msg, len, now, NULL, 0, enc, &d);
	free(msg);
	if (err != DNSNAP_OK)
		return fail(cmd, path, "%s at offset %zu (0x%zx): %s", dnsnap_errname(err), d.offset,
			    d.offset, d.msg);
	return 0;
}

static int cmd_demo(int argc, char **argv)
{
	if (argc < 2)
		return fail("demo", NULL, "needs DNS response files (e.g. spec/vectors/valid/*.msg)");
	dnsnap_encoded_t *enc = malloc(sizeof *enc);
	if (enc == NULL)
		return fail("demo", NULL, "out of memory");
	int rc = 0;
	size_t wire_total = 0, entry_total = 0, key_total = 0, n = 0;
	for (int i = 1; i < argc; i++) {
		size_t wire_len;
		uint8_t *wire;
		int err = slurp(argv[i], &wire, &wire_len);
		if (err != 0) {
			rc = fail("demo", argv[i], "%s", strerror(-err));
			continue;
		}
		free(wire);
		if (encode_file("demo", argv[i], 1700000000u, enc) != 0) {
			rc = EXIT_USAGE;
			continue;
		}
		printf("=== %s: DNS response %zu bytes -> key %zu + entry %zu bytes\n", argv[i],
		       wire_len, enc->key_len, enc->entry_len);
		print_layout(stdout, enc->key, enc->key_len, enc->entry, enc->entry_len);
		print_entry(stdout, enc->key, enc->key_len, enc->entry, enc->entry_len);
		putchar('\n');
		wire_total += wire_len;
		key_total += enc->key_len;
		entry_total += enc->entry_len;
		n++;
	}
	if (n > 0)
		printf("%zu responses: %zu wire bytes, %zu key bytes, %zu entry bytes "
		       "(entries are %.0f%% of the wire size)\n",
		       n, wire_total, key_total, entry_total, 100.0 * (double)entry_total /
		       (double)wire_total);
	free(enc);
	return rc;
}

static int cmd_encode(int argc, char **argv)
{
	const char *in = NULL, *out = "-";
	uint32_t now = (uint32_t)time(NULL);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--now") == 0 && i + 1 < argc) {
			char *end;
			errno = 0;
			unsigned long v = strtoul(argv[++i], &end, 10);
			if (errno || *end || v > UINT32_MAX)
				return fail("encode", NULL, "--now: not a Unix time: %s", argv[i]);
			now = (uint32_t)v;
		} else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
			out = argv[++i];
		} else if (in == NULL && (argv[i][0] != '-' || strcmp(argv[i], "-") == 0)) {
			in = argv[i];
		} else {
			return fail("encode", NULL, "unexpected argument: %s", argv[i]);
		}
	}
	if (in == NULL)
		return fail("encode", NULL, "needs a DNS response file (- for stdin)");
	dnsnap_encoded_t *enc = malloc(sizeof *enc);
	if (enc == NULL)
		return fail("encode", NULL, "out of memory");
	int rc = encode_file("encode", in, now, enc);
	if (rc == 0) {
		FILE *f = strcmp(out, "-") == 0 ? stdout : fopen(out, "wb");
		uint8_t kl[2] = { (uint8_t)enc->key_len, (uint8_t)(enc->key_len >> 8) };
		if (f == NULL || fwrite(kl, 1, 2, f) != 2 ||
		    fwrite(enc->key, 1, enc->key_len, f) != enc->key_len ||
		    fwrite(enc->entry, 1, enc->entry_len, f) != enc->entry_len ||
		    (f != stdout && fclose(f) != 0))
			rc = fail("encode", out, "%s", strerror(errno));
	}
	free(enc);
	return rc;
}

static int cmd_decode(int argc, char **argv)
{
	if (argc != 2)
		return fail("decode", NULL, "needs one key+entry file");
	uint8_t *buf;
	size_t len;
	int err = slurp(argv[1], &buf, &len);
	if (err)
		return fail("decode", argv[1], "%s", strerror(-err));
	int rc = 0;
	dnsnap_diag_t d;
	size_t kl = len >= 2 ? (size_t)(buf[0] | buf[1] << 8) : 0;
	dnsnap_key_t k;
	if (len < 2 || len - 2 < kl) {
		rc = fail("decode", argv[1], "DNSNAP_ETRUNC: file of %zu bytes too short for its key",
			  len);
	} else if ((err = dnsnap_key_decode(buf + 2, kl, &k, &d)) != DNSNAP_OK) {
		rc = fail("decode", argv[1], "%s in the key at offset %zu: %s", dnsnap_errname(err),
			  d.offset, d.msg);
	} else if ((err = dnsnap_entry_validate(buf + 2 + kl, len - 2 - kl, &d)) != DNSNAP_OK) {
		rc = fail("decode", argv[1], "%s in the entry at offset %zu (0x%zx): %s",
			  dnsnap_errname(err), d.offset, d.offset, d.msg);
	} else {
		print_entry(stdout, buf + 2, kl, buf + 2 + kl, len - 2 - kl);
	}
	free(buf);
	return rc;
}

struct live_count {
	uint32_t now;
	uint64_t live, expired;
};

static int count_live(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		      size_t entry_len)
{
	struct live_count *lc = arg;
	(void)key;
	(void)key_len;
	if (entry_len < 8)
		return 0;
	if ((int32_t)(entry_expiry(entry) - lc->now) > 0)
		lc->live++;
	else
		lc->expired++;
	return 0;
}

static int cmd_info(int argc, char **argv)
{
	const char *path = NULL;
	int json = 0;
	unsigned long long now = (unsigned long long)time(NULL);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "--now") == 0 && i + 1 < argc) {
			if (number("info", "--now", argv[++i], UINT32_MAX, &now))
				return EXIT_USAGE;
		} else if (path == NULL && argv[i][0] != '-')
			path = argv[i];
		else
			return fail("info", NULL, "unexpected argument: %s", argv[i]);
	}
	if (path == NULL)
		return fail("info", NULL, "needs a snapshot");
	dnsnap_snap_t *s;
	if (open_snap("info", path, &s))
		return EXIT_USAGE;
	dnsnap_snap_info_t in;
	dnsnap_snap_info(s, &in);
	struct live_count lc = { (uint32_t)now, 0, 0 };
	int rc = scan_snap("info", s, NULL, 0, count_live, &lc, NULL);
	dnsnap_snap_close(s);
	char created[32];
	time_t t = (time_t)in.created_at;
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);
	double bpe = in.entry_count ? (double)in.file_size / (double)in.entry_count : 0;
	if (json)
		printf("{\"file\":\"%s\",\"format\":\"%u.%u\",\"created_at\":\"%s\","
		       "\"writer\":\"%s\",\"entries\":%llu,\"live\":%llu,\"expired\":%llu,"
		       "\"file_size\":%llu,\"bytes_per_entry\":%.1f,\"digest\":\"%016llx\"}\n",
		       path, in.major, in.minor, created, in.writer,
		       (unsigned long long)in.entry_count, (unsigned long long)lc.live,
		       (unsigned long long)lc.expired, (unsigned long long)in.file_size, bpe,
		       (unsigned long long)in.digest);
	else
		printf("file:            %s\nformat:          %u.%u\ncreated:         %s\n"
		       "writer:          %s\nentries:         %llu (live %llu, expired %llu)\n"
		       "file size:       %llu bytes (%.1f per entry)\ndigest:          %016llx\n",
		       path, in.major, in.minor, created, in.writer,
		       (unsigned long long)in.entry_count, (unsigned long long)lc.live,
		       (unsigned long long)lc.expired, (unsigned long long)in.file_size, bpe,
		       (unsigned long long)in.digest);
	return rc;
}

static int cmd_verify(int argc, char **argv)
{
	if (argc != 2)
		return fail("verify", NULL, "needs one snapshot");
	dnsnap_snap_t *s;
	if (open_snap("verify", argv[1], &s))
		return EXIT_USAGE;
	dnsnap_diag_t d;
	dnsnap_snap_info_t in;
	dnsnap_snap_info(s, &in);
	progress_t pg;
	int err = dnsnap_snap_verify(s, progress_start(&pg, "verify"), &d);
	progress_end(&pg);
	dnsnap_snap_close(s);
	if (err != DNSNAP_OK)
		return fail("verify", NULL, "%s (%s)", d.msg, dnsnap_errname(err));
	printf("%s: good: %llu entries, digest %016llx\n", argv[1],
	       (unsigned long long)in.entry_count, (unsigned long long)in.digest);
	return 0;
}

static int cmd_get(int argc, char **argv)
{
	const char *path = NULL, *name = NULL, *type = "A", *rclass = "IN";
	int dnssec = 0, ntype = 0;
	uint8_t tag[DNSNAP_TAG_MAX];
	size_t tag_len = 0;
	unsigned long long now = (unsigned long long)time(NULL);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--do") == 0)
			dnssec = 1;
		else if (strcmp(argv[i], "--class") == 0 && i + 1 < argc)
			rclass = argv[++i];
		else if (strcmp(argv[i], "--tag") == 0 && i + 1 < argc) {
			if (hex_tag(argv[++i], tag, &tag_len) != 0)
				return fail("get", NULL, "--tag: not hex of at most 255 bytes: %s", argv[i]);
		} else if (strcmp(argv[i], "--now") == 0 && i + 1 < argc) {
			if (number("get", "--now", argv[++i], UINT32_MAX, &now))
				return EXIT_USAGE;
		} else if (argv[i][0] == '-' && argv[i][1] != 0)
			return fail("get", NULL, "unexpected argument: %s", argv[i]);
		else if (path == NULL)
			path = argv[i];
		else if (name == NULL)
			name = argv[i];
		else if (ntype++ == 0)
			type = argv[i];
		else
			return fail("get", NULL, "unexpected argument: %s", argv[i]);
	}
	if (path == NULL || name == NULL)
		return fail("get", NULL, "needs a snapshot and a name");
	uint8_t q[600], out[65535];
	const char *why = NULL;
	long ql = make_query(name, type, rclass, dnssec, q, sizeof q, &why);
	if (ql < 0)
		return fail("get", NULL, "%s %s %s: %s", name, type, rclass, why);
	dnsnap_query_t dq;
	dnsnap_diag_t d;
	int err = dnsnap_query_parse(q, (size_t)ql, tag_len ? tag : NULL, tag_len, &dq, &d);
	if (err != DNSNAP_OK)
		return fail("get", NULL, "%s: %s", name, d.msg);
	dnsnap_snap_t *s;
	if (open_snap("get", path, &s))
		return EXIT_USAGE;
	size_t n;
	err = dnsnap_snap_answer(s, &dq, (uint32_t)now, 65535, out, sizeof out, &n);
	uint64_t damaged = dnsnap_snap_bad_entries(s);
	dnsnap_snap_close(s);
	if (err == DNSNAP_ENOTFOUND && damaged)
		return fail("get", path, "%s %s %s: the entry is damaged (its Value_Check or layout "
			    "fails); run dnsnap verify", name, rclass, type);
	if (err == DNSNAP_ENOTFOUND) {
		fprintf(stderr, "dnsnap get: %s %s %s: not in %s (or expired)\n", name, rclass, type,
			path);
		return 1;
	}
	if (err != DNSNAP_OK)
		return fail("get", path, "%s", dnsnap_strerror(err));
	return print_dns_message(stdout, out, n, (uint32_t)now) == DNSNAP_OK ? 0 : EXIT_USAGE;
}

struct dump_ctx {
	uint32_t now;
	int json, expired;
	const filter_t *f;
	uint64_t shown;
};

static int dump_one(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		    size_t entry_len)
{
	struct dump_ctx *dc = arg;
	dnsnap_key_t k;
	dnsnap_key_decode(key, key_len, &k, NULL); /* checked by the scan */
	if ((int32_t)(entry_expiry(entry) - dc->now) <= 0 && !dc->expired)
		return 0;
	if (!filter_match(dc->f, &k))
		return 0;
	print_dump(stdout, key, key_len, entry, entry_len, dc->now, dc->json);
	dc->shown++;
	return 0;
}

static int cmd_dump(int argc, char **argv)
{
	const char *path = NULL;
	filter_t f = { 0 };
	struct dump_ctx dc = { .f = &f };
	unsigned long long now = (unsigned long long)time(NULL);
	for (int i = 1; i < argc; i++) {
		int r = filter_arg("dump", &f, argc, argv, &i);
		if (r == EXIT_USAGE)
			return r;
		if (r == 1)
			continue;
		if (strcmp(argv[i], "--json") == 0)
			dc.json = 1;
		else if (strcmp(argv[i], "--expired") == 0)
			dc.expired = 1;
		else if (strcmp(argv[i], "--now") == 0 && i + 1 < argc) {
			if (number("dump", "--now", argv[++i], UINT32_MAX, &now))
				return EXIT_USAGE;
		} else if (path == NULL && argv[i][0] != '-')
			path = argv[i];
		else
			return fail("dump", NULL, "unexpected argument: %s", argv[i]);
	}
	if (path == NULL)
		return fail("dump", NULL, "needs a snapshot");
	if (filter_ready("dump", &f))
		return EXIT_USAGE;
	dc.now = (uint32_t)now;
	dnsnap_snap_t *s;
	if (open_snap("dump", path, &s))
		return EXIT_USAGE;
	int rc = scan_snap("dump", s, f.prefix_len ? f.prefix : NULL, f.prefix_len, dump_one, &dc,
			   NULL);
	dnsnap_snap_close(s);
	if (rc != 0)
		return rc; /* damage (the good entries were printed) */
	return dc.shown ? 0 : EXIT_NONE;
}

/*
 * purge: the entries matching every filter given go; the rest are copied, in
 * key order, into a new snapshot published over the old (dnsnap_snapw_t).
 * A --zone or --name purge still walks every key (what stays must be copied)
 * but tests the prefix first.
 */
struct purge_ctx {
	const filter_t *f;
	int expired;             /* --expired: only expired entries match */
	uint32_t now;
	dnsnap_snapw_t *w;       /* NULL: --dry-run, or counting before writing */
	uint64_t seen, matched, kept, total;
	const dnsnap_progress_t *pr;
	int err;                 /* the writer's, when it stopped the walk */
	dnsnap_diag_t d;
};

static int purge_one(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		     size_t entry_len)
{
	struct purge_ctx *pc = arg;
	dnsnap_key_t k;
	if (++pc->seen % DNSNAP_PROGRESS_EVERY == 0 && pc->pr != NULL)
		pc->pr->fn(pc->pr->arg, pc->seen, pc->total);
	dnsnap_key_decode(key, key_len, &k, NULL); /* checked by the scan */
	const filter_t *f = pc->f;
	int match = (f->prefix_len == 0 ||
		     (key_len >= f->prefix_len && memcmp(key, f->prefix, f->prefix_len) == 0)) &&
		    filter_match(f, &k) &&
		    (!pc->expired || (int32_t)(entry_expiry(entry) - pc->now) <= 0);
	if (match) {
		pc->matched++;
		return 0;
	}
	pc->kept++;
	if (pc->w != NULL && (pc->err = dnsnap_snapw_add(pc->w, key, key_len, entry, entry_len,
							  &pc->d)) != DNSNAP_OK)
		return 1;
	return 0;
}

static int cmd_purge(int argc, char **argv)
{
	const char *path = NULL;
	filter_t f = { 0 };
	int expired = 0, dry = 0, drop = 0;
	unsigned long long now = (unsigned long long)time(NULL), wait = WAIT_DEFAULT;
	for (int i = 1; i < argc; i++) {
		int r = filter_arg("purge", &f, argc, argv, &i);
		if (r == EXIT_USAGE)
			return r;
		if (r == 1)
			continue;
		if (strcmp(argv[i], "--expired") == 0)
			expired = 1;
		else if (strcmp(argv[i], "--dry-run") == 0)
			dry = 1;
		else if (strcmp(argv[i], "--drop-damaged") == 0)
			drop = 1;
		else if (strcmp(argv[i], "--wait") == 0 && i + 1 < argc) {
			if (number("purge", "--wait", argv[++i], INT32_MAX, &wait))
				return EXIT_USAGE;
		} else if (strcmp(argv[i], "--now") == 0 && i + 1 < argc) {
			if (number("purge", "--now", argv[++i], UINT32_MAX, &now))
				return EXIT_USAGE;
		} else if (path == NULL && argv[i][0] != '-')
			path = argv[i];
		else
			return fail("purge", NULL, "unexpected argument: %s", argv[i]);
	}
	if (path == NULL)
		return fail("purge", NULL, "needs a snapshot");
	if (!expired && f.name == NULL && f.zone == NULL && f.type == NULL && !f.by_tag)
		return fail("purge", NULL, "needs at least one of --name, --zone, --type, --tag, "
			    "--expired (to remove everything, delete the file)");
	if (filter_ready("purge", &f))
		return EXIT_USAGE;
	/* the writers' lock before the snapshot is read: what another writer
	 * publishes meanwhile is in what this purge filters (--dry-run reads only) */
	dnsnap_snap_lock_t *lk = NULL;
	if (!dry && lock_snap("purge", path, wait, &lk))
		return EXIT_USAGE;
	dnsnap_snap_t *s;
	if (open_snap("purge", path, &s)) {
		dnsnap_snap_unlock(lk);
		return EXIT_USAGE;
	}
	progress_t pg;
	const dnsnap_progress_t *pr = progress_start(&pg, "purge");
	/* first count (cheap: no writing), so that nothing matched means no
	 * new file, and the write pass can show a total */
	struct purge_ctx pc = { .f = &f, .expired = expired, .now = (uint32_t)now, .pr = pr };
	uint64_t damaged = 0;
	int rc = scan_snap("purge", s, NULL, 0, purge_one, &pc, &damaged);
	uint64_t total = pc.seen, matched = pc.matched, left = total - matched;
	int err = DNSNAP_OK;
	/* damage stops a purge (a damaged branch page can hide good entries:
	 * rewriting would lose them) unless --drop-damaged asks to write the
	 * file without them; the exit status is 2 either way */
	if (damaged > 0 && !dry && !drop) {
		progress_end(&pg);
		dnsnap_snap_close(s);
		dnsnap_snap_unlock(lk);
		return fail("purge", path, "%llu damaged entr%s: the snapshot is unchanged "
			    "(--drop-damaged writes it without them)", (unsigned long long)damaged,
			    damaged == 1 ? "y" : "ies");
	}
	if ((rc == 0 || damaged > 0) && matched > 0 && !dry) {
		pc = (struct purge_ctx){ .f = &f, .expired = expired, .now = (uint32_t)now, .pr = pr,
					 .total = total };
		err = dnsnap_snapw_begin(path, &pc.w, &pc.d);
		if (err == DNSNAP_OK) {
			dnsnap_diag_t sd;
			err = dnsnap_snap_scan(s, NULL, 0, purge_one, &pc, NULL, &sd);
			if (err == 1)
				err = pc.err;
			else if (err == DNSNAP_ETRUNC || err == DNSNAP_ENOMEM)
				pc.d = sd; /* the file changed under us: publish nothing */
			else
				err = DNSNAP_OK; /* no damage, or the damage counted above */
			if (err == DNSNAP_OK)
				err = dnsnap_snapw_commit(pc.w, NULL, &pc.d);
			else
				dnsnap_snapw_abort(pc.w);
		}
		left = pc.kept;
		if (pr != NULL)
			pr->fn(pr->arg, pc.seen, total);
	}
	progress_end(&pg);
	dnsnap_snap_close(s);
	dnsnap_snap_unlock(lk);
	if (err != DNSNAP_OK)
		return fail("purge", path, "%s (%s); the snapshot is unchanged",
			    pc.d.msg[0] ? pc.d.msg : dnsnap_strerror(err),
			    dnsnap_errname(err) ? dnsnap_errname(err) : strerror(-err));
	if (rc == EXIT_USAGE && damaged == 0)
		return rc; /* the walk failed, reported */
	if (damaged > 0)
		fprintf(stderr, "dnsnap purge: %s: %llu damaged entr%s %s\n", path,
			(unsigned long long)damaged, damaged == 1 ? "y" : "ies",
			dry || !matched ? "found" : "left out of the new file");
	printf("%s: %s %llu of %llu entries, %llu left\n", path, dry ? "would purge" : "purged",
	       (unsigned long long)matched, (unsigned long long)total, (unsigned long long)left);
	if (damaged > 0)
		return EXIT_USAGE;
	return matched ? 0 : EXIT_NONE;
}

/*
 * export: the portable stream (or, --format unbound, load_cache text) to -o
 * OUT (out_open(): a regular file is written beside it and renamed over it
 * when whole, so an existing OUT is never left half-overwritten; a device or
 * FIFO is written in place). OUT naming SNAP itself is refused, and the
 * binary stream is never written to a terminal.
 */
static int cmd_export(int argc, char **argv)
{
	const char *path = NULL, *out = NULL, *format = "dnsnap";
	unsigned long long top = 0, level = 0, now = (unsigned long long)time(NULL);
	int has_now = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			out = argv[++i];
		else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc)
			format = argv[++i];
		else if (strcmp(argv[i], "--top") == 0 && i + 1 < argc) {
			if (number("export", "--top", argv[++i], UINT64_MAX, &top))
				return EXIT_USAGE;
		} else if (strcmp(argv[i], "--level") == 0 && i + 1 < argc) {
			if (number("export", "--level", argv[++i], 19, &level))
				return EXIT_USAGE;
		} else if (strcmp(argv[i], "--now") == 0 && i + 1 < argc) {
			if (number("export", "--now", argv[++i], UINT32_MAX, &now))
				return EXIT_USAGE;
			has_now = 1;
		} else if (path == NULL && argv[i][0] != '-')
			path = argv[i];
		else
			return fail("export", NULL, "unexpected argument: %s", argv[i]);
	}
	if (path == NULL || out == NULL)
		return fail("export", NULL, "needs a snapshot and -o OUT (- for stdout)");
	int unbound = strcmp(format, "unbound") == 0;
	if (!unbound && strcmp(format, "dnsnap") != 0)
		return fail("export", NULL, "--format: dnsnap or unbound, not %s", format);
	if (unbound && (top || level))
		return fail("export", NULL, "--top and --level are for the dnsnap format");
	if (!unbound && has_now)
		return fail("export", NULL, "--now is for --format unbound (the stream keeps "
			    "Inception and Expiry as they are)");
	if (same_file(path, 0, out, 1))
		return fail("export", out, "is the snapshot being exported (%s); not overwriting "
			    "it", path);
	dnsnap_snap_t *s;
	if (open_snap("export", path, &s))
		return EXIT_USAGE;
	out_file_t o;
	if (out_open("export", out, !unbound, &o)) {
		dnsnap_snap_close(s);
		return EXIT_USAGE;
	}
	int fd = o.fd, closed = 0;
	dnsnap_diag_t d = { 0 };
	int err;
	if (unbound) {
		FILE *f = fd == 1 ? stdout : fdopen(fd, "w");
		unbound_export_stats_t st = { 0 };
		err = f == NULL ? -errno : unbound_export(s, f, (uint32_t)now, &st, &d);
		if (f != NULL && (fd == 1 ? fflush(f) : fclose(f)) != 0 && err == DNSNAP_OK)
			err = -errno;
		closed = f != NULL && fd != 1; /* closed with f */
		if (err == DNSNAP_OK)
			fprintf(stderr, "dnsnap export: %s: %llu messages, %llu RRsets (%llu shared); "
				"left out: %llu expired, %llu CD, %llu tagged, %llu bad, %llu "
				"unprintable\n", out, (unsigned long long)st.messages,
				(unsigned long long)st.rrsets, (unsigned long long)st.shared,
				(unsigned long long)st.expired, (unsigned long long)st.cd,
				(unsigned long long)st.tagged, (unsigned long long)st.bad,
				(unsigned long long)st.unprintable);
	} else {
		progress_t pg;
		err = dnsnap_export_write(s, fd, (int)level, top, progress_start(&pg, "export"), &d);
		progress_end(&pg);
	}
	dnsnap_snap_close(s);
	int cerr = out_close(&o, err == DNSNAP_OK, closed);
	if (err == DNSNAP_OK)
		err = cerr;
	if (err != DNSNAP_OK) {
		return fail("export", out, "%s (%s)", d.msg[0] ? d.msg : strerror(-err),
			    dnsnap_errname(err) ? dnsnap_errname(err) : strerror(-err));
	}
	return 0;
}

static int cmd_import(int argc, char **argv)
{
	const char *in = NULL, *out = NULL;
	unsigned long long now = (unsigned long long)time(NULL), wait = WAIT_DEFAULT;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			out = argv[++i];
		else if (strcmp(argv[i], "--wait") == 0 && i + 1 < argc) {
			if (number("import", "--wait", argv[++i], INT32_MAX, &wait))
				return EXIT_USAGE;
		} else if (strcmp(argv[i], "--now") == 0 && i + 1 < argc) {
			if (number("import", "--now", argv[++i], UINT32_MAX, &now))
				return EXIT_USAGE;
		} else if (in == NULL && (argv[i][0] != '-' || strcmp(argv[i], "-") == 0))
			in = argv[i];
		else
			return fail("import", NULL, "unexpected argument: %s", argv[i]);
	}
	if (in == NULL || out == NULL)
		return fail("import", NULL, "needs a stream (- for stdin) and -o SNAP");
	if (strcmp(out, "-") == 0)
		return fail("import", NULL, "the snapshot cannot be standard output");
	if (same_file(in, 0, out, 1))
		return fail("import", out, "is the stream being imported (%s); not overwriting it",
			    strcmp(in, "-") ? in : "standard input");
	int fd = strcmp(in, "-") == 0 ? 0 : open(in, O_RDONLY);
	if (fd < 0)
		return fail("import", in, "%s", strerror(errno));
	dnsnap_snap_lock_t *lk;
	if (lock_snap("import", out, wait, &lk)) {
		if (fd != 0)
			close(fd);
		return EXIT_USAGE;
	}
	dnsnap_diag_t d = { 0 };
	progress_t pg;
	dnsnap_snap_write_stats_t st = { 0 };
	int err = dnsnap_import(fd, out, (uint32_t)now, progress_start(&pg, "import"), &st, &d);
	progress_end(&pg);
	dnsnap_snap_unlock(lk);
	if (fd != 0)
		close(fd);
	if (err != DNSNAP_OK)
		return fail("import", in, "%s (%s at offset %zu of the decompressed stream)", d.msg,
			    dnsnap_errname(err) ? dnsnap_errname(err) : strerror(-err), d.offset);
	if (st.skipped)
		fprintf(stderr, "dnsnap import: %s: %llu entries expired at --now, left out\n",
			in, (unsigned long long)st.skipped);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return help_overview(stderr), EXIT_USAGE;
	const char *cmd = argv[1];
	if (strcmp(cmd, "--version") == 0) {
		printf("dnsnap %s (format %s)\n", DNSNAP_VERSION, dnsnap_format_version());
		return 0;
	}
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
	    (strcmp(cmd, "help") == 0 && argc == 2))
		return help_overview(stdout), 0;
	for (int i = 2; i < argc; i++) /* before "help CMD": help --help works */
		if (strcmp(argv[i], "--help") == 0 && help_command(cmd) != NULL)
			return fputs(help_command(cmd), stdout), 0;
	if (strcmp(cmd, "help") == 0) {
		const char *h = help_command(argv[2]);
		if (argc > 3)
			return fail("help", NULL, "takes one command");
		if (h == NULL)
			return fail("help", NULL, "unknown command '%s' (dnsnap help lists them)",
				    argv[2]);
		return fputs(h, stdout), 0;
	}
	if (strcmp(cmd, "demo") == 0)
		return cmd_demo(argc - 1, argv + 1);
	if (strcmp(cmd, "encode") == 0)
		return cmd_encode(argc - 1, argv + 1);
	if (strcmp(cmd, "decode") == 0)
		return cmd_decode(argc - 1, argv + 1);
	if (strcmp(cmd, "info") == 0)
		return cmd_info(argc - 1, argv + 1);
	if (strcmp(cmd, "verify") == 0)
		return cmd_verify(argc - 1, argv + 1);
	if (strcmp(cmd, "get") == 0)
		return cmd_get(argc - 1, argv + 1);
	if (strcmp(cmd, "dump") == 0)
		return cmd_dump(argc - 1, argv + 1);
	if (strcmp(cmd, "purge") == 0)
		return cmd_purge(argc - 1, argv + 1);
	if (strcmp(cmd, "stats") == 0)
		return cmd_stats(argc - 1, argv + 1);
	if (strcmp(cmd, "load") == 0)
		return cmd_load(argc - 1, argv + 1);
	if (strcmp(cmd, "export") == 0)
		return cmd_export(argc - 1, argv + 1);
	if (strcmp(cmd, "import") == 0)
		return cmd_import(argc - 1, argv + 1);
	if (strcmp(cmd, "serve") == 0) return cmd_serve(argc - 1, argv + 1);
	fprintf(stderr, "dnsnap: unknown command '%s' (dnsnap help lists them)\n", cmd);
	return EXIT_USAGE;
}
