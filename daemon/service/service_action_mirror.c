/* service_action_mirror.c - [action] manage: bloomd's nftables table kept equal to the dropping and pass lists. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "service.h"

#include <string.h>

#include "action_mirror.h"
#include "log.h"
#include "matcher_copy.h"
#include "service_internal.h"

#define REREAD_A_SLICE 4096        /* entries of a list read again in a slice of the settle */

/*
 * Each address and net entry that a pass list holds goes into the passed
 * sets (pass = address: never judged bad; a listed net that holds it does
 * not drop it) or the exempt sets (pass = packet: a packet from or to it is
 * let through); one that a dropping or rejecting list holds goes into the
 * listed sets, dropped from and to. Each element lasts as long as its entry
 * (the latest time among the lists of that action that hold it; none if
 * one holds it for good). The matcher stays the truth; the sets follow it
 * from the log of changes, or whole (a sweep) after a rehold or a reload.
 */

/* The set an entry's holders put it in (-1: none), the holders that do in *acting. */
static int kind_of(const struct service *s, uint32_t holders, uint32_t *acting)
{
	static const int kind[] = {
		[ENGINE_ROLE_NONE] = -1, [ENGINE_ROLE_DROP] = SET_MIRROR_LISTED, [ENGINE_ROLE_PASS] = SET_MIRROR_PASSED,
		[ENGINE_ROLE_PASS_PACKET] = SET_MIRROR_EXEMPT,
	};

	return kind[engine_role(&s->engine, holders, acting)];
}

/* When the last of the acting lists lets e go (Unix seconds), or 0 if one never does. */
static uint64_t until_of(const struct service *s, const struct entry *e, uint32_t acting)
{
	uint64_t until = 0;

	for (unsigned i = 0; i < LISTS_SLOTS; i++) {
		if (!(acting & (1u << i)))
			continue;
		uint64_t t = i == 0 ? service_expiry(s, e) : lists_expiry(&s->lists, i, e);
		if (t == 0)
			return 0;
		until = t > until ? t : until;
	}
	return until;
}

/* e's address (or network) and prefix length; false for entries the sets do not hold (pairs, signatures). */
static bool address_of(const struct entry *e, const uint8_t **addr, int *family, unsigned *prefix)
{
	if (e->kind == ENTRY_ADDR && (e->len == 4 || e->len == 16)) {
		*addr = e->key;
		*family = e->len == 4 ? 4 : 6;
		*prefix = e->len * 8u;
		return true;
	}
	if (e->kind == ENTRY_NET && (e->len == 5 || e->len == 17)) {
		*addr = e->key + 1;
		*family = e->len == 5 ? 4 : 6;
		*prefix = e->key[0];
		return true;
	}
	return false;
}

/* e put into the set its holders give it now, and out of the others. -1 without memory. */
static int mirror_entry(struct service *s, struct action_mirror *m, const struct entry *e, uint32_t holders)
{
	const uint8_t *addr;
	int family;
	unsigned prefix;
	uint32_t acting;

	if (!address_of(e, &addr, &family, &prefix))
		return 0;
	int kind = kind_of(s, holders, &acting);
	for (int k = 0; k < SET_MIRROR_KINDS; k++)
		if (k != kind)
			action_mirror_drop(m, k, addr, family, prefix);
	return kind < 0 ? 0 : action_mirror_put(m, kind, addr, family, prefix, until_of(s, e, acting));
}

struct walk {
	struct service *s;
	struct action_mirror *m;
};

static int put_held(void *ctx, const struct entry *e, unsigned group, uint32_t holders)
{
	struct walk *w = ctx;

	(void)group;
	return e->kind == ENTRY_SIG || e->kind == ENTRY_PAIR ? 0 : mirror_entry(w->s, w->m, e, holders);
}

/* Every entry looked at: what is not put is dropped. -1 without memory. */
static int sweep(struct service *s, struct action_mirror *m)
{
	struct walk w = { s, m };

	action_mirror_sweep_begin(m);
	int rc = matcher_foreach(s->matcher, 0, put_held, &w);
	action_mirror_sweep_end(m);
	return rc;
}

/* Every address and net entry of the lists told to the table before it is made (set_action_options' fill). */
static int service_action_mirror_fill(void *ctx, struct action_mirror *m)
{
	struct service *s = ctx;

	s->action.filled_after = service_followers_all_asked(s);
	return sweep(s, m);
}

static void mirror_changed(void *ctx, enum entry_kind kind, const uint8_t *key, size_t len)
{
	struct walk *w = ctx;
	struct entry e;

	if (kind != ENTRY_ADDR && kind != ENTRY_NET)
		return;
	e.kind = kind;
	e.len = (uint16_t)len;
	memcpy(e.key, key, len);
	if (mirror_entry(w->s, w->m, &e, matcher_holders(w->s->matcher, &e)) < 0)
		w->s->action.mirror_stale = true;
}

static int put_reread(void *ctx, const struct entry *e, unsigned group, uint32_t holders)
{
	struct walk *w = ctx;

	if (put_held(ctx, e, group, holders) < 0)
		w->s->action.mirror_stale = true; /* no memory: the next propagation looks at every entry */
	return 0;
}

