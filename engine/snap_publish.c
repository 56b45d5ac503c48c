/*
 * snap_publish.c: the safe publish of a snapshot, in one call
 * (dnsnap_snap_publish(), dnsnap_snap_publish_fill()): the writers' lock, the
 * file now at the path opened as the base (a file that is not a snapshot,
 * or of a later version, is never replaced), the new entries written beside
 * it (merged with the base's, or filtered from it), synced, renamed over it,
 * the new file mapped, the lock released. Every writer of the tool and of
 * `dnsnap serve` goes through here, so the order of those steps is written
 * once.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../format/internal.h"
#include "cache_internal.h"
#include "dnsnap.h"

/* Whether an error of dnsnap_snap_open() is damage (the file is a snapshot
 * of ours, or was one) rather than another kind of file or a later version */
static int open_damage(int err)
{
	return err == DNSNAP_ETRUNC || err == DNSNAP_ECHECKSUM || err == DNSNAP_EFIELD ||
	       err == DNSNAP_ERESERVED;
}

static int count_only(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		      size_t entry_len)
{
	(void)arg, (void)key, (void)key_len, (void)entry, (void)entry_len;
	return 0;
}

/* No damaged entry in @p base (what a merge would lose silently): the file
 * hash first (one read of the file), then, only when it fails, a scan
 * counting the entries that do not check. @return DNSNAP_OK or
 * DNSNAP_ECHECKSUM with diag */
static int base_whole(dnsnap_snap_t *base, const char *path, uint64_t *damaged,
		      dnsnap_diag_t *d)
{
	if (dnsnap_snap_check_hash(base, NULL) == DNSNAP_OK)
		return DNSNAP_OK;
	dnsnap_scan_stats_t st;
	dnsnap_diag_t sd;
	int err = dnsnap_snap_scan(base, NULL, 0, count_only, NULL, &st, &sd);
	if (err == DNSNAP_OK || st.damaged == 0)
		return DNSNAP_OK; /* bytes outside every entry changed: nothing to lose */
	*damaged = st.damaged;
	return dnsnap__diag(d, DNSNAP_ECHECKSUM, sd.offset,
			    "%s: %llu damaged entr%s: the snapshot is unchanged", path,
			    (unsigned long long)st.damaged, st.damaged == 1 ? "y" : "ies");
}

/*
 * The file now at @p path, under the lock, as the publish's base: NULL when
 * there is none (or it is to be replaced without being read). @return
 * DNSNAP_OK, or the reason it may not be replaced (diag)
 */
static int open_base(const char *path, unsigned flags, dnsnap_snap_t **base,
		     dnsnap_publish_stats_t *ps, dnsnap_diag_t *d)
{
	struct stat st;
	*base = NULL;
	if (stat(path, &st) != 0)
		return errno == ENOENT ? DNSNAP_OK
		       : dnsnap__diag(d, -errno, 0, "%s: %s", path, strerror(errno));
	dnsnap_diag_t od = { 0 };
	int err = dnsnap_snap_open(path, base, &od);
	if (err == DNSNAP_OK) {
		if (flags & DNSNAP_PUBLISH_REPLACE) {
			dnsnap_snap_close(*base);
			*base = NULL;
		}
		return DNSNAP_OK;
	}
	*base = NULL;
	if (open_damage(err) && (flags & (DNSNAP_PUBLISH_REPLACE | DNSNAP_PUBLISH_REPLACE_BAD))) {
		ps->base_err = err;
		memcpy(ps->base_msg, od.msg, sizeof ps->base_msg);
		ps->base_msg[sizeof ps->base_msg - 1] = 0;
		return DNSNAP_OK; /* damaged beyond opening: replaced, as asked */
	}
	if (d != NULL)
		*d = od;
	return err;
}

