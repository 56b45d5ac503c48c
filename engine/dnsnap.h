/*
 * dnsnap.h: the public interface of libdnsnap.
 *
 * - the format (dnsnap_format.h): cache keys, the entry layout, its readers
 *   and validator;
 * - queries and answers: parse a client's query, build the response from an
 *   entry wherever its bytes live (the heap now, a mapped snapshot later);
 * - the in-memory cache a resolver embeds.
 *
 * The CLI includes only this header.
 */
#ifndef DNSNAP_H
#define DNSNAP_H

#include "dnsnap_format.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DNSNAP_VERSION "0.9.0"

/* ---------------------------------------------------------------- queries */

/** A client's query, parsed. Points into the query message (not copied): the
 * message must outlive it. */
typedef struct dnsnap_query {
	const uint8_t *msg;
	size_t len;
	uint16_t id;
	uint16_t flags;          /* the query's header flags (RD, CD, AD ...) */
	size_t qname_off;        /* 12: the question name, as the client spelled it */
	size_t qname_len;        /* its wire length (queries carry no pointers here) */
	size_t question_end;     /* offset after QTYPE and QCLASS */
	uint16_t qtype;
	uint16_t qclass;
	int edns;                /* the query had an OPT record */
	uint16_t udp_size;       /* the client's UDP payload size; 512 without EDNS */
	int do_bit;              /* DNSSEC OK */
	uint8_t key[DNSNAP_KEY_MAX]; /* the cache key: lower-cased name, CD, tag */
	size_t key_len;
} dnsnap_query_t;

/**
 * Parse a query (QR=0, opcode QUERY, QDCOUNT 1, no answer or authority
 * records, at most an OPT in additional) and build its cache key.
 *
 * @param tag  the resolver's tag for this client (ECS scope, view), may be NULL
 * @return DNSNAP_OK; DNSNAP_ENOTCACHE for a message that is not such a query
 *         (an EDNS version other than 0 too: the resolver answers BADVERS);
 *         DNSNAP_ETRUNC, DNSNAP_ELABEL, DNSNAP_ENAME, DNSNAP_EPOINTER,
 *         DNSNAP_EOPT with diag->offset for malformed ones; DNSNAP_ETOOBIG
 *         when name and tag make a key over 511 bytes; DNSNAP_EINVAL
 */
int dnsnap_query_parse(const uint8_t *msg, size_t len, const uint8_t *tag, size_t tag_len,
		       dnsnap_query_t *q, dnsnap_diag_t *diag);

/* --------------------------------------------------------------- answers */

typedef struct dnsnap_answer_opts {
	uint32_t now;            /* Unix seconds */
	uint16_t max_size;       /* the transport's limit: 0 = UDP rules (the client's
				  * EDNS size, 512 without EDNS), 65535 for TCP */
	uint16_t our_udp_size;   /* advertised in our OPT; default DNSNAP_EDNS_SIZE (1232) */
	unsigned rotate;         /* round robin: A and AAAA RRsets start at member
				  * rotate % n (0 = as stored) */
	int stale;               /* serve stale (RFC 8767): TTLs are 30 s, EDE 3 */
	uint32_t min_ttl;        /* positive entries: each record's TTL is raised to this */
	uint32_t max_ttl;        /* ... and capped at this (0 = no cap), before aging */
} dnsnap_answer_opts_t;

/** The stale TTL of RFC 8767 section 4. */
#define DNSNAP_STALE_TTL 30

/** The longest a stale window may be (RFC 8767 advises 1 to 3 days, at most 7):
 * an entry expired less than this long ago may still be served stale by a
 * cache that serves stale, and is "stale" to the tool; one expired longer ago
 * is never served. */
#define DNSNAP_STALE_MAX 604800

/**
 * Build the response to @p q from an entry, into @p out. No allocation, no
 * system call; @p entry may be anywhere (heap, mapped snapshot) and is only
 * read. Any bytes are read safely (every length and offset checked as it is
 * read: a malformed entry gives an error, or the answer of what it holds),
 * but an entry from outside the process must be known undamaged before it is
 * served: validated (dnsnap_entry_validate()) or its checksum checked (the
 * snapshot's Value_Check).
 *
 * - header: ID, RD and CD copied; QR, RA set; AD when the entry is
 *   authenticated and the client set DO or AD; RCODE from the entry;
 * - the question echoed byte for byte (0x20 casing survives); owners elided
 *   in the entry become pointers to it;
 * - TTLs, with age = max(0, now - Inception): in a positive entry (kind
 *   ANSWER or REFERRAL) each record keeps its own, max(0, clamp(TTL,
 *   min_ttl, max_ttl) - age), as a resolver serves each RRset's remaining
 *   TTL (a CNAME 3600 before an A 300, at age 5: 3595 and 295); in a
 *   negative entry (NXDOMAIN, NODATA) min(max(0, TTL - age), Expiry - now),
 *   the SOA capped by the entry's time left (RFC 2308's negative TTL); with
 *   o->stale every TTL is DNSNAP_STALE_TTL;
 * - DNSSEC records only for DO clients, or in the answer section when asked
 *   for by type; names compressed (owners, and rdata of NS, CNAME, SOA, PTR,
 *   MX, MINFO, MB, MG, MR, MD, MF);
 * - OPT (our size, DO echoed, the entry's EDE options, then with o->stale
 *   EDE 3 "Stale Answer" of RFC 8914 unless the entry has one) when the query
 *   had one;
 * - over the size limit: cut at an RRset boundary; TC set when the answer or
 *   authority section was cut.
 *
 * @param[out] out_len  set only on success
 * @return DNSNAP_OK, DNSNAP_ENOSPC (cap too small for the header, question
 *         and OPT), or an error from reading the entry
 */
int dnsnap_answer_build(const dnsnap_query_t *q, const uint8_t *entry, size_t entry_len,
			const dnsnap_answer_opts_t *o, uint8_t *out, size_t cap, size_t *out_len);

/* ----------------------------------------------------------------- cache */

typedef struct dnsnap_cache dnsnap_cache_t;

typedef struct dnsnap_cache_opts {
	size_t max_bytes;        /* all-in (entries as the allocator sees them, and the
				  * index); 0 = no limit */
	size_t max_entries;      /* 0 = no limit */
	uint32_t min_ttl;        /* entry TTLs are raised to this (default 0) */
	uint32_t max_ttl;        /* and capped at this (default 86400) */
	uint32_t max_neg_ttl;    /* cap for NXDOMAIN and NODATA (default 10800, RFC 2308) */
	int serve_stale;         /* RFC 8767 (default off) */
	uint32_t stale_window;   /* how long past expiry an entry may be served stale
				  * (default 86400, capped at 604800 as RFC 8767 advises) */
	int rotate;              /* round-robin A/AAAA rotation (default on) */
	uint16_t our_udp_size;   /* default DNSNAP_EDNS_SIZE (1232) */
} dnsnap_cache_opts_t;

/** Fill @p o with the defaults documented above. */
void dnsnap_cache_opts_default(dnsnap_cache_opts_t *o);

/** The options @p c works with: those it was created with, the defaults for
 * NULL, with stale_window and our_udp_size as dnsnap_cache_new() bounds them. */
