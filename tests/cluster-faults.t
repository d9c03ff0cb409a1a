#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The cluster under faults: replies of every wrong shape from a fake server (no crash, under
# the sanitizers too), at random and then each reply type to each command in turn, alerts Redis does not take (a wrong-typed key, a connection lost with
# them in flight) going to the fallback file, stream text that would forge log lines, a
# stream deleted and made anew behind a node's cursor (desync, then in step again), and a
# node whose state disk is full keeping its place before the entry it could not apply.
. "$(dirname "$0")/support/tap.sh"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/support/cluster.sh"
plan 71
alerts() { # alerts N FILE: a capture of N packets from listed 192.0.2.77
	{ echo "link en10mb"; for i in $(seq "$1"); do echo "packet src=192.0.2.77 dst=10.0.0.$i proto=udp sport=5000 dport=53"; done; } |
		"$BUILD/pcapgen" -o "$2" -
}
lines() { if [ -f "$1" ]; then wc -l < "$1"; else echo 0; fi; }

# ---- replies of every wrong shape: an error on that connection, never a crash ----
node_conf 1
sed -i "s|unix:$tmp/redis.sock|unix:$tmp/fake.sock|" n1/bloomd.conf
python3 "$here/support/fake-redis.py" "$tmp/fake.sock" 1 12 > fake.out &
fake=$!
for _ in $(seq 100); do [ -S fake.sock ] && break; sleep 0.05; done
start 1; ok $? "a node starts against a server that answers nonsense"
alerts 5 a.pcap
for round in $(seq 20); do
	C 1 add addr "10.0.0.$round" >/dev/null 2>&1
	C 1 replay a.pcap --wait >/dev/null 2>&1
	C 1 cluster snapshot >/dev/null 2>&1
	sleep 0.4
done
kill -0 "${pid[1]}"; ok $? "it is alive after 8 s of replies of random shapes"
grep -q "unexpected shape" n1/err; ok $? "and said what was wrong: $(grep -m1 -o 'cluster: [A-Z]*: a reply of an unexpected shape' n1/err)"
! grep -qE "runtime error|AddressSanitizer|LeakSanitizer" n1/err; ok $? "with no sanitizer report"
wait "$fake"
stop 1; ok $? "and stops cleanly (connections made: $(cat fake.out))"
rm -rf n1

# ---- every reply type to every command, in turn: each callback meets each ----
# First with changes and alerts to send (XADD), then with nothing in the outbox, so that the
# writer lives long enough to ask for the lag (XRANGE) and to write snapshots (HSET).
every() { # every REPORT COMMAND: it was sent every kind of reply
	[ "$(awk -v c="$2" '$1 == c { print $2 }' "$1")" = "$(awk '$1 == "kinds" { print $2 }' "$1")" ]
}
fake_node() { # fake_node SECONDS REPORT [LINE]: with a password, so that each connection starts with AUTH
	node_conf 1
	sed -i -e "s|unix:$tmp/redis.sock|unix:$tmp/fake.sock|" -e "s|^\[cluster\]\$|[cluster]\npassword = secret\n${3:-}|" n1/bloomd.conf
	python3 "$here/support/fake-redis.py" "$tmp/fake.sock" 1 "$1" "$2" > fake.out &
	fake=$!
	for _ in $(seq 100); do [ -S fake.sock ] && break; sleep 0.05; done
	start 1
}
fake_node 30 kinds-a.txt "wait_replicas = 1"
for round in $(seq 56); do
	C 1 add addr "10.0.1.$round" >/dev/null 2>&1
	C 1 replay a.pcap --wait >/dev/null 2>&1
	sleep 0.5
done
kill -0 "${pid[1]}"; ok $? "alive after each command was answered with each reply type, changes and alerts sent"
wait "$fake"
stop 1
rm -rf n1
fake_node 50 kinds-b.txt
for _ in $(seq 190); do
	C 1 cluster snapshot >/dev/null 2>&1
	sleep 0.25
done
kill -0 "${pid[1]}"; ok $? "alive after each reply type to the lag's EVAL, the snapshot's HSET and HGETALL"
wait "$fake"
for cmd in MULTI XADD EXEC WAIT XREAD EVAL; do
	every kinds-a.txt $cmd; ok $? "$cmd was sent each reply type ($(awk -v c=$cmd '$1 == c { print $2 }' kinds-a.txt))"
