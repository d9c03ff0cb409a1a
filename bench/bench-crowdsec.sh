#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bench-crowdsec.sh - CrowdSec's local API (Debian's crowdsec, a private configuration and
# database) holding N ban decisions: the time from a bouncer's start until every decision is
# enforced. bloomd ([list] source = crowdsec, [action] manage = yes: until its nftables set holds
# them all) against crowdsec-firewall-bouncer (nftables mode: until its set holds them all), in the same run and
# network namespace, medians of BENCH_CROWDSEC_RUNS (3). Sizes: BENCH_CROWDSEC_SIZES (20000
# 100000); the bouncer is run at sizes up to BENCH_CROWDSEC_PEER_MAX (100000: it fills its set
# at a few hundred decisions a second here), bloomd alone above. As root.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
runs=${BENCH_CROWDSEC_RUNS:-3}
sizes=${BENCH_CROWDSEC_SIZES:-20000 100000}
peer_max=${BENCH_CROWDSEC_PEER_MAX:-100000}
if [ "$(id -u)" -ne 0 ] || ! command -v crowdsec >/dev/null || ! command -v crowdsec-firewall-bouncer >/dev/null; then
	echo "bench-crowdsec: skipped (needs root, crowdsec and crowdsec-firewall-bouncer: tools/install-deps.sh bench)"
	exit 0
fi
NAME=crowdsec
lapi=
cleanup_more() { [ -z "$lapi" ] || kill "$lapi" 2>/dev/null || true; }
. "$(dirname "$0")/bench-ns.sh"

. "$(dirname "$0")/../tests/support/crowdsec-lapi.sh"
lapi_config "$tmp" 8080
cs() { in_ns cscli -c "$tmp/config.yaml" --error "$@"; }
cs machines add bench --password benchpass -f "$tmp/local_api_credentials.yaml" --url http://127.0.0.1:8080 >/dev/null
ip netns exec "$ns" crowdsec -c "$tmp/config.yaml" -no-cs > "$tmp/lapi.log" 2>&1 &
lapi=$!
until_true 30 in_ns bash -c 'exec 3<>/dev/tcp/127.0.0.1/8080' 2>/dev/null

probe=$(cd "$(dirname "$0")" && pwd)/nftprobe.py  # one element asked of the kernel: nft get reads the whole set
bloomd_run() { # bloomd_run N: ms from start until its nftables set holds the N decisions (one transaction: the last one there)
	local key=$tmp/bloomd.key t0
	cs bouncers delete bench-bloomd >/dev/null 2>&1 || true
	cs bouncers add bench-bloomd -o raw > "$key"
	chmod 600 "$key"
	printf '[list cs]\nsource = crowdsec\nurl = http://127.0.0.1:8080\napi_key_file = %s\nrefresh = 1h\nmax_size = 4GiB\nfetch_timeout = 10m\n[action]\nmanage = yes\nat_stop = remove\n[control]\nsocket = %s/b.sock\n[store]\ndir =\n[log]\nlevel = warning\n' \
		"$key" "$tmp" > "$tmp/bloomd.conf"
	t0=$(now)
	ip netns exec "$ns" "$build/bloomd" -c "$tmp/bloomd.conf" >/dev/null 2>>"$tmp/bloomd.err" &
	local pid=$!
	local last
	last=$(awk -v i="$(($1 - 1))" 'BEGIN { printf "100.%d.%d.%d", int(i / 65536) % 64 + 64, int(i / 256) % 256, i % 256 }')
	until_true 1800 in_ns "$probe" get bloomd listed4 "$last"
	echo $((($(now) - t0) / 1000000))
	kill "$pid"; wait "$pid" 2>/dev/null || true
}
bouncer_run() { # bouncer_run N: ms from start until its nftables set holds N elements
	local t0
	cs bouncers delete bench-cfb >/dev/null 2>&1 || true
	cat > "$tmp/cfb.yaml" <<Y
mode: nftables
pid_dir: $tmp/
update_frequency: 10s
daemonize: false
log_mode: stdout
log_level: warning
api_url: http://127.0.0.1:8080/
api_key: $(cs bouncers add bench-cfb -o raw)
disable_ipv6: false
deny_action: DROP
supported_decisions_types: [ban]
blacklists_ipv4: crowdsec-blacklists
blacklists_ipv6: crowdsec6-blacklists
nftables:
  ipv4: { enabled: true, set-only: false, table: crowdsec, chain: crowdsec-chain }
  ipv6: { enabled: true, set-only: false, table: crowdsec6, chain: crowdsec6-chain }
Y
	t0=$(now)
	ip netns exec "$ns" crowdsec-firewall-bouncer -c "$tmp/cfb.yaml" > "$tmp/cfb.log" 2>&1 &
	local pid=$!
	until_true 7200 eval '[ "$(in_ns nft -j list set ip crowdsec crowdsec-blacklists 2>/dev/null | jq ".nftables[1].set.elem | length")" = "'"$1"'" ]'
	echo $((($(now) - t0) / 1000000))
	kill "$pid"; wait "$pid" 2>/dev/null || true
	in_ns nft delete table ip crowdsec 2>/dev/null || true
	in_ns nft delete table ip6 crowdsec6 2>/dev/null || true
}

have=0
for n in $sizes; do
	# CrowdSec's own import, the decisions up to n (IPv4 addresses, 4 h each).
	{ echo "duration,scope,value"; awk -v from="$have" -v to="$n" 'BEGIN { for (i = from; i < to; i++) printf "4h,ip,100.%d.%d.%d\n", int(i / 65536) % 64 + 64, int(i / 256) % 256, i % 256 }'; } > "$tmp/import.csv"
	[ "$n" -gt "$have" ] && cs decisions import -i "$tmp/import.csv" >/dev/null
	have=$n
	b=$(for _ in $(seq "$runs"); do bloomd_run "$n"; done | median)
	if [ "$n" -le "$peer_max" ]; then
		p=$(for _ in $(seq "$runs"); do bouncer_run "$n"; done | median)
		printf '%9d decisions: bloomd %7d ms   crowdsec-firewall-bouncer %8d ms   bouncer/bloomd %.1f   (%d decisions/s against %d)\n' \
			"$n" "$b" "$p" "$(echo "$p / $b" | bc -l)" $((n * 1000 / b)) $((n * 1000 / p))
	else
		printf '%9d decisions: bloomd %7d ms (%d decisions/s; the bouncer not run above %d)\n' "$n" "$b" $((n * 1000 / b)) "$peer_max"
	fi
done
