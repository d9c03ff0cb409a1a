#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A snapshot is written by a child while the loop answers and takes changes, which go to the
# next journal (journal.tmp): kill -9 before the snapshot is in (the child dies with bloomd)
# and after it is in but before the journal's switch loses nothing; bloomctl save answers once
# its snapshot is in, one asked for meanwhile gets a later one, a child killed is said and
# written again (a child that keeps failing, at doubling waits), and where no child can be started the loop writes it itself.
. "$(dirname "$0")/support/tap.sh"
. "$(dirname "$0")/support/daemon.sh"
plan 27
tmp=$(mktemp -d); echo "# $tmp"
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; [ -n "$KEEP" ] || rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
sock=$tmp/ctl.sock
cat > bloomd.conf <<C
[control]
socket = $sock
[store]
dir = $tmp/state
fsync = always
[output]
events =
C
awk 'BEGIN { for (i = 0; i < 1000000; i++) printf "addr 10.%d.%d.%d\n", int(i / 65536), int(i / 256) % 256, i % 256 }' > big.txt

store() { C --json stats | jq -r ".stats.store.$1"; }
held() { C query "$@" >/dev/null 2>&1 && echo 1 || echo 0; }
state_of() { sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null; }
save_bg() { rm -f state/snapshot.tmp; C "$@" save > "save$n.out" 2>&1 & saver=$!; n=$((n + 1)); }
catch_child() { # the child writing the snapshot, caught once it has begun (tied to bloomd) and stopped: kid
	local end=$((SECONDS + 30))
	kid=
	while [ "$SECONDS" -lt "$end" ]; do
		[ -z "$kid" ] && read -r kid _ < "/proc/$pid/task/$pid/children" 2>/dev/null
		[ -n "$kid" ] && [ -e state/snapshot.tmp ] && break
	done
	[ -n "$kid" ] && kill -STOP "$kid" 2>/dev/null || return 1
	for _ in $(seq 100); do [ "$(state_of "$kid")" = T ] && return 0; sleep 0.01; done
	return 1
}
crash() { disown "$pid"; kill -9 "$pid"; pid=; for _ in $(seq 100); do ! C version >/dev/null 2>&1 && break; sleep 0.05; done; }

start; ok $? "bloomd starts with a state directory"
C load big.txt >/dev/null; is "$(store journal_records)" 1000000 "a million adds are in the journal"

# ---- kill -9 while the child writes: the old snapshot, the journal and journal.tmp ----
n=1
save_bg
catch_child; ok $? "a child writes the snapshot (caught: $kid, state $(state_of "$kid"))"
is "$(store last_snapshot.writing)" true "stats say a snapshot is being written"
C add addr 192.0.2.1 >/dev/null; ok $? "the loop takes a change meanwhile"
is "$(held addr 192.0.2.1)/$(store journal_records)" 1/1 "it is held, and in the next snapshot's journal"
[ -s state/journal.tmp ]; ok $? "which is journal.tmp until the snapshot is in"
crash
! wait "$saver"; ok $? "bloomctl save, cut off, says it failed ($(head -c 80 save1.out))"
for _ in $(seq 100); do [ -d "/proc/$kid" ] || break; sleep 0.02; done
[ ! -d "/proc/$kid" ]; ok $? "the child died with bloomd"
start; ok $? "bloomd starts again"
is "$(held addr 192.0.2.1)/$(held addr 10.15.66.63)/$(C --json lists | jq '[.lists[].entries] | add')" 1/1/1000001 \
	"with the journal's adds and the one made while the snapshot was written"
grep -q "journal.tmp: bloomd stopped while a snapshot was written" err; ok $? "it says what it found"
for _ in $(seq 300); do [ ! -e state/journal.tmp ] && [ "$(store last_snapshot.writing)" = false ] && break; sleep 0.1; done
is "$(store generation)/$([ -e state/journal.tmp ]; echo $?)" 1/1 "and writes the snapshot again at once"

