/* engine.h - one packet through the daemon's path: parse, count, match, report. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_ENGINE_H
#define BLOOMD_ENGINE_H

#include <stdbool.h>

#include "alert.h"
#include "flows.h"
#include "frame.h"
#include "handshake.h"
#include "matcher_view.h"
#include "stats.h"
#include "threshold.h"

/* A batch's packets, parsed, and their hits: the loop's engine has one, as each worker has. */
struct packet_batch {
	struct packet_view views[PACKET_BATCH_MAX];
	struct matcher_hit hits[PACKET_BATCH_MAX][MATCHER_MAX_HITS];
	size_t nhits[PACKET_BATCH_MAX];
	uint64_t conn_keys[PACKET_BATCH_MAX];  /* each packet's TCP connection (handshakes_prefetch) */
	uint8_t senders[PACKET_BATCH_MAX];     /* what each proves of its sender (enum sender_proof) */
};

struct engine {
	const struct matcher *matcher; /* not owned */
	struct matcher_scratch *scratch; /* the loop's own probes and counters (matcher_scratch_new) */
	alert_emit_cb emit;        /* where alerts go (the daemon's events), with its ctx */
	void *emit_ctx;
	struct flows *flows;       /* not owned; NULL: every matching packet alerts */
	struct thresholds *thresholds; /* not owned; NULL: no threshold or suppress rules */
	struct handshakes *handshakes; /* live packets' TCP connections; not owned; NULL: not tracked (never proven) */
	struct handshakes *replay_handshakes; /* replays', cleared as each file starts, so that a capture proves alone */
	uint64_t evicted_before[2]; /* of the flows and thresholds tables replaced before these (engine_evicted) */
	bool inline_mode;          /* packets are judged: a match of a dropping list drops */
	uint32_t drop_holders;     /* the holders (lists) whose matches are dropped, inline */
	uint32_t reject_holders;   /* and those whose matches are rejected */
	uint32_t pass_holders;     /* the pass lists: the addresses they hold are exempt (engine_exempt) */
	uint32_t pass_packet_holders; /* those of them with pass = packet: a packet they hold is exempt */
	/* Blocking an address (into an nftables set), for matches of dropping lists; NULL: none. */
	int (*block)(void *ctx, const uint8_t *addr, int family);
	void *block_ctx;
	unsigned block_side;       /* pair and sig matches: 1 source, 2 destination, 3 both */
	bool lists_in_kernel;      /* the lists' addresses and nets are in the kernel's sets already ([action] manage): pairs and signatures alone block */
	event_label_cb label;      /* each hit's labels (the daemon's lists); NULL: the defaults */
	void *label_ctx;
	const char *const *list_names; /* by holder bit, for the lists an event names; NULL: none */
	struct stats stats;
	struct packet_batch batch;
	struct matcher_found found[MATCHER_MAX_HITS];  /* the hits' entries, a packet at a time */
	struct event_label labels[MATCHER_MAX_HITS]; /* found[i]'s, found once a packet */
	char event_error[256];     /* why the last alert could not be emitted (stats.event_errors counts them) */
};

/*
 * Handle count captured packets (at most PACKET_BATCH_MAX) from source (a
 * file name, or an interface or queue when live): parse, check, and
 * engine_report each match, in order, as one packet at a time would.
 * verdicts (NULL: not wanted) gets each packet's: inline, engine_verdict of
 * its hits; else accept. All are parsed and their addresses probed together
 * first (matcher_check_batch).
 */
void engine_batch(struct engine *e, const struct capture_packet *p, size_t count, const char *source, bool live,
		  enum verdict *verdicts);
/*
 * engine_batch's first part, which the workers share: count packets parsed
 * into b, counted in stats, checked against m, and in order through hs's
 * TCP handshakes (NULL: not tracked) for their senders' proof.
 */
void engine_check_batch(const struct matcher *m, struct matcher_scratch *sc, struct stats *stats,
			struct handshakes *hs, const struct capture_packet *p, size_t count, struct packet_batch *b);

