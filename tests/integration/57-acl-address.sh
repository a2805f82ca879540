#!/bin/bash
# SPDX-License-Identifier: MIT
# allow_hosts identity and closed-by-default:
# an address entry matches only the connection's real peer address (a
# client claiming a listed address as its host name is refused), CIDR
# ranges match by real address, a volume without allow_hosts or
# allow_any_host admits no one, denying the last host leaves the volume
# closed (also after a restart), and allow/deny --any open and close it.
# Loopback is 127.0.0.0/8: the probe binds 127.0.0.x to choose its peer
# address.  A bystander does fio verify on volume byst meanwhile and is
# checked after each attack.
. "$(dirname "$0")/lib.sh"
require_target
require_rblkctl
require_login

start_conf 16M <<CONF

[volume addr]
path = $T/addr.img
size = 4M
allow_hosts = 127.0.0.3

[volume net]
path = $T/net.img
size = 4M
allow_hosts = 127.0.5.0/24

[volume named]
path = $T/named.img
size = 4M
allow_hosts = hostA

[volume closed]
path = $T/closed.img
size = 4M

[volume byst]
path = $T/byst.img
size = 16M
allow_hosts = 127.0.0.1
CONF
bystander_start byst

# login FROM HOST VOLUME: the probe connects from 127.0.0.FROM-address.
login() {
	local from=$1 host=$2 vol=$3
	OUT=$("$LOGIN" --bind "$from" --host "$host" 127.0.0.1 "$PORT" "$vol" 2>&1); RC=$?
	echo "login from $from as '$host' -> $vol: $OUT"
}
ok()      { login "$@"; [ "$RC" = 0 ] || fail "expected success: $OUT"; }
refused() { login "$@"; [ "$RC" = 1 ] && grep -q "access denied" <<<"$OUT" || fail "expected access denied: $OUT"; }

log "closed volumes are named by --check-config and at start"
out=$("$TARGET_BIN" --config "$CONF" --check-config) || fail "check-config: $out"
echo "$out"
grep -q "note: volume closed admits no host" <<<"$out" || fail "check-config does not name the closed volume"
grep -q "note: volume addr" <<<"$out" && fail "check-config names a volume with a list"
grep -q "volume closed: no allow_hosts and no allow_any_host = yes: no host may log in" "$T/target.log" ||
	fail "start did not warn about the closed volume"
grep -q "volume addr: no allow_hosts" "$T/target.log" && fail "warned about a volume with a list"

log "an address entry matches the real peer, never the claimed name"
refused 127.0.0.2 127.0.0.3 addr
grep -q "login refused: volume 'addr' host '127.0.0.3' peer 127.0.0.2:[0-9]*: access denied" "$T/target.log" ||
	fail "spoofed login not logged with its real peer"
ok 127.0.0.3 whatever addr
ok 127.0.0.3 127.0.0.3 addr
bystander_check
bystander_start byst

log "CIDR range by real address"
ok 127.0.5.9 x net
ok 127.0.5.254 x net
refused 127.0.6.1 x net
refused 127.0.6.1 127.0.5.9 net

log "a name entry matches the claimed name (a claim, from anywhere)"
ok 127.0.0.2 hostA named
refused 127.0.0.2 hostB named

log "no allow_hosts, no allow_any_host: closed"
refused 127.0.0.1 anyone closed
ctl "$CONF" volume show closed | grep -q "allow: *no host" || fail "show does not say the volume is closed"

log "rblkctl allow by address / range, refusals change nothing"
ctl "$CONF" volume allow named 127.0.7.0/24 || fail "allow a range"
ok 127.0.7.7 x named
for bad in 'bad/host' '10.0.0.0/33' '*' '10.0.0.010' ''; do
	if ctl "$CONF" volume allow named "$bad" 2>"$T/err"; then fail "allowed '$bad'"; fi
	cat "$T/err"
done
grep -q "^allow_hosts = hostA, 127.0.7.0/24$" "$CONF" || fail "list changed by refused requests: $(grep allow "$CONF")"

log "deny of the last host leaves the volume closed"
ctl "$CONF" volume deny named 127.0.7.0/24 || fail "deny range"
ctl "$CONF" volume deny named hostA 2>"$T/err" || fail "deny last host"
grep -q "allow list is now empty: no host may log in" "$T/err" || fail "no warning: $(cat "$T/err")"
refused 127.0.0.2 hostA named
refused 127.0.7.7 x named
sed -n '/^\[volume named\]/,/^$/p' "$CONF" | grep -q "^allow" && fail "named still has an allow key: $(cat "$CONF")"
bystander_check
bystander_start byst

log "allow --any opens, deny --any closes; a list and --any exclude each other"
ctl "$CONF" volume allow closed --any || fail "allow --any"
ok 127.0.0.9 anyone closed
sed -n '/^\[volume closed\]/,/^$/p' "$CONF" | grep -q "^allow_any_host = yes$" || fail "allow_any_host not persisted"
if ctl "$CONF" volume allow closed hostA 2>"$T/err"; then fail "allowed a host on an open volume"; fi
grep -q "open to any host" "$T/err" || fail "unclear: $(cat "$T/err")"
if ctl "$CONF" volume allow addr --any 2>"$T/err"; then fail "opened a volume that has a list"; fi
grep -q "has an allow list" "$T/err" || fail "unclear: $(cat "$T/err")"
refused 127.0.0.2 x addr
ctl "$CONF" volume deny closed --any || fail "deny --any"
refused 127.0.0.9 anyone closed
# A second deny --any: nothing to change, not an error.
out=$(ctl "$CONF" volume deny closed --any) || fail "a repeated deny --any failed"
grep -q "not allowed (nothing changed)" <<<"$out" || fail "repeated deny --any: $out"

log "volume create: closed unless --allow-any-host"
ctl "$CONF" volume create fresh --size 1M --path "$T/fresh.img" 2>"$T/err" || fail "create"
grep -q "no host may log in yet" "$T/err" || fail "create did not warn: $(cat "$T/err")"
refused 127.0.0.1 anyone fresh
ctl "$CONF" volume create fresh2 --size 1M --path "$T/fresh2.img" --allow-any-host || fail "create --allow-any-host"
ok 127.0.0.1 anyone fresh2

log "restart keeps it all"
bystander_check
stop_target TERM
start_target "$CONF"
bystander_start byst
refused 127.0.0.2 hostA named
refused 127.0.0.1 anyone closed
refused 127.0.0.1 anyone fresh
ok 127.0.0.1 anyone fresh2
refused 127.0.0.2 127.0.0.3 addr
ok 127.0.0.3 x addr
ok 127.0.5.1 x net
bystander_check

log "allow_hosts with allow_any_host does not start"
stop_target TERM
printf '\n[volume both]\npath = %s/both.img\nsize = 1M\nallow_hosts = h\nallow_any_host = yes\n' "$T" >>"$CONF"
if timeout 20 "$TARGET_BIN" --config "$CONF" --check-config >"$T/bad.log" 2>&1; then fail "accepted both keys"; fi
grep -q "volume 'both': allow_any_host = yes and allow_hosts exclude each other" "$T/bad.log" || fail "unclear: $(cat "$T/bad.log")"
target_log_clean
echo PASS
