#!/bin/bash
# SPDX-License-Identifier: MIT
# Client-node side of the RBD benchmark (tools/bench/rbd-bench boots the
# pair with tests/vm/host-lib.sh's vm_pair_run and runs this).  The target
# node runs a one-node Ceph cluster (tests/ceph/ceph-up, on its address on
# the link) holding one image; this node reaches that image three ways, one
# after the other, and fio measures each:
#   rblk-rdma  rblk-target on the target node (rbd backend, librbd there),
#              /dev/ublkbN here over RDMA (Soft-RoCE), rblkctl attach
#   krbd       the kernel's rbd driver here (rbd device map), talking to
#              the cluster directly
#   rbd-nbd    librbd here in rbd-nbd, /dev/nbdN
# Every peer faces the same OSD; rblk adds a hop (client -> rblk-target ->
# OSD), the others go to the OSD from here.
#
# Writes to $RBLK_VM_SCRATCH: points.tsv (one line per point, see point
# below), peers.tsv, failed.
# Env: RBLK_BENCH_RBD_PEERS ("rblk-rdma krbd rbd-nbd"), RBLK_BENCH_REPEATS (1),
#      RBLK_BENCH_PAIR_RUNTIME (10 s per point), RBLK_BENCH_RBD_SIZE (256 MiB),
#      RBLK_BENCH_RBD_STORE (memstore, or bluestore on the target node's
#      disk), RBLK_BENCH_WORKLOADS (a glob on the workload tags).
set -u
. "$RBLK_ROOT/tests/vm/guest/lib.sh"
. "$RBLK_ROOT/tests/vm/guest/pair.sh"
B=$RBLK_BUILD
FIO=$(cat "$B/fio-bin" 2>/dev/null || command -v fio)
S=$RBLK_VM_SCRATCH
RT=${RBLK_BENCH_PAIR_RUNTIME:-10}
REPEATS=${RBLK_BENCH_REPEATS:-1}
SIZE_MB=${RBLK_BENCH_RBD_SIZE:-256}
STORE=${RBLK_BENCH_RBD_STORE:-memstore}
PEERS=${RBLK_BENCH_RBD_PEERS:-rblk-rdma krbd rbd-nbd}
CEPH=/tmp/bench-ceph		# the same path on both nodes
IMG=rbd/bench
RPORT=4421
W=/tmp/rbd-bench
mkdir -p "$W"
: >"$S/points.tsv"; : >"$S/failed"
die() { echo "rbd-bench: $*"; echo "setup: $*" >>"$S/failed"; exit 1; }
say() { echo "rbd-bench: $*"; }

WORKLOADS="4k-randread-QD1|--rw=randread --bs=4k --iodepth=1|read
4k-randread-QD32|--rw=randread --bs=4k --iodepth=32|read
4k-randwrite-QD1|--rw=randwrite --bs=4k --iodepth=1|write
4k-randwrite-QD32|--rw=randwrite --bs=4k --iodepth=32|write
128k-read-QD8|--rw=read --bs=128k --iodepth=8|read
128k-write-QD8|--rw=write --bs=128k --iodepth=8|write"

cnode_up || die "the link or the target node did not come up"

