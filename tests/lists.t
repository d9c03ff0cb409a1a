#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Entry lists end to end: feeds in their own formats, labels in alerts, reload dropping what
# left a feed, a refused version keeping the old one, replace and flush, lists kept across
# a restart, and del leaving what a feed still holds.
. "$(dirname "$0")/support/tap.sh"
. "$(dirname "$0")/support/daemon.sh"
plan 71
tmp=$(mktemp -d)
chmod 755 "$tmp"
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
here=$(cd "$(dirname "$0")" && pwd)
cd "$tmp" || exit 1
sock=$tmp/ctl.sock

# Feeds as their publishers write them.
cat > drop.txt <<'F'
; Spamhaus DROP List 2026/11/23 - (c) 2026 The Spamhaus Project SLU
; Last-Modified: Mon, 23 Nov 2026 12:00:00 GMT
198.51.100.0/24 ; SBL000001
203.0.113.128/25 ; SBL000002
F
cat > tor.netset <<'F'
#
# tor_exits
#
185.220.101.0/24
192.0.2.77
F
cat > blocklist.ipset <<'F'
create blocklist hash:ip family inet hashsize 1024 maxelem 65536
add blocklist 192.0.2.10
add blocklist 192.0.2.11 timeout 600
F
cat > iocs.csv <<'F'
first_seen,dst_ip,malware
2026-11-01,192.0.2.20,"Emotet, epoch 5"
2026-11-02,2001:db8::20,QakBot
F
port=$(free_port)
# An HTTP request by hand (no curl needed): the whole response.
http_get() {
	exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
	printf '%s %s HTTP/1.0\r\nHost: localhost\r\n\r\n' "${2:-GET}" "$1" >&3
	timeout 5 cat <&3
	exec 3<&-
}
cat > bloomd.conf <<C
[list spamhaus-drop]
file = drop.txt
format = drop
category = hijacked-netblock
severity = 1
sid = 2400001
signature = Spamhaus DROP listed network
[list tor]
file = tor.netset
format = netset
category = anonymizer
severity = 3
[list blocklist]
file = blocklist.ipset
format = ipset
[list iocs]
file = iocs.csv
format = csv:dst_ip
category = malware
[list pushed]
format = plain
category = scanner
[list labelled]
severity = 3
[filter]
auto_rebuild = no
[control]
socket = $sock
[store]
dir = $tmp/state
[output]
events = $tmp/events.json
[metrics]
listen = 127.0.0.1:$port
C
umask 077 # as systemd's UMask=0077: [output] filemode still gives the events file its mode
start; ok $? "bloomd starts on five lists"
umask 022

lists=$(C --json lists)
is "$(jq -r '[.lists[] | "\(.name)=\(.entries)"] | join(" ")' <<<"$lists")" \
	"local=0 spamhaus-drop=2 tor=2 blocklist=2 iocs=2 pushed=0 labelled=0" "each format loads as its publisher writes it"
is "$(jq -r '.lists[] | select(.name == "iocs") | .format' <<<"$lists")" "csv:dst_ip" "lists says the format"
C query addr 192.0.2.77 >/dev/null; is $? 0 "a netset's address is an entry"
C query addr 185.220.101.77 > out; is $? 1 "query says an address under a net is no entry itself"
grep -q "but covered by net 185.220.101.0/24" out; ok $? "but says which net covers it"
is "$(C match 185.220.101.77)" "net 185.220.101.0/24 (list tor)" "match names the entry and its list"

# Prometheus scrapes /metrics over HTTP; per-list gauges are there.
http_get /metrics | tr -d '\r' > scrape
head -n 1 scrape | grep -q "^HTTP/1.[01] 200"; ok $? "GET /metrics answers 200"
grep -qi "^Content-Type: text/plain; version=0.0.4" scrape; ok $? "in Prometheus's text format"
grep -q '^bloomd_list_entries{list="tor"} 2$' scrape; ok $? "with the entries of each list"
sed '1,/^$/d' scrape > metrics.txt
if command -v promtool >/dev/null; then
	promtool check metrics < metrics.txt > promtool.out 2>&1; ok $? "promtool check metrics finds nothing to say in a scrape"
	sed 's/^/#   /' promtool.out
