#!/bin/bash
# SPDX-License-Identifier: MIT
# Mutual authentication, over TCP:
# - the real target proves it knows the secret (its MAC_T verifies);
# - an answer to a challenge that changes the volume (to an open one), the
#   host or the depth, or lacks the initiator's nonce, is AUTH_FAILED and
#   the connection is closed;
# - the initiator (client library, via rblk-login) refuses a target whose
#   proof is wrong or missing, or that skips the challenge although the
#   client holds a secret (a fake target, tests/tools/rblk-faketarget).
# A bystander does fio verify on volume byst of the real target meanwhile
# and is checked after each attack.
. "$(dirname "$0")/lib.sh"
require_target
PROBE=$RBLK_BUILD/tests/tools/rblk-authprobe
FAKE=$RBLK_BUILD/tests/tools/rblk-faketarget
LOGIN=$RBLK_BUILD/tests/tools/rblk-login
for t in "$PROBE" "$FAKE" "$LOGIN"; do [ -x "$t" ] || skip "$t not built (make unit-tests)"; done

head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$T/good.key"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$T/other.key"
chmod 600 "$T/good.key" "$T/other.key"
start_conf 16M <<CONF

[volume sec]
path = $T/sec.img
size = 16M
secret_file = $T/good.key
allow_any_host = yes

[volume byst]
path = $T/byst.img
size = 16M
allow_any_host = yes
CONF
bystander_start byst

log "the real target proves itself"
"$PROBE" 127.0.0.1 "$PORT" target-proof sec vol0 "$T/good.key" || fail "target proof"
out=$("$LOGIN" --secret "$T/good.key" --io 2 127.0.0.1 "$PORT" sec) || fail "honest login: $out"

log "a second LOGIN must repeat the challenged one but for the proof"
for c in switch-volume switch-host switch-depth no-ini-nonce; do
	"$PROBE" 127.0.0.1 "$PORT" "$c" sec vol0 "$T/good.key" || fail "case $c"
done
grep -q "login refused: volume 'vol0' host 'probe' peer .*: authentication failed (second LOGIN differs from the challenged one" "$T/target.log" ||
	fail "switch-volume refusal not logged"
grep -q "authentication failed (no initiator nonce" "$T/target.log" || fail "no-ini-nonce refusal not logged"
# The target is fine afterwards.
"$LOGIN" --io 1 127.0.0.1 "$PORT" vol0 >/dev/null || fail "target stopped serving"
bystander_check
bystander_start byst

log "the initiator refuses a target that cannot prove the secret"
FPORT=$(free_port) || skip "no free port"
fake() {	# MODE: starts the fake on FPORT
	"$FAKE" "$FPORT" "$1" "$T/good.key" >"$T/fake-$1.log" 2>&1 &
	FAKE_PID=$!
	_cleanup_pids+=("$FAKE_PID")
	wait_port "$FPORT" 10 || fail "fake target ($1) did not listen"
}
unfake() { kill "$FAKE_PID"; wait "$FAKE_PID" 2>/dev/null; }
fake good
out=$("$LOGIN" --secret "$T/good.key" 127.0.0.1 "$FPORT" sec) || fail "fake 'good' refused: $out"
echo "good: $out"
out=$("$LOGIN" --secret "$T/other.key" 127.0.0.1 "$FPORT" sec); rc=$?
echo "other secret: $out"
[ "$rc" = 1 ] && grep -q "authentication failed" <<<"$out" || fail "wrong client secret not refused by the fake"
unfake
expect_refused() {	# MODE PATTERN
	fake "$1"
	out=$("$LOGIN" --secret "$T/good.key" 127.0.0.1 "$FPORT" sec); rc=$?
	echo "$1: $out"
	[ "$rc" = 1 ] || fail "$1: initiator used the session (rc $rc): $out"
	grep -q -- "$2" <<<"$out" || fail "$1: unclear error: $out"
	grep -q "answered OK" "$T/fake-$1.log" || fail "$1: the fake never got as far as OK"
	unfake
}
expect_refused bad-proof "target's proof for volume 'sec' is wrong"
expect_refused no-proof "target's proof for volume 'sec' is wrong"
expect_refused no-challenge "without authenticating itself"
bystander_check
target_log_clean
echo PASS
