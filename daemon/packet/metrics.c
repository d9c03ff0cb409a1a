/* metrics.c - the statistics object as Prometheus text, from one registry of every metric. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "version.h"

/* How a metric's value is read from the statistics object. */
enum metric_read {
	READ_NUMBER,   /* the number (or true as 1) at path, plus the one at also if given, times scale if given */
	READ_ALL_TRUE, /* 1 if the values at path and also are both true or non-zero */
	READ_STRING,   /* 1 if path holds a string (equal to equals, if given) */
};

/*
 * One metric: its name (after "bloomd_"), type and help, and where its value
 * is in the statistics object. It is written when the object has section
 * (its first path component; NULL: always); a section that is there without
 * the path is a bug in this table, which BLOOMD_ASSERT catches in the tests.
 */
struct metric {
	const char *name, *type, *help;
	const char *section, *path, *also;
	enum metric_read read;
	const char *equals;
	double scale;
};

#define C "counter"
#define G "gauge"
#define M(name_, type_, help_, section_, path_) \
	{ .name = name_, .type = type_, .help = help_, .section = section_, .path = path_ }

static const struct metric METRICS[] = {
	M("packets_total", C, "Packets seen.", NULL, "packets"),
	M("bytes_total", C, "Bytes seen, as on the wire.", NULL, "bytes"),
	M("matched_packets_total", C, "Packets that matched at least one entry.", NULL, "matched_packets"),
	M("passed_packets_total", C, "Packets a pass list held: their passed addresses (or, pass = packet, the packet) exempt.", NULL,
	  "passed"),
	M("event_errors_total", C, "Events that could not be written.", NULL, "event_errors"),
	M("hits_dropped_total", C, "Matches past the per-event cap.", NULL, "hits_dropped"),
	M("alerts_suppressed_total", C,
	  "Matches not reported: the entry had alerted on the flow already ([output] alerts).", NULL,
	  "alerts_suppressed"),
	M("alerts_thresholded_total", C,
	  "Events not written: a threshold or suppress rule left them out ([output] threshold_file).", NULL,
	  "alerts_thresholded"),
	M("alerts_sender_verified_total", C,
	  "Alerts whose packet's sender a TCP handshake seen whole proved (alert.context.sender verified).", NULL,
	  "alert_senders.verified"),
	M("unverified_not_blocked_total", C,
	  "Pair and signature matches whose sender was not proven: no address put into [action] sets for them.", NULL,
	  "unverified_not_blocked"),
	M("handshakes_tracked", G, "TCP connections the handshake table holds.", NULL, "handshakes.tracked"),
	M("handshakes_verified_total", C, "TCP handshakes seen whole.", NULL, "handshakes.verified"),
	M("handshakes_conflicts_total", C, "Second, different answers to one SYN: one of them forged.", NULL,
	  "handshakes.conflicts"),
	M("handshakes_refused_total", C, "SYNs not tracked: the handshake table full of proven connections.", NULL,
	  "handshakes.refused"),
	M("alerts_flow_evictions_total", C,
	  "(flow, entry) pairs [output] alerts = once_per_flow forgot to make room (past 65,536): each may mean an alert more.",
	  "alert_tables_evicted", "alert_tables_evicted.flows"),
	M("alerts_threshold_evictions_total", C,
	  "Tracked addresses the threshold rules forgot to make room (past 65,536): each may mean an alert more.",
	  "alert_tables_evicted", "alert_tables_evicted.thresholds"),
	M("uptime_seconds", G, "Seconds since start.", "uptime_seconds", "uptime_seconds"),
	M("ttl_entries", G, "Entries that expire.", "ttl_entries", "ttl_entries"),
	M("rebuilds_total", C, "Rebuilds finished.", "rebuild", "rebuild.count"),
	M("rebuild_running", G, "1 while a rebuild runs.", "rebuild", "rebuild.running"),
	M("rebuild_optimised", G, "1 once the filters' offline rounds are in force (0 from a start until its background rebuild is done).", "rebuild", "rebuild.optimised"),
	M("store_generation", G, "Snapshots written.", "store", "store.generation"),
	M("journal_records", G, "Changes since the snapshot.", "store", "store.journal_records"),
	M("journal_bytes", G, "Journal size.", "store", "store.journal_bytes"),
	M("store_writable", G,
	  "1 while the state can be written; 0 after a failed write or fsync, changes refused.", "store",
	  "store.writable"),
	M("last_reload_timestamp_seconds", G, "When the last reload was tried (0: never).", "reload",
	  "reload.last"),
	M("last_reload_success", G, "1 if the last reload was taken.", "reload", "reload.ok"),
	M("last_snapshot_timestamp_seconds", G, "When the last snapshot was tried (0: never).", "store",
	  "store.last_snapshot.time"),
	M("last_snapshot_success", G, "1 if the last snapshot was written.", "store", "store.last_snapshot.ok"),
	M("xdp_passed_total", C, "Packets the XDP program passed to the stack.", "xdp", "xdp.passed"),
	M("xdp_dropped_total", C, "Packets the XDP program dropped: an address entry of a dropping list.", "xdp",
	  "xdp.dropped"),
	M("xdp_exempted_total", C, "Packets the XDP program passed for an entry of a pass list.", "xdp", "xdp.exempted"),
	M("xdp_events_suppressed_total", C, "XDP drops past [capture] xdp_events_rate: counted, no event.", "xdp",
	  "xdp.events_suppressed"),
	M("xdp_unparsed_total", C, "Frames the XDP program passed unread: cut short, or more than 8 VLAN tags.", "xdp",
	  "xdp.unparsed"),
	M("xdp_attached", G, "1 while the interface runs bloomd's XDP program (0: detached by another tool, or the interface gone).", "xdp",
	  "xdp.attached"),
	M("xdp_entries", G, "Entries the XDP program holds (dropping and pass lists' addresses, nets, pairs).", "xdp",
	  "xdp.entries"),
	M("inline_packets_total", C, "Packets judged from the netfilter queues.", "inline", "inline.packets"),
	M("inline_dropped_total", C, "Packets dropped: a match of a dropping list.", "inline",
	  "inline.dropped"),
	M("inline_accepted_total", C, "Packets accepted.", "inline", "inline.accepted"),
	M("inline_rejected_total", C, "Packets rejected: a match of a rejecting list.", "inline",
	  "inline.rejected"),
	M("inline_reject_unruled_total", C,
	  "Rejected packets that came back: no rule rejects [capture] reject_mark (dropped instead).", "inline",
	  "inline.reject_unruled"),
	{ .name = "inline_queue_dropped_total", .type = C,
	  .help = "Packets the kernel could not queue (full queue: accepted when fail-open).", .section = "inline",
	  .path = "inline.queue_dropped", .also = "inline.user_dropped" },
	M("inline_unjudged_total", C,
	  "Packets the kernel let through without a verdict while bloomd could not take them (fail-open).",
	  "inline", "inline.unjudged"),
		{ .name = "inline_verdict_seconds_p99", .type = G,
	  .help = "From reading a packet to its verdict, 99th percentile.", .section = "inline",
	  .path = "inline.verdict_ns.p99", .scale = 1e-9 },
	M("workers", G, "Threads checking live packets ([capture] workers).", "workers", "workers.count"),
	M("workers_handoff_lost_total", C,
	  "Matched packets not reported: a worker's ring to the event loop was full.", "workers",
	  "workers.handoff_lost"),
	M("set_added_total", C, "Addresses added to the blocking nftables set ([action]).", "set_action",
	  "set_action.added"),
	M("set_rate_limited_total", C, "Addresses not added: over [action] rate.", "set_action",
	  "set_action.rate_limited"),
	M("set_errors_total", C, "Additions nft refused.", "set_action", "set_action.errors"),
	M("set_blocked", G, "Addresses in the blocking sets now.", "set_action", "set_action.blocked"),
	M("set_unblocked_total", C, "Addresses lifted with bloomctl unblock.", "set_action",
	  "set_action.unblocked"),
	M("set_restored_total", C,
	  "Times bloomd's table or addresses in it were gone and put back ([action] manage).", "set_action",
	  "set_action.restored"),
	M("set_neighbour_commits_total", C,
	  "Other processes' nftables commits that left bloomd's table alone: a neighbour's, not tampering ([action] manage).",
	  "set_action", "set_action.neighbour_commits"),
	M("set_announcements_lost_total", C,
	  "Times the kernel's announcements of changes to bloomd's table overflowed its socket: every element told again.",
	  "set_action", "set_action.lost"),
	M("set_syncing", G, "1 while the lists' elements are on their way to the kernel's sets ([action] manage).",
	  "set_action", "set_action.syncing"),
	M("set_listed", G, "The lists' addresses and nets in the kernel's listed sets ([action] manage).", "set_action",
	  "set_action.listed"),
	M("set_passed", G, "The pass lists' addresses and nets in the kernel's passed sets (pass = address).", "set_action",
	  "set_action.passed"),
	M("set_exempt", G, "The pass lists' addresses and nets in the kernel's exempt sets (pass = packet).", "set_action",
	  "set_action.exempt"),
	M("set_hidden", G, "Listed nets left out of the kernel's sets: another net of theirs holds them.", "set_action",
	  "set_action.hidden"),
	M("set_protected_total", C,
	  "Additions passed over: the host's own address, loopback, or in [action] protect.", "set_action",
	  "set_action.protected"),
		{ .name = "cluster_connected", .type = G, .help = "1 while both Redis connections are up.",
	  .section = "cluster", .path = "cluster.reader_connected", .also = "cluster.writer_connected",
	  .read = READ_ALL_TRUE },
	M("cluster_lag_entries", G, "Stream entries not yet applied here (counted up to 1000).", "cluster",
	  "cluster.lag_entries"),
	M("cluster_lag_seconds", G, "How far behind the stream's newest entry this node is.", "cluster",
	  "cluster.lag_seconds"),
	M("cluster_applied_total", C, "Stream entries applied here.", "cluster", "cluster.applied"),
	M("cluster_published_total", C, "Local changes the stream took.", "cluster", "cluster.published"),
	M("cluster_outbox", G, "Local changes not yet in the stream.", "cluster", "cluster.outbox"),
	M("cluster_apply_errors_total", C,
	  "Stream entries refused here, or (blocked) not applied yet and tried again.", "cluster",
	  "cluster.apply_errors"),
	{ .name = "cluster_blocked", .type = G,
	  .help = "1 while an entry that could not be applied holds this node's place.", .section = "cluster",
	  .path = "cluster.blocked_at", .read = READ_STRING },
	{ .name = "cluster_desync", .type = G, .help = "1 while this node follows the stream again from its start.",
	  .section = "cluster", .path = "cluster.state", .read = READ_STRING, .equals = "desync" },
	{ .name = "cluster_rebuilding", .type = G,
	  .help = "1 while this node follows anew a stream Redis lost, having republished what it holds.",
	  .section = "cluster", .path = "cluster.state", .read = READ_STRING, .equals = "rebuilding" },
	{ .name = "cluster_stale", .type = G,
	  .help = "1 while this node's reader waits: cut off from Redis, or an entry or snapshot it cannot take.",
	  .section = "cluster", .path = "cluster.state", .read = READ_STRING, .equals = "stale" },
	M("cluster_divergent", G,
	  "1 while this node's digest differs from another node's at the same place in the stream.", "cluster",
	  "cluster.divergent"),
	M("cluster_divergences_total", C, "Times this node was found divergent (a stretch counts once).", "cluster",
	  "cluster.digest.divergences"),
	M("cluster_resent_total", C, "This node's acknowledged changes found lost from the stream and sent again.",
	  "cluster", "cluster.digest.resent"),
	M("cluster_desyncs_total", C, "Times this node's cursor was past the stream's end, or the stream was lost.",
	  "cluster", "cluster.desyncs"),
	M("cluster_rollbacks_refused_total", C, "Snapshots not taken: they lacked changes this node had applied.",
	  "cluster", "cluster.rollbacks_refused"),
	M("events_redis_sent_total", C, "Events Redis took.", "cluster", "cluster.events.sent"),
	M("events_fallback_total", C,
	  "Events Redis could not take (down, or too many in flight): to the fallback file, or dropped.",
	  "events_to_fallback", "events_to_fallback"),
	M("control_clients", G, "Control clients connected.", "control", "control.clients"),
	M("control_rejected_total", C, "Control clients turned away or cut off.", "control",
	  "control.rejected"),
};

