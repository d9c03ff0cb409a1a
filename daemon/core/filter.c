/* filter.c - the query-side bit filter: two layouts, c choices, union and fold. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "filter.h"

#include "hash_inline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "block.h"
#include "blockquery.h"
#include "error.h"
#include "rng.h"

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

static bool filter_params_equal(const struct filter_params *a, const struct filter_params *b)
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
	f->kernel = blockquery_kernel(simd_best());
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

	if (copy != NULL) {
		memcpy(copy->words, f->words, f->nwords * 8);
		copy->kernel = f->kernel;
	}
	return copy;
}

void filter_free(struct filter *f)
{
	if (f == NULL)
		return;
	free(f->words);
	free(f);
}

static inline uint64_t probe_bits(const struct filter_params *p)
{
	return p->bits << p->folds;
}

uint64_t filter_group_block(const struct filter_params *p, struct hash128 h, unsigned g)
{
	uint64_t x, y;

	block_group_words(h, g, &x, &y);
	return block_range_reduce(x, probe_bits(p) / FILTER_BLOCK_BITS);
}

void filter_group_positions(const struct filter_params *p, struct hash128 h, unsigned g,
			    uint64_t pos[FILTER_MAX_HASHES])
{
	uint64_t x, y, m = probe_bits(p);
	unsigned k = p->hashes;

	block_group_words(h, g, &x, &y);
	if (p->layout == FILTER_BLOCKED) {
		uint64_t base = block_range_reduce(x, m / FILTER_BLOCK_BITS) * FILTER_BLOCK_BITS;
		for (unsigned i = 0; i < k; i++)
			pos[i] = base + block_position(block_y32(y), i);
		return;
	}
	/* Enhanced double hashing: g_i = x + i*y + (i^3 - i)/6 (mod m), incrementally. */
	x = block_range_reduce(x, m);
	y = block_range_reduce(y, m);
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

bool filter_group_covers(const struct filter *f, struct hash128 h, unsigned g)
{
	const struct filter_params *p = &f->params;
	uint64_t pos[FILTER_MAX_HASHES];

	if (p->layout == FILTER_BLOCKED) {
		uint32_t y32;
		const uint64_t *block = block_of_group(f, h, g, &y32);
		for (unsigned i = 0; i < p->hashes; i++) {
			unsigned at = block_position(y32, i);
			if (!bit_is_set(block, at))
				return false;
		}
		return true;
	}
	filter_group_positions(p, h, g, pos);
	for (unsigned i = 0; i < p->hashes; i++)
		if (!bit_is_set(f->words, pos[i] % p->bits))
			return false;
	return true;
}

__attribute__((noinline)) static bool query_classic(const struct filter *f, struct hash128 h)
{
	for (unsigned g = 0; g < f->params.choices; g++)
		if (filter_group_covers(f, h, g))
			return true;
	return false;
}

/* Blocked: straight to the kernel's function for the shape (a tail call, no frame). */
bool filter_query(const struct filter *f, struct hash128 h)
{
	const struct filter_params *p = &f->params;

	if (p->layout == FILTER_BLOCKED)
		return f->kernel->one[p->folds == 0 && p->choices <= 2 ? p->choices : 0](f, h);
	return query_classic(f, h);
}

bool filter_query_bytes(const struct filter *f, const void *data, size_t len)
{
	return filter_query(f, hash_inline_domain(&f->key, 0, data, len));
}

void filter_query_batch(const struct filter *f, const struct hash128 *h, size_t n, bool *out)
{
	if (f->params.layout == FILTER_BLOCKED) {
		f->kernel->batch(f, h, n, out);
		return;
	}
	for (size_t i = 0; i < n; i++)
		out[i] = filter_query(f, h[i]);
}

enum simd_level filter_simd(const struct filter *f)
{
	return f->kernel->level;
}

int filter_set_simd(struct filter *f, enum simd_level level)
{
	const struct blockquery *kernel = blockquery_kernel(level);

	if (kernel == NULL || !simd_cpu_has(level))
		return -1;
	f->kernel = kernel;
	return 0;
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

/*
 * Stats and metrics ask for the fill and the rate it predicts at every
 * scrape, in the loop: a filter of more than SURVEY_GROUPS groups of 8
 * words (1 MiB) is surveyed at that many groups spread evenly over it
 * (where a key's bits land is random, so a spread is a fair sample). Well
 * under a millisecond at any size, where a pass over a 10,000,000-entry
 * filter took some 30 ms; exact up to 1 MiB.
 */
#define SURVEY_GROUPS (1u << 14)

static unsigned group_ones(const uint64_t *words)
{
	unsigned ones = 0;

	for (unsigned w = 0; w < FILTER_BLOCK_WORDS; w++)
		ones += (unsigned)__builtin_popcountll(words[w]);
	return ones;
}

/* How many of a filter's groups the survey visits, and where the i-th is. */
static uint64_t survey_size(uint64_t groups)
{
	return groups < SURVEY_GROUPS ? groups : SURVEY_GROUPS;
}

static const uint64_t *surveyed(const struct filter *f, uint64_t i, uint64_t n, uint64_t groups)
{
	return f->words + i * groups / n * FILTER_BLOCK_WORDS;
}

double filter_fill(const struct filter *f)
{
	uint64_t groups = f->nwords / FILTER_BLOCK_WORDS, n = survey_size(groups), ones = 0;

	if (n == groups) /* small enough to count whole (a classic filter's tail words too) */
		return (double)filter_ones(f) / (double)f->params.bits;
	for (uint64_t i = 0; i < n; i++)
		ones += group_ones(surveyed(f, i, n, groups));
	return (double)ones / ((double)n * FILTER_BLOCK_BITS);
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
		uint64_t nblocks = p->bits / FILTER_BLOCK_BITS, n = survey_size(nblocks);
		filter_block_hit_table(p->hashes, table);
		for (uint64_t i = 0; i < n; i++)
			sum += table[group_ones(surveyed(f, i, n, nblocks))];
		q = sum / (double)n;
	} else {
		q = pow(filter_fill(f), p->hashes);
	}
	/* 1 - (1 - q)^c, without the cancellation that rounds a tiny q to 0. */
	return -expm1(p->choices * log1p(-q));
}
