/* sizing.h - formulas, the fill predictor, and the best k for a filter's shape. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_SIZING_H
#define BLOOMD_SIZING_H

#include <stddef.h>
#include <stdint.h>

#include "filter.h"

/* Standard Bloom filter FPR (1 - e^(-k/b))^k at b bits per entry. */
double sizing_fpr_standard(double bits_per_entry, unsigned k);

/* k = round(ln 2 * b), within 1..FILTER_MAX_HASHES. */
unsigned sizing_k_opt(double bits_per_entry);

/* Textbook size for n entries at FPR p: m = n ln p / ln 0.6185, rounded up. */
uint64_t sizing_bits_for_fpr(uint64_t n, double p);

/* 1 - (1 - fill^k)^c: the FPR of a classic filter with that fraction of ones. */
double sizing_fpr_from_fill(double fill, unsigned c, unsigned k);

/*
 * Fraction of ones after online greedy insertion into a classic filter,
 * from Lumetta & Mitzenmacher's equation (3.2):
 *   dz/dt = E[min(B_1(k, 1-z), ..., B_c(k, 1-z))] / (m/n),  z(0) = 0, t = 0..1
 * solved with RK4.
 */
double sizing_fill_online(double bits_per_entry, unsigned c, unsigned k);

/* Rounds an offline rebuild runs by default: 1 for c = 1, else enough to settle. */
unsigned sizing_default_rounds(unsigned c);

struct sizing_choice {
	unsigned hashes;
	double fpr;        /* predicted */
};

/*
 * The best k and its predicted FPR for a filter of bits_per_entry with c
 * choices, built with rounds (1 = online only). Classic c = 1 and classic
 * online use the formulas above; offline and blocked filters have no closed
 * form, so they use a table measured with bloomsim (interpolated in b).
 */
int sizing_best(enum filter_layout layout, unsigned c, double bits_per_entry, unsigned rounds,
		struct sizing_choice *out, char *err, size_t errlen);

/* bits rounded up to what the layout needs (a whole number of blocks). */
uint64_t sizing_round_bits(enum filter_layout layout, uint64_t bits);

/* Parse "4MiB", "512KiB", "2G", "1048576" into bytes; -1 if malformed or zero. */
int sizing_parse_size(const char *text, uint64_t *bytes);

#endif
