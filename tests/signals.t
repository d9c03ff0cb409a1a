#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The signals the unit and an operator send (HUP, USR1, TERM, INT) at each phase of a start,
# with two busy loops beside it: none kills bloomd, none is lost. From main's first line on
# they are held until the loop handles them (before it the dynamic loader runs, and a sanitizer's
# runtime: nothing in a process can hold a signal there, so each is sent once bloomd holds it).
# A HUP or USR1 at any phase leaves it running, and the HUP is a reload done after the start; a
# TERM or INT at any phase is a clean stop, exit 0.
. "$(dirname "$0")/support/tap.sh"
plan 19
tmp=$(mktemp -d)
pid=
busy=()
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; for b in "${busy[@]}"; do kill "$b" 2>/dev/null; done; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
for _ in 1 2; do (while :; do :; done) & busy+=($!); done # the load made heavy on purpose
awk 'BEGIN { for (i = 0; i < 200000; i++) printf "addr 10.%d.%d.%d\n", i / 65536 % 256, i / 256 % 256, i % 256 }' > big.list
printf '[entries]\nfile = big.list\n[control]\nsocket = %s/ctl.sock\n[store]\ndir = %s/state\n' "$tmp" "$tmp" > bloomd.conf
mkdir state
C() { "$BUILD/bloomctl" -s "$tmp/ctl.sock" "$@"; }
# Until bloomd holds SIG (blocked, or caught by the loop's handler): up to 2 minutes (a sanitizer's loader, loaded).
holds() { # holds PID SIGNUM
	local bit=$((1 << ($2 - 1))) mask
	for _ in $(seq 12000); do
		for mask in $(awk '/^Sig(Blk|Cgt):/ { print $2 }' "/proc/$1/status" 2>/dev/null); do
			[ $((0x$mask & bit)) -ne 0 ] && return 0
		done
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.01
	done
	return 1
}
# The phases of a start, each reached by waiting for what marks it: main's first line; 20 ms
# and 200 ms into the start (the configuration read, the 200,000 entries loading); answering.
phase() { # phase NAME: returns once bloomd is in it
	case $1 in
	main) holds "$pid" 10 ;;
	early) holds "$pid" 10 && sleep 0.02 ;;
	loading) holds "$pid" 10 && sleep 0.2 ;;
	answering) for _ in $(seq 6000); do C version >/dev/null 2>&1 && return 0; sleep 0.01; done; return 1 ;;
	esac
}
up() { "$BUILD/bloomd" -c bloomd.conf 2>>err & pid=$!; }
for at in main early loading answering; do
	: > err
	up
	phase $at
	kill -HUP "$pid"; kill -USR1 "$pid"
	phase answering; ok $? "HUP and USR1 at the start's $at phase: bloomd answers"
	for _ in $(seq 100); do grep -q "configuration reloaded" err && break; sleep 0.05; done
	grep -q "configuration reloaded" err; ok $? "and the HUP is not lost: a reload is done"
	kill -TERM "$pid"; wait "$pid"; is $? 0 "then a TERM is a clean stop"
	pid=
done
for sig in TERM INT; do
	for at in main early loading; do
		: > err
		up
		phase $at
		kill -$sig "$pid"; wait "$pid"; rc=$?
		is "$rc" 0 "$sig at the start's $at phase: a clean stop (exit $rc)"
		pid=
	done
done
! grep -qE "runtime error|AddressSanitizer|LeakSanitizer" err; ok $? "with no sanitizer report"
