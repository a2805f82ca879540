#!/bin/bash
# SPDX-License-Identifier: MIT
# A node of a pair or cluster suite whose kernel dies unasked (not a power
# cut a case asked for) ends the case it happened in at once, instead of
# leaving it blocked on I/O until its own timeout.  Runs the real guest
# case runner (tests/vm/guest/lib.sh) on the host, with the node marks
# that the host side writes (_vm_mark_dead in tests/vm/host-lib.sh):
#  - a "cut" mark (an asked power cut) changes nothing;
#  - a "died" mark during a case ends it within seconds, prints the
#    node's crash, reports no verdict for it and ends the boot with 125,
#    which the host's vm_suite turns into one rerun of that case and the
#    rest (tests/integration/05-vm-harness.sh);
#  - a mark left before a case started ends that case the same way.
. "$(dirname "$0")/lib.sh"

HOST_LIB=$RBLK_ROOT/tests/vm/host-lib.sh
scratch=$T/scratch
mkdir -p "$scratch/chan/node-a" "$scratch/chan/node-b"

# _vm_mark_dead as the host calls it: the crash lines from a console.
cat >"$T/a.console" <<'C'
[   10.000] rblk node agent up
[  612.345] traps: PANIC: double fault, error_code: 0x0
[  612.346] Oops: double fault: 0000 [#1] PREEMPT SMP NOPTI
[  612.347] RIP: 0010:kmem_cache_alloc_node_noprof+0x5a/0x2f0
C
mark() {	# node cut|died
	(
		export RBLK_ROOT RBLK_BUILD=$T/build
		# shellcheck source=tests/vm/host-lib.sh
		. "$HOST_LIB"
		VM_SCRATCH=$scratch _vm_mark_dead "$scratch/chan/node-$1/dead" "$2" "$T/$1.console"
	)
}

log "the host's marks: cut is one line; died carries the crash; a mark is never rewritten"
mark b cut
[ "$(cat "$scratch/chan/node-b/dead")" = cut ] || fail "cut mark: $(cat "$scratch/chan/node-b/dead")"
mark b died
[ "$(cat "$scratch/chan/node-b/dead")" = cut ] || fail "a second mark rewrote the first"
cp "$T/a.console" "$T/c.console"
mkdir -p "$scratch/chan/node-c"
mark c died
[ "$(head -n 1 "$scratch/chan/node-c/dead")" = died ] &&
	grep -q "Oops: double fault" "$scratch/chan/node-c/dead" ||
	fail "died mark: $(cat "$scratch/chan/node-c/dead")"
rm -rf "$scratch/chan/node-c"

# A suite of three cases; the second runs 60 s unless ended.
cat >"$T/suite.sh" <<'SUITE'
. "$RBLK_ROOT/tests/vm/guest/lib.sh"
case_quick() { nap 1; }
case_long() { nap 60; }
run_case first case_quick
run_case -t 90 second case_long
run_case third case_quick
cases_done
SUITE
run_suite() {	# runs it; output in $T/out, status in $rc, seconds in $secs
	local t0=$SECONDS
	RBLK_VM_SCRATCH=$scratch CASE_LOGDIR=$T/cases timeout 100 bash "$T/suite.sh" >"$T/out" 2>&1
	rc=$? secs=$((SECONDS - t0))
}

log "a node dies unasked during a case: it ends at once, no verdict, exit 125"
(sleep 4; mark a died) &
run_suite
wait
grep -q "^RBLK-CASE: PASS first" "$T/out" || { cat "$T/out"; fail "first case not passed"; }
grep -q "^RBLK-CASE: [A-Z]* second" "$T/out" && { cat "$T/out"; fail "the case the node died in got a verdict"; }
grep -q "^=== case third" "$T/out" && { cat "$T/out"; fail "a case ran after the node died"; }
[ "$rc" = 125 ] || { cat "$T/out"; fail "exit $rc, want 125"; }
((secs < 20)) || fail "the case took ${secs}s to end after the node died"
grep -q "node a died unasked" "$T/out" && grep -q "    | .*Oops: double fault" "$T/out" ||
	{ cat "$T/out"; fail "the node's crash was not printed"; }
# The host finds the crash on the client's console (vm_crash_reason).
reason=$(. "$HOST_LIB"; vm_crash_reason "$T/out")
[[ $reason == *"double fault"* ]] || fail "vm_crash_reason read '$reason'"

log "a node that died before a case started ends that case the same way"
RBLK_VM_CASES=third run_suite
[ "$rc" = 125 ] && ! grep -q "^RBLK-CASE: " "$T/out" || { cat "$T/out"; fail "exit $rc with the mark already there"; }

log "an asked power cut (a cut mark) changes nothing"
rm -f "$scratch/chan/node-a/dead"
RBLK_VM_CASES='@(first|third)' run_suite
[ "$rc" = 0 ] && [ "$(grep -c '^RBLK-CASE: PASS' "$T/out")" = 2 ] ||
	{ cat "$T/out"; fail "exit $rc with only a cut mark"; }
echo PASS
