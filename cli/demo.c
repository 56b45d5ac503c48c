/*
 * demo: encode DNS responses and show the entry layout, field by field.
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

int cmd_demo(int argc, char **argv)
{
	static const struct option longopts[] = { { NULL, 0, NULL, 0 } };
	if (opt_next("demo", argc, argv, "", longopts) != -1 ||
	    opt_operands("demo", argc, argv, 1, -1,
			 "DNS response files (e.g. spec/vectors/valid/*.msg)") < 0)
		return EXIT_USAGE;
	argc -= optind - 1;
	argv += optind - 1; /* the files are argv[1 .. argc-1] below */
	dnsnap_encoded_t *enc = malloc(sizeof *enc);
	if (enc == NULL)
		return fail("demo", NULL, "out of memory");
	int rc = 0;
	size_t wire_total = 0, entry_total = 0, key_total = 0, n = 0;
	for (int i = 1; i < argc; i++) {
		size_t wire_len;
		if (encode_file("demo", argv[i], 1700000000u, enc, &wire_len) != 0) {
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
		printf("%zu %s: %zu wire bytes, %zu key bytes, %zu entry bytes "
		       "(entries are %.0f%% of the wire size)\n",
		       n, plural(n, "response", "responses"), wire_total, key_total, entry_total, 100.0 * (double)entry_total /
		       (double)wire_total);
	free(enc);
	return rc;
}
