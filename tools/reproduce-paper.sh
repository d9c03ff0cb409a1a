#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# reproduce-paper.sh - Lumetta & Mitzenmacher Tables 1-3 (n = 10,000) with bloomsim,
# printed as a Markdown table beside the paper's figures.
# Usage: tools/reproduce-paper.sh [BUILD] [TRIALS] [QUERIES_PER_TRIAL]
set -euo pipefail
build=${1:-build}
trials=${2:-1000}
queries=${3:-10000}
command -v jq >/dev/null || { echo "reproduce-paper.sh: needs jq" >&2; exit 2; }

echo "| table | m/n | c | k | rounds | paper FPR | FPR from fill | FPR measured | paper fill (ODE) | fill | ODE fill |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
grep -v '^#' "$(dirname "$0")/paper-tables.txt" | while read -r table b c k rounds paper paper_fill; do
	[ -n "$table" ] || continue
	out=$("$build/bloomsim" --layout classic --entries 10000 --bits $((b * 10000)) --choices "$c" \
		--hashes "$k" --rounds "$rounds" --trials "$trials" --queries "$queries" \
		--threads 2 --seed 2007 --json)
	jq -r --arg t "$table" --arg p "$paper" --arg pf "$paper_fill" '
		"| \($t) | \(.bits / .entries) | \(.choices) | \(.hashes) | \(.rounds) | \($p) | " +
		"\(.fpr_from_fill * 1e6 | round / 1e6 | tostring) | \(.fpr_measured) | \($pf) | " +
		"\(.fill * 10000 | round / 10000) | \(if .fill_predicted == null then "-" else (.fill_predicted * 10000 | round / 10000 | tostring) end) |"' <<<"$out"
done
