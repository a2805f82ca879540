#!/bin/bash
# SPDX-License-Identifier: MIT
# The layering of docs/design.md holds, in the sources and in the build:
#   tools/rblkctl -> initiator -> initiator/client -> proto;  target -> proto
# (tools/fio is a client too).  Every #include "..." is resolved the way
# the compiler would (own folder first, then the component include paths)
# and each edge between folders must be one of those; and the build gives
# each component only the include paths of the layers below it.
. "$(dirname "$0")/lib.sh"
cd "$RBLK_ROOT" || fail "no $RBLK_ROOT"

allowed="initiator -> initiator/client
initiator -> proto
initiator/client -> proto
target -> proto
tools/fio -> initiator/client
tools/fio -> proto
tools/rblkctl -> initiator
tools/rblkctl -> initiator/client
tools/rblkctl -> proto"

comps="proto target initiator/client initiator tools/rblkctl tools/fio"
: >"$T/edges"
for d in $comps; do
	for f in "$d"/*.[ch]; do
		[ -e "$f" ] || continue
		grep -n '^#include "' "$f" | sed 's/^\([0-9]*\):#include "\(.*\)".*/\1 \2/' |
		while read -r line h; do
			where=
			for base in "$d" proto initiator/client target initiator; do
				[ -e "$base/$h" ] && { where=$(realpath --relative-to=. "$(dirname "$base/$h")"); break; }
			done
			# a header of a system or fio include path
			[ -n "$where" ] || continue
			[ "$where" = "$d" ] || echo "$d -> $where $f:$line"
		done >>"$T/edges"
	done
done
bad=$(while read -r a arrow b loc; do
	grep -qxF "$a -> $b" <<<"$allowed" || echo "$loc includes from $b ($a -> $b is not a layer edge)"
done <"$T/edges")
[ -z "$bad" ] || fail "$bad"
n=$(cut -d' ' -f1-3 "$T/edges" | sort -u | wc -l)
log "$n folder edges, all allowed"

# The include paths the build hands each component: -I of layers below only.
want_flags() {
	case $1 in
	proto) echo "" ;;
	target | initiator/client) echo "-Iproto" ;;
	initiator | tools/rblkctl) echo "-Iproto -Iinitiator/client" ;;
	esac
}
for d in proto target initiator/client initiator tools/rblkctl; do
	f=$(ls "$d"/*.c | head -1)
	cmd=$(make -n -B BUILD="$T/b" "$T/b/obj/${f%.c}.o" 2>/dev/null | grep -- " -c -o ") ||
		fail "make -n printed no compile command for $f"
	got=$(grep -o -- ' -I[^ ]*' <<<"$cmd" | grep -v -- '-I/' | tr -d ' ' | xargs)
	[ "$got" = "$(want_flags "$d")" ] || fail "$f is built with include paths '$got', want '$(want_flags "$d")'"
done
log "include paths per component as layered"
exit 0
