#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bench-mirror.sh - a dropping list of N entries (addresses and /24 nets, BENCH_MIRROR_SIZE,
# 1000000) mirrored into nftables by bloomd ([action] manage = yes): the time from bloomd's start
# until the kernel holds every entry, and the kernel memory the sets take (Slab), against
# `ipset restore` of the same entries (hash:ip and hash:net) and `nft -f` of the same elements
# into sets of the same shape, in the same run and network namespace, medians of
# BENCH_MIRROR_RUNS (3). Then changes at BENCH_MIRROR_RATE a second (10000: adds, and deletes
# of what was added) streamed into bloomd's control socket for 5 s: the lag from each change
# sent to its element added or deleted in the kernel (its netlink announcement), p50 and p99.
# As root.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
runs=${BENCH_MIRROR_RUNS:-3}
size=${BENCH_MIRROR_SIZE:-1000000}
rate=${BENCH_MIRROR_RATE:-10000}
if [ "$(id -u)" -ne 0 ] || ! command -v ipset >/dev/null || ! command -v nft >/dev/null; then
	echo "bench-mirror: skipped (needs root, ipset and nftables: tools/install-deps.sh bench)"
	exit 0
fi
NAME=mirror
pid=
cleanup_more() { [ -z "$pid" ] || kill "$pid" 2>/dev/null || true; }
. "$(dirname "$0")/bench-ns.sh"
probe=$(cd "$(dirname "$0")" && pwd)/nftprobe.py  # nft get element reads the whole set first: 50 s at a million
slab_kb() { awk '/^Slab:/ { print $2 }' /proc/meminfo; }

# The list: 99% addresses of 100.64.0.0/10 and 1% /24 nets of 20.0.0.0/8, none inside another.
nets=$((size / 100)) addrs=$((size - size / 100))
awk -v a="$addrs" -v n="$nets" 'BEGIN {
	for (i = 0; i < a; i++) printf "100.%d.%d.%d\n", int(i / 65536) % 64 + 64, int(i / 256) % 256, i % 256
	for (i = 0; i < n; i++) printf "20.%d.%d.0/24\n", int(i / 256) % 256, i % 256 }' > "$tmp/drop.list"
last_addr=$(awk '!/\// { a = $0 } END { print a }' "$tmp/drop.list")
{ echo "create b4 hash:ip maxelem $((addrs * 2))"; echo "create n4 hash:net maxelem $((nets * 2 + 1024))"
  awk '{ print "add " (index($0, "/") ? "n4 " : "b4 ") $0 }' "$tmp/drop.list"; } > "$tmp/ipset.restore"
{ echo "table inet raw {"; echo "  set listed4 { type ipv4_addr; flags timeout; }"; echo "  set listednets4 { type ipv4_addr; flags interval, timeout; }"; echo "}"
  awk '{ s = index($0, "/") ? "listednets4" : "listed4"; if (s != last || n == 4096) { if (last != "") print " }"; printf "add element inet raw %s { %s", s, $0; last = s; n = 0 } else printf ", %s", $0; n++ } END { print " }" }' "$tmp/drop.list"; } > "$tmp/raw.nft"
cat > "$tmp/bloomd.conf" <<C
[list drop]
file = $tmp/drop.list
format = plain
[action]
manage = yes
at_stop = remove
[control]
socket = $tmp/b.sock
[store]
dir =
[log]
level = warning
C

bloomd_run() { # ms from bloomd's start until the kernel holds the list's last address; kernel kB in kb
	local t0 s0
	s0=$(slab_kb)
	t0=$(now)
	ip netns exec "$ns" "$build/bloomd" -c "$tmp/bloomd.conf" >/dev/null 2>>"$tmp/bloomd.err" &
	pid=$!
	until_true 600 in_ns "$probe" get bloomd listed4 "$last_addr"
	local ms=$((($(now) - t0) / 1000000))
	until_true 600 "$build/bloomctl" -s "$tmp/b.sock" version >/dev/null 2>&1
	sleep 1 # started and settled: the kernel's share of what it holds
	echo "$ms" $(($(slab_kb) - s0))
	kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
}
ipset_run() {
	local t0 s0
	s0=$(slab_kb)
	t0=$(now)
	in_ns ipset restore -f "$tmp/ipset.restore"
	echo $((($(now) - t0) / 1000000)) $(($(slab_kb) - s0))
	in_ns ipset destroy
}
nft_run() {
	local t0 s0
	s0=$(slab_kb)
	t0=$(now)
	in_ns nft -f "$tmp/raw.nft"
	echo $((($(now) - t0) / 1000000)) $(($(slab_kb) - s0))
	in_ns nft delete table inet raw
}
for tool in bloomd ipset nft; do
	for _ in $(seq "$runs"); do "${tool}_run"; done > "$tmp/$tool.times"
	eval "${tool}_ms=\$(cut -d' ' -f1 \"\$tmp/$tool.times\" | median)"
	eval "${tool}_kb=\$(cut -d' ' -f2 \"\$tmp/$tool.times\" | median)"
