#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bench-inline.sh - inline mode's and the workers' figures (as root): small UDP datagrams
# flooded from 8 source addresses in one network namespace into another for a few seconds,
# counted where they reach UDP there, with
#   kernel   no rule at all (the path itself),
#   nft-set  the kernel alone doing bloomd's job: a lookup in a set of the same 100,000
#            addresses on every packet (none matches, so all pass),
#   bloomd   a netfilter queue rule balancing flows over queues 9 and 10 to bloomd inline
#            with those 100,000 entries, workers = 1 (the loop reads both) and workers = 2,
# and bloomd's verdict latency; then bloomd passive on the receiving interface (no rule),
# workers = 1 and 2 in one fanout group: packets checked per second and the kernel's drops.
# Then workers = 1 inline and passive again with a pass list of 10,000 addresses besides
# (none the flood's): exceptions should cost nothing on packets they do not touch.
# Medians of 3 runs, ratios against the kernel alone and against workers = 1.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
runs=${BENCH_INLINE_RUNS:-3}
seconds=${BENCH_INLINE_SECONDS:-3}
NAME=bench-inline NET=10.78.0
. "$(dirname "$0")/bench-netns.sh"

# Datagrams that reached UDP in b: delivered, or to no port (nothing listens).
reached() { B awk '/^Udp: [0-9]/ { print $2 + $3 }' /proc/net/snmp; }
flood() { # one run: packets/s reaching UDP in b
	local before after
	before=$(reached)
	ip netns exec $a "$build/udpflood" 10.78.0.2 9999 "$seconds" "${sources[@]}" >/dev/null
	sleep 0.2
	after=$(reached)
	echo $(( (after - before) / seconds ))
}

measure() { local r out=(); for r in $(seq "$runs"); do out+=("$(flood)"); done; printf '%s\n' "${out[@]}" | median; }

kernel=$(measure)

B nft add table inet bench
B nft add set inet bench s '{ type ipv4_addr; }'
addresses | awk 'BEGIN { printf "add element inet bench s { " } { printf "%s%s", (NR > 1 ? ", " : ""), $1 } END { print " }" }' > "$tmp/elements.nft"
B nft -f "$tmp/elements.nft"
B nft add chain inet bench input '{ type filter hook input priority 0; }'
B nft add rule inet bench input ip saddr @s drop
nftset=$(measure)
B nft delete table inet bench

if B nft add table inet bq 2>/dev/null && B nft add chain inet bq input '{ type filter hook input priority 0; }' &&
	B nft add rule inet bq input udp dport 9999 queue num 9-10 fanout,bypass 2>/dev/null; then
	rule="nft queue"
	unrule() { B nft delete table inet bq; }
elif command -v iptables-legacy >/dev/null; then
	B iptables-legacy -A INPUT -p udp --dport 9999 -j NFQUEUE --queue-balance 9:10 --queue-bypass
	rule="iptables NFQUEUE"
	unrule() { B iptables-legacy -F INPUT; }
else
	echo "bench-inline: skipped: no netfilter queue in this kernel"; exit 0
