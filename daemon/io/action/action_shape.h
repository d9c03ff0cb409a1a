/* action_shape.h - what an nftables table does, read from the kernel by netlink: its shape, its drop rules' counters. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_ACTION_SHAPE_H
#define BLOOMD_ACTION_SHAPE_H

#include <stddef.h>
#include <stdint.h>

/*
 * libnftables lists a rule only with every element of every set it names
 * (34 s for a table holding a million), so the table's shape is read
 * here, by netlink dumps of its sets, chains and rules, which carry no
 * elements: each set's name, flags and key type; each chain's name, hook,
 * priority, type and policy; each rule's chain and expressions, in order.
 * Handles, use counts and counters' values are left out: the shape of a
 * table made again the same way is the same bytes.
 */
struct action_shape;

struct action_shape *action_shape_open(const char *table, char *err, size_t errlen);
void action_shape_close(struct action_shape *s);

/*
 * The table's shape read now and compared with the one kept: 1 if the
 * same, 0 if not (or the table is gone), -1 (err) if it cannot be read.
 * action_shape_keep keeps the shape read now as the one to compare with.
 */
int action_shape_same(struct action_shape *s, char *err, size_t errlen);
int action_shape_keep(struct action_shape *s, char *err, size_t errlen);

/*
 * Each rule with a counter: the set it matches (its last lookup that is
 * not negated; "" without one) and what the counter holds. -1 (err).
 */
typedef void (*action_shape_counter_cb)(void *ctx, const char *set, uint64_t packets, uint64_t bytes);
int action_shape_counters(struct action_shape *s, action_shape_counter_cb cb, void *ctx, char *err, size_t errlen);

#endif
