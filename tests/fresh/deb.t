#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bloomd as a Debian package on a fresh machine (the root: root.sh): its Build-Depends installed
# by apt-get build-dep from debian/control alone, the package built from the clean clone with
# dpkg-buildpackage and lintian-clean (tools/build-deb.sh), installed with apt-get; the user,
# the state directory and every file where Debian puts them; bloomd started as the unit's
# ExecStart starts it, given an entry, stopped; a rebuilt package with a higher version keeps
# the entry and a changed conffile; a purge leaves no file of the package behind.
. "$(dirname "$0")/../support/tap.sh"
repo=$(cd "$(dirname "$0")/../.." && pwd)

PLANNED=18
. "$(dirname "$0")/root.sh"

# Each step in the root, its log kept; a failure shows the log's end.
step() { # step NAME COMMAND
	in_root "$root/deb-$1.log" "export DEBIAN_FRONTEND=noninteractive; $2"
	local rc=$?
	[ $rc -eq 0 ] || tail -n 25 "$root/deb-$1.log" | sed 's/^/#   /'
	return $rc
}
arch=$(chroot "$root" dpkg --print-architecture)
version=$(chroot "$root" sh -c 'sed -n "1s/^bloomd (\([^)]*\)).*/\1/p" /src/bloomd/debian/changelog')
start=$SECONDS
step builddep "apt-get update -q && apt-get install -y -q --no-install-recommends dpkg-dev lintian python3 && apt-get build-dep -y -q ./"
ok $? "apt-get build-dep ./ installs what debian/control's Build-Depends names ($((SECONDS - start)) s)"
start=$SECONDS
step build "tools/build-deb.sh /src"
ok $? "dpkg-buildpackage -b builds bloomd $version from the clean clone, lintian-clean ($((SECONDS - start)) s)"
step install "apt-get install -y -q /src/bloomd_${version}_${arch}.deb"
ok $? "apt-get install ./bloomd_${version}_${arch}.deb"
step version "bloomd --version && bloomctl --version && bloomd -n -c /etc/bloomd/bloomd.conf"
ok $? "bloomd --version, bloomctl --version, and bloomd -n on the shipped configuration"
step user "id bloomd && test \"\$(stat -c %U:%a /var/lib/bloomd)\" = bloomd:750 && getent group bloomctl"
ok $? "the user bloomd exists, and owns its state directory (0750); the group bloomctl too"
where="/lib/systemd/system/bloomd.service /usr/lib/sysusers.d/bloomd.conf /usr/lib/tmpfiles.d/bloomd.conf
	/usr/share/man/man8/bloomd.8.gz /usr/share/man/man8/bloomctl.8.gz /usr/share/man/man5/bloomd.conf.5.gz
	/etc/bloomd/bloomd.conf /etc/logrotate.d/bloomd /usr/share/bash-completion/completions/bloomctl
	/usr/share/doc/bloomd/copyright /usr/share/doc/bloomd/examples/bloomd-alerts.yml
	/usr/share/bloomd/crowdsec/parsers/s01-parse/bloomd-eve.yaml /usr/share/bloomd/crowdsec/scenarios/bloomd-listed.yaml"
step files "for f in $(echo $where); do test -s \$f || { echo missing \$f; exit 1; }; done; dpkg-query -W -f='\${Conffiles}' bloomd | grep -q /etc/bloomd/bloomd.conf"
ok $? "the unit, sysusers and tmpfiles, man pages, config (a conffile), logrotate, completion and the CrowdSec parser and scenario are where Debian puts them"

# As the unit starts it: its user, its configuration (the directories the unit would make are the
# tmpfiles' here, where no systemd runs).
run_bloomd='runuser -u bloomd -g bloomd -G bloomctl -- /usr/sbin/bloomd -c /etc/bloomd/bloomd.conf > /tmp/bloomd.out 2>&1 &
	echo $! > /tmp/bloomd.pid; for i in $(seq 100); do bloomctl version >/dev/null 2>&1 && break; sleep 0.1; done'
# Stopped within 10 s: 0, else 1 (the step's own status kept in rc, and the worse of the two its exit).
stop_bloomd='kill -TERM $(cat /tmp/bloomd.pid); for i in $(seq 100); do kill -0 $(cat /tmp/bloomd.pid) 2>/dev/null || break; sleep 0.1; done;
	! kill -0 $(cat /tmp/bloomd.pid) 2>/dev/null || rc=1'
step run "$run_bloomd; bloomctl add addr 192.0.2.77 && bloomctl query addr 192.0.2.77; rc=\$?; $stop_bloomd; exit \$rc"
ok $? "bloomd runs as the unit runs it: an entry added, then stopped"
step harmless "grep -q 'waiting for commands' /tmp/bloomd.out && ! grep -qE '^[^#;]*(interface|queue|manage) *= *[^ ]' /etc/bloomd/bloomd.conf"
ok $? "the shipped configuration captures nothing, drops nothing, binds only its socket"

# A higher version: rebuilt with a changelog entry of its own; the conffile changed meanwhile.
next="$version+1"
step rebuild "printf '# changed by the operator\n' >> /etc/bloomd/bloomd.conf &&
	tools/debian-changelog.py NEWS '$next' > debian/changelog && tools/build-deb.sh /src"
ok $? "a package of a higher version ($next) built"
step upgrade "apt-get install -y -q -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold /src/bloomd_${next}_${arch}.deb &&
	test \"\$(dpkg-query -W -f='\${Version}' bloomd)\" = '$next'"
ok $? "apt-get install of it upgrades"
step conffile "tail -n 1 /etc/bloomd/bloomd.conf | grep -qx '# changed by the operator'"
ok $? "the changed conffile is kept"
step kept "$run_bloomd; bloomctl query addr 192.0.2.77; rc=\$?; $stop_bloomd; exit \$rc"
ok $? "the entry added before the upgrade is there after it"

# A purge: nothing of the package stays.
chroot "$root" dpkg-query -L bloomd > "$root/deb-owned.txt"
step purge "apt-get purge -y -q bloomd"
ok $? "apt-get purge bloomd"
left=$(while read -r f; do [ ! -d "$root$f" ] && { [ -e "$root$f" ] || [ -L "$root$f" ]; } && echo "$f"; done < "$root/deb-owned.txt")
is "$left" "" "no file the package installed is left"
for d in /etc/bloomd /var/lib/bloomd /var/log/bloomd /run/bloomd; do [ -e "$root$d" ] && echo "$d"; done > "$root/deb-left.txt"
is "$(cat "$root/deb-left.txt")" "" "nor its configuration, state, logs or socket directory"
done_testing
