/* check.c - which thread is the event loop's, for BLOOMD_ON_LOOP. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "check.h"

#include <pthread.h>
#include <stdatomic.h>

static pthread_t loop_thread;
static atomic_bool marked;

void check_mark_loop_thread(void)
{
	loop_thread = pthread_self();
	atomic_store_explicit(&marked, true, memory_order_release);
}

bool check_on_loop_thread(void)
{
	return !atomic_load_explicit(&marked, memory_order_acquire) || pthread_equal(pthread_self(), loop_thread);
}
