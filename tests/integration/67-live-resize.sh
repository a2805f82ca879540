#!/bin/bash
# SPDX-License-Identifier: MIT
# rblkctl volume resize reaches a logged-in client without a new LOGIN:
# the target tells each live session of the volume its new size (an
# unsolicited KEEPALIVE_RSP at its next tick, or the answer to the next
# KEEPALIVE), and from then on takes that session's commands up to it.
#  - a client logged in at 16 MiB writes and verifies 16-24 MiB after
#    the volume grows to 32 MiB, on the same connection;
#  - a client of another volume is not told anything.
. "$(dirname "$0")/lib.sh"
require_target
require_rblkctl
GOOD=$RBLK_BUILD/tests/tools/rblk-goodclient
[ -x "$GOOD" ] || skip "$GOOD not built"

start_conf 16M <<CONF
[volume other]
path = $T/other.img
size = 8M
backend = uring
allow_any_host = yes
CONF
c() { ctl "$CONF" "$@"; }

log "a client waits for 32 MiB while the volume is resized under it"
"$GOOD" --wait-size $((32 << 20)) --seconds 2 --region $((16 << 20)):$((8 << 20)) \
	127.0.0.1 "$PORT" vol0 >"$T/grow.log" 2>&1 &
grow=$!
"$GOOD" --wait-size $((16 << 20)) --seconds 2 --region 0:$((4 << 20)) \
	127.0.0.1 "$PORT" other >"$T/other.log" 2>&1 &
other=$!
sleep 1
c volume resize vol0 --size 32M || fail "resize"
wait "$grow" || { cat "$T/grow.log"; fail "the client did not use the grown volume"; }
cat "$T/grow.log"
grep -q "the volume is $((32 << 20)) bytes after .* (LOGIN said $((16 << 20)))" "$T/grow.log" ||
	fail "the client was not told the new size on its connection"
grep -q "goodclient: PASS" "$T/grow.log" || fail "I/O beyond the old size failed"
# The other volume's client asked for more than its size: it must not
# have been told a size that is not its volume's.
if wait "$other"; then cat "$T/other.log"; fail "the other volume's client was told it grew"; fi
grep -q "the volume is $((8 << 20)) bytes" "$T/other.log" ||
	{ cat "$T/other.log"; fail "the other volume's client saw a size that is not its own"; }
grep -q "volume vol0 grew to $((32 << 20)) bytes: told the session" "$T/target.log" ||
	fail "the target did not log telling the session"
target_log_clean
echo PASS
