#!/usr/bin/env bash
# bench-inline.sh - inline mode's figures (as root): small UDP datagrams flooded from one
# network namespace into another for a few seconds, counted where they reach UDP there, with
#   kernel   no rule at all (the path itself),
#   nft-set  the kernel alone doing bloomd's job: a lookup in a set of the same 100,000
#            addresses on every packet (none matches, so all pass),
#   bloomd   a netfilter queue rule to bloomd inline with those 100,000 entries (workers = 1),
# and bloomd's verdict latency. Medians of 3 runs, ratios against the kernel alone.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
runs=${BENCH_INLINE_RUNS:-3}
seconds=${BENCH_INLINE_SECONDS:-3}
[ "$(id -u)" -eq 0 ] || { echo "bench-inline: skipped: needs root (network namespaces, queues)"; exit 0; }
tmp=$(mktemp -d)
a=bbench-a$$ b=bbench-b$$
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null || true
	ip netns del $a 2>/dev/null || true
	ip netns del $b 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
ip netns add $a && ip netns add $b
ip link add va$$ netns $a type veth peer name vb$$ netns $b
ip -n $a addr add 10.78.0.1/24 dev va$$ && ip -n $b addr add 10.78.0.2/24 dev vb$$
ip -n $a link set va$$ up && ip -n $b link set vb$$ up
B() { ip netns exec $b "$@"; }

# Datagrams that reached UDP in b: delivered, or to no port (nothing listens).
reached() { B awk '/^Udp: [0-9]/ { print $2 + $3 }' /proc/net/snmp; }
flood() { # one run: packets/s reaching UDP in b
	local before after
	before=$(reached)
	ip netns exec $a "$build/udpflood" 10.78.0.2 9999 "$seconds" >/dev/null
	sleep 0.2
	after=$(reached)
	echo $(( (after - before) / seconds ))
}
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
addresses() { awk 'BEGIN { for (i = 0; i < 100000; i++) printf "%d.%d.%d.%d\n", 100 + int(i / 65536), int(i / 256) % 256, i % 256, 7 }'; }

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
	B nft add rule inet bq input udp dport 9999 queue num 9 bypass 2>/dev/null; then
	rule="nft queue"
elif command -v iptables-legacy >/dev/null; then
	B iptables-legacy -A INPUT -p udp --dport 9999 -j NFQUEUE --queue-num 9 --queue-bypass
	rule="iptables NFQUEUE"
else
	echo "bench-inline: skipped: no netfilter queue in this kernel"; exit 0
fi
addresses | sed 's/^/addr /' > "$tmp/entries.list"
printf '[capture]\nmode = inline\nqueue = 9\n[list bench]\nfile = %s/entries.list\n[control]\nsocket = %s/ctl.sock\n[store]\ndir =\n[output]\nevents =\n[log]\nlevel = warning\n' \
	"$tmp" "$tmp" > "$tmp/bloomd.conf"
B "$build/bloomd" -c "$tmp/bloomd.conf" 2>"$tmp/err" &
pid=$!
for _ in $(seq 100); do "$build/bloomctl" -s "$tmp/ctl.sock" version >/dev/null 2>&1 && break; sleep 0.05; done
inline=$(measure)
stats=$("$build/bloomctl" -s "$tmp/ctl.sock" --json stats)

echo "inline, $runs runs of $seconds s of 32-byte UDP datagrams between two namespaces ($rule), 100,000 entries:"
printf '  %-34s %10s pkt/s  %5s\n' "kernel, no rule" "$kernel" "1.00x"
printf '  %-34s %10s pkt/s  %5.2fx\n' "kernel alone: nft set lookup" "$nftset" "$(echo "$nftset / $kernel" | bc -l)"
printf '  %-34s %10s pkt/s  %5.2fx\n' "bloomd inline, workers = 1" "$inline" "$(echo "$inline / $kernel" | bc -l)"
jq -r '"  bloomd: \(.stats.inline.packets) judged, verdict latency p50 \(.stats.inline.verdict_ns.p50) ns, p99 \(.stats.inline.verdict_ns.p99) ns; kernel queue drops \(.stats.inline.queue_dropped + .stats.inline.user_dropped) (fail-open: passed unjudged)"' <<<"$stats"
