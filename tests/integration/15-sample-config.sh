#!/bin/bash
# SPDX-License-Identifier: MIT
# The sample config (etc/rblk-target.conf) works on a new machine: its
# volume_dir does not exist yet, --check-config says OK, and the start that
# follows comes up, creating volume_dir (mode 0700) and the volume's file.
# --check-config and the start agree on configs that cannot start.
. "$(dirname "$0")/lib.sh"
require_target

PORT=$(free_port) || skip "no free port"
vdir=$T/var/lib/rblk	# two levels missing, as /var/lib/rblk on a new machine
sed -e "s|^listen_tcp = .*|listen_tcp = 127.0.0.1:$PORT|" \
    -e "s|^admin_socket = .*|admin_socket = $T/target.sock|" \
    -e "s|/var/lib/rblk|$vdir|g" "$RBLK_ROOT/etc/rblk-target.conf" >"$T/sample.conf"
grep -q "^volume_dir = $vdir$" "$T/sample.conf" || fail "sample has no volume_dir line to point elsewhere"
grep -q "^path = $vdir/vol0.img$" "$T/sample.conf" || fail "sample's vol0 is not in volume_dir"

out=$("$TARGET_BIN" --config "$T/sample.conf" --check-config 2>&1) || fail "--check-config refused the sample: $out"
echo "$out"
[ ! -e "$vdir" ] || fail "--check-config created $vdir (it must change nothing)"

start_target "$T/sample.conf"
[ -d "$vdir" ] || fail "the target did not create volume_dir $vdir"
mode=$(stat -c %a "$vdir")
[ "$mode" = 700 ] || fail "volume_dir mode is $mode, want 700"
[ -f "$vdir/vol0.img" ] || fail "vol0.img not created in volume_dir"
size=$(stat -c %s "$vdir/vol0.img")
[ "$size" = $((10 << 30)) ] || fail "vol0.img is $size bytes, want 10G"
grep -q "created volume_dir $vdir" "$T/target.log" || fail "no log line for the created volume_dir"
stop_target
[ "$TARGET_RC" = 0 ] || fail "target exit $TARGET_RC"
log "sample config: check OK, started, volume_dir $vdir mode $mode, vol0.img $size bytes"

# Configs that cannot start are refused by --check-config with the same
# reason the start gives, and neither creates anything.
n=0
refused() {	# what, message pattern; $T/bad.conf written
	local what=$1 pat=$2 chk run
	chk=$("$TARGET_BIN" --config "$T/bad.conf" --check-config 2>&1) && fail "$what: --check-config said OK: $chk"
	run=$(timeout 20 "$TARGET_BIN" --config "$T/bad.conf" 2>&1) && fail "$what: the target started"
	grep -q "$pat" <<<"$chk" || fail "$what: --check-config message lacks '$pat': $chk"
	grep -q "$pat" <<<"$run" || fail "$what: start message lacks '$pat': $run"
	echo "refused ($what): $(grep -m1 "$pat" <<<"$chk")"
}
bad() {	# volume lines...
	{
		printf '[target]\nlisten_tcp = 127.0.0.1:%s\nadmin_socket = %s/bad.sock\nvolume_dir = %s/vols\n\n[volume v]\n' \
			"$PORT" "$T" "$T"
		printf '%s\n' "$@"
	} >"$T/bad.conf"
}
bad "path = $T/nowhere/v.img" "size = 1M"
refused "folder missing, not volume_dir" "folder $T/nowhere does not exist"
bad "path = $T/vols/v.img" "read_only = yes"
refused "read-only volume missing" "open $T/vols/v.img: No such file"
bad "path = $T/vols/v.img"
refused "missing file without a size" "no size is configured"
[ ! -e "$T/vols" ] && [ ! -e "$T/nowhere" ] || fail "a refused config created a folder"
target_log_clean
echo PASS
