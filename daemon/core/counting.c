/* counting.c - the counting backing store: 4-bit sticky counters, greedy choice, rounds. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "counting.h"

#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "block.h"
#include "error.h"
#include "simd.h"

/* The SIMD level from which costs are counted with AVX2 and the POPCNT instruction. */
#if defined(__x86_64__)
#define COUNTING_AVX2_LEVEL SIMD_AVX2 /* every CPU with AVX2 has POPCNT */
#else
#define COUNTING_AVX2_LEVEL SIMD_LEVELS /* none: elsewhere the compiler's popcount is the instruction already */
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
	c->avx2 = (int)simd_best() >= COUNTING_AVX2_LEVEL;
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

/*
 * Counter i up by one unless sticky, and its bit set; 1 if it was 0 (a new
 * one). Without branches: whether a counter is 0 (half of them, in a filter
 * built for its false-positive rate) is anyone's guess, and a mispredicted
 * branch on each of k counters cost more than the arithmetic.
 */
static inline unsigned counter_up(uint8_t *nibbles, uint64_t *words, uint64_t i, unsigned *saturated)
{
	unsigned shift = (unsigned)(i & 1) * 4, v = (nibbles[i >> 1] >> shift) & 0xf;

	words[i >> 6] |= 1ULL << (i & 63); /* set already unless v was 0 */
	*saturated += v + 1 == COUNTING_MAX;
	nibbles[i >> 1] = (uint8_t)(nibbles[i >> 1] + ((unsigned)(v != COUNTING_MAX) << shift));
	return v == 0;
}

/*
 * The counters at pos[0..n) up. c's fields are read into locals first: a
 * byte stored through nibbles may alias any of them, and the compiler would
 * load each again after every store.
 */
