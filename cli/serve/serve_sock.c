/*
 * serve_sock.c: the addresses of `dnsnap serve` bound, its threads started,
 * and at the stop handed over to whichever process binds them next
 * (serve_net.h; the stop: the top of serve.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "log.h"
#include "server.h"

static const char CMD[] = "serve";

static uint16_t listener_port(const struct listener *l)
{
	const struct sockaddr_in *a4 = (const struct sockaddr_in *)&l->addr;
	const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)&l->addr;
	return ntohs(l->addr.ss_family == AF_INET ? a4->sin_port : a6->sin6_port);
}

static void listener_text(struct listener *l)
{
	char h[INET6_ADDRSTRLEN];
	const struct sockaddr_in *a4 = (const struct sockaddr_in *)&l->addr;
	const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)&l->addr;
	if (l->addr.ss_family == AF_INET) {
		inet_ntop(AF_INET, &a4->sin_addr, h, sizeof h);
		snprintf(l->text, sizeof l->text, "%s:%u", h, listener_port(l));
	} else {
		inet_ntop(AF_INET6, &a6->sin6_addr, h, sizeof h);
		snprintf(l->text, sizeof l->text, "[%s]:%u", h, listener_port(l));
	}
}

/*
 * A socket of @p type bound to l->addr; @p shared: with SO_REUSEPORT.
 * @return the descriptor, or -errno
 */
static int bind_socket(const struct listener *l, int type, int shared)
{
	int fd = socket(l->addr.ss_family, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	if (l->addr.ss_family == AF_INET6) /* [::] and 0.0.0.0 can both be listened on */
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	/* SO_REUSEPORT on both: a second process (the next one of a deploy) binds
	 * the same address while this one runs */
	if (shared)
		setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
	if (type == SOCK_STREAM) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	} else {
		if (l->wildcard && l->addr.ss_family == AF_INET)
			setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof one);
		if (l->wildcard && l->addr.ss_family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof one);
		struct timeval tv = { 0, RECV_TIMEOUT_MS * 1000 };
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
		int rcvbuf = 4 << 20; /* bursts; the kernel caps it at rmem_max */
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
	}
	if (bind(fd, (const struct sockaddr *)&l->addr, l->addr_len) != 0 ||
	    (type == SOCK_STREAM && listen(fd, 1024) != 0)) {
		int e = -errno;
		close(fd);
		return e;
	}
	if (type == SOCK_STREAM)
		fcntl(fd, F_SETFL, O_NONBLOCK);
	return fd;
}

/* Set the port of l->addr */
static void listener_set_port(struct listener *l, unsigned port)
{
	if (l->addr.ss_family == AF_INET)
		((struct sockaddr_in *)&l->addr)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)&l->addr)->sin6_port = htons(port);
}

/*
 * A port for "port 0", drawn below the kernel's ephemeral range
 * (net.ipv4.ip_local_port_range), from PICK_LOW up. Not the kernel's own
 * choice: Linux hands a port out of that range to a client socket that sets
 * SO_REUSEPORT (dig does) even when a socket of the same user, also with
 * SO_REUSEPORT, listens on it; a dig sent to such a port then gets its own
 * query back. Found in CI: one dig reply in some thousands was the query.
 * @return the port, or 0 (no room below the range: the kernel chooses)
 */
#define PICK_LOW 10000
static unsigned pick_port(void)
{
	unsigned lo = 32768;
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "re");
	if (f) {
		if (fscanf(f, "%u", &lo) != 1)
			lo = 32768;
		fclose(f);
	}
	if (lo <= PICK_LOW + 1000 || lo > 65536)
		return 0;
	unsigned r = 0;
	if (getrandom(&r, sizeof r, GRND_NONBLOCK) != sizeof r)
		r = (unsigned)getpid() * 2654435761u ^ (unsigned)time(NULL);
	return PICK_LOW + r % (lo - PICK_LOW);
}