/* Some of the entries of the lists being read again (service_action_mirror_taken), told to the table. */
static void reread_some(struct service *s)
{
	struct walk w = { s, action_lists_mirror(s->action.sets) };

	if (s->action.rereading == 0)
		return;
	matcher_walk(s->matcher, 0, s->action.rereading, &s->action.reread_at, REREAD_A_SLICE, put_reread, &w);
	if (s->action.reread_at.part == 2)
		s->action.rereading = 0;
}

static void settle_after(struct service *s, const struct timeval *after)
{
	if (event_add(s->action.settler, after) < 0)
		log_error("action: cannot schedule the settle's next slice: out of memory");
}

/* A slice of the settle; the next one is asked for while the kernel is not yet in step (a second later after an error). */
static void settle_slice(struct service *s)
{
	static const struct timeval now = { 0, 0 }, after_error = { 1, 0 };
	char err[512];

	reread_some(s);
	const struct action_mirror *m = action_lists_mirror(s->action.sets);
	const char *first = m ? action_mirror_first_protected(m) : NULL;
	if (first && !s->action.protected_said) {
		log_warning("[action]: a list holds %s, the host's own, loopback, its resolver, gateway or peer, or in [action] protect: "
			    "never dropped (counted: set_action.protected_listed)", first);
		s->action.protected_said = true;
	}
	int rc = action_settle(s->action.sets, err, sizeof(err));
	if (rc < 0)
		log_limited(&s->action.errors_logged, 60, LOG_LEVEL_ERROR, "[action]: the lists' elements: %s", err);
	if ((rc != 0 || s->action.rereading) && s->action.settler) /* after what else is ready: the control socket, capture */
		settle_after(s, rc < 0 ? &after_error : &now);
}

static void on_settle(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	settle_slice(arg);
}

void service_action_mirror_sync(struct service *s)
{
	struct action_mirror *m = s->action.sets ? action_lists_mirror(s->action.sets) : NULL;
	struct walk w = { s, m };
	uint32_t reheld = 0;
	uint32_t acting = s->engine.drop_holders | s->engine.reject_holders | s->engine.pass_holders;

	if (m == NULL)
		return;
	bool whole;
	const struct matcher_log *changes = service_followers_log(s, &whole);
	/* Filled whole since the lists' actions last changed (the start): that was the look at every entry. */
	whole = (whole && s->action.filled_after != service_followers_all_asked(s)) || s->action.mirror_stale;
	s->action.filled_after = UINT64_MAX;
	s->action.mirror_stale = false;
	if (whole || matcher_log_entries(changes, mirror_changed, &w, &reheld) != 0 || (reheld & acting))
		s->action.mirror_stale = sweep(s, m) < 0;
	if (s->action.settler == NULL || !event_pending(s->action.settler, EV_TIMEOUT, NULL))
		settle_slice(s); /* else the slice already asked for settles these too */
}

static void on_watch(evutil_socket_t fd, short what, void *arg)
{
	struct service *s = arg;
	char err[512];

	(void)fd;
	(void)what;
	int rc = action_watched(s->action.sets, err, sizeof(err));
	if (rc < 0)
		log_limited(&s->action.errors_logged, 60, LOG_LEVEL_ERROR, "[action]: %s", err);
	else if (rc > 0)
		log_warning("[action]: table inet %s changed by another process (a rule, an element, a flush?): put back",
			    s->cfg->action.table);
	service_action_mirror_settle(s);
}

void service_action_mirror_settle(struct service *s)
{
	static const struct timeval now = { 0, 0 };

	if (s->action.settler && service_action_mirror_syncing(s) && !event_pending(s->action.settler, EV_TIMEOUT, NULL))
		settle_after(s, &now);
}

/* The host of a "tcp://HOST:PORT", "HOST:PORT", "[V6]:PORT" or "http://HOST:PORT/..." appended to out (a comma first). */
static void append_host(char *out, size_t outlen, const char *where)
{
	const char *at = strstr(where, "://");
	size_t used = strlen(out), len;

	if (strncmp(where, "unix:", 5) == 0)
		return;
	at = at ? at + 3 : where;
	const char *credentials = memchr(at, '@', strcspn(at, "/")); /* user:pass@ */
	if (credentials)
		at = credentials + 1;
	if (*at == '[')
		len = strcspn(++at, "]");
	else
		len = strcspn(at, ":/");
	if (len && used + len + 2 < outlen)
		snprintf(out + used, outlen - used, "%s%.*s", used ? "," : "", (int)len, at);
}

/* The peers bloomd talks to: Redis, the sentinels, the hosts of the lists' URLs (CrowdSec's LAPI among them). */
static void peer_hosts(const struct config *cfg, char *out, size_t outlen)
{
	out[0] = '\0';
	if (cfg->cluster.redis)
		append_host(out, outlen, cfg->cluster.redis);
	for (const char *at = cfg->cluster.sentinels ? cfg->cluster.sentinels : ""; *at;) {
		char one[300];
		size_t len = strcspn(at, ",");
		snprintf(one, sizeof(one), "%.*s", (int)(len < sizeof(one) ? len : sizeof(one) - 1), at);
		append_host(out, outlen, one);
		at += len + (at[len] == ',');
	}
	for (size_t i = 0; i < cfg->nlists; i++)
		if (cfg->lists[i].url)
			append_host(out, outlen, cfg->lists[i].url);
}

