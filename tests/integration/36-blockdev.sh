#!/bin/bash
# SPDX-License-Identifier: MIT
# A block device as the store (a loop device over a sparse file): size
# from BLKGETSIZE64, block size from BLKSSZGET, discard probed from sysfs,
# BLKZEROOUT/BLKDISCARD on the reactor's offload thread, over-limit ones
# refused TOO_LARGE [V34], verified I/O with both
# backends, and a configured size larger than the device is refused.
. "$(dirname "$0")/lib.sh"
require_target
GOOD=$RBLK_BUILD/tests/tools/rblk-goodclient
HOSTILE=$RBLK_BUILD/tests/tools/rblk-hostile
[ -x "$GOOD" ] && [ -x "$HOSTILE" ] || skip "test tools not built"
[ "$(id -u)" -eq 0 ] || skip "needs root for a loop device"
command -v losetup >/dev/null || skip "no losetup"
truncate -s 64M "$T/backing.img"
LOOP=$(losetup -f --show "$T/backing.img" 2>/dev/null) || skip "cannot set up a loop device"
trap 'losetup -d "$LOOP" 2>/dev/null; _cleanup' EXIT

nfail=0
for backend in uring aio; do
	PORT=$(free_port) || fail "no free port"
	: >"$T/target.log"
	write_conf "$T/$backend.conf" "$backend" "$LOOP" 64M
	start_target "$T/$backend.conf"
	ok=1
	grep -q "volume vol0: path $LOOP, size 67108864 bytes, block 512, backend $backend" "$T/target.log" || ok=0
	timeout 60 "$GOOD" --seconds 2 --region 0:33554432 127.0.0.1 "$PORT" vol0 >"$T/g.out" 2>&1 || ok=0
	for c in write-zeroes discard range-too-large out-of-range; do
		timeout 30 "$HOSTILE" 127.0.0.1 "$PORT" vol0 "$c" >>"$T/h.out" 2>&1 || ok=0
	done
	stop_target TERM
	[ "$TARGET_RC" -eq 0 ] || ok=0
	if [ $ok -eq 1 ]; then
		echo "RBLK-CASE: PASS blockdev-$backend $(tail -n 1 "$T/g.out")"
	else
		cat "$T/g.out" "$T/h.out"; tail -20 "$T/target.log"
		echo "RBLK-CASE: FAIL blockdev-$backend"
		nfail=$((nfail + 1))
	fi
done

# A size larger than the device: refused at startup, naming the volume.
PORT=$(free_port) || fail "no free port"
write_conf "$T/big.conf" uring "$LOOP" 128M
timeout 10 "$TARGET_BIN" --config "$T/big.conf" >"$T/big.log" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "volume vol0: size .* is larger than device $LOOP" "$T/big.log"; then
	echo "RBLK-CASE: PASS blockdev-size-too-large-refused"
else
	cat "$T/big.log"
	echo "RBLK-CASE: FAIL blockdev-size-too-large-refused (rc $rc)"
	nfail=$((nfail + 1))
fi
[ "$nfail" -eq 0 ]
