/*
 * guard.h: copies of test inputs that end against a no-access page, so that
 * a decoder reading one byte past its input crashes instead of reading junk.
 */
#ifndef DNSNAP_TEST_GUARD_H
#define DNSNAP_TEST_GUARD_H

#include <stddef.h>
#include <stdint.h>

/**
 * Copy @p n bytes of @p p so that the copy ends exactly at a PROT_NONE page.
 * The copy is writable (tests corrupt it in place). n may be 0: the result
 * then points at the guard page itself and must not be dereferenced.
 *
 * @return the copy, to be released with guard_free(), or NULL if mmap fails
 */
uint8_t *guard_copy(const void *p, size_t n);

/**
 * An exact-size heap copy (at least 1 byte allocated): under ASan a read past
 * its end is caught by the redzone. Cheaper than guard_copy(), for fuzzers.
 * Aborts when out of memory; release with free().
 */
uint8_t *heap_copy(const void *p, size_t n);

/** Release a copy made by guard_copy(). Accepts NULL. */
void guard_free(uint8_t *p);

#endif /* DNSNAP_TEST_GUARD_H */
