/*
 * purge: remove entries from a snapshot (filtered, expired), republishing it.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ctl.h"
#include "json.h"
#include "print.h"

enum { PURGE_EXPIRED = 0x100, PURGE_DRY_RUN, PURGE_DROP_DAMAGED, PURGE_WAIT, PURGE_NOW,
       PURGE_JSON };

/*
 * purge: the entries matching every filter given go; the rest are copied, in
 * key order, into a new snapshot published over the old (dnsnap_snapw_t).
 * A --zone or --name purge still walks every key (what stays must be copied)
 * but tests the prefix first.
 */
struct purge_ctx {
	const filter_t *f;
	int expired;             /* --expired: only expired entries match */
	uint32_t now;
	dnsnap_snapw_t *w;       /* NULL: --dry-run, or counting before writing */
	uint64_t seen, matched, kept, total;
	uint64_t refused;        /* by the time rule: damaged, as every reader has it */
	uint32_t rule_now;       /* the rule's now: the later of now and the clock */
	dnsnap_diag_t refused_d; /* the first refusal */
	const dnsnap_progress_t *pr;
	int err;                 /* the writer's, when it stopped the walk */
	dnsnap_diag_t d;
};

static int purge_one(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		     size_t entry_len)
{
	struct purge_ctx *pc = arg;
	dnsnap_key_t k;
	if (++pc->seen % DNSNAP_PROGRESS_EVERY == 0 && pc->pr != NULL)
		pc->pr->fn(pc->pr->arg, pc->seen, pc->total);
	dnsnap_key_decode(key, key_len, &k, NULL); /* checked by the scan */
	dnsnap_diag_t td;
	if (dnsnap_entry_check_time(entry, entry_len, NULL, pc->rule_now, &td) != DNSNAP_OK) {
		if (pc->refused++ == 0) {
			char nm[1024], ty[32];
			print_type(ty, sizeof ty, k.qtype);
			size_t cap = sizeof pc->refused_d.msg;
			if (snprintf(pc->refused_d.msg, cap, "%s %s: %s",
				     print_name(k.name, k.name_len, nm, sizeof nm), ty,
				     td.msg) >= (int)cap)
				pc->refused_d.msg[cap - 2] = '.'; /* cut */
		}
		return 0; /* neither matched nor kept */
	}
	const filter_t *f = pc->f;
	int match = filter_match(f, key, key_len, &k) &&
		    (!pc->expired || (int32_t)(entry_expiry(entry) - pc->now) <= 0);
	if (match) {
		pc->matched++;
		return 0;
	}
	pc->kept++;
	if (pc->w != NULL && (pc->err = dnsnap_snapw_add(pc->w, key, key_len, entry, entry_len,
							  &pc->d)) != DNSNAP_OK)
		return 1;
	return 0;
}

/* What a purge did (or would do, --dry-run), as text or one JSON object. */
static void print_result(const char *path, int json, int dry, uint64_t matched, uint64_t total,
			 uint64_t left, uint64_t damaged)
{
	if (json) {
		jw_t j;
		jw_init(&j, stdout);
		jw_obj(&j);
		jw_kstr(&j, "file", path);
		jw_kbool(&j, "dry_run", dry);
		jw_ku64(&j, "matched", matched);
		jw_ku64(&j, "total", total);
		jw_ku64(&j, "left", left);
		jw_ku64(&j, "damaged", damaged);
		jw_end(&j);
		jw_nl(&j);
		return;
	}
	if (matched == 0) { /* the file is not rewritten: say so, not "purged 0" */
		printf("%s: nothing matched; unchanged (%llu %s)\n", path, (unsigned long long)total,
		       plural(total, "entry", "entries"));
		return;
	}
	printf("%s: %s %llu of %llu %s, %llu left\n", path, dry ? "would purge" : "purged",
	       (unsigned long long)matched, (unsigned long long)total,
	       plural(total, "entry", "entries"), (unsigned long long)left);
}

/* What a purge walk met, for the report. */
struct purge_run {
	struct purge_ctx pc;
	const char *path;
	int drop;                /* --drop-damaged */
	uint64_t damaged;
	int scan_err;            /* the walk's own error (the file changed under it) */
	dnsnap_diag_t scan_d;
};

