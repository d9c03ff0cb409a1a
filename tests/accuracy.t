#!/usr/bin/env bash
# bloomsim reproduces Lumetta & Mitzenmacher's Tables 1-3 (classic, n = 10,000) to +-10%,
# Table 2's fill to +-0.001, and the blocked layout beats a standard filter of equal size.
. "$(dirname "$0")/tap.sh"
plan 24

sim() { "$BUILD/bloomsim" --entries 10000 --threads 2 --seed 11 --json "$@"; }
field() { jq -r ".$1" <<<"$2"; }

# layout m/n c k rounds trials paper-FPR paper-fill
while read -r b c k rounds trials paper fill; do
	out=$(sim --layout classic --bits $((b * 10000)) --choices "$c" --hashes "$k" \
		--rounds "$rounds" --trials "$trials" --queries 100000)
	name="classic m/n=$b c=$c k=$k rounds=$rounds"
	near "$(field fpr_from_fill "$out")" "$paper" 0.10 "$name: FPR from fill near the paper's $paper"
	near "$(field fpr_measured "$out")" "$paper" 0.10 "$name: measured FPR near the paper's $paper"
	if [ "$fill" != - ]; then
		within "$(field fill "$out")" "$fill" 0.001 "$name: fill near Table 2's $fill"
		within "$(field fill_predicted "$out")" "$fill" 0.001 "$name: ODE fill near Table 2's $fill"
	fi
done <<'ROWS'
8 1 6 1 20 2.159e-2 -
8 2 7 1 20 2.323e-2 0.5296
16 1 11 1 20 4.588e-4 -
16 2 13 1 20 3.935e-4 0.5187
16 3 13 1 20 3.607e-4 0.4994
8 2 8 15 10 1.485e-2 -
16 2 14 15 20 2.223e-4 -
16 3 15 40 10 1.582e-4 -
ROWS

# The headline: blocked, two choices, rebuilt offline, beats a standard filter of equal size.
standard=$(sim --layout classic --bits 160256 --choices 1 --hashes 11 --trials 20 --queries 100000)
blocked=$(sim --layout blocked --bits 160256 --choices 2 --hashes 13 --rounds 11 --trials 20 --queries 100000)
limit=$(awk -v s="$(field fpr_measured "$standard")" 'BEGIN { print 0.75 * s }')
below "$(field fpr_measured "$blocked")" "$limit" "blocked c=2 offline FPR at least 25% below standard's"
is "$(field false_negatives "$blocked")" 0 "no false negatives"
done_testing
