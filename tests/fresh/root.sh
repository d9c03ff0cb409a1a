# SPDX-License-Identifier: BSD-2-Clause
# root.sh - a just-made minimal Debian root for the fresh-machine checks (fresh.t, deb.t); source
# it after tap.sh with repo and PLANNED set (it says the plan): it counts 3 tests (the root, its
# mounts, the committed HEAD cloned into /src/bloomd). The root's packages are cached
# (BLOOMD_FRESH_CACHE, default ~/.cache/bloomd-fresh); every run unpacks a new root from them.
# in_root LOG COMMAND runs COMMAND there in /src/bloomd as a new user would.
skip_all() { echo "1..0 # SKIP $1"; exit 0; }
[ "$(id -u)" -eq 0 ] || skip_all "making a root and chrooting into it needs root"
command -v mmdebstrap >/dev/null || skip_all "no mmdebstrap (tools/install-deps.sh ci installs it)"
chroot / true 2>/dev/null || skip_all "this machine cannot chroot"
plan $PLANNED

suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
cache=${BLOOMD_FRESH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bloomd-fresh}
tarball=$cache/$suite-$(dpkg --print-architecture).tar
root=
mounted=()
cleanup() {
	local i
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount -R "${mounted[i]}" 2>/dev/null || umount -R -l "${mounted[i]}"
	done
	# --one-file-system: whatever is still mounted under the root is left alone.
	[ -n "$root" ] && cp "$root"/*.log "$cache/" 2>/dev/null # the last run's logs, to read
	[ -n "$root" ] && ! grep -q " $root[/ ]" /proc/mounts && rm -rf --one-file-system "$root"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# ---- the root ----
sources=()
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
	[ -s "$f" ] && sources+=("$f")
done
mkdir -p "$cache"
start=$SECONDS
if [ ! -s "$tarball" ] || [ -n "$(find "$tarball" -mtime +7)" ]; then
	rm -rf "$tarball.new"
	mmdebstrap --quiet --variant=minbase --format=tar \
		--include=git,make,gcc,libc6-dev,pkg-config,ca-certificates \
		"$suite" "$tarball.new" "${sources[@]}" > "$cache/mmdebstrap.log" 2>&1 &&
		mv "$tarball.new" "$tarball"
fi
root=$(mktemp -d /var/tmp/bloomd-fresh.XXXXXX)
tar -C "$root" -xf "$tarball" 2>/dev/null
[ -x "$root/usr/bin/make" ] && [ -x "$root/usr/bin/git" ] && [ -x "$root/usr/bin/pkg-config" ]
ok $? "a minimal $suite root ($((SECONDS - start)) s)"
if [ ! -x "$root/usr/bin/make" ]; then
	tail -n 20 "$cache/mmdebstrap.log" | sed 's/^/#   /'
	echo "Bail out! no root was made"
	exit 1
fi

cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null
# The root a mount point of its own, as / is on a machine (ip netns exec remounts it).
mount --bind "$root" "$root" && mounted+=("$root")
for d in dev proc sys; do
	mount --rbind "/$d" "$root/$d" && mount --make-rslave "$root/$d" && mounted+=("$root/$d")
done
for d in run tmp; do
	mount -t tmpfs -o mode=1777 tmpfs "$root/$d" && mounted+=("$root/$d")
done
[ ${#mounted[@]} -eq 6 ]; ok $? "/dev, /proc, /sys bound; /run and /tmp on tmpfs"

head=$(git -C "$repo" rev-parse HEAD)
git clone -q --no-hardlinks "$repo" "$root/src/bloomd" && git -C "$root/src/bloomd" checkout -q "$head"
ok $? "the committed HEAD cloned into the root (${head:0:12})"

in_root() { # in_root LOG COMMAND: as a new user would, with a plain environment
	chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		sh -c "cd /src/bloomd && $2" > "$1" 2>&1 < /dev/null
}
