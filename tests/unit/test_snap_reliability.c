/*
 * test_snap_reliability.c: snapshots under the failures they must survive.
 *
 * 1. a writer killed (SIGKILL) at a random moment: PATH holds a whole
 *    snapshot, the old or the new, never a mix; the next write removes the
 *    dead writer's PATH.tmp.PID (DNSNAP_CRASH_TRIALS trials, default 5);
 * 2. a full disk (RLIMIT_FSIZE): the write fails with -EFBIG or
 *    DNSNAP_ELMDB and a message, the old snapshot stays, no temporary stays;
 * 3. corruption: truncated files and single-bit flips never crash open or
 *    lookups, lookups never answer wrong data (a damaged entry is a miss),
 *    and dnsnap_snap_verify() detects every one of them;
 * 4. threads answering from a cache while a third swaps the snapshot under
 *    it (dnsnap_cache_attach + dnsnap_snap_close): every answer stays right
 *    (also run under ThreadSanitizer);
 * 5. several processes reading one snapshot at once.
 *
 * Children report through distinctive exit codes (CHILD_*), never through
 * cmocka's asserts (those would longjmp into the child's copy of the
 * runner); any other status, a signal included, is a crash. Randomness
 * comes from a fixed seed (DNSNAP_SEED overrides it): runs are repeatable.
 * Other knobs: DNSNAP_FLIPS (bit flips, default 200), DNSNAP_VERBOSE=1 (one
 * line per crash trial), DNSNAP_TEST_FILTER (cmocka's test name pattern,
 * e.g. '*swapped*' for the threaded test alone under TSan).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "dnsnap.h"
#include "../helpers/tmpdir.h"
#include "wb.h"

#define NOW 1700000000u
#define NAMES 3000           /* entries in the crash, disk-full, corruption tests */

/* exit codes of children; anything else (a signal, ASan's 1) is a crash */
enum {
	CHILD_OK = 40,       /* did what it had to */
	CHILD_REFUSED,       /* corruption: open refused the file */
	CHILD_DETECTED,      /* corruption: opened, verify found the damage */
	CHILD_UNDETECTED,    /* corruption: verify passed */
	CHILD_WRONG,         /* a wrong or missing answer */
	CHILD_SETUP,         /* the test's own setup failed */
	CHILD_WROTE,         /* disk full: the write succeeded */
	CHILD_OTHER_ERR,     /* disk full: an unexpected error code */
	CHILD_NO_DIAG,       /* disk full: no diag message */
};

static dnsnap_encoded_t scratch; /* large: static */
static char dir[64];             /* this run's scratch directory */
static unsigned long long seed0 = 0x5eed5eedULL;

/* ------------------------------------------------------------- helpers */

static uint64_t rnd(uint64_t *s) /* splitmix64 */
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int env_int(const char *name, int def)
{
	const char *v = getenv(name);
	return v != NULL && *v != '\0' ? atoi(v) : def;
}

static void path_of(char *buf, size_t cap, const char *file)
{
	snprintf(buf, cap, "%s/%s", dir, file);
}

static const uint16_t qtypes[3] = { 1, 28, 16 }; /* A, AAAA, TXT */

static uint16_t type_of(int i)
{
	return qtypes[i % 3];
}

static void name_of(char *buf, size_t cap, const char *prefix, int i)
{
	snprintf(buf, cap, "%s%d.rel.example", prefix, i);
}

/*
 * A NOERROR response for name/type with n records, TTL ttl. Every record's
 * rdata carries the marker x at rdata[2]: A 10.0.x.i, AAAA 2001:x:i::, TXT
 * the string "v" x i "z".
 */
static void response(wb_t *w, const char *name, uint16_t type, uint32_t ttl, unsigned n,
		     unsigned x)
{
	put_header(w, 0x8180, 1, n, 0, 0);
	put_name(w, name);
	put_u16(w, type);
	put_u16(w, 1);
	for (unsigned i = 0; i < n; i++) {
		put_ptr(w, 12);
		size_t rl = put_fixed(w, type, 1, ttl);
		switch (type) {
		case 1:
			put_u8(w, 10);
			put_u8(w, 0);
			put_u8(w, x);
			put_u8(w, i);
			break;
		case 28:
			put_u8(w, 0x20);
			put_u8(w, 0x01);
			put_u8(w, x);
			put_u8(w, i);
			for (int k = 0; k < 12; k++)
				put_u8(w, 0);
			break;
		default:
			put_u8(w, 4);
			put_u8(w, 'v');
			put_u8(w, x);
			put_u8(w, i);
			put_u8(w, 'z');
			break;
		}
		end_rdata(w, rl);
	}
}

/* A query for name/type; no asserts (threads and children use it). */
static int make_query(wb_t *w, const char *name, uint16_t type, dnsnap_query_t *q)
{
	put_header(w, 0x0100, 1, 0, 0, 0);
	set_u16(w, 0, 0x5151);
	put_name(w, name);
	put_u16(w, type);
	put_u16(w, 1);
	return dnsnap_query_parse(w->b, w->n, NULL, 0, q, NULL);
}

