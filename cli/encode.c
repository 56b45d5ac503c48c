/*
 * encode: one DNS response (wire form) to a key+entry file; encode_file(),
 * which demo shares.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

enum { ENCODE_NOW = 0x100 };

int encode_file(const char *cmd, const char *path, uint32_t now, dnsnap_encoded_t *enc,
		size_t *wire_len)
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
	if (wire_len != NULL)
		*wire_len = len;
	return 0;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * encode: the key+entry file to -o OUT through out_open(), as export writes:
 * a regular file is written beside it and renamed over it when whole (so a
 * file being served is never changed in place), binary is never written to a
 * terminal, and a failure names OUT once.
 */
int cmd_encode(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "now", required_argument, NULL, ENCODE_NOW },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = "-";
	uint32_t now = (uint32_t)time(NULL);
	int c;
	while ((c = opt_next("encode", argc, argv, "o:", longopts)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case ENCODE_NOW:
			if (time_arg("encode", "--now", optarg, &now))
				return EXIT_USAGE;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (opt_operands("encode", argc, argv, 1, 1, "a DNS response file (- for stdin)") < 0)
		return EXIT_USAGE;
	const char *in = argv[optind];
	dnsnap_encoded_t *enc = malloc(sizeof *enc);
	if (enc == NULL)
		return fail("encode", NULL, "out of memory");
	int rc = encode_file("encode", in, now, enc, NULL);
	out_file_t o;
	if (rc == 0 && out_open("encode", out, 1, &o) != 0)
		rc = EXIT_USAGE;
	else if (rc == 0) {
		uint8_t kl[2] = { (uint8_t)enc->key_len, (uint8_t)(enc->key_len >> 8) };
		int err = write_all(o.fd, kl, 2);
		if (err == 0)
			err = write_all(o.fd, enc->key, enc->key_len);
		if (err == 0)
			err = write_all(o.fd, enc->entry, enc->entry_len);
		int cerr = out_close(&o, err == 0, 0);
		if (err == 0)
			err = cerr;
		if (err != 0)
			rc = fail("encode", o.name, "writing: %s", strerror(-err));
	}
	free(enc);
	return rc;
}
