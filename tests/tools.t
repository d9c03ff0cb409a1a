#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bloomctl calc and bloomsim: output formats, the textbook recommendation, bad input.
. "$(dirname "$0")/support/tap.sh"
plan 24

calc() { "$BUILD/bloomctl" calc "$@"; }

out=$(calc --entries 1000000 --fpr 0.01 --layout classic --choices 1 --json)
# m = n ln p / ln 0.6185 = 9,584,958 bits; k = round(ln 2 * m/n) = 7
is "$(jq -r .bits <<<"$out")" 9584958 "textbook bits for 1e6 entries at 1%"
is "$(jq -r .hashes <<<"$out")" 7 "textbook hashes"
is "$(jq -r .bytes <<<"$out")" 1198120 "bytes"
near "$(jq -r .fpr_predicted <<<"$out")" 0.01 0.01 "predicted FPR is the target"
is "$(jq -r 'keys | sort | join(",")' <<<"$out")" \
	"bits,bytes,choices,entries,fpr_predicted,hashes,layout,rounds" "calc --json fields"

out=$(calc --entries 1000000 --memory 4MiB --json)
is "$(jq -r .bits <<<"$out")" 33554432 "--memory 4MiB is 32 Mibit"
is "$(jq -r .layout,.choices <<<"$out" | tr '\n' ' ')" "blocked 2 " "default layout blocked, 2 choices"

out=$(calc --entries 1000000 --fpr 0.0003 --json)
below "$(jq -r .fpr_predicted <<<"$out")" 0.000301 "--fpr target met on blocked c=2"
is "$(( $(jq -r .bits <<<"$out") % 512 ))" 0 "blocked bits are whole blocks"
below "$(jq -r .bits <<<"$out")" 16000000 "blocked c=2 needs fewer bits than a standard filter (16.0/entry) for 3e-4"

out=$(calc --entries 1000 --bits-per-entry 16 --layout classic --choices 2 --rounds 1 --json)
is "$(jq -r .hashes <<<"$out")" 13 "classic c=2 online at 16 bits/entry: k = 13 (paper: 13)"

calc --entries 10 --fpr 2 2>/tmp/calc.err.$$; is $? 2 "--fpr 2 refused with exit 2"
grep -q -- "--fpr" /tmp/calc.err.$$; ok $? "the error names --fpr"
calc --entries 10 --fpr 0.1 --memory 1MiB 2>/dev/null; is $? 2 "two sizes refused"
calc --entries 10 --memory 4XB 2>/tmp/calc.err.$$; is $? 2 "bad size refused"
grep -q "4XB" /tmp/calc.err.$$; ok $? "the error quotes the bad size"
"$BUILD/bloomctl" frobnicate 2>/dev/null; is $? 2 "unknown command exits 2"
# With --json, what bloomctl itself finds comes as the daemon's errors do: one JSON object.
out=$("$BUILD/bloomctl" -s /nonexistent/ctl.sock --json stats 2>/dev/null); rc=$?
is "$rc $(jq -c '[.ok, (.error | test("cannot connect to /nonexistent/ctl.sock"))]' <<<"$out")" "2 [false,true]" \
	"--json: no daemon to talk to is {\"ok\":false,\"error\":...} on standard output, exit 2"
is "$(calc --json --entries x 2>/dev/null | jq -c '[.ok, (.error | test("--entries"))]')" "[false,true]" \
	"--json: a bad option of calc too"
rm -f /tmp/calc.err.$$

sim() { "$BUILD/bloomsim" --layout blocked --entries 2000 --bits 32768 --choices 2 --hashes 10 \
	--rounds 3 --trials 6 --queries 5000 --seed 5 --json "$@"; }
one=$(sim --threads 1); two=$(sim --threads 2)
is "$one" "$two" "bloomsim gives the same result on 1 and 2 threads"
is "$(jq -r 'keys | sort | join(",")' <<<"$one")" \
	"bits,choices,entries,false_negatives,fill,fill_predicted,fpr_from_fill,fpr_measured,hashes,layout,queries,rounds,trials" \
	"bloomsim --json fields"
is "$(jq -r .fill_predicted <<<"$one")" null "no ODE prediction for blocked"
"$BUILD/bloomsim" --layout blocked --entries 10 --bits 1000 --choices 1 --hashes 4 2>/tmp/sim.err.$$
is $? 2 "blocked bits not a multiple of 512 refused"
grep -q "multiple of 512" /tmp/sim.err.$$; ok $? "the error says why"
rm -f /tmp/sim.err.$$
done_testing
