/* SPDX-License-Identifier: BSD-2-Clause */
/* Unit and property tests for recent.c against a plain model: an exact LRU table. */
#include <string.h>

#include "recent.h"
#include "rng.h"
#include "test.h"

#define UNIVERSE 300
#define CAPACITY 64

/* The model: each key's value and when it was last used (0: not there). */
struct model {
	uint64_t used[UNIVERSE];
	uint32_t value[UNIVERSE];
	uint64_t clock, evicted;
	size_t count;
};

static void model_use(struct model *m, unsigned k, bool *fresh)
{
	*fresh = m->used[k] == 0;
	if (*fresh && m->count == CAPACITY) { /* the least recently used goes */
		unsigned oldest = UNIVERSE;
		for (unsigned i = 0; i < UNIVERSE; i++)
			if (m->used[i] && (oldest == UNIVERSE || m->used[i] < m->used[oldest]))
				oldest = i;
		m->used[oldest] = 0;
		m->evicted++;
		m->count--;
	}
	if (*fresh) {
		m->value[k] = 0;
		m->count++;
	}
	m->used[k] = ++m->clock;
}

/* Random uses of keys (a few hot, most not) against the model: the same keys kept, the same values, the same evictions. */
static void uses_match_an_exact_lru(void **state)
{
	static struct model m;
	struct recent *r = recent_new(CAPACITY, sizeof(uint32_t));
	struct rng g;

	(void)state;
	assert_non_null(r);
	rng_seed(&g, 3);
	for (int step = 0; step < 200000; step++) {
		unsigned k = rng_below(&g, 2) ? (unsigned)rng_below(&g, 40) : (unsigned)rng_below(&g, UNIVERSE);
		bool fresh, want;
		uint32_t *v = recent_use(r, 1000003u * k + 7, &fresh);
		model_use(&m, k, &want);
		assert_non_null(v);
		assert_int_equal(fresh, want);
		assert_int_equal(*v, m.value[k]);
		*v = m.value[k] = (uint32_t)step;
		assert_int_equal(recent_count(r), m.count);
		assert_int_equal(recent_evicted(r), m.evicted);
	}
	recent_free(r);
}

/* Within capacity nothing is forgotten, whatever the keys. */
static void within_capacity_nothing_is_forgotten(void **state)
{
	struct recent *r = recent_new(20000, 1);
	bool fresh;

	(void)state;
	assert_non_null(r);
	for (int round = 0; round < 2; round++)
		for (uint64_t k = 0; k < 20000; k++) {
			assert_non_null(recent_use(r, k * 0x9e3779b97f4a7c15ull, &fresh));
			assert_int_equal(fresh, round == 0);
		}
	assert_int_equal(recent_evicted(r), 0);
	recent_free(r);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(uses_match_an_exact_lru),
	cmocka_unit_test(within_capacity_nothing_is_forgotten),
};

TEST_MAIN("recent", tests)
