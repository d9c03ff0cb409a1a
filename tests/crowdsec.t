#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# [list NAME] source = crowdsec against Debian's real CrowdSec local API (LAPI only, a private
# configuration and database): bloomd registered as a bouncer takes every ban at start, then
# the stream's changes (added, deleted, ended) within a refresh; the LAPI stopped leaves the
# list enforcing and stale, restarted it is asked for all again; a restart starts from the
# kept version; a key others may read, or a wrong one, is refused by name.
. "$(dirname "$0")/support/tap.sh"
. "$(dirname "$0")/support/daemon.sh"
plan 17
if ! command -v crowdsec >/dev/null || ! command -v cscli >/dev/null; then
	skip_all "no crowdsec (tools/install-deps.sh test)"
fi
tmp=$(mktemp -d)
pid=
lapi=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; [ -n "$lapi" ] && kill "$lapi" 2>/dev/null; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
sock=$tmp/ctl.sock
port=$(free_port)
mkdir state
. "$tap_dir/crowdsec-lapi.sh"
lapi_config "$tmp" "$port"
cs() { cscli -c "$tmp/config.yaml" "$@" 2>/dev/null; }
start_lapi() { # the LAPI alone (no log acquisition), until it answers
	crowdsec -c "$tmp/config.yaml" -no-cs >> lapi.log 2>&1 &
	lapi=$!
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
stop_lapi() { kill "$lapi" && wait "$lapi" 2>/dev/null; lapi=; }
held() { C query "$@" >/dev/null 2>&1 && echo 1 || echo 0; }
# Wait (up to 10 s) until each probe gives what is wanted: wait_for WANT PROBE...
wait_for() {
	local want=$1 got
	shift
	for _ in $(seq 100); do
		got=$(for p in "$@"; do held $p; done | tr -d '\n')
		[ "$got" = "$want" ] && break
		sleep 0.1
	done
	echo "$got"
}
fetch_state() { C --json lists | jq -r '.lists[] | select(.name == "cs") | .fetch.state'; }

cs machines add tester --password testpass -f "$tmp/local_api_credentials.yaml" --url "http://127.0.0.1:$port" >/dev/null
cs bouncers add bloomd -o raw > key
chmod 600 key
start_lapi; ok $? "CrowdSec's local API starts (port $port)"
cs decisions add --ip 192.0.2.1 --duration 1h >/dev/null
cs decisions add --range 198.51.100.0/24 --duration 1h >/dev/null
cs decisions add --ip 2001:db8::7 --duration 1h >/dev/null
cs decisions add --ip 192.0.2.2 --duration 3s >/dev/null
cs decisions add --ip 192.0.2.3 --duration 1h --type captcha >/dev/null

cat > bloomd.conf <<C
[list cs]
source = crowdsec
url = http://127.0.0.1:$port/
api_key_file = $tmp/key
refresh = 1
[control]
socket = $sock
[store]
dir = $tmp/state
C
start; ok $? "bloomd starts as a bouncer of it"
is "$(wait_for 1111 'addr 192.0.2.1' 'net 198.51.100.0/24' 'addr 2001:db8::7' 'addr 192.0.2.2')" 1111 \
	"every ban is taken at start: addresses, a range, IPv6"
is "$(held addr 192.0.2.3)" 0 "a captcha decision is not a ban"
is "$(wait_for 01 'addr 192.0.2.2' 'addr 192.0.2.1')" 01 "a ban leaves the list when it ends"
cs decisions delete --ip 192.0.2.1 >/dev/null
cs decisions add --ip 192.0.2.4 --duration 1h >/dev/null
is "$(wait_for 0111 'addr 192.0.2.1' 'addr 192.0.2.4' 'net 198.51.100.0/24' 'addr 2001:db8::7')" 0111 \
	"a decision deleted leaves within a refresh, one added joins, the others stay"
is "$(fetch_state)" current "the list's fetch is current"

stop_lapi
for _ in $(seq 200); do [ "$(fetch_state)" = stale ] && break; sleep 0.1; done
is "$(fetch_state)" stale "the LAPI stopped: the list is stale"
is "$(held addr 192.0.2.4)$(held net 198.51.100.0/24)" 11 "and keeps enforcing what it had"
asked=$(grep -c 'startup=true' lapi.log)
start_lapi; ok $? "the LAPI starts again"
cs decisions add --ip 192.0.2.5 --duration 1h >/dev/null
is "$(wait_for 11 'addr 192.0.2.5' 'addr 192.0.2.4')" 11 "after the gap the list follows again"
[ "$(grep -c 'startup=true' lapi.log)" -gt "$asked" ]; ok $? "asking for every decision again (startup=true), changes being unknown"

stop
stop_lapi
start
is "$(held addr 192.0.2.5)$(held addr 192.0.2.1)" 10 "a restart with the LAPI down starts from the kept version"
stop

chmod 644 key
start
grep -q "api_key_file $tmp/key: every user may read it (chmod o-r" err; ok $? "a key every user may read is refused, by name"
stop
mv key key.file && mkfifo -m 600 key
start; rc=$?
grep -q "api_key_file $tmp/key: not a regular file" err && [ $rc -eq 0 ]; ok $? "a key file that is a FIFO is refused, and bloomd starts"
stop
rm key && mv key.file key
echo 0123456789abcdef0123456789abcdef > key
chmod 600 key
start_lapi
start
for _ in $(seq 200); do grep -q "HTTP 403" err && break; sleep 0.1; done
grep -q "list cs: stale, .* cannot be fetched: the server answered HTTP 403" err; ok $? "a wrong key: the LAPI's 403 is said"
is "$(held addr 192.0.2.5)" 1 "and the list keeps enforcing its kept version"
stop
done_testing
