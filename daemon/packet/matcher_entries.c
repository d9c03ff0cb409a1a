/* matcher_entries.c - the matcher's entries: the exact stores, the signature index and its arena. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "check.h"
#include "error.h"
#include "matcher_internal.h"

/* The prefix lengths in use, longest first: one net probe per side and length. */
static void net_lengths_refresh(struct matcher *m, int v6)
{
	unsigned n = 0;

	for (int l = v6 ? 128 : 32; l >= 0; l--)
		if (m->net_count[v6][l])
			m->net_lens[v6][n++] = (uint8_t)l;
	m->n_net_lens[v6] = n;
}

uint64_t matcher_entry_digest(unsigned kind, const uint8_t *key, size_t len)
{
	return XXH3_64bits_withSeed(key, len, (uint64_t)kind + 1);
}

uint64_t matcher_holder_digest(const struct matcher *m, unsigned bit)
{
	return m->held_digest[bit];
}

void matcher_count_holders(const struct matcher *m, bool staged, uint64_t counts[32])
{
	memcpy(counts, staged ? m->held_staged : m->held, sizeof(m->held));
}

/* Each holder bit's count and digest, in or out (sign) of an entry of that digest. */
static void account(struct matcher *m, uint32_t holders, uint64_t digest, int sign)
{
	bool staged = holders & MATCHER_HOLDER_STAGING;

	for (; holders; holders &= holders - 1) {
		unsigned b = (unsigned)__builtin_ctz(holders);
		m->held[b] += (uint64_t)(int64_t)sign;
		m->held_staged[b] += staged ? (uint64_t)(int64_t)sign : 0;
		m->held_digest[b] += sign > 0 ? digest : -digest;
	}
}

/* An entry's holders went from before to after: each holder's count and digest follow. */
static void holders_changed(struct matcher *m, unsigned kind, const uint8_t *key, size_t len, uint32_t before,
			    uint32_t after)
{
	if (before == after)
		return;
	uint64_t digest = matcher_entry_digest(kind, key, len);
	account(m, before, digest, -1);
	account(m, after, digest, 1);
}

static void net_length_used(struct matcher *m, int v6, unsigned len)
{
	if (m->net_count[v6][len]++ == 0)
		net_lengths_refresh(m, v6);
}

static int add_address(struct matcher *m, const struct entry *e, int group, uint32_t holders,
		       char *err, size_t errlen)
{
	struct hash128 h = addr_hash(m, e->kind, e->key, e->len);
	ssize_t index = store_add(m->addr.store, h, (uint8_t)e->kind, e->key, e->len,
				  (uint8_t)(group < 0 ? 0 : group));

	if (index < 0) {
		if (errno != EEXIST) {
			errno = ENOMEM;
			error_set(err, errlen, "out of memory adding an entry");
			return -1;
		}
		index = store_find(m->addr.store, h, (uint8_t)e->kind, e->key, e->len);
		uint32_t had = store_holders(m->addr.store, (size_t)index);
		store_set_holders(m->addr.store, (size_t)index, had | holders);
		holders_changed(m, e->kind, e->key, e->len, had, had | holders);
		return 1;
	}
	if (matcher_filter_in(m, &m->addr, (size_t)index, h, group >= 0, err, errlen) < 0) {
		store_remove(m->addr.store, (size_t)index);
		errno = ENOMEM;
		return -1;
	}
	store_set_holders(m->addr.store, (size_t)index, holders);
	holders_changed(m, e->kind, e->key, e->len, 0, holders);
	m->kind_entries[e->kind]++;
	if (e->kind == ENTRY_NET)
		net_length_used(m, e->len == 17, e->key[0]);
	return 0;
}

static uint32_t new_sig(struct matcher *m, const struct entry *e)
{
	uint32_t id;

	if (m->free_sigs == NO_SIG &&
	    array_grow((void **)&m->sigs, &m->sigs_cap, m->nsigs + 1, sizeof(*m->sigs)) < 0)
		return NO_SIG;
	int64_t offset = arena_put(&m->sig_arena, e->key, e->len);
	if (offset < 0)
		return NO_SIG;
	if (m->free_sigs != NO_SIG) {
		id = m->free_sigs;
		m->free_sigs = m->sigs[id].next;
	} else {
		id = (uint32_t)m->nsigs++;
	}
	m->sigs[id] = (struct sig_entry){ .offset = (uint64_t)offset, .len = e->len, .next = NO_SIG };
	return id;
}

