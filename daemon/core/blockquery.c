/* blockquery.c - blocked-filter queries, one kernel per SIMD level. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "blockquery.h"

#include "block.h"

/*
 * How many keys ahead of the one being tested a batch locates and fetches
 * blocks: enough to cover the latency of where the filter lives, no more.
 * Measured on Zen 5: signature scans with a 2.4 MB filter ran at 610 MB/s
 * 8 ahead, 536 at 16, 510 at 32 (more lines in flight than the core
 * tracks); lookups in a 20 MB filter took 6.4 ns 32 ahead, 9.8 at 16.
 */
#define AHEAD_NEAR 8
#define AHEAD_FAR 32
#define FAR_BYTES (8u << 20)

/* A loop over the groups: unrolled where c is a constant, so its arrays stay in registers. */
#define UNROLLED _Pragma("GCC unroll 3")

/*
 * A batch no longer than the near lookahead is queried key by key: with
 * nothing to fetch ahead of it, the ring only adds stores and loads (a
 * packet's three address probes: 6.0-6.6 ns a key through the ring, 5.0 one
 * by one; six: 5.0 and 4.3).
 */
#define FEW AHEAD_NEAR

/* The filter's loop-invariant shape, read once a call. */
struct shape {
	const uint64_t *words;
	uint64_t nblocks; /* unfolded: the range a block index is reduced to */
	unsigned choices, hashes, folds;
};

static inline struct shape shape_of(const struct filter *f)
{
	const struct filter_params *p = &f->params;

	return (struct shape){ f->words, (p->bits << p->folds) / FILTER_BLOCK_BITS, p->choices, p->hashes,
			       p->folds };
}

/*
 * The blocks of h's c groups, and their y32. c is a constant where the
 * drivers below are specialised (1 or 2 choices, never folded: the filters
 * the daemon builds), so the group loop unrolls and group 0's multiplies by 1
 * vanish; the general case also reduces modulo the folded size.
 */
__attribute__((always_inline)) static inline void locate(const struct shape *s, struct hash128 h, unsigned c,
							 bool folded, const uint64_t **block, uint32_t *y32)
{
	UNROLLED for (unsigned g = 0; g < c; g++) {
		uint64_t x, y;
		block_group_words(h, g, &x, &y);
		uint64_t b = block_range_reduce(x, s->nblocks);
		if (folded)
			b %= s->nblocks >> s->folds;
		y32[g] = block_y32(y);
		block[g] = s->words + b * FILTER_BLOCK_WORDS;
		__builtin_prefetch(block[g]);
	}
}

/*
 * The two drivers every kernel shares, made for one kernel by this macro (its
 * level, target attribute, per-query set-up and block test): one key, and a
 * batch in which the blocks of key i + ahead are located and fetched while
 * key i is tested, so a batch keeps that many keys' lines in flight
 * throughout, not only at its start.
 * Each is specialised for c = 1 and c = 2 without folds.
 */
