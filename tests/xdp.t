#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# mode = xdp across two network namespaces joined by a veth pair: bloomd's XDP program on the
# receiving end (native, then generic) drops a listed address, net and pair, IPv4 and IPv6
# (behind stacked VLAN tags too),
# lets a pass address inside a dropping net through, and sends an event for each drop; the
# capture behind it still alerts on a signature; an add is in force when acknowledged, a delete
# too; entries added under traffic grow the program into a larger one, swapped in with no
# listed packet passing (bloomd runs as nobody by then, with CAP_BPF, CAP_PERFMON and
# CAP_NET_ADMIN alone); a rebuild likewise; kill -9 detaches it and traffic flows; with
# xdp_pin it stays, dropping, and the next bloomd takes it over; a second bloomd on the
# interface is refused while the first runs.
. "$(dirname "$0")/support/tap.sh"
. "$(dirname "$0")/support/netns.sh"
plan 38
netns_test x "network namespaces, BPF"
at_exit='[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null'
netns_hosts "1 3 4 5 8 9" "1 3"
# No neighbour solicitation from a listed IPv6 source (it would be dropped too, and counted).
ip -n $a neigh replace fd77::2 lladdr "$(ip -n $b -br link show veth-b$$ | awk '{ print $3 }')" dev veth-a$$ nud permanent
stat() { C --json stats | jq -r ".stats.xdp.$1"; }

cat > bad.list <<L
addr 10.77.0.3
net 10.77.0.4/30
pair 10.77.0.8 10.77.0.2
addr fd77::3
L
# The pass list holds the server itself (a whitelist): traffic to it is still judged on its source.
printf 'addr 10.77.0.5\naddr 10.77.0.2\n' > mine.list
printf 'sig "EVIL-PAYLOAD"\n' > evil.list
conf() { # conf XDP_MODE [MORE [capture] LINES]
	cat > bloomd.conf <<C
[capture]
mode = xdp
interface = veth-b$$
xdp_mode = $1
${2:-}
[list bad]
file = $tmp/bad.list
[list mine]
file = $tmp/mine.list
action = pass
[list evil]
file = $tmp/evil.list
action = alert
[signatures]
window = 4
[control]
socket = $tmp/ctl.sock
[store]
dir =
[output]
events = $tmp/events.json
[service]
user = nobody
C
}
conf native
out=$(ip netns exec $b "$BUILD/bloomd" -n -c bloomd.conf 2>&1); rc=$?
ok $rc "bloomd -n: the kernel takes the program"
[ $rc -ne 0 ] && sed 's/^/# /' <<<"$out"
out=$(ip netns exec $b setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
	"$BUILD/bloomd" -n -c bloomd.conf 2>&1)
grep -q 'mode = xdp: XDP: cannot make BPF maps: Operation not permitted (CAP_BPF needed' <<<"$out"
ok $? "bloomd -n without CAP_BPF names what is missing"
sed 's/veth-b[0-9]*/no-such-if0/' bloomd.conf > noif.conf
out=$(ip netns exec $b "$BUILD/bloomd" -n -c noif.conf 2>&1)
grep -q 'interface no-such-if0: No such device' <<<"$out"
ok $? "bloomd -n: a missing interface is named"
ip netns exec $b socat -u UDP6-RECV:9999 OPEN:recv.txt,creat,append & # IPv4 too (dual stack)
for _ in $(seq 100); do ip netns exec $b ss -Hlun 'sport = :9999' | grep -q . && break; sleep 0.05; done
# Only a kernel without BPF, or no right to use it, is a reason to skip; any other failure fails.
if ! bloomd_up bloomd.conf && grep -q 'XDP: cannot make BPF maps\|XDP: the kernel refused' err; then
	skip_all "no XDP here: $(grep -o 'XDP: .*' err | head -1)"