void dnsnap_cache_opts_get(const dnsnap_cache_t *c, dnsnap_cache_opts_t *o);

/**
 * Create a cache. @p o may be NULL (defaults). The index hash is seeded with
 * 8 bytes from getrandom() (which blocks until the kernel's pool is first
 * initialised): each cache places keys differently, and nothing written out
 * (snapshots, export streams) depends on the seed.
 * @return DNSNAP_OK, DNSNAP_ENOMEM, DNSNAP_EINVAL (also: getrandom() failed)
 */
int dnsnap_cache_new(const dnsnap_cache_opts_t *o, dnsnap_cache_t **out);

/** Free a cache and every entry. Accepts NULL. No other thread may be using it. */
void dnsnap_cache_free(dnsnap_cache_t *c);

/**
 * Insert a DNS response (wire form) under the key made from its question, its
 * CD bit and @p tag, at time @p now. A refresh replaces the entry (entries
 * are immutable: the old one is freed once no reader uses it), but for the
 * keep rule (spec/DECISIONS.md): a live entry holding DNSSEC records stays
 * when the response has the same data without them (it could not answer a
 * DO=1 client); the response is then dropped, DNSNAP_OK returned and
 * dnsnap_cache_stats_t.kept counted. When the
 * cache is over a limit, expired entries are evicted first, then entries not
 * used since the eviction hand last passed (CLOCK).
 *
 * @param scratch  the caller's reusable encoding buffer (one per thread)
 * @return DNSNAP_OK, DNSNAP_ENOMEM, DNSNAP_ETOOBIG (larger than the byte
 *         limit allows), or an error of dnsnap_msg_encode() with diag
 */
int dnsnap_cache_insert(dnsnap_cache_t *c, const uint8_t *msg, size_t len, uint32_t now,
			const uint8_t *tag, size_t tag_len, dnsnap_encoded_t *scratch,
			dnsnap_diag_t *diag);

/**
 * Encode a DNS response as dnsnap_cache_insert() would insert it, without
 * inserting it: the key and entry of dnsnap_msg_encode(), with the cache's
 * TTL policy applied (the entry's Expiry capped by max_ttl, or by
 * max_neg_ttl for NXDOMAIN and NODATA, raised to min_ttl; @p out->ttl is
 * the result). One encoding then serves everything a miss needs: insert it
 * (dnsnap_cache_insert_encoded()), answer the clients that waited from it
 * (dnsnap_cache_answer_entry()), seal it for a shared store
 * (dnsnap_l2_value_seal()): the policy is applied once, to all of them.
 *
 * @param out  the caller's buffer (one per thread)
 * @return DNSNAP_OK; DNSNAP_ENOTCACHE when the TTL is 0 after the policy
 *         (nothing to cache; @p out still holds the entry, which may answer
 *         the clients that asked); an error of dnsnap_msg_encode() with diag
 *         (DNSNAP_ENOTCACHE too: not a cacheable response), @p out->entry_len
 *         then 0
 */
int dnsnap_cache_encode(const dnsnap_cache_t *c, const uint8_t *msg, size_t len, uint32_t now,
			const uint8_t *tag, size_t tag_len, dnsnap_encoded_t *out,
			dnsnap_diag_t *diag);

/**
 * Insert what dnsnap_cache_encode() made: the keep rule, the limits and the
 * return values of dnsnap_cache_insert(). The bytes are copied.
 */
int dnsnap_cache_insert_encoded(dnsnap_cache_t *c, const dnsnap_encoded_t *e);

/**
 * Answer @p q from @p entry, not looked up (the one dnsnap_cache_encode()
 * just made, or a checked value from a shared store), as the cache answers
 * its own: its min_ttl, max_ttl and our_udp_size, no rotation
 * (dnsnap_answer_build() with those options). No allocation.
 * @return as dnsnap_answer_build()
 */
int dnsnap_cache_answer_entry(const dnsnap_cache_t *c, const dnsnap_query_t *q,
			      const uint8_t *entry, size_t entry_len, uint32_t now,
			      uint16_t max_size, uint8_t *out, size_t cap, size_t *out_len);

/**
 * Insert an already encoded key and entry (from a snapshot, an export stream,
 * a shared store). Both are checked first (dnsnap_key_decode(),
 * dnsnap_entry_validate()): the cache answers from what it holds without
 * checking it again. The bytes are copied; the entry's Hits field becomes
 * the starting value of its live hit counter.
 * @return DNSNAP_OK, the error of the check that refused them, or as
 *         dnsnap_cache_insert()
 */
int dnsnap_cache_insert_entry(dnsnap_cache_t *c, const uint8_t *key, size_t key_len,
			      const uint8_t *entry, size_t entry_len);

/**
 * A lower tier under the in-memory cache: the mapped snapshot now, a shared
 * store (Redis) later. get() copies the entry under key into buf
 * (DNSNAP_ENTRY_MAX bytes hold any) after checking it as untrusted data: a
 * damaged entry must be caught there (dnsnap_entry_validate(), or a checksum
 * over every byte as the snapshot's), and the answer is built with
 * dnsnap_answer_build(), which reads any bytes safely; it may be called from
 * many threads at once.
 * get() returns DNSNAP_OK (and sets *len) or DNSNAP_ENOTFOUND; any other
 * value is taken as a miss too. get() runs under the cache's tier lock (held
 * shared): it must not call dnsnap_cache_set_tier() or dnsnap_cache_attach()
 * on that cache, nor look up in it.
 */
typedef struct dnsnap_tier_ops {
	const char *name;        /* for messages: "map" */
	int (*get)(void *tier, const uint8_t *key, size_t key_len, uint8_t *buf,
		   size_t cap, size_t *len);   /* DNSNAP_OK, DNSNAP_ENOTFOUND */
} dnsnap_tier_ops_t;

/**
 * Put a lower tier under @p c: a lookup that misses in memory asks
 * @p ops->get(@p tier, ...). Replaces the one before (returned through
 * @p old, may be NULL), atomically: lookups see the old or the new, never
 * none; when this returns, no lookup uses the old one any more (it may be
 * closed). @p ops NULL detaches (@p tier is then ignored). The cache does not
 * own the tier.
 */
void dnsnap_cache_set_tier(dnsnap_cache_t *c, const dnsnap_tier_ops_t *ops, void *tier,
			   void **old);

#define DNSNAP_TIER_MEMORY 0     /* dnsnap_lookup_t.tier: the in-memory cache */
#define DNSNAP_TIER_LOWER  1     /* ... the lower tier (dnsnap_cache_set_tier()) */

/** A lookup's parameters, and what answered it. */
typedef struct dnsnap_lookup {
	uint32_t now;            /* Unix seconds */
	uint16_t max_size;       /* as dnsnap_cache_answer()'s */
	uint32_t stale_window;   /* > 0: an entry expired less than this many seconds
				  * ago may answer (RFC 8767: TTL 30, EDE 3), capped at
				  * 604800; 0: fresh only, whatever the cache's
				  * serve_stale option says */
	/* out, set on DNSNAP_OK */
	int tier;                /* DNSNAP_TIER_MEMORY or DNSNAP_TIER_LOWER */
	int stale;               /* the answer is stale */
	int cd_fallback;         /* a CD=1 query answered from a CD=0 entry */
} dnsnap_lookup_t;