done
for cmd in HSET AUTH HGETALL; do
	every kinds-b.txt $cmd; ok $? "$cmd was sent each reply type ($(awk -v c=$cmd '$1 == c { print $2 }' kinds-b.txt))"
done
stop 1
rm -rf n1
# Then as a sentinel (on TCP): each reply type to SENTINEL get-master-addr-by-name, then its own
# address, so the node takes it for the master, and each reply type to ROLE.
fport=$(free_port)
node_conf 1
sed -i "s|^redis = .*|sentinels = 127.0.0.1:$fport\nsentinel_master = fake\ntimeout = 2|" n1/bloomd.conf
python3 "$here/support/fake-redis.py" "tcp:$fport" 1 45 kinds-c.txt > fake.out &
fake=$!
for _ in $(seq 100); do ss -Hltn "sport = :$fport" | grep -q . && break; sleep 0.05; done
start 1
wait "$fake"
kill -0 "${pid[1]}"; ok $? "alive after each reply type to SENTINEL and to ROLE"
for cmd in SENTINEL ROLE; do
	every kinds-c.txt $cmd; ok $? "$cmd was sent each reply type ($(awk -v c=$cmd '$1 == c { print $2 }' kinds-c.txt))"
done
! grep -qE "runtime error|AddressSanitizer|LeakSanitizer" n1/err; ok $? "with no sanitizer report"
stop 1; ok $? "and stops cleanly"
rm -rf n1

# ---- a bad reply with more asked behind it: the connection dropped at once ----
# Not waited out: hiredis waits for the replies still due before it closes gracefully, and a
# server gone mute never sends them, while every command is refused meanwhile. The writer then
# stalled for the whole timeout, and the log blamed a partition.
node_conf 1
sed -i -e "s|unix:$tmp/redis.sock|unix:$tmp/fake.sock|" -e "s|^events = redis\$|events =|" \
	-e "s|^\[cluster\]\$|[cluster]\ntimeout = 15\nwait_replicas = 0\ndigest_every = 0|" n1/bloomd.conf
python3 "$here/support/fake-redis.py" "$tmp/fake.sock" 1 40 "stall:$tmp/stall.log" > fake.out &
fake=$!
for _ in $(seq 100); do [ -S fake.sock ] && break; sleep 0.05; done
start 1
C 1 add addr 10.0.9.1 >/dev/null
for _ in $(seq 300); do grep -q "^exec " stall.log 2>/dev/null && break; sleep 0.1; done
gap=$(awk '$1 == "held" { h = $2 } $1 == "exec" && !e { e = $2 } END { print (h && e) ? e - h : 99 }' stall.log)
below "$gap" 15 "EXEC answered with a wrong shape, a lag asked behind it, no reply after: the batch goes again at once (${gap} s), not after timeout = 15"
grep -q "EXEC: a reply of an unexpected shape" n1/err && ! grep -q "no reply in" n1/err
ok $? "the log says what happened, and blames no partition"
kill "$fake" 2>/dev/null
stop 1
rm -rf n1 stall.log

# ---- alerts Redis does not take go to the fallback file ----
redis_start; ok $? "redis-server starts"
node_conf 1
start 1
C 1 add addr 192.0.2.77 >/dev/null
R set bloomd:events "a string, not a list" >/dev/null
alerts 20 a.pcap
C 1 replay a.pcap --wait >/dev/null
wait_for 20 eval '[ "$(lines n1/fallback.json)" -ge 20 ]'
is "$(lines n1/fallback.json)" 20 "the events key of the wrong type: all 20 alerts are in the fallback file"
is "$(C 1 --json stats | jq '"\(.stats.events_to_fallback) \(.stats.event_errors)"')" '"20 0"' "counted as sent to the fallback, none lost"
is "$(status 1 'events.failed')" 20 "and as failed by Redis"
grep -q "WRONGTYPE" <<<"$(status 1 errors.writer)"; ok $? "the writer's error says why: $(status 1 errors.writer | head -c 80)"
R del bloomd:events >/dev/null

