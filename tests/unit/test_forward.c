/*
 * test_forward.c: libdnsnap's forwarder (engine/forward/, forward.h): the
 * upstream query's bytes, the reply checks, and the loop (in the library's
 * thread, and in this test's own loop) against fake upstreams on 127.0.0.1
 * (real sockets, ports the kernel picks), each a thread of this test that
 * answers as told: an answer, SERVFAIL, REFUSED, nothing, TC=1 over UDP or
 * over both, or forged datagrams before the real reply; the upstreams'
 * health and what the log hook is told. No durations are asserted: waits
 * are generous deadlines.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "byteorder.h"
#include "forward.h"

#include <cmocka.h>

#define WAIT_MS 15000   /* a generous deadline for what must happen */

/* ---------------------------------------------------------------- queries */

/* A client's query for @p name (dotted, no trailing dot) in @p buf, parsed. */
static void client_query(const char *name, uint16_t qtype, int cd, uint8_t *buf,
			 dnsnap_query_t *q)
{
	size_t n = 12;
	memset(buf, 0, 12);
	st16be(buf, 0xbeef);
	st16be(buf + 2, (uint16_t)(0x0100 | (cd ? 0x0010 : 0)));
	st16be(buf + 4, 1);
	const char *p = name;
	while (*p != '\0') {
		const char *dot = strchr(p, '.');
		size_t l = dot != NULL ? (size_t)(dot - p) : strlen(p);
		buf[n++] = (uint8_t)l;
		memcpy(buf + n, p, l);
		n += l;
		p += l;
		if (*p == '.')
			p++;
	}
	buf[n++] = 0;
	st16be(buf + n, qtype);
	st16be(buf + n + 2, 1);
	n += 4;
	dnsnap_diag_t d;
	assert_int_equal(dnsnap_query_parse(buf, n, NULL, 0, q, &d), DNSNAP_OK);
}

static void test_build_query_bytes(void **state)
{
	(void)state;
	uint8_t m[512], out[512];
	dnsnap_query_t q;
	client_query("WwW.Example.COM", 1, 1, m, &q);
	static const uint8_t want[] = {
		0x12, 0x34, 0x01, 0x10, 0, 1, 0, 0, 0, 0, 0, 1,
		3, 'w', 'w', 'w', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0,
		0, 1, 0, 1,
		0, 0, 41, 0x04, 0xd0, 0, 0, 0x80, 0, 0, 0,
	};
	size_t n = dnsnap_fwd_build_query(&q, 0x1234, NULL, out, sizeof out);
	assert_int_equal(n, sizeof want);
	assert_memory_equal(out, want, sizeof want);

	/* CD=0 from the client: RD alone; another type; too small a buffer */
	client_query("a.b", 28, 0, m, &q);
	n = dnsnap_fwd_build_query(&q, 0xffff, NULL, out, sizeof out);
	assert_int_equal(n, 12 + 5 + 4 + 11);
	assert_int_equal(ld16be(out), 0xffff);
	assert_int_equal(ld16be(out + 2), 0x0100);
	assert_int_equal(ld16be(out + 17), 28);
	assert_int_equal(dnsnap_fwd_build_query(&q, 1, NULL, out, n - 1), 0);
	assert_int_equal(dnsnap_fwd_build_query(&q, 1, NULL, out, n), n);
}

static void test_build_query_0x20_case_follows_rnd_letters_only(void **state)
{
	(void)state;
	uint8_t m[512], out[512], rnd[32];
	dnsnap_query_t q;
	client_query("aB1-c.De", 1, 0, m, &q);
	/* the name's bytes: [0]=5 a B 1 - c [6]=2 D e [9]=0 */
	memset(rnd, 0xff, sizeof rnd);
	assert_int_not_equal(dnsnap_fwd_build_query(&q, 7, rnd, out, sizeof out), 0);
	assert_memory_equal(out + 12, "\x05" "AB1-C" "\x02" "DE" "\x00", 10);
	memset(rnd, 0, sizeof rnd);
	dnsnap_fwd_build_query(&q, 7, rnd, out, sizeof out);
	assert_memory_equal(out + 12, "\x05" "ab1-c" "\x02" "de" "\x00", 10);
	/* bit i for byte i: bits 1 (a), 4 (-: no letter), 7 (D) */
	rnd[0] = 0x92;
	dnsnap_fwd_build_query(&q, 7, rnd, out, sizeof out);
	assert_memory_equal(out + 12, "\x05" "Ab1-c" "\x02" "De" "\x00", 10);
	/* bit 8 (e) lives in rnd[1] */
	rnd[0] = 0;
	rnd[1] = 0x01;
	dnsnap_fwd_build_query(&q, 7, rnd, out, sizeof out);
	assert_memory_equal(out + 12, "\x05" "ab1-c" "\x02" "dE" "\x00", 10);
}

/* ---------------------------------------------------------------- reply checks */

/* The query for www.example.com A (ID 0x1234; with @p x20, mixed case), and
 * a reply: the same bytes with QR set. @return the question's end */
static size_t query_and_reply(uint8_t *qb, size_t *qlen, uint8_t *rb, int x20)
{
	uint8_t m[512], rnd[32];
	dnsnap_query_t q;
	client_query("www.example.com", 1, 0, m, &q);
	memset(rnd, 0x5a, sizeof rnd);
	*qlen = dnsnap_fwd_build_query(&q, 0x1234, x20 ? rnd : NULL, qb, 512);
	memcpy(rb, qb, *qlen);
	rb[2] |= 0x80;
	return 12 + 17 + 4;
}

