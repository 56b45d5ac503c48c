/*
 * vecreport.h: what the library says of a snapshot vector (.snap) or an L2
 * value vector (.l2), written as the lines of the vector's .err
 * (spec/FORMAT.md, "Snapshot vectors" and "L2 value vectors"):
 *
 *   open DNSNAP_OK | open CODE OFFSET MESSAGE
 *   scan DNSNAP_OK - entries N damaged M | scan CODE OFFSET entries N damaged M
 *   verify DNSNAP_OK | verify CODE OFFSET MESSAGE
 *   get KEYHEX found|miss|damaged
 *
 * and for an L2 value one line, "DNSNAP_OK" or "CODE OFFSET". make vectors
 * (mkvectors) compares what it wrote with these, test_vectors checks every
 * vector with them, and mkreport prints them for the reader written from the
 * spec alone (tests/helpers/specread.py) to compare with.
 */
#ifndef DNSNAP_TEST_VECREPORT_H
#define DNSNAP_TEST_VECREPORT_H

#include <stddef.h>
#include <stdint.h>

#include "dnsnap.h"

#define VECREPORT_MAX 16384     /* a report's text, at most */
#define VECREPORT_KEYS 64       /* get lines, at most */

typedef char vecreport_key_t[2 * DNSNAP_KEY_MAX + 1]; /* a key in hex */

/**
 * The report of the snapshot at @p path: its open line; when it opens, its
 * scan line (a whole scan), its verify line (dnsnap_snap_verify()) and a get
 * line per key of @p keys (dnsnap_snap_get(): "damaged" when the miss is
 * counted in dnsnap_snap_bad_entries()), in that order, into @p out.
 */
void vecreport_snap(const char *path, const vecreport_key_t *keys, size_t nkeys, char *out,
		    size_t cap);

/** The keys of the get lines of an .err text @p err, in order; @return how many. */
size_t vecreport_keys(const char *err, vecreport_key_t *keys, size_t max);

/** The report line of an L2 value vector's bytes (Key_Len u16 LE | Key | Value). */
void vecreport_l2(const uint8_t *file, size_t len, char *out, size_t cap);

/**
 * Compare report @p got with the expected @p want: the same lines, word for
 * word, except that the text after an open or verify line's offset in @p want
 * need only be part of @p got's.
 * @return 0 when they agree; else 1, and the first difference in @p why
 */
int vecreport_compare(const char *want, const char *got, char *why, size_t cap);

#endif
