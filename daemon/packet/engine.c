/* engine.c - one packet through the daemon's path: parse, count, match, report. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "engine.h"

#include <string.h>

#include "packet.h"

/* Each hit's labels, once: the blocking set, the thresholds and the event read them. */
static void label_hits(struct engine *e, const struct matcher_found *found, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (e->label && e->label(e->label_ctx, found[i].kind, found[i].key, found[i].len, found[i].holders,
					 &e->labels[i]))
			continue;
		e->labels[i] = (struct event_label){ .list = "local", .signature = "bloomd list local",
						     .category = "local", .severity = 2, .sid = 9000000, .rev = 1 };
	}
}

/* The hit whose labels the alert carries: the most severe (the first on a tie). */
static size_t most_severe(const struct engine *e, size_t n)
{
	size_t top = 0;

	for (size_t i = 1; i < n; i++)
		if (e->labels[i].severity < e->labels[top].severity)
			top = i;
	return top;
}

/*
 * Keep the hits (in e->found, with their labels) whose entry has not alerted
 * on the packet's flow lately; their number.
 */
static size_t first_on_flow(struct engine *e, const struct packet_view *v, time_t now,
			    const struct matcher_found *found, size_t n)
{
	size_t kept = 0;

	for (size_t i = 0; i < n; i++) {
		if (flows_first(e->flows, v, found[i].kind, found[i].key, found[i].len, now)) {
			e->labels[kept] = e->labels[i];
			e->found[kept++] = found[i];
		} else {
			e->stats.alerts_suppressed++;
		}
	}
	return kept;
}

/* addr into the blocking set, for the lists asking (counted for each, when the set takes it). */
static void block_one(struct engine *e, const uint8_t *addr, int family, uint32_t asking, struct event_packet *ep)
{
	for (size_t i = 0; i < ep->nblocked; i++)
		if (memcmp(ep->blocked[i], addr, family == 4 ? 4 : 16) == 0)
			return;
	if (e->block(e->block_ctx, addr, family) <= 0)
		return;
	stats_by_list(e->stats.blocked_by, asking);
	if (ep->nblocked < 2)
		ep->blocked[ep->nblocked++] = addr;
}

enum engine_role engine_role(const struct engine *e, uint32_t holders, uint32_t *acting)
{
	uint32_t unused, *got = acting ? acting : &unused;

	holders &= ~MATCHER_HOLDER_STAGING;
	if ((*got = holders & e->pass_packet_holders))
		return ENGINE_ROLE_PASS_PACKET;
	if ((*got = holders & e->pass_holders))
		return ENGINE_ROLE_PASS;
	if ((*got = holders & (e->drop_holders | e->reject_holders)))
		return ENGINE_ROLE_DROP;
	return ENGINE_ROLE_NONE;
}

/* The sides of v an address or net hit holds (ENGINE_EXEMPT_*); a pair holds both, a signature neither. */
static unsigned sides_held(const struct matcher_found *f, const struct packet_view *v, size_t alen)
{
	switch (f->kind) {
	case ENTRY_ADDR:
		return (memcmp(f->key, v->src, alen) == 0 ? ENGINE_EXEMPT_SRC : 0) |
		       (memcmp(f->key, v->dst, alen) == 0 ? ENGINE_EXEMPT_DST : 0);
	case ENTRY_NET:
		return (entry_net_holds(f->key, v->src, alen) ? ENGINE_EXEMPT_SRC : 0) |
		       (entry_net_holds(f->key, v->dst, alen) ? ENGINE_EXEMPT_DST : 0);
	case ENTRY_PAIR:
		return ENGINE_EXEMPT_SRC | ENGINE_EXEMPT_DST;
	default:
		return 0;
	}
}

size_t engine_exempt(const struct packet_view *v, struct matcher_found *found, size_t n, uint32_t passing,
		     uint32_t pass_holders, uint32_t packet_holders, unsigned *exempt)
{
	size_t alen = v->family == 4 ? 4 : 16, kept = 0;

	*exempt = 0;
	if (passing & packet_holders)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!(found[i].holders & pass_holders))
			continue;
		if (found[i].kind == ENTRY_PAIR || found[i].kind == ENTRY_SIG)
			return 0; /* a flow or a payload passed: the packet is */
		*exempt |= sides_held(&found[i], v, alen);
	}
	for (size_t i = 0; i < n; i++) {
		unsigned sides = sides_held(&found[i], v, alen);
		bool on_exempt = sides && !(sides & ~*exempt); /* every side it is about: a pair, both */
		if (!(found[i].holders & pass_holders) && !on_exempt)
			found[kept++] = found[i];
	}
	return kept;
}

/* The addresses matches of dropping and rejecting lists name go to the blocking set: which side, by kind. */
static void block_addresses(struct engine *e, const struct packet_view *v, const struct matcher_found *found,
			    size_t n, unsigned exempt, struct event_packet *ep)
{
	size_t alen = v->family == 4 ? 4 : 16;

	if (v->family == 0)
		return;
	for (size_t i = 0; i < n; i++) {
		uint32_t asking = found[i].holders & (e->drop_holders | e->reject_holders);
		bool address = found[i].kind == ENTRY_ADDR || found[i].kind == ENTRY_NET;
		if (!asking || (address && e->lists_in_kernel))
			continue; /* an unban must reach the kernel: an address is not blocked beyond its entry */
		if (!address && ep->sender != SENDER_VERIFIED) {
			e->stats.unverified_not_blocked++; /* the addresses are the packet's: anyone may have forged them */
			continue;
		}
		bool src = e->block_side & 1, dst = e->block_side & 2;
		if (address) { /* the side it holds, the source first */
			unsigned sides = sides_held(&found[i], v, alen);
			src = sides & ENGINE_EXEMPT_SRC;
			dst = !src && (sides & ENGINE_EXEMPT_DST);
		}
		if (src && !(exempt & ENGINE_EXEMPT_SRC))
			block_one(e, v->src, v->family, asking, ep);
		if (dst && !(exempt & ENGINE_EXEMPT_DST))
			block_one(e, v->dst, v->family, asking, ep);
	}
}

