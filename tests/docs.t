#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The documentation's shape: a README a newcomer reads in minutes (250 lines at most) that links
# every page of doc/, and pages that name only what exists: every file:function of the code tour
# is a function defined in that file, and every path of the tree written in backquotes is there.
. "$(dirname "$0")/support/tap.sh"
plan 5
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1

lines=$(wc -l < README.md)
[ "$lines" -le 250 ]; ok $? "README.md is 250 lines at most ($lines)"
unlinked=$(for f in doc/*.md; do grep -q "($f)" README.md || echo "$f"; done)
is "$unlinked" "" "README.md links every page of doc/"
dangling=$(grep -o '(doc/[a-z-]*\.md)' README.md | tr -d '()' | while read -r f; do [ -e "$f" ] || echo "$f"; done)
is "$dangling" "" "and every page it links is there"

named=$(grep -ohE '`?(core|packet|io|service)/([a-z]+/)?[a-z_]+\.c:[a-z_]+' doc/*.md | tr -d '`' | sort -u)
missing=$(while IFS=: read -r file fn; do
	grep -qE "^([a-z].*[ *])?$fn\(" "daemon/$file" 2>/dev/null || echo "$file:$fn"
done <<<"$named")
is "$missing" "" "the tour's $(wc -l <<<"$named") file:function names are functions of those files"
paths=$(grep -ohE '`(tests|bench|tools|programs|conf|systemd|man|daemon|doc|bpf|third_party)/[A-Za-z0-9_./-]*`' README.md doc/*.md |
	tr -d '`' | sort -u)
gone=$(while read -r p; do [ -e "$p" ] || echo "$p"; done <<<"$paths")
is "$gone" "" "the $(wc -l <<<"$paths") paths of the tree the pages write are there"
done_testing
