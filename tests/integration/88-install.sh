#!/bin/bash
# SPDX-License-Identifier: MIT
# make install into a staging root: binaries, units, man pages that man(1)
# renders without a warning, the bash completion (which completes commands,
# volume subcommands and, from a running target, volume names), and the
# config systemd starts from, installed only where there is none: a second
# install keeps an admin's edit byte for byte.
. "$(dirname "$0")/lib.sh"
require_target
require_rblkctl
command -v scdoc >/dev/null || skip "scdoc not installed (tools/install-deps)"
command -v man >/dev/null || skip "man not installed (man-db; tools/install-deps)"

D=$T/stage
inst() { make -s -C "$RBLK_ROOT" install DESTDIR="$D" PREFIX=/usr BUILD="$RBLK_BUILD" >"$T/install.log" 2>&1 ||
	{ cat "$T/install.log"; fail "make install failed"; }; }
inst
for f in usr/bin/rblk-target usr/bin/rblkctl usr/bin/rblk-initiator \
	 usr/lib/systemd/system/rblk-target.service usr/lib/tmpfiles.d/rblk.conf \
	 usr/share/man/man8/rblk-target.8.gz usr/share/man/man8/rblkctl.8.gz \
	 usr/share/man/man8/rblk-initiator.8.gz usr/share/man/man5/rblk-target.conf.5.gz \
	 usr/share/bash-completion/completions/rblkctl etc/rblk/rblk-target.conf; do
	[ -e "$D/$f" ] || fail "make install did not install /$f"
done
"$D/usr/bin/rblk-target" --config "$D/etc/rblk/rblk-target.conf" --check-config ||
	fail "the installed config does not pass --check-config"

for m in "$D"/usr/share/man/man*/*.gz; do
	out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$m" 2>&1 >"$T/page")
	[ -z "$out" ] || fail "man -l ${m##*/} warns: $out"
	name=${m##*/}; name=${name%%.*}
	grep -q "$name" "$T/page" || fail "${m##*/} does not render its name"
	[ "$(wc -l <"$T/page")" -gt 20 ] || fail "${m##*/} renders $(wc -l <"$T/page") lines"
done
grep -q -- "volume set" <(man -l "$D/usr/share/man/man8/rblkctl.8.gz" 2>/dev/null) ||
	fail "rblkctl(8) does not document volume set"

log "completion"
PORT=$(free_port) || skip "no free port"
CONF=$T/t.conf
write_conf "$CONF" uring "$T/vol.img" 1M
start_target "$CONF"
complete_words() {	# words...: what the completion offers after them
	PATH=$RBLK_BUILD:$PATH bash -c '
		. "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		_rblkctl; printf "%s\n" "${COMPREPLY[@]}"' _ "$D/usr/share/bash-completion/completions/rblkctl" "$@"
}
complete_words rblkctl vol | grep -qx volume || fail "rblkctl vol<TAB> does not give volume"
[ "$(complete_words rblkctl volume "" | wc -l)" -ge 9 ] || fail "volume <TAB>: $(complete_words rblkctl volume "")"
complete_words rblkctl volume s | grep -qx set || fail "volume s<TAB> does not offer set"
complete_words rblkctl --socket "$CONF.sock" volume show "" | grep -qx vol0 ||
	fail "volume show <TAB> does not name vol0 from the target"
complete_words rblkctl --socket "$T/nosuch.sock" volume show "" | grep -q . &&
	fail "names offered with no target"
complete_words rblkctl attach --tr | grep -qx -- --transport || fail "attach --tr<TAB>"

log "a second install keeps the admin's config"
echo "# an admin's edit" >>"$D/etc/rblk/rblk-target.conf"
sum=$(sha256sum <"$D/etc/rblk/rblk-target.conf")
inst
[ "$(sha256sum <"$D/etc/rblk/rblk-target.conf")" = "$sum" ] || fail "make install overwrote the config"
grep -q "kept $D/etc/rblk/rblk-target.conf" "$T/install.log" || fail "install did not say it kept the config"
exit 0
