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
#include "json.h"

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
	int expired = 0, dry = 0, drop = 0, json = 0, c, r;
	uint32_t now = (uint32_t)time(NULL);
	unsigned long long wait = WAIT_DEFAULT;
	f = (filter_t){ 0 };
	while ((c = opt_next("purge", argc, argv, "", longopts)) != -1) {
		if ((r = filter_opt("purge", &f, c, optarg)) != 0) {
			if (r != 1)
				return r;
			continue;
		}
		switch (c) {
		case PURGE_JSON:
			json = 1;
			break;
		case PURGE_EXPIRED:
			expired = 1;
			break;
		case PURGE_DRY_RUN:
			dry = 1;
			break;
		case PURGE_DROP_DAMAGED:
			drop = 1;
			break;
		case PURGE_WAIT:
			if (number("purge", "--wait", optarg, INT32_MAX, &wait))
				return EXIT_USAGE;
			break;
		case PURGE_NOW:
			if (time_arg("purge", "--now", optarg, &now))
				return EXIT_USAGE;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (opt_operands("purge", argc, argv, 1, 1, "a snapshot") < 0)
		return EXIT_USAGE;
	const char *path = argv[optind];
	if (!expired && !f.any)
		return fail("purge", NULL, "needs at least one of --name, --zone, --type, --tag, "
			    "--expired (to remove everything, delete the file)");
	if (filter_ready("purge", &f))
		return EXIT_USAGE;
	/* the writers' lock before the snapshot is read: what another writer
	 * publishes meanwhile is in what this purge filters (--dry-run reads only) */
	dnsnap_snap_lock_t *lk = NULL;
	if (!dry && lock_snap("purge", path, wait, &lk))
		return EXIT_USAGE;
	dnsnap_snap_t *s;
	if (open_snap("purge", path, &s)) {
		dnsnap_snap_unlock(lk);
		return EXIT_USAGE;
	}
	progress_t pg;
	const dnsnap_progress_t *pr = progress_start(&pg, "purge");
	/* first count (cheap: no writing), so that nothing matched means no
	 * new file, and the write pass can show a total */
	struct purge_ctx pc = { .f = &f, .expired = expired, .now = now, .pr = pr };
	uint64_t damaged = 0;
	int rc = scan_snap("purge", s, NULL, 0, purge_one, &pc, &damaged);
	uint64_t total = pc.seen, matched = pc.matched, left = total - matched;
	int err = DNSNAP_OK;
	/* damage stops a purge (a damaged branch page can hide good entries:
	 * rewriting would lose them) unless --drop-damaged asks to write the
	 * file without them; the exit status is 2 either way */
	if (damaged > 0 && !dry && !drop) {
		progress_end(&pg);
		dnsnap_snap_close(s);
		dnsnap_snap_unlock(lk);
		return fail("purge", path, "%llu damaged entr%s: the snapshot is unchanged "
			    "(--drop-damaged writes it without them)", (unsigned long long)damaged,
			    damaged == 1 ? "y" : "ies");
	}
	if ((rc == 0 || damaged > 0) && matched > 0 && !dry) {
		pc = (struct purge_ctx){ .f = &f, .expired = expired, .now = now, .pr = pr,
					 .total = total };
		err = dnsnap_snapw_begin(path, &pc.w, &pc.d);
		if (err == DNSNAP_OK) {
			dnsnap_diag_t sd;
			err = dnsnap_snap_scan(s, NULL, 0, purge_one, &pc, NULL, &sd);
			if (err == 1)
				err = pc.err;
			else if (err == DNSNAP_ETRUNC || err == DNSNAP_ENOMEM)
				pc.d = sd; /* the file changed under us: publish nothing */
			else
				err = DNSNAP_OK; /* no damage, or the damage counted above */
			if (err == DNSNAP_OK)
				err = dnsnap_snapw_commit(pc.w, NULL, &pc.d);
			else
				dnsnap_snapw_abort(pc.w);
		}
		left = pc.kept;
		if (pr != NULL)
			pr->fn(pr->arg, pc.seen, total);
	}
	progress_end(&pg);
	dnsnap_snap_close(s);
	dnsnap_snap_unlock(lk);
	if (err != DNSNAP_OK)
		return fail("purge", path, "%s (%s); the snapshot is unchanged",
			    pc.d.msg[0] ? pc.d.msg : dnsnap_strerror(err),
			    dnsnap_errname(err) ? dnsnap_errname(err) : strerror(-err));
	if (rc == EXIT_USAGE && damaged == 0)
		return rc; /* the walk failed, reported */
	if (damaged > 0)
		fprintf(stderr, "dnsnap purge: %s: %llu damaged entr%s %s\n", path,
			(unsigned long long)damaged, damaged == 1 ? "y" : "ies",
			dry || !matched ? "found" : "left out of the new file");
	print_result(path, json, dry, matched, total, left, damaged);
	if (damaged > 0)
		return EXIT_USAGE;
	return matched ? 0 : EXIT_NONE;
}