static void counters_up(struct counting *c, const uint64_t *pos, unsigned n)
{
	uint8_t *nibbles = c->nibbles;
	uint64_t *words = c->filter->words;
	unsigned ones = 0, saturated = 0;

	for (unsigned i = 0; i < n; i++)
		ones += counter_up(nibbles, words, pos[i], &saturated);
	c->ones += ones;
	c->saturated += saturated;
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
 * What adding a group (its mask) to a block costs in false positives: 16
 * popcounts. The bits of less are taken out of the block first (a key's own
 * bits that its removal would clear, where stay_or_move finds two of its
 * groups in one block; else none).
 */
static inline __attribute__((always_inline)) double mask_cost(const struct counting *c, const uint64_t *block,
							       const uint64_t *mask, const uint64_t *less)
{
	unsigned ones = 0, fresh = 0;

	for (unsigned w = 0; w < FILTER_BLOCK_WORDS; w++) {
		uint64_t word = less ? block[w] & ~less[w] : block[w];
		ones += (unsigned)__builtin_popcountll(word);
		fresh += (unsigned)__builtin_popcountll(mask[w] & ~word);
	}
	return c->hit[ones + fresh] - c->hit[ones];
}

/*
 * Group g of h in a blocked filter: its block, and its k positions in the
 * block (0-511). As filter_group_block and filter_group_positions, inlined:
 * a counting store's filter is never folded.
 */
static inline __attribute__((always_inline)) uint64_t group_at(const struct counting *c, struct hash128 h,
								unsigned g, unsigned *at)
{
	uint64_t x, y;

	block_group_words(h, g, &x, &y);
	for (unsigned i = 0; i < c->params.hashes; i++)
		at[i] = block_position(block_y32(y), i);
	return block_range_reduce(x, c->params.bits / FILTER_BLOCK_BITS);
}

static inline void mask_of(const unsigned *at, unsigned k, uint64_t mask[FILTER_BLOCK_WORDS])
{
	for (unsigned w = 0; w < FILTER_BLOCK_WORDS; w++)
		mask[w] = 0;
	for (unsigned i = 0; i < k; i++)
		mask[at[i] / 64] |= 1ULL << (at[i] % 64);
}

/*
 * A block's ones: with the POPCNT instruction (hw), else the eight words'
 * bits counted a byte at a time and added up once (SWAR), where baseline
 * x86-64 would call a loop in libgcc for each word.
 */
static inline __attribute__((always_inline)) unsigned ones_in(const uint64_t *block, bool hw)
{
	const uint64_t m1 = 0x5555555555555555ULL, m2 = 0x3333333333333333ULL, m4 = 0x0f0f0f0f0f0f0f0fULL;
	uint64_t bytes = 0;
	unsigned ones = 0;

#if defined(__aarch64__)
	hw = true; /* the compiler's count is NEON's cnt, baseline there */
#endif
	if (hw) {
		for (unsigned w = 0; w < FILTER_BLOCK_WORDS; w++)
			ones += (unsigned)__builtin_popcountll(block[w]);
		return ones;
	}
	for (unsigned w = 0; w < FILTER_BLOCK_WORDS; w++) {
		uint64_t x = block[w];
		x -= (x >> 1) & m1;
		x = (x & m2) + ((x >> 2) & m2);
		bytes += (x + (x >> 4)) & m4; /* at most 8 a byte a word: 64 after eight words */
	}
	bytes = (bytes & 0x00ff00ff00ff00ffULL) + ((bytes >> 8) & 0x00ff00ff00ff00ffULL); /* 16-bit lanes */
	return (unsigned)((bytes * 0x0001000100010001ULL) >> 48);
}

/* How many distinct positions of at[] are clear in block: the bits the group would set. */
static inline __attribute__((always_inline)) unsigned fresh_in(const uint64_t *block, const unsigned *at, unsigned k)
{
	uint64_t seen[FILTER_BLOCK_WORDS] = { 0 };
	unsigned fresh = 0;

	for (unsigned i = 0; i < k; i++) {
		unsigned w = at[i] / 64;
		uint64_t bit = 1ULL << (at[i] % 64);
		fresh += ((block[w] | seen[w]) & bit) == 0;
		seen[w] |= bit;
	}
	return fresh;
}

/* What adding group g of h to its block costs in false positives, counted without a mask. */
static inline __attribute__((always_inline)) double block_cost(const struct counting *c, struct hash128 h,
								unsigned g, bool hw)
{
	unsigned at[FILTER_MAX_HASHES];
	const uint64_t *block = c->filter->words + group_at(c, h, g, at) * FILTER_BLOCK_WORDS;
	unsigned ones = ones_in(block, hw);

	return c->hit[ones + fresh_in(block, at, c->params.hashes)] - c->hit[ones];
}

static double cost_blocked(const struct counting *c, struct hash128 h, unsigned g)
{
	return block_cost(c, h, g, false);
}

#if defined(__x86_64__)
/* With the POPCNT instruction, where baseline x86-64 calls a loop in libgcc for each (a third of a round's time). */
#define POPCNT __attribute__((target("popcnt")))
#else
#define POPCNT
#endif

POPCNT static double cost_blocked_popcnt(const struct counting *c, struct hash128 h, unsigned g)
{
	return block_cost(c, h, g, true);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include "block_avx2.h"
#define HAVE_AVX2_COSTS 1
#define AVX2 __attribute__((target("avx2,bmi2,popcnt")))

/*
 * Costs with AVX2, where a group has at most 16 positions: its positions
 * are 16 lanes of 16 bits in one register, in the order
 * _mm256_packus_epi32 leaves two vectors of 8 in (LANE_POSITION: which of
 * the k each lane is); lanes past k hold numbers no position has. Nothing is
 * built bit by bit: a cost needs only how many distinct bits a group would
 * set, or its removal clear. A group probes a bit twice about once in seven
 * at k = 13; which lanes repeat an earlier one, and how often each position
 * occurs, come from comparing the lanes with their fifteen rotations, done
 * only where any two lanes are equal.
 */

/* Loops over words and rotations unrolled, so that each rotation's permute is a constant. */
#define UNROLLED _Pragma("GCC unroll 16")

/* The most positions a group may have for the AVX2 costs: 16 lanes. */
#define AVX2_MAX_HASHES 16

static const int16_t LANE_POSITION[16] = { 0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15 };

struct lanes {
	__m256i pos16;     /* the positions, 16 bits a lane */
	__m256i lo8, hi8;  /* the same, 32 bits a lane: positions 0-7 and 8-15 */
	__m256i live;      /* 0xffff in the k lanes that are positions */
};

AVX2 __attribute__((always_inline)) static inline struct lanes lanes_of(uint32_t y32, unsigned k)
{
	const __m256i yv = _mm256_set1_epi32((int)y32);
	const __m256i order = _mm256_loadu_si256((const __m256i *)LANE_POSITION);
	struct lanes l;

	l.lo8 = _mm256_srli_epi32(_mm256_mullo_epi32(yv, _mm256_loadu_si256((const __m256i *)BLOCK_SALT32)), 23);
	l.hi8 = _mm256_srli_epi32(_mm256_mullo_epi32(yv, _mm256_loadu_si256((const __m256i *)BLOCK_SALT32 + 1)), 23);
	l.live = _mm256_cmpgt_epi16(_mm256_set1_epi16((short)k), order);
	/* past k: 512 + the lane's own number, equal to nothing else */
	l.pos16 = _mm256_blendv_epi8(_mm256_add_epi16(order, _mm256_set1_epi16(512)),
				     _mm256_packus_epi32(l.lo8, l.hi8), l.live);
	return l;
}

/* Lane i of the result holds lane i - r (mod 16) of x16; x16_1 is x16 rotated by one. */
AVX2 __attribute__((always_inline)) static inline __m256i rotated(__m256i x16, __m256i x16_1, unsigned r)
{
	const __m256i by = _mm256_and_si256(_mm256_sub_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
							     _mm256_set1_epi32((int)(r / 2))),
					    _mm256_set1_epi32(7));

	return _mm256_permutevar8x32_epi32(r % 2 ? x16_1 : x16, by);
}

AVX2 __attribute__((always_inline)) static inline __m256i rotated_by_one(__m256i x16)
{
	__m256i words_up = _mm256_permutevar8x32_epi32(x16, _mm256_setr_epi32(7, 0, 1, 2, 3, 4, 5, 6));

	return _mm256_or_si256(_mm256_srli_epi32(words_up, 16), _mm256_slli_epi32(x16, 16));
}

/* Whether two lanes are equal: rotations by 1-8 meet every pair of the 16. */
AVX2 __attribute__((always_inline)) static inline bool any_repeat(__m256i x16)
{
	const __m256i x16_1 = rotated_by_one(x16);
	__m256i equal = _mm256_setzero_si256();

	UNROLLED for (unsigned r = 1; r <= 8; r++)
		equal = _mm256_or_si256(equal, _mm256_cmpeq_epi16(x16, rotated(x16, x16_1, r)));
	return !_mm256_testz_si256(equal, equal);
}

/* Lanes equal to a lane before them (0xffff), and how many lanes equal each. */
AVX2 static __m256i repeats(__m256i x16, __m256i *times)
{
	const __m256i x16_1 = rotated_by_one(x16);
	const __m256i order = _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	__m256i earlier = _mm256_setzero_si256();

	*times = _mm256_set1_epi16(1);
	UNROLLED for (unsigned r = 1; r < 16; r++) {
		__m256i equal = _mm256_cmpeq_epi16(x16, rotated(x16, x16_1, r));
		/* lane i met lane i - r, which comes before it where i >= r */
		__m256i after = _mm256_cmpgt_epi16(order, _mm256_set1_epi16((short)(r - 1)));
		*times = _mm256_sub_epi16(*times, equal);
		earlier = _mm256_or_si256(earlier, _mm256_and_si256(equal, after));
	}
	return earlier;
}

AVX2 __attribute__((always_inline)) static inline unsigned lanes_set(__m256i mask16)
{
	return (unsigned)_mm_popcnt_u32((unsigned)_mm256_movemask_epi8(mask16)) / 2;
}

/* The counters at 8 positions (32-bit lanes) of the block whose counters start at base. */
AVX2 __attribute__((always_inline)) static inline __m256i counters_at(const uint8_t *base, __m256i pos)
{
	/* counter p is nibble p % 8 of 32-bit word p / 8 (two a byte, low nibble first) */
	__m256i word = _mm256_i32gather_epi32((const int *)base, _mm256_srli_epi32(pos, 3), 4);
	__m256i shift = _mm256_slli_epi32(_mm256_and_si256(pos, _mm256_set1_epi32(7)), 2);

	return _mm256_and_si256(_mm256_srlv_epi32(word, shift), _mm256_set1_epi32(COUNTING_MAX));
}

/* 0xffffffff in the lanes whose position's bit is clear in the block (lo, hi: its halves). */
AVX2 __attribute__((always_inline)) static inline __m256i clear_at(__m256i lo, __m256i hi, __m256i pos)
{
	__m256i bit = _mm256_and_si256(block_bits_avx2(lo, hi, pos), _mm256_set1_epi32(1));

	return _mm256_cmpeq_epi32(bit, _mm256_setzero_si256());
}

/* How many distinct bits another group would set in its block. */
AVX2 __attribute__((always_inline)) static inline unsigned new_bits(const uint64_t *block, uint32_t y32, unsigned k)
{
	const struct lanes l = lanes_of(y32, k);
	const __m256i lo = _mm256_load_si256((const __m256i *)block);
	const __m256i hi = _mm256_load_si256((const __m256i *)block + 1);
	__m256i clear = _mm256_and_si256(_mm256_packs_epi32(clear_at(lo, hi, l.lo8), clear_at(lo, hi, l.hi8)), l.live);

	if (any_repeat(l.pos16)) {
		__m256i times;
		clear = _mm256_andnot_si256(repeats(l.pos16, &times), clear);
	}
	return lanes_set(clear);
}

AVX2 __attribute__((always_inline)) static inline unsigned block_ones(const uint64_t *block)
{
	unsigned ones = 0;

	UNROLLED for (unsigned w = 0; w < FILTER_BLOCK_WORDS; w++)
		ones += (unsigned)_mm_popcnt_u64(block[w]);
	return ones;
}

/* As block_cost, where a group has at most 16 positions. */
AVX2 static double cost_blocked_avx2(const struct counting *c, struct hash128 h, unsigned g)
{
	uint32_t y32;
	const uint64_t *block = block_of_group(c->filter, h, g, &y32);
	unsigned ones = block_ones(block);

	return c->hit[ones + new_bits(block, y32, c->params.hashes)] - c->hit[ones];
}
#endif

static double group_cost(const struct counting *c, struct hash128 h, unsigned g)
{
	uint64_t pos[FILTER_MAX_HASHES];

	if (c->params.layout != FILTER_BLOCKED) {
		filter_group_positions(&c->params, h, g, pos);
		return new_ones_classic(c, pos, c->params.hashes);
	}
#ifdef HAVE_AVX2_COSTS
	if (c->avx2 && c->params.hashes <= AVX2_MAX_HASHES)
		return cost_blocked_avx2(c, h, g);
#endif
	return c->avx2 ? cost_blocked_popcnt(c, h, g) : cost_blocked(c, h, g);
}

/*
 * The lines an entry's group touches in a blocked filter, asked for ahead:
 * its block of bits and the counters behind them (4 lines). A round visits
 * the entries in their order, each at a random place: without this, each
 * waits on memory in turn once the counters outgrow the caches.
 */
#define BLOCK_COUNTER_BYTES (FILTER_BLOCK_WORDS * 64 / 2)

/*
 * Always inlined: GCC takes a function whose only effects are prefetches for
 * one without effects, and drops its calls.
 */
static inline __attribute__((always_inline)) void prefetch_block(const struct counting *c, uint64_t b,
									 bool counters)
{
	const uint8_t *counter = c->nibbles + b * BLOCK_COUNTER_BYTES;

	__builtin_prefetch(c->filter->words + b * FILTER_BLOCK_WORDS, 1);
	if (counters)
		for (unsigned at = 0; at < BLOCK_COUNTER_BYTES; at += 64)
			__builtin_prefetch(counter + at, 1);
}

static void prefetch_groups(const struct counting *c, struct hash128 h)
{
	for (unsigned g = 0; g < c->params.choices; g++)
		prefetch_block(c, filter_group_block(&c->params, h, g), true);
}

void counting_prefetch(const struct counting *c, struct hash128 h)
{
	if (c->params.layout == FILTER_BLOCKED)
		prefetch_groups(c, h);
}

/* The cheapest of the groups' costs, ties broken at random (reservoir sampling: each tied group equally likely). */
static unsigned cheapest(struct counting *c, const double *cost)
{
	unsigned best = 0, ties = 1;

	for (unsigned g = 1; g < c->params.choices; g++) {
		if (cost[g] < cost[best]) {
			best = g;
			ties = 1;
		} else if (cost[g] == cost[best] && rng_below(&c->rng, ++ties) == 0) {
			best = g;
		}
	}
	return best;
}

unsigned counting_choose(struct counting *c, struct hash128 h)
{
	double cost[FILTER_MAX_CHOICES];

	for (unsigned g = 0; g < c->params.choices; g++)
		cost[g] = group_cost(c, h, g);
	return cheapest(c, cost);
}

void counting_add(struct counting *c, struct hash128 h, unsigned g)
{
	uint64_t pos[FILTER_MAX_HASHES];

	filter_group_positions(&c->params, h, g, pos);
	counters_up(c, pos, c->params.hashes);
}

void counting_add_all(struct counting *c, const struct hash128 *hashes, const uint8_t *groups, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t next = i + COUNTING_AHEAD;
		if (next < n && c->params.layout == FILTER_BLOCKED)
			prefetch_block(c, filter_group_block(&c->params, hashes[next], groups[next]), true);
		counting_add(c, hashes[i], groups[i]);
	}
}

