/*
 * mkreport: the library's report of vector files, in the lines of their
 * .err (vecreport.h), for a reader that is not the library to compare with
 * (tests/helpers/specread.py: the vectors, and its single-bit-flip sweeps).
 *
 *   mkreport snap KEYS FILE...   each snapshot: "file FILE", then its open,
 *                                scan, verify lines and a get line per key
 *                                of KEYS (a file of hex keys, one a line)
 *   mkreport l2 FILE...          each L2 value vector: "file FILE", its line
 *   mkreport stream DIR FILE...  each export stream: "file FILE", then
 *                                "DNSNAP_OK" or "CODE OFFSET" of its import
 *                                at 1700000000 into DIR/out.snap (removed)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vecreport.h"

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	uint8_t *b = malloc(cap);
	for (size_t k; b != NULL && (k = fread(b + n, 1, cap - n, f)) > 0;) {
		n += k;
		if (n == cap)
			b = realloc(b, cap *= 2);
	}
	fclose(f);
	*len = n;
	return b;
}

static size_t read_keys(const char *path, vecreport_key_t *keys, size_t max)
{
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		perror(path);
		exit(2);
	}
	size_t n = 0;
	char line[sizeof keys[0] + 2];
	while (n < max && fgets(line, sizeof line, f) != NULL) {
		line[strcspn(line, "\r\n")] = 0;
		if (line[0] != 0 && strlen(line) < sizeof keys[0])
			memcpy(keys[n++], line, strlen(line) + 1);
	}
	fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	static char out[VECREPORT_MAX];
	static vecreport_key_t keys[VECREPORT_KEYS];
	if (argc >= 4 && strcmp(argv[1], "snap") == 0) {
		size_t nk = read_keys(argv[2], keys, VECREPORT_KEYS);
		for (int i = 3; i < argc; i++) {
			vecreport_snap(argv[i], keys, nk, out, sizeof out);
			printf("file %s\n%s", argv[i], out);
		}
		return 0;
	}
	if (argc >= 3 && strcmp(argv[1], "l2") == 0) {
		for (int i = 2; i < argc; i++) {
			size_t len;
			uint8_t *b = slurp(argv[i], &len);
			if (b == NULL) {
				perror(argv[i]);
				return 2;
			}
			vecreport_l2(b, len, out, sizeof out);
			printf("file %s\n%s", argv[i], out);
			free(b);
		}
		return 0;
	}
	if (argc >= 4 && strcmp(argv[1], "stream") == 0) {
		char target[4096];
		snprintf(target, sizeof target, "%s/out.snap", argv[2]);
		for (int i = 3; i < argc; i++) {
			int fd = open(argv[i], O_RDONLY);
			if (fd < 0) {
				perror(argv[i]);
				return 2;
			}
			dnsnap_diag_t d = { 0 };
			int err = dnsnap_import(fd, target, 1700000000u, NULL, NULL, &d);
			close(fd);
			unlink(target);
			if (err == DNSNAP_OK)
				printf("file %s\nDNSNAP_OK\n", argv[i]);
			else
				printf("file %s\n%s %zu\n", argv[i], dnsnap_errname(err), d.offset);
		}
		return 0;
	}
	fprintf(stderr, "usage: mkreport snap KEYS FILE... | l2 FILE... | stream DIR FILE...\n");
	return 2;
}
