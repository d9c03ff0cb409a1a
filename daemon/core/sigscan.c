/* sigscan.c - signature windows: their keyed hash, and the one-word prefilter scanned per byte. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "sigscan.h"

#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "clock.h"
#include "error.h"
#include "rng.h"
#include "simd.h"

#define MAX_INDEX_BITS 18 /* level 1 at most 2^18 32-bit words (1 MiB, about an L2) */

/*
 * Level 1: its keyed constants (level1_value, level1_index, level1_mask; the
 * multipliers odd) and its 2^index_bits words. A scan copies it into a local,
 * which the 32-bit positions it writes cannot alias, so it stays in registers.
 */
struct level1 {
	uint32_t salt, fold_mul, index_mul, bits_mul;
	unsigned index_bits;
	bool sparse; /* 16 bits or more a window: few positions pass, and a pass of none is skipped */
	uint32_t *words;
};

struct sigscan {
	unsigned window;
	struct level1 l1;
	uint64_t s2, m2, s3, m3; /* level 2 and the window store */
	uint64_t piece_mul[8]; /* folding windows longer than 8 bytes */
	enum simd_level level; /* of the scan kernel: scalar, avx2 or avx512 */
	bool gather;           /* avx2: level 1's words by a gather, not eight loads (sigscan.h) */
};

static enum simd_level scan_level(unsigned window, enum simd_level cap);
static bool avx2_gather_fast(void);

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
	uint64_t salt = rng_splitmix64(&seed), mul = rng_splitmix64(&seed);
	s->s2 = rng_splitmix64(&seed);
	s->m2 = rng_splitmix64(&seed) | 1;
	s->s3 = rng_splitmix64(&seed);
	s->m3 = rng_splitmix64(&seed) | 1;
	for (int i = 0; i < 8; i++)
		s->piece_mul[i] = rng_splitmix64(&seed) | 1;
	/* Level 1's, drawn last: the constants before it (the window store's hash) stay what they were. */
	uint64_t more = rng_splitmix64(&seed);
	s->l1 = (struct level1){ .salt = (uint32_t)salt, .fold_mul = (uint32_t)mul | 1,
				 .index_mul = (uint32_t)(mul >> 32) | 1, .bits_mul = (uint32_t)more | 1 };
	sigscan_set_simd(s, simd_best());
	return s;
}

void sigscan_free(struct sigscan *s)
{
	if (s == NULL)
		return;
	free(s->l1.words);
	free(s);
}

struct sigscan *sigscan_clone(const struct sigscan *s)
{
	struct sigscan *copy = malloc(sizeof(*copy));
	bool failed = false;

	if (copy == NULL)
		return NULL;
	*copy = *s;
	copy->l1.words = array_dup(s->l1.words, (sizeof(*s->l1.words)) << s->l1.index_bits, &failed);
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

	/* Words for 16 to 32 bits a window (0.2% to 0.8% of strangers pass): the next power of two. */
	while (bits < MAX_INDEX_BITS && (32ULL << bits) < windows * 16)
		bits++;
	uint32_t *words = calloc(1ULL << bits, sizeof(*words));
	if (words == NULL)
		return -1;
	free(s->l1.words);
	s->l1.words = words;
	s->l1.index_bits = bits;
	s->l1.sparse = (32ULL << bits) >= windows * 16;
	return 0;
}

/*
 * Level 1 works on 32-bit lanes, so a vector tests 16 positions (AVX-512)
 * or 8 (AVX2) a pass. A window's 64-bit word becomes one
 * 32-bit value by a keyed multiply of its low half xored with its high half:
 * an xor of the halves alone would be the same for every window whose halves
 * are equal ("abababab", runs of one byte), whatever the key, so traffic of
 * them would pass wherever one such window was added. Of that value, one
 * multiply's top bits pick the word, another's (of the value folded onto
 * itself, so that every bit reaches every field) the 4 bits in it: a
 * multiply carries bits only upwards, and unfolded, windows sharing their
 * first bytes ("GET ...") would share their bits.
 */
static inline uint32_t level1_value(const struct level1 *k, uint64_t word)
{
	return ((uint32_t)word ^ k->salt) * k->fold_mul ^ (uint32_t)(word >> 32);
}

