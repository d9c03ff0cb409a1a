/* sigscan.c - signature windows: their keyed hash, and the one-word prefilter scanned per byte. */
#include "sigscan.h"

#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "error.h"
#include "rng.h"
#include "simd.h"

#define MAX_INDEX_BITS 17 /* level 1 at most 2^17 words (1 MiB, about an L2); positions use bits 20..43 */

struct sigscan {
	unsigned window;
	uint64_t s1, m1;       /* level 1 */
	uint64_t s2, m2, s3, m3; /* level 2 and the window store */
	uint64_t piece_mul[8]; /* folding windows longer than 8 bytes */
	uint64_t *words;
	unsigned index_bits;
	enum simd_level level; /* of the scan kernel: scalar, avx2 or avx512 */
};

static enum simd_level scan_level(unsigned window, enum simd_level cap);

struct sigscan *sigscan_new(unsigned window, const struct hash_key *key, char *err, size_t errlen)
{
	struct sigscan *s;
	uint64_t seed;

	if (window < 1 || window > 64) {
		error_set(err, errlen, "signature window must be 1 to 64 bytes (got %u)", window);
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		error_set(err, errlen, "out of memory");
		return NULL;
	}
	s->window = window;
	/* Draw the constants from the secret; multipliers odd, so they are bijections. */
	memcpy(&seed, key->secret + 64, sizeof(seed));
	s->s1 = rng_splitmix64(&seed);
	s->m1 = rng_splitmix64(&seed) | 1;
	s->s2 = rng_splitmix64(&seed);
	s->m2 = rng_splitmix64(&seed) | 1;
	s->s3 = rng_splitmix64(&seed);
	s->m3 = rng_splitmix64(&seed) | 1;
	for (int i = 0; i < 8; i++)
		s->piece_mul[i] = rng_splitmix64(&seed) | 1;
	s->level = scan_level(window, simd_best());
	return s;
}

void sigscan_free(struct sigscan *s)
{
	if (s == NULL)
		return;
	free(s->words);
	free(s);
}

struct sigscan *sigscan_clone(const struct sigscan *s)
{
	struct sigscan *copy = malloc(sizeof(*copy));
	bool failed = false;

	if (copy == NULL)
		return NULL;
	*copy = *s;
	copy->words = array_dup(s->words, (sizeof(*s->words)) << s->index_bits, &failed);
	if (failed) {
		free(copy);
		return NULL;
	}
	return copy;
}

static inline uint64_t load_le(const uint8_t *p, size_t n)
{
	uint64_t w = 0;

	memcpy(&w, p, n);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w) >> (64 - 8 * n);
#endif
	return w;
}

uint64_t sigscan_word(const struct sigscan *s, const uint8_t *p)
{
	unsigned w = s->window;

	if (w <= 8)
		return load_le(p, w);
	/* Pieces at 0, 8, 16, ...; the last one ends at the window's end (it may overlap). */
	uint64_t word = 0;
	for (unsigned i = 0, at = 0; at < w; i++, at += 8)
		word += load_le(p + (at + 8 <= w ? at : w - 8), 8) * s->piece_mul[i];
	return word;
}

struct hash128 sigscan_hash(const struct sigscan *s, uint64_t word)
{
	struct hash128 h = { (word ^ s->s2) * s->m2, (word ^ s->s3) * s->m3 };

	return h;
}

int sigscan_reserve(struct sigscan *s, uint64_t windows)
{
	unsigned bits = 0;

	/* Words for 16 to 32 bits a window (about 0.5% pass): the next power of two. */
	while (bits < MAX_INDEX_BITS && (64ULL << bits) < windows * 16)
		bits++;
	uint64_t *words = calloc(1ULL << bits, sizeof(*words));
	if (words == NULL)
		return -1;
	free(s->words);
	s->words = words;
	s->index_bits = bits;
	return 0;
}

