#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# [action] manage = yes mirrors the lists into the kernel, with real nftables across two network
# namespaces and real traffic: a listed source is dropped from its first datagram, IPv4 and
# IPv6; an entry deleted, expired or left out of a new version passes (the time each change
# took to reach the kernel is printed: a second on an idle machine, 10 s allowed); a net
# inside a listed net waits its turn; a pass address on the server does not exempt a listed
# source's traffic to it (pass = packet does); the host's own address inside a listed net is
# never dropped; a SIGTERM restart drops throughout; `unblock` of a listed address names its
# list; another process's changes (a rule's verdict, a chain without its hook, an element
# swapped, a set flushed) are undone; a second bloomd leaves the table alone.
. "$(dirname "$0")/support/tap.sh"
. "$(dirname "$0")/support/netns.sh"
plan 27
netns_test m "network namespaces, netfilter"
sender=
at_exit='[ -n "$sender" ] && kill "$sender" 2>/dev/null'
netns_hosts "1 3 4 5 6" "1 3"
nftb() { ip netns exec $b nft "$@"; }
down() { kill "$pid" && wait "$pid"; pid=; }
ip netns exec $b socat -u UDP6-RECV:9999 OPEN:recv.txt,creat,append & # IPv4 too (dual stack)
for _ in $(seq 100); do ip netns exec $b ss -Hlun 'sport = :9999' | grep -q . && break; sleep 0.05; done
# Whether TEXT, sent from FROM (send_from's), arrives within SECONDS (10 unless told): 0 if it
# does. What should be dropped is given a second; what should arrive, time for a loaded machine.
arrives() {
	send_from "$1" "$2"
	for _ in $(seq $((20 * ${3:-10}))); do [ "$(received "$2")" -ge 1 ] && return 0; sleep 0.05; done
	return 1
}
# Until the shell condition COND holds, polled every 20 ms for at most 10 s; the ms it took in took.
until_10s() {
	local t0
	t0=$(date +%s%N)
	for _ in $(seq 500); do eval "$1" && break; sleep 0.02; done
	took=$((($(date +%s%N) - t0) / 1000000))
	eval "$1"
}

printf '10.77.0.1\nfd77::1\n10.77.0.4/30\n10.77.0.4/31\n' > drop.list
printf '10.77.0.5\n10.77.0.2\n' > mine.list
cat > mirror.conf <<C
[capture]
interface = veth-b$$
[list drop]
file = $tmp/drop.list
format = plain
[list mine]
file = $tmp/mine.list
format = plain
action = pass
[action]
manage = yes
[control]
socket = $tmp/ctl.sock
[store]
dir = $tmp/state
C
mkdir -p state
bloomd_up mirror.conf; ok $? "bloomd starts with manage = yes and a dropping list"
arrives 1 "first from .1" 1; is $? 1 "a listed source is dropped by the kernel from its first datagram"
arrives fd77::1 "first from fd77::1" 1; is $? 1 "an IPv6 one too"
arrives 3 "from .3"; ok $? "an address no list holds arrives"
arrives fd77::3 "from fd77::3"; ok $? "an IPv6 one too"
arrives 4 "from .4" 1; is $? 1 "an address of a listed net is dropped"
arrives 5 "from .5"; ok $? "a pass address inside a listed net arrives (pass = address: it is never judged bad)"
is "$(C --json stats | jq -c '.stats.set_action | [.listed, .passed, .hidden]')" "[3,2,1]" \
	"stats: 3 listed elements (the /31 hidden by the /30), 2 passed"
# The server's own address on the pass list (a whitelist of it) does not exempt a listed source.
arrives 6 "from .6" 1; is $? 1 "the whitelisted server does not exempt a listed source's traffic to it"

C add addr 10.77.0.3 >/dev/null
until_10s 'nftb list set inet bloomd listed4 | grep -q "10.77.0.3"'; ok $? "bloomctl add reaches the kernel ($took ms)"
arrives 3 "after add .3" 1; is $? 1 "and its traffic is dropped"
C del addr 10.77.0.3 >/dev/null
until_10s '! nftb list set inet bloomd listed4 | grep -q "10.77.0.3"'; ok $? "bloomctl del lifts it ($took ms)"
arrives 3 "after del .3"; ok $? "and its traffic flows again"
C add addr 10.77.0.3 --ttl 2s >/dev/null
until_10s 'nftb list set inet bloomd listed4 | grep -qE "10.77.0.3 timeout 2s"'; ok $? "an entry with a time to live has it in the kernel"
sleep 2.3
arrives 3 "after expiry .3"; ok $? "and passes once it expired"

