/* engine.c - one packet through the daemon's path: parse, count, match, report. */
#include "engine.h"

#include <string.h>

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

/* Whether addr (alen bytes) lies in the net entry's prefix (key: length, then the network). */
static bool in_prefix(const uint8_t *key, const uint8_t *addr, size_t alen)
{
	unsigned bits = key[0], whole = bits / 8, rest = bits % 8;

	if (whole > alen || memcmp(key + 1, addr, whole) != 0)
		return false;
	return rest == 0 || ((key[1 + whole] ^ addr[whole]) & (0xff << (8 - rest))) == 0;
}

static void block_one(struct engine *e, const uint8_t *addr, int family, struct event_packet *ep)
{
	for (size_t i = 0; i < ep->nblocked; i++)
		if (memcmp(ep->blocked[i], addr, family == 4 ? 4 : 16) == 0)
			return;
	if (e->block(e->block_ctx, addr, family) > 0 && ep->nblocked < 2)
		ep->blocked[ep->nblocked++] = addr;
}

/* The addresses matches of dropping lists name go to the blocking set: which side, by kind. */
static void block_addresses(struct engine *e, const struct packet_view *v, size_t n, struct event_packet *ep)
{
	size_t alen = v->family == 4 ? 4 : 16;

	if (v->family == 0)
		return;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *key;
		size_t len;
		if (!events_hit_drops(e->events, e->matcher, &e->hits[i]))
			continue;
		matcher_hit_key(e->matcher, &e->hits[i], &key, &len);
		bool src = e->block_side & 1, dst = e->block_side & 2;
		if (e->hits[i].kind == ENTRY_ADDR) {
			src = memcmp(key, v->src, alen) == 0;
			dst = !src;
		} else if (e->hits[i].kind == ENTRY_NET) {
			src = in_prefix(key, v->src, alen);
			dst = !src && in_prefix(key, v->dst, alen);
		}
		if (src)
			block_one(e, v->src, v->family, ep);
		if (dst)
			block_one(e, v->dst, v->family, ep);
	}
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
	struct event_packet ep = {
		.ts = p->ts, .index = p->index, .link = p->link, .frame = p->frame,
		.caplen = p->caplen, .wirelen = p->wirelen, .view = &v,
		.filename = live ? NULL : source, .interface = live ? source : NULL, .dropped = drop,
	};
	if (e->block && live)
		block_addresses(e, &v, n, &ep);
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
	if (events_write(e->events, &ep, e->matcher, e->hits, n, err, sizeof(err)) < 0) {
		e->stats.event_errors++;
		log_limited(&e->event_errors_logged, 60, LOG_LEVEL_ERROR, "%s", err);
	}
	return drop;
}
