/* engine.c - one packet through the daemon's path: parse, count, match, report. */
#include "engine.h"

#include "log.h"
#include "packet.h"

/* Keep the hits whose entry has not alerted on the packet's flow lately; their number. */
static size_t first_on_flow(struct engine *e, const struct packet_view *v, time_t now, size_t n)
{
	size_t kept = 0;

	for (size_t i = 0; i < n; i++) {
		const uint8_t *key;
		size_t len;
		matcher_hit_key(e->matcher, &e->hits[i], &key, &len);
		if (flows_first(e->flows, v, e->hits[i].kind, key, len, now))
			e->hits[kept++] = e->hits[i];
		else
			e->stats.alerts_suppressed++;
	}
	return kept;
}

bool engine_packet(struct engine *e, const struct capture_packet *p, const char *source, bool live)
{
	struct packet_view v;
	char err[256];

	packet_parse(p->link, p->frame, p->caplen, p->wirelen, &v);
	stats_count(&e->stats, p->wirelen, v.status);
	size_t n = matcher_check(e->matcher, &v, e->hits, MATCH_MAX_HITS);
	if (n == 0)
		return false;
	e->stats.matched_packets++;
	/* The verdict comes before any alert is left out: suppressing an alert never lets a packet through. */
	bool drop = e->inline_mode && events_any_drop(e->events, e->matcher, e->hits, n);
	if (e->flows && (n = first_on_flow(e, &v, p->ts.tv_sec, n)) == 0)
		return drop;
	if (e->thresholds) {
		struct event_label label;
		events_alert_label(e->events, e->matcher, e->hits, n, &label);
		if (!thresholds_pass(e->thresholds, 1, label.sid, &v, p->ts.tv_sec)) {
			e->stats.alerts_thresholded++;
			return drop;
		}
	}
	struct event_packet ep = {
		.ts = p->ts, .index = p->index, .link = p->link, .frame = p->frame,
		.caplen = p->caplen, .wirelen = p->wirelen, .view = &v,
		.filename = live ? NULL : source, .interface = live ? source : NULL, .dropped = drop,
	};
	if (events_write(e->events, &ep, e->matcher, e->hits, n, err, sizeof(err)) < 0) {
		e->stats.event_errors++;
		log_limited(&e->event_errors_logged, 60, LOG_LEVEL_ERROR, "%s", err);
	}
	return drop;
}
