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
#   output in $CASE_LOGDIR/NAME.log streamed (indented) to stdout.  Exit 0 =
#   PASS, 77 = SKIP (the last output line is the reason: use `skip REASON`),
#   anything else = FAIL (the last output line is the reason: `fail REASON`).
#   After SECS (default $CASE_TIMEOUT, 120) the whole process group is killed
#   and the case FAILs; whatever the case left running (servers) is killed
#   when it ends either way.  A kernel WARNING/BUG/Oops logged during the case
#   makes it FAIL unless -W is given.
#   Only cases whose name matches the glob $RBLK_VM_CASES (default *) run.
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
wait_until() {	# SECS CMD...: poll CMD every 0.1 s until it succeeds; 1 on timeout
	local secs=$1 i
	shift
	for ((i = 0; i < secs * 10; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

# --- the runner ---------------------------------------------------------------
_kernel_trouble='WARNING:|BUG:|Oops|general protection fault|INFO: task .* blocked|Call Trace:'

_case_verdict() {	# verdict name [reason]
	local v=$1 n=$2 why=${3:-}
	case $v in
	PASS) _cases_pass=$((_cases_pass + 1)) ;;
	SKIP) _cases_skip=$((_cases_skip + 1)) ;;
	*)    _cases_fail=$((_cases_fail + 1)) ;;
	esac
	echo "RBLK-CASE: $v $n${why:+ $why}"
}

# Last non-empty line of a log, without a SKIP:/FAIL: prefix, on one line.
_case_reason() {
	grep -v '^[[:space:]]*$' "$1" | tail -n 1 | sed -E 's/^(SKIP|FAIL): *//' | cut -c1-200
}

run_case() {
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
	local log=$CASE_LOGDIR/$name.log rcf=$CASE_LOGDIR/$name.rc tof=$CASE_LOGDIR/$name.timeout
	rm -f "$rcf" "$tof"
	: >"$log"
	local kmsg0 t0 pg wd streamer rc secs why
	kmsg0=$(dmesg | wc -l)
	t0=$(date +%s.%N)
	echo "=== case $name (timeout ${tmo}s)"

	# Job control gives each background job its own process group, so the
	# case and everything it started can be killed as one.
	set -m
	(
		CASE_NAME=$name CASE_TMP=$(mktemp -d "/tmp/case-$name.XXXXXX")
		export CASE_NAME CASE_TMP
		cd "$CASE_TMP" || exit 1
		( "$@" )
		echo $? >"$rcf"
	) >"$log" 2>&1 </dev/null &
	pg=$!
	( sleep "$tmo"; : >"$tof"; kill -TERM -- "-$pg"; sleep 5; kill -KILL -- "-$pg" ) >/dev/null 2>&1 &
	wd=$!
	set +m
	tail -s 0.2 -n +1 -f --pid="$pg" "$log" | sed -u 's/^/    /' &
	streamer=$!
	wait "$pg" 2>/dev/null
	kill -- "-$wd" 2>/dev/null
	kill -KILL -- "-$pg" 2>/dev/null	# leftovers of a finished case
	wait "$streamer" 2>/dev/null
	wait "$wd" 2>/dev/null
	[ -n "$(tail -c 1 "$log")" ] && echo	# keep our lines at a line start

	secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	rc=$(cat "$rcf" 2>/dev/null)
	if [ -e "$tof" ]; then
		rc=timeout why="timed out after ${tmo}s"
	elif [ -z "$rc" ]; then
		rc=killed why="case died without an exit status"
	else
		why=$(_case_reason "$log")
	fi
	# Kernel trouble during the case is a failure even if the case passed.
	local trouble
	trouble=$(dmesg | tail -n +"$((kmsg0 + 1))" | grep -E "$_kernel_trouble" | head -n 1)
	if [ -n "$trouble" ] && [ "$allow_warn" = 0 ] && { [ "$rc" = 0 ] || [ "$rc" = 77 ]; }; then
		rc=kernel why="kernel: $(echo "$trouble" | sed 's/^\[[^]]*\] *//' | cut -c1-150)"
	fi
	echo "--- case $name: exit $rc after ${secs}s"
	case $rc in
	0)  _case_verdict PASS "$name" ;;
	77) _case_verdict SKIP "$name" "${why:-no reason given}" ;;
	*)  echo "    --- kernel log since the case started (last 30 lines):"
	    dmesg | tail -n +"$((kmsg0 + 1))" | tail -n 30 | sed 's/^/    /'
	    _case_verdict FAIL "$name" "${why:-exit $rc}" ;;
	esac
	return 0
}

cases_done() {
	echo "vm-cases: $_cases_pass passed, $_cases_fail failed, $_cases_skip skipped"
	[ "$_cases_fail" -eq 0 ]
	exit
}
