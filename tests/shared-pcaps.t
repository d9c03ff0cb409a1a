#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Every capture in ../shared/pcaps (real files written by others, many malformed on purpose)
# replays: the files libpcap reads give exit 0 and the packet count MANIFEST.tsv records;
# the files libpcap refuses give exit 1 and libpcap's own message. Under the sanitizer
# build (make check-asan) this also proves no out-of-bounds read on any of them.
. "$(dirname "$0")/support/tap.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
pcaps=${BLOOMD_SHARED_PCAPS:-$root/../shared/pcaps}
if [ ! -f "$pcaps/MANIFEST.tsv" ]; then
	echo "1..0 # SKIP no shared captures at $pcaps"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/list" <<'L'
net 0.0.0.0/0
net ::/0
sig "GET / HTTP"
sig hex:0000000000000000
L
printf '[entries]\nfile = list\n[output]\nevents = events.json\npcap = matched.pcap\n' > "$tmp/bloomd.conf"

rows=$(tail -n +2 "$pcaps/MANIFEST.tsv" | awk -F'\t' '{ print $1 "\t" $6 "\t" $16 }')
plan $(( $(wc -l <<<"$rows") * 2 + 1 ))
while IFS=$'\t' read -r file packets result; do
	"$BUILD/bloomd" -c "$tmp/bloomd.conf" -r "$pcaps/$file" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	if [[ "$result" == *"end=EOF"* ]]; then
		is $rc 0 "$file: replays"
		is "$(tail -n 1 "$tmp/out" | jq -r .packets)" "$packets" "$file: $packets packets"
	else
		is $rc 1 "$file: refused (${result%%;*})"
		[ -s "$tmp/err" ] && ! grep -qi "sanitizer" "$tmp/err"
		ok $? "$file: a clear error: $(head -c 120 "$tmp/err")"
	fi
	grep -q "runtime error\|AddressSanitizer" "$tmp/err" && sed 's/^/#   /' "$tmp/err" | head -20
done <<<"$rows"

# tcpdump's capture of an IPv4 header with total length 0 (as offloading NICs record):
# its listed source is still checked.
printf 'addr 10.25.132.11\n' > "$tmp/zero.list"
printf '[entries]\nfile = zero.list\n' > "$tmp/zero.conf"
is "$("$BUILD/bloomd" -c "$tmp/zero.conf" -r "$pcaps/tcpdump__icmp-length-zero.pcapng" 2>/dev/null |
	jq -r 'select(.event_type == "alert") | .alert.context.matches[0].entry')" 10.25.132.11 \
	"icmp-length-zero.pcapng: the listed source of a total length 0 header alerts"
done_testing
