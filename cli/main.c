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

#include "dnsnap.h"
#include "print.h"

#define EXIT_USAGE 2

static const char *usage_text =
	"usage: dnsnap COMMAND [ARGS]\n"
	"\n"
	"commands:\n"
	"  demo MSG...             encode DNS responses and show the entry layout\n"
	"  encode MSG [--now T] [-o OUT]\n"
	"                          encode one DNS response (wire form, - for stdin) into\n"
	"                          a key+entry file (Key_Len u16 LE, Key, Entry)\n"
	"  decode FILE             validate a key+entry file and print it as zone text\n"
	"  info SNAP [--json] [--now T]\n"
	"                          format, creation, writer, entries live and expired\n"
	"  verify SNAP             the deep check: file checksum, every entry, order, digest\n"
	"  dump SNAP [--name N] [--zone Z] [--type T] [--tag HEX] [--expired] [--json] [--now T]\n"
	"                          entries as zone text (or JSON lines), remaining TTLs;\n"
	"                          live ones only unless --expired; --zone is a range scan\n"
	"  get SNAP NAME [TYPE] [--class C] [--do] [--tag HEX] [--now T]\n"
	"                          the answer, printed as dig prints one (exit 1: a miss)\n"
	"  export SNAP -o OUT|- [--top N] [--level L]\n"
	"                          the portable zstd export stream\n"
	"  import IN|- -o SNAP [--now T]\n"
	"                          check a stream whole, then publish it as a snapshot\n"
	"  help                    this text\n"
	"\n"
	"options: --help, --version\n";

static int fail(const char *cmd, const char *file, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(const char *cmd, const char *file, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "dnsnap %s: %s%s", cmd, file ? file : "", file ? ": " : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_USAGE;
}

/* Whole file (or stdin for "-") into a malloc'd buffer. */
static int slurp(const char *path, uint8_t **out, size_t *out_len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	if (f == NULL)
		return -errno;
	size_t cap = 4096, n = 0;
	uint8_t *buf = malloc(cap);
	while (buf != NULL) {
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
		uint8_t *nb = realloc(buf, cap *= 2);
		if (nb == NULL)
			free(buf);
		buf = nb;
	}
	int err = ferror(f) ? -EIO : 0;
	if (f != stdin)
		fclose(f);
	if (buf == NULL)
		return -ENOMEM;
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*out_len = n;
	return 0;
}

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

/* --now T, --top N, --level L: unsigned numbers */
static int number(const char *cmd, const char *opt, const char *v, unsigned long long max,
		  unsigned long long *out)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	if (errno || *end || v[0] == '-' || v[0] == 0 || x > max)
		return fail(cmd, NULL, "%s: not a number up to %llu: %s", opt, max, v);
	*out = x;
	return 0;
}

static int open_snap(const char *cmd, const char *path, dnsnap_snap_t **s)
{
	dnsnap_diag_t d;
	int err = dnsnap_snap_open(path, s, &d);
	if (err != DNSNAP_OK)
		return fail(cmd, NULL, "%s", d.msg); /* the message names the file */
	return 0;
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
	uint32_t expiry = (uint32_t)entry[4] | (uint32_t)entry[5] << 8 |
			  (uint32_t)entry[6] << 16 | (uint32_t)entry[7] << 24;
	if ((int32_t)(expiry - lc->now) > 0)
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
	int err = dnsnap_snap_foreach(s, count_live, &lc);
	dnsnap_snap_close(s);
	if (err != DNSNAP_OK)
		return fail("info", path, "%s", dnsnap_strerror(err));
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
	return 0;
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
	int err = dnsnap_snap_verify(s, NULL, &d);
	dnsnap_snap_close(s);
	if (err != DNSNAP_OK)
		return fail("verify", NULL, "%s (%s)", d.msg, dnsnap_errname(err));
	printf("%s: good: %llu entries, digest %016llx\n", argv[1],
	       (unsigned long long)in.entry_count, (unsigned long long)in.digest);
	return 0;
}

static int hex_tag(const char *h, uint8_t *tag, size_t *len)
{
	size_t n = strlen(h);
	if (n % 2 || n / 2 > DNSNAP_TAG_MAX)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;
		if (sscanf(h + 2 * i, "%2x", &v) != 1)
			return -1;
		tag[i] = (uint8_t)v;
	}
	*len = n / 2;
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
	dnsnap_snap_close(s);
	if (err == DNSNAP_ENOTFOUND) {
		fprintf(stderr, "dnsnap get: %s %s %s: not in %s (or expired)\n", name, rclass, type,
			path);
		return 1;
	}
	if (err != DNSNAP_OK)
		return fail("get", path, "%s", dnsnap_strerror(err));
	return print_dns_message(stdout, out, n) == DNSNAP_OK ? 0 : EXIT_USAGE;
}