/*
 * Answer name/type from the cache @p c or, when c is NULL, from the snapshot
 * @p s alone. Returns the library's code; on DNSNAP_OK *x is the marker of
 * the first record, or -1 when the response is not a well-formed answer to
 * the question asked.
 */
static int answer_x(dnsnap_cache_t *c, dnsnap_snap_t *s, const char *name, uint16_t type,
		    int *x)
{
	wb_t qw;
	dnsnap_query_t q;
	uint8_t out[1024];
	size_t n = 0;
	int err = make_query(&qw, name, type, &q);
	if (err != DNSNAP_OK)
		return err;
	err = c != NULL ? dnsnap_cache_answer(c, &q, NOW + 10, 0, out, sizeof out, &n)
			: dnsnap_snap_answer(s, &q, NOW + 10, 0, out, sizeof out, &n);
	if (err != DNSNAP_OK)
		return err;
	*x = -1;
	if (n > sizeof out || n < qw.n + 12 + 3)
		return DNSNAP_OK;
	if ((out[0] << 8 | out[1]) != 0x5151 || !(out[2] & 0x80) || (out[6] | out[7]) == 0)
		return DNSNAP_OK;
	if (memcmp(out + 12, qw.b + 12, qw.n - 12) != 0) /* the question echoed */
		return DNSNAP_OK;
	const uint8_t *rr = out + qw.n;
	if (rr[0] != 0xc0 || (rr[2] << 8 | rr[3]) != type)
		return DNSNAP_OK;
	unsigned rdlen = (unsigned)(rr[10] << 8 | rr[11]);
	if (rdlen < 3 || qw.n + 12 + rdlen > n)
		return DNSNAP_OK;
	*x = rr[12 + 2];
	return DNSNAP_OK;
}

/* Every name prefix0..prefix(n-1) answered with marker x? Returns how many
 * were not, of which *missed (may be NULL) were not answered at all (no
 * asserts: children and threads use it). */
static int count_wrong_missed(dnsnap_cache_t *c, dnsnap_snap_t *s, const char *prefix, int n,
			      int x, char *first, size_t first_cap, int *missed)
{
	int wrong = 0;
	if (missed != NULL)
		*missed = 0;
	char name[64];
	for (int i = 0; i < n; i++) {
		name_of(name, sizeof name, prefix, i);
		int got = -2;
		int err = answer_x(c, s, name, type_of(i), &got);
		if (err != DNSNAP_OK || got != x) {
			if (missed != NULL && err != DNSNAP_OK)
				++*missed;
			if (wrong == 0 && first != NULL)
				snprintf(first, first_cap, "%s/%u: %s, marker %d (want %d)", name,
					 type_of(i), dnsnap_errname(err) ? dnsnap_errname(err) : "?",
					 got, x);
			wrong++;
		}
	}
	return wrong;
}

static int count_wrong(dnsnap_cache_t *c, dnsnap_snap_t *s, const char *prefix, int n, int x,
		       char *first, size_t first_cap)
{
	return count_wrong_missed(c, s, prefix, n, x, first, first_cap, NULL);
}

/*
 * What a test holds, released by its teardown even when an assert ends it
 * early (so that a failure is not followed by leak reports).
 */
static dnsnap_cache_t *held_cache[4];
static dnsnap_snap_t *held_snap[4];
static uint8_t *held_buf;

static void hold_cache(dnsnap_cache_t *c)
{
	for (size_t i = 0; i < sizeof held_cache / sizeof held_cache[0]; i++)
		if (held_cache[i] == NULL) {
			held_cache[i] = c;
			return;
		}
	fail_msg("hold_cache: too many caches");
}

static void hold_snap(dnsnap_snap_t *s)
{
	for (size_t i = 0; i < sizeof held_snap / sizeof held_snap[0]; i++)
		if (held_snap[i] == NULL) {
			held_snap[i] = s;
			return;
		}
	fail_msg("hold_snap: too many snapshots");
}

/* Close a snapshot opened in this process (and forget it). */
static void close_snap(dnsnap_snap_t *s)
{
	for (size_t i = 0; i < sizeof held_snap / sizeof held_snap[0]; i++)
		if (held_snap[i] == s)
			held_snap[i] = NULL;
	dnsnap_snap_close(s);
}

static int release_all(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof held_snap / sizeof held_snap[0]; i++) {
		dnsnap_snap_close(held_snap[i]);
		held_snap[i] = NULL;
	}
	for (size_t i = 0; i < sizeof held_cache / sizeof held_cache[0]; i++) {
		dnsnap_snap_t *old = NULL;
		if (held_cache[i] != NULL)
			dnsnap_cache_attach(held_cache[i], NULL, &old);
		dnsnap_snap_close(old);
		dnsnap_cache_free(held_cache[i]);
		held_cache[i] = NULL;
	}
	free(held_buf);
	held_buf = NULL;
	return 0;
}

