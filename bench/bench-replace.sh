#!/usr/bin/env bash
# bench-replace.sh - a list's new version while control waits: bloomd holds one plain list
# of N IPv4 addresses (BENCH_REPLACE_SIZE, 1000000) and takes a new version of it, half of
# its addresses new (`bloomctl replace LIST` after its file is rewritten), while
# loopprobe.py asks `version` every 2 ms: the replace's wall time and the longest and 99th
# percentile wait of control meanwhile (the loop's longest stall). As root, `ipset restore`
# of the same new version into a new hash:ip set and its swap, in the same run, for scale.
# Medians of BENCH_REPLACE_RUNS (3).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
runs=${BENCH_REPLACE_RUNS:-3}
size=${BENCH_REPLACE_SIZE:-1000000}
tmp=$(mktemp -d)
pid= probe=
cleanup() {
	[ -z "$probe" ] || kill "$probe" 2>/dev/null || true
	[ -z "$pid" ] || kill "$pid" 2>/dev/null || true
	[ "$(id -u)" -ne 0 ] || ! command -v ipset >/dev/null || ipset destroy bench_replace_$$ 2>/dev/null || true
	[ "$(id -u)" -ne 0 ] || ! command -v ipset >/dev/null || ipset destroy bench_replace_new_$$ 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
now() { date +%s%N; }
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# addresses FIRST COUNT: COUNT addresses from the FIRST-th of 100.0.0.0 on
addresses() {
	awk -v f="$1" -v n="$2" 'BEGIN { for (i = f; i < f + n; i++) printf "%d.%d.%d.%d\n", 100 + int(i / 16777216), int(i / 65536) % 256, int(i / 256) % 256, i % 256 }'
}
addresses 0 "$size" > "$tmp/v1"
addresses $((size / 2)) "$size" > "$tmp/v2"
cat > "$tmp/bloomd.conf" <<C
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

cp "$tmp/v1" "$tmp/drop.list"
"$build/bloomd" -c "$tmp/bloomd.conf" 2>>"$tmp/bloomd.err" &
pid=$!
for _ in $(seq 600); do C stats >/dev/null 2>&1 && break; sleep 0.1; done
: > "$tmp/wall"; : > "$tmp/max"; : > "$tmp/p99"
for r in $(seq "$runs"); do
	[ $((r % 2)) -eq 1 ] && cp "$tmp/v2" "$tmp/drop.list" || cp "$tmp/v1" "$tmp/drop.list"
	python3 "$here/loopprobe.py" "$tmp/b.sock" "$tmp/waits" &
	probe=$!
	sleep 0.2
	t0=$(now)
	C replace drop > "$tmp/reply"
	echo $((($(now) - t0) / 1000000)) >> "$tmp/wall"
	sleep 0.1
	kill "$probe"; wait "$probe" 2>/dev/null || true; probe=
	jq -e '.ok' "$tmp/reply" >/dev/null || { echo "bench-replace: the replace failed: $(cat "$tmp/reply")" >&2; exit 1; }
	sort -g "$tmp/waits" | tail -n 1 >> "$tmp/max"
	sort -g "$tmp/waits" | awk '{ a[NR] = $1 } END { print a[int(NR * 0.99)] }' >> "$tmp/p99"
done
echo "replace of a $size-address list, half of it new, with a state directory: median of $runs"
printf '  bloomctl replace          %6d ms wall; control waited at most %s ms (p99 %s ms)\n' \
	"$(median < "$tmp/wall")" "$(median < "$tmp/max")" "$(median < "$tmp/p99")"
if [ "$(id -u)" -eq 0 ] && command -v ipset >/dev/null; then
	set=bench_replace_$$ new=bench_replace_new_$$
	addresses 0 "$size" | { echo "create $set hash:ip maxelem $((size * 2))"; sed "s/^/add $set /"; } | ipset restore
	: > "$tmp/iwall"
	for _ in $(seq "$runs"); do
		addresses $((size / 2)) "$size" | { echo "create $new hash:ip maxelem $((size * 2))"; sed "s/^/add $new /"; } > "$tmp/ipset.restore"
		t0=$(now)
		ipset restore -f "$tmp/ipset.restore" && ipset swap "$new" "$set" && ipset destroy "$new"
		echo $((($(now) - t0) / 1000000)) >> "$tmp/iwall"
	done
	printf '  ipset restore + swap      %6d ms wall (the kernel set; its restore holds nothing of bloomd)\n' "$(median < "$tmp/iwall")"
fi
