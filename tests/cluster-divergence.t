#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Divergence seen and healed. Each node publishes a digest of what it holds ([cluster]
# digest_every) and compares it with the others' at the same place in the stream: two nodes
# that take the same stream differently (one refuses a net broader than its max_prefix4) both
# say divergent, in the status, the metric and one log line, and agree again once the entry
# goes. Then a real split brain, with wait_replicas = 0: a master cut off from its replica
# and its sentinel by nftables (in a network namespace) keeps taking one node's adds while
# the sentinel promotes the replica; after the heal the old master follows the new one and
# its copy of those adds is gone. The node that made them finds them missing from the stream
# and sends them again: every node ends with every acknowledged change, and the digests agree.
. "$(dirname "$0")/support/tap.sh"
here=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" -eq 0 ] || skip_all "needs root (a network namespace, nftables)"
command -v nft >/dev/null || skip_all "no nft (Debian's nftables; tools/install-deps.sh test)"
command -v redis-sentinel >/dev/null || skip_all "no redis-sentinel (Debian's redis-sentinel; tools/install-deps.sh test)"
. "$here/support/cluster.sh"
plan 13

# ---- two nodes that take the same stream differently ----
redis_start
for n in 1 2; do
	node_conf $n
	sed -i -e 's|^\[cluster\]$|[cluster]\ndigest_every = 4|' -e '/^events = redis$/d' n$n/bloomd.conf
done
sed -i 's|^\[cluster\]$|[cluster]\nmax_prefix4 = 20|' n2/bloomd.conf
start 1 && start 2
C 1 add addr 192.0.2.1 >/dev/null
wait_for 10 C 2 query addr 192.0.2.1 >/dev/null
C 1 add net 10.0.0.0/16 >/dev/null
t0=$(date +%s)
wait_for 60 eval '[ "$(status 1 state)" = divergent ] && [ "$(status 2 state)" = divergent ]'
ok $? "node 2 refuses a /16 that node 1 holds: both say divergent, $(($(date +%s) - t0)) s after (within a minute)"
has() { grep -qF -- "$2" <<<"$1"; ok $? "$3"; } # has TEXT PART DESCRIPTION
has "$(status 2 digest.divergence)" "list local differs from node node1's" "the status says with whom and where: $(status 2 digest.divergence)"
C 2 metrics | grep -q '^bloomd_cluster_divergent 1$'; ok $? "the metric says so"
sleep 8
is "$(grep -c 'cluster: divergent' n2/err)" 1 "one log line for the stretch, not one a period"
C 1 del net 10.0.0.0/16 >/dev/null
wait_for 30 eval '[ "$(status 1 state)" = following ] && [ "$(status 2 state)" = following ]'
ok $? "the net gone, they agree again, and say so"
stop 1 && stop 2
R shutdown nosave >/dev/null 2>&1
rm -rf n1 n2

# ---- a split brain: the master cut off from its replica and its sentinel ----
ns=bloomd-split$$
ip netns add $ns 2>/dev/null || { skip 8 "cannot make a network namespace here"; exit 0; }
at_exit="ip netns del $ns 2>/dev/null; for f in $tmp/*.pid; do kill -9 \$(cat \$f) 2>/dev/null; done"
ip -n $ns link set lo up
for a in 2 3 4; do ip -n $ns addr add 127.0.0.$a/8 dev lo; done
p=6392 s=26392
inns() { ip netns exec $ns "$@"; }
RN() { inns redis-cli -h "$1" -p "$2" "${@:3}"; }
for a in 2 3; do # the master on .2, its replica on .3, each connecting from its own address
	mkdir -p r$a
	inns redis-server --port $p --bind 127.0.0.$a --bind-source-addr 127.0.0.$a --protected-mode no --dir "$tmp/r$a" \
		--appendonly yes --save '' --daemonize yes --pidfile "$tmp/r$a.pid" --logfile "$tmp/r$a.log" \
		$([ $a = 3 ] && echo --replicaof 127.0.0.2 $p)
