#!/bin/bash
# SPDX-License-Identifier: MIT
# Guest side of tools/bench/profile: where the CPU of an I/O goes,
# sampled, for rblk and for the kernel's NVMe-oF in the same guest.  One
# guest, Soft-RoCE, each peer on its own RAM disk (brd): /dev/ublkbN over
# RDMA or TCP (target 1 reactor, rdma_poll = event; initiator 1 queue: the
# shape of tools/bench/threads) and, over RDMA, nvmet-rdma + nvme-rdma with
# 1 I/O queue (over TCP rblk runs alone: nvmet-rdma-up is RDMA only).
# While fio runs, perf samples every CPU (cpu-clock); the samples are
# split by command group, as CPU µs per I/O, and by command and object
# (the kernel, our binaries, the libraries).
# How perf is made usable on this emulated CPU: tools/bench/perf-lib.sh.
# Each table says how many samples it kept.
# Each row also checks the sampler: the share of samples outside the idle
# task against /proc/stat's busy share over the same window.  They should
# agree; a row where they differ by more than 10 points is flagged, as a
# warning that the samples did not land where the CPU time went.
#   RBLK_BENCH_PF_RUNTIME=10   seconds per workload
#   RBLK_BENCH_PF_FREQ=250     samples per second per CPU
#   RBLK_BENCH_PF_WORKLOADS="randread:32 randwrite:32 randread:1"
#                              RW:QD[:BS], BS 4k unless given
#   RBLK_BENCH_PF_TRANSPORT=rdma   rblk's transport: rdma or tcp
#   RBLK_BENCH_PF_COPIES=0     1: record call chains too, and split each
#                              group's samples in copy functions (memcpy,
#                              rep_movs_alternative, *copy*) by the first
#                              caller that names them: ublk's buffer copy,
#                              the socket's send or receive copy, rxe's, other
# Writes $RBLK_VM_SCRATCH/profile.md.
set -u
BENCH_NAME=profile
. "$RBLK_ROOT/tools/bench/guest-lib.sh"
. "$RBLK_ROOT/tools/bench/perf-lib.sh"
RT=${RBLK_BENCH_PF_RUNTIME:-10}
FREQ=${RBLK_BENCH_PF_FREQ:-250}
WORKLOADS=${RBLK_BENCH_PF_WORKLOADS:-randread:32 randwrite:32 randread:1}
TRANSPORT=${RBLK_BENCH_PF_TRANSPORT:-rdma}
COPIES=${RBLK_BENCH_PF_COPIES:-0}
case $TRANSPORT in rdma|tcp) ;; *) die "RBLK_BENCH_PF_TRANSPORT: rdma or tcp, not $TRANSPORT" ;; esac
OUT=${RBLK_VM_SCRATCH:-/tmp}/profile.md
W=/tmp/pf
mkdir -p "$W"
perf_setup
rdma_ublk_up
modprobe brd rd_nr=2 rd_size=262144 || die "modprobe brd failed"
NCPU=$(nproc)
GROUPS_=(fio rblk-initiator reactor kworker softirq idle other)

# copy_split DATA PEER IOS: one row per command group that spent samples
# in copy functions, as CPU µs per I/O by origin (the first frame above
# the copy that says whose copy it is).  Samples are counted per command,
# then summed by perf_group (perf-lib.sh) as the other tables are.
copy_split() {
	perf script -i "$1" -F comm,ip,sym 2>/dev/null | awk '
		function done_sample() {
			if (comm != "" && is_copy) n[comm "\t" (origin == "" ? "other" : origin)]++
			comm = ""; depth = 0; is_copy = 0; origin = ""
		}
		/^[^ \t]/ { done_sample(); comm = $1; next }
		/^[ \t]*$/ { done_sample(); next }
		{ sym = $2; sub(/\+0x[0-9a-f]+$/, "", sym); depth++
		  if (depth == 1) { is_copy = (sym ~ /copy|memcpy|memmove|movs/); next }
		  if (!is_copy || origin != "") next
		  if (sym ~ /^ublk_/) origin = "ublk"
		  else if (sym ~ /^tcp_sendmsg|^sock_sendmsg|^__sys_sendmsg/) origin = "socket send"
		  else if (sym ~ /^tcp_recvmsg|^sock_recvmsg|^__sys_recvfrom/) origin = "socket receive"
		  else if (sym ~ /^rxe_/) origin = "rxe" }
		END { done_sample(); for (k in n) print k "\t" n[k] }' |
		awk -F'\t' -v n="$3" -v freq="$FREQ" -v peer="$2" "$PERF_AWK"'
		{ c = perf_group($1); us[c, $2] += $3; g[c] = 1 }
		END {	# one sample = 1/freq s of one CPU
			per = 1e6 / freq / n
			split("ublk|socket send|socket receive|rxe|other", o, "|")
			for (c in g) { line = "| " peer " | " c " |"; t = 0
				for (i = 1; i <= 5; i++) { v = us[c, o[i]] * per; t += v; line = line sprintf(" %.1f |", v) }
				print line sprintf(" %.1f |", t) } }'
}

