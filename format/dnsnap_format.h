/*
 * dnsnap_format.h: the stable binary layout of dnsnap, format version 1.0.
 *
 * This header is the whole public interface of format/ (libc only). The
 * normative description is spec/FORMAT.md; the byte layouts below repeat it
 * for the reader of the code.
 *
 * Two objects:
 *
 * KEY (sorts with memcmp so a zone's names are adjacent; integers big-endian)
 *   +----------------------+--------+---------+-------+---------+-------------+
 *   | Name (reversed wire) | Qtype  | Qclass  | Flags | Tag_Len | Tag         |
 *   | 1..255 bytes         | u16 BE | u16 BE  | u8    | u8      | 0..255 bytes|
 *   +----------------------+--------+---------+-------+---------+-------------+
 *   Name: the query name, ASCII lower-cased, its labels in reverse order, each
 *   as <len><bytes>, ended by the root label 0. "www.Example.com." is
 *   \3com\7example\3www\0. A zone's key range is the prefix without the 0.
 *   A whole key is at most DNSNAP_KEY_MAX (511, LMDB's key limit) bytes.
 *
 * ENTRY (the value; integers little-endian unless in DNS wire data)
 *   off  size  field
 *   0    4     Inception   u32 Unix seconds (mod 2^32, serial arithmetic)
 *   4    4     Expiry      u32 Unix seconds (mod 2^32, serial arithmetic)
 *   8    4     Hits        u32, saturating
 *   12   2     Flags       see DNSNAP_EF_*
 *   14   2     Auth_Off    offset in Records where the authority section starts
 *   16   2     Addl_Off    offset in Records where the additional section starts
 *   18   [2 + Ext_Len]     only with DNSNAP_EF_EXT: Ext_Len u16, then TLVs
 *   ..   Records           to the end of the entry, at most 65535 bytes
 *
 * RECORD (inside Records)
 *   Rec_Len u16   bytes that follow (Rec_Flags .. end of rdata)
 *   Rec_Flags u8  bits 0-1 owner mode, bit 2 SAME (same RRset as the previous
 *                 record: no Type/Class/TTL/owner fields), bit 3 CLASS
 *                 present, bits 4-7 reserved (zero)
 *   Type u16      \
 *   Class u16     | only without SAME; Class only with CLASS (else IN)
 *   TTL u32       | original TTL as received, <= 2^31-1
 *   Owner         / mode 0: none (the query name); mode 1: u8 index of an
 *                   earlier record whose owner this is; mode 2: wire name;
 *                   mode 3: u8 index of an earlier NS/CNAME/PTR/DNAME record
 *                   whose rdata (one name) this owner equals
 *   Rdata         DNS wire form, names expanded, to the end of the record
 */
#ifndef DNSNAP_FORMAT_H
#define DNSNAP_FORMAT_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DNSNAP_FORMAT_MAJOR 1
#define DNSNAP_FORMAT_MINOR 0
/* The snapshot container's own version (spec/FORMAT.md, "Versioning"): 2.0
 * added a Value_Check to every value. Keys, entries and the export stream
 * stay at DNSNAP_FORMAT_MAJOR.DNSNAP_FORMAT_MINOR. */
#define DNSNAP_SNAP_MAJOR 2
#define DNSNAP_SNAP_MINOR 1