/* The walk over @p s: counting only (w NULL) or copying what stays into w. */
static void purge_walk(struct purge_run *r, dnsnap_snap_t *s, dnsnap_snapw_t *w)
{
	dnsnap_snap_info_t in;
	dnsnap_snap_info(s, &in);
	const filter_t *f = r->pc.f;
	uint32_t clock = (uint32_t)time(NULL);
	r->pc = (struct purge_ctx){ .f = f, .expired = r->pc.expired, .now = r->pc.now,
				    .pr = r->pc.pr, .w = w, .total = in.entry_count };
	r->pc.rule_now = (int32_t)(clock - r->pc.now) > 0 ? clock : r->pc.now;
	dnsnap_scan_stats_t st;
	int err = dnsnap_snap_scan(s, NULL, 0, purge_one, &r->pc, &st, &r->scan_d);
	r->damaged = st.damaged + r->pc.refused;
	if (st.damaged == 0 && r->pc.refused > 0)
		r->scan_d = r->pc.refused_d;
	r->scan_err = err == 1 ? r->pc.err
		      : err == DNSNAP_ETRUNC || err == DNSNAP_ENOMEM ? err : DNSNAP_OK;
	if (r->pc.pr != NULL)
		r->pc.pr->fn(r->pc.pr->arg, r->pc.seen, r->pc.total);
}

/* dnsnap_snap_publish_fill()'s fill: the base (the file at the path under
 * the writers' lock) without what matches. Publishes nothing (1) when
 * nothing matched, or when the base is damaged without --drop-damaged (a
 * damaged branch page can hide good entries: rewriting would lose them). */
static int purge_fill(void *arg, dnsnap_snap_t *base, dnsnap_snapw_t *w,
		      dnsnap_snap_write_stats_t *stats, dnsnap_diag_t *d)
{
	struct purge_run *r = arg;
	(void)stats;
	if (base == NULL) { /* no file at the path: dnsnap_snap_open()'s message */
		dnsnap_snap_t *none = NULL;
		int err = dnsnap_snap_open(r->path, &none, d);
		dnsnap_snap_close(none);
		return err != DNSNAP_OK ? err : 1;
	}
	purge_walk(r, base, w);
	if (r->scan_err != DNSNAP_OK) {
		*d = r->scan_err == r->pc.err ? r->pc.d : r->scan_d;
		return r->scan_err;
	}
	if ((r->damaged > 0 && !r->drop) || r->pc.matched == 0)
		return 1;
	return DNSNAP_OK;
}

/* The flush request of purge's filter: each filter option as getopt took
 * it, "--name=VALUE", and --expired; what the filter parsed, not argv
 * re-read (abbreviations, values that look like options). */
struct flush_req {
	int argc;
	char *argv[CTL_ARGS_MAX + 1];
	char buf[CTL_ARGS_MAX][CTL_ARG_MAX];
};

static int flush_req_add(struct flush_req *q, int c, const char *v)
{
	const char *opt = c == OPT_NAME ? "--name" : c == OPT_ZONE ? "--zone" : c == OPT_TYPE
			  ? "--type" : c == OPT_TAG ? "--tag" : "--expired";
	if (q->argc >= CTL_ARGS_MAX - 1)
		return fail("purge", NULL, "at most %d filters with servers running",
			    CTL_ARGS_MAX - 2);
	int n = v ? snprintf(q->buf[q->argc], CTL_ARG_MAX, "%s=%s", opt, v)
		  : snprintf(q->buf[q->argc], CTL_ARG_MAX, "%s", opt);
	if (n < 0 || n >= CTL_ARG_MAX || (v && strchr(v, '\n')))
		return fail("purge", NULL, "%s: a value too long or with a newline", opt);
	q->argv[q->argc] = q->buf[q->argc];
	q->argc++;
	return 0;
}

