/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit and property tests for action_mirror.c: the commands it writes, run on a
 * model of the kernel's sets (which, like the kernel, refuses an interval
 * that overlaps another of its set and a delete of an element it lacks),
 * leave the sets as the model of what is wanted says.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "action_batch.h"
#include "action_mirror.h"
#include "rng.h"
#include "test.h"

#define NETS 64                    /* a universe of IPv4 nets and addresses that hold one another */
#define SETS_MAX 12
#define ELEMS_MAX 256

struct net {
	uint32_t addr;                 /* host order */
	unsigned prefix;
};

/* The kernel's sets, as the commands leave them. */
struct kernel {
	char name[SETS_MAX][16];
	struct net elem[SETS_MAX][ELEMS_MAX];
	unsigned timeout[SETS_MAX][ELEMS_MAX];
	unsigned n[SETS_MAX];
};

static int set_of(struct kernel *k, const char *name)
{
	for (int i = 0; i < SETS_MAX; i++) {
		if (strcmp(k->name[i], name) == 0)
			return i;
		if (k->name[i][0] == '\0') {
			snprintf(k->name[i], sizeof(k->name[i]), "%s", name);
			return i;
		}
	}
	fail_msg("too many sets");
	return -1;
}

static bool holds(struct net a, struct net b) /* a holds b */
{
	uint32_t mask = a.prefix ? ~0u << (32 - a.prefix) : 0;
	return a.prefix <= b.prefix && (a.addr & mask) == (b.addr & mask);
}

static int find(const struct kernel *k, int s, struct net e)
{
	for (unsigned i = 0; i < k->n[s]; i++)
		if (k->elem[s][i].addr == e.addr && k->elem[s][i].prefix == e.prefix)
			return (int)i;
	return -1;
}

static void apply(struct kernel *k, bool add, const char *set, const char *text, unsigned timeout)
{
	char addr[64];
	unsigned prefix = 32;
	struct in_addr a;

	assert_true(sscanf(text, "%63[^/]/%u", addr, &prefix) >= 1);
	assert_int_equal(inet_pton(AF_INET, addr, &a), 1);
	struct net e = { ntohl(a.s_addr), prefix };
	int s = set_of(k, set), at = find(k, s, e);
	bool interval = strstr(set, "nets") != NULL;
	if (!add) {
		assert_true(at >= 0); /* the kernel refuses a delete of what it lacks */
		k->elem[s][at] = k->elem[s][--k->n[s]];
		k->timeout[s][at] = k->timeout[s][k->n[s]];
		return;
	}
	if (at >= 0) { /* an add of an element there: its timeout set anew */
		k->timeout[s][at] = timeout;
		return;
	}
	assert_true(interval || prefix == 32);
	for (unsigned i = 0; interval && i < k->n[s]; i++)
		assert_false(holds(k->elem[s][i], e) || holds(e, k->elem[s][i])); /* overlapping intervals are refused */
	assert_true(k->n[s] < ELEMS_MAX);
	k->elem[s][k->n[s]] = e;
	k->timeout[s][k->n[s]++] = timeout;
}

/* nft's time, "1d2h3m4s500ms", in whole seconds (the parts in that order, each at most once); 0 for "". */
static unsigned nft_seconds(const char *when)
{
	static const struct {
		const char *unit;
		unsigned ms;
	} PARTS[] = { { "d", 86400000 }, { "h", 3600000 }, { "m", 60000 }, { "s", 1000 }, { "ms", 1 } };
	unsigned long long ms = 0;
	size_t next = 0;

	while (*when) {
		char *end;
		unsigned long long n = strtoull(when, &end, 10);
		size_t u = next;
		assert_true(end != when);
		while (u < 5 && !(strncmp(end, PARTS[u].unit, strlen(PARTS[u].unit)) == 0 &&
				  (u != 2 || end[1] != 's'))) /* "m", not the "ms" after it */
			u++;
		assert_true(u < 5);
		ms += n * PARTS[u].ms;
		when = end + strlen(PARTS[u].unit);
		next = u + 1;
	}
	return (unsigned)(ms / 1000);
}

