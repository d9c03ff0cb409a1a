/* service.c - the running daemon: made, started and stopped, and what the rest of the daemon reads of it. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "service.h"

#include <stdlib.h>

#include "log.h"
#include "matcher_copy.h"
#include "service_internal.h"

const struct config *service_config(const struct service *s)
{
	return s->cfg;
}

struct event_base *service_base(const struct service *s)
{
	return s->base;
}

/* ---- start and stop ---- */

static int service_emit_event(void *ctx, const struct event_packet *p, const struct matcher_found *hits, size_t n, char *err,
		       size_t errlen)
{
	return events_write(ctx, p, hits, n, err, errlen);
}

static char *scrape(void *ctx)
{
	return service_metrics(ctx);
}

/* The loop's TCP handshake tables ([capture] tcp_connections): -1 without memory. */
static int open_handshakes(struct service *s)
{
	unsigned n = s->cfg->tcp_connections;
	struct handshakes_stats *st = &s->engine.stats.handshakes;

	if (n == 0)
		return 0;
	/* A live table only where the loop judges live packets: workers keep tables of their own. */
	if (s->cfg->workers <= 1 && (s->engine.handshakes = handshakes_new(n, HANDSHAKE_IDLE_SECONDS, st)) == NULL)
		return -1;
	return (s->engine.replay_handshakes = handshakes_new(n, HANDSHAKE_IDLE_SECONDS, st)) ? 0 : -1;
}

int service_start(struct service *s, struct event_base *base, const struct control_options *control)
{
	char err[512];

	s->base = base;
	if (open_handshakes(s) < 0) {
		log_error("out of memory for [capture] tcp_connections = %u", s->cfg->tcp_connections);
		return -1;
	}
	struct events_options eo = service_events_options(s->cfg);
	s->events = events_open(&eo, err, sizeof(err));
	if (s->events == NULL || service_capture_start(s) < 0) {
		log_error("%s", s->events ? "out of memory" : err);
		return -1;
	}
	service_label_hits(s);
	service_cluster_events(s, s->events);
	s->engine.matcher = s->matcher;
	s->engine.emit = service_emit_event;
	s->engine.emit_ctx = s->events;
	if (service_alert_policy(s) < 0) {
		log_error("out of memory for the flow table of [output] alerts = once_per_flow");
		return -1;
	}
	if (service_control_open(s, control, scrape) < 0)
		return -1;
	if (service_cluster_start(s) < 0 || service_action_start(s) < 0 || service_upkeep_start(s) < 0)
		return -1;
	return service_fetch_configure(s, true);
}

static void service_stop(struct service *s)
{
	service_rebuild_cancel(s);
	service_slices_cancel(s); /* first: a file's version is refused, its waiter told; the stream's is applied again at the next start */
	service_fetch_stop(s); /* before the control socket: a replace waiting for a fetch is answered */
	service_control_close(s);
	service_cluster_stop(s);
	service_state_close(s);
	service_stop_workers(s); /* first: the matches left in their rings are reported */
	service_stop_xdp(s);
	service_capture_close(s);
	service_action_stop(s);
	service_upkeep_stop(s);
	events_close(s->events);
	s->events = NULL;
	flows_free(s->engine.flows);
	s->engine.flows = NULL;
	thresholds_free(s->engine.thresholds);
	s->engine.thresholds = NULL;
	handshakes_free(s->engine.handshakes);
	handshakes_free(s->engine.replay_handshakes);
	s->engine.handshakes = s->engine.replay_handshakes = NULL;
	matcher_free(s->matcher);
	s->matcher = NULL;
	matcher_scratch_free(s->engine.scratch);
	s->engine.scratch = NULL;
	service_state_free(s);
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
		service_state_init(s);
		service_upkeep_init(s);
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

bool service_lookup(const struct service *s, const struct entry *e, bool *filter_says, uint64_t *expiry,
		    uint32_t *holders)
{
	*expiry = service_expiry(s, e);
	*holders = matcher_holders(s->matcher, e) & ~MATCHER_HOLDER_STAGING;
	return matcher_lookup(s->matcher, e, filter_says) && *holders; /* one being staged is no one's yet */
}

struct held_only {
	matcher_entry_cb cb;
	void *ctx;
};

static int if_held(void *ctx, const struct entry *e, unsigned group, uint32_t holders)
{
	const struct held_only *h = ctx;

	holders &= ~MATCHER_HOLDER_STAGING;
	return holders ? h->cb(h->ctx, e, group, holders) : 0;
}

void service_covering(const struct service *s, const uint8_t *addr, size_t alen, matcher_entry_cb cb,
		      void *ctx)
{
	struct held_only h = { cb, ctx };

	matcher_covering(s->matcher, addr, alen, if_held, &h); /* one being staged is no one's yet */
}

void service_walk(const struct service *s, enum entry_kind only, uint32_t held, struct matcher_cursor *cur,
		  size_t max, matcher_entry_cb cb, void *ctx)
{
	matcher_walk(s->matcher, only, held, cur, max, cb, ctx);
}

uint64_t service_entries(const struct service *s)
{
	return matcher_entries_all(s->matcher);
}

unsigned service_rounds(const struct service *s)
{
	return matcher_rounds(s->matcher);
}

int service_run_threads(struct service *s)
{
	if (service_run_workers(s) < 0)
		return -1;
	service_rebuild_optimise(s);
	return 0;
}
