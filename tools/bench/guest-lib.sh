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

# ublk_volume NAME PATH TRANSPORT POLL [TARGET_LINE...]: serves PATH as
# volume NAME (uring backend) from a target on $IP (rdma_poll POLL, each
# TARGET_LINE added to its [target] section; config and log in $W),
# attaches it through ublk with one queue of depth 64 (--poll POLL) and
# fills its first 64 MiB (RBLK_BENCH_ATTACH_OPTS: more rblkctl attach
# options, e.g. "--batch-io off").  Sets dev, TPID and IPID (rblk-initiator's pid).
ublk_volume() {
	local name=$1 path=$2 tp=$3 poll=$4 port
	shift 4
	case $tp in rdma) port=4421 ;; tcp) port=4420 ;; *) die "transport: rdma or tcp, not $tp" ;; esac
	{
		echo "[target]"
		echo "listen_$tp = $IP:$port"
		echo "admin_socket = $W/target.sock"
		echo "rdma_poll = $poll"
		printf '%s\n' "$@"
		echo
		echo "[volume $name]"
		echo "path = $path"
		echo "backend = uring"
		echo "allow_any_host = yes"
	} >"$W/target.conf"
	start_target "$W/target.conf"
	# shellcheck disable=SC2086 # RBLK_BENCH_ATTACH_OPTS: more attach options, split
	dev=$("$B/rblkctl" attach --target "$IP:$port" --volume "$name" --transport "$tp" \
		--queues 1 --depth 64 --poll "$poll" ${RBLK_BENCH_ATTACH_OPTS:-}) ||
		die "rblkctl attach failed"
	IPID=$(pgrep -n -x rblk-initiator) || die "no rblk-initiator"
	dd if=/dev/urandom of="$dev" bs=1M count=64 oflag=direct status=none || die "dd to $dev failed"
}

# The workloads the one-guest count tools (syscalls, threads,
# uring-events) run, each "RW QD" at 4 KiB.
COUNT_WORKLOADS=("randread 1" "randwrite 1" "randread 32" "randwrite 32")

# fio_run JSON DEV RW BS QD [COMMAND...]: one fio job of $RT seconds on
# DEV (io_uring, direct, at random in its first 64 MiB), its results to
# JSON; with COMMAND, fio runs under it (e.g. perf stat ... --).  Dies
# when fio fails.
fio_run() {
	local json=$1 dev=$2 rw=$3 bs=$4 qd=$5 name
	shift 5
	name=$(basename "$json" .json)
	"$@" fio --name="$name" --filename="$dev" --ioengine=io_uring --direct=1 --rw="$rw" \
		--bs="$bs" --iodepth="$qd" --size=64M --time_based --runtime="$RT" --norandommap \
		--output-format=json --output="$json" >/dev/null 2>&1 || die "fio $name failed"
}

# fio_ios JSON: sets IOS to the I/Os (reads and writes) fio did; dies
# when it did none.
fio_ios() {
	IOS=$(jq '.jobs[0].read.total_ios + .jobs[0].write.total_ios' "$1")
	[ "${IOS:-0}" -gt 0 ] || die "fio $(basename "$1" .json) did no I/O"
}