static void test_reply_matches_each_field(void **state)
{
	(void)state;
	uint8_t qb[512], rb[512], r[512];
	size_t qlen;
	size_t end = query_and_reply(qb, &qlen, rb, 0);
	assert_int_equal(dnsnap_fwd_reply_matches(qb, qlen, rb, qlen, 0), 1);
	assert_int_equal(dnsnap_fwd_reply_matches(qb, qlen, rb, end, 0), 1);   /* no OPT: fine */
	static const struct {
		const char *what;
		size_t off;
		uint8_t xor;
	} bad[] = {
		{ "ID high", 0, 0x01 }, { "ID low", 1, 0x80 }, { "QR", 2, 0x80 },
		{ "opcode", 2, 0x08 }, { "opcode 2", 2, 0x40 }, { "qdcount 0", 5, 0x01 },
		{ "qdcount 3", 5, 0x02 }, { "qdcount 257", 4, 0x01 },
		{ "a label's length", 12, 0x01 }, { "a letter", 14, 0x01 },
		{ "the root", 28, 0x01 }, { "type", 30, 0x1c ^ 0x01 }, { "class", 32, 0x02 },
		{ "a compression pointer", 12, 0xc0 ^ 0x03 },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		memcpy(r, rb, qlen);
		r[bad[i].off] ^= bad[i].xor;
		if (dnsnap_fwd_reply_matches(qb, qlen, r, qlen, 0) != 0)
			fail_msg("a reply with a wrong %s was accepted", bad[i].what);
	}
	/* the flags other than QR and OPCODE do not matter: TC, AA, RA, RCODE */
	memcpy(r, rb, qlen);
	r[2] |= 0x07;
	r[3] = 0x82;
	assert_int_equal(dnsnap_fwd_reply_matches(qb, qlen, r, qlen, 0), 1);
	/* short replies, to the byte: never read past rlen */
	for (size_t n = 0; n < end; n++) {
		uint8_t *heap = malloc(n ? n : 1);
		memcpy(heap, rb, n);
		assert_int_equal(dnsnap_fwd_reply_matches(qb, qlen, heap, n, 0), 0);
		free(heap);
	}
	/* a query that is not one: no header, a bad name */
	assert_int_equal(dnsnap_fwd_reply_matches(qb, 11, rb, qlen, 0), 0);
	assert_int_equal(dnsnap_fwd_reply_matches(qb, end - 1, rb, qlen, 0), 0);
}

static void test_reply_matches_case(void **state)
{
	(void)state;
	uint8_t qb[512], rb[512];
	size_t qlen;
	/* without 0x20 the reply's case does not matter */
	query_and_reply(qb, &qlen, rb, 0);
	rb[13] = 'W';
	rb[17] = 'E';
	assert_int_equal(dnsnap_fwd_reply_matches(qb, qlen, rb, qlen, 0), 1);
	/* with 0x20: byte for byte */
	query_and_reply(qb, &qlen, rb, 1);
	assert_memory_not_equal(qb + 12, "\x03www\x07" "example\x03" "com", 16);
	assert_int_equal(dnsnap_fwd_reply_matches(qb, qlen, rb, qlen, 1), 1);
	for (size_t i = 13; i < 28; i++) {
		if (rb[i] < 'A')
			continue;
		rb[i] ^= 0x20;
		assert_int_equal(dnsnap_fwd_reply_matches(qb, qlen, rb, qlen, 1), 0);
		assert_int_equal(dnsnap_fwd_reply_matches(qb, qlen, rb, qlen, 0), 1);
		rb[i] ^= 0x20;
	}
	/* no case folding beyond ASCII letters: '@' (0x40) is not '`' (0x60) */
	uint8_t m[512];
	dnsnap_query_t q;
	client_query("a@b", 1, 0, m, &q);
	qlen = dnsnap_fwd_build_query(&q, 1, NULL, qb, sizeof qb);
	memcpy(rb, qb, qlen);
	rb[2] |= 0x80;
	rb[14] = '`';
	assert_int_equal(dnsnap_fwd_reply_matches(qb, qlen, rb, qlen, 0), 0);
}

/* ---------------------------------------------------------------- a fake upstream */

enum mode {
	M_ANSWER,      /* an A record 192.0.2.1 (192.0.2.2 over TCP) */
	M_SERVFAIL,
	M_REFUSED,
	M_SILENT,
	M_TC,          /* TC=1 over UDP, the answer over TCP */
	M_TC_ALWAYS,   /* TC=1 over both */
	M_FORGE,       /* forged datagrams, then the answer */
	M_LOWER,       /* the answer with the question lower-cased (breaks 0x20) */
	M_TC_FORGE,    /* TC=1 over UDP, over TCP the answer with the wrong ID */
	M_BROKEN,      /* silent for names whose first label starts "broken", else M_ANSWER */
};

struct fake {
	int udp, tcp, stopfd;
	uint16_t port;
	_Atomic int mode;        /* enum mode: a test may switch it */
	unsigned delay_ms;
	_Atomic int udp_seen, tcp_seen;
	pthread_t th;
};

/* An answer to @p q (@p qlen bytes) in @p out: its question, then @p rcode,
 * @p tc and, when neither, one A record 192.0.2.@p last. */
static size_t make_reply(const uint8_t *q, size_t qlen, uint8_t *out, unsigned rcode, int tc,
			 uint8_t last)
{
	size_t end = 12;
	while (end < qlen && q[end] != 0)
		end += 1u + q[end];
	end += 1 + 4;
	if (end > qlen)
		return 0;
	memcpy(out, q, end);
	out[2] = (uint8_t)(0x80 | (q[2] & 0x01) | (tc ? 0x02 : 0));
	out[3] = (uint8_t)(0x80 | rcode);
	st16be(out + 6, 0);
	st16be(out + 8, 0);
	st16be(out + 10, 0);
	if (tc || rcode != 0)
		return end;
	st16be(out + 6, 1);
	static const uint8_t rr[] = { 0xc0, 12, 0, 1, 0, 1, 0, 0, 1, 44, 0, 4, 192, 0, 2 };
	memcpy(out + end, rr, sizeof rr);
	out[end + sizeof rr] = last;
	return end + sizeof rr + 1;
}

