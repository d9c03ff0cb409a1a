/* Property test for matcher.c: random packets and entry lists against a brute-force model. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "entry.h"
#include "matcher.h"
#include "rng.h"
#include "synth.h"
#include "test.h"

#define NENTRIES 60
#define WINDOW 4

#define MODEL_MAX 400

struct model {
	struct entry e[MODEL_MAX];
	size_t n;
};

static void random_addr(struct rng *r, int family, uint8_t *out)
{
	if (family == 4) {
		static const uint8_t net[4] = { 10, 0, 0, 0 };
		memcpy(out, net, 4);
		out[3] = (uint8_t)rng_below(r, 24); /* a small universe, so matches happen */
		out[2] = (uint8_t)rng_below(r, 2);
	} else {
		memset(out, 0, 16);
		out[0] = 0x20, out[1] = 0x01, out[2] = 0x0d, out[3] = 0xb8;
		out[15] = (uint8_t)rng_below(r, 24);
		out[8] = (uint8_t)rng_below(r, 2);
	}
}

static void random_text(struct rng *r, uint8_t *out, size_t len)
{
	for (size_t i = 0; i < len; i++)
		out[i] = (uint8_t)("abcd"[rng_below(r, 4)]);
}

static void random_entry(struct rng *r, struct entry *e)
{
	int family = rng_below(r, 2) ? 4 : 6;
	size_t alen = family == 4 ? 4 : 16;

	e->kind = (enum entry_kind)(1 + rng_below(r, 4));
	switch (e->kind) {
	case ENTRY_ADDR:
		random_addr(r, family, e->key);
		e->len = (uint16_t)alen;
		break;
	case ENTRY_NET: {
		static const uint8_t l4[] = { 0, 8, 23, 24, 28, 30, 32 }, l6[] = { 0, 32, 64, 65, 120, 124, 128 };
		unsigned plen = family == 4 ? l4[rng_below(r, 7)] : l6[rng_below(r, 7)];
		e->key[0] = (uint8_t)plen;
		random_addr(r, family, e->key + 1);
		for (unsigned bit = plen; bit < alen * 8; bit++)
			e->key[1 + bit / 8] &= (uint8_t)~(0x80 >> (bit % 8));
		e->len = (uint16_t)(1 + alen);
		break;
	}
	case ENTRY_PAIR:
		random_addr(r, family, e->key);
		random_addr(r, family, e->key + alen);
		e->len = (uint16_t)(2 * alen);
		break;
	case ENTRY_SIG:
		e->len = (uint16_t)(WINDOW + rng_below(r, 4));
		random_text(r, e->key, e->len);
		break;
	}
}

static bool in_net(const uint8_t *addr, const struct entry *e)
{
	unsigned plen = e->key[0];

	for (unsigned bit = 0; bit < plen; bit++)
		if (((addr[bit / 8] ^ e->key[1 + bit / 8]) >> (7 - bit % 8)) & 1)
			return false;
	return true;
}

/* The model: what matches, by definition, and the first offset for a signature. */
static bool model_matches(const struct entry *e, const struct packet_view *v, uint32_t *offset)
{
	size_t alen = v->family == 4 ? 4 : 16;

	if (e->kind == ENTRY_SIG) {
		for (size_t at = 0; v->payload && at + e->len <= v->payload_len; at++)
			if (memcmp(v->payload + at, e->key, e->len) == 0)
				return *offset = (uint32_t)at, true;
		return false;
	}
	if (v->family == 0 || entry_family(e->kind, e->len) != v->family)
		return false;
	switch (e->kind) {
	case ENTRY_ADDR:
		return memcmp(v->src, e->key, alen) == 0 || memcmp(v->dst, e->key, alen) == 0;
	case ENTRY_NET:
		return in_net(v->src, e) || in_net(v->dst, e);
	default:
		return memcmp(v->src, e->key, alen) == 0 && memcmp(v->dst, e->key + alen, alen) == 0;
	}
}

/*
 * A copy the workers would read, kept in step now and then by replaying the
 * changes recorded (made again whole when they cannot be): it answers as m does.
 */
struct clone_check {
	struct matcher *m;
	struct matcher_scratch *scratch;
	struct matcher_log *log;
	unsigned replays, copies;
};

static void sync_copy(struct matcher *m, struct clone_check *c)
{
	if (c->m && matcher_replay(c->m, c->log, NULL, 0) == 0) {
		c->replays++;
	} else {
		matcher_free(c->m);
		c->m = matcher_clone(m);
		assert_non_null(c->m);
		c->copies++;
	}
	matcher_log_clear(c->log);
}

static void check_clone(struct matcher *m, struct clone_check *c, const struct packet_view *v,
			const struct matcher_hit *hits, size_t n, int i)
{
	struct matcher_hit theirs[MATCHER_MAX_HITS];
	struct matcher_found mine[MATCHER_MAX_HITS], found[MATCHER_MAX_HITS];

	if (i % 13 != 0)
		return;
	sync_copy(m, c);
	assert_int_equal(matcher_check_with(c->m, c->scratch, v, theirs, MATCHER_MAX_HITS), n);
	assert_int_equal(matcher_found(m, hits, n, mine), n);
	assert_int_equal(matcher_found(c->m, theirs, n, found), n);
	for (size_t h = 0; h < n; h++) {
		assert_int_equal(found[h].kind, mine[h].kind);
		assert_int_equal(found[h].holders, mine[h].holders);
		assert_int_equal(found[h].offset, mine[h].offset);
		assert_int_equal(found[h].len, mine[h].len);
		assert_memory_equal(found[h].key, mine[h].key, mine[h].len);
		assert_ptr_not_equal(found[h].key, mine[h].key); /* its own memory */
	}
	for (int k = ENTRY_ADDR; k <= ENTRY_SIG; k++)
		assert_int_equal(matcher_entries(c->m, (enum entry_kind)k), matcher_entries(m, (enum entry_kind)k));
	for (int sig = 0; sig < 2; sig++) { /* the same keys in the same groups: the same bits */
		struct matcher_filter_info ours, theirs_info;
		matcher_filter_info(m, sig, &ours);
		matcher_filter_info(c->m, sig, &theirs_info);
		assert_int_equal(theirs_info.bits, ours.bits);
		assert_true(theirs_info.fill == ours.fill);
	}
}

/*
 * Packets held back to be checked together (matcher_check_batch), each
 * checked alone first on a scratch of its own: a batch must give every
 * packet the hits it gets alone, in their order, and count the same.
 */
#define BATCH_FRAME 512

struct batch_check {
	struct matcher_scratch *one, *many;
	struct rng r;
	uint8_t frames[PACKET_BATCH_MAX][BATCH_FRAME];
	struct packet_view v[PACKET_BATCH_MAX];
	struct matcher_hit alone[PACKET_BATCH_MAX][MATCHER_MAX_HITS], together[PACKET_BATCH_MAX][MATCHER_MAX_HITS];
	size_t nalone[PACKET_BATCH_MAX], ntogether[PACKET_BATCH_MAX];
	size_t count, size;        /* held; this batch's size, at random */
	unsigned batches, fullest;
};

static struct batch_check *batch_check_new(uint64_t seed)
{
	struct batch_check *b = calloc(1, sizeof(*b));

	assert_non_null(b);
	b->one = matcher_scratch_new();
	b->many = matcher_scratch_new();
	rng_seed(&b->r, seed);
	b->size = 1 + rng_below(&b->r, PACKET_BATCH_MAX);
	return b;
}

