/*
 * wire.c: DNS wire helpers (names, compression on read, case folding),
 * per-type rdata rules, error strings.
 */
#include <stdarg.h>

#include "internal.h"

static const struct {
	int code;
	const char *name;
	const char *text;
} errs[] = {
	{ DNSNAP_OK, "DNSNAP_OK", "success" },
	{ DNSNAP_ENOMEM, "DNSNAP_ENOMEM", "out of memory" },
	{ DNSNAP_EINVAL, "DNSNAP_EINVAL", "invalid argument" },
	{ DNSNAP_ENOSPC, "DNSNAP_ENOSPC", "output buffer too small" },
	{ DNSNAP_EMAGIC, "DNSNAP_EMAGIC", "bad magic number" },
	{ DNSNAP_EVERSION, "DNSNAP_EVERSION", "unsupported format version" },
	{ DNSNAP_ETRUNC, "DNSNAP_ETRUNC", "truncated" },
	{ DNSNAP_ECHECKSUM, "DNSNAP_ECHECKSUM", "bad checksum" },
	{ DNSNAP_ERESERVED, "DNSNAP_ERESERVED", "reserved bit or value set" },
	{ DNSNAP_ENOTFOUND, "DNSNAP_ENOTFOUND", "not found" },
	{ DNSNAP_ELMDB, "DNSNAP_ELMDB", "LMDB error" },
	{ DNSNAP_EZSTD, "DNSNAP_EZSTD", "zstd error" },
	{ DNSNAP_ELABEL, "DNSNAP_ELABEL", "bad label (over 63 bytes or bad label type)" },
	{ DNSNAP_ENAME, "DNSNAP_ENAME", "name over 255 bytes" },
	{ DNSNAP_EPOINTER, "DNSNAP_EPOINTER", "compression pointer does not point backwards" },
	{ DNSNAP_ECOUNT, "DNSNAP_ECOUNT", "section counts overrun the message" },
	{ DNSNAP_ERDLEN, "DNSNAP_ERDLEN", "rdlength overruns the message" },
	{ DNSNAP_ERDATA, "DNSNAP_ERDATA", "rdata does not fit its type" },
	{ DNSNAP_EOPT, "DNSNAP_EOPT", "bad or misplaced OPT record" },
	{ DNSNAP_ENOTCACHE, "DNSNAP_ENOTCACHE", "not a cacheable response" },
	{ DNSNAP_ETOOBIG, "DNSNAP_ETOOBIG", "over the format's size limits" },
	{ DNSNAP_EFIELD, "DNSNAP_EFIELD", "field value not allowed" },
};

const char *dnsnap_strerror(int err)
{
	for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++)
		if (errs[i].code == err)
			return errs[i].text;
	return "unknown error";
}

const char *dnsnap_errname(int err)
{
	for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++)
		if (errs[i].code == err)
			return errs[i].name;
	return NULL;
}

const char *dnsnap_format_version(void)
{
	return "1.0";
}

int dnsnap__diag(dnsnap_diag_t *d, int err, size_t off, const char *fmt, ...)
{
	if (d != NULL) {
		va_list ap;
		d->offset = off;
		va_start(ap, fmt);
		vsnprintf(d->msg, sizeof d->msg, fmt, ap);
		va_end(ap);
	}
	return err;
}

int dnsnap__name_check(const uint8_t *p, size_t max, size_t *off)
{
	size_t i = 0;
	for (;;) {
		if (i >= max) {
			*off = 0; /* a name is one field: a cut reports its start */
			return DNSNAP_ETRUNC;
		}
		uint8_t l = p[i];
		if (l == 0)
			break;
		if (l > 63) {
			*off = i;
			return DNSNAP_ELABEL;
		}
		if (i + 1 + l + 1 > DNSNAP_NAME_MAX) {
			*off = i;
			return DNSNAP_ENAME;
		}
		i += 1 + (size_t)l;
	}
	return (int)(i + 1);
}

int dnsnap_name_len(const uint8_t *p, size_t max)
{
	size_t off;
	return dnsnap__name_check(p, max, &off);
}

#define L4(x) x, x + 1, x + 2, x + 3
#define L16(x) L4(x), L4(x + 4), L4(x + 8), L4(x + 12)
#define L64(x) L16(x), L16(x + 16), L16(x + 32), L16(x + 48)
const uint8_t dnsnap__lower[256] = {
	L64(0), 64, L16(97), L4(113), L4(117), 121, 122, L4(91), 95, L16(96), L16(112),
	L64(128), L64(192),
};

int dnsnap_name_eq(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	if (alen != blen)
		return 0;
	if (a == b || memcmp(a, b, alen) == 0) /* the usual case: same spelling */
		return 1;
	for (size_t i = 0; i < alen; i++)
		if (dnsnap__lower[a[i]] != dnsnap__lower[b[i]])
			return 0;
	return 1;
}

