/*
 * print.c: entries as text. ldns turns each record into presentation format,
 * so what we print is what every DNS tool built on ldns would print.
 */
#include <string.h>
#include <time.h>

#include <ldns/ldns.h>

#include "print.h"

static const char *const section_names[] = { "ANSWER", "AUTHORITY", "ADDITIONAL" };
static const char *const kind_names[] = { "ANSWER", "NXDOMAIN", "NODATA", "REFERRAL" };

const char *print_name(const uint8_t *name, size_t len, char *buf, size_t cap)
{
	ldns_rdf *rdf = ldns_dname_new_frm_data((uint16_t)len, name);
	char *s = rdf ? ldns_rdf2str(rdf) : NULL;
	snprintf(buf, cap, "%s", s ? s : "?");
	free(s);
	ldns_rdf_deep_free(rdf);
	return buf;
}

void print_type(char *buf, size_t cap, uint16_t type)
{
	char *s = ldns_rr_type2str((ldns_rr_type)type);
	snprintf(buf, cap, "%s", s ? s : "?");
	free(s);
}

void print_class(char *buf, size_t cap, uint16_t rclass)
{
	char *s = ldns_rr_class2str((ldns_rr_class)rclass);
	snprintf(buf, cap, "%s", s ? s : "?");
	free(s);
}

static const char *iso8601(uint32_t t, char *buf, size_t cap)
{
	time_t tt = (time_t)t;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}


/* The key and the entry's header, both decoded. */
static int decode_pair(const uint8_t *key, size_t key_len, const uint8_t *entry, size_t len,
		       dnsnap_key_t *k, dnsnap_hdr_t *h)
{
	int err = dnsnap_key_decode(key, key_len, k, NULL);
	return err != DNSNAP_OK ? err : dnsnap_entry_header(entry, len, h, NULL);
}

/* One record's presentation form from ldns, without the newline (malloc'd). */
static char *rr_text(const dnsnap_rr_t *rr)
{
	uint8_t wire[DNSNAP_NAME_MAX + 10 + 65535];
	size_t n = rr->owner_len;
	memcpy(wire, rr->owner, n);
	const uint16_t f16[2] = { rr->type, rr->rclass };
	for (int i = 0; i < 2; i++) {
		wire[n++] = (uint8_t)(f16[i] >> 8);
		wire[n++] = (uint8_t)f16[i];
	}
	for (int sh = 24; sh >= 0; sh -= 8)
		wire[n++] = (uint8_t)(rr->ttl >> sh);
	wire[n++] = (uint8_t)(rr->rdlen >> 8);
	wire[n++] = (uint8_t)rr->rdlen;
	memcpy(wire + n, rr->rdata, rr->rdlen);
	n += rr->rdlen;
	ldns_rr *lrr = NULL;
	size_t pos = 0;
	if (ldns_wire2rr(&lrr, wire, n, &pos, LDNS_SECTION_ANSWER) != LDNS_STATUS_OK)
		return NULL;
	char *s = ldns_rr2str(lrr);
	ldns_rr_free(lrr);
	if (s != NULL && *s && s[strlen(s) - 1] == '\n')
		s[strlen(s) - 1] = 0;
	return s;
}

/* One record through ldns, as a zone-file line. */
static int print_rr(FILE *f, const dnsnap_rr_t *rr)
{
	char *s = rr_text(rr);
	if (s == NULL) {
		fprintf(f, "; record %u: ldns cannot read it\n", rr->index);
		return DNSNAP_ERDATA;
	}
	fprintf(f, "%s\n", s);
	free(s);
	return DNSNAP_OK;
}

void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