/*
 * The packets checked at once for [capture] batch (0: auto). Auto batches
 * at every filter size: a batch takes fewer instructions a packet than one
 * at a time, and where the filter outgrows the caches it overlaps the
 * probes' waits on memory (doc/performance.md, "batch = auto").
 */
static inline unsigned engine_batch_max(unsigned configured)
{
	return configured ? configured : PACKET_BATCH_MAX;
}

/*
 * A packet with these hits: dropped if one is held by a list in
 * drop_holders, else rejected if one is held by a list in reject_holders
 * (the quieter wins), else accepted.
 */
static inline enum verdict engine_verdict(uint32_t drop_holders, uint32_t reject_holders, uint32_t held)
{
	return held & drop_holders ? VERDICT_DROP : held & reject_holders ? VERDICT_REJECT : VERDICT_ACCEPT;
}

/*
 * Every list holding one of a packet's hits (its found[]), as holder bits.
 * Pass entries live in the same filters as the rest, so a packet no entry
 * holds pays nothing for them: this runs only on confirmed hits.
 */
static inline uint32_t engine_held(const struct matcher_found *found, size_t n)
{
	uint32_t held = 0;

	for (size_t i = 0; i < n; i++)
		held |= found[i].holders;
	return held;
}

/* A packet's sides a pass list exempts: its source, its destination. */
#define ENGINE_EXEMPT_SRC 1u
#define ENGINE_EXEMPT_DST 2u

/*
 * What the lists that hold an entry make of it: a pass list's role before
 * a dropping or rejecting one's (pass = packet before pass = address), the
 * one rule the loop's set actions, the XDP set and the nft mirror follow.
 * acting (NULL: not wanted) gets the holders that give that role.
 */
enum engine_role { ENGINE_ROLE_NONE, ENGINE_ROLE_DROP, ENGINE_ROLE_PASS, ENGINE_ROLE_PASS_PACKET };
enum engine_role engine_role(const struct engine *e, uint32_t holders, uint32_t *acting);

/*
 * What pass lists take out of a packet's n hits (found, parsed as v),
 * before any verdict; passing: the pass lists among their holders (not 0). A pass list holds addresses that are never judged
 * bad (a whitelist): a hit of another list on such addresses alone goes (a
 * pair, if both its ends are); the packet is still judged on its other side
 * and its payload (a listed source sending to a passed server is dropped). A pass
 * list with pass = packet (packet_holders), or a pass entry that is a pair
 * or a signature, exempts the whole packet. Returns the hits left, in
 * place (0: accept, nothing to say); *exempt gets ENGINE_EXEMPT_*.
 */
size_t engine_exempt(const struct packet_view *v, struct matcher_found *found, size_t n, uint32_t passing,
		     uint32_t pass_holders, uint32_t packet_holders, unsigned *exempt);

/*
 * What follows a match, for a packet parsed as v with n confirmed hits
 * (found; their keys stay the caller's), its exempt sides (never put into
 * the blocking set), judged dropped or not, with what is known of its
 * sender: labels, the blocking set (a pair or signature match blocks only
 * a proven sender's addresses: a forged one must never choose a block),
 * once-per-flow, thresholds and the event. A worker thread judges its
 * packets; the loop reports them here.
 */
void engine_report(struct engine *e, const struct capture_packet *p, const struct packet_view *v,
		   const struct matcher_found *found, size_t n, unsigned exempt, const char *source, bool live,
		   enum verdict verdict, enum sender_proof sender);

/* What the alert tables pushed out to make room (engine.h: flows, thresholds), the tables replaced before counted too. */
void engine_evicted(const struct engine *e, uint64_t *flows, uint64_t *thresholds);
/* The flows and thresholds tables replaced (NULL: none), what the old ones pushed out kept; the old ones are the caller's to free. */
void engine_set_tables(struct engine *e, struct flows *flows, struct thresholds *thresholds);

#endif
