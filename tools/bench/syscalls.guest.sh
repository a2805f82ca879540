#!/bin/bash
# SPDX-License-Identifier: MIT
# Guest side of tools/bench/syscalls: syscalls and context switches per
# I/O of rblk-initiator (/dev/ublkbN over RDMA or TCP) and of rblk-target,
# one guest, Soft-RoCE.  Counts, not speeds: strace -c slows both
# processes, but the number of calls each I/O costs is what it is.
#   RBLK_BENCH_SC_RUNTIME=8    seconds per workload
#   RBLK_BENCH_SC_POLL=event   the initiator's --poll (and the target's rdma_poll)
#   RBLK_BENCH_SC_TRANSPORT=rdma   or tcp
# Writes $RBLK_VM_SCRATCH/syscalls.md.
set -u
BENCH_NAME=syscalls
. "$RBLK_ROOT/tools/bench/guest-lib.sh"
RT=${RBLK_BENCH_SC_RUNTIME:-8}
POLL=${RBLK_BENCH_SC_POLL:-event}
TP=${RBLK_BENCH_SC_TRANSPORT:-rdma}
OUT=${RBLK_VM_SCRATCH:-/tmp}/syscalls.md
W=/tmp/sc
mkdir -p "$W"

rdma_ublk_up
truncate -s 256M "$W/vol.img"
ublk_volume sc "$W/vol.img" "$TP" "$POLL"

ctxsw() {	# pid: voluntary + nonvoluntary switches of all its threads
	cat /proc/"$1"/task/*/status | awk '/^(non)?voluntary_ctxt_switches/ { n += $2 } END { print n }'
}
syscalls() {	# strace -c output: the total call count
	awk '$NF == "total" { print $4 }' "$1"
}
top3() {	# strace -c output: the three most frequent calls, "name calls/io"
	awk -v n="$2" '$1 ~ /^[0-9.]+$/ && $NF != "total" { print $NF, $4 }' "$1" |
		sort -k2 -nr | head -n 3 | awk -v n="$2" '{ printf "%s%s %.2f", (NR > 1 ? ", " : ""), $1, $2 / n }'
}

rows=()
for wl in "${COUNT_WORKLOADS[@]}"; do
	set -- $wl
	tag=$1-qd$2
	echo "syscalls: $tag"
	ci=$(ctxsw "$IPID") ct=$(ctxsw "$TPID")
	strace -c -f -q -p "$IPID" -o "$W/ini-$tag.txt" & si=$!
	strace -c -f -q -p "$TPID" -o "$W/tgt-$tag.txt" & st=$!
	sleep 1
	fio_run "$W/$tag.json" "$dev" "$1" 4k "$2"
	kill -INT "$si" "$st"; wait "$si" "$st"
	ci=$(($(ctxsw "$IPID") - ci)) ct=$(($(ctxsw "$TPID") - ct))
	fio_ios "$W/$tag.json"; ios=$IOS
	rows+=("$(awk -v t="$1 QD$2" -v n="$ios" -v a="$(syscalls "$W/ini-$tag.txt")" -v b="$ci" \
		-v c="$(syscalls "$W/tgt-$tag.txt")" -v d="$ct" -v x="$(top3 "$W/ini-$tag.txt" "$ios")" \
		'BEGIN { printf "| 4k %s | %d | %.2f | %.2f | %.2f | %.2f | %s |", t, n, a / n, b / n, c / n, d / n, x }')")
done
"$B/rblkctl" detach "$dev" >/dev/null
kill -TERM "$TPID"; wait "$TPID"
{
	echo "| workload | I/Os | initiator syscalls/IO | initiator ctx sw/IO | target syscalls/IO | target ctx sw/IO | initiator's top calls per I/O |"
	echo "|---|---:|---:|---:|---:|---:|---|"
	printf '%s\n' "${rows[@]}"
} >"$OUT"
cat "$OUT"
