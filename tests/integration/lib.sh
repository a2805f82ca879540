# SPDX-License-Identifier: MIT
# Shared helpers for host integration tests (sourced, not run).
# Every test: source this, call the require_* it needs (each exits 77 with a
# one-line reason when something is missing), use start_target, and rely on
# the EXIT trap to stop what it started and remove its temp dir.
set -u

RBLK_ROOT=${RBLK_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
RBLK_BUILD=${RBLK_BUILD:-$RBLK_ROOT/build}
# RBLK_TARGET_BIN: another build of the target (e.g. to measure "before").
TARGET_BIN=${RBLK_TARGET_BIN:-$RBLK_BUILD/rblk-target}
FIO_ENGINE=$RBLK_BUILD/rblk-fio.so
# The fio binary the engine was proven against (tools/fio/fio.mk writes it).
FIO_BIN=$(cat "$RBLK_BUILD/fio-bin" 2>/dev/null || command -v fio || echo fio)

T=$(mktemp -d /tmp/rblk-test.XXXXXX)
exec {_test_stdout}>&1
_cleanup_pids=()
_cleanup() {
	local p
	# A fail inside run_case exits the test with the case's output still
	# in its log: show it, or the case ends without a word.
	# (The trap runs inside the case's redirection: write to the test's
	# own stdout, kept in _test_stdout.)
	[ -z "${_case_name:-}" ] || _case_failed "$_case_name" "$_case_out" >&"$_test_stdout"
	for p in "${_cleanup_pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${_cleanup_pids[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap _cleanup EXIT

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
log()  { echo "--- $*"; }

require_target()    { [ -x "$TARGET_BIN" ] || skip "$TARGET_BIN not built"; }
require_fio_engine() {
	# fio.mk leaves why the fio source could not be had in fio-src.unavailable.
	[ -f "$FIO_ENGINE" ] || skip "fio engine not built: $(cat "$RBLK_BUILD/fio-src.unavailable" 2>/dev/null ||
		echo 'fio source missing') (see tools/fio/README.md)"
	command -v "$FIO_BIN" >/dev/null 2>&1 || [ -x "$FIO_BIN" ] || skip "no fio binary"
}

# A free TCP port on loopback (asks the kernel, then releases it).  Below
# the kernel's ephemeral range (32768 up, by default): the local end of
# some connection refuses a connect (looks free) and may still fail a bind.
free_port() {
	local p
	for _ in $(seq 50); do
		p=$((20000 + RANDOM % 12000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
	done
	return 1
}

# wait_port PORT [SECONDS]: until something accepts on 127.0.0.1:PORT.
wait_port() {
	local port=$1 secs=${2:-10} i
	for ((i = 0; i < secs * 20; i++)); do
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# start_target CONF [extra args]: runs rblk-target in the background with its
# log in $T/target.log; sets TARGET_PID; waits until the TCP port listens
# (PORT must be set to the config's port).
start_target() {
	local conf=$1; shift
	"$TARGET_BIN" --config "$conf" "$@" >>"$T/target.log" 2>&1 &
	TARGET_PID=$!
	_cleanup_pids+=("$TARGET_PID")
	wait_port "$PORT" 10 || { cat "$T/target.log"; fail "target did not listen on $PORT"; }
}

# stop_target [SIGNAL]: signals the target, waits up to 10 s; fails if it
# does not exit in time.  Leaves the exit status in TARGET_RC.  The
# target itself closes connections hard 3 s into a drain and gives up at
# 4 s (TGT_REACTOR_*_MS): 10 s is that and room for a loaded machine.
stop_target() {
	local sig=${1:-TERM} i
	kill "-$sig" "$TARGET_PID" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		kill -0 "$TARGET_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$TARGET_PID" 2>/dev/null; then
		tail -n 15 "$T/target.log"
		fail "target still running 10 s after SIG$sig"
	fi
	wait "$TARGET_PID"; TARGET_RC=$?
}

# write_conf FILE BACKEND VOLFILE [SIZE]: one-volume config on 127.0.0.1:$PORT.
# RBLK_TCP_ZERO_COPY=auto|on|off sets tcp_zero_copy (11-tcp-zero-copy.sh
# reruns tests with it on).
write_conf() {
	local conf=$1 backend=$2 file=$3 size=${4:-256M}
	cat >"$conf" <<CONF
[target]
listen_tcp = 127.0.0.1:$PORT
reactors = 2
admin_socket = $conf.sock${RBLK_TCP_ZERO_COPY:+
tcp_zero_copy = $RBLK_TCP_ZERO_COPY}

[volume vol0]
path = $file
size = $size
backend = $backend
allow_any_host = yes
CONF
}

# start_admin_target [SIZE]: a target on a free $PORT with config $CONF
# ($T/t.conf): volume vol0 (a file of SIZE, default 1M, open to any host)
# and volume_dir $T/vols, so what rblkctl creates stays in the test's
# folder.  For the control-plane tests.
start_admin_target() {
	PORT=$(free_port) || skip "no free port"
	CONF=$T/t.conf
	mkdir -p "$T/vols"
	write_conf "$CONF" uring "$T/vol.img" "${1:-1M}"
	sed -i "/^admin_socket/a volume_dir = $T/vols" "$CONF"
	start_target "$CONF"
}

# run_case NAME FUNCTION [ARGS]: runs FUNCTION with its output in
# $T/case-NAME.log and prints one RBLK-CASE line for it: on a pass with the
# case's "note:" lines, on a failure after the last RUN_CASE_TAIL (25) lines
# of its output.  Counts failures in nfail (exit $((nfail > 0)) at the end).
nfail=0
# _case_failed NAME LOG: the tail of a failed case's log, and its FAIL line.
_case_failed() {
	sed 's/^/    /' "$2" | tail -n "${RUN_CASE_TAIL:-25}"
	echo "RBLK-CASE: FAIL $1 $(grep -v '^[[:space:]]*$' "$2" | tail -n 1)"
}

run_case() {
	local name=$1 out=$T/case-$1.log
	shift
	log "case $name"
	_case_name=$name _case_out=$out
	"$@" >"$out" 2>&1
	local rc=$?
	_case_name=
	case $rc in
	0)	grep '^note:' "$out" | sed 's/^/    /'
		echo "RBLK-CASE: PASS $name" ;;
	77)	echo "RBLK-CASE: SKIP $name $(tail -n 1 "$out")" ;;
	*)	_case_failed "$name" "$out"
		nfail=$((nfail + 1)) ;;
	esac
}

# start_conf SIZE: PORT = a free port (skips without one), CONF = $T/t.conf:
# write_conf's vol0 (uring on $T/open.img, SIZE) followed by the config text
# on stdin (more volumes), and start_target on it.
start_conf() {
	PORT=$(free_port) || skip "no free port"
	CONF=$T/t.conf
	write_conf "$CONF" uring "$T/open.img" "$1"
	cat >>"$CONF"
	start_target "$CONF"
}

# require_login: LOGIN = the rblk-login probe (tests/tools).
require_login() {
	LOGIN=$RBLK_BUILD/tests/tools/rblk-login
	[ -x "$LOGIN" ] || skip "$LOGIN not built (make unit-tests)"
}

# run_fio ARGS...: fio through the rblk engine against 127.0.0.1:$PORT.
run_fio() {
	"$FIO_BIN" --ioengine="$FIO_ENGINE" --target=127.0.0.1 --port="$PORT" \
		--verify_state_save=0 "$@"
}

# ---- control plane (admin socket) --------------------------------------
RBLKCTL_BIN=$RBLK_BUILD/rblkctl
require_rblkctl() { [ -x "$RBLKCTL_BIN" ] || skip "$RBLKCTL_BIN not built"; }
# ctl CONF ARGS...: rblkctl against the admin socket write_conf gave CONF.
ctl() { local conf=$1; shift; "$RBLKCTL_BIN" --socket "$conf.sock" "$@"; }
# target_log_clean: fails when the target's log has a sanitizer report.
target_log_clean() {
	if grep -E "AddressSanitizer|LeakSanitizer|runtime error:" "$T/target.log" 2>/dev/null; then
		fail "sanitizer report in the target log"
	fi
}

# jget EXPR: reads JSON on stdin and prints the Python expression EXPR over
# it as d (e.g. jget 'd["volumes"][0]["size"]').  Tests using it call
# require_python3 first.
require_python3() { command -v python3 >/dev/null || skip "python3 needed to check JSON output"; }
jget() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
# limit_count CONF KEY: how often the target's limit KEY acted since it
# started ("limits" of rblkctl stats --json, docs/admin.md).
limit_count() { ctl "$1" stats --json | jget "d['limits']['$2']"; }
# limit_at_least CONF KEY N: fails unless limit KEY counted at least N.
limit_at_least() {
	local n
	n=$(limit_count "$1" "$2") || fail "rblkctl stats --json failed"
	echo "note: rblkctl stats: $2 = $n"
	[ "$n" -ge "$3" ] || fail "rblkctl stats counts $2 = $n, want >= $3"
}

# ---- bystander (every attack runs next to a verified client) --
# bystander_start VOLUME [PORT]: in the background, rounds of fio crc32c
# verify through the engine on VOLUME (a volume of its own, open to
# 127.0.0.1), each BYSTANDER_SECS (1) s, until bystander_check; returns
# once the first round has logged in (or failed).  ctrl_loss_tmo=0: the
# engine would otherwise hide a dropped connection by reconnecting.
# Without the engine (fio source not found) the attack still runs, with
# a note, rather than the whole test skipping.
. "$RBLK_ROOT/tests/fio-terse.sh"
bystander_start() {
	local vol=$1 port=${2:-$PORT} n0 i
	BYST_DIR=
	if [ ! -f "$FIO_ENGINE" ] || ! { command -v "$FIO_BIN" || [ -x "$FIO_BIN" ]; } >/dev/null 2>&1; then
		log "fio engine not built: no bystander"
		return 0
	fi
	BYST_DIR=$T/bystander-$vol BYST_VOL=$vol
	rm -rf "$BYST_DIR"; mkdir -p "$BYST_DIR"
	n0=$(grep -c "logged in to volume $vol," "$T/target.log" 2>/dev/null)
	(
		n=0
		while [ ! -e "$BYST_DIR/stop" ]; do
			n=$((n + 1)) out=$BYST_DIR/round-$n.out
			timeout $((${BYSTANDER_SECS:-1} + 60)) "$FIO_BIN" --ioengine="$FIO_ENGINE" \
				--target=127.0.0.1 --port="$port" --volume="$vol" --hostname=bystander \
				--ctrl_loss_tmo=0 --verify_state_save=0 --output-format=terse \
				--name=bystander --rw=randwrite --bs=4k --size=8M --iodepth=4 \
				--verify=crc32c --verify_backlog=64 --verify_fatal=1 \
				--time_based --runtime="${BYSTANDER_SECS:-1}" >"$out" 2>&1
			rc=$?
			why=$(fio_ok "$out" 1 1) && [ "$rc" -eq 0 ] && continue
			echo "round $n: fio exit $rc: $why" >"$BYST_DIR/failed"
			break
		done
		echo "$n" >"$BYST_DIR/rounds"
	) &
	BYST_PID=$!
	_cleanup_pids+=("$BYST_PID")
	for ((i = 0; i < 200; i++)); do
		[ "$(grep -c "logged in to volume $vol," "$T/target.log" 2>/dev/null)" -gt "$n0" ] && return 0
		[ -e "$BYST_DIR/rounds" ] && return 0	# failed: bystander_check says why
		sleep 0.05
	done
}

# bystander_check: stops the bystander (its round ends within
# BYSTANDER_SECS) and fails if a round saw an error, a wrong byte or no
# I/O.  With "keep" it only looks at the rounds ended so far and leaves it
# running (many short cases on one target: 30-hostile).
bystander_check() {
	local n
	[ -n "$BYST_DIR" ] || { echo "note: no bystander (fio engine not built)"; return 0; }
	# Polls, not wait: callers may run this in a subshell.
	if [ "${1:-}" != keep ]; then
		touch "$BYST_DIR/stop"
		while kill -0 "$BYST_PID" 2>/dev/null && [ ! -e "$BYST_DIR/rounds" ]; do sleep 0.05; done
	fi
	if [ ! -e "$BYST_DIR/failed" ] && ! kill -0 "$BYST_PID" 2>/dev/null &&
		{ [ ! -e "$BYST_DIR/stop" ] || [ ! -e "$BYST_DIR/rounds" ]; }; then
		echo "round ?: the bystander loop is gone" >"$BYST_DIR/failed"
	fi
	# keep: a failure fails the first case that sees it, the final check
	# again; not every case in between.
	[ "${1:-}" = keep ] && [ -e "$BYST_DIR/failed.told" ] && return 0
	if [ -e "$BYST_DIR/failed" ]; then
		touch "$BYST_DIR/failed.told"
		n=$(grep -o '^round [0-9]*' "$BYST_DIR/failed" | cut -d' ' -f2)
		grep -v '^3;' "$BYST_DIR/round-$n.out" 2>/dev/null | tail -n 20
		fail "bystander on $BYST_VOL: $(cat "$BYST_DIR/failed")"
	fi
	n=$(cat "$BYST_DIR/rounds" 2>/dev/null || find "$BYST_DIR" -name 'round-*' | wc -l)
	echo "note: bystander: $n round(s) of fio verify, no error"
}

# fio_wait_ok NAME MIN_WRITE_KB [MIN_READ_KB]: the background fio
# ($FIO_PID, terse output in $T/NAME.out) exited 0 with no error and did
# that much I/O (MIN_READ_KB defaults to MIN_WRITE_KB: a verify pass).
fio_wait_ok() {
	local rc why
	wait "$FIO_PID"
	rc=$?
	why=$(fio_ok "$T/$1.out" "${3:-$2}" "$2") && [ "$rc" -eq 0 ] && return 0
	grep -v '^3;' "$T/$1.out" | tail -n 20
	echo "fio exit $rc: $why"
	return 1
}