/**
 * Answer a parsed query from the cache and its lower tier into @p out.
 *
 * Order: a fresh entry in memory, then a fresh one in the lower tier; only
 * then, when lk->stale_window > 0, a stale one in memory, then in the lower
 * tier (a fresh lower-tier entry beats a stale memory one). A CD=1 query
 * that finds no CD=1 entry is answered from the CD=0 entry of the same name,
 * type, class and tag (validated data is good for a client that validates
 * itself): CD=1 before CD=0 within each of the four steps, so a fresh CD=0
 * entry beats a stale CD=1 one. A CD=0 query never reads a CD=1 entry. The
 * answer's header copies the query's CD bit. Records' TTLs follow the
 * cache's min_ttl and max_ttl (dnsnap_answer_build()); memory answers rotate
 * A and AAAA RRsets when the cache's rotate option is on.
 *
 * Counters (dnsnap_cache_stats()): hits on DNSNAP_OK (and stale_served when
 * stale), misses on DNSNAP_ENOTFOUND. No allocation, but a thread's first
 * lookup that reaches the lower tier allocates the thread's buffer for a
 * copy of an entry (freed when the thread ends; without it, a miss).
 *
 * @return DNSNAP_OK (lk->tier, lk->stale, lk->cd_fallback set),
 *         DNSNAP_ENOTFOUND (a miss: no entry, or expired and not servable
 *         stale), DNSNAP_ENOSPC, DNSNAP_EINVAL
 */
int dnsnap_cache_lookup(dnsnap_cache_t *c, const dnsnap_query_t *q, dnsnap_lookup_t *lk,
			uint8_t *out, size_t cap, size_t *out_len);

/**
 * Answer a parsed query from the cache into @p out: dnsnap_cache_lookup()
 * with stale_window = the cache's stale_window when its serve_stale option
 * is on, else 0.
 * @return DNSNAP_OK (a hit), DNSNAP_ENOTFOUND (a miss: no entry, or expired
 *         and not servable stale), DNSNAP_ENOSPC
 */
int dnsnap_cache_answer(dnsnap_cache_t *c, const dnsnap_query_t *q, uint32_t now,
			uint16_t max_size, uint8_t *out, size_t cap, size_t *out_len);

/** Remove the entry under @p key. @return DNSNAP_OK, DNSNAP_ENOTFOUND, or
 * DNSNAP_ENOMEM during a snapshot write with no memory to keep the entry for it
 * (see dnsnap_snap_write(); the entry stays) */
int dnsnap_cache_remove(dnsnap_cache_t *c, const uint8_t *key, size_t key_len);

/**
 * Call @p fn for every entry, expired ones included (check the Expiry). The
 * entry's Hits field is stale: @p hits is the live counter. Inserts wait
 * while a shard is being walked; lookups do not. Return non-zero from @p fn
 * to stop; that value is returned.
 */
int dnsnap_cache_foreach(dnsnap_cache_t *c,
			 int (*fn)(void *arg, const uint8_t *key, size_t key_len,
				   const uint8_t *entry, size_t entry_len, uint32_t hits),
			 void *arg);

typedef struct dnsnap_cache_stats {
	size_t entries;
	size_t bytes;            /* all-in, as accounted against max_bytes */
	uint64_t hits, misses, inserts, evictions, expired, stale_served;
	uint64_t kept;           /* responses dropped by the keep rule (dnsnap_cache_insert()) */
} dnsnap_cache_stats_t;

/** A snapshot of the counters (each read atomically, not all at one instant). */
void dnsnap_cache_stats(const dnsnap_cache_t *c, dnsnap_cache_stats_t *out);

/** The clock skew every reader allows an entry's times (seconds). */
#define DNSNAP_TIME_SKEW_S 300

/**
 * The time rule every reader of entries from outside the process applies
 * (spec/FORMAT.md, "Times a reader accepts"): the snapshot's lookups (under a
 * cache and dnsnap_snap_answer()), the merge of a publish's base, a stream's
 * import, a shared store's value (dnsnap_l2_value_accept()), and `dnsnap
 * verify` and `info`. An entry cached more than DNSNAP_TIME_SKEW_S after
 * @p now (written on a host whose clock was ahead), or whose Expiry lies
 * past now + the longest life @p o's policy gives (max_ttl, or max_neg_ttl
 * for NXDOMAIN and NODATA, raised to min_ttl; no bound when that cap is 0)
 * + DNSNAP_TIME_SKEW_S, is refused as a damaged one is: never served, never
 * written again. An expired entry passes (its expiry is the other rule).
 * @param o  the reader's policy (dnsnap_cache_opts_get()); NULL: the defaults
 * @return DNSNAP_OK; DNSNAP_EFIELD with diag->offset 0 (Inception: "cached N
 *         s in the future") or 4 (Expiry: "lives N s more: longer than the
 *         cache's longest TTL"); DNSNAP_ETRUNC (shorter than a header);
 *         DNSNAP_EINVAL
 */
int dnsnap_entry_check_time(const uint8_t *entry, size_t len, const dnsnap_cache_opts_t *o,
			    uint32_t now, dnsnap_diag_t *diag);

/** Entries of the lower tier that lookups of @p c refused by the time rule
 * (dnsnap_entry_check_time(), at the later of the lookup's now and the clock,
 * with @p c's policy): they were misses. */
uint64_t dnsnap_cache_refused_time(const dnsnap_cache_t *c);

/*
 * Threads: every dnsnap_cache_* call may run concurrently with any other on
 * the same cache, except dnsnap_cache_free(). The cache is split into shards
 * by key hash. A lookup takes no lock: it counts itself in its thread's
 * reader slot (one cache line per thread, at most 64 slots, more threads
 * share them) and checks its shard's writing flag; only while an insert or a
 * removal updates that shard does it wait (it sleeps on the shard's lock,
 * then tries again). So lookups never wait for each other and write no cache
 * line another thread's lookups write; they update the entry's hit counter
 * and CLOCK bit with relaxed atomics. Inserts and removals encode first,
 * then take their shard's lock exclusively for the chunk (the shard's
 * arena), the copy into it and the index update, raise its writing flag and
 * wait until no reader slot counts a lookup in that shard. An entry is never
 * freed while a lookup reads it. dnsnap_cache_foreach() walks one shard at a
 * time under its read lock: inserts into that shard wait, lookups do not;
 * the snapshot writers copy a shard's index without its lock.
 * A lookup that reaches the lower tier holds the tier's lock in shared mode
 * while it uses it; dnsnap_cache_set_tier() takes it exclusively (new
 * lookups wait for it rather than starve it), so it returns once the
 * lookups in the old tier are done.
 */

/* -------------------------------------------------------------- progress */

/**
 * Progress of a long operation (verify, export, import): @p fn is called
 * every DNSNAP_PROGRESS_EVERY entries and once at the end, from the calling
 * thread. @p total is 0 when not known in advance. A NULL pointer where a
 * dnsnap_progress_t is taken means no reports.
 */