/*
 * The servers of SNAP (dnsnap serve, by their control sockets: cli/ctl.h)
 * told to flush what the filters name, before the file is purged: each one
 * removes the entries from its memory and publishes the file without them
 * at once, so that none answers them or writes them back at its next
 * publish. A server with nothing of them in memory (exit 1; a cache-only
 * one) is asked to reload once the file is purged (@p reload, its
 * sockets). @return how many servers flushed something (-1: a server could
 * not be reached, failed, or is stopping: reported)
 */
static int purge_servers(const char *path, struct flush_req *q,
			 char reload[][CTL_PATH_MAX], int *nreload)
{
	static char socks[CTL_SERVERS_MAX][CTL_PATH_MAX];
	char err[512];
	*nreload = 0;
	int n = ctl_find(path, socks, stderr, err, sizeof err);
	if (n <= 0)
		return 0;
	int flushed = 0;
	for (int i = 0; i < n; i++) {
		char why[512];
		struct ctl_bounds b = { CTL_SILENCE_MS, 1000ll * CTL_TOTAL_S };
		int rc = ctl_call(socks[i], q->argc, q->argv, stderr, stderr, &b, why, sizeof why);
		if (rc == CTL_DEAD)
			continue; /* a server killed: nothing of it answers */
		if (rc < 0)
			fail("purge", path, "the server at %s: %s", socks[i], why);
		if (rc < 0 || rc == EXIT_USAGE)
			return -1; /* its message said why; the file is left as it is */
		flushed += rc == 0;
		if (rc == EXIT_NONE)
			memcpy(reload[(*nreload)++], socks[i], CTL_PATH_MAX);
	}
	return flushed;
}

/* The servers with nothing in memory: the purged file taken in now */
static void reload_servers(const char *path, char socks[][CTL_PATH_MAX], int n)
{
	char *const argv[] = { "reload", NULL };
	for (int i = 0; i < n; i++) {
		char why[512];
		struct ctl_bounds b = { CTL_SILENCE_MS, 1000ll * CTL_TOTAL_S };
		if (ctl_call(socks[i], 1, argv, stderr, stderr, &b, why, sizeof why) < 0)
			fail("purge", path, "the server at %s was not reloaded (it takes the file in "
			     "at its next tick): %s", socks[i], why);
	}
}

/* --dry-run: the counts of a walk, nothing written, no lock. */
static int purge_dry(const char *path, struct purge_run *r)
{
	dnsnap_snap_t *s;
	if (open_snap("purge", path, &s))
		return EXIT_USAGE;
	purge_walk(r, s, NULL);
	if (r->scan_err == DNSNAP_ETRUNC || r->scan_err == DNSNAP_ENOMEM) {
		dnsnap_snap_close(s);
		return fail("purge", NULL, "%s", r->scan_d.msg);
	}
	dnsnap_snap_close(s);
	return 0;
}

/* The purge itself, through dnsnap_snap_publish_fill() (which takes the
 * writers' lock before the snapshot is read: what another writer publishes
 * meanwhile is in what this purge filters). */
static int purge_publish(const char *path, struct purge_run *r, unsigned long long wait)
{
	r->path = path;
	dnsnap_publish_opts_t po = { .now = r->pc.now, .wait_seconds = (int)wait };
	dnsnap_publish_stats_t ps;
	dnsnap_diag_t d = { 0 };
	int err = dnsnap_snap_publish_fill(path, &po, purge_fill, r, NULL, &ps, &d);
	if (err == -EAGAIN || (err < 0 && d.msg[0] == 0) || err == DNSNAP_EMAGIC ||
	    err == DNSNAP_EVERSION || err == -ENOENT)
		return publish_fail("purge", path, err, &d, &ps, wait);
	if (err < 0)
		return fail("purge", path, "%s (%s); the snapshot is unchanged",
			    diag_reason(path, d.msg), err_name(err) ? err_name(err) : "error");
	if (r->damaged > 0 && !r->drop)
		return fail("purge", path, "%llu damaged entr%s: the snapshot is unchanged "
			    "(--drop-damaged writes it without them; the first: %s)",
			    (unsigned long long)r->damaged, r->damaged == 1 ? "y" : "ies",
			    diag_reason(path, r->scan_d.msg));
	return 0;
}

