/* listener.h - a listening socket in the loop, for the control socket and the metrics listener alike. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_LISTENER_H
#define BLOOMD_LISTENER_H
/*
 * Each connection accepted is offered to take; one it does not take is sent
 * busy (as the socket takes it now) and closed. When accept(2) fails (out of
 * descriptors, most likely) the listener pauses a second instead of spinning
 * on a socket that stays ready; with reserve, it first gives up a descriptor
 * it held back, so that the client knocking now is still served.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

struct event_base;
struct listener;

struct listener_options {
	const char *busy; /* what a connection not taken is sent */
	bool reserve;     /* hold a descriptor back for the next client when none is left */
};

/* The connection on fd, taken: true once its owner has it; false to turn it away. */
typedef bool (*listener_take_cb)(void *ctx, int fd);

/* Listen on fd (bound, listening, non-blocking; closed with the listener, or here on failure). NULL: no memory. */
struct listener *listener_on(struct event_base *base, int fd, const struct listener_options *o, listener_take_cb take,
			     void *ctx);
/* The same on a socket bound to sa here (SO_REUSEADDR); NULL with errno. */
struct listener *listener_bind(struct event_base *base, const struct sockaddr *sa, socklen_t len,
			       const struct listener_options *o, listener_take_cb take, void *ctx);
void listener_free(struct listener *l);

uint64_t listener_turned_away(const struct listener *l);
uint64_t listener_accept_errors(const struct listener *l);

#endif
