/* threshold.h - Suricata's threshold.config: threshold and suppress rules for alerts. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_THRESHOLD_H
#define BLOOMD_THRESHOLD_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "packet.h"

/*
 * One rule a line, as Suricata reads them ('#' comments):
 *
 *   threshold gen_id G, sig_id S, type limit|threshold|both, track by_src|by_dst|by_both|by_rule,
 *             count N, seconds T
 *   event_filter ...                the same as threshold (its old name)
 *   suppress gen_id G, sig_id S[, track by_src|by_dst|by_either, ip ADDRESS|NETWORK|[A, B, ...]]
 *
 * sig_id 0 means every signature of gen_id; gen_id 0 and sig_id 0 every
 * alert. A suppress rule drops the alerts it covers. Of the threshold
 * rules, the first naming the alert's sig_id applies, else the first for
 * all of its gen_id:
 *   limit      at most count alerts in each period of seconds
 *   threshold  an alert every count-th time in a period
 *   both       one alert in a period, once count have been seen
 * Counts are kept per tracked address (or pair, or rule), exactly for up
 * to 65,536 of them at once; past that a new one takes the place of the
 * one counted least recently (thresholds_evicted), which can only mean an
 * alert more, and depends only on the alerts' order.
 */
struct thresholds;

/* Called once for each problem, with "FILE:LINE: message". */
typedef void (*threshold_error_cb)(void *ctx, const char *message);

/* The rules of path; NULL after reporting every problem (or with no memory). */
struct thresholds *thresholds_load(const char *path, threshold_error_cb on_error, void *ctx);
void thresholds_free(struct thresholds *t);

/* Whether an alert of (gid, sid) on packet v at now is to be written; it is counted either way. */
bool thresholds_pass(struct thresholds *t, uint32_t gid, uint32_t sid, const struct packet_view *v,
		     time_t now);

unsigned thresholds_rules(const struct thresholds *t);
/* What was tracked and pushed out to make room: each may have meant an alert more. */
uint64_t thresholds_evicted(const struct thresholds *t);

#endif
