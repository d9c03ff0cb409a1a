# Makefile - bloomd: build, test (make check), benchmark (make bench), install.

PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
SBINDIR    ?= $(PREFIX)/sbin
MANDIR     ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc
# Where systemd looks for system units (systemd.pc says; the usual place without it).
SYSTEMDUNITDIR ?= $(or $(shell pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null),/usr/lib/systemd/system)
DESTDIR    ?=

BUILD   ?= build
CC      ?= cc
CFLAGS  ?= -O2 -g
WARN     = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wpointer-arith -Wcast-qual -Werror
# Every x86-64 CPU of the last fifteen years has POPCNT; without the flag each
# popcount is a library call. (AVX-512 block tests are picked at run time.)
ARCH_CFLAGS ?= $(if $(filter x86_64,$(shell uname -m)),-mpopcnt)
# SANITIZE=address,undefined builds everything with those sanitizers.
SANITIZE ?=
ifneq ($(SANITIZE),)
SANFLAGS = -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
endif

PKGS      = libxxhash jansson
DAEMON_PKGS = libpcap libevent_core inih libsystemd libcap
BENCH_PKGS  = libhs
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

ALL_CFLAGS = -std=c11 $(WARN) $(CFLAGS) $(ARCH_CFLAGS) $(SANFLAGS) -D_GNU_SOURCE -Idaemon -Itools \
             $(PKG_CFLAGS) $(shell pkg-config --cflags $(DAEMON_PKGS) $(BENCH_PKGS) 2>/dev/null) -MMD -MP
LDLIBS     = $(PKG_LIBS) -lm -pthread

CORE_SRC  = daemon/error.c daemon/hash.c daemon/filter.c daemon/counting.c \
            daemon/store.c daemon/sizing.c
CORE_OBJ  = $(CORE_SRC:%.c=$(BUILD)/%.o)
CORE_LIB  = $(BUILD)/libbloomcore.a

DAEMON_SRC = daemon/entry.c daemon/packet.c daemon/sigscan.c daemon/match.c daemon/config.c daemon/log.c \
             daemon/events.c daemon/stats.c daemon/capture.c daemon/engine.c daemon/persist.c daemon/ttl.c \
             daemon/control.c daemon/rebuild.c daemon/service.c daemon/commands.c \
             daemon/privilege.c daemon/notify.c
DAEMON_OBJ = $(DAEMON_SRC:%.c=$(BUILD)/%.o)
DAEMON_LIB = $(BUILD)/libbloomd.a
DAEMON_LIBS := $(shell pkg-config --libs $(DAEMON_PKGS) 2>/dev/null)

TOOL_COMMON = $(BUILD)/tools/cli.o $(BUILD)/tools/ctlconn.o
TOOLS     = $(BUILD)/bloomd $(BUILD)/bloomsim $(BUILD)/bloomctl $(BUILD)/bloombench \
            $(BUILD)/pcapgen

