/*
 * load.c: `dnsnap load SNAP INPUT...`: the DNS responses in captures and
 * framed files (capture.h), and the messages of Unbound's dump_cache text
 * (unbound.h, told by its first line), cached as a resolver would cache
 * them, merged with what SNAP already holds, published atomically.
 *
 * Every response is inserted under its question (the key of its QNAME,
 * QTYPE, QCLASS and CD bit, no tag) at the time it arrived: its packet's
 * time in a capture; the load's time (--now, default the clock) for framed
 * files, Unbound's text, and every input when --now is given. It goes
 * through the same cache code a resolver embeds: the same TTL policy
 * (defaults: capped at 1 day, negative answers at 3 hours), the same
 * refusals, the same keep rule (a later response for a key replaces an
 * earlier one, unless the earlier is live with DNSSEC records the later
 * lacks for the same data: spec/DECISIONS.md). A packet time after the
 * load's is clock skew: taken as the load's time, counted. Responses
 * already expired at the load's time are counted and not stored (the
 * snapshot holds what is live). Then dnsnap_snap_publish(): a live entry of
 * the old SNAP stays unless the load brought a newer one for its key (the
 * same keep rule).
 *
 * The writers' lock is taken after the inputs are read, before the old SNAP
 * is opened as the base, and kept until the merge is published (all inside
 * dnsnap_snap_publish()): a purge or load of SNAP meanwhile is neither lost
 * nor losing.
 *
 * Unusable messages are counted by reason and reported on stderr; they never
 * stop the load. An input that cannot be read at all stops it before
 * anything is written (a mistyped file name must not publish half a load).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "capture.h"
#include "cli.h"
#include "json.h"
#include "unbound.h"

#define REASONS_MAX 32

typedef struct load {
	dnsnap_cache_t *c;
	dnsnap_encoded_t *scratch;
	uint32_t now;            /* the load's time: --now, or the clock */
	int now_given;           /* --now: every response arrives at it */
	/*
	 * Each response is counted once: refused (why[]), left for an earlier
	 * one with DNSSEC records (kept), or inserted; of the inserted, one per
	 * question is its entry at the end (the rest: replaced), either expired
	 * at the load's time or live; a live one is loaded into SNAP or left for
	 * SNAP's own entry (the merge's keep rule). tally() does the arithmetic.
	 */
	uint64_t responses, queries, inserted;
	uint64_t accepted;       /* the cache took it: inserted + kept */
	uint64_t kept;           /* dropped by the keep rule for an earlier one */
	uint64_t questions;      /* the load's entries: one per question */
	uint64_t replaced;       /* inserted, then replaced by a later response */
	uint64_t expired;        /* the question's entry, expired at the load's time */
	uint64_t live;           /* the question's entry, live: loaded or left */
	uint64_t loaded;         /* ... written to SNAP */
	uint64_t left;           /* ... SNAP's entry for its key kept instead */
	uint64_t refused;        /* the sum of why[] */
	uint64_t future;         /* packet times after the load's, taken as it */
	struct { const char *name; uint64_t n; } why[REASONS_MAX];
	size_t nwhy;
	int oom;
	const dnsnap_progress_t *pr; /* messages read, on a terminal */
	uint64_t seen;
} load_t;

/* What one input gave, for the report and --json. */
typedef struct input {
	const char *name;
	int is_dump, is_capture;
	capture_stats_t cs;
	unbound_stats_t us;
} input_t;

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
	unsigned opcode = (m[2] >> 3) & 0xf, qd = dnsnap_load_be16(m + 4);
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

/* When a response arrived: its packet's time, unless --now or an input
 * without times; a time after the load's is taken as the load's. */
static uint32_t arrival(load_t *l, const capture_info_t *info)
{
	if (l->now_given || info == NULL || info->transport == CAPTURE_FRAMED)
		return l->now;
	if (info->ts_sec > (int64_t)l->now) {
		l->future++;
		return l->now;
	}
	return info->ts_sec < 0 ? 0 : (uint32_t)info->ts_sec;
}

