# SPDX-License-Identifier: BSD-2-Clause
# Makefile - bloomd: build, test (make check), benchmark (make bench), install.

PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
SBINDIR    ?= $(PREFIX)/sbin
MANDIR     ?= $(PREFIX)/share/man
DOCDIR     ?= $(PREFIX)/share/doc/bloomd
# What an operator copies from: the systemd drop-ins and the alerting rules.
EXAMPLESDIR ?= $(DOCDIR)/examples
CROWDSECDIR ?= $(PREFIX)/share/bloomd/crowdsec
SYSCONFDIR ?= /etc
# Where systemd looks for system units (systemd.pc says; the usual place without it).
SYSTEMDUNITDIR ?= $(or $(shell pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null),/usr/lib/systemd/system)
SYSUSERSDIR    ?= $(or $(shell pkg-config --variable=sysusersdir systemd 2>/dev/null),/usr/lib/sysusers.d)
TMPFILESDIR    ?= $(or $(shell pkg-config --variable=tmpfilesdir systemd 2>/dev/null),/usr/lib/tmpfiles.d)
# Where bash-completion looks for a command's completion.
BASHCOMPDIR    ?= $(or $(shell pkg-config --variable=completionsdir bash-completion 2>/dev/null),$(PREFIX)/share/bash-completion/completions)
DESTDIR    ?=

BUILD   ?= build
CC      ?= cc
CFLAGS  ?= -O2 -g
WARN     = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wpointer-arith -Wcast-qual -Werror
# Baseline flags only: every SIMD kernel is compiled with a target attribute and
# chosen at run time (BLOOMD_SIMD caps it), so one binary runs on every CPU.
ARCH_CFLAGS ?=
# SANITIZE=address,undefined builds everything with those sanitizers.
SANITIZE ?=
ifneq ($(SANITIZE),)
SANFLAGS = -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all -DBLOOMD_CHECKS
endif
# DEBUG=1: the invariants of check.h checked at run time (always so under SANITIZE).
ifneq ($(DEBUG),)
SANFLAGS += -DBLOOMD_CHECKS
endif

# Libraries, as pkg-config names them, and the Debian package that ships each.
PKGS        = libxxhash jansson
DAEMON_PKGS = libpcap libevent_core openssl libnetfilter_queue libnftables libmnl liburcu-qsbr inih libsystemd libcap nettle libbpf
TEST_PKGS   = cmocka
FETCH_PKGS  = libcurl libcap zlib
BENCH_PKGS  = libhs libbloom  # libbloom has no pkg-config file: its header is looked for
PKG_DEBS    = libxxhash:libxxhash-dev jansson:libjansson-dev libpcap:libpcap-dev \
              libevent_core:libevent-dev openssl:libssl-dev libnetfilter_queue:libnetfilter-queue-dev libnftables:libnftables-dev libmnl:libmnl-dev liburcu-qsbr:liburcu-dev inih:libinih-dev libsystemd:libsystemd-dev \
              libcap:libcap-dev libbpf:libbpf-dev libcurl:libcurl4-openssl-dev zlib:zlib1g-dev nettle:nettle-dev cmocka:libcmocka-dev libhs:libhyperscan-dev libbloom:libbloom-dev

# Read once a make; `make demo` and `make check` install first and then build in a
# sub-make, which reads them again.
MISSING_PKGS := $(shell for p in $(PKGS) $(DAEMON_PKGS) $(FETCH_PKGS) $(TEST_PKGS) libhs; do \
                  pkg-config --exists $$p 2>/dev/null || echo $$p; done; \
                  echo '\#include <bloom.h>' | $(CC) -E - >/dev/null 2>&1 || echo libbloom)
pkg_flags = $(shell pkg-config $(1) $(filter-out $(MISSING_PKGS),$(2)) 2>/dev/null)
deb_of    = $(patsubst $(1):%,%,$(filter $(1):%,$(PKG_DEBS)))
# The first line of a recipe that needs these packages: a clear stop instead of a
# compile or link without them.
need = $(if $(filter $(1),$(MISSING_PKGS)),$(error missing $(foreach p,$(filter $(1),$(MISSING_PKGS)),$(p) ($(call deb_of,$(p)))): run 'make deps' (tools/install-deps.sh) first))

