#!/bin/bash
# SPDX-License-Identifier: MIT
# fio through the rblk engine against a real rblk-target over TCP loopback,
# every data check done by fio's crc32c verify.  For each backend (uring,
# aio): randwrite + verify, randrw + verify at 512 B / 4 KiB / 64 KiB / 1 MiB,
# 4 jobs (4 connections) at once, iodepth above the granted depth.  Then:
# TRIM reaches the backing file as zeros, FLUSH and FUA work, verify really
# catches a corrupted block, a refused LOGIN fails fio clearly, the
# secret_file and hostname options pass an HMAC + allow-list volume, and the
# engine works in the fio built from the same source as well.
. "$(dirname "$0")/lib.sh"
require_target
require_fio_engine

VOLSIZE=64M

. "$RBLK_ROOT/tests/fio-terse.sh"

# fio_run NAME MIN_READ_KB MIN_WRITE_KB FIO-ARGS...: runs fio (bounded) and
# checks its exit status and its terse result.
fio_run() {
	local name=$1 rk=$2 wk=$3 out=$T/fio-$1.out
	shift 3
	timeout 120 "${FIO:-$FIO_BIN}" --ioengine="$FIO_ENGINE" --target=127.0.0.1 \
		--port="$PORT" --volume=vol0 --verify_state_save=0 \
		--output-format=terse --name="$name" "$@" >"$out" 2>&1
	local rc=$?
	grep -v '^3;' "$out"
	[ "$rc" -eq 0 ] || { echo "fio exited $rc"; return 1; }
	fio_ok "$out" "$rk" "$wk"
}

