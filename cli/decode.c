/*
 * decode: a key+entry file back to its fields and records.
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
#include "print.h"

int cmd_decode(int argc, char **argv)
{
	static const struct option longopts[] = { { NULL, 0, NULL, 0 } };
	if (opt_next("decode", argc, argv, "", longopts) != -1 ||
	    opt_operands("decode", argc, argv, 1, 1, "one key+entry file") < 0)
		return EXIT_USAGE;
	argv += optind - 1; /* the file is argv[1] below */
	uint8_t *buf;
	size_t len;
	int err = slurp(argv[1], &buf, &len);
	if (err)
		return fail("decode", argv[1], "%s", strerror(-err));
	int rc = 0;
	dnsnap_diag_t d;
	dnsnap_file_kind_t kind = dnsnap_file_kind(buf, len);
	if (kind != DNSNAP_FILE_OTHER) {
		rc = fail("decode", argv[1], "not a key+entry file (%s)", dnsnap_file_kind_text(kind));
		free(buf);
		return rc;
	}
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
