/* Unit and property tests for counting.c against an exact model of the set. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdlib.h>
#include <string.h>

#include "counting.h"
#include "rng.h"
#include "simd.h"
#include "test.h"

#define UNIVERSE 3000

static struct hash_key KEY;

static struct hash128 key_hash(uint64_t i)
{
	return hash_bytes(&KEY, &i, sizeof(i));
}

static struct counting *make(enum filter_layout layout, uint64_t bits, unsigned c, unsigned k,
			     uint64_t seed)
{
	struct filter_params p = { .layout = layout, .bits = bits, .choices = c, .hashes = k };
	char err[128];
	struct counting *cs = counting_new(&p, &KEY, seed, err, sizeof(err));

	assert_non_null(cs);
	return cs;
}

/* The model: which keys are in the set, and in which group each is counted. */
struct model {
	size_t n;
	uint64_t ids[UNIVERSE];
	struct hash128 hashes[UNIVERSE];
	uint8_t groups[UNIVERSE];
	int where[UNIVERSE]; /* index in ids, or -1 */
};

static void model_add(struct model *m, uint64_t id, uint8_t g)
{
	m->where[id] = (int)m->n;
	m->ids[m->n] = id;
	m->hashes[m->n] = key_hash(id);
	m->groups[m->n++] = g;
}

static void model_del(struct model *m, size_t i)
{
	m->where[m->ids[i]] = -1;
	m->n--;
	if (i != m->n) {
		m->ids[i] = m->ids[m->n];
		m->hashes[i] = m->hashes[m->n];
		m->groups[i] = m->groups[m->n];
		m->where[m->ids[i]] = (int)i;
	}
}

static void check_invariants(const struct counting *cs, const struct model *m)
{
	const struct filter *f = counting_filter(cs);
	struct filter *derived = counting_derive(cs);

	assert_non_null(derived);
	assert_true(filter_equal(f, derived)); /* the bit filter is (counter != 0) */
	assert_int_equal(filter_ones(f), cs->ones);
	filter_free(derived);
	for (size_t i = 0; i < m->n; i++) {
		assert_true(filter_query(f, m->hashes[i]));          /* no false negative */
		assert_true(filter_group_covers(f, m->hashes[i], m->groups[i]));
	}
}

/* Random adds, deletes and rebuilds; the filter must never miss a member. */
static void run_property(enum filter_layout layout, unsigned c, uint64_t seed)
{
	struct model *m = calloc(1, sizeof(*m));
	struct rng r;
	/* Small filters, so that blocks fill up and counters saturate. */
	struct counting *cs = make(layout, 16 * 512, c, 6, seed);

	assert_non_null(m);
	memset(m->where, -1, sizeof(m->where));
	rng_seed(&r, seed);
	for (int step = 0; step < 6000; step++) {
		uint64_t op = rng_below(&r, 100);
		if (op < 55 || m->n == 0) {
			uint64_t id = rng_below(&r, UNIVERSE);
			if (m->where[id] >= 0)
				continue;
			model_add(m, id, (uint8_t)counting_insert(cs, key_hash(id)));
		} else if (op < 98) {
			size_t i = (size_t)rng_below(&r, m->n);
			assert_int_equal(counting_remove(cs, m->hashes[i], m->groups[i]), 0);
			model_del(m, i);
		} else {
			counting_rebuild(cs, m->hashes, m->groups, m->n, 1 + (unsigned)rng_below(&r, 3));
		}
		if (step % 250 == 0)
			check_invariants(cs, m);
		else if (m->n > 0)
			assert_true(filter_query(counting_filter(cs), m->hashes[rng_below(&r, m->n)]));
	}
	check_invariants(cs, m);
	/* Deleting everything leaves only the sticky counters set. */
	while (m->n > 0) {
		assert_int_equal(counting_remove(cs, m->hashes[m->n - 1], m->groups[m->n - 1]), 0);
		model_del(m, m->n - 1);
	}
	for (uint64_t i = 0; i < cs->params.bits; i++) {
		unsigned v = counting_get(cs, i);
		assert_true(v == 0 || v == COUNTING_MAX);
	}
	counting_free(cs);
	free(m);
}

static void property_classic(void **state)
{
	(void)state;
	for (unsigned c = 1; c <= 3; c++)
		for (uint64_t seed = 1; seed <= 3; seed++)
			run_property(FILTER_CLASSIC, c, seed * 10 + c);
}

static void property_blocked(void **state)
{
	(void)state;
	for (unsigned c = 1; c <= 3; c++)
		for (uint64_t seed = 1; seed <= 3; seed++)
			run_property(FILTER_BLOCKED, c, seed * 100 + c);
}

