/* benchpeers.h - the filter peers make bench measures bloomd's lookups against (bench/benchpeers.cc, C++). */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef BLOOMD_BENCHPEERS_H
#define BLOOMD_BENCHPEERS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum peer_kind {
	PEER_BOOST_MULTIBLOCK32_8,   /* Boost.Bloom filter<uint64_t, 1, fast_multiblock32<8>> */
	PEER_BOOST_MULTIBLOCK64_12,  /* Boost.Bloom filter<uint64_t, 1, fast_multiblock64<12>> */
	PEER_ROCKSDB_FASTLOCAL,      /* RocksDB FastLocalBloomImpl, its own probe count */
};

/* The keys every implementation is given: n members inserted, n strangers looked up. */
struct peer_keys {
	const uint64_t *members, *strangers;
	size_t n;
	double bits_per_key;
};

/* One run: batched unsuccessful lookups, and the same one key at a time through the single-key call. */
struct peer_run {
	double lookup_ns, single_ns;
	uint64_t false_positives;
	size_t bytes;
	unsigned hashes;
};

/* 0, or -1 (no memory, or a member missed). */
int bench_peer_run(enum peer_kind kind, const struct peer_keys *k, struct peer_run *out);

#ifdef __cplusplus
}
#endif

#endif
