#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Three sensors sharing their entries through a real redis-server (a Unix socket in a temp
# directory, AOF on): convergence after adds spread over the nodes, a node down during
# changes, Redis killed and restarted, a stream trimmed past a node, alerts shipped to Redis
# with a fallback while it is down, and cluster status.
. "$(dirname "$0")/support/tap.sh"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/support/cluster.sh"
plan 44
# Wait (up to 20 s) until every running node lists the same local entries, count of them.
converge() {
	local want=$1 a b c
	for _ in $(seq 200); do
		a=$(entries 1); b=$(entries 2); c=$(entries 3)
		[ "$a" = "$b" ] && [ "$b" = "$c" ] && [ "$(C 1 list --list local | wc -l)" -eq "$want" ] && return 0
		sleep 0.1
	done
	echo "#   nodes differ: $a $b $c; node 1 has $(C 1 list --list local | wc -l), want $want"
	# (to standard error too, where a run that shows only the failures sees them)
	for n in 1 2 3; do
		echo "cluster.t Error: node $n: $(C $n list --list local | wc -l) entries; $(C $n --json cluster status | jq -c .cluster)"
		tail -n 5 "n$n/err" | sed "s/^/cluster.t Error: node $n log: /"
	done >&2
	return 1
}

redis_start; ok $? "redis-server starts on a Unix socket, AOF on"
for n in 1 2 3; do node_conf $n; start $n || echo "#   node $n did not start: $(cat n$n/err)"; done
C 3 version >/dev/null; ok $? "three sensors start"

# An add on one node alerts on another.
C 1 add addr 192.0.2.77 >/dev/null
wait_for 20 eval 'C 2 query addr 192.0.2.77 >/dev/null'
C 2 query addr 192.0.2.77 >/dev/null; is $? 0 "an add on node 1 is on node 2"
printf 'link en10mb\npacket src=192.0.2.77 dst=10.0.0.1 proto=udp sport=5000 dport=53\n' | "$BUILD/pcapgen" -o a.pcap -
C 3 replay a.pcap --wait >/dev/null
wait_for 20 eval '[ "$(R llen bloomd:events)" -ge 1 ]'
R lindex bloomd:events 0 | jq -e '.src_ip == "192.0.2.77" and .alert.signature == "bloomd list local"' >/dev/null
ok $? "and node 3 ships the alert to Redis (events = redis)"

# A list without a file is replaced and flushed cluster-wide, its entries' labels with it.
printf 'addr 192.0.2.200 category=c2 severity=1\naddr 192.0.2.201\n' > shared.list
C 1 replace shared shared.list >/dev/null
wait_for 20 eval 'C 3 query addr 192.0.2.201 >/dev/null'
is "$(C 3 --json query addr 192.0.2.200 | jq -c .held_by)" '["shared"]' "replace on node 1 reaches node 3's list"
printf 'link en10mb\npacket src=192.0.2.200 dst=10.0.0.1 proto=udp sport=5000 dport=53\n' | "$BUILD/pcapgen" -o s.pcap -
C 2 replay s.pcap --wait >/dev/null
wait_for 20 eval '[ "$(R llen bloomd:events)" -ge 2 ]'
is "$(R lindex bloomd:events 1 | jq -r '"\(.alert.category)/\(.alert.severity)"')" c2/1 "with its entries' own labels"
# Node 3 guards the list (max_removed = 0.4): a version from the stream removing half is refused there.
echo "max_removed = 0.4" >> n3/bloomd.conf
C 3 reload >/dev/null
printf 'addr 192.0.2.201\n' > shared.list
C 1 replace shared shared.list >/dev/null
wait_for 10 eval '! C 2 query addr 192.0.2.200 >/dev/null'
wait_for 10 eval 'C 3 lists | grep -q "max_removed"'
is "$(C 2 query addr 192.0.2.200 >/dev/null; echo $?)/$(C 3 query addr 192.0.2.200 >/dev/null; echo $?)" 1/0 \
	"a version from the stream removing more than a node's max_removed is refused there: it keeps its previous one"
C 3 lists | grep -q "last version refused: it would remove 1 of the list's 2 entries, more than max_removed (0.4)"
ok $? "and says why in lists"
C 2 flush shared >/dev/null
# (wait on the node the test asks: node 3 may have it before node 1 does)
wait_for 20 eval '! C 1 query addr 192.0.2.201 >/dev/null'
C 1 query addr 192.0.2.201 >/dev/null; is $? 1 "flush on node 2 empties it on node 1"

