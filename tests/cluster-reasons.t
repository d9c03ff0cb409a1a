#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A connection to Redis that fails says why: a closed TCP port is "Connection refused", a Unix
# socket that is not there "No such file or directory", in the cluster's status and in the log
# (the vendored hiredis is built so that its strerror_r fills the buffer it is given).
. "$(dirname "$0")/support/tap.sh"
plan 4
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
C() { "$BUILD/bloomctl" -s "$tmp/ctl.sock" "$@"; }
# bloomd following REDIS, until its status names a reader error (10 s at most): the status's errors.
reasons_for() { # redis
	printf '[cluster]\nredis = %s\n[control]\nsocket = %s/ctl.sock\n[store]\ndir =\n' "$1" "$tmp" > bloomd.conf
	: > err
	"$BUILD/bloomd" -c bloomd.conf 2>>err &
	pid=$!
	for _ in $(seq 200); do
		errors=$(C --json cluster status 2>/dev/null | jq -r '.cluster.errors.reader // empty')
		[ -n "$errors" ] && grep -q "Redis reader connection" err && break
		sleep 0.05
	done
	kill "$pid"
	wait "$pid" 2>/dev/null
	pid=
}
reasons_for "tcp://127.0.0.1:$(free_port)"
is "$errors" "Redis reader connection: Connection refused" "a closed port: the status says the connection was refused"
grep -q "Redis reader connection: Connection refused" err; ok $? "and so does the log"
reasons_for "unix:$tmp/no-such.sock"
is "$errors" "Redis reader connection: No such file or directory" "a missing Unix socket: the status says it is not there"
grep -q "Redis reader connection: No such file or directory" err; ok $? "and so does the log"
