/*
 * serve_net.h: the sockets side of `dnsnap serve` (serve_net.c: the UDP
 * workers, the TCP thread, --allow; serve_sock.c: binding the addresses, and
 * handing them over at the stop).
 */
#ifndef DNSNAP_SERVE_NET_H
#define DNSNAP_SERVE_NET_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>

#include "serve.h"
#include "serve_config.h"
#include "serve_stats.h"

#define BATCH 32               /* datagrams per recvmmsg() / sendmmsg() */
#define UDP_IN_MAX 4096        /* a longer datagram is no query: dropped */
#define RECV_TIMEOUT_MS 200    /* how soon a UDP worker sees the stop flag */
#define TCP_IDLE_MS 10000      /* no whole query for this long: closed (less when
				* the slots run short: tcp_idle_limit()) */
#define TCP_IDLE_MIN_MS 200    /* the shortest, with 80% of the slots taken */
#define TCP_MAX_DENIED 16      /* connections from outside --allow open at once */
#define TCP_DENIED_IDLE_MS 1000 /* ... each closed after its first reply or this */
#define TCP_MSG_MAX 65535

struct server;

struct listener {
	struct sockaddr_storage addr;
	socklen_t addr_len;
	char text[INET6_ADDRSTRLEN + 8];
	int wildcard;            /* 0.0.0.0 or [::]: replies need the query's address */
	int tcp_fd;
};

/* A reply's IP_PKTINFO, for a wildcard listener */
union ctl {
	char buf[CMSG_SPACE(sizeof(struct in6_pktinfo))];
	struct cmsghdr align;
};

/* A UDP worker's buffers: BATCH messages in, BATCH replies out. */
struct udp_bufs {
	struct mmsghdr in[BATCH], out[BATCH];
	struct iovec iov_in[BATCH], iov_out[BATCH];
	struct sockaddr_storage from[BATCH];
	union ctl ctl[BATCH];
	uint8_t q[BATCH][UDP_IN_MAX];
	uint8_t r[BATCH][SERVE_UDP_MAX];
};

struct udp_worker {
	struct tstat cnt;
	struct server *s;
	const struct listener *l;
	int fd;
	pthread_t th;
	int started;
};

/* An answer for a TCP client, from the forwarder's thread to the TCP thread. */
struct tcp_done {
	struct tcp_done *next;
	uint64_t conn;
	int64_t t0_us;
	struct hist *lat;        /* where its latency goes once sent */
	size_t len;
	uint8_t msg[];           /* with its 2-byte length */
};

struct conn {
	int fd;
	uint64_t id;             /* for answers that come back from the forwarder */
	int allowed;             /* the peer is in --allow */
	uint8_t src[17];         /* its source: family, address cut to --tcp-source-prefix */
	unsigned waiting;        /* queries handed to the forwarder, not answered yet */
	int64_t last;            /* ms: accepted, or its last whole query */
	size_t in_len;
	int eof;                 /* the client shut its side: reply, then close */
	uint8_t *pend;           /* replies the socket did not take whole */
	size_t pend_len, pend_off;
	struct sockaddr_storage peer;
	uint8_t in[2 + TCP_MSG_MAX];
};

/* The TCP thread's own */
struct tcp {
	struct server *s;
	int ep;
	struct conn **conns;     /* cfg->tcp_max slots */
	int nconns, cap;
	int ndenied;             /* of them, from outside --allow */
	uint64_t next_id;
	int listening;           /* 0 while accept() fails for lack of descriptors */
	uint8_t out[2 + TCP_MSG_MAX];
};

/* The sockets side of the server */
struct net_side {
	struct listener ls[MAX_LISTEN];
	int nls;
	struct udp_worker *workers; /* nls * cfg->threads */
	int nworkers;
	atomic_int stop;         /* the TCP thread and the workers end */
	atomic_int draining;     /* UDP sockets connected away: workers end when empty */
	struct tcp *tcp;
	pthread_t tcp_th;
	int tcp_started;
	int tcp_stop_fd;         /* an eventfd: written to stop the TCP thread */
	int tcp_done_fd;         /* an eventfd: answers wait in tcp_done */
	pthread_mutex_t tcp_mu;
	struct tcp_done *tcp_done, **tcp_done_tail;
	atomic_int tcp_draining; /* listeners closed: serve the connections to the end */
	struct tstat tcp_cnt;
};

/* serve_net.c */
int allowed(const struct server *s, const struct sockaddr_storage *sa);
/** Whether @p sa is in the @p n prefixes of @p list (IPv4-mapped as IPv4). */
int cidr_list_match(const struct cidr *list, int n, const struct sockaddr_storage *sa);
/** --metrics-allow, for the metrics' accept policy (@p arg: the server). */
int metrics_allowed(void *arg, const struct sockaddr *sa, socklen_t len);
/** The idle time after which a TCP connection is closed, for @p used of
 * @p cap slots taken (ms): TCP_IDLE_MS down to TCP_IDLE_MIN_MS. */
int64_t tcp_idle_limit(int used, int cap);
void *udp_main(void *arg);
void *tcp_main(void *arg);

/* serve_sock.c */
/** The listeners of cfg->listen bound: each one's TCP socket, then its UDP
 * workers' sockets (port 0: a free one). @return 0 or EXIT_USAGE (reported) */
int net_open(struct server *s);
/** The UDP workers and the TCP thread started. @return 0 or EXIT_USAGE */
int net_start(struct server *s);
/** Stop taking queries without losing one: the UDP sockets connected away
 * and drained, the TCP listeners closed, the connections served to the end. */
void net_hand_over(struct server *s);
/** The threads stopped and joined (any time: what was not started is
 * skipped); their counters stay to be read. */
void net_stop(struct server *s);
/** net_stop(), then every socket closed and the workers freed. */
void net_close(struct server *s);

#endif
