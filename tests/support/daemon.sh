# SPDX-License-Identifier: BSD-2-Clause
# daemon.sh - the bloomd a shell test talks to; source it after tap.sh. It runs in the current
# directory from bloomd.conf, its log appended to err, its control socket at $sock.
C() { "$BUILD/bloomctl" -s "$sock" "$@"; }
start() { # in the background, until it answers (10 s at most); pid is its process
	"$BUILD/bloomd" -c bloomd.conf 2>>err &
	pid=$!
	for _ in $(seq 200); do
		C version >/dev/null 2>&1 && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	# What bloomd said, as TAP comments, so a failed start names its cause.
	tail -n 5 err 2>/dev/null | sed 's/^/#   /'
	return 1
}
on_small_disk() { # on_small_disk SIZE: as root, $tmp with a tmpfs of SIZE at $tmp/disk (else a TAP skip)
	if [ "$(id -u)" -ne 0 ]; then
		echo "1..0 # SKIP needs root to mount a small tmpfs"
		exit 0
	fi
	tmp=$(mktemp -d)
	pid=
	trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; umount "$tmp/disk" 2>/dev/null; rm -rf "$tmp"' EXIT
	mkdir "$tmp/disk"
	if ! mount -t tmpfs -o size="$1" tmpfs "$tmp/disk" 2>/dev/null; then
		echo "1..0 # SKIP cannot mount a tmpfs here"
		exit 0
	fi
}
stop() { kill -TERM "$pid" && wait "$pid"; local rc=$?; pid=; return $rc; }
