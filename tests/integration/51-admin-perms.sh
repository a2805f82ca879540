#!/bin/bash
# SPDX-License-Identifier: MIT
# The admin socket is root only: mode 0600, and a non-root user can neither
# connect nor change anything; a second target on the same socket is refused.
. "$(dirname "$0")/lib.sh"
require_target
require_rblkctl
[ "$(id -u)" = 0 ] || skip "needs root to switch to an unprivileged user"
if command -v setpriv >/dev/null; then
	as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
elif command -v runuser >/dev/null; then
	as_nobody() { runuser -u nobody -- "$@"; }
else
	skip "neither setpriv nor runuser available"
fi

PORT=$(free_port) || skip "no free port"
CONF=$T/t.conf
write_conf "$CONF" uring "$T/vol0.img" 64M
# nobody must be able to reach the socket's directory, so that what stops
# it is the socket's own mode (not a closed directory).
chmod 0755 "$T"
start_target "$CONF"

mode=$(stat -c %a "$CONF.sock")
[ "$mode" = 600 ] || fail "admin socket mode is $mode, want 600"
[ "$(stat -c %u "$CONF.sock")" = 0 ] || fail "admin socket not owned by root"
ctl "$CONF" volume list >/dev/null || fail "root cannot use the socket"

log "nobody: list and create are refused"
if out=$(as_nobody "$RBLKCTL_BIN" --socket "$CONF.sock" volume list 2>&1); then
	fail "nobody could list volumes: $out"
fi
echo "$out"
grep -qi "permission denied" <<<"$out" || fail "unclear refusal: $out"
if out=$(as_nobody "$RBLKCTL_BIN" --socket "$CONF.sock" volume create evil --size 1M 2>&1); then
	fail "nobody created a volume: $out"
fi
ctl "$CONF" volume show evil >/dev/null 2>&1 && fail "volume evil exists"

log "a second target on the same admin socket is refused"
PORT2=$(free_port) || skip "no free port"
sed -e "s/:$PORT/:$PORT2/" "$CONF" >"$T/t2.conf"
if timeout 10 "$TARGET_BIN" --config "$T/t2.conf" >"$T/t2.log" 2>&1; then
	fail "second target started on a live admin socket"
fi
cat "$T/t2.log"
grep -q "another rblk-target" "$T/t2.log" || fail "no clear message for the busy socket"
ctl "$CONF" volume list >/dev/null || fail "first target's socket was disturbed"

log "an admin_socket path naming a regular file is refused, the file kept"
echo precious >"$T/precious"
sed -e "s/:$PORT/:$PORT2/" -e "s|^admin_socket = .*|admin_socket = $T/precious|" "$CONF" >"$T/t3.conf"
if timeout 10 "$TARGET_BIN" --config "$T/t3.conf" >"$T/t3.log" 2>&1; then fail "target started"; fi
grep -q "exists and is not a socket" "$T/t3.log" || fail "unclear: $(cat "$T/t3.log")"
[ "$(cat "$T/precious")" = precious ] || fail "the file was replaced"

log "a stale socket (target killed) is replaced at the next start"
stop_target KILL
[ -S "$CONF.sock" ] || fail "expected a stale socket after SIGKILL"
start_target "$CONF"
ctl "$CONF" volume list >/dev/null || fail "socket not usable after restart over a stale one"
stop_target TERM
target_log_clean
echo PASS
