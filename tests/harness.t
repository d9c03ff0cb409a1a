#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The shell tests' own helpers: the ports their listeners take, and a failed start that says why.
. "$(dirname "$0")/support/tap.sh"
. "$(dirname "$0")/support/daemon.sh"
plan 6
tmp=$(mktemp -d)
pid=
holder=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; [ -n "$holder" ] && kill "$holder" 2>/dev/null; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
sock=$tmp/ctl.sock
read -r low _ < /proc/sys/net/ipv4/ip_local_port_range

# A port in the ephemeral range can be held by any client's connection, or by its TIME_WAIT
# for a minute after: a listener there fails now and then, whatever the test.
bad=0
for _ in $(seq 300); do
	port=$(free_port)
	[ "$port" -ge 10000 ] && [ "$port" -lt "$low" ] || bad=$((bad + 1))
done
is "$bad" 0 "free_port: 300 ports, each below the ephemeral range ($low)"

# The same draw with its first port held gives another (RANDOM reseeded; the function runs
# in this shell, as a subshell would draw anew).
RANDOM=7
free_port > first
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen()
open("held", "w").close(); time.sleep(60)' "$(cat first)" &
holder=$!
for _ in $(seq 100); do [ -e held ] && break; sleep 0.05; done
RANDOM=7
free_port > second
ok "$([ -e held ] && [ "$(cat first)" != "$(cat second)" ]; echo $?)" "free_port passes over a port a socket holds"
kill "$holder"; holder=

# Several listeners at once (a master, its replicas and a sentinel) need distinct ports: draws
# from a range of three must still give three.
is "$(free_port() { echo $((10000 + RANDOM % 3)); }; free_ports 3 | sort -u | wc -l)" 3 "free_ports: distinct ports"

# A client's port left in TIME_WAIT: bloomd cannot listen there, and start says so.
python3 -c '
import socket
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen()
c = socket.create_connection(srv.getsockname()); port = c.getsockname()[1]
a, _ = srv.accept(); c.close(); a.close(); srv.close()
print(port)' > waiting
port=$(cat waiting)
ss -Htan "sport = :$port" | grep -q TIME-WAIT; ok $? "a client's closed connection leaves its port in TIME_WAIT"
printf '[control]\nsocket = %s\n[store]\ndir = %s/state\n[metrics]\nlisten = 127.0.0.1:%s\n' "$sock" "$tmp" "$port" > bloomd.conf
start > said; is $? 1 "bloomd does not start on that port"
grep -q "^#   bloomd: error: \[metrics\] listen: cannot listen on 127.0.0.1:$port: Address already in use" said
ok $? "and start shows what bloomd said, as TAP comments"
cat said
pid=
done_testing
