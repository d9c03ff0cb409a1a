#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Packets checked in batches ([capture] batch = 64) give what they give one at a time
# (batch = 1): the same events, byte for byte, and the same counts. On the replay cases'
# packets and lists all in one capture, a random capture whose nets match across batches,
# and the shared captures (real files written by others) with a list that matches every
# packet. Once per SIMD level. batch = auto (the default) batches 64 at a time whatever the
# address filter's size, and gives the same again.
. "$(dirname "$0")/support/tap.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
pcaps=${BLOOMD_SHARED_PCAPS:-$root/../shared/pcaps}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
levels=(scalar avx2 avx512)
plan $((${#levels[@]} * 3 * 3 + 3 + 8))

# The replay cases' Ethernet packets, ten times over, and all their lists as one.
awk '
	/^=== / { section = ""; next }
	/^--- / { section = $2; next }
	section == "list" && NF { print > "'"$tmp"'/cases.list" }
	section == "packets" && /^link / { eth = ($2 == "en10mb") }
	section == "packets" && eth && /^packet / { print > "'"$tmp"'/cases.packets" }
' "$root/tests/replay/cases"
{
	echo "link en10mb"
	for _ in $(seq 10); do cat "$tmp/cases.packets"; done
} > "$tmp/cases.spec"
"$BUILD/pcapgen" -o "$tmp/cases.pcap" "$tmp/cases.spec"

# Random traffic; its listed pairs, and nets that hold some of every batch's packets.
"$BUILD/pcapgen" -o "$tmp/random.pcap" --random --packets 20000 --entries 2000 --list "$tmp/random.list" \
	--payload 48 --seed 7
printf 'net 10.0.0.0/13\nnet 198.18.0.0/19\naddr 10.0.0.1\n' >> "$tmp/random.list"
printf 'net 10.0.0.0/15\n' > "$tmp/random-pass.list"

# The shared captures, each on its own: every address and a payload pattern listed.
printf 'net 0.0.0.0/0\nnet ::/0\nsig "GET / HTTP"\nsig hex:0000000000000000\n' > "$tmp/shared.list"

# conf NAME LISTS BATCH [MEMORY]: a configuration with these lists (a pass list when named
# *-pass.list); batch default: the key left out.
conf() {
	{
		[ "$3" = default ] || printf '[capture]\nbatch = %s\n' "$3"
		[ -n "$4" ] && printf '[filter]\nmemory = %s\n' "$4"
		printf '[signatures]\nwindow = 4\n'
		for l in $2; do
			printf '[list %s]\nfile = %s\n' "${l%.list}" "$l"
			case $l in *-pass.list) printf 'action = pass\n' ;; esac
		done
	} > "$tmp/$1.conf"
}

# Counts that do not depend on when the background rounds swapped in their filter:
# the filters' false positives do, so they, the filters and the process are left out
# (and the batch, which differs).
counts() {
	tail -n 1 "$1" | jq -S 'del(.filters, .process, .rebuild, .uptime_seconds, .reload, .lists[].loaded, .packet_batch) |
		.kinds |= map_values(del(.filter_positives, .unconfirmed, .fpr_measured))'
}

# same LEVEL NAME PCAP LISTS [BATCH [MEMORY]]: the capture replayed one at a time and in batches.
same() {
	local level=$1 name=$2 pcap=$3 lists=$4
	conf one "$lists" 1 "$6"
	conf many "$lists" "${5:-64}" "$6"
	(cd "$tmp" && BLOOMD_SIMD=$level "$BUILD/bloomd" -c one.conf -r "$pcap" > one.out 2> one.err)
	(cd "$tmp" && BLOOMD_SIMD=$level "$BUILD/bloomd" -c many.conf -r "$pcap" > many.out 2> many.err)
	local alerts
	alerts=$(grep -c '"event_type":"alert"' "$tmp/one.out")
	head -n -1 "$tmp/one.out" > "$tmp/one.events"
	head -n -1 "$tmp/many.out" > "$tmp/many.events"
	[ "$alerts" -gt 0 ]
	ok $? "$name [$level]: $alerts alerts one at a time"
	cmp -s "$tmp/one.events" "$tmp/many.events"
	ok $? "$name [$level]: the same events in batches" ||
		diff "$tmp/one.events" "$tmp/many.events" | head -5 | sed 's/^/#   /'
	diff <(counts "$tmp/one.out") <(counts "$tmp/many.out") > "$tmp/counts.diff"
	ok $? "$name [$level]: the same counts" || head -20 "$tmp/counts.diff" | sed 's/^/#   /'
}

# The level BLOOMD_SIMD=$1 gives the address filter (a level the CPU lacks is capped).
kernel() {
	printf 'addr 192.0.2.1\n' > "$tmp/k.list"
	printf '[entries]\nfile = k.list\n' > "$tmp/k.conf"
	(cd "$tmp" && BLOOMD_SIMD=$1 "$BUILD/bloomd" -c k.conf -r cases.pcap 2>/dev/null | tail -n 1 |
		jq -r .filters.addresses.kernel)
}

shared_pcap() { # the shared captures as one pcap of Ethernet frames (pcapng and other links left out)
	local files=()
	[ -f "$pcaps/MANIFEST.tsv" ] || return 1
	while IFS=$'\t' read -r file link result; do
		[[ "$result" == *end=EOF* && "$link" == "EN10MB(1)" && "$file" == *.pcap ]] && files+=("$pcaps/$file")
	done < <(tail -n +2 "$pcaps/MANIFEST.tsv" | awk -F'\t' '{ print $1 "\t" $5 "\t" $16 }')
	[ ${#files[@]} -gt 0 ] && python3 - "$tmp/shared.pcap" "${files[@]}" <<'PY'
import struct, sys
out, files = sys.argv[1], sys.argv[2:]
with open(out, "wb") as o:
    o.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 262144, 1))
    for f in files:
        d = open(f, "rb").read()
        endian = "<" if d[:4] == b"\xd4\xc3\xb2\xa1" else ">"
        at = 24
        while at + 16 <= len(d):
            sec, usec, incl, orig = struct.unpack(endian + "IIII", d[at:at + 16])
            if at + 16 + incl > len(d):
                break
            o.write(struct.pack("<IIII", sec, usec, incl, orig) + d[at + 16:at + 16 + incl])
            at += 16 + incl
PY
}

for level in "${levels[@]}"; do
	if [ "$(kernel "$level")" != "$level" ]; then
		skip 9 "this CPU has no $level"
		continue
	fi
	same "$level" "replay cases" cases.pcap cases.list
	same "$level" "random traffic with a pass list" random.pcap "random.list random-pass.list"
	if shared_pcap; then
		same "$level" "shared captures" shared.pcap shared.list
	else
		skip 3 "no shared captures at $pcaps"
	fi
done

# auto: batches of 64 for a filter the L2 holds and for one well past it.
batch_of() { tail -n 1 "$tmp/$1" | jq -r '"\(.packet_batch) \(.filters.addresses.bytes)"'; }
same avx2 "auto, a filter of 64 KiB" random.pcap random.list default 64KiB
read -r b bytes <<<"$(batch_of many.out)"
[ "$b" = 64 ] && [ "$bytes" -le $((64 << 10)) ]; ok $? "auto: a $bytes-byte filter: batches of 64 ($b)"
same avx2 "auto, a filter of 64 MiB" random.pcap random.list default 64MiB
read -r b bytes <<<"$(batch_of many.out)"
[ "$b" = 64 ] && [ "$bytes" -gt $((32 << 20)) ]; ok $? "auto: a $bytes-byte filter: batches of 64 ($b)"

# The key's bounds, refused with the file and the line.
for bad in 0 65; do
	printf '[capture]\nbatch = %s\n' "$bad" > "$tmp/bad.conf"
	"$BUILD/bloomd" -n -c "$tmp/bad.conf" > /dev/null 2> "$tmp/bad.err"
	[ $? -ne 0 ] && grep -q "bad.conf:2: batch: expected a whole number from 1 to 64 or 'auto', got '$bad'" "$tmp/bad.err"
	ok $? "batch = $bad refused: $(head -c 120 "$tmp/bad.err")"
done
printf '[capture]\nbatch = auto\n' > "$tmp/good.conf"
"$BUILD/bloomd" -n -c "$tmp/good.conf" > /dev/null 2>&1
ok $? "batch = auto taken"
done_testing
