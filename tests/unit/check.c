/* Unit tests for check.c: the loop's thread once marked is the only one BLOOMD_ON_LOOP lets by. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <pthread.h>
#include <stdbool.h>

#include "check.h"
#include "test.h"

static void *asked_elsewhere(void *arg)
{
	*(bool *)arg = check_on_loop_thread();
	return NULL;
}

static bool on_loop_in_another_thread(void)
{
	pthread_t t;
	bool on_loop = true;

	assert_int_equal(pthread_create(&t, NULL, asked_elsewhere, &on_loop), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	return on_loop;
}

static void the_marked_thread_alone_is_the_loop(void **state)
{
	(void)state;
	/* Unmarked (the tools, these tests): every thread counts as the loop. */
	assert_true(check_on_loop_thread());
	assert_true(on_loop_in_another_thread());
	check_mark_loop_thread();
	assert_true(check_on_loop_thread());
	assert_false(on_loop_in_another_thread());
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(the_marked_thread_alone_is_the_loop),
};

TEST_MAIN("check", tests)
