/* service.h - the running daemon: entries, durable state, sources, rebuilds, housekeeping. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_SERVICE_H
#define BLOOMD_SERVICE_H

#include <event2/event.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "capture.h"
#include "config.h"
#include "control.h"
#include "engine.h"
#include "entry.h"
#include "events.h"
#include "matcher_view.h"
#include "packet.h"
#include "state.h"
#include "state_rebuild.h"
#include "state_ttl.h"

/*
 * Every change to the entries goes through service_add and service_del (a
 * list's, through its version or flush), so the matcher, the expiry times
 * and the journal always agree; the change's origin decides, in one place,
 * whether the fleet's stream gets it too. Sources are a
 * queue of files to replay (from -r, the config, or the replay command) and
 * at most one live interface. A one-second timer does the housekeeping:
 * expiry, the everysec fsync, auto-rebuild, and a snapshot when the journal
 * has grown past journal_max.
 */

struct service;

/* A service with nothing loaded (NULL without memory); service_free stops it first if need be. */
struct service *service_new(void);
void service_free(struct service *s);

/*
 * Load the state (snapshot, journal) and the entry lists of cfg and build
 * the filters. Returns 0, or -1 after logging every problem (nothing is
 * written when the state cannot be read). A list that is refused does not
 * stop it: *refused counts them. With check_only, nothing is built or
 * written.
 */
int service_load(struct service *s, struct config *cfg, bool use_store, bool check_only,
		 unsigned *refused);

/* Outputs, the control socket (NULL: none), housekeeping. -1 after logging. */
int service_start(struct service *s, struct event_base *base, const struct control_options *control);


/* Where a change comes from: what it reaches besides the entries (service_change.c says). */
enum service_origin {
	SERVICE_FROM_OPERATOR,     /* the control socket: journaled, and sent to the fleet's stream */
	SERVICE_FROM_STREAM,       /* the fleet's stream (a change, a version, a snapshot): journaled */
	SERVICE_FROM_EXPIRY,       /* an entry's time ran out here: each node expires its own */
};

/*
 * Add e to the local list (expiry: Unix seconds, 0 none). 0 added, 1
 * present (expiry set), -1 with a message.
 */
int service_add(struct service *s, const struct entry *e, uint64_t expiry, enum service_origin from, char *err,
		size_t errlen);
/* Ask for the memory an add of e will touch (its slot in the store), some entries before it is added. */
void service_prefetch(const struct service *s, const struct entry *e);
/*
 * Take e from the local list: 0 taken, 1 the local list did not hold it,
 * -1 with a message (it could not be journaled; nothing changed).
 * *still_held: the other lists that hold it, so that it stays.
 */
int service_del(struct service *s, const struct entry *e, enum service_origin from, uint32_t *still_held, char *err,
		size_t errlen);

/*
 * Write a snapshot and restart the journal, in the background (a child
 * writes it while the loop goes on): 0 started, and waiter (a
 * control_hold id, or 0) is told once the snapshot is in, or why not; -1
 * with a message if it could not start. One asked for while another is
 * written follows it, so that it holds every change made before it.
 */
int service_save(struct service *s, uint64_t waiter, char *err, size_t errlen);

/*
 * A root start with [service] user: the state directory and all in it
 * (lists/ and the cluster's files too) given to uid:gid before the switch,
 * and whatever is made before it given too. -1 with a message.
 */
int service_give_state(struct service *s, uid_t uid, gid_t gid, char *err, size_t errlen);

/*
 * Write the queued journal records; with sync_now, fsync them too (unless
 * fsync = no). On failure (a full disk, a failed fsync) -1: from then on
 * changes are refused (service_store_error says why) until a write, or
 * after a failed fsync a snapshot, succeeds; housekeeping retries.
 */
int service_sync(struct service *s, bool sync_now);
/* Whether changes are queued or written but not yet fsync'd. */
bool service_unsynced(const struct service *s);
/* Why the state cannot be written now, or "" when it can. */
const char *service_store_error(const struct service *s);

/* Start a background rebuild; waiter (or 0) gets the reply when it is done. */
int service_rebuild(struct service *s, unsigned rounds, uint64_t waiter, char *err, size_t errlen);

/* Queue a pcap file (the operator's: -r, the configuration); waiter (or 0) gets a reply when it has been replayed. */
int service_replay(struct service *s, const char *path, uint64_t waiter, char *err, size_t errlen);
/*
 * Queue a pcap file a client passed open, called name; fd is taken over.
 * Only a regular file: a FIFO or a device would be read in the loop.
 */
int service_replay_fd(struct service *s, int fd, const char *name, uint64_t waiter, char *err,
		      size_t errlen);

/* Start live capture on interface. */
int service_capture_live(struct service *s, const char *interface);
/* Start judging packets from [capture] queue (mode = inline). -1 after logging. */
int service_capture_inline(struct service *s);
/*
 * mode = xdp: load the XDP program with the dropping and pass lists'
 * address entries, attach it to interface, and capture there what it
 * passes. -1 after logging.
 */
int service_capture_xdp(struct service *s, const char *interface);

/*
 * The matcher's changes since the last time made to those that follow it:
 * the XDP set, the nft mirror and the workers' copy (returns once no worker
 * reads the old one). Before a change is acknowledged; a timer propagates
 * the others within PUBLISH_MS.
 */
void service_propagate(struct service *s);
/*
 * Start the threads bloomd runs besides the loop, once the privileges are
 * given up (a thread's are its creator's): the workers, and the background
 * rebuild that brings a start's online-built filters their offline rounds.
 */
