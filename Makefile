# SPDX-License-Identifier: MIT
# rblk: one Makefile for everything.  Objects and binaries go to build/.
#
#   make                 build daemons, CLI, library, fio engine (if fio source found)
#   make test            build and run every test tier (tests/run); also builds
#                        the UBSan alignment-check copy in $(BUILD)/ubsan
#   make SANITIZE=1 test same, with ASan + UBSan
#   make test-newkernel  the VM suites on the newest trixie-backports kernel
#                        (RBLK_VM_KERNEL=new, docs/vm-tests.md); TESTS= narrows
#   make fuzz            run each libFuzzer target FUZZ_SECONDS (60) s (docs/fuzzing.md)
#   make bench           benchmarks; results to docs/benchmarks.md
#   make install PREFIX=/usr/local DESTDIR=   (also SYSCONFDIR, SYSTEMDUNITDIR, TMPFILESDIR, DOCDIR,
#                        MANDIR, BASHCOMPDIR); /etc/rblk/rblk-target.conf only when absent
#   make man             man pages from docs/man/*.scd (scdoc) into build/man/
#   make clean
#   WERROR=0             do not turn warnings into errors

PREFIX   ?= /usr/local
DESTDIR  ?=
SYSCONFDIR     ?= /etc
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
TMPFILESDIR    ?= $(PREFIX)/lib/tmpfiles.d
DOCDIR         ?= $(PREFIX)/share/doc/rblk
MANDIR         ?= $(PREFIX)/share/man
BASHCOMPDIR    ?= $(PREFIX)/share/bash-completion/completions
SANITIZE ?= 0
# Sanitizer builds get their own tree so objects never mix.
ifeq ($(SANITIZE),1)
BUILD    ?= build-san
else
BUILD    ?= build
endif
CC       ?= cc
WERROR   ?= 1

PKGS := liburing libibverbs librdmacm json-c libcrypto
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
ifeq ($(PKG_LIBS),)
$(error pkg-config could not find $(PKGS): install liburing-dev libibverbs-dev librdmacm-dev libjson-c-dev libssl-dev (see README.md))
endif

CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -D_GNU_SOURCE -pthread -fPIC
CFLAGS  += $(PKG_CFLAGS)
ifeq ($(WERROR),1)
CFLAGS  += -Werror
endif
LDLIBS  += $(PKG_LIBS) -laio -lpthread
ifeq ($(SANITIZE),1)
CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif
CFLAGS  += -MMD -MP

