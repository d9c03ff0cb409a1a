#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# source = crowdsec against a LAPI that answers as a hostile or broken one would (a server of the
# tests' own, the real LAPI being crowdsec.t's): a changes answer that is no decision stream ({},
# an error object a proxy sends, []) is refused by name, keeps every ban, and the next request
# asks for all again; a startup answer that would lift most bans meets max_removed; the bouncer's
# key follows a redirect only within its origin, never to another address; requests say bloomd.
. "$(dirname "$0")/support/tap.sh"
. "$(dirname "$0")/support/daemon.sh"
plan 22
tmp=$(mktemp -d)
pid=
servers=()
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; for s in "${servers[@]}"; do kill "$s" 2>/dev/null; done; rm -rf "$tmp"' EXIT
here=$(cd "$(dirname "$0")" && pwd)
cd "$tmp" || exit 1
sock=$tmp/ctl.sock
mkdir feeds state
serve() { # serve NAME ADDRESS: a server of feed-server.py on ADDRESS; its port in NAME.port
	FEED_ADDR=$2 python3 "$here/support/feed-server.py" "$tmp/feeds" "$tmp/$1.port" "$tmp/$1.log" &
	servers+=($!)
	for _ in $(seq 100); do [ -s "$1.port" ] && break; sleep 0.05; done
}
serve a 127.0.0.1
serve b 127.0.0.2
a=http://127.0.0.1:$(cat a.port)
b=http://127.0.0.2:$(cat b.port)
ban() { printf '{"duration":"1h","scope":"Ip","type":"ban","value":"%s","origin":"crowdsec","scenario":"test/x"}' "$1"; }
printf '{"new":[%s,%s,%s],"deleted":null}' "$(ban 192.0.2.1)" "$(ban 192.0.2.2)" "$(ban 192.0.2.3)" > feeds/cs
printf '{"new":[%s],"deleted":null}' "$(ban 192.0.2.11)" > feeds/within
printf 'k3y-0f-b0uncer\n' > key
chmod 600 key
held() { for e in "$@"; do C query addr "$e" >/dev/null 2>&1 && printf 1 || printf 0; done; }
fetch_of() { C --json lists | jq -r --arg n "$1" ".lists[] | select(.name == \$n) | .fetch.$2"; }
wait_until() { # wait_until 'CONDITION': up to 10 s
	for _ in $(seq 100); do eval "$1" && return 0; sleep 0.1; done
	return 1
}

cat > bloomd.conf <<C
[list cs]
source = crowdsec
url = $a/lapi/cs
api_key_file = $tmp/key
refresh = 1
[list away]
source = crowdsec
url = $a/redirect/$b/lapi/cs
api_key_file = $tmp/key
refresh = 1
[list within]
source = crowdsec
url = $a/redirect/$a/lapi/within
api_key_file = $tmp/key
refresh = 1
[list down]
source = crowdsec
url = http://127.0.0.1:$(free_port)/
api_key_file = $tmp/key
refresh = 1
[control]
socket = $sock
[store]
dir = $tmp/state
C
start; ok $? "bloomd starts against the server's LAPI"
wait_until '[ "$(held 192.0.2.1 192.0.2.2 192.0.2.3)" = 111 ]'
is "$(held 192.0.2.1 192.0.2.2 192.0.2.3)" 111 "the startup answer's bans are taken"
grep -q "/lapi/cs/v1/decisions/stream?startup=true.* key=k3y-0f-b0uncer ua=bloomd/" a.log
ok $? "the stream is asked for with the key, and the requests say bloomd/VERSION"

# A redirect: within the origin the key goes on; to another address it is never sent.
grep -q "^GET /lapi/within/v1/decisions/stream?startup=true&scopes=ip,range inm= ims= key=k3y-0f-b0uncer" a.log
ok $? "a redirect within the origin is followed, with the key"
wait_until '[ "$(fetch_of away state)" = stale ]'
is "$(fetch_of away state)" stale "a redirect to another origin fails the fetch"
fetch_of away last.error | grep -q "redirected to $b/lapi/cs.* refused"
ok $? "and says where it was sent: $(fetch_of away last.error)"
is "$(cat b.log 2>/dev/null | wc -l)" 0 "the other origin never sees a request, nor the key"

