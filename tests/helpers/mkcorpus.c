/*
 * mkcorpus: write every corpus message (tests/helpers/corpus.c) to
 * DIR/NNN.msg, the DNS response in wire form, e.g. as fuzzer seeds.
 *
 *   mkcorpus DIR
 *
 * DIR is created if missing (its parent must exist). Exit status 0 on
 * success, 1 on any error.
 * Link: tests/helpers/mkcorpus.c tests/helpers/corpus.c -lldns
 */
#include "corpus.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int main(int argc, char **argv)
{
	if (argc != 2 || argv[1][0] == 0 || argv[1][0] == '-') {
		fprintf(stderr, "usage: mkcorpus DIR\n"
				"writes the %zu corpus messages as DIR/NNN.msg\n",
			corpus_count());
		return 1;
	}
	const char *dir = argv[1];
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "mkcorpus: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	size_t n = corpus_count();
	for (size_t i = 0; i < n; i++) {
		uint8_t *wire = NULL;
		size_t len = 0;
		if (corpus_message(i, &wire, &len) != 0) {
			fprintf(stderr, "mkcorpus: cannot build message %zu\n", i);
			return 1;
		}
		char path[4096];
		int pl = snprintf(path, sizeof path, "%s/%03zu.msg", dir, i);
		if (pl < 0 || (size_t)pl >= sizeof path) {
			fprintf(stderr, "mkcorpus: path too long\n");
			free(wire);
			return 1;
		}
		FILE *f = fopen(path, "wb");
		if (!f) {
			fprintf(stderr, "mkcorpus: %s: %s\n", path, strerror(errno));
			free(wire);
			return 1;
		}
		size_t w = fwrite(wire, 1, len, f);
		int cerr = fclose(f);
		free(wire);
		if (w != len || cerr != 0) {
			fprintf(stderr, "mkcorpus: %s: write failed\n", path);
			return 1;
		}
	}
	printf("mkcorpus: wrote %zu messages to %s\n", n, dir);
	return 0;
}
