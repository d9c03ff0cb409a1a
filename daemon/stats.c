/* stats.c - packet counters and the statistics object bloomd reports. */
#include "stats.h"

#include "entry.h"

static json_t *kind_json(const struct matcher *m, enum entry_kind kind)
{
	const struct match_counters *c = matcher_counters(m, kind);
	uint64_t unconfirmed = c->positives - c->confirmed, absent = c->probes - c->confirmed;

	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:f}", "entries", (json_int_t)matcher_entries(m, kind),
			 "probes", (json_int_t)c->probes, "filter_positives", (json_int_t)c->positives,
			 "confirmed", (json_int_t)c->confirmed, "unconfirmed", (json_int_t)unconfirmed,
			 "fpr_measured", absent ? (double)unconfirmed / (double)absent : 0.0);
}

static json_t *filter_json(const struct matcher *m, int sig)
{
	struct match_filter_info fi;

	matcher_filter_info(m, sig, &fi);
	return json_pack("{s:I,s:I,s:i,s:i,s:I,s:I,s:f,s:f}", "keys", (json_int_t)fi.entries,
			 "bits", (json_int_t)fi.bits, "choices", (int)fi.choices, "hashes", (int)fi.hashes,
			 "bytes", (json_int_t)fi.bytes, "store_bytes", (json_int_t)fi.store_bytes,
			 "fill", fi.fill, "fpr_predicted", fi.fpr_predicted);
}

json_t *stats_json(const struct stats *s, const struct matcher *m)
{
	json_t *parse = json_object(), *kinds = json_object();

	for (int st = 0; st < PACKET_STATUS_COUNT; st++)
		json_object_set_new(parse, packet_status_name((enum packet_status)st),
				    json_integer((json_int_t)s->status[st]));
	for (int k = ENTRY_ADDR; k <= ENTRY_SIG; k++)
		json_object_set_new(kinds, entry_kind_name((enum entry_kind)k), kind_json(m, (enum entry_kind)k));
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:o,s:{s:o,s:o}}", "packets", (json_int_t)s->packets,
			 "bytes", (json_int_t)s->bytes, "matched_packets", (json_int_t)s->matched_packets,
			 "event_errors", (json_int_t)s->event_errors,
			 "pcap_skipped", (json_int_t)s->pcap_skipped,
			 "hits_dropped", (json_int_t)matcher_hits_dropped(m), "parse", parse, "kinds", kinds,
			 "filters", "addresses", filter_json(m, 0), "signatures", filter_json(m, 1));
}
