#!/bin/bash
# SPDX-License-Identifier: MIT
# --version on every binary prints the one release version, the one in
# debian/changelog, exits 0 and writes nothing to stderr.
. "$(dirname "$0")/lib.sh"
require_target
require_rblkctl
INI_BIN=$RBLK_BUILD/rblk-initiator
[ -x "$INI_BIN" ] || skip "$INI_BIN not built"

want=$(sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' "$RBLK_ROOT/debian/changelog")
[ -n "$want" ] || fail "no version in debian/changelog"
for b in "$TARGET_BIN" "$INI_BIN" "$RBLKCTL_BIN"; do
	name=${b##*/}
	out=$("$b" --version 2>"$T/err") || fail "$name --version exit $?"
	[ -s "$T/err" ] && fail "$name --version wrote to stderr: $(cat "$T/err")"
	log "$out"
	[[ $out == "$name $want "* ]] || fail "$name --version says '$out', want '$name $want ...'"
	grep -Eq '\(protocol [0-9]+\)$' <<<"$out" || fail "$name --version does not name the protocol: $out"
done
# --version is in each --help.
for b in "$TARGET_BIN" "$INI_BIN" "$RBLKCTL_BIN"; do
	"$b" --help 2>&1 | grep -q -- '--version' || fail "${b##*/} --help does not mention --version"
done
exit 0
