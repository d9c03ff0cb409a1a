#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Exceptions and feed guards, by replay: a pass list with pass = packet exempts a packet from
# every other list (signatures included) and is counted; with pass = address (the default) only
# its addresses are exempt: a listed source sending to a passed server is still judged, and so is
# a passed address's payload; ipset's nomatch makes an exception inside its list,
# the longest prefix deciding as in the kernel; an empty, header-only or mostly-removed
# version is refused at start, reload and replace, and the list keeps its previous one.
. "$(dirname "$0")/support/tap.sh"
. "$(dirname "$0")/support/daemon.sh"
plan 30
tmp=$(mktemp -d)
chmod 755 "$tmp"
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; [ -n "$KEEP" ] || rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
sock=$tmp/ctl.sock

# firehol_level1 lists 10.0.0.0/8; the operator's own hosts are an exception.
printf '10.0.0.0/8\n198.51.100.0/24\n' > level1.netset
printf '10.1.2.3\n10.9.0.0/16\n' > mine.list
printf 'sig "EVIL-PAYLOAD"\n' > evil.list
# The kernel: 198.51.100.70 is not in blk; 203.0.113.10 is (the longer prefix decides).
cat > blk.ipset <<'F'
create blk hash:net family inet hashsize 1024 maxelem 65536
add blk 192.0.2.64/26
add blk 192.0.2.70 nomatch
add blk 203.0.113.0/24
add blk 203.0.113.0/28 nomatch comment "our lab"
add blk 203.0.113.10
F
cat > bloomd.conf <<C
[list level1]
file = level1.netset
format = netset
[list evil]
file = evil.list
[list blk]
file = blk.ipset
format = ipset
[list mine]
file = mine.list
format = plain
action = pass
pass = packet
[signatures]
window = 4
[control]
socket = $sock
[store]
dir = $tmp/state
[output]
events = $tmp/events.json
C
mkdir state
start; ok $? "bloomd starts with a pass list"
C metrics | grep -q '^bloomd_last_reload_success 1$'; ok $? "a fresh start counts as a configuration taken (last_reload_success 1)"

"$BUILD/pcapgen" -o pass.pcap - <<'P'
link ipv4
packet src=10.1.2.3 dst=192.0.2.1 proto=udp payload="hello"
packet src=10.1.2.3 dst=192.0.2.1 proto=udp payload="EVIL-PAYLOAD"
packet src=192.0.2.1 dst=10.9.4.4 proto=udp payload="EVIL-PAYLOAD"
packet src=10.5.5.5 dst=192.0.2.1 proto=udp payload="hello"
packet src=192.0.2.70 dst=192.0.2.1 proto=udp payload="x"
packet src=192.0.2.71 dst=192.0.2.1 proto=udp payload="x"
packet src=203.0.113.5 dst=192.0.2.1 proto=udp payload="x"
packet src=203.0.113.10 dst=192.0.2.1 proto=udp payload="x"
packet src=203.0.113.200 dst=192.0.2.1 proto=udp payload="x"
P
C replay "$tmp/pass.pcap" --wait >/dev/null; ok $? "a pcap replays"
srcs=$(jq -r '.src_ip' events.json | sort | tr '\n' ' ')
is "$srcs" "10.5.5.5 192.0.2.71 203.0.113.10 203.0.113.200 " \
	"events only for what no exception covers: a pass address inside a listed net, with a listed signature, gives none"
ok "$(! grep -q '10\.1\.2\.3\|10\.9\.4\.4' events.json; echo $?)" "no event names a passed address"
stats=$(C --json stats)
is "$(jq -c '[.stats.passed, .stats.lists.mine.passed, .stats.lists.level1.passed]' <<<"$stats")" "[3,3,0]" \
	"passed packets counted, in all and by the pass list"
is "$(jq '.stats.matched_packets' <<<"$stats")" 4 "a passed packet is not counted as matched"
C metrics | grep -q '^bloomd_list_passed_packets_total{list="mine"} 3$'; ok $? "metrics: passed by list"
C metrics | grep -q '^bloomd_passed_packets_total 3$'; ok $? "metrics: passed in all"
out=$(C match 10.1.2.3)
grep -q "^exempt (list mine): a pass list holds it" <<<"$out"; ok $? "match shows the pass list that exempts an address"
grep -q "^net 10.0.0.0/8 (list level1)" <<<"$out"; ok $? "and the dropping net that covers it"
is "$(C --json query addr 10.1.2.3 | jq -c '.exempt_by')" '["mine"]' "query shows the pass list too"
C lists | grep -q "^mine: 2 entries, .*action pass"; ok $? "lists shows the pass list's action"
# ipset's nomatch: the network minus its exception, as prefixes.
is "$(C match 192.0.2.70 | grep -c 'list blk')" 0 "a nomatch address is not in its list"
C match 192.0.2.71 | grep -q "(list blk)"; ok $? "its neighbour still is"
C match 203.0.113.10 | grep -q "^addr 203.0.113.10 (list blk)"; ok $? "a member inside a nomatch net is (the longer prefix)"

