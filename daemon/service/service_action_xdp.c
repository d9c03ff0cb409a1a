/* service_action_xdp.c - mode = xdp: the XDP set kept equal to the dropping and pass lists, its events and counters. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "service.h"

#include <pcap/dlt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "action_xdp.h"
#include "arena.h"
#include "log.h"
#include "matcher_copy.h"
#include "packet.h"
#include "service_internal.h"

/*
 * The set holds each address, net and pair entry that a pass list holds
 * (action pass: its address is exempt; with pass = packet, the packet) or else a dropping or
 * rejecting list holds (drop: XDP cannot answer with a reset, so a reject
 * is a drop there). The matcher stays the truth; the set follows it, one
 * entry at a time from the log of changes, or whole after a rehold or a
 * reload. Signatures stay with the capture behind the program.
 */

static unsigned action_of(const struct service *s, uint32_t holders)
{
	static const unsigned action[] = {
		[ENGINE_ROLE_NONE] = 0, [ENGINE_ROLE_DROP] = XDP_ACTION_DROP, [ENGINE_ROLE_PASS] = XDP_ACTION_PASS,
		[ENGINE_ROLE_PASS_PACKET] = XDP_ACTION_PASS | XDP_ACTION_PASS_PACKET,
	};

	return action[engine_role(&s->engine, holders, NULL)];
}

static void put_or_remove(struct service *s, enum entry_kind kind, const uint8_t *key, size_t len, uint32_t holders)
{
	unsigned action = action_of(s, holders);
	char err[256];

	if (kind == ENTRY_SIG)
		return;
	if (action == 0)
		(void)action_xdp_remove(s->action_xdp.program, kind, key, len);
	else if (action_xdp_put(s->action_xdp.program, kind, key, len, action, err, sizeof(err)) < 0)
		log_limited(&s->action_xdp.errors_logged, 60, LOG_LEVEL_ERROR, "%s: dropped by the capture's alerts only", err);
}

static uint32_t holders_of(const struct service *s, enum entry_kind kind, const uint8_t *key, size_t len)
{
	struct entry e; /* not zeroed: 2 KiB a call, a million calls a resync */

	e.kind = kind;
	e.len = (uint16_t)len;
	memcpy(e.key, key, len);
	return matcher_holders(s->matcher, &e);
}

static void sync_entry(void *ctx, enum entry_kind kind, const uint8_t *key, size_t len)
{
	struct service *s = ctx;

	if (kind != ENTRY_SIG)
		put_or_remove(s, kind, key, len, holders_of(s, kind, key, len));
}

/* An entry with an action put in (those without are the sweep's, or gather_stale's, to remove). */
static int put_held(void *ctx, const struct entry *e, unsigned group, uint32_t holders)
{
	struct service *s = ctx;

	(void)group;
	if (action_of(s, holders) != 0)
		put_or_remove(s, e->kind, e->key, e->len, holders);
	return 0;
}

/* Keys the set holds that the matcher no longer gives an action: gathered, then removed (a removal may swap sets). */
struct stale {
	const struct service *s;
	struct stale_key {
		uint8_t kind, len, key[XDP_KEY_MAX];
	} *keys;
	size_t n, cap;
};

static int gather_stale(void *ctx, enum entry_kind kind, const uint8_t *key, size_t len, unsigned action)
{
	struct stale *st = ctx;

	(void)action;
	if (action_of(st->s, holders_of(st->s, kind, key, len)) != 0)
		return 0;
	if (array_grow((void **)&st->keys, &st->cap, st->n + 1, sizeof(*st->keys)) < 0)
		return -1;
	st->keys[st->n] = (struct stale_key){ .kind = (uint8_t)kind, .len = (uint8_t)len };
	memcpy(st->keys[st->n++].key, key, len);
	return 0;
}

/*
 * Every entry looked at again: the matcher's put in with their actions now,
 * the set's that were not removed by the sweep (or, when the set grew
 * meanwhile, those the matcher gives no action, found one by one).
 */
static void resync(struct service *s)
{
	struct stale st = { .s = s };
	bool swept = action_xdp_sweep_begin(s->action_xdp.program) == 0;

	matcher_foreach(s->matcher, 0, put_held, s);
	if (!swept || action_xdp_sweep_end(s->action_xdp.program) < 0) {
		if (action_xdp_foreach(s->action_xdp.program, gather_stale, &st) < 0)
			log_limited(&s->action_xdp.errors_logged, 60, LOG_LEVEL_ERROR, "XDP: out of memory looking for entries to remove");
		for (size_t i = 0; i < st.n; i++)
			action_xdp_remove(s->action_xdp.program, st.keys[i].kind, st.keys[i].key, st.keys[i].len);
		free(st.keys);
	}
}

/*
 * A rehold (a list's new version swapped in, a flush) names no entry: every
 * one is looked at again, but only when it moved a list whose entries the
 * set holds (an alert-only list's new version costs the set nothing).
 */
void service_action_xdp_sync(struct service *s)
{
	uint32_t reheld = 0, acting = s->engine.drop_holders | s->engine.reject_holders | s->engine.pass_holders;
	bool whole;
	const struct matcher_log *changes = service_followers_log(s, &whole);

	if (whole || matcher_log_entries(changes, sync_entry, s, &reheld) != 0 || (reheld & acting))
		resync(s);
}