/*
 * A multiply carries each bit only upwards, so the mask bits (20..43) would
 * see only a window's first 44 bits: windows sharing a prefix ("GET ...")
 * would share most of their mask, and traffic with that prefix would pass
 * six times as often. Folding the upper half onto the lower first lets
 * every byte reach them, for a shift and an xor.
 */
static inline uint64_t level1_hash(const struct sigscan *s, uint64_t word)
{
	uint64_t x = word ^ s->s1;

	return (x ^ (x >> 32)) * s->m1;
}

static inline uint64_t level1_index(const struct sigscan *s, uint64_t h)
{
	return s->index_bits ? h >> (64 - s->index_bits) : 0;
}

static inline uint64_t level1_mask(uint64_t h)
{
	return 1ULL << ((h >> 38) & 63) | 1ULL << ((h >> 32) & 63) | 1ULL << ((h >> 26) & 63) |
	       1ULL << ((h >> 20) & 63);
}

void sigscan_add(struct sigscan *s, uint64_t word)
{
	uint64_t h = level1_hash(s, word);

	s->words[level1_index(s, h)] |= level1_mask(h);
}

bool sigscan_passes(const struct sigscan *s, uint64_t word)
{
	uint64_t h = level1_hash(s, word), mask = level1_mask(h);

	return (s->words[level1_index(s, h)] & mask) == mask;
}

/* Windows of W <= 8 bytes: the 8 bytes at p (which must all be readable), cut to W. */
static inline uint64_t short_word(const uint8_t *p, uint64_t keep)
{
	return load_le(p, 8) & keep;
}

static inline uint64_t short_keep(unsigned window)
{
	return window >= 8 ? ~0ULL : (1ULL << (8 * window)) - 1;
}

/*
 * One position at a time. Windows of W <= 8 bytes are read as one 8-byte
 * load while 8 bytes remain (the last 7 - W positions fall back to a W-byte
 * copy); passing positions are appended without a branch on the result.
 * len_after is the number of bytes from p + to - 1 on, at least W.
 */
static size_t scan_scalar(const struct sigscan *s, const uint8_t *p, size_t from, size_t to,
			  size_t len, uint32_t *out)
{
	size_t n = 0, at = from;

	if (s->window <= 8) {
		uint64_t keep = short_keep(s->window);
		size_t whole = len >= 8 ? len - 7 : 0; /* positions with 8 readable bytes */
		for (; at < to && at < whole; at++) {
			uint64_t h = level1_hash(s, short_word(p + at, keep)), mask = level1_mask(h);
			out[n] = (uint32_t)at;
			n += (s->words[level1_index(s, h)] & mask) == mask;
		}
	}
	for (; at < to; at++) {
		uint64_t h = level1_hash(s, sigscan_word(s, p + at)), mask = level1_mask(h);
		out[n] = (uint32_t)at;
		n += (s->words[level1_index(s, h)] & mask) == mask;
	}
	return n;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_X86_SCAN 1

#define AVX2_TARGET __attribute__((target("avx2,bmi2,popcnt")))
#define AVX512_TARGET __attribute__((target("avx2,bmi2,popcnt,avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")))

/* ---- AVX2: four positions a vector, two vectors a pass ---- */

/* Within each 128-bit half: the windows at 0 and 1 (low half), 2 and 3 (high half). */
static const uint8_t WINDOW_PAIRS[32] = {
	0, 1, 2, 3, 4, 5, 6, 7, 1, 2, 3, 4, 5, 6, 7, 8,
	2, 3, 4, 5, 6, 7, 8, 9, 3, 4, 5, 6, 7, 8, 9, 10,
};

/* For each 4-bit pass mask, the lanes that passed, in order (the rest don't care). */
static const uint32_t COMPRESS4[16][4] = {
	{ 0, 0, 0, 0 }, { 0, 0, 0, 0 }, { 1, 0, 0, 0 }, { 0, 1, 0, 0 },
	{ 2, 0, 0, 0 }, { 0, 2, 0, 0 }, { 1, 2, 0, 0 }, { 0, 1, 2, 0 },
	{ 3, 0, 0, 0 }, { 0, 3, 0, 0 }, { 1, 3, 0, 0 }, { 0, 1, 3, 0 },
	{ 2, 3, 0, 0 }, { 0, 2, 3, 0 }, { 1, 2, 3, 0 }, { 0, 1, 2, 3 },
};

struct avx2_consts {
	__m256i idx, s1, m1_lo, m1_hi, keep, one, low6;
	__m128i index_shift;
	const uint64_t *words;
};

/* a * b mod 2^64 in each 64-bit lane, b given as its 32-bit halves (AVX2 has no 64-bit multiply). */
AVX2_TARGET static inline __m256i mul64(__m256i a, __m256i b_lo, __m256i b_hi)
{
	__m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), b_lo),
					 _mm256_mul_epu32(a, b_hi));
	return _mm256_add_epi64(_mm256_mul_epu32(a, b_lo), _mm256_slli_epi64(cross, 32));
}

