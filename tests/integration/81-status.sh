#!/bin/bash
# SPDX-License-Identifier: MIT
# rblkctl status: the running target's version (the binary's own), pid,
# uptime (which grows), config path, listeners, volume/session counts and
# memory (RSS as /proc says, heap in use below it),
# as text and as JSON; one clear error line and exit 1 with no target.
. "$(dirname "$0")/lib.sh"
require_target
require_rblkctl
require_python3

start_admin_target
c() { ctl "$CONF" "$@"; }

j=$(c status --json) || fail "status --json failed"
echo "$j"
ver=$("$TARGET_BIN" --version | awk '{print $2}')
[ "$(jget "d['version'].split()[0]" <<<"$j")" = "$ver" ] || fail "status version is not the binary's ($ver)"
[ "$(jget "d['pid']" <<<"$j")" = "$TARGET_PID" ] || fail "status pid is not $TARGET_PID"
[ "$(jget "d['config']" <<<"$j")" = "$CONF" ] || fail "status config is not $CONF"
[ "$(jget "d['listen_tcp'][0]" <<<"$j")" = "127.0.0.1:$PORT" ] || fail "status listen_tcp is not 127.0.0.1:$PORT"
[ "$(jget "d['volumes']" <<<"$j")" = 1 ] || fail "status counts $(jget "d['volumes']" <<<"$j") volumes, want 1"
[ "$(jget "d['sessions']" <<<"$j")" = 0 ] || fail "status counts sessions with none logged in"
rss=$(awk '/VmRSS/ {print $2}' "/proc/$TARGET_PID/status")
got=$(jget "d['rss_kib']" <<<"$j")
# The RSS the target read of itself, against /proc read just after.
[ "$got" -gt $((rss / 2)) ] && [ "$got" -lt $((rss * 2)) ] || fail "status rss_kib $got, /proc says $rss KiB"
heap=$(jget "d['heap_in_use_bytes']" <<<"$j")
[ "$heap" -gt 0 ] && [ "$heap" -lt $((rss * 1024)) ] || fail "status heap_in_use_bytes $heap with RSS $rss KiB"
up1=$(jget "d['uptime_s']" <<<"$j")
sleep 2.1
up2=$(c status --json | jget "d['uptime_s']")
[ "$up2" -ge $((up1 + 2)) ] || fail "uptime went from $up1 to $up2 s in 2 s"

c volume create v2 --size 1M --allow-any-host >/dev/null || fail "volume create v2"
out=$(c status) || fail "status failed"
echo "$out"
grep -q "^rblk-target $ver" <<<"$out" || fail "no version line"
grep -Eq "^volumes: +2$" <<<"$out" || fail "text status does not count 2 volumes"
grep -q "127.0.0.1:$PORT" <<<"$out" || fail "text status does not show the listener"
grep -Eq "^uptime: +[0-9]{2}:[0-9]{2}:[0-9]{2}$" <<<"$out" || fail "no uptime line"
grep -Eq "^memory: +[0-9.]+ MiB resident, [0-9.]+ MiB heap in use$" <<<"$out" || fail "no memory line"

c status --help | grep -q "usage: rblkctl status" || fail "no status --help"
c status extra 2>/dev/null; [ $? = 2 ] || fail "an extra argument is not a usage error"

stop_target TERM
err=$(c status 2>&1) && fail "status with no target succeeded"
rc=$(c status >/dev/null 2>&1; echo $?)
[ "$rc" = 1 ] || fail "status with no target: exit $rc, want 1"
[ "$(wc -l <<<"$err")" = 1 ] || fail "not one error line: $err"
log "no target: $err"
exit 0
