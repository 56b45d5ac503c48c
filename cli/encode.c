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

int encode_file(const char *cmd, const char *path, uint32_t now, dnsnap_encoded_t *enc)
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