typedef struct dnsnap_progress {
	void (*fn)(void *arg, uint64_t done, uint64_t total);
	void *arg;
} dnsnap_progress_t;

#define DNSNAP_PROGRESS_EVERY 65536

/* ------------------------------------------------------------- snapshots */

/**
 * A snapshot: one LMDB file (spec/FORMAT.md, "Snapshot"), read-only once
 * published, mapped on open. Every byte of it is untrusted: the library reads
 * it through one bounds-checked reader (never through liblmdb), checks each
 * value's Value_Check on every read, and guards map reads against SIGBUS, so
 * that a damaged file gives misses and counted damage, and a file truncated
 * or overwritten in place under a running process gives misses, never a
 * crash. The guard puts a process-wide SIGBUS handler in place at every
 * dnsnap_snap_open() (unless it is there already); faults outside snapshot
 * reads go to the handler it replaced. A program that sets its own SIGBUS
 * handler while a snapshot is open must call the one it replaces (SA_SIGINFO)
 * for faults that are not its own, or open the snapshot after. Publish by
 * rename: dnsnap's writers always do.
 */
typedef struct dnsnap_snap dnsnap_snap_t;

typedef struct dnsnap_snap_info {
	unsigned major, minor;
	uint64_t created_at;     /* Unix seconds */
	uint64_t entry_count;
	uint64_t digest;         /* XXH3-64 over the entries, in key order */
	uint64_t file_size;
	char writer[128];        /* "dnsnap 0.9.0 on HOST" */
} dnsnap_snap_info_t;

typedef struct dnsnap_snap_write_stats {
	uint64_t entries;        /* written (live at @p now) */
	uint64_t skipped;        /* expired, left out */
	uint64_t entry_bytes;    /* keys + entries */
	uint64_t file_size;
	double longest_pause_ms; /* the longest a shard was held from inserts */
	uint64_t from_base;      /* dnsnap_snap_merge(): kept from the base snapshot */
	uint64_t replaced;       /* ... base entries a newer cache entry replaced */
	uint64_t base_expired;   /* ... base entries expired at @p now, left out */
	uint64_t base_bad;       /* ... base entries that failed validation, left out */
	uint64_t stream_bytes;   /* dnsnap_import(): bytes of the stream read (compressed) */
} dnsnap_snap_write_stats_t;

/**
 * Write the live entries of @p c (those not expired at @p now) to @p path.
 * The file is written beside it (TARGET.tmp.PID), synced, then renamed over
 * @p path: @p path always holds a whole snapshot, the old or the new.
 *
 * Publishing (every writer: this, dnsnap_snap_merge(), dnsnap_snapw_commit(),
 * dnsnap_import()): a symbolic link at @p path is followed, the temporary is
 * written beside its final target (TARGET) and renamed over that target, so
 * the link stays a link. The new file takes the replaced file's mode and, where
 * permitted, its owner and group (a chown the process may not make is skipped);
 * a new file is mode 0600. A @p path that exists and is not a regular file (a
 * device, a FIFO, a socket, a directory) is refused: DNSNAP_EINVAL.
 * Two writers of one path: see dnsnap_snap_lock().
 *
 * The cache keeps answering and inserting meanwhile: each shard's index (8
 * bytes a slot) is copied without its lock, which is taken and let go once
 * before (stats->longest_pause_ms: the longest it was held); the entries are
 * read, sorted and written without locks. Memory: a reference of 24 bytes
 * per live entry, and the entries removed, evicted or replaced during the
 * write, which are kept (off the cache's accounted bytes: the cache may hold
 * more than max_bytes) until the last of them is written; dnsnap_cache_remove() and an insert that must
 * evict then fail with DNSNAP_ENOMEM rather than free one when there is no
 * memory to keep it. Two threads read and sort the shards, a third merges and
 * writes; they hold no lock of the cache and run at a nice value 10 above the
 * caller's, which waits for them (the pin and the unpin, which take the
 * shards' locks, are the caller's).
 * @return DNSNAP_OK, DNSNAP_ELMDB, DNSNAP_ENOMEM, DNSNAP_EINVAL, or -errno
 *         (disk full: -ENOSPC, -EFBIG) with diag naming the file; on error no
 *         temporary file is left and @p path is untouched
 */
int dnsnap_snap_write(dnsnap_cache_t *c, const char *path, uint32_t now,
		      dnsnap_snap_write_stats_t *stats, dnsnap_diag_t *diag);

/**
 * Like dnsnap_snap_write(), with the live entries of @p base (at @p now) that
 * @p c does not replace: where both hold a live entry for a key, the one with
 * the later Inception wins (a tie: @p c's), unless the keep rule of
 * dnsnap_cache_insert() keeps the older (it has DNSSEC records the newer
 * lacks, for the same data); an expired base entry never wins. @p base may
 * be the snapshot at @p path itself (the old file stays mapped until closed). A base entry that fails
 * validation is left out and counted (stats->base_bad): merging never fails
 * on a damaged base, and never copies damage. So is a base entry the time rule
 * refuses (dnsnap_entry_check_time() with @p c's policy, at the later of
 * @p now and the clock; dnsnap_snap_publish() counts them in base_refused). Memory: the cache's references, not
 * the base's size. @p base may be NULL.
 */
int dnsnap_snap_merge(dnsnap_cache_t *c, dnsnap_snap_t *base, const char *path, uint32_t now,
		      dnsnap_snap_write_stats_t *stats, dnsnap_diag_t *diag);

/**
 * A snapshot written entry by entry, in increasing key order, in constant
 * memory: for streams and filters (import, purge) that never hold a whole
 * cache. Publishing is the same as dnsnap_snap_write()'s (a temporary beside
 * @p path, synced, renamed over it).
 */
typedef struct dnsnap_snapw dnsnap_snapw_t;

/** Start writing TARGET.tmp.PID (see dnsnap_snap_write() on publishing).
 * @return DNSNAP_OK, DNSNAP_ENOMEM, DNSNAP_ELMDB, DNSNAP_EINVAL (@p path is not
 * a regular file), -errno */
int dnsnap_snapw_begin(const char *path, dnsnap_snapw_t **out, dnsnap_diag_t *diag);

/**
 * Add one entry. The key and the entry are validated, and the key must be
 * greater than the one added before.
 * @return DNSNAP_OK; the validation error (diag names the entry); DNSNAP_EFIELD
 *         for a key out of order; DNSNAP_ELMDB or -errno (-ENOSPC, -EFBIG).
 *         After an error, only dnsnap_snapw_abort() is allowed.
 */
int dnsnap_snapw_add(dnsnap_snapw_t *w, const uint8_t *key, size_t key_len,
		     const uint8_t *entry, size_t entry_len, dnsnap_diag_t *diag);

/** Publish: meta record, sync, trailer, rename. Frees @p w, also on error
 * (then nothing is left behind and @p path is untouched). @p stats may be NULL. */
int dnsnap_snapw_commit(dnsnap_snapw_t *w, dnsnap_snap_write_stats_t *stats,
			dnsnap_diag_t *diag);