int counting_remove(struct counting *c, struct hash128 h, unsigned g)
{
	uint64_t pos[FILTER_MAX_HASHES];

	filter_group_positions(&c->params, h, g, pos);
	for (unsigned i = 0; i < c->params.hashes; i++) {
		if (counter_decrement(c, pos[i]) == 0)
			continue;
		counters_up(c, pos, i); /* undo, so a failed remove changes nothing (sticky ones were not lowered) */
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

/*
 * A round's step for one key of a blocked filter, without touching the
 * counters unless it moves: the bits of its group that its removal would
 * clear (a counter equal to the times the group probes it) are taken out of
 * the block as the costs are measured, so the choice (and the random draws
 * of its ties) is the one a remove, choose and add would make, and a key
 * that stays, most of them after the first rounds, costs reads alone.
 * STAY_ABSENT: a counter is below that, h is not counted in old
 * (counting_remove would refuse).
 */
#define STAY_ABSENT (-1)

/* How many of the k positions at[] are p. */
static inline unsigned times_at(const unsigned *at, unsigned k, unsigned p)
{
	unsigned times = 0;

	for (unsigned i = 0; i < k; i++)
		times += at[i] == p;
	return times;
}

static inline __attribute__((always_inline)) int stay_or_move(struct counting *c, struct hash128 h, unsigned old)
{
	unsigned at[FILTER_MAX_CHOICES][FILTER_MAX_HASHES], k = c->params.hashes, distinct = 0, absent = 0;
	uint64_t mask[FILTER_MAX_CHOICES][FILTER_BLOCK_WORDS], alone[FILTER_BLOCK_WORDS] = { 0 };
	uint64_t b[FILTER_MAX_CHOICES];
	double cost[FILTER_MAX_CHOICES];

	for (unsigned g = 0; g < c->params.choices; g++) {
		b[g] = group_at(c, h, g, at[g]);
		mask_of(at[g], k, mask[g]);
	}
	for (unsigned w = 0; w < FILTER_BLOCK_WORDS; w++)
		distinct += (unsigned)__builtin_popcountll(mask[old][w]);
	const uint8_t *counters = c->nibbles + b[old] * BLOCK_COUNTER_BYTES;
	for (unsigned i = 0; i < k; i++) { /* without branches: which counters are 1 is anyone's guess */
		unsigned p = at[old][i], v = (counters[p / 2] >> (p % 2 * 4)) & 0xf;
		/* k^2 compares, for a group that probes a bit twice: 1 in 7 at k = 13 */
		unsigned times = distinct == k ? 1 : times_at(at[old], k, p);
		absent |= v < times && v != COUNTING_MAX;
		alone[p / 64] |= (uint64_t)(v == times && v != COUNTING_MAX) << (p % 64);
	}
	if (absent)
		return STAY_ABSENT;
	for (unsigned g = 0; g < c->params.choices; g++)
		cost[g] = mask_cost(c, c->filter->words + b[g] * FILTER_BLOCK_WORDS, mask[g],
				    b[g] == b[old] ? alone : NULL);
	return (int)cheapest(c, cost);
}

/*
 * How many distinct bits of the old group at[] its removal would clear (each
 * counter equal to the times the group probes it, sticky ones excepted), or
 * STAY_ABSENT.
 */
static inline __attribute__((always_inline)) int alone_in(const uint8_t *counters, const unsigned *at, unsigned k)
{
	uint64_t seen[FILTER_BLOCK_WORDS] = { 0 }, repeated[FILTER_BLOCK_WORDS] = { 0 };
	unsigned alone = 0, absent = 0;

	for (unsigned i = 0; i < k; i++) {
		uint64_t bit = 1ULL << (at[i] % 64);
		repeated[at[i] / 64] |= seen[at[i] / 64] & bit;
		seen[at[i] / 64] |= bit;
	}
	for (unsigned i = 0; i < k; i++) { /* without branches: which counters are 1 is anyone's guess */
		unsigned p = at[i], v = (counters[p / 2] >> (p % 2 * 4)) & 0xf;
		/* a bit probed twice (a group in 7 at k = 13 has one): how often, and is this the first */
		bool twice = (repeated[p / 64] >> (p % 64)) & 1;
		unsigned times = twice ? times_at(at, k, p) : 1;
		bool first = !twice || times_at(at, i, p) == 0;
		absent |= v < times && v != COUNTING_MAX;
		alone += first && v == times && v != COUNTING_MAX;
	}
	return absent ? STAY_ABSENT : (int)alone;
}

/*
 * stay_or_move's answer, draw for draw, counted without masks where no other
 * group shares the old one's block (else it asks stay_or_move): the old
 * group's cost needs only how many of its bits its removal would clear, each
 * of them set (or it is not counted there); another's, how many it would set.
 */
static inline __attribute__((always_inline)) int stay_or_move_counted(struct counting *c, struct hash128 h,
								       unsigned old, bool hw)
{
	unsigned at[FILTER_MAX_CHOICES][FILTER_MAX_HASHES], k = c->params.hashes;
	uint64_t b[FILTER_MAX_CHOICES] = { 0 }; /* c of them are: the compiler cannot tell */
	double cost[FILTER_MAX_CHOICES];

	for (unsigned g = 0; g < c->params.choices; g++)
		b[g] = group_at(c, h, g, at[g]);
	for (unsigned g = 0; g < c->params.choices; g++)
		if (g != old && b[g] == b[old])
			return stay_or_move(c, h, old);
	int alone = alone_in(c->nibbles + b[old] * BLOCK_COUNTER_BYTES, at[old], k);
	if (alone == STAY_ABSENT)
		return STAY_ABSENT;
	for (unsigned g = 0; g < c->params.choices; g++) {
		const uint64_t *block = c->filter->words + b[g] * FILTER_BLOCK_WORDS;
		unsigned ones = ones_in(block, hw);
		if (g == old)
			cost[g] = c->hit[ones] - c->hit[ones - (unsigned)alone];
		else
			cost[g] = c->hit[ones + fresh_in(block, at[g], k)] - c->hit[ones];
	}
	return (int)cheapest(c, cost);
}

/* A round's step: stay_or_move's answer for key h counted in group old. */
typedef int round_step(struct counting *c, struct hash128 h, unsigned old);

/* A blocked round, its step a constant where this is inlined (so it is inlined in turn). */
static inline __attribute__((always_inline)) void round_blocked(struct counting *c, const struct hash128 *hashes,
								 uint8_t *groups, size_t n, round_step *step)
{
	for (size_t i = 0; i < n; i++) {
		size_t next = i + COUNTING_AHEAD;
		if (next < n) /* the blocks it chooses from, and the counters it is counted in */
			for (unsigned g = 0; g < c->params.choices; g++)
				prefetch_block(c, filter_group_block(&c->params, hashes[next], g), g == groups[next]);
		int g = step(c, hashes[i], groups[i]);
		if (g == STAY_ABSENT || g == groups[i])
			continue;
		(void)counting_remove(c, hashes[i], groups[i]); /* cannot refuse: the step read every counter */
		counting_add(c, hashes[i], (unsigned)g);
		groups[i] = (uint8_t)g;
	}
}

static int stay_or_move_portable(struct counting *c, struct hash128 h, unsigned old)
{
	return stay_or_move_counted(c, h, old, false);
}

static void round_blocked_portable(struct counting *c, const struct hash128 *hashes, uint8_t *groups, size_t n)
{
	round_blocked(c, hashes, groups, n, stay_or_move_portable);
}

POPCNT static int stay_or_move_popcnt(struct counting *c, struct hash128 h, unsigned old)
{
	return stay_or_move_counted(c, h, old, true);
}

/* Where the AVX2 step does not apply (more than 16 positions a group). */
POPCNT static void round_blocked_popcnt(struct counting *c, const struct hash128 *hashes, uint8_t *groups, size_t n)
{
	round_blocked(c, hashes, groups, n, stay_or_move_popcnt);
}

#ifdef HAVE_AVX2_COSTS
/*
 * How many distinct bits of the old group its removal would clear (each
 * counter equal to the times the group probes it; past k, counters that look
 * sticky), or STAY_ABSENT.
 */
AVX2 __attribute__((always_inline)) static inline int old_alone(const uint8_t *counters, const struct lanes *l)
{
	const __m256i sticky = _mm256_set1_epi16(COUNTING_MAX);
	__m256i v = _mm256_packus_epi32(counters_at(counters, l->lo8), counters_at(counters, l->hi8));
	__m256i times, earlier;

	v = _mm256_blendv_epi8(sticky, v, l->live);
	if (!any_repeat(l->pos16)) {
		if (!_mm256_testz_si256(_mm256_cmpeq_epi16(v, _mm256_setzero_si256()), l->live))
			return STAY_ABSENT;
		return (int)lanes_set(_mm256_cmpeq_epi16(v, _mm256_set1_epi16(1)));
	}
	earlier = repeats(l->pos16, &times);
	__m256i counted = _mm256_andnot_si256(_mm256_cmpeq_epi16(v, sticky), l->live);
	if (!_mm256_testz_si256(_mm256_cmpgt_epi16(times, v), counted))
		return STAY_ABSENT;
	return (int)lanes_set(_mm256_andnot_si256(earlier, _mm256_and_si256(_mm256_cmpeq_epi16(v, times), counted)));
}

/*
 * stay_or_move's answer, draw for draw, where a group has at most 16
 * positions and no other group shares the old one's block (else it asks
 * stay_or_move). The old group's cost needs only how many of its bits its
 * removal would clear: each of them is set, or it is not counted there.
 */
AVX2 static int stay_or_move_avx2(struct counting *c, struct hash128 h, unsigned old)
{
	unsigned choices = c->params.choices, k = c->params.hashes;
	uint64_t b[FILTER_MAX_CHOICES] = { 0 }, x, y; /* c of them are: the compiler cannot tell */
	uint32_t y32[FILTER_MAX_CHOICES] = { 0 };
	double cost[FILTER_MAX_CHOICES];

	for (unsigned g = 0; g < choices; g++) {
		block_group_words(h, g, &x, &y);
		b[g] = block_range_reduce(x, c->params.bits / FILTER_BLOCK_BITS);
		y32[g] = block_y32(y);
	}
	for (unsigned g = 0; g < choices; g++)
		if (g != old && b[g] == b[old])
			return stay_or_move(c, h, old);
	const struct lanes own = lanes_of(y32[old], k);
	int alone = old_alone(c->nibbles + b[old] * BLOCK_COUNTER_BYTES, &own);
	if (alone == STAY_ABSENT)
		return STAY_ABSENT;
	for (unsigned g = 0; g < choices; g++) {
		const uint64_t *block = c->filter->words + b[g] * FILTER_BLOCK_WORDS;
		unsigned ones = block_ones(block);
		if (g == old)
			cost[g] = c->hit[ones] - c->hit[ones - (unsigned)alone];
		else
			cost[g] = c->hit[ones + new_bits(block, y32[g], k)] - c->hit[ones];
	}
	return (int)cheapest(c, cost);
}

AVX2 static void round_blocked_avx2(struct counting *c, const struct hash128 *hashes, uint8_t *groups, size_t n)
{
	round_blocked(c, hashes, groups, n, stay_or_move_avx2);
}
#endif

/* A classic filter's round: remove, choose and add each key. */
static void round_classic(struct counting *c, const struct hash128 *hashes, uint8_t *groups, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (counting_remove(c, hashes[i], groups[i]) < 0)
			continue; /* not counted as claimed: leave it alone */
		groups[i] = (uint8_t)choose_and_add(c, hashes[i]);
	}
}

void counting_rebuild(struct counting *c, const struct hash128 *hashes, uint8_t *groups,
		      size_t n, unsigned rounds)
{
	for (unsigned r = 0; r < rounds; r++) {
		if (c->params.layout != FILTER_BLOCKED)
			round_classic(c, hashes, groups, n);
#ifdef HAVE_AVX2_COSTS
		else if (c->avx2 && c->params.hashes <= AVX2_MAX_HASHES)
			round_blocked_avx2(c, hashes, groups, n);
#endif
		else if (c->avx2)
			round_blocked_popcnt(c, hashes, groups, n);
		else
			round_blocked_portable(c, hashes, groups, n);
	}
}

/*
 * Rounds in block order. A round visits each key's two blocks and the
 * counters of its own group; in the keys' own order every one is a random
 * access, and past the last-level cache a wait on memory. Visited in the
 * order of their first group's block, those accesses walk the store, and
 * only the other group's stay random. The order is a stable counting sort by
 * that block; the keys are gathered into it and scattered back, through a
 * copy of one array at a time (without memory for it, back in place).
 */

/* The scatter in place: each cycle of the permutation followed to its end, a placed key marked in order's top bit. */
#define PLACED 0x80000000u

static void scatter_in_place(void *a, size_t size, uint32_t *order, size_t n)
{
	uint8_t *p = a, held[sizeof(struct hash128)], next[sizeof(struct hash128)];

	for (size_t j = 0; j < n; j++) {
		if (order[j] & PLACED)
			continue;
		memcpy(held, p + j * size, size);
		for (size_t k = j; !(order[k] & PLACED);) { /* held: the element at k, which belongs at order[k] */
			size_t to = order[k];
			order[k] |= PLACED;
			memcpy(next, p + to * size, size);
			memcpy(p + to * size, held, size);
			memcpy(held, next, size);
			k = to;
		}
	}
	for (size_t j = 0; j < n; j++)
		order[j] &= ~PLACED;
}

bool counting_order_pays(const struct counting *c, size_t n)
{
	return c->params.layout == FILTER_BLOCKED && n > 1 && n < PLACED &&
	       counting_bytes(c) >= COUNTING_ORDER_FROM_BYTES;
}

/* How many keys ahead of the one moved its place is asked for: the order's permutations go to memory. */
#define ORDER_AHEAD 32

/*
 * order[j]: the key visited j-th, by first block and then by index; NULL
 * without memory. The order is written at random: its pages are touched in
 * order first, and the place of key i + ORDER_AHEAD asked for while key i
 * is put in its own.
 */
static uint32_t *block_order(const struct counting *c, const struct hash128 *hashes, size_t n)
{
	uint64_t nblocks = c->params.bits / FILTER_BLOCK_BITS;
	uint32_t *order = malloc(n * sizeof(*order)), *start = calloc(nblocks + 1, sizeof(*start));

	if (order == NULL || start == NULL) {
		free(order);
		free(start);
		return NULL;
	}
	memset(order, 0, n * sizeof(*order));
	for (size_t i = 0; i < n; i++)
		start[filter_group_block(&c->params, hashes[i], 0) + 1]++;
	for (uint64_t b = 0; b < nblocks; b++)
		start[b + 1] += start[b];
	for (size_t i = 0; i < n; i++) {
		if (i + ORDER_AHEAD < n)
			__builtin_prefetch(&order[start[filter_group_block(&c->params, hashes[i + ORDER_AHEAD], 0)]], 1);
		order[start[filter_group_block(&c->params, hashes[i], 0)]++] = (uint32_t)i;
	}
	free(start);
	return order;
}

/*
 * a[j] = a[order[j]] (gather), or a[order[j]] = a[j] (scatter), elements of
 * size bytes, through a copy of a; -1 without memory. The copy's fresh pages
 * are first touched in order, and the random side is the one resident:
 * page faults at random places cost more than the permutation.
 */
static int permute(void *a, size_t size, const uint32_t *order, size_t n, bool gather)
{
	uint8_t *at = a, *copy = malloc(n * size);

	if (copy == NULL)
		return -1;
	memcpy(copy, a, n * size);
	for (size_t j = 0; j < n; j++) {
		size_t ahead = j + ORDER_AHEAD < n ? order[j + ORDER_AHEAD] : 0;
		if (gather) {
			__builtin_prefetch(copy + ahead * size);
			memcpy(at + j * size, copy + (size_t)order[j] * size, size);
		} else {
			__builtin_prefetch(at + ahead * size, 1);
			memcpy(at + (size_t)order[j] * size, copy + j * size, size);
		}
	}
	free(copy);
	return 0;
}

uint32_t *counting_order(const struct counting *c, struct hash128 *hashes, uint8_t *groups, size_t n)
{
	uint32_t *order = block_order(c, hashes, n);

	if (order == NULL)
		return NULL;
	if (permute(hashes, sizeof(*hashes), order, n, true) < 0) {
		free(order);
		return NULL;
	}
	if (permute(groups, sizeof(*groups), order, n, true) < 0) {
		counting_unorder(hashes, NULL, n, order);
		return NULL;
	}
	return order;
}

void counting_unorder(struct hash128 *hashes, uint8_t *groups, size_t n, uint32_t *order)
{
	/* Without memory for the scratch, in place: slower, and never wrong. */
	if (permute(hashes, sizeof(*hashes), order, n, false) < 0)
		scatter_in_place(hashes, sizeof(*hashes), order, n);
	if (groups && permute(groups, sizeof(*groups), order, n, false) < 0)
		scatter_in_place(groups, sizeof(*groups), order, n);
	free(order);
}

const struct filter *counting_filter(const struct counting *c)
{
	return c->filter;
}

int counting_set_simd(struct counting *c, enum simd_level level)
{
	if (filter_set_simd(c->filter, level) < 0)
		return -1;
	c->avx2 = (int)level >= COUNTING_AVX2_LEVEL;
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