/* The held packets checked together, against what each got alone. */
static void batch_flush(const struct matcher *m, struct batch_check *b)
{
	if (b->count == 0)
		return;
	matcher_check_batch(m, b->many, b->v, b->count, b->together, b->ntogether);
	for (size_t i = 0; i < b->count; i++) {
		assert_int_equal(b->ntogether[i], b->nalone[i]);
		assert_memory_equal(b->together[i], b->alone[i], b->nalone[i] * sizeof(struct matcher_hit));
	}
	b->batches++;
	if (b->count > b->fullest)
		b->fullest = (unsigned)b->count;
	b->count = 0;
	b->size = 1 + rng_below(&b->r, PACKET_BATCH_MAX);
}

/* A packet's frame, held (parsed from a copy of its own) and checked alone; the batch checked when full. */
static void batch_add(const struct matcher *m, struct batch_check *b, const uint8_t *frame, size_t len)
{
	size_t i = b->count++;

	assert_true(len <= BATCH_FRAME);
	memcpy(b->frames[i], frame, len);
	packet_parse(1, b->frames[i], len, len, &b->v[i]);
	b->nalone[i] = matcher_check_with(m, b->one, &b->v[i], b->alone[i], MATCHER_MAX_HITS);
	if (b->count == b->size)
		batch_flush(m, b);
}

/* Both ways counted the same; freed. */
static void batch_check_done(const struct matcher *m, struct batch_check *b)
{
	batch_flush(m, b);
	for (int k = ENTRY_ADDR; k <= ENTRY_SIG; k++)
		assert_memory_equal(matcher_scratch_counters(b->many, (enum entry_kind)k),
				    matcher_scratch_counters(b->one, (enum entry_kind)k), sizeof(struct matcher_counters));
	assert_int_equal(matcher_scratch_hits_dropped(b->many), matcher_scratch_hits_dropped(b->one));
	matcher_scratch_free(b->one);
	matcher_scratch_free(b->many);
	free(b);
}

struct holder_counts {
	uint64_t held[32], staged[32], digest[32];
};

static int count_holders(void *ctx, const struct entry *e, unsigned group, uint32_t holders)
{
	struct holder_counts *c = ctx;
	uint64_t digest = matcher_entry_digest(e->kind, e->key, e->len);
	bool staged = holders & MATCHER_HOLDER_STAGING;

	(void)group;
	for (; holders; holders &= holders - 1) {
		unsigned b = (unsigned)__builtin_ctz(holders);
		c->held[b]++;
		c->staged[b] += staged;
		c->digest[b] += digest;
	}
	return 0;
}

/* The holders' counts and digests kept as they change are what a walk over the entries makes of them. */
static void assert_counts_kept(const struct matcher *m)
{
	struct holder_counts kept, walked;

	memset(&walked, 0, sizeof(walked));
	matcher_count_holders(m, false, kept.held);
	matcher_count_holders(m, true, kept.staged);
	for (unsigned b = 0; b < 32; b++)
		kept.digest[b] = matcher_holder_digest(m, b);
	matcher_foreach(m, 0, count_holders, &walked);
	assert_memory_equal(&kept, &walked, sizeof(kept));
}

static void run(enum filter_layout layout, unsigned c, uint64_t seed, enum simd_level simd, bool rebuilds)
{
	struct matcher_rebuild *job = NULL;
	bool copied = false, ran = false;
	struct matcher_config cfg = { .layout = layout, .choices = c, .memory = 128, .window = WINDOW };
	struct matcher *m = matcher_new(&cfg, NULL, 0);
	struct model model = { .n = 0 };
	struct rng r;
	static uint8_t frame[SYNTH_MAX_FRAME], payload[64];
	struct matcher_hit hits[MATCHER_MAX_HITS];
	struct clone_check clone = { .scratch = matcher_scratch_new(), .log = matcher_log_new() };
	struct batch_check *batch = batch_check_new(seed);

	assert_non_null(m);
	rng_seed(&r, seed);
	for (int i = 0; i < NENTRIES; i++) {
		struct entry *e = &model.e[model.n];
		random_entry(&r, e);
		int rc = matcher_add(m, e, NULL, 0);
		assert_true(rc == 0 || rc == 1);
		if (rc == 0)
			model.n++;
	}
	assert_int_equal(matcher_build(m, NULL, 0), 0);
	matcher_record(m, clone.log);
	assert_int_equal(matcher_set_simd(m, simd), 0);
	for (int i = 0; i < 3000; i++) {
		/* Entries come and go while packets flow: adds after the build, removes, lookups. */
		uint64_t op = rng_below(&r, 100);
		if (op < 16)
			batch_flush(m, batch); /* the held packets are checked against the matcher they were checked alone against */
		if (op < 4 && model.n > 0) {
			size_t j = (size_t)rng_below(&r, model.n);
			bool says;
			assert_int_equal(matcher_remove(m, &model.e[j]), 0);
			assert_false(matcher_lookup(m, &model.e[j], &says));
			assert_int_equal(matcher_remove(m, &model.e[j]), 1);
			model.e[j] = model.e[--model.n];
		} else if (op < 8 && model.n < MODEL_MAX) {
			struct entry *e = &model.e[model.n];
			random_entry(&r, e);
			int rc = matcher_add(m, e, NULL, 0);
			assert_true(rc == 0 || rc == 1);
			model.n += rc == 0;
		} else if (op < 12 && model.n > 0) {
			bool says;
			const struct entry *e = &model.e[rng_below(&r, model.n)];
			assert_true(matcher_lookup(m, e, &says));
			assert_true(says); /* the filter never misses a stored entry */
		} else if (op < 16 && rebuilds) {
			/* Background rebuilds with changes in between: begin, then later run and swap. */
			if (job == NULL) {
				/* Sometimes prepared too small: begin grows it. */
				struct matcher_rebuild *prep = rng_below(&r, 2) ? matcher_rebuild_prepare(
					rng_below(&r, 200), rng_below(&r, 200)) : NULL;
				job = matcher_rebuild_begin(m, prep, (unsigned)rng_below(&r, 3), NULL, NULL, 0);
				assert_non_null(job);
				copied = false;
			} else if (!copied) {
				/* The copy in slices, with adds and removes in between (followed in the copy). */
				int rc = matcher_rebuild_copy(m, job, 1 + rng_below(&r, 60), NULL, 0);
				assert_true(rc == 0 || rc == 1);
				copied = rc == 1;
			} else if (!ran) {
				/* The rounds, and sometimes a catch-up pass; more changes come before the swap. */
				assert_int_equal(matcher_rebuild_run(job, NULL, 0), 0);
				if (rng_below(&r, 2)) {
					matcher_rebuild_catch_up(m, job);
					assert_int_equal(matcher_rebuild_apply(job, NULL, 0), 0);
				}
				ran = true;
			} else {
				assert_int_equal(matcher_rebuild_finish(m, job, NULL, 0), 0);
				job = NULL;
				ran = false;
			}
		}
		struct synth_packet p = { .link = 1, .family = rng_below(&r, 2) ? 4 : 6,
					  .proto = rng_below(&r, 2) ? 6 : 17, .payload = payload };
		struct packet_view v;
		random_addr(&r, p.family, p.src);
		random_addr(&r, p.family, p.dst);
		p.payload_len = rng_below(&r, sizeof(payload)); /* every remainder mod 8, and under W */
		random_text(&r, payload, p.payload_len);
		size_t len = synth_build(&p, frame);
		packet_parse(1, frame, len, len, &v);
		size_t n = matcher_check(m, &v, hits, MATCHER_MAX_HITS);
		size_t expected = 0;
		for (size_t j = 0; j < model.n; j++) {
			uint32_t offset = 0;
			if (!model_matches(&model.e[j], &v, &offset))
				continue;
			expected++;
			bool found = false; /* no false negative */
			for (size_t h = 0; h < n && !found; h++) {
				const uint8_t *key;
				size_t klen;
				matcher_hit_key(m, &hits[h], &key, &klen);
				found = hits[h].kind == model.e[j].kind && klen == model.e[j].len &&
					memcmp(key, model.e[j].key, klen) == 0 &&
					(hits[h].kind != ENTRY_SIG || hits[h].offset == offset);
			}
			if (!found)
				fail_msg("seed %llu packet %d: entry %zu (%s) missed", (unsigned long long)seed,
					 i, j, entry_kind_name(model.e[j].kind));
		}
		assert_int_equal(n, expected); /* and nothing else: no false alert */
		check_clone(m, &clone, &v, hits, n, i);
		batch_add(m, batch, frame, len);
	}
	assert_true(batch->fullest > 8);
	batch_check_done(m, batch);
	assert_true(clone.replays > clone.copies); /* mostly replayed, not copied */
	matcher_free(clone.m);
	matcher_scratch_free(clone.scratch);
	matcher_log_free(clone.log);
	/* The filters were small on purpose: confirmation had work to do. */
	uint64_t unconfirmed = 0;
	for (int k = ENTRY_ADDR; k <= ENTRY_SIG; k++) {
		const struct matcher_counters *mc = matcher_counters(m, (enum entry_kind)k);
		unconfirmed += mc->positives - mc->confirmed;
	}
	assert_true(unconfirmed > 0);
	assert_counts_kept(m);
	matcher_free(m); /* with a rebuild still begun, maybe */
}

