/* state_rebuild.c - the background rebuild: a worker thread, and the swap back in the event loop. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "state_rebuild.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "error.h"
#include "matcher.h"

/*
 * Two trips to a thread: first to allocate and touch the copies' memory
 * (fresh pages fault at some microseconds each, tens of milliseconds for a
 * million keys), then, after begin has copied into them, for the rounds.
 */
enum rebuild_stage { STAGE_PREPARE, STAGE_RUN, STAGE_APPLY };

/*
 * Changes that arrive during the rounds are applied on the thread too, in
 * catch-up passes, while at least CATCH_UP_MIN of them arrived during the
 * last pass (a bulk load running meanwhile); the loop applies only the last
 * few itself. MAX_CATCH_UPS bounds the passes if the flow never slows.
 */
#define CATCH_UP_MIN 4096
#define MAX_CATCH_UPS 8

/*
 * Keys copied a turn of the loop: well under a millisecond (10,000,000 keys
 * held it 50-60 ms at once); the loop polls in between.
 */
#define COPY_SLICE (1u << 16)

struct state_rebuild {
	struct matcher *m;
	struct matcher_rebuild *job;
	enum rebuild_stage stage;
	uint64_t keys[2];          /* to prepare room for, with some slack */
	unsigned rounds;
	unsigned prepares;         /* times prepared again because keys outgrew the room */
	unsigned catch_ups;
	pthread_t thread;
	bool thread_live;
	int pipe[2];               /* the worker writes one byte when done */
	struct event *done_event;
	struct event *copy_event;  /* the copy's next slice */
	state_rebuild_done_cb done;
	void *ctx;
	struct timespec started;
	struct state_rebuild_result result;
	double turn_ms;            /* the loop held in this turn of it, so far */
	int run_rc;                /* written by the worker before its byte */
	char run_err[256];
};

static void rebuild_free(struct state_rebuild *r)
{
	if (r->done_event)
		event_free(r->done_event);
	if (r->copy_event)
		event_free(r->copy_event);
	for (int i = 0; i < 2; i++)
		if (r->pipe[i] >= 0)
			close(r->pipe[i]);
	free(r);
}

/* Room for the keys now and 1/slack more, for those that arrive until begin. */
static void plan_room(struct state_rebuild *r, unsigned slack)
{
	for (int i = 0; i < 2; i++) {
		uint64_t n = matcher_keys_count(r->m, i);
		r->keys[i] = n + n / slack + 1024;
	}
}

