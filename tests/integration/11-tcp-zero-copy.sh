#!/bin/bash
# SPDX-License-Identifier: MIT
# TCP zero-copy sends (target/tcp_send.c, tcp_zero_copy in the config).
# With tcp_zero_copy = on, READ answers of 16 KiB and more go out as
# SENDMSG_ZC, whose pages the kernel reads until the peer acks them:
# every byte must still verify with large, deep and mixed I/O (partial
# sends, tags reused before the kernel is done with the pages), the
# counters must show the sends, and clients that never read or die
# mid-answer must not keep the target's buffers.  auto must stop asking
# on loopback (the kernel copies there); off, the default, must never ask.
. "$(dirname "$0")/lib.sh"
require_target
require_fio_engine
require_rblkctl
require_python3

. "$RBLK_ROOT/tests/fio-terse.sh"

# zc_counter CONF KEY: the volume's zero_copy KEY (sends, bytes, copied).
zc_counter() {
	ctl "$1" stats vol0 --json | jget "d['volumes'][0]['stats']['zero_copy']['$2']"
}

# start_zc MODE: a target with tcp_zero_copy = MODE on $PORT, CONF.
start_zc() {
	PORT=$(free_port) || skip "no free port"
	CONF=$T/zc-$1.conf
	RBLK_TCP_ZERO_COPY=$1 write_conf "$CONF" uring "$T/vol0.img" 128M
	start_target "$CONF"
	if [ "$1" = on ] && grep -q 'has no zero-copy send' "$T/target.log"; then
		echo "this kernel has no zero-copy send (SENDMSG_ZC, Linux 6.0)"
		exit 77
	fi
}

fio_zc() {	# NAME MIN_READ_KB MIN_WRITE_KB FIO-ARGS...
	local name=$1 rk=$2 wk=$3 out=$T/fio-$1.out
	shift 3
	timeout 180 "$FIO_BIN" --ioengine="$FIO_ENGINE" --target=127.0.0.1 \
		--port="$PORT" --volume=vol0 --verify_state_save=0 \
		--output-format=terse --name="$name" "$@" >"$out" 2>&1 ||
		{ grep -v '^3;' "$out"; echo "fio $name failed"; return 1; }
	fio_ok "$out" "$rk" "$wk"
}

# Deep 1 MiB reads and writes both ways, 128 KiB at depth 32, 4 jobs of
# mixed sizes: all verified, and most READ bytes went out zero copy.
case_on_verify() {
	start_zc on
	fio_zc big 1 1 --rw=randrw --bs=1M --iodepth=64 --size=64M --io_size=256M \
		--verify=crc32c || return 1
	fio_zc mid 1 1 --rw=randrw --bs=128k --iodepth=32 --size=64M \
		--io_size=128M --verify=crc32c || return 1
	fio_zc mixed 1 1 --numjobs=4 --offset_increment=16M --size=16M \
		--rw=randrw --bsrange=4k-256k --iodepth=16 --verify=crc32c || return 1
	local sends bytes read
	sends=$(zc_counter "$CONF" sends) && bytes=$(zc_counter "$CONF" bytes) ||
		{ echo "no zero_copy counters in rblkctl stats --json"; return 1; }
	read=$(ctl "$CONF" stats vol0 --json | jget "d['volumes'][0]['stats']['read']['bytes']")
	echo "note: $sends zero-copy sends carried $((bytes >> 20)) MiB of $((read >> 20)) MiB read; copied $(zc_counter "$CONF" copied)"
	[ "$sends" -gt 100 ] || { echo "only $sends zero-copy sends"; return 1; }
	# Everything but the small answers of 'mixed' qualifies.
	[ "$bytes" -ge $((read / 2)) ] || { echo "zero copy carried $bytes of $read bytes"; return 1; }
	ctl "$CONF" stats vol0 | grep -q '^ *zero copy: sends [1-9]' ||
		{ echo "rblkctl stats prints no zero copy line"; return 1; }
	stop_target TERM
	[ "$TARGET_RC" -eq 0 ] || { echo "target exit $TARGET_RC"; return 1; }
	target_log_clean
}

