#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A large replace through a failover: a real redis-server master with two replicas and a
# redis-sentinel, two sensors with wait_replicas = 0 (what the dead master took and had not
# passed on is lost from the stream, and found and sent again by the sensor that made it;
# tests/cluster-sentinel.t holds changes back with wait_replicas = 1 instead). One sensor
# replaces a shared list with 100,000 entries, and both add meanwhile, while the master is
# killed with -9: after the sentinel's failover both sensors hold the same entries, and their
# digests ([cluster] digest_every) agree at the same place in the stream.
. "$(dirname "$0")/support/tap.sh"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/support/cluster.sh"
command -v redis-sentinel >/dev/null || skip_all "no redis-sentinel (Debian's redis-sentinel; tools/install-deps.sh test)"
plan 6
{ read -r m; read -r r1; read -r r2; read -r s; } < <(free_ports 4)
sentinel_redis $m $r1 $r2 $s
wait_for 30 eval '[ "$(RP $m info replication | grep -c "^slave[0-9].*state=online")" = 2 ] &&
	[ "$(RP $s sentinel get-master-addr-by-name bloomdm | tail -n 1)" = $m ] && RP $s sentinel replicas bloomdm | sentinel_knows 2'
ok $? "a master, two replicas and a sentinel that knows them"
for n in 1 2; do
	node_conf $n
	sed -i -e "s|^redis = .*|sentinels = 127.0.0.1:$s\nsentinel_master = bloomdm\ntimeout = 2\ndigest_every = 4\nmax_entry_bytes = 16MiB|" \
		-e '/^events = redis$/d' n$n/bloomd.conf
	start $n
done
wait_for 15 eval '[ "$(status 1 state)" = following ] && [ "$(status 2 state)" = following ]'
ok $? "two sensors follow the master the sentinel names"

awk 'BEGIN { for (i = 0; i < 100000; i++) printf "addr 10.%d.%d.%d\n", i / 65536, i / 256 % 256, i % 256 }' > shared.list
C 1 replace shared shared.list >/dev/null &
replacing=$!
for i in $(seq 1 100); do
	C $((i % 2 + 1)) add addr "198.51.100.$i" >/dev/null 2>&1
	[ "$i" = 2 ] && kill -9 "$(cat r$m.pid)"
	sleep 0.05
done
wait "$replacing"; ok $? "the replace of 100,000 entries is acknowledged while the master is killed"
show() { # what the nodes and the sentinel say, when a check failed (on stderr: prove shows it)
	for n in 1 2; do echo "# node $n: $(C $n --json cluster status | jq -c '.cluster | {state, master, outbox, lag_entries, errors}')"; done >&2
	echo "# the sentinel: $(RP $s sentinel get-master-addr-by-name bloomdm | tr '\n' ' ')" >&2
	for port in $r1 $r2; do echo "# $port: $(RP $port info replication | grep -E '^(role|connected_slaves|slave0|master_link_status)' | tr '\r\n' '  ')"; done >&2
}
wait_for 120 eval '[ "$(status 1 master)" != 127.0.0.1:$m ] && [ "$(status 1 outbox)" = 0 ] && [ "$(status 2 outbox)" = 0 ]'
ok $? "both follow the new master ($(status 1 master)) and their outboxes empty" || show
wait_for 120 eval '[ "$(C 1 list --list shared | wc -l)" = 100000 ] && [ "$(C 2 list --list shared | wc -l)" = 100000 ] &&
	[ "$(entries 1)" = "$(entries 2)" ]'
ok $? "both hold the 100,000 entries and the same local list ($(C 2 list --list shared | wc -l), $(C 2 list --list local | wc -l))" || show
new=$(status 1 master)
digests_agree() {
	local one two
	one=$(redis-cli -p "${new#*:}" hget bloomd:entries:digests node1) two=$(redis-cli -p "${new#*:}" hget bloomd:entries:digests node2)
	[ -n "$one" ] && [ "$one" = "$two" ] && [ "$(status 1 divergent)/$(status 2 divergent)" = false/false ]
}
wait_for 60 digests_agree
ok $? "their digests agree, at the same place, list by list" || show
