/*
 * serve_snap.c: the snapshot under `dnsnap serve`'s cache: mapped at start,
 * swapped on SIGHUP or when another process replaced it, published while
 * serving (server.h).
 */
#include "server.h"

/* ------------------------------------------------------------ snapshots */

struct sample {
	uint32_t now;
	uint64_t seen, expired;
};

static int sample_fn(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		     size_t entry_len)
{
	(void)key, (void)key_len, (void)entry_len;
	struct sample *sm = arg;
	sm->seen++;
	if ((int32_t)(ld32le(entry + 4) - sm->now) <= 0)
		sm->expired++;
	return sm->seen >= SAMPLE_ENTRIES;
}

/* At start and on every reload: a warning when the snapshot is old, or
 * when most of the entries looked at (the first SAMPLE_ENTRIES in key order)
 * are expired: the restart will not be as warm as it looks. */
void snap_warn(struct server *s, dnsnap_snap_t *snap, uint32_t now)
{
	dnsnap_snap_info_t in;
	dnsnap_snap_info(snap, &in);
	if (in.entry_count == 0)
		return;
	char iso[21];
	time_iso((uint32_t)in.created_at, iso);
	if (now > in.created_at && now - in.created_at > OLD_SNAPSHOT_S)
		slog(LOG_WARNING, "%s: the snapshot is old: written %s, %llu hours ago", s->path,
		     iso, (unsigned long long)(now - in.created_at) / 3600);
	struct sample sm = { .now = now };
	dnsnap_snap_foreach(snap, sample_fn, &sm);
	if (sm.seen > 0 && sm.expired * 2 > sm.seen)
		slog(LOG_WARNING, "%s: most entries are expired (%llu of the %llu looked at, "
		     "written %s): this start is mostly cold", s->path,
		     (unsigned long long)sm.expired, (unsigned long long)sm.seen, iso);
}

/* Put @p fresh (opened from s->path, whose stat is @p st) under the cache and
 * close the one before, which waits for the lookups still in it. */
void snap_swap(struct server *s, dnsnap_snap_t *fresh, const struct stat *st)
{
	dnsnap_snap_t *old = NULL;
	pthread_mutex_lock(&s->snap_mu);
	dnsnap_cache_attach(s->cache, fresh, &old);
	s->snap = fresh;
	if (st != NULL)
		s->snap_st = *st;
	else
		memset(&s->snap_st, 0, sizeof s->snap_st);
	pthread_mutex_unlock(&s->snap_mu);
	dnsnap_snap_close(old);
}

