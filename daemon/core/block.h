/* block.h - where a key's groups lie in a blocked filter: shared by the filter and its kernels. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_BLOCK_H
#define BLOOMD_BLOCK_H

#include <stdint.h>

#include "filter.h"

/*
 * Odd multipliers. Position i of a blocked group is the top 9 bits of the
 * 32-bit product y32 * BLOCK_SALT32[i], y32 being the group word's top half:
 * 32-bit lanes let one vector pass test 8 (AVX2), 16 (AVX-512, NEON) positions.
 */
extern const uint32_t BLOCK_SALT32[FILTER_MAX_HASHES];

static inline uint32_t block_y32(uint64_t y)
{
	return (uint32_t)(y >> 32);
}

static inline unsigned block_position(uint32_t y32, unsigned i)
{
	return (uint32_t)(y32 * BLOCK_SALT32[i]) >> 23;
}

static inline uint64_t block_range_reduce(uint64_t x, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)x * n) >> 64);
}

/*
 * The two words group g is derived from. h.lo and h.hi are uniform, so a
 * multiply by a per-group odd constant gives each group its own uniform high
 * bits (multiply-shift hashing) at the cost of one multiply, where a full
 * mixer would cost four.
 */
static inline void block_group_words(struct hash128 h, unsigned g, uint64_t *x, uint64_t *y)
{
	static const uint64_t GROUP_MUL[FILTER_MAX_CHOICES][2] = {
		{ 1, 1 },
		{ 0x9e3779b97f4a7c15ULL, 0xd6e8feb86659fd93ULL },
		{ 0xc2b2ae3d27d4eb4fULL, 0x165667b19e3779f9ULL },
	};

	*x = h.lo * GROUP_MUL[g][0];
	*y = h.hi * GROUP_MUL[g][1];
}

/* The block group g of h lies in (folded as the filter is), and the group's y32. */
static inline const uint64_t *block_of_group(const struct filter *f, struct hash128 h, unsigned g,
					     uint32_t *y32)
{
	const struct filter_params *p = &f->params;
	uint64_t x, y, nblocks = p->bits / FILTER_BLOCK_BITS;

	block_group_words(h, g, &x, &y);
	*y32 = block_y32(y);
	uint64_t b = block_range_reduce(x, nblocks << p->folds);
	if (p->folds)
		b %= nblocks;
	return f->words + b * FILTER_BLOCK_WORDS;
}

#endif
