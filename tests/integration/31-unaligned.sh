#!/bin/bash
# SPDX-License-Identifier: MIT
# PDUs that start at odd offsets of the target's receive buffer (a READ
# with inline bytes, then a valid READ, in one send) against the target
# built with UBSan's alignment check fatal ($BUILD/ubsan/rblk-target, see
# the Makefile): a decoder that reads a wire struct in place kills that
# target, so this fails even when the rest of the build has no sanitizer.
# A bystander does fio verify on a volume of its own meanwhile.
. "$(dirname "$0")/lib.sh"
TARGET_BIN=$RBLK_BUILD/ubsan/rblk-target
require_target
HOSTILE=$RBLK_BUILD/tests/tools/rblk-hostile
[ -x "$HOSTILE" ] || skip "$HOSTILE not built"

PORT=$(free_port) || fail "no free port"
write_conf "$T/t.conf" uring "$T/vol0.img" 16M
printf '\n[volume byst]\npath = %s/byst.img\nsize = 16M\nallow_hosts = 127.0.0.1\n' "$T" >>"$T/t.conf"
start_target "$T/t.conf"
bystander_start byst

"$HOSTILE" 127.0.0.1 "$PORT" vol0 unaligned || {
	tail -20 "$T/target.log"
	fail "unaligned PDUs were not answered as docs/protocol.md says"
}
kill -0 "$TARGET_PID" 2>/dev/null || { tail -20 "$T/target.log"; fail "target died"; }
bystander_check
target_log_clean
stop_target TERM
[ "$TARGET_RC" -eq 0 ] || { tail -20 "$T/target.log"; fail "target exit $TARGET_RC"; }