/* Each line "add|delete element inet t SET { E [timeout 1d2h3m4s], ... }" applied. */
static void run(struct kernel *k, char *cmds)
{
	char *line_end;

	for (char *line = strtok_r(cmds, "\n", &line_end); line; line = strtok_r(NULL, "\n", &line_end)) {
		char op[16], set[32], *save;
		int used = 0;
		assert_int_equal(sscanf(line, "%15s element inet t %31s {%n", op, set, &used), 2);
		assert_true(used > 0 && strchr(line, '}'));
		bool add = strcmp(op, "add") == 0;
		assert_true(add || strcmp(op, "delete") == 0);
		*strchr(line, '}') = '\0';
		for (char *one = strtok_r(line + used, ",", &save); one; one = strtok_r(NULL, ",", &save)) {
			char text[64], when[64] = "";
			assert_true(sscanf(one, " %63s timeout %63s", text, when) >= 1);
			apply(k, add, set, text, nft_seconds(when));
		}
	}
}

/* NETS different nets and addresses of 10.0-3.0-3.0-3, many holding others. */
static struct net universe_net(unsigned i)
{
	static struct net u[NETS];
	static unsigned n;
	static const unsigned prefixes[] = { 8, 16, 24, 30, 32, 32, 32, 32 };

	for (unsigned j = 0; n < NETS; j++) {
		unsigned prefix = prefixes[j % 8];
		uint32_t addr = 0x0a000000u | ((j * 2654435761u) & 0x00030303u);
		struct net c = { addr & (~0u << (32 - prefix)), prefix };
		bool known = false;
		for (unsigned h = 0; h < n; h++)
			known = known || (u[h].addr == c.addr && u[h].prefix == c.prefix);
		if (!known)
			u[n++] = c;
	}
	return u[i];
}

/* One settle step of at most records slots, its commands run as one transaction: 1 if more remain. */
static int step_into(struct action_mirror *m, struct kernel *k, uint64_t now, size_t records)
{
	char *cmds = NULL;
	size_t len;
	FILE *f = open_memstream(&cmds, &len);

	assert_non_null(f);
	int more = action_mirror_settle(m, f, NULL, now, records);
	assert_true(more == 0 || more == 1);
	assert_int_equal(action_mirror_syncing(m), more == 1);
	fclose(f);
	run(k, cmds);
	free(cmds);
	return more;
}

static void settle_into(struct action_mirror *m, struct kernel *k, uint64_t now)
{
	assert_int_equal(step_into(m, k, now, SIZE_MAX), 0);
}

/*
 * Random puts, drops, sweeps and settles; after each settle the kernel's
 * sets are what is wanted. steps: 0, each settle whole; else settles of a
 * few slots at a time, with more changes between the steps (and sometimes
 * some sets emptied behind bloomd's back, and every element told again),
 * each step's commands a transaction of its own.
 */
