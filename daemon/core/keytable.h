/* keytable.h - fixed-size records found by a key at their start: open addressing, linear probing. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_KEYTABLE_H
#define BLOOMD_KEYTABLE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Each record is rec_size bytes, its first key_size bytes its key (compared
 * as bytes: zero what padding a key has). Records live in one array, at
 * most half full, hashed with a random key (an attacker cannot aim at a
 * probe chain); a removal moves back the records after it (no tombstones),
 * so a record's address holds only until the next put or remove.
 */
struct keytable;

/* NULL without memory. */
struct keytable *keytable_new(size_t rec_size, size_t key_size);
void keytable_free(struct keytable *t);

/* The record with key, or NULL. */
void *keytable_find(const struct keytable *t, const void *key);

/* The record with key, made (key copied, the rest zeroed; *added true) if it was not there; NULL without memory. */
void *keytable_put(struct keytable *t, const void *key, bool *added);

/* Take out rec (a record find or put returned). */
void keytable_remove(struct keytable *t, void *rec);

size_t keytable_count(const struct keytable *t);

/*
 * cb for each record: 0 keeps it, 1 removes it, < 0 stops there (returned).
 * A record moved back by a removal is looked at where it lands, so every
 * record is seen once, or twice where the array wraps.
 */
typedef int (*keytable_cb)(void *ctx, void *rec);
int keytable_each(struct keytable *t, keytable_cb cb, void *ctx);

/*
 * The same in steps: the slots from *at, at most n of them, *at moved past
 * those looked at. 1 once the last slot is passed, 0 if more remain, < 0
 * as cb. Between steps a record put may land before *at (unseen by this
 * walk), and a put that grows the table moves every record: keytable_slots
 * then changes, and a walk that must see each record begins again.
 */
int keytable_each_at(struct keytable *t, size_t *at, size_t n, keytable_cb cb, void *ctx);
size_t keytable_slots(const struct keytable *t);

#endif
