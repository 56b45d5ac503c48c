/*
 * get: one answer from a snapshot, printed as a DNS message.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "print.h"

int cmd_get(int argc, char **argv)
{
	const char *path = NULL, *name = NULL, *type = "A", *rclass = "IN";
	int dnssec = 0, ntype = 0;
	uint8_t tag[DNSNAP_TAG_MAX];
	size_t tag_len = 0;
	unsigned long long now = (unsigned long long)time(NULL);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--do") == 0)
			dnssec = 1;
		else if (strcmp(argv[i], "--class") == 0 && i + 1 < argc)
			rclass = argv[++i];
		else if (strcmp(argv[i], "--tag") == 0 && i + 1 < argc) {
			if (hex_tag(argv[++i], tag, &tag_len) != 0)
				return fail("get", NULL, "--tag: not hex of at most 255 bytes: %s", argv[i]);
		} else if (strcmp(argv[i], "--now") == 0 && i + 1 < argc) {
			if (number("get", "--now", argv[++i], UINT32_MAX, &now))
				return EXIT_USAGE;
		} else if (argv[i][0] == '-' && argv[i][1] != 0)
			return fail("get", NULL, "unexpected argument: %s", argv[i]);
		else if (path == NULL)
			path = argv[i];
		else if (name == NULL)
			name = argv[i];
		else if (ntype++ == 0)
			type = argv[i];
		else
			return fail("get", NULL, "unexpected argument: %s", argv[i]);
	}
	if (path == NULL || name == NULL)
		return fail("get", NULL, "needs a snapshot and a name");
	uint8_t q[600], out[65535];
	const char *why = NULL;
	long ql = make_query(name, type, rclass, dnssec, q, sizeof q, &why);
	if (ql < 0)
		return fail("get", NULL, "%s %s %s: %s", name, type, rclass, why);
	dnsnap_query_t dq;
	dnsnap_diag_t d;
	int err = dnsnap_query_parse(q, (size_t)ql, tag_len ? tag : NULL, tag_len, &dq, &d);
	if (err != DNSNAP_OK)
		return fail("get", NULL, "%s: %s", name, d.msg);
	dnsnap_snap_t *s;
	if (open_snap("get", path, &s))
		return EXIT_USAGE;
	size_t n;
	err = dnsnap_snap_answer(s, &dq, (uint32_t)now, 65535, out, sizeof out, &n);
	uint64_t damaged = dnsnap_snap_bad_entries(s);
	dnsnap_snap_close(s);
	if (err == DNSNAP_ENOTFOUND && damaged)
		return fail("get", path, "%s %s %s: the entry is damaged (its Value_Check or layout "
			    "fails); run dnsnap verify", name, rclass, type);
	if (err == DNSNAP_ENOTFOUND) {
		fprintf(stderr, "dnsnap get: %s %s %s: not in %s (or expired)\n", name, rclass, type,
			path);
		return 1;
	}
	if (err != DNSNAP_OK)
		return fail("get", path, "%s", dnsnap_strerror(err));
	return print_dns_message(stdout, out, n, (uint32_t)now) == DNSNAP_OK ? 0 : EXIT_USAGE;
}