int service_action_open(struct service *s)
{
	const struct action_config *a = &s->cfg->action;
	char peers[2048];
	struct action_options o = { .set4 = a->set4, .set6 = a->set6, .timeout = a->timeout, .rate = a->rate,
					.table = a->manage ? a->table : NULL, .priority = a->priority,
					.remove_at_stop = a->remove_at_stop, .protect = a->protect,
					.protect_infrastructure = a->protect_infrastructure, .peers = peers,
					.fill = a->manage ? service_action_mirror_fill : NULL, .fill_ctx = s };
	struct action_stats st;
	char err[512];

	if (a->set4 == NULL && a->set6 == NULL)
		return 0;
	peer_hosts(s->cfg, peers, sizeof(peers));
	err[0] = '\0';
	if ((s->action.sets = action_open(&o, err, sizeof(err))) == NULL) {
		bool denied = strstr(err, "Operation not permitted") != NULL;
		log_error("%s%s", err,
			  denied ? " (bloomd needs CAP_NET_ADMIN)"
			  : a->manage ? "" : " (the set must be made beforehand, with flags timeout)");
		return -1;
	}
	if (err[0])
		log_error("[action]: nft refused some of the lists' elements, the rest are in: %s", err);
	action_stats(s->action.sets, &st);
	if (a->manage)
		log_info("[action]: table inet %s made, with the lists' elements (%llu listed, %llu passed, %llu exempt) "
			 "and %llu addresses blocked on matches taken over from the table a bloomd before left",
			 a->table, (unsigned long long)st.listed, (unsigned long long)st.passed,
			 (unsigned long long)st.exempt, (unsigned long long)st.taken_over);
	return 0;
}

int service_action_mirror_start(struct service *s)
{
	int fd = action_watch_fd(s->action.sets);

	if (fd < 0)
		return 0;
	s->action.table_watch = event_new(s->base, fd, EV_READ | EV_PERSIST, on_watch, s);
	s->action.settler = evtimer_new(s->base, on_settle, s);
	if (s->action.table_watch == NULL || s->action.settler == NULL || event_add(s->action.table_watch, NULL) < 0) {
		log_error("[action]: cannot watch table inet %s", s->cfg->action.table);
		return -1;
	}
	return 0;
}

void service_action_mirror_stop(struct service *s)
{
	if (s->action.table_watch)
		event_free(s->action.table_watch);
	if (s->action.settler)
		event_free(s->action.settler);
	s->action.table_watch = s->action.settler = NULL;
	service_follower_gone(s, SERVICE_FOLLOWS_MIRROR);
}

void service_action_mirror_entry(struct service *s, const struct entry *e)
{
	struct action_mirror *m = s->action.sets ? action_lists_mirror(s->action.sets) : NULL;

	if (m == NULL)
		return;
	if (mirror_entry(s, m, e, matcher_holders(s->matcher, e)) < 0)
		s->action.mirror_stale = true;
	else
		settle_slice(s);
}

void service_action_mirror_taken(struct service *s, int i, bool timed)
{
	if (!timed || !service_action_mirror_on(s))
		return;
	s->action.rereading |= 1u << i;
	s->action.reread_at = (struct matcher_cursor){ .started = false }; /* from the start, for every list asked */
	service_action_mirror_settle(s);
}

struct holding {
	const struct service *s;
	char *names;
	size_t size, len;
};

static int name_holder(void *ctx, const struct entry *e, unsigned group, uint32_t holders)
{
	struct holding *h = ctx;
	uint32_t acting;

	(void)group;
	(void)e;
	if (kind_of(h->s, holders, &acting) != SET_MIRROR_LISTED)
		return 0;
	for (unsigned i = 0; i < LISTS_SLOTS && h->len < h->size; i++)
		if (acting & (1u << i) && !strstr(h->names, h->s->lists.slot[i].name))
			h->len += (size_t)snprintf(h->names + h->len, h->size - h->len, "%s%s", h->len ? ", " : "",
						   h->s->lists.slot[i].name);
	return 0;
}

bool service_action_mirror_listing(const struct service *s, const uint8_t *addr, int family, char *names, size_t size)
{
	struct holding h = { s, names, size, 0 };

	names[0] = '\0';
	if (s->action.sets == NULL || action_lists_mirror(s->action.sets) == NULL)
		return false;
	matcher_covering(s->matcher, addr, family == 4 ? 4 : 16, name_holder, &h);
	return h.len > 0;
}

bool service_action_mirror_on(const struct service *s)
{
	return s->action.sets && action_lists_mirror(s->action.sets);
}

bool service_action_mirror_behind(const struct service *s)
{
	return s->action.mirror_stale;
}

bool service_action_mirror_syncing(const struct service *s)
{
	return s->action.sets && (s->action.rereading || action_syncing(s->action.sets));
}
