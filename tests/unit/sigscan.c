/* Unit tests for sigscan.c: each SIMD level's prefilter scan (AVX2's both ways) against the one-at-a-time one. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "sigscan.h"
#include "test.h"

#define PAYLOAD_MAX 3000

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The scan kernel a level runs: AVX-512's needs VBMI besides; there is no NEON one. */
static enum simd_level scan_kernel(enum simd_level level)
{
	if (level == SIMD_AVX512 && !simd_cpu_has_vbmi())
		return SIMD_AVX2;
	return level == SIMD_NEON ? SIMD_SCALAR : level;
}

/*
 * Each level's scan against the reference: every position tested alone
 * (sigscan_passes of the window folded byte by byte). Enough windows that a
 * few percent of random positions pass, so passes with several passing
 * lanes are common; payloads of every length up to a few thousand bytes,
 * scanned from random starts in random steps.
 */
static void scan_window(enum simd_level level, bool gather, unsigned window, uint64_t windows, uint64_t seed)
{
	struct hash_key key;
	struct rng r;
	static uint32_t want[PAYLOAD_MAX];

	rng_seed(&r, seed);
	for (size_t i = 0; i < sizeof(key.secret); i++)
		key.secret[i] = (uint8_t)rng_next(&r);
	key.algo = HASH_XXH3;
	struct sigscan *s = sigscan_new(window, &key, NULL, 0);
	uint8_t added[64]; /* the last window added */
	assert_non_null(s);
	assert_int_equal(sigscan_reserve(s, windows), 0);
	for (uint64_t i = 0; i < windows; i++) {
		for (unsigned b = 0; b < window; b++)
			added[b] = (uint8_t)rng_next(&r);
		sigscan_add(s, sigscan_word(s, added));
	}
	sigscan_set_simd(s, level);
	assert_int_equal(sigscan_simd(s), window <= 8 ? scan_kernel(level) : SIMD_SCALAR);
	sigscan_set_gather(s, gather);
	assert_int_equal(sigscan_gathers(s), gather && sigscan_simd(s) == SIMD_AVX2);
	uint64_t passed = 0, scanned = 0;
	for (int trial = 0; trial < 300; trial++) {
		size_t len = window + rng_below(&r, PAYLOAD_MAX - window);
		size_t positions = len - window + 1, from = rng_below(&r, positions), n = 0, nwant = 0;
		/*
		 * exactly len bytes on the heap, and room for exactly one position
		 * each: a read or a write past them is an error under ASan
		 */
		uint8_t *payload = malloc(len);
		uint32_t *got = malloc((positions - from) * sizeof(*got));
		assert_non_null(payload);
		assert_non_null(got);
		for (size_t i = 0; i < len; i++)
			payload[i] = (uint8_t)rng_next(&r);
		/* a window that was added, at a random place: it must pass */
		size_t at = from + rng_below(&r, positions - from);
		memcpy(payload + at, added, window);
		for (size_t next = from; next < positions;) {
			size_t step = 1 + rng_below(&r, 700);
			n += sigscan_candidates(s, payload, positions, next, got + n, step, &next);
		}
		for (size_t i = from; i < positions; i++)
			if (sigscan_passes(s, sigscan_word(s, payload + i)))
				want[nwant++] = (uint32_t)i;
		assert_int_equal(n, nwant);
		assert_memory_equal(got, want, n * sizeof(*got));
		assert_non_null(bsearch(&(uint32_t){ (uint32_t)at }, got, n, sizeof(*got), cmp_u32));
		passed += n;
		scanned += positions - from;
		free(payload);
		free(got);
	}
	/* the sizes above are meant to pass some, not all */
	assert_true(passed > scanned / 1000 && passed < scanned / 4);
	sigscan_free(s);
}

static void scan_is_the_scalar_scan(void **state)
{
	enum simd_level level = test_simd_level(state);

	/*
	 * 1 MiB of level 1 at 8 bits a window (a few percent pass), and 16 bits (a
	 * fraction of one); short windows with fewer, as there are only 256^W of them.
	 */
	static const uint64_t many[9] = { 0, 12, 2500, 500000, 1000000, 1000000, 1000000, 1000000, 1000000 };
	/* AVX2 reads level 1 by eight loads or by a gather, whichever the CPU runs faster: both, here. */
	for (int gather = 0; gather <= (scan_kernel(level) == SIMD_AVX2); gather++) {
		for (unsigned window = 1; window <= 8; window++) {
			scan_window(level, gather, window, many[window], window);
			scan_window(level, gather, window, many[window] / 100 + 1, 100 + window);
		}
		scan_window(level, gather, 13, 100000, 13); /* longer windows: one at a time either way */
	}
}

/*
 * Every window of one byte added: every position passes, so the scan writes
 * exactly as many positions as it is given room for (a kernel that stores
 * whole vectors past the last one is caught by ASan).
 */
