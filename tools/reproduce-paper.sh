#!/usr/bin/env bash
# reproduce-paper.sh - Lumetta & Mitzenmacher Tables 1-3 (n = 10,000) with bloomsim,
# printed as a Markdown table beside the paper's figures.
# Usage: tools/reproduce-paper.sh [BUILD] [TRIALS] [QUERIES_PER_TRIAL]
set -euo pipefail
build=${1:-build}
trials=${2:-1000}
queries=${3:-10000}
command -v jq >/dev/null || { echo "reproduce-paper.sh: needs jq" >&2; exit 2; }

# table  m/n  c  k  rounds  paper-FPR  paper-fill (- where the paper gives none)
rows='
1 8  1 6  1  2.159e-2 -
1 8  2 7  1  2.323e-2 0.5296
1 8  3 7  1  2.389e-2 0.5020
1 16 1 11 1  4.588e-4 -
1 16 2 13 1  3.935e-4 0.5187
1 16 3 13 1  3.607e-4 0.4994
3 8  2 8  15 1.485e-2 -
3 8  3 8  40 1.222e-2 -
3 16 2 14 15 2.223e-4 -
3 16 3 15 40 1.582e-4 -
'
echo "| table | m/n | c | k | rounds | paper FPR | FPR from fill | FPR measured | paper fill (ODE) | fill | ODE fill |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
while read -r table b c k rounds paper paper_fill; do
	[ -n "$table" ] || continue
	out=$("$build/bloomsim" --layout classic --entries 10000 --bits $((b * 10000)) --choices "$c" \
		--hashes "$k" --rounds "$rounds" --trials "$trials" --queries "$queries" \
		--threads 2 --seed 2007 --json)
	jq -r --arg t "$table" --arg p "$paper" --arg pf "$paper_fill" '
		"| \($t) | \(.bits / .entries) | \(.choices) | \(.hashes) | \(.rounds) | \($p) | " +
		"\(.fpr_from_fill * 1e6 | round / 1e6 | tostring) | \(.fpr_measured) | \($pf) | " +
		"\(.fill * 10000 | round / 10000) | \(if .fill_predicted == null then "-" else (.fill_predicted * 10000 | round / 10000 | tostring) end) |"' <<<"$out"
done <<<"$rows"