/** Give up: remove the temporary, free @p w. @p path is untouched. Accepts NULL. */
void dnsnap_snapw_abort(dnsnap_snapw_t *w);

/** The writers' lock (dnsnap_snap_lock()): opaque. */
typedef struct dnsnap_snap_lock dnsnap_snap_lock_t;

/**
 * The file @p path finally names: symbolic links followed (at most 40 hops),
 * a relative link read from its link's directory. The file need not exist
 * (a dangling link gives its target). Publishing writes its temporary beside
 * this file and renames over it, so a link stays a link; the lock is taken
 * on it too.
 *
 * Planted links (spec/DECISIONS.md, "Links in sticky directories"): a link in
 * a sticky directory others may write (/tmp), owned by neither the caller
 * (effective uid) nor that directory's owner, is not followed: -EPERM (the
 * kernel's fs.protected_symlinks rule, which this walk would otherwise
 * bypass). So is a final target whose directory others may write without
 * the sticky bit (anyone could replace the file there). Every writer of
 * snapshots and of `-o` outputs resolves its path here.
 * @return 0, -ELOOP, -ENAMETOOLONG, -EPERM (refused: dnsnap_path_strerror()
 *         says why), -errno
 */
int dnsnap_path_target(const char *path, char *out, size_t cap);

/**
 * Why dnsnap_path_target(@p path) failed with @p err, one phrase for a
 * message: for -EPERM, which link or directory was refused and why; else
 * strerror(). @return @p out
 */
const char *dnsnap_path_strerror(const char *path, int err, char *out, size_t cap);

/**
 * Why a file could not be created at @p path (or a temporary beside it),
 * creating it having failed with @p err (an errno value): one phrase for a
 * message, such as "cannot create: directory /x does not exist", naming the
 * directory at fault (it is looked at). Every writer's message uses it.
 * @return @p out
 */
const char *dnsnap_path_create_error(const char *path, int err, char *out, size_t cap);

/**
 * The writers' lock: a read-modify-write of a snapshot (merge into it, filter
 * it, replace it) holds it from before it opens the old file until after it
 * published the new one, so that two writers at once never lose one's
 * changes. dnsnap_snap_publish() takes it, and is what a writer normally
 * calls; this is for writers that do the steps themselves.
 *
 * It is an exclusive flock(2) on the file @p path finally names (symbolic
 * links followed), or on that file's directory while it does not exist;
 * after locking, the path is checked to still name what was locked (a writer
 * that published meanwhile renamed a new file over it), else it locks again.
 * No lock file is created. Readers (dnsnap_snap_open()) never lock; the lock
 * is advisory: it excludes writers that take it (every dnsnap command that
 * rewrites a snapshot does), threads of one process included (each lock is
 * an open file of its own). It covers one publish: once the new file is
 * renamed over the path, the path names a file nobody holds, so write once
 * per lock. Released by dnsnap_snap_unlock(), or when the process exits.
 *
 * @param wait_seconds  how long to wait for another writer: 0 = not at all,
 *                      negative = without bound
 * @return DNSNAP_OK; -EAGAIN when another writer held it all that time (diag:
 *         "PATH: another dnsnap is writing it"); DNSNAP_EINVAL when @p path
 *         exists and is not a regular file; -errno (no access, ...)
 */
int dnsnap_snap_lock(const char *path, int wait_seconds, dnsnap_snap_lock_t **out,
		     dnsnap_diag_t *diag);

/** Release the lock and free @p lock. Accepts NULL. */
void dnsnap_snap_unlock(dnsnap_snap_lock_t *lock);

/* ----------------------------------------------------------- publishing */

/** dnsnap_publish_opts_t.flags */
#define DNSNAP_PUBLISH_REPLACE      1u  /* the base is not merged: the new entries alone (a
					 * file at the path must still be a snapshot, damaged
					 * or not, of a version this library reads) */
#define DNSNAP_PUBLISH_DROP_DAMAGED 2u  /* a base with damaged entries is merged without them
					 * (stats->write.base_bad); without this flag such a
					 * base is left as it is: DNSNAP_ECHECKSUM */
#define DNSNAP_PUBLISH_REPLACE_BAD  4u  /* a base too damaged to open (DNSNAP_ETRUNC,
					 * DNSNAP_ECHECKSUM, DNSNAP_EFIELD, DNSNAP_ERESERVED
					 * from dnsnap_snap_open()) is replaced by the new
					 * entries (stats->base_err says so); without it,
					 * that error is returned and nothing is written */

typedef struct dnsnap_publish_opts {
	uint32_t now;            /* Unix seconds: entries expired at now are left out ... */
	uint32_t stale_window;   /* ... but those expired less than this many seconds ago
				  * (serve-stale across a restart, RFC 8767; 0: none) */
	int wait_seconds;        /* for the writers' lock (dnsnap_snap_lock()): 0 = do not
				  * wait, negative = without bound */
	unsigned flags;          /* DNSNAP_PUBLISH_* */
	uint64_t max_bytes;      /* at most this much, as the memory cache counts its bytes
				  * (dnsnap_cache_opts_t.max_bytes: allocations and index),
				  * is written: when the cache and the base hold more, the
				  * most valuable entries (most hits, then most time left;
				  * ties: the first in key order); 0: no bound */
	/* entries for which this returns non-zero are left out, the cache's and the
	 * base's (a flush: what an operator removed stays removed); NULL: none */
	int (*exclude)(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		       size_t entry_len);
	void *exclude_arg;
} dnsnap_publish_opts_t;

typedef struct dnsnap_publish_stats {
	dnsnap_snap_write_stats_t write; /* what was written (the merge's counts: from_base,
					  * replaced, base_expired, base_bad) */
	int base_merged;         /* a base snapshot was read (merged, or handed to the fill) */
	int base_err;            /* not 0: the file at the path could not be opened (this
				  * DNSNAP_E* code; DNSNAP_PUBLISH_REPLACE_BAD) and was
				  * replaced without being read */
	char base_msg[256];      /* ... why, as dnsnap_snap_open() said it */
	uint64_t excluded;       /* left out by o->exclude */
	uint64_t over_bound;     /* left out by o->max_bytes (the least valuable) */
	uint64_t stale;          /* written expired, within o->stale_window */
	uint64_t base_refused;   /* base entries refused by the time rule (cached in the
				  * future, or living past the cache's longest TTL:
				  * dnsnap_entry_check_time()), left out */
} dnsnap_publish_stats_t;

