#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A list version of 400,000 entries from the stream is taken in slices: control is answered
# while it is, an entry in both versions is never out, the version is kept and survives a
# restart, a kill -9 half-way applies it again at the next start, and a net too broad in its
# last slice refuses it whole. A snapshot of as many is restored in slices too: control is
# answered while it is, and a change made on the node meanwhile is not undone by it, nor one
# made while the snapshot waits behind a list version being taken. A node's own snapshot of as
# many is written by a child while control answers.
. "$(dirname "$0")/support/tap.sh"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/support/cluster.sh"
plan 26
shared() { C 1 --json lists | jq ".lists[] | select(.name == \"shared\") | .$1"; }
# version FILE FIRST COUNT: entries FIRST.. FIRST+COUNT-1 as addresses in 10/8, and 192.0.2.1
version() {
	python3 -c "import sys
f, n = int(sys.argv[1]), int(sys.argv[2])
print('addr 192.0.2.1')
for i in range(f, f + n): print('addr 10.%d.%d.%d' % (i >> 16 & 255, i >> 8 & 255, i & 255))" "$2" "$3" > "$1"
}
push() { R -x xadd bloomd:entries '*' node node9 op replace entry shared data < "$1" >/dev/null; }

redis_start
node_conf 1
sed -i "/^node = /a max_entry_bytes = 64MiB" n1/bloomd.conf
start 1
version v1 0 400000      # 10.0.0.0 ...
version v2 200000 400000 # half of v1's, and 200,000 new
push v1
wait_for 30 eval '[ "$(shared entries)" = 400001 ]'; ok $? "a 400,001-entry version from the stream is taken"

# While v2 is taken: control answers, and 192.0.2.1 and 10.3.13.64 (in both) never leave.
push v2
seen=0 out=0
for _ in $(seq 600); do
	[ "$(status 1 applying)" != null ] && seen=$((seen + 1))
	C 1 query addr 192.0.2.1 >/dev/null || out=$((out + 1))
	C 1 query addr 10.3.13.64 >/dev/null || out=$((out + 1))
	[ "$(shared version)" = 2 ] && [ "$(status 1 applying)" = null ] && break
done
[ "$seen" -gt 0 ]; ok $? "control is answered while it is taken in slices (seen applying $seen times)"
is "$out" 0 "entries in both versions answer throughout"
is "$(shared entries)" 400001 "the new version whole"
C 1 query addr 10.0.0.1 >/dev/null; is $? 1 "an entry only the old one had is gone"
C 1 query addr 10.9.39.191 >/dev/null; is $? 0 "and one only the new one has is there"

# Kept: after a restart the list starts from its kept copy, and the entry is not applied again.
stop 1
start 1
is "$(shared entries)/$(status 1 applied)" 400001/0 "after a restart the list has it from its kept copy"

# kill -9 half-way: the cursor stayed before the entry, so the next start applies it whole.
push v1
wait_for 10 eval '[ "$(status 1 applying)" != null ]'
kill -9 "${pid[1]}"
wait "${pid[1]}" 2>/dev/null
unset "pid[1]"
start 1
wait_for 30 eval '[ "$(status 1 applying)" = null ] && C 1 query addr 10.0.0.1 >/dev/null'
is "$(shared entries)" 400001 "killed half-way through a version, the next start takes it whole"
C 1 query addr 10.9.39.191 >/dev/null; is $? 1 "and none of the old one is left"

# A net broader than max_prefix4 in the version's last slice: refused whole, nothing of it held.
cp v2 v3
echo "net 10.0.0.0/4" >> v3
push v3
wait_for 30 grep -q "broader than" n1/err
is "$(shared entries)/$(C 1 query addr 10.9.39.191 >/dev/null; echo $?)" 400001/1 \
	"a version with a /4 net at its end is refused whole: $(grep -o 'a /4 net[^:]*' n1/err | head -n 1)"

# A node joins from a snapshot of 400,002 entries, with a local entry of its own the snapshot
# lacks (added before it joined the cluster).
mkdir -p n2
printf '[control]\nsocket = %s\n[store]\ndir = %s\n' "$tmp/n2/s.sock" "$tmp/n2/state" > n2/solo.conf
"$BUILD/bloomd" -c n2/solo.conf 2>>n2/err &
pid[2]=$!
wait_for 10 eval 'C 2 add addr 192.0.2.60 >/dev/null 2>&1'
stop 2
{ cat v2; echo "addr 192.0.2.61"; } > snap
last=$(tail -n 2 snap | head -n 1 | cut -d' ' -f2) # the snapshot's last 10/8 address
id=$(R xadd bloomd:entries '*' node node9 op add entry "addr 192.0.2.62")
R -x hset bloomd:entries:snapshot id "$id" node node9 data < snap >/dev/null
node_conf 2
sed -i "/^node = /a max_entry_bytes = 64MiB" n2/bloomd.conf
# Redis takes no writes until the restore is checked: the node's own changes stay in its
# outbox, so nothing but the node itself keeps them (the stream would bring them back).
R config set min-replicas-to-write 1 >/dev/null
start 2
# Meanwhile: control answers; an add and a del made here (the del of the snapshot's last
# entry, before the restore reaches it) hold from their reply on.
seen=0 wrong=0 changed=
for _ in $(seq 2000); do
	if [ "$(status 2 restoring)" = true ]; then
		seen=$((seen + 1))
		[ -n "$changed" ] || { C 2 add addr 192.0.2.70 >/dev/null && { C 2 del addr "$last" >/dev/null; changed=yes; }; }
	fi
	if [ -n "$changed" ]; then
		C 2 query addr 192.0.2.70 >/dev/null || wrong=$((wrong + 1))
		C 2 query addr "$last" >/dev/null && wrong=$((wrong + 1))
	fi
	[ "$(status 2 restored_from_snapshot)" = 1 ] && [ "$(status 2 restoring)" = false ] && break
