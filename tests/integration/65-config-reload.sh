#!/bin/bash
# SPDX-License-Identifier: MIT
# The config workflow (docs/admin.md, "Editing the config"):
#  - a hand edit the target has not read is never overwritten: an rblkctl
#    change finds the file changed and refuses, the edit stays;
#  - rblkctl reload and SIGHUP apply the edit: volumes added and removed
#    (their files kept), a store changed, allow_hosts and secrets changed;
#  - all or nothing: a file that does not parse, a store that does not
#    open, an unusable secret or a session on a volume that would go
#    change nothing, and the answer and the log say why;
#  - a session of a volume that did not change is not touched.
. "$(dirname "$0")/lib.sh"
require_target
require_rblkctl
require_login
require_python3

head -c 32 /dev/urandom >"$T/k1.key"
head -c 32 /dev/urandom >"$T/k2.key"
chmod 600 "$T/k1.key" "$T/k2.key"
PORT=$(free_port) || skip "no free port"
CONF=$T/t.conf
write_conf "$CONF" uring "$T/open.img" 16M
sed -i "/^admin_socket/a volume_dir = $T/vols" "$CONF"
cat >>"$CONF" <<CONF

[volume keep]
path = $T/keep.img
size = 16M
allow_hosts = hostA
CONF
start_target "$CONF"
c() { ctl "$CONF" "$@"; }
login() {
	local host=$1 vol=$2; shift 2
	OUT=$("$LOGIN" --host "$host" "$@" 127.0.0.1 "$PORT" "$vol" 2>&1); RC=$?
}
expect_login() {	# RC-WANTED HOST VOLUME [args]
	local want=$1; shift
	login "$@"
	[ "$RC" = "$want" ] || fail "login $*: rc $RC, want $want: $OUT"
}
names() { c volume list --json | jget '" ".join(sorted(v["name"] for v in d["volumes"]))'; }

# A session on vol0 for the whole test: no reload may touch it.
"$LOGIN" --host holder --io 1 --hold 60 127.0.0.1 "$PORT" vol0 >"$T/holder.out" 2>&1 &
HOLDER=$!
_cleanup_pids+=("$HOLDER")
for _ in $(seq 100); do grep -q "logged in to volume vol0" "$T/target.log" && break; sleep 0.05; done
sid=$(c volume show vol0 --json | jget 'd["volume"]["session_list"][0]["id"]') || fail "no session on vol0"

log "a hand edit, then an rblkctl change: refused, the edit stays"
cat >>"$CONF" <<EOF

[volume scratch]
path = $T/scratch.img
size = 8M
allow_any_host = yes
EOF
cp "$CONF" "$T/edited.conf"
if out=$(c volume create x --size 64M --allow-any-host 2>&1); then
	fail "rblkctl wrote over a hand edit: $out"
fi
echo "$out"
grep -q "changed on disk since the target read it" <<<"$out" || fail "unclear refusal: $out"
grep -q "rblkctl reload" <<<"$out" || fail "the refusal does not say what to do: $out"
cmp -s "$CONF" "$T/edited.conf" || fail "the hand edit was changed"
[ "$(names)" = "keep vol0" ] || fail "volumes changed: $(names)"
grep -q "refused: config .* changed on disk" "$T/target.log" || fail "the refusal is not in the target log"

log "rblkctl reload applies it; then rblkctl writes again"
out=$(c reload) || fail "reload: $out"
echo "$out"
grep -q "added: *scratch" <<<"$out" || fail "reload did not report scratch added: $out"
[ "$(names)" = "keep scratch vol0" ] || fail "after reload: $(names)"
expect_login 0 anyhost scratch --io 2
grep -q "config $CONF reloaded: added scratch" "$T/target.log" || fail "reload not logged"
c volume create x --size 1M --allow-any-host || fail "rblkctl change after the reload"
grep -q "^\[volume scratch\]" "$CONF" || fail "the reloaded edit was lost by the next write"

log "SIGHUP: a removed volume goes (its file stays), ACL and secret changes apply"
expect_login 0 hostA keep
python3 - "$CONF" "$T" <<'PY'
import re, sys
conf, t = sys.argv[1], sys.argv[2]
s = open(conf).read()
s = re.sub(r"\n\[volume x\]\n(?:[^\[\n][^\n]*\n)*", "\n", s)	# x removed
s = s.replace("allow_hosts = hostA", "allow_hosts = hostB")	# keep: new ACL
s = s.replace("[volume scratch]\n", "[volume scratch]\nsecret_file = %s/k1.key\n" % t)
open(conf, "w").write(s)
PY
kill -HUP "$TARGET_PID"
for _ in $(seq 100); do grep -q "reloaded: removed (files kept) x" "$T/target.log" && break; sleep 0.05; done
grep "reloaded: " "$T/target.log" | tail -n 1
grep -q "reloaded: removed (files kept) x; changed keep, scratch" "$T/target.log" ||
	fail "SIGHUP did not apply the edit: $(grep reload "$T/target.log" | tail -n 3)"
[ "$(names)" = "keep scratch vol0" ] || fail "after SIGHUP: $(names)"
[ -e "$T/vols/x.img" ] || fail "the removed volume's file went"
expect_login 1 hostA keep
grep -q "access denied" <<<"$OUT" || fail "hostA after the ACL change: $OUT"
expect_login 0 hostB keep
expect_login 1 anyhost scratch
expect_login 0 anyhost scratch --secret "$T/k1.key" --io 1

