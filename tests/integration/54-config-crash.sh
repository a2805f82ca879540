#!/bin/bash
# SPDX-License-Identifier: MIT
# Crash safety of config updates: SIGKILL the target at random moments while
# rblkctl keeps changing volumes; after every kill the config must parse,
# must hold either the state before or after the interrupted change (never
# a torn file), and the target must start from it again.
. "$(dirname "$0")/lib.sh"
require_target
require_rblkctl

PORT=$(free_port) || skip "no free port"
CONF=$T/t.conf
write_conf "$CONF" null "" 64M
sed -i '/^path = $/d' "$CONF"
sed -i "/^admin_socket/a volume_dir = $T/vols" "$CONF"

vols_in_conf() { grep '^\[volume ' "$CONF" | sed 's/^\[volume \(.*\)\]$/\1/' | sort | tr '\n' ' '; }
ROUNDS=8
for round in $(seq $ROUNDS); do
	start_target "$CONF"
	# Hammer: create + allow + resize + delete, in a loop, until killed.
	(
		i=0
		while :; do
			i=$((i + 1)); v=r${round}v$i
			ctl "$CONF" volume create "$v" --size 1M >/dev/null 2>&1 || exit 0
			ctl "$CONF" volume allow "$v" h$i >/dev/null 2>&1 || exit 0
			ctl "$CONF" volume resize "$v" --size 2M >/dev/null 2>&1 || exit 0
			[ $((i % 3)) = 0 ] || ctl "$CONF" volume delete "$v" >/dev/null 2>&1 || exit 0
		done
	) &
	hammer=$!
	sleep "0.$((RANDOM % 9 + 1))"
	kill -KILL "$TARGET_PID"
	wait "$TARGET_PID" 2>/dev/null
	wait "$hammer" 2>/dev/null
	out=$("$TARGET_BIN" --config "$CONF" --check-config 2>&1) || {
		cat "$CONF"; fail "round $round: config does not parse after SIGKILL: $out"; }
	# Every volume section is whole: it has its path and size lines.
	nvol=$(grep -c '^\[volume ' "$CONF")
	nsize=$(grep -c '^size = ' "$CONF")
	[ "$nvol" = "$nsize" ] || { cat "$CONF"; fail "round $round: torn volume section"; }
	echo "round $round: $(vols_in_conf)"
done
# A failed config write (its directory gone) refuses the change and rolls
# it back: no volume appears, its new file is removed, nothing is written.
mkdir "$T/cfgdir"
cp "$CONF" "$T/cfgdir/t.conf"
sed -i "s|^admin_socket = .*|admin_socket = $T/cfg.sock|" "$T/cfgdir/t.conf"
cp "$T/cfgdir/t.conf" "$T/cfg.before"
PORT_SAVE=$PORT
start_target "$T/cfgdir/t.conf"
mv "$T/cfgdir" "$T/cfgdir.away"
if "$RBLKCTL_BIN" --socket "$T/cfg.sock" volume create failme --size 1M 2>"$T/err"; then
	fail "create succeeded without a writable config"
fi
cat "$T/err"
grep -q "creating temp file\|cannot be read back" "$T/err" || fail "unclear persistence error"
[ ! -e "$T/vols/failme.img" ] || fail "a refused create left its file"
"$RBLKCTL_BIN" --socket "$T/cfg.sock" volume show failme 2>/dev/null && fail "refused volume is visible"
if "$RBLKCTL_BIN" --socket "$T/cfg.sock" volume delete vol0 2>/dev/null; then fail "delete succeeded without a writable config"; fi
"$RBLKCTL_BIN" --socket "$T/cfg.sock" volume show vol0 >/dev/null || fail "refused delete removed the volume"
mv "$T/cfgdir.away" "$T/cfgdir"
cmp "$T/cfgdir/t.conf" "$T/cfg.before" || fail "config changed by refused requests"
stop_target TERM
PORT=$PORT_SAVE

# The last state starts, and the admin view matches the file.
start_target "$CONF"
want=$(vols_in_conf)
got=$(ctl "$CONF" volume list | awk 'NR > 1 { print $1 }' | sort | tr '\n' ' ')
[ "$want" = "$got" ] || fail "config has [$want], target serves [$got]"
[ "$(find "$T" -name '.t.conf.tmp.*' | wc -l)" -le $ROUNDS ] || fail "temp files pile up"
stop_target TERM
target_log_clean
echo PASS