/* A family: one line per member of an object, labelled with the member's name. */
struct metric_family {
	const char *name, *type, *help;
	const char *group;  /* the object (its members are the label's values) */
	const char *label;
	const char *field;  /* each member's value: its field, or (NULL) the member itself */
};

static const struct metric_family FAMILIES[] = {
	{ "parse_total", C, "Packets by parse result.", "parse", "result", NULL },
	{ "entries", G, "Entries stored, by kind.", "kinds", "kind", "entries" },
	{ "probes_total", C, "Filter probes, by kind.", "kinds", "kind", "probes" },
	{ "filter_positives_total", C, "Probes the filter said yes to, by kind.", "kinds", "kind", "filter_positives" },
	{ "confirmed_total", C, "Filter positives the exact store confirmed, by kind.", "kinds", "kind", "confirmed" },
	{ "unconfirmed_total", C, "Filter positives the exact store refuted (false positives), by kind.", "kinds",
	  "kind", "unconfirmed" },
	{ "filter_keys", G, "Keys in the filter (signature windows for signatures).", "filters", "filter", "keys" },
	{ "filter_bytes", G, "Bytes a scan reads.", "filters", "filter", "bytes" },
	{ "filter_fill_ratio", G, "Fraction of bits set.", "filters", "filter", "fill" },
	{ "filter_fpr_predicted", G, "False-positive rate predicted from the fill.", "filters", "filter",
	  "fpr_predicted" },
	{ "list_entries", G, "Entries each list holds.", "lists", "list", "entries" },
	{ "list_version", G, "Versions each list has taken.", "lists", "list", "version" },
	{ "list_last_load_timestamp_seconds", G, "When each list last took a version (0: never).", "lists", "list",
	  "loaded" },
	{ "list_last_load_success", G, "1 unless the list's last version was refused (it keeps its previous one).",
	  "lists", "list", "ok" },
	{ "list_refused_total", C, "Versions each list refused (bad lines, min_entries, max_removed, unreadable).",
	  "lists", "list", "refused" },
	{ "list_passed_packets_total", C, "Packets each pass list held (0 for the other lists).", "lists", "list",
	  "passed" },
	{ "list_matches_total", C, "Packets that matched an entry each list holds (not exempted by a pass list).",
	  "lists", "list", "matched" },
	{ "list_dropped_total", C, "Packets dropped or rejected inline that matched each dropping or rejecting list.",
	  "lists", "list", "dropped" },
	{ "set_dropped_packets_total", C, "Packets the kernel dropped, by set of bloomd's table (nft counters, since it was made).",
	  "set_dropped", "set", "packets" },
	{ "set_dropped_bytes_total", C, "Bytes the kernel dropped, by set of bloomd's table.", "set_dropped", "set", "bytes" },
	{ "list_blocked_total", C, "Addresses each list's matches put into the [action] sets.", "lists", "list",
	  "blocked" },
	{ "list_fetch_new_total", C, "New versions each list with a url fetched and took.", "fetches", "list", "new" },
	{ "list_fetch_not_modified_total", C, "Fetches each list's server answered 304 Not Modified.", "fetches", "list",
	  "not_modified" },
	{ "list_fetch_failed_total", C, "Fetches that failed (no answer, not 200 or 304, too large, timed out).",
	  "fetches", "list", "failed" },
	{ "list_fetch_refused_total", C, "Fetched versions each list refused (its guards).", "fetches", "list",
	  "refused" },
	{ "list_fetch_last_success_timestamp_seconds", G,
	  "When each list's server last answered with a version taken or 304 (0: never).", "fetches", "list",
	  "answered" },
	{ "list_fetch_stale", G, "1 while a list's last fetch failed or was refused: it enforces what it had.", "fetches",
	  "list", "stale" },
	{ "list_fetch_stale_since_timestamp_seconds", G, "When each list's fetches began to fail or be refused (0: current).",
	  "fetches", "list", "stale_since" },
	{ "list_fetch_refresh_seconds", G, "How often each list with a url is fetched (its refresh).", "fetches", "list",
	  "refresh" },
};

