#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bloomctl's bash completion, written from daemon/service/commands.def: it offers every command the
# daemon knows, an entry's kinds, a command's options and words, and the names of the lists of
# the daemon answering on the socket given with -s.
. "$(dirname "$0")/support/tap.sh"
. "$(dirname "$0")/support/daemon.sh"
plan 8
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
here=$(cd "$(dirname "$0")/.." && pwd)
completion=$BUILD/bloomctl.bash
cd "$tmp" || exit 1
sock=$tmp/ctl.sock
# What completing the last of WORDS offers, one a line, sorted (bloomctl on PATH for list names).
offers() {
	PATH="$BUILD:$PATH" bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _bloomctl; printf "%s\n" "${COMPREPLY[@]}"' \
		_ "$completion" "$@" | sort | tr '\n' ' '
}

[ -s "$completion" ] && bash -n "$completion"; ok $? "make writes the completion, and bash reads it"
commands=$(sed -n 's/^COMMAND(\([a-z]*\),.*/\1/p' "$here/daemon/service/commands.def" | sort)
offered=$(offers bloomctl "")
missing=$(for c in $commands; do grep -qw -- "$c" <<<"$offered" || echo "$c"; done | tr '\n' ' ')
is "$missing" "" "every command of commands.def is offered ($(wc -w <<<"$commands") of them)"
is "$(offers bloomctl --json re)" "rebuild reload replace replay " "after --json, the commands a prefix names"
is "$(offers bloomctl add "")" "--ttl addr net pair sig " "add: an entry's kinds, and --ttl"
is "$(offers bloomctl list --kind "")" "addr net pair sig " "list --kind: the kinds"
is "$(offers bloomctl cluster "")" "snapshot status " "cluster: its words"

printf '192.0.2.1\n' > tor.list
printf '198.51.100.0/24\n' > drop.list
cat > bloomd.conf <<C
[list tor]
file = $tmp/tor.list
[list drop]
file = $tmp/drop.list
[control]
socket = $sock
[store]
dir =
C
start; ok $? "bloomd answers"
is "$(offers bloomctl -s "$sock" flush "")" "drop local tor " "flush: the names of the running daemon's lists"
stop
done_testing
