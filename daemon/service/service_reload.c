/* service_reload.c - the daemon's configuration reloaded, outputs reopened, statistics. */
#include "service.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "log.h"
#include "metrics.h"
#include "packet.h"
#include "service_internal.h"
#include "stats.h"

/* ---- reload, reopen, stats ---- */

/* The outputs ev in place of the running ones. */
static void use_events(struct service *s, struct events *ev)
{
	service_cluster_events(s, ev);
	s->engine.stats.pcap_skipped += events_pcap_skipped(s->events);
	events_close(s->events);
	s->events = s->engine.emit_ctx = ev;
}

int service_reopen(struct service *s, char *err, size_t errlen)
{
	struct events_options eo = service_events_options(s->cfg);
	struct events *ev = events_open(&eo, err, errlen);

	if (ev == NULL)
		return -1;
	use_events(s, ev);
	return 0;
}

static void collect_problem(void *ctx, const char *message)
{
	json_array_append_new(ctx, json_string(message));
}

static bool same_string(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

/* The outputs reopen when where they go or how events look changes. */
static bool outputs_changed(const struct config *a, const struct config *b)
{
	return !same_string(a->events, b->events) || !same_string(a->pcap, b->pcap) ||
	       !same_string(a->sensor_name, b->sensor_name) || a->eve_extended != b->eve_extended ||
	       a->filemode != b->filemode;
}

static void restart_needed(void *ctx, const char *what)
{
	json_array_append_new(ctx, json_string(what));
}

static int reload(struct service *s, json_t **problems)
{
	json_t *found = json_array(), *restart = json_array();
	struct config *fresh = config_load(s->cfg->path, collect_problem, found), *old = s->cfg;
	struct match_config mc;
	char err[512];
	int changed;

	*problems = found;
	if (fresh == NULL) {
		json_decref(restart);
		return -1;
	}
	config_keep_running(old, fresh, restart_needed, restart);
	/* Everything that can fail first; only then is anything of the running daemon changed. */
	mc = service_match_config(fresh);
	struct events_options eo = service_events_options(fresh);
	struct events *ev = NULL;
	struct thresholds *rules = NULL;
	if (service_thresholds_load(fresh, &rules, collect_problem, found) < 0)
		goto refuse;
	if (matcher_check_config(&mc, err, sizeof(err)) < 0 ||
	    (outputs_changed(fresh, old) && (ev = events_open(&eo, err, sizeof(err))) == NULL)) {
		json_array_append_new(found, json_string(err));
		thresholds_free(rules);
		goto refuse;
	}
	thresholds_free(s->thresholds);
	s->thresholds = s->engine.thresholds = rules;
	changed = matcher_reconfigure(s->matcher, &mc, NULL, 0); /* checked above: it cannot fail */
	s->cfg = fresh;
	/* Before the old configuration goes: the lists point into it. Each list is taken or refused on its own. */
	unsigned refused;
	service_lists_load(s, fresh, false, &refused); /* -1 only when starting */
	service_fetch_configure(s, false); /* logged */
	log_setup(fresh->log_level, fresh->log_target, fresh->log_format);
	if (ev)
		use_events(s, ev);
	if ((fresh->alert_once_per_flow != old->alert_once_per_flow || fresh->flow_timeout != old->flow_timeout) &&
	    service_alert_policy(s) < 0)
		log_error("reload: out of memory for the flow table: alerts go on as they were");
	config_free(old);
	/* A rebuild running now has the old settings: another follows it (service_state.c). */
	if (changed && s->rebuild)
		s->rebuild_again = true;
	else if (changed && service_rebuild(s, matcher_rounds(s->matcher), 0, err, sizeof(err)) < 0)
		log_error("rebuild after reload: %s", err);
	for (size_t i = 0; i < json_array_size(restart); i++)
		log_warning("reload: %s takes effect at the next start", json_string_value(json_array_get(restart, i)));
	log_info("configuration reloaded%s", refused ? "; some lists were refused and keep their previous versions" : "");
	json_decref(found);
	*problems = json_pack("{s:b,s:o,s:o}", "rebuild", changed > 0, "restart_needed", restart, "lists",
			      service_lists_json(s));
	return refused ? 1 : 0;
refuse:
	config_keep_running(old, fresh, restart_needed, restart); /* swaps the running strings back */
	config_free(fresh);
	json_decref(restart);
	return -1;
}

int service_reload(struct service *s, json_t **problems)
{
	int rc = reload(s, problems);

	s->last_reload = time(NULL);
	s->last_reload_ok = rc == 0;
	return rc;
}

void service_packet_totals(struct service *s, struct workers_totals *t)
{
	if (s->workers)
		workers_totals(s->workers, t);
	else
		memset(t, 0, sizeof(*t));
	stats_add(&t->stats, &s->engine.stats);
	for (int k = 0; k < MATCH_KINDS; k++)
		stats_add_counters(&t->counters[k], matcher_scratch_counters(s->engine.scratch, (enum entry_kind)k));
	t->hits_dropped += matcher_scratch_hits_dropped(s->engine.scratch);
	if (s->inline_queue)
		inline_stats(s->inline_queue, &t->queues);
	if (s->live)
		capture_stats(s->live, &t->received, &t->dropped, &t->if_dropped);
}

static json_t *workers_json(const struct service *s, const struct workers_totals *t)
{
	json_t *packets = json_array();

	for (unsigned i = 0; i < workers_count(s->workers) && i < 64; i++)
		json_array_append_new(packets, json_integer((json_int_t)t->packets[i]));
	return json_pack("{s:i,s:o,s:I}", "count", (int)workers_count(s->workers), "packets", packets, "handoff_lost",
			 (json_int_t)t->handoff_lost);
}

/* The process's own figures, from the kernel: what Prometheus's process_* metrics say. */
static json_t *process_json(time_t started)
{
	unsigned long long pages = 0, resident = 0;
	unsigned long long page = (unsigned long long)sysconf(_SC_PAGESIZE);
	FILE *statm = fopen("/proc/self/statm", "re");
	DIR *fds = opendir("/proc/self/fd");
	json_int_t open_fds = -1; /* less the directory's own descriptor, counted below */
	struct rusage ru = { 0 };
	struct rlimit rl = { 0 };

	if (statm == NULL || fscanf(statm, "%llu %llu", &pages, &resident) != 2)
		pages = resident = 0;
	if (statm)
		fclose(statm);
	for (struct dirent *d; fds && (d = readdir(fds)) != NULL;)
		open_fds += d->d_name[0] != '.';
	if (fds)
		closedir(fds);
	getrusage(RUSAGE_SELF, &ru);
	getrlimit(RLIMIT_NOFILE, &rl);
	double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	return json_pack("{s:I,s:f,s:I,s:I,s:I,s:I}", "start_time_seconds", (json_int_t)started, "cpu_seconds", cpu,
			 "resident_memory_bytes", (json_int_t)(resident * page), "virtual_memory_bytes",
			 (json_int_t)(pages * page), "open_fds", fds ? open_fds : 0, "max_fds",
			 (json_int_t)(rl.rlim_cur == RLIM_INFINITY ? INT64_MAX : rl.rlim_cur));
}

json_t *service_stats(struct service *s)
{
	struct workers_totals t;
	json_t *o;

	service_packet_totals(s, &t);
	t.stats.event_errors += events_lost(s->events); /* handed back by Redis, and no fallback file took them */
	t.stats.pcap_skipped += events_pcap_skipped(s->events);
	o = stats_json(&t.stats, s->matcher, t.counters, t.hits_dropped);
	json_object_set_new(o, "uptime_seconds", json_integer((json_int_t)(time(NULL) - s->started)));
	json_object_set_new(o, "process", process_json(s->started));
	json_object_set_new(o, "ttl_entries", json_integer((json_int_t)ttl_count(s->ttl)));
	json_object_set_new(o, "rebuild",
			    json_pack("{s:b,s:I,s:o}", "running", s->rebuild != NULL, "count",
				      (json_int_t)s->rebuilds, "last",
				      s->rebuilds ? service_rebuild_json(&s->last_rebuild) : json_null()));
	if (s->journal)
		json_object_set_new(o, "store",
				    json_pack("{s:s,s:I,s:I,s:I,s:s,s:b,s:s*}", "dir", s->cfg->store_dir, "generation",
					      (json_int_t)s->generation, "journal_records",
					      (json_int_t)journal_records(s->journal), "journal_bytes",
					      (json_int_t)journal_bytes(s->journal), "fsync",
					      config_fsync_name(s->cfg->fsync), "writable",
					      service_store_error(s)[0] == '\0', "error",
					      service_store_error(s)[0] ? service_store_error(s) : NULL));
	if (s->control)
		json_object_set_new(o, "control", json_pack("{s:i,s:I}", "clients", (int)control_clients(s->control),
							    "rejected", (json_int_t)control_rejected(s->control)));
	if (s->metrics) {
		struct metrics_http_stats ms;
		metrics_http_get_stats(s->metrics, &ms);
		json_object_set_new(o, "metrics_http", json_pack("{s:i,s:I,s:I,s:I,s:I}", "connections", (int)ms.open,
								 "scrapes", (json_int_t)ms.scrapes, "refused",
								 (json_int_t)ms.refused, "timed_out", (json_int_t)ms.timed_out,
								 "accept_errors", (json_int_t)ms.accept_errors));
	}
	if (s->workers)
		json_object_set_new(o, "workers", workers_json(s, &t));
	if (s->inline_queue || (s->workers && s->cfg->inline_mode)) {
		const struct inline_stats *is = &t.queues;
		json_object_set_new(o, "inline", json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:{s:I,s:I}}", "queue", s->queue_name,
							   "packets", (json_int_t)is->packets, "accepted", (json_int_t)is->accepted,
							   "dropped", (json_int_t)is->dropped, "rejected", (json_int_t)is->rejected,
							   "reject_unruled", (json_int_t)is->reject_unruled, "verdict_errors",
							   (json_int_t)is->verdict_errors, "lost", (json_int_t)is->lost,
							   "unjudged", (json_int_t)is->unjudged,
							   "queue_dropped", (json_int_t)is->queue_dropped, "user_dropped",
							   (json_int_t)is->user_dropped, "verdict_ns", "p50",
							   (json_int_t)is->verdict_ns_p50, "p99", (json_int_t)is->verdict_ns_p99));
		json_object_set_new(json_object_get(o, "inline"), "verdict_seconds", stats_histogram_json(&is->verdict_seconds));
	}
	if (s->xdp)
		json_object_set_new(o, "xdp", service_xdp_stats(s));
	if (s->set_action) {
		struct set_action_stats as;
		set_action_stats(s->set_action, &as);
		json_object_set_new(o, "set_action",
				    json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:b,s:I,s:I,s:I,s:I}", "added", (json_int_t)as.added,
					      "repeated", (json_int_t)as.repeated, "rate_limited", (json_int_t)as.rate_limited, "errors",
					      (json_int_t)as.errors, "unblocked", (json_int_t)as.unblocked, "restored",
					      (json_int_t)as.restored, "taken_over", (json_int_t)as.taken_over, "protected",
					      (json_int_t)as.protected, "blocked", (json_int_t)as.blocked, "managed", s->cfg->action.manage,
					      "listed", (json_int_t)as.listed, "passed", (json_int_t)as.passed, "exempt",
					      (json_int_t)as.exempt, "hidden", (json_int_t)as.hidden));
		if (s->cfg->action.manage)
			json_object_set_new(o, "set_dropped", set_action_dropped(s->set_action));
	}
	if (s->live || (s->workers && !s->cfg->inline_mode))
		json_object_set_new(o, "capture", json_pack("{s:s,s:I,s:I,s:I}", "interface",
							    s->live ? capture_name(s->live) : s->queue_name,
							    "received", (json_int_t)t.received, "dropped",
							    (json_int_t)t.dropped, "if_dropped", (json_int_t)t.if_dropped));
	json_object_set_new(o, "reload", json_pack("{s:o,s:b}", "last", s->last_reload ? json_integer((json_int_t)s->last_reload) : json_null(),
							 "ok", s->last_reload_ok));
	if (s->journal)
		json_object_set_new(json_object_get(o, "store"), "last_snapshot",
				    json_pack("{s:o,s:b}", "time", s->last_save ? json_integer((json_int_t)s->last_save) : json_null(),
					      "ok", s->last_save_ok));
	json_object_set_new(o, "lists", service_lists_stats(s, &t.stats));
	if (s->fetches)
		json_object_set_new(o, "fetches", service_fetches_stats(s));
	if (s->cluster)
		json_object_set_new(o, "cluster", service_cluster_status(s));
	if (s->cfg->events_redis)
		json_object_set_new(o, "events_to_fallback", json_integer((json_int_t)events_sink_refused(s->events)));
	json_object_set(o, "sources", s->sources);
	return o;
}

char *service_metrics(struct service *s)
{
	json_t *stats = service_stats(s);
	char *text = stats ? metrics_prometheus(stats) : NULL;

	json_decref(stats);
	return text;
}
