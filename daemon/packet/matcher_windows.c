/* matcher_windows.c - which of its windows indexes each signature: one few others share, and none known to be common. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "matcher_internal.h"

/*
 * A packet position is checked against every signature its window indexes,
 * so a window shared by many (100,000 signatures starting "GET /wp-") would
 * make one packet cost as much as all of them. Each signature is indexed by
 * one of its windows (at an offset from 0 to len - W, below
 * MATCHER_WINDOW_CANDIDATES, so a load stays linear): the one the fewest
 * others are indexed by, and not a hot one. A window is hot once two
 * signatures are known to contain it: when a new signature contains a
 * window others are indexed by, that window is marked hot and they move to
 * windows of their own. What is chosen depends only on the matcher's state
 * and the order of changes, so a copy replaying them chooses the same.
 */

#define SPREAD_MAX 64 /* signatures moved off one window at a time */

/* ---- the hot windows: an open-addressing set of window words ---- */

static uint64_t hot_slot_word(uint64_t word)
{
	return word ? word : 1; /* 0 marks an empty slot; word 1 shares word 0's mark (a needless avoidance at most) */
}

/* Where word's probe starts: the product's top bits (a window word's low bits are its first bytes, alike in many). */
static size_t hot_home(const struct matcher *m, uint64_t want)
{
	return (size_t)((want * 0x9e3779b97f4a7c15ULL) >> (64 - __builtin_ctzll(m->hot_cap)));
}

static bool hot_has(const struct matcher *m, uint64_t word)
{
	uint64_t want = hot_slot_word(word);

	if (m->hot_cap == 0)
		return false;
	for (size_t i = hot_home(m, want);; i = (i + 1) & (m->hot_cap - 1)) {
		if (m->hot[i] == want)
			return true;
		if (m->hot[i] == 0)
			return false;
	}
}

/* Mark word hot; without memory it stays unmarked (signatures then share more, nothing is lost). */
static void hot_add(struct matcher *m, uint64_t word)
{
	uint64_t want = hot_slot_word(word);

	if (hot_has(m, word))
		return;
	if ((m->hot_n + 1) * 2 > m->hot_cap) {
		size_t cap = m->hot_cap ? m->hot_cap * 2 : 64;
		uint64_t *grown = calloc(cap, sizeof(*grown)), *old = m->hot;
		if (grown == NULL)
			return;
		size_t old_cap = m->hot_cap;
		m->hot = grown;
		m->hot_cap = cap;
		m->hot_n = 0;
		for (size_t i = 0; i < old_cap; i++)
			if (old[i])
				hot_add(m, old[i]);
		free(old);
	}
	size_t i = hot_home(m, want);
	while (m->hot[i])
		i = (i + 1) & (m->hot_cap - 1);
	m->hot[i] = want;
	m->hot_n++;
}

int matcher_hot_copy(struct matcher *dst, const struct matcher *src)
{
	dst->hot = NULL;
	if (src->hot_cap == 0)
		return 0;
	if ((dst->hot = malloc(src->hot_cap * sizeof(*dst->hot))) == NULL)
		return -1;
	memcpy(dst->hot, src->hot, src->hot_cap * sizeof(*dst->hot));
	return 0;
}

size_t matcher_sig_window_max(const struct matcher *m)
{
	size_t most = 0;

	for (size_t w = 0; w < store_count(m->sig.store); w++) {
		size_t n = 0;
		for (uint32_t id = m->heads[w]; id != NO_SIG; id = m->sigs[id].next)
			n++;
		most = n > most ? n : most;
	}
	return most;
}

/* ---- placing a signature ---- */

/* The signatures indexed by window index, id left out, and the last of them (NO_SIG: none). */
static size_t indexed_by(const struct matcher *m, ssize_t index, uint32_t left_out, uint32_t *last)
{
	size_t n = 0;

	*last = NO_SIG;
	for (uint32_t id = index < 0 ? NO_SIG : m->heads[index]; id != NO_SIG; id = m->sigs[id].next)
		if (id != left_out) {
			n++;
			*last = id;
		}
	return n;
}

/*
 * Signature key (len bytes) among the windows: where it is stored (id, when
 * stored: the signature whose bytes are these), else the best window for
 * it, not counting signature self there (NO_SIG: none to leave out).
 */
static void place(const struct matcher *m, const uint8_t *key, size_t len, uint32_t self, struct sig_place *out,
		  struct sig_windows *keys)
{
	unsigned w = m->cfg.window;
	size_t best = SIZE_MAX;

	*out = (struct sig_place){ .index = -1, .id = NO_SIG, .prev = NO_SIG };
	if (keys)
		keys->n = 0;
	for (unsigned at = 0; at + w <= len && at < MATCHER_WINDOW_CANDIDATES; at++) {
		uint64_t word = sigscan_word(m->scan, key + at);
		struct hash128 h = sigscan_hash(m->scan, word);
		ssize_t index = store_find(m->sig.store, h, 0, key + at, w);
		if (keys) {
			keys->word[at] = word;
			keys->h[at] = h;
			keys->n = at + 1;
		}
		uint32_t prev = NO_SIG;
		for (uint32_t id = index < 0 ? NO_SIG : m->heads[index]; id != NO_SIG && self == NO_SIG;
		     prev = id, id = m->sigs[id].next) {
			const struct sig_entry *s = &m->sigs[id];
			if (s->window == at && s->len == len && memcmp(m->sig_arena.bytes + s->offset, key, len) == 0) {
				*out = (struct sig_place){ at, index, id, prev, word, h };
				return;
			}
		}
		size_t score = 2 * indexed_by(m, index, self, &prev) + hot_has(m, word);
		if (score < best) {
			best = score;
			*out = (struct sig_place){ at, index, NO_SIG, prev, word, h };
		}
	}
}

