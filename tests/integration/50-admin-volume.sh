#!/bin/bash
# SPDX-License-Identifier: MIT
# rblkctl volume create/list/show/resize/delete through the admin socket of
# a real rblk-target: results, --json, persistence across a restart, and
# refusals of bad input that must change nothing.
. "$(dirname "$0")/lib.sh"
require_target
require_rblkctl
require_python3

PORT=$(free_port) || skip "no free port"
CONF=$T/t.conf
write_conf "$CONF" uring "$T/vol0.img" 64M
# volume_dir belongs in [target]: insert it after the admin_socket line.
sed -i "/^admin_socket/a volume_dir = $T/vols" "$CONF"
start_target "$CONF"
c() { ctl "$CONF" "$@"; }
# expect_fail WHAT PATTERN CMD...: must exit non-zero and say PATTERN.
expect_fail() {
	local what=$1 pat=$2 out; shift 2
	if out=$("$@" 2>&1); then fail "$what: succeeded: $out"; fi
	grep -qi -- "$pat" <<<"$out" || fail "$what: message lacks '$pat': $out"
	log "refused ($what): $out"
}

log "create a sparse 10G volume in volume_dir"
c volume create v1 --size 10G || fail "create v1"
[ -f "$T/vols/v1.img" ] || fail "no backing file $T/vols/v1.img"
[ "$(stat -c %s "$T/vols/v1.img")" = $((10 << 30)) ] || fail "v1.img size"
[ "$(stat -c %b "$T/vols/v1.img")" -lt 1024 ] || fail "v1.img is not sparse"
c volume create v2 --size 512M --backend aio || fail "create v2 aio"
c volume create v3 --size 4096 --path "$T/own.img" || fail "create v3 --path"
truncate -s 1M "$T/ro.img"
c volume create vro --path "$T/ro.img" --ro || fail "create read-only from existing file"

log "list / show / --json"
out=$(c volume list) || fail "list"
echo "$out"
for v in vol0 v1 v2 v3 vro; do grep -q "^$v " <<<"$out" || fail "list lacks $v"; done
[ "$(c volume list --json | jget 'len(d["volumes"])')" = 5 ] || fail "--json list count"
[ "$(c --json volume show v1 | jget 'd["volume"]["size"]')" = $((10 << 30)) ] || fail "show size"
[ "$(c volume show v2 --json | jget 'd["volume"]["backend"]')" = aio ] || fail "show backend"
[ "$(c volume show vro --json | jget 'd["volume"]["read_only"]')" = True ] || fail "show ro"
c volume show v3 | grep -q "size: *4096 bytes" || fail "show v3 human size"

log "socket from --socket after the command, and from RBLK_ADMIN_SOCKET"
"$RBLKCTL_BIN" volume list --socket "$CONF.sock" | grep -q "^v1 " || fail "--socket after the command"
RBLK_ADMIN_SOCKET=$CONF.sock "$RBLKCTL_BIN" volume list | grep -q "^v1 " || fail "RBLK_ADMIN_SOCKET"
"$RBLKCTL_BIN" stats v1 --socket "$CONF.sock" --json | grep -q '"name":"v1"' || fail "stats --socket --json"
if "$RBLKCTL_BIN" --socket "$T/nope.sock" volume list 2>"$T/err"; then fail "a missing socket worked"; fi
grep -q "is rblk-target running" "$T/err" || fail "unclear message for a missing socket: $(cat "$T/err")"

log "resize grows only"
c volume resize v1 --size 20G || fail "resize"
[ "$(stat -c %s "$T/vols/v1.img")" = $((20 << 30)) ] || fail "file not grown"
expect_fail "shrink" "only growing" c volume resize v1 --size 1G
expect_fail "resize read-only" "read-only" c volume resize vro --size 2M
expect_fail "resize unknown" "no volume" c volume resize nope --size 1G

log "bad input changes nothing"
cp "$CONF" "$T/before.conf"
expect_fail "duplicate" "already exists" c volume create v1 --size 1G
expect_fail "duplicate of config volume" "already exists" c volume create vol0 --size 1G
expect_fail "unknown show" "no volume" c volume show nope
expect_fail "unknown delete" "no volume" c volume delete nope
for s in 10X 1.5G -1 "" 0 100 18446744073709551616 16384P 10GG; do
	expect_fail "size '$s'" "size" c volume create bad --size "$s"
done
for n in a/b .. . ../x "-x" "$(printf 'a\tb')" "$(printf 'a\001b')" \
	 "$(printf 'a%.0s' $(seq 64))" "a b" ""; do
	expect_fail "name '$n'" "name" c volume create "$n" --size 1G
