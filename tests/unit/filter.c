/* Unit tests for filter.c: parameters, queries, union, fold, fill. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "rng.h"
#include "test.h"

static struct hash_key KEY;

static struct hash128 key_hash(uint64_t i)
{
	return hash_bytes(&KEY, &i, sizeof(i));
}

static struct filter *make(enum filter_layout layout, uint64_t bits, unsigned c, unsigned k)
{
	struct filter_params p = { .layout = layout, .bits = bits, .choices = c, .hashes = k };
	char err[128];
	struct filter *f = filter_new(&p, &KEY, err, sizeof(err));

	assert_non_null(f);
	return f;
}

static void expect_bad(struct filter_params p, const char *word)
{
	char err[128] = "";

	assert_int_equal(filter_params_check(&p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, word));
	assert_null(filter_new(&p, &KEY, err, sizeof(err)));
}

static void bad_parameters_are_named(void **state)
{
	(void)state;
	expect_bad((struct filter_params){ FILTER_CLASSIC, 1024, 2, 0, 0 }, "hashes");
	expect_bad((struct filter_params){ FILTER_CLASSIC, 1024, 2, 33, 0 }, "hashes");
	expect_bad((struct filter_params){ FILTER_CLASSIC, 1024, 0, 4, 0 }, "choices");
	expect_bad((struct filter_params){ FILTER_CLASSIC, 1024, 4, 4, 0 }, "choices");
	expect_bad((struct filter_params){ FILTER_CLASSIC, 63, 1, 4, 0 }, "bits");
	expect_bad((struct filter_params){ FILTER_BLOCKED, 1000, 1, 4, 0 }, "multiple of 512");
	expect_bad((struct filter_params){ (enum filter_layout)7, 1024, 1, 4, 0 }, "layout");
}

static void members_are_found(void **state)
{
	(void)state;
	for (int layout = FILTER_CLASSIC; layout <= FILTER_BLOCKED; layout++) {
		for (unsigned c = 1; c <= 3; c++) {
			struct filter *f = make((enum filter_layout)layout, 64 * 512, c, 9);
			for (uint64_t i = 0; i < 1000; i++)
				filter_add_group(f, key_hash(i), (unsigned)(i % c));
			for (uint64_t i = 0; i < 1000; i++) {
				assert_true(filter_query(f, key_hash(i)));
				assert_true(filter_group_covers(f, key_hash(i), (unsigned)(i % c)));
			}
			filter_free(f);
		}
	}
}

static void positions_stay_in_range(void **state)
{
	uint64_t pos[FILTER_MAX_HASHES];
	struct filter_params classic = { FILTER_CLASSIC, 1001, 3, 32, 0 };
	struct filter_params blocked = { FILTER_BLOCKED, 5 * 512, 3, 32, 0 };

	(void)state;
	for (uint64_t i = 0; i < 2000; i++) {
		for (unsigned g = 0; g < 3; g++) {
			filter_group_positions(&classic, key_hash(i), g, pos);
			for (unsigned j = 0; j < 32; j++)
				assert_true(pos[j] < 1001);
			filter_group_positions(&blocked, key_hash(i), g, pos);
			uint64_t block = filter_group_block(&blocked, key_hash(i), g);
			assert_true(block < 5);
			for (unsigned j = 0; j < 32; j++)
				assert_true(pos[j] / 512 == block);
		}
	}
}

static void union_merges_only_equals(void **state)
{
	struct filter *a = make(FILTER_BLOCKED, 8192, 2, 8), *b = make(FILTER_BLOCKED, 8192, 2, 8);
	struct filter *other = make(FILTER_BLOCKED, 8192, 3, 8);
	char err[128];

	(void)state;
	for (uint64_t i = 0; i < 100; i++) {
		filter_add_group(a, key_hash(i), 0);
		filter_add_group(b, key_hash(1000 + i), 1);
	}
	assert_int_equal(filter_union(a, b, err, sizeof(err)), 0);
	for (uint64_t i = 0; i < 100; i++)
		assert_true(filter_query(a, key_hash(i)) && filter_query(a, key_hash(1000 + i)));
	assert_int_equal(filter_union(a, other, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "parameters"));
	hash_key_from_seed(&b->key, HASH_XXH3, 999);
	assert_int_equal(filter_union(a, b, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "secret"));
	filter_free(a);
	filter_free(b);
	filter_free(other);
}

static void fold_keeps_members(void **state)
{
	/* 4096: word-aligned halves; 1000 -> 500: a half that is not; blocked: 16 blocks. */
	const struct { enum filter_layout layout; uint64_t bits; int folds; } cases[] = {
		{ FILTER_CLASSIC, 4096, 3 }, { FILTER_CLASSIC, 1000, 2 }, { FILTER_BLOCKED, 16 * 512, 4 },
	};
	char err[128];

	(void)state;
	for (size_t t = 0; t < sizeof(cases) / sizeof(cases[0]); t++) {
		struct filter *f = make(cases[t].layout, cases[t].bits, 2, 6);
		for (uint64_t i = 0; i < 40; i++)
			filter_add_group(f, key_hash(i), (unsigned)(i & 1));
		for (int n = 0; n < cases[t].folds; n++) {
			uint64_t ones = filter_ones(f);
			assert_int_equal(filter_fold(f, err, sizeof(err)), 0);
			assert_true(filter_ones(f) <= ones);
			assert_int_equal(f->params.bits, cases[t].bits >> (n + 1));
			for (uint64_t i = 0; i < 40; i++)
				assert_true(filter_query(f, key_hash(i)));
		}
		filter_free(f);
	}
	struct filter *odd = make(FILTER_CLASSIC, 1001, 1, 4), *one = make(FILTER_BLOCKED, 512, 1, 4);
	assert_int_equal(filter_fold(odd, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot be halved"));
	assert_int_equal(filter_fold(one, err, sizeof(err)), -1);
	filter_free(odd);
	filter_free(one);
}

static void fill_and_predicted_fpr(void **state)
{
	double table[FILTER_BLOCK_BITS + 1];

	(void)state;
	filter_block_hit_table(8, table);
	assert_true(table[0] == 0.0);
	assert_true(fabs(table[FILTER_BLOCK_BITS] - 1.0) < 1e-12);
	for (int o = 1; o <= FILTER_BLOCK_BITS; o++)
		assert_true(table[o] >= table[o - 1]);
	for (int layout = FILTER_CLASSIC; layout <= FILTER_BLOCKED; layout++) {
		struct filter *f = make((enum filter_layout)layout, 4096, 2, 7);
		assert_true(filter_fill(f) == 0.0 && filter_fpr_from_fill(f) == 0.0);
		memset(f->words, 0xff, filter_bytes(f));
		assert_true(filter_fill(f) == 1.0);
		assert_true(fabs(filter_fpr_from_fill(f) - 1.0) < 1e-12);
		filter_free(f);
	}
}

/* Few keys in a large filter: a tiny predicted FPR, not 0. */
static void tiny_predicted_fpr_is_not_zero(void **state)
{
	(void)state;
	for (int layout = FILTER_CLASSIC; layout <= FILTER_BLOCKED; layout++) {
		struct filter *f = make((enum filter_layout)layout, 512, 2, 32);
		for (uint64_t i = 0; i < 4; i++)
			filter_add_group(f, key_hash(i), 0);
		assert_true(filter_fpr_from_fill(f) > 0);
		filter_free(f);
	}
}

/* The predicted FPR must agree with what queries of strangers measure. */
static void predicted_fpr_matches_measured(void **state)
{
	(void)state;
	for (int layout = FILTER_CLASSIC; layout <= FILTER_BLOCKED; layout++) {
		struct filter *f = make((enum filter_layout)layout, 1 << 16, 1, 8);
		uint64_t fp = 0, queries = 400000;
		for (uint64_t i = 0; i < 8192; i++)
			filter_add_group(f, key_hash(i), 0);
		for (uint64_t i = 0; i < queries; i++)
			fp += filter_query(f, key_hash(1000000 + i));
		double measured = (double)fp / queries, predicted = filter_fpr_from_fill(f);
		assert_true(fabs(measured - predicted) < 0.1 * predicted);
		filter_free(f);
	}
}

/* The reference answer, bit by bit from the group positions: any group with all k bits set. */
static bool reference_query(const struct filter *f, struct hash128 h)
{
	uint64_t pos[FILTER_MAX_HASHES];

	for (unsigned g = 0; g < f->params.choices; g++) {
		bool all = true;
		filter_group_positions(&f->params, h, g, pos);
		for (unsigned i = 0; i < f->params.hashes; i++) {
			uint64_t bit = pos[i] % f->params.bits;
			all &= (f->words[bit >> 6] >> (bit & 63)) & 1;
		}
		if (all)
			return true;
	}
	return false;
}

/* Set (on) or clear the bits of group g of h, all but the one at index skip (k: none skipped). */
static void paint_group(struct filter *f, struct hash128 h, unsigned g, unsigned skip, bool on)
{
	uint64_t pos[FILTER_MAX_HASHES];

	filter_group_positions(&f->params, h, g, pos);
	for (unsigned i = 0; i < f->params.hashes; i++) {
		uint64_t bit = pos[i] % f->params.bits;
		if (i == skip)
			continue;
		if (on)
			f->words[bit >> 6] |= 1ULL << (bit & 63);
		else
			f->words[bit >> 6] &= ~(1ULL << (bit & 63));
	}
}

static void expect_reference(const struct filter *f, const struct hash128 *h, size_t n)
{
	bool batch[64];

	assert_true(n <= 64);
	filter_query_batch(f, h, n, batch);
	for (size_t i = 0; i < n; i++) {
		bool want = reference_query(f, h[i]);
		if (batch[i] != want || filter_query(f, h[i]) != want)
			fail_msg("k=%u c=%u folds=%u key %zu: reference %d, batch %d, one %d", f->params.hashes,
				 f->params.choices, f->params.folds, i, want, batch[i], filter_query(f, h[i]));
	}
}

/*
 * Adversarial keys: a group with every bit but one set (each index in turn, so
 * a kernel that skips a lane or a pass says yes where it must not), or with all
 * set, in an otherwise empty filter.
 */
static void expect_reference_near_misses(struct filter *f, struct rng *r)
{
	unsigned k = f->params.hashes;

	memset(f->words, 0, filter_bytes(f));
	for (unsigned skip = 0; skip <= k; skip++) {
		struct hash128 h = key_hash(rng_next(r));
		unsigned g = (unsigned)rng_below(r, f->params.choices);
		paint_group(f, h, g, skip, true);
		expect_reference(f, &h, 1);
		if (skip == k)
			assert_true(filter_query(f, h));
		paint_group(f, h, g, skip, false);
	}
}

/*
 * Every kernel against the reference, for k = 1..32 and c = 1..3, on filters
 * from empty to nearly full, folded and not, with random keys in batches of
 * every length and the near misses above.
 */
static void kernel_matches_reference(void **state)
{
	enum simd_level level = test_simd_level(state);
	struct rng r;

	rng_seed(&r, 99);
	for (unsigned k = 1; k <= FILTER_MAX_HASHES; k++) {
		for (unsigned c = 1; c <= 3; c++) {
			struct filter *f = make(FILTER_BLOCKED, 16 * 512, c, k);
			assert_int_equal(filter_set_simd(f, level), 0);
			assert_int_equal(filter_simd(f), level);
			for (unsigned fill = 0; fill < 4; fill++) {
				/* 0, 1x, 4x, 16x 300 group inserts: empty to nearly full blocks */
				uint64_t inserts = fill ? 300ULL << (2 * (fill - 1)) : 0;
				memset(f->words, 0, filter_bytes(f));
				for (uint64_t i = 0; i < inserts; i++)
					filter_add_group(f, key_hash(rng_next(&r)), (unsigned)rng_below(&r, c));
				for (int round = 0; round < 20; round++) {
					struct hash128 h[64];
					size_t n = 1 + rng_below(&r, 64);
					for (size_t i = 0; i < n; i++)
						h[i] = key_hash(rng_next(&r));
					expect_reference(f, h, n);
				}
			}
			expect_reference_near_misses(f, &r);
			filter_fold(f, NULL, 0);
			expect_reference_near_misses(f, &r);
			filter_free(f);
		}
	}
}

/* out[i] for a batch of n keys, against the reference and the one-key query. */
static void expect_reference_long(const struct filter *f, struct rng *r, size_t n)
{
	struct hash128 *h = malloc(n * sizeof(*h));
	bool *out = malloc(n);

	assert_non_null(h);
	assert_non_null(out);
	for (size_t i = 0; i < n; i++)
		h[i] = key_hash(rng_next(r));
	filter_query_batch(f, h, n, out);
	for (size_t i = 0; i < n; i++) {
		bool want = reference_query(f, h[i]);
		if (out[i] != want || filter_query(f, h[i]) != want)
			fail_msg("%llu bits c=%u folds=%u batch of %zu, key %zu: reference %d, batch %d",
				 (unsigned long long)f->params.bits, f->params.choices, f->params.folds, n, i,
				 want, out[i]);
	}
	free(h);
	free(out);
}

/*
 * Batches longer than the kernels' lookahead, on a filter small enough for the
 * near lookahead and one large enough for the far one (tens of MiB are fetched
 * further ahead), both 7/8 full so that both answers are common; then folded.
 */
static void long_batches_match_reference(void **state)
{
	enum simd_level level = test_simd_level(state);
	static const uint64_t sizes[] = { 16 * 512, (9ULL << 20) * 8 };
	static const size_t lengths[] = { 7, 8, 9, 31, 32, 33, 1000 };
	struct rng r;

	rng_seed(&r, 7);
	for (unsigned s = 0; s < 2; s++)
		for (unsigned c = 1; c <= 3; c++) {
			struct filter *f = make(FILTER_BLOCKED, sizes[s], c, 5);
			assert_int_equal(filter_set_simd(f, level), 0);
			for (uint64_t w = 0; w < f->nwords; w++)
				f->words[w] = rng_next(&r) | rng_next(&r) | rng_next(&r);
			for (unsigned folded = 0; folded < 2; folded++) {
				for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++)
					expect_reference_long(f, &r, lengths[i]);
				filter_fold(f, NULL, 0);
			}
			filter_free(f);
		}
}

