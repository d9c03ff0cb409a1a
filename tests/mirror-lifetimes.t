#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# [action] manage = yes with entries whose lifetimes run from a second to a hundred years (a
# CrowdSec 87600h decision, a far expires=, bloomctl add --ttl 87600h): every one reaches the
# kernel's sets, addresses and nets, with the time bloomctl says it has left (none past
# February 2106: bloomd removes those itself); a start and a restart with them succeed; a 1 s
# entry leaves the kernel within two; a new version's times for entries it keeps reach the kernel.
. "$(dirname "$0")/support/tap.sh"
. "$(dirname "$0")/support/netns.sh"
plan 13
netns_test l "network namespaces, nftables"
nftb() { ip netns exec $b nft "$@"; }
now=$(date +%s)
year=$((365 * 86400))
{
	echo "addr 10.78.0.1 expires=$((now + 100 * year))"
	echo "addr 10.78.0.2 expires=$((now + 10 * year))"
	echo "addr 10.78.0.3 expires=$((now + 2000 * 86400))"
	echo "addr 10.78.0.4 expires=$((now + 3600))"
	echo "net 10.78.1.0/24 expires=$((now + 100 * year))"
	echo "net 10.78.2.0/24 expires=$((now + 10 * year))"
	echo "net fd78::/64 expires=$((now + 50 * year))"
} > long.list
cat > lifetimes.conf <<C
[list long]
file = $tmp/long.list
[action]
manage = yes
[control]
socket = $tmp/ctl.sock
[store]
dir = $tmp/state
C
mkdir -p state
bloomd_up lifetimes.conf; ok $? "bloomd starts with entries lasting up to 100 years"
C add addr 10.78.0.5 --ttl 87600h >/dev/null; ok $? "bloomctl add --ttl 87600h (a CrowdSec decision's 10 years)"
C add net 10.78.3.0/24 --ttl 87600h >/dev/null
C add addr 10.78.0.6 --ttl 1s >/dev/null
# The kernel's time left for ELEMENT in SET, in whole days ("none" without a timeout, "absent").
days_left() {
	nftb -j list set inet bloomd "$1" | jq -r --arg e "$2" '
		def name: if type == "string" then . else "\(.prefix.addr)/\(.prefix.len)" end;
		[.nftables[] | .set? // empty | .elem[]? | if type == "object" and has("elem") then .elem else {val: .} end
		 | select(.val | name == $e)]
		| if length == 0 then "absent" elif .[0].expires then .[0].expires / 86400 | floor else "none" end'
}
wait_for '[ "$(days_left listed4 10.78.0.5)" != absent ]'
is "$(days_left listed4 10.78.0.1)" none "100 years (past 2106): in the set, with no timeout"
is "$(days_left listed4 10.78.0.2)" 3649 "10 years: in the set, for the time it has left"
is "$(days_left listed4 10.78.0.3)" 1999 "2,000 days (past nft's 100,000,000 s)"
is "$(days_left listed4 10.78.0.4)" 0 "an hour"
is "$(days_left listed4 10.78.0.5)" 3649 "bloomctl add --ttl 87600h"
is "$(days_left listednets4 10.78.1.0/24):$(days_left listednets4 10.78.2.0/24):$(days_left listednets4 10.78.3.0/24):$(days_left listednets6 fd78::/64)" \
	"none:3649:3649:18249" "nets too: 100 years, 10 years, --ttl 87600h, and IPv6's 50 years"
wait_for '[ "$(days_left listed4 10.78.0.6)" = absent ]'; ok $? "a 1 s entry leaves the kernel within two"
is "$(C --json stats | jq '.stats.set_action.errors')" 0 "no element was refused"
kill "$pid" && wait "$pid"
pid=
bloomd_up lifetimes.conf; ok $? "a restart with them succeeds"
wait_for '[ "$(days_left listed4 10.78.0.5)" = 3649 ]'
is "$(days_left listed4 10.78.0.2):$(days_left listed4 10.78.0.5):$(days_left listednets4 10.78.3.0/24)" 3649:3649:3649 \
	"and the kernel holds them again, for the time they have left"
# A new version that gives entries of both versions other times (one longer, one none, a net's
# longer): the kernel's elements take them, though the matcher sees no change of holders.
sed -i -e "s/^addr 10.78.0.4 expires=.*/addr 10.78.0.4 expires=$((now + 10 * 86400))/" -e "s/^addr 10.78.0.3 expires=.*/addr 10.78.0.3/" \
	-e "s|^net 10.78.2.0/24 expires=.*|net 10.78.2.0/24 expires=$((now + 20 * year))|" long.list
C replace long >/dev/null
wait_for '[ "$(days_left listed4 10.78.0.4)" = 9 ]'
is "$(days_left listed4 10.78.0.4):$(days_left listed4 10.78.0.3):$(days_left listednets4 10.78.2.0/24)" 9:none:7299 \
	"a version's new times reach the kernel for entries it kept"
