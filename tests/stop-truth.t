#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A stop tells the truth: a file-less list of 200,000 entries gets a replace with half of them
# new, and SIGTERM comes at many points of it (reading, keeping, adding, removing). Whatever the
# replace's client is told, the restart holds exactly that: "taken" and the new version, or
# "keeps its previous version" and the old one, never one said and the other held.
. "$(dirname "$0")/support/tap.sh"
. "$(dirname "$0")/support/daemon.sh"
POINTS=12
plan $((POINTS * 2 + 2))
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
sock=$tmp/ctl.sock
# version FILE FIRST COUNT: addresses FIRST.. FIRST+COUNT-1 of 10/8, one a line
version() { awk -v f="$2" -v n="$3" 'BEGIN { for (i = f; i < f + n; i++) printf "10.%d.%d.%d\n", int(i / 65536) % 256, int(i / 256) % 256, i % 256 }' > "$1"; }
version old.list 0 200000
version new.list 100000 200000 # half of old.list's, half new
printf '[list pushed]\nformat = plain\n[control]\nsocket = %s\n[store]\ndir = %s/state\n[output]\nevents =\n' "$sock" "$tmp" > bloomd.conf
start; ok $? "bloomd starts"
C replace pushed old.list >/dev/null; ok $? "the list holds the old version (200,000 entries)"
stop
# Which version the list holds: old (10.0.0.0 held, 10.4.147.223 not), new (the other way), or mixed.
held() {
	local first last
	C query addr 10.0.0.0 >/dev/null 2>&1 && first=1 || first=0
	C query addr 10.4.147.223 >/dev/null 2>&1 && last=1 || last=0 # entry 299,999: new.list's last
	case $first$last in 10) echo old ;; 01) echo new ;; *) echo "mixed ($first$last)" ;; esac
}
# How long a whole replace takes here, so the stops spread over it.
start
t0=$(date +%s%N)
C replace pushed new.list >/dev/null
whole=$((($(date +%s%N) - t0) / 1000000))
C replace pushed old.list >/dev/null
stop
echo "# a whole replace takes $whole ms here"
for p in $(seq 1 $POINTS); do
	after=$((whole * p / (POINTS + 1)))
	start
	C --json replace pushed new.list > reply.json 2>/dev/null &
	client=$!
	sleep "$(printf '%d.%03d' $((after / 1000)) $((after % 1000)))"
	stop
	wait "$client"
	said=$(jq -r 'if .ok then "taken" else .error end' reply.json | cut -c1-80)
	start
	holds=$(held)
	case $said in
	taken) want=new ;;
	*"keeps its previous version"*) want=old ;;
	*) want="a reply ($said)" ;;
	esac
	is "$holds" "$want" "SIGTERM $after ms into the replace: the client was told '$said', the restart holds the $holds version"
	count=$(C --json lists | jq '.lists[] | select(.name == "pushed") | .entries')
	is "$count" 200000 "and all of it ($count entries)"
	C replace pushed old.list >/dev/null # back to the old version for the next point
	stop
done
