/*
 * serve_snap.h: the snapshot side of `dnsnap serve` (serve_snap.c): the file
 * mapped under the cache, published while serving, taken in when another
 * process published it.
 */
#ifndef DNSNAP_SERVE_SNAP_H
#define DNSNAP_SERVE_SNAP_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "dnsnap.h"

#define OLD_SNAPSHOT_S 86400   /* a snapshot older than this is warned about */
#define SAMPLE_ENTRIES 1000    /* entries looked at to tell "mostly expired" */

struct server;

/* The snapshot's side of the server (the main thread swaps the map, the
 * counters' readers read it, under mu) */
struct snap_side {
	pthread_mutex_t mu;
	dnsnap_snap_t *map;
	struct stat st;          /* of the last file at the path that failed to open */
	int ours;                /* map is what this process published last */
	uint64_t inserts_published; /* the cache's inserts when the last publish began */
	uint64_t writes, write_errors, last_at, last_entries;
	double last_seconds, longest_pause_ms;
};

/** The snapshot at start: cache-only, it must be there; forwarding, a missing
 * or damaged one is a cold start; one that is not a snapshot stops the start.
 * @return 0 or EXIT_USAGE (reported) */
int snap_first(struct server *s);
void snap_warn(struct server *s, dnsnap_snap_t *snap, uint32_t now);
void snap_swap(struct server *s, dnsnap_snap_t *fresh, const struct stat *st);
void reload(struct server *s, const char *why);
/** Publish now (nothing new since the last publish: nothing to do). @return 0,
 * or -1 (logged) */
int publish(struct server *s, const char *why);

/* What a publish is asked to do beyond publish()'s */
struct publish_req {
	int force;               /* publish even with nothing new (a flush) */
	int (*exclude)(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		       size_t entry_len);
	void *exclude_arg;       /* ... entries left out (dnsnap_publish_opts_t.exclude) */
};

/* What it did */
struct publish_res {
	int nothing_new;         /* skipped: the file holds all memory has */
	dnsnap_publish_stats_t ps;
	double seconds;
	char error[256];         /* when it failed */
};

/** publish() with @p rq (may be NULL) and its result in @p res (may be NULL). */
int publish_ex(struct server *s, const char *why, const struct publish_req *rq,
	       struct publish_res *res);
void watch(struct server *s);

#endif
