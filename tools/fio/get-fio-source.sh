#!/bin/bash
# SPDX-License-Identifier: MIT
# Obtains the fio source that matches the installed fio package, configures it
# (an external engine needs the tree's config-host.h), and leaves it at
# CACHE/fio-src (a symlink to the versioned tree, so a later run with the same
# fio version reuses it and never downloads again).
#
#   tools/fio/get-fio-source.sh CACHE_DIR
#
# Debian only ships fio without headers, so the source comes from the Debian
# source package (deb-src).  If no deb-src entry exists, one is added in a new
# file /etc/apt/sources.list.d/rblk-deb-src.sources mirroring the URIs and
# suites of debian.sources (nothing existing is edited).  Exits 0 when
# CACHE/fio-src/config-host.h exists at the end, non-zero with a one-line
# reason otherwise.
set -u

cache=${1:?usage: get-fio-source.sh CACHE_DIR}
die() { echo "get-fio-source: $*" >&2; exit 1; }

command -v fio >/dev/null 2>&1 || die "fio is not installed (apt-get install fio)"
debver=$(dpkg-query -W -f='${Version}' fio 2>/dev/null) ||
	die "fio is not a Debian package here; set FIO_SRC to a configured fio source tree"
# A directory per package version: an upgraded fio gets a fresh tree.
vdir=$cache/fio-$debver
mkdir -p "$cache" || die "cannot create $cache"

if [ -f "$vdir/.rblk-ready" ] && [ -f "$(cat "$vdir/.rblk-ready")/config-host.h" ]; then
	ln -sfn "$(cat "$vdir/.rblk-ready")" "$cache/fio-src"
	exit 0
fi

have_deb_src() {
	grep -qsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list \
		/etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources
}
if ! have_deb_src; then
	src=/etc/apt/sources.list.d/debian.sources
	new=/etc/apt/sources.list.d/rblk-deb-src.sources
	[ -f "$src" ] || die "no deb-src entry and no $src to mirror; enable deb-src for fio by hand"
	[ -w /etc/apt/sources.list.d ] || die "no deb-src entry and not root: cannot enable deb-src"
	echo "get-fio-source: adding deb-src entries in $new (mirrors $src)"
	sed 's/^Types:.*/Types: deb-src/' "$src" >"$new.tmp" && mv "$new.tmp" "$new" ||
		die "cannot write $new"
	timeout 300 apt-get update -qq || die "apt-get update failed (no network to the Debian mirror?)"
fi

rm -rf "$vdir.tmp"
mkdir -p "$vdir.tmp" || die "cannot create $vdir.tmp"
echo "get-fio-source: apt-get source fio=$debver into $vdir"
if ! (cd "$vdir.tmp" && timeout 600 apt-get source -qq "fio=$debver" >/dev/null 2>&1 ||
      timeout 600 apt-get source -qq fio >/dev/null 2>&1); then
	# deb-src may exist but its package lists may be stale.
	timeout 300 apt-get update -qq >/dev/null 2>&1
	(cd "$vdir.tmp" && timeout 600 apt-get source -qq "fio=$debver" >/dev/null 2>&1) ||
		{ rm -rf "$vdir.tmp"; die "apt-get source fio=$debver failed (deb-src unreachable?)"; }
fi
tree=$(find "$vdir.tmp" -mindepth 1 -maxdepth 1 -type d -name 'fio-*' | head -n 1)
[ -n "$tree" ] && [ -f "$tree/ioengines.h" ] ||
	{ rm -rf "$vdir.tmp"; die "apt-get source did not unpack a fio tree"; }
rm -rf "$vdir" && mv "$vdir.tmp" "$vdir" || die "cannot move tree into $vdir"
tree=$vdir/${tree##*/}

# fio's own configure writes config-host.h (and config-host.mak for building
# fio itself); without it fio's headers clash with glibc.
echo "get-fio-source: configuring $tree"
(cd "$tree" && ./configure >configure.log 2>&1) ||
	die "fio ./configure failed: see $tree/configure.log"
[ -f "$tree/config-host.h" ] || die "fio ./configure made no config-host.h"
echo "$tree" >"$vdir/.rblk-ready"
ln -sfn "$tree" "$cache/fio-src"
echo "get-fio-source: ready: $cache/fio-src -> $tree"