# In flight when the connection drops: Redis stopped, the alerts sent, Redis killed.
before=$(lines n1/fallback.json)
kill -STOP "$(cat redis.pid)"
alerts 30 b.pcap
C 1 replay b.pcap --wait >/dev/null
in_flight=$(status 1 events.pending)
kill -9 "$(cat redis.pid)"
wait_for 10 eval '[ "$(lines n1/fallback.json)" -ge $((before + 30)) ]'
is "$(($(lines n1/fallback.json) - before))" 30 "Redis killed with $in_flight alerts in flight: all 30 are in the fallback file"
redis_start
# A stream entry whose text holds a newline forges no log line.
R xadd bloomd:entries '*' node evil op add entry $'addr 192.0.2.1\nbloomd: error: forged' >/dev/null
wait_for 20 grep -q "forged" n1/err
! grep -q "^bloomd: error: forged" n1/err; ok $? "stream text with a newline stays on its log line"
grep -q 'addr 192.0.2.1\\nbloomd: error: forged' n1/err; ok $? "shown escaped"

# ---- a stream deleted and made anew behind the cursor: desync, then in step ----
node_conf 2
start 2
C 2 add addr 192.0.2.80 >/dev/null
wait_for 20 C 1 query addr 192.0.2.80 >/dev/null
# A forged entry with the largest ID moves every cursor to the end of all IDs...
R xadd bloomd:entries 18446744073709551615-18446744073709551614 node evil op add entry "addr 192.0.2.81" >/dev/null
wait_for 20 eval '[ "$(status 1 last_id)" = "18446744073709551615-18446744073709551614" ]'
# ...and once the stream is deleted, changes go to a new stream with smaller IDs.
R del bloomd:entries >/dev/null
C 2 add addr 192.0.2.82 >/dev/null
wait_for 10 C 1 query addr 192.0.2.82 >/dev/null; ok $? "a change in the new stream reaches the node whose cursor was past it"
[ "$(status 1 desyncs)" -ge 1 ]; ok $? "the node said desync ($(status 1 desyncs) times): $(grep -m1 -o 'desync: [^(]*' n1/err)"
wait_for 20 eval '[ "$(status 1 state)" = following ]'; ok $? "and follows again"
stop 2
stop 1
C 1 version >/dev/null 2>&1; start 1
R xadd bloomd:entries 18446744073709551615-18446744073709551614 node evil op add entry "addr 192.0.2.83" >/dev/null
stop 1
R del bloomd:entries >/dev/null
R xadd bloomd:entries '*' node node2 op add entry "addr 192.0.2.84" >/dev/null
start 1
wait_for 10 C 1 query addr 192.0.2.84 >/dev/null; ok $? "so does a node restarted with the forged cursor saved"

# ---- a re-send after a crash never undoes a later change ----
node_conf 2
start 2
C 1 add addr 192.0.2.90 >/dev/null
wait_for 20 C 2 query addr 192.0.2.90 >/dev/null
kill -STOP "$(cat redis.pid)"
C 1 add addr 192.0.2.91 >/dev/null; ok $? "with Redis stalled, node 1 acknowledges an add (journaled, in its outbox)"
sleep 0.3
kill -9 "${pid[1]}"; wait "${pid[1]}" 2>/dev/null; unset "pid[1]"
kill -CONT "$(cat redis.pid)" # Redis takes the add node 1 sent before it died, unanswered
wait_for 20 C 2 query addr 192.0.2.91 >/dev/null
C 2 del addr 192.0.2.91 >/dev/null
wait_for 20 eval '! C 2 query addr 192.0.2.91 >/dev/null'
start 1 # its outbox still holds the add: sent again, under the identity it had
wait_for 10 eval '[ "$(status 1 outbox)" = 0 ]'
wait_for 20 eval '[ "$(status 2 duplicates)" -ge 1 ]'
is "$(status 2 duplicates) $(status 1 duplicates)" "1 1" "the re-sent add is known as a duplicate on both nodes"
C 2 query addr 192.0.2.91 >/dev/null; is $? 1 "and the later del stands on node 2"
C 1 query addr 192.0.2.91 >/dev/null; is $? 1 "and on node 1"
stop 2

