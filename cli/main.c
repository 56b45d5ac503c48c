/*
 * main.c: the dnsnap command-line tool. Uses only the public header.
 *
 * Exit codes, like grep: 0 success, 1 nothing found, 2 bad usage or bad data.
 */
#include <errno.h>
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
	fprintf(stderr, "dnsnap: unknown command '%s'\n%s", cmd, usage_text);
	return EXIT_USAGE;
}
