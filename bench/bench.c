/* bench.c - what every benchmark shares: the clock, medians, the daemon's default matcher. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "bench.h"

#include <stdlib.h>
#include <time.h>

#include "matcher.h"

double bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double bench_median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct matcher *bench_matcher(unsigned window)
{
	struct matcher_config cfg = { .layout = FILTER_BLOCKED, .choices = 2, .bits_per_entry = 16,
				    .bits_per_window = 12, .window = window };
	return matcher_new(&cfg, NULL, 0);
}
