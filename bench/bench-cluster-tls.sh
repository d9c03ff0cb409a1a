#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bench-cluster-tls.sh - what TLS costs the fleet: one redis-server with a plain port and a TLS
# port (certificates made here with openssl, client certificates required), and two pairs of
# sensors, one pair on each, as ACL users. Each round, 300 single adds on one sensor of each
# pair, taking turns, and the delay from the XADD to the other sensor's apply (p50/p99, as the
# receiving node measures it, in whole ms); then, finer, from bloomctl add on one sensor until
# bloomctl query finds it on the other, and the TLS pair's p99 over the plain pair's (medians
# of the rounds).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
runs=${BENCH_CLUSTER_RUNS:-3}
tmp=$(mktemp -d)
declare -A pid
cleanup() {
	for p in "${pid[@]}"; do kill "$p" 2>/dev/null || true; done
	[ -f "$tmp/redis.pid" ] && kill "$(cat "$tmp/redis.pid")" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
cd "$tmp"
C() { local n=$1; shift; "$build/bloomctl" -s "$tmp/n$n/s.sock" "$@"; }
start() {
	"$build/bloomd" -c "$tmp/n$1/bloomd.conf" 2>>"$tmp/n$1/err" &
	pid[$1]=$!
	for _ in $(seq 200); do C "$1" version >/dev/null 2>&1 && return 0; sleep 0.05; done
	return 1
}
applied() { C "$1" --json cluster status | jq .cluster.applied; }
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.pem -days 2 \
	-subj "/CN=bench ca" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout server.key -out server.csr \
	-subj /CN=localhost 2>/dev/null
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 \
	-extfile <(printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n') 2>/dev/null
plain=$(free_port) tls=$(free_port)
redis-server --port "$plain" --tls-port "$tls" --tls-cert-file server.pem --tls-key-file server.key \
	--tls-ca-cert-file ca.pem --tls-auth-clients yes --bind 127.0.0.1 --dir "$tmp" --appendonly no --save '' \
	--daemonize yes --pidfile "$tmp/redis.pid" --logfile "$tmp/redis.log"
for _ in $(seq 100); do redis-cli -p "$plain" ping >/dev/null 2>&1 && break; sleep 0.05; done
redis-cli -p "$plain" acl setuser bloomd on '>bench' '~bloomd*' '+@all' >/dev/null
for n in 1 2 3 4; do # 1, 2 plain; 3, 4 TLS (the server's certificate checked, a client certificate shown)
	mkdir -p "n$n"
	stream=plain where="tcp://127.0.0.1:$plain" extra=""
	if [ "$n" -gt 2 ]; then
		stream=tls where="tcp://127.0.0.1:$tls"
		extra="tls = yes\ntls_ca_file = $tmp/ca.pem\ntls_cert_file = $tmp/server.pem\ntls_key_file = $tmp/server.key\n"
	fi
	printf "[control]\nsocket = $tmp/n$n/s.sock\n[store]\ndir = $tmp/n$n/state\n[filter]\nauto_rebuild = no\n[cluster]\nredis = $where\nuser = bloomd\npassword = bench\nstream = bloomd:$stream\nnode = n$n\n$extra[log]\nlevel = warning\n" \
		> "n$n/bloomd.conf"
	start $n
done

echo "propagation over TCP, plain against TLS: 300 single adds a round on each pair, in turn ($runs rounds, medians)"
p99_plain=() p99_tls=()
base=0
for r in $(seq 1 "$runs"); do
	for i in $(seq 1 300); do
		C 1 add addr "100.$r.$((i / 256)).$((i % 256))" >/dev/null
		C 3 add addr "100.$r.$((i / 256)).$((i % 256))" >/dev/null
	done
	base=$((base + 300))
	until [ "$(applied 2)" -ge "$base" ] && [ "$(applied 4)" -ge "$base" ]; do sleep 0.05; done
	p99_plain+=("$(C 2 --json cluster status | jq .cluster.delay_ms.p99)")
	p99_tls+=("$(C 4 --json cluster status | jq .cluster.delay_ms.p99)")
	printf '  round %d: p50/p99 plain %s/%s ms, TLS %s/%s ms\n' "$r" \
		"$(C 2 --json cluster status | jq .cluster.delay_ms.p50)" "${p99_plain[-1]}" \
		"$(C 4 --json cluster status | jq .cluster.delay_ms.p50)" "${p99_tls[-1]}"
done
pp=$(printf '%s\n' "${p99_plain[@]}" | median) pt=$(printf '%s\n' "${p99_tls[@]}" | median)
printf '  p99 plain %s ms, TLS %s ms (the nodes measure in whole ms)\n' "$pp" "$pt"

# Finer: from bloomctl add on one node until bloomctl query finds it on the other, in µs.
visible() { # visible ADDER QUERIER ADDRESS: microseconds
	local t0
	t0=$(date +%s%N)
	C "$1" add addr "$3" >/dev/null
	until C "$2" query addr "$3" >/dev/null; do :; done
	echo $((($(date +%s%N) - t0) / 1000))
}
p99() { sort -g | awk '{ a[NR] = $1 } END { print a[int(NR * 0.99 + 0.5)] }'; }
p50() { sort -g | awk '{ a[NR] = $1 } END { print a[int(NR * 0.5 + 0.5)] }'; }
echo "add to visible, plain against TLS: 200 adds a round on each pair, in turn, each polled for on the other node ($runs rounds, medians; client starts included)"
v_plain=() v_tls=() v50_plain=() v50_tls=()
for r in $(seq 1 "$runs"); do
	: > "$tmp/plain.us"
	: > "$tmp/tls.us"
	for i in $(seq 1 200); do
		visible 1 2 "100.$((100 + r)).$((i / 256)).$((i % 256))" >> "$tmp/plain.us"
		visible 3 4 "100.$((100 + r)).$((i / 256)).$((i % 256))" >> "$tmp/tls.us"
	done
	v_plain+=("$(p99 < "$tmp/plain.us")") v_tls+=("$(p99 < "$tmp/tls.us")")
	v50_plain+=("$(p50 < "$tmp/plain.us")") v50_tls+=("$(p50 < "$tmp/tls.us")")
	printf '  round %d: p50/p99 plain %s/%s µs, TLS %s/%s µs\n' "$r" "${v50_plain[-1]}" "${v_plain[-1]}" \
		"${v50_tls[-1]}" "${v_tls[-1]}"
done
vp=$(printf '%s\n' "${v_plain[@]}" | median) vt=$(printf '%s\n' "${v_tls[@]}" | median)
printf '  p99 plain %s µs, TLS %s µs: TLS/plain %.2f (target <= 1.5, and < 10 ms)\n' "$vp" "$vt" \
	"$(echo "$vt / $vp" | bc -l)"
