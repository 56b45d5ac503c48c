/*
 * fuzz_import: the export stream decoder. The input is a decompressed stream;
 * it is compressed here and read back through dnsnap_import(), so the fuzzer
 * explores the stream's own parsing rather than zstd's frame checks. Whatever
 * the input, the import must return an error code or publish a snapshot that
 * opens and verifies; never crash.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <zstd.h>

#include "../../engine/dnsnap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	if (path[0] == 0)
		snprintf(path, sizeof path, "/tmp/fuzz_import.%ld.snap", (long)getpid());
	size_t cap = ZSTD_compressBound(size);
	void *z = malloc(cap);
	if (z == NULL)
		return 0;
	size_t zn = ZSTD_compress(z, cap, data, size, 1);
	int fd = memfd_create("stream", 0);
	if (ZSTD_isError(zn) || fd < 0 || write(fd, z, zn) != (ssize_t)zn ||
	    lseek(fd, 0, SEEK_SET) != 0) {
		free(z);
		if (fd >= 0)
			close(fd);
		return 0;
	}
	free(z);
	dnsnap_diag_t d;
	unlink(path);
	int err = dnsnap_import(fd, path, 1700000000u, NULL, NULL, &d);
	close(fd);
	if (err == DNSNAP_OK) {
		dnsnap_snap_t *s;
		if (dnsnap_snap_open(path, &s, &d) != DNSNAP_OK || dnsnap_snap_verify(s, NULL, &d) != DNSNAP_OK)
			abort(); /* an accepted stream must give a good snapshot */
		dnsnap_snap_close(s);
		unlink(path);
	} else if (access(path, F_OK) == 0) {
		abort(); /* a refused stream must leave nothing */
	}
	return 0;
}
