/* Unit tests for xdpset.c and action_xdp.c: the set's table and filter, and the XDP program run on packets (BPF_PROG_TEST_RUN). */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <event2/event.h>
#include <linux/bpf.h>

#include "action_xdp.h"
#include "block.h"
#include "filter.h"
#include "rng.h"
#include "test.h"
#include "xdpset.h"

/* ---- the program's arithmetic ---- */

/* The program's two-multiply block index against the daemon's 128-bit one, at the edges and at random. */
static void range_reduce_matches_daemon(void **state)
{
	static const uint64_t xs[] = { 0, 1, 0xffffffffULL, 0x100000000ULL, 1ULL << 63, ~0ULL };
	static const uint64_t ns[] = { 1, 2, 3125, 1ULL << 31, 0xffffffffULL };
	struct rng r;

	(void)state;
	for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); i++)
		for (size_t j = 0; j < sizeof(ns) / sizeof(ns[0]); j++)
			assert_int_equal(xdp_range_reduce32(xs[i], ns[j]), block_range_reduce(xs[i], ns[j]));
	rng_seed(&r, 5);
	for (int i = 0; i < 1000000; i++) {
		uint64_t x = rng_next(&r), n = 1 + rng_below(&r, 0xffffffffULL);
		if (xdp_range_reduce32(x, n) != block_range_reduce(x, n))
			fail_msg("x = %llx, n = %llu", (unsigned long long)x, (unsigned long long)n);
	}
}

/* ---- the set alone, in plain memory ---- */

struct plain {
	struct xdpset_shape shape;
	struct xdpset_memory mem;
	struct xdp_live live;
	struct xdpset *set;
};

static void plain_new(struct plain *p, uint64_t capacity)
{
	struct hash_key key;
	char err[256];

	assert_int_equal(xdpset_shape_for(capacity, capacity / 4, 2, 16, &p->shape, err, sizeof(err)), 0);
	hash_key_from_seed(&key, HASH_XXH3, 7);
	p->mem.words = calloc(p->shape.params.bits / 64, 8);
	p->mem.buckets = calloc(p->shape.nbuckets, sizeof(struct xdp_bucket));
	p->mem.long_keys = calloc(p->shape.long_capacity, sizeof(struct xdp_long_key));
	p->mem.live = &p->live;
	p->set = xdpset_new(&p->shape, &key, &p->mem, err, sizeof(err));
	assert_non_null(p->set);
}

static void plain_free(struct plain *p)
{
	xdpset_free(p->set);
	free(p->mem.words);
	free(p->mem.buckets);
	free(p->mem.long_keys);
}

static void addr4(uint8_t a[4], uint32_t v)
{
	a[0] = (uint8_t)(v >> 24), a[1] = (uint8_t)(v >> 16), a[2] = (uint8_t)(v >> 8), a[3] = (uint8_t)v;
}

