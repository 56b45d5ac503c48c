/*
 * mkfuture: a snapshot as a host whose clock was wrong writes it, for the
 * time rule's CLI tests (issue 22, item 1): OUT holds future.example A
 * (192.0.2.6, TTL 3600) cached SECONDS after the clock, and good.example A
 * (192.0.2.7, TTL 3600) cached at the clock. The library takes the time as a
 * parameter: each is inserted into a cache of its own at its time, copied
 * out of a snapshot written then, and the two are written to OUT entry by
 * entry (dnsnap_snapw_t takes what it is given, as a copied file holds it).
 *
 *   mkfuture OUT SECONDS
 *
 * Exit status 0 on success, 1 on any error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ans.h"
#include "dnsnap.h"
#include "wb.h"

static dnsnap_encoded_t scratch;

struct two {
	uint8_t key[2][DNSNAP_KEY_MAX];
	uint8_t entry[2][DNSNAP_ENTRY_MAX];
	size_t key_len[2], entry_len[2];
	unsigned n;
};

static int take(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		size_t entry_len)
{
	struct two *t = arg;
	if (t->n == 2)
		return 1;
	memcpy(t->key[t->n], key, key_len);
	memcpy(t->entry[t->n], entry, entry_len);
	t->key_len[t->n] = key_len;
	t->entry_len[t->n++] = entry_len;
	return 0;
}

/* @p name / A inserted at @p now, read back out of a snapshot written then. */
static int one(const char *out, const char *name, unsigned octet, uint32_t now, struct two *t)
{
	char tmp[4200];
	snprintf(tmp, sizeof tmp, "%s.one", out);
	dnsnap_cache_t *c;
	wb_t w;
	dnsnap_snap_t *s;
	ans_response_a(&w, name, 3600, octet, 0);
	if (dnsnap_cache_new(NULL, &c) != DNSNAP_OK)
		return -1;
	int err = dnsnap_cache_insert(c, w.b, w.n, now, NULL, 0, &scratch, NULL);
	if (err == DNSNAP_OK)
		err = dnsnap_snap_write(c, tmp, now, NULL, NULL);
	dnsnap_cache_free(c);
	if (err == DNSNAP_OK && (err = dnsnap_snap_open(tmp, &s, NULL)) == DNSNAP_OK) {
		err = dnsnap_snap_foreach(s, take, t);
		dnsnap_snap_close(s);
	}
	remove(tmp);
	return err;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: mkfuture OUT SECONDS\n");
		return 1;
	}
	static struct two t;
	uint32_t clock = (uint32_t)time(NULL);
	uint32_t ahead = (uint32_t)strtoul(argv[2], NULL, 10);
	if (one(argv[1], "future.example", 6, clock + ahead, &t) != 0 ||
	    one(argv[1], "good.example", 7, clock, &t) != 0 || t.n != 2) {
		fprintf(stderr, "mkfuture: writing the entries failed\n");
		return 1;
	}
	int first = dnsnap_key_cmp(t.key[0], t.key_len[0], t.key[1], t.key_len[1]) < 0 ? 0 : 1;
	dnsnap_snapw_t *w;
	dnsnap_diag_t d;
	int err = dnsnap_snapw_begin(argv[1], &w, &d);
	for (int k = 0; k < 2 && err == DNSNAP_OK; k++) {
		int i = k == 0 ? first : 1 - first;
		err = dnsnap_snapw_add(w, t.key[i], t.key_len[i], t.entry[i], t.entry_len[i], &d);
	}
	if (err == DNSNAP_OK)
		err = dnsnap_snapw_commit(w, NULL, &d);
	else
		dnsnap_snapw_abort(w);
	if (err != DNSNAP_OK) {
		fprintf(stderr, "mkfuture: %s\n", d.msg);
		return 1;
	}
	return 0;
}
