#!/bin/bash
# SPDX-License-Identifier: MIT
# SIGTERM with I/O in flight: clients hammer the target (deep queues of
# 64 KiB reads and writes) when it gets SIGTERM.  It must exit within 5 s
# with status 0, log how many requests it drained and failed, and every
# answer the clients got must be OK or SHUTTING_DOWN (never wrong data).
# Then data written before a clean stop must be there after a restart.
. "$(dirname "$0")/lib.sh"
require_target
GOOD=$RBLK_BUILD/tests/tools/rblk-goodclient
[ -x "$GOOD" ] || skip "$GOOD not built"

nfail=0
case_result() {	# NAME OK(0/1) [detail]
	if [ "$2" -eq 0 ]; then
		echo "RBLK-CASE: PASS $1 ${3:-}"
	else
		echo "RBLK-CASE: FAIL $1 ${3:-}"
		nfail=$((nfail + 1))
	fi
}

for backend in uring aio; do
	PORT=$(free_port) || fail "no free port"
	: >"$T/target.log"
	write_conf "$T/$backend.conf" "$backend" "$T/$backend.img" 64M
	start_target "$T/$backend.conf"
	pids=()
	for i in 0 1 2; do
		"$GOOD" --hammer --depth 32 --region $((i * 16 << 20)):16777216 \
			127.0.0.1 "$PORT" vol0 >"$T/hammer-$backend-$i.out" 2>&1 &
		pids+=($!)
		_cleanup_pids+=($!)
	done
	sleep 1.5
	t0=$(date +%s%N)
	stop_target TERM		# fails the test if not gone within 5 s
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	case_result "sigterm-$backend-exit-0" "$([ "$TARGET_RC" -eq 0 ]; echo $?)" \
		"(rc $TARGET_RC after ${ms} ms)"
	line=$(grep 'shutdown: .* drained, .* failed with SHUTTING_DOWN' "$T/target.log")
	case_result "sigterm-$backend-logs-drain" "$([ -n "$line" ]; echo $?)" \
		"${line#*INFO  }"
	bad=0
	for i in 0 1 2; do
		if ! timeout 20 tail --pid="${pids[$i]}" -f /dev/null; then
			bad=1
			continue
		fi
		wait "${pids[$i]}" || bad=1
		sed 's/^/    /' "$T/hammer-$backend-$i.out"
	done
	case_result "sigterm-$backend-clients-saw-ok-or-shutting-down" "$bad"
done

# Data survives a clean stop and restart (the target flushes on the way
# out; the data lives in the file).
PORT=$(free_port) || fail "no free port"
write_conf "$T/r.conf" uring "$T/r.img" 32M
start_target "$T/r.conf"
timeout 60 "$GOOD" --seconds 1 --pass 77 --region 0:16777216 127.0.0.1 "$PORT" vol0 >"$T/w.out" 2>&1
rc=$?
stop_target TERM
start_target "$T/r.conf"
timeout 60 "$GOOD" --check-only --pass 77 --region 0:16777216 127.0.0.1 "$PORT" vol0 >"$T/c.out" 2>&1
rc2=$?
cat "$T/w.out" "$T/c.out"
case_result data-survives-restart "$([ $rc -eq 0 ] && [ $rc2 -eq 0 ]; echo $?)"
# SIGHUP (a closed terminal, systemctl reload) must not kill the daemon
# undrained: it reloads the config (docs/admin.md, "Editing the config").
kill -HUP "$TARGET_PID"
sleep 0.5
case_result sighup-reloads "$(kill -0 "$TARGET_PID" 2>/dev/null && grep -q 'reloaded: no change' "$T/target.log"; echo $?)"
stop_target TERM
case_result second-stop-exit-0 "$([ "$TARGET_RC" -eq 0 ]; echo $?)"
[ "$nfail" -eq 0 ]
