/* check.h - invariants: the cheap ones checked always, the rest in debug and sanitizer builds, constants at compile time. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_CHECK_H
#define BLOOMD_CHECK_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/*
 * BLOOMD_CHECK(cond) states an invariant a header documents (the holder
 * bits, a list's slot, a ring's indices, a table's fill) whose breach would
 * go on to corrupt what bloomd holds: it is a comparison or two, always
 * checked, and a failed one says where and aborts (systemd restarts bloomd
 * from its durable state, which the breach has not reached). A failure is
 * a bug in bloomd, not bad input, which is always answered with an error
 * instead. BLOOMD_ASSERT(cond) is for the checks that cost more or only
 * misreport (a metric's shape): built with BLOOMD_CHECKS (make DEBUG=1,
 * and every SANITIZE build: make check runs the suite under ASan+UBSan with
 * them on), otherwise free. Constants that must agree are pinned with
 * _Static_assert next to where they are used.
 */
#define BLOOMD_CHECK(cond)                                                                                   \
	(__builtin_expect(!!(cond), 1)                                                                        \
		 ? (void)0                                                                                    \
		 : (fprintf(stderr, "bloomd: %s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond), abort()))
#ifdef BLOOMD_CHECKS
#define BLOOMD_ASSERT(cond) BLOOMD_CHECK(cond)
#else
#define BLOOMD_ASSERT(cond) ((void)0)
#endif

/*
 * The event loop's thread, marked once before the loop runs: what only the
 * loop may run (the entry set's changes, the control clients, the cluster,
 * the nftables readers with their buffers) says so with BLOOMD_ON_LOOP, and
 * a call from the workers or the rebuild thread is caught (a load and a
 * compare: checked always). Before the mark (tools, unit tests) every
 * thread is the loop.
 */
void check_mark_loop_thread(void);
bool check_on_loop_thread(void);
#define BLOOMD_ON_LOOP() BLOOMD_CHECK(check_on_loop_thread())

#endif
