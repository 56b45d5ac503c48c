/*
 * stats.c: `dnsnap stats`: one walk over a snapshot, counting entries by
 * query type, rcode, kind (answer, NXDOMAIN, NODATA, referral), DNSSEC and
 * tag; histograms of records per entry, entry size and remaining TTL; and
 * the entries with the most hits (dnsnap_top_t, the library's), those never hit left out.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "json.h"
#include "print.h"

#define TAGS_SHOWN 20

/* dump's words (the entry line's "kind"), as its man page lists them */
static const char *const kind_names[] = { "ANSWER", "NXDOMAIN", "NODATA", "REFERRAL" };

/* Histogram buckets: upper bounds (inclusive), the last is open. */
static const uint64_t rec_bounds[] = { 0, 1, 2, 3, 4, 8, 16, 32 };
static const uint64_t size_bounds[] = { 64, 128, 256, 512, 1024, 4096 };
static const uint64_t ttl_bounds[] = { 0, 60, 300, 3600, 86400, 604800 };
#define NB(a) (sizeof a / sizeof a[0])

typedef struct tagc {
	size_t len;
	uint8_t tag[DNSNAP_TAG_MAX];
	uint64_t n;
} tagc_t;

typedef struct st {
	uint32_t now;
	uint64_t entries, live, dnssec, bytes, records, bad;
	uint64_t stale;          /* of the expired, those still servable stale */
	uint64_t early;          /* not yet cached at now: inception after it */
	uint64_t by_type[65536];
	uint64_t by_rcode[16], by_kind[4];
	uint64_t h_rec[NB(rec_bounds) + 1], h_size[NB(size_bounds) + 1], h_ttl[NB(ttl_bounds) + 1];
	tagc_t *tags;            /* distinct tags, in order of first sight */
	size_t ntags, tags_cap;
	uint32_t *slot;          /* open addressing: 1 + index into tags, 0 = empty */
	size_t nslots;           /* a power of two, at least twice ntags */
	dnsnap_top_t top;              /* the most hit, hits > 0 only */
	int oom;
} st_t;

static size_t bucket(const uint64_t *b, size_t n, uint64_t v)
{
	size_t i = 0;
	while (i < n && v > b[i])
		i++;
	return i;
}

static size_t tag_hash(const uint8_t *tag, size_t len)
{
	uint64_t h = 14695981039346656037ull; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ tag[i]) * 1099511628211ull;
	return (size_t)(h ^ len);
}

/* Count a tag: ECS-scoped caches can hold very many distinct tags. */
static void tag_add(st_t *s, const uint8_t *tag, size_t len)
{
	size_t m = s->nslots - 1, i = tag_hash(tag, len) & m;
	for (; s->slot[i] != 0; i = (i + 1) & m) {
		tagc_t *t = &s->tags[s->slot[i] - 1];
		if (t->len == len && (len == 0 || memcmp(t->tag, tag, len) == 0)) {
			t->n++;
			return;
		}
	}
	if (s->ntags == s->tags_cap) {
		size_t cap = s->tags_cap * 2;
		tagc_t *t = realloc(s->tags, cap * sizeof *t);
		uint32_t *sl = calloc(cap * 2, sizeof *sl);
		if (t == NULL || sl == NULL || cap > UINT32_MAX / 2) {
			if (t != NULL)
				s->tags = t;
			free(sl);
			s->oom = 1;
			return;
		}
		s->tags = t;
		s->tags_cap = cap;
		free(s->slot);
		s->slot = sl;
		s->nslots = cap * 2;
		m = s->nslots - 1;
		for (size_t k = 0; k < s->ntags; k++) { /* rehash */
			size_t j = tag_hash(t[k].tag, t[k].len) & m;
			while (sl[j] != 0)
				j = (j + 1) & m;
			sl[j] = (uint32_t)k + 1;
		}
		for (i = tag_hash(tag, len) & m; sl[i] != 0; i = (i + 1) & m)
			;
	}
	tagc_t *t = &s->tags[s->ntags++];
	t->len = len;
	if (len > 0) /* a key without a tag has tag NULL */
		memcpy(t->tag, tag, len);
	t->n = 1;
	s->slot[i] = (uint32_t)s->ntags;
}

