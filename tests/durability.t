#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Nothing acknowledged is lost on a full disk: with the state on a small tmpfs filled up
# and fsync = always, every add answered ok survives kill -9 and a restart, every other
# add is refused with a clear error (or, the one caught by the fsync, answered "not
# durable"), a refused change leaves an entry's expiry as it was, and once the disk has
# room changes are accepted again.
. "$(dirname "$0")/support/tap.sh"
. "$(dirname "$0")/support/daemon.sh"
on_small_disk 512k
plan 10
cd "$tmp" || exit 1
cat > bloomd.conf <<C
[control]
socket = $tmp/ctl.sock
[store]
dir = $tmp/disk/state
fsync = always
[output]
events =
C
sock=$tmp/ctl.sock

start; ok $? "bloomd starts with its state on a small tmpfs"
C add addr 192.0.2.9 --ttl 3600 >/dev/null
expires=$(C --json query addr 192.0.2.9 | jq .expires)
# Fill the disk: only what is left of the journal's last page takes records.
dd if=/dev/zero of=disk/filler bs=4k 2>/dev/null
: > acked
: > refused
for i in $(seq 1 300); do
	addr="10.0.$((i / 256)).$((i % 256))"
	if C add addr "$addr" >/dev/null 2>reply.err; then
		echo "$addr" >> acked
	elif grep -q "nothing was changed" reply.err; then
		echo "$addr" >> refused
		cp reply.err last.err
	fi # else "not durable": kept in memory, written once the disk has room; either outcome is right
done
acked_n=$(wc -l < acked)
refused_n=$(wc -l < refused)
[ "$acked_n" -gt 0 ] && [ "$refused_n" -gt 0 ]
ok $? "on the full disk: $acked_n adds acknowledged, then $refused_n refused"
grep -q "No space left on device" last.err && grep -qi "refused" last.err
ok $? "with an error that says why: $(head -c 150 last.err)"
is "$(C --json stats | jq .stats.store.writable)" false "stats: the state is not writable"
C add addr 192.0.2.9 --ttl 60 >/dev/null 2>&1; ok $((! $?)) "a change of an entry's expiry is refused too"
is "$(C --json query addr 192.0.2.9 | jq .expires)" "$expires" "and leaves its expiry as it was"

rm -f disk/filler
for _ in $(seq 200); do C add addr 192.0.2.250 >/dev/null 2>&1 && break; sleep 0.1; done
C query addr 192.0.2.250 >/dev/null
ok $? "once the disk has room, changes are accepted again"
echo 192.0.2.250 >> acked

disown "$pid"; kill -9 "$pid"; pid=
for _ in $(seq 100); do [ -S ctl.sock ] && ! C version >/dev/null 2>&1 && break; sleep 0.05; done
start; ok $? "after kill -9 bloomd starts again (no torn record in the middle of the journal)"
missing=0
while read -r addr; do C query addr "$addr" >/dev/null || { echo "#   lost: $addr"; missing=$((missing + 1)); }; done < acked
is "$missing" 0 "every acknowledged add is there"
present=0
while read -r addr; do C query addr "$addr" >/dev/null && present=$((present + 1)); done < refused
is "$present" 0 "and no refused one"
kill "$pid"; wait "$pid" 2>/dev/null; pid=
done_testing