# ---- the cluster on the target node, its conf and key here ------------------
store_opt=
[ "$STORE" = bluestore ] && store_opt="-b -s $((SIZE_MB * 2 + 1024))"
say "target node: Ceph ($STORE OSD) on $TNODE_IP, a ${SIZE_MB} MiB image of random data"
out=$(tnode -t 300 "set -e
rxe-up -n eth0 -a $TNODE_IP/24 >/dev/null
d=$CEPH; [ $STORE = bluestore ] && d=/srv/node/bench-ceph
$RBLK_ROOT/tests/ceph/ceph-up -d \$d -a $TNODE_IP $store_opt >/tmp/ceph-up.out 2>&1 || { cat /tmp/ceph-up.out; exit 1; }
[ \$d = $CEPH ] || ln -sfn \$d $CEPH
tail -n 1 /tmp/ceph-up.out
rbd -c $CEPH/ceph.conf create --size ${SIZE_MB}M $IMG
rbd -c $CEPH/ceph.conf bench --io-type write --io-pattern seq --io-size 4M --io-total ${SIZE_MB}M $IMG >/dev/null") ||
	die "target node: cluster: $out"
say "$out"
mkdir -p "$CEPH/log" "$CEPH/run"
tnode "cat $CEPH/ceph.conf" >"$CEPH/ceph.conf" || die "no ceph.conf from the target node"
tnode "cat $CEPH/client.rblk.keyring" >"$CEPH/client.rblk.keyring" || die "no key from the target node"
RBD=(-c "$CEPH/ceph.conf" --id rblk --keyring "$CEPH/client.rblk.keyring")
rxe-up -n eth0 -a "$CNODE_IP/24" >/dev/null || die "rxe-up on the client node"
modprobe -a rbd nbd || die "modprobe rbd nbd"

# ---- peers -------------------------------------------------------------------------
# peer_up NAME: sets DEV and CPIDS (this node's user-space processes of the
# peer, for the record; empty for krbd).
peer_up() {
	DEV='' CPIDS=''
	case $1 in
	rblk-rdma)
		out=$(tnode -t 90 "cat >/tmp/bench-target.conf <<CONF
[target]
listen_rdma = $TNODE_IP:$RPORT
admin_socket = /run/rblk-bench.sock
[volume bench]
backend = rbd
rbd_pool = ${IMG%/*}
rbd_image = ${IMG#*/}
ceph_conf = $CEPH/ceph.conf
ceph_client_id = rblk
ceph_keyring = $CEPH/client.rblk.keyring
allow_hosts = $CNODE_IP
CONF
: >/tmp/bench-target.log
setsid $B/rblk-target --config /tmp/bench-target.conf >>/tmp/bench-target.log 2>&1 </dev/null &
for i in \$(seq 300); do grep -q ' ready\$' /tmp/bench-target.log && exit 0; sleep 0.1; done
cat /tmp/bench-target.log; exit 1") || { echo "rblk-target did not start: $out"; return 1; }
		DEV=$(timeout 60 "$B/rblkctl" attach --target "$TNODE_IP:$RPORT" --volume bench \
			--transport rdma --queues 2 --depth 64) || { echo "rblkctl attach failed"; return 1; }
		CPIDS=$(pgrep -d ' ' -x rblk-initiator) ;;
	krbd)
		DEV=$(timeout 60 rbd "${RBD[@]}" device map -o noudev "$IMG") || { echo "rbd device map failed"; return 1; } ;;
	rbd-nbd)
		DEV=$(timeout 60 rbd-nbd "${RBD[@]}" map "$IMG") || { echo "rbd-nbd map failed"; return 1; }
		CPIDS=$(pgrep -d ' ' -x rbd-nbd) ;;
	*)	echo "unknown peer $1"; return 1 ;;
	esac
	[ -b "$DEV" ] || { echo "no block device ($DEV)"; return 1; }
}

peer_down() {	# NAME
	case $1 in
	rblk-rdma)
		[ -n "$DEV" ] && timeout 60 "$B/rblkctl" detach "$DEV"
		tnode -t 60 "pkill -TERM -x rblk-target; for i in \$(seq 100); do pgrep -x rblk-target >/dev/null || exit 0; sleep 0.1; done; pkill -KILL -x rblk-target" >/dev/null ;;
	krbd)    [ -n "$DEV" ] && timeout 60 rbd "${RBD[@]}" device unmap -o noudev "$DEV" ;;
	rbd-nbd) [ -n "$DEV" ] && timeout 60 rbd-nbd unmap "$DEV" ;;
	esac
	DEV=
}

