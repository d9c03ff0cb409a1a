#!/usr/bin/env bash
# The man pages render without a warning.
. "$(dirname "$0")/tap.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
pages=("$root"/man/*.[0-9])
plan ${#pages[@]}
for page in "${pages[@]}"; do
	warnings=$(groff -man -ww -z "$page" 2>&1)
	ok $([ -z "$warnings" ]; echo $?) "$(basename "$page") renders cleanly"
	[ -n "$warnings" ] && sed 's/^/#   /' <<<"$warnings"
done
done_testing
