# SPDX-License-Identifier: BSD-2-Clause
# netns.sh - two network namespaces joined by a veth pair, a netfilter queue rule in the
# second, and the helpers a test of bloomd there shares; source it after tap.sh (its
# skip_all), after plan. Names are $a and $b, the ends veth-a$$ and veth-b$$ (up, without addresses).

# The start every such test shares: skipped unless root (WHY: for what) with socat; a fresh
# $tmp, the current directory; $a and $b (bloomd-TAGa$$, bloomd-TAGb$$) joined, loopback up in
# both; C is bloomctl on $tmp/ctl.sock. At exit, the test's own $at_exit first, then bloomd
# ($pid, continued in case a test stopped it), socat, the namespaces and $tmp go.
at_exit=:
netns_test() { # tag why
	[ "$(id -u)" -eq 0 ] || skip_all "needs root ($2)"
	command -v socat >/dev/null || skip_all "no socat"
	tmp=$(mktemp -d)
	chmod 755 "$tmp"
	pid=
	trap 'eval "$at_exit"; [ -n "$pid" ] && kill -CONT "$pid" 2>/dev/null && kill "$pid" 2>/dev/null; pkill -P $$ socat 2>/dev/null; ip netns del $a 2>/dev/null; ip netns del $b 2>/dev/null; rm -rf "$tmp"' EXIT
	cd "$tmp" || exit 1
	netns_pair "bloomd-$1a$$" "bloomd-$1b$$"
	ip -n $a link set lo up
	ip -n $b link set lo up
}
C() { "$BUILD/bloomctl" -s "$tmp/ctl.sock" "$@"; }

# 10.77.0.2 in $b and 10.77.0.H in $a for each H of HOSTS4; with HOSTS6, fd77::2 and fd77::H too,
# their neighbours fixed: a listed source's neighbour solicitations are dropped as its other
# traffic is, and the resolution they fail is the one every source of $a waits on.
netns_hosts() { # "hosts4" ["hosts6"]
	local host mac_a mac_b
	for host in $1; do ip -n $a addr add 10.77.0.$host/24 dev veth-a$$; done
	ip -n $b addr add 10.77.0.2/24 dev veth-b$$
	[ -n "${2:-}" ] || return 0
	mac_a=$(ip -n $a -br link show veth-a$$ | awk '{ print $3 }')
	mac_b=$(ip -n $b -br link show veth-b$$ | awk '{ print $3 }')
	for host in $2; do
		ip -n $a addr add fd77::$host/64 dev veth-a$$ nodad
		ip -n $b neigh replace fd77::$host lladdr "$mac_a" dev veth-b$$ nud permanent
	done
	ip -n $b addr add fd77::2/64 dev veth-b$$ nodad
	ip -n $a neigh replace fd77::2 lladdr "$mac_b" dev veth-a$$ nud permanent
}

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

# A TCP listener in $b on PORT appending what arrives to tcp.txt, until it listens; and a
# connection from 10.77.0.FROM to it that sends TEXT (given up after 2 s unanswered: a blocked
# source's SYN is dropped). bloomd, capturing on veth-b, sees its handshake whole, so a match of
# TEXT proves its sender ([capture] tcp_connections), as no datagram's can.
tcp_receiver() { # port
	ip netns exec $b socat -u "TCP-LISTEN:$1,fork,reuseaddr" OPEN:tcp.txt,creat,append &
	for _ in $(seq 100); do ip netns exec $b ss -Hltn "sport = :$1" | grep -q . && break; sleep 0.05; done
}
tcp_send_from() { # from text port
	ip netns exec $a timeout 5 socat -u - "TCP:10.77.0.2:$3,bind=10.77.0.$1,connect-timeout=2" <<<"$2" 2>/dev/null
}

# For a test of bloomd in $b that defines C (bloomctl on its control socket):
# bloomd with CONF there, until it answers (its standard error appended to ./err); 1 if it
# exits or does not answer in 10 s. pid is its process.
bloomd_up() { # conf
	ip netns exec $b "$BUILD/bloomd" -c "$1" 2>>err &
	pid=$!
	for _ in $(seq 200); do C version >/dev/null 2>&1 && return 0; kill -0 $pid 2>/dev/null || return 1; sleep 0.05; done
	return 1
}

# One datagram TEXT from $a to port 9999 of 10.77.0.2 (or fd77::2), sent from 10.77.0.FROM
# (or from FROM, an IPv6 address).
send_from() { # from text
	case $1 in
	*:*) ip netns exec $a socat -u - "UDP6-SENDTO:[fd77::2]:9999,bind=[$1]" <<<"$2" ;;
	*) ip netns exec $a socat -u - "UDP-SENDTO:10.77.0.2:9999,bind=10.77.0.$1" <<<"$2" ;;
	esac
}

# How many lines of recv.txt (udp_receiver's) hold TEXT.
received() { grep -c "$1" recv.txt 2>/dev/null; }

# Until the shell condition COND holds (0), or 5 s have passed (1).
wait_for() { for _ in $(seq 100); do eval "$1" && return 0; sleep 0.05; done; return 1; }
