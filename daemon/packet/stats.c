/* stats.c - packet counters and the statistics object bloomd reports. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "entry.h"
#include "matcher_view.h"
#include "simd.h"

static json_t *kind_json(const struct matcher *m, enum entry_kind kind, const struct matcher_counters *c)
{
	uint64_t unconfirmed = c->positives - c->confirmed, absent = c->probes - c->confirmed;

	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:f}", "entries", (json_int_t)matcher_entries(m, kind),
			 "probes", (json_int_t)c->probes, "filter_positives", (json_int_t)c->positives,
			 "confirmed", (json_int_t)c->confirmed, "unconfirmed", (json_int_t)unconfirmed,
			 "fpr_measured", absent ? (double)unconfirmed / (double)absent : 0.0);
}

static json_t *filter_json(const struct matcher *m, int sig)
{
	struct matcher_filter_info fi;

	matcher_filter_info(m, sig, &fi);
	json_t *o = json_pack("{s:I,s:I,s:i,s:i,s:I,s:I,s:f,s:f,s:s}", "keys", (json_int_t)fi.entries,
			      "bits", (json_int_t)fi.bits, "choices", (int)fi.choices, "hashes", (int)fi.hashes,
			      "bytes", (json_int_t)fi.bytes, "store_bytes", (json_int_t)fi.store_bytes,
			      "fill", fi.fill, "fpr_predicted", fi.fpr_predicted, "kernel", simd_name(fi.kernel));
	if (sig) {
		json_object_set_new(o, "scan_kernel", json_string(simd_name(fi.scan_kernel)));
		json_object_set_new(o, "scan_gather", json_boolean(fi.scan_gathers));
	}
	return o;
}

json_t *stats_json(const struct stats *s, const struct matcher *m, const struct matcher_counters counters[MATCHER_KINDS],
		   uint64_t hits_dropped)
{
	json_t *parse = json_object(), *kinds = json_object();

	for (int st = 0; st < PACKET_STATUS_COUNT; st++)
		json_object_set_new(parse, packet_status_name((enum packet_status)st),
				    json_integer((json_int_t)s->status[st]));
	for (int k = ENTRY_ADDR; k <= ENTRY_SIG; k++)
		json_object_set_new(kinds, entry_kind_name((enum entry_kind)k), kind_json(m, (enum entry_kind)k, &counters[k]));
	json_t *senders = json_object();
	for (int p = 0; p < SENDER_PROOF_COUNT; p++)
		json_object_set_new(senders, sender_proof_name((enum sender_proof)p),
				    json_integer((json_int_t)s->alert_senders[p]));
	const struct handshakes_stats *h = &s->handshakes;
	json_t *handshakes = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "opened", (json_int_t)h->opened,
				       "verified", (json_int_t)h->verified, "wrong_ack", (json_int_t)h->wrong_ack,
				       "conflicts", (json_int_t)h->conflicts, "one_sided", (json_int_t)h->one_sided,
				       "out_of_window", (json_int_t)h->out_of_window,
				       "resets", (json_int_t)h->resets, "evicted", (json_int_t)h->evicted,
				       "refused", (json_int_t)h->refused, "tracked", (json_int_t)h->tracked,
				       "capacity", (json_int_t)h->capacity, "bytes", (json_int_t)h->bytes);
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:o,s:{s:o,s:o},s:o,s:I,s:o}", "packets", (json_int_t)s->packets,
			 "bytes", (json_int_t)s->bytes, "matched_packets", (json_int_t)s->matched_packets,
			 "passed", (json_int_t)s->passed,
			 "event_errors", (json_int_t)s->event_errors,
			 "pcap_skipped", (json_int_t)s->pcap_skipped,
			 "alerts_suppressed", (json_int_t)s->alerts_suppressed,
			 "alerts_thresholded", (json_int_t)s->alerts_thresholded,
			 "hits_dropped", (json_int_t)hits_dropped, "parse", parse, "kinds", kinds,
			 "filters", "addresses", filter_json(m, 0), "signatures", filter_json(m, 1), "alert_senders", senders,
			 "unverified_not_blocked", (json_int_t)s->unverified_not_blocked, "handshakes", handshakes);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

json_t *stats_histogram_json(const struct stats_histogram *h)
{
	json_t *le = json_array(), *cumulative = json_array();
	uint64_t below = 0;

	for (size_t i = 0; i < h->nbounds; i++) {
		below += h->in[i];
		json_array_append_new(le, json_real(h->bounds[i]));
		json_array_append_new(cumulative, json_integer((json_int_t)below));
	}
	return json_pack("{s:o,s:o,s:I,s:f}", "le", le, "cumulative", cumulative, "count", (json_int_t)h->count, "sum",
			 h->sum);
}

void stats_percentiles(const uint32_t *ring, size_t cap, uint64_t count, uint32_t *p50, uint32_t *p99)
{
	size_t n = count < cap ? (size_t)count : cap;
	uint32_t *sorted = n ? malloc(n * sizeof(*sorted)) : NULL;

	*p50 = *p99 = 0;
	if (sorted == NULL)
		return;
	memcpy(sorted, ring, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_u32);
	*p50 = sorted[n / 2];
	*p99 = sorted[n * 99 / 100];
	free(sorted);
}
