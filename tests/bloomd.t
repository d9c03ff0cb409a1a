#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bloomd's command line: -n, bad config and lists, missing files, statistics, the match pcap.
. "$(dirname "$0")/support/tap.sh"
plan 73
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$tmp" || exit 1

cat > good.list <<'L'
addr 192.0.2.1
sig "attack!!"
addr 192.0.2.1
L
printf '[entries]\nfile = good.list\n[output]\npcap = matched.pcap\n' > good.conf
cat > pkts <<'P'
link en10mb
packet src=192.0.2.1 dst=10.0.0.1
packet src=10.0.0.1 dst=10.0.0.2 payload="an attack!!"
packet src=10.0.0.3 dst=10.0.0.4
P
"$BUILD/pcapgen" -o in.pcap pkts

out=$("$BUILD/bloomd" -n -c good.conf -r in.pcap); is $? 0 "-n on a good config exits 0"
grep -q "2 entries in 2 lists" <<<"$out"; ok $? "-n counts the entries (a repeat once) and the lists"
grep -q "^bloomd: no state kept" <<<"$out"; ok $? "and says a replay keeps no state"
out=$("$BUILD/bloomd" -n -c good.conf 2>/dev/null)
grep -q "^bloomd: state kept in /var/lib/bloomd (the default: \[store\] dir is not set)$" <<<"$out"
ok $? "-n names the default state directory a start would use: $(tail -n 1 <<<"$out")"
printf '[store]\ndir = %s/st\n' "$PWD" | cat good.conf - > st.conf
out=$("$BUILD/bloomd" -n -c st.conf 2>/dev/null)
is "$(tail -n 1 <<<"$out")" "bloomd: state kept in $PWD/st" "and the one [store] dir names"

cat > bad.list <<'L'
addr 192.0.2.1
addr 999.1.1.1
sig "short"
pair 1.1.1.1
L
printf '[entries]\nfile = bad.list\nfile = missing.list\n[filter]\nchoices = 9\n' > bad.conf
"$BUILD/bloomd" -n -c bad.conf 2> err; is $? 1 "-n on a bad config exits 1"
grep -q "bad.conf:5: choices" err; ok $? "the config problem names file and line"
printf '[entries]\nfile = bad.list\nfile = missing.list\n' > bad2.conf
out=$("$BUILD/bloomd" -n -c bad2.conf 2> err); is $? 0 "-n with bad lists exits 0: they never stop a start"
grep -q "2 refused: see above" <<<"$out"; ok $? "-n says how many lists would be refused"
out=$("$BUILD/bloomd" -n --strict -c bad2.conf 2>/dev/null); rc=$?
is "$rc $out" "1 bloomd: bad2.conf: 2 of 3 lists refused (see above): --strict fails the check" \
	"-n --strict: a list refused or unreadable fails the check"
grep -q "bad.list:2: addr needs .*, skipped: 'addr 999.1.1.1'" err; ok $? "a bad address names its line and its text"
grep -q "bad.list:3: signature of 5 bytes is shorter than the window (8 bytes), skipped: 'sig \"short\"'" err; ok $? "a short signature names its line"
grep -q "bad.list:4: pair needs two addresses" err; ok $? "a bad pair names its line"
grep -q "list bad.list: bad.list: refused, .*3 of its 4 entry lines are bad, more than max_bad (0.1)" err; ok $? "a list mostly bad is refused whole"
grep -q "list missing.list: cannot read .*missing.list" err; ok $? "a missing list is reported"
# One bad line in eleven is within max_bad = 0.1: the rest is taken, and bloomd starts on it.
{ for i in $(seq 1 10); do echo "addr 10.9.9.$i"; done; echo '<html>503 Service Unavailable</html>'; echo 'addr 192.0.2.1'; } > mostly.list
printf '[entries]\nfile = mostly.list\nfile = missing.list\n' > bad3.conf
"$BUILD/bloomd" -c bad3.conf -r in.pcap > out 2> err; is $? 0 "the daemon starts with a bad line and a missing list"
is "$(grep -c '"event_type":"alert"' out)" 1 "and matches on what was read"

