#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Sentinels that answer what no Sentinel sends: bytes that are not RESP, and a master whose host
# holds control characters. bloomd lives on, and its cluster status names each (escaped, so it
# is valid JSON and forges no log line), never an empty error.
. "$(dirname "$0")/support/tap.sh"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/support/cluster.sh"
plan 7
sentinel=
at_exit='[ -n "$sentinel" ] && kill "$sentinel" 2>/dev/null'
reader_error() { status 1 errors.reader; }
for kind in garbage host; do
	port=$(free_port)
	python3 "$here/support/hostile-sentinel.py" "$port" "$kind" &
	sentinel=$!
	for _ in $(seq 100); do ss -Hltn "sport = :$port" | grep -q . && break; sleep 0.05; done
	node_conf 1
	sed -i "s|^redis = .*|sentinels = 127.0.0.1:$port\nsentinel_master = fleet\ntimeout = 2|" n1/bloomd.conf
	start 1
	wait_for 10 eval '[ -n "$(reader_error | grep -v "^null$")" ]'
	case $kind in
	garbage) reader_error | grep -q "^sentinel 127.0.0.1:$port: Protocol error"
		ok $? "binary garbage from a sentinel is named: $(reader_error)" ;;
	host) reader_error | grep -qF 'names a master whose host holds control characters or bytes that are not ASCII ('"'"'10.0.0.1\x0d\x0aX-Evil'"'"'): refused'
		ok $? "a master's host with control characters is refused by name: $(reader_error)" ;;
	esac
	C 1 --json cluster status | jq -e . >/dev/null; ok $? "the status is valid JSON"
	kill -0 "${pid[1]}"; ok $? "bloomd lives on"
	stop 1
	kill "$sentinel"; wait "$sentinel" 2>/dev/null
	sentinel=
	cat n1/err >> err
	rm -rf n1
done
grep -q "X-Evil" err && ! grep -qP '[\x00-\x08\x0b-\x1f\x7f-\xff]' err
ok $? "the log named them, and no control character or other byte reached it"
