/* Unit and property tests for keytable.c against a plain model. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <string.h>

#include "keytable.h"
#include "rng.h"
#include "test.h"

#define UNIVERSE 2000

struct rec {
	uint32_t key;
	uint32_t value;
};

struct model {
	uint32_t value[UNIVERSE];
	bool there[UNIVERSE];
	unsigned seen[UNIVERSE];
	struct rng *r;
};

static int visit(void *ctx, void *p)
{
	struct model *m = ctx;
	struct rec *rec = p;

	assert_true(rec->key < UNIVERSE && m->there[rec->key]);
	assert_int_equal(rec->value, m->value[rec->key]);
	m->seen[rec->key]++;
	if (rng_below(m->r, 4) == 0) { /* removed during the walk */
		m->there[rec->key] = false;
		return 1;
	}
	return 0;
}

/* Random puts, finds, removes and walks (with removals in them) against an array. */
static void random_operations_match_the_model(void **state)
{
	static struct model m;
	struct keytable *t = keytable_new(sizeof(struct rec), sizeof(uint32_t));
	struct rng r;

	(void)state;
	assert_non_null(t);
	rng_seed(&r, 11);
	m.r = &r;
	for (int step = 0; step < 200000; step++) {
		uint32_t k = (uint32_t)rng_below(&r, UNIVERSE);
		unsigned op = (unsigned)rng_below(&r, 100);
		struct rec *rec = keytable_find(t, &k);
		assert_true((rec != NULL) == m.there[k]);
		if (op < 50) {
			bool added;
			rec = keytable_put(t, &k, &added);
			assert_non_null(rec);
			assert_true(added == !m.there[k]);
			if (added)
				assert_int_equal(rec->value, 0);
			rec->value = m.value[k] = (uint32_t)step;
			m.there[k] = true;
		} else if (op < 90) {
			if (rec) {
				keytable_remove(t, rec);
				m.there[k] = false;
			}
		} else if (op == 99) {
			memset(m.seen, 0, sizeof(m.seen));
			bool was[UNIVERSE];
			memcpy(was, m.there, sizeof(was));
			assert_int_equal(keytable_each(t, visit, &m), 0);
			for (unsigned i = 0; i < UNIVERSE; i++)
				assert_true(was[i] ? m.seen[i] >= 1 && m.seen[i] <= 2 : m.seen[i] == 0);
		}
		size_t count = 0;
		for (unsigned i = 0; i < UNIVERSE && step % 1000 == 0; i++)
			count += m.there[i];
		if (step % 1000 == 0)
			assert_int_equal(keytable_count(t), count);
	}
	keytable_free(t);
}

/*
 * A walk in steps of a few slots, records removed in it and found values
 * changed between the steps, no record put: every record there when the
 * walk began and not removed by it is seen (at most twice, where the array
 * wraps), and 1 comes back once the last slot is passed.
 */
static void walks_in_steps_see_every_record(void **state)
{
	static struct model m;
	struct keytable *t = keytable_new(sizeof(struct rec), sizeof(uint32_t));
	struct rng r;

	(void)state;
	assert_non_null(t);
	rng_seed(&r, 12);
	m.r = &r;
	for (int round = 0; round < 200; round++) {
		for (int i = 0; i < 300; i++) {
			uint32_t k = (uint32_t)rng_below(&r, UNIVERSE);
			bool added;
			struct rec *rec = keytable_put(t, &k, &added);
			assert_non_null(rec);
			rec->value = m.value[k] = (uint32_t)i;
			m.there[k] = true;
		}
		bool was[UNIVERSE];
		memcpy(was, m.there, sizeof(was));
		memset(m.seen, 0, sizeof(m.seen));
		size_t at = 0, slots = keytable_slots(t);
		int rc;
		while ((rc = keytable_each_at(t, &at, 1 + (size_t)rng_below(&r, 40), visit, &m)) == 0) {
			assert_true(at < slots);
			uint32_t k = (uint32_t)rng_below(&r, UNIVERSE); /* between steps: a value changed */
			struct rec *rec = keytable_find(t, &k);
			if (rec)
				rec->value = m.value[k] = m.value[k] + 1;
		}
		assert_int_equal(rc, 1);
		assert_int_equal(keytable_slots(t), slots);
		for (unsigned i = 0; i < UNIVERSE; i++)
			assert_true(was[i] ? m.seen[i] >= 1 && m.seen[i] <= 2 : m.seen[i] == 0);
	}
	keytable_free(t);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(random_operations_match_the_model),
	cmocka_unit_test(walks_in_steps_see_every_record),
};

TEST_MAIN("keytable", tests)