static void random_packets_match_the_model(void **state)
{
	enum simd_level level = test_simd_level(state);

	for (int layout = FILTER_CLASSIC; layout <= FILTER_BLOCKED; layout++)
		for (unsigned c = 1; c <= 3; c++)
			for (uint64_t seed = 1; seed <= 4; seed++)
				run((enum filter_layout)layout, c, seed * 7 + c, level, false);
}

/* The same while rebuilds begin and finish around the changes: nothing is lost in the swap. */
static void rebuilds_lose_nothing(void **state)
{
	enum simd_level level = test_simd_level(state);

	for (int layout = FILTER_CLASSIC; layout <= FILTER_BLOCKED; layout++)
		for (unsigned c = 1; c <= 3; c++)
			for (uint64_t seed = 1; seed <= 4; seed++)
				run((enum filter_layout)layout, c, seed * 11 + c, level, true);
}

struct saved {
	struct entry e[400];
	unsigned group[400], window[400];
	size_t n;
};

static int save_entry(void *ctx, const struct entry *e, unsigned group, unsigned window, uint32_t holders)
{
	struct saved *sv = ctx;

	assert_int_equal(holders, MATCHER_HOLDER_DEFAULT);
	sv->e[sv->n] = *e;
	sv->window[sv->n] = window;
	sv->group[sv->n++] = group;
	return 0;
}

/* A matcher restored from its keys, parameters and groups equals the original, without rounds. */
static void restore_keeps_groups(void **state)
{
	struct matcher_config cfg = { .layout = FILTER_BLOCKED, .choices = 2, .bits_per_entry = 12, .window = 4 };
	struct matcher *m = matcher_new(&cfg, NULL, 0), *copy;
	static struct saved before, after;
	struct hash_key keys[2];
	struct filter_params params[2];
	struct rng r;
	bool says;

	(void)state;
	rng_seed(&r, 5);
	for (int i = 0; i < 300; i++) {
		struct entry e;
		random_entry(&r, &e);
		matcher_add(m, &e, NULL, 0);
	}
	assert_int_equal(matcher_build(m, NULL, 0), 0);
	before.n = 0;
	assert_int_equal(matcher_foreach_placed(m, 0, save_entry, &before), 0);
	matcher_keys(m, keys);
	assert_true(matcher_params(m, 0, &params[0]) && matcher_params(m, 1, &params[1]));
	cfg.keys = keys;
	copy = matcher_new(&cfg, NULL, 0);
	for (size_t i = 0; i < before.n; i++)
		assert_int_equal(matcher_add_restored(copy, &before.e[i], before.group[i], before.window[i], NULL, 0), 0);
	assert_int_equal(matcher_build_restored(copy, params, NULL, 0), 0);
	after.n = 0;
	matcher_foreach_placed(copy, 0, save_entry, &after);
	assert_int_equal(after.n, before.n);
	for (size_t i = 0; i < before.n; i++) {
		assert_int_equal(after.e[i].kind, before.e[i].kind);
		assert_int_equal(after.e[i].len, before.e[i].len);
		assert_memory_equal(after.e[i].key, before.e[i].key, before.e[i].len);
		assert_int_equal(after.group[i], before.group[i]);
		assert_int_equal(after.window[i], before.window[i]);
		assert_true(matcher_lookup(copy, &before.e[i], &says) && says);
	}
	struct matcher_filter_info a, b;
	for (int sig = 0; sig <= 1; sig++) {
		matcher_filter_info(m, sig, &a);
		matcher_filter_info(copy, sig, &b);
		assert_true(a.fill == b.fill); /* the same bits set */
	}
	/* Only kind sig, on request. */
	after.n = 0;
	matcher_foreach_placed(copy, ENTRY_SIG, save_entry, &after);
	for (size_t i = 0; i < after.n; i++)
		assert_int_equal(after.e[i].kind, ENTRY_SIG);
	assert_int_equal(after.n, matcher_entries(copy, ENTRY_SIG));
	matcher_free(m);
	matcher_free(copy);
}

static struct entry entry_of(const char *text)
{
	struct entry e;

	assert_int_equal(entry_parse(text, &e, NULL, 0), 1);
	return e;
}

/* False positives of the address filter over probes no entry holds (10.128/9, entries are in 10.0/9). */
static unsigned false_positives(const struct matcher *m, unsigned probes)
{
	char text[64];
	unsigned n = 0;

	for (unsigned i = 0; i < probes; i++) {
		snprintf(text, sizeof(text), "addr 10.%u.%u.%u", 128 + i / 65536, i / 256 % 256, i % 256);
		struct entry e = entry_of(text);
		bool says;
		assert_false(matcher_lookup(m, &e, &says));
		n += says;
	}
	return n;
}

/*
 * A start's online build holds every entry at once but is not the offline
 * placement; a rebuild with rounds is, and its filter says yes to fewer of
 * the addresses no entry holds (two-choice's offline edge).
 */