AVX2_TARGET static inline __m256i one_bit(const struct avx2_consts *k, __m256i h, int shift)
{
	return _mm256_sllv_epi64(k->one, _mm256_and_si256(_mm256_srli_epi64(h, shift), k->low6));
}

/* Which of the 4 windows starting at p pass level 1 (bit j: the window at p + j). */
AVX2_TARGET static inline unsigned pass4(const struct avx2_consts *k, const uint8_t *p)
{
	__m256i bytes = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)p));
	__m256i word = _mm256_and_si256(_mm256_shuffle_epi8(bytes, k->idx), k->keep);
	__m256i x = _mm256_xor_si256(word, k->s1);
	__m256i h = mul64(_mm256_xor_si256(x, _mm256_srli_epi64(x, 32)), k->m1_lo, k->m1_hi); /* level1_hash */
	uint64_t index[4] __attribute__((aligned(32)));

	/* Four scalar loads: AVX2's gather is slower than them (as AVX-512's is, below). */
	_mm256_store_si256((__m256i *)index, _mm256_srl_epi64(h, k->index_shift));
	__m256i words = _mm256_setr_epi64x((long long)k->words[index[0]], (long long)k->words[index[1]],
					   (long long)k->words[index[2]], (long long)k->words[index[3]]);
	__m256i mask = _mm256_or_si256(_mm256_or_si256(one_bit(k, h, 38), one_bit(k, h, 32)),
				       _mm256_or_si256(one_bit(k, h, 26), one_bit(k, h, 20)));
	__m256i hit = _mm256_cmpeq_epi64(_mm256_and_si256(words, mask), mask);
	return (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(hit));
}

AVX2_TARGET static inline size_t emit4(unsigned pass, size_t at, uint32_t *out, size_t n)
{
	__m128i lanes = _mm_loadu_si128((const __m128i *)COMPRESS4[pass]);

	_mm_storeu_si128((__m128i *)(out + n), _mm_add_epi32(lanes, _mm_set1_epi32((int)at)));
	return n + (size_t)__builtin_popcount(pass);
}

/*
 * Positions [from, to), 8 a pass; windows of W <= 8 bytes. Each pass loads 16
 * bytes at at and at + 4: the caller leaves the last positions (those with
 * fewer than 16 readable bytes) to the scalar scan. Every lane of an emit is
 * stored; out has room, as n is at most the positions scanned before at.
 */
AVX2_TARGET static size_t scan_avx2(const struct sigscan *s, const uint8_t *p, size_t from,
				    size_t to, uint32_t *out)
{
	struct avx2_consts k = {
		.idx = _mm256_loadu_si256((const __m256i *)WINDOW_PAIRS),
		.s1 = _mm256_set1_epi64x((long long)s->s1),
		.m1_lo = _mm256_set1_epi64x((long long)(s->m1 & 0xffffffff)),
		.m1_hi = _mm256_set1_epi64x((long long)(s->m1 >> 32)),
		.keep = _mm256_set1_epi64x((long long)short_keep(s->window)),
		.one = _mm256_set1_epi64x(1),
		.low6 = _mm256_set1_epi64x(63),
		.index_shift = _mm_cvtsi32_si128((int)(64 - s->index_bits)),
		.words = s->words,
	};
	size_t n = 0, at = from;

	for (; at + 8 <= to; at += 8) {
		n = emit4(pass4(&k, p + at), at, out, n);
		n = emit4(pass4(&k, p + at + 4), at + 4, out, n);
	}
	return n;
}

