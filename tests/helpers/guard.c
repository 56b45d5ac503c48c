/*
 * guard.c: see guard.h.
 *
 * Layout of one mapping, in pages:
 *
 *   [ bookkeeping ][ data ... data ][ guard (PROT_NONE) ]
 *                        ^p     ^p+n == guard
 *
 * The data pages are the ceil(n / page) pages right before the guard, so the
 * bookkeeping page is always the page before the one holding p (rounded
 * down), also when n is 0 (p is then the guard page) or a multiple of the
 * page size (p is then page-aligned). guard_free() finds the mapping's size
 * there. The bookkeeping page is PROT_NONE too (guard_free() opens it), so an
 * underread crashes as well when the data starts on a page boundary.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "guard.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define GUARD_MAGIC 0x67756172646d6170ull /* "guardmap" */

struct guard_book {
	unsigned long long magic;
	size_t map_len;
};

static size_t page_size(void)
{
	long ps = sysconf(_SC_PAGESIZE);
	return ps > 0 ? (size_t)ps : 4096;
}

uint8_t *guard_copy(const void *p, size_t n)
{
	size_t ps = page_size();
	size_t data_pages = n / ps + (n % ps != 0);
	if (data_pages > SIZE_MAX / ps - 2)
		return NULL;
	size_t map_len = (data_pages + 2) * ps;

	uint8_t *base = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			     -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	uint8_t *guard = base + map_len - ps;
	struct guard_book book = { GUARD_MAGIC, map_len };
	memcpy(base, &book, sizeof book);
	if (mprotect(guard, ps, PROT_NONE) != 0 || mprotect(base, ps, PROT_NONE) != 0) {
		munmap(base, map_len);
		return NULL;
	}
	uint8_t *dst = guard - n;
	if (n > 0)
		memcpy(dst, p, n);
	return dst;
}

void guard_free(uint8_t *p)
{
	if (p == NULL)
		return;
	size_t ps = page_size();
	uint8_t *base = (uint8_t *)((uintptr_t)p / ps * ps) - ps;
	struct guard_book book;
	if (mprotect(base, ps, PROT_READ) != 0)
		abort(); /* not from guard_copy() */
	memcpy(&book, base, sizeof book);
	if (book.magic != GUARD_MAGIC)
		abort(); /* not from guard_copy(), or already freed */
	munmap(base, book.map_len);
}

uint8_t *heap_copy(const void *p, size_t n)
{
	uint8_t *c = malloc(n > 0 ? n : 1);
	if (c == NULL)
		abort();
	if (n > 0)
		memcpy(c, p, n);
	return c;
}
