#!/usr/bin/env bash
# bench.sh - the benchmarks `make bench` runs; every figure is a median of several runs,
# and peers are measured in the same run, so the ratios are what to read.
set -euo pipefail
build=${1:-build}
echo "== filter lookups and inserts vs libbloom (1,000,000 entries, 16 bits/entry)"
"$build/bloombench" filter --entries 1000000 --bits-per-entry 16 --runs 5
echo
echo "== keyed hashing"
"$build/bloombench" hash
