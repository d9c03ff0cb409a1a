/* benchfilter.c - bloombench filter and hash: bloomd's filters against libbloom, XXH3 against SipHash. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <bloom.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "cli.h"
#include "counting.h"
#include "filter.h"
#include "hash_inline.h"
#include "rng.h"
#include "sizing.h"

#define KEY_BYTES 16

struct bench_opts {
	uint64_t entries;
	double bits_per_entry;
	unsigned runs;
	bool json;
};

/* One measured run of one implementation. */
struct sample {
	double insert_ns, lookup_ns, member_lookup_ns, single_lookup_ns;
	uint64_t false_positives, queries;
	size_t bytes;
	unsigned hashes;
};

struct impl {
	char name[32];
	enum filter_layout layout; /* bloomd's own */
	unsigned choices;
	enum simd_level simd;      /* the blocked query kernel */
	bool libbloom;
};

#define MAX_IMPLS (2 + 2 * SIMD_LEVELS + 1)

/* bloomd's filters, the blocked ones once per kernel this CPU has, then libbloom last. */
static size_t impls_for_this_cpu(struct impl *out)
{
	size_t n = 0;

	for (unsigned c = 1; c <= 2; c++)
		out[n++] = (struct impl){ .layout = FILTER_CLASSIC, .choices = c, .simd = simd_best() };
	for (unsigned c = 1; c <= 2; c++)
		for (int level = SIMD_LEVELS - 1; level >= 0; level--)
			if (simd_cpu_has((enum simd_level)level))
				out[n++] = (struct impl){ .layout = FILTER_BLOCKED, .choices = c,
							  .simd = (enum simd_level)level };
	for (size_t i = 0; i < n; i++)
		snprintf(out[i].name, sizeof(out[i].name), "%s-c%u%s%s", filter_layout_name(out[i].layout),
			 out[i].choices, out[i].layout == FILTER_BLOCKED ? "/" : "",
			 out[i].layout == FILTER_BLOCKED ? simd_name(out[i].simd) : "");
	out[n++] = (struct impl){ .name = "libbloom", .layout = FILTER_CLASSIC, .choices = 1, .libbloom = true };
	return n;
}

static volatile uint64_t sink; /* keeps the lookups from being optimised away */

static uint8_t *random_keys(uint64_t n, uint64_t seed)
{
	uint8_t *keys = malloc(n * KEY_BYTES);
	struct rng r;

	if (keys == NULL)
		return NULL;
	rng_seed(&r, seed);
	for (uint64_t i = 0; i < n * KEY_BYTES; i += 8) {
		uint64_t w = rng_next(&r);
		memcpy(keys + i, &w, 8);
	}
	return keys;
}

/* Hash and query keys 16 at a time, as the packet path probes: returns the hits. */
static uint64_t lookup_batched(const struct filter *f, const uint8_t *keys, uint64_t n)
{
	struct hash128 h[16];
	bool hit[16];
	uint64_t hits = 0;

	for (uint64_t i = 0; i < n; i += 16) {
		size_t len = n - i < 16 ? (size_t)(n - i) : 16;
		for (size_t j = 0; j < len; j++)
			h[j] = hash_inline_domain(&f->key, 0, keys + (i + j) * KEY_BYTES, KEY_BYTES); /* as the packet path */
		filter_query_batch(f, h, len, hit);
		for (size_t j = 0; j < len; j++)
			hits += hit[j];
	}
	return hits;
}

static int run_bloomd(const struct impl *im, const struct bench_opts *o, const uint8_t *members,
		      const uint8_t *strangers, uint64_t seed, struct sample *s)
{
	struct filter_params p = { .layout = im->layout, .choices = im->choices };
	unsigned rounds = sizing_default_rounds(im->choices);
	struct sizing_choice ch;
	struct hash_key key;
	char err[256];
	uint64_t n = o->entries, hits = 0;

	p.bits = sizing_round_bits(im->layout, (uint64_t)ceil(n * o->bits_per_entry));
	if (sizing_best(im->layout, im->choices, (double)p.bits / n, rounds, &ch, err, sizeof(err)) < 0)
		goto fail;
	p.hashes = ch.hashes;
	hash_key_from_seed(&key, HASH_XXH3, seed);
	struct counting *c = counting_new(&p, &key, seed, err, sizeof(err));
	struct hash128 *hashes = malloc(n * sizeof(*hashes));
	uint8_t *groups = malloc(n);
	if (c == NULL || hashes == NULL || groups == NULL) {
		counting_free(c);
		free(hashes);
		free(groups);
		goto fail;
	}
	double t0 = bench_now_ns();
	for (uint64_t i = 0; i < n; i++) {
		hashes[i] = hash_bytes(&key, members + i * KEY_BYTES, KEY_BYTES);
		groups[i] = (uint8_t)counting_insert(c, hashes[i]);
	}
	s->insert_ns = (bench_now_ns() - t0) / n;
	if (rounds > 1)
		counting_rebuild(c, hashes, groups, n, rounds - 1);
	if (counting_set_simd(c, im->simd) < 0) {
		snprintf(err, sizeof(err), "no %s kernel here", simd_name(im->simd));
		goto fail_free;
	}
	const struct filter *f = counting_filter(c);
	t0 = bench_now_ns();
	for (uint64_t i = 0; i < n; i++)
		hits += filter_query_bytes(f, strangers + i * KEY_BYTES, KEY_BYTES);
	s->single_lookup_ns = (bench_now_ns() - t0) / n;
	sink += hits;
	t0 = bench_now_ns();
	s->false_positives = lookup_batched(f, strangers, n);
	s->lookup_ns = (bench_now_ns() - t0) / n;
	s->queries = n;
	t0 = bench_now_ns();
	hits = lookup_batched(f, members, n);
	s->member_lookup_ns = (bench_now_ns() - t0) / n;
	s->bytes = filter_bytes(f);
	s->hashes = p.hashes;
	counting_free(c);
	free(hashes);
	free(groups);
	return hits == n ? 0 : -1; /* a missed member is a bug, not a result */
fail_free:
	counting_free(c);
	free(hashes);
	free(groups);
fail:
	fprintf(stderr, BENCH_PROG ": %s: %s\n", im->name, err);
	return -1;
}