/**
 * Publish the live entries of @p c at @p path: the writers' lock
 * (dnsnap_snap_lock(), waiting o->wait_seconds), the file now at @p path
 * opened as the base, the cache's entries merged with the base's live ones
 * (dnsnap_snap_merge(); not with DNSNAP_PUBLISH_REPLACE), written beside the
 * path, synced, renamed over it (dnsnap_snap_write() on publishing), the new
 * file mapped, the lock released. The base is the file at the path under
 * the lock, not one the caller opened earlier: what another process published
 * meanwhile is kept. A file at @p path that is not a snapshot (DNSNAP_EMAGIC),
 * of a later version (DNSNAP_EVERSION), or that cannot be read (-errno) is
 * never replaced.
 *
 * @param map  not NULL: *map is the published file, opened before the lock
 *             was released (NULL when that open failed: the file is
 *             published all the same); the caller closes it. Saves opening
 *             the file just written, and another writer cannot have replaced
 *             it in between.
 * @param stats  may be NULL; always set (on a refusal for damaged base
 *               entries, stats->write.base_bad counts them)
 * @return DNSNAP_OK; -EAGAIN (another writer held the lock all that time:
 *         diag "PATH: another dnsnap is writing it"); DNSNAP_EMAGIC,
 *         DNSNAP_EVERSION, a damage code of opening the base (see the
 *         flags); DNSNAP_ECHECKSUM with stats->write.base_bad > 0 (damaged
 *         entries in the base, without DNSNAP_PUBLISH_DROP_DAMAGED: a merge
 *         would lose them, and a damaged page may hide good ones); an error
 *         of dnsnap_snap_merge(); diag names the file. On error @p path is
 *         untouched.
 */
int dnsnap_snap_publish(dnsnap_cache_t *c, const char *path, const dnsnap_publish_opts_t *o,
			dnsnap_snap_t **map, dnsnap_publish_stats_t *stats, dnsnap_diag_t *diag);

/**
 * What dnsnap_snap_publish_fill() calls to write the new file: add entries to
 * @p w in increasing key order (dnsnap_snapw_add()), reading @p base if it
 * likes (the file at the path under the lock; NULL when there is none, or
 * with DNSNAP_PUBLISH_REPLACE). It may count into @p stats (entries, entry
 * bytes and the file's size are the commit's). @return DNSNAP_OK to publish;
 * a positive value to publish nothing (dnsnap_snap_publish_fill() returns it;
 * the path is untouched); a negative error (diag set)
 */
typedef int (*dnsnap_publish_fill_fn)(void *arg, dnsnap_snap_t *base, dnsnap_snapw_t *w,
				      dnsnap_snap_write_stats_t *stats, dnsnap_diag_t *diag);

/**
 * dnsnap_snap_publish() for writers that produce the entries themselves in
 * key order (a filter of the base, a stream): the same lock, base rules,
 * temporary, sync, rename and map, with @p fill writing the entries. A
 * damaged base is @p fill's to judge (it reads it); DNSNAP_PUBLISH_DROP_DAMAGED,
 * stale_window, max_bytes and exclude do not apply (what to write is the
 * fill's). @return as dnsnap_snap_publish(), or @p fill's positive value
 * (nothing published; stats set)
 */
int dnsnap_snap_publish_fill(const char *path, const dnsnap_publish_opts_t *o,
			     dnsnap_publish_fill_fn fill, void *arg, dnsnap_snap_t **map,
			     dnsnap_publish_stats_t *stats, dnsnap_diag_t *diag);

/**
 * Open and map a snapshot read-only (O(1) in entries; the file is never
 * written). Checked in this order (spec/FORMAT.md, "Opening"): LMDB's magic
 * and data format, the page size, the trailer, LMDB's meta pages, the main
 * database (exactly "entries" and "meta", plain keys), the meta record
 * (magic, major version, Value_Check, fields), the entry count, the hash
 * index's header (format 2.1; an index that does not fit the file is ignored:
 * lookups then descend the B-tree).
 * @return DNSNAP_OK; DNSNAP_EMAGIC (not a snapshot; an LMDB file of the
 *         other byte order); DNSNAP_EVERSION (an unknown snapshot major or
 *         LMDB data format: diag names both versions); DNSNAP_ETRUNC (cut
 *         short); DNSNAP_ECHECKSUM (damaged structure or meta record);
 *         DNSNAP_ERESERVED, DNSNAP_EFIELD (a field the format forbids, an LMDB
 *         database kind dnsnap never writes); -errno
 */
int dnsnap_snap_open(const char *path, dnsnap_snap_t **out, dnsnap_diag_t *diag);

/** Unmap and free. Waits for lookups still using it. Accepts NULL. */
void dnsnap_snap_close(dnsnap_snap_t *s);

void dnsnap_snap_info(const dnsnap_snap_t *s, dnsnap_snap_info_t *out);

/** The path @p s was opened by, as given (for messages); valid until it is closed. */
const char *dnsnap_snap_path(const dnsnap_snap_t *s);

/**
 * Find the entry under @p key and copy it into @p buf. The bytes are read
 * from the map under the fault guard, copied, and checked on the copy (the
 * Value_Check over key and entry, then dnsnap_entry_validate()): a damaged
 * entry is DNSNAP_ENOTFOUND and counted (dnsnap_snap_bad_entries()), and so
 * is a read that faulted because the file was truncated or overwritten in
 * place (after which the map is not read again: dnsnap_snap_changed()).
 * Allocation-free, no system call.
 *
 * @param buf  DNSNAP_ENTRY_MAX bytes hold any entry
 * @param[out] len  the entry's length, set only on success
 * @return DNSNAP_OK, DNSNAP_ENOTFOUND, DNSNAP_EINVAL
 */
int dnsnap_snap_get(dnsnap_snap_t *s, const uint8_t *key, size_t key_len, uint8_t *buf,
		    size_t cap, size_t *len);

/**
 * Answer from the snapshot alone, as dnsnap_cache_answer() of a cache with
 * the default options (fresh entries only; TTLs capped at 86400, the default
 * max_ttl; no rotation; the time rule at the later of @p now and the clock)
 * with @p s under it: a CD=1
 * query without a CD=1 entry is answered from the CD=0 one.
 */
int dnsnap_snap_answer(dnsnap_snap_t *s, const dnsnap_query_t *q, uint32_t now,
		       uint16_t max_size, uint8_t *out, size_t cap, size_t *out_len);

/**
 * The deep check: the whole-file checksum, every key and entry validated,
 * key order, the entry count and the digest recomputed, then the hash index
 * (format 2.1), if any: its Value_Check, every entry reached through it, no
 * slot leading elsewhere (a damaged index is DNSNAP_ECHECKSUM, "the index is
 * damaged", though lookups still answer right or miss).
 * @return DNSNAP_OK or the first problem (DNSNAP_ECHECKSUM, DNSNAP_E* of an
 *         entry with diag naming it)
 */
int dnsnap_snap_verify(dnsnap_snap_t *s, const dnsnap_progress_t *progress,
		       dnsnap_diag_t *diag);

/**
 * The whole-file check alone: the trailer's File_Hash against every byte
 * before it (O(file size), about as fast as reading the file). Any damage,
 * in entries, LMDB's pages or free space, fails it.
 * @return DNSNAP_OK, DNSNAP_ECHECKSUM, DNSNAP_ETRUNC (changed in place)
 */
int dnsnap_snap_check_hash(dnsnap_snap_t *s, dnsnap_diag_t *diag);

/** Entries seen damaged by lookups, or refused by the time rule
 * (dnsnap_snap_answer(): dnsnap_entry_check_time()); they were misses. */
uint64_t dnsnap_snap_bad_entries(const dnsnap_snap_t *s);