/*
 * Return codes. Every fallible call of libdnsnap returns an int: DNSNAP_OK
 * (0), or one of the negative codes below; results go through
 * out-parameters, set only on success. The values are part of the format's
 * contract (spec/FORMAT.md, "Errors"; the vectors name them): append only,
 * explicit values, never reused. A dnsnap_diag_t, where a call takes one,
 * says where (the byte offset, as the call's documentation defines it) and
 * what, in a sentence that names the file when there is one.
 *
 *   DNSNAP_OK          success
 *   -errno             a system call failed: -ENOENT, -EACCES, -ENOSPC and
 *                      -EFBIG (disk full, file too big: nothing published),
 *                      -EAGAIN (dnsnap_snap_lock(), dnsnap_snap_publish():
 *                      another writer held the lock all the wait), ...;
 *                      DNSNAP_ENOMEM, DNSNAP_EINVAL and DNSNAP_ENOSPC are
 *                      three of them, named:
 *   DNSNAP_ENOMEM      out of memory
 *   DNSNAP_EINVAL      a bad argument from the caller (NULL, a length out of
 *                      range), or a path that is not a regular file
 *   DNSNAP_ENOSPC      the caller's output buffer is too small
 *   DNSNAP_EMAGIC      not a dnsnap object: no magic number where the format
 *                      puts one (a file that is not a snapshot, a stream, an
 *                      L2 value); such a file is never replaced
 *   DNSNAP_EVERSION    a major version this library does not read (diag
 *                      names both); a file of a later version is never
 *                      replaced
 *   DNSNAP_ETRUNC      the input ends inside a field (cut short, or a file
 *                      changed in place under a reader)
 *   DNSNAP_ECHECKSUM   a checksum or digest does not match: damage
 *   DNSNAP_ERESERVED   a reserved bit or value is set
 *   DNSNAP_ENOTFOUND   no such entry (a lookup's miss: not an error to report)
 *   DNSNAP_ELMDB       LMDB failed writing a snapshot (diag: its message)
 *   DNSNAP_EZSTD       zstd failed (the export stream)
 *   DNSNAP_ELABEL      a DNS label over 63 bytes, or of a bad type
 *   DNSNAP_ENAME       a DNS name over 255 bytes
 *   DNSNAP_EPOINTER    a compression pointer that does not point backwards
 *   DNSNAP_ECOUNT      a DNS message's section counts overrun it
 *   DNSNAP_ERDLEN      a record's RDLENGTH overruns the message
 *   DNSNAP_ERDATA      rdata that does not fit its type (an A not 4 bytes)
 *   DNSNAP_EOPT        a second OPT, an OPT outside the additional section,
 *                      or a malformed one
 *   DNSNAP_ENOTCACHE   a message that is not cached (QR, opcode, TC, QDCOUNT;
 *                      TTL 0 after the cache's policy) or, for
 *                      dnsnap_query_parse(), not a query it answers
 *   DNSNAP_ETOOBIG     a key or entry over the format's limits, or an entry
 *                      over a quarter of a cache shard's byte limit
 *   DNSNAP_EFIELD      a field holds a value the format forbids (an entry's
 *                      expiry before its inception, keys out of order)
 *
 * dnsnap_strerror() gives the sentence, dnsnap_errname() the name.
 */
enum dnsnap_err {
	DNSNAP_OK = 0,
	DNSNAP_ENOMEM = -ENOMEM,
	DNSNAP_EINVAL = -EINVAL,  /* bad argument from the caller */
	DNSNAP_ENOSPC = -ENOSPC,  /* the caller's output buffer is too small */
	DNSNAP_EMAGIC = -1000,    /* not a dnsnap object (magic number) */
	DNSNAP_EVERSION = -1001,  /* unknown major version */
	DNSNAP_ETRUNC = -1002,    /* input ends inside a field */
	DNSNAP_ECHECKSUM = -1003, /* digest or checksum mismatch */
	DNSNAP_ERESERVED = -1004, /* a reserved bit or value is set */
	DNSNAP_ENOTFOUND = -1005, /* no such entry */
	DNSNAP_ELMDB = -1006,     /* LMDB failed (engine) */
	DNSNAP_EZSTD = -1007,     /* zstd failed (engine) */
	DNSNAP_ELABEL = -1008,    /* a label longer than 63 bytes, or a bad label type */
	DNSNAP_ENAME = -1009,     /* a name longer than 255 bytes */
	DNSNAP_EPOINTER = -1010,  /* a compression pointer that does not point backwards */
	DNSNAP_ECOUNT = -1011,    /* section counts overrun the message */
	DNSNAP_ERDLEN = -1012,    /* a record's rdlength overruns the message */
	DNSNAP_ERDATA = -1013,    /* rdata does not fit its type (A not 4 bytes, ...) */
	DNSNAP_EOPT = -1014,      /* a second OPT, an OPT outside additional, bad OPT */
	DNSNAP_ENOTCACHE = -1015, /* not a cacheable response (QR, opcode, TC, QDCOUNT) */
	DNSNAP_ETOOBIG = -1016,   /* the key or entry would exceed the format's limits */
	DNSNAP_EFIELD = -1017,    /* an entry field holds a value the format forbids */
};

/** A short English description of a DNSNAP_E* code ("unknown error" for others). */
const char *dnsnap_strerror(int err);
/** The symbolic name of a code, e.g. "DNSNAP_ELABEL" (NULL for unknown codes). */
const char *dnsnap_errname(int err);

/** Where decoding failed: byte offset into the input, and a sentence. */
typedef struct dnsnap_diag {
	size_t offset;
	char msg[256];
} dnsnap_diag_t;

/* ---------------------------------------------------------------- limits */