static void set_holds_and_lets_go(void **state)
{
	struct plain p;
	uint8_t a[4], net[5] = { 24, 10, 1, 2, 0 };

	(void)state;
	plain_new(&p, 1000);
	for (uint32_t i = 0; i < 1000; i++) {
		addr4(a, 0xc0000200 + i);
		assert_int_equal(xdpset_put(p.set, ENTRY_ADDR, a, 4, XDP_ACTION_DROP), 0);
	}
	assert_int_equal(xdpset_count(p.set), 1000);
	const struct filter *f = xdpset_filter(p.set);
	for (uint32_t i = 0; i < 1000; i++) {
		addr4(a, 0xc0000200 + i);
		assert_int_equal(xdpset_action(p.set, ENTRY_ADDR, a, 4), XDP_ACTION_DROP);
		assert_true(filter_query(f, xdpset_hash(p.set, ENTRY_ADDR, a, 4)));
	}
	/* The program's copy of the words is the counting store's filter, word for word. */
	assert_memory_equal(p.mem.words, f->words, p.shape.params.bits / 8);
	addr4(a, 0xc0000200);
	assert_int_equal(xdpset_put(p.set, ENTRY_ADDR, a, 4, XDP_ACTION_PASS), 0); /* a change of action */
	assert_int_equal(xdpset_count(p.set), 1000);
	assert_int_equal(xdpset_action(p.set, ENTRY_ADDR, a, 4), XDP_ACTION_PASS);
	for (uint32_t i = 0; i < 1000; i++) {
		addr4(a, 0xc0000200 + i);
		assert_true(xdpset_remove(p.set, ENTRY_ADDR, a, 4));
		assert_int_equal(xdpset_action(p.set, ENTRY_ADDR, a, 4), 0);
	}
	assert_false(xdpset_remove(p.set, ENTRY_ADDR, a, 4));
	/* Every bit the removed keys set is clear again, in the program's copy too. */
	for (uint64_t w = 0; w < p.shape.params.bits / 64; w++)
		assert_int_equal(p.mem.words[w], 0);
	assert_true(xdpset_due(p.set)); /* 1000 removed slots of 1504 */

	/* Prefix lengths appear with their first net and go with their last. */
	assert_int_equal(xdpset_put(p.set, ENTRY_NET, net, 5, XDP_ACTION_DROP), 0);
	net[0] = 16;
	assert_int_equal(xdpset_put(p.set, ENTRY_NET, net, 5, XDP_ACTION_DROP), 0);
	assert_int_equal(p.live.n_net_lens[0], 2);
	assert_true(xdpset_remove(p.set, ENTRY_NET, net, 5));
	assert_int_equal(p.live.n_net_lens[0], 1);
	assert_int_equal(p.live.net_lens[0][0], 24);
	assert_int_equal(xdpset_put(p.set, ENTRY_SIG, net, 5, XDP_ACTION_DROP), -1);
	plain_free(&p);
}

/* A sweep keeps what was put since it began, and removes the rest, bits and all. */
static void set_sweep(void **state)
{
	struct plain p;
	uint8_t a[4], a6[16] = { 0x20, 0x01, 0x0d, 0xb8 };

	(void)state;
	plain_new(&p, 1000);
	for (uint32_t i = 0; i < 600; i++) {
		addr4(a, 0xc0000200 + i);
		assert_int_equal(xdpset_put(p.set, ENTRY_ADDR, a, 4, XDP_ACTION_DROP), 0);
	}
	for (unsigned i = 0; i < 100; i++) {
		a6[15] = (uint8_t)i;
		assert_int_equal(xdpset_put(p.set, ENTRY_ADDR, a6, 16, XDP_ACTION_DROP), 0);
	}
	assert_int_equal(xdpset_sweep_begin(p.set), 0);
	for (uint32_t i = 300; i < 700; i++) { /* half kept, a hundred new */
		addr4(a, 0xc0000200 + i);
		assert_int_equal(xdpset_put(p.set, ENTRY_ADDR, a, 4, XDP_ACTION_DROP), 0);
	}
	for (unsigned i = 50; i < 100; i++) {
		a6[15] = (uint8_t)i;
		assert_int_equal(xdpset_put(p.set, ENTRY_ADDR, a6, 16, XDP_ACTION_DROP), 0);
	}
	assert_int_equal(xdpset_sweep_end(p.set), 300 + 50);
	assert_int_equal(xdpset_count(p.set), 400 + 50);
	assert_int_equal(xdpset_long_count(p.set), 50);
	for (uint32_t i = 0; i < 700; i++) {
		addr4(a, 0xc0000200 + i);
		assert_int_equal(xdpset_action(p.set, ENTRY_ADDR, a, 4), i >= 300 ? XDP_ACTION_DROP : 0);
	}
	/* The program's words are the counters' filter still: the removed keys' bits went with them. */
	assert_memory_equal(p.mem.words, xdpset_filter(p.set)->words, p.shape.params.bits / 8);
	plain_free(&p);
}

static int collect(void *ctx, enum entry_kind kind, const uint8_t *key, size_t len, unsigned action)
{
	uint8_t *seen = ctx;

	assert_int_equal(kind, ENTRY_ADDR);
	assert_int_equal(len, 16);
	assert_int_equal(action, XDP_ACTION_DROP);
	seen[key[15]]++;
	return 0;
}

