#!/bin/bash
# SPDX-License-Identifier: MIT
# Access control at LOGIN: allow_hosts (by LOGIN host name or peer address),
# per-volume secrets with the HMAC challenge (right, wrong, missing secret),
# changes through rblkctl allow/deny/secret, refusals logged on the target
# and reported clearly to the client, DISCOVER showing only allowed volumes
# and a volume with a secret only to a client that proved the secret.
# A bystander does fio verify on volume byst meanwhile and is checked
# after the attacks.
. "$(dirname "$0")/lib.sh"
require_target
require_rblkctl
require_login

head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$T/good.key"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$T/bad.key"
cp "$T/good.key" "$T/loose.key"
chmod 600 "$T/good.key" "$T/bad.key"
chmod 644 "$T/loose.key"
start_conf 64M <<CONF

[volume acl]
path = $T/acl.img
size = 16M
allow_hosts = hostA, 10.99.99.99

[volume sec]
path = $T/sec.img
size = 16M
secret_file = $T/good.key
allow_any_host = yes

[volume byst]
path = $T/byst.img
size = 16M
allow_hosts = 127.0.0.1
CONF
bystander_start byst

# login HOST VOLUME [args]: prints the probe's line; sets RC.
login() {
	local host=$1 vol=$2; shift 2
	OUT=$("$LOGIN" --host "$host" "$@" 127.0.0.1 "$PORT" "$vol" 2>&1); RC=$?
	echo "login $host -> $vol $*: $OUT"
}
ok()     { login "$@"; [ "$RC" = 0 ] || fail "expected success: $OUT"; }
refused() {
	local pat=$1; shift
	login "$@"
	[ "$RC" = 1 ] || fail "expected a refused login: $OUT"
	grep -qi -- "$pat" <<<"$OUT" || fail "refusal does not say '$pat': $OUT"
}

log "allow_hosts from the config"
ok anyhost vol0 --io 2
ok hostA acl --io 2
refused "access denied" hostB acl
grep -q "login refused: volume 'acl' host 'hostB' peer 127.0.0.1:[0-9]*: access denied (neither host name nor peer address in allow_hosts)" "$T/target.log" ||
	fail "target did not log the refusal with volume, host, peer and reason"

log "rblkctl allow / deny"
ctl "$CONF" volume allow acl hostB || fail "allow"
ok hostB acl
ctl "$CONF" volume deny acl hostA || fail "deny"
refused "access denied" hostA acl
ctl "$CONF" volume allow acl 127.0.0.1 || fail "allow by address"
ok whoever acl
ctl "$CONF" volume deny acl 127.0.0.1 || fail "deny address"
refused "access denied" whoever acl
# A second allow or deny: exit 0 both ways, nothing changed, and said so.
cp "$CONF" "$T/before.conf"
out=$(ctl "$CONF" volume deny acl hostA) || fail "a repeated deny failed"
grep -q "hostA was not allowed (nothing changed)" <<<"$out" || fail "repeated deny: $out"
out=$(ctl "$CONF" volume allow acl hostB) || fail "a repeated allow failed"
grep -q "hostB was already allowed (nothing changed)" <<<"$out" || fail "repeated allow: $out"
ctl "$CONF" --json volume deny acl hostA | grep -q '"changed": false' || fail "repeated deny --json: no changed:false"
cmp -s "$CONF" "$T/before.conf" || fail "a repeated allow/deny rewrote the config"
if ctl "$CONF" volume allow acl 'bad/host' 2>/dev/null; then fail "allowed an invalid host name"; fi
grep -q "^allow_hosts = 10.99.99.99, hostB$" "$CONF" || fail "ACL change not persisted: $(grep allow "$CONF")"