static void fake_udp(struct fake *k)
{
	uint8_t q[1500], r[1500];
	struct sockaddr_in from;
	socklen_t fl = sizeof from;
	ssize_t n = recvfrom(k->udp, q, sizeof q, 0, (struct sockaddr *)&from, &fl);
	if (n < 12)
		return;
	atomic_fetch_add(&k->udp_seen, 1);
	if (k->mode == M_SILENT ||
	    (k->mode == M_BROKEN && n > 19 && memcmp(q + 13, "broken", 6) == 0))
		return;
	if (k->delay_ms > 0) {
		struct timespec ts = { k->delay_ms / 1000, (long)(k->delay_ms % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
	size_t rl;
	switch (k->mode) {
	case M_SERVFAIL:
		rl = make_reply(q, (size_t)n, r, 2, 0, 0);
		break;
	case M_REFUSED:
		rl = make_reply(q, (size_t)n, r, 5, 0, 0);
		break;
	case M_TC:
	case M_TC_ALWAYS:
	case M_TC_FORGE:
		rl = make_reply(q, (size_t)n, r, 0, 1, 0);
		break;
	case M_FORGE: {
		/* the wrong ID, then the wrong question, from the upstream's socket */
		rl = make_reply(q, (size_t)n, r, 0, 0, 6);
		r[1] ^= 1;
		sendto(k->udp, r, rl, 0, (struct sockaddr *)&from, fl);
		r[1] ^= 1;
		r[13] ^= 1;
		sendto(k->udp, r, rl, 0, (struct sockaddr *)&from, fl);
		r[13] ^= 1;
		/* the right reply (but 6) from another port: the kernel drops it */
		int other = socket(AF_INET, SOCK_DGRAM, 0);
		sendto(other, r, rl, 0, (struct sockaddr *)&from, fl);
		close(other);
		rl = make_reply(q, (size_t)n, r, 0, 0, 1);
		break;
	}
	case M_LOWER:
		rl = make_reply(q, (size_t)n, r, 0, 0, 1);
		for (size_t i = 12; i < rl && r[i] != 0xc0; i++)
			if (r[i] >= 'A' && r[i] <= 'Z')
				r[i] |= 0x20;
		break;
	default:
		rl = make_reply(q, (size_t)n, r, 0, 0, 1);
		break;
	}
	sendto(k->udp, r, rl, 0, (struct sockaddr *)&from, fl);
}

static int read_all(int fd, uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t got = recv(fd, p, n, 0);
		if (got <= 0)
			return -1;
		p += got;
		n -= (size_t)got;
	}
	return 0;
}

static void fake_tcp(struct fake *k)
{
	int c = accept(k->tcp, NULL, NULL);
	if (c < 0)
		return;
	struct timeval tv = { 5, 0 };
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	uint8_t len[2], q[1500], r[2 + 1500];
	if (read_all(c, len, 2) == 0 && ld16be(len) <= sizeof q &&
	    read_all(c, q, ld16be(len)) == 0) {
		atomic_fetch_add(&k->tcp_seen, 1);
		size_t rl = make_reply(q, ld16be(len), r + 2, 0, k->mode == M_TC_ALWAYS, 2);
		st16be(r, (uint16_t)rl);
		if (k->mode == M_TC_FORGE)
			r[3] ^= 1;
		send(c, r, 2 + rl, MSG_NOSIGNAL);
	}
	close(c);
}

static void *fake_main(void *arg)
{
	struct fake *k = arg;
	for (;;) {
		struct pollfd p[3] = {
			{ k->udp, POLLIN, 0 }, { k->tcp, POLLIN, 0 }, { k->stopfd, POLLIN, 0 },
		};
		if (poll(p, 3, -1) < 0)
			continue;
		if (p[2].revents)
			return NULL;
		if (p[0].revents)
			fake_udp(k);
		if (p[1].revents)
			fake_tcp(k);
	}
}

static void loopback(struct sockaddr_in *a, uint16_t port)
{
	memset(a, 0, sizeof *a);
	a->sin_family = AF_INET;
	a->sin_port = htons(port);
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}

/* A UDP socket on 127.0.0.1, a port the kernel picks, and TCP on the same
 * port (another pick when that one is taken for TCP). */
static struct fake *fake_start_slow(enum mode mode, unsigned delay_ms)
{
	struct fake *k = calloc(1, sizeof *k);
	assert_non_null(k);
	k->mode = mode;
	k->delay_ms = delay_ms;
	for (int tries = 0;; tries++) {
		assert_true(tries < 50);
		struct sockaddr_in a;
		socklen_t al = sizeof a;
		loopback(&a, 0);
		k->udp = socket(AF_INET, SOCK_DGRAM, 0);
		assert_int_equal(bind(k->udp, (struct sockaddr *)&a, sizeof a), 0);
		assert_int_equal(getsockname(k->udp, (struct sockaddr *)&a, &al), 0);
		k->tcp = socket(AF_INET, SOCK_STREAM, 0);
		int one = 1;
		setsockopt(k->tcp, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (bind(k->tcp, (struct sockaddr *)&a, sizeof a) == 0 && listen(k->tcp, 16) == 0) {
			k->port = ntohs(a.sin_port);
			break;
		}
		close(k->udp);
		close(k->tcp);
	}
	k->stopfd = eventfd(0, 0);
	assert_int_equal(pthread_create(&k->th, NULL, fake_main, k), 0);
	return k;
}

static struct fake *fake_start(enum mode mode)
{
	return fake_start_slow(mode, 0);
}

static void fake_stop(struct fake *k)
{
	uint64_t one = 1;
	assert_int_equal(write(k->stopfd, &one, sizeof one), (ssize_t)sizeof one);
	pthread_join(k->th, NULL);
	close(k->udp);
	close(k->tcp);
	close(k->stopfd);
	free(k);
}

/* ---------------------------------------------------------------- the hooks' record */

#define MAX_CALLS 16

struct rec {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int ndone, nrej;
	enum dnsnap_fwd_result result[MAX_CALLS];
	uint8_t reply[MAX_CALLS][512];
	size_t len[MAX_CALLS];
	int had_reply[MAX_CALLS];
	void *waiters[MAX_CALLS][128];
	size_t nw[MAX_CALLS];
	void *rej[MAX_CALLS];
	int why[MAX_CALLS];
	pthread_t done_thread;   /* where the last done() ran */
	int nlog;
	enum dnsnap_fwd_event ev[MAX_CALLS];
	int log_up[MAX_CALLS];
	char log[MAX_CALLS][400];
};

static struct rec rec;

static void rec_reset(void)
{
	pthread_mutex_lock(&rec.mu);
	rec.ndone = rec.nrej = rec.nlog = 0;
	pthread_mutex_unlock(&rec.mu);
}

static void on_done(void *arg, enum dnsnap_fwd_result r, const uint8_t *reply, size_t len,
		    void *const *waiters, size_t n)
{
	(void)arg;
	pthread_mutex_lock(&rec.mu);
	int i = rec.ndone;
	if (i < MAX_CALLS) {
		rec.result[i] = r;
		rec.had_reply[i] = reply != NULL;
		rec.len[i] = len;
		if (reply != NULL && len <= sizeof rec.reply[i])
			memcpy(rec.reply[i], reply, len);
		rec.nw[i] = n;
		for (size_t j = 0; j < n && j < 128; j++)
			rec.waiters[i][j] = waiters[j];
		rec.ndone++;
	}
	rec.done_thread = pthread_self();
	pthread_cond_broadcast(&rec.cv);
	pthread_mutex_unlock(&rec.mu);
}

static void on_rejected(void *arg, void *waiter, int why)
{
	(void)arg;
	pthread_mutex_lock(&rec.mu);
	if (rec.nrej < MAX_CALLS) {
		rec.rej[rec.nrej] = waiter;
		rec.why[rec.nrej] = why;
		rec.nrej++;
	}
	pthread_cond_broadcast(&rec.cv);
	pthread_mutex_unlock(&rec.mu);
}

static void on_log(void *arg, enum dnsnap_fwd_event ev, int upstream, const char *msg)
{
	(void)arg;
	pthread_mutex_lock(&rec.mu);
	if (rec.nlog < MAX_CALLS) {
		rec.ev[rec.nlog] = ev;
		rec.log_up[rec.nlog] = upstream;
		snprintf(rec.log[rec.nlog], sizeof rec.log[0], "%s", msg);
		rec.nlog++;
	}
	pthread_mutex_unlock(&rec.mu);
}

/* Wait until done() ran @p ndone times and rejected() @p nrej times. */
static void rec_wait(int ndone, int nrej)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += WAIT_MS / 1000;
	pthread_mutex_lock(&rec.mu);
	while (rec.ndone < ndone || rec.nrej < nrej)
		if (pthread_cond_timedwait(&rec.cv, &rec.mu, &until) == ETIMEDOUT)
			break;
	int ok = rec.ndone >= ndone && rec.nrej >= nrej;
	int d = rec.ndone, r = rec.nrej;
	pthread_mutex_unlock(&rec.mu);
	if (!ok)
		fail_msg("waited for %d done and %d rejected, got %d and %d", ndone, nrej, d, r);
}

/* ---------------------------------------------------------------- the forwarder */

/* A forwarder for @p ups, the loop not started. */
static dnsnap_fwd_t *make(struct fake *const *ups, int nup, unsigned timeout_ms, unsigned tries,
			  unsigned max_outstanding, unsigned max_waiters, int x20)
{
	dnsnap_fwd_opts_t o;
	memset(&o, 0, sizeof o);
	for (int i = 0; i < nup; i++) {
		struct sockaddr_in a;
		loopback(&a, ups[i]->port);
		memcpy(&o.up[i].addr, &a, sizeof a);
		o.up[i].addr_len = sizeof a;
		snprintf(o.up[i].text, sizeof o.up[i].text, "127.0.0.1:%u", ups[i]->port);
	}
	o.nup = nup;
	o.timeout_ms = timeout_ms;
	o.tries = tries;
	o.max_outstanding = max_outstanding;
	o.max_waiters = max_waiters;
	o.use_0x20 = x20;
	dnsnap_fwd_hooks_t h = {
		.done = on_done, .rejected = on_rejected, .log = on_log, .arg = NULL,
	};
	dnsnap_fwd_t *f = NULL;
	dnsnap_diag_t d;
	rec_reset();
	if (dnsnap_fwd_new(&o, &h, &f, &d) != DNSNAP_OK)
		fail_msg("dnsnap_fwd_new: %s", d.msg);
	return f;
}

/* ... with its loop in the library's thread, as dnsnap serve runs it. */
static dnsnap_fwd_t *start(struct fake *const *ups, int nup, unsigned timeout_ms, unsigned tries,
			   unsigned max_outstanding, unsigned max_waiters, int x20)
{
	dnsnap_fwd_t *f = make(ups, nup, timeout_ms, tries, max_outstanding, max_waiters, x20);
	assert_int_equal(dnsnap_fwd_start(f), DNSNAP_OK);
	return f;
}

static void submit(dnsnap_fwd_t *f, const char *name, uintptr_t waiter, int want)
{
	uint8_t m[512];
	dnsnap_query_t q;
	client_query(name, 1, 0, m, &q);
	assert_int_equal(dnsnap_fwd_submit(f, &q, (void *)waiter), want);
}

static dnsnap_fwd_stats_t *stats(dnsnap_fwd_t *f)
{
	static dnsnap_fwd_stats_t st;
	memset(&st, 0, sizeof st);
	dnsnap_fwd_stats(f, &st);
	return &st;
}

static void fwd_free_and_stop(dnsnap_fwd_t *f, struct fake *a)
{
	dnsnap_fwd_free(f);
	fake_stop(a);
}

/* The last byte of the one A record of done() call @p i's reply. */
static uint8_t reply_marker(int i)
{
	assert_true(rec.had_reply[i]);
	assert_int_equal(ld16be(rec.reply[i] + 6), 1);
	return rec.reply[i][rec.len[i] - 1];
}

static void test_one_query_one_answer(void **state)
{
	(void)state;
	struct fake *a = fake_start(M_ANSWER);
	dnsnap_fwd_t *f = start(&a, 1, 2000, 3, 0, 0, 0);
	submit(f, "www.example.com", 42, DNSNAP_FWD_QUEUED);
	rec_wait(1, 0);
	assert_int_equal(dnsnap_fwd_drain(f, WAIT_MS), 0);
	assert_int_equal(rec.result[0], DNSNAP_FWD_ANSWER);
	assert_int_equal(rec.nw[0], 1);
	assert_ptr_equal(rec.waiters[0][0], (void *)42);
	assert_int_equal(reply_marker(0), 1);
	assert_int_equal((rec.reply[0][3] & 0x0f), 0);
	dnsnap_fwd_stats_t *st = stats(f);
	assert_int_equal(st->nup, 1);
	char name[64];
	snprintf(name, sizeof name, "127.0.0.1:%u", a->port);
	assert_string_equal(st->up[0].name, name);
	assert_int_equal(st->up[0].queries, 1);
	assert_int_equal(st->up[0].answers, 1);
	uint64_t n = 0;
	for (int i = 0; i <= DNSNAP_FWD_LATENCY_N; i++)
		n += st->up[0].latency[i];
	assert_int_equal(n, 1);
	assert_int_equal(st->up[0].healthy, 1);
	assert_int_equal(st->in_flight, 0);
	assert_int_equal(st->outstanding, 0);
	assert_int_equal(dnsnap_fwd_process(f), DNSNAP_EINVAL);   /* the thread's loop */
	assert_int_equal(dnsnap_fwd_start(f), DNSNAP_EINVAL);
	assert_int_equal(atomic_load(&a->udp_seen), 1);
	dnsnap_fwd_free(f);
	assert_int_equal(rec.ndone, 1);         /* nothing in flight: no DNSNAP_FWD_STOPPED */
	fake_stop(a);
}

static void test_hundred_misses_one_upstream_query(void **state)
{
	(void)state;
	struct fake *a = fake_start_slow(M_ANSWER, 500);
	dnsnap_fwd_t *f = start(&a, 1, 5000, 1, 0, 0, 0);
	for (uintptr_t i = 1; i <= 100; i++)
		submit(f, i % 2 ? "www.example.com" : "WWW.Example.Com", i, DNSNAP_FWD_QUEUED);
	rec_wait(1, 0);
	assert_int_equal(dnsnap_fwd_drain(f, WAIT_MS), 0);
	assert_int_equal(rec.ndone, 1);
	assert_int_equal(rec.result[0], DNSNAP_FWD_ANSWER);
	assert_int_equal(rec.nw[0], 100);
	for (uintptr_t i = 1; i <= 100; i++)
		assert_ptr_equal(rec.waiters[0][i - 1], (void *)i);
	assert_int_equal(atomic_load(&a->udp_seen), 1);
	assert_int_equal(stats(f)->coalesced, 99);
	dnsnap_fwd_free(f);
	fake_stop(a);
}

static void test_forged_replies_are_not_delivered(void **state)
{
	(void)state;
	struct fake *a = fake_start(M_FORGE);
	dnsnap_fwd_t *f = start(&a, 1, 5000, 1, 0, 0, 0);
	submit(f, "www.example.com", 1, DNSNAP_FWD_QUEUED);
	rec_wait(1, 0);
	assert_int_equal(rec.result[0], DNSNAP_FWD_ANSWER);
	assert_int_equal(reply_marker(0), 1);   /* forgeries carry 192.0.2.6 */
	dnsnap_fwd_stats_t *st = stats(f);
	/* the wrong ID and the wrong question; the other port's never arrives */
	assert_int_equal(st->up[0].mismatched, 2);
	assert_int_equal(st->up[0].answers, 1);
	dnsnap_fwd_free(f);
	fake_stop(a);
}

static void test_0x20_case_checked(void **state)
{
	(void)state;
	/* an upstream that keeps the case answers */
	struct fake *a = fake_start(M_ANSWER);
	dnsnap_fwd_t *f = start(&a, 1, 5000, 1, 0, 0, 1);
	submit(f, "abcdefghijklmnopqrstuvwxyz.example", 1, DNSNAP_FWD_QUEUED);
	rec_wait(1, 0);
	assert_int_equal(rec.result[0], DNSNAP_FWD_ANSWER);
	dnsnap_fwd_free(f);
	fake_stop(a);
	/* one that lower-cases the question does not (26 + 7 random letters
	 * all lower case: 1 in 2^33) */
	a = fake_start(M_LOWER);
	f = start(&a, 1, 300, 1, 0, 0, 1);
	submit(f, "abcdefghijklmnopqrstuvwxyz.example", 1, DNSNAP_FWD_QUEUED);
	rec_wait(1, 0);
	assert_int_equal(rec.result[0], DNSNAP_FWD_TIMEOUT);
	assert_int_equal(stats(f)->up[0].mismatched, 1);
	dnsnap_fwd_free(f);
	fake_stop(a);
}

static void test_timeout_after_every_try(void **state)
{
	(void)state;
	struct fake *a = fake_start(M_SILENT);
	dnsnap_fwd_t *f = start(&a, 1, 100, 3, 0, 0, 0);
	submit(f, "www.example.com", 1, DNSNAP_FWD_QUEUED);
	rec_wait(1, 0);
	assert_int_equal(rec.result[0], DNSNAP_FWD_TIMEOUT);
	assert_false(rec.had_reply[0]);
	assert_int_equal(atomic_load(&a->udp_seen), 3);
	dnsnap_fwd_stats_t *st = stats(f);
	assert_int_equal(st->up[0].queries, 3);
	assert_int_equal(st->up[0].timeouts, 3);
	assert_int_equal(st->up[0].errors, 0);
	dnsnap_fwd_free(f);
	fake_stop(a);
}

static void test_servfail_then_failover_answer(void **state)
{
	(void)state;
	struct fake *ups[2] = { fake_start(M_SERVFAIL), fake_start(M_ANSWER) };
	dnsnap_fwd_t *f = start(ups, 2, 5000, 3, 0, 0, 0);
	submit(f, "www.example.com", 1, DNSNAP_FWD_QUEUED);
	rec_wait(1, 0);
	assert_int_equal(rec.result[0], DNSNAP_FWD_ANSWER);
	assert_int_equal(reply_marker(0), 1);
	assert_int_equal(atomic_load(&ups[0]->udp_seen), 1);
	assert_int_equal(atomic_load(&ups[1]->udp_seen), 1);
	dnsnap_fwd_stats_t *st = stats(f);
	assert_int_equal(st->nup, 2);
	assert_int_equal(st->up[0].errors, 1);
	assert_int_equal(st->up[1].answers, 1);
	dnsnap_fwd_free(f);
	fake_stop(ups[0]);
	fake_stop(ups[1]);
}

/*
 * An upstream that answers @p name with @p rcode (mode @p mode) @p tries
 * times: the query fails with its last reply; each attempt is an error, and
 * the upstream stays up, unlogged (the RCODE is about the name).
 */
static void error_rcode_everywhere(enum mode mode, const char *name, unsigned rcode,
				   unsigned tries)
{
	struct fake *a = fake_start(mode);
	dnsnap_fwd_t *f = start(&a, 1, 5000, tries, 0, 0, 0);
	submit(f, name, 1, DNSNAP_FWD_QUEUED);
	rec_wait(1, 0);
	assert_int_equal(rec.result[0], DNSNAP_FWD_FAILED);
	assert_true(rec.had_reply[0]);
	assert_int_equal(rec.reply[0][3] & 0x0f, rcode);
	assert_int_equal(atomic_load(&a->udp_seen), tries);
	dnsnap_fwd_stats_t *st = stats(f);
	assert_int_equal(st->up[0].errors, tries);
	assert_int_equal(st->up[0].healthy, 1);
	assert_int_equal(rec.nlog, 0);
	fwd_free_and_stop(f, a);
}

static void test_servfail_everywhere_fails_with_the_reply(void **state)
{
	(void)state;
	error_rcode_everywhere(M_SERVFAIL, "www.example.com", 2, 2);
}

/* A port nobody listens on (one the kernel gave, then closed): the kernel
 * answers ICMP port unreachable. */
static uint16_t unused_port(void)
{
	struct sockaddr_in a;
	socklen_t al = sizeof a;
	loopback(&a, 0);
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&a, &al), 0);
	close(s);
	return ntohs(a.sin_port);
}

