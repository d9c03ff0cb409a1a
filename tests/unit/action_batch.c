/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Tests for action_batch.c against the kernel, in a network namespace of the
 * test's own: what a batch commits, and whether the kernel made a
 * generation of it. bloomd's watch is paused around its own commits and
 * counts generations to know whether another committed meanwhile, so a
 * batch that changes nothing must not say it made one.
 */
#include <nftables/libnftables.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "action_batch.h"
#include "test.h"

static const uint8_t ADDR[4] = { 192, 0, 2, 7 };

/* cmd run by nft: 0, or -1 if refused. */
static int nft(const char *cmd)
{
	struct nft_ctx *ctx = nft_ctx_new(NFT_CTX_DEFAULT);

	assert_non_null(ctx);
	nft_ctx_buffer_output(ctx);
	nft_ctx_buffer_error(ctx);
	int rc = nft_run_cmd_from_buffer(ctx, cmd);
	nft_ctx_free(ctx);
	return rc;
}

/*
 * A namespace of the test's own, made at the first call, with table t and
 * its sets s and n; the test skipped without the right to make one (never
 * run in the host's).
 */
static struct action_batch *open_t(void)
{
	static int isolated = -1;
	char err[300];

	if (isolated < 0)
		isolated = unshare(CLONE_NEWNET) == 0;
	if (!isolated) {
		print_message("# no network namespace of its own: needs CAP_SYS_ADMIN\n");
		skip();
	}
	nft("delete table inet t");
	assert_int_equal(nft("add table inet t\nadd set inet t s { type ipv4_addr; flags timeout; }\n"
			     "add set inet t n { type ipv4_addr; flags interval; }"), 0);
	struct action_batch *b = action_batch_open("t", err, sizeof(err));
	if (b == NULL)
		fail_msg("%s", err);
	return b;
}

static uint32_t generation(struct action_batch *b)
{
	uint32_t gen = 0;

	assert_int_equal(action_batch_generation(b, &gen), 0);
	return gen;
}

/* An element added makes a generation; added again, the kernel changes nothing and makes none; deleted, one again. */
static void says_whether_it_made_a_generation(void **state)
{
	char err[300];
	struct action_batch *b = open_t();

	(void)state;
	uint32_t gen = generation(b);
	assert_int_equal(action_batch_add(b, "s", ADDR, 4, 0), 0);
	assert_int_equal(action_batch_commit(b, err, sizeof(err)), 1);
	assert_int_equal(generation(b), gen + 1);

	assert_int_equal(action_batch_add(b, "s", ADDR, 4, 0), 0);
	assert_int_equal(action_batch_commit(b, err, sizeof(err)), 0);
	assert_int_equal(generation(b), gen + 1);

	assert_int_equal(action_batch_delete(b, "s", ADDR, 4), 0);
	assert_int_equal(action_batch_commit(b, err, sizeof(err)), 1);
	assert_int_equal(generation(b), gen + 2);
	assert_int_not_equal(nft("delete element inet t s { 192.0.2.7 }"), 0); /* gone from the kernel */
	action_batch_close(b);
}

/* A flush of an empty set, and a net added that is there: nothing made. */
static void a_batch_of_nothing_makes_none(void **state)
{
	char err[300];
	static const uint8_t NET[4] = { 198, 51, 100, 0 };
	struct action_batch *b = open_t();

	(void)state;
	assert_int_equal(action_batch_add_net(b, "n", NET, 4, 24, 0), 0);
	assert_int_equal(action_batch_commit(b, err, sizeof(err)), 1);
	uint32_t gen = generation(b);
	assert_int_equal(action_batch_add_net(b, "n", NET, 4, 24, 0), 0);
	assert_int_equal(action_batch_flush(b, "s"), 0);
	assert_int_equal(action_batch_commit(b, err, sizeof(err)), 0);
	assert_int_equal(generation(b), gen);
	action_batch_close(b);
}

/* Refused whole: -1, the kernel's reason said, nothing made, nothing changed. */
static void refused_whole(void **state)
{
	char err[300];
	struct action_batch *b = open_t();

	(void)state;
	uint32_t gen = generation(b);
	assert_int_equal(action_batch_add(b, "s", ADDR, 4, 0), 0);
	assert_int_equal(action_batch_add(b, "nosuchset", ADDR, 4, 0), 0);
	assert_int_equal(action_batch_commit(b, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "refused"));
	assert_int_equal(generation(b), gen);
	assert_int_not_equal(nft("delete element inet t s { 192.0.2.7 }"), 0);
	action_batch_close(b);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(says_whether_it_made_a_generation),
	cmocka_unit_test(a_batch_of_nothing_makes_none),
	cmocka_unit_test(refused_whole),
};

TEST_MAIN("action_batch", tests)
