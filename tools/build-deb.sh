#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# build-deb.sh [OUTDIR] - the Debian package built from this tree's committed and uncommitted
# files (what git tracks, or the tree without build output), in a copy: dpkg-buildpackage -b
# -us -uc there, lintian on the result (0 errors, 0 warnings, or this fails), the .deb and
# its .changes left in OUTDIR (default: the tree's parent).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(cd "${1:-$root/..}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
version=$(dpkg-parsechangelog -l "$root/debian/changelog" -S Version)
src=$work/bloomd-$version
mkdir "$src"
if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$root" ls-files -z --cached --others --exclude-standard | (cd "$root" && xargs -0 cp --parents -t "$src")
else
	tar -C "$root" --exclude='./build*' --exclude=./.git -cf - . | tar -C "$src" -xf -
fi
(cd "$src" && dpkg-buildpackage -b -us -uc)
arch=$(dpkg --print-architecture)
lintian --fail-on error,warning --suppress-tags-from-file /dev/null "$work/bloomd_${version}_${arch}.changes"
cp "$work"/bloomd_"${version}"_* "$out"/
echo "build-deb: $out/bloomd_${version}_${arch}.deb"
