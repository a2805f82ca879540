#!/bin/bash
# SPDX-License-Identifier: MIT
# Guest side of tests/vm/suite-ublk.sh.  A target runs inside each case (so
# the case runner reaps it), serving a file on the guest's tmpfs over RDMA
# (Soft-RoCE) when rxe comes up, else TCP; the transport used is printed and
# the attach-rdma case SKIPs when it is TCP only.  Devices are made with
# `rblkctl attach`, whose daemons live in their own session: every case
# detaches everything on exit.
. "$(dirname "$0")/lib.sh"

CTL=$RBLK_BUILD/rblkctl
TGT=$RBLK_BUILD/rblk-target
VOLDIR=/tmp/ublk-suite
TCP_PORT=4420
RDMA_PORT=4421
mkdir -p "$VOLDIR"

ublk-up || echo "ublk-up failed: cases will fail"
# Transport for the cases: RDMA over Soft-RoCE when it comes up (unless
# RBLK_UBLK_TRANSPORT=tcp asks for TCP).
RXE_IP=
if [ "${RBLK_UBLK_TRANSPORT:-rdma}" = rdma ] && RXE_IP=$(rxe-up 2>/dev/null); then
	TRANSPORT=rdma ADDR=$RXE_IP PORT=$RDMA_PORT
else
	TRANSPORT=tcp ADDR=127.0.0.1 PORT=$TCP_PORT RXE_IP=
fi
echo "suite-ublk: cases use transport $TRANSPORT ($ADDR:$PORT)"
export CTL TGT VOLDIR TCP_PORT RDMA_PORT TRANSPORT ADDR PORT RXE_IP

# --- helpers used inside cases ----------------------------------------------

# start_tgt [SIZE [keep]]: a target serving $VOLDIR/vol0.img as vol0, a new
# file unless "keep" (then the previous contents are served again).
# TGT_EXTRA: more [target] lines.
start_tgt() {
	local size=${1:-256M} i
	[ "${2:-}" = keep ] || rm -f "$VOLDIR/vol0.img"
	{
		echo "[target]"
		echo "listen_tcp = 0.0.0.0:$TCP_PORT"
		[ -n "$RXE_IP" ] && echo "listen_rdma = $RXE_IP:$RDMA_PORT"
		echo "reactors = 2"
		echo "admin_socket = $CASE_TMP/target.sock"
		[ -n "${TGT_EXTRA:-}" ] && echo "$TGT_EXTRA"
		echo
		echo "[volume vol0]"
		echo "path = $VOLDIR/vol0.img"
		echo "size = $size"
		echo "allow_any_host = yes"
	} >"$CASE_TMP/target.conf"
	# A fresh log per start, so "ready" below is this start's.
	[ -f "$CASE_TMP/target.log" ] && cat "$CASE_TMP/target.log" >>"$CASE_TMP/target.log.old"
	"$TGT" --config "$CASE_TMP/target.conf" >"$CASE_TMP/target.log" 2>&1 &
	TPID=$!
	# "ready" is logged once every listener is up.
	for ((i = 0; i < 300; i++)); do
		grep -q ' ready$' "$CASE_TMP/target.log" && return 0
		kill -0 "$TPID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$CASE_TMP/target.log"
	fail "target did not start"
}

stop_tgt() {	# [SIGNAL]
	kill "-${1:-TERM}" "$TPID" 2>/dev/null
	wait "$TPID" 2>/dev/null
	TPID=
}

sched_file() {	# DEV: its I/O scheduler's sysfs file
	echo "/sys/block/${1#/dev/}/queue/scheduler"
}

# attach [rblkctl attach options]: sets DEV (/dev/ublkbN).
attach() {
	DEV=$(timeout 90 "$CTL" attach --target "$ADDR:$PORT" --volume vol0 \
		--transport "$TRANSPORT" "$@" 2>"$CASE_TMP/attach.err")
	local rc=$?
	[ $rc -eq 0 ] && [ -b "$DEV" ] ||
		{ cat "$CASE_TMP/attach.err"; show_logs; fail "attach over $TRANSPORT failed (rc $rc, '$DEV')"; }
	log "attached $DEV over $TRANSPORT"
}

detach() {	# DEV
	timeout 60 "$CTL" detach "$1" || fail "detach $1 failed"
	[ ! -e "$1" ] || fail "$1 still there after detach"
}

show_logs() {
	tail -n 20 /run/rblk/rblk-initiator.*.log 2>/dev/null
	tail -n 20 "$CASE_TMP/target.log" 2>/dev/null
}

# On case exit: detach everything; a sanitizer report from any server (a
# SANITIZE=1 build in RBLK_BUILD) fails the case.
case_cleanup() {
	local rc=$?
	umount -q /mnt/ublk 2>/dev/null
	"$CTL" detach --all --timeout 10 >/dev/null 2>&1
	if grep -l -E 'Sanitizer|runtime error' /run/rblk/rblk-initiator.*.log 2>/dev/null; then
		grep -h -A8 -E 'Sanitizer|runtime error' /run/rblk/rblk-initiator.*.log | head -n 20
		echo "FAIL: sanitizer report in an rblk-initiator log"
		exit 1
	fi
	exit "$rc"
}

# Every case: nothing attached before, nothing left after.
case_setup() {
	"$CTL" detach --all --timeout 10 >/dev/null 2>&1
	rm -f /run/rblk/rblk-initiator.*.log
	# a program that wrote to a vanished /dev/ublkbN made a regular file
	find /dev -maxdepth 1 -name 'ublkb*' -type f -delete
	trap 'exit 143' TERM
	trap 'case_cleanup' EXIT
	mkdir -p /mnt/ublk
}

# A tree of files with random contents; prints nothing.
make_tree() {	# DIR
	local d=$1 i
	mkdir -p "$d/a/b/c" "$d/x"
	for i in $(seq 1 40); do
		head -c $((RANDOM * 7 + i)) /dev/urandom >"$d/a/f$i"
	done
	for i in $(seq 1 10); do
		head -c $((i * 200000)) /dev/urandom >"$d/a/b/c/big$i"
	done
	dd if=/dev/urandom of="$d/x/one-mb" bs=1M count=1 status=none
	ln -s ../a/f1 "$d/x/link"
}

# --- cases ----------------------------------------------------------------------

case_attach_rdma() {
	case_setup
	[ "$TRANSPORT" = rdma ] || skip "Soft-RoCE did not come up (or RBLK_UBLK_TRANSPORT=tcp): cases ran over TCP"
	need_build rblk-target
	start_tgt
	attach --queues 2 --depth 32
	"$CTL" list | tee list.out
	grep -E "^$DEV .* rdma +live" list.out || fail "list does not show $DEV over rdma, live"
	dd if=/dev/urandom of=data bs=64k count=16 status=none
	dd if=data of="$DEV" bs=64k oflag=direct status=none || fail "write over RDMA failed"
	cmp <(dd if="$DEV" bs=64k count=16 iflag=direct status=none) data ||
		fail "read back over RDMA differs"
	detach "$DEV"
}

case_cli_errors() {
	local out rc
	case_setup
	start_tgt
	out=$(timeout 60 "$CTL" attach --target "$ADDR:$PORT" --volume nosuchvol --transport "$TRANSPORT" 2>&1)
	rc=$?
	echo "no such volume -> rc $rc: $out"
	[ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] || fail "attach of a missing volume: rc $rc, '$out'"
	echo "$out" | grep -qi "no such volume" || fail "message does not say 'no such volume'"
	out=$(timeout 60 "$CTL" attach --target 127.0.0.1:1 --volume vol0 --transport tcp 2>&1)
	rc=$?
	echo "unreachable -> rc $rc: $out"
	[ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] || fail "attach to an unreachable target: rc $rc, '$out'"
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$CTL" attach \
		--target "$ADDR:$PORT" --volume vol0 2>&1)
	rc=$?
	echo "not root -> rc $rc: $out"
	[ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] || fail "attach as non-root: rc $rc, '$out'"
	out=$("$CTL" detach /dev/ublkb77 2>&1)
	rc=$?
	echo "detach unknown -> rc $rc: $out"
	[ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] || fail "detach of an unknown device: rc $rc"
	"$CTL" attach --target x 2>/dev/null && fail "attach without --volume succeeded"
	out=$("$CTL" recover /dev/ublkb77 2>&1)
	rc=$?
	echo "recover unknown -> rc $rc: $out"
	[ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] || fail "recover of an unknown device: rc $rc"
	for c in attach detach list recover; do
		"$CTL" "$c" --help | grep -q "usage: rblkctl $c" || fail "rblkctl $c --help"
	done
	[ -z "$(ls /dev/ublkb* 2>/dev/null)" ] || fail "a failed attach left a device: $(ls /dev/ublkb*)"
	[ -z "$(ls /run/rblk/ublkb*.json 2>/dev/null)" ] || fail "a failed attach left state"
}

