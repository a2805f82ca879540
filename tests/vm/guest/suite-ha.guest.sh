#!/bin/bash
# SPDX-License-Identifier: MIT
# Several-node suite, client node side (host side: tests/vm/suite-ha.sh).
# Nodes on one switch: "ceph" (a one-node cluster: 1 mon, 1 memstore OSD,
# cephx), "a" and "b" (rblk-target, one volume on the same RBD image with
# rbd_ha, over RDMA on Soft-RoCE and TCP), and this client node, whose
# one /dev/ublkbN has a path to each target (docs/multipath.md).  Faults
# are node power cuts and cuts of one link at the switch.
#
# The cases share the cluster and the device: each one brings up what is
# not up yet (ha_ready), so any case can run alone (RBLK_VM_CASES).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster.sh"
CTL=$RBLK_BUILD/rblkctl
TGT=$RBLK_BUILD/rblk-target
FIO=$(cat "$RBLK_BUILD/fio-bin" 2>/dev/null || command -v fio)
ENGINE=$RBLK_BUILD/rblk-fio.so
RPORT=4421 TPORT=4420
# ceph-up's folder on the ceph node; the targets get its conf and keyring
# at the same paths, so the conf's own paths hold there too.
CEPH_DIR=/var/lib/rblk-ceph
KA=2		# the device's keep-alive timeout, s
STATE=$RBLK_VM_SCRATCH/ha-state
UP_ERR=
cluster_up || UP_ERR="the switch or a node did not come up"
mkdir -p "$STATE" /mnt/ha

# --- the cluster, the targets, the device -----------------------------------

