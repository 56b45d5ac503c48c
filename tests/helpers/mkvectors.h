/*
 * mkvectors.h: what the two halves of make vectors' generator share:
 * mkvectors.c (keys, entries, messages, export streams) and mkvectors_snap.c
 * (snapshots and L2 values). Not a library: the generator's own plumbing.
 */
#ifndef DNSNAP_TEST_MKVECTORS_H
#define DNSNAP_TEST_MKVECTORS_H

#include <stddef.h>
#include <stdint.h>

#include "dnsnap.h"

#define NOW 1700000000u

/* A working copy of an encoded vector, to corrupt. */
typedef struct vec {
	uint8_t key[DNSNAP_KEY_MAX];
	size_t kl;
	uint8_t e[70000];
	size_t el;
} vec_t;

extern const char *mkv_dir;     /* spec/vectors */
extern int mkv_mismatches;      /* vectors the library disagrees with */

/** Write DIR/sub/name.ext, or exit. */
void mkv_write(const char *sub, const char *name, const char *ext, const void *p, size_t n);
/** Corpus item @p corpus_item (0..CORPUS_FIXED-1: the valid vectors 001-011) encoded at NOW. */
vec_t mkv_base(size_t corpus_item);
/** A DNS response encoded at NOW (exits when it does not encode). */
vec_t mkv_encode(const uint8_t *msg, size_t len);

/** The snapshot vectors (4NN) and the L2 value vectors (5NN). */
void mkv_snapshots(void);
void mkv_l2_values(void);

#endif
