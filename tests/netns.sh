# netns.sh - two network namespaces joined by a veth pair, and a netfilter queue rule in the
# second; source it after tap.sh (its skip_all), after plan. Names are $a and $b, the ends
# veth-a$$ and veth-b$$ (up, without addresses).
netns_pair() { # a b
	a=$1 b=$2
	ip netns add $a 2>/dev/null && ip netns add $b || skip_all "cannot make network namespaces here"
	ip link add veth-a$$ netns $a type veth peer name veth-b$$ netns $b || skip_all "cannot make a veth pair here"
	ip -n $a link set veth-a$$ up
	ip -n $b link set veth-b$$ up
}

# UDP to port PORT in $b goes to queue FIRST (or FIRST..LAST, flows balanced over them), with
# bypass: nft's queue statement where the kernel has it, else iptables' NFQUEUE target. Sets
# rule to nft or iptables.
queue_rule() { # port first [last]
	local port=$1 first=$2 last=${3:-$2} nft_queues=$2 ipt=(--queue-num "$2") flags=bypass
	if [ "$last" != "$first" ]; then
		nft_queues=$first-$last flags=fanout,bypass ipt=(--queue-balance "$first:$last")
	fi
	if ip netns exec $b nft add table inet bloomd 2>/dev/null &&
		ip netns exec $b nft add chain inet bloomd input '{ type filter hook input priority 0; }' 2>/dev/null &&
		ip netns exec $b nft add rule inet bloomd input udp dport "$port" queue num "$nft_queues" $flags 2>/dev/null; then
		rule=nft
	elif command -v iptables-legacy >/dev/null &&
		ip netns exec $b iptables-legacy -A INPUT -p udp --dport "$port" -j NFQUEUE "${ipt[@]}" --queue-bypass 2>/dev/null; then
		rule=iptables
	else
		skip_all "neither nft's queue statement nor iptables' NFQUEUE target works in this kernel"
	fi
	echo "# the queue rule: $rule"
}

# A UDP receiver in $b on PORT appending what arrives to recv.txt, until it listens. A child
# of the test's shell: its trap stops it with `pkill -P $$ socat`, no one else's.
udp_receiver() { # port
	ip netns exec $b socat -u "UDP-RECV:$1" OPEN:recv.txt,creat,append &
	for _ in $(seq 100); do ip netns exec $b ss -Hlun "sport = :$1" | grep -q . && break; sleep 0.05; done
}
