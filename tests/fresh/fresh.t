#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The README's two commands on a fresh machine: a minimal Debian root (git, make, gcc,
# libc6-dev, pkg-config, ca-certificates) made with mmdebstrap from this machine's apt
# sources, the committed HEAD cloned into it, then `make demo` and `make check` run there
# in that order, each once (the root: root.sh).
. "$(dirname "$0")/../support/tap.sh"
repo=$(cd "$(dirname "$0")/../.." && pwd)

PLANNED=7
. "$(dirname "$0")/root.sh"

# ---- the README's two commands ----
start=$SECONDS
in_root "$root/demo.log" "make demo"
rc=$?
ok $rc "make demo, the first command on a bare root ($((SECONDS - start)) s)"
[ $rc -eq 0 ] || tail -n 30 "$root/demo.log" | sed 's/^/#   /'
alerts=$(grep -c '"event_type":"alert"' "$root/demo.log")
[ "$alerts" -gt 0 ]; ok $? "make demo shows the demo's alerts ($alerts)"

start=$SECONDS
in_root "$root/check.log" "make check"
rc=$?
ok $rc "make check, the second command ($((SECONDS - start)) s)"
[ $rc -eq 0 ] || grep -E -B3 '^not ok|Failed|Error|\*\*\*' "$root/check.log" | head -60 | sed 's/^/#   /'
grep -E '^(Files=|Result:)' "$root/check.log" | sed 's/^/#   /'
skips=$(grep -c 'skipped: ' "$root/check.log")
[ "$(grep -c '^Result: PASS' "$root/check.log")" -ge 2 ]
ok $? "both passes of the suite passed ($skips test files skipped there, as the root lacks what they need)"
grep 'skipped: ' "$root/check.log" | sed 's/^.*\] //' | sort | uniq -c | sed 's/^/#   /'
done_testing
