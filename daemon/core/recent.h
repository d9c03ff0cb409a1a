/* recent.h - the keys seen most recently, at most a fixed number, each with a small value: an exact LRU table. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_RECENT_H
#define BLOOMD_RECENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Up to capacity keys (64 bits each, a keyed hash of what the caller
 * remembers), each with value_size bytes of its own. Within capacity it is
 * exact: a key is there until the caller forgets it. A new key past
 * capacity takes the place of the key used least recently (counted:
 * recent_evicted), so what it forgets depends only on the order of use,
 * never on where keys hash to. Memory is bounded by capacity: the values
 * at creation, the index as it fills.
 */
struct recent;

/* NULL without memory. */
struct recent *recent_new(size_t capacity, size_t value_size);
void recent_free(struct recent *r);

/*
 * key's value, now the most recently used; made (zeroed, *fresh true) if
 * key was not there, in the place of the least recently used key when the
 * table is full. NULL without memory for the index.
 */
void *recent_use(struct recent *r, uint64_t key, bool *fresh);

/* Keys pushed out to make room since the table was made. */
uint64_t recent_evicted(const struct recent *r);
size_t recent_count(const struct recent *r);

#endif
