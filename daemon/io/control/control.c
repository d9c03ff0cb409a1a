/* control.c - the control socket: the Unix stream server, the peer check, the limits on clients. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "control_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "error.h"

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
	control_client_start(c, cl, fd, &cred, trusted);
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

static bool answered(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || strlen(path) >= sizeof(sun.sun_path)) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	bool live = connect(fd, (const struct sockaddr *)&sun, sizeof(sun)) == 0;
	close(fd);
	return live;
}

bool control_still_answered(const char *path)
{
	for (int tries = 0; tries < 50; tries++) {
		if (!answered(path))
			return false;
		nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 * 1000 }, NULL);
	}
	return true;
}

/* Unlink a stale socket file; refuse a live one or anything that is not a socket. */
static int clear_path(const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : (error_set(err, errlen, "%s: %s", path, strerror(errno)), -1);
	if (!S_ISSOCK(st.st_mode)) {
		error_set(err, errlen, "%s exists and is not a socket; not replacing it", path);
		return -1;
	}
	if (answered(path)) {
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
	if (clear_path(c->path, err, errlen) < 0)
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
	/* A reply given at the last moment (a replace waiting when bloomd stops) still goes out. */
	for (struct control_client *cl = c->clients; cl; cl = cl->next)
		control_client_flush(cl);
	while (c->clients)
		control_client_free(c->clients);
	evconnlistener_free(c->listener);
	event_free(c->resume);
	if (c->reserve_fd >= 0)
		close(c->reserve_fd);
	unlink(c->path);
	free(c->path);
	free(c);
}

struct control_client *control_find(struct control *c, uint64_t id)
{
	for (struct control_client *cl = c->clients; cl; cl = cl->next)
		if (cl->id == id)
			return cl;
	return NULL;
}

unsigned control_clients(const struct control *c)
{
	return c->nclients;
}

uint64_t control_rejected(const struct control *c)
{
	return c->rejected;
}
