/* wb.c: see wb.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wb.h"

static void room(const wb_t *w, size_t n)
{
	if (n > sizeof w->b - w->n) {
		fprintf(stderr, "wb: message over %zu bytes\n", sizeof w->b);
		abort();
	}
}

void put_u8(wb_t *w, unsigned v)
{
	room(w, 1);
	w->b[w->n++] = (uint8_t)v;
}

void put_u16(wb_t *w, unsigned v)
{
	put_u8(w, (v >> 8) & 0xff);
	put_u8(w, v & 0xff);
}

void put_u32(wb_t *w, uint32_t v)
{
	put_u16(w, v >> 16);
	put_u16(w, v & 0xffff);
}

void put_raw(wb_t *w, const void *p, size_t n)
{
	room(w, n);
	if (n)
		memcpy(w->b + w->n, p, n);
	w->n += n;
}

void set_u16(wb_t *w, size_t at, unsigned v)
{
	w->b[at] = (uint8_t)(v >> 8);
	w->b[at + 1] = (uint8_t)v;
}

void put_label(wb_t *w, unsigned len, char fill)
{
	put_u8(w, len);
	for (unsigned i = 0; i < len; i++)
		put_u8(w, (uint8_t)fill);
}

void put_labels(wb_t *w, const char *dotted)
{
	const char *s = dotted;
	while (*s != '\0' && strcmp(s, ".") != 0) {
		const char *dot = strchr(s, '.');
		size_t l = dot ? (size_t)(dot - s) : strlen(s);
		put_u8(w, (unsigned)l);
		put_raw(w, s, l);
		s += l;
		if (*s == '.')
			s++;
	}
}

void put_name(wb_t *w, const char *dotted)
{
	put_labels(w, dotted);
	put_u8(w, 0);
}

size_t wire_name(uint8_t *out, const char *dotted)
{
	size_t n = 0;
	for (const char *p = dotted; *p;) {
		const char *dot = strchr(p, '.');
		size_t l = dot ? (size_t)(dot - p) : strlen(p);
		out[n++] = (uint8_t)l;
		memcpy(out + n, p, l);
		n += l;
		p += l + (dot != NULL);
	}
	out[n++] = 0;
	return n;
}

void put_ptr(wb_t *w, size_t off)
{
	put_u16(w, 0xc000 | (unsigned)off);
}

void put_header(wb_t *w, unsigned flags, unsigned qd, unsigned an, unsigned ns, unsigned ar)
{
	w->n = 0;
	put_u16(w, 0x4a4a);
	put_u16(w, flags);
	put_u16(w, qd);
	put_u16(w, an);
	put_u16(w, ns);
	put_u16(w, ar);
}

size_t put_fixed(wb_t *w, unsigned type, unsigned rclass, uint32_t ttl)
{
	put_u16(w, type);
	put_u16(w, rclass);
	put_u32(w, ttl);
	size_t at = w->n;
	put_u16(w, 0);
	return at;
}

void end_rdata(wb_t *w, size_t rdlen_at)
{
	set_u16(w, rdlen_at, (unsigned)(w->n - rdlen_at - 2));
}