fi
C version >/dev/null 2>&1; rc=$?
ok $rc "bloomd attaches its XDP program to veth-b in native mode"
[ $rc -ne 0 ] && sed 's/^/# /' err
is "$(stat mode)" native "stats say native"
ip -n $b link show veth-b$$ | grep -q 'prog/xdp'; ok $? "the interface shows the program"
is "$(stat attached)/$(C metrics | awk '/^bloomd_xdp_attached / { print $2 }')" true/1 "stats and metrics say it is attached"

send_from 1 "from-clean 1"
send_from 3 "from-listed 1"
send_from 4 "from-net 1"
send_from 5 "from-pass 1"
send_from 8 "from-pair 1"
send_from fd77::3 "from-listed6 1"
send_from fd77::1 "from-six 1"
send_from 1 "from-clean EVIL-PAYLOAD"
wait_for '[ "$(received from-clean)" -ge 2 ] && [ "$(received from-pass)" -ge 1 ] && [ "$(received from-six)" -ge 1 ]'
is "$(received from-clean)/$(received from-pass)/$(received from-six)" 2/1/1 "unlisted and pass traffic is delivered, IPv4 and IPv6"
is "$(received from-listed)/$(received from-net)/$(received from-pair)/$(received from-listed6)" 0/0/0/0 \
	"the listed address, net, pair and IPv6 address are dropped at the driver"
is "$(stat dropped)/$(stat exempted)" 4/3 "four drops, and three packets a pass entry held (the pass source, two to the server)"
wait_for '[ "$(jq -s "map(select(.alert.action == \"blocked\")) | length" events.json)" -ge 4 ]'
is "$(jq -r 'select(.alert.action == "blocked") | .src_ip' events.json | sort | tr '\n' ' ')" \
	"10.77.0.3 10.77.0.4 10.77.0.8 fd77::3 " "an event for each drop, with its source"
# The program reports the key that dropped: the daemon finds its lists by it.
is "$(jq -r 'select(.alert.action == "blocked") | .alert.context.matches[0] | "\(.kind) \(.entry) \(.list)"' \
	events.json | sort | tr '\n' ';')" "addr 10.77.0.3 bad;addr fd77::3 bad;net 10.77.0.4/30 bad;pair 10.77.0.8 10.77.0.2 bad;" \
	"each drop's event names the entry that dropped it and its list: address, net, pair and IPv6 address"
wait_for 'jq -e "select(.alert.action == \"allowed\")" events.json >/dev/null'
is "$(jq -r 'select(.alert.action == "allowed") | .src_ip' events.json | sort -u | tr '\n' ' ')" "10.77.0.1 " \
	"the capture behind the program alerts on a signature"

# Frames from the listed source behind stacked VLAN tags, as an attacker would send them (raw,
# on the wire): 3 tags, 4 tags, one 0x9100, all dropped; 9 tags (past packet.c's 8) passed and
# counted as unparsed.
before="$(stat dropped)/$(stat unparsed)"
mac_b=$(ip -n $b -br link show veth-b$$ | awk '{ print $3 }')
ip netns exec $a python3 - "veth-a$$" "$mac_b" <<'PY'
import socket, struct, sys
dev, mac = sys.argv[1], bytes.fromhex(sys.argv[2].replace(":", ""))
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((dev, 0))
def csum(b):
    t = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    t = (t >> 16) + (t & 0xffff)
    return ~(t + (t >> 16)) & 0xffff
udp = struct.pack("!HHHH", 40000, 9999, 8 + 6, 0) + b"vlan!\n"
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 7, 0, 64, 17, 0, socket.inet_aton("10.77.0.3"), socket.inet_aton("10.77.0.2"))
ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
for tags in ([0x8100, 0x88a8, 0x9100], [0x88a8, 0x8100, 0x8100, 0x8100], [0x9100], [0x8100] * 9):
    frame = mac + b"\x02\x00\x00\x00\x00\x01" + b"".join(struct.pack("!HH", t, 10) for t in tags) + b"\x08\x00" + ip
    s.send(frame)
PY
sleep 0.3
d0=${before%/*} u0=${before#*/}
is "$(($(stat dropped) - d0))/$(($(stat unparsed) - u0))" 3/1 \
	"behind 3 and 4 stacked tags and an 0x9100 tag the listed source is dropped; behind 9, passed and counted as unparsed"