# A client killed with 1 MiB answers in flight: the target frees what the
# kernel held for it and serves the next client; repeated, so a leak of
# buffers would starve the pool (reactor_buffer_mb = 16 here).
case_on_client_killed() {
	start_zc on
	stop_target
	sed -i 's/^reactors = 2$/reactors = 1\nreactor_buffer_mb = 16/' "$CONF"
	start_target "$CONF"
	for i in 1 2 3 4 5; do
		# --thread: one process, so the KILL takes its jobs too.
		"$FIO_BIN" --thread --ioengine="$FIO_ENGINE" --target=127.0.0.1 \
			--port="$PORT" --volume=vol0 --name=killed --rw=randread \
			--bs=1M --iodepth=32 --size=64M --time_based --runtime=30 \
			>"$T/killed-$i.out" 2>&1 &
		local pid=$!
		sleep 1
		kill -KILL "$pid"
		wait "$pid" 2>/dev/null
	done
	fio_zc after-kill 1 1 --rw=randrw --bs=1M --iodepth=16 --size=32M \
		--io_size=64M --verify=crc32c || return 1
	kill -0 "$TARGET_PID" 2>/dev/null || { echo "target died"; return 1; }
	stop_target TERM
	[ "$TARGET_RC" -eq 0 ] || { echo "target exit $TARGET_RC"; return 1; }
	target_log_clean
}

# auto on loopback: the kernel copies (it reports so from Linux 6.2), so
# a connection stops asking after its first notifications; a kernel that
# cannot report gets no zero copy at all under auto.
case_auto() {
	start_zc auto
	fio_zc auto 262144 0 --rw=randread --bs=1M --iodepth=16 --size=64M --io_size=256M ||
		return 1
	local sends copied
	sends=$(zc_counter "$CONF" sends) && copied=$(zc_counter "$CONF" copied) ||
		return 1
	if grep -q 'does not say when a zero-copy send copied\|has no zero-copy send' "$T/target.log"; then
		echo "note: this kernel cannot report copies: auto made $sends zero-copy sends"
		[ "$sends" -eq 0 ] || { echo "auto used zero copy it cannot judge"; return 1; }
		stop_target
		return 0
	fi
	echo "note: auto on loopback: $sends zero-copy sends, $copied reported copied, of 256 reads"
	[ "$copied" -ge 1 ] || { echo "the kernel never reported a copy on loopback"; return 1; }
	# Only what was in flight before the first report (depth 16).
	[ "$sends" -le 32 ] || { echo "auto kept asking: $sends zero-copy sends"; return 1; }
	stop_target
}

case_off() {	# MODE (empty: the default, which is off)
	start_zc "$1"
	fio_zc "off$1" 65536 0 --rw=randread --bs=1M --iodepth=16 --size=64M \
		--io_size=64M || return 1
	[ "$(zc_counter "$CONF" sends)" -eq 0 ] ||
		{ echo "tcp_zero_copy ${1:-default} made zero-copy sends"; return 1; }
	stop_target
}

# Older tests rerun with zero copy forced: the smallest pool under deep
# 1 MiB I/O from three clients, and clients that never read (their
# answers are never acked: the stall_timeout close must free the pages).
case_on_rerun() {	# TEST
	RBLK_TCP_ZERO_COPY=on bash "$RBLK_ROOT/tests/integration/$1"
}

# Each case in a subshell (fail and skip end the case), which kills the
# case's target however it ends (the test's own EXIT trap does not run
# there).
sub() { ( trap 'kill -KILL "${TARGET_PID:-}" 2>/dev/null' EXIT; "$@" ); }
run_case on-verify sub case_on_verify
run_case on-client-killed sub case_on_client_killed
run_case auto sub case_auto
run_case off sub case_off off
run_case default-off sub case_off ""
run_case on-buffer-pressure sub case_on_rerun 45-buffer-pressure.sh
run_case on-resource-caps sub case_on_rerun 47-resource-caps.sh
exit $((nfail > 0))