static void *worker(void *arg)
{
	struct state_rebuild *r = arg;
	char byte = 1;

	if (r->stage == STAGE_PREPARE) {
		r->job = matcher_rebuild_prepare(r->keys[0], r->keys[1]);
		r->run_rc = 0; /* without memory, begin allocates itself */
	} else if (r->stage == STAGE_RUN) {
		r->run_rc = matcher_rebuild_run(r->job, r->run_err, sizeof(r->run_err));
	} else {
		r->run_rc = matcher_rebuild_apply(r->job, r->run_err, sizeof(r->run_err));
	}
	while (write(r->pipe[1], &byte, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static int start_thread(struct state_rebuild *r, enum rebuild_stage stage, char *err, size_t errlen)
{
	sigset_t all, before;
	int rc;

	r->stage = stage;
	/* Signals are the loop's, as for the workers: the rebuild thread starts with every one blocked. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &before);
	rc = pthread_create(&r->thread, NULL, worker, r);
	pthread_sigmask(SIG_SETMASK, &before, NULL);
	if (rc != 0) {
		error_set(err, errlen, "cannot start the rebuild thread: %s", strerror(rc));
		return -1;
	}
	r->thread_live = true;
	return 0;
}

/* The loop was held since t0: counted in the rebuild's stall, and in this turn's hold. */
static void held(struct state_rebuild *r, const struct timespec *t0)
{
	double ms = clock_since_ms(t0);

	r->result.stall_ms += ms;
	r->turn_ms += ms;
	if (r->turn_ms > r->result.longest_hold_ms)
		r->result.longest_hold_ms = r->turn_ms;
}

static void finish(struct state_rebuild *r)
{
	struct timespec t0;

	/*
	 * The old filters and the rounds' copies are free now, but the allocator
	 * keeps freed blocks under its mmap threshold (which rises to 32 MB)
	 * resident in the heaps they came from, the rebuild thread's and the
	 * loop's: 3 bytes an entry at 10,000,000, for good. Handed back to the
	 * kernel, in well under a millisecond.
	 */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	malloc_trim(0);
	held(r, &t0);
	r->result.seconds = clock_since_ms(&r->started) / 1e3;
	r->done(r->ctx, &r->result);
	rebuild_free(r);
}

/* Given up on (r->result.error says why): the matcher keeps its filters. */
static void abandon(struct state_rebuild *r)
{
	matcher_rebuild_free(r->m, r->job);
	r->job = NULL;
	finish(r);
}

/* The next slice of the copy, after the loop has polled (a timer of no time). */
static void copy_later(struct state_rebuild *r)
{
	static const struct timeval now = { 0, 0 };

	evtimer_add(r->copy_event, &now);
}

/* A slice of the copy (the loop's stall); once whole, the rounds on the thread. */
static void copy_slice(evutil_socket_t fd, short what, void *arg)
{
	struct state_rebuild *r = arg;
	struct timespec t0;

	(void)fd;
	(void)what;
	r->turn_ms = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int rc = matcher_rebuild_copy(r->m, r->job, COPY_SLICE, r->result.error, sizeof(r->result.error));
	held(r, &t0);
	if (rc == 0)
		copy_later(r);
	else if (rc < 0 || start_thread(r, STAGE_RUN, r->result.error, sizeof(r->result.error)) < 0)
		abandon(r);
}

/* The memory is ready: sized now, copied a slice a turn. */
static void begin(struct state_rebuild *r)
{
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	r->job = matcher_rebuild_begin(r->m, r->job, r->rounds, NULL, r->result.error,
				       sizeof(r->result.error));
	held(r, &t0);
	if (r->job == NULL)
		finish(r);
	else
		copy_later(r);
}

/* The rounds (or a catch-up) are done: hand the changes since over again, or swap. */
static void settle(struct state_rebuild *r)
{
	struct timespec t0;

	if (r->run_rc < 0) {
		snprintf(r->result.error, sizeof(r->result.error), "%s", r->run_err);
		abandon(r);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (r->catch_ups < MAX_CATCH_UPS) {
		size_t moved = matcher_rebuild_catch_up(r->m, r->job);
		held(r, &t0);
		if (moved > 0) {
			r->catch_ups += moved >= CATCH_UP_MIN ? 1 : MAX_CATCH_UPS;
			if (start_thread(r, STAGE_APPLY, r->result.error, sizeof(r->result.error)) < 0)
				abandon(r);
			return;
		}
		clock_gettime(CLOCK_MONOTONIC, &t0);
	}
	r->result.ok = matcher_rebuild_finish(r->m, r->job, r->result.error, sizeof(r->result.error)) == 0;
	r->job = NULL;
	held(r, &t0);
	finish(r);
}

static void done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct state_rebuild *r = arg;
	char byte;

	(void)what;
	if (read(fd, &byte, 1) != 1)
		return; /* spurious: the worker has not written yet */
	r->turn_ms = 0;
	pthread_join(r->thread, NULL);
	r->thread_live = false;
	if (r->stage != STAGE_PREPARE) {
		settle(r);
		return;
	}
	if (r->job && !matcher_rebuild_prepared_for(r->job, r->m) && r->prepares++ < 3) {
		/* Keys arrived faster than the slack: prepare again, bigger, rather than fault here. */
		matcher_rebuild_free(NULL, r->job);
		r->job = NULL;
		plan_room(r, 4);
		if (start_thread(r, STAGE_PREPARE, r->result.error, sizeof(r->result.error)) < 0)
			finish(r);
		return;
	}
	begin(r);
}

struct state_rebuild *state_rebuild_start(struct event_base *base, struct matcher *m, unsigned rounds,
			      state_rebuild_done_cb done, void *ctx, char *err, size_t errlen)
{
	struct state_rebuild *r = calloc(1, sizeof(*r));

	if (r == NULL) {
		error_set(err, errlen, "out of memory");
		return NULL;
	}
	r->pipe[0] = r->pipe[1] = -1;
	r->m = m;
	r->done = done;
	r->ctx = ctx;
	r->result.rounds = rounds;
	clock_gettime(CLOCK_MONOTONIC, &r->started);
	if (pipe2(r->pipe, O_CLOEXEC | O_NONBLOCK) < 0 ||
	    (r->done_event = event_new(base, r->pipe[0], EV_READ | EV_PERSIST, done_cb, r)) == NULL ||
	    (r->copy_event = evtimer_new(base, copy_slice, r)) == NULL ||
	    event_add(r->done_event, NULL) < 0) {
		error_set(err, errlen, "cannot watch the rebuild thread: %s", strerror(errno));
		rebuild_free(r);
		return NULL;
	}
	r->rounds = rounds;
	plan_room(r, 8);
	if (start_thread(r, STAGE_PREPARE, err, errlen) < 0) {
		rebuild_free(r);
		return NULL;
	}
	return r;
}

void state_rebuild_cancel(struct state_rebuild *r)
{
	if (r == NULL)
		return;
	if (r->job && r->stage == STAGE_RUN)
		matcher_rebuild_stop(r->job); /* at shutdown: no need to finish the rounds */
	if (r->thread_live)
		pthread_join(r->thread, NULL);
	matcher_rebuild_free(r->m, r->job);
	rebuild_free(r);
}
