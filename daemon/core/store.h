/* store.h - the exact entries behind the filter: bytes, kind, chosen group. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_STORE_H
#define BLOOMD_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arena.h"
#include "hash.h"

/*
 * The store is the truth the filter summarises: every filter positive is
 * confirmed here, and the counting store is rebuilt from it. Entries live in
 * dense arrays (the items, holders and groups each apart, so that a pass
 * over the holders streams through them alone) with their bytes in one
 * arena; an open-addressing table indexed by the entry's keyed hash gives
 * O(1) exact membership.
 *
 * Indices are dense, 0..count-1: removing entry i moves the last entry to i.
 * A store holds at most 268,435,454 entries (an add past them fails, as
 * without memory).
 * The caller supplies each entry's hash (the filter's keyed hash of the
 * bytes, hash.h), so the store and the filter always agree on it. The store
 * keeps its high word alone (the entry's home in the table, its tag, and a
 * comparison before the bytes): the filter's caller hashes the bytes again
 * where it needs the whole (a remove, a rebuild's copy), 8 bytes an entry
 * less held for a hash a packet never asks the store for.
 */

#define STORE_MAX_BYTES 65535

/*
 * 8 bytes an entry (its holders and group apart): a key of up to
 * STORE_INLINE_BYTES (an IPv4 address) is kept in the item itself, a longer
 * one in the arena (at most 4 GiB of them a store).
 */
#define STORE_INLINE_BYTES 4

struct store_item {
	union {
		uint32_t offset;                   /* into the arena */
		uint8_t bytes[STORE_INLINE_BYTES]; /* len <= STORE_INLINE_BYTES: the key itself */
	} key;
	uint16_t len;
	uint8_t kind;
};

/* An open-addressing table of entry index + 1 with a tag of its hash (0: empty), at most 3/4 full (6/7 while it grows). */
struct store_table {
	uint32_t *slots;
	size_t n;         /* a power of two */
};

/*
 * A table outgrowing itself is not copied at once (a million entries would
 * hold the caller 50 ms): a table twice its size is filled a few entries at
 * each add and remove (STORE_GROW_STEP), lookups staying with the old one,
 * and takes its place once it has them all, before the old one is 6/7 full.
 */
#define STORE_GROW_STEP 8

struct store {
	size_t count, cap;
	uint64_t *hash_hi;          /* each entry's hash's high word */
	struct store_item *items;
	uint32_t *holders;          /* who holds each entry (matcher.h): an array of their own, so that a
				       list's version, which reads every entry's, reads no more */
	uint32_t *held_blocks;      /* per STORE_HELD_BLOCK entries, every holder any of them has (and
				       perhaps some let go since: store_held_below) */
	size_t held_blocks_cap;
	uint8_t *groups;            /* the group its filter counts each entry in: an array of its own,
				       so that a rebuild's result takes its place at once */
	struct arena arena;
	struct store_table table;   /* every entry: where they are looked up */
	struct store_table growing; /* while table grows: twice its size, entries 0..moved-1 in it; else empty */
	size_t moved;
};

/* An empty store, or NULL without memory. */
struct store *store_new(void);
void store_free(struct store *s);

/* A copy of s that shares nothing with it, or NULL without memory. */
struct store *store_clone(const struct store *s);

size_t store_count(const struct store *s);

/* Index of the entry (kind, bytes), or -1 if absent. */
ssize_t store_find(const struct store *s, struct hash128 h, uint8_t kind, const void *bytes,
		   size_t len);

/* A hint: the table's line where a find or add of hash h begins is asked for now (a miss, at random in a large table). */
void store_prefetch(const struct store *s, struct hash128 h);

/*
 * Add an entry counted in group. Returns its index, or -1 with errno EEXIST
 * (present already; nothing changed), EINVAL (len 0 or over STORE_MAX_BYTES)
 * or ENOMEM.
 */
ssize_t store_add(struct store *s, struct hash128 h, uint8_t kind, const void *bytes,
		  size_t len, uint8_t group);

/* Remove entry i; the last entry takes index i. */
void store_remove(struct store *s, size_t i);

/* Entry i's kind and bytes (valid until the next add or remove). */
void store_entry(const struct store *s, size_t i, uint8_t *kind, const uint8_t **bytes,
		 size_t *len);

/* The entries whose holders one word of held_blocks sums up. */
#define STORE_HELD_BLOCK 64

/* Entry i's holders (0 when added), and setting them: inline, as a list's version reads every entry's. */
static inline uint32_t store_holders(const struct store *s, size_t i)
{
	return s->holders[i];
}

static inline void store_set_holders(struct store *s, size_t i, uint32_t holders)
{
	s->holders[i] = holders;
	s->held_blocks[i / STORE_HELD_BLOCK] |= holders;
}

/*
 * The last entry from floor up to below i (the count, if i is past it) that
 * any holder of mask holds, or -1 if none: a pass over some holders'
 * entries, which passes over a block of entries held by none of them by
 * its word in held_blocks. A block whose word has a bit of mask that none
 * of its entries has any more (a holder let go) is read once, entered from
 * its top, and its word made exact: the words are the loop's alone, as the
 * holders are.
 */
ssize_t store_held_below(const struct store *s, size_t i, size_t floor, uint32_t mask);

/* Entry i's group, and setting it. */
static inline unsigned store_group(const struct store *s, size_t i)
{
	return s->groups[i];
}

static inline void store_set_group(struct store *s, size_t i, unsigned group)
{
	s->groups[i] = (uint8_t)group;
}

/*
 * Every entry's group at once: *groups (an entry's at its index, room for
 * *room) takes the place of the store's, which is handed back in it. 0, or
 * -1 without memory to give it the store's room (nothing changed).
 */
int store_take_groups(struct store *s, uint8_t **groups, size_t *room);

/* Memory held, in bytes. */
size_t store_bytes(const struct store *s);

#endif
