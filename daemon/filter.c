/* filter.c - the query-side bit filter: two layouts, c choices, union and fold. */
#include "filter.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "error.h"
#include "rng.h"

/*
 * Odd multipliers. Position i of a blocked group is the top 9 bits of the
 * 32-bit product y32 * SALT32[i], y32 being the group word's top half: 32-bit
 * lanes let one AVX-512 pass test 16 positions.
 */
static const uint32_t SALT32[FILTER_MAX_HASHES] = {
	0x414d6a49, 0x5fc9923b, 0x859b22fd, 0xa48ceab3, 0xdb65f5ef, 0xa686a3c1, 0x89be0a7f, 0xf2c206f3,
	0xdd1d7a35, 0x04ddc849, 0x65805f0f, 0xc8dde41d, 0x53908967, 0x90059497, 0xfd17db15, 0x4de94df9,
	0x6e490343, 0xc3affa83, 0xc92161d3, 0x3777d785, 0x8306ab2b, 0x0263c627, 0x0b050655, 0xecd7d213,
	0x6263c177, 0xdb429539, 0xeec3dd35, 0xbd992ab9, 0xab8ce3d5, 0xc421c51f, 0xe9e7a2cb, 0x0e2b967b,
};

static inline unsigned block_position(uint64_t y, unsigned i)
{
	return (uint32_t)((uint32_t)(y >> 32) * SALT32[i]) >> 23;
}


static bool cpu_has_avx512(void);

/* Huge pages pay off only for filters much larger than a page table's reach. */
#define HUGE_THRESHOLD (4u << 20)
#define HUGE_ALIGN (2u << 20)

int filter_params_check(const struct filter_params *p, char *err, size_t errlen)
{
	if (p->layout != FILTER_CLASSIC && p->layout != FILTER_BLOCKED) {
		error_set(err, errlen, "unknown layout %d", (int)p->layout);
		return -1;
	}
	if (p->choices < 1 || p->choices > FILTER_MAX_CHOICES) {
		error_set(err, errlen, "choices must be 1, 2 or 3 (got %u)", p->choices);
		return -1;
	}
	if (p->hashes < 1 || p->hashes > FILTER_MAX_HASHES) {
		error_set(err, errlen, "hashes must be between 1 and %d (got %u)",
			FILTER_MAX_HASHES, p->hashes);
		return -1;
	}
	if (p->bits < FILTER_MIN_BITS || p->bits > FILTER_MAX_BITS) {
		error_set(err, errlen, "bits must be between %d and %llu (got %llu)", FILTER_MIN_BITS,
			(unsigned long long)FILTER_MAX_BITS, (unsigned long long)p->bits);
		return -1;
	}
	if (p->layout == FILTER_BLOCKED && p->bits % FILTER_BLOCK_BITS != 0) {
		error_set(err, errlen, "bits must be a multiple of %d for the blocked layout (got %llu)",
			FILTER_BLOCK_BITS, (unsigned long long)p->bits);
		return -1;
	}
	if (p->folds > 32 || (p->bits << p->folds) > FILTER_MAX_BITS) {
		error_set(err, errlen, "folded too often (%u folds of %llu bits)", p->folds,
			(unsigned long long)p->bits);
		return -1;
	}
	return 0;
}

bool filter_params_equal(const struct filter_params *a, const struct filter_params *b)
{
	return a->layout == b->layout && a->bits == b->bits && a->choices == b->choices &&
	       a->hashes == b->hashes && a->folds == b->folds;
}

const char *filter_layout_name(enum filter_layout layout)
{
	return layout == FILTER_BLOCKED ? "blocked" : "classic";
}

int filter_layout_parse(const char *name, enum filter_layout *layout)
{
	if (strcmp(name, "classic") == 0)
		*layout = FILTER_CLASSIC;
	else if (strcmp(name, "blocked") == 0)
		*layout = FILTER_BLOCKED;
	else
		return -1;
	return 0;
}

static uint64_t *words_alloc(uint64_t nwords)
{
	size_t bytes = (size_t)nwords * 8;
	size_t align = bytes >= HUGE_THRESHOLD ? HUGE_ALIGN : 64;
	void *mem;

	bytes = (bytes + align - 1) & ~(align - 1);
	if (posix_memalign(&mem, align, bytes) != 0)
		return NULL;
	if (align == HUGE_ALIGN)
		(void)madvise(mem, bytes, MADV_HUGEPAGE); /* a hint; failure is harmless */
	memset(mem, 0, bytes);
	return mem;
}

