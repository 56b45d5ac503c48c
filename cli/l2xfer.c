/*
 * l2xfer.c: `dnsnap import --from URL -o SNAP` and `dnsnap export SNAP --to
 * URL`: a snapshot from, or to, the shared second level (Redis) that `dnsnap
 * serve --l2` fills, so that a new host starts warm (libdnsnap-l2's bulk
 * calls, <dnsnap/l2.h>).
 *
 * import --from: every key under the prefix (SCAN on every master, pipelined
 * GETRANGEs), each value taken as untrusted (dnsnap_l2_value_accept() with
 * the default policy: the key, frame, check against the key, entry, times,
 * rcode, the records against the key's type); live ones (Expiry after
 * --now) go into an in-memory cache, which is then published as SNAP (sorted,
 * atomic: the old SNAP stays whole until the rename). A bad value is
 * skipped and counted, never written. A key SCAN gives twice is kept once.
 * No live entry at all (an empty Redis, a mistyped prefix or database) is
 * exit 1 and SNAP left as it was: never a warm snapshot emptied.
 *
 * export --to: every live entry of SNAP, SET under the prefix with PXAT at
 * its Expiry, pipelined in batches; the first error reply stops it (exit 2).
 * With --now T the entries live at T go, and each key's expiry is the time
 * its entry has left at T, counted from the real clock (the tests' vectors
 * hold 2023 times; Redis would drop their keys at once).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "json.h"
#include "l2.h"

int l2_prefix_arg(const char *cmd, const char *v)
{
	if (strlen(v) > DNSNAP_L2_PREFIX_MAX)
		return fail(cmd, NULL, "--l2-prefix: at most %d bytes", DNSNAP_L2_PREFIX_MAX);
	return 0;
}

int l2_auth_opts(const char *cmd, const char *file, struct dnsnap_l2_opts *o, char *user,
		 size_t ucap, char *pw, size_t pcap)
{
	char e[512];
	if (dnsnap_l2_auth_load(file, user, ucap, pw, pcap, e, sizeof e) != 0)
		return fail(cmd, NULL, "--l2-auth-file: %s", e);
	o->user = user[0] ? user : NULL;
	o->password = pw[0] ? pw : NULL;
	return 0;
}

struct import_ctx {
	dnsnap_cache_t *cache;
	uint32_t now;
	uint64_t read, live, expired, bad;
	int err;                 /* the in-memory cache's, which stopped the scan */
	char first_bad[300];
};

/* One value of the scan. @return 0, or 1 (x->err) to stop it */
static int import_one(void *arg, const uint8_t *key, size_t key_len, const uint8_t *val,
		      size_t len)
{
	struct import_ctx *x = arg;
	const uint8_t *e;
	size_t el;
	dnsnap_diag_t d = { 0 };
	x->read++;
	/* the default policy: the snapshot's future server's is not known here */
	int err = dnsnap_l2_value_accept(NULL, key, key_len, val, len, x->now, &e, &el, &d);
	if (err == DNSNAP_ENOTFOUND) {
		x->expired++;
		return 0;
	}
	if (err != DNSNAP_OK) {
		if (x->bad++ == 0)
			snprintf(x->first_bad, sizeof x->first_bad, "%s at byte %zu", d.msg,
				 d.offset);
		return 0;
	}
	err = dnsnap_cache_insert_entry(x->cache, key, key_len, e, el);
	if (err != DNSNAP_OK) {
		x->err = err;
		return 1;
	}
	x->live++;
	return 0;
}

