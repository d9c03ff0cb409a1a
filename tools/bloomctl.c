/* bloomctl.c - the operator's client; `calc` sizes a filter locally, no daemon needed. */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "filter.h"
#include "sizing.h"

#define PROG "bloomctl"

/* Exit codes: 0 success/present, 1 absent, 2 usage or daemon error. */
enum { EXIT_USAGE = 2 };

struct calc_request {
	enum filter_layout layout;
	unsigned choices, rounds;
	uint64_t entries;
	double fpr, bits_per_entry;
	uint64_t memory;
	bool json;
};

struct calc_result {
	uint64_t bits;
	struct sizing_choice choice;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: " PROG " calc --entries N (--fpr P | --bits-per-entry B | --memory SIZE)\n"
		"                [--layout classic|blocked] [--choices C] [--rounds R] [--json]\n");
}

/* Smallest bits per entry whose predicted FPR is at most p (bisection; FPR falls with b). */
static int bits_per_entry_for_fpr(const struct calc_request *rq, double *b, char *err,
				  size_t errlen)
{
	struct sizing_choice ch;
	double lo = 1.0, hi = 64.0;

	if (sizing_best(rq->layout, rq->choices, hi, rq->rounds, &ch, err, errlen) < 0)
		return -1;
	if (ch.fpr > rq->fpr) {
		snprintf(err, errlen, "--fpr %g needs more than 64 bits per entry", rq->fpr);
		return -1;
	}
	for (int i = 0; i < 60; i++) {
		double mid = (lo + hi) / 2;
		if (sizing_best(rq->layout, rq->choices, mid, rq->rounds, &ch, err, errlen) < 0)
			return -1;
		if (ch.fpr <= rq->fpr)
			hi = mid;
		else
			lo = mid;
	}
	*b = hi;
	return 0;
}

static int calc_size(const struct calc_request *rq, struct calc_result *out, char *err,
		     size_t errlen)
{
	double b = rq->bits_per_entry;

	if (rq->memory) {
		/* A budget: round down to whole blocks, never past it. */
		out->bits = rq->memory * 8;
		if (rq->layout == FILTER_BLOCKED)
			out->bits -= out->bits % FILTER_BLOCK_BITS;
	} else {
		if (rq->fpr > 0 && rq->layout == FILTER_CLASSIC && rq->choices == 1)
			out->bits = sizing_bits_for_fpr(rq->entries, rq->fpr); /* the textbook size */
		else if (rq->fpr > 0 && bits_per_entry_for_fpr(rq, &b, err, errlen) < 0)
			return -1;
		if (!(rq->fpr > 0 && rq->layout == FILTER_CLASSIC && rq->choices == 1))
			out->bits = (uint64_t)ceil((double)rq->entries * b);
		out->bits = sizing_round_bits(rq->layout, out->bits);
	}
	if (out->bits < FILTER_MIN_BITS || out->bits < rq->entries) {
		snprintf(err, errlen, "%llu bits is less than one bit per entry for %llu entries",
			 (unsigned long long)out->bits, (unsigned long long)rq->entries);
		return -1;
	}
	return sizing_best(rq->layout, rq->choices, (double)out->bits / (double)rq->entries,
			   rq->rounds, &out->choice, err, errlen);
}

static void calc_print(const struct calc_request *rq, const struct calc_result *r)
{
	uint64_t bytes = (r->bits + 7) / 8;

	if (rq->json) {
		json_t *o = json_pack("{s:s,s:i,s:I,s:I,s:I,s:i,s:i,s:f}", "layout",
				      filter_layout_name(rq->layout), "choices", (int)rq->choices,
				      "entries", (json_int_t)rq->entries, "bits", (json_int_t)r->bits,
				      "bytes", (json_int_t)bytes, "hashes", (int)r->choice.hashes,
				      "rounds", (int)rq->rounds, "fpr_predicted", r->choice.fpr);
		cli_print_json(o);
		return;
	}
	printf("layout          %s\n", filter_layout_name(rq->layout));
	printf("choices         %u\n", rq->choices);
	printf("entries         %llu\n", (unsigned long long)rq->entries);
	printf("bits            %llu (%.2f per entry)\n", (unsigned long long)r->bits,
	       (double)r->bits / (double)rq->entries);
	printf("bytes           %llu (%.2f MiB)\n", (unsigned long long)bytes, bytes / 1048576.0);
	printf("hashes          %u\n", r->choice.hashes);
	printf("rounds          %u%s\n", rq->rounds, rq->rounds > 1 ? " (offline rebuild)" : " (online)");
	printf("fpr_predicted   %.4g\n", r->choice.fpr);
}