static void random_changes(unsigned seed, size_t steps)
{
	static struct kernel k;
	uint64_t want[2][NETS] = { { 0 } }; /* by kind (listed, passed): 0 not wanted, else until + 1 */
	struct action_mirror *m = action_mirror_new("t");
	struct rng r;
	uint64_t now = 1000000;
	int more = 0;

	memset(&k, 0, sizeof(k));
	rng_seed(&r, seed);
	for (int step = 0; step < 6000; step++) {
		unsigned i = (unsigned)rng_below(&r, NETS), kind = (unsigned)rng_below(&r, 2);
		unsigned op = (unsigned)rng_below(&r, 100);
		struct net n = universe_net(i);
		uint8_t a[4] = { n.addr >> 24, n.addr >> 16 & 0xff, n.addr >> 8 & 0xff, n.addr & 0xff };
		if (op < 45) {
			uint64_t until = rng_below(&r, 3) == 0 ? 0 : now + 100 + rng_below(&r, 3) * 50;
			assert_int_equal(action_mirror_put(m, kind, a, 4, n.prefix, until), 0);
			want[kind][i] = until + 1;
		} else if (op < 85) {
			action_mirror_drop(m, kind, a, 4, n.prefix);
			want[kind][i] = 0;
		} else if (op < 87) { /* a sweep keeping about half */
			action_mirror_sweep_begin(m);
			for (unsigned j = 0; j < NETS; j++)
				for (unsigned kk = 0; kk < 2; kk++) {
					struct net o = universe_net(j);
					uint8_t b[4] = { o.addr >> 24, o.addr >> 16 & 0xff, o.addr >> 8 & 0xff, o.addr & 0xff };
					if (want[kk][j] && rng_below(&r, 2))
						assert_int_equal(action_mirror_put(m, kk, b, 4, o.prefix, want[kk][j] - 1), 0);
					else
						want[kk][j] = 0;
				}
			action_mirror_sweep_end(m);
		}
		if (steps && op == 99) { /* another emptied some of the sets: all is told again */
			for (int s = 0; s < SETS_MAX; s++)
				if (rng_below(&r, 2))
					k.n[s] = 0;
			action_mirror_retell(m);
		}
		if (steps && op % 3 == 0)
			more = step_into(m, &k, now, 1 + (size_t)rng_below(&r, steps));
		if (op % 10 != 0)
			continue;
		if (steps) /* to the end: what changed meanwhile too */
			while ((more = step_into(m, &k, now, 1 + (size_t)rng_below(&r, steps))) == 1)
				;
		else
			settle_into(m, &k, now);
		assert_int_equal(more, 0);
		/* The model: every wanted address; every wanted net no wanted net of its kind holds. */
		for (unsigned kk = 0; kk < 2; kk++)
			for (unsigned j = 0; j < NETS; j++) {
				struct net o = universe_net(j);
				bool hidden = false;
				for (unsigned h = 0; h < NETS && o.prefix < 32; h++) {
					struct net up = universe_net(h);
					hidden = hidden || (want[kk][h] && up.prefix < o.prefix && holds(up, o));
				}
				const char *name = action_mirror_set_name(kk, 4, o.prefix < 32);
				int s = set_of(&k, name), at = find(&k, s, o);
				if ((at >= 0) != (want[kk][j] && !hidden))
					print_message("# step %d %s %08x/%u at %d want %llu hidden %d\n", step, name, o.addr, o.prefix, at, (unsigned long long)want[kk][j], hidden);
				assert_true((at >= 0) == (want[kk][j] && !hidden));
				if (at >= 0 && want[kk][j] > 1) { /* its time left, within the second allowed */
					uint64_t left = want[kk][j] - 1 - now;
					assert_true(k.timeout[s][at] + 1 >= left && k.timeout[s][at] <= left + 1);
				}
			}
	}
	action_mirror_free(m);
}

static void commands_bring_the_kernel_to_what_is_wanted(void **state)
{
	(void)state;
	random_changes(5, 0);
}

/* The same a few slots a step, changes between steps: no step's transaction is refused, and each settle ends exact. */
static void steps_bring_the_kernel_to_what_is_wanted(void **state)
{
	(void)state;
	for (unsigned seed = 1; seed <= 4; seed++)
		random_changes(seed, seed * 7);
}

/* A timeout in the parts nft takes (one part of 100,000,000 s it refuses: value too large). */
static void timeouts_in_parts(void **state)
{
	char text[64];

	(void)state;
	assert_string_equal(action_timeout_text(1000, text, sizeof(text)), "1s");
	assert_string_equal(action_timeout_text(1, text, sizeof(text)), "1ms");
	assert_string_equal(action_timeout_text(0, text, sizeof(text)), "0ms");
	assert_string_equal(action_timeout_text(3601500, text, sizeof(text)), "1h1s500ms");
	assert_string_equal(action_timeout_text(100000000000ULL, text, sizeof(text)), "1157d9h46m40s");
	assert_string_equal(action_timeout_text(315360000000ULL, text, sizeof(text)), "3650d"); /* 87600h */
	assert_int_equal(nft_seconds(action_timeout_text(4294967295000ULL, text, sizeof(text))), 4294967295u);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(commands_bring_the_kernel_to_what_is_wanted),
	cmocka_unit_test(steps_bring_the_kernel_to_what_is_wanted),
	cmocka_unit_test(timeouts_in_parts),
};

TEST_MAIN("action_mirror", tests)
