/* Unit tests for labels.c: an entry's own labels, per list, moved and dropped with list versions. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdio.h>
#include <string.h>

#include "labels.h"
#include "test.h"

static struct entry entry_of(const char *text)
{
	struct entry e;

	assert_int_equal(entry_parse(text, &e, NULL, 0), 1);
	return e;
}

static void set_get_move(void **state)
{
	struct labels *t = labels_new();
	struct entry a = entry_of("addr 192.0.2.1"), b = entry_of("sig \"attack\""), c = entry_of("net 192.0.2.0/24");
	struct entry_labels scanner = { "scanner", 1 }, only_severity = { "", 3 }, got;

	(void)state;
	assert_false(labels_get(t, a.kind, a.key, a.len, 1, &got));
	assert_int_equal(labels_set(t, &a, 1, &scanner), 0);
	assert_int_equal(labels_set(t, &b, 1, &only_severity), 0);
	assert_true(labels_get(t, a.kind, a.key, a.len, 1, &got));
	assert_string_equal(got.category, "scanner");
	assert_int_equal(got.severity, 1);
	assert_false(labels_get(t, a.kind, a.key, a.len, 2, &got)); /* another list's hold has none */
	assert_false(labels_get(t, c.kind, c.key, c.len, 1, &got));
	/* list 1's next version, staged under 31: only c, labelled */
	assert_int_equal(labels_set(t, &c, 31, &scanner), 0);
	labels_move(t, 31, 1);
	assert_false(labels_get(t, a.kind, a.key, a.len, 1, &got));
	assert_true(labels_get(t, c.kind, c.key, c.len, 1, &got));
	assert_int_equal(labels_count(t), 1);
	/* thousands, grown and found again; then dropped with their list */
	for (int i = 0; i < 5000; i++) {
		char text[64];
		snprintf(text, sizeof(text), "addr 10.0.%d.%d", i / 256, i % 256);
		struct entry e = entry_of(text);
		struct entry_labels l = { "", (unsigned)(1 + i % 200) };
		assert_int_equal(labels_set(t, &e, 2, &l), 0);
	}
	struct entry e = entry_of("addr 10.0.19.135"); /* the last: 19 * 256 + 135 = 4999 */
	assert_true(labels_get(t, e.kind, e.key, e.len, 2, &got));
	assert_int_equal(got.severity, 1 + 4999 % 200);
	labels_move(t, -1, 2);
	assert_int_equal(labels_count(t), 1);
	assert_false(labels_get(t, e.kind, e.key, e.len, 2, &got));
	labels_free(t);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(set_get_move),
};

TEST_MAIN("labels", tests)
