# SPDX-License-Identifier: BSD-2-Clause
# bench-netns.sh - what the flood benchmarks share; source it with NAME (for messages) and
# NET (the first three octets of their /24) set: root checked, a scratch directory $tmp,
# namespaces $a (the sender, 8 source addresses NET.10-17 in ${sources[@]} on va$$) and $b
# (NET.2 on vb$$) joined by a veth pair, B to run a command in $b, and a cleanup at exit
# that also stops bloomd ($pid) if it runs; then bloomd's start and stop, its stats, the
# 100,000 listed addresses, and a median.
[ "$(id -u)" -eq 0 ] || { echo "$NAME: skipped: needs root (network namespaces)"; exit 0; }
tmp=$(mktemp -d)
a=$NAME-a$$ b=$NAME-b$$
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
sources=()
for i in $(seq 10 17); do ip -n $a addr add $NET.$i/24 dev va$$; sources+=($NET.$i); done
ip -n $b addr add $NET.2/24 dev vb$$
ip -n $a link set va$$ up && ip -n $b link set vb$$ up
B() { ip netns exec $b "$@"; }

median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# 100,000 addresses none of the flood's, one a line.
addresses() { awk 'BEGIN { for (i = 0; i < 100000; i++) printf "%d.%d.%d.%d\n", 100 + int(i / 65536), int(i / 256) % 256, i % 256, 7 }'; }

# Start bloomd in $b with these [capture] lines, the list $tmp/entries.list (and the pass
# list $tmp/pass.list, with $PASS set); wait for its socket. One that does not start skips
# the benchmark, with its error.
start() {
	printf '[capture]\n%s\n[list bench]\nfile = %s/entries.list\n[control]\nsocket = %s/ctl.sock\n[store]\ndir =\n[output]\nevents =\n[log]\nlevel = warning\n' \
		"$1" "$tmp" "$tmp" > "$tmp/bloomd.conf"
	[ -z "${PASS:-}" ] || printf '[list allow]\nfile = %s/pass.list\nformat = plain\naction = pass\n' "$tmp" >> "$tmp/bloomd.conf"
	ip netns exec $b "$build/bloomd" -c "$tmp/bloomd.conf" 2>"$tmp/err" &  # not through B: $! is bloomd itself
	pid=$!
	for _ in $(seq 200); do "$build/bloomctl" -s "$tmp/ctl.sock" version >/dev/null 2>&1 && return 0; sleep 0.05; done
	echo "$NAME: skipped: bloomd did not start: $(head -c 300 "$tmp/err")"; exit 0
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=; }
stats() { "$build/bloomctl" -s "$tmp/ctl.sock" --json stats; }
