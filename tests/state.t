#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The state directory keeps what bloomd acknowledges, and only bloomd decides where it writes:
# a list version refused on a full disk (not acknowledged, then lost), a root start with
# [service] user handing lists/ over (never a file hard-linked in), links anywhere below the
# directory never followed, a damaged kept version refusing the start as a damaged snapshot
# does, a read-only file system named at start (the journal kept), and a FIFO at any state
# path refused at once instead of hanging the start.
. "$(dirname "$0")/support/tap.sh"
. "$(dirname "$0")/support/daemon.sh"
on_small_disk 8m
chmod 755 "$tmp"
plan 44
cd "$tmp" || exit 1
sock=$tmp/ctl.sock

config() { # config STATE-DIR [EXTRA-LINES]
	cat > bloomd.conf <<C
[list pushed]
category = pushed
[control]
socket = $sock
[store]
dir = $1
fsync = always
[output]
events =
$2
C
}
entries() { C --json lists | jq -r '.lists[] | select(.name == "pushed") | .entries'; }
crash() { disown "$pid"; kill -9 "$pid"; pid=; for _ in $(seq 100); do ! C version >/dev/null 2>&1 && break; sleep 0.05; done; }
seq 1 20 | sed 's/^/addr 10.9.0./' > v20.txt
seq 1 5 | sed 's/^/addr 10.8.0./' > v5.txt
awk 'BEGIN { for (i = 0; i < 100000; i++) printf "addr 10.%d.%d.%d\n", 100 + int(i / 65536), int(i / 256) % 256, i % 256 }' > v100k.txt

# ---- a version refused on a full disk is refused, not acknowledged and lost ----
config "$tmp/disk/state"
start; ok $? "bloomd starts with its state on a small tmpfs"
C replace pushed v20.txt >/dev/null; is "$(entries)" 20 "a first version of 20 entries is taken"
dd if=/dev/zero of=disk/filler bs=4k 2>/dev/null
C replace pushed v100k.txt >replace.out 2>replace.err; rc=$?
[ "$rc" -ne 0 ]; ok $? "on the full disk, replace of 100,000 entries fails (exit $rc)"
grep -q "No space left on device" replace.err && grep -q "kept" replace.err
ok $? "saying why: $(head -c 200 replace.err)"
is "$(entries)" 20 "the list keeps its previous version in memory"
is "$(C --json stats | jq .stats.store.writable)" false "and the state says it cannot be written"
C add addr 192.0.2.1 >/dev/null 2>&1; ok $((! $?)) "other changes are refused meanwhile, as on a full journal"
crash
start; ok $? "after kill -9 bloomd starts again on the full disk"
is "$(entries)" 20 "with the version that was kept, none other"
rm -f disk/filler
C replace pushed v100k.txt >/dev/null; ok $? "with room again, the large version is taken"
crash
start; ok $? "and after kill -9"
is "$(entries)" 100000 "it is there"
stop

# ---- a root start with [service] user hands lists/ to that user ----
if id nobody >/dev/null 2>&1; then
	config "$tmp/ustate" "[service]
user = nobody"
	start; ok $? "bloomd starts as root and becomes nobody"
	C replace pushed v20.txt >/dev/null; ok $? "replace as nobody is taken"
	is "$(stat -c %U "$tmp/ustate/lists" "$tmp/ustate/lists/pushed" | sort -u)" nobody "lists/ and its files belong to nobody"
	stop
	# A hard link the service user could plant: the file it names is someone else's, and stays so.
	echo "theirs" > theirs; chown 4242:4242 theirs
	ln theirs ustate/planted; ln theirs ustate/lists/planted
	echo "root's" > roots; ln roots ustate/lists/planted-root
	start; is "$(entries)" 20 "after a restart the version is there"
	is "$(stat -c %u theirs)/$(stat -c %U roots)" 4242/root "a root start gives away no file hard-linked into the state directory"
	C replace pushed v5.txt >/dev/null; ok $? "and a second one is taken"
	stop
	start; is "$(entries)" 5 "and kept"
	stop