# ---- one XADD refused among many in flight: none lost, none out of order ----
# Node 3 writes through a proxy that makes Redis refuse its 5th change (as out of memory
# would), while the 19 others of a load go on; every node must end with all 20 and the del
# after them.
for n in 3 4; do node_conf $n; sed -i 's|^\[cluster\]$|[cluster]\nstream = bloomd:proxied|' n$n/bloomd.conf; done
sed -i "s|unix:$tmp/redis.sock|unix:$tmp/proxy.sock|" n3/bloomd.conf
python3 "$here/support/refusing-proxy.py" "$tmp/proxy.sock" "$tmp/redis.sock" bloomd:proxied 5 20 > proxy.out &
proxy=$!
for _ in $(seq 100); do [ -S proxy.sock ] && break; sleep 0.05; done
start 3 && start 4
seq 1 20 | sed 's/^/addr 203.0.113./' > twenty.txt
C 3 load twenty.txt >/dev/null; ok $? "node 3 loads 20 entries, each a change to the stream"
C 3 del addr 203.0.113.12 >/dev/null
wait_for 10 eval '[ "$(status 3 outbox)" = 0 ] && [ "$(C 4 list --list local | wc -l)" -ge 19 ]'
grep -q "XADD: ERR unknown command .XADX" n3/err; ok $? "Redis refused one: $(grep -m1 -o 'XADD: ERR unknown command[^(]*' n3/err)"
is "$(C 4 list --list local | sort -t. -k4 -n | tr '\n' ' ')" "$(grep -v '^addr 203.0.113.12$' twenty.txt | tr '\n' ' ')" "node 4 has the 19 and not the deleted one"
is "$(C 3 list --list local | sort -t. -k4 -n | tr '\n' ' ')" "$(grep -v '^addr 203.0.113.12$' twenty.txt | tr '\n' ' ')" "and so has node 3"
is "$(status 4 duplicates)" 0 "no change was passed as a duplicate of a later one"
stop 3; stop 4
rm -rf n3 n4
kill "$proxy" 2>/dev/null; wait "$proxy" 2>/dev/null

# ---- a change is acknowledged only once it is in the outbox too ----
if cc -shared -fPIC -o outbox-fail.so "$here/support/outbox-fail.c" -ldl 2>/dev/null; then
	stop 1
	start 2
	LD_PRELOAD=$tmp/outbox-fail.so BLOOMD_FAIL_FLAG=$tmp/fail ASAN_OPTIONS=verify_asan_link_order=0 start 1
	touch fail # from now on the outbox alone cannot be written
	C 1 add addr 192.0.2.120 >/dev/null 2>add.err; rc=$?
	[ "$rc" -ne 0 ] && grep -q "not durable" add.err && grep -q "cluster.outbox" add.err
	ok $? "an add whose outbox write fails is not acknowledged: $(head -c 120 add.err)"
	C 1 add addr 192.0.2.121 >/dev/null 2>&1; ok $((! $?)) "and changes are refused meanwhile"
	rm fail
	wait_for 10 C 1 add addr 192.0.2.122 >/dev/null 2>&1; ok $? "once it can be written, changes are taken again"
	stop 1
	start 1
	wait_for 20 C 2 query addr 192.0.2.122 >/dev/null
	C 2 query addr 192.0.2.120 >/dev/null; is $? 0 "the change kept in memory reached the stream all the same"
	stop 2
else
	for _ in $(seq 4); do tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP no C compiler for the LD_PRELOAD shim"; done
fi

