#!/bin/bash
# SPDX-License-Identifier: MIT
# A failing backing store (the fault backend failing I/O in one range):
# READ and FUA WRITE there are answered IO_ERROR, the connection stays
# usable, I/O elsewhere on the volume works, and the target logs the
# error with volume, peer and range, then stops cleanly.
. "$(dirname "$0")/lib.sh"
require_target
HOSTILE=$RBLK_BUILD/tests/tools/rblk-hostile
[ -x "$HOSTILE" ] || skip "$HOSTILE not built"

PORT=$(free_port) || fail "no free port"
write_conf "$T/t.conf" fault "$T/vol0.img" 16M
RBLK_FAULT_EIO=1048576:65536 start_target "$T/t.conf"
timeout 60 "$HOSTILE" 127.0.0.1 "$PORT" vol0 io-error --offset 1048576 ||
	fail "io-error case"
grep -q 'volume vol0: READ offset 1048576 length 4096: Input/output error' "$T/target.log" ||
	{ cat "$T/target.log"; fail "no log line for the failed READ"; }
stop_target TERM
[ "$TARGET_RC" -eq 0 ] || fail "target exit $TARGET_RC"
echo "fault backend errors reach the initiator as IO_ERROR"