#define DNSNAP_NAME_MAX     255     /* wire name, root label included */
#define DNSNAP_TAG_MAX      255
#define DNSNAP_KEY_MAX      511     /* LMDB's default maximum key size */
#define DNSNAP_RECORDS_MAX  65535   /* Records length: u16 section offsets */
#define DNSNAP_EXT_MAX      65535
#define DNSNAP_ENTRY_HDR    18      /* fixed header, without the extension area */
#define DNSNAP_ENTRY_MAX    (DNSNAP_ENTRY_HDR + 2 + DNSNAP_EXT_MAX + DNSNAP_RECORDS_MAX)
#define DNSNAP_OWNER_REFS   64      /* owner references reach records 0..63 */
#define DNSNAP_TTL_MAX      0x7fffffffu /* RFC 2181 section 8 */

/* ------------------------------------------------------------------ keys */

/* Key flags: query distinctions that must not share a cache entry. */
#define DNSNAP_KF_CD        0x01    /* checking disabled: may hold unvalidated data */
#define DNSNAP_KF_RESERVED  0xfe

typedef struct dnsnap_key {
	uint8_t name[DNSNAP_NAME_MAX]; /* wire form, lower case */
	size_t name_len;
	uint16_t qtype;
	uint16_t qclass;
	uint8_t flags;                 /* DNSNAP_KF_* */
	const uint8_t *tag;            /* into the decoded key, not copied */
	size_t tag_len;
} dnsnap_key_t;

/**
 * Encode a cache key.
 *
 * @param name  uncompressed wire name, any case (it is lower-cased)
 * @param[out] out  at least DNSNAP_KEY_MAX bytes, or the key's exact size
 * @param[out] out_len  the key's length, set only on success
 * @return DNSNAP_OK, DNSNAP_ELABEL, DNSNAP_ENAME, DNSNAP_ERESERVED (flags),
 *         DNSNAP_ETOOBIG (key over DNSNAP_KEY_MAX), DNSNAP_ENOSPC
 */
int dnsnap_key_encode(const uint8_t *name, size_t name_len, uint16_t qtype, uint16_t qclass,
		      uint8_t flags, const uint8_t *tag, size_t tag_len,
		      uint8_t *out, size_t cap, size_t *out_len);

/** Decode and validate a key. out->tag points into @p key. */
int dnsnap_key_decode(const uint8_t *key, size_t len, dnsnap_key_t *out, dnsnap_diag_t *diag);

/** memcmp order, shorter first on a common prefix: the order of the snapshot. */
int dnsnap_key_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen);

/**
 * The key prefix shared by every name at or below @p zone (wire form, any case):
 * its reversed labels without the final 0. Keys of the zone are exactly the
 * keys that start with it.
 */
int dnsnap_key_zone_prefix(const uint8_t *zone, size_t zone_len, uint8_t *out, size_t cap,
			   size_t *out_len);

/* --------------------------------------------------------------- entries */

/* Entry flags (u16). Bits 0-8 are defined; 9-11 are for minor versions
 * (readers ignore them, v1.0 writers write zero); 12-15 must be zero. */
#define DNSNAP_EF_RCODE      0x000f  /* bits 0-3: RCODE of the response */
#define DNSNAP_EF_AUTH       0x0010  /* AD: validated by the resolver */
#define DNSNAP_EF_KIND       0x0060  /* bits 5-6: DNSNAP_KIND_* */
#define DNSNAP_EF_KIND_SHIFT 5
#define DNSNAP_EF_DNSSEC     0x0080  /* holds RRSIG, NSEC or NSEC3 records */
#define DNSNAP_EF_EXT        0x0100  /* an extension area follows the header */
#define DNSNAP_EF_MINOR      0x0e00  /* skippable: future minor versions */
#define DNSNAP_EF_RESERVED   0xf000  /* must be zero */

enum dnsnap_kind {
	DNSNAP_KIND_ANSWER = 0,   /* answer data, or an error rcode other than NXDOMAIN */
	DNSNAP_KIND_NXDOMAIN = 1, /* RFC 2308 name error */
	DNSNAP_KIND_NODATA = 2,   /* RFC 2308 no data: NOERROR, no answer for the type */
	DNSNAP_KIND_REFERRAL = 3, /* NOERROR, no answer, NS in authority, no SOA */
};

/* Extension TLVs: Ext_Type u8, Ext_Data_Len u16, Ext_Data. Unknown types are skipped. */
#define DNSNAP_EXT_EDE 1          /* RFC 8914: INFO-CODE u16 BE, EXTRA-TEXT UTF-8 */

