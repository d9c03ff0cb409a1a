/* service_common.c - what every service file reads: the clock, the configuration's views, the accessors, lines logged. */
#include "service.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "log.h"
#include "service_internal.h"

#define FLOW_TABLE_BITS 16 /* 65,536 (flow, entry) pairs remembered: 1 MiB */
#define BAD_LINES_LOGGED 20 /* per load; the rest are counted */

uint64_t service_now(void)
{
	return (uint64_t)time(NULL);
}

struct match_config service_match_config(const struct config *cfg)
{
	return (struct match_config){
		.layout = cfg->layout, .choices = cfg->choices, .hashes = cfg->hashes,
		.rounds = cfg->rounds, .memory = cfg->memory, .bits_per_entry = cfg->bits_per_entry,
		.bits_per_window = cfg->bits_per_window, .window = cfg->window, .algo = cfg->hash,
	};
}

struct events_options service_events_options(const struct config *cfg)
{
	return (struct events_options){
		.json_path = cfg->events, .pcap_path = cfg->pcap, .snaplen = cfg->snaplen, .filemode = cfg->filemode,
		.host = cfg->sensor_name, .extended = cfg->eve_extended,
	};
}

int service_alert_policy(struct service *s)
{
	if (!s->cfg->alert_once_per_flow) {
		flows_free(s->flows);
		s->flows = s->engine.flows = NULL;
		return 0;
	}
	struct flows *f = flows_new(FLOW_TABLE_BITS, s->cfg->flow_timeout);
	if (f == NULL)
		return -1;
	flows_free(s->flows); /* a reload starts a fresh table: the timeout may have changed */
	s->flows = s->engine.flows = f;
	return 0;
}

int service_thresholds_load(const struct config *cfg, struct thresholds **out, threshold_error_cb on_error,
			    void *ctx)
{
	*out = NULL;
	if (cfg->threshold_file == NULL)
		return 0;
	*out = thresholds_load(cfg->threshold_file, on_error, ctx);
	return *out ? 0 : -1;
}

const struct config *service_config(const struct service *s)
{
	return s->cfg;
}

struct event_base *service_base(const struct service *s)
{
	return s->base;
}

bool service_lookup(const struct service *s, const struct entry *e, bool *filter_says, uint64_t *expiry,
		    uint32_t *holders)
{
	*expiry = ttl_get(s->ttl, e);
	*holders = matcher_holders(s->matcher, e) & ~MATCH_HOLDER_STAGING;
	return matcher_lookup(s->matcher, e, filter_says) && *holders; /* one being staged is no one's yet */
}

int service_foreach(const struct service *s, enum entry_kind only, match_entry_cb cb, void *ctx)
{
	return matcher_foreach(s->matcher, only, cb, ctx);
}

struct held_only {
	match_entry_cb cb;
	void *ctx;
};

static int if_held(void *ctx, const struct entry *e, unsigned group, uint32_t holders)
{
	const struct held_only *h = ctx;

	holders &= ~MATCH_HOLDER_STAGING;
	return holders ? h->cb(h->ctx, e, group, holders) : 0;
}

void service_covering(const struct service *s, const uint8_t *addr, size_t alen, match_entry_cb cb,
		      void *ctx)
{
	struct held_only h = { cb, ctx };

	matcher_covering(s->matcher, addr, alen, if_held, &h); /* one being staged is no one's yet */
}

void service_walk(const struct service *s, enum entry_kind only, struct match_cursor *cur, size_t max,
		  match_entry_cb cb, void *ctx)
{
	matcher_walk(s->matcher, only, cur, max, cb, ctx);
}

uint64_t service_expiry(const struct service *s, const struct entry *e)
{
	return ttl_get(s->ttl, e);
}

uint64_t service_entries(const struct service *s)
{
	uint64_t n = 0;

	for (enum entry_kind k = ENTRY_ADDR; k <= ENTRY_SIG; k++)
		n += matcher_entries(s->matcher, k);
	return n;
}

unsigned service_rounds(const struct service *s)
{
	return matcher_rounds(s->matcher);
}

