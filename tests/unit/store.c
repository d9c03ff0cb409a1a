/* Unit and property tests for store.c against a plain model. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "sigscan.h"
#include "store.h"
#include "test.h"

#define UNIVERSE 5000

static struct hash_key KEY;

/*
 * Entry i: kind 1 + (i % 3), bytes "entry-<i>" padded to a length that
 * varies with i; every fifth a 4-byte key and every seventh (of the rest) a
 * 2-byte one, which the store keeps in the item itself.
 */
static size_t entry_bytes(uint64_t i, uint8_t *buf)
{
	if (i % 5 == 0 || i % 7 == 0) {
		size_t short_len = i % 5 == 0 ? 4 : 2;
		memcpy(buf, &(uint32_t){ (uint32_t)i }, short_len);
		return short_len;
	}
	size_t len = (size_t)snprintf((char *)buf, 64, "entry-%llu", (unsigned long long)i);

	while (len < 8 + i % 50)
		buf[len++] = (uint8_t)('a' + i % 26);
	return len;
}

static ssize_t add(struct store *s, uint64_t i)
{
	uint8_t buf[64];
	size_t len = entry_bytes(i, buf);

	return store_add(s, hash_bytes(&KEY, buf, len), (uint8_t)(1 + i % 3), buf, len,
			 (uint8_t)(i % 3));
}

static ssize_t find(const struct store *s, uint64_t i)
{
	uint8_t buf[64];
	size_t len = entry_bytes(i, buf);

	return store_find(s, hash_bytes(&KEY, buf, len), (uint8_t)(1 + i % 3), buf, len);
}

static void random_operations_match_model(void **state)
{
	static bool present[UNIVERSE];
	struct store *s = store_new();
	struct rng r;
	size_t n = 0;

	(void)state;
	assert_non_null(s);
	rng_seed(&r, 99);
	for (int step = 0; step < 60000; step++) {
		uint64_t i = rng_below(&r, UNIVERSE);
		/* Mostly adds first, then mostly deletes, so the arena gets compacted. */
		bool adding = rng_below(&r, 100) < (step < 30000 ? 70u : 20u);
		ssize_t at = find(s, i);
		assert_true((at >= 0) == present[i]);
		if (adding) {
			ssize_t got = add(s, i);
			if (present[i]) {
				assert_int_equal(got, -1);
				assert_int_equal(errno, EEXIST);
			} else {
				assert_true(got >= 0);
				present[i] = true;
				n++;
			}
		} else if (present[i]) {
			store_remove(s, (size_t)at);
			present[i] = false;
			n--;
		}
		assert_int_equal(store_count(s), n);
	}
	/* Every entry still has its own bytes, kind and group. */
	for (uint64_t i = 0; i < UNIVERSE; i++) {
		ssize_t at = find(s, i);
		assert_true((at >= 0) == present[i]);
		if (at < 0)
			continue;
		uint8_t buf[64], kind;
		const uint8_t *bytes;
		size_t len;
		store_entry(s, (size_t)at, &kind, &bytes, &len);
		assert_int_equal(len, entry_bytes(i, buf));
		assert_memory_equal(bytes, buf, len);
		assert_int_equal(kind, 1 + i % 3);
		assert_int_equal(store_group(s, (size_t)at), i % 3);
	}
	store_free(s);
}

/*
 * A rebuild's groups taken at once, from an array with less room than the
 * store's: each entry has its new group, and removes and adds after it move
 * and keep them as before.
 */
