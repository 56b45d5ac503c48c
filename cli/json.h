/*
 * json.h: the one JSON writer every command's --json output goes through.
 *
 * Our own small streaming writer rather than jansson or json-c: dump and
 * diff write millions of objects, one per line, and a tree library would
 * build and free a tree for each; what we need of JSON is only writing it
 * right: commas, nesting and string escaping (RFC 8259). Strings are escaped
 * here and nowhere else:
 * - '"', '\\' and the control characters (U+0000 to U+001F, U+007F) as
 *   \", \\, \n, \t, ... or \u00XX;
 * - valid UTF-8 passes through; a byte that is not part of valid UTF-8 (a
 *   file name is any bytes) is written as \u00XX, its Latin-1 reading, so
 *   the output is always valid JSON.
 * DNS names and character-strings reach it already in presentation form
 * (print.h), which is ASCII.
 *
 * Usage: jw_init(&j, stdout); jw_obj(&j); jw_kstr(&j, "file", path);
 * jw_key(&j, "counts"); jw_obj(&j); ... jw_end(&j); jw_end(&j); jw_nl(&j);
 */
#ifndef DNSNAP_CLI_JSON_H
#define DNSNAP_CLI_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JW_DEPTH 32

typedef struct jw {
	FILE *f;
	int depth;
	int key;                   /* a key was written: the value follows it */
	uint64_t n[JW_DEPTH];      /* values written at each level */
	char close[JW_DEPTH];      /* '}' or ']' */
} jw_t;

void jw_init(jw_t *j, FILE *f);
void jw_obj(jw_t *j);          /* { */
void jw_arr(jw_t *j);          /* [ */
void jw_end(jw_t *j);          /* the innermost } or ] */
/** At the top level, after a whole value: a newline (JSON lines). */
void jw_nl(jw_t *j);

void jw_key(jw_t *j, const char *k);
void jw_str(jw_t *j, const char *s); /* NULL writes null */
void jw_strn(jw_t *j, const char *s, size_t n);
void jw_u64(jw_t *j, uint64_t v);
void jw_i64(jw_t *j, int64_t v);
void jw_dbl(jw_t *j, double v, int decimals);
void jw_bool(jw_t *j, int b);
void jw_null(jw_t *j);

/* A key and its value */
void jw_kstr(jw_t *j, const char *k, const char *s);
void jw_ku64(jw_t *j, const char *k, uint64_t v);
void jw_ki64(jw_t *j, const char *k, int64_t v);
void jw_kdbl(jw_t *j, const char *k, double v, int decimals);
void jw_kbool(jw_t *j, const char *k, int b);

/** Escape @p s (length @p n) as a JSON string's contents, quotes included. */
void jw_escape(FILE *f, const char *s, size_t n);

#endif
