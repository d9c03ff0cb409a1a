#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Table-driven replay: for each case in tests/replay/cases, write its packets with pcapgen,
# replay them through bloomd with its entry list, and compare the events: once per SIMD
# level (BLOOMD_SIMD), a level this CPU lacks reported as skipped.
. "$(dirname "$0")/support/tap.sh"
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
levels=(scalar neon avx2 avx512)
plan $((count * 2 * ${#levels[@]}))

# The kernels bloomd runs with BLOOMD_SIMD=$1: the filters' and the signature scan's.
kernels() {
	printf 'sig "abcd"\n' > "$tmp/k.list"
	printf '[entries]\nfile = k.list\n[signatures]\nwindow = 4\n' > "$tmp/k.conf"
	printf 'link en10mb\npacket src=192.0.2.1 dst=192.0.2.2\n' | "$BUILD/pcapgen" -o "$tmp/k.pcap" -
	BLOOMD_SIMD=$1 "$BUILD/bloomd" -c "$tmp/k.conf" -r "$tmp/k.pcap" | tail -n 1 |
		jq -r '[.filters.signatures.kernel, .filters.signatures.scan_kernel] | join(" ")'
}

for level in "${levels[@]}"; do
	# The signature scan has no NEON kernel: with neon it scans one position at a time.
	want="$level $level"
	[ "$level" = neon ] && want="neon scalar"
	if [ "$(kernels "$level")" != "$want" ]; then
		for _ in $(seq $((count * 2))); do tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP this CPU has no $level"; done
		continue
	fi
	for d in $(ls "$tmp" | grep -E '^[0-9]+$' | sort -n); do
		c="$tmp/$d"
		name="$(cat "$c/name") [$level]"
		printf '[entries]\nfile = list\n[signatures]\nwindow = 4\n' > "$c/bloomd.conf"
		"$BUILD/pcapgen" -o "$c/in.pcap" "$c/packets"
		BLOOMD_SIMD=$level "$BUILD/bloomd" -c "$c/bloomd.conf" -r "$c/in.pcap" > "$c/out" 2> "$c/err"
		ok $? "$name: bloomd exits 0"
		jq -c 'select(.event_type == "alert") | .matches = .alert.context.matches | del(.timestamp, .event_type, .pcap_filename, .host, .community_id, .flow_id, .direction, .alert) | .matches |= map(del(.list, .lists))' "$c/out" > "$c/got"
		grep -v '^$' "$c/events" > "$c/want"
		diff -u "$c/want" "$c/got" > "$c/diff"
		ok $? "$name: events"
		[ -s "$c/diff" ] && sed 's/^/#   /' "$c/diff" && sed 's/^/#   /' "$c/err"
	done
done
done_testing
