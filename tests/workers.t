#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# [capture] workers = 2 across two network namespaces joined by a veth pair: inline, each
# worker judges its own netfilter queue (the rule balances flows over queues 7 and 8);
# passive, each worker reads its own capture handle in one PACKET_FANOUT group. Datagrams
# come from 24 source addresses, so both workers get some. An entry added, deleted or
# replaced is in force for every worker by the time bloomctl says so.
. "$(dirname "$0")/support/tap.sh"
. "$(dirname "$0")/support/netns.sh"
plan 29
command -v python3 >/dev/null || skip_all "no python3"
getent passwd nobody >/dev/null || skip_all "no user nobody"
netns_test w "network namespaces, netfilter queues"
sources=
for i in $(seq 10 33); do
	ip -n $a addr add 10.78.0.$i/24 dev veth-a$$
	sources+="${sources:+,}10.78.0.$i"
done
ip -n $b addr add 10.78.0.2/24 dev veth-b$$
queue_rule 9998 7 8

# One datagram "TEXT SOURCE" from each source address; with a command, sent the moment
# bloomd has acknowledged it on the control socket.
send() {
	ip netns exec $a python3 - "$sources" "$1" "${2:-}" "$tmp/ctl.sock" <<'PY'
import socket, sys
if sys.argv[3]:
    ctl = socket.socket(socket.AF_UNIX)
    ctl.connect(sys.argv[4])
    ctl.sendall(sys.argv[3].encode() + b"\n")
    reply = ctl.makefile().readline()
    assert '"ok":true' in reply, reply
for src in sys.argv[1].split(","):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((src, 0))
    s.sendto(f"{sys.argv[2]} {src}\n".encode(), ("10.78.0.2", 9998))
    s.close()
PY
}
# Wait until the receiver has n lines with TEXT (or give up after 15 s: a ThreadSanitizer
# build on a loaded machine is slow), then print how many it has.
arrived() {
	for _ in $(seq 300); do [ "$(grep -c "$1" recv.txt 2>/dev/null)" -ge "$2" ] && break; sleep 0.05; done
	grep -c "$1" recv.txt 2>/dev/null
}
# bloomd in $b from config $1, its log in $2, until it answers (5 s at most); pid is its process.
run_bloomd() {
	ip netns exec $b "$BUILD/bloomd" -c "$1" 2>"$2" &
	pid=$!
	for _ in $(seq 100); do C version >/dev/null 2>&1 && break; sleep 0.05; done
}

printf 'sig "EVIL-PAYLOAD"\n' > evil.list
cat > bloomd.conf <<C
[capture]
mode = inline
queue = 7-8
workers = 2
[list evil]
file = evil.list
[signatures]
window = 4
[control]
socket = $tmp/ctl.sock
[store]
dir =
[service]
user = nobody
[output]
events = $tmp/events.json
C
touch events.json
udp_receiver 9998
run_bloomd bloomd.conf err
C version >/dev/null; ok $? "bloomd judges queues 7 and 8 with two workers"
# Capabilities are a thread's own: every thread, the workers too, runs as nobody with CAP_NET_ADMIN alone.
caps=$(for t in /proc/$pid/task/*; do awk '/^(Uid|CapEff|CapPrm):/ {printf "%s%s ", $1, $2}' $t/status; echo; done | sort -u)
is "$(wc -l <<<"$caps") $(sort -u <<<"$caps")" \
	"1 Uid:65534 CapPrm:0000000000001000 CapEff:0000000000001000 " "every thread gave up all but CAP_NET_ADMIN"
is "$(grep -h '^worker' /proc/$pid/task/*/comm | sort | tr '\n' ' ')" "worker0 worker1 " "two worker threads, named so"
grep -q "running as nobody, with CAP_NET_ADMIN alone" err; ok $? "and the log says so (it said: no capabilities)"
dropped=$(grep -n -m1 "running as nobody" err | cut -d: -f1) rounds=$(grep -n -m1 "placed in the filters online" err | cut -d: -f1)
[ -n "$dropped" ] && [ -n "$rounds" ] && [ "$rounds" -gt "$dropped" ]
ok $? "the start's background rebuild thread is made after that, so it is as the others (log lines $dropped, $rounds)"
send "hello"
send "EVIL-PAYLOAD"
send "hello2"
is "$(arrived hello2 24)" 24 "every unlisted datagram arrives"
is "$(grep -c hello recv.txt)" 48 "from every source"
is "$(grep -c EVIL-PAYLOAD recv.txt)" 0 "no datagram of a dropping list does"

