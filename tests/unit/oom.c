/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Out of memory at every allocation in turn: the matcher's adds, removes,
 * builds and rebuilds with the N-th allocation failing, for every N a clean
 * run makes. None may crash, and none may leave an entry in the exact store
 * that the filter misses (a false negative) or lose one that was added.
 * The allocations of this binary's own code go through the wrappers below
 * (linked with --wrap); the libraries' own are not counted. The wrappers
 * also sum the bytes asked for, which bound what a build holds.
 */
#include <stdlib.h>
#include <string.h>

#include "counting.h"
#include "entry.h"
#include "matcher.h"
#include "rng.h"
#include "test.h"

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
int __real_posix_memalign(void **p, size_t align, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
int __wrap_posix_memalign(void **p, size_t align, size_t size);

static unsigned long allocations, fail_at; /* fail_at 0: none fails */
static size_t asked;                       /* bytes, a realloc's whole new size */

static bool fails(size_t bytes)
{
	asked += bytes;
	return ++allocations == fail_at;
}

void *__wrap_malloc(size_t size)
{
	return fails(size) ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return fails(n * size) ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
	return fails(size) ? NULL : __real_realloc(p, size);
}

int __wrap_posix_memalign(void **p, size_t align, size_t size)
{
	return fails(size) ? 12 /* ENOMEM */ : __real_posix_memalign(p, align, size);
}

#define UNIVERSE 300

struct model {
	struct entry e[UNIVERSE];
	bool in[UNIVERSE];
};

static void make_entries(struct model *md)
{
	struct rng r;

	rng_seed(&r, 5);
	for (int i = 0; i < UNIVERSE; i++) {
		struct entry *e = &md->e[i];
		if (i % 3 == 2) {
			e->kind = ENTRY_SIG;
			e->len = (uint16_t)(8 + rng_below(&r, 8));
			for (unsigned b = 0; b < e->len; b++)
				e->key[b] = (uint8_t)("GET /ab"[rng_below(&r, 7)]); /* windows alike and shared */
		} else {
			e->kind = i % 3 ? ENTRY_PAIR : ENTRY_ADDR;
			e->len = e->kind == ENTRY_PAIR ? 8 : 4;
			for (unsigned b = 0; b < e->len; b++)
				e->key[b] = (uint8_t)rng_next(&r);
		}
		md->in[i] = false;
	}
}

/* The model and the matcher agree, and the filter finds every stored entry. */
static void check(const struct matcher *m, const struct model *md, bool built)
{
	for (int i = 0; i < UNIVERSE; i++) {
		bool says, present = matcher_lookup(m, &md->e[i], &says);
		if (present != md->in[i])
			fail_msg("entry %d: stored %d, model %d (failing allocation %lu)", i, present, md->in[i], fail_at);
		if (present && built && !says)
			fail_msg("entry %d: stored, but the filter misses it (failing allocation %lu)", i, fail_at);
	}
}

static void rebuild(struct matcher *m)
{
	struct matcher_rebuild *r = matcher_rebuild_begin(m, NULL, 2, NULL, NULL, 0);

	if (r == NULL)
		return;
	if (matcher_rebuild_copy(m, r, SIZE_MAX, NULL, 0) < 0 || matcher_rebuild_run(r, NULL, 0) < 0) {
		matcher_rebuild_free(m, r);
		return;
	}
	matcher_rebuild_finish(m, r, NULL, 0);
}

/*
 * The workers' copy brought in step: the recorded changes replayed, else
 * copied whole; NULL if neither had memory (the next try starts afresh).
 */
static struct matcher *in_step(struct matcher *copy, const struct matcher *m, struct matcher_log *log)
{
	if (copy == NULL || log == NULL || matcher_replay(copy, log, NULL, 0) < 0) {
		matcher_free(copy);
		copy = matcher_clone(m);
	}
	if (log)
		matcher_log_clear(log);
	return copy;
}

/* One run: a build, adds and removes, rebuilds, a copy kept in step; returns the allocations it made. */
static unsigned long run(unsigned long fail)
{
	static struct model md;
	struct matcher_config cfg = { .layout = FILTER_BLOCKED, .choices = 2, .bits_per_entry = 16, .window = 8 };
	struct rng r;
	bool built = false;

	make_entries(&md);
	allocations = 0;
	fail_at = fail;
	struct matcher *m = matcher_new(&cfg, NULL, 0), *copy = NULL;
	if (m == NULL)
		return fail_at = 0, allocations;
	struct matcher_log *log = matcher_log_new();
	matcher_record(m, log);
	rng_seed(&r, 11);
	for (int op = 0; op < 600; op++) {
		int i = (int)rng_below(&r, UNIVERSE);
		/* built empty first, so the first keys after it make the counting stores; at 250 online, as at a start */
		if (op == 0 || op == 150 || op == 250 || op == 400) {
			if (op == 0)
				built = matcher_build(m, NULL, 0) == 0;
			else if (op == 250)
				(void)matcher_build_online(m, NULL, 0);
			else
				rebuild(m);
		} else if (rng_below(&r, 4) == 0) {
			if (matcher_remove(m, &md.e[i]) == 0)
				md.in[i] = false;
		} else {
			int rc = matcher_add(m, &md.e[i], NULL, 0);
			if (rc >= 0)
				md.in[i] = true;
		}
		if (op % 50 == 0) {
			check(m, &md, built);
			if ((copy = in_step(copy, m, log)) != NULL)
				check(copy, &md, built);
		}
	}
	unsigned long made = allocations;
	fail_at = 0;
	rebuild(m); /* with memory again: everything still found */
	check(m, &md, built);
	copy = in_step(copy, m, log);
	check(copy, &md, built);
	matcher_free(copy);
	matcher_log_free(log);
	matcher_free(m);
	return made;
}

static void every_allocation_may_fail(void **state)
{
	(void)state;
	unsigned long total = run(0);
	assert_true(total > 50);
	for (unsigned long n = 1; n <= total; n++)
		run(n);
	print_message("# %lu allocations, each failed in turn\n", total);
}

/*
 * A start's build places each key as it hashes it: it asks for the new
 * counting store (10 bytes an entry at 16 bits) and the groups (1), not
 * for a copy of every key's 16-byte hash as well (at 10,000,000 entries
 * 160 MB more at the start's peak).
 */
static void online_build_copies_no_hashes(void **state)
{
	struct matcher_config cfg = { .layout = FILTER_BLOCKED, .choices = 2, .bits_per_entry = 16, .window = 8 };
	struct matcher *m = matcher_new(&cfg, NULL, 0);
	const uint32_t n = 100000;

	(void)state;
	assert_non_null(m);
	for (uint32_t i = 0; i < n; i++) {
		struct entry e = { .kind = ENTRY_ADDR, .len = 4 };
		memcpy(e.key, &i, 4);
		assert_int_equal(matcher_add(m, &e, NULL, 0), 0);
	}
	asked = 0;
	assert_int_equal(matcher_build_online(m, NULL, 0), 0);
	print_message("# the online build of %u addresses asked for %.1f bytes an entry\n", n, (double)asked / n);
	if (asked >= 16 * (size_t)n)
		fail_msg("the online build asked for %zu bytes for %u entries", asked, n);
	matcher_free(m);
}

/*
 * Keys put in block order for the rounds and back, each allocation failing
 * in turn (the order, its counts, each scratch array there and back, where
 * the scatter goes in place without one): back where they were, always.
 */
static void order_and_back_without_memory(void **state)
{
	enum { N = 2000 };
	static struct hash128 h[N], was_h[N];
	static uint8_t groups[N], was_groups[N];
	struct filter_params p = { .layout = FILTER_BLOCKED, .bits = 64 * 512, .choices = 2, .hashes = 9 };
	struct hash_key key;
	unsigned long n = 0;
	char err[128];

	(void)state;
	hash_key_from_seed(&key, HASH_XXH3, 4);
	struct counting *cs = counting_new(&p, &key, 1, err, sizeof(err));
	assert_non_null(cs);
	for (uint64_t i = 0; i < N; i++) {
		h[i] = hash_bytes(&key, &i, sizeof(i));
		groups[i] = (uint8_t)(i % 2);
	}
	memcpy(was_h, h, sizeof(h));
	memcpy(was_groups, groups, sizeof(groups));
	do {
		allocations = 0;
		fail_at = ++n;
		uint32_t *order = counting_order(cs, h, groups, N);
		if (order)
			counting_unorder(h, groups, N, order);
		fail_at = 0;
		assert_memory_equal(h, was_h, sizeof(h));
		assert_memory_equal(groups, was_groups, sizeof(groups));
	} while (allocations >= n);
	assert_true(n > 6);
	counting_free(cs);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(online_build_copies_no_hashes),
	cmocka_unit_test(every_allocation_may_fail),
	cmocka_unit_test(order_and_back_without_memory),
};

TEST_MAIN("oom", tests)
