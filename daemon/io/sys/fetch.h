/* fetch.h - a list's new version fetched from its URL by bloomd-fetch, a process of its own. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_FETCH_H
#define BLOOMD_FETCH_H

/*
 * The daemon never speaks HTTP or TLS itself: each fetch is a bloomd-fetch
 * process (libcurl), started with nothing but its arguments, a memory file
 * for the body on its stdout and a pipe for its one status line. It drops
 * every capability before it connects. Nothing here prints.
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define FETCH_VALIDATOR_MAX 256

struct fetch_request {
	const char *url;
	const char *etag, *last_modified; /* of the version held: a conditional GET; NULL or "": none */
	const char *ca_file;              /* NULL: the system's authorities */
	const char *headers;              /* more request headers, "Name: value" a line (a key: never in argv); NULL: none */
	uint64_t max_size;
	unsigned timeout;                 /* seconds */
};

/* A fetch under way. */
struct fetch_child {
	pid_t pid;          /* 0: none */
	int body_fd;        /* the body, as far as it came (a memfd) */
	int status_fd;      /* bloomd-fetch's status line; EOF when it is done */
};

enum fetch_outcome { FETCH_NEW, FETCH_NOT_MODIFIED, FETCH_FAILED };

struct fetch_result {
	enum fetch_outcome outcome;
	long http;                              /* the server's status, 0 if none */
	uint64_t bytes;
	double seconds;
	char etag[FETCH_VALIDATOR_MAX], last_modified[FETCH_VALIDATOR_MAX];
	char error[512];                        /* FETCH_FAILED: why */
};

/* bloomd-fetch beside the running bloomd, into path; -1 with a message if it is not there to run. */
int fetch_program(char *path, size_t len, char *err, size_t errlen);

/* Start program for rq: *c filled; -1 with a message. */
int fetch_start(const char *program, const struct fetch_request *rq, struct fetch_child *c, char *err,
		size_t errlen);

/*
 * After the status fd's end of file: the child reaped, its status line
 * (status, len bytes) read into *out, the status fd closed and the body fd
 * rewound for the caller (who closes it).
 */
void fetch_finish(struct fetch_child *c, const char *status, size_t len, struct fetch_result *out);

/* A fetch given up: the child killed and reaped, both fds closed. */
void fetch_cancel(struct fetch_child *c);

#endif