# ---- one point -------------------------------------------------------------------
# Busy time of all CPUs (clock ticks) over a window; the same text runs on
# both nodes (here and through tnode).
SAMPLER='busy() { awk "/^cpu / { print \$2 + \$3 + \$4 + \$7 + \$8 }" /proc/stat; }
sample() { local b0 t0 t1; b0=$(busy); t0=${EPOCHREALTIME/./}; sleep "$1"; t1=${EPOCHREALTIME/./}; echo $(( $(busy) - b0 )) $(( (t1 - t0) / 1000 )); }'
eval "$SAMPLER"
HZ=$(getconf CLK_TCK)
WIN=$((RT - 3)); [ "$WIN" -ge 1 ] || WIN=1

# point PEER TAG SIDE FIO-ARGS...: one line in points.tsv:
# peer workload repeat iops mbs p50us p99us tgt_cpu_us_per_io cli_cpu_us_per_io
point() {
	local peer=$1 tag=$2 side=$3 json fpid tgt cli
	shift 3
	json=$W/$peer-$tag-$REP.json
	timeout $((RT + 60)) "$FIO" --name="$peer" --filename="$DEV" --ioengine=io_uring --direct=1 \
		"$@" --time_based --runtime="$RT" --norandommap --randrepeat=0 --lat_percentiles=1 \
		--output-format=json --output="$json" >"$json.stdout" 2>&1 &
	fpid=$!
	nap 2
	tnode -t $((WIN + 30)) "$SAMPLER
sample $WIN" >"$W/tgt.sample" &
	cli=$(sample "$WIN")
	wait $!
	tgt=$(tail -n 1 "$W/tgt.sample")
	if ! wait "$fpid"; then
		say "fio $peer $tag failed:"; cat "$json.stdout" "$json"
		echo "$peer $tag repeat $REP" >>"$S/failed"
		return
	fi
	jq -r --arg s "$side" --arg peer "$peer" --arg tag "$tag" --argjson rep "$REP" \
		--argjson hz "$HZ" --arg tgt "$tgt" --arg cli "$cli" '
		.jobs[0][$s] as $d |
		($tgt | split(" ") | map(tonumber)) as $t | ($cli | split(" ") | map(tonumber)) as $c |
		def ios($w): $d.iops * $w[1] / 1000;
		def per($v; $w): if ios($w) > 0 then $v / ios($w) else "nan" end;
		[ $peer, $tag, $rep, $d.iops, $d.bw_bytes / 1e6,
		  $d.lat_ns.percentile["50.000000"] / 1000, $d.lat_ns.percentile["99.000000"] / 1000,
		  per($t[0] * 1e6 / $hz; $t), per($c[0] * 1e6 / $hz; $c)
		] | map(tostring) | join("\t")' "$json" >>"$S/points.tsv"
	say "  $(tail -n 1 "$S/points.tsv")"
}

# ---- the runs -------------------------------------------------------------------------
read -ra peers <<<"$PEERS"
for p in "${peers[@]}"; do
	case $p in
	rblk-rdma) what="rblk-target (rbd backend) on the target node, /dev/ublkbN here over RDMA (rblkctl attach --queues 2 --depth 64)" ;;
	krbd)      what="the kernel's rbd driver here (rbd device map), straight to the OSD" ;;
	rbd-nbd)   what="rbd-nbd here (librbd + nbd), straight to the OSD" ;;
	*)         die "unknown peer '$p' (RBLK_BENCH_RBD_PEERS: rblk-rdma krbd rbd-nbd)" ;;
	esac
	printf '%s\t%s\n' "$p" "$what"
done >"$S/peers.tsv"
for ((REP = 1; REP <= REPEATS; REP++)); do
	n=${#peers[@]}
	for ((i = 0; i < n; i++)); do
		p=${peers[$(((i + REP - 1) % n))]}
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
			point "$p" "$tag" "$side" $args
		done <<<"$WORKLOADS"
		peer_down "$p" || echo "$p repeat $REP: did not come down cleanly" >>"$S/failed"
	done
done
say "done"