static void online_build_then_offline(void **state)
{
	struct matcher_config cfg = { .layout = FILTER_BLOCKED, .choices = 2, .bits_per_entry = 8, .window = 4 };
	struct matcher *m = matcher_new(&cfg, NULL, 0);
	char text[64];

	(void)state;
	assert_non_null(m);
	assert_true(matcher_optimised(m) == false);
	for (unsigned i = 0; i < 20000; i++) {
		snprintf(text, sizeof(text), "addr 10.%u.%u.%u", i / 65536, i / 256 % 256, i % 256);
		struct entry e = entry_of(text);
		assert_int_equal(matcher_add(m, &e, NULL, 0), 0);
	}
	assert_int_equal(matcher_build_online(m, NULL, 0), 0);
	assert_false(matcher_optimised(m));
	for (unsigned i = 0; i < 20000; i++) {
		snprintf(text, sizeof(text), "addr 10.%u.%u.%u", i / 65536, i / 256 % 256, i % 256);
		struct entry e = entry_of(text);
		bool says;
		assert_true(matcher_lookup(m, &e, &says));
		assert_true(says);
	}
	unsigned online = false_positives(m, 200000);
	assert_int_equal(matcher_build(m, NULL, 0), 0); /* the rounds, from the online placement */
	assert_true(matcher_optimised(m));
	unsigned offline = false_positives(m, 200000);
	print_message("# false positives in 200,000: online %u, offline %u\n", online, offline);
	assert_true(offline < online);
	matcher_free(m);
}

struct named {
	char seen[16][64];
	int n;
};

static void note_named(void *ctx, enum entry_kind kind, const uint8_t *key, size_t len)
{
	struct named *nd = ctx;
	char value[ENTRY_TEXT_MAX];

	assert_true(nd->n < 16);
	snprintf(nd->seen[nd->n++], sizeof(nd->seen[0]), "%s %s", entry_kind_name(kind),
		 entry_format_value(kind, key, len, value, sizeof(value)));
}

/* Whether the entry written as text (as an entry list writes it) was named. */
static bool was_named(const struct named *nd, const char *text)
{
	struct entry e = entry_of(text);
	char value[ENTRY_TEXT_MAX], named[64];

	snprintf(named, sizeof(named), "%s %s", entry_kind_name(e.kind),
		 entry_format_value(e.kind, e.key, e.len, value, sizeof(value)));
	for (int i = 0; i < nd->n; i++)
		if (strcmp(nd->seen[i], named) == 0)
			return true;
	return false;
}

/*
 * A list's new version swapped in (staged under a spare holder, reheld onto
 * the list's) names, for the views outside the matcher, the entries it
 * added and dropped, not the ones it kept nor the staging itself; the
 * spare holder alone is reported as moved from. A copy replaying the log
 * still ends equal.
 */
static void rehold_names_its_diff(void **state)
{
	struct matcher_config cfg = { .layout = FILTER_BLOCKED, .choices = 2, .bits_per_entry = 16, .window = 4 };
	struct matcher *m = matcher_new(&cfg, NULL, 0);
	const char *old[] = { "addr 192.0.2.1", "addr 192.0.2.2", "net 198.51.100.0/24", "sig \"keep-me\"", "sig \"drop-me\"" };
	const char *next[] = { "addr 192.0.2.1", "addr 192.0.2.3", "net 198.51.100.0/24", "sig \"keep-me\"", "sig \"new-one\"" };
	struct matcher_log *log = matcher_log_new();
	struct named nd = { .n = 0 };
	uint32_t reheld;
	char err[256];

	(void)state;
	assert_int_equal(matcher_build(m, NULL, 0), 0);
	for (int i = 0; i < 5; i++) {
		struct entry e = entry_of(old[i]);
		assert_int_equal(matcher_hold(m, &e, 2, NULL, 0), 0);
	}
	struct matcher *copy = matcher_clone(m);
	assert_non_null(copy);
	matcher_record(m, log);
	for (int i = 0; i < 5; i++) {
		struct entry e = entry_of(next[i]);
		assert_true(matcher_hold(m, &e, 1u << 31, NULL, 0) >= 0);
	}
	assert_int_equal(matcher_log_entries(log, note_named, &nd, &reheld), 0);
	assert_int_equal(nd.n, 0); /* the version being staged is no one's yet */
	assert_counts_kept(m);
	matcher_rehold(m, 1u << 31, 2, NULL);
	assert_int_equal(matcher_log_entries(log, note_named, &nd, &reheld), 0);
	assert_int_equal(reheld, 1u << 31);
	assert_int_equal(nd.n, 4);
	assert_true(was_named(&nd, "addr 192.0.2.2"));
	assert_true(was_named(&nd, "addr 192.0.2.3"));
	assert_true(was_named(&nd, "sig \"drop-me\""));
	assert_true(was_named(&nd, "sig \"new-one\""));
	assert_int_equal(matcher_replay(copy, log, err, sizeof(err)), 0);
	assert_counts_kept(copy);
	for (int i = 0; i < 5; i++) {
		struct entry e = entry_of(next[i]);
		assert_int_equal(matcher_holders(copy, &e), 2);
	}
	struct entry gone = entry_of("addr 192.0.2.2");
	bool says;
	assert_false(matcher_lookup(copy, &gone, &says));
	/* A rebuild moves no entry between holders: the views need not look at all of them; a copy is made again. */
	matcher_log_clear(log);
	assert_int_equal(matcher_build(m, NULL, 0), 0);
	nd.n = 0;
	assert_int_equal(matcher_log_entries(log, note_named, &nd, &reheld), 0);
	assert_int_equal(nd.n, 0);
	assert_int_equal(matcher_replay(copy, log, err, sizeof(err)), -1);
	matcher_record(m, NULL);
	matcher_log_free(log);
	matcher_free(copy);
	assert_counts_kept(m);
	matcher_free(m);
}

/* An entry stays while any holder holds it; rehold swaps a staged version in whole, for every kind. */
static void holders_keep_entries(void **state)
{
	struct matcher_config cfg = { .layout = FILTER_BLOCKED, .choices = 2, .bits_per_entry = 16, .window = 4 };
	struct matcher *m = matcher_new(&cfg, NULL, 0);
	const char *texts[] = { "addr 192.0.2.1", "net 198.51.100.0/24", "pair 192.0.2.1 192.0.2.2", "sig \"abcdef\"",
				"sig \"abcdxy\"", "addr 2001:db8::1" };
	struct entry e[6];
	uint32_t left;
	uint64_t gained;
	bool filter;

	(void)state;
	for (int i = 0; i < 6; i++)
		e[i] = entry_of(texts[i]);
	assert_int_equal(matcher_build(m, NULL, 0), 0);
	/* list 1 holds 0..3, local (bit 0) holds 3..4 */
	for (int i = 0; i < 4; i++)
		assert_int_equal(matcher_hold(m, &e[i], 2, NULL, 0), 0);
	assert_int_equal(matcher_add(m, &e[3], NULL, 0), 1);
	assert_int_equal(matcher_add(m, &e[4], NULL, 0), 0);
	assert_int_equal(matcher_holders(m, &e[3]), 3);
	/* releasing one holder keeps an entry another holds */
	assert_int_equal(matcher_release(m, &e[3], 1, &left), 0);
	assert_int_equal(left, 2);
	assert_true(matcher_lookup(m, &e[3], &filter));
	assert_int_equal(matcher_release(m, &e[5], 1, &left), 1);
	/* list 1's next version, staged under bit 31: 1, 3 and 5 (0 and 2 leave it) */
	int next[] = { 1, 3, 5 };
	for (int i = 0; i < 3; i++)
		assert_true(matcher_hold(m, &e[next[i]], 1u << 31, NULL, 0) >= 0);
	assert_true(matcher_lookup(m, &e[0], &filter)); /* the old version answers until the swap */
	assert_int_equal(matcher_rehold(m, 1u << 31, 2, &gained), 2);
	assert_int_equal(gained, 1);
	assert_false(matcher_lookup(m, &e[0], &filter));
	assert_false(matcher_lookup(m, &e[2], &filter));
	for (int i = 0; i < 3; i++)
		assert_int_equal(matcher_holders(m, &e[next[i]]), 2);
	assert_int_equal(matcher_holders(m, &e[4]), 1);
	/* a flush: list 1 lets go of everything; local's entry stays */
	assert_int_equal(matcher_rehold(m, 0, 2, NULL), 3);
	assert_int_equal(matcher_entries(m, ENTRY_ADDR) + matcher_entries(m, ENTRY_NET) + matcher_entries(m, ENTRY_PAIR), 0);
	assert_int_equal(matcher_entries(m, ENTRY_SIG), 1);
	assert_true(matcher_lookup(m, &e[4], &filter));
	assert_counts_kept(m);
	matcher_free(m);
}