struct dump_ctx {
	uint32_t now;
	int json, expired, by_type;
	uint16_t qtype;
	const uint8_t *tag;
	size_t tag_len;
	uint64_t shown;
	int err;
};

static int dump_one(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		    size_t entry_len)
{
	struct dump_ctx *dc = arg;
	dnsnap_key_t k;
	if (dnsnap_key_decode(key, key_len, &k, NULL) != DNSNAP_OK ||
	    dnsnap_entry_validate(entry, entry_len, NULL) != DNSNAP_OK) {
		dc->err = 1; /* verify names it; dump goes on */
		return 0;
	}
	uint32_t expiry = (uint32_t)entry[4] | (uint32_t)entry[5] << 8 |
			  (uint32_t)entry[6] << 16 | (uint32_t)entry[7] << 24;
	if ((int32_t)(expiry - dc->now) <= 0 && !dc->expired)
		return 0;
	if (dc->by_type && k.qtype != dc->qtype)
		return 0;
	if (dc->tag_len != k.tag_len || (k.tag_len && memcmp(k.tag, dc->tag, k.tag_len) != 0))
		if (dc->tag != NULL)
			return 0;
	print_dump(stdout, key, key_len, entry, entry_len, dc->now, dc->json);
	dc->shown++;
	return 0;
}

static int cmd_dump(int argc, char **argv)
{
	const char *path = NULL, *name = NULL, *zone = NULL, *type = NULL;
	struct dump_ctx dc = { .now = (uint32_t)time(NULL) };
	uint8_t tag[DNSNAP_TAG_MAX];
	unsigned long long now = dc.now;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			dc.json = 1;
		else if (strcmp(argv[i], "--expired") == 0)
			dc.expired = 1;
		else if (strcmp(argv[i], "--name") == 0 && i + 1 < argc)
			name = argv[++i];
		else if (strcmp(argv[i], "--zone") == 0 && i + 1 < argc)
			zone = argv[++i];
		else if (strcmp(argv[i], "--type") == 0 && i + 1 < argc)
			type = argv[++i];
		else if (strcmp(argv[i], "--tag") == 0 && i + 1 < argc) {
			if (hex_tag(argv[++i], tag, &dc.tag_len) != 0)
				return fail("dump", NULL, "--tag: not hex of at most 255 bytes: %s", argv[i]);
			dc.tag = tag;
		} else if (strcmp(argv[i], "--now") == 0 && i + 1 < argc) {
			if (number("dump", "--now", argv[++i], UINT32_MAX, &now))
				return EXIT_USAGE;
		} else if (path == NULL && argv[i][0] != '-')
			path = argv[i];
		else
			return fail("dump", NULL, "unexpected argument: %s", argv[i]);
	}
	if (path == NULL)
		return fail("dump", NULL, "needs a snapshot");
	if (name != NULL && zone != NULL)
		return fail("dump", NULL, "--name and --zone do not combine: --zone covers the name");
	dc.now = (uint32_t)now;
	/* --name and --zone are key prefixes: the name's or zone's reversed labels,
	 * with the ending 0 for a name (its keys only) and without for a zone */
	uint8_t prefix[DNSNAP_NAME_MAX], q[600];
	size_t plen = 0;
	const char *which = name ? name : zone;
	if (which != NULL) {
		const char *why = NULL;
		long ql = make_query(which, "A", "IN", 0, q, sizeof q, &why);
		if (ql < 0)
			return fail("dump", NULL, "%s: %s", which, why);
		size_t wl = (size_t)dnsnap_name_len(q + 12, (size_t)ql - 12);
		if (dnsnap_key_zone_prefix(q + 12, wl, prefix, sizeof prefix, &plen) != DNSNAP_OK)
			return fail("dump", NULL, "%s: not a valid domain name", which);
		if (name != NULL)
			prefix[plen++] = 0;
	}
	if (type != NULL) {
		const char *why = NULL;
		if (make_query(".", type, "IN", 0, q, sizeof q, &why) < 0)
			return fail("dump", NULL, "--type %s: %s", type, why);
		dc.qtype = (uint16_t)(q[13] << 8 | q[14]);
		dc.by_type = 1;
	}
	dnsnap_snap_t *s;
	if (open_snap("dump", path, &s))
		return EXIT_USAGE;
	int err = dnsnap_snap_foreach_prefix(s, plen ? prefix : NULL, plen, dump_one, &dc);
	dnsnap_snap_close(s);
	if (err != DNSNAP_OK || dc.err)
		return fail("dump", path, "%s: run dnsnap verify", err ? dnsnap_strerror(err)
								  : "bad entries skipped");
	return dc.shown ? 0 : 1;
}