/* The word's index: the top index_bits of a product (none: shifted by 32, in 64 bits, it is 0). */
static inline uint32_t level1_index(const struct level1 *k, uint32_t v)
{
	return (uint32_t)((uint64_t)(uint32_t)(v * k->index_mul) >> (32 - k->index_bits));
}

/*
 * The bits of the two 5-bit fields of a 10-bit number: a one-at-a-time scan
 * makes a window's four bits with two loads from this table where shifts
 * would take twelve instructions (the vector kernels rotate 1 instead).
 */
#define FIELDS(i) (1u << ((i) >> 5) | 1u << ((i) & 31))
#define FIELDS4(i) FIELDS(i), FIELDS((i) + 1), FIELDS((i) + 2), FIELDS((i) + 3)
#define FIELDS16(i) FIELDS4(i), FIELDS4((i) + 4), FIELDS4((i) + 8), FIELDS4((i) + 12)
#define FIELDS64(i) FIELDS16(i), FIELDS16((i) + 16), FIELDS16((i) + 32), FIELDS16((i) + 48)
#define FIELDS256(i) FIELDS64(i), FIELDS64((i) + 64), FIELDS64((i) + 128), FIELDS64((i) + 192)
static const uint32_t FIELD_BITS[1024] = { FIELDS256(0), FIELDS256(256), FIELDS256(512), FIELDS256(768) };

/* Bits 27..31, 22..26, 17..21 and 12..16 of the product are the four bits' positions. */
static inline uint32_t level1_mask(const struct level1 *k, uint32_t v)
{
	uint32_t b = (v ^ v >> 16) * k->bits_mul;

	return FIELD_BITS[b >> 22] | FIELD_BITS[b >> 12 & 1023];
}

void sigscan_add(struct sigscan *s, uint64_t word)
{
	uint32_t v = level1_value(&s->l1, word);

	s->l1.words[level1_index(&s->l1, v)] |= level1_mask(&s->l1, v);
}

static inline bool passes(const struct level1 *l, uint64_t word)
{
	uint32_t v = level1_value(l, word), mask = level1_mask(l, v);

	return (l->words[level1_index(l, v)] & mask) == mask;
}

