#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The control plane end to end: bloomctl against a running bloomd over its socket.
# Entries, replays, TTL, rebuild during a replay, restarts, kill -9, torn and corrupt
# state files, hostile clients, and a client that may not change state.
. "$(dirname "$0")/support/tap.sh"
. "$(dirname "$0")/support/daemon.sh"
plan 88
tmp=$(mktemp -d)
chmod 755 "$tmp"
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; pkill -P $$ socat 2>/dev/null; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
sock=$tmp/ctl.sock

crash() { # kill -9, quietly (no job notice from the shell)
	disown "$pid"
	kill -9 "$pid"
	for _ in $(seq 250); do kill -0 "$pid" 2>/dev/null || break; sleep 0.02; done
	pid=
}
events_of() { jq -c --arg f "$1" 'select(.pcap_filename == $f) | [.pcap_cnt, .alert.context.matches]' events.json; }

cat > bloomd.conf <<C
[filter]
auto_rebuild = no
[control]
socket = $sock
idle_timeout = 3
max_clients = 32
[store]
dir = $tmp/state
fsync = always
[output]
events = $tmp/events.json
C
cat > traffic.spec <<'S'
link en10mb
packet src=192.0.2.1 dst=198.51.100.7 proto=udp sport=1000 dport=53 payload="hello"
packet src=192.0.2.5 dst=203.0.113.9 proto=tcp sport=2000 dport=80 payload="GET /etc/passwd HTTP/1.0"
packet src=10.1.1.1 dst=10.2.2.2 proto=udp sport=3000 dport=4000 payload="nothing here"
packet src=2001:db8::1 dst=2001:db8::2 proto=tcp sport=5000 dport=443
S
"$BUILD/pcapgen" -o traffic.pcap traffic.spec
cat > entries.list <<'L'
# a comment line, then a blank one: neither is an entry

addr 192.0.2.1
pair 192.0.2.5 203.0.113.9
sig "GET /etc/passwd"
addr 2001:db8::2
addr 300.1.2.3
L

start; ok $? "bloomd starts with a socket and no capture source"
is "$(stat -c %a "$sock")" 660 "the socket is mode 0660"
is "$(C version --json | jq -r .version)" "$(C version | awk '/^version/ {print $2}')" "version, human and --json"

out=$(C load entries.list 2>load.err); rc=$?
is "$out" "added 4, already present 0, rejected 1" "load reports added, present, rejected"
is "$rc" 2 "a load with rejected lines exits 2"
grep -q "^entries.list:7: addr needs an IPv4 or IPv6 address, got '300.1.2.3': 'addr 300.1.2.3'$" load.err
ok $? "the rejected line is named FILE:LINE, with why and its text in full"
C --json load entries.list >/dev/null 2>&1; is $? 2 "and so with --json (the same exit codes as text)"
# bloomctl sends the lines gathered, and what it has before each read that could wait: lines a
# second apart through a pipe, four seconds in all, are not cut off by the idle timeout (3 s).
{ for i in 1 2 3 4; do echo "addr 192.0.2.$((30 + i))"; sleep 1; done; printf 'addr 192.0.2.35'; } |
	C load - > slow.out 2>&1
is "$(cat slow.out)" "added 5, already present 0, rejected 0" "load: lines a second apart all go in (the last one without its newline too)"
C load "$tmp" > /dev/null 2> dir.err; rc=$?
[ "$rc" -eq 2 ] && grep -q "^bloomctl: $tmp:1: Is a directory; the load stops there" dir.err
ok $? "a load of what cannot be read says why and exits 2: $(head -c 80 dir.err)"
{ echo "addr 192.0.2.40"; echo .; head -c 9000 /dev/zero | tr '\0' x; echo; echo "addr 192.0.2.41"; } > long.list
out=$(C load long.list 2> long.err); rc=$?
[ "$rc" -eq 2 ] && [ "$out" = "added 1, already present 0, rejected 0" ] &&
	grep -q "^bloomctl: long.list:3: line longer than 8192 bytes; the load stops there" long.err &&
	C query addr 192.0.2.40 >/dev/null && ! C query addr 192.0.2.41 >/dev/null
