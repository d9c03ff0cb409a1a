/* bloombench.c - speed benchmarks of bloomd's parts against peers measured in the same run. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdio.h>
#include <string.h>

#include "bench.h"


int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "filter") == 0)
		return bench_filter_cmd(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "hash") == 0)
		return bench_hash(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "replay") == 0)
		return bench_replay(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "control") == 0)
		return bench_control(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "signatures") == 0)
		return bench_signatures(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "similar") == 0)
		return bench_similar(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "peers") == 0)
		return bench_peers(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "xdp") == 0)
		return bench_xdp(argc - 1, argv + 1);
	fprintf(stderr, "usage: " BENCH_PROG " filter [--entries N] [--bits-per-entry B] [--runs R] [--json]\n"
			"       " BENCH_PROG " hash [--json]\n"
			"       " BENCH_PROG " replay [--packets N] [--entries E] [--runs R] [--no-events] [--stages] [--json]\n"
			"       " BENCH_PROG " peers [--sizes N,N,...] [--bits-per-key B] [--runs R] [--json]\n"
			"       " BENCH_PROG " signatures [--sizes N,N,...] [--megabytes M] [--runs R] [--shared-prefix] [--json]\n"
			"       " BENCH_PROG " control [--entries N] [--packets N] [--rounds R] [--runs R] [--json]\n"
			"       " BENCH_PROG " similar [--entries N] [--runs R] [--json]\n"
			"       " BENCH_PROG " xdp [--sizes N,N] [--runs R] [--repeat N]   (root)\n");
	return 2;
}