static void groups_taken_whole(void **state)
{
	struct store *s = store_new();
	size_t n = 1000, room = n;
	uint8_t *groups = malloc(room);

	(void)state;
	assert_non_null(s);
	assert_non_null(groups);
	for (uint64_t i = 0; i < n; i++)
		assert_int_equal(add(s, i), (ssize_t)i);
	for (size_t i = 0; i < n; i++)
		groups[i] = (uint8_t)(2 - i % 3); /* each another than it was */
	assert_int_equal(store_take_groups(s, &groups, &room), 0);
	assert_true(room >= n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(store_group(s, i), 2 - i % 3);
		assert_int_equal(groups[i], i % 3); /* the store's old ones, handed back */
	}
	free(groups);
	for (uint64_t i = 0; i < n; i += 2) /* each remove moves the last entry, with its group */
		store_remove(s, (size_t)find(s, i));
	for (uint64_t i = n; i < 2 * n; i++) /* past the room the taken array had */
		assert_true(add(s, i) >= 0);
	for (uint64_t i = 1; i < 2 * n; i += i < n ? 2 : 1)
		assert_int_equal(store_group(s, (size_t)find(s, i)), i < n ? 2 - i % 3 : i % 3);
	store_free(s);
}

/* store_held_below against a plain scan: sparse holders, blocks held by none, every start, floors in and out of blocks. */
static void held_below_matches_a_scan(void **state)
{
	struct store *s = store_new();
	struct rng r;
	size_t n = 1000;

	(void)state;
	assert_non_null(s);
	rng_seed(&r, 7);
	for (uint64_t i = 0; i < n; i++) {
		assert_int_equal(add(s, i), (ssize_t)i);
		/* bits 1-3 on one entry in 50, bit 0 on every other; none at all from 300 to 500 */
		uint32_t h = (i % 2 ? 1u : 0u) | (rng_below(&r, 50) == 0 ? 1u << (1 + rng_below(&r, 3)) : 0u);
		store_set_holders(s, i, i >= 300 && i < 500 ? 0 : h);
	}
	static const size_t floors[] = { 0, 1, 63, 64, 100, 299, 320, 500, 999 };
	for (uint32_t mask = 1; mask < 16; mask++)
		for (size_t f = 0; f < sizeof(floors) / sizeof(floors[0]); f++)
			for (size_t from = 0; from <= n + 1; from++) {
				ssize_t want = -1;
				for (size_t i = from < n ? from : n; i-- > floors[f];)
					if (store_holders(s, i) & mask) {
						want = (ssize_t)i;
						break;
					}
				assert_int_equal(store_held_below(s, from, floors[f], mask), want);
			}
	assert_int_equal(store_held_below(s, SIZE_MAX, 0, 1u << 9), -1);
	store_free(s);
}

/* Each word of held_blocks has every holder of its block's entries (more is allowed). */
static void assert_blocks_cover(const struct store *s)
{
	for (size_t i = 0; i < store_count(s); i++)
		assert_int_equal(store_holders(s, i) & ~s->held_blocks[i / STORE_HELD_BLOCK], 0);
}

/* store_held_below from i to floor against a plain scan. */
static void assert_held_below_scans(const struct store *s, size_t from, size_t floor, uint32_t mask)
{
	ssize_t want = -1;

	for (size_t i = from < store_count(s) ? from : store_count(s); i-- > floor;)
		if (store_holders(s, i) & mask) {
			want = (ssize_t)i;
			break;
		}
	assert_int_equal(store_held_below(s, from, floor, mask), want);
}

/*
 * The blocks' words through adds, removes (the last entry moving into a
 * hole, the count falling below a block and climbing past it again),
 * holders let go and a clone: passes agree with a scan, and every word
 * still covers its block.
 */
