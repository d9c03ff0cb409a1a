/* lists.c - the entry set's owner: the running lists, a holder each, versions swapped in whole, labels for alerts. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "lists.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "error.h"
#include "matcher.h"
#include "state.h"

_Static_assert(LISTS_SLOTS == CONFIG_MAX_LISTS, "a holder bit for every list the configuration may name");
_Static_assert(LISTS_STAGING == 1u << LISTS_SLOTS, "staging is the bit above the lists' own");

int lists_init(struct lists *ls)
{
	memset(ls, 0, sizeof(*ls));
	snprintf(ls->slot[0].name, LIST_NAME_MAX, "%s", LIST_LOCAL);
	return (ls->labels = labels_new()) ? 0 : -1;
}

void lists_free(struct lists *ls)
{
	for (int i = 0; i <= LISTS_SLOTS; i++) {
		state_ttl_free(ls->expiry[i]);
		ls->expiry[i] = NULL;
	}
	state_ttl_free(ls->staged_deleted);
	ls->staged_deleted = NULL;
	labels_free(ls->labels);
	ls->labels = NULL;
	free(ls->exceptions);
	ls->exceptions = NULL;
}

int lists_find(const struct lists *ls, const char *name)
{
	for (int i = 0; i < LISTS_SLOTS; i++)
		if (ls->slot[i].name[0] && strcmp(ls->slot[i].name, name) == 0)
			return i;
	return -1;
}

uint32_t lists_acting(const struct lists *ls, enum list_action action)
{
	uint32_t mask = 0;

	for (int i = 0; i < LISTS_SLOTS; i++)
		if (ls->slot[i].name[0] && ls->slot[i].cfg && ls->slot[i].cfg->action == action)
			mask |= 1u << i;
	return mask;
}

uint32_t lists_passing_packets(const struct lists *ls)
{
	uint32_t mask = 0;

	for (int i = 0; i < LISTS_SLOTS; i++)
		if (ls->slot[i].name[0] && ls->slot[i].cfg && ls->slot[i].cfg->action == LIST_ACTION_PASS &&
		    ls->slot[i].cfg->pass_packet)
			mask |= 1u << i;
	return mask;
}

static uint64_t lists_flush(struct lists *ls, struct matcher *m, int i)
{
	BLOOMD_CHECK(i >= 0 && i < LISTS_SLOTS);
	labels_move(ls->labels, -1, (unsigned)i);
	state_ttl_free(ls->expiry[i]);
	ls->expiry[i] = NULL;
	return matcher_rehold(m, 0, 1u << i, NULL);
}

int lists_configure(struct lists *ls, struct matcher *m, const struct config *cfg, char *err,
		    size_t errlen)
{
	int slot_of[CONFIG_MAX_LISTS];
	bool kept[LISTS_SLOTS] = { false };
	int free_slots = 0;

	for (size_t j = 0; j < cfg->nlists; j++)
		if ((slot_of[j] = lists_find(ls, cfg->lists[j].name)) >= 0)
			kept[slot_of[j]] = true;
	for (int i = 0; i < LISTS_SLOTS; i++)
		free_slots += !kept[i];
	for (size_t j = 0; j < cfg->nlists; j++)
		free_slots -= slot_of[j] < 0;
	if (free_slots < 0) {
		error_set(err, errlen, "more than %d lists at once", LISTS_SLOTS);
		return -1;
	}
	for (int i = 1; i < LISTS_SLOTS; i++)
		if (ls->slot[i].name[0] && !kept[i]) { /* gone from the configuration */
			lists_flush(ls, m, i); /* its labels and times to live too */
			memset(&ls->slot[i], 0, sizeof(ls->slot[i]));
		}
	for (size_t j = 0; j < cfg->nlists; j++) {
		int i = slot_of[j];
		for (int k = 0; i < 0 && k < LISTS_SLOTS; k++)
			if (ls->slot[k].name[0] == '\0')
				i = k;
		snprintf(ls->slot[i].name, LIST_NAME_MAX, "%s", cfg->lists[j].name);
		ls->slot[i].cfg = &cfg->lists[j];
	}
	return 0;
}

struct staging {
	struct lists *ls;
	struct matcher *m;
	struct labels *labels;
	bool failed;           /* an entry could not be stored: the version cannot be taken */
	char error[300];
	feed_bad_cb on_bad;    /* the caller's, with its ctx */
	void *ctx;
	uint64_t lines_before;  /* read by earlier parts of the version */
	uint64_t now;           /* what has run out is left out */
	uint64_t expired;       /* entries left out: their time had passed when the version was read */
};