# ---- kill -9 after the snapshot is in, before its journal's switch ----
save_bg
catch_child; ok $? "another snapshot's child caught"
C add addr 192.0.2.2 >/dev/null
kill -STOP "$pid"
kill -CONT "$kid"
for _ in $(seq 600); do [ "$(state_of "$kid")" = Z ] && break; sleep 0.05; done
is "$(state_of "$kid")" Z "the child wrote snapshot 2 and ended, bloomd held still before it switched journals"
kill -9 "$pid"; disown "$pid"; pid=; wait "$saver"
start; ok $? "bloomd starts again"
is "$(store generation)/$(held addr 192.0.2.2)/$(held addr 192.0.2.1)" 2/1/1 \
	"from snapshot 2, and journal.tmp as its journal: the add made meanwhile is held"
[ ! -e state/journal.tmp ]; ok $? "journal.tmp is the journal now"

# ---- bloomctl save answers when its snapshot is in; one asked for meanwhile gets the next ----
is "$(C --json save | jq -c .)" '{"ok":true,"generation":3}' "save answers with the snapshot's generation once it is in"
C --json save > a.out & first=$!
# The second is asked for once the first is being written (or written): a client started first
# may still reach the socket second.
for _ in $(seq 300); do [ "$(store last_snapshot.writing)" = true ] || [ "$(store generation)" -gt 3 ] && break; sleep 0.02; done
C add addr 192.0.2.3 >/dev/null
C --json save > b.out & second=$!
wait "$first" "$second"
ga=$(jq .generation a.out) gb=$(jq .generation b.out)
[ "$ga" -gt 3 ] && [ "$gb" -gt "$ga" ]; ok $? "two at once both answer; the later one's snapshot is a later one ($ga, $gb)"

# ---- the child killed: said, and the snapshot written again, after waits that double ----
save_bg
catch_child && kill -9 "$kid"
wait "$saver"; rc=$?
[ "$rc" -ne 0 ] && grep -q "killed by signal 9" save3.out; ok $? "a child killed: save fails saying so ($(head -c 100 save3.out))"
grep -q "snapshot: .*killed by signal 9.*(tried again in 10 s)" err; ok $? "the log says when it is tried again: in 10 s"
gen=$(store generation)
catch_child && kill -9 "$kid" # housekeeping's try
for _ in $(seq 100); do grep -q "tried again in 20 s" err && break; sleep 0.05; done
grep -q "tried again in 20 s" err; ok $? "that one killed too: tried again after twice the wait"
for _ in $(seq 400); do [ "$(store generation)" -gt "$gen" ] && break; sleep 0.1; done
[ "$(store generation)" -gt "$gen" ] && [ "$(held addr 192.0.2.3)" = 1 ]; ok $? "housekeeping writes it again ($(store generation))"
stop; ok $? "bloomd stops"

# ---- no child can be started (a process limit, here): the loop writes the snapshot itself ----
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1 && command -v prlimit >/dev/null && command -v setpriv >/dev/null; then
	chmod 755 "$tmp"
	printf '[service]\nuser = nobody\n' >> bloomd.conf
	# (Under ASan, LeakSanitizer's check at exit needs a thread of its own, which the limit refuses.)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 start
	for _ in $(seq 100); do grep -q "running as nobody" err && break; sleep 0.05; done
	# As bloomd's own user: a limit may be lowered by its owner without CAP_SYS_RESOURCE.
	setpriv --reuid="$(awk '/^Uid:/ {print $2}' "/proc/$pid/status")" --regid="$(awk '/^Gid:/ {print $2}' "/proc/$pid/status")" \
		--clear-groups prlimit --pid "$pid" --nproc=1:1
	gen=$(store generation)
	is "$(C --json save | jq -c .)" "{\"ok\":true,\"generation\":$((gen + 1))}" "run as nobody and held to one process, save is answered all the same"
	grep -q "it is written in the loop instead" err; ok $? "saying the child could not be started: $(grep -o 'snapshot: cannot start.*' err | head -c 90)"
	stop
else
	skip 2 "needs root, a user nobody, prlimit and setpriv"
fi
done_testing
