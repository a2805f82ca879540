#!/bin/bash
# SPDX-License-Identifier: MIT
# volume delete removes only the file volume create made (created_file in
# the config, which survives a restart); a --path file, a volume written
# by hand (even at volume_dir/NAME.img, like the sample's vol0) or one
# from a config older than created_file keeps its file, byte for byte.
# --remove-file removes a file on request, never a device.
. "$(dirname "$0")/lib.sh"
require_target
require_rblkctl
require_python3

PORT=$(free_port) || skip "no free port"
CONF=$T/t.conf
mkdir -p "$T/vols" "$T/srv"
# vol0 by hand, at the very place volume create would put it.
head -c 1M /dev/urandom >"$T/vols/vol0.img"
write_conf "$CONF" uring "$T/vols/vol0.img" 1M
sed -i "/^admin_socket/a volume_dir = $T/vols" "$CONF"
start_target "$CONF"
c() { ctl "$CONF" "$@"; }
sum() { sha256sum "$1" | cut -d' ' -f1; }

log "a --path file the admin made in volume_dir is kept"
head -c 1M /dev/urandom >"$T/vols/precious.img"
before=$(sum "$T/vols/precious.img")
c volume create precious --path "$T/vols/precious.img" --allow-any-host || fail "create precious"
grep -q "created_file" "$CONF" && fail "created_file recorded for a --path volume: $(cat "$CONF")"
out=$(c volume delete precious) || fail "delete precious"
echo "$out"
[ -f "$T/vols/precious.img" ] || fail "delete removed the admin's --path file"
[ "$(sum "$T/vols/precious.img")" = "$before" ] || fail "the --path file changed"
grep -q "kept $T/vols/precious.img" <<<"$out" || fail "delete did not say it kept the file: $out"

log "a volume written by hand at volume_dir/NAME.img is kept"
before=$(sum "$T/vols/vol0.img")
c volume delete vol0 || fail "delete vol0"
[ -f "$T/vols/vol0.img" ] || fail "delete removed vol0.img, which the target never created"
[ "$(sum "$T/vols/vol0.img")" = "$before" ] || fail "vol0.img changed"

log "a file volume create made is removed, also after a restart"
c volume create mine --size 1M || fail "create mine"
grep -q "^created_file = $T/vols/mine.img$" "$CONF" || fail "created_file not recorded: $(cat "$CONF")"
c volume create mine2 --size 1M || fail "create mine2"
stop_target TERM
start_target "$CONF"
out=$(c volume delete mine) || fail "delete mine"
echo "$out"
[ ! -e "$T/vols/mine.img" ] || fail "the file volume create made was not removed"
grep -q "removed $T/vols/mine.img" <<<"$out" || fail "delete did not say it removed the file: $out"

log "created_file that is not the volume's path: the path is kept"
stop_target TERM
# An admin pointed mine2 at a file of their own by hand.
head -c 1M /dev/urandom >"$T/srv/swapped.img"
before=$(sum "$T/srv/swapped.img")
sed -i "s|^path = $T/vols/mine2.img$|path = $T/srv/swapped.img|" "$CONF"
start_target "$CONF"
c volume delete mine2 || fail "delete mine2"
[ "$(sum "$T/srv/swapped.img")" = "$before" ] || fail "a hand-edited path was removed"
[ -e "$T/vols/mine2.img" ] || fail "the old created file vanished without being the path"

log "--remove-file removes a file on request"
head -c 64K /dev/zero >"$T/srv/scratch.img"
c volume create scratch --path "$T/srv/scratch.img" --allow-any-host || fail "create scratch"
c volume delete scratch --remove-file || fail "delete --remove-file"
[ ! -e "$T/srv/scratch.img" ] || fail "--remove-file kept the file"

log "--remove-file refuses a device and changes nothing"
if [ "$(id -u)" -eq 0 ] && command -v losetup >/dev/null &&
   truncate -s 1M "$T/dev.img" && LOOP=$(losetup -f --show "$T/dev.img" 2>/dev/null); then
	trap 'losetup -d "$LOOP" 2>/dev/null; _cleanup' EXIT
	c volume create dev --device "$LOOP" --allow-any-host || fail "create dev"
	cp "$CONF" "$T/before.conf"
	if out=$(c volume delete dev --remove-file 2>&1); then fail "--remove-file on a device: $out"; fi
	grep -q "only files" <<<"$out" || fail "unclear refusal: $out"
	cmp -s "$CONF" "$T/before.conf" || fail "the refused delete changed the config"
	c volume show dev >/dev/null || fail "the refused delete removed the volume"
	[ -b "$LOOP" ] || fail "device node gone"
	c volume delete dev || fail "delete dev"
else
	echo "note: no loop device here: the device refusal was not tried"
fi
stop_target TERM
target_log_clean
echo PASS