else
	tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP no promtool (Debian's prometheus; tools/install-deps.sh test)"
fi
grep -q '^# TYPE bloomd_list_matches_total counter$' metrics.txt; ok $? "each list's matches are a counter"
start_time=$(awk '/^process_start_time_seconds / { print $2 }' metrics.txt)
grep -qE '^process_resident_memory_bytes [1-9]' metrics.txt && grep -qE '^process_open_fds [1-9]' metrics.txt &&
	[ "${start_time%.*}" -gt $(($(date +%s) - 120)) ]
ok $? "and the process's own: process_start_time_seconds, process_resident_memory_bytes, process_open_fds"
http_get /state | head -n 1 | grep -q " 404 "; ok $? "any other path is a 404"
http_get /metrics POST | head -n 1 | grep -q " 405 "; ok $? "any other method a 405"

# An alert carries its list's labels, the most severe list's when several hold the entry.
printf 'link en10mb\npacket src=198.51.100.9 dst=10.0.0.1 proto=tcp sport=4444 dport=22\npacket src=10.0.0.2 dst=192.0.2.20 proto=udp sport=5000 dport=53\n' |
	"$BUILD/pcapgen" -o a.pcap -
C replay a.pcap --wait >/dev/null; ok $? "replay"
alert=$(jq -c 'select(.pcap_cnt == 1) | .alert | del(.context)' events.json)
is "$alert" '{"action":"allowed","gid":1,"signature_id":2400001,"rev":1,"signature":"Spamhaus DROP listed network","category":"hijacked-netblock","severity":1,"source":{"ip":"198.51.100.9","port":4444},"target":{"ip":"10.0.0.1","port":22}}' \
	"the alert object is the list's, its source the listed side"
is "$(jq -c 'select(.pcap_cnt == 2) | .alert | [.source, .target]' events.json)" '[{"ip":"192.0.2.20","port":53},{"ip":"10.0.0.2","port":5000}]' \
	"a listed destination is the alert's source, the client that contacted it its target"
is "$(jq -r 'select(.pcap_cnt == 2) | "\(.alert.category) \(.alert.context.matches[0].list) \(.direction)"' events.json)" "malware iocs to_server" \
	"each match names its list"
is "$(http_get /metrics | grep -E '^bloomd_list_matches_total\{list="(spamhaus-drop|iocs|tor)"\}' | tr -d '\r' | sort | tr '\n' ' ')" \
	'bloomd_list_matches_total{list="iocs"} 1 bloomd_list_matches_total{list="spamhaus-drop"} 1 bloomd_list_matches_total{list="tor"} 0 ' \
	"and each list's matches rise with them"
is "$(jq -r 'select(.pcap_cnt == 1) | "\(.host) \(.timestamp)"' events.json)" "$(hostname) 2026-01-01T00:00:00.000000+0000" \
	"an event names its sensor (the host name) and its time as Suricata writes it"
"$here/support/eve-check.py" events.json; ok $? "every event passes Suricata's own eve schema"
jq -c '.matches = .alert.context.matches' events.json > top-matches.json
"$here/support/eve-check.py" top-matches.json > /dev/null; is $? 1 "and one with its matches at the top does not"
rm top-matches.json
is "$(stat -c %a events.json)" 640 "the events file is 0640 ([output] filemode), whatever the umask"
# An entry several lists hold: its match names every one of them.
C add addr 192.0.2.10 >/dev/null
printf 'link en10mb\npacket src=192.0.2.10 dst=10.0.0.1 proto=udp sport=5 dport=6\n' | "$BUILD/pcapgen" -o two.pcap -
C replay two.pcap --wait >/dev/null
is "$(jq -c --arg f "$tmp/two.pcap" 'select(.pcap_filename == $f) | .alert.context.matches[0].lists' events.json)" '["local","blocklist"]' \
	"an entry in two lists: its match names both"
C del addr 192.0.2.10 >/dev/null

# A feed changes: what left it leaves the filter at reload; what is new comes in.
printf '198.51.100.0/24 ; SBL000001\n192.0.2.200/32 ; SBL000003\n' > drop.txt
C reload >/dev/null; is $? 0 "reload"
C query net 203.0.113.128/25 >/dev/null; is $? 1 "an entry that left the feed is gone after reload"
C query addr 192.0.2.200 >/dev/null; is $? 0 "a new one is there"
is "$(C --json lists | jq -r '.lists[] | select(.name == "spamhaus-drop") | "\(.version) \(.last_load.added) \(.last_load.removed)"')" \
	"2 1 1" "the list's version, with what came and went"

# A truncated download: mostly bad, refused whole; the previous version stays.
printf '<html>\n<body>503 Service Unavailable</body>\n</html>\n' > tor.netset
C reload > out 2> errout; is $? 2 "a reload with a refused list exits 2"
grep -q "list tor: .*3 of its 3 entry lines are bad" errout; ok $? "and says which list, and why"
C query addr 192.0.2.77 >/dev/null; is $? 0 "the refused list keeps its previous version"
grep -q "list tor: .*tor.netset:2: .*, skipped: '<body>503 Service Unavailable</body>'" err
ok $? "each bad line is logged with its number and its text"
# One bad line in twenty is within max_bad: the rest is taken.
{ for i in $(seq 1 19); do echo "192.0.2.$((100 + i))"; done; echo "garbage"; } > tor.netset
C reload >/dev/null; is $? 0 "a list with a few bad lines is taken"
C query addr 192.0.2.77 >/dev/null; is $? 1 "its old entries are gone"
C query addr 192.0.2.119 >/dev/null; is $? 0 "its new ones are there"

# A list without a file is filled with replace; its old version goes whole.
printf '192.0.2.50\n192.0.2.51\n' > push1
C replace pushed push1 > out; is $? 0 "replace fills a list without a file"
grep -q "2 entries read, 2 added, 0 removed" out; ok $? "and says what it did"
printf '192.0.2.51\n192.0.2.52\n' > push2
C replace pushed push2 >/dev/null
is "$(C list --list pushed | sort | tr '\n' ' ')" "addr 192.0.2.51 addr 192.0.2.52 " "replace swaps the list's version"
C replace tor push1 2> out; is $? 2 "replace FILE on a list with a file is refused"
grep -q "list tor reads .*tor.netset" out; ok $? "saying where its file is"
C replace nosuch push1 2>/dev/null; is $? 2 "replace on an unknown list is refused"

# Entries carry their own labels inline, over their list's.
printf 'addr 192.0.2.60 category=command-and-control severity=1\naddr 192.0.2.61\n' > labelled.list
C replace labelled labelled.list >/dev/null; is $? 0 "a list with labelled entries"
printf 'link en10mb\npacket src=10.0.0.5 dst=192.0.2.60 proto=tcp sport=40000 dport=443\npacket src=10.0.0.5 dst=192.0.2.61 proto=tcp sport=40001 dport=443\n' |
	"$BUILD/pcapgen" -o l.pcap -
labelled_alerts() {
	C replay l.pcap --wait >/dev/null
	jq -r --arg f "$tmp/l.pcap" 'select(.pcap_filename == $f) | "\(.alert.category)/\(.alert.severity)"' events.json | tail -n 2 | tr '\n' ' '
}
is "$(labelled_alerts)" "command-and-control/1 /3 " "an entry's own labels go into its alert, the list's where it has none"
# Two labelled entries in one packet, the more severe matched first: the alert keeps its labels.
printf 'addr 192.0.2.60 category=command-and-control severity=1\naddr 192.0.2.62 category=scanner severity=3\n' > labelled2.list
C replace labelled labelled2.list >/dev/null
printf 'link en10mb\npacket src=192.0.2.60 dst=192.0.2.62 proto=udp sport=5 dport=6\n' | "$BUILD/pcapgen" -o l2.pcap -
C replay l2.pcap --wait >/dev/null
is "$(jq -r --arg f "$tmp/l2.pcap" 'select(.pcap_filename == $f) | "\(.alert.category)/\(.alert.severity)"' events.json)" \
	command-and-control/1 "an alert on two labelled entries carries the most severe one's category"
C replace labelled labelled.list >/dev/null

# The local list and the feeds hold entries together.
C add addr 192.0.2.51 >/dev/null
is "$(C --json query addr 192.0.2.51 | jq -c .held_by)" '["local","pushed"]' "query names every list that holds an entry"
C del addr 192.0.2.51 > out; is $? 0 "del takes the local hold"
grep -q "still held by (list pushed)" out; ok $? "and says which lists still hold it"
C query addr 192.0.2.51 >/dev/null; is $? 0 "so it stays, as the feed has it"
C del addr 192.0.2.52 >/dev/null; is $? 1 "del of an entry only a feed holds: absent from the local list"
C query addr 192.0.2.52 >/dev/null; is $? 0 "and it stays"

# eve's rev is the list's revision: a version the same as the last leaves it, a change raises it.
rev() { # the rev of the alert on 192.0.2.60, in labelled.list and labelled2.list alike
	C replay l.pcap --wait >/dev/null
	jq -r --arg f "$tmp/l.pcap" 'select(.pcap_filename == $f and .dest_ip == "192.0.2.60") | .alert.rev' events.json | tail -n 1
}
before=$(rev)
C replace labelled labelled.list >/dev/null
is "$(rev)" "$before" "a version the same as the last leaves the alerts' rev as it was"
C replace labelled labelled2.list >/dev/null
is "$(rev)" "$((before + 1))" "a version that changes the entries raises it"
C replace labelled labelled.list >/dev/null

# The events' shape and mode from [output], applied at a reload.
cp bloomd.conf lists.conf
sed -i "s|^events = .*|events = $tmp/extended-events.json\nsensor_name = sensor-a\neve = extended\nfilemode = 0604|" bloomd.conf
C reload >/dev/null; is $? 0 "a reload takes [output] eve, sensor_name and filemode"
C replay two.pcap --wait >/dev/null
is "$(jq -r '"\(.host) \(.matches[0].entry) \(.alert.context.matches[0].entry)"' extended-events.json)" "sensor-a 192.0.2.10 192.0.2.10" \
	"eve = extended puts the matches at the top too; the host is sensor_name"
cp extended-events.json ext.json; "$here/support/eve-check.py" ext.json >/dev/null; is $? 1 "which Suricata's schema refuses"
rm ext.json
is "$(stat -c %a extended-events.json)" 604 "and the file has filemode's mode"
cp lists.conf bloomd.conf
C reload >/dev/null

C flush blocklist > out; is $? 0 "flush"
grep -q "2 entries left the list" out; ok $? "flush says how many left"
C query addr 192.0.2.10 >/dev/null; is $? 1 "a flushed list's entries are gone"

# Across a restart: a pushed list comes back from the state directory; a feed whose file
# cannot be read starts from its last version there.
C add addr 192.0.2.99 >/dev/null
stop; ok $? "bloomd stops"
mv iocs.csv iocs.csv.away
start; ok $? "bloomd starts with a list's file missing"
C query addr 192.0.2.52 >/dev/null; is $? 0 "a pushed list survives a restart"
C query addr 2001:db8::20 >/dev/null; is $? 0 "a feed whose file is gone starts from its kept version"
C query addr 192.0.2.99 >/dev/null; is $? 0 "the local list survives a restart"
is "$(rev)" "$((before + 2))" "a list's rev survives a restart when its entries are the same"
C query addr 192.0.2.10 >/dev/null; is $? 0 "a flushed feed is read again from its file at start"
is "$(labelled_alerts)" "command-and-control/1 /3 " "entries keep their own labels across a restart"

# CrowdSec's decisions as cscli prints them: a ban is an entry; one whose duration has run out is not.
cat > cs.json <<'J'
[{"id":7,"decisions":[{"duration":"3h59m51s","origin":"crowdsec","scenario":"crowdsecurity/ssh-bf","scope":"Ip","type":"ban","value":"192.0.2.120"},
 {"duration":"-2m1s","scope":"Ip","type":"ban","value":"192.0.2.121"},{"duration":"4h","scope":"Country","type":"ban","value":"XX"},
 {"duration":"2s","scope":"Ip","type":"ban","value":"192.0.2.122"}]}]
J
printf '[list crowdsec]\nfile = cs.json\nformat = crowdsec-json\n' >> bloomd.conf
C reload >/dev/null
is "$(C query addr 192.0.2.120 >/dev/null; echo $?)/$(C query addr 192.0.2.121 >/dev/null; echo $?)" 0/1 \
	"a reload takes a crowdsec-json list: its ban is an entry, a run-out one is not"
grep -q '^addr 192.0.2.122 category=crowdsecurity_ssh-bf expires=\|^addr 192.0.2.122 expires=' state/lists/crowdsec; ok $? "its kept version says when each ban ends"
for _ in $(seq 200); do C query addr 192.0.2.122 >/dev/null || break; sleep 0.1; done
is "$(C query addr 192.0.2.122 >/dev/null; echo $?)/$(C query addr 192.0.2.120 >/dev/null; echo $?)" 1/0 \
	"a ban leaves the list when its duration ends, the others stay"
stop
done_testing