/* A drop the program reported: an alert as inline's, with the frame's first bytes. */
static void on_xdp_event(void *ctx, const struct xdp_event *e)
{
	struct service *s = ctx;
	struct timespec mono, real;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	int64_t ago = (int64_t)mono.tv_sec * 1000000000 + mono.tv_nsec - (int64_t)e->ts_ns;
	int64_t at = (int64_t)real.tv_sec * 1000000000 + real.tv_nsec - (ago > 0 ? ago : 0);
	struct capture_packet p = {
		.link = DLT_EN10MB, .frame = e->frame, .caplen = e->caplen, .wirelen = e->wirelen,
		.ts = { .tv_sec = at / 1000000000, .tv_nsec = at % 1000000000 }, .index = 0,
	};
	struct packet_view v;
	const uint8_t *key = (const uint8_t *)e->key;
	struct matcher_found found = {
		.kind = e->kind, .key = key, .len = e->len,
		.holders = holders_of(s, e->kind, key, e->len) & ~MATCHER_HOLDER_STAGING,
	};

	packet_parse(p.link, p.frame, p.caplen, p.wirelen, &v);
	engine_report(&s->engine, &p, &v, &found, 1, 0, s->action_xdp.interface, true, VERDICT_DROP,
		      SENDER_NOT_TRACKED); /* dropped in the driver: its connection never reached the table */
	events_flush(s->events);
}

/* Entries the first program is sized for: half as many again as the dropping and pass lists' addresses. */
struct acting {
	const struct service *s;
	uint64_t n, n_long;        /* and of them, keys longer than XDP_KEY_INLINE */
};

static int count_acting(void *ctx, const struct entry *e, unsigned group, uint32_t holders)
{
	struct acting *a = ctx;
	bool acts = e->kind != ENTRY_SIG && action_of(a->s, holders) != 0;

	(void)group;
	a->n += acts;
	a->n_long += acts && e->len > XDP_KEY_INLINE;
	return 0;
}

int service_action_xdp_open(struct service *s, const char *interface)
{
	const struct config *c = s->cfg;
	struct action_xdp_options o = { .interface = interface, .attach = c->xdp_attach, .events_rate = c->xdp_events_rate,
				 .choices = c->choices, .bits_per_entry = c->bits_per_entry };
	struct acting acting = { s, 0, 0 };
	char err[512];

	snprintf(s->action_xdp.pin_path, sizeof(s->action_xdp.pin_path), "%s/%s", c->xdp_pin_dir, interface);
	o.pin_path = s->action_xdp.pin_path;
	o.pin = c->xdp_pin;
	matcher_foreach(s->matcher, 0, count_acting, &acting);
	o.capacity = acting.n + acting.n / 2; /* room to grow by half before a larger program is swapped in */
	o.long_capacity = acting.n_long + acting.n_long / 2;
	snprintf(s->action_xdp.interface, sizeof(s->action_xdp.interface), "%s", interface);
	if ((s->action_xdp.program = action_xdp_open(s->base, &o, on_xdp_event, s, err, sizeof(err))) == NULL) {
		log_error("%s", err);
		return -1;
	}
	resync(s);
	return 0;
}

int service_action_xdp_attach(struct service *s)
{
	char err[512], warn[512];
	struct action_xdp_counts n;

	if (action_xdp_attach(s->action_xdp.program, warn, sizeof(warn), err, sizeof(err)) < 0) {
		log_error("%s", err);
		return -1;
	}
	if (warn[0])
		log_warning("%s", warn);
	action_xdp_counts(s->action_xdp.program, &n);
	log_info("XDP on %s (%s%s): %llu address entries of dropping and pass lists dropped or exempted at the driver; "
		 "the rest captured behind it", s->action_xdp.interface, action_xdp_attach_name(s->action_xdp.program),
		 action_xdp_adopted(s->action_xdp.program) ? ", taken over from the link pinned there" : "", (unsigned long long)n.entries);
	if (s->cfg->xdp_pin)
		log_info("XDP: pinned at %s: the program stays attached, dropping, while bloomd is down (fail-closed; "
			 "rm %s to let traffic through)", s->action_xdp.pin_path, s->action_xdp.pin_path);
	return 0;
}

bool service_action_xdp_on(const struct service *s)
{
	return s->action_xdp.program != NULL;
}

void service_stop_xdp(struct service *s)
{
	action_xdp_close(s->action_xdp.program); /* the link closed: the kernel detaches the program (unless it is pinned) */
	s->action_xdp.program = NULL;
	service_follower_gone(s, SERVICE_FOLLOWS_XDP);
}

json_t *service_action_xdp_stats(const struct service *s)
{
	struct action_xdp_counts n;

	if (s->action_xdp.program == NULL)
		return NULL;
	action_xdp_counts(s->action_xdp.program, &n);
	return json_pack("{s:s,s:s,s:b,s:b,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "interface", s->action_xdp.interface, "mode",
			 action_xdp_attach_name(s->action_xdp.program), "attached", action_xdp_attached(s->action_xdp.program), "pinned", s->cfg->xdp_pin, "passed", (json_int_t)n.passed, "dropped", (json_int_t)n.dropped,
			 "exempted", (json_int_t)n.exempted, "events_suppressed", (json_int_t)n.events_suppressed,
			 "unparsed", (json_int_t)n.unparsed,
			 "entries", (json_int_t)n.entries, "capacity", (json_int_t)n.capacity, "generations",
			 (json_int_t)n.generations, "filter_bytes", (json_int_t)n.filter_bytes, "table_bytes",
			 (json_int_t)n.table_bytes);
}