done
printf '%d entries (%d addresses, %d /24 nets) into the kernel: bloomd %d ms, ipset restore %d ms, nft -f %d ms; bloomd/ipset %.2f, bloomd/nft %.2f\n' \
	"$size" "$addrs" "$nets" "$bloomd_ms" "$ipset_ms" "$nft_ms" "$(echo "$bloomd_ms / $ipset_ms" | bc -l)" "$(echo "$bloomd_ms / $nft_ms" | bc -l)"
printf '  kernel memory (Slab): bloomd %d MB, ipset %d MB, nft -f %d MB\n' $((bloomd_kb / 1024)) $((ipset_kb / 1024)) $((nft_kb / 1024))

# Changes kept in step: bloomd holding the list, rate changes a second for 5 s.
ip netns exec "$ns" "$build/bloomd" -c "$tmp/bloomd.conf" >/dev/null 2>>"$tmp/bloomd.err" &
pid=$!
until_true 600 "$build/bloomctl" -s "$tmp/b.sock" version >/dev/null 2>&1
in_ns python3 - "$tmp/b.sock" "$rate" "$probe" <<'PY'
import socket, subprocess, sys, threading, time
sock_path, rate, probe = sys.argv[1], int(sys.argv[2]), sys.argv[3]
seen = {}
mon = subprocess.Popen([probe, "watch", "bloomd", "listed4"], stdout=subprocess.PIPE, text=True)
mon.stdout.readline()
def watch():
    for line in mon.stdout:
        t, op, addr = line.split()
        seen.setdefault((op, addr), float(t))
threading.Thread(target=watch, daemon=True).start()
s = socket.socket(socket.AF_UNIX)
s.settimeout(60)  # a bloomd that stops answering ends the bench, not hangs it
s.connect(sock_path)
def drain():
    for _ in s.makefile():
        pass
threading.Thread(target=drain, daemon=True).start()
name = lambda i: "198.%d.%d.%d" % (18 + i // 65536 % 2, i // 256 % 256, i % 256)
sent = {}
t0 = time.monotonic()
n = added = deleted = 0
while time.monotonic() - t0 < 5:
    due = int((time.monotonic() - t0) * rate)
    lines = []
    while n < due:
        # every other change deletes an address added half a second before (adds come at rate/2 a second)
        if n % 2 and deleted < added - rate // 4:
            op, addr = "del", name(deleted)
            deleted += 1
        else:
            op, addr = "add", name(added)
            added += 1
        lines.append("%s addr %s\n" % (op, addr))
        sent[(op, addr)] = time.monotonic()
        n += 1
    if lines:
        s.sendall("".join(lines).encode())
    time.sleep(0.005)
time.sleep(2)
lags = sorted((seen[k] - t) * 1000 for k, t in sent.items() if k in seen)
missing = sum(1 for k in sent if k not in seen)
p = lambda q: lags[min(len(lags) - 1, int(q * len(lags)))] if lags else float("nan")
print("  %d changes a second for 5 s (adds, and deletes of adds 0.5 s old): lag to the kernel p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d changes, %d not seen)"
      % (rate, p(0.5), p(0.99), lags[-1] if lags else float("nan"), len(sent), missing))
mon.terminate()
PY
# A new version of the list with 1% of its addresses new (the file rewritten, bloomctl replace):
# until the reply, which comes once the version is taken and the kernel's table has its diff.
cp "$tmp/drop.list" "$tmp/drop.orig"
: > "$tmp/replace.times"
for run in $(seq "$runs"); do
	awk -v r="$run" 'NR % 100 == 0 && !/\// { printf "101.%d.%d.%d\n", r, int(NR / 25600) % 256, int(NR / 100) % 256; next } { print }' \
		"$tmp/drop.orig" > "$tmp/drop.list"
	t0=$(now)
	"$build/bloomctl" -s "$tmp/b.sock" replace drop >/dev/null
	echo $((($(now) - t0) / 1000000)) >> "$tmp/replace.times"
done
new=$(awk '/^101\./ { a = $0 } END { print a }' "$tmp/drop.list")
in_ns "$probe" get bloomd listed4 "$new" >/dev/null || echo "bench-mirror: $new is not in the kernel after the replace"
printf '  a new version with 1%% of it new: bloomctl replace answered (the kernel in step) after %d ms\n' "$(median < "$tmp/replace.times")"
kill "$pid" 2>/dev/null || { echo "bench-mirror: bloomd had exited:"; tail -5 "$tmp/bloomd.err"; }
wait "$pid" 2>/dev/null || true; pid=
