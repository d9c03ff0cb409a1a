#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The fleet outlives its master: a real redis-server master with two replicas and a
# redis-sentinel watching them; two sensors find the master through the sentinel
# ([cluster] sentinels, sentinel_master) and publish with wait_replicas = 1. The master is
# killed with -9 while changes are acknowledged: the sentinel fails over, the sensors
# follow the new master, and every acknowledged change reaches the other sensor.
. "$(dirname "$0")/support/tap.sh"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/support/cluster.sh"
command -v redis-sentinel >/dev/null || skip_all "no redis-sentinel (Debian's redis-sentinel; tools/install-deps.sh test)"
plan 9
{ read -r m; read -r r1; read -r r2; read -r s; } < <(free_ports 4)
sentinel_redis $m $r1 $r2 $s
wait_for 10 eval '[ "$(RP $m info replication | grep -c "^slave[0-9].*state=online")" = 2 ]'
ok $? "a master and two replicas in sync"
wait_for 30 eval '[ "$(RP $s sentinel get-master-addr-by-name bloomdm | tail -n 1)" = $m ] &&
	RP $s sentinel replicas bloomdm | sentinel_knows 2'
ok $? "redis-sentinel watches it, and knows both replicas"
for n in 1 2; do
	node_conf $n
	sed -i "s|^redis = .*|sentinels = 127.0.0.1:$((s + 1000)),127.0.0.1:$s\nsentinel_master = bloomdm\nwait_replicas = 1\ntimeout = 2|" n$n/bloomd.conf
	start $n
done
wait_for 10 eval '[ "$(status 1 master)" = 127.0.0.1:$m ] && [ "$(status 2 state)" = following ]'
ok $? "the sensors follow the master the sentinel names, past a sentinel that is not there ($(status 1 master))"
C 1 add addr 192.0.2.1 >/dev/null
wait_for 20 C 2 query addr 192.0.2.1 >/dev/null; ok $? "a change reaches the other sensor, once a replica has it"

# Changes acknowledged on both sensors while the master is killed.
: > acked
for i in $(seq 1 240); do
	n=$((i % 2 + 1))
	C $n add addr "198.51.$((i / 200)).$((i % 200 + 1))" >/dev/null 2>&1 && echo "addr 198.51.$((i / 200)).$((i % 200 + 1))" >> acked
	[ "$i" = 60 ] && kill -9 "$(cat r$m.pid)" && t0=$(date +%s%N)
	[ "$i" -gt 60 ] && [ -z "${switched:-}" ] && [ "$(status 1 master)" != 127.0.0.1:$m ] && [ "$(status 1 master)" != null ] &&
		switched=$((($(date +%s%N) - t0) / 1000000))
	sleep 0.05
done
wait_for 30 eval '[ "$(status 1 master)" != 127.0.0.1:$m ] && [ "$(status 2 master)" != 127.0.0.1:$m ] && [ "$(status 2 state)" = following ]'
ok $? "both follow the new master within 30 s ($(status 1 master); sensor 1 on it ${switched:-?} ms after the kill)"
wait_for 30 eval '[ "$(status 1 outbox)" = 0 ] && [ "$(status 2 outbox)" = 0 ]'
ok $? "their outboxes empty: every change is on a replica too"
for n in 1 2; do
	wait_for 20 eval '[ "$(C $n list --list local | grep -cxFf acked)" = "$(wc -l < acked)" ]'
done
lost1=$(($(wc -l < acked) - $(C 1 list --list local | grep -cxFf acked)))
lost2=$(($(wc -l < acked) - $(C 2 list --list local | grep -cxFf acked)))
is "$lost1/$lost2" 0/0 "none of the $(wc -l < acked) acknowledged changes is lost on either sensor"
grep -q "the sentinels name 127.0.0.1:\($r1\|$r2\) as the master" n1/err; ok $? "the log names the new master"
stop 1 && stop 2; ok $? "both stop cleanly"