static int run_libbloom(const struct bench_opts *o, const uint8_t *members,
			const uint8_t *strangers, struct sample *s)
{
	struct bloom b;
	uint64_t n = o->entries, hits = 0;
	/* libbloom sizes from an error rate: bits = n ln(p) / ln(2)^2, so invert that. */
	double p = exp(-o->bits_per_entry * log(2) * log(2));

	if (bloom_init(&b, (int)n, p) != 0) {
		fprintf(stderr, BENCH_PROG ": libbloom: bloom_init failed\n");
		return -1;
	}
	double t0 = bench_now_ns();
	for (uint64_t i = 0; i < n; i++)
		bloom_add(&b, members + i * KEY_BYTES, KEY_BYTES);
	s->insert_ns = (bench_now_ns() - t0) / n;
	t0 = bench_now_ns();
	for (uint64_t i = 0; i < n; i++)
		hits += bloom_check(&b, strangers + i * KEY_BYTES, KEY_BYTES) == 1;
	s->lookup_ns = s->single_lookup_ns = (bench_now_ns() - t0) / n;
	s->false_positives = hits;
	s->queries = n;
	hits = 0;
	t0 = bench_now_ns();
	for (uint64_t i = 0; i < n; i++)
		hits += bloom_check(&b, members + i * KEY_BYTES, KEY_BYTES) == 1;
	s->member_lookup_ns = (bench_now_ns() - t0) / n;
	sink += hits;
	s->bytes = (size_t)b.bytes;
	s->hashes = (unsigned)b.hashes;
	bloom_free(&b);
	return 0;
}

struct row {
	const char *impl;
	double insert_ns, lookup_ns, member_lookup_ns, single_lookup_ns, fpr;
	size_t bytes;
	unsigned hashes;
};

static int bench_filter(const struct bench_opts *o, const struct impl *impls, size_t nimpl,
			struct row *rows)
{
	uint8_t *members = random_keys(o->entries, 1), *strangers = random_keys(o->entries, 2);
	double ins[BENCH_MAX_RUNS], look[BENCH_MAX_RUNS], mem[BENCH_MAX_RUNS], single[BENCH_MAX_RUNS];

	if (members == NULL || strangers == NULL) {
		fprintf(stderr, BENCH_PROG ": out of memory for %llu keys\n", (unsigned long long)o->entries);
		return -1;
	}
	for (size_t i = 0; i < nimpl; i++) {
		uint64_t fp = 0, queries = 0;
		struct sample s = { 0 };
		for (unsigned r = 0; r < o->runs; r++) {
			int rc = impls[i].libbloom ? run_libbloom(o, members, strangers, &s)
						   : run_bloomd(&impls[i], o, members, strangers, 100 + r, &s);
			if (rc < 0)
				return -1;
			ins[r] = s.insert_ns;
			look[r] = s.lookup_ns;
			mem[r] = s.member_lookup_ns;
			single[r] = s.single_lookup_ns;
			fp += s.false_positives;
			queries += s.queries;
		}
		rows[i] = (struct row){ impls[i].name, bench_median(ins, o->runs), bench_median(look, o->runs),
					bench_median(mem, o->runs), bench_median(single, o->runs),
					(double)fp / queries, s.bytes, s.hashes };
	}
	free(members);
	free(strangers);
	return 0;
}

