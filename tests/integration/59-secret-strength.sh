#!/bin/bash
# SPDX-License-Identifier: MIT
# Secrets strong enough for an offline guesser:
# rblkctl volume secret --generate writes a 0600 file of 32 random bytes
# that works at once, never overwrites a file and leaves none behind when
# refused; a secret shorter than 16 bytes is refused by the CLI, by a raw
# admin-socket request and at config load, with a clear error and nothing
# changed.
. "$(dirname "$0")/lib.sh"
require_target
require_rblkctl
require_python3
require_login

start_conf 16M <<CONF

[volume v2]
path = $T/v2.img
size = 4M
allow_any_host = yes
CONF

log "--generate: 32 random bytes, mode 0600, used at once"
ctl "$CONF" volume secret vol0 --generate "$T/gen.key" || fail "generate"
[ "$(stat -c %a "$T/gen.key")" = 600 ] || fail "mode $(stat -c %a "$T/gen.key")"
[ "$(stat -c %s "$T/gen.key")" = 32 ] || fail "size $(stat -c %s "$T/gen.key")"
out=$("$LOGIN" --secret "$T/gen.key" --io 1 127.0.0.1 "$PORT" vol0) || fail "login with the generated secret: $out"
out=$("$LOGIN" 127.0.0.1 "$PORT" vol0) && fail "login without the secret: $out"
grep -q "requires authentication" <<<"$out" || fail "unclear: $out"
grep -q "^secret_file = $T/gen.key$" "$CONF" || fail "generated secret not in the config"

log "--generate never overwrites, and cleans up after a refusal"
cp "$T/gen.key" "$T/gen.copy"
cp "$CONF" "$T/conf.before"
if ctl "$CONF" volume secret v2 --generate "$T/gen.key" 2>"$T/err"; then fail "overwrote a secret file"; fi
cat "$T/err"
grep -q "exists" "$T/err" || fail "unclear: $(cat "$T/err")"
cmp -s "$T/gen.key" "$T/gen.copy" || fail "existing secret file changed"
if ctl "$CONF" volume secret nosuch --generate "$T/orphan.key" 2>"$T/err"; then fail "secret on a missing volume"; fi
[ ! -e "$T/orphan.key" ] || fail "refused --generate left its file behind"
cmp -s "$CONF" "$T/conf.before" || fail "config changed by refused requests"

log "short secrets: refused by the CLI / admin socket, nothing changed"
printf '0123456789abcde\n' >"$T/short.key"	# 15 bytes after the newline
chmod 600 "$T/short.key"
if ctl "$CONF" volume secret v2 --file "$T/short.key" 2>"$T/err"; then fail "accepted a 15-byte secret"; fi
cat "$T/err"
grep -q "secret must be 16..1024 bytes" "$T/err" || fail "unclear: $(cat "$T/err")"
python3 - "$CONF.sock" "$T/short.key" <<'PY' || fail "raw admin request"
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(json.dumps({"cmd": "volume.secret", "name": "v2", "file": sys.argv[2]}).encode() + b"\n")
r = json.loads(s.makefile("rb").readline())
print(r)
assert r["ok"] is False and r["errno"] == "EINVAL" and "16..1024" in r["error"], r
PY
cmp -s "$CONF" "$T/conf.before" || fail "config changed by a refused secret"
ctl "$CONF" volume show v2 | grep -q "auth: *none" || fail "v2 got a secret"
"$LOGIN" --io 1 127.0.0.1 "$PORT" v2 >/dev/null || fail "v2 no longer open"
printf '0123456789abcdef' >"$T/sixteen.key"
chmod 600 "$T/sixteen.key"
ctl "$CONF" volume secret v2 --file "$T/sixteen.key" || fail "16 bytes refused"
"$LOGIN" --secret "$T/sixteen.key" 127.0.0.1 "$PORT" v2 >/dev/null || fail "16-byte secret does not work"

log "short secret in the config: the target does not start"
stop_target TERM
sed -i "s|^secret_file = $T/sixteen.key$|secret_file = $T/short.key|" "$CONF"
grep -q "short.key" "$CONF" || fail "test setup: config not edited"
if timeout 20 "$TARGET_BIN" --config "$CONF" >"$T/bad.log" 2>&1; then fail "target started with a 15-byte secret"; fi
cat "$T/bad.log"
grep -q "volume v2: field 'secret_file': secret file $T/short.key: secret must be 16..1024 bytes" "$T/bad.log" ||
	fail "start refusal unclear"
target_log_clean
echo PASS