log "a rotated secret (same file name, new bytes) is picked up"
cp "$T/k2.key" "$T/k1.key"
out=$(c reload) || fail "reload: $out"
grep -q "changed: *scratch" <<<"$out" || fail "new secret bytes not seen: $out"

log "all or nothing: bad edits change nothing and say why"
cp "$CONF" "$T/good.conf"
nochange() {	# WHAT PATTERN: reload refused saying PATTERN, nothing changed
	local what=$1 pat=$2 out
	if out=$(c reload 2>&1); then fail "$what: reload accepted: $out"; fi
	grep -q -- "$pat" <<<"$out" || fail "$what: reload answer lacks '$pat': $out"
	log "refused ($what): $out"
	[ "$(names)" = "keep scratch vol0" ] || fail "$what: volumes changed: $(names)"
	expect_login 0 hostB keep
	expect_login 1 hostA keep
	[ ! -e "$T/new.img" ] || fail "$what: the refused reload left new.img"
	cp "$T/good.conf" "$CONF"
}
# A good new volume next to each bad edit: it must not appear either.
newvol="[volume new]
path = $T/new.img
size = 8M
allow_any_host = yes"
printf '\n%s\n[volume bad]\npath = %s/bad.img\nsize = 12Q\n' "$newvol" "$T" >>"$CONF"
sed -i 's/allow_hosts = hostB/allow_hosts = hostA/' "$CONF"
nochange "does not parse" "t.conf:[0-9]*: volume 'bad': field 'size'"
printf '\n%s\n[volume bad]\npath = %s/no-such-dir/bad.img\nsize = 8M\n' "$newvol" "$T" >>"$CONF"
nochange "store does not open" "no-such-dir/bad.img"
chmod 644 "$T/k2.key"
sed -i "s|secret_file = .*|secret_file = $T/k2.key|" "$CONF"
printf '\n%s\n' "$newvol" >>"$CONF"
nochange "secret readable by others" "mode 0644"
chmod 600 "$T/k2.key"
python3 - "$CONF" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
open(sys.argv[1], "w").write(re.sub(r"\n\[volume vol0\]\n(?:[^\[\n][^\n]*\n)*", "\n", s) + "\n[volume new]\npath = " + sys.argv[1].rsplit("/", 1)[0] + "/new.img\nsize = 8M\n")
PY
nochange "removing a volume with a session" "vol0 has 1 session(s) attached"
sed -i "0,/^path = .*open.img$/s||path = $T/other.img|" "$CONF"
nochange "changing the store of a volume with a session" "vol0 has 1 session(s) attached"
grep -q "admin: config.reload refused: .*t.conf:[0-9]*: volume 'bad': field 'size'" "$T/target.log" ||
	fail "a refused reload is not logged with its reason"
grep -q "admin: config.reload refused: volume vol0 has 1 session(s) attached" "$T/target.log" ||
	fail "a reload refused for a session is not logged"
kill -HUP "$TARGET_PID"
sleep 0.5
cp "$T/good.conf" "$CONF"
printf '\n[volume bad]\nsize = 1Q\n' >>"$CONF"
kill -HUP "$TARGET_PID"
for _ in $(seq 100); do grep -q "SIGHUP: config reload refused" "$T/target.log" && break; sleep 0.05; done
grep -q "SIGHUP: config reload refused: .*t.conf:[0-9]*: .*nothing changed" "$T/target.log" ||
	fail "a refused SIGHUP reload is not logged with its reason"
cp "$T/good.conf" "$CONF"

log "a store change of a volume without session replaces it; [target] keys wait"
truncate -s 4M "$T/keep2.img"
sed -i "s|^path = $T/keep.img$|path = $T/keep2.img\nsize = 4M|" "$CONF"
python3 - "$CONF" <<'PY'
import sys
s = open(sys.argv[1]).read()
head, sep, tail = s.partition("[volume keep]\n")
body, nxt, rest = tail.partition("\n[")
body = "\n".join(l for l in body.split("\n") if l != "size = 16M")
open(sys.argv[1], "w").write(head + sep + body + nxt + rest)
PY
grep -A4 "^\[volume keep\]" "$CONF"
sed -i "s|^listen_tcp = .*|&, 127.0.0.1:1|" "$CONF"
out=$(c reload --json) || fail "reload: $out"
echo "$out"
[ "$(jget '" ".join(d["changed"])' <<<"$out")" = keep ] || fail "keep not replaced: $out"
[ "$(jget '" ".join(d["restart_needed"])' <<<"$out")" = listen_tcp ] || fail "restart_needed: $out"
[ "$(c volume show keep --json | jget 'd["volume"]["path"]')" = "$T/keep2.img" ] || fail "keep's store not replaced"
[ "$(c volume show keep --json | jget 'd["volume"]["size"]')" = $((4 << 20)) ] || fail "keep's size"

log "the session of vol0 went through all of it"
[ "$(c volume show vol0 --json | jget 'd["volume"]["session_list"][0]["id"]')" = "$sid" ] ||
	fail "vol0's session was replaced"
kill -USR1 "$HOLDER"
wait "$HOLDER"; rc=$?
cat "$T/holder.out"
[ "$rc" = 0 ] && grep -q "after-hold=ok" "$T/holder.out" || fail "the vol0 session was disturbed"
grep -q "disconnecting session" "$T/target.log" && fail "a reload disconnected a session"
stop_target TERM
target_log_clean
echo PASS