ok $? "a line longer than a command stops the load there, named FILE:LINE; a lone . is skipped"
for i in 31 32 33 34 35 40; do C del addr 192.0.2.$i >/dev/null; done
# The daemon parses a load's lines some ahead of their adds: its errors still come in the lines'
# order, a NUL byte's among them, and a repeat within those lines is present, not added twice.
for i in $(seq 1 40); do
	case $i in
	3 | 18) echo "addr 300.0.0.$i" ;;
	19) printf 'addr 192.0.2.1\000 7\n' ;;
	21) echo "addr 192.0.2.120" ;;
	*) echo "addr 192.0.2.$((100 + i))" ;;
	esac
done > order.list
is "$(C --json load order.list | jq -c '[.added, .present, .rejected, (.errors | map(split(":")[0])), .errors[2]]')" \
	'[36,1,3,["line 3","line 18","line 19"],"line 19: NUL byte in line"]' "a load's errors come in its lines' order, its repeats present"
for i in $(seq 101 140); do C del addr 192.0.2.$i >/dev/null; done

reply=$(C --json replay traffic.pcap --wait)
is "$(jq -r '.packets, .matched' <<<"$reply" | tr '\n' ' ')" "4 3 " "replay --wait: 4 packets, 3 matched"
is "$(events_of "$tmp/traffic.pcap" | wc -l)" 3 "three events"
C query addr 192.0.2.1 >/dev/null; is $? 0 "query of a present entry exits 0"
C add net 198.51.100.0/24 >/dev/null && C add net 198.51.0.0/16 >/dev/null
is "$(C match 198.51.100.77 | tr '\n' ,)" "net 198.51.100.0/24 (list local),net 198.51.0.0/16 (list local)," "match: the nets that cover an address, longest first, with their lists"
C match 203.0.113.200 >/dev/null; is $? 1 "match of an address nothing covers exits 1"
is "$(C --json query addr 198.51.100.77 | jq -c '[.present, .covered_by]')" '[false,["net 198.51.100.0/24","net 198.51.0.0/16"]]' \
	"query addr: absent as an entry, but covered by the nets"
C del net 198.51.100.0/24 >/dev/null && C del net 198.51.0.0/16 >/dev/null
is "$("$BUILD/bloomctl" --version)" "bloomctl $(C --json version | jq -r .version)" "bloomctl --version says the daemon's version"
C query addr 192.0.2.99 >/dev/null; is $? 1 "query of an absent entry exits 1"
is "$(C --json query addr 192.0.2.99 | jq -r .present)" false "and says absent in JSON"

C del addr 192.0.2.1 >/dev/null; is $? 0 "del"
C del addr 192.0.2.1 >/dev/null; is $? 1 "del of an absent entry exits 1"
: > events.json
C replay traffic.pcap --wait >/dev/null
is "$(events_of "$tmp/traffic.pcap" | grep -c '"192.0.2.1"')" 0 "the deleted entry no longer matches"
is "$(events_of "$tmp/traffic.pcap" | wc -l)" 2 "the others still do"

C add addr 198.51.100.200 --ttl 1 >/dev/null
C query addr 198.51.100.200 >/dev/null; is $? 0 "an entry with a TTL is there"
# Housekeeping runs each second: gone within 1 to 2 s; waited for, up to 20.
for _ in $(seq 200); do C query addr 198.51.100.200 >/dev/null || break; sleep 0.1; done
C query addr 198.51.100.200 >/dev/null; is $? 1 "and expires by itself"

# A rebuild while a long replay runs loses no match.
"$BUILD/pcapgen" -o big.pcap --random --packets 200000 --entries 3000 --list big.list --seed 7
C load big.list >/dev/null
for i in $(seq 1 20000); do echo "addr 10.$((i / 256 % 256)).$((i % 256)).7"; done | C load - >/dev/null
: > events.json
C replay big.pcap --wait >/dev/null
events_of "$tmp/big.pcap" > before
[ -s before ]; ok $? "the long replay matches"
: > events.json
C replay big.pcap >/dev/null
reply=$(C --json rebuild --rounds 5 --wait)
is "$(jq -r '.ok and .longest_hold_ms > 0 and .longest_hold_ms <= .max_stall_ms' <<<"$reply")" true \
	"rebuild --wait while the replay runs (it says the loop's longest hold, within its whole)"
replayed() { C --json stats | jq '.stats.sources | map(select(.name == "'"$tmp"'/big.pcap")) | length'; }
for _ in $(seq 300); do [ "$(replayed)" -ge 2 ] && break; sleep 0.1; done
events_of "$tmp/big.pcap" > during
cmp -s before during; ok $? "the same events with and without the rebuild"
[ "$(C --json stats | jq .stats.rebuild.count)" -ge 1 ]; ok $? "stats counts the rebuilds"
C metrics | grep -q '^bloomd_packets_total [1-9]'; ok $? "metrics in Prometheus text"
if command -v promtool >/dev/null; then
	C metrics > metrics.txt
	promtool check metrics < metrics.txt > promtool.out 2>&1; ok $? "promtool check metrics finds nothing to say"
	sed 's/^/#   /' promtool.out