static int stat_one(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		    size_t entry_len)
{
	st_t *s = arg;
	dnsnap_key_t k;
	dnsnap_hdr_t h;
	/* the scan checked the key and the entry */
	if (dnsnap_key_decode(key, key_len, &k, NULL) != DNSNAP_OK ||
	    dnsnap_entry_header(entry, entry_len, &h, NULL) != DNSNAP_OK)
		return 0;
	dnsnap_iter_t it;
	dnsnap_rr_t rr;
	uint64_t nrec = 0;
	if (dnsnap_iter_init(&it, entry, entry_len, k.name, k.name_len) == DNSNAP_OK)
		while (dnsnap_iter_next(&it, &rr) == 1)
			nrec++;
	int32_t left = (int32_t)(h.expiry - s->now);
	/* before its inception an entry is not yet cached: its whole TTL, as
	 * dump shows it, not the time from now to its expiry */
	if ((int32_t)(s->now - h.inception) < 0) {
		s->early++;
		left = (int32_t)(h.expiry - h.inception);
	}
	s->entries++;
	s->live += (int32_t)(h.expiry - s->now) > 0;
	s->stale += entry_state(h.expiry, s->now) == ENTRY_STALE;
	s->dnssec += (h.flags & DNSNAP_EF_DNSSEC) != 0;
	s->bytes += key_len + entry_len;
	s->records += nrec;
	s->by_type[k.qtype]++;
	s->by_rcode[dnsnap_hdr_rcode(&h)]++;
	s->by_kind[dnsnap_hdr_kind(&h)]++;
	s->h_rec[bucket(rec_bounds, NB(rec_bounds), nrec)]++;
	s->h_size[bucket(size_bounds, NB(size_bounds), key_len + entry_len)]++;
	s->h_ttl[bucket(ttl_bounds, NB(ttl_bounds), left > 0 ? (uint64_t)left : 0)]++;
	tag_add(s, k.tag, k.tag_len);
	if (h.hits > 0) /* an entry never hit is no "most hit" */
		dnsnap_top_add(&s->top, key, key_len, h.hits);
	return 0;
}

/* A tag in hex, "" when untagged (dump's JSON; its text says "-") */
static void tag_hex(const tagc_t *t, char *out)
{
	out[0] = 0;
	for (size_t i = 0; i < t->len; i++)
		sprintf(out + 2 * i, "%02x", t->tag[i]);
}

static int tag_cmp(const void *a, const void *b)
{
	const tagc_t *x = a, *y = b;
	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return memcmp(x->tag, y->tag, x->len);
}

/* The label of histogram bucket i: "1", "5-8", "33+", "<=64" ... */
static void bucket_label(const uint64_t *b, size_t n, size_t i, char *out, size_t cap)
{
	uint64_t lo = i == 0 ? 0 : b[i - 1] + 1;
	if (b == ttl_bounds && i == 0)
		snprintf(out, cap, "expired");
	else if (i == n)
		snprintf(out, cap, "%llu+", (unsigned long long)lo);
	else if (lo == b[i])
		snprintf(out, cap, "%llu", (unsigned long long)lo);
	else
		snprintf(out, cap, "%llu-%llu", (unsigned long long)lo, (unsigned long long)b[i]);
}

static void hist_text(const char *title, const char *unit, const uint64_t *b, size_t n,
		      const uint64_t *h, uint64_t total)
{
	char label[48];
	printf("\n%s:\n", title);
	for (size_t i = 0; i <= n; i++) {
		bucket_label(b, n, i, label, sizeof label);
		int bar = total ? (int)(40 * h[i] / total) : 0;
		printf("  %12s %-5s %10llu %5.1f%%  %.*s\n", label,
		       b == ttl_bounds && i == 0 ? "" : unit, (unsigned long long)h[i],
		       total ? 100.0 * (double)h[i] / (double)total : 0.0, bar,
		       "########################################");
	}
}

static void hist_json(jw_t *j, const char *title, const uint64_t *b, size_t n, const uint64_t *h)
{
	char label[48];
	jw_key(j, title);
	jw_arr(j);
	for (size_t i = 0; i <= n; i++) {
		bucket_label(b, n, i, label, sizeof label);
		jw_obj(j);
		jw_kstr(j, "range", label);
		jw_ku64(j, "entries", h[i]);
		jw_end(j);
	}
	jw_end(j);
}

/* A top entry's name, type, CD bit and tag (hex, "" for none). @return 0 or -1 */
static int top_key(const dnsnap_top_item_t *t, char *nb, size_t nbcap, char tb[32], int *cd,
		   char *hex)
{
	dnsnap_key_t k;
	if (dnsnap_key_decode(t->key, t->key_len, &k, NULL) != DNSNAP_OK)
		return -1;
	print_name(k.name, k.name_len, nb, nbcap);
	print_type(tb, 32, k.qtype);
	*cd = (k.flags & DNSNAP_KF_CD) != 0;
	tagc_t tag = { .len = k.tag_len };
	if (k.tag_len > 0)
		memcpy(tag.tag, k.tag, k.tag_len);
	tag_hex(&tag, hex);
	return 0;
}

