/* listener.c - a listening socket in the loop: connections taken or turned away, accept(2)'s failures paused on. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "listener.h"

#include <errno.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct listener {
	struct evconnlistener *evl;
	struct event *resume;  /* accepting again a second after accept(2) failed */
	struct listener_options o;
	int reserve_fd;        /* with o.reserve: held back, given up to accept one when none is left */
	listener_take_cb take;
	void *ctx;
	uint64_t turned_away, accept_errors;
};

static void turn_away(struct listener *l, int fd)
{
	if (send(fd, l->o.busy, strlen(l->o.busy), MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		/* nothing more to do for it */
	}
	close(fd);
	l->turned_away++;
}

static void offer(struct listener *l, int fd)
{
	if (!l->take(l->ctx, fd))
		turn_away(l, fd);
}

static void accept_cb(struct evconnlistener *evl, evutil_socket_t fd, struct sockaddr *sa, int salen, void *arg)
{
	(void)evl;
	(void)sa;
	(void)salen;
	offer(arg, fd);
}

static void take_reserve(struct listener *l)
{
	if (l->o.reserve && l->reserve_fd < 0)
		l->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

static void resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct listener *l = arg;

	(void)fd;
	(void)what;
	take_reserve(l);
	evconnlistener_enable(l->evl);
}

static void accept_error_cb(struct evconnlistener *evl, void *arg)
{
	struct listener *l = arg;
	struct timeval second = { .tv_sec = 1 };
	int e = EVUTIL_SOCKET_ERROR();

	l->accept_errors++;
	if ((e == EMFILE || e == ENFILE) && l->reserve_fd >= 0) {
		close(l->reserve_fd);
		l->reserve_fd = -1;
		int fd = accept4(evconnlistener_get_fd(evl), NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0)
			offer(l, fd);
		take_reserve(l);
	}
	evconnlistener_disable(evl);
	if (evtimer_add(l->resume, &second) < 0) /* no memory: accept again at once rather than never */
		evconnlistener_enable(evl);
}

static struct listener *listener_new(struct event_base *base, const struct listener_options *o, listener_take_cb take,
				     void *ctx)
{
	struct listener *l = calloc(1, sizeof(*l));

	if (l == NULL)
		return NULL;
	*l = (struct listener){ .o = *o, .reserve_fd = -1, .take = take, .ctx = ctx };
	if ((l->resume = evtimer_new(base, resume_cb, l)) == NULL) {
		free(l);
		return NULL;
	}
	take_reserve(l);
	return l;
}

static struct listener *listening(struct listener *l)
{
	if (l->evl == NULL) {
		int e = errno;
		listener_free(l);
		errno = e;
		return NULL;
	}
	evconnlistener_set_error_cb(l->evl, accept_error_cb);
	return l;
}

struct listener *listener_on(struct event_base *base, int fd, const struct listener_options *o, listener_take_cb take,
			     void *ctx)
{
	struct listener *l = listener_new(base, o, take, ctx);

	if (l)
		l->evl = evconnlistener_new(base, accept_cb, l, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, fd);
	if (l == NULL || l->evl == NULL)
		close(fd);
	return l ? listening(l) : NULL;
}

struct listener *listener_bind(struct event_base *base, const struct sockaddr *sa, socklen_t len,
			       const struct listener_options *o, listener_take_cb take, void *ctx)
{
	struct listener *l = listener_new(base, o, take, ctx);

	if (l)
		l->evl = evconnlistener_new_bind(base, accept_cb, l,
						 LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_REUSEABLE, 64, sa,
						 (int)len);
	return l ? listening(l) : NULL;
}

void listener_free(struct listener *l)
{
	if (l == NULL)
		return;
	if (l->evl)
		evconnlistener_free(l->evl);
	event_free(l->resume);
	if (l->reserve_fd >= 0)
		close(l->reserve_fd);
	free(l);
}

uint64_t listener_turned_away(const struct listener *l)
{
	return l->turned_away;
}

uint64_t listener_accept_errors(const struct listener *l)
{
	return l->accept_errors;
}