static int on_message(void *arg, const uint8_t *msg, size_t len, const capture_info_t *info)
{
	load_t *l = arg;
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
	uint32_t at = arrival(l, info);
	dnsnap_diag_t d;
	int err = dnsnap_cache_insert(l->c, msg, len, at, NULL, 0, l->scratch, &d);
	if (err == DNSNAP_OK) {
		l->accepted++; /* inserted, or left for an earlier one: tally() tells */
		return 0;
	}
	if (err == DNSNAP_ENOMEM) {
		l->oom = 1;
		return 1;
	}
	/* the rest are malformed messages, or ENOTCACHE past the header checks;
	 * a malformed one by what is wrong ("bad label ..."), not by its code */
	count(l, err == DNSNAP_ENOTCACHE ? notcache_reason(msg, &d) : dnsnap_strerror(err));
	return 0;
}

static int on_unbound(void *arg, const uint8_t *msg, size_t len)
{
	return on_message(arg, msg, len, NULL);
}

static void report_unbound(const char *path, const unbound_stats_t *us)
{
	fprintf(stderr, "dnsnap load: %s: Unbound cache dump: %llu %s, %llu %s, %llu %s, %llu %s "
		"rebuilt", path, (unsigned long long)us->lines, plural(us->lines, "line", "lines"),
		(unsigned long long)us->rrsets, plural(us->rrsets, "RRset", "RRsets"),
		(unsigned long long)us->messages, plural(us->messages, "message", "messages"),
		(unsigned long long)us->responses, plural(us->responses, "response", "responses"));
	for (int r = 0; r < UB_REASONS; r++)
		if (us->skipped[r])
			fprintf(stderr, "; %llu %s", (unsigned long long)us->skipped[r],
				unbound_reason_text(r, us->skipped[r]));
	fputc('\n', stderr);
}

/*
 * Open an input and tell its kind from its first line. Standard input is
 * copied to a temporary file first (it cannot be rewound; a capture or dump
 * fits on the disk it came from): both readers then start at its beginning.
 */
static FILE *open_input(const char *path, input_t *in, char *err, size_t errcap)
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
	in->is_dump = unbound_is_dump(head, n);
	in->is_capture = capture_is_capture(head, n);
	/* a snapshot or an export stream given as input: say what reads it */
	dnsnap_file_kind_t k = dnsnap_file_kind(head, n);
	if (k == DNSNAP_FILE_SNAPSHOT || k == DNSNAP_FILE_STREAM || k == DNSNAP_FILE_STREAM_RAW) {
		snprintf(err, errcap, "%s: not a capture, framed messages or Unbound's text (%s)",
			 strcmp(path, "-") ? path : "standard input", dnsnap_file_kind_text(k));
		fclose(f);
		return NULL;
	}
	rewind(f);
	return f;
}

/* A capture time as ISO 8601 (times outside 1970-2106 are clamped to it). */
static void iso(int64_t t, char out[21])
{
	time_iso(t < 0 ? 0 : t > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)t, out);
}

static void report_input(const input_t *in)
{
	const capture_stats_t *cs = &in->cs;
	fprintf(stderr, "dnsnap load: %s: ", in->name);
	if (cs->packets) {
		char a[21], b[21];
		iso(cs->ts_min, a);
		iso(cs->ts_max, b);
		fprintf(stderr, "%llu %s from %s to %s, ", (unsigned long long)cs->packets,
			plural(cs->packets, "packet", "packets"), a, b);
	}
	fprintf(stderr, "%llu DNS %s", (unsigned long long)cs->messages,
		plural(cs->messages, "message", "messages"));
	for (int r = 0; r < CAP_REASONS; r++)
		if (cs->skipped[r])
			fprintf(stderr, "; %llu %s", (unsigned long long)cs->skipped[r],
				capture_reason_text(r, cs->skipped[r]));
	fputc('\n', stderr);
}

/* A capture with no DNS on the port asked for: the ports that look like DNS,
 * most packets first, and "try --port". */
