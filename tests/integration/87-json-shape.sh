#!/bin/bash
# SPDX-License-Identifier: MIT
# Every rblkctl --json output is one JSON object with "ok" (lists under a
# named key, never a bare array), and a volume's flags read the same in
# discover --json as in volume show --json.
. "$(dirname "$0")/lib.sh"
require_target
require_rblkctl
require_python3

start_admin_target
export RBLK_RUN_DIR=$T/run	# rblkctl list: no devices of this machine's
mkdir -p "$RBLK_RUN_DIR"

shape() {	# want-ok what command...: the output is an object, ok == want-ok
	local want=$1 what=$2 out
	shift 2
	out=$("$@" 2>/dev/null)
	python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert isinstance(d, dict), "not an object"
assert d.get("ok") is (sys.argv[2] == "true"), "ok is %r" % d.get("ok")
' "$out" "$want" || fail "$what --json: $out"
	echo "$out"
}

c() { echo "$RBLKCTL_BIN" --socket "$CONF.sock" "$@"; }
shape true "status" $(c --json status) >/dev/null
shape true "volume list" $(c --json volume list) | jget "d['volumes'][0]['name']" | grep -qx vol0 ||
	fail "volume list --json has no volumes[0].name vol0"
shape true "volume show" $(c --json volume show vol0) >"$T/show.json"
shape true "volume create" $(c --json volume create v2 --size 1M --allow-any-host) >/dev/null
shape true "volume allow (again)" $(c --json volume allow v2 --any) >/dev/null
shape true "stats" $(c --json stats) >/dev/null
shape true "reload" $(c --json reload) >/dev/null
shape false "volume show of a missing volume" $(c --json volume show nosuch) >/dev/null
shape true "discover" "$RBLKCTL_BIN" discover --target "127.0.0.1:$PORT" --json >"$T/disc.json"
shape true "list" "$RBLKCTL_BIN" list --json | jget "d['devices']" | grep -qx '\[\]' ||
	fail "list --json with no device has no empty devices list"

show=$(jget "d['volume']['flags']" <"$T/show.json")
disc=$(jget "[v['flags'] for v in d['volumes'] if v['name'] == 'vol0'][0]" <"$T/disc.json")
log "flags: volume show '$show', discover '$disc'"
[ -n "$show" ] && [ "$show" = "$disc" ] || fail "flags differ: volume show '$show', discover '$disc'"
exit 0
