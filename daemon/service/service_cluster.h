/* service_cluster.h - the daemon in a fleet: its changes to the stream, the stream's to it. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_SERVICE_CLUSTER_H
#define BLOOMD_SERVICE_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster.h"
#include "entry.h"
#include "events.h"
#include "log.h"
#include "service.h"
#include "service_state.h"
#include "state_fork.h"

/* Where the snapshot from the stream is: none, received (waiting behind a list version), restored. */
enum service_restore { RESTORE_NONE, RESTORE_WAITING, RESTORE_BEGUN };

/* Owned by: service_cluster.c service_change.c */
struct service_cluster {
	struct cluster *redis;     /* [cluster] redis or sentinels, or NULL */
	struct log_limit events_lost_logged;
	enum service_restore restore;      /* a snapshot waits or is restored: an operator's changes are marked */
	struct entry_run changed_meanwhile; /* while it waits: those changes, marked when it begins */
	struct state_fork *dumper;    /* this node's snapshot, made and sent by a child; NULL: none */
	struct service_waiters snapshot_waiting, snapshot_again; /* bloomctl cluster snapshot: that one, the next */
};

/* service_cluster.c: follow the stream (-1 after logging); events to Redis; once a second; stopped (cursor and outbox written). */
int service_cluster_start(struct service *s);
void service_cluster_events(struct service *s, struct events *ev);
void service_cluster_tick(struct service *s);
void service_cluster_stop(struct service *s);
/* -1 with the reason while the outbox cannot be trusted (changes are not durable). */
int service_cluster_outbox_error(const struct service *s, char *err, size_t errlen);

/* service_change.c: whether list i's new versions and flushes from origin go to the stream; list i's new version (entry lines) or flush (data NULL), to the stream if its origin shares it. */
bool service_shares(const struct service *s, enum service_origin from, int i);
void service_share_list(struct service *s, enum service_origin from, int i, const char *data, size_t len);
/* service_lists.c: each list version this node shares published again (the stream lost them; a snapshot asked for). */
void service_share_lists_again(struct service *s);
/* What a change from the stream came to (rc: the local path's, -1 with its message). */
enum cluster_apply service_stream_outcome(const struct service *s, int rc);
/* A version from the stream taken in slices is done with (rc as above): the cluster reads on. */
void service_stream_applied(struct service *s, int rc, const char *err);
/*
 * A snapshot from the stream waits to be restored (behind a list version
 * being taken: the staging bit is the version's), is being restored in
 * slices, or neither (it was called off). From the moment it is received,
 * an entry an operator adds or deletes here is marked staged (the restore
 * passes and keeps what is marked), as such a change comes after the
 * snapshot and it must not undo it: remembered while it waits, and marked
 * when it begins. Then it is in (rc 0) or not (-1, err says why): the
 * cluster reads on from it, or asks again.
 */
void service_stream_restoring(struct service *s, enum service_restore state);
void service_stream_restored(struct service *s, int rc, const char *err);

#endif