# pass = address: a whitelist. 10.1.2.3 is never judged bad, the traffic it exchanges is.
sed -i 's/^pass = packet$/pass = address/' bloomd.conf
C reload >/dev/null; ok $? "a reload makes the pass list address-scoped"
"$BUILD/pcapgen" -o address.pcap - <<'P'
link ipv4
packet src=10.1.2.3 dst=192.0.2.1 proto=udp payload="hello"
packet src=198.51.100.5 dst=10.1.2.3 proto=udp payload="hello"
packet src=10.1.2.3 dst=198.51.100.6 proto=udp payload="hello"
packet src=10.1.2.3 dst=192.0.2.2 proto=udp payload="EVIL-PAYLOAD"
P
: > events.json
C replay "$tmp/address.pcap" --wait >/dev/null
is "$(jq -r '"\(.src_ip)>\(.dest_ip)"' events.json | tr '\n' ' ')" "198.51.100.5>10.1.2.3 10.1.2.3>198.51.100.6 10.1.2.3>192.0.2.2 " \
	"a listed address talking with a passed one is judged on the listed one; so is a passed address's payload"
is "$(jq -r '[.alert.context.matches[]?.entry] | join(",")' events.json | tr '\n' ' ')" \
	"198.51.100.0/24 198.51.100.0/24 hex:4556494c2d5041594c4f4144 " "and names only what is listed on the other side: not 10.0.0.0/8 on the passed address"
grep -q "pass says what a pass list exempts" <(printf '[list x]\npass = packet\n' > bad.conf; "$BUILD/bloomd" -n -c bad.conf 2>&1)
ok $? "pass on a list that is not a pass list is refused by name"

# Feed guards: an empty download, a header-only one, then one removing most entries.
: > level1.netset
C reload >/dev/null 2>&1
is "$(C --json lists | jq -r '.lists[] | select(.name == "level1") | .entries')" 2 "an empty file does not empty the list"
C lists | grep -A2 "^level1:" | grep -q "last version refused: 0 entries, fewer than min_entries (1)"
ok $? "the refusal says why, in lists"
printf '#\n# firehol_level1\n#\n' > level1.netset
C reload >/dev/null 2>&1
is "$(C --json stats | jq -c '[.stats.lists.level1.entries, .stats.lists.level1.refused, .stats.lists.level1.ok]')" \
	"[2,2,false]" "a header-only file is refused too; stats count the refusals"
C metrics | grep -q '^bloomd_list_refused_total{list="level1"} 2$'; ok $? "metrics: refusals by list"
grep -q "list level1: level1.netset: refused, .*fewer than min_entries" err; ok $? "and the log says so"
cat >> bloomd.conf <<C
[list big]
format = plain
max_removed = 0.5
C
seq -f '192.168.1.%g' 1 10 > big.v1
C reload >/dev/null 2>&1
C replace big big.v1 >/dev/null; ok $? "a list without a file takes a version by replace"
seq -f '192.168.1.%g' 1 4 > big.v2
out=$(C replace big big.v2 2>&1)
[ $? -ne 0 ] && grep -q "it would remove 6 of the list's 10 entries, more than max_removed (0.5)" <<<"$out"
ok $? "a version removing more than max_removed is refused"
seq -f '192.168.1.%g' 1 6 > big.v3
C replace big big.v3 >/dev/null; ok $? "one removing half is taken"
: > empty
C replace big empty >/dev/null 2>&1; is $? 2 "an empty version by replace is refused (flush empties a list on purpose)"
# A restart with the feed still empty: the list starts from the version kept, not empty.
stop
printf '' > level1.netset
start
is "$(C --json lists | jq -r '.lists[] | select(.name == "level1") | .entries')" 2 \
	"at start, an empty feed is refused and the list starts from its kept version"
stop
[ $tap_failed -eq 0 ] || sed 's/^/# err: /' err
done_testing