# ---- with [cluster] key_file, only changes signed with the key count ----
stop 1
R del bloomd:entries bloomd:entries:snapshot >/dev/null
rm -rf n1 n2
head -c 32 /dev/urandom | base64 > cluster.key
chmod 644 cluster.key
signed_conf() { node_conf "$1"; sed -i "/^node = /a key_file = $tmp/cluster.key\nmax_entry_bytes = 64KiB" "n$1/bloomd.conf"; }
signed_conf 1
start 1; ok $((! $?)) "a key file others may read is refused: $(grep -o 'key_file.*' n1/err | head -c 90)"
chmod 600 cluster.key
start 1; start 2 2>/dev/null; signed_conf 2; start 2
C 1 add addr 192.0.2.100 >/dev/null
wait_for 20 C 2 query addr 192.0.2.100 >/dev/null; ok $? "a signed change reaches the other node"
R xadd bloomd:entries '*' node evil change 00000000000000aa-1 op add entry "addr 192.0.2.101" >/dev/null
R xadd bloomd:entries '*' node evil change 00000000000000aa-2 op add entry "addr 192.0.2.101" mac "$(printf '%064d' 0)" >/dev/null
C 1 add addr 192.0.2.103 >/dev/null # after both: once it is in, they were read
wait_for 20 C 2 query addr 192.0.2.103 >/dev/null
C 2 query addr 192.0.2.101 >/dev/null; is $? 1 "an unsigned and a wrongly signed add are not applied"
is "$(status 2 unauthenticated)" 2 "and are counted"
# An old signed add, XADDed again by someone who can write to Redis after a del: a duplicate.
old=$(R --json xrange bloomd:entries - + | jq -r '[.[] | select(.[1] | index("addr 192.0.2.100"))][0][1] | @sh')
C 2 del addr 192.0.2.100 >/dev/null
wait_for 20 eval '! C 1 query addr 192.0.2.100 >/dev/null'
eval "R xadd bloomd:entries '*' $old" >/dev/null
C 1 add addr 192.0.2.104 >/dev/null
wait_for 20 C 2 query addr 192.0.2.104 >/dev/null
C 2 query addr 192.0.2.100 >/dev/null; is $? 1 "an old signed add replayed after a del is passed (a duplicate)"
# A net broader than max_prefix4 (/8) from the stream, even signed, is refused.
C 1 add net 0.0.0.0/0 >/dev/null
C 1 add addr 192.0.2.105 >/dev/null
wait_for 20 C 2 query addr 192.0.2.105 >/dev/null
C 2 match 198.51.100.1 >/dev/null; is $? 1 "a /0 net from the stream is refused ($(grep -o 'a /0 net[^:]*' n2/err | head -n 1))"
C 1 del net 0.0.0.0/0 >/dev/null
# An entry over max_entry_bytes is refused before it is parsed, at once.
head -c 3000000 /dev/zero | tr '\0' a > big.data
R -x xadd bloomd:entries '*' node evil op replace entry shared data < big.data >/dev/null
C 1 add addr 192.0.2.106 >/dev/null
wait_for 20 C 2 query addr 192.0.2.106 >/dev/null
is "$(status 2 oversized)" 1 "a 3 MB entry is refused (max_entry_bytes = 64KiB), and the node goes on"
# A 200 MB entry: read no further than a bound, sized in Redis and refused unread; control is
# answered throughout.
head -c 200000000 /dev/zero | tr '\0' a > huge.data
(for _ in $(seq 80); do t=$(date +%s%N); C 2 stats >/dev/null; echo $((($(date +%s%N) - t) / 1000000)); sleep 0.05; done > waits) &
poller=$!
R -x xadd bloomd:entries '*' node evil op replace entry shared data < huge.data >/dev/null
rm -f huge.data
C 1 add addr 192.0.2.109 >/dev/null
wait_for 20 C 2 query addr 192.0.2.109 >/dev/null; ok $? "a change after a 200 MB entry is applied"
wait "$poller"
is "$(status 2 oversized)" 2 "the 200 MB entry is refused"
grep -q "has 200000[0-9]* bytes, more than \[cluster\] max_entry_bytes (65536): refused unread" n2/err; ok $? "unread: $(grep -o 'a read from the stream passed [0-9]* bytes' n2/err | head -n 1)"
[ "$(sort -n waits | tail -n 1)" -lt 1000 ]; ok $? "bloomctl stats answered within 1 s throughout (the longest of $(wc -l < waits): $(sort -n waits | tail -n 1) ms)"
# A new node behind a trimmed stream whose first entry passes the read bound reads one entry
# at a time, and the snapshot first all the same: what was trimmed is only there.
C 1 add addr 192.0.2.111 >/dev/null
R -x xadd bloomd:entries '*' node evil op replace entry shared data < big.data >/dev/null
wait_for 20 eval '[ "$(status 1 last_id)" = "$(R --json xrange bloomd:entries - + | jq -r ".[-1][0]")" ]'
C 1 cluster snapshot >/dev/null
R xtrim bloomd:entries MAXLEN 1 >/dev/null # the big entry alone: the add is in the snapshot only
signed_conf 4
start 4
wait_for 10 C 4 query addr 192.0.2.111 >/dev/null
is "$?/$(status 4 restored_from_snapshot)" 0/1 "it starts from the snapshot, where the stream's first entry is too large to read at once"
stop 4
# A forged snapshot is not taken: a new node behind a trimmed stream waits for a signed one.
R xtrim bloomd:entries MAXLEN 0 >/dev/null
C 1 add addr 192.0.2.108 >/dev/null
wait_for 20 eval '[ "$(R xlen bloomd:entries)" = 1 ]'
R hset bloomd:entries:snapshot id "$(R --json xrange bloomd:entries - + | jq -r '.[-1][0]')" data "addr 192.0.2.107" node evil >/dev/null
signed_conf 3
start 3
wait_for 20 eval 'grep -q "not signed" <<<"$(status 3 errors.reader)"'; ok $? "a new node does not take a forged snapshot: $(status 3 errors.reader | head -c 70)"
C 1 cluster snapshot >/dev/null
# A node behind a snapshot it cannot take asks again after a back-off doubling up to 30 s.
wait_for 35 C 3 query addr 192.0.2.108 >/dev/null; ok $? "it takes the one a node signed"
C 3 query addr 192.0.2.107 >/dev/null; is $? 1 "and never had the forged one's entry"
# An old signed snapshot put back, around a stream made anew at its ID, by someone without
# the key: no node takes it (it lacks changes they applied), so nothing comes back, nothing goes.
R copy bloomd:entries:snapshot old:snapshot >/dev/null
C 1 add addr 192.0.2.110 >/dev/null
C 1 del addr 192.0.2.108 >/dev/null
wait_for 20 eval 'C 2 query addr 192.0.2.110 >/dev/null && ! C 2 query addr 192.0.2.108 >/dev/null'
R del bloomd:entries >/dev/null
R xadd bloomd:entries 1-1 node evil >/dev/null
R xadd bloomd:entries "$(R hget old:snapshot id)" node evil >/dev/null
R xtrim bloomd:entries MAXLEN 1 >/dev/null # trimmed past every node: only a snapshot could bring them up
R copy old:snapshot bloomd:entries:snapshot replace >/dev/null
# Each node asks after a back-off of up to 30 s: 70 s allowed, for a loaded machine.
wait_for 70 eval '[ "$(status 1 rollbacks_refused)" -ge 1 ] && [ "$(status 2 rollbacks_refused)" -ge 1 ] &&
	[ "$(status 3 rollbacks_refused)" -ge 1 ]'
