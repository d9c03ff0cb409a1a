/* xdpset.h - the entries the XDP program decides on: a blocked filter and an exact table, in its layout. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_XDPSET_H
#define BLOOMD_XDPSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "entry.h"
#include "filter.h"
#include "hash.h"
#include "xdp_layout.h"

/*
 * The address, net and pair entries of the dropping and the pass lists, kept
 * where the program reads them (the maps the daemon mmaps; plain memory in
 * tests): the filter's words, the table's buckets, the long keys and the
 * prefix lengths in use. A counting store behind the filter lets a removal
 * clear bits no other key needs; each change writes the blocks it touched.
 * Order, for a program reading meanwhile: an add writes the long key, the
 * slot, then the bits, then a new prefix length; a removal empties the slot
 * before it clears bits or frees the long key, so a key is never in the
 * table without its bits.
 *
 * Its size is fixed: a set that fills up (xdpset_put says so) is replaced by
 * a larger one, made in memory of its own and swapped in whole.
 */

struct xdpset;

/* Where the program's state lies: words (bits / 64), buckets, long keys, live; all zeroed by xdpset_new. */
struct xdpset_memory {
	uint64_t *words;
	struct xdp_bucket *buckets;
	struct xdp_long_key *long_keys;
	struct xdp_live *live;
};

/*
 * The shape of a set for capacity entries, long_capacity of them longer
 * than XDP_KEY_INLINE (IPv6): its filter, its table's buckets (slots for
 * half as many again as capacity) and its long keys.
 */
struct xdpset_shape {
	struct filter_params params;
	uint64_t capacity, long_capacity;
	uint32_t nbuckets;
};
int xdpset_shape_for(uint64_t capacity, uint64_t long_capacity, unsigned choices, double bits_per_entry,
		     struct xdpset_shape *out, char *err, size_t errlen);

struct xdpset *xdpset_new(const struct xdpset_shape *shape, const struct hash_key *key, const struct xdpset_memory *mem,
			  char *err, size_t errlen);
void xdpset_free(struct xdpset *s);

/*
 * Hold kind/key with action (enum xdp_entry_action), or change its action.
 * Returns 0, or 1 when the set has no room for it (nothing changed): a larger
 * set is needed. Keys of other kinds than addr, net and pair are refused (-1).
 */
int xdpset_put(struct xdpset *s, enum entry_kind kind, const uint8_t *key, size_t len, unsigned action);
/* Let go of kind/key; false if it was not held. */
bool xdpset_remove(struct xdpset *s, enum entry_kind kind, const uint8_t *key, size_t len);
/* The action a key is held with, or 0. */
unsigned xdpset_action(const struct xdpset *s, enum entry_kind kind, const uint8_t *key, size_t len);

/* Call cb for each entry held (stops at a non-zero result, which it returns). */
typedef int (*xdpset_cb)(void *ctx, enum entry_kind kind, const uint8_t *key, size_t len, unsigned action);
int xdpset_foreach(const struct xdpset *s, xdpset_cb cb, void *ctx);

/*
 * A sweep: after xdpset_sweep_begin, every entry xdpset_put is kept, and
 * xdpset_sweep_end removes all the others (returning how many). Begin is -1
 * without memory for the marks (no sweep).
 */
int xdpset_sweep_begin(struct xdpset *s);
uint64_t xdpset_sweep_end(struct xdpset *s);

/* Entries held, and of them those with long keys. */
uint64_t xdpset_count(const struct xdpset *s);
uint64_t xdpset_long_count(const struct xdpset *s);
/*
 * Whether a new set is due: it holds more than it was sized for (its
 * false-positive rate rises past them), or a quarter of its slots are
 * removed ones (lookups walk past them).
 */
bool xdpset_due(const struct xdpset *s);
const struct filter *xdpset_filter(const struct xdpset *s);
/* The key's hash as the program computes it. */
struct hash128 xdpset_hash(const struct xdpset *s, enum entry_kind kind, const uint8_t *key, size_t len);
/* The program's parameters for a set of this shape and key (.rodata). */
void xdpset_params(const struct xdpset_shape *shape, const struct hash_key *key, struct xdp_params *out);

/* The bucket probe p of a key with hash h looks at, of nbuckets: the program's, computed the same. */
static inline uint32_t xdpset_bucket(struct hash128 h, unsigned p, uint32_t nbuckets)
{
	uint32_t x = (uint32_t)(h.hi >> 32) + p * ((uint32_t)h.lo | 1);

	return (uint32_t)(((uint64_t)x * nbuckets) >> 32);
}

#endif