# "0-2,5" or sysfs's "0, 1, 2, 5" as "0 1 2 5".
cpus_expand() {
	local part out=()
	for part in $(echo "$1" | tr -d ' ' | tr ',' ' '); do
		if [[ $part == *-* ]]; then out+=($(seq "${part%-*}" "${part#*-}"))
		else out+=("$part"); fi
	done
	echo "${out[*]}"
}
# queue_cpus DEV pinned|free: every queue thread (rblk-qN) of DEV's server
# runs on the CPUs blk-mq sends queue N's requests from (pinned; a queue
# fed by every CPU the server may use is left free), or on every CPU the
# server may use (free).  NARROWED: how many threads were narrowed.
queue_cpus() {
	local dev=$1 mode=$2 pid t q all want got n=0
	NARROWED=0
	pid=$(state_pid "$dev") || fail "no state file for $dev"
	all=$(cpus_expand "$(awk '/^Cpus_allowed_list/ {print $2}' "/proc/$pid/status")")
	for t in /proc/"$pid"/task/*; do
		[[ $(cat "$t/comm") == rblk-q* ]] || continue
		q=$(cat "$t/comm"); q=${q#rblk-q}
		n=$((n + 1))
		got=$(cpus_expand "$(awk '/^Cpus_allowed_list/ {print $2}' "$t/status")")
		want=$all
		if [ "$mode" = pinned ]; then
			want=$(cpus_expand "$(cat "/sys/block/${dev#/dev/}/mq/$q/cpu_list")")
			[ -n "$want" ] || want=$all
		fi
		[ "$got" = "$want" ] ||
			{ show_logs; fail "$dev queue $q ($mode): thread on CPUs '$got', not '$want'"; }
		[ "$got" = "$all" ] || NARROWED=$((NARROWED + 1))
	done
	[ "$n" -eq "$(ls -d /sys/block/"${dev#/dev/}"/mq/* | wc -l)" ] ||
		fail "$dev: $n queue threads named rblk-qN, not one per queue"
}

case_attach_list_detach() {
	local dev2 feat want
	case_setup
	start_tgt
	attach --queues 2 --depth 16 --pin-queues on
	# One queue per CPU: each queue's thread stays on its CPU.
	queue_cpus "$DEV" pinned
	if [ "$(nproc)" -ge 2 ]; then
		[ "$NARROWED" -eq 2 ] || fail "$DEV: $NARROWED of 2 queue threads kept on their CPUs on $(nproc) CPUs"
	else
		log "one CPU: no queue thread to keep on its own"
	fi
	attach --queues 1 --pin-queues on
	dev2=$DEV
	# One queue fed by every CPU: its thread is left to the scheduler.
	queue_cpus "$dev2" pinned
	[ "$NARROWED" -eq 0 ] || fail "$dev2: its one queue's thread was narrowed"
	# One hardware queue: the kernel would give it mq-deadline, the
	# initiator sets none (initiator/disk_sched.c).
	grep -q '\[none\]' "$(sched_file "$dev2")" ||
		fail "$dev2's I/O scheduler: $(cat "$(sched_file "$dev2")"), not none"
	# Batch I/O (bit 15) where the kernel has it, per-tag commands where
	# not; --batch-io off asks for per-tag ones on any kernel.
	ublk_features
	if (( feat & (1 << 15) )); then want=batch; else want=per-tag; fi
	[ "$(cat /run/rblk/rblk-initiator.*.log | grep -c ", $want commands")" -eq 2 ] ||
		{ show_logs; fail "ublk features $feat: the devices do not use $want commands"; }
	attach --queues 1 --batch-io off
	grep -q ", per-tag commands" "$(grep -l "ublk device ${DEV#/dev/ublkb}:" /run/rblk/rblk-initiator.*.log)" ||
		{ show_logs; fail "--batch-io off: $DEV does not use per-tag commands"; }
	detach "$DEV"
	# By default the scheduler places every queue thread.
	attach --queues 2
	queue_cpus "$DEV" free
	detach "$DEV"
	"$CTL" list
	[ "$("$CTL" list | grep -c ' live ')" -eq 2 ] || fail "list does not show two live devices"
	"$CTL" list --json >list.json
	python3 -c 'import json,sys; l=json.load(open("list.json"))["devices"]; assert len(l)==2, l
for d in l: assert d["volume"]=="vol0" and d["transport"]==sys.argv[1] and d["state"]=="live", d' \
		"$TRANSPORT" || fail "list --json is wrong: $(cat list.json)"
	detach "$dev2"
	[ "$("$CTL" list | grep -c ublkb)" -eq 1 ] || fail "one device expected after detaching one"
	timeout 60 "$CTL" detach --all || fail "detach --all failed"
	[ -z "$(ls /dev/ublkb* 2>/dev/null)" ] || fail "devices left after detach --all"
	[ "$("$CTL" list | grep -c ublkb)" -eq 0 ] || fail "list not empty after detach --all"
}

# mkfs, files, detach, re-attach, verify.
fs_case() {	# mkfs command...
	case_setup
	start_tgt 512M
	attach --queues 2
	"$@" "$DEV" >mkfs.log 2>&1 || { cat mkfs.log; fail "$* failed"; }
	mount "$DEV" /mnt/ublk || fail "mount failed"
	make_tree src
	cp -a src /mnt/ublk/tree || fail "copy to the file system failed"
	(cd src && find . -type f -exec sha256sum {} + | sort -k2) >sums
	umount /mnt/ublk || fail "umount failed"
	detach "$DEV"
	attach --queues 1
	mount "$DEV" /mnt/ublk || fail "mount after re-attach failed"
	(cd /mnt/ublk/tree && sha256sum -c --quiet "$CASE_TMP/sums") || fail "checksums differ after re-attach"
	[ "$(readlink /mnt/ublk/tree/x/link)" = ../a/f1 ] || fail "symlink lost"
	log "$(wc -l <sums) files verified after detach + re-attach"
	umount /mnt/ublk || fail "umount failed"
	detach "$DEV"
}
case_fs_ext4() { fs_case mkfs.ext4 -q -F; }
case_fs_xfs() { need_cmd mkfs.xfs; fs_case mkfs.xfs -q -f; }

fio_verify() {	# DEV name fio-args...
	local dev=$1 name=$2
	shift 2
	timeout 240 fio --name="$name" --filename="$dev" --direct=1 --verify=crc32c \
		--verify_fatal=1 --verify_state_save=0 --do_verify=1 "$@" \
		--output="$name.out" || { cat "$name.out"; fail "fio $name failed"; }
	grep -q "err= 0" "$name.out" || { cat "$name.out"; fail "fio $name reported errors"; }
	log "fio $name: $(grep -E '^ +(READ|WRITE):' "$name.out" | tr -s ' ' | cut -c1-60 | tr '\n' ' ')"
}

case_fio_verify() {
	case_setup
	need_cmd fio
	start_tgt 256M
	attach --queues 2 --depth 64
	fio_verify "$DEV" uring-4k-qd1 --ioengine=io_uring --rw=randwrite --bs=4k --iodepth=1 --size=4M
	fio_verify "$DEV" uring-4k-qd128 --ioengine=io_uring --rw=randwrite --bs=4k --iodepth=128 --size=32M
	fio_verify "$DEV" libaio-64k-qd16 --ioengine=libaio --rw=randwrite --bs=64k --iodepth=16 --size=32M --offset=64M
	fio_verify "$DEV" libaio-1m-qd4 --ioengine=libaio --rw=write --bs=1M --iodepth=4 --size=48M --offset=128M
	fio_verify "$DEV" uring-mixed-2jobs --ioengine=io_uring --rw=randwrite --bsrange=4k-1M \
		--iodepth=32 --size=32M --numjobs=2 --offset_increment=64M
	detach "$DEV"
}

# The other transport gets one fio verify too, so both are covered.
case_fio_verify_tcp() {
	case_setup
	need_cmd fio
	[ "$TRANSPORT" = rdma ] || skip "TCP already is the main transport of this run"
	start_tgt 256M
	DEV=$(timeout 60 "$CTL" attach --target 127.0.0.1:$TCP_PORT --volume vol0 --transport tcp --queues 2) ||
		fail "attach over tcp failed"
	fio_verify "$DEV" tcp-uring-mixed --ioengine=io_uring --rw=randwrite --bsrange=4k-1M --iodepth=32 --size=32M
	detach "$DEV"
}

# --- polling modes ----------------------------------------------------

# poll_case MODE: target rdma_poll = MODE, attach --poll MODE; fio verify at
# QD1 and QD32 with idle gaps between (adaptive falls asleep and must wake
# up; busy must keep its keep-alive going with no wakeup at all), the
# options in the state file, and a recovered server that keeps them.
poll_case() {
	local mode=$1 pid out rc
	case_setup
	need_cmd fio jq
	[ "$TRANSPORT" = rdma ] || skip "Soft-RoCE did not come up: the poll modes are for the RDMA CQ"
	TGT_EXTRA="rdma_poll = $mode
rdma_poll_us = 100" start_tgt 256M
	attach --queues 2 --depth 32 --poll "$mode" --poll-us 100 --keep-alive-tmo 2 \
		--recovery manual
	jq -e --arg m "$mode" '.poll == $m and .poll_us == 100' "/run/rblk/$(basename "$DEV").json" \
		>/dev/null || fail "state file: poll $(jq -c '[.poll, .poll_us]' "/run/rblk/$(basename "$DEV").json")"
	fio_verify "$DEV" "$mode-4k-qd1" --ioengine=io_uring --rw=randwrite --bs=4k --iodepth=1 --size=4M
	# Idle past two keep-alive periods: the connection must still be live.
	nap 5
	"$CTL" list | tee list.out
	grep -qE "^$DEV .* live" list.out || { show_logs; fail "$DEV not live after an idle gap"; }
	fio_verify "$DEV" "$mode-4k-qd32" --ioengine=io_uring --rw=randrw --bs=4k --iodepth=32 \
		--size=16M --offset=32M
	nap 1
	fio_verify "$DEV" "$mode-mixed" --ioengine=libaio --rw=randwrite --bsrange=4k-256k \
		--iodepth=16 --size=16M --offset=64M --numjobs=2 --offset_increment=32M
	# A recovered server gets the same options back from the state file.
	pid=$(state_pid "$DEV") || fail "no pid in the state file"
	kill -9 "$pid"
	out=$(timeout 90 "$CTL" recover "$DEV" 2>&1); rc=$?
	[ $rc -eq 0 ] && [ "$out" = "$DEV" ] || { show_logs; fail "rblkctl recover failed: rc $rc: $out"; }
	pid=$(state_pid "$DEV") || fail "no pid in the state file after recover"
	tr '\0' ' ' <"/proc/$pid/cmdline" | tee cmdline
	grep -q -- "--poll $mode --poll-us 100" cmdline || fail "recovered server lost --poll $mode --poll-us 100"
	fio_verify "$DEV" "$mode-after-recover" --ioengine=io_uring --rw=randwrite --bs=4k \
		--iodepth=8 --size=4M --offset=128M
	grep -E 'poll|error' "$CASE_TMP/target.log" | grep -iv 'level' | tail -n 3
	kill -0 "$TPID" || fail "the target died"
	detach "$DEV"
}
case_poll_adaptive() { poll_case adaptive; }
case_poll_busy() { poll_case busy; }

case_discard() {
	local q before after
	case_setup
	start_tgt 128M
	attach
	q=/sys/block/${DEV#/dev/}/queue
	log "discard_max_bytes $(cat $q/discard_max_bytes) write_zeroes_max_bytes $(cat $q/write_zeroes_max_bytes) write_cache '$(cat $q/write_cache)' fua $(cat $q/fua)"
	[ "$(cat $q/write_cache)" = "write back" ] || fail "volatile cache not advertised: fsync would not flush"
	[ "$(cat $q/discard_max_bytes)" -gt 0 ] || skip "target does not offer DISCARD for this volume"
	# the target's [V34] limit (1 GiB), not max_io: the block layer splits by it
	[ "$(cat $q/discard_max_hw_bytes)" -eq $((1 << 30)) ] ||
		fail "discard_max_hw_bytes $(cat $q/discard_max_hw_bytes), want the target's 1 GiB"
	dd if=/dev/urandom of="$DEV" bs=1M count=32 oflag=direct status=none || fail "fill failed"
	before=$(du -k "$VOLDIR/vol0.img" | cut -f1)
	blkdiscard -o 0 -l $((16 << 20)) "$DEV" || fail "blkdiscard failed"
	after=$(du -k "$VOLDIR/vol0.img" | cut -f1)
	log "backing file used ${before}K before discard, ${after}K after"
	[ "$after" -lt "$before" ] || fail "discard did not free space on the target"
	# whole-device discard arrives in max-sized pieces
	blkdiscard "$DEV" || fail "whole-device blkdiscard failed"
	detach "$DEV"
}

# blkdiscard -z: WRITE_ZEROES when the target offers it, else the kernel's
# fallback of writing zero pages; either way the range reads back as zeroes.
case_write_zeroes() {
	local q
	case_setup
	start_tgt 128M
	attach
	q=/sys/block/${DEV#/dev/}/queue
	if [ "$(cat $q/write_zeroes_max_bytes)" -gt 0 ]; then
		log "target offers WRITE_ZEROES"
		# the target's [V34] limit (128 MiB), not max_io
		[ "$(cat $q/write_zeroes_max_bytes)" -eq $((128 << 20)) ] ||
			fail "write_zeroes_max_bytes $(cat $q/write_zeroes_max_bytes), want the target's 128 MiB"
	else
		log "no WRITE_ZEROES from the target: the kernel writes zero pages"
	fi
	dd if=/dev/urandom of="$DEV" bs=1M count=32 oflag=direct status=none || fail "fill failed"
	blkdiscard -z -o $((8 << 20)) -l $((8 << 20)) "$DEV" || fail "blkdiscard -z failed"
	cmp -n $((8 << 20)) <(dd if="$DEV" bs=1M skip=8 count=8 iflag=direct status=none) /dev/zero ||
		fail "zeroed range does not read back as zeroes"
	for skip in 0 16; do	# neighbours keep their data
		[ "$(dd if="$DEV" bs=1M skip=$skip count=8 iflag=direct status=none | tr -d '\0' | head -c 1 | wc -c)" -eq 1 ] ||
			fail "data next to the zeroed range was lost (at ${skip} MiB)"
	done
	detach "$DEV"
}

# fsync'ed data survives kill -9 of the target and a re-attach.  The
# device does not reconnect (--ctrl-loss-tmo 0), so umount and detach
# find its I/O failed instead of held for the new target.
case_durability() {
	case_setup
	start_tgt 256M
	attach --queues 2 --ctrl-loss-tmo 0
	mkfs.ext4 -q -F "$DEV" || fail "mkfs failed"
	mount "$DEV" /mnt/ublk || fail "mount failed"
	make_tree /mnt/ublk/tree
	dd if=/dev/urandom of=/mnt/ublk/synced bs=1M count=8 conv=fsync status=none || fail "write+fsync failed"
	sync -f /mnt/ublk/synced || fail "syncfs failed"
	(cd /mnt/ublk && find . -type f -exec sha256sum {} + | sort -k2) >sums
	stop_tgt KILL
	log "target killed with SIGKILL"
	timeout 60 umount /mnt/ublk 2>&1 | tail -n 2
	timeout 60 "$CTL" detach "$DEV" || fail "detach after the target died failed"
	[ ! -e "$DEV" ] || fail "$DEV still present"
	start_tgt 256M keep
	attach
	mount "$DEV" /mnt/ublk || fail "mount after target restart failed"
	(cd /mnt/ublk && sha256sum -c --quiet "$CASE_TMP/sums") || fail "data lost across the target kill"
	log "$(wc -l <sums) files intact after kill -9 of the target"
	umount /mnt/ublk
	detach "$DEV"
}

# The durability chain end to end: what the kernel sends for `sync` and
# for O_DSYNC writes on xfs reaches the target as FLUSH and FUA commands,
# and the target turns them into fdatasync / RWF_DSYNC (its counters in
# `rblkctl stats --json` rise).  The kill -9 case above cannot see this:
# the target's page cache survives a killed process.
tgt_dur() {	# prints "flush fua fdatasync dsync_writes" of vol0
	"$CTL" --socket "$CASE_TMP/target.sock" stats vol0 --json |
		python3 -c 'import json,sys; d=json.load(sys.stdin)["volumes"][0]["stats"]["durability"]
print(d["flush"], d["fua"], d["fdatasync"], d["dsync_writes"])'
}
case_durability_counters() {
	local q b a d
	case_setup
	need_cmd mkfs.xfs python3
	start_tgt 512M
	attach --queues 2
	q=/sys/block/${DEV#/dev/}/queue
	[ "$(cat $q/write_cache)" = "write back" ] || fail "volatile cache not advertised: no FLUSH would be sent"
	[ "$(cat $q/fua)" = 1 ] || fail "FUA not advertised although the target offers it"
	mkfs.xfs -q -f "$DEV" >mkfs.log 2>&1 || { cat mkfs.log; fail "mkfs.xfs failed"; }
	mount "$DEV" /mnt/ublk || fail "mount failed"

	d=$(tgt_dur) || fail "rblkctl stats failed"
	read -r -a b <<<"$d"
	head -c 4M /dev/urandom >/mnt/ublk/f || fail "write failed"
	sync || fail "sync failed"
	d=$(tgt_dur) || fail "rblkctl stats failed"
	read -r -a a <<<"$d"
	log "sync: flush ${b[0]} -> ${a[0]}, fdatasync ${b[2]} -> ${a[2]}"
	[ "${a[0]}" -gt "${b[0]}" ] || fail "sync on xfs sent no FLUSH to the target"
	[ $((a[2] - b[2])) -ge $((a[0] - b[0])) ] ||
		fail "target made fewer fdatasync calls ($((a[2] - b[2]))) than it got FLUSHes ($((a[0] - b[0])))"

	b=("${a[@]}")
	dd if=/dev/urandom of=/mnt/ublk/dsync bs=4k count=16 oflag=dsync status=none || fail "O_DSYNC write failed"
	d=$(tgt_dur) || fail "rblkctl stats failed"
	read -r -a a <<<"$d"
	log "O_DSYNC: fua ${b[1]} -> ${a[1]}, dsync_writes ${b[3]} -> ${a[3]}"
	[ "${a[1]}" -gt "${b[1]}" ] || fail "O_DSYNC writes on xfs sent no FUA write to the target"
	[ $((a[3] - b[3])) -ge 1 ] || fail "FUA writes reached the target but no RWF_DSYNC write was made"
	umount /mnt/ublk || fail "umount failed"
	detach "$DEV"
}

# fio_gone PID: fio notices its device went away and exits within 30 s.
fio_gone() {
	local i
	for ((i = 0; i < 60; i++)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.5
	done
	if kill -0 "$1" 2>/dev/null; then
		ps -o pid,stat,wchan:30,cmd -p "$1"
		for t in /proc/"$1"/task/*; do echo "task $t: $(cat "$t/wchan" 2>/dev/null) $(cut -d' ' -f3 "$t/stat")"; done
		tail -n 5 fio.out
		kill -9 "$1"
		fail "fio still running 30 s after its device went away"
	fi
	wait "$1"
	log "fio exited $? after its device went away: $(grep -m1 -E 'error|err=' fio.out | cut -c1-100)"
}

# detach while fio hammers the device: returns in bounded time.
case_detach_inflight() {
	local fpid t0 t1
	case_setup
	need_cmd fio
	start_tgt 256M
	attach --queues 2 --depth 32
	fio --name=load --filename="$DEV" --direct=1 --ioengine=io_uring --rw=randrw \
		--bs=64k --iodepth=32 --time_based --runtime=120 --size=128M \
		--allow_file_create=0 >fio.out 2>&1 &
	fpid=$!
	sleep 3
	t0=$(date +%s)
	timeout 60 "$CTL" detach "$DEV" || fail "detach under load failed or hung"
	t1=$(date +%s)
	log "detach under load took $((t1 - t0)) s"
	ls -l /dev/ublk* ; ps -o pid,stat,wchan:30,cmd -p "$fpid"
	[ ! -e "$DEV" ] || fail "$DEV still present"
	fio_gone "$fpid"
}

# The same with a target that stopped answering (SIGSTOP): the grace
# period ends, in-flight I/O fails with EIO, the device goes.
case_detach_stalled_target() {
	local fpid t0 t1
	case_setup
	need_cmd fio
	start_tgt 256M
	attach --queues 2 --depth 32
	fio --name=load --filename="$DEV" --direct=1 --ioengine=libaio --rw=randwrite \
		--bs=16k --iodepth=32 --time_based --runtime=120 --size=64M \
		--allow_file_create=0 >fio.out 2>&1 &
	fpid=$!
	sleep 2
	kill -STOP "$TPID"
	sleep 1
	t0=$(date +%s)
	timeout 60 "$CTL" detach "$DEV" || { kill -CONT "$TPID"; fail "detach with a stalled target failed or hung"; }
	t1=$(date +%s)
	kill -CONT "$TPID"
	log "detach with a stalled target took $((t1 - t0)) s"
	[ ! -e "$DEV" ] || fail "$DEV still present"
	[ $((t1 - t0)) -le 30 ] || fail "detach took $((t1 - t0)) s"
	fio_gone "$fpid"
}

# A device attached with --no-recovery goes away when its
# rblk-initiator is killed (as before recovery existed), list says dead,
# detach cleans up, and nothing is left: no ublk nodes or sysfs entries, no
# state file, no rblk process, the target back to its fd count.
case_initiator_killed() {
	local pid tfd0 tfd1
	case_setup
	start_tgt
	tfd0=$(tgt_fds)
	attach --no-recovery
	jq -e '.recovery == "off"' "/run/rblk/$(basename "$DEV").json" >/dev/null ||
		fail "state file does not say recovery off"
	pgrep -x rblk-supervise && fail "a supervisor runs for a --no-recovery device"
	pid=$(state_pid "$DEV") || fail "no pid in the state file"
	kill -9 "$pid"
	wait_until 20 test ! -e "$DEV" || fail "$DEV stayed after its server was killed"
	"$CTL" list | tee list.out
	grep -q " dead " list.out || fail "list does not say dead"
	timeout 30 "$CTL" detach "$DEV" || fail "detach of a dead device failed"
	[ "$("$CTL" list | grep -c ublkb)" -eq 0 ] || fail "state left after detach"
	no_leftovers
	wait_until 30 eval '[ "$(tgt_fds)" -eq "$tfd0" ]' ||
		fail "target holds $(tgt_fds) fds, $tfd0 before the attach"
	log "device gone after kill -9, nothing left after detach; target fds $tfd0 before, $(tgt_fds) after"
}

# --- recovery ------------------------------------------------------

state_pid() {	# DEV: the serving pid recorded in the state file
	jq -er .pid "/run/rblk/$(basename "$1").json"
}
tgt_fds() {	# open fds of the target
	local f n=0
	for f in /proc/"$TPID"/fd/*; do n=$((n + 1)); done
	echo "$n"
}
# Nothing of any device left: ublk nodes, sysfs, state, processes.
no_leftovers() {
	local left
	left=$(ls -d /dev/ublkb* /dev/ublkc* /sys/block/ublkb* /run/rblk/ublkb*.json 2>/dev/null)
	[ -z "$left" ] || fail "left behind: $left"
	pgrep -x rblk-initiator && fail "an rblk-initiator still runs"
	pgrep -x rblk-supervise && fail "an rblk-supervise still runs"
	return 0
}
served_by_other() {	# STATEFILE OLDPID: a live server that is not OLDPID
	local p st
	read -r p st < <(jq -r '"\(.pid) \(.state)"' "$1" 2>/dev/null) || return 1
	[ "$p" != "$2" ] && [ "$st" = live ] && kill -0 "$p" 2>/dev/null
}
wait_served() {	# DEV OLDPID SECS
	wait_until "$3" served_by_other "/run/rblk/$(basename "$1").json" "$2"
}
kernel_io_errors() {	# fails the case when the kernel logged I/O trouble
	if dmesg | grep -iE 'I/O error|critical medium|XFS .*(error|shutdown|corrupt)|blk_update_request'; then
		fail "I/O errors in the kernel log (above)"
	fi
}
# xfs + fio verify on it in the background: sets FPID.
xfs_fio_start() {
	mkfs.xfs -q -f "$DEV" >mkfs.log 2>&1 || { cat mkfs.log; fail "mkfs.xfs failed"; }
	mount "$DEV" /mnt/ublk || fail "mount failed"
	dmesg -C
	# Writes at most 8 MiB/s (6 s at least), so the kill 3 s in lands
	# mid-run however fast the machine; the verify pass is not limited.
	timeout 400 fio --name=fsverify --directory=/mnt/ublk --size=48M --bsrange=4k-64k \
		--rw=randwrite --rate=,8m --ioengine=libaio --direct=1 --iodepth=16 --verify=crc32c \
		--verify_fatal=1 --verify_state_save=0 --output-format=json --output=fio.json \
		>fio.err 2>&1 &
	FPID=$!
	nap 3
	kill -0 "$FPID" 2>/dev/null || { cat fio.err; fail "fio ended before the kill"; }
}
# fio returns 0 with its verify passed, no kernel I/O error, xfs_repair -n clean.
xfs_fio_check() {
	local rc
	wait "$FPID"
	rc=$?
	[ $rc -eq 0 ] || { cat fio.err; jq . fio.json 2>/dev/null | grep -E '"error"|err'; fail "fio returned $rc"; }
	[ "$(jq '.jobs[0].error' fio.json)" = 0 ] || fail "fio job error $(jq '.jobs[0].error' fio.json)"
	kernel_io_errors
	umount /mnt/ublk || fail "umount failed"
	xfs_repair -n "$DEV" >repair.log 2>&1 || { cat repair.log; fail "xfs_repair -n found problems"; }
	log "fio verify passed (rc 0), no kernel I/O error, xfs_repair -n clean; clat max $(jq '[.jobs[0].read.clat_ns.max, .jobs[0].write.clat_ns.max] | max / 1e6 | floor' fio.json) ms"
}

# Kill -9 of rblk-initiator during fio verify on a
# mounted xfs; the supervisor of `rblkctl attach` (recovery auto, the
# default) starts a new server, which takes the quiesced device over.
case_recovery_auto() {
	local pid t0 t1 id
	case_setup
	need_cmd fio mkfs.xfs xfs_repair jq
	start_tgt 512M
	attach --queues 2 --depth 32
	id=${DEV#/dev/ublkb}
	jq -e '.recovery == "auto" and .supervisor > 0' "/run/rblk/ublkb$id.json" >/dev/null ||
		fail "state file: recovery $(jq -r .recovery /run/rblk/ublkb$id.json), supervisor $(jq -r .supervisor /run/rblk/ublkb$id.json)"
	# The admin's choice of scheduler outlives a new server.
	echo mq-deadline >"$(sched_file "$DEV")" || fail "cannot set $DEV's scheduler"
	xfs_fio_start
	pid=$(state_pid "$DEV") || fail "no pid in the state file"
	t0=$(_usecs)
	kill -9 "$pid"
	wait_served "$DEV" "$pid" 60 || { show_logs; fail "no new server took $DEV over within 60 s"; }
	t1=$(_usecs)
	log "kill -9 of $pid: new server $(state_pid "$DEV") live after $(((t1 - t0) / 1000)) ms"
	[ -b "$DEV" ] || fail "$DEV is gone"
	grep -q '\[mq-deadline\]' "$(sched_file "$DEV")" ||
		fail "the new server changed $DEV's scheduler to $(cat "$(sched_file "$DEV")")"
	xfs_fio_check
	"$CTL" list --json >list.json
	jq -e '.devices[0].recoveries == 1 and .devices[0].state == "live"' list.json >/dev/null ||
		fail "list --json: $(cat list.json)"
	grep -h "supervise\|recover" /run/rblk/rblk-initiator.*.log | tail -n 4
	detach "$DEV"
	no_leftovers
}

# The same with --recovery manual and `rblkctl recover`
# typed 10 s after the kill; meanwhile the device stays, quiesced, and fio
# waits.  Bad input first: recover of a live and of an unknown device.
case_recovery_manual() {
	local pid out rc
	case_setup
	need_cmd fio mkfs.xfs xfs_repair jq
	start_tgt 512M
	attach --queues 2 --depth 32 --recovery manual --reconnect-delay 1
	pgrep -x rblk-supervise && fail "a supervisor runs for a --recovery manual device"
	pid=$(state_pid "$DEV") || fail "no pid in the state file"
	out=$("$CTL" recover "$DEV" 2>&1); rc=$?
	echo "recover of a live device -> rc $rc: $out"
	[ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] || fail "recover of a live device: rc $rc"
	[ "$(state_pid "$DEV")" = "$pid" ] || fail "recover of a live device changed its server"
	out=$("$CTL" recover /dev/ublkb77 2>&1); rc=$?
	echo "recover of an unknown device -> rc $rc: $out"
	[ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] || fail "recover of an unknown device: rc $rc"
	xfs_fio_start
	kill -9 "$pid"
	nap 10
	[ -b "$DEV" ] || fail "$DEV went away after its server was killed"
	kill -0 "$FPID" 2>/dev/null || { cat fio.err; fail "fio ended while the device had no server"; }
	"$CTL" list | tee list.out
	grep -qE "^$DEV .* quiesced " list.out || fail "list does not say quiesced"
	kernel_io_errors
	out=$(timeout 90 "$CTL" recover "$DEV" 2>&1); rc=$?
	echo "recover after 10 s -> rc $rc: $out"
	[ $rc -eq 0 ] && [ "$out" = "$DEV" ] || { show_logs; fail "rblkctl recover failed: rc $rc"; }
	[ "$(state_pid "$DEV")" != "$pid" ] || fail "state still names the dead server"
	out=$("$CTL" recover "$DEV" 2>&1); rc=$?
	[ $rc -ne 0 ] || fail "a second recover of a live device succeeded"
	xfs_fio_check
	detach "$DEV"
	no_leftovers
}

# Kill the server 20 times in a row under I/O.  Each
# time a new one takes over; no leak on either side: one /dev/ublkcN, one
# /sys/block/ublkbN, the same number, one server, one supervisor (its fd
# count unchanged), the target back to its fd count; fio saw no error.
case_recovery_kill_20() {
	local i pid id tfd0 tfd1 sfd0 sfd1 sup fpid t0 tmax=0 ttot=0 dt
	case_setup
	need_cmd fio jq
	start_tgt 256M
	attach --queues 2 --depth 32
	id=${DEV#/dev/ublkb}
	sup=$(jq -r .supervisor "/run/rblk/ublkb$id.json")
	nap 1
	tfd0=$(tgt_fds)
	sfd0=$(ls /proc/"$sup"/fd | wc -l)
	dmesg -C
	fio --name=load --filename="$DEV" --direct=1 --ioengine=libaio --rw=randrw \
		--bs=16k --iodepth=16 --time_based --runtime=900 --size=128M \
		--allow_file_create=0 >fio.out 2>&1 &
	fpid=$!
	nap 2
	for ((i = 1; i <= 20; i++)); do
		pid=$(state_pid "$DEV") || fail "kill $i: no pid in the state file"
		t0=$(_usecs)
		kill -9 "$pid"
		wait_served "$DEV" "$pid" 60 || { show_logs; fail "kill $i: no new server within 60 s"; }
		dt=$((($(_usecs) - t0) / 1000))
		ttot=$((ttot + dt)); [ $dt -gt $tmax ] && tmax=$dt
		kill -0 "$fpid" 2>/dev/null || { cat fio.out; fail "kill $i: fio ended"; }
		nap 1
	done
	log "20 kills: new server live after $((ttot / 20)) ms on average, $tmax ms at most"
	kill -INT "$fpid"
	wait "$fpid"
	grep -q "err= 0" fio.out || { cat fio.out; fail "fio saw errors"; }
	log "fio: $(grep -E '^ +(read|write):' fio.out | tr -s ' ' | cut -c1-50 | tr '\n' ' ')"
	kernel_io_errors
	[ -b "/dev/ublkb$id" ] || fail "the device lost its number"
	[ "$(ls -d /dev/ublkc* | wc -l)" -eq 1 ] || fail "ublk char devices: $(ls /dev/ublkc*)"
	[ "$(ls -d /sys/block/ublkb* | wc -l)" -eq 1 ] || fail "ublk block devices: $(ls -d /sys/block/ublkb*)"
	[ "$(pgrep -c -x rblk-initiator)" -eq 1 ] || fail "$(pgrep -c -x rblk-initiator) rblk-initiator processes"
	[ "$(pgrep -x rblk-supervise)" = "$sup" ] || fail "supervisor changed: $(pgrep -x rblk-supervise), was $sup"
	sfd1=$(ls /proc/"$sup"/fd | wc -l)
	[ "$sfd1" -eq "$sfd0" ] || fail "supervisor fds $sfd0 -> $sfd1"
	[ "$(ls /run/rblk/ublkb*.json /run/rblk/rblk-initiator.*.log | wc -l)" -eq 2 ] || fail "run dir: $(ls /run/rblk)"
	jq -e '.recoveries == 20' "/run/rblk/ublkb$id.json" >/dev/null ||
		fail "recoveries $(jq .recoveries /run/rblk/ublkb$id.json), want 20"
	wait_until 60 eval '[ "$(tgt_fds)" -le "$tfd0" ]' ||
		fail "target holds $(tgt_fds) fds, $tfd0 before the kills"
	tfd1=$(tgt_fds)
	log "after 20 kills: /dev/ublkb$id, 1 ublkc, 1 server, supervisor fds $sfd0 -> $sfd1, target fds $tfd0 -> $tfd1"
	detach "$DEV"
	no_leftovers
}

# The supervisor dies with its server (both kill -9, as an OOM kill of the
# session might): `rblkctl recover` brings back a server and a new
# supervisor, which then recovers the next crash on its own.
case_recovery_supervisor_killed() {
	local pid sup sup2 pid2
	case_setup
	need_cmd jq
	start_tgt
	attach --queues 1
	dd if=/dev/urandom of=data bs=64k count=16 status=none
	dd if=data of="$DEV" bs=64k oflag=direct status=none || fail "write failed"
	pid=$(state_pid "$DEV") || fail "no pid in the state file"
	sup=$(jq -r .supervisor "/run/rblk/$(basename "$DEV").json")
	kill -9 "$sup" "$pid"
	wait_until 20 eval "\"$CTL\" list | grep -q ' quiesced '" || { "$CTL" list; fail "list does not say quiesced"; }
	timeout 90 "$CTL" recover "$DEV" >recover.out 2>&1 || { cat recover.out; show_logs; fail "rblkctl recover failed"; }
	pid2=$(state_pid "$DEV")
	sup2=$(jq -r .supervisor "/run/rblk/$(basename "$DEV").json")
	[ "$sup2" != "$sup" ] && kill -0 "$sup2" 2>/dev/null || fail "no new supervisor (was $sup, now $sup2)"
	kill -9 "$pid2"
	wait_served "$DEV" "$pid2" 60 || { show_logs; fail "the new supervisor did not recover the next crash"; }
	cmp <(dd if="$DEV" bs=64k count=16 iflag=direct status=none) data || fail "data differs after two recoveries"
	log "supervisor $sup killed with server $pid; recover started supervisor $sup2, which recovered server $pid2's crash; data intact"
	detach "$DEV"
	no_leftovers
}

# The target is down when the server dies: recovery attempts fail (connect
# refused) and are retried with back-off; the device stays quiesced with
# its I/O waiting, and is taken over once the target is back.
case_recovery_target_down() {
	local pid fpid rc
	case_setup
	need_cmd jq
	start_tgt
	attach --queues 1
	dd if=/dev/urandom of=data bs=64k count=16 status=none
	pid=$(state_pid "$DEV") || fail "no pid in the state file"
	dmesg -C
	stop_tgt KILL
	kill -9 "$pid"
	dd if=data of="$DEV" bs=64k oflag=direct status=none &
	fpid=$!
	nap 8
	"$CTL" list | tee list.out
	grep -q " quiesced " list.out || fail "list does not say quiesced"
	grep -c "recovery attempt .* failed" /run/rblk/rblk-initiator.*.log | tail -n 1
	grep -q "recovery attempt 1 failed" /run/rblk/rblk-initiator.*.log || { show_logs; fail "no failed recovery attempt logged"; }
	kill -0 "$fpid" 2>/dev/null || fail "the write did not wait for a server"
	start_tgt 256M keep
	wait_served "$DEV" "$pid" 60 || { show_logs; fail "not recovered within 60 s of the target's return"; }
	wait "$fpid"; rc=$?
	[ $rc -eq 0 ] || fail "the waiting write failed: rc $rc"
	cmp <(dd if="$DEV" bs=64k count=16 iflag=direct status=none) data || fail "data differs"
	grep -h "recovery attempt\|recovered by" /run/rblk/rblk-initiator.*.log | cut -c1-160
	kernel_io_errors
	detach "$DEV"
	no_leftovers
}

# `rblkctl attach --foreground` (what rblk-attach@.service runs) is the
# supervisor itself: it prints the device, recovers a killed server, and
# SIGTERM (systemctl stop) detaches and ends it with status 0.
case_recovery_foreground() {
	local fg pid rc
	case_setup
	need_cmd jq
	start_tgt
	"$CTL" attach --foreground --target "$ADDR:$PORT" --volume vol0 --transport "$TRANSPORT" \
		--queues 1 >fg.out 2>fg.err &
	fg=$!
	wait_until 90 grep -q '^/dev/ublkb' fg.out || { cat fg.err; fail "attach --foreground printed no device"; }
	DEV=$(head -n 1 fg.out)
	wait_until 10 test -b "$DEV" || fail "$DEV missing"
	[ "$(jq -r .supervisor "/run/rblk/$(basename "$DEV").json")" = "$fg" ] ||
		fail "the state file does not name the foreground process as supervisor"
	dd if=/dev/urandom of=data bs=64k count=16 status=none
	dd if=data of="$DEV" bs=64k oflag=direct status=none || fail "write failed"
	pid=$(state_pid "$DEV") || fail "no pid in the state file"
	kill -9 "$pid"
	wait_served "$DEV" "$pid" 60 || { cat fg.err; fail "the foreground supervisor did not recover the crash"; }
	cmp <(dd if="$DEV" bs=64k count=16 iflag=direct status=none) data || fail "data differs after recovery"
	kill -TERM "$fg"
	wait "$fg"; rc=$?
	[ $rc -eq 0 ] || { cat fg.err; fail "attach --foreground exited $rc after SIGTERM"; }
	[ ! -e "$DEV" ] || fail "$DEV still there after SIGTERM"
	no_leftovers
	grep -h "supervise" fg.err | cut -c1-140
	log "foreground supervisor $fg: recovered server $pid's crash, SIGTERM detached, exit 0"
}

# detach of a quiesced device (--recovery manual, server killed, nobody
# recovered it): the device is removed, the I/O waiting on it fails
# instead of hanging, nothing is left.
case_recovery_detach_quiesced() {
	local pid wpid rc
	case_setup
	start_tgt
	attach --queues 1 --recovery manual
	pid=$(state_pid "$DEV") || fail "no pid in the state file"
	kill -9 "$pid"
	wait_until 20 eval "\"$CTL\" list | grep -q ' quiesced '" || { "$CTL" list; fail "list does not say quiesced"; }
	dd if=/dev/urandom of="$DEV" bs=64k count=16 oflag=direct status=none 2>dd.err &
	wpid=$!
	nap 2
	kill -0 "$wpid" 2>/dev/null || fail "the write did not wait on the quiesced device"
	timeout 60 "$CTL" detach "$DEV" || fail "detach of a quiesced device failed"
	wait_until 30 eval "! kill -0 $wpid 2>/dev/null" || fail "the waiting write still hangs after detach"
	wait "$wpid"; rc=$?
	[ $rc -ne 0 ] || fail "the waiting write succeeded on a removed device"
	no_leftovers
	log "detach of the quiesced device: removed, the waiting write failed (rc $rc: $(head -c 80 dd.err))"
}

# The volume is deleted (--force) under an attached device: the queues'
# reconnect is refused NO_SUCH_VOLUME, which is final, so I/O in flight
# and new I/O fail at once with EIO (it used to be held for ctrl_loss_tmo,
# 600 s), list says failed with the reason, and detach removes the device.
case_volume_deleted() {
	local fpid t0 t1 rc
	case_setup
	need_cmd fio
	start_tgt 256M
	attach --queues 2
	dd if=/dev/urandom of="$DEV" bs=64k count=16 oflag=direct status=none || fail "write before the delete failed"
	fio --name=load --filename="$DEV" --direct=1 --ioengine=libaio --rw=randwrite \
		--bs=16k --iodepth=16 --time_based --runtime=300 --size=64M \
		--allow_file_create=0 >fio.out 2>&1 &
	fpid=$!
	nap 2
	kill -0 "$fpid" 2>/dev/null || { cat fio.out; fail "fio ended before the delete"; }
	t0=$(_usecs)
	"$CTL" --socket "$CASE_TMP/target.sock" volume delete vol0 --force || fail "volume delete --force failed"
	fio_gone "$fpid"
	t1=$(_usecs)
	log "fio failed $(( (t1 - t0) / 1000 )) ms after the delete"
	[ $(( (t1 - t0) / 1000000 )) -le 10 ] || fail "in-flight I/O took $(( (t1 - t0) / 1000000 )) s to fail"
	grep -q "err=" fio.out || { tail -n 5 fio.out; fail "fio saw no I/O error"; }
	t0=$(_usecs)
	timeout 30 dd if="$DEV" of=/dev/null bs=4k count=1 iflag=direct 2>dd.err; rc=$?
	t1=$(_usecs)
	cat dd.err
	[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "a new read did not fail (rc $rc)"
	grep -q "Input/output error" dd.err || fail "a new read did not fail with EIO"
	[ $(( (t1 - t0) / 1000000 )) -le 5 ] || fail "a new read took $(( (t1 - t0) / 1000000 )) s to fail"
	"$CTL" list | tee list.out
	grep -q " failed " list.out || fail "list does not say failed"
	grep -h "no such volume (final" /run/rblk/rblk-initiator.*.log | head -n 2 | cut -c1-200
	grep -q "no such volume (final" /run/rblk/rblk-initiator.*.log || { show_logs; fail "the initiator log does not say why"; }
	t0=$(_usecs)
	detach "$DEV"
	t1=$(_usecs)
	log "detach took $(( (t1 - t0) / 1000 )) ms"
	no_leftovers
}

# rblkctl volume resize under a busy device.  The initiator is told on
# every queue's connection; with ublk UPDATE_SIZE (6.16+, GET_FEATURES
# bit 10) /dev/ublkbN grows live and its new blocks take I/O; without it
# (6.12) the device keeps its size, the initiator's log says why, and a
# new attach has the new size.  I/O under way goes on either way.
dev_size_is() { [ "$(blockdev --getsize64 "$1")" = "$2" ]; }
# ublk_features: sets feat to the GET_FEATURES mask an initiator logged (0x...).
ublk_features() {
	feat=$(grep -ho "ublk features 0x[0-9a-f]*" /run/rblk/rblk-initiator.*.log | head -n 1)
	[ -n "$feat" ] || { show_logs; fail "the initiator did not log the kernel's ublk features"; }
	feat=${feat##* }
}
# follows_growth WHEN: the volume grew from 64 to 128 MiB; $DEV must grow
# to 128 MiB where the kernel has UPDATE_SIZE (bit 10 of $feat), and keep
# 64 MiB, with the initiator's log saying why, where it has not.  Returns
# 0 when $DEV grew, 1 when it rightly kept its size.
follows_growth() {
	if (( feat & (1 << 10) )); then
		wait_until 10 dev_size_is "$DEV" $((128 << 20)) ||
			{ show_logs; fail "$DEV stayed at $(blockdev --getsize64 "$DEV") bytes $1 with UPDATE_SIZE ($feat)"; }
		log "$DEV grew to 128 MiB $1 (ublk features $feat)"
		return 0
	fi
	nap 3
	dev_size_is "$DEV" $((64 << 20)) || fail "$DEV changed size $1 without UPDATE_SIZE ($feat)"
	grep -q "cannot resize a live device" /run/rblk/rblk-initiator.*.log ||
		{ show_logs; fail "the initiator did not say why $DEV kept its size $1"; }
	log "no UPDATE_SIZE (ublk features $feat): $DEV kept 64 MiB $1 and the log says why"
	return 1
}
case_live_resize() {
	local feat fpid
	case_setup
	need_cmd fio
	start_tgt 64M
	attach --queues 2
	dev_size_is "$DEV" $((64 << 20)) || fail "$DEV is $(blockdev --getsize64 "$DEV") bytes, not 64 MiB"
	ublk_features
	timeout 120 fio --name=busy --filename="$DEV" --direct=1 --ioengine=libaio --rw=randwrite \
		--bs=4k --iodepth=8 --size=32M --rate=4m --verify=crc32c --verify_fatal=1 \
		--verify_state_save=0 --output=busy.out &
	fpid=$!
	nap 2
	"$CTL" --socket "$CASE_TMP/target.sock" volume resize vol0 --size 128M || fail "volume resize failed"
	if follows_growth live; then
		grep -h "grew from" /run/rblk/rblk-initiator.*.log | cut -c1-200
		fio_verify "$DEV" new-blocks --ioengine=libaio --rw=write --bs=64k --iodepth=8 \
			--offset=96M --size=32M
	fi
	wait "$fpid" || { cat busy.out; fail "fio verify across the resize failed"; }
	grep -q "err= 0" busy.out || { cat busy.out; fail "fio across the resize reported errors"; }
	[ "$(grep -c "grew to $((128 << 20)) bytes: told the session" "$CASE_TMP/target.log")" -ge 2 ] ||
		{ show_logs; fail "the target did not tell both queues' sessions"; }
	detach "$DEV"
	attach --queues 2
	dev_size_is "$DEV" $((128 << 20)) || fail "a new attach is $(blockdev --getsize64 "$DEV") bytes, not 128 MiB"
	detach "$DEV"
}

# The volume grows while the device has no server (--recovery manual,
# server killed): rblkctl recover must still take the device over, at
# the size it has, which then grows as after a live resize where the
# kernel can (UPDATE_SIZE) and says why not where it cannot.  What was
# written before the death reads back.
case_recovery_grown() {
	local feat pid out rc
	case_setup
	need_cmd fio jq
	start_tgt 64M
	attach --queues 2 --recovery manual --reconnect-delay 1
	ublk_features
	dmesg -C	# earlier cases' I/O errors (volume-deleted) are not this one's
	fio_verify "$DEV" before --ioengine=libaio --rw=write --bs=64k --iodepth=8 --size=16M \
		--do_verify=0
	pid=$(state_pid "$DEV") || fail "no pid in the state file"
	kill -9 "$pid"
	"$CTL" --socket "$CASE_TMP/target.sock" volume resize vol0 --size 128M || fail "volume resize failed"
	out=$(timeout 90 "$CTL" recover "$DEV" 2>&1); rc=$?
	echo "recover after the volume grew -> rc $rc: $out"
	[ $rc -eq 0 ] && [ "$out" = "$DEV" ] || { show_logs; fail "rblkctl recover failed after the volume grew: rc $rc"; }
	follows_growth "after recovery" || true
	fio_verify "$DEV" before --ioengine=libaio --rw=write --bs=64k --iodepth=8 --size=16M \
		--verify_only
	kernel_io_errors
	detach "$DEV"
	no_leftovers
}

# rblkctl restart, the in-place upgrade: twice, each under xfs + fio
# verify, the server hands the device over and the supervisor starts the
# next one; with ublk QUIESCE (bit 12 of the kernel's features) the kernel
# stops handing it requests first, so nothing is left unanswered.  Then
# with its supervisor killed, and a --recovery manual device: there
# rblkctl restart starts the next server itself.  Bad input first: an
# unknown device, and one attached with --no-recovery (refused, its
# server unchanged).
case_restart_in_place() {
	local feat pid out rc i t0
	case_setup
	need_cmd fio mkfs.xfs xfs_repair jq
	start_tgt 512M
	attach --queues 2 --depth 32 --no-recovery
	pid=$(state_pid "$DEV") || fail "no pid in the state file"
	out=$("$CTL" restart "$DEV" 2>&1); rc=$?
	echo "restart of a --no-recovery device -> rc $rc: $out"
	[ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] || fail "restart of a --no-recovery device: rc $rc"
	[ "$(state_pid "$DEV")" = "$pid" ] || fail "a refused restart changed the server"
	detach "$DEV"
	out=$("$CTL" restart /dev/ublkb77 2>&1); rc=$?
	echo "restart of an unknown device -> rc $rc: $out"
	[ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] || fail "restart of an unknown device: rc $rc"
	attach --queues 2 --depth 32
	ublk_features
	for i in 1 2; do
		xfs_fio_start	# fio is running when it returns
		pid=$(state_pid "$DEV") || fail "no pid in the state file"
		t0=$(_usecs)
		out=$(timeout 120 "$CTL" restart "$DEV" 2>&1); rc=$?
		echo "restart $i under fio -> rc $rc: $out, $((($(_usecs) - t0) / 1000)) ms"
		[ $rc -eq 0 ] && [ "$out" = "$DEV" ] || { show_logs; fail "rblkctl restart $i failed: rc $rc"; }
		[ "$(state_pid "$DEV")" != "$pid" ] || fail "restart $i: still served by $pid"
		xfs_fio_check
	done
	"$CTL" list --json >list.json
	jq -e '.devices[0].recoveries == 2 and .devices[0].state == "live"' list.json >/dev/null ||
		fail "list --json: $(cat list.json)"
	grep -h "handing\|handed\|quiesce\|QUIESCE" /run/rblk/rblk-initiator.*.log | tail -n 8
	[ "$(cat /run/rblk/rblk-initiator.*.log | grep -c "handed over$")" -ge 2 ] ||
		{ show_logs; fail "the servers did not log that they handed the device over"; }
	# QUIESCE (bit 12) is used where the kernel has it, except on a
	# device with batch I/O (initiator/main.c add_device says why).
	if (( feat & (1 << 12) )) && ! grep -q ", batch commands" /run/rblk/rblk-initiator.*.log; then
		grep -q "quiesced: the kernel holds new requests" /run/rblk/rblk-initiator.*.log ||
			{ show_logs; fail "QUIESCE ($feat) was not used"; }
		! grep -q "handing over with .* unanswered" /run/rblk/rblk-initiator.*.log ||
			fail "with QUIESCE, requests were left unanswered"
		! grep -q "held for the next server" /run/rblk/rblk-initiator.*.log ||
			fail "with QUIESCE, the kernel still handed requests to the old server"
	else
		grep -q "has no ublk QUIESCE" /run/rblk/rblk-initiator.*.log ||
			fail "no line saying this kernel ($feat) has no QUIESCE"
		log "without QUIESCE: $(cat /run/rblk/rblk-initiator.*.log | grep -c "held for the next server") queue(s) held requests for the next server"
	fi
	# Its supervisor killed: restart starts the next server and a new
	# supervisor itself.
	pkill -9 -x rblk-supervise || fail "no supervisor to kill"
	pid=$(state_pid "$DEV") || fail "no pid in the state file"
	out=$(timeout 120 "$CTL" restart "$DEV" 2>&1); rc=$?
	echo "restart with the supervisor killed -> rc $rc: $out"
	[ $rc -eq 0 ] && [ "$out" = "$DEV" ] || { show_logs; fail "rblkctl restart without a supervisor failed: rc $rc"; }
	[ "$(state_pid "$DEV")" != "$pid" ] || fail "restart without a supervisor: still served by $pid"
	pgrep -x rblk-supervise >/dev/null || fail "no new supervisor after the restart"
	detach "$DEV"
	attach --queues 2 --recovery manual
	fio_verify "$DEV" manual --ioengine=libaio --rw=write --bs=64k --iodepth=8 --size=16M \
		--do_verify=0
	pid=$(state_pid "$DEV") || fail "no pid in the state file"
	out=$(timeout 120 "$CTL" restart "$DEV" 2>&1); rc=$?
	echo "restart of a --recovery manual device -> rc $rc: $out"
	[ $rc -eq 0 ] && [ "$out" = "$DEV" ] || { show_logs; fail "rblkctl restart (manual) failed: rc $rc"; }
	[ "$(state_pid "$DEV")" != "$pid" ] || fail "restart (manual): still served by $pid"
	fio_verify "$DEV" manual --ioengine=libaio --rw=write --bs=64k --iodepth=8 --size=16M \
		--verify_only
	kernel_io_errors
	detach "$DEV"
	no_leftovers
}

run_case -t 120 attach-rdma case_attach_rdma
run_case -t 120 cli-errors case_cli_errors
run_case -t 120 attach-list-detach case_attach_list_detach
run_case -t 240 fs-ext4 case_fs_ext4
run_case -t 240 fs-xfs case_fs_xfs
run_case -t 600 fio-verify case_fio_verify
run_case -t 240 fio-verify-tcp case_fio_verify_tcp
run_case -t 300 poll-adaptive case_poll_adaptive
run_case -t 300 poll-busy case_poll_busy
run_case -t 180 discard case_discard
run_case -t 180 write-zeroes case_write_zeroes
run_case -t 240 durability-target-kill case_durability
run_case -t 240 durability-counters case_durability_counters
run_case -t 120 detach-inflight case_detach_inflight
run_case -t 120 detach-stalled-target case_detach_stalled_target
run_case -t 120 initiator-killed case_initiator_killed
run_case -t 300 recovery-auto case_recovery_auto
run_case -t 300 recovery-manual case_recovery_manual
run_case -t 600 recovery-kill-20 case_recovery_kill_20
run_case -t 180 recovery-supervisor-killed case_recovery_supervisor_killed
run_case -t 180 recovery-target-down case_recovery_target_down
run_case -t 180 recovery-foreground case_recovery_foreground
run_case -t 120 recovery-detach-quiesced case_recovery_detach_quiesced
run_case -t 180 volume-deleted case_volume_deleted
run_case -t 240 live-resize case_live_resize
run_case -t 180 recovery-grown case_recovery_grown
run_case -t 300 restart-in-place case_restart_in_place
cases_done