enum dnsnap_section {
	DNSNAP_SEC_ANSWER = 0,
	DNSNAP_SEC_AUTHORITY = 1,
	DNSNAP_SEC_ADDITIONAL = 2,
};

/* Record flags (u8). */
#define DNSNAP_RF_OWNER      0x03
#define DNSNAP_OWNER_QNAME   0   /* owner is the query name, nothing stored */
#define DNSNAP_OWNER_REF     1   /* u8: index of an earlier record, same owner */
#define DNSNAP_OWNER_NAME    2   /* explicit wire name */
#define DNSNAP_OWNER_TARGET  3   /* u8: index of an earlier NS, CNAME, PTR or DNAME
				  * record; owner = its rdata name */
#define DNSNAP_RF_SAME       0x04
#define DNSNAP_RF_CLASS      0x08
#define DNSNAP_RF_RESERVED   0xf0

/** The fixed header of an entry, decoded. */
typedef struct dnsnap_hdr {
	uint32_t inception;
	uint32_t expiry;
	uint32_t hits;
	uint16_t flags;
	uint16_t auth_off;
	uint16_t addl_off;
	const uint8_t *ext;      /* extension TLVs, NULL when absent */
	size_t ext_len;
	const uint8_t *records;  /* the record buffer */
	size_t records_len;
} dnsnap_hdr_t;

/**
 * Decode an entry's fixed header and locate its parts. Shallow: checks sizes
 * and flags, not the records (see dnsnap_entry_validate()).
 * @return DNSNAP_OK, DNSNAP_ETRUNC, DNSNAP_ERESERVED, DNSNAP_EFIELD, DNSNAP_ETOOBIG
 */
int dnsnap_entry_header(const uint8_t *entry, size_t len, dnsnap_hdr_t *out, dnsnap_diag_t *diag);

static inline unsigned dnsnap_hdr_rcode(const dnsnap_hdr_t *h) { return h->flags & DNSNAP_EF_RCODE; }
static inline unsigned dnsnap_hdr_kind(const dnsnap_hdr_t *h)
{
	return (h->flags & DNSNAP_EF_KIND) >> DNSNAP_EF_KIND_SHIFT;
}

/**
 * Walk every byte of an entry: header, extensions, every record, every owner
 * reference, every name inside rdata of types whose rdata holds names, fixed
 * rdata sizes. Anything read from outside the process must pass this first.
 * @return DNSNAP_OK or the first error, with diag->offset into @p entry
 */
int dnsnap_entry_validate(const uint8_t *entry, size_t len, dnsnap_diag_t *diag);

/** One record as the readers give it back. All pointers point into the entry
 * (or to the query name given to the iterator); nothing is copied. */
typedef struct dnsnap_rr {
	const uint8_t *owner;   /* uncompressed wire name */
	size_t owner_len;
	uint16_t type;
	uint16_t rclass;
	uint32_t ttl;           /* original TTL, as received */
	const uint8_t *rdata;   /* wire form, names expanded */
	size_t rdlen;
	unsigned section;       /* enum dnsnap_section */
	unsigned owner_mode;    /* DNSNAP_OWNER_*, or DNSNAP_OWNER_QNAME for SAME records
				 * whose RRset's owner is the query name */
	unsigned index;         /* 0-based position in the record buffer */
	size_t offset;          /* of the record's Rec_Len, from the entry's start */
} dnsnap_rr_t;

/** Iterator over an entry's records. Allocation-free; lives on the stack. */
typedef struct dnsnap_iter {
	const uint8_t *entry;
	size_t len;
	const uint8_t *rec;      /* start of Records */
	size_t rec_len;
	size_t pos;              /* offset in Records of the next record */
	uint16_t auth_off, addl_off;
	const uint8_t *qname;
	size_t qname_len;
	unsigned n;              /* records returned so far */
	dnsnap_rr_t prev;
	/* per record < DNSNAP_OWNER_REFS: owner and target-name offsets in
	 * Records, OWN_QNAME for the query name, OWN_NONE for none */
	uint16_t own[DNSNAP_OWNER_REFS];
	uint16_t tgt[DNSNAP_OWNER_REFS];
	int err;
	size_t err_off;
} dnsnap_iter_t;

/**
 * Start iterating. @p qname (wire form, the query name as the caller wants
 * elided owners spelled) must stay valid while the iterator is used.
 * @return DNSNAP_OK or an error from dnsnap_entry_header()
 */
int dnsnap_iter_init(dnsnap_iter_t *it, const uint8_t *entry, size_t len,
		     const uint8_t *qname, size_t qname_len);