static void print_json(const st_t *s, const char *path)
{
	char tb[32], nb[DNSNAP_NAME_MAX * 4 + 8], hex[2 * DNSNAP_TAG_MAX + 1];
	jw_t j;
	jw_init(&j, stdout);
	jw_obj(&j);
	jw_kstr(&j, "file", path);
	jw_ku64(&j, "entries", s->entries);
	jw_ku64(&j, "live", s->live);
	jw_ku64(&j, "expired", s->entries - s->live);
	jw_ku64(&j, "stale", s->stale);
	jw_ku64(&j, "not_yet_cached", s->early);
	jw_ku64(&j, "records", s->records);
	jw_ku64(&j, "bytes", s->bytes);
	jw_ku64(&j, "dnssec", s->dnssec);
	jw_ku64(&j, "bad", s->bad);
	jw_key(&j, "by_kind");
	jw_obj(&j);
	for (int i = 0; i < 4; i++)
		jw_ku64(&j, kind_names[i], s->by_kind[i]);
	jw_end(&j);
	jw_key(&j, "by_type");
	jw_obj(&j);
	for (unsigned t = 0; t < 65536; t++)
		if (s->by_type[t]) {
			print_type(tb, sizeof tb, (uint16_t)t);
			jw_ku64(&j, tb, s->by_type[t]);
		}
	jw_end(&j);
	jw_key(&j, "by_rcode");
	jw_obj(&j);
	char rb[16];
	for (int r = 0; r < 16; r++)
		if (s->by_rcode[r])
			jw_ku64(&j, print_rcode(r, rb, sizeof rb), s->by_rcode[r]);
	jw_end(&j);
	jw_key(&j, "by_tag");
	jw_obj(&j);
	for (size_t i = 0; i < s->ntags; i++) {
		tag_hex(&s->tags[i], hex);
		jw_ku64(&j, hex, s->tags[i].n);
	}
	jw_end(&j);
	hist_json(&j, "records_per_entry", rec_bounds, NB(rec_bounds), s->h_rec);
	hist_json(&j, "entry_bytes", size_bounds, NB(size_bounds), s->h_size);
	hist_json(&j, "remaining_ttl", ttl_bounds, NB(ttl_bounds), s->h_ttl);
	jw_key(&j, "top");
	jw_arr(&j);
	for (size_t i = 0; i < s->top.n; i++) {
		int cd;
		if (top_key(&s->top.items[i], nb, sizeof nb, tb, &cd, hex) != 0)
			continue;
		jw_obj(&j);
		jw_ku64(&j, "hits", s->top.items[i].hits);
		jw_kstr(&j, "name", nb);
		jw_kstr(&j, "type", tb);
		jw_kbool(&j, "cd", cd);
		jw_kstr(&j, "tag", hex);
		jw_end(&j);
	}
	jw_end(&j);
	jw_end(&j);
	jw_nl(&j);
}

