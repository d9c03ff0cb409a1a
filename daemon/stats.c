/* stats.c - packet counters and the statistics object bloomd reports. */
#include "stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "entry.h"
#include "match.h"
#include "simd.h"
#include "version.h"

static json_t *kind_json(const struct matcher *m, enum entry_kind kind, const struct match_counters *c)
{
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
	json_t *o = json_pack("{s:I,s:I,s:i,s:i,s:I,s:I,s:f,s:f,s:s}", "keys", (json_int_t)fi.entries,
			      "bits", (json_int_t)fi.bits, "choices", (int)fi.choices, "hashes", (int)fi.hashes,
			      "bytes", (json_int_t)fi.bytes, "store_bytes", (json_int_t)fi.store_bytes,
			      "fill", fi.fill, "fpr_predicted", fi.fpr_predicted, "kernel", simd_name(fi.kernel));
	if (sig)
		json_object_set_new(o, "scan_kernel", json_string(simd_name(fi.scan_kernel)));
	return o;
}

json_t *stats_json(const struct stats *s, const struct matcher *m, const struct match_counters counters[MATCH_KINDS],
		   uint64_t hits_dropped)
{
	json_t *parse = json_object(), *kinds = json_object();

	for (int st = 0; st < PACKET_STATUS_COUNT; st++)
		json_object_set_new(parse, packet_status_name((enum packet_status)st),
				    json_integer((json_int_t)s->status[st]));
	for (int k = ENTRY_ADDR; k <= ENTRY_SIG; k++)
		json_object_set_new(kinds, entry_kind_name((enum entry_kind)k), kind_json(m, (enum entry_kind)k, &counters[k]));
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:o,s:{s:o,s:o}}", "packets", (json_int_t)s->packets,
			 "bytes", (json_int_t)s->bytes, "matched_packets", (json_int_t)s->matched_packets,
			 "passed", (json_int_t)s->passed,
			 "event_errors", (json_int_t)s->event_errors,
			 "pcap_skipped", (json_int_t)s->pcap_skipped,
			 "alerts_suppressed", (json_int_t)s->alerts_suppressed,
			 "alerts_thresholded", (json_int_t)s->alerts_thresholded,
			 "hits_dropped", (json_int_t)hits_dropped, "parse", parse, "kinds", kinds,
			 "filters", "addresses", filter_json(m, 0), "signatures", filter_json(m, 1));
}

/* ---- Prometheus text ---- */

/* The value at a dotted path ("cluster.events.sent"), or NULL. */
static const json_t *value_at(const json_t *o, const char *path)
{
	char key[64];
	const char *dot;

	while ((dot = strchr(path, '.')) != NULL) {
		snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
		o = json_object_get(o, key);
		path = dot + 1;
	}
	return json_object_get(o, path);
}

static double number_at(const json_t *o, const char *path)
{
	const json_t *v = value_at(o, path);

	return json_is_true(v) ? 1 : json_number_value(v);
}

/* 1 if the value at path is the string want (or any string, want NULL), else 0. */
static double string_at(const json_t *o, const char *path, const char *want)
{
	const char *v = json_string_value(value_at(o, path));

	return v && (want == NULL || strcmp(v, want) == 0) ? 1 : 0;
}

static void metric_head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP bloomd_%s %s\n# TYPE bloomd_%s %s\n", name, help, name, type);
}

static void metric(FILE *f, const char *name, const char *type, const char *help, double v)
{
	metric_head(f, name, type, help);
	fprintf(f, "bloomd_%s %.17g\n", name, v);
}

/* One line per member of an object: name{label="member"} value of member.field. */
static void metric_by(FILE *f, json_t *group, const char *label, const char *field,
		      const char *name, const char *type, const char *help)
{
	const char *member;
	json_t *value;

	metric_head(f, name, type, help);
	json_object_foreach(group, member, value)
		fprintf(f, "bloomd_%s{%s=\"%s\"} %.17g\n", name, label, member,
			field ? number_at(value, field) : json_number_value(value));
}