bool sigscan_passes(const struct sigscan *s, uint64_t word)
{
	return passes(&s->l1, word);
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
 * len is the payload's, at least W.
 */
static size_t scan_scalar(const struct sigscan *s, const uint8_t *p, size_t from, size_t to,
			  size_t len, uint32_t *out)
{
	const struct level1 l = s->l1;
	size_t n = 0, at = from;

	if (s->window <= 8) {
		uint64_t keep = short_keep(s->window);
		size_t whole = len >= 8 ? len - 7 : 0; /* positions with 8 readable bytes */
		for (; at < to && at < whole; at++) {
			out[n] = (uint32_t)at;
			n += passes(&l, short_word(p + at, keep));
		}
	}
	for (; at < to; at++) {
		out[n] = (uint32_t)at;
		n += passes(&l, sigscan_word(s, p + at));
	}
	return n;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_X86_SCAN 1

#define AVX2_TARGET __attribute__((target("avx2,bmi2,popcnt")))
#define AVX512_TARGET __attribute__((target("avx2,bmi2,popcnt,avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")))

/* ---- AVX2: eight positions a pass ---- */

/*
 * The low and the high 4 bytes of the windows at 0..3 (low 128-bit half) and
 * 4..7 (high half), from the 16 bytes at a position loaded into both halves.
 */
static const uint8_t WINDOW_LO8[32] = {
	0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5, 3, 4, 5, 6,
	4, 5, 6, 7, 5, 6, 7, 8, 6, 7, 8, 9, 7, 8, 9, 10,
};
static const uint8_t WINDOW_HI8[32] = {
	4, 5, 6, 7, 5, 6, 7, 8, 6, 7, 8, 9, 7, 8, 9, 10,
	8, 9, 10, 11, 9, 10, 11, 12, 10, 11, 12, 13, 11, 12, 13, 14,
};

/* For each 4-bit pass mask, the lanes that passed, in order (the rest don't care). */
static const uint32_t COMPRESS4[16][4] = {
	{ 0, 0, 0, 0 }, { 0, 0, 0, 0 }, { 1, 0, 0, 0 }, { 0, 1, 0, 0 },
	{ 2, 0, 0, 0 }, { 0, 2, 0, 0 }, { 1, 2, 0, 0 }, { 0, 1, 2, 0 },
	{ 3, 0, 0, 0 }, { 0, 3, 0, 0 }, { 1, 3, 0, 0 }, { 0, 1, 3, 0 },
	{ 2, 3, 0, 0 }, { 0, 2, 3, 0 }, { 1, 2, 3, 0 }, { 0, 1, 2, 3 },
};

struct avx2_consts {
	__m256i idx_lo, idx_hi, keep_lo, keep_hi, salt, fold_mul, index_mul, bits_mul, one, low5;
	__m128i index_shift; /* 32 - index_bits: with no index bits, every index is 0 */
	const uint32_t *words;
};

AVX2_TARGET static inline __m256i one_bit(const struct avx2_consts *k, __m256i b, int shift)
{
	return _mm256_sllv_epi32(k->one, _mm256_and_si256(_mm256_srli_epi32(b, shift), k->low5));
}

/* Which of the 8 windows starting at p pass level 1 (bit j: the window at p + j); reads 16 bytes. */
AVX2_TARGET __attribute__((always_inline)) static inline unsigned pass8_avx2(const struct avx2_consts *k, const uint8_t *p,
									 bool gather)
{
	__m256i bytes = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)p));
	__m256i lo = _mm256_and_si256(_mm256_shuffle_epi8(bytes, k->idx_lo), k->keep_lo);
	__m256i hi = _mm256_and_si256(_mm256_shuffle_epi8(bytes, k->idx_hi), k->keep_hi);
	__m256i v = _mm256_xor_si256(_mm256_mullo_epi32(_mm256_xor_si256(lo, k->salt), k->fold_mul), hi); /* level1_value */
	__m256i index = _mm256_srl_epi32(_mm256_mullo_epi32(v, k->index_mul), k->index_shift);
	__m256i b = _mm256_mullo_epi32(_mm256_xor_si256(v, _mm256_srli_epi32(v, 16)), k->bits_mul);
	__m256i words;

	if (gather) {
		words = _mm256_i32gather_epi32((const int *)k->words, index, 4);
	} else {
		uint32_t at[8] __attribute__((aligned(32)));
		const uint32_t *w = k->words;
		_mm256_store_si256((__m256i *)at, index);
		words = _mm256_setr_epi32((int)w[at[0]], (int)w[at[1]], (int)w[at[2]], (int)w[at[3]], (int)w[at[4]],
					  (int)w[at[5]], (int)w[at[6]], (int)w[at[7]]);
	}
	__m256i mask = _mm256_or_si256(_mm256_or_si256(_mm256_sllv_epi32(k->one, _mm256_srli_epi32(b, 27)),
						       one_bit(k, b, 22)),
				       _mm256_or_si256(one_bit(k, b, 17), one_bit(k, b, 12)));
	__m256i hit = _mm256_cmpeq_epi32(_mm256_and_si256(words, mask), mask);
	return (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(hit));
}

AVX2_TARGET static inline size_t emit4(unsigned pass, size_t at, uint32_t *out, size_t n)
{
	__m128i lanes = _mm_loadu_si128((const __m128i *)COMPRESS4[pass]);

	_mm_storeu_si128((__m128i *)(out + n), _mm_add_epi32(lanes, _mm_set1_epi32((int)at)));
	return n + (size_t)__builtin_popcount(pass);
}

/*
 * Positions [from, to), 8 a pass; windows of W <= 8 bytes. Each pass loads 16
 * bytes at at: the caller leaves the last positions (those with fewer than 16
 * readable bytes) to the scalar scan. Every lane of an emit is stored; out
 * has room, as n is at most the positions scanned before at.
 */
