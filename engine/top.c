/*
 * top.c: the most hit keys (dnsnap_top_t, dnsnap.h): a bounded min-heap on
 * (Hits, then the larger key ranks lower), for export's top_n and the tool's
 * stats --top.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "dnsnap.h"

/* a ranks below b: fewer hits, or as many and a larger key */
static int below(const dnsnap_top_item_t *a, const dnsnap_top_item_t *b)
{
	if (a->hits != b->hits)
		return a->hits < b->hits;
	return dnsnap_key_cmp(a->key, a->key_len, b->key, b->key_len) > 0;
}

static void swap(dnsnap_top_item_t *a, dnsnap_top_item_t *b)
{
	dnsnap_top_item_t x = *a;
	*a = *b;
	*b = x;
}

int dnsnap_top_init(dnsnap_top_t *t, size_t cap)
{
	*t = (dnsnap_top_t){ .cap = cap };
	if (cap > SIZE_MAX / sizeof *t->items)
		return DNSNAP_ENOMEM;
	if (cap > 0 && (t->items = dnsnap_malloc(cap * sizeof *t->items)) == NULL)
		return DNSNAP_ENOMEM;
	return DNSNAP_OK;
}

void dnsnap_top_add(dnsnap_top_t *t, const uint8_t *key, size_t key_len, uint32_t hits)
{
	if (t->cap == 0 || key_len > DNSNAP_KEY_MAX)
		return;
	dnsnap_top_item_t *h = t->items;
	size_t i;
	if (t->n < t->cap) {
		i = t->n++;
	} else {
		/* full: the new key replaces the lowest (the root) if it ranks above it */
		if (h[0].hits > hits || (h[0].hits == hits &&
					 dnsnap_key_cmp(h[0].key, h[0].key_len, key, key_len) <= 0))
			return;
		h[0].hits = hits;
		h[0].key_len = (uint16_t)key_len;
		memcpy(h[0].key, key, key_len);
		for (i = 0;;) { /* sift down */
			size_t l = 2 * i + 1, m = i;
			if (l < t->n && below(&h[l], &h[m]))
				m = l;
			if (l + 1 < t->n && below(&h[l + 1], &h[m]))
				m = l + 1;
			if (m == i)
				return;
			swap(&h[i], &h[m]);
			i = m;
		}
	}
	h[i].hits = hits;
	h[i].key_len = (uint16_t)key_len;
	memcpy(h[i].key, key, key_len);
	for (; i > 0 && below(&h[i], &h[(i - 1) / 2]); i = (i - 1) / 2) /* sift up */
		swap(&h[i], &h[(i - 1) / 2]);
}

static int rank_cmp(const void *a, const void *b)
{
	return below(a, b) ? 1 : below(b, a) ? -1 : 0;
}

void dnsnap_top_sort(dnsnap_top_t *t)
{
	if (t->n > 1)
		qsort(t->items, t->n, sizeof *t->items, rank_cmp);
}

void dnsnap_top_free(dnsnap_top_t *t)
{
	dnsnap_free(t->items);
	*t = (dnsnap_top_t){ 0 };
}
