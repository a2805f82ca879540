#!/bin/bash
# SPDX-License-Identifier: MIT
# Guest side of tools/bench/threads: context switches and CPU time per I/O
# of each kind of thread of rblk-target (reactor, iou-wrk = io_uring's
# io-wq workers, other) and rblk-initiator, one guest, Soft-RoCE, target
# rdma_poll = event and 1 reactor, initiator 1 queue.  Reads
# /proc/PID/task/*/{status,stat} before and after each fio run; threads
# that came and went inside a run are not seen (none did in our runs).
#   RBLK_BENCH_TH_STORE=file|brd   RBLK_BENCH_TH_RUNTIME=8
# Writes $RBLK_VM_SCRATCH/threads.md.
set -u
BENCH_NAME=threads
. "$RBLK_ROOT/tools/bench/guest-lib.sh"
RT=${RBLK_BENCH_TH_RUNTIME:-8}
STORE=${RBLK_BENCH_TH_STORE:-file}
OUT=${RBLK_VM_SCRATCH:-/tmp}/threads.md
W=/tmp/th
mkdir -p "$W"

rdma_ublk_up
case $STORE in
file) VOL=$W/vol.img; truncate -s 256M "$VOL" ;;
brd) VOL=/dev/ram0; modprobe brd rd_nr=1 rd_size=262144 || die "modprobe brd failed" ;;
*) die "RBLK_BENCH_TH_STORE is file or brd, not '$STORE'" ;;
esac
ublk_volume th "$VOL" rdma event "reactors = 1"
HZ=$(getconf CLK_TCK)

# pid label: "kind switches ticks" per thread, kind from the thread's name
snap() {
	for t in /proc/"$1"/task/*; do
		comm=$(cat "$t/comm")
		case $comm in reactor*) k=reactor ;; iou-wrk*) k=iou-wrk ;; *) k=other ;; esac
		echo "$2-$k $(awk '/^(non)?voluntary_ctxt_switches/ { n += $2 } END { print n }' "$t/status") \
$(awk '{ print $14 + $15 }' "$t/stat")"
	done
}
rows=()
for wl in "${COUNT_WORKLOADS[@]}"; do
	set -- $wl
	tag=$1-qd$2
	echo "threads: $tag"
	{ snap "$TPID" target; snap "$IPID" initiator; } | sed 's/^/- /' >"$W/before"
	fio_run "$W/$tag.json" "$dev" "$1" 4k "$2"
	{ snap "$TPID" target; snap "$IPID" initiator; } | sed 's/^/+ /' >"$W/after"
	fio_ios "$W/$tag.json"; ios=$IOS
	# after minus before, summed by kind; CPU in µs per I/O
	while read -r kind cs us; do
		rows+=("| 4k $1 QD$2 | $((ios / RT)) | $kind | $cs | $us |")
	done < <(cat "$W/before" "$W/after" | awk -v n="$ios" -v hz="$HZ" '
		{ s = $1 == "+" ? 1 : -1; cs[$2] += s * $3; tk[$2] += s * $4 }
		END { for (k in cs) printf "%s %.2f %.0f\n", k, cs[k] / n, tk[k] * 1e6 / hz / n }' | sort)
done
"$B/rblkctl" detach "$dev" >/dev/null
kill -TERM "$TPID"; wait "$TPID"
{
	echo "| workload | IOPS | process-thread kind | ctx sw/IO | CPU µs/IO |"
	echo "|---|---:|---|---:|---:|"
	printf '%s\n' "${rows[@]}"
} >"$OUT"
cat "$OUT"
