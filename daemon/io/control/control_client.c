/* control_client.c - one control client: its lines read and served, replies and streams written, limits. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "control_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"

void control_client_free(struct control_client *cl)
{
	struct control *c = cl->c;

	if (c->o.gone)
		c->o.gone(c->o.ctx, cl);
	if (cl->prev)
		cl->prev->next = cl->next;
	else
		c->clients = cl->next;
	if (cl->next)
		cl->next->prev = cl->prev;
	c->nclients--;
	c->nuntrusted -= !cl->trusted;
	if (cl->more_cb && cl->more_free)
		cl->more_free(cl->more_ctx);
	if (cl->passed_fd >= 0)
		close(cl->passed_fd);
	event_free(cl->readable);
	event_free(cl->idle);
	event_free(cl->more);
	evbuffer_free(cl->pending);
	evbuffer_free(cl->in);
	bufferevent_free(cl->bev);
	free(cl);
}

void control_client_flush(struct control_client *cl)
{
	struct evbuffer *out = bufferevent_get_output(cl->bev);

	size_t len;

	evbuffer_add_buffer(out, cl->pending);
	/*
	 * Only the bufferevent drains its output: sent from it as it is, never
	 * blocking (a client gone, or with its buffer full, gets what fits).
	 */
	if ((len = evbuffer_get_length(out)) > 0)
		send(bufferevent_getfd(cl->bev), evbuffer_pullup(out, -1), len, MSG_DONTWAIT | MSG_NOSIGNAL);
}

static struct evbuffer *reply_buffer(struct control_client *cl)
{
	return cl->c->serving == cl ? cl->pending : bufferevent_get_output(cl->bev);
}

void control_reply_part(struct control_client *cl, const char *text, size_t len)
{
	evbuffer_add(reply_buffer(cl), text, len);
}

void control_reply(struct control_client *cl, const char *text, size_t len)
{
	struct evbuffer *out = reply_buffer(cl);

	evbuffer_add(out, text, len);
	evbuffer_add(out, "\n", 1);
}

static void control_close_after_reply(struct control_client *cl)
{
	cl->closing = true;
}

/*
 * Read the client's input (again), with its idle timer; or stop reading it.
 * false if the loop would not watch it (no memory): the caller lets it go.
 */
static bool reading_on(struct control_client *cl, const struct timeval *idle)
{
	return event_add(cl->readable, NULL) == 0 && event_add(cl->idle, idle) == 0;
}

static void reading_off(struct control_client *cl)
{
	event_del(cl->readable);
	event_del(cl->idle);
}

static struct timeval idle_time(const struct control_client *cl)
{
	return (struct timeval){ .tv_sec = cl->c->o.idle_timeout };
}

/*
 * The replies are out: close our side, but read (and drop) what the client
 * still sends for a moment, so that a client busy writing a long line does
 * not get EPIPE before it has read the error (a lingering close).
 */
static void linger(struct control_client *cl)
{
	struct timeval moment = { .tv_sec = 2 };

	if (cl->eof) {
		control_client_free(cl);
		return;
	}
	shutdown(bufferevent_getfd(cl->bev), SHUT_WR);
	bufferevent_set_timeouts(cl->bev, NULL, NULL);
	if (!reading_on(cl, &moment))
		control_client_free(cl);
}

/* The line is too long: say so, then close. */
static void refuse_long_line(struct control_client *cl)
{
	static const char msg[] = "{\"ok\":false,\"error\":\"line too long (the limit is 8192 bytes)\"}";

	control_reply(cl, msg, sizeof(msg) - 1);
	control_close_after_reply(cl);
	cl->c->rejected++;
}

/* The next complete line into buf; 1 got one, 0 none yet, -1 too long. */
static int next_line(struct evbuffer *in, char *buf, size_t *len)
{
	size_t eol_len;
	struct evbuffer_ptr at = evbuffer_search_eol(in, NULL, &eol_len, EVBUFFER_EOL_LF);

	if (at.pos < 0)
		return evbuffer_get_length(in) > CONTROL_MAX_LINE ? -1 : 0;
	if ((size_t)at.pos > CONTROL_MAX_LINE)
		return -1;
	evbuffer_remove(in, buf, (size_t)at.pos);
	evbuffer_drain(in, eol_len);
	buf[at.pos] = '\0';
	*len = (size_t)at.pos;
	return 1;
}

