#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The core (filters, their NEON kernel, hashing, the signature prefilter) and its unit
# tests cross-built for aarch64 and run under qemu-user: the kernels an x86 machine cannot
# run are tested on it all the same. Needs gcc-aarch64-linux-gnu, qemu-user and the arm64
# cmocka (tools/install-deps.sh ci installs them).
. "$(dirname "$0")/support/tap.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
sysroot=/usr/aarch64-linux-gnu
for need in aarch64-linux-gnu-gcc qemu-aarch64; do
	command -v "$need" >/dev/null || { echo "1..0 # SKIP no $need (tools/install-deps.sh ci)"; exit 0; }
done
ls /usr/lib/aarch64-linux-gnu/libcmocka.so* >/dev/null 2>&1 ||
	{ echo "1..0 # SKIP no arm64 cmocka (libcmocka-dev:arm64; tools/install-deps.sh ci)"; exit 0; }
tests=(filter counting hash sizing store sigscan)
plan $((2 + ${#tests[@]}))

# A make of its own: none of the calling make's variables (SANITIZE, BUILD) carry over.
out=$(MAKEFLAGS= MAKELEVEL= make -s -C "$root" BUILD=build-aarch64 CC=aarch64-linux-gnu-gcc SANITIZE= \
	CFLAGS="-O2 -g" core-tests 2>&1)
ok $? "the core and its unit tests cross-built for aarch64"
[ -z "$out" ] || sed 's/^/#   /' <<<"$out"
for t in "${tests[@]}"; do
	bin=$root/build-aarch64/core-tests/$t.t
	got=$(qemu-aarch64 -L "$sysroot" "$bin" 2>&1)
	rc=$?
	planned=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' <<<"$got")
	passed=$(grep -c '^ok ' <<<"$got")
	skipped=$(grep -c '^not ok [0-9]* # SKIP' <<<"$got")
	[ $rc -eq 0 ] && [ -n "$planned" ] && [ $((passed + skipped)) -eq "$planned" ] && [ "$passed" -gt 0 ]
	ok $? "aarch64 $t.t under qemu: $passed passed, $skipped skipped (x86 levels) of ${planned:-?}"
	[ $rc -eq 0 ] || grep -v '^ok ' <<<"$got" | sed 's/^/#   /'
	[ "$t" = filter ] &&
		neon=$(grep -c '^ok [0-9]* - \(kernel_matches_reference\|long_batches_match_reference\) \[neon\]' <<<"$got")
done
[ "${neon:-0}" -eq 2 ]; ok $? "the NEON block tests (short and long batches) ran and matched the reference"
done_testing