/* IPv6 keys live apart (long keys, by index): held, walked, let go, their places used again; and the set says when it is full. */
static void set_long_keys_and_full(void **state)
{
	struct plain p;
	uint8_t a6[16] = { 0x20, 0x01, 0x0d, 0xb8 }, a[4], seen[256] = { 0 };
	int rc = 0;

	(void)state;
	plain_new(&p, 64); /* 100 slots, 16 long keys */
	assert_int_equal(p.shape.long_capacity, 16);
	for (unsigned i = 0; i < 16; i++) {
		a6[15] = (uint8_t)i;
		assert_int_equal(xdpset_put(p.set, ENTRY_ADDR, a6, 16, XDP_ACTION_DROP), 0);
	}
	a6[15] = 16;
	assert_int_equal(xdpset_put(p.set, ENTRY_ADDR, a6, 16, XDP_ACTION_DROP), 1); /* no long key left */
	assert_int_equal(xdpset_long_count(p.set), 16);
	assert_int_equal(xdpset_foreach(p.set, collect, seen), 0);
	for (unsigned i = 0; i < 16; i++)
		assert_int_equal(seen[i], 1);
	a6[15] = 3;
	assert_true(xdpset_remove(p.set, ENTRY_ADDR, a6, 16));
	a6[15] = 16;
	assert_int_equal(xdpset_put(p.set, ENTRY_ADDR, a6, 16, XDP_ACTION_DROP), 0); /* 3's long key again */
	assert_int_equal(xdpset_action(p.set, ENTRY_ADDR, a6, 16), XDP_ACTION_DROP);
	a6[15] = 3;
	assert_int_equal(xdpset_action(p.set, ENTRY_ADDR, a6, 16), 0);
	for (uint32_t i = 0; i < 100 && rc == 0; i++) {
		addr4(a, 0x0a000000 + i);
		rc = xdpset_put(p.set, ENTRY_ADDR, a, 4, XDP_ACTION_DROP);
	}
	assert_int_equal(rc, 1); /* 100 slots, 16 taken by IPv6 keys and one removed */
	plain_free(&p);
}

/* ---- the program ---- */

/* The program with options o, its events to cb in base's loop (if any); skipped where BPF is not to be had. */
static struct action_xdp *open_with(const struct action_xdp_options *o, struct event_base *base, action_xdp_event_cb cb,
				    void *ctx)
{
	char err[512];
	struct action_xdp *x = action_xdp_open(base, o, cb, ctx, err, sizeof(err));

	if (x == NULL && strstr(err, "cannot make BPF maps")) { /* no BPF in this kernel, or no right to it */
		print_message("# %s\n", err);
		if (base)
			event_base_free(base);
		skip();
	}
	if (x == NULL)
		fail_msg("%s", err);
	return x;
}

static struct action_xdp *open_shaped(bool probe_only, uint64_t capacity, unsigned choices, double bits_per_entry)
{
	struct action_xdp_options o = { .events_rate = 0, .choices = choices, .bits_per_entry = bits_per_entry,
					.capacity = capacity, .probe_only = probe_only };

	return open_with(&o, NULL, NULL, NULL);
}

static struct action_xdp *open_choices(bool probe_only, uint64_t capacity, unsigned choices)
{
	return open_shaped(probe_only, capacity, choices, 16);
}

static struct action_xdp *open_program(bool probe_only, uint64_t capacity)
{
	return open_choices(probe_only, capacity, 2);
}

/* An Ethernet frame (tags VLAN tags) with an IPv4 or IPv6 header and 8 bytes of UDP. */
static size_t frame(uint8_t *buf, int family, const uint8_t *src, const uint8_t *dst, int tags)
{
	size_t n = 12, alen = family == 4 ? 4 : 16;

	memset(buf, 0, 128);
	for (int t = 0; t < tags; t++, n += 4)
		buf[n] = 0x81, buf[n + 1] = 0x00, buf[n + 3] = 7;
	buf[n] = family == 4 ? 0x08 : 0x86, buf[n + 1] = family == 4 ? 0x00 : 0xdd;
	n += 2;
	if (family == 4) {
		buf[n] = 0x45, buf[n + 3] = 28, buf[n + 8] = 64, buf[n + 9] = 17;
		memcpy(buf + n + 12, src, alen);
		memcpy(buf + n + 16, dst, alen);
		return n + 28;
	}
	buf[n] = 0x60, buf[n + 5] = 8, buf[n + 6] = 17, buf[n + 7] = 64;
	memcpy(buf + n + 8, src, alen);
	memcpy(buf + n + 24, dst, alen);
	return n + 48;
}

