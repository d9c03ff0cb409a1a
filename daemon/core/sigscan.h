/* sigscan.h - signature windows: their keyed hash, and the one-word prefilter scanned per byte. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_SIGSCAN_H
#define BLOOMD_SIGSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hash.h"
#include "simd.h"

/*
 * A signature is found by W of its bytes, its window (matcher_windows.c says
 * which). Every payload
 * position starts a window, so the per-position cost is what matters:
 *
 *   word  the W bytes folded into 64 bits: for W <= 8 they are the word
 *         (one unaligned load), longer windows add their 8-byte pieces
 *         multiplied by odd constants. No rolling state, so positions are
 *         independent and can be done eight at a time.
 *   level 1  a Bloom filter of one 32-bit word per key: the word becomes a
 *         keyed 32-bit value (its low half, salted, times an odd constant,
 *         xored with its high half); one multiply of the value picks the
 *         word by its top bits, another the 4 bits in it. One load and one
 *         compare a position; as every step is on 32 bits, a vector takes
 *         16 positions a pass with AVX-512 (VBMI: two byte permutes build
 *         the halves, three multiplies, one gather), 8 with AVX2 (byte
 *         shuffles, the same multiplies, eight scalar loads or a gather,
 *         whichever this CPU runs faster).
 *   level 2  the positions that pass are checked against the signature
 *         filter (the two-choice filter) under an independent keyed hash,
 *         sigscan_hash, which the window store also uses.
 *
 * Level 1 only ever gains bits (adds set them, deletes leave them): it can
 * pass too much, never too little.
 */

struct sigscan;

/* A scanner for windows of W (1..64) bytes, keyed from key's secret. */
struct sigscan *sigscan_new(unsigned window, const struct hash_key *key, char *err, size_t errlen);
void sigscan_free(struct sigscan *s);
/* A copy of s; NULL without memory. */
struct sigscan *sigscan_clone(const struct sigscan *s);

/* The W bytes at p folded into one word. */
uint64_t sigscan_word(const struct sigscan *s, const uint8_t *p);

/* The window's 128-bit hash, independent of level 1's. */
struct hash128 sigscan_hash(const struct sigscan *s, uint64_t word);

/*
 * Size level 1 for this many windows (16 to 32 bits each, at most 1 MiB, so it
 * stays about L2-sized) and clear it; -1 without memory.
 */
int sigscan_reserve(struct sigscan *s, uint64_t windows);

/* Put a window into level 1 (after sigscan_reserve). */
void sigscan_add(struct sigscan *s, uint64_t word);

/* Whether a window passes level 1: what every scan kernel computes for each position. */
bool sigscan_passes(const struct sigscan *s, uint64_t word);

/*
 * The positions in [from, positions) of payload p whose windows pass level 1,
 * written to out (at most max, ascending); returns their number and sets
 * *next to the first position not yet scanned. positions is len - W + 1.
 */
size_t sigscan_candidates(const struct sigscan *s, const uint8_t *p, size_t positions,
			  size_t from, uint32_t *out, size_t max, size_t *next);

size_t sigscan_bytes(const struct sigscan *s);

/*
 * The scan kernel: the best of scalar, avx2 and avx512 (which needs VBMI)
 * up to cap that the CPU has; windows over 8 bytes always scan one position
 * at a time. sigscan_new takes simd_best(); tests and benchmarks set others.
 */
void sigscan_set_simd(struct sigscan *s, enum simd_level cap);
enum simd_level sigscan_simd(const struct sigscan *s);

/*
 * The AVX2 kernel reads level 1's eight words a pass by a gather or by
 * eight loads, whichever this CPU runs faster (timed once a process, at
 * the first sigscan_set_simd to AVX2); whether s gathers, and (tests and
 * benchmarks) either way forced, for the AVX2 kernel only.
 */
bool sigscan_gathers(const struct sigscan *s);
void sigscan_set_gather(struct sigscan *s, bool gather);

#endif
