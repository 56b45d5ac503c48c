/*
 * print.h: entries as text, for people (dump, demo) and for the test vectors'
 * expected output. Records are printed by ldns in zone-file presentation format.
 */
#ifndef DNSNAP_CLI_PRINT_H
#define DNSNAP_CLI_PRINT_H

#include <stdio.h>

#include "dnsnap.h"

/**
 * Print a key and its entry: comment lines with the key and the metadata,
 * then the records of each section. Owners elided in the entry are written as
 * the key's (lower-case) name. TTLs are the original TTLs.
 * @return DNSNAP_OK, or a DNSNAP_E* code from the key or the entry (nothing
 *         is validated here: validate first)
 */
int print_entry(FILE *f, const uint8_t *key, size_t key_len, const uint8_t *entry, size_t len);

/**
 * One entry for `dnsnap dump`: text (a comment line with the key and its
 * metadata, then each section's records as zone text with remaining TTLs) or
 * one JSON object on one line. Remaining TTL = max(0, TTL - age at @p now).
 */
int print_dump(FILE *f, const uint8_t *key, size_t key_len, const uint8_t *entry, size_t len,
	       uint32_t now, int json);

/** The entry's bytes, annotated field by field (for the demo). */
int print_layout(FILE *f, const uint8_t *key, size_t key_len, const uint8_t *entry, size_t len);

/** A whole DNS message printed as dig prints one (ldns's packet printer);
 * WHEN is @p when (the time the answer was made for).
 * @return DNSNAP_OK, or DNSNAP_ERDATA when ldns cannot read the message */
int print_dns_message(FILE *f, const uint8_t *wire, size_t len, uint32_t when);

/**
 * A query for @p name (presentation form), @p type and @p rclass (names such as
 * "AAAA", "TYPE65280", "IN"), RD set, with an OPT of 1232 bytes and DO when
 * @p dnssec. @return its length, or -1 naming the bad field in @p why
 */
long make_query(const char *name, const char *type, const char *rclass, int dnssec,
		uint8_t *out, size_t cap, const char **why);

/** Presentation form of a wire name ("www.example.com."), into buf. */
const char *print_name(const uint8_t *name, size_t len, char *buf, size_t cap);

/** A type's or class's mnemonic ("AAAA", "TYPE65280", "IN"), into buf. */
void print_type(char *buf, size_t cap, uint16_t type);
void print_class(char *buf, size_t cap, uint16_t rclass);

/** A JSON string, quoted and escaped. */
void json_str(FILE *f, const char *s);

#endif
