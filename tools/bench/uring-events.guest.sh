#!/bin/bash
# SPDX-License-Identifier: MIT
# Guest side of tools/bench/uring-events: how the kernel batches the
# io_uring work of one I/O on /dev/ublkbN, counted by tracepoints (perf
# stat, no sampling) in rblk-initiator's threads and in fio's.  Per I/O:
# io_uring_enter calls, CQEs posted, task-work runs (the batches in which
# ublk and block completions reach a task), waits for a CQE and context
# switches; and CQEs per io_uring_enter, the batch one wakeup takes.
# Counts, not speeds: the same run on two kernels says whose batches shrank.
#   RBLK_BENCH_UE_RUNTIME=8    seconds per workload
#   RBLK_BENCH_UE_POLL=event   the initiator's --poll (and the target's rdma_poll)
#   RBLK_BENCH_UE_TRANSPORT=rdma   or tcp
# Writes $RBLK_VM_SCRATCH/uring-events.md.
set -u
BENCH_NAME=uring-events
. "$RBLK_ROOT/tools/bench/guest-lib.sh"
RT=${RBLK_BENCH_UE_RUNTIME:-8}
POLL=${RBLK_BENCH_UE_POLL:-event}
TP=${RBLK_BENCH_UE_TRANSPORT:-rdma}
OUT=${RBLK_VM_SCRATCH:-/tmp}/uring-events.md
W=/tmp/ue
mkdir -p "$W"

command -v perf >/dev/null || die "perf is not installed (Debian: linux-perf)"
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing ||
	die "cannot mount tracefs"
sysctl -qw kernel.perf_event_paranoid=-1 || die "cannot set kernel.perf_event_paranoid"

# The events, in the table's order; a kernel without one of them gets
# "—" in its column (io_uring's tracepoints were renamed over the years).
EVENTS=(syscalls:sys_enter_io_uring_enter io_uring:io_uring_complete
	io_uring:io_uring_task_work_run io_uring:io_uring_cqring_wait sched:sched_switch)
have=()
for e in "${EVENTS[@]}"; do
	[ -d "/sys/kernel/tracing/events/${e/://}" ] && have+=("$e")
done
[ ${#have[@]} -gt 0 ] || die "none of the tracepoints is there"
evlist=$(IFS=,; echo "${have[*]}")

rdma_ublk_up
truncate -s 256M "$W/vol.img"
ublk_volume ue "$W/vol.img" "$TP" "$POLL"

# count FILE EVENT: the count perf stat -x, wrote for EVENT, or "" when
# it was not counted.
count() {
	awk -F, -v e="$2" '$3 == e && $1 ~ /^[0-9]+$/ { print $1 }' "$1"
}
# cells FILE IOS: " a | b | ..." one cell per event of EVENTS, per I/O,
# then CQEs per io_uring_enter.
cells() {
	local f=$1 ios=$2 e c line="" enters cqes
	for e in "${EVENTS[@]}"; do
		c=$(count "$f" "$e")
		if [ -n "$c" ]; then
			line+=$(awk -v c="$c" -v n="$ios" 'BEGIN { printf " %.2f |", c / n }')
		else
			line+=" — |"
		fi
	done
	enters=$(count "$f" syscalls:sys_enter_io_uring_enter)
	cqes=$(count "$f" io_uring:io_uring_complete)
	if [ -n "$enters" ] && [ -n "$cqes" ] && [ "$enters" -gt 0 ]; then
		line+=$(awk -v a="$cqes" -v b="$enters" 'BEGIN { printf " %.2f |", a / b }')
	else
		line+=" — |"
	fi
	echo "$line"
}

rows=()
for wl in "${COUNT_WORKLOADS[@]}"; do
	set -- $wl
	tag=$1-qd$2
	echo "uring-events: $tag"
	# The initiator's counters run over fio's whole run; with no I/O
	# it does almost nothing (a keep-alive a second), so the seconds
	# around fio add next to nothing.
	perf stat -x, -e "$evlist" -p "$IPID" -o "$W/ini-$tag.csv" & ps=$!
	sleep 2
	fio_run "$W/$tag.json" "$dev" "$1" 4k "$2" perf stat -x, -e "$evlist" -o "$W/fio-$tag.csv" --
	kill -INT "$ps"; wait "$ps"
	fio_ios "$W/$tag.json"; ios=$IOS
	[ -n "$(count "$W/ini-$tag.csv" "${have[0]}")" ] ||
		{ cat "$W/ini-$tag.csv"; die "perf stat counted nothing in rblk-initiator"; }
	rows+=("| 4k $1 QD$2 | $((ios / RT)) | rblk-initiator |$(cells "$W/ini-$tag.csv" "$ios")")
	rows+=("| | | fio |$(cells "$W/fio-$tag.csv" "$ios")")
done
sched=$(sed 's/.*\[\(.*\)\].*/\1/' "/sys/block/${dev#/dev/}/queue/scheduler")
"$B/rblkctl" detach "$dev" >/dev/null
kill -TERM "$TPID"; wait "$TPID"
{
	echo "Linux $(uname -r), $TP, --poll $POLL, I/O scheduler $sched; per I/O unless said:"
	echo
	echo "| workload | IOPS | process | io_uring_enter | CQEs posted | task-work runs | CQ waits | context switches | CQEs per enter |"
	echo "|---|---:|---|---:|---:|---:|---:|---:|---:|"
	printf '%s\n' "${rows[@]}"
} >"$OUT"
cat "$OUT"
