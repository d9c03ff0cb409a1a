/* service.c - the running daemon: its entries, start and stop, and the once-a-second housekeeping. */
#include "service.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "log.h"
#include "packet.h"
#include "service_internal.h"
#include "stats.h"

/* ---- entries ---- */

/* ---- housekeeping ---- */

static void expire_entries(struct service *s)
{
	static struct entry e;
	uint64_t now = service_now();

	uint32_t left;

	while (ttl_pop_expired(s->ttl, now, &e) == 1)
		service_del(s, &e, SERVICE_FROM_EXPIRY, &left, NULL, 0);
	/* A list's run out too; its kept version says when (expires=), so a restart does not bring them back. */
	lists_expire(&s->lists, s->matcher, now);
}

#define PROBLEM_REPORT_SECONDS 60

/*
 * Malformed packets and kernel drops are counted per packet, never logged
 * one by one: at most once a minute, one warning says how many there were.
 */
static void report_packet_problems(struct service *s)
{
	char text[768];
	size_t len = 0;
	time_t now = time(NULL);
	struct workers_totals t;

	if (now - s->problems_reported < PROBLEM_REPORT_SECONDS)
		return;
	service_packet_totals(s, &t);
	for (int st = PACKET_OK + 1; st < PACKET_STATUS_COUNT; st++) {
		uint64_t delta = t.stats.status[st] - s->problems_seen[st];
		s->problems_seen[st] = t.stats.status[st];
		if (delta == 0 || st == PACKET_NOT_IP || len >= sizeof(text) - 64)
			continue;
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%llu %s", len ? ", " : "",
					(unsigned long long)delta, packet_status_name((enum packet_status)st));
	}
	if (len) {
		log_warning("packets not checked in full since the last report: %s (see stats, parse)", text);
		s->problems_reported = now;
	}
	if (t.queues.reject_unruled > s->unruled_seen) {
		log_warning("%llu rejected packets came back to the queue and were dropped: no rule ahead of the queue "
			    "rule rejects mark 0x%x (meta mark 0x%x reject)",
			    (unsigned long long)(t.queues.reject_unruled - s->unruled_seen), s->cfg->reject_mark,
			    s->cfg->reject_mark);
		s->unruled_seen = t.queues.reject_unruled;
		s->problems_reported = now;
	}
	uint64_t event_errors = s->engine.stats.event_errors + events_lost(s->events);
	if (event_errors > s->event_errors_seen) {
		const char *why = events_error(s->events)[0] ? events_error(s->events) : s->engine.event_error;
		log_error("%llu events could not be written since the last report (see stats, event_errors): %s",
			  (unsigned long long)(event_errors - s->event_errors_seen), why);
		s->event_errors_seen = event_errors;
		s->problems_reported = now;
	}
	if (t.dropped + t.if_dropped > s->drops_seen) {
		log_warning("the kernel dropped %llu packets since the last report (more [capture] buffer_size?)",
			    (unsigned long long)(t.dropped + t.if_dropped - s->drops_seen));
		s->drops_seen = t.dropped + t.if_dropped;
		s->problems_reported = now;
	}
}

#define SAVE_RETRY_SECONDS 10

static void housekeeping_cb(evutil_socket_t fd, short what, void *arg)
{
	struct service *s = arg;
	char err[512];

	(void)fd;
	(void)what;
	expire_entries(s);
	service_sync(s, true); /* everysec's second; with always, the expiries */
	if (s->cluster)
		cluster_tick(s->cluster);
	if (s->set_action) {
		int rc = set_action_check(s->set_action, err, sizeof(err));
		if (rc < 0)
			log_limited(&s->block_errors_logged, 60, LOG_LEVEL_ERROR, "[action]: %s", err);
		else if (rc > 0)
			log_warning("[action]: table inet %s or addresses in it were gone (a flush, a firewall reload?): put back",
				    s->cfg->action.table);
	}
	report_packet_problems(s);
	if (s->cfg->auto_rebuild && s->rebuild == NULL &&
	    matcher_rebuild_wanted(s->matcher, s->cfg->fpr_target)) {
		log_info("rebuilding: the filters have outgrown their shape");
		if (service_rebuild(s, matcher_rounds(s->matcher), 0, err, sizeof(err)) < 0)
			log_error("auto-rebuild: %s", err);
	}
	if (s->journal && (journal_bytes(s->journal) > s->cfg->journal_max || s->journal_stale) &&
	    !journal_broken(s->journal) && service_save(s, err, sizeof(err)) < 0)
		log_error("snapshot: %s", err);
	if (s->lists_unkept && time(NULL) >= s->next_save_try) {
		service_lists_keep_again(s);
		s->next_save_try = time(NULL) + SAVE_RETRY_SECONDS;
	}
	/* A failed fsync: only a snapshot and a new journal make the state durable again. */
	if (s->journal && journal_broken(s->journal) && time(NULL) >= s->next_save_try) {
		if (service_save(s, err, sizeof(err)) < 0) {
			log_error("snapshot to replace the journal whose fsync failed: %s (tried again in %d s)", err,
				  SAVE_RETRY_SECONDS);
			s->next_save_try = time(NULL) + SAVE_RETRY_SECONDS;
		}
	}
}