static void held_blocks_through_changes(void **state)
{
	struct store *s = store_new();
	struct rng r;

	(void)state;
	assert_non_null(s);
	rng_seed(&r, 11);
	for (int step = 0; step < 20000; step++) {
		uint64_t key = rng_below(&r, 400);
		ssize_t at = find(s, key);
		unsigned what = (unsigned)rng_below(&r, 10);
		if (at < 0 && what < 5) {
			at = add(s, key);
			assert_true(at >= 0);
		}
		if (at >= 0 && what >= 5 && what < 7)
			store_remove(s, (size_t)at);
		else if (at >= 0) /* none (let go), or one of 16: blocks' words differ */
			store_set_holders(s, (size_t)at, what % 2 ? 0 : 1u << rng_below(&r, 16));
		if (step % 2000 == 1999) {
			struct store *c = store_clone(s);
			assert_non_null(c);
			store_free(s);
			s = c;
		}
		assert_blocks_cover(s);
		if (step % 10 != 0)
			continue;
		/* A pass as a list's version makes it, then one from anywhere. */
		for (uint32_t mask = 1; mask < 1u << 16; mask <<= 1) {
			ssize_t i = store_held_below(s, SIZE_MAX, 0, mask);
			for (; i >= 0; i = store_held_below(s, (size_t)i, 0, mask))
				assert_held_below_scans(s, (size_t)i, 0, mask);
			size_t floor = rng_below(&r, 3) ? 0 : rng_below(&r, 200);
			assert_held_below_scans(s, rng_below(&r, store_count(s) + 2), floor, mask);
		}
	}
	assert_blocks_cover(s);
	store_free(s);
}

/* Every present entry found at its index, every absent one not. */
static void assert_matches_model(const struct store *s, const bool *present, uint64_t universe)
{
	for (uint64_t i = 0; i < universe; i++) {
		ssize_t at = find(s, i);
		assert_true((at >= 0) == present[i]);
		if (at >= 0) {
			uint8_t buf[64], kind;
			const uint8_t *bytes;
			size_t len;
			store_entry(s, (size_t)at, &kind, &bytes, &len);
			assert_int_equal(len, entry_bytes(i, buf));
			assert_memory_equal(bytes, buf, len);
		}
	}
}

/*
 * The table grows a few entries at each add and remove, never fuller than
 * it may be: removals of entries the growing table has and has not yet, and
 * of the last one (which moves), in between; a copy made half-way is the
 * same store. Checked whole after every step, through and past each growth.
 */
static void growth_in_steps_keeps_every_entry(void **state)
{
	enum { N = 3000 };
	static bool present[N];
	struct store *s = store_new();
	struct rng r;
	unsigned growths_seen = 0, clones = 0;

	(void)state;
	assert_non_null(s);
	rng_seed(&r, 7);
	for (int step = 0; step < 12000; step++) {
		uint64_t i = rng_below(&r, N);
		bool adding = rng_below(&r, 100) < (step < 6000 ? 75u : 35u);
		ssize_t at = find(s, i);
		if (adding && !present[i]) {
			assert_true(add(s, i) >= 0);
			present[i] = true;
		} else if (!adding && present[i]) {
			store_remove(s, (size_t)at);
			present[i] = false;
		}
		bool growing = s->growing.slots != NULL;
		growths_seen += growing && s->moved <= STORE_GROW_STEP;
		/* 3/4 full at most, 6/7 while the bigger table is filled: linear probing's runs stay short. */
		assert_true(store_count(s) * (growing ? 7 : 4) <= s->table.n * (growing ? 6 : 3));
		if (growing && step % 97 == 0) {
			struct store *copy = store_clone(s);
			assert_non_null(copy);
			assert_matches_model(copy, present, N);
			store_free(copy);
			clones++;
		}
		if (growing || step % 50 == 0)
			assert_matches_model(s, present, N);
	}
	assert_matches_model(s, present, N);
	assert_true(growths_seen >= 5);
	assert_true(clones >= 1);
	store_free(s);
}

static void kind_is_part_of_identity(void **state)
{
	struct store *s = store_new();
	struct hash128 h = hash_bytes(&KEY, "x", 1);

	(void)state;
	assert_true(store_add(s, h, 1, "x", 1, 0) >= 0);
	assert_true(store_add(s, h, 2, "x", 1, 0) >= 0);
	assert_int_equal(store_count(s), 2);
	assert_int_equal(store_find(s, h, 3, "x", 1), -1);
	store_free(s);
}

