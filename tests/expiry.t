#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Live decisions from files: times to live anchored to when the file was written (read again,
# they are never extended), the longest of two decisions on one address, and the LAPI stream's
# changes applied to the list (deleted bans leave it, the others stay) by file and by replace,
# and many running out at once go a slice at a time.
. "$(dirname "$0")/support/tap.sh"
. "$(dirname "$0")/support/daemon.sh"
plan 21
tmp=$(mktemp -d); echo "# $tmp"
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; [ -n "$KEEP" ] || rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
sock=$tmp/ctl.sock
mkdir state

ban() { # ban VALUE DURATION [SCOPE]: one decision as the LAPI and cscli write it
	printf '{"duration":"%s","origin":"crowdsec","scenario":"crowdsecurity/ssh-bf","scope":"%s","type":"ban","value":"%s"}' \
		"$2" "${3:-Ip}" "$1"
}
kept_expiry() { # kept_expiry LIST ENTRY: its expires= in the list's kept version
	sed -n "s/^$2 .*expires=\([0-9]*\).*/\1/p" "state/lists/$1"
}
held() { C query "$@" >/dev/null 2>&1 && echo 1 || echo 0; }

# cscli's output written an hour ago: a 30-minute ban has ended, a 2-hour one ends an hour from now.
echo "[{\"decisions\":[$(ban 192.0.2.1 30m),$(ban 192.0.2.2 2h),$(ban 192.0.2.3 2h),$(ban 192.0.2.3 3h),$(ban 192.0.2.3 1h30m)]}]" > cs.json
written=$(($(date +%s) - 3600))
touch -d "@$written" cs.json
# ipset save, written ten minutes ago: a 300 s timeout has ended, a 3600 s one has 50 minutes left.
# A network with a timeout split around a nomatch; a hash:ip,port set beside it.
cat > bl.ipset <<'S'
create web hash:ip,port family inet timeout 0
add web 192.0.2.80,tcp:80 timeout 3600
create bl hash:net family inet timeout 0
add bl 192.0.2.10 timeout 300
add bl 192.0.2.11 timeout 3600
add bl 10.1.0.0/16 timeout 3600
add bl 10.1.2.0/24 nomatch
S
saved=$(($(date +%s) - 600))
touch -d "@$saved" bl.ipset
cat > bloomd.conf <<C
[list cs]
file = cs.json
format = crowdsec-json
[list bl]
file = bl.ipset
format = ipset
[list pushed]
format = crowdsec-json
[control]
socket = $sock
[store]
dir = $tmp/state
C
start; ok $? "bloomd starts"
is "$(held addr 192.0.2.1)/$(held addr 192.0.2.2)" 0/1 "a CrowdSec duration counts from when the file was written"
is "$(kept_expiry cs 'addr 192.0.2.2')" "$((written + 7200))" "and the ban ends two hours after that"
is "$(kept_expiry cs 'addr 192.0.2.3')" "$((written + 10800))" "two decisions on one address: the longer holds it"
is "$(held addr 192.0.2.10)/$(held addr 192.0.2.11)" 0/1 "an ipset timeout counts from when the save was written"
is "$(kept_expiry bl 'addr 192.0.2.11')" "$((saved + 3600))" "and ends 3600 s after that"
is "$(grep -c "^net 10\.1\..* expires=$((saved + 3600))\$" state/lists/bl)/$(C match 10.1.2.9 >/dev/null; echo $?)/$(C match 10.1.3.9 >/dev/null; echo $?)" 8/1/0 \
	"a network split around a nomatch: each of its 8 pieces keeps its timeout"
grep -q "list bl: bl.ipset: 1 lines skipped, of what bloomd does not hold or enforce: sets web (hash:ip,port)" err
ok $? "a hash:ip,port set in the save is skipped whole, and said; the others are read"