fi
addresses | sed 's/^/addr /' > "$tmp/entries.list"
# A pass list of 10,000 addresses none of the flood's: what exceptions cost packets they do not touch.
awk 'BEGIN { for (i = 0; i < 10000; i++) printf "192.168.%d.%d\n", int(i / 250), i % 250 + 1 }' > "$tmp/pass.list"
# Nanoseconds bloomd's threads have run, all of them.
cpu_ns() { cat /proc/"$pid"/task/*/schedstat | awk '{ ns += $1 } END { printf "%.0f\n", ns }'; }
# Packets bloomd checks per second of its CPU time, over what ran between two readings.
per_cpu_second() { echo "$1 * 1000000000 / ($3 - $2)" | bc; }

start $'mode = inline\nqueue = 9-10\nworkers = 1'
cpu0=$(cpu_ns)
inline1=$(measure)
stats1=$(stats)
cpu1=$(per_cpu_second "$(jq .stats.packets <<<"$stats1")" "$cpu0" "$(cpu_ns)")
stop
start $'mode = inline\nqueue = 9-10\nworkers = 2'
cpu0=$(cpu_ns)
inline2=$(measure)
stats2=$(stats)
cpu2=$(per_cpu_second "$(jq .stats.packets <<<"$stats2")" "$cpu0" "$(cpu_ns)")
stop
PASS=1 start $'mode = inline\nqueue = 9-10\nworkers = 1'
cpu0=$(cpu_ns)
inline1p=$(measure)
cpu1p=$(per_cpu_second "$(jq .stats.packets <<<"$(stats)")" "$cpu0" "$(cpu_ns)")
stop
unrule

# Passive: what bloomd checks of the flood, and what the kernel dropped before it could.
passive() { # one run: "checked/s dropped" for bloomd started with [capture] lines $1
	local before after
	local c0
	start "$1"
	sleep 0.3
	c0=$(cpu_ns)
	ip netns exec $a "$build/udpflood" 10.78.0.2 9999 "$seconds" "${sources[@]}" >/dev/null
	sleep 0.5
	after=$(stats)
	echo "$(jq -r --argjson s "$seconds" '"\((.stats.packets / $s) | floor) \(.stats.capture.dropped + .stats.capture.if_dropped)"' <<<"$after")" \
		"$(per_cpu_second "$(jq .stats.packets <<<"$after")" "$c0" "$(cpu_ns)")"
	stop
}
measure_passive() {
	local r out=()
	for r in $(seq "$runs"); do out+=("$(passive "$1")"); done
	printf '%s\n' "${out[@]}" | sort -g | awk '{ a[NR] = $0 } END { print a[int((NR + 1) / 2)] }'
}
read -r passive1 drops1 pcpu1 <<<"$(measure_passive $'interface = vb'$$$'\nworkers = 1\nbpf = udp port 9999')"
read -r passive2 drops2 pcpu2 <<<"$(measure_passive $'interface = vb'$$$'\nworkers = 2\nbpf = udp port 9999')"
read -r passive1p drops1p pcpu1p <<<"$(PASS=1 measure_passive $'interface = vb'$$$'\nworkers = 1\nbpf = udp port 9999')"

echo "inline, $runs runs of $seconds s of 32-byte UDP datagrams from 8 addresses between two namespaces ($rule over queues 9-10), 100,000 entries:"
printf '  %-34s %10s pkt/s  %5s\n' "kernel, no rule" "$kernel" "1.00x"
printf '  %-34s %10s pkt/s  %5.2fx\n' "kernel alone: nft set lookup" "$nftset" "$(echo "$nftset / $kernel" | bc -l)"
printf '  %-34s %10s pkt/s  %5.2fx  %9s pkt per bloomd CPU-second\n' "bloomd inline, workers = 1" "$inline1" \
	"$(echo "$inline1 / $kernel" | bc -l)" "$cpu1"
printf '  %-34s %10s pkt/s  %5.2fx  %9s pkt per bloomd CPU-second  (%.2fx workers = 1)\n' "bloomd inline, workers = 2" \
	"$inline2" "$(echo "$inline2 / $kernel" | bc -l)" "$cpu2" "$(echo "$inline2 / $inline1" | bc -l)"
printf '  %-34s %10s pkt/s  %5.2fx  %9s pkt per bloomd CPU-second  (%.2fx without)\n' "bloomd inline, workers = 1, + pass" \
	"$inline1p" "$(echo "$inline1p / $kernel" | bc -l)" "$cpu1p" "$(echo "$cpu1p / $cpu1" | bc -l)"
echo "  (+ pass: a pass list of 10,000 addresses besides, none of them the flood's)"
for st in "$stats1" "$stats2"; do
	jq -r '"  workers = \(.stats.workers.count // 1): verdict latency p50 \(.stats.inline.verdict_ns.p50) ns, p99 \(.stats.inline.verdict_ns.p99) ns; kernel queue drops \(.stats.inline.queue_dropped + .stats.inline.user_dropped), passed unjudged (fail-open) \(.stats.inline.unjudged)"' <<<"$st"
done
echo "passive capture of the same flood (no rule; the kernel delivers every packet, bloomd checks what it can):"
printf '  %-34s %10s pkt/s  kernel drops %s  %9s pkt per bloomd CPU-second\n' "bloomd passive, workers = 1" "$passive1" \
	"$drops1" "$pcpu1"
printf '  %-34s %10s pkt/s  kernel drops %s  %9s pkt per bloomd CPU-second  (%.2fx workers = 1)\n' \
	"bloomd passive, workers = 2 (fanout)" "$passive2" "$drops2" "$pcpu2" "$(echo "$passive2 / $passive1" | bc -l)"
printf '  %-34s %10s pkt/s  kernel drops %s  %9s pkt per bloomd CPU-second  (%.2fx without)\n' \
	"bloomd passive, workers = 1, + pass" "$passive1p" "$drops1p" "$pcpu1p" "$(echo "$pcpu1p / $pcpu1" | bc -l)"
echo "  (this machine has $(nproc) cores: the sender, the kernel's path and the workers share them)"