static void stage_bad(void *ctx, unsigned line, const char *text, const char *why)
{
	struct staging *st = ctx;

	st->on_bad(st->ctx, (unsigned)(st->lines_before + line), text, why);
}

/* An exception of the version being read, applied when it is all read (lists_stage_done). */
static int note_exception(struct lists *ls, const struct entry *e)
{
	if (ls->nexceptions == ls->exceptions_cap) {
		size_t cap = ls->exceptions_cap ? 2 * ls->exceptions_cap : 64;
		struct list_exception *more = realloc(ls->exceptions, cap * sizeof(*more));
		if (more == NULL)
			return -1;
		ls->exceptions = more;
		ls->exceptions_cap = cap;
	}
	struct list_exception *x = &ls->exceptions[ls->nexceptions++];
	bool net = e->kind == ENTRY_NET;
	x->alen = (uint8_t)(e->len - net);
	x->bits = net ? e->key[0] : (uint8_t)(8 * e->len);
	memcpy(x->addr, e->key + net, x->alen);
	return 0;
}

/*
 * The staged entry e's expiry (0: none). An entry given twice in a version
 * (two CrowdSec decisions on one address) stays while either holds it: the
 * later expiry, or none if either has none.
 */
static int stage_expiry(struct lists *ls, const struct matcher *m, const struct entry *e, uint64_t expires)
{
	struct state_ttl **staged = &ls->expiry[LISTS_SLOTS];

	if (expires == 0 && *staged == NULL)
		return 0;
	if (matcher_holders(m, e) & LISTS_STAGING) {
		uint64_t had = *staged ? state_ttl_get(*staged, e) : 0;
		if (had == 0 || expires == 0)
			return had ? state_ttl_set(*staged, e, 0) : 0;
		expires = had > expires ? had : expires;
	}
	if (expires == 0)
		return 0;
	return (*staged == NULL && (*staged = state_ttl_new()) == NULL) ? -1 : state_ttl_set(*staged, e, expires);
}

/* An entry the staged change deletes from the list: it is not carried into the version. */
static int stage_deleted(struct lists *ls, const struct entry *e)
{
	if (ls->staged_deleted == NULL && (ls->staged_deleted = state_ttl_new()) == NULL)
		return -1;
	return state_ttl_set(ls->staged_deleted, e, 1);
}

static int stage_entry(void *ctx, const struct entry *e, uint64_t expires, const struct entry_labels *labels,
		       int role, char *err, size_t errlen)
{
	struct staging *st = ctx;
	bool exception = role == FEED_EXCEPTION;

	if (role == FEED_DELETED) {
		if (stage_deleted(st->ls, e) == 0)
			return 0;
		st->failed = true; /* the entry would stay in the list */
		snprintf(st->error, sizeof(st->error), "out of memory for the entries deleted");
		return -1;
	}
	/* A feed's time to live (an ipset timeout, a CrowdSec duration, expires=): run out, it holds nothing. */
	if (expires && expires <= st->now) {
		st->expired++;
		return 0;
	}
	if (!exception && stage_expiry(st->ls, st->m, e, expires) < 0) {
		st->failed = true; /* the entry would stay past its time */
		snprintf(st->error, sizeof(st->error), "out of memory for the entries' times to live");
		return -1;
	}
	if (exception && (e->kind == ENTRY_ADDR || e->kind == ENTRY_NET)) {
		if (note_exception(st->ls, e) == 0)
			return 0;
		errno = ENOMEM;
		error_set(err, errlen, "out of memory for the exception");
	} else if (matcher_hold(st->m, e, LISTS_STAGING, err, errlen) >= 0) {
		if (labels == NULL || labels_set(st->labels, e, LISTS_SLOTS, labels) == 0)
			return 0;
		errno = ENOMEM;
		error_set(err, errlen, "out of memory for the entry's labels");
	}
	if (errno == ENOMEM) { /* not the line's fault, and an entry of the old version may be missing */
		st->failed = true;
		snprintf(st->error, sizeof(st->error), "%s", err);
	}
	return -1;
}

