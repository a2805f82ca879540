#!/bin/bash
# SPDX-License-Identifier: MIT
# The VM harness (tests/vm/host-lib.sh) tells an infrastructure crash from a
# test result.  Driven with a fake vm-run that replays guest consoles:
#  - a guest that dies before its first case is booted again (at most twice
#    more), and each retry prints the crash;
#  - three boot crashes in a row fail every case by name;
#  - a guest that dies mid-suite is booted once more for the cases it did
#    not report (RBLK_VM_RERUN names them), with the crash printed; a
#    second death fails each of them by name, with the first Oops line;
#  - a guest that hangs fails its unreported cases as hung;
#  - RBLK_VM_CASES limits the names reported to the cases that were asked for.
. "$(dirname "$0")/lib.sh"

HOST_LIB=$RBLK_ROOT/tests/vm/host-lib.sh
root=$T/root
mkdir -p "$root/tests/vm/guest"
cat >"$root/tests/vm/guest/suite-fake.guest.sh" <<'GUEST'
run_case one case_one
run_case -t 300 two case_two
run_case -W three case_three
cases_done
GUEST
printf '#!/bin/sh\nexit 0\n' >"$root/tests/vm/prepare"
# The fake vm-run plays the console named by the next line of $T/plan.
cat >"$root/tests/vm/vm-run" <<'FAKE'
#!/bin/bash
echo x >>"$FAKE_DIR/boots"
echo "rerun=${RBLK_VM_RERUN:-}" >>"$FAKE_DIR/env"
n=$(wc -l <"$FAKE_DIR/boots")
read -r console rc < <(sed -n "${n}p" "$FAKE_DIR/plan")
cat "$FAKE_DIR/$console"
exit "$rc"
FAKE
chmod +x "$root/tests/vm/prepare" "$root/tests/vm/vm-run"

