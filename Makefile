# SPDX-License-Identifier: MIT
# rblk: one Makefile for everything.  Objects and binaries go to build/.
#
#   make                 build daemons, CLI, library, fio engine (if fio source found)
#   make test            build and run every test tier (tests/run)
#   make SANITIZE=1 test same, with ASan + UBSan
#   make fuzz            run each libFuzzer target FUZZ_SECONDS (60) s (docs/fuzzing.md)
#   make bench           benchmarks; results to docs/benchmarks.md
#   make install PREFIX=/usr/local DESTDIR=
#   make clean
#   WERROR=0             do not turn warnings into errors

PREFIX   ?= /usr/local
DESTDIR  ?=
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
CFLAGS  += -Iproto -Iinitiator/client -Itarget $(PKG_CFLAGS)
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

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

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

.PHONY: all test bench install clean unit-tests
# Keep every object: make would otherwise delete the test programs' objects
# as intermediates, and print that after the test summary.
.SECONDARY:
all: $(BINS)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

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

$(BUILD)/tests/tools/%: $(call obj,tests/tools/%.c) $(LIBTARGET) $(LIBCLIENT) $(LIBPROTO)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

unit-tests: $(UNIT_BINS) $(TOOL_BINS)

# The fio engine has its own rules (it needs the fio source tree).
-include tools/fio/fio.mk
# libFuzzer targets (clang): fuzzers, fuzz.
include tests/fuzz/fuzz.mk

test: all unit-tests $(FIO_ENGINE) fuzzers
	@BUILD=$(BUILD) SANITIZE=$(SANITIZE) tests/run

bench: all $(FIO_ENGINE)
	BUILD=$(BUILD) tools/bench/run-bench

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/rblk $(DESTDIR)/etc/rblk
	install -m 0755 $(BINS) $(DESTDIR)$(PREFIX)/bin/
	install -m 0644 etc/rblk-target.conf $(DESTDIR)$(PREFIX)/share/rblk/rblk-target.conf.sample
	$(if $(wildcard $(FIO_ENGINE)),install -d $(DESTDIR)$(PREFIX)/lib/rblk && install -m 0755 $(FIO_ENGINE) $(DESTDIR)$(PREFIX)/lib/rblk/)

clean:
	rm -rf build build-san

-include $(shell find $(BUILD)/obj $(BUILD)/fuzz/obj -name '*.d' 2>/dev/null)