static void capture_metric(FILE *f, const char *iface, const char *name, const char *help, double v)
{
	metric_head(f, name, "counter", help);
	fprintf(f, "bloomd_%s{interface=\"%s\"} %.17g\n", name, iface ? iface : "", v);
}

char *stats_prometheus(json_t *st)
{
	char *text = NULL;
	size_t len;
	FILE *f = open_memstream(&text, &len);
	json_t *kinds = json_object_get(st, "kinds"), *filters = json_object_get(st, "filters");

	if (f == NULL)
		return NULL;
	metric(f, "packets_total", "counter", "Packets seen.", number_at(st, "packets"));
	metric(f, "bytes_total", "counter", "Bytes seen, as on the wire.", number_at(st, "bytes"));
	metric(f, "matched_packets_total", "counter", "Packets that matched at least one entry.",
	       number_at(st, "matched_packets"));
	metric(f, "passed_packets_total", "counter", "Packets a pass list exempted from every other list.",
	       number_at(st, "passed"));
	metric(f, "event_errors_total", "counter", "Events that could not be written.",
	       number_at(st, "event_errors"));
	metric(f, "hits_dropped_total", "counter", "Matches past the per-event cap.",
	       number_at(st, "hits_dropped"));
	metric(f, "alerts_suppressed_total", "counter",
	       "Matches not reported: the entry had alerted on the flow already ([output] alerts).",
	       number_at(st, "alerts_suppressed"));
	metric(f, "alerts_thresholded_total", "counter",
	       "Events not written: a threshold or suppress rule left them out ([output] threshold_file).",
	       number_at(st, "alerts_thresholded"));
	metric_by(f, json_object_get(st, "parse"), "result", NULL, "parse_total", "counter",
		  "Packets by parse result.");
	metric_by(f, kinds, "kind", "entries", "entries", "gauge", "Entries stored, by kind.");
	metric_by(f, kinds, "kind", "probes", "probes_total", "counter", "Filter probes, by kind.");
	metric_by(f, kinds, "kind", "filter_positives", "filter_positives_total", "counter",
		  "Probes the filter said yes to, by kind.");
	metric_by(f, kinds, "kind", "confirmed", "confirmed_total", "counter",
		  "Filter positives the exact store confirmed, by kind.");
	metric_by(f, kinds, "kind", "unconfirmed", "unconfirmed_total", "counter",
		  "Filter positives the exact store refuted (false positives), by kind.");
	metric_by(f, filters, "filter", "keys", "filter_keys", "gauge", "Keys in the filter (signature windows for signatures).");
	metric_by(f, filters, "filter", "bytes", "filter_bytes", "gauge", "Bytes a scan reads.");
	metric_by(f, filters, "filter", "fill", "filter_fill_ratio", "gauge", "Fraction of bits set.");
	metric_by(f, filters, "filter", "fpr_predicted", "filter_fpr_predicted", "gauge",
		  "False-positive rate predicted from the fill.");
	if (json_object_get(st, "uptime_seconds"))
		metric(f, "uptime_seconds", "gauge", "Seconds since start.", number_at(st, "uptime_seconds"));
	if (json_object_get(st, "ttl_entries"))
		metric(f, "ttl_entries", "gauge", "Entries that expire.", number_at(st, "ttl_entries"));
	if (json_object_get(st, "rebuild")) {
		metric(f, "rebuilds_total", "counter", "Rebuilds finished.", number_at(st, "rebuild.count"));
		metric(f, "rebuild_running", "gauge", "1 while a rebuild runs.", number_at(st, "rebuild.running"));
	}
	if (json_object_get(st, "store")) {
		metric(f, "store_generation", "gauge", "Snapshots written.", number_at(st, "store.generation"));
		metric(f, "journal_records", "gauge", "Changes since the snapshot.",
		       number_at(st, "store.journal_records"));
		metric(f, "journal_bytes", "gauge", "Journal size.", number_at(st, "store.journal_bytes"));
		metric(f, "store_writable", "gauge",
		       "1 while the state can be written; 0 after a failed write or fsync, changes refused.",
		       json_is_true(json_object_get(json_object_get(st, "store"), "writable")) ? 1 : 0);
	}
	if (json_object_get(st, "capture")) {
		const char *iface = json_string_value(json_object_get(json_object_get(st, "capture"), "interface"));
		capture_metric(f, iface, "capture_received_packets_total", "Packets the kernel handed to the capture.",
			       number_at(st, "capture.received"));
		capture_metric(f, iface, "capture_dropped_packets_total", "Packets the kernel dropped: the capture buffer was full.",
			       number_at(st, "capture.dropped"));
		capture_metric(f, iface, "capture_if_dropped_packets_total", "Packets the interface dropped.",
			       number_at(st, "capture.if_dropped"));
	}
	if (json_object_get(st, "reload")) {
		metric(f, "last_reload_timestamp_seconds", "gauge", "When the last reload was tried (0: never).",
		       number_at(st, "reload.last"));
		metric(f, "last_reload_success", "gauge", "1 if the last reload was taken.", number_at(st, "reload.ok"));
	}
	if (json_object_get(json_object_get(st, "store"), "last_snapshot")) {
		metric(f, "last_snapshot_timestamp_seconds", "gauge", "When the last snapshot was tried (0: never).",
		       number_at(st, "store.last_snapshot.time"));
		metric(f, "last_snapshot_success", "gauge", "1 if the last snapshot was written.",
		       number_at(st, "store.last_snapshot.ok"));
	}
	json_t *lists = json_object_get(st, "lists");
	if (lists) {
		metric_by(f, lists, "list", "entries", "list_entries", "gauge", "Entries each list holds.");
		metric_by(f, lists, "list", "version", "list_version", "gauge", "Versions each list has taken.");
		metric_by(f, lists, "list", "loaded", "list_last_load_timestamp_seconds", "gauge",
			  "When each list last took a version (0: never).");
		metric_by(f, lists, "list", "ok", "list_last_load_success", "gauge",
			  "1 unless the list's last version was refused (it keeps its previous one).");
		metric_by(f, lists, "list", "refused", "list_refused_total", "counter",
			  "Versions each list refused (bad lines, min_entries, max_removed, unreadable).");
		metric_by(f, lists, "list", "passed", "list_passed_packets_total", "counter",
			  "Packets each pass list exempted (0 for the other lists).");
	}
	if (json_object_get(st, "inline")) {
		metric(f, "inline_packets_total", "counter", "Packets judged from the netfilter queues.",
		       number_at(st, "inline.packets"));
		metric(f, "inline_dropped_total", "counter", "Packets dropped: a match of a dropping list.",
		       number_at(st, "inline.dropped"));
		metric(f, "inline_accepted_total", "counter", "Packets accepted.", number_at(st, "inline.accepted"));
		metric(f, "inline_rejected_total", "counter", "Packets rejected: a match of a rejecting list.",
		       number_at(st, "inline.rejected"));
		metric(f, "inline_reject_unruled_total", "counter",
		       "Rejected packets that came back: no rule rejects [capture] reject_mark (dropped instead).",
		       number_at(st, "inline.reject_unruled"));
		metric(f, "inline_queue_dropped_total", "counter",
		       "Packets the kernel could not queue (full queue: accepted when fail-open).",
		       number_at(st, "inline.queue_dropped") + number_at(st, "inline.user_dropped"));
		metric(f, "inline_unjudged_total", "counter",
		       "Packets the kernel let through without a verdict while bloomd could not take them (fail-open).",
		       number_at(st, "inline.unjudged"));
		metric(f, "inline_verdict_seconds_p99", "gauge", "From reading a packet to its verdict, 99th percentile.",
		       number_at(st, "inline.verdict_ns.p99") / 1e9);
	}
	json_t *workers = json_object_get(st, "workers");
	if (workers) {
		size_t i;
		json_t *n;
		metric(f, "workers", "gauge", "Threads checking live packets ([capture] workers).", number_at(st, "workers.count"));
		metric_head(f, "worker_packets_total", "counter", "Packets each worker checked.");
		json_array_foreach(json_object_get(workers, "packets"), i, n)
			fprintf(f, "bloomd_worker_packets_total{worker=\"%zu\"} %.17g\n", i, json_number_value(n));
		metric(f, "workers_handoff_lost_total", "counter",
		       "Matched packets not reported: a worker's ring to the event loop was full.",
		       number_at(st, "workers.handoff_lost"));
	}
	if (json_object_get(st, "set_action")) {
		metric(f, "set_added_total", "counter", "Addresses added to the blocking nftables set ([action]).",
		       number_at(st, "set_action.added"));
		metric(f, "set_rate_limited_total", "counter", "Addresses not added: over [action] rate.",
		       number_at(st, "set_action.rate_limited"));
		metric(f, "set_errors_total", "counter", "Additions nft refused.", number_at(st, "set_action.errors"));
		metric(f, "set_blocked", "gauge", "Addresses in the blocking sets now.", number_at(st, "set_action.blocked"));
		metric(f, "set_unblocked_total", "counter", "Addresses lifted with bloomctl unblock.",
		       number_at(st, "set_action.unblocked"));
		metric(f, "set_restored_total", "counter",
		       "Times bloomd's table or addresses in it were gone and put back ([action] manage).",
		       number_at(st, "set_action.restored"));
	}
	if (json_object_get(st, "cluster")) {
		metric(f, "cluster_connected", "gauge", "1 while both Redis connections are up.",
		       number_at(st, "cluster.reader_connected") && number_at(st, "cluster.writer_connected") ? 1 : 0);
		metric(f, "cluster_lag_entries", "gauge", "Stream entries not yet applied here (counted up to 1000).",
		       number_at(st, "cluster.lag_entries"));
		metric(f, "cluster_lag_seconds", "gauge", "How far behind the stream's newest entry this node is.",
		       number_at(st, "cluster.lag_seconds"));
		metric(f, "cluster_applied_total", "counter", "Stream entries applied here.", number_at(st, "cluster.applied"));
		metric(f, "cluster_published_total", "counter", "Local changes the stream took.",
		       number_at(st, "cluster.published"));
		metric(f, "cluster_outbox", "gauge", "Local changes not yet in the stream.", number_at(st, "cluster.outbox"));
		metric(f, "cluster_apply_errors_total", "counter",
		       "Stream entries refused here, or (blocked) not applied yet and tried again.",
		       number_at(st, "cluster.apply_errors"));
		metric(f, "cluster_blocked", "gauge", "1 while an entry that could not be applied holds this node's place.",
		       string_at(st, "cluster.blocked_at", NULL));
		metric(f, "cluster_desync", "gauge", "1 while this node follows the stream again from its start.",
		       string_at(st, "cluster.state", "desync"));
		metric(f, "cluster_desyncs_total", "counter", "Times this node's cursor was past the stream's end.",
		       number_at(st, "cluster.desyncs"));
		metric(f, "events_redis_sent_total", "counter", "Events Redis took.", number_at(st, "cluster.events.sent"));
	}
	if (json_object_get(st, "events_to_fallback"))
		metric(f, "events_fallback_total", "counter",
		       "Events Redis could not take (down, or too many in flight): to the fallback file, or dropped.",
		       number_at(st, "events_to_fallback"));
	json_t *addr_filter = json_object_get(filters, "addresses");
	metric_head(f, "build_info", "gauge", "bloomd's version and the SIMD kernel its filters run.");
	fprintf(f, "bloomd_build_info{version=\"%s\",kernel=\"%s\"} 1\n", BLOOMD_VERSION,
		json_string_value(json_object_get(addr_filter, "kernel")) ? json_string_value(json_object_get(addr_filter, "kernel")) : "unknown");
	if (json_object_get(st, "control")) {
		metric(f, "control_clients", "gauge", "Control clients connected.", number_at(st, "control.clients"));
		metric(f, "control_rejected_total", "counter", "Control clients turned away or cut off.",
		       number_at(st, "control.rejected"));
	}
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
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
