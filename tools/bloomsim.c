/* bloomsim.c - false-positive simulations of two-choice filters (Lumetta & Mitzenmacher). */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <getopt.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "counting.h"
#include "filter.h"
#include "hash.h"
#include "rng.h"
#include "sizing.h"

#define PROG "bloomsim"
#define KEY_BYTES 16

struct sim {
	struct filter_params params;
	enum hash_algo algo;
	uint64_t entries, trials, queries, seed;
	unsigned rounds, threads;
	bool json;
	atomic_uint_fast64_t next_trial;
	struct trial *results;
};

struct trial {
	double fill, fpr_from_fill;
	uint64_t false_positives, false_negatives;
	int failed;
};

static struct hash128 random_key_hash(struct rng *r, const struct hash_key *key)
{
	uint64_t bytes[KEY_BYTES / 8];

	for (size_t i = 0; i < KEY_BYTES / 8; i++)
		bytes[i] = rng_next(r);
	return hash_bytes(key, bytes, sizeof(bytes));
}

/* One trial: insert online, rebuild rounds-1 times, check members, query strangers. */
static void run_trial(const struct sim *sim, uint64_t t, struct trial *out)
{
	struct rng r;
	struct hash_key key;
	struct hash128 *hashes = malloc(sim->entries * sizeof(*hashes));
	uint8_t *groups = malloc(sim->entries);
	struct counting *c = NULL;
	char err[256];

	memset(out, 0, sizeof(*out));
	rng_seed(&r, sim->seed ^ (t * 0x9e3779b97f4a7c15ULL));
	hash_key_from_seed(&key, sim->algo, rng_next(&r));
	if (hashes == NULL || groups == NULL ||
	    (c = counting_new(&sim->params, &key, rng_next(&r), err, sizeof(err))) == NULL) {
		out->failed = 1;
		goto done;
	}
	for (uint64_t i = 0; i < sim->entries; i++) {
		hashes[i] = random_key_hash(&r, &key);
		groups[i] = (uint8_t)counting_insert(c, hashes[i]);
	}
	if (sim->rounds > 1)
		counting_rebuild(c, hashes, groups, sim->entries, sim->rounds - 1);
	const struct filter *f = counting_filter(c);
	for (uint64_t i = 0; i < sim->entries; i++)
		out->false_negatives += !filter_query(f, hashes[i]);
	out->fill = filter_fill(f);
	out->fpr_from_fill = filter_fpr_from_fill(f);
	for (uint64_t q = 0; q < sim->queries; q++)
		out->false_positives += filter_query(f, random_key_hash(&r, &key));
done:
	counting_free(c);
	free(hashes);
	free(groups);
}

static void *worker(void *arg)
{
	struct sim *sim = arg;
	uint64_t t;

	while ((t = atomic_fetch_add(&sim->next_trial, 1)) < sim->trials)
		run_trial(sim, t, &sim->results[t]);
	return NULL;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: " PROG " --layout classic|blocked --entries N --bits M --choices C\n"
		"       --hashes K [--rounds R] [--trials T] [--queries Q] [--seed S]\n"
		"       [--hash xxh3|siphash13] [--threads N] [--json]\n");
}

