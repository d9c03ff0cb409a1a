/* ttl.c - entries that expire: their expiry times, soonest first. */
#include "ttl.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

struct ttl_item {
	uint64_t expiry;
	uint64_t hash;
	uint8_t *key;
	uint16_t len;
	uint8_t kind;
	size_t heap_at;          /* where in the heap */
};

struct ttl {
	struct ttl_item *items;  /* dense */
	size_t count, cap;
	size_t *heap;            /* item indices, soonest expiry first */
	size_t *slots;           /* item index + 1; 0 = empty */
	size_t nslots;           /* a power of two, at least twice count */
};

struct ttl *ttl_new(void)
{
	return calloc(1, sizeof(struct ttl));
}

void ttl_free(struct ttl *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->count; i++)
		free(t->items[i].key);
	free(t->items);
	free(t->heap);
	free(t->slots);
	free(t);
}

size_t ttl_count(const struct ttl *t)
{
	return t->count;
}

static uint64_t entry_hash(const struct entry *e)
{
	return XXH3_64bits_withSeed(e->key, e->len, (uint64_t)e->kind);
}

static bool item_is(const struct ttl_item *it, uint64_t h, const struct entry *e)
{
	return it->hash == h && it->kind == e->kind && it->len == e->len &&
	       memcmp(it->key, e->key, e->len) == 0;
}

/* The slot holding e, or the empty slot where it would go. */
static size_t slot_of(const struct ttl *t, uint64_t h, const struct entry *e)
{
	size_t mask = t->nslots - 1, s = (size_t)h & mask;

	while (t->slots[s] && !item_is(&t->items[t->slots[s] - 1], h, e))
		s = (s + 1) & mask;
	return s;
}

static size_t slot_of_item(const struct ttl *t, size_t index)
{
	size_t mask = t->nslots - 1, s = (size_t)t->items[index].hash & mask;

	while (t->slots[s] != index + 1)
		s = (s + 1) & mask;
	return s;
}

static int slots_grow(struct ttl *t)
{
	size_t n = t->nslots ? 2 * t->nslots : 64;
	size_t *slots = calloc(n, sizeof(*slots));

	if (slots == NULL)
		return -1;
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
	for (size_t i = 0; i < t->count; i++) {
		size_t s = (size_t)t->items[i].hash & (n - 1);
		while (slots[s])
			s = (s + 1) & (n - 1);
		slots[s] = i + 1;
	}
	return 0;
}

/* Linear probing deletion without tombstones: shift later members of the run back. */
static void slot_delete(struct ttl *t, size_t hole)
{
	size_t mask = t->nslots - 1;

	t->slots[hole] = 0;
	for (size_t s = (hole + 1) & mask; t->slots[s]; s = (s + 1) & mask) {
		size_t home = (size_t)t->items[t->slots[s] - 1].hash & mask;
		if (((s - home) & mask) >= ((s - hole) & mask)) {
			t->slots[hole] = t->slots[s];
			t->slots[s] = 0;
			hole = s;
		}
	}
}

/* ---- the heap ---- */

static void heap_put(struct ttl *t, size_t at, size_t item)
{
	t->heap[at] = item;
	t->items[item].heap_at = at;
}

static bool earlier(const struct ttl *t, size_t a, size_t b)
{
	return t->items[t->heap[a]].expiry < t->items[t->heap[b]].expiry;
}

static void heap_swap(struct ttl *t, size_t a, size_t b)
{
	size_t ia = t->heap[a], ib = t->heap[b];

	heap_put(t, a, ib);
	heap_put(t, b, ia);
}

static void heap_fix(struct ttl *t, size_t at)
{
	while (at > 0 && earlier(t, at, (at - 1) / 2)) {
		heap_swap(t, at, (at - 1) / 2);
		at = (at - 1) / 2;
	}
	for (;;) {
		size_t l = 2 * at + 1, r = l + 1, min = at;
		if (l < t->count && earlier(t, l, min))
			min = l;
		if (r < t->count && earlier(t, r, min))
			min = r;
		if (min == at)
			return;
		heap_swap(t, at, min);
		at = min;
	}
}

/* ---- items ---- */

static void item_remove(struct ttl *t, size_t index)
{
	size_t last = t->count - 1, hole = t->items[index].heap_at;

	slot_delete(t, slot_of_item(t, index));
	/* Out of the heap: its last element takes the hole. */
	heap_put(t, hole, t->heap[last]);
	free(t->items[index].key);
	/* Out of the dense array: the last item takes index. */
	if (index != last) {
		size_t s = slot_of_item(t, last);
		t->items[index] = t->items[last];
		t->slots[s] = index + 1;
		t->heap[t->items[index].heap_at] = index;
	}
	t->count--;
	if (hole < t->count)
		heap_fix(t, hole);
}

static int item_add(struct ttl *t, uint64_t h, const struct entry *e, uint64_t expiry)
{
	if (t->count == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		struct ttl_item *items = realloc(t->items, cap * sizeof(*items));
		if (items == NULL)
			return -1;
		t->items = items;
		size_t *heap = realloc(t->heap, cap * sizeof(*heap));
		if (heap == NULL)
			return -1;
		t->heap = heap;
		t->cap = cap;
	}
	if ((t->count + 1) * 2 > t->nslots && slots_grow(t) < 0)
		return -1;
	uint8_t *key = malloc(e->len ? e->len : 1);
	if (key == NULL)
		return -1;
	memcpy(key, e->key, e->len);
	size_t i = t->count++;
	t->items[i] = (struct ttl_item){ expiry, h, key, e->len, (uint8_t)e->kind, 0 };
	t->slots[slot_of(t, h, e)] = i + 1;
	heap_put(t, i, i);
	heap_fix(t, i);
	return 0;
}

int ttl_set(struct ttl *t, const struct entry *e, uint64_t expiry)
{
	uint64_t h = entry_hash(e);
	size_t s = t->nslots ? slot_of(t, h, e) : 0;

	if (t->nslots && t->slots[s]) {
		size_t i = t->slots[s] - 1;
		if (expiry == 0) {
			item_remove(t, i);
			return 0;
		}
		t->items[i].expiry = expiry;
		heap_fix(t, t->items[i].heap_at);
		return 0;
	}
	return expiry ? item_add(t, h, e, expiry) : 0;
}

uint64_t ttl_get(const struct ttl *t, const struct entry *e)
{
	if (t->nslots == 0)
		return 0;
	size_t s = slot_of(t, entry_hash(e), e);
	return t->slots[s] ? t->items[t->slots[s] - 1].expiry : 0;
}

int ttl_pop_expired(struct ttl *t, uint64_t now, struct entry *e)
{
	if (t->count == 0 || t->items[t->heap[0]].expiry > now)
		return 0;
	const struct ttl_item *it = &t->items[t->heap[0]];
	e->kind = it->kind;
	e->len = it->len;
	memcpy(e->key, it->key, it->len);
	item_remove(t, t->heap[0]);
	return 1;
}