/* Saturate counters, delete most keys: the rest must still be found. */
static void saturated_counters_stay(void **state)
{
	(void)state;
	for (int layout = FILTER_CLASSIC; layout <= FILTER_BLOCKED; layout++) {
		struct counting *cs = make((enum filter_layout)layout, 512, 2, 8, 5);
		uint8_t groups[400];
		for (uint64_t i = 0; i < 400; i++)
			groups[i] = (uint8_t)counting_insert(cs, key_hash(i));
		assert_true(cs->saturated > 0);
		for (uint64_t i = 10; i < 400; i++)
			assert_int_equal(counting_remove(cs, key_hash(i), groups[i]), 0);
		for (uint64_t i = 0; i < 10; i++)
			assert_true(filter_query(counting_filter(cs), key_hash(i)));
		counting_free(cs);
	}
}

static void remove_of_absent_changes_nothing(void **state)
{
	(void)state;
	for (int layout = FILTER_CLASSIC; layout <= FILTER_BLOCKED; layout++) {
		struct counting *cs = make((enum filter_layout)layout, 8 * 512, 2, 8, 6);
		size_t nbytes = (size_t)cs->params.bits / 2;
		uint8_t *before = malloc(nbytes);
		unsigned failed = 0, g = counting_insert(cs, key_hash(1));
		for (uint64_t i = 2; i < 300; i++)
			counting_insert(cs, key_hash(i));
		/* Strangers, partly overlapping set counters: a failed remove must undo itself. */
		for (uint64_t i = 1000; i < 3000; i++) {
			memcpy(before, cs->nibbles, nbytes);
			uint64_t ones = cs->ones;
			if (counting_remove(cs, key_hash(i), (unsigned)(i % 2)) == 0) {
				counting_add(cs, key_hash(i), (unsigned)(i % 2));
				continue;
			}
			failed++;
			assert_memory_equal(before, cs->nibbles, nbytes);
			assert_int_equal(ones, cs->ones);
		}
		assert_true(failed > 1000);
		assert_int_equal(counting_remove(cs, key_hash(1), g), 0);
		free(before);
		counting_free(cs);
	}
}

/* On an empty classic filter both groups cost k new ones: ties go either way. */
static void ties_are_broken_at_random(void **state)
{
	struct counting *cs = make(FILTER_CLASSIC, 1 << 20, 2, 4, 7);
	unsigned chose[2] = { 0, 0 };

	(void)state;
	for (uint64_t i = 0; i < 2000; i++)
		chose[counting_choose(cs, key_hash(i))]++;
	assert_true(chose[0] > 850 && chose[1] > 850);
	counting_free(cs);
}

/* With one group already covered, the greedy choice adds nothing new. */
static void greedy_prefers_covered_group(void **state)
{
	(void)state;
	for (int layout = FILTER_CLASSIC; layout <= FILTER_BLOCKED; layout++) {
		struct counting *cs = make((enum filter_layout)layout, 64 * 512, 2, 8, 8);
		counting_add(cs, key_hash(1), 1);
		uint64_t ones = cs->ones;
		assert_int_equal(counting_choose(cs, key_hash(1)), 1);
		assert_int_equal(counting_insert(cs, key_hash(1)), 1);
		assert_int_equal(cs->ones, ones);
		counting_free(cs);
	}
}

/*
 * The costs counted with AVX2 and POPCNT (from the avx2 level) choose as the
 * portable count does: the same groups and counters after inserts and
 * rounds, in a filter full enough that costs differ, with groups of 6
 * positions, of 16 (the most the AVX2 costs take, many of them probing a bit
 * twice) and of 20 (past it).
 */
static void avx2_counts_as_portable(void **state)
{
	enum { N = 2500 };
	static struct hash128 h[N];
	static uint8_t fast_groups[N], plain_groups[N];
	static const unsigned hashes[] = { 6, 16, 20 };

	(void)state;
	if (!simd_cpu_has(SIMD_AVX2))
		skip();
	for (unsigned i = 0; i < sizeof(hashes) / sizeof(hashes[0]); i++) {
		unsigned k = hashes[i];
		struct counting *fast = make(FILTER_BLOCKED, 40 * 512, 2, k, 9);
		struct counting *plain = make(FILTER_BLOCKED, 40 * 512, 2, k, 9);
		assert_int_equal(counting_set_simd(fast, SIMD_AVX2), 0);
		assert_int_equal(counting_set_simd(plain, SIMD_SCALAR), 0);
		assert_true(fast->avx2 && !plain->avx2);
		for (size_t j = 0; j < N; j++) {
			h[j] = key_hash(j);
			fast_groups[j] = (uint8_t)counting_insert(fast, h[j]);
			plain_groups[j] = (uint8_t)counting_insert(plain, h[j]);
			assert_int_equal(fast_groups[j], plain_groups[j]);
		}
		counting_rebuild(fast, h, fast_groups, N, 3);
		counting_rebuild(plain, h, plain_groups, N, 3);
		assert_memory_equal(fast_groups, plain_groups, N);
		assert_memory_equal(fast->nibbles, plain->nibbles, 40 * 512 / 2);
		assert_int_equal(fast->ones, plain->ones);
		counting_free(fast);
		counting_free(plain);
	}
}

