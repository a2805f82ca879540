#!/bin/bash
# SPDX-License-Identifier: MIT
# Guest side of the VM benchmark (tools/bench/vm-bench boots the VM and runs
# this).  One boot, one Soft-RoCE device (rxe0), one backing file on the
# guest's tmpfs, measured back to back:
#   1. raw RDMA bandwidth (perftest ib_write_bw / ib_read_bw, 128 KiB): the ceiling;
#   2. rblk through the fio engine over RDMA and over TCP;
#   3. fio on /dev/ublkbN (rblk-initiator over RDMA) and on /dev/nvmeXn1
#      (the kernel's nvmet-rdma target + nvme-rdma host) serving the same file.
# Writes a markdown section to $RBLK_VM_SCRATCH/vm-bench.md.
#   RBLK_BENCH_VM_RUNTIME=10   seconds per workload and peer
#   RBLK_BENCH_VM_SIZE=256     backing file in MiB
set -u
BENCH_NAME=vm-bench
. "$RBLK_ROOT/tools/bench/guest-lib.sh"
RT=${RBLK_BENCH_VM_RUNTIME:-10}
SIZE_MB=${RBLK_BENCH_VM_SIZE:-256}
OUT=${RBLK_VM_SCRATCH:-/tmp}/vm-bench.md
FIO=$(cat "$B/fio-bin" 2>/dev/null || command -v fio)
W=/tmp/bench
IMG=$W/bench.img
NQN=nqn.2026-12.dev.rblk:bench
NVMET=/sys/kernel/config/nvmet
mkdir -p "$W"

rdma_ublk_up
echo "vm-bench: writing a ${SIZE_MB} MiB backing file (random data)"
dd if=/dev/urandom of="$IMG" bs=1M count="$SIZE_MB" status=none || die "dd"

HZ=$(getconf CLK_TCK)
busy_ticks() {	# all CPUs' non-idle time, clock ticks
	awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat
}

# bench NAME SIDE FIO-ARGS...: prints "iops mbs p50us p99us cpu_us_per_io"
bench() {
	local name=$1 side=$2 t0 t1 json=$W/$1.json
	shift 2
	t0=$(busy_ticks)
	timeout $((RT + 60)) "$FIO" --name="$name" "$@" --time_based --runtime="$RT" \
		--norandommap --randrepeat=0 --lat_percentiles=1 \
		--output-format=json --output="$json" >"$json.stdout" 2>&1 ||
		{ echo "vm-bench: fio $name failed:" >&2; cat "$json.stdout" "$json" >&2
		  echo "$name" >>"$W/failed"; echo "nan nan nan nan nan"; return; }
	t1=$(busy_ticks)
	jq -r --arg s "$side" --argjson cpu "$((t1 - t0))" --argjson hz "$HZ" '
		.jobs[0][$s] as $d |
		[ $d.iops, $d.bw_bytes / 1e6,
		  $d.lat_ns.percentile["50.000000"] / 1000,
		  $d.lat_ns.percentile["99.000000"] / 1000,
		  (if $d.total_ios > 0 then $cpu * 1e6 / $hz / $d.total_ios else 0 end)
		] | map(tostring) | join(" ")' "$json"
}
fmt() { awk -v v="$1" -v d="$2" 'BEGIN { printf "%.*f", d, v }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "n/a" }'; }
row() {	# LABEL PEER "iops mbs p50 p99 cpu"
	local i m p50 p99 cpu
	read -r i m p50 p99 cpu <<<"$3"
	echo "| $1 | $2 | $(fmt "$i" 0) | $(fmt "$m" 1) | $(fmt "$p50" 0) | $(fmt "$p99" 0) | $(fmt "$cpu" 0) |"
}
ratio_row() {	# LABEL "a..." "b..."
	local ai am ap50 ap99 acpu bi bm bp50 bp99 bcpu
	read -r ai am ap50 ap99 acpu <<<"$2"
	read -r bi bm bp50 bp99 bcpu <<<"$3"
	echo "| | **$1** | **$(ratio "$ai" "$bi")** | **$(ratio "$am" "$bm")** | $(ratio "$ap50" "$bp50") | $(ratio "$ap99" "$bp99") | $(ratio "$acpu" "$bcpu") |"
}

