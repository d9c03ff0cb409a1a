#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Inline mode across two network namespaces joined by a veth pair: datagrams to the receiver's
# namespace go through a netfilter queue rule with bypass to bloomd there; a match of a
# dropping list never arrives, one of an alerting list and everything else does; the events
# say blocked or allowed; with bloomd killed, traffic keeps flowing (bypass).
. "$(dirname "$0")/support/tap.sh"
. "$(dirname "$0")/support/netns.sh"
plan 29
netns_test i "network namespaces, netfilter queues"
netns_hosts 1
queue_rule 9999 7

printf 'sig "EVIL-PAYLOAD"\n' > evil.list
printf 'sig "WATCH-ME"\n' > watch.list
printf 'sig "REJECT-ME"\n' > deny.list
cat > bloomd.conf <<C
[capture]
mode = inline
queue = 7
[list evil]
file = evil.list
category = exploit
[list watch]
file = watch.list
action = alert
[list deny]
file = deny.list
action = reject
[signatures]
window = 4
[control]
socket = $tmp/ctl.sock
[store]
dir =
[output]
events = $tmp/events.json
C
udp_receiver 9999
ip netns exec $b "$BUILD/bloomd" -c bloomd.conf 2>err &
pid=$!
for _ in $(seq 100); do "$BUILD/bloomctl" -s ctl.sock version >/dev/null 2>&1 && break; sleep 0.05; done
"$BUILD/bloomctl" -s ctl.sock version >/dev/null; ok $? "bloomd judges packets from queue 7"
send() { ip netns exec $a bash -c "printf '%s\n' '$1' > /dev/udp/10.77.0.2/9999"; }
for i in 1 2 3; do send "hello $i"; send "EVIL-PAYLOAD $i"; done
send "WATCH-ME 1"
send "hello 4"
for _ in $(seq 100); do grep -q "hello 4" recv.txt 2>/dev/null && break; sleep 0.05; done
is "$(grep -c hello recv.txt)" 4 "every unlisted datagram arrives (bloomd keeps CAP_NET_ADMIN for its verdicts)"
is "$(grep -c EVIL-PAYLOAD recv.txt)" 0 "no datagram of a dropping list does"
is "$(grep -c WATCH-ME recv.txt)" 1 "one of an alerting list (action = alert) does"
for _ in $(seq 400); do [ "$(grep -c alert events.json 2>/dev/null)" -ge 4 ] && break; sleep 0.05; done
is "$(jq -r 'select(.alert.context.matches[0].list == "evil") | .alert.action' events.json | sort | uniq -c | awk '{print $1 " " $2}')" "3 blocked" \
	"their events say blocked"
is "$(jq -r 'select(.alert.context.matches[0].list == "watch") | .alert.action' events.json)" allowed "the alerting list's says allowed"
is "$(jq -r 'select(.alert.context.matches[0].list == "evil") | .in_iface' events.json | head -n 1)" nfqueue7 "and names the queue"
stats=$("$BUILD/bloomctl" -s ctl.sock --json stats)
is "$(jq -c '[.stats.inline.packets, .stats.inline.dropped, .stats.inline.accepted, .stats.inline.verdict_errors]' <<<"$stats")" \
	"[8,3,5,0]" "stats: packets judged, dropped, accepted; no verdict refused"
[ "$(jq .stats.inline.verdict_ns.p99 <<<"$stats")" -gt 0 ]; ok $? "and the verdict latency"
"$BUILD/bloomctl" -s ctl.sock metrics > metrics.txt
grep -q '^bloomd_inline_dropped_total 3$' metrics.txt; ok $? "metrics: inline drops"
is "$(grep -E '^bloomd_list_(matches|dropped)_total\{list="(evil|watch)"\}' metrics.txt | sort | tr '\n' ' ')" \
	'bloomd_list_dropped_total{list="evil"} 3 bloomd_list_dropped_total{list="watch"} 0 bloomd_list_matches_total{list="evil"} 3 bloomd_list_matches_total{list="watch"} 1 ' \
	"metrics: each list's matches and drops"
grep -q '^# TYPE bloomd_inline_verdict_seconds histogram$' metrics.txt &&
	grep -q '^bloomd_inline_verdict_seconds_bucket{le="+Inf"} 8$' metrics.txt && grep -q '^bloomd_inline_verdict_seconds_count 8$' metrics.txt &&
	[ "$(awk '/^bloomd_inline_verdict_seconds_bucket\{le="0.1"\}/ { print $2 }' metrics.txt)" = 8 ]
ok $? "metrics: the verdict latency as a histogram of the 8 packets judged"
if command -v promtool >/dev/null; then
	promtool check metrics < metrics.txt > promtool.out 2>&1; ok $? "promtool check metrics finds nothing to say of an inline scrape"
	sed 's/^/#   /' promtool.out