cat >"$T/bootcrash" <<'C'
[    1.234] BUG: unable to handle page fault for address: 0000000000001234
[    1.235] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI
[    1.236] RIP: 0010:sched_clock_cpu+0x10/0x1e0
[    1.240] Kernel panic - not syncing: Attempted to kill init!
vm-run: guest died before the command finished (qemu exit 0)
C
cat >"$T/good" <<'C'
=== case one (timeout 120s)
RBLK-CASE: PASS one
=== case two (timeout 300s)
RBLK-CASE: PASS two
=== case three (timeout 120s)
RBLK-CASE: PASS three
vm-cases: 3 passed, 0 failed, 0 skipped
C
cat >"$T/midcrash" <<'C'
=== case one (timeout 120s)
RBLK-CASE: PASS one
=== case two (timeout 300s)
[   50.000] Oops: general protection fault, probably for non-canonical address 0xdead: 0000 [#1] SMP
[   50.001] RIP: 0010:rxe_requester+0x42/0x900 [rdma_rxe]
[   50.010] Kernel panic - not syncing: Fatal exception in interrupt
C

# The rerun of "two three" after midcrash.
cat >"$T/rerun" <<'C'
=== case two (timeout 300s)
RBLK-CASE: PASS two
=== case three (timeout 120s)
RBLK-CASE: PASS three
vm-cases: 2 passed, 0 failed, 0 skipped
C
cat >"$T/recrash" <<'C'
=== case two (timeout 300s)
[   40.000] Oops: general protection fault, probably for non-canonical address 0xdead: 0000 [#1] SMP
[   40.010] Kernel panic - not syncing: Fatal exception in interrupt
C
cat >"$T/failfirst" <<'C'
=== case one (timeout 120s)
RBLK-CASE: FAIL one it broke
=== case two (timeout 300s)
[   50.000] Oops: double fault: 0000 [#1] PREEMPT SMP NOPTI
[   50.010] Kernel panic - not syncing: Fatal exception in interrupt
C

# run_fake PLAN-LINES...: runs the suite; output in $T/out, boots counted,
# each boot's RBLK_VM_RERUN in $T/env.
run_fake() {
	rm -f "$T/boots" "$T/env"
	printf '%s\n' "$@" >"$T/plan"
	(
		export RBLK_ROOT=$root RBLK_BUILD=$T/build FAKE_DIR=$T
		# shellcheck source=tests/vm/host-lib.sh
		. "$HOST_LIB"
		vm_suite fake
	) >"$T/out" 2>&1
	rc=$?
	boots=$(wc -l <"$T/boots")
}
cases() { grep '^RBLK-CASE: ' "$T/out"; }
expect_case() {	# verdict name [reason pattern]
	grep -q "^RBLK-CASE: $1 $2\( \|$\).*${3:-}" "$T/out" ||
		{ cat "$T/out"; fail "want '$1 $2 ${3:-}'"; }
}

log "one boot crash, then a good boot: retried once, all pass"
run_fake "bootcrash 125" "good 0"
[ "$rc" = 0 ] && [ "$boots" = 2 ] || { cat "$T/out"; fail "rc $rc after $boots boots, want 0 after 2"; }
grep -q "died while booting (attempt 1 of 3)" "$T/out" || fail "retry not announced"
grep -q "| .*Oops: int3" "$T/out" || fail "retry did not print the crash lines"
[ "$(cases | grep -c PASS)" = 3 ] && [ "$(cases | wc -l)" = 3 ] || fail "want exactly 3 PASS lines: $(cases)"

log "three boot crashes: every case fails by name, no fourth boot"
run_fake "bootcrash 125" "bootcrash 125" "bootcrash 125" "good 0"
[ "$boots" = 3 ] || fail "$boots boots, want 3"
[ "$rc" != 0 ] || fail "suite passed"
for c in one two three; do expect_case FAIL "$c" "guest died while booting, 3 times (last: Oops: int3"; done

log "a crash mid-suite: one more boot for the unreported cases, the crash printed"
run_fake "midcrash 125" "rerun 0" "good 0"
[ "$rc" = 0 ] && [ "$boots" = 2 ] || { cat "$T/out"; fail "rc $rc after $boots boots, want 0 after 2"; }
[ "$(sed -n 2p "$T/env")" = "rerun=two three" ] || fail "the rerun was told: $(cat "$T/env")"
[ "$(sed -n 1p "$T/env")" = "rerun=" ] || fail "the first boot was told: $(sed -n 1p "$T/env")"
grep -q "died in the middle of the suite, in case two" "$T/out" || { cat "$T/out"; fail "rerun not announced"; }
grep -q "| .*Oops: general protection fault" "$T/out" || fail "the rerun did not print the crash lines"
for c in one two three; do expect_case PASS "$c"; done
[ "$(cases | wc -l)" = 3 ] || fail "want 3 case lines: $(cases)"

log "a second crash mid-suite: no third boot; the unreported cases fail by name with the Oops line"
run_fake "midcrash 125" "recrash 125" "good 0"
[ "$boots" = 2 ] || fail "$boots boots, want 2"
[ "$rc" != 0 ] || fail "suite passed"
expect_case PASS one
expect_case FAIL two "guest died twice (Oops: general protection fault"
expect_case FAIL three "guest died twice"
[ "$(cases | wc -l)" = 3 ] || fail "want 3 case lines: $(cases)"

log "a rerun that passes does not hide a failure before the crash"
run_fake "failfirst 125" "rerun 0"
[ "$boots" = 2 ] && [ "$rc" != 0 ] || { cat "$T/out"; fail "rc $rc after $boots boots, want non-zero after 2"; }
expect_case FAIL one "it broke"
expect_case PASS two

log "a hung guest: the unreported cases fail as hung"
run_fake "midcrash 124"
expect_case FAIL two "guest hung"
expect_case FAIL three "guest hung"

log "RBLK_VM_CASES: only the selected cases are named"
RBLK_VM_CASES=thr* run_fake "bootcrash 125" "bootcrash 125" "bootcrash 125"
[ "$(cases | wc -l)" = 1 ] || fail "want only 'three': $(cases)"
expect_case FAIL three
echo PASS