# A new version without .1 and without the /30: .1 passes, the /31 goes in and still drops .4, .6 flows.
printf 'fd77::1\n10.77.0.4/31\n' > drop.list
C reload >/dev/null
until_10s 'nftb list set inet bloomd listednets4 | grep -q "10.77.0.4/31"'; ok $? "a net no longer hidden goes in when the net that held it goes ($took ms)"
arrives 1 "after version .1"; ok $? "an address left out of a new version passes"
arrives 6 "after version .6"; ok $? "so does one the /30 held"
arrives 4 "after version .4" 1; is $? 1 "and the /31 drops what it holds"

# pass = packet: a listed source's traffic to the exempt server passes.
printf '10.77.0.1\n' > drop.list
sed -i 's/^action = pass$/action = pass\npass = packet/' mirror.conf
C reload >/dev/null
sleep 0.3
arrives 1 "packet-exempt .1"; ok $? "pass = packet: a listed source's traffic to the exempt server arrives"
sed -i '/^pass = packet$/d' mirror.conf
C reload >/dev/null
sleep 0.3
C unblock 10.77.0.1 >out 2>&1
grep -q "10.77.0.1 is listed (drop)" out; ok $? "unblock of a listed address names its list: $(head -c 120 out)"

# Another process's changes are undone.
handle=$(nftb -a list chain inet bloomd prerouting | awk '/ip saddr @listed4 counter/ { print $NF }')
nftb replace rule inet bloomd prerouting handle "$handle" ip saddr @listed4 accept
until_10s 'nftb list chain inet bloomd prerouting | grep -qE "ip saddr @listed4 counter packets [0-9]+ bytes [0-9]+ drop"'
ok $? "a drop rule made an accept is put back ($took ms)"
nftb flush chain inet bloomd prerouting && nftb delete chain inet bloomd prerouting && nftb add chain inet bloomd prerouting
until_10s 'nftb list chain inet bloomd prerouting | grep -q "hook prerouting"'; ok $? "prerouting made again without its hook is made again with it ($took ms)"
nftb delete element inet bloomd listed4 '{ 10.77.0.1 }' && nftb add element inet bloomd listed4 '{ 10.77.0.3 }'
until_10s 'nftb list set inet bloomd listed4 | grep -q "10.77.0.1" && ! nftb list set inet bloomd listed4 | grep -q "10.77.0.3"'
ok $? "an element swapped for another is swapped back ($took ms)"
nftb flush set inet bloomd listednets6 && nftb flush set inet bloomd listed4
until_10s 'nftb list set inet bloomd listed4 | grep -q "10.77.0.1"'; ok $? "a flushed set is filled again ($took ms)"

# A second bloomd with the same configuration is refused before it touches the first's table.
before=$(C --json stats | jq .stats.set_action.restored)
ip netns exec $b "$BUILD/bloomd" -c mirror.conf 2>second.err
sleep 0.5
grep -q "another bloomd is answering" second.err && ! grep -q "table inet bloomd made" second.err &&
	[ "$(C --json stats | jq .stats.set_action.restored)" = "$before" ]
ok $? "a second bloomd is refused and leaves the first's table as it was"

# A SIGTERM restart: the table stays and the next start makes it anew in one transaction.
ip netns exec $a bash -c 'for i in $(seq 60); do socat -u - UDP-SENDTO:10.77.0.2:9999,bind=10.77.0.1 <<<"restart $i"; sleep 0.05; done' &
sender=$!
sleep 0.3
down
bloomd_up mirror.conf
wait "$sender"; sender=
is "$(received 'restart ')" 0 "a listed source sending throughout a restart gets nothing through"
down
[ $tap_failed -eq 0 ] || { sed "s/^/# err: /" err | tail -30; }
done_testing
