/* control.c - the control socket: Unix stream server, line framing, peer check, limits. */
#include "control.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>
#include <fcntl.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "error.h"

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
	struct evconnlistener *listener;
	struct event *resume;      /* accepting again after running out of descriptors */
	int reserve_fd;            /* held for an operator: given up to accept one when none is left */
	struct event_base *base;
	struct control_client *clients, *serving;
	unsigned nclients, nuntrusted;
	uint64_t next_id, rejected;
};

static void client_free(struct control_client *cl)
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

void control_close_after_reply(struct control_client *cl)
{
	cl->closing = true;
}

/* Read the client's input (again), with its idle timer; or stop reading it. */
static void reading_on(struct control_client *cl, const struct timeval *idle)
{
	event_add(cl->readable, NULL);
	event_add(cl->idle, idle);
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
		client_free(cl);
		return;
	}
	shutdown(bufferevent_getfd(cl->bev), SHUT_WR);
	bufferevent_set_timeouts(cl->bev, NULL, NULL);
	reading_on(cl, &moment);
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
	struct control *c = cl->c;
	struct evbuffer *in = cl->in, *out = bufferevent_get_output(cl->bev);
	struct timeval idle = idle_time(cl);
	static char line[CONTROL_MAX_LINE + 1];
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
	if (!cl->eof)
		reading_on(cl, &idle);
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
			client_free(cl);
		return;
	}
	if (!cl->held)
		serve(cl);
	if (cl->closing && evbuffer_get_length(bufferevent_get_output(cl->bev)) == 0)
		client_free(cl);
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
	static char buf[16384];
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
		client_free(cl);
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
	event_add(cl->idle, &idle);
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
	client_free(cl);
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
	client_free(cl);
}

static bool peer_in_group(int fd, gid_t gid, const struct ucred *cred)
{
	gid_t groups[MAX_PEER_GROUPS];
	socklen_t len = sizeof(groups);

	if (cred->gid == gid)
		return true;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
		return false;
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == gid)
			return true;
	return false;
}

