/* service_capture.h - the daemon's packet sources, the workers, and the log of changes that their copy follows. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_SERVICE_CAPTURE_H
#define BLOOMD_SERVICE_CAPTURE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "capture.h"
#include "inline.h"
#include "matcher_view.h"
#include "service.h"
#include "workers.h"

struct replay_item {
	char *path;                /* or, with fd, the name the client gave it */
	int fd;                    /* a file the client passed open, or -1: path is opened */
	uint64_t waiter;           /* control client waiting for it (control_hold id), or 0 */
	struct replay_item *next;
};

/* Owned by: service_capture.c service_followers.c */
struct service_capture {
	bool one_shot;             /* exit when the replay queue is empty */
	int exit_code;
	json_t *replayed;          /* per replayed source: name, packets, error */
	struct replay_item *queue, *queue_tail, *current;
	struct capture *replaying;
	uint64_t current_packets;  /* of the file just finished */
	char current_error[512];
	uint64_t replay_matched_before;
	struct timespec last_batch;
	double replay_max_gap_ms;
	struct capture *live;
	struct inline_queue *inline_queue; /* [capture] mode = inline, or NULL */
	char queue_name[32];       /* "nfqueue0", for events' in_iface; with workers, passive: the interface */
	struct workers *workers;   /* [capture] workers > 1, or NULL */
	struct matcher *replica;   /* the copy the workers read, when they are not reading matcher */
	struct matcher_log *changes; /* matcher's changes since the replica, the XDP set and the nft mirror were in step */
	uint64_t published;        /* matcher_changes when they were */
	bool actions_stale;        /* the lists' actions changed: every entry looked at again (XDP set, nft mirror) */
	uint64_t actions_changed;  /* times they changed: a follower filled whole since the last needs no second look */
	unsigned followers;        /* SERVICE_FOLLOWS_*: who reads the changes */
	struct event *publisher;   /* changes without a client waiting reach them within PUBLISH_MS */
};

/* The replay queue ready (-1 without memory); every source closed and the queue emptied. */
int service_capture_start(struct service *s);
void service_capture_close(struct service *s);
/* The packet counters of the loop and of every worker, summed; the kernel's of each source. */
void service_packet_totals(struct service *s, struct workers_totals *t);
/* stats' "workers", "inline", "capture" and "sources", from the totals t. */
void service_capture_stats(const struct service *s, json_t *o, const struct workers_totals *t);
/* Start the workers' threads (service_run_threads); -1 logged. */
int service_run_workers(struct service *s);
/* The lists' actions changed: the workers judge by them. */
void service_workers_verdicts(struct service *s);

/* Who follows the matcher's changes. */
enum { SERVICE_FOLLOWS_WORKERS = 1, SERVICE_FOLLOWS_XDP = 2, SERVICE_FOLLOWS_MIRROR = 4 };
/* Record the matcher's changes for follower too, propagated every PUBLISH_MS (service_propagate); -1 logged. */
int service_record_changes(struct service *s, unsigned follower);

/* service_followers.c: the changes since the followers were last in step (NULL: none recorded); *whole: every entry is to be looked at again. */
const struct matcher_log *service_followers_log(const struct service *s, bool *whole);
/* Every entry looked at again at the next propagation (the lists' actions changed); how often that was asked. */
void service_followers_all(struct service *s);
uint64_t service_followers_all_asked(const struct service *s);
/* follower stopped: the changes are no longer recorded once none is left. */
void service_follower_gone(struct service *s, unsigned follower);

#endif
