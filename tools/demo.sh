#!/usr/bin/env bash
# demo.sh - what `make demo` shows: sizing a filter, and the two-choice blocked filter
# against a standard Bloom filter of the same size, measured on the spot.
set -euo pipefail
build=${1:-build}

echo "== Sizing a filter for 1,000,000 entries at a 0.03% false-positive rate"
echo "\$ bloomctl calc --entries 1000000 --fpr 0.0003 --layout classic --choices 1"
"$build/bloomctl" calc --entries 1000000 --fpr 0.0003 --layout classic --choices 1
echo
echo "\$ bloomctl calc --entries 1000000 --fpr 0.0003      # blocked, two choices (the default)"
"$build/bloomctl" calc --entries 1000000 --fpr 0.0003
echo
echo "== Measured: 10,000 random entries, 16 bits/entry, 20 trials x 100,000 strangers each"
for args in "classic 1 11 1" "blocked 1 9 1" "blocked 2 13 11"; do
	set -- $args
	"$build/bloomsim" --layout "$1" --choices "$2" --hashes "$3" --rounds "$4" \
		--entries 10000 --bits 160256 --trials 20 --queries 100000 --threads 2 --seed 1
done