/*
 * A list's version among many entries of another list (so that most blocks of
 * entries hold neither of its bits and are passed over whole): every entry's
 * holders after the rehold are what rehold makes of them, one by one.
 */
static void rehold_among_many(void **state)
{
	enum { N = 6000 };
	const uint32_t other = 1u << 3, list = 2, staged = 1u << 31;
	struct matcher_config cfg = { .layout = FILTER_BLOCKED, .choices = 2, .bits_per_entry = 16, .window = 4 };
	struct matcher *m = matcher_new(&cfg, NULL, 0);
	static struct entry e[N];
	static uint32_t want[N];
	uint64_t lost = 0, gained = 0, got;
	struct rng r;
	bool filter;

	(void)state;
	assert_int_equal(matcher_build(m, NULL, 0), 0);
	rng_seed(&r, 11);
	for (uint32_t i = 0; i < N; i++) {
		e[i] = (struct entry){ .kind = ENTRY_ADDR, .len = 4 };
		memcpy(e[i].key, &(uint32_t){ 0x0a000000u + i }, 4);
		uint32_t h = (rng_below(&r, 4) ? other : 0) | (rng_below(&r, 300) ? 0 : list) |
			     (rng_below(&r, 300) ? 0 : staged);
		if (h)
			assert_int_equal(matcher_hold(m, &e[i], h, NULL, 0), 0);
		want[i] = h & ~staged & ~list;
		if (h & staged)
			want[i] |= list;
		lost += (h & list) && !(h & staged);
		gained += (h & staged) && !(h & list);
	}
	assert_int_equal(matcher_rehold(m, staged, list, &got), lost);
	assert_int_equal(got, gained);
	for (uint32_t i = 0; i < N; i++) {
		assert_int_equal(matcher_holders(m, &e[i]), want[i]);
		assert_int_equal(matcher_lookup(m, &e[i], &filter), want[i] != 0);
	}
	assert_counts_kept(m);
	matcher_free(m);
}

struct walked {
	uint32_t held;
	unsigned delivered, wrong;
	bool seen[4000];         /* by the entry's number (addresses 10.0.x.y: 256x + y) */
};

static int note_walked(void *ctx, const struct entry *e, unsigned group, uint32_t holders)
{
	struct walked *w = ctx;

	(void)group;
	w->delivered++;
	w->wrong += !(holders & w->held);
	if (e->kind == ENTRY_ADDR && e->len == 4)
		w->seen[e->key[2] * 256 + e->key[3]] = true;
	return 0;
}

static struct entry numbered(unsigned i)
{
	char text[64];

	snprintf(text, sizeof(text), "addr 10.0.%u.%u", i / 256, i % 256);
	return entry_of(text);
}

/*
 * A walk for one holder visits every entry it holds (removals of others in
 * between, which move entries), hands over no other, and passes over the
 * rest at a fraction of a visit each.
 */
static void walk_by_holder(void **state)
{
	struct matcher_config cfg = { .layout = FILTER_BLOCKED, .choices = 2, .bits_per_entry = 16, .window = 4 };
	struct matcher *m = matcher_new(&cfg, NULL, 0);
	struct walked w = { .held = 4 };
	struct matcher_cursor cur = { .started = false };
	struct entry e;
	uint32_t left;
	unsigned steps = 0, n = 3000;

	(void)state;
	assert_int_equal(matcher_build(m, NULL, 0), 0);
	for (unsigned i = 0; i < n; i++) {
		e = numbered(i);
		assert_int_equal(matcher_hold(m, &e, i % 10 ? 2 : 2 | 4, NULL, 0), 0);
	}
	e = entry_of("sig \"abcdef\"");
	assert_int_equal(matcher_hold(m, &e, 4, NULL, 0), 0);
	e = entry_of("sig \"uvwxyz\"");
	assert_int_equal(matcher_hold(m, &e, 2, NULL, 0), 0);
	unsigned gone = 1;
	while (cur.part < 2) {
		matcher_walk(m, 0, 4, &cur, 8, note_walked, &w);
		steps++;
		/* An entry bit 4 does not hold leaves: the last one moves into its place. */
		for (int k = 0; k < 3 && gone < n; gone += 10, k++) {
			e = numbered(gone);
			assert_int_equal(matcher_release(m, &e, 2, &left), 0);
		}
	}
	for (unsigned i = 0; i < n; i += 10)
		assert_true(w.seen[i]);
	assert_int_equal(w.wrong, 0);
	assert_true(w.delivered >= n / 10 + 1); /* one moved ahead of the walk is visited twice */
	assert_true(steps <= w.delivered / 8 + 2);
	/* A holder with no entries: passed over in blocks, 32 x 16 times as fast as visited. */
	cur = (struct matcher_cursor){ .started = false };
	w = (struct walked){ .held = 8 };
	for (steps = 0; cur.part < 2; steps++)
		matcher_walk(m, 0, 8, &cur, 8, note_walked, &w);
	assert_int_equal(w.delivered, 0);
	assert_true(steps <= matcher_entries_all(m) / (8 * 32 * 16) + 3);
	matcher_free(m);
}

/* A copy shares nothing: what happens to the original afterwards leaves it as it was. */
static void clone_stands_alone(void **state)
{
	struct matcher_config cfg = { .layout = FILTER_BLOCKED, .choices = 2, .bits_per_entry = 16, .window = 4 };
	struct matcher *m = matcher_new(&cfg, NULL, 0), *copy;
	const char *texts[] = { "addr 192.0.2.1", "net 198.51.100.0/24", "pair 192.0.2.1 192.0.2.2", "sig \"abcdef\"" };
	struct entry e[4];
	bool filter;

	(void)state;
	for (int i = 0; i < 4; i++) {
		e[i] = entry_of(texts[i]);
		assert_int_equal(matcher_add(m, &e[i], NULL, 0), 0);
	}
	assert_int_equal(matcher_build(m, NULL, 0), 0);
	uint64_t before = matcher_changes(m);
	copy = matcher_clone(m);
	assert_non_null(copy);
	for (int i = 0; i < 4; i++)
		assert_int_equal(matcher_remove(m, &e[i]), 0);
	assert_true(matcher_changes(m) > before);
	assert_int_equal(matcher_changes(copy), before);
	for (int i = 0; i < 4; i++) {
		assert_false(matcher_lookup(m, &e[i], &filter));
		assert_true(matcher_lookup(copy, &e[i], &filter));
		assert_true(filter);
	}
	matcher_free(m);
	matcher_free(copy);
}

