/*
 * serve_snap.c: the snapshot under `dnsnap serve`'s cache: mapped at start,
 * swapped on SIGHUP or when another process replaced it, published while
 * serving (server.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "log.h"
#include "notify.h"
#include "server.h"

static const char CMD[] = "serve";

int snap_first(struct server *s)
{
	dnsnap_snap_t *snap = NULL;
	struct stat st;
	if (!s->cfg->forwarding) { /* cache-only: it must be there */
		if (open_snap(CMD, s->path, &snap))
			return EXIT_USAGE;
		stat(s->path, &st);
		snap_swap(s, snap, &st);
		return 0;
	}
	if (stat(s->path, &st) != 0) {
		if (errno != ENOENT)
			return fail(CMD, s->path, "%s", strerror(errno));
		slog(LOG_INFO, "%s: no snapshot yet: a cold start", s->path);
		return 0;
	}
	dnsnap_diag_t d;
	int err = dnsnap_snap_open(s->path, &snap, &d);
	if (err == DNSNAP_EMAGIC || err == DNSNAP_EVERSION)
		return fail(CMD, NULL, "%s (the server would replace it)", d.msg);
	if (err == -EACCES || err == -EPERM)
		return fail(CMD, NULL, "%s (the server must read and replace it)", d.msg);
	if (err != DNSNAP_OK) {
		slog(LOG_WARNING, "%s; a cold start (the next snapshot replaces it)", d.msg);
		return 0;
	}
	snap_swap(s, snap, &st);
	return 0;
}

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
	if ((int32_t)(dnsnap_load_le32(entry + 4) - sm->now) <= 0)
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
	pthread_mutex_lock(&s->snap.mu);
	dnsnap_cache_attach(s->cache, fresh, &old);
	s->snap.map = fresh;
	if (st != NULL)
		s->snap.st = *st;
	else
		memset(&s->snap.st, 0, sizeof s->snap.st);
	pthread_mutex_unlock(&s->snap.mu);
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
		if (s->snap.map != NULL) {
			dnsnap_snap_info_t in;
			dnsnap_snap_info(s->snap.map, &in);
			slog(LOG_ERR, "reload failed: %s; still serving the previous snapshot "
			     "(%llu %s)", d.msg, (unsigned long long)in.entry_count,
			     plural(in.entry_count, "entry", "entries"));
		} else {
			slog(LOG_ERR, "reload failed: %s; still serving from memory only", d.msg);
		}
		s->snap.st = st; /* not again until it changes */
		notify_systemd("READY=1");
		return;
	}
	snap_swap(s, fresh, &st);
	s->snap.ours = 0; /* another's file: memory may hold what it lacks */
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
 * snapshot, or of a newer format, is never replaced; a damaged one is.
 */
static uint64_t cache_count(struct server *s, uint64_t *entries)
{
	dnsnap_cache_stats_t cs;
	dnsnap_cache_stats(s->cache, &cs);
	*entries = cs.entries;
	return cs.inserts;
}

/* Whether memory may hold what the file does not: inserts since this
 * process last published, or a file it took in from another process (or
 * mapped at start) while memory holds entries. */
static int unpublished(struct server *s, uint64_t inserts, uint64_t entries)
{
	return inserts != s->snap.inserts_published || (!s->snap.ours && entries > 0);
}

static void published_log(struct server *s, const char *why, const dnsnap_publish_stats_t *ps,
			  double secs)
{
	const dnsnap_snap_write_stats_t *ws = &ps->write;
	slog(LOG_INFO, "%s: published (%s): %llu %s (%llu from memory, %llu kept from the "
	     "file; %llu stale; %llu left out by the bound, %llu flushed), %.3f s, longest "
	     "insert pause %.3f ms", s->path, why,
	     (unsigned long long)ws->entries, plural(ws->entries, "entry", "entries"),
	     (unsigned long long)(ws->entries - ws->from_base), (unsigned long long)ws->from_base,
	     (unsigned long long)ps->stale, (unsigned long long)ps->over_bound,
	     (unsigned long long)ps->excluded, secs, ws->longest_pause_ms);
}

int publish_ex(struct server *s, const char *why, const struct publish_req *rq,
	       struct publish_res *res)
{
	int64_t t0 = mono_us();
	struct publish_res none;
	res = res != NULL ? res : &none;
	memset(res, 0, sizeof *res);
	uint64_t entries, inserts = cache_count(s, &entries);
	if (!(rq != NULL && rq->force) && !unpublished(s, inserts, entries)) {
		res->nothing_new = 1;
		slog(LOG_INFO, "%s: not published (%s): nothing new since the last publish", s->path,
		     why);
		return 0;
	}
	dnsnap_diag_t d;
	dnsnap_publish_opts_t po = {
		.now = server_now(s), .wait_seconds = 60,
		.flags = DNSNAP_PUBLISH_DROP_DAMAGED | DNSNAP_PUBLISH_REPLACE_BAD,
		/* no more than memory may hold: entries evicted from memory do not
		 * live on in the file; with --serve-stale, what may still be served
		 * stale after a restart is kept */
		.max_bytes = s->cfg->snap_max_bytes ? s->cfg->snap_max_bytes : s->cfg->max_bytes,
		.stale_window = s->cfg->serve_stale,
		.exclude = rq != NULL ? rq->exclude : NULL,
		.exclude_arg = rq != NULL ? rq->exclude_arg : NULL,
	};
	dnsnap_snap_t *fresh = NULL;
	int err = dnsnap_snap_publish(s->cache, s->path, &po, &fresh, &res->ps, &d);
	if (err != DNSNAP_OK) {
		slog(LOG_ERR, "snapshot (%s) not written: %s%s", why, d.msg,
		     err == DNSNAP_EMAGIC || err == DNSNAP_EVERSION ? "; it is left as it is" : "");
		snprintf(res->error, sizeof res->error, "%s", d.msg);
		s->snap.write_errors++;
		return -1;
	}
	if (res->ps.base_err != 0)
		slog(LOG_WARNING, "%s; replaced with the cache's entries", res->ps.base_msg);
	if (fresh != NULL)
		snap_swap(s, fresh, NULL); /* watch() knows it by dnsnap_snap_same_file() */
	s->snap.ours = fresh != NULL;
	res->seconds = (double)(mono_us() - t0) / 1e6;
	s->snap.inserts_published = inserts;
	pthread_mutex_lock(&s->snap.mu);
	s->snap.writes++;
	s->snap.last_at = (uint64_t)time(NULL);
	s->snap.last_seconds = res->seconds;
	s->snap.last_entries = res->ps.write.entries;
	s->snap.longest_pause_ms = res->ps.write.longest_pause_ms;
	pthread_mutex_unlock(&s->snap.mu);
	published_log(s, why, &res->ps, res->seconds);
	return 0;
}

int publish(struct server *s, const char *why)
{
	return publish_ex(s, why, NULL, NULL);
}

/* The tick: SNAP replaced by another process (not by us: publish() maps
 * what it wrote) is taken in. */
void watch(struct server *s)
{
	struct stat st;
	if (stat(s->path, &st) != 0)
		return;
	pthread_mutex_lock(&s->snap.mu);
	int same = s->snap.map != NULL && dnsnap_snap_same_file(s->snap.map, s->path);
	pthread_mutex_unlock(&s->snap.mu);
	if (!same && !file_unchanged(&st, &s->snap.st))
		reload(s, "taken in (replaced by another process)");
}
