/* metrics.h - the statistics object as Prometheus text, from one registry of every metric. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_METRICS_H
#define BLOOMD_METRICS_H

#include <jansson.h>

/*
 * Every metric is written from the registry in metrics.c: its name, type,
 * help, and where its value is in the statistics object (service_stats).
 * A metric whose section the object has but whose path it lacks is a bug
 * of the registry's, caught by BLOOMD_ASSERT in the sanitizer runs of the
 * tests (it would otherwise read as 0). Caller frees; NULL without memory.
 */
char *metrics_prometheus(json_t *stats);

#endif