start_backend() {	# BACKEND [extra [target] lines]
	local backend=$1
	shift
	PORT=$(free_port) || fail "no free port"
	write_conf "$T/$backend.conf" "$backend" "$T/$backend.img" "$VOLSIZE"
	if [ $# -gt 0 ]; then
		printf '%s\n' "$@" >"$T/extra"
		sed -i "/^\[target\]/r $T/extra" "$T/$backend.conf"
	fi
	start_target "$T/$backend.conf"
}

# ---- cases ---------------------------------------------------------------

case_randwrite() {
	fio_run randwrite 32768 32768 --rw=randwrite --bs=4k --iodepth=32 \
		--size=32M --verify=crc32c
}

case_randrw_bs() {	# BS
	local bs=$1 size=32M
	# Mixed reads and writes over one region, then verify of what was
	# written; iodepth 16 with 1 MiB blocks still fits the buffer pool.
	fio_run "randrw-$bs" 1 1 --rw=randrw --bs="$bs" --iodepth=16 \
		--size="$size" --verify=crc32c --io_size=16M
}

# 64 x 1 MiB in flight both ways: the target runs out of buffers while its
# READ answers wait for us, so the engine must read while it sends.
case_big_duplex() {
	fio_run big-duplex 1 1 --rw=randrw --bs=1M --iodepth=64 --size=64M \
		--io_size=256M --verify=crc32c
}

case_numjobs() {
	# 4 connections, each its own 16 MiB slice, all verified.
	fio_run numjobs4 $((4 * 16384)) $((4 * 16384)) --numjobs=4 \
		--offset_increment=16M --size=16M --rw=randwrite --bs=8k \
		--iodepth=16 --verify=crc32c
}

case_depth_over_grant() {
	# The target grants 8 (max_queue_depth); fio asks for 64.
	fio_run depth64 8192 8192 --rw=randwrite --bs=4k --iodepth=64 \
		--size=8M --verify=crc32c || return 1
	grep -q 'above the depth 8 the target granted' "$T/fio-depth64.out" ||
		{ echo "engine did not report the lowered depth"; return 1; }
}

case_trim() {
	local img=$1
	fio_run trim-fill 0 8192 --rw=write --bs=1M --size=8M \
		--buffer_pattern=0x5a || return 1
	fio_run trim 0 0 --rw=trim --bs=64k --size=2M --offset=1M || return 1
	# Trimmed range reads back as zeros from the backing file; the
	# neighbours keep their data (0x5a is 'Z').
	cmp -s -i $((1 << 20)):0 -n $((2 << 20)) "$img" /dev/zero ||
		{ echo "trimmed range is not zero in the backing file"; return 1; }
	cmp -s -i $((3 << 20)):0 -n 65536 "$img" <(head -c 65536 /dev/zero | tr '\0' Z) ||
		{ echo "data after the trimmed range is gone"; return 1; }
	cmp -s -n 65536 "$img" <(head -c 65536 /dev/zero | tr '\0' Z) ||
		{ echo "data before the trimmed range is gone"; return 1; }
	# And through the engine: a read of the trimmed range verifies as zeros.
	fio_run trim-read 2048 0 --rw=read --bs=64k --size=2M --offset=1M \
		--verify=pattern --verify_pattern=0x00 --verify_only
}

case_flush_fua() {
	fio_run flush 0 8192 --rw=randwrite --bs=4k --iodepth=8 --size=8M \
		--fsync=16 || return 1
	fio_run fdatasync 0 8192 --rw=randwrite --bs=4k --iodepth=8 --size=8M \
		--fdatasync=16 || return 1
	fio_run fua 8192 8192 --rw=randwrite --bs=4k --iodepth=8 --size=8M \
		--fua=1 --verify=crc32c
}

case_verify_catches_corruption() {
	local img=$1
	fio_run corrupt-write 0 4096 --rw=write --bs=64k --size=4M \
		--verify=crc32c --do_verify=0 || return 1
	fio_run corrupt-clean 4096 0 --rw=write --bs=64k --size=4M \
		--verify=crc32c --verify_only || return 1
	# Flip bytes in the 4th block behind the target's back.
	printf '\xde\xad\xbe\xef' |
		dd of="$img" bs=1 seek=$((3 * 65536 + 100)) conv=notrunc,fsync 2>/dev/null
	if fio_run corrupt-check 0 0 --rw=write --bs=64k --size=4M \
		--verify=crc32c --verify_only; then
		echo "verify passed over a corrupted block"
		return 1
	fi
	grep -q 'verify failed at file.*offset 196608' "$T/fio-corrupt-check.out" ||
		{ echo "fio failed, but not with the expected verify error"; return 1; }
}

case_login_refused() {
	local out=$T/refused.out
	if timeout 60 "$FIO_BIN" --ioengine="$FIO_ENGINE" --target=127.0.0.1 \
		--port="$PORT" --volume=nosuchvol --name=refused --rw=read \
		--size=1M >"$out" 2>&1; then
		echo "fio succeeded on a volume that does not exist"
		return 1
	fi
	grep -q "no such volume" "$out" || { cat "$out"; echo "no clear reason"; return 1; }
}

# The shipped example job file runs as documented (4 jobs, verify).
case_example_jobfile() {
	local out=$T/example.out
	RBLK_FIO_ENGINE=$FIO_ENGINE RBLK_TARGET=127.0.0.1 RBLK_PORT=$PORT \
		RBLK_VOLUME=vol0 timeout 120 "$FIO_BIN" --output-format=terse \
		"$RBLK_ROOT/tools/fio/examples/verify.fio" >"$out" 2>&1 ||
		{ cat "$out"; echo "examples/verify.fio failed"; return 1; }
	# 4 jobs x 25% of 64 MiB written and verified (group_reporting: one line).
	fio_ok "$out" 65536 65536
}

# expect_refused NAME PATTERN FIO-ARGS...: fio must fail, saying PATTERN.
expect_refused() {
	local name=$1 pat=$2
	shift 2
	if fio_run "$name" 0 0 --rw=read --bs=4k --size=1M "$@"; then
		echo "fio $name succeeded but should have been refused"
		return 1
	fi
	grep -qi -- "$pat" "$T/fio-$name.out" ||
		{ echo "fio $name failed without saying '$pat'"; return 1; }
}

# Volume with a secret and an allow list: the engine's secret_file and
# hostname options get in; a wrong secret, a missing one or another host
# name are refused with a reason.
case_auth() {
	local good=$T/good.key bad=$T/bad.key
	head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$good"
	head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$bad"
	chmod 600 "$good" "$bad"
	stop_target
	start_backend uring
	stop_target
	# A host list replaces write_conf's open access (they exclude each other).
	sed -i '/^allow_any_host/d' "$T/uring.conf"
	printf 'secret_file = %s\nallow_hosts = fio-client\n' "$good" >>"$T/uring.conf"
	start_target "$T/uring.conf"
	fio_run auth-ok 8192 8192 --rw=randwrite --bs=4k --iodepth=8 --size=8M \
		--verify=crc32c --secret_file="$good" --hostname=fio-client || return 1
	expect_refused auth-bad "auth" --secret_file="$bad" --hostname=fio-client || return 1
	expect_refused auth-none "secret" --hostname=fio-client || return 1
	expect_refused auth-host "access denied" --secret_file="$good" --hostname=other-client
}

# The tests' fio is $FIO_BIN (build/fio-bin); this proves the other one too:
# the fio built from the engine's source tree, or Debian's if that is FIO_BIN.
case_other_fio() {
	local self other
	self=$(cat "$RBLK_BUILD/fio-selfbuilt" 2>/dev/null)
	if [ -n "$self" ] && [ "$self" != "$FIO_BIN" ]; then
		other=$self
	else
		other=$(command -v fio)
	fi
	[ -n "$other" ] && [ -x "$other" ] && [ "$other" != "$FIO_BIN" ] ||
		{ echo "no second fio binary to prove the engine with"; return 77; }
	echo "engine in $other"
	FIO=$other fio_run other-fio 8192 4096 --rw=randrw --bs=4k \
		--iodepth=16 --size=16M --verify=crc32c --io_size=16M
}

for backend in uring aio; do
	start_backend "$backend"
	run_case "$backend-randwrite-verify" case_randwrite
	for bs in 512 4k 64k 1M; do
		run_case "$backend-randrw-verify-$bs" case_randrw_bs "$bs"
	done
	run_case "$backend-numjobs4-verify" case_numjobs
	[ "$backend" = uring ] && run_case uring-randrw-1M-qd64 case_big_duplex
	stop_target
	start_backend "$backend" "max_queue_depth = 8"
	run_case "$backend-iodepth-above-grant" case_depth_over_grant
	stop_target
done

start_backend uring
run_case trim-zeroes case_trim "$T/uring.img"
run_case flush-fdatasync-fua case_flush_fua
run_case verify-catches-corruption case_verify_catches_corruption "$T/uring.img"
run_case login-refused case_login_refused
run_case example-jobfile case_example_jobfile
run_case other-fio-binary case_other_fio
run_case auth-secret-hostname case_auth
stop_target
[ "$TARGET_RC" -eq 0 ] || fail "target exited $TARGET_RC after SIGTERM"

# A sanitizer build of the target must not have reported anything.
if declare -F target_log_clean >/dev/null; then target_log_clean; fi
exit $((nfail > 0))
