/* sizing.c - formulas, the fill predictor, and the best k for a filter's shape. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "sizing.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

/* Measured series: see sizing_table.h (regenerate with tools/sizing-table.sh). */
struct sizing_point {
	double bits_per_entry;
	unsigned hashes;
	double fpr;
};

struct sizing_series {
	enum filter_layout layout;
	unsigned choices;
	unsigned offline; /* 0: online only; 1: rebuilt with sizing_default_rounds() */
	const struct sizing_point *points;
	size_t npoints;
};

#include "sizing_table.h"

double sizing_fpr_standard(double bits_per_entry, unsigned k)
{
	return pow(1.0 - exp(-(double)k / bits_per_entry), k);
}

unsigned sizing_k_opt(double bits_per_entry)
{
	double k = round(log(2.0) * bits_per_entry);

	if (k < 1)
		return 1;
	return k > FILTER_MAX_HASHES ? FILTER_MAX_HASHES : (unsigned)k;
}

uint64_t sizing_bits_for_fpr(uint64_t n, double p)
{
	return (uint64_t)ceil((double)n * log(p) / log(0.6185));
}

double sizing_fpr_from_fill(double fill, unsigned c, unsigned k)
{
	/* 1 - (1 - q)^c, without the cancellation that rounds a tiny q to 0. */
	return -expm1(c * log1p(-pow(fill, k)));
}

/* E[min of c independent Binomial(k, q)] = sum_{j>=1} P(B >= j)^c. */
static double expected_min_binomial(unsigned k, double q, unsigned c)
{
	double pmf[FILTER_MAX_HASHES + 1], tail = 0.0, sum = 0.0;

	for (unsigned j = 0; j <= k; j++) {
		double coef = 1.0;
		for (unsigned i = 0; i < j; i++)
			coef = coef * (k - i) / (i + 1);
		pmf[j] = coef * pow(q, j) * pow(1.0 - q, k - j);
	}
	for (unsigned j = k; j >= 1; j--) {
		tail += pmf[j]; /* P(B >= j) */
		sum += pow(tail, c);
	}
	return sum;
}

double sizing_fill_online(double bits_per_entry, unsigned c, unsigned k)
{
	const unsigned steps = 2000;
	const double h = 1.0 / steps;
	double z = 0.0;

	for (unsigned s = 0; s < steps; s++) {
		double k1 = expected_min_binomial(k, 1.0 - z, c) / bits_per_entry;
		double k2 = expected_min_binomial(k, 1.0 - (z + h * k1 / 2), c) / bits_per_entry;
		double k3 = expected_min_binomial(k, 1.0 - (z + h * k2 / 2), c) / bits_per_entry;
		double k4 = expected_min_binomial(k, 1.0 - (z + h * k3), c) / bits_per_entry;
		z += h * (k1 + 2 * k2 + 2 * k3 + k4) / 6;
	}
	return z;
}

unsigned sizing_default_rounds(unsigned c)
{
	return c <= 1 ? 1 : c == 2 ? 10 : 30;
}

static const struct sizing_series *find_series(enum filter_layout layout, unsigned c,
					       unsigned offline)
{
	for (size_t i = 0; i < sizeof(SIZING_SERIES) / sizeof(SIZING_SERIES[0]); i++) {
		const struct sizing_series *s = &SIZING_SERIES[i];
		if (s->layout == layout && s->choices == c && s->offline == offline)
			return s;
	}
	return NULL;
}

/* Linear in b for k, log-linear for the FPR; extrapolated past either end. */
static void interpolate(const struct sizing_series *s, double b, struct sizing_choice *out)
{
	const struct sizing_point *p = s->points;
	size_t i = 1;

	while (i + 1 < s->npoints && p[i].bits_per_entry < b)
		i++;
	const struct sizing_point *lo = &p[i - 1], *hi = &p[i];
	double t = (b - lo->bits_per_entry) / (hi->bits_per_entry - lo->bits_per_entry);
	double k = lo->hashes + t * ((double)hi->hashes - lo->hashes);
	double fpr = exp(log(lo->fpr) + t * (log(hi->fpr) - log(lo->fpr)));

	k = round(k);
	out->hashes = k < 1 ? 1 : k > FILTER_MAX_HASHES ? FILTER_MAX_HASHES : (unsigned)k;
	out->fpr = fpr > 1.0 ? 1.0 : fpr;
}

static void best_classic_online(unsigned c, double b, struct sizing_choice *out)
{
	out->hashes = 1;
	out->fpr = 1.0;
	for (unsigned k = 1; k <= FILTER_MAX_HASHES; k++) {
		double fpr = sizing_fpr_from_fill(sizing_fill_online(b, c, k), c, k);
		if (fpr < out->fpr) {
			out->fpr = fpr;
			out->hashes = k;
		}
	}
}

int sizing_best(enum filter_layout layout, unsigned c, double bits_per_entry, unsigned rounds,
		struct sizing_choice *out, char *err, size_t errlen)
{
	if (c < 1 || c > FILTER_MAX_CHOICES) {
		error_set(err, errlen, "choices must be 1, 2 or 3 (got %u)", c);
		return -1;
	}
	if (!(bits_per_entry >= 1.0 && bits_per_entry <= 64.0)) {
		error_set(err, errlen, "bits per entry must be between 1 and 64 (got %g)",
			  bits_per_entry);
		return -1;
	}
	if (layout == FILTER_CLASSIC && c == 1) {
		out->hashes = sizing_k_opt(bits_per_entry);
		out->fpr = sizing_fpr_standard(bits_per_entry, out->hashes);
		return 0;
	}
	if (layout == FILTER_CLASSIC && rounds <= 1) {
		best_classic_online(c, bits_per_entry, out);
		return 0;
	}
	const struct sizing_series *s = find_series(layout, c, c > 1 && rounds > 1);
	if (s == NULL) {
		error_set(err, errlen, "no sizing data for %s with %u choices",
			  filter_layout_name(layout), c);
		return -1;
	}
	interpolate(s, bits_per_entry, out);
	return 0;
}

uint64_t sizing_round_bits(enum filter_layout layout, uint64_t bits)
{
	if (bits < FILTER_MIN_BITS)
		bits = FILTER_MIN_BITS;
	if (layout == FILTER_BLOCKED)
		bits = (bits + FILTER_BLOCK_BITS - 1) / FILTER_BLOCK_BITS * FILTER_BLOCK_BITS;
	return bits;
}

int sizing_parse_size(const char *text, uint64_t *bytes)
{
	static const struct {
		const char *suffix;
		uint64_t scale;
	} units[] = {
		{ "", 1 },	     { "B", 1 },	  { "K", 1ULL << 10 }, { "KiB", 1ULL << 10 },
		{ "M", 1ULL << 20 }, { "MiB", 1ULL << 20 }, { "G", 1ULL << 30 }, { "GiB", 1ULL << 30 },
		{ "KB", 1000 },	     { "MB", 1000000 },	  { "GB", 1000000000 },
	};
	char *end;
	unsigned long long v;

	if (!isdigit((unsigned char)text[0]))
		return -1;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno != 0 || v == 0)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix) != 0)
			continue;
		if (v > UINT64_MAX / units[i].scale)
			return -1;
		*bytes = v * units[i].scale;
		return 0;
	}
	return -1;
}
