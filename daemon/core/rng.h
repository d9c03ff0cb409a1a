/* rng.h - small, fast, seedable PRNG (xoshiro256**) for tie-breaks and simulations. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_RNG_H
#define BLOOMD_RNG_H

#include <stdint.h>

/*
 * Not cryptographic: it breaks ties in the greedy choice and drives the
 * simulations, where speed and reproducibility from a seed matter. Secrets
 * come from getrandom(2) in hash.c instead.
 */
struct rng {
	uint64_t s[4];
};

/* splitmix64: expands a seed into well-mixed words; also a good 64-bit mixer. */
static inline uint64_t rng_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline void rng_seed(struct rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = rng_splitmix64(&seed);
}

static inline uint64_t rng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rng_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rng_rotl(s[3], 45);
	return result;
}

/* Uniform in [0, n) by multiply-shift (Lemire); the bias is below 2^-32 for n < 2^32. */
static inline uint64_t rng_below(struct rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

#endif