/* ---- start and stop ---- */

static int service_emit_event(void *ctx, const struct event_packet *p, const struct match_found *hits, size_t n, char *err,
		       size_t errlen)
{
	return events_write(ctx, p, hits, n, err, errlen);
}

static int block_address(void *ctx, const uint8_t *addr, int family)
{
	struct service *s = ctx;
	char err[512] = "";
	int rc = set_action_block(s->set_action, addr, family, err, sizeof(err));

	if (rc < 0)
		log_limited(&s->block_errors_logged, 60, LOG_LEVEL_ERROR, "[action]: %s", err);
	else if (err[0])
		log_warning("%s", err);
	return rc;
}

/* [action]: the sets opened at load (service_action_open) wired to the engine and the loop. */
static int start_set_action(struct service *s)
{
	const struct action_config *a = &s->cfg->action;

	if (s->set_action == NULL)
		return 0;
	if (a->manage && (service_mirror_start(s) < 0 || service_record_changes(s) < 0))
		return -1;
	s->engine.block = block_address;
	s->engine.block_ctx = s;
	s->engine.block_side = a->block;
	s->engine.lists_in_kernel = a->manage;
	return 0;
}

struct blocked_listing {
	json_t *shown;
	uint64_t count;
};

static int list_blocked(void *ctx, const uint8_t *addr, int family, unsigned seconds_left)
{
	struct blocked_listing *bl = ctx;
	char text[64];

	if (bl->count++ < SERVICE_BLOCKED_SHOWN)
		json_array_append_new(bl->shown, json_pack("{s:s,s:i}", "address", entry_format_addr(addr, family, text, sizeof(text)),
							   "seconds_left", (int)seconds_left));
	return 0;
}

int service_blocked(struct service *s, json_t *reply, char *err, size_t errlen)
{
	struct blocked_listing bl = { json_array(), 0 };

	if (s->set_action == NULL) {
		json_decref(bl.shown);
		error_set(err, errlen, "no [action] sets: nothing is blocked by bloomd");
		return -1;
	}
	set_action_foreach(s->set_action, list_blocked, &bl);
	json_object_set_new(reply, "blocked", bl.shown);
	json_object_set_new(reply, "count", json_integer((json_int_t)bl.count));
	return 0;
}

int service_unblock(struct service *s, const uint8_t *addr, int family, char *err, size_t errlen)
{
	char text[64];

	if (s->set_action == NULL) {
		error_set(err, errlen, "no [action] sets: nothing is blocked by bloomd");
		return -1;
	}
	char names[256];
	int rc = set_action_unblock(s->set_action, addr, family, err, errlen);
	if (rc > 0)
		log_info("[action]: %s unblocked", entry_format_addr(addr, family, text, sizeof(text)));
	if (rc >= 0 && service_mirror_listing(s, addr, family, names, sizeof(names))) {
		error_set(err, errlen, "%s%s is listed (%s): the kernel drops it while a list holds it; delete the entry "
			  "instead (bloomctl match %s names it)", rc > 0 ? "unblocked, but " : "",
			  entry_format_addr(addr, family, text, sizeof(text)), names, text);
		return -1;
	}
	return rc;
}

static char *scrape(void *ctx)
{
	return service_metrics(ctx);
}

