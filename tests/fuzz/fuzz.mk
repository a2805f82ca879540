# SPDX-License-Identifier: MIT
# libFuzzer targets (included by the top Makefile; docs/fuzzing.md).
#
#   make fuzzers                 build $(BUILD)/fuzz/fuzz_* (clang + libFuzzer)
#   make fuzz [FUZZ_SECONDS=60]  run each for that long; fails on a crash
#
# The fuzzers need clang with its libFuzzer runtime (Debian 12: clang,
# libclang-rt-14-dev).  Without them everything else still builds, `make`
# says the fuzzers are skipped, and the fuzz tests of `make test` skip with
# the reason.  They have their own objects (clang, -fsanitize=fuzzer-no-link,
# ASan, UBSan) under $(BUILD)/fuzz/obj, whatever SANITIZE says.

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_NAMES   := $(patsubst tests/fuzz/fuzz_%.c,%,$(sort $(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_BINS    := $(patsubst %,$(BUILD)/fuzz/fuzz_%,$(FUZZ_NAMES))
FUZZ_OK      := $(BUILD)/fuzz/toolchain.ok
FUZZ_NO      := $(BUILD)/fuzz/toolchain.unavailable

FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
		-fno-omit-frame-pointer
FUZZ_CFLAGS  := -g -O1 $(FUZZ_SAN) -fsanitize=fuzzer-no-link \
		$(filter-out -O% -g -fsanitize=% -fno-sanitize-recover=% -fno-omit-frame-pointer,$(CFLAGS))
FUZZ_LDFLAGS := $(FUZZ_SAN) -fsanitize=fuzzer

fuzz_obj = $(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(1))
FUZZ_LIBPROTO  := $(BUILD)/fuzz/libproto.a
FUZZ_LIBTARGET := $(BUILD)/fuzz/libtarget.a

.PHONY: fuzzers fuzz fuzz-bins
# Whether the toolchain works is known only once $(FUZZ_OK) was made.
fuzzers: $(FUZZ_OK)
	@if [ -f $(FUZZ_OK) ]; then \
		$(MAKE) --no-print-directory fuzz-bins; \
	fi
fuzz-bins: $(FUZZ_BINS)
	@:

# Can $(FUZZ_CC) link a libFuzzer program?  Remembered either way (delete
# the file, or `make clean`, to probe again).
$(FUZZ_OK):
	@mkdir -p $(dir $@)
	@rm -f $(FUZZ_NO)
	@printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n);\nint LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return d && n > 1000000; }\n' \
		>$(BUILD)/fuzz/probe.c
	@if ! command -v $(FUZZ_CC) >/dev/null 2>&1; then \
		echo "$(FUZZ_CC) not found (tools/install-deps installs clang and libclang-rt-14-dev)" >$(FUZZ_NO); \
	elif ! $(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $(BUILD)/fuzz/probe \
		$(BUILD)/fuzz/probe.c >$(BUILD)/fuzz/probe.log 2>&1; then \
		echo "$(FUZZ_CC) cannot link -fsanitize=fuzzer (no libFuzzer runtime: install libclang-rt-14-dev)" >$(FUZZ_NO); \
	fi
	@if [ -f $(FUZZ_NO) ]; then \
		echo "fuzzers skipped: $$(cat $(FUZZ_NO))"; \
	else \
		touch $@; \
	fi

$(BUILD)/fuzz/obj/%.o: %.c $(FUZZ_OK)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(call includes,$<) -c -o $@ $<

$(FUZZ_LIBPROTO): $(call fuzz_obj,$(PROTO_SRC))
$(FUZZ_LIBTARGET): $(call fuzz_obj,$(TARGET_SRC))

$(BUILD)/fuzz/fuzz_%: $(BUILD)/fuzz/obj/tests/fuzz/fuzz_%.o $(FUZZ_LIBTARGET) $(FUZZ_LIBPROTO)
	$(FUZZ_CC) $(FUZZ_LDFLAGS) -o $@ $^ $(LDLIBS)

fuzz: fuzzers
	@[ -f $(FUZZ_OK) ] || { echo "make fuzz: $$(cat $(FUZZ_NO))" >&2; exit 1; }
	@BUILD=$(BUILD) FUZZ_SECONDS=$(FUZZ_SECONDS) tests/run fuzz