static void print_text(const st_t *s, const char *path)
{
	char tb[32], nb[DNSNAP_NAME_MAX * 4 + 8], hex[2 * DNSNAP_TAG_MAX + 1];
	double pct = s->entries ? 100.0 / (double)s->entries : 0;
	char stale[48] = "";
	if (s->stale > 0) /* of the expired, those a --serve-stale server may still serve */
		snprintf(stale, sizeof stale, ", %llu of them stale", (unsigned long long)s->stale);
	printf("%s: %llu %s (live %llu, expired %llu%s), %llu %s, %llu %s of keys and entries "
	       "(%.1f per entry)\n",
	       path, (unsigned long long)s->entries, plural(s->entries, "entry", "entries"),
	       (unsigned long long)s->live, (unsigned long long)(s->entries - s->live), stale,
	       (unsigned long long)s->records, plural(s->records, "record", "records"),
	       (unsigned long long)s->bytes, plural(s->bytes, "byte", "bytes"),
	       s->entries ? (double)s->bytes / (double)s->entries : 0.0);
	printf("\nby kind:\n");
	for (int i = 0; i < 4; i++)
		printf("  %-12s %10llu %5.1f%%\n", kind_names[i], (unsigned long long)s->by_kind[i],
		       (double)s->by_kind[i] * pct);
	printf("  %-12s %10llu %5.1f%%\n", "with DNSSEC", (unsigned long long)s->dnssec,
	       (double)s->dnssec * pct);
	printf("\nby query type:\n");
	for (unsigned t = 0; t < 65536; t++)
		if (s->by_type[t]) {
			print_type(tb, sizeof tb, (uint16_t)t);
			printf("  %-12s %10llu %5.1f%%\n", tb, (unsigned long long)s->by_type[t],
			       (double)s->by_type[t] * pct);
		}
	printf("\nby rcode:\n");
	char rb[16];
	for (int r = 0; r < 16; r++)
		if (s->by_rcode[r])
			printf("  %-12s %10llu %5.1f%%\n", print_rcode(r, rb, sizeof rb),
			       (unsigned long long)s->by_rcode[r], (double)s->by_rcode[r] * pct);
	printf("\nby tag:\n");
	for (size_t i = 0; i < s->ntags && i < TAGS_SHOWN; i++) {
		tag_hex(&s->tags[i], hex);
		printf("  %-12s %10llu %5.1f%%\n", hex[0] ? hex : "-", (unsigned long long)s->tags[i].n,
		       (double)s->tags[i].n * pct);
	}
	if (s->ntags > TAGS_SHOWN) {
		uint64_t rest = 0;
		for (size_t i = TAGS_SHOWN; i < s->ntags; i++)
			rest += s->tags[i].n;
		size_t more = s->ntags - TAGS_SHOWN;
		printf("  %zu more %s %10llu %5.1f%%\n", more, plural(more, "tag", "tags"),
		       (unsigned long long)rest, (double)rest * pct);
	}
	hist_text("records per entry", "", rec_bounds, NB(rec_bounds), s->h_rec, s->entries);
	hist_text("entry size (key + entry)", "bytes", size_bounds, NB(size_bounds), s->h_size,
		  s->entries);
	hist_text("remaining TTL", "s", ttl_bounds, NB(ttl_bounds), s->h_ttl, s->entries);
	if (s->early)
		printf("  %llu %s not yet cached at --now (counted with %s whole TTL)\n",
		       (unsigned long long)s->early, plural(s->early, "entry", "entries"),
		       plural(s->early, "its", "their"));
	if (s->top.cap > 0 && s->top.n == 0)
		printf("\nno entry has hits\n");
	else if (s->top.n > 0)
		printf("\ntop %zu by hits:\n", s->top.n);
	for (size_t i = 0; i < s->top.n; i++) {
		int cd;
		if (top_key(&s->top.items[i], nb, sizeof nb, tb, &cd, hex) != 0)
			continue;
		printf("  %10lu  %s %s%s%s%s\n", (unsigned long)s->top.items[i].hits, nb, tb,
		       cd ? " cd" : "", hex[0] ? " tag " : "", hex);
	}
	if (s->bad)
		printf("\n%llu damaged %s not counted (run dnsnap verify)\n",
		       (unsigned long long)s->bad, plural(s->bad, "entry", "entries"));
}

int cmd_stats(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "top", required_argument, NULL, 't' },
		{ "now", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	int json = 0, c;
	uint32_t now = (uint32_t)time(NULL);
	unsigned long long top = 10;
	while ((c = opt_next("stats", argc, argv, "", longopts)) != -1)
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 't':
			if (number("stats", "--top", optarg, 1000000, &top))
				return EXIT_USAGE;
			break;
		case 'n':
			if (time_arg("stats", "--now", optarg, &now))
				return EXIT_USAGE;
			break;
		default:
			return EXIT_USAGE;
		}
	if (opt_operands("stats", argc, argv, 1, 1, "a snapshot") < 0)
		return EXIT_USAGE;
	const char *path = argv[optind];
	int rc = 0;
	st_t *s = calloc(1, sizeof *s);
	if (s == NULL || dnsnap_top_init(&s->top, (size_t)top) != DNSNAP_OK) {
		free(s);
		return fail("stats", NULL, "out of memory");
	}
	s->now = now;
	s->tags_cap = 16;
	s->nslots = 32;
	s->tags = malloc(s->tags_cap * sizeof *s->tags);
	s->slot = calloc(s->nslots, sizeof *s->slot);
	if (s->tags == NULL || s->slot == NULL) {
		rc = fail("stats", NULL, "out of memory");
		goto out;
	}
	dnsnap_snap_t *snap;
	if (open_snap("stats", path, &snap)) {
		rc = EXIT_USAGE;
		goto out;
	}
	uint64_t damaged = 0;
	int walk = scan_snap("stats", snap, NULL, 0, stat_one, s, &damaged);
	dnsnap_snap_close(snap);
	if (s->oom || (walk != 0 && damaged == 0)) {
		rc = s->oom ? fail("stats", path, "out of memory") : EXIT_USAGE;
		goto out;
	}
	s->bad = damaged;
	qsort(s->tags, s->ntags, sizeof *s->tags, tag_cmp);
	dnsnap_top_sort(&s->top);
	if (json)
		print_json(s, path);
	else
		print_text(s, path);
	rc = damaged ? EXIT_USAGE : 0;
out:
	dnsnap_top_free(&s->top);
	free(s->tags);
	free(s->slot);
	free(s);
	return rc;
}
