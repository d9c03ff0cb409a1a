/* benchbest.c - bloombench peers: bloomd's blocked filter against the fastest peers, Boost.Bloom and RocksDB's. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "benchpeers.h"
#include "cli.h"
#include "counting.h"
#include "filter.h"
#include "hash_inline.h"
#include "rng.h"
#include "sizing.h"

#define BATCH 256 /* keys a batched call is given: the signature path gives up to 1024 */

struct peers_opts {
	char sizes[128];
	double bits_per_key;
	unsigned runs;
	bool json;
};

/* One implementation: bloomd's blocked filter with c choices, or a peer. */
struct contender {
	const char *name;
	unsigned choices;          /* bloomd's; 0: a peer */
	enum peer_kind peer;
	double batched[BENCH_MAX_RUNS], single[BENCH_MAX_RUNS];
	uint64_t false_positives, queries;
	size_t bytes;
	unsigned hashes;
};

static volatile uint64_t sink;

static uint64_t *random_u64(size_t n, uint64_t seed)
{
	uint64_t *keys = malloc(n * sizeof(*keys));
	struct rng r;

	rng_seed(&r, seed);
	for (size_t i = 0; keys && i < n; i++)
		keys[i] = rng_next(&r);
	return keys;
}

/* bloomd's blocked filter, c choices, built as the daemon builds it (offline rounds), on 8-byte keys. */
static int run_bloomd(unsigned c, const struct peer_keys *k, uint64_t seed, struct peer_run *out)
{
	struct filter_params p = { .layout = FILTER_BLOCKED, .choices = c };
	unsigned rounds = sizing_default_rounds(c);
	struct sizing_choice ch;
	struct hash_key key;
	char err[256];

	p.bits = sizing_round_bits(FILTER_BLOCKED, (uint64_t)ceil(k->n * k->bits_per_key));
	if (sizing_best(FILTER_BLOCKED, c, (double)p.bits / k->n, rounds, &ch, err, sizeof(err)) < 0)
		return -1;
	p.hashes = ch.hashes;
	hash_key_from_seed(&key, HASH_XXH3, seed);
	struct counting *cs = counting_new(&p, &key, seed, err, sizeof(err));
	struct hash128 *hashes = malloc(k->n * sizeof(*hashes));
	uint8_t *groups = malloc(k->n);
	int rc = -1;
	if (cs == NULL || hashes == NULL || groups == NULL)
		goto out;
	for (size_t i = 0; i < k->n; i++) {
		hashes[i] = hash_bytes(&key, &k->members[i], 8);
		groups[i] = (uint8_t)counting_insert(cs, hashes[i]);
	}
	if (rounds > 1)
		counting_rebuild(cs, hashes, groups, k->n, rounds - 1);
	const struct filter *f = counting_filter(cs);
	struct hash128 h[BATCH];
	bool hit[BATCH];
	uint64_t fp = 0;
	double t0 = bench_now_ns();
	for (size_t i = 0; i < k->n; i += BATCH) {
		size_t m = k->n - i < BATCH ? k->n - i : BATCH;
		for (size_t j = 0; j < m; j++)
			h[j] = hash_inline_domain(&f->key, 0, &k->strangers[i + j], 8); /* as the packet path hashes */
		filter_query_batch(f, h, m, hit);
		for (size_t j = 0; j < m; j++)
			fp += hit[j];
	}
	out->lookup_ns = (bench_now_ns() - t0) / k->n;
	out->false_positives = fp;
	uint64_t answers = 0;
	t0 = bench_now_ns();
	for (size_t i = 0; i < k->n; i++) /* one key a call, hashed in place as the packet path hashes */
		answers += filter_query(f, hash_inline_domain(&f->key, 0, &k->strangers[i], 8));
	out->single_ns = (bench_now_ns() - t0) / k->n;
	sink += answers;
	uint64_t members = 0;
	for (size_t i = 0; i < k->n; i++)
		members += filter_query_bytes(f, &k->members[i], 8);
	out->bytes = filter_bytes(f);
	out->hashes = p.hashes;
	rc = members == k->n ? 0 : -1; /* a member missed is a bug, not a result */
out:
	counting_free(cs);
	free(hashes);
	free(groups);
	return rc;
}

static int run_one(struct contender *c, const struct peer_keys *k, unsigned r)
{
	struct peer_run run;
	int rc = c->choices ? run_bloomd(c->choices, k, 100 + r, &run) : bench_peer_run(c->peer, k, &run);

	if (rc < 0) {
		fprintf(stderr, BENCH_PROG ": %s: failed (out of memory, or a member missed)\n", c->name);
		return -1;
	}
	c->batched[r] = run.lookup_ns;
	c->single[r] = run.single_ns;
	c->false_positives += run.false_positives;
	c->queries += k->n;
	c->bytes = run.bytes;
	c->hashes = run.hashes;
	return 0;
}

static void spread(const double *v, unsigned n, double *lo, double *hi)
{
	*lo = *hi = v[0];
	for (unsigned i = 1; i < n; i++) {
		*lo = v[i] < *lo ? v[i] : *lo;
		*hi = v[i] > *hi ? v[i] : *hi;
	}
}