static unsigned run(const struct action_xdp *x, const uint8_t *buf, size_t len)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = buf, .data_size_in = (uint32_t)len, .repeat = 1);

	assert_int_equal(bpf_prog_test_run_opts(action_xdp_program_fd(x), &opts), 0);
	return opts.retval;
}

/*
 * The program's filter against filter_query, on n source addresses (IPv4
 * and IPv6) with c choices and the k that bits an entry give: a tenth of
 * the keys held, the rest random. Any difference in hashing, block choice
 * or probe positions shows as a differing answer.
 */
static void filter_bit_exact(unsigned c, uint64_t n, double bits_per_entry)
{
	struct action_xdp *x = open_shaped(true, n / 10, c, bits_per_entry);
	struct rng r;
	uint8_t buf[128], src[16], dst[16] = { 10, 0, 0, 1 };
	char err[256];
	uint64_t positives = 0;
	uint32_t held = (uint32_t)(n / 10);

	rng_seed(&r, 42 + c);
	for (uint32_t i = 0; i < held; i++) {
		addr4(src, 0xac100000 + i * 7);
		assert_int_equal(action_xdp_put(x, ENTRY_ADDR, src, 4, XDP_ACTION_DROP, err, sizeof(err)), 0);
	}
	const struct filter *f = action_xdp_filter(x);
	for (uint64_t i = 0; i < n; i++) {
		int family = i % 4 == 3 ? 6 : 4;
		size_t alen = family == 4 ? 4 : 16;
		if (family == 4 && i % 10 == 0)
			addr4(src, 0xac100000 + (uint32_t)rng_below(&r, held) * 7);
		else
			for (size_t b = 0; b < alen; b += 8) {
				uint64_t w = rng_next(&r);
				memcpy(src + b, &w, alen - b < 8 ? alen - b : 8);
			}
		bool says = filter_query(f, action_xdp_hash(x, ENTRY_ADDR, src, alen));
		positives += says;
		unsigned verdict = run(x, buf, frame(buf, family, src, dst, 0));
		if (verdict != (says ? XDP_DROP : XDP_PASS))
			fail_msg("c = %u, key %llu: the program says %u, filter_query %d", c, (unsigned long long)i, verdict,
				 says);
	}
	print_message("# c = %u, k = %u: %llu of %llu keys passed the filter, in the program as in filter_query\n", c,
		      f->params.hashes, (unsigned long long)positives, (unsigned long long)n);
	assert_true(positives >= n / 40); /* the held keys among the IPv4 three quarters */
	action_xdp_close(x);
}

/* A million keys with the default two choices; a fifth as many with one and with three. */
static void program_filter_bit_exact(void **state)
{
	(void)state;
	filter_bit_exact(2, 1000000, 16);
	filter_bit_exact(1, 200000, 16);
	filter_bit_exact(3, 200000, 16);
	for (double bits = 6; bits <= 24; bits += 3)
		filter_bit_exact(2, 100000, bits);
}