# ---- 1. raw RDMA ceiling -----------------------------------------------------
echo "vm-bench: perftest"
"$G/bench-perftest.sh" -D 5 -s 131072 >"$W/perftest.txt" 2>&1
cat "$W/perftest.txt"
raw_w=$(awk '/RBLK-BENCH: perftest test=ib_write_bw/ { for (i = 1; i <= NF; i++) if ($i ~ /^bw_MiBps=/) { sub("bw_MiBps=", "", $i); print $i } }' "$W/perftest.txt")
raw_r=$(awk '/RBLK-BENCH: perftest test=ib_read_bw/ { for (i = 1; i <= NF; i++) if ($i ~ /^bw_MiBps=/) { sub("bw_MiBps=", "", $i); print $i } }' "$W/perftest.txt")
raw_w_mbs=$(awk -v m="${raw_w:-0}" 'BEGIN { printf "%.1f", m * 1.048576 }')
raw_r_mbs=$(awk -v m="${raw_r:-0}" 'BEGIN { printf "%.1f", m * 1.048576 }')

# ---- 2. rblk target, fio engine over RDMA and TCP ----------------------------
cat >"$W/target.conf" <<CONF
[target]
listen_tcp = $IP:4420
listen_rdma = $IP:4421
admin_socket = $W/target.sock

[volume bench]
path = $IMG
backend = uring
allow_any_host = yes
CONF
start_target "$W/target.conf"

ENGINE_WL=(
	"4k randread QD1|read|--rw=randread --bs=4k --iodepth=1"
	"4k randread QD32|read|--rw=randread --bs=4k --iodepth=32"
	"128k read QD8|read|--rw=read --bs=128k --iodepth=8"
	"128k write QD8|write|--rw=write --bs=128k --iodepth=8"
)
eng_rows=() seq_read_rdma=0
for w in "${ENGINE_WL[@]}"; do
	IFS='|' read -r name side args <<<"$w"
	tag=$(echo "$name" | tr ' ' '-')
	echo "vm-bench: engine $name"
	# shellcheck disable=SC2086
	r=$(bench "eng-rdma-$tag" "$side" --ioengine="$B/rblk-fio.so" --target="$IP" \
		--port=4421 --transport=rdma --volume=bench $args)
	# shellcheck disable=SC2086
	t=$(bench "eng-tcp-$tag" "$side" --ioengine="$B/rblk-fio.so" --target="$IP" \
		--port=4420 --transport=tcp --volume=bench $args)
	eng_rows+=("$(row "$name" "rblk RDMA" "$r")" "$(row "" "rblk TCP" "$t")" "$(ratio_row "RDMA/TCP" "$r" "$t")")
	[ "$name" = "128k read QD8" ] && seq_read_rdma=$(echo "$r" | awk '{ print $2 }')
done

# ---- 3a. block device: rblk over RDMA through ublk ----------------------------
BLK_WL=(
	"4k randread QD1|read|--rw=randread --bs=4k --iodepth=1"
	"4k randread QD32|read|--rw=randread --bs=4k --iodepth=32"
	"4k randwrite QD1|write|--rw=randwrite --bs=4k --iodepth=1"
	"4k randwrite QD32|write|--rw=randwrite --bs=4k --iodepth=32"
	"128k read QD8|read|--rw=read --bs=128k --iodepth=8"
	"128k write QD8|write|--rw=write --bs=128k --iodepth=8"
)
declare -A ublk_res nvme_res
dev=$("$B/rblkctl" attach --target "$IP:4421" --volume bench --transport rdma --queues 2 --depth 64) ||
	die "rblkctl attach failed"
echo "vm-bench: rblk attached as $dev"
for w in "${BLK_WL[@]}"; do
	IFS='|' read -r name side args <<<"$w"
	echo "vm-bench: ublk $name"
	# shellcheck disable=SC2086
	ublk_res[$name]=$(bench "ublk-$(echo "$name" | tr ' ' '-')" "$side" \
		--filename="$dev" --ioengine=io_uring --direct=1 $args)
done
"$B/rblkctl" detach "$dev"
kill -TERM "$TPID"; wait "$TPID"

# ---- 3b. block device: kernel NVMe-oF RDMA, same file -------------------------
modprobe -a nvmet nvmet-rdma nvme-rdma || die "modprobe nvmet-rdma"
mkdir "$NVMET/subsystems/$NQN" && echo 1 >"$NVMET/subsystems/$NQN/attr_allow_any_host" &&
	mkdir "$NVMET/subsystems/$NQN/namespaces/1" &&
	echo "$IMG" >"$NVMET/subsystems/$NQN/namespaces/1/device_path" &&
	echo 1 >"$NVMET/subsystems/$NQN/namespaces/1/enable" &&
	mkdir "$NVMET/ports/1" && echo rdma >"$NVMET/ports/1/addr_trtype" &&
	echo ipv4 >"$NVMET/ports/1/addr_adrfam" && echo "$IP" >"$NVMET/ports/1/addr_traddr" &&
	echo 4430 >"$NVMET/ports/1/addr_trsvcid" &&
	ln -s "$NVMET/subsystems/$NQN" "$NVMET/ports/1/subsystems/$NQN" || die "nvmet configfs setup"
