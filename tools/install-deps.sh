#!/usr/bin/env bash
# install-deps.sh - install the Debian packages bloomd builds, tests and benchmarks with.
# Installs only what is missing; needs root (or sudo) when something is.
set -euo pipefail

packages=(
	build-essential pkg-config perl jq iproute2 groff-base man-db socat
	libxxhash-dev libjansson-dev libpcap-dev libevent-dev libinih-dev
	libcmocka-dev libbloom-dev libhyperscan-dev clang libclang-rt-dev
	libsystemd-dev libcap-dev systemd
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
sudo=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || { echo "install-deps: run as root: apt-get install ${missing[*]}" >&2; exit 1; }
	sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