/* ---- AVX-512 (VBMI): eight positions a vector, two vectors a pass ---- */

/* Byte i of lane j is byte j + i of the input: lane j holds the window at position j. */
static const uint8_t WINDOW_BYTES[64] = {
	0, 1, 2, 3, 4, 5, 6, 7,   1, 2, 3, 4, 5, 6, 7, 8,   2, 3, 4, 5, 6, 7, 8, 9,
	3, 4, 5, 6, 7, 8, 9, 10,  4, 5, 6, 7, 8, 9, 10, 11, 5, 6, 7, 8, 9, 10, 11, 12,
	6, 7, 8, 9, 10, 11, 12, 13, 7, 8, 9, 10, 11, 12, 13, 14,
};

struct avx512_consts {
	__m512i idx, s1, m1, keep, one;
	__m128i index_shift;  /* 64 - index_bits: with no index bits, every index is 0 */
	__mmask16 need;
	const uint64_t *words;
};

/* Which of the 8 windows starting at p pass level 1. */
AVX512_TARGET static inline __mmask8 pass8(const struct avx512_consts *k, const uint8_t *p)
{
	__m512i bytes = _mm512_castsi128_si512(_mm_maskz_loadu_epi8(k->need, p));
	__m512i word = _mm512_and_si512(_mm512_permutexvar_epi8(k->idx, bytes), k->keep);
	__m512i x = _mm512_xor_si512(word, k->s1);
	__m512i h = _mm512_mullo_epi64(_mm512_xor_si512(x, _mm512_srli_epi64(x, 32)), k->m1); /* level1_hash */
	uint64_t index[8] __attribute__((aligned(64))), loaded[8] __attribute__((aligned(64)));

	/* Eight scalar loads beat a gather here: 5% at 256 KiB of level 1, 15% at 1 MiB (Zen). */
	_mm512_store_si512((void *)index, _mm512_srl_epi64(h, k->index_shift));
	for (int i = 0; i < 8; i++)
		loaded[i] = k->words[index[i]];
	__m512i words = _mm512_load_si512((const void *)loaded);
	/* 1 << (n % 64) is 1 rotated by n: a rotate takes its count modulo 64, so no mask. */
	__m512i bit0 = _mm512_rolv_epi64(k->one, _mm512_srli_epi64(h, 38));
	__m512i bit1 = _mm512_rolv_epi64(k->one, _mm512_srli_epi64(h, 32));
	__m512i bit2 = _mm512_rolv_epi64(k->one, _mm512_srli_epi64(h, 26));
	__m512i bit3 = _mm512_rolv_epi64(k->one, _mm512_srli_epi64(h, 20));
	__m512i mask = _mm512_or_si512(_mm512_ternarylogic_epi64(bit0, bit1, bit2, 0xfe), bit3);
	return _mm512_cmpeq_epi64_mask(_mm512_and_si512(words, mask), mask);
}

/*
 * Append the passing positions of the 16 from at, without a branch on which
 * passed: with a tenth of a million windows or more, a few percent pass, too
 * many for a predicted loop. All 16 lanes are stored; out has room for them,
 * as n is at most the number of positions scanned before at.
 */
AVX512_TARGET static inline size_t emit16(__mmask16 pass, size_t at, uint32_t *out, size_t n)
{
	const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	__m512i positions = _mm512_add_epi32(iota, _mm512_set1_epi32((int)at));

	_mm512_storeu_si512((void *)(out + n), _mm512_maskz_compress_epi32(pass, positions));
	return n + (size_t)__builtin_popcount(pass);
}

