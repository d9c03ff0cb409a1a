/* cluster.h - sensors sharing their entries through a Redis stream, and events to Redis (hiredis, in the loop). */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_CLUSTER_H
#define BLOOMD_CLUSTER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

/*
 * Every sensor XADDs its operators' changes (add, with its expiry, and del)
 * to one stream once they are journaled locally (in MULTI/EXEC batches, one
 * in flight: a batch lands whole or not at all), and XREADs the stream,
 * applying every operation in stream order, its own included: the last
 * writer of an entry in the stream wins, the same on every node. Two
 * connections, both in the daemon's event loop (hiredis's libevent adapter):
 * one blocks in XREAD, the other writes (changes, events, snapshots); no
 * call waits, and a Redis that is down or slow only delays.
 *
 * With a state directory, two files keep this node's place:
 *   cluster.cursor  the last stream ID applied (written once a second and at
 *                   stop; a restart re-reads the few after it, which
 *                   changes nothing: the same operations in the same order)
 *   cluster.outbox  changes not yet in the stream, one a line, sent again
 *                   after a restart
 * When the stream was trimmed past this node's place (MAXLEN), it starts
 * again from the snapshot a node published (cluster_snapshot): a hash at
 * STREAM:snapshot with the entries and the stream ID they cover.
 */
struct cluster;
struct state_dir;
struct event_base;

/*
 * add and del change the local list; replace and flush a list without a
 * file of its own (one filled by bloomctl replace), whose new version
 * travels whole.
 */
enum cluster_op_kind { CLUSTER_ADD, CLUSTER_DEL, CLUSTER_REPLACE, CLUSTER_FLUSH };

struct cluster_op {
	enum cluster_op_kind kind;
	const char *entry;         /* add, del: canonical text ("addr 192.0.2.1"); replace, flush: the list */
	uint64_t expires;          /* add: Unix seconds, 0: never */
	const char *data;          /* replace: the version's entry lines */
	size_t data_len;
	const char *node;          /* who made it */
};

/* What came of applying an operation from the stream. */
enum cluster_apply {
	CLUSTER_APPLIED,           /* done: the cursor moves past it */
	CLUSTER_APPLY_REFUSED,     /* refused for what it says (a message): logged, counted, passed */
	CLUSTER_APPLY_LATER,       /* cannot be applied now (the state cannot be written): tried again,
				      with a growing pause, and nothing after it is applied first */
	CLUSTER_APPLY_STARTED,     /* being applied in slices: the daemon calls cluster_applied when
				      done; nothing is read meanwhile */
};

struct cluster_callbacks {
	/* Apply an operation from the stream; err says why when it is refused or must wait. */
	enum cluster_apply (*apply)(void *ctx, const struct cluster_op *op, char *err, size_t errlen);
	/*
	 * Make the entries those of a snapshot (entry lines): APPLIED, LATER
	 * with a message (the snapshot is asked for again after a pause), or
	 * STARTED (being restored in slices: cluster_restored follows).
	 */
	enum cluster_apply (*restore)(void *ctx, const char *lines, size_t len, char *err, size_t errlen);
	/*
	 * Begin making the entry lines of a snapshot of the entries as they are
	 * now: cluster_snapshot_made follows, before this returns or from the
	 * loop later. -1 if it cannot begin.
	 */
	int (*dump)(void *ctx);
	/* The snapshot cluster_snapshot began is in Redis (error NULL), or not. Not called once closing. */
	void (*snapshot_sent)(void *ctx, const char *error);
	/*
	 * Whether what was applied is as durable as the fsync policy makes local
	 * changes: the cursor is saved past entries only then, so a restart
	 * never starts after an entry its journal did not keep.
	 */
	bool (*durable)(void *ctx);
	/* An event cluster_event took that Redis did not (an error, a lost connection): the fallback's. */
	void (*event_lost)(void *ctx, const char *line, size_t len);
	/*
	 * The stream was lost (Redis lost its data) and this node's snapshot is
	 * published again: publish again, too, each list version it shares
	 * (a list with no file or url), which the lost stream held.
	 */
	void (*republish_lists)(void *ctx);
	/*
	 * What this node holds, for the fleet's digests: each shared list as a
	 * line "NAME COUNT ENTRIES ENDS" (the count, and order-independent sums
	 * of its entries' and their ends' digests, in hex), leaving out entries
	 * that end at or before horizon (Unix seconds). The caller frees; NULL
	 * without memory.
	 */
	char *(*digest)(void *ctx, uint64_t horizon);
	/* Whether this node holds what op, a change of its own, made (an add: with its expiry; a del: the entry gone). */
	bool (*holds)(void *ctx, const struct cluster_op *op);
	void *ctx;
};