/* What the whole program does with listed, exempted and unlisted packets. */
static void program_verdicts(void **state)
{
	struct action_xdp *x = open_program(false, 64);
	uint8_t buf[128 + 4], a[4], b[4], c[4], net[5] = { 20, 198, 51, 96, 0 }, pair[8];
	uint8_t a6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 }, b6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0x0f, [15] = 9 };
	uint8_t net6[17] = { 36, 0x20, 0x01, 0x0d, 0xb8, 0xf0 };
	char err[256];

	(void)state;
	addr4(a, 0xc0000201);
	addr4(b, 0xcb007101);
	addr4(c, 0x0a000001);
	assert_int_equal(action_xdp_put(x, ENTRY_ADDR, a, 4, XDP_ACTION_DROP, err, sizeof(err)), 0);
	assert_int_equal(action_xdp_put(x, ENTRY_NET, net, 5, XDP_ACTION_DROP, err, sizeof(err)), 0);
	memcpy(pair, c, 4);
	memcpy(pair + 4, b, 4);
	assert_int_equal(action_xdp_put(x, ENTRY_PAIR, pair, 8, XDP_ACTION_DROP, err, sizeof(err)), 0);
	assert_int_equal(action_xdp_put(x, ENTRY_ADDR, a6, 16, XDP_ACTION_DROP, err, sizeof(err)), 0);
	assert_int_equal(action_xdp_put(x, ENTRY_NET, net6, 17, XDP_ACTION_DROP, err, sizeof(err)), 0);

	assert_int_equal(run(x, buf, frame(buf, 4, a, c, 0)), XDP_DROP);     /* the source */
	assert_int_equal(run(x, buf, frame(buf, 4, c, a, 0)), XDP_DROP);     /* the destination */
	assert_int_equal(run(x, buf, frame(buf, 4, a, c, 2)), XDP_DROP);     /* behind two VLAN tags */
	assert_int_equal(run(x, buf, frame(buf, 4, c, b, 0)), XDP_DROP);     /* the pair */
	assert_int_equal(run(x, buf, frame(buf, 4, b, c, 0)), XDP_PASS);     /* not the other way */
	uint8_t in_net[4] = { 198, 51, 111, 7 }, out_net[4] = { 198, 51, 112, 7 };
	assert_int_equal(run(x, buf, frame(buf, 4, c, in_net, 0)), XDP_DROP); /* 198.51.96.0/20 */
	assert_int_equal(run(x, buf, frame(buf, 4, c, out_net, 0)), XDP_PASS);
	uint8_t in_net6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0xef, 0xff, [15] = 2 };
	assert_int_equal(run(x, buf, frame(buf, 6, in_net6, b6, 0)), XDP_PASS); /* e... is outside f.../36 */
	in_net6[4] = 0xf0, in_net6[5] = 0x0f;
	assert_int_equal(run(x, buf, frame(buf, 6, in_net6, b6, 0)), XDP_DROP);
	assert_int_equal(run(x, buf, frame(buf, 6, b6, a6, 1)), XDP_DROP);

	/*
	 * A pass entry exempts its own side: a listed source sending to a passed
	 * address is still dropped, a listed net holding a passed source is not
	 * (nor a pair unless both ends are passed); with pass = packet, the packet.
	 */
	assert_int_equal(action_xdp_put(x, ENTRY_ADDR, c, 4, XDP_ACTION_PASS, err, sizeof(err)), 0);
	assert_int_equal(run(x, buf, frame(buf, 4, a, c, 0)), XDP_DROP);
	assert_int_equal(run(x, buf, frame(buf, 4, c, b, 0)), XDP_DROP);     /* the pair: b is not passed */
	assert_int_equal(action_xdp_put(x, ENTRY_ADDR, in_net, 4, XDP_ACTION_PASS, err, sizeof(err)), 0);
	assert_int_equal(run(x, buf, frame(buf, 4, in_net, out_net, 0)), XDP_PASS);
	assert_int_equal(action_xdp_put(x, ENTRY_ADDR, c, 4, XDP_ACTION_PASS | XDP_ACTION_PASS_PACKET, err, sizeof(err)), 0);
	assert_int_equal(run(x, buf, frame(buf, 4, a, c, 0)), XDP_PASS);
	assert_true(action_xdp_remove(x, ENTRY_ADDR, c, 4));
	assert_true(action_xdp_remove(x, ENTRY_ADDR, in_net, 4));
	assert_int_equal(run(x, buf, frame(buf, 4, a, c, 0)), XDP_DROP);
	/* A removal is in force when it returns. */
	assert_true(action_xdp_remove(x, ENTRY_ADDR, a, 4));
	assert_int_equal(run(x, buf, frame(buf, 4, a, c, 0)), XDP_PASS);

	/* Non-IP frames and runts pass untouched. */
	memset(buf, 0, sizeof(buf));
	buf[12] = 0x08, buf[13] = 0x06; /* ARP */
	assert_int_equal(run(x, buf, 60), XDP_PASS);
	assert_int_equal(run(x, buf, 14), XDP_PASS);
	frame(buf, 4, c, b, 0);
	assert_int_equal(run(x, buf, 30), XDP_PASS); /* the IPv4 header cut short */
	frame(buf, 4, a, c, 2);
	assert_int_equal(run(x, buf, 16), XDP_PASS); /* a VLAN tag cut short */
	frame(buf, 6, b6, a6, 0);
	assert_int_equal(run(x, buf, 14 + 39), XDP_PASS); /* the IPv6 header a byte short */
	frame(buf + 4, 6, b6, a6, 0);               /* the frame moved on by a tag's four bytes (buf has room)... */
	buf[12] = 0x88, buf[13] = 0xa8, buf[14] = 0, buf[15] = 7; /* ...an 802.1ad (QinQ) outer tag in front */
	assert_int_equal(run(x, buf, 4 + 14 + 48), XDP_DROP); /* read past, as 802.1Q is */
	/* Stacked tags, as packet.c reads them: 3 to 8 of them, 0x9100 among them; 9 are passed and counted. */
	static const uint16_t TAGS[] = { 0x8100, 0x88a8, 0x9100 };
	for (int tags = 3; tags <= 9; tags++) {
		size_t at = 12 + 4 * (size_t)tags;
		memset(buf, 0, sizeof(buf));
		for (int t = 0; t < tags; t++)
			buf[12 + 4 * t] = (uint8_t)(TAGS[t % 3] >> 8), buf[13 + 4 * t] = (uint8_t)TAGS[t % 3];
		buf[at] = 0x08, buf[at + 2] = 0x45;
		memcpy(buf + at + 2 + 12, in_net, 4); /* a listed net's address */
		assert_int_equal(run(x, buf, at + 2 + 20), tags <= 8 ? XDP_DROP : XDP_PASS);
	}

	struct action_xdp_counts n;
	action_xdp_counts(x, &n);
	assert_int_equal(n.dropped, 17);
	assert_int_equal(n.exempted, 2);
	assert_int_equal(n.passed, 12);
	assert_int_equal(n.unparsed, 4); /* the 9 tags, and the three frames cut short above (not the ARP ones) */
	assert_int_equal(n.events_suppressed, 17); /* events_rate 0 */
	action_xdp_close(x);
}