# Changes answered by what is not a stream: refused, the bans kept, everything asked for again.
for bad in '{}' '{"message":"access forbidden"}' '[]'; do
	printf '%s' "$bad" > feeds/cs.delta
	before=$(fetch_of cs refused)
	wait_until '[ "$(fetch_of cs refused)" -gt "$before" ]'
	is "$(held 192.0.2.1 192.0.2.2 192.0.2.3)" 111 "changes answered $bad are refused: every ban kept"
done
grep -qF 'the answer is not a decision stream ({"new": [...], "deleted": [...]}) but {}' err
ok $? "the log names what came back"
is "$(grep -c "list cs: .*refused, the list keeps" err)" 1 "a refusal that recurs is logged once a minute, not at each poll"
# Seconds of polls have passed: a LAPI that is down is said once, one that has nothing new not at all.
is "$(grep -c "list down: " err)" 1 "a LAPI down for seconds: one line ($(grep -m1 "list down: " err | cut -c1-90)...)"
# What an operator types: plain bloomctl lists says each list's source, state, last success, next fetch and error.
C lists > lists.txt
grep -A1 "^down: 0 entries, crowdsec http://127.0.0.1:[0-9]*/ (crowdsec-json)" lists.txt |
	grep -Eq "^  (stale for [0-9]+ s|taking); last success never(; next fetch in [0-9]+ s)?; 0 new, 0 not modified, [0-9]+ failed, 0 refused"
ok $? "plain lists: a LAPI that is down is stale, with its source and counts ($(grep -A1 '^down:' lists.txt | tail -n 1))"
grep -A2 "^down:" lists.txt | grep -q "^  last error: .*onnect"
ok $? "and its last error, shortened"
grep -A1 "^within: 1 entries, crowdsec $a/redirect/" lists.txt | grep -Eq "^  (current|taking); last success [0-9]+ s ago"
ok $? "a current one: its last success's age ($(grep -A1 '^within:' lists.txt | tail -n 1))"
is "$(grep -c "list within: .*version" err)" 1 "polls that bring nothing new log nothing (the first version's line alone)"
# Each refusal is followed by a startup=true request: what changed meanwhile is not lost.
grep "^GET /lapi/cs/" a.log | grep -o 'startup=[a-z]*' | tail -n 6 | tr '\n' ' ' | grep -q 'startup=false startup=true'
ok $? "after a refused change the next request asks for all (startup=true)"

# A startup answer that would lift most bans meets max_removed, as any feed's version does.
printf '{"new":null,"deleted":[%s]}' "$(ban 192.0.2.3)" > feeds/cs.delta
wait_until '[ "$(held 192.0.2.3)" = 0 ]'
is "$(held 192.0.2.1 192.0.2.2 192.0.2.3)" 110 "a stream's deleted decision ends its ban (no guard set)"
stop
sed -i 's/^refresh = 1$/refresh = 1\nmax_removed = 0.5/' bloomd.conf
printf '{"new":[%s,%s,%s],"deleted":null}' "$(ban 192.0.2.1)" "$(ban 192.0.2.2)" "$(ban 192.0.2.3)" > feeds/cs
start
wait_until '[ "$(held 192.0.2.1 192.0.2.2 192.0.2.3)" = 111 ]'
printf '{"new":[],"deleted":null}' > feeds/cs
printf '{"new":null,"deleted":[%s,%s,%s]}' "$(ban 192.0.2.1)" "$(ban 192.0.2.2)" "$(ban 192.0.2.3)" > feeds/cs.delta
wait_until '[ "$(fetch_of cs refused)" -ge 1 ]'
is "$(held 192.0.2.1 192.0.2.2 192.0.2.3)" 111 "with max_removed = 0.5, an answer lifting every ban is refused"
fetch_of cs last.error | grep -q "more than max_removed"
ok $? "by name: $(fetch_of cs last.error)"
stop; ok $? "bloomd stops cleanly"
