#!/bin/bash
# SPDX-License-Identifier: MIT
# Target restarts and deaths seen through the fio engine:
#  - data written (crc32c verify headers) survives SIGTERM + restart, for
#    both uring and aio: a verify-only pass after the restart checks it;
#  - SIGTERM while fio is mid-run: the target exits within 5 s, fio fails
#    with an I/O error within a bound instead of hanging -- with
#    ctrl_loss_tmo=0 (no reconnect); 22-reconnect.sh has the default, where
#    fio rides the restart out;
#  - SIGKILL while fio is mid-run: same for fio, and a new target on the
#    same file serves the data written before the run started.
. "$(dirname "$0")/lib.sh"
require_target
require_fio_engine

fio_job() {	# NAME FIO-ARGS...: bounded fio run, output in $T/fio-NAME.out
	local name=$1
	shift
	timeout 120 "$FIO_BIN" --ioengine="$FIO_ENGINE" --target=127.0.0.1 \
		--port="$PORT" --volume=vol0 --verify_state_save=0 --name="$name" \
		"$@" >"$T/fio-$name.out" 2>&1
	local rc=$?
	cat "$T/fio-$name.out"
	return $rc
}

# The same job description for the write pass and the verify-only pass.
VERIFY_JOB=(--rw=randwrite --bs=16k --iodepth=16 --size=32M --verify=crc32c
	    --randseed=4242)

case_restart_keeps_data() {	# BACKEND
	local backend=$1
	write_conf "$T/$backend.conf" "$backend" "$T/$backend.img" 64M
	start_target "$T/$backend.conf"
	fio_job "$backend-write" "${VERIFY_JOB[@]}" --do_verify=0 ||
		{ echo "write pass failed"; return 1; }
	stop_target TERM
	[ "$TARGET_RC" -eq 0 ] || { echo "target exited $TARGET_RC on SIGTERM"; return 1; }
	start_target "$T/$backend.conf"
	fio_job "$backend-verify" "${VERIFY_JOB[@]}" --verify_only ||
		{ echo "verify after restart failed"; return 1; }
	# The verify pass read all of it (not an empty job).
	grep -Eq 'READ: bw=.*io=32\.0MiB' "$T/fio-$backend-verify.out" ||
		{ echo "verify pass did not read 32 MiB"; return 1; }
	stop_target TERM
}

# fio_dies_with_target SIGNAL: starts a long fio run that does not
# reconnect (ctrl_loss_tmo=0), signals the target mid-run, and expects fio
# to end with an error within 20 s.
fio_dies_with_target() {
	local sig=$1 fio_pid i
	write_conf "$T/die.conf" uring "$T/die.img" 64M
	start_target "$T/die.conf"
	fio_job before --rw=write --bs=64k --size=8M --verify=crc32c --do_verify=0 ||
		{ echo "preparing the data failed"; return 1; }
	"$FIO_BIN" --ioengine="$FIO_ENGINE" --target=127.0.0.1 --port="$PORT" \
		--volume=vol0 --verify_state_save=0 --name=during --rw=randrw \
		--bs=4k --iodepth=32 --offset=16M --size=32M --time_based --runtime=60 \
		--ctrl_loss_tmo=0 \
		>"$T/fio-during.out" 2>&1 &
	fio_pid=$!
	_cleanup_pids+=("$fio_pid")
	# I/O is in flight once fio's job holds a connection (a fixed sleep
	# raced with a slow fio start on a loaded machine).
	for ((i = 0; i < 300; i++)); do
		[ -n "$(ss -Htn state established "( dport = :$PORT )" 2>/dev/null)" ] && break
		kill -0 "$fio_pid" 2>/dev/null || break
		sleep 0.1
	done
	sleep 0.5
	kill -0 "$fio_pid" 2>/dev/null || { cat "$T/fio-during.out"; echo "fio ended early"; return 1; }
	[ -n "$(ss -Htn state established "( dport = :$PORT )")" ] ||
		{ echo "fio never connected within 30 s"; return 1; }
	local t0=$SECONDS
	if [ "$sig" = TERM ]; then
		stop_target TERM	# fails the test if the target needs > 5 s
	else
		kill -KILL "$TARGET_PID"
		wait "$TARGET_PID" 2>/dev/null
	fi
	for ((i = 0; i < 200; i++)); do
		kill -0 "$fio_pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$fio_pid" 2>/dev/null; then
		echo "fio still running 20 s after the target got SIG$sig"
		return 1
	fi
	wait "$fio_pid"
	local rc=$?
	cat "$T/fio-during.out"
	echo "note: fio exited $rc, $((SECONDS - t0)) s after SIG$sig to the target"
	[ "$rc" -ne 0 ] || { echo "fio reported success although its target died"; return 1; }
	# EIO (connection lost), or ESHUTDOWN: a draining target answers what
	# it will not run with "shutting down".
	grep -Eq 'Input/output error|Connection reset|Broken pipe|endpoint shutdown' \
		"$T/fio-during.out" ||
		{ grep -E 'error|fio:|rblk' "$T/fio-during.out" | head -n 5
		  echo "fio did not report an I/O error"; return 1; }
	# A new target on the same file still has the data written before.
	start_target "$T/die.conf"
	fio_job after --rw=write --bs=64k --size=8M --verify=crc32c --verify_only ||
		{ echo "data written before the crash is not intact"; return 1; }
	stop_target TERM
}

PORT=$(free_port) || fail "no free port"
run_case restart-keeps-data-uring case_restart_keeps_data uring
PORT=$(free_port) || fail "no free port"
run_case restart-keeps-data-aio case_restart_keeps_data aio
PORT=$(free_port) || fail "no free port"
run_case sigterm-during-io fio_dies_with_target TERM
PORT=$(free_port) || fail "no free port"
run_case sigkill-during-io fio_dies_with_target KILL

# A sanitizer build of the target must not have reported anything.
if declare -F target_log_clean >/dev/null; then target_log_clean; fi
exit $((nfail > 0))