C add "addr 10.77.0.1" >/dev/null
send_from 1 "from-added 1"
sleep 0.3
is "$(received from-added)" 0 "an address added is dropped as soon as the add is acknowledged"
C del "addr 10.77.0.1" >/dev/null
send_from 1 "from-deleted 1"
wait_for '[ "$(received from-deleted)" -ge 1 ]'
is "$(received from-deleted)" 1 "and delivered again once its delete is"

# An entry that expires leaves the program with no command to publish it (the loop's timer does).
C add "addr 10.77.0.1" --ttl 1 >/dev/null
send_from 1 "ttl-before 1"
wait_for '[ "$(C --json stats | jq .stats.xdp.entries)" = 5 ]'
send_from 1 "ttl-after 1"
wait_for '[ "$(received ttl-after)" -ge 1 ]'
is "$(received ttl-before)/$(received ttl-after)" 0/1 "an entry whose time ran out leaves the program"

# A list's new version (a rehold: no entry named) and a reload that makes it alert-only.
cp bad.list bad.list.orig
sed -i 's/^addr 10.77.0.3$/addr 10.77.0.9/' bad.list
C replace bad >/dev/null
send_from 3 "replaced-old 1"
send_from 9 "replaced-new 1"
wait_for '[ "$(received replaced-old)" -ge 1 ]'
sleep 0.2
is "$(received replaced-old)/$(received replaced-new)" 1/0 "a list's new version is in force in the program when acknowledged"
sed -i 's/^file = \(.*\)bad.list$/file = \1bad.list\naction = alert/' bloomd.conf
C reload >/dev/null
send_from 9 "reloaded 1"
wait_for '[ "$(received reloaded)" -ge 1 ]'
is "$(received reloaded)" 1 "a reload that makes the list alert-only takes its entries out of the program"
cp bad.list.orig bad.list
conf native
C reload >/dev/null
C replace bad >/dev/null

# Entries added under traffic from a listed source: the program grows, swapped in whole.
gens=$(stat generations)
( for i in $(seq 400); do send_from 3 "under-growth $i"; done ) &
sender=$!
for i in $(seq 0 3); do for j in $(seq 1 250); do echo "addr 10.88.$i.$j"; done; done > many.list
C load many.list >/dev/null
wait $sender
below "$gens" "$(stat generations)" "a thousand adds outgrow the program: a larger one is swapped in"
is "$(stat entries)" 1006 "it holds every entry"
is "$(received under-growth)" 0 "no listed packet passed while it was swapped"
( for i in $(seq 300); do send_from 3 "under-rebuild $i"; done ) &
sender=$!
C rebuild --wait >/dev/null
wait $sender
is "$(received under-rebuild)" 0 "none during a rebuild of the daemon's filters either"

# Another tool detaching it (bpftool link detach): stats and metrics say so, for the alert.
prog=$(ip -n $b -d link show veth-b$$ | grep -o 'prog/xdp id [0-9]*' | awk '{ print $3 }')
link=$(PATH=$PATH:/usr/sbin bpftool -j link show 2>/dev/null | jq -r --argjson p "${prog:-0}" '.[] | select(.type == "xdp" and .prog_id == $p) | .id' | head -n 1)
if [ -n "$link" ] && PATH=$PATH:/usr/sbin bpftool link detach id "$link" 2>/dev/null; then
	is "$(stat attached)/$(C metrics | awk '/^bloomd_xdp_attached / { print $2 }')" false/0 "detached by another tool: stats and metrics say so"
else
	skip 1 "bpftool cannot detach an XDP link here"
fi

# kill -9: the link dies with the process, the kernel detaches the program, traffic flows.
kill -9 $pid
wait $pid 2>/dev/null
pid=
for _ in $(seq 100); do ip -n $b link show veth-b$$ | grep -q 'prog/xdp' || break; sleep 0.05; done
ip -n $b link show veth-b$$ | grep -q 'prog/xdp'; is $? 1 "after kill -9 the program is gone from the interface"
send_from 3 "after-kill 1"
wait_for '[ "$(received after-kill)" -ge 1 ]'
is "$(received after-kill)" 1 "and the listed address gets through (fail-open)"