/* The capture's counters, labelled with its interface. */
static const struct metric CAPTURE[] = {
	M("capture_received_packets_total", C, "Packets the kernel handed to the capture.", "capture",
	  "capture.received"),
	M("capture_dropped_packets_total", C, "Packets the kernel dropped: the capture buffer was full.",
	  "capture", "capture.dropped"),
	M("capture_if_dropped_packets_total", C, "Packets the interface dropped.", "capture",
	  "capture.if_dropped"),
};

/* The process's own, under the names every Prometheus client library gives them (no bloomd_). */
static const struct metric PROCESS[] = {
	M("process_start_time_seconds", G, "Start time of the process since the epoch, in seconds.", "process",
	  "process.start_time_seconds"),
	M("process_cpu_seconds_total", C, "User and system CPU time spent, in seconds.", "process",
	  "process.cpu_seconds"),
	M("process_resident_memory_bytes", G, "Resident memory size, in bytes.", "process",
	  "process.resident_memory_bytes"),
	M("process_virtual_memory_bytes", G, "Virtual memory size, in bytes.", "process",
	  "process.virtual_memory_bytes"),
	M("process_open_fds", G, "Open file descriptors.", "process", "process.open_fds"),
	M("process_max_fds", G, "The most file descriptors the process may open.", "process", "process.max_fds"),
};