/**
 * Whether the file under @p s was changed in place since it was opened (its
 * size or modification time differ, or a read faulted): a snapshot must be
 * replaced by rename, never rewritten. Lookups after a fault are misses;
 * open the path again to take the new file in. One fstat().
 */
int dnsnap_snap_changed(const dnsnap_snap_t *s);

/**
 * Whether @p path names the file @p s maps, unchanged since it was opened
 * (the same device and inode, size and modification time): a server asks it
 * to notice that another process published a new file at the path. One
 * stat(). @return 1 or 0 (also when @p path names nothing)
 */
int dnsnap_snap_same_file(const dnsnap_snap_t *s, const char *path);

/** The snapshot as a lower tier: tier = a dnsnap_snap_t *, get = dnsnap_snap_get(). */
extern const dnsnap_tier_ops_t dnsnap_snap_tier;

/**
 * Put @p s under @p c: dnsnap_cache_set_tier(c, s ? &dnsnap_snap_tier :
 * NULL, s, old). A lookup that misses in memory falls through to the
 * snapshot. Replaces (and returns through @p old, may be NULL) the tier
 * attached before (a snapshot, if that is what was attached), atomically:
 * lookups never see none. Close the old one with dnsnap_snap_close(). @p s
 * may be NULL to detach. The cache does not own the snapshot.
 */
void dnsnap_cache_attach(dnsnap_cache_t *c, dnsnap_snap_t *s, dnsnap_snap_t **old);

/* --------------------------------------------------------- export stream */

/** What a scan met. */
typedef struct dnsnap_scan_stats {
	uint64_t entries;        /* checked and handed to fn */
	uint64_t damaged;        /* skipped: Value_Check, key, entry or key order failed,
				  * or (whole scans) counted by the meta record but lost
				  * with a damaged page */
	uint64_t bad_pages;      /* pages (with their subtrees) that failed their checks */
} dnsnap_scan_stats_t;

/**
 * Call @p fn for the entries of @p s whose keys start with @p prefix (all of
 * them when @p prefix_len is 0), in key order. Each key and entry is copied
 * out of the map and checked on the copy (Value_Check, dnsnap_key_decode(),
 * dnsnap_entry_validate(), keys strictly increasing) before @p fn sees it:
 * @p fn gets only good entries, in buffers valid during the call. Damaged
 * ones are skipped and counted in @p stats, and the walk goes on. A
 * prefix's keys are one range (dnsnap_key_zone_prefix() gives a zone's).
 * Return non-zero from @p fn to stop; that value is returned.
 *
 * @param stats  may be NULL
 * @param diag   the first damage met (entry number, file offset, what failed)
 * @return DNSNAP_OK when nothing was damaged; fn's value; the code of the
 *         first damage (DNSNAP_ECHECKSUM, DNSNAP_EFIELD, an entry's error)
 *         after the whole walk; DNSNAP_ETRUNC when the file changed in place
 *         under the walk; DNSNAP_ENOMEM; DNSNAP_EINVAL
 */
int dnsnap_snap_scan(dnsnap_snap_t *s, const uint8_t *prefix, size_t prefix_len,
		     int (*fn)(void *arg, const uint8_t *key, size_t key_len,
			       const uint8_t *entry, size_t entry_len),
		     void *arg, dnsnap_scan_stats_t *stats, dnsnap_diag_t *diag);

/** dnsnap_snap_scan() of every entry, without stats or diag. */
int dnsnap_snap_foreach(dnsnap_snap_t *s,
			int (*fn)(void *arg, const uint8_t *key, size_t key_len,
				  const uint8_t *entry, size_t entry_len),
			void *arg);

/** dnsnap_snap_scan() of the keys that start with @p prefix, without stats or diag. */
int dnsnap_snap_foreach_prefix(dnsnap_snap_t *s, const uint8_t *prefix, size_t prefix_len,
			       int (*fn)(void *arg, const uint8_t *key, size_t key_len,
					 const uint8_t *entry, size_t entry_len),
			       void *arg);

/*
 * What kind of file this is, from its first bytes: for the message when a
 * command is given another kind of file than it reads ("not a snapshot (it is
 * a packet capture, which dnsnap load reads into a snapshot)").
 */
typedef enum dnsnap_file_kind {
	DNSNAP_FILE_OTHER = 0,   /* none of these (or too short to tell) */
	DNSNAP_FILE_SNAPSHOT,    /* LMDB's magic at byte 16, in either byte order */
	DNSNAP_FILE_STREAM,      /* a zstd frame (or skippable frame): an export stream */
	DNSNAP_FILE_STREAM_RAW,  /* an export stream's own magic: one decompressed */
	DNSNAP_FILE_CAPTURE,     /* pcap (either byte order, us or ns) or pcapng */
	DNSNAP_FILE_UNBOUND,     /* Unbound's dump_cache text */
} dnsnap_file_kind_t;

/** The kind of a file that starts with @p head (its first @p len bytes: 20 are
 * enough, fewer for a shorter file). */
dnsnap_file_kind_t dnsnap_file_kind(const uint8_t *head, size_t len);

/** What a kind is and which command reads it, for messages: "it is a packet
 * capture, which dnsnap load reads into a snapshot"; "" for DNSNAP_FILE_OTHER. */
const char *dnsnap_file_kind_text(dnsnap_file_kind_t kind);

/*
 * The most hit keys: what dnsnap_export_write()'s top_n keeps and `dnsnap stats
 * --top` lists. A min-heap of cap items while a walk offers every key, then
 * dnsnap_top_sort(). Ties rank by key order (the smaller key first), so the
 * result does not depend on the order keys are offered in. Memory: cap items
 * of DNSNAP_KEY_MAX + 8 bytes.
 */
typedef struct dnsnap_top_item {
	uint32_t hits;
	uint16_t key_len;
	uint8_t key[DNSNAP_KEY_MAX];
} dnsnap_top_item_t;

typedef struct dnsnap_top {
	dnsnap_top_item_t *items; /* n of them; after dnsnap_top_sort(): most hits first */
	size_t n, cap;
} dnsnap_top_t;

/** Room for @p cap keys (0 keeps none). @return DNSNAP_OK or DNSNAP_ENOMEM */
int dnsnap_top_init(dnsnap_top_t *t, size_t cap);
/** Offer a key (at most DNSNAP_KEY_MAX bytes; a longer one is ignored): kept
 * while it ranks among the cap most hit offered so far. */
void dnsnap_top_add(dnsnap_top_t *t, const uint8_t *key, size_t key_len, uint32_t hits);
/** Sort the kept items, most hits first (the heap order is gone: add no more). */
void dnsnap_top_sort(dnsnap_top_t *t);
/** Free the items; @p t may be freed twice. */
void dnsnap_top_free(dnsnap_top_t *t);

/**
 * Write the export stream of @p s (spec/FORMAT.md, "Export stream") to @p fd:
 * zstd at @p level (0 = 3), content checksum on, in constant memory. Every
 * key and entry is checked before it is written.
 *
 * @param top_n  0 = every entry (the stream's Checksum is then the snapshot's
 *               Digest); else only the top_n entries by Hits (ties: the
 *               smaller key), still in key order; memory O(top_n)
 * @return DNSNAP_OK; DNSNAP_EZSTD; -errno (writing fd); the error of a bad
 *         key or entry in the snapshot; DNSNAP_ENOMEM. On error, what was
 *         written to fd is not a valid stream.
 */
