/* blockquery.c - blocked-filter queries, one kernel per SIMD level. */
#include "blockquery.h"

#include "block.h"

#define BATCH 16

/*
 * The two drivers every kernel shares, made for one kernel by this macro
 * (its level, target attribute, per-query set-up and block test): one key,
 * and a batch of keys whose blocks are all fetched before any is tested.
 */
#define BLOCKQUERY_DRIVERS(NAME, LEVEL, TARGET, TEST, TEST_FOR, COVERS)                               \
	TARGET static bool one_##NAME(const struct filter *f, struct hash128 h)                \
	{                                                                                      \
		const uint64_t *block[FILTER_MAX_CHOICES];                                     \
		uint32_t y32[FILTER_MAX_CHOICES];                                              \
		unsigned c = f->params.choices;                                                \
		const TEST t = TEST_FOR(f->params.hashes);                                     \
		bool covered = false;                                                          \
                                                                                               \
		for (unsigned g = 0; g < c; g++) {                                             \
			block[g] = block_of_group(f, h, g, &y32[g]);                           \
			__builtin_prefetch(block[g]);                                          \
		}                                                                              \
		for (unsigned g = 0; g < c; g++)                                               \
			covered |= COVERS(block[g], y32[g], &t);                               \
		return covered;                                                                \
	}                                                                                      \
                                                                                               \
	TARGET static void batch_##NAME(const struct filter *f, const struct hash128 *h,        \
					size_t n, bool *out)                                   \
	{                                                                                      \
		const uint64_t *block[BATCH][FILTER_MAX_CHOICES];                              \
		uint32_t y32[BATCH][FILTER_MAX_CHOICES];                                       \
		unsigned c = f->params.choices;                                                \
		const TEST t = TEST_FOR(f->params.hashes);                                     \
                                                                                               \
		for (size_t done = 0; done < n; done += BATCH) {                               \
			size_t len = n - done < BATCH ? n - done : BATCH;                      \
			for (size_t i = 0; i < len; i++)                                       \
				for (unsigned g = 0; g < c; g++) {                             \
					block[i][g] = block_of_group(f, h[done + i], g, &y32[i][g]); \
					__builtin_prefetch(block[i][g]);                       \
				}                                                              \
			for (size_t i = 0; i < len; i++) {                                     \
				bool covered = false;                                          \
				for (unsigned g = 0; g < c; g++)                               \
					covered |= COVERS(block[i][g], y32[i][g], &t);         \
				out[done + i] = covered;                                       \
			}                                                                      \
		}                                                                              \
	}                                                                                      \
                                                                                               \
	static const struct blockquery KERNEL_##NAME = { LEVEL, one_##NAME, batch_##NAME };

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
#include <immintrin.h>
#define HAVE_X86_KERNELS 1

#define AVX2 __attribute__((target("avx2,bmi2,popcnt")))
#define AVX512 __attribute__((target("avx2,bmi2,popcnt,avx512f,avx512bw,avx512vl,avx512dq")))

/*
 * The first pass's salts and live lanes (a 1 in each), set up once a query;
 * the later passes (k > 8) make theirs when they run, which for a stranger
 * is rarely. Small, so it stays in registers.
 */
struct test_avx2 {
	__m256i salt0, ones0;
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
 * Whether a live lane's bit is missing: positions from y32 * salt >> 23; word
 * pos / 32 of the block's sixteen comes from one of its two halves (a permute
 * of each by the low three bits of the word index, then a blend on the
 * fourth), shifted down by pos % 32; testc says whether every live lane's
 * bit 0 is set. (On little-endian, bit p of the block is bit p % 32 of 32-bit
 * word p / 32.)
 */
AVX2 __attribute__((always_inline)) static inline bool
missing8(__m256i lo, __m256i hi, __m256i yv, __m256i salt, __m256i ones)
{
	__m256i pos = _mm256_srli_epi32(_mm256_mullo_epi32(yv, salt), 23);
	__m256i index = _mm256_srli_epi32(pos, 5);
	__m256 from_lo = _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(lo, index));
	__m256 from_hi = _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(hi, index));
	__m256 half = _mm256_castsi256_ps(_mm256_slli_epi32(pos, 23)); /* pos bit 8 to the sign */
	__m256i word = _mm256_castps_si256(_mm256_blendv_ps(from_lo, from_hi, half));
	__m256i bit = _mm256_srlv_epi32(word, _mm256_and_si256(pos, _mm256_set1_epi32(31)));

	return !_mm256_testc_si256(bit, ones);
}

AVX2 __attribute__((always_inline)) static inline bool
covers_avx2(const uint64_t *block, uint32_t y32, const struct test_avx2 *t)
{
	const __m256i lo = _mm256_load_si256((const __m256i *)block);
	const __m256i hi = _mm256_load_si256((const __m256i *)block + 1);
	const __m256i yv = _mm256_set1_epi32((int)y32);

	if (missing8(lo, hi, yv, t->salt0, t->ones0))
		return false;
	for (unsigned p = 1; 8 * p < t->k; p++)
		if (missing8(lo, hi, yv, _mm256_loadu_si256((const __m256i *)(BLOCK_SALT32 + 8 * p)),
			     live_ones(t->k, p)))
			return false;
	return true;
}

BLOCKQUERY_DRIVERS(avx2, SIMD_AVX2, AVX2, struct test_avx2, test_avx2_for, covers_avx2)

struct test_avx512 {
	__m512i salt[2];
	__mmask16 lanes[2]; /* lanes[1] is 0 for k <= 16: one pass */
};

AVX512 __attribute__((always_inline)) static inline struct test_avx512 test_avx512_for(unsigned k)
{
	struct test_avx512 t = {
		.salt = { _mm512_loadu_si512((const void *)BLOCK_SALT32),
			  _mm512_loadu_si512((const void *)(BLOCK_SALT32 + 16)) },
		.lanes = { (__mmask16)(k >= 16 ? 0xffff : (1u << k) - 1),
			   (__mmask16)(k <= 16 ? 0 : (1u << (k - 16)) - 1) },
	};
	return t;
}

/* As missing8 with 16 lanes: the block is one register, so one permute fetches every word. */
AVX512 __attribute__((always_inline)) static inline __mmask16
missing16(__m512i blk, __m512i yv, __m512i salt, __mmask16 lanes)
{
	const __m512i low5 = _mm512_set1_epi32(31), one = _mm512_set1_epi32(1);
	__m512i pos = _mm512_srli_epi32(_mm512_mullo_epi32(yv, salt), 23);
	__m512i word = _mm512_permutexvar_epi32(_mm512_srli_epi32(pos, 5), blk);
	__m512i bit = _mm512_srlv_epi32(word, _mm512_and_si512(pos, low5));

	return _mm512_mask_testn_epi32_mask(lanes, bit, one);
}

/* No branch on the bits: both passes (k > 16) are always made, so successive loads overlap. */
AVX512 __attribute__((always_inline)) static inline bool
covers_avx512(const uint64_t *block, uint32_t y32, const struct test_avx512 *t)
{
	const __m512i blk = _mm512_load_si512((const void *)block);
	const __m512i yv = _mm512_set1_epi32((int)y32);
	__mmask16 missing = missing16(blk, yv, t->salt[0], t->lanes[0]);

	if (t->lanes[1])
		missing |= missing16(blk, yv, t->salt[1], t->lanes[1]);
	return missing == 0;
}

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