else
	tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP no promtool (Debian's prometheus; tools/install-deps.sh test)"
fi

# reject: the packet goes back to the hook marked, and the rule ahead of the queue rejects it.
if [ $rule = nft ]; then
	ip netns exec $b nft insert rule inet bloomd input meta mark 0xb10c reject
	unreject() { ip netns exec $b nft flush chain inet bloomd input; ip netns exec $b nft add rule inet bloomd input udp dport 9999 queue num 7 bypass; }
else
	ip netns exec $b iptables-legacy -I INPUT -p udp -m mark --mark 0xb10c -j REJECT
	unreject() { ip netns exec $b iptables-legacy -D INPUT -p udp -m mark --mark 0xb10c -j REJECT; }
fi
# Send TEXT on a connected socket; print "refused" if the ICMP port unreachable came back, else "silence".
ask() {
	ip netns exec $a python3 - "$1" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect(("10.77.0.2", 9999))
s.settimeout(1)
s.send(sys.argv[1].encode() + b"\n")
try:
    s.recv(100)
    print("answered")
except ConnectionRefusedError:
    print("refused")
except socket.timeout:
    print("silence")
PY
}
is "$(ask "REJECT-ME 1")/$(grep -c REJECT-ME recv.txt)" refused/0 \
	"a datagram of a rejecting list never arrives, and its sender is told (ICMP port unreachable)"
is "$("$BUILD/bloomctl" -s ctl.sock --json stats | jq -c '[.stats.inline.rejected, .stats.inline.reject_unruled]')" "[1,0]" \
	"stats count it rejected"
unreject
is "$(ask "REJECT-ME 2")/$(grep -c REJECT-ME recv.txt)/$("$BUILD/bloomctl" -s ctl.sock --json stats | jq .stats.inline.reject_unruled)" \
	silence/0/1 "with no rule for the mark, it comes back once and is dropped, not queued round again"
for _ in $(seq 200); do grep -q "no rule ahead of the queue rule rejects mark 0xb10c" err && break; sleep 0.1; done
grep -q "1 rejected packets came back to the queue and were dropped: no rule ahead of the queue rule rejects mark 0xb10c" err
ok $? "and the log names the rule that is missing"

# An entry held by a dropping list and by a more severe alerting one: any list that drops, drops.
printf 'sig "EVIL-PAYLOAD"\nsig "BOTH-LISTS"\n' > evil.list
printf 'sig "WATCH-ME"\nsig "BOTH-LISTS" severity=1\n' > watch.list
"$BUILD/bloomctl" -s ctl.sock replace evil >/dev/null && "$BUILD/bloomctl" -s ctl.sock replace watch >/dev/null
send "BOTH-LISTS 1"
send "hello 5"
for _ in $(seq 100); do grep -q "hello 5" recv.txt 2>/dev/null && break; sleep 0.05; done
for _ in $(seq 400); do [ "$(jq -r 'select(.alert.severity == 1) | .alert.action' events.json)" ] && break; sleep 0.05; done
is "$(grep -c BOTH-LISTS recv.txt)/$(jq -r 'select(.alert.severity == 1) | "\(.alert.action) \(.alert.context.matches[0].list)"' events.json)" \
	"0/blocked watch" "a packet matching a dropping list is dropped, though a more severe alerting list labels it"

# bloomd killed: with bypass, the queue has no listener and packets pass (fail-open).
disown "$pid"; kill -9 "$pid"; pid=
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.02; done
sleep 0.2
send "EVIL-PAYLOAD after"
send "hello after"
for _ in $(seq 100); do grep -q "hello after" recv.txt 2>/dev/null && break; sleep 0.05; done
is "$(grep -c after recv.txt)" 2 "with bloomd killed, traffic keeps flowing (bypass)"

# Batches: bloomd held still (SIGSTOP) while 60 datagrams queue, every third of a dropping
# list, then let go: one read brings them, judged together (batch = 64) or one by one
# (batch = 1), with the same verdicts and events.
blocked() { grep -c '"action":"blocked"' events.json; }
burst() {
	local before
	before=$(blocked)
	sed "s/^queue = 7$/queue = 7\nbatch = $1/" bloomd.conf > burst$1.conf
	ip netns exec $b "$BUILD/bloomd" -c burst$1.conf 2>burst$1.err &
	pid=$!
	for _ in $(seq 100); do "$BUILD/bloomctl" -s ctl.sock version >/dev/null 2>&1 && break; sleep 0.05; done
	kill -STOP "$pid"
	ip netns exec $a python3 - "$1" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(60):
    text = "EVIL-PAYLOAD" if i % 3 == 0 else "fine"
    s.sendto(f"{text} burst{sys.argv[1]} {i}\n".encode(), ("10.77.0.2", 9999))
PY
	sleep 0.3
	kill -CONT "$pid"
	for _ in $(seq 100); do grep -q "fine burst$1 59" recv.txt 2>/dev/null && break; sleep 0.05; done
	for _ in $(seq 400); do [ "$(blocked)" -ge $((before + 20)) ] && break; sleep 0.05; done
	stats=$("$BUILD/bloomctl" -s ctl.sock --json stats)
	is "$(grep -c "fine burst$1" recv.txt)/$(grep -c "EVIL-PAYLOAD burst$1" recv.txt)/$(jq .stats.inline.dropped <<<"$stats")/$(($(blocked) - before))" \
		40/0/20/20 "batch = $1: the 40 unlisted datagrams arrive, the 20 listed are dropped, each with its event"
	largest=$(jq .stats.inline.largest_batch <<<"$stats")
	if [ "$1" = 1 ]; then is "$largest" 1 "one by one"; else [ "$largest" -gt 1 ]; ok $? "judged $largest at once"; fi
	kill "$pid"
	wait "$pid" 2>/dev/null
	pid=
}
burst 64
burst 1

# Set actions: bloomd watching the interface (passive) puts the source of a match into an
# nftables set with a timeout; the kernel drops what follows from it, at line rate.
if ip netns exec $b nft add table inet bloomdset 2>/dev/null &&
	ip netns exec $b nft add set inet bloomdset blocked '{ type ipv4_addr; flags timeout; }' &&
	ip netns exec $b nft add chain inet bloomdset input '{ type filter hook input priority -10; }' &&
	ip netns exec $b nft add rule inet bloomdset input ip saddr @blocked drop; then
	cat > set.conf <<C
[capture]
interface = veth-b$$
[list evil]
file = evil.list
[signatures]
window = 4
[action]
set = inet bloomdset blocked
timeout = 120
[control]
socket = $tmp/set.sock
[store]
dir =
[output]
events = $tmp/set-events.json
C
	ip netns exec $b "$BUILD/bloomd" -c set.conf 2>set.err &
	pid=$!
	for _ in $(seq 100); do "$BUILD/bloomctl" -s set.sock version >/dev/null 2>&1 && break; sleep 0.05; done
	send "hello before"
	# A datagram's source is whatever its sender wrote: its match blocks nothing.
	send "EVIL-PAYLOAD forged"
	for _ in $(seq 100); do [ -s set-events.json ] && break; sleep 0.05; done
	is "$(jq -r .alert.context.sender set-events.json)/$(ip netns exec $b nft list set inet bloomdset blocked | grep -c '10.77.0.1 timeout')" \
		"udp/0" "a datagram's match blocks nothing: nothing proves its source"
	# A connection whose handshake bloomd saw whole: its sender is proven, and blocked.
	tcp_receiver 9998
	for i in 1 2 3; do tcp_send_from 1 "EVIL-PAYLOAD set $i" 9998; done
	for _ in $(seq 100); do [ "$(grep -c '"sender":"verified"' set-events.json)" -ge 1 ] && break; sleep 0.05; done
	sleep 0.2
	send "hello blocked"
	sleep 0.5
	set=$(ip netns exec $b nft list set inet bloomdset blocked)
	grep -q "10.77.0.1 timeout 2m" <<<"$set"; ok $? "a match puts its source into the nftables set, with its timeout"
	is "$(grep -c 'hello blocked' recv.txt)" 0 "and the kernel drops what follows from it"
	is "$(jq -r 'select(.alert.context.blocked) | .alert.context.blocked[0]' set-events.json | head -n 1)" 10.77.0.1 "the event says what was blocked"
	is "$("$BUILD/bloomctl" -s set.sock --json stats | jq -c '[.stats.set_action.added, .stats.set_action.errors, .stats.unverified_not_blocked]')" "[1,0,1]" \
		"the address is added once, not once a packet; the datagram's counted unverified"
	sed 's/^set = .*/set = inet bloomdset nosuch/' set.conf > noset.conf
	out=$(ip netns exec $b "$BUILD/bloomd" -n -c noset.conf 2>&1)
	[ $? -eq 1 ] && grep -q "nft list set inet bloomdset nosuch: .*the set must exist" <<<"$out"
	ok $? "-n checks that the set exists" || sed 's/^/# -n said: /' <<<"$out"
else
	for _ in 1 2 3 4 5 6; do tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP nftables sets do not work in this kernel"; done
fi
[ $tap_failed -eq 0 ] || { sed "s/^/# recv: /" recv.txt; sed "s/^/# err: /" err; }
done_testing
