/* service_versions.h - lists' new versions arriving: fetched from their url, taken a slice at a time. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_SERVICE_VERSIONS_H
#define BLOOMD_SERVICE_VERSIONS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cluster.h"
#include "feed.h"
#include "service.h"

struct service_fetches;
struct slicing;

/* Owned by: service_fetch.c service_slices.c */
struct service_versions {
	struct service_fetches *fetches; /* the lists with a url, or NULL when none has had one */
	struct slicing *slicing;         /* a version being taken in slices, or NULL */
};

/*
 * service_fetch.c: the lists with a url fetched as the configuration says
 * (starting: from the validators kept; -1 logged when bloomd-fetch is not
 * there or without memory); their counts (stats' "fetches", NULL when no
 * list has a url); stopped.
 */
int service_fetch_configure(struct service *s, bool starting);
json_t *service_fetches_stats(const struct service *s);
void service_fetch_stop(struct service *s);

/*
 * service_slices.c: a list's new version read, kept and taken in slices,
 * so that the loop is never held long (about 10 ms a slice). From the
 * stream: start returns CLUSTER_APPLY_STARTED (cluster_applied follows), or
 * LATER with a message. From a file f (taken over; source names it in the
 * log, relative times stated at stated, 0: now), read as spec says:
 * take_file returns 0 and calls done once the version is taken (rc 0) or
 * refused (rc -1, the list's last load says why), never before it returns;
 * or -1 with a message, done never called. One version is taken at a
 * time (the staging bit is its), the others wait their turn in order.
 * Whatever else stages a version, flushes a list or changes the lists
 * settles them first (the rest of each done at once); stopping cancels
 * them (a file's version refused, the stream's applied again at the next
 * start).
 */
typedef void (*service_slices_done_cb)(struct service *s, int list, int rc, void *ctx);
enum cluster_apply service_slices_start(struct service *s, int i, const char *data, size_t len, char *err,
					size_t errlen);
int service_slices_take_file(struct service *s, int i, FILE *f, const char *source, const struct feed_spec *spec,
			     uint64_t stated, service_slices_done_cb done, void *ctx, char *err, size_t errlen);
/*
 * The cluster's snapshot (entry lines) restored into the local list in
 * slices, in turn with the versions: STARTED (service_stream_restored
 * follows), or LATER with a message.
 */
enum cluster_apply service_slices_restore(struct service *s, const char *data, size_t len, char *err, size_t errlen);
/*
 * List i emptied in slices, in turn with the versions: an empty version,
 * kept and taken as any (the guards aside: it is meant); done as for
 * take_file, or with done NULL as for start (cluster_applied follows). 0,
 * or -1 with a message.
 */
int service_slices_flush(struct service *s, int i, service_slices_done_cb done, void *ctx, char *err, size_t errlen);
/* The list whose version is being taken, or -1. */
int service_slices_list(const struct service *s);
void service_slices_settle(struct service *s);
/* At stop: a version already kept is taken first (the next start reads it); the others are refused. */
void service_slices_cancel(struct service *s);
/*
 * service_slices.c too: a matcher walk's callback (ctx a struct service_list_lines): each entry
 * held by holder as an entry line into f, with its labels and expiry from
 * label_slot; -1, and failed set, once f takes no more.
 */
struct service_list_lines {
	const struct service *s;
	uint32_t holder;
	unsigned label_slot;
	FILE *f;
	bool failed;
};
int service_list_line(void *ctx, const struct entry *e, unsigned group, uint32_t holders);
/* Whether e is a net broader than [cluster] max_prefix4 or max_prefix6 allow from the stream (err says so). */
bool service_entry_too_broad(const struct service *s, const struct entry *e, char *err, size_t errlen);

#endif
