/*
 * load.c: `dnsnap load SNAP INPUT...`: the DNS responses in captures and
 * framed files (capture.h), and the messages of Unbound's dump_cache text
 * (unbound.h, told by its first line), cached as a resolver would cache
 * them, merged with what SNAP already holds, published atomically.
 *
 * Every response is inserted under its question (the key of its QNAME,
 * QTYPE, QCLASS and CD bit, no tag) at --now, through the same cache code a
 * resolver embeds: the same TTL policy (defaults: capped at 1 day, negative
 * answers at 3 hours), the same refusals. Later responses for a key replace
 * earlier ones within a load. Then dnsnap_snap_merge(): a live entry of the
 * old SNAP stays unless the load brought a newer one for its key.
 *
 * The writers' lock (dnsnap_snap_lock()) is taken after the inputs are read,
 * before the old SNAP is opened as the base, and kept until the merge is
 * published: a purge or load of SNAP meanwhile is neither lost nor losing.
 *
 * Unusable messages are counted by reason and reported on stderr; they never
 * stop the load. An input that cannot be read at all stops it before
 * anything is written (a mistyped file name must not publish half a load).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "capture.h"
#include "cli.h"
#include "unbound.h"

#define REASONS_MAX 32

typedef struct load {
	dnsnap_cache_t *c;
	dnsnap_encoded_t *scratch;
	uint32_t now;
	uint64_t responses, used, queries;
	struct { const char *name; uint64_t n; } why[REASONS_MAX];
	size_t nwhy;
	int oom;
	const dnsnap_progress_t *pr; /* messages read, on a terminal */
	uint64_t seen;
} load_t;

static void count(load_t *l, const char *reason)
{
	for (size_t i = 0; i < l->nwhy; i++)
		if (strcmp(l->why[i].name, reason) == 0) {
			l->why[i].n++;
			return;
		}
	if (l->nwhy < REASONS_MAX) {
		l->why[l->nwhy].name = reason;
		l->why[l->nwhy++].n = 1;
	}
}

/* Why a response is not cacheable, in words an operator knows, from the
 * header (dnsnap_msg_encode() would refuse it too, with one code for all). */
static const char *header_refusal(const uint8_t *m)
{
	unsigned opcode = (m[2] >> 3) & 0xf, qd = (unsigned)(m[4] << 8 | m[5]);
	if (opcode != 0)
		return "opcode not QUERY";
	if (m[2] & 0x02)
		return "truncated (TC=1)";
	if (qd != 1)
		return "QDCOUNT not 1";
	return NULL;
}

/* Why a response past the header checks is not cached: an extended RCODE
 * (EDNS), or nothing with a TTL to keep it by; a SERVFAIL (or another error
 * rcode with no records) is named by its rcode, not taken for a TTL of 0. */
static const char *notcache_reason(const uint8_t *m, const dnsnap_diag_t *d)
{
	static const char *const rcode_reason[16] = {
		[1] = "FORMERR (not cached)", [2] = "SERVFAIL (not cached)",
		[4] = "NOTIMP (not cached)", [5] = "REFUSED (not cached)",
	};
	unsigned rcode = m[3] & 0xf;
	if (strncmp(d->msg, "extended RCODE", 14) == 0)
		return "extended RCODE (not cached)";
	if (rcode_reason[rcode] != NULL)
		return rcode_reason[rcode];
	if (rcode != 0 && rcode != 3)
		return "another error rcode (not cached)";
	return "TTL 0 (not cached)";
}

static int on_message(void *arg, const uint8_t *msg, size_t len, const capture_info_t *info)
{
	load_t *l = arg;
	(void)info;
	if (++l->seen % DNSNAP_PROGRESS_EVERY == 0 && l->pr != NULL)
		l->pr->fn(l->pr->arg, l->seen, 0);
	if ((msg[2] & 0x80) == 0) {
		l->queries++; /* a query: nothing to cache */
		return 0;
	}
	l->responses++;
	const char *why = header_refusal(msg);
	if (why != NULL) {
		count(l, why);
		return 0;
	}
	dnsnap_diag_t d;
	int err = dnsnap_cache_insert(l->c, msg, len, l->now, NULL, 0, l->scratch, &d);
	if (err == DNSNAP_OK) {
		l->used++;
		return 0;
	}
	if (err == DNSNAP_ENOMEM) {
		l->oom = 1;
		return 1;
	}
	/* the rest are malformed messages, or ENOTCACHE past the header checks */
	count(l, err == DNSNAP_ENOTCACHE ? notcache_reason(msg, &d)
					 : dnsnap_errname(err) ? dnsnap_errname(err) : "error");
	return 0;
}

static int on_unbound(void *arg, const uint8_t *msg, size_t len)
{
	return on_message(arg, msg, len, NULL);
}

