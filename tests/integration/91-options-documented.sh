#!/bin/bash
# SPDX-License-Identifier: MIT
# The options rblk-initiator and `rblkctl attach` take come from one table
# (initiator/opts.c); their man pages must name each option the help
# prints, and rblk-initiator's page no option the program lacks.  attach
# documents its own options and refers to rblk-initiator(8) for the
# shared ones.
. "$(dirname "$0")/lib.sh"
require_rblkctl
INI_BIN=$RBLK_BUILD/rblk-initiator
[ -x "$INI_BIN" ] || skip "$INI_BIN not built"
man_ini=$RBLK_ROOT/docs/man/rblk-initiator.8.scd
man_ctl=$RBLK_ROOT/docs/man/rblkctl.8.scd

opts_of_help() { grep -o -- '^  \(-h, \)\?--[a-z-]*' | sed 's/^ *\(-h, \)\?//' | sort -u; }
opts_of_man()  { grep -o -- '\*--[a-z-]*\*' "$1" | tr -d '*' | sort -u; }

"$INI_BIN" --help | opts_of_help >"$T/ini"
"$RBLKCTL_BIN" attach --help | opts_of_help >"$T/ctl"
[ "$(wc -l <"$T/ini")" -ge 20 ] || fail "rblk-initiator --help lists only $(wc -l <"$T/ini") options"
opts_of_man "$man_ini" >"$T/man_ini"
opts_of_man "$man_ctl" >"$T/man_ctl"

missing=$(comm -23 "$T/ini" "$T/man_ini")
[ -z "$missing" ] || fail "rblk-initiator(8) does not document: $(echo $missing)"
extra=$(comm -13 "$T/ini" "$T/man_ini")
[ -z "$extra" ] || fail "rblk-initiator(8) documents options rblk-initiator lacks: $(echo $extra)"
missing=$(comm -23 "$T/ctl" <(sort -u "$T/man_ini" "$T/man_ctl"))
[ -z "$missing" ] || fail "rblkctl attach options documented nowhere: $(echo $missing)"
# The shared options are the same in both helps (one table).
shared=$(comm -12 "$T/ini" "$T/ctl" | wc -l)
[ "$shared" -ge 14 ] || fail "only $shared options shared by rblk-initiator and rblkctl attach"
log "$(wc -l <"$T/ini") initiator and $(wc -l <"$T/ctl") attach options, $shared shared, all documented"
exit 0
