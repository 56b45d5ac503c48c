/*
 * json.c: the one JSON writer (json.h says why our own).
 */
#include <string.h>

#include "json.h"

void jw_init(jw_t *j, FILE *f)
{
	memset(j, 0, sizeof *j);
	j->f = f;
}

/* before a value: the comma, unless it follows a key or opens a level */
static void before(jw_t *j)
{
	if (j->key) {
		j->key = 0;
		return;
	}
	if (j->depth > 0 && j->n[j->depth - 1]++ > 0)
		fputc(',', j->f);
}

static void open_level(jw_t *j, char open, char close)
{
	before(j);
	fputc(open, j->f);
	if (j->depth < JW_DEPTH) {
		j->n[j->depth] = 0;
		j->close[j->depth] = close;
	}
	j->depth++;
}

void jw_obj(jw_t *j) { open_level(j, '{', '}'); }
void jw_arr(jw_t *j) { open_level(j, '[', ']'); }

void jw_end(jw_t *j)
{
	if (j->depth == 0)
		return;
	j->depth--;
	fputc(j->depth < JW_DEPTH ? j->close[j->depth] : '}', j->f);
}

void jw_nl(jw_t *j)
{
	fputc('\n', j->f);
}

/* the length of the valid UTF-8 sequence at s (at most n bytes), or 0 */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;
	if (s[0] < 0xc2)
		return 0;
	else if (s[0] < 0xe0)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] < 0xf0)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] < 0xf5)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

void jw_escape(FILE *f, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	fputc('"', f);
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
		} else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c == '\r')
			fputs("\\r", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else if (c >= 0x80) {
			size_t l = utf8_len(s + i, n - i);
			if (l == 0) {
				fprintf(f, "\\u%04x", c);
			} else {
				fwrite(s + i, 1, l, f);
				i += l;
				continue;
			}
		} else
			fputc(c, f);
		i++;
	}
	fputc('"', f);
}

void jw_key(jw_t *j, const char *k)
{
	before(j);
	jw_escape(j->f, k, strlen(k));
	fputc(':', j->f);
	j->key = 1;
}

void jw_strn(jw_t *j, const char *s, size_t n)
{
	before(j);
	jw_escape(j->f, s, n);
}

void jw_str(jw_t *j, const char *s)
{
	if (s == NULL)
		jw_null(j);
	else
		jw_strn(j, s, strlen(s));
}

void jw_u64(jw_t *j, uint64_t v)
{
	before(j);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void jw_i64(jw_t *j, int64_t v)
{
	before(j);
	fprintf(j->f, "%lld", (long long)v);
}

void jw_dbl(jw_t *j, double v, int decimals)
{
	before(j);
	if (v != v || v > 1e300 || v < -1e300)
		fputs("null", j->f); /* JSON has no NaN or infinity */
	else
		fprintf(j->f, "%.*f", decimals, v);
}

void jw_bool(jw_t *j, int b)
{
	before(j);
	fputs(b ? "true" : "false", j->f);
}

void jw_null(jw_t *j)
{
	before(j);
	fputs("null", j->f);
}

void jw_kstr(jw_t *j, const char *k, const char *s) { jw_key(j, k), jw_str(j, s); }
void jw_ku64(jw_t *j, const char *k, uint64_t v) { jw_key(j, k), jw_u64(j, v); }
void jw_ki64(jw_t *j, const char *k, int64_t v) { jw_key(j, k), jw_i64(j, v); }
void jw_kdbl(jw_t *j, const char *k, double v, int d) { jw_key(j, k), jw_dbl(j, v, d); }
void jw_kbool(jw_t *j, const char *k, int b) { jw_key(j, k), jw_bool(j, b); }
