/*
 * alloc.h: every heap call of the engine goes through here, so the allocator
 * is a build choice. Production links jemalloc (-ljemalloc replaces malloc);
 * the sanitizer build links none (ASan brings its own). Memory accounting
 * uses malloc_usable_size(), which both provide: the byte limit counts what
 * the allocator really handed out, size-class rounding included.
 */
#ifndef DNSNAP_ALLOC_H
#define DNSNAP_ALLOC_H

#include <malloc.h>
#include <stdlib.h>

static inline void *dnsnap_malloc(size_t n) { return malloc(n); }
static inline void *dnsnap_calloc(size_t n, size_t size) { return calloc(n, size); }
static inline void dnsnap_free(void *p) { free(p); }
/** Bytes the allocator reserved for @p p (0 for NULL). */
static inline size_t dnsnap_alloc_size(void *p) { return p ? malloc_usable_size(p) : 0; }

#endif
