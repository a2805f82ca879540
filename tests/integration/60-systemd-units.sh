#!/bin/bash
# SPDX-License-Identifier: MIT
# `make install` puts the systemd units and the tmpfiles.d entry where
# systemd looks (PREFIX, DESTDIR honoured, installed paths inside the
# units, never the DESTDIR); `systemd-analyze verify` accepts
# rblk-target.service and an instance of rblk-attach@.service with no
# complaint (and does complain about a broken copy, so its silence means
# something); systemd-tmpfiles creates /run/rblk from rblk.conf.  None of
# this needs a running systemd.
. "$(dirname "$0")/lib.sh"
require_target
command -v systemd-analyze >/dev/null ||
	skip "systemd-analyze not installed (tools/install-deps installs the systemd package)"

inst() { make -s -C "$RBLK_ROOT" BUILD="$RBLK_BUILD" install "$@" >"$T/make.log" 2>&1 ||
	{ cat "$T/make.log"; fail "make install $*"; }; }

log "make install DESTDIR=... PREFIX=/usr/local"
inst DESTDIR="$T/stage" PREFIX=/usr/local
U=$T/stage/usr/local/lib/systemd/system
for f in "$U/rblk-target.service" "$U/rblk-attach@.service" \
	 "$T/stage/usr/local/lib/tmpfiles.d/rblk.conf" "$T/stage/usr/local/bin/rblk-target"; do
	[ -f "$f" ] || fail "not installed: ${f#"$T"/stage}"
done
grep -qx 'ExecStart=/usr/local/bin/rblk-target --config /etc/rblk/rblk-target.conf' "$U/rblk-target.service" ||
	fail "ExecStart does not name the installed binary and config: $(grep ^ExecStart= "$U/rblk-target.service")"
grep -q "$T" "$U"/*.service && fail "DESTDIR leaked into a unit"
grep -q '@[A-Z]*@' "$U"/*.service && fail "placeholder left in a unit: $(grep -h '@[A-Z]*@' "$U"/*.service)"
grep -qx 'Type=notify' "$U/rblk-target.service" || fail "rblk-target.service is not Type=notify"
grep -qx 'ExecReload=/bin/kill -HUP $MAINPID' "$U/rblk-target.service" ||
	fail "systemctl reload does not send SIGHUP (the target's config reload)"
grep -q -- '--volume %i' "$U/rblk-attach@.service" || fail "rblk-attach@ does not attach the instance's volume"
grep -q '^ExecStart=/usr/local/bin/rblkctl attach --foreground ' "$U/rblk-attach@.service" ||
	fail "rblk-attach@ does not run the supervisor (rblkctl attach --foreground): $(grep ^ExecStart= "$U/rblk-attach@.service")"

log "systemd-tmpfiles creates /run/rblk"
if command -v systemd-tmpfiles >/dev/null; then
	mkdir -p "$T/root"
	systemd-tmpfiles --create --root="$T/root" "$T/stage/usr/local/lib/tmpfiles.d/rblk.conf" 2>"$T/tmpfiles.err" ||
		{ cat "$T/tmpfiles.err"; fail "systemd-tmpfiles --create"; }
	[ -d "$T/root/run/rblk" ] || fail "/run/rblk not created"
	[ "$(stat -c %a "$T/root/run/rblk")" = 755 ] || fail "/run/rblk mode $(stat -c %a "$T/root/run/rblk")"
else
	echo "systemd-tmpfiles not installed: tmpfiles check not run"
fi

# verify needs the ExecStart binaries to exist: a real (temporary) prefix.
log "systemd-analyze verify"
inst PREFIX="$T/pfx" SYSCONFDIR="$T/pfx/etc"
U=$T/pfx/lib/systemd/system
# verify: UNIT...: systemd-analyze verify, fails on any complaint about
# these files (exit status alone misses unknown keys and bad values).
verify() {
	systemd-analyze verify --man=no "$@" >"$T/verify.out" 2>&1
	local rc=$?
	if [ $rc -ne 0 ] || grep -q -e rblk -e "$T" "$T/verify.out"; then
		sed 's/^/    /' "$T/verify.out"
		return 1
	fi
	return 0
}
verify "$U/rblk-target.service" || fail "rblk-target.service does not verify"
verify "$U/rblk-attach@vol1.service" || fail "rblk-attach@vol1.service does not verify"

# The checker must see a broken unit, or its silence above proves nothing.
sed 's/^Type=notify/Type=notfy/' "$U/rblk-target.service" >"$T/rblk-broken.service"
echo "Frobnicate=yes" >>"$T/rblk-broken.service"
verify "$T/rblk-broken.service" && fail "systemd-analyze verify did not flag a broken unit"
grep -q "notfy" "$T/verify.out" || fail "bad Type= not reported: $(cat "$T/verify.out")"
echo PASS
