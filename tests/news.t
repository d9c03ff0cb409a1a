#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# NEWS, the one changelog: its newest version is the one bloomd and bloomctl say they are, the
# versions go down from there to 0.6.0 without a gap, and each but the first says what an
# upgrade from the one before it asks (or that it asks nothing); debian/changelog is written from it.
. "$(dirname "$0")/support/tap.sh"
plan 5
news=$(cd "$(dirname "$0")/.." && pwd)/NEWS
versions=$(sed -n 's/^\* \([0-9][0-9.]*\) (.*/\1/p' "$news")
newest=$(head -n 1 <<<"$versions")
is "bloomd $newest" "$("$BUILD/bloomd" --version)" "NEWS's newest version is bloomd's"
is "bloomctl $newest" "$("$BUILD/bloomctl" --version)" "and bloomctl's"
# 0.MINOR.0 from the newest down to 0.6.0, each once.
minor=$(cut -d. -f2 <<<"$newest")
is "$(tr '\n' ' ' <<<"$versions")" "$(for ((m = minor; m >= 6; m--)); do printf '0.%d.0 ' "$m"; done)" \
	"every version from $newest down to 0.6.0, newest first"
missing=$(awk '/^\* [0-9]/ { if (v != "" && v != "0.6.0" && !up) print v; v = $2; up = 0 } /^  Upgrading from / { up = 1 } END { if (v != "" && !up) print v }' "$news" | grep -v '^0\.6\.0$' | tr '\n' ' ')
is "$missing" "" "each version past 0.6.0 says what an upgrade from the one before asks"
root=$(dirname "$news")
is "$(python3 "$root/tools/debian-changelog.py" "$news" | md5sum)" "$(md5sum < "$root/debian/changelog")" \
	"debian/changelog is NEWS's (tools/debian-changelog.py NEWS > debian/changelog)"
done_testing