int service_start(struct service *s, struct event_base *base, const struct control_options *control)
{
	char err[512];
	struct timeval second = { .tv_sec = 1 };

	s->base = base;
	s->sources = json_array();
	struct events_options eo = service_events_options(s->cfg);
	s->events = events_open(&eo, err, sizeof(err));
	if (s->events == NULL || s->sources == NULL) {
		log_error("%s", s->events ? "out of memory" : err);
		return -1;
	}
	service_label_hits(s);
	service_cluster_events(s, s->events);
	s->engine.thresholds = s->thresholds;
	s->engine.matcher = s->matcher;
	s->engine.emit = service_emit_event;
	s->engine.emit_ctx = s->events;
	if (service_alert_policy(s) < 0) {
		log_error("out of memory for the flow table of [output] alerts = once_per_flow");
		return -1;
	}
	if (control) {
		s->control = control_open(base, control, err, sizeof(err));
		if (s->control == NULL) {
			log_error("%s", err);
			return -1;
		}
	}
	if (s->cfg->metrics_listen) {
		struct metrics_limits limits = { s->cfg->metrics_max_connections, s->cfg->metrics_timeout };
		s->metrics = metrics_http_open(base, s->cfg->metrics_listen, &limits, scrape, s, err, sizeof(err));
		if (s->metrics == NULL) {
			log_error("%s", err);
			return -1;
		}
		log_info("metrics for Prometheus on http://%s/metrics", s->cfg->metrics_listen);
	}
	if (service_cluster_start(s) < 0 || start_set_action(s) < 0)
		return -1;
	s->housekeeping = event_new(base, -1, EV_PERSIST, housekeeping_cb, s);
	if (s->housekeeping == NULL || event_add(s->housekeeping, &second) < 0)
		return -1;
	return service_fetch_configure(s, true);
}

void service_stop(struct service *s)
{
	char err[512];

	rebuild_cancel(s->rebuild);
	s->rebuild = NULL;
	service_fetch_stop(s); /* before the control socket: a replace waiting for a fetch is answered */
	control_close(s->control);
	s->control = NULL;
	service_slices_cancel(s); /* its entry is applied again at the next start */
	cluster_close(s->cluster); /* its cursor and outbox written first */
	s->cluster = NULL;
	if (s->base && s->journal && journal_records(s->journal) > 0 && service_save(s, err, sizeof(err)) < 0)
		log_error("final snapshot: %s (the journal keeps the changes)", err);
	if (s->journal)
		service_sync(s, true);
	journal_close(s->journal);
	s->journal = NULL;
	statedir_close(&s->state);
	service_stop_workers(s); /* first: the matches left in their rings are reported */
	service_stop_xdp(s);
	capture_free(s->replaying);
	capture_free(s->live);
	inline_close(s->inline_queue);
	s->inline_queue = NULL;
	service_mirror_stop(s);
	set_action_close(s->set_action);
	s->set_action = NULL;
	s->engine.block = NULL;
	if (s->current) {
		free(s->current->path);
		free(s->current);
	}
	while (s->queue) {
		struct replay_item *next = s->queue->next;
		if (s->queue->fd >= 0)
			close(s->queue->fd);
		free(s->queue->path);
		free(s->queue);
		s->queue = next;
	}
	if (s->housekeeping)
		event_free(s->housekeeping);
	events_close(s->events);
	flows_free(s->flows);
	metrics_http_close(s->metrics);
	s->metrics = NULL;
	thresholds_free(s->thresholds);
	s->thresholds = s->engine.thresholds = NULL;
	matcher_free(s->matcher);
	matcher_scratch_free(s->engine.scratch);
	ttl_free(s->ttl);
	json_decref(s->sources);
}

/* ---- what the rest of the daemon reads of it ---- */

struct service *service_new(void)
{
	struct service *s = calloc(1, sizeof(struct service));

	if (s && lists_init(&s->lists) < 0) {
		free(s);
		return NULL;
	}
	if (s) {
		s->state.fd = -1;
		s->last_reload_ok = true; /* the configuration of the start was taken: alerts on a failed reload stay quiet */
	}
	return s;
}

void service_free(struct service *s)
{
	if (s == NULL)
		return;
	service_stop(s);
	lists_free(&s->lists);
	config_free(s->cfg);
	free(s);
}

void service_counts(struct service *s, uint64_t *packets, uint64_t *matched)
{
	struct workers_totals t;

	service_packet_totals(s, &t);
	*packets = t.stats.packets;
	*matched = t.stats.matched_packets;
}