# A slow Redis (DEBUG SLEEP holds it 3 s): a replay finishes while Redis still sleeps.
R debug sleep 3 >/dev/null &
sleeper=$!
sleep 0.2
C 2 replay a.pcap --wait >/dev/null
kill -0 "$sleeper" 2>/dev/null; ok $? "with Redis stalled, capture does not wait for it"
wait "$sleeper"

# 10,000 adds spread over three nodes, a few deletes among them: every node ends the same.
loads=()
for n in 1 2 3; do
	for i in $(seq 1 3333); do echo "addr 10.$n.$((i / 256)).$((i % 256))"; done | C $n load - >/dev/null &
	loads+=($!)
done
wait "${loads[@]}"
converge $((1 + 3 * 3333)) >/dev/null
C 2 del addr 10.1.0.5 >/dev/null
C 3 del addr 10.2.0.7 >/dev/null
converge $((1 + 3 * 3333 - 2)); ok $? "10,000 adds and 2 deletes spread over 3 nodes: all converge"

# A node down during 5,000 changes (with TTLs and deletes) catches up from where it stopped.
stop 3
for i in $(seq 1 5000); do echo "addr 172.16.$((i / 256)).$((i % 256)) ttl=86400"; done | C 1 load - >/dev/null
for i in $(seq 1 100); do C 2 del addr 10.1.0.$((i + 10)) >/dev/null; done
start 3; ok $? "the node comes back"
converge $((9998 + 5000 - 100)); ok $? "and converges with the 5,100 changes made while it was down"
is "$(C 3 --json query addr 172.16.0.9 | jq '.expires > 0')" true "expiry times travel with the entries"

# Redis killed (-9) while changes go on, then restarted from its AOF: nothing acknowledged is lost.
kill -9 "$(cat redis.pid)"
for i in $(seq 1 200); do C 1 add addr 198.51.100.$((i % 250 + 1)) >/dev/null || echo "#   add $i refused"; done
C 1 version >/dev/null; ok $? "with Redis down, node 1 still takes changes"
is "$(C 1 --json cluster status | jq '.cluster.outbox')" 200 "and keeps them in its outbox"
# (capture is not held up: a replay runs through while Redis is down)
C 2 replay a.pcap --wait >/dev/null; ok $? "a replay runs while Redis is down"
[ -s n2/fallback.json ] && jq -e '.src_ip == "192.0.2.77"' n2/fallback.json >/dev/null
ok $? "its alert goes to the fallback file"
is "$(C 2 --json stats | jq .stats.events_to_fallback)" 1 "and is counted"
redis_start; ok $? "redis-server restarts from its AOF"
converge $((14898 + 200)); ok $? "every change made meanwhile reaches every node"
is "$(C 1 --json cluster status | jq '.cluster.outbox')" 0 "and the outbox is empty"

# A node killed (-9) mid-apply restarts from its last saved place and converges.
for i in $(seq 1 3000); do echo "addr 203.0.113.$((i % 250 + 1))"; echo "net 100.$((i / 256)).$((i % 256)).0/24"; done |
	C 1 load - >/dev/null &
load=$!
sleep 0.2
disown "${pid[2]}"; kill -9 "${pid[2]}"; unset "pid[2]"
wait "$load"
start 2; ok $? "a node killed mid-apply starts again"
converge $((15098 + 250 + 3000)); ok $? "and converges"

# A stream trimmed past a down node: it starts again from a snapshot a node published.
stop 3
stop 1; node_conf 1 1000000 1; start 1
for i in $(seq 1 3000); do echo "addr 192.168.$((i / 256)).$((i % 256))"; done | C 1 load - >/dev/null
C 1 del addr 10.1.0.1 >/dev/null
# Nodes 1 and 2 read to the end, then the stream loses all but its last 1,000 changes at once:
# node 3, down, is behind the trim. (Trimmed while they read, a node falls behind it too, and
# says so: `maxlen` must stay above how far a node may fall behind.)
newest=$(R xrevrange bloomd:entries + - COUNT 1 | head -n 1)
for n in 1 2; do
	for _ in $(seq 200); do [ "$(C $n --json cluster status | jq -r .cluster.last_id)" = "$newest" ] && break; sleep 0.1; done
done
R xtrim bloomd:entries MAXLEN 1000 >/dev/null
[ "$(R xlen bloomd:entries)" -eq 1000 ]; ok $? "the stream is trimmed past node 3"
C 1 cluster snapshot >/dev/null; ok $? "cluster snapshot publishes node 1's entries"
wait_for 20 eval '[ "$(R hexists bloomd:entries:snapshot id)" = 1 ]'
node_conf 3 1000; start 3
converge $((18348 + 3000 - 1)); ok $? "the trimmed node converges from the snapshot"
grep -q "started again from the snapshot" n3/err; ok $? "and says so"
is "$(C 3 --json cluster status | jq -r '.cluster.state')" following "cluster status: following"
C 1 add addr 192.0.2.250 >/dev/null
want=""
for _ in $(seq 60); do
	want=$(C 1 --json cluster status | jq -r .cluster.last_id)
	[ "$(R hget bloomd:entries:snapshot id)" = "$want" ] && break
	sleep 0.1