/* A cache of n names prefix0..prefix(n-1), marker x, freed by the teardown. */
static dnsnap_cache_t *fill(const char *prefix, int n, uint32_t ttl, unsigned x)
{
	dnsnap_cache_t *c = NULL;
	assert_int_equal(dnsnap_cache_new(NULL, &c), DNSNAP_OK);
	hold_cache(c);
	wb_t w;
	char name[64];
	for (int i = 0; i < n; i++) {
		name_of(name, sizeof name, prefix, i);
		response(&w, name, type_of(i), ttl, 1 + (unsigned)i % 3, x);
		dnsnap_diag_t d = { 0 };
		int err = dnsnap_cache_insert(c, w.b, w.n, NOW, NULL, 0, &scratch, &d);
		if (err != DNSNAP_OK)
			fail_msg("insert %s: %s (%s)", name, dnsnap_errname(err), d.msg);
	}
	return c;
}

static void must_write(dnsnap_cache_t *c, const char *path, dnsnap_snap_write_stats_t *st)
{
	dnsnap_diag_t d = { 0 };
	int err = dnsnap_snap_write(c, path, NOW, st, &d);
	if (err != DNSNAP_OK)
		fail_msg("write %s: %s (%s)", path, dnsnap_errname(err), d.msg);
}

static dnsnap_snap_t *must_open(const char *path)
{
	dnsnap_snap_t *s = NULL;
	dnsnap_diag_t d = { 0 };
	int err = dnsnap_snap_open(path, &s, &d);
	if (err != DNSNAP_OK)
		fail_msg("open %s: %s (%s)", path, dnsnap_errname(err), d.msg);
	hold_snap(s);
	return s;
}

static void must_verify(dnsnap_snap_t *s, const char *what)
{
	dnsnap_diag_t d = { 0 };
	int err = dnsnap_snap_verify(s, NULL, &d);
	if (err != DNSNAP_OK)
		fail_msg("verify %s: %s (%s)", what, dnsnap_errname(err), d.msg);
}

/* Write @p c to @p file in the scratch directory; returns its digest. */
static uint64_t digest_of(dnsnap_cache_t *c, const char *file)
{
	char path[128];
	path_of(path, sizeof path, file);
	must_write(c, path, NULL);
	dnsnap_snap_t *s = must_open(path);
	must_verify(s, path);
	dnsnap_snap_info_t info;
	dnsnap_snap_info(s, &info);
	close_snap(s);
	return info.digest;
}

/* Temporaries of @p file (FILE.tmp.*) in the scratch directory: their count,
 * their names joined into @p names. */
static int temporaries(const char *file, char *names, size_t cap)
{
	char prefix[64];
	snprintf(prefix, sizeof prefix, "%s.tmp.", file);
	DIR *d = opendir(dir);
	assert_non_null(d);
	int n = 0;
	if (names != NULL && cap > 0)
		names[0] = '\0';
	for (struct dirent *e; (e = readdir(d)) != NULL;)
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
			n++;
			if (names != NULL) {
				size_t l = strlen(names);
				snprintf(names + l, cap - l, "%s%s", l ? " " : "", e->d_name);
			}
		}
	closedir(d);
	return n;
}

/* A whole file into memory. */
static uint8_t *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	uint8_t *p = malloc((size_t)st.st_size + 1);
	assert_non_null(p);
	free(held_buf);
	held_buf = p;
	size_t got = 0;
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, p + got, (size_t)st.st_size - got);
		assert_true(r > 0);
		got += (size_t)r;
	}
	close(fd);
	*len = got;
	return p;
}

static void spit(const char *path, const uint8_t *p, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	size_t done = 0;
	while (done < len) {
		ssize_t r = write(fd, p + done, len - done);
		assert_true(r > 0);
		done += (size_t)r;
	}
	assert_int_equal(close(fd), 0);
}

/* "exit 40", "signal 11": what became of a child. */
static const char *status_str(int status, char *buf, size_t cap)
{
	if (WIFEXITED(status))
		snprintf(buf, cap, "exit %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, cap, "signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(buf, cap, "status 0x%x", status);
	return buf;
}

static int child_code(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static pid_t must_fork(void)
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* cmocka turns these into a longjmp back into its runner: in a
		 * child, a crash must kill the child instead */
		static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
		for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
			signal(sigs[i], SIG_DFL);
	}
	return pid;
}

static int wait_for(pid_t pid)
{
	int status = 0;
	while (waitpid(pid, &status, 0) < 0)
		assert_int_equal(errno, EINTR);
	return status;
}

/* ------------------------------------------------ 1. crash while writing */

