/* sigscan.c - signature windows: their keyed hash, and the one-word prefilter scanned per byte. */
#include "sigscan.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "rng.h"

#define MAX_INDEX_BITS 17 /* level 1 at most 2^17 words (1 MiB, about an L2); positions use bits 20..43 */

struct sigscan {
	unsigned window;
	uint64_t s1, m1;       /* level 1 */
	uint64_t s2, m2, s3, m3; /* level 2 and the window store */
	uint64_t piece_mul[8]; /* folding windows longer than 8 bytes */
	uint64_t *words;
	unsigned index_bits;
	bool simd, simd_ok;
};

static bool cpu_has_vbmi(void);

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
	s->simd_ok = window <= 8 && cpu_has_vbmi();
	s->simd = s->simd_ok;
	return s;
}

void sigscan_free(struct sigscan *s)
{
	if (s == NULL)
		return;
	free(s->words);
	free(s);
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

static inline uint64_t level1_hash(const struct sigscan *s, uint64_t word)
{
	return (word ^ s->s1) * s->m1;
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

static size_t scan_scalar(const struct sigscan *s, const uint8_t *p, size_t from, size_t to,
			  uint32_t *out)
{
	size_t n = 0;

	for (size_t at = from; at < to; at++) {
		uint64_t h = level1_hash(s, sigscan_word(s, p + at)), mask = level1_mask(h);
		if ((s->words[level1_index(s, h)] & mask) == mask)
			out[n++] = (uint32_t)at;
	}
	return n;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define SIMD_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")))

static bool cpu_has_vbmi(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
	       __builtin_cpu_supports("avx512vbmi");
}

/* Byte i of lane j is byte j + i of the input: lane j holds the window at position j. */
static const uint8_t WINDOW_BYTES[64] = {
	0, 1, 2, 3, 4, 5, 6, 7,   1, 2, 3, 4, 5, 6, 7, 8,   2, 3, 4, 5, 6, 7, 8, 9,
	3, 4, 5, 6, 7, 8, 9, 10,  4, 5, 6, 7, 8, 9, 10, 11, 5, 6, 7, 8, 9, 10, 11, 12,
	6, 7, 8, 9, 10, 11, 12, 13, 7, 8, 9, 10, 11, 12, 13, 14,
};

struct simd_consts {
	__m512i idx, s1, m1, keep, one, low6;
	__m128i index_shift;  /* 64 - index_bits: with no index bits, every index is 0 */
	__mmask16 need;
	const uint64_t *words;
};

/* Which of the 8 windows starting at p pass level 1. */
SIMD_TARGET static inline __mmask8 pass8(const struct simd_consts *k, const uint8_t *p)
{
	__m512i bytes = _mm512_castsi128_si512(_mm_maskz_loadu_epi8(k->need, p));
	__m512i word = _mm512_and_si512(_mm512_permutexvar_epi8(k->idx, bytes), k->keep);
	__m512i h = _mm512_mullo_epi64(_mm512_xor_si512(word, k->s1), k->m1);
	uint64_t index[8] __attribute__((aligned(64))), loaded[8] __attribute__((aligned(64)));

	/* Eight scalar loads beat a gather here: 5% at 256 KiB of level 1, 15% at 1 MiB (Zen). */
	_mm512_store_si512((void *)index, _mm512_srl_epi64(h, k->index_shift));
	for (int i = 0; i < 8; i++)
		loaded[i] = k->words[index[i]];
	__m512i words = _mm512_load_si512((const void *)loaded);
	__m512i mask = _mm512_or_si512(
		_mm512_or_si512(_mm512_sllv_epi64(k->one, _mm512_and_si512(_mm512_srli_epi64(h, 38), k->low6)),
				_mm512_sllv_epi64(k->one, _mm512_and_si512(_mm512_srli_epi64(h, 32), k->low6))),
		_mm512_or_si512(_mm512_sllv_epi64(k->one, _mm512_and_si512(_mm512_srli_epi64(h, 26), k->low6)),
				_mm512_sllv_epi64(k->one, _mm512_and_si512(_mm512_srli_epi64(h, 20), k->low6))));
	return _mm512_cmpeq_epi64_mask(_mm512_and_si512(words, mask), mask);
}

/*
 * Append the passing positions of the 16 from at, without a branch on which
 * passed: with a tenth of a million windows or more, a few percent pass, too
 * many for a predicted loop. All 16 lanes are stored; out has room for them,
 * as n is at most the number of positions scanned before at.
 */
SIMD_TARGET static inline size_t emit16(__mmask16 pass, size_t at, uint32_t *out, size_t n)
{
	const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	__m512i positions = _mm512_add_epi32(iota, _mm512_set1_epi32((int)at));

	_mm512_storeu_si512((void *)(out + n), _mm512_maskz_compress_epi32(pass, positions));
	return n + (size_t)__builtin_popcount(pass);
}

/* The same for the last 8 positions, storing 8 lanes. */
SIMD_TARGET static inline size_t emit8(__mmask8 pass, size_t at, uint32_t *out, size_t n)
{
	const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	__m256i positions = _mm256_add_epi32(iota, _mm256_set1_epi32((int)at));

	_mm256_storeu_si256((void *)(out + n), _mm256_maskz_compress_epi32(pass, positions));
	return n + (size_t)__builtin_popcount(pass);
}

/* Positions [from, to) eight at a time, two groups of eight a pass; windows of W <= 8 bytes. */
SIMD_TARGET static size_t scan_simd(const struct sigscan *s, const uint8_t *p, size_t from,
				    size_t to, uint32_t *out)
{
	struct simd_consts k = {
		.idx = _mm512_loadu_si512((const void *)WINDOW_BYTES),
		.s1 = _mm512_set1_epi64((long long)s->s1),
		.m1 = _mm512_set1_epi64((long long)s->m1),
		.keep = _mm512_set1_epi64(s->window == 8 ? -1LL : (long long)((1ULL << (8 * s->window)) - 1)),
		.one = _mm512_set1_epi64(1),
		.low6 = _mm512_set1_epi64(63),
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
#else
static bool cpu_has_vbmi(void)
{
	return false;
}

static size_t scan_simd(const struct sigscan *s, const uint8_t *p, size_t from, size_t to,
			uint32_t *out)
{
	return scan_scalar(s, p, from, to, out);
}
#endif

size_t sigscan_candidates(const struct sigscan *s, const uint8_t *p, size_t positions,
			  size_t from, uint32_t *out, size_t max, size_t *next)
{
	/* Each step may pass all its positions: scan at most max of them. */
	size_t to = positions - from > max ? from + max : positions, n = 0;

	if (s->simd) {
		size_t whole = from + (to - from) / 8 * 8;
		n = scan_simd(s, p, from, whole, out);
		from = whole;
	}
	n += scan_scalar(s, p, from, to, out + n);
	*next = to;
	return n;
}

size_t sigscan_bytes(const struct sigscan *s)
{
	return sizeof(*s) + (s->words ? (sizeof(uint64_t) << s->index_bits) : 0);
}

void sigscan_set_simd(struct sigscan *s, bool on)
{
	s->simd = on && s->simd_ok;
}
