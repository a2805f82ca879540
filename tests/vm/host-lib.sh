# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Host side of a VM suite (sourced by tests/vm/suite-<name>.sh, not run).
#
#   . "$(dirname "$0")/host-lib.sh"
#   vm_require_build rblk-target          # optional: skip if not built
#   vm_suite NAME [vm-run options...]     # never returns
#
# vm_suite exits 77 with a one-line reason when QEMU is missing or the VM
# cannot be prepared (no apt network for the kernel package), otherwise
# boots ONE VM that runs tests/vm/guest/suite-NAME.guest.sh and exits with
# its status; the guest's RBLK-CASE lines pass straight through to tests/run.
# Guest logs land in $RBLK_BUILD/vm/NAME/ (shared read-write, kept after).
# Env: RBLK_VM_TIMEOUT (whole run; default 900 s or the suite's -t), RBLK_VM_MEM, RBLK_VM_CPUS,
# RBLK_VM_CASES (glob: run only matching cases), RBLK_VM_CACHE.
set -u

RBLK_ROOT=${RBLK_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
RBLK_BUILD=${RBLK_BUILD:-$RBLK_ROOT/build}
export RBLK_ROOT RBLK_BUILD
VM_DIR=$RBLK_ROOT/tests/vm

vm_skip() { echo "SKIP: $*"; exit 77; }

vm_require_build() {	# FILE...: relative to $RBLK_BUILD
	local f
	for f; do [ -e "$RBLK_BUILD/$f" ] || vm_skip "$RBLK_BUILD/$f not built (run make)"; done
}

vm_suite() {
	local name=$1 out rc
	shift
	local guest=$VM_DIR/guest/suite-$name.guest.sh
	[ -f "$guest" ] || { echo "vm_suite: $guest missing"; exit 1; }
	command -v qemu-system-x86_64 >/dev/null 2>&1 ||
		vm_skip "qemu-system-x86_64 not installed (apt-get install qemu-system-x86)"
	out=$("$VM_DIR/prepare" -q 2>&1)
	rc=$?
	case $rc in
	0)  ;;
	77) vm_skip "$(echo "$out" | tail -n 1)" ;;
	*)  echo "$out"; echo "vm_suite: tests/vm/prepare failed (exit $rc)"; exit 1 ;;
	esac
	local scratch=$RBLK_BUILD/vm/$name
	rm -rf "$scratch" && mkdir -p "$scratch" || { echo "vm_suite: cannot create $scratch"; exit 1; }
	# A suite's own -t wins over the default; RBLK_VM_TIMEOUT wins over both.
	"$VM_DIR/vm-run" -t 900 -o "$scratch" "$@" ${RBLK_VM_TIMEOUT:+-t "$RBLK_VM_TIMEOUT"} \
		-- bash "$guest"
	rc=$?
	echo "vm_suite: $name exit $rc; guest logs in $scratch"
	exit "$rc"
}
