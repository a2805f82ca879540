#!/bin/bash
# SPDX-License-Identifier: MIT
# At its descriptor limit the target must not spin on accept
# (380,000 "accept: Too many open files" lines a second, a core at
# 100 %).  Started with `ulimit -n 64`, it gets more connections than it
# has fds; for 3 s its log must stay small and its CPU time low (the
# listener is paused with backoff, the repeats are rate-limited).  Once the
# hogs are gone, a new client must log in and do I/O again.  A bystander
# logged in before does fio verify on volume byst throughout.
. "$(dirname "$0")/lib.sh"
require_target
LOGIN=$RBLK_BUILD/tests/tools/rblk-login
[ -x "$LOGIN" ] || skip "$LOGIN not built (make unit-tests)"
[ -r /proc/self/stat ] || skip "no /proc/PID/stat to read CPU time from"

HOGS=${HOGS:-100}	# > the target's 64 fds, < its listen backlog (128)
HOLD=3
MAX_ACCEPT_LINES=50
MAX_LOG_BYTES=$((100 * 1024))
TICKS=$(getconf CLK_TCK)

PORT=$(free_port) || skip "no free port"
CONF=$T/t.conf
write_conf "$CONF" uring "$T/vol.img" 16M
printf '\n[volume byst]\npath = %s/byst.img\nsize = 16M\nallow_any_host = yes\n' "$T" >>"$CONF"
(ulimit -n 64 && exec "$TARGET_BIN" --config "$CONF") >>"$T/target.log" 2>&1 &
TARGET_PID=$!
_cleanup_pids+=("$TARGET_PID")
wait_port "$PORT" 10 || { cat "$T/target.log"; fail "target did not listen on $PORT"; }
"$LOGIN" --host before 127.0.0.1 "$PORT" vol0 --io 2 || fail "login before the hogs"
# One round across the whole attack: a new round could not connect at
# the fd limit.
BYSTANDER_SECS=8 bystander_start byst

# utime + stime of the whole process (all threads), in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$TARGET_PID/stat"; }
accept_lines() { grep -c "accept" "$T/target.log"; }

log "opening $HOGS idle connections against a 64-fd target"
hogs=()
for ((i = 0; i < HOGS; i++)); do
	exec {fd}<>"/dev/tcp/127.0.0.1/$PORT" || fail "connect $i"
	hogs+=("$fd")
done
for ((i = 0; i < 50; i++)); do
	grep -q "Too many open files" "$T/target.log" && break
	sleep 0.1
done
grep -q "Too many open files" "$T/target.log" ||
	{ tail -n 20 "$T/target.log"; fail "accept never hit the fd limit (is the limit effective?)"; }

lines0=$(accept_lines); bytes0=$(stat -c %s "$T/target.log"); cpu0=$(cpu_ticks)
sleep "$HOLD"
lines1=$(accept_lines); bytes1=$(stat -c %s "$T/target.log"); cpu1=$(cpu_ticks)
lines=$((lines1 - lines0)); bytes=$((bytes1 - bytes0)); cpu=$((cpu1 - cpu0))
cpu_ms=$((cpu * 1000 / TICKS))
echo "over ${HOLD} s at the fd limit: $lines accept lines, $bytes log bytes, ${cpu_ms} ms CPU"
echo "total log: $(stat -c %s "$T/target.log") bytes, $(accept_lines) accept lines"
grep "accept" "$T/target.log" | tail -n 5
[ "$lines" -lt "$MAX_ACCEPT_LINES" ] || fail "accept errors flood the log: $lines lines in ${HOLD} s"
[ "$(stat -c %s "$T/target.log")" -lt "$MAX_LOG_BYTES" ] || fail "log grew to $(stat -c %s "$T/target.log") bytes"
[ "$cpu_ms" -lt 1000 ] || fail "target burned ${cpu_ms} ms CPU in ${HOLD} s at the fd limit (spinning)"
kill -0 "$TARGET_PID" 2>/dev/null || fail "target died at the fd limit"

log "closing the hogs; a new client must get in"
for fd in "${hogs[@]}"; do exec {fd}>&-; done
ok=
for ((i = 0; i < 20; i++)); do
	if out=$(timeout 10 "$LOGIN" --host after 127.0.0.1 "$PORT" vol0 --io 4 2>&1); then
		ok=1; break
	fi
	echo "attempt $i: $out"
	sleep 0.25
done
[ -n "$ok" ] || { tail -n 20 "$T/target.log"; fail "no login after the hogs closed: $out"; }
echo "after: $out"
bystander_check

stop_target TERM
[ "$TARGET_RC" = 0 ] || fail "target exited $TARGET_RC after SIGTERM"
target_log_clean
echo "PASS"
