#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The man pages render without a warning; bloomctl(8) describes exactly the commands of
# daemon/service/commands.def (and calc, bloomctl's own).
. "$(dirname "$0")/support/tap.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
pages=("$root"/man/*.[0-9])
plan $((${#pages[@]} + 1))
for page in "${pages[@]}"; do
	warnings=$(groff -man -ww -z "$page" 2>&1)
	ok $([ -z "$warnings" ]; echo $?) "$(basename "$page") renders cleanly"
	[ -n "$warnings" ] && sed 's/^/#   /' <<<"$warnings"
done
described=$(awk '/^\.SH COMMANDS/ { f = 1; next } /^\.SH/ { f = 0 } f && prev == ".TP" { print $2 } { prev = $0 }' \
	"$root/man/bloomctl.8" | tr -d '"' | sort -u | tr '\n' ' ')
listed=$( (sed -n 's/^COMMAND(\([a-z]*\),.*/\1/p' "$root/daemon/service/commands.def"; echo calc) | sort -u | tr '\n' ' ')
is "$described" "$listed" "bloomctl(8) describes the commands of daemon/service/commands.def, no more, no fewer"
done_testing
