/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * udpflood - send small UDP datagrams as fast as sendmmsg goes, for a time:
 * make bench's inline and capture figures. Given source addresses, a batch
 * goes from each in turn, so flows spread over queues and fanout members.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BATCH 64

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

#define MAX_SOURCES 64

int main(int argc, char **argv)
{
	struct sockaddr_in to = { .sin_family = AF_INET };
	char payload[32] = "bloomd bench datagram";
	struct mmsghdr msgs[BATCH];
	struct iovec iov = { payload, sizeof(payload) };
	unsigned long long sent = 0;
	int fds[MAX_SOURCES], nfds = argc > 4 ? argc - 4 : 1;

	if (argc < 4 || argc - 4 > MAX_SOURCES || inet_pton(AF_INET, argv[1], &to.sin_addr) != 1) {
		fprintf(stderr, "usage: udpflood ADDRESS PORT SECONDS [SOURCE-ADDRESS...] (at most %d)\n", MAX_SOURCES);
		return 2;
	}
	to.sin_port = htons((uint16_t)atoi(argv[2]));
	double seconds = atof(argv[3]), start = now();
	for (int i = 0; i < nfds; i++) {
		struct sockaddr_in from = { .sin_family = AF_INET };
		fds[i] = socket(AF_INET, SOCK_DGRAM, 0);
		if (fds[i] < 0) {
			perror("udpflood: socket");
			return 1;
		}
		if (argc > 4 && (inet_pton(AF_INET, argv[4 + i], &from.sin_addr) != 1 ||
				 bind(fds[i], (struct sockaddr *)&from, sizeof(from)) < 0)) {
			fprintf(stderr, "udpflood: cannot send from %s\n", argv[4 + i]);
			return 1;
		}
	}
	memset(msgs, 0, sizeof(msgs));
	for (int i = 0; i < BATCH; i++) {
		msgs[i].msg_hdr.msg_name = &to;
		msgs[i].msg_hdr.msg_namelen = sizeof(to);
		msgs[i].msg_hdr.msg_iov = &iov;
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	for (int turn = 0; now() - start < seconds; turn = (turn + 1) % nfds) {
		int n = sendmmsg(fds[turn], msgs, BATCH, 0);
		if (n > 0)
			sent += (unsigned)n;
	}
	printf("%llu\n", sent);
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	return 0;
}
