#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Lists fetched from a url, against a real HTTP(S) server on loopback that fails as real ones do:
# conditional GETs answered 304, a new version taken on the next refresh, a 503 page, a truncated
# body, a gzip body whole and cut short, an endless body, a slow server, a version the guards refuse, TLS verified (and refused
# without the authority), the validators kept across a restart, and bloomd-fetch's sandbox.
. "$(dirname "$0")/support/tap.sh"
. "$(dirname "$0")/support/daemon.sh"
plan 54
tmp=$(mktemp -d)
chmod 755 "$tmp"
pid=
servers=()
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; for s in "${servers[@]}"; do kill "$s" 2>/dev/null; done; rm -rf "$tmp"' EXIT
here=$(cd "$(dirname "$0")" && pwd)
cd "$tmp" || exit 1
sock=$tmp/ctl.sock
mkdir feeds

cat > feeds/drop.txt <<'F'
; Spamhaus DROP List 2026/11/23 - (c) 2026 The Spamhaus Project SLU
198.51.100.0/24 ; SBL000001
192.0.2.15 ; SBL000002
F
# Suricata's iprep, with its categories file's names.
printf '192.0.2.50,1,100\n192.0.2.51,2,20\n' > feeds/rep.list
printf '# id,short name,description\n1,BadHosts,Known bad hosts\n' > cats.txt
# A certificate for 127.0.0.1 that no system authority signed.
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=bloomd-test -addext subjectAltName=IP:127.0.0.1 \
	-keyout key.pem -out cert.pem 2>/dev/null
serve() { # serve NAME [CERT KEY]: a feed server; its port in NAME.port
	python3 "$here/support/feed-server.py" "$tmp/feeds" "$tmp/$1.port" "$tmp/$1.log" "${@:2}" &
	servers+=($!)
	for _ in $(seq 100); do [ -s "$1.port" ] && break; sleep 0.05; done
}
serve http
serve https cert.pem key.pem
http=http://127.0.0.1:$(cat http.port)
https=https://127.0.0.1:$(cat https.port)

cat > bloomd.conf <<EOF
[control]
socket = $sock
[store]
dir = $tmp/state
[output]
events =
[list drop]
url = $http/drop.txt
format = drop
refresh = 2s
[list unavailable]
url = $http/status/503
[list truncated]
url = $http/truncated/drop.txt
format = drop
[list gzipped]
url = $http/gzip/drop.txt
format = drop
[list gzipcut]
url = $http/gzip-cut/drop.txt
format = drop
[list endless]
url = $http/huge
max_size = 64KiB
[list slow]
url = $http/slow/drop.txt
format = drop
fetch_timeout = 2s
[list rep]
url = $http/rep.list
format = iprep
categories = cats.txt
[list untrusted]
url = $https/drop.txt
format = drop
[list trusted]
url = $https/drop.txt
format = drop
ca_file = cert.pem
EOF

ok "$(test -x "$BUILD/bloomd-fetch"; echo $?)" "bloomd-fetch is built beside bloomd"
"$BUILD/bloomd" -n -c bloomd.conf >/dev/null 2>check.err
ok $? "bloomd -n accepts the lists with a url"
start
ok $? "bloomd starts with lists fetched from a url"

fetch_of() { C --json lists | jq -c ".lists[] | select(.name == \"$1\") | .fetch"; }
wait_for() { # wait_for JQ-CONDITION LIST: until the list's fetch says so (10 s at most)
	for _ in $(seq 200); do
		[ "$(fetch_of "$2" | jq -r "$1")" = true ] && return 0
		sleep 0.05
	done
	return 1
}

# The sandbox: while the slow server holds a fetch, its process has nothing to lose.
child=
for _ in $(seq 100); do
	child=$(pgrep -P "$pid" -f /slow/drop.txt | head -1)
	[ -n "$child" ] && break
	sleep 0.05
done
status=$(cat "/proc/$child/status" 2>/dev/null)
is "$(awk '/^CapEff:/ {print $2}' <<<"$status")" 0000000000000000 "bloomd-fetch, started by bloomd, has no capabilities"
is "$(awk '/^NoNewPrivs:/ {print $2}' <<<"$status")" 1 "and can gain none"
targets() { for f in "/proc/$1"/fd/*; do [ "${f##*/}" -ge "${2:-0}" ] && readlink "$f"; done 2>/dev/null | sort; }
is "$(readlink "/proc/$child/fd/1" 2>/dev/null | cut -d' ' -f1)" /memfd:bloomd-fetch "its stdout is the memory file the body goes to"
is "$(comm -12 <(targets "$child" 4) <(targets "$pid") | tr '\n' ' ')" "" \
	"past stdin, the body, stderr and the status pipe it holds none of bloomd's descriptors"

