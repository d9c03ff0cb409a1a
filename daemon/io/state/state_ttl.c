/* state_ttl.c - entries that expire: their expiry times, soonest first. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "state_ttl.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "arena.h"
#include "hash.h"
#include "store.h"

/*
 * The entries with an expiry live in a store (exact membership, dense
 * indices); expiry and heap position are arrays beside it, moved with the
 * store's entries when it fills a hole with its last one.
 */
struct state_ttl {
	struct hash_key key;
	struct store *entries;
	uint64_t *expiry;        /* per store index */
	size_t *heap_at;         /* per store index: its place in the heap */
	size_t *heap;            /* store indices, soonest expiry first */
	size_t cap;
	uint64_t sum;            /* of state_ttl_item_digest over the entries: the same on every node that holds them */
};

struct state_ttl *state_ttl_new(void)
{
	struct state_ttl *t = calloc(1, sizeof(*t));

	if (t == NULL || hash_key_random(&t->key, HASH_XXH3) < 0 || (t->entries = store_new()) == NULL) {
		free(t);
		return NULL;
	}
	return t;
}

void state_ttl_free(struct state_ttl *t)
{
	if (t == NULL)
		return;
	store_free(t->entries);
	free(t->expiry);
	free(t->heap_at);
	free(t->heap);
	free(t);
}

size_t state_ttl_count(const struct state_ttl *t)
{
	return store_count(t->entries);
}

/* ---- the heap ---- */

static void heap_put(struct state_ttl *t, size_t at, size_t item)
{
	t->heap[at] = item;
	t->heap_at[item] = at;
}

static bool earlier(const struct state_ttl *t, size_t a, size_t b)
{
	return t->expiry[t->heap[a]] < t->expiry[t->heap[b]];
}

static void heap_swap(struct state_ttl *t, size_t a, size_t b)
{
	size_t ia = t->heap[a], ib = t->heap[b];

	heap_put(t, a, ib);
	heap_put(t, b, ia);
}

static void heap_fix(struct state_ttl *t, size_t at)
{
	size_t n = store_count(t->entries);

	while (at > 0 && earlier(t, at, (at - 1) / 2)) {
		heap_swap(t, at, (at - 1) / 2);
		at = (at - 1) / 2;
	}
	for (;;) {
		size_t l = 2 * at + 1, r = l + 1, min = at;
		if (l < n && earlier(t, l, min))
			min = l;
		if (r < n && earlier(t, r, min))
			min = r;
		if (min == at)
			return;
		heap_swap(t, at, min);
		at = min;
	}
}

/* ---- entries ---- */

uint64_t state_ttl_item_digest(unsigned kind, const uint8_t *key, size_t len, uint64_t expiry)
{
	return XXH3_64bits_withSeed(key, len, expiry * 0x9E3779B97F4A7C15ull + kind + 1);
}

/* The store's entry at index, in or out (sign) of the sum. */
static void account(struct state_ttl *t, size_t index, int sign)
{
	uint8_t kind;
	const uint8_t *key;
	size_t len;

	store_entry(t->entries, index, &kind, &key, &len);
	uint64_t d = state_ttl_item_digest(kind, key, len, t->expiry[index]);
	t->sum += sign > 0 ? d : -d;
}

static struct hash128 item_hash(const struct state_ttl *t, const struct entry *e)
{
	return hash_bytes_domain(&t->key, e->kind, e->key, e->len);
}

static void item_remove(struct state_ttl *t, size_t index)
{
	size_t last = store_count(t->entries) - 1, hole = t->heap_at[index];

	account(t, index, -1);
	/* Out of the heap: its last element takes the hole. */
	heap_put(t, hole, t->heap[last]);
	/* Out of the store: its last entry takes index, and its times come along. */
	store_remove(t->entries, index);
	if (index != last) {
		t->expiry[index] = t->expiry[last];
		t->heap_at[index] = t->heap_at[last];
		t->heap[t->heap_at[index]] = index;
	}
	if (hole < last)
		heap_fix(t, hole);
}

static int grow(struct state_ttl *t)
{
	const struct array_spec arrays[] = {
		{ (void **)&t->expiry, sizeof(*t->expiry) },
		{ (void **)&t->heap_at, sizeof(*t->heap_at) },
		{ (void **)&t->heap, sizeof(*t->heap) },
	};

	return arrays_grow(arrays, 3, &t->cap, t->cap + 1);
}

int state_ttl_set(struct state_ttl *t, const struct entry *e, uint64_t expiry)
{
	struct hash128 h = item_hash(t, e);
	ssize_t i = store_find(t->entries, h, (uint8_t)e->kind, e->key, e->len);

	if (i >= 0) {
		if (expiry == 0) {
			item_remove(t, (size_t)i);
		} else {
			account(t, (size_t)i, -1);
			t->expiry[i] = expiry;
			account(t, (size_t)i, 1);
			heap_fix(t, t->heap_at[i]);
		}
		return 0;
	}
	if (expiry == 0)
		return 0;
	if (store_count(t->entries) == t->cap && grow(t) < 0)
		return -1;
	i = store_add(t->entries, h, (uint8_t)e->kind, e->key, e->len, 0);
	if (i < 0)
		return -1;
	t->expiry[i] = expiry;
	account(t, (size_t)i, 1);
	heap_put(t, (size_t)i, (size_t)i); /* the store appended it: the heap's last place */
	heap_fix(t, (size_t)i);
	return 0;
}

uint64_t state_ttl_get(const struct state_ttl *t, const struct entry *e)
{
	if (store_count(t->entries) == 0)
		return 0; /* no hashing for each entry of a snapshot when nothing expires */
	ssize_t i = store_find(t->entries, item_hash(t, e), (uint8_t)e->kind, e->key, e->len);

	return i >= 0 ? t->expiry[i] : 0;
}

int state_ttl_pop_expired(struct state_ttl *t, uint64_t now, struct entry *e)
{
	uint8_t kind;
	const uint8_t *key;
	size_t len;

	if (store_count(t->entries) == 0 || t->expiry[t->heap[0]] > now)
		return 0;
	store_entry(t->entries, t->heap[0], &kind, &key, &len);
	e->kind = kind;
	e->len = (uint16_t)len;
	memcpy(e->key, key, len);
	item_remove(t, t->heap[0]);
	return 1;
}

uint64_t state_ttl_sum(const struct state_ttl *t)
{
	return t->sum;
}

/* The heap below at, where the expiry is at or before horizon: a min-heap's such part is a subtree at its root. */
static void due_from(const struct state_ttl *t, size_t at, uint64_t horizon, state_ttl_due_cb cb, void *ctx)
{
	size_t n = store_count(t->entries);
	uint8_t kind;
	const uint8_t *key;
	size_t len;

	if (at >= n || t->expiry[t->heap[at]] > horizon)
		return;
	store_entry(t->entries, t->heap[at], &kind, &key, &len);
	cb(ctx, kind, key, len, t->expiry[t->heap[at]]);
	due_from(t, 2 * at + 1, horizon, cb, ctx);
	due_from(t, 2 * at + 2, horizon, cb, ctx);
}

void state_ttl_due(const struct state_ttl *t, uint64_t horizon, state_ttl_due_cb cb, void *ctx)
{
	due_from(t, 0, horizon, cb, ctx);
}
