#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A start protects at once: without a snapshot the filters are built by online insertion, the
# socket answers with every entry, and the offline rounds follow in a background rebuild
# (stats rebuild.optimised); an operator's rebuild asked for meanwhile follows it; a start from
# a snapshot keeps its entries' placement, and the lists' entries read again are optimised after.
. "$(dirname "$0")/support/tap.sh"
. "$(dirname "$0")/support/daemon.sh"
plan 12
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
sock=$tmp/ctl.sock
rebuild() { C --json stats | jq -c ".stats.rebuild | $1"; }

awk 'BEGIN { for (i = 0; i < 100000; i++) printf "100.%d.%d.%d\n", int(i / 65536) + 64, int(i / 256) % 256, i % 256 }' > big.list
last=$(tail -n 1 big.list)
cat > bloomd.conf <<C
[filter]
auto_rebuild = no
[list big]
file = $tmp/big.list
format = plain
[control]
socket = $sock
[store]
dir = $tmp/state
C

start; ok $? "bloomd starts on 100,000 addresses"
is "$(C --json query addr "$last" | jq -c '[.present, .filter]')" "[true,true]" \
	"the last of them is held, filter and store, as soon as the socket answers"
for _ in $(seq 600); do [ "$(rebuild .optimised)" = true ] && break; sleep 0.1; done
is "$(rebuild '[.optimised, .count, .last.rounds, .last.ok]')" "[true,1,10,true]" \
	"the offline rounds follow in the background, and are then in force"
is "$(rebuild '.last | .longest_hold_ms > 0 and .longest_hold_ms < .max_stall_ms')" true \
	"it held the loop in several turns, its copy in slices ($(rebuild '.last | [.longest_hold_ms, .max_stall_ms]') ms)"
grep -q "the entries were placed in the filters online" err; ok $? "the log says so"
C metrics | grep -q '^bloomd_rebuild_optimised 1$'; ok $? "metrics: bloomd_rebuild_optimised 1"

# Again without the state, and with 60 rounds (seconds of them): a rebuild asked for at once
# follows the start's, and is answered when it is done.
stop
rm -rf state
sed -i 's/^auto_rebuild = no$/auto_rebuild = no\nrounds = 60/' bloomd.conf
start
reply=$(C --json rebuild --rounds 3 --wait)
is "$(jq -c '[.ok, .rounds]' <<<"$reply")" "[true,3]" "a rebuild asked for while the start's runs follows it, with its own rounds"
grep -q "rebuilding again: asked for while that one ran" err; ok $? "after it, not refused as one running already"
is "$(rebuild '[.optimised, .count]')" "[true,2]" "both ran"

# From a snapshot (a local entry makes the stop write one): it holds the local list, so the
# list's entries, read from its file again, go in online and are optimised after.
C add addr 192.0.2.1 >/dev/null
stop
start
for _ in $(seq 600); do [ "$(rebuild .optimised)" = true ] && break; sleep 0.1; done
is "$(rebuild '[.optimised, .count]')" "[true,1]" "from a snapshot, the list's entries read again are optimised after"

# A state of local entries alone: the snapshot keeps their placement, and no rounds run.
stop
sed -i '/^\[list big\]$/,/^format = plain$/d' bloomd.conf
rm -rf state
start
sed 's/^/addr /' big.list | C load - >/dev/null
C rebuild --wait >/dev/null
stop
start
is "$(rebuild '[.optimised, .count, .running]')" "[true,0,false]" "a start from a snapshot of local entries keeps their placement, no rounds"
is "$(C --json query addr "$last" | jq -c '[.present, .filter]')" "[true,true]" "and holds every entry"
stop
done_testing