/* Histograms: at path, what stats_histogram_json makes (le, cumulative, count, sum). */
static const struct metric HISTOGRAMS[] = {
	M("inline_verdict_seconds", "histogram", "From reading a packet off a netfilter queue to its verdict.", "inline",
	  "inline.verdict_seconds"),
	M("cluster_apply_delay_seconds", "histogram",
	  "From a change's XADD by another node to its being applied here (the clocks' skew included).", "cluster",
	  "cluster.delay_seconds"),
};

#undef C
#undef G
#undef M

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

/* A number (true as 1, false and null as 0); the path must be there, as its section is. */
static double number_at(const json_t *o, const char *path)
{
	const json_t *v = value_at(o, path);

	BLOOMD_ASSERT(json_is_number(v) || json_is_boolean(v) || json_is_null(v));
	return json_is_true(v) ? 1 : json_number_value(v);
}

static double read_metric(const json_t *st, const struct metric *m)
{
	const char *text;

	switch (m->read) {
	case READ_ALL_TRUE:
		return number_at(st, m->path) && number_at(st, m->also) ? 1 : 0;
	case READ_STRING:
		text = json_string_value(value_at(st, m->path));
		BLOOMD_ASSERT(text || json_is_null(value_at(st, m->path)));
		return text && (m->equals == NULL || strcmp(text, m->equals) == 0) ? 1 : 0;
	case READ_NUMBER:
		break;
	}
	double v = number_at(st, m->path) + (m->also ? number_at(st, m->also) : 0);
	return m->scale ? v * m->scale : v;
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP bloomd_%s %s\n# TYPE bloomd_%s %s\n", name, help, name, type);
}

