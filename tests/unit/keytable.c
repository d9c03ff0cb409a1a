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

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(random_operations_match_the_model),
};

TEST_MAIN("keytable", tests)