PROTO_SRC   := $(sort $(wildcard proto/*.c))
CLIENT_SRC  := $(sort $(wildcard initiator/client/*.c))
TARGET_SRC  := $(filter-out target/main.c,$(sort $(wildcard target/*.c)))
INIT_SRC    := $(filter-out initiator/main.c,$(sort $(wildcard initiator/*.c)))
CTL_SRC     := $(sort $(wildcard tools/rblkctl/*.c))
UNIT_SRC    := $(sort $(wildcard tests/unit/test_*.c))
UNIT_HELPER := $(filter-out $(UNIT_SRC),$(sort $(wildcard tests/unit/*.c)))

# The target's rbd backend (volumes on Ceph RBD images) needs librbd-dev
# and librados-dev (no pkg-config files: a test link finds them).  Without
# them the target is built without it, and says so.
RBD_SRC  := target/rbd.c target/rbd_attach.c target/rbd_cluster.c target/rbd_image.c target/rbd_ha.c
HAVE_RBD := $(shell printf '\043include <rbd/librbd.h>\nint main(void){rbd_version(0,0,0);return 0;}\n' | \
	      $(CC) -x c - -o /dev/null -lrbd -lrados >/dev/null 2>&1 && echo 1)
ifeq ($(HAVE_RBD),1)
CFLAGS      += -DRBLK_HAVE_RBD
LDLIBS      += -lrbd -lrados
else
TARGET_SRC  := $(filter-out $(RBD_SRC),$(TARGET_SRC))
ifeq ($(MAKECMDGOALS),)
$(info rbd backend: librbd-dev/librados-dev not found: building rblk-target without it (tools/install-deps installs them))
endif
endif

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

# Include paths per component, so the build enforces the layering
# (docs/design.md): a file sees the headers of its own folder (the
# compiler's "" lookup) and of the layers below it, never those above or
# beside it.  The target cannot include the client's headers, the client
# not the target's, proto nothing.  Unit tests and fuzzers test modules of
# every layer and see them all; rblkctl reaches the initiator's headers by
# their relative path, which names that one dependency.
INC_proto            :=
INC_target           := -Iproto
INC_initiator/client := -Iproto
INC_initiator        := -Iproto -Iinitiator/client
INC_tools/rblkctl    := -Iproto -Iinitiator/client
INC_tools/fio        := -Iproto -Iinitiator/client
INC_tests/tools      := -Iproto -Iinitiator/client
INC_tests/unit       := -Iproto -Iinitiator/client -Itarget
INC_tests/fuzz       := -Iproto -Itarget
includes = $(INC_$(patsubst %/,%,$(dir $(1))))

# The release version, written once: the first line of debian/changelog;
# a git checkout adds what git describes (git may be absent: CI's fresh
# machine, a source package).  Only proto/version.o sees it, and it is
# rebuilt when the text changes ($(BUILD)/version.txt).
RBLK_VERSION := $(shell sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog 2>/dev/null)
RBLK_GIT     := $(shell git describe --always --dirty 2>/dev/null)
VERSION_STR  := $(or $(RBLK_VERSION),unknown)$(if $(RBLK_GIT), (git $(RBLK_GIT)))

LIBPROTO  := $(BUILD)/libproto.a
LIBCLIENT := $(BUILD)/librblkclient.a
LIBTARGET := $(BUILD)/libtarget.a
LIBINIT   := $(BUILD)/libinitiator.a

BINS := $(BUILD)/rblk-target
ifneq ($(wildcard initiator/main.c),)
BINS += $(BUILD)/rblk-initiator
endif
ifneq ($(CTL_SRC),)
BINS += $(BUILD)/rblkctl
endif
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
# Test tools: one C file = one program (hostile client, helpers for scripts).
TOOL_SRC  := $(sort $(wildcard tests/tools/*.c))
TOOL_BINS := $(patsubst tests/tools/%.c,$(BUILD)/tests/tools/%,$(TOOL_SRC))

# Man pages: written once in scdoc (docs/man/*.scd), built when scdoc is
# there (tools/install-deps installs it); make install needs them.
MAN_SRC  := $(sort $(wildcard docs/man/*.scd))
MAN_OUT  := $(patsubst docs/man/%.scd,$(BUILD)/man/%,$(MAN_SRC))
HAVE_SCDOC := $(shell command -v scdoc >/dev/null 2>&1 && echo 1)

.PHONY: all man test test-newkernel soak bench install clean unit-tests FORCE
# Keep every object: make would otherwise delete the test programs' objects
# as intermediates, and print that after the test summary.
.SECONDARY:
all: $(BINS) $(if $(HAVE_SCDOC),$(MAN_OUT))

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(call includes,$<) -c -o $@ $<

man: $(MAN_OUT)
$(BUILD)/man/%: docs/man/%.scd
	@command -v scdoc >/dev/null || { echo "make man: scdoc not found (apt-get install scdoc, or tools/install-deps)"; exit 1; }
	@mkdir -p $(dir $@)
	scdoc <$< >$@

$(BUILD)/version.txt: FORCE
	@mkdir -p $(dir $@)
	@echo '$(VERSION_STR)' | cmp -s - $@ || echo '$(VERSION_STR)' >$@
VERSION_OBJS := $(foreach d,obj ubsan/obj fuzz/obj fio-obj,$(BUILD)/$(d)/proto/version.o)
$(VERSION_OBJS): $(BUILD)/version.txt
$(VERSION_OBJS): CFLAGS += -DRBLK_VERSION='"$(VERSION_STR)"'
$(VERSION_OBJS): FUZZ_CFLAGS += -DRBLK_VERSION='"$(VERSION_STR)"'

$(LIBPROTO): $(call obj,$(PROTO_SRC))
$(LIBCLIENT): $(call obj,$(CLIENT_SRC))
$(LIBTARGET): $(call obj,$(TARGET_SRC))
$(LIBINIT): $(call obj,$(INIT_SRC))
$(BUILD)/%.a:
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

$(BUILD)/rblk-target: $(call obj,target/main.c) $(LIBTARGET) $(LIBPROTO)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/rblk-initiator: $(call obj,initiator/main.c) $(LIBINIT) $(LIBCLIENT) $(LIBPROTO)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/rblkctl: $(call obj,$(CTL_SRC)) $(LIBINIT) $(LIBCLIENT) $(LIBPROTO)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Unit tests link every library so any module can be tested alone.
$(BUILD)/tests/%: $(call obj,tests/unit/%.c) $(call obj,$(UNIT_HELPER)) $(LIBTARGET) $(LIBINIT) $(LIBCLIENT) $(LIBPROTO)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(shell pkg-config --libs cmocka)

# Test tools are clients: the client library and proto, nothing of the target.
$(BUILD)/tests/tools/%: $(call obj,tests/tools/%.c) $(LIBCLIENT) $(LIBPROTO)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Alignment regression (docs/target.md, "Unaligned PDUs"): the wire code
# built a second time with UBSan's alignment check fatal, in $(BUILD)/ubsan.
# tests/unit/test_unaligned runs every decoder at offsets 0-7 with it, and
# tests/integration/31-unaligned.sh runs that target ($(UBSAN_TARGET)), so
# plain `make test` fails on a decoder that reads a wire struct in place.
UBSAN_FLAGS  := -fsanitize=alignment,undefined -fno-sanitize-recover=all
UBSAN        := $(BUILD)/ubsan
ubsan_obj     = $(patsubst %.c,$(UBSAN)/obj/%.o,$(1))
UBSAN_TARGET := $(UBSAN)/rblk-target

$(UBSAN)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(call includes,$<) $(UBSAN_FLAGS) -c -o $@ $<

$(UBSAN)/libproto.a: $(call ubsan_obj,$(PROTO_SRC))
$(UBSAN)/libtarget.a: $(call ubsan_obj,$(TARGET_SRC))

$(UBSAN_TARGET): $(call ubsan_obj,target/main.c) $(UBSAN)/libtarget.a $(UBSAN)/libproto.a
	$(CC) $(LDFLAGS) $(UBSAN_FLAGS) -o $@ $^ $(LDLIBS)

# Explicit rule: wins over the unit-test pattern rule above.
$(BUILD)/tests/test_unaligned: $(call ubsan_obj,tests/unit/test_unaligned.c) $(UBSAN)/libtarget.a $(UBSAN)/libproto.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(UBSAN_FLAGS) -o $@ $^ $(LDLIBS) $(shell pkg-config --libs cmocka)

# Test preloads: a shared object a test puts under the target
# (LD_PRELOAD) to make a library misbehave on cue.  The one there is
# wraps librbd, so it is built with the rbd backend only.
PRELOAD_SRC := $(if $(HAVE_RBD),$(sort $(wildcard tests/preload/*.c)))
PRELOAD_SOS := $(patsubst tests/preload/%.c,$(BUILD)/tests/preload/%.so,$(PRELOAD_SRC))
$(BUILD)/tests/preload/%.so: tests/preload/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -shared -o $@ $< -ldl

unit-tests: $(UNIT_BINS) $(TOOL_BINS) $(UBSAN_TARGET) $(PRELOAD_SOS)

# The fio engine has its own rules (it needs the fio source tree).
-include tools/fio/fio.mk
# libFuzzer targets (clang): fuzzers, fuzz.
include tests/fuzz/fuzz.mk

test: all unit-tests $(FIO_ENGINE) fuzzers
	@BUILD=$(BUILD) SANITIZE=$(SANITIZE) tests/run

# Long fault cycles that do not fit make test's time: 100 link drops in a
# row under I/O on two VM nodes, with leak counts (suite-pair); then the
# failover cases on four VM nodes (client, two targets, Ceph: soak-ha),
# with 20 failovers in a row.
soak: all $(FIO_ENGINE)
	@BUILD=$(BUILD) RBLK_PAIR_DROPS=$${RBLK_PAIR_DROPS:-100} TESTS='vm/suite-pair*' \
		RBLK_VM_CASES='ublk-link-drops' tests/run vm
	@BUILD=$(BUILD) RBLK_SOAK=1 RBLK_HA_FAILOVERS=$${RBLK_HA_FAILOVERS:-40} \
		TESTS='vm/soak-ha' tests/run vm

# The VM suites on the newest trixie-backports kernel instead of Debian 12's
# 6.12 (tests/vm/prepare fetches it); not part of make test, CI time is short.
test-newkernel: all unit-tests $(FIO_ENGINE)
	@BUILD=$(BUILD) RBLK_VM_KERNEL=new TESTS="$${TESTS:-vm/*}" tests/run vm

bench: all $(FIO_ENGINE)
	BUILD=$(BUILD) tools/bench/run-bench

# Units name the installed paths: @BINDIR@, @SYSCONFDIR@, @DOCDIR@ filled in.
UNITS := $(patsubst etc/systemd/%.in,$(BUILD)/systemd/%,$(wildcard etc/systemd/*.in))
$(BUILD)/systemd/%: etc/systemd/%.in Makefile
	@mkdir -p $(dir $@)
	sed -e 's|@BINDIR@|$(PREFIX)/bin|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
	    -e 's|@DOCDIR@|$(DOCDIR)|g' $< >$@.tmp && mv $@.tmp $@
# The paths go into the units: rebuild them when PREFIX and friends change.
$(UNITS): FORCE
FORCE:

install: all man $(UNITS)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/rblk $(DESTDIR)$(SYSCONFDIR)/rblk \
		$(DESTDIR)$(SYSCONFDIR)/rblk/attach $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(TMPFILESDIR) $(DESTDIR)$(DOCDIR) \
		$(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(BASHCOMPDIR)
	install -m 0755 $(BINS) $(DESTDIR)$(PREFIX)/bin/
	install -m 0644 etc/rblk-target.conf $(DESTDIR)$(PREFIX)/share/rblk/rblk-target.conf.sample
	@# The config systemd starts from, only where there is none: an
	@# admin's file is never overwritten (make install twice, an upgrade).
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/rblk/rblk-target.conf ]; then \
		echo "kept $(DESTDIR)$(SYSCONFDIR)/rblk/rblk-target.conf"; \
	else \
		install -m 0644 etc/rblk-target.conf $(DESTDIR)$(SYSCONFDIR)/rblk/rblk-target.conf && \
		echo "installed $(DESTDIR)$(SYSCONFDIR)/rblk/rblk-target.conf (the sample: edit it)"; \
	fi
	for m in $(MAN_OUT); do s=$${m##*.}; gzip -9n <$$m >$(DESTDIR)$(MANDIR)/man$$s/$${m##*/}.gz; done
	install -m 0644 tools/completion/rblkctl.bash $(DESTDIR)$(BASHCOMPDIR)/rblkctl
	install -m 0644 $(UNITS) $(DESTDIR)$(SYSTEMDUNITDIR)/
	install -m 0644 etc/tmpfiles.d/rblk.conf $(DESTDIR)$(TMPFILESDIR)/rblk.conf
	install -m 0644 docs/*.md $(DESTDIR)$(DOCDIR)/
	$(if $(wildcard $(FIO_ENGINE)),install -d $(DESTDIR)$(PREFIX)/lib/rblk && install -m 0755 $(FIO_ENGINE) $(DESTDIR)$(PREFIX)/lib/rblk/)

clean:
	rm -rf build build-san

-include $(shell find $(BUILD)/obj $(UBSAN)/obj $(BUILD)/fuzz/obj -name '*.d' 2>/dev/null)
