# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Case runner for guest-side VM suites (sourced, not run).  One VM boot runs
# many cases; each case reports one line that tests/run counts:
#   RBLK-CASE: PASS|FAIL|SKIP <name> [reason]
#
# A suite (tests/vm/guest/suite-<name>.guest.sh) looks like:
#
#   . "$(dirname "$0")/lib.sh"
#   case_ping() { ip=$(rxe-up) || fail "rxe-up"; ...; }
#   run_case rxe-ping case_ping
#   run_case -t 300 big-one case_big arg1 arg2
#   cases_done
#
# run_case [-t SECS] [-W] NAME CMD [ARGS...]
#   Runs CMD (usually a shell function of the suite) in a subshell that is a
#   process group of its own, in a fresh folder $CASE_TMP (guest tmpfs), with
#   output in $CASE_LOGDIR/NAME.log, printed (indented) when the case ends,
#   or live with RBLK_VM_LIVE=1.  Exit 0 =
#   PASS, 77 = SKIP (the last output line is the reason: use `skip REASON`),
#   anything else = FAIL (the last output line is the reason: `fail REASON`).
#   After SECS (default $CASE_TIMEOUT, 120) the whole process group is killed
#   and the case FAILs; whatever the case left running (servers) is killed
#   when it ends either way.  A kernel WARN or Oops during the case (the
#   kernel's warn_count/oops_count grow) makes it FAIL unless -W is given.
#   Only cases whose name matches the glob $RBLK_VM_CASES (default *) run,
#   and, when $RBLK_VM_RERUN is set (the host reruns what a dead guest did
#   not report), only the cases it names (space-separated).
#   Inside a case: skip, fail, log, need_cmd, need_build, wait_until, nap.
# cases_done
#   Prints a summary and exits 1 if any case failed, else 0.

RBLK_ROOT=${RBLK_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}
RBLK_BUILD=${RBLK_BUILD:-$RBLK_ROOT/build}
VM_GUEST=$RBLK_ROOT/tests/vm/guest
PATH=$VM_GUEST:$PATH
CASE_TIMEOUT=${CASE_TIMEOUT:-120}
CASE_LOGDIR=${CASE_LOGDIR:-${RBLK_VM_SCRATCH:-/tmp}/cases}
mkdir -p "$CASE_LOGDIR"
export RBLK_ROOT RBLK_BUILD VM_GUEST PATH

_cases_pass=0 _cases_fail=0 _cases_skip=0