static void test_tc_asks_again_over_tcp(void **state)
{
	(void)state;
	struct fake *a = fake_start(M_TC);
	dnsnap_fwd_t *f = start(&a, 1, 5000, 3, 0, 0, 0);
	submit(f, "www.example.com", 1, DNSNAP_FWD_QUEUED);
	rec_wait(1, 0);
	assert_int_equal(rec.result[0], DNSNAP_FWD_ANSWER);
	assert_int_equal(reply_marker(0), 2);   /* TCP's answer */
	assert_int_equal(rec.reply[0][2] & 0x02, 0);
	assert_int_equal(atomic_load(&a->udp_seen), 1);
	assert_int_equal(atomic_load(&a->tcp_seen), 1);
	dnsnap_fwd_stats_t *st = stats(f);
	assert_int_equal(st->up[0].tcp_fallbacks, 1);
	assert_int_equal(st->up[0].queries, 2);
	assert_int_equal(st->up[0].answers, 1);
	dnsnap_fwd_free(f);
	fake_stop(a);
}

static void test_tc_over_tcp_too_fails(void **state)
{
	(void)state;
	struct fake *a = fake_start(M_TC_ALWAYS);
	dnsnap_fwd_t *f = start(&a, 1, 5000, 2, 0, 0, 0);
	submit(f, "www.example.com", 1, DNSNAP_FWD_QUEUED);
	rec_wait(1, 0);
	assert_int_equal(rec.result[0], DNSNAP_FWD_FAILED);
	assert_int_equal(atomic_load(&a->udp_seen), 2);
	assert_int_equal(atomic_load(&a->tcp_seen), 2);
	assert_int_equal(stats(f)->up[0].errors, 2);
	dnsnap_fwd_free(f);
	fake_stop(a);
}

