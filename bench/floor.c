/*
 * floor: the kernel's UDP path and nothing else, the floor every DNS server
 * on this machine stands on. Each datagram goes back as it came with QR set:
 * no parsing, no cache. recvmmsg/sendmmsg in batches of 32, THREADS threads
 * each on its own socket of one SO_REUSEPORT address, as `dnsnap serve`
 * does, so what differs between the two is dnsnap's own work.
 *
 *   floor [serve SNAP] --listen ADDR:PORT [--threads N]
 *
 * Takes `dnsnap serve`'s arguments (a snapshot is ignored), so that
 * bench/serve_cpu.sh and bench/peers/run.sh start it as they start a server;
 * prints "listening on ADDR:PORT" on stderr once its sockets are bound.
 * libc only.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define BATCH 32
#define MSG_MAX 4096

static struct sockaddr_in where;

static void *worker(void *arg)
{
	int fd = (int)(intptr_t)arg;
	static _Thread_local uint8_t buf[BATCH][MSG_MAX];
	static _Thread_local struct sockaddr_in from[BATCH];
	struct mmsghdr m[BATCH];
	struct iovec iov[BATCH];
	for (;;) {
		for (int i = 0; i < BATCH; i++) {
			iov[i] = (struct iovec){ buf[i], MSG_MAX };
			m[i].msg_hdr = (struct msghdr){ .msg_name = &from[i], .msg_namelen = sizeof from[i],
							.msg_iov = &iov[i], .msg_iovlen = 1 };
		}
		int n = recvmmsg(fd, m, BATCH, MSG_WAITFORONE, NULL);
		if (n <= 0)
			continue;
		for (int i = 0; i < n; i++) {
			iov[i].iov_len = m[i].msg_len;
			if (m[i].msg_len >= 3)
				buf[i][2] |= 0x80; /* QR */
		}
		sendmmsg(fd, m, (unsigned)n, 0);
	}
	return NULL;
}

static int bound_socket(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0), on = 1;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof on) != 0 ||
	    bind(fd, (struct sockaddr *)&where, sizeof where) != 0) {
		perror("floor: socket");
		exit(1);
	}
	return fd;
}

int main(int argc, char **argv)
{
	const char *listen = NULL;
	int threads = 2;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc)
			listen = argv[++i];
		else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
			threads = atoi(argv[++i]);
	}
	char host[64];
	unsigned port;
	if (listen == NULL || sscanf(listen, "%63[^:]:%u", host, &port) != 2 || threads < 1 ||
	    threads > 64 || inet_pton(AF_INET, host, &where.sin_addr) != 1 || port > 65535) {
		fprintf(stderr, "usage: floor [serve SNAP] --listen ADDR:PORT [--threads N]\n");
		return 2;
	}
	where.sin_family = AF_INET;
	where.sin_port = htons((uint16_t)port);
	pthread_t t;
	for (int i = 0; i < threads; i++)
		if (pthread_create(&t, NULL, worker, (void *)(intptr_t)bound_socket()) != 0)
			return 1;
	fprintf(stderr, "floor: listening on %s\n", listen);
	pthread_join(t, NULL);
	return 0;
}