"$BUILD/bloomd" -c good.conf -r in.pcap > out 2> err; is $? 0 "replay exits 0"
is "$(grep -c '"event_type":"alert"' out)" 2 "two events"
stats=$(tail -n 1 out)
is "$(jq -r '.packets, .matched_packets' <<<"$stats" | tr '\n' ' ')" "3 2 " "final statistics: 3 packets, 2 matched"
is "$(jq -r '.kinds.sig.confirmed, .kinds.addr.entries' <<<"$stats" | tr '\n' ' ')" "1 1 " "per-kind counters"
is "$(jq -r '.sources[0].packets' <<<"$stats")" 3 "per-source packets"

# A second file of another link type: its matches are events, but not in the match pcap.
printf 'link raw\npacket src=192.0.2.1 dst=10.0.0.9\n' > raw.pkts
"$BUILD/pcapgen" -o raw.pcap raw.pkts
rm -f matched.pcap
is "$("$BUILD/bloomd" -c good.conf -r in.pcap -r raw.pcap 2>/dev/null | tail -n 1 | jq -r '.matched_packets, .pcap_skipped' | tr '\n' ' ')" "3 1 " \
	"a match of another link type is counted as left out of the match pcap"

# The match pcap holds exactly the matched packets: replaying it matches all of them.
again=$("$BUILD/bloomd" -c good.conf -r matched.pcap 2>/dev/null | tail -n 1)
is "$(jq -r '.packets, .matched_packets' <<<"$again" | tr '\n' ' ')" "2 2 " "the match pcap holds the two matched packets"

"$BUILD/bloomd" -c good.conf -r nonexistent.pcap -r in.pcap > out 2> err; is $? 1 "a missing pcap: exit 1"
grep -q "nonexistent.pcap" err; ok $? "the error names the file"
# The files after it still replay whole, every time: an exit asked for at once, before the loop
# ran, could end it before the next file's source and events were out (seen with the CPU busy).
busy() { timeout 30 bash -c 'while :; do :; done'; } # ends by itself if this test does not
busy & hog1=$!
busy & hog2=$!
short=0
for _ in $(seq 40); do
	"$BUILD/bloomd" -c good.conf -r nonexistent.pcap -r in.pcap 2>/dev/null | tail -n 1 > stats.json
	[ "$(jq -r '.sources[1].packets' stats.json)" = 3 ] || short=$((short + 1))
done
kill "$hog1" "$hog2"
is "$short" 0 "the other files still replay (40 runs, the CPU busy)"
"$BUILD/bloomd" -c good.conf -r in.pcap -i lo 2>/dev/null; is $? 2 "-r with -i is a usage error"

# -n checks what a start would need from the system, not only the file's syntax.
cat > sys.conf <<C
[capture]
bpf = udp port nonsense
[control]
socket = $tmp/no/such/dir/ctl.sock
group = no-such-group-bloomd
[store]
dir = $tmp/missing/state
[service]
user = no-such-user-bloomd
[output]
events = $tmp/missing/events.json
C
"$BUILD/bloomd" -n -c sys.conf -i no-such-if0 2> err; is $? 1 "-n refuses what a start would fail on"
for want in "\[store\] dir $tmp/missing/state does not exist and cannot be made in $tmp/missing" \
	"\[control\] socket's directory $tmp/no/such/dir does not exist and cannot be made" \
	"\[control\] group 'no-such-group-bloomd' does not exist" "\[service\] user 'no-such-user-bloomd' does not exist" \
	"\[output\] events $tmp/missing/events.json does not exist and cannot be made in $tmp/missing" \
	"interface no-such-if0: No such device" "\[capture\] bpf: bad bpf filter 'udp port nonsense'"; do
	grep -q "$want" err || { echo "#   no '$want' in:"; sed 's/^/#   /' err; false; }
	ok $? "-n names it: ${want//\\/}"
