#!/usr/bin/env bash
# make install into a DESTDIR puts every file in place and keeps an existing configuration;
# make uninstall removes them and keeps the configuration.
. "$(dirname "$0")/tap.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
plan 6
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
files=(usr/sbin/bloomd usr/bin/bloomctl usr/bin/bloomsim usr/bin/pcapgen
       usr/share/man/man8/bloomd.8 usr/share/man/man8/bloomctl.8 usr/share/man/man5/bloomd.conf.5
       etc/bloomd/bloomd.conf)
inst() { make -s -C "$root" BUILD="$BUILD" PREFIX=/usr SYSCONFDIR=/etc DESTDIR="$dest" "$@" >/dev/null; }

inst install; ok $? "make install"
missing=0
for f in "${files[@]}"; do [ -e "$dest/$f" ] || { echo "#   missing $f"; missing=1; }; done
ok $missing "every file installed"
"$dest/usr/sbin/bloomd" -n -c "$dest/etc/bloomd/bloomd.conf" >/dev/null; ok $? "the installed bloomd accepts the installed config"
echo "# edited" >> "$dest/etc/bloomd/bloomd.conf"
inst install
grep -q "^# edited" "$dest/etc/bloomd/bloomd.conf"; ok $? "a second install keeps the edited config"
inst uninstall
left=$(cd "$dest" && find . -type f | sort | tr '\n' ' ')
is "$left" "./etc/bloomd/bloomd.conf " "uninstall removes all but the config"
[ -z "$(cd "$dest" && find usr -type f)" ]; ok $? "nothing left under usr"
done_testing
