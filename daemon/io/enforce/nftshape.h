/* nftshape.h - what an nftables table does, read from the kernel by netlink: its shape, its drop rules' counters. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_NFTSHAPE_H
#define BLOOMD_NFTSHAPE_H

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
struct nft_shape;

struct nft_shape *nft_shape_open(const char *table, char *err, size_t errlen);
void nft_shape_close(struct nft_shape *s);

/*
 * The table's shape read now and compared with the one kept: 1 if the
 * same, 0 if not (or the table is gone), -1 (err) if it cannot be read.
 * nft_shape_keep keeps the shape read now as the one to compare with.
 */
int nft_shape_same(struct nft_shape *s, char *err, size_t errlen);
int nft_shape_keep(struct nft_shape *s, char *err, size_t errlen);

/*
 * Each rule with a counter: the set it matches (its last lookup that is
 * not negated; "" without one) and what the counter holds. -1 (err).
 */
typedef void (*nft_shape_counter_cb)(void *ctx, const char *set, uint64_t packets, uint64_t bytes);
int nft_shape_counters(struct nft_shape *s, nft_shape_counter_cb cb, void *ctx, char *err, size_t errlen);

#endif
