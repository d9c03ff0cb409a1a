#!/usr/bin/env bash
# Every capture in ../shared/pcaps (real files written by others, many malformed on purpose)
# replays: the files libpcap reads give exit 0 and the packet count MANIFEST.tsv records;
# the files libpcap refuses give exit 1 and libpcap's own message. Under the sanitizer
# build (make check-asan) this also proves no out-of-bounds read on any of them.
. "$(dirname "$0")/tap.sh"
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
plan $(( $(wc -l <<<"$rows") * 2 ))
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
done_testing
