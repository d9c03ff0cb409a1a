#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# [action] manage = yes at a size the suite affords: 200,000 addresses and 20,000 nets (IPv4 and
# IPv6) mirrored into the kernel's sets, every member compared with the lists after the start,
# after a reload that changes 1% of each, and after a bloomctl replace that changes 1% again.
# The nets' changes go to the kernel as their intervals' elements over netlink (nft's own
# deletion takes about 130 ms a net at 100,000): how long the kernel took to be exact, and the
# longest wait of the control socket meanwhile, are printed (make bench measures them at 1M).
# Then the sets tampered with: flushed, an element added and one deleted by another process, and
# an element deleted again and again during a large change.
. "$(dirname "$0")/support/tap.sh"
. "$(dirname "$0")/support/netns.sh"
plan 16
netns_test s "network namespaces, nftables"
netns_hosts "1" ""
nftb() { ip netns exec $b nft "$@"; }
# The lists: nets 10.X.Y.0/24 and 2001:db8:X+1:Y+1::/64 (as nft writes them) from FIRST, COUNT of each family; addresses 172.16-31.X.Y.
nets() { awk -v f="$1" -v n="$2" 'BEGIN { for (i = f; i < f + n; i++) { printf "10.%d.%d.0/24\n", int(i / 256) % 256, i % 256; printf "2001:db8:%x:%x::/64\n", int(i / 256) + 1, i % 256 + 1 } }'; }
addrs() { awk -v f="$1" -v n="$2" 'BEGIN { for (i = f; i < f + n; i++) printf "172.%d.%d.%d\n", 16 + int(i / 65536) % 16, int(i / 256) % 256, i % 256 }'; }
nets 0 10000 > nets.list
addrs 0 200000 > addrs.list
cat > scale.conf <<C
[list nets]
file = $tmp/nets.list
format = plain
[list addrs]
file = $tmp/addrs.list
format = plain
[action]
manage = yes
[control]
socket = $tmp/ctl.sock
[store]
dir = $tmp/state
[output]
events =
C
mkdir -p state
# What the kernel's sets hold, one a line, sorted: the nets' as "addr/len", the addresses' as they are.
kernel() {
	for set in "$@"; do
		nftb -j list set inet bloomd "$set" | jq -r '.nftables[] | .set? // empty | .elem[]? |
			(if type == "object" and has("elem") then .elem.val else . end) |
			if type == "string" then . else "\(.prefix.addr)/\(.prefix.len)" end'
	done | sort
}
exact() { # exact: the kernel holds the lists' nets and addresses, and nothing else
	[ "$(kernel listednets4 listednets6)" = "$(sort nets.list)" ] && [ "$(kernel listed4)" = "$(sort addrs.list)" ]
}
# Until the kernel is exact (60 s at most), with the control socket asked every 20 ms meanwhile:
# the ms it took in took, the longest answer in longest.
converge() {
	local t0=$(date +%s%N) q0 wait
	longest=0
	for _ in $(seq 600); do
		q0=$(date +%s%N)
		C version >/dev/null 2>&1
		wait=$((($(date +%s%N) - q0) / 1000000))
		[ $wait -gt $longest ] && longest=$wait
		exact && break
		[ $((($(date +%s%N) - t0) / 1000000000)) -lt 60 ] || break
		sleep 0.02
	done
	took=$((($(date +%s%N) - t0) / 1000000))
	exact
}
t0=$(date +%s%N)
bloomd_up scale.conf; ok $? "bloomd starts with manage = yes, 200,000 addresses and 20,000 nets ($((($(date +%s%N) - t0) / 1000000)) ms)"
converge; ok $? "the kernel's sets hold exactly the lists' every address and net ($took ms)"
nets 100 10000 > nets.list # 1% of the nets out, 1% in
addrs 2000 200000 > addrs.list
kill -HUP "$pid"
converge; ok $? "a reload changing 1% of each: the kernel exact after $took ms"
echo "# the control socket's longest wait meanwhile: $longest ms"
nets 200 10000 > nets.list
addrs 4000 200000 > addrs.list
C replace nets >/dev/null && C replace addrs >/dev/null; ok $? "bloomctl replace of both, 1% changed again"
converge; ok $? "the kernel exact after $took ms (the control socket's longest wait: $longest ms)"
is "$(C --json stats | jq -r '.stats.set_action.errors')" 0 "no element was refused"
nftb list set inet bloomd listednets4 | grep -q "10.0.200.0/24"; ok $? "nft lists the nets put in over netlink as nets"
is "$(C --json lists | jq -r '[.lists[].kernel] | unique | join(",")')" "in step" "bloomctl lists: each list's elements in the kernel's sets"
is "$(C --json stats | jq '.stats.set_action.lost')" 0 "none of bloomd's own commits counted as another's, unheard"
C lists | grep -q "^  kernel's sets: in step$"; ok $? "bloomctl lists says so in words"
# Tampering: a set of 200,000 flushed announces more changes than bloomd reads one by one: it counts
# them lost and tells every element again, in steps.
nftb flush set inet bloomd listed4
converge; ok $? "listed4 flushed by another process: exact again after $took ms (the control socket's longest wait: $longest ms)"
is "$(C --json stats | jq -r '.stats.set_action | [.lost >= 1, .syncing, .errors] | map(tostring) | join(",")')" "true,false,0" \
	"counted as announcements lost; in step; nothing refused"
nftb flush set inet bloomd listednets4
converge; ok $? "listednets4 flushed: its nets told again ($took ms)"
# In one transaction: as two, bloomd may already be writing the set again after the add (flushed
# first) when the delete comes, and the delete finds no such element.
printf 'add element inet bloomd listednets4 { 192.0.2.0/24 }\ndelete element inet bloomd listednets4 { 10.1.0.0/24 }\n' | nftb -f -
converge; ok $? "a net added to listednets4 and one deleted by another process: the set flushed and told again ($took ms)"
# Another process deleting a listed address over and over while bloomd commits a large change:
# a deletion committed while bloomd's watch is paused (around its own commits) is not announced to
# it, but the kernel's generation moved by more than bloomd's own transaction says so.
addrs 104000 200000 > addrs.list # half of them new
listed=$(addrs 150000 1)          # in both versions
( for _ in $(seq 300); do nftb delete element inet bloomd listed4 "{ $listed }" 2>/dev/null; done ) &
C replace addrs >/dev/null; wait $!
converge; ok $? "deleted by another process throughout a large change: put back, the kernel exact ($took ms)" || {
	echo "# the kernel lacks: $(comm -13 <(kernel listed4) <(sort addrs.list) | head -3 | tr '\n' ' '); has besides: $(comm -23 <(kernel listed4) <(sort addrs.list) | head -3 | tr '\n' ' ')" >&2
	echo "# $(C --json stats | jq -c .stats.set_action)" >&2
}
kill "$pid" && wait "$pid"; ok $? "bloomd stops cleanly"
pid=