/* A level the CPU lacks is refused, and the filter keeps its kernel. */
static void missing_level_is_refused(void **state)
{
	struct filter *f = make(FILTER_BLOCKED, 16 * 512, 2, 8);
	enum simd_level before = filter_simd(f);

	(void)state;
	assert_true(simd_cpu_has(before));
	for (int level = 0; level < SIMD_LEVELS; level++)
		if (!simd_cpu_has((enum simd_level)level)) {
			assert_int_equal(filter_set_simd(f, (enum simd_level)level), -1);
			assert_int_equal(filter_simd(f), before);
		}
	filter_free(f);
}

static void clone_and_equal(void **state)
{
	struct filter *f = make(FILTER_CLASSIC, 640, 1, 3);

	(void)state;
	filter_add_group(f, key_hash(1), 0);
	struct filter *g = filter_clone(f);
	assert_non_null(g);
	assert_true(filter_equal(f, g));
	filter_add_group(g, key_hash(2), 0);
	assert_false(filter_equal(f, g));
	filter_free(f);
	filter_free(g);
	filter_free(NULL);
}

static int setup(void)
{
	hash_key_from_seed(&KEY, HASH_XXH3, 12345);
	return 0;
}

/* The exact per-block prediction (filter_fpr_from_fill's, over every block): what a survey estimates. */
static double exact_blocked_fpr(const struct filter *f)
{
	double table[FILTER_BLOCK_BITS + 1], sum = 0.0;
	uint64_t nblocks = f->params.bits / FILTER_BLOCK_BITS;

	filter_block_hit_table(f->params.hashes, table);
	for (uint64_t b = 0; b < nblocks; b++) {
		unsigned ones = 0;
		for (unsigned w = 0; w < FILTER_BLOCK_WORDS; w++)
			ones += (unsigned)__builtin_popcountll(f->words[b * FILTER_BLOCK_WORDS + w]);
		sum += table[ones];
	}
	double q = sum / (double)nblocks;
	return -expm1(f->params.choices * log1p(-q));
}

