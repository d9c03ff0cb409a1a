# daemon.sh - the bloomd a shell test talks to; source it after tap.sh. It runs in the current
# directory from bloomd.conf, its log appended to err, its control socket at $sock.
C() { "$BUILD/bloomctl" -s "$sock" "$@"; }
start() { # in the background, until it answers (10 s at most); pid is its process
	"$BUILD/bloomd" -c bloomd.conf 2>>err &
	pid=$!
	for _ in $(seq 200); do
		C version >/dev/null 2>&1 && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}
stop() { kill -TERM "$pid" && wait "$pid"; local rc=$?; pid=; return $rc; }
