/* clock.h - milliseconds between monotonic timestamps. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_CLOCK_H
#define BLOOMD_CLOCK_H

#include <time.h>

/* b - a, in milliseconds. */
static inline double clock_ms_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

/* Milliseconds since t0, on CLOCK_MONOTONIC. */
static inline double clock_since_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return clock_ms_between(t0, &t);
}

#endif
