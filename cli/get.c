/*
 * get: one answer from a snapshot, printed as dig prints it (or as RFC 8427
 * JSON), so that what scripts read from dig they read from get.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "cli.h"
#include "print.h"

enum { GET_DO = 0x100, GET_CLASS, GET_TAG, GET_NOW, GET_JSON };

/*
 * The entry under the query's key, which dnsnap_snap_answer() refused
 * though it is whole: refused by the time rule at --now. Judged again at
 * the clock (or --now when later: rule_now()): refused there too, *refused
 * is set (diag says why); else --now lies before its inception and it is
 * answered as dnsnap_snap_answer() answers (the default policy), with its
 * whole TTLs. @return DNSNAP_OK (answered), DNSNAP_ENOTFOUND
 */
static int time_refused(const dnsnap_query_t *q, const uint8_t *entry, size_t len, uint32_t now,
			uint8_t *out, size_t cap, size_t *n, dnsnap_diag_t *d, int *refused)
{
	if (dnsnap_entry_check_time(entry, len, NULL, now, d) == DNSNAP_OK)
		return DNSNAP_ENOTFOUND; /* not the time rule: expired */
	if (dnsnap_entry_check_time(entry, len, NULL, rule_now(now, (uint32_t)time(NULL)), d) !=
	    DNSNAP_OK) {
		*refused = 1;
		return DNSNAP_ENOTFOUND;
	}
	if ((int32_t)(entry_expiry(entry) - now) <= 0)
		return DNSNAP_ENOTFOUND;
	dnsnap_answer_opts_t ao = { .now = now, .max_size = 65535, .our_udp_size = 1232,
				    .max_ttl = 86400 };
	return dnsnap_answer_build(q, entry, len, &ao, out, cap, n);
}

int cmd_get(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "do", no_argument, NULL, GET_DO },
		{ "class", required_argument, NULL, GET_CLASS },
		{ "tag", required_argument, NULL, GET_TAG },
		{ "now", required_argument, NULL, GET_NOW },
		{ "json", no_argument, NULL, GET_JSON },
		{ NULL, 0, NULL, 0 },
	};
	const char *rclass = "IN", *type = "A";
	int dnssec = 0, json = 0, c;
	uint8_t tag[DNSNAP_TAG_MAX];
	size_t tag_len = 0;
	uint32_t now = (uint32_t)time(NULL);
	while ((c = opt_next("get", argc, argv, "", longopts)) != -1) {
		switch (c) {
		case GET_DO:
			dnssec = 1;
			break;
		case GET_CLASS:
			rclass = optarg;
			break;
		case GET_TAG:
			if (hex_tag(optarg, tag, &tag_len) != 0)
				return fail("get", NULL, "--tag: not hex of at most 255 bytes: %s",
					    optarg);
			break;
		case GET_NOW:
			if (time_arg("get", "--now", optarg, &now))
				return EXIT_USAGE;
			break;
		case GET_JSON:
			json = 1;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	int n_ops = opt_operands("get", argc, argv, 2, 3, "a snapshot and a name");
	if (n_ops < 0)
		return EXIT_USAGE;
	const char *path = argv[optind], *name = argv[optind + 1];
	if (n_ops == 3)
		type = argv[optind + 2];
	uint8_t q[600], out[65535];
	const char *why = NULL;
	long ql = make_query(name, type, rclass, dnssec, q, sizeof q, &why);
	if (ql < 0 && strncmp(why, "unknown ", 8) == 0) /* the type or the class, alone */
		return fail("get", NULL, "%s: %s", why[8] == 't' ? type : rclass, why);
	if (ql < 0)
		return fail("get", NULL, "%s %s %s: %s", name, rclass, type, why);
	/* a random ID, as dig's: the answer echoes it */
	if (getrandom(q, 2, 0) != 2)
		q[0] ^= (uint8_t)now, q[1] ^= (uint8_t)(now >> 8);
	dnsnap_query_t dq;
	dnsnap_diag_t d;
	int err = dnsnap_query_parse(q, (size_t)ql, tag_len ? tag : NULL, tag_len, &dq, &d);
	if (err != DNSNAP_OK)
		return fail("get", NULL, "%s: %s", name, d.msg);
	dnsnap_snap_t *s;
	if (open_snap("get", path, &s))
		return EXIT_USAGE;
	size_t n;
	err = dnsnap_snap_answer(s, &dq, now, 65535, out, sizeof out, &n);
	/* an entry cached after --now is answered with its whole TTLs: said so */
	char note[96] = "";
	static uint8_t entry[DNSNAP_ENTRY_MAX];
	size_t elen;
	dnsnap_hdr_t h;
	int refused = 0;
	if (err == DNSNAP_ENOTFOUND && dnsnap_snap_bad_entries(s) != 0 &&
	    dnsnap_snap_get(s, dq.key, dq.key_len, entry, sizeof entry, &elen) == DNSNAP_OK)
		err = time_refused(&dq, entry, elen, now, out, sizeof out, &n, &d, &refused);
	if (refused) {
		dnsnap_snap_close(s);
		return fail("get", path, "%s %s %s: refused by the time rule: %s; run dnsnap "
			    "verify", name, rclass, type, d.msg);
	}
	if (err == DNSNAP_OK &&
	    dnsnap_snap_get(s, dq.key, dq.key_len, entry, sizeof entry, &elen) == DNSNAP_OK &&
	    dnsnap_entry_header(entry, elen, &h, NULL) == DNSNAP_OK &&
	    (int32_t)(now - h.inception) < 0) {
		char t[21];
		time_iso(h.inception, t);
		snprintf(note, sizeof note, "not yet cached at --now (inception %s): whole TTLs",
			 t);
	}
	uint64_t damaged = dnsnap_snap_bad_entries(s);
	dnsnap_snap_close(s);
	if (err == DNSNAP_ENOTFOUND && damaged)
		return fail("get", path, "%s %s %s: the entry is damaged (its Value_Check or "
			    "layout fails); run dnsnap verify", name, rclass, type);
	if (err == DNSNAP_ENOTFOUND) {
		fprintf(stderr, "dnsnap get: %s: %s %s %s: not in the snapshot (or expired)\n",
			path, name, rclass, type);
		return EXIT_NONE;
	}
	if (err != DNSNAP_OK)
		return fail("get", path, "%s", dnsnap_strerror(err));
	if (json && note[0])
		fprintf(stderr, "dnsnap get: %s: %s %s %s: %s\n", path, name, rclass, type, note);
	err = json ? print_dns_json(stdout, out, n)
		   : print_dns_message_note(stdout, out, n, now, note[0] ? note : NULL);
	if (err != DNSNAP_OK)
		return fail("get", path, "%s %s %s: the answer made is not a message ldns reads",
			    name, rclass, type);
	return EXIT_FOUND;
}