AVX2_TARGET __attribute__((always_inline)) static inline size_t
scan_avx2_with(const struct sigscan *s, const uint8_t *p, size_t from, size_t to, uint32_t *out, bool gather, bool sparse)
{
	uint64_t keep = short_keep(s->window);
	struct avx2_consts k = {
		.idx_lo = _mm256_loadu_si256((const __m256i *)WINDOW_LO8),
		.idx_hi = _mm256_loadu_si256((const __m256i *)WINDOW_HI8),
		.keep_lo = _mm256_set1_epi32((int)(uint32_t)keep),
		.keep_hi = _mm256_set1_epi32((int)(uint32_t)(keep >> 32)),
		.salt = _mm256_set1_epi32((int)s->l1.salt),
		.fold_mul = _mm256_set1_epi32((int)s->l1.fold_mul),
		.index_mul = _mm256_set1_epi32((int)s->l1.index_mul),
		.bits_mul = _mm256_set1_epi32((int)s->l1.bits_mul),
		.one = _mm256_set1_epi32(1),
		.low5 = _mm256_set1_epi32(31),
		.index_shift = _mm_cvtsi32_si128((int)(32 - s->l1.index_bits)),
		.words = s->l1.words,
	};
	size_t n = 0, at = from;

	for (; at + 8 <= to; at += 8) {
		unsigned pass = pass8_avx2(&k, p + at, gather);
		/*
		 * Sparse, under a twentieth of the passes pass any, and a branch
		 * skips them (1000 to 1460 MB/s); denser, it would mispredict (840
		 * to 550 at a million windows). A constant here: each way its loop.
		 */
		if (sparse && pass == 0)
			continue;
		n = emit4(pass & 15, at, out, n);
		n = emit4(pass >> 4, at + 4, out, n);
	}
	return n;
}

AVX2_TARGET static size_t scan_avx2_loads(const struct sigscan *s, const uint8_t *p, size_t from, size_t to, uint32_t *out)
{
	return s->l1.sparse ? scan_avx2_with(s, p, from, to, out, false, true)
			    : scan_avx2_with(s, p, from, to, out, false, false);
}

AVX2_TARGET static size_t scan_avx2_gather(const struct sigscan *s, const uint8_t *p, size_t from, size_t to, uint32_t *out)
{
	return s->l1.sparse ? scan_avx2_with(s, p, from, to, out, true, true)
			    : scan_avx2_with(s, p, from, to, out, true, false);
}

/*
 * Whether this CPU's AVX2 gather beats eight scalar loads at level 1's
 * lookups, as the scan does them: it does on an Intel Xeon with AVX-512
 * (1470 against 990 MB/s, the scan alone, 100,000 windows; 1090 against
 * 810 at a million), not on AMD's Zen 5 (850 against 1040), nor where a
 * microcode fix made gathers slow. Timed once, on 64 KiB of random bytes
 * against a level 1 of 256 KiB, each way at its best of five; the loads
 * unless the gather is clearly faster. Both give the same positions, so
 * the choice costs only time.
 */
#define PROBE_BYTES (64u << 10)
#define PROBE_INDEX_BITS 16

static double time_scan_ms(const struct sigscan *s, const uint8_t *p, uint32_t *out, bool gather)
{
	struct timespec t0;
	size_t n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	n = gather ? scan_avx2_gather(s, p, 0, PROBE_BYTES - 16, out) : scan_avx2_loads(s, p, 0, PROBE_BYTES - 16, out);
	__asm__ volatile("" : : "r"(n) : "memory"); /* the scan is not left out */
	return clock_since_ms(&t0);
}

static bool measure_gather(void)
{
	struct sigscan s = { .window = 8 };
	uint8_t *p = malloc(PROBE_BYTES);
	uint32_t *out = malloc(PROBE_BYTES * sizeof(*out));
	uint64_t seed = 0x243f6a8885a308d3ULL;
	double best[2] = { 1e9, 1e9 };

	s.l1 = (struct level1){ .salt = 0x9e3779b9u, .fold_mul = 0x85ebca6bu, .index_mul = 0xc2b2ae35u,
				.bits_mul = 0x27d4eb2fu, .index_bits = PROBE_INDEX_BITS,
				.words = malloc(sizeof(uint32_t) << PROBE_INDEX_BITS) };
	bool measured = p && out && s.l1.words;

	for (size_t i = 0; measured && i < PROBE_BYTES; i += 8) {
		uint64_t r = rng_splitmix64(&seed);
		memcpy(p + i, &r, 8);
	}
	for (size_t i = 0; measured && i < 1u << PROBE_INDEX_BITS; i++)
		s.l1.words[i] = (uint32_t)rng_splitmix64(&seed) & (uint32_t)rng_splitmix64(&seed);
	for (int run = 0; measured && run < 10; run++) {
		double ms = time_scan_ms(&s, p, out, run & 1);
		if (ms < best[run & 1])
			best[run & 1] = ms;
	}
	free(p);
	free(out);
	free(s.l1.words);
	return measured && best[1] < 0.9 * best[0]; /* without memory to time them: the loads */
}