int import_from_l2(const char *url, const char *out, const char *prefix, const char *auth_file,
		   uint32_t now, unsigned long long wait, int json)
{
	static const char cmd[] = "import";
	static char user[256], pw[1024];
	dnsnap_l2_opts_t o = { .url = url, .prefix = prefix };
	if (l2_auth_opts(cmd, auth_file, &o, user, sizeof user, pw, sizeof pw))
		return EXIT_USAGE;
	if (target_ok(cmd, out)) /* before Redis is read: checked again under the lock */
		return EXIT_USAGE;
	int rc = EXIT_USAGE;
	struct import_ctx x = { .now = now };
	dnsnap_l2_bulk_t *b = NULL;
	dnsnap_cache_opts_t co;
	dnsnap_cache_opts_default(&co);
	co.max_bytes = 0; /* all of it: the snapshot is the point */
	char e[512];
	int err = dnsnap_cache_new(&co, &x.cache);
	if (err != DNSNAP_OK) {
		fail(cmd, NULL, "%s", dnsnap_strerror(err));
		goto out;
	}
	if (dnsnap_l2_bulk_open(&o, &b, e, sizeof e) != 0) {
		fail(cmd, url, "%s", e);
		goto out;
	}
	uint64_t skipped = 0;
	int r = dnsnap_l2_bulk_scan(b, import_one, &x, &skipped, e, sizeof e);
	if (r < 0) {
		fail(cmd, url, "%s", e);
		goto out;
	}
	if (r > 0) {
		fail(cmd, NULL, "the in-memory cache: %s", dnsnap_strerror(x.err));
		goto out;
	}
	x.bad += skipped;
	if (x.live == 0) {
		/* an empty Redis, a wrong prefix or database: never a reason to empty a
		 * warm snapshot */
		fprintf(stderr, "dnsnap import: %s: no live entry under the prefix \"%s\" (%llu "
			"keys read: %llu expired, %llu bad): %s left as it was\n", url,
			prefix ? prefix : DNSNAP_L2_DEFAULT_PREFIX,
			(unsigned long long)(x.read + skipped),
			(unsigned long long)x.expired, (unsigned long long)x.bad, out);
		rc = EXIT_NONE;
		goto out;
	}
	dnsnap_diag_t d = { 0 };
	dnsnap_publish_opts_t po = { .now = now, .wait_seconds = (int)wait,
				     .flags = DNSNAP_PUBLISH_REPLACE };
	dnsnap_publish_stats_t ps;
	err = dnsnap_snap_publish(x.cache, out, &po, NULL, &ps, &d);
	if (err != DNSNAP_OK) {
		publish_fail(cmd, out, err, &d, &ps, wait);
		goto out;
	}
	const dnsnap_snap_write_stats_t st = ps.write;
	if (json) {
		jw_t j;
		jw_init(&j, stdout);
		jw_obj(&j);
		jw_kstr(&j, "input", url);
		jw_kstr(&j, "snapshot", out);
		jw_ku64(&j, "keys_read", x.read + skipped);
		jw_ku64(&j, "entries", st.entries);
		jw_ku64(&j, "expired", x.expired);
		jw_ku64(&j, "bad", x.bad);
		char iso[21];
		time_iso(now, iso);
		jw_kstr(&j, "now", iso);
		jw_ku64(&j, "bytes_out", st.file_size);
		jw_end(&j);
		jw_nl(&j); /* main() checks that standard output took it */
	} else {
		fprintf(stderr, "dnsnap import: %s: %llu %s into %s; left out: %llu expired, "
			"%llu bad\n", url, (unsigned long long)st.entries,
			plural(st.entries, "entry", "entries"), out, (unsigned long long)x.expired,
			(unsigned long long)x.bad);
	}
	if (x.bad)
		fprintf(stderr, "dnsnap import: %s: %llu %s refused, the first: %s%s\n", url,
			(unsigned long long)x.bad, plural(x.bad, "value", "values"),
			x.first_bad[0] ? x.first_bad : "not a string, or too long",
			skipped ? " (some were not strings or too long)" : "");
	rc = 0;
out:
	dnsnap_l2_bulk_close(b);
	dnsnap_cache_free(x.cache);
	explicit_bzero(pw, sizeof pw);
	return rc;
}