static void port_hint(const input_t *in, unsigned port)
{
	const capture_stats_t *cs = &in->cs;
	if (cs->messages != 0 || cs->packets == 0)
		return;
	int order[CAPTURE_OTHER_PORTS], n = 0;
	uint64_t udp = 0, tcp = 0;
	for (int i = 0; i < CAPTURE_OTHER_PORTS && cs->other[i].port != 0; i++) {
		int k = n++;
		uint64_t pk = cs->other[i].udp + cs->other[i].tcp;
		while (k > 0 && cs->other[order[k - 1]].udp + cs->other[order[k - 1]].tcp < pk) {
			order[k] = order[k - 1];
			k--;
		}
		order[k] = i;
		udp += cs->other[i].udp;
		tcp += cs->other[i].tcp;
	}
	fprintf(stderr, "dnsnap load: %s: no DNS messages on port %u", in->name, port);
	if (n == 0) {
		fputc('\n', stderr);
		return;
	}
	fprintf(stderr, "; the capture has DNS-like %s traffic on %s ",
		udp && tcp ? "UDP and TCP" : udp ? "UDP" : "TCP", n == 1 ? "port" : "ports");
	for (int i = 0; i < n; i++)
		fprintf(stderr, "%s%u", i ? ", " : "", cs->other[order[i]].port);
	fprintf(stderr, ": try --port %u\n", cs->other[order[0]].port);
}

static int count_expired(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
			 size_t entry_len, uint32_t hits)
{
	load_t *l = arg;
	(void)key, (void)key_len, (void)entry_len, (void)hits;
	if ((int32_t)(entry_expiry(entry) - l->now) <= 0)
		l->expired++;
	return 0;
}

/* After the inputs: what became of the inserted responses. */
static void tally(load_t *l)
{
	dnsnap_cache_stats_t cst;
	dnsnap_cache_stats(l->c, &cst);
	l->kept = cst.kept; /* the cache counts what its keep rule dropped */
	l->inserted = l->accepted - l->kept;
	l->questions = cst.entries;
	l->replaced = l->inserted - l->questions;
	l->expired = 0;
	dnsnap_cache_foreach(l->c, count_expired, l);
	l->live = l->questions - l->expired;
	l->refused = 0;
	for (size_t i = 0; i < l->nwhy; i++)
		l->refused += l->why[i].n;
}

/* After the merge: the live entries SNAP's own entries won over. */
static void tally_merge(load_t *l, const dnsnap_snap_write_stats_t *st)
{
	l->loaded = st->entries - st->from_base;
	l->left = l->live - l->loaded;
}

/* The summary of responses on stderr, each counted once: "35 responses (15
 * loaded, 16 replaced by a later one, 2 expired before the load, 1 left for
 * an earlier one with DNSSEC records, 1 refused), 17 distinct questions, 1
 * query skipped; 1 truncated (TC=1)". tests/e2e/auth_clients.sh reads this
 * line: "responses (", ": N responses", ", N distinct questions", the
 * refusals after "skipped". */
static void report_load(const load_t *l)
{
	fprintf(stderr, "dnsnap load: %llu %s (%llu loaded", (unsigned long long)l->responses,
		plural(l->responses, "response", "responses"), (unsigned long long)l->loaded);
	if (l->left)
		fprintf(stderr, ", %llu left for the snapshot's own entry",
			(unsigned long long)l->left);
	if (l->replaced)
		fprintf(stderr, ", %llu replaced by a later one", (unsigned long long)l->replaced);
	if (l->expired)
		fprintf(stderr, ", %llu expired before the load", (unsigned long long)l->expired);
	if (l->kept)
		fprintf(stderr, ", %llu left for an earlier one with DNSSEC records",
			(unsigned long long)l->kept);
	if (l->refused)
		fprintf(stderr, ", %llu refused", (unsigned long long)l->refused);
	fprintf(stderr, "), %llu distinct %s, %llu %s skipped", (unsigned long long)l->questions,
		plural(l->questions, "question", "questions"), (unsigned long long)l->queries,
		plural(l->queries, "query", "queries"));
	for (size_t i = 0; i < l->nwhy; i++)
		fprintf(stderr, "; %llu %s", (unsigned long long)l->why[i].n, l->why[i].name);
	fputc('\n', stderr);
}

static void json_reasons(jw_t *j, const char *key, const uint64_t *n, int count,
			 const char *(*name)(int))
{
	jw_key(j, key);
	jw_obj(j);
	for (int r = 0; r < count; r++)
		if (n[r])
			jw_ku64(j, name(r), n[r]);
	jw_end(j);
}