/* What one part read (n, and rc from the reader) adds to r; -1 once the version fails. */
static int staged_part(struct lists *ls, const struct staging *st, const struct feed_counts *n, int rc,
		       const char *err, struct list_load *r)
{
	ls->staged_change |= n->change;
	r->lines += n->lines;
	r->skipped += n->skipped;
	if (n->skipped_what[0])
		memcpy(r->skipped_what, n->skipped_what, sizeof(r->skipped_what));
	r->entries += n->entries - st->expired;
	r->bad += n->bad;
	if (rc < 0)
		error_set(r->error, sizeof(r->error), "%s", err);
	else if (st->failed)
		error_set(r->error, sizeof(r->error), "%s", st->error);
	return r->error[0] ? -1 : 0;
}

static void stage_ahead(void *ctx, const struct entry *e)
{
	const struct staging *st = ctx;

	lists_prefetch(st->m, e);
}

/* At most max_lines more lines of ff staged by st, into r: the reader's return, or -1 once the version fails. */
static int stage_part(struct staging *st, struct feed_file *ff, size_t max_lines, struct list_load *r)
{
	struct feed_counts n;
	char err[256];

	ff->ahead = stage_ahead;
	int rc = feed_file_read(ff, max_lines, stage_entry, stage_bad, st, &n, err, sizeof(err));
	return staged_part(st->ls, st, &n, rc, err, r) < 0 ? -1 : rc;
}

int lists_stage_more(struct lists *ls, struct matcher *m, FILE *f, const struct feed_spec *spec,
		     const struct list_clock *clock, feed_bad_cb on_bad, void *ctx, struct list_load *r)
{
	struct staging st = { .ls = ls, .m = m, .labels = ls->labels, .on_bad = on_bad, .ctx = ctx, .lines_before = r->lines,
			      .now = clock->now };
	struct feed_file ff;

	if (feed_file_open(&ff, f, spec, clock->stated) < 0) {
		error_set(r->error, sizeof(r->error), "out of memory");
		return -1;
	}
	int rc = stage_part(&st, &ff, SIZE_MAX, r);
	feed_file_close(&ff);
	return rc;
}

int lists_stage_lines(struct lists *ls, struct matcher *m, struct feed_file *ff, size_t max_lines, uint64_t now,
		      feed_bad_cb on_bad, void *ctx, struct list_load *r)
{
	/* The reader numbers its lines from the file's first: nothing to add. */
	struct staging st = { .ls = ls, .m = m, .labels = ls->labels, .on_bad = on_bad, .ctx = ctx, .now = now };

	return stage_part(&st, ff, max_lines, r);
}

/* The address a's prefix of bits as an entry: an addr at full length, else a net. */
static void prefix_entry(const uint8_t *a, size_t alen, unsigned bits, struct entry *e)
{
	uint8_t *key = e->key;

	e->kind = bits == 8 * alen ? ENTRY_ADDR : ENTRY_NET;
	e->len = (uint16_t)(alen + (e->kind == ENTRY_NET));
	if (e->kind == ENTRY_NET)
		*key++ = (uint8_t)bits;
	for (size_t j = 0; j < alen; j++) {
		unsigned left = bits > 8 * j ? bits - 8 * (unsigned)j : 0;
		key[j] = left >= 8 ? a[j] : (uint8_t)(a[j] & (0xff00 >> left));
	}
}

/* The prefix lengths of the staged entries that cover an exception's address, up to its own. */
struct covering_prefixes {
	unsigned bits_max, n;
	uint8_t bits[130];
};

static int staged_prefix(void *ctx, const struct entry *e, unsigned group, uint32_t holders)
{
	struct covering_prefixes *cp = ctx;
	unsigned bits = e->kind == ENTRY_NET ? e->key[0] : 8u * e->len;

	(void)group;
	if ((holders & LISTS_STAGING) && bits <= cp->bits_max && cp->n < sizeof(cp->bits))
		cp->bits[cp->n++] = (uint8_t)bits;
	return 0;
}

/*
 * Take exception x out of the staged networks that hold it: each is
 * released and its part outside x staged instead, one prefix a level (the
 * sibling of x's path at each length below x's), each with the network's
 * expiry.
 */