int dnsnap_export_write(dnsnap_snap_t *s, int fd, int level, uint64_t top_n,
			const dnsnap_progress_t *progress, dnsnap_diag_t *d);

/**
 * Read an export stream from @p fd and publish its entries live at @p now as
 * a snapshot at @p path, in constant memory: entries are written to the
 * temporary as they are read (dnsnap_snapw_t) and published only when
 * everything checked out: magic and version, every key and entry, key order,
 * the count and checksum of the end record, the zstd checksum. On any error
 * the temporary is removed and an existing file at @p path is untouched.
 * Entries already expired at @p now are left out (counted in stats->skipped;
 * @p stats may be NULL). Hit counts carry over. An entry the time rule
 * refuses (dnsnap_entry_check_time() at the later of @p now and the clock,
 * the default policy) refuses the stream as a damaged one does.
 * @return DNSNAP_OK; DNSNAP_EMAGIC, DNSNAP_EVERSION, DNSNAP_ETRUNC,
 *         DNSNAP_ECHECKSUM, DNSNAP_EZSTD, DNSNAP_EFIELD, DNSNAP_ERESERVED or an
 *         entry's error, with diag->offset in the decompressed stream; -errno;
 *         an error of dnsnap_snap_write()
 */
int dnsnap_import(int fd, const char *path, uint32_t now, const dnsnap_progress_t *progress,
		  dnsnap_snap_write_stats_t *stats, dnsnap_diag_t *d);

/**
 * dnsnap_import()'s reading alone: the stream on @p fd, checked as
 * dnsnap_import() checks it, its live entries added to @p w (a fill of
 * dnsnap_snap_publish_fill() calls this: `dnsnap import` does). Nothing is
 * committed or aborted here. @p stats: skipped (expired at @p now) and
 * stream_bytes are set, may be NULL.
 * @return as dnsnap_import(); after an error, abort @p w
 */
int dnsnap_import_into(int fd, dnsnap_snapw_t *w, uint32_t now,
		       const dnsnap_progress_t *progress, dnsnap_snap_write_stats_t *stats,
		       dnsnap_diag_t *d);

/* ----------------------------------------------------------- L2 values */

/*
 * The value dnsnap keeps for a key in a shared store (Redis: `dnsnap serve
 * --l2`, `export --to`, `import --from`): spec/FORMAT.md, "L2 value". The
 * value's format and its acceptance rule are libdnsnap's (they need no Redis
 * client); the client that reads and writes them is libdnsnap-l2's
 * (<dnsnap/l2.h>).
 *
 *   Magic D5 4E 53 4C | Major | Minor | Entry | L2_Check (u64 LE)
 *
 * L2_Check ties the bytes to their key. The store's key is the caller's
 * business (serve: a prefix, then the dnsnap key).
 */
#define DNSNAP_L2_MAJOR 1
#define DNSNAP_L2_MINOR 0
#define DNSNAP_L2_HDR   6       /* Magic, Major, Minor */
#define DNSNAP_L2_CHECK 8       /* L2_Check */
#define DNSNAP_L2_VALUE_MAX (DNSNAP_L2_HDR + DNSNAP_ENTRY_MAX + DNSNAP_L2_CHECK)

/**
 * Frame @p entry (already valid: the cache's, a snapshot's) for @p key into
 * @p out (DNSNAP_L2_HDR + entry_len + DNSNAP_L2_CHECK bytes; @p entry may lie
 * at out + DNSNAP_L2_HDR already).
 * @return DNSNAP_OK, DNSNAP_ENOSPC, DNSNAP_EINVAL
 */
int dnsnap_l2_value_seal(const uint8_t *key, size_t key_len, const uint8_t *entry,
			 size_t entry_len, uint8_t *out, size_t cap, size_t *out_len);

/**
 * Check a value read from a shared store as untrusted: the frame (magic,
 * major version, a length from the smallest entry's to DNSNAP_L2_VALUE_MAX),
 * the L2_Check against @p key, then the entry (dnsnap_entry_validate()).
 * The entry's Expiry is the caller's to compare with its clock; @p key is
 * not decoded (the caller knows it, or checks it with dnsnap_key_decode()).
 * On DNSNAP_OK, *entry points into @p val.
 * @return DNSNAP_OK; DNSNAP_ETRUNC, DNSNAP_EMAGIC, DNSNAP_EVERSION,
 *         DNSNAP_ETOOBIG, DNSNAP_ECHECKSUM, or the entry's error, with
 *         diag->offset into @p val; DNSNAP_EINVAL
 */
int dnsnap_l2_value_open(const uint8_t *key, size_t key_len, const uint8_t *val, size_t len,
			 const uint8_t **entry, size_t *entry_len, dnsnap_diag_t *diag);

/** The clock skew a value's times are given (seconds): dnsnap_l2_value_accept(). */
#define DNSNAP_L2_SKEW_S DNSNAP_TIME_SKEW_S

/**
 * Whether a value read from a shared store under @p key may be used by the
 * cache @p c at @p now: the one check every reader of a value makes (`dnsnap
 * serve --l2`, `import --from`). In this order:
 * - the key: dnsnap_key_decode();
 * - the value: dnsnap_l2_value_open() (frame, L2_Check against @p key, the
 *   entry validated);
 * - the rcode: NOERROR or NXDOMAIN; the times a dnsnap writer with @p c's
 *   policy gives (dnsnap_cache_opts_get(); NULL: the default options): the
 *   time rule of every reader, dnsnap_entry_check_time();
 * - the records answer the key (spec/DECISIONS.md, "What an L2 value must
 *   answer"; RFC 1034 4.3.2): each answer-section record is of the key's type
 *   (any for ANY) and class at the query name or a name its CNAME chain
 *   reaches, or a CNAME there (the chain goes on at its target), or a DNAME
 *   or RRSIG at one of those names or above one; a positive entry (kind
 *   ANSWER) has at least one such record of the key's type or a CNAME;
 * - then the Expiry against @p now.
 * On DNSNAP_OK, *entry points into @p val (ready for
 * dnsnap_cache_insert_entry() under @p key).
 * @return DNSNAP_OK; DNSNAP_ENOTFOUND: a good value, expired at @p now (a miss,
 *         not damage); an error of dnsnap_key_decode() with diag->offset into
 *         @p key; an error of dnsnap_l2_value_open(); DNSNAP_EFIELD for a
 *         refusal by the policy or the records, with diag->offset into @p val
 *         (DNSNAP_L2_HDR + 0: Inception, + 4: Expiry, + 12: the rcode or kind,
 *         + the record's offset in the entry); DNSNAP_EINVAL
 */
int dnsnap_l2_value_accept(const dnsnap_cache_t *c, const uint8_t *key, size_t key_len,
			   const uint8_t *val, size_t len, uint32_t now, const uint8_t **entry,
			   size_t *entry_len, dnsnap_diag_t *diag);

#ifdef __cplusplus
}
#endif
#endif /* DNSNAP_H */
