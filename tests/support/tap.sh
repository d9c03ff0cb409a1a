# SPDX-License-Identifier: BSD-2-Clause
# tap.sh - tiny TAP emitter for the shell tests; source it, call plan, then checks.
# BUILD (default build) names the build directory whose binaries are tested; a relative
# one is taken from the top of the tree, so tests may change directory.
BUILD=${BUILD:-build}
case $BUILD in
/*) ;;
*) BUILD=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/$BUILD ;;
esac
tap_n=0
tap_failed=0
tap_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

plan() { tap_planned=$1; echo "1..$1"; }

# A TCP port for a test's listener: below the kernel's ephemeral range, where no client's
# connection (nor its TIME_WAIT, which a bind cannot share) takes it, and held by no socket now.
free_port() {
	local low port
	read -r low _ < /proc/sys/net/ipv4/ip_local_port_range || low=32768
	[ "$low" -gt 11024 ] || low=11024
	for _ in $(seq 100); do
		port=$((10000 + RANDOM % (low - 10000)))
		[ -z "$(ss -Htan "sport = :$port" 2>/dev/null)" ] && break
	done
	echo "$port"
}

free_ports() { # free_ports N: N distinct ports as free_port draws them, one a line
	local -a got=()
	local port
	while [ "${#got[@]}" -lt "$1" ]; do
		port=$(free_port)
		[[ " ${got[*]} " == *" $port "* ]] || got+=("$port")
	done
	printf '%s\n' "${got[@]}"
}

# Every planned test a skip, for a test that cannot run here (call it after plan).
skip_all() {
	for i in $(seq "$tap_planned"); do echo "ok $i # SKIP $1"; done
	exit 0
}

skip() { # skip N REASON: the next N tests cannot run here
	for _ in $(seq "$1"); do tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP $2"; done
}

ok() { # ok CONDITION-EXIT-STATUS DESCRIPTION: 1 when it failed, so a test can say more
	tap_n=$((tap_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $tap_n - $2"
	else
		echo "not ok $tap_n - $2"
		tap_failed=$((tap_failed + 1))
		return 1
	fi
}

is() { # is GOT WANT DESCRIPTION (each of these, like ok, is 1 when it failed)
	[ "$1" = "$2" ]
	local rc=$?
	ok $rc "$3"
	[ $rc -eq 0 ] || echo "#   got '$1', want '$2'"
	return $rc
}

near() { # near GOT WANT RELATIVE-TOLERANCE DESCRIPTION
	awk -v g="$1" -v w="$2" -v t="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= t * w) }'
	local rc=$?
	ok $rc "$4"
	[ $rc -eq 0 ] || echo "#   got $1, want $2 within $3 relative"
	return $rc
}

within() { # within GOT WANT ABSOLUTE-TOLERANCE DESCRIPTION
	awk -v g="$1" -v w="$2" -v t="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= t) }'
	local rc=$?
	ok $rc "$4"
	[ $rc -eq 0 ] || echo "#   got $1, want $2 within $3"
	return $rc
}

below() { # below GOT LIMIT DESCRIPTION
	awk -v g="$1" -v l="$2" 'BEGIN { exit !(g < l) }'
	local rc=$?
	ok $rc "$3"
	[ $rc -eq 0 ] || echo "#   got $1, want below $2"
	return $rc
}

# Every event a test wrote (the files under its $tmp) must pass Suricata's own eve schema.
done_testing() {
	if [ -n "${tmp:-}" ] && [ -d "$tmp" ] && ! python3 "$tap_dir/eve-check.py" "$tmp"; then
		echo "# events in $tmp fail Suricata's eve schema"
		tap_failed=$((tap_failed + 1))
	fi
	exit $((tap_failed > 0))
}