/* Handle what the client has sent, within the budget and the output limit. */
static void serve(struct control_client *cl)
{
	BLOOMD_ON_LOOP();
	struct control *c = cl->c;
	struct evbuffer *in = cl->in, *out = bufferevent_get_output(cl->bev);
	struct timeval idle = idle_time(cl);
	char line[CONTROL_MAX_LINE + 1];
	unsigned handled = 0;
	size_t len;
	int got = 0;

	c->serving = cl;
	while (!cl->held && !cl->closing && handled < CONTROL_BUDGET &&
	       evbuffer_get_length(out) + evbuffer_get_length(cl->pending) < CONTROL_MAX_OUTPUT &&
	       (got = next_line(in, line, &len)) == 1) {
		c->o.line(c->o.ctx, cl, line, len);
		handled++;
	}
	if (got < 0)
		refuse_long_line(cl);
	if (handled && c->o.burst)
		c->o.burst(c->o.ctx, evbuffer_get_length(cl->pending) > 0);
	c->serving = NULL;
	evbuffer_add_buffer(out, cl->pending);
	if (cl->held || cl->closing)
		return;
	if (evbuffer_get_length(out) >= CONTROL_MAX_OUTPUT) {
		/* Wait for the client to read its replies: the write callback resumes. */
		reading_off(cl);
		return;
	}
	if (!cl->eof && !reading_on(cl, &idle)) {
		control_client_free(cl);
		return;
	}
	if (handled == CONTROL_BUDGET)
		event_active(cl->more, EV_TIMEOUT, 0); /* the rest after the loop's other events */
	else if (cl->eof)
		control_close_after_reply(cl); /* the client is done sending; done once replied */
}

static void more_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	serve(arg);
}

/* The client closed its side: answer what it sent, then close (echo stats | socat ...). */
static void client_eof(struct control_client *cl)
{
	cl->eof = true;
	reading_off(cl);
	if (cl->closing) {
		/* Done sending: free it once its replies are out (write_cb). */
		if (evbuffer_get_length(bufferevent_get_output(cl->bev)) == 0)
			control_client_free(cl);
		return;
	}
	if (!cl->held)
		serve(cl);
	if (cl->closing && evbuffer_get_length(bufferevent_get_output(cl->bev)) == 0)
		control_client_free(cl);
}

/* Keep the last descriptor a message carried; close any other (and one replaced). */
static void take_passed_fds(struct control_client *cl, struct msghdr *msg)
{
	for (struct cmsghdr *h = CMSG_FIRSTHDR(msg); h; h = CMSG_NXTHDR(msg, h)) {
		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof(fd));
			if (cl->passed_fd >= 0)
				close(cl->passed_fd);
			cl->passed_fd = fd;
		}
	}
}

static void read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct control_client *cl = arg;
	char buf[16384];
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(4 * sizeof(int))];
	} ctl;
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.space,
			      .msg_controllen = sizeof(ctl.space) };

	(void)what;
	ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		control_client_free(cl);
		return;
	}
	take_passed_fds(cl, &msg);
	if (n == 0) {
		client_eof(cl);
		return;
	}
	if (cl->closing)
		return; /* lingering: what it still sends is dropped */
	struct timeval idle = idle_time(cl);
	if (event_add(cl->idle, &idle) < 0) {
		control_client_free(cl);
		return;
	}
	evbuffer_add(cl->in, buf, (size_t)n);
	serve(cl);
}

/* Nothing read for idle_timeout: cut off (or, lingering, done waiting). */
static void idle_cb(evutil_socket_t fd, short what, void *arg)
{
	struct control_client *cl = arg;

	(void)fd;
	(void)what;
	if (!cl->closing)
		cl->c->rejected++;
	control_client_free(cl);
}

