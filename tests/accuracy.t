#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bloomsim reproduces Lumetta & Mitzenmacher's Tables 1-3 (classic, n = 10,000) to +-10%,
# Table 2's fill to +-0.001, and the blocked layout beats a standard filter of equal size.
. "$(dirname "$0")/support/tap.sh"
plan 30

sim() { "$BUILD/bloomsim" --entries 10000 --threads 2 --seed 11 --json "$@"; }
field() { jq -r ".$1" <<<"$2"; }

# The paper's rows (tools/paper-tables.txt), with fewer trials than the paper's 1000:
# 20, or 10 for the offline rows, whose rounds cost more.
tables=$(dirname "$0")/../tools/paper-tables.txt
while read -r table b c k rounds paper fill; do
	trials=$((rounds > 1 ? 10 : 20))
	out=$(sim --layout classic --bits $((b * 10000)) --choices "$c" --hashes "$k" \
		--rounds "$rounds" --trials "$trials" --queries 100000)
	name="table $table: classic m/n=$b c=$c k=$k rounds=$rounds"
	near "$(field fpr_from_fill "$out")" "$paper" 0.10 "$name: FPR from fill near the paper's $paper"
	near "$(field fpr_measured "$out")" "$paper" 0.10 "$name: measured FPR near the paper's $paper"
	if [ "$fill" != - ]; then
		within "$(field fill "$out")" "$fill" 0.001 "$name: fill near Table 2's $fill"
		within "$(field fill_predicted "$out")" "$fill" 0.001 "$name: ODE fill near Table 2's $fill"
	fi
done < <(grep -v '^#' "$tables")

# The headline: blocked, two choices, rebuilt offline, beats a standard filter of equal size.
standard=$(sim --layout classic --bits 160256 --choices 1 --hashes 11 --trials 20 --queries 100000)
blocked=$(sim --layout blocked --bits 160256 --choices 2 --hashes 13 --rounds 11 --trials 20 --queries 100000)
limit=$(awk -v s="$(field fpr_measured "$standard")" 'BEGIN { print 0.75 * s }')
below "$(field fpr_measured "$blocked")" "$limit" "blocked c=2 offline FPR at least 25% below standard's"
is "$(field false_negatives "$blocked")" 0 "no false negatives"
done_testing