/* The events the program sent, as the daemon's loop reads them. */
struct reported {
	unsigned n;
	struct xdp_event last;
};

static void on_event(void *ctx, const struct xdp_event *e)
{
	struct reported *r = ctx;

	r->n++;
	r->last = *e;
}

/* Runs the frame, which must be dropped, and checks the one event's key: kind, len bytes, zero past them. */
static void drops_naming(struct action_xdp *x, struct event_base *base, struct reported *r, const uint8_t *buf,
			 size_t len, unsigned kind, const uint8_t *key, size_t key_len)
{
	uint8_t want[sizeof(r->last.key)] = { 0 };
	unsigned before = r->n;

	assert_int_equal(run(x, buf, len), XDP_DROP);
	for (int i = 0; i < 10000 && r->n == before; i++) { /* up to 10 s: the ring's wakeup on a loaded machine */
		event_base_loop(base, EVLOOP_NONBLOCK);
		if (r->n == before)
			usleep(1000);
	}
	assert_int_equal(r->n, before + 1);
	memcpy(want, key, key_len);
	assert_int_equal(r->last.kind, kind);
	assert_int_equal(r->last.len, key_len);
	assert_memory_equal(r->last.key, want, sizeof(want));
}

/*
 * A drop's event carries the key that dropped it, whichever side it is on
 * (with both ends listed, the first found: addresses before nets, the
 * source before the destination): the daemon finds the entry and its
 * lists by it.
 */
