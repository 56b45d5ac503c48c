/*
 * ans.h: hand-built queries and a reader of the answers dnsnap builds, for
 * the tests of TTLs, lookups and lower tiers (test_ttl, test_lookup,
 * test_tier). The reader trusts nothing: a malformed answer is -1.
 */
#ifndef DNSNAP_TEST_ANS_H
#define DNSNAP_TEST_ANS_H

#include <stddef.h>
#include <stdint.h>

#include "dnsnap.h"

#define ANS_RR_MAX 64
#define ANS_EDE_MAX 8

typedef struct ans_rr {
	unsigned sec;            /* 0 answer, 1 authority, 2 additional */
	uint16_t type;
	uint32_t ttl;
	size_t rdata, rdlen;     /* offset and length in the message */
} ans_rr_t;

typedef struct ans {
	uint16_t id, flags;
	unsigned count[4];       /* QD, AN, NS, AR as the header says */
	size_t n;                /* records, the OPT left out */
	ans_rr_t rr[ANS_RR_MAX];
	int opt;                 /* an OPT record was there */
	unsigned nede;
	uint16_t ede[ANS_EDE_MAX]; /* the EDE options' INFO-CODEs, in order */
} ans_t;

/** Read an answer. @return 0, or -1 when it does not parse */
int ans_parse(const uint8_t *m, size_t len, ans_t *a);

/** The last byte of the first record of @p type (an A's low octet), or -1. */
int ans_last_octet(const uint8_t *m, const ans_t *a, uint16_t type);

/** A query for @p name / @p type, class IN, RD, with CD when @p cd; with an
 * OPT (size 1232, DO when @p do_bit) when @p edns. @return its length */
size_t ans_query(uint8_t *buf, const char *name, unsigned type, int cd, int edns, int do_bit);

/** ans_query() parsed into @p q (whose msg points into @p buf). */
void ans_query_parse(uint8_t *buf, const char *name, unsigned type, int cd, int edns,
		     int do_bit, dnsnap_query_t *q);

#endif
