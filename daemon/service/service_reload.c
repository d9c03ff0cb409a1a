/* service_reload.c - the daemon's configuration reloaded, outputs reopened, statistics. */
/* SPDX-License-Identifier: BSD-2-Clause */
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

/* The outputs reopen when where they go or how events look changes. */
static bool outputs_changed(const struct config *a, const struct config *b)
{
	return !config_same_string(a->events, b->events) || !config_same_string(a->pcap, b->pcap) ||
	       !config_same_string(a->sensor_name, b->sensor_name) || a->eve_extended != b->eve_extended ||
	       a->filemode != b->filemode;
}

static void restart_needed(void *ctx, const char *what)
{
	json_array_append_new(ctx, json_string(what));
}

/* A reload taken, its lists being read: told once both the rest and the lists are done. */
struct reloading {
	service_reloaded_cb done;
	void *ctx;
	json_t *restart;           /* the keys that wait for the next start */
	bool rebuild, lists_taken, rest_done;
	unsigned refused;
	struct service_lists_reloading lists;
};

static void reload_done(struct service *s, struct reloading *rl)
{
	if (!rl->lists_taken || !rl->rest_done)
		return;
	log_info("configuration reloaded%s", rl->refused ? "; some lists were refused and keep their previous versions" : "");
	json_t *result = json_pack("{s:b,s:o,s:o}", "rebuild", rl->rebuild, "restart_needed", rl->restart, "lists",
				   service_lists_json(s));
	int rc = rl->refused ? 1 : 0;
	s->upkeep.last_reload = time(NULL);
	s->upkeep.last_reload_ok = rc == 0;
	rl->done(s, rc, result, rl->ctx);
	free(rl);
}

static void lists_reloaded(struct service *s, unsigned refused, void *ctx)
{
	struct reloading *rl = ctx;

	rl->refused = refused;
	rl->lists_taken = true;
	reload_done(s, rl);
}

static void refused(struct service *s, json_t *problems, service_reloaded_cb done, void *ctx)
{
	s->upkeep.last_reload = time(NULL);
	s->upkeep.last_reload_ok = false;
	done(s, -1, problems, ctx);
}

void service_reload(struct service *s, service_reloaded_cb done, void *ctx)
{
	json_t *found = json_array(), *restart = json_array();
	struct config *fresh = config_load(s->cfg->path, collect_problem, found), *old = s->cfg;
	struct reloading *rl = calloc(1, sizeof(*rl));
	char err[512];

	if (fresh == NULL || rl == NULL) {
		if (rl == NULL)
			json_array_append_new(found, json_string("out of memory"));
		config_free(fresh);
		json_decref(restart);
		free(rl);
		refused(s, found, done, ctx);
		return;
	}
	config_keep_running(old, fresh, restart_needed, restart);
	/* Everything that can fail first; only then is anything of the running daemon changed. */
	struct events_options eo = service_events_options(fresh);
	struct events *ev = NULL;
	struct thresholds *rules = NULL;
	if (service_thresholds_load(fresh, &rules, collect_problem, found) < 0)
		goto refuse;
	if (lists_check_filter(fresh, err, sizeof(err)) < 0 ||
	    (outputs_changed(fresh, old) && (ev = events_open(&eo, err, sizeof(err))) == NULL)) {
		json_array_append_new(found, json_string(err));
		thresholds_free(rules);
		goto refuse;
	}
	json_decref(found);
	*rl = (struct reloading){ .done = done, .ctx = ctx, .restart = restart };
	struct thresholds *old_rules = s->engine.thresholds;
	engine_set_tables(&s->engine, s->engine.flows, rules);
	thresholds_free(old_rules);
	rl->rebuild = lists_refilter(s->matcher, fresh); /* checked above: it cannot fail */
	s->cfg = fresh;
	/* Before the old configuration goes: the lists point into it. Each list is taken or refused on its own. */
	service_lists_reload(s, fresh, &rl->lists, lists_reloaded, rl);
	service_fetch_configure(s, false); /* logged */
	log_setup(fresh->log_level, fresh->log_target, fresh->log_format);
	if (ev)
		use_events(s, ev);
	if ((fresh->alert_once_per_flow != old->alert_once_per_flow || fresh->flow_timeout != old->flow_timeout) &&
	    service_alert_policy(s) < 0)
		log_error("reload: out of memory for the flow table: alerts go on as they were");
	config_free(old);
	if (rl->rebuild)
		service_rebuild_settings_changed(s);
	for (size_t i = 0; i < json_array_size(restart); i++)
		log_warning("reload: %s takes effect at the next start", json_string_value(json_array_get(restart, i)));
	rl->rest_done = true;
	reload_done(s, rl);
	return;
refuse:
	config_keep_running(old, fresh, restart_needed, restart); /* swaps the running strings back */
	config_free(fresh);
	json_decref(restart);
	free(rl);
	refused(s, found, done, ctx);
}