/* Hundreds of signatures behind one window: every one is found (the chain outlives growth). */
static void many_signatures_share_a_window(void **state)
{
	struct matcher_config cfg = { .layout = FILTER_BLOCKED, .choices = 2, .bits_per_entry = 16, .window = 8 };
	struct matcher *m = matcher_new(&cfg, NULL, 0);
	struct matcher_hit hits[MATCHER_MAX_HITS];
	struct entry e = { .kind = ENTRY_SIG, .len = 11 };
	uint8_t payload[11];

	(void)state;
	for (int i = 0; i < 300; i++) {
		snprintf((char *)e.key, sizeof(e.key), "payload-%03d", i);
		assert_int_equal(matcher_add(m, &e, NULL, 0), 0);
	}
	assert_int_equal(matcher_build(m, NULL, 0), 0);
	for (int i = 0; i < 300; i++) {
		snprintf((char *)e.key, sizeof(e.key), "payload-%03d", i);
		assert_int_equal(matcher_add(m, &e, NULL, 0), 1); /* present already */
		memcpy(payload, e.key, sizeof(payload));
		struct packet_view v = { .payload = payload, .payload_len = sizeof(payload) };
		assert_int_equal(matcher_check(m, &v, hits, MATCHER_MAX_HITS), 1);
	}
	matcher_free(m);
}

/*
 * Signatures that share their first window ("GET /wp-" and then their own
 * bytes) each take a window of their own, so a packet of that prefix
 * repeated checks each position against a few at most; each is still found
 * wherever it stands, at its own start.
 */
static void shared_prefixes_spread_over_windows(void **state)
{
	struct matcher_config cfg = { .layout = FILTER_BLOCKED, .choices = 2, .bits_per_entry = 16, .window = 8 };
	struct matcher *m = matcher_new(&cfg, NULL, 0);
	static struct matcher_hit hits[MATCHER_MAX_HITS];
	static uint8_t payload[1400];
	static struct entry sigs[3000];
	struct rng r;

	(void)state;
	rng_seed(&r, 29);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		sigs[i] = (struct entry){ .kind = ENTRY_SIG, .len = 20 };
		memcpy(sigs[i].key, "GET /wp-", 8);
		for (int b = 8; b < 20; b++)
			sigs[i].key[b] = (uint8_t)('a' + rng_below(&r, 26));
		assert_int_equal(matcher_add(m, &sigs[i], NULL, 0), 0);
	}
	assert_int_equal(matcher_build(m, NULL, 0), 0);
	assert_true(matcher_sig_window_max(m) <= 2);
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)"GET /wp-"[i % 8];
	struct packet_view v = { .payload = payload, .payload_len = sizeof(payload) };
	uint64_t positives = matcher_counters(m, ENTRY_SIG)->positives;
	assert_int_equal(matcher_check(m, &v, hits, MATCHER_MAX_HITS), 0);
	/* The shared prefix indexes no signature: its 174 places in the packet reach no confirmation. */
	assert_true(matcher_counters(m, ENTRY_SIG)->positives - positives <= 2);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i += 97) {
		static const size_t at[] = { 0, 8, 333, sizeof(payload) - 20 };
		for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++) {
			uint8_t saved[20];
			memcpy(saved, payload + at[k], 20);
			memcpy(payload + at[k], sigs[i].key, 20);
			assert_int_equal(matcher_check(m, &v, hits, MATCHER_MAX_HITS), 1);
			assert_int_equal(hits[0].offset, at[k]);
			v.payload_len = at[k] + 19; /* cut one byte short: not there */
			assert_int_equal(matcher_check(m, &v, hits, MATCHER_MAX_HITS), 0);
			v.payload_len = sizeof(payload);
			memcpy(payload + at[k], saved, 20);
		}
		assert_int_equal(matcher_add(m, &sigs[i], NULL, 0), 1); /* found in whichever window it took */
		bool says;
		assert_true(matcher_lookup(m, &sigs[i], &says) && says);
		assert_int_equal(matcher_remove(m, &sigs[i]), 0);
		assert_false(matcher_lookup(m, &sigs[i], &says));
		assert_int_equal(matcher_add(m, &sigs[i], NULL, 0), 0);
	}
	matcher_free(m);
}

/* Removing every entry empties both filters (large filters: no counter saturates). */
static void removal_clears_the_filters(void **state)
{
	struct matcher_config cfg = { .layout = FILTER_BLOCKED, .choices = 2, .bits_per_entry = 64, .window = 4 };
	struct matcher *m = matcher_new(&cfg, NULL, 0);
	struct entry e[200];
	struct matcher_filter_info info;
	struct rng r;

	(void)state;
	rng_seed(&r, 31);
	for (int i = 0; i < 200; i++) {
		random_entry(&r, &e[i]);
		if (matcher_add(m, &e[i], NULL, 0) != 0)
			e[i].len = 0; /* a repeat: not to be removed twice */
	}
	assert_int_equal(matcher_build(m, NULL, 0), 0);
	for (int i = 0; i < 200; i++)
		if (e[i].len)
			assert_int_equal(matcher_remove(m, &e[i]), 0);
	for (int sig = 0; sig <= 1; sig++) {
		matcher_filter_info(m, sig, &info);
		assert_int_equal(info.entries, 0);
		assert_true(info.fill == 0.0);
	}
	for (int k = ENTRY_ADDR; k <= ENTRY_SIG; k++)
		assert_int_equal(matcher_entries(m, (enum entry_kind)k), 0);
	matcher_free(m);
}

/*
 * Growth past a quarter asks for a rebuild; the rebuild sizes the filter and the wish goes.
 * Two hashes keep the fill far below a half, so only size and FPR ask.
 */
static void rebuild_wanted_on_growth(void **state)
{
	struct matcher_config cfg = { .layout = FILTER_BLOCKED, .choices = 2, .hashes = 2,
				    .bits_per_entry = 16, .window = 8 };
	struct matcher *m = matcher_new(&cfg, NULL, 0);
	struct entry e = { .kind = ENTRY_ADDR, .len = 4 };

	(void)state;
	for (uint32_t i = 0; i < 2000; i++) {
		memcpy(e.key, &i, 4);
		matcher_add(m, &e, NULL, 0);
	}
	assert_int_equal(matcher_build(m, NULL, 0), 0);
	assert_false(matcher_rebuild_wanted(m, 0.001));
	for (uint32_t i = 2000; i < 6000; i++) {
		memcpy(e.key, &i, 4);
		matcher_add(m, &e, NULL, 0);
	}
	assert_true(matcher_rebuild_wanted(m, 0));
	struct matcher_rebuild *r = matcher_rebuild_begin(m, NULL, 2, NULL, NULL, 0);
	assert_false(matcher_rebuild_wanted(m, 0)); /* not while one runs */
	assert_int_equal(matcher_rebuild_copy(m, r, SIZE_MAX, NULL, 0), 1);
	assert_int_equal(matcher_rebuild_run(r, NULL, 0), 0);
	assert_int_equal(matcher_rebuild_finish(m, r, NULL, 0), 0);
	assert_false(matcher_rebuild_wanted(m, 0.001));
	struct matcher_filter_info fi;
	matcher_filter_info(m, 0, &fi);
	assert_true(fi.bits >= 6000 * 16 && fi.bits < 6000 * 16 + 512);
	/* A target the filter cannot meet asks for a rebuild only after a tenth of it changed. */
	assert_false(matcher_rebuild_wanted(m, 1e-9));
	for (uint32_t i = 6000; i < 6700; i++) {
		memcpy(e.key, &i, 4);
		matcher_add(m, &e, NULL, 0);
	}
	assert_true(matcher_rebuild_wanted(m, 1e-9));
	assert_false(matcher_rebuild_wanted(m, 0)); /* 12% more: no resize yet */
	for (uint32_t i = 6700; i < 7600; i++) {
		memcpy(e.key, &i, 4);
		matcher_add(m, &e, NULL, 0);
	}
	assert_true(matcher_rebuild_wanted(m, 0)); /* over a quarter more: resize */
	matcher_free(m);
}