done
# The socket's directory (/run/bloomd under systemd) is made when it is missing.
printf '[control]\nsocket = %s/run/ctl.sock\n[store]\ndir = %s/state\n' "$tmp" "$tmp" > run.conf
"$BUILD/bloomd" -n -c run.conf >/dev/null 2>&1 && { "$BUILD/bloomd" -c run.conf 2>run.err & pid=$!; }
for _ in $(seq 100); do [ -S run/ctl.sock ] && break; sleep 0.05; done
is "$(stat -c %a run 2>/dev/null)" 755 "a configuration -n accepts starts: the socket's missing directory is made, 0755"
kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
grep -q "warning: no entries: nothing will match until some are added" run.err
ok $? "started with no entries, it says so"
if [ "$(id -u)" -eq 0 ]; then
	grep -q "warning: running as root: set \[service\] user" run.err; ok $? "and, run as root with no [service] user, that too"
else
	tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP not root"
fi

# An events FIFO nobody reads is refused at once (it used to block the start).
mkfifo ev.fifo
printf '[output]\nevents = %s/ev.fifo\n' "$tmp" > fifo.conf
timeout 5 "$BUILD/bloomd" -c fifo.conf -r in.pcap > /dev/null 2> fifo.err; rc=$?
[ "$rc" -eq 1 ] && grep -q "ev.fifo: not a regular file or a device" fifo.err
ok $? "an events file that is a FIFO is refused, not waited on"
"$BUILD/bloomd" -n -c fifo.conf -r in.pcap 2>&1 | grep -q "ev.fifo: a FIFO"; ok $? "and -n says so"

# A state directory every user may write in is refused: files planted there would be read as state.
mkdir -p ww/state && chmod 777 ww/state
printf '[control]\nsocket = %s/ww.sock\n[store]\ndir = %s/ww/state\n' "$tmp" "$tmp" > ww.conf
"$BUILD/bloomd" -c ww.conf 2> ww.err; rc=$?
[ "$rc" -ne 0 ] && grep -q "writable by every user: refused (chmod o-w" ww.err
ok $? "a world-writable state directory is refused"
"$BUILD/bloomd" -n -c ww.conf 2>/dev/null; ok $((! $?)) "and so by -n"

# Signals that come while the lists load wait for the loop: SIGUSR1 and SIGHUP no longer kill
# it, and a SIGTERM is handled once it runs.
awk 'BEGIN { for (i = 0; i < 400000; i++) printf "addr 10.%d.%d.%d\n", i / 65536 % 256, i / 256 % 256, i % 256 }' > big.list
printf '[entries]\nfile = big.list\n[control]\nsocket = %s/sig.sock\n[store]\ndir =\n' "$tmp" > sig.conf
"$BUILD/bloomd" -c sig.conf 2> sig.err &
pid=$!
# From main's first line on (before it, the loader runs: nothing can hold a signal there). The
# loader can take seconds under a sanitizer on a busy machine, so wait until SIGUSR1 is blocked
# (lists loading) or caught (the loop's handler), whichever is seen first.
# Up to 2 minutes (tests/signals.t sends each signal at each phase of a start, loaded on purpose).
for _ in $(seq 12000); do
	masks=$(awk '/^Sig(Blk|Cgt):/ { printf "%s ", $2 }' /proc/$pid/status 2>/dev/null)
	held=0
	for mask in $masks; do [ $((0x$mask & 0x200)) -ne 0 ] && held=1; done
	[ "$held" -eq 1 ] && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.01
done
[ "$held" -eq 1 ] || echo "# SIGUSR1 never blocked nor caught in bloomd ($pid)"
# The load takes about 6 s under ASan here: signal it until the socket is up (up to a minute).
for _ in $(seq 6000); do
	[ -S sig.sock ] && break
	kill -USR1 "$pid" 2>/dev/null && kill -HUP "$pid" 2>/dev/null || break
	sleep 0.01
done
for _ in $(seq 200); do "$BUILD/bloomctl" -s "$tmp/sig.sock" version >/dev/null 2>&1 && break; sleep 0.05; done
"$BUILD/bloomctl" -s "$tmp/sig.sock" version >/dev/null 2>&1; ok $? "SIGUSR1 and SIGHUP while the lists load: bloomd lives on"
kill -TERM "$pid"; wait "$pid"; ok $? "and stops cleanly on SIGTERM"

