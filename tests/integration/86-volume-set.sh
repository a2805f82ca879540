#!/bin/bash
# SPDX-License-Identifier: MIT
# rblkctl volume set NAME KEY=VALUE...: live keys change and are saved;
# a store key (read_only) is refused while a session is attached; an
# access key applies at once and leaves the session alone; keys that
# cannot change live, unknown keys and bad values are refused with the
# reason, and one bad pair changes nothing; the same value again is
# "nothing changed"; an unread hand edit of the config refuses the set.
. "$(dirname "$0")/lib.sh"
require_target
require_rblkctl
require_login
require_python3

start_admin_target
c() { ctl "$CONF" "$@"; }
field() { c volume show vol0 --json | jget "d['volume']['$1']"; }
login() { "$LOGIN" --host h1 "$@" 127.0.0.1 "$PORT" vol0; }

log "read_only=yes with no session: writes are refused, and it is saved"
out=$(c volume set vol0 read_only=yes) || fail "set read_only=yes: $out"
[ "$(field read_only)" = True ] || fail "volume show: read_only $(field read_only)"
grep -q "^read_only = yes" "$CONF" || fail "read_only not saved: $(cat "$CONF")"
out=$(login --io 1) && fail "a write on a read-only volume worked: $out"
grep -qi "read.only\|READ_ONLY" <<<"$out" || fail "the write did not fail read-only: $out"
out=$(c volume set vol0 read_only=yes) || fail "the same value again failed"
grep -q "nothing changed" <<<"$out" || fail "same value: $out"
c volume set vol0 read_only=no >/dev/null || fail "set read_only=no"
login --io 1 >/dev/null || fail "a write after read_only=no failed"

log "with a session attached: read_only refused, allow_any_host applied, session kept"
"$LOGIN" --host h1 --hold 30 127.0.0.1 "$PORT" vol0 >"$T/hold.out" &
hold=$!
_cleanup_pids+=("$hold")
for _ in $(seq 50); do [ "$(field sessions)" = 1 ] && break; sleep 0.1; done
[ "$(field sessions)" = 1 ] || fail "no session to hold"
cp "$CONF" "$T/before.conf"
out=$(c volume set vol0 read_only=yes 2>&1) && fail "read_only changed under a session"
grep -q "session(s) attached" <<<"$out" || fail "no reason for the refusal: $out"
cmp -s "$CONF" "$T/before.conf" || fail "a refused set wrote the config"
[ "$(field read_only)" = False ] || fail "a refused set changed read_only"
c volume set vol0 allow_any_host=no >/dev/null || fail "allow_any_host=no under a session"
[ "$(field allow_any_host)" = False ] || fail "allow_any_host still on"
[ "$(field sessions)" = 1 ] || fail "the session went with an access change"
out=$("$LOGIN" --host h2 127.0.0.1 "$PORT" vol0 2>&1) && fail "a new login after allow_any_host=no worked: $out"
c volume set vol0 allow_any_host=yes >/dev/null || fail "allow_any_host=yes"
kill -USR1 "$hold"
wait "$hold"
grep -q "after-hold=ok" "$T/hold.out" || fail "the held session did not survive: $(cat "$T/hold.out")"

log "refused: store keys, unknown keys, bad values; all or nothing"
cp "$CONF" "$T/before.conf"
for bad in "size=2M:volume resize" "path=/tmp/x:names the volume's store" "allow_hosts=a:allow' and 'deny" \
	   "bogus=1:unknown key 'bogus'" "read_only=maybe:read_only" "created_file=yes:the target keeps it"; do
	out=$(c volume set vol0 "${bad%%:*}" 2>&1) && fail "set ${bad%%:*} was taken"
	grep -q "${bad#*:}" <<<"$out" || fail "set ${bad%%:*}: no '${bad#*:}' in: $out"
done
out=$(c volume set vol0 read_only=yes bogus=1 2>&1) && fail "a set with one bad pair was taken"
[ "$(field read_only)" = False ] || fail "one bad pair did not stop the good one"
cmp -s "$CONF" "$T/before.conf" || fail "a refused set wrote the config"
c volume set nosuch read_only=yes 2>/dev/null && fail "set on a missing volume worked"
c volume set vol0 2>/dev/null; [ $? = 2 ] || fail "set with no KEY=VALUE is not a usage error"

log "an unread hand edit refuses the set"
echo "# an admin's note" >>"$CONF"
out=$(c volume set vol0 read_only=yes 2>&1) && fail "set wrote over an unread edit"
grep -q "changed on disk" <<<"$out" || fail "no reason: $out"
grep -q "^# an admin's note" "$CONF" || fail "the hand edit is gone"
exit 0
