/*
 * fuzz_l2_url: arbitrary bytes as a --l2, --from or --to URL (a C string: the
 * input up to its first NUL) -> dnsnap__l2_url_parse() and
 * dnsnap_l2_url_check(), which must agree; the prefix form of SCAN MATCH
 * (dnsnap__l2_match_pattern()) and the cluster slot of the same bytes.
 *
 * Nothing may read outside its input (ASan); a URL taken must be what the
 * client relies on: a kind, 1 to 16 addresses, each a NUL-terminated host
 * within L2_HOST_MAX and a port 1 to 65535 (0 only for a Unix socket, whose
 * path is absolute), a database only outside a cluster; a refused one says
 * why and never echoes a password (a URL with '@').
 *
 * Seeds: tests/fuzz/seeds/fuzz_l2_url.
 *
 * Link: engine/l2 and hiredis.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l2_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what)
{
	fprintf(stderr, "fuzz_l2_url: %s\n", what);
	abort();
}

static void check_url(const struct l2_url *u)
{
	if (u->n < 1 || u->n > L2_SEEDS_MAX || (u->kind != L2_URL_CLUSTER && u->n != 1))
		die("the number of addresses");
	if (u->kind == L2_URL_CLUSTER && u->db != 0)
		die("a cluster with a database");
	for (unsigned i = 0; i < u->n; i++) {
		const struct l2_addr *a = &u->addr[i];
		size_t n = strnlen(a->host, sizeof a->host);
		if (n == 0 || n == sizeof a->host)
			die("a host empty or without its NUL");
		if (u->kind == L2_URL_UNIX ? a->port != 0 || a->host[0] != '/'
					   : a->port < 1 || a->port > 65535)
			die("a port, or a socket's path");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *url = malloc(size + 1), err[256], pat[2 * DNSNAP_L2_PREFIX_MAX + 2];
	struct l2_url u;
	if (url == NULL)
		return 0;
	memcpy(url, data, size);
	url[size] = '\0';
	err[0] = '\0';
	int rc = dnsnap__l2_url_parse(url, &u, err, sizeof err);
	if (rc == 0)
		check_url(&u);
	else if (rc != -1 || err[0] == '\0')
		die("a refusal without its reason");
	if (strchr(url, '@') && (rc == 0 || strstr(err, url) != NULL))
		die("a URL with a user or password taken, or echoed");
	if ((dnsnap_l2_url_check(url, err, sizeof err) == DNSNAP_OK) != (rc == 0))
		die("dnsnap_l2_url_check() disagrees with the parser");
	size_t plen = size < DNSNAP_L2_PREFIX_MAX ? size : DNSNAP_L2_PREFIX_MAX;
	size_t n = dnsnap__l2_match_pattern(url, plen, pat, sizeof pat);
	if (n == 0 || pat[n - 1] != '*' || pat[n] != '\0' || n > 2 * plen + 1)
		die("SCAN's pattern");
	if (dnsnap_l2_key_slot(data, size) >= L2_SLOTS)
		die("a slot out of range");
	free(url);
	return 0;
}