# Changes: each is in force in both workers by the time its reply comes.
send "NEW-BAD" 'add sig "NEW-BAD"'
send "after-add"
arrived after-add 24 >/dev/null
is "$(grep -c NEW-BAD recv.txt)" 0 "an entry added is dropped by every worker at once"
send "NEW-BAD again" 'del sig "NEW-BAD"'
is "$(arrived 'NEW-BAD again' 24)" 24 "and passes once deleted"
printf 'sig "LIST-TWO"\n' > evil.list
C replace evil >/dev/null
send "EVIL-PAYLOAD v2"
send "LIST-TWO"
send "after-replace"
arrived after-replace 24 >/dev/null
is "$(grep -c 'EVIL-PAYLOAD v2' recv.txt)/$(grep -c LIST-TWO recv.txt)" 24/0 "a list replaced is in force at once"
# A rebuild swaps new filters in: the workers' copy is made again whole, then kept in step again.
send "LIST-TWO rebuilt" 'rebuild --wait'
send "AFTER-REBUILD" 'add sig "AFTER-REBUILD"'
send "after-rebuild"
arrived after-rebuild 24 >/dev/null
is "$(grep -c 'LIST-TWO rebuilt' recv.txt)/$(grep -c AFTER-REBUILD recv.txt)" 0/0 "so are a rebuild and the changes after it"

for _ in $(seq 400); do [ "$(wc -l < events.json)" -ge 120 ] && break; sleep 0.05; done
stats=$(C --json stats)
is "$(jq -r '[.stats.workers.packets[] | select(. > 0)] | length' <<<"$stats")" 2 "both workers judged packets"
is "$(jq -c '[.stats.packets, ([.stats.workers.packets[]] | add), .stats.matched_packets]' <<<"$stats")" \
	"[288,288,120]" "their counters are summed in stats"
metrics=$(C metrics)
grep -q '^bloomd_worker_packets_total{worker="1"} [1-9]' <<<"$metrics" && grep -q '^bloomd_workers 2$' <<<"$metrics" &&
	{ ! command -v promtool >/dev/null || promtool check metrics <<<"$metrics"; }
ok $? "metrics: packets per worker (promtool finds nothing to say, where it is installed)"
is "$(jq -r '.alert.action' events.json | sort | uniq -c | awk '{print $1 " " $2}')" "120 blocked" \
	"every match is reported, as blocked"
is "$(jq -r '.in_iface' events.json | sort -u | tr '\n' ' ')" "nfqueue7 nfqueue8 " "by the worker's queue"
for _ in $(seq 200); do stats=$(C --json stats); [ "$(jq .stats.inline.packets <<<"$stats")" = 288 ] && break; sleep 0.1; done
is "$(jq -c '[.stats.inline.packets, .stats.inline.dropped, .stats.inline.verdict_errors, .stats.workers.handoff_lost]' <<<"$stats")" \
	"[288,120,0,0]" "the queues' counters too, summed"

# Changes while traffic flows: the workers check packets while the loop publishes (under
# ThreadSanitizer, a read of what a publish writes would be reported). The flood is paced
# (24 datagrams a millisecond at most) so that the queues keep up, and drained before the
# last datagrams: a queue left full drops or passes what comes next, by its fail_open.
ip netns exec $a python3 - "$sources" <<'PY' &
import socket, sys, time
socks = []
for src in sys.argv[1].split(","):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((src, 0))
    socks.append(s)
end = time.time() + 2
while time.time() < end:
    for s in socks:
        s.sendto(b"steady\n", ("10.78.0.2", 9998))
    time.sleep(0.001)
PY
flood=$!
changes=0
while kill -0 "$flood" 2>/dev/null; do
	changes=$((changes + 1))
	C add "addr 198.51.100.$((changes % 250))" >/dev/null && C del "addr 198.51.100.$((changes % 250))" >/dev/null || break
done
wait "$flood"
judged=-1
for _ in $(seq 100); do
	now=$(C --json stats | jq .stats.inline.packets)
	[ "$now" = "$judged" ] && break
	judged=$now
	sleep 0.2
