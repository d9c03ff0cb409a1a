/* control_internal.h - what the control socket's two files share: the server and its clients. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_CONTROL_INTERNAL_H
#define BLOOMD_CONTROL_INTERNAL_H

/*
 * For control.c (the listening socket: accept, peer check, limits, open
 * and close) and control_client.c (each client: reading lines, serving
 * them, replies and streams), which uses nothing of control.c.
 */
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "control.h"
#include "listener.h"

#define MAX_PEER_GROUPS 64
#define CONTROL_TRUSTED_SLOTS 4 /* of max_clients, kept for trusted peers */

/*
 * A client's input is read with recvmsg(2) by its own event, not by the
 * bufferevent (which only writes): a command may come with an open file
 * (SCM_RIGHTS), and a plain read would drop it.
 */
struct control_client {
	struct control *c;
	struct bufferevent *bev;   /* output only */
	struct evbuffer *in;       /* what read_cb has read, not yet served */
	struct event *readable;    /* the socket has input */
	struct event *idle;        /* nothing read for idle_timeout (or, lingering, 2 s) */
	int passed_fd;             /* the last descriptor the client passed, or -1 */
	control_more_cb more_cb;   /* a reply being streamed (control_stream), or NULL */
	void *more_ctx;
	void (*more_free)(void *);
	struct event *more;        /* continues past the budget */
	struct evbuffer *pending;  /* replies of the burst being served */
	uint64_t id;
	struct ucred cred;
	bool trusted, held, closing, eof;
	void *data;
	struct control_client *prev, *next;
};

struct control {
	struct control_options o;
	char *path;
	gid_t gid;
	bool has_gid;
	struct listener *listener;
	struct event_base *base;
	struct control_client *clients, *serving;
	unsigned nclients, nuntrusted;
	uint64_t next_id, rejected;
};

/* control_client.c: a client accepted on fd, set going; one freed, its place in the list given back. */
void control_client_start(struct control *c, struct control_client *cl, int fd, const struct ucred *peer, bool trusted);
void control_client_free(struct control_client *cl);
/* What a client has been answered and not yet sent, written as far as its socket takes it now (at close). */
void control_client_flush(struct control_client *cl);

#endif
