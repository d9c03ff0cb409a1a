/* state_rebuild.h - the background rebuild: a worker thread, and the swap back in the event loop. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_STATE_REBUILD_H
#define BLOOMD_STATE_REBUILD_H

#include <event2/event.h>
#include <stdbool.h>
#include <stddef.h>

#include "matcher_view.h"

/*
 * matcher_rebuild_copy copies in the loop, a slice a turn; a thread runs
 * the rounds on the copies; when it is done it writes a byte to a pipe the
 * loop watches, and the loop joins it and calls matcher_rebuild_finish (the
 * swap). Capture and control are served throughout; only the copy's slices,
 * catch-ups and finish run in the loop, and their time is the stall
 * reported.
 */

struct state_rebuild_result {
	bool ok;
	char error[256];
	double seconds;        /* begin to swap */
	double stall_ms;       /* time the loop spent in begin, the copy, catch-ups and finish, in all (stats: max_stall_ms) */
	double longest_hold_ms; /* the longest of those holds, each a turn of the loop */
	unsigned rounds;
};

typedef void (*state_rebuild_done_cb)(void *ctx, const struct state_rebuild_result *r);

struct state_rebuild;

/*
 * Start rebuilding m with rounds offline rounds; done is called from the loop
 * after the swap (or failure), then the rebuild frees itself. NULL with a
 * message if it cannot start (another is running, no memory, no thread).
 */
struct state_rebuild *state_rebuild_start(struct event_base *base, struct matcher *m, unsigned rounds,
			      state_rebuild_done_cb done, void *ctx, char *err, size_t errlen);

/* Stop the thread at its next round, wait for it, drop the result (shutdown): the matcher keeps its filters. */
void state_rebuild_cancel(struct state_rebuild *r);

#endif
