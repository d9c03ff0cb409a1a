/* SPDX-License-Identifier: BSD-2-Clause */
// benchpeers.cc - the peers of bloomd's filter lookups, built for make bench only: Boost.Bloom's
// fast_multiblock32<8> and fast_multiblock64<K>, and RocksDB's FastLocalBloom, at the baseline
// (x86-64: Boost's SSE2 code, RocksDB's scalar probes).
#include <boost/bloom.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include "util/bloom_impl.h"
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "benchpeers.h"

namespace {

volatile std::uint64_t sink; // keeps the lookups from being optimised away

double now_ns()
{
	return (double)std::chrono::duration_cast<std::chrono::nanoseconds>(
		       std::chrono::steady_clock::now().time_since_epoch())
		.count();
}

template<typename Filter>
int run_boost(const peer_keys *k, peer_run *out)
{
	using std::size_t;
	std::unique_ptr<Filter> f(new (std::nothrow) Filter((size_t)std::ceil(k->n * k->bits_per_key)));
	if (!f)
		return -1;
	for (size_t i = 0; i < k->n; i++)
		f->insert(k->members[i]);
	std::uint64_t fp = 0;
	double t0 = now_ns();
	f->may_contain(k->strangers, k->strangers + k->n, [&fp](std::uint64_t, bool res) { fp += res; });
	out->lookup_ns = (now_ns() - t0) / k->n;
	out->false_positives = fp;
	std::uint64_t answers = 0;
	t0 = now_ns();
	for (size_t i = 0; i < k->n; i++)
		answers += f->may_contain(k->strangers[i]);
	out->single_ns = (now_ns() - t0) / k->n;
	std::uint64_t members = 0;
	for (size_t i = 0; i < k->n; i++)
		members += f->may_contain(k->members[i]);
	out->bytes = f->capacity() / 8;
	out->hashes = Filter::k * Filter::subfilter::k;
	sink += answers;
	return members == k->n ? 0 : -1; // a member missed is a bug, not a result
}

// RocksDB hashes a key with XXH3 (its GetSliceHash64) and splits the 64 bits in two.
inline void rocksdb_hash(std::uint64_t key, std::uint32_t *h1, std::uint32_t *h2)
{
	std::uint64_t h = XXH3_64bits(&key, sizeof(key));
	*h1 = (std::uint32_t)h;
	*h2 = (std::uint32_t)(h >> 32);
}

int run_rocksdb(const peer_keys *k, peer_run *out)
{
	using rocksdb::FastLocalBloomImpl;
	const std::size_t batch = 16;
	std::uint32_t len = (std::uint32_t)((std::uint64_t)std::ceil(k->n * k->bits_per_key / 8) + 63) & ~63u;
	int probes = FastLocalBloomImpl::ChooseNumProbes((int)std::lround(k->bits_per_key * 1000));
	std::unique_ptr<char[]> data(new (std::nothrow) char[len]());
	if (!data)
		return -1;
	std::uint32_t h1, h2;
	for (std::size_t i = 0; i < k->n; i++) {
		rocksdb_hash(k->members[i], &h1, &h2);
		FastLocalBloomImpl::AddHash(h1, h2, len, probes, data.get());
	}
	// Batched as RocksDB's MultiGet probes: prefetch a batch's lines, then test them.
	std::uint64_t fp = 0;
	double t0 = now_ns();
	for (std::size_t i = 0; i < k->n; i += batch) {
		std::size_t m = k->n - i < batch ? k->n - i : batch;
		std::uint32_t second[batch], offset[batch];
		for (std::size_t j = 0; j < m; j++) {
			rocksdb_hash(k->strangers[i + j], &h1, &second[j]);
			FastLocalBloomImpl::PrepareHash(h1, len, data.get(), &offset[j]);
		}
		for (std::size_t j = 0; j < m; j++)
			fp += FastLocalBloomImpl::HashMayMatchPrepared(second[j], probes, data.get() + offset[j]);
	}
	out->lookup_ns = (now_ns() - t0) / k->n;
	out->false_positives = fp;
	std::uint64_t answers = 0;
	t0 = now_ns();
	for (std::size_t i = 0; i < k->n; i++) {
		rocksdb_hash(k->strangers[i], &h1, &h2);
		answers += FastLocalBloomImpl::HashMayMatch(h1, h2, len, probes, data.get());
	}
	out->single_ns = (now_ns() - t0) / k->n;
	std::uint64_t members = 0;
	for (std::size_t i = 0; i < k->n; i++) {
		rocksdb_hash(k->members[i], &h1, &h2);
		members += FastLocalBloomImpl::HashMayMatch(h1, h2, len, probes, data.get());
	}
	out->bytes = len;
	out->hashes = (unsigned)probes;
	sink += answers;
	return members == k->n ? 0 : -1;
}

} // namespace

extern "C" int bench_peer_run(enum peer_kind kind, const struct peer_keys *k, struct peer_run *out)
{
	namespace bb = boost::bloom;
	*out = peer_run{};
	try {
		switch (kind) {
		case PEER_BOOST_MULTIBLOCK32_8:
			return run_boost<bb::filter<std::uint64_t, 1, bb::fast_multiblock32<8>>>(k, out);
		case PEER_BOOST_MULTIBLOCK64_12:
			return run_boost<bb::filter<std::uint64_t, 1, bb::fast_multiblock64<12>>>(k, out);
		case PEER_ROCKSDB_FASTLOCAL:
			return run_rocksdb(k, out);
		}
	} catch (...) {
		return -1;
	}
	return -1;
}
