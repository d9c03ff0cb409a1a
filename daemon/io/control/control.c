/* control.c - the control socket: the Unix stream server, the peer check, the limits on clients. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "control_internal.h"

#include <errno.h>
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

/* A client past the limits is not taken: the listener sends it a reply it can read. */
static bool take_client(void *arg, int fd)
{
	struct control *c = arg;
	struct control_client *cl;
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		cred = (struct ucred){ .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
	bool trusted = cred.uid == 0 || cred.uid == geteuid() || (c->has_gid && peer_in_group(fd, c->gid, &cred));
	if (c->nclients >= c->o.max_clients || (!trusted && c->nuntrusted >= untrusted_slots(c)) ||
	    (cl = calloc(1, sizeof(*cl))) == NULL)
		return false;
	control_client_start(c, cl, fd, &cred, trusted);
	return true;
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
	/* A descriptor held back: an operator knocking when another listener took every other is still served. */
	static const struct listener_options lo = { .busy = "{\"ok\":false,\"error\":\"too many clients\"}\n", .reserve = true };
	c->listener = listener_on(base, fd, &lo, take_client, c);
	if (c->listener == NULL) {
		error_set(err, errlen, "cannot listen on %s: out of memory", c->path);
		unlink(c->path);
		goto fail;
	}
	return c;
fail:
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
	listener_free(c->listener);
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
	return c->rejected + listener_turned_away(c->listener);
}