static void report(const struct peers_opts *o, size_t n, struct contender *cs, size_t ncs, json_t *rows)
{
	double peer = bench_median(cs[ncs - 3].batched, o->runs), peer_single = bench_median(cs[ncs - 3].single, o->runs);

	for (size_t i = 0; i < ncs; i++) {
		double b = bench_median(cs[i].batched, o->runs), s = bench_median(cs[i].single, o->runs), blo, bhi, slo, shi;
		double fpr = (double)cs[i].false_positives / (double)cs[i].queries;
		spread(cs[i].batched, o->runs, &blo, &bhi);
		spread(cs[i].single, o->runs, &slo, &shi);
		if (rows)
			json_array_append_new(rows, json_pack("{s:s,s:I,s:f,s:f,s:f,s:I,s:i,s:f,s:f}", "impl", cs[i].name,
				"entries", (json_int_t)n, "batched_ns", b, "single_ns", s, "fpr", fpr, "bytes",
				(json_int_t)cs[i].bytes, "hashes", (int)cs[i].hashes, "batched_vs_boost32", b / peer,
				"single_vs_boost32", s / peer_single));
		else
			printf("%9zu %-27s %3u %10.2e %8.1f [%5.1f-%5.1f] %6.2fx %8.1f [%5.1f-%5.1f] %6.2fx %10zu\n", n,
			       cs[i].name, cs[i].hashes, fpr, b, blo, bhi, b / peer, s, slo, shi, s / peer_single,
			       cs[i].bytes);
	}
}

static int parse(int argc, char **argv, struct peers_opts *o)
{
	static const struct option opts[] = {
		{ "sizes", required_argument, NULL, 's' }, { "bits-per-key", required_argument, NULL, 'b' },
		{ "runs", required_argument, NULL, 'r' },  { "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': snprintf(o->sizes, sizeof(o->sizes), "%s", optarg); break;
		case 'b': rc |= cli_double(BENCH_PROG, "--bits-per-key", optarg, 4, 32, &o->bits_per_key); break;
		case 'r': rc |= cli_unsigned(BENCH_PROG, "--runs", optarg, 1, BENCH_MAX_RUNS, &o->runs); break;
		case 'j': o->json = true; break;
		default: return -1;
		}
	}
	return rc;
}

int bench_peers(int argc, char **argv)
{
	struct peers_opts o = { .sizes = "1000000,10000000", .bits_per_key = 16, .runs = 3 };
	json_t *rows = NULL;
	char *save = NULL;

	if (parse(argc, argv, &o) < 0)
		return 2;
	if (o.json)
		rows = json_array();
	else
		printf("peers: bloomd's blocked filter against Boost.Bloom and RocksDB's FastLocalBloom on the same random\n"
		       "64-bit keys, %.0f bits/key, unsuccessful lookups, runs interleaved, medians of %u [min-max];\n"
		       "batched: bloomd %d keys a call (its kernel keeps 8 to 32 keys' lines in flight), Boost's bulk\n"
		       "may_contain over all, RocksDB's prefetch-then-probe of 16; single: one key a call, each hashing\n"
		       "its key in place. Peers built at the baseline, as bloomd is.\n"
		       "%9s %-27s %3s %10s %22s %7s %22s %7s %10s\n",
		       o.bits_per_key, o.runs, BATCH,
		       "entries", "impl", "k", "fpr", "batched_ns", "/boost", "single_ns", "/boost", "bytes");
	for (char *tok = strtok_r(o.sizes, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		struct contender cs[] = {
			{ .name = "bloomd blocked c=2", .choices = 2 },
			{ .name = "bloomd blocked c=1", .choices = 1 },
			{ .name = "boost fast_multiblock32<8>", .peer = PEER_BOOST_MULTIBLOCK32_8 },
			{ .name = "boost fast_multiblock64<12>", .peer = PEER_BOOST_MULTIBLOCK64_12 },
			{ .name = "rocksdb FastLocalBloom", .peer = PEER_ROCKSDB_FASTLOCAL },
		};
		size_t ncs = sizeof(cs) / sizeof(cs[0]), n = strtoull(tok, NULL, 10);
		uint64_t *members = n ? random_u64(n, 1) : NULL, *strangers = n ? random_u64(n, 2) : NULL;
		struct peer_keys k = { members, strangers, n, o.bits_per_key };
		int rc = members && strangers ? 0 : -1;
		for (unsigned r = 0; r < o.runs && rc == 0; r++)
			for (size_t i = 0; i < ncs && rc == 0; i++)
				rc = run_one(&cs[i], &k, r);
		free(members);
		free(strangers);
		if (rc < 0)
			return 1;
		report(&o, n, cs, ncs, rows);
	}
	if (rows)
		cli_print_json(json_pack("{s:o}", "rows", rows));
	else
		printf("/boost: over Boost fast_multiblock32<8>'s time (batched, single).\n");
	return 0;
}