# By hand as root (every capability), it becomes nobody before it connects.
cp feeds/drop.txt feeds/byhand.txt
"$BUILD/bloomd-fetch" "$http/slow/byhand.txt" >/dev/null 2>&1 &
byhand=$!
for _ in $(seq 100); do grep -q "^GET /slow/byhand.txt" http.log 2>/dev/null && break; sleep 0.05; done
is "$(awk '/^Uid:/ {print $2}' "/proc/$byhand/status" 2>/dev/null)" "$(id -u nobody)" "bloomd-fetch run by root runs as nobody"
kill "$byhand" 2>/dev/null
wait "$byhand" 2>/dev/null

wait_for '.new == 1' drop
ok $? "the feed's version is fetched at start"
C match 198.51.100.7 >/dev/null
ok $? "its network is in force"
C match 192.0.2.15 >/dev/null
ok $? "and its address"
etag=$(fetch_of drop | jq -r .etag)
ok "$([ "${#etag}" -gt 2 ]; echo $?)" "the server's ETag is kept ($etag)"

wait_for '.not_modified >= 1' drop
ok $? "the next refresh asks conditionally and the server answers 304"
grep -q "GET /drop.txt inm=$etag" http.log
ok $? "the request carried If-None-Match with the ETag"
is "$(fetch_of drop | jq .new)" 1 "a 304 takes no version"

# The publisher changes the feed: the next refresh takes it.
cat > feeds/drop.txt <<'F'
; Spamhaus DROP List 2026/11/24
198.51.100.0/24 ; SBL000001
203.0.113.0/25 ; SBL000003
F
wait_for '.new == 2' drop
ok $? "a changed feed is taken on the next refresh"
C match 203.0.113.9 >/dev/null
ok $? "its new network is in force"
is "$(C list --list drop | grep -c 192.0.2.15)" 0 "and the address it dropped is gone from it"

# replace fetches now, and answers when the fetch is done (tried again if a refresh is under way).
replace_now() {
	local r
	for _ in $(seq 20); do
		r=$(C --json replace "$1" 2>/dev/null)
		grep -q "under way" <<<"$r" || break
		sleep 0.1
	done
	echo "$r"
	jq -e .ok <<<"$r" >/dev/null && return 0 || return 2
}
reply=$(replace_now drop)
ok $? "replace of a list with a url fetches it now"
is "$(jq -r .fetch.result <<<"$reply")" not_modified "and says what came of it ($(jq -c .fetch <<<"$reply"))"

# The guards: a version of bad lines (a portal's login page) is refused and the old one stays.
printf '<html>\n<body>\n<form>login</form>\n</body>\n</html>\n' > feeds/drop.txt
reply=$(replace_now drop)
is $? 2 "a fetched version the guards refuse fails replace"
is "$(jq -r .fetch.result <<<"$reply")" new "though the server sent it"
C match 203.0.113.9 >/dev/null
ok $? "and the list keeps its previous version"
ok "$(fetch_of drop | jq '.refused >= 1' | grep -q true; echo $?)" "the refusal is counted"
grep -q "list drop: .*refused" err
ok $? "and logged"

# The servers that fail.
wait_for '.failed >= 1' unavailable
ok $? "a 503 is a failed fetch"
fetch_of unavailable | jq -r .last.error | grep -q "HTTP 503"
ok $? "which says the server's status ($(fetch_of unavailable | jq -r .last.error))"
grep -q "list unavailable: stale, it keeps its previous version: $http/status/503 cannot be fetched: .*503" err
ok $? "and is logged"
wait_for '.failed >= 1' truncated
ok $? "a truncated body is a failed fetch"
is "$(fetch_of truncated | jq -r '.last.error | test("closed|remaining|partial"; "i")')" true \
	"which says so ($(fetch_of truncated | jq -r .last.error))"
is "$(C --json lists | jq '.lists[] | select(.name == "truncated") | .entries')" 0 "and takes none of it"
# gzip: a whole stream is a version; one cut short (HTTP's framing whole) is not.
is "$(C --json lists | jq '.lists[] | select(.name == "gzipped") | .entries')" \
	"$(C --json lists | jq '.lists[] | select(.name == "drop") | .entries')" "a gzip body is inflated and taken whole"
wait_for '.failed >= 1' gzipcut
ok $? "a gzip stream cut short is a failed fetch"
fetch_of gzipcut | jq -r .last.error | grep -q "gzip stream ends before its end"
ok $? "which says so ($(fetch_of gzipcut | jq -r .last.error))"
is "$(C --json lists | jq '.lists[] | select(.name == "gzipcut") | .entries')" 0 "and takes none of it"
wait_for '.failed >= 1' endless
ok $? "an endless body stops at max_size"
fetch_of endless | jq -r .last.error | grep -q "larger than max_size (65536 bytes)"
ok $? "which says so ($(fetch_of endless | jq -r .last.error))"
wait_for '.failed >= 1' slow
ok $? "a slow server is cut off at fetch_timeout"
fetch_of slow | jq -r .last.error | grep -q "timed out after 2 s"
ok $? "which says so ($(fetch_of slow | jq -r .last.error))"

# TLS: verified, against the system's authorities or the list's ca_file.
wait_for '.failed >= 1' untrusted
ok $? "a certificate no authority signed is refused"
fetch_of untrusted | jq -r .last.error | grep -qi "certificate"
ok $? "which says why ($(fetch_of untrusted | jq -r .last.error | cut -c1-80))"
wait_for '.new == 1' trusted
ok $? "with ca_file naming its authority, the same server is trusted"

wait_for '.new == 1' rep
is "$(grep '^addr' state/lists/rep | sort | tr '\n' ';')" "addr 192.0.2.50 category=BadHosts;addr 192.0.2.51 category=iprep-2;" \
	"an iprep feed's categories are named from its categories file (its kept version's labels)"

metrics=$(C metrics)
grep -q '^bloomd_list_fetch_new_total{list="drop"} 2$' <<<"$metrics"
ok $? "bloomd_list_fetch_new_total counts the versions taken"
grep -q '^# TYPE bloomd_list_fetch_failed_total counter$' <<<"$metrics" &&
	grep -q '^bloomd_list_fetch_failed_total{list="unavailable"} [1-9]' <<<"$metrics"
ok $? "bloomd_list_fetch_failed_total counts the failures"
is "$(kill -0 "$pid"; echo $?)" 0 "bloomd runs on through every failure"

# A reload that points the list elsewhere fetches from there at once.
printf '198.51.100.0/24 ; SBL000001\n192.0.2.99 ; SBL000009\n' > feeds/mirror.txt
sed -i "s|^url = $http/drop.txt\$|url = $http/mirror.txt|" bloomd.conf
C reload >/dev/null 2>&1
wait_for ".url == \"$http/mirror.txt\" and .new == 1" drop
ok $? "a reload that changes a list's url fetches the new one"
C match 192.0.2.99 >/dev/null
ok $? "and takes its version"
sed -i "s|^url = $http/mirror.txt\$|url = $http/drop.txt|" bloomd.conf
C reload >/dev/null 2>&1
wait_for ".url == \"$http/drop.txt\" and .new == 1" drop

# A restart starts from the kept version and asks the server conditionally.
printf '198.51.100.0/24 ; SBL000001\n203.0.113.0/25 ; SBL000003\n' > feeds/drop.txt
replace_now drop >/dev/null
etag=$(fetch_of drop | jq -r .etag)
stop
: > http.log
start
C match 203.0.113.9 >/dev/null
ok $? "after a restart the list holds its kept version at once"
wait_for '.not_modified >= 1' drop
grep -q "^GET /drop.txt inm=$etag" http.log
ok $? "and its first fetch is conditional, with the kept ETag"

# A list dropped from the configuration takes what the state kept for it along: at a reload,
# and at a start (a file left by an earlier configuration).
kept() { ls state/lists state/revs state/fetch | grep -c "^$1$"; }
is "$(kept rep)/$(kept drop)" 3/3 "the state keeps list rep's version, revision and validators, and drop's"
sed -i '/^\[list rep\]$/,/^categories = /d' bloomd.conf
C reload >/dev/null 2>&1
is "$(kept rep)/$(kept drop)" 0/3 "a reload that drops list rep removes them; drop's stay"
grep -q "state/lists/rep removed: no list of that name is configured" err; ok $? "saying so"
stop
cp state/lists/drop state/lists/earlier
start
is "$(kept earlier)/$(kept drop)/$(C match 203.0.113.9 >/dev/null; echo $?)" 0/3/0 \
	"a start removes a kept version no list is configured for; drop's is taken"
stop

done_testing
