/*
 * replay: a libFuzzer target's entry point run once over each file given, or
 * each file in each directory given (not recursively below that), for builds
 * without libFuzzer (make test-cross: gcc for s390x, under qemu-user). The
 * targets abort on a broken invariant, so a clean exit means every input
 * passed. Usage: replay_TARGET FILE|DIR...
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* defined by the targets that need set-up (fuzz_serve) */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static size_t runs;

static int one(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		perror(path);
		return -1;
	}
	size_t cap = 1 << 16, n = 0, got;
	uint8_t *b = malloc(cap);
	while (b != NULL && (got = fread(b + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			uint8_t *bigger = realloc(b, cap * 2);
			if (bigger == NULL) {
				free(b);
				b = NULL;
				break;
			}
			b = bigger;
			cap *= 2;
		}
	}
	fclose(f);
	if (b == NULL) {
		fprintf(stderr, "%s: out of memory\n", path);
		return -1;
	}
	LLVMFuzzerTestOneInput(b, n);
	free(b);
	runs++;
	return 0;
}

static int walk(const char *path, int top)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		perror(path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return one(path);
	if (!top)
		return 0;
	DIR *d = opendir(path);
	if (d == NULL) {
		perror(path);
		return -1;
	}
	int err = 0;
	struct dirent *de;
	while (err == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		char p[4096];
		int len = snprintf(p, sizeof p, "%s/%s", path, de->d_name);
		if (len < 0 || (size_t)len >= sizeof p) {
			fprintf(stderr, "%s/%s: path too long\n", path, de->d_name);
			err = -1;
		} else {
			err = walk(p, 0);
		}
	}
	closedir(d);
	return err;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++)
		if (walk(argv[i], 1) != 0)
			return 1;
	printf("%s: %zu inputs\n", argv[0], runs);
	return runs > 0 ? 0 : 1;
}
