/* filter.h - the query-side bit filter: two layouts, c choices, union and fold. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_FILTER_H
#define BLOOMD_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hash.h"
#include "simd.h"

struct blockquery;

/*
 * A key has c groups ("choices") of k probe positions; the filter answers
 * yes when every bit of at least one group is set (Lumetta & Mitzenmacher).
 * Which group covers a key is decided by the counting store (counting.h);
 * this module only sets, tests and measures bits.
 *
 *   classic   m bits anywhere; group g probes g_i = x + i*y + (i^3-i)/6 mod M
 *             (enhanced double hashing, Kirsch & Mitzenmacher), x and y
 *             taken from the key's hash.
 *
 *   blocked   m/512 blocks of one 64-byte cache line each; group g is one
 *             block, and its k bits lie inside it:
 *
 *               hash ──► block index (multiply-shift) ──► [ 512-bit block ]
 *                    └─► k positions: top 9 bits of y * SALT[i]
 *
 *             A query reads at most c cache lines and tests each with one
 *             mask compare.
 *
 * Folding halves the filter by OR-ing its halves; probes are still computed
 * over the original size M = bits << folds and then reduced modulo bits.
 */

enum filter_layout {
	FILTER_CLASSIC = 0,
	FILTER_BLOCKED = 1,
};

#define FILTER_BLOCK_BITS 512
#define FILTER_BLOCK_WORDS 8
#define FILTER_MIN_BITS 64
#define FILTER_MAX_BITS (1ULL << 40)
#define FILTER_MAX_CHOICES 3
#define FILTER_MAX_HASHES 32

struct filter_params {
	enum filter_layout layout;
	uint64_t bits;     /* m; a multiple of 512 for blocked */
	unsigned choices;  /* c, 1..3 */
	unsigned hashes;   /* k, 1..32 */
	unsigned folds;    /* times halved since built */
};

struct filter {
	struct filter_params params;
	struct hash_key key;
	uint64_t nwords;
	uint64_t *words;   /* 64-byte aligned, nwords long */
	const struct blockquery *kernel; /* blocked queries: the kernel of simd_best() */
};

/* Writes a message naming the bad parameter into err; returns 0 or -1. */
int filter_params_check(const struct filter_params *p, char *err, size_t errlen);

const char *filter_layout_name(enum filter_layout layout);
int filter_layout_parse(const char *name, enum filter_layout *layout);

/* An empty filter; NULL on bad parameters (message in err) or no memory. */
struct filter *filter_new(const struct filter_params *p, const struct hash_key *key,
			  char *err, size_t errlen);
struct filter *filter_clone(const struct filter *f);
void filter_free(struct filter *f);

bool filter_query(const struct filter *f, struct hash128 h);
bool filter_query_bytes(const struct filter *f, const void *data, size_t len);

/*
 * out[i] = filter_query(f, h[i]) for i < n, with the cache lines of keys
 * further on fetched while a key is tested (a few keys are queried one by
 * one, which the CPU overlaps), so their memory latencies overlap: the form
 * the per-packet path uses for its several probes.
 */
void filter_query_batch(const struct filter *f, const struct hash128 *h, size_t n, bool *out);

/*
 * The SIMD level of f's blocked queries, and a change of it (tests and
 * benchmarks compare the kernels): -1 where the CPU or this build lacks it.
 * Every level tests the same bits, so the answers never differ.
 */
enum simd_level filter_simd(const struct filter *f);
int filter_set_simd(struct filter *f, enum simd_level level);

/* Set the bits of group g of h; true if every one of them was set already. */
bool filter_add_group(struct filter *f, struct hash128 h, unsigned g);
bool filter_group_covers(const struct filter *f, struct hash128 h, unsigned g);

/*
 * Global bit positions (in the unfolded filter) of group g of h, k of them,
 * possibly with repeats; the counting store indexes its counters with them.
 */
void filter_group_positions(const struct filter_params *p, struct hash128 h, unsigned g,
			    uint64_t pos[FILTER_MAX_HASHES]);

/* Blocked layout: the block group g of h falls in (unfolded). */
uint64_t filter_group_block(const struct filter_params *p, struct hash128 h, unsigned g);

/* dst |= src; both must have equal parameters and secret (else -1, message in err). */
int filter_union(struct filter *dst, const struct filter *src, char *err, size_t errlen);

/* Halve f in place by OR-ing its halves; -1 (message in err) if it cannot be halved. */
int filter_fold(struct filter *f, char *err, size_t errlen);

bool filter_equal(const struct filter *a, const struct filter *b);
uint64_t filter_ones(const struct filter *f);
/* The fraction of bits set: exact up to 1 MiB, else from a 1 MiB sample spread over the filter. */
double filter_fill(const struct filter *f);
size_t filter_bytes(const struct filter *f);

/*
 * Predicted false-positive rate from the bits set: 1 - (1 - q)^c, where q is
 * p^k for classic (p = fill) and, for blocked, the mean over blocks of the
 * chance that k random in-block probes all hit set bits (over 1 MiB, over
 * the blocks of a sample spread evenly, as for filter_fill).
 */
double filter_fpr_from_fill(const struct filter *f);

/*
 * table[o], o = 0..512: the chance that the k probes of a random key all land
 * on set bits of a block holding o ones (repeated positions accounted for).
 */
void filter_block_hit_table(unsigned k, double table[FILTER_BLOCK_BITS + 1]);

#endif
