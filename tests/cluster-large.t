#!/usr/bin/env bash
# A list version of 400,000 entries from the stream is taken in slices: control is answered
# while it is, an entry in both versions is never out, the version is kept and survives a
# restart, a kill -9 half-way applies it again at the next start, and a net too broad in its
# last slice refuses it whole.
. "$(dirname "$0")/support/tap.sh"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/support/cluster.sh"
plan 10
shared() { C 1 --json lists | jq ".lists[] | select(.name == \"shared\") | .$1"; }
# version FILE FIRST COUNT: entries FIRST.. FIRST+COUNT-1 as addresses in 10/8, and 192.0.2.1
version() {
	python3 -c "import sys
f, n = int(sys.argv[1]), int(sys.argv[2])
print('addr 192.0.2.1')
for i in range(f, f + n): print('addr 10.%d.%d.%d' % (i >> 16 & 255, i >> 8 & 255, i & 255))" "$2" "$3" > "$1"
}
push() { R -x xadd bloomd:entries '*' node node9 op replace entry shared data < "$1" >/dev/null; }

redis_start
node_conf 1
sed -i "/^node = /a max_entry_bytes = 64MiB" n1/bloomd.conf
start 1
version v1 0 400000      # 10.0.0.0 ...
version v2 200000 400000 # half of v1's, and 200,000 new
push v1
wait_for 30 eval '[ "$(shared entries)" = 400001 ]'; ok $? "a 400,001-entry version from the stream is taken"

# While v2 is taken: control answers, and 192.0.2.1 and 10.3.13.64 (in both) never leave.
push v2
seen=0 out=0
for _ in $(seq 600); do
	[ "$(status 1 applying)" != null ] && seen=$((seen + 1))
	C 1 query addr 192.0.2.1 >/dev/null || out=$((out + 1))
	C 1 query addr 10.3.13.64 >/dev/null || out=$((out + 1))
	[ "$(shared version)" = 2 ] && [ "$(status 1 applying)" = null ] && break
done
[ "$seen" -gt 0 ]; ok $? "control is answered while it is taken in slices (seen applying $seen times)"
is "$out" 0 "entries in both versions answer throughout"
is "$(shared entries)" 400001 "the new version whole"
C 1 query addr 10.0.0.1 >/dev/null; is $? 1 "an entry only the old one had is gone"
C 1 query addr 10.9.39.191 >/dev/null; is $? 0 "and one only the new one has is there"

# Kept: after a restart the list starts from its kept copy, and the entry is not applied again.
stop 1
start 1
is "$(shared entries)/$(status 1 applied)" 400001/0 "after a restart the list has it from its kept copy"

# kill -9 half-way: the cursor stayed before the entry, so the next start applies it whole.
push v1
wait_for 10 eval '[ "$(status 1 applying)" != null ]'
kill -9 "${pid[1]}"
wait "${pid[1]}" 2>/dev/null
unset "pid[1]"
start 1
wait_for 30 eval '[ "$(status 1 applying)" = null ] && C 1 query addr 10.0.0.1 >/dev/null'
is "$(shared entries)" 400001 "killed half-way through a version, the next start takes it whole"
C 1 query addr 10.9.39.191 >/dev/null; is $? 1 "and none of the old one is left"

# A net broader than max_prefix4 in the version's last slice: refused whole, nothing of it held.
cp v2 v3
echo "net 10.0.0.0/4" >> v3
push v3
wait_for 30 grep -q "broader than" n1/err
is "$(shared entries)/$(C 1 query addr 10.9.39.191 >/dev/null; echo $?)" 400001/1 \
	"a version with a /4 net at its end is refused whole: $(grep -o 'a /4 net[^:]*' n1/err | head -n 1)"
done_testing