int dnsnap_name_unpack(const uint8_t *msg, size_t len, size_t *pos, uint8_t out[DNSNAP_NAME_MAX],
		       size_t *out_len, dnsnap_diag_t *diag)
{
	size_t p = *pos;
	size_t run_start = p; /* a pointer must point strictly before this */
	size_t end = 0;       /* where the name ends in the message (0: not yet known) */
	size_t n = 0;

	for (;;) {
		if (p >= len)
			return dnsnap__diag(diag, DNSNAP_ETRUNC, *pos, "name at 0x%zx cut", *pos);
		uint8_t l = msg[p];
		if ((l & 0xc0) == 0xc0) {
			if (p + 1 >= len)
				return dnsnap__diag(diag, DNSNAP_ETRUNC, *pos, "name at 0x%zx cut", *pos);
			size_t t = (size_t)(l & 0x3f) << 8 | msg[p + 1];
			if (t < 12 || t >= run_start)
				return dnsnap__diag(diag, DNSNAP_EPOINTER, p,
						    "pointer at 0x%zx to 0x%zx does not point backwards",
						    p, t);
			if (end == 0)
				end = p + 2;
			run_start = t;
			p = t;
			continue;
		}
		if (l & 0xc0)
			return dnsnap__diag(diag, DNSNAP_ELABEL, p, "label type 0x%02x at 0x%zx",
					    l & 0xc0, p);
		/* a label must leave room for the root label after it */
		if (l != 0 && n + 1 + l + 1 > DNSNAP_NAME_MAX)
			return dnsnap__diag(diag, DNSNAP_ENAME, p, "name over 255 bytes at 0x%zx", p);
		if (l == 0) {
			out[n++] = 0;
			if (end == 0)
				end = p + 1;
			break;
		}
		/* l <= 63 here: the two top bits are clear */
		if (p + 1 + l > len)
			return dnsnap__diag(diag, DNSNAP_ETRUNC, *pos, "name at 0x%zx cut", *pos);
		memcpy(out + n, msg + p, 1 + (size_t)l);
		n += 1 + (size_t)l;
		p += 1 + (size_t)l;
	}
	*pos = end;
	*out_len = n;
	return DNSNAP_OK;
}

/*
 * The types whose rdata layout the format knows and whose names are stored
 * expanded: every type whose names Unbound's parser decompresses (the types
 * of sldns/rrdef.c with domain-name fields counted). That is RFC 3597 section
 * 4 (the RFC 1035 types, which receivers MUST decompress, and RP, AFSDB, RT,
 * SIG, PX, NXT, NAPTR, SRV, which they SHOULD), and the types whose names
 * must not be compressed but sometimes arrive compressed: KX, DNAME (RFC
 * 6672 section 2.5), RRSIG, NSEC, TALINK, SVCB, HTTPS, LP, TKEY. Expanding
 * them keeps a pointer, which means nothing outside its message, out of the
 * entry. (BIND refuses such messages instead; HIP's rendezvous servers are
 * left alone, as Unbound leaves them.)
 */
const char *dnsnap__schema(uint16_t type)
{
	switch (type) {
	case 2:  /* NS */
	case 3:  /* MD */
	case 4:  /* MF */
	case 5:  /* CNAME */
	case 7:  /* MB */
	case 8:  /* MG */
	case 9:  /* MR */
	case 12: /* PTR */
		return "N";
	case 6:  /* SOA */
		return "NNZ";
	case 14: /* MINFO */
	case 17: /* RP */
		return "NN";
	case 15: /* MX */
	case 18: /* AFSDB */
	case 21: /* RT */
		return "2N";
	case 26: /* PX */
		return "2NN";
	case 33: /* SRV */
		return "6N";
	case 35: /* NAPTR */
		return "4SSSN";
	case 24: /* SIG */
		return "TNR";
	case 30:  /* NXT */
	case 47:  /* NSEC */
	case 249: /* TKEY: algorithm name, then times, mode, error, key, other */
		return "NR";
	case 36:  /* KX */
	case 107: /* LP */
		return "2N";
	case 39: /* DNAME */
		return "N";
	case 46: /* RRSIG */
		return "TNR";
	case 58: /* TALINK */
		return "NN";
	case 64: /* SVCB */
	case 65: /* HTTPS */
		return "2NR";
	default:
		return NULL;
	}
}

int dnsnap_type_has_names(uint16_t type)
{
	return dnsnap__schema(type) != NULL;
}

static size_t fixed_len(char c)
{
	switch (c) {
	case '2': return 2;
	case '4': return 4;
	case '6': return 6;
	case 'T': return 18;
	case 'Z': return 20;
	default: return 0;
	}
}

int dnsnap__rdata_check(uint16_t type, const uint8_t *rdata, size_t len, size_t *off)
{
	/* ERDATA is reported at the rdata's first byte; a bad label at the label. */
	*off = 0;
	if (type == TYPE_A && len != 4)
		return DNSNAP_ERDATA;
	if (type == TYPE_AAAA && len != 16)
		return DNSNAP_ERDATA;
	const char *s = dnsnap__schema(type);
	if (s == NULL)
		return DNSNAP_OK;
	size_t i = 0;
	for (; *s; s++) {
		if (*s == 'R')
			return DNSNAP_OK;
		if (*s == 'N') {
			size_t noff;
			int n = dnsnap__name_check(rdata + i, len - i, &noff);
			if (n == DNSNAP_ETRUNC)
				return DNSNAP_ERDATA;
			if (n < 0) {
				*off = i + noff;
				return n;
			}
			i += (size_t)n;
		} else if (*s == 'S') {
			if (i >= len || len - i - 1 < rdata[i])
				return DNSNAP_ERDATA;
			i += 1 + (size_t)rdata[i];
		} else {
			if (len - i < fixed_len(*s))
				return DNSNAP_ERDATA;
			i += fixed_len(*s);
		}
	}
	return i == len ? DNSNAP_OK : DNSNAP_ERDATA;
}

void dnsnap__key_text(const dnsnap_key_t *k, char *out, size_t cap)
{
	size_t o = 0;
	if (cap < 16)
		return;
	for (size_t i = 0; i < k->name_len && k->name[i] != 0 && o + k->name[i] + 12 < cap;
	     i += 1u + k->name[i]) {
		for (size_t j = 1; j <= k->name[i]; j++) {
			uint8_t c = k->name[i + j];
			out[o++] = c > 0x20 && c < 0x7f ? (char)c : '?';
		}
		out[o++] = '.';
	}
	if (o == 0)
		out[o++] = '.';
	snprintf(out + o, cap - o, " type %u", k->qtype);
}
