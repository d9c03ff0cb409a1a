#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bench-xdp.sh - what dropping a listed source costs end to end (as root): small UDP datagrams
# flooded from 8 listed source addresses in one network namespace into another over a veth
# pair for a few seconds, all dropped on arrival by
#   nft-set  an nftables netdev ingress rule looking the source up in a set of 100,008
#            addresses (the kernel alone doing the job),
#   xdp      bloomd's XDP program (native on the veth) with the same 100,008 entries,
#   inline   bloomd inline (a netfilter queue to bloomd, workers = 1), the same entries;
# counted where each drops them. The figure: frames dropped per CPU-second of the receiving
# side: the kernel's softirq time (where veth delivers, XDP runs and the netdev hook drops)
# plus bloomd's own threads; the sender's system calls are left out. Medians of 3.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
runs=${BENCH_XDP_RUNS:-3}
seconds=${BENCH_XDP_SECONDS:-3}
NAME=bench-xdp NET=10.79.0
. "$(dirname "$0")/bench-netns.sh"
# No ARP from the listed sources: b's address is known to a beforehand.
ip -n $a neigh replace 10.79.0.2 lladdr "$(ip -n $b -br link show vb$$ | awk '{ print $3 }')" dev va$$ nud permanent
# The 100,000 and the flood's own 8: every frame is a listed source's.
listed() { addresses; printf '%s\n' "${sources[@]}"; }
# Receiving CPU so far: softirq and irq time (USER_HZ = 100), and bloomd's threads if it runs.
busy_ns() {
	local own=0
	[ -n "$pid" ] && own=$(cat /proc/"$pid"/task/*/schedstat | awk '{ ns += $1 } END { printf "%.0f", ns }')
	awk -v own="$own" '/^cpu / { printf "%.0f\n", ($7 + $8) * 10000000 + own }' /proc/stat
}
# One run: frames dropped per CPU-second; $1 reads the drops counted so far.
flood() {
	local d0 c0 d1 c1
	d0=$($1)
	c0=$(busy_ns)
	ip netns exec $a "$build/udpflood" 10.79.0.2 9999 "$seconds" "${sources[@]}" >/dev/null
	sleep 0.3
	c1=$(busy_ns)
	d1=$($1)
	echo "($d1 - $d0) * 1000000000 / ($c1 - $c0)" | bc
}
measure() { local r out=(); for r in $(seq "$runs"); do out+=("$(flood "$1")"); done; printf '%s\n' "${out[@]}" | median; }

B nft add table netdev bench
B nft add set netdev bench s '{ type ipv4_addr; }'
listed | awk 'BEGIN { printf "add element netdev bench s { " } { printf "%s%s", (NR > 1 ? ", " : ""), $1 } END { print " }" }' > "$tmp/elements.nft"
B nft -f "$tmp/elements.nft"
B nft add chain netdev bench ingress "{ type filter hook ingress device vb$$ priority 0; }"
B nft add rule netdev bench ingress ip saddr @s counter drop
nft_drops() { B nft list chain netdev bench ingress | awk '/counter packets/ { for (i = 1; i <= NF; i++) if ($i == "packets") print $(i + 1) }'; }
nftset=$(measure nft_drops)
B nft delete table netdev bench

listed | sed 's/^/addr /' > "$tmp/entries.list"
xdp_drops() { stats | jq .stats.xdp.dropped; }
inline_drops() { stats | jq .stats.inline.dropped; }

start "$(printf 'mode = xdp\ninterface = vb%s\nxdp_mode = native\nbpf = udp port 9999' $$)"
xdp=$(measure xdp_drops)
mode=$(stats | jq -r .stats.xdp.mode)
stop

if B nft add table inet bq 2>/dev/null && B nft add chain inet bq input '{ type filter hook input priority 0; }' &&
	B nft add rule inet bq input udp dport 9999 queue num 9 bypass 2>/dev/null; then
	rule="nft queue"
elif command -v iptables-legacy >/dev/null; then
	B iptables-legacy -A INPUT -p udp --dport 9999 -j NFQUEUE --queue-num 9 --queue-bypass
	rule="iptables NFQUEUE"
else
	rule=
fi
inline=
if [ -n "$rule" ]; then
	start $'mode = inline\nqueue = 9'
	inline=$(measure inline_drops)
	stop
fi

echo "end to end, $runs runs of $seconds s of 32-byte UDP datagrams from 8 listed addresses over a veth pair,"
echo "100,008 entries; frames dropped per CPU-second of the receiving side (softirq + bloomd), medians:"
printf '  %-40s %10s  %5s\n' "nft netdev ingress set lookup" "$nftset" "1.00x"
printf '  %-40s %10s  %5.2fx\n' "bloomd xdp ($mode)" "$xdp" "$(echo "$xdp / $nftset" | bc -l)"
if [ -n "$inline" ]; then
	printf '  %-40s %10s  %5.2fx  (xdp: %.1fx inline)\n' "bloomd inline ($rule)" "$inline" \
		"$(echo "$inline / $nftset" | bc -l)" "$(echo "$xdp / $inline" | bc -l)"
else
	echo "  bloomd inline: skipped (no netfilter queue in this kernel)"
fi