static void report_unbound(const char *path, const unbound_stats_t *us)
{
	fprintf(stderr, "dnsnap load: %s: Unbound cache dump: %llu lines, %llu RRsets, %llu "
		"messages, %llu responses rebuilt", path, (unsigned long long)us->lines,
		(unsigned long long)us->rrsets, (unsigned long long)us->messages,
		(unsigned long long)us->responses);
	for (int r = 0; r < UB_REASONS; r++)
		if (us->skipped[r])
			fprintf(stderr, "; %llu %s", (unsigned long long)us->skipped[r],
				unbound_reason_name(r));
	fputc('\n', stderr);
}

/*
 * Open an input and tell its kind from its first line. Standard input is
 * copied to a temporary file first (it cannot be rewound; a capture or dump
 * fits on the disk it came from): both readers then start at its beginning.
 */
static FILE *open_input(const char *path, int *is_dump, char *err, size_t errcap)
{
	FILE *f;
	if (strcmp(path, "-") == 0) {
		f = tmpfile();
		char buf[65536];
		size_t n;
		while (f != NULL && (n = fread(buf, 1, sizeof buf, stdin)) > 0)
			if (fwrite(buf, 1, n, f) != n) {
				fclose(f);
				f = NULL;
			}
		if (f != NULL && ferror(stdin)) {
			fclose(f);
			f = NULL;
		}
	} else {
		f = fopen(path, "rb");
	}
	if (f == NULL) {
		snprintf(err, errcap, "%s: %s", strcmp(path, "-") ? path : "standard input",
			 strerror(errno));
		return NULL;
	}
	rewind(f);
	uint8_t head[32];
	size_t n = fread(head, 1, sizeof head, f);
	*is_dump = unbound_is_dump(head, n);
	rewind(f);
	return f;
}

static void report_input(const char *path, const capture_stats_t *cs)
{
	fprintf(stderr, "dnsnap load: %s: ", path);
	if (cs->packets)
		fprintf(stderr, "%llu packets, ", (unsigned long long)cs->packets);
	fprintf(stderr, "%llu DNS messages", (unsigned long long)cs->messages);
	for (int r = 0; r < CAP_REASONS; r++)
		if (cs->skipped[r])
			fprintf(stderr, "; %llu %s", (unsigned long long)cs->skipped[r],
				capture_reason_name(r));
	fputc('\n', stderr);
}

static int count_none(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		      size_t entry_len)
{
	(void)arg, (void)key, (void)key_len, (void)entry, (void)entry_len;
	return 0;
}

/* A damaged base is left as it is (a damaged branch page can hide good
 * entries: the merge would lose them), unless --drop-damaged. The whole-file
 * hash decides quickly; only a mismatch costs a walk, to count. Reported. */
static int base_damaged(const char *path, dnsnap_snap_t *base)
{
	if (dnsnap_snap_check_hash(base, NULL) == DNSNAP_OK)
		return 0;
	uint64_t damaged = 0;
	if (scan_snap("load", base, NULL, 0, count_none, NULL, &damaged) == 0)
		return 0; /* bytes outside every entry changed: nothing to lose */
	if (damaged)
		fail("load", path, "%llu damaged entr%s: the snapshot is unchanged (--drop-damaged "
		     "writes it without them)", (unsigned long long)damaged, damaged == 1 ? "y" : "ies");
	return 1;
}