static void json_time(jw_t *j, const char *key, int64_t t)
{
	char buf[21];
	iso(t, buf);
	jw_kstr(j, key, buf);
}

/* --json: the whole load as one object on standard output. */
static void json_report(const char *path, const load_t *l, const input_t *in, int ninputs,
			const dnsnap_snap_write_stats_t *st, int written, int had_base)
{
	jw_t j;
	jw_init(&j, stdout);
	jw_obj(&j);
	jw_kstr(&j, "snapshot", path);
	json_time(&j, "load_time", l->now);
	jw_key(&j, "inputs");
	jw_arr(&j);
	for (int i = 0; i < ninputs; i++) {
		jw_obj(&j);
		jw_kstr(&j, "file", in[i].name);
		/* as arrival() times its responses: only a capture's packets have times */
		jw_kstr(&j, "arrival", l->now_given ? "--now" : in[i].is_capture ? "packet times"
										: "load time");
		if (in[i].is_dump) {
			const unbound_stats_t *us = &in[i].us;
			jw_kstr(&j, "format", "unbound");
			jw_ku64(&j, "lines", us->lines);
			jw_ku64(&j, "rrsets", us->rrsets);
			jw_ku64(&j, "messages", us->messages);
			jw_ku64(&j, "responses", us->responses);
			json_reasons(&j, "skipped", us->skipped, UB_REASONS, unbound_reason_name);
		} else {
			const capture_stats_t *cs = &in[i].cs;
			jw_kstr(&j, "format", in[i].is_capture ? "capture" : "framed");
			jw_ku64(&j, "packets", cs->packets);
			if (cs->packets) {
				json_time(&j, "first_packet", cs->ts_min);
				json_time(&j, "last_packet", cs->ts_max);
			}
			jw_ku64(&j, "messages", cs->messages);
			json_reasons(&j, "skipped", cs->skipped, CAP_REASONS, capture_reason_name);
		}
		jw_end(&j);
	}
	jw_end(&j);
	jw_ku64(&j, "responses", l->responses);
	jw_ku64(&j, "queries", l->queries);
	jw_ku64(&j, "cached", l->loaded);
	jw_ku64(&j, "left_for_snapshot", l->left);
	jw_ku64(&j, "replaced_later", l->replaced);
	jw_ku64(&j, "expired", l->expired);
	jw_ku64(&j, "kept_earlier_dnssec", l->kept);
	jw_ku64(&j, "refused_total", l->refused);
	jw_ku64(&j, "questions", l->questions);
	jw_ku64(&j, "future_times", l->future);
	jw_key(&j, "refused");
	jw_obj(&j);
	for (size_t i = 0; i < l->nwhy; i++)
		jw_ku64(&j, l->why[i].name, l->why[i].n);
	jw_end(&j);
	jw_kbool(&j, "written", written);
	if (written) {
		jw_ku64(&j, "entries", st->entries);
		jw_ku64(&j, "loaded", st->entries - st->from_base);
		jw_ku64(&j, "kept", st->from_base);
		if (had_base) {
			jw_ku64(&j, "replaced", st->replaced);
			jw_ku64(&j, "base_expired", st->base_expired);
		}
		jw_ku64(&j, "damaged_left_out", st->base_bad);
	}
	jw_end(&j);
	jw_nl(&j);
}

enum { OPT_PORT = 0x100, OPT_NOW, OPT_WAIT, OPT_DROP, OPT_JSON };

static const struct option longopts[] = {
	{ "port", required_argument, NULL, OPT_PORT },
	{ "now", required_argument, NULL, OPT_NOW },
	{ "wait", required_argument, NULL, OPT_WAIT },
	{ "drop-damaged", no_argument, NULL, OPT_DROP },
	{ "json", no_argument, NULL, OPT_JSON },
	{ NULL, 0, NULL, 0 },
};

/* load's options, as parsed */
struct load_args {
	int drop, json, now_given;
	uint32_t now;
	unsigned long long port, wait;
};

/* The options into @p a, and --now checked against the time rule.
 * @return 0, or the exit code */