/* A round as counting.h defines it: each key removed, chosen again greedily and added back. */
static void round_by_definition(struct counting *cs, const struct hash128 *h, uint8_t *groups, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (counting_remove(cs, h[i], groups[i]) < 0)
			continue;
		groups[i] = (uint8_t)counting_choose(cs, h[i]);
		counting_add(cs, h[i], groups[i]);
	}
}

/* The first key from id on one of whose groups probes a bit three times or more. */
static uint64_t thrice_probed(const struct filter_params *p, uint64_t id)
{
	for (;; id++) {
		struct hash128 h = key_hash(id);
		for (unsigned g = 0; g < p->choices; g++) {
			uint64_t pos[FILTER_MAX_HASHES];
			filter_group_positions(p, h, g, pos);
			for (unsigned i = 0; i < p->hashes; i++) {
				unsigned times = 0;
				for (unsigned j = 0; j < p->hashes; j++)
					times += pos[j] == pos[i];
				if (times >= 3)
					return id;
			}
		}
	}
}

/*
 * A blocked round touches the counters only of keys that move: it must end
 * as the definition does, draw for draw. Small blocks full enough that
 * groups probe a bit twice and costs tie; 30 keys with a group that probes a
 * bit three times; one key counted 40 times, so that its counters saturate;
 * some keys claimed in a group they are not counted in, which both leave
 * alone.
 */
static void rounds_end_as_defined_at(enum simd_level level)
{
	enum { N = 1500 };
	static struct hash128 h[N];
	static uint8_t fast_groups[N], defined_groups[N];

	if (!simd_cpu_has(level))
		skip();
	for (unsigned shape = 0; shape < 6; shape++) {
		/* k = 16: the most the AVX2 step takes, a repeat in one group of five; 17: past it */
		static const unsigned hashes[] = { 9, 16, 17 };
		unsigned c = 2 + shape % 2, k = hashes[shape / 2];
		struct counting *fast = make(FILTER_BLOCKED, 24 * 512, c, k, 11);
		uint64_t thrice = N;
		assert_int_equal(counting_set_simd(fast, level), 0);
		for (size_t i = 0; i < N; i++) {
			if (i >= 40 && i < 70)
				thrice = thrice_probed(&fast->params, thrice + 1);
			h[i] = key_hash(i < 40 ? 0 : i < 70 ? thrice : i);
			fast_groups[i] = (uint8_t)counting_insert(fast, h[i]);
			if (i % 7 == 1) /* claimed where it is not counted */
				fast_groups[i] = (uint8_t)((fast_groups[i] + 1) % c);
		}
		assert_true(fast->saturated > 0);
		memcpy(defined_groups, fast_groups, N);
		struct counting *defined = counting_clone(fast);
		assert_non_null(defined);
		for (unsigned round = 0; round < 4; round++) {
			counting_rebuild(fast, h, fast_groups, N, 1);
			round_by_definition(defined, h, defined_groups, N);
			assert_memory_equal(fast_groups, defined_groups, N);
			assert_memory_equal(fast->nibbles, defined->nibbles, fast->params.bits / 2);
			assert_true(filter_equal(counting_filter(fast), counting_filter(defined)));
			assert_int_equal(fast->ones, defined->ones);
			assert_int_equal(fast->saturated, defined->saturated);
			assert_int_equal(rng_next(&fast->rng), rng_next(&defined->rng));
		}
		counting_free(fast);
		counting_free(defined);
	}
}

/* Costs counted portably, and with the POPCNT instruction (from the avx2 level). */
static void rounds_end_as_defined_scalar(void **state)
{
	(void)state;
	rounds_end_as_defined_at(SIMD_SCALAR);
}

static void rounds_end_as_defined_avx2(void **state)
{
	(void)state;
	rounds_end_as_defined_at(SIMD_AVX2);
}

/* Many keys counted at once end as each counted alone does, in either layout (one key 30 times, to saturate). */
static void add_all_counts_as_add(void **state)
{
	enum { N = 600 };
	static struct hash128 h[N];
	static uint8_t groups[N];

	(void)state;
	for (int layout = FILTER_CLASSIC; layout <= FILTER_BLOCKED; layout++) {
		struct counting *all = make((enum filter_layout)layout, 8 * 512, 3, 7, 12);
		struct counting *each = make((enum filter_layout)layout, 8 * 512, 3, 7, 12);
		for (size_t i = 0; i < N; i++) {
			h[i] = key_hash(i < 30 ? 0 : i);
			groups[i] = (uint8_t)(i < 30 ? 0 : i % 3);
			counting_add(each, h[i], groups[i]);
		}
		counting_add_all(all, h, groups, N);
		assert_memory_equal(all->nibbles, each->nibbles, all->params.bits / 2);
		assert_true(filter_equal(counting_filter(all), counting_filter(each)));
		assert_int_equal(all->ones, each->ones);
		assert_int_equal(all->saturated, each->saturated);
		assert_true(all->saturated > 0);
		counting_free(all);
		counting_free(each);
	}
}