/* Add the parts of a streamed reply while there is room for them. */
static void pump(struct control_client *cl)
{
	struct evbuffer *out = bufferevent_get_output(cl->bev);

	while (cl->more_cb && evbuffer_get_length(out) + evbuffer_get_length(cl->pending) < CONTROL_MAX_OUTPUT)
		if (cl->more_cb(cl->more_ctx, cl)) {
			if (cl->more_free)
				cl->more_free(cl->more_ctx);
			cl->more_cb = NULL;
			control_release(cl);
		}
}

void control_stream(struct control_client *cl, control_more_cb more, void *ctx, void (*free_ctx)(void *))
{
	control_hold(cl);
	cl->more_cb = more;
	cl->more_ctx = ctx;
	cl->more_free = free_ctx;
	pump(cl);
}

static void write_cb(struct bufferevent *bev, void *arg)
{
	struct control_client *cl = arg;

	if (cl->closing) {
		if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
			linger(cl);
		return;
	}
	if (cl->more_cb)
		pump(cl); /* its output drained: the next parts of a long reply */
	else if (!cl->held)
		serve(cl); /* its output drained: read on */
}

/* Output errors and the write timeout (a client not reading its replies). */
static void event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct control_client *cl = arg;

	(void)bev;
	if (what & BEV_EVENT_TIMEOUT)
		cl->c->rejected++;
	control_client_free(cl);
}

/* A client accepted on fd (cl zeroed): its events, buffers and place in the list; turned away if they cannot be had. */
void control_client_start(struct control *c, struct control_client *cl, int fd, const struct ucred *peer, bool trusted)
{
	struct timeval idle = { .tv_sec = c->o.idle_timeout };

	cl->c = c;
	cl->id = ++c->next_id;
	cl->cred = *peer;
	cl->trusted = trusted;
	cl->passed_fd = -1;
	cl->bev = bufferevent_socket_new(c->base, fd, BEV_OPT_CLOSE_ON_FREE);
	cl->readable = event_new(c->base, fd, EV_READ | EV_PERSIST, read_cb, cl);
	cl->idle = evtimer_new(c->base, idle_cb, cl);
	cl->more = event_new(c->base, -1, 0, more_cb, cl);
	cl->pending = evbuffer_new();
	cl->in = evbuffer_new();
	if (cl->bev == NULL || cl->readable == NULL || cl->idle == NULL || cl->more == NULL ||
	    cl->pending == NULL || cl->in == NULL) {
		if (cl->bev)
			bufferevent_free(cl->bev);
		else
			close(fd);
		if (cl->readable)
			event_free(cl->readable);
		if (cl->idle)
			event_free(cl->idle);
		if (cl->more)
			event_free(cl->more);
		if (cl->pending)
			evbuffer_free(cl->pending);
		if (cl->in)
			evbuffer_free(cl->in);
		free(cl);
		c->rejected++;
		return;
	}
	cl->next = c->clients;
	if (c->clients)
		c->clients->prev = cl;
	c->clients = cl;
	c->nclients++;
	c->nuntrusted += !trusted;
	bufferevent_setcb(cl->bev, NULL, write_cb, event_cb, cl);
	bufferevent_setwatermark(cl->bev, EV_WRITE, CONTROL_MAX_OUTPUT / 2, 0);
	bufferevent_set_timeouts(cl->bev, NULL, &idle);
	bufferevent_enable(cl->bev, EV_WRITE);
	if (!reading_on(cl, &idle))
		control_client_free(cl);
}

bool control_client_trusted(const struct control_client *cl)
{
	return cl->trusted;
}

void **control_client_data(struct control_client *cl)
{
	return &cl->data;
}

uint64_t control_hold(struct control_client *cl)
{
	cl->held = true;
	reading_off(cl);
	return cl->id;
}

int control_client_take_fd(struct control_client *cl)
{
	int fd = cl->passed_fd;

	cl->passed_fd = -1;
	return fd;
}

void control_release(struct control_client *cl)
{
	cl->held = false;
	if (cl->eof && evbuffer_get_length(cl->in) == 0) {
		control_close_after_reply(cl);
		return;
	}
	event_active(cl->more, EV_TIMEOUT, 0);
}
