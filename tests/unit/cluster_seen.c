/* Unit tests for cluster_seen.c: re-sends known by identity, kept as text, what a snapshot covers, bounded. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_seen.h"
#include "test.h"

static struct change_id id_of(const char *node, uint64_t incarnation, uint64_t seq)
{
	struct change_id id = { .incarnation = incarnation, .seq = seq };

	snprintf(id.node, sizeof(id.node), "%s", node);
	return id;
}

static void resends_are_known(void **state)
{
	struct cluster_seen *s = seen_new();
	struct change_id a1 = id_of("a", 7, 1), a2 = id_of("a", 7, 2), a3 = id_of("a", 7, 3);

	(void)state;
	assert_false(seen_already(s, &a1));
	assert_int_equal(seen_record(s, &a1), 0);
	assert_int_equal(seen_record(s, &a2), 0);
	assert_true(seen_already(s, &a1)); /* a re-send of either */
	assert_true(seen_already(s, &a2));
	assert_false(seen_already(s, &a3));
	/* Another incarnation of the same node, and another node, start afresh. */
	struct change_id b1 = id_of("a", 8, 1), c1 = id_of("c", 7, 1);
	assert_false(seen_already(s, &b1));
	assert_false(seen_already(s, &c1));
	seen_clear(s);
	assert_false(seen_already(s, &a1));
	seen_free(s);
}

static void identities_as_text(void **state)
{
	char text[48];
	uint64_t incarnation, seq;

	(void)state;
	seen_format_id(0xfedcba9876543210u, 42, text, sizeof(text));
	assert_string_equal(text, "fedcba9876543210-42");
	assert_int_equal(seen_parse_id(text, &incarnation, &seq), 0);
	assert_true(incarnation == 0xfedcba9876543210u && seq == 42);
	assert_int_equal(seen_parse_id("fedcba9876543210-0", &incarnation, &seq), -1); /* sequences start at 1 */
	assert_int_equal(seen_parse_id("fedcba987654321-1", &incarnation, &seq), -1);
	assert_int_equal(seen_parse_id("fedcba9876543210-1x", &incarnation, &seq), -1);
	assert_int_equal(seen_parse_id("FEDCBA9876543210-1", &incarnation, &seq), -1);
	assert_int_equal(seen_parse_id("", &incarnation, &seq), -1);
}

static void kept_as_lines(void **state)
{
	struct cluster_seen *s = seen_new(), *t = seen_new();
	struct change_id a = id_of("node-a", 1, 5), b = id_of("node-b", 2, 9);
	size_t len;

	(void)state;
	seen_record(s, &a);
	seen_record(s, &b);
	char *text = seen_text(s, &len);
	assert_non_null(text);
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		assert_int_equal(seen_take_line(t, line), 0);
	assert_true(seen_already(t, &a));
	assert_true(seen_already(t, &b));
	struct change_id later = id_of("node-b", 2, 10);
	assert_false(seen_already(t, &later));
	assert_int_equal(seen_take_line(t, "seen node-c not-an-id"), -1);
	assert_int_equal(seen_take_line(t, "unseen node-c 0000000000000001-1"), -1);
	free(text);
	seen_free(s);
	seen_free(t);
}

/* At SEEN_MAX incarnations, the one longest unheard of makes room. */
/* A snapshot's changes cover a node's only if it has each (node, incarnation) as far. */
static void covers_what_was_applied(void **state)
{
	struct cluster_seen *node = seen_new(), *snap = seen_new();
	struct change_id a5 = id_of("a", 7, 5), a9 = id_of("a", 7, 9), b2 = id_of("b", 3, 2), lacking;

	(void)state;
	assert_true(seen_covers(snap, node, NULL)); /* a node that applied nothing takes any */
	assert_int_equal(seen_record(node, &a5), 0);
	assert_false(seen_covers(snap, node, &lacking));
	assert_string_equal(lacking.node, "a");
	assert_int_equal(seen_take_text(snap, "seen a 0000000000000007-9\nnot a line\nseen b 0000000000000003-2\n"), 0);
	assert_true(seen_covers(snap, node, NULL)); /* further on: newer */
	assert_int_equal(seen_record(node, &a9), 0);
	assert_int_equal(seen_record(node, &b2), 0);
	assert_true(seen_covers(snap, node, NULL)); /* exactly as far */
	struct change_id a10 = id_of("a", 7, 10);
	assert_int_equal(seen_record(node, &a10), 0);
	assert_false(seen_covers(snap, node, &lacking)); /* one change short: older */
	assert_true(lacking.seq == 10 && lacking.incarnation == 7);
	seen_free(node);
	seen_free(snap);
}

static void bounded(void **state)
{
	struct cluster_seen *s = seen_new();
	struct change_id first = id_of("n", 0, 1);

	(void)state;
	for (uint64_t i = 0; i < SEEN_MAX; i++) {
		struct change_id id = id_of("n", i, 1);
		assert_int_equal(seen_record(s, &id), 0);
	}
	struct change_id again = id_of("n", 0, 2); /* incarnation 0 heard of again: 1 is now the oldest */
	seen_record(s, &again);
	struct change_id one_more = id_of("n", SEEN_MAX, 1);
	seen_record(s, &one_more);
	assert_true(seen_already(s, &first));
	struct change_id second = id_of("n", 1, 1);
	assert_false(seen_already(s, &second));
	assert_true(seen_already(s, &one_more));
	seen_free(s);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(resends_are_known),
	cmocka_unit_test(identities_as_text),
	cmocka_unit_test(kept_as_lines),
	cmocka_unit_test(covers_what_was_applied),
	cmocka_unit_test(bounded),
};

int main(void)
{
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("cluster_seen", tests, NULL, NULL);
}
