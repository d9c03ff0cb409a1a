/* state_fork.h - a job run in a forked child on the daemon's memory as it was at the fork, its end heard in the loop. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_STATE_FORK_H
#define BLOOMD_STATE_FORK_H

/*
 * fork() gives the child a copy-on-write image of the daemon: a job that
 * reads a large structure (a snapshot of the entries) sees it as it was at
 * that instant while the loop goes on changing its own copy. The child
 * runs the job and exits; its one message (an error) comes back on a pipe
 * whose end is the loop's sign that the child is done. The child dies with
 * the daemon (PR_SET_PDEATHSIG), so no job outlives it to act behind a
 * daemon started again. Nothing here prints.
 */

#include <stddef.h>
#include <sys/types.h>

struct event_base;
struct state_fork;

/* In the child: 0, or -1 with a message in err. It must not touch the loop. */
typedef int (*state_fork_fn)(void *ctx, char *err, size_t errlen);
/* In the loop, once the child has ended: error NULL if the job succeeded, else why not. */
typedef void (*state_fork_done_cb)(void *ctx, const char *error);

/*
 * Fork a child to run job(ctx); done(ctx, ...) is called from base's loop
 * when it has ended, and the job freed after. NULL with a message if
 * no child could be started.
 */
struct state_fork *state_fork_start(struct event_base *base, state_fork_fn job, state_fork_done_cb done, void *ctx, char *err,
			      size_t errlen);
/* Wait for the child here (at stop), call done, free. */
void state_fork_finish(struct state_fork *f);

#endif
