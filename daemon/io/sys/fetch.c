/* fetch.c - bloomd-fetch started with a memory file for the body and a pipe for its status, and reaped. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "fetch.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"

#define PROGRAM "bloomd-fetch"
#define STATUS_FD 3          /* bloomd-fetch's --status-fd */
#define ARGS_MAX 16

extern char **environ; /* passed on: http_proxy and the like are the operator's */

int fetch_program(char *path, size_t len, char *err, size_t errlen)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0 || (self[n] = '\0', slash = strrchr(self, '/')) == NULL) {
		error_set(err, errlen, "cannot tell where bloomd runs from (/proc/self/exe): %s", strerror(errno));
		return -1;
	}
	*slash = '\0';
	if ((size_t)snprintf(path, len, "%s/" PROGRAM, self) >= len || access(path, X_OK) < 0) {
		error_set(err, errlen, "%s/" PROGRAM " fetches the lists with a url: %s (install it beside bloomd)", self,
			  strerror(errno ? errno : ENAMETOOLONG));
		return -1;
	}
	return 0;
}

/* The arguments for rq; texts holds the numbers' text. */
static void arguments(const char *program, const struct fetch_request *rq, char *argv[ARGS_MAX], char texts[3][24])
{
	size_t n = 0;

	snprintf(texts[0], sizeof(texts[0]), "%d", STATUS_FD);
	snprintf(texts[1], sizeof(texts[1]), "%llu", (unsigned long long)rq->max_size);
	snprintf(texts[2], sizeof(texts[2]), "%u", rq->timeout);
	argv[n++] = (char *)(uintptr_t)program;
	argv[n++] = "--status-fd";
	argv[n++] = texts[0];
	argv[n++] = "--max-size";
	argv[n++] = texts[1];
	argv[n++] = "--timeout";
	argv[n++] = texts[2];
	if (rq->etag && rq->etag[0]) {
		argv[n++] = "--etag";
		argv[n++] = (char *)(uintptr_t)rq->etag;
	}
	if (rq->last_modified && rq->last_modified[0]) {
		argv[n++] = "--last-modified";
		argv[n++] = (char *)(uintptr_t)rq->last_modified;
	}
	if (rq->ca_file) {
		argv[n++] = "--ca-file";
		argv[n++] = (char *)(uintptr_t)rq->ca_file;
	}
	if (rq->headers)
		argv[n++] = "--headers-stdin";
	argv[n++] = "--";
	argv[n++] = (char *)(uintptr_t)rq->url;
	argv[n] = NULL;
}

/* The child's descriptors: the body on stdout, the status on STATUS_FD, the headers (or nothing) to read; signals as new. */
static int spawn(const char *program, char *const argv[], int headers_fd, int body_fd, int status_fd, pid_t *pid)
{
	posix_spawn_file_actions_t files;
	posix_spawnattr_t attr;
	sigset_t none, all;
	int rc;

	sigemptyset(&none);
	sigfillset(&all);
	if ((rc = posix_spawn_file_actions_init(&files)) != 0)
		return rc;
	if ((rc = posix_spawnattr_init(&attr)) != 0) {
		posix_spawn_file_actions_destroy(&files);
		return rc;
	}
	if ((rc = headers_fd >= 0 ? posix_spawn_file_actions_adddup2(&files, headers_fd, STDIN_FILENO)
				  : posix_spawn_file_actions_addopen(&files, STDIN_FILENO, "/dev/null", O_RDONLY, 0)) == 0 &&
	    (rc = posix_spawn_file_actions_adddup2(&files, body_fd, STDOUT_FILENO)) == 0 &&
	    (rc = posix_spawn_file_actions_adddup2(&files, status_fd, STATUS_FD)) == 0 &&
	    (rc = posix_spawnattr_setsigmask(&attr, &none)) == 0 && (rc = posix_spawnattr_setsigdefault(&attr, &all)) == 0 &&
	    (rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) == 0)
		rc = posix_spawn(pid, program, &files, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&files);
	return rc;
}

