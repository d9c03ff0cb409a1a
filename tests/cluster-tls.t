#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The fleet across networks it does not own: a real redis-server master and replica that speak
# TLS alone (no plain port, client certificates required), a redis-sentinel over TLS, and
# certificates made here with openssl. Sensors find the master through the sentinel, verify
# the server's certificate and name, log in as a Redis ACL user with the least rights a node
# needs (doc/operations.md), and share entries. A wrong CA or a wrong name is refused, and the
# status says why; a node whose user may only read follows and says it cannot publish.
. "$(dirname "$0")/support/tap.sh"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/support/cluster.sh"
command -v redis-sentinel >/dev/null || skip_all "no redis-sentinel (Debian's redis-sentinel; tools/install-deps.sh test)"
command -v openssl >/dev/null || skip_all "no openssl (Debian's openssl; tools/install-deps.sh test)"
ldd "$(command -v redis-server)" | grep -q libssl || skip_all "this redis-server is built without TLS"
plan 16
has() { grep -qF -- "$2" <<<"$1"; ok $? "$3"; } # has TEXT PART DESCRIPTION
{ read -r m; read -r r1; read -r s; } < <(free_ports 3)
at_exit='for f in "$tmp"/*.pid; do kill -9 "$(cat "$f")" 2>/dev/null; done'

# A CA, another CA nobody trusts, the servers' certificate (a name and the address) and the nodes'.
cert() { # cert NAME CA SUBJECT [SAN]
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$1.key" -out "$1.csr" -subj "$3" 2>/dev/null &&
		openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -out "$1.pem" -days 2 \
			${4:+-extfile <(printf 'subjectAltName=%s\n' "$4")} 2>/dev/null
}
for ca in ca other; do
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout $ca.key -out $ca.pem -days 2 \
		-subj "/CN=bloomd test $ca" 2>/dev/null
done
cert server ca /CN=redis.test DNS:redis.test,IP:127.0.0.1 && cert node ca /CN=node && cert stranger other /CN=stranger
ok $? "a CA, the servers' certificate and the nodes' made with openssl"

TLS_ARGS="--tls-cert-file $tmp/server.pem --tls-key-file $tmp/server.key --tls-ca-cert-file $tmp/ca.pem --tls-auth-clients yes"
# The least a publishing node needs, as doc/operations.md gives it, and a user that may only read.
least=$(grep '^user bloomd on >SECRET ' "$here/../doc/operations.md")
[ -n "$least" ] || { echo "doc/operations.md gives no least ACL" >&2; exit 1; }
cat > users.acl <<A
user default on nopass ~* &* +@all
${least/>SECRET/>node-secret}
user watcher on >watch-secret resetkeys %R~bloomd:* resetchannels -@all +xread +xrange +xrevrange +xinfo|stream +eval +hgetall +role +ping
A
redis_on() { # redis_on PORT [ARGS]: TLS only, AOF on
	mkdir -p "r$1"
	redis-server --port 0 --tls-port "$1" $TLS_ARGS --tls-replication yes --bind 127.0.0.1 --dir "$tmp/r$1" \
		--aclfile "$tmp/users.acl" --appendonly yes --save '' --daemonize yes --pidfile "$tmp/r$1.pid" \
		--logfile "$tmp/r$1.log" "${@:2}"
}
RT() { local port=$1; shift; redis-cli --tls --cacert ca.pem --cert node.pem --key node.key -p "$port" "$@"; }
redis_on $m
redis_on $r1 --replicaof 127.0.0.1 $m
wait_for 10 eval '[ "$(RT $m info replication | grep -c "^slave[0-9].*state=online")" = 1 ]'
ok $? "a master and a replica in sync over TLS, no plain port"
cat > sentinel.conf <<S
port 0
tls-port $s
tls-cert-file $tmp/server.pem
tls-key-file $tmp/server.key
tls-ca-cert-file $tmp/ca.pem
tls-auth-clients yes
tls-replication yes
bind 127.0.0.1
dir $tmp
sentinel monitor bloomdm 127.0.0.1 $m 1
sentinel down-after-milliseconds bloomdm 1000
S
redis-sentinel "$tmp/sentinel.conf" --daemonize yes --pidfile "$tmp/sentinel.pid" --logfile "$tmp/sentinel.log"
wait_for 30 eval '[ "$(RT $s sentinel get-master-addr-by-name bloomdm 2>/dev/null | tail -n 1)" = $m ] &&
	RT $s sentinel replicas bloomdm 2>/dev/null | sentinel_knows 1'
