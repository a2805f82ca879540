#!/bin/bash
# SPDX-License-Identifier: MIT
# Two-node suite, client node side (host side: tests/vm/suite-pair.sh).
# The target node (rblk-tnode, $TNODE_IP) runs node-agent; these cases
# drive it with tnode / link_drop / power_cut / power_on (guest/pair.sh).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pair.sh"
TGT=$RBLK_BUILD/rblk-target
ENGINE=$RBLK_BUILD/rblk-fio.so
FIO=$(cat "$RBLK_BUILD/fio-bin" 2>/dev/null || command -v fio)
RPORT=4421
UP_ERR=
cnode_up || UP_ERR="the link or the target node did not come up"

# Writes the target node's config (once) and starts rblk-target there, in
# the background; waits until it listens on RDMA.  Prints its log if not.
tnode_target_start() {
	tnode "[ -e /srv/node/target.conf ] || cat >/srv/node/target.conf <<EOF
[target]
listen_rdma = $TNODE_IP:$RPORT
reactors = 1
admin_socket = /run/rblk-node.sock
volume_dir = /srv/node
[volume buffered]
path = /srv/node/buffered.img
size = 256M
direct = no
allow_hosts = $CNODE_IP
[volume direct]
path = /srv/node/direct.img
size = 512M
direct = yes
allow_hosts = $CNODE_IP/24
EOF
: >/srv/node/target.log
setsid $TGT --config /srv/node/target.conf >>/srv/node/target.log 2>&1 </dev/null &
for i in \$(seq 100); do grep -q 'listening on rdma' /srv/node/target.log && exit 0; sleep 0.1; done
cat /srv/node/target.log; exit 1"
}

# fio (FPID, writing fio.json and fio.err in the case folder) runs: after
# 3 s rblk-target on the target node is killed (-9) and started again 3 s
# later; fio must end with 0 and no error.
kill_restart_under() {	# FPID
	local fpid=$1 rc
	nap 3
	kill -0 "$fpid" 2>/dev/null || { cat fio.err fio.json; fail "fio ended before the fault"; }
	tnode "pkill -KILL -x rblk-target" >/dev/null || fail "no rblk-target to kill"
	log "rblk-target killed (-9) under fio; starting it again in 3 s"
	nap 3
	tnode_target_start || fail "rblk-target did not start again"
	wait "$fpid"
	rc=$?
	[ "$rc" = 0 ] || { cat fio.err; tail -c 2000 fio.json; tail -n 20 /run/rblk/rblk-initiator.*.log 2>/dev/null
			   fail "fio exit $rc across a target restart"; }
	jq -e '.jobs[0].error == 0' fio.json >/dev/null || fail "fio reported an error"
}

# Both ends' Soft-RoCE devices (idempotent).
rxe_both() {
	local out
	out=$(tnode "rxe-up -n eth0 -a $TNODE_IP/24") || fail "rxe-up on the target node: $out"
	out=$(rxe-up -n eth0 -a "$CNODE_IP/24" 2>&1) || fail "rxe-up on the client node: $out"
}

# Both ends of the link answer, and the target node is another machine.
case_link() {
	[ -z "$UP_ERR" ] || fail "$UP_ERR"
	ping -c 3 -W 2 "$TNODE_IP" >ping.log || { cat ping.log; fail "no ping to $TNODE_IP"; }
	tail -n 1 ping.log
	name=$(tnode hostname) || fail "tnode hostname: $name"
	[ "$name" = rblk-tnode ] || fail "target node calls itself '$name'"
	[ "$(hostname)" = rblk-cnode ] || fail "client node calls itself '$(hostname)'"
	tnode "findmnt -n -o SOURCE /srv/node" | grep -qx /dev/vda || fail "target node's disk is not on /srv/node"
	log "link up: $name at $TNODE_IP, $(hostname) at $CNODE_IP; target disk on /srv/node"
}

# Soft-RoCE on both ends of the link; rblk-target on the target node with a
# buffered and a direct volume on its disk, open only to the client node's
# address (an address and a CIDR entry: matched against the RDMA peer);
# fio verify from the client node through the engine, over RDMA.
case_rdma_across() {
	[ -z "$UP_ERR" ] || fail "$UP_ERR"
	rxe_both
	tnode_target_start || fail "rblk-target did not listen on the target node"
	local v
	for v in buffered direct; do
		timeout 200 "$FIO" --name="$v" --ioengine="$ENGINE" --transport=rdma --host="$TNODE_IP" \
			--port="$RPORT" --volume="$v" --rw=randwrite --bs=64k --size=8M --iodepth=8 \
			--verify=crc32c --verify_state_save=0 --output="fio-$v.log" ||
			{ cat "fio-$v.log"; fail "fio verify over RDMA on '$v' failed"; }
		grep -q 'err= 0' "fio-$v.log" || { cat "fio-$v.log"; fail "fio on '$v' reported an error"; }
		log "$v: $(grep -m1 -o 'WRITE: bw=[^ ]*' "fio-$v.log")"
	done
	tnode "pkill -TERM -x rblk-target; sleep 1; ! pgrep -x rblk-target" >/dev/null ||
		fail "rblk-target on the target node did not stop on SIGTERM"
}

