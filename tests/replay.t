#!/usr/bin/env bash
# Table-driven replay: for each case in tests/replay/cases, write its packets with pcapgen,
# replay them through bloomd with its entry list, and compare the events.
. "$(dirname "$0")/tap.sh"
cases="$(dirname "$0")/replay/cases"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Split the table into tmp/N/{name,list,packets,events}.
awk -v dir="$tmp" '
	/^=== / { n++; section = ""; system("mkdir -p " dir "/" n); print substr($0, 5) > (dir "/" n "/name"); next }
	/^--- / { section = $2; printf "" > (dir "/" n "/" section); next }
	n && section != "" { print >> (dir "/" n "/" section) }
' "$cases"
count=$(ls "$tmp" | wc -l)
plan $((count * 2))

for d in $(ls "$tmp" | sort -n); do
	c="$tmp/$d"
	name=$(cat "$c/name")
	printf '[entries]\nfile = list\n[signatures]\nwindow = 4\n' > "$c/bloomd.conf"
	"$BUILD/pcapgen" -o "$c/in.pcap" "$c/packets"
	"$BUILD/bloomd" -c "$c/bloomd.conf" -r "$c/in.pcap" > "$c/out" 2> "$c/err"
	ok $? "$name: bloomd exits 0"
	jq -c 'select(.event_type == "alert") | del(.timestamp, .event_type, .pcap_filename)' "$c/out" > "$c/got"
	grep -v '^$' "$c/events" > "$c/want"
	diff -u "$c/want" "$c/got" > "$c/diff"
	ok $? "$name: events"
	[ -s "$c/diff" ] && sed 's/^/#   /' "$c/diff" && sed 's/^/#   /' "$c/err"
done
done_testing