static void print_filter(const struct bench_opts *o, const struct row *rows, size_t n)
{
	const struct row *peer = &rows[n - 1];

	if (o->json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(arr, json_pack("{s:s,s:f,s:f,s:f,s:f,s:f,s:I,s:i}",
				"impl", rows[i].impl, "lookup_ns", rows[i].lookup_ns,
				"single_lookup_ns", rows[i].single_lookup_ns,
				"member_lookup_ns", rows[i].member_lookup_ns, "insert_ns", rows[i].insert_ns,
				"fpr", rows[i].fpr, "bytes", (json_int_t)rows[i].bytes,
				"hashes", (int)rows[i].hashes));
		json_t *top = json_pack("{s:o}", "rows", arr);
		cli_print_json(top);
		return;
	}
	printf("filter: %llu entries, %.1f bits/entry, median of %u runs (16-byte keys, hashing included)\n",
	       (unsigned long long)o->entries, o->bits_per_entry, o->runs);
	printf("%-17s %3s %10s %10s %10s %10s %11s %9s %9s %9s\n", "impl", "k", "lookup_ns",
	       "single_ns", "member_ns", "insert_ns", "fpr", "bytes", "speedup", "single");
	for (size_t i = 0; i < n; i++)
		printf("%-17s %3u %10.1f %10.1f %10.1f %10.1f %11.3e %9zu %8.2fx %8.2fx\n", rows[i].impl,
		       rows[i].hashes, rows[i].lookup_ns, rows[i].single_lookup_ns,
		       rows[i].member_lookup_ns, rows[i].insert_ns, rows[i].fpr, rows[i].bytes,
		       peer->lookup_ns / rows[i].lookup_ns, peer->lookup_ns / rows[i].single_lookup_ns);
	printf("lookup_ns: non-members hashed and queried 16 at a time (the packet path's batch);\n"
	       "single_ns: one key at a time; speedup: libbloom's lookup time over this one's.\n"
	       "blocked-cC/LEVEL: the blocked query kernel for that SIMD level (all the CPU has).\n"
	       "insert_ns: bloomd's online greedy insert into the counting store; libbloom sets bits.\n");
}

int bench_filter_cmd(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "entries", required_argument, NULL, 'n' },
		{ "bits-per-entry", required_argument, NULL, 'b' },
		{ "runs", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct bench_opts o = { .entries = 1000000, .bits_per_entry = 16, .runs = 5 };
	struct impl impls[MAX_IMPLS];
	struct row rows[MAX_IMPLS];
	size_t nimpl = impls_for_this_cpu(impls);
	int c, rc = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'n': rc |= cli_u64(BENCH_PROG, "--entries", optarg, 1000, 1ULL << 30, &o.entries); break;
		case 'b': rc |= cli_double(BENCH_PROG, "--bits-per-entry", optarg, 2, 64, &o.bits_per_entry); break;
		case 'r': rc |= cli_unsigned(BENCH_PROG, "--runs", optarg, 1, BENCH_MAX_RUNS, &o.runs); break;
		case 'j': o.json = true; break;
		default: return 2;
		}
	}
	if (rc != 0)
		return 2;
	if (bench_filter(&o, impls, nimpl, rows) < 0)
		return 1;
	print_filter(&o, rows, nimpl);
	return 0;
}

/* ns per hash of 4-, 16- and 64-byte keys with each algorithm. */
int bench_hash(int argc, char **argv)
{
	static const size_t lens[] = { 4, 16, 64 };
	const uint64_t n = 4000000;
	bool json = argc > 1 && strcmp(argv[1], "--json") == 0;
	uint8_t *keys = random_keys(n / 4 + 8, 3);
	json_t *arr = json_array();

	if (keys == NULL)
		return 1;
	if (!json)
		printf("hash: ns per 128-bit keyed hash (median of 5 runs)\n%-10s %6s %8s\n", "algo", "bytes", "ns");
	for (int algo = HASH_XXH3; algo <= HASH_SIPHASH13; algo++) {
		struct hash_key key;
		hash_key_from_seed(&key, (enum hash_algo)algo, 9);
		for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
			double t[5];
			for (int r = 0; r < 5; r++) {
				uint64_t acc = 0;
				double t0 = bench_now_ns();
				for (uint64_t i = 0; i < n; i++)
					acc += hash_bytes(&key, keys + (i % (n / 4)) * 4, lens[l]).lo;
				t[r] = (bench_now_ns() - t0) / n;
				sink += acc;
			}
			double ns = bench_median(t, 5);
			if (json)
				json_array_append_new(arr, json_pack("{s:s,s:s,s:i,s:f}", "name", "hash",
					"algo", hash_algo_name((enum hash_algo)algo), "bytes", (int)lens[l], "ns", ns));
			else
				printf("%-10s %6zu %8.2f\n", hash_algo_name((enum hash_algo)algo), lens[l], ns);
		}
	}
	if (json) {
		json_t *top = json_pack("{s:o}", "rows", arr);
		cli_print_json(top);
	} else {
		json_decref(arr);
	}
	free(keys);
	return 0;
}