else
	tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP no promtool (Debian's prometheus; tools/install-deps.sh test)"
fi
C metrics | grep -q '^bloomd_build_info{version="[0-9.]*",kernel="[a-z0-9]*"} 1$'; ok $? "build_info names the version and the kernel"

# Reload: a bad configuration is refused and the running one kept; SIGHUP reads a good one.
cp bloomd.conf good.conf
printf '[filter]\nchoices = 7\n' >> bloomd.conf
C reload 2>reload.err; rc=$?
[ "$rc" -eq 2 ] && grep -q "choices: expected a whole number from 1 to 3" reload.err
ok $? "reload refuses a bad configuration and says why"
C query pair 192.0.2.5 203.0.113.9 >/dev/null; is $? 0 "and the daemon goes on with the old one"
sed 's/^auto_rebuild = no/auto_rebuild = yes/' good.conf > bloomd.conf
echo 'addr 192.0.2.250' > extra.list
printf '[entries]\nfile = %s/extra.list\n' "$tmp" >> bloomd.conf
rebuilds=$(C --json stats | jq .stats.rebuild.count)
kill -HUP "$pid"
for _ in $(seq 400); do C query addr 192.0.2.250 >/dev/null && break; sleep 0.05; done
C query addr 192.0.2.250 >/dev/null; is $? 0 "SIGHUP reloads: a new entry list is read"
# and reopens the outputs, as log rotation wants: the events go to a new file
mv events.json events.rotated
kill -HUP "$pid"
for _ in $(seq 400); do [ -e events.json ] && break; sleep 0.05; done
C replay traffic.pcap --wait >/dev/null
[ -s events.json ]; ok $? "SIGHUP also reopens the outputs: events go to a new events.json"
is "$(C metrics | awk '/^bloomd_last_reload_success / { print $2 }')" 1 "metrics: the last reload was taken"
# 30,000 more entries outgrow the filters twice over: auto-rebuild resizes them.
for i in $(seq 1 30000); do echo "addr 10.$((i / 256 % 256)).$((i % 256)).9"; done | C load - >/dev/null
want=$((53000 * 16 * 3 / 4))
for _ in $(seq 150); do [ "$(C --json stats | jq .stats.filters.addresses.bits)" -ge $want ] && break; sleep 0.1; done
[ "$(C --json stats | jq .stats.rebuild.count)" -gt "$rebuilds" ]; ok $? "with auto_rebuild on, the outgrown filters are rebuilt by themselves"
bits=$(C --json stats | jq .stats.filters.addresses.bits)
[ "$bits" -ge $want ]; ok $? "to the size the entries call for ($bits bits)"

# A refused reload changes nothing: not the filters' settings, not the outputs.
cp bloomd.conf running.conf
choices=$(C --json stats | jq .stats.filters.addresses.choices)
rebuilds=$(C --json stats | jq .stats.rebuild.count)
sed -e 's|^events = .*|events = '"$tmp"'|' running.conf > bloomd.conf # a directory: cannot be opened
printf '[filter]\nchoices = 3\n' >> bloomd.conf
C reload 2>reload.err; rc=$?
[ "$rc" -eq 2 ] && grep -q "cannot open events file $tmp" reload.err; ok $? "a reload whose events file cannot be opened is refused"
C rebuild --wait >/dev/null # with the settings it has: the refused ones must not be among them
rebuilds=$((rebuilds + 1))
is "$(C --json stats | jq -c '[.stats.filters.addresses.choices, .stats.rebuild.count]')" "[$choices,$rebuilds]" \
	"and leaves the filters' settings as they were (a rebuild keeps $choices choices)"
# A change of the filters' settings while a rebuild runs is not dropped: another rebuild follows.
C rebuild --rounds 40 >/dev/null
sed 's/^auto_rebuild = yes/auto_rebuild = no/' running.conf > bloomd.conf
printf '[filter]\nbits_per_entry = 24\n' >> bloomd.conf
C reload >/dev/null
for _ in $(seq 300); do [ "$(C --json stats | jq .stats.rebuild.count)" -ge $((rebuilds + 2)) ] && break; sleep 0.1; done
is "$(C --json stats | jq .stats.rebuild.count)" $((rebuilds + 2)) "a reload during a rebuild: a second rebuild follows it"
bits=$(C --json stats | jq '.stats.filters.addresses.bits / .stats.filters.addresses.keys | floor')
[ "$bits" -ge 22 ]; ok $? "with the new bits per entry ($bits)"
cp running.conf bloomd.conf
C reload >/dev/null

# A reload names the settings that wait for a restart: [capture] file too.
printf '[capture]\nfile = %s/big.pcap\n' "$tmp" >> bloomd.conf
is "$(C --json reload | jq -c .restart_needed)" '["[capture] file"]' "a reload names [capture] file as waiting for a restart"
out=$(C reload)
grep -q '^  \[capture\] file: changed, in force at the next start$' <<<"$out" && grep -q '^configuration reloaded' <<<"$out" &&
	! grep -q '\[{' <<<"$out"
ok $? "and says so in words, its lists a line each, no JSON arrays"
cp running.conf bloomd.conf
is "$(C --json reload | jq -c .restart_needed)" '[]' "and reloading the running configuration names nothing"

# list: one JSON line, sent in pieces, with every entry the statistics count.
echo list | socat -t 5 - UNIX-CONNECT:"$sock" > list.json
is "$(jq -c '[.count, (.entries | length), (.entries | unique | length)]' list.json)" \
	"$(C --json stats | jq -c '[.stats.kinds[].entries] | add | [., ., .]')" "list: every entry once, in one JSON line"

# Expiry times survive a list and a load: list writes expires=UNIXTIME, load reads it (or ttl=).
C add addr 198.51.100.222 --ttl 3600 >/dev/null
line=$(C list --kind addr | grep '^addr 198.51.100.222 ')
expires=$(C --json query addr 198.51.100.222 | jq .expires)
is "$line" "addr 198.51.100.222 expires=$expires" "list writes an entry's expiry"
C del addr 198.51.100.222 >/dev/null
printf '%s\naddr 198.51.100.223 ttl=60\n' "$line" | C load - >/dev/null
is "$(C --json query addr 198.51.100.222 | jq .expires)" "$expires" "and load reads it back: a list round-trips with its expiries"
left=$(( $(C --json query addr 198.51.100.223 | jq .expires) - $(date +%s) ))
[ "$left" -ge 55 ] && [ "$left" -le 61 ]; ok $? "ttl=60 in a list expires in a minute ($left s)"
C del addr 198.51.100.222 >/dev/null; C del addr 198.51.100.223 >/dev/null
# --ttl takes a time as the configuration writes one.
C add addr 198.51.100.224 --ttl 4h >/dev/null
left=$(( $(C --json query addr 198.51.100.224 | jq .expires) - $(date +%s) ))
[ "$left" -ge 14390 ] && [ "$left" -le 14400 ]; ok $? "--ttl 4h expires in four hours ($left s)"
C add addr 198.51.100.225 --ttl 4x >/dev/null 2>ttl.err; rc=$?
[ "$rc" -ne 0 ] && grep -q "expected a time from 1s to 3650d such as 90, 90s, 15m, 4h or 7d, got '4x'" ttl.err
ok $? "--ttl 4x is refused, saying what a time is: $(head -c 120 ttl.err)"
C del addr 198.51.100.224 >/dev/null

# A listing goes out as the client reads it: clients that list and never read cost bloomd
# their output limit (1 MiB) each, not the whole listing (here 10 MB) each.
awk 'BEGIN { for (i = 0; i < 250000; i++) printf "addr 11.%d.%d.%d\n", i / 65536 % 256, i / 256 % 256, i % 256 }' |
	C load - >/dev/null
rss() { awk '/^VmRSS:/ { print $2 }' /proc/$pid/status; }
before=$(rss)
for _ in $(seq 20); do { echo list; sleep 3; } | socat -u - UNIX-CONNECT:"$sock" >/dev/null 2>&1 & done
sleep 1.5
grown=$(( ($(rss) - before) / 1024 ))
pkill -P $$ sleep 2>/dev/null
[ "$grown" -lt 60 ]; ok $? "20 clients listing 10 MB each without reading: bloomd grows by $grown MB, under 60"
C version >/dev/null; ok $? "and goes on serving"
pkill -P $$ socat 2>/dev/null

# The loop polls between a replay's batches. A capture of 2^36 empty records (a sparse file of
# 1 TiB: its header, then zeros) outlasts the test on any machine, so the requests below meet it
# running however loaded the machine is: stats twice, its count grown, and a SIGTERM.
head -c 24 traffic.pcap > endless.pcap && truncate -s 1T endless.pcap
C replay endless.pcap >/dev/null
progress() { C --json stats | jq -c '.stats.replaying | select(.name | endswith("/endless.pcap")) | .packets'; }
for _ in $(seq 600); do first=$(progress); [ "${first:-0}" -gt 0 ] && break; sleep 0.05; done
for _ in $(seq 600); do second=$(progress); [ "${second:-0}" -gt "${first:-0}" ] && break; sleep 0.05; done
[ "${first:-0}" -gt 0 ] && [ "${second:-0}" -gt "${first:-0}" ]
ok $? "control is answered while a replay runs: stats names it, $first then $second packets in"
C replay traffic.pcap >/dev/null
is "$(C --json stats | jq .stats.replays_queued)" 1 "and counts the replays queued behind it"

# Durable state: a restart (SIGTERM in the middle of that replay), then kill -9 right after
# acknowledged adds.
C list | sort > list.before
stop; ok $? "SIGTERM: clean exit"
[ ! -e "$sock" ]; ok $? "the socket is removed"
start
C list | sort > list.after
cmp -s list.before list.after; ok $? "after a restart every entry is there"
for i in $(seq 1 50); do C add addr 172.16.0.$i >/dev/null; done
crash
start; ok $? "a stale socket left by kill -9 is replaced"
n=0; for i in $(seq 1 50); do C query addr 172.16.0.$i >/dev/null && n=$((n + 1)); done
is "$n" 50 "every add acknowledged before kill -9 is there"
C add addr 172.16.1.1 >/dev/null
crash
truncate -s -5 state/journal
start; ok $? "a torn journal: bloomd starts"
grep -q "torn" err; ok $? "and warns about the dropped record"
C query addr 172.16.1.1 >/dev/null; is $? 1 "the torn add is gone"
C query addr 172.16.0.50 >/dev/null; is $? 0 "the rest is there"
stop
# One byte of the hash secret changed: its complement, as a fixed value would leave it as it
# was once in 256 runs, and that bloomd would start and run on.
byte=$(od -An -tu1 -j100 -N1 state/snapshot | tr -d ' ')
printf "\\$(printf %03o $((byte ^ 0xff)))" | dd of=state/snapshot bs=1 seek=100 conv=notrunc 2>/dev/null
sum=$(md5sum < state/snapshot)
: > err
timeout 60 "$BUILD/bloomd" -c bloomd.conf 2>err; rc=$?
[ "$rc" -ne 0 ] && grep -q "snapshot: checksum mismatch" err; ok $? "a corrupt snapshot is refused with a clear message"
is "$(md5sum < state/snapshot)" "$sum" "and left as it was"
rm -rf state
start
C load entries.list >/dev/null 2>&1
C load big.list >/dev/null
for i in $(seq 1 20000); do echo "addr 10.$((i / 256 % 256)).$((i % 256)).7"; done | C load - >/dev/null
timeout 60 "$BUILD/bloomd" -c bloomd.conf 2>second.err; rc=$?
[ "$rc" -ne 0 ] && grep -q "another bloomd is answering" second.err; ok $? "a second bloomd on a live socket is refused"
# A restart that meets the bloomd before it on its way out (still answering for a moment, as
# one killed with -9 is until the kernel has torn it down) waits for it, then starts.
stop
socat UNIX-LISTEN:"$sock",fork /dev/null &
leaving=$!
for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.02; done
(sleep 1; kill "$leaving") &
start; ok $? "a start meeting one still answering for a second waits for it to go, then starts"

# Hostile input: every client gets its error or is cut off; the daemon goes on.
reply=$(printf 'frobnicate\nadd addr 999.1.1.1\nversion\n' | socat -t 2 - UNIX-CONNECT:"$sock")
is "$(jq -r .error <<<"$reply" | head -1)" "unknown command 'frobnicate' (help lists them)" "an unknown command"
jq -r .error <<<"$reply" | sed -n 2p | grep -q "^add: addr needs an IPv4 or IPv6 address"; ok $? "a malformed entry"
is "$(jq -r .version <<<"$reply" | sed -n 3p)" "$(C --json version | jq -r .version)" "the connection lives on"
reply=$( { head -c 3000 /dev/urandom | tr '\n' 'x'; printf '\nversion\n'; } | socat -t 2 - UNIX-CONNECT:"$sock")
is "$(jq -r .ok <<<"$reply" | tr '\n' ' ')" "false true " "binary garbage gets an error, then the next command is served"
reply=$( { head -c 1048576 /dev/zero | tr '\0' 'a'; printf '\nversion\n'; } | socat -t 2 - UNIX-CONNECT:"$sock" 2>/dev/null)
is "$reply" '{"ok":false,"error":"line too long (the limit is 8192 bytes)"}' "a 1 MiB line: an error, and the connection closed"

: > events.json
C replay big.pcap >/dev/null
# (their sleeps are ended below: one left behind would hold the test's output open for 30 s)
for _ in $(seq 100); do sleep 30 | socat -u - UNIX-CONNECT:"$sock" >/dev/null 2>&1 & done
for _ in $(seq 5); do yes stats | socat -u - UNIX-CONNECT:"$sock" >/dev/null 2>&1 & done
# The idle ones are cut off after idle_timeout (3 s): waited for, up to 8 s.
sleep 1
for _ in $(seq 200); do C version >/dev/null 2>&1 && break; sleep 0.1; done
C version >/dev/null; ok $? "idle and flooding clients are cut off: bloomctl is served again"
[ "$(C --json stats | jq .stats.control.rejected)" -ge 60 ]; ok $? "stats counts the clients turned away"
for _ in $(seq 300); do [ "$(replayed)" -ge 1 ] && break; sleep 0.1; done
events_of "$tmp/big.pcap" > hostile
cmp -s <(wc -l < before) <(wc -l < hostile); ok $? "a replay running meanwhile finishes with its events"
pkill -P $$ socat 2>/dev/null
pkill -P $$ sleep 2>/dev/null

# bloomd opens no file a client names: a root-only file is not read for a client, a FIFO or
# a device is not replayed (its reads would block the loop, or never end).
raw() { printf '%s\n' "$1" | socat -t 2 - UNIX-CONNECT:"$sock" 2>/dev/null; }
reply=$(raw "load /etc/shadow")
jq -e '.ok == false and (.error | test("load: give -"))' <<<"$reply" >/dev/null && ! grep -q 'root:' <<<"$reply"
ok $? "load PATH is refused, and nothing of the file is said: $(jq -r .error <<<"$reply" | head -c 80)"
reply=$(raw "replay $tmp/traffic.pcap")
jq -e '.ok == false and (.error | test("opens no file a client names"))' <<<"$reply" >/dev/null
ok $? "replay PATH is refused"
mkfifo fifo
C replay fifo --wait 2> fifo.err; rc=$?
[ "$rc" -ne 0 ] && grep -q "not a regular file" fifo.err; ok $? "a FIFO passed open is refused: $(head -c 100 fifo.err)"
C replay /dev/zero 2> zero.err; rc=$?
[ "$rc" -ne 0 ] && grep -q "not a regular file" zero.err; ok $? "so is a device"
C version >/dev/null; ok $? "and the loop was never blocked"
reply=$(C --json replay traffic.pcap --wait)
is "$(jq -r '.ok, .file' <<<"$reply" | tr '\n' ' ')" "true $tmp/traffic.pcap " "bloomctl replay passes the file open, named by its path"

# Every command gets exactly one reply: a file name that is not UTF-8 is shown with '?'.
cp traffic.pcap "$(printf 'odd\377.pcap')"
reply=$(timeout 5 "$BUILD/bloomctl" -s "$sock" --json replay "$(printf 'odd\377.pcap')" --wait)
is "$(jq -r '.ok, .file' <<<"$reply" | tr '\n' ' ')" "true $tmp/odd?.pcap " "a replay of a file whose name is not UTF-8 still gets its reply"

# A peer that is not root, bloomd's user or the group may read, not change.
chmod 666 "$sock"
cp "$BUILD/bloomctl" "$tmp/bloomctl"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$tmp/bloomctl" -s "$sock" "$@"; }
as_nobody query addr 2001:db8::2 >/dev/null; is $? 0 "nobody may query"
as_nobody add addr 192.0.2.77 2>nobody.err; rc=$?
[ "$rc" -eq 2 ] && grep -q "not allowed" nobody.err; ok $? "nobody may not add"
C query addr 192.0.2.77 >/dev/null; is $? 1 "and nothing was added"
done_testing
