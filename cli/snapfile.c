/*
 * snapfile.c: the snapshots a command reads and writes: opening one, a
 * scan's damage said once, a publish's target checked and its failure said,
 * an entry's expiry and state.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "print.h"

int open_snap(const char *cmd, const char *path, dnsnap_snap_t **s)
{
	dnsnap_diag_t d;
	int err = dnsnap_snap_open(path, s, &d);
	if (err != DNSNAP_OK)
		return fail(cmd, NULL, "%s", d.msg); /* the message names the file */
	return 0;
}

int scan_snap(const char *cmd, dnsnap_snap_t *s, const uint8_t *prefix, size_t prefix_len,
	      int (*fn)(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
			size_t entry_len),
	      void *arg, uint64_t *damaged)
{
	dnsnap_scan_stats_t st;
	dnsnap_diag_t d;
	int err = dnsnap_snap_scan(s, prefix, prefix_len, fn, arg, &st, &d);
	if (damaged != NULL)
		*damaged = st.damaged;
	if (err == DNSNAP_OK)
		return 0;
	if (st.damaged > 0 || st.bad_pages > 0) {
		/* "SNAP: N damaged entries skipped (the first: entry 17 (at 0x..): ...)" */
		const char *path = dnsnap_snap_path(s), *first = d.msg;
		size_t pl = strlen(path);
		if (strncmp(first, path, pl) == 0 && first[pl] == ':' && first[pl + 1] == ' ')
			first += pl + 2;
		fail(cmd, path, "%llu damaged entr%s skipped (the first: %s); run dnsnap verify",
		     (unsigned long long)st.damaged, st.damaged == 1 ? "y" : "ies", first);
		return err == 1 ? 1 : EXIT_USAGE;
	}
	if (err == 1)
		return 1;
	return fail(cmd, NULL, "%s", d.msg); /* the message names the file */
}

int target_ok(const char *cmd, const char *path)
{
	struct stat st;
	char target[4096], why[8400];
	int e = dnsnap_path_target(path, target, sizeof target);
	if (e == -EPERM) /* a planted link, a directory anyone may write */
		return fail(cmd, path, "%s", dnsnap_path_strerror(path, e, why, sizeof why));
	if (stat(path, &st) != 0)
		return 0; /* none yet: made */
	if (!S_ISREG(st.st_mode))
		return fail(cmd, path, "not a regular file: a snapshot is written beside its path "
			    "and renamed over it");
	dnsnap_snap_t *s;
	if (open_snap(cmd, path, &s))
		return EXIT_USAGE;
	dnsnap_snap_close(s);
	return 0;
}

int publish_fail(const char *cmd, const char *path, int err, const dnsnap_diag_t *d,
		 const dnsnap_publish_stats_t *ps, unsigned long long wait_seconds)
{
	if (err == -EAGAIN)
		return fail(cmd, path, "another dnsnap is writing it (waited %llu s; see --wait)",
			    wait_seconds);
	if (err == DNSNAP_ECHECKSUM && ps->write.base_bad > 0)
		return fail(cmd, NULL, "%s (--drop-damaged writes it without them)", d->msg);
	if (d->msg[0] == 0)
		return fail(cmd, path, "%s", err < 0 && err > -4096 ? strerror(-err)
					      : dnsnap_strerror(err));
	return fail(cmd, NULL, "%s", d->msg); /* the library's message names the file */
}

uint32_t entry_expiry(const uint8_t *entry)
{
	return dnsnap_load_le32(entry + 4);
}

int entry_state(uint32_t expiry, uint32_t now)
{
	int32_t left = (int32_t)(expiry - now);
	return left > 0 ? ENTRY_LIVE : -(int64_t)left < DNSNAP_STALE_MAX ? ENTRY_STALE
								       : ENTRY_EXPIRED;
}

int time_check(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
	       size_t entry_len)
{
	time_refusals_t *t = arg;
	dnsnap_diag_t d;
	t->n++;
	if (dnsnap_entry_check_time(entry, entry_len, NULL, t->now, &d) == DNSNAP_OK)
		return 0;
	if (t->refused < TIME_NAMED) {
		dnsnap_key_t k;
		char name[1100], type[24] = "";
		if (dnsnap_key_decode(key, key_len, &k, NULL) == DNSNAP_OK) {
			print_name(k.name, k.name_len, name, sizeof name);
			print_type(type, sizeof type, k.qtype);
		} else {
			snprintf(name, sizeof name, "?");
		}
		snprintf(t->named[t->refused], sizeof t->named[0], "entry %llu (%.200s %.20s), its "
			 "%s: %.120s", (unsigned long long)t->n, name, type,
			 d.offset == 0 ? "Inception" : "Expiry", d.msg);
	}
	t->refused++;
	return 0;
}
