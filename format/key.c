/*
 * key.c: cache keys. The name is stored with its labels reversed so that
 * memcmp order puts a zone's names in one contiguous range (a prefix scan).
 */
#include "internal.h"

/* Copy the labels at name + starts[0..nl) into out in reverse order,
 * lower-cased; returns the bytes written (no root label). The labels are
 * already checked. */
static size_t put_reversed(const uint8_t *name, const uint8_t *starts, size_t nl, uint8_t *out)
{
	size_t o = 0;
	while (nl > 0) {
		const uint8_t *l = name + starts[--nl];
		memcpy(out + o, l, 1 + (size_t)l[0]);
		o += 1 + (size_t)l[0];
	}
	dnsnap__lower_bytes(out, o);
	return o;
}

/*
 * Reverse the labels of a wire name into out, lower-casing, checking it on
 * the way (one pass: this runs on every insert). Returns the bytes written
 * without the final root label, or a negative DNSNAP_E* code.
 */
static int reverse_labels(const uint8_t *name, size_t name_len, uint8_t *out)
{
	uint8_t starts[128]; /* at most 127 labels fit in 255 bytes */
	size_t nl = 0, i = 0;
	for (;;) {
		if (i >= name_len)
			return DNSNAP_EINVAL; /* no root label within name_len */
		uint8_t l = name[i];
		if (l == 0)
			break;
		if (l > 63)
			return DNSNAP_ELABEL;
		if (i + 1 + l + 1 > DNSNAP_NAME_MAX)
			return DNSNAP_ENAME;
		starts[nl++] = (uint8_t)i;
		i += 1 + (size_t)l;
	}
	if (i + 1 != name_len)
		return DNSNAP_EINVAL;
	return (int)put_reversed(name, starts, nl, out);
}

int dnsnap_key_encode(const uint8_t *name, size_t name_len, uint16_t qtype, uint16_t qclass,
		      uint8_t flags, const uint8_t *tag, size_t tag_len,
		      uint8_t *out, size_t cap, size_t *out_len)
{
	if (name == NULL || name_len == 0 || out == NULL || out_len == NULL)
		return DNSNAP_EINVAL;
	if (flags & DNSNAP_KF_RESERVED)
		return DNSNAP_ERESERVED;
	if (tag_len > DNSNAP_TAG_MAX || (tag_len > 0 && tag == NULL))
		return DNSNAP_EINVAL;
	size_t need = name_len + 6 + tag_len;
	if (name_len <= DNSNAP_NAME_MAX && need > DNSNAP_KEY_MAX)
		return DNSNAP_ETOOBIG;
	if (name_len <= DNSNAP_NAME_MAX && cap < need)
		return DNSNAP_ENOSPC;
	int n = reverse_labels(name, name_len, out);
	if (n < 0)
		return n;
	*out_len = dnsnap__key_tail(out, (size_t)n, qtype, qclass, flags, tag, tag_len);
	return DNSNAP_OK;
}

/* Checks run in field order, so the first bad field is the one reported. */
int dnsnap_key_decode(const uint8_t *key, size_t len, dnsnap_key_t *out, dnsnap_diag_t *diag)
{
	if (key == NULL || out == NULL)
		return DNSNAP_EINVAL;
	if (len > DNSNAP_KEY_MAX)
		return dnsnap__diag(diag, DNSNAP_ETOOBIG, 0, "key of %zu bytes, over %d", len,
				    DNSNAP_KEY_MAX);
	size_t n = 0; /* Name: labels, each checked then scanned for upper case */
	for (;;) {
		if (n >= len)
			return dnsnap__diag(diag, DNSNAP_ETRUNC, 0, "key cut inside its name");
		uint8_t l = key[n];
		if (l == 0)
			break;
		if (l > 63)
			return dnsnap__diag(diag, DNSNAP_ELABEL, n, "key name: label of %u at 0x%zx",
					    l, n);
		if (n + 1 + l + 1 > DNSNAP_NAME_MAX)
			return dnsnap__diag(diag, DNSNAP_ENAME, n, "key name over 255 bytes at 0x%zx",
					    n);
		if (len - n - 1 < l)
			return dnsnap__diag(diag, DNSNAP_ETRUNC, 0, "key cut inside its name");
		for (size_t j = n + 1; j <= n + l; j++)
			if (key[j] >= 'A' && key[j] <= 'Z')
				return dnsnap__diag(diag, DNSNAP_EFIELD, j,
						    "upper-case byte in key name at 0x%zx", j);
		n += 1 + (size_t)l;
	}
	n++;
	rd_t r = rd_init(key, len);
	r.pos = n;
	uint16_t qtype = rd_u16be(&r);
	uint16_t qclass = rd_u16be(&r);
	uint8_t flags = rd_u8(&r);
	if (r.err == DNSNAP_OK && (flags & DNSNAP_KF_RESERVED))
		return dnsnap__diag(diag, DNSNAP_ERESERVED, n + 4, "reserved key flags 0x%02x",
				    flags & DNSNAP_KF_RESERVED);
	size_t tag_len_at = r.pos;
	uint8_t tag_len = rd_u8(&r);
	if (r.err == DNSNAP_OK && len - r.pos < tag_len) /* a length that overruns: at the length */
		rd_fail(&r, DNSNAP_ETRUNC, tag_len_at);
	const uint8_t *tag = rd_skip(&r, tag_len);
	if (r.err != DNSNAP_OK)
		return dnsnap__diag(diag, r.err, r.err_off, "key cut at 0x%zx", r.err_off);
	if (r.pos != len)
		return dnsnap__diag(diag, DNSNAP_EFIELD, r.pos, "%zu bytes after the key's tag",
				    len - r.pos);
	/* The reversed form reverses back to the wire name (already checked). */
	out->name_len = (size_t)reverse_labels(key, n, out->name);
	out->name[out->name_len++] = 0;
	out->qtype = qtype;
	out->qclass = qclass;
	out->flags = flags;
	out->tag = tag_len ? tag : NULL;
	out->tag_len = tag_len;
	return DNSNAP_OK;
}

int dnsnap_key_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	size_t n = alen < blen ? alen : blen;
	int c = n ? memcmp(a, b, n) : 0;
	if (c != 0)
		return c < 0 ? -1 : 1;
	return alen < blen ? -1 : alen > blen ? 1 : 0;
}

int dnsnap_key_zone_prefix(const uint8_t *zone, size_t zone_len, uint8_t *out, size_t cap,
			   size_t *out_len)
{
	if (zone == NULL || zone_len == 0 || out == NULL || out_len == NULL)
		return DNSNAP_EINVAL;
	uint8_t tmp[DNSNAP_NAME_MAX];
	int n = reverse_labels(zone, zone_len, tmp);
	if (n < 0)
		return n;
	if (cap < (size_t)n)
		return DNSNAP_ENOSPC;
	memcpy(out, tmp, (size_t)n);
	*out_len = (size_t)n;
	return DNSNAP_OK;
}