/* A reload done: its reply to the client that asked (ctx: its waiter). */
static void reply_reloaded(struct service *s, int rc, json_t *result, void *ctx)
{
	uint64_t *waiter = ctx;
	json_t *reply = json_pack("{s:b}", "ok", rc == 0);

	if (reply && rc < 0) {
		json_object_set_new(reply, "error", json_string("reload: the configuration was refused; the running one is kept"));
		json_object_set(reply, "problems", result);
	} else if (reply) {
		if (rc > 0)
			json_object_set_new(reply, "error",
					    json_string("reload: the configuration was taken, but some lists were refused and keep their previous versions (see lists)"));
		json_object_update(reply, result);
	}
	json_decref(result);
	service_propagate(s); /* the lists reach the workers before the reply */
	service_reply_to(s, *waiter, reply);
	free(waiter);
}

int service_reload_for(struct service *s, uint64_t waiter)
{
	uint64_t *ctx = malloc(sizeof(*ctx));

	if (ctx == NULL)
		return -1;
	*ctx = waiter;
	service_reload(s, reply_reloaded, ctx);
	return 0;
}

json_t *service_stats(struct service *s)
{
	struct workers_totals t;
	json_t *o;

	service_packet_totals(s, &t);
	t.stats.event_errors += events_lost(s->events); /* handed back by Redis, and no fallback file took them */
	t.stats.pcap_skipped += events_pcap_skipped(s->events);
	o = stats_json(&t.stats, s->matcher, t.counters, t.hits_dropped);
	uint64_t flows, thresholds;
	engine_evicted(&s->engine, &flows, &thresholds);
	json_object_set_new(o, "alert_tables_evicted", json_pack("{s:I,s:I}", "flows", (json_int_t)flows, "thresholds",
								 (json_int_t)thresholds));
	service_upkeep_stats(s, o);
	json_object_set_new(o, "ttl_entries", json_integer((json_int_t)service_ttl_entries(s)));
	json_object_set_new(o, "rebuild", service_rebuild_stats(s));
	json_t *part = service_store_json(s);
	if (part)
		json_object_set_new(o, "store", part);
	service_control_stats(s, o);
	if ((part = service_action_xdp_stats(s)) != NULL)
		json_object_set_new(o, "xdp", part);
	service_action_stats(s, o);
	json_object_set_new(o, "reload", json_pack("{s:o,s:b}", "last", s->upkeep.last_reload ? json_integer((json_int_t)s->upkeep.last_reload) : json_null(),
							 "ok", s->upkeep.last_reload_ok));
	json_object_set_new(o, "lists", service_lists_stats(s, &t.stats));
	if ((part = service_fetches_stats(s)) != NULL)
		json_object_set_new(o, "fetches", part);
	if ((part = service_cluster_status(s)) != NULL)
		json_object_set_new(o, "cluster", part);
	if (s->cfg->events_redis)
		json_object_set_new(o, "events_to_fallback", json_integer((json_int_t)events_sink_refused(s->events)));
	service_capture_stats(s, o, &t);
	return o;
}

char *service_metrics(struct service *s)
{
	json_t *stats = service_stats(s);
	char *text = stats ? metrics_prometheus(stats) : NULL;

	json_decref(stats);
	return text;
}

#define FLOW_TABLE_PAIRS 65536 /* (flow, entry) pairs remembered: about 4 MiB */

int service_alert_policy(struct service *s)
{
	struct flows *old = s->engine.flows, *f = NULL;

	if (s->cfg->alert_once_per_flow && (f = flows_new(FLOW_TABLE_PAIRS, s->cfg->flow_timeout)) == NULL)
		return -1;
	engine_set_tables(&s->engine, f, s->engine.thresholds); /* a reload starts a fresh table: the timeout may have changed */
	flows_free(old);
	return 0;
}
