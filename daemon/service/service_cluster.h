/* service_cluster.h - the daemon in a fleet: its changes to the stream, the stream's to it, versions in slices. */
#ifndef BLOOMD_SERVICE_CLUSTER_H
#define BLOOMD_SERVICE_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster.h"
#include "events.h"
#include "log.h"
#include "service.h"

struct slicing;

/* Owned by: service_cluster.c service_slices.c service_change.c */
struct service_fleet {
	struct cluster *cluster;   /* [cluster] redis or sentinels, or NULL */
	struct slicing *slicing;   /* a version from the stream being taken in slices, or NULL */
	struct log_limit events_lost_logged;
};

/* service_cluster.c: follow the stream (-1 after logging); events to Redis; once a second; stopped (cursor and outbox written). */
int service_cluster_start(struct service *s);
void service_cluster_events(struct service *s, struct events *ev);
void service_cluster_tick(struct service *s);
void service_cluster_stop(struct service *s);
/* -1 with the reason while the outbox cannot be trusted (changes are not durable). */
int service_fleet_outbox_error(const struct service *s, char *err, size_t errlen);

/*
 * service_slices.c: a list's version from the stream read, kept and taken
 * in slices, so that the loop is never held long: start returns
 * CLUSTER_APPLY_STARTED (cluster_applied follows), or LATER with a message.
 * Whatever else stages a version, flushes a list or changes the lists
 * settles first (the rest done at once); stopping cancels it.
 */
enum cluster_apply service_slices_start(struct service *s, int i, const char *data, size_t len, char *err,
					size_t errlen);
void service_slices_settle(struct service *s);
void service_slices_cancel(struct service *s);
/* Whether a version from the stream (entry lines) has a net broader than [cluster] allows. */
bool service_version_too_broad(const struct service *s, const char *data, size_t len, char *err, size_t errlen);
/* Whether e is a net broader than [cluster] max_prefix4 or max_prefix6 allow from the stream (err says so). */
bool service_entry_too_broad(const struct service *s, const struct entry *e, char *err, size_t errlen);

/* service_change.c: whether list i's new versions and flushes from origin go to the stream; list i's new version (entry lines) or flush (data NULL), to the stream if its origin shares it. */
bool service_shares(const struct service *s, enum service_origin from, int i);
void service_share_list(struct service *s, enum service_origin from, int i, const char *data, size_t len);
/* What a change from the stream came to (rc: the local path's, -1 with its message). */
enum cluster_apply service_stream_outcome(const struct service *s, int rc);

#endif
