#!/usr/bin/env bash
# bench-start.sh - time to protection: bloomd started with one plain list of N IPv4 addresses
# (BENCH_START_SIZE, 1000000) until it answers that the list's last address is held, filter
# and store alike (its control socket opens once the filters are built, before capture
# starts), against `ipset restore` of the same addresses into a hash:ip set, in the same run
# and network namespace; then how long until the offline rounds are in force (stats
# rebuild.optimised). Medians of BENCH_START_RUNS (3). As root.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
runs=${BENCH_START_RUNS:-3}
size=${BENCH_START_SIZE:-1000000}
if [ "$(id -u)" -ne 0 ] || ! command -v ipset >/dev/null; then
	echo "bench-start: skipped (needs root and ipset: tools/install-deps.sh bench)"
	exit 0
fi
NAME=start
pid=
cleanup_more() { [ -z "$pid" ] || kill "$pid" 2>/dev/null || true; }
. "$(dirname "$0")/bench-ns.sh"

addresses 0 "$size" > "$tmp/drop.list"
last=$(tail -n 1 "$tmp/drop.list")
{ echo "create b4 hash:ip maxelem $((size * 2))"; sed 's/^/add b4 /' "$tmp/drop.list"; } > "$tmp/ipset.restore"
cat > "$tmp/bloomd.conf" <<C
[list drop]
file = $tmp/drop.list
format = plain
[control]
socket = $tmp/b.sock
[store]
dir =
[log]
level = warning
C
C() { "$build/bloomctl" -s "$tmp/b.sock" --json "$@" 2>/dev/null; }
held() { [ "$(C query addr "$last" | jq -r '.present and .filter')" = true ]; }
optimised() { [ "$(C stats | jq -r '.stats.rebuild.optimised != false')" = true ]; } # null: a bloomd before 0.14 (built offline)

bloomd_run() { # ms until the last address is held; ms until the offline rounds are in force
	local t0 held_ms
	t0=$(now)
	ip netns exec "$ns" "$build/bloomd" -c "$tmp/bloomd.conf" >/dev/null 2>>"$tmp/bloomd.err" &
	pid=$!
	until_true 600 held
	held_ms=$((($(now) - t0) / 1000000))
	until_true 600 optimised
	echo "$held_ms" $((($(now) - t0) / 1000000))
	kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
}
ipset_run() {
	local t0
	t0=$(now)
	in_ns ipset restore -f "$tmp/ipset.restore"
	echo $((($(now) - t0) / 1000000))
	in_ns ipset destroy
}

: > "$tmp/b"; : > "$tmp/i"
for _ in $(seq "$runs"); do
	bloomd_run >> "$tmp/b"
	ipset_run >> "$tmp/i"
done
b=$(cut -d' ' -f1 "$tmp/b" | median) o=$(cut -d' ' -f2 "$tmp/b" | median) i=$(median < "$tmp/i")
printf 'start with %d addresses (medians of %d): bloomd protecting after %d ms, the offline rounds in force after %d ms; ipset restore %d ms: %.2fx\n' \
	"$size" "$runs" "$b" "$o" "$i" "$(echo "$b / $i" | bc -l)"
