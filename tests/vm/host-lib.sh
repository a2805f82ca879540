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

# The names of a guest suite's cases, in order: the literal top-level
# "run_case [-t SECS] [-W] NAME ..." lines (suites keep them that way so
# that the host can name the cases a dead guest never ran).
vm_case_names() {	# guest-script
	awk '$1 == "run_case" {
		for (i = 2; i <= NF; i++) {
			if ($i == "-t") { i++; continue }
			if ($i ~ /^-/) continue
			print $i; break
		}
	}' "$1"
}

# The first lines of a kernel crash in a console log (empty if none).
vm_crash_lines() {	# console-log [lines]
	awk -v n="${2:-6}" '
		!on && /(Oops|BUG:|Kernel panic|general protection fault|double fault|kernel BUG|Unable to handle)/ { on = 1 }
		on && n-- > 0 { print }' "$1"
}

# One line naming a console log's kernel crash: its first Oops line, else
# its first crash line; without the timestamp.  Empty if none.
vm_crash_reason() {	# console-log
	local l
	l=$(grep -m1 'Oops:' "$1")
	[ -n "$l" ] || l=$(vm_crash_lines "$1" 1)
	echo "$l" | sed 's/^\[ *[0-9.]*\] //'
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
	local scratch=$RBLK_BUILD/vm/$name attempt console crash started
	# A guest that dies before its first case started crashed while
	# booting (an infrastructure fault, not a test result): boot it again,
	# at most twice, and say so.  A guest that dies later is never retried.
	for attempt in 1 2 3; do
		rm -rf "$scratch" && mkdir -p "$scratch" || { echo "vm_suite: cannot create $scratch"; exit 1; }
		console=$RBLK_BUILD/vm/$name.console.$attempt
		# A suite's own -t wins over the default; RBLK_VM_TIMEOUT wins over both.
		"$VM_DIR/vm-run" -t 900 -o "$scratch" "$@" ${RBLK_VM_TIMEOUT:+-t "$RBLK_VM_TIMEOUT"} \
			-- bash "$guest" 2>&1 | tee "$console"
		rc=${PIPESTATUS[0]}
		grep -q '^=== case \|^RBLK-CASE: ' "$console" && started=1 || started=0
		[ "$rc" = 125 ] && [ "$started" = 0 ] && [ "$attempt" -lt 3 ] || break
		echo "vm_suite: $name: the guest died while booting (attempt $attempt of 3); booting again. The crash:"
		crash=$(vm_crash_lines "$console" 8)
		echo "${crash:-(no kernel crash lines on the console)}" | sed 's/^/vm_suite:   | /'
	done
	# The guest died or hung in the middle: every case it did not report
	# fails by name, with the first line of the crash.
	if [ "$rc" = 125 ] || [ "$rc" = 124 ]; then
		local why n
		if [ "$rc" = 124 ]; then
			why="guest hung (vm-run timeout)"
		else
			crash=$(vm_crash_reason "$console")
			why="guest died${crash:+ ($crash)}"
			[ "$started" = 0 ] && why="guest died while booting, 3 times${crash:+ (last: $crash)}"
		fi
		while read -r n; do
			# shellcheck disable=SC2053
			[[ $n == ${RBLK_VM_CASES:-*} ]] || continue
			grep -q "^RBLK-CASE: [A-Z]* $n\( \|$\)" "$console" ||
				echo "RBLK-CASE: FAIL $n $why"
		done < <(vm_case_names "$guest")
	fi
	echo "vm_suite: $name exit $rc; guest logs in $scratch"
	exit "$rc"
}
