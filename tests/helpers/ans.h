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

struct wb;

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

/**
 * A lower tier of the test's own (dnsnap_tier_ops_t over an array): get()
 * finds the key, validates the entry and copies it, as the contract asks.
 * It counts the get() calls running now (inside) and made (gets), and
 * busy-waits @p spin loops inside each, so that a swap meets lookups in it.
 * With @p fail set, get() returns that code instead.
 */
#define ANS_TIER_MAX 16
typedef struct ans_tier {
	size_t n;
	struct {
		uint8_t key[DNSNAP_KEY_MAX];
		size_t key_len;
		uint8_t entry[2048];
		size_t entry_len;
	} e[ANS_TIER_MAX];
	unsigned spin;
	int fail;
	_Atomic int inside;
	_Atomic unsigned long gets;
} ans_tier_t;

extern const dnsnap_tier_ops_t ans_tier_ops;

/** Encode @p msg (at @p now) and add its key and entry to @p t. */
void ans_tier_add(ans_tier_t *t, const uint8_t *msg, size_t len, uint32_t now);

/** A response for @p name / A, one A record 192.0.2.@p octet with @p ttl; CD
 * set when @p cd. */
void ans_response_a(struct wb *w, const char *name, uint32_t ttl, unsigned octet, int cd);

/** A query for @p name / @p type, class IN, RD, with CD when @p cd; with an
 * OPT (size 1232, DO when @p do_bit) when @p edns. @return its length */
size_t ans_query(uint8_t *buf, const char *name, unsigned type, int cd, int edns, int do_bit);

/** ans_query() parsed into @p q (whose msg points into @p buf). */
void ans_query_parse(uint8_t *buf, const char *name, unsigned type, int cd, int edns,
		     int do_bit, dnsnap_query_t *q);

#endif
