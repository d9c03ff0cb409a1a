/* simd.h - which vector instructions this CPU has, and the level the kernels may use. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_SIMD_H
#define BLOOMD_SIMD_H

#include <stdbool.h>

/*
 * The build uses baseline flags only; each kernel that needs more is
 * compiled for its level with a target attribute and chosen at run time.
 * Levels are ordered: a cap lets every level up to it.
 *
 *   scalar  portable C, every CPU
 *   neon    aarch64 Advanced SIMD (every aarch64 CPU)
 *   avx2    x86-64 AVX2 (Haswell, Zen 1 and later)
 *   avx512  x86-64 AVX-512 F/BW/VL/DQ (kernels that need VBMI check it too)
 */
enum simd_level {
	SIMD_SCALAR = 0,
	SIMD_NEON = 1,
	SIMD_AVX2 = 2,
	SIMD_AVX512 = 3,
};

#define SIMD_LEVELS 4

/* Whether this CPU (and its OS) runs the level. */
bool simd_cpu_has(enum simd_level level);

/* x86-64 AVX-512 VBMI (the signature scan's byte permute). */
bool simd_cpu_has_vbmi(void);

/*
 * The best level this CPU has, at most the one the environment variable
 * BLOOMD_SIMD names (scalar, neon, avx2, avx512 or auto; read once). An
 * unknown name counts as scalar, the safe side.
 */
enum simd_level simd_best(void);

/* The best level at most cap that this CPU has. */
enum simd_level simd_capped(enum simd_level cap);

const char *simd_name(enum simd_level level);

#endif