static int apply_exception(struct lists *ls, struct matcher *m, const struct list_exception *x, char *err, size_t errlen)
{
	struct covering_prefixes cp = { .bits_max = x->bits };
	struct state_ttl *staged = ls->expiry[LISTS_SLOTS];
	struct entry e;
	uint8_t sibling[16];
	uint32_t left;

	matcher_covering(m, x->addr, x->alen, staged_prefix, &cp);
	for (unsigned k = 0; k < cp.n; k++) {
		prefix_entry(x->addr, x->alen, cp.bits[k], &e);
		uint64_t expires = staged ? state_ttl_get(staged, &e) : 0;
		matcher_release(m, &e, LISTS_STAGING, &left);
		if (expires && state_ttl_set(staged, &e, 0) < 0)
			goto no_memory;
		for (unsigned b = cp.bits[k] + 1u; b <= x->bits; b++) {
			memcpy(sibling, x->addr, x->alen);
			sibling[(b - 1) / 8] ^= (uint8_t)(0x80 >> ((b - 1) % 8));
			prefix_entry(sibling, x->alen, b, &e);
			if (stage_expiry(ls, m, &e, expires) < 0)
				goto no_memory;
			if (matcher_hold(m, &e, LISTS_STAGING, err, errlen) < 0)
				return -1;
		}
	}
	return 0;
no_memory:
	error_set(err, errlen, "out of memory for the entries' times to live");
	return -1;
}

static int broader_first(const void *a, const void *b)
{
	const struct list_exception *x = a, *y = b;

	return (int)x->bits - (int)y->bits;
}

/*
 * The staged version's exceptions, broader first: a narrower one inside a
 * broader one then finds no staged network holding it, and the prefixes a
 * split leaves never stand for members of their own.
 */
static void apply_exceptions(struct lists *ls, struct matcher *m, struct list_load *r)
{
	char err[256];

	if (ls->nexceptions == 0)
		return;
	qsort(ls->exceptions, ls->nexceptions, sizeof(*ls->exceptions), broader_first);
	for (size_t k = 0; k < ls->nexceptions && r->error[0] == '\0'; k++)
		if (apply_exception(ls, m, &ls->exceptions[k], err, sizeof(err)) < 0)
			error_set(r->error, sizeof(r->error), "%s", err);
	ls->nexceptions = 0;
}

/* The feed guards: a version too small, or one taking too much of the list away, is refused. */
static void guard(const struct list_config *lc, const struct matcher *m, int i, struct list_load *r)
{
	if (r->entries < lc->min_entries) {
		error_set(r->error, sizeof(r->error),
			  "%llu entries, fewer than min_entries (%u): an empty or cut-short download?",
			  (unsigned long long)r->entries, lc->min_entries);
		return;
	}
	if (lc->max_removed >= 1)
		return;
	uint64_t held[32], kept[32];
	matcher_count_holders(m, false, held);
	matcher_count_holders(m, true, kept);
	uint64_t removed = held[i] - kept[i];
	if ((double)removed > lc->max_removed * (double)held[i])
		error_set(r->error, sizeof(r->error), "it would remove %llu of the list's %llu entries, more than max_removed (%g)",
			  (unsigned long long)removed, (unsigned long long)held[i], lc->max_removed);
}

/* The entries of list i a staged change keeps: neither staged again nor deleted. */
struct carrying {
	uint32_t bit;
	const struct state_ttl *deleted;
	struct entry_run picked;
	bool failed;
};

static int pick_carried(void *ctx, const struct entry *e, unsigned group, uint32_t holders)
{
	struct carrying *c = ctx;

	(void)group;
	if (!(holders & c->bit) || (holders & LISTS_STAGING) || (c->deleted && state_ttl_get(c->deleted, e)))
		return 0;
	if (entry_run_add(&c->picked, e) < 0) {
		c->failed = true;
		return -1;
	}
	return 0;
}

/* A staged change made list i's whole next version: its other entries staged too, with their times and labels. */
static void carry_forward(struct lists *ls, struct matcher *m, int i, struct list_load *r)
{
	struct carrying c = { .bit = 1u << i, .deleted = ls->staged_deleted };
	struct state_ttl **staged = &ls->expiry[LISTS_SLOTS];
	struct entry e;
	struct entry_labels own;
	char err[256] = "out of memory";

	matcher_foreach(m, 0, pick_carried, &c);
	for (size_t at = 0; !c.failed && entry_run_next(&c.picked, &at, &e);) {
		uint64_t expires = ls->expiry[i] ? state_ttl_get(ls->expiry[i], &e) : 0;
		c.failed = matcher_hold(m, &e, LISTS_STAGING, err, sizeof(err)) < 0 ||
			   (expires && ((*staged == NULL && (*staged = state_ttl_new()) == NULL) || state_ttl_set(*staged, &e, expires) < 0)) ||
			   (labels_get(ls->labels, e.kind, e.key, e.len, (unsigned)i, &own) &&
			    labels_set(ls->labels, &e, LISTS_SLOTS, &own) < 0);
		r->entries++;
	}
	if (c.failed)
		error_set(r->error, sizeof(r->error), "the list's entries could not be carried into the change: %s", err);
	entry_run_free(&c.picked);
}