void engine_report(struct engine *e, const struct capture_packet *p, const struct packet_view *v,
		   const struct matcher_found *found, size_t n, unsigned exempt, const char *source, bool live,
		   enum verdict verdict, enum sender_proof sender)
{
	char err[256];

	label_hits(e, found, n);
	struct event_packet ep = {
		.ts = p->ts, .index = p->index, .link = p->link, .frame = p->frame,
		.caplen = p->caplen, .wirelen = p->wirelen, .view = v,
		.filename = live ? NULL : source, .interface = live ? source : NULL, .verdict = verdict,
		.sender = sender, .labels = e->labels, .list_names = e->list_names,
	};
	if (e->block && live)
		block_addresses(e, v, found, n, exempt, &ep);
	if (e->flows) {
		if ((n = first_on_flow(e, v, p->ts.tv_sec, found, n)) == 0)
			return;
		found = e->found;
	}
	ep.top = most_severe(e, n);
	if (e->thresholds && !thresholds_pass(e->thresholds, 1, e->labels[ep.top].sid, v, p->ts.tv_sec)) {
		e->stats.alerts_thresholded++;
		return;
	}
	e->stats.alert_senders[sender < SENDER_PROOF_COUNT ? sender : SENDER_NOT_TRACKED]++;
	if (e->emit(e->emit_ctx, &ep, found, n, err, sizeof(err)) < 0) {
		e->stats.event_errors++;
		memcpy(e->event_error, err, sizeof(e->event_error));
	}
}

/* What the lists make of packet p, parsed as v, with its n hits; reported; its verdict. */
static enum verdict judge(struct engine *e, const struct capture_packet *p, const struct packet_view *v,
			  const struct matcher_hit *hits, size_t n, enum sender_proof sender, const char *source, bool live)
{
	if (n == 0 || (n = matcher_found(e->matcher, hits, n, e->found)) == 0)
		return VERDICT_ACCEPT;
	uint32_t held = engine_held(e->found, n), passing = held & e->pass_holders;
	unsigned exempt = 0;
	if (passing) {
		stats_passed(&e->stats, passing);
		if ((n = engine_exempt(v, e->found, n, passing, e->pass_holders, e->pass_packet_holders, &exempt)) == 0)
			return VERDICT_ACCEPT;
		held = engine_held(e->found, n);
	}
	/* The verdict comes before any alert is left out: suppressing an alert never lets a packet through. */
	enum verdict verdict = e->inline_mode ? engine_verdict(e->drop_holders, e->reject_holders, held) : VERDICT_ACCEPT;
	stats_matched(&e->stats, held, verdict == VERDICT_ACCEPT ? 0 : held & (e->drop_holders | e->reject_holders));
	engine_report(e, p, v, e->found, n, exempt, source, live, verdict, sender);
	return verdict;
}

void engine_check_batch(const struct matcher *m, struct matcher_scratch *sc, struct stats *stats,
			struct handshakes *hs, const struct capture_packet *p, size_t count, struct packet_batch *b)
{
	for (size_t i = 0; i < count; i++) {
		packet_parse(p[i].link, p[i].frame, p[i].caplen, p[i].wirelen, &b->views[i]);
		stats_count(stats, p[i].wirelen, b->views[i].status);
		b->conn_keys[i] = handshakes_prefetch(hs, &b->views[i]);
	}
	matcher_check_batch(m, sc, b->views, count, b->hits, b->nhits); /* the connections' slots arrive meanwhile */
	for (size_t i = 0; i < count; i++)
		b->senders[i] = (uint8_t)handshakes_see(hs, &b->views[i], b->conn_keys[i], p[i].ts.tv_sec);
}

void engine_batch(struct engine *e, const struct capture_packet *p, size_t count, const char *source, bool live,
		  enum verdict *verdicts)
{
	struct packet_batch *b = &e->batch;

	engine_check_batch(e->matcher, e->scratch, &e->stats, live ? e->handshakes : e->replay_handshakes, p, count, b);
	for (size_t i = 0; i < count; i++) {
		enum verdict verdict = judge(e, &p[i], &b->views[i], b->hits[i], b->nhits[i],
					     (enum sender_proof)b->senders[i], source, live);
		if (verdicts)
			verdicts[i] = verdict;
	}
}

void engine_evicted(const struct engine *e, uint64_t *flows, uint64_t *thresholds)
{
	*flows = e->evicted_before[0] + (e->flows ? flows_evicted(e->flows) : 0);
	*thresholds = e->evicted_before[1] + (e->thresholds ? thresholds_evicted(e->thresholds) : 0);
}

void engine_set_tables(struct engine *e, struct flows *flows, struct thresholds *thresholds)
{
	engine_evicted(e, &e->evicted_before[0], &e->evicted_before[1]);
	e->flows = flows;
	e->thresholds = thresholds;
}