/* Over 1 MiB, fill and predicted rate come from a sample: within 1% and 3% of the whole's. */
static void large_filters_are_surveyed(void **state)
{
	(void)state;
	for (int layout = FILTER_CLASSIC; layout <= FILTER_BLOCKED; layout++) {
		struct filter *f = make((enum filter_layout)layout, 4ull << 23, 2, 8); /* 4 MiB */
		for (uint64_t i = 0; i < (1u << 21); i++)                         /* 16 bits a key */
			filter_add_group(f, key_hash(i), (unsigned)(i & 1));
		double exact = (double)filter_ones(f) / (double)f->params.bits, fill = filter_fill(f);
		assert_true(exact > 0.3 && exact < 0.6);
		assert_true(fabs(fill - exact) < 0.01 * exact);
		if (layout == FILTER_BLOCKED) {
			double want = exact_blocked_fpr(f), got = filter_fpr_from_fill(f);
			assert_true(fabs(got - want) < 0.03 * want);
		}
		memset(f->words, 0xff, filter_bytes(f));
		assert_true(filter_fill(f) == 1.0);
		filter_free(f);
	}
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(large_filters_are_surveyed),
	cmocka_unit_test(bad_parameters_are_named),
	cmocka_unit_test(members_are_found),
	cmocka_unit_test(positions_stay_in_range),
	cmocka_unit_test(union_merges_only_equals),
	cmocka_unit_test(fold_keeps_members),
	cmocka_unit_test(fill_and_predicted_fpr),
	cmocka_unit_test(tiny_predicted_fpr_is_not_zero),
	cmocka_unit_test(predicted_fpr_matches_measured),
	SIMD_UNIT_TESTS(kernel_matches_reference),
	SIMD_UNIT_TESTS(long_batches_match_reference),
	cmocka_unit_test(missing_level_is_refused),
	cmocka_unit_test(clone_and_equal),
};

int main(void)
{
	setup();
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("filter", tests, NULL, NULL);
}
