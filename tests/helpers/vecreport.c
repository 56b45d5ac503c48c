/*
 * vecreport.c: the library's report of a snapshot or L2 value vector, in the
 * lines of its .err (vecreport.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vecreport.h"

static const char *name(int err)
{
	const char *n = dnsnap_errname(err);
	return n != NULL ? n : "?";
}

static int unhex(const char *h, uint8_t *out, size_t cap, size_t *len)
{
	size_t n = strlen(h);
	if (n % 2 != 0 || n / 2 > cap)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;
		if (sscanf(h + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	*len = n / 2;
	return 0;
}

static int count_one(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		     size_t entry_len)
{
	(void)arg, (void)key, (void)key_len, (void)entry, (void)entry_len;
	return 0;
}

static void snap_lines(FILE *f, dnsnap_snap_t *s, const vecreport_key_t *keys, size_t nkeys)
{
	dnsnap_scan_stats_t st = { 0 };
	dnsnap_diag_t d = { 0 };
	int err = dnsnap_snap_scan(s, NULL, 0, count_one, NULL, &st, &d);
	if (err == DNSNAP_OK)
		fprintf(f, "scan DNSNAP_OK - entries %llu damaged %llu\n",
			(unsigned long long)st.entries, (unsigned long long)st.damaged);
	else
		fprintf(f, "scan %s %zu entries %llu damaged %llu\n", name(err), d.offset,
			(unsigned long long)st.entries, (unsigned long long)st.damaged);
	err = dnsnap_snap_verify(s, NULL, &d);
	if (err == DNSNAP_OK)
		fprintf(f, "verify DNSNAP_OK\n");
	else
		fprintf(f, "verify %s %zu %s\n", name(err), d.offset, d.msg);
	static uint8_t buf[DNSNAP_ENTRY_MAX];
	for (size_t i = 0; i < nkeys; i++) {
		uint8_t key[DNSNAP_KEY_MAX];
		size_t kl, vl;
		if (unhex(keys[i], key, sizeof key, &kl) != 0 || kl == 0) {
			fprintf(f, "get %s ?\n", keys[i]);
			continue;
		}
		uint64_t bad = dnsnap_snap_bad_entries(s);
		err = dnsnap_snap_get(s, key, kl, buf, sizeof buf, &vl);
		fprintf(f, "get %s %s\n", keys[i],
			err == DNSNAP_OK ? "found"
			: dnsnap_snap_bad_entries(s) != bad ? "damaged"
			: err == DNSNAP_ENOTFOUND ? "miss" : name(err));
	}
}

void vecreport_snap(const char *path, const vecreport_key_t *keys, size_t nkeys, char *out,
		    size_t cap)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (f == NULL) {
		snprintf(out, cap, "? out of memory\n");
		return;
	}
	dnsnap_snap_t *s;
	dnsnap_diag_t d = { 0 };
	int err = dnsnap_snap_open(path, &s, &d);
	if (err != DNSNAP_OK) {
		fprintf(f, "open %s %zu %s\n", name(err), d.offset, d.msg);
	} else {
		fprintf(f, "open DNSNAP_OK\n");
		snap_lines(f, s, keys, nkeys);
		dnsnap_snap_close(s);
	}
	fclose(f);
	snprintf(out, cap, "%s", text);
	free(text);
}

size_t vecreport_keys(const char *err, vecreport_key_t *keys, size_t max)
{
	size_t n = 0;
	for (const char *l = err; l != NULL && *l != 0 && n < max;) {
		if (strncmp(l, "get ", 4) == 0) {
			size_t k = strcspn(l + 4, " \n");
			if (k < sizeof keys[0]) {
				memcpy(keys[n], l + 4, k);
				keys[n++][k] = 0;
			}
		}
		l = strchr(l, '\n');
		if (l != NULL)
			l++;
	}
	return n;
}

void vecreport_l2(const uint8_t *file, size_t len, char *out, size_t cap)
{
	size_t kl = len >= 2 ? (size_t)(file[0] | file[1] << 8) : 0;
	if (len < 2 || kl == 0 || kl > len - 2) {
		snprintf(out, cap, "? not an L2 value vector\n");
		return;
	}
	const uint8_t *entry;
	size_t entry_len;
	dnsnap_diag_t d = { 0 };
	int err = dnsnap_l2_value_open(file + 2, kl, file + 2 + kl, len - 2 - kl, &entry,
				       &entry_len, &d);
	if (err == DNSNAP_OK)
		snprintf(out, cap, "DNSNAP_OK\n");
	else
		snprintf(out, cap, "%s %zu\n", name(err), d.offset);
}

/* The next line of *p (without its newline) into @p line; 0 at the end. */
static int next_line(const char **p, char *line, size_t cap)
{
	if (**p == 0)
		return 0;
	size_t n = strcspn(*p, "\n");
	snprintf(line, cap, "%.*s", (int)n, *p);
	*p += n + ((*p)[n] == '\n');
	return 1;
}

/* The rest of @p line after its first @p words words (and the spaces after). */
static const char *after_words(const char *line, int words)
{
	while (words-- > 0) {
		line += strcspn(line, " ");
		line += strspn(line, " ");
	}
	return line;
}

static int lines_agree(const char *w, const char *g)
{
	int texted = (strncmp(w, "open ", 5) == 0 || strncmp(w, "verify ", 7) == 0) &&
		     strcmp(after_words(w, 1), "DNSNAP_OK") != 0;
	if (!texted)
		return strcmp(w, g) == 0;
	const char *wt = after_words(w, 3), *gt = after_words(g, 3);
	size_t wl = (size_t)(wt - w), gl = (size_t)(gt - g);
	/* the words before the text: "open CODE OFFSET" */
	while (wl > 0 && w[wl - 1] == ' ')
		wl--;
	while (gl > 0 && g[gl - 1] == ' ')
		gl--;
	return wl == gl && memcmp(w, g, wl) == 0 && strstr(gt, wt) != NULL;
}

int vecreport_compare(const char *want, const char *got, char *why, size_t cap)
{
	static char w[VECREPORT_MAX], g[VECREPORT_MAX];
	for (int n = 1;; n++) {
		int hw = next_line(&want, w, sizeof w), hg = next_line(&got, g, sizeof g);
		if (!hw && !hg)
			return 0;
		if (!hw || !hg || !lines_agree(w, g)) {
			snprintf(why, cap, "line %d: expected \"%s\", the library says \"%s\"", n,
				 hw ? w : "(nothing)", hg ? g : "(nothing)");
			return 1;
		}
	}
}
