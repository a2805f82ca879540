#!/bin/bash
# SPDX-License-Identifier: MIT
# Run-time volume changes with sessions attached: delete is refused while a
# session is logged in, --force disconnects it (the session's next I/O
# fails, other volumes' sessions are untouched); I/O beyond the size is
# refused, a resize reaches new logins at once and an attached session at
# the target's next tick; a deleted name can be created again at once.
. "$(dirname "$0")/lib.sh"
require_target
require_rblkctl
LOGIN=$RBLK_BUILD/tests/tools/rblk-login
[ -x "$LOGIN" ] || skip "$LOGIN not built (make unit-tests)"
require_python3

PORT=$(free_port) || skip "no free port"
CONF=$T/t.conf
write_conf "$CONF" uring "$T/vol0.img" 64M
sed -i "/^admin_socket/a volume_dir = $T/vols" "$CONF"
start_target "$CONF"
sessions() { ctl "$CONF" volume show "$1" --json | jget 'd["volume"]["sessions"]'; }
wait_sessions() {	# VOLUME N
	for _ in $(seq 100); do [ "$(sessions "$1")" = "$2" ] && return 0; sleep 0.05; done
	fail "volume $1: sessions $(sessions "$1"), want $2"
}

ctl "$CONF" volume create victim --size 16M --allow-any-host || fail "create"
"$LOGIN" --io 1 --hold 60 127.0.0.1 "$PORT" victim >"$T/victim.out" 2>&1 &
vpid=$!
"$LOGIN" --io 1 --hold 60 127.0.0.1 "$PORT" vol0 >"$T/other.out" 2>&1 &
opid=$!
wait_sessions victim 1
wait_sessions vol0 1
ctl "$CONF" volume show victim | tee "$T/show.out" | grep -q "session .* host " || { cat "$T/show.out"; fail "show lacks the session"; }

log "delete without --force is refused while attached"
if ctl "$CONF" volume delete victim 2>"$T/err"; then fail "deleted an attached volume"; fi
cat "$T/err"
grep -q "1 session(s) attached; use --force" "$T/err" || fail "unclear refusal"
ctl "$CONF" volume show victim >/dev/null || fail "volume gone after a refused delete"

log "delete --force disconnects the session"
ctl "$CONF" volume delete victim --force || fail "delete --force"
ctl "$CONF" volume show victim 2>/dev/null && fail "victim still listed"
grep -q "^\[volume victim\]" "$CONF" && fail "victim still in the config"
wait "$vpid"; vrc=$?
# The other volume's session must still be there; then end its hold.
[ "$(sessions vol0)" = 1 ] || fail "vol0's session is gone"
kill -USR1 "$opid"
wait "$opid"; orc=$?
echo "victim session: $(cat "$T/victim.out") (rc $vrc)"
echo "other session:  $(cat "$T/other.out") (rc $orc)"
[ "$vrc" = 3 ] && grep -q "after-hold=ERR" "$T/victim.out" || fail "the forced-out session could still do I/O"
[ "$orc" = 0 ] && grep -q "after-hold=ok" "$T/other.out" || fail "a session of another volume was disturbed"
grep -q "disconnecting session .*volume deleted" "$T/target.log" || fail "forced disconnect not logged"
"$LOGIN" 127.0.0.1 "$PORT" victim >"$T/late.out" 2>&1 && fail "login to a deleted volume worked"
grep -q "no such volume" "$T/late.out" || fail "unclear: $(cat "$T/late.out")"

log "the name can be reused at once"
ctl "$CONF" volume create victim --size 8M --allow-any-host || fail "re-create"
"$LOGIN" --io 2 127.0.0.1 "$PORT" victim | grep -q "size=$((8 << 20))" || fail "re-created volume"

log "resize with a session attached"
# Offset 12M is beyond the 8M volume: refused before the resize.
"$LOGIN" --io 1 --offset $((12 << 20)) 127.0.0.1 "$PORT" victim >"$T/beyond.out" 2>&1
brc=$?
[ "$brc" = 3 ] && grep -q "io=FAIL" "$T/beyond.out" || fail "I/O beyond the size was not refused (rc $brc): $(cat "$T/beyond.out")"
"$LOGIN" --hold 60 --offset $((12 << 20)) 127.0.0.1 "$PORT" victim >"$T/old.out" 2>&1 &
rpid=$!
wait_sessions victim 1
ctl "$CONF" volume resize victim --size 16M || fail "resize"
out=$("$LOGIN" --io 1 --offset $((12 << 20)) 127.0.0.1 "$PORT" victim) || fail "new login after resize: $out"
grep -q "size=$((16 << 20))" <<<"$out" || fail "new login does not see the new size: $out"
# The attached session is told of the growth at the target's next tick
# (about 1 Hz, conn_ctrl.c); from then on it may use the new blocks.
for _ in $(seq 100); do
	grep -q "volume victim grew to $((16 << 20)) bytes: told the session" "$T/target.log" && break
	sleep 0.05
done
grep -q "volume victim grew to $((16 << 20)) bytes: told the session" "$T/target.log" ||
	fail "the attached session was not told of the growth within 5 s"
kill -USR1 "$rpid"
wait "$rpid"
cat "$T/old.out"
grep -q "size=$((8 << 20))" "$T/old.out" || fail "attached session did not log in with the old size"
grep -q "after-hold=ok" "$T/old.out" || fail "attached session told of the growth cannot use it"
stop_target TERM
[ "$TARGET_RC" = 0 ] || fail "target exit $TARGET_RC"
target_log_clean
echo PASS
