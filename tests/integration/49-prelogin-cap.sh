#!/bin/bash
# SPDX-License-Identifier: MIT
# Connections that never LOGIN are capped per source address and in total:
# with max_prelogin_per_host = 8 and max_prelogin = 12,
# idle openings from 127.0.0.1 beyond 8, and from 127.0.0.3 beyond the
# total of 12, are closed at once and logged (rate-limited); a real client
# from a full source is refused too.  Once the idle ones close, new
# connections get in.  Idle openings still held are closed by
# login_timeout.  Meanwhile a logged-in fio job verifies data on another
# volume and must see no error.
. "$(dirname "$0")/lib.sh"
require_target
require_fio_engine
require_login
require_python3
require_rblkctl

PER_HOST=8 TOTAL=12 LOGIN_TMO=12

PORT=$(free_port) || skip "no free port"
CONF=$T/t.conf
write_conf "$CONF" uring "$T/vol0.img" 16M
sed -i "/^reactors/a max_prelogin = $TOTAL\nmax_prelogin_per_host = $PER_HOST\nlogin_timeout = $LOGIN_TMO" "$CONF"
cat >>"$CONF" <<CONF

[volume vol1]
path = $T/vol1.img
size = 64M
allow_any_host = yes
CONF
start_target "$CONF"

# hogs SRC N SECS: opens N TCP connections from SRC that never send a
# byte; prints "held H refused R" once it knows which the target closed at
# once, then "timed-out K" (held ones the target closed before SECS) and
# exits, closing the rest.
cat >"$T/hogs.py" <<'PY'
import select, socket, sys, time
src, port, n, secs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
socks = []
for _ in range(n):
    s = socket.socket()
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    socks.append(s)
def closed(s, tmo):
    r, _, _ = select.select([s], [], [], tmo)
    if not r:
        return False
    try:
        return s.recv(1) == b""
    except OSError:
        return True
time.sleep(1.0)
refused = [s for s in socks if closed(s, 0.2)]
held = [s for s in socks if s not in refused]
print("held %d refused %d" % (len(held), len(refused)), flush=True)
t0 = time.time()
gone = 0
while time.time() - t0 < secs and gone < len(held):
    r, _, _ = select.select([s for s in held if s.fileno() >= 0], [], [], 0.5)
    for s in r:
        if closed(s, 0):
            s.close()
            gone += 1
print("timed-out %d after %.1f s" % (gone, time.time() - t0), flush=True)
PY

# The probes' writes stay out of the bystander's 8 MiB: a probe that
# wrote over its block 0 made its verify fail now and then.
PROBE_OFF=$((32 << 20))
log "bystander: fio randwrite + verify on vol1"
# One round across the attack: at the caps a new round could not connect.
BYSTANDER_SECS=25 bystander_start vol1
# The engine logs in twice (setup: the volume's size; then the job's I/O):
# the attack must not start between the two, or the caps refuse the
# bystander's real connection.
for ((i = 0; i < 400; i++)); do
	[ "$(grep -c 'logged in to volume vol1,' "$T/target.log")" -ge 2 ] && break
	[ -z "$BYST_DIR" ] || [ -e "$BYST_DIR/rounds" ] && break
	sleep 0.05
done

# wait_line FILE REGEX SECS
wait_line() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

log "10 idle connections from 127.0.0.1 (cap $PER_HOST per host)"
python3 "$T/hogs.py" 127.0.0.1 "$PORT" 10 60 >"$T/hogs1.out" 2>&1 &
H1=$!
wait_line "$T/hogs1.out" "^held" 20 || { cat "$T/hogs1.out"; fail "hogs 1 did not report"; }
cat "$T/hogs1.out"
grep -q "^held $PER_HOST refused 2$" "$T/hogs1.out" || fail "127.0.0.1: want $PER_HOST held, 2 refused"

log "6 idle connections from 127.0.0.3 (total cap $TOTAL)"
python3 "$T/hogs.py" 127.0.0.3 "$PORT" 6 60 >"$T/hogs3.out" 2>&1 &
H3=$!
wait_line "$T/hogs3.out" "^held" 20 || { cat "$T/hogs3.out"; fail "hogs 3 did not report"; }
cat "$T/hogs3.out"
grep -q "^held $((TOTAL - PER_HOST)) refused 2$" "$T/hogs3.out" ||
	fail "127.0.0.3: want $((TOTAL - PER_HOST)) held, 2 refused"

grep "refusing a connection" "$T/target.log" | tail -n 4
grep -q "refusing a connection from 127.0.0.1: $PER_HOST of its connections have not logged in yet (max_prelogin_per_host = $PER_HOST)" "$T/target.log" ||
	fail "no per-host refusal logged"
grep -q "refusing a connection from 127.0.0.3: $TOTAL connections have not logged in yet (max_prelogin = $TOTAL)" "$T/target.log" ||
	fail "no total refusal logged"

# The refusals are counted: 2 from 127.0.0.1 (its own cap), 2 from
# 127.0.0.3 (the total).
limit_at_least "$CONF" refused_max_prelogin_per_host 2
limit_at_least "$CONF" refused_max_prelogin 2

log "a real client from a source at its cap is refused"
if out=$(timeout 10 "$LOGIN" --bind 127.0.0.2 --host full 127.0.0.1 "$PORT" vol1 2>&1); then
	fail "a login got in while the total cap was reached: $out"
fi
echo "while full: $out"

log "closing the idle connections from 127.0.0.1; new ones get in"
kill "$H1" 2>/dev/null; wait "$H1" 2>/dev/null
ok=
for ((i = 0; i < 40; i++)); do
	if out=$(timeout 10 "$LOGIN" --host after --offset "$PROBE_OFF" 127.0.0.1 "$PORT" vol1 --io 2 2>&1); then
		ok=1; break
	fi
	sleep 0.25
done
[ -n "$ok" ] || { tail -n 20 "$T/target.log"; fail "no login after the idle connections closed: $out"; }
echo "after: $out"

log "the idle connections still held are closed by login_timeout ($LOGIN_TMO s)"
wait_line "$T/hogs3.out" "^timed-out" 60 || { cat "$T/hogs3.out"; fail "hogs 3 did not finish"; }
cat "$T/hogs3.out"
grep -q "^timed-out $((TOTAL - PER_HOST)) " "$T/hogs3.out" ||
	fail "the target did not close the idle connections within 60 s"
grep -q "no LOGIN within $LOGIN_TMO s" "$T/target.log" || fail "no login timeout logged"
limit_at_least "$CONF" closed_login_timeout $((TOTAL - PER_HOST))
ctl "$CONF" stats | sed -n '/^limits/,$p'
ctl "$CONF" stats | grep -q '^  closed_login_timeout  *[1-9]' || fail "rblkctl stats prints no limits"
wait "$H3" 2>/dev/null
out=$(timeout 10 "$LOGIN" --bind 127.0.0.3 --host after3 --offset "$PROBE_OFF" 127.0.0.1 "$PORT" vol1 --io 2 2>&1) ||
	fail "127.0.0.3 cannot log in after its idle connections went: $out"

log "bystander"
bystander_check
lines=$(grep -c "refusing a connection" "$T/target.log")
echo "refusal lines logged: $lines"

stop_target TERM
[ "$TARGET_RC" = 0 ] || fail "target exited $TARGET_RC after SIGTERM"
target_log_clean
echo "PASS"