ceph_ready() {
	[ -e "$STATE/ceph" ] && return 0
	local out
	out=$(node ceph -t 300 "$RBLK_ROOT/tests/ceph/ceph-up -d $CEPH_DIR -a $(node_ip ceph) -s 768 &&
		. $CEPH_DIR/env && rbd -c \$CEPH_CONF -k \$CEPH_ADMIN_KEYRING create --size 1G \$CEPH_POOL/hadisk &&
		mkdir -p $RBLK_VM_SCRATCH/ceph && cp $CEPH_DIR/ceph.conf $CEPH_DIR/env \$CEPH_RBLK_KEYRING $RBLK_VM_SCRATCH/ceph/") ||
		{ echo "$out"; fail "the Ceph node did not start its cluster"; }
	log "$(echo "$out" | grep 'cluster up')"
	: >"$STATE/ceph"
}

# The second network of case ha-rdma-tcp: 10.88.1.X next to 10.88.0.X.
alt_ip() { local ip=$1; echo "10.88.1.${ip##*.}"; }

# rblk-target on node N (a or b), vol0 = the image hadisk with rbd_ha;
# RDMA on the node's address, TCP on every address (alt_ip too).
target_start() {	# N
	local ip out
	ip=$(node_ip "$1")
	out=$(node "$1" -t 120 "rxe-up -n eth0 -a $ip/24 >/dev/null || exit 1
ip addr replace $(alt_ip "$ip")/24 dev eth0 || exit 1
mkdir -p $CEPH_DIR/run $CEPH_DIR/log $CEPH_DIR/crash
cp $RBLK_VM_SCRATCH/ceph/* $CEPH_DIR/ && . $CEPH_DIR/env || exit 1
[ -z \"\${RBLK_HA_CEPH_DEBUG:-}\" ] || printf '[client]\\n%s\\n' \"\$RBLK_HA_CEPH_DEBUG\" >>$CEPH_DIR/ceph.conf
cat >/run/target.conf <<EOF
[target]
listen_rdma = $ip:$RPORT
listen_tcp = 0.0.0.0:$TPORT
reactors = 1
admin_socket = /run/rblk-target.sock
[volume vol0]
backend = rbd
rbd_pool = \$CEPH_POOL
rbd_image = hadisk
ceph_conf = \$CEPH_CONF
ceph_client_id = rblk
ceph_keyring = \$CEPH_RBLK_KEYRING
allow_any_host = yes
rbd_ha = yes
EOF
setsid $TGT --config /run/target.conf >>/run/target.log 2>&1 </dev/null &
for i in \$(seq 600); do grep -q ' ready\$' /run/target.log && exit 0; sleep 0.1; done
tail -n 20 /run/target.log; exit 1") || { echo "$out"; fail "rblk-target did not start on node $1"; }
}

# ha show N FIELD: field of vol0's rbd.ha at node N's target
ha() {
	node "$1" "$CTL --socket /run/rblk-target.sock volume show vol0 --json" |
		python3 -c "import json,sys; print(json.load(sys.stdin)['volume']['rbd']['ha']['$2'])"
}
lock_is() { [ "$(ha "$1" lock)" = "$2" ]; }	# N STATE

# path N FIELD: field of path N (1: a, 2: b) of the device
path() {
	"$CTL" list --json | python3 -c "import json,sys; print(json.load(sys.stdin)['devices'][0]['paths'][$1 - 1]['$2'])"
}
path_is() { [ "$(path "$1" "$2")" = "$3" ]; }	# N FIELD VALUE
pnum() { [ "$1" = a ] && echo 1 || echo 2; }	# node -> path number
other() { [ "$1" = a ] && echo b || echo a; }
# The node whose path the device uses.
active() { path_is 1 role optimized && echo a || echo b; }

dump_logs() {
	local n
	timeout 10 "$CTL" list 2>&1
	for n in a b; do
		echo "--- node $n: tail of its target's log"
		node "$n" "grep -v 'I/O error' /run/target.log | tail -n 25" 2>&1
	done
	for f in /run/rblk/*.log; do
		[ -s "$f" ] && { echo "--- tail of $f"; tail -n 30 "$f"; }
	done
}
ha_fail() { dump_logs; fail "$@"; }

# Every log of the client and the targets, in the scratch folder
# (build/vm/ha/logs on the host), after each case.
save_logs() {
	local n d=$RBLK_VM_SCRATCH/logs
	mkdir -p "$d"
	cp /run/rblk/*.log "$d/" 2>/dev/null
	for n in a b; do
		node "$n" "cp /run/target.log $d/target-$n.log; cp $CEPH_DIR/log/client.rblk.log $d/ceph-client-$n.log" >/dev/null 2>&1
	done
}

# Everything up, the device attached and its xfs mounted on /mnt/ha
# with a tree of checksummed files.  Sets DEV.
ha_ready() {
	[ -z "$UP_ERR" ] || fail "$UP_ERR"
	need_cmd mkfs.xfs xfs_repair ping
	need_build rblk-target rblkctl rblk-initiator
	grep -qa 'rbd image %s/%s' "$TGT" || skip "rblk-target built without the rbd backend (librbd-dev missing)"
	trap 'rc=$?; [ $rc = 0 ] || dump_logs; save_logs' EXIT
	# An earlier case that failed half-way may have left a link cut.
	link_heal client a && link_heal client b || fail "cannot heal the client's links"
	if [ -e "$STATE/dev" ]; then
		DEV=$(cat "$STATE/dev")
		mountpoint -q /mnt/ha || fail "an earlier case left $DEV unmounted"
		return 0
	fi
	rxe-up -n eth0 -a "$CLIENT_IP/24" >/dev/null || fail "rxe-up on the client node"
	ublk-up >/dev/null || fail "ublk-up"
	ceph_ready
	target_start a
	target_start b
	DEV=$(timeout 120 "$CTL" attach --target "rdma:$(node_ip a):$RPORT" \
		--target "rdma:$(node_ip b):$RPORT" --volume vol0 --queues 2 \
		--keep-alive-tmo $KA --reconnect-delay 1 2>"$CASE_TMP/attach.err")
	[ -b "$DEV" ] || { cat "$CASE_TMP/attach.err"; ha_fail "multipath attach failed"; }
	mkfs.xfs -q -f -d size=900m "$DEV" >mkfs.log 2>&1 || { cat mkfs.log; ha_fail "mkfs.xfs failed"; }
	mount "$DEV" /mnt/ha || ha_fail "mount failed"
	mkdir -p /mnt/ha/tree
	for i in $(seq 1 40); do head -c $((RANDOM * 10 + i)) /dev/urandom >"/mnt/ha/tree/f$i"; done
	(cd /mnt/ha/tree && sha256sum f*) >"$STATE/sums"
	# A probe file whose one block is written: a direct write to it goes
	# straight to the device (no allocation), the failover's yardstick.
	dd if=/dev/urandom of=/mnt/ha/probe bs=4k count=1 oflag=direct status=none && sync ||
		ha_fail "probe file"
	echo "$DEV" >"$STATE/dev"
	wait_until 30 path_is 2 probe reachable || ha_fail "path 2 never probed reachable"
	log "$DEV on $(node_ip a) and $(node_ip b), xfs mounted"
}

# fio verify on the file system, rate-capped so that a fault lands mid-run
# (SIZE MiB at 1 MiB/s: the fault comes 2-4 s in).  Four emulated guests
# on two cores move little data: 16 MiB took 100 s with a failover.
ha_fio() { fs_fio "$1" /mnt/ha "${2:-8}M" 1m; }	# NAME [SIZE]
ha_fio_ok() {	# NAME
	fs_fio_ok "$1" ha_fail
	rm -f "/mnt/ha/$1".*
}

# ms from T0 until a 4 KiB direct write to the probe file completes.  T0
# is taken once the host answered that the fault is in effect (its QEMU
# killed, the switch dropping): the fault came at most one answer's trip
# (0.1-0.3 s) before it.
io_flowing_ms() {	# T0 (usecs)
	timeout 120 dd if=/dev/urandom of=/mnt/ha/probe bs=4k count=1 oflag=direct conv=notrunc status=none ||
		ha_fail "the probe write failed"
	echo $(( ($(_usecs) - $1) / 1000 ))
}

# The files hold their sums and the file system checks clean (unmounted
# for xfs_repair -n, then mounted again).
ha_check_fs() {
	(cd /mnt/ha/tree && sha256sum -c --quiet "$STATE/sums") || ha_fail "checksums differ"
	umount /mnt/ha || ha_fail "umount failed"
	xfs_repair -n "$DEV" >"$CASE_TMP/repair.out" 2>&1 ||
		{ cat "$CASE_TMP/repair.out"; ha_fail "xfs_repair -n found damage"; }
	mount "$DEV" /mnt/ha || ha_fail "mount after xfs_repair -n failed"
}

# The device's standby path (to node N) is back: probed reachable, not in use.
standby_back() {	# N SECS
	wait_until "$2" path_is "$(pnum "$1")" probe reachable ||
		ha_fail "node $1's path not reachable again: $(path "$(pnum "$1")" probe)"
	path_is "$(pnum "$1")" role standby || ha_fail "node $1's path is not a standby"
}

# --- cases -------------------------------------------------------------------

# The switch: every node reaches every other; a cut between the client
# and a leaves a's other links.
case_switch() {
	[ -z "$UP_ERR" ] || fail "$UP_ERR"
	need_cmd ping
	local n
	for n in a b ceph; do
		ping -c 1 -W 5 "$(node_ip "$n")" >/dev/null || fail "no ping to node $n"
	done
	link_cut client a || fail "link_cut"
	! ping -c 2 -W 1 "$(node_ip a)" >/dev/null || fail "node a answers across a cut link"
	node a "ping -c 1 -W 5 $(node_ip ceph)" >/dev/null || fail "node a lost the ceph node too"
	node b "ping -c 1 -W 5 $(node_ip a)" >/dev/null || fail "node b lost node a too"
	link_heal client a || fail "link_heal"
	ping -c 1 -W 5 "$(node_ip a)" >/dev/null || fail "no ping to node a after the heal"
	log "cut client-a: a unreachable from the client only; healed"
}

# 1 and 3: the active target's node loses power under fio verify; the
# device goes on through the other.  Powered on, the node's target
# starts again and its path rejoins as standby, with fio running.
case_power_off() {
	local act stb t0 ms
	ha_ready
	act=$(active) stb=$(other "$(active)")
	ha_fio poweroff
	nap 4
	node_power_cut "$act"
	t0=$(_usecs)
	ms=$(io_flowing_ms "$t0")
	wait_until 30 path_is "$(pnum "$stb")" role optimized || ha_fail "the device is not on node $stb's path"
	wait_until 30 lock_is "$stb" owned || ha_fail "node $stb does not hold the lock"
	ha_fio_ok poweroff
	log "node $act powered off: a write completed through $stb $ms ms later (keep-alive-tmo ${KA} s); fio verify clean"
	node_power_on "$act"
	ha_fio rejoin
	target_start "$act"
	standby_back "$act" 60
	ha_fio_ok rejoin
	ha_check_fs
	log "node $act back: its path rejoined as standby under fio, no error; xfs_repair -n clean, sums hold"
}

# 2 and 3: only the link between the client and the active target is
# cut; that target keeps the cluster.  The other takes over and fences
# it.  A writer on the cut-off node itself (a session to its own target
# only, no keep-alive) goes on writing the volume's tail, past the file
# system: once the takeover happened its writes are refused, and the
# block keeps what the client wrote through the new target.
case_partition() {
	local act stb t0 ms n stuck
	ha_ready
	need_build rblk-fio.so
	act=$(active) stb=$(other "$(active)")
	# The late writer: 4 KiB at 960 MiB (the file system ends at 900).
	node "$act" "setsid $FIO --ioengine=$ENGINE --target=$(node_ip "$act"):$TPORT --volume=vol0 \
		--name=late --rw=write --bs=4k --size=4k --offset=960m --rate_iops=2 --iodepth=4 \
		--time_based --runtime=300 --keep_alive_tmo=-1 --io_timeout=-1 \
		--ctrl_loss_tmo=0 --output-format=terse >/run/late.out 2>&1 </dev/null &
		echo \$! >/run/late.pid" || fail "cannot start the late writer on node $act"
	ha_fio partition
	nap 4
	link_cut client "$act" || ha_fail "link_cut"
	t0=$(_usecs)
	ms=$(io_flowing_ms "$t0")
	wait_until 60 path_is "$(pnum "$stb")" role optimized || ha_fail "the device is not on node $stb's path"
	wait_until 60 lock_is "$stb" owned || ha_fail "node $stb does not hold the lock"
	# The client's own pattern at 960 MiB, through the new target.
	dd if=/dev/zero bs=4k count=1 status=none | tr '\0' 'B' >"$CASE_TMP/pat"
	dd if="$CASE_TMP/pat" of="$DEV" bs=4k seek=$((960 * 256)) count=1 oflag=direct status=none ||
		ha_fail "the pattern write through node $stb failed"
	# The late writer's next write is refused: its job fails (one
	# program waits for it: a loop of them is slow on an emulated CPU,
	# and the node's agent runs one command at a time).  Or librbd
	# holds it for good (Ceph tracker 61607, docs/multipath.md): the
	# node then left that handle open to it and opened a new one.
	fenced_for_long "$(ha "$stb" last_fenced_holder)" "node $act's fenced handle"
	stuck=
	if ! node "$act" -t 90 "timeout 60 tail --pid=\$(cat /run/late.pid) -f /dev/null" >/dev/null; then
		[ "$(ha "$act" abandoned_handles)" -ge 1 ] ||
			ha_fail "the writer on node $act still runs 60 s after the takeover, and no handle was left to librbd"
		node "$act" "pkill -x fio" >/dev/null
		stuck=" (one held by librbd at a handle left open)"
		abandoned_blocklisted "$act"
	fi
	node "$act" "grep -q 'fenced: another target took over' /run/target.log" ||
		ha_fail "node $act did not find it was fenced"
	n=$(ha "$act" refused)
	[ "$n" -ge 1 ] || [ -n "$stuck" ] || ha_fail "node $act refused nothing"
	cmp <(dd if="$DEV" bs=4k skip=$((960 * 256)) count=1 iflag=direct status=none) "$CASE_TMP/pat" ||
		ha_fail "a write from node $act landed after the takeover"
	ha_fio_ok partition
	log "link client-$act cut: a write completed through $stb $ms ms later; $act fenced, $n late request(s) refused$stuck, the block kept the client's data; fio verify clean"
	ha_fio heal
	link_heal client "$act" || ha_fail "link_heal"
	wait_until 60 lock_is "$act" standby || ha_fail "node $act did not reopen as standby: $(ha "$act" lock)"
	standby_back "$act" 60
	ha_fio_ok heal
	ha_check_fs
	log "link healed: node $act's path rejoined as standby under fio, no error; xfs_repair -n clean"
}

# blocklist_days ADDR: whole days until the monitor's blocklist entry for
# ADDR lapses (empty when it has none).
blocklist_days() {
	local until
	until=$(node ceph ". $CEPH_DIR/env && ceph -c \$CEPH_CONF -k \$CEPH_ADMIN_KEYRING osd blocklist ls 2>/dev/null" |
		awk -v a="$1" '$1 == a { print $2 }')
	[ -n "$until" ] && echo $(( ($(date -d "$until" +%s) - $(date +%s)) / 86400 ))
}

# fenced_for_long ADDR WHOSE: the monitor blocklists ADDR for 360 days or
# more (rblk's fence: a write librbd still holds there must never land,
# and the entry cannot be made longer once it exists).
fenced_for_long() {
	local days
	days=$(blocklist_days "$1")
	[ -n "$days" ] || ha_fail "the monitor has no blocklist entry for $2 $1"
	((days >= 360)) || ha_fail "$2 $1 is blocklisted for $days days only"
	log "$2 $1 is blocklisted for $days days"
}

# Node N left a handle open to a request librbd holds: that handle's
# address (its log line) has the fence's year-long entry.
abandoned_blocklisted() {	# N
	local addr
	addr=$(node "$1" "sed -n 's/.*left the fenced handle \([^ ]*\) of image.*/\1/p' /run/target.log" | tail -n 1)
	[ -n "$addr" ] || ha_fail "node $1 did not log the address of the handle it left open"
	fenced_for_long "$addr" "node $1's abandoned handle"
}

# What a node holds: its rblk process's open fds, RSS (KiB, and how much
# of it is file-backed), the node's RDMA QPs, its threads, and for a
# target its heap in use (bytes, rblkctl status) and, from one read of
# its smaps, the RSS in malloc's arenas ([heap] and the anonymous
# mappings on a 16 MiB boundary, where glibc puts its 64 MiB-aligned
# thread arenas) and outside them (KiB).  The heap in use and the RSS
# outside the arenas are the leak checks; the arenas' RSS also counts
# the free memory glibc keeps.
holdings() {	# N|client
	local s='p=$(pgrep -x PROG | head -n 1); [ -n "$p" ] || { echo none; exit 0; }
echo "fd $(ls /proc/$p/fd | wc -l) rss $(awk "/VmRSS/ {print \$2}" /proc/$p/status) file $(awk "/RssFile/ {print \$2}" /proc/$p/status) qp $(rdma res show qp 2>/dev/null | grep -c lqpn) threads $(ls /proc/$p/task | wc -l)"'
	if [ "$1" = client ]; then
		bash -c "${s//PROG/rblk-initiator}"
	else
		local h
		h=$(node "$1" "${s//PROG/rblk-target}")
		[ "$h" = none ] || h+=" heap $(node "$1" "$CTL --socket /run/rblk-target.sock status --json" |
			python3 -c "import json,sys; print(json.load(sys.stdin)['heap_in_use_bytes'])")"
		[ "$h" = none ] || h+=" $(rss_by_mapping "$1" | awk '$1 == "arena" || $1 == "[heap]" { m += $2; next }
			{ o += $2 } END { print "arenas", m + 0, "out", o + 0 }')"
		echo "$h"
	fi
}

# rss_by_mapping N: node N's target's RSS by mapping, "NAME KiB" lines:
# files by path, "arena" (anonymous, on a 16 MiB boundary), "anon" (the
# other anonymous ones: pools, stacks), [heap], [stack] ...
rss_by_mapping() {
	node "$1" 'p=$(pgrep -x rblk-target | head -n 1); [ -n "$p" ] && awk '"'"'
/^[0-9a-f]+-[0-9a-f]+ / { split($1, r, "-"); n = $6 == "" ? (substr(r[1], length(r[1]) - 5) == "000000" ? "arena" : "anon") : $6; next }
/^Rss:/ { k[n] += $2 }
END { for (x in k) print x, k[x] }'"'"' /proc/$p/smaps'
}

# rss_where N: logs where node N's target has its RSS, the mappings of
# 1 MiB or more.
rss_where() {
	log "node $1 rss by mapping (KiB): $(rss_by_mapping "$1" | awk '$2 >= 1024 { sub(/.*\//, "", $1); printf "%s %d; ", $1, $2 }')"
}

# 4: failovers in a row under fio verify, alternating a and b (each a
# cut of the active target's link, healed once the other took over):
# no error, and no node holds more fds, QPs or memory at the end than
# half-way (within a small slack).
case_failovers() {
	local i act stb t0 t1 t2 ms n=${RBLK_HA_FAILOVERS:-40} times=() w samples=$CASE_TMP/holdings
	((n >= 2)) || fail "RBLK_HA_FAILOVERS must be 2 or more"
	ha_ready
	for ((i = 1; i <= n; i++)); do
		act=$(active) stb=$(other "$(active)")
		ha_fio "f$i" 4
		nap 2
		link_cut client "$act" || ha_fail "link_cut"
		t0=$(_usecs)
		ms=$(io_flowing_ms "$t0")
		times+=("$ms")
		wait_until 60 path_is "$(pnum "$stb")" role optimized || ha_fail "failover $i: not on node $stb's path"
		ha_fio_ok "f$i"
		t1=$(_usecs)
		link_heal client "$act" || ha_fail "link_heal"
		wait_until 90 lock_is "$act" standby || ha_fail "failover $i: node $act did not reopen as standby"
		t2=$(_usecs)
		standby_back "$act" 60
		log "failover $i: $act -> $stb, I/O flowing after $ms ms; fio done +$(( (t1 - t0) / 1000000 )) s, $act standby +$(( (t2 - t1) / 1000000 )) s, its path reachable +$(( ($(_usecs) - t2) / 1000000 )) s"
		# What each node holds, from the middle on: the first
		# failovers set up what stays (the allocator's arenas, a
		# cluster handle's threads), a leak grows with every one.
		# Every one from there is logged: how it grows, if it does.
		if ((i >= n / 2)); then
			w=("$(holdings client)" "$(holdings a)" "$(holdings b)")
			printf '%s\n' "client ${w[0]}" "a ${w[1]}" "b ${w[2]}" >>"$samples"
			log "after failover $i: client ${w[0]}; a ${w[1]}; b ${w[2]}"
			((i == n / 2 || i == n)) && { rss_where a; rss_where b; }
		fi
	done
	python3 - "$samples" <<'PY' || ha_fail "a node holds more after the failovers"
import statistics, sys
# One sample per node and failover from n/2 on: "WHO key value ...".
seen = {}
for line in open(sys.argv[1]):
    w = line.split()
    seen.setdefault(w[0], []).append(dict(zip(w[1::2], map(int, w[2::2]))))
# The leak checks, first sample against last: fds, QPs, a target's heap
# in use and its RSS outside malloc's arenas ("out").  The RSS swings by
# 4-8 MiB from one failover to the next on a target, with the free
# memory glibc keeps in its arenas (docs/multipath.md, "Memory across
# failovers"): it is checked on the medians of the first and last five
# samples, with a loose bound.
slack = {"fd": 4, "qp": 2, "heap": 1024 * 1024, "out": 2048}
rss_slack = {"client": 8192, "a": 16384, "b": 16384}
bad, grew = [], []
for who, s in seen.items():
    s = [v for v in s if "rss" in v]	# "none": no process then
    if not s:
        continue
    x, y = s[0], s[-1]
    for k, d in slack.items():
        if k in x and y[k] > x[k] + d:
            bad.append("%s %s %d -> %d" % (who, k, x[k], y[k]))
    r0 = statistics.median(v["rss"] for v in s[:5])
    r1 = statistics.median(v["rss"] for v in s[-5:])
    grew.append("%s rss %+d KiB%s" % (who, r1 - r0, " out %+d KiB" % (y["out"] - x["out"]) if "out" in x else ""))
    if r1 > r0 + rss_slack[who]:
        bad.append("%s rss median %d -> %d" % (who, r0, r1))
print("; ".join(grew))
print("; ".join(bad) or "no growth beyond fd +4, qp +2, target heap +1 MiB, target RSS outside the arenas +2 MiB, RSS medians +8 MiB (client), +16 MiB (targets)")
sys.exit(1 if bad else 0)
PY
	ha_check_fs
	log "$n failovers: I/O flowing after ${times[*]} ms; xfs_repair -n clean, sums hold; handles left to librbd: a $(ha a abandoned_handles), b $(ha b abandoned_handles)"
}

# 5: one target, two paths to it: RDMA on its first address, TCP on a
# second one.  The client's frames to the first address are dropped
# (rdma_cut: Soft-RoCE's go nowhere, TCP to the second goes on) under fio
# verify: the device moves to the TCP path with no error.
# The xfs device is detached first: a second device on the volume would
# take the lock from the first's target at each write.
# rdma_cut IP / rdma_heal: drop every frame the client sends to IP, at
# eth0's egress.  Not a blackhole route: Soft-RoCE keeps the route its
# QP found at connect, and its frames went on (the RDMA path stayed live
# for 60 s in the first four-node run).
rdma_cut() {
	tc qdisc add dev eth0 clsact &&
		tc filter add dev eth0 egress protocol ip flower dst_ip "$1/32" action drop
}
rdma_heal() { tc qdisc del dev eth0 clsact; }

case_rdma_tcp() {
	local act ip
	ha_ready
	act=$(active) ip=$(node_ip "$(active)")
	umount /mnt/ha || ha_fail "umount failed"
	timeout 60 "$CTL" detach "$DEV" || ha_fail "detach $DEV failed"
	rm -f "$STATE/dev"
	ip addr replace "$(alt_ip "$CLIENT_IP")/24" dev eth0 || fail "second address"
	DEV=$(timeout 120 "$CTL" attach --target "rdma:$ip:$RPORT" --target "tcp:$(alt_ip "$ip"):$TPORT" \
		--volume vol0 --queues 2 --keep-alive-tmo $KA --reconnect-delay 1 2>"$CASE_TMP/attach.err")
	[ -b "$DEV" ] || { cat "$CASE_TMP/attach.err"; ha_fail "attach with an RDMA and a TCP path failed"; }
	timeout 600 "$FIO" --name=rt --filename="$DEV" --rw=randwrite --bs=16k --size=16M \
		--rate=1m --iodepth=8 --ioengine=libaio --direct=1 --verify=crc32c \
		--verify_fatal=1 --verify_state_save=0 --output="$CASE_TMP/rt.out" &
	FIO_PID=$!
	nap 4
	rdma_cut "$ip" || { rdma_heal; ha_fail "cannot drop the frames to $ip"; }
	wait_until 60 path_is 2 role optimized || { rdma_heal; ha_fail "no move to the TCP path"; }
	wait "$FIO_PID" || { rdma_heal; cat "$CASE_TMP/rt.out"; ha_fail "fio failed"; }
	grep -q "err= 0" "$CASE_TMP/rt.out" || { rdma_heal; cat "$CASE_TMP/rt.out"; ha_fail "fio reported errors"; }
	rdma_heal
	"$CTL" list
	log "route to $act's RDMA address gone: the device moved to TCP ($(alt_ip "$ip")); fio verify clean"
	timeout 60 "$CTL" detach "$DEV" || ha_fail "detach $DEV failed"
}

run_case -t 120 switch case_switch
run_case -t 900 ha-power-off case_power_off
run_case -t 600 ha-partition case_partition
run_case -t 3600 ha-failovers case_failovers
run_case -t 600 ha-rdma-tcp case_rdma_tcp
cases_done
