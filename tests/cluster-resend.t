#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Re-sends are idempotent and bounded: with wait_replicas = 1 and the replica cut off by a real
# partition (nftables, in a network namespace of its own), a batch whose WAIT falls short is
# waited for again, not written again: the stream holds it once while the partition lasts, also
# across a lost connection, and the outbox drains, each change in the stream once, when the
# replica is back.
. "$(dirname "$0")/support/tap.sh"
here=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" -eq 0 ] || skip_all "needs root (a network namespace, nftables)"
command -v nft >/dev/null || skip_all "no nft (Debian's nftables; tools/install-deps.sh test)"
. "$here/support/cluster.sh"
plan 8
ns=bloomd-resend$$
ip netns add $ns 2>/dev/null || skip_all "cannot make a network namespace here"
at_exit="ip netns del $ns 2>/dev/null"
ip -n $ns link set lo up
ip -n $ns addr add 127.0.0.2/8 dev lo
m=6391
inns() { ip netns exec $ns "$@"; }
RN() { inns redis-cli -h "$1" -p $m "${@:2}"; }
# The master on 127.0.0.1, its replica on 127.0.0.2 (and connecting from there), so the partition can cut the replica alone.
inns redis-server --port $m --bind 127.0.0.1 --protected-mode no --dir "$tmp" --appendonly yes --save '' --daemonize yes \
	--pidfile "$tmp/master.pid" --logfile "$tmp/master.log"
mkdir -p replica
inns redis-server --port $m --bind 127.0.0.2 --bind-source-addr 127.0.0.2 --replicaof 127.0.0.1 $m --dir "$tmp/replica" \
	--save '' --daemonize yes --pidfile "$tmp/replica.pid" --logfile "$tmp/replica.log"
at_exit="$at_exit; kill \$(cat $tmp/master.pid) \$(cat $tmp/replica.pid) 2>/dev/null"
wait_for 10 eval '[ "$(RN 127.0.0.1 info replication | grep -c "^slave0:.*state=online")" = 1 ]'
ok $? "a master and its replica, in a namespace"
for n in 1 2; do
	node_conf $n
	sed -i -e "s|^redis = .*|redis = tcp://127.0.0.1:$m\nwait_replicas = 1\ntimeout = 2|" -e '/^events = redis$/d' n$n/bloomd.conf
	node_in[$n]="ip netns exec $ns"
done
start 1 && start 2
C 1 add addr 192.0.2.1 >/dev/null
wait_for 10 eval 'C 2 query addr 192.0.2.1 >/dev/null && [ "$(status 1 outbox)" = 0 ]'
ok $? "two nodes share a change once the replica has it"

inns nft -f - <<N
table inet partition {
	chain in { type filter hook input priority -500; ip saddr 127.0.0.2 tcp dport $m drop; ip daddr 127.0.0.2 tcp sport $m drop; }
}
N
before=$(RN 127.0.0.1 xlen bloomd:entries)
for i in $(seq 1 230); do C 1 add addr "198.51.100.$((i % 250 + 1))" --ttl $((3600 + i)) >/dev/null; done
wait_for 15 eval 'status 1 errors.writer | grep -q "WAIT: 0 of"'
ok $? "cut off from its replica, the writer says WAIT falls short: $(status 1 errors.writer | head -c 100)"
sleep 5
during=$(RN 127.0.0.1 xlen bloomd:entries)
RN 127.0.0.1 client kill type normal >/dev/null # the node's connections are lost, and made again
sleep 5
after_kill=$(RN 127.0.0.1 xlen bloomd:entries)
[ "$((during - before))" -ge 1 ] && [ "$((during - before))" -le 230 ] && [ "$after_kill" = "$during" ]
ok $? "the batch is in the stream once while the partition lasts, also across a lost connection ($((during - before)) entries, then $((after_kill - before)))"
[ "$(status 1 outbox)" -ge $((230 - (during - before))) ]; ok $? "the rest waits in the outbox ($(status 1 outbox))"

inns nft delete table inet partition
wait_for 30 eval '[ "$(status 1 outbox)" = 0 ]'
ok $? "healed, the outbox drains"
is "$(($(RN 127.0.0.1 xlen bloomd:entries) - before))" 230 "the stream holds each of the 230 changes once"
wait_for 10 eval '[ "$(C 2 list --list local | wc -l)" = 231 ]'
ok $? "and the other node has every one ($(C 2 list --list local | wc -l) entries)"
