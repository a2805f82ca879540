#!/bin/bash
# SPDX-License-Identifier: MIT
# The target refuses a config with a bad control-plane key, naming the line
# and the field, and starts nothing (no socket, no listener).
. "$(dirname "$0")/lib.sh"
require_target

PORT=$(free_port) || skip "no free port"
n=0
# refused NAME LINE FIELD-PATTERN: appends nothing; CONF already written.
check_refused() {
	local what=$1 line=$2 pat=$3 out
	n=$((n + 1))
	if out=$(timeout 20 "$TARGET_BIN" --config "$T/c$n.conf" 2>&1); then
		fail "$what: target accepted the config"
	fi
	grep -q "c$n.conf:$line: .*$pat" <<<"$out" || fail "$what: message lacks line $line / '$pat': $out"
	[ ! -e "$T/c$n.conf.sock" ] || fail "$what: admin socket created for a refused config"
	echo "refused ($what): $(grep -m1 "c$n.conf:" <<<"$out")"
}
base() {
	cat >"$T/c$((n + 1)).conf" <<CONF
[target]
listen_tcp = 127.0.0.1:$PORT
admin_socket = $T/c$((n + 1)).conf.sock
CONF
}

base; echo "volume_dir = relative/dir" >>"$T/c$((n + 1)).conf"
check_refused "relative volume_dir" 4 "field 'volume_dir'"
base; echo "admin_socket = /tmp/again" >>"$T/c$((n + 1)).conf"
check_refused "admin_socket twice" 4 "admin_socket' given twice"
base; sed -i "s|^admin_socket = .*|admin_socket = /$(printf 'x%.0s' $(seq 120))|" "$T/c$((n + 1)).conf"
check_refused "admin_socket too long" 3 "field 'admin_socket'"
base; printf '\n[volume v]\npath = %s/v.img\nsize = 1M\nallow_hosts = good, bad/host\n' "$T" >>"$T/c$((n + 1)).conf"
check_refused "bad host in allow_hosts" 8 "field 'allow_hosts': 'bad/host'"
base; printf '\n[volume v]\npath = %s/v.img\nsize = 1M\nallow_hosts = a, a\n' "$T" >>"$T/c$((n + 1)).conf"
check_refused "duplicate host" 8 "listed twice"
base; printf '\n[volume v]\npath = %s/v.img\nsize = 1M\nsecret_file = key\n' "$T" >>"$T/c$((n + 1)).conf"
check_refused "relative secret_file" 8 "field 'secret_file'"
base; printf '\n[volume v]\npath = %s/v.img\nsize = 10Q\n' "$T" >>"$T/c$((n + 1)).conf"
check_refused "bad size" 7 "field 'size'"
base; printf '\n[volume a/b]\npath = %s/v.img\nsize = 1M\n' "$T" >>"$T/c$((n + 1)).conf"
check_refused "name with /" 5 "invalid volume name"
base; printf '\n[volume ..]\npath = %s/v.img\nsize = 1M\n' "$T" >>"$T/c$((n + 1)).conf"
check_refused "name .." 5 "invalid volume name"
base; printf '\n[volume v]\npath = %s/v.img\nsize = 1M\nallowed_hosts = a\n' "$T" >>"$T/c$((n + 1)).conf"
check_refused "misspelt key" 8 "unknown field 'allowed_hosts'"
# Control characters in a value (here a backspace in the path).
base; printf '\n[volume v]\npath = %s/v\x08.img\nsize = 1M\n[volume v]\n' "$T" >>"$T/c$((n + 1)).conf"
check_refused "duplicate volume after a control char path" 8 "duplicate volume name"

log "the same keys, valid, are accepted (--check-config)"
head -c 32 /dev/urandom >"$T/key" && chmod 600 "$T/key"
base; printf 'volume_dir = %s/vols\n\n[volume v]\npath = %s/v.img\nsize = 1M\nallow_hosts = a, 10.0.0.1, ::1\nsecret_file = %s/key\n' "$T" "$T" "$T" >>"$T/c$((n + 1)).conf"
out=$("$TARGET_BIN" --config "$T/c$((n + 1)).conf" --check-config) || fail "valid config refused"
echo "$out"
grep -q "OK: 1 volume" <<<"$out" || fail "valid config not fully read: $out"
target_log_clean
echo PASS
