#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Detect, decide, enforce, with Debian's real CrowdSec and no glue: clients contact addresses a
# list of bloomd's holds (action alert: not dropped by it); CrowdSec reads bloomd's eve file
# with the parser and scenario bloomd ships (conf/crowdsec) and bans the listed side, never the
# clients; the ban comes back through bloomd's own source = crowdsec list into the kernel's set
# ([action] manage). A signature's sender is banned only when a TCP handshake proved it: a
# forged datagram or segment bans nobody; and the host's resolver and gateway are never
# banned, even by a decision made by hand.
. "$(dirname "$0")/support/tap.sh"
. "$(dirname "$0")/support/netns.sh"
plan 18
command -v crowdsec >/dev/null && command -v cscli >/dev/null || skip_all "no crowdsec (tools/install-deps.sh test)"
here=$(cd "$(dirname "$0")/.." && pwd)
netns_test cl "network namespaces, nftables, CrowdSec"
lapi=
at_exit='[ -n "$lapi" ] && kill "$lapi" 2>/dev/null'
port=8090
. "$tap_dir/crowdsec-lapi.sh"
lapi_config "$tmp" "$port"
sed -i 's/log_level: warning, working_dir/log_level: info, working_dir/' config.yaml # says when the agent reads
# The agent too: bloomd's eve file, bloomd's parsers and scenarios, CrowdSec's own grok patterns.
mkdir -p parsers scenarios
cp -r "$here/conf/crowdsec/parsers/." parsers/
cp "$here/conf/crowdsec/scenarios/"*.yaml scenarios/
ln -s /etc/crowdsec/patterns patterns
printf 'filenames:\n  - %s/events.json\nlabels:\n  type: bloomd\n' "$tmp" > acquis.yaml
: > events.json
in_b() { ip netns exec $b "$@"; }
cs() { in_b cscli -c "$tmp/config.yaml" "$@" 2>>cscli.err; }
cs machines add tester --password testpass -f "$tmp/local_api_credentials.yaml" --url "http://127.0.0.1:$port" >/dev/null
cs bouncers add bloomd -o raw > key
chmod 600 key
ip netns exec $b crowdsec -c "$tmp/config.yaml" >> crowdsec.log 2>&1 & # not in_b: $! is crowdsec, not a subshell
lapi=$!
# Until the agent tails the file (it reads from the end: what is written before it is not seen).
for _ in $(seq 300); do grep -q "Starting processing data" crowdsec.log && break; sleep 0.1; done
grep -q "Starting processing data" crowdsec.log && in_b bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null
ok $? "CrowdSec starts, agent and local API, with bloomd's parsers and scenarios"

# 203.0.113.66 (TCP and UDP) and 203.0.113.77 (UDP alone) are listed; the clients are not.
printf '203.0.113.66\n203.0.113.77\n2001:db8:bad::66\n' > intel.list
{
	echo "link en10mb"
	echo "packet src=198.51.100.10 dst=203.0.113.66 proto=tcp sport=40000 dport=443"
	echo "packet src=198.51.100.10 dst=203.0.113.66 proto=udp sport=40001 dport=53"
	echo "packet src=198.51.100.11 dst=203.0.113.77 proto=udp sport=40002 dport=123"
	echo "packet src=2001:db8::10 dst=2001:db8:bad::66 proto=udp sport=40003 dport=53"
} | "$BUILD/pcapgen" -o traffic.pcap -
# A severity-1 signature, sent three ways: in a UDP datagram whose source is forged as the site's
# resolver, in a TCP segment no handshake opened (forged as 192.0.2.54), and by a client that
# completed its connection (198.51.100.99).
printf 'sig "evil-marker"\n' > sigs.list
{
	echo "link en10mb"
	echo "packet src=192.0.2.53 dst=10.77.0.2 proto=udp sport=53 dport=9999 payload=\"evil-marker\""
	echo "packet src=192.0.2.54 dst=10.77.0.2 proto=tcp sport=40001 dport=80 flags=PA seq=1 ack=1 payload=\"evil-marker\""
	echo "packet src=198.51.100.99 dst=10.77.0.2 proto=tcp sport=40000 dport=80 flags=S seq=1000"
	echo "packet src=10.77.0.2 dst=198.51.100.99 proto=tcp sport=80 dport=40000 flags=SA seq=5000 ack=1001 smac=2"
	echo "packet src=198.51.100.99 dst=10.77.0.2 proto=tcp sport=40000 dport=80 flags=A seq=1001 ack=5001"
	echo "packet src=198.51.100.99 dst=10.77.0.2 proto=tcp sport=40000 dport=80 flags=PA seq=1001 ack=5001 payload=\"GET /evil-marker\""
} | "$BUILD/pcapgen" -o forged.pcap -
# The host's resolver (its resolv.conf, which ip netns exec takes from /etc/netns) and its gateway.
mkdir -p /etc/netns/$b
at_exit="$at_exit; rm -rf /etc/netns/$b"
echo "nameserver 192.0.2.53" > /etc/netns/$b/resolv.conf
ip -n $b addr add 10.77.0.2/24 dev veth-b$$
ip -n $b route add default via 10.77.0.1
cat > bloomd.conf <<C
[list sigs]
file = $tmp/sigs.list
action = alert
severity = 1
category = attacker
[list intel]
file = $tmp/intel.list
format = plain
action = alert
severity = 1
category = attacker
[list cs]
source = crowdsec
url = http://127.0.0.1:$port/
api_key_file = $tmp/key
refresh = 1
[action]
manage = yes
[output]
events = $tmp/events.json
[control]
socket = $tmp/ctl.sock
[store]
dir =
C
bloomd_up bloomd.conf; ok $? "bloomd starts, a bouncer of that CrowdSec"
in_kernel() { in_b nft list set inet bloomd listed$1 | grep -qw "$2"; }
in_kernel 4 203.0.113.66; is $? 1 "a list of action alert is not in the kernel's sets"
C replay traffic.pcap --wait >/dev/null
is "$(jq -r 'select(.event_type == "alert") | .alert.source.ip' events.json | sort -u | tr '\n' ' ')" \
	"2001:db8:bad::66 203.0.113.66 203.0.113.77 " "bloomd's alerts name the listed side as their source"
