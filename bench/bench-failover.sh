#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bench-failover.sh - the cluster on a Redis that fails over: a master, two replicas and a
# redis-sentinel on loopback, two sensors finding the master through it. Propagation (p50/p99
# of the delay from one node's XADD to the other's apply, as the receiving node measures it)
# without and with [cluster] wait_replicas = 1, and the failover: the master killed with -9,
# how long until the sentinel names another, until every sensor follows it, and until a change
# made on one sensor is applied on the other again (medians of BENCH_FAILOVER_RUNS, 3).
# BENCH_FAILOVER_TLS=1: the same with every Redis and the sentinel on TLS alone ([cluster] tls,
# certificates made here with openssl).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
runs=${BENCH_FAILOVER_RUNS:-3}
tls=${BENCH_FAILOVER_TLS:-0}
tmp=$(mktemp -d)
declare -A pid
base=$((12000 + ($$ % 5000) * 4))
cleanup() {
	for p in "${pid[@]}"; do kill "$p" 2>/dev/null || true; done
	for f in "$tmp"/*.pid; do [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
C() { local n=$1; shift; "$build/bloomctl" -s "$tmp/n$n/s.sock" "$@"; }
status() { C "$1" --json cluster status | jq -r ".cluster.$2"; }
all_follow_other_than() { # all_follow_other_than OLD-MASTER: both sensors follow another master
	local n s
	for n in 1 2; do
		s=$(status $n master)
		[ "$s" != null ] && [ "$s" != "$1" ] && [ "$(status $n state)" = following ] || return 1
	done
}
RC() { redis-cli "${tls_cli[@]}" "$@"; }
ms() { echo $((($(date +%s%N) - $1) / 1000000)); }
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
until_true() { # until_true SECONDS COMMAND...
	local end=$((SECONDS + $1)); shift
	until "$@"; do [ $SECONDS -lt $end ] || { echo "bench-failover: timed out: $*" >&2; exit 1; }; sleep 0.01; done
}
tls_cli=() tls_server=() tls_sentinel="" tls_node=""
if [ "$tls" = 1 ]; then
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$tmp/ca.key" -out "$tmp/ca.pem" \
		-days 2 -subj "/CN=bench ca" 2>/dev/null
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$tmp/server.key" -out "$tmp/server.csr" \
		-subj /CN=localhost 2>/dev/null
	openssl x509 -req -in "$tmp/server.csr" -CA "$tmp/ca.pem" -CAkey "$tmp/ca.key" -CAcreateserial -out "$tmp/server.pem" \
		-days 2 -extfile <(printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n') 2>/dev/null
	tls_cli=(--tls --cacert "$tmp/ca.pem")
	tls_server=(--tls-cert-file "$tmp/server.pem" --tls-key-file "$tmp/server.key" --tls-ca-cert-file "$tmp/ca.pem"
		    --tls-auth-clients no --tls-replication yes)
	tls_sentinel="tls-cert-file $tmp/server.pem\ntls-key-file $tmp/server.key\ntls-ca-cert-file $tmp/ca.pem\ntls-auth-clients no\ntls-replication yes\n"
	tls_node="tls = yes\ntls_ca_file = $tmp/ca.pem\n"
	echo "(every Redis and the sentinel on TLS alone: [cluster] tls = yes)"
fi
redis_on() { # redis_on PORT [ARGS]: on TLS alone with BENCH_FAILOVER_TLS
	mkdir -p "$tmp/r$1"
	if [ "$tls" = 1 ]; then
		redis-server --port 0 --tls-port "$1" "${tls_server[@]}" --bind 127.0.0.1 --dir "$tmp/r$1" --appendonly yes \
			--save '' --daemonize yes --pidfile "$tmp/r$1.pid" --logfile "$tmp/r$1.log" "${@:2}"
	else
		redis-server --port "$1" --bind 127.0.0.1 --dir "$tmp/r$1" --appendonly yes --save '' --daemonize yes \
			--pidfile "$tmp/r$1.pid" --logfile "$tmp/r$1.log" "${@:2}"
	fi
}
# A master, two replicas in sync, a sentinel watching them (ports from base up, 4 a round).
topology() { # topology BASE
	local m=$1
	redis_on "$m"; redis_on $((m + 1)) --replicaof 127.0.0.1 "$m"; redis_on $((m + 2)) --replicaof 127.0.0.1 "$m"
	until_true 20 eval '[ "$(RC -p '"$m"' info replication | grep -c "^slave[0-9].*state=online")" = 2 ]'
	if [ "$tls" = 1 ]; then printf 'port 0\ntls-port %s\n' $((m + 3)); else printf 'port %s\n' $((m + 3)); fi > "$tmp/sentinel$m.conf"
	printf "${tls_sentinel}bind 127.0.0.1\ndir %s\nsentinel monitor bm 127.0.0.1 %s 1\nsentinel down-after-milliseconds bm 1000\nsentinel failover-timeout bm 10000\nsentinel parallel-syncs bm 2\n" \
		"$tmp" "$m" >> "$tmp/sentinel$m.conf"
	redis-sentinel "$tmp/sentinel$m.conf" --daemonize yes --pidfile "$tmp/s$m.pid" --logfile "$tmp/s$m.log"
	until_true 10 eval '[ "$(RC -p '$((m + 3))' sentinel get-master-addr-by-name bm 2>/dev/null | tail -n 1)" = '"$m"' ]'
	# and knows both replicas in sync (it learns of them from the master's INFO): else no failover
	until_true 20 eval '[ "$(RC -p '$((m + 3))' sentinel replicas bm 2>/dev/null | paste - - | grep -c "^master-link-status	ok$")" = 2 ]'
}
nodes() { # nodes SENTINEL-PORT WAIT-REPLICAS: two sensors, started, on a stream of their own
	for n in 1 2; do
		mkdir -p "$tmp/n$n"
		printf "[control]\nsocket = %s/n%s/s.sock\n[store]\ndir = %s/n%s/state\n[filter]\nauto_rebuild = no\n[cluster]\n${tls_node}sentinels = 127.0.0.1:%s\nsentinel_master = bm\nwait_replicas = %s\ntimeout = 2\nnode = n%s\nstream = bench:%s:%s\n[log]\nlevel = warning\n[list shared]\ncategory = bench\n" \
			"$tmp" "$n" "$tmp" "$n" "$1" "$2" "$n" "$1" "$2" > "$tmp/n$n/bloomd.conf"
		"$build/bloomd" -c "$tmp/n$n/bloomd.conf" 2>>"$tmp/n$n/err" &
		pid[$n]=$!
	done
	for n in 1 2; do until_true 10 eval 'C '$n' version >/dev/null 2>&1 && [ "$(status '$n' state)" = following ]'; done
}
stop_nodes() { for n in 1 2; do kill "${pid[$n]}"; wait "${pid[$n]}" || true; unset "pid[$n]"; rm -rf "$tmp/n$n"; done; }
teardown() { for f in "$tmp"/*.pid; do kill -9 "$(cat "$f")" 2>/dev/null || true; rm -f "$f"; done; }

echo "propagation: 300 single adds on node 1, each applied on node 2 (delay from the XADD)"
topology "$base"
for wait in 0 1; do
	nodes $((base + 3)) "$wait"
	for i in $(seq 1 300); do C 1 add addr "100.64.$((i / 256)).$((i % 256))" >/dev/null; done
	until_true 60 eval '[ "$(status 2 applied)" -ge 300 ]'
	C 2 --json cluster status | jq -r --arg w "$wait" '"  wait_replicas = \($w): p50 \(.cluster.delay_ms.p50) ms, p99 \(.cluster.delay_ms.p99) ms over \(.cluster.delay_ms.samples) changes"'
	stop_nodes
done
teardown

echo "failover: the master killed with -9 ($runs runs, medians; sentinel down-after-milliseconds 1000)"
named=() followed=() again=()
for r in $(seq 1 "$runs"); do
	m=$((base + 4 * r))
	topology "$m"
	nodes $((m + 3)) 1
	t0=$(date +%s%N)
	kill -9 "$(cat "$tmp/r$m.pid")"
	until_true 60 eval '[ "$(RC -p '$((m + 3))' sentinel get-master-addr-by-name bm | tail -n 1)" != '"$m"' ]'
	named+=("$(ms "$t0")")
	until_true 60 all_follow_other_than "127.0.0.1:$m"
	followed+=("$(ms "$t0")")
	C 1 add addr "100.66.0.$r" >/dev/null
	until_true 60 C 2 query addr "100.66.0.$r" >/dev/null
	again+=("$(ms "$t0")")
	stop_nodes
	teardown
done
printf '  the sentinel names a new master after %s ms; both sensors follow it after %s ms; a change made then is on sensor 2 after %s ms\n' \
	"$(printf '%s\n' "${named[@]}" | median)" "$(printf '%s\n' "${followed[@]}" | median)" "$(printf '%s\n' "${again[@]}" | median)"
