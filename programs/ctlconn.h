/* ctlconn.h - a client connection to bloomd's control socket: send lines, read JSON replies. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_CTLCONN_H
#define BLOOMD_CTLCONN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct ctlconn {
	int fd;                    /* -1 when closed */
	const char *prog;          /* names the tool in messages */
	bool quiet;                /* no message when the connection fails (polling for a daemon) */
	char *buf;                 /* what has been read and not yet returned */
	size_t len, cap;
};

/* Connect to the socket at path; -1 after a message on stderr naming prog. */
int ctlconn_open(struct ctlconn *c, const char *prog, const char *path);
/* Send len bytes (whole lines); -1 after a message. */
int ctlconn_send(struct ctlconn *c, const char *text, size_t len);
/* Send one line with an open file descriptor attached (SCM_RIGHTS); -1 after a message. */
int ctlconn_send_fd(struct ctlconn *c, const char *line, size_t len, int fd);
/* The next reply line, parsed; NULL after a message if bloomd hung up or sent no JSON. */
json_t *ctlconn_reply(struct ctlconn *c);
void ctlconn_close(struct ctlconn *c);

#endif
