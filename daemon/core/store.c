/* store.c - the exact entries behind the filter: bytes, kind, chosen group. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "store.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

#define MIN_SLOTS 16

struct store *store_new(void)
{
	struct store *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->table.slots = calloc(MIN_SLOTS, sizeof(*s->table.slots));
	if (s->table.slots == NULL) {
		free(s);
		return NULL;
	}
	s->table.n = MIN_SLOTS;
	return s;
}

void store_free(struct store *s)
{
	if (s == NULL)
		return;
	free(s->hash_hi);
	free(s->items);
	free(s->holders);
	free(s->held_blocks);
	free(s->groups);
	arena_free(&s->arena);
	free(s->table.slots);
	free(s->growing.slots);
	free(s);
}

struct store *store_clone(const struct store *s)
{
	struct store *c = calloc(1, sizeof(*c));
	bool failed = false;

	if (c == NULL)
		return NULL;
	c->count = c->cap = s->count;
	c->table.n = s->table.n;
	c->growing.n = s->growing.n;
	c->moved = s->moved;
	c->hash_hi = array_dup(s->hash_hi, s->count * sizeof(*s->hash_hi), &failed);
	c->items = array_dup(s->items, s->count * sizeof(*s->items), &failed);
	c->holders = array_dup(s->holders, s->count * sizeof(*s->holders), &failed);
	c->held_blocks_cap = (s->count + STORE_HELD_BLOCK - 1) / STORE_HELD_BLOCK;
	c->held_blocks = array_dup(s->held_blocks, c->held_blocks_cap * sizeof(*s->held_blocks), &failed);
	c->groups = array_dup(s->groups, s->count * sizeof(*s->groups), &failed);
	c->table.slots = array_dup(s->table.slots, s->table.n * sizeof(*s->table.slots), &failed);
	if (s->growing.slots)
		c->growing.slots = array_dup(s->growing.slots, s->growing.n * sizeof(*s->growing.slots), &failed);
	if (failed || arena_copy(&c->arena, &s->arena) < 0) {
		store_free(c);
		return NULL;
	}
	return c;
}

size_t store_count(const struct store *s)
{
	return s->count;
}

/*
 * The top bits of the hash's high word: the keyed hashes the store is given
 * (XXH3, and the signature windows' multiply, sigscan_hash) mix every input
 * bit into them, where a product's low bits see only the input's low bits,
 * so windows sharing their first bytes would share a home and probe in one
 * run.
 */
static inline size_t home_slot(const struct store_table *t, uint64_t hi)
{
	return (size_t)(hi >> (64 - __builtin_ctzll((unsigned long long)t->n)));
}

/*
 * A slot holds its entry's index + 1 in its low SLOT_INDEX_BITS (0: empty)
 * and a tag of the entry's hash above them, so a probe passes 15 of 16 of
 * the run's other entries without reading their hash, a line elsewhere at
 * random (at three quarters full a miss walks about 8 slots). The tag is
 * bits 32-35 of the high word: below the home bits of a table of up to 2^28
 * slots (201 million entries; the largest, 2^29, shares one bit), and made
 * from 33 input bits or more by the windows' multiply too.
 */
#define SLOT_INDEX_BITS 28
#define SLOT_INDEX_MASK ((1u << SLOT_INDEX_BITS) - 1)

static inline uint32_t slot_tag(uint64_t hi)
{
	return (uint32_t)((hi >> 32) & 0xf) << SLOT_INDEX_BITS;
}

static inline uint32_t slot_value(uint64_t hi, size_t i)
{
	return slot_tag(hi) | (uint32_t)(i + 1);
}

static inline size_t slot_index(uint32_t v)
{
	return (v & SLOT_INDEX_MASK) - 1;
}

static bool inline_key(size_t len)
{
	return len <= STORE_INLINE_BYTES;
}

/* Item it's key bytes: in the item, or in the arena. */
static const uint8_t *key_of(const struct store *s, const struct store_item *it)
{
	return inline_key(it->len) ? it->key.bytes : s->arena.bytes + it->key.offset;
}

static bool entry_is(const struct store *s, size_t i, uint64_t hi, uint8_t kind, const void *bytes,
		     size_t len)
{
	const struct store_item *it = &s->items[i];

	return s->hash_hi[i] == hi && it->kind == kind && it->len == len &&
	       memcmp(key_of(s, it), bytes, len) == 0;
}

/* The slot of t holding entry i (by its hash's high word), which must be there. */
static size_t slot_of(const struct store_table *t, uint64_t hi, size_t i)
{
	size_t slot = home_slot(t, hi);

	while (t->slots[slot] != slot_value(hi, i))
		slot = (slot + 1) & (t->n - 1);
	return slot;
}