#define BLOCKQUERY_DRIVERS(NAME, LEVEL, TARGET, TEST, TEST_FOR, COVERS)                                       \
	TARGET __attribute__((always_inline)) static inline bool one_##NAME##_for(                            \
		const struct shape *s, struct hash128 h, unsigned c, bool folded)                             \
	{                                                                                                     \
		const uint64_t *block[FILTER_MAX_CHOICES] = { 0 }; /* c of them are: the compiler */          \
		uint32_t y32[FILTER_MAX_CHOICES] = { 0 };          /* cannot tell, once unrolled */           \
		const TEST t = TEST_FOR(s->hashes);                                                           \
		bool covered = false;                                                                         \
                                                                                                              \
		locate(s, h, c, folded, block, y32);                                                          \
		UNROLLED for (unsigned g = 0; g < c; g++)                                                     \
			covered |= COVERS(block[g], y32[g], &t);                                              \
		return covered;                                                                               \
	}                                                                                                     \
                                                                                                              \
	TARGET static bool one_##NAME(const struct filter *f, struct hash128 h)                               \
	{                                                                                                     \
		const struct shape s = shape_of(f);                                                           \
		return one_##NAME##_for(&s, h, s.choices, true);                                              \
	}                                                                                                     \
                                                                                                              \
	TARGET static bool one1_##NAME(const struct filter *f, struct hash128 h)                              \
	{                                                                                                     \
		const struct shape s = shape_of(f);                                                           \
		return one_##NAME##_for(&s, h, 1, false);                                                     \
	}                                                                                                     \
                                                                                                              \
	TARGET static bool one2_##NAME(const struct filter *f, struct hash128 h)                              \
	{                                                                                                     \
		const struct shape s = shape_of(f);                                                           \
		return one_##NAME##_for(&s, h, 2, false);                                                     \
	}                                                                                                     \
                                                                                                              \
	TARGET __attribute__((always_inline)) static inline void batch_##NAME##_for(                          \
		const struct shape *s, const struct hash128 *h, size_t n, bool *out, unsigned c, bool folded, \
		size_t ahead)                                                                                 \
	{                                                                                                     \
		const uint64_t *block[AHEAD_FAR][FILTER_MAX_CHOICES];                                         \
		uint32_t y32[AHEAD_FAR][FILTER_MAX_CHOICES];                                                  \
		const TEST t = TEST_FOR(s->hashes);                                                           \
		size_t lead = n < ahead ? n : ahead;                                                          \
                                                                                                              \
		for (size_t i = 0; i < lead; i++)                                                             \
			locate(s, h[i], c, folded, block[i], y32[i]);                                         \
		for (size_t i = 0; i < n; i++) {                                                              \
			size_t slot = i % ahead;                                                              \
			bool covered = false;                                                                 \
			UNROLLED for (unsigned g = 0; g < c; g++)                                             \
				covered |= COVERS(block[slot][g], y32[slot][g], &t);                          \
			out[i] = covered;                                                                     \
			if (i + ahead < n)                                                                    \
				locate(s, h[i + ahead], c, folded, block[slot], y32[slot]);                   \
		}                                                                                             \
	}                                                                                                     \
                                                                                                              \
	TARGET static void batch_##NAME(const struct filter *f, const struct hash128 *h, size_t n, bool *out) \
	{                                                                                                     \
		const struct shape s = shape_of(f);                                                           \
		bool far = s.nblocks * 64 >> s.folds > FAR_BYTES;                                             \
                                                                                                              \
		if (n <= FEW && s.folds == 0 && s.choices == 2)                                               \
			for (size_t i = 0; i < n; i++)                                                        \
				out[i] = one_##NAME##_for(&s, h[i], 2, false);                                \
		else if (n <= FEW && s.folds == 0 && s.choices == 1)                                          \
			for (size_t i = 0; i < n; i++)                                                        \
				out[i] = one_##NAME##_for(&s, h[i], 1, false);                                \
		else if (s.folds == 0 && s.choices == 2 && far)                                               \
			batch_##NAME##_for(&s, h, n, out, 2, false, AHEAD_FAR);                               \
		else if (s.folds == 0 && s.choices == 2)                                                      \
			batch_##NAME##_for(&s, h, n, out, 2, false, AHEAD_NEAR);                              \
		else if (s.folds == 0 && s.choices == 1 && far)                                               \
			batch_##NAME##_for(&s, h, n, out, 1, false, AHEAD_FAR);                               \
		else if (s.folds == 0 && s.choices == 1)                                                      \
			batch_##NAME##_for(&s, h, n, out, 1, false, AHEAD_NEAR);                              \
		else                                                                                          \
			batch_##NAME##_for(&s, h, n, out, s.choices, true, AHEAD_NEAR);                       \
	}                                                                                                     \
                                                                                                              \
	static const struct blockquery KERNEL_##NAME = { LEVEL, { one_##NAME, one1_##NAME, one2_##NAME },     \
							 batch_##NAME };

/* ---- scalar ---- */

struct test_scalar {
	unsigned k;
};

static inline struct test_scalar test_scalar_for(unsigned k)
{
	return (struct test_scalar){ k };
}

static inline uint64_t bit_at(const uint64_t *block, unsigned pos)
{
	return block[pos >> 6] >> (pos & 63);
}

static inline bool covers_scalar(const uint64_t *block, uint32_t y32, const struct test_scalar *t)
{
	unsigned i = 0;

	if (t->k >= 4) {
		uint64_t head = bit_at(block, block_position(y32, 0)) & bit_at(block, block_position(y32, 1)) &
				bit_at(block, block_position(y32, 2)) & bit_at(block, block_position(y32, 3));
		if (!(head & 1))
			return false;
		i = 4;
	}
	for (; i < t->k; i++)
		if (!(bit_at(block, block_position(y32, i)) & 1))
			return false;
	return true;
}

BLOCKQUERY_DRIVERS(scalar, SIMD_SCALAR, , struct test_scalar, test_scalar_for, covers_scalar)