static void test_a_writer_killed_at_any_moment_leaves_a_whole_snapshot(void **state)
{
	(void)state;
	double t0 = now_ms();
	int trials = env_int("DNSNAP_CRASH_TRIALS", 5);
	int verbose = env_int("DNSNAP_VERBOSE", 0);
	dnsnap_cache_t *ca = fill("h", NAMES, 3600, 1); /* generation A */
	dnsnap_cache_t *cb = fill("h", NAMES, 7200, 2); /* generation B */
	uint64_t da = digest_of(ca, "a.snap");
	double tw = now_ms();
	uint64_t db = digest_of(cb, "b.snap");
	tw = now_ms() - tw;
	/*
	 * Kill within 0-30 ms, or within four writes' time where one takes
	 * longer (fsync on a slow disk; a forked child's first write is slower
	 * still, with its copy-on-write faults): the kills must also land after
	 * a rename and in a second write, not only in the first one.
	 */
	unsigned max_us = tw * 4 > 30 ? (unsigned)(tw * 4 * 1000) : 30000;
	assert_true(da != db);
	char path[128];
	path_of(path, sizeof path, "s.snap");
	dnsnap_snap_write_stats_t ws;
	must_write(ca, path, &ws);
	{ /* digests depend on content only: s.snap is a.snap again */
		dnsnap_snap_t *s = must_open(path);
		dnsnap_snap_info_t info;
		dnsnap_snap_info(s, &info);
		assert_int_equal(info.digest, da);
		assert_int_equal(info.entry_count, NAMES);
		close_snap(s);
	}
	/* the child counts its finished writes here */
	volatile unsigned *done = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(done != MAP_FAILED);
	uint64_t rs = seed0;
	int ended_a = 0, ended_b = 0, stale_seen = 0, killed_in_first = 0;
	unsigned total_writes = 0;
	for (int t = 0; t < trials; t++) {
		unsigned delay_us = (unsigned)(rnd(&rs) % (max_us + 1));
		*done = 0;
		pid_t pid = must_fork();
		if (pid == 0) {
			for (;;) {
				dnsnap_diag_t d = { 0 };
				int err = dnsnap_snap_write(cb, path, NOW, NULL, &d);
				if (err != DNSNAP_OK) {
					fprintf(stderr, "child write: %s (%s)\n", dnsnap_errname(err),
						d.msg);
					_exit(CHILD_SETUP);
				}
				__atomic_add_fetch(done, 1, __ATOMIC_RELAXED);
			}
		}
		usleep(delay_us);
		kill(pid, SIGKILL);
		int status = wait_for(pid);
		char sb[64];
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
			fail_msg("trial %d: the writer ended by itself: %s", t,
				 status_str(status, sb, sizeof sb));
		unsigned writes = __atomic_load_n(done, __ATOMIC_RELAXED);
		total_writes += writes;
		killed_in_first += writes == 0;

		/* a whole snapshot, A or B */
		dnsnap_snap_t *s = NULL;
		dnsnap_diag_t d = { 0 };
		int err = dnsnap_snap_open(path, &s, &d);
		if (err != DNSNAP_OK)
			fail_msg("trial %d (killed after %u us, %u writes): open: %s (%s)", t,
				 delay_us, writes, dnsnap_errname(err), d.msg);
		hold_snap(s);
		err = dnsnap_snap_verify(s, NULL, &d);
		if (err != DNSNAP_OK)
			fail_msg("trial %d (killed after %u us, %u writes): verify: %s (%s)", t,
				 delay_us, writes, dnsnap_errname(err), d.msg);
		dnsnap_snap_info_t info;
		dnsnap_snap_info(s, &info);
		if (info.digest != da && info.digest != db)
			fail_msg("trial %d: digest %016llx is neither A's %016llx nor B's %016llx", t,
				 (unsigned long long)info.digest, (unsigned long long)da,
				 (unsigned long long)db);
		int x = info.digest == da ? 1 : 2;
		ended_a += x == 1;
		ended_b += x == 2;
		char first[160] = "";
		int wrong = count_wrong(NULL, s, "h", NAMES, x, first, sizeof first);
		if (wrong != 0)
			fail_msg("trial %d: %d of %d names not answered as generation %c: %s", t,
				 wrong, NAMES, x == 1 ? 'A' : 'B', first);
		close_snap(s);

		/* the next write succeeds and removes the dead writer's temporary */
		char names[512];
		int stale = temporaries("s.snap", names, sizeof names);
		stale_seen += stale > 0;
		if (verbose)
			print_message("trial %d: killed after %u us, %u writes done, ended %c, "
				      "temporaries: %s\n", t, delay_us, writes, x == 1 ? 'A' : 'B',
				      stale ? names : "none");
		must_write(t % 2 ? cb : ca, path, NULL);
		if (temporaries("s.snap", names, sizeof names) != 0)
			fail_msg("trial %d: temporaries left after a successful write: %s "
				 "(stale PATH.tmp.PID of a dead writer not removed)", t, names);
		if (t % 2) /* back to A for the next trial */
			must_write(ca, path, NULL);
	}
	munmap((void *)done, 4096);
	print_message("crash: %d trials (seed %llx), %u entries, %llu-byte file, a write takes "
		      "%.1f ms, kills within 0-%u us: ended A %d, B %d; killed during the first "
		      "write %d; %u writes completed in all; a stale temporary was there %d times "
		      "(all removed) [%.0f ms]\n", trials, seed0, NAMES,
		      (unsigned long long)ws.file_size, tw, max_us, ended_a, ended_b,
		      killed_in_first, total_writes, stale_seen, now_ms() - t0);
}