banned() { cs decisions list -o json | jq -r '.[]?.decisions[]? | select(.type == "ban") | .value' | sort -u | tr '\n' ' '; }
for _ in $(seq 300); do [ "$(banned)" = "2001:db8:bad::66 203.0.113.66 203.0.113.77 " ] && break; sleep 0.1; done
is "$(banned)" "2001:db8:bad::66 203.0.113.66 203.0.113.77 " "CrowdSec bans the listed addresses, UDP alone too, and none of the clients"
is "$(cs decisions list -o json | jq -r '[.[].scenario] | unique | join(",")')" "bloomd/bloomd-listed-severe" \
	"by bloomd's scenario for a list of severity 1"
wait_for 'C query addr 203.0.113.77 2>/dev/null | grep -qw cs'
ok $? "the ban reaches bloomd's list cs within a refresh"
for _ in $(seq 100); do in_kernel 4 203.0.113.66 && in_kernel 4 203.0.113.77 && in_kernel 6 2001:db8:bad::66 && break; sleep 0.1; done
in_kernel 4 203.0.113.66 && in_kernel 4 203.0.113.77 && in_kernel 6 2001:db8:bad::66
ok $? "and the kernel's sets: the kernel drops them"
in_kernel 4 198.51.100.10 || in_kernel 4 198.51.100.11 || in_kernel 6 2001:db8::10; is $? 1 "the clients stay free"

# Forged evidence bans nobody; a handshake seen whole bans its client.
: > events.json
C replay forged.pcap --wait >/dev/null
is "$(jq -r 'select(.event_type == "alert") | "\(.alert.source.ip) \(.alert.context.sender)"' events.json | tr '\n' ,)" \
	"192.0.2.53 udp,192.0.2.54 no_handshake,198.51.100.99 verified," "each alert says whether a handshake proved its sender"
for _ in $(seq 300); do banned | grep -qw 198.51.100.99 && break; sleep 0.1; done
banned | grep -qw 198.51.100.99; ok $? "a client that completed its connection and sent the signature is banned"
banned | grep -qw -e 192.0.2.53 -e 192.0.2.54; is $? 1 "a forged datagram and a segment with no handshake ban nobody"
# Decisions by hand: the resolver and the gateway are kept as the host's own addresses are.
cs decisions add -i 192.0.2.53 -d 1h >/dev/null && cs decisions add -i 10.77.0.1 -d 1h >/dev/null &&
	cs decisions add -i 203.0.113.99 -d 1h >/dev/null
ok $? "decisions made by hand for the resolver, the gateway and another address"
for _ in $(seq 100); do in_kernel 4 203.0.113.99 && break; sleep 0.1; done
in_kernel 4 203.0.113.99; ok $? "the other address reaches the kernel's set"
protected() { in_b nft list set inet bloomd protected4 | grep -qw "$1"; }
protected 192.0.2.53 && protected 10.77.0.1; ok $? "the resolver and the gateway are in the protected set"
[ "$(C --json stats | jq .stats.set_action.protected_listed)" -ge 2 ] &&
	[ "$(grep -c 'a list holds [0-9.]*, the host.s own, loopback, its resolver, gateway or peer' err)" = 1 ]
ok $? "the decisions for them are counted, and logged once"
# The chain accepts what is protected before it drops anything: a datagram from each gets through.
ip -n $a addr add 10.77.0.1/24 dev veth-a$$
udp_receiver 9999
ip netns exec $a socat -u - UDP-SENDTO:10.77.0.2:9999,bind=10.77.0.1 <<<"from the gateway"
for _ in $(seq 100); do grep -q "from the gateway" recv.txt && break; sleep 0.1; done
grep -q "from the gateway" recv.txt; ok $? "the gateway's datagrams still arrive, though a decision names it"
C --json stats | tee stats.json | jq -e '.stats.alert_senders | .verified == 1 and .udp == 4 and .no_handshake == 2' >/dev/null
ok $? "the stats count alerts by what proved their sender" || echo "# $(jq -c .stats.alert_senders stats.json)"