int fetch_start(const char *program, const struct fetch_request *rq, struct fetch_child *c, char *err,
		size_t errlen)
{
	char *argv[ARGS_MAX], texts[3][24];
	int status[2] = { -1, -1 }, headers = -1, rc;
	size_t hlen = rq->headers ? strlen(rq->headers) : 0;

	*c = (struct fetch_child){ .body_fd = memfd_create(PROGRAM, MFD_CLOEXEC), .status_fd = -1 };
	/* The read end alone non-blocking: the child's end is a file description of its own. */
	if (c->body_fd < 0 || pipe2(status, O_CLOEXEC) < 0 || fcntl(status[0], F_SETFL, O_NONBLOCK) < 0 ||
	    (rq->headers && ((headers = memfd_create(PROGRAM "-headers", MFD_CLOEXEC)) < 0 ||
			     write(headers, rq->headers, hlen) != (ssize_t)hlen || lseek(headers, 0, SEEK_SET) < 0))) {
		error_set(err, errlen, "cannot make the fetch's files: %s", strerror(errno));
		goto fail;
	}
	arguments(program, rq, argv, texts);
	rc = spawn(program, argv, headers, c->body_fd, status[1], &c->pid);
	if (headers >= 0)
		close(headers);
	headers = -1;
	if (rc != 0) {
		error_set(err, errlen, "cannot start %s: %s", program, strerror(rc));
		c->pid = 0;
		goto fail;
	}
	close(status[1]);
	c->status_fd = status[0];
	return 0;
fail:
	if (headers >= 0)
		close(headers);
	if (status[0] >= 0)
		close(status[0]);
	if (status[1] >= 0)
		close(status[1]);
	if (c->body_fd >= 0)
		close(c->body_fd);
	*c = (struct fetch_child){ .body_fd = -1, .status_fd = -1 };
	return -1;
}

/* How the child ended, if not as it says: "" when it exited with code (the code stored). */
static void reap(pid_t pid, int *code, char *why, size_t len)
{
	int st = 0;

	why[0] = '\0';
	*code = -1;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			snprintf(why, len, "cannot wait for " PROGRAM ": %s", strerror(errno));
			return;
		}
	if (WIFEXITED(st))
		*code = WEXITSTATUS(st);
	else
		snprintf(why, len, PROGRAM " was killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
}

/* The status line into *out; -1 if it is not one. */
static int read_status(const char *status, size_t len, struct fetch_result *out)
{
	json_t *o = json_loadb(status, len, 0, NULL);
	const char *result = json_string_value(json_object_get(o, "result"));
	const char *etag = json_string_value(json_object_get(o, "etag"));
	const char *modified = json_string_value(json_object_get(o, "last_modified"));
	const char *error = json_string_value(json_object_get(o, "error"));
	int rc = 0;

	if (result && strcmp(result, "new") == 0)
		out->outcome = FETCH_NEW;
	else if (result && strcmp(result, "not_modified") == 0)
		out->outcome = FETCH_NOT_MODIFIED;
	else if (result && strcmp(result, "failed") == 0)
		out->outcome = FETCH_FAILED;
	else
		rc = -1;
	out->http = (long)json_integer_value(json_object_get(o, "http"));
	out->bytes = (uint64_t)json_integer_value(json_object_get(o, "bytes"));
	out->seconds = json_number_value(json_object_get(o, "seconds"));
	snprintf(out->etag, sizeof(out->etag), "%s", etag ? etag : "");
	snprintf(out->last_modified, sizeof(out->last_modified), "%s", modified ? modified : "");
	snprintf(out->error, sizeof(out->error), "%s", error ? error : "");
	json_decref(o);
	return rc;
}

void fetch_finish(struct fetch_child *c, const char *status, size_t len, struct fetch_result *out)
{
	static const int expected[] = { [FETCH_NEW] = 0, [FETCH_NOT_MODIFIED] = 3, [FETCH_FAILED] = 1 };
	char why[sizeof(out->error)];
	int code;

	*out = (struct fetch_result){ .outcome = FETCH_FAILED };
	reap(c->pid, &code, why, sizeof(why));
	c->pid = 0;
	close(c->status_fd);
	c->status_fd = -1;
	lseek(c->body_fd, 0, SEEK_SET);
	if (why[0] == '\0' && read_status(status, len, out) < 0)
		snprintf(why, sizeof(why), PROGRAM " exited with %d without a status line", code);
	if (why[0] == '\0' && code != expected[out->outcome])
		snprintf(why, sizeof(why), PROGRAM " exited with %d: %.400s", code, out->error);
	if (why[0]) {
		out->outcome = FETCH_FAILED;
		snprintf(out->error, sizeof(out->error), "%s", why);
	}
}

void fetch_cancel(struct fetch_child *c)
{
	int code;
	char why[160];

	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		reap(c->pid, &code, why, sizeof(why));
	}
	if (c->status_fd >= 0)
		close(c->status_fd);
	if (c->body_fd >= 0)
		close(c->body_fd);
	*c = (struct fetch_child){ .body_fd = -1, .status_fd = -1 };
}
