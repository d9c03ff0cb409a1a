#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A list's new version is read, kept and taken a slice at a time, whether from its file
# (`bloomctl replace LIST`, a reload), passed open (`replace LIST FILE`) or fetched from its url: control
# is answered while a 300,000-entry version is taken, an entry in both versions answers
# throughout, the reply comes once it is taken and says what came and went, bad lines are
# named by their line in the whole file, a refused version keeps the old one, and the kept
# copy of a version passed open is what the next start holds. A flush is an empty version taken
# the same way. A reload's lists are taken one after another, its reply (and systemd's READY)
# once the last is.
. "$(dirname "$0")/support/tap.sh"
. "$(dirname "$0")/support/daemon.sh"
plan 28
command -v python3 >/dev/null || skip_all "no python3"
tmp=$(mktemp -d)
pid= server=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; [ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$tmp"' EXIT
here=$(cd "$(dirname "$0")" && pwd)
cd "$tmp" || exit 1
sock=$tmp/ctl.sock
mkdir feeds

# version FILE FIRST COUNT [NET]: addresses FIRST.. FIRST+COUNT-1 of NET/8 (10), one a line, and 192.0.2.1
version() {
	awk -v f="$2" -v n="$3" -v a="${4:-10}" 'BEGIN { print "192.0.2.1"; for (i = f; i < f + n; i++) printf "%d.%d.%d.%d\n", a, int(i / 65536) % 256, int(i / 256) % 256, i % 256 }' > "$1"
}
version big.list 0 300000
version feeds/fetched.list 0 1000 172
version small.list 0 10 12
: > passed.list
python3 "$here/support/feed-server.py" "$tmp/feeds" "$tmp/http.port" "$tmp/http.log" &
server=$!
for _ in $(seq 100); do [ -s http.port ] && break; sleep 0.05; done
cat > bloomd.conf <<EOF
[control]
socket = $sock
[store]
dir = $tmp/state
[output]
events =
[list big]
file = $tmp/big.list
format = plain
max_removed = 0.9
[list small]
file = $tmp/small.list
format = plain
[list passed]
format = plain
[list fetched]
url = http://127.0.0.1:$(cat http.port)/fetched.list
format = plain
refresh = 1h
EOF
start; ok $? "bloomd starts with a 300,001-entry list"
entries() { C --json lists | jq ".lists[] | select(.name == \"$1\") | .entries"; }
is "$(entries big)" 300001 "all of it held"

# While COMMAND (its words after -c) is answered on one connection, query two entries in
# both versions on another and ask for the lists: how many answers came before COMMAND's
# reply, how many said an entry was out, whether LIST was seen "taking", then the reply.
during() {
	python3 - "$sock" "$@" <<'PY'
import json, select, socket, sys, time
path, list_name, command = sys.argv[1], sys.argv[2], sys.argv[3]
a = socket.socket(socket.AF_UNIX); a.connect(path)
b = socket.socket(socket.AF_UNIX); b.connect(path)
if len(sys.argv) > 4:  # a file passed open, as bloomctl passes it
    with open(sys.argv[4], "rb") as f:
        socket.send_fds(a, [command.encode() + b"\n"], [f.fileno()])
else:
    a.sendall(command.encode() + b"\n")
replies, answered, out, taking = b.makefile("rb"), 0, 0, False
deadline = time.monotonic() + 60
while time.monotonic() < deadline and not select.select([a], [], [], 0)[0]:
    for ask in (b"query addr 192.0.2.1\n", b"query addr 10.3.13.64\n", b"lists\n"):
        b.sendall(ask)
        reply = json.loads(replies.readline())
        if ask.startswith(b"query") and not reply.get("present"):
            out += 1
        if ask == b"lists\n":
            taking |= any(l["name"] == list_name and l.get("taking") for l in reply["lists"])
    answered += 1
print(answered, out, "taking" if taking else "whole", a.makefile("rb").readline().decode().strip())
PY
}

# From its file: half of it new.
version big.list 150000 300000
read -r answered out taking reply <<<"$(during big "replace big")"
[ "$answered" -ge 3 ]; ok $? "control is answered while the version is taken ($answered rounds before the reply)"
is "$out" 0 "entries in both versions answer throughout"
is "$taking" taking "lists says the list is taking its version meanwhile"
is "$(jq -c '[.ok, .load.entries, .load.added, .load.removed]' <<<"$reply")" "[true,300001,150000,150000]" \
	"the reply comes once it is taken, with what came and went"
is "$(entries big)" 300001 "the new version whole"
C query addr 10.0.0.1 > gone.out; is $? 1 "an entry only the old version had is gone: $(cat gone.out)"
C query addr 10.6.89.0 > there.out; is $? 0 "and one only the new one has is there: $(cat there.out)"

# A bad line past the first slices is named by its line in the file; a version that would
# remove more than max_removed is refused whole, after all its slices were read.
sed -i '10001s/.*/not-an-address/' big.list
C replace big >/dev/null
grep -q "big.list:10001: " err; ok $? "a bad line is named by its line in the whole file ($(grep -o 'big.list:[0-9][0-9]*' err | tail -n 1))"
printf '192.0.2.1\n' > big.list
C replace big > refused.out 2>&1
is "$?/$(entries big)" "2/300000" "a version removing nearly all of it is refused: exit 2, the old one kept"
grep -q "max_removed" refused.out; ok $? "saying why: $(grep -o 'it would remove[^(]*' refused.out | head -n 1)"

# Passed open: the version is kept, and the next start holds it.
version passed.list 0 200000 11
read -r answered out taking reply <<<"$(during passed "replace passed -" passed.list)"
is "$(jq -c '[.ok, .load.added]' <<<"$reply")/$taking" "[true,200001]/taking" "a version passed open is taken in slices too"
stop; start; ok $? "bloomd restarts"
is "$(entries passed)" 200001 "with the version passed open, from its kept copy"
C query addr 11.3.13.63 >/dev/null; is $? 0 "an entry of it answers"

# A flush is an empty version, taken the same way.
read -r answered out taking reply <<<"$(during passed "flush passed")"
is "$(jq -c '[.ok, .removed]' <<<"$reply")/$taking" "[true,200001]/taking" "a flush is taken in slices, the reply once the list is empty"
[ "$answered" -ge 3 ]; ok $? "control is answered meanwhile ($answered rounds before the reply)"
is "$(entries passed)" 0 "the list is empty"

# Fetched: the new version from the url is taken the same way.
version feeds/fetched.list 0 250000 172
read -r answered out taking reply <<<"$(during fetched "replace fetched")"
is "$(jq -c '[.ok, .fetch.result, .load.added]' <<<"$reply")/$taking" '[true,"new",249000]/taking' \
	"a fetched version is taken in slices, the reply once it is"
is "$(entries fetched)" 250001 "all of it held"

# A reload: both lists' files taken in turn, control answered meanwhile, the reply once both are.
version big.list 0 300000
version small.list 0 100000 12
read -r answered out taking reply <<<"$(during big "reload")"
[ "$answered" -ge 3 ]; ok $? "control is answered while a reload's lists are taken ($answered rounds before the reply)"
is "$(jq -c '[.ok, (.lists[] | select(.name == "big" or .name == "small") | .entries)]' <<<"$reply")/$taking" "[true,300001,100001]/taking" \
	"the reload's reply comes once both lists are taken, with their new versions"
# One file gone: that list is refused, the other taken; the reply says so.
mv small.list small.gone
version big.list 150000 300000
C reload > reload.out 2>&1
is "$?/$(entries small)/$(C --json query addr 10.6.89.0 | jq .present)" "2/100001/true" \
	"a reload with one list unreadable: exit 2, that list kept, the other taken"
grep -q "small" reload.out; ok $? "naming the list refused: $(grep -o 'list small[^)]*' reload.out | head -n 1)"
# SIGHUP: the log says the configuration was reloaded once the lists were taken.
mv small.gone small.list
: > err
kill -HUP "$pid"
for _ in $(seq 100); do grep -q "configuration reloaded" err && break; sleep 0.1; done
taken=$(grep -n "list small: .*version .* taken" err | cut -d: -f1 | head -n 1)
reloaded=$(grep -n "configuration reloaded" err | cut -d: -f1 | head -n 1)
[ -n "$taken" ] && [ -n "$reloaded" ] && [ "$taken" -lt "$reloaded" ]
ok $? "SIGHUP: the reload is said to be done after its lists are taken (log lines $taken, $reloaded)"

# Stopped while a version is taken: its client is told it was refused (or, once the version
# was kept, taken: tests/stop-truth.t shows the restart holds what it was told).
version big.list 0 300000
C --json replace big > stopped.out 2>/dev/null &
client=$!
for _ in $(seq 100); do [ "$(C --json lists | jq '.lists[] | select(.name == "big") | .taking')" = true ] && break; sleep 0.02; done
stop; ok $? "bloomd stops cleanly, a replace under way"
wait "$client"
told="$?/$(jq -r 'if .ok then "taken" else .error end' stopped.out | grep -o 'stopped before it was taken\|taken')"
[ "$told" = "2/stopped before it was taken" ] || [ "$told" = "0/taken" ]
ok $? "the replace's client is told what came of it: refused, stopped before it was taken, or taken ($told)"