# [output] alerts = once_per_flow: one UDP flow of 1000 datagrams from a listed address gives one
# alert, not a thousand; its replies are the same flow; another flow, or another entry on the
# same flow, alerts on its own.
{
	echo "link en10mb"
	for i in $(seq 1000); do echo "packet src=192.0.2.99 dst=10.0.0.1 proto=udp sport=5000 dport=53 payload=\"q$i\""; done
	echo "packet src=10.0.0.1 dst=192.0.2.99 proto=udp sport=53 dport=5000 payload=\"reply\""
	echo "packet src=192.0.2.99 dst=10.0.0.2 proto=udp sport=5000 dport=53 payload=\"other flow\""
	echo "packet src=192.0.2.99 dst=10.0.0.1 proto=udp sport=5000 dport=53 payload=\"now the evil-sig\""
} > flood.spec
"$BUILD/pcapgen" -o flood.pcap flood.spec
printf 'addr 192.0.2.99\nsig "evil-sig"\n' > flood.list
printf '[entries]\nfile = flood.list\n[output]\nevents = -\nalerts = once_per_flow\n' > flood.conf
out=$("$BUILD/bloomd" -c flood.conf -r flood.pcap)
is "$(grep -c '"alert"' <<<"$out")" 3 "alerts = once_per_flow: 1003 matching packets on two flows give 3 alerts"
is "$(tail -n 1 <<<"$out" | jq -c '[.matched_packets, .alerts_suppressed]')" "[1003,1001]" \
	"every packet still counts as matched; 1001 matches are counted as suppressed"
sed -i 's/^alerts = once_per_flow/alerts = every/' flood.conf
is "$("$BUILD/bloomd" -c flood.conf -r flood.pcap | grep -c '"alert"')" 1003 "alerts = every (the default): one a packet"
# 20,000 flows, each matching twice, in two rounds: exactly 20,000 alerts, the same every run
# (each run draws a new hash secret); the table forgets nothing within its 65,536 pairs.
awk 'BEGIN { print "link en10mb"; for (r = 0; r < 2; r++) for (i = 0; i < 20000; i++)
	printf "packet src=192.0.2.%d dst=10.%d.%d.1 proto=udp sport=%d dport=53\n", i % 200, int(i / 200), i % 7, 1024 + i }' > flows.spec
"$BUILD/pcapgen" -o flows.pcap flows.spec
printf 'net 10.0.0.0/8\n' > flows.list
printf '[entries]\nfile = flows.list\n[output]\nevents = -\nalerts = once_per_flow\n' > flows.conf
for run in 1 2; do
	out=$("$BUILD/bloomd" -c flows.conf -r flows.pcap)
	grep '"alert"' <<<"$out" > "alerts.$run"
	is "$(wc -l < "alerts.$run")" 20000 "once_per_flow: 20,000 flows matching twice give 20,000 alerts (run $run)"
done
cmp -s alerts.1 alerts.2; ok $? "the two runs' events are byte for byte the same"
is "$(tail -n 1 <<<"$out" | jq -c '[.alerts_suppressed, .alert_tables_evicted.flows]')" "[20000,0]" \
	"the second match of each is suppressed; no pair was forgotten"

# Events carry the flow's Community ID, the same both ways (a vector of the spec).
printf 'link en10mb\npacket src=192.168.1.52 dst=8.8.8.8 proto=udp sport=54585 dport=53 payload="q"\npacket src=8.8.8.8 dst=192.168.1.52 proto=udp sport=53 dport=54585 payload="r"\n' > cid.spec
"$BUILD/pcapgen" -o cid.pcap cid.spec
printf 'addr 8.8.8.8\n' > cid.list
printf '[entries]\nfile = cid.list\n[output]\nevents = -\n' > cid.conf
is "$("$BUILD/bloomd" -c cid.conf -r cid.pcap | jq -r 'select(.event_type == "alert") | .community_id' | tr '\n' ' ')" \
	"1:d/FP5EW3wiY1vCndhwleRRKHowQ= 1:d/FP5EW3wiY1vCndhwleRRKHowQ= " "events carry the flow's Community ID, the same both ways"

