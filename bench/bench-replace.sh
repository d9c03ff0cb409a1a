#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bench-replace.sh - a list's new version while control waits: bloomd holds one plain list
# of N IPv4 addresses (BENCH_REPLACE_SIZE, 1000000) and takes a new version of it, half of
# its addresses new (`bloomctl replace LIST` after its file is rewritten), while
# loopprobe.py asks `version` every 2 ms: the replace's wall time and the longest and 99th
# percentile wait of control meanwhile (the loop's longest stall); then the same addresses
# added as local entries and `bloomctl save`'s wall time and control's waits (a child writes
# the snapshot). `ipset restore` of the
# same new version into a new hash:ip set and its swap, in the same run and network
# namespace, for scale. Medians of BENCH_REPLACE_RUNS (3). As root. BENCH_REPLACE_MODE=xdp:
# the same with bloomd in mode = xdp on one end of a veth pair (the program in generic mode), so
# each version also goes into the XDP program's table (ipset's figure is left out: it is the
# same).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
runs=${BENCH_REPLACE_RUNS:-3}
size=${BENCH_REPLACE_SIZE:-1000000}
mode=${BENCH_REPLACE_MODE:-passive}
if [ "$(id -u)" -ne 0 ] || ! command -v ipset >/dev/null; then
	echo "bench-replace: skipped (needs root and ipset: tools/install-deps.sh bench)"
	exit 0
fi
NAME=replace
pid= probe=
cleanup_more() { for p in $probe $pid; do kill "$p" 2>/dev/null || true; done; }
. "$here/bench-ns.sh"

addresses 0 "$size" > "$tmp/v1"
addresses $((size / 2)) "$size" > "$tmp/v2"
: > "$tmp/bloomd.conf"
if [ "$mode" = xdp ]; then
	in_ns ip link add xdp0 type veth peer name xdp1 && in_ns ip link set xdp0 up && in_ns ip link set xdp1 up
	printf '[capture]\nmode = xdp\ninterface = xdp0\nxdp_mode = generic\n[output]\nevents =\n' > "$tmp/bloomd.conf"
fi
cat >> "$tmp/bloomd.conf" <<C
[list drop]
file = $tmp/drop.list
format = plain
[control]
socket = $tmp/b.sock
[store]
dir = $tmp/state
[log]
level = warning
C
mkdir -p "$tmp/state"
C() { "$build/bloomctl" -s "$tmp/b.sock" --json "$@"; }
percentile() { sort -g | awk -v p="$1" '{ a[NR] = $1 } END { i = int(NR * p); if (i < 1) i = 1; print a[i] }'; }

cp "$tmp/v1" "$tmp/drop.list"
ip netns exec "$ns" "$build/bloomd" -c "$tmp/bloomd.conf" 2>>"$tmp/bloomd.err" &
pid=$!
until_true 120 C stats >/dev/null 2>&1
# probed COMMAND...: one run of bloomctl COMMAND while loopprobe.py asks every 2 ms; its wall
# time and control's longest and 99th percentile wait appended to wall, max and p99.
probed() {
	python3 "$here/loopprobe.py" "$tmp/b.sock" "$tmp/waits" &
	probe=$!
	sleep 0.2
	local t0
	t0=$(now)
	C "$@" > "$tmp/reply"
	echo $((($(now) - t0) / 1000000)) >> "$tmp/wall"
	sleep 0.1
	kill "$probe"; wait "$probe" 2>/dev/null || true; probe=
	jq -e '.ok' "$tmp/reply" >/dev/null || { echo "bench-replace: $1 failed: $(cat "$tmp/reply")" >&2; exit 1; }
	percentile 1 < "$tmp/waits" >> "$tmp/max"
	percentile 0.99 < "$tmp/waits" >> "$tmp/p99"
}
: > "$tmp/wall"; : > "$tmp/max"; : > "$tmp/p99"
for r in $(seq "$runs"); do
	if [ $((r % 2)) -eq 1 ]; then cp "$tmp/v2" "$tmp/drop.list"; else cp "$tmp/v1" "$tmp/drop.list"; fi
	probed replace drop
done
echo "replace of a $size-address list, half of it new, with a state directory, mode $mode: medians of $runs"
printf '  bloomctl replace          %6d ms wall; control waited at most %s ms (p99 %s ms)\n' \
	"$(median < "$tmp/wall")" "$(median < "$tmp/max")" "$(median < "$tmp/p99")"
[ "$mode" = passive ] || exit 0 # the kernel set's figure is the same in every mode: given once
# The same addresses as local entries, in the snapshot: bloomctl save while control waits.
sed 's/^/addr /' "$tmp/v1" | "$build/bloomctl" -s "$tmp/b.sock" load - >/dev/null
: > "$tmp/wall"; : > "$tmp/max"; : > "$tmp/p99"
for _ in $(seq "$runs"); do
	probed save
done
printf '  bloomctl save (%d local)  %6d ms wall; control waited at most %s ms (p99 %s ms)\n' \
	"$size" "$(median < "$tmp/wall")" "$(median < "$tmp/max")" "$(median < "$tmp/p99")"
addresses 0 "$size" | { echo "create b4 hash:ip maxelem $((size * 2))"; sed 's/^/add b4 /'; } | in_ns ipset restore
addresses $((size / 2)) "$size" | { echo "create b4new hash:ip maxelem $((size * 2))"; sed 's/^/add b4new /'; } > "$tmp/ipset.restore"
: > "$tmp/iwall"
for _ in $(seq "$runs"); do
	t0=$(now)
	in_ns ipset restore -f "$tmp/ipset.restore" && in_ns ipset swap b4new b4 && in_ns ipset destroy b4new
	echo $((($(now) - t0) / 1000000)) >> "$tmp/iwall"
done
in_ns ipset destroy
printf '  ipset restore + swap      %6d ms wall (the kernel set)\n' "$(median < "$tmp/iwall")"