static int parse_args(int argc, char **argv, struct sim *sim)
{
	static const struct option opts[] = {
		{ "layout", required_argument, NULL, 'l' }, { "entries", required_argument, NULL, 'n' },
		{ "bits", required_argument, NULL, 'm' },   { "choices", required_argument, NULL, 'c' },
		{ "hashes", required_argument, NULL, 'k' }, { "rounds", required_argument, NULL, 'r' },
		{ "trials", required_argument, NULL, 't' }, { "queries", required_argument, NULL, 'q' },
		{ "seed", required_argument, NULL, 's' },   { "threads", required_argument, NULL, 'T' },
		{ "hash", required_argument, NULL, 'H' },   { "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },	    { NULL, 0, NULL, 0 },
	};
	int o, rc = 0;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		const char *name = opts[0].name;
		for (size_t i = 0; opts[i].name; i++)
			if (opts[i].val == o)
				name = opts[i].name;
		switch (o) {
		case 'l': rc |= cli_layout(PROG, "--layout", optarg, &sim->params.layout); break;
		case 'H':
			if (hash_algo_parse(optarg, &sim->algo) < 0) {
				fprintf(stderr, PROG ": --hash: expected xxh3 or siphash13, got '%s'\n", optarg);
				rc = -1;
			}
			break;
		case 'n': rc |= cli_u64(PROG, name, optarg, 1, 1ULL << 32, &sim->entries); break;
		case 'm': rc |= cli_u64(PROG, name, optarg, 1, FILTER_MAX_BITS, &sim->params.bits); break;
		case 'c': rc |= cli_unsigned(PROG, name, optarg, 1, FILTER_MAX_CHOICES, &sim->params.choices); break;
		case 'k': rc |= cli_unsigned(PROG, name, optarg, 1, FILTER_MAX_HASHES, &sim->params.hashes); break;
		case 'r': rc |= cli_unsigned(PROG, name, optarg, 1, 1000, &sim->rounds); break;
		case 't': rc |= cli_u64(PROG, name, optarg, 1, 1000000, &sim->trials); break;
		case 'q': rc |= cli_u64(PROG, name, optarg, 0, 1ULL << 40, &sim->queries); break;
		case 's': rc |= cli_u64(PROG, name, optarg, 0, UINT64_MAX, &sim->seed); break;
		case 'T': rc |= cli_unsigned(PROG, name, optarg, 1, 256, &sim->threads); break;
		case 'j': sim->json = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
		rc = -1;
	}
	return rc;
}

static void report(const struct sim *sim)
{
	double fill = 0, fpr_fill = 0;
	uint64_t fp = 0, fn = 0;
	const struct filter_params *p = &sim->params;
	bool predicted = p->layout == FILTER_CLASSIC && sim->rounds == 1;
	double fill_pred = predicted ? sizing_fill_online((double)p->bits / sim->entries, p->choices, p->hashes) : 0;

	for (uint64_t t = 0; t < sim->trials; t++) {
		fill += sim->results[t].fill;
		fpr_fill += sim->results[t].fpr_from_fill;
		fp += sim->results[t].false_positives;
		fn += sim->results[t].false_negatives;
	}
	fill /= sim->trials;
	fpr_fill /= sim->trials;
	double fpr = sim->queries ? (double)fp / ((double)sim->queries * sim->trials) : 0.0;

	if (sim->json) {
		json_t *o = json_pack("{s:s,s:I,s:I,s:i,s:i,s:i,s:I,s:I,s:f,s:f,s:f,s:o,s:I}",
			"layout", filter_layout_name(p->layout), "entries", (json_int_t)sim->entries,
			"bits", (json_int_t)p->bits, "choices", (int)p->choices, "hashes", (int)p->hashes,
			"rounds", (int)sim->rounds, "trials", (json_int_t)sim->trials,
			"queries", (json_int_t)sim->queries, "fpr_measured", fpr,
			"fpr_from_fill", fpr_fill, "fill", fill,
			"fill_predicted", predicted ? json_real(fill_pred) : json_null(),
			"false_negatives", (json_int_t)fn);
		cli_print_json(o);
		return;
	}
	printf("%s c=%u k=%u m/n=%.2f rounds=%u trials=%llu: fpr_measured=%.4e (%llu/%llu) "
	       "fpr_from_fill=%.4e fill=%.4f",
	       filter_layout_name(p->layout), p->choices, p->hashes, (double)p->bits / sim->entries,
	       sim->rounds, (unsigned long long)sim->trials, fpr, (unsigned long long)fp,
	       (unsigned long long)(sim->queries * sim->trials), fpr_fill, fill);
	if (predicted)
		printf(" fill_predicted=%.4f", fill_pred);
	printf(" false_negatives=%llu\n", (unsigned long long)fn);
}

int main(int argc, char **argv)
{
	struct sim sim = {
		.params = { .layout = FILTER_CLASSIC, .choices = 1 },
		.algo = HASH_XXH3, .rounds = 1, .trials = 1, .queries = 100000, .threads = 1,
	};
	pthread_t tid[256];
	char err[256];

	if (parse_args(argc, argv, &sim) < 0)
		return 2;
	if (sim.entries == 0 || sim.params.bits == 0 || sim.params.hashes == 0) {
		fprintf(stderr, PROG ": --entries, --bits and --hashes are required\n");
		usage(stderr);
		return 2;
	}
	if (filter_params_check(&sim.params, err, sizeof(err)) < 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return 2;
	}
	sim.results = calloc(sim.trials, sizeof(*sim.results));
	if (sim.results == NULL) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	atomic_init(&sim.next_trial, 0);
	for (unsigned i = 0; i < sim.threads; i++)
		if (pthread_create(&tid[i], NULL, worker, &sim) != 0) {
			fprintf(stderr, PROG ": cannot start thread %u\n", i);
			return 1;
		}
	for (unsigned i = 0; i < sim.threads; i++)
		pthread_join(tid[i], NULL);
	for (uint64_t t = 0; t < sim.trials; t++)
		if (sim.results[t].failed) {
			fprintf(stderr, PROG ": out of memory in trial %llu\n", (unsigned long long)t);
			return 1;
		}
	report(&sim);
	for (uint64_t t = 0; t < sim.trials; t++)
		if (sim.results[t].false_negatives) {
			fprintf(stderr, PROG ": false negatives in trial %llu\n", (unsigned long long)t);
			return 1;
		}
	free(sim.results);
	return 0;
}
