#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bench-divergence.sh - how soon a divergence is seen, and healed: a real redis-server on a Unix
# socket and two sensors with the default digest_every (20 s). Each round, sensor 2 is stopped,
# sensor 1 adds 1,000 entries, and their stream entries are deleted (XDEL: changes the stream
# took and lost, as a failover with wait_replicas = 0 loses them); sensor 2 comes back without
# them. Timed from sensor 2's return: until a sensor says divergent, and until both hold the
# same entries again with digests that agree (medians of BENCH_DIVERGENCE_RUNS, 3).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
runs=${BENCH_DIVERGENCE_RUNS:-3}
lost=1000
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
status() { C "$1" --json cluster status | jq -r ".cluster.$2"; }
start() {
	"$build/bloomd" -c "$tmp/n$1/bloomd.conf" 2>>"$tmp/n$1/err" &
	pid[$1]=$!
	for _ in $(seq 200); do C "$1" version >/dev/null 2>&1 && return 0; sleep 0.05; done
	return 1
}
stop() { kill -TERM "${pid[$1]}"; wait "${pid[$1]}" || true; unset "pid[$1]"; }
ms() { echo $((($(date +%s%N) - $1) / 1000000)); }
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
until_true() { # until_true SECONDS COMMAND...
	local end=$((SECONDS + $1)); shift
	until "$@"; do [ $SECONDS -lt $end ] || { echo "bench-divergence: timed out: $*" >&2; exit 1; }; sleep 0.05; done
}
healed() {
	[ "$(status 1 divergent)/$(status 2 divergent)" = false/false ] &&
		[ "$(C 1 list --list local | sort | md5sum)" = "$(C 2 list --list local | sort | md5sum)" ] &&
		[ "$(R hget bloomd:entries:digests n1)" = "$(R hget bloomd:entries:digests n2)" ]
}

redis-server --port 0 --unixsocket "$tmp/redis.sock" --dir "$tmp" --appendonly no --save '' --daemonize yes \
	--pidfile "$tmp/redis.pid" --logfile "$tmp/redis.log"
for _ in $(seq 100); do R ping >/dev/null 2>&1 && break; sleep 0.05; done
for n in 1 2; do
	mkdir -p "$tmp/n$n"
	printf '[control]\nsocket = %s/n%s/s.sock\n[store]\ndir = %s/n%s/state\n[filter]\nauto_rebuild = no\n[cluster]\nredis = unix:%s/redis.sock\nnode = n%s\n[log]\nlevel = warning\n' \
		"$tmp" "$n" "$tmp" "$n" "$tmp" "$n" > "$tmp/n$n/bloomd.conf"
	start $n
done

"$build/bloomctl" -s "$tmp/n1/s.sock" add addr 100.69.0.1 >/dev/null # a place in the stream both have reached
until_true 30 eval 'C 2 query addr 100.69.0.1 >/dev/null'
until_true 60 eval '[ -n "$(R hget bloomd:entries:digests n1)" ] && [ -n "$(R hget bloomd:entries:digests n2)" ]' # settled, digests flowing

echo "divergence: $lost changes the stream took and lost, seen and healed (digest_every 20 s; $runs runs, medians)"
seen=() same=() healed_at=()
for r in $(seq 1 "$runs"); do
	stop 2
	from=$(R xinfo stream bloomd:entries 2>/dev/null | sed -n '/^last-generated-id$/{n;p}')
	for i in $(seq 1 "$lost"); do echo "addr 100.$((70 + r)).$((i / 256)).$((i % 256))"; done > "$tmp/lost"
	C 1 load "$tmp/lost" >/dev/null
	until_true 60 eval '[ "$(status 1 outbox)" = 0 ]'
	R --raw xrange bloomd:entries "(${from:-0-0}" + | grep -E '^[0-9]+-[0-9]+$' | xargs -r -n 500 redis-cli -s "$tmp/redis.sock" xdel bloomd:entries >/dev/null
	t0=$(date +%s%N)
	start 2
	until_true 120 eval '[ "$(status 1 divergent)" = true ] || [ "$(status 2 divergent)" = true ]'
	seen+=("$(ms "$t0")")
	until_true 120 eval '[ "$(C 1 list --list local | sort | md5sum)" = "$(C 2 list --list local | sort | md5sum)" ]'
	same+=("$(ms "$t0")")
	until_true 120 healed
	healed_at+=("$(ms "$t0")")
	printf '  round %d: divergent after %s ms, the same entries after %s ms, digests agree after %s ms (%s sent again in all)\n' \
		"$r" "${seen[-1]}" "${same[-1]}" "${healed_at[-1]}" "$(status 1 digest.resent)"
done
printf '  seen after %s ms; both hold the same entries after %s ms; digests agree, divergent cleared, after %s ms\n' \
	"$(printf '%s\n' "${seen[@]}" | median)" "$(printf '%s\n' "${same[@]}" | median)" "$(printf '%s\n' "${healed_at[@]}" | median)"
