#!/bin/bash
# SPDX-License-Identifier: MIT
# The smallest buffer pool (4 MiB, one reactor) under more outstanding
# data than it holds: deep 64 KiB and 1 MiB reads and writes from two
# clients.  The target must keep reading capsules (READs wait for a chunk
# in their slot, WRITE payloads overflow to heap buffers), so nothing
# stalls or deadlocks, every byte verifies, and a SIGTERM in the middle
# still drains and exits 0.
. "$(dirname "$0")/lib.sh"
require_target
GOOD=$RBLK_BUILD/tests/tools/rblk-goodclient
[ -x "$GOOD" ] || skip "$GOOD not built"

PORT=$(free_port) || fail "no free port"
write_conf "$T/t.conf" uring "$T/vol0.img" 64M
sed -i 's/^reactors = 2$/reactors = 1\nreactor_buffer_mb = 4/' "$T/t.conf"
start_target "$T/t.conf"

timeout 120 "$GOOD" --seconds 4 --depth 64 --region 0:16777216 127.0.0.1 "$PORT" vol0 \
	>"$T/g1.out" 2>&1 &
g1=$!
timeout 120 "$GOOD" --seconds 4 --depth 64 --region 16777216:16777216 127.0.0.1 "$PORT" vol0 \
	>"$T/g2.out" 2>&1 &
g2=$!
fio_rc=0
if [ -f "$FIO_ENGINE" ] && command -v "$FIO_BIN" >/dev/null 2>&1; then
	timeout 120 "$FIO_BIN" --ioengine="$FIO_ENGINE" --target=127.0.0.1 \
		--port="$PORT" --volume=vol0 --verify_state_save=0 --name=big \
		--rw=randrw --bs=1M --iodepth=16 --offset=32M --size=32M \
		--loops=3 --verify=crc32c >"$T/fio.out" 2>&1 || fio_rc=1
	[ $fio_rc -eq 0 ] || tail -20 "$T/fio.out"
fi
wait $g1 || { cat "$T/g1.out"; fail "client 1 failed under buffer pressure"; }
wait $g2 || { cat "$T/g2.out"; fail "client 2 failed under buffer pressure"; }
[ $fio_rc -eq 0 ] || fail "fio 1 MiB verify failed under buffer pressure"
cat "$T/g1.out" "$T/g2.out"
grep -q WARN "$T/target.log" && { grep WARN "$T/target.log" | head; fail "target warned"; }

"$GOOD" --hammer --depth 64 --region 0:16777216 127.0.0.1 "$PORT" vol0 >"$T/h.out" 2>&1 &
h=$!
_cleanup_pids+=($h)
sleep 1
stop_target TERM
[ "$TARGET_RC" -eq 0 ] || fail "target exit $TARGET_RC after SIGTERM under pressure"
timeout 20 tail --pid=$h -f /dev/null || fail "hammer client hung"
wait $h || { cat "$T/h.out"; fail "hammer client saw bad statuses or data"; }
grep 'shutdown:' "$T/target.log"
echo "buffer pressure: no stall, data verified, clean stop"
