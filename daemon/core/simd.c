/* simd.c - which vector instructions this CPU has, and the level the kernels may use. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "simd.h"

#include <stdlib.h>
#include <string.h>

static const char *const NAMES[SIMD_LEVELS] = { "scalar", "neon", "avx2", "avx512" };

bool simd_cpu_has(enum simd_level level)
{
	switch (level) {
	case SIMD_SCALAR:
		return true;
#if defined(__aarch64__)
	case SIMD_NEON:
		return true; /* part of the aarch64 base architecture */
#endif
#if defined(__x86_64__) && defined(__GNUC__)
	case SIMD_AVX2:
		__builtin_cpu_init();
		return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2") &&
		       __builtin_cpu_supports("popcnt");
	case SIMD_AVX512:
		__builtin_cpu_init();
		return simd_cpu_has(SIMD_AVX2) && __builtin_cpu_supports("avx512f") &&
		       __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
		       __builtin_cpu_supports("avx512dq");
#endif
	default:
		return false;
	}
}

bool simd_cpu_has_vbmi(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	return simd_cpu_has(SIMD_AVX512) && __builtin_cpu_supports("avx512vbmi");
#else
	return false;
#endif
}

enum simd_level simd_capped(enum simd_level cap)
{
	for (int level = cap; level > SIMD_SCALAR; level--)
		if (simd_cpu_has((enum simd_level)level))
			return (enum simd_level)level;
	return SIMD_SCALAR;
}

static int simd_parse(const char *name, enum simd_level *level)
{
	if (strcmp(name, "auto") == 0) {
		*level = SIMD_AVX512;
		return 0;
	}
	for (int i = 0; i < SIMD_LEVELS; i++)
		if (strcmp(name, NAMES[i]) == 0) {
			*level = (enum simd_level)i;
			return 0;
		}
	return -1;
}

enum simd_level simd_best(void)
{
	static _Atomic int best = -1; /* the environment is read once (racing readers agree) */

	if (best < 0) {
		const char *want = getenv("BLOOMD_SIMD");
		enum simd_level cap = SIMD_AVX512;
		if (want && *want && simd_parse(want, &cap) < 0)
			cap = SIMD_SCALAR;
		best = (int)simd_capped(cap);
	}
	return (enum simd_level)best;
}

const char *simd_name(enum simd_level level)
{
	return (unsigned)level < SIMD_LEVELS ? NAMES[level] : "unknown";
}