/* ---- AVX-512 (VBMI): sixteen positions a pass ---- */

/* Lane j: the low, and the high, 4 bytes of the window at position j. */
static const uint8_t WINDOW_LO16[64] = {
	0, 1, 2, 3,   1, 2, 3, 4,   2, 3, 4, 5,   3, 4, 5, 6,   4, 5, 6, 7,   5, 6, 7, 8,
	6, 7, 8, 9,   7, 8, 9, 10,  8, 9, 10, 11, 9, 10, 11, 12, 10, 11, 12, 13, 11, 12, 13, 14,
	12, 13, 14, 15, 13, 14, 15, 16, 14, 15, 16, 17, 15, 16, 17, 18,
};
static const uint8_t WINDOW_HI16[64] = {
	4, 5, 6, 7,   5, 6, 7, 8,   6, 7, 8, 9,   7, 8, 9, 10,  8, 9, 10, 11, 9, 10, 11, 12,
	10, 11, 12, 13, 11, 12, 13, 14, 12, 13, 14, 15, 13, 14, 15, 16, 14, 15, 16, 17, 15, 16, 17, 18,
	16, 17, 18, 19, 17, 18, 19, 20, 18, 19, 20, 21, 19, 20, 21, 22,
};

struct avx512_consts {
	__m512i idx_lo, idx_hi, keep_lo, keep_hi, salt, fold_mul, index_mul, bits_mul, one;
	__m128i index_shift; /* 32 - index_bits: with no index bits, every index is 0 */
	unsigned window;
	const uint32_t *words;
};

/*
 * Which of the windows at p .. p + 15 pass level 1, of the lanes live (the
 * first r): only the bytes those read are loaded, only their words gathered.
 * 1 << (n % 32) is 1 rotated by n: a rotate takes its count modulo 32.
 */
AVX512_TARGET __attribute__((always_inline)) static inline __mmask16
pass16(const struct avx512_consts *k, const uint8_t *p, unsigned r)
{
	__mmask16 live = (__mmask16)((1u << r) - 1);
	__m512i bytes = _mm512_zextsi256_si512(_mm256_maskz_loadu_epi8((__mmask32)((1u << (r - 1 + k->window)) - 1), p));
	/* level1_value, with ternary logic for (a & b) ^ c (0x6a): the halves cut to W, the salt, the xor */
	__m512i lo = _mm512_ternarylogic_epi32(_mm512_permutexvar_epi8(k->idx_lo, bytes), k->keep_lo, k->salt, 0x6a);
	__m512i v = _mm512_ternarylogic_epi32(_mm512_permutexvar_epi8(k->idx_hi, bytes), k->keep_hi,
					      _mm512_mullo_epi32(lo, k->fold_mul), 0x6a);
	__m512i index = _mm512_srl_epi32(_mm512_mullo_epi32(v, k->index_mul), k->index_shift);
	__m512i b = _mm512_mullo_epi32(_mm512_xor_si512(v, _mm512_srli_epi32(v, 16)), k->bits_mul);
	/* Here the gather beats sixteen scalar loads (1340 against 1250 MB/s); AVX2's does on some CPUs only. */
	__m512i words = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), live, index, k->words, 4);
	__m512i bit0 = _mm512_rolv_epi32(k->one, _mm512_srli_epi32(b, 27));
	__m512i bit1 = _mm512_rolv_epi32(k->one, _mm512_srli_epi32(b, 22));
	__m512i bit2 = _mm512_rolv_epi32(k->one, _mm512_srli_epi32(b, 17));
	__m512i bit3 = _mm512_rolv_epi32(k->one, _mm512_srli_epi32(b, 12));
	__m512i mask = _mm512_or_si512(_mm512_ternarylogic_epi32(bit0, bit1, bit2, 0xfe), bit3);

	return _mm512_mask_cmpeq_epi32_mask(live, _mm512_and_si512(words, mask), mask);
}

