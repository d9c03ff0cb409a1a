#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A neighbour is not an intruder: another program committing to its own nftables table, 20 and
# then 200 transactions a second, while bloomd ([action] manage) replaces half of a 100,000-address
# list. bloomd's sets end in step with the list, and nothing is counted lost or restored, nor
# warned about: only changes to bloomd's own table are tampering. The neighbour's commits are
# counted apart (set_action.neighbour_commits).
. "$(dirname "$0")/support/tap.sh"
. "$(dirname "$0")/support/netns.sh"
plan 10
command -v nft >/dev/null || skip_all "no nft (tools/install-deps.sh test)"
netns_test nb "network namespaces, nftables"
neighbour=
at_exit='[ -n "$neighbour" ] && kill "$neighbour" 2>/dev/null'
# 100.64.0.0/10 addresses from FIRST, COUNT of them.
addresses() { awk -v f="$1" -v n="$2" 'BEGIN { for (i = f; i < f + n; i++) printf "100.%d.%d.%d\n", 64 + int(i / 65536), int(i / 256) % 256, i % 256 }'; }
addresses 0 100000 > big.list
cat > bloomd.conf <<C
[list big]
file = $tmp/big.list
action = drop
format = plain
[action]
manage = yes
[output]
events =
[control]
socket = $tmp/ctl.sock
[store]
dir =
C
stat_of() { C --json stats | jq -r ".stats.set_action.$1"; }
# Whether the kernel's listed4 holds every sampled address of the version in force (every
# 5,000th of the 100,000 from FIRST) and none of those sampled from the 50,000 it replaced
# (before FIRST). Probed by key over netlink (tests/support/nft-has.c): nft's own get element
# and list set dump all 100,000 elements, again from the start each time another commits.
sample() { for i in $(seq 0 5000 $(($2 - 1))); do addresses $(($1 + i)) 1; done; }
kernel_holds() { # first
	[ "$(ip netns exec $b "$BUILD/tests/nft-has" bloomd listed4 $(sample "$1" 100000))" = 20 ] &&
		{ [ "$1" -eq 0 ] || [ "$(ip netns exec $b "$BUILD/tests/nft-has" bloomd listed4 $(sample $(($1 - 50000)) 50000))" = 0 ]; }
}
# Until bloomd's sets hold the version whose first address is FIRST (60 s at most, for a loaded
# machine): the seconds it took in settled.
in_step() { # first
	local t0
	t0=$(date +%s%N)
	for _ in $(seq 600); do
		[ "$(stat_of syncing)" = false ] && [ "$(stat_of listed)" = 100000 ] && kernel_holds "$1" && break
		sleep 0.1
	done
	settled=$(awk -v ns=$(($(date +%s%N) - t0)) 'BEGIN { printf "%.1f", ns / 1e9 }')
	[ "$(stat_of syncing)" = false ] && kernel_holds "$1"
}
bloomd_up bloomd.conf; ok $? "bloomd starts with 100,000 listed addresses"
in_step 0; ok $? "its sets hold them"

ip netns exec $b nft add table inet neighbour
ip netns exec $b nft add set inet neighbour s '{ type ipv4_addr; }'
# The neighbour: RATE transactions a second to its own table, each one element in or out.
neighbour_at() {
	ip netns exec $b python3 -c '
import sys, time
rate = float(sys.argv[1]); i = 0
while True:
    verb = "add" if i % 2 == 0 else "delete"
    print(f"{verb} element inet neighbour s {{ 192.0.2.{i // 2 % 250 + 1} }}", flush=True)
    i += 1
    time.sleep(1 / rate)
' "$1" 2>/dev/null | ip netns exec $b nft -i >/dev/null 2>&1 &
	neighbour=$!
}
run=0
replace_beside() { # rate
	run=$((run + 1))
	neighbour_at "$1"
	local before_commits
	before_commits=$(stat_of neighbour_commits)
	sleep 1
	addresses $((run * 50000)) 100000 > big.list
	C replace big >/dev/null
	in_step $((run * 50000)); ok $? "beside $1 commits a second, a 50% replace is in the kernel after ${settled} s"
	sleep 1
	kill "$neighbour"; wait "$neighbour" 2>/dev/null; neighbour=
	is "$(stat_of lost) $(stat_of restored)" "0 0" "nothing counted lost or restored ($1 a second)"
	is "$(grep -c 'changed by another process' err)" 0 "nor warned about ($1 a second)"
	[ "$(stat_of neighbour_commits)" -gt "$before_commits" ]
	ok $? "the neighbour's commits are counted apart ($(($(stat_of neighbour_commits) - before_commits)))"
}
replace_beside 20
replace_beside 200