/* ------------------------------------------------------- 2. disk full */

struct report {
	int err;
	int wrong;               /* corruption: names not answered right before verify */
	int missed;              /* ... of which not answered at all */
	char msg[400];
};

static void test_a_full_disk_fails_the_write_and_keeps_the_old_snapshot(void **state)
{
	(void)state;
	double t0 = now_ms();
	dnsnap_cache_t *ca = fill("h", NAMES, 3600, 1);
	dnsnap_cache_t *cb = fill("h", NAMES, 7200, 2);
	char path[128];
	path_of(path, sizeof path, "s.snap");
	dnsnap_snap_write_stats_t ws;
	must_write(ca, path, &ws);
	dnsnap_snap_t *s = must_open(path);
	dnsnap_snap_info_t before;
	dnsnap_snap_info(s, &before);
	close_snap(s);
	const rlim_t limit = 64 * 1024;
	assert_true(ws.file_size > 2 * limit); /* the new one cannot fit */

	struct report *rep = mmap(NULL, sizeof *rep, PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(rep != MAP_FAILED);
	memset(rep, 0, sizeof *rep);
	pid_t pid = must_fork();
	if (pid == 0) {
		struct rlimit rl = { limit, limit };
		if (setrlimit(RLIMIT_FSIZE, &rl) != 0 || signal(SIGXFSZ, SIG_IGN) == SIG_ERR)
			_exit(CHILD_SETUP);
		dnsnap_diag_t d = { 0 };
		int err = dnsnap_snap_write(cb, path, NOW, NULL, &d);
		rep->err = err;
		memcpy(rep->msg, d.msg, sizeof d.msg);
		rep->msg[sizeof d.msg - 1] = '\0';
		if (err == DNSNAP_OK)
			_exit(CHILD_WROTE);
		if (err != -EFBIG && err != DNSNAP_ELMDB)
			_exit(CHILD_OTHER_ERR);
		_exit(d.msg[0] ? CHILD_OK : CHILD_NO_DIAG);
	}
	int status = wait_for(pid);
	char sb[64];
	const char *en = dnsnap_errname(rep->err);
	print_message("disk full: a %llu-byte snapshot under a %llu-byte RLIMIT_FSIZE: %d %s "
		      "(%s), diag \"%s\"\n", (unsigned long long)ws.file_size,
		      (unsigned long long)limit, rep->err,
		      rep->err == -EFBIG ? "-EFBIG" : en ? en : "?", strerror(-rep->err), rep->msg);
	if (child_code(status) != CHILD_OK)
		fail_msg("the writer under RLIMIT_FSIZE: %s (err %d, diag \"%s\")",
			 status_str(status, sb, sizeof sb), rep->err, rep->msg);
	munmap(rep, sizeof *rep);

	/* the old snapshot is still there, whole */
	s = must_open(path);
	must_verify(s, "the old snapshot after a failed write");
	dnsnap_snap_info_t after;
	dnsnap_snap_info(s, &after);
	assert_int_equal(after.digest, before.digest);
	assert_int_equal(count_wrong(NULL, s, "h", NAMES, 1, NULL, 0), 0);
	close_snap(s);
	char names[512];
	if (temporaries("s.snap", names, sizeof names) != 0)
		fail_msg("temporaries left after a failed write: %s", names);
	print_message("disk full [%.0f ms]\n", now_ms() - t0);
}

/* ------------------------------------------------------ 3. corruption */

/*
 * In a child: open @p path; if it opens, answer every name (no crash
 * allowed; answers may be wrong), then verify. Returns the child's status.
 */
static int probe(const char *path, char *detail, size_t cap, int *wrong, int *missed)
{
	struct report *rep = mmap(NULL, sizeof *rep, PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(rep != MAP_FAILED);
	memset(rep, 0, sizeof *rep);
	pid_t pid = must_fork();
	if (pid == 0) {
		dnsnap_snap_t *s = NULL;
		dnsnap_diag_t d = { 0 };
		int err = dnsnap_snap_open(path, &s, &d);
		rep->err = err;
		memcpy(rep->msg, d.msg, sizeof d.msg - 1);
		if (err != DNSNAP_OK)
			_exit(CHILD_REFUSED);
		rep->wrong = count_wrong_missed(NULL, s, "h", NAMES, 1, NULL, 0, &rep->missed);
		memset(&d, 0, sizeof d);
		err = dnsnap_snap_verify(s, NULL, &d);
		rep->err = err;
		snprintf(rep->msg, sizeof rep->msg, "%d not answered right (%d misses); %s",
			 rep->wrong, rep->missed, d.msg);
		dnsnap_snap_close(s);
		_exit(err != DNSNAP_OK ? CHILD_DETECTED : CHILD_UNDETECTED);
	}
	int status = wait_for(pid);
	const char *en = dnsnap_errname(rep->err);
	snprintf(detail, cap, "%s: %.250s", en ? en : "?", rep->msg);
	if (wrong != NULL)
		*wrong = rep->wrong;
	if (missed != NULL)
		*missed = rep->missed;
	munmap(rep, sizeof *rep);
	return status;
}

static void test_truncated_snapshots_are_refused_or_fail_verify(void **state)
{
	(void)state;
	double t0 = now_ms();
	dnsnap_cache_t *ca = fill("h", NAMES, 3600, 1);
	char good[128], bad[128];
	path_of(good, sizeof good, "good.snap");
	path_of(bad, sizeof bad, "bad.snap");
	must_write(ca, good, NULL);
	size_t len;
	uint8_t *buf = slurp(good, &len);
	assert_true(len > 16384);

	size_t lens[7 + 50] = { 0, 1, 4095, 4096, 8191, len / 2, len - 1 };
	uint64_t rs = seed0 ^ 0x7472756eULL;
	for (int i = 7; i < 57; i++)
		lens[i] = (size_t)(rnd(&rs) % len);
	int refused = 0, detected = 0, failures = 0;
	for (int i = 0; i < 57; i++) {
		spit(bad, buf, lens[i]);
		char detail[320], sb[64];
		int status = probe(bad, detail, sizeof detail, NULL, NULL);
		switch (child_code(status)) {
		case CHILD_REFUSED:
			refused++;
			break;
		case CHILD_DETECTED:
			detected++;
			break;
		case CHILD_UNDETECTED:
			failures++;
			print_message("FAIL: truncated to %zu of %zu bytes: opened and verified (%s)\n",
				      lens[i], len, detail);
			break;
		default:
			failures++;
			print_message("FAIL: truncated to %zu of %zu bytes: the reader crashed: %s\n",
				      lens[i], len, status_str(status, sb, sizeof sb));
			break;
		}
	}
	print_message("truncation: %d lengths of a %zu-byte file: %d refused by open, %d by verify, "
		      "%d failures [%.0f ms]\n", 57, len, refused, detected, failures, now_ms() - t0);
	assert_int_equal(failures, 0);
}

static void test_every_single_bit_flip_is_detected_by_verify(void **state)
{
	(void)state;
	double t0 = now_ms();
	int cases = env_int("DNSNAP_FLIPS", 200);
	dnsnap_cache_t *ca = fill("h", NAMES, 3600, 1);
	char good[128], bad[128];
	path_of(good, sizeof good, "good.snap");
	path_of(bad, sizeof bad, "bad.snap");
	must_write(ca, good, NULL);
	size_t len;
	uint8_t *buf = slurp(good, &len);
	uint64_t rs = seed0 ^ 0x666c6970ULL;
	int refused = 0, detected = 0, failures = 0, with_misses = 0, with_wrong = 0;
	for (int i = 0; i < cases; i++) {
		size_t at = (size_t)(rnd(&rs) % len);
		unsigned bit = (unsigned)(rnd(&rs) % 8);
		buf[at] ^= (uint8_t)(1u << bit);
		spit(bad, buf, len);
		buf[at] ^= (uint8_t)(1u << bit);
		char detail[320], sb[64];
		int wrong = 0, missed = 0;
		int status = probe(bad, detail, sizeof detail, &wrong, &missed);
		switch (child_code(status)) {
		case CHILD_REFUSED:
			refused++;
			break;
		case CHILD_DETECTED:
			detected++;
			with_misses += missed != 0;
			with_wrong += wrong > missed;
			if (wrong > missed) { /* Value_Checks make a damaged entry a miss */
				failures++;
				print_message("FAIL: flip %d: byte %zu bit %u: %d names answered "
					      "with wrong data\n", i, at, bit, wrong - missed);
			}
			break;
		case CHILD_UNDETECTED:
			failures++;
			print_message("FAIL: flip %d: byte %zu (page %zu, offset %zu) bit %u of %zu: "
				      "opened and verified (%s)\n", i, at, at / 4096, at % 4096, bit,
				      len, detail);
			break;
		default:
			failures++;
			print_message("FAIL: flip %d: byte %zu (page %zu, offset %zu) bit %u of %zu: "
				      "the reader crashed: %s\n", i, at, at / 4096, at % 4096, bit, len,
				      status_str(status, sb, sizeof sb));
			break;
		}
	}
	print_message("bit flips: %d in a %zu-byte file (seed %llx): %d refused by open, %d caught "
		      "by verify (before that, %d had names missing, %d had names answered with "
		      "wrong data), %d failures [%.0f ms]\n", cases, len, seed0, refused, detected,
		      with_misses, with_wrong, failures, now_ms() - t0);
	assert_int_equal(failures, 0);
}

/* ------------------------------------------------------ 5. many readers */

static void test_processes_read_one_snapshot_at_once(void **state)
{
	(void)state;
	double t0 = now_ms();
	dnsnap_cache_t *ca = fill("h", NAMES, 3600, 1);
	char path[128];
	path_of(path, sizeof path, "r.snap");
	must_write(ca, path, NULL);
	enum { NP = 4 };
	pid_t pid[NP];
	for (int i = 0; i < NP; i++) {
		pid[i] = must_fork();
		if (pid[i] == 0) {
			dnsnap_snap_t *s = NULL;
			if (dnsnap_snap_open(path, &s, NULL) != DNSNAP_OK)
				_exit(CHILD_SETUP);
			char first[160] = "";
			int wrong = 0;
			for (int round = 0; round < 3; round++)
				wrong += count_wrong(NULL, s, "h", NAMES, 1, first, sizeof first);
			if (wrong != 0)
				fprintf(stderr, "reader %d: %d wrong: %s\n", i, wrong, first);
			dnsnap_snap_close(s);
			_exit(wrong == 0 ? CHILD_OK : CHILD_WRONG);
		}
	}
	int bad = 0;
	for (int i = 0; i < NP; i++) {
		char sb[64];
		int status = wait_for(pid[i]);
		if (child_code(status) != CHILD_OK) {
			bad++;
			print_message("FAIL: reader %d: %s\n", i, status_str(status, sb, sizeof sb));
		}
	}
	print_message("readers: %d processes x 3 rounds x %d names [%.0f ms]\n", NP, NAMES,
		      now_ms() - t0);
	assert_int_equal(bad, 0);
}

/* ------------------------------------------------------ 4. concurrency */

#define MEM_NAMES   1000     /* only in memory, marker 3 */
#define SNAP_NAMES  1000     /* only in the snapshot, marker 4 */
#define SWAPS       20       /* the writer's iterations */
#define MIN_PASSES  2        /* reader passes over every name, at least ... */
#define MAX_PASSES  2000     /* ... and at most */

struct conc {
	dnsnap_cache_t *mem;     /* answered from, the snapshot attached */
	dnsnap_cache_t *src;     /* the snapshot-only names, written out */
	atomic_int writer_done;
	/* the writer's results */
	int swaps;
	int werr;
	char wmsg[400];
};

struct reader_arg {
	struct conc *cc;
	int passes;
	long answers;
	int wrong;
	char first[200];
};

static void *conc_reader(void *arg)
{
	struct reader_arg *ra = arg;
	struct conc *cc = ra->cc;
	while (ra->passes < MAX_PASSES &&
	       (ra->passes < MIN_PASSES || !atomic_load(&cc->writer_done))) {
		char first[160] = "";
		int w = count_wrong(cc->mem, NULL, "m", MEM_NAMES, 3, first, sizeof first);
		w += count_wrong(cc->mem, NULL, "s", SNAP_NAMES, 4, w ? NULL : first,
				 sizeof first);
		if (w != 0 && ra->wrong == 0)
			snprintf(ra->first, sizeof ra->first, "pass %d: %s", ra->passes, first);
		ra->wrong += w;
		ra->answers += MEM_NAMES + SNAP_NAMES;
		ra->passes++;
	}
	return NULL;
}

static void *conc_writer(void *arg)
{
	struct conc *cc = arg;
	char path[128], mpath[128];
	path_of(path, sizeof path, "w.snap");
	path_of(mpath, sizeof mpath, "m.snap");
	for (int i = 0; i < SWAPS && cc->werr == 0; i++) {
		dnsnap_diag_t d = { 0 };
		int err = dnsnap_snap_write(cc->src, path, NOW, NULL, &d);
		if (err != DNSNAP_OK) {
			cc->werr = err;
			snprintf(cc->wmsg, sizeof cc->wmsg, "swap %d: write: %s", i, d.msg);
			break;
		}
		dnsnap_snap_t *s = NULL;
		err = dnsnap_snap_open(path, &s, &d);
		if (err != DNSNAP_OK) {
			cc->werr = err;
			snprintf(cc->wmsg, sizeof cc->wmsg, "swap %d: open: %s", i, d.msg);
			break;
		}
		dnsnap_snap_t *old = NULL;
		dnsnap_cache_attach(cc->mem, s, &old);
		dnsnap_snap_close(old);
		/* a snapshot of the cache being answered from, meanwhile */
		err = dnsnap_snap_write(cc->mem, mpath, NOW, NULL, &d);
		if (err != DNSNAP_OK) {
			cc->werr = err;
			snprintf(cc->wmsg, sizeof cc->wmsg, "swap %d: write of the live cache: %s",
				 i, d.msg);
			break;
		}
		cc->swaps++;
	}
	atomic_store(&cc->writer_done, 1);
	return NULL;
}

static void test_answers_stay_right_while_the_snapshot_is_swapped(void **state)
{
	(void)state;
	double t0 = now_ms();
	struct conc cc = { 0 };
	cc.mem = fill("m", MEM_NAMES, 3600, 3);
	cc.src = fill("s", SNAP_NAMES, 3600, 4);
	atomic_init(&cc.writer_done, 0);
	char path[128];
	path_of(path, sizeof path, "base.snap");
	must_write(cc.src, path, NULL);
	dnsnap_snap_t *base = NULL, *old = (dnsnap_snap_t *)&cc; /* must become NULL */
	dnsnap_diag_t d = { 0 };
	int err = dnsnap_snap_open(path, &base, &d);
	if (err != DNSNAP_OK)
		fail_msg("open %s: %s (%s)", path, dnsnap_errname(err), d.msg);
	dnsnap_cache_attach(cc.mem, base, &old); /* the teardown detaches it */
	assert_null(old);
	/* before the threads: both kinds of name are answered */
	char first[160] = "";
	if (count_wrong(cc.mem, NULL, "m", MEM_NAMES, 3, first, sizeof first) != 0 ||
	    count_wrong(cc.mem, NULL, "s", SNAP_NAMES, 4, first, sizeof first) != 0)
		fail_msg("before the threads: %s", first);

	struct reader_arg ra[2] = { { .cc = &cc }, { .cc = &cc } };
	pthread_t t[3];
	assert_int_equal(pthread_create(&t[0], NULL, conc_reader, &ra[0]), 0);
	assert_int_equal(pthread_create(&t[1], NULL, conc_reader, &ra[1]), 0);
	assert_int_equal(pthread_create(&t[2], NULL, conc_writer, &cc), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	/* detached: a cache without its snapshot misses the snapshot's names */
	dnsnap_cache_attach(cc.mem, NULL, &old);
	assert_non_null(old);
	hold_snap(old);
	int x = 0;
	assert_int_equal(answer_x(cc.mem, NULL, "s0.rel.example", type_of(0), &x),
			 DNSNAP_ENOTFOUND);
	close_snap(old);

	print_message("concurrency: %d swaps; readers %d + %d passes, %ld + %ld answers, "
		      "%d + %d wrong [%.0f ms]\n", cc.swaps, ra[0].passes, ra[1].passes,
		      ra[0].answers, ra[1].answers, ra[0].wrong, ra[1].wrong, now_ms() - t0);
	if (cc.werr != 0)
		fail_msg("writer: %s: %s", dnsnap_errname(cc.werr), cc.wmsg);
	for (int i = 0; i < 2; i++)
		if (ra[i].wrong != 0)
			fail_msg("reader %d: %d wrong answers, first %s", i, ra[i].wrong,
				 ra[i].first);
	assert_int_equal(cc.swaps, SWAPS);

	/* the snapshot of the live cache holds its in-memory names */
	path_of(path, sizeof path, "m.snap");
	dnsnap_snap_t *m = must_open(path);
	must_verify(m, path);
	assert_int_equal(count_wrong(NULL, m, "m", MEM_NAMES, 3, first, sizeof first), 0);
	dnsnap_snap_info_t info;
	dnsnap_snap_info(m, &info);
	print_message("concurrency: the live cache's snapshot holds %llu entries (%d in memory, "
		      "%d in the attached snapshot)\n", (unsigned long long)info.entry_count,
		      MEM_NAMES, SNAP_NAMES);
	close_snap(m);
}

/* ---------------------------------------------------------------- main */

static int make_dir(void **state)
{
	(void)state;
	return tmpdir_make(dir, sizeof dir, "rel");
}

static int remove_dir(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

int main(void)
{
	const char *seed = getenv("DNSNAP_SEED");
	if (seed != NULL && *seed != '\0')
		seed0 = strtoull(seed, NULL, 0);
	const char *filter = getenv("DNSNAP_TEST_FILTER");
	if (filter != NULL && *filter != '\0')
		cmocka_set_test_filter(filter);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_a_writer_killed_at_any_moment_leaves_a_whole_snapshot, release_all),
		cmocka_unit_test_teardown(test_a_full_disk_fails_the_write_and_keeps_the_old_snapshot, release_all),
		cmocka_unit_test_teardown(test_truncated_snapshots_are_refused_or_fail_verify, release_all),
		cmocka_unit_test_teardown(test_every_single_bit_flip_is_detected_by_verify, release_all),
		cmocka_unit_test_teardown(test_processes_read_one_snapshot_at_once, release_all),
		/* last: the only test with threads, and the others fork */
		cmocka_unit_test_teardown(test_answers_stay_right_while_the_snapshot_is_swapped, release_all),
	};
	return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
