#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# make install into a DESTDIR puts every file in place and keeps an existing configuration;
# make uninstall removes them and keeps the configuration.
. "$(dirname "$0")/support/tap.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
plan 8
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || true)
unitdir=${unitdir:-/usr/lib/systemd/system}
sysusersdir=$(pkg-config --variable=sysusersdir systemd 2>/dev/null || true)
tmpfilesdir=$(pkg-config --variable=tmpfilesdir systemd 2>/dev/null || true)
sysusersdir=${sysusersdir:-/usr/lib/sysusers.d}
tmpfilesdir=${tmpfilesdir:-/usr/lib/tmpfiles.d}
files=(usr/sbin/bloomd usr/sbin/bloomd-fetch usr/bin/bloomctl usr/bin/bloomsim usr/bin/pcapgen usr/share/bash-completion/completions/bloomctl
       usr/share/man/man8/bloomd.8 usr/share/man/man8/bloomctl.8 usr/share/man/man8/bloomd-fetch.8 usr/share/man/man5/bloomd.conf.5
       etc/bloomd/bloomd.conf "${unitdir#/}/bloomd.service" "${sysusersdir#/}/bloomd.conf"
       "${tmpfilesdir#/}/bloomd.conf" etc/logrotate.d/bloomd usr/share/doc/bloomd/examples/bloomd-metrics.conf
       usr/share/doc/bloomd/examples/bloomd-cluster.conf usr/share/doc/bloomd/examples/bloomd-inline.conf usr/share/doc/bloomd/examples/bloomd-fetch.conf usr/share/doc/bloomd/examples/bloomd-xdp.conf
       usr/share/doc/bloomd/examples/bloomd-alerts.yml)
inst() { make -s -C "$root" BUILD="$BUILD" PREFIX=/usr SYSCONFDIR=/etc DESTDIR="$dest" "$@" >/dev/null; }

inst install; ok $? "make install"
missing=0
for f in "${files[@]}"; do [ -e "$dest/$f" ] || { echo "#   missing $f"; missing=1; }; done
ok $missing "every file installed"
"$dest/usr/sbin/bloomd" -n -c "$dest/etc/bloomd/bloomd.conf" >/dev/null; ok $? "the installed bloomd accepts the installed config"
grep -q "^ExecStart=/usr/sbin/bloomd -c /etc/bloomd/bloomd.conf$" "$dest$unitdir/bloomd.service"
ok $? "the unit names the installed paths"
for page in bloomd.8 bloomctl.8 bloomd-fetch.8; do man -l "$dest/usr/share/man/man8/$page" 2>&1 >/dev/null; done | grep -q . && rc=1 || rc=0
[ "$(man -l "$dest/usr/share/man/man5/bloomd.conf.5" 2>&1 >/dev/null)" = "" ] && [ $rc -eq 0 ]
ok $? "man -l renders each installed page without a warning"
echo "# edited" >> "$dest/etc/bloomd/bloomd.conf"
inst install
grep -q "^# edited" "$dest/etc/bloomd/bloomd.conf"; ok $? "a second install keeps the edited config"
inst uninstall
left=$(cd "$dest" && find . -type f | sort | tr '\n' ' ')
is "$left" "./etc/bloomd/bloomd.conf " "uninstall removes all but the config"
[ -z "$(cd "$dest" && find usr -type f)" ]; ok $? "nothing left under usr"
done_testing
