/* service.h - the running daemon: entries, durable state, sources, rebuilds, housekeeping. */
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
#include "match.h"
#include "packet.h"
#include "persist.h"
#include "rebuild.h"
#include "ttl.h"

/*
 * Every change to the entries goes through service_add and service_del, so
 * the matcher, the expiry times and the journal always agree. Sources are a
 * queue of files to replay (from -r, the config, or the replay command) and
 * at most one live interface. A one-second timer does the housekeeping:
 * expiry, the everysec fsync, auto-rebuild, and a snapshot when the journal
 * has grown past journal_max.
 */

struct replay_item {
	char *path;
	uint64_t waiter;           /* control client waiting for it (control_hold id), or 0 */
	struct replay_item *next;
};

struct service {
	struct config *cfg;
	struct matcher *matcher;
	struct events *events;
	struct event_base *base;
	struct engine engine;
	bool one_shot;             /* exit when the replay queue is empty */
	int exit_code;
	json_t *sources;           /* per replayed source: name, packets, error */

	struct replay_item *queue, *queue_tail, *current;
	struct capture *replaying;
	uint64_t current_packets;  /* of the file just finished */
	char current_error[512];
	uint64_t replay_matched_before;
	struct timespec last_batch;
	double replay_max_gap_ms;
	struct capture *live;

	struct journal *journal;   /* NULL: no durable state */
	uint64_t generation;
	bool journal_stale;        /* a snapshot went in but its journal did not: changes refused */
	bool restored;             /* the filters came from a snapshot */
	struct ttl *ttl;
	time_t started;

	struct rebuild *rebuild;
	uint64_t rebuild_waiter;
	uint64_t rebuilds;
	struct rebuild_result last_rebuild;

	struct control *control;
	struct event *housekeeping;
	time_t problems_reported;  /* the last warning about malformed or dropped packets */
	uint64_t problems_seen[PACKET_STATUS_COUNT], drops_seen;
	bool stopping;
};

/*
 * Load the state (snapshot, journal) and the entry lists of cfg and build
 * the filters. Returns 0, or -1 after logging every problem (nothing is
 * written when the state cannot be read). With check_only, nothing is
 * built or written. listed[0]: entries the lists added, [1]: listed again.
 */
int service_load(struct service *s, struct config *cfg, bool use_store, bool check_only,
		 uint64_t listed[2]);

/* Outputs, the control socket (NULL: none), housekeeping. -1 after logging. */
int service_start(struct service *s, struct event_base *base, const struct control_options *control);

/* A final snapshot (with a store), then everything closed. */
void service_stop(struct service *s);

/* Add e (expiry: Unix seconds, 0 none). 0 added, 1 present (expiry set), -1 with a message. */
int service_add(struct service *s, const struct entry *e, uint64_t expiry, char *err,
		size_t errlen);
/* 0 removed, 1 was not there, -1 with a message (it could not be journaled; nothing changed). */
int service_del(struct service *s, const struct entry *e, char *err, size_t errlen);

/* Write a snapshot and restart the journal. */
int service_save(struct service *s, char *err, size_t errlen);

/* Write the queued journal records; with sync_now, fsync them too (unless fsync = no). */
void service_sync(struct service *s, bool sync_now);

/* Start a background rebuild; waiter (or 0) gets the reply when it is done. */
int service_rebuild(struct service *s, unsigned rounds, uint64_t waiter, char *err, size_t errlen);

/* Queue a pcap file; waiter (or 0) gets a reply when it has been replayed. */
int service_replay(struct service *s, const char *path, uint64_t waiter, char *err, size_t errlen);

/* Start live capture on interface. */
int service_capture_live(struct service *s, const char *interface);

/* Re-read the configuration; a bad one is refused (messages in *problems) and the old one kept. */
int service_reload(struct service *s, json_t **problems);

/* Reopen the event and pcap outputs (after log rotation). */
int service_reopen(struct service *s, char *err, size_t errlen);

/* Everything stats reports, as one object (caller owns it). */
json_t *service_stats(struct service *s);

#endif