done
send "after-churn" 'add addr 10.78.0.33'
arrived after-churn 23 >/dev/null
stats=$(C --json stats)
is "$(grep -c after-churn recv.txt)/$(jq .stats.inline.verdict_errors <<<"$stats")" 23/0 \
	"after $changes adds and deletes under traffic, the last add is in force, no verdict refused" ||
	echo "# the queues: $(jq -c .stats.inline <<<"$stats")"
kill "$pid"
wait "$pid" 2>/dev/null
pid=

# Passive: both workers in one fanout group on the interface; every packet seen once.
cat > passive.conf <<C
[capture]
interface = veth-b$$
workers = 2
bpf = udp port 9998
[list evil]
file = evil.list
[signatures]
window = 4
[control]
socket = $tmp/ctl.sock
[store]
dir = $tmp/pstate
[output]
events = $tmp/passive.json
C
run_bloomd passive.conf perr
C version >/dev/null; ok $? "bloomd captures with two workers in one fanout group"
sleep 0.3 # both sockets are in the group before the traffic
for i in 1 2 3; do send "LIST-TWO $i"; send "fine $i"; done
arrived "fine 3" 24 >/dev/null
for _ in $(seq 400); do [ "$(wc -l < passive.json 2>/dev/null)" -ge 72 ] && break; sleep 0.05; done
is "$(jq -r '.alert.context.matches[0].list' passive.json | sort | uniq -c | awk '{print $1 " " $2}')" "72 evil" \
	"every match is reported once"
for _ in $(seq 200); do stats=$(C --json stats); [ "$(jq .stats.packets <<<"$stats")" -ge 144 ] && break; sleep 0.1; done
is "$(jq -c '[.stats.packets, ([.stats.workers.packets[] | select(. > 0)] | length)]' <<<"$stats")" "[144,2]" \
	"each packet went to one worker, and both had some"
# A snapshot's child is forked from a process whose workers run (under the sanitizers too:
# their allocators' locks across a fork): it is written, and the workers go on.
C add addr 198.51.100.7 >/dev/null
for i in 4 5; do send "LIST-TWO $i"; done &
sending=$!
is "$(C --json save | jq -c '[.ok, .generation > 0]')" "[true,true]" "a snapshot is written while two workers capture"
wait "$sending"
send "fine 6"
arrived "fine 6" 24 >/dev/null
for _ in $(seq 400); do [ "$(wc -l < passive.json 2>/dev/null)" -ge 120 ] && break; sleep 0.05; done
is "$(wc -l < passive.json)/$([ -s pstate/snapshot ] && echo snapshot)" "120/snapshot" \
	"and the workers go on checking, every match reported; the snapshot is there"
# The interface goes away under the workers: bloomd exits with an error, as with one thread.
# Down first, then gone: the socket reports the first and never the second, which libpcap
# sees only when read again on a timer it asks for (a deletion alone races the same way).
ip -n $b link set veth-b$$ down
sleep 0.5
kill -0 "$pid" 2>/dev/null; ok $? "the interface down: bloomd waits for it"
ip -n $b link del veth-b$$
# (20 s at most: once, with the suites of both passes loading the machine, 5 s was not enough)
for _ in $(seq 400); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
if kill -0 "$pid" 2>/dev/null; then
	kill -9 "$pid"
	status="still running after 20 s"
else
	wait "$pid" 2>/dev/null
	status=$?
fi
is "$status" 1 "a worker's capture lost: bloomd exits 1"
pid=
grep -q "veth-b$$: " perr; ok $? "saying which source and why"

! grep -h -A 20 "ThreadSanitizer" err perr; ok $? "no data race reported (make check-tsan runs this under ThreadSanitizer)"

sed 's/^workers = 2/workers = 3/' bloomd.conf > three.conf
out=$("$BUILD/bloomd" -n -c three.conf 2>&1)
[ $? -ne 0 ] && grep -q "workers = 3, but queue gives 2 queue(s)" <<<"$out"
ok $? "-n refuses more workers than queues"
[ $tap_failed -eq 0 ] || { sed "s/^/# recv: /" recv.txt | tail -n 20; sed "s/^/# err: /" err; sed "s/^/# perr: /" perr; }
done_testing
