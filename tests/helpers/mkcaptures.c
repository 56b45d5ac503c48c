/*
 * mkcaptures: write the capture fixtures (tests/helpers/captures.c) into DIR:
 * pcap, pcapng and TCP-framed files for the capture decoder and `dnsnap load`.
 *
 *   mkcaptures DIR
 *
 * DIR is created if missing (its parent must exist). Prints one line per file
 * written. Exit status 0 on success, 1 on any error.
 */
#include <stdio.h>

#include "captures.h"

int main(int argc, char **argv)
{
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
