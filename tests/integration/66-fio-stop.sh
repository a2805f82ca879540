#!/bin/bash
# SPDX-License-Identifier: MIT
# An fio job through the rblk engine ends when the answer is final or
# when it is told to, whatever its queue is doing:
#  - deleted: its volume is deleted with --force; the reconnect's
#    NO_SUCH_VOLUME is final, so fio ends at once with that reason (it
#    used to retry for ctrl_loss_tmo, 600 s);
#  - revoked: its host is denied and the target restarted; ACCESS_DENIED
#    at the reconnect is final the same way;
#  - SIGINT / SIGTERM to fio end the job within a second (fio's own
#    handler marks it terminated; the engine hears that) while the target
#    is gone (reconnecting), stopped (connected, silent), or while a
#    reconnect attempt waits for a LOGIN answer that does not come;
#  - rblk_timeout is in seconds, as every other timeout.
. "$(dirname "$0")/lib.sh"
require_target
require_rblkctl
require_fio_engine
require_python3

# How long fio may take on a loaded 2-core machine beyond the bound.
MARGIN_MS=${MARGIN_MS:-300}
RUN_CASE_TAIL=30
now_ms() { date +%s%3N; }

setup() {	# NAME: a target with vol0 and volume NAME open to all
	PORT=$(free_port) || fail "no free port"
	CONF=$T/$1.conf
	write_conf "$CONF" uring "$T/$1-0.img" 64M
	sed -i "/^admin_socket/a volume_dir = $T/vols-$1" "$CONF"
	cat >>"$CONF" <<EOF

[volume $1]
path = $T/$1.img
size = 64M
allow_hosts = fiohost
EOF
	: >"$T/target.log"
	start_target "$CONF"
}

# start_fio NAME VOLUME [fio options]: a long time-based write job in the
# background (output in $T/NAME.out); FIO_PID is fio itself.  Returns
# once the job's queue is connected and I/O flows.
start_fio() {
	local name=$1 vol=$2 i
	shift 2
	"$FIO_BIN" --ioengine="$FIO_ENGINE" --target=127.0.0.1 --port="$PORT" \
		--volume="$vol" --hostname=fiohost --verify_state_save=0 \
		--name="$name" --rw=randwrite --bs=4k --iodepth=8 --size=16M \
		--time_based --runtime=60 "$@" >"$T/$name.out" 2>&1 &
	FIO_PID=$!
	_cleanup_pids+=("$FIO_PID")
	for ((i = 0; i < 100; i++)); do
		[ "$(grep -c "logged in to volume $vol," "$T/target.log")" -ge 2 ] && break
		sleep 0.1
	done
	sleep 0.5
	kill -0 "$FIO_PID" 2>/dev/null || { cat "$T/$name.out"; echo "fio ended early"; return 1; }
}

# ends_within NAME MS: fio ends within MS (+ MARGIN_MS) of now, else it is
# killed and the case fails.  Leaves fio's exit status in FIO_RC and the
# time it took in TOOK.
ends_within() {
	local name=$1 bound=$2 t0 i
	t0=$(now_ms)
	for ((i = 0; i < (bound + MARGIN_MS + 5000) / 20; i++)); do
		kill -0 "$FIO_PID" 2>/dev/null || break
		sleep 0.02
	done
	TOOK=$(($(now_ms) - t0))
	if kill -0 "$FIO_PID" 2>/dev/null; then
		# Its job processes first: they outlive a killed parent.
		pkill -KILL -P "$FIO_PID" 2>/dev/null; kill -KILL "$FIO_PID"
		wait "$FIO_PID" 2>/dev/null
		tail -n 15 "$T/$name.out"
		echo "fio still running $TOOK ms later: killed"
		return 1
	fi
	wait "$FIO_PID"; FIO_RC=$?
	tail -n 12 "$T/$name.out"
	echo "note: fio ended $TOOK ms after it (exit $FIO_RC; bound $bound + margin $MARGIN_MS ms)"
	[ "$TOOK" -le $((bound + MARGIN_MS)) ] || { echo "took $TOOK ms, bound $bound"; return 1; }
}

case_deleted() {
	setup deleted
	start_fio del deleted || return 1
	ctl "$CONF" volume delete deleted --force || return 1
	ends_within del 1000 || return 1
	[ "$FIO_RC" -ne 0 ] || { echo "fio exited 0 although its volume is gone"; return 1; }
	grep -q "no such volume (final" "$T/del.out" || { echo "fio does not say why"; return 1; }
	stop_target TERM
}

case_revoked() {
	setup revoked
	start_fio rev revoked || return 1
	ctl "$CONF" volume deny revoked fiohost || return 1
	ctl "$CONF" volume allow revoked 127.0.0.9 || return 1
	# Logged-in sessions stay: the restart makes the queue log in again.
	stop_target TERM
	start_target "$CONF"
	ends_within rev 1500 || return 1
	[ "$FIO_RC" -ne 0 ] || { echo "fio exited 0 although access was revoked"; return 1; }
	grep -q "access denied (final" "$T/rev.out" || { echo "fio does not say why"; return 1; }
	stop_target TERM
}

