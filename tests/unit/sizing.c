/* Unit tests for sizing.c: formulas, the ODE against the paper's Table 2, parsing. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <math.h>
#include <string.h>

#include "sizing.h"
#include "test.h"

static void standard_formulas(void **state)
{
	(void)state;
	assert_true(fabs(sizing_fpr_standard(16, 11) - 4.59e-4) < 0.02 * 4.59e-4);
	assert_true(fabs(sizing_fpr_standard(8, 6) - 2.16e-2) < 0.02 * 2.16e-2);
	assert_int_equal(sizing_k_opt(16), 11);
	assert_int_equal(sizing_k_opt(8), 6);
	assert_int_equal(sizing_k_opt(0.5), 1);
	assert_int_equal(sizing_k_opt(100), FILTER_MAX_HASHES);
	uint64_t m = sizing_bits_for_fpr(1000000, 0.01);
	assert_true(m > 9580000 && m < 9590000);
}

/* Lumetta & Mitzenmacher, Table 2: the ODE's fill to four decimals. */
static void ode_reproduces_table_2(void **state)
{
	static const struct { double b; unsigned c, k; double fill; } rows[] = {
		{ 8, 2, 7, 0.5296 },   { 8, 3, 7, 0.5019 },   { 16, 2, 13, 0.5187 },
		{ 16, 3, 13, 0.4994 }, { 32, 2, 24, 0.5016 }, { 32, 3, 25, 0.5022 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		double z = sizing_fill_online(rows[i].b, rows[i].c, rows[i].k);
		assert_true(fabs(z - rows[i].fill) < 0.00015);
	}
}

/* With one choice the ODE has the closed form 1 - e^(-k/b). */
static void ode_one_choice_is_closed_form(void **state)
{
	(void)state;
	for (unsigned k = 1; k <= 20; k++)
		assert_true(fabs(sizing_fill_online(12, 1, k) - (1 - exp(-(double)k / 12))) < 1e-6);
}

/* A tiny FPR must not round to 0: 1 - (1 - q)^c loses q below about 1e-16. */
static void tiny_fpr_keeps_its_value(void **state)
{
	double fpr = sizing_fpr_from_fill(0.2, 2, 32); /* q = 0.2^32 = 4.3e-23 */

	(void)state;
	assert_true(fpr > 0);
	assert_true(fabs(fpr - 2 * pow(0.2, 32)) < 1e-6 * fpr);
}

static void best_k(void **state)
{
	struct sizing_choice ch;
	char err[128] = "";

	(void)state;
	assert_int_equal(sizing_best(FILTER_CLASSIC, 1, 16, 1, &ch, err, sizeof(err)), 0);
	assert_int_equal(ch.hashes, 11);
	assert_int_equal(sizing_best(FILTER_CLASSIC, 2, 16, 1, &ch, err, sizeof(err)), 0);
	assert_true(ch.hashes >= 12 && ch.hashes <= 14);
	assert_true(fabs(ch.fpr - 3.935e-4) < 0.1 * 3.935e-4);
	/* Measured series: offline c=2 near the paper's 2.2e-4, blocked c=2 below standard. */
	assert_int_equal(sizing_best(FILTER_CLASSIC, 2, 16, 10, &ch, err, sizeof(err)), 0);
	assert_true(ch.fpr > 1.8e-4 && ch.fpr < 2.7e-4);
	assert_int_equal(sizing_best(FILTER_BLOCKED, 2, 16, 10, &ch, err, sizeof(err)), 0);
	assert_true(ch.fpr < 0.75 * sizing_fpr_standard(16, 11));
	assert_int_equal(sizing_best(FILTER_BLOCKED, 1, 13, 1, &ch, err, sizeof(err)), 0);
	assert_true(ch.hashes >= 6 && ch.hashes <= 11);
	assert_int_equal(sizing_best(FILTER_BLOCKED, 2, 0.5, 1, &ch, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "bits per entry"));
	assert_int_equal(sizing_best(FILTER_BLOCKED, 4, 16, 1, &ch, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "choices"));
}

static void sizes_parse(void **state)
{
	static const struct { const char *text; uint64_t bytes; } good[] = {
		{ "4MiB", 4 << 20 }, { "512K", 512 << 10 }, { "1G", 1ULL << 30 },
		{ "10", 10 },	     { "3MB", 3000000 },    { "64B", 64 },
	};
	static const char *bad[] = { "", "x", "4XB", "0", "-1", "4 MiB", "99999999999999999999G",
				     "17179869184G" };
	uint64_t v;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(sizing_parse_size(good[i].text, &v), 0);
		assert_int_equal(v, good[i].bytes);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(sizing_parse_size(bad[i], &v), -1);
}

static void bits_round_to_layout(void **state)
{
	(void)state;
	assert_int_equal(sizing_round_bits(FILTER_BLOCKED, 1), 512);
	assert_int_equal(sizing_round_bits(FILTER_BLOCKED, 513), 1024);
	assert_int_equal(sizing_round_bits(FILTER_CLASSIC, 1001), 1001);
	assert_int_equal(sizing_round_bits(FILTER_CLASSIC, 3), FILTER_MIN_BITS);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(standard_formulas),	 cmocka_unit_test(ode_reproduces_table_2),
	cmocka_unit_test(ode_one_choice_is_closed_form), cmocka_unit_test(tiny_fpr_keeps_its_value),
	cmocka_unit_test(best_k),
	cmocka_unit_test(sizes_parse),		 cmocka_unit_test(bits_round_to_layout),
};

TEST_MAIN("sizing", tests)