static int parse_calc(int argc, char **argv, struct calc_request *rq)
{
	static const struct option opts[] = {
		{ "entries", required_argument, NULL, 'n' }, { "fpr", required_argument, NULL, 'p' },
		{ "bits-per-entry", required_argument, NULL, 'b' },
		{ "memory", required_argument, NULL, 'm' },  { "choices", required_argument, NULL, 'c' },
		{ "layout", required_argument, NULL, 'l' },  { "rounds", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },	     { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int o, rc = 0, sizes = 0;

	optind = 1;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'n': rc |= cli_u64(PROG " calc", "--entries", optarg, 1, 1ULL << 36, &rq->entries); break;
		case 'p': rc |= cli_double(PROG " calc", "--fpr", optarg, 1e-15, 0.5, &rq->fpr); sizes++; break;
		case 'b': rc |= cli_double(PROG " calc", "--bits-per-entry", optarg, 1, 64, &rq->bits_per_entry); sizes++; break;
		case 'c': rc |= cli_unsigned(PROG " calc", "--choices", optarg, 1, FILTER_MAX_CHOICES, &rq->choices); break;
		case 'r': rc |= cli_unsigned(PROG " calc", "--rounds", optarg, 1, 1000, &rq->rounds); break;
		case 'j': rq->json = true; break;
		case 'm':
			sizes++;
			if (sizing_parse_size(optarg, &rq->memory) < 0) {
				fprintf(stderr, PROG " calc: --memory: expected a size such as 4MiB, 512KiB or 1048576, got '%s'\n", optarg);
				rc = -1;
			}
			break;
		case 'l':
			if (filter_layout_parse(optarg, &rq->layout) < 0) {
				fprintf(stderr, PROG " calc: --layout: expected classic or blocked, got '%s'\n", optarg);
				rc = -1;
			}
			break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
	}
	if (rc == 0 && optind < argc) {
		fprintf(stderr, PROG " calc: unexpected argument '%s'\n", argv[optind]);
		rc = -1;
	}
	if (rc == 0 && (rq->entries == 0 || sizes != 1)) {
		fprintf(stderr, PROG " calc: give --entries and exactly one of --fpr, --bits-per-entry, --memory\n");
		rc = -1;
	}
	return rc;
}

static int cmd_calc(int argc, char **argv)
{
	struct calc_request rq = { .layout = FILTER_BLOCKED, .choices = 2 };
	struct calc_result res;
	char err[256];

	if (parse_calc(argc, argv, &rq) < 0)
		return EXIT_USAGE;
	if (rq.rounds == 0)
		rq.rounds = sizing_default_rounds(rq.choices);
	if (calc_size(&rq, &res, err, sizeof(err)) < 0) {
		fprintf(stderr, PROG " calc: %s\n", err);
		return EXIT_USAGE;
	}
	calc_print(&rq, &res);
	return 0;
}

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} COMMANDS[] = {
	{ "calc", cmd_calc },
};

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	for (size_t i = 0; i < sizeof(COMMANDS) / sizeof(COMMANDS[0]); i++)
		if (strcmp(argv[1], COMMANDS[i].name) == 0)
			return COMMANDS[i].run(argc - 1, argv + 1);
	fprintf(stderr, PROG ": unknown command '%s'\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
