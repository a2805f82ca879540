#!/bin/bash
# SPDX-License-Identifier: MIT
# Long options are taken only whole: an abbreviation that glibc's getopt
# would have expanded ("--forc" for "--force") is a usage error (exit 2)
# that names the option, and changes nothing; the whole name works.
. "$(dirname "$0")/lib.sh"
require_target
require_rblkctl
INI_BIN=$RBLK_BUILD/rblk-initiator
[ -x "$INI_BIN" ] || skip "$INI_BIN not built"

start_admin_target
c() { ctl "$CONF" "$@"; }

refused() {	# what-for command...: exit 2 and a line naming the option
	local what=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	[ "$rc" = 2 ] || fail "$what: exit $rc, want 2: $out"
	grep -q "unknown option '--.*' (options are not abbreviated" <<<"$out" ||
		fail "$what: no 'not abbreviated' line: $out"
}

refused "volume create --siz" c volume create v1 --siz 1M --allow-any-host
[ -e "$T/vols/v1.img" ] && fail "a refused create made a file"
c volume show v1 >/dev/null 2>&1 && fail "a refused create made a volume"
refused "volume create --size=1M --allow-any" c volume create v1 --size=1M --allow-any
c volume create v1 --size 1M --allow-any-host >/dev/null || fail "the whole names were refused"
refused "volume delete --forc" c volume delete v1 --forc
c volume show v1 >/dev/null || fail "a refused delete deleted"
refused "rblk-target --conf" "$TARGET_BIN" --conf "$CONF" --check-config
"$TARGET_BIN" --config "$CONF" --check-config >/dev/null 2>&1 || fail "rblk-target --config --check-config failed"
refused "rblk-initiator --targ" "$INI_BIN" --targ "127.0.0.1:$PORT" --volume v1
refused "rblkctl discover --targ" "$RBLKCTL_BIN" discover --targ "127.0.0.1:$PORT"
refused "rblkctl attach --vol" "$RBLKCTL_BIN" attach --target "127.0.0.1:$PORT" --vol v1
exit 0