is "$(status 2 rollbacks_refused)/$(status 3 rollbacks_refused)/$(status 2 state)" "1/1/desync" \
	"the old signed snapshot is refused by the nodes that applied changes after it"
grep -q "lacks changes this node applied" <<<"$(status 2 errors.reader)"; ok $? "saying why: $(status 2 errors.reader | head -c 90)"
C 2 query addr 192.0.2.108 >/dev/null; r108=$?
C 2 query addr 192.0.2.110 >/dev/null; r110=$?
is "$r108 $r110" "1 0" "the deleted entry did not come back, the later one did not go"
C 1 metrics | grep -q '^bloomd_cluster_rollbacks_refused_total 1$'; ok $? "metrics count it"
stop 3
stop 2

# ---- a full state disk: the cursor stays before the entry it could not apply ----
if [ "$(id -u)" -eq 0 ] && mkdir disk && mount -t tmpfs -o size=512k tmpfs disk 2>/dev/null; then
	stop 1
	node_conf 1
	sed -i "s|^dir = .*|dir = $tmp/disk/state|" n1/bloomd.conf
	start 1
	node_conf 2
	start 2
	dd if=/dev/zero of=disk/filler bs=4k 2>/dev/null
	# The first ones fill what is left of the journal's last page; the rest are refused.
	for i in $(seq 1 400); do echo "addr 10.77.$((i / 256)).$((i % 256))"; done | C 2 load - >/dev/null
	wait_for 20 eval '[ "$(C 1 --json stats | jq .stats.store.writable)" = false ]'
	for i in $(seq 401 500); do echo "addr 10.77.$((i / 256)).$((i % 256))"; done | C 2 load - >/dev/null
	wait_for 10 eval '[ "$(status 1 blocked_at)" != null ]'
	blocked=$(status 1 blocked_at)
	[ "$blocked" != null ] && [ "$(status 1 apply_errors)" -ge 1 ]
	ok $? "with its disk full, node 1 holds at entry $blocked ($(status 1 apply_errors) tries)"
	rm -f disk/filler
	wait_for 40 eval '[ "$(C 1 list --list local | grep -c "^addr 10\.77\.")" -eq 500 ]'
	is "$(C 1 list --list local | grep -c '^addr 10\.77\.')" 500 "once it has room, it applies all 500, none skipped"
	stop 1
	start 1
	is "$(C 1 list --list local | grep -c '^addr 10\.77\.')" 500 "and all are there after a restart"
	is "$(status 1 blocked_at)" null "and goes on"
	stop 2
	stop 1
	umount disk
else
	for _ in $(seq 4); do tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP needs root to mount a small tmpfs"; done
fi
done_testing
