#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bench.sh - the benchmarks `make bench` runs. Every figure is a median of several
# runs and every peer is measured in the same run, so read the ratios.
set -euo pipefail
build=${1:-build}
echo "== filter lookups and inserts against libbloom (1,000,000 entries, 16 bits/entry)"
"$build/bloombench" filter --entries 1000000 --bits-per-entry 16 --runs 5
echo
echo "== filter lookups against the fastest peers: Boost.Bloom and RocksDB's FastLocalBloom (1M and 10M keys, 16 bits/key)"
"$build/bloombench" peers --sizes 1000000,10000000 --bits-per-key 16 --runs 3
echo
echo "== keyed hashing"
"$build/bloombench" hash
echo
echo "== the packet path against a bare pcap_dispatch loop (100,000 addr and pair entries), in batches of 64 and one at a time"
"$build/bloombench" replay --packets 2000000 --entries 100000 --runs 5
"$build/bloombench" replay --packets 2000000 --entries 100000 --runs 5 --no-events
echo "-- what each stage costs a packet"
"$build/bloombench" replay --packets 2000000 --entries 100000 --runs 3 --stages
echo "-- TCP connections: the handshake table that proves senders ([capture] tcp_connections), on and off"
"$build/bloombench" replay --packets 2000000 --entries 100000 --runs 5 --tcp
echo "-- 4,000,000 entries: a filter past the caches"
"$build/bloombench" replay --packets 2000000 --entries 4000000 --runs 3
echo
echo "== signature scanning against Hyperscan (its 1,000,000-signature compile takes a minute)"
"$build/bloombench" signatures --sizes 1000,100000,1000000 --megabytes 16 --runs 3
echo "-- the worst case of a window of the first bytes: every signature starting \"GET /wp-\", and every payload"
"$build/bloombench" signatures --sizes 1000,100000 --megabytes 16 --runs 3 --shared-prefix

echo
echo "== entries that look alike against random ones (100,000 each)"
"$build/bloombench" similar --entries 100000 --runs 3

echo
echo "== the control plane: 1,000,000 entries through the socket, and a rebuild while replays run"
"$build/bloombench" control --entries 1000000 --rounds 10 --runs 3

echo
echo "== the cluster: two sensors sharing entries through a redis-server"
"$(dirname "$0")/bench-cluster.sh" "$build"
echo "-- the same, every change signed and checked ([cluster] key_file): the cost of the HMAC"
BENCH_CLUSTER_SIGNED=1 "$(dirname "$0")/bench-cluster.sh" "$build"
echo "== the cluster on a Redis that fails over: a master, two replicas, a redis-sentinel"
"$(dirname "$0")/bench-failover.sh" "$build"
echo "-- the same on TLS alone"
BENCH_FAILOVER_TLS=1 "$(dirname "$0")/bench-failover.sh" "$build"
echo "== the cluster over TLS: propagation against plain TCP, on one redis-server"
"$(dirname "$0")/bench-cluster-tls.sh" "$build"
echo "== the cluster's divergence: changes the stream lost, seen and sent again"
"$(dirname "$0")/bench-divergence.sh" "$build"

echo
echo "== time to protection: a start with 1,000,000 and 10,000,000 addresses until bloomd answers, against ipset restore; memory per entry (as root)"
BENCH_START_SIZES=${BENCH_START_SIZES:-1000000 10000000} "$(dirname "$0")/bench-start.sh" "$build"
echo
echo "== A list's new version while control waits: bloomctl replace of 1,000,000 addresses, the longest wait of control meanwhile, ipset restore and swap for scale (as root)"
"$(dirname "$0")/bench-replace.sh" "$build"
BENCH_REPLACE_MODE=xdp "$(dirname "$0")/bench-replace.sh" "$build"

echo
echo "== A dropping list mirrored into nftables ([action] manage): bloomd against ipset restore and nft -f; changes kept in step (as root)"
"$(dirname "$0")/bench-mirror.sh" "$build"
echo "== The mirror at scale: 1% of a million addresses and 100,000 nets changed, against ipset restore; a flushed set put back (as root)"
"$(dirname "$0")/bench-mirror-scale.sh" "$build"
echo
echo "== CrowdSec: every decision of its local API enforced from a bouncer's start, bloomd against crowdsec-firewall-bouncer (as root)"
"$(dirname "$0")/bench-crowdsec.sh" "$build"

echo
echo "== inline and workers: a flood through netfilter queues, against the kernel alone, and captured passively (as root)"
"$(dirname "$0")/bench-inline.sh" "$build"

echo
echo "== XDP: bloomd's program per packet against a BPF hash map, an LPM trie and the kernel's bloom-filter map (as root)"
"$build/bloombench" xdp --sizes 100000,1000000 --runs 5
echo "-- end to end: a flood of listed sources dropped by XDP, by an nftables set, and inline"
"$(dirname "$0")/bench-xdp.sh" "$build"