# More matches than an event reports (64): the rest are counted, not lost silently.
for i in $(seq 1 70); do echo "sig \"payload-$(printf %02d "$i")\""; done > many.list
printf '[entries]\nfile = many.list\n' > many.conf
payload=$(for i in $(seq 1 70); do printf 'payload-%02d' "$i"; done)
printf 'link en10mb\npacket src=10.0.0.1 dst=10.0.0.2 payload="%s"\n' "$payload" > many.pkts
"$BUILD/pcapgen" -o many.pcap many.pkts
out=$("$BUILD/bloomd" -c many.conf -r many.pcap)
is "$(head -n 1 <<<"$out" | jq '.alert.context.matches | length')" 64 "an event reports 64 matches"
is "$(tail -n 1 <<<"$out" | jq .hits_dropped)" 6 "and the statistics count the 6 left out"
# A file name that is not UTF-8 is still named, its odd bytes as '?', not left out or taken
# from the file before it.
cp in.pcap "$(printf 'odd\377.pcap')"
printf '[entries]\nfile = good.list\n[output]\nevents = -\n' > ev.conf
out=$("$BUILD/bloomd" -c ev.conf -r in.pcap -r "$(printf 'odd\377.pcap')" | grep '"alert"')
is "$(jq -r .pcap_filename <<<"$out" | sort | uniq -c | awk '{print $1 " " $2}' | tr '\n' ,)" \
	"2 in.pcap,2 odd?.pcap," "events name a file whose name is not UTF-8"
is "$(jq -r .pcap_cnt <<<"$out" | tr '\n' ,)" "1,2,1,2," "and count its packets"

# Suricata's threshold.config: at most 2 alerts a minute from each source for the flood
# list's signature, and none at all for one address; the rest are counted.
printf '[list flood]\nfile = flood.list\nsid = 5000\n[output]\nthreshold_file = rules.threshold\n' > thr.conf
printf '# limits\nthreshold gen_id 1, sig_id 5000, type limit, track by_src, count 2, seconds 60\n' > rules.threshold
out=$("$BUILD/bloomd" -c thr.conf -r flood.pcap 2>&1)
is "$(grep -c '"alert"' <<<"$out")" 3 "a threshold rule limits the alerts (two sources: 2 + 1)"
is "$(tail -n 1 <<<"$out" | jq .alerts_thresholded)" 1000 "and the statistics count the rest"
printf 'suppress gen_id 1, sig_id 5000, track by_src, ip 192.0.2.0/24\nsuppress gen_id 1, sig_id 5000, track by_dst, ip 192.0.2.99\n' > rules.threshold
is "$("$BUILD/bloomd" -c thr.conf -r flood.pcap 2>/dev/null | grep -c '"alert"')" 0 "suppress rules drop the alerts they cover"
printf 'threshold gen_id 1, sig_id 5000, type sometimes\n' > rules.threshold
"$BUILD/bloomd" -n -c thr.conf 2> err; is $? 1 "a bad threshold file stops the start"
grep -q "rules.threshold:1: type: expected limit, threshold or both, got 'sometimes'" err; ok $? "naming its line"

is "$("$BUILD/bloomd" --version)" "bloomd $(sed -n 's/^#define BLOOMD_VERSION "\(.*\)"/\1/p' "$root/daemon/core/version.h")" \
	"--version says the version"

# Each event's timestamp is its packet's (pcapgen puts packet i at i ms past 2026-01-01T00:00:00Z), across
# seconds: bloomd formats the date and time once a second and the fraction for every event.
{
	echo "link en10mb"
	for i in $(seq 0 2599); do
		if [ $((i % 97)) -eq 0 ]; then src=192.0.2.1; else src=10.0.$((i / 256)).$((i % 256)); fi
		echo "packet src=$src dst=10.0.0.1"
	done
} | "$BUILD/pcapgen" -o stamps.pcap -
printf 'addr 192.0.2.1\n' > stamps.list
printf '[entries]\nfile = stamps.list\n' > stamps.conf
"$BUILD/bloomd" -c stamps.conf -r stamps.pcap 2>/dev/null | jq -c 'select(.event_type == "alert")' > stamps.json
is "$(wc -l < stamps.json) $(jq -r '.timestamp[0:19]' stamps.json | sort -u | tr '\n' ' ')" \
	"27 2026-01-01T00:00:00 2026-01-01T00:00:01 2026-01-01T00:00:02 " "27 events over three seconds"