done
expect_fail "path and device" "exclude" c volume create bad --size 1G --path /tmp/x --device /dev/null
expect_fail "device not a blockdev" "not a block device" c volume create bad --device /dev/null
expect_fail "unknown backend" "backend" c volume create bad --size 1G --backend nope
expect_fail "missing size" "size" c volume create bad
expect_fail "path is a dir" "not a regular file" c volume create bad --path "$T"
expect_fail "store of another volume" "already the store of volume 'v3'" c volume create bad --path "$T/own.img"
expect_fail "same store via another name" "already the store" c volume create bad --path "$T/vols/../own.img"
expect_fail "newline in path" "control" c volume create bad --size 1M --path "$(printf '%s/a\nlisten_tcp = 1.2.3.4:5' "$T")"
expect_fail "unknown subcommand" "unknown" c volume frob
expect_fail "unknown command" "unknown" "$RBLKCTL_BIN" frobnicate
cmp -s "$CONF" "$T/before.conf" || fail "a refused request changed the config"
[ ! -e "$T/vols/bad.img" ] || fail "a refused create left a file"
[ "$(c volume list --json | jget 'len(d["volumes"])')" = 5 ] || fail "volume count changed"

log "raw protocol: malformed requests get an error line, the daemon lives on"
python3 - "$CONF.sock" <<'PY' || fail "raw protocol checks"
import json, socket, sys
def ask(line):
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
    s.sendall(line); f = s.makefile("rb"); r = f.readline(); s.close()
    return json.loads(r)
for bad in [b"not json\n", b"[1,2]\n", b"{}\n", b'{"cmd":5}\n', b'{"cmd":"nope"}\n',
            b'{"cmd":"volume.create","name":"x","size":-5}\n',
            b'{"cmd":"volume.create","name":"x","size":"1G","read_only":"yes"}\n',
            b'{"cmd":"volume.create","name":"x\\u0000y","size":"1G"}\n',
            b'{"cmd":"volume.show"}\n', b'{"cmd":"ping"} trailing\n',
            # the daemon checks what rblkctl checks: names and sizes
            b'{"cmd":"volume.create","name":"a/b","size":"1G"}\n',
            b'{"cmd":"volume.create","name":"..","size":"1G"}\n',
            b'{"cmd":"volume.create","name":"a\\u0001b","size":"1G"}\n',
            b'{"cmd":"volume.create","name":"ok1","size":"10X"}\n',
            b'{"cmd":"volume.create","name":"ok1","size":"1.5G"}\n',
            b'{"cmd":"volume.create","name":"ok1","size":1000}\n',
            b'{"cmd":"volume.create","name":"ok1","size":"1G","path":"rel/x"}\n',
            b'{"cmd":"volume.allow","name":"v1","host":"a b"}\n']:
    r = ask(bad)
    assert r["ok"] is False and r["error"], (bad, r)
r = ask(b'{"cmd":"ping"}\n'); assert r["ok"] is True, r
# Two requests on one connection, answered in order.
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(b'{"cmd":"ping"}\n{"cmd":"volume.list"}\n'); f = s.makefile("rb")
assert json.loads(f.readline())["ok"] and "volumes" in json.loads(f.readline())
# An over-long line is refused and the connection closed.
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
try:
    s.sendall(b"x" * (70 << 10))
except OSError:
    pass
r = s.makefile("rb").readline()
assert r == b"" or json.loads(r)["ok"] is False
PY
kill -0 "$TARGET_PID" || fail "target died on bad input"

log "--help on every command"
for sub in create delete resize list show allow deny secret; do
	c volume "$sub" --help | grep -q "usage: rblkctl volume $sub" || fail "volume $sub --help"
done
"$RBLKCTL_BIN" stats --help | grep -q usage || fail "stats --help"
"$RBLKCTL_BIN" discover --help | grep -q usage || fail "discover --help"
"$RBLKCTL_BIN" volume --help | grep -q usage || fail "volume --help"

log "delete removes the volume and its volume_dir file, not --path files"
c volume delete v2 || fail "delete v2"
[ ! -e "$T/vols/v2.img" ] || fail "v2.img not removed"
c volume delete v3 || fail "delete v3"
[ -e "$T/own.img" ] || fail "a --path file was removed"

log "restart: what the socket changed is in the config"
grep -q "^\[volume v1\]" "$CONF" || fail "v1 not persisted"
grep -q "^size = 20G" "$CONF" || fail "resize not persisted"
grep -q "^\[volume v2\]" "$CONF" && fail "deleted v2 still in config"
stop_target TERM
[ "$TARGET_RC" = 0 ] || fail "target exit status $TARGET_RC"
[ ! -e "$CONF.sock" ] || fail "admin socket left behind after exit"
start_target "$CONF"
out=$(c volume list --json) || fail "list after restart"
[ "$(jget 'sorted(v["name"] for v in d["volumes"])' <<<"$out")" = "['v1', 'vol0', 'vro']" ] ||
	fail "volumes after restart: $out"
[ "$(jget '[v["size"] for v in d["volumes"] if v["name"]=="v1"][0]' <<<"$out")" = $((20 << 30)) ] ||
	fail "v1 size after restart"
stop_target TERM
target_log_clean
echo "PASS"