int print_dump(FILE *f, const uint8_t *key, size_t key_len, const uint8_t *entry, size_t len,
	       uint32_t now, int json)
{
	dnsnap_key_t k;
	dnsnap_hdr_t h;
	int err = decode_pair(key, key_len, entry, len, &k, &h);
	if (err != DNSNAP_OK)
		return err;
	char name[1024], type[32], cls[32], t1[32], t2[32], tag[2 * DNSNAP_TAG_MAX + 2] = "";
	print_name(k.name, k.name_len, name, sizeof name);
	print_type(type, sizeof type, k.qtype);
	print_class(cls, sizeof cls, k.qclass);
	for (size_t i = 0; i < k.tag_len; i++)
		snprintf(tag + 2 * i, 3, "%02x", k.tag[i]);
	int32_t left = (int32_t)(h.expiry - now), age = (int32_t)(now - h.inception);
	uint32_t ttl = left > 0 ? (uint32_t)left : 0, sub = age > 0 ? (uint32_t)age : 0;
	ldns_lookup_table *rc = ldns_lookup_by_id(ldns_rcodes, (int)dnsnap_hdr_rcode(&h));
	const char *kind = kind_names[dnsnap_hdr_kind(&h)];
	int auth = !!(h.flags & DNSNAP_EF_AUTH), sec = !!(h.flags & DNSNAP_EF_DNSSEC);
	iso8601(h.inception, t1, sizeof t1);
	iso8601(h.expiry, t2, sizeof t2);
	if (json) {
		fputs("{\"name\":", f);
		json_str(f, name);
		fprintf(f, ",\"type\":\"%s\",\"class\":\"%s\",\"cd\":%s,\"tag\":\"%s\","
			"\"rcode\":\"%s\",\"kind\":\"%s\",\"auth\":%s,\"dnssec\":%s,\"ttl\":%u,"
			"\"hits\":%u,\"inception\":\"%s\",\"expiry\":\"%s\"",
			type, cls, k.flags & DNSNAP_KF_CD ? "true" : "false", tag,
			rc ? rc->name : "?", kind, auth ? "true" : "false", sec ? "true" : "false",
			ttl, h.hits, t1, t2);
	} else {
		fprintf(f, "; %s %s %s%s%s tag %s rcode %s kind %s%s%s ttl %u hits %u inception %s "
			"expiry %s\n", name, cls, type, k.flags & DNSNAP_KF_CD ? " cd" : "", "",
			k.tag_len ? tag : "-", rc ? rc->name : "?", kind, auth ? " auth" : "",
			sec ? " dnssec" : "", ttl, h.hits, t1, t2);
	}
	dnsnap_iter_t it;
	dnsnap_rr_t rr;
	if ((err = dnsnap_iter_init(&it, entry, len, k.name, k.name_len)) != DNSNAP_OK)
		return err;
	static const char *const json_sec[] = { "answer", "authority", "additional" };
	int sec_at = -1, n_in_sec = 0;
	while ((err = dnsnap_iter_next(&it, &rr)) == 1) {
		while (sec_at < (int)rr.section) {
			if (json)
				fprintf(f, "%s,\"%s\":[", sec_at >= 0 ? "]" : "", json_sec[sec_at + 1]);
			else
				fprintf(f, ";; %s\n", section_names[sec_at + 1]);
			sec_at++;
			n_in_sec = 0;
		}
		rr.ttl = rr.ttl > sub ? rr.ttl - sub : 0;
		char *s = rr_text(&rr);
		if (json) {
			fputs(n_in_sec++ ? "," : "", f);
			json_str(f, s ? s : "?");
		} else {
			fprintf(f, "%s\n", s ? s : "; (unreadable record)");
		}
		free(s);
	}
	while (sec_at < DNSNAP_SEC_ADDITIONAL) {
		if (json)
			fprintf(f, "%s,\"%s\":[", sec_at >= 0 ? "]" : "", json_sec[sec_at + 1]);
		else
			fprintf(f, ";; %s\n", section_names[sec_at + 1]);
		sec_at++;
	}
	if (json)
		fputs("]}\n", f);
	return err < 0 ? err : DNSNAP_OK;
}

