#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bench-cluster.sh - the cluster's figures, with a real redis-server on a Unix socket and two
# sensors: how long a change takes from its XADD on one node to being applied on the other
# (p50/p99, as the receiving node measures it), entries applied per second against the same
# entries loaded locally, and the catch-up of a node that was down while entries were added.
# And how long control waits on a node while a 1,000,000-entry list version from the stream is
# taken, and while a new node restores the snapshot of another's local list (1,300,500 entries).
# BENCH_CLUSTER_SIGNED=1: the same with [cluster] key_file (every change HMAC-signed and checked).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
entries=${BENCH_CLUSTER_ENTRIES:-100000}
catchup=${BENCH_CLUSTER_CATCHUP:-1000000}
runs=${BENCH_CLUSTER_RUNS:-3}
signed=${BENCH_CLUSTER_SIGNED:-0}
tmp=$(mktemp -d)
declare -A pid
cleanup() {
	for p in "${pid[@]}"; do kill "$p" 2>/dev/null || true; done
	redis-cli -s "$tmp/redis.sock" shutdown nosave >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
R() { redis-cli -s "$tmp/redis.sock" "$@"; }
C() { local n=$1; shift; "$build/bloomctl" -s "$tmp/n$n/s.sock" "$@"; }
now() { date +%s.%N; }
start() {
	"$build/bloomd" -c "$tmp/n$1/bloomd.conf" 2>>"$tmp/n$1/err" &
	pid[$1]=$!
	for _ in $(seq 200); do C "$1" version >/dev/null 2>&1 && return 0; sleep 0.05; done
	return 1
}
stop() { kill -TERM "${pid[$1]}"; wait "${pid[$1]}" || true; unset "pid[$1]"; }
applied() { C "$1" --json cluster status | jq .cluster.applied; }
wait_applied() { # wait_applied NODE COUNT: until the node has applied COUNT entries (up to 5 min)
	local until=$((SECONDS + 300))
	while [ "$(applied "$1")" -lt "$2" ]; do
		[ $SECONDS -lt $until ] || { echo "bench-cluster: node $1 did not get to $2 entries" >&2; exit 1; }
		sleep 0.02
	done
}
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
lines() { # lines PREFIX N: N addr entries
	awk -v p="$1" -v n="$2" 'BEGIN { for (i = 0; i < n; i++) printf "addr %s.%d.%d.%d\n", p, i / 65536 % 256, i / 256 % 256, i % 256 }'
}

redis-server --port 0 --unixsocket "$tmp/redis.sock" --dir "$tmp" --appendonly no --save '' --daemonize yes \
	--pidfile "$tmp/redis.pid" --logfile "$tmp/redis.log"
for _ in $(seq 100); do R ping >/dev/null 2>&1 && break; sleep 0.05; done
head -c 32 /dev/urandom | base64 > "$tmp/key" && chmod 600 "$tmp/key"
for n in 1 2 3; do # node 3 joins last, from a snapshot
	mkdir -p "$tmp/n$n"
	printf '[control]\nsocket = %s/n%s/s.sock\n[store]\ndir = %s/n%s/state\n[filter]\nauto_rebuild = no\n[cluster]\nredis = unix:%s/redis.sock\nnode = n%s\nmaxlen = 10000000\nmax_entry_bytes = 64MiB\n[log]\nlevel = warning\n[list big]\ncategory = bench\n' \
		"$tmp" "$n" "$tmp" "$n" "$tmp" "$n" > "$tmp/n$n/bloomd.conf"
	[ "$signed" = 1 ] && sed -i "/^node = /a key_file = $tmp/key" "$tmp/n$n/bloomd.conf"
	[ "$n" = 3 ] || start $n
done
[ "$signed" = 1 ] && echo "(every change signed with HMAC-SHA256 and checked: [cluster] key_file)"

echo "propagation: 300 single adds on node 1, each applied on node 2 (delay from the XADD)"
for i in $(seq 1 300); do C 1 add addr 100.64.$((i / 256)).$((i % 256)) >/dev/null; done
wait_applied 2 300
C 2 --json cluster status | jq -r '"  p50 \(.cluster.delay_ms.p50) ms, p99 \(.cluster.delay_ms.p99) ms over \(.cluster.delay_ms.samples) changes"'

echo "add to visible: 200 bloomctl add on node 1, each polled for with bloomctl query on node 2"
visible=()
for i in $(seq 1 200); do
	t0=$(now)
	C 1 add addr 100.65.$((i / 256)).$((i % 256)) >/dev/null
	until C 2 query addr 100.65.$((i / 256)).$((i % 256)) >/dev/null; do :; done
	visible+=("$(echo "($(now) - $t0) * 1000" | bc -l)")
done
printf '%s\n' "${visible[@]}" | sort -g | awk '{ a[NR] = $1 } END { printf "  p50 %.1f ms, p99 %.1f ms over %d adds (client start included: bloomctl is run for each add and poll)\n", a[int(NR * 0.5 + 0.5)], a[int(NR * 0.99 + 0.5)], NR }'
wait_applied 2 500

echo "applying: $entries entries loaded on node 1, against the same load on node 1 alone ($runs runs, medians)"
local_rates=() applied_rates=()
base=500
for r in $(seq 1 "$runs"); do
	lines "$((10 + r))" "$entries" > "$tmp/load"
	t0=$(now)
	C 1 load "$tmp/load" >/dev/null
	t1=$(now)
	wait_applied 2 $((base + entries))
	t2=$(now)
	base=$((base + entries))
	local_rates+=("$(echo "$entries / ($t1 - $t0)" | bc -l)")
	applied_rates+=("$(echo "$entries / ($t2 - $t0)" | bc -l)")
done
lr=$(printf '%s\n' "${local_rates[@]}" | median)
ar=$(printf '%s\n' "${applied_rates[@]}" | median)
printf '  loaded on node 1: %.0f entries/s; applied on node 2 (from the start of the load): %.0f entries/s, %.2fx\n' \
	"$lr" "$ar" "$(echo "$ar / $lr" | bc -l)"

echo "catch-up: node 2 down while $catchup entries are added on node 1, then started"
stop 2
lines 172 "$catchup" > "$tmp/load"
C 1 load "$tmp/load" >/dev/null
t0=$(now)
start 2
wait_applied 2 "$catchup"
t1=$(now)
printf '  %d entries caught up in %.2f s (%.0f entries/s), from the start of the process\n' "$catchup" \
	"$(echo "$t1 - $t0" | bc -l)" "$(echo "$catchup / ($t1 - $t0)" | bc -l)"

echo "a large version: a 1,000,000-entry list replaced on node 1; node 2 takes it from the stream"
version() { jq '.lists[] | select(.name == "big") | .version' <<<"$1"; }
lines 10 1000000 > "$tmp/big.list"
before=$(version "$(C 2 --json lists)")
[ -n "$before" ] || { echo "bench-cluster: node 2 has no list big" >&2; exit 1; }
C 1 replace big "$tmp/big.list" >/dev/null &
replacing=$!
t0=$(now)
until=$((SECONDS + 120))
: > "$tmp/waits"
while :; do # each poll is a control request: its time is how long the loop made it wait
	[ $SECONDS -lt $until ] || { echo "bench-cluster: node 2 did not take the version" >&2; exit 1; }
	a=$(now)
	lists=$(C 2 --json lists)
	echo "$(now) - $a" | bc -l >> "$tmp/waits"
	[ "$(version "$lists")" = "$before" ] || break
done
t1=$(now)
wait "$replacing"
printf '  taken on node 2 %.2f s after the replace began; the longest of %d control requests meanwhile: %.0f ms (the start of bloomctl included)\n' \
	"$(echo "$t1 - $t0" | bc -l)" "$(wc -l < "$tmp/waits")" "$(echo "$(sort -g "$tmp/waits" | tail -n 1) * 1000" | bc -l)"

echo "a snapshot restored: node 1 publishes its local list as the snapshot; node 3, new, starts from it"
C 1 cluster snapshot >/dev/null
last=$(C 1 --json cluster status | jq -r .cluster.last_id)
until [ "$(R hget bloomd:entries:snapshot id)" = "$last" ]; do sleep 0.05; done # it is in Redis
held=$(C 1 --json lists | jq '.lists[] | select(.name == "local") | .entries')
t0=$(now)
start 3
python3 "$(dirname "$0")/loopprobe.py" "$tmp/n3/s.sock" "$tmp/waits3" &
pid[probe]=$!
until=$((SECONDS + 300))
until [ "$(C 3 --json cluster status | jq .cluster.restored_from_snapshot)" = 1 ]; do
	[ $SECONDS -lt $until ] || { echo "bench-cluster: node 3 did not restore the snapshot" >&2; exit 1; }
	sleep 0.02
done
t1=$(now)
kill "${pid[probe]}"; wait "${pid[probe]}" 2>/dev/null || true; unset "pid[probe]"
printf '  %d entries restored %.2f s after node 3 started; control waited at most %s ms (p99 %s ms) meanwhile, over %d requests\n' \
	"$held" "$(echo "$t1 - $t0" | bc -l)" "$(sort -g "$tmp/waits3" | tail -n 1)" \
	"$(sort -g "$tmp/waits3" | awk '{ a[NR] = $1 } END { i = int(NR * 0.99); print a[i < 1 ? 1 : i] }')" "$(wc -l < "$tmp/waits3")"