# The RDMA reconnect path of the client library: rblk-target on the target
# node is killed (-9) while fio writes through the engine over RDMA, and
# started again 3 s later.  fio must end with 0 and its verify must pass:
# the queue reconnects (new QP, PD and MRs) and resends what was in flight.
case_rdma_reconnect() {
	[ -z "$UP_ERR" ] || fail "$UP_ERR"
	rxe_both
	tnode "pgrep -x rblk-target" >/dev/null || tnode_target_start || fail "rblk-target did not start"
	timeout 300 "$FIO" --name=reconnect --ioengine="$ENGINE" --transport=rdma --host="$TNODE_IP" \
		--port="$RPORT" --volume=buffered --rw=randwrite --bs=64k --size=24M --iodepth=8 \
		--reconnect_delay=1 --ctrl_loss_tmo=120 --keep_alive_tmo=5 \
		--verify=crc32c --verify_state_save=0 --output-format=json --output=fio.json >fio.err 2>&1 &
	kill_restart_under $!
	log "fio verify passed across the restart; clat max $(jq '[.jobs[0].read.clat_ns.max, .jobs[0].write.clat_ns.max] | max / 1e6 | floor' fio.json) ms (reads and writes)"
	grep -h "reconnect" fio.err | head -n 3
}

# Issue 9, case 1 over RDMA: xfs on /dev/ublkbN (client node) while
# rblk-target on the target node is killed (-9) under fio verify and
# started again 3 s later.  fio returns 0 and verifies, the client's kernel
# logs no I/O error, and xfs_repair -n is clean.
case_ublk_xfs_target_kill() {
	[ -z "$UP_ERR" ] || fail "$UP_ERR"
	need_cmd mkfs.xfs xfs_repair
	ublk-up || fail "ublk-up"
	rxe_both
	tnode "pgrep -x rblk-target" >/dev/null || tnode_target_start || fail "rblk-target did not start"
	local dev
	dev=$(timeout 90 "$RBLK_BUILD/rblkctl" attach --target "$TNODE_IP:$RPORT" --volume direct \
		--transport rdma --queues 1 --reconnect-delay 1 --ctrl-loss-tmo 120 2>attach.err) ||
		{ cat attach.err; fail "attach failed"; }
	log "attached $dev over RDMA from the other node"
	trap 'umount -q /mnt/pair 2>/dev/null; "$RBLK_BUILD/rblkctl" detach --all --timeout 10 >/dev/null 2>&1' EXIT
	mkfs.xfs -q -f "$dev" >mkfs.log 2>&1 || { cat mkfs.log; fail "mkfs.xfs failed"; }
	mkdir -p /mnt/pair && mount "$dev" /mnt/pair || fail "mount failed"
	dmesg -C
	timeout 300 fio --name=fsverify --directory=/mnt/pair --size=24M --bs=64k --rw=randwrite \
		--ioengine=io_uring --direct=1 --iodepth=8 --verify=crc32c --verify_fatal=1 \
		--verify_state_save=0 --output-format=json --output=fio.json >fio.err 2>&1 &
	kill_restart_under $!
	if dmesg | grep -iE 'I/O error|critical medium|XFS .*(error|shutdown|corrupt)'; then
		fail "I/O errors in the client's kernel log (above)"
	fi
	umount /mnt/pair || fail "umount failed"
	xfs_repair -n "$dev" >repair.log 2>&1 || { cat repair.log; fail "xfs_repair -n found problems"; }
	log "fio verify passed, no kernel I/O error, xfs_repair -n clean; clat max $(jq '[.jobs[0].read.clat_ns.max, .jobs[0].write.clat_ns.max] | max / 1e6 | floor' fio.json) ms (reads and writes)"
	grep -h "connection lost\|reconnected" /run/rblk/rblk-initiator.*.log | head -n 3
	timeout 60 "$RBLK_BUILD/rblkctl" detach "$dev" || fail "detach failed"
}

# The link drops for 5 s: the target node is unreachable, then back.
case_link_drop() {
	[ -z "$UP_ERR" ] || fail "$UP_ERR"
	link_drop 5 >/dev/null || fail "link_drop"
	nap 1
	if ping -c 1 -W 1 "$TNODE_IP" >/dev/null; then fail "the target node answered a ping with its link down"; fi
	wait_until 20 ping -c 1 -W 1 "$TNODE_IP" || fail "the target node did not come back 20 s after a 5 s drop"
	log "unreachable during the drop, reachable after it"
}

# A power cut keeps what the target node flushed to its disk (cache=none),
# and the node boots again on it.
case_power_cut() {
	[ -z "$UP_ERR" ] || fail "$UP_ERR"
	local sum
	sum=$(tnode "head -c 8M /dev/urandom >/srv/node/synced && sync /srv/node/synced && sha256sum </srv/node/synced") ||
		fail "writing the synced file: $sum"
	tnode "head -c 8M /dev/urandom >/srv/node/unsynced" >/dev/null || fail "writing the unsynced file"
	power_cut >/dev/null
	tnode -t 5 true >/dev/null 2>&1 && fail "the target node still answers after the power cut"
	power_on
	[ "$(tnode "sha256sum </srv/node/synced")" = "$sum" ] || fail "the synced file changed across the power cut"
	log "synced file intact after the power cut ($(tnode "stat -c %s /srv/node/unsynced 2>/dev/null || echo 0") of 8388608 bytes of the unsynced one survived)"
	ping -c 1 -W 2 "$TNODE_IP" >/dev/null || fail "no ping after the target node came back"
}

run_case -t 120 link case_link
run_case -t 400 rdma-across case_rdma_across
run_case -t 400 rdma-reconnect case_rdma_reconnect
run_case -t 500 ublk-xfs-target-kill case_ublk_xfs_target_kill
run_case -t 60 link-drop case_link_drop
run_case -t 300 power-cut case_power_cut
cases_done