int print_entry(FILE *f, const uint8_t *key, size_t key_len, const uint8_t *entry, size_t len)
{
	dnsnap_key_t k;
	dnsnap_hdr_t h;
	int err = decode_pair(key, key_len, entry, len, &k, &h);
	if (err != DNSNAP_OK)
		return err;
	char name[1024], type[32], cls[32], t1[32], t2[32];
	print_type(type, sizeof type, k.qtype);
	print_class(cls, sizeof cls, k.qclass);
	fprintf(f, "; key %s %s %s cd %d tag ", print_name(k.name, k.name_len, name, sizeof name),
		cls, type, !!(k.flags & DNSNAP_KF_CD));
	for (size_t i = 0; i < k.tag_len; i++)
		fprintf(f, "%02x", k.tag[i]);
	fprintf(f, "%s\n", k.tag_len ? "" : "-");
	ldns_lookup_table *rc = ldns_lookup_by_id(ldns_rcodes, (int)dnsnap_hdr_rcode(&h));
	fprintf(f, "; rcode %s kind %s auth %d dnssec %d hits %u\n", rc ? rc->name : "?",
		kind_names[dnsnap_hdr_kind(&h)], !!(h.flags & DNSNAP_EF_AUTH),
		!!(h.flags & DNSNAP_EF_DNSSEC), h.hits);
	fprintf(f, "; inception %u (%s) expiry %u (%s) ttl %u\n", h.inception,
		iso8601(h.inception, t1, sizeof t1), h.expiry, iso8601(h.expiry, t2, sizeof t2),
		h.expiry - h.inception);
	dnsnap_ede_t ede;
	for (unsigned i = 0; dnsnap_entry_ede(&h, i, &ede) == 1; i++)
		fprintf(f, "; ede %u \"%.*s\"\n", ede.code, (int)ede.text_len, (const char *)ede.text);

	dnsnap_iter_t it;
	dnsnap_rr_t rr;
	err = dnsnap_iter_init(&it, entry, len, k.name, k.name_len);
	if (err != DNSNAP_OK)
		return err;
	int sec = -1;
	while ((err = dnsnap_iter_next(&it, &rr)) == 1) {
		while (sec < (int)rr.section)
			fprintf(f, ";; %s SECTION:\n", section_names[++sec]);
		print_rr(f, &rr);
	}
	while (sec < DNSNAP_SEC_ADDITIONAL)
		fprintf(f, ";; %s SECTION:\n", section_names[++sec]);
	return err < 0 ? err : DNSNAP_OK;
}

static void hex(FILE *f, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%02x", i ? " " : "", p[i]);
}

/* One line of the layout: offset, bytes (wrapped at 16), what they are. */
static void field(FILE *f, size_t off, const uint8_t *p, size_t n, const char *what)
{
	fprintf(f, "  %04zx  ", off);
	size_t first = n < 16 ? n : 16;
	hex(f, p, first);
	fprintf(f, "%*s  %s\n", (int)(3 * (16 - first)), "", what);
	for (size_t i = 16; i < n; i += 16) {
		fprintf(f, "  %04zx  ", off + i);
		hex(f, p + i, n - i < 16 ? n - i : 16);
		fputc('\n', f);
	}
}