# signal_case NAME SIG HOW: fio on a target that HOW (gone, stopped,
# mute-login) is sent SIG and must end within a second.
signal_case() {
	local name=$1 sig=$2 how=$3 ka=1
	# Stopped: the connection must still be live when the signal's 500 ms
	# grace ends (1 s after the stop), so it is not lost to the keep-alive
	# (keep_alive_tmo after the target's last word) before.
	[ "$how" = stopped ] && ka=2
	setup "$name"
	start_fio "$name" "$name" --keep_alive_tmo=$ka || return 1
	case $how in
	gone)	kill -KILL "$TARGET_PID"; wait "$TARGET_PID" 2>/dev/null
		sleep 1.5 ;;	# reconnecting: refused every 250 ms, then 2 s
	stopped) kill -STOP "$TARGET_PID"
		sleep 0.5 ;;	# connected, nothing answered
	mute-login)
		# Stopped: its kernel still completes TCP handshakes, so the
		# keep-alive gives up after 1 s and the reconnect attempt that
		# follows waits for a LOGIN_RSP (for its 4 s budget).
		kill -STOP "$TARGET_PID"
		for ((i = 0; i < 100; i++)); do
			[ "$(ss -Htn state established "( dport = :$PORT )" | wc -l)" -ge 2 ] ||
			   [ "$(ss -Htn state syn-recv "( sport = :$PORT )" | wc -l)" -ge 1 ] && break
			grep -q "reconnect attempt" "$T/$name.out" && break
			sleep 0.05
		done
		sleep 1.5 ;;
	esac
	kill "-$sig" "$FIO_PID"
	ends_within "$name" 1000
	local rc=$?
	[ "$how" = gone ] || kill -CONT "$TARGET_PID" 2>/dev/null
	[ "$rc" -eq 0 ] || return 1
	grep -q "terminating on signal" "$T/$name.out" || { echo "fio did not see the signal"; return 1; }
	# Where the queue was when the signal came, from why it gave up.
	case $how in
	gone)	want="stopped by the caller while reconnecting" ;;
	stopped) want="stopped by the caller; [0-9]* command(s) unanswered, nothing from the target for 500 ms" ;;
	mute-login) want="stopped by the caller while reconnecting"
		# inside the first attempt: it had not failed yet
		grep -q "reconnect failed" "$T/$name.out" && { echo "not inside an attempt"; return 1; } ;;
	esac
	grep -q "$want" "$T/$name.out" || { echo "the queue did not stop as expected: want '$want'"; return 1; }
	[ "$how" = gone ] || stop_target TERM
}

# rblk_timeout is in seconds like every other timeout: 1 waits a second
# for a LOGIN answer (it once meant 1 ms), and an old ms value is refused.
case_timeout_unit() {
	local t0 took
	setup tmo
	kill -STOP "$TARGET_PID"	# connects complete, LOGIN is not answered
	t0=$(now_ms)
	"$FIO_BIN" --ioengine="$FIO_ENGINE" --target=127.0.0.1 --port="$PORT" \
		--volume=tmo --hostname=fiohost --name=tmo --rw=read --bs=4k \
		--size=1M --rblk_timeout=1 >"$T/tmo.out" 2>&1 && { kill -CONT "$TARGET_PID"; echo "fio ran"; return 1; }
	took=$(($(now_ms) - t0))
	kill -CONT "$TARGET_PID"
	tail -n 3 "$T/tmo.out"
	echo "note: rblk_timeout=1: login gave up after $took ms"
	[ "$took" -ge 900 ] && [ "$took" -lt 3000 ] || { echo "rblk_timeout=1 waited $took ms, not about 1 s"; return 1; }
	grep -q "LOGIN_RSP: timed out" "$T/tmo.out" || { echo "not a login timeout"; return 1; }
	if "$FIO_BIN" --ioengine="$FIO_ENGINE" --target=127.0.0.1 --port="$PORT" \
		--volume=tmo --hostname=fiohost --name=tmo2 --rw=read --bs=4k \
		--size=1M --rblk_timeout=10000 >"$T/tmo2.out" 2>&1; then
		echo "rblk_timeout=10000 (ms, once) was taken as seconds"; return 1
	fi
	grep -q "rblk_timeout.*out of range" "$T/tmo2.out" || { cat "$T/tmo2.out"; echo "unclear refusal"; return 1; }
	stop_target TERM
}

run_case rblk-timeout-seconds case_timeout_unit
run_case deleted case_deleted
run_case revoked case_revoked
run_case sigint-reconnecting signal_case int-gone INT gone
run_case sigterm-reconnecting signal_case term-gone TERM gone
run_case sigterm-silent-target signal_case term-stopped TERM stopped
run_case sigint-in-attempt signal_case int-mute INT mute-login
target_log_clean
exit $((nfail > 0))
