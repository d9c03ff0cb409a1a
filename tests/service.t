#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bloomd as a service: the systemd unit (verify, exposure), sd_notify and the watchdog
# through a fake NOTIFY_SOCKET, the privilege drop to [service] user, and capture across
# two network namespaces joined by a veth pair.
. "$(dirname "$0")/support/tap.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
plan 30
tmp=$(mktemp -d)
chmod 755 "$tmp"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; ip netns del bloomd-a 2>/dev/null; ip netns del bloomd-b 2>/dev/null; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
is_root() { [ "$(id -u)" -eq 0 ]; }
wait_for() { # wait_for FILE PATTERN: up to 5 s
	for _ in $(seq 100); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
	return 1
}

# ---- the unit ----
if command -v systemd-analyze >/dev/null; then
	sed "s|/usr/sbin/bloomd|$BUILD/bloomd|g" "$root/systemd/bloomd.service" > bloomd.service
	out=$(systemd-analyze verify --man=no bloomd.service 2>&1)
	ok $? "systemd-analyze verify accepts the unit"
	[ -n "$out" ] && sed 's/^/#   /' <<<"$out"
	exposure=$(systemd-analyze security --offline=true bloomd.service 2>&1 |
		sed -n 's/.*Overall exposure level for bloomd.service: \([0-9.]*\).*/\1/p')
	awk -v e="$exposure" 'BEGIN { exit !(e != "" && e <= 1.5) }'
	ok $? "systemd-analyze security: exposure $exposure, at most 1.5"
	# With the metrics drop-in: IP sockets, to localhost only.
	mkdir -p units/bloomd.service.d
	cp bloomd.service units/
	cp "$root/systemd/bloomd-metrics.conf" units/bloomd.service.d/metrics.conf
	cp "$root/systemd/bloomd-cluster.conf" units/bloomd.service.d/cluster.conf
	cp "$root/systemd/bloomd-inline.conf" units/bloomd.service.d/inline.conf
	out=$(cd units && SYSTEMD_UNIT_PATH=$PWD: systemd-analyze verify --man=no bloomd.service 2>&1 &&
		SYSTEMD_UNIT_PATH=$PWD: systemd-analyze security --offline=true bloomd.service 2>&1)
	grep -q "may allocate Internet sockets" <<<"$out" && grep -q "allow list with only localhost" <<<"$out" &&
		grep -q "CapabilityBoundingSet=~CAP_NET_ADMIN.*has network configuration" <<<"$out"
	ok $? "the metrics, cluster and inline drop-ins verify; IP to localhost only; CAP_NET_ADMIN added"
	cp "$root/systemd/bloomd-fetch.conf" units/bloomd.service.d/fetch.conf
	out=$(cd units && SYSTEMD_UNIT_PATH=$PWD: systemd-analyze verify --man=no bloomd.service 2>&1 &&
		SYSTEMD_UNIT_PATH=$PWD: systemd-analyze security --offline=true bloomd.service 2>&1)
	grep -q "may allocate Internet sockets" <<<"$out" && ! grep -q "allow list with only localhost" <<<"$out"
	ok $? "the fetch drop-in verifies and opens IP to the feeds' servers"
	rm units/bloomd.service.d/*.conf
	cp "$root/systemd/bloomd-xdp.conf" units/bloomd.service.d/xdp.conf
	out=$(cd units && SYSTEMD_UNIT_PATH=$PWD: systemd-analyze verify --man=no bloomd.service 2>&1 &&
		SYSTEMD_UNIT_PATH=$PWD: systemd-analyze security --offline=true bloomd.service 2>&1)
	grep -q "CapabilityBoundingSet=~CAP_BPF" <<<"$out" && grep -q "CapabilityBoundingSet=~CAP_NET_ADMIN.*has network configuration" <<<"$out" &&
		! grep -q "may allocate Internet sockets" <<<"$out"
	ok $? "the xdp drop-in verifies: CAP_BPF and CAP_NET_ADMIN added, still no IP sockets"
else
	skip 5 "no systemd-analyze"
fi
if command -v systemd-sysusers >/dev/null; then
	out=$(systemd-sysusers --dry-run "$root/systemd/bloomd.sysusers" 2>&1)
	grep -q "Creating user 'bloomd'" <<<"$out" || getent passwd bloomd >/dev/null
	ok $? "bloomd.sysusers makes the user bloomd"
	grep -q "Creating group 'bloomctl'" <<<"$out" || getent group bloomctl >/dev/null
	ok $? "and the operators' group bloomctl, which the unit adds it to"
else
	skip 2 "no systemd-sysusers"
fi
if command -v logrotate >/dev/null; then
	logrotate -d -s "$tmp/logrotate.state" "$root/systemd/bloomd.logrotate" > logrotate.out 2>&1
	ok $? "logrotate reads bloomd.logrotate"
else
	skip 1 "no logrotate"
fi

# ---- sd_notify and the watchdog ----
cat > notify.conf <<C
[control]
socket = $tmp/notify.sock
[store]
dir =
C
socat -u UNIX-RECV:"$tmp/notify" - > notify.log &
pids+=($!)
for _ in $(seq 400); do [ -S "$tmp/notify" ] && break; sleep 0.05; done
t0=$(date +%s%N)
NOTIFY_SOCKET=$tmp/notify WATCHDOG_USEC=200000 "$BUILD/bloomd" -c notify.conf 2> notify.err &
pid=$!
pids+=($pid)
wait_for notify.log READY=1; ok $? "READY=1 once the socket is up"
grep -q "STATUS=waiting for commands on $tmp/notify.sock" notify.log; ok $? "with a status line"
# Pings every 100 ms for WATCHDOG_USEC=200000: counted against the time that passed, as a loaded
# machine (prove -j, ASan) delays a timer but never makes it fire early: at least 5 in the end,
# never more than one a 100 ms and a few of slack.
for _ in $(seq 200); do [ "$(grep -o WATCHDOG=1 notify.log | wc -l)" -ge 5 ] && break; sleep 0.05; done
sleep 0.5 # time for a timer that fired too often to show it
pings=$(grep -o WATCHDOG=1 notify.log | wc -l)
ms=$((($(date +%s%N) - t0) / 1000000)) # since bloomd was started
[ "$pings" -ge 5 ] && [ "$pings" -le $((ms / 100 + 3)) ]
ok $? "WATCHDOG=1 every 100 ms for WATCHDOG_USEC=200000 ($pings in about $ms ms)"
kill -HUP "$pid"
wait_for notify.log RELOADING=1; ok $? "RELOADING=1 on SIGHUP"
[ "$(grep -o READY=1 notify.log | wc -l)" -ge 2 ] || sleep 0.3
[ "$(grep -o READY=1 notify.log | wc -l)" -ge 2 ]; ok $? "then READY=1 again"
kill -TERM "$pid"
wait "$pid"; ok $? "SIGTERM: a clean exit"
wait_for notify.log STOPPING=1; ok $? "STOPPING=1 first"
"$BUILD/bloomd" -c notify.conf -n >/dev/null 2>&1 &
wait $!; ok $? "without NOTIFY_SOCKET nothing changes (bloomd -n)"

# ---- recurring packet problems: one warning, then at most one a minute ----
printf 'link en10mb\npacket src=192.0.2.1 dst=192.0.2.2 proto=udp snap=30\n' > cut.spec
"$BUILD/pcapgen" -o cut.pcap cut.spec
"$BUILD/bloomd" -c notify.conf 2> problems.err &
pid=$!
pids+=($pid)
for _ in $(seq 100); do [ -S notify.sock ] && break; sleep 0.05; done
for _ in 1 2 3; do "$BUILD/bloomctl" -s "$tmp/notify.sock" replay cut.pcap --wait >/dev/null; sleep 0.6; done
grep -Eq "packets not checked in full since the last report: [1-3] truncated_ip" problems.err
ok $? "a truncated packet is reported by a warning, not per packet"
is "$(grep -c "not checked in full" problems.err)" 1 "three of them within a minute: still one warning"
kill -TERM "$pid"; wait "$pid"

# ---- the privilege drop ----
if is_root && ip link show lo >/dev/null 2>&1 && id nobody >/dev/null 2>&1 && getent group adm >/dev/null; then
	port=$(free_port)
	echo 'sig "bloomd-privilege-check"' > list
	cat > drop.conf <<C
[capture]
interface = lo
bpf = udp port $port
[entries]
file = list
[control]
socket = $tmp/drop.sock
[store]
dir = $tmp/state
[output]
events = $tmp/drop.json
[service]
user = nobody
C
	printf '[control]\ngroup = adm\n' >> drop.conf
	"$BUILD/bloomd" -c drop.conf 2> drop.err &
	pid=$!
	pids+=($pid)
	wait_for drop.err "running as nobody"
	is "$(awk '/^Uid:/ {print $2, $3, $4, $5}' /proc/$pid/status)" "65534 65534 65534 65534" "the running process is uid nobody"
	is "$(awk '/^CapEff:/ {print $2}' /proc/$pid/status)$(awk '/^CapPrm:/ {print $2}' /proc/$pid/status)" \
		00000000000000000000000000000000 "with no effective or permitted capabilities"
	echo -n "xx bloomd-privilege-check xx" > /dev/udp/127.0.0.1/$port
	wait_for drop.json alert; ok $? "and capture on lo still works"
	is "$(stat -c %U state)" nobody "the state directory was given to it"
	is "$(stat -c %U:%G drop.sock)" "nobody:adm" "and the socket, which keeps [control] group"
	"$BUILD/bloomctl" -s "$tmp/drop.sock" save >/dev/null; ok $? "so it can still write a snapshot"
	kill -TERM "$pid"; wait "$pid"
	# The state directory is nobody's now: links it plants must not make a root start write
	# through them (to a root-only file here).
	echo secret > victim; chmod 600 victim
	rm -f state/journal; ln -s "$tmp/victim" state/journal.tmp
	"$BUILD/bloomd" -c drop.conf 2> link.err &
	pid=$!
	pids+=($pid)
	wait_for link.err "running as nobody"
	kill -TERM "$pid"; wait "$pid"
	is "$(cat victim)" secret "a journal.tmp link planted in the state directory is replaced, not written through"
	ln -sf "$tmp/victim" state/journal
	"$BUILD/bloomd" -c drop.conf 2> link2.err; rc=$?
	[ "$rc" -ne 0 ] && grep -q "journal: a symbolic link" link2.err && [ "$(cat victim)" = secret ]
	ok $? "a journal that is a link is refused, and the file it points to left alone"
	rm -f state/journal
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$BUILD/bloomd" -n -c drop.conf -i lo 2> group.err
	grep -q "\[control\] group 'adm': bloomd's user is not in it" group.err
	ok $? "-n run as a user outside [control] group says the socket cannot be given to it"
	sed -i 's/^user = nobody/user = no-such-user-here/' drop.conf
	"$BUILD/bloomd" -c drop.conf 2> refuse.err; rc=$?
	[ "$rc" -ne 0 ] && grep -q "does not exist; not going on as root" refuse.err
	ok $? "a user that cannot be switched to: bloomd refuses to run as root"
else
	skip 10 "needs root, lo, the user nobody and the group adm"
fi

# ---- two network namespaces joined by a veth pair ----
# `ip netns exec` remounts / as a slave: in a chroot whose / is no mount point it cannot.
netns_ok() {
	is_root && command -v ip >/dev/null && ip netns add bloomd-a 2>/dev/null && ip netns add bloomd-b 2>/dev/null &&
		ip netns exec bloomd-a true 2>/dev/null
}
if netns_ok; then
	ip link add bloomd-va netns bloomd-a type veth peer name bloomd-vb netns bloomd-b
	ip -n bloomd-a addr add 10.99.0.1/24 dev bloomd-va
	ip -n bloomd-a addr add 10.99.0.3/24 dev bloomd-va
	ip -n bloomd-b addr add 10.99.0.2/24 dev bloomd-vb
	ip -n bloomd-a link set bloomd-va up
	ip -n bloomd-b link set bloomd-vb up
	ip -n bloomd-a link set lo up
	ip -n bloomd-b link set lo up
	printf 'pair 10.99.0.3 10.99.0.2\nsig "veth-signature"\n' > veth.list
	cat > veth.conf <<C
[capture]
interface = bloomd-vb
bpf = udp
[entries]
file = veth.list
[control]
socket = $tmp/veth.sock
[store]
dir =
[output]
events = $tmp/veth.json
C
	ip netns exec bloomd-b "$BUILD/bloomd" -c veth.conf 2> veth.err &
	pid=$!
	pids+=($pid)
	wait_for veth.err "capturing on bloomd-vb"
	send() { ip netns exec bloomd-a socat -u - "UDP:10.99.0.2:9999,bind=$1" <<<"$2"; }
	send 10.99.0.1 "a veth-signature here"
	send 10.99.0.3 "from the listed source"
	send 10.99.0.1 "nothing to see"
	for _ in $(seq 400); do [ "$(cat veth.json 2>/dev/null | grep -c alert)" -ge 2 ] && break; sleep 0.05; done
	sleep 0.3
	is "$(jq -r '[.src_ip, .alert.context.matches[0].kind] | join(" ")' veth.json | sort | tr '\n' ',')" \
		"10.99.0.1 sig,10.99.0.3 pair," "across the veth pair: the signature and the pair match, nothing else"
	kill -TERM "$pid"
	wait "$pid"; ok $? "and bloomd stops cleanly in its namespace"
else
	skip 2 "needs root and network namespaces that ip netns exec can enter"
fi
done_testing