int cmd_load(int argc, char **argv)
{
	const char *path = NULL;
	const char *inputs[256];
	int ninputs = 0, drop = 0;
	unsigned long long now = (unsigned long long)time(NULL), port = 53, wait = WAIT_DEFAULT;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--port") == 0 && i + 1 < argc) {
			if (number("load", "--port", argv[++i], 65535, &port))
				return EXIT_USAGE;
			if (port == 0)
				return fail("load", NULL, "--port: 0 is not a port");
		} else if (strcmp(argv[i], "--now") == 0 && i + 1 < argc) {
			if (number("load", "--now", argv[++i], UINT32_MAX, &now))
				return EXIT_USAGE;
		} else if (strcmp(argv[i], "--drop-damaged") == 0) {
			drop = 1;
		} else if (strcmp(argv[i], "--wait") == 0 && i + 1 < argc) {
			if (number("load", "--wait", argv[++i], INT32_MAX, &wait))
				return EXIT_USAGE;
		} else if (argv[i][0] == '-' && argv[i][1] != 0) {
			return fail("load", NULL, "unexpected argument: %s", argv[i]);
		} else if (path == NULL) {
			if (strcmp(argv[i], "-") == 0)
				return fail("load", NULL, "the snapshot cannot be standard output");
			path = argv[i];
		} else if (ninputs < (int)(sizeof inputs / sizeof inputs[0])) {
			inputs[ninputs++] = argv[i];
		} else {
			return fail("load", NULL, "at most %zu inputs at once",
				    sizeof inputs / sizeof inputs[0]);
		}
	}
	if (path == NULL || ninputs == 0)
		return fail("load", NULL, "needs a snapshot and at least one input (- for stdin)");
	int stdin_used = 0;
	for (int i = 0; i < ninputs; i++) {
		if (strcmp(inputs[i], "-") == 0 && stdin_used++)
			return fail("load", NULL, "standard input (-) given twice");
		if (same_file(inputs[i], 0, path, 1))
			return fail("load", inputs[i], "is the snapshot being written (%s)", path);
	}

	/* an existing SNAP must be a snapshot (never overwrite something else):
	 * checked now, before the inputs are read, and again under the lock */
	dnsnap_snap_t *base = NULL;
	dnsnap_snap_lock_t *lk = NULL;
	struct stat sb;
	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
		return fail("load", path, "not a regular file: a snapshot is written beside its "
			    "path and renamed over it");
	if (stat(path, &sb) == 0 && open_snap("load", path, &base))
		return EXIT_USAGE;
	dnsnap_snap_close(base);
	base = NULL;
	int existed = stat(path, &sb) == 0;

	load_t l = { .now = (uint32_t)now };
	dnsnap_cache_opts_t o;
	dnsnap_cache_opts_default(&o); /* a resolver's TTL policy, no size limit */
	int rc = 0;
	if (dnsnap_cache_new(&o, &l.c) != DNSNAP_OK || (l.scratch = malloc(sizeof *l.scratch)) == NULL) {
		rc = fail("load", NULL, "out of memory");
		goto out;
	}
	progress_t pg;
	l.pr = progress_start(&pg, "load");
	pg.unit = "DNS messages";
	for (int i = 0; i < ninputs && rc == 0; i++) {
		capture_stats_t cs;
		unbound_stats_t us;
		char err[512];
		const char *name = strcmp(inputs[i], "-") ? inputs[i] : "standard input";
		int is_dump = 0, r = -1;
		FILE *f = open_input(inputs[i], &is_dump, err, sizeof err);
		if (f != NULL && is_dump)
			r = unbound_read_stream(f, name, on_unbound, &l, &us, err, sizeof err);
		else if (f != NULL)
			r = capture_read_stream(f, name, (uint16_t)port, on_message, &l, &cs, err,
						sizeof err);
		if (f != NULL)
			fclose(f);
		if (l.pr != NULL && l.seen >= DNSNAP_PROGRESS_EVERY)
			l.pr->fn(l.pr->arg, l.seen, 0);
		progress_end(&pg);
		if (r < 0 || l.oom) {
			rc = fail("load", NULL, "%s; nothing was written", l.oom ? "out of memory" : err);
			break;
		}
		if (is_dump)
			report_unbound(inputs[i], &us);
		else
			report_input(inputs[i], &cs);
		if (err[0])
			fprintf(stderr, "dnsnap load: %s\n", err);
	}
	if (rc != 0)
		goto out;
	dnsnap_cache_stats_t cst;
	dnsnap_cache_stats(l.c, &cst);
	fprintf(stderr, "dnsnap load: %llu responses (%llu cached, %zu distinct questions), "
		"%llu queries skipped", (unsigned long long)l.responses, (unsigned long long)l.used,
		cst.entries, (unsigned long long)l.queries);
	for (size_t i = 0; i < l.nwhy; i++)
		fprintf(stderr, "; %llu %s", (unsigned long long)l.why[i].n, l.why[i].name);
	fputc('\n', stderr);
	if (l.used == 0) {
		fprintf(stderr, "dnsnap load: %s: no usable response; %s\n", path,
			existed ? "the snapshot is unchanged" : "no snapshot written");
		rc = EXIT_NONE;
		goto out;
	}
	/* the writers' lock, then the base: the merge keeps the live entries of
	 * what SNAP holds now, another writer's work published meanwhile too */
	if (lock_snap("load", path, wait, &lk) ||
	    (stat(path, &sb) == 0 && open_snap("load", path, &base)) ||
	    (base != NULL && !drop && base_damaged(path, base))) {
		rc = EXIT_USAGE;
		goto out;
	}
	dnsnap_snap_write_stats_t st = { 0 };
	dnsnap_diag_t d;
	int err = dnsnap_snap_merge(l.c, base, path, (uint32_t)now, &st, &d);
	if (err != DNSNAP_OK) {
		rc = fail("load", NULL, "%s (%s)", d.msg, dnsnap_errname(err) ? dnsnap_errname(err)
									   : strerror(-err));
		goto out;
	}
	if (st.base_bad)
		fprintf(stderr, "dnsnap load: %s: %llu damaged entries of the old snapshot left out\n",
			path, (unsigned long long)st.base_bad);
	printf("%s: %llu entries: %llu loaded, %llu kept", path, (unsigned long long)st.entries,
	       (unsigned long long)(st.entries - st.from_base), (unsigned long long)st.from_base);
	if (base != NULL)
		printf(" (%llu replaced, %llu expired dropped)", (unsigned long long)st.replaced,
		       (unsigned long long)st.base_expired);
	putchar('\n');
	if (st.base_bad)
		rc = EXIT_USAGE; /* published without them, but the old file was damaged */
out:
	dnsnap_snap_close(base);
	dnsnap_snap_unlock(lk);
	dnsnap_cache_free(l.c);
	free(l.scratch);
	return rc;
}