done
[ "$seen" -gt 0 ] && [ -n "$changed" ]; ok $? "control is answered while the snapshot is restored in slices (seen restoring $seen times)"
is "$wrong" 0 "an add and a del made meanwhile hold throughout"
grep -q "a new node: started from the snapshot at $id" n2/err; ok $? "the node says it started from the snapshot"
C 2 query addr 192.0.2.70 >/dev/null && ! C 2 query addr "$last" >/dev/null && [ "$(status 2 outbox)" = 2 ]
ok $? "the snapshot in, the add and the del made meanwhile stand (while only this node has them)"
R config set min-replicas-to-write 0 >/dev/null
wait_for 10 eval '[ "$(status 2 outbox)" = 0 ]'
is "$(C 2 list --list local | wc -l)" 400002 "the local list is the snapshot's, with the changes made meanwhile"
C 2 query addr 192.0.2.60 >/dev/null; is $? 1 "the entry the snapshot lacks is gone"
C 2 query addr 192.0.2.70 >/dev/null && ! C 2 query addr "$last" >/dev/null && C 2 query addr 192.0.2.61 >/dev/null
ok $? "once the stream after it is read too: the add and the del stand, and the snapshot's entries are in"
stop 2
start 2
is "$(C 2 list --list local | wc -l)/$(status 2 restored_from_snapshot)" 400002/0 "after a restart, from its journal, not restored again"

# This node's own snapshot of them is written by a child while control answers: caught and
# held still, the node takes a change meanwhile; let go, the snapshot is its entries as they
# were when it began (the change follows it in the stream).
C 2 cluster snapshot > n2/snap.out 2>&1 &
snapper=$!
kid=
end=$((SECONDS + 30))
while [ -z "$kid" ] && [ "$SECONDS" -lt "$end" ]; do read -r kid _ < "/proc/${pid[2]}/task/${pid[2]}/children" 2>/dev/null; done
[ -n "$kid" ] && kill -STOP "$kid"; ok $? "a child writes the node's snapshot (caught: $kid)"
C 2 add addr 192.0.2.71 >/dev/null; ok $? "control answers and takes a change meanwhile"
kill -0 "$snapper"; ok $? "while the snapshot's reply waits"
kill -CONT "$kid"; wait "$snapper"; ok $? "which comes once Redis has it: $(cat n2/snap.out)"
is "$(R hget bloomd:entries:snapshot node)/$(R hget bloomd:entries:snapshot data | grep -c '^addr')/$(R hget bloomd:entries:snapshot data | grep -c 192.0.2.71)" \
	node2/400002/0 "the snapshot is the node's 400,002 entries as they were when it began"

# A snapshot that arrives while a list version is taken waits behind it (the staging bit is
# the version's): a change made here while it waits is not undone by it either. Redis is held
# still until the version is being taken, so the snapshot comes in its middle.
version big 0 1000000
node_conf 3
sed -i "/^node = /a stream = fleet2" n3/bloomd.conf # a stream of its own: the snapshot comes at once
printf '[list big]\nfile = %s\n' "$tmp/big" >> n3/bloomd.conf
id=$(R xadd fleet2 '*' node node9 op add entry "addr 192.0.2.82")
printf 'addr 192.0.2.80\naddr 192.0.2.81\n' | R -x hset fleet2:snapshot id "$id" node node9 data >/dev/null
R config set min-replicas-to-write 1 >/dev/null
kill -STOP "$(cat redis.pid)"
start 3
version big 500000 1000000
C 3 replace big > n3/replace.out &
replacing=$!
wait_for 10 eval '[ "$(C 3 --json lists | jq ".lists[] | select(.name == \"big\") | .taking")" = true ]'
kill -CONT "$(cat redis.pid)"
wait_for 30 eval '[ "$(status 3 restoring)" = true ]'
C 3 add addr 192.0.2.90 >/dev/null && C 3 del addr 192.0.2.81 >/dev/null
kill -0 "$replacing" 2>/dev/null
ok $? "the snapshot came while the version was taken, and an add and a del were made while it waited"
wait "$replacing"
wait_for 30 eval '[ "$(status 3 restored_from_snapshot)" = 1 ] && [ "$(status 3 restoring)" = false ]'
is "$(C 3 --json lists | jq '.lists[] | select(.name == "big") | .version')/$(status 3 outbox)" 2/2 \
	"the version is taken, and the changes are only this node's"
C 3 query addr 192.0.2.90 >/dev/null && ! C 3 query addr 192.0.2.81 >/dev/null && C 3 query addr 192.0.2.80 >/dev/null
ok $? "the snapshot in, the add and the del made while it waited stand"
R config set min-replicas-to-write 0 >/dev/null
done_testing