ok $? "redis-sentinel watches it over TLS, and knows the replica"

tls_node() { # tls_node N USER PASSWORD WHERE [KEY = VALUE...]: a node over TLS with the nodes' certificate
	node_conf "$1"
	local where=$4 extra
	extra=$(printf '%s\\n' "${@:5}")
	sed -i "s|^redis = .*|$where\nuser = $2\npassword = $3\ntls = yes\ntls_ca_file = $tmp/ca.pem\ntls_cert_file = $tmp/node.pem\ntls_key_file = $tmp/node.key\ntimeout = 2\n$extra|" "n$1/bloomd.conf"
	sed -i '/^events = redis$/d' "n$1/bloomd.conf"
}
tls_node 1 bloomd node-secret "sentinels = 127.0.0.1:$s\nsentinel_master = bloomdm"
tls_node 2 bloomd node-secret "redis = tcp://localhost:$m" "tls_server_name = redis.test"
start 1 && start 2
wait_for 15 eval '[ "$(status 1 state)" = following ] && [ "$(status 2 state)" = following ]'
ok $? "one node through the sentinel, one to the master by name, both following over TLS"
is "$(status 1 tls)/$(status 1 user)/$(status 1 master)" "true/bloomd/127.0.0.1:$m" "the status says TLS, the user, and the master the sentinel named"
C 1 add addr 192.0.2.1 >/dev/null && C 2 del addr 192.0.2.99 >/dev/null 2>&1
wait_for 10 C 2 query addr 192.0.2.1 >/dev/null; ok $? "an add on one node reaches the other"
is "$(RT $m client list | grep -c 'user=bloomd ')" 4 "the master sees both nodes' two connections, as user bloomd"

# A CA that did not sign the server's certificate, and a name the certificate does not hold.
node_conf 3
tls_node 3 bloomd node-secret "redis = tcp://127.0.0.1:$m"
sed -i "s|^tls_ca_file = .*|tls_ca_file = $tmp/other.pem|" n3/bloomd.conf
tls_node 4 bloomd node-secret "redis = tcp://127.0.0.1:$m" "tls_server_name = elsewhere.test"
start 3 && start 4
wait_for 10 eval 'status 3 errors.writer | grep -q "certificate" && status 4 errors.writer | grep -q "certificate"'
why3=$(status 3 errors.writer)
has "$why3" "TLS: the server's certificate is refused: " "a wrong CA is refused, and the status says why (${why3#*refused: })"
has "$(status 4 errors.writer)" "TLS: the server's certificate is refused: hostname mismatch" "a wrong name is refused, and the status says why"
grep -q "certificate is refused: hostname mismatch" n4/err; ok $? "and the log says it too"
is "$(status 3 state)/$(status 4 state)" "connecting/connecting" "neither follows anything"

# A following-only node: its user may read the stream, and not write.
tls_node 5 watcher watch-secret "redis = tcp://127.0.0.1:$m"
start 5
wait_for 10 eval '[ "$(status 5 state)" = following ] && C 5 query addr 192.0.2.1 >/dev/null'
ok $? "a node whose user may only read follows the stream"
C 5 add addr 203.0.113.5 >/dev/null
wait_for 10 eval '[ "$(status 5 publish_refused)" != null ]'
has "$(status 5 publish_refused)" "NOPERM" "and says that it cannot publish ($(status 5 publish_refused | head -c 80))"
grep -q "Redis refuses this node's writes" n5/err; ok $? "once, in the log"

# A CA file that is not there: refused at start, by name.
tls_node 6 bloomd node-secret "redis = tcp://127.0.0.1:$m"
sed -i "s|^tls_ca_file = .*|tls_ca_file = $tmp/missing.pem|" n6/bloomd.conf
! start 6 && grep -q "tls_ca_file $tmp/missing.pem: " n6/err
ok $? "a CA file that is not there stops the start, named: $(grep -o 'tls_ca_file [^ ]*: .*' n6/err | head -n 1)"

# The master killed: node 1, on TLS through the sentinel, follows the replica it promotes (a
# refused handshake to the dead master asks the sentinel again, as a refused connection does).
stop 3 2>/dev/null; stop 4 2>/dev/null
kill -9 "$(cat r$m.pid)"
wait_for 60 eval '[ "$(status 1 master)" = 127.0.0.1:$r1 ] && [ "$(status 1 state)" = following ]'
ok $? "the master killed, the node on TLS follows the one the sentinel promotes ($(status 1 master), $(status 1 state))"