/* The steps between the lock and the unlock: the base, the writing, the map. */
static int publish_locked(dnsnap_cache_t *c, const char *path, const dnsnap_publish_opts_t *o,
			  dnsnap_publish_fill_fn fill, void *arg, dnsnap_snap_t **map,
			  dnsnap_publish_stats_t *ps, dnsnap_diag_t *d)
{
	dnsnap_snap_t *base;
	int err = open_base(path, o->flags, &base, ps, d);
	if (err != DNSNAP_OK)
		return err;
	if (c != NULL) {
		if (base != NULL && !(o->flags & DNSNAP_PUBLISH_DROP_DAMAGED))
			err = base_whole(base, path, &ps->write.base_bad, d);
		dnsnap__merge_opts_t mo = {
			.now = o->now, .stale_window = o->stale_window, .max_bytes = o->max_bytes,
			.exclude = o->exclude, .exclude_arg = o->exclude_arg,
		};
		dnsnap__merge_counts_t mc = { 0 };
		if (err == DNSNAP_OK)
			err = dnsnap__snap_merge(c, base, path, &mo, &ps->write, &mc, d);
		ps->excluded = mc.excluded;
		ps->over_bound = mc.over_bound;
		ps->stale = mc.stale;
		ps->base_refused = mc.refused;
	} else {
		dnsnap_snapw_t *w;
		err = dnsnap_snapw_begin(path, &w, d);
		if (err == DNSNAP_OK) {
			err = fill(arg, base, w, &ps->write, d);
			if (err == DNSNAP_OK) {
				dnsnap_snap_write_stats_t cs;
				err = dnsnap_snapw_commit(w, &cs, d);
				/* the fill's own counts stay; the commit's are the file's */
				ps->write.entries = cs.entries;
				ps->write.entry_bytes = cs.entry_bytes;
				ps->write.file_size = cs.file_size;
			} else {
				dnsnap_snapw_abort(w);
			}
		}
	}
	ps->base_merged = base != NULL;
	dnsnap_snap_close(base);
	if (err != DNSNAP_OK || map == NULL)
		return err;
	/* mapped before the lock goes: no other writer can have replaced it */
	dnsnap_diag_t md;
	if (dnsnap_snap_open(path, map, &md) != DNSNAP_OK)
		*map = NULL; /* published all the same; the caller opens it again */
	return DNSNAP_OK;
}

static int publish(dnsnap_cache_t *c, const char *path, const dnsnap_publish_opts_t *o,
		   dnsnap_publish_fill_fn fill, void *arg, dnsnap_snap_t **map,
		   dnsnap_publish_stats_t *stats, dnsnap_diag_t *d)
{
	dnsnap_publish_stats_t ps;
	memset(&ps, 0, sizeof ps);
	if (map != NULL)
		*map = NULL;
	if (path == NULL || o == NULL || (c == NULL && fill == NULL))
		return dnsnap__diag(d, DNSNAP_EINVAL, 0, "invalid argument");
	dnsnap_snap_lock_t *lk;
	int err = dnsnap_snap_lock(path, o->wait_seconds, &lk, d);
	if (err != DNSNAP_OK)
		return err;
	err = publish_locked(c, path, o, fill, arg, map, &ps, d);
	dnsnap_snap_unlock(lk);
	if (stats != NULL)
		*stats = ps;
	return err;
}

int dnsnap_snap_publish(dnsnap_cache_t *c, const char *path, const dnsnap_publish_opts_t *o,
			dnsnap_snap_t **map, dnsnap_publish_stats_t *stats, dnsnap_diag_t *d)
{
	if (c == NULL)
		return dnsnap__diag(d, DNSNAP_EINVAL, 0, "invalid argument");
	return publish(c, path, o, NULL, NULL, map, stats, d);
}

int dnsnap_snap_publish_fill(const char *path, const dnsnap_publish_opts_t *o,
			     dnsnap_publish_fill_fn fill, void *arg, dnsnap_snap_t **map,
			     dnsnap_publish_stats_t *stats, dnsnap_diag_t *d)
{
	if (fill == NULL)
		return dnsnap__diag(d, DNSNAP_EINVAL, 0, "invalid argument");
	return publish(NULL, path, o, fill, arg, map, stats, d);
}