# The namespace is the block device that appears with the connection; with
# native multipath /sys/block also lists the hidden per-controller path
# nvmeXcYnZ, which has no /dev node, so only nvmeXnY counts.
before=$(ls /sys/block)
nvme connect -t rdma -a "$IP" -s 4430 -n "$NQN" -i 2 >/dev/null || die "nvme connect"
ndev=
for _ in $(seq 100); do
	ndev=$(ls /sys/block | grep -E '^nvme[0-9]+n[0-9]+$' | grep -vxF "$before" | head -n 1)
	[ -n "$ndev" ] && break
	sleep 0.1
done
[ -n "$ndev" ] || die "no nvme namespace appeared"
ndev=/dev/$ndev
echo "vm-bench: kernel NVMe-oF namespace $ndev"
for w in "${BLK_WL[@]}"; do
	IFS='|' read -r name side args <<<"$w"
	echo "vm-bench: nvme $name"
	# shellcheck disable=SC2086
	nvme_res[$name]=$(bench "nvme-$(echo "$name" | tr ' ' '-')" "$side" \
		--filename="$ndev" --ioengine=io_uring --direct=1 $args)
done
nvme disconnect -n "$NQN" >/dev/null

# ---- report -----------------------------------------------------------------------
{
	echo "## VM: Soft-RoCE (rdma_rxe) under QEMU, Debian $(uname -r) kernel"
	echo
	echo "Generated by \`make bench\` (tools/bench/vm-bench) in one VM boot: $(nproc) vCPUs"
	echo "(QEMU TCG: the CPU is emulated, so absolute numbers are tiny; compare the"
	echo "rows of one table). Backing file: ${SIZE_MB} MiB on the guest's tmpfs; rblk-target"
	echo "with the \`uring\` backend, one reactor per vCPU; ${RT} s per workload and peer."
	echo "CPU µs/IO is the whole VM's busy time (initiator and target together, both run"
	echo "in the guest) divided by I/Os completed."
	echo
	if [ -s "$W/failed" ]; then
		echo "**Runs that failed (shown as nan):** $(tr '\n' ' ' <"$W/failed")"
		echo
	fi
	echo "### Raw RDMA ceiling (perftest, 128 KiB messages, MTU 9000)"
	echo
	echo "| test | MB/s |"
	echo "|---|---:|"
	echo "| ib_write_bw | $raw_w_mbs |"
	echo "| ib_read_bw | $raw_r_mbs |"
	echo
	echo "rblk 128 KiB sequential read over RDMA (fio engine): $(fmt "$seq_read_rdma" 1) MB/s ="
	echo "**$(awk -v a="$seq_read_rdma" -v b="$raw_w_mbs" 'BEGIN { if (b > 0) printf "%.0f %%", 100 * a / b; else print "n/a" }')** of raw \`ib_write_bw\` (the target RDMA-WRITEs READ data)."
	echo
	echo "### rblk through the fio engine: RDMA vs TCP (same target, same volume)"
	echo
	echo "| workload | peer | IOPS | MB/s | p50 µs | p99 µs | VM CPU µs/IO |"
	echo "|---|---|---:|---:|---:|---:|---:|"
	printf '%s\n' "${eng_rows[@]}"
	echo
	echo "### Block device: rblk (/dev/ublkbN over RDMA) vs kernel NVMe-oF RDMA"
	echo
	echo "Both serve the same file over the same rxe0 device; fio io_uring, direct=1,"
	echo "one job. rblk: \`rblkctl attach --transport rdma --queues 2 --depth 64\`;"
	echo "kernel: nvmet file-backed namespace + \`nvme connect -t rdma -i 2\`."
	echo
	echo "| workload | peer | IOPS | MB/s | p50 µs | p99 µs | VM CPU µs/IO |"
	echo "|---|---|---:|---:|---:|---:|---:|"
	for w in "${BLK_WL[@]}"; do
		IFS='|' read -r name _ _ <<<"$w"
		row "$name" "rblk ublk" "${ublk_res[$name]}"
		row "" "kernel nvme-rdma" "${nvme_res[$name]}"
		ratio_row "rblk/kernel" "${ublk_res[$name]}" "${nvme_res[$name]}"
	done
	echo
} >"$OUT"
cat "$OUT"