int cmd_purge(int argc, char **argv)
{
	static const struct option longopts[] = {
		FILTER_LONGOPTS,
		{ "expired", no_argument, NULL, PURGE_EXPIRED },
		{ "dry-run", no_argument, NULL, PURGE_DRY_RUN },
		{ "drop-damaged", no_argument, NULL, PURGE_DROP_DAMAGED },
		{ "wait", required_argument, NULL, PURGE_WAIT },
		{ "now", required_argument, NULL, PURGE_NOW },
		{ "json", no_argument, NULL, PURGE_JSON },
		{ NULL, 0, NULL, 0 },
	};
	static filter_t f; /* 33 KB: not on the stack */
	static struct purge_run r;
	static struct flush_req q;
	static char reload[CTL_SERVERS_MAX][CTL_PATH_MAX];
	int nreload = 0;
	int dry = 0, json = 0, c, rc;
	unsigned long long wait = WAIT_DEFAULT;
	f = (filter_t){ 0 };
	q.argc = 1;
	q.argv[0] = "flush";
	r = (struct purge_run){ .pc = { .f = &f, .now = (uint32_t)time(NULL) } };
	while ((c = opt_next("purge", argc, argv, "", longopts)) != -1) {
		if ((rc = filter_opt("purge", &f, c, optarg)) != 0) {
			if (rc != 1 || flush_req_add(&q, c, optarg))
				return rc != 1 ? rc : EXIT_USAGE;
			continue;
		}
		switch (c) {
		case PURGE_JSON:
			json = 1;
			break;
		case PURGE_EXPIRED:
			r.pc.expired = 1;
			if (flush_req_add(&q, c, NULL))
				return EXIT_USAGE;
			break;
		case PURGE_DRY_RUN:
			dry = 1;
			break;
		case PURGE_DROP_DAMAGED:
			r.drop = 1;
			break;
		case PURGE_WAIT:
			if (number("purge", "--wait", optarg, INT32_MAX, &wait))
				return EXIT_USAGE;
			break;
		case PURGE_NOW:
			if (time_arg("purge", "--now", optarg, &r.pc.now))
				return EXIT_USAGE;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (opt_operands("purge", argc, argv, 1, 1, "a snapshot") < 0)
		return EXIT_USAGE;
	const char *path = argv[optind];
	if (!r.pc.expired && !f.any)
		return fail("purge", NULL, "needs at least one of --name, --zone, --type, --tag, "
			    "--expired (to remove everything, delete the file)");
	if (filter_ready("purge", &f))
		return EXIT_USAGE;
	int servers = dry ? 0 : purge_servers(path, &q, reload, &nreload);
	if (servers < 0)
		return EXIT_USAGE;
	progress_t pg;
	r.pc.pr = progress_start(&pg, "purge");
	rc = dry ? purge_dry(path, &r) : purge_publish(path, &r, wait);
	progress_end(&pg);
	if (rc == 0 && r.pc.matched > 0 && nreload > 0)
		reload_servers(path, reload, nreload);
	if (rc != 0)
		return rc;
	uint64_t matched = r.pc.matched, total = r.pc.seen;
	uint64_t left = total - matched - r.pc.refused;
	if (r.damaged > 0) {
		char first[256];
		snprintf(first, sizeof first, "%s", diag_reason(path, r.scan_d.msg));
		fprintf(stderr, "dnsnap purge: %s: %llu damaged entr%s %s (the first: %s)\n", path,
			(unsigned long long)r.damaged, r.damaged == 1 ? "y" : "ies",
			dry || !matched ? "found" : "left out of the new file", first);
	}
	if (servers > 0 && matched == 0 && !json)
		printf("%s: purged by %d running %s (above); the file holds none of them now "
		       "(%llu %s)\n", path, servers, servers == 1 ? "server" : "servers",
		       (unsigned long long)total, plural(total, "entry", "entries"));
	else
		print_result(path, json, dry, matched, total, left, r.damaged);
	if (r.damaged > 0)
		return EXIT_USAGE;
	return matched || servers > 0 ? 0 : EXIT_NONE;
}
