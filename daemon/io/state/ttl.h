/* ttl.h - entries that expire: their expiry times, soonest first. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_TTL_H
#define BLOOMD_TTL_H

#include <stddef.h>
#include <stdint.h>

#include "entry.h"

/*
 * A map from entry (kind and key) to its expiry time, with an indexed
 * min-heap beside it, so the next entry to expire is found in O(1) and any
 * entry's time set or cleared in O(log n). Times are Unix seconds; what
 * "expire" does (delete through the counting store) is the caller's.
 */
struct ttl;

struct ttl *ttl_new(void);
void ttl_free(struct ttl *t);

/* Set e's expiry (replacing any); 0 clears it. Returns 0, or -1 without memory. */
int ttl_set(struct ttl *t, const struct entry *e, uint64_t expiry);

/* e's expiry, or 0 if it has none. */
uint64_t ttl_get(const struct ttl *t, const struct entry *e);

/* Take out one entry whose expiry is at or before now: 1 with *e filled, 0 when there is none. */
int ttl_pop_expired(struct ttl *t, uint64_t now, struct entry *e);

size_t ttl_count(const struct ttl *t);

/*
 * An entry with its expiry as a number every node computes alike (XXH3-64,
 * seeded with both), and the sum of those of every entry here: two tables
 * compare in any order, kept as entries come and go.
 */
uint64_t ttl_item_digest(unsigned kind, const uint8_t *key, size_t len, uint64_t expiry);
uint64_t ttl_sum(const struct ttl *t);

/* Each entry whose expiry is at or before horizon (soonest first along each branch of the heap). */
typedef void (*ttl_due_cb)(void *ctx, unsigned kind, const uint8_t *key, size_t len, uint64_t expiry);
void ttl_due(const struct ttl *t, uint64_t horizon, ttl_due_cb cb, void *ctx);

#endif
