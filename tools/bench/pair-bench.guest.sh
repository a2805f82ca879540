#!/bin/bash
# SPDX-License-Identifier: MIT
# Client-node side of the two-node benchmark (tools/bench/pair-bench boots
# the pair with tests/vm/host-lib.sh's vm_pair_run and runs this).  The
# target node (node-agent, driven with tnode) holds one backing store and
# serves it with each peer in turn; fio runs here against the block device
# the peer gives this node.  The store is a RAM disk (brd, /dev/ram0) by
# default: both peers then export a block device, as deployed, and both
# reach it without a worker thread (a file on tmpfs makes io_uring punt
# every read and write to io-wq, which nvmet's inline file I/O does not pay;
# docs/benchmarks.md).
#
# Measures first the link alone (ping, ib_send_lat), then, for each repeat,
# each peer (the order rotates per repeat) and each workload, one point.
# Writes to $RBLK_VM_SCRATCH:
#   link.txt     "ping56_ms ping4k_ms ib_send_lat_typ_us ib_send_lat_p99_us"
#   points.tsv   one line per point (see POINT below)
#   peers.tsv    name, link, what it is (for the report)
#   failed       one line per point or peer that failed
# Env (set on the host, passed in by vm-run):
#   RBLK_BENCH_PEERS      peers, in order (default below)
#   RBLK_BENCH_PEER_DEFS  more peers: "NAME|rblk|LINK|TARGET-CONF-LINE|ATTACH-OPTS[|TARGET-BIN]"
#                         entries separated by ";" (LINK: rdma or tcp; TARGET-BIN:
#                         another build's rblk-target, to compare two builds in one run)
#   RBLK_BENCH_REPEATS=3 RBLK_BENCH_PAIR_RUNTIME=10 RBLK_BENCH_PAIR_SIZE=256 (MiB)
#   RBLK_BENCH_PAIR_STORE=brd  the backing store: brd (RAM disk) or file (tmpfs)
#   RBLK_BENCH_WORKLOADS  a glob on the workload tags (default: all)
#   RBLK_BENCH_LINK_ONLY=1   measure the link and stop
#   RBLK_BENCH_PAIR_PERF=1   also sample this (the client) node's CPUs with perf
#                            over each point's window: profile.tsv, one line per
#                            point (see profile_point).  The sampling costs the
#                            node CPU: a run with it is for the split, not the
#                            IOPS table.
set -u
. "$RBLK_ROOT/tests/vm/guest/lib.sh"
. "$RBLK_ROOT/tests/vm/guest/pair.sh"
. "$RBLK_ROOT/tools/bench/perf-lib.sh"
B=$RBLK_BUILD
FIO=$(cat "$B/fio-bin" 2>/dev/null || command -v fio)
S=$RBLK_VM_SCRATCH
RT=${RBLK_BENCH_PAIR_RUNTIME:-10}
REPEATS=${RBLK_BENCH_REPEATS:-3}
SIZE_MB=${RBLK_BENCH_PAIR_SIZE:-256}
STORE=${RBLK_BENCH_PAIR_STORE:-brd}
case $STORE in
brd) IMG=/dev/ram0 ;;
file) IMG=/tmp/bench.img ;;	# on the target node's tmpfs
*) echo "pair-bench: RBLK_BENCH_PAIR_STORE is brd or file, not '$STORE'"; exit 1 ;;
esac
NQN=nqn.2026-12.dev.rblk:pair-bench
W=/tmp/pair-bench
mkdir -p "$W"
: >"$S/points.tsv"; : >"$S/failed"
die() { echo "pair-bench: $*"; echo "setup: $*" >>"$S/failed"; exit 1; }
say() { echo "pair-bench: $*"; }
PERF=${RBLK_BENCH_PAIR_PERF:-0}
if [ "$PERF" = 1 ]; then
	perf_setup
	: >"$S/profile.tsv"
fi

