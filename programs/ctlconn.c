/* ctlconn.c - a client connection to bloomd's control socket: send lines, read JSON replies. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "ctlconn.h"
#include "cli.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int ctlconn_open(struct ctlconn *c, const char *prog, const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };

	c->prog = prog;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		cli_error("%s: %s: socket path too long", prog, path);
		return -1;
	}
	strcpy(sun.sun_path, path);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		if (!c->quiet)
			cli_error("%s: cannot connect to %s: %s (is bloomd running? -s names another socket)",
				prog, path, strerror(errno));
		return -1;
	}
	return 0;
}

int ctlconn_send(struct ctlconn *c, const char *text, size_t len)
{
	while (len > 0) {
		ssize_t w = write(c->fd, text, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			cli_error("%s: sending to bloomd: %s", c->prog, strerror(errno));
			return -1;
		}
		text += w;
		len -= (size_t)w;
	}
	return 0;
}

int ctlconn_send_fd(struct ctlconn *c, const char *line, size_t len, int fd)
{
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { (void *)(uintptr_t)line, len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.space,
			      .msg_controllen = sizeof(ctl.space) };
	struct cmsghdr *h = CMSG_FIRSTHDR(&msg);
	ssize_t w;

	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(h), &fd, sizeof(fd));
	/* The descriptor goes with the first byte; the rest of the line, if cut short, after. */
	do
		w = sendmsg(c->fd, &msg, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	if (w < 0) {
		cli_error("%s: sending to bloomd: %s", c->prog, strerror(errno));
		return -1;
	}
	return ctlconn_send(c, line + w, len - (size_t)w);
}

/* Read more into the buffer; -1 after a message at the end of the connection. */
static int fill(struct ctlconn *c)
{
	if (c->cap - c->len < 65536) {
		size_t cap = c->cap ? 2 * c->cap : 1 << 16;
		char *b = realloc(c->buf, cap);
		if (b == NULL) {
			cli_error("%s: out of memory reading the reply", c->prog);
			return -1;
		}
		c->buf = b;
		c->cap = cap;
	}
	for (;;) {
		ssize_t r = read(c->fd, c->buf + c->len, c->cap - c->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			cli_error("%s: bloomd closed the connection%s%s", c->prog, r < 0 ? ": " : "",
				r < 0 ? strerror(errno) : "");
			return -1;
		}
		c->len += (size_t)r;
		return 0;
	}
}

json_t *ctlconn_reply(struct ctlconn *c)
{
	char *nl;
	json_error_t jerr;

	while ((nl = c->len ? memchr(c->buf, '\n', c->len) : NULL) == NULL)
		if (fill(c) < 0)
			return NULL;
	json_t *reply = json_loadb(c->buf, (size_t)(nl - c->buf), 0, &jerr);
	c->len -= (size_t)(nl + 1 - c->buf);
	memmove(c->buf, nl + 1, c->len);
	if (reply == NULL)
		cli_error("%s: the reply is not JSON: %s", c->prog, jerr.text);
	return reply;
}

void ctlconn_close(struct ctlconn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->buf);
	c->fd = -1;
	c->buf = NULL;
	c->len = c->cap = 0;
}
