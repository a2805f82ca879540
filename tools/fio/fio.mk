# SPDX-License-Identifier: MIT
# fio external ioengine "rblk" (included by the top Makefile).
#
# The engine is compiled against the fio source that matches the installed
# fio (Debian ships no fio headers).  tools/fio/get-fio-source.sh fetches it
# once with `apt-get source` into FIO_CACHE (kept across `make clean`) and
# configures it.  When the source cannot be had, everything else still
# builds, `make` says the engine is skipped, and the tests that need it skip.
#
#   FIO_SRC=/path/to/configured/fio-tree   use that tree, fetch nothing
#   FIO_CACHE=DIR                          where fetched trees live
#
# Outputs: $(FIO_ENGINE), and $(BUILD)/fio-bin naming the fio binary the
# engine is tested with (tests/integration/lib.sh reads it), and
# $(BUILD)/fio-selfbuilt the fio built from the source tree.

FIO_ENGINE := $(BUILD)/rblk-fio.so
FIO_CACHE  ?= $(shell [ -w /var/cache ] && echo /var/cache/rblk || echo $(abspath $(BUILD))/fio-cache)
FIO_SRC    ?= $(FIO_CACHE)/fio-src
FIO_STAMP  := $(BUILD)/fio-src.stamp
FIO_NOSRC  := $(BUILD)/fio-src.unavailable

# fio's headers need its config-host.h first, or they clash with glibc.
FIO_CFLAGS := $(filter-out -fsanitize=% -fno-sanitize-recover=% -MMD -MP,$(CFLAGS)) \
	      $(INC_tools/fio) -I$(FIO_SRC) -include $(FIO_SRC)/config-host.h
# -z now: a symbol fio does not export fails at load, not mid-run.
FIO_LDFLAGS := -shared -Wl,-z,now

# fio itself is not built with sanitizers, and an ASan-instrumented .so
# cannot load into it: under SANITIZE=1 the engine gets its own plain
# objects of the client library; otherwise it links the libraries.
ifeq ($(SANITIZE),1)
FIO_ENGINE_OBJS := $(patsubst %.c,$(BUILD)/fio-obj/%.o,$(CLIENT_SRC) $(PROTO_SRC))
$(BUILD)/fio-obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -fsanitize=% -fno-sanitize-recover=%,$(CFLAGS)) $(call includes,$<) -c -o $@ $<
else
FIO_ENGINE_OBJS := $(LIBCLIENT) $(LIBPROTO)
endif

.PHONY: fio-engine
fio-engine: $(FIO_ENGINE) $(BUILD)/fio-bin
all: fio-engine

# Present, fetched now, or remembered as unavailable (delete the
# .unavailable file, or `make clean`, to try again).
$(FIO_STAMP): tools/fio/get-fio-source.sh
	@mkdir -p $(BUILD)
	@if [ -f $(FIO_SRC)/config-host.h ]; then \
		touch $@; \
	elif [ -f $(FIO_NOSRC) ]; then \
		echo "fio engine skipped: $$(cat $(FIO_NOSRC))"; \
	elif [ "$(origin FIO_SRC)" != file ]; then \
		echo "FIO_SRC=$(FIO_SRC) has no config-host.h (run ./configure there)" >$(FIO_NOSRC); \
		echo "fio engine skipped: $$(cat $(FIO_NOSRC))"; \
	elif tools/fio/get-fio-source.sh $(FIO_CACHE) 2>$(BUILD)/fio-src.log && \
	     [ -f $(FIO_SRC)/config-host.h ]; then \
		touch $@; \
	else \
		tail -n 1 $(BUILD)/fio-src.log >$(FIO_NOSRC); \
		echo "fio engine skipped: $$(cat $(FIO_NOSRC)) (see tools/fio/README.md)"; \
	fi

$(FIO_ENGINE): tools/fio/rblk_engine.c $(FIO_ENGINE_OBJS) $(FIO_STAMP)
	@if [ -f $(FIO_SRC)/config-host.h ]; then \
		echo "$(CC) ... -o $@ tools/fio/rblk_engine.c (fio source $(FIO_SRC))"; \
		$(CC) $(FIO_CFLAGS) $(FIO_LDFLAGS) -o $@ tools/fio/rblk_engine.c \
			$(FIO_ENGINE_OBJS) $(LDLIBS) || exit 1; \
	else \
		rm -f $@ $(BUILD)/fio-selfbuilt; \
	fi

# fio built from the same tree: certainly ABI-identical to the engine.  Our
# command-line variables (CFLAGS=, BUILD=) must not leak into fio's make.
$(FIO_SRC)/fio: $(FIO_STAMP)
	@if [ -f $(FIO_SRC)/config-host.h ]; then \
		echo "making fio in $(FIO_SRC) (incremental; the tree outlives make clean)"; \
		env -u MAKEFLAGS -u MAKEOVERRIDES -u MFLAGS \
			$(MAKE) -C $(FIO_SRC) -j$$(nproc) fio >$(BUILD)/fio-build.log 2>&1 || \
			{ echo "building fio failed: see $(BUILD)/fio-build.log"; exit 1; }; \
		touch $@; \
	fi

# Which fio the tests load the engine into: Debian's /usr/bin/fio when it is
# the very version whose source the engine was built from (that is the fio
# users run), else the fio built from the tree.  README.md explains.
$(BUILD)/fio-bin: $(FIO_ENGINE) $(FIO_SRC)/fio
	@if [ -f $(FIO_ENGINE) ]; then \
		sys=$$(command -v fio 2>/dev/null); \
		src=$$(sed -n 's/^#define FIO_VERSION "\(.*\)"/\1/p' $(FIO_SRC)/FIO-VERSION-FILE 2>/dev/null); \
		[ -n "$$src" ] || src=$$(sed -n 's/^FIO_VERSION = //p' $(FIO_SRC)/FIO-VERSION-FILE 2>/dev/null); \
		if [ -n "$$sys" ] && [ "$$($$sys --version 2>/dev/null)" = "$$src" ]; then \
			echo "$$sys" >$@; \
		else \
			echo "$(abspath $(FIO_SRC))/fio" >$@; \
		fi; \
		echo "$(abspath $(FIO_SRC))/fio" >$(BUILD)/fio-selfbuilt; \
		echo "fio engine $(FIO_ENGINE) is tested with $$(cat $@)"; \
	else \
		rm -f $@ $(BUILD)/fio-selfbuilt; \
	fi
