#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Three sensors taking adds and deletes of the same few entries, one at a time on random
# nodes, while nodes are killed (-9) right after acknowledging, Redis is killed and
# restarted from its AOF, and a node is killed while Redis is down. At the end every node
# holds exactly what the stream says (each change taken once, at its first appearance,
# in stream order), and every acknowledged change is in the stream: none lost.
. "$(dirname "$0")/support/tap.sh"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/support/cluster.sh"
plan 6
CHANGES=${CHAOS_CHANGES:-400}
RANDOM=7
alive() { [ -n "${pid[$1]:-}" ]; }
crash() { disown "${pid[$1]}" 2>/dev/null; kill -9 "${pid[$1]}" 2>/dev/null; unset "pid[$1]"; sleep 0.1; }

redis_start; ok $? "redis-server starts, AOF with appendfsync always"
for n in 1 2 3; do node_conf $n; start $n; done
: > acked
redis_down=0
for i in $(seq 1 "$CHANGES"); do
	n=$((RANDOM % 3 + 1))
	alive "$n" || start "$n"
	addr="10.200.0.$((RANDOM % 40 + 1))"
	op=$([ $((RANDOM % 3)) -eq 0 ] && echo del || echo add)
	if C "$n" "$op" addr "$addr" >/dev/null 2>&1; then
		echo "$op addr $addr" >> acked
	fi
	case $((i % 50)) in
	7) crash "$n" ;;                                 # right after it acknowledged
	20) kill -9 "$(cat redis.pid)"; redis_down=1 ;;   # Redis gone, changes go on
	25) crash $(((n % 3) + 1)) ;;                     # a node killed while Redis is down
	35) redis_start; redis_down=0 ;;                   # back from its AOF
	40) kill -STOP "$(cat redis.pid)" ;;              # Redis stalls: the next change is acknowledged
	41) sleep 0.2; crash "$n"; kill -CONT "$(cat redis.pid)" ;; # unanswered, its node killed: sent again
	esac
done
[ "$redis_down" -eq 0 ] || redis_start
for n in 1 2 3; do alive "$n" || start "$n"; done
drained() { for n in 1 2 3; do [ "$(C $n --json cluster status | jq .cluster.outbox)" = 0 ] || return 1; done; }
for _ in $(seq 300); do drained && break; sleep 0.1; done
drained; ok $? "every outbox drains ($(wc -l < acked) changes acknowledged of $CHANGES)"

# What the stream says: each identity once, at its first appearance, in stream order.
R --json xrange bloomd:entries - + | jq -r '.[] | .[1] as $f | [range(0; $f | length; 2) | {($f[.]): $f[. + 1]}] | add |
	"\(.node)/\(.change) \(.op) \(.entry)"' > stream.txt
awk '!seen[$1]++ { $1 = ""; sub(/^ /, ""); print }' stream.txt > first.txt
awk '{ entry = $2 " " $3; if ($1 == "add") have[entry] = 1; else delete have[entry] } END { for (e in have) print e }' first.txt |
	sort > want.txt
sorted() { C "$1" list --list local | grep '^addr 10\.200\.' | sort; }
settled() { for n in 1 2 3; do [ "$(sorted $n)" = "$(cat want.txt)" ] || return 1; done; }
for _ in $(seq 300); do settled && break; sleep 0.1; done
for n in 1 2 3; do
	is "$(sorted $n | md5sum)" "$(md5sum < want.txt)" "node $n holds exactly what the stream says ($(wc -l < want.txt) entries)"
done
lost=0
while read -r op kind value; do
	grep -qx "$op $kind $value" first.txt || { echo "#   lost: $op $kind $value"; lost=$((lost + 1)); }
done < acked
is "$lost" 0 "every acknowledged change is in the stream ($(($(wc -l < stream.txt) - $(wc -l < first.txt))) copies sent again and passed)"
done_testing