/*
 * Keys put in block order and back: in order, each key's first block is at
 * least the one before it, ties in the keys' own order, each key with its
 * own group; back, each where it was.
 */
static void order_walks_blocks_and_back(void **state)
{
	enum { N = 4000 };
	static struct hash128 h[N], was_h[N];
	static uint8_t groups[N], was_groups[N];
	struct counting *cs = make(FILTER_BLOCKED, 64 * 512, 2, 9, 3);

	(void)state;
	for (size_t i = 0; i < N; i++) {
		h[i] = key_hash(i);
		groups[i] = (uint8_t)(i % 2);
	}
	memcpy(was_h, h, sizeof(h));
	memcpy(was_groups, groups, sizeof(groups));
	uint32_t *order = counting_order(cs, h, groups, N);
	assert_non_null(order);
	for (size_t j = 0; j < N; j++) {
		assert_memory_equal(&h[j], &was_h[order[j]], sizeof(h[j]));
		assert_int_equal(groups[j], was_groups[order[j]]);
		if (j == 0)
			continue;
		uint64_t block = filter_group_block(&cs->params, h[j], 0);
		uint64_t before = filter_group_block(&cs->params, h[j - 1], 0);
		assert_true(block > before || (block == before && order[j] > order[j - 1]));
	}
	counting_unorder(h, groups, N, order);
	assert_memory_equal(h, was_h, sizeof(h));
	assert_memory_equal(groups, was_groups, sizeof(groups));
	counting_free(cs);
}

/* Rounds in block order, then back: each key counted in the group beside it, and nothing else counted. */
static void rounds_in_block_order_keep_keys(void **state)
{
	enum { N = 3000 };
	static struct hash128 h[N];
	static uint8_t groups[N];

	(void)state;
	for (unsigned c = 2; c <= 3; c++) {
		struct counting *cs = make(FILTER_BLOCKED, 24 * 512, c, 9, 5);
		for (size_t i = 0; i < N; i++)
			groups[i] = (uint8_t)counting_insert(cs, h[i] = key_hash(i));
		uint32_t *order = counting_order(cs, h, groups, N);
		assert_non_null(order);
		counting_rebuild(cs, h, groups, N, 3);
		counting_unorder(h, groups, N, order);
		for (size_t i = 0; i < N; i++) {
			struct hash128 want = key_hash(i);
			assert_memory_equal(&h[i], &want, sizeof(want));
			assert_true(filter_group_covers(counting_filter(cs), h[i], groups[i]));
		}
		for (size_t i = 0; i < N; i++)
			assert_int_equal(counting_remove(cs, h[i], groups[i]), 0);
		for (uint64_t i = 0; i < cs->params.bits; i++) {
			unsigned v = counting_get(cs, i);
			assert_true(v == 0 || v == COUNTING_MAX);
		}
		counting_free(cs);
	}
}

static void bad_parameters(void **state)
{
	struct filter_params p = { FILTER_CLASSIC, 1024, 2, 0, 0 };
	char err[128] = "";

	(void)state;
	assert_null(counting_new(&p, &KEY, 1, err, sizeof(err)));
	assert_non_null(strstr(err, "hashes"));
	p.hashes = 4;
	p.folds = 1;
	assert_null(counting_new(&p, &KEY, 1, err, sizeof(err)));
	assert_non_null(strstr(err, "folded"));
	counting_free(NULL);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(property_classic),
	cmocka_unit_test(property_blocked),
	cmocka_unit_test(saturated_counters_stay),
	cmocka_unit_test(remove_of_absent_changes_nothing),
	cmocka_unit_test(ties_are_broken_at_random),
	cmocka_unit_test(greedy_prefers_covered_group),
	cmocka_unit_test(avx2_counts_as_portable),
	cmocka_unit_test(rounds_end_as_defined_scalar),
	cmocka_unit_test(rounds_end_as_defined_avx2),
	cmocka_unit_test(add_all_counts_as_add),
	cmocka_unit_test(order_walks_blocks_and_back),
	cmocka_unit_test(rounds_in_block_order_keep_keys),
	cmocka_unit_test(bad_parameters),
};

int main(void)
{
	hash_key_from_seed(&KEY, HASH_XXH3, 777);
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("counting", tests, NULL, NULL);
}