uint64_t service_generation(const struct service *s)
{
	return s->generation;
}

bool service_is_live(const struct service *s)
{
	return s->live != NULL || s->workers != NULL;
}

void service_set_one_shot(struct service *s, bool one_shot)
{
	s->one_shot = one_shot;
}

int service_exit_code(const struct service *s)
{
	return s->exit_code;
}

void service_fail(struct service *s)
{
	s->exit_code = 1;
}

bool service_unsynced(const struct service *s)
{
	return s->journal && journal_unsynced(s->journal);
}

const char *service_store_error(const struct service *s)
{
	if (s->journal_stale)
		return "the state directory cannot take a new journal";
	return s->store_error;
}

/* Whether e is a net broader than [cluster] max_prefix4 or max_prefix6 allow from the stream. */
bool service_entry_too_broad(const struct service *s, const struct entry *e, char *err, size_t errlen)
{
	unsigned most = e->len == 5 ? s->cfg->cluster.max_prefix4 : s->cfg->cluster.max_prefix6;

	if (e->kind != ENTRY_NET || e->key[0] >= most)
		return false;
	error_set(err, errlen, "a /%u net is broader than [cluster] max_prefix%c (/%u) lets the stream add: refused",
		  e->key[0], e->len == 5 ? '4' : '6', most);
	return true;
}

bool service_version_too_broad(const struct service *s, const char *data, size_t len, char *err, size_t errlen)
{
	static struct entry e;
	char line[ENTRY_TEXT_MAX + 256];

	for (size_t at = 0; at < len;) {
		const char *nl = memchr(data + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (data + at)) : len - at;
		bool net = n >= 4 && memcmp(data + at, "net ", 4) == 0;
		if (net)
			snprintf(line, sizeof(line), "%.*s", (int)n, data + at);
		at += n + 1;
		if (net && entry_parse_labelled(line, &e, 0, &(uint64_t){ 0 }, &(struct entry_labels){ 0 }, NULL, 0) == 1 &&
		    service_entry_too_broad(s, &e, err, errlen))
			return true;
	}
	return false;
}

/*
 * A version could not be kept: like a journal that cannot be written, the
 * state takes no change until it can (housekeeping keeps the lists again).
 */
void service_list_unkept(struct service *s, int i, const char *err)
{
	if (s->store_error[0] == '\0')
		log_error("%s: changes are refused until the state can be written again", err);
	snprintf(s->store_error, sizeof(s->store_error), "%s", err);
	s->lists_unkept |= 1u << i;
}

void service_log_bad_line(void *ctx, unsigned line, const char *text, const char *why)
{
	struct service_bad_lines *b = ctx;

	if (b->logged++ < BAD_LINES_LOGGED)
		log_warning("list %s: %s:%u: %s, skipped: '%s'", b->list, b->source, line, why, text);
}

void service_list_loaded(struct service *s, int i, const char *source, const struct service_bad_lines *b,
			 const struct list_load *r)
{
	const struct list_state *l = &s->lists.slot[i];

	if (b->logged > BAD_LINES_LOGGED)
		log_warning("list %s: %s: %u more bad lines, not shown", l->name, source, b->logged - BAD_LINES_LOGGED);
	if (r->skipped_what[0])
		log_warning("list %s: %s: %llu lines skipped, of what bloomd does not hold or enforce: %s", l->name, source,
			    (unsigned long long)r->skipped, r->skipped_what);
	if (!r->refused)
		service_list_revised(s, i);
	if (r->refused)
		log_error("list %s: %s: refused, the list keeps its previous version (%llu entries read, %llu bad lines): %s",
			  l->name, source, (unsigned long long)r->entries, (unsigned long long)r->bad, r->error);
	else
		log_info("list %s: %s: version %u taken: %llu entries read, %llu added, %llu removed, %llu bad lines skipped",
			 l->name, source, l->version, (unsigned long long)r->entries, (unsigned long long)r->added,
			 (unsigned long long)r->removed, (unsigned long long)r->bad);
}
