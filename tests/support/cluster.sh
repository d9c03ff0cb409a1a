# SPDX-License-Identifier: BSD-2-Clause
# cluster.sh - a redis-server and bloomd nodes for the cluster tests; source it after tap.sh.
# It skips the test without redis-server, and works in $tmp (a directory others may enter,
# removed at exit with the nodes in pid[N] and Redis stopped).
if ! command -v redis-server >/dev/null; then
	echo "1..0 # SKIP no redis-server (Debian's redis-server; tools/install-deps.sh test)"
	exit 0
fi
tmp=$(mktemp -d)
chmod 755 "$tmp"
declare -A pid
at_exit=: # what a test adds to the clean-up, run before its directory goes (its pid files are there)
trap 'for p in "${pid[@]}"; do kill "$p" 2>/dev/null; done; wait "${pid[@]}" 2>/dev/null; redis-cli -s "$tmp/redis.sock" shutdown nosave >/dev/null 2>&1; umount "$tmp/disk" 2>/dev/null; eval "$at_exit"; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

R() { redis-cli -s "$tmp/redis.sock" "$@"; }
redis_start() {
	redis-server --port 0 --unixsocket "$tmp/redis.sock" --dir "$tmp" --appendonly yes --appendfsync always \
		--enable-debug-command local \
		--daemonize yes --pidfile "$tmp/redis.pid" --logfile "$tmp/redis.log" --save ''
	for _ in $(seq 100); do R ping >/dev/null 2>&1 && return 0; sleep 0.05; done
	return 1
}
C() { local n=$1; shift; "$BUILD/bloomctl" -s "$tmp/n$n/s.sock" "$@"; }
node_conf() { # node_conf N [MAXLEN [SNAPSHOT_EVERY]]
	mkdir -p "n$1"
	cat > "n$1/bloomd.conf" <<C
[control]
socket = $tmp/n$1/s.sock
[store]
dir = $tmp/n$1/state
fsync = always
[filter]
auto_rebuild = no
[cluster]
redis = unix:$tmp/redis.sock
node = node$1
maxlen = ${2:-1000000}
snapshot_every = ${3:-0}
[output]
events = redis
events_fallback = $tmp/n$1/fallback.json
[list shared]
category = scanner
C
}
declare -A node_in # node_in[N]="ip netns exec NS": where node N runs (default: here)
start() {
	${node_in[$1]:-} "$BUILD/bloomd" -c "n$1/bloomd.conf" 2>>"n$1/err" &
	pid[$1]=$!
	for _ in $(seq 200); do
		C "$1" version >/dev/null 2>&1 && return 0
		kill -0 "${pid[$1]}" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}
stop() { kill -TERM "${pid[$1]}" && wait "${pid[$1]}"; local rc=$?; unset "pid[$1]"; return $rc; }
entries() { C "$1" list --list local | sort | md5sum | cut -c1-32; }
status() { C "$1" --json cluster status | jq -r ".cluster.$2"; }
wait_for() { # wait_for SECONDS COMMAND...: until it succeeds
	local n=$(($1 * 20)); shift
	for _ in $(seq "$n"); do "$@" && return 0; sleep 0.05; done
	return 1
}
# A Redis that fails over, on loopback: sentinel_redis M R1 R2 S starts a master on port M (AOF
# on), replicas of it on R1 and R2, and a redis-sentinel on S watching it as bloomdm (down after
# 1 s); every pid file in $tmp, killed at exit. RP PORT ARGS... asks one of them.
RP() { local port=$1; shift; redis-cli -p "$port" "$@"; }
redis_on() { # redis_on PORT [ARGS]: a redis-server on 127.0.0.1:PORT, AOF on
	mkdir -p "r$1"
	redis-server --port "$1" --bind 127.0.0.1 --dir "$tmp/r$1" --appendonly yes --save '' --daemonize yes \
		--pidfile "$tmp/r$1.pid" --logfile "$tmp/r$1.log" "${@:2}"
}
# sentinel_knows N: whether the `sentinel replicas` reply on stdin names N replicas, each
# reachable (flags "slave" alone: not disconnected, not down). A sentinel learns of replicas
# from the master's INFO: one that has not yet when the master goes has none to promote.
sentinel_knows() {
	paste - - | awk -F'\t' -v want="$1" '$1 == "flags" && $2 == "slave" { good++ } END { exit !(good == want) }'
}
sentinel_redis() {
	at_exit='for f in "$tmp"/*.pid; do kill -9 "$(cat "$f")" 2>/dev/null; done'
	redis_on "$1"
	redis_on "$2" --replicaof 127.0.0.1 "$1"
	redis_on "$3" --replicaof 127.0.0.1 "$1"
	printf 'port %s\nbind 127.0.0.1\ndir %s\nsentinel monitor bloomdm 127.0.0.1 %s 1\nsentinel down-after-milliseconds bloomdm 1000\nsentinel failover-timeout bloomdm 10000\nsentinel parallel-syncs bloomdm 2\n' \
		"$4" "$tmp" "$1" > sentinel.conf
	redis-sentinel "$tmp/sentinel.conf" --daemonize yes --pidfile "$tmp/sentinel.pid" --logfile "$tmp/sentinel.log"
}
