# SPDX-License-Identifier: MIT
# Sourced by the guest scripts that sample CPUs with perf (profile,
# pair-bench with RBLK_BENCH_PAIR_PERF=1), after they define die and W (a
# work directory for perf's control FIFOs); and by tools/bench/pair-bench
# on the host, for PERF_AWK.
#
# Two things make perf usable on this emulated CPU: throttling is off
# (one sample interrupt takes long enough here that the kernel would soon
# lower the sampling rate), and perf starts disabled and is enabled
# through its control FIFO once it is up (it takes seconds, sometimes a
# minute, to start here; sampling "for N s" from its start missed most of
# a fio run).

# perf_setup: perf is there, the sysctls allow sampling every CPU.
perf_setup() {
	command -v perf >/dev/null || die "perf is not installed (Debian: linux-perf)"
	sysctl -qw kernel.perf_event_paranoid=-1 kernel.kptr_restrict=0 \
		kernel.perf_cpu_time_max_percent=0 || die "cannot set the perf sysctls"
}

# perf_ctl CMD: one command to perf's control FIFO, answered with "ack".
perf_ctl() {
	local a
	echo "$1" >&8 && read -r -t 180 a <&9 && [ "$a" = ack ]
}

# perf_start DATA FREQ [PERF-RECORD-ARGS...]: cpu-clock on every CPU,
# FREQ samples per second per CPU, into DATA (its log: DATA.log), started
# disabled.  Returns once perf is up (an enable/disable pair answered):
# then perf_ctl enable / disable frame the window to sample.
perf_start() {
	local data=$1 freq=$2
	shift 2
	rm -f "$W/ctl" "$W/ack" && mkfifo "$W/ctl" "$W/ack"
	perf record -q -a -e cpu-clock -F "$freq" "$@" -D -1 --control "fifo:$W/ctl,$W/ack" \
		-o "$data" >"$data.log" 2>&1 &
	PERF_PID=$!
	exec 8<>"$W/ctl" 9<>"$W/ack"
	perf_ctl enable && perf_ctl disable || { cat "$data.log"; die "perf did not come up"; }
}

# perf_stop: perf writes its data and exits.
perf_stop() {
	kill -INT "$PERF_PID"
	wait "$PERF_PID"
	exec 8>&- 9>&-
}

# stat_busy_idle: the busy and the idle jiffies of all CPUs so far
# (user nice system irq softirq steal; idle iowait), to check perf's
# samples against the kernel's own count of the same window.
stat_busy_idle() {
	awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6 }' /proc/stat
}

# Awk functions for the scripts that read perf's reports (pass them with
# awk "$PERF_AWK ...").  perf_group(comm): the group a command's samples
# count to.  Kernel threads started during a run show as kthreadd (perf saw
# no name for them): here those are rxe's and the block layer's workers;
# iou-wrk are io_uring's workers of whichever process.  perf_disagree(a, b):
# whether perf's busy share a and /proc/stat's b (percent) differ by more
# than 10 points, when a row's split is not to be trusted.
# shellcheck disable=SC2016
PERF_AWK='
function perf_group(c) {
	if (c == "fio" || c == "rblk-initiator") return c
	if (c ~ /^(reactor|iou-wrk)/) return "reactor"
	if (c ~ /^(kworker|kthreadd)/) return "kworker"
	if (c ~ /^ksoftirqd/) return "softirq"
	if (c == "swapper") return "idle"
	return "other"
}
function perf_disagree(a, b) { return a - b > 10 || b - a > 10 }
'