PKG_CFLAGS  := $(call pkg_flags,--cflags,$(PKGS) $(DAEMON_PKGS) $(FETCH_PKGS) $(TEST_PKGS) $(BENCH_PKGS))
PKG_LIBS    := $(call pkg_flags,--libs,$(PKGS))
DAEMON_LIBS := $(call pkg_flags,--libs,$(DAEMON_PKGS))
TEST_LIBS   := $(call pkg_flags,--libs,$(TEST_PKGS))
FETCH_LIBS  := $(call pkg_flags,--libs,$(FETCH_PKGS))
BENCH_LIBS  := $(call pkg_flags,--libs,libhs) -lbloom

# daemon/'s four layers, each a folder and a library (daemon/README). A layer's objects see
# its own headers and the lower layers' alone, so an include that goes up does not compile;
# each library links with the ones below it alone (tests/layers.t links them so).
INC_core    = -Idaemon/core
INC_packet  = $(INC_core) -Idaemon/packet
# The io layer is a folder per subsystem (daemon/README), its headers seen by the whole layer.
IO_SUBSYSTEMS = capture action cluster state control config sys
INC_io      = $(INC_packet) $(IO_SUBSYSTEMS:%=-Idaemon/io/%) -I$(BUILD)/bpf -isystem third_party
INC_service = $(INC_io) -Idaemon/service
# The programs, tools, benchmarks and tests see every layer.
INC         = $(INC_service) -Iprograms -Ibench -Itests/support
$(BUILD)/daemon/core/%.o: INC = $(INC_core)
$(BUILD)/daemon/packet/%.o: INC = $(INC_packet)
$(BUILD)/daemon/io/%.o: INC = $(INC_io)
$(BUILD)/daemon/service/%.o: INC = $(INC_service)

# The include flags of a layer's files, for tests/layers.t's probes: make -s layer-flags-core.
layer-flags-%:
	@echo $(INC_$*)

# CPPFLAGS and LDFLAGS as a packager gives them (dpkg-buildflags: fortify, relro, now).
ALL_CFLAGS = -std=c11 $(WARN) $(CPPFLAGS) $(CFLAGS) $(ARCH_CFLAGS) $(SANFLAGS) -D_GNU_SOURCE $(INC) $(PKG_CFLAGS) -MMD -MP
LDLIBS     = $(LDFLAGS) $(PKG_LIBS) -lm -pthread