# --- helpers for use inside a case -----------------------------------------
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
log()  { echo "--- $*"; }
need_cmd() {	# CMD...: skip the case when a program is missing
	local c
	for c; do command -v "$c" >/dev/null 2>&1 || skip "$c not installed"; done
}
need_build() {	# FILE...: skip when a build product (relative to $RBLK_BUILD) is missing
	local f
	for f; do [ -e "$RBLK_BUILD/$f" ] || skip "$RBLK_BUILD/$f not built"; done
}
wait_until() {	# SECS CMD...: poll CMD every 0.1 s until it succeeds; 1 after SECS
	local secs=$1 now end
	shift
	now=${EPOCHREALTIME/./}
	end=$((10#$now + secs * 1000000))
	while :; do
		"$@" >/dev/null 2>&1 && return 0
		now=${EPOCHREALTIME/./}
		((10#$now < end)) || return 1
		nap 0.1
	done
}
nap() {		# SECS: sleep without starting a program (read times out on an idle pipe)
	[ -n "${_nap_fd:-}" ] || exec {_nap_fd}<> <(:)
	read -rt "$1" -u "$_nap_fd" _ || true
	return 0
}

# fio verify on a file system (DIR), rate-capped so that a fault lands
# mid-run; sets FIO_PID.  fs_fio_ok waits for it; on an error it prints
# fio's output and calls FAIL (fail, or a suite's own) with the reason.
fs_fio() {	# NAME DIR SIZE RATE
	timeout 600 "${FIO:-fio}" --name="$1" --directory="$2" --rw=randwrite --bs=4k \
		--size="$3" --rate="$4" --iodepth=8 --ioengine=libaio --direct=1 \
		--verify=crc32c --verify_fatal=1 --verify_state_save=0 \
		--output="$CASE_TMP/$1.out" &
	FIO_PID=$!
}
fs_fio_ok() {	# NAME FAIL
	wait "$FIO_PID" || { cat "$CASE_TMP/$1.out"; "$2" "fio $1 failed"; }
	grep -q "err= 0" "$CASE_TMP/$1.out" || { cat "$CASE_TMP/$1.out"; "$2" "fio $1 reported errors"; }
}

# --- the runner ---------------------------------------------------------------
# Every program start costs 0.1-1 s on the emulated CPU (more on a busy
# host), so the runner itself uses shell builtins wherever it can.

_case_verdict() {	# verdict name [reason]
	local v=$1 n=$2 why=${3:-}
	case $v in
	PASS) _cases_pass=$((_cases_pass + 1)) ;;
	SKIP) _cases_skip=$((_cases_skip + 1)) ;;
	*)    _cases_fail=$((_cases_fail + 1)) ;;
	esac
	echo "RBLK-CASE: $v $n${why:+ $why}"
}

_usecs() { local t=${EPOCHREALTIME/./}; echo "$((10#$t))"; }

# The kernel counts WARNs and Oopses since boot (6.2+): read before and after.
_kernel_trouble_count() {
	local w=0 o=0
	read -r w 2>/dev/null </sys/kernel/warn_count
	read -r o 2>/dev/null </sys/kernel/oops_count
	echo "$((w + o))"
}

# _emulator_debug_trap UP0: the only kernel WARN logged since uptime UP0
# is the one in exc_debug_kernel: a single-step trap in kernel mode,
# which nothing in the guest asks for (the kernel's comment there names
# QEMU leaking #DB into the guest).  Seen once under TCG, in fio's
# fstatat on a client node, after its case had passed every check
# (docs/vm-tests.md).
_emulator_debug_trap() {
	dmesg | awk -v t0="$1" '{ ts = substr($0, 2, index($0, "]") - 2) + 0 }
		ts >= t0 && /WARNING: CPU:/ { n++; if (/ exc_debug_kernel\+/) d++ }
		END { exit !(n == 1 && d == 1) }'
}

# Prints a finished case's log indented and sets _last to its last non-empty
# line: builtins only.
# Prints a case's log indented; _last = the reason to show with its verdict:
# its last "FAIL: "/"SKIP: " line (a cleanup after fail() may still print,
# e.g. bash's "Killed" notice for a job it ended), else its last non-blank line.
_case_show() {
	local line said=
	_last=
	while IFS= read -r line || [ -n "$line" ]; do
		echo "    $line"
		case $line in
		"FAIL: "* | "SKIP: "*) _last=$line said=1 ;;
		*[![:space:]]*) [ -n "$said" ] || _last=$line ;;
		esac
	done <"$1"
}