/* Whether @p a and @p b are the same file, as it was */
static int file_unchanged(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Open the file now at s->path and swap it in; a file that cannot be opened
 * changes nothing. @p why: "reloaded", "taken in" ... */
void reload(struct server *s, const char *why)
{
	struct stat st;
	if (stat(s->path, &st) != 0) {
		slog(LOG_WARNING, "%s: reload: %s; still serving what was there", s->path,
		     strerror(errno));
		return;
	}
	notify_systemd("RELOADING=1");
	dnsnap_snap_t *fresh;
	dnsnap_diag_t d;
	int err = dnsnap_snap_open(s->path, &fresh, &d);
	if (err != DNSNAP_OK) {
		if (s->snap != NULL) {
			dnsnap_snap_info_t in;
			dnsnap_snap_info(s->snap, &in);
			slog(LOG_ERR, "reload failed: %s; still serving the previous snapshot "
			     "(%llu %s)", d.msg, (unsigned long long)in.entry_count,
			     plural(in.entry_count, "entry", "entries"));
		} else {
			slog(LOG_ERR, "reload failed: %s; still serving from memory only", d.msg);
		}
		s->snap_st = st; /* not again until it changes */
		notify_systemd("READY=1");
		return;
	}
	snap_swap(s, fresh, &st);
	dnsnap_snap_info_t in;
	dnsnap_snap_info(fresh, &in);
	slog(LOG_INFO, "%s: %s: %llu %s, digest %016llx", s->path, why,
	     (unsigned long long)in.entry_count, plural(in.entry_count, "entry", "entries"),
	     (unsigned long long)in.digest);
	snap_warn(s, fresh, server_now(s));
	notify_systemd("READY=1");
}

/*
 * Publish SNAP: under the writers' lock, the in-memory entries merged with
 * the live ones of the file now at the path (not the one mapped: another
 * process, the old one of a deploy, may have published since), written
 * beside it, synced, renamed over it; then the new file is mapped
 * (dnsnap_snap_publish()). Lookups and inserts go on meanwhile (each cache
 * shard is copied under its read lock). A file at the path that is not a
 * snapshot, or of a newer format, is never replaced; a damaged one is. Nothing inserted since the last
 * publish: nothing to do. @return 0 or -1 (logged)
 */
static uint64_t cache_inserts(struct server *s)
{
	dnsnap_cache_stats_t cs;
	dnsnap_cache_stats(s->cache, &cs);
	return cs.inserts;
}

int publish(struct server *s, const char *why)
{
	int64_t t0 = mono_us();
	/* nothing inserted since the last publish: the file at the path holds all
	 * the cache has (or a later merge of it another process published) */
	uint64_t inserts = cache_inserts(s);
	if (inserts == s->inserts_published) {
		slog(LOG_DEBUG, "%s: not published (%s): nothing new since the last time", s->path,
		     why);
		return 0;
	}
	/* under the writers' lock, merged with the file now at the path (another
	 * process may have published since), the new file mapped before the lock
	 * goes; a damaged file is replaced, one that is not a snapshot never */
	dnsnap_diag_t d;
	dnsnap_publish_opts_t po = {
		.now = server_now(s), .wait_seconds = 60,
		.flags = DNSNAP_PUBLISH_DROP_DAMAGED | DNSNAP_PUBLISH_REPLACE_BAD,
		/* no more than memory may hold: entries evicted from memory do not
		 * live on in the file; with --serve-stale, what may still be served
		 * stale after a restart is kept */
		.max_bytes = s->snap_max_bytes ? s->snap_max_bytes : s->max_bytes,
		.stale_window = s->serve_stale,
	};
	dnsnap_publish_stats_t ps;
	dnsnap_snap_t *fresh = NULL;
	int err = dnsnap_snap_publish(s->cache, s->path, &po, &fresh, &ps, &d);
	if (err != DNSNAP_OK) {
		slog(LOG_ERR, "snapshot (%s) not written: %s%s", why, d.msg,
		     err == DNSNAP_EMAGIC || err == DNSNAP_EVERSION ? "; it is left as it is" : "");
		s->snap_write_errors++;
		return -1;
	}
	if (ps.base_err != 0)
		slog(LOG_WARNING, "%s; replaced with the cache's entries", ps.base_msg);
	if (fresh != NULL)
		snap_swap(s, fresh, NULL); /* watch() knows it by dnsnap_snap_same_file() */
	dnsnap_snap_write_stats_t ws = ps.write;
	double secs = (double)(mono_us() - t0) / 1e6;
	s->inserts_published = inserts;
	pthread_mutex_lock(&s->snap_mu);
	s->snap_writes++;
	s->snap_last_at = (uint64_t)time(NULL);
	s->snap_last_seconds = secs;
	s->snap_last_entries = ws.entries;
	s->snap_longest_pause_ms = ws.longest_pause_ms;
	pthread_mutex_unlock(&s->snap_mu);
	slog(LOG_INFO, "%s: published (%s): %llu %s (%llu from memory, %llu kept from the "
	     "file; %llu stale; %llu left out by the bound, %llu flushed), %.3f s, longest "
	     "insert pause %.3f ms", s->path, why,
	     (unsigned long long)ws.entries, plural(ws.entries, "entry", "entries"),
	     (unsigned long long)(ws.entries - ws.from_base), (unsigned long long)ws.from_base,
	     (unsigned long long)ps.stale, (unsigned long long)ps.over_bound,
	     (unsigned long long)ps.excluded, secs, ws.longest_pause_ms);
	return 0;
}

/* The tick: SNAP replaced by another process (not by us: publish() maps
 * what it wrote) is taken in. */
void watch(struct server *s)
{
	struct stat st;
	if (stat(s->path, &st) != 0)
		return;
	pthread_mutex_lock(&s->snap_mu);
	int same = s->snap != NULL && dnsnap_snap_same_file(s->snap, s->path);
	pthread_mutex_unlock(&s->snap_mu);
	if (!same && !file_unchanged(&st, &s->snap_st))
		reload(s, "taken in (replaced by another process)");
}
