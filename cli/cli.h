/*
 * cli.h: what the commands share: error reporting, argument parsing, opening
 * a snapshot, progress on a terminal. The commands use only the public
 * headers (dnsnap.h, and l2.h for Redis). By file, each depending only on
 * those above it: report.c (messages, progress), opt.c (options, numbers,
 * times), filter.c (the filters, over print.c's names), snapfile.c (a
 * snapshot opened, scanned, published), outfile.c (outputs and inputs).
 */
#ifndef DNSNAP_CLI_H
#define DNSNAP_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dnsnap.h"

/* Exit codes, like grep's */
#define EXIT_FOUND 0
#define EXIT_NONE 1
#define EXIT_USAGE 2

/** "dnsnap CMD: FILE: message" on stderr (or where fail_redirect() said).
 * @return EXIT_USAGE */
int fail(const char *cmd, const char *file, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** fail()'s messages in this thread to @p f (NULL: stderr again), for a
 * command run on behalf of a control client. @return the stream before */
FILE *fail_redirect(FILE *f);

/*
 * Options (opt.c): getopt_long with the tool's messages. A command's loop:
 *   while ((c = opt_next(cmd, argc, argv, "o:", longopts)) != -1)
 *       switch (c) { ... case OPT_ERROR: default: return EXIT_USAGE; }
 * then its operands are argv[optind .. argc-1] (opt_operands() counts them).
 * Options and operands mix in any order; --opt=VALUE and -- work.
 */
struct option;
#define OPT_ERROR (-2)

/** The next option's value (a short letter or a long option's val), -1 at
 * the end; OPT_ERROR after reporting an unknown option or a missing value. */
int opt_next(const char *cmd, int argc, char **argv, const char *shortopts,
	     const struct option *longopts);

/** Check the operands left after the options: at least @p min, at most @p max
 * (-1: no limit); else report "needs WHAT" or "unexpected argument".
 * @return how many, or -1 (reported) */
int opt_operands(const char *cmd, int argc, char **argv, int min, int max, const char *what);

/**
 * A time option (--now): Unix seconds, ISO 8601 in UTC or with an offset
 * (2026-11-30T12:00:00Z, 2026-11-30T13:00+01:00, 2026-11-30), or relative to
 * the clock (+1h, -30m, +90s, -2d, +1w). @return 0 or EXIT_USAGE (reported)
 */
int time_arg(const char *cmd, const char *opt, const char *v, uint32_t *out);

/** A Unix time as ISO 8601 UTC ("2026-11-30T12:00:00Z"). */
void time_iso(uint32_t t, char out[21]);

/** An unsigned decimal of at most @p max (--now, --top ...). @return 0 or EXIT_USAGE */
int number(const char *cmd, const char *opt, const char *v, unsigned long long max,
	   unsigned long long *out);

/** A tag in hex, at most DNSNAP_TAG_MAX bytes. @return 0 or -1 */
int hex_tag(const char *h, uint8_t *tag, size_t *len);

/** Open a snapshot, reporting a failure. @return 0 or EXIT_USAGE */
int open_snap(const char *cmd, const char *path, dnsnap_snap_t **s);

/** A library message (dnsnap_diag_t's msg, "PATH: what is wrong") without
 * its "PATH: ", for JSON, where the file is a member of its own. */
const char *diag_reason(const char *path, const char *msg);

/** An error's name for JSON: DNSNAP_E*, or the errno's ("ENOENT") for a file
 * that could not be opened or mapped; NULL when it has none. */
const char *err_name(int err);

/* --wait's default: how long a command that rewrites a snapshot waits for
 * another writer's lock (dnsnap_snap_lock()) before it gives up */
#define WAIT_DEFAULT 60

/** Whether a snapshot may be published at @p path: nothing there yet, or a
 * snapshot this dnsnap reads (never another file), checked before a long
 * read of inputs; dnsnap_snap_publish() checks it again under the writers'
 * lock. @return 0, or EXIT_USAGE (reported) */
int target_ok(const char *cmd, const char *path);

/* A failed dnsnap_snap_publish() (or _fill()) reported for @p cmd: another
 * writer's lock held (--wait named), damaged entries in the base
 * (--drop-damaged named), else the library's message. @return EXIT_USAGE */
int publish_fail(const char *cmd, const char *path, int err, const dnsnap_diag_t *d,
		 const dnsnap_publish_stats_t *ps, unsigned long long wait_seconds);

/** Whether two paths name one file (same device and inode, through links);
 * "-" is the descriptor std_a / std_b (0 stdin, 1 stdout). */
int same_file(const char *a, int std_a, const char *b, int std_b);

/**
 * An output file of a command (-o OUT) that writes a stream or text:
 * - "-", or a path naming this process's standard output: written to fd 1;
 * - a path that exists and is not a regular file (/dev/null, a FIFO, a
 *   terminal): opened and written in place, never replaced;
 * - otherwise (a regular file, or none yet): written to a temporary beside
 *   the file OUT finally names (symbolic links followed), renamed over it by
 *   out_close() when whole: an existing OUT is never left half-overwritten.
 */
typedef struct out_file {
	int fd;
	const char *name;        /* for messages: OUT, or "standard output" */
	int replace;             /* tmp is renamed over target */
	char target[4096];
	char tmp[4160];
} out_file_t;

/** Open @p out; @p binary: refuse a terminal. @return 0 or EXIT_USAGE (reported) */
int out_open(const char *cmd, const char *out, int binary, out_file_t *o);

/** Finish: @p ok publishes (renames the temporary), else it is removed.
 * Closes the descriptor unless @p closed (fdopen'ed and fclose'd). @return 0 or -errno */
int out_close(out_file_t *o, int ok, int closed);

/** A whole file, or stdin for "-", into a malloc'd buffer. @return 0 or -errno */
/**
 * Walk a snapshot's entries (those under @p prefix) for command @p cmd:
 * dnsnap_snap_scan(), with its damage reported on stderr (how many entries
 * were skipped, the first one named). @p fn returns 1 to stop.
 * @return 0 a clean walk; 1 fn stopped it; EXIT_USAGE after damage or a
 *         failed walk (reported). @p damaged (may be NULL): entries skipped
 */
int scan_snap(const char *cmd, dnsnap_snap_t *s, const uint8_t *prefix, size_t prefix_len,
	      int (*fn)(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
			size_t entry_len),
	      void *arg, uint64_t *damaged);

/**
 * The time rule over a snapshot's entries (dnsnap_entry_check_time() at
 * t->now with the default policy: cached more than DNSNAP_TIME_SKEW_S in the
 * future, or living past the longest TTL): a scan_snap() callback, never
 * stopping, counting the entries it refuses and naming the first TIME_NAMED
 * ("entry N (NAME TYPE), its Inception: why").
 */
#define TIME_NAMED 10
typedef struct time_refusals {
	uint32_t now;
	uint64_t n;              /* entries seen */
	uint64_t refused;
	char named[TIME_NAMED][400];
} time_refusals_t;

int time_check(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
	       size_t entry_len);

/** The clock, or @p now when that is later: the time rule's now for a
 * command whose --now may lie in the past (an entry is judged at the later). */
static inline uint32_t rule_now(uint32_t now, uint32_t clock)
{
	return (int32_t)(now - clock) > 0 ? now : clock;
}

int slurp(const char *path, uint8_t **out, size_t *out_len);

/**
 * Entry filters shared by dump and purge: --name NAME (that name's keys),
 * --zone ZONE (the keys at and under it), --type TYPE, --tag HEX. Each may
 * be repeated: an entry passes when its key is under any --name or --zone
 * given (or none was), its type is any --type given (or none was), and its
 * tag any --tag given (or none was). --tag '' is the untagged entries.
 */
#define FILTER_MAX 64            /* of each kind */
typedef struct filter {
	int any;                 /* a filter option was given */
	size_t n_prefix;         /* 0: every key */
	uint8_t prefix[FILTER_MAX][DNSNAP_NAME_MAX + 1];
	size_t prefix_len[FILTER_MAX];
	size_t n_type;
	uint16_t type[FILTER_MAX];
	size_t n_tag;
	uint8_t tag[FILTER_MAX][DNSNAP_TAG_MAX];
	size_t tag_len[FILTER_MAX];
} filter_t;

/* The filter options' vals (high, clear of a command's own long options) and
 * the entries for a command's getopt_long table */
enum { OPT_NAME = 0x1000, OPT_ZONE, OPT_TYPE, OPT_TAG };
#define FILTER_LONGOPTS                                                                    \
	{ "name", required_argument, NULL, OPT_NAME },                                     \
	{ "zone", required_argument, NULL, OPT_ZONE },                                     \
	{ "type", required_argument, NULL, OPT_TYPE },                                     \
	{ "tag", required_argument, NULL, OPT_TAG }

/**
 * Take option @p c (from opt_next()) with its value @p v if it is a filter's:
 * --name and --zone through ldns_dname_new_frm_str(), --type through
 * ldns_get_rr_type_by_name() (a mnemonic or TYPEnnn), --tag in hex.
 * @return 1 taken, 0 not a filter option, EXIT_USAGE (reported) on a bad value
 */
int filter_opt(const char *cmd, filter_t *f, int c, const char *v);

/** A type (AAAA, or TYPEnnn of RFC 3597) or a class (IN, CH, or CLASSnnn) as
 * given on the command line: 1 to 65535, or -1 when it is none. */
long rr_type_arg(const char *v);
long rr_class_arg(const char *v);

/** After the options: the prefixes sorted, and those under another one
 * dropped (a key under two is walked once). @return 0 */
int filter_ready(const char *cmd, filter_t *f);

/** Whether a key (raw and decoded) passes the filter: prefix, type and tag. */
int filter_match(const filter_t *f, const uint8_t *key, size_t key_len, const dnsnap_key_t *k);

/**
 * scan_snap() over the keys under the filter's prefixes (every key when it
 * has none), each prefix walked once, in key order; @p fn sees only the
 * entries filter_match() passes. @return and @p damaged: as scan_snap()'s,
 * the damage summed over the walks
 */
int filter_scan(const char *cmd, dnsnap_snap_t *s, const filter_t *f,
		int (*fn)(void *arg, const uint8_t *key, size_t key_len, const uint8_t *entry,
			  size_t entry_len),
		void *arg, uint64_t *damaged);

/** An entry's Expiry (the entry is at least its 18-byte header long). */
uint32_t entry_expiry(const uint8_t *entry);

/** An entry's state at @p now: live; stale (expired less than DNSNAP_STALE_MAX
 * ago: a server with --serve-stale may still answer with it, never as fresh);
 * expired (longer ago). */
enum { ENTRY_LIVE, ENTRY_STALE, ENTRY_EXPIRED };
int entry_state(uint32_t expiry, uint32_t now);

/**
 * Progress on stderr when it is a terminal: "verify: 1,234,567 of 2,000,000
 * entries (61%), 812,345/s". progress_start() returns NULL otherwise, which
 * the library takes as "no reports".
 */
typedef struct progress {
	dnsnap_progress_t p;
	const char *what;
	const char *unit;        /* "entries" unless the caller says otherwise */
	double t0;
	int shown;
} progress_t;

const dnsnap_progress_t *progress_start(progress_t *pg, const char *what);
void progress_report(void *arg, uint64_t done, uint64_t total);
/** End the progress line (the last report stays on the terminal). */
void progress_end(progress_t *pg);

/** "entry" or "entries": @p one when @p n is 1, else @p many. */
const char *plural(uint64_t n, const char *one, const char *many);

/** Read (once: "-" is standard input) and encode one DNS response file (demo,
 * encode); @p wire_len (may be NULL): the file's size. @return 0 or EXIT_USAGE */
int encode_file(const char *cmd, const char *path, uint32_t now, dnsnap_encoded_t *enc,
		size_t *wire_len);

/* The commands, one file each (cli/CMD.c): argv[0] is the command's name */
int cmd_demo(int argc, char **argv);
int cmd_encode(int argc, char **argv);
int cmd_decode(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_get(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_purge(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_import(int argc, char **argv);
/* l2xfer.c: import --from and export --to (Redis); the check of --l2-prefix
 * (at most DNSNAP_L2_PREFIX_MAX bytes). @return 0 or EXIT_USAGE */
int l2_prefix_arg(const char *cmd, const char *v);
/* The AUTH of --l2-auth-file FILE (NULL: the environment) into @p o's user
 * and password (pointing into @p user and @p pw, or NULL when empty).
 * @return 0 or EXIT_USAGE (reported) */
struct dnsnap_l2_opts;
int l2_auth_opts(const char *cmd, const char *file, struct dnsnap_l2_opts *o, char *user,
		 size_t ucap, char *pw, size_t pcap);
int import_from_l2(const char *url, const char *out, const char *prefix, const char *auth_file,
		   uint32_t now, unsigned long long wait, int json);
int export_to_l2(const char *path, const char *url, const char *prefix, const char *auth_file,
		 uint32_t now, int has_now, int json);
int cmd_stats(int argc, char **argv);
int cmd_load(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_control(int argc, char **argv);


#endif
