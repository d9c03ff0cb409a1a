/* stats.h - packet counters and the statistics object bloomd reports. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_STATS_H
#define BLOOMD_STATS_H

#include <jansson.h>
#include <stdint.h>

#include "handshake.h"
#include "matcher_view.h"
#include "packet.h"

struct stats {
	uint64_t packets, bytes;          /* seen; bytes as on the wire */
	uint64_t status[PACKET_STATUS_COUNT];
	uint64_t matched_packets;
	uint64_t event_errors;
	uint64_t pcap_skipped;            /* matched, but not written to the match pcap */
	uint64_t alerts_suppressed;       /* matches left out: the entry alerted on the flow already */
	uint64_t alerts_thresholded;      /* events left out by threshold and suppress rules */
	uint64_t passed;                  /* packets a pass list held (matched too if still judged on another part) */
	uint64_t passed_by[32];           /* by the pass list's holder bit */
	uint64_t matched_by[32];          /* packets matched, by the holder bit of each list holding a hit */
	uint64_t dropped_by[32];          /* packets dropped or rejected, by each dropping or rejecting list */
	uint64_t blocked_by[32];          /* addresses put into [action] sets, by each list that asked */
	uint64_t alert_senders[SENDER_PROOF_COUNT]; /* alerts, by what was known of the packet's sender */
	uint64_t unverified_not_blocked;  /* pair and sig matches whose sender was not proven: no address blocked */
	struct handshakes_stats handshakes; /* the TCP handshakes tracked (handshake.h) */
};

_Static_assert(MATCHER_HOLDER_STAGING == 1u << 31, "passed_by has a counter for each holder bit");

/* Each bit of holders counted once in by[]. */
static inline void stats_by_list(uint64_t by[32], uint32_t holders)
{
	for (holders &= ~MATCHER_HOLDER_STAGING; holders; holders &= holders - 1)
		by[__builtin_ctz(holders)]++;
}

static inline void stats_passed(struct stats *s, uint32_t passing)
{
	s->passed++;
	stats_by_list(s->passed_by, passing);
}

/* A matched packet whose hits' lists are held, judged dropped or rejected by the lists in dropping (0: accepted). */
static inline void stats_matched(struct stats *s, uint32_t held, uint32_t dropping)
{
	s->matched_packets++;
	stats_by_list(s->matched_by, held);
	stats_by_list(s->dropped_by, dropping);
}

static inline void stats_count(struct stats *s, uint64_t wirelen, enum packet_status status)
{
	s->packets++;
	s->bytes += wirelen;
	s->status[status]++;
}

static inline void stats_add(struct stats *to, const struct stats *from)
{
	to->packets += from->packets;
	to->bytes += from->bytes;
	for (int i = 0; i < PACKET_STATUS_COUNT; i++)
		to->status[i] += from->status[i];
	to->matched_packets += from->matched_packets;
	to->event_errors += from->event_errors;
	to->pcap_skipped += from->pcap_skipped;
	to->alerts_suppressed += from->alerts_suppressed;
	to->alerts_thresholded += from->alerts_thresholded;
	to->passed += from->passed;
	for (int i = 0; i < 32; i++) {
		to->passed_by[i] += from->passed_by[i];
		to->matched_by[i] += from->matched_by[i];
		to->dropped_by[i] += from->dropped_by[i];
		to->blocked_by[i] += from->blocked_by[i];
	}
	for (int i = 0; i < SENDER_PROOF_COUNT; i++)
		to->alert_senders[i] += from->alert_senders[i];
	to->unverified_not_blocked += from->unverified_not_blocked;
	const uint64_t *hf = (const uint64_t *)&from->handshakes;
	uint64_t *ht = (uint64_t *)&to->handshakes;
	for (size_t i = 0; i < sizeof(to->handshakes) / sizeof(uint64_t); i++)
		ht[i] += hf[i]; /* every field a count or a size: the workers' tables add up */
}

static inline void stats_add_counters(struct matcher_counters *to, const struct matcher_counters *from)
{
	to->probes += from->probes;
	to->positives += from->positives;
	to->confirmed += from->confirmed;
}

/*
 * The statistics as one JSON object: packets, parse results by reason,
 * per-kind entries and probe counters (with the live false-positive rate:
 * unconfirmed positives over probes that found nothing), and both filters'
 * shape and fill. The probe counters and hits dropped are given: the
 * matcher's own plus those of the threads that check copies of it. Caller
 * owns the result.
 */
json_t *stats_json(const struct stats *s, const struct matcher *m, const struct matcher_counters counters[MATCHER_KINDS],
		   uint64_t hits_dropped);


/*
 * A Prometheus histogram: how many values fell at or below each bound (and
 * above them all), their sum and count. bounds (ascending, at most
 * STATS_BOUNDS_MAX, in seconds) is the caller's, the same for every
 * histogram that is merged into another.
 */
#define STATS_BOUNDS_MAX 16
struct stats_histogram {
	const double *bounds;
	size_t nbounds;
	uint64_t in[STATS_BOUNDS_MAX + 1]; /* in[i]: above bound i - 1, at or below bound i; the last: above all */
	uint64_t count;
	double sum;
};

static inline void stats_observe(struct stats_histogram *h, double value)
{
	size_t i = 0;

	while (i < h->nbounds && value > h->bounds[i])
		i++;
	h->in[i]++;
	h->count++;
	h->sum += value;
}

static inline void stats_histogram_add(struct stats_histogram *to, const struct stats_histogram *from)
{
	if (to->bounds == NULL)
		*to = (struct stats_histogram){ .bounds = from->bounds, .nbounds = from->nbounds };
	for (size_t i = 0; i <= from->nbounds; i++)
		to->in[i] += from->in[i];
	to->count += from->count;
	to->sum += from->sum;
}

/* {"le": [bounds...], "cumulative": [counts at or below each...], "count", "sum"}. */
json_t *stats_histogram_json(const struct stats_histogram *h);

/*
 * The p50 and p99 of the last samples kept in a ring of cap (count: how many
 * were ever put there); both 0 while there are none.
 */
void stats_percentiles(const uint32_t *ring, size_t cap, uint64_t count, uint32_t *p50, uint32_t *p99);

#endif
