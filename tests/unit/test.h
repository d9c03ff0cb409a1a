/* test.h - cmocka with TAP output, so prove runs every suite the same way. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_TEST_H
#define BLOOMD_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "simd.h"

/*
 * A test run once per SIMD level, each its own TAP line: the level is the
 * test's state, and a level this CPU (or build) lacks is reported as a skip
 * naming it, never as a pass.
 */
__attribute__((unused)) static enum simd_level TEST_LEVELS[SIMD_LEVELS] = { SIMD_SCALAR, SIMD_NEON, SIMD_AVX2, SIMD_AVX512 };
#define SIMD_UNIT_TESTS(f)                                                               \
	{ #f " [scalar]", f, NULL, NULL, &TEST_LEVELS[SIMD_SCALAR] },                   \
	{ #f " [neon]", f, NULL, NULL, &TEST_LEVELS[SIMD_NEON] },                       \
	{ #f " [avx2]", f, NULL, NULL, &TEST_LEVELS[SIMD_AVX2] },                       \
	{ #f " [avx512]", f, NULL, NULL, &TEST_LEVELS[SIMD_AVX512] }

/* The level of a SIMD_UNIT_TESTS test; skips it where the CPU lacks the level. */
static inline enum simd_level test_simd_level(void **state)
{
	enum simd_level level = *(enum simd_level *)*state;

	if (!simd_cpu_has(level)) {
		print_message("# this CPU has no %s\n", simd_name(level));
		skip();
	}
	return level;
}

#define TEST_MAIN(name, tests)                                                   \
	int main(void)                                                           \
	{                                                                        \
		cmocka_set_message_output(CM_OUTPUT_TAP);                        \
		return cmocka_run_group_tests_name(name, tests, NULL, NULL);     \
	}

#endif
