/*
 * unbound.h: Unbound's cache as text, in and out.
 *
 * `unbound-control dump_cache` writes, and `unbound-control load_cache` reads:
 *
 *   START_RRSET_CACHE
 *   ;rrset[ nsec_apex] TTL COUNT NSIGS TRUST SECURITY
 *   COUNT lines of the RRset, then NSIGS lines of its RRSIGs, in zone-file form
 *   ...
 *   END_RRSET_CACHE
 *   START_MSG_CACHE
 *   msg QNAME QCLASS QTYPE FLAGS QDCOUNT TTL SECURITY AN NS AR
 *   AN + NS + AR reference lines "OWNER CLASS TYPE RRSET_FLAGS", in section order
 *   ...
 *   END_MSG_CACHE
 *   EOF
 *
 * Every TTL in it (the ;rrset line's, each RR line's, the msg line's) is the
 * time left at the moment of the dump, in seconds: Unbound prints its absolute
 * expiry minus its clock and adds its clock back when loading. A message's
 * RRsets are found by owner (any case), type and class; RRSET_FLAGS 4 marks
 * the SOA of a negative answer, which Unbound keeps apart from the zone's
 * own SOA (the ;rrset line does not say which is which).
 * Depends on libc and ldns (zone-file parsing and printing).
 */
#ifndef DNSNAP_CLI_UNBOUND_H
#define DNSNAP_CLI_UNBOUND_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dnsnap.h"

/* ------------------------------------------------------------ reading */

/** Why something of a dump was not used; the index into unbound_stats_t.skipped. */
enum unbound_reason {
	UB_UNKNOWN_LINE,  /* line: unknown syntax, or out of place (before START_RRSET_CACHE,
			   * an RR line outside an RRset, a reference outside a msg) */
	UB_LONG_LINE,     /* line: longer than UNBOUND_LINE_MAX, skipped whole */
	UB_BAD_RRSET,     /* ;rrset line: does not parse, or no records, or too many */
	UB_BADRR,         /* RRset: has a BADRR line (Unbound could not print a record) */
	UB_BAD_RR,        /* RRset: a record line that ldns cannot read */
	UB_RR_MISMATCH,   /* RRset: a line whose owner, type or class differs from the
			   * first's, or a signature line that is not an RRSIG */
	UB_RRSET_CUT,     /* RRset: fewer lines than announced before the section's end */
	UB_BAD_MSG,       /* msg line: does not parse, or too many references */
	UB_BAD_REF,       /* message: a BADREF line or a reference that does not parse */
	UB_MISSING_RRSET, /* message: a referenced RRset is not in the dump */
	UB_MSG_CUT,       /* message: fewer references than announced before the end */
	UB_BOGUS,         /* message: DNSSEC bogus (Unbound answers SERVFAIL, not this) */
	UB_TOO_BIG,       /* message: the rebuilt response exceeds 65535 bytes */
	UB_NO_EOF,        /* dump: ended without its EOF line (cut short) */
	UB_REASONS
};

/** Longest line read; Unbound's own limit is its 65535-byte buffer. */
#define UNBOUND_LINE_MAX (256u * 1024)

typedef struct unbound_stats {
	uint64_t lines;                  /* lines read */
	uint64_t rrsets;                 /* RRsets read whole */
	uint64_t messages;               /* msg lines read */
	uint64_t responses;              /* responses handed to the callback */
	uint64_t skipped[UB_REASONS];    /* by reason, see unbound_reason_name() */
	int last_problem;                /* the reason last counted, or -1 */
	uint64_t last_problem_line;      /* its line number, from 1 */
} unbound_stats_t;

/**
 * Receives each rebuilt response: a DNS message in wire form (uncompressed),
 * valid only during the call.
 * @return 0 to go on, non-zero to stop reading
 */
typedef int (*unbound_fn)(void *arg, const uint8_t *msg, size_t len);

/**
 * Whether @p head, the first @p n bytes of a file, starts a dump_cache text:
 * its first line is START_RRSET_CACHE (17 bytes at least, then a line end or
 * nothing).
 */
int unbound_is_dump(const uint8_t *head, size_t n);