ssize_t store_find(const struct store *s, struct hash128 h, uint8_t kind, const void *bytes,
		   size_t len)
{
	const struct store_table *t = &s->table;
	uint32_t tag = slot_tag(h.hi);

	for (size_t slot = home_slot(t, h.hi);; slot = (slot + 1) & (t->n - 1)) {
		uint32_t v = t->slots[slot];
		if (v == 0)
			return -1;
		if ((v & ~SLOT_INDEX_MASK) == tag && entry_is(s, slot_index(v), h.hi, kind, bytes, len))
			return (ssize_t)slot_index(v);
	}
}

void store_prefetch(const struct store *s, struct hash128 h)
{
	__builtin_prefetch(&s->table.slots[home_slot(&s->table, h.hi)]);
}

static void slot_insert(struct store_table *t, uint64_t hi, size_t i)
{
	size_t slot = home_slot(t, hi);

	while (t->slots[slot] != 0)
		slot = (slot + 1) & (t->n - 1);
	t->slots[slot] = slot_value(hi, i);
}

/* Linear probing deletion without tombstones: shift later members of the run back. */
static void slot_delete(const struct store *s, struct store_table *t, size_t hole)
{
	size_t mask = t->n - 1;

	for (size_t next = (hole + 1) & mask; t->slots[next] != 0; next = (next + 1) & mask) {
		size_t home = home_slot(t, s->hash_hi[slot_index(t->slots[next])]);
		/* Move next into the hole unless its home lies cyclically in (hole, next]. */
		if (((next - home) & mask) >= ((next - hole) & mask)) {
			t->slots[hole] = t->slots[next];
			hole = next;
		}
	}
	t->slots[hole] = 0;
}

/* A few more entries into the growing table; once it has them all, it is the table. */
static void grow_step(struct store *s)
{
	if (s->growing.slots == NULL)
		return;
	for (unsigned k = 0; k < STORE_GROW_STEP && s->moved < s->count; k++, s->moved++)
		slot_insert(&s->growing, s->hash_hi[s->moved], s->moved);
	/* The next step's slots asked for now: each is a line of the bigger table, at random. */
	for (size_t k = s->moved; k < s->moved + STORE_GROW_STEP && k < s->count; k++)
		__builtin_prefetch(&s->growing.slots[home_slot(&s->growing, s->hash_hi[k])], 1);
	if (s->moved < s->count)
		return;
	free(s->table.slots);
	s->table = s->growing;
	s->growing = (struct store_table){ 0 };
	s->moved = 0;
}

/*
 * A table three quarters full: one twice its size begins. Linear probing's
 * runs lie in a line or two of the cache even then; at most half full, the
 * table took 13.4 bytes an entry at 10,000,000 entries, where it takes 6.7.
 */
static int grow_begin(struct store *s)
{
	size_t n = s->table.n * 2;
	uint32_t *slots = calloc(n, sizeof(*slots)); /* fresh pages: no time until written */

	if (slots == NULL)
		return -1;
	memory_prefer_huge(slots, n * sizeof(*slots));
	s->growing = (struct store_table){ slots, n };
	s->moved = 0;
	return 0;
}

static int entries_reserve(struct store *s)
{
	const struct array_spec arrays[] = {
		{ (void **)&s->hash_hi, sizeof(*s->hash_hi) },
		{ (void **)&s->items, sizeof(*s->items) },
		{ (void **)&s->holders, sizeof(*s->holders) },
		{ (void **)&s->groups, sizeof(*s->groups) },
	};

	if (s->count >= SLOT_INDEX_MASK - 1) /* 268,435,454 entries: a slot's index is full */
		return -1;
	if (arrays_grow(arrays, 4, &s->cap, s->count + 1) < 0)
		return -1;
	return array_grow((void **)&s->held_blocks, &s->held_blocks_cap, s->cap / STORE_HELD_BLOCK + 1,
			  sizeof(*s->held_blocks));
}

ssize_t store_add(struct store *s, struct hash128 h, uint8_t kind, const void *bytes,
		  size_t len, uint8_t group)
{
	size_t i = s->count;

	if (len == 0 || len > STORE_MAX_BYTES) {
		errno = EINVAL;
		return -1;
	}
	if (store_find(s, h, kind, bytes, len) >= 0) {
		errno = EEXIST;
		return -1;
	}
	struct store_item it = { .len = (uint16_t)len, .kind = kind };
	int64_t offset = 0;
	bool outgrown = s->growing.slots == NULL && (s->count + 1) * 4 > s->table.n * 3;
	if (entries_reserve(s) < 0 || (outgrown && grow_begin(s) < 0) ||
	    (!inline_key(len) && (offset = arena_put(&s->arena, bytes, len)) < 0)) {
		errno = ENOMEM;
		return -1;
	}
	if (offset > (int64_t)UINT32_MAX) { /* past what an item can point at */
		arena_drop(&s->arena, len);
		errno = ENOMEM;
		return -1;
	}
	if (inline_key(len))
		memcpy(it.key.bytes, bytes, len);
	else
		it.key.offset = (uint32_t)offset;
	s->items[i] = it;
	s->holders[i] = 0;
	if (i % STORE_HELD_BLOCK == 0) /* a block begun (again): none of its entries is held */
		s->held_blocks[i / STORE_HELD_BLOCK] = 0;
	s->groups[i] = group;
	s->hash_hi[i] = h.hi;
	s->count++;
	slot_insert(&s->table, h.hi, i); /* the growing table takes it in its turn (i >= moved) */
	grow_step(s);
	return (ssize_t)i;
}

