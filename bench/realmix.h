/*
 * realmix.h: a "realistic" resolver-cache mix: DNS responses in wire form
 * that look like what a recursive resolver holds, and the queries that ask
 * for them. The counterpart of mix.h (the Big Pineapple mix, whose TXT rdata
 * is random bytes and whose names share nothing): here names share zones,
 * rdata is made of the strings and structures real zones carry (SPF includes,
 * site-verification tokens, DKIM keys, CDN hostnames, SOA and NS sets of the
 * big DNS hosts), and the random parts are those that are random in real
 * data (addresses, signatures, keys, tokens).
 *
 * Entry i is a pure function of (seed, i), like mix.h. Entries come in
 * groups of four (i / 4) sharing one zone, so the cache holds a zone's names
 * side by side as a real one does (apex, www, a service host, DKIM/DMARC
 * names). Every entry has its own cache key (name, type) for i < 2^24.
 *
 * The mix, per entry: the shares drawn, then in brackets those measured over
 * entries 0..199,999 of seed 1 (provider zones and the slot rules move some
 * draws; bench_export prints the measured shares). The reasons are rough
 * readings of public resolver statistics (Cloudflare Radar's query types) and
 * of what a cache keeps: one entry per distinct name and type, so the long
 * tail (negative answers, mail lookups) weighs more than in query counts.
 * - A 32%, AAAA 16% [A 35.3%, AAAA 17.6%]: 1-8 addresses (mostly 1-2) from
 *   one hosting prefix, TTLs 60-86400 from the values zones use (300,
 *   3600...); 12% of zones are CDN and cloud hostnames
 *   (d1x2y3....cloudfront.net, e12345.a.akamaiedge.net,
 *   ec2-3-91-2-7.compute-1.amazonaws.com...), answered with A/AAAA only.
 *   Address queries are most of a resolver's traffic (A + AAAA about three
 *   quarters of queries).
 * - CNAME chains 15% [13.3%]: www.x -> www.x.edgekey.net -> e123.a.akamaiedge.net
 *   -> A, and the CloudFront, Cloudflare, Fastly, Azure Front Door, GitHub
 *   Pages, Google hosting and AWS ELB shapes: 1-4 CNAMEs, then 1-8 A/AAAA.
 *   Large sites mostly sit behind a CDN.
 * - TXT 10% [8.8%]: apex sets (SPF with the usual includes, and 0-5 of the
 *   google-site-verification, MS=, facebook-, apple-, atlassian-, docusign,
 *   stripe, globalsign tokens), _dmarc policies, DKIM keys (1024/2048-bit RSA,
 *   the real DER prefix, split into 255-byte strings). A mail server looks
 *   these up for the messages it receives.
 * - MX 4% [3.5%], NS 3% [2.6%]: the Google, Microsoft 365, Mimecast,
 *   Proofpoint, Zoho and self-hosted MX sets; Route 53, Cloudflare, GoDaddy,
 *   NS1 and self-hosted NS sets, as apex NS answers or as referrals (empty
 *   answer, NS in authority, glue in additional).
 * - Negative 10% [10.0%]: NXDOMAIN 6% (wpad, _mta-sts, _smtp._tls, typos,
 *   random labels) and NODATA 4% (HTTPS, AAAA, MX on names that have none),
 *   each with the zone's SOA in authority. A cache keeps every junk name it
 *   was asked for, for the SOA's negative TTL; HTTPS queries (browsers send
 *   them beside A/AAAA) mostly get NODATA.
 * - DNSSEC-signed 10% [8.8%]: A/AAAA/TXT/MX answers with their RRSIG
 *   (algorithm 13 with a 64-byte signature in 70% of signed zones, else 8 with
 *   256 bytes; labels, original TTL, inception and expiration around
 *   REALMIX_NOW, the zone's key tag, signer = the zone) and the AD bit; at a
 *   zone's apex DNSKEY sets (ZSK + KSK, a third key in rollovers) and DS sets
 *   signed by the TLD. Signed zones are a few percent of .com and far more
 *   under .nl or .se: 10% is the upper end, for a validating resolver.
 * Every response carries an OPT record (1232, DO on the signed ones), as
 * responses from authoritative servers do; names are compressed.
 *
 * libc only.
 */
#ifndef DNSNAP_BENCH_REALMIX_H
#define DNSNAP_BENCH_REALMIX_H

#include <stddef.h>
#include <stdint.h>

/* Upper bounds of the messages the mix builds (the largest: a DNSKEY set of
 * three 2048-bit RSA keys with two RRSIGs, about 1.6 KB). */
#define REALMIX_RESPONSE_MAX 4096
#define REALMIX_QUERY_MAX 288

/** The time signatures are valid around (inception before, expiration after). */
#define REALMIX_NOW 1700000000u

/** What an entry is (realmix_kind()). */
enum realmix_kind {
	REALMIX_A, REALMIX_AAAA, REALMIX_CNAME, REALMIX_TXT, REALMIX_MX, REALMIX_NS,
	REALMIX_REFERRAL, REALMIX_NXDOMAIN, REALMIX_NODATA, REALMIX_SIGNED, REALMIX_DNSKEY,
	REALMIX_DS, REALMIX_KINDS
};

/** Choose the seed of every later call (the same seed gives the same mix). */
void realmix_init(uint64_t seed);

/** The kind of entry @p i (an enum realmix_kind). */
unsigned realmix_kind(size_t i);

/** The kind's name ("A", "CNAME chain", "NXDOMAIN"...), or "?". Static storage. */
const char *realmix_kind_name(unsigned kind);

/** The query type of entry @p i. */
uint16_t realmix_qtype(size_t i);

/** The query name of entry @p i in wire form. @return its length */
size_t realmix_name(size_t i, uint8_t out[255]);

/**
 * Entry @p i as a DNS response: header (QR, RD, RA; AD on signed answers;
 * NXDOMAIN's rcode), the question, the sections, an OPT record; names
 * compressed (never in RRSIG rdata).
 * @return the message's length (unlike mix_response(), which returns 0 or
 *         -1), or 0 when @p cap is too small (REALMIX_RESPONSE_MAX always fits)
 */
size_t realmix_response(size_t i, uint8_t *buf, size_t cap);

/**
 * The query for entry @p i: ID @p id, RD set, one question, an OPT record
 * (1232, DO set when the entry is DNSSEC-signed).
 * @return the message's length, or 0 when @p cap is too small
 *         (REALMIX_QUERY_MAX always fits)
 */
size_t realmix_query(size_t i, uint16_t id, uint8_t *buf, size_t cap);

#endif /* DNSNAP_BENCH_REALMIX_H */