struct filter *filter_new(const struct filter_params *p, const struct hash_key *key,
			  char *err, size_t errlen)
{
	struct filter *f;

	if (filter_params_check(p, err, errlen) < 0)
		return NULL;
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		goto fail;
	f->params = *p;
	f->key = *key;
	f->simd = cpu_has_avx512();
	f->nwords = (p->bits + 63) / 64;
	f->words = words_alloc(f->nwords);
	if (f->words == NULL)
		goto fail;
	return f;
fail:
	error_set(err, errlen, "out of memory for a filter of %llu bits", (unsigned long long)p->bits);
	filter_free(f);
	return NULL;
}

struct filter *filter_clone(const struct filter *f)
{
	struct filter *copy = filter_new(&f->params, &f->key, NULL, 0);

	if (copy != NULL)
		memcpy(copy->words, f->words, f->nwords * 8);
	return copy;
}

void filter_free(struct filter *f)
{
	if (f == NULL)
		return;
	free(f->words);
	free(f);
}

static inline uint64_t range_reduce(uint64_t x, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)x * n) >> 64);
}

/*
 * The two words group g is derived from. h.lo and h.hi are uniform, so a
 * multiply by a per-group odd constant gives each group its own uniform high
 * bits (multiply-shift hashing) at the cost of one multiply, where a full
 * mixer would cost four.
 */
static const uint64_t GROUP_MUL[FILTER_MAX_CHOICES][2] = {
	{ 1, 1 },
	{ 0x9e3779b97f4a7c15ULL, 0xd6e8feb86659fd93ULL },
	{ 0xc2b2ae3d27d4eb4fULL, 0x165667b19e3779f9ULL },
};

static inline void group_words(struct hash128 h, unsigned g, uint64_t *x, uint64_t *y)
{
	*x = h.lo * GROUP_MUL[g][0];
	*y = h.hi * GROUP_MUL[g][1];
}

static inline uint64_t probe_bits(const struct filter_params *p)
{
	return p->bits << p->folds;
}

/* Where group g of h lies: its block (folded as the filter is) and in-block word. */
static inline const uint64_t *group_block(const struct filter *f, struct hash128 h, unsigned g,
					  uint64_t *y)
{
	const struct filter_params *p = &f->params;
	uint64_t x, nblocks = p->bits / FILTER_BLOCK_BITS;

	group_words(h, g, &x, y);
	uint64_t b = range_reduce(x, nblocks << p->folds);
	if (p->folds)
		b %= nblocks;
	return f->words + b * FILTER_BLOCK_WORDS;
}

uint64_t filter_group_block(const struct filter_params *p, struct hash128 h, unsigned g)
{
	uint64_t x, y;

	group_words(h, g, &x, &y);
	return range_reduce(x, probe_bits(p) / FILTER_BLOCK_BITS);
}

static inline void block_mask(uint64_t y, unsigned k, uint64_t mask[FILTER_BLOCK_WORDS])
{
	for (unsigned w = 0; w < FILTER_BLOCK_WORDS; w++)
		mask[w] = 0;
	for (unsigned i = 0; i < k; i++) {
		unsigned pos = block_position(y, i);
		mask[pos >> 6] |= 1ULL << (pos & 63);
	}
}

void filter_group_mask(const struct filter_params *p, struct hash128 h, unsigned g,
		       uint64_t mask[FILTER_BLOCK_WORDS])
{
	uint64_t x, y;

	group_words(h, g, &x, &y);
	block_mask(y, p->hashes, mask);
}

void filter_group_positions(const struct filter_params *p, struct hash128 h, unsigned g,
			    uint64_t pos[FILTER_MAX_HASHES])
{
	uint64_t x, y, m = probe_bits(p);
	unsigned k = p->hashes;

	group_words(h, g, &x, &y);
	if (p->layout == FILTER_BLOCKED) {
		uint64_t base = range_reduce(x, m / FILTER_BLOCK_BITS) * FILTER_BLOCK_BITS;
		for (unsigned i = 0; i < k; i++)
			pos[i] = base + block_position(y, i);
		return;
	}
	/* Enhanced double hashing: g_i = x + i*y + (i^3 - i)/6 (mod m), incrementally. */
	x = range_reduce(x, m);
	y = range_reduce(y, m);
	if (m % 2 == 0)
		y |= 1; /* an odd stride visits more of an even-sized array */
	for (unsigned i = 0; i < k; i++) {
		pos[i] = x;
		x += y;
		if (x >= m)
			x -= m;
		y += i + 1;
		if (y >= m)
			y -= m;
	}
}

