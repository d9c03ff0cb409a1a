/* The matcher's const readers from several threads at once (make check-tsan runs this under ThreadSanitizer). */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <pthread.h>
#include <string.h>

#include "entry.h"
#include "matcher.h"
#include "test.h"

/* Two threads asking which entries cover their own address, at once, each seeing only its own. */
struct covering_reader {
	const struct matcher *m;
	uint8_t addr[4];
	unsigned wrong, seen;
};

static int check_covering(void *ctx, const struct entry *e, unsigned group, uint32_t holders)
{
	struct covering_reader *r = ctx;
	const uint8_t *net = e->kind == ENTRY_NET ? e->key + 1 : e->key;

	(void)group;
	(void)holders;
	r->seen++;
	r->wrong += net[0] != r->addr[0]; /* another thread's entry: a buffer shared between them */
	return 0;
}

static void *read_covering(void *arg)
{
	struct covering_reader *r = arg;

	for (int i = 0; i < 20000; i++)
		matcher_covering(r->m, r->addr, 4, check_covering, r);
	return NULL;
}

static void covering_from_two_threads(void **state)
{
	struct matcher_config cfg = { .layout = FILTER_BLOCKED, .choices = 2, .bits_per_entry = 16, .window = 4 };
	struct matcher *m = matcher_new(&cfg, NULL, 0);
	struct covering_reader r[2] = { { m, { 10, 1, 2, 3 }, 0, 0 }, { m, { 192, 168, 1, 1 }, 0, 0 } };
	pthread_t t[2];
	struct entry e;

	(void)state;
	for (int k = 0; k < 2; k++) {
		assert_int_equal(entry_parse(k ? "net 192.168.0.0/16" : "net 10.0.0.0/8", &e, NULL, 0), 1);
		assert_true(matcher_add(m, &e, NULL, 0) >= 0);
		assert_int_equal(entry_parse(k ? "addr 192.168.1.1" : "addr 10.1.2.3", &e, NULL, 0), 1);
		assert_true(matcher_add(m, &e, NULL, 0) >= 0);
	}
	assert_int_equal(matcher_build(m, NULL, 0), 0);
	for (int k = 0; k < 2; k++)
		assert_int_equal(pthread_create(&t[k], NULL, read_covering, &r[k]), 0);
	for (int k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
	for (int k = 0; k < 2; k++) {
		assert_int_equal(r[k].seen, 2 * 20000);
		assert_int_equal(r[k].wrong, 0);
	}
	matcher_free(m);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(covering_from_two_threads),
};

TEST_MAIN("matcher_threads", tests)
