#!/usr/bin/env bash
# Live capture on lo: UDP and TCP packets to 127.0.0.x, a listed pair and a signature
# produce events; other traffic does not; SIGTERM stops bloomd cleanly.
. "$(dirname "$0")/tap.sh"
if [ "$(id -u)" -ne 0 ] || ! ip link show lo >/dev/null 2>&1; then
	echo "1..0 # SKIP needs root and a loopback interface"
	exit 0
fi
plan 7
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
port=$(( 20000 + RANDOM % 20000 ))
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
[control]
socket = $tmp/control.sock
[store]
dir = $tmp/state
C

"$BUILD/bloomd" -c bloomd.conf 2> err &
pid=$!
for _ in $(seq 50); do grep -q "capturing on lo" err && break; sleep 0.1; done
grep -q "capturing on lo" err; ok $? "bloomd captures on lo"

echo -n "xx bloomd-live-signature xx" > /dev/udp/127.0.0.2/$port  # signature
(exec 3<>/dev/tcp/127.0.0.3/$port) 2>/dev/null                  # TCP SYN to a closed port: the pair
echo -n "nothing to see here, at all" > /dev/udp/127.0.0.9/$port # neither
for _ in $(seq 50); do [ "$(grep -c alert events.json 2>/dev/null)" -ge 2 ] && break; sleep 0.1; done
sleep 0.3

sig=$(jq -c 'select(.matches[0].kind == "sig")' events.json | head -n 1)
is "$(jq -r '.in_iface, .dest_ip, .dest_port, .proto' <<<"$sig" | tr '\n' ' ')" "lo 127.0.0.2 $port UDP " "the signature event"
is "$(jq -r '.matches[0].offset' <<<"$sig")" 3 "at its offset"
pair=$(jq -c 'select(.matches[0].kind == "pair")' events.json | head -n 1)
is "$(jq -r '.src_ip, .dest_ip, .dest_port, .proto' <<<"$pair" | tr '\n' ' ')" "127.0.0.1 127.0.0.3 $port TCP " "the pair event"
! grep -q 127.0.0.9 events.json; ok $? "no event for unlisted traffic"
kill -TERM "$pid"
wait "$pid"; is $? 0 "SIGTERM: clean exit"
pid=
grep -q "stopping" err && grep -q "stopped: [0-9]* packets, [1-9][0-9]* matched" err
ok $? "it says it is stopping, and what it saw"
done_testing