done
cat > sentinel.conf <<S
port $s
bind 127.0.0.4
bind-source-addr 127.0.0.4
protected-mode no
dir $tmp
sentinel monitor bloomdm 127.0.0.2 $p 1
sentinel down-after-milliseconds bloomdm 1000
sentinel failover-timeout bloomdm 4000
S
inns redis-sentinel "$tmp/sentinel.conf" --daemonize yes --pidfile "$tmp/sentinel.pid" --logfile "$tmp/sentinel.log"
wait_for 30 eval '[ "$(RN 127.0.0.2 $p info replication | grep -c "^slave0:.*state=online")" = 1 ] &&
	[ "$(RN 127.0.0.4 $s sentinel get-master-addr-by-name bloomdm | head -n 1)" = 127.0.0.2 ] &&
	RN 127.0.0.4 $s sentinel replicas bloomdm | sentinel_knows 1'
ok $? "a master, its replica and a sentinel that knows it, in a namespace"
for n in 1 2; do
	node_conf $n
	sed -i -e "s|^redis = .*|sentinels = 127.0.0.4:$s\nsentinel_master = bloomdm\ntimeout = 2\ndigest_every = 4|" \
		-e '/^events = redis$/d' n$n/bloomd.conf
	node_in[$n]="ip netns exec $ns"
done
start 1 && start 2
C 1 add addr 192.0.2.1 >/dev/null
wait_for 15 eval 'C 2 query addr 192.0.2.1 >/dev/null'
ok $? "two nodes share a change through the master the sentinel names"
stop 2 # node B is down through the split brain, and comes back to the new master

inns nft -f - <<N
table inet split {
	chain in {
		type filter hook input priority -500;
		ip saddr 127.0.0.2 ip daddr { 127.0.0.3, 127.0.0.4 } drop
		ip saddr { 127.0.0.3, 127.0.0.4 } ip daddr 127.0.0.2 drop
	}
}
N
for i in $(seq 1 150); do C 1 add addr "198.51.100.$i" >/dev/null; done
wait_for 10 eval '[ "$(status 1 outbox)" = 0 ]'
ok $? "cut off from the others, the old master takes node A's 150 adds (wait_replicas = 0)"
# Within 90 s: a sentinel held past 2 s by a loaded machine stays in TILT mode for 30 s, doing nothing.
wait_for 90 eval '[ "$(RN 127.0.0.4 $s sentinel get-master-addr-by-name bloomdm | head -n 1)" = 127.0.0.3 ]'
ok $? "the sentinel promotes the replica" || tail -n 30 sentinel.log r3.log | sed 's/^/#   /'
inns nft delete table inet split
wait_for 30 eval 'RN 127.0.0.2 $p role | head -n 1 | grep -qx slave && [ "$(RN 127.0.0.2 $p xlen bloomd:entries)" = "$(RN 127.0.0.3 $p xlen bloomd:entries)" ]'
ok $? "healed, the old master follows the new one, and its copy of the adds is gone ($(RN 127.0.0.3 $p xlen bloomd:entries) entries)"

start 2
wait_for 60 eval '[ "$(C 2 list --list local | wc -l)" = 151 ] && [ "$(C 1 list --list local | wc -l)" = 151 ]'
ok $? "node A sends its lost changes again: both nodes hold all 151 ($(C 1 list --list local | wc -l), $(C 2 list --list local | wc -l))"
[ "$(status 1 digest.resent)" -ge 150 ]; ok $? "node A's status counts them ($(status 1 digest.resent) sent again)"
wait_for 30 eval '[ "$(status 1 state)/$(status 2 state)" = following/following ] &&
	d=$(RN 127.0.0.3 $p hgetall bloomd:entries:digests) && [ "$(sed -n 2p <<<"$d" | tail -n +2)" = "$(sed -n 4p <<<"$d" | tail -n +2)" ]'
d=$(RN 127.0.0.3 $p --no-raw hgetall bloomd:entries:digests)
one=$(RN 127.0.0.3 $p hget bloomd:entries:digests node1) two=$(RN 127.0.0.3 $p hget bloomd:entries:digests node2)
is "$(head -n 1 <<<"$one") $(tail -n +2 <<<"$one" | md5sum)" "$(head -n 1 <<<"$two") $(tail -n +2 <<<"$two" | md5sum)" \
	"the digests agree, at the same place"
