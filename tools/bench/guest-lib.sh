# SPDX-License-Identifier: MIT
# Sourced by the one-guest benchmark scripts (syscalls, threads, vm-bench
# .guest.sh), after they set BENCH_NAME: the build and guest helpers, die,
# and rblk-target start-up.
B=$RBLK_BUILD
G=$RBLK_ROOT/tests/vm/guest
die() { echo "$BENCH_NAME: $*" >&2; exit 1; }

# Soft-RoCE and ublk up; sets IP to the RDMA address.
rdma_ublk_up() {
	IP=$("$G/rxe-up") || die "rxe-up failed"
	"$G/ublk-up" || die "ublk-up failed"
}

# Starts rblk-target with the config file $1 (its log next to it, .log),
# sets TPID and waits until it says "ready" (every listener up).
start_target() {
	local log=${1%.conf}.log
	"$B/rblk-target" --config "$1" >"$log" 2>&1 &
	TPID=$!
	for _ in $(seq 200); do grep -q " ready$" "$log" && break; sleep 0.1; done
	grep -q " ready$" "$log" || { cat "$log"; die "target did not start"; }
}