sleep 1.1
C reload >/dev/null
is "$(kept_expiry cs 'addr 192.0.2.2')/$(kept_expiry bl 'addr 192.0.2.11')" "$((written + 7200))/$((saved + 3600))" \
	"a reload reads the same files again: no ban is extended"
stop
start
is "$(kept_expiry cs 'addr 192.0.2.2')/$(held addr 192.0.2.1)" "$((written + 7200))/0" \
	"nor does a restart: an ended ban stays ended"

# The LAPI stream without startup=true: a change. 192.0.2.2 is deleted, 192.0.2.4 added; 192.0.2.3 stays.
echo "{\"deleted\":[$(ban 192.0.2.2 -12ms)],\"new\":[$(ban 192.0.2.4 1h),$(ban 198.51.100.0/24 1h Range)]}" > cs.json
C reload >/dev/null
is "$(held addr 192.0.2.2)$(held addr 192.0.2.3)$(held addr 192.0.2.4)$(held net 198.51.100.0/24)" 0111 \
	"a stream delta: its deleted ban leaves the list, its new ones join, the others stay"
C reload >/dev/null
is "$(held addr 192.0.2.2)$(held addr 192.0.2.3)$(held addr 192.0.2.4)" 011 "the same delta again changes nothing"
is "$(kept_expiry cs 'addr 192.0.2.3')" "$((written + 10800))" "a ban the delta leaves keeps its own end"
stop
start
is "$(held addr 192.0.2.2)$(held addr 192.0.2.3)$(held addr 192.0.2.4)" 011 \
	"at start the delta file applies to the version kept, not to an empty list"
echo '{"deleted":null,"new":null}' > cs.json
C reload >/dev/null
is "$(held addr 192.0.2.3)$(held addr 192.0.2.4)" 11 "an empty delta wipes nothing"

# By replace: a whole cscli document, then a delta.
echo "[{\"decisions\":[$(ban 203.0.113.1 1h),$(ban 203.0.113.2 1h)]}]" > whole.json
echo "{\"deleted\":[$(ban 203.0.113.1 -1s)],\"new\":[$(ban 203.0.113.3 1h)]}" > delta.json
C replace pushed whole.json >/dev/null; ok $? "a list without a file takes cscli's document by replace"
C replace pushed delta.json >/dev/null
is "$(held addr 203.0.113.1)$(held addr 203.0.113.2)$(held addr 203.0.113.3)" 011 "and a delta by replace changes it"
reply=$(C --json replace pushed delta.json)
is "$(jq -r '.load.entries' <<<"$reply")" 2 "replace reports the whole version's entries after a delta"

# 100,000 decisions of one duration run out at once: they go a slice a turn of the loop, which
# answers in between (the list is seen at counts between all and none), and all of them go.
python3 -c "
import json
d = [{'duration': '3s', 'origin': 'CAPI', 'scenario': 'x', 'scope': 'Ip', 'type': 'ban',
      'value': '10.%d.%d.%d' % (i >> 16, i >> 8 & 255, i & 255)} for i in range(100000)]
print(json.dumps([{'decisions': d}]))" > many.json
C replace pushed many.json >/dev/null; is "$(C --json lists | jq '.lists[] | select(.name == "pushed") | .entries')" 100000 \
	"100,000 decisions of 3 s are taken"
seen=$(python3 - "$sock" <<'PY'
import json, socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); replies = s.makefile("rb")
counts, deadline = [], time.monotonic() + 30
while time.monotonic() < deadline:
    s.sendall(b"lists\n")
    n = next(l["entries"] for l in json.loads(replies.readline())["lists"] if l["name"] == "pushed")
    if not counts or counts[-1] != n:
        counts.append(n)
    if n == 0:
        break
print(len([n for n in counts if 0 < n < 100000]), counts[-1])
PY
)
read -r between last <<<"$seen"
[ "$between" -ge 1 ] && [ "$last" = 0 ]; ok $? "they run out a slice at a time, control answering between ($between counts seen between all and none), till none is left"
stop; ok $? "bloomd stops"
done_testing