int lists_stage_done(struct lists *ls, struct matcher *m, int i, bool guarded, struct list_load *r)
{
	const struct list_state *l = &ls->slot[i];
	double max_bad = l->cfg ? l->cfg->max_bad : 0.1;

	if (r->error[0] == '\0' && r->bad > 0 && (double)r->bad > max_bad * (double)(r->bad + r->entries))
		error_set(r->error, sizeof(r->error), "%llu of its %llu entry lines are bad, more than max_bad (%g)",
			  (unsigned long long)r->bad, (unsigned long long)(r->bad + r->entries), max_bad);
	if (r->error[0] == '\0' && ls->staged_change)
		carry_forward(ls, m, i, r);
	ls->staged_change = false;
	state_ttl_free(ls->staged_deleted);
	ls->staged_deleted = NULL;
	if (r->error[0] == '\0')
		apply_exceptions(ls, m, r);
	ls->nexceptions = 0;
	if (r->error[0] == '\0' && guarded && l->cfg)
		guard(l->cfg, m, i, r);
	if (r->error[0]) {
		lists_unstage(ls, m, i, r, r->error);
		return -1;
	}
	return 0;
}

int lists_stage(struct lists *ls, struct matcher *m, int i, FILE *f, const struct feed_spec *spec,
		const struct list_clock *clock, bool guarded, feed_bad_cb on_bad, void *ctx, struct list_load *r)
{
	*r = (struct list_load){ 0 };
	lists_stage_more(ls, m, f, spec, clock, on_bad, ctx, r);
	return lists_stage_done(ls, m, i, guarded, r);
}

bool lists_take(struct lists *ls, struct matcher *m, int i, uint64_t now, struct list_load *r)
{
	struct list_state *l = &ls->slot[i];

	BLOOMD_CHECK(i > 0 && i < LISTS_SLOTS); /* the local list takes no versions */
	uint64_t added = 0;
	r->removed += matcher_rehold(m, LISTS_STAGING, 1u << i, &added); /* after what slices did, if any */
	r->added += added;
	labels_move(ls->labels, LISTS_SLOTS, (unsigned)i);
	bool timed = ls->expiry[i] || ls->expiry[LISTS_SLOTS];
	state_ttl_free(ls->expiry[i]); /* the new version's times to live, none but its own */
	ls->expiry[i] = ls->expiry[LISTS_SLOTS];
	ls->expiry[LISTS_SLOTS] = NULL;
	l->version++;
	if (l->rev == 0 || r->added || r->removed) /* a version the same as the last is not a new revision */
		l->rev++;
	l->loaded = (time_t)now;
	l->last = *r;
	return timed;
}

void lists_unstage(struct lists *ls, struct matcher *m, int i, struct list_load *r, const char *why)
{
	matcher_rehold(m, 0, LISTS_STAGING, NULL); /* the staged version goes whole */
	ls->nexceptions = 0;                       /* with its exceptions, if it was cut short */
	ls->staged_change = false;                 /* and what it changed */
	state_ttl_free(ls->staged_deleted);
	ls->staged_deleted = NULL;
	labels_move(ls->labels, -1, LISTS_SLOTS);
	state_ttl_free(ls->expiry[LISTS_SLOTS]);
	ls->expiry[LISTS_SLOTS] = NULL;
	if (why != r->error)
		error_set(r->error, sizeof(r->error), "%s", why);
	r->refused = true;
	ls->slot[i].last = *r;
	ls->slot[i].refusals++;
}

uint64_t lists_expiry(const struct lists *ls, unsigned slot, const struct entry *e)
{
	BLOOMD_CHECK(slot <= LISTS_SLOTS);
	return ls->expiry[slot] ? state_ttl_get(ls->expiry[slot], e) : 0;
}

uint64_t lists_expire(struct lists *ls, struct matcher *m, uint64_t now, size_t *budget)
{
	struct entry e;
	uint64_t released = 0;
	uint32_t left;

	for (int i = 1; i < LISTS_SLOTS; i++)
		while (*budget && ls->expiry[i] && state_ttl_pop_expired(ls->expiry[i], now, &e) == 1) {
			--*budget;
			if (!(matcher_holders(m, &e) & LISTS_STAGING)) /* the version on its way decides, when it is taken */
				released += matcher_release(m, &e, 1u << i, &left) == 0;
		}
	return released;
}

