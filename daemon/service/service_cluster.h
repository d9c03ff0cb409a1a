/* service_cluster.h - the daemon in a fleet: its changes to the stream, the stream's to it. */
#ifndef BLOOMD_SERVICE_CLUSTER_H
#define BLOOMD_SERVICE_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster.h"
#include "events.h"
#include "log.h"
#include "service.h"

/* Owned by: service_cluster.c service_change.c */
struct service_fleet {
	struct cluster *cluster;   /* [cluster] redis or sentinels, or NULL */
	struct log_limit events_lost_logged;
	bool restoring;            /* a snapshot is being restored in slices: an operator's changes are marked */
};

/* service_cluster.c: follow the stream (-1 after logging); events to Redis; once a second; stopped (cursor and outbox written). */
int service_cluster_start(struct service *s);
void service_cluster_events(struct service *s, struct events *ev);
void service_cluster_tick(struct service *s);
void service_cluster_stop(struct service *s);
/* -1 with the reason while the outbox cannot be trusted (changes are not durable). */
int service_fleet_outbox_error(const struct service *s, char *err, size_t errlen);

/* service_change.c: whether list i's new versions and flushes from origin go to the stream; list i's new version (entry lines) or flush (data NULL), to the stream if its origin shares it. */
bool service_shares(const struct service *s, enum service_origin from, int i);
void service_share_list(struct service *s, enum service_origin from, int i, const char *data, size_t len);
/* What a change from the stream came to (rc: the local path's, -1 with its message). */
enum cluster_apply service_stream_outcome(const struct service *s, int rc);
/* A version from the stream taken in slices is done with (rc as above): the cluster reads on. */
void service_stream_applied(struct service *s, int rc, const char *err);
/*
 * A snapshot is being restored in slices (on), or no longer (off): while it
 * is, an entry an operator adds or deletes here is marked staged (the
 * restore passes and keeps what is marked), as such a change comes after
 * the snapshot and it must not undo it. Then it is in (rc 0) or not (-1,
 * err says why): the cluster reads on from it, or asks again.
 */
void service_stream_restoring(struct service *s, bool on);
void service_stream_restored(struct service *s, int rc, const char *err);

#endif