/* ---- x86-64: AVX2 and AVX-512 ---- */

#if defined(__x86_64__) && defined(__GNUC__)
#include "block_avx2.h"
#define HAVE_X86_KERNELS 1

#define AVX2 __attribute__((target("avx2,bmi2,popcnt")))
#define AVX512 __attribute__((target("avx2,bmi2,popcnt,avx512f,avx512bw,avx512vl,avx512dq")))

/*
 * The first pass's salts and live lanes (a 1 in each), set up once a query;
 * the later passes (k > 8) make theirs when they run, which for a stranger
 * is rarely. Small, so it stays in registers.
 */
struct test_avx2 {
	__m256i salt0, live0;
	unsigned k;
};

AVX2 __attribute__((always_inline)) static inline __m256i live_ones(unsigned k, unsigned pass)
{
	__m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	__m256i live = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)k - 8 * (int)pass), lane);

	return _mm256_and_si256(live, _mm256_set1_epi32(1));
}

AVX2 __attribute__((always_inline)) static inline struct test_avx2 test_avx2_for(unsigned k)
{
	return (struct test_avx2){ _mm256_loadu_si256((const __m256i *)BLOCK_SALT32), live_ones(k, 0), k };
}

/*
 * Whether a live lane's bit is missing: positions from y32 * salt >> 23;
 * testc says whether every live lane's bit 0 is set.
 */
AVX2 __attribute__((always_inline)) static inline bool
missing8(__m256i lo, __m256i hi, __m256i yv, __m256i salt, __m256i ones)
{
	__m256i pos = _mm256_srli_epi32(_mm256_mullo_epi32(yv, salt), 23);

	return !_mm256_testc_si256(block_bits_avx2(lo, hi, pos), ones);
}

/*
 * The block test of the kernels of 8 lanes a pass (their TEST has salt0,
 * live0 and k): the first pass branch-free, the others only if it passed.
 */
#define COVERS8(NAME, TARGET, MISSING, LIVE)                                                                  \
	TARGET __attribute__((always_inline)) static inline bool covers_##NAME(                               \
		const uint64_t *block, uint32_t y32, const struct test_##NAME *t)                             \
	{                                                                                                     \
		const __m256i lo = _mm256_load_si256((const __m256i *)block);                                 \
		const __m256i hi = _mm256_load_si256((const __m256i *)block + 1);                             \
		const __m256i yv = _mm256_set1_epi32((int)y32);                                               \
                                                                                                              \
		if (MISSING(lo, hi, yv, t->salt0, t->live0))                                                  \
			return false;                                                                         \
		for (unsigned p = 1; 8 * p < t->k; p++)                                                       \
			if (MISSING(lo, hi, yv, _mm256_loadu_si256((const __m256i *)(BLOCK_SALT32 + 8 * p)),  \
				    LIVE(t->k, p)))                                                           \
				return false;                                                                 \
		return true;                                                                                  \
	}

COVERS8(avx2, AVX2, missing8, live_ones)
BLOCKQUERY_DRIVERS(avx2, SIMD_AVX2, AVX2, struct test_avx2, test_avx2_for, covers_avx2)

/* As test_avx2, the live lanes a mask. */
struct test_avx512 {
	__m256i salt0;
	__mmask8 live0;
	unsigned k;
};

AVX512 __attribute__((always_inline)) static inline __mmask8 live_lanes(unsigned k, unsigned pass)
{
	unsigned left = k - 8 * pass;

	return (__mmask8)(left >= 8 ? 0xff : (1u << left) - 1);
}

AVX512 __attribute__((always_inline)) static inline struct test_avx512 test_avx512_for(unsigned k)
{
	return (struct test_avx512){ _mm256_loadu_si256((const __m256i *)BLOCK_SALT32), live_lanes(k, 0), k };
}

/*
 * As missing8, with AVX-512VL's instructions on 256 bits: a two-source
 * permute fetches word pos / 32 from either half of the block at once, a
 * rotate (its count taken modulo 32) brings the bit down, and a test into a
 * mask register names the live lanes whose bit is clear. Eight lanes, not
 * sixteen: a stranger leaves after the first pass, and the 512-bit multiply
 * a sixteen-lane pass needs made the whole packet path slower on the Xeon
 * measured (doc/performance.md).
 */