/* A signature id taken back: its bytes become garbage, the id the next one reused. */
static void drop_sig(struct matcher *m, uint32_t id)
{
	holders_changed(m, ENTRY_SIG, m->sig_arena.bytes + m->sigs[id].offset, m->sigs[id].len, m->sigs[id].holders, 0);
	arena_drop(&m->sig_arena, m->sigs[id].len);
	m->sigs[id].holders = 0; /* a dropped id holds nothing */
	m->sigs[id].next = m->free_sigs;
	m->free_sigs = id;
}

static int add_signature(struct matcher *m, const struct entry *e, int group, unsigned window, uint32_t holders,
			 char *err, size_t errlen)
{
	struct sig_windows keys;
	struct sig_place p;
	uint32_t id;

	if (e->len < m->cfg.window) {
		errno = EINVAL;
		error_set(err, errlen, "signature of %u bytes is shorter than the window (%u bytes)",
			  e->len, m->cfg.window);
		return -1;
	}
	if (window != MATCHER_WINDOW_ANY && (window + m->cfg.window > e->len || window >= MATCHER_WINDOW_CANDIDATES)) {
		errno = EINVAL;
		error_set(err, errlen, "a window at offset %u does not fit a signature of %u bytes (or is past %u)", window,
			  e->len, MATCHER_WINDOW_CANDIDATES - 1);
		return -1;
	}
	matcher_place_signature(m, e, &p, &keys);
	if (p.id != NO_SIG) {
		holders_changed(m, ENTRY_SIG, e->key, e->len, m->sigs[p.id].holders, m->sigs[p.id].holders | holders);
		m->sigs[p.id].holders |= holders;
		return 1;
	}
	if (window != MATCHER_WINDOW_ANY && window != p.window)
		matcher_place_at(m, e, window, &p);
	if ((id = new_sig(m, e)) == NO_SIG) {
		errno = ENOMEM;
		error_set(err, errlen, "out of memory adding a signature");
		return -1;
	}
	m->sigs[id].window = (uint16_t)p.window;
	if (p.index < 0 && matcher_new_window(m, e, &p, id, group, err, errlen) < 0) {
		drop_sig(m, id);
		errno = ENOMEM;
		return -1;
	}
	if (p.prev != NO_SIG) /* last in its window's chain (a new window's first: new_window put it there) */
		m->sigs[p.prev].next = id;
	m->sigs[id].holders = holders;
	holders_changed(m, ENTRY_SIG, e->key, e->len, 0, holders);
	m->kind_entries[ENTRY_SIG]++;
	if (group < 0) /* a snapshot's signatures stay where they were */
		matcher_spread(m, e, id, &keys);
	return 0;
}

_Static_assert(sizeof(struct store_item) == 8, "an entry's item is 8 bytes, its holders and group apart");
_Static_assert(ENTRY_MAX_KEY <= STORE_MAX_BYTES, "every entry's key fits the store");

int matcher_hold(struct matcher *m, const struct entry *e, uint32_t holders, char *err, size_t errlen)
{
	BLOOMD_CHECK(holders != 0); /* an entry no one holds is no entry */
	int rc = e->kind == ENTRY_SIG ? add_signature(m, e, -1, MATCHER_WINDOW_ANY, holders, err, errlen)
				       : add_address(m, e, -1, holders, err, errlen);

	m->changes++;
	if (rc >= 0)
		matcher_log_hold(m, e, holders);
	else
		matcher_log_reshaped(m); /* what a failure left, a copy cannot be told */
	return rc;
}

void matcher_prefetch(const struct matcher *m, const struct entry *e)
{
	if (e->kind != ENTRY_SIG) /* a signature's windows are many, and its lists short */
		store_prefetch(m->addr.store, addr_hash(m, e->kind, e->key, e->len));
}

int matcher_add(struct matcher *m, const struct entry *e, char *err, size_t errlen)
{
	return matcher_hold(m, e, MATCHER_HOLDER_DEFAULT, err, errlen);
}

