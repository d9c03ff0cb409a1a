#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bench-start.sh - time to protection: bloomd started with one plain list of N IPv4 addresses
# until it answers that the list's last address is held, filter and store alike (its
# control socket opens once the filters are built, before capture starts), against
# `ipset restore` of the same addresses into a hash:ip set, in the same run and network
# namespace; then how long until the offline rounds are in force (stats rebuild.optimised),
# and bloomd's resident memory then and at protection, and its peak (VmHWM) by protection
# and by the rounds' end, less that of a bloomd holding one entry at the same moment, in
# bytes an entry. Each size of BENCH_START_SIZES (1000000) in turn, medians of BENCH_START_RUNS (3);
# every size after the first also as a multiple of the first's times. As root.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
runs=${BENCH_START_RUNS:-3}
sizes=${BENCH_START_SIZES:-1000000}
if [ "$(id -u)" -ne 0 ] || ! command -v ipset >/dev/null; then
	echo "bench-start: skipped (needs root and ipset: tools/install-deps.sh bench)"
	exit 0
fi
NAME=start
pid=
cleanup_more() { [ -z "$pid" ] || kill "$pid" 2>/dev/null || true; }
. "$(dirname "$0")/bench-ns.sh"

conf() { # conf LIST: a configuration with LIST as its one plain list
	printf '[list drop]\nfile = %s\nformat = plain\n[control]\nsocket = %s/b.sock\n[store]\ndir =\n[log]\nlevel = warning\n' \
		"$1" "$tmp" > "$tmp/bloomd.conf"
}
C() { "$build/bloomctl" -s "$tmp/b.sock" --json "$@" 2>/dev/null; }
held() { [ "$(C query addr "$last" | jq -r '.present and .filter')" = true ]; }
optimised() { [ "$(C stats | jq -r '.stats.rebuild.optimised != false')" = true ]; } # null: a bloomd before 0.14 (built offline)
rss_kb() { awk '/^VmRSS:/ { print $2 }' /proc/"$pid"/status; }
peak_kb() { awk '/^VmHWM:/ { print $2 }' /proc/"$pid"/status; }

bloomd_run() { # ms until the last address is held; ms until the offline rounds are in force; RSS (kB) then; RSS and peak when held; peak
	local t0 held_ms held_rss held_peak optimised_ms
	t0=$(now)
	ip netns exec "$ns" "$build/bloomd" -c "$tmp/bloomd.conf" >/dev/null 2>>"$tmp/bloomd.err" &
	pid=$!
	until_true 1200 held
	held_ms=$((($(now) - t0) / 1000000))
	held_rss=$(rss_kb) held_peak=$(peak_kb)
	until_true 3600 optimised
	optimised_ms=$((($(now) - t0) / 1000000))
	sleep 1 # the rebuild's memory handed back
	echo "$held_ms" "$optimised_ms" "$(rss_kb)" "$held_rss" "$held_peak" "$(peak_kb)"
	kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
}
ipset_run() {
	local t0
	t0=$(now)
	in_ns ipset restore -f "$tmp/ipset.restore"
	echo $((($(now) - t0) / 1000000))
	in_ns ipset destroy
}

# A bloomd whose list holds one entry, its rounds done: what the sizes' RSS is counted from.
last=192.0.2.1
echo "$last" > "$tmp/empty.list"
conf "$tmp/empty.list"
read -r _ _ empty empty_held empty_held_peak empty_peak < <(bloomd_run)

first_b= first_o=
for size in $sizes; do
	addresses 0 "$size" > "$tmp/drop.list"
	last=$(tail -n 1 "$tmp/drop.list")
	{ echo "create b4 hash:ip maxelem $((size * 2))"; sed 's/^/add b4 /' "$tmp/drop.list"; } > "$tmp/ipset.restore"
	conf "$tmp/drop.list"
	: > "$tmp/b"; : > "$tmp/i"
	for _ in $(seq "$runs"); do
		bloomd_run >> "$tmp/b"
		ipset_run >> "$tmp/i"
	done
	b=$(cut -d' ' -f1 "$tmp/b" | median) o=$(cut -d' ' -f2 "$tmp/b" | median) i=$(median < "$tmp/i")
	r=$(cut -d' ' -f3 "$tmp/b" | median) rh=$(cut -d' ' -f4 "$tmp/b" | median)
	ph=$(cut -d' ' -f5 "$tmp/b" | median) p=$(cut -d' ' -f6 "$tmp/b" | median)
	per_entry() { echo "($1 - $2) * 1024 / $size" | bc -l; }
	printf 'start with %d addresses (medians of %d): bloomd protecting after %d ms, the offline rounds in force after %d ms; ipset restore %d ms: %.2fx; then %.1f bytes an entry resident (%.1f at protection, its peak by then %.1f, by the rounds'"'"' end %.1f)\n' \
		"$size" "$runs" "$b" "$o" "$i" "$(echo "$b / $i" | bc -l)" "$(per_entry "$r" "$empty")" \
		"$(per_entry "$rh" "$empty_held")" "$(per_entry "$ph" "$empty_held_peak")" "$(per_entry "$p" "$empty_peak")"
	if [ -z "$first_b" ]; then
		first_b=$b first_o=$o first_size=$size
	else
		printf '  %d against %d addresses: protecting %.1fx the time, the rounds %.1fx\n' \
			"$size" "$first_size" "$(echo "$b / $first_b" | bc -l)" "$(echo "$o / $first_o" | bc -l)"
	fi
done