/**
 * Next record. @return 1 with *rr filled, 0 at the end, or a negative
 * DNSNAP_E* code (sticky: later calls return it again; it->err_off says where).
 * The iterator checks what it reads but not rdata contents: validate entries
 * from outside the process first.
 */
int dnsnap_iter_next(dnsnap_iter_t *it, dnsnap_rr_t *rr);

/** Extended DNS errors (RFC 8914) of an entry, one at a time. */
typedef struct dnsnap_ede {
	uint16_t code;
	const uint8_t *text;    /* UTF-8, not NUL-terminated */
	size_t text_len;
} dnsnap_ede_t;

/**
 * The @p n-th EDE option (0-based) of a decoded header.
 * @return 1 found, 0 no such option, negative on a malformed extension area
 */
int dnsnap_entry_ede(const dnsnap_hdr_t *h, unsigned n, dnsnap_ede_t *out);

/* --------------------------------------------------------------- ingest */

/** Scratch space for dnsnap_msg_encode(): reuse it across calls (it is large,
 * about 130 KB: keep it on the heap or in static storage, not on the stack). */
typedef struct dnsnap_encoded {
	uint8_t key[DNSNAP_KEY_MAX];
	size_t key_len;
	size_t entry_len;
	uint16_t qname_off;      /* the question name's offset in the message */
	uint16_t qname_len;      /* its uncompressed length */
	uint32_t ttl;            /* Expiry - Inception */
	uint8_t entry[DNSNAP_ENTRY_MAX];
} dnsnap_encoded_t;

/**
 * Parse a DNS response in wire form and encode its cache key and entry.
 *
 * The key comes from the question (lower-cased), the CD bit and @p tag. The
 * entry holds every record of all three sections except OPT and TSIG, and the
 * EDE options of the OPT. Inception is @p now; Expiry is @p now plus the
 * lowest TTL that governs the answer (RFC 2308 for negative answers; see
 * spec/FORMAT.md, "Expiry"). No allocation: everything goes into @p out.
 *
 * @return DNSNAP_OK, or DNSNAP_ETRUNC, DNSNAP_ELABEL, DNSNAP_ENAME,
 *         DNSNAP_EPOINTER, DNSNAP_ECOUNT, DNSNAP_ERDLEN, DNSNAP_ERDATA,
 *         DNSNAP_EOPT, DNSNAP_ENOTCACHE, DNSNAP_ETOOBIG, DNSNAP_EINVAL,
 *         with diag->offset into @p msg
 */
int dnsnap_msg_encode(const uint8_t *msg, size_t len, uint32_t now,
		      const uint8_t *tag, size_t tag_len,
		      dnsnap_encoded_t *out, dnsnap_diag_t *diag);

/* ----------------------------------------------------------- wire helpers */

/**
 * Read a possibly compressed name at msg[*pos] into @p out (uncompressed,
 * case kept); *pos moves past the name as it stands in the message.
 * Pointers must point strictly before the start of the labels they end.
 * @return DNSNAP_OK, DNSNAP_ETRUNC, DNSNAP_ELABEL, DNSNAP_ENAME, DNSNAP_EPOINTER
 */
int dnsnap_name_unpack(const uint8_t *msg, size_t len, size_t *pos,
		       uint8_t out[DNSNAP_NAME_MAX], size_t *out_len, dnsnap_diag_t *diag);

/**
 * Length of the uncompressed name at p[0..max), checked (no pointers).
 * @return the length (1..255), or a negative DNSNAP_E* code
 */
int dnsnap_name_len(const uint8_t *p, size_t max);

/** Names equal ignoring ASCII case (both uncompressed and valid). */
int dnsnap_name_eq(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen);

/** Whether the format knows @p type's rdata layout and stores its names
 * expanded: the types whose names Unbound decompresses (RFC 3597 section 4,
 * and KX, DNAME, RRSIG, NSEC, TALINK, SVCB, HTTPS, LP, TKEY; spec/FORMAT.md,
 * "Rdata"). Such rdata in an entry holds no compression pointer. */
int dnsnap_type_has_names(uint16_t type);

/** RRSIG, NSEC, NSEC3: the records sent only to clients that set DO. */
static inline int dnsnap_type_is_dnssec(uint16_t type)
{
	return type == 46 || type == 47 || type == 50;
}

/** "1.0": the format version this library reads and writes. */
const char *dnsnap_format_version(void);

#ifdef __cplusplus
}
#endif
#endif /* DNSNAP_FORMAT_H */