static inline bool bit_is_set(const uint64_t *words, uint64_t pos)
{
	return (words[pos >> 6] >> (pos & 63)) & 1;
}

/* Portable block test: bit by bit, stopping at the first zero (a stranger's second, on average). */
static inline bool block_covers(const uint64_t *block, uint64_t y, unsigned k)
{
	for (unsigned i = 0; i < k; i++) {
		unsigned pos = block_position(y, i);
		if (!((block[pos >> 6] >> (pos & 63)) & 1))
			return false;
	}
	return true;
}

bool filter_group_covers(const struct filter *f, struct hash128 h, unsigned g)
{
	const struct filter_params *p = &f->params;
	uint64_t pos[FILTER_MAX_HASHES];

	if (p->layout == FILTER_BLOCKED) {
		uint64_t y;
		const uint64_t *block = group_block(f, h, g, &y);
		return block_covers(block, y, p->hashes);
	}
	filter_group_positions(p, h, g, pos);
	for (unsigned i = 0; i < p->hashes; i++)
		if (!bit_is_set(f->words, pos[i] % p->bits))
			return false;
	return true;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX512_PATH 1

/* The salts and lanes of a filter's k positions, set up once a query or batch. */
struct block_test {
	__m512i salt[2];
	__mmask16 lanes[2]; /* lanes[1] is 0 for k <= 16: one pass */
};

__attribute__((target("avx512f"), always_inline)) static inline struct block_test
block_test_for(unsigned k)
{
	struct block_test t = {
		.salt = { _mm512_loadu_si512((const void *)SALT32), _mm512_loadu_si512((const void *)(SALT32 + 16)) },
		.lanes = { (__mmask16)(k >= 16 ? 0xffff : (1u << k) - 1),
			   (__mmask16)(k <= 16 ? 0 : (1u << (k - 16)) - 1) },
	};
	return t;
}

/*
 * The block test with 16 lanes a pass: positions from y32 * SALT32[i] >> 23,
 * each lane fetches its 32-bit word of the block (permute by pos / 32),
 * shifts its bit down and tests it. No branches on the bits, so the loads of
 * successive queries overlap. (On little-endian, bit p of the block is bit
 * p % 32 of 32-bit word p / 32, as it is bit p % 64 of 64-bit word p / 64.)
 * One pass: the lanes whose bit is missing from the block.
 */
__attribute__((target("avx512f"), always_inline)) static inline __mmask16
missing_bits(__m512i blk, __m512i yv, __m512i salt, __mmask16 lanes)
{
	const __m512i low5 = _mm512_set1_epi32(31), one = _mm512_set1_epi32(1);
	__m512i pos = _mm512_srli_epi32(_mm512_mullo_epi32(yv, salt), 23);
	__m512i word = _mm512_permutexvar_epi32(_mm512_srli_epi32(pos, 5), blk);
	__m512i bit = _mm512_srlv_epi32(word, _mm512_and_si512(pos, low5));

	return _mm512_mask_testn_epi32_mask(lanes, bit, one);
}

__attribute__((target("avx512f"), always_inline)) static inline bool
block_covers_avx512(const uint64_t *block, uint64_t y, const struct block_test *t)
{
	const __m512i blk = _mm512_load_si512((const void *)block);
	const __m512i yv = _mm512_set1_epi32((int)(uint32_t)(y >> 32));
	__mmask16 missing = missing_bits(blk, yv, t->salt[0], t->lanes[0]);

	if (t->lanes[1])
		missing |= missing_bits(blk, yv, t->salt[1], t->lanes[1]);
	return missing == 0;
}

static bool cpu_has_avx512(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f");
}
#else
#define HAVE_AVX512_PATH 0
static bool cpu_has_avx512(void)
{
	return false;
}
#endif

#define BATCH 16

#if HAVE_AVX512_PATH
__attribute__((target("avx512f"))) static void
query_batch_avx512(const struct filter *f, const struct hash128 *h, size_t n, bool *out)
{
	const uint64_t *block[BATCH][FILTER_MAX_CHOICES];
	uint64_t y[BATCH][FILTER_MAX_CHOICES];
	unsigned c = f->params.choices;
	const struct block_test t = block_test_for(f->params.hashes);

	for (size_t i = 0; i < n; i++)
		for (unsigned g = 0; g < c; g++) {
			block[i][g] = group_block(f, h[i], g, &y[i][g]);
			__builtin_prefetch(block[i][g]);
		}
	for (size_t i = 0; i < n; i++) {
		bool covered = false;
		for (unsigned g = 0; g < c; g++)
			covered |= block_covers_avx512(block[i][g], y[i][g], &t);
		out[i] = covered;
	}
}
#endif

#if HAVE_AVX512_PATH
/* One key: fetch its c blocks, then test them all (no early exit, no batch bookkeeping). */
__attribute__((target("avx512f"))) static bool query_one_avx512(const struct filter *f,
								 struct hash128 h)
{
	const uint64_t *block[FILTER_MAX_CHOICES];
	uint64_t y[FILTER_MAX_CHOICES];
	unsigned c = f->params.choices;
	const struct block_test t = block_test_for(f->params.hashes);
	bool covered = false;

	for (unsigned g = 0; g < c; g++) {
		block[g] = group_block(f, h, g, &y[g]);
		__builtin_prefetch(block[g]);
	}
	for (unsigned g = 0; g < c; g++)
		covered |= block_covers_avx512(block[g], y[g], &t);
	return covered;
}
#endif

static bool query_blocked(const struct filter *f, struct hash128 h)
{
	const uint64_t *block[FILTER_MAX_CHOICES];
	uint64_t y[FILTER_MAX_CHOICES];
	unsigned c = f->params.choices, k = f->params.hashes;
	bool covered = false;

#if HAVE_AVX512_PATH
	if (f->simd)
		return query_one_avx512(f, h);
#endif
	/* Start every cache line's load before testing any of them. */
	for (unsigned g = 0; g < c; g++) {
		block[g] = group_block(f, h, g, &y[g]);
		__builtin_prefetch(block[g]);
	}
	/* Test every group, branch-free, rather than stop at the first hit. */
	for (unsigned g = 0; g < c; g++)
		covered |= block_covers(block[g], y[g], k);
	return covered;
}

bool filter_query(const struct filter *f, struct hash128 h)
{
	if (f->params.layout == FILTER_BLOCKED)
		return query_blocked(f, h);
	for (unsigned g = 0; g < f->params.choices; g++)
		if (filter_group_covers(f, h, g))
			return true;
	return false;
}

bool filter_query_bytes(const struct filter *f, const void *data, size_t len)
{
	return filter_query(f, hash_bytes(&f->key, data, len));
}

void filter_query_batch(const struct filter *f, const struct hash128 *h, size_t n, bool *out)
{
	for (size_t done = 0; done < n; done += BATCH) {
		size_t len = n - done < BATCH ? n - done : BATCH;
#if HAVE_AVX512_PATH
		if (f->simd && f->params.layout == FILTER_BLOCKED) {
			query_batch_avx512(f, h + done, len, out + done);
			continue;
		}
#endif
		if (f->params.layout == FILTER_BLOCKED) {
			uint64_t y;
			for (size_t i = 0; i < len; i++)
				for (unsigned g = 0; g < f->params.choices; g++)
					__builtin_prefetch(group_block(f, h[done + i], g, &y));
		}
		for (size_t i = 0; i < len; i++)
			out[done + i] = filter_query(f, h[done + i]);
	}
}

bool filter_add_group(struct filter *f, struct hash128 h, unsigned g)
{
	const struct filter_params *p = &f->params;
	uint64_t pos[FILTER_MAX_HASHES], was_set = 1;

	filter_group_positions(p, h, g, pos);
	for (unsigned i = 0; i < p->hashes; i++) {
		uint64_t bit = pos[i] % p->bits;
		was_set &= (f->words[bit >> 6] >> (bit & 63)) & 1;
		f->words[bit >> 6] |= 1ULL << (bit & 63);
	}
	return was_set;
}

int filter_union(struct filter *dst, const struct filter *src, char *err, size_t errlen)
{
	if (!filter_params_equal(&dst->params, &src->params)) {
		error_set(err, errlen, "cannot merge filters with different parameters");
		return -1;
	}
	if (!hash_key_equal(&dst->key, &src->key)) {
		error_set(err, errlen, "cannot merge filters with different hash secrets");
		return -1;
	}
	for (uint64_t w = 0; w < dst->nwords; w++)
		dst->words[w] |= src->words[w];
	return 0;
}

int filter_fold(struct filter *f, char *err, size_t errlen)
{
	struct filter_params *p = &f->params;
	uint64_t half = p->bits / 2;

	if (p->bits % 2 != 0 || half < FILTER_MIN_BITS ||
	    (p->layout == FILTER_BLOCKED && (p->bits / FILTER_BLOCK_BITS) % 2 != 0)) {
		error_set(err, errlen, "a filter of %llu bits cannot be halved",
			(unsigned long long)p->bits);
		return -1;
	}
	if (half % 64 == 0) {
		for (uint64_t w = 0; w < half / 64; w++)
			f->words[w] |= f->words[w + half / 64];
	} else {
		for (uint64_t b = half; b < p->bits; b++)
			if (bit_is_set(f->words, b))
				f->words[(b - half) >> 6] |= 1ULL << ((b - half) & 63);
	}
	f->nwords = (half + 63) / 64;
	/* Clear what now lies past the end, so ones and equality stay exact. */
	memset(f->words + f->nwords, 0, (((p->bits + 63) / 64) - f->nwords) * 8);
	if (half % 64 != 0)
		f->words[f->nwords - 1] &= (1ULL << (half % 64)) - 1;
	p->bits = half;
	p->folds++;
	return 0;
}

bool filter_equal(const struct filter *a, const struct filter *b)
{
	return filter_params_equal(&a->params, &b->params) && hash_key_equal(&a->key, &b->key) &&
	       memcmp(a->words, b->words, a->nwords * 8) == 0;
}

uint64_t filter_ones(const struct filter *f)
{
	uint64_t ones = 0;

	for (uint64_t w = 0; w < f->nwords; w++)
		ones += (uint64_t)__builtin_popcountll(f->words[w]);
	return ones;
}

double filter_fill(const struct filter *f)
{
	return (double)filter_ones(f) / (double)f->params.bits;
}

size_t filter_bytes(const struct filter *f)
{
	return (size_t)f->nwords * 8;
}

void filter_block_hit_table(unsigned k, double table[FILTER_BLOCK_BITS + 1])
{
	const double B = FILTER_BLOCK_BITS;
	double dist[FILTER_MAX_HASHES + 1] = {1.0}; /* dist[d]: P(d distinct positions) */

	for (unsigned i = 0; i < k; i++) {
		for (unsigned d = i + 1; d >= 1; d--)
			dist[d] = dist[d] * d / B + dist[d - 1] * (B - (d - 1)) / B;
		dist[0] = 0.0;
	}
	for (unsigned o = 0; o <= FILTER_BLOCK_BITS; o++) {
		/* d distinct positions all among o ones: C(o, d) / C(512, d). */
		double hit = 0.0, all = 1.0;
		for (unsigned d = 1; d <= k; d++) {
			all *= (o >= d) ? (double)(o - (d - 1)) / (B - (d - 1)) : 0.0;
			hit += dist[d] * all;
		}
		table[o] = hit;
	}
}

double filter_fpr_from_fill(const struct filter *f)
{
	const struct filter_params *p = &f->params;
	double q;

	if (p->layout == FILTER_BLOCKED) {
		double table[FILTER_BLOCK_BITS + 1], sum = 0.0;
		uint64_t nblocks = p->bits / FILTER_BLOCK_BITS;
		filter_block_hit_table(p->hashes, table);
		for (uint64_t b = 0; b < nblocks; b++) {
			unsigned ones = 0;
			for (unsigned w = 0; w < FILTER_BLOCK_WORDS; w++)
				ones += (unsigned)__builtin_popcountll(f->words[b * FILTER_BLOCK_WORDS + w]);
			sum += table[ones];
		}
		q = sum / (double)nblocks;
	} else {
		q = pow(filter_fill(f), p->hashes);
	}
	/* 1 - (1 - q)^c, without the cancellation that rounds a tiny q to 0. */
	return -expm1(p->choices * log1p(-q));
}
