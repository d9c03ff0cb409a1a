# SPDX-License-Identifier: BSD-2-Clause
# bench-ns.sh - what the one-namespace benchmarks (bench-mirror, -crowdsec, -start, -replace) share;
# source it with NAME set (for messages and the namespace's name), as root: a scratch
# directory $tmp, a network namespace $ns with lo up and in_ns to run a command there, a
# cleanup at exit that stops every process left in it (and runs cleanup_more, if defined),
# and the helpers: now (ns), median (of lines), until_true SECONDS COMMAND..., addresses FIRST
# COUNT
tmp=$(mktemp -d)
ns=bloomd-bench-$NAME-$$
cleanup() {
	declare -F cleanup_more >/dev/null && cleanup_more
	ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null || true
	ip netns del "$ns" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
ip netns add "$ns"
ip -n "$ns" link set lo up
in_ns() { ip netns exec "$ns" "$@"; }
now() { date +%s%N; }
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
until_true() { # until_true SECONDS COMMAND...: until COMMAND succeeds, polled every 20 ms
	local end=$((SECONDS + $1)); shift
	until "$@"; do [ $SECONDS -lt $end ] || { echo "$NAME: timed out: $*" >&2; exit 1; }; sleep 0.02; done
}
addresses() { # addresses FIRST COUNT: COUNT IPv4 addresses a line, the FIRST-th of 100.0.0.0 on
	awk -v f="$1" -v n="$2" 'BEGIN { for (i = f; i < f + n; i++) printf "%d.%d.%d.%d\n", 100 + int(i / 16777216), int(i / 65536) % 256, int(i / 256) % 256, i % 256 }'
}
