#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# No client can starve the control socket: 1,100 HTTP connections trickling a byte at a time
# into [metrics] get at most max_connections (the rest a 503), each cut off after timeout
# however it trickles; bloomctl answers meanwhile and bloomd's CPU stays low. With the
# descriptors gone (a low LimitNOFILE and a high max_connections), the metrics listener
# pauses instead of spinning on accept errors, and the descriptor the control socket keeps
# in reserve still lets an operator in.
. "$(dirname "$0")/support/tap.sh"
. "$(dirname "$0")/support/daemon.sh"
command -v python3 >/dev/null || { echo "1..0 # SKIP no python3"; exit 0; }
plan 18
tmp=$(mktemp -d)
pid=
flood=
trap '[ -n "$flood" ] && kill "$flood" 2>/dev/null; [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
sock=$tmp/ctl.sock
port=$(free_port)

# flood.py PORT COUNT SECONDS: COUNT connections, each sending a byte of a request every half
# second for SECONDS; prints how many were answered 503, and how many the server closed. The
# file "connected" says when its connections are made.
cat > flood.py <<'P'
import resource, socket, sys, time
port, count, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
resource.setrlimit(resource.RLIMIT_NOFILE, (count + 64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
request = b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + b"X: " + b"y" * 4000
conns, busy, closed = [], 0, 0
for _ in range(count):
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect(("127.0.0.1", port))
        s.setblocking(False)
        conns.append(s)
    except OSError:
        s.close()
open("connected", "w").close()  # for the test: the connections are made
sent = 0
end = time.time() + seconds
while time.time() < end and conns:
    for s in list(conns):
        try:
            data = s.recv(4096)
            busy += data.startswith(b"HTTP/1.1 503")
            closed += 1  # answered (and closed after), or closed
            conns.remove(s)
            s.close()
            continue
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
            conns.remove(s)
            s.close()
            continue
        try:
            s.send(request[sent:sent + 1])
        except OSError:
            pass
    sent += 1
    time.sleep(0.5)
print(busy, closed, len(conns))
P
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
cpu_since() { # cpu_since TICKS SECONDS: bloomd's share of a CPU since cpu_ticks said TICKS, in percent
	awk -v d=$(($(cpu_ticks) - $1)) -v hz="$(getconf CLK_TCK)" -v s="$2" 'BEGIN { printf "%.0f", 100 * d / hz / s }'
}
answers_within() { # answers_within SECONDS: bloomctl stats answers in time
	local t0 t1
	t0=$(date +%s%N)
	timeout "$1" "$BUILD/bloomctl" -s "$sock" --json stats > stats.json 2>stats.err || return 1
	t1=$(date +%s%N)
	echo "$(((t1 - t0) / 1000000))" > answer_ms
}
stats_until() { # stats_until JQ-CONDITION SECONDS: stats.json once the condition holds, or after SECONDS
	local _
	for _ in $(seq $((10 * $2))); do
		C --json stats > stats.json 2>/dev/null && jq -e "$1" stats.json >/dev/null && return 0
		sleep 0.1
	done
	return 1
}
config() { # config MAX-CONNECTIONS TIMEOUT
	cat > bloomd.conf <<C
[control]
socket = $sock
[store]
dir = $tmp/state
[output]
events =
[metrics]
listen = 127.0.0.1:$port
max_connections = $1
timeout = $2
C
}

held_connections() { C --json stats 2>/dev/null | jq -e .stats.metrics_http.connections 2>/dev/null || echo 0; }
# peak_until LIMIT TENTHS: the most metrics connections seen held (in peak), sampled until
# LIMIT are seen or TENTHS of a second pass
peak_until() {
	local _ n
	for _ in $(seq "$2"); do
		n=$(held_connections)
		[ "$n" -gt "$(cat peak)" ] && echo "$n" > peak
		[ "$(cat peak)" -ge "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# under_flood MAX-CONNECTIONS TIMEOUT DESCRIPTORS CONNECTIONS SECONDS: bloomd started with so
# many, the flood on until its connections are made (the held ones sampled meanwhile, in peak),
# bloomd's CPU time noted (ticks0); then whether bloomctl stats answers within 2 s.
under_flood() {
	config "$1" "$2"
	ulimit -Sn "$3"
	start; ok $? "bloomd starts with $3 descriptors"
	rm -f connected
	echo 0 > peak
	python3 flood.py "$port" "$4" "$5" > flood.out &
	flood=$!
	# python's start and the connections take longer on a loaded machine: 20 s at most
	for _ in $(seq 200); do [ -e connected ] && break; peak_until "$1" 1 && sleep 0.1; done
	sleep 0.5
	ticks0=$(cpu_ticks)
	answers_within 2
}

# ---- 1,100 trickling connections against the default max_connections ----
# Each connection held is cut 10 s after its accept. The flood ends once all are closed.
under_flood 64 10 1024 1100 40; ok $? "bloomctl stats answers within 2 s during the flood ($(cat answer_ms 2>/dev/null) ms)"
peak_until 64 50
is "$(cat peak)" 64 "the metrics listener holds max_connections, no more"
sleep 3
cpu=$(cpu_since "$ticks0" 3)
below "$cpu" 25 "bloomd's CPU stays low meanwhile ($cpu%)"
wait "$flood"; flood=
read -r busy closed open < flood.out
[ "$open" -eq 0 ] && [ "$closed" -eq 1100 ]; ok $? "bloomd closed every connection, none left trickling ($closed closed, $open open)"
C --json stats > stats.json
refused=$(jq .stats.metrics_http.refused stats.json)
timed_out=$(jq .stats.metrics_http.timed_out stats.json)
is "$((refused + timed_out))" 1100 "each was turned away or cut off at timeout ($(jq -c .stats.metrics_http stats.json))"
is "$busy" "$refused" "and each turned away was answered 503"
exec 3<>"/dev/tcp/127.0.0.1/$port" && printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3 && timeout 5 cat <&3 > scrape; exec 3<&-
head -n 1 scrape | grep -q "^HTTP/1.1 200"; ok $? "after the flood a scrape is answered"
stop

# ---- no descriptor left: the listener pauses, the operator still gets in ----
under_flood 1024 3 96 200 5; ok $? "with every descriptor taken, bloomctl stats still answers within 2 s ($(cat answer_ms 2>/dev/null) ms)"
stats_until '.stats.metrics_http.accept_errors >= 1' 5; ok $? "the metrics listener ran out of descriptors ($(jq -c .stats.metrics_http stats.json))"
sleep 2
cpu=$(cpu_since "$ticks0" 2)
below "$cpu" 25 "and paused instead of spinning ($cpu%)"
wait "$flood"; flood=
sleep 1.5
answers_within 2; ok $? "once the flood is gone, bloomctl answers"
stop; ok $? "bloomd stops cleanly"

# ---- the control socket: others holding every slot they can still leave root a way in ----
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	ulimit -Sn 1024
	chmod 755 "$tmp"
	start
	# hold.py SOCKET N RELEASE: N connections held until the file RELEASE exists (30 s at most)
	cat > hold.py <<'P'
import os, socket, sys, time
held = []
for _ in range(int(sys.argv[2])):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    held.append(s)
for _ in range(60):
    if os.path.exists(sys.argv[3]):
        break
    for s in held:
        try:
            s.send(b"q")  # a line that never ends: the idle timer restarts each time
        except OSError:
            pass
    time.sleep(0.5)
P
	chmod 666 "$sock" # the socket is 0660: let others connect, as a [control] group would some
	cp "$BUILD/bloomctl" "$tmp/bloomctl"
	as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
	as_nobody "$tmp/bloomctl" -s "$sock" version >/dev/null; ok $? "nobody may connect"
	as_nobody /usr/bin/python3 hold.py "$sock" 64 "$tmp/release" &
	flood=$!
	# Until bloomd has taken what it will of the 64 (python's start and the accepts take longer on a loaded machine).
	for _ in $(seq 100); do
		clients=$(C --json stats | jq .stats.control.clients)
		[ "${clients:-0}" -ge 61 ] && break
		sleep 0.1
	done
	sleep 0.3 # and a moment more, in which one past the limit would show
	is "$(C --json stats | jq .stats.control.clients)" 61 "64 connections by nobody: 60 held, the rest turned away (61 with this one)"
	as_nobody "$tmp/bloomctl" -s "$sock" version >/dev/null 2>&1; ok $((! $?)) "another of nobody's is turned away"
	answers_within 2; ok $? "root is still served ($(cat answer_ms) ms)"
	touch "$tmp/release"
	wait "$flood"; flood=
	stop
else
	for _ in $(seq 4); do tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP needs root, user nobody and setpriv"; done
fi
done_testing