else
	for _ in $(seq 8); do tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP no user nobody"; done
fi

# ---- links below the state directory are never followed ----
mkdir -p outside
config "$tmp/lstate"
start; C replace pushed v5.txt >/dev/null
mv lstate/lists lstate/lists.old && ln -s "$tmp/outside" lstate/lists
C replace pushed v20.txt >/dev/null 2>replace.err; ok $((! $?)) "lists/ swapped for a link while bloomd runs: a version is refused"
grep -q "lstate/lists: a symbolic link" replace.err; ok $? "naming the link: $(head -c 160 replace.err)"
is "$(entries)" 5 "the list keeps its version"
stop
: > err
start; ok $((! $?)) "the next start refuses the link"
grep -q "lstate/lists: a symbolic link" err; ok $? "naming it"
is "$(ls -A outside | wc -l)" 0 "nothing was ever written where the link points"
rm lstate/lists && mkdir -m 700 lstate/lists
echo "secret" > outside/target
ln -s "$tmp/outside/target" lstate/lists/pushed
: > err
start; ok $((! $?)) "a link at lists/pushed stops the start"
grep -q "lists/pushed: a symbolic link" err; ok $? "naming it"
is "$(cat outside/target)" secret "what it points to is untouched"
rm lstate/lists/pushed
ln -s "$tmp/outside/target" lstate/snapshot
: > err
start; ok $((! $?)) "so does a link at the snapshot"
grep -q "snapshot: a symbolic link" err; ok $? "naming it"

# ---- a damaged kept version stops the start, as a damaged snapshot does ----
config "$tmp/dstate"
start; C replace pushed v20.txt >/dev/null; stop
printf '\x01\x02' | dd of=dstate/lists/pushed bs=1 seek=80 conv=notrunc 2>/dev/null
cp dstate/lists/pushed damaged
: > err
start; ok $((! $?)) "two flipped bytes in lists/pushed: bloomd does not start"
grep -q "lists/pushed: checksum mismatch" err; ok $? "the log names the file and the damage"
cmp -s damaged dstate/lists/pushed; ok $? "the copy is left as it is (not trimmed, not rewritten)"
mv dstate/lists/pushed moved-away
start; ok $? "moved away, bloomd starts"
is "$(entries)" 0 "and the list starts without it"
stop

# ---- a state directory on a read-only file system: the start says so, and keeps the journal ----
config "$tmp/disk/rstate"
start; C add addr 192.0.2.9 >/dev/null; stop
cp disk/rstate/journal journal.before
mount -o remount,ro "$tmp/disk"
: > err
start; ok $((! $?)) "on a read-only file system, bloomd does not start"
grep -q "remount the file system holding $tmp/disk/rstate read-write" err && ! grep -q "move it away" err
ok $? "naming the file system, not advising that the journal be moved: $(head -c 200 err)"
mount -o remount,rw "$tmp/disk"
cmp -s journal.before disk/rstate/journal; ok $? "the journal is as it was"
start; is "$(C list --list local)" "addr 192.0.2.9" "read-write again, it starts with the change the journal holds"
stop

# ---- a FIFO at any state path is refused at once, named ----
for path in snapshot journal lists/pushed cluster.cursor cluster.outbox; do
	rm -rf fstate && mkdir -p fstate/lists && mkfifo "fstate/$path"
	config "$tmp/fstate" "[cluster]
redis = unix:$tmp/no-redis.sock
node = n1"
	: > err
	t0=$(date +%s%N)
	timeout 10 "$BUILD/bloomd" -c bloomd.conf 2>>err
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$ms" -lt 1000 ] && grep -q "$path: not a regular file" err
	ok $? "a FIFO at $path: the start refuses it in $ms ms (exit $rc), naming it"
done
done_testing
