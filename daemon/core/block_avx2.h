/* block_avx2.h - a blocked group's bits read eight positions at a time with AVX2. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_BLOCK_AVX2_H
#define BLOOMD_BLOCK_AVX2_H

/*
 * Shared by the query kernel (blockquery.c) and the counting store's costs
 * (counting.c), each of which compiles it for its own AVX2 functions.
 */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/*
 * The bits of a block (lo, hi: its two halves) at eight positions 0-511, each
 * in bit 0 of its lane (the bits above it are the word's next ones): word
 * pos / 32 of the block's sixteen comes from one of its two halves (a permute
 * of each by the low three bits of the word index, then a blend on the
 * fourth), shifted down by pos % 32. (On little-endian, bit p of the block is
 * bit p % 32 of 32-bit word p / 32.)
 */
__attribute__((target("avx2"), always_inline)) static inline __m256i block_bits_avx2(__m256i lo, __m256i hi,
										    __m256i pos)
{
	__m256i index = _mm256_srli_epi32(pos, 5);
	__m256 from_lo = _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(lo, index));
	__m256 from_hi = _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(hi, index));
	__m256 half = _mm256_castsi256_ps(_mm256_slli_epi32(pos, 23)); /* pos bit 8 to the sign */
	__m256i word = _mm256_castps_si256(_mm256_blendv_ps(from_lo, from_hi, half));

	return _mm256_srlv_epi32(word, _mm256_and_si256(pos, _mm256_set1_epi32(31)));
}
#endif

#endif
