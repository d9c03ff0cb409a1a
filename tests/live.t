#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Live capture on lo: UDP and TCP packets to 127.0.0.x, a listed pair and a signature
# produce events; other traffic does not; packets sent 250 ms apart are stamped so, in
# the events and in the match pcap; SIGTERM stops bloomd cleanly.
. "$(dirname "$0")/support/tap.sh"
if [ "$(id -u)" -ne 0 ] || ! ip link show lo >/dev/null 2>&1; then
	echo "1..0 # SKIP needs root and a loopback interface"
	exit 0
fi
plan 10
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
port=$(free_port)
cat > list <<'L'
pair 127.0.0.1 127.0.0.3
sig "bloomd-live-signature"
L
cat > bloomd.conf <<C
[capture]
interface = lo
bpf = host 127.0.0.2 or host 127.0.0.3 or host 127.0.0.9
[entries]
file = list
[output]
events = events.json
pcap = matched.pcap
[control]
socket = $tmp/control.sock
[store]
dir = $tmp/state
C

"$BUILD/bloomd" -c bloomd.conf 2> err &
pid=$!
for _ in $(seq 200); do grep -q "capturing on lo" err && break; sleep 0.1; done
grep -q "capturing on lo" err; ok $? "bloomd captures on lo"

echo -n "xx bloomd-live-signature xx" > /dev/udp/127.0.0.2/$port  # signature
(exec 3<>/dev/tcp/127.0.0.3/$port) 2>/dev/null                  # TCP SYN to a closed port: the pair
echo -n "nothing to see here, at all" > /dev/udp/127.0.0.9/$port # neither
sleep 0.25
echo -n "yy bloomd-live-signature yy" > /dev/udp/127.0.0.2/$port  # the signature again, 250 ms on
for _ in $(seq 200); do [ "$(cat events.json 2>/dev/null | grep -c alert)" -ge 3 ] && break; sleep 0.1; done
sleep 0.3

sig=$(jq -c 'select(.alert.context.matches[0].kind == "sig")' events.json | head -n 1)
is "$(jq -r '.in_iface, .dest_ip, .dest_port, .proto' <<<"$sig" | tr '\n' ' ')" "lo 127.0.0.2 $port UDP " "the signature event"
is "$(jq -r '.alert.context.matches[0].offset' <<<"$sig")" 3 "at its offset"
pair=$(jq -c 'select(.alert.context.matches[0].kind == "pair")' events.json | head -n 1)
is "$(jq -r '.src_ip, .dest_ip, .dest_port, .proto' <<<"$pair" | tr '\n' ' ')" "127.0.0.1 127.0.0.3 $port TCP " "the pair event"
! grep -q 127.0.0.9 events.json; ok $? "no event for unlisted traffic"
# Seconds between the first and the last signature event's timestamps.
sig_gap() {
	jq -r 'select(.alert.context.matches[0].kind == "sig") | .timestamp' "$1" |
		sed 's/.*T\(..\):\(..\):\([0-9.]*\)+0000/\1 \2 \3/' |
		awk 'NR == 1 { first = $1 * 3600 + $2 * 60 + $3 } { last = $1 * 3600 + $2 * 60 + $3 } END { printf "%.4f", last - first }'
}
gap=$(sig_gap events.json)
awk -v g="$gap" 'BEGIN { exit !(g >= 0.2 && g < 1.0) }'
ok $? "packets sent 250 ms apart are stamped $gap s apart"
"$BUILD/bloomctl" -s "$tmp/control.sock" metrics | grep -q '^bloomd_capture_dropped_packets_total{interface="lo"} [0-9]'
ok $? "metrics: the kernel's capture drops on lo"
kill -TERM "$pid"
wait "$pid"; is $? 0 "SIGTERM: clean exit"
printf '[entries]\nfile = list\n[output]\nevents = -\n' > replay.conf
"$BUILD/bloomd" -c replay.conf -r matched.pcap 2>/dev/null | grep '"alert"' > replayed.json
gap=$(sig_gap replayed.json)
awk -v g="$gap" 'BEGIN { exit !(g >= 0.2 && g < 1.0) }'
ok $? "and so in the match pcap ($gap s)"
pid=
grep -q "stopping" err && grep -q "stopped: [0-9]* packets, [1-9][0-9]* matched" err
ok $? "it says it is stopping, and what it saw"
done_testing
