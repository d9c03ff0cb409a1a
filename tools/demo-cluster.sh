#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# demo-cluster.sh - what `make demo-cluster` shows: a real redis-server on a Unix socket in a
# temporary directory and three bloomd sensors sharing one entry log through it; an entry
# added on the first alerts on the third, whose alert goes to Redis.
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$build" && pwd)
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	redis-cli -s "$tmp/redis.sock" shutdown nosave >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
R() { redis-cli -s "$tmp/redis.sock" "$@"; }
C() { local n=$1; shift; "$build/bloomctl" -s "$tmp/n$n/s.sock" "$@"; }

echo "== redis-server on $tmp/redis.sock (AOF on)"
redis-server --port 0 --unixsocket "$tmp/redis.sock" --dir "$tmp" --appendonly yes --daemonize yes \
	--pidfile "$tmp/redis.pid" --logfile "$tmp/redis.log" --save ''
for _ in $(seq 100); do R ping >/dev/null 2>&1 && break; sleep 0.05; done
for n in 1 2 3; do
	mkdir -p "$tmp/n$n"
	cat > "$tmp/n$n/bloomd.conf" <<C
[control]
socket = $tmp/n$n/s.sock
[store]
dir = $tmp/n$n/state
[cluster]
redis = unix:$tmp/redis.sock
node = sensor$n
[output]
events = redis
C
	"$build/bloomd" -c "$tmp/n$n/bloomd.conf" 2>"$tmp/n$n/err" &
	pids+=($!)
done
for n in 1 2 3; do
	for _ in $(seq 100); do C $n version >/dev/null 2>&1 && break; sleep 0.05; done
done
echo "== three sensors follow the stream bloomd:entries"
echo
echo "== on sensor1: bloomctl add addr 203.0.113.66; bloomctl add sig '\"GET /etc/passwd\"'"
C 1 add addr 203.0.113.66
C 1 add sig '"GET /etc/passwd"'
for _ in $(seq 100); do C 3 query addr 203.0.113.66 >/dev/null 2>&1 && break; sleep 0.02; done
echo
echo "== on sensor3: bloomctl query addr 203.0.113.66"
C 3 query addr 203.0.113.66
echo
"$build/pcapgen" -o "$tmp/demo.pcap" "$root/demo/traffic.spec"
echo "== on sensor3: bloomctl replay demo.pcap (demo/traffic.spec, 11 packets)"
C 3 replay "$tmp/demo.pcap" --wait
for _ in $(seq 100); do [ "$(R llen bloomd:events)" -ge 2 ] && break; sleep 0.02; done
echo
echo "== its alerts, from Redis: LRANGE bloomd:events 0 -1"
R lrange bloomd:events 0 -1 | jq -c '{timestamp, src_ip, dest_ip, alert: .alert.signature, matches: .alert.context.matches}'
echo
echo "== the stream: XRANGE bloomd:entries - +"
R xrange bloomd:entries - + | paste - - - - - - - - - | head
echo
echo "== on sensor2: bloomctl cluster status"
C 2 cluster status