static void write_family(FILE *f, json_t *st, const struct metric_family *fam)
{
	json_t *group = json_object_get(st, fam->group), *value;
	const char *member;

	if (group == NULL)
		return;
	head(f, fam->name, fam->type, fam->help);
	json_object_foreach(group, member, value) {
		const json_t *v = fam->field ? json_object_get(value, fam->field) : value;
		BLOOMD_ASSERT(json_is_number(v) || json_is_boolean(v) || json_is_null(v));
		fprintf(f, "bloomd_%s{%s=\"%s\"} %.17g\n", fam->name, fam->label, member,
			json_is_true(v) ? 1 : json_number_value(v));
	}
}

static void write_process(FILE *f, const json_t *st)
{
	if (json_object_get(st, "process") == NULL)
		return;
	for (size_t i = 0; i < sizeof(PROCESS) / sizeof(PROCESS[0]); i++)
		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n", PROCESS[i].name, PROCESS[i].help, PROCESS[i].name,
			PROCESS[i].type, PROCESS[i].name, number_at(st, PROCESS[i].path));
}

static void write_histogram(FILE *f, const json_t *st, const struct metric *m)
{
	const json_t *h = value_at(st, m->path), *bounds = json_object_get(h, "le");
	const json_t *cumulative = json_object_get(h, "cumulative"), *bound;
	size_t i;

	BLOOMD_ASSERT(json_is_array(bounds) && json_is_array(cumulative));
	head(f, m->name, m->type, m->help);
	json_array_foreach(bounds, i, bound)
		fprintf(f, "bloomd_%s_bucket{le=\"%g\"} %.17g\n", m->name, json_number_value(bound),
			json_number_value(json_array_get(cumulative, i)));
	double count = json_number_value(json_object_get(h, "count"));
	fprintf(f, "bloomd_%s_bucket{le=\"+Inf\"} %.17g\n", m->name, count);
	fprintf(f, "bloomd_%s_sum %.17g\nbloomd_%s_count %.17g\n", m->name, json_number_value(json_object_get(h, "sum")),
		m->name, count);
}