struct export_ctx {
	dnsnap_l2_bulk_t *b;
	uint32_t now;
	int64_t shift_ms;        /* the real clock - --now, 0 without --now */
	uint64_t sent, expired;
	uint8_t val[DNSNAP_L2_VALUE_MAX];
	char err[512];
};

static int export_one(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
		      size_t entry_len)
{
	struct export_ctx *x = arg;
	dnsnap_hdr_t h;
	size_t n;
	if (dnsnap_entry_header(entry, entry_len, &h, NULL) != DNSNAP_OK)
		return DNSNAP_EFIELD; /* the scan checked it: cannot be */
	if (h.expiry <= x->now) {
		x->expired++;
		return 0;
	}
	int err = dnsnap_l2_value_seal(key, key_len, entry, entry_len, x->val, sizeof x->val, &n);
	if (err != DNSNAP_OK)
		return err;
	if (dnsnap_l2_bulk_put(x->b, key, key_len, x->val, n,
			(uint64_t)((int64_t)h.expiry * 1000 + x->shift_ms), x->err, sizeof x->err) != 0)
		return 1;
	x->sent++;
	return 0;
}

int export_to_l2(const char *path, const char *url, const char *prefix, const char *auth_file,
		 uint32_t now, int has_now, int json)
{
	static const char cmd[] = "export";
	static char user[256], pw[1024];
	dnsnap_l2_opts_t o = { .url = url, .prefix = prefix };
	if (l2_auth_opts(cmd, auth_file, &o, user, sizeof user, pw, sizeof pw))
		return EXIT_USAGE;
	dnsnap_snap_t *s;
	if (open_snap(cmd, path, &s))
		return EXIT_USAGE;
	int rc = EXIT_USAGE;
	struct export_ctx *x = calloc(1, sizeof *x);
	if (x == NULL) {
		fail(cmd, NULL, "out of memory");
		goto out;
	}
	x->now = now;
	if (has_now) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		x->shift_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 - (int64_t)now * 1000;
	}
	if (dnsnap_l2_bulk_open(&o, &x->b, x->err, sizeof x->err) != 0) {
		fail(cmd, url, "%s", x->err);
		goto out;
	}
	dnsnap_diag_t d = { 0 };
	dnsnap_scan_stats_t ss = { 0 };
	int r = dnsnap_snap_scan(s, NULL, 0, export_one, x, &ss, &d);
	/* damaged entries were skipped: the good ones still go, then exit 2 */
	if (r == 1 || dnsnap_l2_bulk_flush(x->b, x->err, sizeof x->err) != 0) {
		fail(cmd, url, "%s", x->err);
		goto out;
	}
	/* the summary, also when damaged entries were skipped (then exit 2) */
	if (json) {
		jw_t j;
		jw_init(&j, stdout);
		jw_obj(&j);
		jw_kstr(&j, "snapshot", path);
		jw_kstr(&j, "output", url);
		jw_ku64(&j, "entries", x->sent);
		jw_ku64(&j, "expired", x->expired);
		jw_ku64(&j, "damaged", ss.damaged);
		jw_end(&j);
		jw_nl(&j); /* main() checks that standard output took it */
	} else {
		fprintf(stderr, "dnsnap export: %s: %llu %s written; left out: %llu expired, "
			"%llu damaged\n", url, (unsigned long long)x->sent,
			plural(x->sent, "entry", "entries"), (unsigned long long)x->expired,
			(unsigned long long)ss.damaged);
	}
	if (r != 0) {
		fail(cmd, NULL, "%s (%llu damaged %s skipped, the good ones written)",
		     d.msg[0] ? d.msg : dnsnap_strerror(r), (unsigned long long)ss.damaged,
		     plural(ss.damaged, "entry", "entries"));
		goto out;
	}
	rc = 0;
out:
	if (x != NULL)
		dnsnap_l2_bulk_close(x->b);
	free(x);
	dnsnap_snap_close(s);
	explicit_bzero(pw, sizeof pw);
	return rc;
}