int print_layout(FILE *f, const uint8_t *key, size_t key_len, const uint8_t *entry, size_t len)
{
	dnsnap_key_t k;
	dnsnap_hdr_t h;
	int err = decode_pair(key, key_len, entry, len, &k, &h);
	if (err != DNSNAP_OK)
		return err;
	char buf[1200];
	size_t nl = k.name_len;
	fprintf(f, "key (%zu bytes)\n", key_len);
	field(f, 0, key, nl, "Name, labels reversed, lower case");
	field(f, nl, key + nl, 2, "Qtype");
	field(f, nl + 2, key + nl + 2, 2, "Qclass");
	field(f, nl + 4, key + nl + 4, 1, "Flags");
	field(f, nl + 5, key + nl + 5, 1, "Tag_Len");
	if (k.tag_len)
		field(f, nl + 6, key + nl + 6, k.tag_len, "Tag");
	fprintf(f, "entry (%zu bytes)\n", len);
	field(f, 0, entry, 4, "Inception");
	field(f, 4, entry + 4, 4, "Expiry");
	field(f, 8, entry + 8, 4, "Hits");
	snprintf(buf, sizeof buf, "Flags: rcode %u, kind %s%s%s%s", dnsnap_hdr_rcode(&h),
		 kind_names[dnsnap_hdr_kind(&h)], h.flags & DNSNAP_EF_AUTH ? ", AUTH" : "",
		 h.flags & DNSNAP_EF_DNSSEC ? ", DNSSEC" : "", h.flags & DNSNAP_EF_EXT ? ", EXT" : "");
	field(f, 12, entry + 12, 2, buf);
	field(f, 14, entry + 14, 2, "Auth_Off");
	field(f, 16, entry + 16, 2, "Addl_Off");
	if (h.ext) {
		field(f, 18, entry + 18, 2, "Ext_Len");
		field(f, 20, h.ext, h.ext_len, "Extensions (TLVs)");
	}
	dnsnap_iter_t it;
	dnsnap_rr_t rr;
	err = dnsnap_iter_init(&it, entry, len, k.name, k.name_len);
	if (err != DNSNAP_OK)
		return err;
	static const char *const modes[] = { "query name", "REF", "NAME", "TARGET" };
	while ((err = dnsnap_iter_next(&it, &rr)) == 1) {
		const uint8_t *r = entry + rr.offset;
		size_t total = 2 + (size_t)(r[0] | r[1] << 8);
		size_t hdrlen = (size_t)(rr.rdata - r);
		char type[32], name[1024];
		print_type(type, sizeof type, rr.type);
		if (r[2] & DNSNAP_RF_SAME)
			snprintf(buf, sizeof buf, "record %u: SAME (%s), header", rr.index, type);
		else
			snprintf(buf, sizeof buf, "record %u: %s %s, owner %s %s", rr.index,
				 section_names[rr.section], type, modes[rr.owner_mode],
				 print_name(rr.owner, rr.owner_len, name, sizeof name));
		field(f, rr.offset, r, hdrlen, buf);
		field(f, rr.offset + hdrlen, rr.rdata, total - hdrlen, "  rdata");
	}
	return err < 0 ? err : DNSNAP_OK;
}

int print_dns_message(FILE *f, const uint8_t *wire, size_t len, uint32_t when)
{
	ldns_pkt *pkt = NULL;
	if (ldns_wire2pkt(&pkt, wire, len) != LDNS_STATUS_OK)
		return DNSNAP_ERDATA;
	struct timeval tv = { .tv_sec = (time_t)when };
	ldns_pkt_set_timestamp(pkt, tv);
	ldns_pkt_set_size(pkt, len);
	ldns_pkt_print(f, pkt);
	ldns_pkt_free(pkt);
	return DNSNAP_OK;
}

long make_query(const char *name, const char *type, const char *rclass, int dnssec,
		uint8_t *out, size_t cap, const char **why)
{
	ldns_rdf *dn = ldns_dname_new_frm_str(name);
	if (dn == NULL || ldns_rdf_size(dn) > DNSNAP_NAME_MAX) {
		ldns_rdf_deep_free(dn);
		*why = "not a valid domain name";
		return -1;
	}
	uint16_t t = (uint16_t)ldns_get_rr_type_by_name(type);
	uint16_t c = (uint16_t)ldns_get_rr_class_by_name(rclass);
	if (t == 0 || c == 0) {
		ldns_rdf_deep_free(dn);
		*why = t == 0 ? "unknown type name" : "unknown class name";
		return -1;
	}
	size_t nl = ldns_rdf_size(dn), n = 0;
	if (cap < 12 + nl + 4 + 11) {
		ldns_rdf_deep_free(dn);
		*why = "buffer too small";
		return -1;
	}
	static const uint8_t hdr[12] = { 0xd5, 0x5d, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0 };
	memcpy(out, hdr, 12);
	n = 12;
	memcpy(out + n, ldns_rdf_data(dn), nl);
	n += nl;
	ldns_rdf_deep_free(dn);
	out[n++] = (uint8_t)(t >> 8);
	out[n++] = (uint8_t)t;
	out[n++] = (uint8_t)(c >> 8);
	out[n++] = (uint8_t)c;
	out[11] = 1; /* ARCOUNT: the OPT */
	static const uint8_t opt[11] = { 0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0 };
	memcpy(out + n, opt, sizeof opt);
	if (dnssec)
		out[n + 7] = 0x80; /* DO */
	return (long)(n + sizeof opt);
}