# xdp_pin, on a bpf file system of the test's own: the program outlives bloomd (fail-closed).
mkdir bpffs
if mount -t bpf bpf "$tmp/bpffs" 2>/dev/null; then
	at_exit='[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; umount "$tmp/bpffs" 2>/dev/null'
	conf native "$(printf 'xdp_pin = yes\nxdp_pin_dir = %s/bpffs/bloomd' "$tmp")"
	bloomd_up bloomd.conf && [ -e bpffs/bloomd/veth-b$$ ] && [ "$(C --json stats | jq .stats.xdp.pinned)" = true ]
	ok $? "xdp_pin = yes: the program's link is pinned in the bpf file system"
	kill -9 $pid; wait $pid 2>/dev/null; pid=
	sleep 0.2
	send_from 3 "pinned-listed 1"
	send_from 1 "pinned-clean 1"
	wait_for '[ "$(received pinned-clean)" -ge 1 ]'
	ip -n $b link show veth-b$$ | grep -q 'prog/xdp' && [ "$(received pinned-listed)/$(received pinned-clean)" = 0/1 ]
	ok $? "after kill -9 the pinned program stays and still drops the listed address (fail-closed)"
	bloomd_up bloomd.conf && grep -q 'taken over from the link pinned there' err
	ok $? "a new bloomd takes the pinned link over"
	C add "addr 10.77.0.1" >/dev/null
	send_from 1 "pinned-added 1"
	sleep 0.3
	is "$(received pinned-added)" 0 "its program is the one in force: an add is dropped at once"
	# A second bloomd on the same interface: refused, naming the first, whose program stays in force.
	sed "s|$tmp/ctl.sock|$tmp/ctl2.sock|" bloomd.conf > second.conf
	ip netns exec $b "$BUILD/bloomd" -c second.conf 2>second.err; rc=$?
	[ $rc -ne 0 ] && grep -q "veth-b$$ is held by another bloomd (pid $pid)" second.err
	ok $? "a second bloomd with xdp_pin on the interface is refused, naming the first: $(grep -o 'XDP: .* (pid [0-9]*)' second.err)"
	send_from 1 "pinned-second 1"
	sleep 0.3
	is "$(received pinned-second)" 0 "and the first bloomd's program still drops what it lists"
	C del "addr 10.77.0.1" >/dev/null
	conf native "$(printf 'xdp_pin = no\nxdp_pin_dir = %s/bpffs/bloomd' "$tmp")"
	kill $pid; wait $pid 2>/dev/null; pid=
	bloomd_up bloomd.conf && [ ! -e bpffs/bloomd/veth-b$$ ]
	ok $? "xdp_pin = no: the pinned link is taken over and unpinned"
	kill -9 $pid; wait $pid 2>/dev/null; pid=
	for _ in $(seq 100); do ip -n $b link show veth-b$$ | grep -q 'prog/xdp' || break; sleep 0.05; done
	ip -n $b link show veth-b$$ | grep -q 'prog/xdp'; is $? 1 "and goes with bloomd again"
else
	skip 8 "cannot mount a bpf file system here"
fi

conf generic
bloomd_up bloomd.conf; ok $? "bloomd starts in generic mode"
is "$(stat mode)" generic "stats say generic"
send_from 3 "generic-listed 1"
send_from 1 "generic-clean 1"
wait_for '[ "$(received generic-clean)" -ge 1 ]'
is "$(received generic-listed)/$(received generic-clean)" 0/1 "generic mode drops the listed address and passes the rest"
C --json metrics | grep -q '^bloomd_xdp_dropped_total [1-9]' || C metrics | grep -q '^bloomd_xdp_dropped_total [1-9]'
ok $? "the metrics count XDP drops"
kill $pid && wait $pid
pid=
done_testing
