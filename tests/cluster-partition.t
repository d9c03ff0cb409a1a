#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A node cut off from Redis by a partition (its packets dropped without a word, in a network
# namespace of its own with nftables, not a closed socket) says so within [cluster] timeout
# (state stale, the reader not connected, the error naming the silence), and catches up within
# seconds of the heal, not after TCP's back-off.
. "$(dirname "$0")/support/tap.sh"
here=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" -eq 0 ] || skip_all "needs root (a network namespace, nftables)"
command -v nft >/dev/null || skip_all "no nft (Debian's nftables; tools/install-deps.sh test)"
. "$here/support/cluster.sh"
plan 9
ns=bloomd-part$$
ip netns add $ns 2>/dev/null || skip_all "cannot make a network namespace here"
at_exit="ip netns del $ns 2>/dev/null"
ip -n $ns link set lo up
port=6390
# Redis in the namespace, on TCP for node 1 and a Unix socket for node 2 (which the partition spares).
ip netns exec $ns redis-server --port $port --bind 127.0.0.1 --unixsocket "$tmp/redis.sock" --dir "$tmp" \
	--appendonly yes --daemonize yes --pidfile "$tmp/redis.pid" --logfile "$tmp/redis.log" --save ''
for _ in $(seq 100); do R ping >/dev/null 2>&1 && break; sleep 0.05; done
for n in 1 2; do node_conf $n; done
sed -i -e "s|unix:$tmp/redis.sock|tcp://127.0.0.1:$port|" -e 's|^\[cluster\]$|[cluster]\ntimeout = 2|' n1/bloomd.conf
node_in[1]="ip netns exec $ns"
start 1 && start 2; ok $? "node 1 on TCP in a namespace, node 2 on the Unix socket"
C 2 add addr 192.0.2.1 >/dev/null
wait_for 20 eval '[ "$(status 1 state)" = following ] && C 1 query addr 192.0.2.1 >/dev/null'
ok $? "node 1 follows the stream"

partition() { ip netns exec $ns nft -f - <<N
table inet partition {
	chain in { type filter hook input priority -500; tcp dport $port drop; tcp sport $port drop; }
}
N
}
partition
t0=$(date +%s%N)
for i in $(seq 100); do C 2 add addr "198.51.100.$i" >/dev/null; done
wait_for 15 eval '[ "$(status 1 state)" != following ]'
took=$((($(date +%s%N) - t0) / 1000000))
state=$(status 1 state)
[ "$state" = stale ] && [ "$took" -le 6000 ]
ok $? "cut off, node 1 says stale within timeout (2 s) and the reader's 2 s block ($state after $took ms)"
is "$(status 1 reader_connected)" false "and that its reader is not connected"
grep -q "no reply in\|not connected in" <<<"$(status 1 errors.reader)"; ok $? "naming the silence: $(status 1 errors.reader | head -c 120)"
C 1 metrics | grep -q '^bloomd_cluster_stale 1$'; ok $? "metrics say stale"
sleep 3
is "$(status 1 state)" stale "still stale while the partition lasts"
ip netns exec $ns nft delete table inet partition
t0=$(date +%s%N)
wait_for 20 eval '[ "$(C 1 list --list local | wc -l)" -eq 101 ] && [ "$(status 1 state)" = following ]'
took=$((($(date +%s%N) - t0) / 1000000))
[ "$(C 1 list --list local | wc -l)" -eq 101 ] && [ "$took" -le 5000 ]
ok $? "healed, node 1 has all 101 entries and follows within 5 s ($took ms)"
stop 1 && stop 2; ok $? "both stop cleanly"