static int load_parse(int argc, char **argv, struct load_args *a)
{
	const char *now_arg = NULL;
	int c;
	while ((c = opt_next("load", argc, argv, "", longopts)) != -1) {
		switch (c) {
		case OPT_PORT:
			if (number("load", "--port", optarg, 65535, &a->port))
				return EXIT_USAGE;
			if (a->port == 0)
				return fail("load", NULL, "--port: 0 is not a port");
			break;
		case OPT_NOW:
			if (time_arg("load", "--now", optarg, &a->now))
				return EXIT_USAGE;
			a->now_given = 1;
			now_arg = optarg;
			break;
		case OPT_WAIT:
			if (number("load", "--wait", optarg, INT32_MAX, &a->wait))
				return EXIT_USAGE;
			break;
		case OPT_DROP:
			a->drop = 1;
			break;
		case OPT_JSON:
			a->json = 1;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (opt_operands("load", argc, argv, 2, -1,
			 "a snapshot and at least one input (- for stdin)") < 0)
		return EXIT_USAGE;
	/* the time rule: entries cached in the future are refused by every
	 * reader, so a load dated ahead of the clock would write only those */
	uint32_t clock = (uint32_t)time(NULL);
	if (a->now_given && (int32_t)(a->now - clock) > DNSNAP_TIME_SKEW_S)
		return fail("load", NULL, "--now %s: %lld s ahead of the clock; entries cached more "
			    "than %d s in the future are refused by every reader (a clock "
			    "ahead?)", now_arg, (long long)(int32_t)(a->now - clock),
			    DNSNAP_TIME_SKEW_S);
	return 0;
}

/* Every input read into l's cache, each reported as it ends.
 * @return 0, or the exit code (reported: nothing is written) */
static int load_inputs(load_t *l, input_t *in, char **inputs, int ninputs,
		       const struct load_args *a)
{
	progress_t pg;
	l->pr = progress_start(&pg, "load");
	pg.unit = "DNS messages";
	for (int i = 0; i < ninputs; i++) {
		char err[512];
		in[i].name = strcmp(inputs[i], "-") ? inputs[i] : "standard input";
		int r = -1;
		FILE *f = open_input(inputs[i], &in[i], err, sizeof err);
		if (f != NULL && in[i].is_dump)
			r = unbound_read_stream(f, in[i].name, on_unbound, l, &in[i].us, err,
						sizeof err);
		else if (f != NULL)
			r = capture_read_stream(f, in[i].name, (uint16_t)a->port, on_message, l,
						&in[i].cs, err, sizeof err);
		if (f != NULL)
			fclose(f);
		if (l->pr != NULL && l->seen >= DNSNAP_PROGRESS_EVERY)
			l->pr->fn(l->pr->arg, l->seen, 0);
		progress_end(&pg);
		if (r < 0 || l->oom)
			return fail("load", NULL, "%s; nothing was written",
				    l->oom ? "out of memory" : err);
		in[i].name = inputs[i]; /* reported as given, "-" too */
		if (!a->json && in[i].is_dump)
			report_unbound(inputs[i], &in[i].us);
		else if (!a->json)
			report_input(&in[i]);
		if (!in[i].is_dump)
			port_hint(&in[i], (unsigned)a->port);
		if (err[0])
			fprintf(stderr, "dnsnap load: %s\n", err);
	}
	return 0;
}

/*
 * l's live entries published at @p path (dnsnap_snap_publish(): the writers'
 * lock, then the base, the file at SNAP now, so that another writer's work
 * published meanwhile is kept, and the merge; a damaged base is left as it
 * is, since a damaged branch page can hide good entries that a rewrite would
 * lose, unless --drop-damaged), and the load's report. @return the exit code
 */
static int load_publish(load_t *l, const char *path, const input_t *in, int ninputs,
			const struct load_args *a)
{
	dnsnap_diag_t d;
	dnsnap_publish_opts_t po = { .now = a->now, .wait_seconds = (int)a->wait,
				     .flags = a->drop ? DNSNAP_PUBLISH_DROP_DAMAGED : 0 };
	dnsnap_publish_stats_t ps;
	int err = dnsnap_snap_publish(l->c, path, &po, NULL, &ps, &d);
	if (err != DNSNAP_OK)
		return publish_fail("load", path, err, &d, &ps, a->wait);
	dnsnap_snap_write_stats_t st = ps.write;
	tally_merge(l, &st);
	if (!a->json)
		report_load(l);
	if (st.base_bad)
		fprintf(stderr, "dnsnap load: %s: %llu damaged %s of the old snapshot left out\n",
			path, (unsigned long long)st.base_bad,
			plural(st.base_bad, "entry", "entries"));
	if (a->json) {
		json_report(path, l, in, ninputs, &st, 1, ps.base_merged);
	} else {
		printf("%s: %llu %s: %llu loaded, %llu kept", path, (unsigned long long)st.entries,
		       plural(st.entries, "entry", "entries"),
		       (unsigned long long)(st.entries - st.from_base),
		       (unsigned long long)st.from_base);
		if (ps.base_merged)
			printf(" (%llu replaced, %llu expired dropped)",
			       (unsigned long long)st.replaced, (unsigned long long)st.base_expired);
		putchar('\n');
	}
	/* published without them, but the old file was damaged */
	return st.base_bad ? EXIT_USAGE : 0;
}

/* No live response to load: said, and nothing written. @return EXIT_NONE */
static int load_nothing(const load_t *l, const char *path, int existed, const input_t *in,
			int ninputs, const struct load_args *a)
{
	dnsnap_snap_write_stats_t st = { 0 };
	if (!a->json)
		report_load(l);
	if (l->expired)
		fprintf(stderr, "dnsnap load: %s: no live response (%llu expired before the "
			"load); %s\n", path, (unsigned long long)l->expired,
			existed ? "the snapshot is unchanged" : "no snapshot written");
	else
		fprintf(stderr, "dnsnap load: %s: no usable response; %s\n", path,
			existed ? "the snapshot is unchanged" : "no snapshot written");
	if (a->json)
		json_report(path, l, in, ninputs, &st, 0, 0);
	return EXIT_NONE;
}

int cmd_load(int argc, char **argv)
{
	struct load_args a = { .now = (uint32_t)time(NULL), .port = 53, .wait = WAIT_DEFAULT };
	int rc = load_parse(argc, argv, &a);
	if (rc != 0)
		return rc;
	const char *path = argv[optind];
	char **inputs = argv + optind + 1;
	int ninputs = argc - optind - 1;
	if (strcmp(path, "-") == 0)
		return fail("load", NULL, "the snapshot cannot be standard output");
	int stdin_used = 0;
	for (int i = 0; i < ninputs; i++) {
		if (strcmp(inputs[i], "-") == 0 && stdin_used++)
			return fail("load", NULL, "standard input (-) given twice");
		if (same_file(inputs[i], 0, path, 1))
			return fail("load", inputs[i], "is the snapshot being written (%s)", path);
	}

	/* an existing SNAP must be a snapshot (never overwrite something else):
	 * checked now, before the inputs are read, and again under the lock */
	if (target_ok("load", path))
		return EXIT_USAGE;
	struct stat sb;
	int existed = stat(path, &sb) == 0;

	load_t l = { .now = a.now, .now_given = a.now_given };
	dnsnap_cache_opts_t o;
	dnsnap_cache_opts_default(&o); /* a resolver's TTL policy, no size limit */
	input_t *in = calloc((size_t)ninputs, sizeof *in);
	if (in == NULL || dnsnap_cache_new(&o, &l.c) != DNSNAP_OK ||
	    (l.scratch = malloc(sizeof *l.scratch)) == NULL) {
		rc = fail("load", NULL, "out of memory");
		goto out;
	}
	if ((rc = load_inputs(&l, in, inputs, ninputs, &a)) != 0)
		goto out;
	tally(&l);
	if (l.future) {
		char t[21];
		time_iso(a.now, t);
		fprintf(stderr, "dnsnap load: %llu %s timed after the load's time (%s), taken as "
			"arriving then (clock skew?)\n", (unsigned long long)l.future,
			plural(l.future, "response", "responses"), t);
	}
	rc = l.live == 0 ? load_nothing(&l, path, existed, in, ninputs, &a)
			 : load_publish(&l, path, in, ninputs, &a);
out:
	dnsnap_cache_free(l.c);
	free(l.scratch);
	free(in);
	return rc;
}