CORE_SRC    = $(wildcard daemon/core/*.c)
PACKET_SRC  = $(wildcard daemon/packet/*.c)
IO_SRC      = $(wildcard daemon/io/*/*.c)
SERVICE_SRC = $(filter-out daemon/service/main.c,$(wildcard daemon/service/*.c))
CORE_OBJ    = $(CORE_SRC:%.c=$(BUILD)/%.o)
PACKET_OBJ  = $(PACKET_SRC:%.c=$(BUILD)/%.o)
IO_OBJ      = $(IO_SRC:%.c=$(BUILD)/%.o)
SERVICE_OBJ = $(SERVICE_SRC:%.c=$(BUILD)/%.o)
CORE_LIB    = $(BUILD)/libbloomcore.a
PACKET_LIB  = $(BUILD)/libbloompacket.a
IO_LIB      = $(BUILD)/libbloomio.a
SERVICE_LIB = $(BUILD)/libbloomservice.a
# hiredis with TLS (third_party/hiredis/README: why vendored), for the io layer.
HIREDIS_SRC = $(addprefix third_party/hiredis/,alloc.c async.c hiredis.c net.c read.c sds.c sockcompat.c ssl.c)
HIREDIS_OBJ = $(HIREDIS_SRC:%.c=$(BUILD)/%.o)
HIREDIS_LIB = $(BUILD)/libhiredis.a
# Everything above the core, in link order (each library before the ones it uses).
DAEMON_LIB  = $(SERVICE_LIB) $(IO_LIB) $(HIREDIS_LIB) $(PACKET_LIB)
DAEMON_OBJ  = $(PACKET_OBJ) $(IO_OBJ) $(SERVICE_OBJ)

TOOL_COMMON = $(BUILD)/programs/cli.o $(BUILD)/programs/ctlconn.o
TOOLS     = $(BUILD)/bloomd $(BUILD)/bloomd-fetch $(BUILD)/bloomsim $(BUILD)/bloomctl $(BUILD)/pcapgen

UNIT_TESTS = $(patsubst tests/unit/%.c,$(BUILD)/tests/%.t,$(wildcard tests/unit/*.c))
SCRIPT_TESTS = $(filter-out tests/fuzz.t,$(wildcard tests/*.t))

.PHONY: deb all check check-asan check-tsan check-fresh core-tests packet-tests test bench demo demo-cluster clean install uninstall deps fuzz fuzz-build

all: $(TOOLS) $(BUILD)/bloomctl.bash

# bloomctl's bash completion, written from the one list of commands.
$(BUILD)/bloomctl.bash: daemon/service/commands.def programs/completion.sh
	@mkdir -p $(dir $@)
	programs/completion.sh daemon/service/commands.def > $@.tmp && mv $@.tmp $@

NEEDS = $(PKGS) $(DAEMON_PKGS)
$(BUILD)/%.o: %.c
	$(call need,$(NEEDS))
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# Third-party code keeps its own warnings: ours are not turned on it.
$(BUILD)/third_party/hiredis/%.o: third_party/hiredis/%.c
	$(call need,openssl)
	@mkdir -p $(dir $@)
	$(CC) -std=c99 $(CPPFLAGS) $(CFLAGS) $(SANFLAGS) $(call pkg_flags,--cflags,openssl) -MMD -MP -c $< -o $@

$(CORE_LIB): $(CORE_OBJ)
$(PACKET_LIB): $(PACKET_OBJ)
$(IO_LIB): $(IO_OBJ)
$(SERVICE_LIB): $(SERVICE_OBJ)
$(HIREDIS_LIB): $(HIREDIS_OBJ)
$(CORE_LIB) $(DAEMON_LIB):
	rm -f $@
	ar rcs $@ $^

# The XDP program: compiled to BPF by clang, and built into bloomd as a libbpf skeleton
# (bpftool), so nothing is installed beside it. The kernel's headers come from linux-libc-dev.
BPF_CLANG  ?= clang
BPF_CFLAGS  = -O2 -g -Wall -Werror -target bpf -Idaemon/packet -I/usr/include/$(shell $(CC) -print-multiarch 2>/dev/null)
$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c bpf/xdp_parse.h daemon/packet/xdp_layout.h
	@command -v $(BPF_CLANG) >/dev/null || { echo "missing clang (compiles the XDP program): run 'make deps' first" >&2; exit 1; }
	@mkdir -p $(dir $@)
	$(BPF_CLANG) $(BPF_CFLAGS) -c $< -o $@
$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o
	@command -v bpftool >/dev/null || PATH=$$PATH:/usr/sbin command -v bpftool >/dev/null || \
		{ echo "missing bpftool (makes the XDP program's skeleton): run 'make deps' first" >&2; exit 1; }
	PATH=$$PATH:/usr/sbin bpftool gen skeleton $< name $* > $@.tmp && mv $@.tmp $@
$(BUILD)/daemon/io/action/action_xdp.o: $(BUILD)/bpf/xdp_drop.skel.h
$(BUILD)/bench/benchxdp.o: $(BUILD)/bpf/xdp_bench.skel.h

$(BUILD)/bloomd: $(BUILD)/daemon/service/main.o $(DAEMON_LIB) $(CORE_LIB)
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDLIBS) $(DAEMON_LIBS)

$(BUILD)/pcapgen: $(BUILD)/tools/pcapgen.o $(BUILD)/tests/support/synth.o $(TOOL_COMMON) $(DAEMON_LIB) $(CORE_LIB)
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDLIBS) $(DAEMON_LIBS)

$(BUILD)/bloomsim: $(BUILD)/tools/bloomsim.o $(TOOL_COMMON) $(CORE_LIB)
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/bloomctl: $(BUILD)/programs/bloomctl.o $(TOOL_COMMON) $(CORE_LIB)
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/programs/bloomd-fetch.o: NEEDS += $(FETCH_PKGS)
$(BUILD)/bloomd-fetch: $(BUILD)/programs/bloomd-fetch.o $(TOOL_COMMON) $(CORE_LIB)
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDLIBS) $(FETCH_LIBS)

BENCH_OBJ = $(BUILD)/bench/bloombench.o $(BUILD)/bench/bench.o $(BUILD)/bench/benchfilter.o \
            $(BUILD)/bench/benchpath.o $(BUILD)/bench/benchctl.o $(BUILD)/bench/benchsimilar.o \
            $(BUILD)/bench/benchbest.o $(BUILD)/bench/benchxdp.o
# The filter peers (C++, vendored headers under third_party/), at the baseline like the rest:
# a second copy built with -mavx2 would share its inline template code with this one by name,
# and the linker keeps either (AVX2 code in the baseline path). Only bloombench links them.
PEER_OBJ  = $(BUILD)/bench/benchpeers.o
CXX      ?= g++
PEER_CXXFLAGS = -std=c++17 -O2 -g -Wall -Wextra -Werror $(SANFLAGS) -isystem third_party/boost-bloom/include \
                -isystem third_party/rocksdb/shim -isystem third_party/rocksdb -Ibench $(PKG_CFLAGS) -MMD -MP
need_boost = @echo '\#include <boost/config.hpp>' | $(CXX) -E -x c++ - >/dev/null 2>&1 || \
	{ echo "missing g++ or Boost's headers (libboost1.81-dev): run tools/install-deps.sh bench first" >&2; exit 1; }
$(BUILD)/bench/benchpeers.o: bench/benchpeers.cc
	$(need_boost)
	@mkdir -p $(dir $@)
	$(CXX) $(PEER_CXXFLAGS) -c $< -o $@
$(BENCH_OBJ): NEEDS += $(BENCH_PKGS)
$(BUILD)/udpflood: $(BUILD)/bench/udpflood.o
	$(CC) $(ALL_CFLAGS) $^ -o $@

$(BUILD)/bloombench: $(BENCH_OBJ) $(PEER_OBJ) $(BUILD)/tests/support/synth.o $(TOOL_COMMON) $(DAEMON_LIB) $(CORE_LIB)
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDLIBS) $(DAEMON_LIBS) $(BENCH_LIBS) -lstdc++

$(BUILD)/tests/unit/%.o: NEEDS += $(TEST_PKGS)
$(BUILD)/tests/%.t: $(BUILD)/tests/unit/%.o $(BUILD)/tests/support/synth.o $(DAEMON_LIB) $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(TEST_LDFLAGS) $(LDLIBS) $(DAEMON_LIBS) $(TEST_LIBS)

# A probe of the kernel's sets by key, for the tests of the nft mirror (tests/neighbour.t).
$(BUILD)/tests/nft-has: $(BUILD)/tests/support/nft-has.o
	$(CC) $(ALL_CFLAGS) $^ -o $@ -lmnl

# The fault-injection test counts, and fails in turn, the allocations of bloomd's own code.
$(BUILD)/tests/oom.t: TEST_LDFLAGS = -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=posix_memalign

# The packet layer's unit tests linked with the packet and core libraries alone: no libpcap,
# libevent or hiredis (tests/layers.t links each layer's library whole, likewise).
PACKET_TESTS = communityid entry feed flows handshake labels threshold
packet-tests: $(PACKET_TESTS:%=$(BUILD)/packet-tests/%.t)
$(BUILD)/packet-tests/%.t: $(BUILD)/tests/unit/%.o $(PACKET_LIB) $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(call pkg_flags,--libs,libxxhash jansson nettle) -lm -pthread $(TEST_LIBS)

# The core and its unit tests alone, with no I/O library: what tests/aarch64.t builds
# with a cross compiler and runs under qemu-user, so the NEON kernel is tested too.
CORE_TESTS = filter counting hash sizing store sigscan
core-tests: $(CORE_TESTS:%=$(BUILD)/core-tests/%.t)
$(BUILD)/core-tests/%.t: $(BUILD)/tests/unit/%.o $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $^ -o $@ -lcmocka -lm -pthread

# The suite: unit tests (cmocka, TAP output) and tool tests (shell, TAP), all run by prove,
# as many at a time as there are cores (the tests wait on events, not on wall time).
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
test: $(TOOLS) $(BUILD)/bloomctl.bash $(UNIT_TESTS) packet-tests $(BUILD)/tests/nft-has
	BUILD=$(BUILD) prove -j$(JOBS) --timer --exec tests/support/run-one.sh $(UNIT_TESTS) $(PACKET_TESTS:%=$(BUILD)/packet-tests/%.t) \
		$(SCRIPT_TESTS) $(EXTRA_TESTS)

# Installs what is missing first (tools/install-deps.sh), then builds and tests in
# sub-makes, which see the packages just installed.
check:
	tools/install-deps.sh test
	$(MAKE) --no-print-directory -j$(JOBS) test
	$(MAKE) --no-print-directory -j$(JOBS) fuzz-build
	$(MAKE) --no-print-directory -j$(JOBS) check-asan EXTRA_TESTS=tests/fuzz.t
	$(MAKE) --no-print-directory -j$(JOBS) check-tsan

# The suite again under ASan+UBSan (with EXTRA_TESTS, the fuzz pass, in the same prove run).
check-asan:
	$(MAKE) --no-print-directory BUILD=build-asan SANITIZE=address,undefined CFLAGS="-O1 -g" test

# The threaded parts again under ThreadSanitizer: workers checking packets while the loop
# publishes changes to them (a race reported aborts bloomd, and the tests say so).
TSAN_TESTS = build-tsan/tests/matcher_threads.t tests/workers.t tests/inline.t
check-tsan:
	$(MAKE) --no-print-directory BUILD=build-tsan SANITIZE=thread CFLAGS="-O1 -g" build-tsan/bloomd build-tsan/bloomctl \
		build-tsan/tests/matcher_threads.t
	BUILD=build-tsan TSAN_OPTIONS="halt_on_error=1" prove --timer --exec tests/support/run-one.sh $(TSAN_TESTS)

# Fuzz harnesses (libFuzzer, clang) for the parsers of untrusted bytes: packets, entries, config.
# `make fuzz` runs each for FUZZ_SECONDS; tests/fuzz.t runs a short fixed-seed pass in make check.
FUZZ_HARNESSES = packet entry feed config state control jsonline
FUZZ_SECONDS ?= 60
fuzz-build:
	$(MAKE) --no-print-directory BUILD=build-fuzz CC=clang SANITIZE=address,undefined \
		CFLAGS="-O1 -g -fsanitize=fuzzer-no-link" $(FUZZ_HARNESSES:%=build-fuzz/fuzz-%)

$(BUILD)/fuzz-%: $(BUILD)/tests/fuzz/%.o $(DAEMON_LIB) $(CORE_LIB)
	$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer $^ -o $@ $(LDLIBS) $(DAEMON_LIBS)

fuzz: fuzz-build
	for h in $(FUZZ_HARNESSES); do build-fuzz/fuzz-$$h -max_total_time=$(FUZZ_SECONDS) || exit 1; done

bench:
	tools/install-deps.sh bench
	$(MAKE) --no-print-directory $(BUILD)/bloombench $(BUILD)/udpflood
	bench/bench.sh $(BUILD)

demo:
	tools/install-deps.sh build
	$(MAKE) --no-print-directory all
	tools/demo.sh $(BUILD)

# Three sensors and a real redis-server sharing one entry log (see tools/demo-cluster.sh).
demo-cluster:
	tools/install-deps.sh cluster
	$(MAKE) --no-print-directory all
	tools/demo-cluster.sh $(BUILD)

# The README's two commands, in order, in a minimal Debian root made for the
# purpose from this machine's apt sources (needs root and mmdebstrap).
check-fresh:
	prove --verbose --exec tests/support/run-one.sh tests/fresh/fresh.t tests/fresh/deb.t

# What the test suite needs (tools/install-deps.sh build|test|bench|ci for other purposes).
deps:
	tools/install-deps.sh test

# The Debian package, built from this tree as dpkg-buildpackage builds it (in a copy, so the
# tree's own build/ is left alone): ../bloomd_VERSION_ARCH.deb beside the tree, checked by
# lintian. debian/changelog is written from NEWS first.
deb:
	tools/install-deps.sh deb
	tools/debian-changelog.py NEWS > debian/changelog
	tools/build-deb.sh

# Binaries, man pages, the systemd unit (with these paths in it), its sysusers and
# tmpfiles files, a logrotate file, and the annotated configuration (an existing one is
# kept). On a live system, then: systemd-sysusers; systemd-tmpfiles --create.
install: all
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(SYSCONFDIR)/bloomd $(DESTDIR)$(SYSTEMDUNITDIR) \
		$(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(TMPFILESDIR) $(DESTDIR)$(SYSCONFDIR)/logrotate.d \
		$(DESTDIR)$(EXAMPLESDIR) $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(CROWDSECDIR)/parsers/s00-raw \
		$(DESTDIR)$(CROWDSECDIR)/parsers/s01-parse $(DESTDIR)$(CROWDSECDIR)/scenarios
	install -m 644 conf/crowdsec/parsers/s00-raw/bloomd-raw.yaml $(DESTDIR)$(CROWDSECDIR)/parsers/s00-raw/
	install -m 644 conf/crowdsec/parsers/s01-parse/bloomd-eve.yaml $(DESTDIR)$(CROWDSECDIR)/parsers/s01-parse/
	install -m 644 conf/crowdsec/scenarios/bloomd-listed.yaml $(DESTDIR)$(CROWDSECDIR)/scenarios/
	install -m 644 $(BUILD)/bloomctl.bash $(DESTDIR)$(BASHCOMPDIR)/bloomctl
	install -m 755 $(BUILD)/bloomd $(BUILD)/bloomd-fetch $(DESTDIR)$(SBINDIR)/
	install -m 755 $(BUILD)/bloomctl $(BUILD)/bloomsim $(BUILD)/pcapgen $(DESTDIR)$(BINDIR)/
	install -m 644 man/bloomd.8 man/bloomctl.8 man/bloomd-fetch.8 $(DESTDIR)$(MANDIR)/man8/
	install -m 644 man/bloomd.conf.5 $(DESTDIR)$(MANDIR)/man5/bloomd.conf.5
	sed -e 's|/usr/sbin/bloomd|$(SBINDIR)/bloomd|g' -e 's|/etc/bloomd/|$(SYSCONFDIR)/bloomd/|g' \
		systemd/bloomd.service > $(DESTDIR)$(SYSTEMDUNITDIR)/bloomd.service
	chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/bloomd.service
	install -m 644 systemd/bloomd.sysusers $(DESTDIR)$(SYSUSERSDIR)/bloomd.conf
	install -m 644 systemd/bloomd.tmpfiles $(DESTDIR)$(TMPFILESDIR)/bloomd.conf
	install -m 644 systemd/bloomd.logrotate $(DESTDIR)$(SYSCONFDIR)/logrotate.d/bloomd
	install -m 644 systemd/bloomd-metrics.conf systemd/bloomd-cluster.conf systemd/bloomd-inline.conf systemd/bloomd-fetch.conf systemd/bloomd-xdp.conf \
		conf/bloomd-alerts.yml $(DESTDIR)$(EXAMPLESDIR)/
	install -m 644 NEWS $(DESTDIR)$(DOCDIR)/
	test -e $(DESTDIR)$(SYSCONFDIR)/bloomd/bloomd.conf || \
		install -m 644 conf/bloomd.conf $(DESTDIR)$(SYSCONFDIR)/bloomd/bloomd.conf

# Removes what install put there, except the configuration, which may have been edited.
uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/bloomd $(DESTDIR)$(SBINDIR)/bloomd-fetch $(DESTDIR)$(BINDIR)/bloomctl $(DESTDIR)$(BINDIR)/bloomsim \
		$(DESTDIR)$(BINDIR)/pcapgen $(DESTDIR)$(BASHCOMPDIR)/bloomctl $(DESTDIR)$(MANDIR)/man8/bloomd.8 \
		$(DESTDIR)$(MANDIR)/man8/bloomctl.8 $(DESTDIR)$(MANDIR)/man8/bloomd-fetch.8 $(DESTDIR)$(MANDIR)/man5/bloomd.conf.5 \
		$(DESTDIR)$(SYSTEMDUNITDIR)/bloomd.service $(DESTDIR)$(SYSUSERSDIR)/bloomd.conf \
		$(DESTDIR)$(TMPFILESDIR)/bloomd.conf $(DESTDIR)$(SYSCONFDIR)/logrotate.d/bloomd \
		$(DESTDIR)$(EXAMPLESDIR)/bloomd-metrics.conf $(DESTDIR)$(EXAMPLESDIR)/bloomd-cluster.conf \
		$(DESTDIR)$(EXAMPLESDIR)/bloomd-inline.conf $(DESTDIR)$(EXAMPLESDIR)/bloomd-fetch.conf \
		$(DESTDIR)$(EXAMPLESDIR)/bloomd-xdp.conf $(DESTDIR)$(EXAMPLESDIR)/bloomd-alerts.yml $(DESTDIR)$(DOCDIR)/NEWS
	rm -rf $(DESTDIR)$(CROWDSECDIR)
	rmdir $(DESTDIR)$(PREFIX)/share/bloomd 2>/dev/null || true

clean:
	rm -rf build build-asan build-tsan build-fuzz build-aarch64 build-debug

# Keep the objects make would call intermediate, so a second make does nothing.
.SECONDARY:

-include $(CORE_OBJ:.o=.d) $(DAEMON_OBJ:.o=.d) $(HIREDIS_OBJ:.o=.d) $(BUILD)/daemon/service/main.d \
	$(wildcard $(BUILD)/programs/*.d $(BUILD)/tools/*.d $(BUILD)/bench/*.d $(BUILD)/tests/*/*.d)