/**
 * Read a dump_cache text and rebuild each cached message as the response
 * Unbound answers from its cache:
 * - header: ID 0; the msg line's FLAGS (QR and RA as Unbound records them, no
 *   RD, the RCODE) with QR set, and AD when the message is secure (SECURITY
 *   5: Unbound sets AD for such answers to clients that ask for DNSSEC);
 * - the question (QNAME QTYPE QCLASS), one, whatever QDCOUNT says;
 * - the referenced RRsets, the first AN in the answer section, the next NS
 *   in authority, the last AR in additional; each RRset's records then its
 *   RRSIGs, each record with its TTL from its line (time left at the dump:
 *   rebuild and cache them at "now", right after the dump);
 * - no OPT, no name compression.
 * Of several RRsets under one owner, type and class (the zone's SOA and a
 * negative answer's), a reference with RRSET_FLAGS 4 takes the one with the
 * lowest TTL and other references the highest (the nsec_apex mark must
 * match when one candidate has it). Bogus messages are not rebuilt.
 *
 * What cannot be used is counted by reason and skipped; it never stops the
 * reading. Memory: the dump's RRsets, in wire form, plus one line.
 *
 * @param[out] st   zeroed, then counted into; filled also on error
 * @param[out] err  on -1: "PATH: what is wrong"; else ""
 * @return 0 when the whole input was read; 1 when @p fn asked to stop; -1 when
 *         the input cannot be read (missing, unreadable, a read error, out of
 *         memory)
 */
int unbound_read(const char *path, unbound_fn fn, void *arg, unbound_stats_t *st,
		 char *err, size_t errcap);

/** unbound_read() on an open stream, from its current position (the fuzzer's
 * entry). @p f stays the caller's; @p name is used in messages only. */
int unbound_read_stream(FILE *f, const char *name, unbound_fn fn, void *arg,
			unbound_stats_t *st, char *err, size_t errcap);

/** The reason's description ("RRset not in the dump"), or "?" when out of range. */
const char *unbound_reason_name(int reason);
/** The reason counted, for reports: "1 line too long", "2 lines too long". */
const char *unbound_reason_text(int reason, uint64_t n);

/* ------------------------------------------------------------ writing */

typedef struct unbound_export_stats {
	uint64_t entries;        /* entries of the snapshot seen */
	uint64_t messages;       /* msg entries written */
	uint64_t rrsets;         /* ;rrset blocks written */
	uint64_t shared;         /* references to an RRset another message also uses */
	uint64_t conflicts;      /* versions of an RRset (owner, type, class) whose records
				  * differ from the one written: the freshest is written */
	uint64_t expired;        /* entries left out: expired at now */
	uint64_t cd;             /* ... cached for CD queries (may hold unvalidated data) */
	uint64_t tagged;         /* ... with a tag (a view or subnet Unbound does not know) */
	uint64_t bad;            /* ... failing validation */
	uint64_t dropped;        /* additional-section RRsets left out of their message:
				  * no time left (Unbound would drop the whole message) */
	uint64_t unprintable;    /* messages left out: ldns cannot print a record of one
				  * of their RRsets (that RRset is left out too) */
} unbound_export_stats_t;

/**
 * Write the live entries of @p s (not expired at @p now) as a load_cache text
 * (the format above, ending in EOF). Each entry becomes a msg entry: flags
 * QR, RA and the RCODE; its TTL the entry's time left (Expiry - now);
 * SECURITY 5 (secure) for entries the resolver validated (Flags.AUTH), else 0
 * (unchecked: a validating Unbound checks them again). Its records become
 * RRsets, grouped by owner (any case), type and class within each section,
 * RRSIGs in the RRset they cover (an RRSIG with no such RRset is an RRset of
 * type RRSIG); each RRset is written once however many messages refer to it:
 * - records: those of the entry with the latest Inception (the first written
 *   on a tie); all at one TTL, the lowest time left (TTL - (now - Inception),
 *   at least 0) among the versions with these records;
 * - TRUST: answer 5 (ans_noAA), authority 2 (auth_noAA), additional 1
 *   (add_noAA), the highest of its uses; 11 (validated) when secure;
 * - SECURITY: 5 when any entry using it was validated, else 0.
 * References carry RRSET_FLAGS 0, even for a negative answer's SOA: a
 * ;rrset line cannot say 4, so Unbound's load_cache would not find it (it
 * drops Unbound's own negative answers this way).
 * Entries cached for CD queries or under a tag are left out (counted).
 *
 * Memory: every RRset and message, in wire form, until the end.
 * @param st  may be NULL
 * @return DNSNAP_OK; DNSNAP_ENOMEM; -EIO when writing @p out fails; an error
 *         of dnsnap_snap_foreach() (diag names it)
 */
int unbound_export(dnsnap_snap_t *s, FILE *out, uint32_t now, unbound_export_stats_t *st,
		   dnsnap_diag_t *diag);

#endif /* DNSNAP_CLI_UNBOUND_H */
