#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bench-mirror-scale.sh - [action] manage = yes at scale (BENCH_MIRROR_ADDRS, 1000000 addresses,
# and BENCH_MIRROR_NETS, 100000 /24 nets, two lists): 1% of each changed by a reload (SIGHUP) and
# by bloomctl replace, each BENCH_MIRROR_RUNS (3) times: the time until the kernel's sets are
# exact (every member compared, read by netlink), the longest wait of the control socket
# meanwhile (loopprobe.py, every 2 ms), beside `ipset restore` of the same change into hash:ip
# and hash:net sets holding the same entries; then the time to put back a flushed address set
# (after nft's own flush returned: nft takes seconds to flush a million), and bloomd's peak
# resident memory. Medians. As root.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
runs=${BENCH_MIRROR_RUNS:-3}
naddrs=${BENCH_MIRROR_ADDRS:-1000000}
nnets=${BENCH_MIRROR_NETS:-100000}
if [ "$(id -u)" -ne 0 ] || ! command -v ipset >/dev/null || ! command -v nft >/dev/null; then
	echo "bench-mirror-scale: skipped (needs root, ipset and nftables: tools/install-deps.sh bench)"
	exit 0
fi
NAME=mirrorscale
pid= probe_pid=
cleanup_more() { for p in $pid $probe_pid; do kill "$p" 2>/dev/null || true; done; }
. "$(dirname "$0")/bench-ns.sh"
here=$(cd "$(dirname "$0")" && pwd)
# Version V of the lists: of each, 1% replaced by entries of version V's own.
lists() {
	awk -v n="$naddrs" -v v="$1" 'BEGIN { for (i = 0; i < n; i++) if (v > 0 && i % 100 == v % 100) printf "101.%d.%d.%d\n", v % 256, int(i / 25600) % 256, int(i / 100) % 256; else printf "100.%d.%d.%d\n", int(i / 65536) % 64 + 64, int(i / 256) % 256, i % 256 }' > "$tmp/addrs.list"
	awk -v n="$nnets" -v v="$1" 'BEGIN { for (i = 0; i < n; i++) if (v > 0 && i % 100 == v % 100) printf "%d.%d.%d.0/24\n", 30 + v % 100, int(i / 25600) % 256, int(i / 100) % 256; else printf "%d.%d.%d.0/24\n", 20 + int(i / 65536), int(i / 256) % 256, i % 256 }' > "$tmp/nets.list"
	sort "$tmp/addrs.list" "$tmp/nets.list" > "$tmp/want"
	# what marks version V in the kernel: its last new address and net in, version 0's there out
	local k=$(($1 % 100))
	[ "$1" -gt 0 ] || return 0
	marks=("listed4:$(grep '^101' "$tmp/addrs.list" | tail -n 1)"
	       "listednets4:$(grep "^$((30 + $1 % 100))\." "$tmp/nets.list" | tail -n 1 | cut -d/ -f1)"
	       "listed4:100.64.0.$k:absent" "listednets4:20.0.$k.0:absent")
}
exact() { in_ns python3 "$here/nftprobe.py" dump bloomd listed4 listednets4 | sort | cmp -s - "$tmp/want"; }
cat > "$tmp/bloomd.conf" <<C
[list addrs]
file = $tmp/addrs.list
format = plain
[list nets]
file = $tmp/nets.list
format = plain
[action]
manage = yes
at_stop = remove
[control]
socket = $tmp/b.sock
[store]
dir =
[output]
events =
[log]
level = warning
C
# ms until the kernel has the version's marks after COMMAND (run while loopprobe asks), then every
# member compared; the longest wait meanwhile.
timed() {
	python3 "$here/loopprobe.py" "$tmp/b.sock" "$tmp/waits" & probe_pid=$!
	sleep 0.2
	local t0=$(now)
	"$@"
	in_ns python3 "$here/nftprobe.py" until bloomd "${marks[@]}" || { echo "$NAME: the change never reached the kernel" >&2; exit 1; }
	local ms=$((($(now) - t0) / 1000000))
	until exact; do [ $((($(now) - t0) / 1000000000)) -lt 600 ] || { echo "$NAME: not exact after 600 s" >&2; exit 1; }; done
	kill "$probe_pid"; wait "$probe_pid" 2>/dev/null || true; probe_pid=
	waited=$(sort -g "$tmp/waits" | tail -n 1)
	echo "$ms ${waited%.*}"
}
lists 0
t0=$(now)
ip netns exec "$ns" "$build/bloomd" -c "$tmp/bloomd.conf" >/dev/null 2>>"$tmp/bloomd.err" &
pid=$!
until_true 600 "$build/bloomctl" -s "$tmp/b.sock" version >/dev/null 2>&1
in_ns python3 "$here/nftprobe.py" until bloomd "listed4:$(tail -n 1 "$tmp/addrs.list")" "listednets4:$(tail -n 1 "$tmp/nets.list" | cut -d/ -f1)"
start_ms=$((($(now) - t0) / 1000000))
exact || { echo "$NAME: the kernel's sets are not the lists after the start" >&2; exit 1; }
: > "$tmp/reload.times"; : > "$tmp/replace.times"
for v in $(seq "$runs"); do
	lists "$v"; timed kill -HUP "$pid" >> "$tmp/reload.times"
	lists $((v + 50)); timed sh -c "'$build/bloomctl' -s '$tmp/b.sock' replace addrs >/dev/null && '$build/bloomctl' -s '$tmp/b.sock' replace nets >/dev/null" >> "$tmp/replace.times"
