/*
 * print.h: entries and DNS messages as text, for people (dump, decode, get,
 * demo) and for the test vectors' expected output, in one vocabulary (the
 * ENTRY FIELDS of dnsnap(1)), and the one presentation escaping of names and
 * character-strings that every printer of the tool uses.
 */
#ifndef DNSNAP_CLI_PRINT_H
#define DNSNAP_CLI_PRINT_H

#include <stdio.h>

#include "dnsnap.h"

/*
 * Presentation escaping (RFC 1035 section 5.1), as dig (BIND 9) writes it:
 * - PRES_LABEL, a label of a name: bytes below 0x21 (space included) and
 *   from 0x7f as \DDD; '"', '\\', '.', ';', '(', ')', '@', '$' as \c;
 * - PRES_STRING, a character-string's contents: bytes below 0x20 and from
 *   0x7f as \DDD; '"' and '\\' as \c (space and the rest as they are).
 */
enum { PRES_LABEL, PRES_STRING };
void pres_escape(FILE *f, const uint8_t *p, size_t n, int what);

/** A wire name (uncompressed, @p len bytes) in presentation form:
 * "www.example.com.", "." for the root. */
void pres_name(FILE *f, const uint8_t *name, size_t len);

/** A character-string's @p n bytes, escaped and in double quotes. */
void pres_string(FILE *f, const uint8_t *s, size_t n);

/** pres_name() into buf (cut to @p cap; 1,100 bytes hold any name). */
const char *print_name(const uint8_t *name, size_t len, char *buf, size_t cap);

/** A type's or class's mnemonic ("AAAA", "TYPE65280", "IN"), into buf. */
void print_type(char *buf, size_t cap, uint16_t type);
void print_class(char *buf, size_t cap, uint16_t rclass);
/** An rcode's name as dig prints it (NOERROR ... NOTZONE, BADVERS, RESERVEDn,
 * the last written into @p buf); every printer of an rcode uses it. */
const char *print_rcode(unsigned rc, char *buf, size_t cap);

/** The number of a type dig names and ldns does not ("NINFO", "TA"...),
 * any case; -1 for the others (ask ldns). */
long print_type_by_name(const char *name);

/**
 * Print a key and its entry as dump does at the entry's inception: the entry
 * line, its EDE lines, then each non-empty section's records with their
 * original TTLs. Owners elided in the entry are the key's (lower-case) name.
 * @return DNSNAP_OK, or a DNSNAP_E* code from the key or the entry (nothing
 *         is validated here: validate first)
 */
int print_entry(FILE *f, const uint8_t *key, size_t key_len, const uint8_t *entry, size_t len);

/**
 * One entry for `dnsnap dump`: text (the entry line "; NAME CLASS TYPE tag -
 * rcode NOERROR kind ANSWER flags ad do ttl 295 hits 0 inception ... expiry
 * ...", EDE lines, then ";; ANSWER SECTION:" and its records as dig prints
 * them, for each non-empty section) or one JSON object on one line.
 * Remaining TTL = max(0, TTL - age at @p now); before the entry's inception
 * the whole TTL, and the line says "(not yet cached at --now)".
 */
int print_dump(FILE *f, const uint8_t *key, size_t key_len, const uint8_t *entry, size_t len,
	       uint32_t now, int json);

/** The entry's bytes, annotated field by field (for the demo). */
int print_layout(FILE *f, const uint8_t *key, size_t key_len, const uint8_t *entry, size_t len);

/**
 * A whole DNS message printed as dig 9.18 prints one, from the ";; ->>HEADER<<-"
 * line to the trailer: header, flags and counts, the OPT pseudosection, the
 * question, the non-empty sections, then ";; WHEN:" (@p when) and
 * ";; MSG SIZE  rcvd:" (the message's length).
 * @return DNSNAP_OK, or DNSNAP_ERDATA when ldns cannot read the message
 */
int print_dns_message(FILE *f, const uint8_t *wire, size_t len, uint32_t when);

/** print_dns_message() with a note of ours, ";; " @p note, after the flags
 * line (where dig prints its warnings); none when @p note is NULL. */
int print_dns_message_note(FILE *f, const uint8_t *wire, size_t len, uint32_t when,
			   const char *note);

/**
 * A whole DNS message as one JSON object on one line, in RFC 8427's members:
 * ID, QR, Opcode, AA, TC, RD, RA, AD, CD, RCODE, QDCOUNT, ANCOUNT, NSCOUNT,
 * ARCOUNT, QNAME, QTYPE, QTYPEname, QCLASS, QCLASSname, answerRRs,
 * authorityRRs, additionalRRs (the OPT among them, as a record), and
 * messageOctetsHEX; each record: NAME, TYPE, TYPEname, CLASS, CLASSname,
 * TTL, RDLENGTH, RDATAHEX and "rdata" + TYPEname (its presentation, as dig).
 * @return DNSNAP_OK, or DNSNAP_ERDATA when ldns cannot read the message
 */
int print_dns_json(FILE *f, const uint8_t *wire, size_t len);

/**
 * A query for @p name (presentation form), @p type and @p rclass (names such as
 * "AAAA", "TYPE65280", "IN"), ID 0xd55d, RD set, with an OPT of 1232 bytes and
 * DO when @p dnssec. @return its length, or -1 naming the bad field in @p why
 */
long make_query(const char *name, const char *type, const char *rclass, int dnssec,
		uint8_t *out, size_t cap, const char **why);

#endif
