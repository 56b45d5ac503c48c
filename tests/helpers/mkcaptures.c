/*
 * mkcaptures: write the capture fixtures (tests/helpers/captures.c) into DIR:
 * pcap, pcapng and TCP-framed files for the capture decoder and `dnsnap load`.
 *
 *   mkcaptures DIR
 *   mkcaptures --timed OUT BASE [PORT]   (the timed capture of captures.h)
 *
 * DIR is created if missing (its parent must exist). Prints one line per file
 * written. Exit status 0 on success, 1 on any error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "captures.h"

/* mkcaptures --timed OUT BASE [PORT]: the timed capture (captures.h) around
 * BASE (Unix seconds), pcapng when OUT ends in .pcapng, else pcap. */
static int timed(int argc, char **argv)
{
	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: mkcaptures --timed OUT BASE [PORT]\n");
		return 1;
	}
	size_t n = strlen(argv[2]);
	int format = n > 7 && strcmp(argv[2] + n - 7, ".pcapng") == 0 ? CF_PCAPNG : CF_PCAP_US_LE;
	cbuf_t b = { 0 };
	captures_timed(&b, format, strtoll(argv[3], NULL, 10),
		       (uint16_t)(argc == 5 ? atoi(argv[4]) : 53));
	FILE *f = fopen(argv[2], "wb");
	int bad = f == NULL || fwrite(b.p, 1, b.n, f) != b.n;
	if (f != NULL && fclose(f) != 0)
		bad = 1;
	cbuf_free(&b);
	if (bad) {
		perror(argv[2]);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--timed") == 0)
		return timed(argc, argv);
	if (argc != 2 || argv[1][0] == 0 || argv[1][0] == '-') {
		fprintf(stderr, "usage: mkcaptures DIR\n"
				"writes the %zu capture fixtures into DIR\n",
			captures_nfixtures);
		return 1;
	}
	if (captures_write_dir(argv[1], stdout) != 0)
		return 1;
	printf("mkcaptures: wrote %zu files to %s\n", captures_nfixtures, argv[1]);
	return 0;
}