const struct list_state *lists_labelling(const struct lists *ls, uint32_t holders, enum entry_kind kind,
					 const uint8_t *key, size_t len, struct entry_labels *out)
{
	const struct list_state *best = NULL;
	struct entry_labels own;

	for (int i = 0; i < LISTS_SLOTS; i++) {
		const struct list_state *l = &ls->slot[i];
		if (!(holders & (1u << i)) || l->cfg == NULL)
			continue;
		if (!labels_get(ls->labels, kind, key, len, (unsigned)i, &own))
			own = (struct entry_labels){ 0 };
		if (own.severity == 0)
			own.severity = l->cfg->severity;
		if (own.category[0] == '\0' && l->cfg->category)
			snprintf(own.category, sizeof(own.category), "%s", l->cfg->category);
		if (best == NULL || own.severity < out->severity) {
			best = l;
			*out = own;
		}
	}
	return best;
}

void lists_count(const struct lists *ls, const struct matcher *m, uint64_t counts[LISTS_SLOTS])
{
	uint64_t all[32];

	(void)ls;
	matcher_count_holders(m, false, all);
	memcpy(counts, all, LISTS_SLOTS * sizeof(*counts));
}

/* ---- the entry set's other changes, by name (lists.h) ---- */

_Static_assert(STATE_WINDOW_UNKNOWN == MATCHER_WINDOW_ANY, "a snapshot that does not say lets the matcher choose");

static struct matcher_config matcher_config_of(const struct config *cfg)
{
	return (struct matcher_config){
		.layout = cfg->layout, .choices = cfg->choices, .hashes = cfg->hashes,
		.rounds = cfg->rounds, .memory = cfg->memory, .bits_per_entry = cfg->bits_per_entry,
		.bits_per_window = cfg->bits_per_window, .window = cfg->window, .algo = cfg->hash,
	};
}

struct matcher *lists_matcher_new(const struct config *cfg, const struct hash_key *keys, char *err, size_t errlen)
{
	struct matcher_config mc = matcher_config_of(cfg);

	mc.keys = keys;
	if (keys)
		mc.algo = keys[0].algo;
	return matcher_new(&mc, err, errlen);
}

int lists_check_filter(const struct config *cfg, char *err, size_t errlen)
{
	struct matcher_config mc = matcher_config_of(cfg);

	return matcher_check_config(&mc, err, errlen);
}

bool lists_refilter(struct matcher *m, const struct config *cfg)
{
	struct matcher_config mc = matcher_config_of(cfg);

	return matcher_reconfigure(m, &mc, NULL, 0) > 0;
}

int lists_restore_entry(struct matcher *m, const struct entry *e, unsigned group, unsigned window, char *err,
			size_t errlen)
{
	return matcher_add_restored(m, e, group, window, err, errlen);
}

int lists_build(struct matcher *m, const struct filter_params *restored, char *err, size_t errlen)
{
	return restored ? matcher_build_restored(m, restored, err, errlen) : matcher_build_online(m, err, errlen);
}

void lists_placed_online(struct matcher *m)
{
	matcher_placed_online(m);
}

int lists_local_hold(struct matcher *m, const struct entry *e, char *err, size_t errlen)
{
	return matcher_hold(m, e, MATCHER_HOLDER_DEFAULT, err, errlen);
}

void lists_prefetch(const struct matcher *m, const struct entry *e)
{
	matcher_prefetch(m, e);
}

int lists_local_release(struct matcher *m, const struct entry *e, uint32_t *left)
{
	return matcher_release(m, e, MATCHER_HOLDER_DEFAULT, left);
}

bool lists_take_entry(struct matcher *m, int i, const struct entry *e)
{
	char err[256];

	BLOOMD_CHECK(i > 0 && i < LISTS_SLOTS);
	return matcher_hold(m, e, 1u << i, err, sizeof(err)) >= 0; /* without memory, lists_take does it */
}

bool lists_drop_entry(struct matcher *m, int i, const struct entry *e)
{
	uint32_t left;

	BLOOMD_CHECK(i > 0 && i < LISTS_SLOTS);
	return matcher_release(m, e, 1u << i, &left) == 0;
}

int lists_mark(struct matcher *m, const struct entry *e, char *err, size_t errlen)
{
	return matcher_hold(m, e, LISTS_STAGING, err, errlen);
}

void lists_unmark_all(struct matcher *m)
{
	matcher_rehold(m, 0, LISTS_STAGING, NULL);
}