static void test_tcp_reply_for_another_id_fails(void **state)
{
	(void)state;
	struct fake *a = fake_start(M_TC_FORGE);
	dnsnap_fwd_t *f = start(&a, 1, 5000, 1, 0, 0, 0);
	submit(f, "www.example.com", 1, DNSNAP_FWD_QUEUED);
	rec_wait(1, 0);
	assert_int_equal(rec.result[0], DNSNAP_FWD_FAILED);
	assert_false(rec.had_reply[0]);
	assert_int_equal(atomic_load(&a->tcp_seen), 1);
	dnsnap_fwd_stats_t *st = stats(f);
	assert_int_equal(st->up[0].mismatched, 1);
	assert_int_equal(st->up[0].errors, 1);
	assert_int_equal(st->up[0].answers, 0);
	dnsnap_fwd_free(f);
	fake_stop(a);
}

static void test_max_outstanding_refuses_a_third_key(void **state)
{
	(void)state;
	struct fake *a = fake_start(M_SILENT);
	dnsnap_fwd_t *f = start(&a, 1, 60000, 1, 2, 0, 0);
	submit(f, "a.example", 1, DNSNAP_FWD_QUEUED);
	submit(f, "b.example", 2, DNSNAP_FWD_QUEUED);
	submit(f, "c.example", 3, DNSNAP_FWD_FULL);
	assert_int_equal(dnsnap_fwd_drain(f, 50), -ETIMEDOUT);
	dnsnap_fwd_free(f);
	/* both in flight end at dnsnap_fwd_free(), each with its own waiter */
	assert_int_equal(rec.ndone, 2);
	assert_int_equal(rec.result[0], DNSNAP_FWD_STOPPED);
	assert_int_equal(rec.result[1], DNSNAP_FWD_STOPPED);
	assert_false(rec.had_reply[0]);
	assert_int_equal(rec.nw[0] + rec.nw[1], 2);
	assert_ptr_not_equal(rec.waiters[0][0], rec.waiters[1][0]);
	assert_int_equal(rec.nrej, 0);
	fake_stop(a);
}

