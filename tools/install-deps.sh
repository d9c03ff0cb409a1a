#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# install-deps.sh - install the Debian packages bloomd needs, for one purpose:
#   build  build bloomd and run the demo (make demo)
#   test   build and run the test suite, sanitizers and fuzzers included (make check)
#   bench  run the benchmarks against their peers (make bench)
#   cluster  build, and a redis-server for the cluster demo (make demo-cluster)
#   deb    build, and what builds and checks the Debian package (make deb)
#   ci     all of these, plus what the fresh-machine check and the aarch64 tests need
# Installs only what is missing; needs root (or sudo) when something is.
set -euo pipefail

# clang compiles the XDP program to BPF, bpftool makes its skeleton (libbpf).
build=(make gcc libc6-dev pkg-config jq libxxhash-dev libjansson-dev libpcap-dev libevent-dev
       libinih-dev libsystemd-dev libcap-dev libcurl4-openssl-dev zlib1g-dev nettle-dev libssl-dev libnetfilter-queue-dev libnftables-dev libmnl-dev liburcu-dev
       libbpf-dev bpftool clang linux-libc-dev)
# systemd-analyze checks the unit, whose ExecReload needs /bin/kill (procps); crowdsec's local API is
# the source of tests/crowdsec.t; prometheus's promtool checks the metrics text and the alerting rules.
test=("${build[@]}" perl iproute2 groff-base man-db socat libcmocka-dev clang libclang-rt-dev
      systemd procps logrotate python3-jsonschema redis-server redis-sentinel iptables nftables openssl crowdsec prometheus)
# g++ and Boost 1.81 build the filter peers (Boost.Bloom, vendored in third_party/, needs the rest of Boost);
# xdp-tools ships xdp-filter, a peer of the XDP program; crowdsec-firewall-bouncer the peer of source = crowdsec.
bench=("${build[@]}" libbloom-dev redis-server redis-sentinel openssl bc iproute2 nftables iptables g++ libboost1.81-dev xdp-tools
       crowdsec crowdsec-firewall-bouncer ipset)
cluster=("${build[@]}" redis-server)
# debhelper builds the package (dpkg-buildpackage), lintian checks it; devscripts and equivs
# give mk-build-deps, which installs a package's Build-Depends; bash-completion and systemd
# name their directories (pkg-config); python3 writes debian/changelog from NEWS.
deb=("${build[@]}" python3 debhelper devscripts equivs lintian fakeroot bash-completion systemd)
# Hyperscan is built for amd64 only.
[ "$(dpkg --print-architecture)" = amd64 ] && bench+=(libhyperscan-dev)
ci=("${test[@]}" "${bench[@]}" "${deb[@]}" mmdebstrap qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
# The aarch64 core tests (tests/aarch64.t) link the arm64 cmocka: a foreign architecture.
foreign=()
[ "${1:-test}" = ci ] && [ "$(dpkg --print-architecture)" = amd64 ] &&
	foreign=(libcmocka-dev:arm64 libxxhash-dev:arm64)

case ${1:-test} in
build) packages=("${build[@]}") ;;
test) packages=("${test[@]}") ;;
bench) packages=("${bench[@]}") ;;
cluster) packages=("${cluster[@]}") ;;
deb) packages=("${deb[@]}") ;;
ci) packages=("${ci[@]}") ;;
*) echo "usage: install-deps.sh [build|test|bench|cluster|deb|ci]" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}" "${foreign[@]}"; do
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
if [ ${#foreign[@]} -gt 0 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
	"${sudo[@]}" dpkg --add-architecture arm64
fi
"${sudo[@]}" apt-get update -q
# crowdsec's postinst registers with CrowdSec's central API unless it finds credentials: an empty
# stand-in keeps it offline. The tests run its local API (and the bench its bouncer) themselves:
# neither service is started at install (a policy-rc.d of our own, only while none is there).
policy=
if [[ " ${missing[*]} " == *" crowdsec"* ]]; then
	"${sudo[@]}" mkdir -p /etc/crowdsec
	[ -s /etc/crowdsec/online_api_credentials.yaml ] ||
		echo "# offline: no central API" | "${sudo[@]}" tee /etc/crowdsec/online_api_credentials.yaml >/dev/null
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		policy=/usr/sbin/policy-rc.d
		printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
		"${sudo[@]}" chmod 755 "$policy"
		trap '"${sudo[@]}" rm -f "$policy"' EXIT
	fi
fi
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