# sample PEER TAG DEV RW QD BS: one fio run on DEV under perf; appends a
# row to $W/rows-TAG, the command x object table to $W/funcs-TAG and,
# with COPIES, the copy split to $W/copies-TAG.
sample() {
	local peer=$1 tag=$2 dev=$3 rw=$4 qd=$5 bs=$6 data=$W/$1-$2.data ios kept
	local stat0 stat1 stat_pct
	local callers=()
	[ "$COPIES" = 1 ] && callers=(-g)
	perf_start "$data" "$FREQ" "${callers[@]}"
	perf_ctl enable || die "perf did not take 'enable'"
	stat0=$(stat_busy_idle)
	fio_run "$W/$peer-$tag.json" "$dev" "$rw" "$bs" "$qd"
	stat1=$(stat_busy_idle)
	perf_ctl disable || die "perf did not take 'disable'"
	perf_stop
	fio_ios "$W/$peer-$tag.json"; ios=$IOS
	stat_pct=$(awk -v a="$stat0" -v b="$stat1" 'BEGIN { split(a, x, " "); split(b, y, " ")
		busy = y[1] - x[1]; all = busy + y[2] - x[2]
		printf "%.0f", (all > 0 ? 100 * busy / all : 0) }')
	kept=$(perf report -i "$data" --stdio --sort comm 2>/dev/null |
		sed -n 's/^# Samples: \([0-9.]*[kKM]*\).*/\1/p' | head -n 1)
	# share per command, summed by group, as CPU µs per I/O: the share of
	# the NCPU x RT seconds sampled, spread over the I/Os fio counted
	perf report -i "$data" --stdio --no-children --sort comm 2>/dev/null |
		awk -v n="$ios" -v cpu="$NCPU" -v rt="$RT" -v peer="$peer" -v kept="$kept" \
			-v order="${GROUPS_[*]}" -v stat_pct="$stat_pct" "$PERF_AWK"'
			/^ *[0-9.]+%/ { sub(/%/, "", $1); pct[perf_group($2)] += $1 }
			END { k = split(order, g, " "); busy = 0
				for (i = 1; i <= k; i++) if (g[i] != "idle") busy += pct[g[i]]
				us = cpu * rt * 1e6 / n / 100
				printf "| %s | %d | %s | %.0f / %d%s | %.0f |", peer, n / rt, kept,
					busy, stat_pct, (perf_disagree(busy, stat_pct) ? " **(disagree)**" : ""), busy * us
				for (i = 1; i <= k; i++) printf " %.0f |", pct[g[i]] * us
				printf "\n" }' >>"$W/rows-$tag"
	{
		echo
		echo "$peer, $bs $rw QD$qd: commands and objects with 0.5 % of the samples or more (idle left out):"
		echo
		echo "| share | command | object |"
		echo "|---:|---|---|"
		perf report -i "$data" --stdio --no-children -g none --sort comm,dso --percent-limit 0.5 2>/dev/null |
			awk '/^ *[0-9.]+%/ && $2 != "swapper" { print "| " $1 " | " $2 " | " $3 " |" }'
	} >>"$W/funcs-$tag"
	[ "$COPIES" = 1 ] && copy_split "$data" "$peer" "$ios" >>"$W/copies-$tag"
}

# wl_fields RW:QD[:BS]: sets rw, qd, bs and tag for one workload.
wl_fields() {
	local IFS=:
	set -- $1
	rw=$1 qd=$2 bs=${3:-4k}
	tag=$rw-qd$qd-$bs
}

run_peer() {	# PEER DEV: every workload
	local wl rw qd bs tag
	for wl in $WORKLOADS; do
		wl_fields "$wl"
		echo "profile: $1 $bs $rw QD$qd"
		sample "$1" "$tag" "$2" "$rw" "$qd" "$bs"
	done
}

ublk_volume pf /dev/ram0 "$TRANSPORT" event "reactors = 1"
run_peer "rblk-$TRANSPORT" "$dev"
"$B/rblkctl" detach "$dev" >/dev/null
kill -TERM "$TPID"; wait "$TPID"

if [ "$TRANSPORT" = rdma ]; then
	ndev=$("$G/nvmet-rdma-up" -d /dev/ram1 -s 4430 -q 1) || die "nvmet-rdma-up failed"
	dd if=/dev/urandom of="$ndev" bs=1M count=64 oflag=direct status=none || die "dd to $ndev failed"
	run_peer nvme-rdma "$ndev"
	"$G/nvmet-rdma-up" -D
fi

{
	echo "perf record -a -e cpu-clock -F $FREQ over each ${RT} s fio run (io_uring,"
	echo "direct), $NCPU vCPUs, one guest; samples shown as CPU µs per I/O."
	echo "Groups: reactor = rblk-target's reactor and io_uring workers;"
	echo "kworker = kernel workers (rxe's packet work, the block layer's); idle ="
	echo "\`swapper\`. Softirq work is counted to whichever command it interrupted."
	echo "busy % perf / /proc/stat: the samples' share outside the idle task, and"
	echo "the kernel's busy share of the same window; \"disagree\" when they differ"
	echo "by more than 10 points (then the row's split is not to be trusted)."
	[ "$TRANSPORT" = tcp ] && echo "rblk over TCP, alone (nvmet-rdma-up has no TCP)."
	for wl in $WORKLOADS; do
		wl_fields "$wl"
		echo
		echo "### $bs $rw QD$qd"
		echo
		echo "| peer | IOPS | samples | busy % perf / /proc/stat | busy CPU µs/IO | $(printf '%s | ' "${GROUPS_[@]}")"
		echo "|---|---:|---:|---:|---:|$(printf -- '---:|%.0s' "${GROUPS_[@]}")"
		cat "$W/rows-$tag"
		cat "$W/funcs-$tag"
		if [ "$COPIES" = 1 ]; then
			echo
			echo "CPU µs per I/O in copy functions, by whose copy it is (from the call chains):"
			echo
			echo "| peer | group | ublk | socket send | socket receive | rxe | other | all |"
			echo "|---|---|---:|---:|---:|---:|---:|---:|"
			cat "$W/copies-$tag" 2>/dev/null
		fi
	done
} >"$OUT"
cat "$OUT"