is "$(jq -r '(.pcap_cnt - 1) as $i | ((1767225600 + ($i / 1000 | floor) | todate | rtrimstr("Z")) + "." +
	((($i % 1000) * 1000 + 1000000) | tostring | .[1:]) + "+0000") as $want | select(.timestamp != $want) |
	"\(.pcap_cnt): \(.timestamp), not \($want)"' stamps.json)" "" "each with its packet's second and microseconds"
# A record whose fraction is past a second (packet 98's, 1.5 million microseconds) keeps its second, the fraction 0,
# one at a time and in batches.
python3 - stamps.pcap bad-stamp.pcap <<'EOF'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
at = 24
for _ in range(97):
    at += 16 + struct.unpack_from("<I", d, at + 8)[0]
struct.pack_into("<I", d, at + 4, 1500000)
open(sys.argv[2], "wb").write(d)
EOF
# The match pcap would otherwise hold a record whose fraction is out of range.
for batch in 1 64; do
	printf '[entries]\nfile = stamps.list\n[capture]\nbatch = %s\n[output]\npcap = %s/bad-stamp-%s.pcap\n' \
		"$batch" "$PWD" "$batch" > bad-stamp.conf
	is "$("$BUILD/bloomd" -c bad-stamp.conf -r bad-stamp.pcap 2>/dev/null |
		jq -r 'select(.event_type == "alert" and .pcap_cnt <= 195) | "\(.pcap_cnt) \(.timestamp[17:26])"' | tr '\n' ' ')" \
		"1 00.000000 98 00.000000 195 00.194000 " "batch = $batch: a fraction past a second is read as 0"
	is "$(python3 -c 'import struct, sys
d = open(sys.argv[1], "rb").read(); at = 24
while at < len(d):
    sec, frac, incl, _ = struct.unpack_from("<IIII", d, at); print(sec, frac, end=" "); at += 16 + incl' \
		"bad-stamp-$batch.pcap" | cut -d' ' -f1-6)" "1767225600 0 1767225600 0 1767225600 194000000" \
		"batch = $batch: so is its record in the match pcap, the records around it as they were"
done

# [log] format = json: each message one eve engine record (done_testing checks them against Suricata's schema).
printf '[entries]\nfile = good.list\n[log]\nformat = json\n' > json.conf
"$BUILD/bloomd" -c json.conf -r in.pcap > /dev/null 2> log.json; ok $? "bloomd runs with [log] format = json"
is "$(jq -r 'select(.event_type == "engine" and .log_level == "Info") | .engine.message' log.json | grep -c "version 1 taken: ")" 1 \
	"its log lines are JSON objects, the message in engine.message"

# Events to a full disk (/dev/full): buffered lines that a flush could not write are counted, not lost silently.
if [ -w /dev/full ]; then
	printf 'addr 192.0.2.1\n' > full.list
	printf '[list full]\nfile = full.list\n[control]\nsocket = %s/full.sock\n[store]\ndir =\n[output]\nevents = /dev/full\n' \
		"$PWD" > full.conf
	printf 'link ipv4\npacket src=192.0.2.1 dst=10.0.0.1 proto=udp payload="a"\npacket src=192.0.2.1 dst=10.0.0.1 proto=udp payload="b"\n' |
		"$BUILD/pcapgen" -o full.pcap -
	"$BUILD/bloomd" -c full.conf 2>full.err &
	fpid=$!
	for _ in $(seq 100); do "$BUILD/bloomctl" -s full.sock version >/dev/null 2>&1 && break; sleep 0.05; done
	"$BUILD/bloomctl" -s full.sock replay "$PWD/full.pcap" --wait >/dev/null
	is "$("$BUILD/bloomctl" -s full.sock --json stats | jq .stats.event_errors)" 2 "events the disk would not take are counted"
	for _ in $(seq 400); do grep -q "events could not be written" full.err && break; sleep 0.05; done
	grep -q "2 events could not be written since the last report (see stats, event_errors): No space left on device" full.err
	ok $? "and the log says how many and why"
	kill "$fpid"; wait "$fpid"
else
	ok 0 "# SKIP no /dev/full here"
	ok 0 "# SKIP no /dev/full here"
fi
done_testing