int service_run_threads(struct service *s);
/* Stop the workers (at the end), reporting what they matched last. */
void service_stop_workers(struct service *s);

/*
 * Re-read the configuration and every list's file, each list's a slice at
 * a time. done is called once, maybe before this returns: rc 0 (result:
 * what was done, lists included); 1 when it was taken but some lists were
 * refused and keep their previous versions (logged; result says which);
 * -1 when the configuration is refused (result: its problems) and the
 * running one kept. done owns result.
 */
typedef void (*service_reloaded_cb)(struct service *s, int rc, json_t *result, void *ctx);
void service_reload(struct service *s, service_reloaded_cb done, void *ctx);
/* The same, its reply (as a command's) to waiter once done; -1 without memory. */
int service_reload_for(struct service *s, uint64_t waiter);

/* Reopen the event and pcap outputs (after log rotation). */
int service_reopen(struct service *s, char *err, size_t errlen);

/* Everything stats reports, as one object (caller owns it). */
json_t *service_stats(struct service *s);
/* The same in Prometheus's text format (caller frees); NULL without memory. */
char *service_metrics(struct service *s);

/* ---- what the rest of the daemon reads of it ---- */

/* The running configuration (a reload may replace it). */
const struct config *service_config(const struct service *s);
struct event_base *service_base(const struct service *s);
/*
 * Whether e is an entry; *filter_says: whether the filter alone says so;
 * *expiry: 0 or when it goes; *holders: the lists that hold it.
 */
bool service_lookup(const struct service *s, const struct entry *e, bool *filter_says, uint64_t *expiry,
		    uint32_t *holders);
/* The addr and net entries that cover an address (matcher_covering). */
void service_covering(const struct service *s, const uint8_t *addr, size_t alen, matcher_entry_cb cb,
		      void *ctx);
/* The entries in steps (matcher_walk; held 0: every one), for a listing sent as the client reads it. */
void service_walk(const struct service *s, enum entry_kind only, uint32_t held, struct matcher_cursor *cur,
		  size_t max, matcher_entry_cb cb, void *ctx);
/* When e expires (Unix seconds), or 0. */
uint64_t service_expiry(const struct service *s, const struct entry *e);
/* The local list's entries that expire, and when (state_ttl.h): read only. */
const struct state_ttl *service_local_expiries(const struct service *s);
/* How many entries are stored, all kinds. */
uint64_t service_entries(const struct service *s);
/* The offline rounds a rebuild makes. */
unsigned service_rounds(const struct service *s);
/* Packets seen and packets matched, all sources together. */
void service_counts(struct service *s, uint64_t *packets, uint64_t *matched);
bool service_is_live(const struct service *s);

/* ---- lists ---- */

/*
 * A new version of list name: from fd (a file passed open, taken over) for a
 * list without a file of its own, or (fd -1) its file read again. It is
 * taken a slice at a time: 0 when begun, and the reply (the load, and
 * whether it was taken) goes to waiter once it is taken or refused; -1
 * with a message when it cannot begin (the list keeps its version).
 */
int service_list_replace(struct service *s, const char *name, int fd, uint64_t waiter, char *err, size_t errlen);
/*
 * A list with a url: fetch it now (bloomd-fetch); waiter gets the reply
 * (fetch, load) when it is done. 1 if started, 0 if the list has no url
 * (replace it as any other), -1 with a message.
 */
int service_list_fetch(struct service *s, const char *name, uint64_t waiter, char *err, size_t errlen);
/*
 * Empty list name, in slices (service_slices_flush): 0 begun, and waiter
 * (a control_hold id, or 0) told once it is empty ("removed": the entries
 * that left it) or why not; -1 with a message.
 */
int service_list_flush(struct service *s, const char *name, enum service_origin from, uint64_t waiter, char *err,
		       size_t errlen);
/* Every list: source, format, labels, entries, last load; a list with a url, its fetches. */
json_t *service_lists_json(struct service *s);
/* List name's holder bit, or 0 if there is no such list. */
uint32_t service_list_holder(const struct service *s, const char *name);
/*
 * [action]: the addresses in the sets (reply's "blocked": address and
 * seconds_left, the first SERVICE_BLOCKED_SHOWN; "count": all), and one
 * lifted (1, or 0 if it was not blocked). -1 with a message without [action].
 */
#define SERVICE_BLOCKED_SHOWN 10000
int service_blocked(struct service *s, json_t *reply, char *err, size_t errlen);
int service_unblock(struct service *s, const uint8_t *addr, int family, char *err, size_t errlen);
/* The holder bits of the pass lists. */
uint32_t service_pass_holders(const struct service *s);
/* The names of the lists an entry's holders are. */
json_t *service_holders_json(const struct service *s, uint32_t holders);

/* ---- cluster ---- */

/*
 * Publish the local list as the snapshot a trimmed node starts from, its
 * entries written by a child while the loop goes on: 0 begun, and waiter
 * (a control_hold id) told once Redis has it, or why not (one asked for
 * while another is on its way gets the next); -1 with a message.
 */
int service_cluster_snapshot(struct service *s, uint64_t waiter, char *err, size_t errlen);
/* Connections, last stream ID, lag, counts; NULL without [cluster]. */
json_t *service_cluster_status(const struct service *s);

/* Exit when the replay queue is empty (one-shot -r runs). */
void service_set_one_shot(struct service *s, bool one_shot);
/* The process's exit status so far; service_fail sets it to 1. */
int service_exit_code(const struct service *s);
void service_fail(struct service *s);

#endif
