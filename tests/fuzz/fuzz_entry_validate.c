/*
 * fuzz_entry_validate: arbitrary bytes as a key and an entry read from outside
 * the process.
 *
 * Input: the vector framing of spec/vectors (Key_Len u16 LE | Key | Entry),
 * and, independently, the whole input as a raw entry. Decoders must not crash
 * and must report known codes with offsets inside their input. When an entry
 * validates, iterating all its records (with the key's name as the query
 * name) and reading all its EDE options must succeed. The iterator and the
 * EDE reader also run on entries that do not validate: they check what they
 * read, so they may fail there, but must not crash.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dnsnap_format.h"
#include "guard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what, int rc, size_t off)
{
	const char *name = dnsnap_errname(rc);
	fprintf(stderr, "fuzz_entry_validate: %s: %s (%d) at %zu\n", what, name ? name : "?", rc,
		off);
	abort();
}

static void check_code(const char *what, int rc, const dnsnap_diag_t *d, size_t len)
{
	if (rc > 0 || dnsnap_errname(rc) == NULL)
		die(what, rc, d->offset);
	if (rc != DNSNAP_OK && d->offset > len)
		die("diag offset past the input", rc, d->offset);
}

/* Walk every record; returns the iterator's final code (0 at the end). */
static int walk(const uint8_t *e, size_t len, const uint8_t *qname, size_t qname_len,
		int must_succeed)
{
	dnsnap_iter_t it;
	int rc = dnsnap_iter_init(&it, e, len, qname, qname_len);
	if (rc != DNSNAP_OK) {
		if (must_succeed)
			die("iter_init on a valid entry", rc, 0);
		return rc;
	}
	dnsnap_rr_t rr;
	unsigned n = 0;
	while ((rc = dnsnap_iter_next(&it, &rr)) == 1) {
		if (rr.owner == NULL || rr.owner_len == 0 || rr.owner_len > DNSNAP_NAME_MAX)
			die("bad owner from the iterator", 0, rr.offset);
		if (rr.offset >= len ||
		    (rr.rdlen > 0 && (rr.rdata < e || rr.rdata + rr.rdlen > e + len)))
			die("record outside the entry", 0, rr.offset);
		if (must_succeed) {
			if (dnsnap_name_len(rr.owner, rr.owner_len) != (int)rr.owner_len)
				die("owner of a valid entry is not a valid name", 0, rr.offset);
			if (rr.index != n)
				die("record index", 0, rr.offset);
		}
		n++;
		if (n > 65536)
			die("iterator does not end", 0, rr.offset);
	}
	if (rc > 1)
		die("iterator returned a positive code", rc, 0);
	if (rc < 0) {
		if (must_succeed)
			die("iterating a valid entry", rc, it.err_off);
		/* sticky */
		if (dnsnap_iter_next(&it, &rr) != rc)
			die("iterator error is not sticky", rc, it.err_off);
	}
	return rc;
}

static void read_ede(const uint8_t *e, size_t len, int must_succeed)
{
	dnsnap_hdr_t h;
	dnsnap_diag_t d = { 0 };
	int rc = dnsnap_entry_header(e, len, &h, &d);
	check_code("entry_header", rc, &d, len);
	if (rc != DNSNAP_OK) {
		if (must_succeed)
			die("header of a valid entry", rc, d.offset);
		return;
	}
	dnsnap_ede_t x;
	for (unsigned i = 0; i < 70000; i++) {
		rc = dnsnap_entry_ede(&h, i, &x);
		if (rc == 0)
			return;
		if (rc < 0) {
			if (must_succeed)
				die("reading EDE options of a valid entry", rc, 0);
			return;
		}
		if (rc != 1)
			die("entry_ede returned a positive code", rc, 0);
		if (x.text_len > 0 && (x.text < e || x.text + x.text_len > e + len))
			die("EDE text outside the entry", 0, 0);
	}
	die("EDE options do not end", 0, 0);
}

static void check_entry(const uint8_t *data, size_t len, const uint8_t *qname, size_t qname_len)
{
	uint8_t *e = heap_copy(data, len);
	dnsnap_diag_t d = { 0 };
	int rc = dnsnap_entry_validate(e, len, &d);
	check_code("entry_validate", rc, &d, len);
	int ok = rc == DNSNAP_OK;
	walk(e, len, qname, qname_len, ok);
	read_ede(e, len, ok);
	free(e);
}

static const uint8_t default_qname[] = {
	7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (data == NULL)
		return 0;

	/* framed: Key_Len u16 LE | Key | Entry */
	if (size >= 2) {
		size_t kl = (size_t)data[0] | (size_t)data[1] << 8;
		if (kl <= size - 2) {
			uint8_t *key = heap_copy(data + 2, kl);
			dnsnap_key_t k;
			dnsnap_diag_t d = { 0 };
			int rc = dnsnap_key_decode(key, kl, &k, &d);
			check_code("key_decode", rc, &d, kl);
			if (rc == DNSNAP_OK) {
				if (k.name_len == 0 || k.name_len > DNSNAP_NAME_MAX ||
				    dnsnap_name_len(k.name, k.name_len) != (int)k.name_len)
					die("decoded key name is not a valid name", 0, 0);
				if (k.tag_len > 0 && (k.tag < key || k.tag + k.tag_len > key + kl))
					die("tag outside the key", 0, 0);
				check_entry(data + 2 + kl, size - 2 - kl, k.name, k.name_len);
			} else {
				check_entry(data + 2 + kl, size - 2 - kl, default_qname,
					    sizeof default_qname);
			}
			free(key);
		}
	}

	/* the whole input as a raw entry */
	check_entry(data, size, default_qname, sizeof default_qname);
	return 0;
}