static void test_max_waiters_rejects_the_third(void **state)
{
	(void)state;
	struct fake *a = fake_start(M_SILENT);
	dnsnap_fwd_t *f = start(&a, 1, 60000, 1, 0, 2, 0);
	submit(f, "a.example", 1, DNSNAP_FWD_QUEUED);
	submit(f, "a.example", 2, DNSNAP_FWD_QUEUED);
	submit(f, "a.example", 3, DNSNAP_FWD_QUEUED);
	rec_wait(0, 1);
	assert_ptr_equal(rec.rej[0], (void *)3);
	assert_int_equal(rec.why[0], DNSNAP_FWD_KEY_FULL);
	dnsnap_fwd_free(f);
	assert_int_equal(rec.ndone, 1);
	assert_int_equal(rec.result[0], DNSNAP_FWD_STOPPED);
	assert_int_equal(rec.nw[0], 2);
	assert_ptr_equal(rec.waiters[0][0], (void *)1);
	assert_ptr_equal(rec.waiters[0][1], (void *)2);
	assert_int_equal(atomic_load(&a->udp_seen) <= 1, 1);
	fake_stop(a);
}

/* A resolver that answers but times out on one broken name (a delegation to
 * dead servers) stays up: any client could otherwise move every query to the
 * next upstream by asking for broken names (review of issue 12). */
static void test_timeouts_of_one_name_do_not_mark_an_answering_upstream_down(void **state)
{
	(void)state;
	struct fake *ups[2] = { fake_start(M_BROKEN), fake_start(M_ANSWER) };
	dnsnap_fwd_t *f = start(ups, 2, 300, 1, 0, 0, 0);
	submit(f, "broken1.example", 1, DNSNAP_FWD_QUEUED);
	submit(f, "broken2.example", 2, DNSNAP_FWD_QUEUED);
	submit(f, "broken3.example", 3, DNSNAP_FWD_QUEUED);
	submit(f, "fine.example", 4, DNSNAP_FWD_QUEUED); /* answered while the three wait */
	rec_wait(4, 0);
	assert_int_equal(stats(f)->up[0].timeouts, 3);
	assert_int_equal(stats(f)->up[0].healthy, 1);
	/* the next query still goes to A, the first upstream */
	submit(f, "next.example", 5, DNSNAP_FWD_QUEUED);
	rec_wait(5, 0);
	assert_int_equal(atomic_load(&ups[1]->udp_seen), 0);
	dnsnap_fwd_free(f);
	fake_stop(ups[0]);
	fake_stop(ups[1]);
}

