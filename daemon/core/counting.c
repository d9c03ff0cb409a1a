/* counting.c - the counting backing store: 4-bit sticky counters, greedy choice, rounds. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "counting.h"

#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "error.h"
#include "simd.h"

/* The SIMD level from which costs are counted with the POPCNT instruction. */
#if defined(__x86_64__)
#define COUNTING_POPCNT_LEVEL SIMD_AVX2 /* every CPU with AVX2 has POPCNT */
#else
#define COUNTING_POPCNT_LEVEL SIMD_LEVELS /* none: elsewhere the compiler's popcount is the instruction already */
#endif

struct counting *counting_new(const struct filter_params *p, const struct hash_key *key,
			      uint64_t seed, char *err, size_t errlen)
{
	struct counting *c;

	if (filter_params_check(p, err, errlen) < 0)
		return NULL;
	if (p->folds != 0) {
		error_set(err, errlen, "a counting store cannot be folded");
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		goto nomem;
	c->params = *p;
	c->filter = filter_new(p, key, err, errlen);
	if (c->filter == NULL)
		goto fail;
	c->nibbles = calloc((size_t)(p->bits + 1) / 2, 1);
	if (c->nibbles == NULL)
		goto nomem;
	memory_prefer_huge(c->nibbles, (size_t)(p->bits + 1) / 2);
	c->popcnt = (int)simd_best() >= COUNTING_POPCNT_LEVEL;
	rng_seed(&c->rng, seed);
	filter_block_hit_table(p->hashes, c->hit);
	return c;
nomem:
	error_set(err, errlen, "out of memory for a counting store of %llu counters",
		  (unsigned long long)p->bits);
fail:
	counting_free(c);
	return NULL;
}

void counting_free(struct counting *c)
{
	if (c == NULL)
		return;
	filter_free(c->filter);
	free(c->nibbles);
	free(c);
}

struct counting *counting_clone(const struct counting *c)
{
	struct counting *copy = malloc(sizeof(*copy));
	bool failed = false;

	if (copy == NULL)
		return NULL;
	*copy = *c;
	copy->nibbles = array_dup(c->nibbles, (size_t)(c->params.bits + 1) / 2, &failed);
	copy->filter = filter_clone(c->filter);
	if (failed || copy->filter == NULL) {
		counting_free(copy);
		return NULL;
	}
	return copy;
}

unsigned counting_get(const struct counting *c, uint64_t i)
{
	return (c->nibbles[i >> 1] >> ((i & 1) * 4)) & 0xf;
}

static inline void counter_put(struct counting *c, uint64_t i, unsigned v)
{
	unsigned shift = (unsigned)(i & 1) * 4;
	uint8_t *byte = &c->nibbles[i >> 1];

	*byte = (uint8_t)((*byte & ~(0xf << shift)) | (v << shift));
}

static inline void counter_increment(struct counting *c, uint64_t i)
{
	unsigned v = counting_get(c, i);

	if (v == COUNTING_MAX)
		return;
	if (v == 0) {
		c->filter->words[i >> 6] |= 1ULL << (i & 63);
		c->ones++;
	}
	if (v + 1 == COUNTING_MAX)
		c->saturated++;
	counter_put(c, i, v + 1);
}

/* Returns -1 when the counter is already zero. */
static inline int counter_decrement(struct counting *c, uint64_t i)
{
	unsigned v = counting_get(c, i);

	if (v == COUNTING_MAX)
		return 0; /* sticky: the keys behind it are no longer known */
	if (v == 0)
		return -1;
	if (v == 1) {
		c->filter->words[i >> 6] &= ~(1ULL << (i & 63));
		c->ones--;
	}
	counter_put(c, i, v - 1);
	return 0;
}

/* Distinct zero counters among the k positions: the bits this group would set. */
static unsigned new_ones_classic(const struct counting *c, const uint64_t *pos, unsigned k)
{
	uint64_t zero[FILTER_MAX_HASHES];
	unsigned nzero = 0;

	for (unsigned i = 0; i < k; i++) {
		if (counting_get(c, pos[i]) != 0)
			continue;
		unsigned j = 0;
		while (j < nzero && zero[j] != pos[i])
			j++;
		if (j == nzero)
			zero[nzero++] = pos[i];
	}
	return nzero;
}

/*
 * What adding group g of h to a blocked filter costs in false positives:
 * 16 popcounts, inlined into each variant below.
 */
static inline __attribute__((always_inline)) double block_cost(const struct counting *c, struct hash128 h,
								unsigned g)
{
	uint64_t mask[FILTER_BLOCK_WORDS];
	uint64_t b = filter_group_block(&c->params, h, g);
	const uint64_t *block = c->filter->words + b * FILTER_BLOCK_WORDS;
	unsigned ones = 0, fresh = 0;

	filter_group_mask(&c->params, h, g, mask);
	for (unsigned w = 0; w < FILTER_BLOCK_WORDS; w++) {
		ones += (unsigned)__builtin_popcountll(block[w]);
		fresh += (unsigned)__builtin_popcountll(mask[w] & ~block[w]);
	}
	return c->hit[ones + fresh] - c->hit[ones];
}

static double cost_blocked(const struct counting *c, struct hash128 h, unsigned g)
{
	return block_cost(c, h, g);
}

#if defined(__x86_64__)
/* With the POPCNT instruction, where baseline x86-64 calls a loop in libgcc for each (a third of a round's time). */
__attribute__((target("popcnt"))) static double cost_blocked_popcnt(const struct counting *c, struct hash128 h,
								      unsigned g)
{
	return block_cost(c, h, g);
}
#else
#define cost_blocked_popcnt cost_blocked
#endif

static double group_cost(const struct counting *c, struct hash128 h, unsigned g)
{
	uint64_t pos[FILTER_MAX_HASHES];

	if (c->params.layout == FILTER_BLOCKED)
		return c->popcnt ? cost_blocked_popcnt(c, h, g) : cost_blocked(c, h, g);
	filter_group_positions(&c->params, h, g, pos);
	return new_ones_classic(c, pos, c->params.hashes);
}

/*
 * The lines an entry's group touches in a blocked filter, asked for ahead:
 * its block of bits and the counters behind them (4 lines). A round visits
 * the entries in their order, each at a random place: without this, each
 * waits on memory in turn once the counters outgrow the caches.
 */
#define BLOCK_COUNTER_BYTES (FILTER_BLOCK_WORDS * 64 / 2)

static void prefetch_groups(const struct counting *c, struct hash128 h)
{
	for (unsigned g = 0; g < c->params.choices; g++) {
		uint64_t b = filter_group_block(&c->params, h, g);
		const uint8_t *counters = c->nibbles + b * BLOCK_COUNTER_BYTES;

		__builtin_prefetch(c->filter->words + b * FILTER_BLOCK_WORDS, 1);
		for (unsigned at = 0; at < BLOCK_COUNTER_BYTES; at += 64)
			__builtin_prefetch(counters + at, 1);
	}
}

void counting_prefetch(const struct counting *c, struct hash128 h)
{
	if (c->params.layout == FILTER_BLOCKED)
		prefetch_groups(c, h);
}

unsigned counting_choose(struct counting *c, struct hash128 h)
{
	unsigned best = 0, ties = 1;
	double best_cost = group_cost(c, h, 0);

	for (unsigned g = 1; g < c->params.choices; g++) {
		double cost = group_cost(c, h, g);
		if (cost < best_cost) {
			best = g;
			best_cost = cost;
			ties = 1;
		} else if (cost == best_cost && rng_below(&c->rng, ++ties) == 0) {
			best = g; /* reservoir sampling: each tied group equally likely */
		}
	}
	return best;
}

void counting_add(struct counting *c, struct hash128 h, unsigned g)
{
	uint64_t pos[FILTER_MAX_HASHES];

	filter_group_positions(&c->params, h, g, pos);
	for (unsigned i = 0; i < c->params.hashes; i++)
		counter_increment(c, pos[i]);
}

int counting_remove(struct counting *c, struct hash128 h, unsigned g)
{
	uint64_t pos[FILTER_MAX_HASHES];

	filter_group_positions(&c->params, h, g, pos);
	for (unsigned i = 0; i < c->params.hashes; i++) {
		if (counter_decrement(c, pos[i]) == 0)
			continue;
		while (i-- > 0) /* undo, so a failed remove changes nothing */
			if (counting_get(c, pos[i]) != COUNTING_MAX)
				counter_increment(c, pos[i]);
		return -1;
	}
	return 0;
}

static unsigned choose_and_add(struct counting *c, struct hash128 h)
{
	unsigned g = counting_choose(c, h);

	counting_add(c, h, g);
	return g;
}

unsigned counting_insert(struct counting *c, struct hash128 h)
{
	if (c->params.layout == FILTER_BLOCKED) /* the groups' lines fetched together, not one after another */
		prefetch_groups(c, h);
	return choose_and_add(c, h);
}

void counting_rebuild(struct counting *c, const struct hash128 *hashes, uint8_t *groups,
		      size_t n, unsigned rounds)
{
	for (unsigned r = 0; r < rounds; r++) {
		for (size_t i = 0; i < n; i++) {
			if (i + COUNTING_AHEAD < n)
				counting_prefetch(c, hashes[i + COUNTING_AHEAD]);
			if (counting_remove(c, hashes[i], groups[i]) < 0)
				continue; /* not counted as claimed: leave it alone */
			groups[i] = (uint8_t)choose_and_add(c, hashes[i]); /* its lines were asked for ahead */
		}
	}
}

const struct filter *counting_filter(const struct counting *c)
{
	return c->filter;
}

int counting_set_simd(struct counting *c, enum simd_level level)
{
	if (filter_set_simd(c->filter, level) < 0)
		return -1;
	c->popcnt = (int)level >= COUNTING_POPCNT_LEVEL;
	return 0;
}

struct filter *counting_derive(const struct counting *c)
{
	struct filter *f = filter_new(&c->params, &c->filter->key, NULL, 0);

	if (f == NULL)
		return NULL;
	for (uint64_t i = 0; i < c->params.bits; i++)
		if (counting_get(c, i) != 0)
			f->words[i >> 6] |= 1ULL << (i & 63);
	return f;
}

size_t counting_bytes(const struct counting *c)
{
	return (size_t)(c->params.bits + 1) / 2 + filter_bytes(c->filter);
}
