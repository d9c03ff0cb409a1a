/* counting.h - the counting backing store: 4-bit sticky counters, greedy choice, rounds. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_COUNTING_H
#define BLOOMD_COUNTING_H

#include <stddef.h>
#include <stdint.h>

#include "filter.h"
#include "hash.h"
#include "rng.h"

/*
 * One 4-bit counter per filter bit counts how many inserted groups probe it;
 * the bit filter that queries run on is kept equal to (counter != 0) at every
 * step. A counter that reaches 15 stays at 15 for good ("sticky"): it can no
 * longer be decremented, so a delete never clears a bit another key needs, and
 * no delete can cause a false negative. The price is a bit that may stay set
 * after its keys are gone; counting_saturated() says how often that happened.
 *
 * The greedy choice covers a key with the group whose insertion raises the
 * filter's predicted false-positive rate least, ties broken at random:
 *   classic   fewest new ones (Lumetta & Mitzenmacher), since FPR = f(ones);
 *   blocked   smallest increase of hit(o_b + new) - hit(o_b), hit(o) being
 *             the chance that a random key's k probes all hit a block with o
 *             ones. "Fewest new ones" would pile keys into full blocks.
 * A block's ones are counted from the bit filter itself (8 popcounts), which
 * cannot drift from the counters the way a separate tally could.
 */
struct counting {
	struct filter_params params;
	struct filter *filter;
	uint8_t *nibbles;     /* two counters a byte, low nibble first */
	uint64_t ones;        /* counters != 0 */
	uint64_t saturated;   /* counters that reached 15 */
	struct rng rng;       /* tie-breaks */
	bool avx2;            /* the costs counted with AVX2 and POPCNT (simd level avx2 and up) */
	double hit[FILTER_BLOCK_BITS + 1];
};

#define COUNTING_MAX 15

/* An empty store; NULL on bad parameters (message in err) or no memory. */
struct counting *counting_new(const struct filter_params *p, const struct hash_key *key,
			      uint64_t seed, char *err, size_t errlen);
void counting_free(struct counting *c);
/* A copy of c, its filter's query kernel included; NULL without memory. */
struct counting *counting_clone(const struct counting *c);

/* The group that covers h most cheaply now (random among equals). */
unsigned counting_choose(struct counting *c, struct hash128 h);

/* Count h as covered by group g. */
void counting_add(struct counting *c, struct hash128 h, unsigned g);

/*
 * Uncount h from group g. Returns 0, or -1 and changes nothing when a counter
 * would go below zero (h was not counted in group g).
 */
int counting_remove(struct counting *c, struct hash128 h, unsigned g);

/* Online insert: choose, then add. Returns the group chosen. */
unsigned counting_insert(struct counting *c, struct hash128 h);

/*
 * Ask for the lines h's groups lie in (a blocked filter's; else nothing),
 * ahead of counting h: a pass over many keys asks a few keys ahead
 * (COUNTING_AHEAD), so that their misses overlap.
 */
#define COUNTING_AHEAD 8
void counting_prefetch(const struct counting *c, struct hash128 h);

/* Count keys 0..n-1 each in its group, the lines of each asked for COUNTING_AHEAD keys before it. */
void counting_add_all(struct counting *c, const struct hash128 *hashes, const uint8_t *groups, size_t n);

/*
 * Offline rebuild (Lumetta & Mitzenmacher §3.2): rounds passes over the n
 * keys in order; each is removed, re-chosen greedily and added back, and its
 * groups[i] updated. Every key must be counted in groups[i] on entry.
 */
void counting_rebuild(struct counting *c, const struct hash128 *hashes, uint8_t *groups,
		      size_t n, unsigned rounds);

/*
 * Rounds in block order (counting.c): counting_order puts the keys (hashes
 * and groups alike) in the order of their first group's block and returns
 * the permutation, or NULL without memory (the keys left as they were);
 * counting_unorder puts them back, never failing, and frees it. It pays
 * only where the counters and the filter are well past the last-level cache
 * (doc/performance.md, "Rounds in block order").
 */
#define COUNTING_ORDER_FROM_BYTES ((size_t)256 << 20)
bool counting_order_pays(const struct counting *c, size_t n);
uint32_t *counting_order(const struct counting *c, struct hash128 *hashes, uint8_t *groups, size_t n);
void counting_unorder(struct hash128 *hashes, uint8_t *groups, size_t n, uint32_t *order);

/* The bit filter, equal to (counter != 0); owned by c. */
const struct filter *counting_filter(const struct counting *c);

/* The SIMD level of the bit filter's queries (filter_set_simd): 0, or -1 where the CPU lacks it. */
int counting_set_simd(struct counting *c, enum simd_level level);

/* A new filter derived from the counters (counter != 0 -> 1); caller frees. */
struct filter *counting_derive(const struct counting *c);

unsigned counting_get(const struct counting *c, uint64_t i);
size_t counting_bytes(const struct counting *c);

#endif