/*
 * Connect (in the background) and start following the stream. state (or
 * NULL; the caller's, kept open while the cluster is) keeps the cursor and
 * the outbox; sync_always: fsync the outbox at each change. NULL with a
 * message if the files cannot be read.
 */
struct cluster *cluster_open(struct event_base *base, const struct cluster_config *cfg,
			     const struct state_dir *state, bool sync_always, const struct cluster_callbacks *cb,
			     char *err, size_t errlen);
/* Save the cursor and the outbox, and disconnect. */
void cluster_close(struct cluster *c);

/*
 * A local change, after it is journaled (op's node is this one): into the
 * outbox (fsync'd with sync_always), then the stream. -1 with a message
 * when it cannot be (no memory, too large). A change whose outbox write
 * fails is still sent from memory, but the failure stands
 * (cluster_outbox_error) until cluster_tick has written the outbox anew.
 */
int cluster_publish(struct cluster *c, const struct cluster_op *op, char *err, size_t errlen);

/* -1 with the reason while the outbox cannot be trusted: changes must not be acknowledged then. */
int cluster_outbox_error(const struct cluster *c, char *err, size_t errlen);

/*
 * An event line for Redis: 0 taken (and, if Redis then does not take it,
 * handed back through cb.event_lost), -1 not now (down, or too many in flight).
 */
int cluster_event(struct cluster *c, const char *line, size_t len);

/*
 * Publish this node's entries as the snapshot a trimmed node starts from:
 * 0 begun (cb.snapshot_sent follows), 1 one is on its way already (its
 * outcome follows; its entries may be older than a change just made), -1
 * with a message.
 */
int cluster_snapshot(struct cluster *c, char *err, size_t errlen);
/*
 * The entry lines cb.dump was asked for are written; the snapshot goes to
 * Redis, signed, with the stream's place and what was seen as they stood
 * when cluster_snapshot began, by one of two ways:
 *   send  in a child (state_fork.h) with c as it was at the fork: on a
 *         connection of its own, blocking (10 s at most for each step);
 *         -1 with a message. The loop is then told by
 *   sent  its outcome (error NULL: in Redis).
 *   made  in the loop (data, len read here, not kept; or why there are
 *         none), on the writer's connection.
 */
int cluster_snapshot_send(const struct cluster *c, const char *data, size_t len, char *err, size_t errlen);
void cluster_snapshot_sent(struct cluster *c, const char *error);
void cluster_snapshot_made(struct cluster *c, const char *data, size_t len, const char *error);

/*
 * The entry whose apply returned CLUSTER_APPLY_STARTED is done: rc and err
 * as apply's would have been. Reading goes on from after it (or, for
 * CLUSTER_APPLY_LATER, from it, after a pause). Not called if the daemon
 * stops first: the cursor stays before the entry, and the next start
 * applies it again.
 */
void cluster_applied(struct cluster *c, enum cluster_apply rc, const char *err);

/*
 * The snapshot whose restore returned CLUSTER_APPLY_STARTED is restored
 * (CLUSTER_APPLIED: reading goes on from it) or not (LATER, err says why:
 * asked for again after a pause). Not called if the daemon stops first:
 * the cursor stays where it was, and the next start restores it again.
 */
void cluster_restored(struct cluster *c, enum cluster_apply rc, const char *err);

/* Once a second: reconnect, write the cursor, fsync the outbox, measure the lag. */
void cluster_tick(struct cluster *c);

/* Connections, cursor, lag, counts, the last error. */
json_t *cluster_status(const struct cluster *c);

#endif