/* A stopped rebuild gives up before its rounds and leaves the filters as they were. */
static void stopped_rebuild_changes_nothing(void **state)
{
	struct matcher_config cfg = { .layout = FILTER_BLOCKED, .choices = 2, .bits_per_entry = 16, .window = 8 };
	struct matcher *m = matcher_new(&cfg, NULL, 0);
	struct entry e = { .kind = ENTRY_ADDR, .len = 4 };
	char err[128];
	bool says;

	(void)state;
	for (uint32_t i = 0; i < 1000; i++) {
		memcpy(e.key, &i, 4);
		matcher_add(m, &e, NULL, 0);
	}
	assert_int_equal(matcher_build(m, NULL, 0), 0);
	struct matcher_rebuild *r = matcher_rebuild_begin(m, NULL, 5, NULL, NULL, 0);
	assert_int_equal(matcher_rebuild_copy(m, r, SIZE_MAX, NULL, 0), 1);
	matcher_rebuild_stop(r);
	assert_int_equal(matcher_rebuild_run(r, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "called off"));
	matcher_rebuild_free(m, r);
	for (uint32_t i = 0; i < 1000; i++) {
		memcpy(e.key, &i, 4);
		assert_true(matcher_lookup(m, &e, &says) && says);
	}
	/* and the next rebuild runs */
	r = matcher_rebuild_begin(m, NULL, 1, NULL, NULL, 0);
	assert_non_null(r);
	assert_int_equal(matcher_rebuild_copy(m, r, SIZE_MAX, NULL, 0), 1);
	assert_int_equal(matcher_rebuild_run(r, NULL, 0), 0);
	assert_int_equal(matcher_rebuild_finish(m, r, NULL, 0), 0);
	matcher_free(m);
}

static void short_signature_refused(void **state)
{
	struct matcher_config cfg = { .layout = FILTER_BLOCKED, .choices = 2, .bits_per_entry = 16, .window = 8 };
	struct matcher *m = matcher_new(&cfg, NULL, 0);
	struct entry e = { .kind = ENTRY_SIG, .len = 3, .key = "abc" };
	char err[128];

	(void)state;
	assert_int_equal(matcher_add(m, &e, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "shorter than the window"));
	matcher_free(m);
	cfg.window = 65;
	assert_null(matcher_new(&cfg, err, sizeof(err)));
	assert_non_null(strstr(err, "window"));
}

/*
 * An IPv6 packet with every prefix length in use and addr and pair entries:
 * 3 + 2 * 129 probes, each net probe with its own key (this once wrote past
 * the net keys' scratch).
 */
static void every_prefix_length_probed(void **state)
{
	struct matcher_config cfg = { .layout = FILTER_BLOCKED, .choices = 2, .bits_per_entry = 16, .window = 8 };
	struct matcher *m = matcher_new(&cfg, NULL, 0);
	struct matcher_hit hits[MATCHER_MAX_HITS];
	struct entry e;
	char text[96];
	uint8_t hdr[32];

	(void)state;
	for (unsigned len = 0; len <= 128; len++) {
		snprintf(text, sizeof(text), "net 2001:db8::1/%u", len);
		assert_int_equal(entry_parse(text, &e, NULL, 0), 1);
		assert_int_equal(matcher_add(m, &e, NULL, 0), 0);
	}
	assert_int_equal(entry_parse("addr 2001:db8::1", &e, NULL, 0), 1);
	assert_int_equal(matcher_add(m, &e, NULL, 0), 0);
	assert_int_equal(entry_parse("pair 2001:db8::1 2001:db8::2", &e, NULL, 0), 1);
	assert_int_equal(matcher_add(m, &e, NULL, 0), 0);
	assert_int_equal(matcher_build(m, NULL, 0), 0);
	assert_int_equal(inet_pton(AF_INET6, "2001:db8::1", hdr), 1);
	assert_int_equal(inet_pton(AF_INET6, "2001:db8::2", hdr + 16), 1);
	struct packet_view v = { .family = 6, .src = hdr, .dst = hdr + 16 };
	/* addr, pair and the 129 nets of the source, 127 of them the destination's too: capped */
	assert_int_equal(matcher_check(m, &v, hits, MATCHER_MAX_HITS), MATCHER_MAX_HITS);
	assert_int_equal(matcher_counters(m, ENTRY_NET)->confirmed, 129 + 127);
	assert_int_equal(matcher_counters(m, ENTRY_NET)->probes, 2 * 129);
	matcher_free(m);
}

/*
 * Batches whose probes outgrow what one query holds (every prefix length of
 * both families: 69 probes an IPv4 packet, 261 an IPv6 one), with packets
 * of no IP and packets past MATCHER_MAX_HITS among them: each packet's hits
 * are those it gets alone.
 */
static void batches_match_one_at_a_time(void **state)
{
	enum simd_level level = test_simd_level(state);
	struct matcher_config cfg = { .layout = FILTER_BLOCKED, .choices = 2, .bits_per_entry = 16, .window = WINDOW };
	struct matcher *m = matcher_new(&cfg, NULL, 0);
	struct batch_check *b = batch_check_new(5);
	static uint8_t frame[SYNTH_MAX_FRAME];
	uint8_t payload[48];
	struct rng r;
	struct entry e;
	char text[96];

	assert_int_equal(matcher_set_simd(m, level), 0);
	for (unsigned len = 0; len <= 128; len++) {
		snprintf(text, sizeof(text), "net 2001:db8::%u/%u", len % 24, len);
		assert_int_equal(entry_parse(text, &e, NULL, 0), 1);
		assert_true(matcher_add(m, &e, NULL, 0) >= 0);
		if (len > 32)
			continue;
		snprintf(text, sizeof(text), "net 10.0.%u.%u/%u", len % 2, len % 24, len);
		assert_int_equal(entry_parse(text, &e, NULL, 0), 1);
		assert_true(matcher_add(m, &e, NULL, 0) >= 0);
	}
	rng_seed(&r, 11);
	for (int i = 0; i < 40; i++) {
		random_entry(&r, &e);
		assert_true(matcher_add(m, &e, NULL, 0) >= 0);
	}
	assert_int_equal(matcher_build(m, NULL, 0), 0);
	for (int i = 0; i < 2000; i++) {
		struct synth_packet p = { .link = 1, .family = rng_below(&r, 2) ? 4 : 6, .proto = 17, .payload = payload };
		random_addr(&r, p.family, p.src);
		random_addr(&r, p.family, p.dst);
		p.payload_len = rng_below(&r, sizeof(payload));
		random_text(&r, payload, p.payload_len);
		size_t len = synth_build(&p, frame);
		if (rng_below(&r, 16) == 0) { /* ARP: no addresses, no payload */
			frame[12] = 0x08, frame[13] = 0x06;
			len = 42;
		}
		batch_add(m, b, frame, len);
	}
	assert_true(b->batches > 20 && b->fullest > 48);
	assert_true(matcher_scratch_hits_dropped(b->one) > 0); /* some packet held more than an event reports */
	batch_check_done(m, b);
	matcher_free(m);
}