/* The parts that are not one value a metric: the capture's by interface, each worker's, the build. */
static void write_labelled(FILE *f, const json_t *st)
{
	if (json_object_get(st, "capture")) {
		const char *iface = json_string_value(value_at(st, "capture.interface"));
		for (size_t i = 0; i < sizeof(CAPTURE) / sizeof(CAPTURE[0]); i++) {
			head(f, CAPTURE[i].name, CAPTURE[i].type, CAPTURE[i].help);
			fprintf(f, "bloomd_%s{interface=\"%s\"} %.17g\n", CAPTURE[i].name, iface ? iface : "",
				number_at(st, CAPTURE[i].path));
		}
	}
	if (json_object_get(st, "workers")) {
		size_t i;
		json_t *n;
		head(f, "worker_packets_total", "counter", "Packets each worker checked.");
		json_array_foreach(value_at(st, "workers.packets"), i, n)
			fprintf(f, "bloomd_worker_packets_total{worker=\"%zu\"} %.17g\n", i, json_number_value(n));
	}
	const char *kernel = json_string_value(value_at(st, "filters.addresses.kernel"));
	head(f, "build_info", "gauge", "bloomd's version and the SIMD kernel its filters run.");
	fprintf(f, "bloomd_build_info{version=\"%s\",kernel=\"%s\"} 1\n", BLOOMD_VERSION, kernel ? kernel : "unknown");
}

char *metrics_prometheus(json_t *st)
{
	char *text = NULL;
	size_t len;
	FILE *f = open_memstream(&text, &len);

	if (f == NULL)
		return NULL;
	for (size_t i = 0; i < sizeof(METRICS) / sizeof(METRICS[0]); i++) {
		const struct metric *m = &METRICS[i];
		if (m->section && json_object_get(st, m->section) == NULL)
			continue;
		head(f, m->name, m->type, m->help);
		fprintf(f, "bloomd_%s %.17g\n", m->name, read_metric(st, m));
	}
	for (size_t i = 0; i < sizeof(FAMILIES) / sizeof(FAMILIES[0]); i++)
		write_family(f, st, &FAMILIES[i]);
	for (size_t i = 0; i < sizeof(HISTOGRAMS) / sizeof(HISTOGRAMS[0]); i++)
		if (json_object_get(st, HISTOGRAMS[i].section))
			write_histogram(f, st, &HISTOGRAMS[i]);
	write_labelled(f, st);
	write_process(f, st);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}
