/* Unit and property tests for state_ttl.c against a plain model. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdio.h>
#include <string.h>

#include "rng.h"
#include "state_ttl.h"
#include "test.h"

#define UNIVERSE 300

static void entry_of(unsigned i, struct entry *e)
{
	e->kind = (enum entry_kind)(1 + i % 4);
	e->len = (uint16_t)snprintf((char *)e->key, sizeof(e->key), "key-%u", i / 4);
}

struct due {
	uint64_t horizon, count, sum;
};

static void count_due(void *ctx, unsigned kind, const uint8_t *key, size_t len, uint64_t expiry)
{
	struct due *d = ctx;

	assert_true(expiry <= d->horizon);
	d->count++;
	d->sum += state_ttl_item_digest(kind, key, len, expiry);
}

/* state_ttl_sum is the model's sum, and state_ttl_due visits exactly the entries ending by horizon. */
static void sums_match_the_model(const struct state_ttl *t, const uint64_t *model, uint64_t horizon)
{
	uint64_t sum = 0, due_sum = 0, due_count = 0;
	struct entry e;
	struct due d = { .horizon = horizon };

	for (unsigned j = 0; j < UNIVERSE; j++) {
		if (model[j] == 0)
			continue;
		entry_of(j, &e);
		uint64_t one = state_ttl_item_digest(e.kind, e.key, e.len, model[j]);
		sum += one;
		if (model[j] <= horizon) {
			due_sum += one;
			due_count++;
		}
	}
	assert_true(state_ttl_sum(t) == sum);
	state_ttl_due(t, horizon, count_due, &d);
	assert_int_equal(d.count, due_count);
	assert_true(d.sum == due_sum);
}

/* Random sets, clears and pops against an array of expiry times (and their digests' sums). */
static void random_operations_match_the_model(void **state)
{
	static uint64_t model[UNIVERSE];
	struct state_ttl *t = state_ttl_new();
	struct entry e;
	struct rng r;
	uint64_t now = 1000;

	(void)state;
	rng_seed(&r, 9);
	for (int step = 0; step < 20000; step++) {
		unsigned i = (unsigned)rng_below(&r, UNIVERSE), op = (unsigned)rng_below(&r, 10);
		entry_of(i, &e);
		if (op < 5) {
			uint64_t when = op == 0 ? 0 : now + rng_below(&r, 50);
			assert_int_equal(state_ttl_set(t, &e, when), 0);
			model[i] = when;
		} else if (op < 8) {
			assert_int_equal(state_ttl_get(t, &e), model[i]);
		} else {
			now += rng_below(&r, 5);
			uint64_t last = 0;
			while (state_ttl_pop_expired(t, now, &e) == 1) {
				unsigned found = UNIVERSE;
				for (unsigned j = 0; j < UNIVERSE; j++) {
					struct entry f;
					entry_of(j, &f);
					if (f.kind == e.kind && f.len == e.len && memcmp(f.key, e.key, e.len) == 0)
						found = j;
				}
				assert_true(found < UNIVERSE);
				assert_true(model[found] != 0 && model[found] <= now);
				assert_true(model[found] >= last); /* soonest first */
				last = model[found];
				model[found] = 0;
			}
			size_t count = 0;
			for (unsigned j = 0; j < UNIVERSE; j++) {
				assert_false(model[j] != 0 && model[j] <= now); /* none left behind */
				count += model[j] != 0;
			}
			assert_int_equal(state_ttl_count(t), count);
		}
		if (step % 97 == 0)
			sums_match_the_model(t, model, now + rng_below(&r, 60));
	}
	state_ttl_free(t);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(random_operations_match_the_model),
};

TEST_MAIN("state_ttl", tests)
