#!/bin/bash
# SPDX-License-Identifier: MIT
# One name for each thing on the client side: --target / fio target= is
# the target's address, --hostname / fio hostname= the name this host logs
# in as.  discover's old --host is refused with the new names; fio's old
# host= (which named the target) still works, with a warning, and given
# with target= it is refused.  The login name really is hostname=: a
# volume open to one host name only is reached with it, not without.
. "$(dirname "$0")/lib.sh"
require_target
require_rblkctl
require_fio_engine

start_admin_target 4M
ctl "$CONF" volume create only --size 1M >/dev/null || fail "volume create only"
ctl "$CONF" volume allow only alice >/dev/null || fail "volume allow only alice"

fio_rw() {	# fio engine options...: a 64k write + verify on vol0
	timeout 60 "$FIO_BIN" --name=n --ioengine="$FIO_ENGINE" "$@" --port="$PORT" \
		--rw=write --bs=4k --size=64k --verify=crc32c --verify_state_save=0 \
		--rblk_timeout=5 --ctrl_loss_tmo=0 2>&1
}

out=$("$RBLKCTL_BIN" discover --target "127.0.0.1:$PORT" --host alice 2>&1)
rc=$?
[ "$rc" = 2 ] || fail "discover --host: exit $rc, want 2"
grep -q -- "--host is now --hostname" <<<"$out" || fail "discover --host does not name --hostname: $out"
out=$("$RBLKCTL_BIN" discover --target "127.0.0.1:$PORT" --hostname alice) || fail "discover --hostname alice"
grep -qw only <<<"$out" || fail "discover --hostname alice does not list 'only': $out"
out=$("$RBLKCTL_BIN" discover --target "127.0.0.1:$PORT" --hostname bob) || fail "discover --hostname bob"
grep -qw only <<<"$out" && fail "discover --hostname bob lists alice's volume"

out=$(fio_rw --target=127.0.0.1 --volume=vol0) || fail "fio target=: $out"
grep -q "deprecated" <<<"$out" && fail "fio target= warns: $out"
out=$(fio_rw --host=127.0.0.1 --volume=vol0) || fail "fio host= (old spelling) failed: $out"
grep -q "host= is deprecated: it names the target, use target=" <<<"$out" ||
	fail "fio host= gives no deprecation line: $out"
out=$(fio_rw --target=127.0.0.1 --host=127.0.0.1 --volume=vol0) &&
	fail "fio with target= and host= ran"
grep -q "give target= only" <<<"$out" || fail "no reason for target= with host=: $out"
out=$(fio_rw --target=127.0.0.1 --volume=only --hostname=alice) || fail "fio hostname=alice on 'only': $out"
out=$(fio_rw --target=127.0.0.1 --volume=only --hostname=bob) && fail "fio hostname=bob reached alice's volume"
exit 0
