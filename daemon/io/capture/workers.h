/* workers.h - packet sources on threads of their own, checked against the matcher published to them. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_WORKERS_H
#define BLOOMD_WORKERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture.h"
#include "inline.h"
#include "matcher_view.h"
#include "stats.h"

/*
 * [capture] workers = N: each of N threads runs an event loop of its own
 * over a source of its own (a capture handle joined to one PACKET_FANOUT
 * group, or its share of the netfilter queues) and checks every packet
 * against the matcher copy published last.
 *
 * The matcher they read never changes while they may read it. The daemon
 * keeps two: its own, which it changes, and a copy for the workers, kept in
 * step by replaying the changes (matcher_replay). To publish, it points the
 * workers at its own matcher, waits a grace period (userspace RCU, QSBR
 * flavour) so that none still reads the copy, replays the changes onto the
 * copy, points the workers back at it and waits again; only then does it
 * change its own again. A worker is online only while it handles a batch:
 * it reads the pointer at the batch's first packet and goes offline at its
 * end, so synchronize_rcu waits for the batches in progress at most, and an
 * idle worker holds nothing up. The packet path takes no lock and makes no
 * atomic read-modify-write.
 *
 * A packet that matched is copied, with its hits' entries, into the
 * worker's ring (one producer, one consumer), and the daemon's loop, woken
 * by an eventfd, reports it; inline, the worker has given its verdict
 * already. Each worker's counters are its own, copied out under its own
 * lock once a batch (and every 250 ms), never once a packet.
 */
struct workers;
struct event_base;

struct workers_options {
	unsigned count;
	bool inline_mode;
	struct inline_options queues;       /* inline: first..last, split among the workers in order */
	struct capture_live_options live;   /* passive: each worker opens it, all in one fanout group */
	unsigned batch;                     /* packets checked at once ([capture] batch; 0: auto, engine_batch_max) */
	size_t handshakes;                  /* TCP connections each worker tracks (handshake.h); 0: none */
	unsigned handshake_idle;            /* seconds a tracked connection may be quiet */
};

/* A matched packet from a worker; its frame and its hits' keys are copies, valid during the callback. */
struct worker_match {
	struct capture_packet packet;
	const char *source;        /* the interface, or the worker's queues */
	enum verdict verdict;      /* inline: what the worker did with it */
	unsigned exempt;           /* its sides a pass list exempts (ENGINE_EXEMPT_*) */
	enum sender_proof sender;  /* what the worker's handshake table proves of its sender */
	size_t n;
	struct matcher_found found[MATCHER_MAX_HITS];
};

typedef void (*workers_match_cb)(void *ctx, const struct worker_match *m);
/* After the matches one wake-up brought (flush outputs). */
typedef void (*workers_batch_cb)(void *ctx);
/* A worker's source stopped (a capture's interface went away); that worker has stopped. */
typedef void (*workers_failed_cb)(void *ctx, const char *source, const char *error);

struct workers_callbacks {
	workers_match_cb match;
	workers_batch_cb batch;
	workers_failed_cb failed;
	void *ctx;
};

/*
 * Open every worker's source, to be checked against m (not owned: it must
 * not change while published); inline, every match is accepted until
 * workers_set_verdicts. NULL with a message (a source that cannot be
 * opened, no memory).
 */
struct workers *workers_start(struct event_base *loop, const struct workers_options *o, const struct matcher *m,
			      const struct workers_callbacks *cb, char *err, size_t errlen);

/*
 * Start the threads: after the privileges are given up, since capabilities
 * are a thread's own and a new thread inherits its creator's. -1 with a
 * message (workers_stop stops those started).
 */
int workers_run(struct workers *w, char *err, size_t errlen);

/* Stop and join the threads, report the matches still in their rings, free everything. */
void workers_stop(struct workers *w);

/* Point the workers at m; returns once none reads the matcher they read before. */
void workers_read(struct workers *w, const struct matcher *m);

/*
 * The lists whose matches are dropped, and those whose are rejected,
 * inline, and the pass lists (live or inline), from the next packet on.
 */
void workers_set_verdicts(struct workers *w, uint32_t drop_holders, uint32_t reject_holders, uint32_t pass_holders,
			  uint32_t pass_packet_holders);

struct workers_totals {
	struct stats stats;
	struct matcher_counters counters[MATCHER_KINDS];
	uint64_t hits_dropped;
	uint64_t handoff_lost;     /* matched packets not reported: the ring to the loop was full */
	uint64_t received, dropped, if_dropped; /* passive: the kernel's, summed */
	struct inline_stats queues; /* inline: summed; the verdict latency is the slowest worker's */
	uint64_t packets[64];      /* per worker (the first 64) */
};

/* Every worker's counters, summed (kernel counters as of the last 250 ms). */
void workers_totals(struct workers *w, struct workers_totals *out);
unsigned workers_count(const struct workers *w);

#endif