AVX512 __attribute__((always_inline)) static inline bool
missing8_vl(__m256i lo, __m256i hi, __m256i yv, __m256i salt, __mmask8 lanes)
{
	__m256i product = _mm256_mullo_epi32(yv, salt); /* position: its top 9 bits */
	__m256i word = _mm256_permutex2var_epi32(lo, _mm256_srli_epi32(product, 28), hi);
	__m256i bit = _mm256_rorv_epi32(word, _mm256_srli_epi32(product, 23));

	return _mm256_mask_testn_epi32_mask(lanes, bit, _mm256_set1_epi32(1)) != 0;
}

COVERS8(avx512, AVX512, missing8_vl, live_lanes)
BLOCKQUERY_DRIVERS(avx512, SIMD_AVX512, AVX512, struct test_avx512, test_avx512_for, covers_avx512)
#endif

/* ---- aarch64: NEON ---- */

#if defined(__aarch64__)
#include <arm_neon.h>
#define HAVE_NEON_KERNEL 1

/* Salts of up to 32 positions, 16 a pass (four vectors of four), and each pass's live lanes. */
struct test_neon {
	uint32x4_t salt[8];
	uint8x16_t live[2];
	unsigned passes;
};

static inline struct test_neon test_neon_for(unsigned k)
{
	static const uint8_t lane[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
	struct test_neon t;

	t.passes = (k + 15) / 16;
	for (unsigned i = 0; i < 8; i++)
		t.salt[i] = vld1q_u32(BLOCK_SALT32 + 4 * i);
	for (unsigned p = 0; p < 2; p++) {
		int left = (int)k - 16 * (int)p;
		uint8x16_t n = vdupq_n_u8((uint8_t)(left < 0 ? 0 : left > 16 ? 16 : left));
		t.live[p] = vandq_u8(vcltq_u8(vld1q_u8(lane), n), vdupq_n_u8(1));
	}
	return t;
}

/*
 * 16 positions a pass: four multiplies give the positions, narrowed to their
 * byte (pos / 8) and bit (pos % 8); TBL fetches each lane's byte of the
 * 64-byte block, a shift brings its bit down. (On little-endian, bit p of the
 * block is bit p % 8 of byte p / 8.)
 */
static inline bool missing16_neon(uint8x16x4_t blk, uint32x4_t yv, const uint32x4_t *salt,
				  uint8x16_t live)
{
	uint16x8_t lo = vcombine_u16(vmovn_u32(vshrq_n_u32(vmulq_u32(yv, salt[0]), 23)),
				     vmovn_u32(vshrq_n_u32(vmulq_u32(yv, salt[1]), 23)));
	uint16x8_t hi = vcombine_u16(vmovn_u32(vshrq_n_u32(vmulq_u32(yv, salt[2]), 23)),
				     vmovn_u32(vshrq_n_u32(vmulq_u32(yv, salt[3]), 23)));
	uint8x16_t byte = vcombine_u8(vmovn_u16(vshrq_n_u16(lo, 3)), vmovn_u16(vshrq_n_u16(hi, 3)));
	uint8x16_t bit = vandq_u8(vcombine_u8(vmovn_u16(lo), vmovn_u16(hi)), vdupq_n_u8(7));
	uint8x16_t got = vshlq_u8(vqtbl4q_u8(blk, byte), vnegq_s8(vreinterpretq_s8_u8(bit)));

	return vmaxvq_u8(vbicq_u8(live, got)) != 0;
}

static inline bool covers_neon(const uint64_t *block, uint32_t y32, const struct test_neon *t)
{
	const uint8x16x4_t blk = vld1q_u8_x4((const uint8_t *)block);
	const uint32x4_t yv = vdupq_n_u32(y32);

	if (missing16_neon(blk, yv, t->salt, t->live[0]))
		return false;
	return t->passes < 2 || !missing16_neon(blk, yv, t->salt + 4, t->live[1]);
}

BLOCKQUERY_DRIVERS(neon, SIMD_NEON, , struct test_neon, test_neon_for, covers_neon)
#endif

const struct blockquery *blockquery_kernel(enum simd_level level)
{
	switch (level) {
	case SIMD_SCALAR:
		return &KERNEL_scalar;
#ifdef HAVE_X86_KERNELS
	case SIMD_AVX2:
		return &KERNEL_avx2;
	case SIMD_AVX512:
		return &KERNEL_avx512;
#endif
#ifdef HAVE_NEON_KERNEL
	case SIMD_NEON:
		return &KERNEL_neon;
#endif
	default:
		return NULL;
	}
}