/* An entry held only under the staging bit is checked (the filter has it) but is no one's match. */
static void staged_entries_match_no_one(void **state)
{
	struct matcher_config cfg = { .layout = FILTER_BLOCKED, .choices = 2, .bits_per_entry = 16, .window = 4 };
	struct matcher *m = matcher_new(&cfg, NULL, 0);
	struct matcher_hit hits[MATCHER_MAX_HITS];
	struct matcher_found found[MATCHER_MAX_HITS];
	uint8_t hdr[8];
	struct entry src = entry_of("addr 192.0.2.1"), dst = entry_of("addr 192.0.2.2");

	(void)state;
	assert_int_equal(matcher_build(m, NULL, 0), 0);
	assert_int_equal(matcher_hold(m, &src, MATCHER_HOLDER_STAGING, NULL, 0), 0);
	assert_int_equal(matcher_hold(m, &dst, 2, NULL, 0), 0);
	assert_int_equal(inet_pton(AF_INET, "192.0.2.1", hdr), 1);
	assert_int_equal(inet_pton(AF_INET, "192.0.2.2", hdr + 4), 1);
	struct packet_view v = { .family = 4, .src = hdr, .dst = hdr + 4 };
	size_t n = matcher_check(m, &v, hits, MATCHER_MAX_HITS);
	assert_int_equal(n, 2);
	assert_int_equal(matcher_found(m, hits, n, found), 1);
	assert_int_equal(found[0].holders, 2);
	assert_memory_equal(found[0].key, hdr + 4, 4);
	/* once a list holds it too, it is a match, the staging bit with it */
	assert_int_equal(matcher_hold(m, &src, 4, NULL, 0), 1);
	assert_int_equal(matcher_found(m, hits, matcher_check(m, &v, hits, MATCHER_MAX_HITS), found), 2);
	assert_counts_kept(m);
	matcher_free(m);
}

/*
 * A payload longer than the chunks level 1 scans at a time, with signatures
 * at its start, across the chunk boundaries and at its end: each found at
 * its offset, with the eight-at-a-time scan and without.
 */
static void long_payload_signatures(void **state)
{
	struct matcher_config cfg = { .layout = FILTER_BLOCKED, .choices = 2, .bits_per_entry = 16, .window = 8 };
	static const uint32_t at[] = { 0, 1015, 1016, 1017, 1020, 1023, 1024, 2040, 2047, 4090 };
	const size_t nsigs = sizeof(at) / sizeof(at[0]), len = 4100;
	struct matcher_hit hits[MATCHER_MAX_HITS];
	static uint8_t payload[4100];
	struct entry e = { .kind = ENTRY_SIG, .len = 10 };
	struct rng r;

	(void)state;
	rng_seed(&r, 77);
	random_text(&r, payload, len);
	for (size_t i = 0; i < nsigs; i++) {
		struct matcher *m = matcher_new(&cfg, NULL, 0);
		snprintf((char *)e.key, sizeof(e.key), "sig#%05u.", at[i]);
		memcpy(payload + at[i], e.key, e.len);
		assert_int_equal(matcher_add(m, &e, NULL, 0), 0);
		assert_int_equal(matcher_build(m, NULL, 0), 0);
		for (int level = 0; level < SIMD_LEVELS; level++) {
			if (matcher_set_simd(m, (enum simd_level)level) < 0)
				continue; /* not on this CPU */
			struct packet_view v = { .payload = payload, .payload_len = len };
			assert_int_equal(matcher_check(m, &v, hits, MATCHER_MAX_HITS), 1);
			assert_int_equal(hits[0].offset, at[i]);
		}
		matcher_free(m);
	}
}

/* The signature filter has bits_per_window bits a window; a memory budget is shared in proportion. */
static void signature_filter_sized_by_its_own_bits(void **state)
{
	struct matcher_config cfg = { .layout = FILTER_BLOCKED, .choices = 2, .bits_per_entry = 16,
				    .bits_per_window = 8, .window = 8 };
	struct matcher_filter_info fi[2];

	(void)state;
	for (int budget = 0; budget <= 1; budget++) {
		cfg.memory = budget ? 30000 : 0; /* bytes: 240,000 bits */
		struct matcher *m = matcher_new(&cfg, NULL, 0);
		struct entry e = { .kind = ENTRY_ADDR, .len = 4 };
		for (uint32_t i = 0; i < 10000; i++) {
			memcpy(e.key, &i, 4);
			assert_int_equal(matcher_add(m, &e, NULL, 0), 0);
		}
		e.kind = ENTRY_SIG;
		e.len = 8;
		for (uint64_t i = 0; i < 10000; i++) {
			memcpy(e.key, &i, 8);
			assert_int_equal(matcher_add(m, &e, NULL, 0), 0);
		}
		assert_int_equal(matcher_build(m, NULL, 0), 0);
		matcher_filter_info(m, 0, &fi[0]);
		matcher_filter_info(m, 1, &fi[1]);
		/* 16 : 8 bits a key, in both modes (give or take a block); with the budget, 240,000 in all */
		assert_true(fi[0].bits > 160000 - 1024 && fi[0].bits < 160000 + 1024);
		assert_true(fi[1].bits > 80000 - 1024 && fi[1].bits < 80000 + 1024);
		/* a reload with the same settings changes nothing; new bits a window call for a rebuild */
		assert_int_equal(matcher_reconfigure(m, &cfg, NULL, 0), 0);
		struct matcher_config wider = cfg;
		wider.bits_per_window = 10;
		assert_int_equal(matcher_reconfigure(m, &wider, NULL, 0), 1);
		matcher_free(m);
	}
}

static const struct CMUnitTest tests[] = {
	SIMD_UNIT_TESTS(random_packets_match_the_model),
	SIMD_UNIT_TESTS(rebuilds_lose_nothing),
	cmocka_unit_test(restore_keeps_groups),
	cmocka_unit_test(many_signatures_share_a_window),
	cmocka_unit_test(shared_prefixes_spread_over_windows),
	cmocka_unit_test(removal_clears_the_filters),
	cmocka_unit_test(short_signature_refused),
	cmocka_unit_test(rebuild_wanted_on_growth),
	cmocka_unit_test(stopped_rebuild_changes_nothing),
	cmocka_unit_test(every_prefix_length_probed),
	SIMD_UNIT_TESTS(batches_match_one_at_a_time),
	cmocka_unit_test(long_payload_signatures),
	cmocka_unit_test(signature_filter_sized_by_its_own_bits),
	cmocka_unit_test(online_build_then_offline),
	cmocka_unit_test(rehold_names_its_diff),
	cmocka_unit_test(holders_keep_entries),
	cmocka_unit_test(rehold_among_many),
	cmocka_unit_test(walk_by_holder),
	cmocka_unit_test(staged_entries_match_no_one),
	cmocka_unit_test(clone_stands_alone),
};

TEST_MAIN("matcher", tests)
