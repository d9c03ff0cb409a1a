#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A short, fixed-seed libFuzzer pass over each parser of untrusted bytes (built by make fuzz-build
# into FUZZ_BUILD, default build-fuzz).
. "$(dirname "$0")/support/tap.sh"
FUZZ_BUILD=$(cd "$(dirname "$0")/.." && pwd)/${FUZZ_BUILD:-build-fuzz}
# harness and runs (the config and state harnesses write files, the control one talks to a socket: fewer)
harnesses=("packet 200000" "entry 200000" "feed 200000" "config 20000" "state 5000" "control 3000" "jsonline 200000")
plan ${#harnesses[@]}
for h in "${harnesses[@]}"; do
	set -- $h
	out=$("$FUZZ_BUILD/fuzz-$1" -seed=1 -runs="$2" -max_len=2048 2>&1)
	rc=$?
	# A fuzzer that stops early (a harness that exits, say) has not run its count: a failure.
	[ $rc -eq 0 ] && grep -q "^Done $2 runs" <<<"$out"
	ok $? "fuzz-$1: $2 runs done, no crash, leak or sanitizer report"
	[ $rc -eq 0 ] && grep -q "^Done $2 runs" <<<"$out" || sed 's/^/#   /' <<<"$out" | tail -20
done
done_testing
