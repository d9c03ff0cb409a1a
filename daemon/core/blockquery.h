/* blockquery.h - blocked-filter queries, one kernel per SIMD level. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_BLOCKQUERY_H
#define BLOOMD_BLOCKQUERY_H

#include <stdbool.h>
#include <stddef.h>

#include "filter.h"
#include "simd.h"

/*
 * A query reads the c blocks of a key (all of them, before testing any, so
 * their loads overlap) and asks whether the k bits of any group are all set.
 * Every kernel tests the same bit positions (block.h); they differ in how:
 *
 *   scalar  the first 4 bits of a block at once, without a branch on them,
 *           then the rest bit by bit only if those were all set (a stranger
 *           fails the head 15 times in 16 at half fill, so that branch is
 *           rarely taken and well predicted)
 *   neon    16 positions a pass: byte table lookup (TBL) of the 64-byte block
 *   avx2    8 positions a pass: multiply, word permute, variable shift, test;
 *           the first pass branch-free, the others only if it passed
 *   avx512  8 positions a pass, as avx2, with AVX-512VL's two-source permute,
 *           rotate and test into a mask: fewer instructions a pass, and
 *           256-bit registers only
 */
struct blockquery {
	enum simd_level level;
	/*
	 * one[c] for filters of c = 1 or 2 choices never folded (the daemon's),
	 * one[0] for any: each a function of its own, so the common shapes pay
	 * for no loop or branch on the shape, and no frame for one.
	 */
	bool (*one[3])(const struct filter *f, struct hash128 h);
	/* out[i] for h[i], i < n: blocks fetched some keys ahead of those tested, a few keys one by one */
	void (*batch)(const struct filter *f, const struct hash128 *h, size_t n, bool *out);
};

/* The kernel for level, or NULL where this build has none for it. */
const struct blockquery *blockquery_kernel(enum simd_level level);

#endif