/* @p i's log() call was @p ev with the message @p fmt (printf) says. */
static void expect_log(int i, enum dnsnap_fwd_event ev, const char *fmt, unsigned port)
{
	char want[400];
	snprintf(want, sizeof want, fmt, port);
	assert_true(rec.nlog > i);
	assert_int_equal(rec.ev[i], ev);
	assert_int_equal(rec.log_up[i], 0);
	assert_string_equal(rec.log[i], want);
}

/* Three names asked of f's first upstream (port @p port, silent), one
 * attempt each, time out: it is marked down, and the log hook says so. */
static void three_timeouts_mark_it_down(dnsnap_fwd_t *f, unsigned port)
{
	static const char *names[] = { "a.example", "b.example", "c.example" };
	for (int i = 0; i < 3; i++) {
		assert_int_equal(stats(f)->up[0].healthy, 1);
		submit(f, names[i], 1, DNSNAP_FWD_QUEUED);
		rec_wait(i + 1, 0);
		assert_int_equal(rec.result[i], DNSNAP_FWD_TIMEOUT);
	}
	assert_int_equal(stats(f)->up[0].healthy, 0);
	assert_int_equal(rec.nlog, 1);
	expect_log(0, DNSNAP_FWD_DOWN,
		   "upstream 127.0.0.1:%u down: 3 timeouts in a row, retried in 1 s", port);
}

static void test_three_timeouts_mark_an_upstream_down(void **state)
{
	(void)state;
	struct fake *ups[2] = { fake_start(M_SILENT), fake_start(M_ANSWER) };
	dnsnap_fwd_t *f = start(ups, 2, 100, 1, 0, 0, 0);
	three_timeouts_mark_it_down(f, ups[0]->port);
	assert_int_equal(stats(f)->up[1].healthy, 1);
	/* down for 1 s: the next query goes straight to B */
	submit(f, "d.example", 1, DNSNAP_FWD_QUEUED);
	rec_wait(4, 0);
	assert_int_equal(rec.result[3], DNSNAP_FWD_ANSWER);
	assert_int_equal(atomic_load(&ups[0]->udp_seen), 3);
	assert_int_equal(atomic_load(&ups[1]->udp_seen), 1);
	dnsnap_fwd_free(f);
	fake_stop(ups[0]);
	fake_stop(ups[1]);
}

/* A name the upstream refuses (a zone transfer asked of a resolver), three
 * times: an answer about that name, the upstream stays up. */
static void test_refused_for_one_name_leaves_the_upstream_up(void **state)
{
	(void)state;
	error_rcode_everywhere(M_REFUSED, "axfr.example", 5, 3);
}

/* One unresolvable name, asked three times over (three timeouts each), with
 * nothing else asked meanwhile, leaves the upstream up: the same key timing
 * out again is no new sign that the upstream is gone. */
static void test_one_unresolvable_name_leaves_the_upstream_up(void **state)
{
	(void)state;
	struct fake *a = fake_start(M_BROKEN);
	dnsnap_fwd_t *f = start(&a, 1, 100, 3, 0, 0, 0);
	submit(f, "fine1.example", 1, DNSNAP_FWD_QUEUED);
	rec_wait(1, 0);
	assert_int_equal(rec.result[0], DNSNAP_FWD_ANSWER);
	for (int i = 1; i <= 3; i++) {
		submit(f, "broken.example", 2, DNSNAP_FWD_QUEUED);
		rec_wait(i + 1, 0);
		assert_int_equal(rec.result[i], DNSNAP_FWD_TIMEOUT);
		assert_int_equal(stats(f)->up[0].healthy, 1);
	}
	assert_int_equal(atomic_load(&a->udp_seen), 1 + 9);
	assert_int_equal(stats(f)->up[0].timeouts, 9);
	assert_int_equal(rec.nlog, 0);
	submit(f, "fine2.example", 3, DNSNAP_FWD_QUEUED);
	rec_wait(5, 0);
	assert_int_equal(rec.result[4], DNSNAP_FWD_ANSWER);
	fwd_free_and_stop(f, a);
}

/* An upstream that answers nothing, asked for three names, is marked down
 * and the log hook says so; tried again after its time down, still silent,
 * it stays down twice as long; once it answers, it is up again. */
static void test_a_silent_upstream_goes_down_then_up_again(void **state)
{
	(void)state;
	struct fake *a = fake_start(M_SILENT);
	dnsnap_fwd_t *f = start(&a, 1, 100, 1, 0, 0, 0);
	three_timeouts_mark_it_down(f, a->port);
	/* its only upstream: queries still go to it; the one after its second
	 * is its probe */
	int n = 3;
	while (rec.nlog < 2 && n < MAX_CALLS) {
		char name[32];
		snprintf(name, sizeof name, "d%d.example", n);
		submit(f, name, 1, DNSNAP_FWD_QUEUED);
		rec_wait(++n, 0);
		assert_int_equal(rec.result[n - 1], DNSNAP_FWD_TIMEOUT);
	}
	expect_log(1, DNSNAP_FWD_STILL_DOWN,
		   "upstream 127.0.0.1:%u still down: no reply in time, retried in 2 s", a->port);
	atomic_store(&a->mode, M_ANSWER);
	submit(f, "up.example", 1, DNSNAP_FWD_QUEUED);
	rec_wait(n + 1, 0);
	assert_int_equal(rec.result[n], DNSNAP_FWD_ANSWER);
	assert_int_equal(stats(f)->up[0].healthy, 1);
	assert_int_equal(rec.nlog, 3);
	char want[64];
	snprintf(want, sizeof want, "upstream 127.0.0.1:%u up again (down ", a->port);
	assert_int_equal(rec.ev[2], DNSNAP_FWD_UP);
	assert_int_equal(strncmp(rec.log[2], want, strlen(want)), 0);
	fwd_free_and_stop(f, a);
}

/* ICMP port unreachable is an error, and the upstream's failure each time:
 * one query's three attempts mark it down, and the log names the reason. */
