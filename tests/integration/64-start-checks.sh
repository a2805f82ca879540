#!/bin/bash
# SPDX-License-Identifier: MIT
# --check-config refuses what a start refuses (a store below one block, a
# 0-byte block device, a missing secret file), a start refuses it before
# it creates anything, and a start that fails later (its listener's port
# is taken) takes back the image file and volume_dir it made.
# volume create refuses a 0-byte device too.
. "$(dirname "$0")/lib.sh"
require_target
require_rblkctl

PORT=$(free_port) || skip "no free port"
n=0
# conf VOLUME-LINES: C = a new config $T/cN.conf with volume_dir $T/vdN
# and the lines given (a [volume] section).
conf() {
	n=$((n + 1))
	cat >"$T/c$n.conf" <<CONF
[target]
listen_tcp = 127.0.0.1:$PORT
admin_socket = $T/c$n.sock
volume_dir = $T/vd$n

$1
CONF
	C=$T/c$n.conf
}
# refused WHAT CONF PATTERN: --check-config and a start both refuse CONF
# saying PATTERN, and the start leaves no socket and no volume_dir.
refused() {
	local what=$1 c=$2 pat=$3 out
	if out=$("$TARGET_BIN" --config "$c" --check-config 2>&1); then
		fail "$what: --check-config passed: $out"
	fi
	grep -q -- "$pat" <<<"$out" || fail "$what: --check-config message lacks '$pat': $out"
	log "--check-config refused ($what): $out"
	if out=$(timeout 20 "$TARGET_BIN" --config "$c" 2>&1); then
		fail "$what: the target started"
	fi
	grep -q -- "$pat" <<<"$out" || fail "$what: start message lacks '$pat': $out"
	[ ! -e "${c%.conf}.sock" ] || fail "$what: admin socket left behind"
	[ ! -e "$T/vd$n" ] || fail "$what: the failed start left volume_dir"
}

log "a file below one block, with no size to grow it"
head -c 100 /dev/zero >"$T/tiny.img"
conf "[volume tiny]
path = $T/tiny.img
allow_any_host = yes"
refused "100-byte file" "$C" "tiny.img size 100 is not a positive multiple of 512"

if grep -qa rbd_aio_writev "$TARGET_BIN"; then  # built with the rbd backend
	log "an rbd volume whose ceph.conf is missing (no cluster needed)"
	conf "[volume cephless]
backend = rbd
rbd_pool = rbd
rbd_image = img
ceph_conf = $T/no-such-ceph.conf
allow_any_host = yes"
	refused "missing ceph_conf" "$C" "no-such-ceph.conf"
else
	log "rbd backend not built: its missing-ceph.conf case is not run"
fi

log "a missing secret file: refused before the image is created"
conf "[volume sec]
path = $T/sec.img
size = 64M
secret_file = $T/no-such.key
allow_any_host = yes"
refused "missing secret_file" "$C" "no-such.key"
[ ! -e "$T/sec.img" ] || fail "the failed start left the 64M image it created"

log "a start whose listener fails takes back what it created"
PORT2=$(free_port) || skip "no free port"
python3 -c 'import socket,sys,time
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1); print("up", flush=True); time.sleep(60)' "$PORT2" >"$T/squat.out" &
SQUAT=$!
_cleanup_pids+=("$SQUAT")
for _ in $(seq 50); do grep -q up "$T/squat.out" && break; sleep 0.1; done
conf "[volume new]
path = $T/vd$((n + 1))/new.img
size = 64M
allow_any_host = yes"
sed -i "s/127.0.0.1:$PORT/127.0.0.1:$PORT2/" "$C"
"$TARGET_BIN" --config "$C" --check-config >/dev/null || fail "the config itself is fine"
if out=$(timeout 20 "$TARGET_BIN" --config "$C" 2>&1); then fail "started on a taken port"; fi
echo "$out" | tail -n 5
grep -q "created $T/vd$n/new.img" <<<"$out" || fail "the start did not get as far as creating the image: $out"
[ ! -e "$T/vd$n/new.img" ] || fail "the failed start left its image file"
[ ! -e "$T/vd$n" ] || fail "the failed start left volume_dir $T/vd$n"
kill "$SQUAT" 2>/dev/null

log "0-byte block devices: refused by create, --check-config and a start"
if [ "$(id -u)" -ne 0 ] || ! command -v losetup >/dev/null; then
	echo "note: no loop devices here (root and losetup needed): 0-byte device cases not run"
else
	LOOP=$(losetup -f 2>/dev/null) && [ -b "$LOOP" ] ||
		{ echo "note: no free loop device: 0-byte device cases not run"; echo PASS; exit 0; }
	# An unbound loop device is 0 bytes (another test may bind it meanwhile).
	[ "$(blockdev --getsize64 "$LOOP" 2>/dev/null)" = 0 ] || skip "$LOOP is not 0 bytes"
	conf "[volume dev]
path = $LOOP
allow_any_host = yes"
	refused "0-byte device" "$C" "less than one 512-byte block"
	conf ""
	start_target "$C"
	if out=$("$RBLKCTL_BIN" --socket "$T/c$n.sock" volume create v8 --device "$LOOP" 2>&1); then
		fail "volume create took a 0-byte device: $out"
	fi
	grep -q "less than one" <<<"$out" || fail "unclear refusal: $out"
	log "create refused: $out"
	"$RBLKCTL_BIN" --socket "$T/c$n.sock" volume list | grep -q "^v8 " && fail "v8 listed"
	grep -q "v8" "$C" && fail "v8 written to the config"
	stop_target TERM
fi
target_log_clean
echo PASS