done
marks=("listed4:$(grep -v '^101' "$tmp/addrs.list" | tail -n 1)")
flush_listed4() { local t0=$(now); in_ns nft flush set inet bloomd listed4; echo $((($(now) - t0) / 1000000)) > "$tmp/flush.ms"; }
flushed=$(timed flush_listed4)
peak_kb=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status")
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
# ipset restore of the same change (1% of each out, 1% in), into sets that hold version 0.
lists 0; cp "$tmp/addrs.list" "$tmp/a0"; cp "$tmp/nets.list" "$tmp/n0"
lists 1
{ echo "create b4 hash:ip maxelem $((naddrs * 2))"; echo "create n4 hash:net maxelem $((nnets * 2))"
  sed 's/^/add b4 /' "$tmp/a0"; sed 's/^/add n4 /' "$tmp/n0"; } > "$tmp/ipset.base"
{ comm -23 <(sort "$tmp/a0") <(sort "$tmp/addrs.list") | sed 's/^/del b4 /'; comm -13 <(sort "$tmp/a0") <(sort "$tmp/addrs.list") | sed 's/^/add b4 /'
  comm -23 <(sort "$tmp/n0") <(sort "$tmp/nets.list") | sed 's/^/del n4 /'; comm -13 <(sort "$tmp/n0") <(sort "$tmp/nets.list") | sed 's/^/add n4 /'; } > "$tmp/ipset.change"
: > "$tmp/ipset.times"
for _ in $(seq "$runs"); do
	in_ns ipset restore -f "$tmp/ipset.base"
	t0=$(now); in_ns ipset restore -f "$tmp/ipset.change"; echo $((($(now) - t0) / 1000000)) >> "$tmp/ipset.times"
	in_ns ipset destroy
done
col() { cut -d' ' -f"$1" "$2" | median; }
printf '%d addresses and %d /24 nets mirrored (manage): in the kernel %d ms after the start (then every member compared); peak resident %d MB\n' \
	"$naddrs" "$nnets" "$start_ms" $((peak_kb / 1024))
printf '  1%% of each changed, until the kernel has it (then every member compared): reload %d ms, replace %d ms; ipset restore of the same change %d ms\n' \
	"$(col 1 "$tmp/reload.times")" "$(col 1 "$tmp/replace.times")" "$(median < "$tmp/ipset.times")"
printf '  the control socket'"'"'s longest wait meanwhile: reload %d ms, replace %d ms\n' "$(col 2 "$tmp/reload.times")" "$(col 2 "$tmp/replace.times")"
printf '  the address set flushed by another process (nft took %d ms to flush it): dropping again %d ms after, exact then (longest wait %d ms)\n' \
	"$(cat "$tmp/flush.ms")" $((${flushed% *} - $(cat "$tmp/flush.ms"))) ${flushed#* }