run_case() {
	# Suites may run under set -e: the runner's own failing tests must not
	# abort them ("local -" restores the options on return).
	local -
	set +e
	local tmo=$CASE_TIMEOUT allow_warn=0 o OPTIND=1
	while getopts "t:W" o; do
		case $o in
		t) tmo=$OPTARG ;;
		W) allow_warn=1 ;;
		*) echo "run_case: bad option" >&2; return 2 ;;
		esac
	done
	shift $((OPTIND - 1))
	local name=$1
	shift
	# shellcheck disable=SC2053
	[[ $name == ${RBLK_VM_CASES:-*} ]] || return 0
	[ -z "${RBLK_VM_RERUN:-}" ] || [[ " $RBLK_VM_RERUN " == *" $name "* ]] || return 0
	local log=$CASE_LOGDIR/$name.log rcf=$CASE_LOGDIR/$name.rc tof=$CASE_LOGDIR/$name.timeout
	: >"$log"
	: >"$rcf"
	rm -f "$tof"
	local trouble0 oops0=0 t0 up0 pg wd rc secs why streamer=
	trouble0=$(_kernel_trouble_count)
	read -r oops0 2>/dev/null </sys/kernel/oops_count
	read -r up0 _ </proc/uptime
	t0=$(_usecs)
	echo "=== case $name (timeout ${tmo}s)"

	# Job control gives each background job its own process group, so the
	# case and everything it started can be killed as one.
	set -m
	(
		CASE_NAME=$name CASE_TMP=/tmp/case-$name.$BASHPID
		export CASE_NAME CASE_TMP
		mkdir -p "$CASE_TMP" && cd "$CASE_TMP" || exit 1
		( "$@" )
		echo $? >"$rcf"
	) >"$log" 2>&1 </dev/null &
	pg=$!
	# The watchdog counts seconds one sleep at a time: a jump of the
	# guest's clock (seen once: 18 h at once, under TCG, when the host's
	# TSC jumped) then costs one tick, not the whole case.
	# It also ends the case at once when another node died unasked.
	( for ((i = 0; i < tmo; i++)); do
		sleep 1
		_node_died && break
	  done
	  # The host's mark stays until the next boot: the runner reads it
	  # again after the case.
	  _node_died || : >"$tof"
	  kill -TERM -- "-$pg"; sleep 5; kill -KILL -- "-$pg" ) >/dev/null 2>&1 &
	wd=$!
	set +m
	# Live output costs two more programs per case: only when asked.
	if [ -n "${RBLK_VM_LIVE:-}" ]; then
		tail -s 0.2 -n +1 -f --pid="$pg" "$log" | sed -u 's/^/    | /' &
		streamer=$!
	fi
	wait "$pg" 2>/dev/null
	kill -- "-$wd" 2>/dev/null
	kill -KILL -- "-$pg" 2>/dev/null	# leftovers of a finished case
	[ -n "$streamer" ] && wait "$streamer" 2>/dev/null
	wait "$wd" 2>/dev/null

	secs=$(( ($(_usecs) - t0) / 100000 ))
	secs=$((secs / 10)).$((secs % 10))
	_case_show "$log"
	! _node_died || _case_node_died "$name" "$_dead"
	why=${_last#SKIP: }
	why=${why#FAIL: }
	why=${why:0:200}
	read -r rc <"$rcf"
	if [ -e "$tof" ]; then
		rc=timeout why="timed out after ${tmo}s"
	elif [ -z "$rc" ]; then
		rc=killed why="case died without an exit status"
	fi
	# A kernel WARN or Oops during the case fails it even if it passed;
	# but for one WARN that is the emulator's, shown and not counted.
	local trouble oops=0
	trouble=$(_kernel_trouble_count)
	read -r oops 2>/dev/null </sys/kernel/oops_count
	if [ "$trouble" != "$trouble0" ] && [ "$allow_warn" = 0 ] &&
	   { [ "$rc" = 0 ] || [ "$rc" = 77 ]; }; then
		if [ "$trouble" = $((trouble0 + 1)) ] && [ "$oops" = "$oops0" ] &&
		   _emulator_debug_trap "$up0"; then
			echo "    --- kernel WARN in exc_debug_kernel: the emulator's single-step trap, not the case's (docs/vm-tests.md):"
			dmesg | grep -m 1 "WARNING: CPU:.* exc_debug_kernel+" | sed 's/^/    | /'
		else
			rc=kernel why="kernel WARNING or Oops during the case (see the kernel log above)"
		fi
	fi
	echo "--- case $name: exit $rc after ${secs}s"
	case $rc in
	0)  _case_verdict PASS "$name" ;;
	77) _case_verdict SKIP "$name" "${why:-no reason given}" ;;
	*)  echo "    --- kernel log since the case started (last 60 lines):"
	    dmesg | awk -v t0="$up0" '{ ts = substr($0, 2, index($0, "]") - 2) + 0 }
		ts >= t0 { print "    | " $0 }' | tail -n 60
	    _case_verdict FAIL "$name" "${why:-exit $rc}" ;;
	esac
	return 0
}

# A node of a pair or cluster suite that died unasked (the host marks it:
# _vm_mark_dead in tests/vm/host-lib.sh): sets _dead to its mark file.
_node_died() {
	local f first
	for f in "${RBLK_VM_SCRATCH:-/nonexistent}"/chan/dead \
		 "${RBLK_VM_SCRATCH:-/nonexistent}"/chan/node-*/dead; do
		[ -e "$f" ] || continue
		read -r first 2>/dev/null <"$f" || continue
		[ "$first" = died ] && { _dead=$f; return 0; }
	done
	return 1
}

# The case saw another node's kernel die (an emulator fault, as with a
# single guest: docs/vm-tests.md): its result would say nothing about
# rblk, and every case after it would lack the node.  This boot ends
# with status 125, as if the client itself had died, so that the host
# runs this case and the rest once more in new guests; the crash is
# printed here, where the host looks for it.
_case_node_died() {	# name mark-file
	local mark=$2 node
	node=${mark%/dead}
	node=${node##*/}
	[ "$node" = chan ] && node=target
	echo "=== case $1: node ${node#node-} died unasked; the case is not counted, and this boot of the suite ends so that the host runs it again in new guests. The node's crash:"
	sed 1d "$mark" | sed 's/^/    | /'
	echo "vm-cases: $_cases_pass passed, $_cases_fail failed, $_cases_skip skipped before the node died"
	exit 125
}

cases_done() {
	echo "vm-cases: $_cases_pass passed, $_cases_fail failed, $_cases_skip skipped"
	[ "$_cases_fail" -eq 0 ]
	exit
}