static void program_reports_the_dropping_key(void **state)
{
	struct event_base *base = event_base_new();
	struct reported r = { 0 };
	struct action_xdp_options o = { .events_rate = 1000, .choices = 2, .bits_per_entry = 16, .capacity = 64,
					.long_capacity = 16 };
	struct action_xdp *x = open_with(&o, base, on_event, &r);
	uint8_t buf[128], a[4] = { 192, 0, 2, 1 }, b[4] = { 203, 0, 113, 1 }, c[4] = { 10, 0, 0, 1 }, pair[8];
	uint8_t net[5] = { 20, 198, 51, 96, 0 }, in_net[4] = { 198, 51, 111, 7 };
	uint8_t a6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 }, b6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0x0f, [15] = 9 };
	uint8_t net6[17] = { 36, 0x20, 0x01, 0x0d, 0xb8, 0xf0 };
	uint8_t in_net6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0xf0, 0x0f, [15] = 2 };
	char err[256];

	(void)state;
	memcpy(pair, c, 4);
	memcpy(pair + 4, b, 4);
	assert_int_equal(action_xdp_put(x, ENTRY_ADDR, a, 4, XDP_ACTION_DROP, err, sizeof(err)), 0);
	assert_int_equal(action_xdp_put(x, ENTRY_NET, net, 5, XDP_ACTION_DROP, err, sizeof(err)), 0);
	assert_int_equal(action_xdp_put(x, ENTRY_PAIR, pair, 8, XDP_ACTION_DROP, err, sizeof(err)), 0);
	assert_int_equal(action_xdp_put(x, ENTRY_ADDR, a6, 16, XDP_ACTION_DROP, err, sizeof(err)), 0);
	assert_int_equal(action_xdp_put(x, ENTRY_NET, net6, 17, XDP_ACTION_DROP, err, sizeof(err)), 0);

	drops_naming(x, base, &r, buf, frame(buf, 4, a, c, 0), ENTRY_ADDR, a, 4);       /* the source */
	drops_naming(x, base, &r, buf, frame(buf, 4, c, a, 0), ENTRY_ADDR, a, 4);       /* the destination */
	drops_naming(x, base, &r, buf, frame(buf, 4, c, in_net, 0), ENTRY_NET, net, 5); /* the destination's net */
	drops_naming(x, base, &r, buf, frame(buf, 4, in_net, c, 0), ENTRY_NET, net, 5); /* the source's net */
	drops_naming(x, base, &r, buf, frame(buf, 4, a, in_net, 0), ENTRY_ADDR, a, 4);  /* both ends: the first found */
	drops_naming(x, base, &r, buf, frame(buf, 4, c, b, 0), ENTRY_PAIR, pair, 8);
	drops_naming(x, base, &r, buf, frame(buf, 6, b6, a6, 0), ENTRY_ADDR, a6, 16);
	drops_naming(x, base, &r, buf, frame(buf, 6, in_net6, b6, 0), ENTRY_NET, net6, 17);
	action_xdp_close(x);
	event_base_free(base);
}

/* Past its capacity the program is replaced by a larger one holding every entry. */
static void program_grows(void **state)
{
	struct action_xdp *x = open_program(false, 64);
	uint8_t buf[128], a[4], c[4] = { 10, 0, 0, 1 };
	char err[256];

	(void)state;
	for (uint32_t i = 0; i < 5000; i++) {
		addr4(a, 0xc6120000 + i);
		assert_int_equal(action_xdp_put(x, ENTRY_ADDR, a, 4, XDP_ACTION_DROP, err, sizeof(err)), 0);
	}
	struct action_xdp_counts n;
	action_xdp_counts(x, &n);
	assert_int_equal(n.entries, 5000);
	assert_true(n.capacity >= 5000);
	assert_true(n.generations > 1);
	for (uint32_t i = 0; i < 5000; i++) {
		addr4(a, 0xc6120000 + i);
		assert_int_equal(run(x, buf, frame(buf, 4, a, c, 0)), XDP_DROP);
	}
	addr4(a, 0xc6120000 + 5000);
	assert_int_equal(run(x, buf, frame(buf, 4, a, c, 0)), XDP_PASS);
	action_xdp_close(x);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(range_reduce_matches_daemon),
	cmocka_unit_test(set_holds_and_lets_go),
	cmocka_unit_test(set_long_keys_and_full),
	cmocka_unit_test(set_sweep),
	cmocka_unit_test(program_filter_bit_exact),
	cmocka_unit_test(program_verdicts),
	cmocka_unit_test(program_reports_the_dropping_key),
	cmocka_unit_test(program_grows),
};

TEST_MAIN("xdp", tests)