void matcher_place_signature(const struct matcher *m, const struct entry *e, struct sig_place *out,
			   struct sig_windows *keys)
{
	place(m, e->key, e->len, NO_SIG, out, keys);
}

void matcher_place_at(const struct matcher *m, const struct entry *e, unsigned window, struct sig_place *p)
{
	p->window = window;
	p->word = sigscan_word(m->scan, e->key + window);
	p->h = sigscan_hash(m->scan, p->word);
	p->index = store_find(m->sig.store, p->h, 0, e->key + window, m->cfg.window);
	indexed_by(m, p->index, NO_SIG, &p->prev);
}

/* ---- the windows ---- */

int matcher_new_window(struct matcher *m, const struct entry *e, struct sig_place *p, uint32_t id, int group,
		     char *err, size_t errlen)
{
	const struct array_spec per_window[] = {
		{ (void **)&m->heads, sizeof(*m->heads) },
		{ (void **)&m->words, sizeof(*m->words) },
	};
	unsigned w = m->cfg.window;

	if (arrays_grow(per_window, 2, &m->window_cap, store_count(m->sig.store) + 1) < 0 ||
	    (p->index = store_add(m->sig.store, p->h, 0, e->key + p->window, w, (uint8_t)(group < 0 ? 0 : group))) < 0) {
		error_set(err, errlen, "out of memory adding a signature");
		return -1;
	}
	m->heads[p->index] = id;
	m->words[p->index] = p->word;
	if (matcher_filter_in(m, &m->sig, (size_t)p->index, p->h, group >= 0, err, errlen) < 0) {
		/* Not in the filter: out of the store too (the last window: nothing moves). */
		store_remove(m->sig.store, (size_t)p->index);
		return -1;
	}
	if (m->built)
		sigscan_add(m->scan, p->word);
	return 0;
}

/* The last signature of a window takes the window with it (its prefilter bits stay). */
void matcher_remove_window(struct matcher *m, size_t index)
{
	size_t last = store_count(m->sig.store) - 1;

	matcher_filter_out(m, &m->sig, index);
	store_remove(m->sig.store, index);
	m->heads[index] = m->heads[last]; /* the store moved its last window to index too */
	m->words[index] = m->words[last];
}

/* ---- moving signatures off a window others contain ---- */

/* Take id out of the chain of the window at index; the window goes when it was the last. */
static void unlink_sig(struct matcher *m, ssize_t index, uint32_t id)
{
	uint32_t prev = NO_SIG;

	for (uint32_t at = m->heads[index]; at != id; prev = at, at = m->sigs[at].next)
		;
	if (prev == NO_SIG)
		m->heads[index] = m->sigs[id].next;
	else
		m->sigs[prev].next = m->sigs[id].next;
	m->sigs[id].next = NO_SIG;
	if (m->heads[index] == NO_SIG)
		matcher_remove_window(m, (size_t)index);
}

static ssize_t matcher_find_window(const struct matcher *m, const uint8_t *bytes, struct hash128 h)
{
	return store_find(m->sig.store, h, 0, bytes, m->cfg.window);
}

/* Move signature id to its best window, if that is not where it is (without memory it stays). */
static void relocate(struct matcher *m, uint32_t id)
{
	struct sig_entry *s = &m->sigs[id];
	struct entry e = { .kind = ENTRY_SIG, .len = s->len };
	struct sig_place to, from;

	memcpy(e.key, m->sig_arena.bytes + s->offset, s->len);
	place(m, e.key, e.len, id, &to, NULL);
	if (to.window == s->window)
		return;
	matcher_place_at(m, &e, s->window, &from);
	if (to.index >= 0 && to.index == from.index)
		return; /* the same bytes at another offset: the same window */
	if (to.index < 0) {
		if (matcher_new_window(m, &e, &to, NO_SIG, -1, NULL, 0) < 0)
			return;
		unlink_sig(m, matcher_find_window(m, e.key + s->window, from.h), id); /* may move to's index */
		m->heads[matcher_find_window(m, e.key + to.window, to.h)] = id;
	} else {
		unlink_sig(m, from.index, id);
		ssize_t index = matcher_find_window(m, e.key + to.window, to.h);
		uint32_t last;
		indexed_by(m, index, NO_SIG, &last);
		m->sigs[last].next = id;
	}
	m->sigs[id].window = (uint16_t)to.window;
}

void matcher_spread(struct matcher *m, const struct entry *e, uint32_t self, const struct sig_windows *keys)
{
	uint32_t moving[SPREAD_MAX];

	for (unsigned at = 0; at < keys->n; at++) {
		if (at == m->sigs[self].window)
			continue;
		uint64_t word = keys->word[at];
		ssize_t index = matcher_find_window(m, e->key + at, keys->h[at]);
		if (index < 0)
			continue;
		size_t n = 0;
		for (uint32_t id = m->heads[index]; id != NO_SIG && n < SPREAD_MAX; id = m->sigs[id].next)
			if (id != self)
				moving[n++] = id;
		if (n == 0)
			continue;
		hot_add(m, word);
		for (size_t i = 0; i < n; i++)
			relocate(m, moving[i]);
	}
}
