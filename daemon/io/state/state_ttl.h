/* state_ttl.h - entries that expire: their expiry times, soonest first. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_STATE_TTL_H
#define BLOOMD_STATE_TTL_H

#include <stddef.h>
#include <stdint.h>

#include "entry.h"

/*
 * A map from entry (kind and key) to its expiry time, with an indexed
 * min-heap beside it, so the next entry to expire is found in O(1) and any
 * entry's time set or cleared in O(log n). Times are Unix seconds; what
 * "expire" does (delete through the counting store) is the caller's.
 */
struct state_ttl;

struct state_ttl *state_ttl_new(void);
void state_ttl_free(struct state_ttl *t);

/* Set e's expiry (replacing any); 0 clears it. Returns 0, or -1 without memory. */
int state_ttl_set(struct state_ttl *t, const struct entry *e, uint64_t expiry);

/* e's expiry, or 0 if it has none. */
uint64_t state_ttl_get(const struct state_ttl *t, const struct entry *e);

/* Take out one entry whose expiry is at or before now: 1 with *e filled, 0 when there is none. */
int state_ttl_pop_expired(struct state_ttl *t, uint64_t now, struct entry *e);

size_t state_ttl_count(const struct state_ttl *t);

/*
 * An entry with its expiry as a number every node computes alike (XXH3-64,
 * seeded with both), and the sum of those of every entry here: two tables
 * compare in any order, kept as entries come and go.
 */
uint64_t state_ttl_item_digest(unsigned kind, const uint8_t *key, size_t len, uint64_t expiry);
uint64_t state_ttl_sum(const struct state_ttl *t);

/* Each entry whose expiry is at or before horizon (soonest first along each branch of the heap). */
typedef void (*state_ttl_due_cb)(void *ctx, unsigned kind, const uint8_t *key, size_t len, uint64_t expiry);
void state_ttl_due(const struct state_ttl *t, uint64_t horizon, state_ttl_due_cb cb, void *ctx);

#endif