/* Refuse a client past the limit with a reply it can read. */
static void turn_away(struct control *c, evutil_socket_t fd)
{
	static const char msg[] = "{\"ok\":false,\"error\":\"too many clients\"}\n";

	if (send(fd, msg, sizeof(msg) - 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		/* nothing more to do for it */
	}
	close(fd);
	c->rejected++;
}

/*
 * The slots only trusted peers (root, bloomd's user, [control] group) may
 * take: anyone else who can connect, holding every other slot with
 * connections that trickle a byte now and then, still leaves an operator in.
 */
static unsigned untrusted_slots(const struct control *c)
{
	unsigned reserved = c->o.max_clients / 2 < CONTROL_TRUSTED_SLOTS ? c->o.max_clients / 2 : CONTROL_TRUSTED_SLOTS;

	return c->o.max_clients - reserved;
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
		      void *arg)
{
	struct control *c = arg;
	struct control_client *cl;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct timeval idle = { .tv_sec = c->o.idle_timeout };

	(void)l;
	(void)sa;
	(void)salen;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		cred = (struct ucred){ .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
	bool trusted = cred.uid == 0 || cred.uid == geteuid() || (c->has_gid && peer_in_group(fd, c->gid, &cred));
	if (c->nclients >= c->o.max_clients || (!trusted && c->nuntrusted >= untrusted_slots(c)) ||
	    (cl = calloc(1, sizeof(*cl))) == NULL) {
		turn_away(c, fd);
		return;
	}
	cl->c = c;
	cl->id = ++c->next_id;
	cl->cred = cred;
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
	reading_on(cl, &idle);
}

static void take_reserve(struct control *c)
{
	if (c->reserve_fd < 0)
		c->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

static void resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct control *c = arg;

	(void)fd;
	(void)what;
	take_reserve(c);
	evconnlistener_enable(c->listener);
}

/*
 * accept(2) failed: out of descriptors, most likely (something else, the
 * metrics listener say, took them all). The descriptor held in reserve is
 * given up so that the operator knocking now is served, and taken back when
 * one is free again; then a pause instead of spinning on a ready listener.
 */
static void accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct control *c = arg;
	struct timeval second = { .tv_sec = 1 };
	int e = EVUTIL_SOCKET_ERROR();

	if ((e == EMFILE || e == ENFILE) && c->reserve_fd >= 0) {
		close(c->reserve_fd);
		c->reserve_fd = -1;
		int fd = accept4(evconnlistener_get_fd(l), NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0)
			accept_cb(l, fd, NULL, 0, c);
		take_reserve(c);
	}
	evconnlistener_disable(l);
	evtimer_add(c->resume, &second);
}

/* Unlink a stale socket file; refuse a live one or anything that is not a socket. */
static int clear_path(const char *path, const struct sockaddr_un *sun, char *err, size_t errlen)
{
	struct stat st;
	int fd, rc;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : (error_set(err, errlen, "%s: %s", path, strerror(errno)), -1);
	if (!S_ISSOCK(st.st_mode)) {
		error_set(err, errlen, "%s exists and is not a socket; not replacing it", path);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return error_set(err, errlen, "socket: %s", strerror(errno)), -1;
	rc = connect(fd, (const struct sockaddr *)sun, sizeof(*sun));
	close(fd);
	if (rc == 0) {
		error_set(err, errlen, "%s: another bloomd is answering on this socket", path);
		return -1;
	}
	if (unlink(path) < 0) {
		error_set(err, errlen, "%s: cannot remove the stale socket: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Bind with mode 0660 from the start (umask), then give it the group. */
static int bind_socket(struct control *c, char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;
	mode_t old;

	if (strlen(c->path) >= sizeof(sun.sun_path)) {
		error_set(err, errlen, "%s: socket path too long (at most %zu bytes)", c->path,
			  sizeof(sun.sun_path) - 1);
		return -1;
	}
	strcpy(sun.sun_path, c->path);
	if (clear_path(c->path, &sun, err, errlen) < 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return error_set(err, errlen, "socket: %s", strerror(errno)), -1;
	old = umask(0117);
	int rc = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	if (rc < 0 || (c->has_gid && chown(c->path, (uid_t)-1, c->gid) < 0) || listen(fd, 64) < 0) {
		error_set(err, errlen, "%s: %s", c->path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

struct control *control_open(struct event_base *base, const struct control_options *o, char *err,
			     size_t errlen)
{
	struct control *c = calloc(1, sizeof(*c));
	int fd = -1;

	if (c == NULL || (c->path = strdup(o->path)) == NULL) {
		error_set(err, errlen, "out of memory");
		free(c);
		return NULL;
	}
	c->o = *o;
	c->base = base;
	c->reserve_fd = -1;
	take_reserve(c);
	if (o->group) {
		struct group *g = getgrnam(o->group);
		if (g == NULL) {
			error_set(err, errlen, "[control] group '%s' does not exist", o->group);
			goto fail;
		}
		c->gid = g->gr_gid;
		c->has_gid = true;
	}
	if ((fd = bind_socket(c, err, errlen)) < 0)
		goto fail;
	c->resume = evtimer_new(base, resume_cb, c);
	c->listener = evconnlistener_new(base, accept_cb, c, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC,
					 -1, fd);
	if (c->resume == NULL || c->listener == NULL) {
		error_set(err, errlen, "cannot listen on %s", c->path);
		if (c->listener == NULL)
			close(fd);
		unlink(c->path);
		goto fail;
	}
	evconnlistener_set_error_cb(c->listener, accept_error_cb);
	return c;
fail:
	if (c->resume)
		event_free(c->resume);
	if (c->reserve_fd >= 0)
		close(c->reserve_fd);
	free(c->path);
	free(c);
	return NULL;
}

void control_close(struct control *c)
{
	if (c == NULL)
		return;
	while (c->clients)
		client_free(c->clients);
	evconnlistener_free(c->listener);
	event_free(c->resume);
	if (c->reserve_fd >= 0)
		close(c->reserve_fd);
	unlink(c->path);
	free(c->path);
	free(c);
}

bool control_client_trusted(const struct control_client *cl)
{
	return cl->trusted;
}

void control_client_peer(const struct control_client *cl, unsigned *uid, int *pid)
{
	*uid = (unsigned)cl->cred.uid;
	*pid = cl->cred.pid;
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

struct control_client *control_find(struct control *c, uint64_t id)
{
	for (struct control_client *cl = c->clients; cl; cl = cl->next)
		if (cl->id == id)
			return cl;
	return NULL;
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

unsigned control_clients(const struct control *c)
{
	return c->nclients;
}

uint64_t control_rejected(const struct control *c)
{
	return c->rejected;
}
