# bench-netns.sh - what the flood benchmarks share; source it with NAME (for messages) and
# NET (the first three octets of their /24) set: root checked, a scratch directory $tmp,
# namespaces $a (the sender, 8 source addresses NET.10-17 in ${sources[@]} on va$$) and $b
# (NET.2 on vb$$) joined by a veth pair, B to run a command in $b, and a cleanup at exit
# that also stops bloomd ($pid) if it runs.
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