static int cmd_export(int argc, char **argv)
{
	const char *path = NULL, *out = NULL;
	unsigned long long top = 0, level = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			out = argv[++i];
		else if (strcmp(argv[i], "--top") == 0 && i + 1 < argc) {
			if (number("export", "--top", argv[++i], UINT64_MAX, &top))
				return EXIT_USAGE;
		} else if (strcmp(argv[i], "--level") == 0 && i + 1 < argc) {
			if (number("export", "--level", argv[++i], 19, &level))
				return EXIT_USAGE;
		} else if (path == NULL && argv[i][0] != '-')
			path = argv[i];
		else
			return fail("export", NULL, "unexpected argument: %s", argv[i]);
	}
	if (path == NULL || out == NULL)
		return fail("export", NULL, "needs a snapshot and -o OUT (- for stdout)");
	dnsnap_snap_t *s;
	if (open_snap("export", path, &s))
		return EXIT_USAGE;
	int fd = strcmp(out, "-") == 0 ? 1 : open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		dnsnap_snap_close(s);
		return fail("export", out, "%s", strerror(errno));
	}
	dnsnap_diag_t d = { 0 };
	int err = dnsnap_export_write(s, fd, (int)level, top, NULL, &d);
	dnsnap_snap_close(s);
	if (fd != 1 && close(fd) != 0 && err == DNSNAP_OK)
		err = -errno;
	if (err != DNSNAP_OK) {
		if (fd != 1)
			unlink(out); /* never leave half a stream behind */
		return fail("export", out, "%s (%s)", d.msg, dnsnap_errname(err) ? dnsnap_errname(err)
									    : strerror(-err));
	}
	return 0;
}

static int cmd_import(int argc, char **argv)
{
	const char *in = NULL, *out = NULL;
	unsigned long long now = (unsigned long long)time(NULL);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			out = argv[++i];
		else if (strcmp(argv[i], "--now") == 0 && i + 1 < argc) {
			if (number("import", "--now", argv[++i], UINT32_MAX, &now))
				return EXIT_USAGE;
		} else if (in == NULL && (argv[i][0] != '-' || strcmp(argv[i], "-") == 0))
			in = argv[i];
		else
			return fail("import", NULL, "unexpected argument: %s", argv[i]);
	}
	if (in == NULL || out == NULL)
		return fail("import", NULL, "needs a stream (- for stdin) and -o SNAP");
	int fd = strcmp(in, "-") == 0 ? 0 : open(in, O_RDONLY);
	if (fd < 0)
		return fail("import", in, "%s", strerror(errno));
	dnsnap_diag_t d = { 0 };
	int err = dnsnap_import(fd, out, (uint32_t)now, NULL, NULL, &d);
	if (fd != 0)
		close(fd);
	if (err != DNSNAP_OK)
		return fail("import", in, "%s (%s)", d.msg, dnsnap_errname(err) ? dnsnap_errname(err)
									  : strerror(-err));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return fputs(usage_text, stderr), EXIT_USAGE;
	const char *cmd = argv[1];
	if (strcmp(cmd, "--version") == 0) {
		printf("dnsnap %s (format %s)\n", DNSNAP_VERSION, dnsnap_format_version());
		return 0;
	}
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0 || strcmp(cmd, "-h") == 0)
		return fputs(usage_text, stdout), 0;
	for (int i = 2; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0)
			return fputs(usage_text, stdout), 0;
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
	if (strcmp(cmd, "export") == 0)
		return cmd_export(argc - 1, argv + 1);
	if (strcmp(cmd, "import") == 0)
		return cmd_import(argc - 1, argv + 1);
	fprintf(stderr, "dnsnap: unknown command '%s'\n%s", cmd, usage_text);
	return EXIT_USAGE;
}