/* The same for the last 8 positions, storing 8 lanes. */
AVX512_TARGET static inline size_t emit8(__mmask8 pass, size_t at, uint32_t *out, size_t n)
{
	const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	__m256i positions = _mm256_add_epi32(iota, _mm256_set1_epi32((int)at));

	_mm256_storeu_si256((void *)(out + n), _mm256_maskz_compress_epi32(pass, positions));
	return n + (size_t)__builtin_popcount(pass);
}

/* Positions [from, to), two groups of eight a pass; windows of W <= 8 bytes. */
AVX512_TARGET static size_t scan_avx512(const struct sigscan *s, const uint8_t *p, size_t from,
					size_t to, uint32_t *out)
{
	struct avx512_consts k = {
		.idx = _mm512_loadu_si512((const void *)WINDOW_BYTES),
		.s1 = _mm512_set1_epi64((long long)s->s1),
		.m1 = _mm512_set1_epi64((long long)s->m1),
		.keep = _mm512_set1_epi64((long long)short_keep(s->window)),
		.one = _mm512_set1_epi64(1),
		.index_shift = _mm_cvtsi32_si128((int)(64 - s->index_bits)),
		/* Lanes 0..7 read bytes 0 .. 7 + W - 1: only those are loaded. */
		.need = (__mmask16)((1u << (7 + s->window)) - 1),
		.words = s->words,
	};
	size_t n = 0, at = from;

	for (; at + 16 <= to; at += 16) {
		__mmask8 a = pass8(&k, p + at), b = pass8(&k, p + at + 8);
		n = emit16((__mmask16)(a | (unsigned)b << 8), at, out, n);
	}
	if (at + 8 <= to)
		n = emit8(pass8(&k, p + at), at, out, n);
	return n;
}
#endif

static enum simd_level scan_level(unsigned window, enum simd_level cap)
{
	(void)cap; /* no kernel but the scalar one on other CPUs */
	if (window > 8)
		return SIMD_SCALAR; /* longer windows are folded from pieces: one at a time */
#ifdef HAVE_X86_SCAN
	if (cap >= SIMD_AVX512 && simd_cpu_has_vbmi())
		return SIMD_AVX512;
	if (cap >= SIMD_AVX2 && simd_cpu_has(SIMD_AVX2))
		return SIMD_AVX2;
#endif
	return SIMD_SCALAR;
}

size_t sigscan_candidates(const struct sigscan *s, const uint8_t *p, size_t positions,
			  size_t from, uint32_t *out, size_t max, size_t *next)
{
	/* Each step may pass all its positions: scan at most max of them. */
	size_t to = positions - from > max ? from + max : positions, n = 0;
	size_t len = positions + s->window - 1;

#ifdef HAVE_X86_SCAN
	if (s->level == SIMD_AVX512) {
		size_t whole = from + (to - from) / 8 * 8;
		n = scan_avx512(s, p, from, whole, out);
		from = whole;
	} else if (s->level == SIMD_AVX2) {
		/* Each pass reads 16 bytes from at + 4: stop where fewer remain. */
		size_t safe = len >= 20 ? len - 19 : 0, end = to < safe ? to : safe;
		if (end > from) {
			size_t whole = from + (end - from) / 8 * 8;
			n = scan_avx2(s, p, from, whole, out);
			from = whole;
		}
	}
#endif
	n += scan_scalar(s, p, from, to, len, out + n);
	*next = to;
	return n;
}

size_t sigscan_bytes(const struct sigscan *s)
{
	return sizeof(*s) + (s->words ? (sizeof(uint64_t) << s->index_bits) : 0);
}

enum simd_level sigscan_simd(const struct sigscan *s)
{
	return s->level;
}

void sigscan_set_simd(struct sigscan *s, enum simd_level cap)
{
	s->level = scan_level(s->window, cap);
}