static void all_passing_fill_out_exactly(void **state)
{
	enum simd_level level = test_simd_level(state);
	struct hash_key key;
	struct rng r;

	hash_key_from_seed(&key, HASH_XXH3, 5);
	rng_seed(&r, 5);
	struct sigscan *s = sigscan_new(1, &key, NULL, 0);
	assert_non_null(s);
	assert_int_equal(sigscan_reserve(s, 256), 0);
	for (unsigned b = 0; b < 256; b++)
		sigscan_add(s, sigscan_word(s, &(uint8_t){ (uint8_t)b }));
	sigscan_set_simd(s, level);
	for (size_t len = 1; len < 100; len++) {
		uint8_t *payload = malloc(len);
		uint32_t *got = malloc(len * sizeof(*got));
		size_t n = 0;
		assert_non_null(payload);
		assert_non_null(got);
		for (size_t i = 0; i < len; i++)
			payload[i] = (uint8_t)rng_next(&r);
		for (size_t next = 0; next < len;) {
			size_t step = 1 + rng_below(&r, 40), before = next;
			size_t found = sigscan_candidates(s, payload, len, next, got + n, step, &next);
			assert_int_equal(found, next - before);
			n += found;
		}
		for (size_t i = 0; i < len; i++)
			assert_int_equal(got[i], i);
		free(payload);
		free(got);
	}
	sigscan_free(s);
}

/* The fraction of n windows passing level 1: random, or with prefix as their first 4 bytes. */
static double pass_rate(const struct sigscan *s, struct rng *r, const char *prefix, int n)
{
	int passed = 0;

	for (int k = 0; k < n; k++) {
		uint8_t w[8];
		uint64_t x = rng_next(r);
		memcpy(w, &x, 8);
		if (prefix)
			memcpy(w, prefix, 4);
		passed += sigscan_passes(s, sigscan_word(s, w));
	}
	return (double)passed / n;
}

/*
 * 100,000 windows sharing their first 4 bytes ("GET " and a counter): traffic
 * with that prefix must pass level 1 about as rarely as random traffic does
 * past random windows. With the mask taken from a plain multiply, which
 * carries bits only upwards, it passed 6.4 times as often (1.5% of positions).
 */
static void similar_windows_keep_level1_sharp(void **state)
{
	struct hash_key key;
	struct rng r;
	double rate[2];

	(void)state;
	hash_key_from_seed(&key, HASH_XXH3, 3);
	for (int similar = 0; similar < 2; similar++) {
		struct sigscan *s = sigscan_new(8, &key, NULL, 0);
		assert_non_null(s);
		assert_int_equal(sigscan_reserve(s, 100000), 0);
		rng_seed(&r, 9);
		for (uint32_t i = 0; i < 100000; i++) {
			uint8_t w[8];
			uint64_t x = rng_next(&r);
			memcpy(w, &x, 8);
			if (similar) {
				memcpy(w, "GET ", 4);
				memcpy(w + 4, &i, 4);
			}
			sigscan_add(s, sigscan_word(s, w));
		}
		rate[similar] = pass_rate(s, &r, similar ? "GET " : NULL, 200000);
		sigscan_free(s);
	}
	if (rate[1] > 2 * rate[0])
		fail_msg("\"GET \"-traffic passes %.3f%% past \"GET \"-windows, random %.3f%% past random ones",
			 100 * rate[1], 100 * rate[0]);
}

/*
 * Windows whose two halves are equal ("abcdabcd", a run of one byte). Were
 * the halves only xored into level 1's 32-bit value, all of them would get
 * the same value whatever the key, and once one such signature window was
 * added, traffic of them would pass at every position.
 */
static void equal_halves_pass_as_rarely_as_others(void **state)
{
	struct hash_key key;
	struct rng r;
	int passed = 0, n = 200000;

	(void)state;
	hash_key_from_seed(&key, HASH_XXH3, 4);
	struct sigscan *s = sigscan_new(8, &key, NULL, 0);
	assert_non_null(s);
	assert_int_equal(sigscan_reserve(s, 100000), 0);
	rng_seed(&r, 11);
	for (uint32_t i = 0; i < 100000; i++) {
		uint64_t x = rng_next(&r);
		sigscan_add(s, sigscan_word(s, (const uint8_t *)&x));
	}
	sigscan_add(s, sigscan_word(s, (const uint8_t *)"abcdabcd"));
	double random = pass_rate(s, &r, NULL, n);
	for (int k = 0; k < n; k++) {
		uint8_t w[8];
		uint32_t half = (uint32_t)rng_next(&r);
		memcpy(w, &half, 4);
		memcpy(w + 4, &half, 4);
		passed += sigscan_passes(s, sigscan_word(s, w));
	}
	if ((double)passed / n > 2 * random + 0.001)
		fail_msg("windows of equal halves pass %.3f%%, random ones %.3f%%", 100.0 * passed / n, 100 * random);
	sigscan_free(s);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(similar_windows_keep_level1_sharp),
	cmocka_unit_test(equal_halves_pass_as_rarely_as_others),
	SIMD_UNIT_TESTS(scan_is_the_scalar_scan),
	SIMD_UNIT_TESTS(all_passing_fill_out_exactly),
};

TEST_MAIN("sigscan", tests)
