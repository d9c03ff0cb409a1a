/* benchsimilar.c - bloombench similar: entry sets that look alike against random ones. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "entry.h"
#include "matcher.h"
#include "rng.h"

#define SIG_BYTES 16

/*
 * Entry i of a set. Signatures: 16 bytes, random, or "GET " and then i (the
 * first half of every 8-byte window the same). Addresses: random IPv4, or
 * consecutive ones from 10.0.0.0 (only the last bytes differ).
 */
static void make_entry(enum entry_kind kind, bool similar, uint32_t i, struct rng *r, struct entry *e)
{
	e->kind = kind;
	if (kind == ENTRY_SIG) {
		e->len = SIG_BYTES;
		for (int b = 0; b < SIG_BYTES; b += 8) {
			uint64_t w = rng_next(r);
			memcpy(e->key + b, &w, 8);
		}
		if (similar) {
			memcpy(e->key, "GET ", 4);
			memcpy(e->key + 4, &i, 4);
		}
	} else {
		uint32_t a = similar ? 0x0a000000u + i : (uint32_t)rng_next(r);
		e->len = 4;
		for (int b = 0; b < 4; b++)
			e->key[b] = (uint8_t)(a >> (24 - 8 * b));
	}
}

struct similar_result {
	double load_s, lookup_ns;
};

/* Load n entries (add them all, then build), then look each up: medians over runs. */
static int measure(enum entry_kind kind, bool similar, uint64_t n, unsigned runs,
		   struct similar_result *out)
{
	double load[BENCH_MAX_RUNS], lookup[BENCH_MAX_RUNS];
	struct entry *e = malloc(sizeof(*e));
	struct rng r;

	if (e == NULL)
		return -1;
	for (unsigned run = 0; run < runs; run++) {
		struct matcher *m = bench_matcher(8);
		uint64_t found = 0;
		if (m == NULL)
			return free(e), -1;
		rng_seed(&r, 7 + run);
		double t0 = bench_now_ns();
		for (uint32_t i = 0; i < n; i++) {
			make_entry(kind, similar, i, &r, e);
			matcher_add(m, e, NULL, 0);
		}
		matcher_build(m, NULL, 0);
		load[run] = (bench_now_ns() - t0) / 1e9;
		rng_seed(&r, 7 + run);
		t0 = bench_now_ns();
		for (uint32_t i = 0; i < n; i++) {
			bool says;
			make_entry(kind, similar, i, &r, e);
			found += matcher_lookup(m, e, &says);
		}
		lookup[run] = (bench_now_ns() - t0) / (double)n;
		matcher_free(m);
		if (found != n) {
			fprintf(stderr, BENCH_PROG ": similar: %llu of %llu entries found\n", (unsigned long long)found,
				(unsigned long long)n);
			return free(e), -1;
		}
	}
	out->load_s = bench_median(load, runs);
	out->lookup_ns = bench_median(lookup, runs);
	free(e);
	return 0;
}

int bench_similar(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "entries", required_argument, NULL, 'n' },
		{ "runs", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t n = 100000;
	unsigned runs = 3;
	bool json = false;
	int c, rc = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'n': rc |= cli_u64(BENCH_PROG, "--entries", optarg, 1000, 10000000, &n); break;
		case 'r': rc |= cli_unsigned(BENCH_PROG, "--runs", optarg, 1, BENCH_MAX_RUNS, &runs); break;
		case 'j': json = true; break;
		default: return 2;
		}
	}
	if (rc != 0)
		return 2;
	json_t *rows = json_array();
	if (!json)
		printf("similar: %llu entries alike (signatures sharing their first 4 bytes, consecutive "
		       "addresses) against random ones, median of %u runs\n%-10s %12s %12s %8s %14s %14s %8s\n",
		       (unsigned long long)n, runs, "kind", "load_s", "similar_s", "ratio", "lookup_ns",
		       "similar_ns", "ratio");
	for (int k = 0; k < 2; k++) {
		enum entry_kind kind = k ? ENTRY_ADDR : ENTRY_SIG;
		struct similar_result random, similar;
		if (measure(kind, false, n, runs, &random) < 0 || measure(kind, true, n, runs, &similar) < 0)
			return json_decref(rows), 1;
		json_array_append_new(rows, json_pack("{s:s,s:I,s:f,s:f,s:f,s:f}", "kind", entry_kind_name(kind),
			"entries", (json_int_t)n, "load_s", random.load_s, "similar_load_s", similar.load_s,
			"lookup_ns", random.lookup_ns, "similar_lookup_ns", similar.lookup_ns));
		if (!json)
			printf("%-10s %12.3f %12.3f %7.2fx %14.1f %14.1f %7.2fx\n", entry_kind_name(kind),
			       random.load_s, similar.load_s, similar.load_s / random.load_s, random.lookup_ns,
			       similar.lookup_ns, similar.lookup_ns / random.lookup_ns);
	}
	if (json)
		cli_print_json(json_pack("{s:o}", "rows", rows));
	else
		json_decref(rows);
	return 0;
}