/*
 * Append the passing positions of the 16 from at, without a branch on which
 * passed: with a tenth of a million windows or more, a few percent pass, too
 * many for a predicted loop. All 16 lanes are stored; out has room for them,
 * as n is at most the number of positions scanned before at.
 */
AVX512_TARGET static inline __m512i positions16(size_t at)
{
	const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);

	return _mm512_add_epi32(iota, _mm512_set1_epi32((int)at));
}

AVX512_TARGET static inline size_t emit16(__mmask16 pass, size_t at, uint32_t *out, size_t n)
{
	_mm512_storeu_si512((void *)(out + n), _mm512_maskz_compress_epi32(pass, positions16(at)));
	return n + (size_t)__builtin_popcount(pass);
}

/* The same for a last pass of fewer than 16: only the passing lanes are stored, as out may end before the 16th. */
AVX512_TARGET static inline size_t emit_last(__mmask16 pass, size_t at, uint32_t *out, size_t n)
{
	_mm512_mask_compressstoreu_epi32(out + n, pass, positions16(at));
	return n + (size_t)__builtin_popcount(pass);
}

/* Positions [from, to), sixteen a pass, the last pass as many as are left; windows of W <= 8 bytes. */
AVX512_TARGET static size_t scan_avx512(const struct sigscan *s, const uint8_t *p, size_t from,
					size_t to, uint32_t *out)
{
	uint64_t keep = short_keep(s->window);
	struct avx512_consts k = {
		.idx_lo = _mm512_loadu_si512((const void *)WINDOW_LO16),
		.idx_hi = _mm512_loadu_si512((const void *)WINDOW_HI16),
		.keep_lo = _mm512_set1_epi32((int)(uint32_t)keep),
		.keep_hi = _mm512_set1_epi32((int)(uint32_t)(keep >> 32)),
		.salt = _mm512_set1_epi32((int)s->l1.salt),
		.fold_mul = _mm512_set1_epi32((int)s->l1.fold_mul),
		.index_mul = _mm512_set1_epi32((int)s->l1.index_mul),
		.bits_mul = _mm512_set1_epi32((int)s->l1.bits_mul),
		.one = _mm512_set1_epi32(1),
		.index_shift = _mm_cvtsi32_si128((int)(32 - s->l1.index_bits)),
		.window = s->window,
		.words = s->l1.words,
	};
	size_t n = 0, at = from;

	for (; at + 16 <= to; at += 16)
		n = emit16(pass16(&k, p + at, 16), at, out, n);
	if (at < to)
		n = emit_last(pass16(&k, p + at, (unsigned)(to - at)), at, out, n);
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
		n = scan_avx512(s, p, from, to, out);
		from = to;
	} else if (s->level == SIMD_AVX2) {
		/* A pass at at reads 16 bytes from it: at + 8 <= len - 8. */
		size_t safe = len >= 8 ? len - 8 : 0, end = to < safe ? to : safe;
		if (end > from) {
			size_t whole = from + (end - from) / 8 * 8;
			n = s->gather ? scan_avx2_gather(s, p, from, whole, out) : scan_avx2_loads(s, p, from, whole, out);
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
	return sizeof(*s) + (s->l1.words ? (sizeof(*s->l1.words) << s->l1.index_bits) : 0);
}

enum simd_level sigscan_simd(const struct sigscan *s)
{
	return s->level;
}

void sigscan_set_simd(struct sigscan *s, enum simd_level cap)
{
	s->level = scan_level(s->window, cap);
	s->gather = s->level == SIMD_AVX2 && avx2_gather_fast();
}

bool sigscan_gathers(const struct sigscan *s)
{
	return s->gather;
}

void sigscan_set_gather(struct sigscan *s, bool gather)
{
	s->gather = s->level == SIMD_AVX2 && gather;
}

static bool avx2_gather_fast(void)
{
#ifdef HAVE_X86_SCAN
	static _Atomic int gather_fast = -1; /* measured once (racing callers measure alike) */

	if (gather_fast < 0)
		gather_fast = measure_gather();
	return gather_fast == 1;
#else
	return false;
#endif
}
