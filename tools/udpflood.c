/* udpflood - send small UDP datagrams as fast as sendmmsg goes, for a time: make bench's inline figures. */
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

int main(int argc, char **argv)
{
	struct sockaddr_in to = { .sin_family = AF_INET };
	char payload[32] = "bloomd bench datagram";
	struct mmsghdr msgs[BATCH];
	struct iovec iov = { payload, sizeof(payload) };
	unsigned long long sent = 0;

	if (argc != 4 || inet_pton(AF_INET, argv[1], &to.sin_addr) != 1) {
		fprintf(stderr, "usage: udpflood ADDRESS PORT SECONDS\n");
		return 2;
	}
	to.sin_port = htons((uint16_t)atoi(argv[2]));
	double seconds = atof(argv[3]), start = now();
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0) {
		perror("udpflood: socket");
		return 1;
	}
	memset(msgs, 0, sizeof(msgs));
	for (int i = 0; i < BATCH; i++) {
		msgs[i].msg_hdr.msg_name = &to;
		msgs[i].msg_hdr.msg_namelen = sizeof(to);
		msgs[i].msg_hdr.msg_iov = &iov;
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	while (now() - start < seconds) {
		int n = sendmmsg(fd, msgs, BATCH, 0);
		if (n > 0)
			sent += (unsigned)n;
	}
	printf("%llu\n", sent);
	close(fd);
	return 0;
}