# Peers: NAME|KIND|LINK|TARGET-CONF-LINE|ATTACH-OPTS.  KIND rblk: rblk-target
# on the target node, rblkctl attach here; KIND nvme: the kernel's nvmet on
# the target node, nvme connect here.  An rblk variant is one more line
# (a target config line and/or attach options), e.g. the polling modes
# below (docs/config.md rdma_poll, rblkctl attach --poll).
PEER_DEFS="rblk-rdma|rblk|rdma||
rblk-rdma-busy|rblk|rdma|rdma_poll = busy|
rblk-rdma-adaptive|rblk|rdma|rdma_poll = adaptive|--poll adaptive
rblk-tcp|rblk|tcp||
nvme-rdma|nvme|rdma||
nvme-tcp|nvme|tcp||
${RBLK_BENCH_PEER_DEFS:+${RBLK_BENCH_PEER_DEFS//;/$'\n'}}"
# rblk-rdma-busy is not a default peer: on these TCG guests the busy poller
# takes the vCPU the work needs (0.26-0.69x the kernel on 2026-12-04,
# docs/benchmarks-history.md), and the polling default is decided.
PEERS=${RBLK_BENCH_PEERS:-rblk-rdma nvme-rdma rblk-tcp nvme-tcp}
peer_def() { awk -F'|' -v n="$1" '$1 == n { print; found = 1; exit } END { exit !found }' <<<"$PEER_DEFS"; }
for p in $PEERS; do peer_def "$p" >/dev/null || die "unknown peer '$p' (RBLK_BENCH_PEERS; add it with RBLK_BENCH_PEER_DEFS)"; done

# tag|fio args|side of fio's JSON
WORKLOADS="4k-randread-QD1|--rw=randread --bs=4k --iodepth=1|read
4k-randread-QD32|--rw=randread --bs=4k --iodepth=32|read
4k-randwrite-QD1|--rw=randwrite --bs=4k --iodepth=1|write
4k-randwrite-QD32|--rw=randwrite --bs=4k --iodepth=32|write
128k-read-QD8|--rw=read --bs=128k --iodepth=8|read
128k-write-QD8|--rw=write --bs=128k --iodepth=8|write"

cnode_up || die "the link or the target node did not come up"
RPORT=4421 TPORT=4420 NRPORT=4430 NTPORT=4431

# ---- the link alone ------------------------------------------------------------
# ping: round trip of an ICMP echo (56 and 4096 bytes); ib_send_lat: one-way
# 4 KiB SEND latency over Soft-RoCE on the link (perftest halves the round trip).
say "link: ping"
p56=$(ping -q -c 20 -i 0.2 -W 2 "$TNODE_IP" | awk -F/ '/^rtt/ { print $5 }')
p4k=$(ping -q -c 20 -i 0.2 -W 2 -s 4096 "$TNODE_IP" | awk -F/ '/^rtt/ { print $5 }')
out=$(tnode "rxe-up -n eth0 -a $TNODE_IP/24 && modprobe -a nvmet nvmet-rdma nvmet-tcp") || die "target node setup: $out"
rxe-up -n eth0 -a "$CNODE_IP/24" >/dev/null || die "rxe-up on the client node"
modprobe -a nvme-rdma nvme-tcp || die "modprobe nvme-rdma nvme-tcp"
lat_typ=nan lat_p99=nan
if command -v ib_send_lat >/dev/null; then
	say "link: ib_send_lat"
	tnode "setsid timeout 120 ib_send_lat -d rxe0 -R -F -s 4096 -n 200 >/tmp/lat.srv 2>&1 </dev/null &" >/dev/null
	for _ in 1 2 3 4 5; do
		nap 1
		# Columns: bytes iterations t_min t_max t_typical t_avg t_stdev p99 p99.9
		res=$(timeout 120 ib_send_lat -d rxe0 -R -F -s 4096 -n 200 "$TNODE_IP" 2>&1 |
			awk '$1 == 4096 && NF >= 8 { print $5, $8 }') && [ -n "$res" ] && break
	done
	[ -n "$res" ] && read -r lat_typ lat_p99 <<<"$res"
fi
echo "${p56:-nan} ${p4k:-nan} $lat_typ $lat_p99" >"$S/link.txt"
say "link: ping 56 B ${p56:-?} ms, 4 KiB ${p4k:-?} ms; ib_send_lat 4 KiB typical $lat_typ us, p99 $lat_p99 us"
[ "${RBLK_BENCH_LINK_ONLY:-0}" = 1 ] && exit 0

# ---- the backing file and the kernel target (both links) -----------------------
say "target node: ${SIZE_MB} MiB backing store $IMG, nvmet ports rdma:$NRPORT tcp:$NTPORT"
out=$(tnode -t 120 "set -e
[ $STORE = file ] || modprobe brd rd_nr=1 rd_size=$((SIZE_MB * 1024))
dd if=/dev/urandom of=$IMG bs=1M count=$SIZE_MB status=none
c=/sys/kernel/config/nvmet s=\$c/subsystems/$NQN
mkdir \$s; echo 1 >\$s/attr_allow_any_host
mkdir \$s/namespaces/1; echo $IMG >\$s/namespaces/1/device_path; echo 1 >\$s/namespaces/1/enable
for p in 1:rdma:$NRPORT 2:tcp:$NTPORT; do
	IFS=: read -r id tr port <<<\"\$p\"
	mkdir \$c/ports/\$id; echo \$tr >\$c/ports/\$id/addr_trtype; echo ipv4 >\$c/ports/\$id/addr_adrfam
	echo $TNODE_IP >\$c/ports/\$id/addr_traddr; echo \$port >\$c/ports/\$id/addr_trsvcid
	ln -s \$s \$c/ports/\$id/subsystems/$NQN
done") || die "target node: backing file or nvmet: $out"

# ---- peers: up and down ----------------------------------------------------------
# peer_up NAME: sets DEV (the block device here) and CPIDS (this node's
# processes of the peer, for context switches; empty for the kernel).
peer_up() {
	local name kind link conf opts bin port before
	IFS='|' read -r name kind link conf opts bin <<<"$(peer_def "$1")"
	DEV='' CPIDS=''
	if [ "$kind" = nvme ]; then
		[ "$link" = rdma ] && port=$NRPORT || port=$NTPORT
		before=$(ls /sys/block)
		timeout 60 nvme connect -t "$link" -a "$TNODE_IP" -s "$port" -n "$NQN" -i 2 >/dev/null ||
			{ echo "nvme connect -t $link failed"; return 1; }
		# With native multipath /sys/block also lists the hidden
		# per-controller path nvmeXcYnZ, which has no /dev node.
		for _ in $(seq 100); do
			DEV=$(ls /sys/block | grep -E '^nvme[0-9]+n[0-9]+$' | grep -vxF "$before" | head -n 1)
			[ -n "$DEV" ] && break
			nap 0.1
		done
		[ -n "$DEV" ] || { echo "no nvme namespace appeared"; return 1; }
		DEV=/dev/$DEV
		return 0
	fi
	[ "$link" = rdma ] && port=$RPORT || port=$TPORT
	out=$(tnode -t 90 "cat >/tmp/bench-target.conf <<EOF
[target]
listen_$link = $TNODE_IP:$port
admin_socket = /run/rblk-bench.sock
$conf
[volume bench]
path = $IMG
backend = uring
allow_hosts = $CNODE_IP
EOF
: >/tmp/bench-target.log
setsid ${bin:-$B/rblk-target} --config /tmp/bench-target.conf >>/tmp/bench-target.log 2>&1 </dev/null &
for i in \$(seq 300); do grep -q 'listening on $link' /tmp/bench-target.log && exit 0; sleep 0.1; done
cat /tmp/bench-target.log; exit 1") || { echo "rblk-target did not start: $out"; return 1; }
	# shellcheck disable=SC2086
	DEV=$(timeout 60 "$B/rblkctl" attach --target "$TNODE_IP:$port" --volume bench \
		--transport "$link" --queues 2 --depth 64 $opts) || { echo "rblkctl attach failed"; return 1; }
	CPIDS=$(pgrep -d ' ' -x rblk-initiator)
}

peer_down() {	# NAME
	local kind
	IFS='|' read -r _ kind _ <<<"$(peer_def "$1")"
	if [ "$kind" = nvme ]; then
		timeout 60 nvme disconnect -n "$NQN" >/dev/null
	else
		[ -n "$DEV" ] && timeout 60 "$B/rblkctl" detach "$DEV"
		tnode -t 60 "pkill -TERM -x rblk-target; for i in \$(seq 100); do pgrep -x rblk-target >/dev/null || exit 0; sleep 0.1; done; pkill -KILL -x rblk-target" >/dev/null
	fi
	DEV=
}

# ---- one point ---------------------------------------------------------------------
# Busy time of all CPUs (clock ticks), the voluntary + nonvoluntary
# context switches of all threads of some processes, and those of the
# whole node (/proc/stat ctxt: every task, kernel threads too, so the
# kernel peers' nvmet, rxe and block work counts as rblk's does).  The
# same text runs on both nodes (here and through tnode).  sample prints
# "busy_ticks process_ctxsw window_ms node_ctxsw".
SAMPLER='busy() { awk "/^cpu / { print \$2 + \$3 + \$4 + \$7 + \$8 }" /proc/stat; }
node_ctx() { awk "/^ctxt / { print \$2 }" /proc/stat; }
ctx() { local p n=0; for p; do n=$((n + $(cat /proc/$p/task/*/status 2>/dev/null | awk "/ctxt_switches/ { s += \$2 } END { print s + 0 }"))); done; echo $n; }
sample() { local b0 c0 n0 t0 t1; b0=$(busy); c0=$(ctx $PIDS); n0=$(node_ctx); t0=${EPOCHREALTIME/./}; sleep "$1"; t1=${EPOCHREALTIME/./}; echo $(( $(busy) - b0 )) $(( $(ctx $PIDS) - c0 )) $(( (t1 - t0) / 1000 )) $(( $(node_ctx) - n0 )); }'
eval "$SAMPLER"
HZ=$(getconf CLK_TCK)
# The window: fio's steady state (skip 2 s of start, stop 1 s before its end).
WIN=$((RT - 3)); [ "$WIN" -ge 1 ] || WIN=1

# point PEER LINK TAG SIDE FIO-ARGS...: appends one line to points.tsv:
# peer link workload repeat iops mbs p50us p99us tgt_cpu_us_per_io
# cli_cpu_us_per_io tgt_ctxsw_per_io cli_ctxsw_per_io (rblk's processes;
# nan for the kernel) tgt_node_ctxsw_per_io cli_node_ctxsw_per_io
point() {
	local peer=$1 link=$2 tag=$3 side=$4 json fpid tgt cli
	shift 4
	json=$W/$peer-$tag-$REP.json
	[ "$PERF" = 1 ] && perf_start "$W/perf.data" "$PERF_FREQ"
	timeout $((RT + 60)) "$FIO" --name="$peer" --filename="$DEV" --ioengine=io_uring --direct=1 \
		"$@" --time_based --runtime="$RT" --norandommap --randrepeat=0 --lat_percentiles=1 \
		--output-format=json --output="$json" >"$json.stdout" 2>&1 &
	fpid=$!
	nap 2
	# fio started while perf was disabled, so perf saw no fork or comm of
	# its processes: they are told apart by pid (found before the window,
	# which pgrep's own CPU would blur).
	[ "$PERF" = 1 ] && FIO_PIDS=$(pgrep -d ' ' -x fio)
	# The target node samples in the background, this node in the foreground.
	tnode -t $((WIN + 30)) "$SAMPLER
PIDS=\$(pgrep -d ' ' -x rblk-target); HZ=$HZ
sample $WIN" >"$W/tgt.sample" &
	[ "$PERF" = 1 ] && { perf_ctl enable || die "perf did not take 'enable'"; }
	cli=$(PIDS=$CPIDS sample "$WIN")
	[ "$PERF" = 1 ] && { perf_ctl disable || die "perf did not take 'disable'"; perf_stop; }
	wait $!
	tgt=$(tail -n 1 "$W/tgt.sample")
	if ! wait "$fpid"; then
		say "fio $peer $tag failed:"; cat "$json.stdout" "$json"
		echo "$peer $tag repeat $REP" >>"$S/failed"
		return
	fi
	jq -r --arg s "$side" --arg peer "$peer" --arg link "$link" --arg tag "$tag" \
		--argjson rep "$REP" --argjson hz "$HZ" --argjson kind "$([ -n "$CPIDS" ] && echo 1 || echo 0)" \
		--arg tgt "$tgt" --arg cli "$cli" '
		.jobs[0][$s] as $d |
		($tgt | split(" ") | map(tonumber)) as $t | ($cli | split(" ") | map(tonumber)) as $c |
		# I/Os in a window: fio IOPS x the window length
		def ios($w): $d.iops * $w[2] / 1000;
		def per($v; $w): if ios($w) > 0 then $v / ios($w) else "nan" end;
		[ $peer, $link, $tag, $rep, $d.iops, $d.bw_bytes / 1e6,
		  $d.lat_ns.percentile["50.000000"] / 1000, $d.lat_ns.percentile["99.000000"] / 1000,
		  per($t[0] * 1e6 / $hz; $t), per($c[0] * 1e6 / $hz; $c),
		  (if $kind == 1 then per($t[1]; $t) else "nan" end),
		  (if $kind == 1 then per($c[1]; $c) else "nan" end),
		  per($t[3]; $t), per($c[3]; $c)
		] | map(tostring) | join("\t")' "$json" >>"$S/points.tsv"
	say "  $(tail -n 1 "$S/points.tsv")"
	[ "$PERF" = 1 ] &&
		profile_point "$W/perf.data" "$peer" "$link" "$tag" "$(jq ".jobs[0].$side.iops" "$json")" "$cli" "$FIO_PIDS"
}

# ---- the client node's profile (RBLK_BENCH_PAIR_PERF=1) -------------------------------
PERF_FREQ=250
# profile_point DATA PEER LINK TAG IOPS CLI FIO-PIDS: appends to
# profile.tsv peer link workload repeat perf_busy_pct stat_busy_pct, then
# CPU µs per I/O of fio rblk-initiator kworker softirq idle other, and
# keeps perf's reports by process (perf-PEER-TAG-REPEAT.txt) and by
# process and function (perf-PEER-TAG-REPEAT-sym.txt, 0.5 % and up).
# perf_busy_pct is the samples' share outside the idle task,
# stat_busy_pct the busy share /proc/stat counted over the same window
# (CLI, sample's output): they should agree, and the report flags a
# point where they do not.
profile_point() {
	local data=$1 peer=$2 link=$3 tag=$4 iops=$5 cli=$6 fio_pids=$7
	perf report -i "$data" --stdio --no-children --sort pid,sym --percent-limit 0.5 \
		>"$S/perf-$peer-$tag-$REP-sym.txt" 2>/dev/null
	perf report -i "$data" --stdio --no-children --sort pid 2>/dev/null |
		tee "$S/perf-$peer-$tag-$REP.txt" |
		awk -v peer="$peer" -v link="$link" -v tag="$tag" -v rep="$REP" -v iops="$iops" \
			-v cli="$cli" -v hz="$HZ" -v ncpu="$(nproc)" -v fio_pids="$fio_pids" "$PERF_AWK"'
		BEGIN { n = split(fio_pids, f, " "); for (i = 1; i <= n; i++) is_fio[f[i]] = 1 }
		# "  12.34%  PID:COMM" (a COMM may hold a colon: kworker/u8:1);
		# no reactor on the client node: io_uring workers count as other
		/^ *[0-9.]+%/ { p = $1; sub(/%/, "", p); k = index($2, ":")
			pid = substr($2, 1, k - 1); g = perf_group(substr($2, k + 1))
			if (pid in is_fio) g = "fio"
			else if (g == "reactor") g = "other"
			pct[g] += p }
		END { split(cli, w, " "); sec = w[3] / 1000; ios = iops * sec
			if (ios <= 0 || sec <= 0) exit
			stat = 100 * w[1] / hz / (ncpu * sec)
			us = ncpu * sec * 1e6 / ios / 100
			line = peer "\t" link "\t" tag "\t" rep "\t" sprintf("%.0f", 100 - pct["idle"]) "\t" sprintf("%.0f", stat)
			n = split("fio rblk-initiator kworker softirq idle other", col, " ")
			for (i = 1; i <= n; i++) line = line "\t" sprintf("%.0f", pct[col[i]] * us)
			print line }' >>"$S/profile.tsv"
}

# ---- the runs -------------------------------------------------------------------------
read -ra peers <<<"$PEERS"
for p in "${peers[@]}"; do
	IFS='|' read -r name kind link conf opts bin <<<"$(peer_def "$p")"
	printf '%s\t%s\t%s\n' "$name" "$link" \
		"$([ "$kind" = nvme ] && echo "kernel nvmet + nvme-$link" || echo "rblk-target${bin:+ ($bin)} + /dev/ublkbN${conf:+, target: $conf}${opts:+, attach: $opts}")"
done >"$S/peers.tsv"
for ((REP = 1; REP <= REPEATS; REP++)); do
	n=${#peers[@]}
	for ((i = 0; i < n; i++)); do
		# Rotate the order per repeat: no peer always runs first.
		p=${peers[$(((i + REP - 1) % n))]}
		IFS='|' read -r _ _ link _ <<<"$(peer_def "$p")"
		say "repeat $REP: $p up"
		if ! peer_up "$p" >"$W/up.err" 2>&1; then
			err=$(tail -n 5 "$W/up.err" | tr '\n' ' ')
			say "$p: $err"; echo "$p repeat $REP: $err" >>"$S/failed"
			peer_down "$p" >/dev/null 2>&1; continue
		fi
		while IFS='|' read -r tag args side; do
			# shellcheck disable=SC2053
			[[ $tag == ${RBLK_BENCH_WORKLOADS:-*} ]] || continue
			# shellcheck disable=SC2086
			point "$p" "$link" "$tag" "$side" $args
		done <<<"$WORKLOADS"
		peer_down "$p"
	done
done
say "done"
