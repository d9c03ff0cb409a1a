#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Detect, decide, enforce, with Debian's real CrowdSec and no glue: clients contact addresses a
# list of bloomd's holds (action alert: not dropped by it); CrowdSec reads bloomd's eve file
# with the parser and scenario bloomd ships (conf/crowdsec) and bans the listed side, never the
# clients; the ban comes back through bloomd's own source = crowdsec list into the kernel's set
# ([action] manage).
. "$(dirname "$0")/support/tap.sh"
. "$(dirname "$0")/support/netns.sh"
plan 9
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
cat > bloomd.conf <<C
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