int matcher_add_restored(struct matcher *m, const struct entry *e, unsigned group, unsigned window, char *err,
			 size_t errlen)
{
	if (m->built || group >= FILTER_MAX_CHOICES) {
		error_set(err, errlen, m->built ? "the filters are built already" :
			  "group %u is out of range", group);
		return -1;
	}
	m->changes++;
	matcher_log_reshaped(m);
	if (e->kind == ENTRY_SIG)
		return add_signature(m, e, (int)group, window, MATCHER_HOLDER_DEFAULT, err, errlen);
	return add_address(m, e, (int)group, MATCHER_HOLDER_DEFAULT, err, errlen);
}

/* ---- removing and looking up ---- */

static void net_length_unused(struct matcher *m, int v6, unsigned len)
{
	if (--m->net_count[v6][len] == 0)
		net_lengths_refresh(m, v6);
}

static int remove_address(struct matcher *m, const struct entry *e)
{
	struct hash128 h = addr_hash(m, e->kind, e->key, e->len);
	ssize_t at = store_find(m->addr.store, h, (uint8_t)e->kind, e->key, e->len);

	if (at < 0)
		return 1;
	holders_changed(m, e->kind, e->key, e->len, store_holders(m->addr.store, (size_t)at), 0);
	matcher_filter_out(m, &m->addr, (size_t)at);
	store_remove(m->addr.store, (size_t)at);
	m->kind_entries[e->kind]--;
	if (e->kind == ENTRY_NET)
		net_length_unused(m, e->len == 17, e->key[0]);
	return 0;
}

/* Rewrite the signature arena without the bytes of removed signatures. */
static void sig_arena_compact(struct matcher *m)
{
	struct arena_compaction c;

	if (!arena_compact_begin(&m->sig_arena, &c))
		return; /* keep the garbage; try again later */
	for (size_t w = 0; w < store_count(m->sig.store); w++)
		for (uint32_t id = m->heads[w]; id != NO_SIG; id = m->sigs[id].next)
			arena_compact_move(&m->sig_arena, &c, &m->sigs[id].offset, m->sigs[id].len);
	arena_compact_end(&m->sig_arena, &c);
}

/* Signature e's id (and its window's index, and the id before it in the window), or NO_SIG. */
static uint32_t find_signature(const struct matcher *m, const struct entry *e, ssize_t *window,
			       uint32_t *prev)
{
	struct sig_place p;

	*prev = NO_SIG;
	if (e->len < m->cfg.window)
		return NO_SIG;
	matcher_place_signature(m, e, &p, NULL);
	*window = p.index;
	*prev = p.prev;
	return p.id;
}

static int remove_signature(struct matcher *m, const struct entry *e)
{
	ssize_t index;
	uint32_t prev, id = find_signature(m, e, &index, &prev);

	if (id == NO_SIG)
		return 1;
	if (prev == NO_SIG)
		m->heads[index] = m->sigs[id].next;
	else
		m->sigs[prev].next = m->sigs[id].next;
	drop_sig(m, id);
	m->kind_entries[ENTRY_SIG]--;
	if (m->heads[index] == NO_SIG)
		matcher_remove_window(m, (size_t)index);
	if (arena_wants_compact(&m->sig_arena))
		sig_arena_compact(m);
	return 0;
}

int matcher_remove(struct matcher *m, const struct entry *e)
{
	m->changes++;
	matcher_log_remove(m, e);
	return e->kind == ENTRY_SIG ? remove_signature(m, e) : remove_address(m, e);
}

bool matcher_lookup(const struct matcher *m, const struct entry *e, bool *filter_says)
{
	*filter_says = false;
	if (e->kind != ENTRY_SIG) {
		struct hash128 h = addr_hash(m, e->kind, e->key, e->len);
		if (m->addr.counting)
			*filter_says = filter_query(counting_filter(m->addr.counting), h);
		return store_find(m->addr.store, h, (uint8_t)e->kind, e->key, e->len) >= 0;
	}
	if (e->len < m->cfg.window)
		return false;
	struct sig_place p;
	matcher_place_signature(m, e, &p, NULL); /* its window, or the one it would take */
	if (m->sig.counting)
		*filter_says = filter_query(counting_filter(m->sig.counting), p.h);
	return p.id != NO_SIG;
}

/* ---- holders ---- */