UNIT_TESTS = $(patsubst tests/unit/%.c,$(BUILD)/tests/%.t,$(wildcard tests/unit/*.c))
SCRIPT_TESTS = $(filter-out tests/fuzz.t,$(wildcard tests/*.t))

.PHONY: all check check-asan test bench demo clean install uninstall deps fuzz fuzz-build

all: $(TOOLS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(CORE_LIB): $(CORE_OBJ)
	rm -f $@
	ar rcs $@ $^

$(DAEMON_LIB): $(DAEMON_OBJ)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/bloomd: $(BUILD)/daemon/main.o $(DAEMON_LIB) $(CORE_LIB)
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDLIBS) $(DAEMON_LIBS)

$(BUILD)/pcapgen: $(BUILD)/tools/pcapgen.o $(BUILD)/tools/synth.o $(TOOL_COMMON) $(DAEMON_LIB) $(CORE_LIB)
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDLIBS) $(DAEMON_LIBS)

$(BUILD)/bloomsim: $(BUILD)/tools/bloomsim.o $(TOOL_COMMON) $(CORE_LIB)
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/bloomctl: $(BUILD)/tools/bloomctl.o $(TOOL_COMMON) $(CORE_LIB)
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/bloombench: $(BUILD)/tools/bloombench.o $(BUILD)/tools/benchpath.o $(BUILD)/tools/benchctl.o \
		$(BUILD)/tools/synth.o \
		$(TOOL_COMMON) $(DAEMON_LIB) $(CORE_LIB)
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDLIBS) $(DAEMON_LIBS) -lbloom $(shell pkg-config --libs libhs)

$(BUILD)/tests/%.t: $(BUILD)/tests/unit/%.o $(BUILD)/tools/synth.o $(DAEMON_LIB) $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDLIBS) $(DAEMON_LIBS) -lcmocka

# The suite: unit tests (cmocka, TAP output) and tool tests (shell, TAP), all run by prove.
test: $(TOOLS) $(UNIT_TESTS)
	BUILD=$(BUILD) prove --timer $(UNIT_TESTS) $(SCRIPT_TESTS) $(EXTRA_TESTS)

check: test
	$(MAKE) --no-print-directory fuzz-build
	$(MAKE) --no-print-directory check-asan EXTRA_TESTS=tests/fuzz.t

# The suite again under ASan+UBSan (with EXTRA_TESTS, the fuzz pass, in the same prove run).
check-asan:
	$(MAKE) --no-print-directory BUILD=build-asan SANITIZE=address,undefined CFLAGS="-O1 -g" test

# Fuzz harnesses (libFuzzer, clang) for the parsers of untrusted bytes: packets, entries, config.
# `make fuzz` runs each for FUZZ_SECONDS; tests/fuzz.t runs a short fixed-seed pass in make check.
FUZZ_HARNESSES = packet entry config state control
FUZZ_SECONDS ?= 60
fuzz-build:
	$(MAKE) --no-print-directory BUILD=build-fuzz CC=clang SANITIZE=address,undefined \
		CFLAGS="-O1 -g -fsanitize=fuzzer-no-link" $(FUZZ_HARNESSES:%=build-fuzz/fuzz-%)

$(BUILD)/fuzz-%: $(BUILD)/tests/fuzz/%.o $(DAEMON_LIB) $(CORE_LIB)
	$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer $^ -o $@ $(LDLIBS) $(DAEMON_LIBS)

fuzz: fuzz-build
	for h in $(FUZZ_HARNESSES); do build-fuzz/fuzz-$$h -max_total_time=$(FUZZ_SECONDS) || exit 1; done

bench: $(BUILD)/bloombench
	tools/bench.sh $(BUILD)

demo: deps all
	tools/demo.sh $(BUILD)

deps:
	tools/install-deps.sh

# Binaries, man pages, the systemd unit (with these paths in it), and the annotated
# configuration (an existing one is kept).
install: all
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(SYSCONFDIR)/bloomd $(DESTDIR)$(SYSTEMDUNITDIR)
	install -m 755 $(BUILD)/bloomd $(DESTDIR)$(SBINDIR)/bloomd
	install -m 755 $(BUILD)/bloomctl $(BUILD)/bloomsim $(BUILD)/pcapgen $(DESTDIR)$(BINDIR)/
	install -m 644 man/bloomd.8 man/bloomctl.8 $(DESTDIR)$(MANDIR)/man8/
	install -m 644 man/bloomd.conf.5 $(DESTDIR)$(MANDIR)/man5/bloomd.conf.5
	sed -e 's|/usr/sbin/bloomd|$(SBINDIR)/bloomd|g' -e 's|/etc/bloomd/|$(SYSCONFDIR)/bloomd/|g' \
		systemd/bloomd.service > $(DESTDIR)$(SYSTEMDUNITDIR)/bloomd.service
	chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/bloomd.service
	test -e $(DESTDIR)$(SYSCONFDIR)/bloomd/bloomd.conf || \
		install -m 644 conf/bloomd.conf $(DESTDIR)$(SYSCONFDIR)/bloomd/bloomd.conf

# Removes what install put there, except the configuration, which may have been edited.
uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/bloomd $(DESTDIR)$(BINDIR)/bloomctl $(DESTDIR)$(BINDIR)/bloomsim \
		$(DESTDIR)$(BINDIR)/pcapgen $(DESTDIR)$(MANDIR)/man8/bloomd.8 \
		$(DESTDIR)$(MANDIR)/man8/bloomctl.8 $(DESTDIR)$(MANDIR)/man5/bloomd.conf.5 \
		$(DESTDIR)$(SYSTEMDUNITDIR)/bloomd.service

clean:
	rm -rf build build-asan build-fuzz

# Keep the objects make would call intermediate, so a second make does nothing.
.SECONDARY:

-include $(CORE_OBJ:.o=.d) $(DAEMON_OBJ:.o=.d) $(BUILD)/daemon/main.d \
	$(wildcard $(BUILD)/tools/*.d $(BUILD)/tests/unit/*.d $(BUILD)/tests/fuzz/*.d)