done
is "$(R hget bloomd:entries:snapshot id)" "$want" "snapshot_every: an up-to-date node publishes one by itself"
C 3 metrics | grep -q '^bloomd_cluster_lag_entries 0$'; ok $? "metrics export the lag"
is "$(C 2 --json cluster status | jq '.cluster.delay_ms.p99 < 5000')" true "and the delay from a change's XADD to here"
C 2 metrics > delay.txt
applied=$(C 2 --json cluster status | jq .cluster.applied)
grep -q '^# TYPE bloomd_cluster_apply_delay_seconds histogram$' delay.txt &&
	grep -qE '^bloomd_cluster_apply_delay_seconds_count [1-9][0-9]*$' delay.txt &&
	[ "$(awk '/^bloomd_cluster_apply_delay_seconds_bucket\{le="5"\}/ { print $2 }' delay.txt)" = \
	  "$(awk '/^bloomd_cluster_apply_delay_seconds_count/ { print $2 }' delay.txt)" ]
ok $? "metrics: that delay as a histogram, every change under 5 s ($applied applied)"

# Redis restarted with nothing (its data lost): the nodes see the stream gone, publish what
# they hold as the snapshot, and the versions of the lists they share, and a node that joins
# afterwards starts from them.
for n in 1 2 3; do node_conf $n; done # no snapshot_every
for n in 1 2; do stop $n; start $n; done
awk 'BEGIN { for (i = 0; i < 2000; i++) printf "addr 10.88.%d.%d\n", i / 256, i % 256 }' > shared.list
C 1 replace shared shared.list >/dev/null
wait_for 10 eval '[ "$(C 2 --json lists | jq ".lists[] | select(.name == \"shared\") | .entries")" = 2000 ]'
is "$(C 2 --json lists | jq '.lists[] | select(.name == "shared") | .entries')" 2000 "a file-less list's version (2,000 entries) reaches the other node"
stop 3; rm -rf n3
redis-cli -s "$tmp/redis.sock" shutdown nosave >/dev/null 2>&1
for _ in $(seq 100); do [ -S redis.sock ] || break; sleep 0.05; done
rm -rf appendonlydir ./*.aof dump.rdb
redis_start; ok $? "redis-server restarted empty (its AOF removed)"
C 2 add addr 192.0.2.251 >/dev/null
wait_for 10 eval '[ "$(R hexists bloomd:entries:snapshot id)" = 1 ]'
ok $? "the nodes republish what they hold as the snapshot"
grep -q "the stream is gone\|the stream was made anew" n1/err n2/err; ok $? "and say why: $(grep -ho 'rebuilding: the stream [a-z ]*' n1/err n2/err | head -n 1)"
grep -q "Redis writer connection" n1/err; ok $? "while Redis was down, the writer's connection failed: $(grep -m1 -o 'Redis writer connection[^;]*' n1/err | head -c 70)"
wait_for 10 eval '[ "$(status 1 errors.writer)" = null ]'
is "$(status 1 errors.writer)" null "and once it is back, the status no longer says so"
held=$(C 1 list --list local | wc -l)
node_conf 3; start 3
wait_for 20 eval '[ "$(C 3 list --list local | wc -l)" -eq '"$held"' ]'
is "$(C 3 list --list local | wc -l)" "$held" "a node that joins afterwards has every entry ($held), the older ones too"
C 3 query addr 192.0.2.251 >/dev/null; ok $? "and the change made after the loss"
wait_for 20 eval '[ "$(C 3 --json lists | jq ".lists[] | select(.name == \"shared\") | .entries")" = 2000 ]'
is "$(C 3 --json lists | jq '.lists[] | select(.name == "shared") | .entries')" 2000 \
	"and the file-less list's whole version, published again after the loss"
grep -q "a new node: started from the snapshot" n3/err; ok $? "it started from the snapshot, then the stream"

# make demo-cluster's script: its alert comes out of Redis.
out=$("$here/../tools/demo-cluster.sh" "$BUILD" 2>&1)
grep -q '"src_ip":"203.0.113.66"' <<<"$out"; ok $? "demo-cluster: an add on sensor1 alerts on sensor3, read from Redis"
done_testing