static void test_connection_errors_mark_an_upstream_down(void **state)
{
	(void)state;
	struct fake none = { 0 };
	none.port = unused_port();
	struct fake *up = &none;
	dnsnap_fwd_t *f = start(&up, 1, 5000, 3, 0, 0, 0);
	submit(f, "www.example.com", 1, DNSNAP_FWD_QUEUED);
	rec_wait(1, 0);
	assert_int_equal(rec.result[0], DNSNAP_FWD_FAILED);
	assert_false(rec.had_reply[0]);
	assert_int_equal(stats(f)->up[0].errors, 3);
	assert_int_equal(stats(f)->up[0].healthy, 0);
	expect_log(0, DNSNAP_FWD_DOWN, "upstream 127.0.0.1:%u down: 3 errors in a row "
		   "(UDP: Connection refused), retried in 1 s", none.port);
	dnsnap_fwd_free(f);
}

/* Wait for the forwarder's descriptor or its next deadline (at most 1 s),
 * then dnsnap_fwd_process(): an embedder's loop. */
static void loop_once(dnsnap_fwd_t *f)
{
	int t = dnsnap_fwd_timeout_ms(f);
	struct pollfd p = { dnsnap_fwd_fd(f), POLLIN, 0 };
	assert_true(poll(&p, 1, t < 0 || t > 1000 ? 1000 : t) >= 0);
	assert_int_equal(dnsnap_fwd_process(f), DNSNAP_OK);
}

/* Without dnsnap_fwd_start(), the caller's own loop drives it (UDP, then
 * TCP on TC=1) and the hooks run in the caller's thread; drain runs the
 * loop itself; free ends what is in flight, in that thread too. */
static void test_the_embedders_loop_drives_it(void **state)
{
	(void)state;
	struct fake *a = fake_start(M_TC);
	dnsnap_fwd_t *f = make(&a, 1, 5000, 3, 0, 0, 0);
	assert_int_equal(dnsnap_fwd_timeout_ms(f), -1);
	submit(f, "www.example.com", 1, DNSNAP_FWD_QUEUED);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		loop_once(f);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (rec.ndone < 1 && t.tv_sec - t0.tv_sec < WAIT_MS / 1000);
	assert_int_equal(rec.ndone, 1);
	assert_int_equal(rec.result[0], DNSNAP_FWD_ANSWER);
	assert_int_equal(reply_marker(0), 2);   /* TCP's answer */
	assert_true(pthread_equal(rec.done_thread, pthread_self()));

	submit(f, "two.example", 2, DNSNAP_FWD_QUEUED);
	assert_int_equal(dnsnap_fwd_drain(f, WAIT_MS), DNSNAP_OK);
	assert_int_equal(rec.ndone, 2);
	assert_int_equal(rec.result[1], DNSNAP_FWD_ANSWER);

	atomic_store(&a->mode, M_SILENT);
	submit(f, "three.example", 3, DNSNAP_FWD_QUEUED);
	loop_once(f);
	assert_int_equal(dnsnap_fwd_drain(f, 50), -ETIMEDOUT);
	assert_int_equal(stats(f)->in_flight, 1);
	rec.done_thread = (pthread_t)0;
	dnsnap_fwd_free(f);
	assert_int_equal(rec.ndone, 3);
	assert_int_equal(rec.result[2], DNSNAP_FWD_STOPPED);
	assert_true(pthread_equal(rec.done_thread, pthread_self()));
	fake_stop(a);
}

static void test_new_checks_its_options(void **state)
{
	(void)state;
	dnsnap_fwd_opts_t o;
	memset(&o, 0, sizeof o);
	dnsnap_fwd_hooks_t h = { .done = on_done, .rejected = on_rejected, .arg = NULL };
	dnsnap_fwd_t *f = NULL;
	dnsnap_diag_t d;
	assert_int_equal(dnsnap_fwd_new(&o, &h, &f, &d), DNSNAP_EINVAL);
	assert_string_equal(d.msg, "0 upstreams: 1 to 8 are possible");
	o.nup = 1;
	snprintf(o.up[0].text, sizeof o.up[0].text, "nowhere");
	assert_int_equal(dnsnap_fwd_new(&o, &h, &f, &d), DNSNAP_EINVAL);
	assert_string_equal(d.msg, "upstream nowhere: not an IPv4 or IPv6 address");
	struct sockaddr_in a;
	loopback(&a, 53);
	memcpy(&o.up[0].addr, &a, sizeof a);
	o.up[0].addr_len = sizeof a;
	h.rejected = NULL;
	assert_int_equal(dnsnap_fwd_new(&o, &h, &f, &d), DNSNAP_EINVAL);
	assert_string_equal(d.msg, "the forwarder needs both its done and rejected hooks");
	assert_null(f);
	dnsnap_fwd_free(NULL);
}

int main(void)
{
	pthread_mutex_init(&rec.mu, NULL);
	pthread_cond_init(&rec.cv, NULL);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_query_bytes),
		cmocka_unit_test(test_build_query_0x20_case_follows_rnd_letters_only),
		cmocka_unit_test(test_reply_matches_each_field),
		cmocka_unit_test(test_reply_matches_case),
		cmocka_unit_test(test_one_query_one_answer),
		cmocka_unit_test(test_hundred_misses_one_upstream_query),
		cmocka_unit_test(test_forged_replies_are_not_delivered),
		cmocka_unit_test(test_0x20_case_checked),
		cmocka_unit_test(test_timeout_after_every_try),
		cmocka_unit_test(test_servfail_then_failover_answer),
		cmocka_unit_test(test_servfail_everywhere_fails_with_the_reply),
		cmocka_unit_test(test_tc_asks_again_over_tcp),
		cmocka_unit_test(test_tc_over_tcp_too_fails),
		cmocka_unit_test(test_tcp_reply_for_another_id_fails),
		cmocka_unit_test(test_max_outstanding_refuses_a_third_key),
		cmocka_unit_test(test_max_waiters_rejects_the_third),
		cmocka_unit_test(test_three_timeouts_mark_an_upstream_down),
		cmocka_unit_test(test_timeouts_of_one_name_do_not_mark_an_answering_upstream_down),
		cmocka_unit_test(test_refused_for_one_name_leaves_the_upstream_up),
		cmocka_unit_test(test_one_unresolvable_name_leaves_the_upstream_up),
		cmocka_unit_test(test_a_silent_upstream_goes_down_then_up_again),
		cmocka_unit_test(test_connection_errors_mark_an_upstream_down),
		cmocka_unit_test(test_the_embedders_loop_drives_it),
		cmocka_unit_test(test_new_checks_its_options),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
