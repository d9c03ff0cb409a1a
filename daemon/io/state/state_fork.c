/* state_fork.c - a job run in a forked child on the daemon's memory as it was at the fork. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "state_fork.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"

struct state_fork {
	pid_t pid;
	int fd;                 /* the child's message; EOF when it has ended */
	struct event *readable;
	state_fork_done_cb done;
	void *ctx;
	char message[512];
	size_t len;
};

/* The loop's signal handlers would take a signal sent to the child for one sent to the daemon. */
static const int LOOP_HANDLED[] = { SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGCHLD, SIGALRM };

static _Noreturn void run_child(int fd, pid_t daemon, state_fork_fn job, void *ctx)
{
	char err[512] = "";

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != daemon)
		_exit(2); /* the daemon is gone already */
	for (size_t i = 0; i < sizeof(LOOP_HANDLED) / sizeof(LOOP_HANDLED[0]); i++)
		signal(LOOP_HANDLED[i], SIG_DFL);
	int rc = job(ctx, err, sizeof(err));
	if (rc < 0 && write(fd, err, strnlen(err, sizeof(err) - 1)) < 0)
		_exit(3);
	_exit(rc < 0 ? 1 : 0);
}

/* The child has closed its end: reap it, say how it went, free. */
static void ended(struct state_fork *f)
{
	char why[600];
	const char *error = NULL;
	int st = 0;

	pid_t waited;
	while ((waited = waitpid(f->pid, &st, 0)) < 0 && errno == EINTR)
		;
	f->message[f->len] = '\0';
	if (waited < 0) {
		snprintf(why, sizeof(why), "cannot learn how the child writing it ended: %s", strerror(errno));
		error = why;
	} else if (WIFSIGNALED(st)) {
		snprintf(why, sizeof(why), "the child writing it was killed by signal %d (%s)", WTERMSIG(st),
			 strsignal(WTERMSIG(st)));
		error = why;
	} else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		snprintf(why, sizeof(why), "%s", f->len ? f->message : "the child writing it failed without saying why");
		error = why; /* f, which holds the message, is freed before done hears it */
	}
	if (f->readable)
		event_free(f->readable);
	close(f->fd);
	state_fork_done_cb done = f->done;
	void *ctx = f->ctx;
	free(f);
	done(ctx, error);
}

/* Read what the child says, whole or not: false once it has ended (EOF). */
static bool read_message(struct state_fork *f)
{
	char drain[512];
	size_t room = sizeof(f->message) - 1 - f->len;
	ssize_t n = room ? read(f->fd, f->message + f->len, room) : read(f->fd, drain, sizeof(drain));

	if (n < 0)
		return errno == EINTR || errno == EAGAIN;
	if (n > 0 && room)
		f->len += (size_t)n;
	return n > 0;
}

static void readable_cb(evutil_socket_t fd, short what, void *arg)
{
	struct state_fork *f = arg;

	(void)fd;
	(void)what;
	if (!read_message(f))
		ended(f);
}

struct state_fork *state_fork_start(struct event_base *base, state_fork_fn job, state_fork_done_cb done, void *ctx, char *err,
			      size_t errlen)
{
	struct state_fork *f = calloc(1, sizeof(*f));
	int p[2] = { -1, -1 };
	pid_t daemon = getpid();

	if (f == NULL || pipe2(p, O_CLOEXEC) < 0) {
		error_set(err, errlen, "cannot start a child: %s", f ? strerror(errno) : "out of memory");
		free(f);
		return NULL;
	}
	f->fd = p[0];
	f->done = done;
	f->ctx = ctx;
	f->readable = event_new(base, p[0], EV_READ | EV_PERSIST, readable_cb, f);
	if (f->readable == NULL || event_add(f->readable, NULL) < 0 || fcntl(p[0], F_SETFL, O_NONBLOCK) < 0 ||
	    (f->pid = fork()) < 0) {
		error_set(err, errlen, "cannot start a child: %s", f->readable ? strerror(errno) : "out of memory");
		if (f->readable)
			event_free(f->readable);
		close(p[0]);
		close(p[1]);
		free(f);
		return NULL;
	}
	if (f->pid == 0)
		run_child(p[1], daemon, job, ctx);
	close(p[1]);
	return f;
}

void state_fork_finish(struct state_fork *f)
{
	if (f == NULL)
		return;
	/* Blocking, so that the child's last words are waited for; if that cannot be, what has come is read. */
	(void)(fcntl(f->fd, F_SETFL, 0) < 0);
	while (read_message(f))
		;
	ended(f);
}
