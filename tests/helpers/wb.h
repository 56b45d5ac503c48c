/*
 * wb.h: a byte writer for hand-built DNS messages in tests (big-endian, as on
 * the wire). Overflowing the buffer aborts: a test that does is wrong.
 */
#ifndef DNSNAP_TEST_WB_H
#define DNSNAP_TEST_WB_H

#include <stddef.h>
#include <stdint.h>

typedef struct wb {
	uint8_t b[8192];
	size_t n;
} wb_t;

void put_u8(wb_t *w, unsigned v);
void put_u16(wb_t *w, unsigned v);
void put_u32(wb_t *w, uint32_t v);
void put_raw(wb_t *w, const void *p, size_t n);
/** Overwrite a u16 written earlier at @p at. */
void set_u16(wb_t *w, size_t at, unsigned v);
/** A label of @p len bytes, each @p fill; len may exceed 63 (written as is). */
void put_label(wb_t *w, unsigned len, char fill);
/** The labels of a dotted name without the root label, so a pointer may follow.
 * "" and "." write nothing. */
void put_labels(wb_t *w, const char *dotted);
/** A whole uncompressed name: labels and the root label. */
void put_name(wb_t *w, const char *dotted);
/** A dotted name in wire form into @p out (no bounds: a test's own names);
 * @return its length, the root label included. */
size_t wire_name(uint8_t *out, const char *dotted);
/** A compression pointer to @p off. */
void put_ptr(wb_t *w, size_t off);
/** Start over with a 12-byte header: ID, flags and the four counts. */
void put_header(wb_t *w, unsigned flags, unsigned qd, unsigned an, unsigned ns, unsigned ar);
/** TYPE, CLASS, TTL and a zero RDLENGTH; returns where RDLENGTH is, for end_rdata(). */
size_t put_fixed(wb_t *w, unsigned type, unsigned rclass, uint32_t ttl);
/** Set the RDLENGTH at @p rdlen_at to what was written since. */
void end_rdata(wb_t *w, size_t rdlen_at);

#endif