/* Rewrite the arena without the bytes of removed entries. */
static void compact(struct store *s)
{
	struct arena_compaction c;

	if (!arena_compact_begin(&s->arena, &c))
		return; /* keep the garbage; try again on a later remove */
	for (size_t i = 0; i < s->count; i++) {
		if (inline_key(s->items[i].len))
			continue;
		uint64_t offset = s->items[i].key.offset;
		arena_compact_move(&s->arena, &c, &offset, s->items[i].len);
		s->items[i].key.offset = (uint32_t)offset; /* no further than it was */
	}
	arena_compact_end(&s->arena, &c);
}

void store_remove(struct store *s, size_t i)
{
	size_t last = s->count - 1;
	bool growing = s->growing.slots != NULL;

	slot_delete(s, &s->table, slot_of(&s->table, s->hash_hi[i], i));
	if (growing && i < s->moved)
		slot_delete(s, &s->growing, slot_of(&s->growing, s->hash_hi[i], i));
	if (!inline_key(s->items[i].len))
		arena_drop(&s->arena, s->items[i].len);
	if (i != last) { /* the last entry moves to i: each table that has it says so */
		uint64_t hi = s->hash_hi[last];
		s->table.slots[slot_of(&s->table, hi, last)] = slot_value(hi, i);
		if (growing && last < s->moved)
			s->growing.slots[slot_of(&s->growing, hi, last)] = slot_value(hi, i);
		else if (growing && i < s->moved)
			slot_insert(&s->growing, hi, i);
		s->hash_hi[i] = hi;
		s->items[i] = s->items[last];
		store_set_holders(s, i, s->holders[last]);
		s->groups[i] = s->groups[last];
	}
	s->count--;
	if (s->moved > s->count)
		s->moved = s->count;
	grow_step(s);
	if (arena_wants_compact(&s->arena))
		compact(s);
}

void store_entry(const struct store *s, size_t i, uint8_t *kind, const uint8_t **bytes,
		 size_t *len)
{
	*kind = s->items[i].kind;
	*bytes = key_of(s, &s->items[i]);
	*len = s->items[i].len;
}

size_t store_bytes(const struct store *s)
{
	size_t entry = sizeof(*s->hash_hi) + sizeof(*s->items) + sizeof(*s->holders) + sizeof(*s->groups);

	return sizeof(*s) + s->cap * entry + s->held_blocks_cap * sizeof(*s->held_blocks) + s->arena.cap +
	       (s->table.n + s->growing.n) * sizeof(*s->table.slots);
}

/* The holders of n entries together (vector ORs, for a block's STORE_HELD_BLOCK). */
static uint32_t holders_of(const uint32_t *h, size_t n)
{
	uint32_t any = 0;

	if (n == STORE_HELD_BLOCK) {
		for (size_t k = 0; k < STORE_HELD_BLOCK; k++)
			any |= h[k];
		return any;
	}
	for (size_t k = 0; k < n; k++)
		any |= h[k];
	return any;
}

ssize_t store_held_below(const struct store *s, size_t i, size_t floor, uint32_t mask)
{
	if (i > s->count)
		i = s->count;
	while (i > floor) {
		size_t b = (i - 1) / STORE_HELD_BLOCK, start = b * STORE_HELD_BLOCK;
		size_t top = start + STORE_HELD_BLOCK < s->count ? start + STORE_HELD_BLOCK : s->count;
		size_t low = start > floor ? start : floor;
		/* Its word may keep a holder let go since: the block says (once a pass, from its top). */
		if ((s->held_blocks[b] & mask) && i == top)
			s->held_blocks[b] = holders_of(s->holders + start, top - start);
		if (!(s->held_blocks[b] & mask)) {
			i = low;
			continue;
		}
		while (i > low)
			if (s->holders[--i] & mask)
				return (ssize_t)i;
	}
	return -1;
}

int store_take_groups(struct store *s, uint8_t **groups, size_t *room)
{
	uint8_t *taken = *groups;

	/* Given the store's room: a large block grows by remapping its pages, not by a copy. */
	if (*room < s->cap && (taken = realloc(taken, s->cap)) == NULL)
		return -1;
	*groups = s->groups;
	*room = s->cap;
	s->groups = taken;
	return 0;
}