/* Whether a socket of @p type can have l->addr to itself (no SO_REUSEPORT) */
static int port_alone(const struct listener *l, int type)
{
	int fd = bind_socket(l, type, 0);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/*
 * The TCP socket of each listener, then its UDP workers' sockets. Port 0:
 * a port of pick_port() that no socket has (TCP and UDP each bound once
 * alone first, so this server never joins another's SO_REUSEPORT group),
 * tried up to 64 times; the kernel's choice when pick_port() has no room.
 * @return 0 or EXIT_USAGE (reported)
 */
static int bind_all(struct server *s)
{
	for (int i = 0; i < s->net.nls; i++) {
		struct listener *l = &s->net.ls[i];
		int any_port = listener_port(l) == 0;
		for (int attempt = 0;; attempt++) {
			unsigned want = any_port ? pick_port() : 0;
			if (want) {
				listener_set_port(l, want);
				if (!port_alone(l, SOCK_STREAM) || !port_alone(l, SOCK_DGRAM)) {
					if (attempt == 63) {
						listener_text(l);
						return fail(CMD, NULL, "%s: no free port in 64 tries",
							    l->text);
					}
					continue;
				}
			}
			int fd = bind_socket(l, SOCK_STREAM, 1);
			if (fd < 0) {
				if (any_port && fd == -EADDRINUSE && attempt < 63)
					continue;
				if (any_port)
					listener_set_port(l, 0);
				listener_text(l);
				return fail(CMD, NULL, "%s: TCP: %s", l->text, strerror(-fd));
			}
			if (any_port && !want) {
				socklen_t al = l->addr_len;
				getsockname(fd, (struct sockaddr *)&l->addr, &al);
			}
			listener_text(l);
			l->tcp_fd = fd;
			int err = 0, k;
			for (k = 0; k < s->cfg->threads; k++) {
				struct udp_worker *w = &s->net.workers[i * s->cfg->threads + k];
				w->fd = bind_socket(l, SOCK_DGRAM, 1);
				if (w->fd < 0) {
					err = -w->fd;
					break;
				}
			}
			if (err == 0)
				break;
			while (k-- > 0) {
				close(s->net.workers[i * s->cfg->threads + k].fd);
				s->net.workers[i * s->cfg->threads + k].fd = -1;
			}
			if (!any_port || err != EADDRINUSE || attempt >= 63)
				return fail(CMD, NULL, "%s: UDP: %s", l->text, strerror(err));
			close(fd);
			l->tcp_fd = -1;
			listener_set_port(l, 0);
		}
	}
	return 0;
}


void net_hand_over(struct server *s)
{
	for (int i = 0; i < s->net.nworkers; i++) {
		struct udp_worker *w = &s->net.workers[i];
		struct sockaddr_storage sink;
		memset(&sink, 0, sizeof sink);
		socklen_t sl;
		if (w->l->addr.ss_family == AF_INET) {
			struct sockaddr_in *a = (struct sockaddr_in *)&sink;
			a->sin_family = AF_INET;
			a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			a->sin_port = htons(9); /* discard: no client asks from there */
			sl = sizeof *a;
		} else {
			struct sockaddr_in6 *a = (struct sockaddr_in6 *)&sink;
			a->sin6_family = AF_INET6;
			a->sin6_addr = in6addr_loopback;
			a->sin6_port = htons(9);
			sl = sizeof *a;
		}
		if (w->fd >= 0 && connect(w->fd, (struct sockaddr *)&sink, sl) != 0)
			slog(LOG_WARNING, "%s: UDP socket not taken out of the group: %s; queries "
			     "arriving while it closes may be lost", w->l->text, strerror(errno));
	}
	atomic_store(&s->net.draining, 1);
	atomic_store(&s->net.tcp_draining, 1);
	uint64_t one = 1;
	if (write(s->net.tcp_stop_fd, &one, sizeof one) < 0)
		slog(LOG_ERR, "eventfd: %s", strerror(errno));
	for (int i = 0; i < s->net.nworkers; i++)
		if (s->net.workers[i].started) {
			pthread_join(s->net.workers[i].th, NULL);
			s->net.workers[i].started = 0;
		}
}


int net_open(struct server *s)
{
	struct net_side *n = &s->net;
	const struct serve_config *c = s->cfg;
	n->tcp_stop_fd = n->tcp_done_fd = -1;
	n->tcp_done_tail = &n->tcp_done;
	pthread_mutex_init(&n->tcp_mu, NULL);
	n->nls = c->nlisten;
	for (int i = 0; i < n->nls; i++) {
		struct listener *l = &n->ls[i];
		memset(l, 0, sizeof *l);
		unsigned len;
		addr_parse(c->listen[i], DEFAULT_PORT, &l->addr, &len, &l->wildcard); /* checked */
		l->addr_len = len;
		l->tcp_fd = -1;
	}
	n->nworkers = n->nls * c->threads;
	n->workers = calloc((size_t)n->nworkers, sizeof *n->workers);
	n->tcp = calloc(1, sizeof *n->tcp);
	if (n->workers == NULL || n->tcp == NULL)
		return fail(CMD, NULL, "out of memory");
	for (int i = 0; i < n->nworkers; i++) {
		n->workers[i].fd = -1;
		n->workers[i].s = s;
		n->workers[i].l = &n->ls[i / c->threads];
	}
	n->tcp->s = s;
	n->tcp->ep = epoll_create1(EPOLL_CLOEXEC);
	n->tcp_stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	n->tcp_done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (n->tcp_stop_fd < 0 || n->tcp_done_fd < 0 || n->tcp->ep < 0)
		return fail(CMD, NULL, "eventfd, epoll: %s", strerror(errno));
	n->tcp->cap = (int)c->tcp_max;
	n->tcp->conns = calloc(c->tcp_max, sizeof *n->tcp->conns);
	if (n->tcp->conns == NULL)
		return fail(CMD, NULL, "out of memory");
	return bind_all(s);
}

int net_start(struct server *s)
{
	struct net_side *n = &s->net;
	n->tcp_started = pthread_create(&n->tcp_th, NULL, tcp_main, n->tcp) == 0;
	int started = n->tcp_started;
	for (int i = 0; i < n->nworkers && started; i++) {
		struct udp_worker *w = &n->workers[i];
		w->started = pthread_create(&w->th, NULL, udp_main, w) == 0;
		started = w->started;
	}
	return started ? 0 : fail(CMD, NULL, "cannot start the threads");
}

void net_stop(struct server *s)
{
	struct net_side *n = &s->net;
	atomic_store(&n->stop, 1);
	uint64_t one = 1;
	if (n->tcp_stop_fd >= 0 && write(n->tcp_stop_fd, &one, sizeof one) < 0)
		slog(LOG_ERR, "eventfd: %s", strerror(errno));
	for (int i = 0; n->workers != NULL && i < n->nworkers; i++)
		if (n->workers[i].started) {
			pthread_join(n->workers[i].th, NULL);
			n->workers[i].started = 0;
		}
	if (n->tcp_started)
		pthread_join(n->tcp_th, NULL);
	n->tcp_started = 0;
}

void net_close(struct server *s)
{
	struct net_side *n = &s->net;
	net_stop(s);
	if (n->tcp != NULL && n->tcp->ep >= 0)
		close(n->tcp->ep);
	if (n->tcp != NULL)
		free(n->tcp->conns);
	free(n->tcp);
	n->tcp = NULL;
	if (n->tcp_stop_fd >= 0)
		close(n->tcp_stop_fd);
	if (n->tcp_done_fd >= 0)
		close(n->tcp_done_fd);
	n->tcp_stop_fd = n->tcp_done_fd = -1;
	for (struct tcp_done *d = n->tcp_done, *next; d != NULL; d = next) {
		next = d->next;
		free(d);
	}
	n->tcp_done = NULL;
	for (int i = 0; i < n->nls; i++)
		if (n->ls[i].tcp_fd >= 0) {
			close(n->ls[i].tcp_fd);
			n->ls[i].tcp_fd = -1;
		}
	for (int i = 0; n->workers != NULL && i < n->nworkers; i++)
		if (n->workers[i].fd >= 0)
			close(n->workers[i].fd);
	free(n->workers);
	n->workers = NULL;
	pthread_mutex_destroy(&n->tcp_mu);
}