static void bad_lengths_are_refused(void **state)
{
	static uint8_t big[STORE_MAX_BYTES + 1];
	struct store *s = store_new();
	struct hash128 h = { 1, 2 };

	(void)state;
	assert_int_equal(store_add(s, h, 1, big, 0, 0), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(store_add(s, h, 1, big, sizeof(big), 0), -1);
	assert_int_equal(errno, EINVAL);
	assert_true(store_add(s, h, 1, big, STORE_MAX_BYTES, 0) >= 0);
	assert_int_equal(store_count(s), 1);
	store_free(s);
	store_free(NULL);
}

/*
 * Many entries with one home slot: deletion must keep the probe runs intact,
 * whether their slots' tags (bits 32-35 of the hash's high word) are all one
 * or differ. The store keeps only the high word: entries equal in it must
 * still be told apart by their bytes.
 */
static void colliding_hashes(void **state)
{
	(void)state;
	for (unsigned tagged = 0; tagged < 2; tagged++) {
		struct store *s = store_new();
		for (uint64_t i = 0; i < 200; i++) {
			struct hash128 h = { i, tagged ? (i & 0xf) << 32 : 0 }; /* the same home slot */
			assert_true(store_add(s, h, 1, &i, sizeof(i), 0) >= 0);
		}
		for (uint64_t i = 0; i < 200; i += 2) {
			struct hash128 h = { i, tagged ? (i & 0xf) << 32 : 0 };
			ssize_t at = store_find(s, h, 1, &i, sizeof(i));
			assert_true(at >= 0);
			store_remove(s, (size_t)at);
		}
		for (uint64_t i = 0; i < 200; i++) {
			struct hash128 h = { i, tagged ? (i & 0xf) << 32 : 0 };
			assert_true((store_find(s, h, 1, &i, sizeof(i)) >= 0) == (i % 2 == 1));
		}
		store_free(s);
	}
}

/* The longest run of occupied slots: what a lookup of an absent key may walk. */
static size_t longest_run(const struct store *s)
{
	size_t longest = 0, run = 0;

	for (size_t i = 0; i < 2 * s->table.n; i++) { /* twice round: a run may wrap */
		run = s->table.slots[i & (s->table.n - 1)] ? run + 1 : 0;
		longest = run > longest ? run : longest;
	}
	return longest;
}

/*
 * 40,000 signature windows that share their first four bytes ("GET "), hashed
 * as the matcher hashes them: their home slots must spread as random ones do.
 * With the home taken from the hash's low bits, which a multiply fills from
 * the window's first bytes only, all of them formed one run.
 */
static void similar_windows_spread(void **state)
{
	struct hash_key key;
	struct store *st = store_new();
	char err[128];

	(void)state;
	hash_key_from_seed(&key, HASH_XXH3, 7);
	struct sigscan *scan = sigscan_new(8, &key, err, sizeof(err));
	assert_non_null(scan);
	assert_non_null(st);
	for (uint32_t i = 0; i < 40000; i++) {
		uint8_t window[8] = { 'G', 'E', 'T', ' ' };
		memcpy(window + 4, &i, 4);
		struct hash128 h = sigscan_hash(scan, sigscan_word(scan, window));
		assert_true(store_add(st, h, 0, window, 8, 0) >= 0);
	}
	size_t run = longest_run(st);
	if (run > 200)
		fail_msg("a run of %zu occupied slots among %zu", run, st->table.n);
	sigscan_free(scan);
	store_free(st);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(similar_windows_spread),
	cmocka_unit_test(random_operations_match_model),
	cmocka_unit_test(growth_in_steps_keeps_every_entry),
	cmocka_unit_test(kind_is_part_of_identity),
	cmocka_unit_test(bad_lengths_are_refused),
	cmocka_unit_test(colliding_hashes),
	cmocka_unit_test(groups_taken_whole),
	cmocka_unit_test(held_below_matches_a_scan),
	cmocka_unit_test(held_blocks_through_changes),
};

int main(void)
{
	hash_key_from_seed(&KEY, HASH_XXH3, 4242);
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