uint32_t matcher_holders(const struct matcher *m, const struct entry *e)
{
	if (e->kind == ENTRY_SIG) {
		ssize_t window;
		uint32_t prev, id = find_signature(m, e, &window, &prev);
		return id == NO_SIG ? 0 : m->sigs[id].holders;
	}
	ssize_t at = store_find(m->addr.store, addr_hash(m, e->kind, e->key, e->len), (uint8_t)e->kind,
				e->key, e->len);
	return at < 0 ? 0 : store_holders(m->addr.store, (size_t)at);
}

/* Set the holders of an entry that is there; none left takes it out. */
static void set_holders(struct matcher *m, const struct entry *e, uint32_t holders)
{
	if (holders == 0) {
		matcher_remove(m, e);
	} else if (e->kind == ENTRY_SIG) {
		ssize_t window;
		uint32_t prev, id = find_signature(m, e, &window, &prev);
		holders_changed(m, ENTRY_SIG, e->key, e->len, m->sigs[id].holders, holders);
		m->sigs[id].holders = holders;
	} else {
		ssize_t at = store_find(m->addr.store, addr_hash(m, e->kind, e->key, e->len),
					(uint8_t)e->kind, e->key, e->len);
		holders_changed(m, e->kind, e->key, e->len, store_holders(m->addr.store, (size_t)at), holders);
		store_set_holders(m->addr.store, (size_t)at, holders);
	}
}

int matcher_release(struct matcher *m, const struct entry *e, uint32_t holders, uint32_t *left)
{
	uint32_t held = matcher_holders(m, e);

	*left = 0;
	if (held == 0)
		return 1;
	*left = held & ~holders;
	m->changes++;
	matcher_log_release(m, e, holders);
	set_holders(m, e, *left);
	return 0;
}

/* What rehold makes of an entry's holders (matcher_rehold). */
static uint32_t reheld(uint32_t h, uint32_t from, uint32_t to)
{
	uint32_t out = h;

	if ((h & to) && !(h & from))
		out &= ~to;
	if (h & from)
		out = (out & ~from) | to;
	return out;
}

uint64_t matcher_rehold(struct matcher *m, uint32_t from, uint32_t to, uint64_t *gained)
{
	struct entry e;
	uint64_t dropped = 0, got = 0;

	m->changes++;
	matcher_log_rehold(m, from, to);
	/*
	 * Downwards: a removal moves the last entry (or window) into the hole, which was seen
	 * already. Only an entry held by from or to changes.
	 */
	for (ssize_t at = store_held_below(m->addr.store, SIZE_MAX, 0, from | to); at >= 0;
	     at = store_held_below(m->addr.store, (size_t)at, 0, from | to)) {
		size_t i = (size_t)at;
		uint32_t h = store_holders(m->addr.store, i), out = reheld(h, from, to);
		if (out == h)
			continue;
		dropped += (h & to) && !(out & to);
		got += !(h & to) && (out & to);
		uint8_t kind;
		const uint8_t *key;
		size_t len;
		store_entry(m->addr.store, i, &kind, &key, &len);
		if (out) {
			holders_changed(m, kind, key, len, h, out);
			store_set_holders(m->addr.store, i, out);
		}
		if (out && (h & to) == (out & to))
			continue;
		e.kind = kind;
		e.len = (uint16_t)len;
		memcpy(e.key, key, len);
		matcher_log_named(m, &e); /* the views' diff */
		if (out == 0)
			remove_address(m, &e);
	}
	e.kind = ENTRY_SIG;
	for (size_t w = store_count(m->sig.store); w-- > 0;) {
		for (uint32_t id = m->heads[w], next; id != NO_SIG; id = next) {
			uint32_t h = m->sigs[id].holders, out = reheld(h, from, to);
			next = m->sigs[id].next;
			dropped += (h & to) && !(out & to);
			got += !(h & to) && (out & to);
			if (out) {
				holders_changed(m, ENTRY_SIG, m->sig_arena.bytes + m->sigs[id].offset, m->sigs[id].len, h, out);
				m->sigs[id].holders = out;
			}
			if (out == h || (out && (h & to) == (out & to)))
				continue;
			e.len = m->sigs[id].len;
			memcpy(e.key, m->sig_arena.bytes + m->sigs[id].offset, e.len);
			matcher_log_named(m, &e);
			if (out == 0)
				remove_signature(m, &e); /* ids stay: next is still good */
		}
	}
	if (gained)
		*gained = got;
	return dropped;
}
