/*
 * corpus.h: a deterministic corpus of DNS responses, built with ldns.
 *
 * Every message is a complete DNS response in wire form as ldns_pkt2wire()
 * writes it (name compression on, except for a few messages written without
 * compression on purpose). Message i is the same on every run and platform:
 * its content comes from a private xorshift64* generator seeded from i.
 *
 * Items 0..10 are the worked examples of the format's design issue, in this
 * order (see CORPUS_FIXED and corpus.c): one A; an AAAA set of 4; a TXT of
 * 200 bytes; a CNAME chain www -> cdn -> 2 x A; NXDOMAIN with SOA; NODATA;
 * a DNSSEC-signed A with RRSIG; MX; a referral with NS and glue; unknown type
 * TYPE65280; a query name of exactly 255 wire bytes with an A record.
 * The rest cycle through the generator's categories (see corpus.c).
 *
 * Link with -lldns.
 */
#ifndef DNSNAP_TEST_CORPUS_H
#define DNSNAP_TEST_CORPUS_H

#include <stddef.h>
#include <stdint.h>

#define CORPUS_FIXED 11 /* the worked examples come first */

/** Number of messages in the corpus (at least 200). */
size_t corpus_count(void);

/**
 * Build message @p i (0 <= i < corpus_count()).
 * @param[out] wire  malloc'd wire form; the caller frees it with free()
 * @param[out] len   its length
 * @return 0 on success, -1 when i is out of range or ldns failed (a message
 *         on stderr says why; that would be a bug in the generator)
 */
int corpus_message(size_t i, uint8_t **wire, size_t *len);

/** A short description of message @p i ("A", "CNAME chain", ...). */
const char *corpus_name(size_t i);

#endif /* DNSNAP_TEST_CORPUS_H */
