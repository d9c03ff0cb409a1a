/* engine.h - one packet through the daemon's path: parse, count, match, report. */
#ifndef BLOOMD_ENGINE_H
#define BLOOMD_ENGINE_H

#include <stdbool.h>

#include "capture.h"
#include "events.h"
#include "flows.h"
#include "log.h"
#include "match.h"
#include "stats.h"
#include "threshold.h"

struct engine {
	struct matcher *matcher;   /* not owned */
	struct events *events;     /* not owned */
	struct flows *flows;       /* not owned; NULL: every matching packet alerts */
	struct thresholds *thresholds; /* not owned; NULL: no threshold or suppress rules */
	bool inline_mode;          /* packets are judged: a match of a dropping list drops */
	/* Blocking an address (into an nftables set), for matches of dropping lists; NULL: none. */
	int (*block)(void *ctx, const uint8_t *addr, int family);
	void *block_ctx;
	unsigned block_side;       /* pair and sig matches: 1 source, 2 destination, 3 both */
	event_label_cb label;      /* each hit's labels (the daemon's lists); NULL: the defaults */
	void *label_ctx;
	struct stats stats;
	struct match_hit hits[MATCH_MAX_HITS];
	struct event_label labels[MATCH_MAX_HITS]; /* hits[i]'s, found once a packet */
	struct log_limit event_errors_logged;
};

/*
 * Handle one captured packet from source (a file name, or an interface or
 * queue when live). Returns whether to drop it: inline, when a confirmed
 * match's list drops what it matches.
 */
bool engine_packet(struct engine *e, const struct capture_packet *p, const char *source, bool live);

#endif
