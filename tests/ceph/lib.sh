# SPDX-License-Identifier: MIT
# Helpers for tests that need a Ceph cluster (sourced, after
# tests/integration/lib.sh on the host or tests/vm/guest/lib.sh in a guest).
#
#   ceph_up [-b] [ceph-up args]   start a private cluster in $CEPH_DIR
#                                 (default $T/ceph or $CASE_TMP/ceph), source
#                                 its env; skips (exit 77) with ceph-up's
#                                 reason where none can start; stopped and
#                                 removed when the shell exits
#   ceph_cli ARGS / rbd_admin ARGS   ceph / rbd as client.admin
#   rbd_rblk ARGS                 rbd as client.rblk (what the target uses)
#   osd_pid, osd_kill [SIG], osd_start   the OSD daemon
CEPH_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

ceph_up() {
	local out rc
	CEPH_DIR=${CEPH_DIR:-${T:-${CASE_TMP:-/tmp}}/ceph}
	out=$("$CEPH_LIB_DIR/ceph-up" -d "$CEPH_DIR" "$@" 2>&1)
	rc=$?
	if [ $rc -eq 77 ]; then
		echo "SKIP: $(tail -n 1 <<<"$out")"
		exit 77
	fi
	if [ $rc -ne 0 ]; then
		echo "$out"
		echo "FAIL: ceph-up failed (exit $rc)" >&2
		exit 1
	fi
	tail -n 1 <<<"$out"
	# shellcheck disable=SC1091
	. "$CEPH_DIR/env"
	_ceph_prev_trap=$(trap -p EXIT | sed "s/^trap -- '\(.*\)' EXIT$/\1/")
	# Stop the cluster before the caller's own cleanup removes its folder.
	trap '"$CEPH_LIB_DIR/ceph-down" "$CEPH_DIR" >/dev/null 2>&1; '"$_ceph_prev_trap" EXIT
}

ceph_cli()  { timeout 60 ceph -c "$CEPH_CONF" --connect-timeout 30 "$@"; }
rbd_admin() { timeout 120 rbd -c "$CEPH_CONF" --id admin --keyring "$CEPH_ADMIN_KEYRING" "$@"; }
rbd_rblk()  { timeout 120 rbd -c "$CEPH_CONF" --id rblk --keyring "$CEPH_RBLK_KEYRING" "$@"; }

osd_pid() { cat "$CEPH_DIR/run/osd.0.pid" 2>/dev/null; }
# osd_kill [SIG]: signals the OSD (default KILL) and, for KILL/TERM, waits
# until it is gone.
osd_kill() {
	local sig=${1:-KILL} p
	p=$(osd_pid) || return 1
	kill "-$sig" "$p" || return 1
	case $sig in
	KILL|TERM|9|15)
		for _ in $(seq 200); do kill -0 "$p" 2>/dev/null || return 0; sleep 0.05; done
		return 1 ;;
	esac
}
# osd_start: starts the OSD again on its data (bluestore keeps it).
osd_start() { ceph-osd -c "$CEPH_CONF" -i 0 >>"$CEPH_DIR/log/osd.0.out" 2>&1; }

# ceph_test_prelude: what an integration test of the rbd backend needs
# (the target, the fio engine, rblkctl, python3, a target built with
# librbd), then a private cluster (ceph_up -b -s 2048).  Skips otherwise.
# RBLK_CASES='discard admin' then runs only these cases (a glob per word).
ceph_test_prelude() {
	require_target
	require_fio_engine
	require_rblkctl
	require_python3
	grep -qa 'rbd image %s/%s' "$TARGET_BIN" ||
		skip "rblk-target built without the rbd backend (librbd-dev missing)"
	if [ -n "${RBLK_CASES:-}" ]; then
		eval "_run_case_all() $(declare -f run_case | tail -n +2)"
		run_case() {
			local c
			for c in $RBLK_CASES; do
				# shellcheck disable=SC2053
				[[ $1 == $c ]] && { _run_case_all "$@"; return; }
			done
		}
	fi
	ceph_up -b -s 2048
}