log "discover lists only what the host may use"
d=$("$RBLKCTL_BIN" discover --target "127.0.0.1:$PORT" --hostname hostB) || fail "discover hostB"
echo "$d"
grep -q "^acl " <<<"$d" && grep -q "^vol0 " <<<"$d" || fail "hostB should see acl and vol0"
# sec has a secret: without a proof it is not shown at all (name, size, flags).
grep -q "sec" <<<"$d" && fail "discover lists the secret volume to an unauthenticated client: $d"
d=$("$RBLKCTL_BIN" discover --target "127.0.0.1:$PORT" --hostname hostB --json) || fail "discover --json"
grep -q '"sec"' <<<"$d" && fail "discover --json lists the secret volume: $d"
log "discover after proving the secret lists it"
d=$("$RBLKCTL_BIN" discover --target "127.0.0.1:$PORT" --hostname hostB --volume sec --secret-file "$T/good.key") ||
	fail "discover with the secret"
echo "$d"
grep -q "^sec  *16M " <<<"$d" && grep -q "^vol0 " <<<"$d" && grep -q "^acl " <<<"$d" ||
	fail "after the proof hostB should see sec, vol0, acl"
if d=$("$RBLKCTL_BIN" discover --target "127.0.0.1:$PORT" --hostname hostB --volume sec \
	--secret-file "$T/bad.key" 2>&1); then fail "discover with a wrong secret worked: $d"; fi
echo "$d"
grep -q "authentication failed" <<<"$d" || fail "unclear refusal: $d"
grep -q "^sec " <<<"$d" && fail "wrong secret still listed sec"
if "$RBLKCTL_BIN" discover --target "127.0.0.1:$PORT" --volume sec 2>/dev/null; then
	fail "--volume without --secret-file accepted"; fi
d=$("$RBLKCTL_BIN" discover --target "127.0.0.1:$PORT" --hostname hostC --json) || fail "discover hostC"
grep -q '"acl"' <<<"$d" && fail "hostC sees acl: $d"
grep -q '"vol0"' <<<"$d" || fail "hostC does not see vol0: $d"
if "$RBLKCTL_BIN" discover --target "127.0.0.1:1" 2>/dev/null; then fail "discover of a closed port"; fi
if "$RBLKCTL_BIN" discover 2>/dev/null; then fail "discover without --target"; fi
bystander_check
bystander_start byst

log "secret from the config: HMAC challenge"
refused "requires authentication" h1 sec
refused "authentication failed" h1 sec --secret "$T/bad.key"
refused "0644" h1 sec --secret "$T/loose.key"
ok h1 sec --secret "$T/good.key" --io 3
grep -q "login refused: volume 'sec' host 'h1' peer .*: authentication failed (wrong auth MAC" "$T/target.log" ||
	fail "wrong MAC refusal not logged"

log "secret set and cleared with rblkctl"
if ctl "$CONF" volume secret vol0 --file "$T/loose.key" 2>"$T/err"; then fail "accepted a 0644 secret file"; fi
grep -q "0600" "$T/err" || fail "unclear mode refusal: $(cat "$T/err")"
ok h2 vol0
ctl "$CONF" volume secret vol0 --file "$T/good.key" || fail "set secret"
refused "requires authentication" h2 vol0
ok h2 vol0 --secret "$T/good.key"
ctl "$CONF" volume show vol0 | grep -q "secret $T/good.key" || fail "show lacks the secret file"
ctl "$CONF" volume secret vol0 --clear || fail "clear secret"
ok h2 vol0
if ctl "$CONF" volume secret vol0 2>/dev/null; then fail "secret without --file/--clear"; fi
if ctl "$CONF" volume secret nope --clear 2>/dev/null; then fail "secret on unknown volume"; fi

log "restart keeps the ACL and secrets"
bystander_check
stop_target TERM
start_target "$CONF"
bystander_start byst
refused "access denied" hostA acl
ok hostB acl
refused "requires authentication" h3 sec
ok h3 sec --secret "$T/good.key"
bystander_check

log "a secret file with a loose mode stops the target at start"
stop_target TERM
chmod 644 "$T/good.key"
if timeout 20 "$TARGET_BIN" --config "$CONF" >"$T/bad.log" 2>&1; then fail "target started with a 0644 secret file"; fi
cat "$T/bad.log"
grep -q "volume sec: field 'secret_file': .*mode 0644" "$T/bad.log" || fail "start refusal does not name volume and field"
target_log_clean
echo PASS
