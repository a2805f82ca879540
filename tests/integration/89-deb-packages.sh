#!/bin/bash
# SPDX-License-Identifier: MIT
# The Debian packages: dpkg-buildpackage -us -uc -b builds rblk-target and
# rblk-initiator from a clean copy of the tree; both install; the installed
# rblk-target passes --check-config with the installed config; man pages,
# units, tmpfiles entry and completion are where they belong; purging
# both leaves none of their files behind.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (dpkg -i)"
command -v dpkg-buildpackage >/dev/null || skip "dpkg-buildpackage missing (dpkg-dev)"
command -v dh >/dev/null || skip "debhelper missing (tools/install-deps)"
command -v git >/dev/null || skip "git missing: the clean copy is the tracked files"
git -C "$RBLK_ROOT" rev-parse --git-dir >/dev/null 2>&1 || skip "not a git checkout"
for p in rblk-target rblk-initiator; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q installed &&
		skip "package $p is installed on this machine: not touching it"
done
# Purging would remove a config that dpkg takes for its own.
[ -e /etc/rblk/rblk-target.conf ] && skip "/etc/rblk/rblk-target.conf exists (an admin's): not installing over it"

SRC=$T/src/rblk
mkdir -p "$SRC"
git -C "$RBLK_ROOT" ls-files -z | (cd "$RBLK_ROOT" && tar --null -T - -cf -) | tar -C "$SRC" -xf - ||
	fail "copying the tree"
t0=$(date +%s)
(cd "$SRC" && dpkg-buildpackage -us -uc -b) >"$T/build.log" 2>&1 ||
	{ tail -n 30 "$T/build.log"; fail "dpkg-buildpackage failed"; }
log "packages built in $(( $(date +%s) - t0 )) s: $(cd "$T/src" && ls ./*.deb | tr '\n' ' ')"
ver=$(dpkg-parsechangelog -l "$RBLK_ROOT/debian/changelog" -S Version)
tdeb=$T/src/rblk-target_${ver}_$(dpkg --print-architecture).deb
ideb=$T/src/rblk-initiator_${ver}_$(dpkg --print-architecture).deb
[ -f "$tdeb" ] && [ -f "$ideb" ] || fail "no rblk-target / rblk-initiator .deb for $ver"

purge() { dpkg --purge rblk-target rblk-initiator >>"$T/purge.log" 2>&1; }
trap 'purge; _cleanup' EXIT
dpkg -i "$tdeb" "$ideb" >"$T/install.log" 2>&1 || { cat "$T/install.log"; fail "dpkg -i failed"; }

for f in /usr/bin/rblk-target /usr/bin/rblkctl /usr/bin/rblk-initiator \
	 /lib/systemd/system/rblk-target.service /lib/systemd/system/rblk-attach@.service \
	 /usr/lib/tmpfiles.d/rblk.conf /etc/rblk/rblk-target.conf \
	 /usr/share/man/man8/rblkctl.8.gz /usr/share/man/man5/rblk-target.conf.5.gz \
	 /usr/share/bash-completion/completions/rblkctl; do
	[ -e "$f" ] || fail "$f not installed"
done
dpkg-query -W -f='${Conffiles}\n' rblk-target | grep -q /etc/rblk/rblk-target.conf ||
	fail "/etc/rblk/rblk-target.conf is not a conffile"
out=$(/usr/bin/rblk-target --config /etc/rblk/rblk-target.conf --check-config 2>&1) ||
	fail "the installed config fails --check-config: $out"
log "$out"
[[ $(/usr/bin/rblkctl --version) == "rblkctl $ver"* ]] || fail "installed rblkctl --version: $(/usr/bin/rblkctl --version)"
MANWIDTH=80 man rblkctl 2>/dev/null | grep -q "volume set" || fail "man rblkctl does not show the page"
MANWIDTH=80 man 5 rblk-target.conf 2>/dev/null | grep -q "allow_any_host" || fail "man 5 rblk-target.conf"
grep -q "^ExecStart=/usr/bin/rblk-target --config /etc/rblk/rblk-target.conf" /lib/systemd/system/rblk-target.service ||
	fail "the unit does not run the packaged binary with the packaged config"
if command -v systemd-analyze >/dev/null; then
	systemd-analyze verify /lib/systemd/system/rblk-target.service >"$T/verify.log" 2>&1 ||
		{ cat "$T/verify.log"; fail "systemd-analyze verify rblk-target.service"; }
fi

purge || { cat "$T/purge.log"; fail "dpkg --purge failed"; }
trap _cleanup EXIT
for f in /usr/bin/rblk-target /usr/bin/rblkctl /etc/rblk/rblk-target.conf \
	 /lib/systemd/system/rblk-target.service /usr/share/man/man8/rblkctl.8.gz; do
	[ -e "$f" ] && fail "$f left after purge"
done
exit 0
