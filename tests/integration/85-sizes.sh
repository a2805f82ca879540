#!/bin/bash
# SPDX-License-Identifier: MIT
# One size syntax everywhere: binary K/M/G/T and KiB/MiB/GiB/TiB; KB/MB/GB
# refused (never read as binary) by rblkctl, the admin socket and the
# config file, changing nothing; resize --size +S grows by S.
. "$(dirname "$0")/lib.sh"
require_target
require_rblkctl
require_python3

start_admin_target
c() { ctl "$CONF" "$@"; }
size_of() { c volume show "$1" --json | jget "d['volume']['size'] if 'volume' in d else d['size']"; }

out=$(c volume create v1 --size 10MB --allow-any-host 2>&1)
rc=$?
[ "$rc" = 2 ] || fail "create --size 10MB: exit $rc, want 2"
grep -q "KB, MB, GB, TB and PB are not taken" <<<"$out" || fail "no reason for 10MB: $out"
c volume show v1 >/dev/null 2>&1 && fail "a refused create made a volume"
[ -e "$T/vols/v1.img" ] && fail "a refused create made a file"

c volume create v1 --size 2MiB --allow-any-host >/dev/null || fail "create --size 2MiB"
[ "$(size_of v1)" = $((2 << 20)) ] || fail "2MiB is $(size_of v1) bytes"
c volume resize v1 --size +1M >/dev/null || fail "resize +1M"
[ "$(size_of v1)" = $((3 << 20)) ] || fail "after +1M: $(size_of v1) bytes, want 3 MiB"
c volume resize v1 --size +1MiB >/dev/null || fail "resize +1MiB"
[ "$(size_of v1)" = $((4 << 20)) ] || fail "after +1MiB: $(size_of v1) bytes, want 4 MiB"
[ "$(stat -c %s "$T/vols/v1.img")" = $((4 << 20)) ] || fail "the file did not grow to 4 MiB"
out=$(c volume resize v1 --size +1MB 2>&1) && fail "resize +1MB was taken"
grep -q "not taken" <<<"$out" || fail "no reason for +1MB: $out"
out=$(c volume resize v1 --size 1M 2>&1) && fail "a shrink was taken"
[ "$(size_of v1)" = $((4 << 20)) ] || fail "a refused resize changed the size"

log "the admin socket refuses 1GB as well"
out=$(python3 - "$CONF.sock" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(json.dumps({"cmd": "volume.create", "name": "v2", "size": "1GB", "allow_any_host": True}).encode() + b"\n")
print(s.makefile().readline())
PY
)
grep -q '"ok": *false' <<<"$out" || fail "the socket took size 1GB: $out"
grep -q "not taken" <<<"$out" || fail "no reason from the socket: $out"

log "the config file too, at --check-config"
cp "$CONF" "$T/bad.conf"
printf '[volume big]\npath = %s\nsize = 1GB\nallow_any_host = yes\n' "$T/vols/big.img" >>"$T/bad.conf"
out=$("$TARGET_BIN" --config "$T/bad.conf" --check-config 2>&1) && fail "--check-config took size = 1GB"
grep -q "field 'size': '1GB': KB, MB" <<<"$out" || fail "no reason in --check-config: $out"
[ -e "$T/vols/big.img" ] && fail "--check-config made a file"
exit 0
